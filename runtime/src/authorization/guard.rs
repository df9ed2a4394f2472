//! The resource-server policy of the HTTP front (MCP authorization: an OAuth 2.1 resource
//! server): what a request's credentials are, whether they suffice for what it asks, and the
//! answers when they do not, all decided here before rmcp or any handler sees the request.
//!
//! * The RFC 9728 protected-resource metadata ([`Guard::metadata`]), served at
//!   `/.well-known/oauth-protected-resource` and at that path followed by the resource's path
//!   (`http://h:p/mcp` -> `/.well-known/oauth-protected-resource/mcp`, the URL every challenge
//!   names as `resource_metadata`).
//! * The `Authorization` header ([`Guard::authenticate`]): exactly one, scheme `Bearer`
//!   (case-insensitive), one space, a non-empty token without blanks; a header of another
//!   scheme (`Basic ...`) counts as no bearer credentials (RFC 6750 §3.1); anything else is
//!   `400 invalid_request`. An `access_token` query parameter is never read (the MCP authorization
//!   specification forbids tokens in the query). The token goes to the [`TokenVerifier`].
//! * Which scopes a request needs ([`Guard::read`]): the spec's server-wide scopes, plus, for
//!   `tools/call` and `prompts/get` (by `params.name`), `resources/read` and
//!   `resources/subscribe` (by `params.uri`: fixed resources first, then templates in spec
//!   order, matched by the resource dispatch's own matcher) and `completion/complete` (a
//!   prompt's by `params.ref.name`, a template's by `params.ref.uri`, the template's text as the
//!   completion dispatch looks it up), the operation's own; for a JSON-RPC batch, those of
//!   every element. The body is read by a borrowed partial parse that never fails on types
//!   (a name that occurs twice counts twice: whichever one rmcp takes is covered), and not at
//!   all when no operation has scopes of its own.
//! * What a `subscriptions/listen` may follow ([`Guard::withheld`]): its
//!   `resourceSubscriptions` that the caller may not read are withheld, not refused: the front
//!   removes them from the request ([`narrow_listen`]) before rmcp reads it, so the
//!   acknowledgement (the honoured subset) leaves them out and their updates never reach the
//!   stream; the rest of the stream is the caller's. A body that cannot be rewritten is
//!   refused ([`Guard::refusal`]).
//! * The answers ([`Guard::decide`]): `401` without a token (no `error`, RFC 6750 §3.1) or
//!   with a token that fails (one public text; the reason is logged), `403
//!   insufficient_scope` naming everything the request needs (server-wide first), `400
//!   invalid_request`, and `503` with `Retry-After` when the authorization server cannot be
//!   reached (never a pass). Each is JSON with `Cache-Control: no-store`.
//!
//! Who must authenticate: every request when the spec's `auth.required` holds, or when the
//! spec says nothing about `auth` (a deployment that configures an issuer protects
//! everything). With `auth.required: false` an anonymous request passes unless its operation
//! has scopes of its own (then `401` naming them); a token that is sent must verify, and a
//! verified caller needs the server-wide scopes too.

use std::{
    borrow::Cow,
    collections::HashSet,
    fmt,
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use axum::{
    body::Bytes,
    http::{HeaderMap, HeaderValue, StatusCode, Uri, header},
    response::{IntoResponse, Response},
};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::json;

use crate::{
    authorization::{
        AuthSettings, Rejection, TokenVerifier,
        principal::{Access, Principal},
    },
    catalog::resources::UriTemplate,
};

/// The RFC 9728 well-known path of the protected-resource metadata.
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// `Retry-After` (seconds) of the `503` when the authorization server cannot be reached.
const RETRY_AFTER_SECS: u32 = 5;

/// The one public text of a token that failed verification.
const INVALID_TOKEN: &str = "The access token is invalid or expired";

/// The resource-server policy of one server: its resource, its metadata, its verifier and
/// the spec's [`Access`].
pub(crate) struct Guard {
    verifier: Arc<dyn TokenVerifier>,
    access: &'static Access,
    /// The protected-resource metadata URL (`resource_metadata` of every challenge).
    metadata_url: String,
    /// The paths the metadata is served at: the well-known path, and it followed by the
    /// resource's path.
    metadata_paths: [String; 2],
    /// The metadata document, serialised once.
    document: Bytes,
    /// The resource templates with scopes of their own, parsed once, in spec order.
    templates: Vec<(UriTemplate, &'static [&'static str])>,
    /// Whether any operation has scopes of its own (else bodies are not looked at).
    per_operation: bool,
    /// The clock leeway tokens are verified with ([`AuthSettings::leeway`]).
    leeway: Duration,
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard")
            .field("metadata_url", &self.metadata_url)
            .finish_non_exhaustive()
    }
}

/// What a request's `Authorization` header amounts to.
#[derive(Debug)]
pub(crate) enum Credential {
    /// No `Authorization` header.
    Absent,
    /// A bearer token that verified.
    Valid(Arc<Principal>),
    /// A bearer token that did not.
    Invalid,
    /// A bearer token that cannot be checked now.
    Unavailable,
    /// A malformed header (two of them, another scheme, no token): why.
    Malformed(&'static str),
}

/// The protected-resource metadata document (RFC 9728 §2), members in the RFC's order.
#[derive(serde::Serialize)]
struct Metadata<'a> {
    resource: &'a str,
    authorization_servers: [&'a str; 1],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scopes_supported: Vec<&'a str>,
    bearer_methods_supported: [&'a str; 1],
}

impl Guard {
    /// The policy for tokens from `settings.issuer` for `settings.resource`, checked by
    /// `verifier`, against the spec's `access`. Fails when the resource is not an absolute
    /// `http` or `https` URI without a fragment.
    pub(crate) fn new(
        settings: &AuthSettings,
        verifier: Arc<dyn TokenVerifier>,
        access: &'static Access,
    ) -> Result<Self, String> {
        let resource = &settings.resource;
        let (metadata_url, path) = metadata_location(resource)?;
        let document = Metadata {
            resource,
            authorization_servers: [&settings.issuer],
            scopes_supported: scopes_supported(access),
            bearer_methods_supported: ["header"],
        };
        let document = serde_json::to_vec(&document).map_err(|e| e.to_string())?;
        let templates = access
            .templates
            .iter()
            .map(|(template, scopes)| (UriTemplate::parse(template), *scopes))
            .collect();
        let per_operation = [
            access.tools,
            access.prompts,
            access.resources,
            access.templates,
        ]
        .iter()
        .any(|table| table.iter().any(|(_, scopes)| !scopes.is_empty()));
        Ok(Guard {
            verifier,
            access,
            metadata_url,
            metadata_paths: [METADATA_PATH.to_string(), path],
            document: Bytes::from(document),
            templates,
            per_operation,
            leeway: settings.leeway,
        })
    }

    /// How long a stream opened with `principal`'s token may still run: until the token
    /// expires (its `exp`, with the leeway it was verified with), when the same token would no
    /// longer be accepted. A listen stream ends then, so nothing reaches a caller whose token
    /// has expired; the client opens a new one with a fresh token. `None`: the token does not
    /// expire.
    pub(crate) fn stream_lifetime(&self, principal: &Principal) -> Option<Duration> {
        let expires_at = UNIX_EPOCH
            .checked_add(Duration::from_secs(principal.expires_at?))?
            .checked_add(self.leeway)?;
        Some(
            expires_at
                .duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO),
        )
    }

    /// The paths the metadata is served at (the second equals the first for a resource at
    /// the root).
    pub(crate) fn metadata_paths(&self) -> &[String; 2] {
        &self.metadata_paths
    }

    /// The protected-resource metadata: `200 application/json`, cacheable for an hour.
    pub(crate) fn metadata(&self) -> Response {
        (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "public, max-age=3600"),
            ],
            self.document.clone(),
        )
            .into_response()
    }

    /// What the request's `Authorization` header amounts to (the token verified).
    pub(crate) async fn authenticate(&self, headers: &HeaderMap) -> Credential {
        let token = match bearer(headers) {
            Ok(Some(token)) => token,
            Ok(None) => return Credential::Absent,
            Err(why) => return Credential::Malformed(why),
        };
        match self.verifier.verify(token).await {
            Ok(principal) => Credential::Valid(principal),
            Err(Rejection::Invalid(reason)) => {
                tracing::info!("rejected an access token: {reason}");
                Credential::Invalid
            }
            Err(Rejection::Unavailable(reason)) => {
                tracing::warn!("cannot verify an access token now (answered 503): {reason}");
                Credential::Unavailable
            }
        }
    }

    /// What the operations in a POST `body` need and ask ([`Operation`]). Empty without
    /// per-operation scopes (the body is then not read) and for a body that is not JSON (rmcp,
    /// which parses with the same parser, serves nothing from it).
    pub(crate) fn read(&self, body: &[u8]) -> Operation {
        let mut operation = Operation::default();
        if !self.per_operation {
            return operation;
        }
        let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
        let Ok(Messages(mut messages)) = serde_json::from_slice::<Messages<'_>>(body) else {
            return operation;
        };
        // Every repeated key and list entry was kept (rmcp reads the last); one of each is
        // enough to decide, and keeps the work linear in the body whatever it repeats.
        messages.iter_mut().for_each(Message::dedup);
        let mut listened = HashSet::new();
        let needed = &mut operation.scopes;
        for message in &messages {
            for method in &message.methods {
                match method.as_ref() {
                    "tools/call" => {
                        for name in &message.names {
                            add(needed, own_scopes(self.access.tools, name));
                        }
                    }
                    "prompts/get" => {
                        for name in &message.names {
                            add(needed, own_scopes(self.access.prompts, name));
                        }
                    }
                    // Subscribing to a resource's updates needs what reading it needs.
                    "resources/read" | "resources/subscribe" => {
                        for uri in &message.uris {
                            add(needed, self.resource_scopes(uri));
                        }
                    }
                    // Completing a prompt's argument or a template's variable needs what
                    // getting the prompt or reading the template's resources needs: `ref.name`
                    // is a prompt's name, `ref.uri` a template as the spec writes it (the
                    // completion dispatch looks templates up by their text). Both are counted
                    // whatever `ref.type` says.
                    "completion/complete" => {
                        for name in &message.ref_names {
                            add(needed, own_scopes(self.access.prompts, name));
                        }
                        for uri in &message.ref_uris {
                            add(needed, own_scopes(self.access.templates, uri));
                        }
                    }
                    // A listener's resources are withheld, not refused ([`Guard::withheld`]).
                    "subscriptions/listen" => {
                        for uri in &message.subscriptions {
                            if listened.insert(uri.as_ref()) {
                                operation.listened.push(uri.to_string());
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        operation
    }

    /// The own scopes of the resource at `uri`: a fixed resource's, else those of the first
    /// template (in spec order) that matches it, as the resource dispatch matches.
    fn resource_scopes(&self, uri: &str) -> &'static [&'static str] {
        match self
            .access
            .resources
            .iter()
            .find(|(known, _)| *known == uri)
        {
            Some((_, scopes)) => scopes,
            None => self.template_scopes(uri),
        }
    }

    /// The resources of a `subscriptions/listen` (`listened`, from [`Guard::read`]) that
    /// `caller` may not read, and the scopes they need of their own (no duplicates). The
    /// listener is not told of their updates: the front removes them from the request
    /// ([`narrow_listen`]), so the acknowledgement, which lists what is honoured, leaves them
    /// out.
    pub(crate) fn withheld(
        &self,
        caller: Option<&Principal>,
        listened: &[String],
    ) -> (Vec<String>, Vec<&'static str>) {
        let mut uris = Vec::new();
        let mut scopes = Vec::new();
        for uri in listened {
            let own = self.resource_scopes(uri);
            if !self.access.permits(caller, own) {
                uris.push(uri.clone());
                add(&mut scopes, own);
            }
        }
        (uris, scopes)
    }

    /// The refusal of a request whose `caller` lacks `operation` (when a `subscriptions/listen`
    /// cannot be narrowed): `403 insufficient_scope`, or `401` for an anonymous caller.
    pub(crate) fn refusal(
        &self,
        caller: Option<&Principal>,
        operation: &[&'static str],
    ) -> Response {
        let needed = self.needed(operation);
        match caller {
            Some(_) => self.insufficient_scope(&needed),
            None => self.unauthenticated(&needed),
        }
    }

    /// The scopes of the first template (in spec order) that matches `uri`.
    fn template_scopes(&self, uri: &str) -> &'static [&'static str] {
        self.templates
            .iter()
            .find(|(template, _)| template.matches(uri))
            .map_or(&[], |(_, scopes)| *scopes)
    }

    /// Everything a request needs: the server-wide scopes, then `operation`'s, without
    /// duplicates.
    fn needed(&self, operation: &[&'static str]) -> Vec<&'static str> {
        let mut needed = Vec::with_capacity(self.access.scopes.len() + operation.len());
        add(&mut needed, self.access.scopes);
        add(&mut needed, operation);
        needed
    }

    /// The caller of a request with `credential` whose operations need `operation` (from
    /// [`Guard::read`]; empty for GET, DELETE and other methods), or the answer
    /// that refuses it.
    pub(crate) fn decide(
        &self,
        credential: Credential,
        operation: &[&'static str],
    ) -> Result<Option<Arc<Principal>>, Box<Response>> {
        let refusal = match credential {
            Credential::Valid(principal) => {
                if self.access.permits(Some(&principal), operation) {
                    return Ok(Some(principal));
                }
                self.insufficient_scope(&self.needed(operation))
            }
            Credential::Absent if self.access.permits(None, operation) => return Ok(None),
            Credential::Absent => self.unauthenticated(&self.needed(operation)),
            Credential::Invalid => self.invalid_token(&self.needed(operation)),
            Credential::Unavailable => unavailable(),
            Credential::Malformed(why) => self.invalid_request(why, &self.needed(operation)),
        };
        Err(Box::new(refusal))
    }

    /// `401` without a token: `Bearer resource_metadata="…"` (and `scope`), no `error`.
    fn unauthenticated(&self, scopes: &[&str]) -> Response {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        push_scope(&mut challenge, scopes);
        answer(
            StatusCode::UNAUTHORIZED,
            Some(challenge),
            json!({"error_description": "Authentication required"}),
        )
    }

    /// `401 invalid_token`.
    fn invalid_token(&self, scopes: &[&str]) -> Response {
        let mut challenge = format!(
            "Bearer error=\"invalid_token\", error_description=\"{INVALID_TOKEN}\", resource_metadata=\"{}\"",
            self.metadata_url
        );
        push_scope(&mut challenge, scopes);
        answer(
            StatusCode::UNAUTHORIZED,
            Some(challenge),
            json!({"error": "invalid_token", "error_description": INVALID_TOKEN}),
        )
    }

    /// `403 insufficient_scope`, naming everything the request needs.
    fn insufficient_scope(&self, needed: &[&str]) -> Response {
        let scope = needed.join(" ");
        let description = format!("Required scope: {scope}");
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{}\", error_description=\"{description}\"",
            self.metadata_url
        );
        answer(
            StatusCode::FORBIDDEN,
            Some(challenge),
            json!({"error": "insufficient_scope", "error_description": description}),
        )
    }

    /// `400 invalid_request` (a malformed `Authorization` header).
    fn invalid_request(&self, why: &str, scopes: &[&str]) -> Response {
        let mut challenge = format!(
            "Bearer error=\"invalid_request\", error_description=\"{why}\", resource_metadata=\"{}\"",
            self.metadata_url
        );
        push_scope(&mut challenge, scopes);
        answer(
            StatusCode::BAD_REQUEST,
            Some(challenge),
            json!({"error": "invalid_request", "error_description": why}),
        )
    }
}

/// The protected-resource metadata URL of `resource` and the path it has there, or why
/// `resource` (`--auth-resource`) cannot be one: it must be an absolute `http` or `https` URI
/// without a fragment. RFC 9728 §3.1: the well-known path goes between the host and the
/// resource's path (a root path adds nothing); a query stays at the end.
pub(crate) fn metadata_location(resource: &str) -> Result<(String, String), String> {
    let bad = |why: &str| format!("the auth resource '{resource}' {why}");
    if resource.contains('#') {
        return Err(bad("has a fragment"));
    }
    let uri: Uri = resource
        .parse()
        .map_err(|_| bad("is not an absolute http or https URI"))?;
    let scheme = uri
        .scheme_str()
        .filter(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
        .ok_or_else(|| bad("is not an absolute http or https URI"))?;
    let authority = uri
        .authority()
        .ok_or_else(|| bad("is not an absolute http or https URI"))?;
    let path = match uri.path() {
        "/" => "",
        path => path,
    };
    let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
    Ok((
        format!("{scheme}://{authority}{METADATA_PATH}{path}{query}"),
        format!("{METADATA_PATH}{path}"),
    ))
}

/// The bearer token of `headers`: `None` without an `Authorization` header or with one of
/// another scheme, the reason when the header is malformed.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, &'static str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err("Exactly one Authorization header is allowed");
    }
    let value = value
        .to_str()
        .map_err(|_| "The Authorization header must be 'Bearer <token>'")?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme (`Basic ...`) carries no bearer credentials: the request is answered
        // as one without them (RFC 6750 §3.1: 401 and a challenge without an error code), the
        // answer a client's OAuth flow starts from.
        return Ok(None);
    }
    if token.is_empty() || token.contains([' ', '\t']) {
        return Err("The Authorization header must be 'Bearer <token>'");
    }
    Ok(Some(token))
}

/// `503` with `Retry-After`: the authorization server cannot be reached (fail closed).
fn unavailable() -> Response {
    let mut response = answer(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        json!({
            "error": "temporarily_unavailable",
            "error_description": "The access token cannot be verified now; try again later",
        }),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
}

/// An authorization answer: JSON, `Cache-Control: no-store`, the challenge if any.
fn answer(status: StatusCode, challenge: Option<String>, body: serde_json::Value) -> Response {
    let mut response = (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response();
    if let Some(challenge) = challenge {
        match HeaderValue::try_from(challenge) {
            Ok(value) => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            Err(e) => tracing::error!("cannot write the WWW-Authenticate challenge: {e}"),
        }
    }
    response
}

/// `, scope="a b"` when there are scopes to name.
fn push_scope(challenge: &mut String, scopes: &[&str]) {
    if !scopes.is_empty() {
        challenge.push_str(", scope=\"");
        challenge.push_str(&scopes.join(" "));
        challenge.push('"');
    }
}

/// What a POST body's operations need and ask, as far as authorization is concerned.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Operation {
    /// The scopes of their own its operations need (server-wide scopes not included; no
    /// duplicates, in the order met).
    pub(crate) scopes: Vec<&'static str>,
    /// The `resourceSubscriptions` of its `subscriptions/listen` messages (no duplicates, in
    /// the order met).
    pub(crate) listened: Vec<String>,
}

/// The own scopes of `key` in `table` (one of the [`Access`] tables; none when absent).
fn own_scopes(
    table: &'static [(&'static str, &'static [&'static str])],
    key: &str,
) -> &'static [&'static str] {
    table
        .iter()
        .find(|(known, _)| *known == key)
        .map_or(&[], |(_, scopes)| *scopes)
}

/// `body` with the URIs `withheld` removed from the `params.notifications.resourceSubscriptions`
/// of every `subscriptions/listen` message (one object or a batch's elements), written anew, so
/// that rmcp reads exactly what was checked; `None` when the body does not parse as JSON (the
/// caller then refuses the request: never a pass).
pub(crate) fn narrow_listen(body: &[u8], withheld: &[String]) -> Option<Bytes> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let mut value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let withheld: HashSet<&str> = withheld.iter().map(String::as_str).collect();
    let narrow = |message: &mut serde_json::Value| {
        if message.get("method").and_then(serde_json::Value::as_str) != Some("subscriptions/listen")
        {
            return;
        }
        if let Some(uris) = message
            .pointer_mut("/params/notifications/resourceSubscriptions")
            .and_then(serde_json::Value::as_array_mut)
        {
            uris.retain(|uri| !uri.as_str().is_some_and(|uri| withheld.contains(uri)));
        }
    };
    match &mut value {
        serde_json::Value::Array(messages) => messages.iter_mut().for_each(narrow),
        message => narrow(message),
    }
    serde_json::to_vec(&value).ok().map(Bytes::from)
}

/// Appends the scopes of `more` that `needed` lacks.
fn add(needed: &mut Vec<&'static str>, more: &[&'static str]) {
    for scope in more {
        if !needed.contains(scope) {
            needed.push(scope);
        }
    }
}

/// `scopes_supported`: the spec's `auth.scopesSupported`, else every scope the spec names,
/// sorted.
fn scopes_supported(access: &'static Access) -> Vec<&'static str> {
    if !access.scopes_supported.is_empty() {
        return access.scopes_supported.to_vec();
    }
    let mut all: Vec<&'static str> = access.scopes.to_vec();
    for table in [
        access.tools,
        access.prompts,
        access.resources,
        access.templates,
    ] {
        for (_, scopes) in table {
            all.extend_from_slice(scopes);
        }
    }
    all.sort_unstable();
    all.dedup();
    all
}

/// The messages of a POST body as far as the scope decision reads them: one object, or the
/// elements of a batch. Anything else reads as no message.
struct Messages<'a>(Vec<Message<'a>>);

/// What one message names: every `method` member, every `params.name` and `params.uri`,
/// `params.ref.name` and `params.ref.uri`, and the strings of
/// `params.notifications.resourceSubscriptions` (a key given twice is kept twice). Values of
/// another type are skipped.
#[derive(Default)]
struct Message<'a> {
    methods: Vec<Cow<'a, str>>,
    names: Vec<Cow<'a, str>>,
    uris: Vec<Cow<'a, str>>,
    ref_names: Vec<Cow<'a, str>>,
    ref_uris: Vec<Cow<'a, str>>,
    subscriptions: Vec<Cow<'a, str>>,
}

impl Message<'_> {
    /// Each list with its first occurrences only, in order.
    fn dedup(&mut self) {
        for list in [
            &mut self.methods,
            &mut self.names,
            &mut self.uris,
            &mut self.ref_names,
            &mut self.ref_uris,
            &mut self.subscriptions,
        ] {
            let mut seen = HashSet::with_capacity(list.len());
            list.retain(|item| seen.insert(item.clone()));
        }
    }
}

impl<'de> Deserialize<'de> for Messages<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> Visitor<'de> for Top {
            type Value = Messages<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message or batch")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Ok(Messages(vec![read_message(map)?]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut messages = Vec::new();
                while let Some(Lenient(message)) =
                    seq.next_element::<Lenient<Option<Message<'de>>>>()?
                {
                    messages.extend(message);
                }
                Ok(Messages(messages))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Messages(Vec::new()))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Messages(Vec::new()))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Messages(Vec::new()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Messages(Vec::new()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Messages(Vec::new()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Messages(Vec::new()))
            }
        }
        deserializer.deserialize_any(Top)
    }
}

/// The members of one message object.
fn read_message<'de, A: MapAccess<'de>>(mut map: A) -> Result<Message<'de>, A::Error> {
    let mut message = Message::default();
    while let Some(key) = map.next_key::<Cow<'de, str>>()? {
        match key.as_ref() {
            "method" => {
                if let Lenient(Some(method)) = map.next_value::<Lenient<Option<Text<'de>>>>()? {
                    message.methods.push(method.0);
                }
            }
            "params" => {
                if let Lenient(Some(params)) = map.next_value::<Lenient<Option<Params<'de>>>>()? {
                    message.names.extend(params.names);
                    message.uris.extend(params.uris);
                    message.ref_names.extend(params.reference.names);
                    message.ref_uris.extend(params.reference.uris);
                    message.subscriptions.extend(params.subscriptions);
                }
            }
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(message)
}

/// `params.name` and `params.uri`, `params.ref`'s and the listened resources, every
/// occurrence.
#[derive(Default)]
struct Params<'a> {
    names: Vec<Cow<'a, str>>,
    uris: Vec<Cow<'a, str>>,
    reference: Reference<'a>,
    subscriptions: Vec<Cow<'a, str>>,
}

/// `params.ref.name` and `params.ref.uri` (`completion/complete`), every occurrence.
#[derive(Default)]
struct Reference<'a> {
    names: Vec<Cow<'a, str>>,
    uris: Vec<Cow<'a, str>>,
}

/// `params.notifications.resourceSubscriptions` (`subscriptions/listen`): its strings, every
/// occurrence.
#[derive(Default)]
struct Notifications<'a>(Vec<Cow<'a, str>>);

/// A JSON array's strings (other elements skipped).
struct Texts<'a>(Vec<Cow<'a, str>>);

/// A JSON string, borrowed when it has no escapes.
struct Text<'a>(Cow<'a, str>);

/// A value of the expected kind (`Some`), or anything else, skipped (`None`): a type the
/// scope decision does not expect never fails the parse.
struct Lenient<T>(T);

/// What [`Lenient`] reads for each expected kind.
trait LenientKind<'de>: Sized {
    fn from_str_value(_: Cow<'de, str>) -> Option<Self> {
        None
    }
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        drain_map(map).map(|()| None)
    }
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

impl<'de> LenientKind<'de> for Text<'de> {
    fn from_str_value(text: Cow<'de, str>) -> Option<Self> {
        Some(Text(text))
    }
}

impl<'de> LenientKind<'de> for Params<'de> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut params = Params::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let into = match key.as_ref() {
                "name" => &mut params.names,
                "uri" => &mut params.uris,
                "ref" => {
                    let read = map.next_value::<Lenient<Option<Reference<'de>>>>()?;
                    if let Lenient(Some(reference)) = read {
                        params.reference.names.extend(reference.names);
                        params.reference.uris.extend(reference.uris);
                    }
                    continue;
                }
                "notifications" => {
                    let read = map.next_value::<Lenient<Option<Notifications<'de>>>>()?;
                    if let Lenient(Some(notifications)) = read {
                        params.subscriptions.extend(notifications.0);
                    }
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if let Lenient(Some(text)) = map.next_value::<Lenient<Option<Text<'de>>>>()? {
                into.push(text.0);
            }
        }
        Ok(Some(params))
    }
}

impl<'de> LenientKind<'de> for Reference<'de> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut reference = Reference::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let into = match key.as_ref() {
                "name" => &mut reference.names,
                "uri" => &mut reference.uris,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            if let Lenient(Some(text)) = map.next_value::<Lenient<Option<Text<'de>>>>()? {
                into.push(text.0);
            }
        }
        Ok(Some(reference))
    }
}

impl<'de> LenientKind<'de> for Notifications<'de> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut notifications = Notifications::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == "resourceSubscriptions" {
                if let Lenient(Some(texts)) = map.next_value::<Lenient<Option<Texts<'de>>>>()? {
                    notifications.0.extend(texts.0);
                }
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Some(notifications))
    }
}

impl<'de> LenientKind<'de> for Texts<'de> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let mut texts = Vec::new();
        while let Some(Lenient(text)) = seq.next_element::<Lenient<Option<Text<'de>>>>()? {
            texts.extend(text.map(|text| text.0));
        }
        Ok(Some(Texts(texts)))
    }
}

impl<'de> LenientKind<'de> for Message<'de> {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        read_message(map).map(Some)
    }
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de, T: LenientKind<'de>> Deserialize<'de> for Lenient<Option<T>> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Any<T>(std::marker::PhantomData<T>);
        impl<'de, T: LenientKind<'de>> Visitor<'de> for Any<T> {
            type Value = Lenient<Option<T>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Lenient(T::from_str_value(Cow::Borrowed(v))))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Lenient(T::from_str_value(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Lenient(T::from_str_value(Cow::Owned(v))))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::from_map(map).map(Lenient)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                T::from_seq(seq).map(Lenient)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
        }
        deserializer.deserialize_any(Any(std::marker::PhantomData))
    }
}
