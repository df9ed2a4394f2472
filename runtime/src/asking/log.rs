//! [`AskLog`]: the record of who asks what on legacy connections, for the test kit (feature
//! `testing`). A legacy question carries no resolver name on the wire, so [`Round::ask`]
//! notes the resolver here before the question goes out ([`note_asked`]) and the kit's client
//! takes the note when the question arrives; the kit's transports put the log into every
//! request's extensions.
//!
//! [`Round::ask`]: crate::Round::ask

use std::{
    any::Any,
    sync::{Arc, Mutex, MutexGuard},
};

use crate::asking::{capability::Capability, context::Context};

/// The kind of a question noted in the [`AskLog`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AskedKind {
    Form,
    Url,
    Sampling,
    Roots,
}

/// The resolvers that asked on a legacy connection, noted by `Round::ask` before each question
/// goes out and taken by the test client when it arrives (the wire carries no name). The kit's
/// transports put it into every request's extensions.
#[derive(Debug, Default)]
pub(crate) struct AskLog(Mutex<Vec<(String, AskedKind, Option<String>)>>);

impl AskLog {
    fn note(&self, resolver: &str, kind: AskedKind, message: Option<String>) {
        lock(&self.0).push((resolver.to_string(), kind, message));
    }

    /// The resolver of the first note of `kind` (and, for forms, `message`), taken.
    pub(crate) fn take(&self, kind: AskedKind, message: Option<&str>) -> Option<String> {
        let mut notes = lock(&self.0);
        let index = notes.iter().position(|(_, k, m)| {
            *k == kind && (kind != AskedKind::Form || m.as_deref() == message)
        })?;
        Some(notes.remove(index).0)
    }
}

/// `Round::ask`'s hook on legacy connections: notes that `resolver` asks `question` (of the
/// kind `capability` names) in the request's [`AskLog`], if a test client put one there.
pub(crate) fn note_asked(
    ctx: &Context,
    resolver: &str,
    capability: Capability,
    question: &dyn Any,
) {
    let log = ctx
        .request()
        .extensions
        .get::<Arc<AskLog>>()
        .or_else(|| ctx.http_parts()?.extensions.get::<Arc<AskLog>>());
    let Some(log) = log else {
        return;
    };
    let kind = match capability {
        Capability::Form => AskedKind::Form,
        Capability::Url => AskedKind::Url,
        Capability::Sampling | Capability::SamplingTools => AskedKind::Sampling,
        Capability::Roots => AskedKind::Roots,
    };
    // A form question is its message (`Elicitation<T>::Question` is a `String`).
    let message = question.downcast_ref::<String>().cloned();
    log.note(resolver, kind, message);
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
