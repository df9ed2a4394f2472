//! Measures what one idle legacy Streamable HTTP session costs a server in resident memory.
//!
//! `cargo run -p e2e --bin session_memory -- <server binary> [sessions] [server arguments…]`
//! starts `<server binary> --transport http` on a free loopback port, opens one session (so
//! lazily built state exists), reads the server's `VmRSS`, then opens `sessions` more (default
//! 2,000; each `initialize` + `notifications/initialized`, connection closed, nothing else),
//! waits a second and reads `VmRSS` again. It prints both and the difference per session.
//! The server logs at its default level (`info`) to nowhere; `--threads 1` keeps all sessions on
//! one runtime. Measure release builds: a debug build's futures are several times larger.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    process::{Command, Stdio},
    thread,
    time::Duration,
};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"session-memory","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn main() {
    let mut args = std::env::args().skip(1);
    let server = args
        .next()
        .expect("usage: session_memory <server binary> [sessions] [server arguments…]");
    let sessions: usize = args.next().map_or(2000, |n| n.parse().expect("sessions"));
    let extra: Vec<String> = args.collect();
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let mut child = Command::new(&server)
        .args([
            "--transport",
            "http",
            "--bind",
            &format!("127.0.0.1:{port}"),
        ])
        .args(["--threads", "1"])
        .args(&extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    for _ in 0..200 {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    open_session(port);
    thread::sleep(Duration::from_millis(500));
    let before = rss_kib(child.id());
    for _ in 0..sessions {
        open_session(port);
    }
    thread::sleep(Duration::from_secs(1));
    let after = rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    println!(
        "{server}: VmRSS {before} KiB with 1 session, {after} KiB with {} sessions: {:.1} KiB per session",
        sessions + 1,
        (after as f64 - before as f64) / sessions as f64
    );
}

/// `initialize` + `notifications/initialized` over two connections; returns the session id.
fn open_session(port: u16) -> String {
    let (head, _) = post(port, None, INITIALIZE);
    let id = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no Mcp-Session-Id in {head}"));
    let (head, _) = post(port, Some(&id), INITIALIZED);
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");
    id
}

/// One POST to `/mcp` with `Connection: close`: the response head and body.
fn post(port: u16, session: Option<&str>, body: &str) -> (String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{session}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("send");
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).expect("read") == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let mut rest = String::new();
    reader.read_to_string(&mut rest).expect("read");
    (head, rest)
}

/// `VmRSS` of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}
