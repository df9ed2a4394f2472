//! The generated test kit, `generated::testing` (behind the crate's `testing` feature, which
//! its own dev-dependency turns on for tests): `TestServer<S>`, the real generated server in
//! process over the runtime kit's transports (`runtime::testing`), and `TestClient`, the
//! runtime's `Client` with one typed method per tool, named as its `Tools` method, taking the
//! tool's arguments type and returning its output type, decoded by the output shape the server
//! uses (`structuredContent.result`, `structuredContent` or the content).
//!
//! Also `tests/tools.rs`, what `mcpgen new` writes once: one test per tool that calls it through
//! the kit on both eras and transports and expects the stub's "not implemented" answer; for a
//! tool whose input schema admits no arguments mcpgen can make ([`crate::samples`]), the test
//! sends `{}` through `call_tool` and expects the exact input violations instead.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::emit::docs::doc_text;
use crate::emit::idents::{doc, fn_ident};
use crate::emit::signatures::Signatures;
use crate::model::Tool;
use crate::samples::{Sample, sample};

impl Signatures<'_> {
    /// `#[cfg(feature = "testing")] pub mod testing { .. }` for a state bound by `bound`.
    pub(crate) fn testing_module(&self, bound: &TokenStream) -> TokenStream {
        let name = &self.model.name;
        let auth = self.model.auth.is_some();
        let methods = self.model.tools.iter().map(|t| self.typed_method(t));
        let module_doc = doc(&format!(
            "The test kit of the `{name}` server: [`TestServer`] runs the real server in process (the\n\
             stdio framing over an in-memory duplex, the HTTP stack as a service, no socket, port or\n\
             process) and connects [`TestClient`]s, one per protocol era and transport, with a typed\n\
             method per tool and scripted answers to the questions the server asks.\n\
             \n\
             Compiled with the crate's `testing` feature, which its dev-dependency on itself turns on:\n\
             `cargo test` has it, `cargo build` never compiles it."
        ));
        let principal = match auth {
            true => quote!(
                pub use super::runtime::testing::principal;
                pub use super::runtime::{Era, Principal};
            ),
            false => quote!(
                pub use super::runtime::Era;
            ),
        };
        let clients_with_doc = doc(if auth {
            "[`TestServer::clients`], each built by `configure` first (a principal, the\n\
             capabilities it declares, ...)."
        } else {
            "[`TestServer::clients`], each built by `configure` first (the capabilities it\n\
             declares, ...)."
        });
        let clients_doc = if auth {
            doc(
                "The four clients, each connected: legacy and 2026-07-28, over stdio and HTTP, in\n\
                 that order (each says which in [`Client::label`]). The spec requires authorization:\n\
                 give the clients a principal with [`TestServer::clients_with`], or HTTP refuses them.",
            )
        } else {
            doc(
                "The four clients, each connected: legacy and 2026-07-28, over stdio and HTTP, in\n\
                 that order (each says which in [`Client::label`]).",
            )
        };
        quote! {
            #module_doc
            #[cfg(feature = "testing")]
            #[allow(unexpected_cfgs)]
            pub mod testing {
                use super::*;

                pub use super::runtime::testing::{
                    Answer, CallError, Client, ClientCapabilities, Connect, Notification, Output, Question, Rounds,
                    Step, Transport, default_capabilities,
                };
                #principal

                /// The server under test: the generated server around `state`, shared by every client
                /// it connects (as in production, each connection is a fresh session).
                pub struct TestServer<S: #bound> {
                    kit: runtime::testing::Kit<Handler<S>>,
                }

                impl<S: #bound> TestServer<S> {
                    /// The server of `state`.
                    pub fn new(state: S) -> Self {
                        TestServer {
                            kit: runtime::testing::Kit::new(Server::new(state), TOOLS),
                        }
                    }

                    /// A client of the legacy era (`initialize`, sessions, server-to-client
                    /// requests); stdio unless `.http()`; `.connect().await` connects it.
                    pub fn legacy(&self) -> Connect<Handler<S>, TestClient> {
                        self.kit.legacy().client::<TestClient>()
                    }

                    /// A client of the 2026-07-28 era (stateless; questions as `inputRequests`,
                    /// the retries run by the client); stdio unless `.http()`.
                    pub fn stateless(&self) -> Connect<Handler<S>, TestClient> {
                        self.kit.stateless().client::<TestClient>()
                    }

                    #clients_doc
                    pub async fn clients(&self) -> Vec<TestClient> {
                        self.clients_with(|connect| connect).await
                    }

                    #clients_with_doc
                    pub async fn clients_with(
                        &self,
                        configure: impl Fn(Connect<Handler<S>, TestClient>) -> Connect<Handler<S>, TestClient>,
                    ) -> Vec<TestClient> {
                        self.kit.clients(|connect| configure(connect.client::<TestClient>())).await
                    }
                }

                /// A connected client: the kit's [`Client`] (scripted answers, the record of the
                /// questions asked, raw calls) with one typed method per tool.
                pub struct TestClient(Client);

                impl From<Client> for TestClient {
                    fn from(client: Client) -> Self {
                        TestClient(client)
                    }
                }

                impl std::ops::Deref for TestClient {
                    type Target = Client;

                    fn deref(&self) -> &Client {
                        &self.0
                    }
                }

                impl TestClient {
                    #(#methods)*
                }
            }
        }
    }

    /// The typed method of tool `t`: its arguments in, its output (or the [`CallError`]) out.
    fn typed_method(&self, t: &Tool) -> TokenStream {
        let f = fn_ident(&t.name);
        let args = &self.types.args(t.id).ty;
        let out = self.tool_output_type(t);
        let shape = match &t.output {
            Some(o) if o.wrapped => quote!(Output::Wrapped),
            Some(_) => quote!(Output::Object),
            None => quote!(Output::Content),
        };
        let name = t.name.as_str();
        let docs = doc(&self.typed_doc(t));
        quote! {
            #docs
            pub async fn #f(&self, args: #args) -> Result<#out, CallError> {
                self.0.call_typed(#name, &args, #shape).await
            }
        }
    }

    /// The doc of a typed method: the tool's description, what it may ask, what it returns.
    fn typed_doc(&self, t: &Tool) -> String {
        let mut text = doc_text(&t.description);
        let asks: Vec<String> = (t.chain.run_order.iter())
            .map(|r| &self.model[*r])
            .filter_map(|r| r.asks.map(|k| format!("`{}` ({})", r.name, k.method)))
            .collect();
        if !asks.is_empty() {
            text.push_str(&format!(
                "\n\nMay ask, through its resolvers: {}.\n\
                 Script the answers on the client first (`answer_elicitation`, `decline`, `cancel`,\n\
                 `answer_sampling`, `roots`); an unscripted question fails the call with\n\
                 `CallError::Unscripted`.",
                asks.join(", ")
            ));
        }
        let returns = match &t.output {
            Some(o) if o.wrapped => "its `structuredContent.result`",
            Some(_) => "its `structuredContent`",
            None => "its content",
        };
        text.push_str(&format!(
            "\n\nCalls `{}` and returns {returns}.\n\
             An `isError` result is `CallError::Tool` (or `CallError::InvalidArguments` when the\n\
             arguments do not validate).",
            t.name
        ));
        text
    }

    /// `tests/tools.rs` of a new crate (the user's): one test per tool over every client,
    /// asserting the stub's answer, with arguments from [`crate::samples`].
    pub fn tools_test(&self, lib: &str, state: &str) -> TokenStream {
        let lib = format_ident!("{lib}");
        let state = format_ident!("{state}");
        let auth = self.model.auth.is_some();
        let mut uses_types = false;
        let mut uses_json = false;
        let tests: Vec<TokenStream> = (self.model.tools.iter())
            .map(|t| self.tool_test(t, &state, &mut uses_types, &mut uses_json))
            .collect();
        let types = uses_types.then(|| quote!(use #lib::generated::types;));
        let json = uses_json.then(|| {
            quote!(
                use serde_json::json;
            )
        });
        let principal = auth.then(|| quote!(principal,));
        let doc1 = " Tests of the tools, through the test kit (`generated::testing`): the real server in process,";
        let doc2 =
            " on both protocol eras and both transports. mcpgen wrote this file once; it is yours.";
        quote! {
            #![doc = #doc1]
            #![doc = #doc2]

            #json
            #types
            use #lib::generated::testing::{CallError, #principal TestServer};
            use #lib::handlers::#state;

            #(#tests)*
        }
    }

    /// One `#[tokio::test]` of tool `t`.
    fn tool_test(
        &self,
        t: &Tool,
        state: &proc_macro2::Ident,
        uses_types: &mut bool,
        uses_json: &mut bool,
    ) -> TokenStream {
        let f = fn_ident(&t.name);
        let name = &t.name;
        // A tool method named `label` or `call_tool` hides the client's.
        let hides = |m: &str| (self.model.tools.iter()).any(|o| fn_ident(&o.name) == m);
        let label = match hides("label") {
            true => quote!((*client).label()),
            false => quote!(client.label()),
        };
        let (call, expected, comment) = match sample(&t.input_schema) {
            Sample::Valid(value) => {
                let first = (t.chain.run_order.first())
                    .map(|r| self.model[*r].name.as_str())
                    .unwrap_or(name);
                let text = format!(
                    "Error executing tool {name}: '{first}' is not implemented yet (write it in src/handlers.rs)"
                );
                let args = self.args_expr(t, &value, uses_types, uses_json);
                (
                    quote!(client.#f(#args)),
                    quote!(CallError::Tool(#text.into())),
                    None,
                )
            }
            Sample::Invalid(violations) => {
                *uses_json = true;
                let client = match hides("call_tool") {
                    true => quote!((*client)),
                    false => quote!(client),
                };
                let lines = [
                    " mcpgen could not make arguments the input schema accepts (a `pattern` with a look-around,".to_string(),
                    " say): this test sends `{}` as raw JSON and expects the server's violations. Replace it with a".to_string(),
                    format!(" call of `client.{f}(..)` with valid arguments, asserting what the tool answers."),
                ];
                (
                    quote!(#client.call_tool(#name, json!({}))),
                    quote!(CallError::InvalidArguments(
                        vec![#(#violations.to_string()),*]
                    )),
                    Some(lines),
                )
            }
        };
        let note = comment.map(|lines| quote!(#(#[doc = #lines])*));
        let doc1 = format!(
            " `{name}` answers \"not implemented\" until src/handlers.rs has it: make this test say what it should do."
        );
        let clients = match self.model.auth.is_some() {
            true => {
                let scopes = self.test_scopes(t);
                quote!(server.clients_with(|c| c.principal(principal("tester", &[#(#scopes),*]))).await)
            }
            false => quote!(server.clients().await),
        };
        quote! {
            #[doc = #doc1]
            #note
            #[tokio::test]
            async fn #f() {
                let server = TestServer::new(#state::default());
                let expected = #expected;
                for client in #clients {
                    let error = #call.await.unwrap_err();
                    assert_eq!(error, expected, "{}", #label);
                }
            }
        }
    }

    /// The scopes a test principal of tool `t` needs: the spec's server-wide ones and the tool's.
    fn test_scopes(&self, t: &Tool) -> Vec<String> {
        let mut scopes: Vec<String> = (self.model.auth.iter())
            .flat_map(|a| a.scopes.iter().cloned())
            .collect();
        for s in &t.scopes {
            if !scopes.contains(s) {
                scopes.push(s.clone());
            }
        }
        scopes
    }

    /// The arguments expression of a test of `t` sending `value`: a struct literal when every
    /// field is a required or optional `String`, `bool`, `i64` or `f64`, else the value decoded
    /// from its JSON.
    fn args_expr(
        &self,
        t: &Tool,
        value: &Value,
        uses_types: &mut bool,
        uses_json: &mut bool,
    ) -> TokenStream {
        let slot = self.types.args(t.id);
        let simple = |ty: &TokenStream| {
            let ty = ty.to_string().replace(' ', "");
            match ty.as_str() {
                "::std::string::String" | "String" => Some("string"),
                "bool" => Some("bool"),
                "i64" => Some("i64"),
                "f64" => Some("f64"),
                _ => None,
            }
        };
        let properties = t.input_schema.get("properties").and_then(Value::as_object);
        let fields: Option<Vec<TokenStream>> = (slot.generated && !t.args.is_empty())
            .then(|| {
                (t.args.iter())
                    .map(|a| {
                        let field = self.types.arg_field(t.id, a)?;
                        let kind = simple(&field.inner.ty)?;
                        let ident = crate::emit::idents::ident(&field.ident);
                        let v = value.get(a);
                        let lit = match (kind, v) {
                            (_, None) => None,
                            ("string", Some(Value::String(s))) => Some(quote!(#s.into())),
                            ("bool", Some(Value::Bool(b))) => Some(quote!(#b)),
                            ("i64", Some(n)) => Some({
                                let n = n.as_i64()?;
                                quote!(#n)
                            }),
                            ("f64", Some(n)) => Some({
                                let n = n.as_f64()?;
                                quote!(#n)
                            }),
                            _ => return None,
                        };
                        match (lit, field.optional) {
                            (Some(l), true) => Some(quote!(#ident: Some(#l))),
                            (Some(l), false) => Some(quote!(#ident: #l)),
                            (None, true) => Some(quote!(#ident: None)),
                            (None, false) => None,
                        }
                    })
                    .collect()
            })
            .flatten()
            .filter(|_| properties.is_some_and(|p| p.len() == t.args.len()));
        if let Some(fields) = fields {
            *uses_types = true;
            let ty = &slot.ty;
            return quote!(#ty { #(#fields),* });
        }
        let setters: Option<Vec<TokenStream>> = (slot.generated && !t.args.is_empty())
            .then(|| {
                (t.args.iter())
                    .filter_map(|a| Some((a, value.get(a)?)))
                    .map(|(a, v)| {
                        let field = self.types.arg_field(t.id, a)?;
                        let setter = crate::emit::idents::ident(&field.ident);
                        let arg = setter_value(&field, v)?;
                        Some(quote!(.#setter(#arg)))
                    })
                    .collect()
            })
            .flatten()
            .filter(|_| properties.is_some_and(|p| p.len() == t.args.len()));
        match setters {
            Some(setters) => {
                *uses_types = true;
                let ty = &slot.ty;
                quote!(#ty::builder() #(#setters)* .try_into().expect("the sample arguments build"))
            }
            None => {
                let text = value.to_string();
                // JSON's `\uXXXX` escapes are not Rust's: such a value is read from its text.
                match text.parse::<TokenStream>() {
                    Ok(json) if !text.contains("\\u") => {
                        *uses_json = true;
                        quote!(
                            serde_json::from_value(json!(#json))
                                .expect("the sample arguments decode")
                        )
                    }
                    _ => {
                        let raw = crate::emit::idents::raw_str(&text);
                        quote!(serde_json::from_str(#raw).expect("the sample arguments decode"))
                    }
                }
            }
        }
    }
}

/// The argument of a builder's setter (typify's: `T: TryInto<FieldType>`) for the sample value
/// `v` of `field`, where one is plain to write: a string for a `String` or an enum of strings,
/// a suffixed literal for a number, a `bool`; `None` otherwise (the test then reads JSON).
fn setter_value(field: &crate::emit::types::Field, v: &Value) -> Option<TokenStream> {
    let ty = field.inner.ty.to_string().replace(' ', "");
    let ty = ty
        .trim_start_matches("::std::num::")
        .trim_start_matches("::std::string::");
    let integer = |base: &str| -> Option<TokenStream> {
        let lit = match base {
            "i8" | "i16" | "i32" | "i64" => {
                let n = v.as_i64()?;
                match base {
                    "i8" => proc_macro2::Literal::i8_suffixed(n.try_into().ok()?),
                    "i16" => proc_macro2::Literal::i16_suffixed(n.try_into().ok()?),
                    "i32" => proc_macro2::Literal::i32_suffixed(n.try_into().ok()?),
                    _ => proc_macro2::Literal::i64_suffixed(n),
                }
            }
            "u8" | "u16" | "u32" | "u64" => {
                let n = v.as_u64()?;
                match base {
                    "u8" => proc_macro2::Literal::u8_suffixed(n.try_into().ok()?),
                    "u16" => proc_macro2::Literal::u16_suffixed(n.try_into().ok()?),
                    "u32" => proc_macro2::Literal::u32_suffixed(n.try_into().ok()?),
                    _ => proc_macro2::Literal::u64_suffixed(n),
                }
            }
            _ => return None,
        };
        Some(quote!(#lit))
    };
    let value = match (ty, v) {
        ("String", Value::String(s)) if field.optional => quote!(#s.to_string()),
        ("String", Value::String(s)) => quote!(#s),
        (_, Value::String(s)) if field.inner.unit_enum && !field.optional => quote!(#s),
        ("bool", Value::Bool(b)) => quote!(#b),
        ("f64", Value::Number(n)) => {
            let lit = proc_macro2::Literal::f64_suffixed(n.as_f64()?);
            quote!(#lit)
        }
        (ty, Value::Number(_)) => {
            // `NonZeroU64` takes a `u64` (`TryFrom`), `i64` an `i64`, ...
            let base = ty.strip_prefix("NonZero").map(str::to_lowercase);
            integer(base.as_deref().unwrap_or(ty))?
        }
        _ => return None,
    };
    Some(value)
}
