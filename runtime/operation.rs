//! What the server does around every request it serves: the spec's operation limits
//! ([`Operations`], generated as `static OPERATIONS` and returned by
//! [`Generated::operations`](super::Generated::operations)).

use std::{net::SocketAddr, time::Instant};

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

/// When a request arrived (HTTP: the front stamps it in the request's extensions; stdio: none,
/// the wrapper's start counts), and from where.
// stub: task B
#[derive(Debug, Clone, Copy)]
pub(super) struct Arrival {
    /// When the connection server got the request's head.
    pub at: Instant,
    /// The client's address.
    pub peer: Option<SocketAddr>,
}
