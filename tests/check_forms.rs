//! One flat-form rule (`mcpgen::forms`) for validation and generation: a schema validation
//! accepts as an `elicit` resolver's form is exactly one the generated code can ask for with a
//! form (`impl Form`), over MCP's primitive shapes and the shapes it refuses; and the cases where
//! the two used to disagree.

use mcpgen::check::check_str;
use mcpgen::emit::module::generated_module;
use serde_json::{Value, json};

/// `$defs` every spec here has: an enum, a reference to it, an object.
fn defs() -> Value {
    json!({
        "Color": {"type": "string", "enum": ["red", "green"]},
        "Shade": {"$ref": "#/$defs/Color"},
        "Address": {"type": "object", "properties": {"city": {"type": "string"}}}
    })
}

/// A spec whose resolver `ask` asks `elicit` with the form `{"f": field}`.
fn elicit_spec(field: &Value) -> String {
    json!({
        "name": "forms",
        "version": "1.0.0",
        "$defs": defs(),
        "tools": {"go": {"description": "Goes.", "resolve": {"answer": "ask"}}},
        "resolvers": {"ask": {
            "asks": "elicit",
            "params": {"ctx": "context"},
            "returns": {"type": "object", "properties": {"f": field}}
        }}
    })
    .to_string()
}

/// A spec with the `$defs` object `Candidate` `{"f": field}`, which nothing asks for.
fn def_spec(field: &Value) -> String {
    let mut defs = defs();
    defs["Candidate"] = json!({"type": "object", "properties": {"f": field}});
    json!({
        "name": "forms",
        "version": "1.0.0",
        "$defs": defs,
        "tools": {"go": {"description": "Goes.", "input": {"type": "object", "properties": {"c": {"$ref": "#/$defs/Candidate"}}}}}
    })
    .to_string()
}

/// The `impl Form for ...` lines of the generated module of `spec`.
fn forms_offered(spec: &str) -> Vec<String> {
    let checked = check_str("spec.json", spec).unwrap_or_else(|r| panic!("{}", r.render_human()));
    let module = generated_module(&checked.model, &checked.types).unwrap();
    module
        .lines()
        .filter(|l| l.starts_with("impl Form for "))
        .map(str::to_string)
        .collect()
}

/// The error messages of checking `spec`.
fn errors(spec: &str) -> Vec<String> {
    match check_str("spec.json", spec) {
        Ok(_) => vec![],
        Err(r) => r
            .errors()
            .map(|d| format!("{}: {}", d.code, d.message))
            .collect(),
    }
}

#[test]
fn validation_accepts_exactly_the_forms_generation_offers() {
    let accepted = [
        json!({"type": "string", "maxLength": 9, "format": "email"}),
        json!({"type": "string", "format": "date-time"}),
        json!({"type": "integer", "minimum": 0}),
        json!({"type": "number"}),
        json!({"type": "boolean"}),
        json!({"type": "string", "enum": ["a", "b"]}),
        json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
        json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
        json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
        json!({"$ref": "#/$defs/Color"}),
    ];
    let refused = [
        json!({"$ref": "#/$defs/Shade"}),
        json!({"$ref": "#/$defs/Address"}),
        json!({"type": "string", "anyOf": [{"format": "email"}, {"maxLength": 0}]}),
        json!({"type": "string", "oneOf": [{"const": "a"}, {"minLength": 2}]}),
        json!({"type": "array", "items": {"anyOf": [{"const": "a"}, {"type": "string"}]}}),
        json!({"type": "array", "items": {"type": "string"}}),
        json!({"type": "object", "properties": {}}),
        json!({"type": ["string", "null"]}),
        json!({"type": "string", "format": "uuid"}),
    ];
    for field in &accepted {
        assert_eq!(errors(&elicit_spec(field)), Vec::<String>::new(), "{field}");
        assert!(
            forms_offered(&def_spec(field)).contains(&"impl Form for types::Candidate {".into()),
            "{field}"
        );
    }
    for field in &refused {
        let errs = errors(&elicit_spec(field));
        assert_eq!(errs.len(), 1, "{field}: {errs:?}");
        assert!(
            errs[0].starts_with("elicit-non-primitive: "),
            "{field}: {errs:?}"
        );
        assert!(
            !forms_offered(&def_spec(field)).contains(&"impl Form for types::Candidate {".into()),
            "{field}"
        );
    }
}

/// Validation used to follow a chain of references, but the form is sent with one reference
/// inlined: the `requestedSchema` carried `{"$ref": "#/$defs/Color"}` and no `$defs`.
#[test]
fn a_field_referring_to_a_reference_is_refused() {
    assert_eq!(
        errors(&elicit_spec(&json!({"$ref": "#/$defs/Shade"}))),
        vec![
            "elicit-non-primitive: elicitation form of resolver `ask`: field `f` is a reference (`#/$defs/Shade`) to another reference, which is not a primitive (string, number, integer, boolean or enum)"
        ]
    );
}

/// The emitter used to accept a primitive with `anyOf`, a `oneOf` of non-constants and `anyOf`
/// items that are not all constants: a `$defs` object with such a field could be asked for in
/// code, with a `requestedSchema` MCP clients refuse.
#[test]
fn a_defs_object_with_a_union_field_is_no_form() {
    let spec =
        def_spec(&json!({"type": "string", "anyOf": [{"format": "email"}, {"maxLength": 0}]}));
    let mut spec: Value = serde_json::from_str(&spec).unwrap();
    spec["$defs"]["Confirm"] = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    assert_eq!(
        forms_offered(&spec.to_string()),
        // `Address` (one string field) is a form too; `Candidate` is not.
        vec![
            "impl Form for types::Address {",
            "impl Form for types::Confirm {"
        ]
    );
}
