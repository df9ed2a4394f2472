//! Operating a generated server (issue 21: health, body size, graceful drain, and cancellation
//! by closing a 2026-07-28 request) against the operations example, with rmcp clients of both
//! eras, raw HTTP and TCP, signals (`kill -TERM`), and nginx from Debian as the load balancer
//! (`common::Nginx`, started here on a loopback port) in front of one instance, probed as an
//! orchestrator probes it.
#![allow(deprecated)]

mod common;

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::PathBuf,
    process::ExitStatus,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use common::{Nginx, TestClient, binary, free_port, only_text, tls_provider};
use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
        ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
    },
    service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService},
    transport::StreamableHttpClientTransport,
};
use serde_json::{Value, json};
use tokio::{process::Child, sync::watch};

/// The body of a request refused while the server drains (`id` 9).
fn draining_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32000, "message": "Server is shutting down; try again later"}})
}

/// The answer of a call the drain's timeout ended.
const SHUT_DOWN: &str = "Error executing tool work: the server shut down before the call finished";

/// Builds the examples (once per process) before a test's own timeout starts: the build
/// blocks its thread.
fn built() {
    let _ = binary("operations");
}

/// One operations server over HTTP, its stderr in a file of its own.
struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Server {
    /// Starts the operations example with `--transport http` and `args`.
    async fn start(tag: &str, args: &[&str]) -> Server {
        let dir = std::env::temp_dir().join(format!("mcpgen-ops-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let exe = binary("operations");
        for _attempt in 0..5 {
            let port = free_port();
            let mut child = tokio::process::Command::new(&exe)
                .args(["--transport", "http", "--bind"])
                .arg(format!("127.0.0.1:{port}"))
                .args(["--log-level", "info"])
                .args(args)
                .stderr(std::fs::File::create(dir.join("server.log")).expect("log file"))
                .kill_on_drop(true)
                .spawn()
                .expect("spawn the operations server");
            for _ in 0..200 {
                if tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .is_ok()
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if let Ok(None) = child.try_wait() {
                        return Server { child, port, dir };
                    }
                    break;
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let _ = child.kill().await;
        }
        panic!("the operations server did not start");
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// Sends SIGTERM (as an orchestrator does).
    fn terminate(&self) {
        let pid = self.child.id().expect("the server runs");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM {pid}");
    }

    /// Waits up to `limit` for the process to exit.
    async fn exit(&mut self, limit: Duration) -> ExitStatus {
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(status) => status.expect("wait for the server"),
            Err(_) => panic!(
                "the server did not exit within {limit:?}; its log:\n{}",
                self.log()
            ),
        }
    }

    /// nginx in front of this server, proxying every path (`/mcp`, `/healthz`, `/readyz`).
    async fn behind_nginx(&self) -> Nginx {
        let port = self.port;
        Nginx::start(&self.dir, |listen| {
            format!(
                "upstream operations {{ server 127.0.0.1:{port} max_fails=0; }}
    server {{
        listen 127.0.0.1:{listen};
        location / {{
            proxy_pass http://operations;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Connection \"\";
            proxy_buffering off;
        }}
    }}"
            )
        })
        .await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A 2026-07-28 JSON-RPC request.
fn modern(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn http() -> reqwest::Client {
    tls_provider();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("an HTTP client")
}

/// POSTs a 2026-07-28 `tools/call` of `tool` with `arguments` (id 9) to `url`.
async fn post_call(
    client: &reqwest::Client,
    url: &str,
    tool: &str,
    arguments: Value,
) -> reqwest::Response {
    let body = modern(
        9,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    client
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", tool)
        .body(serde_json::to_vec(&body).unwrap())
        .send()
        .await
        .expect("POST answered")
}

/// The `stats` of `tag` (`{started, finished, dropped, stopped_early}`), asked at `url`.
async fn stats(client: &reqwest::Client, url: &str, tag: &str) -> Value {
    let response = post_call(client, url, "stats", json!({"tag": tag})).await;
    assert_eq!(response.status().as_u16(), 200);
    let answer: Value = response.json().await.expect("a JSON answer");
    answer["result"]["structuredContent"].clone()
}

/// Waits up to `limit` for the `stats` of `tag` to have `started == n`.
async fn until_started(client: &reqwest::Client, url: &str, tag: &str, n: u64, limit: Duration) {
    let start = Instant::now();
    loop {
        let counts = stats(client, url, tag).await;
        if counts["started"] == json!(n) {
            return;
        }
        assert!(
            start.elapsed() < limit,
            "{n} calls of {tag} did not start within {limit:?}: {counts}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A client that answers the `quote` question (`{"ok": true}`) only once `go` says so, and
/// counts the questions asked.
#[derive(Clone)]
struct WaitingClient {
    go: watch::Receiver<bool>,
    asked: Arc<AtomicUsize>,
}

impl ClientHandler for WaitingClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).expect("capabilities");
        ClientConfig::new(capabilities, Implementation::new("mcpgen-e2e", "0.1.0"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let mut go = self.go.clone();
        let _ = go.wait_for(|go| *go).await;
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"ok": true})))
    }
}

/// An rmcp client of `handler` at `url`: a legacy session, or 2026-07-28 (`server/discover`).
async fn connect<C: ClientHandler>(
    handler: C,
    url: &str,
    modern: bool,
) -> RunningService<RoleClient, C> {
    tls_provider();
    let transport = StreamableHttpClientTransport::from_uri(url.to_string());
    let service = if modern {
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        handler.serve_with_lifecycle(transport, lifecycle).await
    } else {
        handler.serve(transport).await
    };
    service.expect("connect over HTTP")
}

/// Calls `tool` through `peer` (a clone of a client's peer).
async fn call(
    peer: rmcp::Peer<RoleClient>,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, String> {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    match tokio::time::timeout(Duration::from_secs(40), peer.call_tool(params)).await {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err(format!("tools/call {tool} timed out")),
    }
}

/// A readiness probe polling `/readyz` through nginx every 50 ms, as an orchestrator would:
/// `200 ready` before SIGTERM, `503 draining` within 200 ms after it; `/healthz` stays `200`
/// throughout (with any `Host`), and takes only GET and HEAD.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_through_nginx_flips_at_the_signal_and_liveness_stays() {
    built();
    tokio::time::timeout(Duration::from_secs(120), async {
        let mut server = Server::start("ready", &["--drain-timeout", "10s"]).await;
        let nginx = server.behind_nginx().await;
        let proxy = format!("http://127.0.0.1:{}", nginx.port);
        let client = http();

        // The health endpoints before the signal.
        let ready = client.get(format!("{proxy}/readyz")).send().await.unwrap();
        assert_eq!(ready.status().as_u16(), 200);
        assert_eq!(ready.headers()["content-type"], "text/plain; charset=utf-8");
        assert_eq!(ready.text().await.unwrap(), "ready\n");
        let head = client.head(format!("{proxy}/readyz")).send().await.unwrap();
        assert_eq!(head.status().as_u16(), 200);
        assert_eq!(head.text().await.unwrap(), "");
        let healthy = client
            .get(format!("{proxy}/healthz"))
            .header("Host", "evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(healthy.status().as_u16(), 200);
        assert_eq!(healthy.text().await.unwrap(), "ok\n");
        let post = client
            .post(format!("{proxy}/healthz"))
            .send()
            .await
            .unwrap();
        assert_eq!(post.status().as_u16(), 405);
        assert_eq!(post.headers()["allow"], "GET, HEAD");
        // MCP itself still checks Host.
        let mcp = client
            .post(format!("{proxy}/mcp"))
            .header("Host", "evil.example")
            .header("Content-Type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(mcp.status().as_u16(), 403);

        // A call keeps the drain going while the probe watches.
        let url = server.url();
        let working = {
            let client = client.clone();
            let url = format!("{proxy}/mcp");
            tokio::spawn(async move {
                post_call(&client, &url, "work", json!({"ms": 1500, "tag": "ready"}))
                    .await
                    .json::<Value>()
                    .await
                    .expect("a JSON answer")
            })
        };
        until_started(&client, &url, "ready", 1, Duration::from_secs(10)).await;

        let (probes_tx, mut probes_rx) = tokio::sync::mpsc::unbounded_channel();
        let poller = {
            let client = client.clone();
            let proxy = proxy.clone();
            tokio::spawn(async move {
                loop {
                    let readyz = client.get(format!("{proxy}/readyz")).send().await;
                    let healthz = client
                        .get(format!("{proxy}/healthz"))
                        .header("Host", "evil.example")
                        .send()
                        .await;
                    let (Ok(readyz), Ok(healthz)) = (readyz, healthz) else {
                        break;
                    };
                    let at = Instant::now();
                    let ready = (
                        readyz.status().as_u16(),
                        readyz.headers().get("retry-after").cloned(),
                        readyz.text().await.unwrap_or_default(),
                    );
                    let live = (
                        healthz.status().as_u16(),
                        healthz.text().await.unwrap_or_default(),
                    );
                    if probes_tx.send((at, ready, live)).is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        let signalled = Instant::now();
        server.terminate();
        let answer = working.await.unwrap();
        assert_eq!(
            answer["result"]["content"][0]["text"],
            json!("Worked 1500 ms."),
            "{answer}"
        );
        poller.abort();
        let mut before = 0;
        let mut first_draining = None;
        while let Ok((at, (status, retry_after, body), (live, live_body))) = probes_rx.try_recv() {
            // nginx answers 502 once the server is gone; the probes until then count.
            if live == 502 {
                break;
            }
            assert_eq!((live, live_body.as_str()), (200, "ok\n"));
            if at < signalled {
                assert_eq!((status, body.as_str()), (200, "ready\n"));
                before += 1;
            } else if status == 503 {
                assert_eq!(body, "draining\n");
                assert_eq!(retry_after.as_ref().map(|v| v.to_str().unwrap()), Some("5"));
                first_draining.get_or_insert(at);
            } else {
                assert!(first_draining.is_none(), "ready again after draining");
            }
        }
        assert!(before >= 2, "{before} probes before the signal");
        let flipped = first_draining.expect("/readyz answered 503 while draining") - signalled;
        assert!(
            flipped <= Duration::from_millis(200),
            "503 after {flipped:?}"
        );
        assert!(server.exit(Duration::from_secs(5)).await.success());
        let log = server.log();
        assert!(
            log.contains(
                "SIGTERM: draining (1 call in flight, up to 10s); a second signal exits at once"
            ),
            "{log}"
        );
    })
    .await
    .expect("the test took too long");
}

/// A drain under load through nginx: 32 calls of both eras in flight at SIGTERM all get their
/// result, new calls and sessions get 503, the requests that continue a call in flight (a
/// legacy elicitation's answer, a 2026-07-28 retry with `requestState`) are served, and the
/// process exits 0 soon after the last call ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_under_load_loses_no_call() {
    built();
    tokio::time::timeout(Duration::from_secs(180), async {
        let mut server = Server::start("load", &["--drain-timeout", "10s"]).await;
        let nginx = server.behind_nginx().await;
        let proxy = format!("http://127.0.0.1:{}/mcp", nginx.port);
        let client = http();

        let mut clients = Vec::new();
        for modern in [false, true, false, true] {
            clients.push(connect(TestClient::full(), &proxy, modern).await);
        }
        let (go, waiting) = watch::channel(false);
        let asked = Arc::new(AtomicUsize::new(0));
        let quoting = WaitingClient {
            go: waiting,
            asked: Arc::clone(&asked),
        };
        let modern_asked = Arc::new(AtomicUsize::new(0));
        let modern_quoting = WaitingClient {
            go: quoting.go.clone(),
            asked: Arc::clone(&modern_asked),
        };
        // Served through the service (not its peer): its `call_tool` runs the 2026-07-28
        // rounds (`input_required`, the question, the retry with `requestState`).
        let legacy_quote = Arc::new(connect(quoting, &proxy, false).await);
        let modern_quote = Arc::new(connect(modern_quoting, &proxy, true).await);

        let mut calls = Vec::new();
        for (i, service) in clients.iter().enumerate() {
            for _ in 0..8 {
                let peer = service.peer().clone();
                calls.push(tokio::spawn(async move {
                    let result = call(peer, "work", json!({"ms": 1500, "tag": "load"})).await;
                    (i, result, Instant::now())
                }));
            }
        }
        let quotes = [&legacy_quote, &modern_quote].map(|service| {
            let service = Arc::clone(service);
            tokio::spawn(async move {
                let mut arguments = serde_json::Map::new();
                arguments.insert("item".into(), json!("kite"));
                let params = CallToolRequestParams::new("quote").with_arguments(arguments);
                match tokio::time::timeout(Duration::from_secs(40), service.call_tool(params)).await
                {
                    Ok(result) => result.map_err(|e| e.to_string()),
                    Err(_) => Err("tools/call quote timed out".to_string()),
                }
            })
        });
        until_started(&client, &server.url(), "load", 32, Duration::from_secs(20)).await;
        let both = || {
            (
                asked.load(Ordering::SeqCst),
                modern_asked.load(Ordering::SeqCst),
            )
        };
        for _ in 0..800 {
            if both() == (1, 1) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        if both() != (1, 1) {
            let [legacy, modern] = quotes;
            let early = |quote: tokio::task::JoinHandle<_>| async move {
                if quote.is_finished() {
                    format!("{:?}", quote.await)
                } else {
                    quote.abort();
                    "still running".to_string()
                }
            };
            panic!(
                "(legacy, 2026-07-28) questions asked: {:?}; the quotes: {} / {}",
                both(),
                early(legacy).await,
                early(modern).await
            );
        }

        server.terminate();
        tokio::time::sleep(Duration::from_millis(200)).await;
        // New work is refused: a call, a session.
        let refused = post_call(
            &client,
            &server.url(),
            "work",
            json!({"ms": 1, "tag": "late"}),
        )
        .await;
        assert_eq!(refused.status().as_u16(), 503);
        assert_eq!(refused.headers()["content-type"], "application/json");
        assert_eq!(refused.headers()["retry-after"], "5");
        assert_eq!(refused.headers()["connection"], "close");
        assert_eq!(refused.json::<Value>().await.unwrap(), draining_body());
        let initialize = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "late", "version": "1"}}});
        let refused = client
            .post(&proxy)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(initialize.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status().as_u16(), 503);
        assert_eq!(refused.json::<Value>().await.unwrap(), draining_body());
        // The questions are answered now: the legacy answer and the 2026-07-28 retry arrive
        // during the drain.
        go.send(true).unwrap();

        let mut last = Instant::now();
        let mut eras = [0; 4];
        for call in calls {
            let (i, result, at) = call.await.unwrap();
            let result = result.unwrap_or_else(|e| panic!("a call in flight failed: {e}"));
            assert_ne!(result.is_error, Some(true), "{result:?}");
            assert_eq!(only_text(&result), "Worked 1500 ms.");
            eras[i] += 1;
            last = last.max(at);
        }
        assert_eq!(eras, [8; 4]);
        for quote in quotes {
            let result = quote.await.unwrap().expect("the quote's result");
            assert_eq!(only_text(&result), "Bought kite for 480 cents.");
            last = last.max(Instant::now());
        }
        let status = server.exit(Duration::from_secs(8)).await;
        assert_eq!(status.code(), Some(0), "{}", server.log());
        assert!(
            last.elapsed() < Duration::from_secs(5),
            "exited {:?} after the last result",
            last.elapsed()
        );
        let log = server.log();
        assert!(log.contains("drained: shutting down"), "{log}");
        drop(nginx);
    })
    .await
    .expect("the test took too long");
}

/// `--drain-timeout 1s` with a call of 30 s in flight: at the timeout the call is answered with
/// an error result saying the server shut down (not a 500, not a reset), and the process exits
/// 0 about a second after the signal. On both eras.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drain_timeout_answers_the_calls_still_running() {
    built();
    tokio::time::timeout(Duration::from_secs(120), async {
        let mut server = Server::start("timeout", &["--drain-timeout", "1"]).await;
        let legacy = connect(TestClient::full(), &server.url(), false).await;
        let modern = connect(TestClient::full(), &server.url(), true).await;
        let calls = [&legacy, &modern].map(|service| {
            let peer = service.peer().clone();
            tokio::spawn(
                async move { call(peer, "work", json!({"ms": 30000, "tag": "long"})).await },
            )
        });
        let client = http();
        until_started(&client, &server.url(), "long", 2, Duration::from_secs(10)).await;
        let signalled = Instant::now();
        server.terminate();
        for call in calls {
            let result = call.await.unwrap().expect("an answer, not an error");
            assert_eq!(result.is_error, Some(true), "{result:?}");
            assert_eq!(only_text(&result), SHUT_DOWN);
            let at = signalled.elapsed();
            assert!(
                at >= Duration::from_millis(900) && at < Duration::from_secs(3),
                "answered {at:?} after the signal"
            );
        }
        let status = server.exit(Duration::from_secs(5)).await;
        assert_eq!(status.code(), Some(0), "{}", server.log());
        let took = signalled.elapsed();
        assert!(
            took < Duration::from_secs(4),
            "exited {took:?} after the signal"
        );
    })
    .await
    .expect("the test took too long");
}

/// A second signal exits 1 at once, whatever is still running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_exits_1_at_once() {
    built();
    tokio::time::timeout(Duration::from_secs(60), async {
        let mut server = Server::start("twice", &["--drain-timeout", "10s"]).await;
        let client = http();
        let url = server.url();
        let working = {
            let client = client.clone();
            let url = url.clone();
            tokio::spawn(async move {
                let _ = client
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .header("Accept", "application/json, text/event-stream")
                    .header("MCP-Protocol-Version", "2026-07-28")
                    .header("Mcp-Method", "tools/call")
                    .header("Mcp-Name", "work")
                    .body(
                        modern(
                            1,
                            "tools/call",
                            json!({"name": "work", "arguments": {"ms": 20000, "tag": "twice"}}),
                        )
                        .to_string(),
                    )
                    .send()
                    .await;
            })
        };
        until_started(&client, &url, "twice", 1, Duration::from_secs(10)).await;
        server.terminate();
        // The first signal is taken (the drain began) before the second is sent.
        for _ in 0..100 {
            if server.log().contains("SIGTERM: draining") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let second = Instant::now();
        server.terminate();
        let status = server.exit(Duration::from_secs(5)).await;
        let took = second.elapsed();
        assert_eq!(status.code(), Some(1), "{}", server.log());
        assert!(
            took < Duration::from_millis(300),
            "exited {took:?} after the second signal"
        );
        assert!(server.log().contains("SIGTERM again: exiting at once"));
        working.abort();
    })
    .await
    .expect("the test took too long");
}

/// The raw bytes of a 2026-07-28 `tools/call` of `work` for `ms` milliseconds tagged `tag`.
fn raw_work(port: u16, ms: u64, tag: &str) -> Vec<u8> {
    let body = modern(
        1,
        "tools/call",
        json!({"name": "work", "arguments": {"ms": ms, "tag": tag}}),
    )
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: work\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// On 2026-07-28 over HTTP, a client cancels a request by closing it: a raw TCP client that
/// closes its socket, or only shuts down its sending side (TCP cannot tell them apart), has its
/// call dropped within a second. A legacy request is not cancelled by a closed connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_2026_request_cancels_it() {
    built();
    tokio::time::timeout(Duration::from_secs(90), async {
        let server = Server::start("gone", &[]).await;
        let client = http();
        let url = server.url();
        for (tag, how) in [("closed", "close"), ("half", "shutdown(Write)")] {
            let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
            stream
                .write_all(&raw_work(server.port, 10_000, tag))
                .unwrap();
            until_started(&client, &url, tag, 1, Duration::from_secs(10)).await;
            let closed = Instant::now();
            let kept = if how == "close" {
                drop(stream);
                None
            } else {
                stream.shutdown(std::net::Shutdown::Write).unwrap();
                Some(stream)
            };
            loop {
                let counts = stats(&client, &url, tag).await;
                if counts["dropped"] == json!(1) {
                    assert_eq!(
                        counts,
                        json!({"started": 1, "finished": 0, "dropped": 1, "stopped_early": 0}),
                        "{how}"
                    );
                    break;
                }
                assert!(
                    closed.elapsed() < Duration::from_secs(1),
                    "{how}: not dropped within 1 s: {counts}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if let Some(mut stream) = kept {
                // Nothing useful is written to a client that closed its request.
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut reply = Vec::new();
                let _ = stream.read_to_end(&mut reply);
                let reply = String::from_utf8_lossy(&reply);
                assert!(!reply.contains("Worked"), "{reply}");
            }
        }
        // A quick 2026-07-28 call whose client shuts down its sending side right after the
        // request still gets its answer (the probe waits 50 ms before it looks).
        let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
        stream
            .write_all(&raw_work(server.port, 0, "quick"))
            .unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut reply = Vec::new();
        let _ = stream.read_to_end(&mut reply);
        let reply = String::from_utf8_lossy(&reply);
        assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
        assert!(reply.contains("Worked 0 ms."), "{reply}");
    })
    .await
    .expect("the test took too long");
}

/// `--max-request-body 2048`: a 4 KiB body gets 413, 1 KiB passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_body_limit_is_the_flags() {
    built();
    tokio::time::timeout(Duration::from_secs(60), async {
        let server = Server::start("body", &["--max-request-body", "2048"]).await;
        let client = http();
        let sized = |pad: usize| {
            let message = modern(
                9,
                "tools/call",
                json!({"name": "stats", "arguments": {"tag": "x".repeat(pad)}}),
            );
            serde_json::to_vec(&message).unwrap()
        };
        let send = |body: Vec<u8>| {
            client
                .post(server.url())
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28")
                .header("Mcp-Method", "tools/call")
                .header("Mcp-Name", "stats")
                .body(body)
                .send()
        };
        let large = sized(4096 - 300);
        assert!(
            large.len() >= 4000 && large.len() <= 4096,
            "{}",
            large.len()
        );
        let response = send(large).await.unwrap();
        assert_eq!(response.status().as_u16(), 413);
        assert_eq!(
            response.text().await.unwrap(),
            "Payload Too Large: request body exceeds 2048 bytes"
        );
        let small = sized(1024 - 300);
        assert!(small.len() <= 1024, "{}", small.len());
        let response = send(small).await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        let answer: Value = response.json().await.unwrap();
        assert_eq!(answer["result"]["structuredContent"]["started"], json!(0));
    })
    .await
    .expect("the test took too long");
}

/// Over stdio, the first SIGTERM drains too: a new request is answered `-32000`, a list is
/// still answered, the call in flight gets its result, and the process exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_drains_on_sigterm() {
    built();
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    tokio::time::timeout(Duration::from_secs(60), async {
        let dir = std::env::temp_dir().join(format!("mcpgen-ops-{}-stdio", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut child = tokio::process::Command::new(binary("operations"))
            .args(["--log-level", "info", "--drain-timeout", "10"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(dir.join("server.log")).expect("log file"))
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the stdio server");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut send = async |message: Value| {
            let mut line = message.to_string().into_bytes();
            line.push(b'\n');
            stdin.write_all(&line).await.expect("write a line");
        };
        send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "1"}}}))
        .await;
        let initialized = lines.next_line().await.unwrap().expect("the initialize answer");
        assert!(initialized.contains(r#""id":1"#), "{initialized}");
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "work", "arguments": {"ms": 1500, "tag": "stdio"}}}))
        .await;
        tokio::time::sleep(Duration::from_millis(400)).await;
        let pid = child.id().expect("the server runs");
        let killed = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(killed.success());
        tokio::time::sleep(Duration::from_millis(200)).await;
        send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "stats", "arguments": {"tag": "stdio"}}}))
        .await;
        send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})).await;
        let mut answers = std::collections::HashMap::new();
        while answers.len() < 3 {
            let line = lines.next_line().await.unwrap().expect("an answer");
            let message: Value = serde_json::from_str(&line).expect("JSON");
            if let Some(id) = message["id"].as_u64() {
                answers.insert(id, message);
            }
        }
        assert_eq!(
            answers[&3],
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "Server is shutting down; try again later"}})
        );
        assert_eq!(answers[&2]["result"]["content"][0]["text"], json!("Worked 1500 ms."));
        // The catalog's lists are still served.
        let names: Vec<&str> = answers[&4]["result"]["tools"]
            .as_array()
            .expect("the tools")
            .iter()
            .map(|tool| tool["name"].as_str().expect("a name"))
            .collect();
        assert_eq!(names, ["quote", "nap", "work", "grind", "fail", "stats"]);
        let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .expect("the server exits")
            .expect("its status");
        let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
        assert_eq!(status.code(), Some(0), "{log}");
        assert!(
            log.contains("SIGTERM: draining (1 call in flight, up to 10s); a second signal exits at once"),
            "{log}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await
    .expect("the test took too long");
}

// ----- a drain that finishes what it promised (issue 33, item 7) -----

/// `initialize` of a legacy (2025-11-25) session that answers form elicitations.
fn legacy_initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "e2e-drain", "version": "1"}}})
}

/// A POST of `message` to `url`, in legacy session `session` when given.
async fn legacy_post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    message: &Value,
) -> reqwest::Response {
    let mut request = client
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body(message.to_string());
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-11-25");
    }
    request.send().await.expect("POST answered")
}

/// An SSE answer, read event by event.
struct Events {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl Events {
    #[track_caller]
    fn of(response: reqwest::Response) -> Events {
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next event with data: its `id` (if any) and its JSON-RPC message; `None` when the
    /// stream ended (or failed).
    async fn next(&mut self) -> Option<(Option<String>, Value)> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let event = String::from_utf8(event).expect("UTF-8 events");
                let mut id = None;
                let mut data = String::new();
                for line in event.lines() {
                    if let Some(value) = line.strip_prefix("id:") {
                        id = Some(value.trim().to_string());
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some((id, serde_json::from_str(&data).expect("JSON data")));
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => self.buffer.extend_from_slice(&chunk),
                Ok(None) | Err(_) => return None,
            }
        }
    }
}

/// Opens a legacy session over raw HTTP (`initialize`, `notifications/initialized`): its id.
async fn raw_legacy_session(client: &reqwest::Client, url: &str) -> String {
    let response = legacy_post(client, url, None, &legacy_initialize(1)).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let (_, answer) = Events::of(response).next().await.expect("the answer");
    assert_eq!(answer["result"]["protocolVersion"], json!("2025-11-25"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = legacy_post(client, url, Some(&session), &initialized).await;
    assert_eq!(response.status().as_u16(), 202);
    session
}

/// A 503 refusal of the drain (`id` 9): status, headers and body exactly.
async fn assert_draining(response: reqwest::Response) {
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.headers()["retry-after"], "5");
    assert_eq!(response.headers()["connection"], "close");
    assert_eq!(response.json::<Value>().await.unwrap(), draining_body());
}

/// During the drain the listener still accepts connections (every answer says
/// `Connection: close`, so each request below comes on a new one), and for legacy sessions:
/// a new session, a new call in an existing session and a new GET stream get the 503; the
/// catalog's lists and `ping` are answered; what the calls in flight need is served: the answer to a call's elicitation (the call then completes
/// with its result), the resumption of a call's stream with `Last-Event-ID`, a
/// `notifications/cancelled` (the cancelled call gets no answer and holds the drain no longer),
/// and a `DELETE` of a session (`204`, as always; the session is gone after it). With nothing
/// left in flight the process exits 0 long before the drain's timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_serves_what_the_calls_in_flight_need() {
    built();
    tokio::time::timeout(Duration::from_secs(90), async {
        let mut server = Server::start("promised", &["--drain-timeout", "30s"]).await;
        let client = http();
        let url = server.url();
        let asking = raw_legacy_session(&client, &url).await;
        let resuming = raw_legacy_session(&client, &url).await;
        let working = raw_legacy_session(&client, &url).await;
        let idle = raw_legacy_session(&client, &url).await;

        // Two quotes waiting for their answers (one of them will resume its stream), and a
        // long call.
        let quote = |id: u64| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "quote", "arguments": {"item": "kite"}}})
        };
        let mut asked = Events::of(legacy_post(&client, &url, Some(&asking), &quote(2)).await);
        let (_, question) = asked.next().await.expect("the question");
        assert_eq!(question["method"], json!("elicitation/create"));
        assert_eq!(question["params"]["message"], json!("Buy kite for 480 cents?"));
        let mut broken = Events::of(legacy_post(&client, &url, Some(&resuming), &quote(3)).await);
        let (event_id, other_question) = broken.next().await.expect("the question");
        let event_id = event_id.expect("the question has an event id");
        assert_eq!(other_question["method"], json!("elicitation/create"));
        // The client loses this stream; it resumes it during the drain.
        drop(broken);
        let work = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "work", "arguments": {"ms": 19000, "tag": "promised"}}});
        let mut long = Events::of(legacy_post(&client, &url, Some(&working), &work).await);
        until_started(&client, &url, "promised", 1, Duration::from_secs(10)).await;

        server.terminate();
        for _ in 0..100 {
            let ready = client
                .get(format!("http://127.0.0.1:{}/readyz", server.port))
                .send()
                .await
                .unwrap();
            if ready.status().as_u16() == 503 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        // New work: a session, a call in an existing session, a GET stream.
        assert_draining(legacy_post(&client, &url, None, &legacy_initialize(9)).await).await;
        let new_call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "work", "arguments": {"ms": 1, "tag": "late"}}});
        assert_draining(legacy_post(&client, &url, Some(&idle), &new_call).await).await;
        let stream = client
            .get(&url)
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", &idle)
            .header("MCP-Protocol-Version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status().as_u16(), 503);
        assert_eq!(stream.headers()["retry-after"], "5");
        assert_eq!(
            stream.json::<Value>().await.unwrap(),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Server is shutting down; try again later"}})
        );

        // Served: the catalog's lists and `ping` (no work; the Python SDK client lists the
        // tools to check a call's result before it hands the result over).
        let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"});
        let listed = legacy_post(&client, &url, Some(&idle), &list).await;
        assert_eq!(listed.headers()["connection"], "close");
        let (_, tools) = Events::of(listed).next().await.expect("the list");
        assert_eq!(tools["id"], json!(5));
        let names: Vec<&str> = tools["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|tool| tool["name"].as_str().expect("a name"))
            .collect();
        assert_eq!(names, ["quote", "nap", "work", "grind", "fail", "stats"]);
        let ping = json!({"jsonrpc": "2.0", "id": 6, "method": "ping"});
        let (_, pong) = Events::of(legacy_post(&client, &url, Some(&idle), &ping).await)
            .next()
            .await
            .expect("the pong");
        assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 6, "result": {}}));

        // The DELETE of a session: served as always, and the session is gone.
        let deleted = client
            .delete(&url)
            .header("Mcp-Session-Id", &idle)
            .header("MCP-Protocol-Version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(deleted.status().as_u16(), 204);
        assert_eq!(deleted.headers()["connection"], "close");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let gone = legacy_post(&client, &url, Some(&idle), &initialized).await;
        assert_eq!(gone.status().as_u16(), 404);

        // The cancellation of the long call: accepted, and the call never answers.
        let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 4, "reason": "the user gave up"}});
        let response = legacy_post(&client, &url, Some(&working), &cancelled).await;
        assert_eq!(response.status().as_u16(), 202);
        assert_eq!(response.headers()["connection"], "close");
        let after = tokio::time::timeout(Duration::from_secs(10), long.next())
            .await
            .expect("the cancelled call's stream ends");
        assert_eq!(after, None, "a cancelled call is not answered");

        // The answers to the questions: accepted, and the calls complete with their results,
        // one on its own stream, one on the stream the client resumes first (a client resumes
        // a stream it lost at once: once a call ended, the drain waits for nobody).
        let answer = |id: &Value| {
            json!({"jsonrpc": "2.0", "id": id,
                "result": {"action": "accept", "content": {"ok": true}}})
        };
        let response = legacy_post(&client, &url, Some(&asking), &answer(&question["id"])).await;
        assert_eq!(response.status().as_u16(), 202);
        let (_, result) = asked.next().await.expect("the quote's result");
        assert_eq!(result["id"], json!(2));
        assert_eq!(
            result["result"]["content"],
            json!([{"type": "text", "text": "Bought kite for 480 cents."}]),
            "{result}"
        );
        let resumed = client
            .get(&url)
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", &resuming)
            .header("MCP-Protocol-Version", "2025-11-25")
            .header("Last-Event-ID", &event_id)
            .send()
            .await
            .unwrap();
        let mut resumed = Events::of(resumed);
        // rmcp 3.11 replays from the event `Last-Event-ID` names, that one included (the SSE
        // rule is: the events after it); the client sees the question again, same id.
        let (_, replayed) = resumed.next().await.expect("the replayed question");
        assert_eq!(replayed, other_question);
        let response = legacy_post(
            &client,
            &url,
            Some(&resuming),
            &answer(&other_question["id"]),
        )
        .await;
        assert_eq!(response.status().as_u16(), 202);
        let (_, result) = resumed.next().await.expect("the resumed quote's result");
        assert_eq!(result["id"], json!(3), "{result}");
        assert_eq!(
            result["result"]["content"],
            json!([{"type": "text", "text": "Bought kite for 480 cents."}]),
            "{result}"
        );
        let last = Instant::now();

        let status = server.exit(Duration::from_secs(15)).await;
        assert_eq!(status.code(), Some(0), "{}", server.log());
        assert!(
            last.elapsed() < Duration::from_secs(10),
            "exited {:?} after the last result (the drain's timeout is 30 s)",
            last.elapsed()
        );
        assert!(server.log().contains("drained: shutting down"));
    })
    .await
    .expect("the test took too long");
}
