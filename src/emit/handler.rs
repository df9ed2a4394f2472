//! The generated `Handler<S>` (which `Server<S>` completes, see `emit::service`) and its
//! `ServerHandler` impl: dispatch of tools, prompts, resources and completions to the generated
//! call functions and the catalogs.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::emit::idents::ident;
use crate::emit::module::Parts;
use crate::emit::signatures::Signatures;
use crate::names;

impl Signatures<'_> {
    /// The public faces (`emit::service`), `Handler<S>` and its `ServerHandler` impl.
    pub(crate) fn server(&self, parts: &Parts) -> TokenStream {
        let bound = parts.bound();
        let generated_fns = [self.access_fn(), self.operations_fn()];
        let service = crate::emit::service::items(
            &self.model.name,
            &self.model.limits.sessions_phrase(),
            &bound,
            generated_fns,
        );
        let server = self.server_struct(parts, &bound);
        let handler = self.handler_impl(&bound);
        quote! {
            #service

            #server

            #handler
        }
    }

    /// `Handler<S>`: the user's state and the catalogs, shared by every clone.
    fn server_struct(&self, parts: &Parts, bound: &TokenStream) -> TokenStream {
        let caps = &self.model.capabilities;
        let (catalog_fields, catalog_clones, catalog_new) = if parts.catalogs {
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
        quote! {
            /// The generated dispatch of the spec's tools, prompts and resources for a user state
            /// `S`: the `ServerHandler` that [`Server`] completes (serve that one).
            pub struct Handler<S> {
                state: Arc<S>,
                catalog: Arc<Catalog>,
                #catalog_fields
            }

            impl<S> Clone for Handler<S> {
                fn clone(&self) -> Self {
                    Handler {
                        state: Arc::clone(&self.state),
                        catalog: Arc::clone(&self.catalog),
                        #catalog_clones
                    }
                }
            }

            impl<S: #bound> Handler<S> {
                /// Builds the handler (compiles every input schema once).
                pub fn new(state: S) -> Self {
                    Handler {
                        state: Arc::new(state),
                        catalog: Arc::new(Catalog::new(TOOLS)),
                        #catalog_new
                    }
                }
            }
        }
    }

    /// `impl ServerHandler for Handler<S>`: the tools, then what the spec serves besides.
    fn handler_impl(&self, bound: &TokenStream) -> TokenStream {
        let p = self.model;
        let arms = p.tools.iter().map(|t| {
            let n = &t.name;
            let f = format_ident!("call_{}", names::fn_name(&t.name));
            // `run` boxes the call's future: the request future holds a pointer, not the state
            // machine of the largest tool.
            quote! {
                #n => catalog.run(&name, arguments, |args| #f(state, &ctx, args)).await,
            }
        });
        let prompts = self.prompt_handlers();
        let resources = self.resource_handlers();
        let completions = self.completion_handler();
        quote! {
            impl<S: #bound> ServerHandler for Handler<S> {
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
                    let request_state = runtime::verify_request_state("tools/call", &name, arguments.as_ref(), request_state, &context)?;
                    let ctx = Context::new(context, name.as_ref(), input_responses, request_state);
                    let state = &*self.state;
                    let catalog = &*self.catalog;
                    match name.as_ref() {
                        #(#arms)*
                        _ => Err(runtime::unknown_tool(&name)),
                    }
                }

                #prompts

                #resources

                #completions
            }
        }
    }

    /// `list_prompts` and `get_prompt`, when the spec has prompts.
    fn prompt_handlers(&self) -> TokenStream {
        let p = self.model;
        if !p.capabilities.prompts {
            return quote!();
        }
        let arms = p.prompts.iter().map(|pr| {
            let n = &pr.name;
            if pr.messages.is_some() {
                return quote!(#n => self.prompts.render(&name, arguments, &self.resources),);
            }
            let f = format_ident!("get_{}", names::fn_name(&pr.name));
            quote!(#n => self.prompts.run(&name, arguments, |args| #f(state, &ctx, args)).await,)
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
        quote! {
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
                let request_state = runtime::verify_request_state("prompts/get", &name, arguments.as_ref(), request_state, &context)?;
                #ctx
                match name.as_str() {
                    #(#arms)*
                    _ => Err(runtime::unknown_prompt(&name)),
                }
            }
        }
    }

    /// `list_resources`, `list_resource_templates` and `read_resource`, when the spec has
    /// resources or templates.
    fn resource_handlers(&self) -> TokenStream {
        let p = self.model;
        if !p.capabilities.resources {
            return quote!();
        }
        let readers: Vec<TokenStream> = p
            .code_resources()
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
        quote! {
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
                let request_state = runtime::verify_request_state("resources/read", &uri, None, request_state, &context)?;
                match self.resources.lookup(&uri)? {
                    Lookup::Fixed(response) => Ok(response),
                    #code_arm
                }
            }
        }
    }

    /// `complete`, when some prompt argument or template variable offers completions.
    fn completion_handler(&self) -> TokenStream {
        if !self.model.capabilities.completions {
            return quote!();
        }
        quote! {
            async fn complete(
                &self,
                request: CompleteRequestParams,
                _context: RequestContext<RoleServer>,
            ) -> Result<CompleteResult, ErrorData> {
                runtime::complete(&self.prompts, &self.resources, &request)
            }
        }
    }
}
