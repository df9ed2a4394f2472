//! Session lifetimes: legacy Streamable HTTP sessions (`Mcp-Session-Id`, 2025-11-25 and earlier)
//! expire when idle and are capped ([`Sessions`], [`Admission`]); a stdio session ends promptly
//! when stdin closes ([`watch_eof`], [`after_eof`]).
//!
//! [`Sessions`] is rmcp's `SessionManager` around its `LocalSessionManager`, which keeps doing
//! the sessions' work (workers, streams, routing). A thin wrapper rather than rmcp's own
//! settings, because rmcp 3.11 has no cap at all, and its idle timeout
//! (`SessionConfig::keep_alive`, switched off here) counts only messages through the session
//! worker: a client that keeps a GET stream open and hears nothing for the timeout would lose
//! its session under it. Here a session is idle when no request has arrived for the timeout
//! *and* none of its streams (GET, or a POST's response stream) is open; a stream stays open as
//! long as the client stays connected (a dropped connection ends it at the latest at the next
//! SSE keep-alive ping, every 15 s). An expired session is closed: a request naming it gets 404
//! (the client then re-initializes), and its change-notification registration goes with it.
//!
//! A new session beyond the cap (`--max-sessions`) is refused with HTTP 503, `Retry-After` and a JSON-RPC
//! error (see [`too_many_sessions`]); existing sessions are not affected. The HTTP front
//! refuses an `initialize` at the cap itself ([`Sessions::full`]), before rmcp sees it: rmcp
//! would build the session (its worker, its handshake) only for it to be closed, and log an
//! error, per request of a flood. The `initialize`s that pass that check together and find
//! the cap reached here are refused by the session manager: rmcp answers any session-manager
//! error with a plain-text 500, so the refusal is recorded in a task-local slot that
//! [`Admission`] (in front of rmcp's service) turns into that 503.
//!
//! With authorization configured, a session belongs to the caller that opened it (its
//! [`Principal::binding`], or anonymous): [`Admission`] hands the `initialize` request's
//! principal to [`Sessions::create_session`] through the same task-local slot, and the HTTP
//! front asks [`Sessions::admits`] before rmcp sees any later request naming the session: another
//! owner's request gets `404` as if the session did not exist ([`not_owner`]; the Python SDK's
//! answer). A fresh token of the same caller binds alike and keeps the session.
//!
//! Behind a load balancer, session ids name their replica: with `--replica r1`
//! ([`RouterOptions::replica`](crate::RouterOptions::replica)) every id is `r1.<uuid v4>`, so
//! a proxy can send each request of a session to the replica that holds it by the id's prefix
//! (the crate README's nginx `map`). Without a replica the id is a bare uuid, as rmcp makes it.
//! A session lives only on the replica that created it: a request naming a session this
//! replica does not hold gets `404` (rmcp for GET and POST, the front for DELETE), whatever
//! replica the id names, and the client initializes again.

use std::{
    cell::Cell,
    collections::{HashMap, HashSet},
    convert::Infallible,
    pin::Pin,
    sync::{
        Arc, LazyLock, Mutex, OnceLock, Weak,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::{
    extract::Request,
    http::{HeaderValue, Method, StatusCode, header},
    response::{IntoResponse, Response},
};
use futures::{FutureExt, Stream, StreamExt, TryFutureExt, future::Either};
use rmcp::transport::{WorkerTransport, common::server_side_http};
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage, ServerResult},
    transport::streamable_http_server::{
        SessionId, SessionManager,
        session::{
            ServerSseMessage,
            local::{
                LocalSessionManager, LocalSessionManagerError, SessionConfig, create_local_session,
            },
        },
    },
};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, ReadBuf};

use crate::{authorization::principal::Principal, notify, operations::telemetry::SessionClock};

/// `--max-sessions` when not given. An idle initialized session costs about 69 KiB of resident
/// memory (release build of the bookshop example with mimalloc, see `runtime/README.md`), so
/// 3,500 of them stay within about 240 MiB (256 MiB with some margin).
pub(crate) const DEFAULT_MAX_SESSIONS: u32 = 3500;

/// `--session-idle-timeout` when not given (its text is the command line's default, `30m`).
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// `Retry-After` (seconds) of the 503 that refuses a session beyond the cap.
const RETRY_AFTER_SECS: u32 = 5;

/// The JSON-RPC error code of that refusal (implementation-defined server error range).
const TOO_MANY_SESSIONS: i32 = -32000;

/// Capacity of each of rmcp's per-session message channels (rmcp's default). The idle cost does
/// not depend on it (measured: 1 and 16 cost the same; tokio allocates a channel's first block
/// of 32 slots when the channel is made); it bounds how many messages one session may have
/// queued towards a slow reader.
const CHANNEL_CAPACITY: usize = 16;

/// The limits of the sessions ([`RouterOptions`](crate::RouterOptions); `--session-idle-timeout` and
/// `--max-sessions` on the command line).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// `--session-idle-timeout`.
    pub idle_timeout: Duration,
    /// `--max-sessions`.
    pub max_sessions: usize,
}

/// Milliseconds since the first use of this clock (monotonic).
fn now_ms() -> u64 {
    static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
    u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// When a session was last used, and how many of its streams are open.
#[derive(Debug)]
struct Activity {
    /// [`now_ms`] of the last request, stream item or stream end.
    last: AtomicU64,
    /// Open streams (GET, or a POST's response stream).
    streams: AtomicUsize,
    /// Who opened the session ([`Principal::binding`]; `None`: anonymous).
    owner: Option<String>,
    /// Since when it is open (`mcp.server.session.duration`).
    clock: SessionClock,
    /// The protocol version its `initialize` negotiated.
    version: OnceLock<String>,
}

impl Activity {
    fn new(owner: Option<String>) -> Self {
        Activity {
            last: AtomicU64::new(now_ms()),
            streams: AtomicUsize::new(0),
            owner,
            clock: SessionClock::session_opened(),
            version: OnceLock::new(),
        }
    }

    /// Records the session's duration (once: it has just left the table).
    fn ended(&self) {
        self.clock
            .closed(self.version.get().map(String::as_str), "tcp", None);
    }

    fn touch(&self) {
        self.last.store(now_ms(), Ordering::Relaxed);
    }

    fn is_idle(&self, timeout: Duration, now: u64) -> bool {
        let timeout = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self.streams.load(Ordering::Acquire) == 0
            && now.saturating_sub(self.last.load(Ordering::Relaxed)) >= timeout
    }
}

/// Counts one open stream for its session while it lives.
struct StreamGuard(Arc<Activity>);

impl StreamGuard {
    fn open(activity: Arc<Activity>) -> Self {
        activity.streams.fetch_add(1, Ordering::AcqRel);
        activity.touch();
        StreamGuard(activity)
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        // Idle time counts from the end of the last stream.
        self.0.touch();
        self.0.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Why [`Sessions`] failed an operation.
#[derive(Debug)]
pub(crate) enum SessionsError {
    /// rmcp's session manager failed.
    Local(LocalSessionManagerError),
    /// A new session beyond `--max-sessions` (answered 503 by [`Admission`]).
    TooMany { max: usize },
}

impl std::fmt::Display for SessionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionsError::Local(e) => e.fmt(f),
            SessionsError::TooMany { max } => write!(
                f,
                "too many sessions: {max} are open (--max-sessions); new session refused with 503"
            ),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<LocalSessionManagerError> for SessionsError {
    fn from(e: LocalSessionManagerError) -> Self {
        SessionsError::Local(e)
    }
}

/// The legacy Streamable HTTP sessions: rmcp's `LocalSessionManager` with an idle timeout that
/// respects open streams and a cap on their number (see the module documentation).
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    limits: Limits,
    /// The admitted sessions (at most `limits.max_sessions`).
    table: Mutex<HashMap<SessionId, Arc<Activity>>>,
    /// Sessions created beyond the cap, refused when their `initialize` arrives.
    refused: Mutex<HashSet<SessionId>>,
    /// The replica's name, the prefix of every session id (`None`: bare uuids).
    replica: Option<Arc<str>>,
}

impl Sessions {
    /// The session manager, with a task (on the current runtime) that closes expired sessions;
    /// its session ids start with `replica` and a dot when one is given (a name
    /// [`valid_replica`] accepts).
    pub(crate) fn new(limits: Limits, replica: Option<Arc<str>>) -> Arc<Self> {
        let mut config = SessionConfig::default();
        config.keep_alive = None;
        config.channel_capacity = CHANNEL_CAPACITY;
        let mut inner = LocalSessionManager::default();
        inner.session_config = config;
        let sessions = Arc::new(Sessions {
            inner,
            limits,
            table: Mutex::default(),
            refused: Mutex::default(),
            replica,
        });
        tokio::spawn(reap(Arc::downgrade(&sessions)));
        sessions
    }

    /// The admitted session `id`, marked as used; `None` when unknown.
    fn touch(&self, id: &SessionId) -> Option<Arc<Activity>> {
        let activity = lock(&self.table).get(id).cloned()?;
        activity.touch();
        Some(activity)
    }

    /// Whether `principal` may use the session `id`: `false` only for a session this manager
    /// holds that another owner opened (an unknown session is rmcp's to answer).
    pub(crate) fn admits(&self, id: &str, principal: Option<&Principal>) -> bool {
        let Some(activity) = lock(&self.table).get(id).cloned() else {
            return true;
        };
        match (&activity.owner, principal) {
            (None, None) => true,
            (Some(owner), Some(principal)) => *owner == principal.binding(),
            _ => false,
        }
    }

    /// Whether `--max-sessions` sessions are open (expired ones not yet closed included).
    pub(crate) fn at_cap(&self) -> bool {
        lock(&self.table).len() >= self.limits.max_sessions
    }

    /// Whether `--max-sessions` sessions are open once the expired ones are closed: a new
    /// session would be refused.
    pub(crate) async fn full(&self) -> bool {
        if !self.at_cap() {
            return false;
        }
        self.close_expired().await;
        self.at_cap()
    }

    /// Removes the sessions idle for longer than the timeout from the table and closes them.
    async fn close_expired(&self) {
        let now = now_ms();
        let expired: Vec<SessionId> = {
            let mut table = lock(&self.table);
            let expired: Vec<SessionId> = table
                .iter()
                .filter(|(_, activity)| activity.is_idle(self.limits.idle_timeout, now))
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                if let Some(activity) = table.remove(id) {
                    activity.ended();
                }
            }
            expired
        };
        for id in expired {
            self.expire(&id).await;
        }
    }

    /// Closes a session already removed from the table because it was idle.
    async fn expire(&self, id: &SessionId) {
        tracing::debug!(session = %id, timeout = ?self.limits.idle_timeout, "session idle: closed");
        if let Err(e) = self.inner.close_session(id).await {
            tracing::warn!(session = %id, "cannot close an idle session: {e}");
        }
    }
}

/// A new session id: `<replica>.<uuid v4>` with a replica, else a bare uuid v4 (rmcp's).
fn mint_id(replica: Option<&str>) -> SessionId {
    match replica {
        Some(name) => format!("{name}.{}", server_side_http::session_id()).into(),
        None => server_side_http::session_id(),
    }
}

/// Checks a replica name (`--replica`, [`RouterOptions::replica`](crate::RouterOptions::replica)):
/// 1 to 32 characters, lowercase ASCII letters, digits and `-`, not starting with `-`. Names go
/// into the `Mcp-Session-Id` header and into a proxy's regular expressions, so no dots and no
/// uppercase.
pub(crate) fn valid_replica(name: &str) -> Result<(), String> {
    let bytes = name.as_bytes();
    let allowed = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
    if (1..=32).contains(&bytes.len()) && bytes[0] != b'-' && bytes.iter().all(allowed) {
        Ok(())
    } else {
        Err(format!(
            "invalid replica name '{name}': use 1 to 32 of a-z, 0-9 and '-', starting with a letter or digit"
        ))
    }
}

/// Closes expired sessions until `sessions` is dropped; checks every half timeout (between
/// 0.1 s and 60 s), so a session is closed at most that long after it expired. (A request
/// naming an expired session finds it expired at once, see `has_session`.)
async fn reap(sessions: Weak<Sessions>) {
    let period = match sessions.upgrade() {
        Some(sessions) => (sessions.limits.idle_timeout / 2)
            .clamp(Duration::from_millis(100), Duration::from_secs(60)),
        None => return,
    };
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        sessions.close_expired().await;
    }
}

/// A stream that counts as activity of its session while open and at each message.
fn tracked<S: Stream>(
    stream: S,
    activity: Option<Arc<Activity>>,
) -> futures::stream::Inspect<S, impl FnMut(&S::Item)> {
    let guard = activity.map(StreamGuard::open);
    stream.inspect(move |_| {
        if let Some(guard) = &guard {
            guard.0.touch();
        }
    })
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        if lock(&self.table).len() >= self.limits.max_sessions {
            // Full: sessions that expired since the last sweep make room first.
            self.close_expired().await;
        }
        // rmcp's `LocalSessionManager::create_session`, with our id (the manager never has an
        // event store, so `create_local_session` is exactly what it would run).
        let id = mint_id(self.replica.as_deref());
        let (handle, worker) = create_local_session(id.clone(), self.inner.session_config.clone());
        self.inner.sessions.write().await.insert(id.clone(), handle);
        let transport = WorkerTransport::spawn(worker);
        // The caller of the `initialize` that creates it (set by `Admission`).
        let owner = ADMITTING
            .try_with(|slot| slot.owner.as_deref().map(Principal::binding))
            .ok()
            .flatten();
        let mut table = lock(&self.table);
        if table.len() >= self.limits.max_sessions {
            lock(&self.refused).insert(id.clone());
        } else {
            table.insert(id.clone(), Arc::new(Activity::new(owner)));
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if !lock(&self.refused).remove(id) {
            let answer = self.inner.initialize_session(id, message).await?;
            if let ServerJsonRpcMessage::Response(response) = &answer
                && let ServerResult::InitializeResult(result) = &response.result
                && let Some(activity) = lock(&self.table).get(id)
            {
                let _ = activity.version.set(result.protocol_version.to_string());
            }
            return Ok(answer);
        }
        let request_id = match &message {
            ClientJsonRpcMessage::Request(request) => {
                serde_json::to_value(&request.id).unwrap_or(Value::Null)
            }
            _ => Value::Null,
        };
        // Let the session's worker finish its handshake, so it ends as a closed session (not
        // with an error), then close it: the client never learns its id.
        let _ = self.inner.initialize_session(id, message).await;
        let _ = self.inner.close_session(id).await;
        // (rmcp logs the error below at ERROR level.)
        tracing::debug!(
            max = self.limits.max_sessions,
            "new session refused: --max-sessions reached"
        );
        let _ = ADMITTING.try_with(|slot| slot.refused.set(Some(request_id)));
        Err(SessionsError::TooMany {
            max: self.limits.max_sessions,
        })
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        let Some(activity) = lock(&self.table).get(id).cloned() else {
            return Ok(false);
        };
        if activity.is_idle(self.limits.idle_timeout, now_ms()) {
            // Expired, though not yet collected: close it now (404 for this request).
            let removed = lock(&self.table).remove(id);
            if let Some(activity) = removed {
                activity.ended();
                self.expire(id).await;
            }
            return Ok(false);
        }
        activity.touch();
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let removed = lock(&self.table).remove(id);
        if let Some(activity) = removed {
            activity.ended();
        }
        lock(&self.refused).remove(id);
        self.inner.close_session(id).await?;
        // rmcp calls this again once the session's service has ended (whatever ended it): by
        // then its peer is closed and its notification registration is dropped here.
        notify::forget_closed();
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let activity = self.touch(id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(tracked(stream, activity))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let activity = self.touch(id);
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(tracked(stream, activity))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let activity = self.touch(id);
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(tracked(stream, activity))
    }
}

/// What [`Admission`] and the session manager share while a session may be created.
pub(crate) struct Admitting {
    /// Set by [`Sessions::initialize_session`] when it refuses a session: the `initialize`
    /// request's id, for [`Admission`]'s 503.
    refused: Cell<Option<Value>>,
    /// The verified caller of the request (the HTTP front's principal), the new session's
    /// owner.
    owner: Option<Arc<Principal>>,
}

tokio::task_local! {
    static ADMITTING: Admitting;
}

/// The answer to a request naming a session another caller opened: `404` with
/// `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}`, exactly
/// as if it did not exist (the Python SDK's).
pub(crate) fn not_owner() -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": "Session not found"},
    });
    (
        StatusCode::NOT_FOUND,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response()
}

/// The HTTP answer to an `initialize` refused because `--max-sessions` sessions are open:
/// 503, `Retry-After: 5` and
/// `{"jsonrpc":"2.0","id":<id>,"error":{"code":-32000,"message":"Too many sessions; try again later"}}`.
pub(crate) fn too_many_sessions(id: Value) -> Response {
    unavailable(id, "Too many sessions; try again later")
}

/// A 503 refusal of the request `id`: `Retry-After: 5` and
/// `{"jsonrpc":"2.0","id":<id>,"error":{"code":-32000,"message":<message>}}` (too many
/// sessions, or a server that is draining).
pub(crate) fn unavailable(id: Value, message: &str) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": TOO_MANY_SESSIONS, "message": message},
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS)),
        ],
        body.to_string(),
    )
        .into_response()
}

/// rmcp's Streamable HTTP service with the 503 for refused sessions: a POST without
/// `Mcp-Session-Id` (the only request that can create a session) runs with an [`ADMITTING`]
/// slot holding its principal (the new session's owner); when the session manager refused the
/// session, rmcp's 500 is replaced by [`too_many_sessions`].
#[derive(Clone)]
pub(crate) struct Admission<S>(pub S);

type Answer<R> = fn(Result<R, Infallible>) -> Result<Response, Infallible>;

impl<S> tower_service::Service<Request> for Admission<S>
where
    S: tower_service::Service<Request, Error = Infallible>,
    S::Response: IntoResponse,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<
        tokio::task::futures::TaskLocalFuture<
            Admitting,
            futures::future::Map<S::Future, Answer<S::Response>>,
        >,
        futures::future::MapOk<S::Future, fn(S::Response) -> Response>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if request.method() == Method::POST && !request.headers().contains_key("mcp-session-id") {
            let answer: Answer<S::Response> = answer::<S::Response>;
            let admitting = Admitting {
                refused: Cell::new(None),
                owner: request.extensions().get::<Arc<Principal>>().cloned(),
            };
            Either::Left(ADMITTING.scope(admitting, self.0.call(request).map(answer)))
        } else {
            Either::Right(self.0.call(request).map_ok(IntoResponse::into_response))
        }
    }
}

/// rmcp's response, or the 503 when the session manager refused the session.
fn answer<R: IntoResponse>(response: Result<R, Infallible>) -> Result<Response, Infallible> {
    let refused = ADMITTING
        .try_with(|slot| slot.refused.take())
        .ok()
        .flatten();
    Ok(match (refused, response) {
        (Some(id), _) => too_many_sessions(id),
        (None, Ok(response)) => response.into_response(),
    })
}

/// How long requests still running when stdin closes get to answer before they are cancelled.
/// (rmcp itself waits up to 5 s, but a pending elicitation, sampling or roots request can
/// never be answered then: its answer would have come on stdin.)
const STDIN_CLOSED_GRACE: Duration = Duration::from_millis(300);

/// stdin that reports its end (EOF or a read error) to [`after_eof`].
pub(crate) struct EofSignal<R> {
    inner: R,
    closed: Option<tokio::sync::oneshot::Sender<()>>,
}

/// Wraps the stdio reader; the receiver resolves when it reaches its end.
pub(crate) fn watch_eof<R>(reader: R) -> (EofSignal<R>, tokio::sync::oneshot::Receiver<()>) {
    let (closed, receiver) = tokio::sync::oneshot::channel();
    (
        EofSignal {
            inner: reader,
            closed: Some(closed),
        },
        receiver,
    )
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.inner).poll_read(cx, buf);
        let ended = match &result {
            Poll::Ready(Ok(())) => buf.filled().len() == before && buf.remaining() > 0,
            Poll::Ready(Err(_)) => true,
            Poll::Pending => false,
        };
        if ended && let Some(closed) = this.closed.take() {
            let _ = closed.send(());
        }
        result
    }
}

/// Resolves [`STDIN_CLOSED_GRACE`] after stdin ended (never, if the reader went away first).
pub(crate) async fn after_eof(closed: tokio::sync::oneshot::Receiver<()>) {
    if closed.await.is_err() {
        return std::future::pending().await;
    }
    tokio::time::sleep(STDIN_CLOSED_GRACE).await;
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `text` is a lowercase uuid v4 (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`).
    fn is_uuid_v4(text: &str) -> bool {
        let bytes = text.as_bytes();
        bytes.len() == 36
            && bytes.iter().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => *b == b'-',
                _ => b.is_ascii_digit() || (b'a'..=b'f').contains(b),
            })
            && bytes[14] == b'4'
            && matches!(bytes[19], b'8' | b'9' | b'a' | b'b')
    }

    #[test]
    fn session_ids_name_the_replica() {
        let id = mint_id(Some("r1"));
        let uuid = id.strip_prefix("r1.").unwrap_or_else(|| panic!("{id}"));
        assert!(is_uuid_v4(uuid), "{id}");
        assert_ne!(mint_id(Some("r1")), id);
        let other = mint_id(Some("eu-west-3"));
        assert!(
            is_uuid_v4(other.strip_prefix("eu-west-3.").unwrap()),
            "{other}"
        );
    }

    #[test]
    fn without_a_replica_the_id_is_a_bare_uuid() {
        let id = mint_id(None);
        assert!(is_uuid_v4(&id), "{id}");
        assert!(!is_uuid_v4("r1.0c7bb3f6-3ea0-4c47-9a3c-1e1b1ac5a2f0"));
        assert!(!is_uuid_v4("0c7bb3f6-3ea0-1c47-9a3c-1e1b1ac5a2f0"));
    }

    /// The manager holds the sessions it mints under the replica's ids (rmcp routes by them),
    /// and holds nothing under another replica's id or a bare uuid.
    #[tokio::test]
    async fn a_replica_holds_only_the_sessions_it_created() {
        let limits = Limits {
            idle_timeout: Duration::from_secs(60),
            max_sessions: 10,
        };
        let sessions = Sessions::new(limits, Some(Arc::from("r1")));
        let (id, _transport) = sessions.create_session().await.unwrap();
        assert!(id.starts_with("r1.") && is_uuid_v4(&id[3..]), "{id}");
        assert!(sessions.has_session(&id).await.unwrap());
        assert!(sessions.inner.sessions.read().await.contains_key(&id));
        let elsewhere: SessionId = format!("r2.{}", &id[3..]).into();
        assert!(!sessions.has_session(&elsewhere).await.unwrap());
        let bare: SessionId = id[3..].into();
        assert!(!sessions.has_session(&bare).await.unwrap());
        sessions.close_session(&id).await.unwrap();
        assert!(!sessions.has_session(&id).await.unwrap());
        assert!(!sessions.inner.sessions.read().await.contains_key(&id));

        let plain = Sessions::new(limits, None);
        let (id, _transport) = plain.create_session().await.unwrap();
        assert!(is_uuid_v4(&id), "{id}");
        assert!(plain.has_session(&id).await.unwrap());
    }

    #[test]
    fn replica_names_are_short_lowercase_and_dotless() {
        for good in ["r1", "eu-west-3", "0", "a".repeat(32).as_str()] {
            assert_eq!(valid_replica(good), Ok(()), "{good}");
        }
        assert_eq!(
            valid_replica("R1"),
            Err("invalid replica name 'R1': use 1 to 32 of a-z, 0-9 and '-', starting with a letter or digit".to_string())
        );
        for bad in ["a.b", "", "-r1", "r 1", "ré", "a".repeat(33).as_str()] {
            assert!(valid_replica(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn durations_are_human_and_longer_than_zero() {
        use crate::server::serve::parse_duration;
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("1h 30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(
            parse_duration("0s"),
            Err("give a duration longer than zero".to_string())
        );
        assert_eq!(parse_duration("30m"), Ok(DEFAULT_IDLE_TIMEOUT));
        assert_eq!(
            parse_duration("soon"),
            Err("expected number at 0".to_string())
        );
    }

    #[test]
    fn a_session_with_an_open_stream_is_never_idle() {
        let activity = Arc::new(Activity::new(None));
        let timeout = Duration::from_secs(1);
        let now = activity.last.load(Ordering::Relaxed);
        assert!(!activity.is_idle(timeout, now + 999));
        assert!(activity.is_idle(timeout, now + 1000));
        let guard = StreamGuard::open(Arc::clone(&activity));
        let opened = activity.last.load(Ordering::Relaxed);
        assert!(!activity.is_idle(timeout, opened + 10_000_000));
        drop(guard);
        // The timeout restarts when the stream closes.
        let closed = activity.last.load(Ordering::Relaxed);
        assert!(!activity.is_idle(timeout, closed + 999));
        assert!(activity.is_idle(timeout, closed + 1000));
    }

    #[test]
    fn the_refusal_is_a_503_with_retry_after_and_a_json_rpc_error() {
        let response = too_many_sessions(json!(7));
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "5");
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let body = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(axum::body::to_bytes(response.into_body(), 1 << 16))
            .expect("body");
        assert_eq!(
            serde_json::from_slice::<Value>(&body).expect("JSON"),
            json!({
                "jsonrpc": "2.0",
                "id": 7,
                "error": {"code": -32000, "message": "Too many sessions; try again later"}
            })
        );
    }

    #[test]
    fn the_stdin_watch_fires_at_end_of_input_only() {
        use tokio::io::AsyncReadExt;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let (mut input, mut closed) = watch_eof(&b"line\n"[..]);
            let mut buf = [0u8; 3];
            assert_eq!(input.read(&mut buf).await.expect("read"), 3);
            assert!(closed.try_recv().is_err(), "not at the end yet");
            assert_eq!(input.read(&mut buf).await.expect("read"), 2);
            assert!(closed.try_recv().is_err(), "not at the end yet");
            assert_eq!(input.read(&mut buf).await.expect("read"), 0);
            assert_eq!(closed.try_recv(), Ok(()));
        });
    }
}
