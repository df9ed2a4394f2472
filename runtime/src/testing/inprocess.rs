//! [`InProcess`]: rmcp's Streamable HTTP client over the server's HTTP stack in the same process
//! (feature `testing`).
//!
//! rmcp's Streamable HTTP client transport is generic over the HTTP client
//! ([`StreamableHttpClient`]), but its own clients are reqwest (a socket) and Unix sockets only.
//! This one hands each request to the tower service [`RouterOptions`](crate::RouterOptions)
//! builds (the whole stack: path, `Host`/`Origin`, `Accept`, the authorization guard, sessions,
//! rmcp's service), so a test drives the real HTTP front with rmcp's real client and no socket,
//! port or process. It maps answers as rmcp's HTTP clients do (`401` and `403` with their
//! challenges, `202`/`204` accepted, `404` for a session that expired, JSON-RPC errors carried by
//! other statuses, JSON or SSE bodies), records each refusal of the front (status and
//! `WWW-Authenticate`) for the kit's [`CallError::Refused`](crate::testing::CallError), and puts
//! the kit's question log into every request's extensions.

use std::{
    borrow::Cow,
    collections::HashMap,
    convert::Infallible,
    sync::{Arc, Mutex},
};

use axum::{
    body::Body,
    http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, header},
};
use futures::{StreamExt, stream::BoxStream};
use rmcp::{
    ServerHandler,
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::streamable_http_client::{
        AuthRequiredError, InsufficientScopeError, SseError, StreamableHttpClient,
        StreamableHttpError, StreamableHttpPostResponse,
    },
};
use sse_stream::{Sse, SseStream};

use crate::{asking::log::AskLog, server::router::Service, testing::CallError};

const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";

/// The longest JSON answer read (the server's own request limit is 4 MiB).
const MAX_ANSWER: usize = 64 * 1024 * 1024;

/// A refusal of the HTTP front: status and `WWW-Authenticate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub status: u16,
    pub www_authenticate: Option<String>,
}

impl From<Refusal> for CallError {
    fn from(refusal: Refusal) -> Self {
        CallError::Refused {
            status: refusal.status,
            www_authenticate: refusal.www_authenticate,
        }
    }
}

/// The last refusal of a client's requests, shared with the kit.
#[derive(Debug, Clone, Default)]
pub(crate) struct Refusals(Arc<Mutex<Option<Refusal>>>);

impl Refusals {
    /// The last refusal, forgotten.
    pub(crate) fn take(&self) -> Option<Refusal> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }

    fn record(&self, refusal: Refusal) {
        *self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(refusal);
    }
}

/// The error of the in-process client (a request that could not be built or read).
#[derive(Debug)]
pub(crate) struct InProcessError(String);

impl std::fmt::Display for InProcessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InProcessError {}

type Failure = StreamableHttpError<InProcessError>;

fn failure(e: impl std::fmt::Display) -> Failure {
    StreamableHttpError::Client(InProcessError(e.to_string()))
}

/// rmcp's HTTP client for the server stack `Service<H>`, in process.
pub(crate) struct InProcess<H> {
    stack: Service<H>,
    log: Arc<AskLog>,
    refusals: Refusals,
}

impl<H> Clone for InProcess<H>
where
    Service<H>: Clone,
{
    fn clone(&self) -> Self {
        InProcess {
            stack: self.stack.clone(),
            log: Arc::clone(&self.log),
            refusals: self.refusals.clone(),
        }
    }
}

impl<H: ServerHandler + Clone> InProcess<H> {
    /// A client of `stack` whose requests carry `log` and whose refusals go to `refusals`.
    pub(crate) fn new(stack: Service<H>, log: Arc<AskLog>, refusals: Refusals) -> Self {
        InProcess {
            stack,
            log,
            refusals,
        }
    }

    /// One request through the stack (a clone of it, polled ready).
    async fn send(
        &self,
        method: Method,
        uri: &str,
        headers: Vec<(HeaderName, HeaderValue)>,
        body: Vec<u8>,
    ) -> Result<Response<Body>, Failure> {
        let mut builder = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::HOST, "localhost");
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        let mut request = builder.body(Body::from(body)).map_err(failure)?;
        request.extensions_mut().insert(Arc::clone(&self.log));
        let mut stack = self.stack.clone();
        let ready: Result<(), Infallible> =
            std::future::poll_fn(|cx| tower_service::Service::poll_ready(&mut stack, cx)).await;
        let Ok(()) = ready;
        let Ok(response) = tower_service::Service::call(&mut stack, request).await;
        Ok(response)
    }

    /// The headers every request carries: the bearer token, the session, the worker's own.
    fn headers(
        auth_header: Option<String>,
        session_id: Option<&str>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, Failure> {
        let mut headers = Vec::new();
        if let Some(token) = auth_header {
            let value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(failure)?;
            headers.push((header::AUTHORIZATION, value));
        }
        if let Some(id) = session_id {
            let value = HeaderValue::from_str(id).map_err(failure)?;
            headers.push((HeaderName::from_static(SESSION_ID), value));
        }
        headers.extend(custom_headers);
        Ok(headers)
    }

    /// `401` and `403` with a challenge as rmcp's errors, recorded as refusals.
    fn challenge(&self, response: &Response<Body>) -> Result<(), Failure> {
        let status = response.status();
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(());
        }
        self.refusals.record(Refusal {
            status: status.as_u16(),
            www_authenticate: challenge.clone(),
        });
        match (status, challenge) {
            (StatusCode::UNAUTHORIZED, Some(challenge)) => Err(StreamableHttpError::AuthRequired(
                AuthRequiredError::new(challenge),
            )),
            (StatusCode::FORBIDDEN, Some(challenge)) => {
                let scope = scope_of(&challenge);
                Err(StreamableHttpError::InsufficientScope(
                    InsufficientScopeError::new(challenge, scope),
                ))
            }
            _ => Ok(()),
        }
    }
}

/// The `scope="..."` parameter of a challenge.
fn scope_of(challenge: &str) -> Option<String> {
    let start = challenge.find("scope=\"")? + "scope=\"".len();
    let end = challenge[start..].find('"')?;
    Some(challenge[start..start + end].to_string())
}

fn content_type(response: &Response<Body>) -> Option<String> {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

async fn read_body(response: Response<Body>) -> Result<axum::body::Bytes, Failure> {
    axum::body::to_bytes(response.into_body(), MAX_ANSWER)
        .await
        .map_err(failure)
}

fn sse(response: Response<Body>) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(response.into_body().into_data_stream()).boxed()
}

impl<H: ServerHandler + Clone> StreamableHttpClient for InProcess<H> {
    type Error = InProcessError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let body = serde_json::to_vec(&message)?;
        let mut headers = Self::headers(auth_header, session_id.as_deref(), custom_headers)?;
        headers.push((header::CONTENT_TYPE, HeaderValue::from_static(JSON)));
        headers.push((
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream, application/json"),
        ));
        let response = self.send(Method::POST, &uri, headers, body).await?;
        self.challenge(&response)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let kind = content_type(&response);
        let session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let is_json = kind.as_deref().is_some_and(|k| k.starts_with(JSON));
        if !status.is_success() {
            let www_authenticate = response
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let body = read_body(response).await?;
            // A JSON-RPC error at another status (the 2026-07-28 table: -32602 at 400, ...) is
            // the answer; anything else is the front's refusal.
            if is_json && let Ok(message) = serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                return Ok(StreamableHttpPostResponse::Json(message, session));
            }
            self.refusals.record(Refusal {
                status: status.as_u16(),
                www_authenticate,
            });
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {}", String::from_utf8_lossy(&body)),
            )));
        }
        match kind {
            Some(k) if k.starts_with(EVENT_STREAM) => {
                Ok(StreamableHttpPostResponse::Sse(sse(response), session))
            }
            Some(k) if k.starts_with(JSON) => {
                let body = read_body(response).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(message) => Ok(StreamableHttpPostResponse::Json(message, session)),
                    // An empty `200` to a notification or response.
                    Err(_) if !matches!(message, ClientJsonRpcMessage::Request(_)) => {
                        Ok(StreamableHttpPostResponse::Accepted)
                    }
                    Err(e) => Err(e.into()),
                }
            }
            _ if !matches!(message, ClientJsonRpcMessage::Request(_)) => {
                Ok(StreamableHttpPostResponse::Accepted)
            }
            other => Err(StreamableHttpError::UnexpectedContentType(other)),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let headers = Self::headers(auth_header, Some(&session_id), custom_headers)?;
        let response = self.send(Method::DELETE, &uri, headers, Vec::new()).await?;
        let status = response.status();
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
            format!("DELETE answered {status}"),
        )))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        let mut headers = Self::headers(auth_header, session_id.as_deref(), custom_headers)?;
        headers.push((header::ACCEPT, HeaderValue::from_static(EVENT_STREAM)));
        if let Some(id) = last_event_id {
            let value = HeaderValue::from_str(&id).map_err(failure)?;
            headers.push((HeaderName::from_static(LAST_EVENT_ID), value));
        }
        let response = self.send(Method::GET, &uri, headers, Vec::new()).await?;
        self.challenge(&response)?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if !status.is_success() {
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("GET answered {status}"),
            )));
        }
        match content_type(&response) {
            Some(k) if k.starts_with(EVENT_STREAM) => Ok(sse(response)),
            other => Err(StreamableHttpError::UnexpectedContentType(other)),
        }
    }
}
