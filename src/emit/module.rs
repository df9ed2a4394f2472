//! The generated module, `src/generated/mod.rs`: its items assembled in order, its imports (a
//! prelude decided from what the model uses), formatted with prettyplease.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use crate::emit::calls::Owner;
use crate::emit::idents::opt_str;
use crate::emit::signatures::Signatures;
use crate::emit::types::TypeSet;
use crate::model::{Message, Model};

/// Which optional parts the generated module has.
pub(crate) struct Parts {
    /// Some prompt is written in code (the `Prompts` trait exists).
    pub(crate) code_prompts: bool,
    /// Some resource or template is read in code (the `Resources` trait exists).
    pub(crate) code_resources: bool,
    /// Prompts, resources or completions are served (the catalogs exist).
    pub(crate) catalogs: bool,
}

impl Parts {
    /// The traits the user's state implements: `Tools`, and `Prompts`/`Resources` when the spec
    /// has code-backed ones (the bound of `Handler<S>`, `serve`, `TestServer<S>`, ...).
    pub(crate) fn bound(&self) -> TokenStream {
        let mut bound = vec![quote!(Tools)];
        if self.code_prompts {
            bound.push(quote!(Prompts));
        }
        if self.code_resources {
            bound.push(quote!(Resources));
        }
        quote!(#(#bound)+*)
    }
}

impl Signatures<'_> {
    fn parts(&self) -> Parts {
        let caps = &self.model.capabilities;
        Parts {
            code_prompts: self.model.code_prompts().next().is_some(),
            code_resources: self.model.reads_in_code(),
            catalogs: caps.prompts || caps.resources || caps.completions,
        }
    }

    /// The module's inner doc comment: what it holds and which traits the user implements.
    fn module_doc(&self, parts: &Parts) -> TokenStream {
        let mut traits = vec!["[`Resolvers`]", "[`Tools`]"];
        if parts.code_prompts {
            traits.push("[`Prompts`]");
        }
        if parts.code_resources {
            traits.push("[`Resources`]");
        }
        let traits = match traits.split_last() {
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let text = format!(
            " MCP server `{}` {}: definitions, argument types, the {traits}\n traits that `src/handlers.rs` implements, and the `ServerHandler` that runs them.",
            self.model.name, self.model.version
        );
        let lines = text.lines().map(|l| quote!(#![doc = #l]));
        quote!(#(#lines)*)
    }

    /// The module's imports: the prelude of runtime and rmcp names, decided from what the model
    /// uses (every name imported is used, so the module compiles without warnings).
    fn prelude(&self, parts: &Parts) -> TokenStream {
        let (runtime_idents, rmcp_idents) = (self.runtime_names(parts), self.rmcp_names(parts));
        // The verified caller, for handlers of a spec with `auth` (`ctx.principal()`, and the
        // type of `"principal"` resolver parameters).
        let principal = self.model.auth.is_some().then(|| quote!(Principal,));
        quote! {
            use std::{future::Future, process::ExitCode, sync::Arc};

            use self::runtime::codegen::rmcp::{
                ErrorData, RoleServer, ServerHandler,
                model::{#(#rmcp_idents),*},
                service::RequestContext,
            };

            #[allow(unused_imports)]
            pub use self::runtime::{Ask, Context, Form, Outcome, #principal ResourceBody, ToolError, model::*};
            use self::runtime::{#(#runtime_idents),*};
        }
    }

    /// The runtime items the module names.
    fn runtime_names(&self, parts: &Parts) -> Vec<Ident> {
        let p = self.model;
        let caps = &p.capabilities;
        let catalogs = parts.catalogs;
        let uses_round = p.chains().any(|c| p.asks(c));
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
            let messages: Vec<&Message> = p
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
        runtime_names.iter().map(|n| format_ident!("{n}")).collect()
    }

    /// The rmcp model types the module names.
    fn rmcp_names(&self, parts: &Parts) -> Vec<Ident> {
        let caps = &self.model.capabilities;
        let code_prompts = parts.code_prompts;
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
        rmcp_names.iter().map(|n| format_ident!("{n}")).collect()
    }

    /// The `Capabilities` literal of `META`.
    fn capabilities(&self) -> TokenStream {
        let caps = &self.model.capabilities;
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
    }

    fn module(&self) -> TokenStream {
        let p = self.model;
        let caps = &p.capabilities;
        let parts = self.parts();
        let module_doc = self.module_doc(&parts);
        let prelude = self.prelude(&parts);
        let capabilities = self.capabilities();
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
        let prompts_trait = if parts.code_prompts {
            self.prompts_trait()
        } else {
            quote!()
        };
        let resources_trait = if parts.code_resources {
            self.resources_trait()
        } else {
            quote!()
        };
        let server = self.server(&parts);
        let testing = self.testing_module(&parts.bound());
        let forms = self.forms();
        let name = &p.name;
        let version = &p.version;
        let title = opt_str(&p.title);
        let instructions = opt_str(&p.instructions);
        let tools = self.tool_defs();
        let access = self.access_static();
        let operations = self.operations_static();
        let resolvers_trait = self.resolvers_trait();
        let tools_trait = self.tools_trait();
        let calls = (p.tools.iter().map(|t| self.call_fn(Owner::Tool(t))))
            .chain(p.code_prompts().map(|p| self.call_fn(Owner::Prompt(p))));
        quote! {
            #module_doc

            /// The runtime crate `mcpgen-runtime`, under the name this module's code uses.
            pub use ::mcpgen_runtime as runtime;

            #prelude

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

            #access

            #operations

            #prompt_defs

            #resource_defs

            #resolvers_trait

            #tools_trait

            #prompts_trait

            #resources_trait

            #server

            #(#calls)*

            #testing
        }
    }
}

/// `src/generated/mod.rs` for a checked spec, formatted.
pub fn generated_module(model: &Model, types: &TypeSet) -> Result<String, String> {
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
    let tokens = Signatures::new(model, types).module();
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
