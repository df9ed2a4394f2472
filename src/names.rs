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

/// The Rust function or parameter name for a spec name (`order-book` -> `order_book`).
pub fn fn_name(name: &str) -> String {
    heck::ToSnakeCase::to_snake_case(name)
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
}
