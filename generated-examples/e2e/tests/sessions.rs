//! Bounded sessions: legacy Streamable HTTP sessions expire after `--session-idle-timeout`
//! (404 afterwards, an open GET stream keeps a session alive) and are capped by
//! `--max-sessions` (503 with a JSON-RPC error beyond it); closing stdin while an elicitation
//! is pending ends a stdio server within a second.

mod common;

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST_TOOLS: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

/// A running `bookshop --transport http` with `extra` arguments; killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_http(extra: &[&str]) -> Server {
    for _ in 0..5 {
        let port = common::free_port();
        let mut child = Command::new(common::binary("bookshop"))
            .args([
                "--transport",
                "http",
                "--bind",
                &format!("127.0.0.1:{port}"),
                "--log-level",
                "error",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Server { child, port };
            }
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
    }
    panic!("HTTP server did not start");
}

/// One HTTP response: status, headers (names lower-case) and body (de-chunked).
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of an SSE body (its `data:` line) or of a JSON body.
    fn message(&self) -> Value {
        let text = self
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .find(|d| !d.is_empty())
            .unwrap_or(&self.body);
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {self:?}"))
    }
}

/// Reads the status line and headers of a response.
fn read_head(reader: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("header line");
        headers.push((name.to_ascii_lowercase(), value.trim().to_string()));
    }
    (status, headers)
}

/// Sends one request (`Connection: close`) to `/mcp` and reads the whole response.
fn request(port: u16, method: &str, session: Option<&str>, body: &str) -> Reply {
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
        .unwrap_or_default();
    request_with(port, method, &session, body)
}

/// [`request`] with `headers` (each line ending in CRLF) instead of the session headers.
fn request_with(port: u16, method: &str, headers: &str, body: &str) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let (status, headers) = read_head(&mut reader);
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).expect("chunk size");
            let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).expect("chunk");
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        reader.read_to_end(&mut body).expect("body");
    }
    Reply {
        status,
        headers,
        body: String::from_utf8(body).expect("UTF-8 body"),
    }
}

/// `initialize` + `notifications/initialized`; returns the session id.
fn open_session(port: u16) -> String {
    let reply = request(port, "POST", None, INITIALIZE);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.message()["result"]["serverInfo"]["name"], "Bookshop");
    let id = reply
        .header("mcp-session-id")
        .expect("Mcp-Session-Id")
        .to_string();
    let reply = request(port, "POST", Some(&id), INITIALIZED);
    assert_eq!(reply.status, 202, "{reply:?}");
    id
}

/// `tools/list` in session `id`: the status, and the number of tools when 200.
fn list_tools(port: u16, id: &str) -> (u16, Option<usize>) {
    let reply = request(port, "POST", Some(id), LIST_TOOLS);
    let tools = (reply.status == 200).then(|| {
        let message = reply.message();
        assert_eq!(message["id"], 2, "{reply:?}");
        message["result"]["tools"].as_array().expect("tools").len()
    });
    (reply.status, tools)
}

/// The exact answer to a request naming a session the server no longer knows.
fn assert_unknown_session(port: u16, id: &str) {
    let reply = request(port, "POST", Some(id), LIST_TOOLS);
    assert_eq!(reply.status, 404, "{reply:?}");
    assert_eq!(reply.body, "Not Found: Session not found");
}

#[test]
fn an_idle_session_expires_with_404_and_the_client_can_initialize_again() {
    let server = spawn_http(&["--session-idle-timeout", "1s"]);
    let port = server.port;
    let id = open_session(port);
    // Used every 400 ms for 2 s: each request restarts the timeout.
    for _ in 0..5 {
        assert_eq!(list_tools(port, &id), (200, Some(5)));
        thread::sleep(Duration::from_millis(400));
    }
    thread::sleep(Duration::from_millis(1300));
    assert_unknown_session(port, &id);
    // Also with GET and after the expiry was noticed.
    let mut get = open_get_stream(port, &id);
    let (status, _) = read_head(&mut get);
    assert_eq!(status, 404);
    assert_unknown_session(port, &id);
    // The client re-initializes: a new session that works.
    let fresh = open_session(port);
    assert_ne!(fresh, id);
    assert_eq!(list_tools(port, &fresh), (200, Some(5)));
}

/// Opens `GET /mcp` (the session's standalone SSE stream) and leaves it open.
fn open_get_stream(port: u16, id: &str) -> BufReader<TcpStream> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\nAccept: text/event-stream\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    BufReader::new(stream)
}

#[test]
fn an_open_get_stream_keeps_its_session_alive_and_closing_it_starts_the_timeout() {
    let server = spawn_http(&["--session-idle-timeout", "1s"]);
    let port = server.port;
    let listening = open_session(port);
    let quiet = open_session(port);
    let mut get = open_get_stream(port, &listening);
    let (status, headers) = read_head(&mut get);
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(n, v)| n == "content-type" && v == "text/event-stream"),
        "{headers:?}"
    );
    // Twice the timeout with no request: the session with the open stream stays, the other
    // one expires.
    thread::sleep(Duration::from_millis(2000));
    assert_unknown_session(port, &quiet);
    assert_eq!(list_tools(port, &listening), (200, Some(5)));
    // Once the client hangs up, the session is idle from the moment the server notices. The
    // server keeps half-closed connections open (a client may shut down its sending side and
    // still read its answer), so it notices when a write to the stream fails: at the latest at
    // the SSE keep-alive pings (every 15 s; the second write after a reset fails). Each probe
    // below names the session, which counts as activity, so they come 1.5 s apart, longer than
    // the idle timeout: the first probe after the hang-up is noticed finds the session gone.
    drop(get);
    let deadline = std::time::Instant::now() + Duration::from_secs(45);
    loop {
        thread::sleep(Duration::from_millis(1500));
        let (status, _) = list_tools(port, &listening);
        if status == 404 {
            break;
        }
        assert_eq!(status, 200);
        assert!(
            std::time::Instant::now() < deadline,
            "the session outlived its closed stream by 45 s"
        );
    }
    assert_unknown_session(port, &listening);
}

/// The exact refusal of a session beyond `--max-sessions`.
fn assert_refused(port: u16) {
    let reply = request(port, "POST", None, INITIALIZE);
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(reply.header("retry-after"), Some("5"));
    assert_eq!(reply.header("content-type"), Some("application/json"));
    assert_eq!(reply.header("mcp-session-id"), None);
    assert_eq!(
        serde_json::from_str::<Value>(&reply.body).expect("JSON body"),
        json!({
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32000, "message": "Too many sessions; try again later"}
        })
    );
}

#[test]
fn sessions_beyond_the_cap_get_503_and_a_closed_one_makes_room() {
    let server = spawn_http(&["--max-sessions", "2"]);
    let port = server.port;
    let first = open_session(port);
    let second = open_session(port);
    assert_refused(port);
    assert_refused(port);
    // The admitted sessions keep working.
    assert_eq!(list_tools(port, &first), (200, Some(5)));
    assert_eq!(list_tools(port, &second), (200, Some(5)));
    // DELETE frees a place.
    let reply = request(port, "DELETE", Some(&first), "");
    assert_eq!(reply.status, 204, "{reply:?}");
    assert_unknown_session(port, &first);
    let third = open_session(port);
    assert_eq!(list_tools(port, &third), (200, Some(5)));
    assert_refused(port);
    assert_eq!(list_tools(port, &second), (200, Some(5)));
}

#[test]
fn the_cap_leaves_2026_07_28_requests_alone() {
    // They have no sessions: with the one session the cap allows open, they are served.
    let server = spawn_http(&["--max-sessions", "1"]);
    let port = server.port;
    let id = open_session(port);
    assert_refused(port);
    let body = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}}}"#;
    for _ in 0..3 {
        let reply = request_with(
            port,
            "POST",
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n",
            body,
        );
        assert_eq!(reply.status, 200, "{reply:?}");
        let message = reply.message();
        assert_eq!(message["id"], 3);
        assert_eq!(message["result"]["tools"].as_array().map(Vec::len), Some(5));
    }
    assert_eq!(list_tools(port, &id), (200, Some(5)));
}

#[test]
fn an_expired_session_makes_room_under_the_cap() {
    let server = spawn_http(&["--max-sessions", "1", "--session-idle-timeout", "1s"]);
    let port = server.port;
    let first = open_session(port);
    assert_refused(port);
    thread::sleep(Duration::from_millis(1200));
    let second = open_session(port);
    assert_eq!(list_tools(port, &second), (200, Some(5)));
    assert_unknown_session(port, &first);
    assert_refused(port);
}

#[test]
fn a_stdio_server_exits_within_a_second_when_stdin_closes_during_an_elicitation() {
    let mut child = Command::new(common::binary("bookshop"))
        .args(["--log-level", "error"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut read = || {
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read");
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{"elicitation":{{"form":{{}}}}}},"clientInfo":{{"name":"raw","version":"0"}}}}}}"#
    )
    .unwrap();
    assert_eq!(read()["id"], 1);
    writeln!(stdin, "{INITIALIZED}").unwrap();
    // Neuromancer is out of stock: ordering it asks the client to confirm a backorder.
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"order_book","arguments":{{"title":"Neuromancer"}}}}}}"#
    )
    .unwrap();
    let asked = read();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(
        asked["params"]["message"],
        "'Neuromancer' is out of stock (2-3 weeks). Order anyway?"
    );
    let closed = Instant::now();
    drop(stdin);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if closed.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("still running 5 s after stdin closed");
        }
        thread::sleep(Duration::from_millis(10));
    };
    let elapsed = closed.elapsed();
    assert_eq!(status.code(), Some(0));
    assert!(
        elapsed < Duration::from_secs(1),
        "exited {elapsed:?} after stdin closed"
    );
}
