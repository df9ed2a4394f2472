//! The typing view of a schema: what typify is handed to make Rust types from a JSON Schema
//! 2020-12 schema, decided sub-schema by sub-schema ([`view`]).
//!
//! The advertised schema, validated before any deserialization, decides what a call accepts;
//! the typed value must take every instance the schema accepts. So each sub-schema is either
//! handed to typify as written (it types it faithfully), rewritten into the equivalent form
//! typify knows (`prefixItems` tuples, tagged unions of `$ref` variants), stripped of keywords
//! that only restrict (checked by the schema, so the type may be looser), or, when typify
//! cannot express it, replaced by the widest type that holds it (`serde_json::Value`, or
//! `String` for a string enum) with a [`Fallback`] naming the place and why.

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use crate::pointer::Pointer;

/// A sub-schema typed wider than written, reported as a warning at generation time.
#[derive(Debug, Clone, PartialEq)]
pub struct Fallback {
    /// The sub-schema.
    pub pointer: Pointer,
    /// What it is typed as, and why.
    pub message: String,
}

/// Keywords that only restrict the instances a schema accepts and that typify does not
/// express (or expresses wrongly): the validator enforces them, the type leaves them out.
const ASSERTIONS_ONLY: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Keywords that say nothing about instances.
const ANNOTATIONS: &[&str] = &[
    "$comment",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$anchor",
];

/// The schema to hand typify for `schema` (found at `at`), with every sub-schema decided by
/// [`decide`]; fallbacks are appended to `out`. `defs` are the spec's `$defs` (for tagged
/// unions of `$ref` variants).
pub fn view(
    schema: &Value,
    at: &Pointer,
    defs: &IndexMap<String, Value>,
    out: &mut Vec<Fallback>,
) -> Value {
    let Value::Object(m) = schema else {
        // `true` accepts anything, `false` nothing: `{}` (a `serde_json::Value`) holds both.
        return json!({});
    };
    if let Some((wide, why)) = decide(m) {
        out.push(Fallback {
            pointer: at.clone(),
            message: why,
        });
        return wide;
    }
    let mut v = Map::new();
    for (k, child) in m {
        if ASSERTIONS_ONLY.contains(&k.as_str()) || ANNOTATIONS.contains(&k.as_str()) {
            continue;
        }
        let cat = at.child(k);
        let child = match k.as_str() {
            "properties" | "patternProperties" => match child {
                Value::Object(props) => Value::Object(
                    props
                        .iter()
                        .map(|(pk, pv)| (pk.clone(), view(pv, &cat.child(pk), defs, out)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items" | "additionalProperties" => match child {
                Value::Bool(_) => child.clone(),
                _ => view(child, &cat, defs, out),
            },
            "allOf" | "anyOf" | "oneOf" => match child {
                Value::Array(variants) => {
                    let inlined = tagged_refs(variants, defs);
                    Value::Array(
                        variants
                            .iter()
                            .enumerate()
                            .map(|(i, s)| {
                                let s = inlined.as_ref().map_or(s, |inl| &inl[i]);
                                view(s, &cat.child(&i.to_string()), defs, out)
                            })
                            .collect(),
                    )
                }
                other => other.clone(),
            },
            "prefixItems" => continue,
            "description" => match child.as_str() {
                Some(text) => crate::emit::docs::doc_text(text).into(),
                None => child.clone(),
            },
            _ => child.clone(),
        };
        v.insert(k.clone(), child);
    }
    if let Some(Value::Object(patterns)) = v.remove("patternProperties")
        && !patterns.is_empty()
    {
        // typify ignores `patternProperties`: the members they match become the struct's
        // `extra` map (or the whole map when there are no `properties`), typed by the one
        // pattern when no other member is allowed, else as any value.
        let only = (patterns.len() == 1
            && m.get("additionalProperties") == Some(&Value::Bool(false)))
        .then(|| patterns.values().next().cloned())
        .flatten();
        let extra = only.unwrap_or_else(|| {
            out.push(Fallback {
                pointer: at.child("patternProperties"),
                message: "typed as `serde_json::Value`: the values of members matched by several \
                          `patternProperties`, or by one with other members allowed too, have \
                          no single Rust type (the schema still checks them); use one pattern \
                          and `\"additionalProperties\": false` for a typed map"
                    .into(),
            });
            json!({})
        });
        v.insert("additionalProperties".into(), extra);
    }
    if let Some(Value::Array(prefix)) = m.get("prefixItems") {
        // Only an exact tuple gets here (see `decide`): typify's draft-07 spelling of it.
        let items: Vec<Value> = prefix
            .iter()
            .enumerate()
            .map(|(i, s)| view(s, &at.child("prefixItems").child(&i.to_string()), defs, out))
            .collect();
        let n = items.len();
        v.insert("items".into(), Value::Array(items));
        v.insert("additionalItems".into(), Value::Bool(false));
        v.insert("minItems".into(), n.into());
        v.insert("maxItems".into(), n.into());
    }
    Value::Object(v)
}

/// The one rule for "faithful or not": `None` when typify types this sub-schema (its own
/// keywords; sub-schemas are decided on their own) so that it takes every instance the schema
/// accepts; otherwise the widest schema typify types faithfully in its place, and why.
fn decide(m: &Map<String, Value>) -> Option<(Value, String)> {
    let description = m.get("description").cloned();
    let wide = |ty: Option<&str>| {
        let mut w = Map::new();
        if let Some(d) = &description {
            w.insert("description".into(), d.clone());
        }
        if let Some(ty) = ty {
            w.insert("type".into(), ty.into());
        }
        Value::Object(w)
    };
    if let Some(Value::Array(values)) = m.get("enum")
        && values.iter().all(Value::is_string)
        && !variant_names_unique(values)
    {
        return Some((
            wide(Some("string")),
            "typed as `String`: its `enum` values do not all become distinct Rust variant names \
             (the schema still checks the values); use values with letters or digits for an \
             enum type"
                .into(),
        ));
    }
    if let Some(Value::Array(prefix)) = m.get("prefixItems") {
        let n = prefix.len() as u64;
        let min = m.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let closed = m.get("items") == Some(&Value::Bool(false))
            || m.get("maxItems").and_then(Value::as_u64) == Some(n);
        if !(closed && min == n) || m.contains_key("additionalItems") {
            return Some((
                wide(Some("array")),
                format!(
                    "typed as `Vec<serde_json::Value>`: `prefixItems` becomes a Rust tuple only \
                     when exactly its {n} items are present; add `\"minItems\": {n}` and \
                     `\"items\": false` for a tuple"
                ),
            ));
        }
    }
    if let Some(Value::Array(values)) = m.get("enum") {
        let kinds: std::collections::HashSet<&str> = values.iter().map(json_type).collect();
        if kinds.len() > 1 || kinds.contains("object") || kinds.contains("array") {
            return Some((
                wide(None),
                "typed as `serde_json::Value`: an `enum` whose values are of several JSON types, \
                 or objects or arrays, has no Rust enum type (the schema still checks the \
                 values); use values of one type, e.g. all strings, for an enum type"
                    .into(),
            ));
        }
    }
    if m.contains_key("$dynamicRef") || m.contains_key("$recursiveRef") {
        return Some((
            wide(None),
            "typed as `serde_json::Value`: `$dynamicRef` is not supported by the type \
             generator (the schema still checks it); use `$ref` to a `$defs` type"
                .into(),
        ));
    }
    if let Some((rust, lo, hi)) = crate::integers::integer_beyond(m) {
        return Some((
            wide(None),
            format!(
                "typed as `serde_json::Value`: its bounds let through integers beyond the \
                 range of `{rust}` ({lo} to {hi}), the widest integer type the type generator \
                 gives it (the schema still checks the values); bound it within that range for \
                 an integer type"
            ),
        ));
    }
    None
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// True when typify can give each string of an `enum` its own variant name (it keeps the
/// identifier characters of each value, upper camel cased).
fn variant_names_unique(values: &[Value]) -> bool {
    let mut seen = std::collections::HashSet::new();
    values.iter().filter_map(Value::as_str).all(|s| {
        let cleaned: String = s
            .chars()
            .map(|c| {
                if unicode_ident::is_xid_continue(c) {
                    c
                } else {
                    ' '
                }
            })
            .collect();
        let name = heck::ToUpperCamelCase::to_upper_camel_case(cleaned.as_str());
        !name.is_empty() && seen.insert(name)
    })
}

/// For a union whose every variant is a `$ref` to an object type of `$defs` with one common
/// required property holding a distinct `const` string (the tag), the variants inlined, so
/// typify makes a `#[serde(tag = "...")]` enum with one named variant per type.
fn tagged_refs(variants: &[Value], defs: &IndexMap<String, Value>) -> Option<Vec<Value>> {
    let targets: Vec<&Map<String, Value>> = variants
        .iter()
        .map(|v| {
            let r = v.as_object()?;
            if r.len() != 1 {
                return None;
            }
            let name = r.get("$ref")?.as_str()?.strip_prefix("#/$defs/")?;
            let def = defs.get(name)?.as_object()?;
            (def.get("type").and_then(Value::as_str) == Some("object")).then_some(def)
        })
        .collect::<Option<_>>()?;
    if targets.len() < 2 {
        return None;
    }
    let tag_of = |def: &Map<String, Value>, key: &str| -> Option<String> {
        let required = def.get("required")?.as_array()?;
        if !required.iter().any(|r| r.as_str() == Some(key)) {
            return None;
        }
        let prop = def.get("properties")?.get(key)?;
        match (prop.get("const"), prop.get("enum")) {
            (Some(Value::String(s)), _) => Some(s.clone()),
            (None, Some(Value::Array(e))) if e.len() == 1 => e[0].as_str().map(str::to_string),
            _ => None,
        }
    };
    let first = targets[0].get("properties")?.as_object()?;
    first.keys().find(|key| {
        let tags: Option<Vec<String>> = targets.iter().map(|d| tag_of(d, key)).collect();
        tags.is_some_and(|t| {
            let mut u = t.clone();
            u.sort();
            u.dedup();
            u.len() == t.len()
        })
    })?;
    Some(
        targets
            .into_iter()
            .map(|d| Value::Object(d.clone()))
            .collect(),
    )
}

/// Where each hoisted type came from: its `$defs` name -> the schema it was written as.
pub type Origins = std::collections::HashMap<String, Pointer>;

/// `spec` with the own `$defs` of each tool input, output and resolver `returns` (a schema
/// written as a document of its own, as pydantic writes one) moved to the spec's `$defs` under
/// names of their own (`<Tool>Input<Name>`), and every reference rewritten to match:
/// `#/$defs/<Name>` to the moved type, `#` (the schema itself, for recursion) to a copy of the
/// schema moved too (`<Tool>Input`). typify then sees one set of `$defs`.
pub fn hoist_own_defs(spec: &crate::spec::Spec) -> (crate::spec::Spec, Origins) {
    let mut out = spec.clone();
    let mut origins = Origins::new();
    let mut roots: Vec<(Pointer, String, &mut Value)> = Vec::new();
    for (name, t) in out.tools.iter_mut() {
        let ty = crate::names::type_name(name);
        if let Some(input) = t.input.as_mut() {
            roots.push((
                Pointer::from_segments(["tools", name, "input"]),
                format!("{ty}Input"),
                input,
            ));
        }
        if let Some(output) = t.output.as_mut() {
            roots.push((
                Pointer::from_segments(["tools", name, "output"]),
                format!("{ty}Output"),
                output,
            ));
        }
    }
    for (name, r) in out.resolvers.iter_mut() {
        if let Some(returns) = r.returns.as_mut() {
            let ty = crate::names::type_name(name);
            roots.push((
                Pointer::from_segments(["resolvers", name, "returns"]),
                format!("{ty}Returns"),
                returns,
            ));
        }
    }
    let mut hoisted: Vec<(String, Value)> = Vec::new();
    for (at, prefix, schema) in roots {
        let own = match schema.as_object_mut().and_then(|m| m.remove("$defs")) {
            Some(Value::Object(own)) => own,
            _ => Map::new(),
        };
        let recursive = refers_to_root(schema) || own.values().any(refers_to_root);
        if own.is_empty() && !recursive {
            continue;
        }
        let taken = |n: &str| spec.defs.contains_key(n) || hoisted.iter().any(|(h, _)| h == n);
        let unique = |base: String| {
            let mut name = base.clone();
            let mut k = 2;
            while taken(&name) {
                name = format!("{base}{k}");
                k += 1;
            }
            name
        };
        let renames: Vec<(String, String)> = own
            .keys()
            .map(|k| {
                (
                    k.clone(),
                    unique(format!("{prefix}{}", crate::names::type_name(k))),
                )
            })
            .collect();
        let root_name = recursive.then(|| unique(prefix.clone()));
        let rewrite = |v: &mut Value| rewrite_refs(v, &renames, root_name.as_deref());
        for (k, mut def) in own {
            rewrite(&mut def);
            let name = renames
                .iter()
                .find(|(o, _)| *o == k)
                .map(|(_, n)| n.clone())
                .unwrap_or(k.clone());
            origins.insert(name.clone(), at.child("$defs").child(&k));
            hoisted.push((name, def));
        }
        rewrite(schema);
        if let Some(root) = root_name {
            origins.insert(root.clone(), at.clone());
            hoisted.push((root, schema.clone()));
        }
    }
    out.defs.extend(hoisted);
    (out, origins)
}

/// True when `v` holds a `$ref` to the root of its document (`#`).
fn refers_to_root(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            let mut found = m.get("$ref").and_then(Value::as_str) == Some("#");
            crate::refs::each_schema_child(m, |child| found = found || refers_to_root(child));
            found
        }
        Value::Array(a) => a.iter().any(refers_to_root),
        _ => false,
    }
}

fn rewrite_refs(v: &mut Value, renames: &[(String, String)], root: Option<&str>) {
    match v {
        Value::Object(m) => {
            if let Some(child) = m.get_mut("$ref")
                && let Some(r) = child.as_str()
            {
                let target = match (r, r.strip_prefix("#/$defs/")) {
                    ("#", _) => root.map(str::to_string),
                    (_, Some(name)) => renames
                        .iter()
                        .find(|(o, _)| o == name)
                        .map(|(_, n)| n.clone()),
                    _ => None,
                };
                if let Some(t) = target {
                    *child = format!("#/$defs/{t}").into();
                }
            }
            crate::refs::each_schema_child_mut(m, |child| rewrite_refs(child, renames, root));
        }
        Value::Array(a) => a.iter_mut().for_each(|c| rewrite_refs(c, renames, root)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(schema: Value) -> (Value, Vec<Fallback>) {
        let mut out = Vec::new();
        let v = view(&schema, &Pointer::root(), &IndexMap::new(), &mut out);
        (v, out)
    }

    #[test]
    fn exact_prefix_items_become_a_draft_07_tuple() {
        let (v, out) = run(
            json!({"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false, "minItems": 2}),
        );
        assert_eq!(
            v,
            json!({"type": "array", "items": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "additionalItems": false, "maxItems": 2})
        );
        assert!(out.is_empty());
    }

    #[test]
    fn open_prefix_items_and_punctuation_enums_are_widened_with_a_reason() {
        let (v, out) = run(json!({"type": "object", "properties": {
            "p": {"type": "array", "prefixItems": [{"type": "integer"}]},
            "sep": {"description": "Separator.", "enum": [",", ";", "\t", "|"]},
        }}));
        assert_eq!(
            v,
            json!({"type": "object", "properties": {"p": {"type": "array"}, "sep": {"description": "Separator.", "type": "string"}}})
        );
        assert_eq!(
            out.iter()
                .map(|f| f.pointer.to_string())
                .collect::<Vec<_>>(),
            ["/properties/p", "/properties/sep"]
        );
    }

    #[test]
    fn assertions_only_keywords_are_left_to_the_validator() {
        let (v, out) = run(
            json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 5}}}, "not": {"required": ["a"]}, "if": {}, "then": {}}),
        );
        assert_eq!(
            v,
            json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}})
        );
        assert!(out.is_empty());
    }
}
