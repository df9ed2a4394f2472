//! Turning a tool's typed return value into a `tools/call` result.

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

use crate::errors::ToolError;

/// For tools whose `output` is not an object schema: `structuredContent` is
/// `{"result": value}` and `content` one text block (a string as is, other values as JSON).
pub fn wrapped_output<T: Serialize>(value: &T) -> Result<CallToolResponse, ToolError> {
    let value = to_value(value)?;
    let text = text_of(&value);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(serde_json::json!({ "result": value }));
    Ok(result.into())
}

/// For tools whose `output` is an object schema: `structuredContent` is the object itself and
/// `content` one text block with its JSON.
pub fn object_output<T: Serialize>(value: &T) -> Result<CallToolResponse, ToolError> {
    let value = to_value(value)?;
    let text = text_of(&value);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(value);
    Ok(result.into())
}

/// For tools without `output`: the content blocks as returned, no `structuredContent`.
pub fn content_output(content: Vec<ContentBlock>) -> Result<CallToolResponse, ToolError> {
    Ok(CallToolResult::success(content).into())
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value)
        .map_err(|e| ToolError::internal(format!("tool output does not serialize: {e}")))
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}
