//! The tool catalog: static tool definitions emitted by mcpgen, their `tools/list` entries
//! (served as mcpgen computed them), compiled input validators, and the guarded execution of
//! one call (in debug builds, with its structured result checked against the `outputSchema`).

use std::{
    collections::HashMap,
    future::Future,
    panic::AssertUnwindSafe,
    sync::{Arc, OnceLock},
};

use futures::{FutureExt, future::BoxFuture};
use rmcp::{
    ErrorData,
    model::{CallToolResponse, CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations},
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{
    catalog::{args, schema},
    errors::ToolError,
    state,
};

tokio::task_local! {
    /// The current call's arguments, for binding a 2026-07-28 `requestState` to them.
    pub(crate) static CALL_ARGUMENTS: CallArguments;
}

/// A call's arguments as sent, digested only when a round binds a `requestState` to them.
pub(crate) struct CallArguments {
    arguments: Value,
    digest: OnceLock<String>,
}

impl CallArguments {
    /// The arguments as sent (an object).
    pub(crate) fn new(arguments: Value) -> Self {
        CallArguments {
            arguments,
            digest: OnceLock::new(),
        }
    }

    /// Arguments whose digest is already known (they were sent with more than `arguments`).
    fn digested(arguments: Value, digest: String) -> Self {
        CallArguments {
            arguments,
            digest: OnceLock::from(digest),
        }
    }

    fn digest(&self) -> String {
        self.digest
            .get_or_init(|| state::arguments_digest(self.arguments.as_object()))
            .clone()
    }
}

/// [`state::arguments_digest`] of the current call's arguments as sent, computed at most once
/// per call (outside a call: of no arguments).
pub(crate) fn call_arguments_digest() -> String {
    CALL_ARGUMENTS
        .try_with(CallArguments::digest)
        .unwrap_or_else(|_| state::arguments_digest(None))
}

/// One tool, as mcpgen emits it (all JSON as compact strings).
#[derive(Debug, Clone, Copy)]
pub struct ToolDef {
    /// The tool name.
    pub name: &'static str,
    /// The spec's `title`.
    pub title: Option<&'static str>,
    /// The spec's `description`.
    pub description: &'static str,
    /// The spec's `annotations` object (JSON).
    pub annotations: Option<&'static str>,
    /// The spec's `input`, made self-contained (referenced `$defs` copied under `$defs`).
    pub input_schema: &'static str,
    /// The `outputSchema` advertised, as mcpgen computed it (a non-object `output` already
    /// wrapped as `{"type":"object","properties":{"result": ..},"required":["result"]}`, every
    /// `$ref` resolving inside it); `None` for a tool without `output` (content blocks only).
    pub output_schema: Option<&'static str>,
    /// Names of the resolved parameters; a value a client sends under one of them is dropped
    /// before validation.
    pub resolved: &'static [&'static str],
}

struct Entry {
    def: ToolDef,
    tool: Tool,
    validator: jsonschema::Validator,
    /// The validator of structured results against the `outputSchema` (debug builds only).
    #[cfg(debug_assertions)]
    output_validator: Option<jsonschema::Validator>,
}

/// All tools of a server, built once at start-up.
pub struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<&'static str, usize>,
}

impl Catalog {
    /// Parses the definitions and compiles every input schema (panics on an invalid definition:
    /// mcpgen has validated them at generation time).
    pub fn new(defs: &[ToolDef]) -> Self {
        let entries: Vec<Entry> = defs
            .iter()
            .map(|def| Entry::new(*def).unwrap_or_else(|e| panic!("tool '{}': {e}", def.name)))
            .collect();
        let by_name = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.def.name, i))
            .collect();
        Catalog { entries, by_name }
    }

    /// The `tools/list` entries, in spec order.
    pub fn tools(&self) -> Vec<Tool> {
        self.entries.iter().map(|e| e.tool.clone()).collect()
    }

    /// One tool's `tools/list` entry.
    pub fn get(&self, name: &str) -> Option<Tool> {
        self.by_name
            .get(name)
            .map(|&i| self.entries[i].tool.clone())
    }

    /// The input violations of `arguments` for tool `name`, as [`Catalog::run`] would report
    /// them (resolved parameters dropped first; one line each, in the order of the `isError`
    /// text); empty when they are valid, `None` for an unknown tool. The test kit recognises
    /// invalid arguments by them.
    #[cfg(feature = "testing")]
    pub(crate) fn violations(&self, name: &str, arguments: &JsonObject) -> Option<Vec<String>> {
        let entry = &self.entries[*self.by_name.get(name)?];
        let mut arguments = arguments.clone();
        for param in entry.def.resolved {
            arguments.remove(*param);
        }
        Some(schema::violations(
            &entry.validator,
            &Value::Object(arguments),
        ))
    }

    /// Runs one call of tool `name`: drops resolved parameters from `arguments`, validates them
    /// against the input schema and deserializes them into `A` ([`args::parse`]: all
    /// violations in one `isError` result), and runs `body` with panics caught. [`ToolError`]s become `isError` results
    /// (`Error executing tool <name>: <message>`) or, for protocol errors, `Err`.
    ///
    /// Boxed: the server's request future then holds a pointer, not the state machine of the
    /// largest tool or prompt (which tokio would copy on every request).
    pub fn run<'a, A, F, Fut>(
        &'a self,
        name: &'a str,
        arguments: Option<JsonObject>,
        body: F,
    ) -> BoxFuture<'a, Result<CallToolResponse, ErrorData>>
    where
        A: DeserializeOwned + Send + 'a,
        F: FnOnce(A) -> Fut + Send + 'a,
        Fut: Future<Output = Result<CallToolResponse, ToolError>> + Send + 'a,
    {
        self.run_unboxed(name, arguments, body).boxed()
    }

    async fn run_unboxed<A, F, Fut>(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        body: F,
    ) -> Result<CallToolResponse, ErrorData>
    where
        A: DeserializeOwned,
        F: FnOnce(A) -> Fut,
        Fut: Future<Output = Result<CallToolResponse, ToolError>>,
    {
        let Some(entry) = self.by_name.get(name).map(|&i| &self.entries[i]) else {
            return Err(unknown_tool(name));
        };
        let mut arguments = arguments.unwrap_or_default();
        // The digest binds a `requestState` to the arguments as sent: taken now only when
        // resolved parameters are about to be dropped from them (rare), else when a round
        // needs it.
        let sent_digest = entry
            .def
            .resolved
            .iter()
            .any(|param| arguments.contains_key(*param))
            .then(|| state::arguments_digest(Some(&arguments)));
        for param in entry.def.resolved {
            arguments.remove(*param);
        }
        let arguments = Value::Object(arguments);
        let args: A = match args::parse(&entry.validator, &arguments) {
            Ok(args) => args,
            Err(message) => return Ok(error_result(name, Some(&message))),
        };
        let call = match sent_digest {
            Some(digest) => CallArguments::digested(arguments, digest),
            None => CallArguments::new(arguments),
        };
        let outcome = AssertUnwindSafe(CALL_ARGUMENTS.scope(call, body(args)))
            .catch_unwind()
            .await;
        match outcome {
            Ok(Ok(response)) => {
                #[cfg(debug_assertions)]
                entry.check_result(&response);
                Ok(response)
            }
            Ok(Err(error)) => tool_error(name, error),
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "<non-string panic payload>".to_string());
                tracing::error!(tool = name, "tool panicked: {message}");
                Ok(error_result(name, None))
            }
        }
    }
}

impl Entry {
    fn new(def: ToolDef) -> Result<Self, String> {
        let input: Value =
            serde_json::from_str(def.input_schema).map_err(|e| format!("input schema: {e}"))?;
        let validator = schema::validator(&input).map_err(|e| format!("input schema: {e}"))?;
        let Value::Object(input) = input else {
            return Err("input schema is not an object".into());
        };
        let mut tool = Tool::new(def.name, def.description, Arc::new(input));
        if let Some(title) = def.title {
            tool = tool.with_title(title);
        }
        if let Some(annotations) = def.annotations {
            let annotations: ToolAnnotations =
                serde_json::from_str(annotations).map_err(|e| format!("annotations: {e}"))?;
            tool = tool.with_annotations(annotations);
        }
        let output_schema = def.output_schema.map(parse_object).transpose()?;
        #[cfg(debug_assertions)]
        let output_validator = output_schema
            .as_ref()
            .map(|schema| schema::validator(&Value::Object(schema.clone())))
            .transpose()
            .map_err(|e| format!("output schema: {e}"))?;
        if let Some(schema) = output_schema {
            tool = tool.with_raw_output_schema(Arc::new(schema));
        }
        Ok(Entry {
            def,
            tool,
            validator,
            #[cfg(debug_assertions)]
            output_validator,
        })
    }

    /// Debug builds: a successful result's `structuredContent` must validate against the tool's
    /// own `outputSchema` (clients such as the Python SDK refuse one that does not). A result
    /// that does not is logged as an error, and fails the test it runs in.
    #[cfg(debug_assertions)]
    fn check_result(&self, response: &CallToolResponse) {
        let (Some(validator), CallToolResponse::Complete(result)) =
            (&self.output_validator, response)
        else {
            return;
        };
        if result.is_error == Some(true) {
            return;
        }
        let problem = match &result.structured_content {
            None => vec!["(root): no structuredContent".to_string()],
            Some(content) => schema::violations(validator, content),
        };
        if problem.is_empty() {
            return;
        }
        let message = format!(
            "tool '{}' returned a result that does not validate against its outputSchema:\n{}",
            self.def.name,
            problem.join("\n")
        );
        tracing::error!("{message}");
        #[cfg(test)]
        panic!("{message}");
    }
}

fn parse_object(schema: &'static str) -> Result<JsonObject, String> {
    match serde_json::from_str(schema) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err("output schema is not an object".into()),
        Err(e) => Err(format!("output schema: {e}")),
    }
}

/// The protocol error for a `tools/call` naming no known tool: -32602 `Unknown tool: <name>`.
pub fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown tool: {name}"), None)
}

/// An `isError` result: `Error executing tool <tool>` or `Error executing tool <tool>: <message>`.
pub(crate) fn error_result(tool: &str, message: Option<&str>) -> CallToolResponse {
    let text = match message {
        Some(message) => format!("Error executing tool {tool}: {message}"),
        None => format!("Error executing tool {tool}"),
    };
    CallToolResult::error(vec![ContentBlock::text(text)]).into()
}

/// Maps a [`ToolError`] to the call's response.
pub(crate) fn tool_error(tool: &str, error: ToolError) -> Result<CallToolResponse, ErrorData> {
    match error {
        ToolError::Message(message) => Ok(error_result(tool, Some(&message))),
        ToolError::Internal(detail) => {
            tracing::error!(tool, "tool failed: {detail}");
            Ok(error_result(tool, None))
        }
        ToolError::Protocol(error) => Err(error),
    }
}
