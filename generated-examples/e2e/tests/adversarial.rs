//! The adversarial suite: the example servers (bookshop, files, bistro, conformance) driven
//! over stdio and Streamable HTTP with malformed, oversized, deeply nested, invalid UTF-8, slow
//! (slowloris), flooding, forged-state and out-of-order input, and a bounded fuzz run over the
//! request path (stdio in both eras, HTTP). Loopback only; the whole file runs in 30-50 s on
//! two cores (the `item<N>_` tests that fail wait out their answer timeouts).
//!
//! Two kinds of test:
//!
//! * **Resilience** (no prefix): whatever the input, the server stays up, keeps serving (a
//!   normal call after each hostile input gets its exact answer), answers no request twice and no
//!   id it was never sent, stdout carries JSON-RPC only, and resident memory (`VmRSS`) stays under
//!   the bound stated at each test.
//! * **Exact answers prescribed by issue 17** (prefix `item<N>_`, one test per item and
//!   transport): the answers items 2-5 of the issue prescribe. They hold once those items are
//!   implemented.
//!
//! Limits measured here (rmcp 3.11, hyper 1.12 through `axum::serve`):
//!
//! * HTTP bodies are capped at 4 MiB by rmcp (`max_request_body_bytes`), enforced while the body
//!   streams in: a 10 MiB body gets `413 Payload Too Large` and is never buffered whole (the
//!   Python SDK: 4 MiB, `413 Request body too large`).
//! * stdio lines are capped at 16 MiB by rmcp (`DEFAULT_MAX_LINE_LENGTH`): a longer line is
//!   discarded while it streams in, unanswered, and the next line is served (the Python SDK
//!   reads lines without a cap).
//! * serde_json's recursion limit (128) refuses 100,000 nested arrays without a stack overflow,
//!   on stdio and on HTTP.
//! * Before the runtime served hyper itself, `axum::serve` set no timer, so a client trickling a
//!   header held its connection for as long as it liked (measured: still open after 45 s; about
//!   27 KiB of RSS per such connection, 1,000 of them +26 MiB), and nothing capped connections.
//!   Now a header must arrive within `--header-read-timeout` (default 10 s) and at most
//!   `--max-connections` (default 1000) are served at once (both tested in `jsonrpc.rs`); other
//!   clients are served meanwhile (tested here).
//! * A `413` carries `Connection: close` and is sent after the rest of the body was read (up to
//!   16 MiB more), so a keep-alive client gets the answer and a clean end of the connection
//!   (tested in `jsonrpc.rs`; before, it went out without `Connection: close`).
//! * A flood of legacy `initialize`s beyond `--max-sessions` is refused (`503`, `Retry-After`)
//!   before any session is built for it, so memory stays bounded by the cap and the server logs
//!   nothing; the sessions still expire after `--session-idle-timeout` (tested here). An idle
//!   session of a debug build costs 69 KiB, as in release.
//! * Memory (debug build, mimalloc): idle 25-28 MiB; after the hostile stdio lines ~72 MiB;
//!   after 500 idle connections and 500 concurrent calls ~64 MiB; after any line over the
//!   16 MiB cap 67-86 MiB whatever its length. The bound asserted is 96 MiB.
//!
//! The generated servers and the Python reference server (`python-seed-servers/bookshop_ref.py`,
//! mcp 2.3.0), same input, as of this suite's writing ("-" = no answer at all):
//!
//! | input | generated (rmcp 3.11) | Python SDK | issue 17 |
//! |---|---|---|---|
//! | stdio: line not JSON / truncated / invalid UTF-8 | - | - | -32700, id null |
//! | HTTP: body not JSON | 415, plain text | 400, -32700 id null | 400, -32700 id null |
//! | stdio: `42`, `[]`, `{}`, batch | -32600 without `id` | - | -32600, id null |
//! | HTTP: `42`, `[]`, `{}`, batch | 415, plain text | 400, -32602 id null | -32600, id null |
//! | stdio/HTTP: 100,000 nested arrays | stdio -, HTTP 415 | stdio -, HTTP 400 -32700 | (not JSON it can parse: -32700) |
//! | `tools/call` without `name`, `arguments: [1]`, no params | -32601 `"tools/call"` | -32602 `"Invalid request parameters"` | -32602 naming the field |
//! | stdio: request with `\xff` inside a string | - | answered, U+FFFD in the text | answered |
//! | HTTP: request with `\xff` inside a string | 415 | 400, -32700 id null | answered |
//! | 10 MiB HTTP body | 413 | 413 | (bounded) |
//! | forged `requestState` on a tool that asks nothing, or a prompt | ignored, it runs | -32602 `Invalid or expired requestState` | -32602 `Invalid or expired requestState` |
//! | `requestState: 42` (`tools/call`, `resources/read`) | -32601 `"tools/call"` / `"resources/read"` | -32602 `Invalid or expired requestState` | the same |
//! | forged `requestState` on a tool that asks, a round that needs it | -32602 `Invalid or expired requestState` | the same | the same |
//! | legacy `tools/call` before `initialize` | -32602 (`_meta` missing) | -32602 `Invalid request parameters` | one answer |
//! | second `initialize` | answered again | answered again | one answer |
//! | elicitation answer with a wrong id | ignored; the right one completes the call | the same | |
//! | elicitation answer `{"action":"bogus"}` | `isError` "Error executing tool order_book" (now: "... received an invalid elicitation response") | `isError` "... received an invalid elicitation response" | |
//! | enveloped request on a legacy stdio connection | served (now: -32600, the Python SDK's text) | -32600 | |
//! | HTTP 2026-07-28: a handler's -32602 (e.g. bad `requestState`) | HTTP 200 (now: 400) | HTTP 400 | (transport spec: 400) |
//! | stdio line over 16 MiB | dropped, unanswered | answered (no cap) | |
//! | two `Host` headers | 200 | 400 (h11) | 400 |
//! | `DELETE` of an unknown session | 202 | 404 | 404 |
//! | `Accept: */*` | 406 | 200 | accepted |
//! | an idle legacy HTTP session | ~104 KiB RSS (2,000 opened) | ~35 KiB (issue) | less |

mod common;
#[allow(dead_code)]
#[path = "adversarial/wire.rs"]
mod wire;

use std::{
    collections::HashSet,
    io::{Read, Write},
    net::TcpStream,
    sync::Mutex,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use wire::{HttpServer, StdioServer, call, modern, request};

/// The resident memory a debug-built example may use after any of these tests (it idles at
/// 5-10 MiB; holding one 16 MiB line or one 4 MiB body with its parsed copies stays well under).
const RSS_BOUND_KIB: u64 = 96 * 1024;

/// 100,000 nested arrays.
fn deep_arrays() -> String {
    format!("{}{}", "[".repeat(100_000), "]".repeat(100_000))
}

/// 100,000 nested objects `{"a":{"a":...}}`.
fn deep_objects() -> String {
    format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000))
}

/// A line of `bytes` followed by `\n`.
fn line(bytes: impl AsRef<[u8]>) -> Vec<u8> {
    let mut line = bytes.as_ref().to_vec();
    line.push(b'\n');
    line
}

/// Hostile stdio lines, each with the id it carries (if any): none may crash the server or
/// stop it serving.
fn hostile_lines() -> Vec<(&'static str, Vec<u8>)> {
    let mut invalid_utf8 = br#"{"jsonrpc":"2.0","id":"h-utf8","method":"tools/call","params":{"name":"search_books","arguments":{"query":"#.to_vec();
    invalid_utf8.extend_from_slice(b"\"\xff\xfe\xc3\x28\",\"limit\":1}}}");
    vec![
        ("not JSON", line("this is not json")),
        (
            "truncated JSON",
            line(r#"{"jsonrpc":"2.0","id":"h-trunc","method":"#),
        ),
        ("invalid UTF-8 bytes", line(b"\xff\xfe\xfd")),
        ("invalid UTF-8 inside a request", line(invalid_utf8)),
        (
            "lone surrogate escape",
            line(
                r#"{"jsonrpc":"2.0","id":"h-surrogate","method":"tools/call","params":{"name":"search_books","arguments":{"query":"\ud800","limit":1}}}"#,
            ),
        ),
        ("NUL bytes", line(b"\0\0\0")),
        ("blank", line("   ")),
        ("a number", line("42")),
        ("null", line("null")),
        ("a string", line(r#""tools/list""#)),
        ("an empty array", line("[]")),
        (
            "a batch",
            line(r#"[{"jsonrpc":"2.0","id":"h-batch","method":"ping"}]"#),
        ),
        ("an empty object", line("{}")),
        ("100,000 nested arrays", line(deep_arrays())),
        ("100,000 nested objects", line(deep_objects())),
        (
            "100,000 nested arrays in a request",
            line(format!(
                r#"{{"jsonrpc":"2.0","id":"h-deep","method":"tools/call","params":{{"name":"x","arguments":{{"a":{}}}}}}}"#,
                deep_arrays()
            )),
        ),
        (
            "120 nested arrays in a request (under serde_json's limit of 128)",
            line(format!(
                r#"{{"jsonrpc":"2.0","id":"h-deep120","method":"tools/call","params":{{"name":"search_books","arguments":{{"query":"dune","limit":5,"extra":{}{}}}}}}}"#,
                "[".repeat(120),
                "]".repeat(120)
            )),
        ),
        (
            "tools/call without params",
            line(r#"{"jsonrpc":"2.0","id":"h-noparams","method":"tools/call"}"#),
        ),
        (
            "arguments not an object",
            line(
                r#"{"jsonrpc":"2.0","id":"h-args","method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            ),
        ),
        (
            "name not a string",
            line(r#"{"jsonrpc":"2.0","id":"h-name","method":"tools/call","params":{"name":7}}"#),
        ),
        (
            "params an array",
            line(r#"{"jsonrpc":"2.0","id":"h-array","method":"tools/list","params":[1]}"#),
        ),
        (
            "jsonrpc 1.0",
            line(r#"{"jsonrpc":"1.0","id":"h-v1","method":"ping"}"#),
        ),
        (
            "id an object",
            line(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
        ),
        (
            "a result for an id never sent",
            line(r#"{"jsonrpc":"2.0","id":424242,"result":{}}"#),
        ),
        (
            "an error for an id never sent",
            line(r#"{"jsonrpc":"2.0","id":"never","error":{"code":-1,"message":"x"}}"#),
        ),
        (
            "a cancellation of an id never sent",
            line(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":31337}}"#,
            ),
        ),
        (
            "an unknown notification",
            line(r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}"#),
        ),
        (
            "20,000 notifications",
            line(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#)
                .repeat(20_000),
        ),
        (
            "arguments with 100,000 keys",
            line(
                serde_json::to_vec(&call(
                    "h-keys",
                    "search_books",
                    Value::Object(
                        (0..100_000)
                            .map(|i| (format!("k{i}"), json!(i)))
                            .collect(),
                    ),
                ))
                .unwrap(),
            ),
        ),
        (
            "a 1 MiB tool name",
            line(serde_json::to_vec(&call("h-longname", &"x".repeat(1 << 20), json!({}))).unwrap()),
        ),
        (
            "a 1 MiB id",
            line(
                serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": format!("h-{}", "y".repeat(1 << 20)), "method": "ping"}))
                    .unwrap(),
            ),
        ),
        (
            "a 10 MiB request",
            line(
                serde_json::to_vec(&request(
                    "h-10mib",
                    "tools/list",
                    json!({"_meta": {"pad": "a".repeat(10 << 20)}}),
                ))
                .unwrap(),
            ),
        ),
        (
            "a 20 MiB line (over rmcp's 16 MiB line cap)",
            line(format!(
                r#"{{"jsonrpc":"2.0","id":"h-20mib","method":"ping","params":{{"pad":"{}"}}}}"#,
                "b".repeat(20 << 20)
            )),
        ),
    ]
}

/// Ids in [`hostile_lines`] whose requests must be answered today: well-formed requests.
const ANSWERED_TODAY: [&str; 7] = [
    "h-deep120",
    "h-noparams",
    "h-args",
    "h-name",
    "h-keys",
    "h-longname",
    "h-10mib",
];

/// Feeds every hostile line to a legacy stdio session of `example`, each followed by a normal
/// call that must get its exact answer; then checks no id was answered twice or answered
/// without being sent, the process is alive and its memory bounded.
fn hostile_stdio(example: &str) {
    let mut server = StdioServer::legacy(example);
    let baseline = server.rss_kib();
    let mut sent: HashSet<String> = HashSet::from(["0".to_string()]);
    for (i, (what, bytes)) in hostile_lines().into_iter().enumerate() {
        if let Some(id) = hostile_id(&bytes) {
            sent.insert(id);
        }
        server.send_raw(&bytes);
        let id = 1000 + i as i64;
        sent.insert(id.to_string());
        let (tool, arguments, text) = wire::normal_call(example);
        server.send(&call(id, tool, arguments));
        let answer = server
            .answer_within(&json!(id), Duration::from_secs(20))
            .unwrap_or_else(|| panic!("{example}: no answer to the call after {what}"));
        assert_eq!(wire::result_text(&answer), text, "after {what}");
        assert!(server.alive(), "{example} died after {what}");
    }
    server.drain(Duration::from_millis(300));
    // Answers with a null (or no) id answer lines whose id could not be read: any number.
    for (id, count) in server.answer_counts() {
        if id == "null" {
            continue;
        }
        assert_eq!(*count, 1, "{example}: id {id} answered {count} times");
        assert!(
            sent.contains(id),
            "{example}: answer to id {id}, never sent"
        );
    }
    for id in ANSWERED_TODAY {
        assert_eq!(
            server.answers_to(&json!(id)),
            1,
            "{example}: {id} answered once"
        );
    }
    let rss = server.rss_kib();
    assert!(
        rss < RSS_BOUND_KIB,
        "{example}: VmRSS {rss} KiB after the hostile lines (idle {baseline} KiB)"
    );
    assert!(
        server.from_server.iter().all(|m| m.get("id").is_none()),
        "{example} sent requests: {:?}",
        server.from_server
    );
}

/// The `id` of a hostile line, as compact JSON, when it has a readable string one (`"h-..."`,
/// within the line's first 80 bytes).
fn hostile_id(bytes: &[u8]) -> Option<String> {
    let marker = br#""id":"h-"#;
    let start = bytes[..bytes.len().min(80)]
        .windows(marker.len())
        .position(|w| w == marker)?
        + 5;
    let end = bytes[start + 1..].iter().position(|b| *b == b'"')? + start + 2;
    Some(String::from_utf8_lossy(&bytes[start..end]).into_owned())
}

#[test]
fn hostile_lines_bookshop_stdio() {
    hostile_stdio("bookshop");
}

#[test]
fn hostile_lines_files_stdio() {
    hostile_stdio("files");
}

#[test]
fn hostile_lines_bistro_stdio() {
    hostile_stdio("bistro");
}

#[test]
fn hostile_lines_conformance_stdio() {
    hostile_stdio("conformance");
}

/// Lines without a newline until their very end, 32 MiB and then 128 MiB: rmcp discards each
/// as it streams in (16 MiB cap), so the second, four times longer, costs no more memory than
/// the first (measured in a debug build: idle ~27 MiB, 67-86 MiB after any line over the cap,
/// whatever its length), and the next line is served.
#[test]
fn stdio_line_of_128_mib_is_not_buffered() {
    let mut server = StdioServer::legacy("bookshop");
    let chunk = vec![b'x'; 1 << 20];
    let mut after = Vec::new();
    for (i, mib) in [32, 128].into_iter().enumerate() {
        for _ in 0..mib {
            server.send_raw(&chunk);
        }
        server.send_raw(b"\n");
        server.normal_call_works("bookshop", i as i64 + 1);
        after.push(server.rss_kib());
    }
    assert!(
        after[1] < after[0] + 16 * 1024,
        "VmRSS {} KiB after a 32 MiB line, {} KiB after a 128 MiB one: lines are buffered",
        after[0],
        after[1]
    );
    assert!(after[1] < RSS_BOUND_KIB, "VmRSS {} KiB", after[1]);
}

/// A client that stops reading (closes the server's stdout): the server's next write fails and
/// it exits on its own, by exit code, not killed by SIGPIPE, and does not spin.
#[test]
fn stdio_closed_stdout_ends_the_server() {
    let mut child = std::process::Command::new(common::binary("bookshop"))
        .args(["--log-level", "error"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = serde_json::to_vec(&wire::initialize(1)).unwrap();
    lines.push(b'\n');
    let _ = stdin.write_all(&lines);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("the server kept running with its stdout closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.code().is_some(), "killed by a signal: {status}");
}

/// 2,000 requests written at once (tools/call, tools/list, ping, an unknown method): each gets
/// exactly one answer, the right one; memory stays bounded.
#[test]
fn stdio_flood_of_2000_pipelined_requests() {
    let mut server = StdioServer::legacy("bookshop");
    let mut batch = Vec::new();
    for id in 1..=2000i64 {
        let message = match id % 4 {
            0 => call(id, "search_books", json!({"query": "dune", "limit": 5})),
            1 => request(id, "tools/list", json!({})),
            2 => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
            _ => request(id, "no/such/method", json!({})),
        };
        batch.extend(serde_json::to_vec(&message).unwrap());
        batch.push(b'\n');
    }
    let start = Instant::now();
    server.send_raw(&batch);
    for id in 1..=2000i64 {
        let answer = server.answer(&json!(id));
        match id % 4 {
            0 => assert_eq!(
                wire::result_text(&answer),
                "Found 3 books matching 'dune' (showing up to 5)."
            ),
            1 => assert_eq!(answer["result"]["tools"].as_array().unwrap().len(), 5),
            2 => assert_eq!(answer["result"], json!({})),
            _ => assert_eq!(answer["error"]["code"], json!(-32601), "{answer}"),
        }
    }
    let elapsed = start.elapsed();
    server.drain(Duration::from_millis(300));
    for id in 1..=2000i64 {
        assert_eq!(server.answers_to(&json!(id)), 1, "id {id}");
    }
    server.normal_call_works("bookshop", 5000);
    let rss = server.rss_kib();
    assert!(rss < RSS_BOUND_KIB, "VmRSS {rss} KiB after the flood");
    assert!(
        elapsed < Duration::from_secs(30),
        "2,000 requests took {elapsed:?}"
    );
}

// ----- HTTP -----

/// Hostile POST bodies: each gets a 4xx (never a 5xx, never a dropped connection), and a normal
/// call after it gets its exact answer.
async fn hostile_http(example: &str) {
    let mut server = HttpServer::spawn(example).await;
    let baseline = server.rss_kib();
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("not JSON", b"this is not json".to_vec()),
        ("truncated", br#"{"jsonrpc":"2.0","id":1,"method":"#.to_vec()),
        ("invalid UTF-8", b"\xff\xfe\xfd".to_vec()),
        ("a number", b"42".to_vec()),
        ("null", b"null".to_vec()),
        ("an empty array", b"[]".to_vec()),
        (
            "a batch",
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
        ),
        ("an empty object", b"{}".to_vec()),
        ("100,000 nested arrays", deep_arrays().into_bytes()),
        ("100,000 nested objects", deep_objects().into_bytes()),
        (
            "100,000 nested arrays in a request",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}}}}}}}"#,
                deep_arrays()
            )
            .into_bytes(),
        ),
        (
            "a result for an id never sent",
            br#"{"jsonrpc":"2.0","id":424242,"result":{}}"#.to_vec(),
        ),
    ];
    for (what, body) in bodies {
        let reply = server.post(body, &[]).await;
        assert!(
            (400..500).contains(&reply.status),
            "{example}: {what} got {reply:?}"
        );
        server.normal_call_works(example).await;
        assert!(server.alive(), "{example} died after {what}");
    }
    // 10 MiB: over rmcp's 4 MiB cap, refused while it streams in.
    let port = server.port;
    let reply = tokio::task::spawn_blocking(move || post_10_mib(port))
        .await
        .unwrap();
    assert_eq!(
        status_of(&reply),
        413,
        "{}",
        String::from_utf8_lossy(&reply)
    );
    server.normal_call_works(example).await;
    let rss = server.rss_kib();
    assert!(
        rss < RSS_BOUND_KIB,
        "{example}: VmRSS {rss} KiB after the hostile bodies (idle {baseline} KiB)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_bookshop_http() {
    hostile_http("bookshop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_files_http() {
    hostile_http("files").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_bistro_http() {
    hostile_http("bistro").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_bodies_conformance_http() {
    hostile_http("conformance").await;
}

/// Sends `bytes` on a fresh connection, closes its sending side, and returns what the server
/// writes until it closes the connection or 5 s pass.
fn raw_exchange(port: u16, bytes: &[u8]) -> Vec<u8> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = stream.write_all(bytes);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    reply
}

/// POSTs a 10 MiB 2026-07-28 `tools/list` on a fresh connection, writing from one thread and
/// reading from another (the server answers before it has read the body, then closes); what
/// the server wrote.
fn post_10_mib(port: u16) -> Vec<u8> {
    let body = serde_json::to_vec(&modern(
        1,
        "tools/list",
        json!({"pad": "a".repeat(10 << 20)}),
    ))
    .unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = stream.try_clone().expect("clone the stream");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let write = std::thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes());
        let _ = writer.write_all(&body);
    });
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
    }
    let _ = write.join();
    reply
}

/// The status code of a raw HTTP reply (0 if the server wrote nothing).
fn status_of(reply: &[u8]) -> u16 {
    String::from_utf8_lossy(reply)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Malformed HTTP framing (garbage request line, a 1 MiB header, a Content-Length larger than
/// what follows, an unterminated chunked body, a negative Content-Length) never takes the
/// server down.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_http_framing_keeps_serving() {
    let mut server = HttpServer::spawn("bookshop").await;
    let port = server.port;
    let host = format!("Host: 127.0.0.1:{port}\r\n");
    let cases: Vec<(&str, Vec<u8>, Option<u16>)> = vec![
        ("garbage", b"\x16\x03\x01\x00\xff garbage\r\n\r\n".to_vec(), Some(400)),
        (
            "1 MiB header",
            format!(
                "POST /mcp HTTP/1.1\r\n{host}X-Big: {}\r\n\r\n",
                "a".repeat(1 << 20)
            )
            .into_bytes(),
            Some(431),
        ),
        (
            "Content-Length larger than the body, then close",
            format!("POST /mcp HTTP/1.1\r\n{host}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 99999999999\r\n\r\n{{\"jsonrpc\"")
                .into_bytes(),
            None,
        ),
        (
            "unterminated chunked body, then close",
            format!("POST /mcp HTTP/1.1\r\n{host}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{{\"jso\r\nffffffff\r\n")
                .into_bytes(),
            None,
        ),
        (
            "negative Content-Length",
            format!("POST /mcp HTTP/1.1\r\n{host}Content-Length: -1\r\n\r\n").into_bytes(),
            Some(400),
        ),
    ];
    for (what, bytes, status) in cases {
        let reply = tokio::task::spawn_blocking(move || raw_exchange(port, &bytes))
            .await
            .unwrap();
        if let Some(status) = status {
            assert_eq!(
                status_of(&reply),
                status,
                "{what}: {:?}",
                String::from_utf8_lossy(&reply)
            );
        }
        server.normal_call_works("bookshop").await;
        assert!(server.alive(), "died after {what}");
    }
    let rss = server.rss_kib();
    assert!(rss < RSS_BOUND_KIB, "VmRSS {rss} KiB");
}

/// Slowloris: 50 connections trickling a request header one byte per second, and 50 sending
/// whole headers but trickling a body, while normal calls are made for six seconds: every
/// normal call is answered (within 5 s, leaving room for a loaded CI machine; a call takes
/// milliseconds).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_does_not_stop_other_clients() {
    use tokio::io::AsyncWriteExt;
    let server = HttpServer::spawn("bookshop").await;
    let port = server.port;
    let header = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
    );
    let mut slow = Vec::new();
    for i in 0..100 {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        let header = header.clone();
        slow.push(tokio::spawn(async move {
            if i % 2 == 1 {
                // Whole header, then a body byte per second.
                let _ = stream.write_all(header.as_bytes()).await;
            }
            let trickle: &[u8] = if i % 2 == 0 {
                header.as_bytes()
            } else {
                b"{\"jsonrpc\":\"2.0\""
            };
            for byte in trickle {
                if stream.write_all(&[*byte]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }));
    }
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(6) {
        let call = Instant::now();
        server.normal_call_works("bookshop").await;
        assert!(
            call.elapsed() < Duration::from_secs(5),
            "a normal call took {:?} during the slowloris",
            call.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for task in slow {
        task.abort();
    }
    let rss = server.rss_kib();
    assert!(rss < RSS_BOUND_KIB, "VmRSS {rss} KiB");
}

/// 500 idle connections, then 500 concurrent stateless (2026-07-28) calls: every call gets its
/// exact answer, a normal call afterwards too, and memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flood_of_500_connections_and_500_concurrent_calls() {
    let mut server = HttpServer::spawn("bookshop").await;
    let port = server.port;
    let baseline = server.rss_kib();
    let mut idle = Vec::new();
    for _ in 0..500 {
        idle.push(
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .expect("connect"),
        );
    }
    server.normal_call_works("bookshop").await;
    let with_idle = server.rss_kib();
    // Released before the calls: 1,000 sockets at once could pass a default 1,024 file limit.
    drop(idle);
    let url = server.url();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..500i64 {
        let (client, url) = (server.client.clone(), url.clone());
        calls.spawn(async move {
            let message = modern(
                i,
                "tools/call",
                json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}}),
            );
            (i, wire::post_modern(&client, &url, &message).await)
        });
    }
    let mut answered = HashSet::new();
    while let Some(joined) = calls.join_next().await {
        let (i, reply) = joined.unwrap();
        let reply = reply.unwrap_or_else(|e| panic!("call {i}: {e}"));
        assert_eq!(reply.status, 200, "{reply:?}");
        let answer = reply.message();
        assert_eq!(answer["id"], json!(i));
        assert_eq!(
            wire::result_text(&answer),
            "Found 3 books matching 'dune' (showing up to 5)."
        );
        assert!(answered.insert(i));
    }
    assert_eq!(answered.len(), 500);
    server.normal_call_works("bookshop").await;
    assert!(server.alive());
    let rss = server.rss_kib();
    assert!(
        rss < RSS_BOUND_KIB,
        "VmRSS {rss} KiB after the flood (idle {baseline} KiB, with 500 idle connections {with_idle} KiB)"
    );
}

/// Resident memory of one idle legacy session of the debug-built bookshop (initialize +
/// initialized): 68.6 KiB with 200 sessions, 68.7 KiB with 1,000 (`session_memory`, debug
/// build, `--threads 1`; 69 KiB in release too, `runtime/README.md`).
const SESSION_KIB: u64 = 69;

/// What one connection of a flood may leave resident: hyper's buffers and its task, about
/// 27 KiB per open connection (measured above, module docs).
const CONNECTION_KIB: u64 = 27;

/// A flood of `initialize` (issue 33, item 8) against `--max-sessions 100
/// --session-idle-timeout 3s`: 2,000 requests from 100 connections at once (each its own
/// client, so its own keep-alive connection), three times:
///
/// 1. on an empty server: every request is answered (none reset or lost), exactly 100 get a
///    session (each its own id), all the others `503` with `Retry-After: 5`,
///    `application/json` and `{"jsonrpc":"2.0","id":<its id>,"error":{"code":-32000,"message":"Too many sessions; try again later"}}`;
/// 2. with the 100 sessions just used (a `tools/list` each): all 2,000 are refused so, and
///    refused before any session is built: the server logs nothing (rmcp used to build each
///    refused session, run its handshake, close it, and log an error, 2,000 lines);
/// 3. once the idle timeout passed, the sessions are gone (404) and the flood again gets
///    exactly 100 new sessions.
///
/// Memory stays bounded by the cap: after each flood `VmRSS` is at most what it was before
/// plus 2 x (100 x [`SESSION_KIB`] + 100 x [`CONNECTION_KIB`]), what the 100 admitted sessions
/// and the flood's 100 connections cost, with a margin of 100 % (+19.2 MiB: the third flood
/// follows 100 sessions closed, whose memory the allocator may keep). Measured (debug build,
/// idle ~32 MiB): +8.7 to +12 MiB after the first two floods, +10 to +12.8 MiB after the
/// third; a refused session kept would add 69 KiB, 1,900 of them 128 MiB per flood. (When every
/// refused session was built and closed: +17.5 to +21 MiB, and a flood took 1.3-1.6 s instead
/// of 0.3-0.8 s; the log check above is what fails then.)
/// About 5 s, 3.5 s of it waiting out the idle timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flood_of_initialize_holds_the_session_cap_and_the_idle_timeout() {
    const CAP: usize = 100;
    const CONNECTIONS: usize = 100;
    const FLOOD: usize = 2000;
    let log = std::env::temp_dir().join(format!("mcpgen-flood-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let mut server = HttpServer::spawn_logging(
        "bookshop",
        &[
            "--max-sessions",
            &CAP.to_string(),
            "--session-idle-timeout",
            "3s",
        ],
        Some(&log),
    )
    .await;
    server.normal_call_works("bookshop").await;
    let baseline = server.rss_kib();
    let bound = baseline + 2 * (CAP as u64 * SESSION_KIB + CONNECTIONS as u64 * CONNECTION_KIB);
    let url = server.url();

    // One flood: the sessions it got, after checking every answer.
    let flood = |wave: i64| {
        let url = url.clone();
        async move {
            let start = Instant::now();
            let mut connections = tokio::task::JoinSet::new();
            for c in 0..CONNECTIONS {
                let url = url.clone();
                connections.spawn(async move {
                    let client = wire::loopback_client();
                    let mut replies = Vec::new();
                    for i in (c..FLOOD).step_by(CONNECTIONS) {
                        let id = wave * 100_000 + i as i64;
                        let message = serde_json::to_vec(&wire::initialize(id)).unwrap();
                        let reply = wire::post(&client, &url, message, &[])
                            .await
                            .unwrap_or_else(|e| panic!("initialize {id} unanswered: {e}"));
                        replies.push((id, reply));
                    }
                    replies
                });
            }
            let mut sessions = Vec::new();
            let mut refused = 0;
            while let Some(joined) = connections.join_next().await {
                for (id, reply) in joined.unwrap() {
                    match reply.status {
                        200 => {
                            let answer = reply.message();
                            assert_eq!(answer["id"], json!(id));
                            assert_eq!(answer["result"]["protocolVersion"], json!("2025-11-25"));
                            sessions.push(reply.session.expect("Mcp-Session-Id"));
                        }
                        503 => {
                            assert_eq!(reply.retry_after.as_deref(), Some("5"), "{reply:?}");
                            assert_eq!(reply.content_type, "application/json");
                            assert_eq!(
                                reply.message(),
                                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "Too many sessions; try again later"}})
                            );
                            refused += 1;
                        }
                        _ => panic!("initialize {id}: {reply:?}"),
                    }
                }
            }
            assert_eq!(sessions.len() + refused, FLOOD);
            eprintln!(
                "flood {wave}: {} sessions, {refused} refused, in {:?}",
                sessions.len(),
                start.elapsed()
            );
            sessions
        }
    };
    let in_session = |session: &str| {
        vec![
            ("Mcp-Session-Id", session.to_string()),
            ("MCP-Protocol-Version", "2025-11-25".to_string()),
        ]
    };
    let list = request(5, "tools/list", json!({}));
    let list_in = async |session: &str| {
        let headers = in_session(session);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        server.post_json(&list, &headers).await
    };

    let sessions = flood(1).await;
    assert_eq!(sessions.len(), CAP);
    assert_eq!(sessions.iter().collect::<HashSet<_>>().len(), CAP);
    let after_first = server.rss_kib();
    // Each session used: the idle timeout (3 s) counts from here, the second flood takes
    // well under a second.
    for session in &sessions {
        let reply = list_in(session).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(
            reply.message()["result"]["tools"].as_array().map(Vec::len),
            Some(5)
        );
    }
    // At the cap, a whole flood is refused, and no session is built for it.
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(flood(2).await, Vec::<String>::new());
    let after_second = server.rss_kib();
    let logged_during = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<&str> = logged_during[logged.len()..].lines().collect();
    assert_eq!(
        (lines.len(), lines.first()),
        (0, None),
        "lines the server logged during the second flood, and the first"
    );

    // The idle timeout ends every session.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    for session in &sessions {
        let reply = list_in(session).await;
        assert_eq!(reply.status, 404, "{reply:?}");
    }
    let again = flood(3).await;
    assert_eq!(again.len(), CAP);
    assert!(again.iter().all(|session| !sessions.contains(session)));
    server.normal_call_works("bookshop").await;
    assert!(server.alive());
    let after_third = server.rss_kib();
    eprintln!(
        "VmRSS before {baseline} KiB, after the floods {after_first}, {after_second}, {after_third} KiB (bound {bound} KiB)"
    );
    for (when, rss) in [
        ("the first flood", after_first),
        ("the second", after_second),
        ("the third", after_third),
    ] {
        assert!(
            rss <= bound,
            "VmRSS {rss} KiB after {when} (before {baseline} KiB, bound {bound} KiB; after the floods: {after_first}, {after_second}, {after_third} KiB)"
        );
    }
    let _ = std::fs::remove_file(&log);
}

// ----- forged requestState -----

/// Flips one character in the middle of a sealed token.
fn tamper(state: &str) -> String {
    let mut chars: Vec<char> = state.chars().collect();
    let i = chars.len() / 2;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

/// The frozen answer to a bad `requestState`.
fn invalid_state(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {
        "code": -32602,
        "message": "Invalid or expired requestState",
        "data": {"reason": "invalid_request_state"}
    }})
}

/// Forged strings an attacker might send as `requestState`.
fn forged_strings(genuine: &str) -> Vec<String> {
    let mut forged = vec![
        String::new(),
        "garbage".into(),
        "v1.".into(),
        "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA".into(),
        "v2.".to_string() + &genuine[3..],
        tamper(genuine),
        format!("{genuine}A"),
        genuine[..genuine.len() - 1].to_string(),
        genuine.to_uppercase(),
        "\u{0}".into(),
        "é".repeat(1000),
        "v1.".to_string() + &"A".repeat(100_000),
    ];
    // Random printable strings from a fixed seed.
    let mut seed: u64 = 0x5eed;
    for _ in 0..20 {
        let len = (seed % 200) as usize;
        let s: String = (0..len)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                char::from(b' ' + ((seed >> 33) % 95) as u8)
            })
            .collect();
        forged.push(s);
    }
    forged
}

/// The params of a 2026-07-28 `order_book` call for Neuromancer (which asks a question).
fn order_neuromancer(state: Option<&str>, answers: Option<Value>) -> Value {
    let mut params = json!({"name": "order_book", "arguments": {"title": "Neuromancer"}});
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    if let Some(answers) = answers {
        params["inputResponses"] = answers;
    }
    params
}

/// The accepted answer to the backorder question, keyed as the server asked it.
fn accepted(first_round: &Value) -> Value {
    let key = first_round["result"]["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("one input request");
    json!({key: {"action": "accept", "content": {"confirm": true}}})
}

/// On a tool that asks (order_book for a title out of stock), every forged string is the frozen
/// -32602, and the genuine state still completes the call.
#[test]
fn forged_request_state_on_an_asking_tool_stdio() {
    let mut server = StdioServer::spawn("bookshop", &[]);
    server.send(&modern(1, "tools/call", order_neuromancer(None, None)));
    let first = server.answer(&json!(1));
    assert_eq!(
        first["result"]["resultType"],
        json!("input_required"),
        "{first}"
    );
    let genuine = first["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let answers = accepted(&first);
    for (i, forged) in forged_strings(&genuine).iter().enumerate() {
        let id = 100 + i as i64;
        server.send(&modern(
            id,
            "tools/call",
            order_neuromancer(Some(forged), Some(answers.clone())),
        ));
        assert_eq!(server.answer(&json!(id)), invalid_state(id), "{forged:?}");
    }
    server.send(&modern(
        2,
        "tools/call",
        order_neuromancer(Some(&genuine), Some(answers)),
    ));
    let done = server.answer(&json!(2));
    assert_eq!(
        wire::result_text(&done),
        "Backordered 'Neuromancer'; it ships in 2-3 weeks."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_request_state_on_an_asking_tool_http() {
    let server = HttpServer::spawn("bookshop").await;
    let first = server
        .post_modern(&modern(1, "tools/call", order_neuromancer(None, None)))
        .await
        .message();
    let genuine = first["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let answers = accepted(&first);
    for forged in forged_strings(&genuine) {
        let reply = server
            .post_modern(&modern(
                3,
                "tools/call",
                order_neuromancer(Some(&forged), Some(answers.clone())),
            ))
            .await;
        // The HTTP status (400 for -32602 at 2026-07-28) is checked by `item2_`.
        assert_eq!(reply.message(), invalid_state(3), "{forged:?}: {reply:?}");
    }
    let done = server
        .post_modern(&modern(
            2,
            "tools/call",
            order_neuromancer(Some(&genuine), Some(answers)),
        ))
        .await
        .message();
    assert_eq!(
        wire::result_text(&done),
        "Backordered 'Neuromancer'; it ships in 2-3 weeks."
    );
}

/// Item 2: forged, foreign (another tool's) and non-string `requestState` on tools that ask
/// nothing, or on a round that would need none, are the frozen -32602 before anything runs;
/// `null` counts as absent.
fn item2_cases(genuine: &str) -> Vec<(Value, Value)> {
    let search = |state: Value| json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}, "requestState": state});
    let in_stock = |state: Value| json!({"name": "order_book", "arguments": {"title": "Dune"}, "requestState": state});
    let mut cases = vec![
        search(json!(genuine)),
        search(json!(tamper(genuine))),
        search(json!("garbage")),
        search(json!(42)),
        search(json!(true)),
        search(json!({})),
        search(json!([genuine])),
        in_stock(json!(genuine)),
        in_stock(json!("garbage")),
        order_neuromancer(None, None),
    ];
    cases.last_mut().unwrap()["requestState"] = json!(7);
    cases.into_iter().map(|c| (c, Value::Null)).collect()
}

#[test]
fn item2_request_state_verified_before_anything_runs_stdio() {
    let mut server = StdioServer::spawn("bookshop", &[]);
    server.send(&modern(1, "tools/call", order_neuromancer(None, None)));
    let genuine = server.answer(&json!(1))["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    for (i, (params, _)) in item2_cases(&genuine).into_iter().enumerate() {
        let id = 100 + i as i64;
        server.send(&modern(id, "tools/call", params.clone()));
        assert_eq!(server.answer(&json!(id)), invalid_state(id), "{params}");
    }
    // `null` is absent: the call runs.
    server.send(&modern(
        2,
        "tools/call",
        json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}, "requestState": null}),
    ));
    assert_eq!(
        wire::result_text(&server.answer(&json!(2))),
        "Found 3 books matching 'dune' (showing up to 5)."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item2_request_state_verified_before_anything_runs_http() {
    let server = HttpServer::spawn("bookshop").await;
    let first = server
        .post_modern(&modern(1, "tools/call", order_neuromancer(None, None)))
        .await
        .message();
    let genuine = first["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    for (params, _) in item2_cases(&genuine) {
        let reply = server
            .post_modern(&modern(3, "tools/call", params.clone()))
            .await;
        assert_eq!(reply.status, 400, "{params}: {reply:?}");
        assert_eq!(reply.message(), invalid_state(3), "{params}");
    }
}

/// Two 32-byte test secrets (base64) for `MCP_REQUEST_STATE_KEYS`.
const KEY_A: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci1vbmUtMzItYnl0ZXMhIQ==";
const KEY_B: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci10d28tMzItYnl0ZXMhIQ==";

/// A genuine `requestState` from `server` (the first round of ordering Neuromancer).
fn mint_state(server: &mut StdioServer) -> String {
    server.send(&modern(1, "tools/call", order_neuromancer(None, None)));
    let first = server.answer(&json!(1));
    first["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("a requestState: {first}"))
        .to_string()
}

/// Item 2 with states that open nowhere but where they were made, or no longer: an expired
/// one, one sealed with another key, one for another audience, each sent to a tool that asks
/// nothing, are the frozen -32602.
#[test]
fn item2_expired_and_foreign_state_on_a_tool_without_questions_stdio() {
    let search = |state: &str| {
        modern(
            2,
            "tools/call",
            json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}, "requestState": state}),
        )
    };
    let mut short = StdioServer::spawn_env(
        "bookshop",
        &[
            ("MCP_REQUEST_STATE_KEYS", KEY_A),
            ("MCP_REQUEST_STATE_TTL_SECS", "1"),
        ],
    );
    let expiring = mint_state(&mut short);
    std::thread::sleep(Duration::from_millis(1300));
    short.send(&search(&expiring));
    assert_eq!(short.answer(&json!(2)), invalid_state(2), "expired");
    let mut minter = StdioServer::spawn_env("bookshop", &[("MCP_REQUEST_STATE_KEYS", KEY_A)]);
    let state = mint_state(&mut minter);
    for (what, env) in [
        ("another key", vec![("MCP_REQUEST_STATE_KEYS", KEY_B)]),
        (
            "another audience",
            vec![
                ("MCP_REQUEST_STATE_KEYS", KEY_A),
                ("MCP_REQUEST_STATE_AUDIENCE", "Elsewhere"),
            ],
        ),
    ] {
        let mut other = StdioServer::spawn_env("bookshop", &env);
        other.send(&search(&state));
        assert_eq!(other.answer(&json!(2)), invalid_state(2), "{what}");
    }
    // Where it was made, it is still another tool's state.
    minter.send(&search(&state));
    assert_eq!(minter.answer(&json!(2)), invalid_state(2), "another tool");
}

/// Item 2 on `prompts/get` and `resources/read` (the conformance example): a forged or
/// non-string `requestState` is the frozen -32602, for a prompt that asks nothing, one that
/// asks, and a static resource.
#[test]
fn item2_request_state_on_prompts_and_resources_stdio() {
    let mut server = StdioServer::spawn("conformance", &[]);
    let cases = [
        (
            "prompts/get",
            json!({"name": "test_simple_prompt", "requestState": "garbage"}),
        ),
        (
            "prompts/get",
            json!({"name": "test_simple_prompt", "requestState": 42}),
        ),
        (
            "prompts/get",
            json!({"name": "test_input_required_result_prompt", "requestState": "garbage"}),
        ),
        (
            "resources/read",
            json!({"uri": "test://static-text", "requestState": "garbage"}),
        ),
        (
            "resources/read",
            json!({"uri": "test://static-text", "requestState": 42}),
        ),
    ];
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let id = 10 + i as i64;
        server.send(&modern(id, method, params.clone()));
        assert_eq!(
            server.answer(&json!(id)),
            invalid_state(id),
            "{method} {params}"
        );
    }
}

// ----- out-of-order input (legacy stdio) -----

/// A `tools/call` before `initialize` gets one error (-32602, as from the Python SDK), `ping`
/// is answered, and the handshake then works as usual.
#[test]
fn out_of_order_call_before_initialize() {
    let mut server = StdioServer::spawn("bookshop", &[]);
    server.send(&call(
        1,
        "search_books",
        json!({"query": "dune", "limit": 5}),
    ));
    let answer = server.answer(&json!(1));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(
        server.answer(&json!(2)),
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    server.send(&wire::initialize(3));
    let answer = server.answer(&json!(3));
    assert_eq!(
        answer["result"]["protocolVersion"],
        json!("2025-11-25"),
        "{answer}"
    );
    server.send(&wire::initialized());
    server.normal_call_works("bookshop", 4);
    server.drain(Duration::from_millis(200));
    for id in 1..=4 {
        assert_eq!(server.answers_to(&json!(id)), 1, "id {id}");
    }
}

/// A second `initialize` and a second `notifications/initialized` on a legacy session: the
/// second `initialize` gets one answer (the same result, as from the Python SDK), the
/// notification none, and the session keeps serving.
#[test]
fn out_of_order_duplicate_handshake() {
    let mut server = StdioServer::spawn("bookshop", &[]);
    server.send(&wire::initialize(1));
    let first = server.answer(&json!(1));
    server.send(&wire::initialized());
    server.send(&wire::initialize(2));
    let second = server.answer(&json!(2));
    assert_eq!(second["result"], first["result"]);
    server.send(&wire::initialized());
    server.send(&wire::initialized());
    server.normal_call_works("bookshop", 3);
    assert_eq!(
        server.drain(Duration::from_millis(300)),
        Vec::<Value>::new()
    );
    for id in 1..=3 {
        assert_eq!(server.answers_to(&json!(id)), 1, "id {id}");
    }
    assert!(server.from_server.is_empty(), "{:?}", server.from_server);
}

/// Answers to an elicitation with wrong ids (another number, one never sent, an error for an id
/// never sent) are ignored: the call waits, and the answer with the right id completes it with
/// the exact text. A malformed answer with the right id fails the call (one answer, `isError`).
#[test]
fn out_of_order_elicitation_answers_with_wrong_ids() {
    let mut server = StdioServer::legacy("bookshop");
    server.send(&call(1, "order_book", json!({"title": "Neuromancer"})));
    let asked = server.server_request();
    assert_eq!(asked["method"], json!("elicitation/create"));
    let eid = asked["id"].as_i64().expect("numeric id");
    let accept = json!({"action": "accept", "content": {"confirm": true}});
    server.send(&json!({"jsonrpc": "2.0", "id": eid + 100, "result": accept}));
    server.send(&json!({"jsonrpc": "2.0", "id": "nobody", "result": accept}));
    server.send(&json!({"jsonrpc": "2.0", "id": 99999, "error": {"code": -1, "message": "x"}}));
    assert_eq!(
        server.answer_within(&json!(1), Duration::from_millis(500)),
        None,
        "the call must wait for the right answer"
    );
    server.normal_call_works("bookshop", 2);
    server.send(&json!({"jsonrpc": "2.0", "id": eid, "result": accept}));
    assert_eq!(
        wire::result_text(&server.answer(&json!(1))),
        "Backordered 'Neuromancer'; it ships in 2-3 weeks."
    );
    // The same answer again, now for a request already answered: ignored.
    server.send(&json!({"jsonrpc": "2.0", "id": eid, "result": accept}));
    // A malformed answer.
    server.send(&call(3, "order_book", json!({"title": "Neuromancer"})));
    let asked = server.server_request();
    server.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "bogus"}}));
    let failed = server.answer(&json!(3));
    assert_eq!(failed["result"]["isError"], json!(true), "{failed}");
    // The cause is named, as the Python SDK names it (the answer is not repeated back).
    assert_eq!(
        failed["result"]["content"][0]["text"],
        json!(
            "Error executing tool order_book: Resolver 'confirm_backorder': received an invalid elicitation response"
        )
    );
    server.normal_call_works("bookshop", 4);
    // Well-formed answers whose content violates the form, or is missing.
    for (id, content, text) in [
        (
            5,
            json!({"action": "accept", "content": {"confirm": "yes"}}),
            "Error executing tool order_book: Resolver 'confirm_backorder': Received an accepted elicitation whose content does not match the requested schema: /confirm (type): \"yes\" is not of type \"boolean\"",
        ),
        (
            6,
            json!({"action": "accept"}),
            "Error executing tool order_book: Resolver 'confirm_backorder': Received an accepted elicitation with no content",
        ),
    ] {
        server.send(&call(id, "order_book", json!({"title": "Neuromancer"})));
        let asked = server.server_request();
        server.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": content}));
        let failed = server.answer(&json!(id));
        assert_eq!(failed["result"]["isError"], json!(true), "{failed}");
        assert_eq!(failed["result"]["content"][0]["text"], json!(text));
    }
    server.drain(Duration::from_millis(300));
    for id in 1..=6 {
        assert_eq!(server.answers_to(&json!(id)), 1, "id {id}");
    }
}

/// The same out-of-order input in a legacy HTTP session: a call before
/// `notifications/initialized` is served, a second `initialize` answered once with the same
/// result, a response for an id never sent and a second `notifications/initialized` accepted
/// (202, no body), and the session keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_order_legacy_http_session() {
    let server = HttpServer::spawn("bookshop").await;
    let first = server.post_json(&wire::initialize(1), &[]).await;
    assert_eq!(first.status, 200, "{first:?}");
    let session = first.session.clone().expect("Mcp-Session-Id");
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let search = || call(2, "search_books", json!({"query": "dune", "limit": 5}));
    let reply = server.post_json(&search(), &headers).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = reply.message();
    assert_eq!(answer["id"], json!(2));
    assert_eq!(
        wire::result_text(&answer),
        "Found 3 books matching 'dune' (showing up to 5)."
    );
    for notification in [
        wire::initialized(),
        json!({"jsonrpc": "2.0", "id": 4242, "result": {}}),
        wire::initialized(),
    ] {
        let reply = server.post_json(&notification, &headers).await;
        assert_eq!(reply.status, 202, "{notification}: {reply:?}");
        assert!(reply.body.is_empty(), "{notification}: {reply:?}");
    }
    let reply = server.post_json(&wire::initialize(3), &headers).await;
    let again = reply.message();
    assert_eq!(again["id"], json!(3));
    assert_eq!(again["result"], first.message()["result"]);
    let reply = server.post_json(&search(), &headers).await;
    assert_eq!(
        wire::result_text(&reply.message()),
        "Found 3 books matching 'dune' (showing up to 5)."
    );
}

// ----- item 3: JSON-RPC 2.0 to the letter -----

/// `{"jsonrpc":"2.0","id":null,"error":{"code":<code>,...}}` with any message.
fn assert_null_id_error(answer: &Value, code: i64, what: &str) {
    assert_eq!(answer["jsonrpc"], json!("2.0"), "{what}: {answer}");
    assert_eq!(
        answer.get("id"),
        Some(&Value::Null),
        "{what}: id null: {answer}"
    );
    assert_eq!(answer["error"]["code"], json!(code), "{what}: {answer}");
    assert!(answer["error"]["message"].is_string(), "{what}: {answer}");
}

/// Lines that are not JSON (or JSON serde_json cannot parse: nesting past its limit).
fn not_json() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("not JSON", b"this is not json".to_vec()),
        (
            "truncated",
            br#"{"jsonrpc":"2.0","id":1,"method":"#.to_vec(),
        ),
        ("invalid UTF-8 bytes", b"\xff\xfe\xfd".to_vec()),
        (
            "trailing garbage",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#.to_vec(),
        ),
        ("100,000 nested arrays", deep_arrays().into_bytes()),
    ]
}

/// Non-objects and batches.
fn not_a_request() -> Vec<(&'static str, &'static str)> {
    vec![
        ("a number", "42"),
        ("a string", r#""ping""#),
        ("null", "null"),
        ("an empty array", "[]"),
        ("a batch", r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
    ]
}

/// Requests with missing or ill-typed params, each with the field its error must name.
fn bad_params(modern_era: bool) -> Vec<(Value, &'static str)> {
    let wrap = |id: i64, method: &str, params: Option<Value>| {
        let mut message = match params {
            Some(params) if modern_era => modern(id, method, params),
            Some(params) => request(id, method, params),
            None => json!({"jsonrpc": "2.0", "id": id, "method": method}),
        };
        if modern_era && message.get("params").is_none() {
            message["params"] = modern(0, method, json!({}))["params"].clone();
        }
        message
    };
    vec![
        (wrap(11, "tools/call", Some(json!({}))), "name"),
        (
            wrap(12, "tools/call", Some(json!({"name": 5, "arguments": {}}))),
            "name",
        ),
        (
            wrap(
                13,
                "tools/call",
                Some(json!({"name": "search_books", "arguments": [1]})),
            ),
            "arguments",
        ),
        (
            wrap(
                14,
                "tools/call",
                Some(json!({"name": "search_books", "arguments": "x"})),
            ),
            "arguments",
        ),
    ]
}

#[test]
fn item3_parse_error_stdio() {
    let mut server = StdioServer::legacy("bookshop");
    for (what, bytes) in not_json() {
        server.send_raw(&line(bytes));
        let answer = server
            .answer_within(&Value::Null, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{what}: no -32700"));
        assert_null_id_error(&answer, -32700, what);
    }
    server.normal_call_works("bookshop", 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item3_parse_error_http() {
    let server = HttpServer::spawn("bookshop").await;
    for (what, bytes) in not_json() {
        let reply = server.post(bytes, &[]).await;
        assert_eq!(reply.status, 400, "{what}: {reply:?}");
        assert!(
            reply.content_type.starts_with("application/json"),
            "{what}: {reply:?}"
        );
        assert_null_id_error(&reply.message(), -32700, what);
    }
}

#[test]
fn item3_invalid_request_stdio() {
    let mut server = StdioServer::legacy("bookshop");
    for (what, text) in not_a_request() {
        server.send_raw(&line(text));
        let answer = server
            .answer_within(&Value::Null, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("{what}: no -32600 with id null"));
        assert_null_id_error(&answer, -32600, what);
    }
    server.normal_call_works("bookshop", 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item3_invalid_request_http() {
    let server = HttpServer::spawn("bookshop").await;
    for (what, text) in not_a_request() {
        let reply = server.post(text, &[]).await;
        assert_eq!(reply.status, 400, "{what}: {reply:?}");
        assert_null_id_error(&reply.message(), -32600, what);
    }
}

/// Asserts `answer` is -32602 for `id` with a message naming `field`.
fn assert_invalid_params(answer: &Value, id: &Value, field: &str, request: &Value) {
    assert_eq!(&answer["id"], id, "{request} -> {answer}");
    assert_eq!(
        answer["error"]["code"],
        json!(-32602),
        "{request} -> {answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(field),
        "the message names `{field}`: {request} -> {answer}"
    );
}

#[test]
fn item3_invalid_params_stdio() {
    let mut legacy = StdioServer::legacy("bookshop");
    for (message, field) in bad_params(false) {
        legacy.send(&message);
        let answer = legacy.answer(&message["id"]);
        assert_invalid_params(&answer, &message["id"], field, &message);
    }
    let mut fresh = StdioServer::spawn("bookshop", &[]);
    for (message, field) in bad_params(true) {
        fresh.send(&message);
        let answer = fresh.answer(&message["id"]);
        assert_invalid_params(&answer, &message["id"], field, &message);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item3_invalid_params_http() {
    let server = HttpServer::spawn("bookshop").await;
    for (message, field) in bad_params(true) {
        let reply = server.post_modern(&message).await;
        assert_eq!(reply.status, 400, "{message}: {reply:?}");
        assert_invalid_params(&reply.message(), &message["id"], field, &message);
    }
}

/// Item 3 on `prompts/get` and `resources/read` (the conformance example), both eras:
/// missing or ill-typed `name`, `uri` and `arguments` are -32602 naming the field.
#[test]
fn item3_invalid_params_prompts_and_resources_stdio() {
    let cases = [
        ("prompts/get", json!({}), "name"),
        ("prompts/get", json!({"name": 5}), "name"),
        (
            "prompts/get",
            json!({"name": "test_simple_prompt", "arguments": [1]}),
            "arguments",
        ),
        ("resources/read", json!({}), "uri"),
        ("resources/read", json!({"uri": 5}), "uri"),
    ];
    for modern_era in [false, true] {
        let mut server = if modern_era {
            StdioServer::spawn("conformance", &[])
        } else {
            StdioServer::legacy("conformance")
        };
        for (i, (method, params, field)) in cases.iter().enumerate() {
            let id = json!(10 + i as i64);
            let message = if modern_era {
                modern(id.clone(), method, params.clone())
            } else {
                request(id.clone(), method, params.clone())
            };
            server.send(&message);
            let answer = server.answer(&id);
            assert_invalid_params(&answer, &id, field, &message);
        }
    }
}

/// A request with invalid UTF-8 (and one with a lone surrogate escape) inside a string value.
fn utf8_requests() -> Vec<(&'static str, Vec<u8>)> {
    let mut bad = br#"{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"search_books","arguments":{"query":"#.to_vec();
    bad.extend_from_slice(b"\"\xff\xfe\",\"limit\":1}}}");
    let surrogate = br#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"search_books","arguments":{"query":"\ud800","limit":1}}}"#.to_vec();
    vec![("invalid UTF-8", bad), ("a lone surrogate", surrogate)]
}

/// Answered: a result (the replacement character in the text, as from the Python SDK), an
/// error for the request's id, or -32700 with id null.
fn assert_utf8_answer(answer: &Value, id: i64, what: &str) {
    assert_well_formed(answer);
    if answer["id"] == json!(id) {
        return;
    }
    assert_null_id_error(answer, -32700, what);
}

fn assert_well_formed(answer: &Value) {
    wire::assert_well_formed_response(answer);
}

#[test]
fn item3_invalid_utf8_answered_stdio() {
    let mut server = StdioServer::legacy("bookshop");
    for (i, (what, bytes)) in utf8_requests().into_iter().enumerate() {
        let id = 21 + i as i64;
        server.send_raw(&line(bytes));
        server.send(&json!({"jsonrpc": "2.0", "id": 100 + id, "method": "ping"}));
        server.answer(&json!(100 + id));
        // Answered before the ping that follows it: with its id, or -32700 with a null id.
        let answer = server
            .answer_within(&json!(id), Duration::from_millis(300))
            .or_else(|| server.answer_within(&Value::Null, Duration::from_millis(300)))
            .unwrap_or_else(|| panic!("{what}: the request got no answer"));
        assert_utf8_answer(&answer, id, what);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item3_invalid_utf8_answered_http() {
    let server = HttpServer::spawn("bookshop").await;
    let session = server.legacy_session().await;
    for (i, (what, bytes)) in utf8_requests().into_iter().enumerate() {
        let reply = server
            .post(
                bytes,
                &[
                    ("Mcp-Session-Id", session.as_str()),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
            )
            .await;
        assert!(
            reply.status == 200 || reply.status == 400,
            "{what}: {reply:?}"
        );
        assert_utf8_answer(&reply.message(), 21 + i as i64, what);
    }
}

// ----- item 4: HTTP per RFC 9110/9112 and the Streamable HTTP transport -----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item4_two_host_headers_get_400() {
    let server = HttpServer::spawn("bookshop").await;
    let port = server.port;
    let body = serde_json::to_string(&wire::initialize(1)).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let reply = tokio::task::spawn_blocking(move || raw_exchange(port, request.as_bytes()))
        .await
        .unwrap();
    assert_eq!(
        status_of(&reply),
        400,
        "{}",
        String::from_utf8_lossy(&reply)
    );
    server.normal_call_works("bookshop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item4_delete_of_an_unknown_session_gets_404() {
    let server = HttpServer::spawn("bookshop").await;
    let response = server
        .client
        .delete(server.url())
        .header("Mcp-Session-Id", "no-such-session")
        .header("MCP-Protocol-Version", "2025-11-25")
        .send()
        .await
        .expect("DELETE answered");
    assert_eq!(response.status().as_u16(), 404);
    server.normal_call_works("bookshop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item4_accept_any_is_acceptable() {
    let server = HttpServer::spawn("bookshop").await;
    let message = modern(
        1,
        "tools/call",
        json!({"name": "search_books", "arguments": {"query": "dune", "limit": 5}}),
    );
    let response = server
        .client
        .post(server.url())
        .header("Content-Type", "application/json")
        .header("Accept", "*/*")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "search_books")
        .body(serde_json::to_vec(&message).unwrap())
        .send()
        .await
        .expect("POST answered");
    assert_eq!(response.status().as_u16(), 200);
}

// ----- item 5: bounded resources -----

/// Closing stdin while an elicitation is pending: the server exits within 1 s.
#[test]
fn item5_stdin_close_with_a_pending_elicitation_exits_within_1_s() {
    let mut server = StdioServer::legacy("bookshop");
    server.send(&call(1, "order_book", json!({"title": "Neuromancer"})));
    let asked = server.server_request();
    assert_eq!(asked["method"], json!("elicitation/create"));
    let start = Instant::now();
    server.close_stdin();
    let exit = server.wait_exit(Duration::from_secs(5));
    assert_eq!(exit, Some(Some(0)), "exit code within 5 s");
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "exited after {:?}",
        start.elapsed()
    );
}

/// `--max-sessions 3`: a fourth legacy session gets 503, the three keep working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn item5_max_sessions_cap_gives_503() {
    let server = HttpServer::spawn_with("bookshop", &["--max-sessions", "3"]).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(server.legacy_session().await);
    }
    let reply = server.post_json(&wire::initialize(9), &[]).await;
    assert_eq!(reply.status, 503, "{reply:?}");
    for session in &sessions {
        let reply = server
            .post_json(
                &call(5, "search_books", json!({"query": "dune", "limit": 5})),
                &[
                    ("Mcp-Session-Id", session.as_str()),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
            )
            .await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert_eq!(
            wire::result_text(&reply.message()),
            "Found 3 books matching 'dune' (showing up to 5)."
        );
    }
}

// ----- fuzz -----

mod fuzz {
    //! A bounded fuzz run over the request path: proptest generates JSON-RPC-ish lines
    //! (methods the server implements and others, params of every shape, ids of every type,
    //! responses and notifications, raw bytes) and feeds them to one running server per era
    //! over stdio, and to one over HTTP. Every request with an integer or string id must get
    //! exactly one well-formed answer with that id, nothing may answer an id that was never
    //! sent, and the process stays up. Failures print the generated input (no shrinking: the
    //! server's state carries over from case to case).

    use super::*;
    use proptest::{prelude::*, strategy::ValueTree, test_runner::TestRunner};

    const METHODS: [&str; 18] = [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "completion/complete",
        "logging/setLevel",
        "resources/subscribe",
        "server/discover",
        "subscriptions/listen",
        "notifications/initialized",
        "notifications/roots/list_changed",
        "tools/CALL",
        "",
    ];

    const TOOLS: [&str; 6] = [
        "search_books",
        "add_book",
        "reserve_book",
        "order_book",
        "recommend_book",
        "nope",
    ];

    /// Any JSON value, a few levels deep.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| serde_json::Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or(Value::Null)),
            ".{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map("[a-z_]{0,8}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Params: plausible shapes (a tool name and arguments, a URI, a cursor, a
    /// `requestState`, answers, the envelope), any object, or none; with `any_shape` also any
    /// JSON value at all (an array, a string, `null`).
    fn params(any_shape: bool) -> BoxedStrategy<Option<Value>> {
        let object = prop::collection::btree_map("[a-z_]{0,8}", any_json(), 0..4)
            .prop_map(|m| Some(Value::Object(m.into_iter().collect())));
        let plausible = (
            prop::sample::select(TOOLS.to_vec()),
            prop_oneof![
                Just(json!({"query": "dune", "limit": 5})),
                Just(json!({"title": "Dune"})),
                Just(json!({"title": "Neuromancer"})),
                Just(json!({"genre": "scifi"})),
                any_json(),
            ],
            prop::option::of(any_json()),
            prop::option::of(any_json()),
            any::<bool>(),
        )
            .prop_map(|(name, arguments, state, answers, envelope)| {
                let mut p = json!({"name": name, "arguments": arguments, "uri": "file:///x", "cursor": "c"});
                if let Some(state) = state {
                    p["requestState"] = state;
                }
                if let Some(answers) = answers {
                    p["inputResponses"] = answers;
                }
                if envelope {
                    p["_meta"] = modern(0, "x", json!({}))["params"]["_meta"].clone();
                }
                Some(p)
            });
        if any_shape {
            prop_oneof![
                1 => Just(None),
                1 => object,
                2 => any_json().prop_map(Some),
                4 => plausible,
            ]
            .boxed()
        } else {
            prop_oneof![1 => Just(None), 1 => object, 4 => plausible].boxed()
        }
    }

    /// What an id field holds.
    #[derive(Debug, Clone)]
    enum Id {
        /// A fresh integer or string id: must be answered exactly once.
        Fresh(bool),
        /// `null`, a float, a bool, an object: not an MCP id.
        Odd(Value),
        /// No `id` (a notification).
        Absent,
    }

    fn id() -> impl Strategy<Value = Id> {
        prop_oneof![
            6 => any::<bool>().prop_map(Id::Fresh),
            1 => prop_oneof![
                Just(Value::Null),
                Just(json!(1.5)),
                Just(json!(true)),
                Just(json!({"a": 1})),
                Just(json!([1])),
            ]
            .prop_map(Id::Odd),
            2 => Just(Id::Absent),
        ]
    }

    /// One line to send.
    #[derive(Debug, Clone)]
    enum Line {
        /// A message; the id is filled in when it is sent.
        Message {
            method: String,
            id: Id,
            params: Option<Value>,
            version: Value,
        },
        /// A response to an id the server never used.
        Response(Value),
        /// Raw bytes (no newline inside).
        Raw(Vec<u8>),
    }

    fn a_line(any_shape: bool) -> impl Strategy<Value = Line> {
        prop_oneof![
            8 => (
                prop_oneof![
                    9 => prop::sample::select(METHODS.to_vec()).prop_map(str::to_string),
                    1 => ".{0,20}",
                ],
                id(),
                params(any_shape),
                prop_oneof![8 => Just(json!("2.0")), 1 => any_json()],
            )
                .prop_map(|(method, id, params, version)| Line::Message {
                    method,
                    id,
                    params,
                    version,
                }),
            1 => any_json().prop_map(|result| Line::Response(
                json!({"jsonrpc": "2.0", "id": 9_000_000, "result": result})
            )),
            1 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..64)
                .prop_map(Line::Raw),
        ]
    }

    /// The bytes of `l` (no newline), with a fresh id from `next` where it asks for one; that
    /// id when the line is a well-formed request (`jsonrpc: "2.0"`), which needs exactly one
    /// answer.
    fn render(l: &Line, next: &mut i64) -> (Vec<u8>, Option<Value>) {
        match l {
            Line::Message {
                method,
                id,
                params,
                version,
            } => {
                let mut message = json!({"jsonrpc": version, "method": method});
                if let Some(params) = params {
                    message["params"] = params.clone();
                }
                let mut fresh = None;
                match id {
                    Id::Fresh(numeric) => {
                        *next += 1;
                        let id = if *numeric {
                            json!(*next)
                        } else {
                            json!(format!("f-{next}"))
                        };
                        message["id"] = id.clone();
                        // A message with a usable id is answered exactly once: a request with
                        // its result or error, a message that is not a valid request (another
                        // `jsonrpc` version, say) with -32600 for that id.
                        fresh = Some(id);
                    }
                    Id::Odd(value) => message["id"] = value.clone(),
                    Id::Absent => {}
                }
                (serde_json::to_vec(&message).unwrap(), fresh)
            }
            Line::Response(response) => (serde_json::to_vec(response).unwrap(), None),
            Line::Raw(bytes) => (bytes.clone(), None),
        }
    }

    /// The driver: one server, a counter for fresh ids, the ids that need an answer.
    struct Driver {
        server: StdioServer,
        /// The connection serves 2026-07-28 (requests need the envelope).
        modern_era: bool,
        next: i64,
        expected: Vec<Value>,
    }

    impl Driver {
        /// Sends `lines`; returns the fresh ids among them.
        fn send(&mut self, lines: &[Line]) -> Vec<Value> {
            let mut fresh = Vec::new();
            for l in lines {
                let (bytes, id) = render(l, &mut self.next);
                self.server.send_raw(&line(bytes));
                fresh.extend(id);
            }
            fresh
        }

        /// Waits for every id in `fresh` to be answered, answering what the server asks
        /// meanwhile (elicitation declined, sampling answered, roots listed, anything else
        /// -32601).
        fn settle(&mut self, fresh: &[Value]) -> Result<(), TestCaseError> {
            let deadline = Instant::now() + Duration::from_secs(10);
            for id in fresh {
                loop {
                    self.answer_server_requests();
                    if self.server.answers_to(id) > 0 {
                        break;
                    }
                    prop_assert!(Instant::now() < deadline, "no answer to {id}");
                    self.server.answer_within(id, Duration::from_millis(20));
                    if self.server.answers_to(id) > 0 {
                        break;
                    }
                }
            }
            prop_assert!(self.server.alive(), "the server died");
            Ok(())
        }

        fn answer_server_requests(&mut self) {
            let asked: Vec<Value> = self
                .server
                .from_server
                .drain(..)
                .filter(|m| m.get("id").is_some())
                .collect();
            for request in asked {
                let result = match request["method"].as_str() {
                    Some("elicitation/create") => json!({"action": "decline"}),
                    Some("sampling/createMessage") => json!({
                        "role": "assistant",
                        "content": {"type": "text", "text": "Dune"},
                        "model": "fuzz"
                    }),
                    Some("roots/list") => json!({"roots": []}),
                    _ => {
                        self.server
                            .send(&json!({"jsonrpc": "2.0", "id": request["id"],
                            "error": {"code": -32601, "message": "Method not found"}}));
                        continue;
                    }
                };
                self.server
                    .send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
            }
        }
    }

    /// Runs `cases` generated cases (1-6 lines each, params of any shape with `any_shape`)
    /// against the driver's server.
    fn run(mut driver: Driver, cases: u32, any_shape: bool) {
        let driver_cell = Mutex::new(&mut driver);
        let config = ProptestConfig {
            cases,
            max_shrink_iters: 0,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        let mut runner = TestRunner::new(config);
        let result = runner.run(&prop::collection::vec(a_line(any_shape), 1..6), |lines| {
            let mut driver = driver_cell.lock().unwrap();
            let fresh = driver.send(&lines);
            driver.settle(&fresh)?;
            driver.expected.extend(fresh);
            Ok(())
        });
        let driver = driver_cell.into_inner().unwrap();
        if let Err(e) = result {
            panic!("{e}");
        }
        driver.server.drain(Duration::from_millis(300));
        let expected: HashSet<String> = driver.expected.iter().map(Value::to_string).collect();
        for (id, count) in driver.server.answer_counts() {
            if id == "null" {
                continue;
            }
            assert_eq!(*count, 1, "id {id} answered {count} times");
            assert!(
                expected.contains(id) || id == "0",
                "an answer to id {id}, which was never sent as a request"
            );
        }
        let id = driver.next + 1;
        let (tool, arguments, text) = wire::normal_call("bookshop");
        let params = json!({"name": tool, "arguments": arguments});
        driver.server.send(&if driver.modern_era {
            modern(id, "tools/call", params)
        } else {
            request(id, "tools/call", params)
        });
        let answer = driver.server.answer(&json!(id));
        assert_eq!(wire::result_text(&answer), text, "{answer}");
    }

    fn driver(server: StdioServer, modern_era: bool) -> Driver {
        Driver {
            server,
            modern_era,
            next: 0,
            expected: Vec::new(),
        }
    }

    /// A legacy session (initialize first), then 400 generated cases with object or no
    /// params.
    #[test]
    fn fuzz_request_path_legacy_stdio() {
        run(driver(StdioServer::legacy("bookshop"), false), 400, false);
    }

    /// A 2026-07-28 connection (first request enveloped), then 400 generated cases with object
    /// or no params.
    #[test]
    fn fuzz_request_path_modern_stdio() {
        let mut server = StdioServer::spawn("bookshop", &[]);
        server.send(&modern(0, "tools/list", json!({})));
        let answer = server.answer(&json!(0));
        assert_eq!(
            answer["result"]["resultType"],
            json!("complete"),
            "{answer}"
        );
        run(driver(server, true), 400, false);
    }

    /// The HTTP request path: 1,000 generated lines, each POSTed on its own, with the
    /// 2026-07-28 headers when it carries the envelope. Every POST gets an HTTP answer (no
    /// dropped connection, no 5xx); a JSON answer to a well-formed request is one well-formed
    /// response with the request's id; afterwards a normal call works and memory is bounded.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn fuzz_request_path_http() {
        let server = HttpServer::spawn("bookshop").await;
        let mut runner = TestRunner::new(ProptestConfig::default());
        let lines = prop::collection::vec(a_line(false), 1000)
            .new_tree(&mut runner)
            .expect("generate")
            .current();
        let mut next = 0;
        for l in &lines {
            let (bytes, fresh) = render(l, &mut next);
            let message: Option<Value> = serde_json::from_slice(&bytes).ok();
            let mut headers = Vec::new();
            if let Some(m) = &message
                && m["params"]["_meta"].is_object()
            {
                headers.push(("MCP-Protocol-Version", "2026-07-28".to_string()));
                // Values a header can carry (visible ASCII); others go without the header.
                let visible = |s: &&str| s.bytes().all(|b| (0x21..0x7f).contains(&b));
                if let Some(method) = m["method"].as_str().filter(visible) {
                    headers.push(("Mcp-Method", method.to_string()));
                }
                if let Some(name) = m["params"]["name"].as_str().filter(visible) {
                    headers.push(("Mcp-Name", name.to_string()));
                }
            }
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            let shown = String::from_utf8_lossy(&bytes).into_owned();
            let reply = wire::post(&server.client, &server.url(), bytes, &headers)
                .await
                .unwrap_or_else(|e| panic!("no HTTP answer to {shown}: {e}"));
            assert!(reply.status < 500, "{shown} -> {reply:?}");
            let json_reply = reply.content_type.starts_with("application/json")
                || reply.content_type.starts_with("text/event-stream");
            if let (Some(id), true, 200) = (&fresh, json_reply, reply.status) {
                let answers: Vec<Value> = reply
                    .messages()
                    .into_iter()
                    .filter(|m| m.get("method").is_none())
                    .collect();
                assert_eq!(answers.len(), 1, "{shown} -> {reply:?}");
                wire::assert_well_formed_response(&answers[0]);
                assert_eq!(&answers[0]["id"], id, "{shown} -> {reply:?}");
            }
        }
        server.normal_call_works("bookshop").await;
        let rss = server.rss_kib();
        assert!(rss < RSS_BOUND_KIB, "VmRSS {rss} KiB");
    }

    /// Item 3: params of any shape (arrays, strings, `null` too): a request with a readable id
    /// is still answered with that id (today rmcp answers -32600 without an id).
    #[test]
    fn item3_fuzz_any_params_answered_with_their_id_stdio() {
        run(driver(StdioServer::legacy("bookshop"), false), 400, true);
    }
}
