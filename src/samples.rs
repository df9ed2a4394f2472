//! A minimal valid instance of a tool's advertised `inputSchema` (the arguments of the example
//! tests `mcpgen new` writes into `tests/tools.rs`), checked at generation time with the same
//! validator settings the generated server uses (JSON Schema 2020-12 with `format` asserted),
//! and, where no instance can be made (a `pattern` with a look-around, say), the exact
//! violations of `{}` as the server reports them.
//!
//! The instance has the required properties only. Each value is, in order of preference: the
//! schema's `const`, `default`, first `examples` entry or first `enum` member; else one made
//! from its type: a string matching its `pattern` (see [`pattern_sample`]) or a sample of its
//! `format`, as long as `minLength` asks; a number at its lower bound (or 0) honouring
//! `exclusiveMinimum` and `multipleOf`; `false`; `null`; an array of `minItems` items; an object
//! of its required properties; for `anyOf`/`oneOf`, the first branch that makes a valid whole.

use serde_json::{Map, Value, json};

/// What a test can send a tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// Arguments the schema accepts.
    Valid(Value),
    /// No valid arguments could be made: `{}` is sent, and the server answers with these
    /// violations, one line each (`/title (type): ...`), in the server's order.
    Invalid(Vec<String>),
}

/// The sample arguments of a tool whose advertised input schema is `schema`.
pub fn sample(schema: &Value) -> Sample {
    let Ok(validator) = validator(schema) else {
        return Sample::Invalid(vec!["(root): the input schema does not compile".into()]);
    };
    let mut tries = Vec::new();
    if let Some(v) = instance(schema, schema, 0) {
        tries.push(v);
    }
    tries.push(json!({}));
    for candidate in tries {
        if validator.is_valid(&candidate) {
            return Sample::Valid(candidate);
        }
    }
    Sample::Invalid(violations(&validator, &json!({})))
}

/// The validator the generated server compiles for `schema` (`runtime/src/catalog/schema.rs`).
fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Every violation of `instance`, written and ordered as the server writes them
/// (`runtime/src/catalog/schema.rs`, `violations`): `<pointer or (root)> (<keyword>): <message>`, in pointer
/// order.
pub fn violations(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    let mut found: Vec<(String, String)> = validator
        .iter_errors(instance)
        .map(|e| {
            let path = e.instance_path().to_string();
            let line = format!(
                "{} ({}): {e}",
                if path.is_empty() { "(root)" } else { &path },
                e.kind().keyword()
            );
            (path, line)
        })
        .collect();
    found.sort_by(|(a, _), (b, _)| pointer_order(a, b));
    found.into_iter().map(|(_, line)| line).collect()
}

/// The order of two JSON pointers: segment by segment, a prefix first, array indices as numbers.
fn pointer_order(a: &str, b: &str) -> std::cmp::Ordering {
    let segment = |s: &str| {
        let index = (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse::<u64>().ok())
            .flatten();
        (index.is_none(), index, s.to_string())
    };
    let a = a.split('/').skip(1).map(segment);
    let b = b.split('/').skip(1).map(segment);
    a.cmp(b)
}

/// How deep `$ref`s and nested schemas are followed (a recursive type stops here).
const MAX_DEPTH: usize = 16;

/// A candidate instance of `schema` (inside the document `root`, for `$ref`s), not yet checked.
fn instance(schema: &Value, root: &Value, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let obj = match schema {
        Value::Bool(true) => return Some(Value::Null),
        Value::Object(obj) => obj,
        _ => return None,
    };
    for key in ["const", "default"] {
        if let Some(v) = obj.get(key) {
            return Some(v.clone());
        }
    }
    for key in ["examples", "enum"] {
        if let Some(v) = obj
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return Some(v.clone());
        }
    }
    if let Some(target) = obj.get("$ref").and_then(Value::as_str) {
        let resolved = target
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))?;
        return instance(resolved, root, depth + 1);
    }
    if let Some(all) = obj.get("allOf").and_then(Value::as_array) {
        // The branches' keywords with the schema's own: enough for the usual `allOf` of a
        // `$ref` and a few more constraints.
        let mut merged = obj.clone();
        merged.remove("allOf");
        for branch in all {
            let branch = match branch.get("$ref").and_then(Value::as_str) {
                Some(r) => r.strip_prefix('#').and_then(|p| root.pointer(p))?,
                None => branch,
            };
            for (k, v) in branch.as_object()? {
                merge(&mut merged, k, v);
            }
        }
        return instance(&Value::Object(merged), root, depth + 1);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = obj.get(key).and_then(Value::as_array) {
            let own = validator(&with_root_defs(schema, root)).ok();
            return branches.iter().find_map(|b| {
                let mut merged = obj.clone();
                merged.remove(key);
                let b = match b.get("$ref").and_then(Value::as_str) {
                    Some(r) => r.strip_prefix('#').and_then(|p| root.pointer(p))?,
                    None => b,
                };
                for (k, v) in b.as_object()? {
                    merge(&mut merged, k, v);
                }
                let v = instance(&Value::Object(merged), root, depth + 1)?;
                own.as_ref().is_none_or(|o| o.is_valid(&v)).then_some(v)
            });
        }
    }
    let types: Vec<&str> = match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![implied_type(obj)],
    };
    // `null` is the smallest value of a nullable type only when nothing else is asked.
    let first = types
        .iter()
        .find(|t| **t != "null")
        .or(types.first())
        .copied()?;
    Some(match first {
        "string" => Value::String(string(obj)),
        "integer" => number(obj, true),
        "number" => number(obj, false),
        "boolean" => Value::Bool(false),
        "null" => Value::Null,
        "array" => {
            let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let prefix = obj.get("prefixItems").and_then(Value::as_array);
            let items = obj.get("items").unwrap_or(&Value::Bool(true));
            let mut out = Vec::new();
            for i in 0..min as usize {
                let item_schema = prefix.and_then(|p| p.get(i)).unwrap_or(items);
                out.push(instance(item_schema, root, depth + 1)?);
            }
            Value::Array(out)
        }
        "object" => {
            let props = obj.get("properties").and_then(Value::as_object);
            let extra = obj
                .get("additionalProperties")
                .unwrap_or(&Value::Bool(true));
            let mut out = Map::new();
            for name in obj
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let prop = props.and_then(|p| p.get(name)).unwrap_or(extra);
                out.insert(name.to_string(), instance(prop, root, depth + 1)?);
            }
            Value::Object(out)
        }
        _ => Value::Null,
    })
}

/// `schema` with `root`'s `$defs`, so that it compiles on its own.
fn with_root_defs(schema: &Value, root: &Value) -> Value {
    let mut s = schema.clone();
    if let (Some(defs), Value::Object(obj)) = (root.get("$defs"), &mut s) {
        obj.entry("$defs").or_insert_with(|| defs.clone());
    }
    s
}

/// Adds keyword `k` of a branch to `merged`: `required` lists and `properties` maps are joined,
/// other keywords are kept as the schema has them (or taken from the branch).
fn merge(merged: &mut Map<String, Value>, k: &str, v: &Value) {
    match (merged.get_mut(k), v) {
        (Some(Value::Array(have)), Value::Array(more)) if k == "required" => {
            for m in more {
                if !have.contains(m) {
                    have.push(m.clone());
                }
            }
        }
        (Some(Value::Object(have)), Value::Object(more)) if k == "properties" => {
            for (name, s) in more {
                have.entry(name.clone()).or_insert_with(|| s.clone());
            }
        }
        (Some(_), _) => {}
        (None, _) => {
            merged.insert(k.to_string(), v.clone());
        }
    }
}

/// The type a schema without `type` describes, from its keywords.
fn implied_type(obj: &Map<String, Value>) -> &'static str {
    let has = |keys: &[&str]| keys.iter().any(|k| obj.contains_key(*k));
    if has(&["properties", "required", "additionalProperties"]) {
        "object"
    } else if has(&["items", "prefixItems", "minItems"]) {
        "array"
    } else if has(&["minLength", "maxLength", "pattern", "format"]) {
        "string"
    } else if has(&["minimum", "maximum", "exclusiveMinimum", "multipleOf"]) {
        "number"
    } else {
        "null"
    }
}

/// The shortest string the schema asks for: a match of its `pattern` (stretched to
/// `minLength`), or a sample of its `format` padded to `minLength` with `a`s; with both, the
/// first that the string's own schema accepts.
fn string(obj: &Map<String, Value>) -> String {
    let min = obj.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let matched = (obj.get("pattern").and_then(Value::as_str)).and_then(|p| pattern_sample(p, min));
    let format = obj.get("format").and_then(Value::as_str).map(|f| match f {
        "date-time" => "2025-01-01T00:00:00Z",
        "date" => "2025-01-01",
        "time" => "00:00:00Z",
        "duration" => "P1D",
        "uuid" => "00000000-0000-0000-0000-000000000000",
        "email" | "idn-email" => "user@example.com",
        "uri" | "iri" | "uri-reference" | "iri-reference" => "https://example.com",
        "hostname" | "idn-hostname" => "example.com",
        "ipv4" => "127.0.0.1",
        "ipv6" => "::1",
        _ => "",
    });
    let mut padded = format.unwrap_or_default().to_string();
    while padded.chars().count() < min {
        padded.push('a');
    }
    match matched {
        None => padded,
        Some(matched) if format.is_none() => matched,
        Some(matched) => {
            let own = validator(&Value::Object(obj.clone())).ok();
            match own {
                Some(v)
                    if !v.is_valid(&Value::String(matched.clone()))
                        && v.is_valid(&Value::String(padded.clone())) =>
                {
                    padded
                }
                _ => matched,
            }
        }
    }
}

/// A short string matching `pattern`, of at least `min_length` characters where the pattern's
/// repetitions can stretch to it; `None` when the pattern is beyond `regex-syntax` (a
/// look-around, a back-reference) or asks for a character it cannot write.
///
/// Made from the pattern's HIR: literals as they are; a class as its first character in `a-z`,
/// else `A-Z`, else `0-9`, else its very first character; a repetition at its minimum, the
/// first ones stretched towards `min_length`; an alternation as its first branch; anchors and
/// word boundaries as nothing. The caller validates the result anyway.
pub fn pattern_sample(pattern: &str, min_length: usize) -> Option<String> {
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let mut extra = 0;
    let shortest = from_hir(&hir, &mut extra)?;
    let count = shortest.chars().count();
    if count >= min_length {
        return Some(shortest);
    }
    let mut extra = min_length - count;
    from_hir(&hir, &mut extra)
}

/// A string matching `hir`, its repetitions stretched by up to `extra` more characters
/// (decreased by what they took).
fn from_hir(hir: &regex_syntax::hir::Hir, extra: &mut usize) -> Option<String> {
    use regex_syntax::hir::{Class, HirKind};
    Some(match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => String::new(),
        HirKind::Literal(literal) => String::from_utf8(literal.0.to_vec()).ok()?,
        HirKind::Class(Class::Unicode(class)) => {
            let ranges: Vec<(char, char)> = class.iter().map(|r| (r.start(), r.end())).collect();
            class_char(&ranges)?.to_string()
        }
        HirKind::Class(Class::Bytes(class)) => {
            let ranges: Vec<(char, char)> = (class.iter())
                .filter(|r| r.start().is_ascii())
                .map(|r| (char::from(r.start()), char::from(r.end().min(0x7f))))
                .collect();
            class_char(&ranges)?.to_string()
        }
        HirKind::Repetition(repetition) => {
            let mut out = String::new();
            for _ in 0..repetition.min {
                out.push_str(&from_hir(&repetition.sub, &mut 0)?);
            }
            let mut count = repetition.min;
            while *extra > 0 && repetition.max.is_none_or(|max| count < max) {
                let more = from_hir(&repetition.sub, &mut 0)?;
                let len = more.chars().count();
                if len == 0 {
                    break;
                }
                out.push_str(&more);
                *extra = extra.saturating_sub(len);
                count += 1;
            }
            out
        }
        HirKind::Capture(capture) => from_hir(&capture.sub, extra)?,
        HirKind::Concat(parts) => {
            let mut out = String::new();
            for part in parts {
                out.push_str(&from_hir(part, extra)?);
            }
            out
        }
        HirKind::Alternation(branches) => from_hir(branches.first()?, extra)?,
    })
}

/// The character a sample takes from a class of these ranges: the first one in `a-z`, else in
/// `A-Z`, else in `0-9`, else the first of the first range.
fn class_char(ranges: &[(char, char)]) -> Option<char> {
    [('a', 'z'), ('A', 'Z'), ('0', '9')]
        .iter()
        .find_map(|&(lo, hi)| {
            (lo..=hi).find(|c| ranges.iter().any(|&(start, end)| (start..=end).contains(c)))
        })
        .or_else(|| ranges.first().map(|&(start, _)| start))
}

/// The smallest number the schema allows from its lower bound (0 without one, or the upper
/// bound when that is below 0), a multiple of `multipleOf`.
fn number(obj: &Map<String, Value>, integer: bool) -> Value {
    let f = |k: &str| obj.get(k).and_then(Value::as_f64);
    let step = f("multipleOf").filter(|m| *m > 0.0);
    let mut x = match (f("minimum"), f("exclusiveMinimum")) {
        (Some(min), Some(ex)) if ex >= min => next_above(ex, integer, step),
        (Some(min), _) => min,
        (None, Some(ex)) => next_above(ex, integer, step),
        (None, None) => match (f("maximum"), f("exclusiveMaximum")) {
            (Some(max), _) if max < 0.0 => max,
            (_, Some(ex)) if ex <= 0.0 => ex - step.unwrap_or(1.0),
            _ => 0.0,
        },
    };
    if integer {
        x = x.ceil();
    }
    if let Some(m) = step {
        x = (x / m).ceil() * m;
    }
    if integer || x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// The first value above `bound` worth trying.
fn next_above(bound: f64, integer: bool, step: Option<f64>) -> f64 {
    match (integer, step) {
        (true, _) => bound.floor() + 1.0,
        (false, Some(m)) => ((bound / m).floor() + 1.0) * m,
        (false, None) => bound + 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(schema: Value) -> Value {
        match sample(&schema) {
            Sample::Valid(v) => v,
            Sample::Invalid(v) => panic!("{schema}: {v:?}"),
        }
    }

    #[test]
    fn required_properties_get_the_smallest_values_their_schemas_allow() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 3},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "price": {"type": "number", "exclusiveMinimum": 0.5, "multipleOf": 0.25},
                "signed": {"type": "boolean"},
                "when": {"type": "string", "format": "date-time"},
                "id": {"type": "string", "format": "uuid"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "genre": {"enum": ["scifi", "poetry"]},
                "kind": {"const": "book"},
                "page": {"type": "integer", "default": 7},
                "optional": {"type": "string"}
            },
            "required": ["title", "limit", "price", "signed", "when", "id", "tags", "genre", "kind", "page"],
            "additionalProperties": false
        });
        assert_eq!(
            valid(schema),
            json!({
                "title": "aaa", "limit": 1, "price": 0.75, "signed": false,
                "when": "2025-01-01T00:00:00Z", "id": "00000000-0000-0000-0000-000000000000",
                "tags": ["", ""], "genre": "scifi", "kind": "book", "page": 7
            })
        );
    }

    #[test]
    fn refs_nested_objects_and_the_first_valid_branch_are_followed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "book": {"$ref": "#/$defs/Book"},
                "either": {"anyOf": [{"type": "string", "maxLength": 0, "minLength": 1}, {"type": "integer", "minimum": 3}]}
            },
            "required": ["book", "either"],
            "$defs": {"Book": {"type": "object", "properties": {"year": {"type": "integer", "minimum": 1450}}, "required": ["year"]}}
        });
        assert_eq!(valid(schema), json!({"book": {"year": 1450}, "either": 3}));
        assert_eq!(valid(json!({"type": "object"})), json!({}));
    }

    #[test]
    fn a_pattern_gets_a_match_made_from_its_syntax() {
        let cases: &[(&str, usize, &str)] = &[
            ("^[0-9]{13}$", 0, "0000000000000"),
            (r"^SKU-[A-Z]{3}\d{2}$", 0, "SKU-AAA00"),
            ("^lib-[0-9]+$", 0, "lib-0"),
            ("^(foo|bar)+x?$", 0, "foo"),
            // A class prefers a-z, then A-Z, then 0-9, else its first character.
            ("^[^a-z]$", 0, "A"),
            ("^[0-9A-Za-z_]$", 0, "a"),
            (r"^\w\s.$", 0, "a\ta"),
            ("^[+-]?$", 0, ""),
            ("^[+-]$", 0, "+"),
            ("^[é-ë]{2}$", 0, "éé"),
            ("(?i)^abc$", 0, "abc"),
            (r"\bgo\b", 0, "go"),
            ("^$", 0, ""),
            // `minLength` stretches the repetitions, the first one first.
            ("^a*$", 3, "aaa"),
            (r"^[a-z]{2,}-\d+$", 6, "aaaa-0"),
            (r"^[a-z]{2,3}-\d+$", 7, "aaa-000"),
            ("^(ab)*$", 3, "abab"),
            // Nothing to stretch: shorter than asked (the validator then says no).
            ("^abc$", 5, "abc"),
        ];
        for &(pattern, min, expected) in cases {
            assert_eq!(
                pattern_sample(pattern, min).as_deref(),
                Some(expected),
                "{pattern} (minLength {min})"
            );
        }
        // Beyond regex-syntax: look-arounds and back-references.
        assert_eq!(pattern_sample("^(?=.*[0-9])[a-z0-9]{8}$", 0), None);
        assert_eq!(pattern_sample(r"^(a)\1$", 0), None);
    }

    #[test]
    fn string_properties_with_a_pattern_get_a_valid_match() {
        let schema = json!({
            "type": "object",
            "properties": {
                "isbn": {"type": "string", "pattern": "^[0-9]{13}$"},
                "sku": {"type": "string", "pattern": r"^SKU-[A-Z]{3}\d{2}$"},
                "code": {"type": "string", "pattern": "^[a-z]+$", "minLength": 4},
                "day": {"type": "string", "format": "date", "pattern": "^2025-"}
            },
            "required": ["isbn", "sku", "code", "day"]
        });
        assert_eq!(
            valid(schema),
            json!({"isbn": "0000000000000", "sku": "SKU-AAA00", "code": "aaaa", "day": "2025-01-01"})
        );
    }

    #[test]
    fn without_a_valid_instance_the_violations_of_an_empty_object_are_given() {
        // A look-ahead: the server's validator (fancy-regex) has it, regex-syntax does not.
        let schema = json!({
            "type": "object",
            "properties": {
                "password": {"type": "string", "pattern": "^(?=.*[0-9])[a-z0-9]{8}$"},
                "quantity": {"type": "integer", "minimum": 1}
            },
            "required": ["password", "quantity"]
        });
        assert_eq!(
            sample(&schema),
            Sample::Invalid(vec![
                r#"(root) (required): "password" is a required property"#.into(),
                r#"(root) (required): "quantity" is a required property"#.into()
            ])
        );
        // A match the rest of the schema excludes: the validator has the last word.
        let schema = json!({
            "type": "object",
            "properties": {
                "isbn": {"type": "string", "pattern": "^[0-9]{13}$", "not": {"const": "0000000000000"}}
            },
            "required": ["isbn"]
        });
        assert_eq!(
            sample(&schema),
            Sample::Invalid(vec![
                r#"(root) (required): "isbn" is a required property"#.into()
            ])
        );
    }
}
