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
//!
//! A sub-schema in a value's place (a root, a property, items, ...) that states no type but
//! carries keywords of one type (`{"minLength": 2}`, `{"required": ["a"]}`) accepts values of
//! every other type as they are, while typify would type it as that one type: it is such a
//! fallback. A branch of `allOf`/`anyOf`/`oneOf` under a schema that states the type refines that
//! type (`{"type": "object", "anyOf": [{"required": ["a"]}, ...]}`) and is handed on as written.

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
    view_in(schema, at, defs, out, Place::Value)
}

/// Where a sub-schema sits: what its instances are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// A value of its own (a schema's root, a property's, an item's, ...): every instance of
    /// any JSON type the schema accepts must convert.
    Value,
    /// A branch of `allOf`/`anyOf`/`oneOf` refining a schema (or a sibling branch) that states
    /// the type: the instances are of that type, which typify merges the branch into.
    Refines,
}

fn view_in(
    schema: &Value,
    at: &Pointer,
    defs: &IndexMap<String, Value>,
    out: &mut Vec<Fallback>,
    place: Place,
) -> Value {
    let Value::Object(m) = schema else {
        // `true` accepts anything, `false` nothing: `{}` (a `serde_json::Value`) holds both.
        return json!({});
    };
    let wider = match place {
        Place::Value => keyword_only(m),
        Place::Refines => None,
    };
    if let Some((wide, why)) = wider.or_else(|| decide(m)) {
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
        if k == "pattern" && child.as_str().is_some_and(unicode_mode_only) {
            // typify checks a pattern with `regress` in its non-Unicode mode, where `\p{L}`
            // matches `p{L}`: the type stays a `String`, the validator checks the pattern.
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
                Value::Array(variants)
                    if k != "allOf"
                        && branch_place(m, place, k) == Place::Refines
                        && variants.iter().any(only_restricts) =>
                {
                    // One alternative adds no member: the instance is of the stated type with
                    // the members it has (typify would make a variant per branch, keeping only
                    // the members that branch names).
                    continue;
                }
                Value::Array(variants) => {
                    let inlined = tagged_refs(variants, defs);
                    let place = branch_place(m, place, k);
                    let viewed: Vec<Value> = variants
                        .iter()
                        .enumerate()
                        // A `false` alternative matches nothing (as `{}` it would match all).
                        .filter(|(_, s)| k == "allOf" || **s != Value::Bool(false))
                        .map(|(i, s)| {
                            let s = inlined.as_ref().map_or(s, |inl| &inl[i]);
                            view_in(s, &cat.child(&i.to_string()), defs, out, place)
                        })
                        .collect();
                    if viewed.is_empty() {
                        continue;
                    }
                    Value::Array(viewed)
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

/// Keywords that constrain instances of one JSON type only (every other type passes them) and
/// that typify takes to mean that type, with the type.
const ONE_TYPE_KEYWORDS: &[(&str, &str)] = &[
    ("minLength", "string"),
    ("maxLength", "string"),
    ("pattern", "string"),
    ("format", "string"),
    ("minimum", "number"),
    ("maximum", "number"),
    ("exclusiveMinimum", "number"),
    ("exclusiveMaximum", "number"),
    ("multipleOf", "number"),
    ("items", "array"),
    ("prefixItems", "array"),
    ("additionalItems", "array"),
    ("minItems", "array"),
    ("maxItems", "array"),
    ("uniqueItems", "array"),
    ("properties", "object"),
    ("required", "object"),
    ("additionalProperties", "object"),
    ("patternProperties", "object"),
    ("minProperties", "object"),
    ("maxProperties", "object"),
];

/// Keywords that restrict the instances of a stated type without adding members or types.
const RESTRICTIONS: &[&str] = &[
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "title",
    "description",
    "default",
];

/// True when the branch `b` only restricts the type it refines (`{"required": ["phone"]}`).
fn only_restricts(b: &Value) -> bool {
    match b {
        Value::Bool(_) => true,
        Value::Object(m) => m.keys().all(|k| {
            let k = k.as_str();
            RESTRICTIONS.contains(&k) || ASSERTIONS_ONLY.contains(&k) || ANNOTATIONS.contains(&k)
        }),
        _ => false,
    }
}

/// True when `m` says which JSON types its instances have (`type`, `enum`, `const`, or a
/// reference to a schema that does).
fn states_type(m: &Map<String, Value>) -> bool {
    [
        "type",
        "enum",
        "const",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
    ]
    .iter()
    .any(|k| m.contains_key(*k))
}

/// How the branches of `m`'s `keyword` (`allOf`, `anyOf` or `oneOf`) are typed, `m` being in
/// `place`: refining a type stated by `m` or by what `m` refines (or, for `allOf`, by a sibling
/// branch: every branch holds), or as values of their own.
fn branch_place(m: &Map<String, Value>, place: Place, keyword: &str) -> Place {
    let sibling_states = keyword == "allOf"
        && m.get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|bs| bs.iter().filter_map(Value::as_object).any(states_type));
    if place == Place::Refines || states_type(m) || sibling_states {
        Place::Refines
    } else {
        Place::Value
    }
}

/// The keywords of `m` (at relative paths, `anyOf/1/minimum` for a branch's) that constrain
/// one JSON type only where `m` states no type: typify would type `m` as that type, narrower
/// than the schema, which lets every value of the other types through.
fn one_type_keywords(m: &Map<String, Value>) -> Vec<(String, &'static str)> {
    if states_type(m) {
        return Vec::new();
    }
    let mut found: Vec<(String, &'static str)> = ONE_TYPE_KEYWORDS
        .iter()
        .filter(|(k, _)| m.contains_key(*k))
        .map(|(k, t)| (k.to_string(), *t))
        .collect();
    for keyword in ["allOf", "anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = m.get(keyword) else {
            continue;
        };
        if branch_place(m, Place::Value, keyword) == Place::Refines {
            continue;
        }
        for (i, b) in branches.iter().enumerate() {
            if let Value::Object(b) = b {
                found.extend(
                    one_type_keywords(b)
                        .into_iter()
                        .map(|(k, t)| (format!("{keyword}/{i}/{k}"), t)),
                );
            }
        }
    }
    found
}

/// The first branch (`anyOf/1`) of an `anyOf` or `oneOf` of `m`, which states no type, that
/// accepts values of every JSON type (`true`, `{}`, only annotations or assertions typify leaves
/// out): typify would make a struct of the branches, which takes objects only.
fn open_alternative(m: &Map<String, Value>) -> Option<String> {
    if states_type(m) {
        return None;
    }
    ["anyOf", "oneOf"].into_iter().find_map(|keyword| {
        let branches = m.get(keyword)?.as_array()?;
        let i = branches.iter().position(|b| match b {
            Value::Bool(accepts) => *accepts,
            Value::Object(b) => {
                !states_type(b)
                    && one_type_keywords(b).is_empty()
                    && !["allOf", "anyOf", "oneOf"]
                        .iter()
                        .any(|k| b.contains_key(*k))
            }
            _ => false,
        })?;
        Some(format!("{keyword}/{i}"))
    })
}

/// A sub-schema in a value's place with no type of its own and keywords of one type (or of
/// several, each constraining its own): typed `serde_json::Value`, as the schema accepts a
/// value of any JSON type (`{"minLength": 2}` accepts `5`).
fn keyword_only(m: &Map<String, Value>) -> Option<(Value, String)> {
    let wide = || {
        let mut w = Map::new();
        if let Some(d) = m.get("description") {
            w.insert("description".into(), d.clone());
        }
        Value::Object(w)
    };
    if let Some(open) = open_alternative(m) {
        return Some((
            wide(),
            format!(
                "typed as `serde_json::Value`: it has no `type`, and its alternative `{open}` \
                 accepts a value of any JSON type (the schema still checks the values); give \
                 each alternative a `type` for a typed field"
            ),
        ));
    }
    let found = one_type_keywords(m);
    if found.is_empty() {
        return None;
    }
    let mut types: Vec<&str> = Vec::new();
    for (_, t) in &found {
        if !types.contains(t) {
            types.push(t);
        }
    }
    let names = |items: Vec<String>| match items.as_slice() {
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        [] => String::new(),
    };
    let keywords = names(found.iter().map(|(k, _)| format!("`{k}`")).collect());
    let plural = names(types.iter().map(|t| format!("{t}s")).collect());
    let verb = if found.len() == 1 {
        "constrains"
    } else {
        "constrain"
    };
    let add = match types.as_slice() {
        _ if found.iter().any(|(k, _)| k.contains('/')) => {
            "a `type` to each of those branches".to_string()
        }
        [one] => format!("`\"type\": \"{one}\"`"),
        several => format!(
            "`\"type\": [{}]`",
            several
                .iter()
                .map(|t| format!("\"{t}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some((
        wide(),
        format!(
            "typed as `serde_json::Value`: it has no `type`, and {keywords} {verb} {plural} \
             only, so the schema accepts a value of any other JSON type as well (the schema \
             still checks the values); add {add} for a typed field"
        ),
    ))
}

/// True when `pattern` means something else without ECMAScript's Unicode mode (`u`), which
/// JSON Schema patterns are read in: property escapes `\p{..}`/`\P{..}`, code points `\u{..}`.
fn unicode_mode_only(pattern: &str) -> bool {
    let mut escaped = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            if matches!(c, 'p' | 'P') || (c == 'u' && chars.peek() == Some(&'{')) {
                return true;
            }
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        }
    }
    false
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

    /// Each keyword of one JSON type, in a schema with no `type`: typify would type the value
    /// as that type, and the schema accepts values of every other type too.
    #[test]
    fn keyword_only_values_are_typed_as_any_value() {
        for (keyword, value, ty) in [
            ("minLength", json!(2), "string"),
            ("maxLength", json!(2), "string"),
            ("pattern", json!("^a"), "string"),
            ("format", json!("email"), "string"),
            ("minimum", json!(1), "number"),
            ("maximum", json!(1), "number"),
            ("exclusiveMinimum", json!(1), "number"),
            ("exclusiveMaximum", json!(1), "number"),
            ("multipleOf", json!(2), "number"),
            ("items", json!({"type": "integer"}), "array"),
            ("prefixItems", json!([{"type": "integer"}]), "array"),
            ("minItems", json!(1), "array"),
            ("maxItems", json!(2), "array"),
            ("uniqueItems", json!(true), "array"),
            ("properties", json!({"a": {"type": "string"}}), "object"),
            ("required", json!(["a"]), "object"),
            ("additionalProperties", json!({"type": "integer"}), "object"),
            (
                "patternProperties",
                json!({"^a": {"type": "integer"}}),
                "object",
            ),
            ("minProperties", json!(1), "object"),
            ("maxProperties", json!(2), "object"),
        ] {
            for at in ["properties/v", "items", "additionalProperties"] {
                let sub = json!({"description": "V.", keyword: value});
                let (schema, typed) = match at {
                    "properties/v" => (
                        json!({"type": "object", "properties": {"v": sub}}),
                        json!({"type": "object", "properties": {"v": {"description": "V."}}}),
                    ),
                    "items" => (
                        json!({"type": "array", "items": sub}),
                        json!({"type": "array", "items": {"description": "V."}}),
                    ),
                    _ => (
                        json!({"type": "object", "additionalProperties": sub}),
                        json!({"type": "object", "additionalProperties": {"description": "V."}}),
                    ),
                };
                let (v, out) = run(schema);
                assert_eq!(v, typed, "{keyword} at {at}");
                assert_eq!(
                    out,
                    [Fallback {
                        pointer: Pointer::from_segments(at.split('/')),
                        message: format!(
                            "typed as `serde_json::Value`: it has no `type`, and `{keyword}` \
                             constrains {ty}s only, so the schema accepts a value of any other \
                             JSON type as well (the schema still checks the values); add \
                             `\"type\": \"{ty}\"` for a typed field"
                        ),
                    }],
                    "{keyword} at {at}"
                );
            }
        }
    }

    /// The root of a `$defs` type or an output is a value too; keywords of several types are
    /// named together, and a typeless `anyOf` of one-type branches accepts any value.
    #[test]
    fn keyword_only_roots_and_unions_of_them_are_typed_as_any_value() {
        let (v, out) = run(json!({"minLength": 1, "minimum": 0}));
        assert_eq!(v, json!({}));
        assert_eq!(
            out[0].message,
            "typed as `serde_json::Value`: it has no `type`, and `minLength` and `minimum` \
             constrain strings and numbers only, so the schema accepts a value of any other JSON \
             type as well (the schema still checks the values); add `\"type\": [\"string\", \
             \"number\"]` for a typed field"
        );
        let (v, out) = run(json!({"type": "object", "properties": {"v": {"anyOf": [
            {"minLength": 2}, {"type": "integer"}
        ]}}}));
        assert_eq!(v, json!({"type": "object", "properties": {"v": {}}}));
        assert_eq!(
            out,
            [Fallback {
                pointer: Pointer::from_segments(["properties", "v"]),
                message: "typed as `serde_json::Value`: it has no `type`, and \
                          `anyOf/0/minLength` constrains strings only, so the schema accepts a \
                          value of any other JSON type as well (the schema still checks the \
                          values); add a `type` to each of those branches for a typed field"
                    .into(),
            }]
        );
    }

    /// Typed schemas, enums, references and schemas with no one-type keyword keep their type.
    #[test]
    fn typed_and_unconstrained_values_keep_their_type() {
        let props = json!({
            "s": {"type": "string", "minLength": 2},
            "e": {"enum": ["a", "b"]},
            "c": {"const": "a"},
            "r": {"$ref": "#/$defs/A", "required": ["x"]},
            "any": {"description": "Anything."},
            "union": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer"}]},
            "refined": {"allOf": [{"$ref": "#/$defs/A"}, {"required": ["x"]}]},
            "xs": {"contains": {"type": "integer"}},
        });
        let (v, out) = run(json!({"type": "object", "properties": props}));
        assert_eq!(
            v,
            json!({"type": "object", "properties": {
                "s": {"type": "string", "minLength": 2},
                "e": {"enum": ["a", "b"]},
                "c": {"const": "a"},
                "r": {"$ref": "#/$defs/A", "required": ["x"]},
                "any": {"description": "Anything."},
                "union": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer"}]},
                "refined": {"allOf": [{"$ref": "#/$defs/A"}, {"required": ["x"]}]},
                "xs": {},
            }})
        );
        assert!(out.is_empty(), "{out:?}");
    }

    /// Branches refining a stated type are merged into it, their own values being values
    /// again; an `anyOf` one of whose alternatives only restricts (the conformance suite's
    /// `allOf` of `anyOf` of `required`) is left to the validator: typify would make a variant
    /// per branch, each dropping (or, under `"additionalProperties": false`, refusing) the
    /// members the others name.
    #[test]
    fn branches_under_a_typed_schema_refine_it() {
        let schema = json!({"type": "object",
            "properties": {"phone": {"type": "string"}, "email": {"type": "string"}},
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "oneOf": [{"properties": {"tags": {"items": {"type": "string"}}}}]});
        let (v, out) = run(schema);
        assert_eq!(
            v,
            json!({"type": "object",
            "properties": {"phone": {"type": "string"}, "email": {"type": "string"}},
            "allOf": [{}],
            "oneOf": [{"properties": {"tags": {}}}]})
        );
        assert_eq!(
            out.iter()
                .map(|f| f.pointer.to_string())
                .collect::<Vec<_>>(),
            ["/oneOf/0/properties/tags"]
        );
    }

    /// A typeless `anyOf`/`oneOf` with an alternative open to every type (`true`, `{}`)
    /// accepts any value; typify would make a struct of the branches.
    #[test]
    fn unions_with_an_open_alternative_are_typed_as_any_value() {
        for (union, open) in [
            (json!({"anyOf": [{"type": "number"}, {}]}), "anyOf/1"),
            (json!({"anyOf": [true, false]}), "anyOf/0"),
            (
                json!({"oneOf": [{"type": "string"}, {"description": "Any."}]}),
                "oneOf/1",
            ),
        ] {
            let (v, out) = run(json!({"type": "object", "properties": {"v": union}}));
            assert_eq!(v, json!({"type": "object", "properties": {"v": {}}}));
            assert_eq!(
                out,
                [Fallback {
                    pointer: Pointer::from_segments(["properties", "v"]),
                    message: format!(
                        "typed as `serde_json::Value`: it has no `type`, and its alternative \
                         `{open}` accepts a value of any JSON type (the schema still checks the \
                         values); give each alternative a `type` for a typed field"
                    ),
                }]
            );
        }
        let (v, out) = run(json!({"anyOf": [{"type": "number"}, false]}));
        assert_eq!(v, json!({"anyOf": [{"type": "number"}]}));
        assert!(out.is_empty());
    }

    /// A pattern that means something else outside Unicode mode is left to the validator.
    #[test]
    fn patterns_of_unicode_mode_are_left_to_the_validator() {
        for pattern in [r"^\p{Letter}+$", r"\P{L}", r"^\u{1F600}$"] {
            let (v, _) = run(json!({"type": "string", "pattern": pattern}));
            assert_eq!(v, json!({"type": "string"}), "{pattern}");
        }
        for pattern in [r"^[a-z]+$", r"\\p{L}", r"\u00e9"] {
            let (v, _) = run(json!({"type": "string", "pattern": pattern}));
            assert_eq!(
                v,
                json!({"type": "string", "pattern": pattern}),
                "{pattern}"
            );
        }
    }
}
