//! What the tests that build generated crates share: one target directory, and one way to run
//! cargo on those crates.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target directory of every crate the suite generates and builds: the examples' own. With
/// the examples' lock file (each test's workspace copies it) the dependencies are compiled once,
/// as `cargo build` compiles them, for the examples and all these crates (a second target
/// directory, or `cargo check` / `cargo clippy` next to `cargo build`, compiled them all again).
/// Crates of the same package name must not share it: their binaries would take each other's
/// place in `debug/`.
pub fn target_dir() -> PathBuf {
    root().join("generated-examples/target")
}

/// Whether [`cargo`] lints the crates it compiles.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lints {
    /// clippy's lints, warnings denied, as `cargo clippy -- -D warnings` (clippy's driver
    /// compiles the workspace's members, with code generation: the binaries come out of the
    /// same compilation, and the dependencies are built as by `cargo build`).
    Clippy,
    /// rustc alone.
    None,
}

/// Removes the outputs of the crates whose names start with one of `prefixes` (package names,
/// `-` or `_`) from the debug profile of [`target_dir`]: binaries, test binaries, libraries and
/// their dep-info files. Their fingerprints stay; cargo builds a unit whose output is missing
/// again.
pub fn remove_outputs(prefixes: &[&str]) {
    let debug = target_dir().join("debug");
    let ours = |name: &str| {
        let name = name.strip_prefix("lib").unwrap_or(name).replace('_', "-");
        prefixes
            .iter()
            .any(|p| name.starts_with(&p.replace('_', "-")))
    };
    for dir in [debug.clone(), debug.join("deps")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().is_ok_and(|t| t.is_file()) && ours(&name) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// `cargo ARGS` in `dir` (a generated crate or a workspace of them), in [`target_dir`], not
/// with the suite's own compiler settings (`RUSTFLAGS`, and the clippy driver the suite sets for
/// its own crates, unless `lints` asks for it).
pub fn cargo(dir: &Path, args: &[&str], lints: Lints) -> Output {
    let mut command = Command::new(env!("CARGO"));
    without_test_variables(&mut command);
    command
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env("CARGO_TERM_COLOR", "never")
        .env_remove("RUSTFLAGS");
    match lints {
        Lints::Clippy => {
            let driver = Path::new(env!("CARGO")).with_file_name("clippy-driver");
            assert!(driver.exists(), "no {}", driver.display());
            command.env("RUSTC_WORKSPACE_WRAPPER", driver).env(
                "CLIPPY_ARGS",
                "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
            );
        }
        Lints::None => {
            command
                .env_remove("RUSTC_WORKSPACE_WRAPPER")
                .env_remove("CLIPPY_ARGS");
        }
    }
    command.output().unwrap()
}

/// Removes from `command`'s environment the variables `cargo test` sets for a test process (of
/// the test's own package). A build script may watch one (ring's watches `CARGO_MANIFEST_DIR`):
/// inherited, the next build outside the tests (the examples', the peers') would find it
/// changed and compile that crate, and everything that depends on it, again.
pub fn without_test_variables(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let of_the_test = ["CARGO_MANIFEST_", "CARGO_PKG_", "CARGO_BIN_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
            || [
                "CARGO_CRATE_NAME",
                "CARGO_TARGET_TMPDIR",
                "CARGO_PRIMARY_PACKAGE",
                "OUT_DIR",
            ]
            .contains(&name.as_ref());
        if of_the_test {
            command.env_remove(name.as_ref());
        }
    }
}

/// Makes `ws` a cargo workspace of `members` (names of directories in it) with the examples'
/// lock file: the same dependency versions as the examples, nothing new to download.
pub fn workspace(ws: &Path, members: &[&str]) {
    let members: Vec<String> = members.iter().map(|m| format!("\"{m}\"")).collect();
    std::fs::write(
        ws.join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"3\"\nmembers = [{}]\n",
            members.join(", ")
        ),
    )
    .unwrap();
    std::fs::copy(
        root().join("generated-examples/Cargo.lock"),
        ws.join("Cargo.lock"),
    )
    .unwrap();
}

/// A legacy JSON-RPC session with a generated server over stdio (the handshake done as client
/// `client`); the server is killed when it is dropped.
pub struct StdioSession {
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl StdioSession {
    pub fn start(client: &str, bin: &Path) -> Self {
        let mut child = Command::new(bin)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = StdioSession {
            child,
            stdout,
            next: 1,
        };
        s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": client, "version": "1"}}),
        );
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    pub fn send(&mut self, message: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends `method` with `params` and returns the answer to it.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed stdout"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    }
}

impl Drop for StdioSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mcpgen check --format json SPEC` with the generator at `mcpgen`: its exit code and the
/// diagnostics it printed.
pub fn check_json(mcpgen: &Path, spec: &Path) -> (i32, Vec<Value>) {
    let out = Command::new(mcpgen)
        .args(["check", "--format", "json"])
        .arg(spec)
        .output()
        .unwrap();
    let found: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: {}",
            spec.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), found)
}
