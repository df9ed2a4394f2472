//! Traces and metrics by the OpenTelemetry semantic conventions for MCP
//! (`docs/gen-ai/mcp.md` of open-telemetry/semantic-conventions-genai).
//!
//! * Spans are `tracing` spans on the target [`TARGET`] (`mcp.server`), carrying the
//!   `otel.name` / `otel.kind` / `otel.status_*` fields `tracing-opentelemetry` reads. One SERVER
//!   span per request ([`RequestSpan`], named `{mcp.method.name} {target}`), an INTERNAL
//!   `resolve {resolver}` span per resolver ([`resolve`], [`resolver_span`]), a `question
//!   {resolver}` span per question of a round ([`question_span`]) and a CLIENT span per request
//!   the server sends the client ([`outbound_span`]).
//! * The command line installs [`Telemetry::layer`] only when OTLP export is configured, and its
//!   log output filters `mcp.server` out: with export off every callsite of that target is
//!   disabled, so `span!` returns `Span::none()` without evaluating a field.
//! * Metrics: `mcp.server.operation.duration` and `mcp.server.session.duration`, histograms in
//!   seconds, recorded only once a [`Telemetry`] with metrics installed its instruments (OTLP,
//!   or the Prometheus text at `--metrics-bind`).
//! * Parents: `params._meta.traceparent`/`tracestate` (SEP-414) first, else the HTTP
//!   `traceparent`/`tracestate` headers; when both are there and differ, the header's span is a
//!   link. With neither, the request span is a root.
//!
//! Without the `telemetry` feature (on by default) the OpenTelemetry crates are not compiled in:
//! the spans are still opened (for any `tracing` layer an embedder installs) but nothing
//! exports them, no metric is recorded, trace context is neither read nor sent, the
//! OpenTelemetry variables are ignored with a warning, and `--metrics-bind` is refused.
//!
//! `error.type` values: the JSON-RPC error code as text (`"-32602"`) for an error answer,
//! `"tool_error"` for a result with `isError: true` (timeouts and concurrency refusals too: the
//! status description says which), and `"cancelled"` for a call the client cancelled.

use std::{future::Future, time::Instant};

#[cfg(feature = "telemetry")]
use std::{collections::HashMap, sync::OnceLock, time::Duration};

#[cfg(feature = "telemetry")]
use opentelemetry::{
    KeyValue,
    metrics::Histogram,
    propagation::{Extractor, Injector, TextMapPropagator},
    trace::{TraceContextExt, TracerProvider as _},
};
#[cfg(feature = "telemetry")]
use opentelemetry_sdk::{
    Resource,
    metrics::SdkMeterProvider,
    propagation::TraceContextPropagator,
    trace::{SdkTracer, SdkTracerProvider},
};
use rmcp::{
    ErrorData, RoleServer,
    model::{MetaObject, ProtocolVersion, RequestId},
    service::RequestContext,
};
use tracing::{Instrument, Level, field::Empty, instrument::Instrumented};
#[cfg(feature = "telemetry")]
use tracing_opentelemetry::OpenTelemetrySpanExt;
#[cfg(feature = "telemetry")]
use tracing_subscriber::{
    Layer,
    filter::{Filtered, Targets},
    registry::LookupSpan,
};

/// The `tracing` target of every span this module opens. It has a dot, so it is never the
/// prefix of a module path (`Targets` matches by raw prefix).
pub(crate) const TARGET: &str = "mcp.server";

/// The explicit bucket bounds (seconds) the conventions give both histograms.
#[cfg(feature = "telemetry")]
pub(crate) const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The instrumentation scope of the spans and metrics.
#[cfg(feature = "telemetry")]
const SCOPE: &str = "mcpgen";

/// How a request ended, for its span and the operation histogram.
pub(crate) enum Ending<'a> {
    /// A result (not `isError`).
    Ok,
    /// A tool result with `isError: true`; the text is the span's status description.
    ToolError(&'a str),
    /// Cancelled by the client (`notifications/cancelled`, or a closed 2026-07-28 request).
    Cancelled,
    /// A JSON-RPC error answer.
    Error(&'a ErrorData),
}

/// What a request is about: the second half of its span name, and its attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    /// A list, `initialize`, `completion/complete`, …: the span is named after the method.
    None,
    /// `tools/call` of a *declared* tool (never the client's string).
    Tool(&'static str),
    /// `prompts/get` of a *declared* prompt.
    Prompt(&'static str),
    /// `resources/read` or a subscription of the URI: it goes into `mcp.resource.uri` only,
    /// never into the span name or a metric's labels (the client chooses it).
    Resource(&'a str),
}

impl Target<'_> {
    fn name(self) -> Option<&'static str> {
        match self {
            Target::Tool(name) | Target::Prompt(name) => Some(name),
            Target::None | Target::Resource(_) => None,
        }
    }
}

/// The process-wide instruments, set once a [`Telemetry`] with metrics was built.
#[cfg(feature = "telemetry")]
struct Instruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
}

/// Without the `telemetry` feature there are no instruments.
#[cfg(not(feature = "telemetry"))]
enum Instruments {}

#[cfg(feature = "telemetry")]
static METRICS: OnceLock<Instruments> = OnceLock::new();

/// The instruments, when metrics are on.
#[cfg(feature = "telemetry")]
fn metrics() -> Option<&'static Instruments> {
    METRICS.get()
}

/// The instruments: never, without the `telemetry` feature.
#[cfg(not(feature = "telemetry"))]
fn metrics() -> Option<&'static Instruments> {
    None
}

/// Creates both histograms on `provider` and makes them the process's (the first provider
/// wins: a process has one command line).
#[cfg(feature = "telemetry")]
fn install_instruments(provider: &SdkMeterProvider) {
    use opentelemetry::metrics::MeterProvider as _;
    let meter = provider.meter(SCOPE);
    let operation = meter
        .f64_histogram("mcp.server.operation.duration")
        .with_unit("s")
        .with_description("Duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent.")
        .with_boundaries(BUCKETS.to_vec())
        .build();
    let session = meter
        .f64_histogram("mcp.server.session.duration")
        .with_unit("s")
        .with_description("The duration of the MCP session as observed on the MCP server.")
        .with_boundaries(BUCKETS.to_vec())
        .build();
    let _ = METRICS.set(Instruments { operation, session });
}

/// The labels of one request's histogram point (gathered only when metrics are on).
#[derive(Default)]
#[cfg_attr(not(feature = "telemetry"), allow(dead_code))]
struct Labels {
    method: &'static str,
    /// The declared tool or prompt.
    target: Option<Target<'static>>,
    version: Option<String>,
    transport: &'static str,
}

/// The SERVER span of one request and the start of its duration.
///
/// Dropped without [`RequestSpan::finish`] (rmcp dropped the request's future: a 2026-07-28
/// client closed its HTTP request), it ends as [`Ending::Cancelled`].
pub(crate) struct RequestSpan {
    span: tracing::Span,
    /// `None`: metrics are off, or the request already ended.
    start: Option<Instant>,
    labels: Labels,
    /// Whether [`RequestSpan::finish`] ran.
    ended: bool,
}

impl Drop for RequestSpan {
    fn drop(&mut self) {
        if !self.ended {
            self.end(Ending::Cancelled);
        }
    }
}

/// `{method} {target}`, or the method alone.
struct SpanName(&'static str, Option<&'static str>);

impl std::fmt::Display for SpanName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

impl RequestSpan {
    /// Opens the span of a request to `method` (the JSON-RPC method) about `target`, its parent
    /// taken from the request's `_meta` or HTTP headers. Enter it with `.instrument(span.span()
    /// .clone())`, then end it with [`finish`](Self::finish).
    pub(crate) fn start(
        method: &'static str,
        target: Target<'_>,
        context: &RequestContext<RoleServer>,
    ) -> Self {
        let parts = crate::request::head(context);
        Self::open(
            method,
            target,
            &context.id,
            &|| context.protocol_version(),
            &context.meta,
            parts,
            &|| crate::request::Arrival::of(context).and_then(|arrival| arrival.peer),
        )
    }

    /// [`start`](Self::start) from the parts of a request context: its id, protocol version
    /// (asked only when a span or a metric needs it), `_meta`, HTTP head and the client's
    /// address (asked only for an enabled span).
    fn open(
        method: &'static str,
        target: Target<'_>,
        id: &RequestId,
        version: &dyn Fn() -> Option<ProtocolVersion>,
        meta: &MetaObject,
        parts: Option<&axum::http::request::Parts>,
        peer: &dyn Fn() -> Option<std::net::SocketAddr>,
    ) -> Self {
        let transport = if parts.is_some() { "tcp" } else { "pipe" };
        let tool = match target {
            Target::Tool(name) => Some(name),
            _ => None,
        };
        let prompt = match target {
            Target::Prompt(name) => Some(name),
            _ => None,
        };
        let uri = match target {
            Target::Resource(uri) => Some(uri),
            _ => None,
        };
        let span = tracing::span!(
            target: TARGET,
            Level::INFO,
            "mcp",
            otel.name = %SpanName(method, target.name()),
            otel.kind = "server",
            otel.status_code = Empty,
            otel.status_description = Empty,
            mcp.method.name = method,
            gen_ai.tool.name = tool,
            gen_ai.prompt.name = prompt,
            gen_ai.operation.name = (method == "tools/call").then_some("execute_tool"),
            jsonrpc.request.id = %id,
            mcp.protocol.version = version().as_ref().map(ProtocolVersion::as_str),
            mcp.session.id = parts.and_then(session_id),
            mcp.resource.uri = uri,
            network.transport = transport,
            network.protocol.name = parts.map(|_| "http"),
            network.protocol.version = parts.map(|_| "1.1"),
            client.address = peer().map(|peer| tracing::field::display(peer.ip())),
            client.port = peer().map(|peer| i64::from(peer.port())),
            error.type = Empty,
            rpc.response.status_code = Empty,
        );
        if !span.is_disabled() {
            set_parents(&span, meta, parts.map(|parts| &parts.headers));
        }
        let (start, labels) = match metrics() {
            None => (None, Labels::default()),
            Some(_) => (
                Some(Instant::now()),
                Labels {
                    method,
                    target: match target {
                        Target::Tool(name) => Some(Target::Tool(name)),
                        Target::Prompt(name) => Some(Target::Prompt(name)),
                        Target::None | Target::Resource(_) => None,
                    },
                    version: version().map(|v| v.as_str().to_string()),
                    transport,
                },
            ),
        };
        RequestSpan {
            span,
            start,
            labels,
            ended: false,
        }
    }

    /// The span, to `.instrument(..)` the request's future with.
    pub(crate) fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Ends the request: `error.type`, the status and `rpc.response.status_code` on the span,
    /// and a point of `mcp.server.operation.duration`.
    pub(crate) fn finish(mut self, ending: Ending<'_>) {
        self.end(ending);
    }

    /// [`RequestSpan::finish`], once.
    fn end(&mut self, ending: Ending<'_>) {
        self.ended = true;
        let code;
        let (error_type, status_code, description): (Option<&str>, Option<&str>, Option<&str>) =
            match &ending {
                Ending::Ok => (None, None, None),
                Ending::ToolError(text) => (Some("tool_error"), None, Some(text)),
                Ending::Cancelled => (Some("cancelled"), None, Some("cancelled by the client")),
                Ending::Error(error) => {
                    code = error.code.0.to_string();
                    (Some(&code), Some(&code), Some(&error.message))
                }
            };
        if let Some(error_type) = error_type
            && !self.span.is_disabled()
        {
            self.span.record("error.type", error_type);
            self.span.record("otel.status_code", "error");
            if let Some(status_code) = status_code {
                self.span.record("rpc.response.status_code", status_code);
            }
            if let Some(description) = description {
                self.span.record("otel.status_description", description);
            }
        }
        if let (Some(start), Some(instruments)) = (self.start.take(), metrics()) {
            let labels = std::mem::take(&mut self.labels);
            record_operation(instruments, start, labels, error_type, status_code);
        }
    }
}

/// Records one point of `mcp.server.operation.duration`: from `start` until now.
#[cfg(feature = "telemetry")]
fn record_operation(
    instruments: &Instruments,
    start: Instant,
    labels: Labels,
    error_type: Option<&str>,
    status_code: Option<&str>,
) {
    let mut attributes = Vec::with_capacity(7);
    attributes.push(KeyValue::new("mcp.method.name", labels.method));
    match labels.target {
        Some(Target::Tool(name)) => {
            attributes.push(KeyValue::new("gen_ai.tool.name", name));
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        Some(Target::Prompt(name)) => {
            attributes.push(KeyValue::new("gen_ai.prompt.name", name));
        }
        _ if labels.method == "tools/call" => {
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
        }
        _ => {}
    }
    if let Some(error_type) = error_type {
        attributes.push(KeyValue::new("error.type", error_type.to_string()));
    }
    if let Some(status_code) = status_code {
        attributes.push(KeyValue::new(
            "rpc.response.status_code",
            status_code.to_string(),
        ));
    }
    if let Some(version) = labels.version {
        attributes.push(KeyValue::new("mcp.protocol.version", version));
    }
    attributes.push(KeyValue::new("network.transport", labels.transport));
    instruments
        .operation
        .record(start.elapsed().as_secs_f64(), &attributes);
}

/// Never called: without the `telemetry` feature there are no instruments.
#[cfg(not(feature = "telemetry"))]
fn record_operation(
    instruments: &Instruments,
    _: Instant,
    _: Labels,
    _: Option<&str>,
    _: Option<&str>,
) {
    match *instruments {}
}

/// The `Mcp-Session-Id` of a legacy HTTP request.
fn session_id(parts: &axum::http::request::Parts) -> Option<&str> {
    parts.headers.get("mcp-session-id")?.to_str().ok()
}

/// Reads W3C trace context from a request's `_meta`.
#[cfg(feature = "telemetry")]
struct MetaExtractor<'a>(&'a MetaObject);

#[cfg(feature = "telemetry")]
impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        match key {
            "traceparent" => self.0.get_traceparent(),
            "tracestate" => self.0.get_tracestate(),
            _ => None,
        }
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent", "tracestate"]
    }
}

/// Reads W3C trace context from HTTP headers.
#[cfg(feature = "telemetry")]
struct HeaderExtractor<'a>(&'a axum::http::HeaderMap);

#[cfg(feature = "telemetry")]
impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.to_str().ok()
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(axum::http::HeaderName::as_str).collect()
    }
}

/// Collects what a propagator injects.
#[cfg(feature = "telemetry")]
#[derive(Default)]
struct Collected(HashMap<String, String>);

#[cfg(feature = "telemetry")]
impl Injector for Collected {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
}

/// Sets the parent of a request span (not yet entered): `_meta`'s trace context, else the
/// HTTP headers'; a differing header context becomes a link; with neither the span is a root.
#[cfg(feature = "telemetry")]
fn set_parents(span: &tracing::Span, meta: &MetaObject, headers: Option<&axum::http::HeaderMap>) {
    let propagator = TraceContextPropagator::new();
    let extract = |extractor: &dyn Extractor| {
        // From an empty context: `extract` would start from the current one, and a traceparent
        // that does not parse would leave that one's span as the parent.
        let cx = propagator.extract_with_context(&opentelemetry::Context::new(), extractor);
        let valid = cx.span().span_context().is_valid();
        valid.then_some(cx)
    };
    let from_meta = meta
        .get_traceparent()
        .and_then(|_| extract(&MetaExtractor(meta)));
    let from_headers = headers
        .filter(|headers| headers.contains_key("traceparent"))
        .and_then(|headers| extract(&HeaderExtractor(headers)));
    let parent = match (from_meta, from_headers) {
        (Some(meta), Some(header)) => {
            let link = header.span().span_context().clone();
            if link.span_id() != meta.span().span_context().span_id()
                || link.trace_id() != meta.span().span_context().trace_id()
            {
                span.add_link(link);
            }
            meta
        }
        (Some(cx), None) | (None, Some(cx)) => cx,
        (None, None) => opentelemetry::Context::new(),
    };
    // Only fails when no OpenTelemetry layer is installed (nothing to parent then).
    let _ = span.set_parent(parent);
}

/// Without the `telemetry` feature trace context is not read.
#[cfg(not(feature = "telemetry"))]
fn set_parents(_: &tracing::Span, _: &MetaObject, _: Option<&axum::http::HeaderMap>) {}

/// Runs the resolver `resolver`'s future in its own `resolve {resolver}` span (the generated
/// code wraps every plain resolver call in it).
pub fn resolve<F: Future>(resolver: &'static str, f: F) -> Instrumented<F> {
    let span = resolver_span(resolver, None);
    span.record("mcpgen.resolver.asked", false);
    f.instrument(span)
}

/// The INTERNAL span of one resolver, with its `kind` (`elicit`, `sample`, `roots`) when
/// known; `mcpgen.resolver.asked` (and the kind of an asking resolver) are recorded once known.
pub(crate) fn resolver_span(resolver: &str, kind: Option<&'static str>) -> tracing::Span {
    tracing::span!(
        target: TARGET,
        Level::INFO,
        "resolve",
        otel.name = %format_args!("resolve {resolver}"),
        otel.kind = "internal",
        mcpgen.resolver.name = resolver,
        mcpgen.resolver.kind = kind,
        mcpgen.resolver.asked = Empty,
    )
}

/// The INTERNAL span of one question of a round; its `mcpgen.question.outcome` (`asked`,
/// `answered`, `recorded`) is recorded when known.
pub(crate) fn question_span(resolver: &str, kind: &'static str) -> tracing::Span {
    tracing::span!(
        target: TARGET,
        Level::INFO,
        "question",
        otel.name = %format_args!("question {resolver}"),
        otel.kind = "internal",
        mcpgen.question.kind = kind,
        mcpgen.question.outcome = Empty,
    )
}

/// The CLIENT span of a request the server sends the client (`elicitation/create`,
/// `sampling/createMessage`, `roots/list`), and the `traceparent` to put in its `_meta`
/// (`None` when tracing is off). rmcp numbers the request when it sends it: record its
/// `jsonrpc.request.id` on the span then ([`record_request_id`]).
pub(crate) fn outbound_span(method: &'static str) -> (tracing::Span, Option<String>) {
    let span = tracing::span!(
        target: TARGET,
        Level::INFO,
        "outbound",
        otel.name = method,
        otel.kind = "client",
        mcp.method.name = method,
        jsonrpc.request.id = Empty,
    );
    if span.is_disabled() {
        return (span, None);
    }
    let traceparent = traceparent(&span);
    (span, traceparent)
}

/// The W3C `traceparent` of `span`.
#[cfg(feature = "telemetry")]
fn traceparent(span: &tracing::Span) -> Option<String> {
    let mut collected = Collected::default();
    TraceContextPropagator::new().inject_context(&span.context(), &mut collected);
    collected.0.remove("traceparent")
}

/// Without the `telemetry` feature trace context is not sent.
#[cfg(not(feature = "telemetry"))]
fn traceparent(_: &tracing::Span) -> Option<String> {
    None
}

/// Records the `jsonrpc.request.id` rmcp gave the request of an [`outbound_span`].
pub(crate) fn record_request_id(span: &tracing::Span, id: &RequestId) {
    if !span.is_disabled() {
        span.record("jsonrpc.request.id", tracing::field::display(id));
    }
}

/// The duration of one legacy HTTP session or stdio connection
/// (`mcp.server.session.duration`).
#[derive(Debug)]
pub(crate) struct SessionClock(Option<Instant>);

impl SessionClock {
    /// A session opened now (a no-op clock when metrics are off).
    pub(crate) fn session_opened() -> Self {
        SessionClock(metrics().map(|_| Instant::now()))
    }

    /// Records the session's duration: its negotiated `version`, `transport` (`tcp`, `pipe`) and
    /// `error` (`error.type`) when it ended on one.
    pub(crate) fn closed(
        &self,
        version: Option<&str>,
        transport: &'static str,
        error: Option<&str>,
    ) {
        let (Some(opened), Some(instruments)) = (self.0, metrics()) else {
            return;
        };
        record_session(instruments, opened, version, transport, error);
    }
}

/// Records one point of `mcp.server.session.duration`: from `opened` until now.
#[cfg(feature = "telemetry")]
fn record_session(
    instruments: &Instruments,
    opened: Instant,
    version: Option<&str>,
    transport: &'static str,
    error: Option<&str>,
) {
    let mut attributes = vec![KeyValue::new("network.transport", transport)];
    if let Some(version) = version {
        attributes.push(KeyValue::new("mcp.protocol.version", version.to_string()));
    }
    if let Some(error) = error {
        attributes.push(KeyValue::new("error.type", error.to_string()));
    }
    instruments
        .session
        .record(opened.elapsed().as_secs_f64(), &attributes);
}

/// Never called: without the `telemetry` feature there are no instruments.
#[cfg(not(feature = "telemetry"))]
fn record_session(
    instruments: &Instruments,
    _: Instant,
    _: Option<&str>,
    _: &'static str,
    _: Option<&str>,
) {
    match *instruments {}
}

/// A value of the environment, `None` when unset or empty.
#[cfg(feature = "telemetry")]
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// What the OpenTelemetry environment variables ask for.
#[derive(Debug, PartialEq, Eq)]
struct Wanted {
    traces: bool,
    metrics: bool,
}

/// Reads the standard OpenTelemetry variables (through `var`): export is on when
/// `OTEL_SDK_DISABLED` is not `true` and an OTLP endpoint is set; `OTEL_TRACES_EXPORTER=none`
/// and `OTEL_METRICS_EXPORTER=none` switch one signal off; a protocol other than
/// `http/protobuf` is refused.
fn wanted(var: impl Fn(&str) -> Option<String>) -> Result<Wanted, String> {
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return Ok(Wanted {
            traces: false,
            metrics: false,
        });
    }
    for name in [
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    ] {
        if let Some(protocol) = var(name)
            && protocol.trim() != "http/protobuf"
        {
            return Err(format!(
                "{name}={protocol}: this server exports OTLP over HTTP (http/protobuf) only"
            ));
        }
    }
    let general = var("OTEL_EXPORTER_OTLP_ENDPOINT").is_some();
    let exporter_on = |name: &str| {
        var(name).is_none_or(|v| {
            v.split(',')
                .any(|exporter| exporter.trim().eq_ignore_ascii_case("otlp"))
        })
    };
    Ok(Wanted {
        traces: (general || var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some())
            && exporter_on("OTEL_TRACES_EXPORTER"),
        metrics: (general || var("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").is_some())
            && exporter_on("OTEL_METRICS_EXPORTER"),
    })
}

/// The OTLP exporters' HTTP client: blocking reqwest over the runtime's rustls configuration
/// (build and drop it outside any async runtime).
#[cfg(feature = "telemetry")]
fn otlp_client() -> Result<reqwest::blocking::Client, String> {
    let timeout = env_var("OTEL_EXPORTER_OTLP_TIMEOUT")
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map_or(Duration::from_secs(10), Duration::from_millis);
    reqwest::blocking::Client::builder()
        .tls_backend_preconfigured(crate::tls::tls_config()?)
        .timeout(timeout)
        .build()
        .map_err(|e| format!("the OTLP exporter's HTTP client: {e}"))
}

/// A server's telemetry: OTLP export of traces and metrics configured by the standard
/// OpenTelemetry variables, and the Prometheus registry `--metrics-bind` serves.
///
/// The command line builds it; an embedder can too, and add [`Telemetry::layer`] to its own
/// subscriber.
#[cfg(feature = "telemetry")]
pub struct Telemetry {
    tracer_provider: Option<SdkTracerProvider>,
    meter_provider: Option<SdkMeterProvider>,
    prometheus: Option<prometheus::Registry>,
}

#[cfg(feature = "telemetry")]
impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("traces", &self.tracer_provider.is_some())
            .field("metrics", &self.meter_provider.is_some())
            .field("prometheus", &self.prometheus.is_some())
            .finish()
    }
}

#[cfg(feature = "telemetry")]
impl Telemetry {
    /// The telemetry the environment configures (`None`: off, and free), for the service
    /// `service_name` (unless `OTEL_SERVICE_NAME` names it) at `service_version`; `prometheus`
    /// also keeps the metrics for [`serve_metrics`]. Call it outside any async runtime (the
    /// OTLP client is a blocking one). The error is a start-up refusal (a protocol other than
    /// `http/protobuf`, or an exporter that cannot be built).
    pub fn from_env(
        service_name: &str,
        service_version: &str,
        prometheus: bool,
    ) -> Result<Option<Telemetry>, String> {
        let wanted = wanted(|name| std::env::var(name).ok())?;
        if !wanted.traces && !wanted.metrics && !prometheus {
            return Ok(None);
        }
        let mut resource = Resource::builder().with_attribute(KeyValue::new(
            "service.version",
            service_version.to_string(),
        ));
        if env_var("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(service_name.to_string());
        }
        let resource = resource.build();
        let client = if wanted.traces || wanted.metrics {
            Some(otlp_client()?)
        } else {
            None
        };
        let tracer_provider = match &client {
            Some(client) if wanted.traces => {
                use opentelemetry_otlp::WithHttpConfig;
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_http_client(client.clone())
                    .build()
                    .map_err(|e| format!("the OTLP span exporter: {e}"))?;
                Some(
                    SdkTracerProvider::builder()
                        .with_batch_exporter(exporter)
                        .with_resource(resource.clone())
                        .build(),
                )
            }
            _ => None,
        };
        let registry = prometheus.then(prometheus::Registry::new);
        let meter_provider = if wanted.metrics || registry.is_some() {
            let mut builder = SdkMeterProvider::builder().with_resource(resource);
            if let Some(client) = client.filter(|_| wanted.metrics) {
                use opentelemetry_otlp::WithHttpConfig;
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_http_client(client)
                    .build()
                    .map_err(|e| format!("the OTLP metric exporter: {e}"))?;
                builder = builder.with_periodic_exporter(exporter);
            }
            if let Some(registry) = &registry {
                let exporter = opentelemetry_prometheus::exporter()
                    .with_registry(registry.clone())
                    .without_target_info()
                    .build()
                    .map_err(|e| format!("the Prometheus exporter: {e}"))?;
                builder = builder.with_reader(exporter);
            }
            let provider = builder.build();
            install_instruments(&provider);
            Some(provider)
        } else {
            None
        };
        Ok(Some(Telemetry {
            tracer_provider,
            meter_provider,
            prometheus: registry,
        }))
    }

    /// The layer that exports the `mcp.server` spans (filtered to that target alone), when
    /// traces are exported.
    pub fn layer<S>(&self) -> Option<Filtered<SpanLayer<S>, Targets, S>>
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        let provider = self.tracer_provider.as_ref()?;
        Some(span_layer(provider.tracer(SCOPE)))
    }

    /// The registry `--metrics-bind` serves (with `prometheus` in [`from_env`](Self::from_env)).
    pub fn prometheus_registry(&self) -> Option<prometheus::Registry> {
        self.prometheus.clone()
    }

    /// Flushes and stops the exporters. Call it outside any async runtime: the SDK's shutdown
    /// blocks until the last export is done.
    pub fn shutdown(self) {
        if let Some(provider) = self.tracer_provider
            && let Err(e) = provider.shutdown()
        {
            tracing::warn!("telemetry: flushing spans at exit: {e}");
        }
        if let Some(provider) = self.meter_provider
            && let Err(e) = provider.shutdown()
        {
            tracing::warn!("telemetry: flushing metrics at exit: {e}");
        }
    }
}

/// The `tracing-opentelemetry` layer of [`Telemetry::layer`].
#[cfg(feature = "telemetry")]
pub type SpanLayer<S> = tracing_opentelemetry::OpenTelemetryLayer<S, SdkTracer>;

/// `tracer`'s layer: only the conventions' attributes (no code location, thread or timing
/// fields), and only the `mcp.server` target.
#[cfg(feature = "telemetry")]
fn span_layer<S>(tracer: SdkTracer) -> Filtered<SpanLayer<S>, Targets, S>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_filter(Targets::new().with_target(TARGET, Level::INFO))
}

/// Serves the Prometheus text format at `GET /metrics` on `listener` until `stop` completes
/// (every other path is 404).
#[cfg(feature = "telemetry")]
pub(crate) async fn serve_metrics(
    listener: std::net::TcpListener,
    registry: prometheus::Registry,
    stop: impl Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    use axum::{
        http::{StatusCode, header},
        response::IntoResponse,
        routing::get,
    };
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot configure the metrics socket: {e}"))?;
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|e| format!("cannot serve metrics: {e}"))?;
    let app = axum::Router::new().route(
        "/metrics",
        get(move || {
            let registry = registry.clone();
            async move {
                let encoder = prometheus::TextEncoder::new();
                match encoder.encode_to_string(&registry.gather()) {
                    Ok(text) => (
                        StatusCode::OK,
                        [(header::CONTENT_TYPE, prometheus::TEXT_FORMAT)],
                        text,
                    )
                        .into_response(),
                    Err(e) => {
                        tracing::warn!("metrics: cannot encode: {e}");
                        StatusCode::INTERNAL_SERVER_ERROR.into_response()
                    }
                }
            }
        }),
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(stop)
        .await
        .map_err(|e| format!("metrics server: {e}"))
}

/// A server built without the `telemetry` feature: nothing to export or serve.
#[cfg(not(feature = "telemetry"))]
#[derive(Debug)]
pub struct Telemetry(());

#[cfg(not(feature = "telemetry"))]
impl Telemetry {
    /// Always `None`: this build has no telemetry. `prometheus` (`--metrics-bind`) is refused;
    /// the OpenTelemetry variables are ignored ([`ignored`] says so).
    pub fn from_env(
        _service_name: &str,
        _service_version: &str,
        prometheus: bool,
    ) -> Result<Option<Telemetry>, String> {
        match prometheus {
            true => Err(
                "--metrics-bind: this server was built without its `telemetry` feature \
                 (build it with the default features to serve metrics)"
                    .to_string(),
            ),
            false => Ok(None),
        }
    }

    /// Nothing to flush.
    pub fn shutdown(self) {}
}

/// The warning for a server built without the `telemetry` feature whose environment asks for
/// OTLP export; `None` when it does not.
#[cfg(not(feature = "telemetry"))]
pub(crate) fn ignored(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let wanted = wanted(var).unwrap_or(Wanted {
        traces: true,
        metrics: true,
    });
    (wanted.traces || wanted.metrics).then(|| {
        "the OpenTelemetry variables ask for OTLP export, but this server was built without its \
         `telemetry` feature: no spans or metrics are exported"
            .to_string()
    })
}

/// Without the `telemetry` feature (`cargo test --no-default-features`).
#[cfg(test)]
#[cfg(not(feature = "telemetry"))]
mod without_the_feature {
    use super::*;

    #[test]
    fn metrics_bind_is_refused_and_otlp_variables_are_ignored_with_a_warning() {
        assert_eq!(
            Telemetry::from_env("shop", "1.0.0", true).unwrap_err(),
            "--metrics-bind: this server was built without its `telemetry` feature (build it \
             with the default features to serve metrics)"
        );
        assert!(matches!(
            Telemetry::from_env("shop", "1.0.0", false),
            Ok(None)
        ));
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                (pairs.iter())
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(ignored(env(&[])), None);
        assert_eq!(
            ignored(env(&[(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://collector:4318"
            )])),
            Some(
                "the OpenTelemetry variables ask for OTLP export, but this server was built \
                 without its `telemetry` feature: no spans or metrics are exported"
                    .to_string()
            )
        );
        assert_eq!(
            ignored(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
                ("OTEL_SDK_DISABLED", "true"),
            ])),
            None
        );
        // An enabled span sends no traceparent.
        tracing::subscriber::with_default(tracing_subscriber::registry(), || {
            let (span, traceparent) = outbound_span("roots/list");
            assert!(!span.is_disabled());
            assert_eq!(traceparent, None);
        });
    }
}

#[cfg(test)]
#[cfg(feature = "telemetry")]
mod tests {
    use std::collections::HashMap;

    use opentelemetry::{
        Value,
        trace::{SpanId, SpanKind, Status, TraceId},
    };
    use opentelemetry_sdk::{
        metrics::{
            InMemoryMetricExporter,
            data::{AggregatedMetrics, MetricData},
        },
        trace::{InMemorySpanExporter, SpanData},
    };
    use rmcp::model::NumberOrString;
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const HEADER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /// Runs `f` with spans exported to memory; returns them in the order they ended.
    fn spans(f: impl FnOnce()) -> Vec<SpanData> {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let subscriber = tracing_subscriber::registry().with(span_layer(provider.tracer(SCOPE)));
        tracing::subscriber::with_default(subscriber, f);
        provider.force_flush().unwrap();
        exporter.get_finished_spans().unwrap()
    }

    fn attributes(span: &SpanData) -> HashMap<String, Value> {
        (span.attributes.iter())
            .map(|kv| (kv.key.to_string(), kv.value.clone()))
            .collect()
    }

    fn text(value: &str) -> Value {
        Value::from(value.to_string())
    }

    fn meta(traceparent: Option<&str>) -> MetaObject {
        let mut meta = MetaObject::new();
        if let Some(traceparent) = traceparent {
            meta.set_traceparent(traceparent);
        }
        meta
    }

    fn http(headers: &[(&str, &str)]) -> axum::http::request::Parts {
        let mut request = axum::http::Request::builder().method("POST").uri("/mcp");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn legacy() -> Option<ProtocolVersion> {
        Some(ProtocolVersion::V_2025_11_25)
    }

    #[test]
    fn a_tool_call_is_a_server_span_named_after_the_tool_parented_by_meta() {
        let exported = spans(|| {
            let request = RequestSpan::open(
                "tools/call",
                Target::Tool("quote"),
                &NumberOrString::Number(7),
                &legacy,
                &meta(Some(PARENT)),
                None,
                &|| None,
            );
            request.finish(Ending::Ok);
        });
        assert_eq!(exported.len(), 1);
        let span = &exported[0];
        assert_eq!(span.name, "tools/call quote");
        assert_eq!(span.span_kind, SpanKind::Server);
        assert_eq!(span.status, Status::Unset);
        assert_eq!(
            span.span_context.trace_id(),
            TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap()
        );
        assert_eq!(
            span.parent_span_id,
            SpanId::from_hex("b7ad6b7169203331").unwrap()
        );
        let expected: HashMap<String, Value> = [
            ("mcp.method.name", text("tools/call")),
            ("gen_ai.tool.name", text("quote")),
            ("gen_ai.operation.name", text("execute_tool")),
            ("jsonrpc.request.id", text("7")),
            ("mcp.protocol.version", text("2025-11-25")),
            ("network.transport", text("pipe")),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(attributes(span), expected);
        assert!(span.links.is_empty());
    }

    #[test]
    fn over_http_the_header_is_the_parent_without_meta_and_a_link_with_it() {
        let exported = spans(|| {
            let parts = http(&[("traceparent", HEADER), ("mcp-session-id", "abc123")]);
            RequestSpan::open(
                "prompts/get",
                Target::Prompt("greet"),
                &NumberOrString::String("p-1".into()),
                &legacy,
                &meta(None),
                Some(&parts),
                &|| Some(([10, 0, 0, 7], 51234).into()),
            )
            .finish(Ending::Ok);
            RequestSpan::open(
                "tools/list",
                Target::None,
                &NumberOrString::Number(2),
                &|| None,
                &meta(Some(PARENT)),
                Some(&parts),
                &|| None,
            )
            .finish(Ending::Ok);
        });
        assert_eq!(exported.len(), 2);
        let (prompt, list) = (&exported[0], &exported[1]);
        assert_eq!(prompt.name, "prompts/get greet");
        assert_eq!(
            prompt.parent_span_id,
            SpanId::from_hex("00f067aa0ba902b7").unwrap()
        );
        let attrs = attributes(prompt);
        assert_eq!(attrs["gen_ai.prompt.name"], text("greet"));
        assert_eq!(attrs["jsonrpc.request.id"], text("p-1"));
        assert_eq!(attrs["mcp.session.id"], text("abc123"));
        assert_eq!(attrs["network.transport"], text("tcp"));
        assert_eq!(attrs["network.protocol.name"], text("http"));
        assert_eq!(attrs["network.protocol.version"], text("1.1"));
        assert_eq!(attrs["client.address"], text("10.0.0.7"));
        assert_eq!(attrs["client.port"], Value::I64(51234));
        assert!(!attrs.contains_key("gen_ai.operation.name"));
        assert!(prompt.links.is_empty());
        // Both: `_meta` is the parent, the header a link.
        assert_eq!(list.name, "tools/list");
        assert_eq!(
            list.parent_span_id,
            SpanId::from_hex("b7ad6b7169203331").unwrap()
        );
        assert_eq!(list.links.len(), 1);
        assert_eq!(
            list.links[0].span_context.span_id(),
            SpanId::from_hex("00f067aa0ba902b7").unwrap()
        );
        assert!(!attributes(list).contains_key("mcp.protocol.version"));
    }

    #[test]
    fn a_resource_read_carries_its_uri_as_an_attribute_not_in_its_name() {
        let exported = spans(|| {
            RequestSpan::open(
                "resources/read",
                Target::Resource("file:///books/dune.txt"),
                &NumberOrString::Number(9),
                &legacy,
                &meta(None),
                None,
                &|| None,
            )
            .finish(Ending::Ok);
        });
        assert_eq!(exported.len(), 1);
        assert_eq!(exported[0].name, "resources/read");
        let attrs = attributes(&exported[0]);
        assert_eq!(attrs["mcp.resource.uri"], text("file:///books/dune.txt"));
        assert_eq!(attrs["mcp.method.name"], text("resources/read"));
        assert!(!attrs.contains_key("gen_ai.tool.name"));
    }

    #[test]
    fn without_trace_context_the_span_is_a_root_even_inside_another_span() {
        let exported = spans(|| {
            let outer = tracing::span!(target: TARGET, Level::INFO, "outer");
            let _entered = outer.enter();
            RequestSpan::open(
                "tools/list",
                Target::None,
                &NumberOrString::Number(1),
                &legacy,
                &meta(Some("not a traceparent")),
                None,
                &|| None,
            )
            .finish(Ending::Ok);
        });
        let list = exported.iter().find(|s| s.name == "tools/list").unwrap();
        assert_eq!(list.parent_span_id, SpanId::INVALID);
    }

    #[test]
    fn failures_set_error_type_and_the_status() {
        let exported = spans(|| {
            let error = ErrorData::invalid_params("Unknown tool: nope", None);
            RequestSpan::open(
                "tools/call",
                Target::None,
                &NumberOrString::Number(3),
                &legacy,
                &meta(None),
                None,
                &|| None,
            )
            .finish(Ending::Error(&error));
            RequestSpan::open(
                "tools/call",
                Target::Tool("fail"),
                &NumberOrString::Number(4),
                &legacy,
                &meta(None),
                None,
                &|| None,
            )
            .finish(Ending::ToolError("Error executing tool fail: no"));
            RequestSpan::open(
                "tools/call",
                Target::Tool("work"),
                &NumberOrString::Number(5),
                &legacy,
                &meta(None),
                None,
                &|| None,
            )
            .finish(Ending::Cancelled);
            // Dropped unfinished: rmcp dropped the request's future (a closed 2026-07-28 request).
            drop(RequestSpan::open(
                "tools/call",
                Target::Tool("work"),
                &NumberOrString::Number(6),
                &legacy,
                &meta(None),
                None,
                &|| None,
            ));
        });
        assert_eq!(exported.len(), 4);
        let unknown = &exported[0];
        assert_eq!(unknown.name, "tools/call");
        let attrs = attributes(unknown);
        assert_eq!(attrs["error.type"], text("-32602"));
        assert_eq!(attrs["rpc.response.status_code"], text("-32602"));
        assert!(!attrs.contains_key("gen_ai.tool.name"));
        assert_eq!(unknown.status, Status::error("Unknown tool: nope"));
        let failed = &exported[1];
        assert_eq!(attributes(failed)["error.type"], text("tool_error"));
        assert!(!attributes(failed).contains_key("rpc.response.status_code"));
        assert_eq!(
            failed.status,
            Status::error("Error executing tool fail: no")
        );
        let cancelled = &exported[2];
        assert_eq!(attributes(cancelled)["error.type"], text("cancelled"));
        assert_eq!(cancelled.status, Status::error("cancelled by the client"));
        let dropped = &exported[3];
        assert_eq!(attributes(dropped)["error.type"], text("cancelled"));
        assert_eq!(dropped.status, Status::error("cancelled by the client"));
    }

    #[test]
    fn resolvers_and_questions_are_children_of_the_request() {
        let exported = spans(|| {
            let request = RequestSpan::open(
                "tools/call",
                Target::Tool("quote"),
                &NumberOrString::Number(9),
                &legacy,
                &meta(None),
                None,
                &|| None,
            );
            request.span().in_scope(|| {
                {
                    use futures::FutureExt;
                    assert_eq!(resolve("find_item", async { 1 }).now_or_never(), Some(1));
                }
                {
                    let asking = resolver_span("confirm", None);
                    asking.record("mcpgen.resolver.kind", "elicit");
                    asking.record("mcpgen.resolver.asked", true);
                    let _in = asking.enter();
                    let question = question_span("confirm", "elicit");
                    question.record("mcpgen.question.outcome", "asked");
                    drop(question);
                    let (outbound, traceparent) = outbound_span("elicitation/create");
                    record_request_id(&outbound, &NumberOrString::Number(0));
                    let context = outbound.context();
                    let ids = context.span().span_context().clone();
                    assert_eq!(
                        traceparent,
                        Some(format!("00-{}-{}-01", ids.trace_id(), ids.span_id()))
                    );
                }
            });
            request.finish(Ending::Ok);
        });
        let by_name = |name: &str| exported.iter().find(|s| s.name == name).unwrap();
        let request = by_name("tools/call quote");
        let find = by_name("resolve find_item");
        let confirm = by_name("resolve confirm");
        let question = by_name("question confirm");
        let outbound = by_name("elicitation/create");
        assert_eq!(exported.len(), 5);
        assert_eq!(find.parent_span_id, request.span_context.span_id());
        assert_eq!(confirm.parent_span_id, request.span_context.span_id());
        assert_eq!(question.parent_span_id, confirm.span_context.span_id());
        assert_eq!(outbound.parent_span_id, confirm.span_context.span_id());
        assert_eq!(find.span_kind, SpanKind::Internal);
        assert_eq!(outbound.span_kind, SpanKind::Client);
        let find = attributes(find);
        assert_eq!(find["mcpgen.resolver.name"], text("find_item"));
        assert_eq!(find["mcpgen.resolver.asked"], Value::Bool(false));
        assert!(!find.contains_key("mcpgen.resolver.kind"));
        let confirm = attributes(confirm);
        assert_eq!(confirm["mcpgen.resolver.asked"], Value::Bool(true));
        assert_eq!(confirm["mcpgen.resolver.kind"], text("elicit"));
        let question = attributes(question);
        assert_eq!(question["mcpgen.question.kind"], text("elicit"));
        assert_eq!(question["mcpgen.question.outcome"], text("asked"));
        let outbound = attributes(outbound);
        assert_eq!(outbound["mcp.method.name"], text("elicitation/create"));
        assert_eq!(outbound["jsonrpc.request.id"], text("0"));
    }

    #[test]
    fn with_no_layer_the_spans_are_disabled_and_nothing_is_injected() {
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::sink)
                .with_filter(
                    Targets::new()
                        .with_default(Level::TRACE)
                        .with_target(TARGET, tracing::level_filters::LevelFilter::OFF),
                ),
        );
        let asked = std::cell::Cell::new(0usize);
        tracing::subscriber::with_default(subscriber, || {
            let request = RequestSpan::open(
                "tools/call",
                Target::Tool("quote"),
                &NumberOrString::Number(1),
                &|| {
                    asked.set(asked.get() + 1);
                    legacy()
                },
                &meta(Some(PARENT)),
                None,
                &|| None,
            );
            assert!(request.span().is_disabled());
            // Asked for the histogram's labels only (another test may have installed the
            // process's instruments), never for the disabled span's fields.
            assert!(asked.get() <= usize::from(metrics().is_some()));
            assert!(resolver_span("x", None).is_disabled());
            let (span, traceparent) = outbound_span("roots/list");
            assert!(span.is_disabled());
            assert_eq!(traceparent, None);
        });
    }

    #[test]
    fn the_environment_turns_export_on_and_refuses_other_protocols() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let both = Wanted {
            traces: true,
            metrics: true,
        };
        let none = Wanted {
            traces: false,
            metrics: false,
        };
        assert_eq!(wanted(env(&[])), Ok(none));
        assert_eq!(
            wanted(env(&[(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://127.0.0.1:4318"
            )])),
            Ok(both)
        );
        assert_eq!(
            wanted(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")])),
            Ok(Wanted {
                traces: false,
                metrics: false
            })
        );
        assert_eq!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c/v1/traces"),
                ("OTEL_METRICS_EXPORTER", "none"),
            ])),
            Ok(Wanted {
                traces: true,
                metrics: false
            })
        );
        assert_eq!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                ("OTEL_TRACES_EXPORTER", "none"),
            ])),
            Ok(Wanted {
                traces: false,
                metrics: true
            })
        );
        assert_eq!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                ("OTEL_SDK_DISABLED", "TRUE"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ])),
            Ok(Wanted {
                traces: false,
                metrics: false
            })
        );
        assert_eq!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ])),
            Err(
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc: this server exports OTLP over HTTP (http/protobuf) only"
                    .to_string()
            )
        );
        assert_eq!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
                ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json"),
            ])),
            Err(
                "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/json: this server exports OTLP over HTTP (http/protobuf) only"
                    .to_string()
            )
        );
    }

    #[test]
    fn the_operation_histogram_has_the_conventions_buckets_and_labels() {
        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_periodic_exporter(exporter.clone())
            .build();
        install_instruments(&provider);
        // A name no other test uses: the instruments are the process's.
        for ending in [Ending::Ok, Ending::ToolError("no"), Ending::ToolError("no")] {
            RequestSpan::open(
                "tools/call",
                Target::Tool("metered"),
                &NumberOrString::Number(1),
                &legacy,
                &meta(None),
                None,
                &|| None,
            )
            .finish(ending);
        }
        SessionClock::session_opened().closed(Some("metered"), "pipe", Some("idle"));
        provider.force_flush().unwrap();
        let exported = exporter.get_finished_metrics().unwrap();
        let last = exported.last().unwrap();
        let metrics: Vec<_> = last.scope_metrics().flat_map(|s| s.metrics()).collect();
        let operation = metrics
            .iter()
            .find(|m| m.name() == "mcp.server.operation.duration")
            .unwrap();
        assert_eq!(operation.unit(), "s");
        let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = operation.data() else {
            panic!("not an f64 histogram");
        };
        let mut counts: Vec<(Vec<String>, u64)> = histogram
            .data_points()
            .filter(|p| p.attributes().any(|kv| kv.value.as_str() == "metered"))
            .map(|p| {
                assert_eq!(p.bounds().collect::<Vec<_>>(), BUCKETS.to_vec());
                let mut labels: Vec<String> = p
                    .attributes()
                    .map(|kv| format!("{}={}", kv.key, kv.value))
                    .collect();
                labels.sort();
                (labels, p.count())
            })
            .collect();
        counts.sort();
        let labels = |error: Option<&str>| {
            let mut labels = vec![
                "gen_ai.operation.name=execute_tool".to_string(),
                "gen_ai.tool.name=metered".to_string(),
                "mcp.method.name=tools/call".to_string(),
                "mcp.protocol.version=2025-11-25".to_string(),
                "network.transport=pipe".to_string(),
            ];
            if let Some(error) = error {
                labels.push(format!("error.type={error}"));
            }
            labels.sort();
            labels
        };
        let mut expected = vec![(labels(None), 1), (labels(Some("tool_error")), 2)];
        expected.sort();
        assert_eq!(counts, expected);
        let session = metrics
            .iter()
            .find(|m| m.name() == "mcp.server.session.duration")
            .unwrap();
        let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = session.data() else {
            panic!("not an f64 histogram");
        };
        let points: Vec<_> = histogram
            .data_points()
            .filter(|p| p.attributes().any(|kv| kv.value.as_str() == "metered"))
            .map(|p| (p.attributes().count(), p.count()))
            .collect();
        assert_eq!(points, vec![(3, 1)]);
    }
}
