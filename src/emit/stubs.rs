//! The stubs of user methods (what `new` writes into `src/handlers.rs` and `generate` appends
//! for what the spec gained): one per resolver, tool, prompt written in code and resource read
//! in code, with the signatures of [`crate::emit::signatures`].

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::emit::idents::{doc, fn_ident, ident};
use crate::emit::signatures::Signatures;
use crate::model::{ArgTypeView, Model, Param, Prompt, ResolverId, TemplateId, ToolId};
use crate::names;

/// The stub of one resolver method (what `new` writes and `generate` appends).
pub fn resolver_stub(e: &Signatures, id: ResolverId) -> TokenStream {
    let r = &e.model[id];
    let name = &r.name;
    let f = fn_ident(name);
    let params = e.resolver_params(r, "_");
    let ctx = e.resolver_ctx(r, "_");
    let ret = e.method_return(r);
    // Where a principal comes from is not obvious from its type: the stub says it.
    let docs = e.principal_doc(r).map(|d| doc(&d));
    quote! {
        #docs
        async fn #f(&self, #ctx: &Context, #(#params),*) -> Result<#ret, ToolError> {
            Err(ToolError::not_implemented(#name))
        }
    }
}

/// The stub of one tool method.
pub fn tool_stub(e: &Signatures, id: ToolId) -> TokenStream {
    let t = &e.model[id];
    let name = &t.name;
    let f = fn_ident(name);
    let args = &e.types.args(id).ty;
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
pub fn prompt_stub(e: &Signatures, p: &Prompt) -> TokenStream {
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
pub fn code_readers(plan: &Model) -> Vec<CodeReader> {
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
pub fn resource_stub(e: &Signatures, reader: &CodeReader) -> TokenStream {
    let f = ident(&names::read_fn_name(&reader.name));
    let params = e.read_params(reader.template, "_");
    let name = &reader.name;
    quote! {
        async fn #f(&self, _ctx: &Context, #(#params),*) -> Result<ResourceBody, ToolError> {
            Err(ToolError::not_implemented(#name))
        }
    }
}

/// What the stubs of a spec name from the generated module: the items `new` imports into
/// `src/handlers.rs`, and the names `generate` spells out in full in stubs it appends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubPrelude {
    /// The items named (sorted): `Context`, `ToolError`, the traits implemented, `Ask`, ...
    pub items: Vec<&'static str>,
    /// True when some stub names a type of the generated `types` module.
    pub types: bool,
}

impl StubPrelude {
    /// Every name a stub may use unqualified: the items, and `types` when it is used.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        let types = self.types.then_some("types");
        self.items.iter().copied().chain(types)
    }
}

/// The [`StubPrelude`] of the stubs [`resolver_stub`], [`tool_stub`], [`prompt_stub`] and
/// [`resource_stub`] write, decided from the model and the slots' types.
pub fn prelude(e: &Signatures) -> StubPrelude {
    let model = e.model;
    let mut items = vec!["Context", "Resolvers", "ToolError", "Tools"];
    if model.code_prompts().next().is_some() {
        items.extend(["PromptMessage", "Prompts"]);
    }
    if !code_readers(model).is_empty() {
        items.extend(["ResourceBody", "Resources"]);
    }
    if model.resolvers.iter().any(|r| r.asks.is_some()) {
        items.push("Ask");
    }
    if model.chains().flat_map(|c| &c.bindings).any(|b| b.outcome) {
        items.push("Outcome");
    }
    // The value types the kinds of question fix (`CreateMessageResult`, ...).
    for value in model.resolvers.iter().filter_map(|r| r.asks?.value) {
        if !items.contains(&value) {
            items.push(value);
        }
    }
    if model.tools.iter().any(|t| t.output.is_none()) {
        items.push("ContentBlock");
    }
    if model.uses_principal() {
        items.push("Principal");
    }
    items.sort_unstable();
    StubPrelude {
        items,
        types: stubs_name_types(e),
    }
}

/// True when some stub names a type of the generated `types` module: a tool's arguments or
/// output, a resolver's value or non-primitive argument, a prompt's arguments, a template's
/// variables.
fn stubs_name_types(e: &Signatures) -> bool {
    let (model, types) = (e.model, e.types);
    let resolvers = model.resolvers.iter().any(|r| {
        e.value_slot(r).generated
            || r.params.iter().any(|p| match p {
                Param::Arg { name, ty, .. } => {
                    !matches!(ty, ArgTypeView::Primitive(_)) && e.arg_slot(r, name).generated
                }
                _ => false,
            })
    });
    let tools = model
        .tools
        .iter()
        .any(|t| types.args(t.id).generated || types.output(t.id).is_some_and(|o| o.generated));
    let prompts =
        (model.code_prompts()).any(|p| types.prompt_args(p.id).is_some_and(|a| a.generated));
    let templates = model.templates.iter().any(|t| types.vars(t.id).generated);
    resolvers || tools || prompts || templates
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every identifier of a token stream, however deep.
    fn idents(tokens: TokenStream, out: &mut Vec<String>) {
        for tt in tokens {
            match tt {
                proc_macro2::TokenTree::Ident(i) => out.push(i.to_string()),
                proc_macro2::TokenTree::Group(g) => idents(g.stream(), out),
                _ => {}
            }
        }
    }

    /// The prelude names exactly what the stubs use from the generated module: over every
    /// example spec, each item of the prelude but the traits (named by the impl blocks) occurs
    /// in some stub, and `types` is used exactly when a stub names `types::..`.
    #[test]
    fn the_prelude_is_what_the_stubs_name() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let examples = [
            "bookshop",
            "files",
            "bistro",
            "mrtr-probe",
            "stress",
            "conformance",
            "differential",
        ]
        .map(|ex| root.join("generated-examples").join(ex).join("spec.json"));
        // And a spec with `auth` (its stubs name `Principal`).
        for spec in examples
            .into_iter()
            .chain([root.join("tests/auth/library.json")])
        {
            let ex = spec.display().to_string();
            let checked = crate::check::check_file(&spec)
                .unwrap_or_else(|r| panic!("{ex}: {}", r.render_human()));
            let model = &checked.model;
            let e = Signatures::new(model, &checked.types);
            let readers = code_readers(model);
            let stubs = (model.resolvers.iter().map(|r| resolver_stub(&e, r.id)))
                .chain(model.tools.iter().map(|t| tool_stub(&e, t.id)))
                .chain(model.code_prompts().map(|p| prompt_stub(&e, p)))
                .chain(readers.iter().map(|r| resource_stub(&e, r)));
            let mut used = Vec::new();
            stubs.for_each(|s| idents(s, &mut used));
            let p = prelude(&e);
            assert_eq!(
                p.items.contains(&"Principal"),
                model.uses_principal(),
                "{ex}"
            );
            for item in &p.items {
                let is_trait = ["Resolvers", "Tools", "Prompts", "Resources"].contains(item);
                assert!(is_trait || used.iter().any(|u| u == item), "{ex}: {item}");
            }
            assert_eq!(p.types, used.iter().any(|u| u == "types"), "{ex}");
        }
    }

    /// `types` is imported only when a stub names it.
    #[test]
    fn types_is_imported_when_a_stub_names_it() {
        for (returns, types) in [
            (serde_json::json!({"type": "string"}), false),
            (
                serde_json::json!({"type": "array", "items": {"type": "integer"}}),
                false,
            ),
            (
                serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}}}),
                true,
            ),
            (
                serde_json::json!({"type": "array", "items": {"enum": ["a", "b"]}}),
                true,
            ),
        ] {
            let spec = serde_json::json!({"name": "T", "tools": {}, "resolvers": {"r": {"returns": returns}}});
            let checked = crate::check::check_str("spec.json", &spec.to_string())
                .unwrap_or_else(|r| panic!("{}", r.render_human()));
            let e = Signatures::new(&checked.model, &checked.types);
            assert_eq!(prelude(&e).types, types, "{returns}");
        }
    }

    /// A prompt written in code without arguments takes `args` like every other prompt (and
    /// like a tool without `input`).
    #[test]
    fn a_prompt_without_arguments_has_the_shape_of_the_others() {
        let spec = serde_json::json!({
            "name": "T",
            "tools": {"t": {"description": "T."}},
            "prompts": {"p": {"description": "P."}}
        });
        let checked = crate::check::check_str("spec.json", &spec.to_string())
            .unwrap_or_else(|r| panic!("{}", r.render_human()));
        let e = Signatures::new(&checked.model, &checked.types);
        let prompt = prompt_stub(&e, &checked.model.prompts[0]).to_string();
        let tool = tool_stub(&e, checked.model.tools[0].id).to_string();
        let map = ":: serde_json :: Map < :: std :: string :: String , :: serde_json :: Value >";
        assert!(prompt.contains(&format!("_args : {map}")), "{prompt}");
        assert!(tool.contains(&format!("_args : {map}")), "{tool}");
    }
}
