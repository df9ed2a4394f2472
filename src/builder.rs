//! build.rs mode: generate a crate's code into `OUT_DIR` from its build script, in the style of
//! prost-build and tonic-build.
//!
//! ```text
//! // build.rs
//! fn main() {
//!     mcpgen::Builder::new("spec.json").compile_or_exit();
//! }
//! ```
//! and in `src/main.rs`:
//! ```text
//! mod generated {
//!     include!(concat!(env!("OUT_DIR"), "/mcpgen/generated.rs"));
//! }
//! ```
//! The same code as `mcpgen generate` writes into `src/generated/mod.rs`, as one file for
//! `include!`, written only when its bytes change; its `runtime` is the crate `mcpgen-runtime`,
//! a dependency of the crate (vendored by `mcpgen new` by default, as for `generate`). Spec errors become `cargo::error=` lines with
//! the spec's file:line:column.

use std::path::{Path, PathBuf};

use crate::check::check_file;
use crate::diagnostics::Report;
use crate::emit::module::generated_module;
pub use crate::write::crate_files::BUNDLE;
use crate::write::stamp::{short_hash, stamp};
use crate::write::write_if_changed;

/// Configures generation from a build script.
#[derive(Debug, Clone)]
pub struct Builder {
    spec: PathBuf,
    out_dir: Option<PathBuf>,
    emit_rerun_if_changed: bool,
}

/// Why generation failed.
#[derive(Debug)]
pub enum BuildError {
    /// The spec is invalid.
    Spec(Report),
    /// Anything else (missing `OUT_DIR`, I/O).
    Other(String),
}

impl Builder {
    /// Generation from `spec` (relative paths are relative to `CARGO_MANIFEST_DIR`).
    pub fn new(spec: impl Into<PathBuf>) -> Self {
        Builder {
            spec: spec.into(),
            out_dir: None,
            emit_rerun_if_changed: true,
        }
    }

    /// Where to write (default: `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Whether to print `cargo::rerun-if-changed` for the spec (default: true).
    pub fn emit_rerun_if_changed(mut self, yes: bool) -> Self {
        self.emit_rerun_if_changed = yes;
        self
    }

    fn spec_path(&self) -> PathBuf {
        match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(dir) if self.spec.is_relative() => Path::new(&dir).join(&self.spec),
            _ => self.spec.clone(),
        }
    }

    /// Generates; returns the path of the bundle.
    pub fn compile(&self) -> Result<PathBuf, BuildError> {
        let spec = self.spec_path();
        if self.emit_rerun_if_changed && spec.exists() {
            // Only for a file that exists (a missing path would rerun the script every build).
            println!("cargo::rerun-if-changed={}", spec.display());
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| {
                BuildError::Other(
                    "OUT_DIR is not set: call the Builder from a build script, or set out_dir"
                        .into(),
                )
            })?),
        };
        let checked = check_file(&spec).map_err(BuildError::Spec)?;
        let spec_name = self.spec.to_string_lossy().replace('\\', "/");
        let text = checked.loaded.source.text().to_string();
        let module = generated_module(&checked.model, &checked.types).map_err(BuildError::Other)?;
        let bundle = bundle(&stamp(&module, &spec_name, &short_hash(text.as_bytes())));
        let path = out_dir.join(BUNDLE);
        write_if_changed(&path, &bundle)
            .map_err(|e| BuildError::Other(format!("cannot write {}: {e}", path.display())))?;
        for d in checked.report.diagnostics.iter() {
            println!("cargo::warning={}", one_line(&checked.report, d));
        }
        Ok(path)
    }

    /// [`compile`](Self::compile), printing every error as a `cargo::error=` line and exiting
    /// with status 1 on failure: what a build script wants.
    pub fn compile_or_exit(&self) {
        match self.compile() {
            Ok(_) => {}
            Err(BuildError::Spec(report)) => {
                for d in &report.diagnostics {
                    let kind = if d.is_error() { "error" } else { "warning" };
                    println!("cargo::{kind}={}", one_line(&report, d));
                }
                std::process::exit(1);
            }
            Err(BuildError::Other(message)) => {
                println!("cargo::error=mcpgen: {message}");
                std::process::exit(1);
            }
        }
    }
}

/// `file:line:col: message (at /pointer; help)` on one line.
fn one_line(report: &Report, d: &crate::diagnostics::Diagnostic) -> String {
    let mut s = match report.location(d) {
        Some(loc) => format!("{loc}: {}", d.message),
        None => d.message.clone(),
    };
    if let Some(p) = &d.pointer {
        s.push_str(&format!(" (at {p})"));
    }
    if let Some(h) = &d.help {
        s.push_str(&format!("; help: {h}"));
    }
    s.replace('\n', " ")
}

/// The generated module as one file for `include!`: its inner doc comments dropped (an included
/// file cannot carry them).
pub fn bundle(module: &str) -> String {
    let mut out = String::new();
    for line in module.lines().filter(|line| !line.starts_with("//!")) {
        out.push_str(line);
        out.push('\n');
    }
    out
}
