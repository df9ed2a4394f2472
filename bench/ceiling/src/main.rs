//! The ceiling: a raw JSON-RPC responder with no MCP library and no JSON parser (std only).
//! It recognises the bench client's requests by cheap string scans and answers each with the
//! same JSON the bookshop servers send (text, structuredContent, resultType and serverInfo on
//! 2026-07-28), including the legacy mid-call `elicitation/create` and the 2026-07-28
//! `input_required` round for order_book. It does no validation: it shows what the machine,
//! the pipes and the loopback TCP stack allow.
//!
//! Usage: `ceiling [--transport stdio|http] [--bind 127.0.0.1:PORT]`.

use std::{
    collections::HashMap,
    io::{BufRead, BufReader, Read, Write},
    net::{TcpListener, TcpStream},
    sync::{
        Mutex, OnceLock,
        atomic::{AtomicU64, Ordering},
        mpsc,
    },
    thread,
};

const SERVER_INFO: &str =
    r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}}"#;
const ELICIT_PARAMS: &str = r#"{"mode":"form","message":"'Neuromancer' is out of stock (2-3 weeks). Order anyway?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean","description":"Order anyway and wait?"}},"required":["confirm"]}}"#;

fn field<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let at = s.find(key)? + key.len();
    let rest = &s[at..];
    let rest = rest.trim_start_matches([' ', ':']);
    if let Some(r) = rest.strip_prefix('"') {
        Some(&r[..r.find('"')?])
    } else {
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        Some(rest[..end].trim())
    }
}

fn result(id: &str, body: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{body}}}"#)
}

fn text_result(id: &str, text: &str, modern: bool) -> String {
    let extra = if modern {
        format!(r#","resultType":"complete",{SERVER_INFO}"#)
    } else {
        String::new()
    };
    result(
        id,
        &format!(
            r#"{{"content":[{{"type":"text","text":"{text}"}}],"structuredContent":{{"result":"{text}"}},"isError":false{extra}}}"#
        ),
    )
}

/// What to do with one request line.
enum Reply {
    None,
    Now(String),
    /// Legacy order_book: ask, then answer with the second string.
    Ask(String, String),
}

fn reply(line: &str, elicit_id: u64) -> Reply {
    let Some(method) = field(line, r#""method""#) else {
        return Reply::None;
    };
    let id = match field(line, r#""id""#) {
        Some(id) => id.to_string(),
        None => return Reply::None,
    };
    let id = if line.contains(r#""id":""#) {
        format!("\"{id}\"")
    } else {
        id
    };
    let modern = line.contains("io.modelcontextprotocol/protocolVersion");
    match method {
        "initialize" => Reply::Now(result(
            &id,
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"Bookshop","version":"1.0.0"}}"#,
        )),
        "tools/call" => match field(line, r#""name""#).unwrap_or("") {
            "search_books" => {
                let q = field(line, r#""query""#).unwrap_or("");
                let limit = field(line, r#""limit""#).unwrap_or("10");
                Reply::Now(text_result(
                    &id,
                    &format!("Found 3 books matching '{q}' (showing up to {limit})."),
                    modern,
                ))
            }
            "reserve_book" => {
                Reply::Now(text_result(&id, "Reserved 'Dune' (6 copies left).", modern))
            }
            "order_book" => {
                let done = text_result(
                    &id,
                    "Backordered 'Neuromancer'; it ships in 2-3 weeks.",
                    modern,
                );
                if !modern {
                    let ask = format!(
                        r#"{{"jsonrpc":"2.0","id":{elicit_id},"method":"elicitation/create","params":{ELICIT_PARAMS}}}"#
                    );
                    Reply::Ask(ask, done)
                } else if line.contains(r#""requestState""#) {
                    Reply::Now(done)
                } else {
                    Reply::Now(result(
                        &id,
                        &format!(
                            r#"{{"resultType":"input_required","inputRequests":{{"confirm_backorder":{{"method":"elicitation/create","params":{ELICIT_PARAMS}}}}},"requestState":"v1.ceiling-state",{SERVER_INFO}}}"#
                        ),
                    ))
                }
            }
            other => Reply::Now(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Unknown tool: {other}"}}}}"#
            )),
        },
        "tools/list" | "ping" => Reply::Now(result(&id, r#"{"tools":[]}"#)),
        _ => Reply::Now(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"Method not found"}}}}"#
        )),
    }
}

fn stdio() {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut line = String::new();
    let mut next = 0u64;
    loop {
        line.clear();
        if input.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        match reply(&line, next) {
            Reply::None => {}
            Reply::Now(s) => {
                out.write_all(s.as_bytes()).unwrap();
                out.write_all(b"\n").unwrap();
                out.flush().unwrap();
            }
            Reply::Ask(ask, done) => {
                next += 1;
                out.write_all(ask.as_bytes()).unwrap();
                out.write_all(b"\n").unwrap();
                out.flush().unwrap();
                line.clear();
                if input.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                out.write_all(done.as_bytes()).unwrap();
                out.write_all(b"\n").unwrap();
                out.flush().unwrap();
            }
        }
    }
}

fn waiters() -> &'static Mutex<HashMap<String, mpsc::Sender<()>>> {
    static W: OnceLock<Mutex<HashMap<String, mpsc::Sender<()>>>> = OnceLock::new();
    W.get_or_init(Default::default)
}

static COUNTER: AtomicU64 = AtomicU64::new(1);

fn connection(stream: TcpStream) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut out = stream.try_clone()?;
    let mut input = BufReader::new(stream);
    let mut line = String::new();
    let mut body = Vec::new();
    loop {
        let mut length = 0usize;
        let mut first = true;
        loop {
            line.clear();
            if input.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if first {
                first = false;
                continue;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        body.resize(length, 0);
        input.read_exact(&mut body)?;
        let text = String::from_utf8_lossy(&body);
        // A client's answer to our elicitation request.
        if !text.contains(r#""method""#) {
            if let Some(id) = field(&text, r#""id""#)
                && let Some(tx) = waiters().lock().unwrap().remove(id)
            {
                let _ = tx.send(());
            }
            out.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")?;
            continue;
        }
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        match reply(&text, n) {
            Reply::None => out.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")?,
            Reply::Now(s) => {
                let session = if text.contains(r#""method":"initialize""#) {
                    format!("mcp-session-id: ceiling-{n}\r\n")
                } else {
                    String::new()
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{session}content-length: {}\r\n\r\n",
                    s.len()
                );
                out.write_all([head.as_bytes(), s.as_bytes()].concat().as_slice())?;
            }
            Reply::Ask(ask, done) => {
                let (tx, rx) = mpsc::channel();
                waiters().lock().unwrap().insert(n.to_string(), tx);
                let event = format!("data: {ask}\n\n");
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                out.write_all(format!("{head}{:x}\r\n{event}\r\n", event.len()).as_bytes())?;
                if rx.recv_timeout(std::time::Duration::from_secs(10)).is_err() {
                    return Ok(());
                }
                let event = format!("data: {done}\n\n");
                out.write_all(format!("{:x}\r\n{event}\r\n0\r\n\r\n", event.len()).as_bytes())?;
            }
        }
    }
}

fn main() {
    let mut transport = "stdio".to_string();
    let mut bind = "127.0.0.1:8000".to_string();
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        match a.as_str() {
            "--transport" => transport = argv.next().expect("--transport VALUE"),
            "--bind" => bind = argv.next().expect("--bind HOST:PORT"),
            _ => panic!("usage: ceiling [--transport stdio|http] [--bind HOST:PORT]"),
        }
    }
    if transport != "http" {
        return stdio();
    }
    let listener = TcpListener::bind(&bind).expect("bind");
    for stream in listener.incoming().flatten() {
        thread::spawn(move || {
            let _ = connection(stream);
        });
    }
}
