//! The OAuth 2.1 resource server's token check: [`OAuthVerifier`], the [`TokenVerifier`] the HTTP
//! front uses when the deployment names an authorization server ([`AuthSettings`]).
//!
//! - **JWT access tokens** (RFC 9068) are verified against the authorization server's JWKS, found
//!   through its RFC 8414 metadata (`/.well-known/oauth-authorization-server`, then OpenID
//!   discovery; the document's `issuer` must be the configured one exactly) unless
//!   [`AuthSettings::jwks_uri`] names it. Only asymmetric algorithms pass (RS256/384/512,
//!   PS256/384/512, ES256, ES384, EdDSA; never `none`, never HS*), each key for its own family
//!   (and its own `alg` when the JWK names one); `typ` must be `at+jwt` unless
//!   [`AuthSettings::allow_jwt_typ`]; `iss` must be exactly the issuer (a string), `aud` must
//!   contain exactly the resource, `exp` and `sub` are required, `exp`/`nbf` are checked with the
//!   settings' leeway.
//! - **Opaque tokens** (anything that is not three base64url parts) go to RFC 7662 introspection
//!   when [`AuthSettings::introspection`] is set (else they are invalid): `active` must be true,
//!   `aud` must contain the resource, `iss` (if present) must be the issuer, `exp`/`nbf` as
//!   above; answers are cached for at most a minute. So does a JWT whose `kid` no published key
//!   has, even after a JWKS refresh (an authorization server may sign with keys it does not
//!   publish), at most 20 a second (beyond them, and without introspection, it is invalid).
//!
//! Keys are a wait-free snapshot ([`ArcSwapOption`]), fetched lazily by the first verification
//! (so [`OAuthVerifier::new`] never blocks), refreshed when a token names an unknown `kid` (at
//! most once a minute, one fetch for all concurrent misses) and when the snapshot is older than
//! the JWKS response's `Cache-Control: max-age` (bounded to 1–60 minutes, 10 when absent). The
//! HTTP server runs one current-thread Tokio runtime per thread, so nothing here is a background
//! task: refreshes happen inside a `verify` call, with an HTTP client built for each fetch.
//! Verified tokens are cached by their SHA-256 (bounded), so a repeated token costs a hash and a
//! time check; the cache is cleared when a refresh drops a key.
//!
//! Everything fails closed: no keys (the authorization server unreachable) or a failing
//! introspection endpoint is [`Rejection::Unavailable`]; any other failure is
//! [`Rejection::Invalid`] with the check that failed (for the server's log).

use std::{
    net::IpAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use arc_swap::ArcSwapOption;
use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use jsonwebtoken::{
    Algorithm, DecodingKey, Validation,
    errors::ErrorKind,
    jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyOperations, PublicKeyUse},
};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::{
    authorization::{
        AuthSettings, Introspection, Rejection, TokenVerifier, Verifying, principal::Principal,
    },
    tls,
};

/// The signature algorithms a token may use.
const ALLOWED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];
/// At most one JWKS refresh for an unknown `kid` in this time.
const UNKNOWN_KID_INTERVAL: Duration = Duration::from_secs(60);
/// After a failed fetch, the next attempt waits this long (requests meanwhile fail closed).
const RETRY_INTERVAL: Duration = Duration::from_secs(5);
/// The JWKS is refetched after its `Cache-Control: max-age`, bounded to this range ...
const MIN_REFRESH: Duration = Duration::from_secs(60);
const MAX_REFRESH: Duration = Duration::from_secs(3600);
/// ... or after this when the response names none.
const DEFAULT_REFRESH: Duration = Duration::from_secs(600);
/// One fetch (connect, request, body) takes at most this long.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest metadata, JWKS or introspection answer read.
const MAX_BODY: usize = 1 << 20;
/// How many verified tokens are remembered.
const CACHE_CAPACITY: usize = 10_000;
/// A positive introspection answer is reused for at most this long.
const INTROSPECTION_TTL: Duration = Duration::from_secs(60);
/// JWTs whose key is unknown even after a JWKS refresh go to introspection (when it is
/// configured) at most this many times per window: forged tokens with made-up `kid`s must not
/// turn the server into a flood of requests to the authorization server.
const FALLBACKS: (u32, Duration) = (20, Duration::from_secs(1));

/// The OAuth token verifier: JWTs by the authorization server's JWKS, opaque tokens by RFC 7662
/// introspection (see the module documentation for the rules).
pub struct OAuthVerifier {
    settings: AuthSettings,
    /// The template every key's [`Validation`] is made from (issuer, audience, leeway, claims).
    validation: Validation,
    /// The usable keys, once fetched.
    keys: ArcSwapOption<KeySet>,
    /// Single-flight for fetches: whoever holds it fetches, the others wait and look again.
    fetch: tokio::sync::Mutex<FetchState>,
    /// Verified tokens by the SHA-256 of the token.
    verified: quick_cache::sync::Cache<[u8; 32], Arc<Verified>>,
    /// The introspections of JWTs with an unknown key: at most `limit.0` per `limit.1`,
    /// counted in the window that began at `window.0`.
    fallback_limit: (u32, Duration),
    fallbacks: std::sync::Mutex<(Instant, u32)>,
}

impl std::fmt::Debug for OAuthVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthVerifier")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// One JWKS, as usable keys.
struct KeySet {
    keys: Vec<Key>,
    /// When it was fetched, and how long it is fresh.
    fetched: Instant,
    fresh_for: Duration,
    /// Counts successful fetches (a waiter that sees it changed does not fetch again).
    generation: u64,
}

/// A key that may verify tokens.
struct Key {
    kid: Option<String>,
    key: DecodingKey,
    /// The settings' checks with the algorithms this key allows.
    validation: Validation,
}

/// What the fetching side remembers (behind [`OAuthVerifier::fetch`]).
#[derive(Default)]
struct FetchState {
    /// The JWKS URI the metadata named (kept until a JWKS fetch fails).
    discovered: Option<String>,
    last_attempt: Option<Instant>,
    /// The last refresh an unknown `kid` caused.
    last_kid_refresh: Option<Instant>,
    /// Why the last attempt failed, if it did.
    last_error: Option<String>,
    generation: u64,
}

/// A verified token in the cache.
struct Verified {
    principal: Arc<Principal>,
    exp: Option<u64>,
    nbf: Option<u64>,
    /// Introspection answers are reused only until then.
    until: Option<Instant>,
}

/// Why the keys are being fetched.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cause {
    /// None have been fetched yet (or every fetch so far failed).
    NoKeys,
    /// A token names a `kid` the snapshot does not have.
    UnknownKid,
    /// The snapshot is older than its `max-age`.
    Stale,
}

/// Why [`OAuthVerifier::key_for`] has no key.
enum Miss {
    /// No key has the token's `kid` (and the JWKS was refreshed, or may not be yet).
    Unknown(Rejection),
    /// Anything else: the keys are unavailable, or the `kid` is another algorithm's.
    Other(Rejection),
}

/// A key lookup in one snapshot.
enum Lookup {
    Found(usize),
    /// The `kid` is known, but not for this algorithm.
    WrongAlg,
    Unknown,
}

/// The part of a JOSE header this module reads (jsonwebtoken parses it again, typed).
#[derive(Deserialize)]
struct JoseHeader {
    alg: String,
    #[serde(default)]
    typ: Option<String>,
    #[serde(default)]
    kid: Option<String>,
    #[serde(default)]
    crit: Option<Value>,
}

impl OAuthVerifier {
    /// A verifier for `settings`. Nothing is fetched until the first token arrives.
    pub fn new(settings: AuthSettings) -> Self {
        // jsonwebtoken picks its crypto backend from its features and panics when both are
        // enabled (feature unification in a bigger build can do that): name ours explicitly. An
        // error means a provider is already installed, which is as good.
        let _ = jsonwebtoken::crypto::rust_crypto::DEFAULT_PROVIDER.install_default();
        for url in [Some(&settings.issuer), settings.jwks_uri.as_ref()]
            .into_iter()
            .flatten()
            .chain(settings.introspection.as_ref().map(|i| &i.url))
        {
            if let Err(e) = checked_url(url) {
                tracing::warn!("authorization: {e}; every token will be refused");
            }
        }
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[&settings.issuer]);
        validation.set_audience(&[&settings.resource]);
        validation.leeway = settings.leeway.as_secs();
        validation.validate_nbf = true;
        OAuthVerifier {
            settings,
            validation,
            keys: ArcSwapOption::empty(),
            fetch: tokio::sync::Mutex::new(FetchState::default()),
            verified: quick_cache::sync::Cache::new(CACHE_CAPACITY),
            fallback_limit: FALLBACKS,
            fallbacks: std::sync::Mutex::new((Instant::now(), 0)),
        }
    }

    /// Whether one more JWT with an unknown key may be introspected now ([`FALLBACKS`]).
    fn may_fall_back(&self) -> bool {
        let (limit, window) = self.fallback_limit;
        let mut fallbacks = self
            .fallbacks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        if now.duration_since(fallbacks.0) >= window {
            *fallbacks = (now, 0);
        }
        if fallbacks.1 >= limit {
            return false;
        }
        fallbacks.1 += 1;
        true
    }

    /// A JWT whose key is unknown after a JWKS refresh (`why`): the authorization server's
    /// introspection decides when it is configured (it may sign with keys it does not publish),
    /// within [`FALLBACKS`]; otherwise, or beyond them, the token is invalid.
    async fn unknown_key(&self, token: &str, why: Rejection) -> Result<Verified, Rejection> {
        let Some(introspection) = &self.settings.introspection else {
            return Err(why);
        };
        if !self.may_fall_back() {
            let (limit, window) = self.fallback_limit;
            let Rejection::Invalid(reason) = why else {
                return Err(why);
            };
            return Err(invalid(format!(
                "{reason}; not introspected: more than {limit} such tokens in {} ms",
                window.as_millis()
            )));
        }
        tracing::debug!("authorization: a JWT's key is unknown; asking introspection");
        self.introspect(token, introspection).await
    }

    /// The principal `token` stands for, or why not.
    async fn check(&self, token: &str) -> Result<Arc<Principal>, Rejection> {
        // With `introspect_jwts`, introspection decides for every token.
        let jwt = jwt_shaped(token) && !self.settings.introspect_jwts;
        if jwt {
            self.refresh_if_stale().await;
        }
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(hit) = self.verified.get(&digest) {
            if hit.until.is_none_or(|until| Instant::now() < until) {
                self.times(hit.exp, hit.nbf)?;
                return Ok(hit.principal.clone());
            }
            self.verified.remove(&digest);
        }
        let verified = if jwt {
            self.verify_jwt(token).await?
        } else if let Some(introspection) = &self.settings.introspection {
            self.introspect(token, introspection).await?
        } else if self.settings.introspect_jwts {
            return Err(invalid(
                "JWTs are to be introspected, and no introspection endpoint is configured",
            ));
        } else {
            return Err(invalid(
                "not a JWT, and no introspection endpoint is configured",
            ));
        };
        let principal = verified.principal.clone();
        self.verified.insert(digest, Arc::new(verified));
        Ok(principal)
    }

    /// `exp` and `nbf` against the clock, with the leeway (jsonwebtoken's rule: valid through
    /// `exp + leeway`, from `nbf - leeway`).
    fn times(&self, exp: Option<u64>, nbf: Option<u64>) -> Result<(), Rejection> {
        let now = jsonwebtoken::get_current_timestamp();
        let leeway = self.settings.leeway.as_secs();
        if exp.is_some_and(|exp| exp.saturating_add(leeway) < now) {
            return Err(invalid("expired (exp)"));
        }
        if nbf.is_some_and(|nbf| nbf > now.saturating_add(leeway)) {
            return Err(invalid("not yet valid (nbf)"));
        }
        Ok(())
    }

    /// Signature and claims of a JWT.
    async fn verify_jwt(&self, token: &str) -> Result<Verified, Rejection> {
        let header = jose_header(token)?;
        let Some(alg) = header
            .alg
            .parse::<Algorithm>()
            .ok()
            .filter(|alg| ALLOWED.contains(alg))
        else {
            return Err(invalid(format!("alg {:?} is not allowed", header.alg)));
        };
        if header.crit.is_some() {
            return Err(invalid("crit header parameters are not supported"));
        }
        if !self.typ_allowed(header.typ.as_deref()) {
            return Err(invalid(format!(
                "typ {:?} is not at+jwt",
                header.typ.as_deref().unwrap_or("")
            )));
        }
        let kid = header.kid.as_deref();
        let (set, index) = match self.key_for(kid, alg).await {
            Ok(found) => found,
            Err(Miss::Unknown(why)) => return self.unknown_key(token, why).await,
            Err(Miss::Other(why)) => return Err(why),
        };
        let key = &set.keys[index];
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key.key, &key.validation)
            .map_err(|e| invalid(jwt_error(e.kind())))?;
        let mut claims = data.claims;
        match claims.get("iss") {
            Some(Value::String(iss)) if *iss == self.settings.issuer => {}
            _ => return Err(invalid("iss is not the issuer as a string")),
        }
        let nbf = claims.get("nbf").and_then(Value::as_u64);
        let (principal, exp) = principal(&mut claims, None)?;
        Ok(Verified {
            principal: Arc::new(principal),
            exp,
            nbf,
            until: None,
        })
    }

    /// RFC 9068 §4: `at+jwt` (or `application/at+jwt`); `JWT` or none only when allowed.
    fn typ_allowed(&self, typ: Option<&str>) -> bool {
        match typ {
            Some(t) => {
                t.eq_ignore_ascii_case("at+jwt")
                    || t.eq_ignore_ascii_case("application/at+jwt")
                    || (self.settings.allow_jwt_typ && t.eq_ignore_ascii_case("JWT"))
            }
            None => self.settings.allow_jwt_typ,
        }
    }

    /// The key for `kid` and `alg`: from the snapshot, else after a refresh.
    async fn key_for(
        &self,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Result<(Arc<KeySet>, usize), Miss> {
        let seen = match self.keys.load_full() {
            None => {
                self.refresh(Cause::NoKeys, 0).await.map_err(Miss::Other)?;
                None
            }
            Some(set) => match lookup(&set, kid, alg) {
                Lookup::Found(i) => return Ok((set, i)),
                Lookup::WrongAlg => return Err(Miss::Other(wrong_alg(kid, alg))),
                Lookup::Unknown => {
                    self.refresh(Cause::UnknownKid, set.generation)
                        .await
                        .map_err(Miss::Other)?;
                    Some(set.generation)
                }
            },
        };
        let Some(set) = self.keys.load_full() else {
            return Err(Miss::Other(Rejection::Unavailable(
                "the authorization server's keys are not available".into(),
            )));
        };
        match lookup(&set, kid, alg) {
            Lookup::Found(i) => Ok((set, i)),
            Lookup::WrongAlg => Err(Miss::Other(wrong_alg(kid, alg))),
            Lookup::Unknown if seen == Some(set.generation) => {
                Err(Miss::Unknown(invalid(format!(
                    "unknown kid {:?} (the JWKS was not refetched: at most one refresh a minute)",
                    kid.unwrap_or("")
                ))))
            }
            Lookup::Unknown => Err(Miss::Unknown(invalid(format!(
                "unknown kid {:?} (after a JWKS refresh)",
                kid.unwrap_or("")
            )))),
        }
    }

    /// A periodic refresh when the snapshot is past its `max-age`; a request that finds another
    /// refresh under way goes on with the current keys.
    async fn refresh_if_stale(&self) {
        let stale = self
            .keys
            .load()
            .as_ref()
            .map(|set| (set.fetched.elapsed() > set.fresh_for, set.generation));
        if let Some((true, generation)) = stale
            && let Ok(mut state) = self.fetch.try_lock()
        {
            let _ = self
                .refresh_locked(&mut state, Cause::Stale, generation)
                .await;
        }
    }

    /// Fetches the keys for `cause` unless another caller did since the snapshot of `seen`
    /// generation, or the rate limits say not now. `Err` only when the keys cannot be had.
    async fn refresh(&self, cause: Cause, seen: u64) -> Result<(), Rejection> {
        let mut state = self.fetch.lock().await;
        self.refresh_locked(&mut state, cause, seen).await
    }

    async fn refresh_locked(
        &self,
        state: &mut FetchState,
        cause: Cause,
        seen: u64,
    ) -> Result<(), Rejection> {
        if state.generation != seen {
            return Ok(()); // someone else refreshed while this caller waited
        }
        let now = Instant::now();
        let recent = |at: Option<Instant>, gap: Duration| at.is_some_and(|at| now - at < gap);
        let unavailable = |state: &FetchState| {
            Rejection::Unavailable(
                state
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "the authorization server's keys are not available".into()),
            )
        };
        if recent(state.last_attempt, RETRY_INTERVAL) && state.last_error.is_some() {
            return match cause {
                Cause::Stale => Ok(()),
                _ => Err(unavailable(state)),
            };
        }
        if cause == Cause::UnknownKid {
            if recent(state.last_kid_refresh, UNKNOWN_KID_INTERVAL) {
                // Not again so soon; a failed last fetch still means the keys are not known.
                return match state.last_error {
                    Some(_) => Err(unavailable(state)),
                    None => Ok(()),
                };
            }
            state.last_kid_refresh = Some(now);
        }
        // A periodic refresh is tried at most once a minute (a failing one blocks the request
        // that tries it for up to the fetch timeout).
        if cause == Cause::Stale && recent(state.last_attempt, MIN_REFRESH) {
            return Ok(());
        }
        state.last_attempt = Some(now);
        match self.fetch_keys(state).await {
            Ok((keys, fresh_for)) => {
                state.generation += 1;
                state.last_error = None;
                let old = self.keys.load_full();
                let dropped = old.as_ref().is_some_and(|old| {
                    old.keys
                        .iter()
                        .any(|k| !keys.iter().any(|n| n.kid == k.kid))
                });
                self.keys.store(Some(Arc::new(KeySet {
                    keys,
                    fetched: Instant::now(),
                    fresh_for,
                    generation: state.generation,
                })));
                if dropped {
                    self.verified.clear();
                }
                Ok(())
            }
            Err(e) => {
                tracing::warn!("authorization: cannot fetch the JWKS: {e}");
                state.last_error = Some(e);
                match cause {
                    // A stale snapshot is still the best there is.
                    Cause::Stale if self.keys.load().is_some() => Ok(()),
                    _ => Err(unavailable(state)),
                }
            }
        }
    }

    /// The JWKS (discovering its URI first when needed), as usable keys and how long they are
    /// fresh.
    async fn fetch_keys(&self, state: &mut FetchState) -> Result<(Vec<Key>, Duration), String> {
        let uri = match (&self.settings.jwks_uri, &state.discovered) {
            (Some(uri), _) | (None, Some(uri)) => uri.clone(),
            (None, None) => {
                let uri = discover_jwks_uri(&self.settings.issuer).await?;
                state.discovered = Some(uri.clone());
                uri
            }
        };
        let answer = match get(&uri).await {
            Ok(answer) => answer,
            Err(e) => {
                state.discovered = None; // the metadata may name another one now
                return Err(e);
            }
        };
        let keys = usable_keys(&answer.body, &self.validation)?;
        let fresh_for = answer
            .max_age
            .unwrap_or(DEFAULT_REFRESH)
            .clamp(MIN_REFRESH, MAX_REFRESH);
        Ok((keys, fresh_for))
    }

    /// RFC 7662: asks the authorization server about an opaque token.
    async fn introspect(
        &self,
        token: &str,
        introspection: &Introspection,
    ) -> Result<Verified, Rejection> {
        let unavailable = |e: String| {
            tracing::warn!("authorization: introspection failed: {e}");
            Rejection::Unavailable(format!("introspection: {e}"))
        };
        let url = checked_url(&introspection.url).map_err(unavailable)?;
        // RFC 6749 §2.3.1: the credentials are form-encoded before they go into Basic.
        let response = client()
            .map_err(unavailable)?
            .post(url)
            .basic_auth(
                form_encoded(&introspection.client_id),
                Some(form_encoded(&introspection.client_secret)),
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| unavailable(format!("{}: {e}", introspection.url)))?;
        let answer = read(&introspection.url, response)
            .await
            .map_err(unavailable)?;
        let mut claims: Map<String, Value> = serde_json::from_slice(&answer.body)
            .map_err(|e| unavailable(format!("the answer is not a JSON object: {e}")))?;
        if claims.remove("active") != Some(Value::Bool(true)) {
            return Err(invalid("introspection: the token is not active"));
        }
        match claims.get("iss") {
            None => {
                claims.insert("iss".into(), Value::String(self.settings.issuer.clone()));
            }
            Some(Value::String(iss)) if *iss == self.settings.issuer => {}
            Some(_) => return Err(invalid("introspection: iss is not the issuer")),
        }
        if !audience(claims.get("aud")).contains(&self.settings.resource.as_str()) {
            return Err(invalid("introspection: aud does not contain the resource"));
        }
        let nbf = claims.get("nbf").and_then(Value::as_u64);
        let (principal, exp) = principal(&mut claims, Some("client_id"))?;
        self.times(exp, nbf)?;
        let mut until = Instant::now() + INTROSPECTION_TTL;
        if let Some(exp) = exp {
            let left = exp.saturating_sub(jsonwebtoken::get_current_timestamp());
            until = until.min(Instant::now() + Duration::from_secs(left));
        }
        Ok(Verified {
            principal: Arc::new(principal),
            exp,
            nbf,
            until: Some(until),
        })
    }
}

impl TokenVerifier for OAuthVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> Verifying<'a> {
        Box::pin(self.check(token))
    }
}

fn invalid(reason: impl Into<String>) -> Rejection {
    Rejection::Invalid(reason.into())
}

fn wrong_alg(kid: Option<&str>, alg: Algorithm) -> Rejection {
    invalid(format!(
        "alg {alg:?} is not allowed for the key {:?}",
        kid.unwrap_or("")
    ))
}

/// jsonwebtoken's verdict, as the check that failed.
fn jwt_error(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::InvalidSignature => "bad signature".into(),
        ErrorKind::ExpiredSignature => "expired (exp)".into(),
        ErrorKind::ImmatureSignature => "not yet valid (nbf)".into(),
        ErrorKind::InvalidIssuer => "iss is not the issuer".into(),
        ErrorKind::InvalidAudience => "aud does not contain the resource".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("no {claim} claim"),
        ErrorKind::InvalidClaimFormat(claim) => format!("malformed {claim} claim"),
        ErrorKind::InvalidAlgorithm => "alg is not allowed for the key".into(),
        other => format!("malformed JWT: {other:?}"),
    }
}

/// Whether `token` is three base64url parts (a JWS compact serialization; the signature may be
/// empty, as `alg: none` makes it, so that such a token fails as a JWT).
fn jwt_shaped(token: &str) -> bool {
    let b64url = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    let mut parts = token.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(h), Some(p), Some(s), None) => {
            !h.is_empty() && !p.is_empty() && b64url(h) && b64url(p) && b64url(s)
        }
        _ => false,
    }
}

/// The JOSE header of a JWT-shaped token.
fn jose_header(token: &str) -> Result<JoseHeader, Rejection> {
    let encoded = token.split('.').next().unwrap_or_default();
    let bytes = URL_SAFE_NO_PAD
        .decode(encoded)
        .map_err(|_| invalid("the JWT header is not base64url"))?;
    serde_json::from_slice(&bytes).map_err(|e| invalid(format!("the JWT header: {e}")))
}

/// The key of `set` for a token's `kid` and `alg`. A token without `kid` uses the only key.
fn lookup(set: &KeySet, kid: Option<&str>, alg: Algorithm) -> Lookup {
    let mut known = false;
    for (i, key) in set.keys.iter().enumerate() {
        // A JWKS of one key without a kid verifies every token (the kid is only a hint).
        let matches = match kid {
            Some(kid) => key.kid.as_deref() == Some(kid) || key.kid.is_none(),
            None => set.keys.len() == 1,
        };
        if matches {
            known = true;
            if key.validation.algorithms.contains(&alg) {
                return Lookup::Found(i);
            }
        }
    }
    if known {
        Lookup::WrongAlg
    } else {
        Lookup::Unknown
    }
}

/// The keys of a JWKS that may verify tokens, each with the algorithms it allows. A key is
/// usable when its `use` is absent or `sig`, its `key_ops` (if any) include `verify`, its type
/// is RSA, EC P-256/P-384 or Ed25519, and its `alg` (if any) is an allowed one of its family. A
/// key without `kid` is usable only as the set's only key.
fn usable_keys(body: &[u8], template: &Validation) -> Result<Vec<Key>, String> {
    #[derive(Deserialize)]
    struct Set {
        keys: Vec<Value>,
    }
    let set: Set =
        serde_json::from_slice(body).map_err(|e| format!("the JWKS does not parse: {e}"))?;
    let mut keys = Vec::new();
    for raw in set.keys {
        let kid = raw.get("kid").and_then(Value::as_str).map(str::to_owned);
        let alg = raw
            .get("alg")
            .map(|alg| alg.as_str().unwrap_or("?").to_owned());
        let usable = serde_json::from_value::<Jwk>(raw)
            .map_err(|e| e.to_string())
            .and_then(|jwk| usable_key(&jwk, alg.as_deref(), template));
        match usable {
            Ok(key) => keys.push(key),
            Err(why) => tracing::debug!("authorization: JWKS key {kid:?} not used: {why}"),
        }
    }
    if keys.len() > 1 && keys.iter().any(|k| k.kid.is_none()) {
        tracing::debug!("authorization: JWKS keys without kid not used (the set has several)");
        keys.retain(|k| k.kid.is_some());
    }
    if keys.is_empty() {
        return Err("the JWKS has no usable signing key".into());
    }
    Ok(keys)
}

/// `alg` is the JWK's own (jsonwebtoken's typed one maps what it does not know to a catch-all).
fn usable_key(jwk: &Jwk, alg: Option<&str>, template: &Validation) -> Result<Key, String> {
    let common = &jwk.common;
    if !matches!(common.public_key_use, None | Some(PublicKeyUse::Signature)) {
        return Err("its use is not sig".into());
    }
    if let Some(ops) = &common.key_operations
        && !ops.contains(&KeyOperations::Verify)
    {
        return Err("its key_ops do not include verify".into());
    }
    use Algorithm::*;
    let family: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[RS256, RS384, RS512, PS256, PS384, PS512],
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => &[ES256],
            EllipticCurve::P384 => &[ES384],
            _ => return Err("its curve is not supported".into()),
        },
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => &[EdDSA],
        _ => return Err("its key type is not an allowed one".into()),
    };
    let algorithms = match alg {
        None => family.to_vec(),
        Some(named) => match named.parse::<Algorithm>() {
            Ok(alg) if family.contains(&alg) => vec![alg],
            _ => return Err(format!("its alg {named:?} is not allowed for its type")),
        },
    };
    let key = DecodingKey::from_jwk(jwk).map_err(|e| e.to_string())?;
    let mut validation = template.clone();
    validation.algorithms = algorithms;
    Ok(Key {
        kid: common.key_id.clone(),
        key,
        validation,
    })
}

/// The audiences an `aud` names (a string or an array of strings).
fn audience(aud: Option<&Value>) -> Vec<&str> {
    match aud {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The principal of verified claims (the ones it names are taken out, the rest stay in
/// `claims`), and `exp`. `sub` is required unless `subject_fallback` names the claim to use
/// instead (introspection answers may lack `sub`).
fn principal(
    claims: &mut Map<String, Value>,
    subject_fallback: Option<&str>,
) -> Result<(Principal, Option<u64>), Rejection> {
    let text = |claims: &Map<String, Value>, name: &str| {
        claims
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let subject = text(claims, "sub")
        .or_else(|| subject_fallback.and_then(|name| text(claims, name)))
        .ok_or_else(|| match subject_fallback {
            None => invalid("no sub claim"),
            Some(_) => invalid("introspection: neither sub nor client_id"),
        })?;
    let client_id = text(claims, "client_id")
        .or_else(|| text(claims, "azp"))
        .unwrap_or_else(|| subject.clone());
    // `scope` (RFC 9068, RFC 8693: space-separated); `scp` (a string or an array, as some
    // authorization servers send) is accepted too.
    let mut scopes: Vec<String> = Vec::new();
    let mut add = |scope: &str| {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    };
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(s)) => s.split_ascii_whitespace().for_each(&mut add),
            Some(Value::Array(items)) if name == "scp" => {
                items.iter().filter_map(Value::as_str).for_each(&mut add)
            }
            _ => {}
        }
    }
    let audience = audience(claims.get("aud"))
        .into_iter()
        .map(str::to_owned)
        .collect();
    let exp = claims.get("exp").and_then(Value::as_u64);
    let issuer = text(claims, "iss").unwrap_or_default();
    for name in ["iss", "sub", "client_id", "scope", "aud", "exp"] {
        claims.remove(name);
    }
    Ok((
        Principal {
            issuer,
            subject,
            client_id,
            scopes,
            audience,
            expires_at: exp,
            claims: std::mem::take(claims),
        },
        exp,
    ))
}

/// `url`, parsed, if it may be fetched: `https`, or `http` to a loopback host.
fn checked_url(url: &str) -> Result<reqwest::Url, String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let host = parsed.host_str().unwrap_or_default();
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err(format!(
            "{url} must be https (http only for a loopback host)"
        )),
    }
}

/// The metadata documents to try for `issuer`, in order (RFC 8414 §3.1 inserts the well-known
/// path before the issuer's path; OpenID discovery appends it; the MCP authorization
/// specification tries both).
fn metadata_urls(issuer: &str) -> Result<Vec<reqwest::Url>, String> {
    let parsed = checked_url(issuer)?;
    let path = parsed.path().trim_end_matches('/').to_owned();
    let at = |well_known: &str| {
        let mut url = parsed.clone();
        url.set_path(well_known);
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    let mut urls = vec![
        at(&format!("/.well-known/oauth-authorization-server{path}")),
        at(&format!("/.well-known/openid-configuration{path}")),
    ];
    if !path.is_empty() {
        urls.push(at(&format!("{path}/.well-known/openid-configuration")));
    }
    Ok(urls)
}

/// The JWKS URI of `issuer`'s metadata: the first document found whose `issuer` is exactly the
/// configured one.
async fn discover_jwks_uri(issuer: &str) -> Result<String, String> {
    #[derive(Deserialize)]
    struct Metadata {
        issuer: Option<String>,
        jwks_uri: Option<String>,
    }
    let mut failures = Vec::new();
    for url in metadata_urls(issuer)? {
        let metadata = match get(url.as_str()).await {
            Ok(answer) => serde_json::from_slice::<Metadata>(&answer.body),
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        match metadata {
            Ok(Metadata {
                issuer: Some(found),
                jwks_uri,
            }) if found == issuer => {
                return jwks_uri.ok_or_else(|| format!("{url} names no jwks_uri"));
            }
            Ok(Metadata { issuer: found, .. }) => failures.push(format!(
                "{url}: its issuer {found:?} is not the configured {issuer:?}"
            )),
            Err(e) => failures.push(format!("{url}: not metadata: {e}")),
        }
    }
    Err(format!(
        "no authorization server metadata for {issuer}: {}",
        failures.join("; ")
    ))
}

/// A successful answer.
struct Answer {
    body: Vec<u8>,
    /// Its `Cache-Control: max-age`.
    max_age: Option<Duration>,
}

/// GET `url` (JSON).
async fn get(url: &str) -> Result<Answer, String> {
    let parsed = checked_url(url)?;
    let response = client()?
        .get(parsed)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    read(url, response).await
}

/// The body of a `2xx` answer, at most [`MAX_BODY`] bytes.
async fn read(url: &str, mut response: reqwest::Response) -> Result<Answer, String> {
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url}: HTTP {status}"));
    }
    let max_age = response
        .headers()
        .get(reqwest::header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.split(',').find_map(|directive| {
                let (name, value) = directive.split_once('=')?;
                (name.trim().eq_ignore_ascii_case("max-age"))
                    .then(|| value.trim().trim_matches('"').parse().ok())
                    .flatten()
            })
        })
        .map(Duration::from_secs);
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {e}"))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("{url}: the answer is over {MAX_BODY} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer { body, max_age })
}

/// An HTTP client for one fetch: rustls with the ring provider and the platform's roots, no
/// redirects, [`FETCH_TIMEOUT`]. A new one each time, because a pooled connection would belong
/// to the runtime of the thread that opened it (the server runs one per thread); fetches are
/// rare (at most a few a minute) and the TLS configuration is built once.
fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls::tls_config()?)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(FETCH_TIMEOUT)
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| format!("an HTTP client: {e}"))
}

/// `application/x-www-form-urlencoded` of one value (RFC 6749 §2.3.1, Appendix B).
fn form_encoded(value: &str) -> String {
    const FORM: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'*')
        .remove(b'-')
        .remove(b'.')
        .remove(b'_');
    utf8_percent_encode(value, FORM).to_string()
}

#[cfg(test)]
mod tests {
    //! Tests of [`OAuthVerifier`] against a local authorization server (an axum app in the test
    //! serving metadata, a JWKS and introspection, counting what it is asked), with the fixed test
    //! keys of `testdata/` (RSA 2048 twice, EC P-256, Ed25519; test-only, never used elsewhere) and
    //! tokens signed here with jsonwebtoken's encoder.

    use std::{
        collections::HashMap,
        sync::{
            Arc, Mutex,
            atomic::{AtomicUsize, Ordering},
        },
        time::Duration,
    };

    use axum::{
        body::Bytes,
        extract::State,
        http::{HeaderMap, Method, StatusCode, Uri, header},
        response::{IntoResponse, Response},
    };
    use jsonwebtoken::{Algorithm, EncodingKey, Header, jwk::Jwk};
    use serde_json::{Map, Value, json};

    use super::{OAuthVerifier, checked_url, jwt_shaped, metadata_urls, usable_keys};
    use crate::{AuthSettings, Introspection, Principal, Rejection, TokenVerifier};

    const RSA: &[u8] = include_bytes!("../../testdata/rsa.der");
    const RSA2: &[u8] = include_bytes!("../../testdata/rsa2.der");
    const RSA_PUBLIC: &[u8] = include_bytes!("../../testdata/rsa.pub.der");
    const EC: &[u8] = include_bytes!("../../testdata/ec.der");
    const ED: &[u8] = include_bytes!("../../testdata/ed25519.der");
    const RESOURCE: &str = "http://127.0.0.1:9/mcp";

    fn rsa() -> EncodingKey {
        EncodingKey::from_rsa_der(RSA)
    }
    fn rsa2() -> EncodingKey {
        EncodingKey::from_rsa_der(RSA2)
    }
    fn ec() -> EncodingKey {
        EncodingKey::from_ec_der(EC)
    }
    fn ed() -> EncodingKey {
        EncodingKey::from_ed_der(ED)
    }

    /// The public JWK of `key` with `kid`, `use: sig` and `alg` (or without `alg`).
    fn jwk(key: &EncodingKey, alg: Algorithm, kid: &str, with_alg: bool) -> Value {
        let mut jwk = serde_json::to_value(Jwk::from_encoding_key(key, alg).unwrap()).unwrap();
        let object = jwk.as_object_mut().unwrap();
        object.insert("kid".into(), json!(kid));
        object.insert("use".into(), json!("sig"));
        if !with_alg {
            object.remove("alg");
        }
        jwk
    }

    /// The JWKS the server starts with: `rsa` (RS256), `ec` (ES256), `ed` (EdDSA, no `alg`).
    fn initial_jwks() -> Value {
        json!({"keys": [
            jwk(&rsa(), Algorithm::RS256, "rsa", true),
            jwk(&ec(), Algorithm::ES256, "ec", true),
            jwk(&ed(), Algorithm::EdDSA, "ed", false),
        ]})
    }

    /// The local authorization server.
    struct As {
        /// `http://127.0.0.1:PORT`, or with the path the metadata is served for.
        issuer: String,
        jwks: Mutex<Value>,
        /// The status the JWKS answers with.
        jwks_status: Mutex<StatusCode>,
        /// The `issuer` its metadata states.
        metadata_issuer: Mutex<String>,
        /// Introspection answers by token.
        introspection: Mutex<HashMap<String, Value>>,
        jwks_fetches: AtomicUsize,
        metadata_fetches: AtomicUsize,
        introspections: AtomicUsize,
    }

    /// Starts the server; its metadata is served for the issuer `origin + path`.
    async fn start(path: &str) -> Arc<As> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}{path}", listener.local_addr().unwrap());
        let state = Arc::new(As {
            issuer: issuer.clone(),
            jwks: Mutex::new(initial_jwks()),
            jwks_status: Mutex::new(StatusCode::OK),
            metadata_issuer: Mutex::new(issuer),
            introspection: Mutex::new(HashMap::new()),
            jwks_fetches: AtomicUsize::new(0),
            metadata_fetches: AtomicUsize::new(0),
            introspections: AtomicUsize::new(0),
        });
        let app = axum::Router::new()
            .fallback(serve)
            .with_state(state.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        state
    }

    async fn serve(
        State(server): State<Arc<As>>,
        method: Method,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        let origin = server
            .issuer
            .split('/')
            .take(3)
            .collect::<Vec<_>>()
            .join("/");
        let issuer_path = &server.issuer[origin.len()..];
        let json = |status: StatusCode, value: Value| {
            (
                status,
                [(header::CONTENT_TYPE, "application/json")],
                value.to_string(),
            )
                .into_response()
        };
        let path = uri.path();
        if method == Method::GET
            && path == format!("/.well-known/oauth-authorization-server{issuer_path}")
        {
            server.metadata_fetches.fetch_add(1, Ordering::SeqCst);
            return json(
                StatusCode::OK,
                json!({
                    "issuer": *server.metadata_issuer.lock().unwrap(),
                    "jwks_uri": format!("{origin}/jwks"),
                    "introspection_endpoint": format!("{origin}/introspect"),
                }),
            );
        }
        if method == Method::GET && path == "/jwks" {
            server.jwks_fetches.fetch_add(1, Ordering::SeqCst);
            let status = *server.jwks_status.lock().unwrap();
            return json(status, server.jwks.lock().unwrap().clone());
        }
        if method == Method::POST && path == "/introspect" {
            server.introspections.fetch_add(1, Ordering::SeqCst);
            // `rs` / `s3cret:%` form-encoded, then Basic (RFC 6749 §2.3.1).
            let expected = "Basic cnM6czNjcmV0JTNBJTI1";
            if headers.get(header::AUTHORIZATION).map(|v| v.as_bytes()) != Some(expected.as_bytes())
            {
                return json(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
            }
            let form = String::from_utf8(body.to_vec()).unwrap();
            let field = |name: &str| {
                form.split('&').find_map(|pair| {
                    let (k, v) = pair.split_once('=')?;
                    (k == name).then(|| {
                        percent_encoding::percent_decode_str(v)
                            .decode_utf8()
                            .unwrap()
                            .into_owned()
                    })
                })
            };
            assert_eq!(field("token_type_hint").as_deref(), Some("access_token"));
            let token = field("token").unwrap_or_default();
            let answer = server.introspection.lock().unwrap().get(&token).cloned();
            return json(StatusCode::OK, answer.unwrap_or(json!({"active": false})));
        }
        json(StatusCode::NOT_FOUND, json!({"error": "not_found"}))
    }

    fn now() -> u64 {
        jsonwebtoken::get_current_timestamp()
    }

    /// A valid token's claims for `issuer`.
    fn claims(issuer: &str) -> Map<String, Value> {
        let now = now();
        json!({
            "iss": issuer,
            "sub": "alice",
            "aud": RESOURCE,
            "exp": now + 300,
            "iat": now,
            "client_id": "app",
            "scope": "catalog:read loans:write",
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn sign(alg: Algorithm, key: &EncodingKey, kid: &str, claims: &Map<String, Value>) -> String {
        sign_typed(alg, key, Some(kid), Some("at+jwt"), claims)
    }

    fn sign_typed(
        alg: Algorithm,
        key: &EncodingKey,
        kid: Option<&str>,
        typ: Option<&str>,
        claims: &Map<String, Value>,
    ) -> String {
        let mut header = Header::new(alg);
        header.kid = kid.map(str::to_owned);
        header.typ = typ.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, key).unwrap()
    }

    /// `claims` with `changes` applied (`null` removes a claim).
    fn with(mut claims: Map<String, Value>, changes: Value) -> Map<String, Value> {
        for (k, v) in changes.as_object().unwrap() {
            match v {
                Value::Null => claims.remove(k),
                v => claims.insert(k.clone(), v.clone()),
            };
        }
        claims
    }

    fn verifier(server: &As) -> OAuthVerifier {
        OAuthVerifier::new(AuthSettings::new(&server.issuer, RESOURCE))
    }

    /// The principal [`claims`] (with `exp`) stand for.
    fn alice(issuer: &str, exp: u64, iat: u64) -> Principal {
        Principal {
            issuer: issuer.into(),
            subject: "alice".into(),
            client_id: "app".into(),
            scopes: vec!["catalog:read".into(), "loans:write".into()],
            audience: vec![RESOURCE.into()],
            expires_at: Some(exp),
            claims: json!({"iat": iat}).as_object().unwrap().clone(),
        }
    }

    async fn verify(v: &OAuthVerifier, token: &str) -> Result<Principal, Rejection> {
        v.verify(token).await.map(|p| (*p).clone())
    }

    fn invalid(reason: &str) -> Result<Principal, Rejection> {
        Err(Rejection::Invalid(reason.into()))
    }

    #[tokio::test]
    async fn valid_tokens_of_each_key_type_verify() {
        let server = start("").await;
        let v = verifier(&server);
        for (alg, key, kid) in [
            (Algorithm::RS256, rsa(), "rsa"),
            (Algorithm::ES256, ec(), "ec"),
            (Algorithm::EdDSA, ed(), "ed"),
        ] {
            let claims = claims(&server.issuer);
            let (exp, iat) = (
                claims["exp"].as_u64().unwrap(),
                claims["iat"].as_u64().unwrap(),
            );
            let token = sign(alg, &key, kid, &claims);
            assert_eq!(
                verify(&v, &token).await,
                Ok(alice(&server.issuer, exp, iat)),
                "{alg:?}"
            );
        }
        // One metadata and one JWKS fetch for all three.
        assert_eq!(server.metadata_fetches.load(Ordering::SeqCst), 1);
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn time_claims_are_checked_with_the_leeway() {
        let server = start("").await;
        let v = verifier(&server); // leeway 30 s
        let iss = server.issuer.clone();
        let token = |changes: Value| {
            sign(
                Algorithm::RS256,
                &rsa(),
                "rsa",
                &with(claims(&iss), changes),
            )
        };
        let now = now();
        assert_eq!(
            verify(&v, &token(json!({"exp": now - 60}))).await,
            invalid("expired (exp)")
        );
        assert_eq!(
            verify(&v, &token(json!({"nbf": now + 60}))).await,
            invalid("not yet valid (nbf)")
        );
        // Inside the leeway.
        assert!(verify(&v, &token(json!({"exp": now - 20}))).await.is_ok());
        assert!(verify(&v, &token(json!({"nbf": now + 20}))).await.is_ok());
        // Without leeway the same times fail.
        let strict = OAuthVerifier::new(AuthSettings {
            leeway: Duration::ZERO,
            ..AuthSettings::new(&server.issuer, RESOURCE)
        });
        assert_eq!(
            verify(&strict, &token(json!({"exp": now - 20}))).await,
            invalid("expired (exp)")
        );
        assert_eq!(
            verify(&strict, &token(json!({"nbf": now + 20}))).await,
            invalid("not yet valid (nbf)")
        );
        assert_eq!(
            verify(&v, &token(json!({"exp": null}))).await,
            invalid("no exp claim")
        );
    }

    #[tokio::test]
    async fn issuer_audience_and_subject_must_match() {
        let server = start("").await;
        let v = verifier(&server);
        let iss = server.issuer.clone();
        let token = |changes: Value| {
            sign(
                Algorithm::RS256,
                &rsa(),
                "rsa",
                &with(claims(&iss), changes),
            )
        };
        assert_eq!(
            verify(&v, &token(json!({"iss": "http://127.0.0.1:1"}))).await,
            invalid("iss is not the issuer")
        );
        assert_eq!(
            verify(&v, &token(json!({"iss": format!("{iss}/")}))).await,
            invalid("iss is not the issuer")
        );
        assert_eq!(
            verify(&v, &token(json!({"iss": [iss]}))).await,
            invalid("iss is not the issuer as a string")
        );
        assert_eq!(
            verify(&v, &token(json!({"iss": null}))).await,
            invalid("no iss claim")
        );
        assert_eq!(
            verify(&v, &token(json!({"aud": "http://127.0.0.1:9/other"}))).await,
            invalid("aud does not contain the resource")
        );
        assert_eq!(
            verify(&v, &token(json!({"aud": format!("{RESOURCE}/")}))).await,
            invalid("aud does not contain the resource")
        );
        assert_eq!(
            verify(&v, &token(json!({"aud": ["http://127.0.0.1:9/other"]}))).await,
            invalid("aud does not contain the resource")
        );
        assert_eq!(
            verify(&v, &token(json!({"aud": null}))).await,
            invalid("no aud claim")
        );
        assert_eq!(
            verify(&v, &token(json!({"sub": null}))).await,
            invalid("no sub claim")
        );
        // An audience list containing the resource passes and is kept as a list; without
        // `client_id` the client is `azp`, else the subject; `scp` adds scopes.
        let principal = verify(
            &v,
            &token(
                json!({"aud": ["http://127.0.0.1:9/other", RESOURCE], "client_id": null,
            "azp": "spa", "scope": "a b", "scp": ["b", "c"]}),
            ),
        )
        .await
        .unwrap();
        assert_eq!(principal.audience, ["http://127.0.0.1:9/other", RESOURCE]);
        assert_eq!(principal.client_id, "spa");
        assert_eq!(principal.scopes, ["a", "b", "c"]);
        assert_eq!(principal.claims.get("azp"), Some(&json!("spa")));
        assert_eq!(principal.claims.get("scp"), Some(&json!(["b", "c"])));
        let principal = verify(&v, &token(json!({"client_id": null, "scope": null})))
            .await
            .unwrap();
        assert_eq!(principal.client_id, "alice");
        assert!(principal.scopes.is_empty());
    }

    #[tokio::test]
    async fn typ_is_at_jwt_unless_plain_jwts_are_allowed() {
        let server = start("").await;
        let strict = verifier(&server);
        let lax = OAuthVerifier::new(AuthSettings {
            allow_jwt_typ: true,
            ..AuthSettings::new(&server.issuer, RESOURCE)
        });
        let claims = claims(&server.issuer);
        let token =
            |typ: Option<&str>| sign_typed(Algorithm::RS256, &rsa(), Some("rsa"), typ, &claims);
        for typ in ["at+jwt", "application/at+jwt", "AT+JWT"] {
            assert!(verify(&strict, &token(Some(typ))).await.is_ok(), "{typ}");
        }
        assert_eq!(
            verify(&strict, &token(Some("JWT"))).await,
            invalid("typ \"JWT\" is not at+jwt")
        );
        assert_eq!(
            verify(&strict, &token(None)).await,
            invalid("typ \"\" is not at+jwt")
        );
        assert!(verify(&lax, &token(Some("JWT"))).await.is_ok());
        assert!(verify(&lax, &token(None)).await.is_ok());
        assert_eq!(
            verify(&lax, &token(Some("dpop+jwt"))).await,
            invalid("typ \"dpop+jwt\" is not at+jwt")
        );
    }

    #[tokio::test]
    async fn algorithms_are_limited_per_key() {
        let server = start("").await;
        let v = verifier(&server);
        let claims = claims(&server.issuer);
        // alg none: no signature.
        let encode = |v: Value| {
            base64::Engine::encode(
                &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                v.to_string(),
            )
        };
        let none = format!(
            "{}.{}.",
            encode(json!({"alg": "none", "typ": "at+jwt", "kid": "rsa"})),
            encode(Value::Object(claims.clone()))
        );
        assert_eq!(
            verify(&v, &none).await,
            invalid("alg \"none\" is not allowed")
        );
        // HS256 keyed with the RSA public key's bytes (the classic confusion).
        let hs = sign(
            Algorithm::HS256,
            &EncodingKey::from_secret(RSA_PUBLIC).unwrap(),
            "rsa",
            &claims,
        );
        assert_eq!(
            verify(&v, &hs).await,
            invalid("alg \"HS256\" is not allowed")
        );
        // The RSA key's JWK says RS256: PS256 by the same key is refused.
        let ps = sign(Algorithm::PS256, &rsa(), "rsa", &claims);
        assert_eq!(
            verify(&v, &ps).await,
            invalid("alg PS256 is not allowed for the key \"rsa\"")
        );
        // A JWK without `alg` (the Ed25519 one) allows only its family.
        let es_on_ed = sign(Algorithm::ES256, &ec(), "ed", &claims);
        assert_eq!(
            verify(&v, &es_on_ed).await,
            invalid("alg ES256 is not allowed for the key \"ed\"")
        );
        // Signed by another key under a known kid.
        let forged = sign(Algorithm::RS256, &rsa2(), "rsa", &claims);
        assert_eq!(verify(&v, &forged).await, invalid("bad signature"));
        // A tampered payload.
        let token = sign(Algorithm::RS256, &rsa(), "rsa", &claims);
        let parts: Vec<&str> = token.split('.').collect();
        let tampered = format!(
            "{}.{}.{}",
            parts[0],
            encode(Value::Object(with(
                claims.clone(),
                json!({"sub": "mallory"})
            ))),
            parts[2]
        );
        assert_eq!(verify(&v, &tampered).await, invalid("bad signature"));
        // crit is not understood.
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some("rsa".into());
        header.typ = Some("at+jwt".into());
        header.crit = Some(vec!["exp".into()]);
        let crit = jsonwebtoken::encode(&header, &claims, &rsa()).unwrap();
        assert_eq!(
            verify(&v, &crit).await,
            invalid("crit header parameters are not supported")
        );
        // No kid, several keys.
        let no_kid = sign_typed(Algorithm::RS256, &rsa(), None, Some("at+jwt"), &claims);
        assert_eq!(
            verify(&v, &no_kid).await,
            invalid("unknown kid \"\" (after a JWKS refresh)")
        );
    }

    #[tokio::test]
    async fn an_unknown_kid_refetches_the_jwks_once_a_minute() {
        let server = start("").await;
        let v = verifier(&server);
        let claims = claims(&server.issuer);
        assert!(
            verify(&v, &sign(Algorithm::RS256, &rsa(), "rsa", &claims))
                .await
                .is_ok()
        );
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 1);
        // The authorization server rotates to a new key; concurrent tokens with its kid cause one
        // fetch between them.
        server.jwks.lock().unwrap()["keys"]
            .as_array_mut()
            .unwrap()
            .push(jwk(&rsa2(), Algorithm::RS256, "rsa2", true));
        let rotated = sign(Algorithm::RS256, &rsa2(), "rsa2", &claims);
        let results = futures::future::join_all((0..8).map(|_| verify(&v, &rotated))).await;
        for result in results {
            assert_eq!(result.unwrap().subject, "alice");
        }
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 2);
        // Another unknown kid within the minute: no fetch.
        let ghost = sign(Algorithm::RS256, &rsa2(), "ghost", &claims);
        assert_eq!(
            verify(&v, &ghost).await,
            invalid(
                "unknown kid \"ghost\" (the JWKS was not refetched: at most one refresh a minute)"
            )
        );
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 2);

        // A kid that is unknown after its refresh.
        let other = verifier(&server);
        assert!(
            verify(&other, &sign(Algorithm::ES256, &ec(), "ec", &claims))
                .await
                .is_ok()
        );
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 3);
        assert_eq!(
            verify(&other, &ghost).await,
            invalid("unknown kid \"ghost\" (after a JWKS refresh)")
        );
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_refresh_that_drops_a_key_clears_the_cache() {
        let server = start("").await;
        let v = verifier(&server);
        let claims = claims(&server.issuer);
        let old = sign(Algorithm::RS256, &rsa(), "rsa", &claims);
        assert!(verify(&v, &old).await.is_ok());
        *server.jwks.lock().unwrap() =
            json!({"keys": [jwk(&rsa2(), Algorithm::RS256, "rsa2", true)]});
        let new = sign(Algorithm::RS256, &rsa2(), "rsa2", &claims);
        assert!(verify(&v, &new).await.is_ok());
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 2);
        // The cached verification of `old` is gone with its key.
        assert_eq!(
            verify(&v, &old).await,
            invalid(
                "unknown kid \"rsa\" (the JWKS was not refetched: at most one refresh a minute)"
            )
        );
    }

    #[tokio::test]
    async fn a_warm_token_comes_from_the_cache_and_still_expires() {
        let server = start("").await;
        let v = OAuthVerifier::new(AuthSettings {
            leeway: Duration::ZERO,
            ..AuthSettings::new(&server.issuer, RESOURCE)
        });
        let token = sign(
            Algorithm::ES256,
            &ec(),
            "ec",
            &with(claims(&server.issuer), json!({"exp": now() + 1})),
        );
        let first = v.verify(&token).await.unwrap();
        let second = v.verify(&token).await.unwrap();
        assert!(
            Arc::ptr_eq(&first, &second),
            "the second answer is the cached one"
        );
        tokio::time::sleep(Duration::from_millis(2100)).await;
        assert_eq!(
            v.verify(&token).await.map(|p| p.subject.clone()),
            Err(Rejection::Invalid("expired (exp)".into()))
        );
    }

    #[tokio::test]
    async fn an_unreachable_authorization_server_fails_closed() {
        // Nothing listens there.
        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://{}", closed.local_addr().unwrap());
        drop(closed);
        let v = OAuthVerifier::new(AuthSettings::new(&issuer, RESOURCE));
        let token = sign(Algorithm::RS256, &rsa(), "rsa", &claims(&issuer));
        match verify(&v, &token).await {
        Err(Rejection::Unavailable(why)) => assert!(
            why.starts_with(&format!("no authorization server metadata for {issuer}: {issuer}/.well-known/oauth-authorization-server: ")),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
        // Within the retry interval the same answer comes without a new attempt.
        assert!(matches!(
            verify(&v, &token).await,
            Err(Rejection::Unavailable(_))
        ));

        // A JWKS that answers 500.
        let server = start("").await;
        *server.jwks_status.lock().unwrap() = StatusCode::INTERNAL_SERVER_ERROR;
        let v = verifier(&server);
        let token = sign(Algorithm::RS256, &rsa(), "rsa", &claims(&server.issuer));
        assert_eq!(
            verify(&v, &token).await,
            Err(Rejection::Unavailable(format!(
                "{}/jwks: HTTP 500 Internal Server Error",
                server.issuer
            )))
        );
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 1);
        assert_eq!(
            verify(&v, &token).await,
            Err(Rejection::Unavailable(format!(
                "{}/jwks: HTTP 500 Internal Server Error",
                server.issuer
            )))
        );
        assert_eq!(
            server.jwks_fetches.load(Ordering::SeqCst),
            1,
            "no retry within 5 s"
        );
    }

    #[tokio::test]
    async fn discovery_requires_the_exact_issuer_and_inserts_the_path() {
        // An issuer with a path: RFC 8414 §3.1 puts the well-known part before it.
        let server = start("/tenant").await;
        let v = verifier(&server);
        let token = sign(Algorithm::RS256, &rsa(), "rsa", &claims(&server.issuer));
        assert!(verify(&v, &token).await.is_ok());
        assert_eq!(server.metadata_fetches.load(Ordering::SeqCst), 1);

        // Metadata stating another issuer (here with a trailing slash) is not used.
        let server = start("").await;
        *server.metadata_issuer.lock().unwrap() = format!("{}/", server.issuer);
        let v = verifier(&server);
        let token = sign(Algorithm::RS256, &rsa(), "rsa", &claims(&server.issuer));
        let iss = &server.issuer;
        assert_eq!(
            verify(&v, &token).await,
            Err(Rejection::Unavailable(format!(
                "no authorization server metadata for {iss}: {iss}/.well-known/oauth-authorization-server: \
             its issuer Some(\"{iss}/\") is not the configured \"{iss}\"; \
             {iss}/.well-known/openid-configuration: HTTP 404 Not Found"
            )))
        );
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 0);

        // An explicit JWKS URI needs no metadata.
        let v = OAuthVerifier::new(AuthSettings {
            jwks_uri: Some(format!("{iss}/jwks")),
            ..AuthSettings::new(iss, RESOURCE)
        });
        assert!(verify(&v, &token).await.is_ok());
        assert_eq!(server.metadata_fetches.load(Ordering::SeqCst), 1);
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn metadata_urls_follow_rfc_8414_and_openid_discovery() {
        let urls = |issuer: &str| {
            metadata_urls(issuer).map(|urls| urls.iter().map(|u| u.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            urls("https://as.example"),
            Ok(vec![
                "https://as.example/.well-known/oauth-authorization-server".to_string(),
                "https://as.example/.well-known/openid-configuration".to_string(),
            ])
        );
        assert_eq!(
            urls("https://as.example/tenant/1/"),
            Ok(vec![
                "https://as.example/.well-known/oauth-authorization-server/tenant/1".to_string(),
                "https://as.example/.well-known/openid-configuration/tenant/1".to_string(),
                "https://as.example/tenant/1/.well-known/openid-configuration".to_string(),
            ])
        );
        assert_eq!(
            urls("http://as.example"),
            Err("http://as.example must be https (http only for a loopback host)".to_string())
        );
        for ok in [
            "http://localhost:1/x",
            "http://127.0.0.2",
            "http://[::1]:8080",
        ] {
            assert!(checked_url(ok).is_ok(), "{ok}");
        }
        assert!(checked_url("ftp://127.0.0.1").is_err());
    }

    #[test]
    fn only_signing_keys_of_allowed_types_are_used() {
        let template = jsonwebtoken::Validation::new(Algorithm::RS256);
        let mut rsa_enc = jwk(&rsa(), Algorithm::RS256, "enc", false);
        rsa_enc["use"] = json!("enc");
        let mut sign_only = jwk(&rsa(), Algorithm::RS256, "ops", false);
        sign_only["key_ops"] = json!(["sign"]);
        let mut oaep = jwk(&rsa(), Algorithm::RS256, "oaep", false);
        oaep["alg"] = json!("RSA-OAEP");
        let mut hs = jwk(&rsa(), Algorithm::RS256, "hs", false);
        hs["alg"] = json!("HS256");
        let jwks = json!({"keys": [
            rsa_enc, sign_only, oaep, hs,
            {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
            {"kty": "EC", "kid": "p521", "crv": "P-521", "x": "AA", "y": "AA"},
            {"kty": "XYZ", "kid": "odd"},
            jwk(&rsa(), Algorithm::RS256, "rsa", false),
            jwk(&ec(), Algorithm::ES256, "ec", true),
            jwk(&ed(), Algorithm::EdDSA, "ed", true),
        ]});
        let keys = usable_keys(jwks.to_string().as_bytes(), &template).unwrap();
        let described: Vec<(Option<&str>, Vec<Algorithm>)> = keys
            .iter()
            .map(|k| (k.kid.as_deref(), k.validation.algorithms.clone()))
            .collect();
        use Algorithm::*;
        assert_eq!(
            described,
            [
                (Some("rsa"), vec![RS256, RS384, RS512, PS256, PS384, PS512]),
                (Some("ec"), vec![ES256]),
                (Some("ed"), vec![EdDSA]),
            ]
        );
        // Kid-less keys only alone.
        let mut anonymous = jwk(&rsa(), Algorithm::RS256, "x", true);
        anonymous.as_object_mut().unwrap().remove("kid");
        let alone = json!({"keys": [anonymous.clone()]});
        assert_eq!(
            usable_keys(alone.to_string().as_bytes(), &template)
                .unwrap()
                .len(),
            1
        );
        let mixed = json!({"keys": [anonymous, jwk(&ec(), Algorithm::ES256, "ec", true)]});
        let keys = usable_keys(mixed.to_string().as_bytes(), &template).unwrap();
        assert_eq!(
            keys.iter().map(|k| k.kid.as_deref()).collect::<Vec<_>>(),
            [Some("ec")]
        );
        assert_eq!(
            usable_keys(
                br#"{"keys": [{"kty": "oct", "kid": "h", "k": "c2VjcmV0"}]}"#,
                &template
            )
            .err(),
            Some("the JWKS has no usable signing key".to_string())
        );
        assert!(usable_keys(b"[]", &template).is_err());
    }

    #[test]
    fn jwt_shape_decides_between_signature_and_introspection() {
        assert!(jwt_shaped("aGVhZA.Ym9keQ.c2ln"));
        assert!(jwt_shaped("aGVhZA.Ym9keQ."));
        assert!(!jwt_shaped("opaque-token_1"));
        assert!(!jwt_shaped("a.b"));
        assert!(!jwt_shaped("a.b.c.d"));
        assert!(!jwt_shaped(".b.c"));
        assert!(!jwt_shaped("a+b.c.d"));
    }

    fn introspecting(server: &As) -> OAuthVerifier {
        OAuthVerifier::new(AuthSettings {
            introspection: Some(Introspection {
                url: format!("{}/introspect", server.issuer),
                client_id: "rs".into(),
                client_secret: "s3cret:%".into(),
            }),
            ..AuthSettings::new(&server.issuer, RESOURCE)
        })
    }

    /// `introspect_jwts`: introspection decides for a JWT whose signature and claims are good
    /// (a revoked one is refused), and the JWKS is never fetched; without an introspection
    /// endpoint every JWT is refused.
    #[tokio::test]
    async fn with_introspect_jwts_introspection_decides_for_jwts_too() {
        let server = start("").await;
        let mut settings = introspecting(&server).settings.clone();
        settings.introspect_jwts = true;
        let v = OAuthVerifier::new(settings.clone());
        let claims = claims(&server.issuer);
        let revoked = sign(Algorithm::ES256, &ec(), "ec", &claims);
        let active = sign(
            Algorithm::ES256,
            &ec(),
            "ec",
            &with(claims.clone(), json!({"jti": "active"})),
        );
        server.introspection.lock().unwrap().insert(
            active.clone(),
            json!({"active": true, "client_id": "machine", "aud": [RESOURCE],
                "exp": now() + 300, "iss": server.issuer}),
        );
        assert_eq!(
            verify(&v, &revoked).await,
            invalid("introspection: the token is not active")
        );
        assert_eq!(verify(&v, &active).await.unwrap().subject, "machine");
        assert_eq!(server.introspections.load(Ordering::SeqCst), 2);
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 0);
        // The same tokens verify by signature without the setting.
        let plain = introspecting(&server);
        assert_eq!(verify(&plain, &revoked).await.unwrap().subject, "alice");
        // No endpoint: refused, never verified by signature instead.
        settings.introspection = None;
        let v = OAuthVerifier::new(settings);
        assert_eq!(
            verify(&v, &active).await,
            invalid("JWTs are to be introspected, and no introspection endpoint is configured")
        );
    }

    /// A JWT whose `kid` no published key has, even after a JWKS refresh: introspection
    /// decides when it is configured, up to the fallback limit; beyond it, and without
    /// introspection, the token is invalid.
    #[tokio::test]
    async fn a_jwt_with_an_unknown_key_falls_back_to_introspection() {
        let server = start("").await;
        let mut v = introspecting(&server);
        v.fallback_limit = (2, Duration::from_secs(3600));
        let claims = claims(&server.issuer);
        let ghost = sign(Algorithm::RS256, &rsa2(), "ghost", &claims);
        server.introspection.lock().unwrap().insert(
            ghost.clone(),
            json!({"active": true, "client_id": "machine", "aud": [RESOURCE],
                "exp": now() + 300, "iss": server.issuer}),
        );
        assert_eq!(verify(&v, &ghost).await.unwrap().subject, "machine");
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 1);
        assert_eq!(server.introspections.load(Ordering::SeqCst), 1);
        // The positive answer is reused.
        assert_eq!(verify(&v, &ghost).await.unwrap().subject, "machine");
        assert_eq!(server.introspections.load(Ordering::SeqCst), 1);
        // Another unknown key: one more JWKS refresh, then introspection says no.
        let other = sign(Algorithm::RS256, &rsa2(), "ghost2", &claims);
        assert_eq!(
            verify(&v, &other).await,
            invalid("introspection: the token is not active")
        );
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 2);
        assert_eq!(server.introspections.load(Ordering::SeqCst), 2);
        // Beyond the limit: neither the JWKS nor introspection is asked.
        let third = sign(Algorithm::RS256, &rsa2(), "ghost3", &claims);
        assert_eq!(
            verify(&v, &third).await,
            invalid(
                "unknown kid \"ghost3\" (the JWKS was not refetched: at most one refresh a minute); not introspected: more than 2 such tokens in 3600000 ms"
            )
        );
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 2);
        assert_eq!(server.introspections.load(Ordering::SeqCst), 2);
        // A JWT of a published key is never introspected.
        let known = sign(Algorithm::RS256, &rsa(), "rsa", &claims);
        assert_eq!(verify(&v, &known).await.unwrap().subject, "alice");
        assert_eq!(server.introspections.load(Ordering::SeqCst), 2);
        // Without introspection, an unknown key is simply invalid.
        assert_eq!(
            verify(&verifier(&server), &ghost).await,
            invalid("unknown kid \"ghost\" (after a JWKS refresh)")
        );
    }

    #[tokio::test]
    async fn opaque_tokens_are_introspected() {
        let server = start("").await;
        let v = introspecting(&server);
        let now = now();
        let answers = [
            (
                "good",
                json!({"active": true, "client_id": "machine", "aud": [RESOURCE],
                "scope": "catalog:read", "exp": now + 300, "iss": server.issuer,
                "token_type": "Bearer"}),
            ),
            (
                "no-aud",
                json!({"active": true, "client_id": "machine", "exp": now + 300}),
            ),
            (
                "other-iss",
                json!({"active": true, "client_id": "machine", "aud": RESOURCE,
                "iss": "http://127.0.0.1:1"}),
            ),
            (
                "expired",
                json!({"active": true, "client_id": "machine", "aud": RESOURCE, "exp": now - 60}),
            ),
            ("nobody", json!({"active": true, "aud": RESOURCE})),
            (
                "not-really",
                json!({"active": "true", "aud": RESOURCE, "sub": "x"}),
            ),
        ];
        for (token, answer) in answers {
            server
                .introspection
                .lock()
                .unwrap()
                .insert(token.into(), answer);
        }
        let expected = Principal {
            issuer: server.issuer.clone(),
            subject: "machine".into(),
            client_id: "machine".into(),
            scopes: vec!["catalog:read".into()],
            audience: vec![RESOURCE.into()],
            expires_at: Some(now + 300),
            claims: json!({"token_type": "Bearer"}).as_object().unwrap().clone(),
        };
        assert_eq!(verify(&v, "good").await, Ok(expected.clone()));
        assert_eq!(server.introspections.load(Ordering::SeqCst), 1);
        // A positive answer is reused.
        assert_eq!(verify(&v, "good").await, Ok(expected));
        assert_eq!(server.introspections.load(Ordering::SeqCst), 1);
        assert_eq!(
            verify(&v, "unknown").await,
            invalid("introspection: the token is not active")
        );
        assert_eq!(
            verify(&v, "not-really").await,
            invalid("introspection: the token is not active")
        );
        assert_eq!(
            verify(&v, "no-aud").await,
            invalid("introspection: aud does not contain the resource")
        );
        assert_eq!(
            verify(&v, "other-iss").await,
            invalid("introspection: iss is not the issuer")
        );
        assert_eq!(verify(&v, "expired").await, invalid("expired (exp)"));
        assert_eq!(
            verify(&v, "nobody").await,
            invalid("introspection: neither sub nor client_id")
        );
        // Negative answers are not cached.
        assert_eq!(
            verify(&v, "unknown").await,
            invalid("introspection: the token is not active")
        );
        assert_eq!(server.introspections.load(Ordering::SeqCst), 8);
        // No JWKS was needed.
        assert_eq!(server.jwks_fetches.load(Ordering::SeqCst), 0);

        // Wrong credentials: the authorization server says 401, which is not the token's fault.
        let wrong = OAuthVerifier::new(AuthSettings {
            introspection: Some(Introspection {
                url: format!("{}/introspect", server.issuer),
                client_id: "rs".into(),
                client_secret: "wrong".into(),
            }),
            ..AuthSettings::new(&server.issuer, RESOURCE)
        });
        assert_eq!(
            verify(&wrong, "good").await,
            Err(Rejection::Unavailable(format!(
                "introspection: {}/introspect: HTTP 401 Unauthorized",
                server.issuer
            )))
        );
        // Without introspection an opaque token is simply invalid.
        assert_eq!(
            verify(&verifier(&server), "good").await,
            invalid("not a JWT, and no introspection endpoint is configured")
        );
    }
}
