//! Loading a spec file: parse with positions, check the structure against the format, then
//! decode into the typed model.

use std::path::Path;

use indexmap::IndexMap;
use serde_json::Value;

use crate::diagnostics::{Code, Diagnostic, Report};
use crate::pointer::Pointer;
use crate::source::{self, Document, Invalid, InvalidKind, ReadError, SourceFile};
use crate::spec::format::{check_structure, describe_place, take_extensions};
use crate::spec::model::{
    Binding, ParamSource, Prompt, Resolver, Resource, ResourceTemplate, Spec, Tool,
};

/// A spec decoded from a file, with the file (for locating later diagnostics).
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    /// The typed model.
    pub spec: Spec,
    /// The parsed JSON, as written.
    pub value: Value,
    /// The file, with the places of all values.
    pub source: SourceFile,
    /// `x-` keys found on spec-format objects, by pointer: kept, and otherwise ignored.
    pub extensions: IndexMap<Pointer, Value>,
}

/// Loads a spec file. Any problem up to a decoded model is reported, all at once.
pub fn load(path: &Path) -> Result<LoadedSpec, Report> {
    match source::read(path) {
        Ok(doc) => decode(doc),
        Err(ReadError::Io(message)) => Err(Report::single(None, Diagnostic::io(message))),
        Err(ReadError::Invalid(e)) => Err(invalid(e)),
    }
}

/// Loads a spec from text (the path is used in diagnostics only).
pub fn load_str(path: impl AsRef<Path>, text: &str) -> Result<LoadedSpec, Report> {
    decode(source::parse(path.as_ref(), text).map_err(invalid)?)
}

/// The one diagnostic of a text that is no JSON document a spec may be.
fn invalid(e: Invalid) -> Report {
    let code = match e.kind {
        InvalidKind::Json => Code::InvalidJson,
        InvalidKind::DuplicateKey => Code::DuplicateKey,
    };
    let d = Diagnostic::error(code, e.message).at(e.pointer, e.span);
    Report::single(Some(e.source), d)
}

fn decode(doc: Document) -> Result<LoadedSpec, Report> {
    let structural = check_structure(&doc);
    if !structural.is_empty() {
        let mut report = Report::new(Some(doc.source));
        structural.into_iter().for_each(|d| report.push(d));
        return Err(report);
    }
    let mut stripped = doc.value.clone();
    let extensions: IndexMap<Pointer, Value> = take_extensions(&mut stripped).into_iter().collect();
    match serde_path_to_error::deserialize::<_, Spec>(stripped.clone()) {
        Ok(spec) => Ok(LoadedSpec {
            spec,
            value: doc.value,
            source: doc.source,
            extensions,
        }),
        Err(e) => {
            // The structural check accepts what the model decodes but for a few values JSON
            // Schema and serde see differently (`1e3` is an integer to the one, a float to the
            // other): report at the value serde stopped at, else at the innermost item that does
            // not decode, never panic.
            let at = decoded_up_to(&stripped, e.path());
            let e = e.into_inner();
            let (at, e) = match at == Pointer::root() {
                true => undecodable(&stripped).unwrap_or((at, e)),
                false => (at, e),
            };
            let (place, subjects) = describe_place(&at);
            let mut d =
                Diagnostic::error(Code::InvalidSpec, format!("{place} does not decode: {e}"))
                    .at(at.clone(), doc.source.span_of(&at));
            if e.to_string().starts_with("invalid type: floating point") {
                d = d.help("write a whole number without a decimal point or an exponent");
            }
            d.subjects = subjects;
            Err(Report::single(Some(doc.source), d))
        }
    }
}

/// The pointer of the deepest value of `v` on serde's `path` (map keys and sequence indexes; an
/// enum's variant is no place of the document).
fn decoded_up_to(v: &Value, path: &serde_path_to_error::Path) -> Pointer {
    use serde_path_to_error::Segment;
    let mut at = Pointer::root();
    for segment in path.iter() {
        let next = match segment {
            Segment::Map { key } => key.clone(),
            Segment::Seq { index } => index.to_string(),
            Segment::Enum { .. } | Segment::Unknown => continue,
        };
        let deeper = at.child(&next);
        if v.pointer(deeper.as_str()).is_none() {
            break;
        }
        at = deeper;
    }
    at
}

/// The first item of the format's maps (a tool, a resolver, one of its parameters, ...) that
/// does not decode into its model type, with serde's reason.
fn undecodable(v: &Value) -> Option<(Pointer, serde_json::Error)> {
    fn first<T: serde::de::DeserializeOwned>(
        v: &Value,
        section: &str,
    ) -> Option<(Pointer, serde_json::Error)> {
        let items = v.get(section)?.as_object()?;
        items.iter().find_map(|(k, item)| {
            serde_json::from_value::<T>(item.clone())
                .err()
                .map(|e| (Pointer::from_segments([section, k.as_str()]), e))
        })
    }
    let found = first::<Tool>(v, "tools")
        .or_else(|| first::<Resolver>(v, "resolvers"))
        .or_else(|| first::<Prompt>(v, "prompts"))
        .or_else(|| first::<Resource>(v, "resources"))
        .or_else(|| first::<ResourceTemplate>(v, "resourceTemplates"))?;
    // One level further where the item is itself made of named parts.
    let (at, e) = found;
    let item = v.pointer(at.as_str())?;
    let inner = match at.segments().next().as_deref() {
        Some("tools") | Some("prompts") => first::<Binding>(item, "resolve"),
        Some("resolvers") => first::<ParamSource>(item, "params"),
        _ => None,
    }
    .map(|(p, e)| {
        let mut full = at.clone();
        p.segments().for_each(|s| full.push(&s));
        (full, e)
    });
    Some(inner.unwrap_or((at, e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_that_does_not_decode_is_found_by_its_pointer() {
        let v = serde_json::json!({
            "name": "S",
            "resolvers": {"r": {"params": {"a": "arg", "b": 7}}},
            "tools": {"ok": {"description": "d"}}
        });
        let (at, _) = undecodable(&v).expect("the resolver does not decode");
        assert_eq!(at.as_str(), "/resolvers/r/params/b");
        let v = serde_json::json!({"name": "S", "tools": {"t": {"description": 5}}});
        assert_eq!(undecodable(&v).unwrap().0.as_str(), "/tools/t");
        assert!(undecodable(&serde_json::json!({"name": "S", "tools": {}})).is_none());
    }
}
