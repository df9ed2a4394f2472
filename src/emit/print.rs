//! Token streams to text: prettyplease, a few items at a time.
//!
//! Parsing a whole generated module into one `syn::File` holds the syntax tree of every item at
//! once (about 460 MB for a spec of 1,000 tools, most of the generator's time spent faulting in
//! fresh memory). prettyplease prints the items of a file or module one after another, each
//! starting on a new line at the module's indentation, so formatting runs of items separately
//! and joining the texts gives the same bytes while only one run's tree is alive. A module item
//! (`mod types { .. }`) is split the same way inside, each run formatted in a wrapper module so
//! that prettyplease lays it out at the true indentation. Runs are independent, so a file's
//! runs are shared between this thread and a helper thread.

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
///
/// Every other run of top-level items is formatted on a helper thread while this one formats
/// the rest: token streams cannot cross threads, so those runs go over as text and are lexed
/// again there.
pub fn format_file_with(
    tokens: TokenStream,
    external: Option<(&str, &mut dyn FnMut() -> syn::Result<String>)>,
) -> syn::Result<String> {
    let mut pieces = Pieces::default();
    let mut splice_at = None;
    for item in split_items(tokens) {
        let Some((header, name, body)) = module_parts(&item) else {
            pieces.push_item(item);
            continue;
        };
        pieces.close_run();
        pieces.push_text(module_header(header)?);
        match &external {
            Some((module, _)) if body.is_empty() && name == *module && splice_at.is_none() => {
                splice_at = Some(pieces.push_text(String::new()));
            }
            _ => {
                pieces.push_text(braced(&format_module_body(body)?));
            }
        }
    }
    pieces.close_run();
    let remote = std::mem::take(&mut pieces.remote);
    let helper = std::thread::spawn(move || {
        remote
            .into_iter()
            .map(|text| print_file(lex(&text)?))
            .collect::<syn::Result<Vec<String>>>()
    });
    // This thread's runs, formatted while the helper formats its own.
    let mut texts = Vec::with_capacity(pieces.pieces.len());
    for piece in pieces.pieces {
        texts.push(match piece {
            Piece::Here(tokens) => Some(print_file(tokens)?),
            Piece::Text(text) => Some(text),
            Piece::There => None,
        });
    }
    let failed = |what: &str| syn::Error::new(proc_macro2::Span::call_site(), what);
    let mut theirs = helper
        .join()
        .map_err(|_| failed("formatting on the helper thread failed"))??
        .into_iter();
    if let (Some(at), Some((_, make))) = (splice_at, external) {
        texts[at] = Some(braced(&make()?));
    }
    let mut out = String::new();
    for text in texts {
        match text {
            Some(text) => out.push_str(&text),
            None => out.push_str(&theirs.next().ok_or_else(|| failed("a run went missing"))?),
        }
    }
    Ok(out)
}

/// The parts of a formatted file, in order: text made already, and runs of items formatted on
/// this thread or (every other run) on the helper thread.
#[derive(Default)]
struct Pieces {
    pieces: Vec<Piece>,
    /// The helper's runs, as text.
    remote: Vec<String>,
    /// The run being gathered.
    run: Runs,
    /// Runs closed so far.
    runs: usize,
}

enum Piece {
    Text(String),
    Here(TokenStream),
    /// The helper's next run (they are in [`Pieces::remote`] in order).
    There,
}

impl Pieces {
    fn push_item(&mut self, item: Vec<TokenTree>) {
        if let Some(run) = self.run.push(item) {
            self.place(run);
        }
    }

    fn close_run(&mut self) {
        if let Some(run) = self.run.take() {
            self.place(run);
        }
    }

    /// A full run goes to this thread or, every other one, to the helper.
    fn place(&mut self, run: TokenStream) {
        self.runs += 1;
        if self.runs.is_multiple_of(2) {
            self.remote.push(run.to_string());
            self.pieces.push(Piece::There);
        } else {
            self.pieces.push(Piece::Here(run));
        }
    }

    /// Appends `text`; returns its index among the pieces.
    fn push_text(&mut self, text: String) -> usize {
        self.pieces.push(Piece::Text(text));
        self.pieces.len() - 1
    }
}

/// Tokens from their text (the helper thread's runs, the types on their own thread).
pub fn lex(text: &str) -> syn::Result<TokenStream> {
    text.parse::<TokenStream>()
        .map_err(|e| syn::Error::new(proc_macro2::Span::call_site(), e))
}

/// The lines between `mod m {` and `}` that prettyplease prints for a module (at the top level
/// of a file) whose items are `tokens`.
pub fn format_module_body(tokens: TokenStream) -> syn::Result<String> {
    let mut out = String::new();
    let mut runs = Runs::default();
    for item in split_items(tokens) {
        if let Some(run) = runs.push(item) {
            out.push_str(&print_in_module(run)?);
        }
    }
    if let Some(run) = runs.take() {
        out.push_str(&print_in_module(run)?);
    }
    Ok(out)
}

/// Items gathered into runs of [`ITEMS_PER_RUN`].
#[derive(Default)]
struct Runs {
    trees: Vec<TokenTree>,
    items: usize,
}

impl Runs {
    /// Adds `item`; returns the run when it is full.
    fn push(&mut self, item: Vec<TokenTree>) -> Option<TokenStream> {
        self.trees.extend(item);
        self.items += 1;
        if self.items == ITEMS_PER_RUN {
            self.take()
        } else {
            None
        }
    }

    /// The run gathered so far, if it has any item.
    fn take(&mut self) -> Option<TokenStream> {
        (self.items > 0).then(|| {
            self.items = 0;
            self.trees.drain(..).collect()
        })
    }
}

/// Items as prettyplease prints them at the top level of a file.
fn print_file(items: TokenStream) -> syn::Result<String> {
    Ok(prettyplease::unparse(&syn::parse2(items)?))
}

/// Items as prettyplease prints them inside a module: printed inside `mod m { .. }`, so the
/// layout follows the module's indentation, with the wrapper's first and last lines cut off.
fn print_in_module(items: TokenStream) -> syn::Result<String> {
    let text = print_file(quote::quote!(mod m { #items }))?;
    Ok(text
        .strip_prefix("mod m {\n")
        .and_then(|t| t.strip_suffix("}\n"))
        .expect("prettyplease prints a non-empty module over several lines")
        .to_string())
}

/// A module's attributes, visibility and name as prettyplease prints them, up to the space
/// before its opening brace (it prints an empty module on one line, `mod m {}`).
fn module_header(header: Vec<TokenTree>) -> syn::Result<String> {
    let mut empty: TokenStream = header.into_iter().collect();
    empty.extend([TokenTree::Group(Group::new(
        Delimiter::Brace,
        TokenStream::new(),
    ))]);
    let text = print_file(empty)?;
    Ok(text
        .strip_suffix("{}\n")
        .expect("prettyplease prints an empty module as `mod m {}`")
        .to_string())
}

/// A module body's lines in braces, as prettyplease closes a module (`{}` when empty).
fn braced(body: &str) -> String {
    if body.is_empty() {
        "{}\n".to_string()
    } else {
        format!("{{\n{body}}}\n")
    }
}

/// `(attributes, visibility, mod, name)`, the name and the body's tokens when `item` is a
/// module with a body.
fn module_parts(item: &[TokenTree]) -> Option<(Vec<TokenTree>, String, TokenStream)> {
    let (TokenTree::Group(body), head) = item.split_last()? else {
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
    Some((head.to_vec(), name.to_string(), body.stream()))
}

/// The items of a token stream, each with its attributes: an item ends after a `;` or a
/// `{ .. }` (and the `;` right after it) at the top level. Inner attributes (`#![..]`) stay in
/// front of the first item. Expressions with braces in a `const` initializer (`if`, a struct
/// literal followed by a method call) would split wrongly and then fail to parse: generated
/// code writes none.
fn split_items(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
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
            items.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        items.push(current);
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
        // The second run is formatted on the helper thread.
        let valid = (0..ITEMS_PER_RUN).map(|_| {
            quote!(
                const _: () = ();
            )
        });
        let error = format_file(quote!(#(#valid)* struct A;, fn)).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("expected one of: `fn`, `extern`"),
            "{error}"
        );
    }
}
