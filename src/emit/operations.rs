//! Operations in the generated module: the `OPERATIONS` table (the spec's `limits`, each tool's
//! own `timeoutMs` / `maxConcurrency`, and the names of every tool and prompt, which the runtime
//! uses for its gates and as the only names spans and metrics carry), and the `operations()` of
//! the `runtime::Generated` impl that hands it to the runtime. Every spec gets both: without
//! limits the table only names the tools and prompts.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::emit::signatures::Signatures;

/// `Some(n)` or `None`, with an unsuffixed literal (the field's type decides it).
fn some(n: Option<u64>) -> TokenStream {
    match n {
        Some(n) => {
            let n = Literal::u64_unsuffixed(n);
            quote!(Some(#n))
        }
        None => quote!(None),
    }
}

impl Signatures<'_> {
    /// `static OPERATIONS: runtime::Operations = ..;`: the server-wide limits the spec sets (the
    /// others taken from `Operations::NONE`), every tool in spec order, every prompt's name.
    pub(crate) fn operations_static(&self) -> TokenStream {
        let m = self.model;
        let l = &m.limits;
        let limits = [
            ("timeout_ms", l.timeout_ms),
            ("max_concurrency", l.max_concurrency.map(u64::from)),
            ("max_request_bytes", l.max_request_bytes),
            ("max_sessions", l.max_sessions.map(u64::from)),
            ("session_idle_timeout_ms", l.session_idle_timeout_ms),
        ];
        // Every limit set: no field is left for `Operations::NONE` (clippy's needless_update).
        let rest =
            (!limits.iter().all(|(_, v)| v.is_some())).then(|| quote!(..runtime::Operations::NONE));
        let limits = (limits.into_iter())
            .filter(|(_, v)| v.is_some())
            .map(|(field, v)| {
                let field = proc_macro2::Ident::new(field, proc_macro2::Span::call_site());
                let v = some(v);
                quote!(#field: #v,)
            });
        let tools = m.tools.iter().map(|t| {
            let name = &t.name;
            let timeout = some(t.timeout_ms);
            let concurrency = some(t.max_concurrency.map(u64::from));
            quote! {
                runtime::ToolOperations {
                    name: #name,
                    timeout_ms: #timeout,
                    max_concurrency: #concurrency,
                },
            }
        });
        let prompts = m.prompts.iter().map(|p| &p.name);
        quote! {
            /// The spec's limits (`limits`, each tool's `timeoutMs` and `maxConcurrency`) and the
            /// names of its tools and prompts: the runtime's timeouts and concurrency gates come
            /// from it (the command line's flags override the server-wide values, never a tool's),
            /// and spans and metrics name only what it lists.
            static OPERATIONS: runtime::Operations = runtime::Operations {
                #(#limits)*
                tools: &[#(#tools)*],
                prompts: &[#(#prompts),*],
                #rest
            };
        }
    }

    /// `fn operations()` of the `runtime::Generated` impl.
    pub(crate) fn operations_fn(&self) -> TokenStream {
        quote! {
            fn operations() -> &'static runtime::Operations {
                &OPERATIONS
            }
        }
    }
}
