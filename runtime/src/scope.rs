//! A server's own part of the process ([`Scope`]): its `requestState` policy and its
//! notification hub, found by the server's name. Two servers built in one process (two
//! generated routers in one application, or tests) never share them: each seals and opens
//! `requestState` with its own policy (its name is the default audience) and notifies its own
//! clients. Servers of the same name, which serve the same spec, share them.
//!
//! The server puts its scope into every request's extensions; what reads a request (the
//! `requestState` boundary, a round's sealing, `ctx.notifier()`, `ctx.log`) takes the scope from
//! there, and a request served without a server (a generated handler driven by hand) gets the
//! fallback: the policy from the environment with an empty audience, and a hub with nothing
//! declared.

use std::sync::Arc;

use rmcp::{RoleServer, service::RequestContext};

use crate::{
    capabilities::Capabilities,
    notify::{self, Hub, Notifier},
    state::{self, Slot, StatePolicy},
};

/// One server's policy and hub (see the module documentation), with the capabilities that
/// server declares.
#[derive(Clone)]
pub(crate) struct Scope {
    hub: Arc<Hub>,
    policy: Arc<Slot>,
    capabilities: Capabilities,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("hub", &self.hub)
            .finish_non_exhaustive()
    }
}

impl Scope {
    /// The scope of the server `name` that declares `capabilities`: made the first time a
    /// server of that name is built (its policy read from the environment, its declared
    /// notifications recorded), the same one afterwards. Fails when the environment's
    /// `requestState` configuration is unusable (see `state::policy_of`).
    pub(crate) fn of(name: &str, capabilities: Capabilities) -> Result<Scope, String> {
        let policy = state::policy_of(name)?;
        let hub = notify::hub(name);
        hub.configure(capabilities);
        Ok(Scope {
            hub,
            policy,
            capabilities,
        })
    }

    /// The server's hub.
    pub(crate) fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The capabilities the server declares.
    pub(crate) fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    /// The server's policy (as a reload leaves it).
    pub(crate) fn policy(&self) -> arc_swap::Guard<Arc<StatePolicy>> {
        self.policy.load()
    }
}

/// The policy of the server serving `request` (the fallback without one).
pub(crate) fn policy(request: &RequestContext<RoleServer>) -> arc_swap::Guard<Arc<StatePolicy>> {
    match request.extensions.get::<Scope>() {
        Some(scope) => scope.policy(),
        None => state::policy(),
    }
}

/// The notifier of the server serving `request` (one with nothing declared without one).
pub(crate) fn notifier(request: &RequestContext<RoleServer>) -> Notifier {
    match request.extensions.get::<Scope>() {
        Some(scope) => Notifier::to(Arc::clone(&scope.hub)),
        None => Notifier::of(""),
    }
}

/// The capabilities the server serving `request` declares (none without one).
pub(crate) fn capabilities(request: &RequestContext<RoleServer>) -> Capabilities {
    request
        .extensions
        .get::<Scope>()
        .map(Scope::capabilities)
        .unwrap_or_default()
}
