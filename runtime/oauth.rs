//! Placeholder for the OAuth verifier (JWKS, RFC 7662 introspection); the real file replaces
//! it at merge. Until then every token is [`Rejection::Unavailable`]: fail closed.

use super::{AuthSettings, Rejection, TokenVerifier, Verifying};

/// Verifies access tokens against the authorization server of [`AuthSettings`].
pub struct OAuthVerifier {
    settings: AuthSettings,
}

impl OAuthVerifier {
    /// The verifier for `settings`.
    pub fn new(settings: AuthSettings) -> Self {
        OAuthVerifier { settings }
    }
}

impl TokenVerifier for OAuthVerifier {
    fn verify<'a>(&'a self, _token: &'a str) -> Verifying<'a> {
        let _ = &self.settings;
        Box::pin(async { Err(Rejection::Unavailable("placeholder".to_string())) })
    }
}
