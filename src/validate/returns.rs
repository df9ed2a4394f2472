//! What a resolver's `returns` must be given what it asks: a resolver that produces a value, or
//! asks `elicit`, declares it (`missing-returns`); one that asks `sample` or `roots` gets the
//! client's result and must not (`unused-returns`). The form of an `elicit` resolver is checked
//! by [`super::forms`].

use super::{Validator, resolver_ptr};
use crate::diagnostics::{Code, Subject};
use crate::spec::{Asks, Resolver};

impl Validator<'_> {
    /// `returns` of resolver `rname` against what it asks.
    pub(super) fn returns_rule(&mut self, rname: &str, r: &Resolver) {
        let at = resolver_ptr(rname);
        match (r.asks, &r.returns) {
            (None | Some(Asks::Elicit), None) => {
                let what = if r.asks.is_some() {
                    "asks `elicit`, so it needs the form's schema"
                } else {
                    "does not ask, so it produces a value"
                };
                self.err(
                    Code::MissingReturns,
                    format!("resolver `{rname}` lacks `returns`: it {what}"),
                    at,
                )
                .subjects
                .push(Subject::Resolver(rname.to_string()));
            }
            (Some(a @ (Asks::Sample | Asks::Roots)), Some(_)) => {
                let value = if a == Asks::Sample {
                    "CreateMessageResult"
                } else {
                    "ListRootsResult"
                };
                self.err(
                    Code::UnusedReturns,
                    format!("resolver `{rname}` asks `{}`, so its value is the client's `{value}`; remove `returns`, which would be ignored", a.as_str()),
                    at.child("returns"),
                )
                .subjects
                .push(Subject::Resolver(rname.to_string()));
                self.also(at.child("asks"), format!("asks `{}`", a.as_str()));
            }
            _ => {}
        }
    }
}
