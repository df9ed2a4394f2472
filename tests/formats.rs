//! Formats end to end, in a crate generated from a spec of our own: resolvers that take `"arg"`
//! parameters with `format: uuid` (required and optional) compile; `format` is asserted on the
//! arguments (each violation named by its pointer, in one `isError` result); and a `date-time`
//! with an offset reaches the handler and comes back exactly as the caller wrote it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use common::root;

fn spec() -> Value {
    json!({
        "name": "Calendar",
        "version": "1.0.0",
        "resolvers": {
            "event_title": {"params": {"event_id": "arg"}, "returns": {"type": "string"}},
            "owner_name": {"params": {"owner_id": "arg"}, "returns": {"type": "string"}}
        },
        "tools": {
            "reschedule": {
                "description": "Move an event.",
                "input": {
                    "type": "object",
                    "properties": {
                        "event_id": {"type": "string", "format": "uuid"},
                        "owner_id": {"type": "string", "format": "uuid"},
                        "starts_at": {"type": "string", "format": "date-time"},
                        "on": {"type": "string", "format": "date"},
                        "contact": {"type": "string", "format": "email"},
                        "link": {"type": "string", "format": "uri"}
                    },
                    "required": ["event_id", "starts_at"]
                },
                "output": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string"},
                        "owner": {"type": "string"},
                        "starts_at": {"type": "string", "format": "date-time"}
                    },
                    "required": ["title", "owner", "starts_at"]
                },
                "resolve": {"title": "event_title", "owner": "owner_name"}
            }
        }
    })
}

/// The behaviour, replacing the stubs `mcpgen new` wrote (whose signatures it keeps).
const HANDLERS: &str = r#"//! The Calendar server's behaviour (written by tests/formats.rs).

use crate::generated::types;
use crate::generated::{Context, Resolvers, ToolError, Tools};

/// No state.
#[derive(Debug, Default)]
pub struct Calendar {}

impl Resolvers for Calendar {
    async fn event_title(
        &self,
        _ctx: &Context,
        event_id: &::uuid::Uuid,
    ) -> Result<String, ToolError> {
        Ok(format!("event {event_id}"))
    }

    async fn owner_name(
        &self,
        _ctx: &Context,
        owner_id: Option<&::uuid::Uuid>,
    ) -> Result<String, ToolError> {
        Ok(owner_id.map_or_else(|| "nobody".to_string(), |id| format!("owner {id}")))
    }
}

impl Tools for Calendar {
    async fn reschedule(
        &self,
        _ctx: &Context,
        args: types::RescheduleArgs,
        title: String,
        owner: String,
    ) -> Result<types::RescheduleOutput, ToolError> {
        Ok(types::RescheduleOutput {
            title,
            owner,
            starts_at: args.starts_at,
        })
    }
}
"#;

fn mcpgen(dir: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds the crate in `dir` (in the examples' target dir, with their lock file, so their
/// compiled dependencies are reused) and returns its binary.
fn build(dir: &Path) -> PathBuf {
    std::fs::copy(
        root().join("generated-examples/Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    let out = common::cargo(
        dir,
        &["build", "--quiet", "--message-format=short"],
        common::Lints::None,
    );
    assert!(
        out.status.success(),
        "the crate does not build:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // No warnings either.
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    common::target_dir().join("debug/calendar")
}

/// A server over stdio, spoken to line by line.
struct Server {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(binary: &Path) -> Self {
        let mut child = Command::new(binary)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            input,
            output,
            next_id: 0,
        };
        let init = server.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: Value) {
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "server closed"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// The `result` of a `tools/call` of `reschedule`.
    fn reschedule(&mut self, arguments: Value) -> Value {
        let response = self.request(
            "tools/call",
            json!({"name": "reschedule", "arguments": arguments}),
        );
        response["result"].clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn error_text(result: &Value) -> &str {
    assert_eq!(result["isError"], json!(true), "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn formats_are_asserted_and_typed_values_keep_what_the_caller_sent() {
    let tmp = std::env::temp_dir().join(format!("mcpgen-formats-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let spec_path = tmp.join("calendar.json");
    std::fs::write(&spec_path, spec().to_string()).unwrap();
    mcpgen(
        &tmp,
        &[
            "new",
            "calendar",
            "--spec",
            spec_path.to_str().unwrap(),
            "--runtime-path",
            root().join("runtime").to_str().unwrap(),
        ],
    );
    let dir = tmp.join("calendar");
    std::fs::write(dir.join("src/handlers.rs"), HANDLERS).unwrap();
    let binary = build(&dir);

    let mut server = Server::start(&binary);
    let id = "123e4567-e89b-12d3-a456-426614174000";
    // The offset the caller wrote comes back unchanged (not converted to UTC).
    let result =
        server.reschedule(json!({"event_id": id, "starts_at": "2026-03-01T09:30:00+09:00"}));
    assert_eq!(
        result["structuredContent"],
        json!({"title": format!("event {id}"), "owner": "nobody", "starts_at": "2026-03-01T09:30:00+09:00"}),
        "{result}"
    );
    assert_eq!(result["isError"], json!(false));
    let owner = "00000000-0000-4000-8000-000000000001";
    let result = server.reschedule(
        json!({"event_id": id, "owner_id": owner, "starts_at": "1999-12-31T23:59:59.250-05:30"}),
    );
    assert_eq!(
        result["structuredContent"],
        json!({"title": format!("event {id}"), "owner": format!("owner {owner}"), "starts_at": "1999-12-31T23:59:59.250-05:30"}),
        "{result}"
    );

    // Each format violation is named by its pointer; all of them in one result.
    for (arguments, text) in [
        (
            json!({"event_id": "not-a-uuid", "starts_at": "2026-03-01T09:30:00+09:00"}),
            r#"Error executing tool reschedule: /event_id (format): "not-a-uuid" is not a "uuid""#,
        ),
        (
            json!({"event_id": id, "starts_at": "2026-03-01 09:30"}),
            r#"Error executing tool reschedule: /starts_at (format): "2026-03-01 09:30" is not a "date-time""#,
        ),
        (
            json!({"event_id": id, "starts_at": "2026-03-01T09:30:00Z", "contact": "nobody"}),
            r#"Error executing tool reschedule: /contact (format): "nobody" is not a "email""#,
        ),
        (
            json!({"event_id": id, "starts_at": "2026-03-01T09:30:00Z", "link": "not a uri"}),
            r#"Error executing tool reschedule: /link (format): "not a uri" is not a "uri""#,
        ),
        (
            json!({"event_id": id, "owner_id": "x", "starts_at": "2026-03-01T09:30:00Z", "on": "2026-13-01"}),
            "Error executing tool reschedule: /on (format): \"2026-13-01\" is not a \"date\"\n/owner_id (format): \"x\" is not a \"uuid\"",
        ),
    ] {
        assert_eq!(
            error_text(&server.reschedule(arguments.clone())),
            text,
            "{arguments}"
        );
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&tmp);
}
