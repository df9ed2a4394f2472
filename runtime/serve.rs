//! The binary's entry point: command line, logging, stdio and Streamable HTTP serving, and the
//! `ServerHandler` wrapper that adds sessions, logging levels, subscriptions and `serverInfo`.

use std::{
    borrow::Cow,
    convert::Infallible,
    future::Future,
    net::SocketAddr,
    panic::AssertUnwindSafe,
    process::ExitCode,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use axum::{
    ServiceExt as _,
    extract::Request,
    http::StatusCode,
    response::{IntoResponse, Response},
    serve::ListenerExt,
};
use clap::{Parser, ValueEnum};
use futures::{FutureExt, TryFutureExt, future::Either};
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CompleteRequestMethod, CompleteRequestParams,
        CompleteResult, ConstString, CustomRequest, CustomResult, GetPromptRequestMethod,
        GetPromptRequestParams, GetPromptResponse, Implementation, JsonObject,
        ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesRequestMethod,
        ListResourceTemplatesResult, ListResourcesRequestMethod, ListResourcesResult,
        ListToolsResult, MetaObject, PaginatedRequestParams, PromptsCapability, ProtocolVersion,
        ReadResourceRequestMethod, ReadResourceRequestParams, ReadResourceResponse,
        ResourcesCapability, ServerCapabilities, ServerConfig, SetLevelRequestMethod,
        SetLevelRequestParams, SubscribeRequestMethod, SubscribeRequestParams, SubscriptionFilter,
        Tool, ToolsCapability, UnsubscribeRequestMethod, UnsubscribeRequestParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
    transport::{
        stdio_pipes,
        streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService},
    },
};

use serde_json::Value;

use super::{
    http, jsonrpc,
    notify::{self, Session},
    sessions::{self, Admission, Limits, Sessions},
    stdio,
};

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

/// The capabilities a server declares besides `tools` (always declared), from the spec.
///
/// Exactly these are advertised; a method whose capability is not declared answers -32601.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// `prompts` (the spec has prompts).
    pub prompts: bool,
    /// `resources` (the spec has resources or resource templates).
    pub resources: bool,
    /// `completions` (some prompt argument or template variable declares `complete`).
    pub completions: bool,
    /// `logging` (`"logging": true`).
    pub logging: bool,
    /// `tools.listChanged` (`notifications.toolsListChanged`).
    pub tools_list_changed: bool,
    /// `prompts.listChanged` (`notifications.promptsListChanged`; needs `prompts`).
    pub prompts_list_changed: bool,
    /// `resources.listChanged` (`notifications.resourcesListChanged`; needs `resources`).
    pub resources_list_changed: bool,
    /// `resources.subscribe` (`notifications.resourceSubscriptions`; needs `resources`).
    pub resource_subscriptions: bool,
}

impl Capabilities {
    /// rmcp's `ServerCapabilities` for these (tools always; flags only when `true`).
    pub fn to_server(self) -> ServerCapabilities {
        let mut caps = ServerCapabilities::default();
        let mut tools = ToolsCapability::default();
        tools.list_changed = self.tools_list_changed.then_some(true);
        caps.tools = Some(tools);
        if self.prompts {
            let mut prompts = PromptsCapability::default();
            prompts.list_changed = self.prompts_list_changed.then_some(true);
            caps.prompts = Some(prompts);
        }
        if self.resources {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = self.resource_subscriptions.then_some(true);
            resources.list_changed = self.resources_list_changed.then_some(true);
            caps.resources = Some(resources);
        }
        if self.completions {
            caps.completions = Some(JsonObject::new());
        }
        if self.logging {
            caps.logging = Some(JsonObject::new());
        }
        caps
    }

    /// What `caps` declares (the inverse of [`Capabilities::to_server`]).
    pub fn from_server(caps: &ServerCapabilities) -> Self {
        Capabilities {
            prompts: caps.prompts.is_some(),
            resources: caps.resources.is_some(),
            completions: caps.completions.is_some(),
            logging: caps.logging.is_some(),
            tools_list_changed: caps
                .tools
                .as_ref()
                .is_some_and(|t| t.list_changed == Some(true)),
            prompts_list_changed: caps
                .prompts
                .as_ref()
                .is_some_and(|p| p.list_changed == Some(true)),
            resources_list_changed: caps
                .resources
                .as_ref()
                .is_some_and(|r| r.list_changed == Some(true)),
            resource_subscriptions: caps
                .resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true)),
        }
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Transport {
    /// JSON-RPC over stdin/stdout.
    Stdio,
    /// Streamable HTTP at `http://<bind>/mcp`.
    Http,
}

/// Command line of a generated MCP server.
#[derive(Debug, Parser)]
#[command(version, about = "An MCP server generated by mcpgen")]
struct Cli {
    /// Transport to serve on.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    transport: Transport,
    /// Address to listen on with `--transport http` (endpoint `/mcp`).
    #[arg(long, default_value = "127.0.0.1:8000")]
    bind: SocketAddr,
    /// Also accept this `Host` header (name or name:port); repeatable. Loopback names are
    /// always accepted.
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_hosts: Vec<String>,
    /// Accept any `Host` header (disables DNS-rebinding protection).
    #[arg(long)]
    allow_any_host: bool,
    /// Also accept this browser `Origin` (scheme://host[:port|:*]); repeatable. Loopback
    /// origins are always accepted; requests without `Origin` always pass.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Accept any `Origin` header.
    #[arg(long)]
    allow_any_origin: bool,
    /// Log level for stderr (error, warn, info, debug, trace).
    #[arg(long, default_value = "info")]
    log_level: tracing::Level,
    /// Threads that serve. HTTP: each accepts and serves connections on its own
    /// single-threaded runtime (default: one per CPU). stdio: 1 (the default) serves on one
    /// single-threaded runtime; N > 1 on a multi-threaded runtime with N workers.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    /// HTTP: close a session (`Mcp-Session-Id`, protocol 2025-11-25 and earlier) after this
    /// long without a request while none of its streams is open (`90s`, `30m`, `2h`).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    session_idle_timeout: Duration,
    /// HTTP: at most N sessions at once; `initialize` beyond them gets 503 (`Retry-After`).
    #[arg(long, value_name = "N", default_value_t = sessions::DEFAULT_MAX_SESSIONS, value_parser = clap::value_parser!(u32).range(1..))]
    max_sessions: u32,
    /// HTTP: how long a client has to send a request's header (from the connection's opening,
    /// or the end of the previous answer on a kept-alive connection); a connection that takes
    /// longer is closed (slowloris). `10s`, `1500ms`.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    header_read_timeout: Duration,
    /// HTTP: the most connections served at once; beyond it new connections wait in the
    /// listen backlog until one closes. Each takes a file descriptor (`ulimit -n`).
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
}

/// A positive duration as a person writes it (`90s`, `30m`, `1h 30m`, `500ms`; zero is refused),
/// for every duration flag.
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|e| e.to_string())?;
    if duration.is_zero() {
        return Err("give a duration longer than zero".to_string());
    }
    Ok(duration)
}

/// Runs the server: parses the command line, logs to stderr, serves until stdin closes (stdio)
/// or SIGINT/SIGTERM, then returns exit code 0 (1 on a start-up or transport failure).
pub fn serve<H: ServerHandler + Clone>(handler: H) -> ExitCode {
    let cli = Cli::parse();
    {
        use tracing_subscriber::{filter::Targets, layer::SubscriberExt, util::SubscriberInitExt};
        // rmcp logs three INFO lines per stateless HTTP request (service start with the client's
        // whole request metadata, stream end, serve end): at INFO they cost more than the call.
        // They show from `--log-level debug` on.
        let lifecycle = if cli.log_level >= tracing::Level::DEBUG {
            cli.log_level
        } else {
            cli.log_level.min(tracing::Level::WARN)
        };
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_max_level(cli.log_level)
            .finish()
            .with(
                Targets::new()
                    .with_default(cli.log_level)
                    .with_target("rmcp::service", lifecycle),
            )
            .init();
    }
    // HTTP: this thread is the first of `serve_http`'s single-threaded servers. stdio: one
    // client, so by default no hand-off between threads (rmcp spawns a task per request, which
    // a multi-threaded runtime wakes another worker for).
    let mut builder = match (cli.transport, cli.threads) {
        (Transport::Stdio, Some(n)) if n > 1 => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(usize::from(n));
            builder
        }
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config = handler.get_info();
    if let Err(e) = super::state::configure_from_env(&config.server_info.name) {
        tracing::error!("{e}");
        return ExitCode::FAILURE;
    }
    let capabilities = Capabilities::from_server(&config.capabilities);
    notify::configure(capabilities);
    let handler = Stamped::new(handler, config.server_info, capabilities);
    let result = runtime.block_on(async move {
        match cli.transport {
            Transport::Stdio => serve_stdio(handler).await,
            Transport::Http => serve_http(handler, &cli).await,
        }
    });
    // Never wait for a blocked stdin read or lingering connections.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve_stdio<H: ServerHandler + Clone>(handler: Stamped<H>) -> Result<(), String> {
    let (read, write) = stdio_pipes();
    let (read, stdin_closed) = sessions::watch_eof(read);
    let supported = handler.supported_protocol_versions().into_owned();
    let transport = stdio::Lines::new(read, write, handler.capabilities, supported);
    let running = handler
        .serve(transport)
        .await
        .map_err(|e| format!("stdio session failed to start: {e}"))?;
    let token = running.cancellation_token();
    tokio::select! {
        quit = running.waiting() => {
            tracing::info!("stdio session ended: {quit:?}");
        }
        () = sessions::after_eof(stdin_closed) => {
            tracing::info!("stdio session ended: stdin closed; requests still running are cancelled");
            token.cancel();
        }
        signal = shutdown_signal() => {
            tracing::info!("{signal}: shutting down");
            token.cancel();
        }
    }
    Ok(())
}

async fn serve_http<H: ServerHandler + Clone>(
    handler: Stamped<H>,
    cli: &Cli,
) -> Result<(), String> {
    // A 2026-07-28 request whose handler sends nothing before its answer gets that answer as
    // `application/json` (no SSE framing); progress or log messages first switch the response
    // to `text/event-stream`, so nothing is lost. Legacy sessions keep their streams.
    let mut config = StreamableHttpServerConfig::default().with_json_response(true);
    let cancel = config.cancellation_token.clone();
    config = if cli.allow_any_host {
        config.disable_allowed_hosts()
    } else {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if !cli.bind.ip().is_unspecified() {
            hosts.push(cli.bind.ip().to_string());
        }
        hosts.extend(cli.allow_hosts.iter().cloned());
        config.with_allowed_hosts(hosts)
    };
    config = if cli.allow_any_origin {
        config.disable_allowed_origins()
    } else {
        let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .flat_map(|h| [format!("http://{h}:*"), format!("https://{h}:*")])
            .collect();
        origins.extend(cli.allow_origins.iter().cloned());
        config
            .with_allowed_origins(origins)
            .enforce_origin_validation()
    };
    let max_body = config.max_request_body_bytes;
    let capabilities = handler.capabilities;
    let limits = Limits {
        idle_timeout: cli.session_idle_timeout,
        max_sessions: usize::try_from(cli.max_sessions).unwrap_or(usize::MAX),
    };
    let sessions = Sessions::new(limits);
    // One handler (and so one `Session`) per legacy session or stateless request.
    let service = StreamableHttpService::new(
        move || Ok(handler.new_session()),
        Arc::clone(&sessions),
        config,
    );
    let service = http::Front::new(Admission(service), sessions, capabilities, max_body);
    let listener = std::net::TcpListener::bind(cli.bind)
        .map_err(|e| format!("cannot listen on {}: {e}", cli.bind))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot configure the listening socket: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the listening address: {e}"))?;
    let limits = http::Limits {
        header_read_timeout: cli.header_read_timeout,
        connections: Arc::new(tokio::sync::Semaphore::new(cli.max_connections as usize)),
    };
    let threads = cli.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        usize::from,
    );
    // Each thread accepts connections from the shared socket and serves them to the end on its
    // own single-threaded runtime (as actix-web does): no hand-off between threads within a
    // request. Sessions, notifications and the handler state are shared thread-safe handles.
    let mut others = Vec::new();
    for i in 1..threads {
        let listener = listener
            .try_clone()
            .map_err(|e| format!("cannot share the listening socket: {e}"))?;
        let (service, stop, limits) = (service.clone(), cancel.clone(), limits.clone());
        let thread = std::thread::Builder::new()
            .name(format!("http-{i}"))
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(e) => {
                        tracing::error!("cannot start the async runtime of thread {i}: {e}");
                        return;
                    }
                };
                let served =
                    http::serve_connections(listener, service, limits, stop.cancelled_owned());
                if let Err(e) = runtime.block_on(served) {
                    tracing::error!("{e}");
                }
                runtime.shutdown_timeout(Duration::from_millis(200));
            })
            .map_err(|e| format!("cannot start HTTP thread {i}: {e}"))?;
        others.push(thread);
    }
    tracing::info!("serving MCP over Streamable HTTP at http://{local}/mcp ({threads} threads)");
    let stop = cancel.clone();
    tokio::spawn(async move {
        let signal = shutdown_signal().await;
        tracing::info!("{signal}: shutting down");
        stop.cancel();
    });
    let result = http::serve_connections(listener, service, limits, cancel.cancelled_owned()).await;
    for thread in others {
        let _ = thread.join();
    }
    result
}

/// The generated `ServerHandler`, wrapped: it forwards exactly the methods the generated
/// `Server` implements (`get_info`, `supported_protocol_versions`, `get_tool`, `list_tools`,
/// `call_tool`, `list_prompts`, `get_prompt`, `list_resources`, `list_resource_templates`,
/// `read_resource`, `complete`), each with the session in the request's extensions, and:
///
/// * stamps `io.modelcontextprotocol/serverInfo` into the `_meta` of every 2026-07-28 result
///   (rmcp already stamps `server/discover` and adds `resultType`, `ttlMs` and `cacheScope`);
/// * answers -32601 for prompts/resources/completion methods whose capability is not declared,
///   and turns a panic in a forwarded method into -32603;
/// * serves `logging/setLevel` (legacy, when `logging` is declared), `resources/subscribe` and
///   `resources/unsubscribe` (legacy, when `resourceSubscriptions` is declared) and
///   `subscriptions/listen` (2026-07-28, when some notification is declared);
/// * registers initialized legacy sessions for change notifications.
pub(super) struct Stamped<H> {
    inner: H,
    /// `serverInfo` as the JSON value every 2026-07-28 result's `_meta` carries, serialised once.
    info: Arc<Value>,
    capabilities: Capabilities,
    session: Arc<Session>,
}

impl<H: Clone> Stamped<H> {
    fn new(inner: H, info: Implementation, capabilities: Capabilities) -> Self {
        Stamped {
            inner,
            info: Arc::new(serde_json::to_value(info).unwrap_or_default()),
            capabilities,
            session: Arc::default(),
        }
    }

    /// The same server with a fresh session.
    fn new_session(&self) -> Self {
        Stamped {
            inner: self.inner.clone(),
            info: Arc::clone(&self.info),
            capabilities: self.capabilities,
            session: Arc::default(),
        }
    }
}

impl<H> Stamped<H> {
    /// The request context with this session in its extensions.
    fn enter(&self, mut context: RequestContext<RoleServer>) -> RequestContext<RoleServer> {
        context.extensions.insert(Arc::clone(&self.session));
        context
    }

    fn stamp(&self, modern: bool, meta: &mut Option<MetaObject>) {
        if modern {
            stamp(meta, &self.info);
        }
    }
}

impl<H: ServerHandler> ServerHandler for Stamped<H> {
    fn get_info(&self) -> ServerConfig {
        self.inner.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.inner.supported_protocol_versions()
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.get_tool(name)
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
        let mut result = guarded(
            "tools/list",
            self.inner.list_tools(request, self.enter(context)),
        )
        .await?;
        self.stamp(modern, &mut result.meta);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let modern = is_modern(&context);
        let mut response = guarded(
            "tools/call",
            self.inner.call_tool(request, self.enter(context)),
        )
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
        let mut result = guarded(
            "prompts/list",
            self.inner.list_prompts(request, self.enter(context)),
        )
        .await?;
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
        let mut response = guarded(
            "prompts/get",
            self.inner.get_prompt(request, self.enter(context)),
        )
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
        let mut result = guarded(
            "resources/list",
            self.inner.list_resources(request, self.enter(context)),
        )
        .await?;
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
        let mut result = guarded(
            "resources/templates/list",
            self.inner
                .list_resource_templates(request, self.enter(context)),
        )
        .await?;
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
        let mut response = guarded(
            "resources/read",
            self.inner.read_resource(request, self.enter(context)),
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
        let mut result = guarded(
            "completion/complete",
            self.inner.complete(request, self.enter(context)),
        )
        .await?;
        self.stamp(modern, &mut result.meta);
        Ok(result)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Removed in 2026-07-28 (the level travels in each request's `_meta`).
        if !self.capabilities.logging || is_modern(&context) {
            return Err(jsonrpc::method_not_found(SetLevelRequestMethod::VALUE));
        }
        tracing::debug!(level = ?request.level, "logging/setLevel");
        self.session.set_level(request.level);
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.capabilities.resource_subscriptions {
            return Err(jsonrpc::method_not_found(SubscribeRequestMethod::VALUE));
        }
        self.session.subscribe(&request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.capabilities.resource_subscriptions {
            return Err(jsonrpc::method_not_found(UnsubscribeRequestMethod::VALUE));
        }
        self.session.unsubscribe(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        notify::accepted_filter(self.capabilities, requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        notify::listen(context).await;
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
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        notify::register_legacy(Arc::clone(&self.session), context.peer.clone());
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

/// Resolves on SIGINT or SIGTERM, naming the signal.
async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(term) => term,
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                let _ = tokio::signal::ctrl_c().await;
                return "SIGINT";
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}
