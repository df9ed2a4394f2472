//! How the runtime enforces a JSON Schema: tool inputs, tool results (in debug builds) and
//! elicitation answers are all checked by validators compiled here, as JSON Schema 2020-12
//! documents with `format` asserted (`email`, `uri`, `uuid`, `date-time`, ...: a value that is
//! not one is a violation, as JSON Schema's format-assertion vocabulary and the Python SDK's
//! pydantic models do), and their violations are written here.

use serde_json::Value;

/// Compiles `schema` (a JSON Schema document that stands alone: every `$ref` resolves inside
/// it; 2020-12 unless its `$schema` names another draft) with format assertion on.
pub(crate) fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// Every way `instance` violates `validator`'s schema, one line each: the JSON pointer of the
/// offending value (`(root)` for the whole value), the keyword it fails and what is wrong with
/// it: `/limit (maximum): 99 is greater than the maximum of 50`.
///
/// A value that no branch of an `anyOf` or `oneOf` takes, but whose type only one branch admits
/// (`anyOf [{"type": "string", "format": "time"}, {"type": "null"}]`, as pydantic writes an
/// optional field), gets that branch's own violations (`/not_before (format): "9am" is not a
/// "time"`), not the combinator's. A value longer than [`SHOWN`] characters is shown cut, with
/// its length.
///
/// The lines are in the order of their pointers (segment by segment, array indices as numbers;
/// the validator's order among those of one value): the validator walks objects in the order of
/// serde_json's maps, which is sorted or the documents' order depending on whether some crate in
/// the build enables serde_json's `preserve_order`, and the answer must not depend on that.
pub(crate) fn violations(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for e in validator.iter_errors(instance) {
        lines(&e, &mut found);
    }
    found.sort_by(|(a, _), (b, _)| pointer_order(a, b));
    found.into_iter().map(|(_, line)| line).collect()
}

/// How many characters of an offending value a violation shows.
pub(crate) const SHOWN: usize = 80;

/// The lines of one violation (see [`violations`]), with their pointers.
fn lines(e: &jsonschema::ValidationError<'_>, out: &mut Vec<(String, String)>) {
    use jsonschema::error::ValidationErrorKind;
    let path = e.instance_path().to_string();
    if let ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } =
        e.kind()
    {
        // The branches whose own `type` takes the value (no type violation at its place).
        let typed: Vec<_> = context
            .iter()
            .filter(|branch| {
                !branch.iter().any(|b| {
                    matches!(b.kind(), ValidationErrorKind::Type { .. })
                        && b.instance_path().to_string() == path
                })
            })
            .collect();
        if let [branch] = typed.as_slice()
            && !branch.is_empty()
        {
            for inner in branch.iter() {
                lines(inner, out);
            }
            return;
        }
    }
    let mut message = e.to_string();
    let shown = e.instance().to_string();
    let length = shown.chars().count();
    if length > SHOWN {
        let cut: String = shown.chars().take(SHOWN).collect();
        message = message.replacen(&shown, &format!("{cut}... ({length} characters)"), 1);
    }
    let line = format!(
        "{} ({}): {message}",
        if path.is_empty() { "(root)" } else { &path },
        e.kind().keyword()
    );
    out.push((path, line));
}

/// The order of two JSON pointers: segment by segment, a prefix first, two array indices (all
/// digits) as numbers.
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
