//! Every generation-time check of the spec format beyond its structure, one concern per module:
//! names (`names.rs`), authorization (`auth.rs`: `"principal"` parameters and `scopes`), prompts (`prompts.rs`), resources and templates (`resources.rs`), the
//! bindings of tools and prompts (`bindings.rs`), resolver parameter sources and `"arg"`
//! agreement between consumers (`sources.rs`), what `returns` must be (`returns.rs`), resolver
//! cycles (`cycles.rs`), elicitation forms (`forms.rs`), references in schemas (`refs.rs`),
//! the spec's limits (`limits.rs`), warnings (`warnings.rs`) and checks inside JSON Schemas (`schemas.rs`). All findings of a run
//! are collected; none stops the others.
//!
//! The resolver graph the checks walk is [`crate::graph`] and the flat-form rule is
//! [`crate::forms`]; this module owns only the findings, how they are worded and where they
//! point (the `Validator` helpers below).

mod auth;
mod bindings;
mod cycles;
mod forms;
mod limits;
mod names;
mod prompts;
mod refs;
mod resources;
mod returns;
mod schemas;
mod sources;
mod warnings;

use std::collections::HashMap;

use serde_json::Value;

use crate::diagnostics::{Code, Diagnostic, Related};
use crate::pointer::Pointer;
use crate::source::SourceFile;
use crate::spec::{LoadedSpec, Spec};

/// Tool names MCP clients accept (and that fit Claude Desktop's limit).
pub const TOOL_NAME_PATTERN: &str = "^[A-Za-z0-9_.-]{1,64}$";

/// Runs every semantic check; returns errors and warnings in the order found.
pub fn validate(loaded: &LoadedSpec) -> Vec<Diagnostic> {
    let mut v = Validator {
        spec: &loaded.spec,
        src: &loaded.source,
        out: Vec::new(),
        type_names: HashMap::new(),
    };
    v.names();
    v.prompts();
    v.resources();
    v.bindings();
    v.resolvers();
    v.auth();
    v.cycles();
    v.arg_sources();
    v.refs();
    v.limits();
    v.warnings();
    v.out.extend(schemas::check(v.spec, v.src));
    if !v
        .out
        .iter()
        .any(|d| d.severity == crate::diagnostics::Severity::Error)
    {
        // Last, so that a schema with a reference already refused is not reported twice.
        v.out.extend(schemas::compiles(v.spec, v.src));
    }
    v.out
}

/// The checks' shared state: the spec, its text (for locations) and the findings so far.
struct Validator<'a> {
    spec: &'a Spec,
    src: &'a SourceFile,
    out: Vec<Diagnostic>,
    /// Rust type name -> what it is for, where, and how to rename it, to report two things
    /// becoming one type ([`Validator::type_name`]).
    type_names: HashMap<String, (String, Pointer, String)>,
}

fn tool_ptr(tool: &str) -> Pointer {
    Pointer::from_segments(["tools", tool])
}

fn resolver_ptr(r: &str) -> Pointer {
    Pointer::from_segments(["resolvers", r])
}

impl Validator<'_> {
    /// Pushes an error located at the value at `at`.
    fn err(&mut self, code: Code, msg: String, at: Pointer) -> &mut Diagnostic {
        let span = self.src.span_of(&at);
        self.out.push(Diagnostic::error(code, msg).at(at, span));
        self.out.last_mut().expect("just pushed")
    }

    /// Pushes an error located at the key of the member at `at`.
    fn err_key(&mut self, code: Code, msg: String, at: Pointer) -> &mut Diagnostic {
        let span = self.src.key_span_of(&at);
        self.out.push(Diagnostic::error(code, msg).at(at, span));
        self.out.last_mut().expect("just pushed")
    }

    /// The last diagnostic pushed.
    fn last(&mut self) -> &mut Diagnostic {
        self.out.last_mut().expect("a diagnostic was pushed")
    }

    /// Points the last diagnostic also at the value at `at`, with `message`.
    fn also(&mut self, at: Pointer, message: impl Into<String>) {
        let span = self.src.span_of(&at);
        self.last().secondary.push(Related {
            pointer: at,
            span,
            message: message.into(),
        });
    }

    /// Points the last diagnostic also at the key of the member at `at`, with `message`.
    fn also_key(&mut self, at: Pointer, message: impl Into<String>) {
        let span = self.src.key_span_of(&at);
        self.last().secondary.push(Related {
            pointer: at,
            span,
            message: message.into(),
        });
    }

    /// Sets what the last diagnostic's primary label says.
    fn label(&mut self, message: impl Into<String>) {
        self.last().primary_label = Some(message.into());
    }
}

/// A schema for a message, cut to 120 characters.
fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(119).collect::<String>())
    } else {
        s
    }
}

/// Why `text` is not base64 (standard alphabet, padded), if it is not.
fn base64_problem(text: &str) -> Option<String> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .err()
        .map(|e| e.to_string())
}
