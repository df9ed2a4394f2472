//! Elicitation forms: the `returns` of a resolver that asks `elicit` is a flat object of
//! primitive fields, as MCP's elicitation requires.

use serde_json::Value;

use super::{Validator, compact};
use crate::diagnostics::{Code, Subject};
use crate::pointer::Pointer;

impl Validator<'_> {
    /// Follows one `#/$defs/Name` reference.
    fn deref<'s>(&'s self, schema: &'s Value) -> Option<(&'s Value, Option<String>)> {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.strip_prefix("#/$defs/")?;
                self.spec
                    .defs
                    .get(name)
                    .map(|s| (s, Some(name.to_string())))
            }
            None => Some((schema, None)),
        }
    }

    /// The form `returns` (at `at`) of resolver `rname`.
    pub(super) fn elicit_form(&mut self, rname: &str, returns: &Value, at: Pointer) {
        let Some((form, def_name)) = self.deref(returns) else {
            return; // an unresolvable $ref is reported by `schemas`
        };
        let form_at = match &def_name {
            Some(n) => Pointer::from_segments(["$defs", n]),
            None => at.clone(),
        };
        let subjects = vec![Subject::Resolver(rname.to_string())];
        if form.get("type").and_then(Value::as_str) != Some("object")
            || form.get("properties").and_then(Value::as_object).is_none()
        {
            self.err(
                Code::ElicitNotObject,
                format!("resolver `{rname}` asks `elicit`, so `returns` must be a flat object of primitive fields (the form), but it is {}", compact(form)),
                at,
            )
            .subjects
            .extend(subjects);
            if let Some(def) = &def_name {
                self.also_key(form_at, format!("`{def}` is defined here"));
            }
            return;
        }
        let props = form["properties"].as_object().cloned().unwrap_or_default();
        for (field, schema) in &props {
            if let Some(problem) = self.primitive_problem(schema) {
                let fat = form_at.child("properties").child(field);
                let d = self.err(
                    Code::ElicitNonPrimitive,
                    format!("elicitation form of resolver `{rname}`: field `{field}` is {problem}, which is not a primitive (string, number, integer, boolean or enum)"),
                    fat,
                );
                d.subjects.extend(subjects.iter().cloned());
                d.notes
                    .push(format!("the field's schema: {}", compact(schema)));
                if let Some(def) = &def_name {
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
    }

    /// Why a form field's schema is not a `PrimitiveSchemaDefinition`, if it is not.
    fn primitive_problem(&self, schema: &Value) -> Option<String> {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return match self.deref(schema) {
                Some((target, _))
                    if target.get("type").and_then(Value::as_str) == Some("object") =>
                {
                    Some(format!("a reference to an object (`{r}`)"))
                }
                Some((target, _)) => self.primitive_problem(target),
                None => None,
            };
        }
        for k in ["anyOf", "allOf", "not", "if"] {
            if schema.get(k).is_some() {
                return Some(format!("a union or combination (`{k}`)"));
            }
        }
        match schema.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "string" | "number" | "integer" | "boolean" => {
                    if let Some(one) = schema.get("oneOf") {
                        let titled = one
                            .as_array()
                            .is_some_and(|a| a.iter().all(|o| o.get("const").is_some()));
                        return (!titled).then(|| "a union (`oneOf` of non-constants)".to_string());
                    }
                    None
                }
                "object" => Some("a nested object".into()),
                "array" => {
                    let items = schema.get("items");
                    let enum_items = items.is_some_and(|i| {
                        i.get("enum").is_some()
                            || i.get("anyOf")
                                .and_then(Value::as_array)
                                .is_some_and(|a| a.iter().all(|o| o.get("const").is_some()))
                    });
                    (!enum_items).then(|| "an array of non-enum items".to_string())
                }
                other => Some(format!("of type `{other}`")),
            },
            Some(Value::Array(_)) => Some("a union of types".into()),
            Some(_) => Some("of an invalid type".into()),
            None if schema.get("enum").is_some() => None,
            None if schema.get("oneOf").is_some() => Some("a union (`oneOf`)".into()),
            None => Some("untyped".into()),
        }
    }
}
