//! The deployment's side of authorization: which authorization server issues the tokens this
//! server accepts and for which resource ([`AuthSettings`], from flags or `MCP_AUTH_*`), and the
//! seam a token is verified through ([`TokenVerifier`]; the OAuth one, with JWKS and RFC 7662
//! introspection, is `oauth.rs`). The spec never names an authorization server: it says what is
//! required ([`Access`](principal::Access)).

pub(crate) mod guard;
#[cfg(feature = "auth")]
pub(crate) mod oauth;
pub(crate) mod principal;

use std::{pin::Pin, sync::Arc, time::Duration};

use crate::authorization::principal::Principal;

/// Default clock leeway for `exp` and `nbf`.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// Where tokens come from and what they must be for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSettings {
    /// The authorization server's issuer identifier (`--auth-issuer`, `MCP_AUTH_ISSUER`): tokens
    /// must carry exactly this `iss`; its RFC 8414 (or OpenID) metadata names the JWKS.
    pub issuer: String,
    /// This server's canonical URI (`--auth-resource`, `MCP_AUTH_RESOURCE`): the `resource` of
    /// the protected-resource metadata and the audience every token must contain.
    pub resource: String,
    /// The JWKS to use instead of the one the metadata names (`--auth-jwks-uri`).
    pub jwks_uri: Option<String>,
    /// RFC 7662 introspection for opaque tokens (`--auth-introspection-url`).
    pub introspection: Option<Introspection>,
    /// Clock leeway for `exp` and `nbf` (`--auth-leeway`, default [`DEFAULT_LEEWAY`]).
    pub leeway: Duration,
    /// Also accept JWTs typed `JWT` or untyped (`--auth-allow-jwt-typ`); by default only
    /// `at+jwt` (RFC 9068) passes.
    pub allow_jwt_typ: bool,
    /// Send JWT access tokens to introspection too (`--auth-introspect-jwts`): introspection
    /// then decides every token, so a revoked JWT is refused once the cached answer of its
    /// last check lapses (at most a minute) instead of when it expires. Needs `introspection`;
    /// without it every JWT is refused.
    pub introspect_jwts: bool,
}

/// The introspection endpoint and this server's credentials for it.
#[derive(Clone, PartialEq, Eq)]
pub struct Introspection {
    /// The endpoint (RFC 7662); `--auth-introspection-url`.
    pub url: String,
    /// This server's client id there (`MCP_AUTH_CLIENT_ID`).
    pub client_id: String,
    /// Its secret (`MCP_AUTH_CLIENT_SECRET`); never logged.
    pub client_secret: String,
}

impl std::fmt::Debug for Introspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Introspection")
            .field("url", &self.url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl AuthSettings {
    /// Tokens from `issuer` for `resource`, with the defaults.
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> Self {
        AuthSettings {
            issuer: issuer.into(),
            resource: resource.into(),
            jwks_uri: None,
            introspection: None,
            leeway: DEFAULT_LEEWAY,
            allow_jwt_typ: false,
            introspect_jwts: false,
        }
    }
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The token is not valid for this server (`401`, `error="invalid_token"`); the text is for
    /// the server's log only.
    Invalid(String),
    /// It cannot be checked now (the authorization server's keys or introspection endpoint are
    /// unreachable): `503`, never a pass.
    Unavailable(String),
}

/// A verification in progress.
pub type Verifying<'a> =
    Pin<Box<dyn Future<Output = Result<Arc<Principal>, Rejection>> + Send + 'a>>;

/// Turns a bearer token into the verified caller. The OAuth verifier (`oauth.rs`) is what the
/// command line and [`RouterOptions`](crate::RouterOptions) use; tests and unusual deployments may bring their
/// own.
pub trait TokenVerifier: Send + Sync + 'static {
    /// The principal `token` stands for, or why not.
    fn verify<'a>(&'a self, token: &'a str) -> Verifying<'a>;
}
