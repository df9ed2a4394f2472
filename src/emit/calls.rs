//! The generated `call_<tool>` and `get_<prompt>` functions: each runs the resolvers of its
//! tool or prompt in order, then the user's method, and shapes its result.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::emit::idents::{fn_ident, ident};
use crate::emit::signatures::Signatures;
use crate::emit::types::Field;
use crate::model::{ArgTypeView, Chain, Param, Prompt, Resolver, ResolverId, Tool};
use crate::names;

/// The locals of a generated `call_<tool>` / `get_<prompt>` function that a resolver's
/// parameter values must not shadow.
const CALL_LOCALS: [&str; 5] = ["state", "ctx", "args", "round", "principal"];

/// A tool or prompt: what runs resolvers before a user method.
#[derive(Clone, Copy)]
pub(crate) enum Owner<'p> {
    /// A tool.
    Tool(&'p Tool),
    /// A prompt.
    Prompt(&'p Prompt),
}

impl Signatures<'_> {
    /// The expression passing argument `name` of `owner` to a resolver parameter of type `ty`.
    fn arg_expr(
        &self,
        owner: Owner<'_>,
        r: &Resolver,
        name: &str,
        ty: &ArgTypeView,
        always: bool,
    ) -> TokenStream {
        let field = self.owner_arg_field(owner, name);
        let Some(field) = field else {
            return quote!(compile_error!("argument field not found"));
        };
        let f = ident(&field.ident);
        // The field is an `Option` (`optional`); the parameter is one when `option`, which
        // `optional` implies.
        let optional = field.optional;
        let option = self.arg_is_option(r, name, always);
        // A string typed as an enum (an `enum`) or as a newtype (a `pattern`, a length): the
        // resolver takes `&str` all the same, the enum's text made for the call.
        let enum_text = field.inner.is_enum;
        let newtype = !enum_text && !field.inner.derefs();
        match ty {
            ArgTypeView::Primitive(p) if p == "string" && enum_text => match (optional, option) {
                (true, _) => quote!(args.#f.as_ref().map(|v| v.to_string()).as_deref()),
                (false, true) => quote!(Some(args.#f.to_string().as_str())),
                (false, false) => quote!(args.#f.to_string().as_str()),
            },
            ArgTypeView::Primitive(p) if p == "string" && newtype && optional => {
                quote!(args.#f.as_deref().map(String::as_str))
            }
            ArgTypeView::Primitive(p) => match (p.as_str(), optional, option) {
                ("string", true, _) => quote!(args.#f.as_deref()),
                ("string", false, true) => quote!(Some(args.#f.as_str())),
                ("string", false, false) => quote!(args.#f.as_str()),
                ("integer", true, _) => quote!(args.#f.map(runtime::int_arg)),
                ("integer", false, true) => quote!(Some(runtime::int_arg(args.#f))),
                ("integer", false, false) => quote!(runtime::int_arg(args.#f)),
                (_, false, true) => quote!(Some(args.#f)),
                _ => quote!(args.#f),
            },
            // `Option<&str>` from `Option<String>`, `Option<&[T]>` from `Option<Vec<T>>`.
            _ if optional && field.inner.derefs() => quote!(args.#f.as_deref()),
            _ if optional => quote!(args.#f.as_ref()),
            _ if option && field.inner.derefs() => quote!(Some(&*args.#f)),
            _ if option => quote!(Some(&args.#f)),
            _ => quote!(&args.#f),
        }
    }

    /// `let principal = ..;` when a resolver of `chain` takes the verified caller, before any
    /// resolver runs: the request's principal, which must be there when `auth.required` holds
    /// (the HTTP front and the stdio start-up see to that; should it be missing all the same,
    /// the call fails as an internal error before anything runs, never with another caller).
    fn principal_local(&self, chain: &Chain) -> TokenStream {
        let takes = (chain.run_order.iter())
            .flat_map(|r| &self.model[*r].params)
            .any(|p| matches!(p, Param::Principal { .. }));
        match (takes, self.principal_required()) {
            (false, _) => quote!(),
            (true, true) => {
                quote!(let principal = ctx.principal().ok_or_else(runtime::unauthenticated)?;)
            }
            (true, false) => quote!(let principal = ctx.principal();),
        }
    }

    /// `call_<tool>` or `get_<prompt>`: the resolvers in run order, then the user's method.
    pub(crate) fn call_fn(&self, owner: Owner<'_>) -> TokenStream {
        let (fname, bound, response, args_param) = self.call_signature(owner);
        let chain = owner.chain();
        if !self.model.asks(chain) {
            // Nothing asks: each resolver runs once, in order, and its value is a local.
            let steps = chain
                .run_order
                .iter()
                .map(|&id| self.simple_step(owner, id));
            let body = self.finish(owner, self.resolved_args(owner));
            let principal = self.principal_local(chain);
            return quote! {
                async fn #fname<S: #bound>(state: &S, ctx: &Context, #args_param) -> Result<#response, ToolError> {
                    #principal
                    #(#steps)*
                    #body
                }
            };
        }
        let steps = chain
            .run_order
            .iter()
            .map(|&id| self.resolver_step(owner, id));
        // Every slot must be ready; those the method takes are bound, the others checked.
        let pats = chain.run_order.iter().map(|&id| {
            if chain.bindings.iter().any(|b| b.resolver == id) {
                let s = self.slot_ident(id);
                quote!(Slot::Ready(#s))
            } else {
                quote!(Slot::Ready(_))
            }
        });
        let vals = chain.run_order.iter().map(|&id| self.slot_ident(id));
        let body = self.finish(owner, self.resolved_args(owner));
        let principal = self.principal_local(chain);
        quote! {
            async fn #fname<S: #bound>(state: &S, ctx: &Context, #args_param) -> Result<#response, ToolError> {
                #principal
                let round = Round::new(ctx);
                #(#steps)*
                let (#(#pats,)*) = (#(#vals,)*) else {
                    return round.input_required();
                };
                #body
            }
        }
    }

    /// The function's name, the trait its state implements, its response type, and its
    /// arguments parameter.
    fn call_signature(&self, owner: Owner<'_>) -> (Ident, TokenStream, TokenStream, TokenStream) {
        match owner {
            Owner::Tool(t) => {
                let ty = &self.types.args(t.id).ty;
                (
                    format_ident!("call_{}", names::fn_name(&t.name)),
                    quote!(Tools),
                    quote!(CallToolResponse),
                    quote!(args: #ty,),
                )
            }
            Owner::Prompt(p) => (
                format_ident!("get_{}", names::fn_name(&p.name)),
                quote!(Prompts),
                quote!(GetPromptResponse),
                match self.prompt_args_type(p) {
                    Some(ty) => quote!(args: #ty,),
                    None => quote!(),
                },
            ),
        }
    }

    /// The local holding resolver `id`'s slot.
    fn slot_ident(&self, id: ResolverId) -> Ident {
        format_ident!("r_{}", names::fn_name(&self.model[id].name))
    }

    /// `let r_<name>: Slot<T> = ..;`: runs resolver `id` once the slots it takes values from
    /// are ready (else its slot is pending).
    fn resolver_step(&self, owner: Owner<'_>, id: ResolverId) -> TokenStream {
        let r = &self.model[id];
        let rname = r.name.as_str();
        let (s, sty, rfn) = (self.slot_ident(id), self.slot_type(r), fn_ident(rname));
        let deps: Vec<(&str, ResolverId)> = (r.params.iter())
            .filter_map(|p| match p {
                Param::Resolver { name, resolver } => Some((name.as_str(), *resolver)),
                _ => None,
            })
            .collect();
        let call_args = r.params.iter().filter_map(|p| match p {
            Param::Arg { name, ty, always } => Some(self.arg_expr(owner, r, name, ty, *always)),
            Param::Context { .. } => None,
            Param::Principal { .. } => Some(quote!(principal)),
            Param::Resolver { name, resolver } => {
                let b = self.bound_as(r, name);
                let pname = name.as_str();
                Some(match self.model[*resolver].outcome() {
                    true => quote!(#b.value(#pname)?),
                    false => quote!(#b),
                })
            }
        });
        // Each resolver runs in its own span: `runtime::resolve`, or `Round::ask`, which awaits
        // an asking resolver's future in its span. The future is bound first, so the lines stay
        // short, unless an argument is text made for the call (it must live as long as the
        // statement that awaits it).
        let call = quote!(Resolvers::#rfn(state, ctx, #(#call_args),*));
        let bound = !self.makes_text(owner, r);
        let ready = match (r.asks, bound) {
            (None, true) => quote!({
                let call = #call;
                Slot::Ready(runtime::resolve(#rname, call).await?)
            }),
            (None, false) => quote!(Slot::Ready(runtime::resolve(#rname, #call).await?)),
            (Some(kind), _) => {
                let k: TokenStream = kind
                    .runtime_kind
                    .parse()
                    .unwrap_or_else(|_| quote!(compile_error!("bad runtime kind")));
                match bound {
                    true => quote!({
                        let ask = #call;
                        round.ask::<runtime::#k>(#rname, ask).await?
                    }),
                    false => quote!(round.ask::<runtime::#k>(#rname, #call).await?),
                }
            }
        };
        if deps.is_empty() {
            return quote!(let #s: Slot<#sty> = #ready;);
        }
        let scrut = deps.iter().map(|(_, d)| {
            let ds = self.slot_ident(*d);
            quote!(&#ds)
        });
        let pats = deps.iter().map(|(p, _)| {
            let b = self.bound_as(r, p);
            quote!(Slot::Ready(#b))
        });
        quote! {
            let #s: Slot<#sty> = match (#(#scrut,)*) {
                (#(#pats,)*) => #ready,
                _ => Slot::Pending,
            };
        }
    }

    /// `let r_<name> = Resolvers::<name>(..).await?;`: resolver `id` of a chain that asks
    /// nothing, taking the values it depends on by reference.
    fn simple_step(&self, owner: Owner<'_>, id: ResolverId) -> TokenStream {
        let r = &self.model[id];
        let (s, rfn) = (self.slot_ident(id), fn_ident(&r.name));
        let call_args = r.params.iter().filter_map(|p| match p {
            Param::Arg { name, ty, always } => Some(self.arg_expr(owner, r, name, ty, *always)),
            Param::Context { .. } => None,
            Param::Principal { .. } => Some(quote!(principal)),
            Param::Resolver { resolver, .. } => {
                let dep = self.slot_ident(*resolver);
                Some(quote!(&#dep))
            }
        });
        let rname = r.name.as_str();
        let call = quote!(Resolvers::#rfn(state, ctx, #(#call_args),*));
        // An enum's text made for the call lives as long as the statement that awaits it.
        match self.makes_text(owner, r) {
            true => quote!(let #s = runtime::resolve(#rname, #call).await?;),
            false => resolved(rname, &call, &s),
        }
    }

    /// Whether an argument of resolver `r` is text made for the call (see `arg_makes_text`).
    fn makes_text(&self, owner: Owner<'_>, r: &Resolver) -> bool {
        r.params.iter().any(|p| match p {
            Param::Arg { name, ty, .. } => self.arg_makes_text(owner, name, ty),
            _ => false,
        })
    }

    /// The field of argument `name` in `owner`'s arguments type.
    fn owner_arg_field(&self, owner: Owner<'_>, name: &str) -> Option<Field> {
        match owner {
            Owner::Tool(t) => self.types.arg_field(t.id, name),
            Owner::Prompt(p) => self.types.prompt_arg_field(p.id, name),
        }
    }

    /// Whether argument `name` of `owner` reaches a resolver as text made for the call (a
    /// string typed as an enum, lent as `&str`).
    fn arg_makes_text(&self, owner: Owner<'_>, name: &str, ty: &ArgTypeView) -> bool {
        let field = self.owner_arg_field(owner, name);
        matches!(ty, ArgTypeView::Primitive(p) if p == "string")
            && field.is_some_and(|f| f.inner.is_enum)
    }

    /// The local a resolver-valued parameter `param` of `r` is bound under: the parameter's
    /// name, stepping aside from the locals of the function and `r`'s other parameters.
    fn bound_as(&self, r: &Resolver, param: &str) -> Ident {
        let spec_names = Self::resolver_param_names(r);
        let own = names::fn_name(param);
        let others = spec_names.iter().map(String::as_str).filter(|n| *n != own);
        let taken = CALL_LOCALS.iter().copied().chain(others);
        ident(&names::free(&own, taken))
    }

    /// The resolved parameters the method takes, in spec order; a resolver bound to several
    /// parameters is cloned for all but the last (`Clone::clone(&..)`, which clippy accepts for
    /// the values that are `Copy` too).
    fn resolved_args(&self, owner: Owner<'_>) -> Vec<TokenStream> {
        let bindings = &owner.chain().bindings;
        (bindings.iter().enumerate())
            .map(|(i, b)| {
                let s = self.slot_ident(b.resolver);
                let later = bindings[i + 1..].iter().any(|o| o.resolver == b.resolver);
                let value = if later {
                    quote!(Clone::clone(&#s))
                } else {
                    quote!(#s)
                };
                if self.model[b.resolver].outcome() && !b.outcome {
                    let p = b.param.as_str();
                    quote!(#value.into_value(#p)?)
                } else {
                    value
                }
            })
            .collect()
    }

    /// The call of the user's method with `resolved`, awaited, and its result shaped into the
    /// response.
    fn finish(&self, owner: Owner<'_>, resolved: Vec<TokenStream>) -> TokenStream {
        match owner {
            Owner::Tool(t) => {
                let method = fn_ident(&t.name);
                let call = quote!(Tools::#method(state, ctx, args, #(#resolved),*));
                let output = match &t.output {
                    Some(o) if o.wrapped => quote!(runtime::wrapped_output(&output)),
                    Some(_) => quote!(runtime::object_output(&output)),
                    None => quote!(runtime::content_output(output)),
                };
                let awaited = awaited(&call, &format_ident!("tool"), &format_ident!("output"));
                quote! {
                    #awaited
                    #output
                }
            }
            Owner::Prompt(p) => {
                let method = fn_ident(&p.name);
                let args = self.prompt_args_type(p).map(|_| quote!(args,));
                let call = quote!(Prompts::#method(state, ctx, #args #(#resolved),*));
                let awaited = awaited(&call, &format_ident!("prompt"), &format_ident!("messages"));
                quote! {
                    #awaited
                    runtime::prompt_output(messages)
                }
            }
        }
    }
}

impl Owner<'_> {
    /// Its resolved parameters and resolvers.
    fn chain(&self) -> &Chain {
        match self {
            Owner::Tool(t) => &t.chain,
            Owner::Prompt(p) => &p.chain,
        }
    }
}

/// `let value = call.await?;`, or, when the call does not fit on the line, `let future = call;`
/// then `let value = future.await?;`: prettyplease indents the arguments of a call that is
/// wrapped in front of `.await` by an extra level, which reads as a mistake.
fn awaited(call: &TokenStream, future: &Ident, value: &Ident) -> TokenStream {
    if fits(call, value) {
        quote!(let #value = #call.await?;)
    } else {
        quote! {
            let #future = #call;
            let #value = #future.await?;
        }
    }
}

/// `let value = runtime::resolve("name", call).await?;`, the call bound first as `call` when
/// the statement would not fit on one line.
fn resolved(name: &str, call: &TokenStream, value: &Ident) -> TokenStream {
    let one = quote!(runtime::resolve(#name, #call));
    match fits(&one, value) {
        true => quote!(let #value = #one.await?;),
        false => quote! {
            let call = #call;
            let #value = runtime::resolve(#name, call).await?;
        },
    }
}

/// Whether `let value = call.await?;` fits prettyplease's 89 columns at four columns of
/// indentation (`.await?;` may go to the next line; that reads well).
fn fits(call: &TokenStream, value: &Ident) -> bool {
    // The call's width as printed: its text without the spaces `to_string` puts between
    // tokens and without a trailing comma, plus one space after each comma.
    let compact: String = call
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .replace(",)", ")");
    let width = compact.chars().count() + compact.matches(',').count();
    4 + "let  = ".len() + value.to_string().len() + width <= 89
}

#[cfg(test)]
mod tests {
    use super::*;

    fn printed(statements: TokenStream) -> String {
        prettyplease::unparse(&syn::parse_quote!(
            async fn f() {
                #statements
            }
        ))
    }

    #[test]
    fn a_call_that_fits_is_awaited_in_one_statement() {
        let call = quote!(Tools::search_books(state, ctx, args,));
        let text = printed(awaited(&call, &ident("tool"), &ident("output")));
        assert_eq!(
            text,
            "async fn f() {\n    let output = Tools::search_books(state, ctx, args).await?;\n}\n"
        );
    }

    #[test]
    fn a_call_whose_arguments_wrap_is_bound_before_it_is_awaited() {
        let call = quote!(Tools::order_book(
            state,
            ctx,
            args,
            r_check_stock,
            r_estimate_delivery,
            r_confirm_backorder.into_value("backorder")?
        ));
        let text = printed(awaited(&call, &ident("tool"), &ident("output")));
        assert_eq!(
            text,
            "async fn f() {\n    let tool = Tools::order_book(\n        state,\n        ctx,\n        args,\n        r_check_stock,\n        r_estimate_delivery,\n        r_confirm_backorder.into_value(\"backorder\")?,\n    );\n    let output = tool.await?;\n}\n"
        );
    }

    #[test]
    fn a_call_that_fits_but_its_await_does_not_stays_one_statement() {
        // 88 columns with `let output = `; prettyplease moves `.await?` to the next line.
        let call = quote!(Tools::test_elicitation_sep1330_enums(
            state,
            ctx,
            args,
            r_sep1330_enums
        ));
        let text = printed(awaited(&call, &ident("tool"), &ident("output")));
        assert_eq!(
            text,
            "async fn f() {\n    let output = Tools::test_elicitation_sep1330_enums(state, ctx, args, r_sep1330_enums)\n        .await?;\n}\n"
        );
    }

    #[test]
    fn a_resolver_runs_in_its_span_and_binds_its_future_when_the_line_is_long() {
        let short = quote!(Resolvers::member(state, ctx, principal,));
        assert_eq!(
            printed(resolved("member", &short, &ident("r_member"))),
            "async fn f() {\n    let r_member = runtime::resolve(\"member\", Resolvers::member(state, ctx, principal))\n        .await?;\n}\n"
        );
        let long = quote!(Resolvers::check_stock(state, ctx, args.title.as_str(),));
        assert_eq!(
            printed(resolved("check_stock", &long, &ident("r_check_stock"))),
            "async fn f() {\n    let call = Resolvers::check_stock(state, ctx, args.title.as_str());\n    let r_check_stock = runtime::resolve(\"check_stock\", call).await?;\n}\n"
        );
    }
}
