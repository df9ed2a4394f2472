//! The bookshop written by hand on rmcp 3.11, as an expert would: `impl ServerHandler` by hand,
//! typed arguments through serde, tool list built once, `stdio_pipes`, Streamable HTTP through
//! axum with `TCP_NODELAY`, and on 2026-07-28 the multi-round-trip `input_required` result with a
//! `requestState` sealed by rmcp's own `RequestStateCodec` (HMAC-SHA256, feature `request-state`,
//! bound to the tool and its arguments, 600 s TTL). Same five tools, texts and behaviour as the
//! seed server (`shared/reference/python-seed-servers/bookshop_ref.py`) and the generated bookshop.
//!
//! Usage: `handwritten [--transport stdio|http] [--bind 127.0.0.1:PORT]`.

#![allow(deprecated)] // sampling (recommend_book) is deprecated by SEP-2577 but still served

use std::{collections::HashMap, net::SocketAddr, sync::Arc, time::Duration};

use axum::serve::ListenerExt;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
        CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
        ElicitRequestParams, ElicitationAction, ElicitationSchema, ErrorCode, Implementation,
        InputRequest, InputRequests, InputRequiredResult, JsonObject, ListToolsResult, MetaObject,
        PaginatedRequestParams, ProtocolVersion, RequestStateCodec, SamplingMessage, SealOptions,
        ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
    },
    service::RequestContext,
    transport::{
        stdio_pipes,
        streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    },
};
use serde::Deserialize;
use serde_json::{Value, json};

const STRING_OUT: &str =
    r#"{"type":"object","properties":{"result":{"type":"string"}},"required":["result"]}"#;
const BACKORDER_FORM: &str = r#"{"type":"object","properties":{"confirm":{"type":"boolean","description":"Order anyway and wait?"}},"required":["confirm"]}"#;
const STATE_TTL: Duration = Duration::from_secs(600);

#[derive(Clone)]
struct Bookshop(Arc<Inner>);

struct Inner {
    inventory: HashMap<&'static str, i64>,
    tools: Vec<Tool>,
    codec: RequestStateCodec,
    server_meta: MetaObject,
    backorder_form: ElicitationSchema,
}

#[derive(Deserialize)]
struct SearchArgs {
    query: String,
    #[serde(default = "ten")]
    limit: i64,
    genre: Option<Genre>,
}
fn ten() -> i64 {
    10
}
#[derive(Deserialize)]
enum Genre {
    #[serde(rename = "fiction")]
    Fiction,
    #[serde(rename = "non-fiction")]
    NonFiction,
    #[serde(rename = "poetry")]
    Poetry,
}
#[derive(Deserialize)]
struct Book {
    title: String,
    author: String,
    year: i64,
}
#[derive(Deserialize)]
struct AddArgs {
    book: Book,
}
#[derive(Deserialize)]
struct TitleArgs {
    title: String,
}
#[derive(Deserialize)]
struct GenreArgs {
    genre: String,
}
#[derive(Deserialize)]
struct Backorder {
    confirm: bool,
}

fn schema(json: &str) -> Arc<JsonObject> {
    Arc::new(serde_json::from_str(json).expect("static schema"))
}

fn tool(name: &'static str, description: &'static str, input: &str) -> Tool {
    Tool::new(name, description, schema(input)).with_raw_output_schema(schema(STRING_OUT))
}

impl Bookshop {
    fn new() -> Self {
        let key: Vec<u8> = match std::env::var("MCP_REQUEST_STATE_KEYS") {
            Ok(k) if k.len() >= 32 => k.into_bytes(),
            _ => (0..32u8)
                .map(|i| i.wrapping_mul(37).wrapping_add(11))
                .collect(),
        };
        let mut search = tool(
            "search_books",
            "Search the catalog by title or author.",
            r#"{"type":"object","properties":{"query":{"type":"string","description":"Title or author to search for."},"limit":{"type":"integer","minimum":1,"maximum":50,"default":10,"description":"Maximum number of results."},"genre":{"type":"string","enum":["fiction","non-fiction","poetry"]}},"required":["query"]}"#,
        )
        .with_title("Search the catalog");
        search = search.with_annotations(ToolAnnotations::new().read_only(true).open_world(false));
        let tools = vec![
            search,
            tool(
                "add_book",
                "Add a book to the catalog.",
                r##"{"type":"object","properties":{"book":{"$ref":"#/$defs/Book"}},"required":["book"],"$defs":{"Book":{"description":"A book in the catalog.","type":"object","properties":{"title":{"type":"string"},"author":{"type":"string"},"year":{"type":"integer","minimum":1450,"description":"Year of first publication."}},"required":["title","author","year"]}}}"##,
            ),
            tool(
                "reserve_book",
                "Reserve a copy of a book.",
                r#"{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}"#,
            ),
            tool(
                "order_book",
                "Order a book from the shop.",
                r#"{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}"#,
            ),
            tool(
                "recommend_book",
                "Recommend a book in the given genre.",
                r#"{"type":"object","properties":{"genre":{"type":"string"}},"required":["genre"]}"#,
            ),
        ];
        let mut server_meta = MetaObject(Default::default());
        server_meta.0.insert(
            "io.modelcontextprotocol/serverInfo".into(),
            json!({"name": "Bookshop", "version": "1.0.0"}),
        );
        Bookshop(Arc::new(Inner {
            inventory: HashMap::from([("Dune", 7), ("Neuromancer", 0)]),
            tools,
            codec: RequestStateCodec::try_new(key).expect("key of 32 bytes"),
            server_meta,
            backorder_form: serde_json::from_str(BACKORDER_FORM).expect("form schema"),
        }))
    }

    fn copies(&self, title: &str) -> i64 {
        self.0.inventory.get(title).copied().unwrap_or(0)
    }

    fn text(&self, modern: bool, text: String) -> CallToolResponse {
        let mut result = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
        result.structured_content = Some(json!({ "result": text }));
        if modern {
            result.meta = Some(self.0.server_meta.clone());
        }
        result.into()
    }

    fn input_required(&self, key: &str, request: InputRequest, binding: &[u8]) -> CallToolResponse {
        let mut requests = InputRequests::new();
        requests.insert(key.to_string(), request);
        let state = self.0.codec.seal_with(
            key.as_bytes(),
            &SealOptions::new().associated_data(binding).ttl(STATE_TTL),
        );
        InputRequiredResult::new(Some(requests), Some(state))
            .with_meta(self.0.server_meta.clone())
            .into()
    }

    /// The answer to `key` on a 2026-07-28 retry, when the sealed state is ours and matches.
    fn answer(
        &self,
        request: &CallToolRequestParams,
        key: &str,
        binding: &[u8],
    ) -> Result<Option<Value>, ErrorData> {
        let Some(state) = &request.request_state else {
            return Ok(None);
        };
        let asked = self.0.codec.open_with(state, binding).map_err(|_| {
            ErrorData::invalid_params(
                "Invalid or expired requestState",
                Some(json!({"reason": "invalid_request_state"})),
            )
        })?;
        if asked != key.as_bytes() {
            return Ok(None);
        }
        Ok(request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(key))
            .cloned())
    }
}

fn modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

fn tool_error(tool: &str, message: impl std::fmt::Display) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "Error executing tool {tool}: {message}"
    ))])
    .into()
}

fn missing_capability(what: &str, needs: Value, tool: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode(-32021),
        format!("Client did not declare the {what} capability required by resolver '{tool}'"),
        Some(json!({ "requiredCapabilities": needs })),
    )
}

macro_rules! args {
    ($tool:expr, $args:expr) => {
        match serde_json::from_value(Value::Object($args)) {
            Ok(a) => a,
            Err(e) => return Ok(tool_error($tool, e)),
        }
    };
}

impl ServerHandler for Bookshop {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("Bookshop", "1.0.0"))
            .with_instructions(
                "A small bookshop: search the catalog, add books, reserve, order and get recommendations.",
            )
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut result = ListToolsResult::with_all_items(self.0.tools.clone());
        if modern(&ctx) {
            result.meta = Some(self.0.server_meta.clone());
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let modern = modern(&ctx);
        let arguments = request.arguments.clone().unwrap_or_default();
        match request.name.as_ref() {
            "search_books" => {
                let a: SearchArgs = args!("search_books", arguments);
                if !(1..=50).contains(&a.limit) {
                    return Ok(tool_error("search_books", "limit must be between 1 and 50"));
                }
                let place = match a.genre {
                    Some(Genre::Fiction) => " in fiction",
                    Some(Genre::NonFiction) => " in non-fiction",
                    Some(Genre::Poetry) => " in poetry",
                    None => "",
                };
                Ok(self.text(
                    modern,
                    format!(
                        "Found 3 books matching '{}'{place} (showing up to {}).",
                        a.query, a.limit
                    ),
                ))
            }
            "add_book" => {
                let a: AddArgs = args!("add_book", arguments);
                if a.book.year < 1450 {
                    return Ok(tool_error("add_book", "year must be at least 1450"));
                }
                let b = a.book;
                Ok(self.text(
                    modern,
                    format!("Added '{}' by {} ({}).", b.title, b.author, b.year),
                ))
            }
            "reserve_book" => {
                let a: TitleArgs = args!("reserve_book", arguments);
                let copies = self.copies(&a.title);
                Ok(self.text(
                    modern,
                    if copies == 0 {
                        format!("'{}' is out of stock.", a.title)
                    } else {
                        format!("Reserved '{}' ({} copies left).", a.title, copies - 1)
                    },
                ))
            }
            "order_book" => {
                let a: TitleArgs = args!("order_book", arguments);
                let copies = self.copies(&a.title);
                let delivery = if copies > 0 {
                    "tomorrow"
                } else {
                    "in 2-3 weeks"
                };
                let confirm = if copies > 0 {
                    true
                } else {
                    let message =
                        format!("'{}' is out of stock (2-3 weeks). Order anyway?", a.title);
                    let answer = if modern {
                        let binding = format!("tools/call\0order_book\0{}", a.title);
                        match self.answer(&request, "confirm_backorder", binding.as_bytes())? {
                            Some(answer) => answer,
                            None => {
                                let has = ctx
                                    .client_capabilities()
                                    .is_some_and(|c| c.elicitation.is_some());
                                if !has {
                                    return Err(missing_capability(
                                        "form elicitation",
                                        json!({"elicitation": {"form": {}}}),
                                        "confirm_backorder",
                                    ));
                                }
                                let question = InputRequest::Elicitation(ElicitRequest::new(
                                    ElicitRequestParams::FormElicitationParams {
                                        meta: None,
                                        message,
                                        requested_schema: self.0.backorder_form.clone(),
                                    },
                                ));
                                return Ok(self.input_required(
                                    "confirm_backorder",
                                    question,
                                    binding.as_bytes(),
                                ));
                            }
                        }
                    } else {
                        let has = ctx
                            .client_capabilities()
                            .is_some_and(|c| c.elicitation.is_some());
                        if !has {
                            return Err(missing_capability(
                                "form elicitation",
                                json!({"elicitation": {"form": {}}}),
                                "confirm_backorder",
                            ));
                        }
                        let result = ctx
                            .peer
                            .create_elicitation(ElicitRequestParams::FormElicitationParams {
                                meta: None,
                                message,
                                requested_schema: self.0.backorder_form.clone(),
                            })
                            .await
                            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                        serde_json::to_value(result).unwrap_or_default()
                    };
                    match answer.get("action").and_then(Value::as_str) {
                        Some("accept") => {
                            let content = answer.get("content").cloned().unwrap_or_default();
                            match serde_json::from_value::<Backorder>(content) {
                                Ok(b) => b.confirm,
                                Err(_) => {
                                    return Ok(tool_error(
                                        "order_book",
                                        "Resolver 'confirm_backorder' received an accepted elicitation whose content does not match the requested schema",
                                    ));
                                }
                            }
                        }
                        Some(action) => {
                            return Ok(tool_error(
                                "order_book",
                                format!(
                                    "Resolver for parameter 'backorder' could not resolve: elicitation was {action}"
                                ),
                            ));
                        }
                        None => {
                            return Ok(tool_error(
                                "order_book",
                                "Resolver 'confirm_backorder' received a non-elicitation response",
                            ));
                        }
                    }
                };
                let _ = ElicitationAction::Accept;
                Ok(self.text(
                    modern,
                    if !confirm {
                        "No order placed.".to_string()
                    } else if copies == 0 {
                        format!("Backordered '{}'; it ships in 2-3 weeks.", a.title)
                    } else {
                        format!("Ordered '{}'; it arrives {delivery}.", a.title)
                    },
                ))
            }
            "recommend_book" => {
                let a: GenreArgs = args!("recommend_book", arguments);
                let prompt = format!(
                    "Suggest one {} book title. Answer with the title only.",
                    a.genre
                );
                let params =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 50);
                let has = ctx
                    .client_capabilities()
                    .is_some_and(|c| c.sampling.is_some());
                if !has {
                    return Err(missing_capability(
                        "sampling",
                        json!({"sampling": {}}),
                        "suggest_title",
                    ));
                }
                let result: CreateMessageResult = if modern {
                    let binding = format!("tools/call\0recommend_book\0{}", a.genre);
                    match self.answer(&request, "suggest_title", binding.as_bytes())? {
                        Some(answer) => match serde_json::from_value(answer) {
                            Ok(r) => r,
                            Err(_) => {
                                return Ok(tool_error(
                                    "recommend_book",
                                    "Resolver 'suggest_title' received a response of the wrong kind",
                                ));
                            }
                        },
                        None => {
                            return Ok(self.input_required(
                                "suggest_title",
                                InputRequest::CreateMessage(CreateMessageRequest::new(params)),
                                binding.as_bytes(),
                            ));
                        }
                    }
                } else {
                    #[allow(deprecated)]
                    ctx.peer
                        .create_message(params)
                        .await
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
                };
                let title = result
                    .message
                    .content
                    .first()
                    .and_then(|b| b.as_text())
                    .map(|t| t.text.clone())
                    .unwrap_or_else(|| "the classics".into());
                Ok(self.text(modern, format!("Today's {} pick: {title}", a.genre)))
            }
            other => Err(ErrorData::invalid_params(
                format!("Unknown tool: {other}"),
                None,
            )),
        }
    }
}

/// `handwritten --seal-bench [N]`: the cost of sealing and opening one requestState with rmcp's
/// `RequestStateCodec` (HMAC-SHA256, associated data and TTL), as this server does it.
fn seal_bench(iterations: u32) {
    use std::{hint::black_box, time::Instant};
    let codec = RequestStateCodec::try_new(
        b"a secret of at least thirty-two bytes, for the bench".to_vec(),
    )
    .expect("key");
    let binding = b"tools/call\0order_book\0Neuromancer";
    let options = SealOptions::new().associated_data(binding).ttl(STATE_TTL);
    let payload = br#"{"v":1,"outcomes":{"ask_color":{"q":"WYfdF1xvFptQg-4wIHHIAA","answer":{"action":"accept","content":{"color":"red"}}}},"asked":{"ask_size":"k8ro95zLdj6neDwOgWKKhQ","describe":"WxLokwUI_AIHBGGYS96Olg"}}"#;
    let token = codec.seal_with(payload, &options);
    assert_eq!(
        codec.open_with(&token, binding).expect("open"),
        payload.to_vec()
    );
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(codec.seal_with(black_box(payload), &options));
    }
    let seal = start.elapsed().as_nanos() as f64 / f64::from(iterations);
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(codec.open_with(black_box(&token), binding).unwrap());
    }
    let open = start.elapsed().as_nanos() as f64 / f64::from(iterations);
    let start = Instant::now();
    for _ in 0..iterations {
        let t = codec.seal_with(black_box(payload), &options);
        black_box(codec.open_with(&t, binding).unwrap());
    }
    let both = start.elapsed().as_nanos() as f64 / f64::from(iterations);
    println!(
        "requestState ({} chars, {iterations} iterations): seal {seal:.0} ns/op, open {open:.0} ns/op, seal+open {both:.0} ns/op",
        token.len()
    );
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--seal-bench") {
        let n = std::env::args()
            .nth(2)
            .and_then(|n| n.parse().ok())
            .unwrap_or(100_000);
        return seal_bench(n);
    }
    let mut transport = "stdio".to_string();
    let mut bind: SocketAddr = "127.0.0.1:8000".parse().unwrap();
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        match a.as_str() {
            "--transport" => transport = argv.next().expect("--transport VALUE"),
            "--bind" => {
                bind = argv
                    .next()
                    .expect("--bind HOST:PORT")
                    .parse()
                    .expect("HOST:PORT")
            }
            _ => panic!("usage: handwritten [--transport stdio|http] [--bind HOST:PORT]"),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let shop = Bookshop::new();
        if transport == "http" {
            // As the generated server: plain JSON answers for 2026-07-28 requests.
            let config = StreamableHttpServerConfig::default().with_json_response(true);
            let service = StreamableHttpService::new(
                move || Ok(shop.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(bind).await.expect("bind");
            let listener = listener.tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
            axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = tokio::signal::ctrl_c().await;
                })
                .await
                .expect("serve");
        } else {
            let running = shop.serve(stdio_pipes()).await.expect("stdio");
            let _ = running.waiting().await;
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(100));
}
