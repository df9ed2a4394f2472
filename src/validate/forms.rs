//! Elicitation forms: the `returns` of a resolver that asks `elicit` is a flat object of
//! primitive fields, as MCP's elicitation requires. The rule is [`crate::forms::flat_form`]
//! (the emitter uses the same one); this module words and locates its findings.

use serde_json::Value;

use super::{Validator, compact};
use crate::diagnostics::{Code, Subject};
use crate::forms::{FieldProblem, NotFlat, Problem, flat_form};
use crate::pointer::Pointer;

impl Validator<'_> {
    /// The form `returns` (at `at`) of resolver `rname`: written inline, or a `$ref` to a
    /// `$defs` type (an unresolvable one is reported by the reference checks).
    pub(super) fn elicit_form(&mut self, rname: &str, returns: &Value, at: Pointer) {
        let (form, def_name) = match returns.get("$ref").and_then(Value::as_str) {
            None => (returns, None),
            Some(r) => {
                let Some((name, def)) = r
                    .strip_prefix("#/$defs/")
                    .and_then(|n| self.spec.defs.get_key_value(n))
                else {
                    return;
                };
                (def, Some(name.as_str()))
            }
        };
        let form_at = match def_name {
            Some(n) => Pointer::from_segments(["$defs", n]),
            None => at.clone(),
        };
        match flat_form(&self.spec.defs, form) {
            Ok(_) => {}
            Err(NotFlat::NotObject) => {
                self.err(
                    Code::ElicitNotObject,
                    format!("resolver `{rname}` asks `elicit`, so `returns` must be a flat object of primitive fields (the form), but it is {}", compact(form)),
                    at,
                )
                .subjects
                .push(Subject::Resolver(rname.to_string()));
                if let Some(def) = def_name {
                    self.also_key(form_at, format!("`{def}` is defined here"));
                }
            }
            Err(NotFlat::Fields(problems)) => {
                for p in &problems {
                    self.non_primitive(rname, p, &form_at, &at, def_name);
                }
            }
        }
    }

    /// Field `p` of the form of resolver `rname` (the form at `form_at`; `returns` at `at`,
    /// naming `$defs` type `def_name` when the form is one).
    fn non_primitive(
        &mut self,
        rname: &str,
        p: &FieldProblem<'_>,
        form_at: &Pointer,
        at: &Pointer,
        def_name: Option<&str>,
    ) {
        let Problem::NotPrimitive(problem) = &p.problem else {
            return; // an unresolvable `$ref`: reported by the reference checks
        };
        let field = p.name;
        let d = self.err(
            Code::ElicitNonPrimitive,
            format!("elicitation form of resolver `{rname}`: field `{field}` is {problem}, which is not a primitive (string, number, integer, boolean or enum)"),
            form_at.child("properties").child(field),
        );
        d.subjects.push(Subject::Resolver(rname.to_string()));
        d.notes
            .push(format!("the field's schema: {}", compact(p.schema)));
        if let Some(def) = def_name {
            d.notes.push(format!(
                "the form is `returns` of resolver `{rname}` at {at}"
            ));
            self.also(
                at.clone(),
                format!("the form of resolver `{rname}` is `{def}`"),
            );
        }
    }
}
