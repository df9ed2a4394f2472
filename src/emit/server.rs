//! The spec-dependent server code: `src/generated/mod.rs` of a generated crate. Built as
//! tokens, formatted with prettyplease. The fixed runtime it calls lives in `runtime/`.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

use crate::emit::docs::doc_text;
use crate::emit::types::TypeSet;
use crate::names;
use crate::plan::{
    ArgTypeView, BindingPlan, ContentPlan, MessagePlan, Plan, PromptPlan, ResolverParam,
    ResolverPlan, ToolPlan,
};
use crate::spec::{Asks, Role};

/// The locals of a generated `call_<tool>` / `get_<prompt>` function that a resolver's
/// parameter values must not shadow.
const CALL_LOCALS: [&str; 4] = ["state", "ctx", "args", "round"];

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

/// `&T` as a parameter type, with `&str` for `String` and `&[T]` for `Vec<T>` (what clippy
/// and readers expect).
pub fn borrowed(ty: &TokenStream) -> TokenStream {
    if let Ok(syn::Type::Path(p)) = syn::parse2::<syn::Type>(ty.clone())
        && p.qself.is_none()
        // The standard `String` and `Vec`, not a `$defs` type of that name (`types::String`).
        && (p.path.segments.len() == 1 || p.path.segments.first().is_some_and(|s| s.ident == "std"))
        && let Some(last) = p.path.segments.last()
    {
        if last.ident == "String" && last.arguments.is_empty() {
            return quote!(&str);
        }
        if last.ident == "Vec"
            && let syn::PathArguments::AngleBracketed(a) = &last.arguments
            && let Some(syn::GenericArgument::Type(inner)) = a.args.first()
        {
            return quote!(&[#inner]);
        }
    }
    quote!(&#ty)
}

/// True when [`borrowed`] lends `ty` as its deref target (`&str` for `String`, `&[T]` for
/// `Vec<T>`) rather than as `&ty`.
fn derefs(ty: &TokenStream) -> bool {
    borrowed(ty).to_string() != quote!(&#ty).to_string()
}

fn json_lit(v: &Value) -> Literal {
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

fn opt_str(v: &Option<String>) -> TokenStream {
    match v {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    }
}

/// Names and signatures derived from the plan and the generated types; shared by the generated
/// module and the user stubs, so the two always agree.
pub struct Signatures<'a> {
    plan: &'a Plan,
    types: &'a TypeSet,
}

impl<'a> Signatures<'a> {
    /// Signatures for a plan and its types.
    pub fn new(plan: &'a Plan, types: &'a TypeSet) -> Self {
        Signatures { plan, types }
    }

    /// The type of the value of resolver `name`.
    pub fn value_type_of(&self, name: &str) -> TokenStream {
        self.value_type(self.resolver(name))
    }

    fn resolver(&self, name: &str) -> &ResolverPlan {
        self.plan
            .resolvers
            .iter()
            .find(|r| r.name == name)
            .expect("the plan names known resolvers")
    }

    /// The type of a resolver's value (what dependents and tools receive).
    fn value_type(&self, r: &ResolverPlan) -> TokenStream {
        match r.asks {
            Some(Asks::Sample) => quote!(CreateMessageResult),
            Some(Asks::Roots) => quote!(ListRootsResult),
            _ => self.types.returns[&r.name].clone(),
        }
    }

    /// The type a resolver's slot holds.
    fn slot_type(&self, r: &ResolverPlan) -> TokenStream {
        let v = self.value_type(r);
        match r.asks {
            Some(Asks::Elicit) => quote!(Outcome<#v>),
            _ => v,
        }
    }

    /// A resolver method's parameters after `ctx` (`"context"` ones are `ctx` itself), each name
    /// with `prefix` (stubs use `_`).
    pub fn resolver_params(&self, r: &ResolverPlan, prefix: &str) -> Vec<TokenStream> {
        r.params
            .iter()
            .filter_map(|p| {
                let pname = ident(&format!("{prefix}{}", names::fn_name(p.name())));
                let ty = match p {
                    ResolverParam::Arg { name, ty, always } => {
                        self.arg_param_type(r, name, ty, *always)
                    }
                    ResolverParam::Context { .. } => return None,
                    ResolverParam::Resolver { resolver, .. } => {
                        borrowed(&self.value_type(self.resolver(resolver)))
                    }
                };
                Some(quote!(#pname: #ty))
            })
            .collect()
    }

    /// The Rust names of a resolver method's parameters that come from the spec (its `"arg"`
    /// and resolver-valued parameters), in order.
    fn resolver_param_names(r: &ResolverPlan) -> Vec<String> {
        r.params
            .iter()
            .filter(|p| !matches!(p, ResolverParam::Context { .. }))
            .map(|p| names::fn_name(p.name()))
            .collect()
    }

    /// The name of a resolver method's context parameter: `ctx`, unless a parameter of the
    /// spec has that name.
    pub fn resolver_ctx(&self, r: &ResolverPlan, prefix: &str) -> Ident {
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
    pub fn method_ctx_args(&self, bindings: &[BindingPlan], prefix: &str) -> (Ident, Ident) {
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
    pub fn method_return(&self, r: &ResolverPlan) -> TokenStream {
        let v = self.value_type(r);
        match r.asks {
            Some(_) => quote!(Ask<#v>),
            None => v,
        }
    }

    /// The Rust type of an `"arg"` parameter, as the resolver receives it.
    /// The Rust type of an `"arg"` parameter as the resolver receives it.
    pub fn arg_param_type(
        &self,
        r: &ResolverPlan,
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
            ArgTypeView::Ref(_) | ArgTypeView::Schema(_) => {
                let inner = self
                    .arg_field_of_consumer(r, name)
                    .map(|f| f.inner)
                    .unwrap_or_else(|| quote!(::serde_json::Value));
                borrowed(&inner)
            }
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
    fn arg_is_option(&self, r: &ResolverPlan, name: &str, always: bool) -> bool {
        let tools = self
            .plan
            .tools
            .iter()
            .filter(|t| t.run_order.contains(&r.name))
            .filter_map(|t| self.types.arg_field(&t.name, name));
        let prompts = self
            .plan
            .prompts
            .iter()
            .filter(|p| p.run_order.contains(&r.name))
            .filter_map(|p| self.types.prompt_arg_field(&p.name, name));
        !always || tools.chain(prompts).any(|f| f.optional)
    }

    /// The field of the first tool that uses `r` holding its `"arg"` parameter `name`.
    fn arg_field_of_consumer(
        &self,
        r: &ResolverPlan,
        name: &str,
    ) -> Option<crate::emit::types::Field> {
        self.plan
            .tools
            .iter()
            .find(|t| t.run_order.contains(&r.name))
            .and_then(|t| self.types.arg_field(&t.name, name))
    }

    fn resolvers_trait(&self) -> TokenStream {
        let methods = self.plan.resolvers.iter().map(|r| {
            let name = fn_ident(&r.name);
            let mut text = r.description.as_deref().map(doc_text).unwrap_or_else(|| format!("Resolver `{}`.", r.name));
            match r.asks {
                Some(Asks::Elicit) => text.push_str("\n\nAsks `elicit`: return `Ask::value(..)`, or `Ask::elicit(message)` to ask the user."),
                Some(Asks::Sample) => text.push_str("\n\nAsks `sample`: return `Ask::value(..)`, or `Ask::sample(messages, max_tokens)`."),
                Some(Asks::Roots) => text.push_str("\n\nAsks `roots`: return `Ask::value(..)`, or `Ask::roots()` to ask the client."),
                None => {}
            }
            let docs = doc(&text);
            let params = self.resolver_params(r, "");
            let ctx = self.resolver_ctx(r, "");
            let ret = self.method_return(r);
            let allow = many_args(params.len() + 2);
            // A resolver no tool or prompt uses (`check` warns) is never called.
            let used = self.plan.tools.iter().any(|t| t.run_order.contains(&r.name))
                || self.plan.prompts.iter().any(|p| p.run_order.contains(&r.name));
            let unused = (!used).then(|| {
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

    /// The Rust type a tool method returns inside `Result`.
    pub fn tool_output_type(&self, t: &ToolPlan) -> TokenStream {
        match &t.output {
            Some(_) => self.types.outputs[&t.name].clone(),
            None => quote!(Vec<ContentBlock>),
        }
    }

    /// The type a tool receives for a resolved parameter.
    pub fn binding_type(&self, b: &BindingPlan) -> TokenStream {
        let r = self.resolver(&b.resolver);
        let v = self.value_type(r);
        if b.outcome { quote!(Outcome<#v>) } else { v }
    }

    fn tools_trait(&self) -> TokenStream {
        let methods = self.plan.tools.iter().map(|t| {
            let name = fn_ident(&t.name);
            let docs = doc(&doc_text(&t.description));
            let args = &self.types.args[&t.name];
            let params = t.bindings.iter().map(|b| {
                let p = fn_ident(&b.param);
                let ty = self.binding_type(b);
                quote!(#p: #ty)
            });
            let out = self.tool_output_type(t);
            let allow = many_args(t.bindings.len() + 3);
            let (ctx, args_name) = self.method_ctx_args(&t.bindings, "");
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

    /// The expression passing argument `name` of `owner` to a resolver parameter of type `ty`.
    fn arg_expr(
        &self,
        owner: Owner<'_>,
        r: &ResolverPlan,
        name: &str,
        ty: &ArgTypeView,
        always: bool,
    ) -> TokenStream {
        let field = match owner {
            Owner::Tool(t) => self.types.arg_field(&t.name, name),
            Owner::Prompt(p) => self.types.prompt_arg_field(&p.name, name),
        };
        let Some(field) = field else {
            return quote!(compile_error!("argument field not found"));
        };
        let f = ident(&field.ident);
        // The field is an `Option` (`optional`); the parameter is one when `option`, which
        // `optional` implies.
        let optional = field.optional;
        let option = self.arg_is_option(r, name, always);
        match ty {
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
            _ if optional && derefs(&field.inner) => quote!(args.#f.as_deref()),
            _ if optional => quote!(args.#f.as_ref()),
            _ if option && derefs(&field.inner) => quote!(Some(&*args.#f)),
            _ if option => quote!(Some(&args.#f)),
            _ => quote!(&args.#f),
        }
    }

    /// The `<Prompt>Arguments` type of a prompt written in code, when it takes arguments.
    pub fn prompt_args_type(&self, p: &PromptPlan) -> Option<TokenStream> {
        self.types.prompt_args.get(&p.name).cloned()
    }

    fn call_fn(&self, owner: Owner<'_>) -> TokenStream {
        let (fname, method, bindings, run_order, bound, response) = match owner {
            Owner::Tool(t) => (
                format_ident!("call_{}", names::fn_name(&t.name)),
                fn_ident(&t.name),
                &t.bindings,
                &t.run_order,
                quote!(Tools),
                quote!(CallToolResponse),
            ),
            Owner::Prompt(p) => (
                format_ident!("get_{}", names::fn_name(&p.name)),
                fn_ident(&p.name),
                &p.bindings,
                &p.run_order,
                quote!(Prompts),
                quote!(GetPromptResponse),
            ),
        };
        let (args_param, args_arg) = match owner {
            Owner::Tool(t) => {
                let ty = &self.types.args[&t.name];
                (quote!(args: #ty,), quote!(args,))
            }
            Owner::Prompt(p) => match self.prompt_args_type(p) {
                Some(ty) => (quote!(args: #ty,), quote!(args,)),
                None => (quote!(), quote!()),
            },
        };
        let finish = |call: TokenStream| match owner {
            Owner::Tool(t) => {
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
            Owner::Prompt(_) => {
                let awaited = awaited(&call, &format_ident!("prompt"), &format_ident!("messages"));
                quote! {
                    #awaited
                    runtime::prompt_output(messages)
                }
            }
        };
        if run_order.is_empty() {
            let body = finish(quote!(#bound::#method(state, ctx, #args_arg)));
            return quote! {
                async fn #fname<S: #bound>(state: &S, ctx: &Context, #args_param) -> Result<#response, ToolError> {
                    #body
                }
            };
        }
        let slot = |name: &str| format_ident!("r_{}", names::fn_name(name));
        let mut steps = Vec::new();
        for rname in run_order {
            let r = self.resolver(rname);
            let s = slot(rname);
            let sty = self.slot_type(r);
            let rfn = fn_ident(rname);
            let deps: Vec<(&str, &str)> = r
                .params
                .iter()
                .filter_map(|p| match p {
                    ResolverParam::Resolver { name, resolver } => {
                        Some((name.as_str(), resolver.as_str()))
                    }
                    _ => None,
                })
                .collect();
            // The value of a resolver-valued parameter is bound under the parameter's name,
            // stepping aside from the locals of this function and the other parameters.
            let spec_names = Self::resolver_param_names(r);
            let bound_as = |param: &str| {
                let own = names::fn_name(param);
                let others = spec_names.iter().map(String::as_str).filter(|n| *n != own);
                let taken = CALL_LOCALS.iter().copied().chain(others);
                ident(&names::free(&own, taken))
            };
            let call_args = r.params.iter().filter_map(|p| match p {
                ResolverParam::Arg { name, ty, always } => {
                    Some(self.arg_expr(owner, r, name, ty, *always))
                }
                ResolverParam::Context { .. } => None,
                ResolverParam::Resolver { name, resolver } => {
                    let b = bound_as(name);
                    if self.resolver(resolver).asks == Some(Asks::Elicit) {
                        let pname = name.as_str();
                        Some(quote!(#b.value(#pname)?))
                    } else {
                        Some(quote!(#b))
                    }
                }
            });
            let call = quote!(Resolvers::#rfn(state, ctx, #(#call_args),*).await?);
            let ready = match r.asks {
                None => quote!(Slot::Ready(#call)),
                Some(Asks::Elicit) => quote!(round.elicit(#rname, #call).await?),
                Some(Asks::Sample) => quote!(round.sample(#rname, #call).await?),
                Some(Asks::Roots) => quote!(round.roots(#rname, #call).await?),
            };
            if deps.is_empty() {
                steps.push(quote!(let #s: Slot<#sty> = #ready;));
            } else {
                let scrut = deps.iter().map(|(_, d)| {
                    let ds = slot(d);
                    quote!(&#ds)
                });
                let pats = deps.iter().map(|(p, _)| {
                    let b = bound_as(p);
                    quote!(Slot::Ready(#b))
                });
                steps.push(quote! {
                    let #s: Slot<#sty> = match (#(#scrut,)*) {
                        (#(#pats,)*) => #ready,
                        _ => Slot::Pending,
                    };
                });
            }
        }
        // Every slot must be ready; those the method takes are bound, the others checked.
        let bound_names: Vec<&str> = bindings.iter().map(|b| b.resolver.as_str()).collect();
        let pats = run_order.iter().map(|rname| {
            if bound_names.contains(&rname.as_str()) {
                let s = slot(rname);
                quote!(Slot::Ready(#s))
            } else {
                quote!(Slot::Ready(_))
            }
        });
        let vals = run_order.iter().map(|rname| slot(rname));
        // Parameters; a resolver bound to several parameters is cloned for all but the last
        // (`Clone::clone(&..)`, which clippy accepts for the values that are `Copy` too).
        let resolved = bindings.iter().enumerate().map(|(i, b)| {
            let s = slot(&b.resolver);
            let later = bindings[i + 1..].iter().any(|o| o.resolver == b.resolver);
            let value = if later {
                quote!(Clone::clone(&#s))
            } else {
                quote!(#s)
            };
            let r = self.resolver(&b.resolver);
            if r.asks == Some(Asks::Elicit) && !b.outcome {
                let p = b.param.as_str();
                quote!(#value.into_value(#p)?)
            } else {
                value
            }
        });
        let body = finish(quote!(#bound::#method(state, ctx, #args_arg #(#resolved),*)));
        quote! {
            async fn #fname<S: #bound>(state: &S, ctx: &Context, #args_param) -> Result<#response, ToolError> {
                let round = Round::new(ctx);
                #(#steps)*
                let (#(#pats,)*) = (#(#vals,)*) else {
                    return round.input_required();
                };
                #body
            }
        }
    }

    /// The parameters of a prompt method after `ctx`, each name with `prefix`.
    pub fn prompt_params(&self, p: &PromptPlan, prefix: &str) -> Vec<TokenStream> {
        let (_, a) = self.method_ctx_args(&p.bindings, prefix);
        let args = self.prompt_args_type(p).map(|ty| quote!(#a: #ty));
        args.into_iter()
            .chain(p.bindings.iter().map(|b| {
                let name = ident(&format!("{prefix}{}", names::fn_name(&b.param)));
                let ty = self.binding_type(b);
                quote!(#name: #ty)
            }))
            .collect()
    }

    fn prompts_trait(&self) -> TokenStream {
        let methods = self.plan.prompts.iter().filter(|p| p.messages.is_none()).map(|p| {
            let name = fn_ident(&p.name);
            let docs = doc(&doc_text(&p.description));
            let params = self.prompt_params(p, "");
            let (ctx, _) = self.method_ctx_args(&p.bindings, "");
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

    /// The parameters of a resource-reading method after `ctx`, each name with `prefix`:
    /// none for a resource, the URI and the variables for a template.
    pub fn read_params(&self, template: Option<&str>, prefix: &str) -> Vec<TokenStream> {
        let Some(uri) = template else {
            return Vec::new();
        };
        let u = format_ident!("{prefix}uri");
        let v = format_ident!("{prefix}vars");
        let ty = &self.types.vars[uri];
        vec![quote!(#u: &str), quote!(#v: #ty)]
    }

    fn resources_trait(&self) -> TokenStream {
        let resources = self
            .plan
            .resources
            .iter()
            .filter(|r| matches!(r.content, ContentPlan::Code))
            .map(|r| {
                let name = ident(&names::read_fn_name(&r.name));
                let text = r
                    .description
                    .as_deref()
                    .map(doc_text)
                    .unwrap_or_else(|| format!("The resource `{}`.", r.name));
                let docs = doc(&format!("{text}\n\nReads `{}`.", r.uri));
                quote! {
                    #docs
                    fn #name(&self, ctx: &Context) -> impl Future<Output = Result<ResourceBody, ToolError>> + Send;
                }
            });
        let templates = self.plan.templates.iter().map(|t| {
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
            let docs = doc(&format!(
                "{text}\n\nReads URIs matching `{}`.{checked}",
                t.uri_template
            ));
            let params = self.read_params(Some(&t.uri_template), "");
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

    fn tool_defs(&self) -> TokenStream {
        let defs = self.plan.tools.iter().map(|t| {
            let name = &t.name;
            let title = opt_str(&t.title);
            let description = &t.description;
            let annotations = match &t.annotations {
                Some(a) => {
                    let l = json_lit(&serde_json::to_value(a).expect("annotations serialize"));
                    quote!(Some(#l))
                }
                None => quote!(None),
            };
            let input = json_lit(&t.input_schema);
            let output = match &t.output {
                None => quote!(None),
                Some(o) => {
                    let l = json_lit(&o.output_schema);
                    quote!(Some(#l))
                }
            };
            let resolved = t.bindings.iter().map(|b| b.param.as_str());
            quote! {
                ToolDef {
                    name: #name,
                    title: #title,
                    description: #description,
                    annotations: #annotations,
                    input_schema: #input,
                    output_schema: #output,
                    resolved: &[#(#resolved),*],
                },
            }
        });
        quote! {
            /// The tools, in spec order.
            const TOOLS: &[ToolDef] = &[#(#defs)*];
        }
    }

    fn prompt_defs(&self) -> TokenStream {
        let defs = self.plan.prompts.iter().map(|p| {
            let name = &p.name;
            let title = opt_str(&p.title);
            let description = &p.description;
            let arguments = p.arguments.iter().map(|a| {
                let n = &a.name;
                let title = opt_str(&a.title);
                let description = opt_str(&a.description);
                let required = a.required;
                let complete = &a.complete;
                quote! {
                    PromptArgDef {
                        name: #n,
                        title: #title,
                        description: #description,
                        required: #required,
                        complete: &[#(#complete),*],
                    },
                }
            });
            let messages = match &p.messages {
                None => quote!(None),
                Some(ms) => {
                    let ms = ms.iter().map(|m| {
                        let (role, content) = match m {
                            MessagePlan::Text { role, text } => {
                                (role, quote!(MessageContent::Text(#text)))
                            }
                            MessagePlan::Image { role, image } => {
                                let data = &image.data;
                                let mime = &image.mime_type;
                                (
                                    role,
                                    quote!(MessageContent::Image { data: #data, mime_type: #mime }),
                                )
                            }
                            MessagePlan::Resource { role, uri } => {
                                (role, quote!(MessageContent::Resource(#uri)))
                            }
                        };
                        let role = match role {
                            Role::User => quote!(MessageRole::User),
                            Role::Assistant => quote!(MessageRole::Assistant),
                        };
                        quote!(MessageDef { role: #role, content: #content },)
                    });
                    quote!(Some(&[#(#ms)*]))
                }
            };
            quote! {
                PromptDef {
                    name: #name,
                    title: #title,
                    description: #description,
                    arguments: &[#(#arguments)*],
                    messages: #messages,
                },
            }
        });
        quote! {
            /// The prompts, in spec order.
            const PROMPTS: &[PromptDef] = &[#(#defs)*];
        }
    }

    fn resource_defs(&self) -> TokenStream {
        let resources = self.plan.resources.iter().map(|r| {
            let uri = &r.uri;
            let name = &r.name;
            let title = opt_str(&r.title);
            let description = opt_str(&r.description);
            let mime = opt_str(&r.mime_type);
            let content = match &r.content {
                ContentPlan::Text(t) => quote!(StaticContent::Text(#t)),
                ContentPlan::Blob(b) => quote!(StaticContent::Blob(#b)),
                ContentPlan::Code => quote!(StaticContent::Code),
            };
            quote! {
                ResourceDef {
                    uri: #uri,
                    name: #name,
                    title: #title,
                    description: #description,
                    mime_type: #mime,
                    content: #content,
                },
            }
        });
        let templates = self.plan.templates.iter().map(|t| {
            let uri = &t.uri_template;
            let name = &t.name;
            let title = opt_str(&t.title);
            let description = opt_str(&t.description);
            let mime = opt_str(&t.mime_type);
            let complete = t
                .complete
                .iter()
                .map(|(var, values)| quote!((#var, &[#(#values),*]),));
            let exempt = &t.exempt_from_path_checks;
            quote! {
                TemplateDef {
                    uri_template: #uri,
                    name: #name,
                    title: #title,
                    description: #description,
                    mime_type: #mime,
                    complete: &[#(#complete)*],
                    exempt_from_path_checks: &[#(#exempt),*],
                },
            }
        });
        quote! {
            /// The fixed resources, in spec order.
            const RESOURCES: &[ResourceDef] = &[#(#resources)*];

            /// The resource templates, in spec order.
            const TEMPLATES: &[TemplateDef] = &[#(#templates)*];
        }
    }

    /// The `ServerHandler` methods for prompts, resources and completions the spec serves.
    fn extra_handlers(&self) -> TokenStream {
        let p = self.plan;
        let caps = &p.capabilities;
        let mut out = TokenStream::new();
        if caps.prompts {
            let arms = p.prompts.iter().map(|pr| {
                let n = &pr.name;
                if pr.messages.is_some() {
                    return quote!(#n => self.prompts.render(&name, arguments, &self.resources),);
                }
                let f = format_ident!("get_{}", names::fn_name(&pr.name));
                if self.prompt_args_type(pr).is_some() {
                    quote!(#n => self.prompts.run(&name, arguments, |args| #f(state, &ctx, args)).await,)
                } else {
                    quote!(#n => self.prompts.run(&name, arguments, |_: ::serde_json::Map<String, ::serde_json::Value>| #f(state, &ctx)).await,)
                }
            });
            let any_code = p.prompts.iter().any(|pr| pr.messages.is_none());
            let ctx = if any_code {
                quote! {
                    let ctx = Context::for_prompt(context, name.as_str(), input_responses, request_state);
                    let state = &*self.state;
                }
            } else {
                quote! {
                    let _ = (context, input_responses, request_state);
                }
            };
            out.extend(quote! {
                async fn list_prompts(
                    &self,
                    _request: Option<PaginatedRequestParams>,
                    _context: RequestContext<RoleServer>,
                ) -> Result<ListPromptsResult, ErrorData> {
                    Ok(self.prompts.list())
                }

                async fn get_prompt(
                    &self,
                    request: GetPromptRequestParams,
                    context: RequestContext<RoleServer>,
                ) -> Result<GetPromptResponse, ErrorData> {
                    let GetPromptRequestParams { name, arguments, input_responses, request_state, .. } = request;
                    // Verified before anything runs, whether or not this prompt needs it.
                    let request_state = runtime::verify_request_state("prompts/get", &name, arguments.as_ref(), request_state)?;
                    #ctx
                    match name.as_str() {
                        #(#arms)*
                        _ => Err(runtime::unknown_prompt(&name)),
                    }
                }
            });
        }
        if caps.resources {
            let readers: Vec<TokenStream> = p
                .resources
                .iter()
                .filter(|r| matches!(r.content, ContentPlan::Code))
                .map(|r| {
                    let n = &r.name;
                    let f = ident(&names::read_fn_name(&r.name));
                    quote!(#n => Resources::#f(state, &ctx).await,)
                })
                .chain(p.templates.iter().map(|t| {
                    let n = &t.name;
                    let f = ident(&names::read_fn_name(&t.name));
                    quote! {
                        #n => match runtime::template_vars(vars) {
                            Ok(vars) => Resources::#f(state, &ctx, &uri, vars).await,
                            Err(e) => return Err(e),
                        },
                    }
                }))
                .collect();
            let code_arm = if readers.is_empty() {
                quote! {
                    Lookup::Code { name, .. } => {
                        let _ = (context, request_state);
                        Err(ErrorData::internal_error(format!("no reader for resource `{name}`"), None))
                    }
                }
            } else {
                let vars = if p.templates.is_empty() {
                    quote!(..)
                } else {
                    quote!(vars)
                };
                quote! {
                    Lookup::Code { name, #vars } => {
                        let ctx = Context::for_resource(context, uri.as_str(), request_state);
                        let state = &*self.state;
                        let body = match name {
                            #(#readers)*
                            other => Err(ToolError::internal(format!("no reader for resource `{other}`"))),
                        };
                        self.resources.respond(&uri, name, body)
                    }
                }
            };
            out.extend(quote! {
                async fn list_resources(
                    &self,
                    _request: Option<PaginatedRequestParams>,
                    _context: RequestContext<RoleServer>,
                ) -> Result<ListResourcesResult, ErrorData> {
                    Ok(self.resources.list())
                }

                async fn list_resource_templates(
                    &self,
                    _request: Option<PaginatedRequestParams>,
                    _context: RequestContext<RoleServer>,
                ) -> Result<ListResourceTemplatesResult, ErrorData> {
                    Ok(self.resources.templates())
                }

                async fn read_resource(
                    &self,
                    request: ReadResourceRequestParams,
                    context: RequestContext<RoleServer>,
                ) -> Result<ReadResourceResponse, ErrorData> {
                    let ReadResourceRequestParams { uri, request_state, .. } = request;
                    // Verified before anything runs, whether or not this resource needs it.
                    let request_state = runtime::verify_request_state("resources/read", &uri, None, request_state)?;
                    match self.resources.lookup(&uri)? {
                        Lookup::Fixed(response) => Ok(response),
                        #code_arm
                    }
                }
            });
        }
        if caps.completions {
            out.extend(quote! {
                async fn complete(
                    &self,
                    request: CompleteRequestParams,
                    _context: RequestContext<RoleServer>,
                ) -> Result<CompleteResult, ErrorData> {
                    runtime::complete(&self.prompts, &self.resources, &request)
                }
            });
        }
        out
    }

    /// Every type that can be asked for with a form, each once, with the `requestedSchema`
    /// sent for it ([`crate::plan::form_document`]).
    pub fn forms_of(&self) -> Vec<(TokenStream, Value)> {
        let mut seen = std::collections::HashSet::new();
        let defs = self
            .plan
            .defs
            .iter()
            .filter(|(_, s)| is_flat_form(self.plan, s))
            .map(|(name, schema)| (self.types.defs[name].clone(), schema.clone()));
        // An elicit resolver's inline form (a `$ref` form is one of the defs above).
        let inline = self
            .plan
            .resolvers
            .iter()
            .filter(|r| r.asks == Some(Asks::Elicit))
            .filter_map(|r| {
                let schema = r.returns.as_ref()?;
                if schema.get("$ref").is_some() {
                    return None;
                }
                Some((self.types.returns[&r.name].clone(), schema.clone()))
            });
        defs.chain(inline)
            .filter(|(ty, _)| seen.insert(ty.to_string()))
            .map(|(ty, schema)| (ty, crate::plan::form_document(&self.plan.defs, &schema)))
            .collect()
    }

    fn forms(&self) -> TokenStream {
        let impls = self.forms_of().into_iter().map(|(ty, schema)| {
            let lit = json_lit(&schema);
            quote! {
                impl Form for #ty {
                    const SCHEMA: &'static str = #lit;
                }
            }
        });
        quote!(#(#impls)*)
    }

    fn module(&self) -> TokenStream {
        let p = self.plan;
        let caps = &p.capabilities;
        let code_prompts = p.prompts.iter().any(|pr| pr.messages.is_none());
        let code_resources = p
            .resources
            .iter()
            .any(|r| matches!(r.content, ContentPlan::Code))
            || !p.templates.is_empty();
        let mut traits = vec!["[`Resolvers`]", "[`Tools`]"];
        if code_prompts {
            traits.push("[`Prompts`]");
        }
        if p.resources
            .iter()
            .any(|r| matches!(r.content, ContentPlan::Code))
            || !p.templates.is_empty()
        {
            traits.push("[`Resources`]");
        }
        let traits = match traits.split_last() {
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let module_doc_text = format!(
            " MCP server `{}` {}: definitions, argument types, the {traits}\n traits that `src/handlers.rs` implements, and the `ServerHandler` that runs them.",
            p.name, p.version
        );
        let module_doc = module_doc_text.lines().map(|l| quote!(#![doc = #l]));
        let catalogs = caps.prompts || caps.resources || caps.completions;
        let uses_round = p.tools.iter().any(|t| !t.run_order.is_empty())
            || p.prompts.iter().any(|pr| !pr.run_order.is_empty());
        let mut runtime_names: Vec<&str> = vec!["Capabilities", "Catalog", "ServerMeta", "ToolDef"];
        if uses_round {
            runtime_names.extend(["Round", "Slot"]);
        }
        if catalogs {
            runtime_names.extend(["PromptCatalog", "ResourceCatalog"]);
        }
        if caps.prompts {
            runtime_names.push("PromptDef");
            if p.prompts.iter().any(|pr| !pr.arguments.is_empty()) {
                runtime_names.push("PromptArgDef");
            }
            let messages: Vec<&MessagePlan> = p
                .prompts
                .iter()
                .flat_map(|pr| pr.messages.iter().flatten())
                .collect();
            if !messages.is_empty() {
                runtime_names.extend(["MessageContent", "MessageDef", "MessageRole"]);
            }
        }
        if caps.resources {
            runtime_names.extend(["Lookup", "ResourceDef", "TemplateDef"]);
            if !p.resources.is_empty() {
                runtime_names.push("StaticContent");
            }
        }
        runtime_names.sort_unstable();
        let runtime_idents = runtime_names.iter().map(|n| format_ident!("{n}"));
        let runtime_use = quote!(use self::runtime::{#(#runtime_idents),*};);
        let mut rmcp_names: Vec<&str> = vec![
            "CallToolRequestParams",
            "CallToolResponse",
            "ListToolsResult",
            "PaginatedRequestParams",
            "ServerConfig",
            "Tool",
        ];
        if caps.prompts {
            rmcp_names.extend([
                "GetPromptRequestParams",
                "GetPromptResponse",
                "ListPromptsResult",
            ]);
        } else if code_prompts {
            rmcp_names.push("GetPromptResponse");
        }
        if caps.resources {
            rmcp_names.extend([
                "ListResourceTemplatesResult",
                "ListResourcesResult",
                "ReadResourceRequestParams",
                "ReadResourceResponse",
            ]);
        }
        if caps.completions {
            rmcp_names.extend(["CompleteRequestParams", "CompleteResult"]);
        }
        rmcp_names.sort_unstable();
        let rmcp_idents = rmcp_names.iter().map(|n| format_ident!("{n}"));
        let capabilities = {
            let (pr, re, co, lo) = (caps.prompts, caps.resources, caps.completions, caps.logging);
            let n = &caps.notifications;
            let (t, pl, rl, rs) = (
                n.tools_list_changed,
                n.prompts_list_changed,
                n.resources_list_changed,
                n.resource_subscriptions,
            );
            quote! {
                Capabilities {
                    prompts: #pr,
                    resources: #re,
                    completions: #co,
                    logging: #lo,
                    tools_list_changed: #t,
                    prompts_list_changed: #pl,
                    resources_list_changed: #rl,
                    resource_subscriptions: #rs,
                }
            }
        };
        let prompt_defs = if caps.prompts {
            self.prompt_defs()
        } else {
            quote!()
        };
        let resource_defs = if caps.resources {
            self.resource_defs()
        } else {
            quote!()
        };
        let prompts_trait = if code_prompts {
            self.prompts_trait()
        } else {
            quote!()
        };
        let resources_trait = if code_resources {
            self.resources_trait()
        } else {
            quote!()
        };
        let mut bound = vec![quote!(Tools)];
        if code_prompts {
            bound.push(quote!(Prompts));
        }
        if code_resources {
            bound.push(quote!(Resources));
        }
        let bound = quote!(#(#bound)+*);
        let (catalog_fields, catalog_clones, catalog_new) = if catalogs {
            let prompts = if caps.prompts {
                quote!(PROMPTS)
            } else {
                quote!(&[])
            };
            let (resources, templates) = if caps.resources {
                (quote!(RESOURCES), quote!(TEMPLATES))
            } else {
                (quote!(&[]), quote!(&[]))
            };
            (
                quote! {
                    prompts: Arc<PromptCatalog>,
                    resources: Arc<ResourceCatalog>,
                },
                quote! {
                    prompts: Arc::clone(&self.prompts),
                    resources: Arc::clone(&self.resources),
                },
                quote! {
                    prompts: Arc::new(PromptCatalog::new(#prompts)),
                    resources: Arc::new(ResourceCatalog::new(#resources, #templates)),
                },
            )
        } else {
            (quote!(), quote!(), quote!())
        };
        let extra_handlers = self.extra_handlers();
        let forms = self.forms();
        let name = &p.name;
        let version = &p.version;
        let title = opt_str(&p.title);
        let instructions = opt_str(&p.instructions);
        let tools = self.tool_defs();
        let resolvers_trait = self.resolvers_trait();
        let tools_trait = self.tools_trait();
        let serve_doc = format!(
            " Serves `state` as the `{}` MCP server (command line: `--transport stdio|http`, ...).",
            p.name
        );
        let arms = p.tools.iter().map(|t| {
            let n = &t.name;
            let f = format_ident!("call_{}", names::fn_name(&t.name));
            // `run` boxes the call's future: the request future holds a pointer, not the state
            // machine of the largest tool.
            quote! {
                #n => catalog.run(&name, arguments, |args| #f(state, &ctx, args)).await,
            }
        });
        let calls = p.tools.iter().map(|t| self.call_fn(Owner::Tool(t))).chain(
            p.prompts
                .iter()
                .filter(|p| p.messages.is_none())
                .map(|p| self.call_fn(Owner::Prompt(p))),
        );
        quote! {
            #(#module_doc)*

            pub mod runtime;

            use std::{future::Future, process::ExitCode, sync::Arc};

            use rmcp::{
                ErrorData, RoleServer, ServerHandler,
                model::{#(#rmcp_idents),*},
                service::RequestContext,
            };

            #[allow(unused_imports)]
            pub use self::runtime::{Ask, Context, Form, Outcome, ResourceBody, ToolError, model::*};
            #runtime_use

            /// Types of the spec's `$defs` and of every tool's arguments.
            #[allow(clippy::all, unused_imports, dead_code)]
            pub mod types {}

            #forms

            /// The server's identity.
            const META: ServerMeta = ServerMeta {
                name: #name,
                version: #version,
                title: #title,
                instructions: #instructions,
                capabilities: #capabilities,
            };

            #tools

            #prompt_defs

            #resource_defs

            #resolvers_trait

            #tools_trait

            #prompts_trait

            #resources_trait

            #[doc = #serve_doc]
            pub fn serve<S: #bound>(state: S) -> ExitCode {
                runtime::serve(Server::new(state))
            }

            /// The `ServerHandler` for a user state `S`.
            pub struct Server<S> {
                state: Arc<S>,
                catalog: Arc<Catalog>,
                #catalog_fields
            }

            impl<S> Clone for Server<S> {
                fn clone(&self) -> Self {
                    Server {
                        state: Arc::clone(&self.state),
                        catalog: Arc::clone(&self.catalog),
                        #catalog_clones
                    }
                }
            }

            impl<S: #bound> Server<S> {
                /// Builds the handler (compiles every input schema once).
                pub fn new(state: S) -> Self {
                    Server {
                        state: Arc::new(state),
                        catalog: Arc::new(Catalog::new(TOOLS)),
                        #catalog_new
                    }
                }
            }

            impl<S: #bound> ServerHandler for Server<S> {
                fn get_info(&self) -> ServerConfig {
                    runtime::server_config(&META)
                }

                async fn list_tools(
                    &self,
                    _request: Option<PaginatedRequestParams>,
                    _context: RequestContext<RoleServer>,
                ) -> Result<ListToolsResult, ErrorData> {
                    Ok(ListToolsResult::with_all_items(self.catalog.tools()))
                }

                fn get_tool(&self, name: &str) -> Option<Tool> {
                    self.catalog.get(name)
                }

                async fn call_tool(
                    &self,
                    request: CallToolRequestParams,
                    context: RequestContext<RoleServer>,
                ) -> Result<CallToolResponse, ErrorData> {
                    let CallToolRequestParams { name, arguments, input_responses, request_state, .. } = request;
                    // Verified before anything runs, whether or not this tool needs it.
                    let request_state = runtime::verify_request_state("tools/call", &name, arguments.as_ref(), request_state)?;
                    let ctx = Context::new(context, name.as_ref(), input_responses, request_state);
                    let state = &*self.state;
                    let catalog = &*self.catalog;
                    match name.as_ref() {
                        #(#arms)*
                        _ => Err(runtime::unknown_tool(&name)),
                    }
                }

                #extra_handlers
            }

            #(#calls)*
        }
    }
}

/// A tool or prompt: what runs resolvers before a user method.
#[derive(Clone, Copy)]
enum Owner<'p> {
    Tool(&'p ToolPlan),
    Prompt(&'p PromptPlan),
}

/// `#[allow(clippy::too_many_arguments)]` when a signature has more than clippy's seven
/// arguments (the spec decides how many parameters a tool or resolver takes).
fn many_args(count: usize) -> TokenStream {
    if count > 7 {
        quote!(#[allow(clippy::too_many_arguments)])
    } else {
        quote!()
    }
}

/// `let value = call.await?;`, or, when the call does not fit on the line, `let future = call;`
/// then `let value = future.await?;`: prettyplease indents the arguments of a call that is
/// wrapped in front of `.await` by an extra level, which reads as a mistake.
fn awaited(call: &TokenStream, future: &Ident, value: &Ident) -> TokenStream {
    // The call's width as printed: its text without the spaces `to_string` puts between
    // tokens and without a trailing comma, plus one space after each comma.
    let compact: String = call
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .replace(",)", ")");
    let width = compact.chars().count() + compact.matches(',').count();
    // Four columns of indentation and `let value = ` in front, within prettyplease's 89
    // columns (`.await?;` may go to the next line; that reads well).
    if 4 + "let  = ".len() + value.to_string().len() + width <= 89 {
        quote!(let #value = #call.await?;)
    } else {
        quote! {
            let #future = #call;
            let #value = #future.await?;
        }
    }
}

/// True when `schema` is an object whose properties are all primitives (an elicitation form).
fn is_flat_form(plan: &Plan, schema: &Value) -> bool {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return false;
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return false;
    };
    props.values().all(|p| {
        let p = match p
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            Some(n) => match plan.defs.get(n) {
                Some(d) => d,
                None => return false,
            },
            None => p,
        };
        match p.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "string" | "number" | "integer" | "boolean" => true,
                "array" => p
                    .get("items")
                    .is_some_and(|i| i.get("enum").is_some() || i.get("anyOf").is_some()),
                _ => false,
            },
            None => p.get("enum").is_some(),
            _ => false,
        }
    })
}

/// `src/generated/mod.rs` for a checked spec, formatted.
pub fn generated_module(plan: &Plan, types: &TypeSet) -> Result<String, String> {
    use crate::emit::print;
    let internal = |e: syn::Error| format!("internal error: generated code does not parse: {e}");
    // typify's types (a third of a large module) are formatted on a second thread while this
    // one builds and formats the rest; token streams cannot cross threads, their text can.
    let types_text = types.tokens.to_string();
    let types_body =
        std::thread::spawn(move || print::lex(&types_text).and_then(print::format_module_body));
    let mut types_body = Some(types_body);
    let mut body = || match types_body.take().map(std::thread::JoinHandle::join) {
        Some(Ok(result)) => result,
        _ => Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "formatting the types failed",
        )),
    };
    let tokens = Signatures { plan, types }.module();
    let text = print::format_file_with(tokens, Some(("types", &mut body))).map_err(internal)?;
    Ok(readable(&text))
}

/// Makes prettyplease's output easier to read: a blank line between items (as rustfmt keeps
/// them when people write them), and prelude names instead of `::std::` paths outside the
/// `types` module.
pub fn readable(code: &str) -> String {
    let mut out = String::with_capacity(code.len() + code.len() / 8);
    let mut prev = "";
    let mut in_types = false;
    for line in code.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let starts_item = [
            "fn ",
            "async fn ",
            "pub ",
            "impl",
            "#[",
            "///",
            "mod ",
            "const ",
            "struct ",
            "enum ",
            "trait ",
            "use ",
            "#![",
            "type ",
        ]
        .iter()
        .any(|p| trimmed.starts_with(p));
        let prev_trim = prev.trim_start();
        let prev_indent = prev.len() - prev_trim.len();
        let prev_ends_item = (prev_trim == "}"
            || prev_trim == "};"
            || prev_trim.ends_with(";")
            || prev_trim.ends_with("{}"))
            && prev_indent <= indent;
        let prev_is_attr_or_doc = prev_trim.starts_with("#[") || prev_trim.starts_with("///");
        let prev_use = prev_trim.starts_with("use ") || prev_trim.starts_with("pub use ");
        let this_use = trimmed.starts_with("use ") || trimmed.starts_with("pub use ");
        let after_inner_doc = prev_trim.starts_with("//!") && !trimmed.starts_with("//!");
        let between_items = starts_item
            && prev_ends_item
            && !prev_is_attr_or_doc
            && !(prev_use && this_use && indent == prev_indent);
        // A statement inside a body (`let ..;`) is not an item boundary.
        let inside_body = prev_trim.ends_with(';') && indent > prev_indent;
        let body_statement = prev_trim.ends_with(';') && !prev_use && indent > 0 && !starts_item;
        if !prev.is_empty() && (between_items || after_inner_doc) && !inside_body && !body_statement
        {
            out.push('\n');
        }
        if trimmed.starts_with("pub mod types {") {
            in_types = true;
        }
        if in_types {
            out.push_str(line);
        } else {
            out.push_str(
                &line
                    .replace("::std::string::String", "String")
                    .replace("::std::option::Option", "Option")
                    .replace("::std::vec::Vec", "Vec"),
            );
        }
        out.push('\n');
        if in_types && line == "}" {
            in_types = false;
        }
        prev = line;
    }
    out
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
}
