//! The Rust integer type a JSON Schema `"type": "integer"` gets from the type generator, and
//! whether the schema's bounds let through integers beyond it. Typing (`emit::typing`: such an
//! integer is typed `serde_json::Value`) and the resolver graph (`graph::arg_type`: a resolver
//! then receives that value) ask the same question; this module answers it once.

use serde_json::{Map, Value};

/// For a `"type": "integer"` whose stated bounds reach beyond the Rust integer type typify
/// gives it (`i64`, or `u64` / `NonZeroU64` from a minimum of 0 or 1), that type and its
/// range. Without a bound past that range the type is kept (an unbounded integer is `i64`).
pub fn integer_beyond(m: &Map<String, Value>) -> Option<(&'static str, String, String)> {
    if m.get("type").and_then(Value::as_str) != Some("integer") {
        return None;
    }
    // The bounds as the least and greatest integer allowed (exact for integer bounds).
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
    // typify's choice (typify-impl `convert_integer`): unsigned for a minimum of 1, or of 0
    // with no maximum or the maximum of `u64`; `i64` otherwise (narrower types only for
    // bounds equal to their range, which lie inside).
    let u64_max = i128::from(u64::MAX);
    let unsigned = lo == Some(1) || (lo == Some(0) && hi.is_none_or(|h| h == u64_max));
    let (rust, min, max) = if unsigned {
        ("u64", 0, u64_max)
    } else {
        ("i64", i128::from(i64::MIN), i128::from(i64::MAX))
    };
    let beyond = lo.is_some_and(|l| l < min) || hi.is_some_and(|h| h > max);
    beyond.then(|| (rust, min.to_string(), max.to_string()))
}
