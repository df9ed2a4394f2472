//! Emission of the generated module's public faces of the server: `Server<S>` (the complete
//! server, `runtime::McpServer` around the generated `Handler<S>`), `serve` (the command line),
//! `router` and `router_with` (an `axum::Router` serving MCP at `/mcp`), and the
//! `runtime::Generated` impl that lets `Server::new(state)` build the handler and hands the
//! runtime the spec's `OPERATIONS` (and its `ACCESS`, when it has `auth`). The handler
//! itself (its dispatch of tools, prompts, resources) is emitted by `emit::handler`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::idents::doc;

/// The items for a server named `name` whose user state is bound by `bound` (`Tools`, plus
/// `Prompts`/`Resources` when the spec has code-backed ones); `generated_fns` are the `Generated`
/// impl's `fn access()` (`emit::access`, empty for a spec without `auth`) and `fn operations()`
/// (`emit::operations`).
pub fn items(
    name: &str,
    sessions: &str,
    bound: &TokenStream,
    generated_fns: [TokenStream; 2],
) -> TokenStream {
    let [access, operations] = generated_fns;
    let serve_doc = doc(&format!(
        "Serves `state` as the `{name}` MCP server from the command line (`--transport stdio|http`,\n\
         `--bind`, `--allow-host`, ...; `--help` lists them), until end of input or a signal.\n\
         \n\
         This is `main` for a server that runs on its own; an application with a server of its\n\
         own mounts [`router`] instead."
    ));
    let server_doc = doc(&format!(
        "The complete `{name}` MCP server for a user state `S`: every method behaves as under\n\
         [`serve`] (sessions, `logging/setLevel`, subscriptions, the 2026-07-28 `serverInfo`,\n\
         `-32601` for what the spec does not declare, panics answered with `-32603`).\n\
         \n\
         `Server::new(state)` builds it (it panics when `MCP_REQUEST_STATE_KEYS` or\n\
         `MCP_REQUEST_STATE_TTL_SECS` is malformed; `Server::try_new` returns that error). It is\n\
         an rmcp `ServerHandler`: serve it over any rmcp transport, or over HTTP with [`router`].\n\
         A clone is the same server with a fresh session."
    ));
    let auth = !access.is_empty();
    let router_doc = if auth {
        doc(&format!(
            "An `axum::Router` serving `state` as the `{name}` MCP server at `/mcp`, with the\n\
             defaults of `serve --transport http`. The spec requires authorization, so the router\n\
             takes the authorization server's settings: it is an OAuth 2.1 resource server for the\n\
             tokens `auth`'s issuer issues for its resource, and serves the protected-resource\n\
             metadata:\n\
             \n\
             ```ignore\n\
             let auth = AuthSettings::new(\"https://auth.example.com\", \"https://mcp.example.com/mcp\");\n\
             let app = axum::Router::new().merge(generated::router(state, auth));\n\
             axum::serve(listener, app).await?;\n\
             ```\n\
             \n\
             [`router_with`] changes the defaults (and takes a verifier of the application's own).\n\
             \n\
             # Panics\n\
             \n\
             When `auth`'s resource is not an absolute `http(s)` URI, outside a Tokio runtime, or as\n\
             [`Server::new`] does."
        ))
    } else {
        doc(&format!(
            "An `axum::Router` serving `state` as the `{name}` MCP server at `/mcp`, with the\n\
             defaults of `serve --transport http`: `Host` and `Origin` must be loopback, both protocol\n\
             eras, {sessions}. Merge it into the application's router:\n\
             \n\
             ```ignore\n\
             let app = axum::Router::new()\n    \
                 .route(\"/healthz\", axum::routing::get(|| async {{ \"ok\" }}))\n    \
                 .merge(generated::router(state));\n\
             axum::serve(listener, app).await?;\n\
             ```\n\
             \n\
             [`router_with`] changes the defaults.\n\
             \n\
             # Panics\n\
             \n\
             Outside a Tokio runtime, or as [`Server::new`] does."
        ))
    };
    let faces = match auth {
        true => quote!(
            pub use self::runtime::{AuthSettings, RouterOptions, Shutdown};
        ),
        false => quote!(
            pub use self::runtime::{RouterOptions, Shutdown};
        ),
    };
    let router_fn = match auth {
        true => quote! {
            pub fn router<S: #bound>(state: S, auth: AuthSettings) -> runtime::codegen::axum::Router {
                router_with(state, RouterOptions::default().auth(auth))
            }
        },
        false => quote! {
            pub fn router<S: #bound>(state: S) -> runtime::codegen::axum::Router {
                router_with(state, RouterOptions::default())
            }
        },
    };
    let router_with_doc = doc(
        "[`router`] with `options`: more allowed hosts and origins (or any), the sessions' idle\n\
         timeout and cap, another path, a [`Shutdown`] that ends sessions and streams:\n\
         \n\
         ```ignore\n\
         let options = RouterOptions::default()\n    \
             .allow_host(\"mcp.example.com\")\n    \
             .session_idle_timeout(std::time::Duration::from_secs(600));\n\
         let app = axum::Router::new().merge(generated::router_with(state, options));\n\
         ```\n\
         \n\
         # Panics\n\
         \n\
         As [`router`] does, and when [`RouterOptions::try_into_router`] fails (for a spec that\n\
         requires authorization: `options` has neither `.auth(..)` nor `.verifier(..)`).",
    );
    quote! {
        #[allow(unused_imports)]
        #faces

        #serve_doc
        // A crate serves with `serve` or with `router` (rarely both).
        #[allow(dead_code)]
        pub fn serve<S: #bound>(state: S) -> ExitCode {
            runtime::serve(Handler::new(state))
        }

        #server_doc
        #[allow(dead_code)]
        pub type Server<S> = runtime::McpServer<Handler<S>>;

        #router_doc
        #[allow(dead_code)]
        #router_fn

        #router_with_doc
        #[allow(dead_code)]
        pub fn router_with<S: #bound>(state: S, options: RouterOptions) -> runtime::codegen::axum::Router {
            options.into_router(Server::new(state))
        }

        impl<S: #bound> runtime::Generated for Handler<S> {
            type State = S;

            fn from_state(state: S) -> Self {
                Handler::new(state)
            }

            #access

            #operations
        }
    }
}
