//! Questions to the client: what a resolver asks ([`ask`]), the round that runs asking
//! resolvers on both protocol eras ([`round`]), form elicitations ([`form`]), the client
//! capabilities a question needs ([`capability`]), and the request's [`Context`](context::Context)
//! through which handlers and resolvers ask.

pub(crate) mod ask;
pub(crate) mod capability;
pub(crate) mod context;
pub(crate) mod form;
#[cfg(feature = "testing")]
pub(crate) mod log;
pub(crate) mod round;
