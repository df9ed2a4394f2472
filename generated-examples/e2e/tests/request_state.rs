//! The `requestState` boundary, on the wire: a 2026-07-28 `tools/call`, `prompts/get` or
//! `resources/read` that carries a `requestState` has it verified before any resolver or handler
//! runs, whether or not the call needs it (the Python SDK's `RequestStateBoundary`). Every
//! failure is exactly the frozen -32602 error; the reason is in the server's log only.
//!
//! Driven with raw JSON-RPC over stdio and Streamable HTTP against the probe example, whose
//! resolvers and tool, prompt and resource bodies count their runs (`runs`). States are sealed
//! here with the runtime's own `state.rs` under the key the server is started with, so each one
//! differs from a genuine state in exactly one claim.

mod common;

#[allow(dead_code)]
// The runtime crate's own file.
#[path = "../../../runtime/src/state.rs"]
mod state;

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpStream,
    path::PathBuf,
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    thread,
    time::Duration,
};

use serde_json::{Value, json};
use state::{Binding, StatePolicy, arguments_digest};

const KEY_A: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci1vbmUtMzItYnl0ZXMhIQ==";
const KEY_B: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci10d28tMzItYnl0ZXMhIQ==";
/// The bytes of `KEY_A` and `KEY_B`.
const SECRET_A: &[u8] = b"mcpgen-test-key-number-one-32-bytes!!";
const SECRET_B: &[u8] = b"mcpgen-test-key-number-two-32-bytes!!";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Stdio,
    Http,
}

/// A probe process spoken to with raw JSON-RPC; its stderr goes to a log file.
struct Probe {
    child: Child,
    wire: Wire,
    log: PathBuf,
    next_id: u64,
}

enum Wire {
    Stdio {
        stdin: ChildStdin,
        stdout: BufReader<ChildStdout>,
    },
    Http {
        port: u16,
    },
}

fn log_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "mcpgen-request-state-{}-{tag}.log",
        std::process::id()
    ))
}

impl Probe {
    /// Starts the probe with `MCP_REQUEST_STATE_KEYS=key` (and the default audience `Probe`).
    fn start(transport: Transport, key: &str, tag: &str) -> Probe {
        let log = log_path(tag);
        for _ in 0..5 {
            let mut command = Command::new(common::binary("mrtr-probe"));
            command
                .args(["--log-level", "warn"])
                .env("MCP_REQUEST_STATE_KEYS", key)
                .stderr(std::fs::File::create(&log).expect("log file"));
            match transport {
                Transport::Stdio => {
                    let mut child = command
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .spawn()
                        .expect("spawn");
                    let stdin = child.stdin.take().unwrap();
                    let stdout = BufReader::new(child.stdout.take().unwrap());
                    return Probe {
                        child,
                        wire: Wire::Stdio { stdin, stdout },
                        log,
                        next_id: 1,
                    };
                }
                Transport::Http => {
                    let port = common::free_port();
                    let mut child = command
                        .args([
                            "--transport",
                            "http",
                            "--bind",
                            &format!("127.0.0.1:{port}"),
                        ])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("spawn");
                    for _ in 0..200 {
                        if let Ok(Some(_)) = child.try_wait() {
                            break; // the port was taken: try another
                        }
                        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                            thread::sleep(Duration::from_millis(50));
                            if let Ok(None) = child.try_wait() {
                                return Probe {
                                    child,
                                    wire: Wire::Http { port },
                                    log,
                                    next_id: 1,
                                };
                            }
                            break;
                        }
                        thread::sleep(Duration::from_millis(50));
                    }
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
        panic!("the HTTP server did not start");
    }

    /// Sends one 2026-07-28 request (the `_meta` envelope is added) and returns the whole
    /// JSON-RPC response.
    fn request(&mut self, method: &str, mut params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        params.as_object_mut().expect("params object").insert(
            "_meta".into(),
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":
                    {"elicitation": {"form": {}}, "sampling": {}, "roots": {}},
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
            }),
        );
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self.send(method, &body);
        assert_eq!(response["id"], json!(id), "{response}");
        response
    }

    fn send(&mut self, method: &str, body: &Value) -> Value {
        let text = body.to_string();
        match &mut self.wire {
            Wire::Stdio { stdin, stdout } => {
                writeln!(stdin, "{text}").expect("write");
                stdin.flush().unwrap();
                let mut line = String::new();
                stdout.read_line(&mut line).expect("read");
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
            }
            Wire::Http { port } => {
                let name = body["params"]["name"]
                    .as_str()
                    .or_else(|| body["params"]["uri"].as_str())
                    .map(|name| format!("Mcp-Name: {name}\r\n"))
                    .unwrap_or_default();
                let mut stream = TcpStream::connect(("127.0.0.1", *port)).expect("connect");
                stream
                    .set_read_timeout(Some(Duration::from_secs(20)))
                    .unwrap();
                let request = format!(
                    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                     Accept: application/json, text/event-stream\r\n\
                     Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
                stream.write_all(request.as_bytes()).unwrap();
                let mut raw = Vec::new();
                stream.read_to_end(&mut raw).expect("read the response");
                let raw = String::from_utf8(raw).expect("UTF-8 response");
                let (head, body) = raw.split_once("\r\n\r\n").expect("HTTP head");
                let head = head.to_ascii_lowercase();
                assert!(
                    head.contains("content-type: application/json"),
                    "a JSON answer: {head}"
                );
                let body = if head.contains("transfer-encoding: chunked") {
                    dechunk(body)
                } else {
                    body.to_string()
                };
                serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body:?}"))
            }
        }
    }

    /// The count `runs` reports for a resolver or a body (`tool:x`, `prompt:x`, `resource:x`).
    fn runs(&mut self, what: &str) -> u64 {
        let response = self.request(
            "tools/call",
            json!({"name": "runs", "arguments": {"resolver": what}}),
        );
        response["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("runs: {response}"))
            .parse()
            .unwrap()
    }

    /// Every counter the probe keeps.
    fn all_runs(&mut self) -> Vec<(&'static str, u64)> {
        COUNTERS.iter().map(|&c| (c, self.runs(c))).collect()
    }

    /// The server's log so far.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("chunk size");
        let size = usize::from_str_radix(size.trim(), 16).expect("hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
}

const COUNTERS: [&str; 12] = [
    "ask_color",
    "ask_size",
    "describe",
    "shout",
    "tool:make",
    "tool:paint",
    "tool:label",
    "tool:set_mood",
    "prompt:tint",
    "prompt:name_it",
    "resource:mood",
    "resource:item",
];

/// One request the boundary guards.
#[derive(Clone, Copy)]
struct Target {
    method: &'static str,
    /// The tool or prompt name, or the URI.
    name: &'static str,
    /// The arguments (`null` for resources/read).
    arguments: &'static str,
    /// What it is, for failure messages.
    what: &'static str,
}

impl Target {
    fn arguments(&self) -> Value {
        serde_json::from_str(self.arguments).unwrap()
    }

    fn params(&self, state: Value) -> Value {
        let mut params = if self.method == "resources/read" {
            json!({"uri": self.name})
        } else {
            json!({"name": self.name, "arguments": self.arguments()})
        };
        params["requestState"] = state;
        params
    }
}

const TARGETS: [Target; 9] = [
    Target {
        method: "tools/call",
        name: "paint",
        arguments: r#"{"item":"cup"}"#,
        what: "a tool that asks",
    },
    Target {
        method: "tools/call",
        name: "label",
        arguments: r#"{"item":"cup"}"#,
        what: "a tool whose resolver never asks",
    },
    Target {
        method: "tools/call",
        name: "set_mood",
        arguments: r#"{"mood":"sunny"}"#,
        what: "a tool without resolvers",
    },
    Target {
        method: "prompts/get",
        name: "tint",
        arguments: r#"{"item":"cup"}"#,
        what: "a prompt that asks",
    },
    Target {
        method: "prompts/get",
        name: "name_it",
        arguments: r#"{"item":"cup"}"#,
        what: "a prompt in code that does not ask",
    },
    Target {
        method: "prompts/get",
        name: "plain",
        arguments: r#"{}"#,
        what: "a prompt with fixed content",
    },
    Target {
        method: "resources/read",
        name: "probe://items/cup",
        arguments: "null",
        what: "a template read in code",
    },
    Target {
        method: "resources/read",
        name: "probe://mood",
        arguments: "null",
        what: "a resource read in code",
    },
    Target {
        method: "resources/read",
        name: "probe://note",
        arguments: "null",
        what: "a fixed resource",
    },
];

fn policy(secret: &[u8], ttl: Duration, audience: &str) -> StatePolicy {
    StatePolicy::new(&[secret.to_vec()], ttl, audience).expect("policy")
}

/// The probe's own policy (key A, audience `Probe`).
fn genuine() -> StatePolicy {
    policy(SECRET_A, Duration::from_secs(600), "Probe")
}

/// Seals `inner` for `method`, `name` and `arguments` (`null`: none) under `policy`.
fn seal(
    policy: &StatePolicy,
    method: &str,
    name: &str,
    arguments: &Value,
    inner: &Value,
) -> String {
    let digest = arguments_digest(arguments.as_object());
    let binding = Binding {
        method,
        tool: name,
        arguments: &digest,
        principal: None,
    };
    policy.seal(binding, inner).expect("seal")
}

/// The inner state of a round that has made no progress.
fn fresh_inner() -> Value {
    json!({"v": 1, "outcomes": {}, "asked": {}})
}

fn tamper(token: &str) -> String {
    let mut chars: Vec<char> = token.chars().collect();
    let i = chars.len() / 2;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

/// `token` with its last `bytes` sealed bytes cut off (still canonical base64url).
fn truncated(token: &str, bytes: usize) -> String {
    use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
    let raw = URL_SAFE_NO_PAD.decode(&token[3..]).expect("base64url");
    format!("v1.{}", URL_SAFE_NO_PAD.encode(&raw[..raw.len() - bytes]))
}

fn frozen(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602,
        "message": "Invalid or expired requestState", "data": {"reason": "invalid_request_state"}}})
}

/// Every way a state can fail for `target`, with the reason the server logs for it.
fn bad_states(target: &Target) -> Vec<(String, Value, &'static str)> {
    let a = genuine();
    let args = target.arguments();
    let inner = fresh_inner();
    let token = seal(&a, target.method, target.name, &args, &inner);
    let other_args = if target.method == "resources/read" {
        json!({"item": "cup"})
    } else {
        json!({"item": "mug", "mood": "grey"})
    };
    let other_method = if target.method == "tools/call" {
        "prompts/get"
    } else {
        "tools/call"
    };
    vec![
        (
            "forged".into(),
            json!("not a state"),
            "not a v1 token (wrong prefix)",
        ),
        (
            "forged v1".into(),
            json!(tamper(&token)),
            "token failed authentication",
        ),
        (
            "truncated by a character".into(),
            json!(token[..token.len() - 1].to_string()),
            // Not base64url any more, or failing authentication, depending on the length.
            "",
        ),
        (
            "truncated by five bytes".into(),
            json!(truncated(&token, 5)),
            "token failed authentication",
        ),
        (
            "truncated to the key id".into(),
            json!(token[..11].to_string()),
            "token is too short",
        ),
        (
            "for another tool, prompt or URI".into(),
            json!(seal(&a, target.method, "other", &args, &inner)),
            "bound to tool \"other\"",
        ),
        (
            "for other arguments".into(),
            json!(seal(&a, target.method, target.name, &other_args, &inner)),
            "bound to other arguments",
        ),
        (
            "for another method".into(),
            json!(seal(&a, other_method, target.name, &args, &inner)),
            "bound to method",
        ),
        (
            "expired".into(),
            json!(seal(
                &policy(SECRET_A, Duration::ZERO, "Probe"),
                target.method,
                target.name,
                &args,
                &inner
            )),
            "expired ",
        ),
        (
            "for another audience".into(),
            json!(seal(
                &policy(SECRET_A, Duration::from_secs(600), "Elsewhere"),
                target.method,
                target.name,
                &args,
                &inner
            )),
            "bound to audience \"Elsewhere\"",
        ),
        (
            "sealed by another key".into(),
            json!(seal(
                &policy(SECRET_B, Duration::from_secs(600), "Probe"),
                target.method,
                target.name,
                &args,
                &inner
            )),
            "token sealed with an unknown key",
        ),
        ("a number".into(), json!(123), "a number, not a string"),
        ("a boolean".into(), json!(true), "a boolean, not a string"),
        (
            "an object".into(),
            json!({"state": token}),
            "an object, not a string",
        ),
        ("an array".into(), json!([token]), "an array, not a string"),
    ]
}

fn bad_states_are_rejected_before_anything_runs(transport: Transport) {
    let mut probe = Probe::start(transport, KEY_A, &format!("reject-{transport:?}"));
    for target in TARGETS {
        for (case, state, reason) in bad_states(&target) {
            let logged = probe.log().len();
            let response = probe.request(target.method, target.params(state));
            assert_eq!(
                response,
                frozen(&response["id"]),
                "{} {} ({}) with a state {case}",
                target.method,
                target.name,
                target.what
            );
            let log = probe.log()[logged..].to_string();
            assert!(
                log.lines()
                    .any(|line| line.contains("rejected requestState: ")
                        && line.contains(reason)
                        && line.contains(&format!("method=\"{}\"", target.method))),
                "the reason ({reason}) is logged for {} {} with a state {case}:\n{log}",
                target.method,
                target.name
            );
        }
    }
    // No resolver, tool, prompt or resource body ran.
    let zero: Vec<(&str, u64)> = COUNTERS.iter().map(|&c| (c, 0)).collect();
    assert_eq!(probe.all_runs(), zero);
    // The server keeps serving: the same requests without a state (or with `null`, which
    // counts as absent) run.
    let response = probe.request("tools/call", TARGETS[2].params(Value::Null));
    assert_eq!(
        response["result"]["content"],
        json!([{"type": "text", "text": "Mood is now sunny."}])
    );
    let response = probe.request("resources/read", TARGETS[8].params(Value::Null));
    assert_eq!(
        response["result"]["contents"],
        json!([{"uri": "probe://note", "mimeType": "text/plain", "text": "A fixed note."}])
    );
    assert_eq!(probe.runs("tool:set_mood"), 1);
    probe.stop();
}

fn a_state_from_another_process_with_another_key_is_rejected(transport: Transport) {
    let mut a = Probe::start(transport, KEY_A, &format!("key-a-{transport:?}"));
    let mut b = Probe::start(transport, KEY_B, &format!("key-b-{transport:?}"));
    // Genuine states of process B, for a tool and a prompt that ask.
    let paint = &TARGETS[0];
    let tint = &TARGETS[3];
    for target in [paint, tint] {
        let mut params = target.params(Value::Null);
        params.as_object_mut().unwrap().remove("requestState");
        let round1 = b.request(target.method, params);
        let state = round1["result"]["requestState"].clone();
        assert!(state.as_str().unwrap().starts_with("v1."), "{round1}");
        let mut retry = target.params(state);
        retry["inputResponses"] =
            json!({"ask_color": {"action": "accept", "content": {"color": "red"}}});
        let response = a.request(target.method, retry.clone());
        assert_eq!(response, frozen(&response["id"]), "{}", target.name);
        // The same retry completes on process B.
        let response = b.request(target.method, retry);
        assert!(response.get("result").is_some(), "{response}");
    }
    assert!(
        a.log()
            .contains("rejected requestState: token sealed with an unknown key")
    );
    assert_eq!(a.runs("ask_color"), 0);
    assert_eq!((a.runs("tool:paint"), a.runs("prompt:tint")), (0, 0));
    assert_eq!((b.runs("tool:paint"), b.runs("prompt:tint")), (1, 1));
    a.stop();
    b.stop();
}

fn color_request() -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form",
        "message": "Which color for the cup?",
        "requestedSchema": {"description": "A color choice.", "type": "object",
            "properties": {"color": {"type": "string"}}, "required": ["color"]}
    }})
}

const SERVER_INFO: &str =
    r#"{"io.modelcontextprotocol/serverInfo":{"name":"Probe","version":"0.1.0"}}"#;

fn server_info() -> Value {
    serde_json::from_str(SERVER_INFO).unwrap()
}

/// An `input_required` result asking the color, with its (random) state taken out.
fn asks_color(response: &Value) -> String {
    let mut result = response["result"].clone();
    let state = result
        .as_object_mut()
        .and_then(|r| r.remove("requestState"))
        .and_then(|s| s.as_str().map(String::from))
        .unwrap_or_else(|| panic!("no requestState: {response}"));
    assert!(state.starts_with("v1."), "{state}");
    assert_eq!(
        result,
        json!({"resultType": "input_required", "inputRequests": {"ask_color": color_request()},
               "_meta": server_info()}),
        "{response}"
    );
    state
}

fn valid_states_still_work(transport: Transport) {
    let mut probe = Probe::start(transport, KEY_A, &format!("valid-{transport:?}"));
    let a = genuine();
    let answer = json!({"ask_color": {"action": "accept", "content": {"color": "red"}}});
    // A genuine round trip: the tool and the prompt that ask complete with the state they
    // were given.
    for (target, expected) in [
        (
            &TARGETS[0],
            json!({"resultType": "complete",
                   "content": [{"type": "text", "text": "Painted the cup red."}],
                   "structuredContent": {"result": "Painted the cup red."}, "isError": false,
                   "_meta": server_info()}),
        ),
        (
            &TARGETS[3],
            json!({"resultType": "complete", "description": "A prompt about an item in the color the user picks.",
                   "messages": [{"role": "user", "content": {"type": "text", "text": "Imagine a red cup."}}],
                   "_meta": server_info()}),
        ),
    ] {
        let mut params = target.params(Value::Null);
        params.as_object_mut().unwrap().remove("requestState");
        let state = asks_color(&probe.request(target.method, params));
        let mut retry = target.params(json!(state));
        retry["inputResponses"] = answer.clone();
        assert_eq!(probe.request(target.method, retry)["result"], expected);
    }
    // A valid state on requests that do not need one: accepted and ignored.
    let sealed = |target: &Target| {
        json!(seal(
            &a,
            target.method,
            target.name,
            &target.arguments(),
            &fresh_inner()
        ))
    };
    let expected = [
        json!({"resultType": "complete",
               "content": [{"type": "text", "text": "Label for the cup: CUP"}],
               "structuredContent": {"result": "Label for the cup: CUP"}, "isError": false,
               "_meta": server_info()}),
        json!({"resultType": "complete",
               "content": [{"type": "text", "text": "Mood is now sunny."}],
               "structuredContent": {"result": "Mood is now sunny."}, "isError": false,
               "_meta": server_info()}),
        json!({"resultType": "complete", "description": "A prompt written in code that asks nothing.",
               "messages": [{"role": "user", "content": {"type": "text", "text": "Name the cup."}}],
               "_meta": server_info()}),
        json!({"resultType": "complete", "description": "A prompt with fixed content.",
               "messages": [{"role": "user", "content": {"type": "text", "text": "Say something plain."}}],
               "_meta": server_info()}),
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
               "contents": [{"uri": "probe://items/cup", "mimeType": "text/plain", "text": "A note about the cup."}],
               "_meta": server_info()}),
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
               "contents": [{"uri": "probe://mood", "mimeType": "text/plain", "text": "sunny"}],
               "_meta": server_info()}),
        json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private",
               "contents": [{"uri": "probe://note", "mimeType": "text/plain", "text": "A fixed note."}],
               "_meta": server_info()}),
    ];
    let others = [1, 2, 4, 5, 6, 7, 8].map(|i| &TARGETS[i]);
    for (target, expected) in others.into_iter().zip(expected) {
        let response = probe.request(target.method, target.params(sealed(target)));
        assert_eq!(
            response["result"], expected,
            "{} {}",
            target.method, target.name
        );
    }
    // The state for a tool that asks, with no progress recorded: the question again.
    asks_color(&probe.request("tools/call", TARGETS[0].params(sealed(&TARGETS[0]))));
    assert_eq!(
        probe.all_runs(),
        vec![
            ("ask_color", 5),
            ("ask_size", 0),
            ("describe", 0),
            ("shout", 1),
            ("tool:make", 0),
            ("tool:paint", 1),
            ("tool:label", 1),
            ("tool:set_mood", 1),
            ("prompt:tint", 1),
            ("prompt:name_it", 1),
            ("resource:mood", 1),
            ("resource:item", 1),
        ]
    );
    probe.stop();
}

fn unusable_inner_state_is_no_progress(transport: Transport) {
    let mut probe = Probe::start(transport, KEY_A, &format!("inner-{transport:?}"));
    let a = genuine();
    let answer = json!({"ask_color": {"action": "accept", "content": {"color": "red"}}});
    for target in [&TARGETS[0], &TARGETS[3]] {
        let arguments = target.arguments();
        let digest = arguments_digest(arguments.as_object());
        let binding = Binding {
            method: target.method,
            tool: target.name,
            arguments: &digest,
            principal: None,
        };
        // Round 1 seals the question asked; open it with the probe's key.
        let mut params = target.params(Value::Null);
        params.as_object_mut().unwrap().remove("requestState");
        let state = asks_color(&probe.request(target.method, params));
        let inner = a
            .open(&state, binding)
            .expect("the probe's own state opens");
        assert_eq!(inner["v"], 1, "{inner}");
        assert!(inner["asked"]["ask_color"].is_string(), "{inner}");
        // Authentic states (our key, this request) whose inner state a round cannot use: the
        // answer sent with them is discarded and the question asked again, never an error.
        let mut other_version = inner.clone();
        other_version["v"] = json!(2);
        let mut malformed = inner.clone();
        malformed["outcomes"] = json!("none");
        let mut unversioned = inner.clone();
        unversioned.as_object_mut().unwrap().remove("v");
        for unusable in [
            other_version,
            malformed,
            unversioned,
            json!("garbage"),
            json!(null),
        ] {
            let mut retry = target.params(json!(a.seal(binding, &unusable).unwrap()));
            retry["inputResponses"] = answer.clone();
            asks_color(&probe.request(target.method, retry));
        }
        // The same inner state resealed unchanged is progress: the answer is used.
        let mut retry = target.params(json!(a.seal(binding, &inner).unwrap()));
        retry["inputResponses"] = answer.clone();
        let response = probe.request(target.method, retry);
        assert_eq!(response["result"]["resultType"], "complete", "{response}");
    }
    // Per target: round 1, five rounds without progress, the completing round.
    assert_eq!(probe.runs("ask_color"), 14);
    assert_eq!(
        (probe.runs("tool:paint"), probe.runs("prompt:tint")),
        (1, 1)
    );
    assert!(
        !probe.log().contains("rejected requestState"),
        "{}",
        probe.log()
    );
    probe.stop();
}

/// Defines `mod <case> { stdio, http }` tests that run `fn <case>(Transport)` over both
/// transports.
macro_rules! over_both_transports {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[test]
                fn stdio() {
                    super::$case(super::Transport::Stdio)
                }
                #[test]
                fn http() {
                    super::$case(super::Transport::Http)
                }
            }
        )*
    };
}

over_both_transports!(
    bad_states_are_rejected_before_anything_runs,
    a_state_from_another_process_with_another_key_is_rejected,
    valid_states_still_work,
    unusable_inner_state_is_no_progress,
);

/// Legacy connections carry no `requestState`, but one that comes anyway is verified the same
/// way (the Python SDK's boundary does not look at the protocol version).
#[test]
fn a_state_on_a_legacy_connection_is_verified_too() {
    let mut probe = Probe::start(Transport::Stdio, KEY_A, "legacy");
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let response = probe.send("initialize", &initialize);
    assert_eq!(response["result"]["protocolVersion"], "2025-11-25");
    let Wire::Stdio { stdin, .. } = &mut probe.wire else {
        unreachable!()
    };
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for (id, state) in [(1, json!("not a state")), (2, json!(7))] {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "set_mood", "arguments": {"mood": "x"}, "requestState": state}});
        assert_eq!(probe.send("tools/call", &call), frozen(&json!(id)));
    }
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "set_mood", "arguments": {"mood": "x"}}});
    assert_eq!(
        probe.send("tools/call", &call)["result"]["content"],
        json!([{"type": "text", "text": "Mood is now x."}])
    );
    probe.stop();
}
