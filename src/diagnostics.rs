//! Located diagnostics: what went wrong, where (file, line:column, JSON pointer), and about
//! which tool, resolver or parameter, and of which kind (the [`Code`] enum, the one list of
//! codes); rendered with an excerpt of the spec.

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

/// Defines [`Code`]: each variant with its string form and severity, and the list of all
/// of them.
macro_rules! codes {
    ($($(#[$doc:meta])* $variant:ident => $text:literal, $severity:ident,)*) => {
        /// The kind of a finding: a stable identifier, shown as `error[<code>]` and as `"code"`
        /// in JSON output. Each code and its text are written once, below; docs/spec.md lists
        /// them all (a test keeps the two lists equal).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($(#[$doc])* $variant,)*
        }

        impl Code {
            /// Every code, in the order of their texts.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as output shows it, e.g. `unknown-resolver`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $text,)*
                }
            }

            /// How bad a finding of this kind is: each code is either always an error or
            /// always a warning.
            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }
        }
    };
}

codes! {
    /// A tool has `annotations` but no `title`.
    AnnotationsWithoutTitle => "annotations-without-title", Warning,
    /// Two consumers reaching a resolver type one of its `"arg"` parameters differently.
    ArgTypeMismatch => "arg-type-mismatch", Error,
    /// A JSON object has the same key twice.
    DuplicateKey => "duplicate-key", Error,
    /// A field of an elicitation form is not a primitive (string, number, integer, boolean or enum).
    ElicitNonPrimitive => "elicit-non-primitive", Error,
    /// The `returns` of an `elicit` resolver is not an object with `properties`.
    ElicitNotObject => "elicit-not-object", Error,
    /// A tool's `input` does not have `"type": "object"` at its root.
    InputNotObject => "input-not-object", Error,
    /// A prompt image's `data` or a resource's `blob` is not base64.
    InvalidBase64 => "invalid-base64", Error,
    /// A `resolve` binding is neither a resolver name nor a binding object.
    InvalidBinding => "invalid-binding", Error,
    /// A `default` its own schema refuses.
    InvalidDefault => "invalid-default", Error,
    /// A name that cannot become a Rust identifier.
    InvalidIdentifier => "invalid-identifier", Error,
    /// The spec is not JSON.
    InvalidJson => "invalid-json", Error,
    /// A fixed prompt message without exactly one kind of content.
    InvalidMessage => "invalid-message", Error,
    /// A resolver parameter source that is none of the four kinds.
    InvalidParamSource => "invalid-param-source", Error,
    /// A malformed `{placeholder}` in a prompt message.
    InvalidPlaceholder => "invalid-placeholder", Error,
    /// A prompt name outside the tool-name pattern.
    InvalidPromptName => "invalid-prompt-name", Error,
    /// A `$ref` that is not a string.
    InvalidRef => "invalid-ref", Error,
    /// A value that is not a JSON Schema where one is expected, or a tool schema the validator
    /// cannot compile.
    InvalidSchema => "invalid-schema", Error,
    /// A scope that is not an RFC 6749 scope-token.
    InvalidScope => "invalid-scope", Error,
    /// The spec does not decode into the format's model.
    InvalidSpec => "invalid-spec", Error,
    /// A resource template variable that is not a name.
    InvalidTemplate => "invalid-template", Error,
    /// A tool name outside the tool-name pattern.
    InvalidToolName => "invalid-tool-name", Error,
    /// A value the format does not allow there.
    InvalidValue => "invalid-value", Error,
    /// A file could not be read or written (not about the spec's content).
    Io => "io", Error,
    /// A limit (in `limits`, or a tool's `timeoutMs` / `maxConcurrency`) below 1.
    LimitNotPositive => "limit-not-positive", Error,
    /// A count above 4294967295 or a time above 365 days.
    LimitTooLarge => "limit-too-large", Error,
    /// `limits.maxRequestBytes` below 1024.
    LimitTooSmall => "limit-too-small", Error,
    /// A resolver takes an `"arg"` that a consumer reaching it lacks.
    MissingArg => "missing-arg", Error,
    /// A key the format requires is missing.
    MissingKey => "missing-key", Error,
    /// A resolver that produces a value, or asks `elicit`, lacks `returns`.
    MissingReturns => "missing-returns", Error,
    /// Two things become the same Rust identifier, type or field.
    NameCollision => "name-collision", Error,
    /// `$defs` or `definitions` below the root of a schema.
    NestedDefs => "nested-defs", Error,
    /// `outcome: true` on a resolver that does not ask `elicit`.
    OutcomeWithoutElicit => "outcome-without-elicit", Error,
    /// A `"principal"` parameter in a spec without `auth`.
    PrincipalWithoutAuth => "principal-without-auth", Error,
    /// `required` names no property.
    RequiredNotAProperty => "required-not-a-property", Warning,
    /// A prompt with fixed `messages` also has `resolve`.
    ResolveWithMessages => "resolve-with-messages", Error,
    /// A resolved parameter is also an input property or prompt argument.
    ResolvedIsInput => "resolved-is-input", Error,
    /// Resolvers take values from one another in a cycle.
    ResolverCycle => "resolver-cycle", Error,
    /// A resource has both `text` and `blob`.
    ResourceContent => "resource-content", Error,
    /// A sub-schema is typed wider than it is written.
    SchemaTypedWider => "schema-typed-wider", Warning,
    /// A tool, prompt, resource or template has `scopes` in a spec without `auth`.
    ScopesWithoutAuth => "scopes-without-auth", Error,
    /// A tool's `maxConcurrency` is above `limits.maxConcurrency`.
    ToolConcurrencyAboveServer => "tool-concurrency-above-server", Warning,
    /// A parameter name starts with `_`.
    UnderscoreParameter => "underscore-parameter", Error,
    /// A key the format does not have.
    UnknownKey => "unknown-key", Error,
    /// A prompt message placeholder naming no argument.
    UnknownPlaceholder => "unknown-placeholder", Error,
    /// A binding or parameter source naming no resolver.
    UnknownResolver => "unknown-resolver", Error,
    /// A fixed prompt message embeds no fixed resource of the spec.
    UnknownResource => "unknown-resource", Error,
    /// `exemptFromPathChecks` or `complete` names no variable of the template.
    UnknownVariable => "unknown-variable", Error,
    /// A scope required but not listed in `auth.scopesSupported`.
    UnlistedScope => "unlisted-scope", Error,
    /// A `$ref` to a `$defs` type that does not exist.
    UnresolvedRef => "unresolved-ref", Error,
    /// A `$ref` that is not `#/$defs/<Name>` (other documents, URLs, JSON pointers).
    UnsupportedRef => "unsupported-ref", Error,
    /// A schema construct that cannot be typed as written.
    UnsupportedSchema => "unsupported-schema", Error,
    /// A resolver no tool or prompt uses.
    UnusedResolver => "unused-resolver", Warning,
    /// A resolver that asks `sample` or `roots` has `returns`.
    UnusedReturns => "unused-returns", Error,
    /// A value of the wrong JSON type.
    WrongType => "wrong-type", Error,
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
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
    /// The kind of finding, e.g. [`Code::UnknownResolver`].
    pub code: Code,
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
    /// An error of kind `code` (a code whose [`Code::severity`] is an error).
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        debug_assert_eq!(code.severity(), Severity::Error, "{code} is a warning");
        Self::new(Severity::Error, code, message)
    }

    /// A warning of kind `code` (a code whose [`Code::severity`] is a warning).
    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        debug_assert_eq!(code.severity(), Severity::Warning, "{code} is an error");
        Self::new(Severity::Warning, code, message)
    }

    /// An error reading or writing a file (not about the spec's content).
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(Severity::Error, Code::Io, message)
    }

    fn new(severity: Severity, code: Code, message: impl Into<String>) -> Self {
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

    /// True when the run failed to read or write a file ([`Code::Io`]) rather than on the
    /// spec's content (the command line exits with its usage status then).
    pub fn is_io(&self) -> bool {
        self.diagnostics.iter().any(|d| d.code == Code::Io)
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
            .with_code(d.code.as_str())
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
