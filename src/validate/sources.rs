//! Where resolver parameters take their values from: parameter names, a resolver source naming
//! no resolver, and `"arg"` sources: every consumer that reaches the resolver has the argument,
//! and all of them type it alike.
//!
//! [`Validator::resolvers`] also runs the per-resolver checks of the other modules (`returns`,
//! the elicitation form), so the findings about one resolver come together.

use std::collections::{BTreeMap, HashMap};

use super::{Validator, resolver_ptr};
use crate::diagnostics::{Code, Subject};
use crate::graph::{
    ArgType, Consumer, ConsumerKind, arg_type, consumers, reached_through, run_order,
};
use crate::names::closest;
use crate::pointer::Pointer;
use crate::spec::{ParamSource, Resolver, SourceKeyword, asks};

/// One consumer's use of an `"arg"` parameter: who, the type it gives the argument, whether it
/// always has a value, and its subject.
type Use = (ConsumerKind, String, ArgType, bool, Subject);

impl Validator<'_> {
    /// Every resolver, in spec order: its parameters, its `returns`, its form.
    pub(super) fn resolvers(&mut self) {
        for (rname, r) in &self.spec.resolvers {
            self.params(rname, r);
            self.returns_rule(rname, r);
            if r.asks.is_some_and(|a| asks::kind(a).form)
                && let Some(returns) = &r.returns
            {
                self.elicit_form(rname, returns, resolver_ptr(rname).child("returns"));
            }
        }
    }

    /// The parameters of resolver `rname`: names, and resolver sources that name no resolver.
    fn params(&mut self, rname: &str, r: &Resolver) {
        let at = resolver_ptr(rname);
        let mut seen = HashMap::new();
        for (param, source) in &r.params {
            let pat = at.child("params").child(param);
            // A `"context"` parameter is the context itself: its name never reaches Rust.
            if source != &ParamSource::Keyword(SourceKeyword::Context) {
                self.param_name(
                    Subject::Resolver(rname.to_string()),
                    &format!("resolver `{rname}`"),
                    param,
                    pat.clone(),
                    &mut seen,
                );
            }
            let ParamSource::Resolver(rs) = source else {
                continue;
            };
            if self.spec.resolvers.contains_key(&rs.resolver) {
                continue;
            }
            let help = closest(&rs.resolver, self.spec.resolvers.keys().map(String::as_str));
            let d = self.err(
                Code::UnknownResolver,
                format!("parameter `{param}` of resolver `{rname}` takes the value of `{}`, which is not a resolver of this spec", rs.resolver),
                pat.child("resolver"),
            );
            d.subjects.extend([
                Subject::Resolver(rname.to_string()),
                Subject::Parameter(param.clone()),
            ]);
            if let Some(h) = help {
                d.help = Some(format!("did you mean `{h}`?"));
            }
        }
    }

    /// Every `"arg"` parameter of every resolver a consumer reaches: the consumer has the
    /// argument (`missing-arg`), and every consumer reaching it types it alike
    /// (`arg-type-mismatch`, once per parameter).
    pub(super) fn arg_sources(&mut self) {
        // (resolver index, param index) -> every consumer's use of it
        let mut seen: BTreeMap<(usize, usize), Vec<Use>> = BTreeMap::new();
        for c in consumers(self.spec) {
            for rname in &run_order(self.spec, &c.tool) {
                let (ri, _, r) = self
                    .spec
                    .resolvers
                    .get_full(rname)
                    .expect("run_order yields known resolvers");
                for (pi, (param, source)) in r.params.iter().enumerate() {
                    if source != &ParamSource::Keyword(SourceKeyword::Arg) {
                        continue;
                    }
                    match arg_type(&c.tool, param) {
                        Some((ty, always)) => seen.entry((ri, pi)).or_default().push((
                            c.kind,
                            c.name.to_string(),
                            ty,
                            always,
                            c.subject(),
                        )),
                        None => self.missing_arg(&c, rname, param),
                    }
                }
            }
        }
        for ((ri, pi), uses) in seen {
            let (rname, r) = self
                .spec
                .resolvers
                .get_index(ri)
                .expect("index from the map");
            let (param, _) = r.params.get_index(pi).expect("index from the map");
            let first = &uses[0];
            if let Some(other) = uses[1..].iter().find(|u| u.2 != first.2 || u.3 != first.3) {
                self.arg_type_mismatch(rname, param, first, other);
            }
        }
    }

    /// Resolver `rname`, which `c` reaches, takes `param` from `c`'s arguments, which lack it.
    fn missing_arg(&mut self, c: &Consumer<'_>, rname: &str, param: &str) {
        let via = match reached_through(self.spec, &c.tool, rname) {
            Some(d) => format!(" (which uses it through `{d}`)"),
            None => String::new(),
        };
        self.err(
            Code::MissingArg,
            format!("resolver `{rname}` takes `{param}` from the tool's arguments, but {}{via} has no argument `{param}`", c.describe()),
            resolver_ptr(rname).child("params").child(param),
        )
        .subjects
        .extend([
            Subject::Resolver(rname.to_string()),
            Subject::Parameter(param.to_string()),
            c.subject(),
        ]);
        self.label(format!("`{param}` is taken from the arguments"));
        let message = format!("{} has no argument `{param}`", c.describe());
        match self.arguments_place(c) {
            (at, true) => self.also_key(at, message),
            (at, false) => self.also(at, message),
        }
    }

    /// Two consumers reaching resolver `rname` type its `"arg"` parameter `param` differently.
    fn arg_type_mismatch(&mut self, rname: &str, param: &str, first: &Use, other: &Use) {
        let (k0, t0, ty0, al0, s0) = first;
        let (k, t, ty, al, s) = other;
        let both = if k0 == k {
            format!("{}s `{t0}` and `{t}`", k.noun())
        } else {
            format!("{} `{t0}` and {} `{t}`", k0.noun(), k.noun())
        };
        let show = |ty: &ArgType, al: bool| {
            if al {
                ty.to_string()
            } else {
                format!("optional {ty}")
            }
        };
        self.err(
            Code::ArgTypeMismatch,
            format!(
                "resolver `{rname}` takes `{param}` from the tool's arguments, but {both} type it differently: {} and {}",
                show(ty0, *al0),
                show(ty, *al)
            ),
            resolver_ptr(rname).child("params").child(param),
        )
        .subjects
        .extend([
            Subject::Resolver(rname.to_string()),
            Subject::Parameter(param.to_string()),
            s0.clone(),
            s.clone(),
        ]);
        self.label(format!("`{param}` is taken from the arguments"));
        for (kind, name, ty, al) in [(k0, t0, ty0, *al0), (k, t, ty, *al)] {
            let section = match kind {
                ConsumerKind::Tool => ["tools", name.as_str(), "input", "properties"],
                ConsumerKind::Prompt => ["prompts", name.as_str(), "arguments", ""],
            };
            let mut at = Pointer::from_segments(section.iter().filter(|s| !s.is_empty()));
            at.push(param);
            self.also_key(
                at,
                format!("{} `{name}` types it as {}", kind.noun(), show(ty, al)),
            );
        }
    }

    /// Where a consumer's arguments are declared (its input's `properties`, a prompt's
    /// `arguments`), or the consumer itself when it declares none; and whether that is a key.
    fn arguments_place(&self, c: &Consumer<'_>) -> (Pointer, bool) {
        let candidates = match c.kind {
            ConsumerKind::Tool => vec![
                c.ptr().child("input").child("properties"),
                c.ptr().child("input"),
            ],
            ConsumerKind::Prompt => vec![c.ptr().child("arguments")],
        };
        candidates
            .into_iter()
            .find(|p| self.src.place(p).is_some())
            .map_or((c.ptr(), true), |p| (p, false))
    }
}
