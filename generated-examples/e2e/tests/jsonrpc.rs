//! JSON-RPC 2.0 and HTTP to the letter, from raw bytes: what a line (stdio) or a body (HTTP)
//! that is not a valid request gets, on both transports and both protocol eras, and that the
//! server keeps serving after each (a valid request follows every bad input). Also the HTTP
//! rules of RFC 9110/9112 and the Streamable HTTP transport (`Host`, `DELETE`, `Accept`).

mod common;

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc,
    thread,
    time::Duration,
};

use serde_json::{Value, json};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// The 2026-07-28 envelope, as the first member of `params`.
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    Legacy,
    Modern,
}

/// `template` with `{META}` replaced by the envelope (and a comma when more members follow) at
/// 2026-07-28, or by nothing.
fn enveloped(template: &str, era: Era) -> String {
    match era {
        Era::Legacy => template.replace("{META}", ""),
        Era::Modern => template
            .replace("{META}}", &format!("{META}}}"))
            .replace("{META}", &format!("{META},")),
    }
}

/// A valid `tools/list` with `id`.
fn tools_list(id: u32, era: Era) -> String {
    match era {
        Era::Legacy => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
        Era::Modern => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{META}}}}}"#)
        }
    }
}

fn invalid_request(id: Value, data: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": "Invalid Request", "data": data}})
}

fn invalid_params(id: u32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": message}})
}

fn method_not_found(id: u32, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found", "data": method}})
}

fn parse_error() -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
}

/// Bad inputs to `bookshop` and their exact answers (`None`: no answer, a notification).
/// `{META}` marks where the 2026-07-28 envelope goes.
fn bookshop_cases() -> Vec<(&'static str, Vec<u8>, Option<Value>)> {
    let s = |t: &str| t.as_bytes().to_vec();
    vec![
        ("not JSON", s("{not json"), Some(parse_error())),
        (
            "truncated",
            s(r#"{"jsonrpc":"2.0","id":7,"#),
            Some(parse_error()),
        ),
        (
            "a number",
            s("42"),
            Some(invalid_request(
                Value::Null,
                "a JSON-RPC message must be a JSON object",
            )),
        ),
        (
            "a string",
            s(r#""x""#),
            Some(invalid_request(
                Value::Null,
                "a JSON-RPC message must be a JSON object",
            )),
        ),
        (
            "an empty array",
            s("[]"),
            Some(invalid_request(
                Value::Null,
                "a JSON-RPC message must be a JSON object",
            )),
        ),
        (
            "a batch",
            s(r#"[{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{META}"cursor":null}}]"#),
            Some(invalid_request(
                Value::Null,
                "batches are not supported (MCP 2025-06-18 removed JSON-RPC batching): send one message at a time",
            )),
        ),
        (
            "no jsonrpc",
            s(r#"{"id":7,"method":"tools/list","params":{{META}"cursor":null}}"#),
            Some(invalid_request(json!(7), "'jsonrpc' must be \"2.0\"")),
        ),
        (
            "jsonrpc 1.0",
            s(r#"{"jsonrpc":"1.0","id":"a","method":"tools/list","params":{{META}"cursor":null}}"#),
            Some(invalid_request(json!("a"), "'jsonrpc' must be \"2.0\"")),
        ),
        (
            "method not a string",
            s(r#"{"jsonrpc":"2.0","id":7,"method":5}"#),
            Some(invalid_request(json!(7), "'method' must be a string")),
        ),
        (
            "no method",
            s(r#"{"jsonrpc":"2.0","id":7}"#),
            Some(invalid_request(json!(7), "'method' is required")),
        ),
        (
            "id true",
            s(r#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#),
            Some(invalid_request(
                Value::Null,
                "'id' must be a string or an integer",
            )),
        ),
        (
            "id null",
            s(r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#),
            Some(invalid_request(
                Value::Null,
                "'id' must be a string or an integer",
            )),
        ),
        (
            "id 1.5",
            s(r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#),
            Some(invalid_request(
                Value::Null,
                "'id' must be a string or an integer",
            )),
        ),
        (
            "unknown method",
            s(r#"{"jsonrpc":"2.0","id":7,"method":"nope/nope","params":{{META}"x":1}}"#),
            Some(method_not_found(7, "nope/nope")),
        ),
        (
            "undeclared capability",
            s(r#"{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{{META}"name":"x"}}"#),
            Some(method_not_found(7, "prompts/get")),
        ),
        (
            "tools/call without name",
            s(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{META}"arguments":{}}}"#),
            Some(invalid_params(7, "Invalid params: 'name' is required")),
        ),
        (
            "tools/call with no other params",
            s(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{META}}}"#),
            Some(invalid_params(7, "Invalid params: 'name' is required")),
        ),
        (
            "tools/call name a number",
            s(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{META}"name":5}}"#),
            Some(invalid_params(7, "Invalid params: 'name' must be a string")),
        ),
        (
            "tools/call arguments an array",
            s(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{META}"name":"search_books","arguments":[1]}}"#,
            ),
            Some(invalid_params(
                7,
                "Invalid params: 'arguments' must be an object",
            )),
        ),
        (
            "tools/call requestState a number",
            s(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{META}"name":"search_books","arguments":{"query":"x"},"requestState":5}}"#,
            ),
            // The requestState boundary runs before the params are checked (issue 17 item 2,
            // as the Python SDK): a non-string state is the frozen error.
            Some(
                json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "Invalid or expired requestState", "data": {"reason": "invalid_request_state"}}}),
            ),
        ),
        (
            "tools/call _meta a string",
            s(
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_books","_meta":"x"}}"#,
            ),
            Some(invalid_params(
                7,
                "Invalid params: '_meta' must be an object",
            )),
        ),
        (
            "params an array",
            s(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[]}"#),
            Some(invalid_params(
                7,
                "Invalid params: 'params' must be an object",
            )),
        ),
        (
            "a notification with jsonrpc 1.0",
            s(r#"{"jsonrpc":"1.0","method":"notifications/cancelled"}"#),
            None,
        ),
        (
            "a notification with params 5",
            s(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#),
            None,
        ),
        (
            // Neither a request, a notification nor a response: Invalid Request (JSON-RPC 2.0
            // section 5: the id is null when it cannot be read).
            "an object without id or method",
            s(r#"{"x":1}"#),
            Some(invalid_request(
                Value::Null,
                "a JSON-RPC message needs a string 'method' (or, for a response, an 'id')",
            )),
        ),
        (
            "a response to nothing",
            s(r#"{"jsonrpc":"2.0","id":99,"result":{}}"#),
            None,
        ),
    ]
}

// ---------------------------------------------------------------------------------------------
// stdio

/// A server over stdio, read line by line on a thread of its own.
struct StdioPeer {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl StdioPeer {
    fn start(server: &str) -> Self {
        let mut child = Command::new(common::binary(server))
            .args(["--log-level", "error"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StdioPeer {
            child,
            stdin,
            lines,
        }
    }

    /// Starts `server` and opens `era`: the legacy handshake, or nothing (2026-07-28).
    fn open(server: &str, era: Era) -> Self {
        let mut peer = Self::start(server);
        if era == Era::Legacy {
            peer.send(INITIALIZE.as_bytes());
            assert_eq!(peer.recv()["id"], json!(1));
            peer.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        }
        peer
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).expect("write");
        self.stdin.write_all(b"\n").expect("write");
        self.stdin.flush().expect("flush");
    }

    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("an answer within 10 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// A valid request is answered: the server still serves.
    fn still_serves(&mut self, era: Era, id: u32, after: &str) {
        self.send(tools_list(id, era).as_bytes());
        let answer = self.recv();
        assert_eq!(answer["id"], json!(id), "after {after}: {answer}");
        assert!(
            answer["result"]["tools"].is_array(),
            "after {after}: {answer}"
        );
    }
}

impl Drop for StdioPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stdio_cases(era: Era) {
    let mut peer = StdioPeer::open("bookshop", era);
    for (i, (label, bytes, expected)) in bookshop_cases().into_iter().enumerate() {
        let line = enveloped(&String::from_utf8(bytes).unwrap(), era);
        peer.send(line.as_bytes());
        if let Some(expected) = expected {
            assert_eq!(peer.recv(), expected, "{label} ({era:?})");
        }
        // A notification has no answer: the next line is the valid request's.
        peer.still_serves(era, 100 + i as u32, label);
    }
}

#[test]
fn stdio_legacy_answers_every_bad_line_and_keeps_serving() {
    stdio_cases(Era::Legacy);
}

#[test]
fn stdio_modern_answers_every_bad_line_and_keeps_serving() {
    stdio_cases(Era::Modern);
}

/// A line with invalid UTF-8 is decoded with replacement characters (as the Python SDK's
/// stdin) and answered.
#[test]
fn stdio_invalid_utf8_is_answered_with_replacement_characters() {
    for era in [Era::Legacy, Era::Modern] {
        let mut peer = StdioPeer::open("bookshop", era);
        let mut line = enveloped(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{META}"name":"search_books","arguments":{"query":"a?b"}}}"#,
            era,
        )
        .into_bytes();
        let at = line.iter().position(|b| *b == b'?').unwrap();
        line[at] = 0xff;
        peer.send(&line);
        let answer = peer.recv();
        assert_eq!(answer["id"], json!(7), "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"],
            json!("Found 3 books matching 'a\u{FFFD}b' (showing up to 10)."),
            "{era:?}"
        );
        // Invalid UTF-8 that is not JSON either: a parse error.
        peer.send(b"\xff\xfe");
        assert_eq!(peer.recv(), parse_error());
        peer.still_serves(era, 8, "invalid UTF-8");
    }
}

/// rmcp ends a session when anything but a request arrives before its handshake; those are
/// dropped instead, and the handshake still happens.
#[test]
fn stdio_notifications_and_responses_before_the_handshake_are_dropped() {
    for era in [Era::Legacy, Era::Modern] {
        let mut peer = StdioPeer::start("bookshop");
        peer.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        peer.send(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
        );
        peer.send(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#);
        peer.send(b"{garbage");
        assert_eq!(peer.recv(), parse_error());
        if era == Era::Legacy {
            peer.send(INITIALIZE.as_bytes());
            assert_eq!(
                peer.recv()["result"]["protocolVersion"],
                json!("2025-11-25")
            );
        }
        peer.still_serves(era, 5, "notifications before the handshake");
    }
}

/// A line longer than 16 MiB is skipped without being buffered and answered with -32600.
#[test]
fn stdio_an_oversized_line_is_invalid_request() {
    let mut peer = StdioPeer::open("bookshop", Era::Legacy);
    let mut line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_books","arguments":{"query":""#.to_vec();
    line.resize(line.len() + 16 * 1024 * 1024, b'a');
    line.extend_from_slice(br#""}}}"#);
    peer.send(&line);
    assert_eq!(
        peer.recv(),
        invalid_request(Value::Null, "the message is longer than 16 MiB")
    );
    peer.still_serves(Era::Legacy, 8, "an oversized line");
}

/// `initialize` with missing fields: -32602 naming the field, and the handshake can follow.
#[test]
fn stdio_initialize_with_bad_params_is_invalid_params() {
    let mut peer = StdioPeer::start("bookshop");
    peer.send(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#);
    assert_eq!(
        peer.recv(),
        invalid_params(1, "Invalid params: 'clientInfo' is required")
    );
    peer.send(br#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x"}}}"#);
    assert_eq!(
        peer.recv(),
        invalid_params(2, "Invalid params: 'clientInfo.version' is required")
    );
    peer.send(INITIALIZE.as_bytes());
    assert_eq!(peer.recv()["id"], json!(1));
    peer.still_serves(Era::Legacy, 3, "a bad initialize");
}

/// Params of the other methods, on a server that declares prompts, resources, subscriptions,
/// completions and logging. `{META}` marks the envelope; `legacy_only` methods do not exist at
/// 2026-07-28 (-32601 there).
fn conformance_cases(era: Era) -> Vec<(&'static str, String, Value)> {
    let p = |t: &str| enveloped(t, era);
    let legacy_only = |id: u32, method: &str, message: &str| match era {
        Era::Legacy => invalid_params(id, message),
        Era::Modern => method_not_found(id, method),
    };
    vec![
        (
            // At 2026-07-28 `initialize` is removed (-32601, conformance's
            // sep-2575-http-server-method-not-found-404-initialize); legacy: its fields.
            "initialize without clientInfo",
            p(
                r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{{META}"protocolVersion":"2025-11-25","capabilities":{}}}"#,
            ),
            legacy_only(7, "initialize", "Invalid params: 'clientInfo' is required"),
        ),
        (
            "prompts/get without name",
            p(r#"{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{{META}"arguments":{}}}"#),
            invalid_params(7, "Invalid params: 'name' is required"),
        ),
        (
            "prompts/get arguments a string",
            p(
                r#"{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{{META}"name":"test_simple_prompt","arguments":"x"}}"#,
            ),
            invalid_params(7, "Invalid params: 'arguments' must be an object"),
        ),
        (
            "tools/list cursor a number",
            p(r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{META}"cursor":5}}"#),
            invalid_params(7, "Invalid params: 'cursor' must be a string"),
        ),
        (
            "prompts/list cursor an object",
            p(r#"{"jsonrpc":"2.0","id":7,"method":"prompts/list","params":{{META}"cursor":{}}}"#),
            invalid_params(7, "Invalid params: 'cursor' must be a string"),
        ),
        (
            "resources/templates/list cursor true",
            p(
                r#"{"jsonrpc":"2.0","id":7,"method":"resources/templates/list","params":{{META}"cursor":true}}"#,
            ),
            invalid_params(7, "Invalid params: 'cursor' must be a string"),
        ),
        (
            "resources/read without uri",
            p(r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{{META}"x":1}}"#),
            invalid_params(7, "Invalid params: 'uri' is required"),
        ),
        (
            "resources/read uri a number",
            p(r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{{META}"uri":5}}"#),
            invalid_params(7, "Invalid params: 'uri' must be a string"),
        ),
        (
            "completion/complete without ref",
            p(
                r#"{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{{META}"argument":{"name":"a","value":"b"}}}"#,
            ),
            invalid_params(7, "Invalid params: 'ref' is required"),
        ),
        (
            "completion/complete ref of an unknown type",
            p(
                r#"{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{{META}"ref":{"type":"ref/x"},"argument":{"name":"a","value":"b"}}}"#,
            ),
            invalid_params(
                7,
                "Invalid params: 'ref.type' must be \"ref/prompt\" or \"ref/resource\"",
            ),
        ),
        (
            "completion/complete without argument.value",
            p(
                r#"{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{{META}"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"a"}}}"#,
            ),
            invalid_params(7, "Invalid params: 'argument.value' is required"),
        ),
        (
            "logging/setLevel with an unknown level",
            p(
                r#"{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{{META}"level":"loud"}}"#,
            ),
            legacy_only(
                7,
                "logging/setLevel",
                "Invalid params: 'level' must be one of debug, info, notice, warning, error, critical, alert, emergency",
            ),
        ),
        (
            "resources/subscribe without uri",
            p(r#"{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{{META}"x":1}}"#),
            legacy_only(
                7,
                "resources/subscribe",
                "Invalid params: 'uri' is required",
            ),
        ),
    ]
}

fn stdio_conformance(era: Era) {
    let mut peer = StdioPeer::open("conformance", era);
    for (i, (label, line, expected)) in conformance_cases(era).into_iter().enumerate() {
        peer.send(line.as_bytes());
        assert_eq!(peer.recv(), expected, "{label} ({era:?})");
        peer.still_serves(era, 100 + i as u32, label);
    }
}

#[test]
fn stdio_legacy_params_of_every_method_are_checked() {
    stdio_conformance(Era::Legacy);
}

#[test]
fn stdio_modern_params_of_every_method_are_checked() {
    stdio_conformance(Era::Modern);
}

// ---------------------------------------------------------------------------------------------
// HTTP

fn spawn_http(server: &str) -> (Child, u16) {
    spawn_http_with(server, &[])
}

fn spawn_http_with(server: &str, args: &[&str]) -> (Child, u16) {
    for _ in 0..5 {
        let port = common::free_port();
        let mut child = Command::new(common::binary(server))
            .args([
                "--transport",
                "http",
                "--bind",
                &format!("127.0.0.1:{port}"),
                "--log-level",
                "error",
            ])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                thread::sleep(Duration::from_millis(50));
                if let Ok(None) = child.try_wait() {
                    return (child, port);
                }
                break;
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

/// One HTTP/1.1 exchange's answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: the JSON body, or the `data:` lines of an SSE body.
    fn messages(&self) -> Vec<Value> {
        let text = String::from_utf8_lossy(&self.body);
        if self.header("content-type") == Some("application/json") {
            return vec![serde_json::from_str(&text).expect("a JSON body")];
        }
        text.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_json::from_str(d).expect("JSON in SSE data"))
            .collect()
    }

    /// The one JSON-RPC message of the body.
    fn message(&self) -> Value {
        let mut messages = self.messages();
        assert_eq!(messages.len(), 1, "one message: {self:?}");
        messages.remove(0)
    }
}

/// Sends `head` (request line and header lines, CRLF-separated, no blank line) and `body`
/// (with its Content-Length) and reads the whole answer (`Connection: close`).
fn exchange(port: u16, head: &str, body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of head");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = raw.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..end]).unwrap().trim(), 16)
            .expect("chunk size");
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[end + 2..end + 2 + size]);
        raw = &raw[end + 2 + size + 2..];
    }
}

/// A server over HTTP with one era's way of posting.
struct HttpPeer {
    child: Child,
    port: u16,
    era: Era,
    /// The legacy session.
    session: Option<String>,
}

impl HttpPeer {
    fn open(server: &str, era: Era) -> Self {
        let (child, port) = spawn_http(server);
        let mut peer = HttpPeer {
            child,
            port,
            era,
            session: None,
        };
        if era == Era::Legacy {
            let answer = peer.post_raw(&[], INITIALIZE.as_bytes());
            assert_eq!(answer.status, 200, "{answer:?}");
            peer.session = answer.header("mcp-session-id").map(str::to_string);
            assert!(peer.session.is_some(), "a session id");
            let answer = peer.post(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
            assert_eq!(answer.status, 202);
        }
        peer
    }

    fn host(&self) -> String {
        format!("Host: 127.0.0.1:{}", self.port)
    }

    /// POSTs `body` to `/mcp` with the standard headers and `extra` header lines.
    fn post_raw(&self, extra: &[String], body: &[u8]) -> Answer {
        let mut head = vec![
            "POST /mcp HTTP/1.1".to_string(),
            self.host(),
            "Content-Type: application/json".into(),
            "Accept: application/json, text/event-stream".into(),
        ];
        head.extend(extra.iter().cloned());
        exchange(self.port, &head.join("\r\n"), body)
    }

    /// POSTs `body` as this era does: the session and version headers (legacy), or the
    /// version, method and name headers (2026-07-28, from the body when it has them).
    fn post(&self, body: &[u8]) -> Answer {
        let mut extra = Vec::new();
        match self.era {
            Era::Legacy => {
                extra.push(format!(
                    "Mcp-Session-Id: {}",
                    self.session.as_ref().unwrap()
                ));
                extra.push("MCP-Protocol-Version: 2025-11-25".into());
            }
            Era::Modern => {
                extra.push("MCP-Protocol-Version: 2026-07-28".into());
                let parsed: Option<Value> = serde_json::from_slice(body).ok();
                if let Some(method) = parsed.as_ref().and_then(|v| v["method"].as_str()) {
                    extra.push(format!("Mcp-Method: {method}"));
                }
                let params = parsed.as_ref().map(|v| &v["params"]);
                let name = params.and_then(|p| p["name"].as_str().or(p["uri"].as_str()));
                if let Some(name) = name {
                    extra.push(format!("Mcp-Name: {name}"));
                }
            }
        }
        self.post_raw(&extra, body)
    }

    fn still_serves(&self, id: u32, after: &str) {
        let answer = self.post(tools_list(id, self.era).as_bytes());
        assert_eq!(answer.status, 200, "after {after}: {answer:?}");
        let message = answer.message();
        assert_eq!(message["id"], json!(id), "after {after}: {message}");
        assert!(message["result"]["tools"].is_array(), "after {after}");
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The HTTP status of a 2026-07-28 JSON-RPC error (the Streamable HTTP transport's table).
fn modern_status(error_code: &Value) -> u16 {
    match error_code.as_i64() {
        Some(-32601) => 404,
        Some(-32700 | -32600 | -32602 | -32020 | -32021 | -32022) => 400,
        _ => 200,
    }
}

/// Checks the answer to a body rmcp decodes, whose error comes from the handler: a legacy
/// session's SSE stream at `200`; at 2026-07-28 JSON at the status of its code (`400` for
/// -32602, `404` for -32601). `None`: a notification, `202` without a body.
fn check_http(peer: &HttpPeer, label: &str, body: &[u8], expected: Option<&Value>) {
    let answer = peer.post(body);
    let Some(expected) = expected else {
        assert_eq!(answer.status, 202, "{label}: {answer:?}");
        assert!(answer.body.is_empty(), "{label}: {answer:?}");
        return;
    };
    let (status, content_type) = match peer.era {
        Era::Legacy => (200, "text/event-stream"),
        Era::Modern => (
            modern_status(&expected["error"]["code"]),
            "application/json",
        ),
    };
    assert_eq!(answer.status, status, "{label}: {answer:?}");
    assert_eq!(answer.header("content-type"), Some(content_type), "{label}");
    assert_eq!(&answer.message(), expected, "{label} ({:?})", peer.era);
}

/// The errors that only the front can find (rmcp cannot decode the body): always `400` JSON.
fn front_status(label: &str) -> bool {
    [
        "not JSON",
        "truncated",
        "a number",
        "a string",
        "an empty array",
        "a batch",
        "no jsonrpc",
        "jsonrpc 1.0",
        "method not a string",
        "no method",
        "id true",
        "id null",
        "id 1.5",
        "tools/call _meta a string",
        "params an array",
        "an object without id or method",
    ]
    .contains(&label)
}

fn http_cases(era: Era) {
    let peer = HttpPeer::open("bookshop", era);
    for (i, (label, bytes, expected)) in bookshop_cases().into_iter().enumerate() {
        let body = enveloped(&String::from_utf8(bytes).unwrap(), era);
        if front_status(label) {
            let answer = peer.post(body.as_bytes());
            assert_eq!(answer.status, 400, "{label}: {answer:?}");
            assert_eq!(answer.header("content-type"), Some("application/json"));
            assert_eq!(Some(answer.message()), expected, "{label} ({era:?})");
        } else if label == "a response to nothing" && era == Era::Modern {
            // A stateless request has nothing to answer: rmcp's 400 (the Python SDK's too),
            // with the `"id": null` the front adds.
            let answer = peer.post(body.as_bytes());
            assert_eq!(answer.status, 400, "{answer:?}");
            assert_eq!(
                answer.message(),
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "stateless server does not accept JSON-RPC responses"}})
            );
        } else {
            check_http(&peer, label, body.as_bytes(), expected.as_ref());
        }
        peer.still_serves(100 + i as u32, label);
    }
    // Invalid UTF-8 in a body: a parse error (the Python SDK's `json.loads` of the bytes).
    let answer =
        peer.post(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"x\":\"\xff\"}");
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(answer.message(), parse_error());
    peer.still_serves(200, "invalid UTF-8");
}

#[test]
fn http_legacy_answers_every_bad_body_and_keeps_serving() {
    http_cases(Era::Legacy);
}

#[test]
fn http_modern_answers_every_bad_body_and_keeps_serving() {
    http_cases(Era::Modern);
}

fn http_conformance(era: Era) {
    let peer = HttpPeer::open("conformance", era);
    for (i, (label, body, expected)) in conformance_cases(era).into_iter().enumerate() {
        check_http(&peer, label, body.as_bytes(), Some(&expected));
        peer.still_serves(100 + i as u32, label);
    }
}

#[test]
fn http_legacy_params_of_every_method_are_checked() {
    http_conformance(Era::Legacy);
}

#[test]
fn http_modern_params_of_every_method_are_checked() {
    http_conformance(Era::Modern);
}

/// `initialize` with missing fields (rmcp: `400 Session ID is required`, text).
#[test]
fn http_initialize_with_bad_params_is_invalid_params() {
    let peer = HttpPeer::open("bookshop", Era::Modern);
    let answer = peer.post_raw(
        &[],
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
    );
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(answer.header("content-type"), Some("application/json"));
    assert_eq!(
        answer.message(),
        invalid_params(1, "Invalid params: 'capabilities' is required")
    );
    let answer = peer.post_raw(&[], INITIALIZE.as_bytes());
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(
        answer.message()["result"]["protocolVersion"],
        json!("2025-11-25")
    );
}

#[test]
fn http_two_host_headers_or_none_are_400_on_every_path() {
    let peer = HttpPeer::open("bookshop", Era::Modern);
    let port = peer.port;
    let list = tools_list(1, Era::Modern);
    for path in ["/mcp", "/other"] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list"
        );
        let answer = exchange(port, &head, list.as_bytes());
        assert_eq!(answer.status, 400, "{path}: {answer:?}");
        assert_eq!(answer.body, b"Bad Request: more than one Host header");
        let head = format!(
            "POST {path} HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
        );
        let answer = exchange(port, &head, list.as_bytes());
        assert_eq!(answer.status, 400, "{path}: {answer:?}");
        assert_eq!(answer.body, b"Bad Request: missing Host header");
    }
    peer.still_serves(2, "Host errors");
}

#[test]
fn http_delete_of_an_unknown_session_is_404() {
    let peer = HttpPeer::open("bookshop", Era::Legacy);
    let port = peer.port;
    let delete = |session: &str| {
        let head = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25"
        );
        exchange(port, &head, b"")
    };
    let answer = delete("no-such-session");
    assert_eq!(answer.status, 404, "{answer:?}");
    assert_eq!(answer.body, b"Not Found: Session not found");
    peer.still_serves(2, "an unknown DELETE");
    let session = peer.session.clone().unwrap();
    // The session is closed when the answer goes out: 204 (rmcp answers 202).
    let answer = delete(&session);
    assert_eq!(answer.status, 204, "{answer:?}");
    assert_eq!(answer.body, b"");
    let answer = delete(&session);
    assert_eq!(answer.status, 404, "a deleted session: {answer:?}");
    // And the deleted session is gone for POST too (rmcp's 404).
    assert_eq!(peer.post(tools_list(3, Era::Legacy).as_bytes()).status, 404);
}

#[test]
fn http_accept_ranges_are_acceptable() {
    let peer = HttpPeer::open("bookshop", Era::Legacy);
    let port = peer.port;
    let list = tools_list(5, Era::Modern);
    let post = |accept: &str| {
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{accept}MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list"
        );
        exchange(port, &head, list.as_bytes())
    };
    for accept in [
        "*/*",
        "application/*, text/*",
        "application/json, */*;q=0.1",
        "text/event-stream, application/*;q=0.5",
    ] {
        let answer = post(&format!("Accept: {accept}\r\n"));
        assert_eq!(answer.status, 200, "Accept: {accept}: {answer:?}");
        assert_eq!(answer.message()["id"], json!(5), "Accept: {accept}");
    }
    for accept in ["Accept: application/json\r\n", "Accept: */*;q=0\r\n", ""] {
        let answer = post(accept);
        assert_eq!(answer.status, 406, "{accept:?}: {answer:?}");
    }
    // The legacy GET stream takes `*/*` for text/event-stream.
    let session = peer.session.clone().unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: */*\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(stream).read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}

// ---------------------------------------------------------------------------------------------
// Statuses, the era of a connection, connection limits

/// A 2026-07-28 request whose error the handler returns gets the status of its code, on a JSON
/// body: `400` for -32602 (unknown tool or prompt, resource not found, a bad `requestState`,
/// a string id with an escaped quote), -32021 and -32022, `404` for -32601; a result stays
/// `200`. The same requests in a legacy session are answered on their SSE stream at `200`.
#[test]
fn http_handler_errors_have_the_status_of_their_code() {
    let cases: Vec<(&str, &str, String, Value)> = vec![
        (
            "bookshop",
            "unknown tool",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{META}"name":"nope","arguments":{}}}"#.into(),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool: nope"}}),
        ),
        (
            "bookshop",
            "a forged requestState",
            r#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{{META}"name":"search_books","arguments":{"query":"x"},"requestState":"zz"}}"#.into(),
            json!({"jsonrpc": "2.0", "id": "a\"b", "error": {"code": -32602, "message": "Invalid or expired requestState", "data": {"reason": "invalid_request_state"}}}),
        ),
        (
            "conformance",
            "resource not found",
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{{META}"uri":"test://nope"}}"#.into(),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Resource not found", "data": {"uri": "test://nope"}}}),
        ),
        (
            "conformance",
            "unknown prompt",
            r#"{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{{META}"name":"nope"}}"#.into(),
            json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Unknown prompt: nope"}}),
        ),
    ];
    for era in [Era::Modern, Era::Legacy] {
        for server in ["bookshop", "conformance"] {
            let peer = HttpPeer::open(server, era);
            for (i, (_, label, template, expected)) in
                cases.iter().filter(|c| c.0 == server).enumerate()
            {
                // A legacy resource not found is -32002 (2026-07-28 replaced it by -32602).
                let mut expected = expected.clone();
                if era == Era::Legacy && *label == "resource not found" {
                    expected["error"]["code"] = json!(-32002);
                }
                check_http(
                    &peer,
                    label,
                    enveloped(template, era).as_bytes(),
                    Some(&expected),
                );
                peer.still_serves(100 + i as u32, label);
            }
        }
    }
    // -32021 and -32022, and a -32601 the handler returns, at 2026-07-28.
    let peer = HttpPeer::open("bookshop", Era::Modern);
    let answer = peer.post(
        enveloped(
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{META}"name":"order_book","arguments":{"title":"Neuromancer"}}}"#,
            Era::Modern,
        )
        .as_bytes(),
    );
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(
        answer.message(),
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32021, "message": "Client did not declare the form elicitation capability required by resolver 'confirm_backorder'", "data": {"requiredCapabilities": {"elicitation": {"form": {}}}}}})
    );
    let answer = peer.post_raw(
        &["MCP-Protocol-Version: 2099-01-01".into(), "Mcp-Method: tools/list".into()],
        br#"{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(answer.message()["error"]["code"], json!(-32022));
    let answer = peer.post(
        enveloped(
            r#"{"jsonrpc":"2.0","id":7,"method":"prompts/list","params":{{META}}}"#,
            Era::Modern,
        )
        .as_bytes(),
    );
    assert_eq!(answer.status, 404, "{answer:?}");
    assert_eq!(answer.message(), method_not_found(7, "prompts/list"));
    peer.still_serves(8, "the error statuses");
}

/// A legacy request (no envelope) posted without `Mcp-Session-Id`: `400` with the JSON-RPC
/// error the Python SDK sends (`-32600 "Bad Request: Missing session ID"`, `"id": null`), for a
/// request and for a notification; no session is created.
#[test]
fn http_legacy_request_without_a_session_is_400() {
    let peer = HttpPeer::open("bookshop", Era::Modern);
    let expected = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Bad Request: Missing session ID"}});
    for (label, body, headers) in [
        ("a request", tools_list(1, Era::Legacy), vec![]),
        (
            "a request naming a legacy version",
            tools_list(2, Era::Legacy),
            vec!["MCP-Protocol-Version: 2025-11-25".to_string()],
        ),
        (
            "a notification",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
            vec![],
        ),
    ] {
        let answer = peer.post_raw(&headers, body.as_bytes());
        assert_eq!(answer.status, 400, "{label}: {answer:?}");
        assert_eq!(answer.header("content-type"), Some("application/json"));
        assert_eq!(answer.header("mcp-session-id"), None, "{label}");
        assert_eq!(answer.message(), expected, "{label}");
    }
    peer.still_serves(3, "legacy requests without a session");
}

/// A request carrying the 2026-07-28 envelope on a stdio connection that `initialize` opened:
/// `-32600` with the Python SDK's message (for a known method and for one rmcp does not
/// model); requests without it are served as before, and an `initialize` is not refused.
#[test]
fn stdio_enveloped_request_on_a_legacy_connection_is_invalid_request() {
    let mut peer = StdioPeer::open("bookshop", Era::Legacy);
    let refused = |id: u32| json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": "this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it"}});
    peer.send(tools_list(7, Era::Modern).as_bytes());
    assert_eq!(peer.recv(), refused(7));
    // The version key alone is the envelope (a half-built one too).
    peer.send(br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"search_books","arguments":{"query":"x"}}}"#);
    assert_eq!(peer.recv(), refused(8));
    peer.send(br#"{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#);
    assert_eq!(peer.recv(), refused(9));
    peer.still_serves(Era::Legacy, 10, "enveloped requests");
    // A legacy request's own `_meta` (a progress token) is no envelope.
    peer.send(br#"{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"_meta":{"progressToken":1}}}"#);
    assert!(peer.recv()["result"]["tools"].is_array());
}

/// A client that sends half a header is disconnected after `--header-read-timeout` (the
/// connection closes without an answer), an idle kept-alive connection too, while other clients
/// are served meanwhile.
#[test]
fn http_a_half_sent_header_is_closed_after_the_header_read_timeout() {
    let (child, port) = spawn_http_with("bookshop", &["--header-read-timeout", "1s"]);
    let peer = HttpPeer {
        child,
        port,
        era: Era::Modern,
        session: None,
    };
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        slow,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: appl"
    )
    .unwrap();
    let opened = std::time::Instant::now();
    // Served meanwhile.
    peer.still_serves(1, "a half-sent header");
    let mut rest = Vec::new();
    let read = slow.read_to_end(&mut rest);
    let waited = opened.elapsed();
    assert!(
        matches!(read, Ok(0)),
        "closed without an answer: {read:?} {rest:?}"
    );
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "closed after {waited:?}"
    );
    // An idle kept-alive connection, after one exchange, is closed the same way.
    let mut idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = tools_list(2, Era::Modern);
    write!(
        idle,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = Vec::new();
    let mut buf = [0; 65536];
    let start = std::time::Instant::now();
    loop {
        match idle.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        answer.starts_with(b"HTTP/1.1 200 OK\r\n"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    peer.still_serves(3, "idle connections");
}

/// `--max-connections 2`: a third connection waits until one of the two open ones closes, then
/// it is served.
#[test]
fn http_connections_beyond_the_cap_wait() {
    let (child, port) = spawn_http_with("bookshop", &["--max-connections", "2", "--threads", "1"]);
    let peer = HttpPeer {
        child,
        port,
        era: Era::Modern,
        session: None,
    };
    let first = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let second = TcpStream::connect(("127.0.0.1", port)).unwrap();
    thread::sleep(Duration::from_millis(200));
    let (done, finished) = mpsc::channel();
    let port_copy = port;
    thread::spawn(move || {
        let body = tools_list(1, Era::Modern);
        let answer = exchange(
            port_copy,
            &format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port_copy}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list"
            ),
            body.as_bytes(),
        );
        let _ = done.send(answer.status);
    });
    assert!(
        finished.recv_timeout(Duration::from_millis(700)).is_err(),
        "served beyond the cap"
    );
    drop(first);
    assert_eq!(finished.recv_timeout(Duration::from_secs(5)), Ok(200));
    drop(second);
    peer.still_serves(2, "the cap");
}

/// A body over the 4 MiB limit on a kept-alive connection: `413` with `Connection: close`,
/// then the connection ends cleanly (end of stream, no reset) after the server has read the
/// body, and a new connection is served.
#[test]
fn http_413_closes_the_kept_alive_connection_cleanly() {
    let peer = HttpPeer::open("bookshop", Era::Modern);
    let port = peer.port;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META},"pad":"{}"}}}}"#,
        "a".repeat(5 << 20)
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    // The whole body is written before anything is read, as most clients do.
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let read = stream.read_to_end(&mut raw);
    assert!(read.is_ok(), "a clean end of stream, no reset: {read:?}");
    let text = String::from_utf8_lossy(&raw).to_lowercase();
    assert!(
        text.starts_with("http/1.1 413 payload too large\r\n"),
        "{text}"
    );
    assert!(text.contains("\r\nconnection: close\r\n"), "{text}");
    assert!(
        text.ends_with("\r\n\r\npayload too large: request body exceeds 4194304 bytes"),
        "{text}"
    );
    peer.still_serves(2, "a 413");
}

/// The 2026-07-28 envelope in a legacy HTTP session: routed by `MCP-Protocol-Version`, as the
/// Python SDK routes it. With `2026-07-28` it is served statelessly (JSON, the session ignored);
/// with the session's legacy version the header and `_meta` disagree: `400` -32020.
#[test]
fn http_enveloped_request_in_a_legacy_session_is_routed_by_its_version_header() {
    let peer = HttpPeer::open("bookshop", Era::Legacy);
    let session = format!("Mcp-Session-Id: {}", peer.session.clone().unwrap());
    let body = tools_list(2, Era::Modern);
    let answer = peer.post_raw(
        &[
            session.clone(),
            "MCP-Protocol-Version: 2026-07-28".into(),
            "Mcp-Method: tools/list".into(),
        ],
        body.as_bytes(),
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let message = answer.message();
    assert_eq!(message["id"], json!(2));
    assert_eq!(message["result"]["resultType"], json!("complete"));
    let answer = peer.post_raw(
        &[session, "MCP-Protocol-Version: 2025-11-25".into()],
        tools_list(3, Era::Modern).as_bytes(),
    );
    assert_eq!(answer.status, 400, "{answer:?}");
    assert_eq!(
        answer.message(),
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32020, "message": "MCP-Protocol-Version header (2025-11-25) does not match request _meta protocolVersion (2026-07-28)"}})
    );
    peer.still_serves(4, "enveloped requests in the session");
}

/// The header read timeout bounds only the wait for a request's header: a legacy session's
/// GET stream stays open past it (here 1 s, the stream read for 3 s).
#[test]
fn http_streams_outlive_the_header_read_timeout() {
    let (child, port) = spawn_http_with("bookshop", &["--header-read-timeout", "1s"]);
    let mut peer = HttpPeer {
        child,
        port,
        era: Era::Legacy,
        session: None,
    };
    let answer = peer.post_raw(&[], INITIALIZE.as_bytes());
    peer.session = answer.header("mcp-session-id").map(str::to_string);
    let answer = peer.post(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(answer.status, 202, "{answer:?}");
    let session = peer.session.clone().unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n"
    )
    .unwrap();
    let start = std::time::Instant::now();
    let mut received = Vec::new();
    let mut buf = [0; 4096];
    let end = loop {
        match stream.read(&mut buf) {
            Ok(0) => break Ok(0),
            Ok(n) => received.extend_from_slice(&buf[..n]),
            Err(e) => break Err(e.kind()),
        }
    };
    assert!(
        received.starts_with(b"HTTP/1.1 200 OK\r\n"),
        "{}",
        String::from_utf8_lossy(&received)
    );
    assert!(
        matches!(
            end,
            Err(std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
        ),
        "the stream ended: {end:?} after {:?}",
        start.elapsed()
    );
    assert!(start.elapsed() >= Duration::from_millis(2900));
    peer.still_serves(2, "a long stream");
}

// ---------------------------------------------------------------------------------------------
// Numbers as sent (runtime/src/catalog/numbers.rs)

/// Where [`call_as_sent`] sends.
enum Over<'a> {
    Stdio(&'a mut StdioPeer, Era),
    Http(u16),
}

/// A 2026-07-28 `tools/call` (or, on a legacy stdio peer, a plain one) of `tool` with
/// `arguments` (JSON text, as sent) and `id`, over stdio or HTTP (where the answer must be 200);
/// the message answering it.
fn call_as_sent(over: Over<'_>, id: usize, tool: &str, arguments: &str) -> Value {
    let line = |era| {
        enveloped(
            &format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{{META}}"name":"{tool}","arguments":{arguments}}}}}"#
            ),
            era,
        )
    };
    let message = match over {
        Over::Stdio(peer, era) => {
            peer.send(line(era).as_bytes());
            peer.recv()
        }
        Over::Http(port) => {
            let answer = exchange(
                port,
                &format!(
                    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}"
                ),
                line(Era::Modern).as_bytes(),
            );
            assert_eq!(answer.status, 200, "{tool} {arguments}: {answer:?}");
            answer.message()
        }
    };
    assert_eq!(message["id"], json!(id), "{tool} {arguments}: {message}");
    message
}

/// `(tool, arguments as sent, the tool's answer)`: a number the float it is read as gives back
/// reaches the handler (the differential tools answer their typed arguments as JSON text); one
/// it does not is refused, naming it, before the tool runs.
fn number_cases() -> Vec<(
    &'static str,
    &'static str,
    Result<&'static str, &'static str>,
)> {
    vec![
        ("type_number", r#"{"value": 0.1}"#, Ok(r#"{"value":0.1}"#)),
        (
            "type_number",
            r#"{"value": 2.50e-1}"#,
            Ok(r#"{"value":0.25}"#),
        ),
        (
            "type_number",
            r#"{"value": 0.10000000000000000001}"#,
            Err(
                "/value: 0.10000000000000000001 cannot be taken exactly: the nearest 64-bit float is 0.1",
            ),
        ),
        (
            "type_integer",
            r#"{"value": 9007199254740992.0}"#,
            Ok(r#"{"value":9007199254740992}"#),
        ),
        (
            "type_integer",
            r#"{"value": 9007199254740993.0}"#,
            Err(
                "/value: 9007199254740993.0 cannot be taken exactly: the nearest 64-bit float is 9007199254740992.0",
            ),
        ),
        (
            "type_integer",
            r#"{"value": 1.0000000000000000001}"#,
            Err(
                "/value: 1.0000000000000000001 cannot be taken exactly: the nearest 64-bit float is 1.0",
            ),
        ),
        (
            "type_integer",
            r#"{"value": 9007199254740993}"#,
            Ok(r#"{"value":9007199254740993}"#),
        ),
    ]
}

/// The `tools/call` result `answer` for `expected`: the handler's JSON text, or the refusal.
fn assert_number_answer(answer: &Value, tool: &str, arguments: &str, expected: Result<&str, &str>) {
    let result = &answer["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    match expected {
        Ok(json) => {
            assert_eq!(
                result["isError"],
                json!(false),
                "{tool} {arguments}: {answer}"
            );
            let got: Value = serde_json::from_str(text).unwrap_or_else(|_| json!(text));
            let want: Value = serde_json::from_str(json).unwrap();
            assert_eq!(got, want, "{tool} {arguments}");
            assert_eq!(
                text, json,
                "{tool} {arguments}: the text as the handler wrote it"
            );
        }
        Err(why) => {
            assert_eq!(
                result["isError"],
                json!(true),
                "{tool} {arguments}: {answer}"
            );
            assert_eq!(
                text,
                format!("Error executing tool {tool}: {why}"),
                "{tool} {arguments}"
            );
        }
    }
}

#[test]
fn stdio_a_number_is_taken_as_sent_or_refused() {
    for era in [Era::Legacy, Era::Modern] {
        let mut peer = StdioPeer::open("differential", era);
        for (i, (tool, arguments, expected)) in number_cases().into_iter().enumerate() {
            let answer = call_as_sent(Over::Stdio(&mut peer, era), 100 + i, tool, arguments);
            assert_number_answer(&answer, tool, arguments, expected);
        }
        peer.still_serves(era, 999, "the numbers");
    }
}

#[test]
fn http_a_number_is_taken_as_sent_or_refused() {
    let (mut child, port) = spawn_http("differential");
    for (i, (tool, arguments, expected)) in number_cases().into_iter().enumerate() {
        let message = call_as_sent(Over::Http(port), 100 + i, tool, arguments);
        assert_number_answer(&message, tool, arguments, expected);
    }
    let _ = child.kill();
    let _ = child.wait();
}

// ---------------------------------------------------------------------------------------------
// The spec's order on the wire

/// The member names of `value`, in the order they were written.
fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// Advertised schemas and elicitation forms keep the order the spec writes their members in
/// (a form's fields are what a person sees, in that order), on both eras: bookshop's
/// `search_books` (query, limit, genre) and the conformance server's SEP-1034 form (name, age,
/// score, status, verified), neither in alphabetical order.
#[test]
fn stdio_schemas_and_forms_keep_the_specs_order() {
    for era in [Era::Legacy, Era::Modern] {
        let mut peer = StdioPeer::open("bookshop", era);
        peer.send(tools_list(7, era).as_bytes());
        let answer = peer.recv();
        let search = answer["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "search_books")
            .unwrap();
        assert_eq!(
            keys(&search["inputSchema"]),
            ["type", "properties", "required"],
            "{era:?}"
        );
        assert_eq!(
            keys(&search["inputSchema"]["properties"]),
            ["query", "limit", "genre"],
            "{era:?}"
        );
        assert_eq!(
            keys(&search["inputSchema"]["properties"]["limit"]),
            ["type", "minimum", "maximum", "default", "description"],
            "{era:?}"
        );
    }
    let fields = ["name", "age", "score", "status", "verified"];
    // 2026-07-28: the form is in the input request of the result.
    let mut peer = StdioPeer::open("conformance", Era::Modern);
    peer.send(br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},"name":"test_elicitation_sep1034_defaults","arguments":{}}}"#);
    let answer = peer.recv();
    let requests = &answer["result"]["inputRequests"];
    let form = &requests[keys(requests)[0]]["params"]["requestedSchema"];
    assert_eq!(keys(&form["properties"]), fields, "{answer}");
    // Legacy: the form is the params of the server's elicitation/create.
    let mut peer = StdioPeer::start("conformance");
    peer.send(
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    assert_eq!(peer.recv()["id"], json!(1));
    peer.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    peer.send(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_elicitation_sep1034_defaults","arguments":{}}}"#);
    let question = peer.recv();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(
        keys(&question["params"]["requestedSchema"]["properties"]),
        fields,
        "{question}"
    );
}

/// Over HTTP too (a 2026-07-28 `tools/list`): the advertised schema keeps the spec's order.
#[test]
fn http_schemas_keep_the_specs_order() {
    let (mut child, port) = spawn_http("bookshop");
    let body = tools_list(3, Era::Modern);
    let answer = exchange(
        port,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list"
        ),
        body.as_bytes(),
    );
    assert_eq!(answer.status, 200, "{answer:?}");
    let message = answer.message();
    let search = message["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search_books")
        .unwrap();
    assert_eq!(
        keys(&search["inputSchema"]["properties"]),
        ["query", "limit", "genre"]
    );
    let _ = child.kill();
    let _ = child.wait();
}

// ---------------------------------------------------------------------------------------------
// Violations that name their cause

/// `(arguments, the refusal)` for the differential example's `ref_recursive_list`, whose
/// `next` is pydantic's optional field (`anyOf [{"$ref": "#/$defs/Node"}, {"type": "null"}]`):
/// the violation inside the one branch whose type takes the value is named, at its own place,
/// not the `anyOf`.
fn branch_cases() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            r#"{"value": {"value": 1, "next": {"value": "two"}}}"#,
            r#"/value/next/value (type): "two" is not of type "integer""#,
        ),
        (
            r#"{"value": {"value": 1, "next": {"value": 2, "next": {"next": null}}}}"#,
            r#"/value/next/next (required): "value" is a required property"#,
        ),
        (
            r#"{"value": {"value": 1, "next": 5}}"#,
            r#"/value/next (anyOf): 5 is not valid under any of the schemas listed in the 'anyOf' keyword"#,
        ),
    ]
}

#[test]
fn stdio_a_violation_inside_a_nullable_branch_is_named() {
    for era in [Era::Legacy, Era::Modern] {
        let mut peer = StdioPeer::open("differential", era);
        for (i, (arguments, why)) in branch_cases().into_iter().enumerate() {
            let answer = call_as_sent(
                Over::Stdio(&mut peer, era),
                200 + i,
                "ref_recursive_list",
                arguments,
            );
            assert_eq!(
                answer["result"]["isError"],
                json!(true),
                "{era:?}: {answer}"
            );
            assert_eq!(
                answer["result"]["content"][0]["text"],
                json!(format!("Error executing tool ref_recursive_list: {why}")),
                "{era:?} {arguments}"
            );
        }
    }
}

#[test]
fn http_a_violation_inside_a_nullable_branch_is_named() {
    let (mut child, port) = spawn_http("differential");
    for (i, (arguments, why)) in branch_cases().into_iter().enumerate() {
        let message = call_as_sent(Over::Http(port), 200 + i, "ref_recursive_list", arguments);
        assert_eq!(
            message["result"]["content"][0]["text"],
            json!(format!("Error executing tool ref_recursive_list: {why}")),
            "{arguments}"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}
