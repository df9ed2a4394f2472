//! The spec format's own JSON Schema, derived from the model, and the structural check of a
//! document against it: unknown keys, missing keys, wrong value types and invalid JSON Schemas,
//! each reported at its place in the file.

use std::sync::LazyLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

use crate::diagnostics::{Code, Diagnostic, Subject};
use crate::names::closest;
use crate::pointer::Pointer;
use crate::source::Document;
use crate::spec::model::Spec;

/// The `$id` of the spec format's schema.
pub const FORMAT_SCHEMA_ID: &str = "https://mcpgen.dev/schema/spec-v1.json";

/// The JSON Schema of the spec format: derived from [`Spec`], with `x-` keys allowed wherever
/// unknown keys are not. Stable output for `mcpgen schema`.
pub fn format_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<Spec>();
    let mut value = schema.to_value();
    if let Value::Object(root) = &mut value {
        root.insert("$id".into(), Value::String(FORMAT_SCHEMA_ID.into()));
    }
    allow_extension_keys(&mut value);
    value
}

/// Adds `patternProperties: {"^x-": {}}` beside every `additionalProperties: false`, and drops
/// the `null` that optional fields get from schemars: an optional key is omitted, never null.
fn allow_extension_keys(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get("type")
                && types.len() == 2
                && let Some(other) = types.iter().find(|t| *t != "null")
                && types.iter().any(|t| t == "null")
            {
                let other = other.clone();
                map.insert("type".into(), other);
            }
            let null = serde_json::json!({"type": "null"});
            if let Some(Value::Array(alts)) = map.get("anyOf")
                && alts.len() == 2
                && alts.contains(&null)
                && let Some(Value::Object(other)) = alts.iter().find(|a| **a != null).cloned()
            {
                map.remove("anyOf");
                for (k, v) in other {
                    map.entry(k).or_insert(v);
                }
            }
            if map.get("additionalProperties") == Some(&Value::Bool(false)) {
                let mut pp = Map::new();
                pp.insert("^x-".into(), Value::Object(Map::new()));
                map.insert("patternProperties".into(), Value::Object(pp));
            }
            for (_, child) in map.iter_mut() {
                allow_extension_keys(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(allow_extension_keys),
        _ => {}
    }
}

/// Moves the `x-` keys of every object of the format out of `value`, by walking it alongside
/// the format's schema: wherever that schema closes an object (`additionalProperties: false`,
/// the places [`format_schema`] allows `x-` keys), its `x-` keys are taken, keyed by pointer.
/// User JSON Schemas (where `x-` keys are ordinary keywords) and maps of names (tools, `params`,
/// `properties`, ...) are left as written. The one place that knows where extensions live, so
/// the model's `deny_unknown_fields` never sees one.
pub fn take_extensions(value: &mut Value) -> Vec<(Pointer, Value)> {
    let (schema, _) = &*FORMAT;
    let mut out = Vec::new();
    walk_format(schema, schema, value, &Pointer::root(), &mut out);
    out
}

fn walk_format(
    root: &Value,
    node: &Value,
    value: &mut Value,
    at: &Pointer,
    out: &mut Vec<(Pointer, Value)>,
) {
    // Follow local references; any other reference is a user JSON Schema: not the format's.
    let mut node = node;
    for _ in 0..64 {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(target) => node = target,
                None => return,
            },
            None => break,
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(alts)) = node.get(key) {
            for alt in alts {
                walk_format(root, alt, value, at, out);
            }
        }
    }
    match value {
        Value::Object(map) => {
            if node.get("additionalProperties") == Some(&Value::Bool(false)) {
                let keys: Vec<String> = map
                    .keys()
                    .filter(|k| k.starts_with("x-"))
                    .cloned()
                    .collect();
                for k in keys {
                    if let Some(v) = map.shift_remove(&k) {
                        out.push((at.child(&k), v));
                    }
                }
            }
            let properties = node.get("properties").and_then(Value::as_object);
            let others = node.get("additionalProperties").filter(|a| a.is_object());
            for (k, child) in map.iter_mut() {
                if let Some(sub) = properties.and_then(|p| p.get(k)).or(others) {
                    walk_format(root, sub, child, &at.child(k), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = node.get("items") {
                for (i, child) in items.iter_mut().enumerate() {
                    walk_format(root, sub, child, &at.child(&i.to_string()), out);
                }
            }
        }
        _ => {}
    }
}

static FORMAT: LazyLock<(Value, jsonschema::Validator)> = LazyLock::new(|| {
    let schema = format_schema();
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the spec format schema derived from the model compiles");
    (schema, validator)
});

/// Checks a document against the spec format. Returns every structural error, in document order.
pub fn check_structure(doc: &Document) -> Vec<Diagnostic> {
    let (schema, validator) = &*FORMAT;
    let mut out = Vec::new();
    for err in validator.iter_errors(&doc.value) {
        let pointer = Pointer::parse(err.instance_path().as_str()).unwrap_or_default();
        let schema_path = Pointer::parse(err.schema_path().as_str()).unwrap_or_default();
        out.extend(describe(
            doc,
            schema,
            &pointer,
            &schema_path,
            err.kind(),
            err.to_string(),
        ));
    }
    out.sort_by_key(|d| d.span.as_ref().map(|s| s.start));
    out.dedup_by(|a, b| a.message == b.message && a.pointer == b.pointer);
    out
}

/// What the item at `pointer` is, in words: "tool `x`", "resolver `r`", ...
pub fn describe_place(pointer: &Pointer) -> (String, Vec<Subject>) {
    let seg: Vec<String> = pointer.segments().collect();
    let s = |i: usize| seg.get(i).map(String::as_str).unwrap_or("");
    match seg.len() {
        0 => ("the spec".into(), vec![]),
        1 if s(0) == "tools" => ("`tools`".into(), vec![]),
        1 if s(0) == "resolvers" => ("`resolvers`".into(), vec![]),
        1 if s(0) == "$defs" => ("`$defs`".into(), vec![]),
        _ if s(0) == "tools" => {
            let tool = s(1).to_string();
            let subj = vec![Subject::Tool(tool.clone())];
            match (s(2), seg.len()) {
                (_, 2) => (format!("tool `{tool}`"), subj),
                ("annotations", 3) => (format!("the annotations of tool `{tool}`"), subj),
                ("resolve", 3) => (format!("the `resolve` of tool `{tool}`"), subj),
                ("resolve", _) => {
                    let p = s(3).to_string();
                    (
                        format!("the binding of parameter `{p}` of tool `{tool}`"),
                        vec![Subject::Tool(tool), Subject::Parameter(p)],
                    )
                }
                (k @ ("input" | "output"), _) => (format!("the {k} schema of tool `{tool}`"), subj),
                (k, _) => (format!("`{k}` of tool `{tool}`"), subj),
            }
        }
        _ if s(0) == "resolvers" => {
            let r = s(1).to_string();
            let subj = vec![Subject::Resolver(r.clone())];
            match (s(2), seg.len()) {
                (_, 2) => (format!("resolver `{r}`"), subj),
                ("params", 3) => (format!("the `params` of resolver `{r}`"), subj),
                ("params", _) => {
                    let p = s(3).to_string();
                    (
                        format!("the source of parameter `{p}` of resolver `{r}`"),
                        vec![Subject::Resolver(r), Subject::Parameter(p)],
                    )
                }
                ("returns", _) => (format!("the returns schema of resolver `{r}`"), subj),
                (k, _) => (format!("`{k}` of resolver `{r}`"), subj),
            }
        }
        _ if s(0) == "$defs" => {
            let t = s(1).to_string();
            (format!("type `{t}` in `$defs`"), vec![Subject::Type(t)])
        }
        1 => (format!("`{}`", s(0)), vec![]),
        _ if s(0) == "prompts" => {
            let p = s(1).to_string();
            let subj = vec![Subject::Prompt(p.clone())];
            match (s(2), seg.len()) {
                (_, 2) => (format!("prompt `{p}`"), subj),
                ("arguments", 4) => (format!("argument `{}` of prompt `{p}`", s(3)), subj),
                ("messages", 4) => (format!("message {} of prompt `{p}`", s(3)), subj),
                ("messages", 5) if s(4) == "image" => (
                    format!("the image of message {} of prompt `{p}`", s(3)),
                    subj,
                ),
                ("arguments", _) => (
                    format!("`{}` of argument `{}` of prompt `{p}`", s(4), s(3)),
                    subj,
                ),
                ("messages", 5) => (
                    format!("`{}` of message {} of prompt `{p}`", s(4), s(3)),
                    subj,
                ),
                ("resolve", 4) => (
                    format!("the binding of parameter `{}` of prompt `{p}`", s(3)),
                    vec![Subject::Prompt(p.clone()), Subject::Parameter(s(3).into())],
                ),
                (k, _) => (format!("`{k}` of prompt `{p}`"), subj),
            }
        }
        _ if s(0) == "resources" || s(0) == "resourceTemplates" => {
            let uri = s(1).to_string();
            let what = if s(0) == "resources" {
                "resource"
            } else {
                "template"
            };
            let subj = vec![Subject::Resource(uri.clone())];
            match seg.len() {
                2 => (format!("{what} `{uri}`"), subj),
                _ => (format!("`{}` of {what} `{uri}`", s(2)), subj),
            }
        }
        _ if s(0) == "notifications" => (format!("`{}` of `notifications`", s(1)), vec![]),
        _ if s(0) == "auth" => (format!("`{}` of `auth`", s(1)), vec![]),
        _ => (format!("`{}`", pointer.as_str()), vec![]),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn lookup<'a>(root: &'a Value, pointer: &Pointer) -> Option<&'a Value> {
    root.pointer(pointer.as_str())
}

/// True when `pointer` lies inside a user JSON Schema (input, output, returns, $defs).
fn inside_user_schema(pointer: &Pointer) -> bool {
    let seg: Vec<String> = pointer.segments().collect();
    match seg.first().map(String::as_str) {
        Some("$defs") => seg.len() >= 2,
        Some("tools") => seg.len() >= 3 && matches!(seg[2].as_str(), "input" | "output"),
        Some("resolvers") => seg.len() >= 3 && seg[2] == "returns",
        _ => false,
    }
}

fn describe(
    doc: &Document,
    schema: &Value,
    pointer: &Pointer,
    schema_path: &Pointer,
    kind: &ValidationErrorKind,
    fallback: String,
) -> Vec<Diagnostic> {
    let src = &doc.source;
    let (place, subjects) = describe_place(pointer);
    let with_subjects = |mut d: Diagnostic| {
        d.subjects.extend(subjects.iter().cloned());
        d
    };
    let here = src.span_of(pointer);
    let value = lookup(&doc.value, pointer);
    if inside_user_schema(pointer) {
        let (owner, _) = describe_place(&schema_owner(pointer));
        const TYPES: [&str; 7] = [
            "array", "boolean", "integer", "null", "number", "object", "string",
        ];
        if pointer.last().as_deref() == Some("type")
            && let Some(t) = value.and_then(Value::as_str)
            && !TYPES.contains(&t)
        {
            let mut d = Diagnostic::error(
                Code::InvalidSchema,
                format!("{owner} is not a valid JSON Schema: `{t}` is not a JSON Schema type"),
            )
            .at(pointer.clone(), here);
            d = match closest(t, TYPES.into_iter()) {
                Some(c) => d.help(format!("did you mean \"{c}\"?")),
                None => d.help(format!("the types are {}", TYPES.join(", "))),
            };
            return vec![with_subjects(d)];
        }
        return vec![with_subjects(
            Diagnostic::error(
                Code::InvalidSchema,
                format!("{owner} is not a valid JSON Schema: {fallback}"),
            )
            .at(pointer.clone(), here),
        )];
    }
    match kind {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let mut known_at = schema_path.clone();
            known_at.pop();
            known_at.push("properties");
            let known: Vec<String> = lookup(schema, &known_at)
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            unexpected
                .iter()
                .map(|key| {
                    let at = pointer.child(key);
                    let mut d = Diagnostic::error(
                        Code::UnknownKey,
                        format!("unknown key `{key}` in {place}"),
                    )
                    .at(at.clone(), src.key_span_of(&at));
                    d = match closest(key, known.iter().map(String::as_str)) {
                        Some(k) => d.help(format!("did you mean `{k}`?")),
                        None => d.help(format!(
                            "known keys here: {}; keys starting with `x-` are kept and ignored",
                            known
                                .iter()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                    };
                    with_subjects(d)
                })
                .collect()
        }
        ValidationErrorKind::Required { property } => {
            let key = property.as_str().unwrap_or_default();
            vec![with_subjects(
                Diagnostic::error(
                    Code::MissingKey,
                    format!("{place} lacks the required key `{key}`"),
                )
                .at(pointer.clone(), here),
            )]
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => type_name(&t.to_string()),
                TypeKind::Multiple(ts) => ts
                    .iter()
                    .map(|t| type_name(&t.to_string()))
                    .filter(|t| t != "null")
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            let found = value.map_or("nothing", json_kind);
            vec![with_subjects(
                Diagnostic::error(
                    Code::WrongType,
                    format!("wrong value type for {place}: expected {expected}, found {found}"),
                )
                .at(pointer.clone(), here),
            )]
        }
        ValidationErrorKind::Enum { options } => {
            let opts: Vec<String> = options
                .as_array()
                .map(|a| a.iter().map(|o| o.to_string()).collect())
                .unwrap_or_default();
            let got = value.map(Value::to_string).unwrap_or_default();
            let mut d = Diagnostic::error(
                Code::InvalidValue,
                format!(
                    "{got} is not a valid value for {place}: expected one of {}",
                    opts.join(", ")
                ),
            )
            .at(pointer.clone(), here);
            if let Some(s) = value.and_then(Value::as_str) {
                let names: Vec<&str> = options
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let Some(c) = closest(s, names.into_iter()) {
                    d = d.help(format!("did you mean \"{c}\"?"));
                }
            }
            vec![with_subjects(d)]
        }
        ValidationErrorKind::AnyOf { .. }
        | ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. } => {
            let got = value.map(Value::to_string).unwrap_or_default();
            let seg: Vec<String> = pointer.segments().collect();
            let consts = constant_options(schema, schema_path);
            let d = if let Some(opts) = consts {
                let shown: Vec<String> = opts.iter().map(|o| format!("\"{o}\"")).collect();
                let mut d = Diagnostic::error(
                    Code::InvalidValue,
                    format!(
                        "{got} is not a valid value for {place}: expected one of {}",
                        shown.join(", ")
                    ),
                )
                .at(pointer.clone(), here);
                if let Some(s) = value.and_then(Value::as_str)
                    && let Some(c) = closest(s, opts.iter().map(String::as_str))
                {
                    d = d.help(format!("did you mean \"{c}\"?"));
                }
                d
            } else if seg.len() == 4 && seg[0] == "resolvers" && seg[2] == "params" {
                let mut d = Diagnostic::error(
                    Code::InvalidParamSource,
                    format!(
                        "{place} is {got}, which is none of the kinds of source: \"arg\", \"context\", \"principal\" or {{\"resolver\": \"<name>\"}}"
                    ),
                )
                .at(pointer.clone(), here);
                if let Some(s) = value.and_then(Value::as_str)
                    && let Some(c) = closest(s, ["arg", "context", "principal"].into_iter())
                {
                    d = d.help(format!("did you mean \"{c}\"?"));
                }
                d
            } else if seg.len() == 4 && seg[0] == "tools" && seg[2] == "resolve" {
                Diagnostic::error(
                    Code::InvalidBinding,
                    format!(
                        "{place} is {got}; a binding is a resolver name or {{\"resolver\": \"<name>\", \"outcome\": true|false}}"
                    ),
                )
                .at(pointer.clone(), here)
            } else {
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("invalid value for {place}: {fallback}"),
                )
                .at(pointer.clone(), here)
            };
            vec![with_subjects(d)]
        }
        _ => vec![with_subjects(
            Diagnostic::error(
                Code::InvalidValue,
                format!("invalid value for {place}: {fallback}"),
            )
            .at(pointer.clone(), here),
        )],
    }
}

/// When the format schema at `schema_path` (an `anyOf`/`oneOf`) only lists string constants,
/// those constants.
fn constant_options(schema: &Value, schema_path: &Pointer) -> Option<Vec<String>> {
    let alts = lookup(schema, schema_path)?.as_array()?;
    let mut out = Vec::new();
    for alt in alts {
        let alt = match alt.get("$ref").and_then(Value::as_str) {
            Some(r) => schema.pointer(r.strip_prefix('#')?)?,
            None => alt,
        };
        if let Some(c) = alt.get("const").and_then(Value::as_str) {
            out.push(c.to_string());
        } else if let Some(e) = alt.get("enum").and_then(Value::as_array) {
            out.extend(e.iter().filter_map(Value::as_str).map(String::from));
        } else {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The pointer of the user schema (tool input/output, resolver returns, a $defs entry) that
/// contains `pointer`.
fn schema_owner(pointer: &Pointer) -> Pointer {
    let seg: Vec<String> = pointer.segments().collect();
    let n = if seg.first().map(String::as_str) == Some("$defs") {
        2
    } else {
        3
    };
    Pointer::from_segments(seg.into_iter().take(n))
}

fn type_name(t: &str) -> String {
    match t {
        "object" => "an object".into(),
        "array" => "an array".into(),
        "string" => "a string".into(),
        "boolean" => "a boolean".into(),
        "integer" => "an integer".into(),
        "number" => "a number".into(),
        other => other.into(),
    }
}

/// [`format_schema`] as pretty JSON with a final newline, as `mcpgen schema` prints it and as
/// `schema/spec-v1.json` keeps it.
pub fn format_schema_text() -> String {
    serde_json::to_string_pretty(&format_schema()).expect("a JSON value serializes") + "\n"
}
