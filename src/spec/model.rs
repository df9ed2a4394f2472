//! The typed model of a spec (spec-v1.md). The same types produce the spec format's JSON Schema
//! (`mcpgen schema`), so the documented format and the parser cannot drift apart.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::pointer::Pointer;

/// A JSON Schema (2020-12), kept as JSON.
pub type Schema = serde_json::Value;

/// An mcpgen spec: one MCP server, its tools, and the resolvers that fill tool parameters the
/// model must never supply.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcpgen spec, version 1")]
pub struct Spec {
    /// Path or URL of this format's JSON Schema (`mcpgen schema` prints it).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Server name (`serverInfo.name`); the default crate name is its kebab-case.
    pub name: String,
    /// Server version (`serverInfo.version`).
    #[serde(default = "default_version")]
    #[schemars(default = "default_version")]
    pub version: String,
    /// Human-readable server title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Sent to clients as server instructions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Named types shared by tools and resolvers, referenced as `{"$ref": "#/$defs/Name"}`;
    /// each becomes one Rust type.
    #[serde(rename = "$defs", default, skip_serializing_if = "IndexMap::is_empty")]
    #[schemars(with = "IndexMap<String, JsonSchemaRef>")]
    pub defs: IndexMap<String, Schema>,
    /// Resolvers by name, in order.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub resolvers: IndexMap<String, Resolver>,
    /// Tools by name; `tools/list` lists them in this order.
    pub tools: IndexMap<String, Tool>,
    /// Prompts by name; `prompts/list` lists them in this order.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub prompts: IndexMap<String, Prompt>,
    /// Fixed resources by URI; `resources/list` lists them in this order.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub resources: IndexMap<String, Resource>,
    /// Resource templates by RFC 6570 level-1 URI template (`{var}` segments), in order.
    #[serde(
        rename = "resourceTemplates",
        default,
        skip_serializing_if = "IndexMap::is_empty"
    )]
    pub resource_templates: IndexMap<String, ResourceTemplate>,
    /// The server sends log messages (`ctx.log(..)`): advertises `logging` and serves
    /// `logging/setLevel`; without it `ctx.log(..)` sends nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub logging: bool,
    /// The change notifications the server may send (`ctx.notifier()`), advertised as
    /// `listChanged` / `subscribe` and served through `subscriptions/listen` on 2026-07-28.
    #[serde(default, skip_serializing_if = "Notifications::is_empty")]
    pub notifications: Notifications,
    /// Authorization: what calling this server needs (an OAuth 2.1 access token over HTTP, the
    /// scopes every request needs) and what the protected-resource metadata lists. The
    /// authorization server itself is the deployment's (`--auth-issuer`), never the spec's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Auth>,
    /// Server-wide limits: the default timeout and concurrency of tool calls, the largest
    /// request body, and the legacy HTTP sessions' cap and idle timeout. The command line's
    /// flags override them; a tool's own `timeoutMs` / `maxConcurrency` are never overridden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
}

/// Server-wide limits (`limits`): every value is an integer of at least 1; an absent one is
/// the runtime's default (or the flag's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Limits {
    /// The time a tool call may take, in milliseconds, from its arrival (waiting for a slot
    /// included), for tools without a `timeoutMs` of their own: past it the call is cancelled
    /// and answered `isError`. `--tool-timeout` overrides it. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// How many requests run at once, server-wide; more wait for a slot until their timeout.
    /// `--max-concurrency` overrides it. Default: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// The largest HTTP request body, in bytes (at least 1024); a larger one is answered `413`.
    /// `--max-request-body` overrides it. Default: 4 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_request_bytes: Option<u64>,
    /// How many legacy HTTP sessions may be open at once. `--max-sessions` overrides it.
    /// Default: 3500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sessions: Option<u32>,
    /// How long an idle legacy HTTP session lives, in milliseconds. `--session-idle-timeout`
    /// overrides it. Default: 30 minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_idle_timeout_ms: Option<u64>,
}

impl Limits {
    /// True when no limit is declared.
    pub fn is_empty(&self) -> bool {
        *self == Limits::default()
    }
}

/// The server's authorization requirements (`auth`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Auth {
    /// Every request needs a valid access token (over stdio: a principal from
    /// `MCP_PRINCIPAL_*`). With `false` anonymous requests pass, a token sent must still verify,
    /// and an operation with `scopes` still needs one.
    #[serde(default = "yes")]
    #[schemars(default = "yes")]
    pub required: bool,
    /// The scopes every request needs (RFC 6749 scope-tokens).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The scopes the protected-resource metadata lists (`scopes_supported`); every scope the
    /// spec names must be one of them. Default: every scope the spec names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// `tools/list`, `prompts/list` and the resource lists show only what the caller's scopes
    /// allow (default: everything is listed, and enforced on use).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub list_visible_only: bool,
}

fn yes() -> bool {
    true
}

/// Change notifications a server declares it may send.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Notifications {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` to subscribers (`resources/subscribe` on legacy
    /// connections, `subscriptions/listen` on 2026-07-28 ones).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resource_subscriptions: bool,
}

impl Notifications {
    /// True when nothing is declared.
    pub fn is_empty(&self) -> bool {
        *self == Notifications::default()
    }
}

/// A prompt the client can get.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    /// UI name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the client shows; also the Rust doc comment.
    pub description: String,
    /// The prompt's arguments (strings on the wire), in order.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub arguments: IndexMap<String, PromptArgument>,
    /// The messages, fixed in the spec (`{name}` in a text is replaced by argument `name`;
    /// `{{` and `}}` are literal braces). Without them the prompt is written in code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<PromptMessage>>,
    /// Parameters filled by resolvers before the prompt's method runs (prompts without
    /// `messages` only). A resolver's `"arg"` parameter takes the prompt argument of its name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub resolve: IndexMap<String, Binding>,
    /// The scopes getting it needs (RFC 6749 scope-tokens), beyond `auth.scopes`; checked
    /// before anything runs (HTTP `403` with the scope challenge otherwise). Needs `auth`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptArgument {
    /// UI name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The client must supply it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// Values `completion/complete` offers (those starting with what the user typed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub complete: Vec<String>,
}

/// The role of a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user speaks.
    User,
    /// The assistant speaks.
    Assistant,
}

/// One fixed prompt message: a role and exactly one of `text`, `image` or `resource`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// Text, with `{argument}` placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// An image.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// The URI of a fixed resource of this spec (with `text` or `blob`), embedded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

/// Binary image data.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Image {
    /// Base64 data.
    pub data: String,
    /// MIME type, e.g. `image/png`.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

/// A fixed resource.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resource {
    /// Its name; also the Rust method `read_<name>` when it is read in code.
    pub name: String,
    /// UI name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the client shows; also the Rust doc comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The content's MIME type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Fixed text content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Fixed binary content, base64. With neither `text` nor `blob` the resource is read in
    /// code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// The scopes reading it needs (RFC 6749 scope-tokens), beyond `auth.scopes`; checked
    /// before anything runs (HTTP `403` with the scope challenge otherwise). Needs `auth`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// A resource template: URIs matching it are read in code.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceTemplate {
    /// Its name; the Rust method is `read_<name>`.
    pub name: String,
    /// UI name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the client shows; also the Rust doc comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The content's MIME type.
    #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Values `completion/complete` offers, per template variable.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub complete: IndexMap<String, Vec<String>>,
    /// Variables whose decoded values skip the path-safety checks (a `..` component that climbs
    /// above the start, an absolute path, a NUL character), like the Python SDK's
    /// `ResourceSecurity(exempt_params=...)`.
    #[serde(
        rename = "exemptFromPathChecks",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub exempt_from_path_checks: Vec<String>,
    /// The scopes reading a URI that matches it needs (RFC 6749 scope-tokens), beyond `auth.scopes`; checked
    /// before anything runs (HTTP `403` with the scope challenge otherwise). Needs `auth`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

impl Prompt {
    /// The prompt seen as a consumer of resolvers: a tool whose input is an object of string
    /// properties (one per argument, required as declared).
    pub fn as_tool(&self) -> Tool {
        let properties: serde_json::Map<String, serde_json::Value> = self
            .arguments
            .iter()
            .map(|(name, a)| {
                let mut p = serde_json::Map::new();
                p.insert("type".into(), "string".into());
                if let Some(d) = &a.description {
                    p.insert("description".into(), d.clone().into());
                }
                (name.clone(), serde_json::Value::Object(p))
            })
            .collect();
        let required: Vec<serde_json::Value> = self
            .arguments
            .iter()
            .filter(|(_, a)| a.required)
            .map(|(n, _)| n.clone().into())
            .collect();
        let mut input = serde_json::json!({"type": "object", "properties": properties});
        if !required.is_empty() {
            input["required"] = serde_json::Value::Array(required);
        }
        Tool {
            title: self.title.clone(),
            description: self.description.clone(),
            annotations: None,
            input: Some(input),
            output: None,
            resolve: self.resolve.clone(),
            scopes: self.scopes.clone(),
            timeout_ms: None,
            max_concurrency: None,
        }
    }
}

/// Every scope the spec requires, with the JSON pointer of where it is written, in document
/// order: `auth.scopes`, then each tool's, prompt's, resource's and template's `scopes`
/// (`auth.scopesSupported` lists scopes; it requires none).
pub fn scopes_named(spec: &Spec) -> impl Iterator<Item = (Pointer, &String)> {
    fn each<'s>(
        at: Pointer,
        scopes: &'s [String],
    ) -> impl Iterator<Item = (Pointer, &'s String)> + 's {
        (scopes.iter().enumerate()).map(move |(i, s)| (at.child("scopes").child(&i.to_string()), s))
    }
    let server = (spec.auth.iter()).flat_map(|a| each(Pointer::from_segments(["auth"]), &a.scopes));
    let tools = (spec.tools.iter())
        .flat_map(|(n, t)| each(Pointer::from_segments(["tools", n.as_str()]), &t.scopes));
    let prompts = (spec.prompts.iter())
        .flat_map(|(n, p)| each(Pointer::from_segments(["prompts", n.as_str()]), &p.scopes));
    let resources = (spec.resources.iter())
        .flat_map(|(u, r)| each(Pointer::from_segments(["resources", u.as_str()]), &r.scopes));
    let templates = (spec.resource_templates.iter()).flat_map(|(u, t)| {
        each(
            Pointer::from_segments(["resourceTemplates", u.as_str()]),
            &t.scopes,
        )
    });
    server
        .chain(tools)
        .chain(prompts)
        .chain(resources)
        .chain(templates)
}

/// The variables of an RFC 6570 level-1 URI template (`{var}`), in order.
pub fn template_variables(uri_template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = uri_template;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('}') else { break };
        let var = &after[..end];
        if !out.iter().any(|v| v == var) {
            out.push(var.to_string());
        }
        rest = &after[end + 1..];
    }
    out
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

fn default_version() -> String {
    "0.1.0".to_string()
}

/// A tool the model can call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    /// UI name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the model reads; also the Rust doc comment.
    pub description: String,
    /// Behaviour hints for clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// The arguments the model supplies: a JSON Schema whose root is `"type": "object"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<JsonSchemaRef>")]
    pub input: Option<Schema>,
    /// The typed return value. An object schema is returned as `structuredContent` itself; any
    /// other schema is wrapped as `{"result": value}`. Without it the tool returns content blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<JsonSchemaRef>")]
    pub output: Option<Schema>,
    /// Parameters filled by resolvers before the tool body runs, by parameter name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub resolve: IndexMap<String, Binding>,
    /// The scopes calling it needs (RFC 6749 scope-tokens), beyond `auth.scopes`; checked
    /// before anything runs (HTTP `403` with the scope challenge otherwise). Needs `auth`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The time a call may take, in milliseconds, from its arrival (waiting for a slot
    /// included): past it the call is cancelled and answered `isError`. Overrides
    /// `limits.timeoutMs` and `--tool-timeout`.
    #[serde(rename = "timeoutMs", default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// How many calls of this tool run at once; more wait for a slot until their timeout, then
    /// are answered `isError`. The server-wide limit applies as well.
    #[serde(
        rename = "maxConcurrency",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_concurrency: Option<u32>,
}

/// Tool annotations (hints, not security).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Annotations {
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling the tool twice with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// How a tool parameter is bound to a resolver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Binding {
    /// The resolver's value (a resolver name).
    Name(String),
    /// A resolver, optionally with its whole elicitation outcome.
    Detailed(DetailedBinding),
}

/// A binding with options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DetailedBinding {
    /// The resolver's name.
    pub resolver: String,
    /// With `true` the tool receives the whole elicitation outcome (accepted with data /
    /// declined / cancelled) instead of the value; only for resolvers that ask `elicit`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outcome: bool,
}

impl Binding {
    /// The resolver bound.
    pub fn resolver(&self) -> &str {
        match self {
            Binding::Name(n) => n,
            Binding::Detailed(d) => &d.resolver,
        }
    }

    /// True when the tool receives the whole elicitation outcome.
    pub fn outcome(&self) -> bool {
        matches!(self, Binding::Detailed(d) if d.outcome)
    }
}

/// A function that fills a parameter before the tool body runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resolver {
    /// Rust doc comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Each parameter the resolver function takes, with its source, in order.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub params: IndexMap<String, ParamSource>,
    /// The value the resolver produces (required unless `asks` is `sample` or `roots`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<JsonSchemaRef>")]
    pub returns: Option<Schema>,
    /// The one question this resolver may ask instead of producing a value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asks: Option<Asks>,
}

/// The question a resolver may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Asks {
    /// Ask the user to fill a form (the `returns` schema, a flat object of primitives).
    Elicit,
    /// Ask the client's model for a completion; the value is a `CreateMessageResult`.
    Sample,
    /// Ask the client for its roots; the value is a `ListRootsResult`.
    Roots,
}

impl Asks {
    /// The keyword as written in a spec.
    pub fn as_str(self) -> &'static str {
        match self {
            Asks::Elicit => "elicit",
            Asks::Sample => "sample",
            Asks::Roots => "roots",
        }
    }
}

/// Where a resolver parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamSource {
    /// `"arg"` (the consuming tool's argument of the same name), `"context"` or `"principal"`.
    Keyword(SourceKeyword),
    /// `{"resolver": "name"}`: another resolver's value.
    Resolver(ResolverSource),
}

/// The keyword sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceKeyword {
    /// The consuming tool's own argument of the same name, already validated.
    Arg,
    /// The request context.
    Context,
    /// The verified caller (`&Principal`; `Option<&Principal>` when `auth.required` is false).
    /// Needs `auth`.
    Principal,
}

impl SourceKeyword {
    /// The keyword as written in a spec.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKeyword::Arg => "arg",
            SourceKeyword::Context => "context",
            SourceKeyword::Principal => "principal",
        }
    }
}

/// Another resolver's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolverSource {
    /// The resolver's name.
    pub resolver: String,
}

/// Stands for "any JSON Schema 2020-12" in the format's own schema.
#[derive(JsonSchema)]
#[schemars(transform = json_schema_ref)]
#[allow(dead_code)]
struct JsonSchemaRef(serde_json::Value);

fn json_schema_ref(schema: &mut schemars::Schema) {
    *schema = schemars::json_schema!({
        "description": "A JSON Schema (draft 2020-12).",
        "$ref": "https://json-schema.org/draft/2020-12/schema"
    });
}
