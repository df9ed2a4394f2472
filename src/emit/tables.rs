//! The catalog statics of the generated module: `TOOLS`, `PROMPTS`, `RESOURCES`, `TEMPLATES`,
//! `META` (with the capabilities) and the `Form` impls, each written from the model's decided
//! documents.

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;

use crate::emit::idents::{json_lit, opt_str};
use crate::emit::signatures::Signatures;
use crate::model::{Content, FormOf, Message};
use crate::spec::Role;

impl Signatures<'_> {
    pub(crate) fn tool_defs(&self) -> TokenStream {
        let defs = self.model.tools.iter().map(|t| {
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
            let resolved = t.chain.bindings.iter().map(|b| b.param.as_str());
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

    pub(crate) fn prompt_defs(&self) -> TokenStream {
        let defs = self.model.prompts.iter().map(|p| {
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
                            Message::Text { role, text } => {
                                (role, quote!(MessageContent::Text(#text)))
                            }
                            Message::Image { role, image } => {
                                let data = &image.data;
                                let mime = &image.mime_type;
                                (
                                    role,
                                    quote!(MessageContent::Image { data: #data, mime_type: #mime }),
                                )
                            }
                            Message::Resource { role, uri } => {
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

    pub(crate) fn resource_defs(&self) -> TokenStream {
        let resources = self.model.resources.iter().map(|r| {
            let uri = &r.uri;
            let name = &r.name;
            let title = opt_str(&r.title);
            let description = opt_str(&r.description);
            let mime = opt_str(&r.mime_type);
            let content = match &r.content {
                Content::Text(t) => quote!(StaticContent::Text(#t)),
                Content::Blob(b) => quote!(StaticContent::Blob(#b)),
                Content::Code => quote!(StaticContent::Code),
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
        let templates = self.model.templates.iter().map(|t| {
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

    /// Every type that can be asked for with a form, each once, with the `requestedSchema`
    /// sent for it (decided by the model, [`crate::model::wire::forms`]).
    pub fn forms_of(&self) -> Vec<(TokenStream, Value)> {
        let mut seen = std::collections::HashSet::new();
        self.model
            .forms
            .iter()
            .map(|f| {
                let ty = match f.of {
                    FormOf::Def(i) => self.types.def(i).ty.clone(),
                    FormOf::Resolver(r) => self.value_type(&self.model[r]),
                };
                (ty, f.document.clone())
            })
            .filter(|(ty, _)| seen.insert(ty.to_string()))
            .collect()
    }

    pub(crate) fn forms(&self) -> TokenStream {
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
}
