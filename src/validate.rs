//! Every generation-time check of spec-v1.md beyond the format's structure: names, bindings,
//! resolver sources, cycles, `"arg"` agreement between consuming tools, schemas and elicitation
//! forms. All findings of a run are collected; none stops the others.

mod schemas;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use crate::diagnostics::{Diagnostic, Related, Subject};
use crate::names::{self, closest};
use crate::pointer::Pointer;
use crate::source::SourceFile;
use crate::spec::{
    Asks, Binding, LoadedSpec, ParamSource, Resolver, SourceKeyword, Spec, Tool, template_variables,
};

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
    v.cycles();
    v.arg_sources();
    v.schemas();
    v.warnings();
    v.out.extend(schemas::check(v.spec, v.src));
    v.out
}

struct Validator<'a> {
    spec: &'a Spec,
    src: &'a SourceFile,
    out: Vec<Diagnostic>,
    /// Rust type name -> what it is for, to report two things becoming one type.
    type_names: HashMap<String, (String, Pointer, String)>,
}

fn tool_ptr(tool: &str) -> Pointer {
    Pointer::from_segments(["tools", tool])
}

/// What resolvers serve: a tool, or a prompt seen as a tool whose input is its arguments.
#[derive(Debug, Clone)]
pub struct Consumer<'a> {
    /// Tool or prompt.
    pub kind: ConsumerKind,
    /// Its name in the spec.
    pub name: &'a str,
    /// The tool, or the prompt as a tool ([`crate::spec::Prompt::as_tool`]).
    pub tool: Cow<'a, Tool>,
}

/// The two kinds of resolver consumers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsumerKind {
    /// A tool.
    Tool,
    /// A prompt.
    Prompt,
}

impl ConsumerKind {
    /// `tool` or `prompt`.
    pub fn noun(self) -> &'static str {
        match self {
            ConsumerKind::Tool => "tool",
            ConsumerKind::Prompt => "prompt",
        }
    }
}

impl Consumer<'_> {
    /// Where it is in the spec.
    pub fn ptr(&self) -> Pointer {
        let section = match self.kind {
            ConsumerKind::Tool => "tools",
            ConsumerKind::Prompt => "prompts",
        };
        Pointer::from_segments([section, self.name])
    }

    /// The diagnostic subject naming it.
    pub fn subject(&self) -> Subject {
        match self.kind {
            ConsumerKind::Tool => Subject::Tool(self.name.to_string()),
            ConsumerKind::Prompt => Subject::Prompt(self.name.to_string()),
        }
    }

    /// `tool `x`` or `prompt `x``, for messages.
    pub fn describe(&self) -> String {
        format!("{} `{}`", self.kind.noun(), self.name)
    }
}

/// Every tool, then every prompt, in spec order.
pub fn consumers(spec: &Spec) -> Vec<Consumer<'_>> {
    let tools = spec.tools.iter().map(|(name, t)| Consumer {
        kind: ConsumerKind::Tool,
        name,
        tool: Cow::Borrowed(t),
    });
    let prompts = spec.prompts.iter().map(|(name, p)| Consumer {
        kind: ConsumerKind::Prompt,
        name,
        tool: Cow::Owned(p.as_tool()),
    });
    tools.chain(prompts).collect()
}

/// A text's `{name}` placeholders, in order, or why the text is malformed (`{{` and `}}` are
/// literal braces).
pub fn placeholders(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some('{') | None => {
                            return Err(format!(
                                "`{{{name}` is not closed by `}}` (write `{{{{` for a literal brace)"
                            ));
                        }
                        Some(c) => name.push(c),
                    }
                }
                if name.is_empty() {
                    return Err("`{}` names no argument (write `{{}}` for literal braces)".into());
                }
                out.push(name);
            }
            '}' => return Err("a lone `}` (write `}}` for a literal brace)".into()),
            _ => {}
        }
    }
    Ok(out)
}

fn resolver_ptr(r: &str) -> Pointer {
    Pointer::from_segments(["resolvers", r])
}

/// Why `text` is not base64 (standard alphabet, padded), if it is not.
fn base64_problem(text: &str) -> Option<String> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .err()
        .map(|e| e.to_string())
}

/// The type of a tool argument as a resolver sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgType {
    /// A primitive JSON type: string, integer, number or boolean.
    Primitive(String),
    /// A `$defs` type.
    Ref(String),
    /// Any other schema, compared whole.
    Schema(Value),
}

impl std::fmt::Display for ArgType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgType::Primitive(t) => write!(f, "{t}"),
            ArgType::Ref(r) => write!(f, "#/$defs/{r}"),
            ArgType::Schema(s) => write!(f, "{s}"),
        }
    }
}

/// The type of property `name` of a tool's input, and whether the tool always has a value for it
/// (required, or with a default). `None` when the tool has no such argument.
pub fn arg_type(tool: &Tool, name: &str) -> Option<(ArgType, bool)> {
    let input = tool.input.as_ref()?;
    let prop = input.get("properties")?.get(name)?;
    let always = input
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|x| x == name))
        || prop.get("default").is_some();
    let ty = if let Some(r) = prop.get("$ref").and_then(Value::as_str) {
        ArgType::Ref(r.trim_start_matches("#/$defs/").to_string())
    } else {
        match prop.get("type").and_then(Value::as_str) {
            // A string with a `format` may have a type of its own (`uuid::Uuid`, ...): the
            // format is part of the type, so every consumer must agree on it.
            Some("string") if prop.get("format").is_some() => ArgType::Schema(serde_json::json!({
                "type": "string",
                "format": prop["format"],
            })),
            // An integer typed `serde_json::Value` (bounds past `i64`) is passed as that value.
            Some("integer")
                if prop
                    .as_object()
                    .and_then(crate::emit::typing::integer_beyond)
                    .is_some() =>
            {
                ArgType::Schema(strip_annotations(prop))
            }
            Some(t @ ("string" | "integer" | "number" | "boolean")) => ArgType::Primitive(t.into()),
            _ => ArgType::Schema(strip_annotations(prop)),
        }
    };
    Some((ty, always))
}

/// A schema without the keywords that do not change what it accepts.
fn strip_annotations(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "description" | "title" | "examples"))
                .map(|(k, v)| (k.clone(), strip_annotations(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_annotations).collect()),
        other => other.clone(),
    }
}

/// Input property names of a tool, in order.
pub fn input_properties(tool: &Tool) -> Vec<String> {
    tool.input
        .as_ref()
        .and_then(|i| i.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// The resolvers a tool needs, directly or through other resolvers, each once, in a valid run
/// order (every resolver after the resolvers it takes values from). Unknown resolvers and
/// cycles are skipped (they are reported elsewhere).
pub fn run_order(spec: &Spec, tool: &Tool) -> Vec<String> {
    fn visit(spec: &Spec, name: &str, done: &mut Vec<String>, active: &mut HashSet<String>) {
        if done.iter().any(|d| d == name) || active.contains(name) {
            return;
        }
        let Some(r) = spec.resolvers.get(name) else {
            return;
        };
        active.insert(name.to_string());
        for dep in resolver_deps(r) {
            visit(spec, dep, done, active);
        }
        active.remove(name);
        done.push(name.to_string());
    }
    let mut done = Vec::new();
    let mut active = HashSet::new();
    for binding in tool.resolve.values() {
        visit(spec, binding.resolver(), &mut done, &mut active);
    }
    done
}

/// The resolvers a resolver takes values from, in parameter order.
pub fn resolver_deps(r: &Resolver) -> impl Iterator<Item = &str> {
    r.params.values().filter_map(|s| match s {
        ParamSource::Resolver(rs) => Some(rs.resolver.as_str()),
        ParamSource::Keyword(_) => None,
    })
}

/// The help of an `invalid-identifier` diagnostic: an ASCII name to use instead, when one can
/// be made from the name.
fn rename_help(name: &str) -> String {
    let ascii: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect();
    let suggestion = names::fn_name(&ascii);
    if names::ident_problem(&suggestion).is_none() && !ascii.is_empty() {
        format!("rename it, e.g. to `{suggestion}`")
    } else {
        "rename it to a name with ASCII letters or digits".to_string()
    }
}

impl Validator<'_> {
    fn err(&mut self, code: &'static str, msg: String, at: Pointer) -> &mut Diagnostic {
        let span = self.src.span_of(&at);
        self.out.push(Diagnostic::error(code, msg).at(at, span));
        self.out.last_mut().expect("just pushed")
    }

    fn err_key(&mut self, code: &'static str, msg: String, at: Pointer) -> &mut Diagnostic {
        let span = self.src.key_span_of(&at);
        self.out.push(Diagnostic::error(code, msg).at(at, span));
        self.out.last_mut().expect("just pushed")
    }

    /// Points the last diagnostic also at the value at `at`, with `message`.
    fn also(&mut self, at: Pointer, message: impl Into<String>) {
        let span = self.src.span_of(&at);
        let d = self.out.last_mut().expect("a diagnostic was pushed");
        d.secondary.push(Related {
            pointer: at,
            span,
            message: message.into(),
        });
    }

    /// Points the last diagnostic also at the key of the member at `at`, with `message`.
    fn also_key(&mut self, at: Pointer, message: impl Into<String>) {
        let span = self.src.key_span_of(&at);
        let d = self.out.last_mut().expect("a diagnostic was pushed");
        d.secondary.push(Related {
            pointer: at,
            span,
            message: message.into(),
        });
    }

    /// Sets what the last diagnostic's primary label says.
    fn label(&mut self, message: impl Into<String>) {
        let d = self.out.last_mut().expect("a diagnostic was pushed");
        d.primary_label = Some(message.into());
    }

    fn names(&mut self) {
        let pattern = regex_lite_tool_name;
        let mut tool_idents: HashMap<String, String> = HashMap::new();
        let mut type_names: HashMap<String, (String, Pointer, String)> = HashMap::new();
        for name in self.spec.defs.keys() {
            type_names.insert(
                names::type_name(name),
                (
                    format!("type `{name}` in `$defs`"),
                    Pointer::from_segments(["$defs", name]),
                    format!("`$defs` type `{name}`"),
                ),
            );
        }
        for name in self.spec.tools.keys() {
            let at = tool_ptr(name);
            if !pattern(name) {
                self.err_key(
                    "invalid-tool-name",
                    format!("tool name `{name}` must match {TOOL_NAME_PATTERN} (1 to 64 letters, digits, `_`, `.` or `-`)"),
                    at.clone(),
                )
                .subjects
                .push(Subject::Tool(name.clone()));
                self.out.last_mut().expect("just pushed").help = pattern_help(name);
                continue;
            }
            let ident = names::fn_name(name);
            if let Some(why) = names::ident_problem(&ident) {
                let help = rename_help(name);
                self.err_key(
                    "invalid-identifier",
                    format!("tool name `{name}` cannot become a Rust identifier: {why}"),
                    at.clone(),
                )
                .help = Some(help);
                self.out
                    .last_mut()
                    .expect("just pushed")
                    .subjects
                    .push(Subject::Tool(name.clone()));
                continue;
            }
            if let Some(other) = tool_idents.insert(ident.clone(), name.clone()) {
                self.err_key(
                    "name-collision",
                    format!(
                        "tools `{other}` and `{name}` both become the Rust identifier `{ident}`"
                    ),
                    at.clone(),
                )
                .help = Some(format!("rename `{name}` or `{other}`"));
                self.out
                    .last_mut()
                    .expect("just pushed")
                    .subjects
                    .extend([Subject::Tool(other.clone()), Subject::Tool(name.clone())]);
                self.also_key(tool_ptr(&other), format!("`{other}` becomes `{ident}` too"));
                // Their argument types collide as well: one finding is enough.
                continue;
            }
            let args_type = names::args_type_name(name);
            self.type_name(
                &mut type_names,
                args_type,
                format!("the arguments of tool `{name}`"),
                at,
                Subject::Tool(name.clone()),
                format!("tool `{name}`"),
            );
        }
        self.type_names = type_names;
        let mut resolver_idents: HashMap<String, String> = HashMap::new();
        for name in self.spec.resolvers.keys() {
            let at = resolver_ptr(name);
            let ident = names::fn_name(name);
            if let Some(why) = names::ident_problem(&ident) {
                let help = rename_help(name);
                self.err_key(
                    "invalid-identifier",
                    format!("resolver name `{name}` cannot become a Rust identifier: {why}"),
                    at,
                )
                .help = Some(help);
                self.out
                    .last_mut()
                    .expect("just pushed")
                    .subjects
                    .push(Subject::Resolver(name.clone()));
                continue;
            }
            if let Some(other) = resolver_idents.insert(ident.clone(), name.clone()) {
                self.err_key(
                    "name-collision",
                    format!(
                        "resolvers `{other}` and `{name}` both become the Rust identifier `{ident}`"
                    ),
                    at,
                )
                .help = Some(format!("rename `{name}` or `{other}`"));
                self.out.last_mut().expect("just pushed").subjects.extend([
                    Subject::Resolver(other.clone()),
                    Subject::Resolver(name.clone()),
                ]);
                self.also_key(
                    resolver_ptr(&other),
                    format!("`{other}` becomes `{ident}` too"),
                );
            }
        }
    }

    /// Records that `what` (at `at`; renamed as `rename` says) becomes the Rust type `ty`; two
    /// things becoming one type is an error at the second, pointing at the first too.
    fn type_name(
        &mut self,
        type_names: &mut HashMap<String, (String, Pointer, String)>,
        ty: String,
        what: String,
        at: Pointer,
        subject: Subject,
        rename: String,
    ) {
        let Some((other, other_at, other_rename)) = type_names.get(&ty).cloned() else {
            type_names.insert(ty, (what, at, rename));
            return;
        };
        let at_key = self.src.place(&at).is_some_and(|p| p.key.is_some());
        let msg = format!("{other} and {what} both become the Rust type `{ty}`");
        let d = if at_key {
            self.err_key("name-collision", msg, at)
        } else {
            self.err("name-collision", msg, at)
        };
        d.help = Some(format!("rename {rename} or {other_rename}"));
        d.subjects.push(subject);
        self.also_key(other_at, format!("this becomes `{ty}` too"));
    }

    /// Checks a parameter name of a tool's `resolve` or a resolver's `params`.
    fn param_name(
        &mut self,
        owner: Subject,
        owner_desc: &str,
        param: &str,
        at: Pointer,
        seen: &mut HashMap<String, (String, Pointer)>,
    ) {
        let subjects = [owner, Subject::Parameter(param.to_string())];
        if param.starts_with('_') {
            let bare = param.trim_start_matches('_');
            let d = self.err_key(
                "underscore-parameter",
                format!("parameter `{param}` of {owner_desc} cannot start with `_`"),
                at,
            );
            d.help = Some(if bare.is_empty() {
                "rename it to a name that starts with a letter".to_string()
            } else {
                format!("rename it to `{bare}`")
            });
            d.subjects.extend(subjects);
            return;
        }
        let ident = names::fn_name(param);
        if let Some(why) = names::ident_problem(&ident) {
            let d = self.err_key(
                "invalid-identifier",
                format!(
                    "parameter `{param}` of {owner_desc} cannot become a Rust identifier: {why}"
                ),
                at,
            );
            d.help = Some(rename_help(param));
            d.subjects.extend(subjects);
            return;
        }
        if let Some((other, other_at)) = seen.insert(ident.clone(), (param.to_string(), at.clone()))
        {
            let d = self.err_key(
                "name-collision",
                format!("parameters `{other}` and `{param}` of {owner_desc} both become the Rust identifier `{ident}`"),
                at,
            );
            d.help = Some(format!("rename `{param}` or `{other}`"));
            d.subjects.extend(subjects);
            self.also_key(other_at, format!("`{other}` becomes `{ident}` too"));
        }
    }

    fn bindings(&mut self) {
        let resolver_names: Vec<&str> = self.spec.resolvers.keys().map(String::as_str).collect();
        for c in consumers(self.spec) {
            let props = input_properties(&c.tool);
            let mut seen = HashMap::new();
            let owner = c.describe();
            for (param, binding) in &c.tool.resolve {
                let at = c.ptr().child("resolve").child(param);
                let subjects = vec![c.subject(), Subject::Parameter(param.clone())];
                self.param_name(c.subject(), &owner, param, at.clone(), &mut seen);
                if props.iter().any(|p| p == param) {
                    let (what, from, fix, input_at) = match c.kind {
                        ConsumerKind::Tool => (
                            "an input property",
                            "the model",
                            "remove it from `input`",
                            c.ptr().child("input").child("properties").child(param),
                        ),
                        ConsumerKind::Prompt => (
                            "an argument",
                            "the client",
                            "remove it from `arguments`",
                            c.ptr().child("arguments").child(param),
                        ),
                    };
                    self.err_key(
                        "resolved-is-input",
                        format!("parameter `{param}` of {owner} is resolved and also {what}; a resolved parameter never comes from {from}, so {fix}"),
                        at.clone(),
                    )
                    .subjects
                    .extend(subjects.clone());
                    self.label("resolved here");
                    self.also_key(input_at, format!("and {what} here"));
                }
                let rname = binding.resolver();
                let value_at = match binding {
                    Binding::Name(_) => at.clone(),
                    Binding::Detailed(_) => at.child("resolver"),
                };
                match self.spec.resolvers.get(rname) {
                    None => {
                        let help = closest(rname, resolver_names.iter().copied());
                        let d = self.err(
                            "unknown-resolver",
                            format!("parameter `{param}` of {owner} is bound to `{rname}`, which is not a resolver of this spec"),
                            value_at,
                        );
                        d.subjects.extend(subjects.clone());
                        if let Some(h) = help {
                            d.help = Some(format!("did you mean `{h}`?"));
                        }
                    }
                    Some(r) => {
                        if binding.outcome() && r.asks != Some(Asks::Elicit) {
                            let what = r.asks.map_or("does not ask anything".to_string(), |a| {
                                format!("asks `{}`", a.as_str())
                            });
                            self.err(
                                "outcome-without-elicit",
                                format!("parameter `{param}` of {owner} takes the elicitation outcome of resolver `{rname}`, which {what}; `outcome: true` needs a resolver with `\"asks\": \"elicit\"`"),
                                at.child("outcome"),
                            )
                            .subjects
                            .extend(subjects.into_iter().chain([Subject::Resolver(rname.to_string())]));
                            let r_at = resolver_ptr(rname);
                            match r.asks {
                                Some(_) => self
                                    .also(r_at.child("asks"), format!("resolver `{rname}` {what}")),
                                None => self.also_key(r_at, format!("resolver `{rname}` {what}")),
                            }
                        }
                    }
                }
            }
        }
    }

    /// Prompt names, argument struct names, fixed messages and their placeholders.
    fn prompts(&mut self) {
        let mut idents: HashMap<String, String> = HashMap::new();
        for (name, prompt) in &self.spec.prompts {
            let at = Pointer::from_segments(["prompts", name]);
            let subject = Subject::Prompt(name.clone());
            if !regex_lite_tool_name(name) {
                self.err_key(
                    "invalid-prompt-name",
                    format!("prompt name `{name}` must match {TOOL_NAME_PATTERN} (1 to 64 letters, digits, `_`, `.` or `-`)"),
                    at.clone(),
                )
                .subjects
                .push(subject);
                self.out.last_mut().expect("just pushed").help = pattern_help(name);
                continue;
            }
            let ident = names::fn_name(name);
            if let Some(why) = names::ident_problem(&ident) {
                let d = self.err_key(
                    "invalid-identifier",
                    format!("prompt name `{name}` cannot become a Rust identifier: {why}"),
                    at.clone(),
                );
                d.help = Some(rename_help(name));
                d.subjects.push(subject);
                continue;
            }
            if let Some(other) = idents.insert(ident.clone(), name.clone()) {
                let d = self.err_key(
                    "name-collision",
                    format!(
                        "prompts `{other}` and `{name}` both become the Rust identifier `{ident}`"
                    ),
                    at.clone(),
                );
                d.help = Some(format!("rename `{name}` or `{other}`"));
                d.subjects
                    .extend([Subject::Prompt(other.clone()), subject.clone()]);
                self.also_key(
                    Pointer::from_segments(["prompts", &other]),
                    format!("`{other}` becomes `{ident}` too"),
                );
            }
            if prompt.messages.is_none() && !prompt.arguments.is_empty() {
                let mut type_names = std::mem::take(&mut self.type_names);
                self.type_name(
                    &mut type_names,
                    names::prompt_args_type_name(name),
                    format!("the arguments of prompt `{name}`"),
                    at.clone(),
                    subject.clone(),
                    format!("prompt `{name}`"),
                );
                self.type_names = type_names;
            }
            if prompt.messages.is_none() {
                self.fields(
                    prompt.arguments.keys(),
                    at.child("arguments"),
                    &format!("arguments of prompt `{name}`"),
                    Some(&subject),
                );
            }
            let Some(messages) = &prompt.messages else {
                continue;
            };
            if !prompt.resolve.is_empty() {
                self.err_key(
                    "resolve-with-messages",
                    format!("prompt `{name}` has fixed `messages` and also `resolve`; resolved values reach only prompts written in code, so remove `messages` (and return the messages from the prompt's method) or remove `resolve`"),
                    at.child("resolve"),
                )
                .subjects
                .push(subject.clone());
                self.also_key(at.child("messages"), "the fixed messages");
            }
            let args: Vec<&str> = prompt.arguments.keys().map(String::as_str).collect();
            for (i, m) in messages.iter().enumerate() {
                let mat = at.child("messages").child(&i.to_string());
                let kinds = [m.text.is_some(), m.image.is_some(), m.resource.is_some()]
                    .iter()
                    .filter(|k| **k)
                    .count();
                if kinds != 1 {
                    self.err(
                        "invalid-message",
                        format!("message {i} of prompt `{name}` must have exactly one of `text`, `image` or `resource`, but it has {kinds}"),
                        mat.clone(),
                    )
                    .subjects
                    .push(subject.clone());
                }
                if let Some(text) = &m.text {
                    match placeholders(text) {
                        Err(why) => {
                            self.err(
                                "invalid-placeholder",
                                format!("message {i} of prompt `{name}`: {why}"),
                                mat.child("text"),
                            )
                            .subjects
                            .push(subject.clone());
                        }
                        Ok(found) => {
                            for p in found {
                                if !args.contains(&p.as_str()) {
                                    let help = closest(&p, args.iter().copied());
                                    let d = self.err(
                                        "unknown-placeholder",
                                        format!("message {i} of prompt `{name}` uses `{{{p}}}`, but the prompt has no argument `{p}`"),
                                        mat.child("text"),
                                    );
                                    d.subjects
                                        .extend([subject.clone(), Subject::Parameter(p.clone())]);
                                    if let Some(h) = help {
                                        d.help = Some(format!("did you mean `{{{h}}}`?"));
                                    }
                                    let args_at = at.child("arguments");
                                    let message =
                                        format!("prompt `{name}` declares its arguments here");
                                    if self.src.place(&args_at).is_some() {
                                        self.also_key(args_at, message);
                                    } else {
                                        self.also_key(
                                            at.clone(),
                                            format!("prompt `{name}` has no `arguments`"),
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
                if let Some(image) = &m.image
                    && base64_problem(&image.data).is_some()
                {
                    self.err(
                        "invalid-base64",
                        format!("the image of message {i} of prompt `{name}` is not valid base64"),
                        mat.child("image").child("data"),
                    )
                    .subjects
                    .push(subject.clone());
                }
                if let Some(uri) = &m.resource {
                    let fixed = self
                        .spec
                        .resources
                        .get(uri)
                        .is_some_and(|r| r.text.is_some() || r.blob.is_some());
                    if !fixed {
                        let known: Vec<&str> = self
                            .spec
                            .resources
                            .iter()
                            .filter(|(_, r)| r.text.is_some() || r.blob.is_some())
                            .map(|(u, _)| u.as_str())
                            .collect();
                        let why = if self.spec.resources.contains_key(uri) {
                            "is read in code (it has neither `text` nor `blob`)"
                        } else {
                            "is not a resource of this spec"
                        };
                        let help = closest(uri, known.iter().copied());
                        let d = self.err(
                            "unknown-resource",
                            format!("message {i} of prompt `{name}` embeds resource `{uri}`, which {why}; a fixed message can embed only a resource with `text` or `blob`"),
                            mat.child("resource"),
                        );
                        d.subjects
                            .extend([subject.clone(), Subject::Resource(uri.clone())]);
                        if let Some(h) = help {
                            d.help = Some(format!("did you mean `{h}`?"));
                        }
                        if self.spec.resources.contains_key(uri) {
                            self.also_key(
                                Pointer::from_segments(["resources", uri]),
                                "read in code: neither `text` nor `blob`",
                            );
                        }
                    }
                }
            }
        }
    }

    /// Resource content, template variables, and the names of the methods that read in code.
    fn resources(&mut self) {
        let mut idents: HashMap<String, (String, Pointer)> = HashMap::new();
        let mut method = |v: &mut Self, name: &str, uri: &str, at: Pointer| {
            let ident = names::read_fn_name(name);
            let subject = Subject::Resource(uri.to_string());
            if let Some(why) = names::ident_problem(&ident) {
                let d = v.err(
                    "invalid-identifier",
                    format!("the name `{name}` of `{uri}` cannot become the Rust method `{ident}`: {why}"),
                    at,
                );
                d.help = Some(rename_help(name));
                d.subjects.push(subject);
                return;
            }
            if let Some((other, other_at)) =
                idents.insert(ident.clone(), (uri.to_string(), at.clone()))
            {
                v.err(
                    "name-collision",
                    format!("`{other}` and `{uri}` are both read by the Rust method `{ident}`; give them different names"),
                    at,
                )
                .subjects
                .extend([Subject::Resource(other.clone()), subject]);
                v.also(other_at, format!("`{other}` is read by `{ident}` too"));
            }
        };
        for (uri, r) in &self.spec.resources {
            let at = Pointer::from_segments(["resources", uri]);
            match (&r.text, &r.blob) {
                (Some(_), Some(_)) => {
                    self.err_key(
                        "resource-content",
                        format!("resource `{uri}` has both `text` and `blob`; give one, or neither to read it in code"),
                        at.clone(),
                    )
                    .subjects
                    .push(Subject::Resource(uri.clone()));
                    self.also_key(at.child("text"), "`text` here");
                    self.also_key(at.child("blob"), "and `blob` here");
                }
                (None, Some(blob)) => {
                    if let Some(why) = base64_problem(blob) {
                        self.err(
                            "invalid-base64",
                            format!("the `blob` of resource `{uri}` is not valid base64: {why}"),
                            at.child("blob"),
                        )
                        .subjects
                        .push(Subject::Resource(uri.clone()));
                    }
                }
                (None, None) => method(self, &r.name, uri, at.child("name")),
                (Some(_), None) => {}
            }
        }
        for (uri, t) in &self.spec.resource_templates {
            let at = Pointer::from_segments(["resourceTemplates", uri]);
            method(self, &t.name, uri, at.child("name"));
            let vars = template_variables(uri);
            let mut type_names = std::mem::take(&mut self.type_names);
            self.type_name(
                &mut type_names,
                names::vars_type_name(&t.name),
                format!("the variables of template `{uri}`"),
                at.child("name"),
                Subject::Resource(uri.clone()),
                format!("the `name` of template `{uri}`"),
            );
            self.type_names = type_names;
            for var in &vars {
                let well_formed = var
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !well_formed {
                    self.err_key(
                        "invalid-template",
                        format!("template `{uri}` has the variable `{{{var}}}`; variables are names of letters, digits and `_`"),
                        at.clone(),
                    )
                    .subjects
                    .push(Subject::Resource(uri.clone()));
                    let fixed = names::fn_name(var);
                    if names::ident_problem(&fixed).is_none() {
                        self.out.last_mut().expect("just pushed").help =
                            Some(format!("rename it, e.g. to `{{{fixed}}}`"));
                    }
                }
            }
            for (i, var) in t.exempt_from_path_checks.iter().enumerate() {
                if !vars.contains(var) {
                    let d = self.err(
                        "unknown-variable",
                        format!("template `{uri}` exempts `{var}` from the path checks, which is not one of its variables ({})", listed_variables(&vars)),
                        at.child("exemptFromPathChecks").child(&i.to_string()),
                    );
                    explain_unknown_variable(d, uri, var, &vars);
                    self.also_key(at.clone(), "the template's variables are in its URI");
                }
            }
            for key in t.complete.keys() {
                if !vars.contains(key) {
                    let d = self.err_key(
                        "unknown-variable",
                        format!("template `{uri}` offers completions for `{key}`, which is not one of its variables ({})", listed_variables(&vars)),
                        at.child("complete").child(key),
                    );
                    explain_unknown_variable(d, uri, key, &vars);
                    self.also_key(at.clone(), "the template's variables are in its URI");
                }
            }
        }
    }

    fn resolvers(&mut self) {
        let resolver_names: Vec<&str> = self.spec.resolvers.keys().map(String::as_str).collect();
        for (rname, r) in &self.spec.resolvers {
            let at = resolver_ptr(rname);
            let mut seen = HashMap::new();
            for (param, source) in &r.params {
                let pat = at.child("params").child(param);
                // A `"context"` parameter is the context itself: its name never reaches Rust.
                if source != &ParamSource::Keyword(SourceKeyword::Context) {
                    self.param_name(
                        Subject::Resolver(rname.clone()),
                        &format!("resolver `{rname}`"),
                        param,
                        pat.clone(),
                        &mut seen,
                    );
                }
                if let ParamSource::Resolver(rs) = source
                    && !self.spec.resolvers.contains_key(&rs.resolver)
                {
                    let help = closest(&rs.resolver, resolver_names.iter().copied());
                    let d = self.err(
                        "unknown-resolver",
                        format!("parameter `{param}` of resolver `{rname}` takes the value of `{}`, which is not a resolver of this spec", rs.resolver),
                        pat.child("resolver"),
                    );
                    d.subjects.extend([
                        Subject::Resolver(rname.clone()),
                        Subject::Parameter(param.clone()),
                    ]);
                    if let Some(h) = help {
                        d.help = Some(format!("did you mean `{h}`?"));
                    }
                }
            }
            match (r.asks, &r.returns) {
                (None | Some(Asks::Elicit), None) => {
                    let what = if r.asks.is_some() {
                        "asks `elicit`, so it needs the form's schema"
                    } else {
                        "does not ask, so it produces a value"
                    };
                    self.err(
                        "missing-returns",
                        format!("resolver `{rname}` lacks `returns`: it {what}"),
                        at.clone(),
                    )
                    .subjects
                    .push(Subject::Resolver(rname.clone()));
                }
                (Some(a @ (Asks::Sample | Asks::Roots)), Some(_)) => {
                    let value = if a == Asks::Sample {
                        "CreateMessageResult"
                    } else {
                        "ListRootsResult"
                    };
                    self.err(
                        "unused-returns",
                        format!("resolver `{rname}` asks `{}`, so its value is the client's `{value}`; remove `returns`, which would be ignored", a.as_str()),
                        at.child("returns"),
                    )
                    .subjects
                    .push(Subject::Resolver(rname.clone()));
                    self.also(at.child("asks"), format!("asks `{}`", a.as_str()));
                }
                _ => {}
            }
            if r.asks == Some(Asks::Elicit)
                && let Some(returns) = &r.returns
            {
                self.elicit_form(rname, returns, at.child("returns"));
            }
        }
    }

    /// Follows one `#/$defs/Name` reference.
    fn deref<'s>(&'s self, schema: &'s Value) -> Option<(&'s Value, Option<String>)> {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => {
                let name = r.strip_prefix("#/$defs/")?;
                self.spec
                    .defs
                    .get(name)
                    .map(|s| (s, Some(name.to_string())))
            }
            None => Some((schema, None)),
        }
    }

    fn elicit_form(&mut self, rname: &str, returns: &Value, at: Pointer) {
        let Some((form, def_name)) = self.deref(returns) else {
            return; // an unresolvable $ref is reported by `schemas`
        };
        let form_at = match &def_name {
            Some(n) => Pointer::from_segments(["$defs", n]),
            None => at.clone(),
        };
        let subjects = vec![Subject::Resolver(rname.to_string())];
        if form.get("type").and_then(Value::as_str) != Some("object")
            || form.get("properties").and_then(Value::as_object).is_none()
        {
            self.err(
                "elicit-not-object",
                format!("resolver `{rname}` asks `elicit`, so `returns` must be a flat object of primitive fields (the form), but it is {}", compact(form)),
                at,
            )
            .subjects
            .extend(subjects);
            if let Some(def) = &def_name {
                self.also_key(form_at, format!("`{def}` is defined here"));
            }
            return;
        }
        let props = form["properties"].as_object().cloned().unwrap_or_default();
        for (field, schema) in &props {
            if let Some(problem) = self.primitive_problem(schema) {
                let fat = form_at.child("properties").child(field);
                let d = self.err(
                    "elicit-non-primitive",
                    format!("elicitation form of resolver `{rname}`: field `{field}` is {problem}, which is not a primitive (string, number, integer, boolean or enum)"),
                    fat,
                );
                d.subjects.extend(subjects.iter().cloned());
                d.notes
                    .push(format!("the field's schema: {}", compact(schema)));
                if let Some(def) = &def_name {
                    d.notes.push(format!(
                        "the form is `returns` of resolver `{rname}` at {at}"
                    ));
                    self.also(
                        at.clone(),
                        format!("the form of resolver `{rname}` is `{def}`"),
                    );
                }
            }
        }
    }

    /// Why a form field's schema is not a `PrimitiveSchemaDefinition`, if it is not.
    fn primitive_problem(&self, schema: &Value) -> Option<String> {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return match self.deref(schema) {
                Some((target, _))
                    if target.get("type").and_then(Value::as_str) == Some("object") =>
                {
                    Some(format!("a reference to an object (`{r}`)"))
                }
                Some((target, _)) => self.primitive_problem(target),
                None => None,
            };
        }
        for k in ["anyOf", "allOf", "not", "if"] {
            if schema.get(k).is_some() {
                return Some(format!("a union or combination (`{k}`)"));
            }
        }
        match schema.get("type") {
            Some(Value::String(t)) => match t.as_str() {
                "string" | "number" | "integer" | "boolean" => {
                    if let Some(one) = schema.get("oneOf") {
                        let titled = one
                            .as_array()
                            .is_some_and(|a| a.iter().all(|o| o.get("const").is_some()));
                        return (!titled).then(|| "a union (`oneOf` of non-constants)".to_string());
                    }
                    None
                }
                "object" => Some("a nested object".into()),
                "array" => {
                    let items = schema.get("items");
                    let enum_items = items.is_some_and(|i| {
                        i.get("enum").is_some()
                            || i.get("anyOf")
                                .and_then(Value::as_array)
                                .is_some_and(|a| a.iter().all(|o| o.get("const").is_some()))
                    });
                    (!enum_items).then(|| "an array of non-enum items".to_string())
                }
                other => Some(format!("of type `{other}`")),
            },
            Some(Value::Array(_)) => Some("a union of types".into()),
            Some(_) => Some("of an invalid type".into()),
            None if schema.get("enum").is_some() => None,
            None if schema.get("oneOf").is_some() => Some("a union (`oneOf`)".into()),
            None => Some("untyped".into()),
        }
    }

    fn cycles(&mut self) {
        // Depth-first search over resolver -> resolver edges; every cycle is reported once,
        // starting from its first resolver in spec order.
        let names: Vec<&String> = self.spec.resolvers.keys().collect();
        let mut reported: HashSet<Vec<String>> = HashSet::new();
        let mut found = Vec::new();
        for start in &names {
            let mut stack = vec![(start.to_string(), 0usize)];
            let mut path: Vec<String> = vec![start.to_string()];
            let mut on_path: HashSet<String> = HashSet::from([start.to_string()]);
            let mut visited: HashSet<String> = HashSet::new();
            while let Some((node, i)) = stack.pop() {
                let deps: Vec<&str> = self
                    .spec
                    .resolvers
                    .get(&node)
                    .map(|r| resolver_deps(r).collect())
                    .unwrap_or_default();
                if i < deps.len() {
                    stack.push((node.clone(), i + 1));
                    let next = deps[i].to_string();
                    if !self.spec.resolvers.contains_key(&next) {
                        continue;
                    }
                    if on_path.contains(&next) {
                        let pos = path.iter().position(|p| *p == next).unwrap_or(0);
                        let cycle: Vec<String> = path[pos..].to_vec();
                        let mut key = cycle.clone();
                        let min = key
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, n)| self.spec.resolvers.get_index_of(*n))
                            .map_or(0, |(i, _)| i);
                        key.rotate_left(min);
                        if reported.insert(key.clone()) {
                            found.push(key);
                        }
                    } else if visited.insert(next.clone()) {
                        on_path.insert(next.clone());
                        path.push(next.clone());
                        stack.push((next, 0));
                    }
                } else {
                    on_path.remove(&node);
                    path.pop();
                }
            }
        }
        for cycle in found {
            let first = &cycle[0];
            let second = cycle.get(1).unwrap_or(first);
            let param = self.spec.resolvers[first]
                .params
                .iter()
                .find(|(_, s)| matches!(s, ParamSource::Resolver(rs) if &rs.resolver == second))
                .map(|(p, _)| p.clone())
                .unwrap_or_default();
            let shown = cycle
                .iter()
                .chain(std::iter::once(first))
                .cloned()
                .collect::<Vec<_>>()
                .join(" -> ");
            self.err(
                "resolver-cycle",
                format!("resolvers form a cycle: {shown}"),
                resolver_ptr(first)
                    .child("params")
                    .child(&param)
                    .child("resolver"),
            )
            .subjects
            .extend(cycle.iter().map(|c| Subject::Resolver(c.clone())));
            self.label(format!("`{first}` takes the value of `{second}`"));
            for (i, from) in cycle.iter().enumerate().skip(1) {
                let to = cycle.get(i + 1).unwrap_or(first);
                let edge = self.edge(from, to);
                self.also(edge, format!("`{from}` takes the value of `{to}`"));
            }
        }
    }

    /// Where resolver `from` takes the value of resolver `to` (its first such parameter).
    fn edge(&self, from: &str, to: &str) -> Pointer {
        let param = self.spec.resolvers[from]
            .params
            .iter()
            .find(|(_, s)| matches!(s, ParamSource::Resolver(rs) if rs.resolver == to))
            .map(|(p, _)| p.clone())
            .unwrap_or_default();
        resolver_ptr(from)
            .child("params")
            .child(&param)
            .child("resolver")
    }

    /// Where a consumer's arguments are declared (its input's `properties`, a prompt's
    /// `arguments`), or the consumer itself when it declares none; and whether that is a key.
    fn arguments_place(&self, c: &Consumer<'_>) -> (Pointer, bool) {
        let candidates = match c.kind {
            ConsumerKind::Tool => vec![
                c.ptr().child("input").child("properties"),
                c.ptr().child("input"),
            ],
            ConsumerKind::Prompt => vec![c.ptr().child("arguments")],
        };
        candidates
            .into_iter()
            .find(|p| self.src.place(p).is_some())
            .map_or((c.ptr(), true), |p| (p, false))
    }

    fn arg_sources(&mut self) {
        // (resolver index, param index) -> every consumer's (description, type, always)
        type Uses = Vec<(ConsumerKind, String, ArgType, bool, Subject)>;
        let mut seen: BTreeMap<(usize, usize), Uses> = BTreeMap::new();
        for c in consumers(self.spec) {
            let order = run_order(self.spec, &c.tool);
            for rname in &order {
                let (ri, _, r) = self
                    .spec
                    .resolvers
                    .get_full(rname)
                    .expect("run_order yields known resolvers");
                for (pi, (param, source)) in r.params.iter().enumerate() {
                    if source != &ParamSource::Keyword(SourceKeyword::Arg) {
                        continue;
                    }
                    match arg_type(&c.tool, param) {
                        Some((ty, always)) => seen.entry((ri, pi)).or_default().push((
                            c.kind,
                            c.name.to_string(),
                            ty,
                            always,
                            c.subject(),
                        )),
                        None => {
                            let via = via_text(self.spec, &c.tool, rname);
                            self.err(
                                "missing-arg",
                                format!("resolver `{rname}` takes `{param}` from the tool's arguments, but {}{via} has no argument `{param}`", c.describe()),
                                resolver_ptr(rname).child("params").child(param),
                            )
                            .subjects
                            .extend([Subject::Resolver(rname.clone()), Subject::Parameter(param.clone()), c.subject()]);
                            self.label(format!("`{param}` is taken from the arguments"));
                            let message = format!("{} has no argument `{param}`", c.describe());
                            match self.arguments_place(&c) {
                                (at, true) => self.also_key(at, message),
                                (at, false) => self.also(at, message),
                            }
                        }
                    }
                }
            }
        }
        for ((ri, pi), uses) in seen {
            let (rname, r) = self
                .spec
                .resolvers
                .get_index(ri)
                .expect("index from the map");
            let (param, _) = r.params.get_index(pi).expect("index from the map");
            let (k0, t0, ty0, al0, s0) = &uses[0];
            for (k, t, ty, al, s) in &uses[1..] {
                if ty != ty0 || al != al0 {
                    let both = if k0 == k {
                        format!("{}s `{t0}` and `{t}`", k.noun())
                    } else {
                        format!("{} `{t0}` and {} `{t}`", k0.noun(), k.noun())
                    };
                    let show = |ty: &ArgType, al: bool| {
                        if al {
                            ty.to_string()
                        } else {
                            format!("optional {ty}")
                        }
                    };
                    self.err(
                        "arg-type-mismatch",
                        format!(
                            "resolver `{rname}` takes `{param}` from the tool's arguments, but {both} type it differently: {} and {}",
                            show(ty0, *al0),
                            show(ty, *al)
                        ),
                        resolver_ptr(rname).child("params").child(param),
                    )
                    .subjects
                    .extend([Subject::Resolver(rname.clone()), Subject::Parameter(param.clone()), s0.clone(), s.clone()]);
                    self.label(format!("`{param}` is taken from the arguments"));
                    for (kind, name, ty, al) in [(k0, t0, ty0, *al0), (k, t, ty, *al)] {
                        let section = match kind {
                            ConsumerKind::Tool => ["tools", name.as_str(), "input", "properties"],
                            ConsumerKind::Prompt => ["prompts", name.as_str(), "arguments", ""],
                        };
                        let mut at =
                            Pointer::from_segments(section.iter().filter(|s| !s.is_empty()));
                        at.push(param);
                        self.also_key(
                            at,
                            format!("{} `{name}` types it as {}", kind.noun(), show(ty, al)),
                        );
                    }
                    break;
                }
            }
        }
    }

    fn schemas(&mut self) {
        let mut all: Vec<(Pointer, &Value)> = Vec::new();
        for (name, s) in &self.spec.defs {
            all.push((Pointer::from_segments(["$defs", name]), s));
        }
        for (name, t) in &self.spec.tools {
            if let Some(input) = &t.input {
                let at = tool_ptr(name).child("input");
                if input.get("type").and_then(Value::as_str) != Some("object") {
                    self.err(
                        "input-not-object",
                        format!("the input schema of tool `{name}` must have `\"type\": \"object\"` at its root (the arguments are an object; a `$defs` object is written `{{\"type\": \"object\", \"$ref\": \"#/$defs/Name\"}}`), but it is {}", compact(input)),
                        at.clone(),
                    )
                    .subjects
                    .push(Subject::Tool(name.clone()));
                }
                all.push((at, input));
            }
            if let Some(output) = &t.output {
                all.push((tool_ptr(name).child("output"), output));
            }
        }
        for (name, r) in &self.spec.resolvers {
            if let Some(returns) = &r.returns {
                all.push((resolver_ptr(name).child("returns"), returns));
            }
        }
        for (at, schema) in all {
            // A tool's or resolver's schema may be a document of its own, as pydantic writes
            // one: its own `$defs` at its root, `#` for itself. A `$defs` type may not.
            let own: Option<Vec<String>> =
                (at.segments().next().as_deref() != Some("$defs")).then(|| {
                    schema
                        .get("$defs")
                        .and_then(Value::as_object)
                        .map(|d| d.keys().cloned().collect())
                        .unwrap_or_default()
                });
            self.refs_in(schema, at, own.as_deref(), true);
        }
    }

    /// Checks the references in `v`; `own` lists the own `$defs` of the schema `v` is part of
    /// (`None`: a spec `$defs` type, which has none), `root` says `v` is that schema's root.
    fn refs_in(&mut self, v: &Value, at: Pointer, own: Option<&[String]>, root: bool) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    let cat = at.child(k);
                    if k == "$defs" && root && own.is_some() {
                        if let Value::Object(defs) = child {
                            for (name, def) in defs {
                                self.refs_in(def, cat.child(name), own, false);
                            }
                        }
                    } else if k == "$ref" {
                        match child.as_str() {
                            Some(r) => self.check_ref(r, cat, own),
                            None => {
                                self.err("invalid-ref", "`$ref` must be a string".into(), cat);
                            }
                        }
                    } else if k == "$defs" || k == "definitions" {
                        self.err(
                            "nested-defs",
                            format!("`{k}` inside a schema is not supported: declare shared types in the spec's top-level `$defs` (or in the `$defs` at the root of a tool's or resolver's schema) and reference them as `#/$defs/<Name>`"),
                            cat.clone(),
                        );
                    } else if matches!(
                        k.as_str(),
                        "properties" | "patternProperties" | "dependentSchemas"
                    ) {
                        // Properties that become one Rust field are told apart by
                        // `emit::fields` (`#[serde(rename)]`), never an error.
                        if let Value::Object(props) = child {
                            for (pk, pv) in props {
                                self.refs_in(pv, cat.child(pk), own, false);
                            }
                        }
                    } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        self.refs_in(child, cat, own, false);
                    }
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    self.refs_in(child, at.child(&i.to_string()), own, false);
                }
            }
            _ => {}
        }
    }

    /// Two properties (or prompt arguments) of one object that become the same Rust field of
    /// the generated struct (`_id` and `id`, `a-b` and `a_b`): an error at the second.
    fn fields<'k>(
        &mut self,
        keys: impl Iterator<Item = &'k String>,
        at: Pointer,
        what: &str,
        subject: Option<&Subject>,
    ) {
        let mut seen: HashMap<String, &String> = HashMap::new();
        for key in keys {
            let field = names::field_name(key);
            if let Some(other) = seen.insert(field.clone(), key) {
                let d = self.err_key(
                    "name-collision",
                    format!("`{other}` and `{key}`, {what}, both become the Rust field `{field}`"),
                    at.child(key),
                );
                d.help = Some(format!("rename `{key}` or `{other}`"));
                d.subjects.extend(subject.cloned());
                self.also_key(at.child(other), format!("`{other}` becomes `{field}` too"));
            }
        }
    }

    fn check_ref(&mut self, r: &str, at: Pointer, own: Option<&[String]>) {
        let mut names: Vec<&str> = self.spec.defs.keys().map(String::as_str).collect();
        names.extend(own.unwrap_or_default().iter().map(String::as_str));
        match r.strip_prefix("#/$defs/") {
            _ if r == "#" && own.is_some() => {}
            Some(name) if names.contains(&name) => {}
            Some(name) if !name.contains('/') => {
                let help = closest(name, names.iter().copied());
                let d = self.err(
                    "unresolved-ref",
                    format!("`$ref` \"{r}\" does not resolve: `$defs` has no `{name}`"),
                    at,
                );
                if let Some(h) = help {
                    d.help = Some(format!("did you mean \"#/$defs/{h}\"?"));
                }
            }
            _ => {
                self.err(
                    "unsupported-ref",
                    format!("`$ref` \"{r}\" is not supported: references must name a type of the spec's `$defs`, as \"#/$defs/<Name>\""),
                    at,
                );
            }
        }
    }

    fn warnings(&mut self) {
        let used: HashSet<String> = consumers(self.spec)
            .iter()
            .flat_map(|c| run_order(self.spec, &c.tool))
            .collect();
        for name in self.spec.resolvers.keys() {
            if !used.contains(name) {
                let at = resolver_ptr(name);
                let span = self.src.key_span_of(&at);
                self.out.push(
                    Diagnostic::warning(
                        "unused-resolver",
                        format!(
                            "resolver `{name}` is not used by any tool{}",
                            if self.spec.prompts.is_empty() {
                                ""
                            } else {
                                " or prompt"
                            }
                        ),
                    )
                    .at(at, span)
                    .about(Subject::Resolver(name.clone())),
                );
            }
        }
        for (name, tool) in &self.spec.tools {
            if tool.annotations.is_some() && tool.title.is_none() {
                let at = tool_ptr(name).child("annotations");
                let span = self.src.key_span_of(&at);
                self.out.push(
                    Diagnostic::warning("annotations-without-title", format!("tool `{name}` has annotations but no `title`; clients show the title next to the hints"))
                        .at(at, span)
                        .about(Subject::Tool(name.clone())),
                );
            }
        }
    }
}

/// " (through `a`)" when the tool reaches `rname` only through other resolvers.
fn via_text(spec: &Spec, tool: &Tool, rname: &str) -> String {
    if tool.resolve.values().any(|b| b.resolver() == rname) {
        return String::new();
    }
    let direct: Vec<String> = tool
        .resolve
        .values()
        .map(|b| b.resolver().to_string())
        .filter(|d| {
            spec.resolvers.get(d).is_some_and(|_| {
                let t = Tool {
                    title: None,
                    description: String::new(),
                    annotations: None,
                    input: None,
                    output: None,
                    resolve: [("x".to_string(), Binding::Name(d.clone()))]
                        .into_iter()
                        .collect(),
                };
                run_order(spec, &t).iter().any(|n| n == rname)
            })
        })
        .collect();
    match direct.first() {
        Some(d) => format!(" (which uses it through `{d}`)"),
        None => String::new(),
    }
}

/// The help of a name outside the tool name pattern: the name with every other character
/// replaced by `_`, cut to 64 characters, when that leaves a letter or digit.
fn pattern_help(name: &str) -> Option<String> {
    let fixed: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    fixed
        .chars()
        .any(|c| c.is_ascii_alphanumeric())
        .then(|| format!("rename it, e.g. to `{fixed}`"))
}

fn regex_lite_tool_name(name: &str) -> bool {
    let n = name.chars().count();
    (1..=64).contains(&n)
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn compact(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(119).collect::<String>())
    } else {
        s
    }
}

/// A template's variables for a message: "`a`, `b`", or "it has none".
fn listed_variables(vars: &[String]) -> String {
    if vars.is_empty() {
        return "it has none".to_string();
    }
    vars.iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The subject and the did-you-mean of an `unknown-variable` diagnostic about template `uri`.
fn explain_unknown_variable(d: &mut Diagnostic, uri: &str, name: &str, vars: &[String]) {
    d.subjects.push(Subject::Resource(uri.to_string()));
    if let Some(h) = closest(name, vars.iter().map(String::as_str)) {
        d.help = Some(format!("did you mean `{h}`?"));
    }
}
