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
        Arc, Mutex, OnceLock,
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
pub(crate) fn start_bus(hub: &Arc<Hub>, url: &str, channel: String) -> Result<(), String> {
    #[cfg(feature = "bus")]
    return bus::start(hub, url, channel);
    #[cfg(not(feature = "bus"))]
    {
        let _ = (hub, url, channel);
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

/// One server's registry of sessions and listeners (and its bus), shared by every server of
/// that name in the process ([`hub`]): a change raised through one server's [`Notifier`]
/// reaches that server's clients only.
#[derive(Default)]
pub(crate) struct Hub {
    /// The server's name (the bus's default channel is `mcpgen:<name>:changes`).
    name: String,
    /// The declared notifications (set when the first server of this name is built; all
    /// `false` before).
    capabilities: OnceLock<Capabilities>,
    legacy: Mutex<Vec<(Arc<Session>, Peer<RoleServer>)>>,
    listeners: Mutex<Vec<(u64, SubscriptionSink)>>,
    /// The notification bus of this server (`--bus`), started once.
    #[cfg(feature = "bus")]
    bus: OnceLock<bus::Bus>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The hubs of this process, one per server name.
static HUBS: Mutex<Vec<Arc<Hub>>> = Mutex::new(Vec::new());

/// Listener ids, unique in the process.
static NEXT_LISTENER: AtomicU64 = AtomicU64::new(0);

/// The hub of the server `name` (made on first use; see [`Hub`]).
pub(crate) fn hub(name: &str) -> Arc<Hub> {
    let mut hubs = lock(&HUBS);
    if let Some(hub) = hubs.iter().find(|hub| hub.name == name) {
        return Arc::clone(hub);
    }
    let hub = Arc::new(Hub {
        name: name.to_string(),
        ..Hub::default()
    });
    hubs.push(Arc::clone(&hub));
    hub
}

/// Drops the registrations of legacy sessions whose connection has closed, in every hub
/// (called when a Streamable HTTP session ends, so an expired or deleted session leaves
/// nothing behind).
pub(crate) fn forget_closed() {
    let hubs: Vec<Arc<Hub>> = lock(&HUBS).clone();
    for hub in hubs {
        lock(&hub.legacy).retain(|(_, peer)| !peer.is_transport_closed());
    }
}

impl Hub {
    /// Records the server's declared capabilities (by the first server of this name built).
    pub(crate) fn configure(&self, capabilities: Capabilities) {
        if self.capabilities.set(capabilities).is_err() {
            tracing::debug!(server = %self.name, "notification capabilities already configured");
        }
    }

    /// The server's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The declared capabilities (all `false` before the server was built).
    pub(crate) fn capabilities(&self) -> Capabilities {
        self.capabilities.get().copied().unwrap_or_default()
    }

    /// Registers an initialized legacy session (from `notifications/initialized`).
    pub(crate) fn register_legacy(&self, session: Arc<Session>, peer: Peer<RoleServer>) {
        let mut legacy = lock(&self.legacy);
        legacy.retain(|(_, peer)| !peer.is_transport_closed());
        if legacy.iter().any(|(known, _)| Arc::ptr_eq(known, &session)) {
            return;
        }
        legacy.push((session, peer));
    }

    /// Keeps a `subscriptions/listen` stream registered until it ends.
    pub(crate) async fn listen(&self, subscription: rmcp::service::SubscriptionContext) {
        let id = NEXT_LISTENER.fetch_add(1, Ordering::Relaxed);
        lock(&self.listeners).push((id, subscription.sink().clone()));
        tracing::debug!(listener = id, accepted = ?subscription.accepted(), "subscriptions/listen: stream open");
        subscription.cancelled().await;
        lock(&self.listeners).retain(|(known, _)| *known != id);
        tracing::debug!(listener = id, "subscriptions/listen: stream closed");
    }

    /// The live legacy sessions (closed ones are dropped from the registry).
    fn legacy_peers(&self) -> Vec<(Arc<Session>, Peer<RoleServer>)> {
        let mut legacy = lock(&self.legacy);
        legacy.retain(|(_, peer)| !peer.is_transport_closed());
        legacy.clone()
    }
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

/// Sends change notifications to the connected clients: legacy sessions and 2026-07-28
/// `subscriptions/listen` streams.
///
/// Each method is a no-op (logged at debug level) unless the spec declares that kind under
/// `notifications` (`toolsListChanged`, `promptsListChanged`, `resourcesListChanged`,
/// `resourceSubscriptions`). Delivery failures are logged, never returned.
///
/// Each server has its own: `ctx.notifier()` in a handler, [`McpServer::notifier`](crate::McpServer::notifier),
/// or [`Notifier::of`] by the server's name (for a task of the application's own). Servers of
/// the same name in one process share their clients.
#[derive(Debug, Clone)]
pub struct Notifier {
    hub: Arc<Hub>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tools,
    Prompts,
    Resources,
}

impl Notifier {
    /// The notifier of the server named `server_name` (its spec's `name`) in this process: a
    /// no-op until a server of that name is built.
    pub fn of(server_name: &str) -> Notifier {
        Notifier::to(hub(server_name))
    }

    /// The notifier of `hub`'s clients.
    pub(crate) fn to(hub: Arc<Hub>) -> Notifier {
        Notifier { hub }
    }

    /// `notifications/tools/list_changed` to every client (declared by `toolsListChanged`).
    pub async fn tools_list_changed(&self) {
        change(&self.hub, Change::ToolsListChanged).await;
    }

    /// `notifications/prompts/list_changed` to every client (declared by `promptsListChanged`).
    pub async fn prompts_list_changed(&self) {
        change(&self.hub, Change::PromptsListChanged).await;
    }

    /// `notifications/resources/list_changed` to every client (declared by
    /// `resourcesListChanged`).
    pub async fn resources_list_changed(&self) {
        change(&self.hub, Change::ResourcesListChanged).await;
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
        change(&self.hub, Change::ResourceUpdated(uri.into())).await;
    }
}

/// A change raised through [`Notifier`]: delivered here, then published on the bus (when one
/// is configured); nothing at all when its kind is not declared.
async fn change(hub: &Hub, change: Change) {
    if !declared(hub, &change) {
        return;
    }
    deliver_declared(hub, &change).await;
    #[cfg(feature = "bus")]
    if let Some(bus) = hub.bus.get() {
        bus.publish(&change);
    }
}

/// Delivers `change` to this process's sessions and listeners (a change raised here, or one
/// another replica published on the bus); nothing when its kind is not declared.
#[cfg(feature = "bus")]
pub(crate) async fn deliver_local(hub: &Hub, change: &Change) {
    if declared(hub, change) {
        deliver_declared(hub, change).await;
    }
}

/// Whether the spec declares `change`'s kind (logged at debug level when not).
fn declared(hub: &Hub, change: &Change) -> bool {
    let caps = hub.capabilities();
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

async fn deliver_declared(hub: &Hub, change: &Change) {
    match change {
        Change::ToolsListChanged => list_changed(hub, Kind::Tools).await,
        Change::PromptsListChanged => list_changed(hub, Kind::Prompts).await,
        Change::ResourcesListChanged => list_changed(hub, Kind::Resources).await,
        Change::ResourceUpdated(uri) => resource_updated(hub, uri).await,
    }
}

async fn resource_updated(hub: &Hub, uri: &str) {
    let peers: Vec<Peer<RoleServer>> = hub
        .legacy_peers()
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
    let listeners: Vec<(u64, SubscriptionSink)> = lock(&hub.listeners)
        .iter()
        .filter(|(_, sink)| {
            sink.accepted()
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|known| known == uri))
        })
        .cloned()
        .collect();
    broadcast(hub, listeners, notification).await;
}

async fn list_changed(hub: &Hub, kind: Kind) {
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
    let peers = hub
        .legacy_peers()
        .into_iter()
        .map(|(_, peer)| peer)
        .collect();
    deliver(peers, notification).await;
    let listeners: Vec<(u64, SubscriptionSink)> = lock(&hub.listeners)
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
    broadcast(hub, listeners, notification).await;
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
    hub: &Hub,
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
        lock(&hub.listeners).retain(|(id, _)| !closed.contains(id));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
