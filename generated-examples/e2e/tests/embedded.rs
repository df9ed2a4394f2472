//! The embedded example (`generated-examples/embedded`): an axum application with routes of its
//! own that merges `generated::router(state)`. Started as its own binary (`--bind`), it must
//! answer its own routes, serve MCP at `/mcp` on both protocol eras (rmcp's client: tools,
//! a call, an elicitation round), and answer every MCP request exactly as the standalone
//! server of the same spec does (`conformance --transport http`): the same raw HTTP requests,
//! on both eras and with bad `Host`/`Origin` headers, get byte-identical answers from both.

mod common;

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::PathBuf,
    process::{Child, Command, Stdio},
    thread,
    time::Duration,
};

use common::{Question, Session, TestClient, only_text};
use rmcp::{
    ServiceExt,
    model::ProtocolVersion,
    service::{ClientLifecycleMode, ClientServiceExt},
    transport::StreamableHttpClientTransport,
};
use serde_json::{Value, json};

/// The embedded binary, built with the other examples ([`common::binary`]).
fn embedded_binary() -> PathBuf {
    common::binary("embedded")
}

/// A server process on a free port, killed when dropped.
struct Running {
    child: Child,
    port: u16,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `exe` with `args` plus `--bind 127.0.0.1:<port>` and waits until it accepts
/// connections.
fn start(exe: &PathBuf, args: &[&str]) -> Running {
    for _ in 0..5 {
        let port = common::free_port();
        let mut child = Command::new(exe)
            .args(args)
            .args([
                "--bind",
                &format!("127.0.0.1:{port}"),
                "--log-level",
                "error",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                thread::sleep(Duration::from_millis(50));
                if let Ok(None) = child.try_wait() {
                    return Running { child, port };
                }
                break;
            }
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("{} did not start", exe.display());
}

fn embedded() -> Running {
    start(&embedded_binary(), &[])
}

fn standalone() -> Running {
    start(&common::binary("conformance"), &["--transport", "http"])
}

/// One HTTP/1.1 answer: status line, headers (without `date`, and `mcp-session-id` replaced by
/// a placeholder, so that two servers' answers compare), body (de-chunked).
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    status: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// Sends `head` (request line and headers, CRLF-separated, no blank line; `Host` included when
/// it is to be sent) and `body`, and reads the whole answer (`Connection: close`).
fn exchange(port: u16, head: &str, body: &str) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let raw = String::from_utf8(raw).expect("UTF-8 answer");
    let (head, body) = raw.split_once("\r\n\r\n").expect("end of head");
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().to_string();
    let mut chunked = false;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .filter(|(n, v)| {
            chunked |= n == "transfer-encoding" && v == "chunked";
            n != "date"
        })
        .map(|(n, v)| {
            let v = if n == "mcp-session-id" {
                "<id>".into()
            } else {
                v
            };
            (n, v)
        })
        .collect();
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut raw: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = raw.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        raw = &rest[size + 2..];
    }
    out
}

/// A POST to `/mcp` with a JSON body and the headers a client sends (plus `extra`).
fn post(port: u16, host: &str, extra: &str, body: &str) -> Answer {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\n{host}Content-Type: application/json\r\nAccept: application/json, text/event-stream"
    );
    if !extra.is_empty() {
        head.push_str("\r\n");
        head.push_str(extra);
    }
    exchange(port, &head, body)
}

fn host(port: u16) -> String {
    format!("Host: 127.0.0.1:{port}\r\n")
}

/// The 2026-07-28 envelope of a request's params.
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

/// Raw requests whose answers must be the same from both servers: `(label, extra headers,
/// body)`; `{META}` is the 2026-07-28 envelope.
fn differential_cases() -> Vec<(&'static str, String, String)> {
    let with_meta = |body: &str| body.replace("{META}", META);
    let cases: Vec<(&'static str, &'static str, String)> = vec![
        (
            "server/discover",
            MODERN,
            with_meta(r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{META}}}"#),
        ),
        (
            "modern tools/list",
            MODERN,
            with_meta(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{META}}}"#),
        ),
        (
            "modern tools/call",
            MODERN,
            with_meta(
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{META},"name":"test_simple_text","arguments":{}}}"#,
            ),
        ),
        (
            "modern prompts/list",
            MODERN,
            with_meta(r#"{"jsonrpc":"2.0","id":4,"method":"prompts/list","params":{{META}}}"#),
        ),
        (
            "modern resources/list",
            MODERN,
            with_meta(r#"{"jsonrpc":"2.0","id":5,"method":"resources/list","params":{{META}}}"#),
        ),
        (
            "modern logging/setLevel is removed",
            MODERN,
            with_meta(
                r#"{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{{META},"level":"info"}}"#,
            ),
        ),
        (
            "modern unknown tool",
            MODERN,
            with_meta(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{META},"name":"nope","arguments":{}}}"#,
            ),
        ),
        (
            "modern forged requestState",
            MODERN,
            with_meta(
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{META},"name":"test_simple_text","arguments":{},"requestState":"v1.forged"}}"#,
            ),
        ),
        ("parse error", "", "{".to_string()),
        (
            "legacy request without a session",
            "",
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#.to_string(),
        ),
        (
            "legacy initialize",
            "",
            r#"{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#.to_string(),
        ),
        (
            "disallowed Origin",
            "Origin: https://evil.example",
            r#"{"jsonrpc":"2.0","id":11,"method":"ping"}"#.to_string(),
        ),
        (
            "loopback Origin",
            "Origin: http://localhost:3000\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list",
            with_meta(r#"{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{{META}}}"#),
        ),
        (
            "modern tools/call without Mcp-Name",
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call",
            with_meta(
                r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{{META},"name":"test_simple_text","arguments":{}}}"#,
            ),
        ),
    ];
    cases
        .into_iter()
        .map(|(label, extra, body)| {
            let extra = if extra == MODERN {
                modern_headers(&body)
            } else {
                extra.to_string()
            };
            (label, extra, body)
        })
        .collect()
}

/// Marks a case that gets the 2026-07-28 headers for its body ([`modern_headers`]).
const MODERN: &str = "<2026-07-28>";

/// The headers a 2026-07-28 client sends with `body`: the protocol version, `Mcp-Method` and,
/// for a request naming a tool, prompt or resource, `Mcp-Name`.
fn modern_headers(body: &str) -> String {
    let message: Value = serde_json::from_str(body).expect("a JSON body");
    let mut headers = format!(
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {}",
        message["method"].as_str().expect("a method")
    );
    let params = &message["params"];
    if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
        headers.push_str(&format!("\r\nMcp-Name: {name}"));
    }
    headers
}

#[test]
fn the_application_answers_its_own_routes() {
    let app = embedded();
    let health = exchange(
        app.port,
        &format!("GET /healthz HTTP/1.1\r\n{}", host(app.port).trim_end()),
        "",
    );
    assert_eq!(health.status, "HTTP/1.1 200 OK");
    assert_eq!(health.body, "ok\n");
    let index = exchange(
        app.port,
        &format!("GET / HTTP/1.1\r\n{}", host(app.port).trim_end()),
        "",
    );
    assert_eq!(index.status, "HTTP/1.1 200 OK");
    assert_eq!(index.body, "An axum application; MCP is served at /mcp.\n");
    // Neither the application nor the router serves other paths.
    let other = exchange(
        app.port,
        &format!("GET /mcp/x HTTP/1.1\r\n{}", host(app.port).trim_end()),
        "",
    );
    assert_eq!(other.status, "HTTP/1.1 404 Not Found");
}

#[test]
fn mcp_requests_get_the_answers_of_the_standalone_server() {
    let (app, cli) = (embedded(), standalone());
    for (label, extra, body) in differential_cases() {
        let from_app = post(app.port, &host(app.port), &extra, &body);
        let from_cli = post(cli.port, &host(cli.port), &extra, &body);
        assert_eq!(from_app, from_cli, "{label}: {body}");
    }
    // Two of them exactly, so that the comparison is not between two wrong answers.
    let (_, extra, body) = &differential_cases()[2];
    let call = post(app.port, &host(app.port), extra, body);
    assert_eq!(call.status, "HTTP/1.1 200 OK");
    let message: Value = serde_json::from_str(&call.body).expect("JSON");
    assert_eq!(
        message["result"]["content"],
        json!([{"type": "text", "text": "This is a simple text response for testing."}])
    );
    assert_eq!(
        message["result"]["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "Conformance", "title": "MCP conformance fixture server", "version": "1.0.0"})
    );
    let (_, extra, body) = &differential_cases()[5];
    let removed = post(app.port, &host(app.port), extra, body);
    assert_eq!(removed.status, "HTTP/1.1 404 Not Found");
    assert_eq!(
        serde_json::from_str::<Value>(&removed.body).expect("JSON"),
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32601, "message": "Method not found", "data": "logging/setLevel"}})
    );
}

#[test]
fn host_checks_hold_on_the_router_as_on_the_standalone_server() {
    let (app, cli) = (embedded(), standalone());
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let hosts = [
        ("disallowed Host", "Host: evil.example\r\n".to_string()),
        (
            "disallowed Host with the right port",
            format!("Host: evil.example:{}\r\n", app.port),
        ),
        (
            "two Host headers",
            "Host: localhost\r\nHost: evil.example\r\n".to_string(),
        ),
        ("no Host header", String::new()),
    ];
    for (label, header) in &hosts {
        let header_cli = header.replace(&app.port.to_string(), &cli.port.to_string());
        let from_app = post(app.port, header, "", ping);
        let from_cli = post(cli.port, &header_cli, "", ping);
        assert_eq!(from_app, from_cli, "{label}");
    }
    let forbidden = post(app.port, &hosts[0].1, "", ping);
    assert_eq!(forbidden.status, "HTTP/1.1 403 Forbidden");
    assert_eq!(forbidden.body, "Forbidden: Host header is not allowed");
    let twice = post(app.port, &hosts[2].1, "", ping);
    assert_eq!(twice.status, "HTTP/1.1 400 Bad Request");
    assert_eq!(twice.body, "Bad Request: more than one Host header");
    let origin = post(
        app.port,
        &host(app.port),
        "Origin: https://evil.example",
        ping,
    );
    assert_eq!(origin.status, "HTTP/1.1 403 Forbidden");
    assert_eq!(origin.body, "Forbidden: Origin header is not allowed");
}

/// rmcp's client on one era: the tools are the standalone server's, a tool answers, and an
/// elicitation round completes.
async fn client_session(lifecycle: Option<ClientLifecycleMode>, protocol: ProtocolVersion) {
    let app = embedded();
    let cli = standalone();
    let connect = |port: u16, client: TestClient| {
        let lifecycle = lifecycle.clone();
        async move {
            common::tls_provider();
            let transport =
                StreamableHttpClientTransport::from_uri(format!("http://127.0.0.1:{port}/mcp"));
            let service = match lifecycle {
                None => client.clone().serve(transport).await,
                Some(l) => client.clone().serve_with_lifecycle(transport, l).await,
            }
            .expect("connect over HTTP");
            Session {
                client,
                service,
                child: None,
                output_schemas: None,
            }
        }
    };
    let client = TestClient::full().accept(json!({"username": "ada", "email": "ada@example.com"}));
    let session = connect(app.port, client).await;
    let reference = connect(cli.port, TestClient::full()).await;
    let info = session.service.peer_info().expect("server info");
    assert_eq!(info.protocol_version, protocol);
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("Conformance")
    );
    let tools = session.service.list_all_tools().await.expect("tools/list");
    let expected = reference
        .service
        .list_all_tools()
        .await
        .expect("tools/list");
    assert_eq!(
        serde_json::to_value(&tools).unwrap(),
        serde_json::to_value(&expected).unwrap()
    );
    assert!(tools.len() > 10, "the conformance tools: {}", tools.len());
    let result = session
        .call("test_simple_text", json!({}))
        .await
        .expect("call");
    assert_eq!(
        only_text(&result),
        "This is a simple text response for testing."
    );
    let result = session
        .call("test_elicitation", json!({"message": "Who are you?"}))
        .await
        .expect("call");
    assert_eq!(
        only_text(&result),
        "User response: action=accept, username=ada, email=ada@example.com"
    );
    let asked = session.client.asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let Question::Form { message, .. } = &asked[0] else {
        panic!("a form question: {asked:?}");
    };
    assert_eq!(message, "Who are you?");
    session.close().await;
    reference.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_client_is_served_at_mcp() {
    client_session(None, ProtocolVersion::V_2025_11_25).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_client_is_served_at_mcp() {
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    client_session(Some(lifecycle), ProtocolVersion::V_2026_07_28).await;
}

/// Fail closed: a malformed `MCP_REQUEST_STATE_KEYS` stops the application before it serves
/// (building the router panics with the reason), as it stops `serve` (exit 1).
#[test]
fn a_malformed_request_state_key_stops_the_application() {
    let output = Command::new(embedded_binary())
        .args(["--bind", &format!("127.0.0.1:{}", common::free_port())])
        .env("MCP_REQUEST_STATE_KEYS", "not base64!")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert!(!output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the MCP server cannot start: MCP_REQUEST_STATE_KEYS: key 1 is not base64"),
        "{stderr}"
    );
    let cli = Command::new(common::binary("conformance"))
        .args([
            "--transport",
            "http",
            "--bind",
            &format!("127.0.0.1:{}", common::free_port()),
        ])
        .env("MCP_REQUEST_STATE_KEYS", "not base64!")
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(cli.status.code(), Some(1), "{cli:?}");
    assert!(
        String::from_utf8_lossy(&cli.stderr)
            .contains("MCP_REQUEST_STATE_KEYS: key 1 is not base64"),
        "{cli:?}"
    );
}

/// SIGTERM with a legacy session's GET stream open: the application's `Shutdown` ends the
/// stream, so axum's graceful shutdown completes and the process exits 0 at once.
#[test]
fn the_application_stops_on_sigterm_with_a_stream_open() {
    let mut app = embedded();
    // Initialize raw (`exchange` masks the session id).
    let mut stream = TcpStream::connect(("127.0.0.1", app.port)).expect("connect");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    let session = raw
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_string();
    let mut initialized = TcpStream::connect(("127.0.0.1", app.port)).expect("connect");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    write!(
        initialized,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{note}",
        note.len()
    )
    .unwrap();
    let mut answer = String::new();
    initialized.read_to_string(&mut answer).expect("read");
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    // The session's GET stream, held open.
    let mut get = TcpStream::connect(("127.0.0.1", app.port)).expect("connect");
    write!(
        get,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    )
    .unwrap();
    get.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = [0u8; 15];
    get.read_exact(&mut head).expect("the stream's head");
    assert_eq!(&head, b"HTTP/1.1 200 OK");
    let term = Command::new("kill")
        .args(["-TERM", &app.child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(term.success());
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = app.child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "still running 5 s after SIGTERM with a GET stream open"
        );
        thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
}
