//! `mcpgen dev` drives a crate's edit loop: it builds and serves the crate, regenerates,
//! rebuilds and restarts it after a spec edit (the new tool listed, its stub appended), keeps
//! the last good server running through a spec with errors, and stops it on SIGINT, exiting 0.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{root, target_dir, without_test_variables, workspace};

/// The tool names a 2026-07-28 `tools/list` on `port` answers, or `None` when nothing answers.
fn tool_names(port: u16) -> Option<Vec<String>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"dev-test","version":"0"}}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (_, json) = answer.split_once("\r\n\r\n")?;
    let message: Value = serde_json::from_str(json.trim()).ok()?;
    let tools = message["result"]["tools"].as_array()?;
    Some(
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_string())
            .collect(),
    )
}

/// Polls `until` every 200 ms for at most `limit`; panics with `what` and the loop's output.
fn wait_for(what: &str, limit: Duration, log: &Mutex<String>, mut until: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if until() {
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!(
        "{what} within {limit:?}; mcpgen dev said:\n{}",
        log.lock().unwrap()
    );
}

/// Kills `mcpgen dev` and the server it started when the test ends early (a failed
/// assertion), so that neither outlives it and watches the next run's crate.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.0.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && matches!(self.0.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn dev_rebuilds_and_restarts_on_a_spec_edit_and_stops_on_sigint() {
    let ws = root().join(format!("target/dev-loop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&ws);
    std::fs::create_dir_all(&ws).unwrap();
    workspace(&ws, &["devloop"]);
    let made = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(["new", "devloop", "--spec"])
        .arg(root().join("specs/bookshop.json"))
        .arg("--runtime-path")
        .arg(root().join("runtime"))
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let krate = ws.join("devloop");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();

    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpgen"));
    without_test_variables(&mut command);
    let mut dev = command
        .args([
            "dev",
            "--",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--log-level",
            "error",
        ])
        .current_dir(krate.join("src"))
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = Arc::new(Mutex::new(String::new()));
    let stderr = BufReader::new(dev.stderr.take().unwrap());
    let mut dev = Running(dev);
    let sink = Arc::clone(&log);
    let reader = std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let mut log = sink.lock().unwrap();
            log.push_str(&line);
            log.push('\n');
        }
    });

    let bookshop = [
        "search_books",
        "add_book",
        "reserve_book",
        "order_book",
        "recommend_book",
    ];
    let build = Duration::from_secs(900);
    wait_for("the first build served", build, &log, || {
        tool_names(port).is_some_and(|names| names == bookshop)
    });

    // A new tool in the spec: regenerated, its stub appended, rebuilt, restarted.
    let spec_path = krate.join("spec.json");
    let mut spec: Value =
        serde_json::from_str(&std::fs::read_to_string(&spec_path).unwrap()).unwrap();
    spec["tools"]["ping_shop"] = json!({
        "description": "Is the shop open?",
        "input": {"type": "object", "properties": {}}
    });
    std::fs::write(&spec_path, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
    let mut with_ping: Vec<String> = bookshop.iter().map(|s| s.to_string()).collect();
    with_ping.push("ping_shop".into());
    wait_for("the new tool served", build, &log, || {
        tool_names(port).is_some_and(|names| names == with_ping)
    });
    let handlers = std::fs::read_to_string(krate.join("src/handlers.rs")).unwrap();
    assert!(handlers.contains("async fn ping_shop("), "{handlers}");
    {
        let log = log.lock().unwrap();
        assert!(
            log.contains("mcpgen dev: a change: regenerating\n"),
            "{log}"
        );
        assert!(
            log.contains("changed: src/handlers.rs (stubs added for tool `ping_shop`)\n"),
            "{log}"
        );
    }

    // A spec with an error: the diagnostic is printed, the last good server keeps serving.
    std::fs::write(&spec_path, "{\"name\": \"Bookshop\",\n  \"tools\": 5\n}\n").unwrap();
    wait_for(
        "the spec's error reported",
        Duration::from_secs(60),
        &log,
        || {
            log.lock()
                .unwrap()
                .contains("keeps running the last build; waiting for a change")
        },
    );
    assert_eq!(tool_names(port), Some(with_ping.clone()));
    assert!(
        log.lock().unwrap().contains("error[wrong-type]"),
        "{}",
        log.lock().unwrap()
    );

    // SIGINT: the server stopped, the loop exits 0.
    let signalled = Command::new("kill")
        .args(["-INT", &dev.0.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = dev.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "mcpgen dev did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    reader.join().unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.ends_with("mcpgen dev: stopped\n"), "{log}");
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the server still listens after the loop stopped"
    );
    let _ = std::fs::remove_dir_all(Path::new(&ws));
}
