//! The prompt catalog: static prompt definitions emitted by mcpgen, their `prompts/list`
//! entries, fixed messages rendered from templates, and the guarded execution of prompts
//! written in code.

use std::{future::Future, panic::AssertUnwindSafe};

use futures::{FutureExt, future::BoxFuture};
use rmcp::{
    ErrorData,
    model::{
        ContentBlock, EmbeddedResource, GetPromptResponse, GetPromptResult, ImageContent,
        JsonObject, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
    },
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{
    catalog::{
        resources::ResourceCatalog,
        tools::{CALL_ARGUMENTS, CallArguments},
    },
    errors::ToolError,
};

/// One prompt, as mcpgen emits it.
#[derive(Debug, Clone, Copy)]
pub struct PromptDef {
    /// The prompt name.
    pub name: &'static str,
    /// The spec's `title`.
    pub title: Option<&'static str>,
    /// The spec's `description`.
    pub description: &'static str,
    /// The spec's `arguments`, in order.
    pub arguments: &'static [PromptArgDef],
    /// The spec's fixed `messages`; `None` for a prompt written in code.
    pub messages: Option<&'static [MessageDef]>,
}

/// One prompt argument.
#[derive(Debug, Clone, Copy)]
pub struct PromptArgDef {
    /// The argument name.
    pub name: &'static str,
    /// The spec's `title`.
    pub title: Option<&'static str>,
    /// The spec's `description`.
    pub description: Option<&'static str>,
    /// The spec's `required` (default `false`).
    pub required: bool,
    /// `completion/complete` candidates.
    pub complete: &'static [&'static str],
}

/// One fixed message of a prompt.
#[derive(Debug, Clone, Copy)]
pub struct MessageDef {
    /// Who speaks.
    pub role: MessageRole,
    /// What is said.
    pub content: MessageContent,
}

/// The role of a fixed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageRole {
    /// `user`
    User,
    /// `assistant`
    Assistant,
}

/// The content of a fixed message.
#[derive(Debug, Clone, Copy)]
pub enum MessageContent {
    /// Text; `{arg}` is replaced by the argument `arg` (an absent optional argument by
    /// nothing), `{{` and `}}` are literal braces.
    Text(&'static str),
    /// An image (base64 `data`).
    Image {
        /// Base64 image data.
        data: &'static str,
        /// Its MIME type.
        mime_type: &'static str,
    },
    /// A fixed (`text` or `blob`) resource of the [`ResourceCatalog`], embedded by URI.
    Resource(&'static str),
}

/// All prompts of a server.
pub struct PromptCatalog {
    defs: &'static [PromptDef],
}

impl PromptCatalog {
    /// The catalog of `defs`.
    pub fn new(defs: &'static [PromptDef]) -> Self {
        PromptCatalog { defs }
    }

    /// The `prompts/list` result, in spec order.
    pub fn list(&self) -> ListPromptsResult {
        let prompts = self
            .defs
            .iter()
            .map(|def| {
                let arguments = (!def.arguments.is_empty()).then(|| {
                    def.arguments
                        .iter()
                        .map(|arg| {
                            let mut argument =
                                PromptArgument::new(arg.name).with_required(arg.required);
                            argument.title = arg.title.map(Into::into);
                            argument.description = arg.description.map(Into::into);
                            argument
                        })
                        .collect()
                });
                let mut prompt = Prompt::new(def.name, Some(def.description), arguments);
                prompt.title = def.title.map(Into::into);
                prompt
            })
            .collect();
        ListPromptsResult::with_all_items(prompts)
    }

    /// The definition of prompt `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&'static PromptDef> {
        self.defs.iter().find(|def| def.name == name)
    }

    /// `prompts/get` of a prompt with fixed messages: checks the required arguments and renders
    /// the messages (placeholders from `arguments`, embedded resources read from `resources`).
    pub fn render(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        resources: &ResourceCatalog,
    ) -> Result<GetPromptResponse, ErrorData> {
        let def = self.get(name).ok_or_else(|| unknown_prompt(name))?;
        let arguments = arguments.unwrap_or_default();
        check_required(def, &arguments)?;
        let Some(messages) = def.messages else {
            tracing::error!(prompt = name, "render called for a prompt written in code");
            return Err(ErrorData::internal_error("Internal error", None));
        };
        let messages = messages
            .iter()
            .map(|message| {
                let role = match message.role {
                    MessageRole::User => Role::User,
                    MessageRole::Assistant => Role::Assistant,
                };
                let content = match message.content {
                    MessageContent::Text(template) => {
                        ContentBlock::text(render_template(template, def, &arguments))
                    }
                    MessageContent::Image { data, mime_type } => {
                        ContentBlock::Image(ImageContent::new(data, mime_type))
                    }
                    MessageContent::Resource(uri) => {
                        let Some(contents) = resources.fixed(uri) else {
                            tracing::error!(
                                prompt = name,
                                uri,
                                "embedded resource is not a fixed resource"
                            );
                            return Err(ErrorData::internal_error("Internal error", None));
                        };
                        ContentBlock::Resource(EmbeddedResource::new(contents))
                    }
                };
                Ok(PromptMessage::new(role, content))
            })
            .collect::<Result<Vec<_>, ErrorData>>()?;
        Ok(GetPromptResult::new(messages)
            .with_description(def.description)
            .into())
    }

    /// `prompts/get` of a prompt written in code: checks the required arguments, deserializes
    /// the arguments into `A`, and runs `body` with panics caught (and the arguments digest set,
    /// so a 2026-07-28 `requestState` is bound to them). A complete result without a
    /// description gets the prompt's. [`ToolError`]s become JSON-RPC errors: a message -32602
    /// with the message, an internal error -32603 (logged), protocol errors pass.
    ///
    /// Boxed: the server's request future then holds a pointer, not the state machine of the
    /// largest tool or prompt (which tokio would copy on every request).
    pub fn run<'a, A, F, Fut>(
        &'a self,
        name: &'a str,
        arguments: Option<JsonObject>,
        body: F,
    ) -> BoxFuture<'a, Result<GetPromptResponse, ErrorData>>
    where
        A: DeserializeOwned + Send + 'a,
        F: FnOnce(A) -> Fut + Send + 'a,
        Fut: Future<Output = Result<GetPromptResponse, ToolError>> + Send + 'a,
    {
        self.run_unboxed(name, arguments, body).boxed()
    }

    async fn run_unboxed<A, F, Fut>(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        body: F,
    ) -> Result<GetPromptResponse, ErrorData>
    where
        A: DeserializeOwned,
        F: FnOnce(A) -> Fut,
        Fut: Future<Output = Result<GetPromptResponse, ToolError>>,
    {
        let def = self.get(name).ok_or_else(|| unknown_prompt(name))?;
        let arguments = arguments.unwrap_or_default();
        check_required(def, &arguments)?;
        let arguments = Value::Object(arguments);
        let args = A::deserialize(&arguments).map_err(|e| {
            ErrorData::invalid_params(format!("Invalid arguments for prompt {name}: {e}"), None)
        })?;
        let call = CallArguments::new(arguments);
        let outcome = AssertUnwindSafe(CALL_ARGUMENTS.scope(call, body(args)))
            .catch_unwind()
            .await;
        match outcome {
            Ok(Ok(GetPromptResponse::Complete(mut result))) => {
                if result.description.is_none() {
                    result.description = Some(def.description.to_string());
                }
                Ok(GetPromptResponse::Complete(result))
            }
            Ok(Ok(other)) => Ok(other),
            Ok(Err(ToolError::Message(message))) => Err(ErrorData::invalid_params(message, None)),
            Ok(Err(ToolError::Internal(detail))) => {
                tracing::error!(prompt = name, "prompt failed: {detail}");
                Err(ErrorData::internal_error("Internal error", None))
            }
            Ok(Err(ToolError::Protocol(error))) => Err(error),
            Err(panic) => {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "<non-string panic payload>".to_string());
                tracing::error!(prompt = name, "prompt panicked: {message}");
                Err(ErrorData::internal_error("Internal error", None))
            }
        }
    }
}

/// What a prompt written in code returns: its messages (the description is filled in).
pub fn prompt_output(messages: Vec<PromptMessage>) -> Result<GetPromptResponse, ToolError> {
    Ok(GetPromptResult::new(messages).into())
}

/// The protocol error for a `prompts/get` naming no known prompt: -32602 `Unknown prompt: <name>`.
pub fn unknown_prompt(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown prompt: {name}"), None)
}

/// -32602 `Missing required arguments: a, b` (declaration order) unless all are present.
fn check_required(def: &PromptDef, arguments: &JsonObject) -> Result<(), ErrorData> {
    let missing: Vec<&str> = def
        .arguments
        .iter()
        .filter(|arg| arg.required && arguments.get(arg.name).is_none_or(Value::is_null))
        .map(|arg| arg.name)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ErrorData::invalid_params(
        format!("Missing required arguments: {}", missing.join(", ")),
        None,
    ))
}

/// Renders a message template: `{arg}` → the argument's value (a declared argument that is
/// absent → empty; a name that is no argument stays as written), `{{` → `{`, `}}` → `}`.
pub(crate) fn render_template(template: &str, def: &PromptDef, arguments: &JsonObject) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('{')
            && let Some(close) = tail.find('}')
        {
            let name = &tail[1..close];
            if def.arguments.iter().any(|arg| arg.name == name) {
                match arguments.get(name) {
                    None | Some(Value::Null) => {}
                    Some(Value::String(value)) => out.push_str(value),
                    Some(other) => out.push_str(&other.to_string()),
                }
                rest = &tail[close + 1..];
                continue;
            }
        }
        out.push_str(&tail[..1]);
        rest = &tail[1..];
    }
    out.push_str(rest);
    out
}
