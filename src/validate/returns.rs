//! What a resolver's `returns` must be given what it asks: a resolver that produces a value, or
//! asks `elicit`, declares it (`missing-returns`); one that asks `sample` or `roots` gets the
//! client's result and must not (`unused-returns`). The form of an `elicit` resolver is checked
//! by [`super::forms`].

use super::{Validator, resolver_ptr};
use crate::diagnostics::{Code, Subject};
use crate::spec::{Resolver, asks};

impl Validator<'_> {
    /// `returns` of resolver `rname` against what it asks (the kind's descriptor says whether
    /// the protocol fixes the value's type).
    pub(super) fn returns_rule(&mut self, rname: &str, r: &Resolver) {
        let at = resolver_ptr(rname);
        let fixed = r.asks.map(asks::kind).and_then(|k| k.value);
        match (r.asks, fixed, &r.returns) {
            (_, None, None) => {
                let what = match r.asks {
                    Some(a) => format!("asks `{}`, so it needs the form's schema", a.as_str()),
                    None => "does not ask, so it produces a value".to_string(),
                };
                self.err(
                    Code::MissingReturns,
                    format!("resolver `{rname}` lacks `returns`: it {what}"),
                    at,
                )
                .subjects
                .push(Subject::Resolver(rname.to_string()));
            }
            (Some(a), Some(value), Some(_)) => {
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
