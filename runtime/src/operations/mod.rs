//! What happens around every request a server serves: the spec's operation limits and the
//! wrapper that enforces them ([`operation`]), and its spans and metrics ([`telemetry`]).

pub(crate) mod operation;
pub(crate) mod telemetry;
