//! References between the schemas of a spec: which `$defs` types a schema names (`#/$defs/Name`),
//! and a schema made to stand alone by carrying them. Validation, the model and typing all ask
//! these questions; this module answers them once and imports nothing of theirs.

use indexmap::IndexMap;
use serde_json::{Map, Value};

/// `schema` with every `$defs` type of the spec it references (transitively) copied into its own
/// `$defs`, so the schema stands alone on the wire. Only the types it needs are copied, in spec
/// order; `$defs` the schema already carries are kept, and a name it defines itself is its own
/// (a `$ref` in the document resolves to it).
pub fn self_contained(defs: &IndexMap<String, Value>, schema: &Value) -> Value {
    let own: Map<String, Value> = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut needed: Vec<String> = Vec::new();
    let mut queue: Vec<&Value> = vec![schema];
    while let Some(v) = queue.pop() {
        let mut refs = Vec::new();
        collect_refs(v, &mut refs);
        for name in refs {
            if !needed.contains(&name)
                && !own.contains_key(&name)
                && let Some(def) = defs.get(&name)
            {
                needed.push(name);
                queue.push(def);
            }
        }
    }
    let mut out = schema.clone();
    if needed.is_empty() {
        return out;
    }
    // The schema's own first, then the spec's in spec order, so the output is stable.
    let mut all = own;
    all.extend(
        defs.iter()
            .filter(|(n, _)| needed.contains(n))
            .map(|(n, s)| (n.clone(), s.clone())),
    );
    if let Value::Object(m) = &mut out {
        m.insert("$defs".into(), Value::Object(all));
    }
    out
}

/// The `$defs` names that `v` references (`#/$defs/Name`), in order of appearance.
pub fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(name) = m
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
            {
                out.push(name.to_string());
            }
            each_schema_child(m, |child| collect_refs(child, out));
        }
        Value::Array(a) => a.iter().for_each(|c| collect_refs(c, out)),
        _ => {}
    }
}

/// Whether the keyword `k` holds names mapped to subschemas (`properties`,
/// `patternProperties`, `$defs`, `definitions`, `dependentSchemas`): its keys are names, never
/// keywords (a property may be called `$ref` or `default`).
fn names_subschemas(k: &str) -> bool {
    matches!(
        k,
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
    )
}

/// Whether the keyword `k` holds instance data (`enum`, `const`, `default`, `examples`), never
/// a schema.
fn holds_data(k: &str) -> bool {
    matches!(k, "enum" | "const" | "default" | "examples")
}

/// Calls `f` on what a walk looking for keywords descends into from the schema object `m`:
/// every keyword's value, except the data keywords' and `$ref`'s own, with the subschemas of a
/// name map (`properties`, ...) visited directly, so that a property named like a keyword is
/// never taken for one. Every walk over a spec's schemas goes through it (or its `_mut` twin).
pub fn each_schema_child<'a>(m: &'a Map<String, Value>, mut f: impl FnMut(&'a Value)) {
    for (k, child) in m {
        if k == "$ref" || holds_data(k) {
            continue;
        }
        match child {
            Value::Object(named) if names_subschemas(k) => named.values().for_each(&mut f),
            _ => f(child),
        }
    }
}

/// [`each_schema_child`] over a mutable schema.
pub fn each_schema_child_mut(m: &mut Map<String, Value>, mut f: impl FnMut(&mut Value)) {
    for (k, child) in m.iter_mut() {
        if k == "$ref" || holds_data(k) {
            continue;
        }
        match child {
            Value::Object(named) if names_subschemas(k) => named.values_mut().for_each(&mut f),
            _ => f(child),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Properties named like keywords (`$ref`, `default`, `enum`) are names: the types their
    /// schemas reference are carried, and data keywords are still not searched.
    #[test]
    fn properties_named_like_keywords_are_searched_as_schemas() {
        let defs: IndexMap<String, Value> = [
            ("Self_".to_string(), json!({"type": "string"})),
            ("Ref".to_string(), json!({"type": "integer"})),
            ("Dflt".to_string(), json!({"type": "boolean"})),
            ("Unused".to_string(), json!({"type": "null"})),
        ]
        .into_iter()
        .collect();
        let input = json!({
            "type": "object",
            "properties": {
                "$ref": {"$ref": "#/$defs/Self_"},
                "r": {"$ref": "#/$defs/Ref"},
                "default": {"$ref": "#/$defs/Dflt"},
                "enum": {"type": "string", "default": {"$ref": "#/$defs/Unused"}}
            }
        });
        let mut refs = Vec::new();
        collect_refs(&input, &mut refs);
        assert_eq!(refs, ["Self_", "Ref", "Dflt"]);
        let contained = self_contained(&defs, &input);
        assert_eq!(
            contained["$defs"],
            json!({"Self_": {"type": "string"}, "Ref": {"type": "integer"}, "Dflt": {"type": "boolean"}})
        );
    }
}
