//! [`Round`] and [`Slot`]: how the generated per-tool code runs asking resolvers.
//!
//! The generated code computes one [`Slot`] per resolver, in dependency order. A plain resolver
//! runs when all its inputs are [`Slot::Ready`]; an asking resolver's [`Ask`] goes through
//! [`Round::elicit`], [`Round::sample`] or [`Round::roots`]. Any slot left [`Slot::Pending`] at
//! the end means the call ends with [`Round::input_required`] instead of running the tool.
//!
//! * Legacy connections (2025-11-25 and earlier): a question is asked right away on the
//!   back-channel and the slot is always `Ready`.
//! * 2026-07-28 connections: multi-round-trip is not implemented yet; a question fails with the
//!   -32600 "no back-channel" protocol error. The API is era-agnostic so MRTR can be added here
//!   (record the question as pending, batch independent ones, answer from `inputResponses` on
//!   the retry) without changing generated code.

use std::sync::Mutex;

use rmcp::model::{CallToolResponse, CreateMessageResult, InputRequests, ListRootsResult};

use super::{
    Ask, Context, Form, Outcome, ToolError,
    ask::AskInner,
    context::{Capability, ask_form, ask_roots, ask_sample, require_capability},
};

/// A resolver's value within one call: ready, or waiting for an answer from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot<T> {
    /// The value is known.
    Ready(T),
    /// A question (this resolver's, or one it depends on) is still unanswered.
    Pending,
}

/// The questions of one `tools/call` round.
pub struct Round<'a> {
    ctx: &'a Context,
    pending: Mutex<InputRequests>,
}

impl<'a> Round<'a> {
    /// Starts the round of the current call.
    pub fn new(ctx: &'a Context) -> Self {
        Round {
            ctx,
            pending: Mutex::new(InputRequests::new()),
        }
    }

    /// Runs an `asks: "elicit"` resolver's answer: a value is ready at once; a question is asked
    /// (legacy: `elicitation/create` now) and its validated answer becomes the [`Outcome`].
    pub async fn elicit<T: Form>(
        &self,
        resolver: &str,
        ask: Ask<T>,
    ) -> Result<Slot<Outcome<T>>, ToolError> {
        match ask.0 {
            AskInner::Value(value) => Ok(Slot::Ready(Outcome::Accepted(value))),
            AskInner::Elicit(message) => {
                self.ctx.require_back_channel("elicitation/create")?;
                require_capability(
                    self.ctx,
                    Capability::Form,
                    &format!("resolver '{resolver}'"),
                )?;
                Ok(Slot::Ready(
                    ask_form::<T>(self.ctx, message, Some(resolver)).await?,
                ))
            }
            _ => Err(wrong_kind(resolver)),
        }
    }

    /// Runs an `asks: "sample"` resolver's answer (legacy: `sampling/createMessage` now).
    pub async fn sample(
        &self,
        resolver: &str,
        ask: Ask<CreateMessageResult>,
    ) -> Result<Slot<CreateMessageResult>, ToolError> {
        match ask.0 {
            AskInner::Value(value) => Ok(Slot::Ready(value)),
            AskInner::Sample(params) => {
                self.ctx.require_back_channel("sampling/createMessage")?;
                let requester = format!("resolver '{resolver}'");
                require_capability(self.ctx, Capability::Sampling, &requester)?;
                if params.tools.is_some() || params.tool_choice.is_some() {
                    require_capability(self.ctx, Capability::SamplingTools, &requester)?;
                }
                Ok(Slot::Ready(ask_sample(self.ctx, *params).await?))
            }
            _ => Err(wrong_kind(resolver)),
        }
    }

    /// Runs an `asks: "roots"` resolver's answer (legacy: `roots/list` now).
    pub async fn roots(
        &self,
        resolver: &str,
        ask: Ask<ListRootsResult>,
    ) -> Result<Slot<ListRootsResult>, ToolError> {
        match ask.0 {
            AskInner::Value(value) => Ok(Slot::Ready(value)),
            AskInner::Roots => {
                self.ctx.require_back_channel("roots/list")?;
                require_capability(
                    self.ctx,
                    Capability::Roots,
                    &format!("resolver '{resolver}'"),
                )?;
                Ok(Slot::Ready(ask_roots(self.ctx).await?))
            }
            _ => Err(wrong_kind(resolver)),
        }
    }

    /// Ends a call whose resolvers are not all ready: the `input_required` result on 2026-07-28
    /// connections. Unreachable on legacy connections (every question is answered mid-call).
    pub fn input_required(self) -> Result<CallToolResponse, ToolError> {
        let pending = self
            .pending
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Err(ToolError::internal(format!(
            "{} question(s) pending, but multi-round-trip is not supported yet",
            pending.len()
        )))
    }
}

fn wrong_kind(resolver: &str) -> ToolError {
    ToolError::internal(format!(
        "resolver '{resolver}' returned a question of the wrong kind"
    ))
}
