//! [`Ask`]: what an asking resolver returns (its value, or the one question it asks), and
//! [`AskKind`]: what each kind of question (elicitation, sampling, roots) brings to the one
//! generic path in `round.rs`: the client capability it needs, its 2026-07-28 question, how an
//! answer from `inputResponses` is decoded, and how it is sent mid-call on legacy connections.

// The sampling and roots kinds are rmcp's sampling and roots types, which SEP-2577 deprecates:
// exactly what legacy connections use (and what the 2026-07-28 questions carry).
#![allow(deprecated)]

use std::marker::PhantomData;

use rmcp::{
    ErrorData, Peer, RoleServer,
    model::{
        CancelledNotification, CancelledNotificationParam, ClientResult, CreateMessageRequest,
        CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
        ElicitResult, ElicitationAction, InputRequest, ListRootsRequest, ListRootsResult,
        MetaObject, RequestId, RequestMetaObject, SamplingMessage, ServerNotification,
        ServerRequest,
    },
    service::{PeerRequestOptions, ServiceError},
};
use serde_json::Value;
use tracing::Instrument;

use crate::{
    asking::{
        capability::Capability,
        form::{Form, FormQuestion, form_cache, question_digest},
    },
    errors::{Outcome, ToolError, service_error},
    operations::telemetry,
};

/// What an asking resolver returns: its value right away, or the one question it asks.
///
/// The constructors are typed by the resolver's kind: [`Ask::elicit`] only for [`Form`] types,
/// [`Ask::sample`] only for `Ask<CreateMessageResult>`, [`Ask::roots`] only for
/// `Ask<ListRootsResult>`. The framework asks the question (mid-call on legacy connections),
/// validates the answer and hands it to the consumers.
#[derive(Debug, Clone)]
pub struct Ask<T>(pub(crate) AskInner<T>);

#[derive(Debug, Clone)]
pub(crate) enum AskInner<T> {
    Value(T),
    Elicit(String),
    Sample(Box<CreateMessageRequestParams>),
    Roots,
}

impl<T> Ask<T> {
    /// The value is known: no question is asked.
    pub fn value(value: T) -> Self {
        Ask(AskInner::Value(value))
    }

    /// `true` when this is a question rather than a value.
    pub fn is_question(&self) -> bool {
        !matches!(self.0, AskInner::Value(_))
    }
}

impl<T> From<T> for Ask<T> {
    fn from(value: T) -> Self {
        Ask::value(value)
    }
}

impl<T: Form> Ask<T> {
    /// Ask the user `message` with a form whose schema is `T`'s; the accepted answer is the value.
    pub fn elicit(message: impl Into<String>) -> Self {
        Ask(AskInner::Elicit(message.into()))
    }
}

impl Ask<CreateMessageResult> {
    /// Ask the client's model (`sampling/createMessage` with `messages` and `maxTokens`).
    pub fn sample(messages: Vec<SamplingMessage>, max_tokens: u32) -> Self {
        Ask(AskInner::Sample(Box::new(CreateMessageRequestParams::new(
            messages, max_tokens,
        ))))
    }

    /// Ask the client's model with fully specified request parameters (system prompt, ...).
    pub fn sample_with(params: CreateMessageRequestParams) -> Self {
        Ask(AskInner::Sample(Box::new(params)))
    }
}

impl Ask<ListRootsResult> {
    /// Ask the client for its roots (`roots/list`).
    pub fn roots() -> Self {
        Ask(AskInner::Roots)
    }
}

/// One kind of question an asking resolver may return (generated code names the kind:
/// `round.ask::<runtime::Sampling>(..)`). The generic path (`Round::ask`) is the same for all: a value is ready at once; on legacy connections the question is checked
/// against the client's capabilities and sent now; on 2026-07-28 connections it is answered
/// from the round's state or `inputResponses`, or left pending.
pub trait AskKind {
    /// What the resolver's [`Ask`] carries as a value.
    type Value;
    /// What the consumers get: the value, or the decoded answer.
    type Answer;
    /// The question as the resolver asked it.
    type Question: Send;

    /// The value, or the question; `None` when the resolver returned a question of another kind.
    fn split(ask: Ask<Self::Value>) -> Option<Result<Self::Answer, Self::Question>>;

    /// The client capability `question` needs.
    fn capability(question: &Self::Question) -> Capability;

    /// `question` as a 2026-07-28 round digests and sends it.
    fn question(question: Self::Question) -> Result<Question<'static>, ToolError>;

    /// Decodes the client's answer (from `inputResponses`, or recorded in the state).
    fn decode(resolver: &str, answer: Value) -> Result<Self::Answer, ToolError>;

    /// Sends `question` to the client now (legacy connections) and returns its answer.
    /// `resolver` names the asking resolver in error messages (`None`: a tool body asking).
    fn send(
        peer: &Peer<RoleServer>,
        question: Self::Question,
        resolver: Option<&str>,
    ) -> impl Future<Output = Result<Self::Answer, ToolError>> + Send;
}

/// A question of a 2026-07-28 round.
pub enum Question<'q> {
    /// A form question asking this message (rendered only if it goes out).
    Form(&'q FormQuestion, String),
    /// Any other question (boxed: an `InputRequest` is ten times a form question's size).
    Rendered(Box<InputRequest>),
}

impl Question<'_> {
    /// The digest that ties an answer to exactly this question.
    pub(crate) fn digest(&self) -> Result<String, ToolError> {
        match self {
            Question::Form(form, message) => form.digest(message),
            Question::Rendered(request) => question_digest(request),
        }
    }

    /// The question as it goes out in `inputRequests`.
    pub(crate) fn into_request(self) -> InputRequest {
        match self {
            Question::Form(form, message) => InputRequest::Elicitation(form.request(message)),
            Question::Rendered(request) => *request,
        }
    }
}

/// `asks: "elicit"`: a form for `T`; the answer is an [`Outcome<T>`] (accepted answers validated
/// against `T::SCHEMA`).
pub struct Elicitation<T>(PhantomData<T>);

impl<T: Form> AskKind for Elicitation<T> {
    type Value = T;
    type Answer = Outcome<T>;
    type Question = String;

    fn split(ask: Ask<T>) -> Option<Result<Outcome<T>, String>> {
        match ask.0 {
            AskInner::Value(value) => Some(Ok(Outcome::Accepted(value))),
            AskInner::Elicit(message) => Some(Err(message)),
            _ => None,
        }
    }

    fn capability(_: &String) -> Capability {
        Capability::Form
    }

    fn question(message: String) -> Result<Question<'static>, ToolError> {
        Ok(Question::Form(form_cache::<T>().question()?, message))
    }

    fn decode(resolver: &str, answer: Value) -> Result<Outcome<T>, ToolError> {
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
                let mismatch = |why: String| {
                    ToolError::new(format!(
                        "Resolver '{resolver}' received an accepted elicitation whose content does not match the requested schema{why}"
                    ))
                };
                let wrong = answer_violations(form_cache::<T>().validator()?, content);
                if !wrong.is_empty() {
                    return Err(mismatch(wrong));
                }
                let value = <T as serde::Deserialize>::deserialize(content)
                    .map_err(|e| mismatch(format!(": {e}")))?;
                Ok(Outcome::Accepted(value))
            }
            "decline" => Ok(Outcome::Declined),
            "cancel" => Ok(Outcome::Cancelled),
            _ => Err(non_elicitation()),
        }
    }

    async fn send(
        peer: &Peer<RoleServer>,
        message: String,
        resolver: Option<&str>,
    ) -> Result<Outcome<T>, ToolError> {
        let form = form_cache::<T>();
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: form.legacy_schema()?.clone(),
        };
        let prefix = match resolver {
            Some(name) => format!("Resolver '{name}': "),
            None => String::new(),
        };
        let result = match elicit(peer, params).await {
            Ok(result) => result,
            // The client answered with something that is not an `ElicitResult` (the Python
            // SDK's text for its pydantic `ValidationError`; the answer is not repeated back).
            Err(ServiceError::UnexpectedResponse) => {
                return Err(ToolError::new(if prefix.is_empty() {
                    "Received an invalid elicitation response".to_string()
                } else {
                    format!("{prefix}received an invalid elicitation response")
                }));
            }
            Err(e) => return Err(service_error(e)),
        };
        match result.action {
            ElicitationAction::Accept => {
                let Some(content) = result.content else {
                    return Err(ToolError::new(format!(
                        "{prefix}Received an accepted elicitation with no content"
                    )));
                };
                let wrong = answer_violations(form.validator()?, &content);
                if !wrong.is_empty() {
                    return Err(ToolError::new(format!(
                        "{prefix}Received an accepted elicitation whose content does not match the requested schema{wrong}"
                    )));
                }
                let value = serde_json::from_value(content).map_err(|e| {
                    ToolError::new(format!(
                        "{prefix}Received an accepted elicitation whose content does not match the requested schema: {e}"
                    ))
                })?;
                Ok(Outcome::Accepted(value))
            }
            ElicitationAction::Decline => Ok(Outcome::Declined),
            _ => Ok(Outcome::Cancelled),
        }
    }
}

/// `asks: "sample"`: `sampling/createMessage`; the answer is the client's
/// [`CreateMessageResult`].
pub struct Sampling;

impl AskKind for Sampling {
    type Value = CreateMessageResult;
    type Answer = CreateMessageResult;
    type Question = Box<CreateMessageRequestParams>;

    fn split(
        ask: Ask<CreateMessageResult>,
    ) -> Option<Result<CreateMessageResult, Box<CreateMessageRequestParams>>> {
        match ask.0 {
            AskInner::Value(value) => Some(Ok(value)),
            AskInner::Sample(params) => Some(Err(params)),
            _ => None,
        }
    }

    /// `sampling.tools` when the request has `tools` or `toolChoice`, else `sampling`.
    fn capability(params: &Box<CreateMessageRequestParams>) -> Capability {
        if params.tools.is_some() || params.tool_choice.is_some() {
            Capability::SamplingTools
        } else {
            Capability::Sampling
        }
    }

    fn question(params: Box<CreateMessageRequestParams>) -> Result<Question<'static>, ToolError> {
        Ok(Question::Rendered(Box::new(InputRequest::CreateMessage(
            CreateMessageRequest::new(*params),
        ))))
    }

    fn decode(resolver: &str, answer: Value) -> Result<CreateMessageResult, ToolError> {
        typed_answer(resolver, answer)
    }

    async fn send(
        peer: &Peer<RoleServer>,
        params: Box<CreateMessageRequestParams>,
        _: Option<&str>,
    ) -> Result<CreateMessageResult, ToolError> {
        // rmcp's own checks (`Peer::create_message`): tools or toolChoice need the client's
        // sampling-tools capability, and the messages must be well formed.
        if (params.tools.is_some() || params.tool_choice.is_some())
            && !peer.supports_sampling_tools()
        {
            return Err(service_error(ServiceError::McpError(
                ErrorData::invalid_params(
                    "tools or toolChoice provided but client does not support sampling tools capability",
                    None,
                ),
            )));
        }
        params.validate().map_err(|e| {
            service_error(ServiceError::McpError(ErrorData::invalid_params(e, None)))
        })?;
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(*params));
        match send_cancellable(peer, "sampling/createMessage", request).await {
            Ok(ClientResult::CreateMessageResult(result)) => Ok(*result),
            Ok(_) => Err(service_error(ServiceError::UnexpectedResponse)),
            Err(e) => Err(service_error(e)),
        }
    }
}

/// `asks: "roots"`: `roots/list`; the answer is the client's [`ListRootsResult`].
pub struct Roots;

impl AskKind for Roots {
    type Value = ListRootsResult;
    type Answer = ListRootsResult;
    type Question = ();

    fn split(ask: Ask<ListRootsResult>) -> Option<Result<ListRootsResult, ()>> {
        match ask.0 {
            AskInner::Value(value) => Some(Ok(value)),
            AskInner::Roots => Some(Err(())),
            _ => None,
        }
    }

    fn capability(_: &()) -> Capability {
        Capability::Roots
    }

    fn question(_: ()) -> Result<Question<'static>, ToolError> {
        Ok(Question::Rendered(Box::new(InputRequest::ListRoots(
            ListRootsRequest {
                method: Default::default(),
                extensions: Default::default(),
            },
        ))))
    }

    fn decode(resolver: &str, answer: Value) -> Result<ListRootsResult, ToolError> {
        typed_answer(resolver, answer)
    }

    async fn send(
        peer: &Peer<RoleServer>,
        _: (),
        _: Option<&str>,
    ) -> Result<ListRootsResult, ToolError> {
        let request = ServerRequest::ListRootsRequest(ListRootsRequest {
            method: Default::default(),
            extensions: Default::default(),
        });
        match send_cancellable(peer, "roots/list", request).await {
            Ok(ClientResult::ListRootsResult(result)) => Ok(result),
            Ok(_) => Err(service_error(ServiceError::UnexpectedResponse)),
            Err(e) => Err(service_error(e)),
        }
    }
}

/// Decodes a sampling or roots answer.
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

/// Sends `elicitation/create` with `params` (legacy connections) through [`send_cancellable`].
pub(crate) async fn elicit(
    peer: &Peer<RoleServer>,
    params: ElicitRequestParams,
) -> Result<ElicitResult, ServiceError> {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    match send_cancellable(peer, "elicitation/create", request).await? {
        ClientResult::ElicitResult(result) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Sends the server-to-client request `request` (its JSON-RPC `method`) and waits for the
/// client's answer, in the request's CLIENT span. Dropping the future before the answer (the
/// call was cancelled, timed out or aborted by the drain) sends `notifications/cancelled` for
/// it ([`PendingGuard`]): rmcp itself sends nothing then and keeps waiting for the answer.
pub(crate) async fn send_cancellable(
    peer: &Peer<RoleServer>,
    method: &'static str,
    request: ServerRequest,
) -> Result<ClientResult, ServiceError> {
    // Once this returns, the request is on its way (nothing awaits in between): the guard
    // covers it from here on.
    // The request's CLIENT span is the parent the client's own spans take (SEP-414: its
    // `traceparent` goes in the request's `_meta`).
    let (span, traceparent) = telemetry::outbound_span(method);
    let mut options = PeerRequestOptions::no_options();
    if let Some(traceparent) = traceparent {
        let mut meta = MetaObject::default();
        meta.set_traceparent(traceparent);
        options.meta = Some(RequestMetaObject(meta));
    }
    let handle = peer.send_cancellable_request(request, options).await?;
    let mut guard = PendingGuard {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    telemetry::record_request_id(&span, &handle.id);
    let result = handle.await_response().instrument(span).await;
    // Answered (or the connection ended): nothing left to cancel.
    guard.id = None;
    result
}

/// A server-to-client request waiting for its answer: dropped before the answer came, it sends
/// `notifications/cancelled` for the request, so the client stops asking its user or its model
/// (and rmcp's serve loop forgets the request).
#[derive(Debug)]
pub(crate) struct PendingGuard {
    peer: Peer<RoleServer>,
    /// The pending request's id; `None` once it was answered.
    id: Option<RequestId>,
}

/// The `reason` of the `notifications/cancelled` a [`PendingGuard`] sends.
pub(crate) const CANCELLED_REASON: &str = "the call was cancelled";

impl Drop for PendingGuard {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        // Drop cannot wait: the notification goes out from a task of its own (there is always
        // a runtime where a request's future is dropped; without one there is no connection).
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let notification =
                ServerNotification::CancelledNotification(CancelledNotification::new(
                    CancelledNotificationParam::new(Some(id), Some(CANCELLED_REASON.to_string())),
                ));
            if let Err(error) = peer.send_notification(notification).await {
                tracing::debug!(%error, "could not send notifications/cancelled");
            }
        });
    }
}

/// What is wrong with an accepted elicitation's `content`, after the frozen text of the seeds
/// (the same on both eras): `: ` and each violation of the form, `; `-separated
/// (`: /confirm (type): "yes" is not of type "boolean"`); empty when it is valid.
fn answer_violations(validator: &jsonschema::Validator, content: &Value) -> String {
    let violations = crate::catalog::schema::violations(validator, content);
    if violations.is_empty() {
        String::new()
    } else {
        format!(": {}", violations.join("; "))
    }
}
