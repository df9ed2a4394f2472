//! The notification bus: change notifications shared by the replicas of one server over Redis
//! Pub/Sub (`--bus redis://host:port/db`, `MCP_BUS`; off by default).
//!
//! Where this differs from `docs/plans/replicas.md` (flag names, variables and the three log
//! lines below are exactly the plan's): a failure before the first subscription logs
//! `bus: cannot reach Redis at <address>: <error>; retrying` (WARN) rather than "lost", and the
//! first subscription after it logs `bus: subscribed to …`; an outage only the publisher saw
//! (its PUBLISH failed, the subscription stayed up) ends with the `bus: reconnected …` line at
//! the subscriber's next PING; `--bus-channel` needs `--bus`; embedded applications also get
//! `RouterOptions::bus_channel`. The link state is a mutex (it carries the outage's start),
//! not an `AtomicU8`.
//!
//! A change a handler raises through [`Notifier`](crate::Notifier) (`tools_list_changed`,
//! `prompts_list_changed`, `resources_list_changed`, `resource_updated(uri)`) is delivered at
//! once to this replica's own sessions and listeners (`notify.rs`), then [`publish`]ed on one
//! channel per server, `mcpgen:<server name>:changes` (`--bus-channel`, `MCP_BUS_CHANNEL`,
//! overrides it). Every replica delivers each message it receives to its own sessions and
//! listeners through the same filters, and drops the messages of its own origin (a random id
//! per process), which it delivered already: each client gets each change once.
//!
//! * **On the wire**: `{"v":1,"origin":"<uuid>","change":"resources/updated","uri":"notes://1"}`
//!   (`change` is also `tools/list_changed`, `prompts/list_changed` or
//!   `resources/list_changed`, without `uri`). A message of another version, of an unknown
//!   change or that does not read is skipped (debug log).
//! * **In order**: one publisher task sends over one connection in FIFO order and one delivery
//!   task delivers in received order, and Redis hands each subscriber the messages in the
//!   order they were published. A slow client holds up the delivery task (at most
//!   `notify::SEND_TIMEOUT` per send), never the Redis connection.
//! * **At most once**: Pub/Sub keeps nothing. A replica cut off from Redis keeps delivering its
//!   own changes to its own clients, does not publish them, and misses what the others publish
//!   meanwhile. It logs the loss once and reconnects with backoff (100 ms doubling up to 5 s,
//!   with jitter); a PING every 5 s (answered within 2 s) catches a half-open connection.
//!
//! The log lines (INFO, WARN, INFO; the address is the URL's host and port or socket path,
//! never the URL, which may hold a password):
//!
//! ```text
//! bus: subscribed to 'mcpgen:fleet:changes' at 127.0.0.1:6379
//! bus: lost Redis at 127.0.0.1:6379: <error>; this replica's changes still reach its own clients, other replicas' changes are missed until it is back
//! bus: reconnected to Redis at 127.0.0.1:6379 after 3.2 s; 4 changes were not published meanwhile
//! ```
//!
//! (Before the first subscription succeeds, a failure logs
//! `bus: cannot reach Redis at <address>: <error>; retrying` once instead.)
//!
//! A Redis that answers PUBLISH with an error over a working connection (an ACL user allowed to
//! SUBSCRIBE but not to PUBLISH) is no outage: nothing reconnects, the changes stay local and
//! are counted, and it is said once (WARN), then once more (INFO) when a PUBLISH succeeds:
//!
//! ```text
//! bus: Redis at 127.0.0.1:6379 refuses PUBLISH on 'mcpgen:fleet:changes': <its answer>; this replica's changes reach only its own clients until Redis allows it (an ACL user needs +publish and the channel)
//! bus: Redis at 127.0.0.1:6379 accepts PUBLISH on 'mcpgen:fleet:changes' again; 2 changes were not published meanwhile
//! ```
//!
//! Redis is a trust boundary: whoever can `PUBLISH` on the channel can make every replica send
//! list-changed or updated notifications for any URI (hints only, but use Redis ACLs and a
//! private network). `rediss://` (TLS) is not supported and refused at start-up.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use futures::StreamExt;
use redis::{AsyncConnectionConfig, Client, aio::MultiplexedConnection};
use rmcp::transport::common::server_side_http;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::notify::{self, Change, Hub};

/// The wire format's version.
const VERSION: u64 = 1;
/// Changes waiting for the publisher; beyond them a change is not published (WARN).
const PUBLISH_QUEUE: usize = 1024;
/// Received changes waiting for delivery; beyond them a change is dropped (WARN).
const DELIVERY_QUEUE: usize = 4096;
/// The largest message read: a change is a kind and at most one URI, far below this. Anyone who
/// can publish on the channel could otherwise make every replica decode and queue messages of
/// any size (Redis allows 512 MB), so bigger ones are skipped before they are parsed.
const MAX_MESSAGE: usize = 64 * 1024;
/// The first reconnection delay, doubled after each failure…
const BACKOFF_FIRST: Duration = Duration::from_millis(100);
/// … up to this.
const BACKOFF_MAX: Duration = Duration::from_secs(5);
/// How long connecting (and subscribing) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the publisher's connection waits for a connect or an answer.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(1);
/// How often the subscription's connection is checked with PING…
const PING_EVERY: Duration = Duration::from_secs(5);
/// … and how long its answer may take.
const PING_TIMEOUT: Duration = Duration::from_secs(2);
/// At most one "queue full" warning this often.
const WARN_EVERY_MS: u64 = 10_000;

/// One bus connection set: what [`publish`] needs.
#[derive(Debug)]
pub(crate) struct Bus {
    publish: mpsc::Sender<Change>,
    shared: Arc<Shared>,
}

/// Checks a bus URL and opens a client for it (no connection yet). The error never quotes the
/// URL (it may hold a password).
fn client(url: &str) -> Result<Client, String> {
    let scheme = url.split_once("://").map(|(scheme, _)| scheme);
    match scheme {
        Some("redis" | "unix" | "redis+unix" | "valkey" | "valkey+unix") => {}
        Some("rediss" | "valkeys") => {
            return Err(
                "--bus: TLS to Redis (rediss://) is not supported; reach Redis over a private network or through a TLS sidecar (stunnel, spiped) with a redis:// URL"
                    .to_string(),
            );
        }
        _ => {
            return Err(
                "--bus: not a Redis URL (redis://host:port/db, redis://user:password@host:port/db or unix:///path/to/redis.sock)"
                    .to_string(),
            );
        }
    }
    Client::open(url).map_err(|e| format!("--bus: not a usable Redis URL: {e}"))
}

/// Checks a bus URL as [`start`] does (for the command line, before anything starts).
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    client(url).map(|_| ())
}

/// Starts `hub`'s bus on the current Tokio runtime: checks `url` (an error names what is wrong,
/// never the URL) and spawns the publisher, the subscriber on `channel` and the delivery task,
/// which live as long as the runtime. Once per server: a second call changes nothing (WARN).
pub(crate) fn start(hub: &Arc<Hub>, url: &str, channel: String) -> Result<(), String> {
    static STARTING: Mutex<()> = Mutex::new(());
    let _starting = lock(&STARTING);
    if hub.bus.get().is_some() {
        tracing::warn!(
            server = hub.name(),
            "bus: already running for this server; started again: ignored"
        );
        return Ok(());
    }
    let (bus, mut received) = launch(url, channel)?;
    let _ = hub.bus.set(bus);
    let hub = Arc::clone(hub);
    tokio::spawn(async move {
        while let Some(change) = received.recv().await {
            notify::deliver_local(&hub, &change).await;
        }
    });
    Ok(())
}

impl Bus {
    /// Publishes `change`. Never blocks: when the publisher's queue is full the change is not
    /// published (WARN, at most every 10 s).
    pub(crate) fn publish(&self, change: &Change) {
        if self.publish.try_send(change.clone()).is_err() {
            self.shared.unpublished.fetch_add(1, Ordering::Relaxed);
            self.shared
                .queue_full("the publish queue is full: a change was not published");
        }
    }
}

/// Opens a client for `url` and spawns the publisher and the subscriber on the current
/// runtime; the receiver yields the changes other processes published on `channel`.
fn launch(url: &str, channel: String) -> Result<(Bus, mpsc::Receiver<Change>), String> {
    if channel.is_empty() {
        return Err("--bus-channel: the channel name is empty".to_string());
    }
    let client = client(url)?;
    if tokio::runtime::Handle::try_current().is_err() {
        return Err("the notification bus must be started inside a Tokio runtime".to_string());
    }
    let shared = Arc::new(Shared {
        address: client.get_connection_info().addr().to_string(),
        channel,
        origin: server_side_http::session_id().to_string(),
        link: Mutex::new(Link::Starting),
        unpublished: AtomicU64::new(0),
        last_warning_ms: AtomicU64::new(0),
        refusing: AtomicBool::new(false),
    });
    let (publish, queued) = mpsc::channel(PUBLISH_QUEUE);
    let (deliver, received) = mpsc::channel(DELIVERY_QUEUE);
    tokio::spawn(publisher(Arc::clone(&shared), client.clone(), queued));
    tokio::spawn(subscriber(Arc::clone(&shared), client, deliver));
    Ok((Bus { publish, shared }, received))
}

/// The state of the link to Redis, shared by the publisher and the subscriber so that one
/// outage logs one WARN and one INFO.
#[derive(Debug)]
enum Link {
    /// Never subscribed yet.
    Starting,
    Connected,
    Lost {
        since: Instant,
    },
}

#[derive(Debug)]
struct Shared {
    /// Redis's address (host:port or socket path; never the URL).
    address: String,
    channel: String,
    /// This process's origin, stamped on what it publishes.
    origin: String,
    link: Mutex<Link>,
    /// Changes not published since the last report.
    unpublished: AtomicU64,
    last_warning_ms: AtomicU64,
    /// Redis answers PUBLISH with an error (an ACL without `+publish`, say) over a connection
    /// that works: said once, until a PUBLISH succeeds again.
    refusing: AtomicBool,
}

impl Shared {
    /// Redis failed (`error`): the first failure of an outage is logged.
    fn lost(&self, error: &str) {
        let mut link = lock(&self.link);
        match *link {
            Link::Connected => {
                *link = Link::Lost {
                    since: Instant::now(),
                };
                tracing::warn!(
                    "bus: lost Redis at {}: {error}; this replica's changes still reach its own clients, other replicas' changes are missed until it is back",
                    self.address
                );
            }
            Link::Starting => {
                *link = Link::Lost {
                    since: Instant::now(),
                };
                tracing::warn!(
                    "bus: cannot reach Redis at {}: {error}; retrying",
                    self.address
                );
            }
            Link::Lost { .. } => tracing::debug!("bus: Redis at {}: {error}", self.address),
        }
    }

    /// The subscription is live: the first time logs the subscription, after an outage the
    /// reconnection.
    fn connected(&self, first_subscription: bool) {
        let mut link = lock(&self.link);
        let previous = std::mem::replace(&mut *link, Link::Connected);
        match previous {
            Link::Connected => {}
            Link::Lost { since } if !first_subscription => {
                let unpublished = self.unpublished.swap(0, Ordering::Relaxed);
                tracing::info!(
                    "bus: reconnected to Redis at {} after {:.1} s; {unpublished} changes were not published meanwhile",
                    self.address,
                    since.elapsed().as_secs_f64()
                );
            }
            Link::Starting | Link::Lost { .. } => {
                tracing::info!("bus: subscribed to '{}' at {}", self.channel, self.address);
                let unpublished = self.unpublished.swap(0, Ordering::Relaxed);
                if unpublished > 0 {
                    tracing::warn!(
                        "bus: {unpublished} changes were not published before Redis could be reached"
                    );
                }
            }
        }
    }

    /// Redis refused a PUBLISH (`error`, its reply): the first refusal is logged, not as an
    /// outage (the connection and the subscription are fine, so nothing reconnects).
    fn refused(&self, error: &str) {
        self.unpublished.fetch_add(1, Ordering::Relaxed);
        if !self.refusing.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "bus: Redis at {} refuses PUBLISH on '{}': {error}; this replica's changes reach only its own clients until Redis allows it (an ACL user needs +publish and the channel)",
                self.address,
                self.channel
            );
        }
    }

    /// A PUBLISH succeeded: after refusals, says so with how many changes were not published.
    fn published(&self) {
        if self.refusing.swap(false, Ordering::Relaxed) {
            let unpublished = self.unpublished.swap(0, Ordering::Relaxed);
            tracing::info!(
                "bus: Redis at {} accepts PUBLISH on '{}' again; {unpublished} changes were not published meanwhile",
                self.address,
                self.channel
            );
        }
    }

    fn is_connected(&self) -> bool {
        matches!(*lock(&self.link), Link::Connected)
    }

    /// A WARN about a full queue, at most every 10 s.
    fn queue_full(&self, what: &str) {
        let now = now_ms();
        let last = self.last_warning_ms.load(Ordering::Relaxed);
        if (last == 0 || now.saturating_sub(last) >= WARN_EVERY_MS)
            && self
                .last_warning_ms
                .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!("bus: {what} (this warning repeats at most every 10 s)");
        }
    }
}

/// Publishes the queued changes in order over one connection, connecting again after a
/// failure (at most once per backoff step while Redis is lost; at once when the subscriber has
/// reached it again); a change that cannot be published is counted.
async fn publisher(shared: Arc<Shared>, client: Client, mut queued: mpsc::Receiver<Change>) {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(PUBLISH_TIMEOUT))
        .set_response_timeout(Some(PUBLISH_TIMEOUT));
    let mut connection: Option<MultiplexedConnection> = None;
    let mut failures = 0u32;
    let mut next_attempt = Instant::now();
    while let Some(change) = queued.recv().await {
        let payload = encode(&shared.origin, &change);
        // A connection that broke since the last change gets one fresh attempt at once.
        let mut fresh_attempt = true;
        loop {
            if connection.is_none() {
                // Within the backoff, unless the subscriber has reached Redis since.
                if Instant::now() < next_attempt && !shared.is_connected() {
                    break;
                }
                match client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                {
                    Ok(opened) => connection = Some(opened),
                    Err(e) => {
                        shared.lost(&e.to_string());
                        next_attempt = Instant::now() + jittered(backoff(failures), now_ms());
                        failures = failures.saturating_add(1);
                        break;
                    }
                }
                fresh_attempt = false;
            }
            let Some(open) = connection.as_mut() else {
                break;
            };
            let sent = redis::cmd("PUBLISH")
                .arg(&shared.channel)
                .arg(&payload)
                .query_async::<redis::Value>(open)
                .await;
            match sent {
                Ok(_) => {
                    failures = 0;
                    shared.published();
                    break;
                }
                // Redis answered, with an error: the link is fine and reconnecting would not
                // change the answer.
                Err(e) if is_refusal(&e) => {
                    shared.refused(&e.to_string());
                    break;
                }
                Err(e) => {
                    connection = None;
                    if !fresh_attempt {
                        shared.lost(&e.to_string());
                        next_attempt = Instant::now() + jittered(backoff(failures), now_ms());
                        failures = failures.saturating_add(1);
                        break;
                    }
                    fresh_attempt = false;
                    tracing::debug!("bus: publishing failed ({e}); connecting again");
                }
            }
        }
        if connection.is_none() {
            shared.unpublished.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Whether `error` is Redis's own answer to a command (`NOPERM`, `ERR`, ...) rather than a
/// failure of the connection.
fn is_refusal(error: &redis::RedisError) -> bool {
    matches!(
        error.kind(),
        redis::ErrorKind::Server(_) | redis::ErrorKind::Extension
    ) && !error.is_io_error()
        && !error.is_timeout()
        && !error.is_connection_dropped()
}

/// Holds one subscription to the channel, connecting again with backoff whenever it is lost,
/// and hands the other processes' changes to `deliver`.
async fn subscriber(shared: Arc<Shared>, client: Client, deliver: mpsc::Sender<Change>) {
    let mut failures = 0u32;
    let mut subscribed_once = false;
    loop {
        match subscribe(&client, &shared.channel).await {
            Ok((mut sink, mut stream)) => {
                failures = 0;
                shared.connected(!subscribed_once);
                subscribed_once = true;
                let mut ticks = tokio::time::interval(PING_EVERY);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                ticks.tick().await;
                let why = loop {
                    tokio::select! {
                        message = stream.next() => match message {
                            None => break "the connection closed".to_string(),
                            Some(message) => receive(&shared, message.get_payload_bytes(), &deliver),
                        },
                        _ = ticks.tick() => {
                            match tokio::time::timeout(PING_TIMEOUT, sink.ping::<redis::Value>()).await {
                                // Redis answers: an outage only the publisher saw is over.
                                Ok(Ok(_)) => shared.connected(false),
                                Ok(Err(e)) => break e.to_string(),
                                Err(_) => break format!("no answer to PING within {} s", PING_TIMEOUT.as_secs()),
                            }
                        }
                    }
                };
                // The old subscription is gone before a new one is made: one at a time.
                drop(sink);
                drop(stream);
                shared.lost(&why);
            }
            Err(e) => shared.lost(&e),
        }
        tokio::time::sleep(jittered(backoff(failures), now_ms())).await;
        failures = failures.saturating_add(1);
    }
}

/// A new subscription to `channel` (within [`CONNECT_TIMEOUT`]).
async fn subscribe(
    client: &Client,
    channel: &str,
) -> Result<(redis::aio::PubSubSink, redis::aio::PubSubStream), String> {
    let subscribing = async {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(channel).await?;
        Ok::<_, redis::RedisError>(pubsub.split())
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, subscribing).await {
        Ok(Ok(halves)) => Ok(halves),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "no connection within {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

/// One received message: another process's change goes to the delivery queue.
fn receive(shared: &Shared, payload: &[u8], deliver: &mpsc::Sender<Change>) {
    match decode(payload, &shared.origin) {
        Ok(Some(change)) => {
            tracing::debug!(?change, "bus: a change from another replica");
            if deliver.try_send(change).is_err() {
                shared.queue_full("the delivery queue is full: a received change was dropped");
            }
        }
        Ok(None) => tracing::debug!("bus: our own change came back; delivered already"),
        Err(why) => tracing::debug!("bus: message skipped: {why}"),
    }
}

/// The wire form of `change` published by `origin`.
fn encode(origin: &str, change: &Change) -> String {
    let (name, uri) = match change {
        Change::ToolsListChanged => ("tools/list_changed", None),
        Change::PromptsListChanged => ("prompts/list_changed", None),
        Change::ResourcesListChanged => ("resources/list_changed", None),
        Change::ResourceUpdated(uri) => ("resources/updated", Some(uri)),
    };
    let message = Wire {
        v: VERSION,
        origin,
        change: name,
        uri: uri.map(String::as_str),
    };
    serde_json::to_string(&message).unwrap_or_default()
}

/// A message as published (fields in this order).
#[derive(serde::Serialize)]
struct Wire<'a> {
    v: u64,
    origin: &'a str,
    change: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri: Option<&'a str>,
}

/// The change a message carries; `None` when `own_origin` published it; an error says why a
/// message is skipped.
fn decode(payload: &[u8], own_origin: &str) -> Result<Option<Change>, String> {
    if payload.len() > MAX_MESSAGE {
        return Err(format!(
            "{} bytes, more than the {MAX_MESSAGE} a change may take",
            payload.len()
        ));
    }
    let message: Value = serde_json::from_slice(payload).map_err(|e| format!("not JSON: {e}"))?;
    match message.get("v").and_then(Value::as_u64) {
        Some(VERSION) => {}
        _ => return Err(format!("not version {VERSION}")),
    }
    let origin = message
        .get("origin")
        .and_then(Value::as_str)
        .ok_or("no origin")?;
    let change = match message.get("change").and_then(Value::as_str) {
        Some("tools/list_changed") => Change::ToolsListChanged,
        Some("prompts/list_changed") => Change::PromptsListChanged,
        Some("resources/list_changed") => Change::ResourcesListChanged,
        Some("resources/updated") => match message.get("uri").and_then(Value::as_str) {
            Some(uri) => Change::ResourceUpdated(uri.to_string()),
            None => return Err("resources/updated without a uri".to_string()),
        },
        Some(other) => return Err(format!("unknown change '{other}'")),
        None => return Err("no change".to_string()),
    };
    if origin == own_origin {
        return Ok(None);
    }
    Ok(Some(change))
}

/// The delay before reconnection attempt `failures + 1`: 100 ms doubling up to 5 s.
fn backoff(failures: u32) -> Duration {
    BACKOFF_FIRST
        .saturating_mul(2u32.saturating_pow(failures.min(16)))
        .min(BACKOFF_MAX)
}

/// `delay` less up to a fifth of it, by `seed` (the clock's low bits), so that replicas cut off
/// together do not come back in step.
fn jittered(delay: Duration, seed: u64) -> Duration {
    let per_mille = u32::try_from(seed % 1000).unwrap_or(0);
    delay - delay / 5 * per_mille / 1000
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use std::{
        io::{Read, Write},
        net::{TcpListener, TcpStream},
        process::{Child, Command, Stdio},
        sync::Arc,
    };

    use super::*;

    const ORIGIN: &str = "0c7bb3f6-3ea0-4c47-9a3c-1e1b1ac5a2f0";
    const OTHER: &str = "9d1f0a52-77e4-4c1e-8b0e-0f6ad1c3e9b4";

    #[test]
    fn every_change_reads_back_from_its_wire_form() {
        for (change, wire) in [
            (
                Change::ToolsListChanged,
                r#"{"v":1,"origin":"9d1f0a52-77e4-4c1e-8b0e-0f6ad1c3e9b4","change":"tools/list_changed"}"#,
            ),
            (
                Change::PromptsListChanged,
                r#"{"v":1,"origin":"9d1f0a52-77e4-4c1e-8b0e-0f6ad1c3e9b4","change":"prompts/list_changed"}"#,
            ),
            (
                Change::ResourcesListChanged,
                r#"{"v":1,"origin":"9d1f0a52-77e4-4c1e-8b0e-0f6ad1c3e9b4","change":"resources/list_changed"}"#,
            ),
            (
                Change::ResourceUpdated("notes://1".into()),
                r#"{"v":1,"origin":"9d1f0a52-77e4-4c1e-8b0e-0f6ad1c3e9b4","change":"resources/updated","uri":"notes://1"}"#,
            ),
        ] {
            let encoded = encode(OTHER, &change);
            assert_eq!(encoded, wire);
            assert_eq!(decode(encoded.as_bytes(), ORIGIN), Ok(Some(change.clone())));
            // Our own change is dropped: it was delivered here already.
            assert_eq!(decode(encoded.as_bytes(), OTHER), Ok(None));
        }
    }

    #[test]
    fn foreign_versions_unknown_changes_and_garbage_are_skipped() {
        let read = |text: &str| decode(text.as_bytes(), ORIGIN);
        assert_eq!(
            read(r#"{"v":2,"origin":"x","change":"tools/list_changed"}"#),
            Err("not version 1".into())
        );
        assert_eq!(
            read(r#"{"origin":"x","change":"tools/list_changed"}"#),
            Err("not version 1".into())
        );
        assert_eq!(
            read(r#"{"v":1,"origin":"x","change":"tools/deleted"}"#),
            Err("unknown change 'tools/deleted'".into())
        );
        assert_eq!(
            read(r#"{"v":1,"origin":"x","change":"resources/updated"}"#),
            Err("resources/updated without a uri".into())
        );
        assert_eq!(
            read(r#"{"v":1,"change":"tools/list_changed"}"#),
            Err("no origin".into())
        );
        assert_eq!(read(r#"{"v":1,"origin":"x"}"#), Err("no change".into()));
        assert!(read("PING").unwrap_err().starts_with("not JSON: "));
        // A message too big to be a change is not parsed; one at the limit is.
        let huge = format!(
            r#"{{"v":1,"origin":"x","change":"resources/updated","uri":"a://{}"}}"#,
            "b".repeat(MAX_MESSAGE)
        );
        assert_eq!(
            read(&huge),
            Err(format!(
                "{} bytes, more than the 65536 a change may take",
                MAX_MESSAGE + 62
            ))
        );
        let fits = format!(
            r#"{{"v":1,"origin":"x","change":"resources/updated","uri":"a://{}"}}"#,
            "b".repeat(MAX_MESSAGE - 62)
        );
        assert_eq!(fits.len(), MAX_MESSAGE);
        assert_eq!(
            read(&fits),
            Ok(Some(Change::ResourceUpdated(format!(
                "a://{}",
                "b".repeat(MAX_MESSAGE - 62)
            ))))
        );
        // Another process's change, with fields we do not know, is delivered.
        assert_eq!(
            read(r#"{"v":1,"origin":"x","change":"resources/updated","uri":"a://b","extra":0}"#),
            Ok(Some(Change::ResourceUpdated("a://b".into())))
        );
    }

    #[test]
    fn backoff_doubles_from_100_ms_up_to_5_s() {
        let steps: Vec<u128> = (0..9).map(|n| backoff(n).as_millis()).collect();
        assert_eq!(steps, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
        assert_eq!(backoff(u32::MAX), Duration::from_secs(5));
        assert_eq!(jittered(Duration::from_secs(5), 0), Duration::from_secs(5));
        assert_eq!(
            jittered(Duration::from_secs(5), 500),
            Duration::from_millis(4500)
        );
        assert_eq!(
            jittered(Duration::from_secs(5), 1999),
            Duration::from_millis(4001)
        );
        assert_eq!(
            jittered(Duration::from_millis(100), 999),
            Duration::from_nanos(80_020_000)
        );
    }

    #[test]
    fn bus_urls_are_checked_without_quoting_them() {
        assert_eq!(
            client("rediss://user:hunter2@redis.example:6380/0").unwrap_err(),
            "--bus: TLS to Redis (rediss://) is not supported; reach Redis over a private network or through a TLS sidecar (stunnel, spiped) with a redis:// URL"
        );
        assert_eq!(
            client("http://user:hunter2@redis.example").unwrap_err(),
            "--bus: not a Redis URL (redis://host:port/db, redis://user:password@host:port/db or unix:///path/to/redis.sock)"
        );
        assert_eq!(
            client("127.0.0.1:6379").unwrap_err(),
            "--bus: not a Redis URL (redis://host:port/db, redis://user:password@host:port/db or unix:///path/to/redis.sock)"
        );
        let bad = client("redis://user:hunter2@[::1/0").unwrap_err();
        assert!(bad.starts_with("--bus: not a usable Redis URL: "), "{bad}");
        assert!(!bad.contains("hunter2"), "{bad}");
        let good = client("redis://user:hunter2@127.0.0.1:6390/2").unwrap();
        assert_eq!(
            good.get_connection_info().addr().to_string(),
            "127.0.0.1:6390"
        );
        assert_eq!(
            crate::notify::default_channel("fleet"),
            "mcpgen:fleet:changes"
        );
    }

    /// A redis-server of this test's own on a free loopback port, killed when dropped.
    struct Redis {
        port: u16,
        dir: std::path::PathBuf,
        child: Option<Child>,
    }

    impl Redis {
        fn start() -> Redis {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let dir =
                std::env::temp_dir().join(format!("mcpgen-bus-{}-{port}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("a temporary directory");
            let mut redis = Redis {
                port,
                dir,
                child: None,
            };
            redis.restart();
            redis
        }

        /// (Re)starts redis-server on the port and waits until it answers PING.
        fn restart(&mut self) {
            let child = Command::new("redis-server")
                .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
                .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                .arg("--dir")
                .arg(&self.dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| {
                    panic!(
                        "cannot run redis-server ({e}): the bus tests need it (Debian package redis-server; scripts/setup-system.sh installs it)"
                    )
                });
            self.child = Some(child);
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if self.answers_ping() {
                    return;
                }
                assert!(
                    Instant::now() < deadline,
                    "redis-server on port {} did not answer PING within 10 s",
                    self.port
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }

        fn answers_ping(&self) -> bool {
            let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
                return false;
            };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
            let mut answer = [0u8; 7];
            stream.write_all(b"PING\r\n").is_ok()
                && stream.read_exact(&mut answer).is_ok()
                && &answer == b"+PONG\r\n"
        }

        /// Sends an inline command; the first line of the answer.
        fn command(&self, line: &str) -> String {
            let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
            stream
                .set_read_timeout(Some(Duration::from_secs(2)))
                .unwrap();
            stream.write_all(format!("{line}\r\n").as_bytes()).unwrap();
            let mut answer = Vec::new();
            let mut byte = [0u8; 1];
            while stream.read_exact(&mut byte).is_ok() && byte[0] != b'\n' {
                answer.push(byte[0]);
            }
            String::from_utf8_lossy(&answer).trim_end().to_string()
        }

        fn stop(&mut self) {
            if let Some(mut child) = self.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }

        fn url(&self) -> String {
            format!("redis://127.0.0.1:{}/", self.port)
        }
    }

    impl Drop for Redis {
        fn drop(&mut self) {
            self.stop();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// The log lines written while a test runs (on its own thread: `set_default`).
    #[derive(Clone, Default)]
    struct Logs(Arc<Mutex<Vec<u8>>>);

    impl Write for Logs {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            lock(&self.0).extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Logs {
        /// The lines that contain `bus: ` (without the level).
        fn bus_lines(&self) -> Vec<String> {
            String::from_utf8_lossy(&lock(&self.0))
                .lines()
                .filter_map(|line| line.find("bus: ").map(|at| line[at..].to_string()))
                .collect()
        }

        fn capture(&self) -> tracing::subscriber::DefaultGuard {
            let logs = self.clone();
            let subscriber = tracing_subscriber::fmt()
                .with_writer(move || logs.clone())
                .with_ansi(false)
                .with_target(false)
                .without_time()
                .with_max_level(tracing::Level::DEBUG)
                .finish();
            tracing::subscriber::set_default(subscriber)
        }
    }

    async fn until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn next(received: &mut mpsc::Receiver<Change>, logs: &Logs) -> Change {
        match tokio::time::timeout(Duration::from_secs(10), received.recv()).await {
            Ok(Some(change)) => change,
            Ok(None) => panic!("the bus stopped; {:?}", logs.bus_lines()),
            Err(_) => panic!("no change within 10 s; {:?}", logs.bus_lines()),
        }
    }

    /// Two processes' buses on one channel of a real Redis: each gets the other's changes in
    /// order and never its own; when Redis goes away, each logs the loss once, and once Redis
    /// is back they reconnect, report what was not published, and carry changes again.
    #[tokio::test]
    async fn two_replicas_share_changes_through_a_real_redis() {
        let logs = Logs::default();
        let _capture = logs.capture();
        let mut redis = Redis::start();
        let channel = "mcpgen:bus-test:changes".to_string();
        let (a, mut from_b) = launch(&redis.url(), channel.clone()).unwrap();
        let (b, mut from_a) = launch(&redis.url(), channel.clone()).unwrap();
        until("both subscriptions", || {
            a.shared.is_connected() && b.shared.is_connected()
        })
        .await;
        let address = format!("127.0.0.1:{}", redis.port);
        let subscribed = format!("bus: subscribed to 'mcpgen:bus-test:changes' at {address}");
        assert_eq!(logs.bus_lines(), [subscribed.clone(), subscribed.clone()]);

        let sent: Vec<Change> = (0..20)
            .map(|i| Change::ResourceUpdated(format!("notes://{}", 1 + i % 2)))
            .chain([Change::ToolsListChanged, Change::ResourcesListChanged])
            .collect();
        for change in &sent {
            a.publish(change);
        }
        let mut got = Vec::new();
        for _ in 0..sent.len() {
            got.push(next(&mut from_a, &logs).await);
        }
        assert_eq!(got, sent);
        // Redis pushed A's own twenty-two to A's subscription before B's change, which is the
        // first thing A receives: its own were dropped.
        b.publish(&Change::PromptsListChanged);
        assert_eq!(next(&mut from_b, &logs).await, Change::PromptsListChanged);
        assert!(from_a.try_recv().is_err());

        // Redis drops the publishers' connections (not the subscriptions): the next change is
        // published over a fresh one, and nothing counts as an outage.
        assert_eq!(redis.command("CLIENT KILL TYPE normal"), ":2");
        a.publish(&Change::ResourceUpdated("notes://3".into()));
        assert_eq!(
            next(&mut from_a, &logs).await,
            Change::ResourceUpdated("notes://3".into())
        );
        assert!(a.shared.is_connected() && b.shared.is_connected());
        assert_eq!(a.shared.unpublished.load(Ordering::Relaxed), 0);

        redis.stop();
        until("both to notice the loss", || {
            !a.shared.is_connected() && !b.shared.is_connected()
        })
        .await;
        a.publish(&Change::ResourceUpdated("notes://lost".into()));
        a.publish(&Change::ToolsListChanged);
        until("A to count what it could not publish", || {
            a.shared.unpublished.load(Ordering::Relaxed) == 2
        })
        .await;
        let lost: Vec<String> = logs
            .bus_lines()
            .into_iter()
            .filter(|line| line.starts_with("bus: lost Redis"))
            .collect();
        assert_eq!(lost.len(), 2, "{:?}", logs.bus_lines());
        let tail = "; this replica's changes still reach its own clients, other replicas' changes are missed until it is back";
        for line in &lost {
            assert!(
                line.starts_with(&format!("bus: lost Redis at {address}: ")),
                "{line}"
            );
            assert!(line.ends_with(tail), "{line}");
        }

        redis.restart();
        until("both to reconnect", || {
            a.shared.is_connected() && b.shared.is_connected()
        })
        .await;
        let reconnected: Vec<String> = logs
            .bus_lines()
            .into_iter()
            .filter(|line| line.starts_with("bus: reconnected"))
            .collect();
        assert_eq!(reconnected.len(), 2, "{:?}", logs.bus_lines());
        let prefix = format!("bus: reconnected to Redis at {address} after ");
        let mut counts: Vec<&str> = reconnected
            .iter()
            .map(|line| {
                let rest = line
                    .strip_prefix(&prefix)
                    .unwrap_or_else(|| panic!("{line}"));
                let (seconds, count) = rest.split_once(" s; ").unwrap_or_else(|| panic!("{line}"));
                let seconds: f64 = seconds.parse().unwrap_or_else(|_| panic!("{line}"));
                assert!(seconds > 0.0 && seconds < 20.0, "{line}");
                count
            })
            .collect();
        counts.sort_unstable();
        assert_eq!(
            counts,
            [
                "0 changes were not published meanwhile",
                "2 changes were not published meanwhile"
            ]
        );
        // Nothing of the outage arrives later, and the bus carries changes again.
        a.publish(&Change::ResourceUpdated("notes://back".into()));
        assert_eq!(
            next(&mut from_a, &logs).await,
            Change::ResourceUpdated("notes://back".into())
        );
        assert_eq!(
            logs.bus_lines()
                .iter()
                .filter(|line| line.starts_with("bus: lost") || line.starts_with("bus: cannot"))
                .count(),
            2,
            "{:?}",
            logs.bus_lines()
        );
    }

    /// A Redis user that may SUBSCRIBE but not PUBLISH: the refusal is said once, the replica
    /// still receives the others' changes, nothing reconnects (no "lost"/"reconnected" loop),
    /// and once Redis allows it the changes flow again with one line saying how many were not
    /// published.
    #[tokio::test]
    async fn a_redis_that_refuses_publish_is_said_once_and_is_no_outage() {
        let logs = Logs::default();
        let _capture = logs.capture();
        let redis = Redis::start();
        assert_eq!(
            redis.command("ACL SETUSER listener on >listen ~* &* +@all -publish"),
            "+OK"
        );
        let channel = "mcpgen:bus-acl:changes".to_string();
        let listener_url = format!("redis://listener:listen@127.0.0.1:{}/", redis.port);
        let (a, mut from_b) = launch(&listener_url, channel.clone()).unwrap();
        let (b, mut from_a) = launch(&redis.url(), channel.clone()).unwrap();
        until("both subscriptions", || {
            a.shared.is_connected() && b.shared.is_connected()
        })
        .await;
        let address = format!("127.0.0.1:{}", redis.port);
        for i in 0..3 {
            a.publish(&Change::ResourceUpdated(format!("notes://{i}")));
        }
        until("A to count its refused changes", || {
            a.shared.unpublished.load(Ordering::Relaxed) == 3
        })
        .await;
        // B's changes still reach A.
        b.publish(&Change::ToolsListChanged);
        assert_eq!(next(&mut from_b, &logs).await, Change::ToolsListChanged);
        assert!(from_a.try_recv().is_err());
        // The lines of refusals and outages (not the subscriptions, not DEBUG's).
        let said = || -> Vec<String> {
            logs.bus_lines()
                .into_iter()
                .filter(|line| {
                    [
                        "bus: Redis at",
                        "bus: lost",
                        "bus: reconnected",
                        "bus: cannot",
                    ]
                    .iter()
                    .any(|start| line.starts_with(start))
                })
                .collect()
        };
        let refused = said();
        assert_eq!(refused.len(), 1, "{:?}", logs.bus_lines());
        let prefix =
            format!("bus: Redis at {address} refuses PUBLISH on 'mcpgen:bus-acl:changes': ");
        assert!(refused[0].starts_with(&prefix), "{}", refused[0]);
        assert!(
            refused[0].contains("no permissions to run the 'publish' command"),
            "{}",
            refused[0]
        );
        assert!(
            refused[0].ends_with("; this replica's changes reach only its own clients until Redis allows it (an ACL user needs +publish and the channel)"),
            "{}",
            refused[0]
        );
        assert!(a.shared.is_connected());

        assert_eq!(redis.command("ACL SETUSER listener +publish"), "+OK");
        a.publish(&Change::ResourceUpdated("notes://allowed".into()));
        assert_eq!(
            next(&mut from_a, &logs).await,
            Change::ResourceUpdated("notes://allowed".into())
        );
        let rest: Vec<String> = said().into_iter().skip(1).collect();
        assert_eq!(
            rest,
            [format!(
                "bus: Redis at {address} accepts PUBLISH on 'mcpgen:bus-acl:changes' again; 3 changes were not published meanwhile"
            )]
        );
        assert_eq!(a.shared.unpublished.load(Ordering::Relaxed), 0);
    }

    /// A full publish queue drops the change, counts it and warns once per 10 s.
    #[test]
    fn a_full_queue_counts_the_change_and_warns_once() {
        let logs = Logs::default();
        let _capture = logs.capture();
        let (publish, mut queued) = mpsc::channel(1);
        let bus = Bus {
            publish,
            shared: Arc::new(Shared {
                address: "127.0.0.1:6379".into(),
                channel: "c".into(),
                origin: ORIGIN.into(),
                link: Mutex::new(Link::Connected),
                unpublished: AtomicU64::new(0),
                last_warning_ms: AtomicU64::new(0),
                refusing: AtomicBool::new(false),
            }),
        };
        bus.publish(&Change::ToolsListChanged);
        for _ in 0..3 {
            bus.publish(&Change::PromptsListChanged);
        }
        assert_eq!(bus.shared.unpublished.load(Ordering::Relaxed), 3);
        assert_eq!(
            logs.bus_lines(),
            [
                "bus: the publish queue is full: a change was not published (this warning repeats at most every 10 s)"
            ]
        );
        assert_eq!(queued.try_recv(), Ok(Change::ToolsListChanged));
        assert!(queued.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_bus_needs_a_channel_and_a_redis_url() {
        assert_eq!(
            launch("redis://127.0.0.1:1/", String::new()).unwrap_err(),
            "--bus-channel: the channel name is empty"
        );
        assert_eq!(
            launch("redis.example:6379", "c".into()).unwrap_err(),
            "--bus: not a Redis URL (redis://host:port/db, redis://user:password@host:port/db or unix:///path/to/redis.sock)"
        );
    }
}
