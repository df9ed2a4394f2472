//! [`ToolError`] (what tools and resolvers fail with) and [`Outcome`] (an elicitation's answer).

use std::fmt;

use rmcp::{ErrorData, service::ServiceError};

/// The error a tool body, a resolver, a prompt or a resource reader returns.
///
/// * [`ToolError::new`] becomes an `isError` result `Error executing tool <tool>: <message>`
///   (prompts and resources: the JSON-RPC error -32602 with the message; for resources with
///   `data.uri`);
/// * [`ToolError::internal`] is logged on the server and reported only as
///   `Error executing tool <tool>` (the details stay on the server, as for a panic; prompts and
///   resources: -32603);
/// * [`ToolError::protocol`] (or `?` on an [`ErrorData`]) is returned to the client as a JSON-RPC
///   error instead of a tool result (used for -32021 missing capability, -32600, ...);
/// * [`ToolError::resource_not_found`] (resource readers) is -32002 `Resource not found` with
///   `data.uri` (-32602 on 2026-07-28 connections).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ToolError {
    /// A message shown to the client: `Error executing tool <tool>: <message>`.
    Message(String),
    /// An internal failure; logged, shown to the client only as `Error executing tool <tool>`.
    Internal(String),
    /// A protocol error, returned as the JSON-RPC error of the `tools/call` request.
    Protocol(ErrorData),
}

impl ToolError {
    /// An error whose message the client sees: `Error executing tool <tool>: <message>`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError::Message(message.into())
    }

    /// What a freshly generated stub returns until the user writes the body.
    pub fn not_implemented(name: &str) -> Self {
        ToolError::Message(format!(
            "'{name}' is not implemented yet (write it in src/handlers.rs)"
        ))
    }

    /// An internal error: `detail` is logged, the client sees `Error executing tool <tool>`.
    pub fn internal(detail: impl fmt::Display) -> Self {
        ToolError::Internal(detail.to_string())
    }

    /// A JSON-RPC error carried out of the call as `Err(ErrorData)`.
    pub fn protocol(error: ErrorData) -> Self {
        ToolError::Protocol(error)
    }

    /// For resource readers: the URI names nothing. Answered as -32002 `Resource not found`
    /// with `data: {"uri": <uri>}` (rmcp turns -32002 into -32602 for 2026-07-28 clients).
    pub fn resource_not_found() -> Self {
        ToolError::Protocol(ErrorData::resource_not_found("Resource not found", None))
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Message(m) => f.write_str(m),
            ToolError::Internal(m) => write!(f, "internal error: {m}"),
            ToolError::Protocol(e) => write!(f, "protocol error {}: {}", e.code.0, e.message),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<ErrorData> for ToolError {
    fn from(error: ErrorData) -> Self {
        ToolError::Protocol(error)
    }
}

/// The whole answer to a form elicitation: accepted with data, declined, or cancelled.
///
/// A tool parameter bound with `"outcome": true` receives this; a plain binding receives the
/// accepted value and the call fails on decline/cancel (see [`Outcome::into_value`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome<T> {
    /// The user accepted and supplied data (validated against the form's schema).
    Accepted(T),
    /// The user explicitly declined.
    Declined,
    /// The user dismissed the question.
    Cancelled,
}

impl<T> Outcome<T> {
    /// The wire name of the action: `accept`, `decline` or `cancel`.
    pub fn action(&self) -> &'static str {
        match self {
            Outcome::Accepted(_) => "accept",
            Outcome::Declined => "decline",
            Outcome::Cancelled => "cancel",
        }
    }

    /// `true` for [`Outcome::Accepted`].
    pub fn is_accepted(&self) -> bool {
        matches!(self, Outcome::Accepted(_))
    }

    /// The accepted value, or the error a plain binding of parameter `param` reports:
    /// `Resolver for parameter '<param>' could not resolve: elicitation was decline` (or `cancel`).
    pub fn into_value(self, param: &str) -> Result<T, ToolError> {
        match self {
            Outcome::Accepted(value) => Ok(value),
            other => Err(unresolved(param, other.action())),
        }
    }

    /// Like [`Outcome::into_value`], by reference (a resolver consuming another resolver's value).
    pub fn value(&self, param: &str) -> Result<&T, ToolError> {
        match self {
            Outcome::Accepted(value) => Ok(value),
            other => Err(unresolved(param, other.action())),
        }
    }

    /// Maps the accepted value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Outcome<U> {
        match self {
            Outcome::Accepted(value) => Outcome::Accepted(f(value)),
            Outcome::Declined => Outcome::Declined,
            Outcome::Cancelled => Outcome::Cancelled,
        }
    }
}

fn unresolved(param: &str, action: &str) -> ToolError {
    ToolError::Message(format!(
        "Resolver for parameter '{param}' could not resolve: elicitation was {action}"
    ))
}

/// A failed server-to-client request: rmcp's own protocol errors pass through, transport
/// failures are internal.
pub(crate) fn service_error(error: ServiceError) -> ToolError {
    match error {
        ServiceError::McpError(e) => ToolError::Protocol(e),
        other => ToolError::internal(format!("request to the client failed: {other}")),
    }
}
