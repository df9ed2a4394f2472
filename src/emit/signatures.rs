//! The traits users implement (`Resolvers`, `Tools`, `Prompts`, `Resources`) and the names and
//! types in their signatures; shared by the generated module and the user stubs
//! ([`crate::emit::stubs`]), so the two always agree.

use std::collections::HashSet;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::emit::docs::doc_text;
use crate::emit::idents::{doc, fn_ident, ident, many_args};
use crate::emit::types::{Field, Slot, TypeSet};
use crate::model::{
    ArgTypeView, Binding, Consumer, Model, Param, Prompt, Resolver, ResolverId, TemplateId, Tool,
};
use crate::names;

/// Names and signatures derived from the model and the generated types.
pub struct Signatures<'a> {
    pub(crate) model: &'a Model,
    pub(crate) types: &'a TypeSet,
    /// The `"arg"` parameters (resolver, parameter name) received as an `Option`, decided once
    /// for every parameter ([`Self::arg_is_option`]): asked per call site, the answer would scan
    /// every consumer of the resolver for every consumer, n² for a resolver shared by n tools.
    option_args: HashSet<(ResolverId, String)>,
}

impl<'a> Signatures<'a> {
    /// Signatures for a model and its types.
    pub fn new(model: &'a Model, types: &'a TypeSet) -> Self {
        let option_args = model
            .resolvers
            .iter()
            .flat_map(|r| {
                r.params.iter().filter_map(move |p| match p {
                    Param::Arg { name, always, .. }
                        if Self::some_consumer_optional(types, r, name, *always) =>
                    {
                        Some((r.id, name.clone()))
                    }
                    _ => None,
                })
            })
            .collect();
        Signatures {
            model,
            types,
            option_args,
        }
    }

    /// The slot of a resolver's value (what dependents and tools receive): the type the kind
    /// of question fixes, or the type of its `returns`.
    pub fn value_slot(&self, r: &Resolver) -> Slot {
        match r.asks.and_then(|k| k.value) {
            Some(fixed) => {
                let fixed = format_ident!("{fixed}");
                Slot::fixed(quote!(#fixed))
            }
            None => self
                .types
                .value(r.id)
                .expect("a resolver without a fixed value type has `returns`")
                .clone(),
        }
    }

    /// The type of a resolver's value.
    pub(crate) fn value_type(&self, r: &Resolver) -> TokenStream {
        self.value_slot(r).ty
    }

    /// The type a resolver's slot holds.
    pub(crate) fn slot_type(&self, r: &Resolver) -> TokenStream {
        let v = self.value_type(r);
        if r.outcome() { quote!(Outcome<#v>) } else { v }
    }

    /// A resolver method's parameters after `ctx` (`"context"` ones are `ctx` itself), each name
    /// with `prefix` (stubs use `_`).
    pub fn resolver_params(&self, r: &Resolver, prefix: &str) -> Vec<TokenStream> {
        r.params
            .iter()
            .filter_map(|p| {
                let pname = ident(&format!("{prefix}{}", names::fn_name(p.name())));
                let ty = match p {
                    Param::Arg { name, ty, always } => self.arg_param_type(r, name, ty, *always),
                    Param::Context { .. } => return None,
                    Param::Principal { .. } => self.principal_type(),
                    Param::Resolver { resolver, .. } => {
                        self.value_slot(&self.model[*resolver]).borrowed()
                    }
                };
                Some(quote!(#pname: #ty))
            })
            .collect()
    }

    /// The type of a `"principal"` parameter: `&Principal` when the spec's `auth.required` holds
    /// (every request has a verified caller), else `Option<&Principal>`.
    pub(crate) fn principal_type(&self) -> TokenStream {
        if self.principal_required() {
            quote!(&Principal)
        } else {
            quote!(Option<&Principal>)
        }
    }

    /// Whether every call has a verified principal (`auth.required`).
    pub(crate) fn principal_required(&self) -> bool {
        self.model.auth.as_ref().is_some_and(|a| a.required)
    }

    /// `text` with the line naming `scopes`, when there are any.
    fn with_scopes(&self, mut text: String, scopes: &[String]) -> String {
        if let Some(line) = self.scopes_doc(scopes) {
            text.push_str("\n\n");
            text.push_str(&line);
        }
        text
    }

    /// The Rust names of a resolver method's parameters that come from the spec (its `"arg"`
    /// and resolver-valued parameters), in order.
    pub(crate) fn resolver_param_names(r: &Resolver) -> Vec<String> {
        r.params
            .iter()
            .filter(|p| !matches!(p, Param::Context { .. }))
            .map(|p| names::fn_name(p.name()))
            .collect()
    }

    /// The name of a resolver method's context parameter: `ctx`, unless a parameter of the
    /// spec has that name.
    pub fn resolver_ctx(&self, r: &Resolver, prefix: &str) -> Ident {
        let taken: Vec<String> = Self::resolver_param_names(r)
            .into_iter()
            .map(|n| format!("{prefix}{n}"))
            .collect();
        format_ident!(
            "{}",
            names::free(&format!("{prefix}ctx"), taken.iter().map(String::as_str))
        )
    }

    /// The names of the context and arguments parameters of a tool or prompt method: `ctx` and
    /// `args`, unless a resolved parameter of the spec has one of those names.
    pub fn method_ctx_args(&self, bindings: &[Binding], prefix: &str) -> (Ident, Ident) {
        let taken: Vec<String> = bindings
            .iter()
            .map(|b| format!("{prefix}{}", names::fn_name(&b.param)))
            .collect();
        let free = |base: &str| {
            format_ident!(
                "{}",
                names::free(&format!("{prefix}{base}"), taken.iter().map(String::as_str))
            )
        };
        (free("ctx"), free("args"))
    }

    /// The type a resolver method returns inside `Result`.
    pub fn method_return(&self, r: &Resolver) -> TokenStream {
        let v = self.value_type(r);
        match r.asks {
            Some(_) => quote!(Ask<#v>),
            None => v,
        }
    }

    /// The Rust type of an `"arg"` parameter as the resolver receives it.
    pub fn arg_param_type(
        &self,
        r: &Resolver,
        name: &str,
        ty: &ArgTypeView,
        always: bool,
    ) -> TokenStream {
        let base = match ty {
            ArgTypeView::Primitive(p) => match p.as_str() {
                "string" => quote!(&str),
                "integer" => quote!(i64),
                "number" => quote!(f64),
                _ => quote!(bool),
            },
            ArgTypeView::Ref(_) | ArgTypeView::Schema(_) => self.arg_slot(r, name).borrowed(),
        };
        if self.arg_is_option(r, name, always) {
            quote!(Option<#base>)
        } else {
            base
        }
    }

    /// Whether resolver `r` receives its `"arg"` parameter `name` as an `Option`: when some
    /// consumer may lack a value for it, or holds it in an `Option` field (a required but
    /// nullable property). One answer for the parameter's type and for every call.
    pub(crate) fn arg_is_option(&self, r: &Resolver, name: &str, always: bool) -> bool {
        !always || self.option_args.contains(&(r.id, name.to_owned()))
    }

    /// The rule behind [`Self::arg_is_option`], evaluated once per parameter by [`Self::new`].
    fn some_consumer_optional(types: &TypeSet, r: &Resolver, name: &str, always: bool) -> bool {
        !always
            || r.consumers.iter().any(|c| {
                let field = match c {
                    Consumer::Tool(t) => types.arg_field(*t, name),
                    Consumer::Prompt(p) => types.prompt_arg_field(*p, name),
                };
                field.is_some_and(|f| f.optional)
            })
    }

    /// The slot of a non-primitive `"arg"` parameter `name` of `r`: the type of the argument's
    /// field in the first tool that runs `r` (`serde_json::Value` without one).
    pub fn arg_slot(&self, r: &Resolver, name: &str) -> Slot {
        self.arg_field_of_consumer(r, name)
            .map(|f| f.inner)
            .unwrap_or_else(|| Slot::fixed(quote!(::serde_json::Value)))
    }

    /// The field of the first tool that uses `r` holding its `"arg"` parameter `name`.
    fn arg_field_of_consumer(&self, r: &Resolver, name: &str) -> Option<Field> {
        let tool = r.consumers.iter().find_map(|c| match c {
            Consumer::Tool(t) => Some(&self.model[*t]),
            Consumer::Prompt(_) => None,
        })?;
        self.types.arg_field(tool.id, name)
    }

    /// The Rust type a tool method returns inside `Result`.
    pub fn tool_output_type(&self, t: &Tool) -> TokenStream {
        match &t.output {
            Some(_) => (self.types.output(t.id))
                .expect("a tool with `output` has its type")
                .ty
                .clone(),
            None => quote!(Vec<ContentBlock>),
        }
    }

    /// The type a tool receives for a resolved parameter.
    pub fn binding_type(&self, b: &Binding) -> TokenStream {
        let v = self.value_type(&self.model[b.resolver]);
        if b.outcome { quote!(Outcome<#v>) } else { v }
    }

    /// The `<Prompt>Arguments` type of a prompt written in code (the type of an object without
    /// properties when it declares none, as for a tool without `input`: every prompt method has
    /// the same shape).
    pub fn prompt_args_type(&self, p: &Prompt) -> Option<TokenStream> {
        self.types.prompt_args(p.id).map(|s| s.ty.clone())
    }

    /// The parameters of a prompt method after `ctx`, each name with `prefix`.
    pub fn prompt_params(&self, p: &Prompt, prefix: &str) -> Vec<TokenStream> {
        let (_, a) = self.method_ctx_args(&p.chain.bindings, prefix);
        let args = self.prompt_args_type(p).map(|ty| quote!(#a: #ty));
        args.into_iter()
            .chain(p.chain.bindings.iter().map(|b| {
                let name = ident(&format!("{prefix}{}", names::fn_name(&b.param)));
                let ty = self.binding_type(b);
                quote!(#name: #ty)
            }))
            .collect()
    }

    /// The parameters of a resource-reading method after `ctx`, each name with `prefix`:
    /// none for a resource, the URI and the variables for a template.
    pub fn read_params(&self, template: Option<TemplateId>, prefix: &str) -> Vec<TokenStream> {
        let Some(t) = template else {
            return Vec::new();
        };
        let u = format_ident!("{prefix}uri");
        let v = format_ident!("{prefix}vars");
        let ty = &self.types.vars(t).ty;
        vec![quote!(#u: &str), quote!(#v: #ty)]
    }
}

impl Signatures<'_> {
    pub(crate) fn resolvers_trait(&self) -> TokenStream {
        let methods = self.model.resolvers.iter().map(|r| {
            let name = fn_ident(&r.name);
            let mut text = r.description.as_deref().map(doc_text).unwrap_or_else(|| format!("Resolver `{}`.", r.name));
            if let Some(kind) = r.asks {
                text.push_str("\n\n");
                text.push_str(kind.doc);
            }
            if let Some(principal) = self.principal_doc(r) {
                text.push_str("\n\n");
                text.push_str(&principal);
            }
            let docs = doc(&text);
            let params = self.resolver_params(r, "");
            let ctx = self.resolver_ctx(r, "");
            let ret = self.method_return(r);
            let allow = many_args(params.len() + 2);
            // A resolver no tool or prompt uses (`check` warns) is never called.
            let unused = (!r.used).then(|| {
                quote!(#[allow(dead_code, reason = "no tool or prompt of the spec uses this resolver")])
            });
            quote! {
                #docs
                #allow
                #unused
                fn #name(&self, #ctx: &Context, #(#params),*) -> impl Future<Output = Result<#ret, ToolError>> + Send;
            }
        });
        quote! {
            /// One method per resolver; an asking resolver returns [`Ask`]: its value, or its question.
            pub trait Resolvers: Send + Sync + 'static {
                #(#methods)*
            }
        }
    }

    pub(crate) fn tools_trait(&self) -> TokenStream {
        let methods = self.model.tools.iter().map(|t| {
            let name = fn_ident(&t.name);
            let docs = doc(&self.with_scopes(doc_text(&t.description), &t.scopes));
            let args = &self.types.args(t.id).ty;
            let params = t.chain.bindings.iter().map(|b| {
                let p = fn_ident(&b.param);
                let ty = self.binding_type(b);
                quote!(#p: #ty)
            });
            let out = self.tool_output_type(t);
            let allow = many_args(t.chain.bindings.len() + 3);
            let (ctx, args_name) = self.method_ctx_args(&t.chain.bindings, "");
            quote! {
                #docs
                #allow
                fn #name(&self, #ctx: &Context, #args_name: #args, #(#params),*) -> impl Future<Output = Result<#out, ToolError>> + Send;
            }
        });
        quote! {
            /// One method per tool; resolved parameters arrive already resolved, in spec order.
            pub trait Tools: Resolvers {
                #(#methods)*
            }
        }
    }

    pub(crate) fn prompts_trait(&self) -> TokenStream {
        let methods = self.model.code_prompts().map(|p| {
            let name = fn_ident(&p.name);
            let docs = doc(&self.with_scopes(doc_text(&p.description), &p.scopes));
            let params = self.prompt_params(p, "");
            let (ctx, _) = self.method_ctx_args(&p.chain.bindings, "");
            let allow = many_args(params.len() + 2);
            quote! {
                #docs
                #allow
                fn #name(&self, #ctx: &Context, #(#params),*) -> impl Future<Output = Result<Vec<PromptMessage>, ToolError>> + Send;
            }
        });
        quote! {
            /// One method per prompt written in code: its messages; resolved parameters arrive
            /// already resolved, in spec order.
            pub trait Prompts: Resolvers {
                #(#methods)*
            }
        }
    }

    pub(crate) fn resources_trait(&self) -> TokenStream {
        let resources = self.model.code_resources().map(|r| {
                let name = ident(&names::read_fn_name(&r.name));
                let text = r
                    .description
                    .as_deref()
                    .map(doc_text)
                    .unwrap_or_else(|| format!("The resource `{}`.", r.name));
                let docs = doc(&self.with_scopes(format!("{text}\n\nReads `{}`.", r.uri), &r.scopes));
                quote! {
                    #docs
                    fn #name(&self, ctx: &Context) -> impl Future<Output = Result<ResourceBody, ToolError>> + Send;
                }
            });
        let templates = self.model.templates.iter().map(|t| {
            let name = ident(&names::read_fn_name(&t.name));
            let text = t
                .description
                .as_deref()
                .map(doc_text)
                .unwrap_or_else(|| format!("The resources `{}`.", t.name));
            let checked = if t.variables.is_empty() {
                String::new()
            } else {
                let exempt: Vec<String> = t
                    .exempt_from_path_checks
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect();
                let exempt = if exempt.is_empty() {
                    String::new()
                } else {
                    format!("\nExempt from the path checks in the spec: {}.", exempt.join(", "))
                };
                format!(
                    "\n\nThe variables are percent-decoded and have passed the path checks: no NUL, no `..`\n\
                     that climbs above the start, not an absolute path. Join them onto a root and check\n\
                     containment before opening files.{exempt}"
                )
            };
            let docs = doc(&self.with_scopes(
                format!("{text}\n\nReads URIs matching `{}`.{checked}", t.uri_template),
                &t.scopes,
            ));
            let params = self.read_params(Some(t.id), "");
            quote! {
                #docs
                fn #name(&self, ctx: &Context, #(#params),*) -> impl Future<Output = Result<ResourceBody, ToolError>> + Send;
            }
        });
        quote! {
            /// One method per resource read in code and per resource template: the content.
            pub trait Resources: Send + Sync + 'static {
                #(#resources)*
                #(#templates)*
            }
        }
    }
}
