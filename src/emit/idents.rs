//! Identifiers and literals of generated code: Rust names for spec names, raw string and JSON
//! literals, doc attributes, and the `too_many_arguments` allowance.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;
use serde_json::Value;

use crate::names;

/// A Rust identifier for a spec name (raw when it is a keyword).
pub fn ident(name: &str) -> Ident {
    if typify::accept_as_ident(name) {
        Ident::new(name, Span::call_site())
    } else {
        Ident::new_raw(name, Span::call_site())
    }
}

/// The Rust function (or parameter) identifier for a spec name.
pub fn fn_ident(name: &str) -> Ident {
    ident(&names::fn_name(name))
}

/// A raw string literal holding `s` (`r#"..."#`, with as many `#` as needed).
pub fn raw_str(s: &str) -> Literal {
    let mut hashes = String::from("#");
    while s.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"{s}\"{hashes}")
        .parse()
        .expect("a raw string literal parses")
}

/// A raw string literal holding `v` as compact JSON.
pub(crate) fn json_lit(v: &Value) -> Literal {
    raw_str(&v.to_string())
}

/// `#[doc]` attributes, one per line of `text` (each line gets the leading space `///` has).
pub(crate) fn doc(text: &str) -> TokenStream {
    let lines = text.lines().map(|l| {
        let l = format!(" {l}");
        quote!(#[doc = #l])
    });
    quote!(#(#lines)*)
}

/// `Some("..")` or `None`, for an optional text of a table.
pub(crate) fn opt_str(v: &Option<String>) -> TokenStream {
    match v {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    }
}

/// `#[allow(clippy::too_many_arguments)]` when a signature has more than clippy's seven
/// arguments (the spec decides how many parameters a tool or resolver takes).
pub(crate) fn many_args(count: usize) -> TokenStream {
    if count > 7 {
        quote!(#[allow(clippy::too_many_arguments)])
    } else {
        quote!()
    }
}
