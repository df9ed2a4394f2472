//! Sessions, per-session logging thresholds and change notifications ([`Notifier`]).
//!
//! * Legacy connections (2025-11-25 and earlier): every initialized session registers its peer
//!   here; list changes go to all of them, `notifications/resources/updated` to the sessions
//!   that sent `resources/subscribe` for that URI. Closed sessions are dropped (at once when a
//!   Streamable HTTP session ends, see `sessions.rs`).
//! * 2026-07-28 connections: `subscriptions/listen` streams register rmcp's
//!   [`SubscriptionSink`], which applies the accepted filter and stamps
//!   `io.modelcontextprotocol/subscriptionId`.
//!
//! A kind of notification the spec does not declare (see [`Capabilities`]) is never sent.
//!
//! With a notification bus (`--bus`, see `bus.rs`) a change has two halves: it is delivered at
//! once to this process's sessions and listeners ([`deliver_local`]), then published on Redis;
//! every other replica delivers what it receives through the same [`deliver_local`] (the same
//! capability checks, `resources/subscribe` sets and accepted filters). A replica drops its own
//! changes when Redis hands them back, so each client gets each change once.

#[cfg(feature = "bus")]
pub(crate) mod bus;

use std::{
    collections::HashSet,
    sync::{
        Arc, LazyLock, Mutex, OnceLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use futures::future::join_all;
use rmcp::{
    Peer, RoleServer,
    model::{
        PromptListChangedNotification, ResourceListChangedNotification,
        ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
        SubscriptionFilter, ToolListChangedNotification,
    },
    service::{ServiceError, SubscriptionSendError, SubscriptionSink},
};
// The log levels of `logging/setLevel` and `ctx.log` are rmcp's, deprecated by SEP-2577 (the
// items that use them allow it): what legacy connections use.
#[allow(deprecated)]
use rmcp::model::LoggingLevel;

use crate::capabilities::Capabilities;

/// A change notification, as raised through `Notifier` and carried by the bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    ToolsListChanged,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated(String),
}

/// The default bus channel of the server `name`: `mcpgen:<name>:changes`.
pub(crate) fn default_channel(name: &str) -> String {
    format!("mcpgen:{name}:changes")
}

/// What `--bus` (or `RouterOptions::bus`) gets from a server built without the feature `bus`.
#[cfg(not(feature = "bus"))]
pub(crate) const NO_BUS: &str = "--bus: this server was built without the notification bus; build it with the cargo feature `bus` (`cargo build --features bus`)";

/// Starts the bus of this process on `url` and `channel` (see `bus::start`); refused, with the
/// feature named, in a server built without the feature `bus`.
pub(crate) fn start_bus(url: &str, channel: String) -> Result<(), String> {
    #[cfg(feature = "bus")]
    return bus::start(url, channel);
    #[cfg(not(feature = "bus"))]
    {
        let _ = (url, channel);
        Err(NO_BUS.to_string())
    }
}

/// Checks a bus URL as [`start_bus`] does, before anything starts.
pub(crate) fn check_bus_url(url: &str) -> Result<(), String> {
    #[cfg(feature = "bus")]
    return bus::check_url(url);
    #[cfg(not(feature = "bus"))]
    {
        let _ = url;
        Err(NO_BUS.to_string())
    }
}

/// How long one notification may wait for a slow or absent reader before it is given up.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// One client session: a legacy stdio connection or Streamable HTTP session, or one stateless
/// 2026-07-28 request. The wrapper in `serve.rs` puts it into every request's extensions.
#[allow(deprecated)]
#[derive(Debug, Default)]
pub struct Session {
    /// `logging/setLevel` threshold; `None` = every level (legacy, until set).
    level: Mutex<Option<LoggingLevel>>,
    /// URIs from `resources/subscribe`.
    subscriptions: Mutex<HashSet<String>>,
}

#[allow(deprecated)]
impl Session {
    /// Records the `logging/setLevel` threshold.
    pub(crate) fn set_level(&self, level: LoggingLevel) {
        *lock(&self.level) = Some(level);
    }

    /// The `logging/setLevel` threshold (`None` until set).
    pub(crate) fn level(&self) -> Option<LoggingLevel> {
        *lock(&self.level)
    }

    pub(crate) fn subscribe(&self, uri: &str) {
        lock(&self.subscriptions).insert(uri.to_string());
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        lock(&self.subscriptions).remove(uri);
    }

    fn is_subscribed(&self, uri: &str) -> bool {
        lock(&self.subscriptions).contains(uri)
    }
}

/// The numeric rank of a log level (`debug` 0 … `emergency` 7).
#[allow(deprecated)]
pub(crate) fn level_rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Whether `ctx.log(level, ..)` sends anything.
///
/// * `logging` not declared: never;
/// * 2026-07-28 (`modern`): only when the request's `_meta["io.modelcontextprotocol/logLevel"]`
///   (`request_level`) is set and `level` reaches it;
/// * legacy: when `level` reaches the session's `logging/setLevel` threshold (`session_level`;
///   every level until one is set).
#[allow(deprecated)]
pub(crate) fn log_allowed(
    logging: bool,
    modern: bool,
    level: LoggingLevel,
    request_level: Option<LoggingLevel>,
    session_level: Option<LoggingLevel>,
) -> bool {
    if !logging {
        return false;
    }
    let threshold = if modern {
        match request_level {
            Some(threshold) => threshold,
            None => return false,
        }
    } else {
        match session_level {
            Some(threshold) => threshold,
            None => return true,
        }
    };
    level_rank(level) >= level_rank(threshold)
}

/// Process-wide registry of sessions and listeners.
#[derive(Default)]
struct Hub {
    capabilities: OnceLock<Capabilities>,
    /// The server's name (the bus's default channel is `mcpgen:<name>:changes`).
    name: OnceLock<String>,
    next_id: AtomicU64,
    legacy: Mutex<Vec<(Arc<Session>, Peer<RoleServer>)>>,
    listeners: Mutex<Vec<(u64, SubscriptionSink)>>,
}

static HUB: LazyLock<Hub> = LazyLock::new(Hub::default);

/// Records the server's name and declared capabilities (called once, by the first server
/// built).
pub(crate) fn configure(name: &str, capabilities: Capabilities) {
    if HUB.capabilities.set(capabilities).is_err() {
        tracing::debug!("notification capabilities already configured");
    }
    let _ = HUB.name.set(name.to_string());
}

/// The server's name as configured (`""` before a server was built).
pub(crate) fn server_name() -> &'static str {
    HUB.name.get().map_or("", String::as_str)
}

/// The declared capabilities (all `false` before `serve` configured them).
pub(crate) fn capabilities() -> Capabilities {
    HUB.capabilities.get().copied().unwrap_or_default()
}

/// Registers an initialized legacy session (from `notifications/initialized`).
pub(crate) fn register_legacy(session: Arc<Session>, peer: Peer<RoleServer>) {
    let mut legacy = lock(&HUB.legacy);
    legacy.retain(|(_, peer)| !peer.is_transport_closed());
    if legacy.iter().any(|(known, _)| Arc::ptr_eq(known, &session)) {
        return;
    }
    legacy.push((session, peer));
}

/// Drops the registrations of legacy sessions whose connection has closed (called when a
/// Streamable HTTP session ends, so an expired or deleted session leaves nothing behind).
pub(crate) fn forget_closed() {
    lock(&HUB.legacy).retain(|(_, peer)| !peer.is_transport_closed());
}

/// The subscription filter served on `subscriptions/listen`, or `None` (-32601) when no
/// notification capability is declared.
pub(crate) fn accepted_filter(
    capabilities: Capabilities,
    requested: &SubscriptionFilter,
) -> Option<SubscriptionFilter> {
    if !(capabilities.tools_list_changed
        || capabilities.prompts_list_changed
        || capabilities.resources_list_changed
        || capabilities.resource_subscriptions)
    {
        return None;
    }
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = capabilities.tools_list_changed.then_some(true);
    accepted.prompts_list_changed = capabilities.prompts_list_changed.then_some(true);
    accepted.resources_list_changed = capabilities.resources_list_changed.then_some(true);
    if capabilities.resource_subscriptions {
        accepted.resource_subscriptions = requested.resource_subscriptions.clone();
    }
    Some(accepted)
}

/// Keeps a `subscriptions/listen` stream registered until it ends.
pub(crate) async fn listen(subscription: rmcp::service::SubscriptionContext) {
    let id = HUB.next_id.fetch_add(1, Ordering::Relaxed);
    lock(&HUB.listeners).push((id, subscription.sink().clone()));
    tracing::debug!(listener = id, accepted = ?subscription.accepted(), "subscriptions/listen: stream open");
    subscription.cancelled().await;
    lock(&HUB.listeners).retain(|(known, _)| *known != id);
    tracing::debug!(listener = id, "subscriptions/listen: stream closed");
}

/// Sends change notifications to the connected clients: legacy sessions and 2026-07-28
/// `subscriptions/listen` streams.
///
/// Each method is a no-op (logged at debug level) unless the spec declares that kind under
/// `notifications` (`toolsListChanged`, `promptsListChanged`, `resourcesListChanged`,
/// `resourceSubscriptions`). Delivery failures are logged, never returned.
#[derive(Debug, Clone, Copy, Default)]
pub struct Notifier {
    _private: (),
}

/// The server's [`Notifier`] (also available as `ctx.notifier()`).
pub fn notifier() -> Notifier {
    Notifier::default()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tools,
    Prompts,
    Resources,
}

impl Notifier {
    /// `notifications/tools/list_changed` to every client (declared by `toolsListChanged`).
    pub async fn tools_list_changed(&self) {
        change(Change::ToolsListChanged).await;
    }

    /// `notifications/prompts/list_changed` to every client (declared by `promptsListChanged`).
    pub async fn prompts_list_changed(&self) {
        change(Change::PromptsListChanged).await;
    }

    /// `notifications/resources/list_changed` to every client (declared by
    /// `resourcesListChanged`).
    pub async fn resources_list_changed(&self) {
        change(Change::ResourcesListChanged).await;
    }

    /// `notifications/resources/updated` for `uri` to the clients subscribed to it (legacy
    /// `resources/subscribe`, or a 2026-07-28 listener whose acknowledged
    /// `resourceSubscriptions` lists it; declared by `resourceSubscriptions`).
    ///
    /// The subscriptions themselves are the gate: a server that does not declare
    /// `resourceSubscriptions` serves no `resources/subscribe` and acknowledges no
    /// `resourceSubscriptions`, and over HTTP a listener's are only those it may read (see
    /// `guard.rs`).
    pub async fn resource_updated(&self, uri: impl Into<String>) {
        change(Change::ResourceUpdated(uri.into())).await;
    }
}

/// A change raised through [`Notifier`]: delivered here, then published on the bus (when one
/// is configured); nothing at all when its kind is not declared.
async fn change(change: Change) {
    if !declared(&change) {
        return;
    }
    deliver_declared(&change).await;
    #[cfg(feature = "bus")]
    bus::publish(&change);
}

/// Delivers `change` to this process's sessions and listeners (a change raised here, or one
/// another replica published on the bus); nothing when its kind is not declared.
#[cfg(feature = "bus")]
pub(crate) async fn deliver_local(change: &Change) {
    if declared(change) {
        deliver_declared(change).await;
    }
}

/// Whether the spec declares `change`'s kind (logged at debug level when not).
fn declared(change: &Change) -> bool {
    let caps = capabilities();
    let (declared, name) = match change {
        Change::ToolsListChanged => (caps.tools_list_changed, "tools_list_changed"),
        Change::PromptsListChanged => (caps.prompts_list_changed, "prompts_list_changed"),
        Change::ResourcesListChanged => (caps.resources_list_changed, "resources_list_changed"),
        // The subscriptions themselves are the gate (see `Notifier::resource_updated`): the
        // process-wide capabilities are the first server's, which another server in the same
        // process (tests, an embedder with two) must not inherit.
        Change::ResourceUpdated(uri) => {
            if !caps.resource_subscriptions {
                tracing::debug!(
                    %uri,
                    "resource_updated: resourceSubscriptions is not declared, so no client is subscribed"
                );
            }
            return true;
        }
    };
    if !declared {
        tracing::debug!("{name}: not declared under `notifications`; nothing sent");
    }
    declared
}

async fn deliver_declared(change: &Change) {
    match change {
        Change::ToolsListChanged => list_changed(Kind::Tools).await,
        Change::PromptsListChanged => list_changed(Kind::Prompts).await,
        Change::ResourcesListChanged => list_changed(Kind::Resources).await,
        Change::ResourceUpdated(uri) => resource_updated(uri).await,
    }
}

async fn resource_updated(uri: &str) {
    let peers: Vec<Peer<RoleServer>> = legacy_peers()
        .into_iter()
        .filter(|(session, _)| session.is_subscribed(uri))
        .map(|(_, peer)| peer)
        .collect();
    let notification = || {
        ServerNotification::ResourceUpdatedNotification(ResourceUpdatedNotification::new(
            ResourceUpdatedNotificationParam::new(uri.to_string()),
        ))
    };
    deliver(peers, notification).await;
    let listeners: Vec<(u64, SubscriptionSink)> = lock(&HUB.listeners)
        .iter()
        .filter(|(_, sink)| {
            sink.accepted()
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|known| known == uri))
        })
        .cloned()
        .collect();
    broadcast(listeners, notification).await;
}

async fn list_changed(kind: Kind) {
    let notification = move || match kind {
        Kind::Tools => {
            ServerNotification::ToolListChangedNotification(ToolListChangedNotification {
                method: Default::default(),
                extensions: Default::default(),
            })
        }
        Kind::Prompts => {
            ServerNotification::PromptListChangedNotification(PromptListChangedNotification {
                method: Default::default(),
                extensions: Default::default(),
            })
        }
        Kind::Resources => {
            ServerNotification::ResourceListChangedNotification(ResourceListChangedNotification {
                method: Default::default(),
                extensions: Default::default(),
            })
        }
    };
    let peers = legacy_peers().into_iter().map(|(_, peer)| peer).collect();
    deliver(peers, notification).await;
    let listeners: Vec<(u64, SubscriptionSink)> = lock(&HUB.listeners)
        .iter()
        .filter(|(_, sink)| {
            let accepted = sink.accepted();
            let flag = match kind {
                Kind::Tools => accepted.tools_list_changed,
                Kind::Prompts => accepted.prompts_list_changed,
                Kind::Resources => accepted.resources_list_changed,
            };
            flag == Some(true)
        })
        .cloned()
        .collect();
    broadcast(listeners, notification).await;
}

/// The live legacy sessions (closed ones are dropped from the registry).
fn legacy_peers() -> Vec<(Arc<Session>, Peer<RoleServer>)> {
    let mut legacy = lock(&HUB.legacy);
    legacy.retain(|(_, peer)| !peer.is_transport_closed());
    legacy.clone()
}

async fn deliver(peers: Vec<Peer<RoleServer>>, notification: impl Fn() -> ServerNotification) {
    let sends = peers.into_iter().map(|peer| {
        let notification = notification();
        async move {
            match tokio::time::timeout(SEND_TIMEOUT, peer.send_notification(notification)).await {
                Ok(Ok(())) => {}
                Ok(Err(ServiceError::TransportClosed)) => {}
                Ok(Err(e)) => tracing::warn!("cannot notify a session: {e}"),
                Err(_) => tracing::warn!("notifying a session timed out"),
            }
        }
    });
    join_all(sends).await;
}

async fn broadcast(
    listeners: Vec<(u64, SubscriptionSink)>,
    notification: impl Fn() -> ServerNotification,
) {
    let sends = listeners.into_iter().map(|(id, sink)| {
        let notification = notification();
        async move {
            match tokio::time::timeout(SEND_TIMEOUT, sink.send(notification)).await {
                Ok(Ok(())) => None,
                Ok(Err(
                    SubscriptionSendError::SubscriptionClosed
                    | SubscriptionSendError::Service(ServiceError::TransportClosed),
                )) => Some(id),
                Ok(Err(e)) => {
                    tracing::debug!(listener = id, "not sent to listener: {e}");
                    None
                }
                Err(_) => {
                    tracing::warn!(listener = id, "notifying a listener timed out");
                    None
                }
            }
        }
    });
    let closed: Vec<u64> = join_all(sends).await.into_iter().flatten().collect();
    if !closed.is_empty() {
        lock(&HUB.listeners).retain(|(id, _)| !closed.contains(id));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
