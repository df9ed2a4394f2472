//! The spec's limits (`limits`, and a tool's `timeoutMs` / `maxConcurrency`): every value an
//! integer of at least 1, a count within `u32`, a time within 365 days, a request body limit of at
//! least 1024 bytes; and a warning for a tool allowed more calls at once than the whole server.

use super::{Validator, tool_ptr};
use crate::diagnostics::{Code, Diagnostic, Subject};
use crate::pointer::Pointer;

/// The smallest `limits.maxRequestBytes`: below it even an `initialize` request with a few
/// capabilities is refused.
pub const MIN_REQUEST_BYTES: i64 = 1024;

/// The longest time a limit may state, in milliseconds (365 days): past it a deadline is
/// meaningless, and far past it the runtime's clock arithmetic would overflow.
pub const MAX_MILLIS: i64 = 365 * 24 * 60 * 60 * 1000;

/// What a limit measures, which decides its range.
#[derive(Clone, Copy)]
enum Unit {
    /// Milliseconds.
    Millis,
    /// A number of requests or sessions (`u32` in the runtime).
    Count,
    /// Bytes of a request body.
    Bytes,
}

impl Validator<'_> {
    /// Every finding about the spec's limits, server-wide ones first, then each tool's.
    pub(super) fn limits(&mut self) {
        if let Some(l) = self.spec.limits {
            let at = Pointer::from_segments(["limits"]);
            let server = [
                ("timeoutMs", l.timeout_ms, Unit::Millis),
                ("maxConcurrency", l.max_concurrency, Unit::Count),
                ("maxRequestBytes", l.max_request_bytes, Unit::Bytes),
                ("maxSessions", l.max_sessions, Unit::Count),
                (
                    "sessionIdleTimeoutMs",
                    l.session_idle_timeout_ms,
                    Unit::Millis,
                ),
            ];
            for (key, value, unit) in server {
                if let Some(value) = value {
                    self.limit(&format!("`limits.{key}`"), at.child(key), value, unit, None);
                }
            }
        }
        let server_concurrency = (self.spec.limits)
            .and_then(|l| l.max_concurrency)
            .filter(|n| in_range(*n, Unit::Count));
        for (name, tool) in &self.spec.tools {
            let at = tool_ptr(name);
            let subject = Some(Subject::Tool(name.clone()));
            if let Some(value) = tool.timeout_ms {
                let what = format!("`timeoutMs` of tool `{name}`");
                self.limit(
                    &what,
                    at.child("timeoutMs"),
                    value,
                    Unit::Millis,
                    subject.clone(),
                );
            }
            if let Some(value) = tool.max_concurrency {
                let what = format!("`maxConcurrency` of tool `{name}`");
                let ok = self.limit(
                    &what,
                    at.child("maxConcurrency"),
                    value,
                    Unit::Count,
                    subject,
                );
                if let Some(server) = server_concurrency.filter(|s| ok && value > *s) {
                    self.concurrency_above_server(name, value, server);
                }
            }
        }
    }

    /// Checks one limit's value; true when it is in range.
    fn limit(
        &mut self,
        what: &str,
        at: Pointer,
        value: i64,
        unit: Unit,
        subject: Option<Subject>,
    ) -> bool {
        let leave_out = match subject {
            Some(_) => "leave the key out for the server-wide limit (`limits`, or the flag's)",
            None => "leave the key out for the default (or the flag's value)",
        };
        let (code, message, help) = if value < 1 {
            (
                Code::LimitNotPositive,
                format!("{what} is {value}; a limit is an integer of at least 1"),
                leave_out.to_string(),
            )
        } else if matches!(unit, Unit::Bytes) && value < MIN_REQUEST_BYTES {
            (
                Code::LimitTooSmall,
                format!(
                    "{what} is {value}; the largest request body must be at least {MIN_REQUEST_BYTES} bytes, or ordinary requests are refused"
                ),
                format!("write at least {MIN_REQUEST_BYTES} (the default is 4194304, 4 MiB)"),
            )
        } else if !in_range(value, unit) {
            let most = match unit {
                Unit::Count => format!("a count is at most {}", u32::MAX),
                _ => format!("a time is at most 365 days ({MAX_MILLIS} ms)"),
            };
            (
                Code::LimitTooLarge,
                format!("{what} is {value}; {most}"),
                leave_out.to_string(),
            )
        } else {
            return true;
        };
        let d = self.err(code, message, at);
        d.help = Some(help);
        if let Some(subject) = subject {
            d.subjects.push(subject);
        }
        false
    }

    /// A tool allowed more calls at once than the server: the server's gate binds first.
    fn concurrency_above_server(&mut self, tool: &str, value: i64, server: i64) {
        let at = tool_ptr(tool).child("maxConcurrency");
        let span = self.src.span_of(&at);
        self.out.push(
            Diagnostic::warning(
                Code::ToolConcurrencyAboveServer,
                format!(
                    "tool `{tool}` allows {value} calls at once, more than the {server} the whole server runs (`limits.maxConcurrency`), which binds first"
                ),
            )
            .at(at, span)
            .about(Subject::Tool(tool.to_string()))
            .help(format!(
                "lower the tool's `maxConcurrency` to {server} or less, or raise `limits.maxConcurrency`"
            )),
        );
        self.also(
            Pointer::from_segments(["limits", "maxConcurrency"]),
            "the server's limit",
        );
    }
}

/// True when `value` is a valid limit of `unit` (at least 1, and at most what the unit allows).
fn in_range(value: i64, unit: Unit) -> bool {
    match unit {
        Unit::Count => value >= 1 && value <= i64::from(u32::MAX),
        Unit::Millis => (1..=MAX_MILLIS).contains(&value),
        Unit::Bytes => value >= MIN_REQUEST_BYTES,
    }
}
