//! Raw wire clients for the adversarial suite: a stdio server fed arbitrary bytes (every line it
//! writes recorded, so a test can count the answers each id got), Streamable HTTP requests with
//! arbitrary bodies and headers, the 2026-07-28 envelope, and a process's resident memory.

use std::{
    collections::HashMap,
    io::{BufRead, BufReader, Write},
    path::PathBuf,
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc::{Receiver, RecvTimeoutError, channel},
    thread,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::common;

/// The legacy handshake's `initialize`, declaring form elicitation, sampling and roots.
pub fn initialize(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}}, "sampling": {}, "roots": {}},
        "clientInfo": {"name": "adversarial", "version": "0"}
    }})
}

/// `notifications/initialized`.
pub fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

/// A request.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A 2026-07-28 request: `params` with the `_meta` envelope (form elicitation and sampling
/// declared).
pub fn modern(id: impl Into<Value>, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}, "sampling": {}}
    });
    request(id, method, params)
}

/// A `tools/call` of `name` with `arguments`.
pub fn call(id: impl Into<Value>, name: &str, arguments: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

/// One call per example that must work at any point: its tool, arguments and answer text.
pub fn normal_call(example: &str) -> (&'static str, Value, &'static str) {
    match example {
        "bookshop" => (
            "search_books",
            json!({"query": "dune", "limit": 5}),
            "Found 3 books matching 'dune' (showing up to 5).",
        ),
        "files" => (
            "delete_folder",
            json!({"path": "/tmp/empty"}),
            "deleted /tmp/empty",
        ),
        "bistro" => (
            "book_table",
            json!({"date": "2025-12-27", "party_size": 2}),
            "Booked a table for 2 on 2025-12-27.",
        ),
        "conformance" => (
            "test_simple_text",
            json!({}),
            "This is a simple text response for testing.",
        ),
        other => panic!("no normal call for {other}"),
    }
}

/// The text of a successful `tools/call` answer (panics on anything else).
pub fn result_text(answer: &Value) -> &str {
    assert!(
        matches!(
            answer["result"].get("isError"),
            None | Some(Value::Bool(false))
        ),
        "a successful result: {answer}"
    );
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {answer}"))
}

/// Asserts `message` is a well-formed JSON-RPC 2.0 response: `jsonrpc: "2.0"`, an integer,
/// string or `null` id, and exactly one of `result` and `error` (an error with an integer
/// `code` and a string `message`). A missing `id` passes here (rmcp omits it on its -32600);
/// the `item3_` tests require `"id": null`.
pub fn assert_well_formed_response(message: &Value) {
    let object = message
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {message}"));
    assert_eq!(object.get("jsonrpc"), Some(&json!("2.0")), "{message}");
    if let Some(id) = object.get("id") {
        assert!(
            id.is_null() || id.is_i64() || id.is_string(),
            "an id is an integer, a string or null: {message}"
        );
    }
    match (object.get("result"), object.get("error")) {
        (Some(_), None) => {}
        (None, Some(error)) => {
            assert!(error["code"].is_i64(), "integer error code: {message}");
            assert!(error["message"].is_string(), "error message: {message}");
        }
        _ => panic!("exactly one of result and error: {message}"),
    }
}

/// The resident memory of process `pid` in KiB (`VmRSS` in `/proc/PID/status`).
pub fn rss_kib(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/PID/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// A server over stdio, fed raw bytes. A thread reads its stdout line by line; every line must
/// be JSON (stdout carries JSON-RPC only). Answers (messages without `method`) are counted per
/// id, so a test can check that each request got exactly one.
pub struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    /// How many answers each id (as compact JSON) has received.
    answers: HashMap<String, usize>,
    /// Answers read but not yet taken by [`StdioServer::answer`].
    pending: Vec<Value>,
    /// Requests and notifications the server sent, in order.
    pub from_server: Vec<Value>,
}

impl StdioServer {
    /// Starts `example` (`--log-level error`, stderr discarded) with extra arguments.
    pub fn spawn(example: &str, args: &[&str]) -> StdioServer {
        Self::spawn_path(common::binary(example), args)
    }

    /// [`StdioServer::spawn`] with extra environment variables.
    pub fn spawn_env(example: &str, env: &[(&str, &str)]) -> StdioServer {
        Self::spawn_path_env(common::binary(example), &[], env)
    }

    /// [`StdioServer::spawn`] for a binary path.
    pub fn spawn_path(exe: PathBuf, args: &[&str]) -> StdioServer {
        Self::spawn_path_env(exe, args, &[])
    }

    fn spawn_path_env(exe: PathBuf, args: &[&str], env: &[(&str, &str)]) -> StdioServer {
        let mut child = Command::new(exe)
            .args(["--log-level", "error"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the stdio server");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (send, lines) = channel();
        thread::spawn(move || {
            loop {
                let mut line = Vec::new();
                match stdout.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if send.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        StdioServer {
            child,
            stdin,
            lines,
            answers: HashMap::new(),
            pending: Vec::new(),
            from_server: Vec::new(),
        }
    }

    /// Starts `example` and completes the legacy handshake (`initialize` id 0, then
    /// `notifications/initialized`).
    pub fn legacy(example: &str) -> StdioServer {
        let mut server = Self::spawn(example, &[]);
        server.send(&initialize(0));
        let answer = server.answer(&json!(0));
        assert_eq!(
            answer["result"]["protocolVersion"],
            json!("2025-11-25"),
            "{answer}"
        );
        server.send(&initialized());
        server
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its resident memory in KiB.
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.pid())
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Writes `bytes` to stdin as they are (the caller adds the newline).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server's stdin");
        stdin.flush().expect("flush the server's stdin");
    }

    /// Writes `message` as one line.
    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Closes stdin.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Waits up to `within` for the process to exit; its exit code.
    pub fn wait_exit(&mut self, within: Duration) -> Option<Option<i32>> {
        let start = Instant::now();
        while start.elapsed() < within {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.code());
            }
            thread::sleep(Duration::from_millis(10));
        }
        None
    }

    /// Reads one line within `timeout` and files it: an answer is counted and queued, a
    /// server request or notification recorded. `false` on timeout or end of output.
    fn read_one(&mut self, timeout: Duration) -> bool {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => {
                let message: Value = serde_json::from_slice(&line).unwrap_or_else(|e| {
                    panic!(
                        "stdout carries JSON-RPC only ({e}): {}",
                        String::from_utf8_lossy(&line[..line.len().min(300)])
                    )
                });
                if message.get("method").is_some() {
                    self.from_server.push(message);
                } else {
                    assert_well_formed_response(&message);
                    *self.answers.entry(message["id"].to_string()).or_default() += 1;
                    self.pending.push(message);
                }
                true
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => false,
        }
    }

    /// The answer to `id`, waiting up to 20 s (panics if none comes).
    pub fn answer(&mut self, id: &Value) -> Value {
        self.answer_within(id, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("no answer to id {id}"))
    }

    /// The answer to `id` if it comes within `timeout`.
    pub fn answer_within(&mut self, id: &Value, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(i) = self.pending.iter().position(|m| &m["id"] == id) {
                return Some(self.pending.remove(i));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !self.read_one(left) {
                return None;
            }
        }
    }

    /// The next request the server sends (e.g. `elicitation/create`), waiting up to 20 s.
    pub fn server_request(&mut self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(i) = self.from_server.iter().position(|m| m.get("id").is_some()) {
                return self.from_server.remove(i);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero() && self.read_one(left),
                "the server sent no request"
            );
        }
    }

    /// Reads everything that arrives within `quiet` of the last line; the answers among it
    /// (also queued for [`StdioServer::answer`]).
    pub fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let before = self.pending.len();
        while self.read_one(quiet) {}
        self.pending[before..].to_vec()
    }

    /// How many answers `id` has received so far.
    pub fn answers_to(&self, id: &Value) -> usize {
        self.answers.get(&id.to_string()).copied().unwrap_or(0)
    }

    /// Every id answered so far with its count.
    pub fn answer_counts(&self) -> &HashMap<String, usize> {
        &self.answers
    }

    /// Calls the example's normal tool with `id` and checks the exact answer text.
    pub fn normal_call_works(&mut self, example: &str, id: i64) {
        let (tool, arguments, text) = normal_call(example);
        self.send(&call(id, tool, arguments));
        let answer = self.answer(&json!(id));
        assert_eq!(result_text(&answer), text, "{answer}");
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP reply: status, `Content-Type`, `Mcp-Session-Id`, `Retry-After` and body.
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub session: Option<String>,
    /// `Retry-After`.
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body = String::from_utf8_lossy(&self.body[..self.body.len().min(500)]);
        write!(f, "HTTP {} {:?} {body:?}", self.status, self.content_type)
    }
}

impl Reply {
    /// The JSON-RPC messages in the body: the body itself for `application/json`, each SSE
    /// event's `data` for `text/event-stream` (empty priming events skipped).
    pub fn messages(&self) -> Vec<Value> {
        let text = String::from_utf8_lossy(&self.body);
        if self.content_type.starts_with("text/event-stream") {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .filter(|data| !data.is_empty())
                .map(|data| serde_json::from_str(data).expect("SSE data is JSON"))
                .collect()
        } else {
            vec![
                serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("a JSON body ({e}): {} {text}", self.status)),
            ]
        }
    }

    /// The one JSON-RPC message of the body.
    pub fn message(&self) -> Value {
        let mut messages = self.messages();
        assert_eq!(messages.len(), 1, "one message: {self:?}");
        messages.remove(0)
    }
}

/// A server over Streamable HTTP at `http://127.0.0.1:<port>/mcp`.
pub struct HttpServer {
    pub child: tokio::process::Child,
    pub port: u16,
    pub client: reqwest::Client,
}

impl HttpServer {
    /// Starts `example` with `--transport http` on a free loopback port.
    pub async fn spawn(example: &str) -> HttpServer {
        Self::spawn_with(example, &[]).await
    }

    /// [`HttpServer::spawn`] with extra command-line arguments (`--log-level error`, stderr
    /// discarded); panics if the server exits instead of listening.
    pub async fn spawn_with(example: &str, args: &[&str]) -> HttpServer {
        Self::spawn_logging(example, args, None).await
    }

    /// [`HttpServer::spawn_with`], its stderr (errors only) appended to `log` when given.
    pub async fn spawn_logging(
        example: &str,
        args: &[&str],
        log: Option<&std::path::Path>,
    ) -> HttpServer {
        let exe = common::binary(example);
        for _attempt in 0..5 {
            let port = common::free_port();
            let mut child = tokio::process::Command::new(&exe)
                .args([
                    "--transport",
                    "http",
                    "--bind",
                    &format!("127.0.0.1:{port}"),
                ])
                .args(["--log-level", "error"])
                .args(args)
                .stdout(Stdio::null())
                .stderr(match log {
                    Some(path) => Stdio::from(
                        std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(path)
                            .expect("the log file"),
                    ),
                    None => Stdio::null(),
                })
                .kill_on_drop(true)
                .spawn()
                .expect("spawn the HTTP server");
            for _ in 0..200 {
                if let Ok(Some(status)) = child.try_wait() {
                    // Another server took the port, or the arguments were refused.
                    assert!(
                        status.code() != Some(2),
                        "{example} refused the arguments {args:?}"
                    );
                    break;
                }
                if tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_ok()
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if let Ok(None) = child.try_wait() {
                        return HttpServer {
                            child,
                            port,
                            client: loopback_client(),
                        };
                    }
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let _ = child.kill().await;
        }
        panic!("the HTTP server did not start");
    }

    /// `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("server running")
    }

    /// Its resident memory in KiB.
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.pid())
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// POSTs `body` to `/mcp` with JSON `Content-Type`, the MCP `Accept` and `headers`.
    pub async fn post(&self, body: impl Into<Vec<u8>>, headers: &[(&str, &str)]) -> Reply {
        post(&self.client, &self.url(), body.into(), headers)
            .await
            .expect("the server answers the POST")
    }

    /// POSTs `message` as JSON.
    pub async fn post_json(&self, message: &Value, headers: &[(&str, &str)]) -> Reply {
        self.post(serde_json::to_vec(message).unwrap(), headers)
            .await
    }

    /// POSTs a 2026-07-28 request (made with [`modern`]) with the headers the transport asks
    /// for (`MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` when `params.name` is set).
    pub async fn post_modern(&self, message: &Value) -> Reply {
        post_modern(&self.client, &self.url(), message)
            .await
            .expect("the server answers the POST")
    }

    /// Opens a legacy session (initialize + initialized); its `Mcp-Session-Id`.
    pub async fn legacy_session(&self) -> String {
        let reply = self.post_json(&initialize(0), &[]).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(
            reply.message()["result"]["protocolVersion"],
            json!("2025-11-25")
        );
        let session = reply.session.expect("Mcp-Session-Id on initialize");
        let reply = self
            .post_json(
                &initialized(),
                &[
                    ("Mcp-Session-Id", session.as_str()),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
            )
            .await;
        assert_eq!(reply.status, 202, "{reply:?}");
        session
    }

    /// A 2026-07-28 call of the example's normal tool; checks the exact answer text.
    pub async fn normal_call_works(&self, example: &str) {
        let (tool, arguments, text) = normal_call(example);
        let reply = self
            .post_modern(&modern(
                7,
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
            ))
            .await;
        assert_eq!(reply.status, 200, "{reply:?}");
        let answer = reply.message();
        assert_eq!(answer["id"], json!(7));
        assert_eq!(result_text(&answer), text, "{answer}");
    }
}

/// An HTTP client that never goes through a proxy (`HTTP_PROXY` in the environment), so every
/// request stays on the loopback.
pub fn loopback_client() -> reqwest::Client {
    // See `tls_provider` in tests/common/mod.rs: the unified reqwest needs a process-wide
    // rustls provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("build the HTTP client")
}

/// POSTs `body` to `url` with JSON `Content-Type`, the MCP `Accept` and `headers`.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    body: Vec<u8>,
    headers: &[(&str, &str)],
) -> Result<Reply, reqwest::Error> {
    let mut request = client
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await?;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let status = response.status().as_u16();
    let content_type = header("content-type").unwrap_or_default();
    let session = header("mcp-session-id");
    let retry_after = header("retry-after");
    let body = response.bytes().await?.to_vec();
    Ok(Reply {
        status,
        content_type,
        session,
        retry_after,
        body,
    })
}

/// [`HttpServer::post_modern`] with any client.
pub async fn post_modern(
    client: &reqwest::Client,
    url: &str,
    message: &Value,
) -> Result<Reply, reqwest::Error> {
    let method = message["method"].as_str().expect("a method").to_string();
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_string()),
        ("Mcp-Method", method),
    ];
    if let Some(name) = message["params"]["name"].as_str() {
        headers.push(("Mcp-Name", name.to_string()));
    }
    let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
    post(client, url, serde_json::to_vec(message).unwrap(), &headers).await
}
