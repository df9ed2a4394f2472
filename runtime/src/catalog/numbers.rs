//! Numbers as sent: a number written with a fraction or an exponent is read as the nearest
//! 64-bit float, and a tool call whose arguments hold one that float does not give back is
//! refused, naming it ([`inexact_argument`]): `0.10000000000000000001` has more significant
//! digits than a float keeps, and `9007199254740993.0` or `1.0000000000000000001` would reach
//! an integer field as a neighbouring integer. So no value is rounded silently. Integers
//! written without a fraction are read exactly within the 64-bit range (beyond it, see
//! `args.rs`); a float's shortest form that reads back to it counts as given back (`0.1`).
//!
//! This needs the text of the request, which only the transports have: the HTTP front and the
//! stdio transport put it into the request's extensions (`request::raw_message`). The parsed
//! arguments say whether to look at all: only when they hold a float.

use serde::Deserialize;
use serde_json::{Map, Value, value::RawValue};

/// The first number of `params.arguments` in `message` (a JSON-RPC `tools/call`, as sent) that
/// the float it is read as does not give back, as the `isError` text
/// (`/price: 0.10000000000000000001 cannot be taken exactly: the nearest 64-bit float is 0.1`);
/// `None` when every number is taken as sent, or the text cannot be read (then the parsed
/// value stands). `arguments`, as parsed, decides whether the text is read at all.
pub(crate) fn inexact_argument(
    arguments: Option<&Map<String, Value>>,
    message: &[u8],
) -> Option<String> {
    if !holds_float(arguments) {
        return None;
    }
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        params: Params<'a>,
    }
    #[derive(Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        arguments: &'a RawValue,
    }
    let message = message.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(message);
    let message: Message<'_> = serde_json::from_slice(message).ok()?;
    let (pointer, text, read) = first_inexact(message.params.arguments, String::new())?;
    let pointer = if pointer.is_empty() {
        "(root)".to_string()
    } else {
        pointer
    };
    Some(format!(
        "{pointer}: {text} cannot be taken exactly: the nearest 64-bit float is {read}"
    ))
}

/// Whether `arguments` hold a number read as a float (so that [`inexact_argument`] reads the
/// text).
pub(crate) fn holds_float(arguments: Option<&Map<String, Value>>) -> bool {
    arguments.is_some_and(|members| members.values().any(has_float))
}

/// Whether `value` holds a number read as a float (written with a fraction or an exponent, or
/// an integer beyond the 64-bit range).
fn has_float(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_float),
        Value::Object(members) => members.values().any(has_float),
        _ => false,
    }
}

/// The first number under `raw` (at `pointer`) that is not taken exactly: its pointer, its text
/// and the float it reads as. Members are visited in key order; a repeated key counts once,
/// its last value, as the parsed arguments hold it.
fn first_inexact(raw: &RawValue, pointer: String) -> Option<(String, String, String)> {
    let text = raw.get();
    match text.as_bytes().first()? {
        b'{' => {
            let members: std::collections::BTreeMap<String, &RawValue> =
                serde_json::from_str(text).ok()?;
            members.into_iter().find_map(|(key, member)| {
                let key = key.replace('~', "~0").replace('/', "~1");
                first_inexact(member, format!("{pointer}/{key}"))
            })
        }
        b'[' => {
            let items: Vec<&RawValue> = serde_json::from_str(text).ok()?;
            items
                .into_iter()
                .enumerate()
                .find_map(|(i, item)| first_inexact(item, format!("{pointer}/{i}")))
        }
        b'-' | b'0'..=b'9' => {
            let read: f64 = text.parse().ok()?;
            (!taken_exactly(text, read))
                .then(|| (pointer, text.to_string(), Value::from(read).to_string()))
        }
        _ => None,
    }
}

/// Whether the float `read` gives back the number written `text`: an integer within the 64-bit
/// range is held exactly (not a float at all); otherwise the float written to as many
/// significant digits as the text has must be the text's number (`0.1` is the float nearest to
/// it, to one digit; `9007199254740993.0` is not `9007199254740992`): no digit sent is lost.
fn taken_exactly(text: &str, read: f64) -> bool {
    if !text.contains(['.', 'e', 'E'])
        && (text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok())
    {
        return true;
    }
    let Some(sent) = decimal(text) else {
        return false;
    };
    let places = sent.1.len().saturating_sub(1);
    read.is_finite() && decimal(&format!("{read:.places$e}")) == Some(sent)
}

/// A decimal number's value as (negative, significant digits without leading or trailing
/// zeros, power of ten of the last digit); zero is `(false, "", 0)`. `None` when the exponent
/// does not fit an `i64`.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    // `1e+18` (Rust writes no `+`, JSON may).
    let text = text.replace("e+", "e").replace("E+", "E");
    let text = text.as_str();
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i64>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits: String = whole.chars().chain(fraction.chars()).collect();
    let mut power = exponent.checked_sub(i64::try_from(fraction.len()).ok()?)?;
    while digits.ends_with('0') {
        digits.pop();
        power = power.checked_add(1)?;
    }
    let digits = digits.trim_start_matches('0').to_string();
    if digits.is_empty() {
        return Some((false, digits, 0));
    }
    Some((negative, digits, power))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(arguments: &str) -> Option<String> {
        let message = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{arguments}}}}}"#
        );
        let parsed: Value = serde_json::from_str(&message).unwrap();
        inexact_argument(
            parsed["params"]["arguments"].as_object(),
            message.as_bytes(),
        )
    }

    #[test]
    fn a_float_that_gives_back_its_text_passes() {
        for arguments in [
            r#"{"a": 0.1, "b": 1.5, "c": -2.25e-3, "d": 1e300, "e": 0.0, "f": -0.0}"#,
            r#"{"a": 9007199254740992.0, "b": 1.0, "c": 100E-2, "d": 2.50}"#,
            r#"{"a": 18446744073709551616, "b": -9223372036854775808.0}"#,
            r#"{"a": 9007199254740993, "b": "9007199254740993.0", "c": [1, 2]}"#,
        ] {
            assert_eq!(check(arguments), None, "{arguments}");
        }
    }

    #[test]
    fn a_float_that_does_not_give_back_its_text_is_named() {
        let cases = [
            (
                r#"{"price": 0.10000000000000000001}"#,
                "/price: 0.10000000000000000001 cannot be taken exactly: the nearest 64-bit float is 0.1",
            ),
            (
                r#"{"n": 9007199254740993.0}"#,
                "/n: 9007199254740993.0 cannot be taken exactly: the nearest 64-bit float is 9007199254740992.0",
            ),
            (
                r#"{"n": 1.0000000000000000001}"#,
                "/n: 1.0000000000000000001 cannot be taken exactly: the nearest 64-bit float is 1.0",
            ),
            (
                r#"{"low": -9223372036854775809.0}"#,
                "/low: -9223372036854775809.0 cannot be taken exactly: the nearest 64-bit float is -9.223372036854776e+18",
            ),
            (
                r#"{"tiny": 1e-400}"#,
                "/tiny: 1e-400 cannot be taken exactly: the nearest 64-bit float is 0.0",
            ),
            (
                r#"{"a": {"b/c": [1, 2.5, 123456789012345678901234567890]}}"#,
                "/a/b~1c/2: 123456789012345678901234567890 cannot be taken exactly: the nearest 64-bit float is 1.2345678901234568e+29",
            ),
            (
                r#"{"x": 0.5, "x": 0.30000000000000000001}"#,
                "/x: 0.30000000000000000001 cannot be taken exactly: the nearest 64-bit float is 0.3",
            ),
        ];
        for (arguments, expected) in cases {
            assert_eq!(check(arguments).as_deref(), Some(expected), "{arguments}");
        }
    }

    #[test]
    fn without_a_float_the_text_is_not_read() {
        // Not even parsed: a message that is not the arguments' own text changes nothing.
        let arguments = json!({"a": 1, "b": "x"});
        assert_eq!(inexact_argument(arguments.as_object(), b"not json"), None);
        let arguments = json!({"a": 0.5});
        assert_eq!(inexact_argument(arguments.as_object(), b"not json"), None);
        assert_eq!(inexact_argument(None, b"{}"), None);
    }
}
