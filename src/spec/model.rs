//! The typed model of a spec (spec-v1.md). The same types produce the spec format's JSON Schema
//! (`mcpgen schema`), so the documented format and the parser cannot drift apart.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// `"arg"` (the consuming tool's argument of the same name) or `"context"`.
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
