//! [`Context`]: what tool bodies, prompt and resource handlers and resolvers know about the
//! current request, and the legacy (server-to-client) questions a tool body may ask itself
//! (through the same path as an asking resolver's, in `ask.rs`).

use std::sync::Arc;

use rmcp::{
    ErrorData, Peer, RoleServer,
    model::{
        ClientCapabilities, CustomNotification, ElicitRequestParams, ElicitationAction, ErrorCode,
        Implementation, InputResponses, ProgressNotificationParam, ProtocolVersion,
        ServerNotification,
    },
    service::RequestContext,
};
// Logging is deprecated by SEP-2577; `Context::log` is what legacy connections use.
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::{
    asking::{
        ask::{self, AskKind, Elicitation},
        capability::Capability,
        form::Form,
    },
    authorization::principal::{self, Principal},
    errors::{Outcome, ToolError, service_error},
    notify::{self, Notifier, Session},
    request, scope,
    state::{self, Verified},
};

/// The `requestState` boundary of the generated `call_tool`, `get_prompt` and `read_resource`
/// (`state::verify` with the policy of the server serving `request`), for the caller of
/// `request`: the principal the
/// HTTP front put into the request, or on stdio the connection's (whom
/// [`Context::principal`] returns, and whom a state sealed in this request is bound to).
pub fn verify_request_state(
    method: &str,
    target: &str,
    arguments: Option<&serde_json::Map<String, Value>>,
    request_state: Option<String>,
    request: &RequestContext<RoleServer>,
) -> Result<Option<Verified>, ErrorData> {
    let principal = principal::caller(request).map(Principal::binding);
    state::verify(
        &scope::policy(request),
        method,
        target,
        arguments,
        request_state,
        principal.as_deref(),
    )
}

/// The protocol generation of the connection a request arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2025-11-25 and earlier: `initialize` handshake, server-to-client requests mid-call.
    Legacy,
    /// 2026-07-28 and later: no back-channel; questions go out as `input_required` results.
    Modern,
}

/// What a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tool,
    Prompt,
    Resource,
}

/// The request context handed to every tool body, prompt or resource handler and resolver.
pub struct Context {
    request: RequestContext<RoleServer>,
    kind: Kind,
    tool: String,
    input_responses: Option<InputResponses>,
    request_state: Option<Verified>,
}

impl Context {
    /// Wraps rmcp's request context for one `tools/call` of `tool`, with the `requestState`
    /// the boundary verified ([`state::verify`]).
    pub fn new(
        request: RequestContext<RoleServer>,
        tool: impl Into<String>,
        input_responses: Option<InputResponses>,
        request_state: Option<Verified>,
    ) -> Self {
        Context {
            request,
            kind: Kind::Tool,
            tool: tool.into(),
            input_responses,
            request_state,
        }
    }

    /// Wraps rmcp's request context for one `prompts/get` of prompt `name`, with the
    /// `requestState` the boundary verified.
    pub fn for_prompt(
        request: RequestContext<RoleServer>,
        name: impl Into<String>,
        input_responses: Option<InputResponses>,
        request_state: Option<Verified>,
    ) -> Self {
        Context {
            request,
            kind: Kind::Prompt,
            tool: name.into(),
            input_responses,
            request_state,
        }
    }

    /// Wraps rmcp's request context for one `resources/read` of `uri`, with the `requestState`
    /// the boundary verified.
    pub fn for_resource(
        request: RequestContext<RoleServer>,
        uri: impl Into<String>,
        request_state: Option<Verified>,
    ) -> Self {
        Context {
            request,
            kind: Kind::Resource,
            tool: uri.into(),
            input_responses: None,
            request_state,
        }
    }

    /// The JSON-RPC method of this request: `tools/call`, `prompts/get` or `resources/read`.
    pub fn method(&self) -> &'static str {
        match self.kind {
            Kind::Tool => "tools/call",
            Kind::Prompt => "prompts/get",
            Kind::Resource => "resources/read",
        }
    }

    /// The name of the tool being called (the prompt's name for `prompts/get`, the URI for
    /// `resources/read`).
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// Who is asking, for error messages: `tool 'x'`, `prompt 'x'` or `resource 'x'`.
    pub(crate) fn requester(&self) -> String {
        let kind = match self.kind {
            Kind::Tool => "tool",
            Kind::Prompt => "prompt",
            Kind::Resource => "resource",
        };
        format!("{kind} '{}'", self.tool)
    }

    /// The protocol version of this request (from its `_meta`, else the handshake).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.request.protocol_version()
    }

    /// The protocol generation: [`Era::Modern`] from 2026-07-28 on, otherwise [`Era::Legacy`].
    pub fn era(&self) -> Era {
        match self.protocol_version() {
            Some(v) if v >= ProtocolVersion::V_2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// `true` on connections where the server may send requests to the client mid-call.
    pub fn is_legacy(&self) -> bool {
        self.era() == Era::Legacy
    }

    /// The client's name and version, when it sent them.
    pub fn client_info(&self) -> Option<Implementation> {
        self.request.client_info()
    }

    /// The capabilities the client declared (handshake or request `_meta`).
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        self.request.client_capabilities()
    }

    /// The HTTP request head, on Streamable HTTP connections.
    pub fn http_parts(&self) -> Option<&axum::http::request::Parts> {
        request::head(&self.request)
    }

    /// The verified caller: over HTTP, the principal of the request's bearer token (the front
    /// verified it before anything ran); over stdio, the connection's (the command line's from
    /// `MCP_PRINCIPAL_*`). `None` for an anonymous caller.
    pub fn principal(&self) -> Option<&Principal> {
        principal::caller(&self.request)
    }

    /// One HTTP request header as text, on Streamable HTTP connections.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.http_parts()?.headers.get(name)?.to_str().ok()
    }

    /// The answers a 2026-07-28 client sent with this retry (`inputResponses`).
    pub fn input_responses(&self) -> Option<&InputResponses> {
        self.input_responses.as_ref()
    }

    /// The `requestState` a 2026-07-28 client echoed with this retry, as sent. It has been
    /// verified before anything ran (sealed by this server's keys for exactly this request and
    /// not expired); a request whose state does not verify never reaches a handler.
    pub fn request_state(&self) -> Option<&str> {
        self.request_state.as_ref().map(Verified::token)
    }

    /// The verified `requestState` of this retry (its inner state and arguments digest).
    pub(crate) fn verified_state(&self) -> Option<&Verified> {
        self.request_state.as_ref()
    }

    /// rmcp's request context (cancellation token, request id, `_meta`, extensions, peer).
    pub fn request(&self) -> &RequestContext<RoleServer> {
        &self.request
    }

    /// Whether this request was cancelled: by the client (`notifications/cancelled`, or on
    /// 2026-07-28 over HTTP by closing the request), by its timeout, or by the end of a drain.
    /// The runtime drops the handler's future then; work the handler moved to threads or tasks
    /// of its own must watch [`Context::cancellation_token`] to stop.
    pub fn is_cancelled(&self) -> bool {
        self.request.ct.is_cancelled()
    }

    /// Resolves when this request is cancelled (see [`Context::is_cancelled`]).
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + '_ {
        self.request.ct.cancelled()
    }

    /// A clone of this request's cancellation token, for blocking work (`spawn_blocking`) that
    /// checks [`CancellationToken::is_cancelled`] between steps.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.request.ct.clone()
    }

    /// The connection's peer (the client).
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.request.peer
    }

    /// Asks the user to fill in the form `T` (legacy connections: `elicitation/create` mid-call).
    ///
    /// On a 2026-07-28 connection this fails at once with the -32600 "no back-channel" error;
    /// declare a resolver with `asks: "elicit"` to ask on every connection.
    pub async fn elicit<T: Form>(
        &self,
        message: impl Into<String>,
    ) -> Result<Outcome<T>, ToolError> {
        self.require_back_channel("elicitation/create")?;
        Capability::Form.require(self.client_capabilities(), &self.requester())?;
        Elicitation::<T>::send(self.peer(), message.into(), None).await
    }

    /// Asks the user to open `url` (URL-mode elicitation); the outcome carries no data.
    ///
    /// "Accepted" means the user agreed to open the URL, not that the flow behind it finished;
    /// send [`Context::elicitation_complete`] when it has.
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<Outcome<()>, ToolError> {
        self.require_back_channel("elicitation/create")?;
        Capability::Url.require(self.client_capabilities(), &self.requester())?;
        let params = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: message.into(),
            url: url.into(),
            elicitation_id: elicitation_id.into(),
        };
        let result = ask::elicit(self.peer(), params)
            .await
            .map_err(service_error)?;
        Ok(match result.action {
            ElicitationAction::Accept => Outcome::Accepted(()),
            ElicitationAction::Decline => Outcome::Declined,
            _ => Outcome::Cancelled,
        })
    }

    /// Sends `notifications/elicitation/complete` with `{"elicitationId": id}` to this client.
    pub async fn elicitation_complete(
        &self,
        elicitation_id: impl Into<String>,
    ) -> Result<(), ToolError> {
        self.require_back_channel("notifications/elicitation/complete")?;
        let notification = CustomNotification::new(
            "notifications/elicitation/complete",
            Some(json!({ "elicitationId": elicitation_id.into() })),
        );
        self.peer()
            .send_notification(ServerNotification::CustomNotification(notification))
            .await
            .map_err(service_error)
    }

    /// Reports progress, if the client asked for it (a `progressToken` in the request `_meta`).
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ToolError> {
        let Some(token) = self.request.meta.get_progress_token() else {
            return Ok(());
        };
        let mut param = ProgressNotificationParam::new(token, progress);
        param.total = total;
        param.message = message;
        self.peer()
            .notify_progress(param)
            .await
            .map_err(service_error)
    }

    /// Sends a `notifications/message` log entry to the client, when the spec declares
    /// `logging` and the client wants this level: on legacy connections the session's
    /// `logging/setLevel` threshold (every level until one is set); on 2026-07-28 only when the
    /// request's `_meta["io.modelcontextprotocol/logLevel"]` is set and `level` reaches it (the
    /// message then streams in the response to this request). Otherwise a no-op.
    #[allow(deprecated)]
    pub async fn log(&self, level: impl Into<LoggingLevel>, data: Value) -> Result<(), ToolError> {
        let level = level.into();
        let allowed = notify::log_allowed(
            scope::capabilities(&self.request).logging,
            self.era() == Era::Modern,
            level,
            self.request.meta.log_level(),
            self.session().and_then(|session| session.level()),
        );
        if !allowed {
            return Ok(());
        }
        self.peer()
            .notify_logging_message(LoggingMessageNotificationParam::new(level, data))
            .await
            .map_err(service_error)
    }

    /// Sends change notifications (list changes, resource updates) to the clients.
    pub fn notifier(&self) -> Notifier {
        scope::notifier(&self.request)
    }

    /// The session this request belongs to (set by `serve`'s wrapper).
    fn session(&self) -> Option<&Arc<Session>> {
        self.request.extensions.get::<Arc<Session>>()
    }

    /// Fails with the -32600 "no back-channel" protocol error unless this is a legacy request.
    pub(crate) fn require_back_channel(&self, method: &str) -> Result<(), ToolError> {
        if self.is_legacy() {
            return Ok(());
        }
        Err(ToolError::Protocol(ErrorData::new(
            ErrorCode::INVALID_REQUEST,
            format!(
                "Cannot send '{method}': this transport context has no back-channel for server-initiated requests."
            ),
            None,
        )))
    }
}
