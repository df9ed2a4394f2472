//! [`Capability`]: the client capabilities a question needs, and the -32021 error when the client
//! did not declare one (the same check and text on both protocol eras, as the Python SDK's
//! `_require_capability`).

use rmcp::{
    ErrorData,
    model::{ClientCapabilities, ErrorCode},
};
use serde_json::json;

use crate::errors::ToolError;

/// A client capability a question needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// Form-mode elicitation (a bare `elicitation: {}` counts; URL-only does not).
    Form,
    /// URL-mode elicitation.
    Url,
    /// Sampling without tools.
    Sampling,
    /// Sampling with `tools` or `toolChoice` (`sampling.tools`).
    SamplingTools,
    /// `roots/list`.
    Roots,
}

impl Capability {
    /// Fails with -32021 (data `requiredCapabilities`) when `declared` (the client's
    /// capabilities, if it sent any) lacks this one. `requester` names who needs it, e.g.
    /// `resolver 'confirm_backorder'`.
    pub(crate) fn require(
        self,
        declared: Option<ClientCapabilities>,
        requester: &dyn std::fmt::Display,
    ) -> Result<(), ToolError> {
        let caps = declared.unwrap_or_default();
        let present = match self {
            Capability::Form => caps
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
            Capability::Url => caps.elicitation.as_ref().is_some_and(|e| e.url.is_some()),
            Capability::Sampling => caps.sampling.is_some(),
            Capability::SamplingTools => caps.sampling.as_ref().is_some_and(|s| s.tools.is_some()),
            Capability::Roots => caps.roots.is_some(),
        };
        if present {
            return Ok(());
        }
        let (what, data) = match self {
            Capability::Form => ("form elicitation", json!({"elicitation": {"form": {}}})),
            Capability::Url => ("url elicitation", json!({"elicitation": {"url": {}}})),
            Capability::Sampling => ("sampling", json!({"sampling": {}})),
            Capability::SamplingTools => ("sampling.tools", json!({"sampling": {"tools": {}}})),
            Capability::Roots => ("roots", json!({"roots": {}})),
        };
        Err(ToolError::Protocol(ErrorData::new(
            ErrorCode(-32021),
            format!("Client did not declare the {what} capability required by {requester}"),
            Some(json!({ "requiredCapabilities": data })),
        )))
    }
}
