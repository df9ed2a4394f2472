//! Authorization in the generated module: the `ACCESS` table (the spec's `auth` and every
//! operation's `scopes`, as a `runtime::Access` the HTTP front reads for the scope challenge and
//! the list handlers for `listVisibleOnly`), the `access()` of the `runtime::Generated` impl that
//! hands it to the runtime, and the doc lines that name scopes and say where a principal comes
//! from. A spec without `auth` gets none of it (the runtime's default is `Access::OPEN`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::signatures::Signatures;
use crate::model::{Param, Resolver};

impl Signatures<'_> {
    /// `static ACCESS: runtime::Access = ..;`, when the spec has `auth`.
    pub(crate) fn access_static(&self) -> TokenStream {
        let Some(auth) = &self.model.auth else {
            return quote!();
        };
        let required = auth.required;
        let list_visible_only = auth.list_visible_only;
        let scopes = &auth.scopes;
        let supported = &auth.scopes_supported;
        // Tools and prompts are found by name: only those with scopes are listed. Resources and
        // templates are all listed, in spec order, so the front matches a URI to the same
        // resource or template the dispatch does (an unscoped one matched first is no scope).
        let table = |entries: Vec<(&String, &Vec<String>)>, all: bool| {
            let entries = entries
                .into_iter()
                .filter(|(_, scopes)| all || !scopes.is_empty())
                .map(|(key, scopes)| quote!((#key, &[#(#scopes),*]),));
            quote!(&[#(#entries)*])
        };
        let m = self.model;
        let tools = table(
            m.tools.iter().map(|t| (&t.name, &t.scopes)).collect(),
            false,
        );
        let prompts = table(
            m.prompts.iter().map(|p| (&p.name, &p.scopes)).collect(),
            false,
        );
        let resources = table(
            m.resources.iter().map(|r| (&r.uri, &r.scopes)).collect(),
            true,
        );
        let templates = table(
            (m.templates.iter())
                .map(|t| (&t.uri_template, &t.scopes))
                .collect(),
            true,
        );
        quote! {
            /// What calling the server needs (the spec's `auth` and each operation's `scopes`): the
            /// HTTP front answers `401`/`403` from it before anything runs, and the metadata at
            /// `/.well-known/oauth-protected-resource` lists `scopes_supported`.
            static ACCESS: runtime::Access = runtime::Access {
                declared: true,
                required: #required,
                scopes: &[#(#scopes),*],
                scopes_supported: &[#(#supported),*],
                list_visible_only: #list_visible_only,
                tools: #tools,
                prompts: #prompts,
                resources: #resources,
                templates: #templates,
            };
        }
    }

    /// `fn access()` of the `runtime::Generated` impl, when the spec has `auth`.
    pub(crate) fn access_fn(&self) -> TokenStream {
        if self.model.auth.is_none() {
            return quote!();
        }
        quote! {
            fn access() -> &'static runtime::Access {
                &ACCESS
            }
        }
    }

    /// The paragraph a resolver's doc gains for its `"principal"` parameters: where the
    /// principal comes from on each transport.
    pub(crate) fn principal_doc(&self, r: &Resolver) -> Option<String> {
        let names: Vec<String> = (r.params.iter())
            .filter(|p| matches!(p, Param::Principal { .. }))
            .map(|p| format!("`{}`", crate::names::fn_name(p.name())))
            .collect();
        let (is, names) = match names.split_last()? {
            (last, []) => ("is", last.clone()),
            (last, rest) => ("are", format!("{} and {last}", rest.join(", "))),
        };
        let from = "over HTTP the principal of the request's bearer token, verified against\n\
                    `--auth-issuer` and `--auth-resource` before anything runs; over stdio the one\n\
                    `MCP_PRINCIPAL_SUBJECT` (with `MCP_PRINCIPAL_ISSUER`, `MCP_PRINCIPAL_CLIENT_ID`,\n\
                    `MCP_PRINCIPAL_SCOPES`) describes";
        Some(if self.principal_required() {
            format!("{names} {is} the verified caller:\n{from}.")
        } else {
            format!(
                "{names} {is} the verified caller, if any:\n{from}.\n\
                 `None` for an anonymous HTTP request (the spec's `auth.required` is false) and\n\
                 over stdio without `MCP_PRINCIPAL_SUBJECT`."
            )
        })
    }

    /// The line the doc of an operation with `scopes` gains: the scopes it needs.
    pub(crate) fn scopes_doc(&self, scopes: &[String]) -> Option<String> {
        if scopes.is_empty() {
            return None;
        }
        let listed: Vec<String> = scopes.iter().map(|s| code_span(s)).collect();
        let server = (self.model.auth.iter())
            .flat_map(|a| &a.scopes)
            .filter(|s| !scopes.contains(s))
            .map(|s| code_span(s))
            .collect::<Vec<_>>();
        let besides = if server.is_empty() {
            String::new()
        } else {
            format!(", besides the server-wide {}", server.join(" "))
        };
        let them = if scopes.len() + server.len() == 1 {
            "it"
        } else {
            "them"
        };
        Some(format!(
            "Needs the scope{} {}{besides}.\n\
             Over HTTP a caller without {them} gets the `403` scope challenge before anything runs.",
            if scopes.len() == 1 { "" } else { "s" },
            listed.join(" "),
        ))
    }
}

/// `text` as a Markdown code span, with a longer fence when it holds backticks (an RFC 6749
/// scope may).
pub fn code_span(text: &str) -> String {
    if !text.contains('`') {
        return format!("`{text}`");
    }
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    format!("{fence} {text} {fence}")
}
