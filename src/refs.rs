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
            for (k, child) in m {
                if k == "$ref" {
                    if let Some(name) = child.as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
                        out.push(name.to_string());
                    }
                } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    collect_refs(child, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|c| collect_refs(c, out)),
        _ => {}
    }
}
