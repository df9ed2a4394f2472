//! [`Round`] and [`Slot`]: how the generated per-tool code runs asking resolvers.
//!
//! The generated code computes one [`Slot`] per resolver, in dependency order. A plain resolver
//! runs when all its inputs are [`Slot::Ready`] (in its span, `runtime::resolve`); an asking
//! resolver's future goes through [`Round::ask`], the one generic path for every
//! [`AskKind`](crate::AskKind), which awaits it in the resolver's span. Any slot left [`Slot::Pending`] at
//! the end means the call ends with [`Round::input_required`] instead of running the tool.
//!
//! * Legacy connections (2025-11-25 and earlier): a question is asked right away on the
//!   back-channel and the slot is always `Ready`.
//! * 2026-07-28 connections (multi-round-trip, SEP-2322), following the Python SDK's algorithm:
//!   every round re-runs the resolvers; a question is rendered, digested, and answered from the
//!   recorded outcome in the sealed `requestState` (same key, same digest), else from
//!   `inputResponses` (only when the state records that exact question as asked), else it is
//!   checked against the request's client capabilities (-32021) and left pending. The call ends
//!   with [`Round::input_required`]: all pending questions in one `inputRequests` (keyed by
//!   resolver name), and a freshly sealed `requestState` (see `state.rs`) carrying the outcomes
//!   used in this round and the digests of the questions asked. Plain resolver values are never
//!   persisted. The client's `requestState` was verified at the boundary (`state::verify`)
//!   before any resolver ran; a round only reads the inner state, and one it cannot read (or of
//!   another version) counts as no progress.

use std::{collections::BTreeMap, future::Future, sync::Mutex};

use rmcp::model::{InputRequests, InputRequiredResult};
use serde::Deserialize;
use serde_json::Value;
use tracing::Instrument;

use crate::{
    asking::{
        ask::{Ask, AskKind, Question},
        capability::Capability,
        context::{Context, Era},
    },
    authorization::principal::Principal,
    catalog::tools::call_arguments_digest,
    errors::ToolError,
    operations::telemetry,
    scope,
    state::Binding,
};

/// `mcpgen.resolver.kind` (and `mcpgen.question.kind`) of a question needing `capability`.
fn kind_name(capability: Capability) -> &'static str {
    match capability {
        Capability::Form | Capability::Url => "elicit",
        Capability::Sampling | Capability::SamplingTools => "sample",
        Capability::Roots => "roots",
    }
}

/// A resolver's value within one call: ready, or waiting for an answer from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot<T> {
    /// The value is known.
    Ready(T),
    /// A question (this resolver's, or one it depends on) is still unanswered.
    Pending,
}

/// The questions of one `tools/call` (or `prompts/get`) round.
pub struct Round<'a> {
    ctx: &'a Context,
    /// 2026-07-28 only: the previous rounds' progress and this round's bookkeeping.
    modern: Option<Modern>,
}

struct Modern {
    previous: Previous,
    progress: Mutex<Progress>,
}

/// The inner state a round seals: `{"v": 1, "outcomes": {resolver: {"q": digest, "answer":
/// raw answer}}, "asked": {resolver: digest of the question asked}}`. A verified state that does
/// not read as this, or of another version, counts as no progress.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct Previous {
    v: u64,
    /// resolver → the question's digest and the raw answer it got
    #[serde(default)]
    outcomes: BTreeMap<String, Recorded>,
    /// resolver → digest of the question asked
    #[serde(default)]
    asked: BTreeMap<String, String>,
}

/// An answer recorded in the state, with the digest of the question it answers.
#[derive(serde::Serialize, serde::Deserialize)]
struct Recorded {
    q: String,
    answer: Value,
}

#[derive(Default)]
struct Progress {
    pending: InputRequests,
    asked: BTreeMap<String, String>,
    outcomes: BTreeMap<String, Recorded>,
}

/// The version of the inner state.
const STATE_VERSION: u64 = 1;

impl<'a> Round<'a> {
    /// Starts the round of the current call. On a 2026-07-28 request this reads the progress
    /// recorded in the client's `requestState`, which the boundary has already verified.
    pub fn new(ctx: &'a Context) -> Self {
        if ctx.era() == Era::Legacy {
            return Round { ctx, modern: None };
        }
        let previous = match ctx.verified_state() {
            None => Previous::default(),
            Some(verified) => match Previous::deserialize(verified.inner()) {
                Ok(previous) if previous.v == STATE_VERSION => {
                    tracing::debug!(tool = ctx.tool_name(), "resuming the call");
                    previous
                }
                Ok(previous) => {
                    tracing::warn!(
                        tool = ctx.tool_name(),
                        "requestState holds inner state version {}: no progress",
                        previous.v
                    );
                    Previous::default()
                }
                Err(e) => {
                    tracing::warn!(
                        tool = ctx.tool_name(),
                        "requestState's inner state does not read ({e}): no progress"
                    );
                    Previous::default()
                }
            },
        };
        Round {
            ctx,
            modern: Some(Modern {
                previous,
                progress: Mutex::new(Progress::default()),
            }),
        }
    }

    /// Runs an asking resolver, for every kind `K` (`Elicitation<T>`: the answer is an
    /// [`Outcome`](crate::Outcome); `Sampling`; `Roots`): `ask` is the resolver's future, awaited in the
    /// resolver's `resolve {resolver}` span. The one path of every asking resolver: a value is
    /// ready at once; a question needs the client capability of its kind (-32021 otherwise),
    /// and is sent now on a legacy connection, or answered from this round's state or
    /// `inputResponses` on a 2026-07-28 one (in a `question {resolver}` span), else left
    /// pending.
    pub async fn ask<K: AskKind>(
        &self,
        resolver: &'static str,
        ask: impl Future<Output = Result<Ask<K::Value>, ToolError>>,
    ) -> Result<Slot<K::Answer>, ToolError>
    where
        K::Question: 'static,
    {
        let span = telemetry::resolver_span(resolver, None);
        self.ask_in::<K>(resolver, ask, &span)
            .instrument(span.clone())
            .await
    }

    /// [`ask`](Self::ask) within the resolver's `span`.
    async fn ask_in<K: AskKind>(
        &self,
        resolver: &'static str,
        ask: impl Future<Output = Result<Ask<K::Value>, ToolError>>,
        span: &tracing::Span,
    ) -> Result<Slot<K::Answer>, ToolError>
    where
        K::Question: 'static,
    {
        let question = match K::split(ask.await?) {
            Some(Ok(answer)) => {
                span.record("mcpgen.resolver.asked", false);
                return Ok(Slot::Ready(answer));
            }
            Some(Err(question)) => question,
            None => {
                return Err(ToolError::internal(format!(
                    "resolver '{resolver}' returned a question of the wrong kind"
                )));
            }
        };
        let capability = K::capability(&question);
        let kind = kind_name(capability);
        span.record("mcpgen.resolver.kind", kind);
        span.record("mcpgen.resolver.asked", true);
        if self.modern.is_none() {
            capability.require(
                self.ctx.client_capabilities(),
                &format_args!("resolver '{resolver}'"),
            )?;
            // The test kit's record of who asks what (legacy requests carry no resolver name).
            #[cfg(feature = "testing")]
            crate::asking::log::note_asked(self.ctx, resolver, capability, &question);
            return Ok(Slot::Ready(
                K::send(self.ctx.peer(), question, Some(resolver)).await?,
            ));
        }
        let question_span = telemetry::question_span(resolver, kind);
        let (answer, outcome) = question_span
            .in_scope(|| self.answer_for(resolver, K::question(question)?, capability))?;
        question_span.record("mcpgen.question.outcome", outcome);
        match answer {
            None => Ok(Slot::Pending),
            Some(answer) => Ok(Slot::Ready(K::decode(resolver, answer)?)),
        }
    }

    /// Ends a call whose resolvers are not all ready: on 2026-07-28 connections the
    /// `input_required` result with every pending question and a freshly sealed
    /// `requestState`. Unreachable on legacy connections (every question is answered mid-call).
    ///
    /// `R` is the response of the request: `CallToolResponse` for tools, `GetPromptResponse`
    /// for prompts. The round's pending questions are taken: call it once.
    pub fn input_required<R: From<InputRequiredResult>>(&self) -> Result<R, ToolError> {
        let Some(modern) = &self.modern else {
            return Err(ToolError::internal(
                "a resolver is pending on a legacy connection",
            ));
        };
        let progress = std::mem::take(
            &mut *modern
                .progress
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        if progress.pending.is_empty() {
            return Err(ToolError::internal(
                "a resolver is pending but no question was asked",
            ));
        }
        let inner = Previous {
            v: STATE_VERSION,
            outcomes: progress.outcomes,
            asked: progress.asked,
        };
        // The digest the boundary took when it verified the client's state, else this call's.
        let arguments = match self.ctx.verified_state() {
            Some(verified) => verified.arguments_digest().to_string(),
            None => call_arguments_digest(),
        };
        // Bound to the caller, as the boundary checks it (`state::verify_request`).
        let principal = self.ctx.principal().map(Principal::binding);
        let binding = Binding {
            method: self.ctx.method(),
            tool: self.ctx.tool_name(),
            arguments: &arguments,
            principal: principal.as_deref(),
        };
        let token = match scope::policy(self.ctx.request()).seal(binding, &inner) {
            Ok(token) => token,
            Err(e) => {
                tracing::error!(tool = self.ctx.tool_name(), "cannot seal requestState: {e}");
                return Err(ToolError::Protocol(rmcp::ErrorData::internal_error(
                    "Internal error",
                    None,
                )));
            }
        };
        tracing::debug!(
            tool = self.ctx.tool_name(),
            questions = progress.pending.len(),
            "input_required: asking the client"
        );
        Ok(InputRequiredResult::new(Some(progress.pending), Some(token)).into())
    }

    /// The usable answer to `question` (recorded outcome, else a fresh answer to exactly this
    /// question), or `None` after recording the question as pending; with the question's
    /// outcome for its span (`recorded`, `answered`, `asked`).
    fn answer_for(
        &self,
        resolver: &str,
        question: Question<'_>,
        capability: Capability,
    ) -> Result<(Option<Value>, &'static str), ToolError> {
        let modern = self.modern.as_ref().expect("modern round");
        let previous = &modern.previous;
        let digest = question.digest()?;
        let mut progress = modern
            .progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if progress.pending.contains_key(resolver) || progress.outcomes.contains_key(resolver) {
            return Err(ToolError::internal(format!(
                "resolver '{resolver}' asked twice in one round"
            )));
        }
        let recorded = previous
            .outcomes
            .get(resolver)
            .filter(|outcome| outcome.q == digest)
            .map(|outcome| &outcome.answer);
        let fresh = || {
            (previous.asked.get(resolver) == Some(&digest))
                .then(|| self.ctx.input_responses()?.get(resolver))
                .flatten()
        };
        let found = match recorded {
            Some(answer) => Some((answer, "recorded")),
            None => fresh().map(|answer| (answer, "answered")),
        };
        if let Some((answer, outcome)) = found {
            progress.outcomes.insert(
                resolver.to_string(),
                Recorded {
                    q: digest,
                    answer: answer.clone(),
                },
            );
            return Ok((Some(answer.clone()), outcome));
        }
        drop(progress);
        capability.require(
            self.ctx.client_capabilities(),
            &format_args!("resolver '{resolver}'"),
        )?;
        let mut progress = modern
            .progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        progress.asked.insert(resolver.to_string(), digest);
        progress
            .pending
            .insert(resolver.to_string(), question.into_request());
        Ok((None, "asked"))
    }
}
