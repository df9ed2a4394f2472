//! The Rust integer type a JSON Schema `"type": "integer"` gets from the type generator, and
//! whether the schema's bounds let through integers beyond it. Typing (`emit::typing`: such an
//! integer is typed `serde_json::Value`) and the resolver graph (`graph::arg_type`: a resolver
//! then receives that value) ask the same question; this module answers it once.
//!
//! An integer that is typed as a Rust integer holds only that type's range, so the documents a
//! server advertises for its inputs state that range ([`bound_to_rust`]): the advertised schema
//! decides acceptance, and the typed layer never refuses what it accepts (`2^63` for an
//! unbounded `integer`, which is `i64`, is a `maximum` violation named by its pointer, not a
//! failed conversion).

use serde_json::{Map, Value};

/// For a `"type": "integer"` whose stated bounds reach beyond the Rust integer type typify
/// gives it (`i64`, or `u64` / `NonZeroU64` from a minimum of 0 or 1), that type and its
/// range. Without a bound past that range the type is kept (an unbounded integer is `i64`).
pub fn integer_beyond(m: &Map<String, Value>) -> Option<(&'static str, String, String)> {
    if m.get("type").and_then(Value::as_str) != Some("integer") {
        return None;
    }
    let (lo, hi) = bounds(m);
    let (rust, min, max) = typify_range(m, lo, hi);
    let beyond = lo.is_some_and(|l| l < min) || hi.is_some_and(|h| h > max);
    beyond.then(|| (rust, min.to_string(), max.to_string()))
}

/// The least and greatest integer the schema's bounds allow (exact for integer bounds).
fn bounds(m: &Map<String, Value>) -> (Option<i128>, Option<i128>) {
    let int = |k: &str, up: bool| -> Option<i128> {
        let n = m.get(k)?.as_number()?;
        if let Some(i) = n.as_i64() {
            return Some(i.into());
        }
        if let Some(u) = n.as_u64() {
            return Some(u.into());
        }
        let f = n.as_f64()?;
        // Saturating casts: a bound past `i128` is past every Rust integer type.
        Some(if up {
            f.ceil() as i128
        } else {
            f.floor() as i128
        })
    };
    let lo = match (int("minimum", true), int("exclusiveMinimum", false)) {
        (Some(a), Some(b)) => Some(a.max(b + 1)),
        (a, b) => a.or(b.map(|b| b + 1)),
    };
    let hi = match (int("maximum", false), int("exclusiveMaximum", true)) {
        (Some(a), Some(b)) => Some(a.min(b - 1)),
        (a, b) => a.or(b.map(|b| b - 1)),
    };
    (lo, hi)
}

/// The integer formats the type generator maps to a Rust type of their own, with its range
/// (typify-impl `convert_integer`), when the schema's bounds lie inside it.
const FORMATS: [(&str, &str, i128, i128); 10] = [
    ("int8", "i8", i8::MIN as i128, i8::MAX as i128),
    ("uint8", "u8", 0, u8::MAX as i128),
    ("int16", "i16", i16::MIN as i128, i16::MAX as i128),
    ("uint16", "u16", 0, u16::MAX as i128),
    ("int", "i32", i32::MIN as i128, i32::MAX as i128),
    ("int32", "i32", i32::MIN as i128, i32::MAX as i128),
    ("uint", "u32", 0, u32::MAX as i128),
    ("uint32", "u32", 0, u32::MAX as i128),
    ("int64", "i64", i64::MIN as i128, i64::MAX as i128),
    ("uint64", "u64", 0, u64::MAX as i128),
];

/// typify's choice of Rust integer type for an integer schema with bounds `lo`..`hi`, and that
/// type's range: a `format` of [`FORMATS`] whose range holds the bounds (no `multipleOf`);
/// else unsigned for a minimum of 1, or of 0 with no maximum or the maximum of `u64`; `i64`
/// otherwise (narrower types only for bounds equal to their range, which lie inside).
fn typify_range(
    m: &Map<String, Value>,
    lo: Option<i128>,
    hi: Option<i128>,
) -> (&'static str, i128, i128) {
    let format = m.get("format").and_then(Value::as_str);
    if let Some(&(_, rust, min, max)) = FORMATS.iter().find(|f| Some(f.0) == format)
        && m.get("multipleOf").is_none()
        && lo.is_none_or(|l| l >= min)
        && hi.is_none_or(|h| h <= max)
    {
        return (rust, min, max);
    }
    let u64_max = i128::from(u64::MAX);
    let unsigned = lo == Some(1) || (lo == Some(0) && hi.is_none_or(|h| h == u64_max));
    if unsigned {
        ("u64", 0, u64_max)
    } else {
        ("i64", i128::from(i64::MIN), i128::from(i64::MAX))
    }
}

/// Whether `m` is an integer schema that is typed as a Rust integer: `"type": "integer"` (or a
/// list of types whose only number type is `integer`, as `["integer", "null"]`), within its
/// Rust type's range or unbounded.
fn typed_as_rust_integer(m: &Map<String, Value>) -> bool {
    let integer = match m.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(ts)) => {
            ts.iter().any(|t| t == "integer") && !ts.iter().any(|t| t == "number")
        }
        _ => false,
    };
    integer && integer_beyond(m).is_none()
}

/// Adds to every integer sub-schema of `doc` that is typed as a Rust integer the bounds of that
/// type where its own are absent: what the typed layer can hold is what the document accepts.
pub fn bound_to_rust(doc: &mut Value) {
    match doc {
        Value::Object(m) => {
            if typed_as_rust_integer(m) {
                let (lo, hi) = bounds(m);
                let (_, min, max) = typify_range(m, lo, hi);
                if lo.is_none() {
                    m.insert("minimum".into(), number(min));
                }
                if hi.is_none() {
                    m.insert("maximum".into(), number(max));
                }
            }
            crate::refs::each_schema_child_mut(m, bound_to_rust);
        }
        Value::Array(a) => a.iter_mut().for_each(bound_to_rust),
        _ => {}
    }
}

/// `n` as a JSON number (every range of [`typify_range`] lies within `i64` or `u64`).
fn number(n: i128) -> Value {
    match (i64::try_from(n), u64::try_from(n)) {
        (Ok(i), _) => Value::from(i),
        (_, Ok(u)) => Value::from(u),
        _ => Value::from(n as f64),
    }
}
