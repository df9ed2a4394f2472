//! The fixtures of the MCP conformance suite (`peers/conformance/FIXTURES.md`): one method per
//! resolver, tool, prompt written in code and resource read in code.
//!
//! mcpgen wrote this file once and never overwrites it; `mcpgen generate` appends stubs for
//! tools and resolvers added to the spec.

use std::time::Duration;

use serde_json::json;

use crate::generated::types::{
    Color, Confirmation, DefaultsForm, EnumsForm, JsonSchema202012ToolArgs, Name, PromptContext,
    TemplateDataVars, TestElicitationArgs, TestPromptWithEmbeddedResourceArguments,
    TestSamplingArgs, UserInfo, Value,
};
use crate::generated::{
    Ask, ContentBlock, Context, CreateMessageResult, ListRootsResult, LoggingLevel, Outcome,
    PromptMessage, PromptMessageRole, Prompts, Resolvers, ResourceBody, ResourceContents,
    Resources, SamplingMessage, ToolError, Tools, sampled_text, user_text,
};

/// A 1x1 PNG (the suite's reference image).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny WAV file.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The conformance fixtures hold no state.
#[derive(Debug, Default)]
pub struct Conformance {}

fn text(t: impl Into<String>) -> Vec<ContentBlock> {
    vec![ContentBlock::text(t)]
}

fn sampled(result: &CreateMessageResult) -> &str {
    sampled_text(result).unwrap_or("")
}

/// The roots' URIs, `a, b` (roots are deprecated by SEP-2577, but legacy clients and 2026-07-28
/// `roots/list` answers still carry them).
#[allow(deprecated)]
fn root_uris(roots: &ListRootsResult) -> String {
    roots
        .roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[allow(deprecated)]
fn root_count(roots: &ListRootsResult) -> usize {
    roots.roots.len()
}

/// `a, b` for a list of enum values (their wire strings).
fn joined<T: ToString>(values: &[T]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn or_none<T: ToString>(value: &Option<T>) -> String {
    value
        .as_ref()
        .map_or_else(|| "none".to_string(), ToString::to_string)
}

impl Resolvers for Conformance {
    async fn prompt_sample(
        &self,
        _ctx: &Context,
        prompt: &str,
    ) -> Result<Ask<CreateMessageResult>, ToolError> {
        Ok(Ask::sample(vec![SamplingMessage::user_text(prompt)], 100))
    }

    async fn user_info(&self, _ctx: &Context, message: &str) -> Result<Ask<UserInfo>, ToolError> {
        Ok(Ask::elicit(message))
    }

    async fn sep1034_defaults(&self, _ctx: &Context) -> Result<Ask<DefaultsForm>, ToolError> {
        Ok(Ask::elicit(
            "Please review and update the form fields with defaults",
        ))
    }

    async fn sep1330_enums(&self, _ctx: &Context) -> Result<Ask<EnumsForm>, ToolError> {
        Ok(Ask::elicit("Please select options from the enum fields"))
    }

    async fn required_sample(&self, _ctx: &Context) -> Result<Ask<CreateMessageResult>, ToolError> {
        Ok(Ask::sample(
            vec![SamplingMessage::user_text("Say hello")],
            50,
        ))
    }

    async fn user_name(&self, _ctx: &Context) -> Result<Ask<Name>, ToolError> {
        Ok(Ask::elicit("What is your name?"))
    }

    async fn capital_question(
        &self,
        _ctx: &Context,
    ) -> Result<Ask<CreateMessageResult>, ToolError> {
        Ok(Ask::sample(
            vec![SamplingMessage::user_text("What is the capital of France?")],
            100,
        ))
    }

    async fn client_roots(&self, _ctx: &Context) -> Result<Ask<ListRootsResult>, ToolError> {
        Ok(Ask::roots())
    }

    async fn confirm(&self, _ctx: &Context) -> Result<Ask<Confirmation>, ToolError> {
        Ok(Ask::elicit("Please confirm"))
    }

    async fn greeting(&self, _ctx: &Context) -> Result<Ask<CreateMessageResult>, ToolError> {
        Ok(Ask::sample(
            vec![SamplingMessage::user_text("Generate a greeting")],
            50,
        ))
    }

    async fn step1(&self, _ctx: &Context) -> Result<Ask<Name>, ToolError> {
        Ok(Ask::elicit("Step 1: What is your name?"))
    }

    async fn step2(&self, _ctx: &Context, _step1: &Name) -> Result<Ask<Color>, ToolError> {
        Ok(Ask::elicit("Step 2: What is your favorite color?"))
    }

    async fn elicit_input(&self, ctx: &Context) -> Result<Ask<Value>, ToolError> {
        // Ask only a client that declared elicitation; others get a default.
        let can_elicit = ctx
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        if can_elicit {
            Ok(Ask::elicit("Please provide a value"))
        } else {
            Ok(Ask::value(Value {
                value: "default".to_string(),
            }))
        }
    }

    async fn sample_input(&self, _ctx: &Context) -> Result<Ask<CreateMessageResult>, ToolError> {
        Ok(Ask::sample(
            vec![SamplingMessage::user_text("Provide a sample")],
            50,
        ))
    }

    async fn user_context(&self, _ctx: &Context) -> Result<Ask<PromptContext>, ToolError> {
        Ok(Ask::elicit("What context should the prompt use?"))
    }
}

impl Tools for Conformance {
    async fn test_simple_text(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text("This is a simple text response for testing."))
    }

    async fn test_image_content(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(vec![ContentBlock::image(PNG, "image/png")])
    }

    async fn test_audio_content(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(vec![ContentBlock::audio(WAV, "audio/wav")])
    }

    async fn test_embedded_resource(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(vec![ContentBlock::resource(ResourceContents::text(
            "This is an embedded resource content.",
            "test://embedded-resource",
        ))])
    }

    async fn test_multiple_content_types(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(PNG, "image/png"),
            ContentBlock::resource(
                ResourceContents::text(
                    json!({"test": "data", "value": 123}).to_string(),
                    "test://mixed-content-resource",
                )
                .with_mime_type("application/json"),
            ),
        ])
    }

    async fn test_tool_with_logging(
        &self,
        ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        ctx.log(LoggingLevel::Info, json!("Tool execution started"))
            .await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.log(LoggingLevel::Info, json!("Tool processing data"))
            .await?;
        tokio::time::sleep(Duration::from_millis(50)).await;
        ctx.log(LoggingLevel::Info, json!("Tool execution completed"))
            .await?;
        Ok(text("Tool with logging executed successfully"))
    }

    async fn test_tool_with_progress(
        &self,
        ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ctx.progress(
                step,
                Some(100.0),
                Some(format!("Completed step {step} of 100")),
            )
            .await?;
        }
        Ok(text("Tool with progress executed successfully"))
    }

    async fn test_error_handling(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Err(ToolError::new(
            "This tool intentionally returns an error for testing",
        ))
    }

    async fn test_sampling(
        &self,
        _ctx: &Context,
        _args: TestSamplingArgs,
        sampled_answer: CreateMessageResult,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!("LLM response: {}", sampled(&sampled_answer))))
    }

    async fn test_elicitation(
        &self,
        _ctx: &Context,
        _args: TestElicitationArgs,
        response: Outcome<UserInfo>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(match response {
            Outcome::Accepted(u) => format!(
                "User response: action=accept, username={}, email={}",
                u.username, u.email
            ),
            other => format!("User response: action={}", other.action()),
        }))
    }

    async fn test_elicitation_sep1034_defaults(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        form: Outcome<DefaultsForm>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(match form {
            Outcome::Accepted(f) => format!(
                "Elicitation completed: action=accept, name={}, age={}, score={}, status={}, verified={}",
                f.name, f.age, f.score, f.status, f.verified
            ),
            other => format!("Elicitation completed: action={}", other.action()),
        }))
    }

    async fn test_elicitation_sep1330_enums(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        form: Outcome<EnumsForm>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(match form {
            Outcome::Accepted(f) => format!(
                "Elicitation completed: action=accept, untitledSingle={}, titledSingle={}, legacyEnum={}, untitledMulti=[{}], titledMulti=[{}]",
                or_none(&f.untitled_single),
                or_none(&f.titled_single),
                or_none(&f.legacy_enum),
                joined(&f.untitled_multi),
                joined(&f.titled_multi)
            ),
            other => format!("Elicitation completed: action={}", other.action()),
        }))
    }

    async fn test_missing_capability(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        sampled_answer: CreateMessageResult,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!("Success: {}", sampled(&sampled_answer))))
    }

    async fn test_input_required_result_elicitation(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        user: Name,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!("Hello, {}!", user.name)))
    }

    async fn test_input_required_result_sampling(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        answer: CreateMessageResult,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!("Sampling result: {}", sampled(&answer))))
    }

    async fn test_input_required_result_list_roots(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        roots: ListRootsResult,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!(
            "Found {} root(s): {}",
            root_count(&roots),
            root_uris(&roots)
        )))
    }

    async fn test_input_required_result_request_state(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        confirmation: Confirmation,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!(
            "state-ok: requestState validated, ok={}",
            confirmation.ok
        )))
    }

    async fn test_input_required_result_multiple_inputs(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        user: Name,
        greeting: CreateMessageResult,
        roots: ListRootsResult,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!(
            "Name: {}; Greeting: {}; Roots: {}",
            user.name,
            sampled(&greeting),
            root_count(&roots)
        )))
    }

    async fn test_input_required_result_multi_round(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        name: Name,
        color: Color,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!(
            "Multi-round complete for {} who likes {}",
            name.name, color.color
        )))
    }

    async fn test_input_required_result_tampered_state(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        confirmation: Confirmation,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!(
            "integrity-ok: state verified, ok={}",
            confirmation.ok
        )))
    }

    async fn test_input_required_result_capabilities(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        value: Value,
        sample: CreateMessageResult,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!(
            "capabilities-ok: value={}, sample={}",
            value.value,
            sampled(&sample)
        )))
    }

    async fn test_streaming_elicitation(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        confirmation: Confirmation,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(text(format!("Streaming complete, ok={}", confirmation.ok)))
    }

    async fn test_logging_tool(
        &self,
        ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        ctx.log(
            LoggingLevel::Info,
            json!("Diagnostic trace logging activated"),
        )
        .await?;
        Ok(text("Logging evaluated"))
    }

    async fn test_trigger_tool_change(
        &self,
        ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        ctx.notifier().tools_list_changed().await;
        Ok(text("Mutation triggered: notifications/tools/list_changed"))
    }

    async fn test_trigger_prompt_change(
        &self,
        ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        ctx.notifier().prompts_list_changed().await;
        Ok(text(
            "Mutation triggered: notifications/prompts/list_changed",
        ))
    }

    async fn json_schema_2020_12_tool(
        &self,
        _ctx: &Context,
        args: JsonSchema202012ToolArgs,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        // The arguments passed the listed schema (`anyOf` of `required`, `if`/`then`/`else`,
        // `additionalProperties: false`); the typed value holds every member sent.
        let received = serde_json::to_string(&args).map_err(|e| ToolError::new(e.to_string()))?;
        Ok(text(format!(
            "json_schema_2020_12_tool received {received}"
        )))
    }
}

impl Prompts for Conformance {
    async fn test_prompt_with_embedded_resource(
        &self,
        _ctx: &Context,
        args: TestPromptWithEmbeddedResourceArguments,
    ) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![
            PromptMessage::new_resource(
                PromptMessageRole::User,
                args.resource_uri,
                Some("text/plain".to_string()),
                Some("Embedded resource content for testing.".to_string()),
                None,
                None,
                None,
            ),
            user_text("Please process the embedded resource above."),
        ])
    }

    async fn test_input_required_result_prompt(
        &self,
        _ctx: &Context,
        _args: serde_json::Map<String, serde_json::Value>,
        context: PromptContext,
    ) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![user_text(format!(
            "Prompt with context: {}",
            context.context
        ))])
    }
}

impl Resources for Conformance {
    async fn read_template_data(
        &self,
        _ctx: &Context,
        _uri: &str,
        vars: TemplateDataVars,
    ) -> Result<ResourceBody, ToolError> {
        ResourceBody::json(&json!({
            "id": vars.id,
            "templateTest": true,
            "data": format!("Data for ID: {}", vars.id),
        }))
    }
}
