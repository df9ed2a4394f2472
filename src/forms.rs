//! The one rule for "is this schema a flat elicitation form": an object whose every property is
//! an MCP `PrimitiveSchemaDefinition` (string, number, integer, boolean, or one of the four enum
//! shapes), written inline or as a `$ref` to a spec `$defs` type that is one. Validation reports
//! why a form is not flat ([`crate::validate`]); the emitter asks it of every `$defs` type to
//! decide which can be asked for with a form; the `requestedSchema` sent is then
//! [`crate::model::wire::form_document`], which inlines each property's one `$ref`.
//!
//! MCP's elicitation schema (2025-11-25 and 2026-07-28) allows, per property: a string
//! (`minLength`, `maxLength`, `format` one of [`FORM_FORMATS`]), a number or integer (`minimum`, `maximum`), a boolean,
//! or an enum: `{"type": "string", "enum": [..]}` (with the legacy `enumNames`),
//! `{"type": "string", "oneOf": [{"const", "title"}, ..]}`,
//! `{"type": "array", "items": {"type": "string", "enum": [..]}}` and
//! `{"type": "array", "items": {"anyOf": [{"const", "title"}, ..]}}`. Nothing else: no nested
//! objects, unions, combinations, or references (a form carries no `$defs`).

use indexmap::IndexMap;
use serde_json::Value;

/// One field of a flat form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field<'a> {
    /// Its property name.
    pub name: &'a str,
    /// Its schema as written (perhaps a `$ref`).
    pub schema: &'a Value,
    /// The primitive schema it is: the written one, or the `$defs` type its `$ref` names.
    pub primitive: &'a Value,
}

/// Why a schema is not a flat form.
#[derive(Debug, Clone, PartialEq)]
pub enum NotFlat<'a> {
    /// It is not an object schema with `properties`.
    NotObject,
    /// These fields (in property order, at least one) are not primitives.
    Fields(Vec<FieldProblem<'a>>),
}

/// A field that is not a primitive.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldProblem<'a> {
    /// Its property name.
    pub name: &'a str,
    /// Its schema as written.
    pub schema: &'a Value,
    /// What is wrong with it.
    pub problem: Problem,
}

/// What keeps a field from being a primitive.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A `$ref` that names no `$defs` type of the spec (`unresolved-ref` or `unsupported-ref`
    /// reports it).
    Unresolved,
    /// Any other schema: what it is, worded to follow "the field is", e.g. "a nested object".
    NotPrimitive(String),
}

/// The fields of `schema` when it is a flat form (`defs`: the spec's `$defs`, which a field's
/// `$ref` may name), or why it is not.
pub fn flat_form<'a>(
    defs: &'a IndexMap<String, Value>,
    schema: &'a Value,
) -> Result<Vec<Field<'a>>, NotFlat<'a>> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(NotFlat::NotObject);
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Err(NotFlat::NotObject);
    };
    let mut fields = Vec::new();
    let mut problems = Vec::new();
    for (name, schema) in props {
        match field(defs, schema) {
            Ok(primitive) => fields.push(Field {
                name,
                schema,
                primitive,
            }),
            Err(problem) => problems.push(FieldProblem {
                name,
                schema,
                problem,
            }),
        }
    }
    if problems.is_empty() {
        Ok(fields)
    } else {
        Err(NotFlat::Fields(problems))
    }
}

/// True when `schema` is a flat form ([`flat_form`]).
pub fn is_flat_form(defs: &IndexMap<String, Value>, schema: &Value) -> bool {
    flat_form(defs, schema).is_ok()
}

/// The primitive schema a field is, following its one `$ref`, or why it is none.
fn field<'a>(defs: &'a IndexMap<String, Value>, schema: &'a Value) -> Result<&'a Value, Problem> {
    let Some(r) = schema.get("$ref").and_then(Value::as_str) else {
        return primitive_problem(schema).map_or(Ok(schema), |p| Err(Problem::NotPrimitive(p)));
    };
    let Some(target) = r.strip_prefix("#/$defs/").and_then(|n| defs.get(n)) else {
        return Err(Problem::Unresolved);
    };
    if target.get("type").and_then(Value::as_str) == Some("object") {
        return Err(Problem::NotPrimitive(format!(
            "a reference to an object (`{r}`)"
        )));
    }
    // The form is sent with each field's reference inlined, once; a reference there would
    // dangle (the form has no `$defs`).
    if target.get("$ref").is_some() {
        return Err(Problem::NotPrimitive(format!(
            "a reference (`{r}`) to another reference"
        )));
    }
    primitive_problem(target).map_or(Ok(target), |p| Err(Problem::NotPrimitive(p)))
}

/// Why `schema` (a field's own, or the `$defs` type its `$ref` names) is not a
/// `PrimitiveSchemaDefinition`, if it is not.
fn primitive_problem(schema: &Value) -> Option<String> {
    for k in ["anyOf", "allOf", "not", "if"] {
        if schema.get(k).is_some() {
            return Some(format!("a union or combination (`{k}`)"));
        }
    }
    match schema.get("type") {
        Some(Value::String(t)) => typed_problem(schema, t),
        Some(Value::Array(_)) => Some("a union of types".into()),
        Some(_) => Some("of an invalid type".into()),
        None if schema.get("enum").is_some() => None,
        None if schema.get("oneOf").is_some() => Some("a union (`oneOf`)".into()),
        None => Some("untyped".into()),
    }
}

/// Why `schema` of type `t` is not a primitive, if it is not.
fn typed_problem(schema: &Value, t: &str) -> Option<String> {
    let all_const = |v: Option<&Value>| {
        v.and_then(Value::as_array)
            .is_some_and(|a| a.iter().all(|o| o.get("const").is_some()))
    };
    match t {
        "string" | "number" | "integer" | "boolean" => match schema.get("oneOf") {
            Some(one) if !all_const(Some(one)) => Some("a union (`oneOf` of non-constants)".into()),
            _ if t == "string" => format_problem(schema),
            _ => None,
        },
        "object" => Some("a nested object".into()),
        "array" => {
            let items = schema.get("items");
            let enum_items =
                items.is_some_and(|i| i.get("enum").is_some() || all_const(i.get("anyOf")));
            (!enum_items).then(|| "an array of non-enum items".to_string())
        }
        other => Some(format!("of type `{other}`")),
    }
}

/// The string formats a form field may have.
pub const FORM_FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

/// Why a string schema's `format` is none a form offers, if it is not.
fn format_problem(schema: &Value) -> Option<String> {
    let format = schema.get("format")?;
    if format.as_str().is_some_and(|f| FORM_FORMATS.contains(&f)) {
        return None;
    }
    Some(format!(
        "a string of format {format} (a form's string formats are `email`, `uri`, `date` and `date-time`)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defs() -> IndexMap<String, Value> {
        [
            ("Color", json!({"type": "string", "enum": ["red", "green"]})),
            ("Shade", json!({"$ref": "#/$defs/Color"})),
            ("Address", json!({"type": "object", "properties": {}})),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn problems(field: Value) -> Vec<Problem> {
        let defs = defs();
        let form = json!({"type": "object", "properties": {"f": field}});
        match flat_form(&defs, &form) {
            Ok(_) => vec![],
            Err(NotFlat::NotObject) => panic!("an object"),
            Err(NotFlat::Fields(p)) => p.into_iter().map(|p| p.problem).collect(),
        }
    }

    fn not(text: &str) -> Vec<Problem> {
        vec![Problem::NotPrimitive(text.to_string())]
    }

    #[test]
    fn every_primitive_shape_of_mcp_is_a_field() {
        for field in [
            json!({"type": "string", "minLength": 1, "maxLength": 9, "format": "email"}),
            json!({"type": "string", "format": "uri"}),
            json!({"type": "string", "format": "date"}),
            json!({"type": "string", "format": "date-time"}),
            json!({"type": "number", "minimum": 0}),
            json!({"type": "integer", "maximum": 9}),
            json!({"type": "boolean", "default": true}),
            json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}),
            json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]}),
            json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}),
            json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}),
            json!({"$ref": "#/$defs/Color", "description": "kept"}),
        ] {
            assert_eq!(problems(field.clone()), vec![], "{field}");
        }
    }

    #[test]
    fn the_fields_of_a_flat_form_are_its_primitives() {
        let defs = defs();
        let form = json!({"type": "object", "properties": {
            "a": {"type": "boolean"}, "c": {"$ref": "#/$defs/Color"}}});
        let fields = flat_form(&defs, &form).unwrap();
        assert_eq!(fields.len(), 2);
        assert_eq!(
            (fields[0].name, fields[0].primitive),
            ("a", &form["properties"]["a"])
        );
        assert_eq!((fields[1].name, fields[1].primitive), ("c", &defs["Color"]));
        assert_eq!(fields[1].schema, &json!({"$ref": "#/$defs/Color"}));
    }

    #[test]
    fn anything_else_is_named() {
        let cases = [
            (
                json!({"$ref": "#/$defs/Address"}),
                "a reference to an object (`#/$defs/Address`)",
            ),
            (
                json!({"$ref": "#/$defs/Shade"}),
                "a reference (`#/$defs/Shade`) to another reference",
            ),
            (
                json!({"type": "string", "anyOf": [{"minLength": 1}]}),
                "a union or combination (`anyOf`)",
            ),
            (
                json!({"type": "integer", "not": {"const": 0}}),
                "a union or combination (`not`)",
            ),
            (
                json!({"type": "string", "oneOf": [{"const": "a"}, {"minLength": 2}]}),
                "a union (`oneOf` of non-constants)",
            ),
            (
                json!({"type": "array", "items": {"type": "string"}}),
                "an array of non-enum items",
            ),
            (
                json!({"type": "array", "items": {"anyOf": [{"const": "a"}, {"type": "string"}]}}),
                "an array of non-enum items",
            ),
            (json!({"type": "object"}), "a nested object"),
            (json!({"type": "null"}), "of type `null`"),
            (
                json!({"type": "string", "format": "uuid"}),
                "a string of format \"uuid\" (a form's string formats are `email`, `uri`, `date` and `date-time`)",
            ),
            (json!({"type": ["string", "null"]}), "a union of types"),
            (json!({"type": 3}), "of an invalid type"),
            (json!({"oneOf": [{"const": 1}]}), "a union (`oneOf`)"),
            (json!({}), "untyped"),
        ];
        for (field, text) in cases {
            assert_eq!(problems(field.clone()), not(text), "{field}");
        }
        assert_eq!(
            problems(json!({"$ref": "#/$defs/Nope"})),
            vec![Problem::Unresolved]
        );
        assert_eq!(
            problems(json!({"$ref": "other.json"})),
            vec![Problem::Unresolved]
        );
    }

    #[test]
    fn a_form_is_an_object_with_properties() {
        let defs = defs();
        for schema in [
            json!({"type": "object"}),
            json!({"type": "string"}),
            json!({"$ref": "#/$defs/Address"}),
        ] {
            assert_eq!(
                flat_form(&defs, &schema),
                Err(NotFlat::NotObject),
                "{schema}"
            );
        }
        assert!(is_flat_form(
            &defs,
            &json!({"type": "object", "properties": {}})
        ));
    }
}
