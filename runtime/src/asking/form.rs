//! [`Form`]: the types a form elicitation asks for, and what the runtime prepares once per form
//! type: its legacy `requestedSchema`, its 2026-07-28 question with a digest that needs no
//! rendering ([`FormQuestion`]), and the validator of accepted answers ([`FormCache`]).

use std::{
    any::TypeId,
    collections::BTreeMap,
    sync::{OnceLock, PoisonError, RwLock},
};

use rmcp::model::{ElicitRequest, ElicitRequestParams, ElicitationSchema, InputRequest};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{catalog::schema, errors::ToolError, state};

/// A type that can be requested with a form elicitation.
///
/// mcpgen implements it for every `$defs` type that is a flat object of primitive fields and is
/// used as the `returns` of an `asks: "elicit"` resolver or may be passed to
/// [`Context::elicit`](crate::Context::elicit).
pub trait Form: DeserializeOwned + Send + 'static {
    /// The flat object schema sent as `requestedSchema` (the spec's `$defs` schema, as JSON).
    /// Accepted answers are validated against it before they are deserialized.
    const SCHEMA: &'static str;
}

/// What the runtime derives from a [`Form`]'s schema, each part built once per type, on first
/// use (a build error is kept and reported at every use, as a fresh build would report it).
pub(crate) struct FormCache {
    schema: &'static str,
    /// `requestedSchema` as sent on legacy connections (properties in key order).
    legacy: OnceLock<Result<ElicitationSchema, String>>,
    /// The question as sent on 2026-07-28 connections, and its digest.
    question: OnceLock<Result<FormQuestion, String>>,
    /// The validator of accepted answers.
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

/// The cache of form type `T` (one per type for the life of the process).
pub(crate) fn form_cache<T: Form>() -> &'static FormCache {
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
    pub(crate) fn legacy_schema(&self) -> Result<&ElicitationSchema, ToolError> {
        cached(&self.legacy, || {
            let schema: Value = serde_json::from_str(self.schema)
                .map_err(|e| format!("form schema is not JSON: {e}"))?;
            serde_json::from_value(schema)
                .map_err(|e| format!("form schema is not an elicitation schema: {e}"))
        })
    }

    /// The 2026-07-28 form question (no top-level `title`) and its digest.
    pub(crate) fn question(&self) -> Result<&FormQuestion, ToolError> {
        cached(&self.question, || FormQuestion::new(self.schema))
    }

    /// The compiled validator of accepted answers.
    pub(crate) fn validator(&self) -> Result<&jsonschema::Validator, ToolError> {
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

/// The digest of a question: [`state::digest`] of its JSON rendering.
pub(crate) fn question_digest(request: &InputRequest) -> Result<String, ToolError> {
    let rendered = serde_json::to_value(request)
        .map_err(|e| ToolError::internal(format!("cannot render the question: {e}")))?;
    Ok(state::digest(&rendered))
}

/// A form's question on 2026-07-28 connections, prepared once per [`Form`] type (see
/// [`form_cache`]): its `requestedSchema` (no top-level `title`), and the canonical JSON of
/// the question around its message, so that a round digests a question without rendering it.
pub struct FormQuestion {
    schema: ElicitationSchema,
    /// SHA-256 fed with the canonical text before the message, and the canonical text after
    /// it; `None` if the message could not be located (each question is then rendered).
    template: Option<(state::Hasher, Vec<u8>)>,
}

/// A message that occurs nowhere else in a rendered question (it is only ever rendered here).
const MESSAGE_MARK: &str = "\u{1}mcpgen: the message of the question\u{1}";

impl FormQuestion {
    pub(crate) fn new(schema: &str) -> Result<Self, String> {
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
    pub(crate) fn request(&self, message: String) -> ElicitRequest {
        ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: self.schema.clone(),
        })
    }

    /// The digest of the question asking `message`: the same as [`question_digest`] of
    /// [`FormQuestion::request`], without rendering it.
    pub(crate) fn digest(&self, message: &str) -> Result<String, ToolError> {
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
