//! The `asks` kinds, one descriptor each: what a resolver that may ask a question is to
//! validation (whether it declares `returns`, whether its value is an outcome, whether its
//! `returns` is a form) and to the generated code (its value type, the runtime call that runs
//! the question, the text its stub carries). Validation and the emitters read the descriptor;
//! adding a kind is one entry here and one `AskKind` impl in the runtime (`runtime/src/asking/ask.rs`).

use serde::Serializer;

use super::Asks;

/// How a kind of question looks to generated code.
#[derive(Debug, PartialEq, Eq)]
pub struct AskKind {
    /// The kind, as the spec names it.
    pub asks: Asks,
    /// The type of the value when the protocol fixes it (a name the generated module exports);
    /// `None`: the type of the resolver's `returns`.
    pub value: Option<&'static str>,
    /// True when the value reaches consumers as an `Outcome<T>` (accepted / declined /
    /// cancelled) that a binding may take whole (`"outcome": true`).
    pub outcome: bool,
    /// True when the resolver's `returns` schema is sent as a form (`requestedSchema`).
    pub form: bool,
    /// The client capability the question needs.
    pub capability: &'static str,
    /// The legacy request that asks it.
    pub method: &'static str,
    /// The runtime's `AskKind` type of the kind, which the generated call names:
    /// `round.ask::<runtime::KIND>(..)` (`_` for a form's type, inferred).
    pub runtime_kind: &'static str,
    /// What the resolver's doc comment adds.
    pub doc: &'static str,
}

/// Every kind, in the order of [`Asks`].
pub const KINDS: [AskKind; 3] = [
    AskKind {
        asks: Asks::Elicit,
        value: None,
        outcome: true,
        form: true,
        capability: "elicitation",
        method: "elicitation/create",
        runtime_kind: "Elicitation<_>",
        doc: "Asks `elicit`: return `Ask::value(..)`, or `Ask::elicit(message)` to ask the user.",
    },
    AskKind {
        asks: Asks::Sample,
        value: Some("CreateMessageResult"),
        outcome: false,
        form: false,
        capability: "sampling",
        method: "sampling/createMessage",
        runtime_kind: "Sampling",
        doc: "Asks `sample`: return `Ask::value(..)`, or `Ask::sample(messages, max_tokens)`.",
    },
    AskKind {
        asks: Asks::Roots,
        value: Some("ListRootsResult"),
        outcome: false,
        form: false,
        capability: "roots",
        method: "roots/list",
        runtime_kind: "Roots",
        doc: "Asks `roots`: return `Ask::value(..)`, or `Ask::roots()` to ask the client.",
    },
];

/// The descriptor of `asks`.
pub fn kind(asks: Asks) -> &'static AskKind {
    &KINDS[asks as usize]
}

/// Serializes a resolver's `asks` as its keyword (`"elicit"`), or `null`.
pub(crate) fn serialize<S: Serializer>(
    asks: &Option<&'static AskKind>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match asks {
        Some(k) => s.serialize_str(k.asks.as_str()),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_exactly_one_descriptor() {
        for asks in [Asks::Elicit, Asks::Sample, Asks::Roots] {
            assert_eq!(KINDS.iter().filter(|k| k.asks == asks).count(), 1);
            assert_eq!(kind(asks).asks, asks);
        }
    }
}
