//! The HTTP stack of a server, built in one place: [`RouterOptions`] turns an [`McpServer`] into
//! rmcp's Streamable HTTP service with the legacy sessions of `sessions.rs` ([`Sessions`],
//! [`Admission`]) and the front of `http.rs` ([`http::Front`]), either as an `axum::Router`
//! serving MCP at `/mcp` ([`RouterOptions::into_router`], for an application's own server) or
//! as the tower service the command line's connection server runs (`serve --transport http`).
//! It decides what both share: the allowed `Host`s and `Origin`s (loopback by default), the
//! sessions' idle timeout and cap, rmcp's body limit, JSON answers for 2026-07-28 requests,
//! the [`Shutdown`] that ends sessions and streams, and authorization: with
//! [`RouterOptions::auth`] (or [`RouterOptions::verifier`]) the front verifies bearer tokens
//! (`guard.rs`) and the protected-resource metadata is served; a server whose spec declares
//! `auth` is never served without it ([`RouterOptions::try_into_router`]). For more than one
//! replica, [`RouterOptions::replica`] makes session ids name this replica (a proxy routes a
//! legacy session's requests by them) and [`RouterOptions::bus`] shares change notifications
//! over Redis (`bus.rs`).
//!
//! What only a standalone server has (the header read timeout, the connection cap, the serving
//! threads, the signals) is the command line's (`serve.rs`, `http::serve_connections`).

use std::{sync::Arc, time::Duration};

use axum::response::IntoResponse;
use rmcp::{
    ServerHandler,
    transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService},
};

use crate::{
    authorization::{AuthSettings, TokenVerifier, guard::Guard},
    notify,
    operations::operation::Operations,
    scope::Scope,
    server::{ConfigError, McpServer},
    shutdown::Shutdown,
    transport::{
        http,
        sessions::{self, Admission, Limits, Sessions},
    },
};

/// Why a server whose spec declares `auth` cannot be served without authorization configured
/// (the command line prefixes it with `error: `).
pub(crate) const AUTH_REQUIRED: &str = "this server's spec requires authorization: set --auth-issuer (or MCP_AUTH_ISSUER) and --auth-resource (or MCP_AUTH_RESOURCE)";

/// `Host` names always accepted (with any port): loopback.
pub const DEFAULT_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Browser `Origin`s always accepted: loopback, `http` and `https`, any port.
pub const DEFAULT_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// Where MCP is served unless [`RouterOptions::path`] says otherwise.
pub const DEFAULT_PATH: &str = "/mcp";

/// How the MCP endpoint is served over HTTP: the same defaults as `serve --transport http`
/// (`Host` and `Origin` checks that accept loopback only, legacy sessions closed after 30
/// minutes idle, at most 3,500 sessions, request bodies up to 4 MiB, MCP at `/mcp`), each
/// changeable here. The session limits and the body limit not set here are the spec's
/// (`limits.sessionIdleTimeoutMs`, `limits.maxSessions`, `limits.maxRequestBytes`) when it
/// declares them.
///
/// ```ignore
/// let options = RouterOptions::default()
///     .allow_host("mcp.example.com")
///     .allow_origin("https://app.example.com")
///     .session_idle_timeout(Duration::from_secs(600))
///     .max_sessions(10_000)
///     .max_request_body(1024 * 1024)
///     // `GET /healthz` and `GET /readyz` (503 while draining) in the router.
///     .health()
///     // One of several replicas behind a proxy: session ids start with `r1.`, and change
///     // notifications reach the other replicas' clients through Redis.
///     .replica("r1")
///     .bus(std::env::var("MCP_BUS")?);
/// let app = axum::Router::new()
///     .route("/healthz", get(|| async { "ok" }))
///     .merge(generated::router_with(state, options));
/// ```
#[derive(Debug, Clone)]
pub struct RouterOptions {
    hosts: Allowed,
    origins: Allowed,
    /// `None`: the spec's, else [`sessions::DEFAULT_IDLE_TIMEOUT`].
    idle_timeout: Option<Duration>,
    /// `None`: the spec's, else [`sessions::DEFAULT_MAX_SESSIONS`].
    max_sessions: Option<usize>,
    /// `None`: the spec's, else rmcp's 4 MiB.
    max_request_body: Option<usize>,
    /// Whether the router serves `/healthz` and `/readyz`.
    health: bool,
    path: String,
    shutdown: Shutdown,
    auth: Option<Auth>,
    replica: Option<String>,
    bus: Option<Bus>,
}

/// The notification bus's settings (the URL is never printed: it may hold a password).
#[derive(Clone)]
struct Bus {
    url: String,
    channel: Option<String>,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bus")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

/// The authorization server's settings and the verifier of its tokens.
#[derive(Clone)]
struct Auth {
    settings: AuthSettings,
    verifier: Arc<dyn TokenVerifier>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// Which `Host`s or `Origin`s pass: the defaults and these, or any.
#[derive(Debug, Clone)]
enum Allowed {
    Also(Vec<String>),
    Any,
}

impl Allowed {
    fn add(&mut self, more: impl IntoIterator<Item = String>) {
        if let Allowed::Also(list) = self {
            list.extend(more);
        }
    }
}

impl Default for RouterOptions {
    fn default() -> Self {
        RouterOptions {
            hosts: Allowed::Also(Vec::new()),
            origins: Allowed::Also(Vec::new()),
            idle_timeout: None,
            max_sessions: None,
            max_request_body: None,
            health: false,
            path: DEFAULT_PATH.to_string(),
            shutdown: Shutdown::new(),
            auth: None,
            replica: None,
            bus: None,
        }
    }
}

impl RouterOptions {
    /// Also accepts this `Host` header: a name or address (any port), or `name:port`. Loopback
    /// names ([`DEFAULT_HOSTS`]) are always accepted; any other `Host` gets `403 Forbidden`
    /// (DNS-rebinding protection). A public deployment names its hostnames here.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.hosts.add([host.into()]);
        self
    }

    /// [`RouterOptions::allow_host`] for each of `hosts`.
    pub fn allow_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.hosts.add(hosts.into_iter().map(Into::into));
        self
    }

    /// Accepts any `Host` header (no DNS-rebinding protection: for a server behind a proxy that
    /// checks it, say).
    pub fn allow_any_host(mut self) -> Self {
        self.hosts = Allowed::Any;
        self
    }

    /// Also accepts this browser `Origin` (`scheme://host`, `scheme://host:port` or
    /// `scheme://host:*`). Loopback origins ([`DEFAULT_ORIGINS`]) are always accepted, and a
    /// request without `Origin` (not from a browser) always passes; any other `Origin` gets
    /// `403 Forbidden`.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.add([origin.into()]);
        self
    }

    /// [`RouterOptions::allow_origin`] for each of `origins`.
    pub fn allow_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.origins.add(origins.into_iter().map(Into::into));
        self
    }

    /// Accepts any `Origin` header.
    pub fn allow_any_origin(mut self) -> Self {
        self.origins = Allowed::Any;
        self
    }

    /// Closes a legacy session (`Mcp-Session-Id`, protocol 2025-11-25 and earlier) after this
    /// long without a request while none of its streams is open (default: the spec's
    /// `limits.sessionIdleTimeoutMs`, else 30 minutes); a request naming it then gets `404` and
    /// the client initializes again.
    ///
    /// # Panics
    ///
    /// When `timeout` is zero.
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        assert!(
            !timeout.is_zero(),
            "the session idle timeout must be longer than zero"
        );
        self.idle_timeout = Some(timeout);
        self
    }

    /// At most `max` legacy sessions at once (default: the spec's `limits.maxSessions`, else
    /// 3,500; an idle one costs about 70 KiB): an `initialize` beyond them gets `503` with
    /// `Retry-After`, the open ones keep working.
    ///
    /// # Panics
    ///
    /// When `max` is zero.
    pub fn max_sessions(mut self, max: usize) -> Self {
        assert!(max > 0, "at least one session must be allowed");
        self.max_sessions = Some(max);
        self
    }

    /// Accepts request bodies of at most `bytes` (default: the spec's
    /// `limits.maxRequestBytes`, else 4 MiB); a larger one gets `413 Payload Too Large`.
    ///
    /// # Panics
    ///
    /// When `bytes` is zero.
    pub fn max_request_body(mut self, bytes: usize) -> Self {
        assert!(
            bytes > 0,
            "the request body limit must be at least one byte"
        );
        self.max_request_body = Some(bytes);
        self
    }

    /// Also serves the health endpoints in the router: `GET`/`HEAD /healthz` answers
    /// `200 ok` while the process serves, `/readyz` answers `200 ready`, or `503 draining`
    /// (with `Retry-After`) once the [`Shutdown`] began draining; other methods get `405`.
    /// Neither checks `Host` or `Origin` (load balancers probe by address). Off by default: an
    /// application that routes its own `/healthz` would otherwise have it twice (axum panics on
    /// a duplicate route). `serve --transport http` always serves them.
    pub fn health(mut self) -> Self {
        self.health = true;
        self
    }

    /// Serves MCP at `path` instead of `/mcp` (of the router [`RouterOptions::into_router`]
    /// builds; nesting that router under a prefix prefixes it too).
    ///
    /// # Panics
    ///
    /// When `path` does not start with `/`.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        assert!(path.starts_with('/'), "the MCP path must start with '/'");
        self.path = path;
        self
    }

    /// Names this replica of a server run behind a load balancer: every legacy session id it
    /// mints is `<name>.<uuid>` (without a replica, a bare uuid), so the proxy can send each
    /// request of a session to the replica that holds it by the `Mcp-Session-Id` prefix (the
    /// crate README's nginx `map`). A request naming a session this replica does not hold gets
    /// `404`, whatever replica the id names. The name is 1 to 32 of `a-z`, `0-9` and `-`,
    /// starting with a letter or digit; another name makes building the router fail (a
    /// [`ConfigError`] from [`RouterOptions::try_into_router`]).
    pub fn replica(mut self, name: impl Into<String>) -> Self {
        self.replica = Some(name.into());
        self
    }

    /// Shares change notifications with the other replicas over Redis Pub/Sub at `url`
    /// (`redis://host:port/db`, `redis://user:password@host:port/db`, `unix:///path`; no
    /// `rediss://`): what a handler raises through [`Notifier`](crate::Notifier) reaches this
    /// replica's clients at once and is published; what the others publish is delivered to this
    /// replica's sessions and listeners. Pub/Sub keeps nothing: while Redis cannot be reached,
    /// this replica's clients still get its own changes and the others' are missed (logged, and
    /// the bus reconnects with backoff). The channel is `mcpgen:<server name>:changes` unless
    /// [`RouterOptions::bus_channel`] names another. The bus is started when the router is built
    /// (inside the Tokio runtime, once per process); a malformed URL makes building it fail.
    pub fn bus(mut self, url: impl Into<String>) -> Self {
        let channel = self.bus.take().and_then(|bus| bus.channel);
        self.bus = Some(Bus {
            url: url.into(),
            channel,
        });
        self
    }

    /// The Redis channel of [`RouterOptions::bus`] instead of `mcpgen:<server name>:changes`
    /// (replicas of one server must share it; servers sharing a Redis must not).
    ///
    /// # Panics
    ///
    /// When called before [`RouterOptions::bus`].
    pub fn bus_channel(mut self, channel: impl Into<String>) -> Self {
        let bus = self
            .bus
            .as_mut()
            .expect("RouterOptions::bus_channel needs RouterOptions::bus first");
        bus.channel = Some(channel.into());
        self
    }

    /// Ends every session and open stream when `shutdown` is triggered (see [`Shutdown`]).
    pub fn shutdown(mut self, shutdown: &Shutdown) -> Self {
        self.shutdown = shutdown.clone();
        self
    }

    /// Makes the server an OAuth 2.1 resource server (MCP authorization) for tokens that
    /// `settings.issuer` issues for `settings.resource`, verified by the OAuth verifier (JWKS
    /// from the issuer's metadata, RFC 7662 introspection for opaque tokens): every request
    /// at the path is authorized before anything runs (`401`, `403` with the scopes the
    /// operation needs, `503` while the authorization server cannot be reached), and the
    /// protected-resource metadata is served at `/.well-known/oauth-protected-resource` and
    /// that path followed by the resource's path.
    #[cfg(feature = "auth")]
    pub fn auth(self, settings: AuthSettings) -> Self {
        let verifier = Arc::new(crate::authorization::oauth::OAuthVerifier::new(
            settings.clone(),
        ));
        self.verifier(settings, verifier)
    }

    /// [`RouterOptions::auth`] with tokens checked by `verifier` instead (tests, or an
    /// authorization scheme of the deployment's own).
    pub fn verifier(mut self, settings: AuthSettings, verifier: Arc<dyn TokenVerifier>) -> Self {
        self.auth = Some(Auth { settings, verifier });
        self
    }

    /// An `axum::Router` that serves `server` at the path (`/mcp`) and nothing else (with
    /// [`RouterOptions::auth`], also the protected-resource metadata): merge it into the
    /// application's router (`app.merge(router)`), whose other routes it leaves alone.
    ///
    /// # Panics
    ///
    /// When called outside a Tokio runtime (the sessions' expiry runs as a task on it), and
    /// when [`RouterOptions::try_into_router`] fails: the server's spec declares `auth` but no
    /// authorization is configured (`this server's spec requires authorization: …`), the
    /// configured resource is not an absolute `http(s)` URI, the replica name is not one
    /// [`RouterOptions::replica`] accepts, or the bus URL is not a Redis URL.
    pub fn into_router<H: ServerHandler + Clone>(self, server: McpServer<H>) -> axum::Router {
        self.try_into_router(server)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`RouterOptions::into_router`], or why the server cannot be served: its spec declares
    /// `auth` and no authorization is configured, the configured resource is not an
    /// absolute `http(s)` URI without a fragment, the replica name is malformed, or the bus
    /// URL is not a usable Redis URL.
    ///
    /// # Panics
    ///
    /// When called outside a Tokio runtime.
    pub fn try_into_router<H: ServerHandler + Clone>(
        self,
        server: McpServer<H>,
    ) -> Result<axum::Router, ConfigError> {
        let path = self.path.clone();
        let health = self.health.then(|| self.shutdown.clone());
        let (service, guard) = self.stack(server, None)?;
        let mut router = axum::Router::new().route_service(&path, service);
        if let Some(shutdown) = health {
            for probe in [http::HEALTHZ, http::READYZ] {
                let shutdown = shutdown.clone();
                router = router.route(
                    probe,
                    axum::routing::any(move |method: axum::http::Method| {
                        let shutdown = shutdown.clone();
                        async move {
                            http::health_answer(probe, &method, &shutdown).unwrap_or_else(|| {
                                axum::http::StatusCode::NOT_FOUND.into_response()
                            })
                        }
                    }),
                );
            }
        }
        if let Some(guard) = guard {
            let [root, resource] = guard.metadata_paths().clone();
            let paths = if root == resource {
                vec![root]
            } else {
                vec![root, resource]
            };
            for metadata_path in paths.into_iter().filter(|p| *p != path) {
                let guard = Arc::clone(&guard);
                router = router.route(
                    &metadata_path,
                    axum::routing::any(
                        move |method: axum::http::Method, headers: axum::http::HeaderMap| {
                            let guard = Arc::clone(&guard);
                            async move { http::metadata_answer(&guard, &method, &headers) }
                        },
                    ),
                );
            }
        }
        Ok(router)
    }

    /// The tower service of `serve --transport http`: the same stack as
    /// [`RouterOptions::into_router`], answering `404` off the path itself (a router for this
    /// one path cost about 5 % of a request's CPU), except at the metadata paths.
    pub(crate) fn into_service<H: ServerHandler + Clone>(
        self,
        server: McpServer<H>,
    ) -> Result<Service<H>, ConfigError> {
        let path = Arc::from(self.path.as_str());
        self.stack(server, Some(path)).map(|(service, _)| service)
    }

    /// The session limits and the body limit: these options' where set, else the spec's
    /// (`operations`), else the built-in defaults.
    fn resolve(&self, operations: &Operations) -> (Limits, usize) {
        let limits = Limits {
            idle_timeout: self
                .idle_timeout
                .or(operations
                    .session_idle_timeout_ms
                    .filter(|&ms| ms > 0)
                    .map(Duration::from_millis))
                .unwrap_or(sessions::DEFAULT_IDLE_TIMEOUT),
            max_sessions: self
                .max_sessions
                .or(operations
                    .max_sessions
                    .filter(|&n| n > 0)
                    .map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
                .unwrap_or(sessions::DEFAULT_MAX_SESSIONS as usize),
        };
        let max_body = self
            .max_request_body
            .or(operations
                .max_request_bytes
                .filter(|&n| n > 0)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
            .unwrap_or(StreamableHttpServerConfig::default().max_request_body_bytes);
        (limits, max_body)
    }

    /// rmcp's configuration for these options, with the body limit `max_body`.
    fn config(&self, max_body: usize) -> StreamableHttpServerConfig {
        // A 2026-07-28 request whose handler sends nothing before its answer gets that answer as
        // `application/json` (no SSE framing); progress or log messages first switch the
        // response to `text/event-stream`, so nothing is lost. Legacy sessions keep their
        // streams.
        let mut config = StreamableHttpServerConfig::default()
            .with_json_response(true)
            .with_max_request_body_bytes(max_body);
        config.cancellation_token = self.shutdown.cancellation_token();
        config = match &self.hosts {
            Allowed::Any => config.disable_allowed_hosts(),
            Allowed::Also(more) => config.with_allowed_hosts(
                DEFAULT_HOSTS
                    .iter()
                    .map(|h| h.to_string())
                    .chain(more.iter().cloned()),
            ),
        };
        match &self.origins {
            Allowed::Any => config.disable_allowed_origins(),
            Allowed::Also(more) => config
                .with_allowed_origins(
                    DEFAULT_ORIGINS
                        .iter()
                        .map(|o| o.to_string())
                        .chain(more.iter().cloned()),
                )
                .enforce_origin_validation(),
        }
    }

    /// Checks the replica name and starts the notification bus of `scope`'s server (if
    /// configured; once per server, see `bus::start`).
    fn start_replica(&self, scope: &Scope) -> Result<(), ConfigError> {
        if let Some(name) = &self.replica {
            sessions::valid_replica(name).map_err(ConfigError::new)?;
        }
        if (self.replica.is_some() || self.bus.is_some()) && scope.policy().is_ephemeral() {
            tracing::warn!(
                "a replica with a requestState key of its own (neither MCP_REQUEST_STATE_KEYS nor MCP_REQUEST_STATE_KEYS_FILE is set): the other replicas cannot open the states it seals; set the same keys on every replica"
            );
        }
        if let Some(bus) = &self.bus {
            let channel = bus
                .channel
                .clone()
                .unwrap_or_else(|| notify::default_channel(scope.hub().name()));
            notify::start_bus(scope.hub(), &bus.url, channel).map_err(ConfigError::new)?;
        }
        Ok(())
    }

    /// The stack, and the authorization policy it enforces (if configured).
    fn stack<H: ServerHandler + Clone>(
        self,
        server: McpServer<H>,
        path: Option<Arc<str>>,
    ) -> Result<(Service<H>, Option<Arc<Guard>>), ConfigError> {
        let guard = match &self.auth {
            Some(auth) => Some(Arc::new(
                Guard::new(&auth.settings, Arc::clone(&auth.verifier), server.access())
                    .map_err(ConfigError::new)?,
            )),
            None if server.access().declared => return Err(ConfigError::new(AUTH_REQUIRED)),
            None => None,
        };
        self.start_replica(server.scope())?;
        let (limits, max_body) = self.resolve(server.operations());
        let config = self.config(max_body);
        let scope = server.scope().clone();
        let server = server.with_shutdown(&self.shutdown);
        let sessions = Sessions::new(limits, self.replica.as_deref().map(Arc::from));
        // One server (and so one session) per legacy session or stateless request.
        let service =
            StreamableHttpService::new(move || Ok(server.clone()), Arc::clone(&sessions), config);
        let front = http::Front::new(
            Admission(service),
            sessions,
            scope,
            max_body,
            path,
            guard.clone(),
            self.shutdown,
        );
        Ok((front, guard))
    }
}

/// The whole HTTP stack of a server (what [`RouterOptions`] builds).
pub(crate) type Service<H> =
    http::Front<Admission<StreamableHttpService<McpServer<H>, Sessions>>, Sessions>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_loopback_hosts_and_origins_and_json_answers() {
        let config = RouterOptions::default().config(4 << 20);
        assert_eq!(config.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
        assert_eq!(
            config.allowed_origins,
            [
                "http://localhost:*",
                "https://localhost:*",
                "http://127.0.0.1:*",
                "https://127.0.0.1:*",
                "http://[::1]:*",
                "https://[::1]:*",
            ]
        );
        assert!(config.json_response);
        let options = RouterOptions::default();
        let (limits, max_body) = options.resolve(&Operations::NONE);
        assert_eq!(limits.idle_timeout, Duration::from_secs(1800));
        assert_eq!(limits.max_sessions, 3500);
        assert_eq!(max_body, 4 * 1024 * 1024);
        assert_eq!(
            options.config(max_body).max_request_body_bytes,
            4 * 1024 * 1024
        );
        assert_eq!(options.path, "/mcp");
        assert!(!options.health);
    }

    #[test]
    fn allowed_hosts_and_origins_add_to_the_defaults_until_any_is_allowed() {
        let config = RouterOptions::default()
            .allow_host("mcp.example.com")
            .allow_hosts(["10.0.0.5", "b.example:8443"])
            .allow_origin("https://app.example.com")
            .config(1024);
        assert_eq!(
            config.allowed_hosts,
            [
                "localhost",
                "127.0.0.1",
                "::1",
                "mcp.example.com",
                "10.0.0.5",
                "b.example:8443"
            ]
        );
        assert_eq!(
            config.allowed_origins.last().map(String::as_str),
            Some("https://app.example.com")
        );
        let any = RouterOptions::default()
            .allow_any_host()
            .allow_host("ignored.example")
            .allow_any_origin()
            .allow_origin("https://ignored.example")
            .config(1024);
        assert!(any.allowed_hosts.is_empty(), "{:?}", any.allowed_hosts);
        assert!(any.allowed_origins.is_empty(), "{:?}", any.allowed_origins);
    }

    #[test]
    fn the_shutdown_handle_is_the_token_rmcp_watches() {
        let shutdown = Shutdown::new();
        let config = RouterOptions::default().shutdown(&shutdown).config(1024);
        assert!(!config.cancellation_token.is_cancelled());
        shutdown.clone().trigger();
        assert!(config.cancellation_token.is_cancelled());
        assert!(shutdown.is_triggered());
    }

    /// Flag (these options) over the spec's `limits` over the built-in defaults, each limit on
    /// its own.
    #[test]
    fn limits_not_set_here_are_the_specs_then_the_defaults() {
        static SPEC: Operations = Operations {
            max_request_bytes: Some(2048),
            max_sessions: Some(7),
            session_idle_timeout_ms: Some(90_000),
            ..Operations::NONE
        };
        let (limits, max_body) = RouterOptions::default().resolve(&SPEC);
        assert_eq!(limits.idle_timeout, Duration::from_secs(90));
        assert_eq!(limits.max_sessions, 7);
        assert_eq!(max_body, 2048);
        let options = RouterOptions::default()
            .session_idle_timeout(Duration::from_secs(5))
            .max_sessions(3)
            .max_request_body(65_536);
        let (limits, max_body) = options.resolve(&SPEC);
        assert_eq!(limits.idle_timeout, Duration::from_secs(5));
        assert_eq!(limits.max_sessions, 3);
        assert_eq!(max_body, 65_536);
        assert_eq!(options.config(max_body).max_request_body_bytes, 65_536);
        static ONLY_BODY: Operations = Operations {
            max_request_bytes: Some(1024),
            ..Operations::NONE
        };
        let (limits, max_body) = RouterOptions::default().max_sessions(9).resolve(&ONLY_BODY);
        assert_eq!(limits.idle_timeout, Duration::from_secs(1800));
        assert_eq!(limits.max_sessions, 9);
        assert_eq!(max_body, 1024);
    }

    #[test]
    fn a_replica_name_is_kept_and_a_bus_url_is_never_printed() {
        let options = RouterOptions::default()
            .replica("r1")
            .bus("redis://user:hunter2@127.0.0.1:6379/0")
            .bus_channel("mcpgen:fleet:changes");
        assert_eq!(options.replica.as_deref(), Some("r1"));
        let printed = format!("{options:?}");
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(
            printed.contains(r#"Bus { channel: Some("mcpgen:fleet:changes"), .. }"#),
            "{printed}"
        );
        let default = RouterOptions::default();
        assert_eq!(default.replica, None);
        assert!(default.bus.is_none());
    }

    /// A bad replica name or bus URL stops the router from being built (and starts nothing).
    #[tokio::test]
    async fn a_bad_replica_name_or_bus_url_is_a_config_error() {
        let scope = crate::scope::Scope::of("replica-test", Default::default()).unwrap();
        assert_eq!(
            RouterOptions::default()
                .replica("r1.eu")
                .start_replica(&scope),
            Err(ConfigError::new(
                "invalid replica name 'r1.eu': use 1 to 32 of a-z, 0-9 and '-', starting with a letter or digit"
            ))
        );
        assert_eq!(
            RouterOptions::default()
                .replica("r1")
                .bus("rediss://user:hunter2@redis.example:6380/0")
                .start_replica(&scope),
            Err(ConfigError::new(
                "--bus: TLS to Redis (rediss://) is not supported; reach Redis over a private network or through a TLS sidecar (stunnel, spiped) with a redis:// URL"
            ))
        );
        assert_eq!(
            RouterOptions::default().replica("r1").start_replica(&scope),
            Ok(())
        );
    }

    #[test]
    #[should_panic(expected = "RouterOptions::bus_channel needs RouterOptions::bus first")]
    fn a_bus_channel_needs_a_bus() {
        let _ = RouterOptions::default().bus_channel("c");
    }

    #[test]
    #[should_panic(expected = "the session idle timeout must be longer than zero")]
    fn a_zero_idle_timeout_is_refused() {
        let _ = RouterOptions::default().session_idle_timeout(Duration::ZERO);
    }

    #[test]
    #[should_panic(expected = "the request body limit must be at least one byte")]
    fn a_zero_body_limit_is_refused() {
        let _ = RouterOptions::default().max_request_body(0);
    }

    #[test]
    #[should_panic(expected = "the MCP path must start with '/'")]
    fn a_relative_path_is_refused() {
        let _ = RouterOptions::default().path("mcp");
    }
}
