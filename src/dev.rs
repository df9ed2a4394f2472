//! `mcpgen dev`: the edit loop of a crate mcpgen made. It regenerates the crate from its spec
//! (user code kept, notes shown), builds it with cargo and (re)starts the server; then it
//! watches the spec and the crate's own sources (`src/` outside `src/generated/`, `build.rs`,
//! `Cargo.toml`) and does it again on every change. A spec with errors, or code that does not
//! compile, prints its diagnostics and leaves the running server as it is until the next
//! change. Ctrl-C (SIGINT) or SIGTERM stops the server (SIGTERM first, so it drains) and ends
//! the loop with status 0.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crate::write::{self, WriteError};

/// How often the watched files are looked at.
const POLL: Duration = Duration::from_millis(250);
/// How long a stopped server may take to exit before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// What `mcpgen dev` runs.
#[derive(Debug, Clone)]
pub struct DevOptions {
    /// The crate's directory.
    pub crate_dir: PathBuf,
    /// The server's arguments (`--transport http` is added when they name no transport).
    pub server_args: Vec<String>,
}

/// Runs the loop until Ctrl-C or SIGTERM. `Err` when it cannot start: the crate's spec is not
/// recorded, or the signal handler cannot be installed.
pub fn run(options: &DevOptions) -> Result<(), WriteError> {
    let spec = write::spec_path_of(&options.crate_dir)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
        .map_err(|e| WriteError::Usage(format!("cannot watch for Ctrl-C: {e}")))?;
    // Served over HTTP unless the arguments name a transport.
    let mut args = options.server_args.clone();
    if !args
        .iter()
        .any(|a| a == "--transport" || a.starts_with("--transport="))
    {
        args.splice(0..0, ["--transport".to_string(), "http".to_string()]);
    }
    let mut server: Option<Child> = None;
    let mut seen = fingerprint(&options.crate_dir, &spec);
    cycle(&options.crate_dir, &args, &mut server);
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(POLL);
        if let Some(child) = &mut server
            && let Ok(Some(status)) = child.try_wait()
        {
            say(&format!(
                "mcpgen dev: the server exited ({status}); waiting for a change\n"
            ));
            server = None;
        }
        if fingerprint(&options.crate_dir, &spec) != seen {
            say("mcpgen dev: a change: regenerating\n");
            cycle(&options.crate_dir, &args, &mut server);
            // What the cycle itself wrote (generated code, appended stubs) is not a change.
            seen = fingerprint(&options.crate_dir, &spec);
        }
    }
    if let Some(child) = server.take() {
        stop_server(child);
    }
    say("mcpgen dev: stopped\n");
    Ok(())
}

/// One round: regenerate, build, and restart the server when the build gives a binary.
fn cycle(crate_dir: &Path, args: &[String], server: &mut Option<Child>) {
    match write::generate(crate_dir, true, false, &[]) {
        Ok(generated) => {
            if !generated.report.diagnostics.is_empty() {
                say(&generated.report.render_human());
            }
            for change in generated.changes.iter().chain(&generated.docs) {
                say(&format!("changed: {} ({})\n", change.path, change.what));
            }
            for note in &generated.notes {
                say(&format!("note: {note}\n"));
            }
        }
        Err(WriteError::Spec(report)) => {
            say(&report.render_human());
            say(&still_serving(server));
            return;
        }
        Err(WriteError::Usage(message)) => {
            say(&format!("error: {message}\n"));
            say(&still_serving(server));
            return;
        }
    }
    let Some(binary) = build(crate_dir) else {
        say(&still_serving(server));
        return;
    };
    if let Some(child) = server.take() {
        stop_server(child);
    }
    match Command::new(&binary)
        .args(args)
        .current_dir(crate_dir)
        .stdin(Stdio::null())
        .spawn()
    {
        Ok(child) => {
            say(&format!(
                "mcpgen dev: serving (pid {}): {} {}\n",
                child.id(),
                binary.display(),
                args.join(" ")
            ));
            *server = Some(child);
        }
        Err(e) => say(&format!("error: cannot start {}: {e}\n", binary.display())),
    }
}

/// `cargo build` of the crate (its diagnostics on standard error, as cargo renders them); the
/// crate's binary, or `None` when the build failed.
fn build(crate_dir: &Path) -> Option<PathBuf> {
    let mut child = match Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--message-format=json-render-diagnostics"])
        .current_dir(crate_dir)
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            say(&format!("error: cannot run cargo: {e}\n"));
            return None;
        }
    };
    let mut binary = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if message["reason"] == "compiler-artifact"
                && let Some(executable) = message["executable"].as_str()
            {
                binary = Some(PathBuf::from(executable));
            }
        }
    }
    match child.wait() {
        Ok(status) if status.success() => {
            if binary.is_none() {
                say("error: cargo built no binary for this crate\n");
            }
            binary
        }
        Ok(_) => None,
        Err(e) => {
            say(&format!("error: cargo did not finish: {e}\n"));
            None
        }
    }
}

/// Stops the server: SIGTERM (it drains), then SIGKILL past [`STOP_GRACE`].
fn stop_server(mut child: Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: `kill` only sends a signal to the process we started (and still hold).
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// What is served after a failed round.
fn still_serving(server: &Option<Child>) -> String {
    match server {
        Some(child) => format!(
            "mcpgen dev: the server (pid {}) keeps running the last build; waiting for a change\n",
            child.id()
        ),
        None => "mcpgen dev: waiting for a change\n".to_string(),
    }
}

/// What the loop watches, as (path, length, modification time): the spec, `Cargo.toml`,
/// `build.rs` and every file under `src/` but `src/generated/`.
fn fingerprint(crate_dir: &Path, spec: &Path) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    let mut files = vec![
        spec.to_path_buf(),
        crate_dir.join("Cargo.toml"),
        crate_dir.join("build.rs"),
    ];
    let generated = crate_dir.join("src/generated");
    let mut dirs = vec![crate_dir.join("src")];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path != generated {
                    dirs.push(path);
                }
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let meta = std::fs::metadata(&path).ok();
            let len = meta.as_ref().map_or(0, std::fs::Metadata::len);
            let modified = meta.and_then(|m| m.modified().ok());
            (path, len, modified)
        })
        .collect()
}

fn say(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
