//! The typed model of a validated spec: what every emitter reads. Built once
//! ([`build::build`]); resolvers, tools, prompts, resources and templates sit in index vectors
//! (spec order) and refer to each other by typed id, so nothing downstream looks a name up.
//! The documents the server advertises are decided here too ([`wire`]), and each `asks` kind is
//! one descriptor ([`asks`]).

pub mod build;
mod json;
pub mod wire;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

pub use crate::spec::asks::{self, AskKind};
pub use build::build;

use crate::graph::ArgType;
use crate::spec::{Annotations, Image, Notifications, Role};

/// Declares an index newtype into one of the model's vectors, and `model[id]`.
macro_rules! ids {
    ($($(#[$doc:meta])* $id:ident => $field:ident: $item:ty;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $id(u32);

        impl $id {
            /// The position in the model's vector (and in the spec).
            pub fn index(self) -> usize {
                self.0 as usize
            }

            pub(crate) fn at(i: usize) -> Self {
                $id(u32::try_from(i).expect("a spec has fewer than 2^32 entries"))
            }
        }

        impl std::ops::Index<$id> for Model {
            type Output = $item;
            fn index(&self, id: $id) -> &$item {
                &self.$field[id.index()]
            }
        }
    )*};
}

ids! {
    /// A resolver.
    ResolverId => resolvers: Resolver;
    /// A tool.
    ToolId => tools: Tool;
    /// A prompt.
    PromptId => prompts: Prompt;
    /// A fixed resource.
    ResourceId => resources: Resource;
    /// A resource template.
    TemplateId => templates: Template;
}

/// The whole server.
#[derive(Debug, Clone, Serialize)]
pub struct Model {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// Human-readable title.
    pub title: Option<String>,
    /// Server instructions.
    pub instructions: Option<String>,
    /// `$defs`, by name, in spec order.
    pub defs: IndexMap<String, Value>,
    /// Resolvers, in spec order ([`ResolverId`]).
    pub resolvers: Vec<Resolver>,
    /// Tools, in spec order ([`ToolId`]).
    pub tools: Vec<Tool>,
    /// Prompts, in spec order ([`PromptId`]).
    pub prompts: Vec<Prompt>,
    /// Fixed resources, in spec order ([`ResourceId`]).
    pub resources: Vec<Resource>,
    /// Resource templates, in spec order ([`TemplateId`]).
    pub templates: Vec<Template>,
    /// Every type that can be asked for with a form, each once, with its `requestedSchema`.
    #[serde(skip)]
    pub forms: Vec<Form>,
    /// What the server advertises.
    pub capabilities: Capabilities,
    /// The spec's `auth`: what calling the server needs; `None` without one.
    pub auth: Option<Auth>,
    /// The spec's server-wide `limits` (all absent without one).
    #[serde(skip_serializing_if = "Limits::is_empty")]
    pub limits: Limits,
}

/// The spec's server-wide `limits`, in the types of the runtime's `Operations` (validation
/// keeps every value in range: at least 1, a count at most `u32::MAX`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// `timeoutMs`: a tool call's default timeout, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// `maxConcurrency`: requests running at once, server-wide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// `maxRequestBytes`: the largest HTTP request body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_request_bytes: Option<u64>,
    /// `maxSessions`: legacy HTTP sessions open at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sessions: Option<u32>,
    /// `sessionIdleTimeoutMs`: a legacy HTTP session's idle timeout, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_idle_timeout_ms: Option<u64>,
}

/// The runtime's legacy-session defaults (`runtime/src/transport/sessions.rs`: `DEFAULT_IDLE_TIMEOUT`,
/// `DEFAULT_MAX_SESSIONS`), for the generated docs; a test keeps them equal.
const DEFAULT_IDLE_TIMEOUT_MS: u64 = 30 * 60 * 1000;
const DEFAULT_MAX_SESSIONS: u32 = 3500;

impl Limits {
    /// True when no limit is declared.
    pub fn is_empty(&self) -> bool {
        *self == Limits::default()
    }

    /// How the server treats legacy HTTP sessions, for the generated docs: `legacy sessions
    /// closed after 30 minutes idle and at most 3,500 of them` (the spec's limits, else the
    /// runtime's defaults).
    pub fn sessions_phrase(&self) -> String {
        let idle = self
            .session_idle_timeout_ms
            .unwrap_or(DEFAULT_IDLE_TIMEOUT_MS);
        let max = self.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS);
        format!(
            "legacy sessions closed after {} idle and at most {} of them",
            spoken_ms(idle),
            grouped(u64::from(max))
        )
    }
}

/// `1800000` → `30 minutes`, `1500` → `1500 ms`: the largest whole unit.
fn spoken_ms(ms: u64) -> String {
    let units = [(3_600_000, "hour"), (60_000, "minute"), (1000, "second")];
    for (size, unit) in units {
        if ms.is_multiple_of(size) {
            let n = ms / size;
            return format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
        }
    }
    format!("{ms} ms")
}

/// `3500` → `3,500`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The server's authorization requirements (the spec's `auth`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Auth {
    /// Every request needs a verified principal (`auth.required`, default true): a principal
    /// resolver parameter is then `&Principal`, else `Option<&Principal>`.
    pub required: bool,
    /// The scopes every request needs, each once, in spec order.
    pub scopes: Vec<String>,
    /// What the protected-resource metadata lists: `auth.scopesSupported` as written (each
    /// once), else every scope the spec names, sorted.
    pub scopes_supported: Vec<String>,
    /// The lists show only what the caller may use.
    pub list_visible_only: bool,
}

impl Model {
    /// The model as JSON, every id replaced by the name it stands for (`mcpgen plan`).
    pub fn to_json(&self) -> Value {
        json::named(self)
    }

    /// The prompts written in code (without fixed `messages`).
    pub fn code_prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter().filter(|p| p.messages.is_none())
    }

    /// The fixed resources read in code.
    pub fn code_resources(&self) -> impl Iterator<Item = &Resource> {
        self.resources
            .iter()
            .filter(|r| matches!(r.content, Content::Code))
    }

    /// True when some resource or template is read in code (the `Resources` trait exists).
    pub fn reads_in_code(&self) -> bool {
        self.code_resources().next().is_some() || !self.templates.is_empty()
    }

    /// True when some resolver takes a `"principal"` parameter.
    pub fn uses_principal(&self) -> bool {
        (self.resolvers.iter().flat_map(|r| &r.params))
            .any(|p| matches!(p, Param::Principal { .. }))
    }

    /// True when some resolver of `chain` may ask a question (so the chain runs in rounds).
    pub fn asks(&self, chain: &Chain) -> bool {
        chain.run_order.iter().any(|r| self[*r].asks.is_some())
    }

    /// Every tool and prompt chain, tools first.
    pub fn chains(&self) -> impl Iterator<Item = &Chain> {
        self.tools
            .iter()
            .map(|t| &t.chain)
            .chain(self.prompts.iter().map(|p| &p.chain))
    }
}

/// The capabilities a server advertises: exactly what its spec serves.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Capabilities {
    /// Some prompt exists.
    pub prompts: bool,
    /// Some resource or template exists.
    pub resources: bool,
    /// Some prompt argument or template variable offers completions.
    pub completions: bool,
    /// The spec's `logging`.
    pub logging: bool,
    /// The spec's `notifications`.
    pub notifications: Notifications,
}

/// What runs before a tool's or prompt's method: its resolved parameters and resolvers.
#[derive(Debug, Clone, Serialize)]
pub struct Chain {
    /// Resolved parameters, in spec order.
    pub bindings: Vec<Binding>,
    /// Every resolver needed, each once, in a valid run order.
    pub run_order: Vec<ResolverId>,
}

/// A resolved parameter of a tool or prompt.
#[derive(Debug, Clone, Serialize)]
pub struct Binding {
    /// Parameter name.
    pub param: String,
    /// The resolver.
    pub resolver: ResolverId,
    /// True when the method receives the whole elicitation outcome.
    pub outcome: bool,
}

/// Who runs a resolver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Consumer {
    /// A tool.
    Tool(ToolId),
    /// A prompt.
    Prompt(PromptId),
}

/// One tool.
#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    /// Its id.
    #[serde(skip)]
    pub id: ToolId,
    /// Name in the spec (and on the wire).
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: String,
    /// Annotations.
    pub annotations: Option<Annotations>,
    /// The `inputSchema` advertised ([`crate::refs::self_contained`]).
    pub input_schema: Value,
    /// The argument names the model supplies, in order.
    pub args: Vec<String>,
    /// The output, when the spec declares one.
    pub output: Option<Output>,
    /// The scopes calling it needs beyond the server-wide ones, each once, in spec order.
    pub scopes: Vec<String>,
    /// Its own `timeoutMs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Its own `maxConcurrency`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// Its resolvers.
    #[serde(flatten)]
    pub chain: Chain,
}

/// A tool's output.
#[derive(Debug, Clone, Serialize)]
pub struct Output {
    /// The spec's `output` schema.
    pub schema: Value,
    /// True when the value is wrapped as `{"result": value}` (any non-object schema).
    pub wrapped: bool,
    /// The `outputSchema` advertised ([`wire::advertised_output`]).
    pub output_schema: Value,
}

/// One resolver.
#[derive(Debug, Clone, Serialize)]
pub struct Resolver {
    /// Its id.
    #[serde(skip)]
    pub id: ResolverId,
    /// Name in the spec.
    pub name: String,
    /// Doc comment.
    pub description: Option<String>,
    /// Parameters, in order.
    pub params: Vec<Param>,
    /// The schema of the value (absent when the kind of question fixes the value's type).
    pub returns: Option<Value>,
    /// The question it may ask.
    #[serde(serialize_with = "asks::serialize")]
    pub asks: Option<&'static AskKind>,
    /// Whether any tool or prompt uses it.
    pub used: bool,
    /// The tools, then the prompts, that run it.
    #[serde(skip)]
    pub consumers: Vec<Consumer>,
}

impl Resolver {
    /// True when it asks `elicit` (its value reaches dependents as an `Outcome`).
    pub fn outcome(&self) -> bool {
        self.asks.is_some_and(|a| a.outcome)
    }
}

/// A resolver parameter and its source.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum Param {
    /// The consuming tool's argument of the same name.
    Arg {
        /// Parameter (and argument) name.
        name: String,
        /// Its type, the same in every consumer.
        #[serde(rename = "type")]
        ty: ArgTypeView,
        /// False when some consumer may lack a value (not required, no default).
        always: bool,
    },
    /// The request context.
    Context {
        /// Parameter name.
        name: String,
    },
    /// The verified caller (`&Principal`, or `Option<&Principal>` when authorization is not
    /// required).
    Principal {
        /// Parameter name.
        name: String,
    },
    /// Another resolver's value.
    Resolver {
        /// Parameter name.
        name: String,
        /// The resolver.
        resolver: ResolverId,
    },
}

impl Param {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        match self {
            Param::Arg { name, .. }
            | Param::Context { name }
            | Param::Principal { name }
            | Param::Resolver { name, .. } => name,
        }
    }
}

/// An argument type, as serialized in the model.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "kind", content = "of", rename_all = "lowercase")]
pub enum ArgTypeView {
    /// string, integer, number or boolean.
    Primitive(String),
    /// A `$defs` type.
    Ref(String),
    /// Another schema.
    Schema(Value),
}

impl From<ArgType> for ArgTypeView {
    fn from(t: ArgType) -> Self {
        match t {
            ArgType::Primitive(p) => ArgTypeView::Primitive(p),
            ArgType::Ref(r) => ArgTypeView::Ref(r),
            ArgType::Schema(s) => ArgTypeView::Schema(s),
        }
    }
}

/// One prompt.
#[derive(Debug, Clone, Serialize)]
pub struct Prompt {
    /// Its id.
    #[serde(skip)]
    pub id: PromptId,
    /// Name in the spec (and on the wire).
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: String,
    /// Arguments, in order.
    pub arguments: Vec<PromptArg>,
    /// The fixed messages; `None` when the prompt is written in code.
    pub messages: Option<Vec<Message>>,
    /// The scopes getting it needs beyond the server-wide ones, each once, in spec order.
    pub scopes: Vec<String>,
    /// Its resolvers.
    #[serde(flatten)]
    pub chain: Chain,
}

/// One prompt argument (a string on the wire).
#[derive(Debug, Clone, Serialize)]
pub struct PromptArg {
    /// Name.
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// Must be supplied.
    pub required: bool,
    /// Completion candidates.
    pub complete: Vec<String>,
}

/// One fixed prompt message.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Message {
    /// Text with `{argument}` placeholders.
    Text {
        /// Who speaks.
        role: Role,
        /// The template.
        text: String,
    },
    /// An image.
    Image {
        /// Who speaks.
        role: Role,
        /// The image.
        image: Image,
    },
    /// An embedded fixed resource.
    Resource {
        /// Who speaks.
        role: Role,
        /// Its URI.
        uri: String,
    },
}

/// A fixed resource.
#[derive(Debug, Clone, Serialize)]
pub struct Resource {
    /// Its id.
    #[serde(skip)]
    pub id: ResourceId,
    /// URI.
    pub uri: String,
    /// Name.
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Fixed content, or read in code.
    pub content: Content,
    /// The scopes reading it needs beyond the server-wide ones, each once, in spec order.
    pub scopes: Vec<String>,
}

/// Where a resource's content comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Content {
    /// Fixed text.
    Text(String),
    /// Fixed base64 data.
    Blob(String),
    /// A method of the `Resources` trait.
    Code,
}

/// A resource template.
#[derive(Debug, Clone, Serialize)]
pub struct Template {
    /// Its id.
    #[serde(skip)]
    pub id: TemplateId,
    /// The URI template.
    pub uri_template: String,
    /// Name.
    pub name: String,
    /// UI title.
    pub title: Option<String>,
    /// Description.
    pub description: Option<String>,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Its variables, in order.
    pub variables: Vec<String>,
    /// Completion candidates per variable.
    pub complete: IndexMap<String, Vec<String>>,
    /// Variables exempt from the path-safety checks.
    pub exempt_from_path_checks: Vec<String>,
    /// The scopes reading a matching URI needs beyond the server-wide ones, each once, in spec
    /// order.
    pub scopes: Vec<String>,
}

/// A type that can be asked for with a form, and the `requestedSchema` sent for it.
#[derive(Debug, Clone)]
pub struct Form {
    /// Whose type it is.
    pub of: FormOf,
    /// The `requestedSchema` ([`wire::form_document`]).
    pub document: Value,
}

/// Whose type a form is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormOf {
    /// A `$defs` type (by position in `$defs`).
    Def(usize),
    /// The inline `returns` type of an `elicit` resolver.
    Resolver(ResolverId),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sessions_phrase_says_the_spec_limits_else_the_runtime_defaults() {
        assert_eq!(
            Limits::default().sessions_phrase(),
            "legacy sessions closed after 30 minutes idle and at most 3,500 of them"
        );
        let limits = Limits {
            max_sessions: Some(1_000_000),
            session_idle_timeout_ms: Some(90_000),
            ..Limits::default()
        };
        assert_eq!(
            limits.sessions_phrase(),
            "legacy sessions closed after 90 seconds idle and at most 1,000,000 of them"
        );
        let limits = Limits {
            max_sessions: Some(1),
            session_idle_timeout_ms: Some(1500),
            ..Limits::default()
        };
        assert_eq!(
            limits.sessions_phrase(),
            "legacy sessions closed after 1500 ms idle and at most 1 of them"
        );
        assert_eq!(spoken_ms(3_600_000), "1 hour");
        assert_eq!(spoken_ms(60_000), "1 minute");
    }

    #[test]
    fn the_session_defaults_are_the_runtimes() {
        let sessions = include_str!("../../runtime/src/transport/sessions.rs");
        assert!(sessions.contains(&format!(
            "pub(crate) const DEFAULT_MAX_SESSIONS: u32 = {DEFAULT_MAX_SESSIONS};"
        )));
        assert_eq!(DEFAULT_IDLE_TIMEOUT_MS, 30 * 60 * 1000);
        assert!(sessions.contains(
            "pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);"
        ));
    }
}
