//! Checks inside the spec's JSON Schemas, sub-schema by sub-schema: a `required` entry that
//! names no property (a warning: the property must then be present with any value, usually a
//! typo), and a `default` its own schema refuses (an error: the generated type would start
//! from a value no call may carry); and, once nothing else is wrong, every tool input and output
//! the validator cannot compile as the server does at start-up (an error: it would not start).

use indexmap::IndexMap;
use serde_json::Value;

use crate::diagnostics::{Code, Diagnostic};
use crate::names::closest;
use crate::pointer::Pointer;
use crate::refs::self_contained;
use crate::source::SourceFile;
use crate::spec::Spec;

/// Every schema of the spec, with where it is.
fn all_schemas(spec: &Spec) -> Vec<(Pointer, &Value)> {
    let mut all: Vec<(Pointer, &Value)> = Vec::new();
    for (name, s) in &spec.defs {
        all.push((Pointer::from_segments(["$defs", name]), s));
    }
    for (name, t) in &spec.tools {
        if let Some(input) = &t.input {
            all.push((Pointer::from_segments(["tools", name, "input"]), input));
        }
        if let Some(output) = &t.output {
            all.push((Pointer::from_segments(["tools", name, "output"]), output));
        }
    }
    for (name, r) in &spec.resolvers {
        if let Some(returns) = &r.returns {
            all.push((
                Pointer::from_segments(["resolvers", name, "returns"]),
                returns,
            ));
        }
    }
    all
}

/// Runs the checks on every schema of `spec`.
pub fn check(spec: &Spec, src: &SourceFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (at, schema) in all_schemas(spec) {
        walk(schema, &at, &spec.defs, src, &mut out);
    }
    out
}

/// Errors for each tool input and output that the validator does not compile as the server
/// will at start-up (the advertised document): a schema that is valid JSON Schema but refers to
/// a `$dynamicAnchor` or `$anchor` it does not have, say.
pub fn compiles(spec: &Spec, src: &SourceFile) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (name, t) in &spec.tools {
        let docs = [
            (
                "input",
                t.input
                    .as_ref()
                    .map(|i| crate::model::wire::advertised_input(&spec.defs, i)),
            ),
            (
                "output",
                t.output.as_ref().map(|o| self_contained(&spec.defs, o)),
            ),
        ];
        for (which, doc) in docs {
            let Some(doc) = doc else { continue };
            let Err(e) = jsonschema::options()
                .should_validate_formats(true)
                .build(&doc)
            else {
                continue;
            };
            let at = Pointer::from_segments(["tools", name, which]);
            let span = src.span_of(&at);
            let mut d = Diagnostic::error(
                Code::InvalidSchema,
                format!(
                    "the {which} schema of tool `{name}` does not compile with the JSON Schema \
                     validator, as the server would at start-up: {e}"
                ),
            )
            .at(at, span);
            d.help = Some(
                "every `$ref`, `$dynamicRef` and anchor must resolve inside the schema".into(),
            );
            d.subjects
                .push(crate::diagnostics::Subject::Tool(name.clone()));
            out.push(d);
        }
    }
    out
}

/// Checks `schema` and each of its sub-schemas.
fn walk(
    schema: &Value,
    at: &Pointer,
    defs: &IndexMap<String, Value>,
    src: &SourceFile,
    out: &mut Vec<Diagnostic>,
) {
    let Value::Object(m) = schema else {
        return;
    };
    required_names(m, at, src, out);
    if let Some(default) = m.get("default") {
        default_fits(schema, default, at, defs, src, out);
    }
    for (k, child) in m {
        let cat = at.child(k);
        match k.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(members) = child {
                    for (name, s) in members {
                        walk(s, &cat.child(name), defs, src, out);
                    }
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let Value::Array(items) = child {
                    for (i, s) in items.iter().enumerate() {
                        walk(s, &cat.child(&i.to_string()), defs, src, out);
                    }
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => {
                walk(child, &cat, defs, src, out);
            }
            _ => {}
        }
    }
}

/// Warns about each `required` entry that names none of the `properties` beside it.
fn required_names(
    m: &serde_json::Map<String, Value>,
    at: &Pointer,
    src: &SourceFile,
    out: &mut Vec<Diagnostic>,
) {
    let (Some(Value::Array(required)), Some(Value::Object(properties))) =
        (m.get("required"), m.get("properties"))
    else {
        return;
    };
    for (i, name) in required.iter().enumerate() {
        let Some(name) = name.as_str() else {
            continue;
        };
        if properties.contains_key(name) {
            continue;
        }
        let place = at.child("required").child(&i.to_string());
        let span = src.span_of(&place);
        let mut d = Diagnostic::warning(
            Code::RequiredNotAProperty,
            format!(
                "`required` names `{name}`, which is not one of the `properties`: every call \
                 must then carry a `{name}` of any type, typed `serde_json::Value`"
            ),
        )
        .at(place, span);
        d.help = Some(match closest(name, properties.keys().map(String::as_str)) {
            Some(close) => format!("did you mean `{close}`?"),
            None => format!("declare `{name}` under `properties`, or remove it from `required`"),
        });
        out.push(d);
    }
}

/// Errors when `default` does not satisfy the schema it is the default of.
fn default_fits(
    schema: &Value,
    default: &Value,
    at: &Pointer,
    defs: &IndexMap<String, Value>,
    src: &SourceFile,
    out: &mut Vec<Diagnostic>,
) {
    let mut bare = schema.clone();
    if let Value::Object(m) = &mut bare {
        m.remove("default");
        m.remove("$defs");
    }
    let standalone = self_contained(defs, &bare);
    // A schema the validator cannot compile is reported by the other schema checks.
    let Ok(validator) = jsonschema::validator_for(&standalone) else {
        return;
    };
    let problems: Vec<String> = validator
        .iter_errors(default)
        .map(|e| {
            let path = e.instance_path().to_string();
            let at = if path.is_empty() {
                String::new()
            } else {
                format!(" at `{path}`")
            };
            format!("`{}`{at} ({e})", e.kind().keyword())
        })
        .collect();
    if problems.is_empty() {
        return;
    }
    let place = at.child("default");
    let span = src.span_of(&place);
    let mut d = Diagnostic::error(
        Code::InvalidDefault,
        format!(
            "the `default` {} violates its schema: {}",
            compact(default),
            problems.join("; ")
        ),
    )
    .at(place, span);
    d.help = Some("change the `default` to a value the schema accepts, or remove it".into());
    out.push(d);
}

fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}
