//! How the runtime enforces a JSON Schema: tool inputs, tool results (in debug builds) and
//! elicitation answers are all checked by validators compiled here, as JSON Schema 2020-12
//! documents with `format` asserted (`email`, `uri`, `uuid`, `date-time`, ...: a value that is
//! not one is a violation, as JSON Schema's format-assertion vocabulary and the Python SDK's
//! pydantic models do), and their violations are written here.

use serde_json::Value;

/// Compiles `schema` (a JSON Schema document that stands alone: every `$ref` resolves inside
/// it; 2020-12 unless its `$schema` names another draft) with format assertion on.
pub(super) fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Every way `instance` violates `validator`'s schema, one line each: the JSON pointer of the
/// offending value (`(root)` for the whole value), the keyword it fails and what is wrong with
/// it: `/limit (maximum): 99 is greater than the maximum of 50`.
pub(super) fn violations(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "(root)".to_string()
            } else {
                path
            };
            format!("{path} ({}): {e}", e.kind().keyword())
        })
        .collect()
}
