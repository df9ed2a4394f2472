//! [`Round`] and [`Slot`]: how the generated per-tool code runs asking resolvers.
//!
//! The generated code computes one [`Slot`] per resolver, in dependency order. A plain resolver
//! runs when all its inputs are [`Slot::Ready`]; an asking resolver's [`Ask`] goes through
//! [`Round::elicit`], [`Round::sample`] or [`Round::roots`]. Any slot left [`Slot::Pending`] at
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

use std::{collections::BTreeMap, sync::Mutex};

use rmcp::model::{
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult,
    ListRootsRequest, ListRootsResult,
};
use serde::Deserialize;
use serde_json::Value;

use super::{
    Ask, Context, Era, Form, Outcome, ToolError,
    ask::{AskInner, form_cache},
    context::{Capability, ask_form, ask_roots, ask_sample, require_capability},
    state::{self, Binding},
    tools::call_arguments_digest,
};

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

    /// Runs an `asks: "elicit"` resolver's answer: a value is ready at once; a question is asked
    /// (legacy: `elicitation/create` now) and its validated answer becomes the [`Outcome`].
    pub async fn elicit<T: Form>(
        &self,
        resolver: &str,
        ask: Ask<T>,
    ) -> Result<Slot<Outcome<T>>, ToolError> {
        match ask.0 {
            AskInner::Value(value) => Ok(Slot::Ready(Outcome::Accepted(value))),
            AskInner::Elicit(message) if self.modern.is_some() => {
                let question = Question::Form(form_cache::<T>().question()?, message);
                let answer = self.answer_for(resolver, question, Capability::Form)?;
                match answer {
                    None => Ok(Slot::Pending),
                    Some(answer) => Ok(Slot::Ready(elicit_answer::<T>(resolver, answer)?)),
                }
            }
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
            AskInner::Sample(params) if self.modern.is_some() => {
                let capability = if params.tools.is_some() || params.tool_choice.is_some() {
                    Capability::SamplingTools
                } else {
                    Capability::Sampling
                };
                let request = InputRequest::CreateMessage(CreateMessageRequest::new(*params));
                match self.answer_for(
                    resolver,
                    Question::Rendered(Box::new(request)),
                    capability,
                )? {
                    None => Ok(Slot::Pending),
                    Some(answer) => Ok(Slot::Ready(typed_answer(resolver, answer)?)),
                }
            }
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
            AskInner::Roots if self.modern.is_some() => {
                let request = InputRequest::ListRoots(ListRootsRequest {
                    method: Default::default(),
                    extensions: Default::default(),
                });
                let question = Question::Rendered(Box::new(request));
                match self.answer_for(resolver, question, Capability::Roots)? {
                    None => Ok(Slot::Pending),
                    Some(answer) => Ok(Slot::Ready(typed_answer(resolver, answer)?)),
                }
            }
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
        let binding = Binding {
            method: self.ctx.method(),
            tool: self.ctx.tool_name(),
            arguments: &arguments,
        };
        let token = match state::policy().seal(binding, &inner) {
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
    /// question), or `None` after recording the question as pending.
    fn answer_for(
        &self,
        resolver: &str,
        question: Question<'_>,
        capability: Capability,
    ) -> Result<Option<Value>, ToolError> {
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
        if let Some(answer) = recorded.or_else(fresh) {
            progress.outcomes.insert(
                resolver.to_string(),
                Recorded {
                    q: digest,
                    answer: answer.clone(),
                },
            );
            return Ok(Some(answer.clone()));
        }
        drop(progress);
        require_capability(self.ctx, capability, &format_args!("resolver '{resolver}'"))?;
        let mut progress = modern
            .progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        progress.asked.insert(resolver.to_string(), digest);
        progress
            .pending
            .insert(resolver.to_string(), question.into_request());
        Ok(None)
    }
}

/// A question of a 2026-07-28 round.
enum Question<'q> {
    /// A form question asking this message (rendered only if it goes out).
    Form(&'q FormQuestion, String),
    /// Any other question (boxed: an `InputRequest` is ten times a form question's size).
    Rendered(Box<InputRequest>),
}

impl Question<'_> {
    fn digest(&self) -> Result<String, ToolError> {
        match self {
            Question::Form(form, message) => form.digest(message),
            Question::Rendered(request) => question_digest(request),
        }
    }

    fn into_request(self) -> InputRequest {
        match self {
            Question::Form(form, message) => InputRequest::Elicitation(form.request(message)),
            Question::Rendered(request) => *request,
        }
    }
}

/// The digest of a question: [`state::digest`] of its JSON rendering.
pub(super) fn question_digest(request: &InputRequest) -> Result<String, ToolError> {
    let rendered = serde_json::to_value(request)
        .map_err(|e| ToolError::internal(format!("cannot render the question: {e}")))?;
    Ok(state::digest(&rendered))
}

/// A form's question on 2026-07-28 connections, prepared once per [`Form`] type (see
/// `ask::form_cache`): its `requestedSchema` (no top-level `title`), and the canonical JSON of
/// the question around its message, so that a round digests a question without rendering it.
pub(super) struct FormQuestion {
    schema: ElicitationSchema,
    /// SHA-256 fed with the canonical text before the message, and the canonical text after
    /// it; `None` if the message could not be located (each question is then rendered).
    template: Option<(state::Hasher, Vec<u8>)>,
}

/// A message that occurs nowhere else in a rendered question (it is only ever rendered here).
const MESSAGE_MARK: &str = "\u{1}mcpgen: the message of the question\u{1}";

impl FormQuestion {
    pub(super) fn new(schema: &str) -> Result<Self, String> {
        let mut schema: ElicitationSchema = serde_json::from_str(schema)
            .map_err(|e| format!("form schema is not an elicitation schema: {e}"))?;
        schema.title = None;
        let mut question = FormQuestion {
            schema,
            template: None,
        };
        let marked = InputRequest::Elicitation(question.request(MESSAGE_MARK.to_string()));
        let rendered = serde_json::to_value(&marked)
            .map_err(|e| format!("cannot render the question: {e}"))?;
        let mut text = Vec::new();
        state::canonical(&rendered, &mut text);
        let mut mark = Vec::new();
        state::write_str(MESSAGE_MARK, &mut mark);
        let mut found = (0..text.len()).filter(|&i| text[i..].starts_with(&mark));
        if let (Some(at), None) = (found.next(), found.next()) {
            let mut before = state::Hasher::default();
            before.write_bytes(&text[..at]);
            question.template = Some((before, text[at + mark.len()..].to_vec()));
        }
        Ok(question)
    }

    /// The question asking `message`.
    pub(super) fn request(&self, message: String) -> ElicitRequest {
        ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: self.schema.clone(),
        })
    }

    /// The digest of the question asking `message`: the same as [`question_digest`] of
    /// [`FormQuestion::request`], without rendering it.
    pub(super) fn digest(&self, message: &str) -> Result<String, ToolError> {
        match &self.template {
            Some((before, after)) => {
                let mut hasher = before.clone();
                hasher.write_json_str(message);
                hasher.write_bytes(after);
                Ok(hasher.finish())
            }
            None => question_digest(&InputRequest::Elicitation(
                self.request(message.to_string()),
            )),
        }
    }
}

/// Validates an `ElicitResult` answer for `T`.
fn elicit_answer<T: Form>(resolver: &str, answer: Value) -> Result<Outcome<T>, ToolError> {
    let non_elicitation = || {
        ToolError::new(format!(
            "Resolver '{resolver}' received a non-elicitation response"
        ))
    };
    let action = answer
        .get("action")
        .and_then(Value::as_str)
        .ok_or_else(non_elicitation)?;
    match action {
        "accept" => {
            let Some(content) = answer.get("content").filter(|c| !c.is_null()) else {
                return Err(ToolError::new(format!(
                    "Resolver '{resolver}' received an accepted elicitation with no content"
                )));
            };
            let mismatch = || {
                ToolError::new(format!(
                    "Resolver '{resolver}' received an accepted elicitation whose content does not match the requested schema"
                ))
            };
            if !form_cache::<T>().validator()?.is_valid(content) {
                return Err(mismatch());
            }
            let value = <T as serde::Deserialize>::deserialize(content).map_err(|_| mismatch())?;
            Ok(Outcome::Accepted(value))
        }
        "decline" => Ok(Outcome::Declined),
        "cancel" => Ok(Outcome::Cancelled),
        _ => Err(non_elicitation()),
    }
}

/// Validates a sampling or roots answer.
fn typed_answer<T: serde::de::DeserializeOwned>(
    resolver: &str,
    answer: Value,
) -> Result<T, ToolError> {
    serde_json::from_value(answer).map_err(|_| {
        ToolError::new(format!(
            "Resolver '{resolver}' received a response of the wrong kind"
        ))
    })
}

fn wrong_kind(resolver: &str) -> ToolError {
    ToolError::internal(format!(
        "resolver '{resolver}' returned a question of the wrong kind"
    ))
}
