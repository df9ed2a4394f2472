//! The HTTP front: the tower service in front of rmcp's Streamable HTTP service. It owns what
//! RFC 9110/9112, JSON-RPC 2.0 and the Streamable HTTP transport require where rmcp answers
//! otherwise:
//!
//! * `/mcp` only (`404 Not Found` elsewhere; a router for this one path cost about 5 % of a
//!   request's CPU);
//! * more than one `Host` header, or none on HTTP/1.1: `400` on every path (RFC 9112 §3.2; rmcp
//!   reads the first);
//! * `Accept` ranges (`*/*`, `application/*`, `text/*`, RFC 9110 §12.5.1) accepted as the media
//!   types they cover (rmcp matches the literal types only; the Python SDK takes the ranges);
//! * a POST body rmcp cannot decode (it answers `415` with a text body) gets the JSON-RPC error
//!   from [`super::jsonrpc`] as `400 application/json` (`404` for `-32601`), or `202` for a
//!   malformed notification or response; so does an `initialize` with bad params, which rmcp
//!   answers `400 Session ID is required`. Valid bodies are parsed by rmcp alone (the front keeps
//!   the bytes and reads them only when rmcp has rejected them);
//! * `DELETE` of a session that does not exist: `404 Not Found` (rmcp answers `202`).

use std::{convert::Infallible, pin::Pin, sync::Arc};

use axum::{
    body::{Body, Bytes, HttpBody},
    extract::Request,
    http::{HeaderMap, HeaderValue, Method, StatusCode, Version, header},
    response::{IntoResponse, Response},
};
use rmcp::{model::ErrorCode, transport::streamable_http_server::session::SessionManager};

use super::{
    jsonrpc::{self, Rejection, Verdict},
    serve::Capabilities,
};

/// The service `axum::serve` runs: this front around rmcp's service `S`, whose sessions `M`
/// holds.
pub(super) struct Front<S, M> {
    mcp: S,
    sessions: Arc<M>,
    capabilities: Capabilities,
    /// rmcp's body limit (`StreamableHttpServerConfig::max_request_body_bytes`).
    max_body: usize,
}

impl<S: Clone, M> Clone for Front<S, M> {
    fn clone(&self) -> Self {
        Front {
            mcp: self.mcp.clone(),
            sessions: Arc::clone(&self.sessions),
            capabilities: self.capabilities,
            max_body: self.max_body,
        }
    }
}

impl<S, M> Front<S, M> {
    pub fn new(mcp: S, sessions: Arc<M>, capabilities: Capabilities, max_body: usize) -> Self {
        Front {
            mcp,
            sessions,
            capabilities,
            max_body,
        }
    }
}

type Answer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl<S, M> tower_service::Service<Request> for Front<S, M>
where
    S: tower_service::Service<Request, Error = Infallible> + Clone + Send + 'static,
    S::Response: IntoResponse,
    S::Future: Send,
    M: SessionManager,
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
            return refuse(
                request,
                text(StatusCode::BAD_REQUEST, problem),
                self.max_body,
            );
        }
        if request.uri().path() != "/mcp" {
            return refuse(
                request,
                StatusCode::NOT_FOUND.into_response(),
                self.max_body,
            );
        }
        // The clone that was polled ready serves this request.
        let ready_mcp = self.mcp.clone();
        let mut mcp = std::mem::replace(&mut self.mcp, ready_mcp);
        match *request.method() {
            Method::POST => {
                widen_accept(request.headers_mut(), "application/json, text/event-stream");
                Box::pin(post(mcp, request, self.capabilities, self.max_body))
            }
            Method::DELETE => Box::pin(delete(mcp, request, Arc::clone(&self.sessions))),
            Method::GET => {
                widen_accept(request.headers_mut(), "text/event-stream");
                Box::pin(async move { Ok(mcp.call(request).await?.into_response()) })
            }
            _ => Box::pin(async move { Ok(mcp.call(request).await?.into_response()) }),
        }
    }
}

/// Answers `request` with `response` after reading (and dropping) its body, up to `max_body`
/// bytes and for at most a second: a server that closes a connection with unread request bytes
/// makes the kernel reset it, and the client may then lose the answer already sent.
fn refuse(request: Request, response: Response, max_body: usize) -> Answer {
    Box::pin(async move {
        let body = axum::body::to_bytes(request.into_body(), max_body);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), body).await;
        Ok(response)
    })
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
pub(super) fn widen_accept(headers: &mut HeaderMap, needed: &'static str) {
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
pub(super) fn is_zero_weight(q: &str) -> bool {
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

/// The body, at most `max` bytes (else rmcp's `413`).
async fn collect(mut body: Body, max: usize) -> Result<Bytes, Response> {
    let mut first: Option<Bytes> = None;
    let mut rest: Vec<u8> = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| {
            (
                StatusCode::BAD_REQUEST,
                format!("Bad Request: cannot read the request body: {e}"),
            )
                .into_response()
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let so_far = first.as_ref().map_or(0, Bytes::len) + rest.len();
        if so_far + data.len() > max {
            return Err((
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Payload Too Large: request body exceeds {max} bytes"),
            )
                .into_response());
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

/// A JSON-RPC error as the HTTP answer: 404 for `-32601`, else 400 (the statuses the
/// Streamable HTTP transport gives these codes).
fn rejection_response(rejection: &Rejection) -> Response {
    let status = if rejection.error.code == ErrorCode::METHOD_NOT_FOUND {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::BAD_REQUEST
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        rejection.to_json(),
    )
        .into_response()
}

async fn post<S>(
    mut mcp: S,
    request: Request,
    capabilities: Capabilities,
    max_body: usize,
) -> Result<Response, Infallible>
where
    S: tower_service::Service<Request, Error = Infallible>,
    S::Response: IntoResponse,
{
    let (parts, body) = request.into_parts();
    let json = is_json(&parts.headers);
    let bytes = match collect(body, max_body).await {
        Ok(bytes) => bytes,
        Err(response) => return Ok(response),
    };
    let response = mcp
        .call(Request::from_parts(parts, Body::from(bytes.clone())))
        .await?
        .into_response();
    // rmcp's rejections of bodies it could not decode: 415 (its decoding failed) and 400
    // (`initialize` with bad params decodes as a custom request, which has no session). Its
    // JSON-RPC errors (JSON bodies) and other statuses stand.
    let status = response.status();
    if status.is_client_error() && is_json(response.headers()) {
        return Ok(with_null_id(response).await);
    }
    let rejected =
        status == StatusCode::UNSUPPORTED_MEDIA_TYPE || status == StatusCode::BAD_REQUEST;
    if !json || !rejected {
        return Ok(response);
    }
    Ok(match jsonrpc::diagnose(&bytes, capabilities) {
        Verdict::Reject(rejection) => rejection_response(&rejection),
        Verdict::Undetermined(rejection) if status == StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            rejection_response(&rejection)
        }
        Verdict::Drop(what) if status == StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            tracing::debug!("dropped {what}");
            StatusCode::ACCEPTED.into_response()
        }
        _ => response,
    })
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
    Ok(response)
}
