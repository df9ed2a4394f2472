//! Field names of the generated types: typify names a field after its JSON property with the
//! characters a Rust identifier cannot hold dropped, so two properties (`@type` and `type`,
//! `userId` and `user_id`, `foo\tbar` and `foo\nbar`) can become one field name. [`disambiguate`]
//! gives every later one of them its own name (`type_2`), keeping the JSON name with
//! `#[serde(rename)]`, in the struct and in the code typify writes for it, its builder
//! (`types::builder`) included: the builder's fields and setters take the same new names.

use std::collections::{HashMap, HashSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::{self, VisitMut};

/// The fields of every struct (or struct-like enum variant, `Enum::Variant`) as generated: JSON
/// property name and Rust field name, in declaration order.
pub type FieldNames = HashMap<String, Vec<(String, String)>>;

/// Renames colliding fields in typify's output; returns the new code and the field names.
/// Code that does not parse is returned unchanged (the compiler will then say why).
pub fn disambiguate(tokens: TokenStream) -> (TokenStream, FieldNames) {
    let Ok(mut file) = syn::parse2::<syn::File>(tokens.clone()) else {
        return (tokens, FieldNames::new());
    };
    let mut pass = Pass::default();
    pass.visit_file_mut(&mut file);
    if pass.renames.is_empty() {
        return (tokens, pass.names);
    }
    pass.rewriting = true;
    pass.visit_file_mut(&mut file);
    (quote!(#file), pass.names)
}

#[derive(Default)]
struct Pass {
    /// Second pass: rename uses in struct expressions.
    rewriting: bool,
    /// Type (or `Enum::Variant`) -> (typify's name, new name) of each field by position,
    /// where any changed.
    renames: HashMap<String, Vec<(String, String)>>,
    names: FieldNames,
    /// The type whose `impl` is being visited.
    current_impl: Option<String>,
    /// Setters seen so far in the builder `impl` being visited, by name.
    setters: HashMap<String, usize>,
    /// Inside typify's `mod builder`: its structs mirror the types' (same names, same fields in
    /// the same order) and take their renames; they are not serde types.
    in_builder: bool,
}

/// The JSON name of a field: its `#[serde(rename = "...")]`, else its identifier.
fn json_name(field: &syn::Field) -> String {
    let mut name = None;
    for attr in &field.attrs {
        if attr.path().is_ident("serde") {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    let lit: syn::LitStr = meta.value()?.parse()?;
                    name = Some(lit.value());
                } else if meta.input.peek(syn::Token![=]) {
                    let _: syn::Expr = meta.value()?.parse()?;
                }
                Ok(())
            });
        }
    }
    name.unwrap_or_else(|| {
        field
            .ident
            .as_ref()
            .map(|i| i.to_string().trim_start_matches("r#").to_string())
            .unwrap_or_default()
    })
}

impl Pass {
    fn fields(&mut self, owner: String, fields: &mut syn::FieldsNamed) {
        let taken: HashSet<String> = fields
            .named
            .iter()
            .filter_map(|f| f.ident.as_ref().map(ToString::to_string))
            .collect();
        let mut seen: HashSet<String> = HashSet::new();
        let mut new_names = Vec::new();
        let mut changed = false;
        let mut names = Vec::new();
        for field in fields.named.iter_mut() {
            let json = json_name(field);
            let Some(ident) = field.ident.clone() else {
                continue;
            };
            let base = ident.to_string();
            let mut name = base.clone();
            let mut n = 2;
            while seen.contains(&name) || (name != base && taken.contains(&name)) {
                name = format!("{}_{n}", base.trim_end_matches('_'));
                n += 1;
            }
            seen.insert(name.clone());
            if name != base {
                changed = true;
                let has_rename = json != base.trim_start_matches("r#");
                field.ident = Some(format_ident!("{name}"));
                if !has_rename {
                    field
                        .attrs
                        .push(syn::parse_quote!(#[serde(rename = #json)]));
                }
            }
            names.push((json, name.clone()));
            new_names.push((base, name));
        }
        if changed {
            self.renames.insert(owner.clone(), new_names);
        }
        self.names.insert(owner, names);
    }
}

fn last_segment(path: &syn::Path) -> Option<String> {
    path.segments.last().map(|s| s.ident.to_string())
}

/// The new name of the `k`-th member written `old` of a type renamed as `new_names`.
fn renamed<'a>(new_names: &'a [(String, String)], old: &str, k: usize) -> Option<&'a str> {
    (new_names.iter().filter(|(o, _)| o == old).nth(k)).map(|(_, new)| new.as_str())
}

/// Renames every field access `<expr>.old` in an expression (a builder's `value.old?`,
/// `self.old = ..`) to `.new`, and the builder's messages that name the field
/// (`no value supplied for old`, `error converting supplied value for old: ..`).
struct Access<'a> {
    old: &'a str,
    new: &'a str,
}

impl VisitMut for Access<'_> {
    fn visit_expr_field_mut(&mut self, expr: &mut syn::ExprField) {
        if let syn::Member::Named(ident) = &mut expr.member
            && *ident == self.old
        {
            *ident = format_ident!("{}", self.new);
        }
        visit_mut::visit_expr_field_mut(self, expr);
    }

    fn visit_lit_str_mut(&mut self, lit: &mut syn::LitStr) {
        if lit.value() == format!("no value supplied for {}", self.old) {
            *lit = syn::LitStr::new(&format!("no value supplied for {}", self.new), lit.span());
        }
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        let old = format!(
            "\"error converting supplied value for {}: {{e}}\"",
            self.old
        );
        let new = format!(
            "\"error converting supplied value for {}: {{e}}\"",
            self.new
        );
        mac.tokens = (mac.tokens.clone().into_iter())
            .map(|tree| match tree {
                proc_macro2::TokenTree::Literal(l) if l.to_string() == old => {
                    proc_macro2::TokenTree::Literal(proc_macro2::Literal::string(
                        &new[1..new.len() - 1],
                    ))
                }
                other => other,
            })
            .collect();
    }
}

impl VisitMut for Pass {
    fn visit_item_mod_mut(&mut self, item: &mut syn::ItemMod) {
        let previous = self.in_builder;
        self.in_builder = item.ident == "builder";
        visit_mut::visit_item_mod_mut(self, item);
        self.in_builder = previous;
    }

    fn visit_item_struct_mut(&mut self, item: &mut syn::ItemStruct) {
        if let syn::Fields::Named(fields) = &mut item.fields {
            if !self.in_builder && !self.rewriting {
                self.fields(item.ident.to_string(), fields);
            } else if self.in_builder
                && self.rewriting
                && let Some(new_names) = self.renames.get(&item.ident.to_string())
            {
                for (field, (_, new)) in fields.named.iter_mut().zip(new_names) {
                    field.ident = Some(format_ident!("{new}"));
                }
            }
        }
        visit_mut::visit_item_struct_mut(self, item);
    }

    fn visit_impl_item_fn_mut(&mut self, item: &mut syn::ImplItemFn) {
        // A builder's setter is named after its field, one per field in the field order.
        if self.in_builder && self.rewriting {
            let new_names = (self.current_impl.as_ref()).and_then(|t| self.renames.get(t));
            let old = item.sig.ident.to_string();
            if let Some(new_names) = new_names {
                let k = *self.setters.entry(old.clone()).or_default();
                if let Some(new) = renamed(new_names, &old, k) {
                    item.sig.ident = format_ident!("{new}");
                    Access { old: &old, new }.visit_block_mut(&mut item.block);
                }
                *self.setters.entry(old).or_default() += 1;
            }
        }
        visit_mut::visit_impl_item_fn_mut(self, item);
    }

    fn visit_item_enum_mut(&mut self, item: &mut syn::ItemEnum) {
        if !self.rewriting {
            for variant in &mut item.variants {
                if let syn::Fields::Named(fields) = &mut variant.fields {
                    self.fields(format!("{}::{}", item.ident, variant.ident), fields);
                }
            }
        }
        visit_mut::visit_item_enum_mut(self, item);
    }

    fn visit_item_impl_mut(&mut self, item: &mut syn::ItemImpl) {
        let previous = self.current_impl.take();
        if let syn::Type::Path(p) = &*item.self_ty {
            self.current_impl = last_segment(&p.path);
        }
        self.setters.clear();
        visit_mut::visit_item_impl_mut(self, item);
        self.current_impl = previous;
    }

    fn visit_expr_struct_mut(&mut self, expr: &mut syn::ExprStruct) {
        if self.rewriting {
            let segments: Vec<String> = expr
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let owner = match segments.as_slice() {
                [one] if one == "Self" => self.current_impl.clone(),
                [one] => Some(one.clone()),
                [.., ty, variant] if ty == "Self" => self
                    .current_impl
                    .as_ref()
                    .map(|t| format!("{t}::{variant}")),
                [.., ty, variant] => Some(format!("{ty}::{variant}")),
                [] => None,
            };
            let owner = owner.filter(|o| self.renames.contains_key(o)).or_else(|| {
                // `Type { .. }` written with a path to a struct, not a variant.
                last_segment(&expr.path).filter(|o| self.renames.contains_key(o))
            });
            if let Some(new_names) = owner.and_then(|o| self.renames.get(&o)) {
                let mut counts: HashMap<String, usize> = HashMap::new();
                for field in expr.fields.iter_mut() {
                    if let syn::Member::Named(ident) = &mut field.member {
                        let old = ident.to_string();
                        let k = counts.entry(old.clone()).or_default();
                        // The k-th field written `old` is the k-th declared `old`.
                        if let Some(new) = renamed(new_names, &old, *k) {
                            *ident = format_ident!("{new}");
                            field.colon_token.get_or_insert_with(Default::default);
                            // A builder's `type_2: value.type_?` reads the field renamed.
                            if self.in_builder {
                                Access { old: &old, new }.visit_expr_mut(&mut field.expr);
                            }
                        }
                        *k += 1;
                    }
                }
            }
        }
        visit_mut::visit_expr_struct_mut(self, expr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colliding_fields_get_their_own_names_and_keep_their_json_names() {
        let code = quote! {
            pub struct A {
                #[serde(rename = "@type")]
                pub type_: String,
                #[serde(rename = "type")]
                pub type_: String,
                pub user_id: i64,
                #[serde(rename = "userId")]
                pub user_id: i64,
            }
            impl Default for A {
                fn default() -> Self {
                    Self { type_: a(), type_: b(), user_id: 1, user_id: 2 }
                }
            }
        };
        let (out, names) = disambiguate(code);
        let expected = quote! {
            pub struct A {
                #[serde(rename = "@type")]
                pub type_: String,
                #[serde(rename = "type")]
                pub type_2: String,
                pub user_id: i64,
                #[serde(rename = "userId")]
                pub user_id_2: i64,
            }
            impl Default for A {
                fn default() -> Self {
                    Self { type_: a(), type_2: b(), user_id: 1, user_id_2: 2 }
                }
            }
        };
        assert_eq!(out.to_string(), expected.to_string());
        assert_eq!(
            names["A"],
            [
                ("@type".to_string(), "type_".to_string()),
                ("type".to_string(), "type_2".to_string()),
                ("user_id".to_string(), "user_id".to_string()),
                ("userId".to_string(), "user_id_2".to_string()),
            ]
        );
    }
}
