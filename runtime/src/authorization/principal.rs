//! Who is calling and what calling needs: the verified caller ([`Principal`]) a `"principal"`
//! resolver source receives, and the spec's authorization requirements ([`Access`]: the scopes
//! every request needs, each operation's own, what the metadata lists), generated once per crate
//! as a table and read by the HTTP front (the `403` scope challenge, before any handler runs) and
//! by the list handlers (`listVisibleOnly`).
//!
//! Over HTTP the front verifies the bearer token and puts the [`Principal`] into the request's
//! extensions ([`Context::principal`](crate::Context::principal) reads it there). Over stdio there is no OAuth (the
//! MCP authorization specification: credentials come from the environment): the principal, if
//! any, is the connection's, which the stdio transport puts into every request's extensions
//! (the command line's from `MCP_PRINCIPAL_*`, [`from_env`]), and scopes are not enforced.

use std::sync::Arc;

use rmcp::{RoleServer, service::RequestContext};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{errors::ToolError, request};

/// The verified caller: whom an access token was issued to, by whom, and for what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Principal {
    /// The token's issuer (`iss`), the authorization server.
    pub issuer: String,
    /// The subject (`sub`): the user, or the client itself for client credentials.
    pub subject: String,
    /// The OAuth client the token was issued to (`client_id`, else `azp`, else `sub`).
    pub client_id: String,
    /// The granted scopes (`scope`, space-separated in the token).
    pub scopes: Vec<String>,
    /// The audiences (`aud`); this server's resource URI is one of them.
    pub audience: Vec<String>,
    /// When the token expires (`exp`, seconds since the Unix epoch), if it says.
    pub expires_at: Option<u64>,
    /// Every other claim of the token (or introspection answer), as sent.
    pub claims: Map<String, Value>,
}

impl Principal {
    /// Whether every one of `scopes` was granted.
    pub fn has_scopes(&self, scopes: &[&str]) -> bool {
        scopes.iter().all(|s| self.scopes.iter().any(|g| g == s))
    }

    /// What a sealed `requestState` and a legacy session are bound to: the compact JSON array
    /// `[client_id, issuer, subject]` (the Python SDK's principal components; an empty part is
    /// `null`). Two tokens of the same caller bind alike; any other caller differs.
    pub fn binding(&self) -> String {
        let part = |s: &str| match s {
            "" => Value::Null,
            s => Value::String(s.to_string()),
        };
        Value::Array(vec![
            part(&self.client_id),
            part(&self.issuer),
            part(&self.subject),
        ])
        .to_string()
    }
}

/// The spec's authorization requirements, generated as `static ACCESS: runtime::Access` (the
/// spec's `auth` and every operation's `scopes`). [`Access::OPEN`] is a spec without `auth`.
#[derive(Debug)]
pub struct Access {
    /// Whether the spec has `auth` at all.
    pub declared: bool,
    /// `auth.required`: whether every request needs a valid token.
    pub required: bool,
    /// `auth.scopes`: what every request needs.
    pub scopes: &'static [&'static str],
    /// `auth.scopesSupported`: what the protected-resource metadata lists.
    pub scopes_supported: &'static [&'static str],
    /// `auth.listVisibleOnly`: the lists show only what the caller may use.
    pub list_visible_only: bool,
    /// Each tool's own `scopes` (tools without any are absent).
    pub tools: &'static [(&'static str, &'static [&'static str])],
    /// Each prompt's own `scopes`.
    pub prompts: &'static [(&'static str, &'static [&'static str])],
    /// Every resource, by URI, with its own `scopes` (empty: none), in spec order.
    pub resources: &'static [(&'static str, &'static [&'static str])],
    /// Every resource template with its own `scopes`, in spec order (the order the dispatch
    /// matches them in).
    pub templates: &'static [(&'static str, &'static [&'static str])],
}

impl Access {
    /// A spec without `auth`: nothing required.
    pub const OPEN: Access = Access {
        declared: false,
        required: false,
        scopes: &[],
        scopes_supported: &[],
        list_visible_only: false,
        tools: &[],
        prompts: &[],
        resources: &[],
        templates: &[],
    };

    /// Whether every request needs a valid token over HTTP: `auth.required`, or no `auth` in
    /// the spec at all (a deployment that configures an issuer protects everything).
    pub(crate) fn token_required(&self) -> bool {
        self.required || !self.declared
    }

    /// The one scope rule: whether `caller` (`None`: anonymous) may use an operation whose own
    /// scopes are `own`. A verified caller needs the server-wide scopes and `own`; an anonymous
    /// one passes only when no token is required and `own` is empty. The HTTP front refuses
    /// requests by it (`guard.rs`), withholds `subscriptions/listen` resources by it, and the
    /// `listVisibleOnly` lists are filtered by it.
    pub(crate) fn permits(&self, caller: Option<&Principal>, own: &[&str]) -> bool {
        match caller {
            Some(principal) => principal.has_scopes(self.scopes) && principal.has_scopes(own),
            None => !self.token_required() && own.is_empty(),
        }
    }
}

/// The error of a call that needs a verified principal and has none (a generated call passing a
/// `"principal"` parameter when the spec's `auth.required` holds): internal, so the client sees
/// only `Error executing tool <tool>` and the server logs "no verified principal". The HTTP front
/// and the stdio start-up make it unreachable; should it happen all the same, the call fails
/// closed.
pub fn unauthenticated() -> ToolError {
    ToolError::internal("no verified principal")
}

/// The verified caller of a request: the principal its transport put into the request's
/// extensions (the stdio connection's), else over HTTP the one the front put into the request
/// head's extensions; none: anonymous. What [`Context::principal`](crate::Context::principal) returns and what a
/// sealed `requestState` is bound to.
pub(crate) fn caller(request: &RequestContext<RoleServer>) -> Option<&Principal> {
    if let Some(principal) = request.extensions.get::<Arc<Principal>>() {
        return Some(principal);
    }
    request::head(request)?
        .extensions
        .get::<Arc<Principal>>()
        .map(|p| &**p)
}

/// The environment variables of the stdio principal.
pub(crate) const SUBJECT_ENV: &str = "MCP_PRINCIPAL_SUBJECT";
/// See [`SUBJECT_ENV`].
pub(crate) const ISSUER_ENV: &str = "MCP_PRINCIPAL_ISSUER";
/// See [`SUBJECT_ENV`].
pub(crate) const CLIENT_ID_ENV: &str = "MCP_PRINCIPAL_CLIENT_ID";
/// See [`SUBJECT_ENV`].
pub(crate) const SCOPES_ENV: &str = "MCP_PRINCIPAL_SCOPES";

/// The stdio principal from `MCP_PRINCIPAL_*` as `var` reads them: `MCP_PRINCIPAL_SUBJECT`
/// (required for a principal), `MCP_PRINCIPAL_ISSUER` (default empty),
/// `MCP_PRINCIPAL_CLIENT_ID` (default: the subject), `MCP_PRINCIPAL_SCOPES` (space-separated).
/// `Ok(None)` when none is set; an error names what is missing.
pub(crate) fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<Principal>, String> {
    let read = |name: &str| var(name).filter(|v| !v.is_empty());
    let subject = read(SUBJECT_ENV);
    let issuer = read(ISSUER_ENV);
    let client_id = read(CLIENT_ID_ENV);
    let scopes = read(SCOPES_ENV);
    let Some(subject) = subject else {
        if issuer.is_some() || client_id.is_some() || scopes.is_some() {
            return Err(format!(
                "{SUBJECT_ENV} must be set when any MCP_PRINCIPAL_* variable is (the stdio principal needs a subject)"
            ));
        }
        return Ok(None);
    };
    Ok(Some(Principal {
        issuer: issuer.unwrap_or_default(),
        client_id: client_id.unwrap_or_else(|| subject.clone()),
        subject,
        scopes: scopes
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        audience: Vec::new(),
        expires_at: None,
        claims: Map::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_principal_is_an_internal_error() {
        match unauthenticated() {
            ToolError::Internal(detail) => assert_eq!(detail, "no verified principal"),
            other => panic!("not internal: {other:?}"),
        }
    }
}
