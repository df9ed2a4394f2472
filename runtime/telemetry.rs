//! Traces and metrics by the OpenTelemetry semantic conventions for MCP.

use std::future::Future;

/// Runs the resolver `resolver`'s future (the generated code wraps every resolver call in it,
/// so that each resolver has its own span).
pub fn resolve<F: Future>(resolver: &'static str, f: F) -> tracing::instrument::Instrumented<F> {
    let _ = resolver;
    tracing::Instrument::instrument(f, tracing::Span::none())
}

// stub: task A. The request span and the outbound span with the plan's §4.1 signatures, as
// no-ops, so the wrapper (`operation.rs`) and the legacy sends (`ask.rs`) compile before the
// real spans land.

/// What the wrapper hands the span and the histogram when a request ends.
pub(super) enum Ending<'a> {
    /// A result (not an `isError` one).
    Ok,
    /// An `isError` result, with the status description.
    ToolError(&'a str),
    /// Cancelled by the client.
    Cancelled,
    /// A JSON-RPC error.
    Error(&'a rmcp::ErrorData),
}

/// What a request is about: a *declared* tool or prompt name (never the client's string).
pub(super) enum Target {
    /// The method alone.
    None,
    /// A declared tool.
    Tool(&'static str),
    /// A declared prompt.
    Prompt(&'static str),
    /// A resource (its URI is an attribute, never in the span name).
    Resource,
}

/// One request's span and its clock.
pub(super) struct RequestSpan {
    span: tracing::Span,
}

impl RequestSpan {
    /// Starts the span of a `method` request about `target`.
    pub(super) fn start(
        method: &'static str,
        target: Target,
        context: &rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Self {
        let _ = (method, target, context);
        RequestSpan {
            span: tracing::Span::none(),
        }
    }

    /// The span, for `.instrument(..)`.
    pub(super) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Ends the span with `ending`.
    pub(super) fn finish(self, ending: Ending<'_>) {
        let _ = ending;
    }
}

/// The CLIENT span of a server-to-client request `method` with id `id`, and the `traceparent`
/// to put into its `_meta` (`None`: no span is recorded).
pub(super) fn outbound_span(
    method: &'static str,
    id: &rmcp::model::RequestId,
) -> (tracing::Span, Option<String>) {
    let _ = (method, id);
    (tracing::Span::none(), None)
}
