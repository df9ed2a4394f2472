//! The test kit (feature `testing`): the real server in process, over a real transport, and an
//! rmcp client per protocol era that answers the server's questions from a script and records
//! every question asked. A generated crate wraps it as `generated::testing` (`TestServer`, and
//! `TestClient` with one typed method per tool); everything here is reachable through it.
//!
//! # What a test client talks to
//!
//! * **stdio**: an in-memory duplex (`tokio::io::duplex`); the server end is the runtime's own
//!   line transport (its `-32600`/`-32700` answers and era rules are on the path), the client
//!   end rmcp's client over the other half.
//! * **HTTP**: the whole stack [`RouterOptions`] builds (path, `Host`/`Origin`, `Accept`, the
//!   authorization guard, sessions, rmcp's service), called as a tower service by rmcp's own
//!   Streamable HTTP client transport, in process: no socket, port or process.
//! * **Eras**: [`Kit::legacy`] connects with `initialize` (2025-11-25: questions arrive mid-call
//!   as server-to-client requests); [`Kit::stateless`] with `server/discover` (2026-07-28: the
//!   client runs the multi-round-trip loop, answering each `inputRequests` entry from the same
//!   script; [`Client::rounds`] steps it by hand).
//!
//! # Connecting
//!
//! [`Kit::new`] takes the complete server (each client gets a fresh session of it; the state is
//! shared) and the crate's tool table (whose input validators tell
//! [`CallError::InvalidArguments`] from other `isError` results). [`Kit::legacy`] and
//! [`Kit::stateless`] give a [`Connect`] builder: stdio unless [`Connect::http`] (or
//! [`Connect::transport`]); [`Connect::capabilities`] (by default [`default_capabilities`]:
//! form and URL elicitation, sampling, roots), [`Connect::principal`] (a caller made by
//! [`principal`]) and [`Connect::bearer`] (a raw token, for tests of refusals);
//! [`Connect::client`] chooses the client type built (the generated `TestClient`, any
//! `C: From<Client>`). [`Connect::connect`] connects or panics with the cause;
//! [`Connect::try_connect`] returns the refusal instead. [`Kit::clients`] connects all four
//! (legacy and 2026-07-28, stdio and HTTP), each built by the same closure.
//!
//! # Calling
//!
//! [`Client::call_tool`] sends any JSON arguments; [`Client::call_typed`] serializes typed
//! arguments and decodes the output from where mcpgen put it ([`Output`]: `Wrapped` reads
//! `structuredContent.result`, `Object` reads `structuredContent`, `Content` the `content`
//! blocks). A failure is a [`CallError`]: the tool's `isError` text, the input violations, a
//! JSON-RPC error, an unscripted question, an HTTP refusal. The lists, prompts, resources and
//! completions have methods of their own; [`Client::service`] is rmcp's running client for the
//! rest. [`Client::label`] (`"legacy stdio"`, `"2026-07-28 http"`, ...) names the client in
//! assertion messages.
//!
//! # Answering the server's questions
//!
//! Script the answers before the call: [`Client::answer_elicitation`] (with an [`Answer`]),
//! [`Client::decline`], [`Client::cancel`], [`Client::sample_text`],
//! [`Client::sample_text_with`], [`Client::answer_sampling`], [`Client::roots`]. A question
//! without a scripted answer fails the call with [`CallError::Unscripted`]. Every question is
//! recorded ([`Client::questions`], [`Client::take_questions`]) as a [`Question`] that names the
//! resolver that asked it on both eras (`None` for a tool body's own `ctx.elicit`);
//! [`Question::message`] and [`Question::sampling_text`] give its text. Notifications are
//! recorded too ([`Client::notifications`], [`Client::wait_for_notifications`]).
//!
//! On 2026-07-28 the resolver is the `inputRequests` key. On legacy connections the wire
//! carries no name: before it sends a question the runtime notes the asking resolver in a log
//! the kit's transports put into each request's extensions, and the client takes the note of
//! the same kind (and, for a form, the same message).

mod inprocess;

use std::{
    collections::HashMap,
    fmt,
    marker::PhantomData,
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig,
        CompleteRequestParams, CompleteResult, ContentBlock, CustomNotification,
        ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, Extensions,
        GetPromptRequestParams, GetPromptResult, Implementation, InputRequest, InputRequests,
        InputResponses, JsonObject, NumberOrString, ProgressNotificationParam, Prompt,
        ProtocolVersion, ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
        ResourceUpdatedNotificationParam, Tool,
    },
    service::{
        ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService,
        ServiceError,
    },
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
// The kit's clients answer sampling and roots requests and record log messages: rmcp's types
// for them are deprecated by SEP-2577 (the items that use them allow it), and are what legacy
// connections use.
#[allow(deprecated)]
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ListRootsResult,
    LoggingMessageNotificationParam, Root, SamplingMessage,
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

/// What a test client declares ([`Connect::capabilities`]): rmcp's type, `#[non_exhaustive]`,
/// so start from [`default_capabilities`] (or `ClientCapabilities::default()`, nothing) and set
/// its public fields.
pub use rmcp::model::ClientCapabilities;

use crate::{
    asking::{
        context::Era,
        log::{AskLog, AskedKind},
    },
    authorization::{AuthSettings, Rejection, TokenVerifier, Verifying, principal::Principal},
    catalog::tools::{Catalog, ToolDef},
    server::{McpServer, router::RouterOptions},
    transport::stdio,
};

use inprocess::{InProcess, Refusals};

/// The issuer of the principals [`principal`] builds (and of the kit's tokens).
pub const TEST_ISSUER: &str = "https://issuer.mcpgen.test";

/// The resource URI of the in-process HTTP server (the audience of the kit's principals).
pub const TEST_RESOURCE: &str = "http://localhost/mcp";

/// How long one request of the kit may take before it fails with [`CallError::Client`] (a test
/// that would otherwise hang fails instead).
const TIMEOUT: Duration = Duration::from_secs(30);

/// The test kit over one server: it connects clients to it.
pub struct Kit<H> {
    server: McpServer<H>,
    tools: &'static [ToolDef],
    catalog: Arc<Catalog>,
}

impl<H: Clone> Clone for Kit<H> {
    fn clone(&self) -> Self {
        Kit {
            server: self.server.clone(),
            tools: self.tools,
            catalog: Arc::clone(&self.catalog),
        }
    }
}

impl<H: ServerHandler + Clone> Kit<H> {
    /// The kit over `server` (each client gets a clone of it: a fresh session of the same
    /// server and state), whose tools are `tools` (the generated `TOOLS`; `&[]` when the
    /// handler has its own).
    pub fn new(server: McpServer<H>, tools: &'static [ToolDef]) -> Self {
        Kit {
            server,
            tools,
            catalog: Arc::new(Catalog::new(tools)),
        }
    }

    /// The server the clients connect to.
    pub fn server(&self) -> &McpServer<H> {
        &self.server
    }

    /// The tool definitions the kit was built with.
    pub fn tools(&self) -> &'static [ToolDef] {
        self.tools
    }

    /// A client of the handshake era (`initialize`, protocol 2025-11-25), over stdio unless
    /// [`Connect::http`] says otherwise.
    pub fn legacy(&self) -> Connect<H> {
        self.connect_era(Era::Legacy)
    }

    /// A client of the 2026-07-28 era (`server/discover`, stateless requests, multi-round-trip),
    /// over stdio unless [`Connect::http`] says otherwise.
    pub fn stateless(&self) -> Connect<H> {
        self.connect_era(Era::Modern)
    }

    fn connect_era(&self, era: Era) -> Connect<H> {
        Connect {
            server: self.server.clone(),
            catalog: Arc::clone(&self.catalog),
            era,
            transport: Transport::Stdio,
            capabilities: default_capabilities(),
            principal: None,
            bearer: None,
            client: PhantomData,
        }
    }

    /// The four clients (legacy stdio, legacy HTTP, 2026-07-28 stdio, 2026-07-28 HTTP), each
    /// built by `configure` from its [`Connect`] (`|c| c` for the defaults), connected.
    pub async fn clients<C: From<Client>>(
        &self,
        configure: impl Fn(Connect<H>) -> Connect<H, C>,
    ) -> Vec<C> {
        let mut clients = Vec::with_capacity(4);
        for era in [Era::Legacy, Era::Modern] {
            for transport in [Transport::Stdio, Transport::Http] {
                let connect = self.connect_era(era).transport(transport);
                clients.push(configure(connect).connect().await);
            }
        }
        clients
    }
}

/// The transport a test client connects over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON-RPC over an in-memory duplex.
    Stdio,
    /// Streamable HTTP through the whole HTTP stack, in process.
    Http,
}

/// The client capabilities a test client declares unless told otherwise: form and URL
/// elicitation, sampling, roots (with `listChanged`).
pub fn default_capabilities() -> ClientCapabilities {
    serde_json::from_value(serde_json::json!({
        "elicitation": {"form": {}, "url": {}},
        "sampling": {},
        "roots": {"listChanged": true}
    }))
    .expect("the default client capabilities")
}

/// How a test client is built: era (from [`Kit::legacy`] or [`Kit::stateless`]), transport,
/// capabilities, caller. `C` is the client type [`Connect::connect`] returns.
pub struct Connect<H, C = Client> {
    server: McpServer<H>,
    catalog: Arc<Catalog>,
    era: Era,
    transport: Transport,
    capabilities: ClientCapabilities,
    principal: Option<Principal>,
    bearer: Option<String>,
    client: PhantomData<fn() -> C>,
}

impl<H: ServerHandler + Clone, C: From<Client>> Connect<H, C> {
    /// Over Streamable HTTP (the whole HTTP stack, in process).
    pub fn http(self) -> Self {
        self.transport(Transport::Http)
    }

    /// Over stdio framing (the default).
    pub fn stdio(self) -> Self {
        self.transport(Transport::Stdio)
    }

    /// Over `transport`.
    pub fn transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// Declares exactly `capabilities` (`ClientCapabilities::default()`: none, so every
    /// question fails with -32021).
    pub fn capabilities(mut self, capabilities: ClientCapabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// The caller: over HTTP a token the kit mints for it, verified by the real guard (which
    /// enforces the spec's scopes); over stdio the connection's principal (scopes are not
    /// enforced on stdio).
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Sends `token` as the bearer token (HTTP only), a token the kit did not mint: the guard
    /// refuses it (`401`). For tests of refusals.
    pub fn bearer(mut self, token: &str) -> Self {
        self.bearer = Some(token.to_string());
        self
    }

    /// The same builder making clients of type `D` (the generated `TestClient`).
    pub fn client<D: From<Client>>(self) -> Connect<H, D> {
        Connect {
            server: self.server,
            catalog: self.catalog,
            era: self.era,
            transport: self.transport,
            capabilities: self.capabilities,
            principal: self.principal,
            bearer: self.bearer,
            client: PhantomData,
        }
    }

    /// Connects.
    ///
    /// # Panics
    ///
    /// When the connection cannot be made (the message says why, e.g. the HTTP front refused
    /// the token), and for [`Connect::bearer`] on stdio.
    pub async fn connect(self) -> C {
        let label = label(self.era, self.transport);
        match self.try_connect().await {
            Ok(client) => client,
            Err(e) => panic!("the {label} test client cannot connect: {e}"),
        }
    }

    /// Connects, or says why not: [`CallError::Refused`] when the HTTP front refused the
    /// handshake (a bad token), [`CallError::Client`] otherwise.
    ///
    /// # Panics
    ///
    /// For [`Connect::bearer`] on stdio (bearer tokens are HTTP's).
    pub async fn try_connect(self) -> Result<C, CallError> {
        let script = Arc::new(Script::new(self.era, self.capabilities));
        let handler = Scripted(Arc::clone(&script));
        let lifecycle = match self.era {
            Era::Legacy => ClientLifecycleMode::Initialize,
            Era::Modern => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        };
        let connecting = |e: &dyn fmt::Display| CallError::Client(format!("connecting: {e}"));
        let (service, refusals) = match self.transport {
            Transport::Stdio => {
                assert!(
                    self.bearer.is_none(),
                    "a bearer token is sent over HTTP only: add .http() or set a .principal(..)"
                );
                let (client_end, server_end) = tokio::io::duplex(64 * 1024);
                let (read, write) = tokio::io::split(server_end);
                let mut extensions = Extensions::new();
                extensions.insert(Arc::clone(&script.log));
                let supported = self.server.supported_protocol_versions().into_owned();
                let lines = stdio::Lines::new(
                    read,
                    write,
                    self.server.capabilities(),
                    self.server.scope().clone(),
                    supported,
                    self.principal.map(Arc::new),
                )
                .with_extensions(extensions);
                let server = self.server.clone();
                tokio::spawn(async move {
                    match server.serve(lines).await {
                        Ok(running) => {
                            let _ = running.waiting().await;
                        }
                        Err(e) => tracing::debug!("test kit: the stdio server ended: {e}"),
                    }
                });
                let service = timed(handler.serve_with_lifecycle(client_end, lifecycle))
                    .await
                    .map_err(|e| connecting(&e))?
                    .map_err(|e| connecting(&e))?;
                (service, None)
            }
            Transport::Http => {
                let tokens = Arc::new(TestTokens::default());
                let token = match (&self.bearer, self.principal) {
                    (Some(raw), _) => Some(raw.clone()),
                    (None, Some(principal)) => Some(tokens.mint(principal)),
                    (None, None) => None,
                };
                let mut options = RouterOptions::default();
                if self.server.access().declared || token.is_some() {
                    options =
                        options.verifier(AuthSettings::new(TEST_ISSUER, TEST_RESOURCE), tokens);
                }
                let stack = options
                    .into_service(self.server.clone())
                    .map_err(|e| connecting(&e))?;
                let refusals = Refusals::default();
                let client = InProcess::new(stack, Arc::clone(&script.log), refusals.clone());
                let mut config = StreamableHttpClientTransportConfig::with_uri(TEST_RESOURCE);
                if let Some(token) = token {
                    config = config.auth_header(token);
                }
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let service = match timed(handler.serve_with_lifecycle(transport, lifecycle)).await
                {
                    Ok(Ok(service)) => service,
                    Ok(Err(e)) => {
                        return Err(refusals.take().map_or_else(|| connecting(&e), Into::into));
                    }
                    Err(e) => return Err(connecting(&e)),
                };
                (service, Some(refusals))
            }
        };
        Ok(C::from(Client {
            service,
            script,
            catalog: self.catalog,
            era: self.era,
            transport: self.transport,
            refusals,
        }))
    }
}

/// `future`, or [`CallError::Client`] after [`TIMEOUT`].
async fn timed<F: Future>(future: F) -> Result<F::Output, CallError> {
    tokio::time::timeout(TIMEOUT, future)
        .await
        .map_err(|_| CallError::Client(format!("no answer within {} s", TIMEOUT.as_secs())))
}

fn label(era: Era, transport: Transport) -> &'static str {
    match (era, transport) {
        (Era::Legacy, Transport::Stdio) => "legacy stdio",
        (Era::Legacy, Transport::Http) => "legacy http",
        (Era::Modern, Transport::Stdio) => "2026-07-28 stdio",
        (Era::Modern, Transport::Http) => "2026-07-28 http",
    }
}

/// A principal for tests: `subject` (also its `client_id`) with `scopes`, issued by
/// [`TEST_ISSUER`] for [`TEST_RESOURCE`].
pub fn principal(subject: &str, scopes: &[&str]) -> Principal {
    Principal {
        issuer: TEST_ISSUER.to_string(),
        subject: subject.to_string(),
        client_id: subject.to_string(),
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
        audience: vec![TEST_RESOURCE.to_string()],
        expires_at: None,
        claims: serde_json::Map::new(),
    }
}

/// The kit's token verifier: the tokens it minted (`kit-<n>`) stand for their principals; any
/// other token is invalid (`401`).
#[derive(Default)]
struct TestTokens {
    next: AtomicU64,
    minted: Mutex<HashMap<String, Arc<Principal>>>,
}

impl TestTokens {
    fn mint(&self, principal: Principal) -> String {
        let token = format!("kit-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        lock(&self.minted).insert(token.clone(), Arc::new(principal));
        token
    }
}

impl TokenVerifier for TestTokens {
    fn verify<'a>(&'a self, token: &'a str) -> Verifying<'a> {
        let answer = lock(&self.minted).get(token).cloned().ok_or_else(|| {
            Rejection::Invalid(format!("the test kit did not mint the token {token:?}"))
        });
        Box::pin(std::future::ready(answer))
    }
}

/// One question the server asked the client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Question {
    /// Form elicitation (`elicitation/create`, mode form): its message and requested schema.
    Form {
        /// The asking resolver (`None` for a tool body's own `ctx.elicit`).
        resolver: Option<String>,
        /// The message.
        message: String,
        /// The requested schema, as sent.
        schema: Value,
    },
    /// URL elicitation.
    Url {
        /// The asking resolver (`None` for a tool body's `ctx.elicit_url`).
        resolver: Option<String>,
        /// The message.
        message: String,
        /// The URL to open.
        url: String,
        /// The elicitation id.
        id: String,
    },
    /// `sampling/createMessage`: its params, as JSON.
    Sampling {
        /// The asking resolver.
        resolver: Option<String>,
        /// The request's params.
        params: Value,
    },
    /// `roots/list`.
    Roots {
        /// The asking resolver.
        resolver: Option<String>,
    },
}

impl Question {
    /// The asking resolver, if the question came from one.
    pub fn resolver(&self) -> Option<&str> {
        match self {
            Question::Form { resolver, .. }
            | Question::Url { resolver, .. }
            | Question::Sampling { resolver, .. }
            | Question::Roots { resolver } => resolver.as_deref(),
        }
    }

    /// The message of an elicitation.
    pub fn message(&self) -> Option<&str> {
        match self {
            Question::Form { message, .. } | Question::Url { message, .. } => Some(message),
            _ => None,
        }
    }

    /// The text of a sampling request: the text blocks of its messages, in order, one per line
    /// (`None` for other questions). Reads the request's JSON, so no deprecated rmcp sampling
    /// type is touched.
    pub fn sampling_text(&self) -> Option<String> {
        let Question::Sampling { params, .. } = self else {
            return None;
        };
        let blocks = |content: &Value| match content {
            Value::Array(blocks) => blocks.clone(),
            block => vec![block.clone()],
        };
        let texts: Vec<String> = (params.get("messages").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(|message| message.get("content"))
            .flat_map(blocks)
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str).map(String::from))
            .collect();
        Some(texts.join("\n"))
    }
}

/// An answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Accept, with this content (`Value::Null`: no content, as for a URL elicitation).
    Accept(Value),
    /// Decline.
    Decline,
    /// Cancel.
    Cancel,
}

impl Answer {
    /// Accept with `content` (any `Serialize`, e.g. the form type: `Answer::accept(Backorder {
    /// confirm: true })`, or `json!({..})`).
    ///
    /// # Panics
    ///
    /// When `content` does not serialize to JSON.
    pub fn accept(content: impl Serialize) -> Answer {
        Answer::Accept(
            serde_json::to_value(content).expect("the accepted content serializes to JSON"),
        )
    }

    /// Accept a URL elicitation (no content).
    pub fn accept_url() -> Answer {
        Answer::Accept(Value::Null)
    }

    fn to_result(&self) -> ElicitResult {
        match self {
            Answer::Accept(Value::Null) => ElicitResult::new(ElicitationAction::Accept),
            Answer::Accept(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content.clone())
            }
            Answer::Decline => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        }
    }
}

/// A notification the server sent the client: its method and params (`Value::Null` without).
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method (`notifications/elicitation/complete`, `notifications/progress`, ...).
    pub method: String,
    /// The params.
    pub params: Value,
}

/// Why a call did not return its result.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// The tool answered `isError`: the whole text, `Error executing tool <t>: ..`.
    Tool(String),
    /// The `isError` of input validation: one violation each, as the runtime's validator
    /// writes them (`/limit (maximum): 99 is greater than the maximum of 50`).
    InvalidArguments(Vec<String>),
    /// A JSON-RPC error (-32021, -32602, -32600, ...).
    Protocol {
        /// The code.
        code: i32,
        /// The message.
        message: String,
        /// The data.
        data: Option<Value>,
    },
    /// The server asked this question and the test scripted no answer to its kind.
    Unscripted(Question),
    /// The HTTP front refused the request (`401`, `403`, ...).
    Refused {
        /// The HTTP status.
        status: u16,
        /// Its `WWW-Authenticate` header.
        www_authenticate: Option<String>,
    },
    /// The result does not decode as the output type.
    Output(String),
    /// The transport or the client failed.
    Client(String),
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Tool(text) => write!(f, "tool error: {text}"),
            CallError::InvalidArguments(violations) => {
                write!(f, "invalid arguments: {}", violations.join("; "))
            }
            CallError::Protocol {
                code,
                message,
                data,
            } => match data {
                Some(data) => write!(f, "protocol error {code}: {message} ({data})"),
                None => write!(f, "protocol error {code}: {message}"),
            },
            CallError::Unscripted(question) => {
                write!(f, "the test scripted no answer to {question:?}")
            }
            CallError::Refused {
                status,
                www_authenticate,
            } => match www_authenticate {
                Some(challenge) => write!(f, "HTTP {status} (WWW-Authenticate: {challenge})"),
                None => write!(f, "HTTP {status}"),
            },
            CallError::Output(e) => write!(f, "the output does not decode: {e}"),
            CallError::Client(e) => write!(f, "client failure: {e}"),
        }
    }
}

impl std::error::Error for CallError {}

/// How a tool's typed output is read from its result (the shape mcpgen chose for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// `structuredContent.result` (a non-object `output`).
    Wrapped,
    /// `structuredContent` (an object `output`).
    Object,
    /// The `content` blocks (no `output`).
    Content,
}

/// One step of a 2026-07-28 call driven by hand ([`Client::rounds`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The server answered `input_required`.
    InputRequired {
        /// Its questions, each with its resolver (the `inputRequests` key).
        questions: Vec<Question>,
        /// The `requestState` to echo.
        request_state: Option<String>,
    },
    /// The call completed (an `isError` result too).
    Complete(CallToolResult),
}

type ElicitFn = dyn Fn(&Question) -> Answer + Send + Sync;
#[allow(deprecated)]
type SampleFn = dyn Fn(&Question) -> CreateMessageResult + Send + Sync;

/// What a client answers, and what it recorded.
struct Script {
    era: Era,
    capabilities: ClientCapabilities,
    elicitation: Mutex<Option<Arc<ElicitFn>>>,
    sampling: Mutex<Option<Arc<SampleFn>>>,
    roots: Mutex<Option<Vec<String>>>,
    questions: Mutex<Vec<Question>>,
    notifications: Mutex<Vec<Notification>>,
    /// The first question of the current call that had no scripted answer.
    unscripted: Mutex<Option<Question>>,
    log: Arc<AskLog>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Script {
    fn new(era: Era, capabilities: ClientCapabilities) -> Self {
        Script {
            era,
            capabilities,
            elicitation: Mutex::new(None),
            sampling: Mutex::new(None),
            roots: Mutex::new(None),
            questions: Mutex::new(Vec::new()),
            notifications: Mutex::new(Vec::new()),
            unscripted: Mutex::new(None),
            log: Arc::default(),
        }
    }

    /// The answer the script gives to `question` as the client's result JSON, or `None`
    /// (unscripted).
    #[allow(deprecated)]
    fn answer(&self, question: &Question) -> Option<Value> {
        let value = match question {
            Question::Form { .. } | Question::Url { .. } => {
                let script = lock(&self.elicitation).clone()?;
                serde_json::to_value(script(question).to_result())
            }
            Question::Sampling { .. } => {
                let script = lock(&self.sampling).clone()?;
                serde_json::to_value(script(question))
            }
            Question::Roots { .. } => {
                let roots = lock(&self.roots).clone()?;
                serde_json::to_value(ListRootsResult::new(
                    roots.into_iter().map(Root::new).collect(),
                ))
            }
        };
        Some(value.expect("the kit's answers serialize"))
    }

    /// Records `question` and answers it from the script, or with an error the server sees
    /// (the call then reports [`CallError::Unscripted`]).
    fn respond<T: DeserializeOwned>(&self, question: Question) -> Result<T, ErrorData> {
        lock(&self.questions).push(question.clone());
        match self.answer(&question) {
            Some(answer) => serde_json::from_value(answer)
                .map_err(|e| ErrorData::internal_error(format!("the kit's answer: {e}"), None)),
            None => {
                let message = format!("the test scripted no answer to {question:?}");
                lock(&self.unscripted).get_or_insert(question);
                Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, message, None))
            }
        }
    }

    /// The resolver of a question the client received: the `inputRequests` key on 2026-07-28,
    /// the log's note on legacy connections.
    fn resolver(
        &self,
        context: &RequestContext<RoleClient>,
        kind: AskedKind,
        message: Option<&str>,
    ) -> Option<String> {
        match self.era {
            Era::Modern => match &context.id {
                NumberOrString::String(key) => Some(key.to_string()),
                NumberOrString::Number(_) => None,
            },
            Era::Legacy => self.log.take(kind, message),
        }
    }

    fn notify(&self, method: &str, params: Value) {
        lock(&self.notifications).push(Notification {
            method: method.to_string(),
            params,
        });
    }
}

/// The question a 2026-07-28 `inputRequests` entry asks (`None`: a kind the kit does not know).
fn input_question(key: &str, request: &InputRequest) -> Option<Question> {
    let resolver = Some(key.to_string());
    match request {
        InputRequest::Elicitation(request) => elicit_question(resolver, request.params.clone()),
        InputRequest::CreateMessage(request) => Some(Question::Sampling {
            resolver,
            params: serde_json::to_value(&request.params).unwrap_or_default(),
        }),
        InputRequest::ListRoots(_) => Some(Question::Roots { resolver }),
        _ => None,
    }
}

fn elicit_question(resolver: Option<String>, params: ElicitRequestParams) -> Option<Question> {
    match params {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => Some(Question::Form {
            resolver,
            message,
            schema: serde_json::to_value(&requested_schema).unwrap_or_default(),
        }),
        ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } => Some(Question::Url {
            resolver,
            message,
            url,
            id: elicitation_id,
        }),
        _ => None,
    }
}

/// The error a test client answers a question of a kind it does not know with.
fn unknown_question() -> ErrorData {
    ErrorData::invalid_params("the test kit does not know this kind of question", None)
}

/// rmcp's client handler of a test client: answers from its [`Script`].
#[derive(Clone)]
struct Scripted(Arc<Script>);

#[allow(deprecated)]
impl ClientHandler for Scripted {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.0.capabilities.clone(),
            Implementation::new("mcpgen-test-kit", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let resolver = match &request {
            ElicitRequestParams::FormElicitationParams { message, .. } => {
                self.0.resolver(&context, AskedKind::Form, Some(message))
            }
            _ => self.0.resolver(&context, AskedKind::Url, None),
        };
        let question = elicit_question(resolver, request).ok_or_else(unknown_question)?;
        self.0.respond(question)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let resolver = self.0.resolver(&context, AskedKind::Sampling, None);
        self.0.respond(Question::Sampling {
            resolver,
            params: serde_json::to_value(&params).unwrap_or_default(),
        })
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let resolver = self.0.resolver(&context, AskedKind::Roots, None);
        self.0.respond(Question::Roots { resolver })
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let params = serde_json::to_value(params).unwrap_or_default();
        self.0.notify("notifications/progress", params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let params = serde_json::to_value(params).unwrap_or_default();
        self.0.notify("notifications/message", params);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let params = serde_json::to_value(params).unwrap_or_default();
        self.0.notify("notifications/resources/updated", params);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0
            .notify("notifications/resources/list_changed", Value::Null);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0
            .notify("notifications/tools/list_changed", Value::Null);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0
            .notify("notifications/prompts/list_changed", Value::Null);
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        let params = notification.params.unwrap_or(Value::Null);
        self.0.notify(&notification.method, params);
    }
}

/// A connected test client. Every method takes `&self`; the scripts may change between calls.
pub struct Client {
    service: RunningService<RoleClient, Scripted>,
    script: Arc<Script>,
    catalog: Arc<Catalog>,
    era: Era,
    transport: Transport,
    refusals: Option<Refusals>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("label", &self.label())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Answers every elicitation (form and URL) with `answer(question)`.
    pub fn answer_elicitation(
        &self,
        answer: impl Fn(&Question) -> Answer + Send + Sync + 'static,
    ) -> &Self {
        *lock(&self.script.elicitation) = Some(Arc::new(answer));
        self
    }

    /// Declines every elicitation.
    pub fn decline(&self) -> &Self {
        self.answer_elicitation(|_| Answer::Decline)
    }

    /// Cancels every elicitation.
    pub fn cancel(&self) -> &Self {
        self.answer_elicitation(|_| Answer::Cancel)
    }

    /// Answers every sampling request with `answer(question)`.
    #[allow(deprecated)]
    pub fn answer_sampling(
        &self,
        answer: impl Fn(&Question) -> CreateMessageResult + Send + Sync + 'static,
    ) -> &Self {
        *lock(&self.script.sampling) = Some(Arc::new(answer));
        self
    }

    /// Answers every sampling request with an assistant message of `text` (model
    /// `mcpgen-test-kit`).
    pub fn sample_text(&self, text: &str) -> &Self {
        let text = text.to_string();
        self.sample_text_with(move |_| text.clone())
    }

    /// Answers every sampling request with an assistant message of the text `answer(question)`
    /// returns (model `mcpgen-test-kit`); [`Question::sampling_text`] reads what was asked.
    #[allow(deprecated)]
    pub fn sample_text_with(
        &self,
        answer: impl Fn(&Question) -> String + Send + Sync + 'static,
    ) -> &Self {
        self.answer_sampling(move |question| {
            CreateMessageResult::new(
                SamplingMessage::assistant_text(answer(question)),
                "mcpgen-test-kit".into(),
            )
        })
    }

    /// Answers `roots/list` with these root URIs.
    pub fn roots(&self, roots: impl IntoIterator<Item = impl Into<String>>) -> &Self {
        *lock(&self.script.roots) = Some(roots.into_iter().map(Into::into).collect());
        self
    }

    /// Every question the server asked so far, in order.
    pub fn questions(&self) -> Vec<Question> {
        lock(&self.script.questions).clone()
    }

    /// The questions asked so far, forgetting them.
    pub fn take_questions(&self) -> Vec<Question> {
        std::mem::take(&mut *lock(&self.script.questions))
    }

    /// Every notification the server sent so far, in order.
    ///
    /// rmcp hands each notification to the client in a task of its own, so one sent just
    /// before a result may be recorded just after the call returned:
    /// [`Client::wait_for_notifications`] waits for them.
    pub fn notifications(&self) -> Vec<Notification> {
        lock(&self.script.notifications).clone()
    }

    /// The notifications so far, once there are at least `count` (or after a second: then
    /// fewer).
    pub async fn wait_for_notifications(&self, count: usize) -> Vec<Notification> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        loop {
            let notifications = self.notifications();
            if notifications.len() >= count || tokio::time::Instant::now() >= deadline {
                return notifications;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// The client's protocol era.
    pub fn era(&self) -> Era {
        self.era
    }

    /// The client's transport.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// `"legacy stdio"`, `"legacy http"`, `"2026-07-28 stdio"` or `"2026-07-28 http"`.
    pub fn label(&self) -> &'static str {
        label(self.era, self.transport)
    }

    /// rmcp's running client, for anything the kit does not wrap.
    pub fn service(&self) -> &RunningService<RoleClient, impl ClientHandler> {
        &self.service
    }

    /// Ends the connection.
    pub async fn close(self) {
        let _ = timed(self.service.cancel()).await;
    }

    /// Starts a call: forgets what earlier calls left.
    fn begin(&self) {
        lock(&self.script.unscripted).take();
        if let Some(refusals) = &self.refusals {
            refusals.take();
        }
    }

    /// What a failed request reports.
    fn failure(&self, error: ServiceError) -> CallError {
        if let Some(question) = lock(&self.script.unscripted).take() {
            return CallError::Unscripted(question);
        }
        if let ServiceError::McpError(error) = error {
            return CallError::Protocol {
                code: error.code.0,
                message: error.message.into_owned(),
                data: error.data,
            };
        }
        if let Some(refusal) = self.refusals.as_ref().and_then(Refusals::take) {
            return refusal.into();
        }
        CallError::Client(error.to_string())
    }

    /// Runs one request of the kit.
    async fn request<T>(
        &self,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, CallError> {
        self.begin();
        let outcome = timed(request).await?;
        match outcome {
            Ok(value) => match lock(&self.script.unscripted).take() {
                Some(question) => Err(CallError::Unscripted(question)),
                None => Ok(value),
            },
            Err(e) => Err(self.failure(e)),
        }
    }

    /// Calls tool `name` with `arguments` (a JSON object); on 2026-07-28 rmcp's client runs the
    /// multi-round-trip loop, answering from the scripts. `Ok` is a successful result;
    /// an `isError` result is [`CallError::Tool`] or, when it is the input validation's
    /// answer to exactly these arguments, [`CallError::InvalidArguments`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, CallError> {
        let arguments = object(arguments)?;
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments.clone());
        let result = self.request(self.service.call_tool(params)).await?;
        self.tool_result(name, &arguments, result)
    }

    /// Sorts a complete result into `Ok` or the kinds of `isError`.
    fn tool_result(
        &self,
        name: &str,
        arguments: &JsonObject,
        result: CallToolResult,
    ) -> Result<CallToolResult, CallError> {
        if result.is_error != Some(true) {
            return Ok(result);
        }
        let text = texts(&result.content);
        if let Some(violations) = self.catalog.violations(name, arguments)
            && !violations.is_empty()
            && text == format!("Error executing tool {name}: {}", violations.join("\n"))
        {
            return Err(CallError::InvalidArguments(violations));
        }
        Err(CallError::Tool(text))
    }

    /// Calls tool `name` with typed arguments and decodes its typed output from the result
    /// (`output`: where the output is, as mcpgen shaped it).
    pub async fn call_typed<A: Serialize, O: DeserializeOwned>(
        &self,
        name: &str,
        arguments: &A,
        output: Output,
    ) -> Result<O, CallError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| CallError::Client(format!("the arguments do not serialize: {e}")))?;
        let result = self.call_tool(name, arguments).await?;
        let value = match output {
            Output::Wrapped => result
                .structured_content
                .as_ref()
                .and_then(|content| content.get("result"))
                .cloned(),
            Output::Object => result.structured_content.clone(),
            Output::Content => serde_json::to_value(&result.content).ok(),
        };
        let Some(value) = value else {
            return Err(CallError::Output(format!(
                "tool '{name}' returned no {output:?} output: {}",
                serde_json::to_value(&result).unwrap_or_default()
            )));
        };
        serde_json::from_value(value.clone())
            .map_err(|e| CallError::Output(format!("tool '{name}': {e} (the output was {value})")))
    }

    /// Steps a 2026-07-28 call of tool `name` by hand: each [`Rounds::send`] is one request.
    ///
    /// # Panics
    ///
    /// On a legacy client (its questions arrive mid-call, not as rounds), and when `arguments`
    /// is not a JSON object.
    pub fn rounds(&self, name: &str, arguments: Value) -> Rounds<'_> {
        assert!(
            self.era == Era::Modern,
            "rounds() steps 2026-07-28 calls; the {} client is answered mid-call",
            self.label()
        );
        let arguments = object(arguments).unwrap_or_else(|e| panic!("{e}"));
        Rounds {
            client: self,
            name: name.to_string(),
            arguments,
            request_state: None,
            pending: InputRequests::new(),
            responses: InputResponses::new(),
        }
    }

    /// `tools/list`, every page.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, CallError> {
        self.request(self.service.list_all_tools()).await
    }

    /// `prompts/list`, every page.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, CallError> {
        self.request(self.service.list_all_prompts()).await
    }

    /// `prompts/get` of `name` with `arguments` (a JSON object of strings; `Value::Null`:
    /// none); on 2026-07-28 with the multi-round-trip loop.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<GetPromptResult, CallError> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_null() {
            params = params.with_arguments(object(arguments)?);
        }
        self.request(self.service.get_prompt(params)).await
    }

    /// `resources/list`, every page.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, CallError> {
        self.request(self.service.list_all_resources()).await
    }

    /// `resources/templates/list`, every page.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, CallError> {
        self.request(self.service.list_all_resource_templates())
            .await
    }

    /// `resources/read` of `uri`; on 2026-07-28 with the multi-round-trip loop.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, CallError> {
        self.request(
            self.service
                .read_resource(ReadResourceRequestParams::new(uri)),
        )
        .await
    }

    /// `completion/complete`.
    pub async fn complete(
        &self,
        params: CompleteRequestParams,
    ) -> Result<CompleteResult, CallError> {
        self.request(self.service.complete(params)).await
    }
}

/// The text of a result's content: its text blocks, joined by newlines.
fn texts(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn object(value: Value) -> Result<JsonObject, CallError> {
    match value {
        Value::Object(object) => Ok(object),
        other => Err(CallError::Client(format!(
            "the arguments must be a JSON object, not {other}"
        ))),
    }
}

/// A 2026-07-28 tool call stepped by hand ([`Client::rounds`]).
pub struct Rounds<'a> {
    client: &'a Client,
    name: String,
    arguments: JsonObject,
    request_state: Option<String>,
    /// The questions of the last `input_required`.
    pending: InputRequests,
    /// The answers for the next request.
    responses: InputResponses,
}

impl Rounds<'_> {
    /// Sends the call once, with the answers given since the last step and the current
    /// `requestState`. The questions of an `input_required` answer are recorded in
    /// [`Client::questions`] too.
    pub async fn send(&mut self) -> Result<Step, CallError> {
        let mut params =
            CallToolRequestParams::new(self.name.clone()).with_arguments(self.arguments.clone());
        let responses = std::mem::take(&mut self.responses);
        params.input_responses = (!responses.is_empty()).then_some(responses);
        params.request_state = self.request_state.clone();
        let client = self.client;
        match client
            .request(client.service.call_tool_once(params))
            .await?
        {
            CallToolResponse::Complete(result) => Ok(Step::Complete(result)),
            CallToolResponse::InputRequired(result) => {
                self.pending = result.input_requests.unwrap_or_default();
                self.request_state = result.request_state;
                let questions: Vec<Question> = self
                    .pending
                    .iter()
                    .filter_map(|(key, request)| input_question(key, request))
                    .collect();
                lock(&client.script.questions).extend(questions.iter().cloned());
                Ok(Step::InputRequired {
                    questions,
                    request_state: self.request_state.clone(),
                })
            }
            other => Err(CallError::Client(format!(
                "an answer the kit does not step: {other:?}"
            ))),
        }
    }

    /// Answers the pending elicitation of `resolver` in the next request.
    ///
    /// # Panics
    ///
    /// When no elicitation of `resolver` is pending.
    pub fn answer(&mut self, resolver: &str, answer: Answer) {
        assert!(
            matches!(
                self.pending.get(resolver),
                Some(InputRequest::Elicitation(_))
            ),
            "no elicitation of resolver '{resolver}' is pending (pending: {:?})",
            self.pending.keys().collect::<Vec<_>>()
        );
        let result = serde_json::to_value(answer.to_result()).expect("answers serialize");
        self.responses.insert(resolver.to_string(), result);
    }

    /// Answers every pending question not yet answered from the client's scripts.
    ///
    /// # Panics
    ///
    /// When the scripts have no answer to one of them.
    pub fn answer_from_script(&mut self) {
        for (key, request) in &self.pending {
            if self.responses.contains_key(key) {
                continue;
            }
            let question = input_question(key, request)
                .unwrap_or_else(|| panic!("the test kit does not know the question {key:?}"));
            let answer = self
                .client
                .script
                .answer(&question)
                .unwrap_or_else(|| panic!("the test scripted no answer to {question:?}"));
            self.responses.insert(key.clone(), answer);
        }
    }

    /// The `requestState` the next request echoes.
    pub fn request_state(&self) -> Option<&str> {
        self.request_state.as_deref()
    }

    /// Replaces the `requestState` the next request echoes (forged, stale, none).
    pub fn set_request_state(&mut self, state: Option<String>) {
        self.request_state = state;
    }
}
