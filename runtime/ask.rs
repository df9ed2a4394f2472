//! [`Ask`]: what an asking resolver returns; [`Form`]: types that can be asked for.

use std::{
    any::TypeId,
    collections::BTreeMap,
    sync::{OnceLock, PoisonError, RwLock},
};

use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitationSchema, ListRootsResult,
    SamplingMessage,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{ToolError, round::FormQuestion, schema};

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

/// What the runtime derives from a [`Form`]'s schema, each part built once per type, on first
/// use (a build error is kept and reported at every use, as a fresh build would report it).
pub(super) struct FormCache {
    schema: &'static str,
    /// `requestedSchema` as sent on legacy connections (properties in key order).
    legacy: OnceLock<Result<ElicitationSchema, String>>,
    /// The question as sent on 2026-07-28 connections, and its digest.
    question: OnceLock<Result<FormQuestion, String>>,
    /// The validator of accepted answers.
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

/// The cache of form type `T` (one per type for the life of the process).
pub(super) fn form_cache<T: Form>() -> &'static FormCache {
    static CACHES: RwLock<BTreeMap<TypeId, &'static FormCache>> = RwLock::new(BTreeMap::new());
    let id = TypeId::of::<T>();
    if let Some(cache) = CACHES
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&id)
    {
        return cache;
    }
    CACHES
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(id)
        .or_insert_with(|| {
            Box::leak(Box::new(FormCache {
                schema: T::SCHEMA,
                legacy: OnceLock::new(),
                question: OnceLock::new(),
                validator: OnceLock::new(),
            }))
        })
}

impl FormCache {
    /// The `requestedSchema` of a legacy `elicitation/create`.
    pub(super) fn legacy_schema(&self) -> Result<&ElicitationSchema, ToolError> {
        cached(&self.legacy, || {
            let schema: Value = serde_json::from_str(self.schema)
                .map_err(|e| format!("form schema is not JSON: {e}"))?;
            serde_json::from_value(schema)
                .map_err(|e| format!("form schema is not an elicitation schema: {e}"))
        })
    }

    /// The 2026-07-28 form question (no top-level `title`) and its digest.
    pub(super) fn question(&self) -> Result<&FormQuestion, ToolError> {
        cached(&self.question, || FormQuestion::new(self.schema))
    }

    /// The compiled validator of accepted answers.
    pub(super) fn validator(&self) -> Result<&jsonschema::Validator, ToolError> {
        cached(&self.validator, || {
            let schema: Value = serde_json::from_str(self.schema)
                .map_err(|e| format!("form schema is not JSON: {e}"))?;
            schema::validator(&schema).map_err(|e| format!("form schema does not compile: {e}"))
        })
    }
}

fn cached<T>(
    cell: &OnceLock<Result<T, String>>,
    build: impl FnOnce() -> Result<T, String>,
) -> Result<&T, ToolError> {
    cell.get_or_init(build)
        .as_ref()
        .map_err(|e| ToolError::internal(e.clone()))
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
