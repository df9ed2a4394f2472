//! The bench load client and driver.
//!
//! It starts every server under test, then runs each workload against all of them in turn
//! (the order rotates every repetition, so the servers share the machine's noise), with raw
//! JSON-RPC: newline-delimited over stdio pipes, and a minimal keep-alive HTTP/1.1 client
//! (TCP_NODELAY, Content-Length requests, JSON or chunked SSE responses) over Streamable HTTP.
//! Legacy: `initialize` + `notifications/initialized` (and `Mcp-Session-Id` on HTTP), the
//! server's mid-call `elicitation/create` is answered (on stdio in-line, on HTTP by a POST on a
//! second connection). 2026-07-28: every request carries `_meta` (protocolVersion,
//! clientCapabilities, clientInfo) and, on HTTP, `MCP-Protocol-Version`, `Mcp-Method` and
//! `Mcp-Name`; an `input_required` result is answered by a retry with `inputResponses` and
//! the `requestState` echoed byte for byte.
//!
//! Usage (`loadgen --help` for every option):
//!   loadgen --out FILE [--reps N] [--ms MILLIS] [--conc 1,16,64] [--port BASE] [--only ...]
//!           --server 'NAME|STDIO COMMAND|HTTP COMMAND with {port}' ...
//!           [--header 'NAME|Header-Name: value' ...]
//! Writes one JSON document with every measurement; exit code 1 if any call failed.

use clap::Parser;
use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    sync::{
        Arc, Barrier, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    thread,
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use serde_json::{Value, json};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"mcpgen-bench","version":"1.0.0"}}"#;
const INIT: &str = r#""method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"mcpgen-bench","version":"1.0.0"}}"#;
const ANSWER: &str = r#"{"action":"accept","content":{"confirm":true}}"#;
const IO_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Clone, Copy, PartialEq)]
enum Era {
    Legacy,
    Modern,
}
impl Era {
    fn name(self) -> &'static str {
        match self {
            Era::Legacy => "2025-11-25",
            Era::Modern => "2026-07-28",
        }
    }
}

#[derive(Clone, Copy)]
struct Workload {
    tool: &'static str,
    arguments: &'static str,
    expect: &'static str,
}

const WORKLOADS: [Workload; 3] = [
    Workload {
        tool: "search_books",
        arguments: r#"{"query":"dune","limit":5}"#,
        expect: "Found 3 books matching 'dune' (showing up to 5).",
    },
    Workload {
        tool: "reserve_book",
        arguments: r#"{"title":"Dune"}"#,
        expect: "Reserved 'Dune' (6 copies left).",
    },
    Workload {
        tool: "order_book",
        arguments: r#"{"title":"Neuromancer"}"#,
        expect: "Backordered 'Neuromancer'; it ships in 2-3 weeks.",
    },
];

fn call_body(id: u64, w: &Workload, era: Era, retry: Option<(&str, &str)>) -> String {
    let mut params = format!(r#"{{"name":"{}","arguments":{}"#, w.tool, w.arguments);
    if let Some((key, state)) = retry {
        params.push_str(&format!(
            r#","inputResponses":{{{}:{ANSWER}}},"requestState":{}"#,
            Value::String(key.into()),
            Value::String(state.into())
        ));
    }
    if era == Era::Modern {
        params.push(',');
        params.push_str(META);
    }
    params.push('}');
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
}

/// What a final (or intermediate) response means.
enum Step {
    Done,
    Retry(String, String),
}

fn judge(w: &Workload, era: Era, line: &str) -> Result<Step, String> {
    if era == Era::Modern && line.contains(r#""input_required""#) {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("bad JSON: {e}"))?;
        let r = &v["result"];
        let key = r["inputRequests"]
            .as_object()
            .and_then(|m| m.keys().next().cloned())
            .ok_or("input_required without inputRequests")?;
        let state = r["requestState"]
            .as_str()
            .ok_or("input_required without requestState")?;
        return Ok(Step::Retry(key, state.to_string()));
    }
    if line.contains(w.expect) && !line.contains(r#""isError":true"#) {
        Ok(Step::Done)
    } else {
        Err(format!(
            "unexpected response: {}",
            &line[..line.len().min(300)]
        ))
    }
}

fn elicit_id(line: &str) -> Option<Value> {
    if !line.contains(r#""elicitation/create""#) {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    if v.get("method").is_some() {
        v.get("id").cloned()
    } else {
        None
    }
}

fn answer_line(id: &Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{ANSWER}}}"#)
}

// ---------------------------------------------------------------------------------- stdio

struct StdioPeer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
    line: String,
}

impl StdioPeer {
    fn spawn(cmd: &str, log: &str) -> Result<Self, String> {
        let mut child = command(cmd, log)?
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {cmd}: {e}"))?;
        register(child.id());
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Ok(StdioPeer {
            child,
            stdin,
            stdout,
            next: 1,
            line: String::new(),
        })
    }

    fn send(&mut self, s: &str) -> Result<(), String> {
        self.stdin
            .write_all(format!("{s}\n").as_bytes())
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("write: {e}"))
    }

    fn read(&mut self) -> Result<&str, String> {
        self.line.clear();
        match self.stdout.read_line(&mut self.line) {
            Ok(0) => Err("server closed stdout".into()),
            Ok(_) => {
                progress();
                Ok(&self.line)
            }
            Err(e) => Err(format!("read: {e}")),
        }
    }

    /// Reads until the response to `id`, answering elicitations on the way.
    fn response(&mut self, id: u64) -> Result<String, String> {
        let id_key = format!(r#""id":{id}"#);
        loop {
            let line = self.read()?.to_string();
            if let Some(eid) = elicit_id(&line) {
                self.send(&answer_line(&eid))?;
                continue;
            }
            if line.contains(&id_key)
                && (line.contains(r#""result""#) || line.contains(r#""error""#))
            {
                return Ok(line);
            }
        }
    }

    fn handshake(&mut self, era: Era) -> Result<(), String> {
        if era == Era::Legacy {
            let id = self.next;
            self.next += 1;
            self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},{INIT}}}"#))?;
            self.response(id)?;
            self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        }
        Ok(())
    }

    fn call(&mut self, w: &Workload, era: Era) -> Result<(), String> {
        let mut retry: Option<(String, String)> = None;
        for _round in 0..3 {
            let id = self.next;
            self.next += 1;
            let body = call_body(
                id,
                w,
                era,
                retry.as_ref().map(|(k, s)| (k.as_str(), s.as_str())),
            );
            self.send(&body)?;
            let line = self.response(id)?;
            match judge(w, era, &line)? {
                Step::Done => return Ok(()),
                Step::Retry(k, s) => retry = Some((k, s)),
            }
        }
        Err("more than 3 rounds".into())
    }
}

// ---------------------------------------------------------------------------------- HTTP

struct Conn {
    out: TcpStream,
    input: BufReader<TcpStream>,
    port: u16,
    /// Header lines (`Name: value\r\n`) every request carries (`--header`).
    extra: Arc<str>,
    // the current response body
    chunked: bool,
    remaining: usize,
    done: bool,
    pending: Vec<u8>,
}

struct Head {
    status: u16,
    session: Option<String>,
    json: bool,
}

impl Conn {
    fn open(port: u16, extra: &Arc<str>) -> Result<Self, String> {
        let s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        s.set_read_timeout(Some(IO_TIMEOUT))
            .map_err(|e| e.to_string())?;
        let input = BufReader::with_capacity(64 * 1024, s.try_clone().map_err(|e| e.to_string())?);
        Ok(Conn {
            out: s,
            input,
            port,
            extra: extra.clone(),
            chunked: false,
            remaining: 0,
            done: true,
            pending: Vec::new(),
        })
    }

    fn send(&mut self, method: &str, headers: &str, body: &str) -> Result<Head, String> {
        let req = format!(
            "{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n{headers}{}content-length: {}\r\n\r\n{body}",
            self.port,
            self.extra,
            body.len()
        );
        self.out
            .write_all(req.as_bytes())
            .map_err(|e| format!("write: {e}"))?;
        let mut line = String::new();
        let mut head = Head {
            status: 0,
            session: None,
            json: false,
        };
        let mut length = 0usize;
        let mut chunked = false;
        let mut first = true;
        loop {
            line.clear();
            if self
                .input
                .read_line(&mut line)
                .map_err(|e| format!("read: {e}"))?
                == 0
            {
                return Err("connection closed".into());
            }
            if first {
                first = false;
                head.status = line
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                continue;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                let v = v.trim();
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.parse().unwrap_or(0);
                } else if k.eq_ignore_ascii_case("transfer-encoding")
                    && v.eq_ignore_ascii_case("chunked")
                {
                    chunked = true;
                } else if k.eq_ignore_ascii_case("content-type") {
                    head.json = v.starts_with("application/json");
                } else if k.eq_ignore_ascii_case("mcp-session-id") {
                    head.session = Some(v.to_string());
                }
            }
        }
        progress();
        self.chunked = chunked;
        self.remaining = length;
        self.done = !chunked && length == 0;
        self.pending.clear();
        Ok(head)
    }

    /// Reads more of the body into `pending`; false at its end.
    fn fill(&mut self) -> Result<bool, String> {
        if self.done {
            return Ok(false);
        }
        if !self.chunked {
            let start = self.pending.len();
            self.pending.resize(start + self.remaining, 0);
            self.input
                .read_exact(&mut self.pending[start..])
                .map_err(|e| format!("read: {e}"))?;
            self.remaining = 0;
            self.done = true;
            return Ok(true);
        }
        let mut line = String::new();
        self.input
            .read_line(&mut line)
            .map_err(|e| format!("read: {e}"))?;
        let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
            .map_err(|_| format!("bad chunk size {line:?}"))?;
        if size == 0 {
            line.clear();
            self.input
                .read_line(&mut line)
                .map_err(|e| format!("read: {e}"))?;
            self.done = true;
            return Ok(false);
        }
        let start = self.pending.len();
        self.pending.resize(start + size + 2, 0);
        self.input
            .read_exact(&mut self.pending[start..])
            .map_err(|e| format!("read: {e}"))?;
        self.pending.truncate(start + size);
        progress();
        Ok(true)
    }

    fn whole_body(&mut self) -> Result<String, String> {
        while self.fill()? {}
        Ok(String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned())
    }

    /// Next JSON-RPC message of an SSE body (data lines), or None at its end.
    fn next_event(&mut self) -> Result<Option<String>, String> {
        loop {
            if let Some(nl) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=nl).collect();
                let line = String::from_utf8_lossy(&line);
                if let Some(data) = line.strip_prefix("data:") {
                    let data = data.trim();
                    if !data.is_empty() {
                        return Ok(Some(data.to_string()));
                    }
                }
                continue;
            }
            if !self.fill()? {
                if self.pending.is_empty() {
                    return Ok(None);
                }
                let rest = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned();
                return Ok(rest
                    .strip_prefix("data:")
                    .map(|d| d.trim().to_string())
                    .filter(|d| !d.is_empty()));
            }
        }
    }
}

struct HttpClient {
    conn: Conn,
    side: Option<Conn>,
    port: u16,
    era: Era,
    session: Option<String>,
    next: u64,
}

impl HttpClient {
    fn new(port: u16, extra: &Arc<str>, era: Era) -> Result<Self, String> {
        let mut c = HttpClient {
            conn: Conn::open(port, extra)?,
            side: None,
            port,
            era,
            session: None,
            next: 1,
        };
        if era == Era::Legacy {
            let body = format!(r#"{{"jsonrpc":"2.0","id":0,{INIT}}}"#);
            let head = c.conn.send("POST", "", &body)?;
            let text = c.conn.whole_body()?;
            if head.status != 200 || !text.contains("protocolVersion") {
                return Err(format!("initialize failed: {} {text}", head.status));
            }
            c.session = head.session;
            let h = c.headers("notifications/initialized", "");
            let head = c.conn.send(
                "POST",
                &h,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            )?;
            c.conn.whole_body()?;
            if head.status / 100 != 2 {
                return Err(format!("notifications/initialized: HTTP {}", head.status));
            }
        }
        Ok(c)
    }

    fn headers(&self, method: &str, name: &str) -> String {
        match self.era {
            Era::Legacy => match &self.session {
                Some(s) => format!("mcp-protocol-version: 2025-11-25\r\nmcp-session-id: {s}\r\n"),
                None => "mcp-protocol-version: 2025-11-25\r\n".into(),
            },
            Era::Modern => {
                let name = if name.is_empty() {
                    String::new()
                } else {
                    format!("mcp-name: {name}\r\n")
                };
                format!("mcp-protocol-version: 2026-07-28\r\nmcp-method: {method}\r\n{name}")
            }
        }
    }

    fn post(&mut self, method: &str, name: &str, body: &str, id: u64) -> Result<String, String> {
        let h = self.headers(method, name);
        let head = self.conn.send("POST", &h, body)?;
        if head.status != 200 {
            let text = self.conn.whole_body()?;
            return Err(format!(
                "HTTP {}: {}",
                head.status,
                &text[..text.len().min(300)]
            ));
        }
        if head.json {
            return self.conn.whole_body();
        }
        let id_key = format!(r#""id":{id}"#);
        let mut response = None;
        while let Some(msg) = self.conn.next_event()? {
            if let Some(eid) = elicit_id(&msg) {
                let side = match &mut self.side {
                    Some(s) => s,
                    None => self.side.insert(Conn::open(self.port, &self.conn.extra)?),
                };
                let h2 = h.clone();
                let head = side.send("POST", &h2, &answer_line(&eid))?;
                side.whole_body()?;
                if head.status / 100 != 2 {
                    return Err(format!("elicitation answer: HTTP {}", head.status));
                }
                continue;
            }
            if msg.contains(&id_key)
                && response.is_none()
                && (msg.contains(r#""result""#) || msg.contains(r#""error""#))
            {
                response = Some(msg);
                // A JSON body or a closed SSE stream ends the exchange.
            }
        }
        response.ok_or_else(|| "no response in the body".to_string())
    }

    fn call(&mut self, w: &Workload) -> Result<(), String> {
        let mut retry: Option<(String, String)> = None;
        for _round in 0..3 {
            let id = self.next;
            self.next += 1;
            let body = call_body(
                id,
                w,
                self.era,
                retry.as_ref().map(|(k, s)| (k.as_str(), s.as_str())),
            );
            let line = self.post("tools/call", w.tool, &body, id)?;
            match judge(w, self.era, &line)? {
                Step::Done => return Ok(()),
                Step::Retry(k, s) => retry = Some((k, s)),
            }
        }
        Err("more than 3 rounds".into())
    }

    fn close(mut self) {
        if let Some(s) = self.session.take() {
            let h = format!("mcp-protocol-version: 2025-11-25\r\nmcp-session-id: {s}\r\n");
            if self.conn.send("DELETE", &h, "").is_ok() {
                let _ = self.conn.whole_body();
            }
        }
    }
}

// ---------------------------------------------------------------------------------- driver

static PROGRESS: AtomicU64 = AtomicU64::new(0);
static CHILDREN: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}
fn progress() {
    PROGRESS.store(now_ms(), Ordering::Relaxed);
}
fn register(pid: u32) {
    CHILDREN.lock().unwrap().push(pid);
}
fn kill_all() {
    for pid in CHILDREN.lock().unwrap().drain(..) {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
}

fn command(cmd: &str, log: &str) -> Result<Command, String> {
    let mut parts = cmd.split_whitespace();
    let program = parts.next().ok_or("empty command")?;
    let mut c = Command::new(program);
    c.args(parts);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("log {log}: {e}"))?;
    c.stderr(Stdio::from(log))
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    Ok(c)
}

fn rss_kb(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let get = |k: &str| {
        status
            .lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (get("VmRSS:"), get("VmHWM:"))
}

#[derive(Debug, Clone)]
struct Server {
    name: String,
    stdio: String,
    http: String,
}

struct Stats {
    calls: usize,
    errors: usize,
    first_error: Option<String>,
    secs: f64,
    lat_us: Vec<u64>,
}

impl Stats {
    fn to_json(&self) -> Value {
        let mut l = self.lat_us.clone();
        l.sort_unstable();
        let pct = |p: f64| {
            if l.is_empty() {
                0.0
            } else {
                l[((l.len() - 1) as f64 * p).round() as usize] as f64
            }
        };
        json!({
            "calls": self.calls, "errors": self.errors, "first_error": self.first_error,
            "secs": self.secs, "calls_per_s": if self.secs > 0.0 { self.calls as f64 / self.secs } else { 0.0 },
            "p50_us": pct(0.5), "p99_us": pct(0.99),
        })
    }
}

fn run_stdio(peer: &mut StdioPeer, w: &Workload, era: Era, ms: u64) -> Stats {
    let mut st = Stats {
        calls: 0,
        errors: 0,
        first_error: None,
        secs: 0.0,
        lat_us: Vec::new(),
    };
    let warm = Instant::now();
    while warm.elapsed() < Duration::from_millis(ms / 10 + 20) {
        if let Err(e) = peer.call(w, era) {
            st.errors += 1;
            st.first_error = Some(e);
            return st;
        }
    }
    let start = Instant::now();
    let end = start + Duration::from_millis(ms);
    while Instant::now() < end {
        let t = Instant::now();
        match peer.call(w, era) {
            Ok(()) => {
                st.calls += 1;
                st.lat_us.push(t.elapsed().as_micros() as u64);
            }
            Err(e) => {
                st.errors += 1;
                st.first_error = Some(e);
                break;
            }
        }
    }
    st.secs = start.elapsed().as_secs_f64();
    st
}

fn run_http(port: u16, extra: &Arc<str>, w: Workload, era: Era, conc: usize, ms: u64) -> Stats {
    let barrier = Arc::new(Barrier::new(conc + 1));
    let mut handles = Vec::new();
    for _ in 0..conc {
        let barrier = barrier.clone();
        let extra = extra.clone();
        handles.push(thread::spawn(move || {
            let mut lat = Vec::new();
            let mut err = None;
            let client = HttpClient::new(port, &extra, era).and_then(|mut c| {
                let warm = Instant::now();
                while warm.elapsed() < Duration::from_millis(ms / 10 + 20) {
                    c.call(&w)?;
                }
                Ok(c)
            });
            barrier.wait();
            let end = Instant::now() + Duration::from_millis(ms);
            match client {
                Err(e) => err = Some(e),
                Ok(mut c) => {
                    while Instant::now() < end {
                        let t = Instant::now();
                        match c.call(&w) {
                            Ok(()) => {
                                if Instant::now() <= end {
                                    lat.push(t.elapsed().as_micros() as u64);
                                }
                            }
                            Err(e) => {
                                err = Some(e);
                                break;
                            }
                        }
                    }
                    c.close();
                }
            }
            (lat, err)
        }));
    }
    barrier.wait();
    let start = Instant::now();
    let mut st = Stats {
        calls: 0,
        errors: 0,
        first_error: None,
        secs: 0.0,
        lat_us: Vec::new(),
    };
    for h in handles {
        let (lat, err) = h
            .join()
            .unwrap_or_else(|_| (Vec::new(), Some("worker panicked".into())));
        st.calls += lat.len();
        st.lat_us.extend(lat);
        if let Some(e) = err {
            st.errors += 1;
            st.first_error.get_or_insert(e);
        }
    }
    st.secs = (start.elapsed().as_secs_f64()).min(ms as f64 / 1000.0);
    st
}

fn wait_port(port: u16) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The transports and eras `--only` can name (with the tools of [`WORKLOADS`]).
const TRANSPORTS: [&str; 2] = ["stdio", "http"];
const ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// `--only stdio,2026-07-28,order_book`: the workloads to run. Each value names a transport, an
/// era or a tool; a workload runs when it matches the values given in each of these categories.
#[derive(Debug, Clone, Default)]
struct Only(Vec<String>);

impl Only {
    fn parse(list: &str) -> Result<Only, String> {
        let known: Vec<&str> = TRANSPORTS
            .into_iter()
            .chain(ERAS)
            .chain(WORKLOADS.iter().map(|w| w.tool))
            .collect();
        let values: Vec<String> = list
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        match values.iter().find(|v| !known.contains(&v.as_str())) {
            Some(v) => Err(format!("unknown value '{v}' (known: {})", known.join(", "))),
            None => Ok(Only(values)),
        }
    }
    fn category_allows(&self, values: &[&str], value: &str) -> bool {
        let given: Vec<&String> = self
            .0
            .iter()
            .filter(|v| values.contains(&v.as_str()))
            .collect();
        given.is_empty() || given.iter().any(|v| *v == value)
    }
    fn transport(&self, transport: &str) -> bool {
        self.category_allows(&TRANSPORTS, transport)
    }
    fn any(&self, transport: &str, era: Era) -> bool {
        WORKLOADS.iter().any(|w| self.runs(transport, era, w))
    }
    fn runs(&self, transport: &str, era: Era, w: &Workload) -> bool {
        let tools: Vec<&str> = WORKLOADS.iter().map(|w| w.tool).collect();
        self.transport(transport)
            && self.category_allows(&ERAS, era.name())
            && self.category_allows(&tools, w.tool)
    }
}

/// The bench load client: every workload against every server, side by side.
#[derive(Debug, Parser)]
#[command(about = "The bench load client: every workload against every server, side by side")]
struct Cli {
    /// Where to write the JSON document with every measurement.
    #[arg(long, default_value = "bench-results.json")]
    out: String,
    /// Repetitions of every measurement (servers interleaved, order rotated every repetition).
    #[arg(long, default_value_t = 3)]
    reps: usize,
    /// Milliseconds per measurement (after a warm-up of a tenth of it plus 20 ms).
    #[arg(long, default_value_t = 1000)]
    ms: u64,
    /// HTTP concurrencies (keep-alive connections), comma-separated.
    #[arg(long = "conc", value_delimiter = ',', default_value = "1,16,64")]
    concs: Vec<usize>,
    /// First HTTP port; server i listens on PORT + i (loopback).
    #[arg(long = "port", default_value_t = 18700)]
    base_port: u16,
    /// Directory for the servers' logs.
    #[arg(long, default_value = "/tmp")]
    logdir: String,
    /// Only the workloads matching these values: transports, eras, tools (comma-separated,
    /// e.g. `stdio,2026-07-28,order_book`).
    #[arg(long, value_parser = Only::parse, default_value = "")]
    only: Only,
    /// A server under test: 'NAME|STDIO COMMAND|HTTP COMMAND with {port}' (repeatable).
    #[arg(long = "server", value_parser = parse_server, required = true)]
    servers: Vec<Server>,
    /// A header every HTTP request to server NAME carries: 'NAME|Header-Name: value'
    /// (repeatable; e.g. `Authorization: Bearer <token>` for a server behind authorization).
    #[arg(long = "header", value_parser = parse_header)]
    headers: Vec<(String, String)>,
}

fn parse_header(s: &str) -> Result<(String, String), String> {
    let (name, line) = s
        .split_once('|')
        .ok_or("expected 'NAME|Header-Name: value'")?;
    match line.split_once(':') {
        Some((h, _)) if !h.trim().is_empty() && !line.contains(['\r', '\n']) => {
            Ok((name.into(), line.trim().into()))
        }
        _ => Err("expected 'NAME|Header-Name: value' (one line)".into()),
    }
}

fn parse_server(s: &str) -> Result<Server, String> {
    match s.split('|').collect::<Vec<_>>()[..] {
        [name, stdio, http] => Ok(Server {
            name: name.into(),
            stdio: stdio.into(),
            http: http.into(),
        }),
        _ => Err("expected 'NAME|STDIO COMMAND|HTTP COMMAND'".into()),
    }
}

fn main() {
    let Cli {
        out,
        reps,
        ms,
        concs,
        base_port,
        logdir,
        only,
        servers,
        headers,
    } = Cli::parse();
    for (name, _) in &headers {
        if !servers.iter().any(|s| &s.name == name) {
            eprintln!("loadgen: --header names no server {name:?}");
            std::process::exit(2);
        }
    }
    // Each server's extra header lines, by index.
    let extras: Vec<Arc<str>> = servers
        .iter()
        .map(|s| {
            headers
                .iter()
                .filter(|(name, _)| *name == s.name)
                .map(|(_, line)| format!("{line}\r\n"))
                .collect::<String>()
                .into()
        })
        .collect();
    // Watchdog: nothing may hang; no progress for 60 s ends the run.
    progress();
    thread::spawn(|| {
        loop {
            thread::sleep(Duration::from_secs(5));
            if now_ms().saturating_sub(PROGRESS.load(Ordering::Relaxed)) > 60_000 {
                eprintln!("loadgen: no progress for 60 s, giving up");
                kill_all();
                std::process::exit(3);
            }
        }
    });

    let mut records = Vec::new();
    let mut memory = Vec::new();
    let mut failed = false;
    let log = |name: &str, t: &str| format!("{logdir}/{name}-{t}.log");

    // stdio: one process per server and era, sequential calls.
    for era in [Era::Legacy, Era::Modern] {
        if !only.any("stdio", era) {
            continue;
        }
        let mut peers = Vec::new();
        for s in &servers {
            let mut p = StdioPeer::spawn(&s.stdio, &log(&s.name, "stdio"))
                .unwrap_or_else(|e| panic!("{e}"));
            if let Err(e) = p.handshake(era).and_then(|_| p.call(&WORKLOADS[0], era)) {
                eprintln!("loadgen: {} stdio {} start: {e}", s.name, era.name());
                failed = true;
            }
            peers.push(p);
        }
        thread::sleep(Duration::from_millis(200));
        let idle: Vec<u64> = peers.iter().map(|p| rss_kb(p.child.id()).0).collect();
        for w in WORKLOADS.iter().filter(|w| only.runs("stdio", era, w)) {
            for rep in 0..reps {
                for k in 0..servers.len() {
                    let i = (k + rep) % servers.len();
                    let st = run_stdio(&mut peers[i], w, era, ms);
                    eprintln!(
                        "stdio {} {:<13} rep {rep} {:<12} {:>8.0} calls/s p50 {:>6} us errors {}",
                        era.name(),
                        w.tool,
                        servers[i].name,
                        st.calls as f64 / st.secs.max(1e-9),
                        st.to_json()["p50_us"],
                        st.errors
                    );
                    if st.errors > 0 {
                        eprintln!("   error: {:?}", st.first_error);
                        failed = true;
                    }
                    let mut r = st.to_json();
                    r["transport"] = "stdio".into();
                    r["era"] = era.name().into();
                    r["tool"] = w.tool.into();
                    r["conc"] = 1.into();
                    r["server"] = servers[i].name.clone().into();
                    r["rep"] = rep.into();
                    records.push(r);
                }
            }
        }
        for (i, p) in peers.iter_mut().enumerate() {
            let (rss, hwm) = rss_kb(p.child.id());
            memory.push(
                json!({"server": servers[i].name, "transport": "stdio", "era": era.name(),
                               "idle_kb": idle[i], "end_kb": rss, "peak_kb": hwm}),
            );
            let _ = p.child.kill();
            let _ = p.child.wait();
        }
    }

    if only.transport("http") {
        // HTTP: one process per server for both eras; concurrency 1, 16, 64.
        let mut children = Vec::new();
        for (i, s) in servers.iter().enumerate() {
            let port = base_port + i as u16;
            let cmd = s.http.replace("{port}", &port.to_string());
            let child = command(&cmd, &log(&s.name, "http"))
                .and_then(|mut c| c.spawn().map_err(|e| format!("cannot start {cmd}: {e}")))
                .unwrap_or_else(|e| panic!("{e}"));
            register(child.id());
            children.push((child, port));
        }
        for (i, (_, port)) in children.iter().enumerate() {
            if !wait_port(*port) {
                eprintln!("loadgen: {} does not listen on {port}", servers[i].name);
                kill_all();
                std::process::exit(1);
            }
            progress();
        }
        // One call per era so the idle figure includes a warmed-up server.
        for (i, (_, port)) in children.iter().enumerate() {
            for era in [Era::Legacy, Era::Modern] {
                if let Err(e) = HttpClient::new(*port, &extras[i], era).and_then(|mut c| {
                    let r = c.call(&WORKLOADS[0]);
                    c.close();
                    r
                }) {
                    eprintln!(
                        "loadgen: {} http {} first call: {e}",
                        servers[i].name,
                        era.name()
                    );
                    failed = true;
                }
            }
        }
        thread::sleep(Duration::from_millis(300));
        let idle: Vec<u64> = children.iter().map(|(c, _)| rss_kb(c.id()).0).collect();
        for era in [Era::Legacy, Era::Modern] {
            for w in WORKLOADS.iter().filter(|w| only.runs("http", era, w)) {
                for &conc in &concs {
                    for rep in 0..reps {
                        for k in 0..servers.len() {
                            let i = (k + rep) % servers.len();
                            let st = run_http(children[i].1, &extras[i], *w, era, conc, ms);
                            let j = st.to_json();
                            eprintln!(
                                "http  {} {:<13} c={conc:<2} rep {rep} {:<12} {:>8.0} calls/s p50 {:>6} us errors {}",
                                era.name(),
                                w.tool,
                                servers[i].name,
                                j["calls_per_s"].as_f64().unwrap_or(0.0),
                                j["p50_us"],
                                st.errors
                            );
                            if st.errors > 0 {
                                eprintln!("   error: {:?}", st.first_error);
                                failed = true;
                            }
                            let mut r = j;
                            r["transport"] = "http".into();
                            r["era"] = era.name().into();
                            r["tool"] = w.tool.into();
                            r["conc"] = conc.into();
                            r["server"] = servers[i].name.clone().into();
                            r["rep"] = rep.into();
                            records.push(r);
                        }
                    }
                }
            }
        }
        for (i, (c, _)) in children.iter_mut().enumerate() {
            let (rss, hwm) = rss_kb(c.id());
            memory.push(
                json!({"server": servers[i].name, "transport": "http", "era": "both",
                               "idle_kb": idle[i], "end_kb": rss, "peak_kb": hwm}),
            );
            let _ = c.kill();
            let _ = c.wait();
        }
    }
    CHILDREN.lock().unwrap().clear();
    let doc = json!({"reps": reps, "ms": ms, "concurrency": concs, "records": records, "memory": memory,
                     "servers": servers.iter().map(|s| json!({"name": s.name, "stdio": s.stdio, "http": s.http})).collect::<Vec<_>>(),
                     "failed": failed});
    std::fs::write(&out, serde_json::to_string_pretty(&doc).unwrap()).expect("write results");
    if failed {
        std::process::exit(1);
    }
}
