//! The binaries as processes: logs on stderr only, clean exits (stdin EOF, SIGINT, SIGTERM),
//! Host/Origin checks on the HTTP endpoint.

mod common;

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    process::{Child, Command, ExitStatus, Stdio},
    thread,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

fn wait_exit(child: &mut Child, within: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if start.elapsed() > within {
            let _ = child.kill();
            panic!("the server did not exit within {within:?}");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// Starts `bookshop` over stdio, completes the handshake and one call, and returns the child
/// (stdin still open) with the lines read so far.
fn stdio_session() -> (Child, BufReader<std::process::ChildStdout>) {
    stdio_session_with(&[])
}

/// [`stdio_session`] with extra command-line arguments.
fn stdio_session_with(extra: &[&str]) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut child = Command::new(common::binary("bookshop"))
        .args(["--log-level", "debug"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let stdin = child.stdin.as_mut().expect("stdin");
    writeln!(stdin, "{INITIALIZE}").unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"search_books","arguments":{{"query":"dune","limit":5}}}}}}"#
    )
    .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    for id in [1, 2] {
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read");
        let message: Value = serde_json::from_str(&line).expect("stdout carries JSON-RPC only");
        assert_eq!(message["id"], json!(id), "{line}");
        if id == 1 {
            assert_eq!(
                message["result"],
                json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "Bookshop", "version": "1.0.0"},
                    "instructions": "A small bookshop: search the catalog, add books, reserve, order and get recommendations."
                })
            );
        }
        if id == 2 {
            assert_eq!(
                message["result"]["content"][0]["text"],
                json!("Found 3 books matching 'dune' (showing up to 5).")
            );
        }
    }
    (child, stdout)
}

#[test]
fn stdio_exits_with_0_on_stdin_eof_and_logs_only_to_stderr() {
    let (mut child, mut stdout) = stdio_session();
    drop(child.stdin.take());
    let status = wait_exit(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    for line in rest.lines() {
        serde_json::from_str::<Value>(line).expect("stdout carries JSON-RPC only");
    }
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.contains("stdio session ended"), "stderr: {stderr}");
}

#[test]
fn stdio_exits_with_0_on_sigterm_and_sigint() {
    for name in ["TERM", "INT"] {
        let (mut child, _stdout) = stdio_session();
        signal(&child, name);
        let status = wait_exit(&mut child, Duration::from_secs(10));
        assert_eq!(status.code(), Some(0), "after SIG{name}");
    }
}

/// The threads of a running process (`/proc/PID/task`).
fn threads_of(child: &Child) -> usize {
    std::fs::read_dir(format!("/proc/{}/task", child.id()))
        .expect("read /proc/PID/task")
        .count()
}

#[test]
fn stdio_serves_on_one_thread_unless_threads_asks_for_workers() {
    // Default: one single-threaded runtime on the main thread, so a request is never handed to
    // another thread. `--threads 3`: the main thread plus three runtime workers.
    for (extra, threads) in [(&[][..], 1), (&["--threads", "3"][..], 4)] {
        let (mut child, _stdout) = stdio_session_with(extra);
        assert_eq!(threads_of(&child), threads, "threads with {extra:?}");
        drop(child.stdin.take());
        let status = wait_exit(&mut child, Duration::from_secs(10));
        assert_eq!(status.code(), Some(0), "exit with {extra:?}");
    }
}

fn spawn_http(extra: &[&str]) -> (Child, u16) {
    for _ in 0..5 {
        let port = common::free_port();
        let mut child = Command::new(common::binary("bookshop"))
            .args([
                "--transport",
                "http",
                "--bind",
                &format!("127.0.0.1:{port}"),
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return (child, port);
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

/// POSTs `initialize` to `/mcp` with the given Host and Origin headers; returns the status code.
fn post_status(port: u16, host: &str, origin: Option<&str>) -> u16 {
    post_status_at(port, "/mcp", host, origin)
}

/// [`post_status`] at another path.
fn post_status_at(port: u16, path: &str, host: &str, origin: Option<&str>) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut status_line = String::new();
    BufReader::new(stream).read_line(&mut status_line).unwrap();
    status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"))
}

#[test]
fn http_exits_with_0_on_sigterm_and_sigint() {
    for name in ["TERM", "INT"] {
        let (mut child, port) = spawn_http(&[]);
        assert_eq!(post_status(port, &format!("127.0.0.1:{port}"), None), 200);
        signal(&child, name);
        let status = wait_exit(&mut child, Duration::from_secs(10));
        assert_eq!(status.code(), Some(0), "after SIG{name}");
    }
}

#[test]
fn http_serves_mcp_at_slash_mcp_only() {
    let (mut child, port) = spawn_http(&[]);
    let local = format!("127.0.0.1:{port}");
    assert_eq!(post_status_at(port, "/mcp", &local, None), 200);
    assert_eq!(post_status_at(port, "/mcp?x=1", &local, None), 200);
    for path in ["/", "/mcp/", "/mcp/x", "/other", "/MCP"] {
        assert_eq!(post_status_at(port, path, &local, None), 404, "{path}");
    }
    // Still serving after the misses.
    assert_eq!(post_status_at(port, "/mcp", &local, None), 200);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn http_checks_host_and_origin_by_default() {
    let (mut child, port) = spawn_http(&[]);
    let local = format!("127.0.0.1:{port}");
    assert_eq!(post_status(port, &local, None), 200);
    assert_eq!(post_status(port, &format!("localhost:{port}"), None), 200);
    assert_eq!(post_status(port, "evil.example", None), 403);
    assert_eq!(post_status(port, &local, Some("http://evil.example")), 403);
    assert_eq!(
        post_status(port, &local, Some("http://localhost:6274")),
        200
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn http_host_and_origin_checks_can_be_widened() {
    let (mut child, port) = spawn_http(&[
        "--allow-host",
        "mcp.example",
        "--allow-origin",
        "https://app.example:*",
    ]);
    assert_eq!(post_status(port, "mcp.example", None), 200);
    assert_eq!(post_status(port, "other.example", None), 403);
    assert_eq!(
        post_status(port, "mcp.example", Some("https://app.example")),
        200
    );
    assert_eq!(
        post_status(port, "mcp.example", Some("https://evil.example")),
        403
    );
    let _ = child.kill();
    let _ = child.wait();

    let (mut child, port) = spawn_http(&["--allow-any-host", "--allow-any-origin"]);
    assert_eq!(
        post_status(port, "anything.example", Some("https://evil.example")),
        200
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// A healthy stdio server says nothing at WARN or ERROR at the default level, through the
/// client's own mistakes (an unknown tool, a method the spec does not serve, arguments the
/// schema refuses) and a good call; its start-up lines are INFO.
#[test]
fn a_healthy_stdio_start_and_the_clients_mistakes_log_nothing_at_warn() {
    let mut child = Command::new(common::binary("bookshop"))
        .env_remove("MCP_REQUEST_STATE_KEYS")
        .env_remove("MCP_REQUEST_STATE_KEYS_FILE")
        .env("MCP_PRINCIPAL_SUBJECT", "alice")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bookshop");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let lines = [
        INITIALIZE,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"nope"}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_books","arguments":{"query":5}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_books","arguments":{"query":"Dune"}}}"#,
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    // The answers of ids 1 to 5, in some order.
    let mut ids = Vec::new();
    while ids.len() < 5 {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout ended");
        let message: Value = serde_json::from_str(&line).unwrap();
        ids.push(message["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    drop(stdin);
    assert!(wait_exit(&mut child, Duration::from_secs(10)).success());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let loud: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
        .collect();
    assert_eq!(loud, Vec::<&str>::new(), "{stderr}");
    for expected in [
        "INFO mcpgen_runtime::server::serve: stdio: scopes are not enforced (MCP authorization applies to HTTP); principal: subject 'alice', client 'alice'",
        "INFO mcpgen_runtime::state: neither MCP_REQUEST_STATE_KEYS nor MCP_REQUEST_STATE_KEYS_FILE is set: requestState is sealed with a key of this process alone, so states do not survive a restart",
    ] {
        assert_eq!(
            stderr.lines().filter(|l| l.ends_with(expected)).count(),
            1,
            "{expected}\n{stderr}"
        );
    }
}
