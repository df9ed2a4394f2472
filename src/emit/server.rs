//! The spec-dependent server code: `src/generated/mod.rs` of a generated crate. Built as
//! tokens, formatted with prettyplease. The fixed runtime it calls lives in `runtime/`.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

use crate::emit::types::TypeSet;
use crate::names;
use crate::plan::{ArgTypeView, BindingPlan, Plan, ResolverParam, ResolverPlan, ToolPlan};
use crate::spec::Asks;

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

fn json_lit(v: &Value) -> Literal {
    raw_str(&v.to_string())
}

fn doc(text: &str) -> TokenStream {
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

    /// The type a resolver method returns inside `Result`.
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
        if always { base } else { quote!(Option<#base>) }
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
            let mut text = r.description.clone().unwrap_or_else(|| format!("Resolver `{}`.", r.name));
            match r.asks {
                Some(Asks::Elicit) => text.push_str("\n\nAsks `elicit`: return `Ask::value(..)`, or `Ask::elicit(message)` to ask the user."),
                Some(Asks::Sample) => text.push_str("\n\nAsks `sample`: return `Ask::value(..)`, or `Ask::sample(messages, max_tokens)`."),
                Some(Asks::Roots) => text.push_str("\n\nAsks `roots`: return `Ask::value(..)`, or `Ask::roots()` to ask the client."),
                None => {}
            }
            let docs = doc(&text);
            let params = self.resolver_params(r, "");
            let ret = self.method_return(r);
            let allow = many_args(params.len() + 2);
            quote! {
                #docs
                #allow
                fn #name(&self, ctx: &Context, #(#params),*) -> impl Future<Output = Result<#ret, ToolError>> + Send;
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
            let docs = doc(&t.description);
            let args = &self.types.args[&t.name];
            let params = t.bindings.iter().map(|b| {
                let p = fn_ident(&b.param);
                let ty = self.binding_type(b);
                quote!(#p: #ty)
            });
            let out = self.tool_output_type(t);
            let allow = many_args(t.bindings.len() + 3);
            quote! {
                #docs
                #allow
                fn #name(&self, ctx: &Context, args: #args, #(#params),*) -> impl Future<Output = Result<#out, ToolError>> + Send;
            }
        });
        quote! {
            /// One method per tool; resolved parameters arrive already resolved, in spec order.
            pub trait Tools: Resolvers {
                #(#methods)*
            }
        }
    }

    /// The expression passing tool argument `name` to resolver parameter of type `ty`.
    fn arg_expr(&self, tool: &ToolPlan, name: &str, ty: &ArgTypeView, always: bool) -> TokenStream {
        let Some(field) = self.types.arg_field(&tool.name, name) else {
            return quote!(compile_error!("argument field not found"));
        };
        let f = ident(&field.ident);
        let optional = field.optional;
        match ty {
            ArgTypeView::Primitive(p) => match (p.as_str(), optional || !always) {
                ("string", false) => quote!(args.#f.as_str()),
                ("string", true) => quote!(args.#f.as_ref().map(|v| v.as_str())),
                ("integer", false) => quote!(runtime::int_arg(args.#f)),
                ("integer", true) => quote!(args.#f.map(runtime::int_arg)),
                _ => quote!(args.#f),
            },
            _ if optional => quote!(args.#f.as_ref()),
            _ => quote!(&args.#f),
        }
    }

    fn call_fn(&self, t: &ToolPlan) -> TokenStream {
        let fname = format_ident!("call_{}", names::fn_name(&t.name));
        let method = fn_ident(&t.name);
        let args_ty = &self.types.args[&t.name];
        let output = match &t.output {
            Some(o) if o.wrapped => quote!(runtime::wrapped_output(&output)),
            Some(_) => quote!(runtime::object_output(&output)),
            None => quote!(runtime::content_output(output)),
        };
        if t.run_order.is_empty() {
            return quote! {
                async fn #fname<S: Tools>(state: &S, ctx: &Context, args: #args_ty) -> Result<CallToolResponse, ToolError> {
                    let output = Tools::#method(state, ctx, args).await?;
                    #output
                }
            };
        }
        let slot = |name: &str| format_ident!("r_{}", names::fn_name(name));
        let mut steps = Vec::new();
        for rname in &t.run_order {
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
            let call_args = r.params.iter().filter_map(|p| match p {
                ResolverParam::Arg { name, ty, always } => {
                    Some(self.arg_expr(t, name, ty, *always))
                }
                ResolverParam::Context { .. } => None,
                ResolverParam::Resolver { name, resolver } => {
                    let b = fn_ident(name);
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
                    let b = fn_ident(p);
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
        // Every slot must be ready; those the tool takes are bound, the others checked.
        let bound: Vec<&str> = t.bindings.iter().map(|b| b.resolver.as_str()).collect();
        let pats = t.run_order.iter().map(|rname| {
            if bound.contains(&rname.as_str()) {
                let s = slot(rname);
                quote!(Slot::Ready(#s))
            } else {
                quote!(Slot::Ready(_))
            }
        });
        let vals = t.run_order.iter().map(|rname| slot(rname));
        // Tool parameters; a resolver bound to several parameters is cloned for all but the last.
        let tool_args = t.bindings.iter().enumerate().map(|(i, b)| {
            let s = slot(&b.resolver);
            let later = t.bindings[i + 1..].iter().any(|o| o.resolver == b.resolver);
            let value = if later {
                quote!(#s.clone())
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
        quote! {
            async fn #fname<S: Tools>(state: &S, ctx: &Context, args: #args_ty) -> Result<CallToolResponse, ToolError> {
                let round = Round::new(ctx);
                #(#steps)*
                let (#(#pats,)*) = (#(#vals,)*) else {
                    return round.input_required();
                };
                let output = Tools::#method(state, ctx, args, #(#tool_args),*).await?;
                #output
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
                None => quote!(Output::None),
                Some(o) if o.wrapped => {
                    let l = json_lit(&crate::plan::self_contained(&self.plan.defs, &o.schema));
                    quote!(Output::Wrapped(#l))
                }
                Some(o) => {
                    let l = json_lit(&o.output_schema);
                    quote!(Output::Object(#l))
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
                    output: #output,
                    resolved: &[#(#resolved),*],
                },
            }
        });
        quote! {
            /// The tools, in spec order.
            const TOOLS: &[ToolDef] = &[#(#defs)*];
        }
    }

    fn forms(&self) -> TokenStream {
        let impls = self
            .plan
            .defs
            .iter()
            .filter(|(_, s)| is_flat_form(self.plan, s))
            .map(|(name, schema)| {
                let ty = &self.types.defs[name];
                let lit = json_lit(schema);
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
        let module_doc_text = format!(
            " MCP server `{}` {}: tool definitions, argument types, the [`Resolvers`] and\n [`Tools`] traits that `src/handlers.rs` implements, and the `ServerHandler` that runs them.",
            p.name, p.version
        );
        let module_doc = module_doc_text.lines().map(|l| quote!(#![doc = #l]));
        let uses_round = p.tools.iter().any(|t| !t.run_order.is_empty());
        let runtime_use = if uses_round {
            quote!(
                use self::runtime::{Catalog, Output, Round, ServerMeta, Slot, ToolDef};
            )
        } else {
            quote!(
                use self::runtime::{Catalog, Output, ServerMeta, ToolDef};
            )
        };
        let type_tokens = &self.types.tokens;
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
            // Boxed: the spawned request future then holds a pointer, not the state machine of
            // the largest tool (which tokio would copy on every request).
            quote! {
                #n => Box::pin(catalog.run(&name, arguments, |args| #f(state, &ctx, args))).await,
            }
        });
        let calls = p.tools.iter().map(|t| self.call_fn(t));
        quote! {
            #(#module_doc)*

            pub mod runtime;

            use std::{future::Future, process::ExitCode, sync::Arc};

            use rmcp::{
                ErrorData, RoleServer, ServerHandler,
                model::{CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams, ServerConfig, Tool},
                service::RequestContext,
            };

            #[allow(unused_imports)]
            pub use self::runtime::{Ask, Context, Form, Outcome, ToolError, model::*};
            #runtime_use

            /// Types of the spec's `$defs` and of every tool's arguments.
            #[allow(clippy::all, unused_imports, dead_code)]
            pub mod types {
                #type_tokens
            }

            #forms

            /// The server's identity.
            const META: ServerMeta = ServerMeta {
                name: #name,
                version: #version,
                title: #title,
                instructions: #instructions,
            };

            #tools

            #resolvers_trait

            #tools_trait

            #[doc = #serve_doc]
            pub fn serve<S: Tools>(state: S) -> ExitCode {
                runtime::serve(Server::new(state))
            }

            /// The `ServerHandler` for a user state `S`.
            pub struct Server<S> {
                state: Arc<S>,
                catalog: Arc<Catalog>,
            }

            impl<S> Clone for Server<S> {
                fn clone(&self) -> Self {
                    Server {
                        state: Arc::clone(&self.state),
                        catalog: Arc::clone(&self.catalog),
                    }
                }
            }

            impl<S: Tools> Server<S> {
                /// Builds the handler (compiles every input schema once).
                pub fn new(state: S) -> Self {
                    Server {
                        state: Arc::new(state),
                        catalog: Arc::new(Catalog::new(TOOLS)),
                    }
                }
            }

            impl<S: Tools> ServerHandler for Server<S> {
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
                    let ctx = Context::new(context, name.as_ref(), input_responses, request_state);
                    let state = &*self.state;
                    let catalog = &*self.catalog;
                    match name.as_ref() {
                        #(#arms)*
                        _ => Err(runtime::unknown_tool(&name)),
                    }
                }
            }

            #(#calls)*
        }
    }
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
    let tokens = Signatures { plan, types }.module();
    let file: syn::File = syn::parse2(tokens)
        .map_err(|e| format!("internal error: generated code does not parse: {e}"))?;
    Ok(readable(&prettyplease::unparse(&file)))
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
