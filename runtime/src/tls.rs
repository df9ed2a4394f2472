//! TLS for the HTTP clients the runtime builds (the OAuth verifier's fetches, feature `auth`;
//! the OTLP exporter's, feature `telemetry`).

use std::sync::{Arc, OnceLock};

/// The TLS configuration of every HTTP client the runtime builds (this module's fetches, the
/// OTLP exporter's): rustls with the ring provider (never a process-wide provider, which the
/// runtime does not install) and the platform's roots. Built once.
pub(crate) fn tls_config() -> Result<rustls::ClientConfig, String> {
    static TLS: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    TLS.get_or_init(|| {
        use rustls_platform_verifier::BuilderVerifierExt;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        Ok(rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_platform_verifier()
            .map_err(|e| format!("the platform's TLS roots: {e}"))?
            .with_no_client_auth())
    })
    .clone()
}
