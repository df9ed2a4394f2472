//! The stubs of user methods (what `new` writes into `src/handlers.rs` and `generate` appends
//! for what the spec gained): one per resolver, tool, prompt written in code and resource read
//! in code, with the signatures of [`crate::emit::signatures`].

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::check::Checked;
use crate::emit::idents::{fn_ident, ident};
use crate::emit::signatures::Signatures;
use crate::model::{Prompt, ResolverId, TemplateId, ToolId};
use crate::names;

/// The stub of one resolver method (what `new` writes and `generate` appends).
pub fn resolver_stub(checked: &Checked, id: ResolverId) -> TokenStream {
    let e = Signatures::new(&checked.model, &checked.types);
    let r = &checked.model[id];
    let name = &r.name;
    let f = fn_ident(name);
    let params = e.resolver_params(r, "_");
    let ctx = e.resolver_ctx(r, "_");
    let ret = e.method_return(r);
    quote! {
        async fn #f(&self, #ctx: &Context, #(#params),*) -> Result<#ret, ToolError> {
            Err(ToolError::not_implemented(#name))
        }
    }
}

/// The stub of one tool method.
pub fn tool_stub(checked: &Checked, id: ToolId) -> TokenStream {
    let e = Signatures::new(&checked.model, &checked.types);
    let t = &checked.model[id];
    let name = &t.name;
    let f = fn_ident(name);
    let args = &checked.types.args(id).ty;
    let params = t.chain.bindings.iter().map(|b| {
        let p = format_ident!("_{}", names::fn_name(&b.param));
        let ty = e.binding_type(b);
        quote!(#p: #ty)
    });
    let out = e.tool_output_type(t);
    let (ctx, args_name) = e.method_ctx_args(&t.chain.bindings, "_");
    quote! {
        async fn #f(&self, #ctx: &Context, #args_name: #args, #(#params),*) -> Result<#out, ToolError> {
            Err(ToolError::not_implemented(#name))
        }
    }
}

/// The stub of one prompt method (prompts written in code).
pub fn prompt_stub(checked: &Checked, p: &Prompt) -> TokenStream {
    let e = Signatures::new(&checked.model, &checked.types);
    let name = &p.name;
    let f = fn_ident(name);
    let params = e.prompt_params(p, "_");
    let (ctx, _) = e.method_ctx_args(&p.chain.bindings, "_");
    quote! {
        async fn #f(&self, #ctx: &Context, #(#params),*) -> Result<Vec<PromptMessage>, ToolError> {
            Err(ToolError::not_implemented(#name))
        }
    }
}

/// A resource read in code, or a resource template.
#[derive(Debug, Clone)]
pub struct CodeReader {
    /// The resource's URI or the template's URI template.
    pub key: String,
    /// Its `name` (the method is `read_<name>`).
    pub name: String,
    /// The template, for a template (its method also takes the URI and the variables).
    pub template: Option<TemplateId>,
}

/// Everything read in code, in spec order: resources without fixed content, then templates.
pub fn code_readers(checked: &Checked) -> Vec<CodeReader> {
    let plan = &checked.model;
    plan.code_resources()
        .map(|r| CodeReader {
            key: r.uri.clone(),
            name: r.name.clone(),
            template: None,
        })
        .chain(plan.templates.iter().map(|t| CodeReader {
            key: t.uri_template.clone(),
            name: t.name.clone(),
            template: Some(t.id),
        }))
        .collect()
}

/// The stub of one resource-reading method.
pub fn resource_stub(checked: &Checked, reader: &CodeReader) -> TokenStream {
    let e = Signatures::new(&checked.model, &checked.types);
    let f = ident(&names::read_fn_name(&reader.name));
    let params = e.read_params(reader.template, "_");
    let name = &reader.name;
    quote! {
        async fn #f(&self, _ctx: &Context, #(#params),*) -> Result<ResourceBody, ToolError> {
            Err(ToolError::not_implemented(#name))
        }
    }
}
