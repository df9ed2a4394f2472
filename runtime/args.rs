//! A tool's arguments on their way in: validation against the advertised input schema, then
//! deserialization into the typed struct ([`parse`]), and conversions from typed argument fields
//! to resolver parameters ([`int_arg`]).
//!
//! The input schema alone decides acceptance: every violation is reported, each with its JSON
//! pointer and keyword; a value it accepts is normalised ([`normalize_numbers`]) so that the
//! typed struct takes it (JSON Schema counts `1.0` as an integer; serde's `i64` does not).
//!
//! A resolver that takes a tool argument (`"arg"` in the spec) receives the plain Rust type of
//! its JSON type (`&str`, `i64`, `f64`, `bool`), whatever constraints each consuming tool puts
//! on it. typify represents a constrained integer with the narrowest fitting type (`u8`,
//! `NonZeroU64`, ...); [`int_arg`] widens any of them back to `i64`. The value was validated
//! against the tool's schema before, so it fits.

use serde::de::DeserializeOwned;
use serde_json::Value;

use std::num::{
    NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64,
};

/// An integer argument type typify may generate.
pub trait IntArg: Copy {
    /// The value as `i64` (saturating, though validated values always fit).
    fn to_i64(self) -> i64;
}

macro_rules! int_arg {
    ($($t:ty => |$v:ident| $e:expr),* $(,)?) => {
        $(impl IntArg for $t {
            fn to_i64(self) -> i64 {
                let $v = self;
                $e
            }
        })*
    };
}

int_arg! {
    i8 => |v| i64::from(v), i16 => |v| i64::from(v), i32 => |v| i64::from(v), i64 => |v| v,
    u8 => |v| i64::from(v), u16 => |v| i64::from(v), u32 => |v| i64::from(v),
    u64 => |v| i64::try_from(v).unwrap_or(i64::MAX),
    NonZeroI8 => |v| i64::from(v.get()), NonZeroI16 => |v| i64::from(v.get()),
    NonZeroI32 => |v| i64::from(v.get()), NonZeroI64 => |v| v.get(),
    NonZeroU8 => |v| i64::from(v.get()), NonZeroU16 => |v| i64::from(v.get()),
    NonZeroU32 => |v| i64::from(v.get()),
    NonZeroU64 => |v| i64::try_from(v.get()).unwrap_or(i64::MAX),
}

/// An integer argument as the `i64` a resolver takes.
pub fn int_arg(value: impl IntArg) -> i64 {
    value.to_i64()
}

/// Validates `arguments` against `validator` and deserializes them into `A`.
///
/// `Err` carries the text of the `isError` result: one line per violation,
/// `<instance pointer> (<keyword>): <message>` (the root's pointer written `(root)`), e.g.
/// `/limit (maximum): 99 is greater than the maximum of 50`.
pub(super) fn parse<A: DeserializeOwned>(
    validator: &jsonschema::Validator,
    arguments: &Value,
) -> Result<A, String> {
    let violations: Vec<String> = validator
        .iter_errors(arguments)
        .map(|e| {
            let path = e.instance_path().to_string();
            let path = if path.is_empty() {
                "(root)".to_string()
            } else {
                path
            };
            format!("{path} ({}): {e}", e.kind().keyword())
        })
        .collect();
    if !violations.is_empty() {
        return Err(violations.join("\n"));
    }
    let mut value = arguments.clone();
    normalize_numbers(&mut value);
    // The generated types accept every value the schema accepts; a failure here is a bug of
    // the generator, reported as such rather than as the caller's fault.
    A::deserialize(value).map_err(|e| {
        tracing::error!("arguments valid by the schema do not fit the typed struct: {e}");
        format!("the arguments are valid but could not be converted: {e}")
    })
}

/// Rewrites every number with a zero fraction that fits `i64` or `u64` (`1.0`, `-3e2`) as that
/// integer, so integer fields take it; a float field takes an integer as well.
pub fn normalize_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
            {
                // The casts saturate; the range checks keep only exact conversions.
                if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
                    *value = Value::from(f as i64);
                } else if (0.0..18_446_744_073_709_551_616.0).contains(&f) {
                    *value = Value::from(f as u64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(members) => members.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}
