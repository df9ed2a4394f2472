//! Shared harness: builds the example servers, starts them over stdio or Streamable HTTP, and
//! connects an rmcp client that answers questions from a script and records everything asked.
#![allow(deprecated, dead_code)]

use std::{
    collections::{HashMap, VecDeque},
    net::TcpListener,
    path::PathBuf,
    process::Stdio,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
        CreateMessageRequestParams, CreateMessageResult, CustomNotification, ElicitRequestParams,
        ElicitResult, ElicitationAction, Implementation, ListRootsResult, ProtocolVersion, Root,
        SamplingMessage,
    },
    service::{
        ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService,
        ServiceError,
    },
    transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess},
};
use serde_json::{Value, json};
use tokio::process::{Child, Command};

/// The two transports every scenario runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

/// The examples the tests run, built together by [`binary`] and by `peers/run.sh` (keep the two
/// lists the same): cargo unifies features over the packages of one build, so another set of
/// packages compiles the runtime and the examples again.
pub const EXAMPLES: [&str; 10] = [
    "bookshop",
    "files",
    "bistro",
    "mrtr-probe",
    "conformance",
    "differential",
    "embedded",
    "lending",
    "fleet",
    "operations",
];

/// Builds the example binaries ([`EXAMPLES`]) once per test process and returns their paths.
pub fn binary(name: &str) -> PathBuf {
    static PATHS: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
    let paths = PATHS.get_or_init(|| {
        let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace")
            .to_path_buf();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut command = std::process::Command::new(cargo);
        // Not the variables `cargo test` set for this process (of the e2e package): a build
        // script may watch one (ring's watches `CARGO_MANIFEST_DIR`), and the next build
        // outside the tests (peers/run.sh's) would then compile it and all that depends on it
        // again.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            let of_the_test = ["CARGO_MANIFEST_", "CARGO_PKG_", "CARGO_BIN_"]
                .iter()
                .any(|prefix| name.starts_with(prefix))
                || [
                    "CARGO_CRATE_NAME",
                    "CARGO_TARGET_TMPDIR",
                    "CARGO_PRIMARY_PACKAGE",
                    "OUT_DIR",
                ]
                .contains(&name.as_ref());
            if of_the_test {
                command.env_remove(name.as_ref());
            }
        }
        let output = command
            .current_dir(&workspace)
            .arg("build")
            .args(EXAMPLES.iter().flat_map(|name| ["-p", name]))
            .arg("--message-format=json")
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo build");
        assert!(
            output.status.success(),
            "cargo build of the examples failed"
        );
        let mut paths = HashMap::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Ok(message) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if message["reason"] == "compiler-artifact"
                && let Some(exe) = message["executable"].as_str()
            {
                let target = message["target"]["name"].as_str().unwrap_or_default();
                paths.insert(target.to_string(), PathBuf::from(exe));
            }
        }
        paths
    });
    paths
        .get(name)
        .unwrap_or_else(|| panic!("no binary {name} in {paths:?}"))
        .clone()
}

/// One question the server asked the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// Form elicitation: message and requested schema.
    Form { message: String, schema: Value },
    /// URL elicitation.
    Url {
        message: String,
        url: String,
        id: String,
    },
    /// `sampling/createMessage` params, as JSON.
    Sample(Value),
    /// `roots/list`.
    Roots,
}

/// Scripted answers and recordings.
#[derive(Default)]
pub struct Script {
    /// Answers to elicitations, in order (a missing answer is a test failure: declines).
    pub answers: Mutex<VecDeque<ElicitResult>>,
    /// Text the "model" answers sampling requests with.
    pub sample_text: Mutex<Option<String>>,
    /// Every question asked.
    pub asked: Mutex<Vec<Question>>,
    /// Every custom notification received: (method, params).
    pub notifications: Mutex<Vec<(String, Option<Value>)>>,
    /// Questions that arrived with no scripted answer.
    pub unscripted: Mutex<usize>,
}

/// The rmcp client handler used by every test.
#[derive(Clone)]
pub struct TestClient {
    pub capabilities: Value,
    pub script: Arc<Script>,
}

impl TestClient {
    /// A client declaring form+URL elicitation, sampling and roots.
    pub fn full() -> Self {
        Self::with_capabilities(json!({
            "elicitation": {"form": {}, "url": {}},
            "sampling": {},
            "roots": {"listChanged": true}
        }))
    }

    /// A client declaring exactly `capabilities`.
    pub fn with_capabilities(capabilities: Value) -> Self {
        TestClient {
            capabilities,
            script: Arc::new(Script::default()),
        }
    }

    /// Queues an accepted answer with `content`.
    pub fn accept(self, content: Value) -> Self {
        self.answer(ElicitResult::new(ElicitationAction::Accept).with_content(content))
    }

    /// Queues an answer.
    pub fn answer(self, result: ElicitResult) -> Self {
        self.script.answers.lock().unwrap().push_back(result);
        self
    }

    /// Sets the sampled text.
    pub fn sample(self, text: &str) -> Self {
        *self.script.sample_text.lock().unwrap() = Some(text.to_string());
        self
    }

    /// The questions asked so far.
    pub fn asked(&self) -> Vec<Question> {
        self.script.asked.lock().unwrap().clone()
    }

    /// The custom notifications received so far.
    pub fn notifications(&self) -> Vec<(String, Option<Value>)> {
        self.script.notifications.lock().unwrap().clone()
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(self.capabilities.clone()).expect("capabilities");
        ClientConfig::new(capabilities, Implementation::new("mcpgen-e2e", "0.1.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let question = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => Question::Form {
                message,
                schema: serde_json::to_value(&requested_schema).expect("schema json"),
            },
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => Question::Url {
                message,
                url,
                id: elicitation_id,
            },
            _ => panic!("unknown elicitation kind"),
        };
        self.script.asked.lock().unwrap().push(question);
        let answer = self.script.answers.lock().unwrap().pop_front();
        Ok(answer.unwrap_or_else(|| {
            *self.script.unscripted.lock().unwrap() += 1;
            ElicitResult::new(ElicitationAction::Decline)
        }))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.script
            .asked
            .lock()
            .unwrap()
            .push(Question::Sample(serde_json::to_value(&params).unwrap()));
        let text = self
            .script
            .sample_text
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| "unscripted".into());
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(text),
            "fake-model".into(),
        ))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.script.asked.lock().unwrap().push(Question::Roots);
        Ok(ListRootsResult::new(vec![Root::new(
            "file:///home/user/proj",
        )]))
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        self.script
            .notifications
            .lock()
            .unwrap()
            .push((notification.method, notification.params));
    }
}

/// A running example server with a connected client.
pub struct Session {
    pub client: TestClient,
    pub service: RunningService<RoleClient, TestClient>,
    /// The HTTP server process (stdio children are owned by the transport).
    pub child: Option<Child>,
    /// The `outputSchema` of each tool of the server, by tool name (unknown for a server
    /// started elsewhere: its results are not checked).
    pub output_schemas: Option<OutputSchemas>,
}

/// The `outputSchema` of each tool of a server, by tool name.
type OutputSchemas = Arc<HashMap<String, Value>>;

/// The `outputSchema`s `server` advertises, by tool name: listed once per test process by a
/// server process of its own (with the session's `env`, which a server may need to start, such
/// as `MCP_PRINCIPAL_SUBJECT`), so that no session under test sees an extra request.
async fn output_schemas(server: &str, env: &[(&str, &str)]) -> OutputSchemas {
    static CACHE: OnceLock<Mutex<HashMap<String, OutputSchemas>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(schemas) = cache.lock().unwrap().get(server) {
        return schemas.clone();
    }
    let exe = binary(server);
    let command = Command::new(&exe).configure(|c| {
        c.args(["--log-level", "warn"]);
        c.envs(env.iter().copied());
    });
    let transport = TokioChildProcess::new(command).expect("spawn stdio server");
    let service = TestClient::full()
        .serve(transport)
        .await
        .expect("connect over stdio");
    let tools = service.list_all_tools().await.expect("tools/list");
    let _ = service.cancel().await;
    let schemas: HashMap<String, Value> = tools
        .into_iter()
        .filter_map(|t| {
            let schema = t.output_schema?;
            Some((t.name.to_string(), Value::Object((*schema).clone())))
        })
        .collect();
    let schemas = Arc::new(schemas);
    cache
        .lock()
        .unwrap()
        .insert(server.to_string(), schemas.clone());
    schemas
}

impl Session {
    /// Starts `server` over `transport` and connects `client` with the legacy handshake.
    pub async fn legacy(server: &str, transport: Transport, client: TestClient) -> Session {
        Self::start(server, transport, client, None, &[]).await
    }

    /// Like [`Session::legacy`], with extra environment variables for the server.
    pub async fn legacy_env(
        server: &str,
        transport: Transport,
        client: TestClient,
        env: &[(&str, &str)],
    ) -> Session {
        Self::start(server, transport, client, None, env).await
    }

    /// Starts `server` and connects with the 2026-07-28 lifecycle (`server/discover`).
    pub async fn modern(server: &str, transport: Transport, client: TestClient) -> Session {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        Self::start(server, transport, client, Some(lifecycle), &[]).await
    }

    /// Like [`Session::modern`], with extra environment variables for the server.
    pub async fn modern_env(
        server: &str,
        transport: Transport,
        client: TestClient,
        env: &[(&str, &str)],
    ) -> Session {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        Self::start(server, transport, client, Some(lifecycle), env).await
    }

    /// Connects `client` with the 2026-07-28 lifecycle to a server already listening at `uri`.
    pub async fn modern_at(uri: &str, client: TestClient) -> Session {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        tls_provider();
        let transport = StreamableHttpClientTransport::from_uri(uri.to_string());
        let service = client
            .clone()
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .expect("connect over HTTP");
        Session {
            client,
            service,
            child: None,
            output_schemas: None,
        }
    }

    async fn start(
        server: &str,
        transport: Transport,
        client: TestClient,
        lifecycle: Option<ClientLifecycleMode>,
        env: &[(&str, &str)],
    ) -> Session {
        let exe = binary(server);
        let handler = client.clone();
        let (service, child) = match transport {
            Transport::Stdio => {
                let command = Command::new(&exe).configure(|c| {
                    c.args(["--log-level", "warn"]);
                    c.envs(env.iter().copied());
                });
                let transport = TokioChildProcess::new(command).expect("spawn stdio server");
                let service = match lifecycle {
                    None => handler.serve(transport).await,
                    Some(l) => handler.serve_with_lifecycle(transport, l).await,
                };
                (service.expect("connect over stdio"), None)
            }
            Transport::Http => {
                let (child, port) = spawn_http_with(&exe, env, "warn", None).await;
                let uri = format!("http://127.0.0.1:{port}/mcp");
                tls_provider();
                let transport = StreamableHttpClientTransport::from_uri(uri);
                let service = match lifecycle {
                    None => handler.serve(transport).await,
                    Some(l) => handler.serve_with_lifecycle(transport, l).await,
                };
                (service.expect("connect over HTTP"), Some(child))
            }
        };
        Session {
            client,
            service,
            child,
            output_schemas: Some(output_schemas(server, env).await),
        }
    }

    /// Calls a tool; `Ok` is the tool result (maybe `isError`), `Err` a protocol error.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<CallToolResult, ErrorData> {
        let Value::Object(arguments) = arguments else {
            panic!("arguments must be an object");
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let call = self.service.call_tool(params);
        match tokio::time::timeout(Duration::from_secs(20), call).await {
            Err(_) => panic!("tools/call {tool} timed out"),
            Ok(Ok(result)) => {
                self.check_output(tool, &result);
                Ok(result)
            }
            Ok(Err(ServiceError::McpError(error))) => Err(error),
            Ok(Err(other)) => panic!("tools/call {tool} failed: {other}"),
        }
    }

    /// A successful result's `structuredContent` validates against the `outputSchema` the
    /// server advertises for `tool` (as the Python SDK client checks it), formats included.
    fn check_output(&self, tool: &str, result: &CallToolResult) {
        if result.is_error == Some(true) {
            return;
        }
        let Some(schema) = self.output_schemas.as_ref().and_then(|s| s.get(tool)) else {
            return;
        };
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .unwrap_or_else(|e| panic!("{tool}: outputSchema does not compile: {e}\n{schema}"));
        let content = result
            .structured_content
            .clone()
            .unwrap_or_else(|| panic!("{tool}: no structuredContent, but an outputSchema"));
        let errors: Vec<String> = validator
            .iter_errors(&content)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{tool}: the result does not validate against its outputSchema: {errors:?}\n{content}"
        );
    }

    /// Calls a tool that must succeed (no `isError`) and returns its text.
    pub async fn text(&self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await.expect("no protocol error");
        assert_ne!(
            result.is_error,
            Some(true),
            "unexpected isError: {result:?}"
        );
        let text = only_text(&result);
        assert_eq!(
            result.structured_content,
            Some(json!({ "result": text })),
            "structuredContent mirrors the text"
        );
        text
    }

    /// Calls a tool that must fail with `isError` and returns the error text.
    pub async fn error_text(&self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments).await.expect("no protocol error");
        assert_eq!(result.is_error, Some(true), "expected isError: {result:?}");
        assert_eq!(result.structured_content, None);
        only_text(&result)
    }

    /// Calls a tool that must fail with a JSON-RPC error.
    pub async fn protocol_error(&self, tool: &str, arguments: Value) -> ErrorData {
        match self.call(tool, arguments).await {
            Ok(result) => panic!("expected a protocol error, got {result:?}"),
            Err(error) => error,
        }
    }

    /// Closes the client, then the server.
    pub async fn close(mut self) {
        let _ = self.service.cancel().await;
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }
}

/// The single text block of a result.
pub fn only_text(result: &CallToolResult) -> String {
    assert_eq!(result.content.len(), 1, "one content block: {result:?}");
    result.content[0]
        .as_text()
        .expect("a text block")
        .text
        .clone()
}

/// A port that was free a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Starts `exe --transport http --bind 127.0.0.1:<port>` and waits until it accepts
/// connections.
pub async fn spawn_http(exe: &PathBuf) -> (Child, u16) {
    spawn_http_with(exe, &[], "warn", None).await
}

/// [`spawn_http`] with extra environment variables, a log level, and stderr to `log` (else
/// inherited).
pub async fn spawn_http_with(
    exe: &PathBuf,
    env: &[(&str, &str)],
    log_level: &str,
    log: Option<&std::path::Path>,
) -> (Child, u16) {
    for _attempt in 0..5 {
        let port = free_port();
        let mut command = Command::new(exe);
        command
            .args([
                "--transport",
                "http",
                "--bind",
                &format!("127.0.0.1:{port}"),
                "--log-level",
                log_level,
            ])
            .envs(env.iter().copied())
            .kill_on_drop(true);
        if let Some(log) = log {
            command.stderr(std::fs::File::create(log).expect("create log file"));
        }
        let mut child = command.spawn().expect("spawn HTTP server");
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                // Another test's server may have taken the port in between (ours then exits at
                // once, unable to bind, while the other answers): make sure ours is running.
                tokio::time::sleep(Duration::from_millis(100)).await;
                if let Ok(None) = child.try_wait() {
                    return (child, port);
                }
                break;
            }
            if let Ok(Some(_)) = child.try_wait() {
                break; // port taken in between: try another
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill().await;
    }
    panic!("the HTTP server did not start");
}

/// Waits up to two seconds for `condition`.
pub async fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    condition()
}

/// Defines `mod <case> { stdio, http }` tests that run `async fn <case>(Transport)` over both
/// transports.
#[macro_export]
macro_rules! over_both_transports {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn stdio() {
                    super::$case($crate::common::Transport::Stdio).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn http() {
                    super::$case($crate::common::Transport::Http).await
                }
            }
        )*
    };
}

/// Installs rustls' ring provider for this test process (once; later calls do nothing). The
/// examples' runtime enables reqwest's `rustls-no-provider` (its OAuth verifier passes its own
/// ring provider), and cargo unifies that feature into this crate's reqwest, whose clients
/// (ours and rmcp's HTTP transport) then need a process-wide provider to be built at all.
pub fn tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// nginx is found on the PATH or in /usr/sbin (`scripts/setup-system.sh`, run by the test
/// script, installs it); when it is missing and the test runs as root, it is installed with
/// `apt-get install -y nginx-light` (bounded by `timeout`), one test at a time: two concurrent
/// apt-get runs fail on dpkg's lock.
/// The nginx binary: found, or installed with apt-get when running as root.
pub fn nginx() -> PathBuf {
    let find = || {
        ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .or_else(|| {
                let out = std::process::Command::new("sh")
                    .args(["-c", "command -v nginx"])
                    .output()
                    .ok()?;
                let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
                (!path.is_empty()).then(|| PathBuf::from(path))
            })
    };
    if let Some(path) = find() {
        return path;
    }
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = find() {
        return path;
    }
    let uid = std::process::Command::new("id")
        .arg("-u")
        .output()
        .expect("id -u");
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "nginx is not installed and this test is not running as root: install nginx-light"
    );
    let status = std::process::Command::new("sh")
        .args([
            "-c",
            "export DEBIAN_FRONTEND=noninteractive; \
             timeout 300 apt-get install -y -q nginx-light >/dev/null 2>&1 || \
             (timeout 300 apt-get update -q >/dev/null 2>&1 && \
              timeout 300 apt-get install -y -q nginx-light >/dev/null 2>&1)",
        ])
        .status()
        .expect("run apt-get");
    assert!(status.success(), "apt-get install nginx-light failed");
    find().expect("nginx after apt-get install")
}

/// An nginx started here as a single process (`master_process off`: killing it leaves nothing
/// behind), on a free loopback port, with its files in a directory of the test's.
pub struct Nginx {
    /// The port it listens on.
    pub port: u16,
    /// Its process (killed on drop).
    pub child: Child,
}

impl Nginx {
    /// Starts nginx in `dir` (which must exist) with `http_block(port)` inside its `http`
    /// block (access log format `upstream`: `$upstream_addr|$status|$request_method|
    /// $http_mcp_session_id`, in `dir/access.log`).
    pub async fn start(dir: &std::path::Path, http_block: impl Fn(u16) -> String) -> Nginx {
        let nginx_bin = nginx();
        for attempt in 0..5 {
            let port = free_port();
            let body = http_block(port);
            let conf = format!(
                "master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    log_format upstream '$upstream_addr|$status|$request_method|$http_mcp_session_id';
    access_log {dir}/access.log upstream;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    {body}
}}
",
                dir = dir.display()
            );
            let conf_path = dir.join("nginx.conf");
            std::fs::write(&conf_path, conf).expect("write nginx.conf");
            let mut child = Command::new(&nginx_bin)
                .arg("-p")
                .arg(dir)
                .arg("-c")
                .arg(&conf_path)
                .arg("-e")
                .arg(dir.join("error.log"))
                .args(["-g", "daemon off;"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .kill_on_drop(true)
                .spawn()
                .expect("spawn nginx");
            for _ in 0..200 {
                if tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_ok()
                {
                    return Nginx { port, child };
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            let _ = child.kill().await;
            eprintln!(
                "nginx attempt {attempt} failed: {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
        }
        panic!("nginx did not start");
    }
}
