//! The `resolve` bindings of tools and prompts: parameter names, a resolved parameter that is
//! also an input, a binding to no resolver, and `outcome: true` on a resolver that does not ask
//! `elicit`.

use std::collections::HashMap;

use super::{Validator, resolver_ptr};
use crate::diagnostics::{Code, Subject};
use crate::graph::{Consumer, ConsumerKind, consumers, input_properties};
use crate::names::closest;
use crate::pointer::Pointer;
use crate::spec::{Binding, Resolver, asks};

impl Validator<'_> {
    /// Every binding of every consumer, in spec order.
    pub(super) fn bindings(&mut self) {
        for c in consumers(self.spec) {
            let props = input_properties(&c.tool);
            let mut seen = HashMap::new();
            for (param, binding) in &c.tool.resolve {
                let at = c.ptr().child("resolve").child(param);
                self.param_name(c.subject(), &c.describe(), param, at.clone(), &mut seen);
                if props.iter().any(|p| p == param) {
                    self.resolved_is_input(&c, param, at.clone());
                }
                self.binding_target(&c, param, binding, at);
            }
        }
    }

    /// Parameter `param` of `c`, bound at `at`, is also one of its inputs.
    fn resolved_is_input(&mut self, c: &Consumer<'_>, param: &str, at: Pointer) {
        let (what, from, fix, input_at) = match c.kind {
            ConsumerKind::Tool => (
                "an input property",
                "the model",
                "remove it from `input`",
                c.ptr().child("input").child("properties").child(param),
            ),
            ConsumerKind::Prompt => (
                "an argument",
                "the client",
                "remove it from `arguments`",
                c.ptr().child("arguments").child(param),
            ),
        };
        let owner = c.describe();
        self.err_key(
            Code::ResolvedIsInput,
            format!("parameter `{param}` of {owner} is resolved and also {what}; a resolved parameter never comes from {from}, so {fix}"),
            at,
        )
        .subjects
        .extend([c.subject(), Subject::Parameter(param.to_string())]);
        self.label("resolved here");
        self.also_key(input_at, format!("and {what} here"));
    }

    /// The resolver `binding` (of parameter `param` of `c`, at `at`) names: that it exists, and
    /// that it asks `elicit` when the binding takes the outcome.
    fn binding_target(&mut self, c: &Consumer<'_>, param: &str, binding: &Binding, at: Pointer) {
        let rname = binding.resolver();
        let value_at = match binding {
            Binding::Name(_) => at.clone(),
            Binding::Detailed(_) => at.child("resolver"),
        };
        let owner = c.describe();
        let subjects = [c.subject(), Subject::Parameter(param.to_string())];
        let Some(r) = self.spec.resolvers.get(rname) else {
            let help = closest(rname, self.spec.resolvers.keys().map(String::as_str));
            let d = self.err(
                Code::UnknownResolver,
                format!("parameter `{param}` of {owner} is bound to `{rname}`, which is not a resolver of this spec"),
                value_at,
            );
            d.subjects.extend(subjects);
            d.help = match help {
                Some(h) => Some(format!("did you mean `{h}`?")),
                // A keyword source written as a binding: only resolvers take those.
                None if ["arg", "context", "principal"].contains(&rname) => Some(format!(
                    "`\"{rname}\"` is a source of resolver parameters, not a binding: give a resolver `\"params\": {{\"{param}\": \"{rname}\"}}` and bind `{param}` to that resolver"
                )),
                None => None,
            };
            return;
        };
        if binding.outcome() && !r.asks.is_some_and(|a| asks::kind(a).outcome) {
            self.outcome_without_elicit(&owner, param, rname, r, at, subjects);
        }
    }

    /// Parameter `param` of `owner` (at `at`) takes the outcome of `rname`, which does not
    /// ask `elicit`.
    fn outcome_without_elicit(
        &mut self,
        owner: &str,
        param: &str,
        rname: &str,
        r: &Resolver,
        at: Pointer,
        subjects: [Subject; 2],
    ) {
        let what = r.asks.map_or("does not ask anything".to_string(), |a| {
            format!("asks `{}`", a.as_str())
        });
        self.err(
            Code::OutcomeWithoutElicit,
            format!("parameter `{param}` of {owner} takes the elicitation outcome of resolver `{rname}`, which {what}; `outcome: true` needs a resolver with `\"asks\": \"elicit\"`"),
            at.child("outcome"),
        )
        .subjects
        .extend(subjects.into_iter().chain([Subject::Resolver(rname.to_string())]));
        let r_at = resolver_ptr(rname);
        match r.asks {
            Some(_) => self.also(r_at.child("asks"), format!("resolver `{rname}` {what}")),
            None => self.also_key(r_at, format!("resolver `{rname}` {what}")),
        }
    }
}
