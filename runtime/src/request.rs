//! What a request carries besides its message, in its context's extensions: the HTTP request
//! head rmcp puts there ([`head`]), the [`Arrival`] the HTTP front stamps into it, and the
//! message as sent ([`Raw`], [`raw_message`]).

use std::{net::SocketAddr, time::Instant};

use rmcp::{RoleServer, service::RequestContext};

/// The HTTP request head a request came with (rmcp puts it into the request's extensions);
/// `None` on stdio.
pub(crate) fn head(context: &RequestContext<RoleServer>) -> Option<&axum::http::request::Parts> {
    context.extensions.get::<axum::http::request::Parts>()
}

/// A request's message as sent (a POST's body, a stdio line), in its extensions (a
/// reference-counted handle: no copy per reader).
#[derive(Clone)]
pub(crate) struct Raw(pub(crate) axum::body::Bytes);

/// The message of the request `context` belongs to, as sent: put there by the stdio transport
/// (for `tools/call`) or, in the HTTP request's extensions, by the HTTP front; `None` for a
/// request served otherwise (an embedder's own rmcp transport).
pub(crate) fn raw_message(context: &RequestContext<RoleServer>) -> Option<&[u8]> {
    context
        .extensions
        .get::<Raw>()
        .or_else(|| head(context).and_then(|parts| parts.extensions.get::<Raw>()))
        .map(|Raw(bytes)| &bytes[..])
}

/// When a request arrived, and from where: the HTTP front stamps it into the request's
/// extensions when it read the request's head; without it (stdio, a router served by the
/// application), the wrapper's start counts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival {
    /// When the request's head was read.
    pub at: Instant,
    /// The client's address, when known.
    pub peer: Option<SocketAddr>,
}

impl Arrival {
    /// The arrival stamped into `context` (directly, or in the HTTP request's extensions).
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Option<Arrival> {
        context
            .extensions
            .get::<Arrival>()
            .copied()
            .or_else(|| head(context).and_then(|parts| parts.extensions.get::<Arrival>().copied()))
    }
}
