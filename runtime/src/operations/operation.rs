//! What the server does around every request it serves: the spec's operation limits
//! ([`Operations`], generated as `static OPERATIONS` and returned by
//! [`Generated::operations`](crate::Generated::operations)), and [`Gates`], the wrapper every
//! method [`McpServer`](crate::McpServer) forwards runs in: the drain's admission and in-flight
//! count, the request's span, the tool's timeout (counted from the request's [`Arrival`]), the
//! tool's and the server's concurrency gates, the client's cancellation and the drain's abort.
//!
//! rmcp only cancels a request's token when the client cancels it; it never drops the
//! handler's future. The wrapper races the future against that token (and the timeout and the
//! drain's abort) and drops it, so a cancelled call stops at its next `.await`, resolvers
//! included, and its pending server-to-client requests are cancelled (`ask::PendingGuard`).

use std::{
    collections::{HashMap, HashSet},
    future::Future,
    pin::Pin,
    sync::Arc,
    time::{Duration, Instant},
};

use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolResponse, ErrorCode},
    service::RequestContext,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{
    catalog::tools::error_result,
    operations::telemetry::{Ending, RequestSpan, Target},
    request::Arrival,
    shutdown::Shutdown,
};

/// The spec's operation table: the server-wide `limits` and every tool's own `timeoutMs` and
/// `maxConcurrency`. Flags override the server-wide values, never a tool's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operations {
    /// `limits.timeoutMs`: a tool call's default timeout, counted from its arrival.
    pub timeout_ms: Option<u64>,
    /// `limits.maxConcurrency`: calls in flight at once, server-wide.
    pub max_concurrency: Option<u32>,
    /// `limits.maxRequestBytes`: the largest HTTP request body accepted.
    pub max_request_bytes: Option<u64>,
    /// `limits.maxSessions`: legacy HTTP sessions open at once.
    pub max_sessions: Option<u32>,
    /// `limits.sessionIdleTimeoutMs`: a legacy HTTP session's idle timeout.
    pub session_idle_timeout_ms: Option<u64>,
    /// Every tool, in spec order.
    pub tools: &'static [ToolOperations],
    /// Every prompt's name, in spec order.
    pub prompts: &'static [&'static str],
}

/// One tool's own limits (`tools.<name>.timeoutMs` and `maxConcurrency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolOperations {
    /// The tool's name.
    pub name: &'static str,
    /// Its timeout, counted from the call's arrival (queueing included).
    pub timeout_ms: Option<u64>,
    /// Its calls in flight at once.
    pub max_concurrency: Option<u32>,
}

impl Operations {
    /// No limits and no declared names: a hand-written handler's table.
    pub const NONE: Operations = Operations {
        timeout_ms: None,
        max_concurrency: None,
        max_request_bytes: None,
        max_sessions: None,
        session_idle_timeout_ms: None,
        tools: &[],
        prompts: &[],
    };
}

/// The -32000 answer to a request that starts while the server drains.
pub(crate) fn shutting_down() -> ErrorData {
    ErrorData::new(
        ErrorCode(-32000),
        "Server is shutting down; try again later",
        None,
    )
}

/// The answer to a request the client cancelled (-32800, as other SDKs answer it). rmcp drops
/// it (the client never sees an answer to a cancelled request); it shows in logs and spans.
pub(crate) fn request_cancelled() -> ErrorData {
    ErrorData::new(ErrorCode(-32800), "Request cancelled", None)
}

/// The answer to a request other than a tool call that the drain's timeout ended.
pub(crate) fn shut_down_before_request_finished() -> ErrorData {
    ErrorData::new(
        ErrorCode(-32000),
        "Server shut down before the request finished",
        None,
    )
}

/// One concurrency gate: a semaphore and how its limit is named in the refusal.
#[derive(Debug)]
struct Slots {
    semaphore: Arc<Semaphore>,
    limit: u32,
    /// `the tool's` or `the server's`.
    whose: &'static str,
    /// Where the limit comes from: `maxConcurrency`, `limits.maxConcurrency` or
    /// `--max-concurrency`.
    source: &'static str,
}

impl Slots {
    /// A gate of `limit` slots (at least one: a gate of none would refuse every call).
    fn new(limit: u32, whose: &'static str, source: &'static str) -> Self {
        let limit = limit.max(1);
        Slots {
            semaphore: Arc::new(Semaphore::new(limit as usize)),
            limit,
            whose,
            source,
        }
    }

    /// A slot, or `None` when none came free before `deadline`. A free slot is taken even past
    /// the deadline (the call then times out at once, with the running call's text).
    async fn acquire(
        &self,
        deadline: Option<tokio::time::Instant>,
    ) -> Option<OwnedSemaphorePermit> {
        if let Ok(permit) = Arc::clone(&self.semaphore).try_acquire_owned() {
            return Some(permit);
        }
        let acquire = Arc::clone(&self.semaphore).acquire_owned();
        match deadline {
            // The semaphore is never closed.
            None => acquire.await.ok(),
            Some(deadline) => tokio::select! {
                biased;
                () = tokio::time::sleep_until(deadline) => None,
                permit = acquire => permit.ok(),
            },
        }
    }
}

/// One declared tool's gate.
#[derive(Debug)]
struct ToolGate {
    /// The declared name (what spans and metrics carry).
    name: &'static str,
    /// The tool's own timeout, else the server-wide one.
    timeout: Option<Duration>,
    /// The tool's own concurrency limit.
    slots: Option<Slots>,
}

/// Why a call ended before its handler did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The client cancelled it (or its connection ended).
    Cancelled,
    /// The drain's timeout passed.
    Aborted,
    /// Its timeout passed while it ran.
    TimedOut(Duration),
    /// Its timeout passed while it waited for a slot of a concurrency gate.
    NoSlot {
        whose: &'static str,
        limit: u32,
        source: &'static str,
        timeout: Duration,
    },
}

impl Stop {
    /// The text of the `isError` result a tool call stopped this way gets (after
    /// `Error executing tool <name>: `); `None` for a cancelled call, which gets no answer.
    pub(crate) fn message(&self) -> Option<String> {
        match self {
            Stop::Cancelled => None,
            Stop::Aborted => Some("the server shut down before the call finished".to_string()),
            Stop::TimedOut(timeout) => Some(format!(
                "the call did not finish within its timeout of {} ms",
                timeout.as_millis()
            )),
            Stop::NoSlot {
                whose,
                limit,
                source,
                timeout,
            } => Some(format!(
                "too many calls at once: no slot of {whose} {limit} ({source}) came free within the call's timeout of {} ms",
                timeout.as_millis()
            )),
        }
    }
}

/// The per-request wrapper of one server (its clones, one per session, share it): the drain,
/// the timeouts and the concurrency gates.
#[derive(Debug)]
pub(crate) struct Gates {
    tools: HashMap<&'static str, ToolGate>,
    prompts: HashSet<&'static str>,
    /// The server-wide gate (`--max-concurrency`, else `limits.maxConcurrency`).
    server: Option<Slots>,
    /// The server-wide timeout (`--tool-timeout`, else `limits.timeoutMs`): a tool's own wins.
    default_timeout: Option<Duration>,
    drain: Shutdown,
}

impl Default for Gates {
    fn default() -> Self {
        Gates::new(&Operations::NONE, None, None, Shutdown::default())
    }
}

impl Gates {
    /// The gates of `operations`, with the command line's (or the embedder's) overrides of the
    /// server-wide timeout and concurrency limit, counting calls in flight for `drain`.
    pub(crate) fn new(
        operations: &'static Operations,
        tool_timeout: Option<Duration>,
        max_concurrency: Option<u32>,
        drain: Shutdown,
    ) -> Self {
        let default_timeout = tool_timeout.or(operations.timeout_ms.map(Duration::from_millis));
        let server = match (max_concurrency, operations.max_concurrency) {
            (Some(limit), _) => Some(Slots::new(limit, "the server's", "--max-concurrency")),
            (None, Some(limit)) => Some(Slots::new(limit, "the server's", "limits.maxConcurrency")),
            (None, None) => None,
        };
        let tools = operations
            .tools
            .iter()
            .map(|tool| {
                let gate = ToolGate {
                    name: tool.name,
                    timeout: tool
                        .timeout_ms
                        .map(Duration::from_millis)
                        .or(default_timeout),
                    slots: tool
                        .max_concurrency
                        .map(|limit| Slots::new(limit, "the tool's", "maxConcurrency")),
                };
                (tool.name, gate)
            })
            .collect();
        Gates {
            tools,
            prompts: operations.prompts.iter().copied().collect(),
            server,
            default_timeout,
            drain,
        }
    }

    /// The timeout of a call of `tool` (`None`: it has none).
    pub(crate) fn timeout(&self, tool: &str) -> Option<Duration> {
        match self.tools.get(tool) {
            Some(gate) => gate.timeout,
            None => self.default_timeout,
        }
    }

    /// Runs the handler of a `tools/call` of `name` (`run`, given the request's context), in
    /// order: admission by the drain (`continues`: the request continues a call already begun,
    /// a 2026-07-28 retry with `requestState`), the span, the tool's gate then the server's
    /// (always in that order), all racing the call's deadline (its arrival plus its timeout),
    /// the client's cancellation and the drain's abort. A call that ends early has its
    /// context's token cancelled (for work the handler moved elsewhere) and its future dropped.
    ///
    /// Boxed: rmcp moves each request's future into a task of its own, and tokio copies the
    /// task's whole state when it is spawned and again when it completes. The span, the
    /// deadline's timer, the gates and the races make this future several kilobytes; in place,
    /// those copies cost a `tools/call` about 80,000 instructions (callgrind, stdio), more than
    /// the rest of the server's work. A box keeps the task's state to a pointer.
    pub(crate) fn call_tool<F, Fut>(
        &self,
        name: &str,
        continues: bool,
        context: RequestContext<RoleServer>,
        run: F,
    ) -> Pin<Box<impl Future<Output = Result<CallToolResponse, ErrorData>>>>
    where
        F: FnOnce(RequestContext<RoleServer>) -> Fut,
        Fut: Future<Output = Result<CallToolResponse, ErrorData>>,
    {
        Box::pin(self.call_tool_in_place(name, continues, context, run))
    }

    /// [`Gates::call_tool`], unboxed.
    async fn call_tool_in_place<F, Fut>(
        &self,
        name: &str,
        continues: bool,
        context: RequestContext<RoleServer>,
        run: F,
    ) -> Result<CallToolResponse, ErrorData>
    where
        F: FnOnce(RequestContext<RoleServer>) -> Fut,
        Fut: Future<Output = Result<CallToolResponse, ErrorData>>,
    {
        let Some(_in_flight) = self.drain.admit(continues) else {
            return Err(shutting_down());
        };
        let gate = self.tools.get(name);
        let target = gate.map_or(Target::None, |gate| Target::Tool(gate.name));
        let span = RequestSpan::start("tools/call", target, &context);
        let arrival = Arrival::of(&context).map_or_else(Instant::now, |arrival| arrival.at);
        let ct = context.ct.clone();
        let outcome = self
            .run_tool(name, arrival, &ct, run(context))
            .instrument(span.span().clone())
            .await;
        match outcome {
            Ok(result) => {
                span.finish(match &result {
                    Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                        Ending::ToolError(
                            result
                                .content
                                .first()
                                .and_then(|block| block.as_text())
                                .map_or("", |text| text.text.as_str()),
                        )
                    }
                    Ok(_) => Ending::Ok,
                    Err(error) => Ending::Error(error),
                });
                result
            }
            Err(stop) => {
                ct.cancel();
                match stop.message() {
                    None => {
                        let error = request_cancelled();
                        span.finish(Ending::Cancelled);
                        Err(error)
                    }
                    Some(message) => {
                        let response = error_result(name, Some(&message));
                        span.finish(Ending::ToolError(&message));
                        Ok(response)
                    }
                }
            }
        }
    }

    /// The core of [`Gates::call_tool`], without the span and the drain's admission: `call`
    /// (the handler's future) run under the gates and the deadline of tool `name`, racing
    /// `ct` and the drain's abort. `Err` says why it was stopped (and dropped).
    pub(crate) async fn run_tool<T>(
        &self,
        name: &str,
        arrival: Instant,
        ct: &CancellationToken,
        call: impl Future<Output = T>,
    ) -> Result<T, Stop> {
        let gate = self.tools.get(name);
        let timeout = self.timeout(name);
        let deadline = timeout.map(|timeout| tokio::time::Instant::from_std(arrival) + timeout);
        let no_slot = |slots: &Slots| Stop::NoSlot {
            whose: slots.whose,
            limit: slots.limit,
            source: slots.source,
            // A gate only refuses at a deadline, so there is a timeout.
            timeout: timeout.unwrap_or_default(),
        };
        let gated = async {
            let _tool_slot = match gate.and_then(|gate| gate.slots.as_ref()) {
                Some(slots) => Some(
                    slots
                        .acquire(deadline)
                        .await
                        .ok_or_else(|| no_slot(slots))?,
                ),
                None => None,
            };
            let _server_slot = match &self.server {
                Some(slots) => Some(
                    slots
                        .acquire(deadline)
                        .await
                        .ok_or_else(|| no_slot(slots))?,
                ),
                None => None,
            };
            match (deadline, timeout) {
                // Past its deadline already (it waited on the wire, in a queue or for a
                // slot): it does not start. A timer would only fire at its next tick.
                (Some(deadline), Some(timeout)) if deadline <= tokio::time::Instant::now() => {
                    Err(Stop::TimedOut(timeout))
                }
                (Some(deadline), Some(timeout)) => tokio::select! {
                    biased;
                    () = tokio::time::sleep_until(deadline) => Err(Stop::TimedOut(timeout)),
                    result = call => Ok(result),
                },
                _ => Ok(call.await),
            }
        };
        tokio::select! {
            biased;
            () = ct.cancelled() => Err(Stop::Cancelled),
            () = self.drain.aborted() => Err(Stop::Aborted),
            result = gated => result,
        }
    }

    /// Runs a request other than a tool call (`method`, about `target`; `continues` as for
    /// [`Gates::call_tool`]): admission by the drain, the span, and the client's cancellation
    /// and the drain's abort. No timeout and no concurrency gate: those are a tool call's.
    /// Boxed, as [`Gates::call_tool`] is and for the same reason.
    pub(crate) fn run<T, F, Fut>(
        &self,
        method: &'static str,
        target: Target<'_>,
        continues: bool,
        context: RequestContext<RoleServer>,
        run: F,
    ) -> Pin<Box<impl Future<Output = Result<T, ErrorData>>>>
    where
        F: FnOnce(RequestContext<RoleServer>) -> Fut,
        Fut: Future<Output = Result<T, ErrorData>>,
    {
        Box::pin(self.run_in_place(method, target, continues, context, run))
    }

    /// [`Gates::run`], unboxed.
    async fn run_in_place<T, F, Fut>(
        &self,
        method: &'static str,
        target: Target<'_>,
        continues: bool,
        context: RequestContext<RoleServer>,
        run: F,
    ) -> Result<T, ErrorData>
    where
        F: FnOnce(RequestContext<RoleServer>) -> Fut,
        Fut: Future<Output = Result<T, ErrorData>>,
    {
        let Some(_in_flight) = self.drain.admit(continues) else {
            return Err(shutting_down());
        };
        let span = RequestSpan::start(method, target, &context);
        let ct = context.ct.clone();
        let call = run(context).instrument(span.span().clone());
        let outcome = tokio::select! {
            biased;
            () = ct.cancelled() => Err(Stop::Cancelled),
            () = self.drain.aborted() => Err(Stop::Aborted),
            result = call => Ok(result),
        };
        let result = match outcome {
            Ok(result) => result,
            Err(stop) => {
                ct.cancel();
                if stop == Stop::Cancelled {
                    span.finish(Ending::Cancelled);
                    return Err(request_cancelled());
                }
                Err(shut_down_before_request_finished())
            }
        };
        span.finish(match &result {
            Ok(_) => Ending::Ok,
            Err(error) => Ending::Error(error),
        });
        result
    }

    /// The declared prompt named `name`, as a span's target.
    pub(crate) fn prompt(&self, name: &str) -> Target<'static> {
        self.prompts
            .get(name)
            .map_or(Target::None, |name| Target::Prompt(name))
    }
}
