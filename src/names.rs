//! Names: closest-match suggestions and Rust identifiers derived from spec names.

/// The known name closest to `name`, if it is close enough to be a likely typo.
pub fn closest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    known
        .map(|k| (strsim::damerau_levenshtein(name, k), k))
        .filter(|(d, k)| {
            *d <= 2.max(k.chars().count() / 3) && *d < k.chars().count().max(name.chars().count())
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The Rust function or parameter name for a spec name (`order-book` -> `order_book`). A name
/// that would not be an identifier gets one anyway, the way typify names fields: a leading
/// digit gets an `x` in front (`1st` -> `x1st`), and a keyword that cannot be a raw identifier
/// (`self`, `super`, `crate`) a trailing `_`. Other keywords stay and are written raw
/// (`r#type`). What remains impossible (no letters or digits at all, non-ASCII letters) is
/// reported by [`ident_problem`].
pub fn fn_name(name: &str) -> String {
    let snake = heck::ToSnakeCase::to_snake_case(name);
    let snake = match snake.chars().next() {
        Some(c) if c.is_ascii_digit() => format!("x{snake}"),
        _ => snake,
    };
    if matches!(snake.as_str(), "self" | "super" | "crate" | "_") {
        format!("{snake}_")
    } else {
        snake
    }
}

/// Why a name cannot become a Rust identifier, if it cannot; `ident` is what [`fn_name`] made
/// of it.
pub fn ident_problem(ident: &str) -> Option<&'static str> {
    if ident.is_empty() {
        return Some("it has no letters or digits");
    }
    if !ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Some("it has characters other than ASCII letters, digits and `_`");
    }
    None
}

/// `base`, or `base` with `_` appended until it is none of `taken`: the name of a parameter the
/// generated code adds (`ctx`, `args`) or a local it binds, beside names that come from a spec.
pub fn free<'a>(base: &str, taken: impl IntoIterator<Item = &'a str> + Clone) -> String {
    let mut name = base.to_string();
    while taken.clone().into_iter().any(|t| t == name) {
        name.push('_');
    }
    name
}

/// The Rust field name typify gives JSON property `name` (its `sanitize`, snake case).
pub fn field_name(name: &str) -> String {
    let cleaned: String = name
        .replace('\'', "")
        .chars()
        .map(|c| {
            if unicode_ident::is_xid_continue(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let out = match name {
        "+1" => "plus1".to_string(),
        "-1" => "minus1".to_string(),
        _ => heck::ToSnakeCase::to_snake_case(cleaned.as_str()),
    };
    let out = match out.chars().next() {
        None => "x".to_string(),
        Some(c) if unicode_ident::is_xid_start(c) => out,
        Some(_) => format!("x{out}"),
    };
    if typify::accept_as_ident(&out) {
        out
    } else {
        format!("{out}_")
    }
}

/// The Rust type name for a spec name (`order_book` -> `OrderBook`).
pub fn type_name(name: &str) -> String {
    heck::ToUpperCamelCase::to_upper_camel_case(name)
}

/// The name of a tool's argument struct (`order_book` -> `OrderBookArgs`).
pub fn args_type_name(tool: &str) -> String {
    format!("{}Args", type_name(tool))
}

/// The name of a prompt's argument struct (`greet` -> `GreetArguments`).
pub fn prompt_args_type_name(prompt: &str) -> String {
    format!("{}Arguments", type_name(prompt))
}

/// The name of a resource template's variables struct (`item_data` -> `ItemDataVars`).
pub fn vars_type_name(template: &str) -> String {
    format!("{}Vars", type_name(template))
}

/// The Rust method that reads a resource or template in code (`static-text` -> `read_static_text`).
pub fn read_fn_name(resource: &str) -> String {
    fn_name(&format!("read_{resource}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let known = ["check_stock", "estimate_delivery", "confirm_backorder"];
        assert_eq!(
            closest("check_stok", known.into_iter()),
            Some("check_stock")
        );
        assert_eq!(
            closest("confirm_backorders", known.into_iter()),
            Some("confirm_backorder")
        );
        assert_eq!(closest("zzz", known.into_iter()), None);
    }

    #[test]
    fn every_name_that_can_be_an_identifier_becomes_one() {
        assert_eq!(fn_name("order-book"), "order_book");
        assert_eq!(fn_name("1st"), "x1st");
        assert_eq!(fn_name("self"), "self_");
        assert_eq!(fn_name("Self"), "self_");
        assert_eq!(fn_name("crate"), "crate_");
        assert_eq!(fn_name("type"), "type");
        assert_eq!(
            ident_problem(&fn_name("-")),
            Some("it has no letters or digits")
        );
        assert_eq!(
            ident_problem(&fn_name("café")),
            Some("it has characters other than ASCII letters, digits and `_`")
        );
        assert_eq!(ident_problem(&fn_name("ctx")), None);
    }

    #[test]
    fn added_names_step_aside() {
        assert_eq!(free("ctx", ["title", "stock"]), "ctx");
        assert_eq!(free("ctx", ["ctx", "ctx_"]), "ctx__");
    }
}
