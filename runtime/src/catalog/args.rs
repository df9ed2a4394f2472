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
pub(crate) fn parse<A: DeserializeOwned>(
    validator: &jsonschema::Validator,
    arguments: &Value,
) -> Result<A, String> {
    let violations = crate::catalog::schema::violations(validator, arguments);
    if !violations.is_empty() {
        return Err(violations.join("\n"));
    }
    // The generated types accept every value the schema accepts; a failure here is a bug of
    // the generator, reported as such rather than as the caller's fault. (Copied only when a
    // number needs rewriting: the common call deserializes from the arguments as they are.)
    let typed = if has_integral_float(arguments) {
        let mut value = arguments.clone();
        normalize_numbers(&mut value);
        A::deserialize(value)
    } else {
        A::deserialize(arguments)
    };
    typed.map_err(|e| {
        // A float the reader rounded cannot become an integer exactly: the caller's value, not
        // the generator, is why.
        if let Some((pointer, number)) = inexact_integral(arguments, String::new()) {
            return format!(
                "{pointer}: {number} cannot be taken exactly as an integer: it lies outside the 64-bit range (its text may have been rounded into -2^63 or 2^64 when read)"
            );
        }
        tracing::error!("arguments valid by the schema do not fit the typed struct: {e}");
        format!("the arguments are valid but could not be converted: {e}")
    })
}

/// The floats with a zero fraction that become integers: above -2^63 and below 2^64. An
/// integer literal below the 64-bit range is read as a float that rounds to -2^63 or below, one
/// above it as 2^64 or above: neither may become a neighbouring integer in range. (Within the
/// range a float is taken as read, as JSON Schema validators that read `f64` take it; one whose
/// text it does not give back never gets here from a transport: see `numbers.rs`.)
fn integral_in_range(f: f64) -> bool {
    f.fract() == 0.0 && f > -9_223_372_036_854_775_808.0 && f < 18_446_744_073_709_551_616.0
}

/// The first number (by JSON pointer, `(root)` for the value itself) with a zero fraction that
/// [`normalize_numbers`] leaves a float because it lies outside the range it converts.
fn inexact_integral(value: &Value, pointer: String) -> Option<(String, Value)> {
    match value {
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .filter(|f| f.fract() == 0.0 && !integral_in_range(*f))
            .map(|_| {
                let at = if pointer.is_empty() {
                    "(root)".to_string()
                } else {
                    pointer
                };
                (at, value.clone())
            }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| inexact_integral(item, format!("{pointer}/{i}"))),
        Value::Object(members) => members.iter().find_map(|(key, member)| {
            let key = key.replace('~', "~0").replace('/', "~1");
            inexact_integral(member, format!("{pointer}/{key}"))
        }),
        _ => None,
    }
}

/// True when some number in `value` is written with a zero fraction (`1.0`), which
/// [`normalize_numbers`] would rewrite.
fn has_integral_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_some_and(|f| n.is_f64() && f.fract() == 0.0),
        Value::Array(items) => items.iter().any(has_integral_float),
        Value::Object(members) => members.values().any(has_integral_float),
        _ => false,
    }
}

/// Rewrites every number with a zero fraction above -2^63 and below 2^64 (`1.0`, `-3e2`) as
/// that integer, so integer fields take it; a float field takes an integer as well. Others stay
/// floats ([`integral_in_range`]): an integer field refuses them rather than take a value the
/// caller did not send (`-9223372036854775809` would otherwise land on `i64::MIN`).
pub fn normalize_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64()
                && integral_in_range(f)
            {
                // In range, so the casts are exact.
                if f < 9_223_372_036_854_775_808.0 {
                    *value = Value::from(f as i64);
                } else {
                    *value = Value::from(f as u64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize_numbers),
        Value::Object(members) => members.values_mut().for_each(normalize_numbers),
        _ => {}
    }
}
