//! Located diagnostics: what went wrong, where (file, line:column, JSON pointer), and about
//! which tool, resolver or parameter; rendered with an excerpt of the spec.

use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic as Rendered, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, Chars, Config};
use serde::Serialize;

use crate::pointer::Pointer;
use crate::source::{LineCol, SourceFile};

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The spec cannot be used.
    Error,
    /// The spec can be used, but something looks wrong.
    Warning,
}

/// Something a diagnostic is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "lowercase")]
pub enum Subject {
    /// A tool, by name.
    Tool(String),
    /// A resolver, by name.
    Resolver(String),
    /// A parameter (of a tool or a resolver), by name.
    Parameter(String),
    /// A `$defs` type, by name.
    Type(String),
    /// A prompt, by name.
    Prompt(String),
    /// A resource or resource template, by URI (template).
    Resource(String),
}

/// One finding about a spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// A stable identifier of the kind of finding, e.g. `unknown-resolver`.
    pub code: &'static str,
    /// The message, naming what is involved.
    pub message: String,
    /// The JSON pointer of the offending item.
    #[serde(serialize_with = "ser_pointer")]
    pub pointer: Option<Pointer>,
    /// Byte range in the spec text.
    #[serde(skip)]
    pub span: Option<Range<usize>>,
    /// The tools, resolvers, parameters and types involved.
    pub subjects: Vec<Subject>,
    /// A suggestion, e.g. the closest known name.
    pub help: Option<String>,
    /// Extra lines, e.g. the offending schema.
    pub notes: Vec<String>,
    /// What the primary label (at `pointer`) says under the excerpt, when the diagnostic also
    /// points at other places.
    #[serde(skip)]
    pub primary_label: Option<String>,
    /// The other places the finding relates (a tool beside the resolver parameter at fault,
    /// the first of two colliding names, ...), each with what it says about that place.
    #[serde(skip)]
    pub secondary: Vec<Related>,
}

/// Another place a diagnostic relates, shown as a secondary label.
#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    /// The JSON pointer of that place.
    pub pointer: Pointer,
    /// Byte range in the spec text.
    pub span: Range<usize>,
    /// What the label says.
    pub message: String,
}

fn ser_pointer<S: serde::Serializer>(p: &Option<Pointer>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_some(p.as_str()),
        None => s.serialize_none(),
    }
}

impl Diagnostic {
    /// An error of kind `code`.
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }

    /// A warning of kind `code`.
    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }

    /// An error reading or writing a file (not about the spec's content).
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(Severity::Error, "io", message)
    }

    fn new(severity: Severity, code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code,
            message: message.into(),
            pointer: None,
            span: None,
            subjects: Vec::new(),
            help: None,
            notes: Vec::new(),
            primary_label: None,
            secondary: Vec::new(),
        }
    }

    /// Sets the location.
    pub fn at(mut self, pointer: Pointer, span: Range<usize>) -> Self {
        self.pointer = Some(pointer);
        self.span = Some(span);
        self
    }

    /// Adds a subject.
    pub fn about(mut self, subject: Subject) -> Self {
        self.subjects.push(subject);
        self
    }

    /// Sets the help line.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Sets what the primary label says.
    pub fn label(mut self, message: impl Into<String>) -> Self {
        self.primary_label = Some(message.into());
        self
    }

    /// Adds a secondary label at another place.
    pub fn related(
        mut self,
        pointer: Pointer,
        span: Range<usize>,
        message: impl Into<String>,
    ) -> Self {
        self.secondary.push(Related {
            pointer,
            span,
            message: message.into(),
        });
        self
    }

    /// Adds a note line.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The diagnostics of one run over one spec file.
#[derive(Debug, Clone)]
pub struct Report {
    /// The spec file, when it could be read.
    pub source: Option<SourceFile>,
    /// Findings, in the order they were found.
    pub diagnostics: Vec<Diagnostic>,
}

/// One diagnostic as `--format json` prints it.
#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    #[serde(flatten)]
    diagnostic: &'a Diagnostic,
    /// Every place the diagnostic points at: the primary one (the fields above) first, then
    /// the related ones.
    labels: Vec<JsonLabel>,
}

/// One label as `--format json` prints it.
#[derive(Serialize)]
struct JsonLabel {
    primary: bool,
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    pointer: String,
    message: String,
}

impl Report {
    /// An empty report about `source`.
    pub fn new(source: Option<SourceFile>) -> Self {
        Report {
            source,
            diagnostics: Vec::new(),
        }
    }

    /// A report of one diagnostic.
    pub fn single(source: Option<SourceFile>, d: Diagnostic) -> Self {
        Report {
            source,
            diagnostics: vec![d],
        }
    }

    /// Adds a diagnostic.
    pub fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    /// True when any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// Line and column where `d` starts, when it has a location.
    pub fn line_col(&self, d: &Diagnostic) -> Option<LineCol> {
        let source = self.source.as_ref()?;
        d.span.as_ref().map(|s| source.line_col(s.start))
    }

    /// `file:line:col` of `d`, or just the file.
    pub fn location(&self, d: &Diagnostic) -> Option<String> {
        let source = self.source.as_ref()?;
        let path = source.path().display();
        Some(match self.line_col(d) {
            Some(lc) => format!("{path}:{}:{}", lc.line, lc.column),
            None => path.to_string(),
        })
    }

    /// Renders every diagnostic for a terminal, with excerpts of the spec, then a summary line.
    pub fn render_human(&self) -> String {
        let mut out = String::new();
        let config = Config {
            chars: Chars::ascii(),
            ..Config::default()
        };
        let file = self
            .source
            .as_ref()
            .map(|s| SimpleFile::new(s.path().display().to_string(), s.text()));
        for d in &self.diagnostics {
            let mut r = match d.severity {
                Severity::Error => Rendered::error(),
                Severity::Warning => Rendered::warning(),
            }
            .with_code(d.code)
            .with_message(&d.message);
            if let (Some(_), Some(span)) = (&file, &d.span) {
                let primary = Label::primary((), span.clone())
                    .with_message(d.primary_label.clone().unwrap_or_default());
                let others = d
                    .secondary
                    .iter()
                    .map(|l| Label::secondary((), l.span.clone()).with_message(&l.message));
                r = r.with_labels(std::iter::once(primary).chain(others).collect());
            }
            let mut notes = Vec::new();
            if let Some(p) = &d.pointer {
                notes.push(format!("at {p}"));
            }
            notes.extend(d.notes.iter().cloned());
            if let Some(h) = &d.help {
                notes.push(format!("help: {h}"));
            }
            r = r.with_notes(notes);
            let text = match &file {
                Some(f) => term::emit_into_string(&config, f, &r),
                None => term::emit_into_string(&config, &SimpleFile::new("", ""), &r),
            };
            match text {
                Ok(t) => out.push_str(&t),
                Err(_) => {
                    // The span does not fit the file (cannot happen for spans we computed);
                    // still say what is wrong.
                    out.push_str(&format!("{:?}[{}]: {}\n", d.severity, d.code, d.message));
                }
            }
        }
        let errors = self.errors().count();
        let warnings = self.diagnostics.len() - errors;
        let name = self
            .source
            .as_ref()
            .map(|s| s.path().display().to_string())
            .unwrap_or_default();
        out.push_str(&format!(
            "{name}: {errors} error{}, {warnings} warning{}\n",
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" },
        ));
        out
    }

    /// Renders every diagnostic as one JSON array (for editors and CI).
    pub fn render_json(&self) -> String {
        let items: Vec<JsonDiagnostic<'_>> = self
            .diagnostics
            .iter()
            .map(|d| {
                let lc = self.line_col(d);
                let file = self.source.as_ref().map(|s| s.path().display().to_string());
                let at = |span: &Range<usize>| self.source.as_ref().map(|s| s.line_col(span.start));
                let primary = d.pointer.as_ref().map(|p| JsonLabel {
                    primary: true,
                    file: file.clone(),
                    line: lc.map(|l| l.line),
                    column: lc.map(|l| l.column),
                    pointer: p.as_str().to_string(),
                    message: d.primary_label.clone().unwrap_or_default(),
                });
                let labels = primary
                    .into_iter()
                    .chain(d.secondary.iter().map(|l| {
                        let lc = at(&l.span);
                        JsonLabel {
                            primary: false,
                            file: file.clone(),
                            line: lc.map(|l| l.line),
                            column: lc.map(|l| l.column),
                            pointer: l.pointer.as_str().to_string(),
                            message: l.message.clone(),
                        }
                    }))
                    .collect();
                JsonDiagnostic {
                    file,
                    line: lc.map(|l| l.line),
                    column: lc.map(|l| l.column),
                    diagnostic: d,
                    labels,
                }
            })
            .collect();
        serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".into()) + "\n"
    }
}
