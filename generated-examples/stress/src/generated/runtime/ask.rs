//! [`Ask`]: what an asking resolver returns; [`Form`]: types that can be asked for.

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ListRootsResult, SamplingMessage,
};
use serde::de::DeserializeOwned;

/// A type that can be requested with a form elicitation.
///
/// mcpgen implements it for every `$defs` type that is a flat object of primitive fields and is
/// used as the `returns` of an `asks: "elicit"` resolver or may be passed to
/// [`Context::elicit`](super::Context::elicit).
pub trait Form: DeserializeOwned + Send + 'static {
    /// The flat object schema sent as `requestedSchema` (the spec's `$defs` schema, as JSON).
    /// Accepted answers are validated against it before they are deserialized.
    const SCHEMA: &'static str;
}

/// What an asking resolver returns: its value right away, or the one question it asks.
///
/// The constructors are typed by the resolver's kind: [`Ask::elicit`] only for [`Form`] types,
/// [`Ask::sample`] only for `Ask<CreateMessageResult>`, [`Ask::roots`] only for
/// `Ask<ListRootsResult>`. The framework asks the question (mid-call on legacy connections),
/// validates the answer and hands it to the consumers.
#[derive(Debug, Clone)]
pub struct Ask<T>(pub(super) AskInner<T>);

#[derive(Debug, Clone)]
pub(super) enum AskInner<T> {
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
