//! The resource catalog: fixed resources and RFC 6570 level-1 templates emitted by mcpgen,
//! their listings, URI lookup and the `resources/read` answers.
//!
//! A template variable matches one or more characters other than `/ ? # & ,` (what RFC 6570
//! percent-encodes in a simple expansion) and is percent-decoded (`%20` is a space; `%2F`, a
//! `/` inside the value, is accepted). The decoded value then passes the path-safety checks of
//! the Python SDK's default `ResourceSecurity` unless the spec exempts the variable: no NUL
//! character, no `..` component that climbs above the start (`/` and `\` both separate), and
//! not an absolute path (`/x`, `\x`, `C:x`). A URI that fails them is `Resource not found`,
//! and no later template is tried.

use base64::{Engine, engine::general_purpose::STANDARD};
use percent_encoding::percent_decode_str;
use rmcp::{
    ErrorData,
    model::{
        ErrorCode, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResponse,
        ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    },
};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};

use crate::errors::ToolError;

/// The content of a fixed resource.
#[derive(Debug, Clone, Copy)]
pub enum StaticContent {
    /// The spec's `text`.
    Text(&'static str),
    /// The spec's `blob` (base64, sent as is).
    Blob(&'static str),
    /// Neither: read in code (a method of the generated `Resources` trait).
    Code,
}

/// One fixed resource, as mcpgen emits it.
#[derive(Debug, Clone, Copy)]
pub struct ResourceDef {
    /// The resource's URI.
    pub uri: &'static str,
    /// The spec's `name`.
    pub name: &'static str,
    /// The spec's `title`.
    pub title: Option<&'static str>,
    /// The spec's `description`.
    pub description: Option<&'static str>,
    /// The spec's `mimeType`.
    pub mime_type: Option<&'static str>,
    /// The fixed content, or [`StaticContent::Code`].
    pub content: StaticContent,
}

/// One resource template, as mcpgen emits it (always read in code).
#[derive(Debug, Clone, Copy)]
pub struct TemplateDef {
    /// The RFC 6570 level-1 template (`{var}` expressions).
    pub uri_template: &'static str,
    /// The spec's `name`.
    pub name: &'static str,
    /// The spec's `title`.
    pub title: Option<&'static str>,
    /// The spec's `description`.
    pub description: Option<&'static str>,
    /// The spec's `mimeType`.
    pub mime_type: Option<&'static str>,
    /// `completion/complete` candidates per variable, in spec order.
    pub complete: &'static [(&'static str, &'static [&'static str])],
    /// Variables whose values skip the path-safety checks (spec `exemptFromPathChecks`).
    pub exempt_from_path_checks: &'static [&'static str],
}

/// What a URI names.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// A fixed resource: the complete answer.
    Fixed(ReadResourceResponse),
    /// A resource read in code, or a template match.
    Code {
        /// [`ResourceDef::name`] or [`TemplateDef::name`].
        name: &'static str,
        /// The template's variables (strings, percent-decoded, checked for path safety unless
        /// exempt); empty for a fixed resource.
        vars: Map<String, Value>,
    },
}

/// The content a resource reader returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text (`contents[0].text`).
    Text(String),
    /// Bytes (`contents[0].blob`, base64-encoded by the runtime).
    Blob(Vec<u8>),
}

impl ResourceBody {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        ResourceBody::Text(text.into())
    }

    /// Binary content.
    pub fn blob(bytes: impl Into<Vec<u8>>) -> Self {
        ResourceBody::Blob(bytes.into())
    }

    /// `value` as compact JSON text.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        serde_json::to_string(value)
            .map(ResourceBody::Text)
            .map_err(|e| ToolError::internal(format!("resource content does not serialize: {e}")))
    }
}

/// One segment of a parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Var(String),
}

/// All resources and templates of a server, built once at start-up.
pub struct ResourceCatalog {
    resources: &'static [ResourceDef],
    templates: Vec<(TemplateDef, Vec<Part>)>,
}

impl ResourceCatalog {
    /// Parses the templates.
    pub fn new(resources: &'static [ResourceDef], templates: &'static [TemplateDef]) -> Self {
        ResourceCatalog {
            resources,
            templates: templates
                .iter()
                .map(|def| (*def, parse_template(def.uri_template)))
                .collect(),
        }
    }

    /// The `resources/list` result, in spec order.
    pub fn list(&self) -> ListResourcesResult {
        let resources = self
            .resources
            .iter()
            .map(|def| {
                let mut resource = Resource::new(def.uri, def.name);
                resource.title = def.title.map(Into::into);
                resource.description = def.description.map(Into::into);
                resource.mime_type = def.mime_type.map(Into::into);
                resource
            })
            .collect();
        ListResourcesResult::with_all_items(resources)
    }

    /// The `resources/templates/list` result, in spec order.
    pub fn templates(&self) -> ListResourceTemplatesResult {
        let templates = self
            .templates
            .iter()
            .map(|(def, _)| {
                let mut template = ResourceTemplate::new(def.uri_template, def.name);
                template.title = def.title.map(Into::into);
                template.description = def.description.map(Into::into);
                template.mime_type = def.mime_type.map(Into::into);
                template
            })
            .collect();
        ListResourceTemplatesResult::with_all_items(templates)
    }

    /// What `uri` names: a fixed resource (its answer), a resource read in code, or the first
    /// matching template (fixed resources win; templates are tried in spec order). Anything
    /// else, and a template match whose decoded variables fail the path-safety checks, is
    /// -32002 `Resource not found` with `data: {"uri": uri}`.
    pub fn lookup(&self, uri: &str) -> Result<Lookup, ErrorData> {
        if let Some(def) = self.resources.iter().find(|def| def.uri == uri) {
            return Ok(match fixed_contents(def) {
                Some(contents) => Lookup::Fixed(ReadResourceResult::new(vec![contents]).into()),
                None => Lookup::Code {
                    name: def.name,
                    vars: Map::new(),
                },
            });
        }
        for (def, parts) in &self.templates {
            if let Some(vars) = match_template(parts, uri) {
                let mut decoded = Map::new();
                for (name, raw) in vars {
                    let value = percent_decode_str(&raw).decode_utf8_lossy().into_owned();
                    let exempt = def.exempt_from_path_checks.iter().any(|v| *v == name);
                    if !exempt && let Some(problem) = path_problem(&value) {
                        tracing::warn!(
                            uri,
                            "variable '{name}' of template '{}' failed the path checks: {problem}",
                            def.uri_template
                        );
                        return Err(not_found(uri));
                    }
                    decoded.insert(name, Value::String(value));
                }
                return Ok(Lookup::Code {
                    name: def.name,
                    vars: decoded,
                });
            }
        }
        Err(not_found(uri))
    }

    /// The `resources/read` answer for `uri`, read in code by the resource or template `name`:
    /// the body with `uri` and the definition's `mimeType`. Errors: [`ToolError::new`] → -32602
    /// with the message and `data.uri`; [`ToolError::internal`] → logged, -32603;
    /// [`ToolError::resource_not_found`] → -32002 `Resource not found` with `data.uri`;
    /// other protocol errors pass.
    pub fn respond(
        &self,
        uri: &str,
        name: &'static str,
        body: Result<ResourceBody, ToolError>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let mime_type = self
            .resources
            .iter()
            .find(|def| def.name == name)
            .map(|def| def.mime_type)
            .or_else(|| {
                self.templates
                    .iter()
                    .find(|(def, _)| def.name == name)
                    .map(|(def, _)| def.mime_type)
            })
            .flatten()
            .map(String::from);
        let contents = match body {
            Ok(ResourceBody::Text(text)) => ResourceContents::TextResourceContents {
                uri: uri.to_string(),
                mime_type,
                text,
                meta: None,
            },
            Ok(ResourceBody::Blob(bytes)) => ResourceContents::BlobResourceContents {
                uri: uri.to_string(),
                mime_type,
                blob: STANDARD.encode(bytes),
                meta: None,
            },
            Err(error) => return Err(resource_error(uri, error)),
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    /// The contents of a fixed resource with `text` or `blob` (for embedding in prompts).
    pub(crate) fn fixed(&self, uri: &str) -> Option<ResourceContents> {
        self.resources
            .iter()
            .find(|def| def.uri == uri)
            .and_then(fixed_contents)
    }

    /// The template whose `uriTemplate` is `uri_template`.
    pub(crate) fn template(&self, uri_template: &str) -> Option<&TemplateDef> {
        self.templates
            .iter()
            .map(|(def, _)| def)
            .find(|def| def.uri_template == uri_template)
    }
}

/// The template variables of a [`Lookup::Code`] as the typed `<Name>Vars` struct.
pub fn template_vars<T: DeserializeOwned>(vars: Map<String, Value>) -> Result<T, ErrorData> {
    serde_json::from_value(Value::Object(vars)).map_err(|e| {
        tracing::error!("template variables do not fit their struct: {e}");
        ErrorData::internal_error("Internal error", None)
    })
}

/// -32002 `Resource not found`, `data: {"uri": uri}`.
fn not_found(uri: &str) -> ErrorData {
    ErrorData::resource_not_found("Resource not found", Some(json!({ "uri": uri })))
}

fn resource_error(uri: &str, error: ToolError) -> ErrorData {
    match error {
        ToolError::Message(message) => {
            ErrorData::invalid_params(message, Some(json!({ "uri": uri })))
        }
        ToolError::Internal(detail) => {
            tracing::error!(uri, "resource read failed: {detail}");
            ErrorData::internal_error("Internal error", None)
        }
        ToolError::Protocol(mut error) => {
            if error.code == ErrorCode::RESOURCE_NOT_FOUND && error.data.is_none() {
                error.data = Some(json!({ "uri": uri }));
            }
            error
        }
    }
}

fn fixed_contents(def: &ResourceDef) -> Option<ResourceContents> {
    let mime_type = def.mime_type.map(String::from);
    match def.content {
        StaticContent::Text(text) => Some(ResourceContents::TextResourceContents {
            uri: def.uri.to_string(),
            mime_type,
            text: text.to_string(),
            meta: None,
        }),
        StaticContent::Blob(blob) => Some(ResourceContents::BlobResourceContents {
            uri: def.uri.to_string(),
            mime_type,
            blob: blob.to_string(),
            meta: None,
        }),
        StaticContent::Code => None,
    }
}

/// A parsed level-1 template: the matcher of [`ResourceCatalog::lookup`], also used by the HTTP
/// front's scope decision (`guard.rs`), so that both read a URI alike.
pub(crate) struct UriTemplate(Vec<Part>);

impl UriTemplate {
    /// Parses `template`.
    pub(crate) fn parse(template: &str) -> Self {
        UriTemplate(parse_template(template))
    }

    /// Whether `uri` matches (before its variables are decoded and checked for path safety).
    pub(crate) fn matches(&self, uri: &str) -> bool {
        match_template(&self.0, uri).is_some()
    }
}

/// Splits a level-1 template into literals and `{var}` expressions (an unclosed `{` is literal).
fn parse_template(template: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        literal.push_str(&rest[..open]);
        if !literal.is_empty() {
            parts.push(Part::Literal(std::mem::take(&mut literal)));
        }
        parts.push(Part::Var(rest[open + 1..open + close].to_string()));
        rest = &rest[open + close + 1..];
    }
    literal.push_str(rest);
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    parts
}

/// Characters a simple `{var}` value never contains unencoded (RFC 6570 encodes them).
const VAR_STOP: &[char] = &['/', '?', '#', '&', ','];

/// Matches `uri` against a parsed template: literals exactly, each variable one or more
/// characters other than [`VAR_STOP`] (backtracking, so `{a}.{b}` splits at a later `.` if
/// needed). The values are returned as they appear in the URI.
fn match_template(parts: &[Part], uri: &str) -> Option<Vec<(String, String)>> {
    match parts.split_first() {
        None => uri.is_empty().then(Vec::new),
        Some((Part::Literal(literal), rest)) => {
            match_template(rest, uri.strip_prefix(literal.as_str())?)
        }
        Some((Part::Var(name), rest)) => {
            let segment_end = uri.find(VAR_STOP).unwrap_or(uri.len());
            // Longest first, like a greedy `[^/]+`.
            let ends = uri[..segment_end]
                .char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .rev();
            for end in ends {
                if let Some(mut vars) = match_template(rest, &uri[end..]) {
                    vars.insert(0, (name.clone(), uri[..end].to_string()));
                    return Some(vars);
                }
            }
            None
        }
    }
}

/// Why a decoded template value is unsafe as a path, if it is: a NUL character, a `..`
/// component that climbs above the start, or an absolute path (POSIX `/x`, Windows `\\x`,
/// `C:\\x` and the drive-relative `C:x`). The Python SDK's default checks, in its order.
pub(crate) fn path_problem(value: &str) -> Option<&'static str> {
    if value.contains('\0') {
        return Some("it contains a NUL character");
    }
    let mut depth = 0i64;
    for part in value.split(['/', '\\']) {
        match part {
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return Some("a `..` component climbs above the start");
                }
            }
            "" | "." => {}
            _ => depth += 1,
        }
    }
    let bytes = value.as_bytes();
    let drive = bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic();
    if value.starts_with(['/', '\\']) || drive {
        return Some("it is an absolute path");
    }
    None
}

#[cfg(test)]
pub(crate) fn match_uri(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
    match_template(&parse_template(template), uri)
}
