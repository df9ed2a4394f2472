//! The documents a generated server advertises, decided once here: each tool's `inputSchema`
//! and `outputSchema` (self-contained, wrapped outputs with `$defs` at the root), the
//! `requestedSchema` of every form, and the capabilities. The runtime serves what it is given.

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::{Capabilities, Form, FormOf, Model};
use crate::forms::is_flat_form;
use crate::refs::self_contained;
use crate::spec::Spec;

/// The capabilities a server advertises: exactly what its spec serves.
pub fn capabilities(spec: &Spec) -> Capabilities {
    let completions = spec
        .prompts
        .values()
        .any(|p| p.arguments.values().any(|a| !a.complete.is_empty()))
        || spec
            .resource_templates
            .values()
            .any(|t| !t.complete.is_empty());
    Capabilities {
        prompts: !spec.prompts.is_empty(),
        resources: !spec.resources.is_empty() || !spec.resource_templates.is_empty(),
        completions,
        logging: spec.logging,
        notifications: spec.notifications,
    }
}

/// Every type that can be asked for with a form: the `$defs` types that are flat forms, then the
/// inline `returns` of each resolver whose question is a form (a `$ref` one is a `$defs` type
/// above), each with its `requestedSchema` ([`form_document`]).
pub fn forms(model: &Model) -> Vec<Form> {
    let defs = (model.defs.values().enumerate())
        .filter(|(_, s)| is_flat_form(&model.defs, s))
        .map(|(i, s)| (FormOf::Def(i), s));
    let inline = (model.resolvers.iter().enumerate())
        .filter(|(_, r)| r.asks.is_some_and(|a| a.form))
        .filter_map(|(i, r)| {
            let schema = r.returns.as_ref()?;
            let id = super::ResolverId::at(i);
            (schema.get("$ref").is_none()).then_some((FormOf::Resolver(id), schema))
        });
    defs.chain(inline)
        .map(|(of, schema)| Form {
            of,
            document: form_document(&model.defs, schema),
        })
        .collect()
}

/// True when `schema` (following one `$ref`) describes an object.
pub fn is_object_schema(defs: &IndexMap<String, Value>, schema: &Value) -> bool {
    let target = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|n| defs.get(n))
            .unwrap_or(schema),
        None => schema,
    };
    target.get("type").and_then(Value::as_str) == Some("object")
}

/// The `outputSchema` a tool advertises for its `output` `schema`: a document that stands
/// alone (see [`self_contained`]) and whose root is an object schema, as MCP requires.
///
/// - An object schema is advertised as written; when it is a bare `{"$ref": ..}` to an object
///   type, `"type": "object"` is added at the root (rmcp drops an `outputSchema` without it on
///   legacy connections, and a client cannot tell it describes an object).
/// - Any other schema (`wrapped`) is advertised as
///   `{"type":"object","properties":{"result": schema},"required":["result"]}`, the shape of the
///   `{"result": value}` the tool returns. The schema's own `$defs` move to the root of that
///   document, and every reference into the schema (`#`, `#/items`, ...) is rewritten to where
///   the schema now sits (`#/properties/result`, ...), so every `$ref` still resolves.
pub fn advertised_output(defs: &IndexMap<String, Value>, schema: &Value, wrapped: bool) -> Value {
    if !wrapped {
        let mut doc = schema.clone();
        if let Value::Object(m) = &mut doc
            && !m.contains_key("type")
        {
            m.insert("type".into(), "object".into());
        }
        return self_contained(defs, &doc);
    }
    let mut result = schema.clone();
    relocate_refs(&mut result, "/properties/result");
    // `$schema` belongs at the root of a document, like `$defs`.
    let (dialect, own_defs) = match &mut result {
        Value::Object(m) => (m.remove("$schema"), m.remove("$defs")),
        _ => (None, None),
    };
    let mut doc =
        json!({"type": "object", "properties": {"result": result}, "required": ["result"]});
    if let Some(dialect) = dialect {
        doc["$schema"] = dialect;
    }
    if let Some(own_defs) = own_defs {
        doc["$defs"] = own_defs;
    }
    self_contained(defs, &doc)
}

/// The `inputSchema` of a tool whose spec `input` is `input`: self-contained, and with every
/// integer's Rust range stated ([`crate::integers::bound_to_rust`]), so that what it accepts is
/// what the typed arguments hold.
pub fn advertised_input(defs: &IndexMap<String, Value>, input: &Value) -> Value {
    let mut doc = self_contained(defs, input);
    crate::integers::bound_to_rust(&mut doc);
    doc
}

/// The `requestedSchema` of a form elicitation for flat object `schema`: a property given as a
/// `$ref` to a `$defs` type (an enum, say) is replaced by that type's schema, with the
/// property's own keywords (a `description`) kept over the type's, since a form is flat and
/// carries no `$defs`. Integers are sent as written: rmcp's form types hold `i64` bounds only
/// (`u64::MAX` would not fit), so an answer past a field's Rust type is refused when decoded.
pub fn form_document(defs: &IndexMap<String, Value>, schema: &Value) -> Value {
    let mut doc = schema.clone();
    if let Some(Value::Object(props)) = doc.get_mut("properties") {
        for prop in props.values_mut() {
            let Some(def) = prop
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|n| defs.get(n))
                .and_then(Value::as_object)
            else {
                continue;
            };
            let mut inlined = def.clone();
            if let Value::Object(own) = prop {
                inlined.extend(
                    own.iter()
                        .filter(|(k, _)| *k != "$ref")
                        .map(|(k, v)| (k.clone(), v.clone())),
                );
            }
            *prop = Value::Object(inlined);
        }
    }
    doc
}

/// Rewrites every same-document reference in `schema` that points into it (`#`, `#/items`),
/// except into its `$defs`, as if `schema` were moved to `at` (a JSON pointer) of a new root
/// whose `$defs` are the schema's own.
fn relocate_refs(schema: &mut Value, at: &str) {
    match schema {
        Value::Object(m) => {
            if let Some(child) = m.get_mut("$ref")
                && let Some(r) = child.as_str()
                && let Some(pointer) = r.strip_prefix('#')
                && (pointer.is_empty() || pointer.starts_with('/'))
                && !(pointer == "/$defs" || pointer.starts_with("/$defs/"))
            {
                *child = Value::String(format!("#{at}{pointer}"));
            }
            crate::refs::each_schema_child_mut(m, |child| relocate_refs(child, at));
        }
        Value::Array(a) => a.iter_mut().for_each(|c| relocate_refs(c, at)),
        _ => {}
    }
}
