//! Resolvers that take values from one another in a cycle ([`crate::graph::cycles`]): one
//! `resolver-cycle` per cycle, labelling every edge along it.

use super::{Validator, resolver_ptr};
use crate::diagnostics::{Code, Subject};
use crate::graph::{cycles, edge_param};
use crate::pointer::Pointer;

impl Validator<'_> {
    /// Every cycle, each at the edge leaving its first resolver.
    pub(super) fn cycles(&mut self) {
        for cycle in cycles(self.spec) {
            let first = &cycle[0];
            let second = cycle.get(1).unwrap_or(first);
            let shown = cycle
                .iter()
                .chain(std::iter::once(first))
                .cloned()
                .collect::<Vec<_>>()
                .join(" -> ");
            self.err(
                Code::ResolverCycle,
                format!("resolvers form a cycle: {shown}"),
                self.edge(first, second),
            )
            .subjects
            .extend(cycle.iter().map(|c| Subject::Resolver(c.clone())));
            self.label(format!("`{first}` takes the value of `{second}`"));
            for (i, from) in cycle.iter().enumerate().skip(1) {
                let to = cycle.get(i + 1).unwrap_or(first);
                let edge = self.edge(from, to);
                self.also(edge, format!("`{from}` takes the value of `{to}`"));
            }
        }
    }

    /// Where resolver `from` takes the value of resolver `to` (its first such parameter).
    fn edge(&self, from: &str, to: &str) -> Pointer {
        let param = edge_param(self.spec, from, to).unwrap_or_default();
        resolver_ptr(from)
            .child("params")
            .child(param)
            .child("resolver")
    }
}
