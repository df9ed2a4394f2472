//! The complete MCP server: [`McpServer`] wraps the `ServerHandler` mcpgen generates for a spec
//! (its dispatch of tools, prompts, resources and completions) with everything the protocol asks
//! of a server besides: sessions, `logging/setLevel`, resource subscriptions,
//! `subscriptions/listen`, the 2026-07-28 `serverInfo` stamp, -32601 for undeclared capabilities
//! and panic catching. It also owns the server's identity ([`ServerMeta`], with its [`Capabilities`]) and
//! its own part of the process, set up before it answers ([`Scope`](crate::scope): the
//! `requestState` policy from the environment and the notification hub, per server name, so
//! that two servers in one process never share them).
//!
//! Every way of serving goes through it: the command line (`serve`), the axum router
//! ([`RouterOptions`](router::RouterOptions)) and an embedder's own rmcp transport.

pub(crate) mod router;
pub(crate) mod serve;

use std::{borrow::Cow, future::Future, panic::AssertUnwindSafe, sync::Arc, time::Duration};

use futures::FutureExt;
use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    model::{
        CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestMethod,
        CompleteRequestParams, CompleteResult, ConstString, CustomRequest, CustomResult,
        GetPromptRequestMethod, GetPromptRequestParams, GetPromptResponse, Implementation,
        InitializeRequestParams, InitializeResult, ListPromptsRequestMethod, ListPromptsResult,
        ListResourceTemplatesRequestMethod, ListResourceTemplatesResult,
        ListResourcesRequestMethod, ListResourcesResult, ListToolsResult, MetaObject,
        PaginatedRequestParams, ProtocolVersion, ReadResourceRequestMethod,
        ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SetLevelRequestMethod,
        SubscribeRequestMethod, SubscribeRequestParams, SubscriptionFilter, Tool,
        UnsubscribeRequestMethod, UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
// `logging/setLevel` is deprecated by SEP-2577; legacy connections use it.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use serde_json::Value;
use tracing::Instrument;

use crate::{
    authorization::principal::{self, Access, Principal},
    capabilities::Capabilities,
    catalog::{numbers, tools},
    notify::{self, Notifier, Session},
    operations::{
        operation::{Gates, Operations},
        telemetry::{Ending, RequestSpan, Target},
    },
    request,
    scope::Scope,
    shutdown::Shutdown,
    transport::{http, jsonrpc},
};

/// The `continues` of the catalog's lists ([`Gates::run`]): admitted while the server drains,
/// as the HTTP front serves them then (`jsonrpc::SERVED_WHILE_DRAINING`): they start no work,
/// and a client may list the tools to check the result of a call in flight.
const DRAIN_SERVES_LISTS: bool = true;

/// The server's identity, from the spec's top level.
#[derive(Debug, Clone, Copy)]
pub struct ServerMeta {
    /// `name` (`serverInfo.name`).
    pub name: &'static str,
    /// `version` (`serverInfo.version`).
    pub version: &'static str,
    /// `title`.
    pub title: Option<&'static str>,
    /// `instructions`.
    pub instructions: Option<&'static str>,
    /// What the server serves and sends besides tools.
    pub capabilities: Capabilities,
}

/// The `initialize` / `server/discover` answer: the declared capabilities, server info,
/// instructions.
pub fn server_config(meta: &ServerMeta) -> ServerConfig {
    let mut info = Implementation::new(meta.name, meta.version);
    if let Some(title) = meta.title {
        info = info.with_title(title);
    }
    let mut config = ServerConfig::new(meta.capabilities.to_server()).with_server_info(info);
    if let Some(instructions) = meta.instructions {
        config = config.with_instructions(instructions);
    }
    config
}

/// The `ServerHandler` mcpgen generates for a spec (`generated::Handler<S>`): the dispatch of
/// its tools, prompts, resources and completions over a user state. [`McpServer`] completes it.
pub trait Generated: ServerHandler + Clone {
    /// The user state the handlers are implemented for.
    type State;

    /// The handler for `state` (compiles every input schema once).
    fn from_state(state: Self::State) -> Self;

    /// The spec's authorization requirements (its `auth` and every operation's `scopes`).
    fn access() -> &'static Access {
        &Access::OPEN
    }

    /// The spec's limits and its tools' and prompts' names (its `limits` and every tool's
    /// `timeoutMs` and `maxConcurrency`).
    fn operations() -> &'static Operations {
        &Operations::NONE
    }
}

/// Why a server cannot start: its set-up failed (a malformed
/// `MCP_REQUEST_STATE_KEYS`, keys file or `MCP_REQUEST_STATE_TTL_SECS`, or both
/// `MCP_REQUEST_STATE_KEYS` and `MCP_REQUEST_STATE_KEYS_FILE` set), or the router's own
/// settings are wrong. A server never runs with a configuration it could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// The error `message`.
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ConfigError(message.into())
    }
}

/// The complete MCP server around the generated handler `H`: what every transport serves. It
/// forwards exactly the methods the generated handler implements (`get_info`,
/// `supported_protocol_versions`, `get_tool`, `list_tools`, `call_tool`, `list_prompts`,
/// `get_prompt`, `list_resources`, `list_resource_templates`, `read_resource`, `complete`),
/// each with the session in the request's extensions, and:
///
/// * stamps `io.modelcontextprotocol/serverInfo` into the `_meta` of every 2026-07-28 result
///   (rmcp already stamps `server/discover` and adds `resultType`, `ttlMs` and `cacheScope`);
/// * answers -32601 for prompts/resources/completion methods whose capability is not declared,
///   and turns a panic in a forwarded method into -32603;
/// * serves `logging/setLevel` (legacy, when `logging` is declared), `resources/subscribe` and
///   `resources/unsubscribe` (legacy, when `resourceSubscriptions` is declared) and
///   `subscriptions/listen` (2026-07-28, when some notification is declared);
/// * registers initialized legacy sessions for change notifications.
///
/// One value serves one session (a stdio connection, a legacy HTTP session, or one stateless
/// 2026-07-28 request): **cloning gives the same server with a fresh session**, so a transport
/// that needs a handler per connection clones it.
///
/// Every forwarded method runs in one wrapper (`operation.rs`): while the server drains, new
/// requests are refused with -32000 and the ones in flight are counted; a request the client
/// cancels has its handler's future dropped (resolvers and pending server-to-client requests
/// included); a tool call has its timeout (the tool's `timeoutMs`, else
/// [`McpServer::tool_timeout`] or the spec's `limits.timeoutMs`) and waits for a slot of the
/// tool's `maxConcurrency` and of the server's ([`McpServer::max_concurrency`] or
/// `limits.maxConcurrency`), answering an `isError` result when the time runs out.
pub struct McpServer<H> {
    inner: H,
    /// `serverInfo` as the JSON value every 2026-07-28 result's `_meta` carries, serialised once.
    info: Arc<Value>,
    capabilities: Capabilities,
    /// The spec's authorization requirements ([`Access::OPEN`] for a handler built by hand).
    access: &'static Access,
    session: Arc<Session>,
    /// The server's own `requestState` policy and notification hub (see `scope.rs`).
    scope: Scope,
    /// The spec's limits ([`Operations::NONE`] for a handler built by hand).
    operations: &'static Operations,
    /// The server-wide timeout and concurrency limit set over the spec's.
    limits: (Option<Duration>, Option<u32>),
    /// The drain the wrapper counts calls in flight for.
    shutdown: Shutdown,
    /// The wrapper, built from the four fields above; shared by the per-session clones.
    gates: Arc<Gates>,
}

impl<H: Generated> McpServer<H> {
    /// The complete server for `state`.
    ///
    /// # Panics
    ///
    /// When the set-up fails (see [`McpServer::try_new`]): a server never runs
    /// with a `requestState` key it could not read.
    pub fn new(state: H::State) -> Self {
        Self::try_new(state).unwrap_or_else(|e| panic!("the MCP server cannot start: {e}"))
    }

    /// The complete server for `state`, or why it cannot start. The first server of its name
    /// built in a process reads `MCP_REQUEST_STATE_KEYS` or `MCP_REQUEST_STATE_KEYS_FILE`,
    /// `MCP_REQUEST_STATE_TTL_SECS` and `MCP_REQUEST_STATE_AUDIENCE` (without keys,
    /// `requestState` is sealed with an ephemeral key, as the command line does); a malformed
    /// key, keys file or lifetime, or both key variables, is an error.
    ///
    /// Each server has its own `requestState` policy (its name the default audience) and its
    /// own notification hub: two servers of different names in one process never open each
    /// other's `requestState` nor notify each other's clients. Servers of the same name (the
    /// same spec) share both.
    pub fn try_new(state: H::State) -> Result<Self, ConfigError> {
        let server = Self::wrap(H::from_state(state))?;
        Ok(server
            .with_access(H::access())
            .with_operations(H::operations()))
    }
}

impl<H: ServerHandler + Clone> McpServer<H> {
    /// `handler` completed (after its set-up, see [`McpServer::try_new`]).
    pub fn wrap(handler: H) -> Result<Self, ConfigError> {
        let config = handler.get_info();
        let capabilities = Capabilities::from_server(&config.capabilities);
        let scope = Scope::of(&config.server_info.name, capabilities).map_err(ConfigError)?;
        Ok(McpServer {
            inner: handler,
            info: Arc::new(serde_json::to_value(config.server_info).unwrap_or_default()),
            capabilities,
            access: &Access::OPEN,
            session: Arc::default(),
            scope,
            operations: &Operations::NONE,
            limits: (None, None),
            shutdown: Shutdown::default(),
            gates: Arc::default(),
        })
    }
}

impl<H> McpServer<H> {
    /// The capabilities the server declares.
    pub fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    /// Sends change notifications to this server's clients (as `ctx.notifier()` does in a
    /// handler): for a task of the application's own.
    pub fn notifier(&self) -> Notifier {
        Notifier::to(Arc::clone(self.scope.hub()))
    }

    /// The server's own `requestState` policy and notification hub.
    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The spec's authorization requirements the server enforces over HTTP.
    pub fn access(&self) -> &'static Access {
        self.access
    }

    /// The same server enforcing `access` (the command line's, from `Generated::access`).
    pub(crate) fn with_access(mut self, access: &'static Access) -> Self {
        self.access = access;
        self
    }

    /// The spec's limits the server applies (from `Generated::operations`).
    pub fn operations(&self) -> &'static Operations {
        self.operations
    }

    /// The same server applying the spec's limits `operations` (the command line's, from
    /// `Generated::operations`).
    pub(crate) fn with_operations(mut self, operations: &'static Operations) -> Self {
        self.operations = operations;
        self.rebuild_gates()
    }

    /// The same server with the command line's server-wide overrides of the spec's `limits`:
    /// `tool_timeout` (`--tool-timeout`) replaces `limits.timeoutMs` and `max_concurrency`
    /// (`--max-concurrency`) replaces `limits.maxConcurrency`; a tool's own `timeoutMs` and
    /// `maxConcurrency` still apply. `None` keeps the spec's (or the earlier override).
    pub(crate) fn with_limits(
        mut self,
        tool_timeout: Option<Duration>,
        max_concurrency: Option<u32>,
    ) -> Self {
        self.limits = (
            tool_timeout.or(self.limits.0),
            max_concurrency.or(self.limits.1),
        );
        self.rebuild_gates()
    }

    /// The same server counting its calls in flight for `shutdown`'s drain: new requests are
    /// refused while it drains, and the calls still running when its timeout passes end with
    /// an `isError` result.
    pub(crate) fn with_shutdown(mut self, shutdown: &Shutdown) -> Self {
        self.shutdown = shutdown.clone();
        self.rebuild_gates()
    }

    /// The same server with at most `n` tool calls running at once (a call waits for a slot
    /// within its timeout), over the spec's `limits.maxConcurrency`: what `--max-concurrency`
    /// is on the command line. `0` counts as `1`.
    pub fn max_concurrency(self, n: u32) -> Self {
        self.with_limits(None, Some(n))
    }

    /// The same server timing out tool calls after `timeout` (counted from the request's
    /// arrival, the wait for a slot included), over the spec's `limits.timeoutMs`; a tool's
    /// own `timeoutMs` still wins: what `--tool-timeout` is on the command line.
    pub fn tool_timeout(self, timeout: Duration) -> Self {
        self.with_limits(Some(timeout), None)
    }

    /// The wrapper for the current operations, limits and drain (fresh gates: the builders run
    /// before the server serves).
    fn rebuild_gates(mut self) -> Self {
        self.gates = Arc::new(Gates::new(
            self.operations,
            self.limits.0,
            self.limits.1,
            self.shutdown.clone(),
        ));
        self
    }

    /// The request context with this session in its extensions.
    fn enter(&self, mut context: RequestContext<RoleServer>) -> RequestContext<RoleServer> {
        context.extensions.insert(Arc::clone(&self.session));
        context.extensions.insert(self.scope.clone());
        context
    }

    /// Who a list is filtered for: with `auth.listVisibleOnly`, over HTTP (scopes are not
    /// enforced on stdio), the request's caller; `None`: the list is not filtered.
    fn viewer(&self, context: &RequestContext<RoleServer>) -> Option<Viewer> {
        if !self.access.list_visible_only {
            return None;
        }
        let parts = request::head(context)?;
        Some(Viewer {
            principal: parts.extensions.get::<Arc<Principal>>().cloned(),
            access: self.access,
        })
    }

    fn stamp(&self, modern: bool, meta: &mut Option<MetaObject>) {
        if modern {
            stamp(meta, &self.info);
        }
    }
}

/// The caller a list is filtered for (`auth.listVisibleOnly`): it sees what it may use, as the
/// HTTP front decides it (`guard.rs`): the server-wide scopes and the item's own for a verified
/// caller; for an anonymous one (`auth.required: false`), the items without scopes of their own.
struct Viewer {
    principal: Option<Arc<Principal>>,
    access: &'static Access,
}

impl Viewer {
    /// Whether the item `key` of `table` (one of the [`Access`] tables) is listed.
    fn sees(&self, table: &[(&str, &[&str])], key: &str) -> bool {
        let own = table
            .iter()
            .find(|(name, _)| *name == key)
            .map_or(&[][..], |(_, scopes)| *scopes);
        self.access.permits(self.principal.as_deref(), own)
    }
}

/// The same server with a fresh session.
impl<H: Clone> Clone for McpServer<H> {
    fn clone(&self) -> Self {
        McpServer {
            inner: self.inner.clone(),
            info: Arc::clone(&self.info),
            capabilities: self.capabilities,
            access: self.access,
            session: Arc::default(),
            scope: self.scope.clone(),
            operations: self.operations,
            limits: self.limits,
            shutdown: self.shutdown.clone(),
            gates: Arc::clone(&self.gates),
        }
    }
}

impl<H: ServerHandler> ServerHandler for McpServer<H> {
    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
    }

    /// The generated handler's `initialize` (rmcp's: the peer's info recorded and the version
    /// negotiated), in its span. Not refused while draining: the HTTP front refuses a new
    /// session's `initialize` itself, and a stdio connection has one before anything else.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let span = RequestSpan::start("initialize", Target::None, &context);
        let result = self
            .inner
            .initialize(request, context)
            .instrument(span.span().clone())
            .await;
        span.finish(match &result {
            Ok(_) => Ending::Ok,
            Err(error) => Ending::Error(error),
        });
        result
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if request.is_none()
            && let Some(error) = http::list_params_error(&context)
        {
            return Err(error);
        }
        let modern = is_modern(&context);
        let viewer = self.viewer(&context);
        let mut result = self
            .gates
            .run(
                "tools/list",
                Target::None,
                DRAIN_SERVES_LISTS,
                context,
                |context| {
                    guarded(
                        "tools/list",
                        self.inner.list_tools(request, self.enter(context)),
                    )
                },
            )
            .await?;
        if let Some(viewer) = viewer {
            // Listed for this caller only.
            result.cache_scope = Some(CacheScope::Private);
            result
                .tools
                .retain(|tool| viewer.sees(self.access.tools, &tool.name));
        }
        self.stamp(modern, &mut result.meta);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let modern = is_modern(&context);
        let continues = request.request_state.is_some();
        let name = request.name.clone();
        let mut response = self
            .gates
            .call_tool(&name, continues, context, |context| {
                // A number the float it is read as does not give back is refused before the
                // tool sees it (`catalog/numbers.rs`), for a tool that exists.
                let inexact = request::raw_message(&context).and_then(|message| {
                    numbers::inexact_argument(request.arguments.as_ref(), message)
                });
                let refusal = inexact
                    .filter(|_| self.inner.get_tool(&name).is_some())
                    .map(|why| tools::error_result(&name, Some(&why)));
                guarded("tools/call", async move {
                    match refusal {
                        Some(refusal) => Ok(refusal),
                        None => self.inner.call_tool(request, self.enter(context)).await,
                    }
                })
            })
            .await?;
        match &mut response {
            CallToolResponse::Complete(result) => self.stamp(modern, &mut result.meta),
            CallToolResponse::InputRequired(result) => self.stamp(modern, &mut result.meta),
            _ => {}
        }
        Ok(response)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        if !self.capabilities.prompts {
            return Err(jsonrpc::method_not_found(ListPromptsRequestMethod::VALUE));
        }
        if request.is_none()
            && let Some(error) = http::list_params_error(&context)
        {
            return Err(error);
        }
        let modern = is_modern(&context);
        let viewer = self.viewer(&context);
        let mut result = self
            .gates
            .run(
                "prompts/list",
                Target::None,
                DRAIN_SERVES_LISTS,
                context,
                |context| {
                    guarded(
                        "prompts/list",
                        self.inner.list_prompts(request, self.enter(context)),
                    )
                },
            )
            .await?;
        if let Some(viewer) = viewer {
            // Listed for this caller only.
            result.cache_scope = Some(CacheScope::Private);
            result
                .prompts
                .retain(|prompt| viewer.sees(self.access.prompts, &prompt.name));
        }
        self.stamp(modern, &mut result.meta);
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if !self.capabilities.prompts {
            return Err(jsonrpc::method_not_found(GetPromptRequestMethod::VALUE));
        }
        let modern = is_modern(&context);
        let continues = request.request_state.is_some();
        let target = self.gates.prompt(&request.name);
        let mut response = self
            .gates
            .run("prompts/get", target, continues, context, |context| {
                guarded(
                    "prompts/get",
                    self.inner.get_prompt(request, self.enter(context)),
                )
            })
            .await?;
        match &mut response {
            GetPromptResponse::Complete(result) => self.stamp(modern, &mut result.meta),
            GetPromptResponse::InputRequired(result) => self.stamp(modern, &mut result.meta),
            _ => {}
        }
        Ok(response)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if !self.capabilities.resources {
            return Err(jsonrpc::method_not_found(ListResourcesRequestMethod::VALUE));
        }
        if request.is_none()
            && let Some(error) = http::list_params_error(&context)
        {
            return Err(error);
        }
        let modern = is_modern(&context);
        let viewer = self.viewer(&context);
        let mut result = self
            .gates
            .run(
                "resources/list",
                Target::None,
                DRAIN_SERVES_LISTS,
                context,
                |context| {
                    guarded(
                        "resources/list",
                        self.inner.list_resources(request, self.enter(context)),
                    )
                },
            )
            .await?;
        if let Some(viewer) = viewer {
            // Listed for this caller only.
            result.cache_scope = Some(CacheScope::Private);
            result
                .resources
                .retain(|resource| viewer.sees(self.access.resources, &resource.uri));
        }
        self.stamp(modern, &mut result.meta);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        if !self.capabilities.resources {
            return Err(jsonrpc::method_not_found(
                ListResourceTemplatesRequestMethod::VALUE,
            ));
        }
        if request.is_none()
            && let Some(error) = http::list_params_error(&context)
        {
            return Err(error);
        }
        let modern = is_modern(&context);
        let viewer = self.viewer(&context);
        let mut result = self
            .gates
            .run(
                "resources/templates/list",
                Target::None,
                DRAIN_SERVES_LISTS,
                context,
                |context| {
                    guarded(
                        "resources/templates/list",
                        self.inner
                            .list_resource_templates(request, self.enter(context)),
                    )
                },
            )
            .await?;
        if let Some(viewer) = viewer {
            // Listed for this caller only.
            result.cache_scope = Some(CacheScope::Private);
            result
                .resource_templates
                .retain(|template| viewer.sees(self.access.templates, &template.uri_template));
        }
        self.stamp(modern, &mut result.meta);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if !self.capabilities.resources {
            return Err(jsonrpc::method_not_found(ReadResourceRequestMethod::VALUE));
        }
        let modern = is_modern(&context);
        let continues = request.request_state.is_some();
        let uri = request.uri.clone();
        let mut response = self
            .gates
            .run(
                "resources/read",
                Target::Resource(&uri),
                continues,
                context,
                |context| {
                    guarded(
                        "resources/read",
                        self.inner.read_resource(request, self.enter(context)),
                    )
                },
            )
            .await?;
        match &mut response {
            ReadResourceResponse::Complete(result) => self.stamp(modern, &mut result.meta),
            ReadResourceResponse::InputRequired(result) => self.stamp(modern, &mut result.meta),
            _ => {}
        }
        Ok(response)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        if !self.capabilities.completions {
            return Err(jsonrpc::method_not_found(CompleteRequestMethod::VALUE));
        }
        let modern = is_modern(&context);
        let mut result = self
            .gates
            .run(
                "completion/complete",
                Target::None,
                false,
                context,
                |context| {
                    guarded(
                        "completion/complete",
                        self.inner.complete(request, self.enter(context)),
                    )
                },
            )
            .await?;
        self.stamp(modern, &mut result.meta);
        Ok(result)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Removed in 2026-07-28 (the level travels in each request's `_meta`).
        if !self.capabilities.logging || is_modern(&context) {
            return Err(jsonrpc::method_not_found(SetLevelRequestMethod::VALUE));
        }
        self.gates
            .run(
                "logging/setLevel",
                Target::None,
                false,
                context,
                |_| async {
                    tracing::debug!(level = ?request.level, "logging/setLevel");
                    self.session.set_level(request.level);
                    Ok(())
                },
            )
            .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.capabilities.resource_subscriptions {
            return Err(jsonrpc::method_not_found(SubscribeRequestMethod::VALUE));
        }
        self.gates
            .run(
                "resources/subscribe",
                Target::Resource(&request.uri),
                false,
                context,
                |_| async {
                    self.session.subscribe(&request.uri);
                    Ok(())
                },
            )
            .await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.capabilities.resource_subscriptions {
            return Err(jsonrpc::method_not_found(UnsubscribeRequestMethod::VALUE));
        }
        self.gates
            .run(
                "resources/unsubscribe",
                Target::Resource(&request.uri),
                false,
                context,
                |_| async {
                    self.session.unsubscribe(&request.uri);
                    Ok(())
                },
            )
            .await
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        notify::accepted_filter(self.capabilities, requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.scope.hub().listen(context).await;
        Ok(())
    }

    /// A request rmcp decoded as a custom one: a method it does not model, or one it does whose
    /// params do not fit its type (rmcp would answer `-32601` for both). A `tools/call`,
    /// `prompts/get` or `resources/read` among them passes the `requestState` boundary first
    /// (in `jsonrpc::custom_request_error`), as the Python SDK's does, so a bad state is the
    /// frozen -32602 `Invalid or expired requestState`; then the params are diagnosed.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(jsonrpc::custom_request_error(
            &request.method,
            request.params.as_ref(),
            context.meta.protocol_version().is_some(),
            self.capabilities,
            &self.scope.policy(),
            principal::caller(&context),
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.scope
            .hub()
            .register_legacy(Arc::clone(&self.session), context.peer.clone());
        self.inner.on_initialized(context).await;
    }
}

/// Runs a forwarded method with panics caught: a panic is logged and answered with -32603.
async fn guarded<T>(
    method: &str,
    call: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    match AssertUnwindSafe(call).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".to_string());
            tracing::error!(method, "handler panicked: {message}");
            Err(ErrorData::internal_error("Internal error", None))
        }
    }
}

fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// Puts `io.modelcontextprotocol/serverInfo` (already serialised) into a result's `_meta`.
fn stamp(meta: &mut Option<MetaObject>, info: &Value) {
    meta.get_or_insert_with(|| MetaObject(Default::default()))
        .0
        .insert(
            "io.modelcontextprotocol/serverInfo".to_string(),
            info.clone(),
        );
}
