//! What a request carries besides its message, in its context's extensions: the HTTP request
//! head rmcp puts there ([`head`]) and the [`Arrival`] the HTTP front stamps into it.

use std::{net::SocketAddr, time::Instant};

use rmcp::{RoleServer, service::RequestContext};

/// The HTTP request head a request came with (rmcp puts it into the request's extensions);
/// `None` on stdio.
pub(crate) fn head(context: &RequestContext<RoleServer>) -> Option<&axum::http::request::Parts> {
    context.extensions.get::<axum::http::request::Parts>()
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
