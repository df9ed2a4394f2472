//! The HTTP front: the tower service in front of rmcp's Streamable HTTP service. It owns what
//! RFC 9110/9112, JSON-RPC 2.0 and the Streamable HTTP transport require where rmcp answers
//! otherwise:
//!
//! * its path only (`/mcp`; `404 Not Found` elsewhere) when it serves alone, as the command
//!   line's server does (a router for this one path cost about 5 % of a request's CPU); in an
//!   `axum::Router` ([`RouterOptions::into_router`](crate::RouterOptions::into_router)) the router routes;
//! * more than one `Host` header, or none on HTTP/1.1: `400` (on every path when it serves
//!   alone; RFC 9112 §3.2; rmcp reads the first);
//! * `Accept` ranges (`*/*`, `application/*`, `text/*`, RFC 9110 §12.5.1) accepted as the media
//!   types they cover (rmcp matches the literal types only; the Python SDK takes the ranges);
//! * a POST body rmcp cannot decode (it answers `415` with a text body) gets the JSON-RPC error
//!   from [`jsonrpc`] as `400 application/json` (`404` for `-32601`), or `202` for a
//!   malformed notification or response; so does an `initialize` with bad params, which rmcp
//!   answers `400 Session ID is required`. Valid bodies are parsed by rmcp alone (the front keeps
//!   the bytes and reads them only when rmcp has rejected them);
//! * a 2026-07-28 JSON-RPC error the handler returned (rmcp answers most at `200`) gets the
//!   status the transport gives its code ([`error_status`]): `400` for `-32700`, `-32600`,
//!   `-32602`, `-32020`, `-32021`, `-32022`, `404` for `-32601`, `200` for the others (`-32603`
//!   as in the Python SDK). Only a JSON answer at `200` is looked at, and only its first bytes
//!   unless it is an error. Legacy sessions answer on SSE streams at `200`, as the transport
//!   requires;
//! * a body over rmcp's limit: `413` with `Connection: close`, after reading (a bounded amount
//!   of) the rest of the body so that the client receives the answer instead of a reset;
//! * a legacy `initialize` (without `MCP-Protocol-Version`) when the sessions are at their cap
//!   once the expired ones are closed: the `503` of `sessions::too_many_sessions` before rmcp
//!   builds a session to refuse (`sessions.rs`);
//! * `DELETE` of a session that does not exist: `404 Not Found` (rmcp answers `202`); of one
//!   that does: `204 No Content` once it is closed (rmcp answers `202 Accepted`, which the
//!   Python SDK client takes for a failure);
//! * with authorization configured ([`Guard`], `guard.rs`, which decides every answer): the
//!   protected-resource metadata at its two well-known paths (when the front serves alone; in a
//!   router, [`RouterOptions::into_router`](crate::RouterOptions::into_router) routes them), and on every request at the
//!   path the bearer token verified before rmcp sees it: the `400`/`401`/`403`/`503` refusals
//!   (a POST's body read first, for the scopes its operation needs), else the verified
//!   [`Principal`] in the request's extensions (rmcp copies the request head into the
//!   handler's context: `Context::principal` reads it there); a request naming a legacy session
//!   another caller opened gets `404` (`sessions::not_owner`); a `subscriptions/listen` naming
//!   resources the caller may not read reaches rmcp without them (`guard::narrow_listen`), so
//!   its acknowledgement and its stream leave them out.
//!
//! Operations:
//!
//! * health, when the front serves alone (in a router, [`RouterOptions::health`](crate::RouterOptions::health) routes
//!   the same answers): `GET`/`HEAD /healthz` is `200 ok`, `/readyz` is `200 ready` or, once
//!   the server drains, `503 draining` with `Retry-After` ([`health_answer`]); neither checks
//!   the allowed `Host`s (rmcp's check; load balancers probe by address);
//! * while the server drains ([`Shutdown::drain`]), new connections are still accepted; a POST
//!   that starts new work (anything [`jsonrpc::served_while_draining`] does not pass: what
//!   continues a call in flight, [`jsonrpc::continues_call`], and the catalog's lists and
//!   `ping`) and a new `GET` stream get `503 application/json` with `Retry-After` and the
//!   JSON-RPC error `-32000 "Server is shutting down; try again later"`; a `GET` that resumes a
//!   call's stream ([`resumes_call`]) and a `DELETE` are served; every answer carries
//!   `Connection: close`;
//! * cancellation on 2026-07-28: a client cancels such a request by closing it, which hyper
//!   does not notice while the request runs (`half_close`). A request that runs longer than
//!   [`PROBE_DELAY`] watches its connection ([`Liveness`]); when the client closed it (or only
//!   shut down its sending side, which TCP cannot tell apart), rmcp's future is dropped, and
//!   rmcp cancels the handler. An SSE answer's stream ends then too.
//!
//! It also serves the connections ([`serve_connections`]): hyper's HTTP/1.1 server with a
//! header read timeout (slowloris) and a cap on concurrent connections, shared by the serving
//! threads (beyond it new connections wait in the listen backlog until one closes). It stamps
//! every request with its [`Arrival`] (when and from where).

use std::{
    convert::Infallible,
    os::fd::AsFd,
    pin::Pin,
    sync::{Arc, OnceLock},
    task::Poll,
    time::{Duration, Instant},
};

use axum::{
    body::{Body, Bytes, HttpBody},
    extract::Request,
    http::{HeaderMap, HeaderValue, Method, StatusCode, Version, header},
    response::{IntoResponse, Response},
};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::{model::ErrorCode, transport::streamable_http_server::session::SessionManager};
use tokio::io::{Interest, unix::AsyncFd};

use crate::{
    authorization::{
        guard::{Guard, narrow_listen},
        principal::Principal,
    },
    capabilities::Capabilities,
    request::head,
    request::{Arrival, Raw},
    scope::Scope,
    shutdown::{Answering, Shutdown},
    transport::{
        jsonrpc::{self, Rejection, Verdict},
        sessions::{self, Sessions},
    },
};

/// The liveness probe's path.
pub(crate) const HEALTHZ: &str = "/healthz";

/// The readiness probe's path.
pub(crate) const READYZ: &str = "/readyz";

/// The JSON-RPC error message of a request refused while the server drains.
pub(crate) const DRAINING: &str = "Server is shutting down; try again later";

/// `Retry-After` (seconds) of `/readyz` while draining.
const RETRY_AFTER_SECS: u32 = 5;

/// How long a 2026-07-28 request runs before its connection is watched for the client closing
/// it: a quick call costs one timer entry and no system call.
pub(crate) const PROBE_DELAY: Duration = Duration::from_millis(50);

/// What the front asks of the session manager besides rmcp's `SessionManager`: whether a
/// caller may use a session, and whether a new one would be refused (see `sessions.rs`).
pub(crate) trait Owners {
    /// `false` only for a known session another caller opened.
    fn admits(&self, id: &str, principal: Option<&Principal>) -> bool;

    /// Whether the sessions are at their cap, without looking for expired ones (cheap).
    fn at_cap(&self) -> bool;

    /// Whether the sessions are at their cap once the expired ones are closed.
    fn full(&self) -> impl Future<Output = bool> + Send;
}

impl Owners for Sessions {
    fn admits(&self, id: &str, principal: Option<&Principal>) -> bool {
        Sessions::admits(self, id, principal)
    }

    fn at_cap(&self) -> bool {
        Sessions::at_cap(self)
    }

    fn full(&self) -> impl Future<Output = bool> + Send {
        Sessions::full(self)
    }
}

/// This front around rmcp's service `S`, whose sessions `M` holds (built by
/// [`RouterOptions`](crate::RouterOptions)).
pub(crate) struct Front<S, M> {
    mcp: S,
    sessions: Arc<M>,
    capabilities: Capabilities,
    /// The server's `requestState` policy, for the boundary of requests rmcp cannot decode.
    scope: Scope,
    /// rmcp's body limit (`StreamableHttpServerConfig::max_request_body_bytes`).
    max_body: usize,
    /// The only path served (`404` elsewhere), when the front serves alone; `None` in a router.
    path: Option<Arc<str>>,
    /// The resource-server policy, when authorization is configured.
    guard: Option<Arc<Guard>>,
    /// The drain's state (readiness, refusals).
    shutdown: Shutdown,
}

impl<S: Clone, M> Clone for Front<S, M> {
    fn clone(&self) -> Self {
        Front {
            mcp: self.mcp.clone(),
            sessions: Arc::clone(&self.sessions),
            capabilities: self.capabilities,
            scope: self.scope.clone(),
            max_body: self.max_body,
            path: self.path.clone(),
            guard: self.guard.clone(),
            shutdown: self.shutdown.clone(),
        }
    }
}

impl<S, M> Front<S, M> {
    pub(crate) fn new(
        mcp: S,
        sessions: Arc<M>,
        scope: Scope,
        max_body: usize,
        path: Option<Arc<str>>,
        guard: Option<Arc<Guard>>,
        shutdown: Shutdown,
    ) -> Self {
        Front {
            mcp,
            sessions,
            capabilities: scope.capabilities(),
            scope,
            max_body,
            path,
            guard,
            shutdown,
        }
    }
}

type Answer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl<S, M> tower_service::Service<Request> for Front<S, M>
where
    S: tower_service::Service<Request, Error = Infallible> + Clone + Send + 'static,
    S::Response: IntoResponse,
    S::Future: Send,
    M: SessionManager + Owners,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        self.mcp.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Answer {
        if let Some(problem) = host_problem(&request) {
            return refuse(request, text(StatusCode::BAD_REQUEST, problem));
        }
        if let Some(path) = &self.path
            && request.uri().path() != &**path
        {
            // Alone, the front also serves the health endpoints and the protected-resource
            // metadata.
            if let Some(response) =
                health_answer(request.uri().path(), request.method(), &self.shutdown)
            {
                return refuse(request, closing(&self.shutdown, response));
            }
            let metadata = self.guard.as_ref().filter(|guard| {
                guard
                    .metadata_paths()
                    .iter()
                    .any(|p| p == request.uri().path())
            });
            let response = match metadata {
                Some(guard) => metadata_answer(guard, request.method(), request.headers()),
                None => StatusCode::NOT_FOUND.into_response(),
            };
            return refuse(request, closing(&self.shutdown, response));
        }
        // The clone that was polled ready serves this request.
        let ready_mcp = self.mcp.clone();
        let mut mcp = std::mem::replace(&mut self.mcp, ready_mcp);
        let guard = self.guard.clone();
        let sessions = Arc::clone(&self.sessions);
        let shutdown = self.shutdown.clone();
        // Only the front's own connections watch for a client gone (not an embedder's server).
        let liveness = request.extensions_mut().remove::<Liveness>();
        match *request.method() {
            Method::POST => {
                widen_accept(request.headers_mut(), "application/json, text/event-stream");
                let capabilities = self.capabilities;
                let scope = self.scope.clone();
                let max_body = self.max_body;
                Box::pin(async move {
                    let context = Post {
                        capabilities,
                        scope: &scope,
                        max_body,
                        guard,
                        sessions,
                        shutdown: &shutdown,
                        liveness,
                    };
                    let response = post(mcp, request, context).await?;
                    Ok(closing(&shutdown, response))
                })
            }
            Method::DELETE => Box::pin(async move {
                if let Err(response) = admit(guard.as_deref(), &*sessions, &mut request).await {
                    return refuse(request, closing(&shutdown, response)).await;
                }
                let response = delete(mcp, request, sessions).await?;
                Ok(closing(&shutdown, response))
            }),
            _ => Box::pin(async move {
                if let Err(response) = admit(guard.as_deref(), &*sessions, &mut request).await {
                    return refuse(request, closing(&shutdown, response)).await;
                }
                // Resuming a call's stream (the client lost it, the call's answer is still to
                // come) continues what is in flight, and the drain waits for its end (as for
                // a POST's stream); any other new stream is new work (the streams already open
                // go on).
                let resumes = request.method() == Method::GET && resumes_call(request.headers());
                if request.method() == Method::GET {
                    if shutdown.is_draining() && !resumes {
                        let refusal = sessions::unavailable(serde_json::Value::Null, DRAINING);
                        return refuse(request, closing(&shutdown, refusal)).await;
                    }
                    widen_accept(request.headers_mut(), "text/event-stream");
                }
                let answering = resumes.then(|| shutdown.answering());
                let principal = request.extensions().get::<Arc<Principal>>().cloned();
                let response = mcp.call(request).await?.into_response();
                let response = match answering {
                    Some(answering) if is_event_stream(response.headers()) => response
                        .map(|body| Body::new(Watched::new(body, None, Some(answering), None))),
                    _ => response,
                };
                let response = ending_with_token(response, guard.as_deref(), principal.as_deref());
                Ok(closing(&shutdown, response))
            }),
        }
    }
}

/// Whether a `GET` resumes the stream of a call in a legacy session: `Mcp-Session-Id`, and a
/// `Last-Event-ID` of a call's stream (rmcp's event ids are `<index>/<request>` on a POST's
/// stream, `<index>` on the session's own `GET` stream). rmcp replays what the stream missed
/// and goes on with it until the call's answer; it ends then.
fn resumes_call(headers: &HeaderMap) -> bool {
    let event = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|id| id.split_once('/'));
    headers.contains_key("mcp-session-id")
        && event.is_some_and(|(index, request)| {
            !index.is_empty()
                && !request.is_empty()
                && index
                    .bytes()
                    .chain(request.bytes())
                    .all(|b| b.is_ascii_digit())
        })
}

/// `response`, with `Connection: close` while the server drains: clients and proxies move to
/// new connections (the listener stays open until the drain ends).
fn closing(shutdown: &Shutdown, mut response: Response) -> Response {
    if shutdown.is_draining() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The answer of a health endpoint at `path` (`/healthz`, `/readyz`), or `None` for another
/// path: `GET`/`HEAD /healthz` → `200 ok`; `/readyz` → `200 ready`, or `503 draining` with
/// `Retry-After` once `shutdown` began draining; any other method → `405` with
/// `Allow: GET, HEAD`.
pub(crate) fn health_answer(path: &str, method: &Method, shutdown: &Shutdown) -> Option<Response> {
    if path != HEALTHZ && path != READYZ {
        return None;
    }
    if method != Method::GET && method != Method::HEAD {
        return Some(
            (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "GET, HEAD")],
            )
                .into_response(),
        );
    }
    Some(if path == HEALTHZ {
        text(StatusCode::OK, "ok\n")
    } else if shutdown.is_draining() {
        let mut response = text(StatusCode::SERVICE_UNAVAILABLE, "draining\n");
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        response
    } else {
        text(StatusCode::OK, "ready\n")
    })
}

/// Answers `request` with `response` after reading and dropping its body ([`drain`]): a server
/// that closes a connection with unread request bytes makes the kernel reset it, and the client
/// may then lose the answer already sent.
fn refuse(request: Request, response: Response) -> Answer {
    Box::pin(async move {
        drain(request.into_body()).await;
        Ok(response)
    })
}

/// The methods the protected-resource metadata answers.
const METADATA_METHODS: &str = "GET, HEAD, OPTIONS";

/// The protected-resource metadata for a GET (or HEAD), else `405` naming its methods. The
/// document is public and a browser-based client (the Inspector's web UI) reads it from another
/// origin before it has any token, so the answer allows every origin (CORS), and a preflight
/// (`OPTIONS`, sent because such clients add `MCP-Protocol-Version`) is answered `204` with the
/// headers it asked for allowed. No credentials are involved: the document is the same for all.
pub(crate) fn metadata_answer(guard: &Guard, method: &Method, headers: &HeaderMap) -> Response {
    let mut response = match *method {
        Method::GET | Method::HEAD => guard.metadata(),
        Method::OPTIONS => {
            let mut response = StatusCode::NO_CONTENT.into_response();
            let out = response.headers_mut();
            out.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static(METADATA_METHODS),
            );
            if let Some(asked) = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
                out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
            }
            out.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("86400"),
            );
            response
        }
        _ => {
            return (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, METADATA_METHODS)],
            )
                .into_response();
        }
    };
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// The authorization of a GET, DELETE or other request without a body that is read here: the
/// caller's principal into `request`'s extensions, or the refusal.
async fn admit<M: Owners>(
    guard: Option<&Guard>,
    sessions: &M,
    request: &mut Request,
) -> Result<(), Response> {
    let Some(guard) = guard else {
        return Ok(());
    };
    let credential = guard.authenticate(request.headers()).await;
    let principal = guard.decide(credential, &[]).map_err(|refusal| *refusal)?;
    owner_check(sessions, request.headers(), principal.as_deref()).map_err(|refusal| *refusal)?;
    if let Some(principal) = principal {
        request.extensions_mut().insert(principal);
    }
    Ok(())
}

/// The `404` for a request naming a legacy session that another caller opened.
fn owner_check<M: Owners>(
    sessions: &M,
    headers: &HeaderMap,
    principal: Option<&Principal>,
) -> Result<(), Box<Response>> {
    let session = headers.get("mcp-session-id").and_then(|v| v.to_str().ok());
    match session {
        Some(id) if !sessions.admits(id, principal) => {
            tracing::warn!(
                session = id,
                "a request named a session another caller opened: answered 404"
            );
            Err(Box::new(sessions::not_owner()))
        }
        _ => Ok(()),
    }
}

fn text(status: StatusCode, body: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// RFC 9112 §3.2: a request with more than one `Host` field line, or an HTTP/1.1 request with
/// none, gets 400.
fn host_problem(request: &Request) -> Option<&'static str> {
    let mut hosts = request.headers().get_all(header::HOST).iter();
    let first = hosts.next();
    if hosts.next().is_some() {
        return Some("Bad Request: more than one Host header");
    }
    if first.is_none() && request.version() == Version::HTTP_11 {
        return Some("Bad Request: missing Host header");
    }
    None
}

/// Replaces `Accept` by `needed` (one or two media types, `", "`-separated) when its ranges
/// cover every one of them but rmcp's literal match would not: rmcp then sees the types it
/// looks for. A header naming the types literally (every client this serves) is left alone
/// after one scan.
pub(crate) fn widen_accept(headers: &mut HeaderMap, needed: &'static str) {
    let mut wanted = needed.split(", ");
    let wanted = [
        wanted.next().unwrap_or_default(),
        wanted.next().unwrap_or_default(),
    ];
    // Per wanted type: named literally, covered by a range.
    let mut literal = [wanted[0].is_empty(), wanted[1].is_empty()];
    let mut covered = literal;
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else { continue };
        for entry in value.split(',') {
            let mut parts = entry.split(';');
            let essence = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.split_once('=').is_some_and(|(name, q)| {
                    name.trim().eq_ignore_ascii_case("q") && is_zero_weight(q.trim())
                })
            });
            if refused {
                continue;
            }
            for (i, wanted) in wanted.iter().enumerate() {
                if wanted.is_empty() {
                    continue;
                }
                let range = wanted.split('/').next().unwrap_or_default();
                if essence.eq_ignore_ascii_case(wanted) {
                    literal[i] = true;
                } else if essence == "*/*"
                    || essence
                        .strip_suffix("/*")
                        .is_some_and(|t| t.eq_ignore_ascii_case(range))
                {
                    covered[i] = true;
                }
            }
        }
    }
    let all_literal = literal[0] && literal[1];
    if !all_literal && (literal[0] || covered[0]) && (literal[1] || covered[1]) {
        headers.insert(header::ACCEPT, HeaderValue::from_static(needed));
    }
}

/// `q=0`, `q=0.0`, ... (RFC 9110 §12.4.2): the range is refused.
pub(crate) fn is_zero_weight(q: &str) -> bool {
    let (whole, fraction) = q.split_once('.').unwrap_or((q, ""));
    whole == "0" && fraction.len() <= 3 && fraction.bytes().all(|b| b == b'0')
}

/// Whether the request says its body is JSON (as rmcp checks it).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// How much of an oversized body is read (and dropped) before the `413`, at most: a client
/// that sends its whole body before reading the answer then gets it instead of a reset (the
/// kernel resets a connection closed with unread data).
const DRAIN_MAX: usize = 16 * 1024 * 1024;

/// How long reading the rest of an oversized body may take, at most.
const DRAIN_TIME: Duration = Duration::from_secs(5);

/// The next data frame of `body` (`None` at its end); trailers are skipped.
async fn next_data(body: &mut Body) -> Option<Result<Bytes, axum::Error>> {
    loop {
        let frame = std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await?;
        match frame.map(|frame| frame.into_data()) {
            Ok(Ok(data)) => return Some(Ok(data)),
            Ok(Err(_)) => continue,
            Err(e) => return Some(Err(e)),
        }
    }
}

/// The body, at most `max` bytes (else `413`).
async fn collect(mut body: Body, max: usize) -> Result<Bytes, Response> {
    let mut first: Option<Bytes> = None;
    let mut rest: Vec<u8> = Vec::new();
    while let Some(data) = next_data(&mut body).await {
        let data = data.map_err(|e| {
            (
                StatusCode::BAD_REQUEST,
                format!("Bad Request: cannot read the request body: {e}"),
            )
                .into_response()
        })?;
        let so_far = first.as_ref().map_or(0, Bytes::len) + rest.len();
        if so_far + data.len() > max {
            drain(body).await;
            let mut response = (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Payload Too Large: request body exceeds {max} bytes"),
            )
                .into_response();
            // The connection cannot carry another request (the rest of the body may still
            // be arriving): the client is told, and hyper closes it after the answer.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return Err(response);
        }
        match &first {
            None => first = Some(data),
            Some(first) => {
                if rest.is_empty() {
                    rest.extend_from_slice(first);
                }
                rest.extend_from_slice(&data);
            }
        }
    }
    Ok(if rest.is_empty() {
        first.unwrap_or_default()
    } else {
        Bytes::from(rest)
    })
}

/// Reads and drops what remains of `body`, at most [`DRAIN_MAX`] bytes for at most
/// [`DRAIN_TIME`].
async fn drain(mut body: Body) {
    let read = async {
        let mut drained = 0;
        while let Some(Ok(data)) = next_data(&mut body).await {
            drained += data.len();
            if drained > DRAIN_MAX {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, read).await;
}

/// The HTTP status of a 2026-07-28 answer that is the JSON-RPC error `code` (the Streamable
/// HTTP transport's table; the Python SDK's `ERROR_CODE_HTTP_STATUS`): `-32601` is `404`, the
/// request errors are `400`, everything else (`-32603` included) stays `200`.
pub(crate) fn error_status(code: ErrorCode) -> StatusCode {
    match code.0 {
        -32601 => StatusCode::NOT_FOUND,
        -32700 | -32600 | -32602 | -32020 | -32021 | -32022 => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// The `error.code` of a JSON-RPC error response as rmcp writes it
/// (`{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,…`), or `None` for anything else, a
/// result among them. Only the bytes up to the code are read: a result is told apart after its
/// id.
pub(crate) fn error_code(body: &[u8]) -> Option<ErrorCode> {
    let rest = body.strip_prefix(br#"{"jsonrpc":"2.0","id":"#)?;
    // The id: a JSON string (no unescaped quote inside) or a number.
    let after_id = if let Some(string) = rest.strip_prefix(b"\"") {
        let mut escaped = false;
        let end = string.iter().position(|&b| {
            let closes = b == b'"' && !escaped;
            escaped = b == b'\\' && !escaped;
            closes
        })?;
        &string[end + 1..]
    } else {
        let end = rest
            .iter()
            .position(|b| !(b.is_ascii_digit() || *b == b'-'))?;
        &rest[end..]
    };
    let code = after_id.strip_prefix(br#","error":{"code":"#)?;
    let end = code
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b'-'))?;
    let code = std::str::from_utf8(&code[..end]).ok()?.parse().ok()?;
    Some(ErrorCode(code))
}

/// A JSON-RPC error as the HTTP answer: 404 for `-32601`, else 400 (the statuses the
/// Streamable HTTP transport gives these codes).
fn rejection_response(rejection: &Rejection) -> Response {
    let status = match error_status(rejection.error.code) {
        StatusCode::OK => StatusCode::BAD_REQUEST,
        status => status,
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        rejection.to_json(),
    )
        .into_response()
}

/// What a POST is served with besides rmcp's service and the request.
struct Post<'a, M> {
    capabilities: Capabilities,
    scope: &'a Scope,
    max_body: usize,
    guard: Option<Arc<Guard>>,
    sessions: Arc<M>,
    shutdown: &'a Shutdown,
    /// The connection's probe (the front's own connections only).
    liveness: Option<Liveness>,
}

async fn post<S, M: Owners>(
    mut mcp: S,
    request: Request,
    context: Post<'_, M>,
) -> Result<Response, Infallible>
where
    S: tower_service::Service<Request, Error = Infallible>,
    S::Response: IntoResponse,
{
    let Post {
        capabilities,
        scope,
        max_body,
        guard,
        sessions,
        shutdown,
        liveness,
    } = context;
    let (mut parts, body) = request.into_parts();
    let json = is_json(&parts.headers);
    // The token is verified first; whether it suffices depends on the body's operation.
    let credential = match &guard {
        Some(guard) => Some(guard.authenticate(&parts.headers).await),
        None => None,
    };
    let mut bytes = match collect(body, max_body).await {
        Ok(bytes) => bytes,
        // A request that fails authorization is told so rather than that it is too large.
        Err(response) => {
            return Ok(match (&guard, credential) {
                (Some(guard), Some(credential)) => match guard.decide(credential, &[]) {
                    Ok(_) => response,
                    Err(refusal) => *refusal,
                },
                _ => response,
            });
        }
    };
    // While draining, only what continues a call in flight (and the lists, `ping`) is served.
    if shutdown.is_draining() && !jsonrpc::served_while_draining(&bytes) {
        tracing::debug!("draining: a request for new work refused");
        return Ok(sessions::unavailable(jsonrpc::request_id(&bytes), DRAINING));
    }
    let mut principal: Option<Arc<Principal>> = None;
    if let (Some(guard), Some(credential)) = (&guard, credential) {
        let operation = guard.read(&bytes);
        principal = match guard.decide(credential, &operation.scopes) {
            Ok(principal) => principal,
            Err(refusal) => return Ok(*refusal),
        };
        if let Err(refusal) = owner_check(&*sessions, &parts.headers, principal.as_deref()) {
            return Ok(*refusal);
        }
        // A listener is not told of the resources it may not read.
        let (withheld, scopes) = guard.withheld(principal.as_deref(), &operation.listened);
        if !withheld.is_empty() {
            let Some(narrowed) = narrow_listen(&bytes, &withheld) else {
                return Ok(guard.refusal(principal.as_deref(), &scopes));
            };
            tracing::debug!(
                ?withheld,
                "subscriptions/listen: resources withheld for lack of scope"
            );
            parts
                .headers
                .insert(header::CONTENT_LENGTH, HeaderValue::from(narrowed.len()));
            bytes = narrowed;
        }
        if let Some(principal) = &principal {
            parts.extensions.insert(Arc::clone(principal));
        }
    }
    // A new legacy session at the cap: refused here, before rmcp builds a session (its worker,
    // its handshake) only to close it, and logs an error. The session manager still refuses
    // the sessions that pass this check together and find the cap reached (`sessions.rs`).
    // Only a plain `initialize` (no `MCP-Protocol-Version`: rmcp checks one against the body
    // first, and answers a mismatch 400).
    if !parts.headers.contains_key("mcp-session-id")
        && !parts.headers.contains_key("mcp-protocol-version")
        && sessions.at_cap()
        && jsonrpc::is_initialize(&bytes)
        && sessions.full().await
    {
        tracing::debug!("new session refused: --max-sessions reached");
        return Ok(sessions::too_many_sessions(jsonrpc::request_id(&bytes)));
    }
    // For `list_params_error` and the numbers as sent (rmcp hands the request's parts, not its
    // body, to the handler).
    parts.extensions.insert(Raw(bytes.clone()));
    // A 2026-07-28 request is cancelled by the client closing it: watched while it runs.
    let liveness = liveness.filter(|_| is_modern_request(&parts.headers));
    // A `subscriptions/listen` stream lasts until the trigger ends it: it holds no drain.
    let listens = parts
        .headers
        .get("mcp-method")
        .is_some_and(|method| method == "subscriptions/listen");
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    // The drain does not end while this answer is built (see `Shutdown::answering`).
    let answering = shutdown.answering();
    let response = match &liveness {
        None => mcp.call(request).await?.into_response(),
        Some(liveness) => {
            tokio::select! {
                response = mcp.call(request) => response?.into_response(),
                () = liveness.closed_after(PROBE_DELAY) => {
                    // Dropping rmcp's future cancels the handler (rmcp's disconnect guard).
                    tracing::debug!("a 2026-07-28 request's client closed it: cancelled");
                    return Ok(client_gone());
                }
            }
        }
    };
    // An SSE answer (a legacy call's, or a 2026-07-28 one whose handler sent progress or a
    // log first) holds the drain until it ends; on 2026-07-28 it ends when the client goes:
    // rmcp cancels the handler when its stream is dropped.
    let response = if is_event_stream(response.headers()) {
        let answering = (!listens).then_some(answering);
        // A listen stream lasts no longer than its token.
        let lifetime = guard
            .as_deref()
            .zip(principal.as_deref())
            .filter(|_| listens)
            .and_then(|(guard, principal)| guard.stream_lifetime(principal));
        response.map(|body| Body::new(Watched::new(body, liveness, answering, lifetime)))
    } else {
        drop(answering);
        response
    };
    // rmcp's rejections of bodies it could not decode: 415 (its decoding failed) and 400
    // (`initialize` with bad params decodes as a custom request, which has no session). Its
    // JSON-RPC errors (JSON bodies) and other statuses stand.
    let status = response.status();
    if status.is_client_error() && is_json(response.headers()) {
        return Ok(with_null_id(response).await);
    }
    // A JSON answer at 200 is a 2026-07-28 one (legacy sessions answer on SSE streams).
    if status == StatusCode::OK && is_json(response.headers()) {
        return Ok(with_error_status(response).await);
    }
    let rejected =
        status == StatusCode::UNSUPPORTED_MEDIA_TYPE || status == StatusCode::BAD_REQUEST;
    if !json || !rejected {
        return Ok(response);
    }
    Ok(
        match jsonrpc::diagnose(&bytes, capabilities, &scope.policy(), principal.as_deref()) {
            Verdict::Reject(rejection) => rejection_response(&rejection),
            Verdict::Undetermined(rejection) if status == StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                rejection_response(&rejection)
            }
            Verdict::Drop(what) if status == StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                tracing::debug!("dropped {what}");
                StatusCode::ACCEPTED.into_response()
            }
            _ => missing_session(response).await,
        },
    )
}

/// rmcp's `400 Bad Request: Session ID is required` (text) for a legacy request or
/// notification without `Mcp-Session-Id` that is not `initialize`, answered as the Python SDK
/// answers it: `400` with the JSON-RPC error `-32600 "Bad Request: Missing session ID"`,
/// `"id": null`. Any other answer is passed on.
async fn missing_session(response: Response) -> Response {
    const RMCP: &[u8] = b"Bad Request: Session ID is required";
    if response.status() != StatusCode::BAD_REQUEST {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = collect(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    if bytes != RMCP {
        return Response::from_parts(parts, Body::from(bytes));
    }
    rejection_response(&Rejection {
        id: serde_json::Value::Null,
        error: rmcp::model::ErrorData::new(
            ErrorCode::INVALID_REQUEST,
            "Bad Request: Missing session ID",
            None,
        ),
    })
}

/// A 2026-07-28 JSON answer with the status its error code has (rmcp maps only some codes and
/// answers the handler's `-32602` and `-32600` at `200`). The body is rmcp's one buffer; a
/// result is recognised by its first bytes and passed on as it is.
async fn with_error_status(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = collect(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    if let Some(code) = error_code(&bytes) {
        parts.status = error_status(code);
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// For a list request that rmcp decoded without params, over HTTP: the `-32602` its bytes get
/// from [`jsonrpc::list_params_error`] (a `cursor` that is not a string), or `None`. stdio
/// decides the same in its transport.
pub(crate) fn list_params_error(
    context: &rmcp::service::RequestContext<rmcp::RoleServer>,
) -> Option<rmcp::model::ErrorData> {
    let parts = head(context)?;
    let Raw(bytes) = parts.extensions.get::<Raw>()?;
    jsonrpc::list_params_error(bytes)
}

/// rmcp's own JSON-RPC error for a request it could not attribute (a posted response at
/// 2026-07-28, say) has no `id` member; JSON-RPC 2.0 §5 requires `"id": null`.
async fn with_null_id(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = collect(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let fixed = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(message)) if !message.contains_key("id") => {
            message.get("error").and_then(|error| {
                let mut fixed = br#"{"jsonrpc":"2.0","id":null,"error":"#.to_vec();
                serde_json::to_writer(&mut fixed, error).ok()?;
                fixed.push(b'}');
                Some(Bytes::from(fixed))
            })
        }
        _ => None,
    };
    let bytes = fixed.unwrap_or(bytes);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(bytes))
}

async fn delete<S, M>(
    mut mcp: S,
    request: Request,
    sessions: Arc<M>,
) -> Result<Response, Infallible>
where
    S: tower_service::Service<Request, Error = Infallible>,
    S::Response: IntoResponse,
    M: SessionManager,
{
    // (Authorization and the session's owner were checked by `admit`.)
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(Arc::<str>::from);
    let known = match &session {
        Some(id) => sessions.has_session(id).await.unwrap_or(true),
        None => true,
    };
    let response = mcp.call(request).await?.into_response();
    // rmcp closes an unknown session without complaint; the transport says 404 (the client
    // then knows the session is gone).
    if !known && response.status() == StatusCode::ACCEPTED {
        return Ok(text(StatusCode::NOT_FOUND, "Not Found: Session not found"));
    }
    // rmcp answers `202 Accepted`, but the session is closed by then: `204 No Content`
    // (RFC 9110 §9.3.5: enacted, nothing more to say). The Python SDK client takes only 200 or
    // 204 for a session ended ("Session termination failed: 202" otherwise).
    if response.status() == StatusCode::ACCEPTED {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    Ok(response)
}

/// What bounds the connections (`--header-read-timeout`, `--max-connections`).
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// A client must send a request's whole header within this time after the connection
    /// opens or the previous answer ends (an idle keep-alive connection too), or the
    /// connection is closed.
    pub header_read_timeout: Duration,
    /// The concurrent connections, shared by every serving thread: one permit per open
    /// connection.
    pub connections: Arc<tokio::sync::Semaphore>,
}

/// Serves the connections `listener` accepts, HTTP/1.1 by hyper, with `service`, until
/// `stopped` resolves; open connections then get a moment to finish (SSE streams would keep a
/// graceful shutdown waiting), then the server stops.
pub(crate) async fn serve_connections<S>(
    listener: std::net::TcpListener,
    service: S,
    limits: Limits,
    stopped: impl Future<Output = ()>,
) -> Result<(), String>
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send,
{
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| format!("cannot use the listening socket: {e}"))?;
    let mut http = hyper::server::conn::http1::Builder::new();
    // `half_close`: a client that shuts down its sending side after its request (RFC 9112
    // §9.6) still gets the answer; without it hyper may take the end of input for a client
    // gone and drop the request unanswered.
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .half_close(true);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut stopped = std::pin::pin!(stopped);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&limits.connections).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = &mut stopped => break,
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // A connection reset before it was accepted, or out of file descriptors:
                    // accept again (after a pause, for the latter).
                    tracing::debug!("cannot accept a connection: {e}");
                    if !matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
                    ) {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    continue;
                }
            },
            () = &mut stopped => break,
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("cannot set TCP_NODELAY: {e}");
        }
        let peer = tcp.peer_addr().ok();
        let liveness = Liveness::of(&tcp);
        let service = service.clone();
        let serve = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
            let mut service = service.clone();
            let mut request = request.map(Body::new);
            let extensions = request.extensions_mut();
            extensions.insert(Arrival {
                at: Instant::now(),
                peer,
            });
            if let Some(liveness) = &liveness {
                extensions.insert(liveness.clone());
            }
            async move {
                std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
                service.call(request).await
            }
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), serve));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended: {e}");
            }
            drop(permit);
        });
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), graceful.shutdown()).await;
    Ok(())
}

/// Whether a request is served at 2026-07-28 or later (its `MCP-Protocol-Version`, compared as
/// rmcp compares it), and without a legacy session.
fn is_modern_request(headers: &HeaderMap) -> bool {
    !headers.contains_key("mcp-session-id")
        && headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|version| version >= "2026-07-28")
}

/// Whether an answer is an SSE stream.
fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

/// The answer to a request whose client closed it (nobody reads it: the connection is gone).
fn client_gone() -> Response {
    let mut response = StatusCode::from_u16(499)
        .unwrap_or(StatusCode::BAD_REQUEST)
        .into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A connection's probe for its client closing it: a second handle on the socket (a dup of its
/// file descriptor), registered with the reactor the first time a request waits on it. It only
/// peeks, so it never takes bytes from hyper. The front takes it out of the request's
/// extensions before rmcp sees the request, so it never outlives the connection's requests (a
/// handle kept alive would keep the socket open).
#[derive(Clone)]
pub(crate) struct Liveness(Arc<Probe>);

struct Probe {
    /// The dup, until it is registered.
    socket: std::sync::Mutex<Option<std::net::TcpStream>>,
    /// The registered dup (`None`: it could not be registered; the probe never fires).
    registered: OnceLock<Option<AsyncFd<std::net::TcpStream>>>,
}

impl Liveness {
    /// The probe of `tcp`, or `None` when its descriptor cannot be duplicated (out of file
    /// descriptors, say: the connection is served without it).
    fn of(tcp: &tokio::net::TcpStream) -> Option<Self> {
        match tcp.as_fd().try_clone_to_owned() {
            Ok(fd) => Some(Liveness(Arc::new(Probe {
                socket: std::sync::Mutex::new(Some(std::net::TcpStream::from(fd))),
                registered: OnceLock::new(),
            }))),
            Err(e) => {
                tracing::debug!("no liveness probe for a connection: {e}");
                None
            }
        }
    }

    /// The registered dup (registered on the first call, on the current runtime: the one
    /// that serves the connection).
    // `AsyncFd::with_interest` is deprecated since tokio 1.53.3 (the I/O-safety contract of its
    // `unsafe` replacement, `register_with_interest`, is the caller's); this crate accepts any
    // tokio 1, and the contract holds here: the `AsyncFd` owns the dup it watches.
    #[allow(deprecated)]
    fn registered(&self) -> Option<&AsyncFd<std::net::TcpStream>> {
        self.0
            .registered
            .get_or_init(|| {
                let socket = self
                    .0
                    .socket
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .take()?;
                AsyncFd::with_interest(socket, Interest::READABLE)
                    .map_err(|e| tracing::debug!("cannot watch a connection: {e}"))
                    .ok()
            })
            .as_ref()
    }

    /// Resolves when the client closed the connection (or shut down its sending side: TCP does
    /// not tell them apart), after `delay`; never when it cannot be watched.
    pub(crate) async fn closed_after(&self, delay: Duration) {
        tokio::time::sleep(delay).await;
        self.closed().await;
    }

    /// Resolves when the client closed the connection (a FIN or a reset), never when it cannot
    /// be watched. Bytes the client sent ahead (a pipelined request) are left for hyper.
    pub(crate) async fn closed(&self) {
        let Some(fd) = self.registered() else {
            return std::future::pending().await;
        };
        loop {
            let Ok(mut ready) = fd.ready(Interest::READABLE).await else {
                return std::future::pending().await;
            };
            if ready.ready().is_read_closed() {
                return;
            }
            let mut byte = [0u8; 1];
            match fd.get_ref().peek(&mut byte) {
                Ok(0) => return,
                // Pipelined bytes: wait for more, or for the end.
                Ok(_) => ready.clear_ready(),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => ready.clear_ready(),
                Err(_) => return,
            }
        }
    }
}

/// An SSE answer's body: the drain waits for its end, with a probe it ends when the client
/// closed the connection, and a listen stream ends when the token it was opened with expires.
struct Watched {
    body: Body,
    closed: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// The end of the token of a listen stream ([`Guard::stream_lifetime`]).
    expiry: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Dropped with the body.
    _answering: Option<Answering>,
}

impl Watched {
    fn new(
        body: Body,
        liveness: Option<Liveness>,
        answering: Option<Answering>,
        lifetime: Option<Duration>,
    ) -> Self {
        Watched {
            body,
            closed: liveness.map(|liveness| {
                Box::pin(async move { liveness.closed().await })
                    as Pin<Box<dyn Future<Output = ()> + Send>>
            }),
            expiry: lifetime.map(|lifetime| Box::pin(tokio::time::sleep(lifetime))),
            _answering: answering,
        }
    }
}

/// `response` (an answer to a request that opens a listen stream: a legacy `GET`, a
/// 2026-07-28 `subscriptions/listen`), ended when the token of `principal` expires (`guard`'s
/// [`Guard::stream_lifetime`]); as it is without authorization, without a principal, for a
/// token without `exp`, or an answer that is not a stream.
fn ending_with_token(
    response: Response,
    guard: Option<&Guard>,
    principal: Option<&Principal>,
) -> Response {
    let lifetime = guard
        .zip(principal)
        .and_then(|(guard, principal)| guard.stream_lifetime(principal));
    match lifetime {
        Some(lifetime) if is_event_stream(response.headers()) => {
            response.map(|body| Body::new(Watched::new(body, None, None, Some(lifetime))))
        }
        _ => response,
    }
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, axum::Error>>> {
        if let Some(closed) = self.closed.as_mut()
            && closed.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(None);
        }
        if let Some(expiry) = self.expiry.as_mut()
            && expiry.as_mut().poll(cx).is_ready()
        {
            self.expiry = None;
            tracing::debug!("a listen stream ended: the token it was opened with expired");
            return Poll::Ready(None);
        }
        Pin::new(&mut self.body).poll_frame(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_call_streams_last_event_id_in_a_session_resumes_a_call() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut headers = HeaderMap::new();
            for (name, value) in pairs {
                headers.insert(*name, HeaderValue::from_static(value));
            }
            headers
        };
        let session = ("mcp-session-id", "0c7bb3f6-3ea0-4c47-9a3c-1e1b1ac5a2f0");
        assert!(resumes_call(&headers(&[session, ("last-event-id", "0/3")])));
        assert!(resumes_call(&headers(&[
            session,
            ("last-event-id", "12/0")
        ])));
        // The session's own stream, a new stream, no session, not rmcp's ids.
        assert!(!resumes_call(&headers(&[session, ("last-event-id", "4")])));
        assert!(!resumes_call(&headers(&[session])));
        assert!(!resumes_call(&headers(&[("last-event-id", "0/3")])));
        for id in ["/3", "0/", "a/3", "0/3/1", "0/-3", ""] {
            let mut pairs = headers(&[session]);
            pairs.insert("last-event-id", HeaderValue::from_str(id).unwrap());
            assert!(!resumes_call(&pairs), "{id:?}");
        }
    }
}
