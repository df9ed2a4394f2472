//! Token streams to text: prettyplease, a few items at a time.
//!
//! Parsing a whole generated module into one `syn::File` holds the syntax tree of every item at
//! once (about 460 MB for a spec of 1,000 tools, most of the generator's time spent faulting in
//! fresh memory). prettyplease prints the items of a file or module one after another, each
//! starting on a new line at the module's indentation, so formatting runs of items separately
//! and joining the texts gives the same bytes while only one run's tree is alive. A module item
//! (`mod types { .. }`) is split the same way inside, each run formatted in a wrapper module so
//! that prettyplease lays it out at the true indentation.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};

/// Items formatted per prettyplease call: few enough to keep the tree small, enough to keep
/// the per-call cost negligible.
const ITEMS_PER_RUN: usize = 32;

/// Formats `tokens` (a file's inner attributes and items) exactly as
/// `prettyplease::unparse(&syn::parse2(tokens)?)` would.
pub fn format_file(tokens: TokenStream) -> syn::Result<String> {
    format_file_with(tokens, None)
}

/// [`format_file`], with the body of the module `name`, written empty (`mod name {}`) in
/// `tokens`, taken from `body`: the text [`format_module_body`] makes of its items, perhaps on
/// another thread. `body` is called last, after everything else is formatted.
pub fn format_file_with(
    tokens: TokenStream,
    external: Option<(&str, &mut dyn FnMut() -> syn::Result<String>)>,
) -> syn::Result<String> {
    let mut out = String::new();
    let mut run = TokenStream::new();
    let mut in_run = 0;
    let mut splice_at = None;
    for item in split_items(tokens) {
        if let Some((header, name, body)) = module_parts(&item) {
            flush(&mut run, &mut in_run, &mut out)?;
            match &external {
                Some((module, _)) if body.is_empty() && name == *module && splice_at.is_none() => {
                    // `mod name {}` prints on one line; the body goes between its braces.
                    let mut empty = header;
                    empty.extend([TokenTree::Group(Group::new(Delimiter::Brace, body))]);
                    let text = prettyplease::unparse(&syn::parse2(empty)?);
                    let open = text
                        .strip_suffix("{}\n")
                        .expect("prettyplease prints an empty module as `mod m {}`");
                    out.push_str(open);
                    splice_at = Some(out.len());
                }
                _ => format_module(header, body, &mut out)?,
            }
            continue;
        }
        run.extend(item);
        in_run += 1;
        if in_run == ITEMS_PER_RUN {
            flush(&mut run, &mut in_run, &mut out)?;
        }
    }
    flush(&mut run, &mut in_run, &mut out)?;
    if let (Some(at), Some((_, make))) = (splice_at, external) {
        let body = make()?;
        let braced = if body.is_empty() {
            "{}\n".to_string()
        } else {
            format!("{{\n{body}}}\n")
        };
        out.insert_str(at, &braced);
    }
    Ok(out)
}

fn flush(run: &mut TokenStream, in_run: &mut usize, out: &mut String) -> syn::Result<()> {
    if *in_run > 0 {
        let file: syn::File = syn::parse2(std::mem::take(run))?;
        out.push_str(&prettyplease::unparse(&file));
        *in_run = 0;
    }
    Ok(())
}

/// A module with a body: its first item is printed inside the real module header (attributes,
/// visibility, name), the others by [`format_module_body`], and the closing brace comes last.
fn format_module(header: TokenStream, body: TokenStream, out: &mut String) -> syn::Result<()> {
    let mut items = split_items(body).into_iter();
    let first: TokenStream = items.by_ref().next().unwrap_or_default();
    let mut opened = header;
    opened.extend([TokenTree::Group(Group::new(Delimiter::Brace, first))]);
    let file: syn::File = syn::parse2(opened)?;
    let text = prettyplease::unparse(&file);
    let Some(without_close) = text.strip_suffix("}\n") else {
        // An empty module prints on one line (`mod m {}`): nothing follows.
        out.push_str(&text);
        return Ok(());
    };
    out.push_str(without_close);
    format_items_in_module(items, out)?;
    out.push_str("}\n");
    Ok(())
}

/// The lines between `mod m {` and `}` that prettyplease prints for a module (at the top level
/// of a file) whose items are `tokens`.
pub fn format_module_body(tokens: TokenStream) -> syn::Result<String> {
    let mut out = String::new();
    format_items_in_module(split_items(tokens).into_iter(), &mut out)?;
    Ok(out)
}

/// Each run of items is printed inside `mod m { .. }`, so prettyplease lays it out at the
/// module's indentation, and the wrapper's first and last lines are cut off.
fn format_items_in_module(
    items: impl Iterator<Item = TokenStream>,
    out: &mut String,
) -> syn::Result<()> {
    let mut run = TokenStream::new();
    let mut in_run = 0;
    let mut wrapped = |run: &mut TokenStream, in_run: &mut usize| -> syn::Result<()> {
        if *in_run == 0 {
            return Ok(());
        }
        let body = std::mem::take(run);
        let file: syn::File = syn::parse2(quote::quote!(mod m { #body }))?;
        let text = prettyplease::unparse(&file);
        let inner = text
            .strip_prefix("mod m {\n")
            .and_then(|t| t.strip_suffix("}\n"))
            .expect("prettyplease prints a non-empty module over several lines");
        out.push_str(inner);
        *in_run = 0;
        Ok(())
    };
    for item in items {
        run.extend(item);
        in_run += 1;
        if in_run == ITEMS_PER_RUN {
            wrapped(&mut run, &mut in_run)?;
        }
    }
    wrapped(&mut run, &mut in_run)
}

/// `(attributes, visibility, mod, name)`, the name and the body's tokens when `item` is a
/// module with a body.
fn module_parts(item: &TokenStream) -> Option<(TokenStream, String, TokenStream)> {
    let trees: Vec<TokenTree> = item.clone().into_iter().collect();
    let (last, head) = trees.split_last()?;
    let TokenTree::Group(body) = last else {
        return None;
    };
    if body.delimiter() != Delimiter::Brace {
        return None;
    }
    let [.., TokenTree::Ident(keyword), TokenTree::Ident(name)] = head else {
        return None;
    };
    if keyword != "mod" {
        return None;
    }
    Some((
        head.iter().cloned().collect(),
        name.to_string(),
        body.stream(),
    ))
}

/// The items of a token stream, each with its attributes: an item ends after a `;` or a
/// `{ .. }` (and the `;` right after it) at the top level. Inner attributes (`#![..]`) stay in
/// front of the first item. Expressions with braces in a `const` initializer (`if`, a struct
/// literal followed by a method call) would split wrongly and then fail to parse: generated
/// code writes none.
fn split_items(tokens: TokenStream) -> Vec<TokenStream> {
    let mut items = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    let mut trees = tokens.into_iter().peekable();
    while let Some(tree) = trees.next() {
        let ends = match &tree {
            TokenTree::Punct(p) => p.as_char() == ';',
            TokenTree::Group(g) => g.delimiter() == Delimiter::Brace,
            _ => false,
        };
        let brace = matches!(&tree, TokenTree::Group(_));
        current.push(tree);
        if ends {
            if brace && matches!(trees.peek(), Some(TokenTree::Punct(p)) if p.as_char() == ';') {
                current.extend(trees.next());
            }
            items.push(current.drain(..).collect());
        }
    }
    if !current.is_empty() {
        items.push(current.into_iter().collect());
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn whole(tokens: TokenStream) -> String {
        prettyplease::unparse(&syn::parse2(tokens).unwrap())
    }

    #[test]
    fn runs_print_as_the_whole_file() {
        let items = (0..100).map(|i| {
            let name = quote::format_ident!("Item{i}");
            quote! {
                /// A documented struct with a long enough body to make prettyplease break lines.
                #[derive(Debug, Clone)]
                pub struct #name { pub a: ::std::string::String, pub b: Option<Vec<u32>> }
                impl #name { pub fn new() -> Self { Self { a: String::new(), b: None } } }
                const _: () = ();
            }
        });
        let types = items.clone();
        let tokens = quote! {
            #![doc = " The module."]
            #![doc = " Second line."]
            pub mod runtime;
            use std::{sync::Arc, future::Future};
            /// Types.
            #[allow(dead_code)]
            pub mod types {
                use serde::{Deserialize, Serialize};
                #(#types)*
                pub mod error {
                    pub struct ConversionError(::std::borrow::Cow<'static, str>);
                }
            }
            pub mod empty {}
            #(#items)*
            pub trait T { fn very_long_function_name_to_force_wrapping(&self, first_argument: u32, second_argument: String) -> Result<(), String>; }
        };
        assert_eq!(format_file(tokens.clone()).unwrap(), whole(tokens));
    }

    #[test]
    fn a_module_body_made_elsewhere_prints_in_place() {
        let items = quote! {
            /// A type.
            #[derive(Debug)]
            pub struct A { pub very_long_field_name_number_one: ::std::string::String, pub b: u32 }
            impl A { pub fn f(&self) -> u32 { self.b } }
        };
        let whole_tokens = quote! {
            use std::sync::Arc;
            /// Types.
            #[allow(dead_code)]
            pub mod types { #items }
            pub fn g() {}
        };
        let text = items.to_string();
        let mut body = || format_module_body(text.parse().unwrap());
        let tokens = quote! {
            use std::sync::Arc;
            /// Types.
            #[allow(dead_code)]
            pub mod types {}
            pub fn g() {}
        };
        assert_eq!(
            format_file_with(tokens, Some(("types", &mut body))).unwrap(),
            whole(whole_tokens)
        );
    }

    #[test]
    fn unparsable_runs_are_errors() {
        assert!(format_file(quote!(struct A;, fn)).is_err());
    }
}
