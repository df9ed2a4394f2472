//! Loading a spec file: parse with positions, check the structure against the format, then
//! decode into the typed model.

use std::path::Path;

use indexmap::IndexMap;
use serde_json::Value;

use crate::diagnostics::{Diagnostic, Report};
use crate::pointer::Pointer;
use crate::source::{self, Document, SourceFile};
use crate::spec::format::check_structure;
use crate::spec::model::Spec;

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
    decode(source::read(path)?)
}

/// Loads a spec from text (the path is used in diagnostics only).
pub fn load_str(path: impl AsRef<Path>, text: &str) -> Result<LoadedSpec, Report> {
    decode(source::parse(path.as_ref(), text)?)
}

fn decode(doc: Document) -> Result<LoadedSpec, Report> {
    let structural = check_structure(&doc);
    if !structural.is_empty() {
        let mut report = Report::new(Some(doc.source));
        structural.into_iter().for_each(|d| report.push(d));
        return Err(report);
    }
    let mut stripped = doc.value.clone();
    let mut extensions = IndexMap::new();
    take_extensions(&mut stripped, &mut extensions);
    match serde_json::from_value::<Spec>(stripped) {
        Ok(spec) => Ok(LoadedSpec {
            spec,
            value: doc.value,
            source: doc.source,
            extensions,
        }),
        Err(e) => {
            // The structural check accepts exactly what the model decodes; report, never panic.
            let d = Diagnostic::error("invalid-spec", format!("the spec does not decode: {e}"))
                .at(Pointer::root(), doc.source.span_of(&Pointer::root()));
            Err(Report::single(Some(doc.source), d))
        }
    }
}

/// Moves the `x-` keys of every spec-format object (not of user schemas) out of `v`.
fn take_extensions(v: &mut Value, out: &mut IndexMap<Pointer, Value>) {
    fn take(obj: &mut Value, at: &Pointer, out: &mut IndexMap<Pointer, Value>) {
        if let Value::Object(map) = obj {
            let keys: Vec<String> = map
                .keys()
                .filter(|k| k.starts_with("x-"))
                .cloned()
                .collect();
            for k in keys {
                if let Some(val) = map.shift_remove(&k) {
                    out.insert(at.child(&k), val);
                }
            }
        }
    }
    fn each_member(
        v: &mut Value,
        at: &Pointer,
        out: &mut IndexMap<Pointer, Value>,
        f: impl Fn(&mut Value, &Pointer, &mut IndexMap<Pointer, Value>),
    ) {
        if let Value::Object(map) = v {
            for (k, child) in map.iter_mut() {
                f(child, &at.child(k), out);
            }
        }
    }
    let root = Pointer::root();
    take(v, &root, out);
    if let Some(tools) = v.get_mut("tools") {
        each_member(tools, &root.child("tools"), out, |tool, at, out| {
            take(tool, at, out);
            if let Some(a) = tool.get_mut("annotations") {
                take(a, &at.child("annotations"), out);
            }
            if let Some(r) = tool.get_mut("resolve") {
                each_member(r, &at.child("resolve"), out, take);
            }
        });
    }
    if let Some(resolvers) = v.get_mut("resolvers") {
        each_member(resolvers, &root.child("resolvers"), out, |r, at, out| {
            take(r, at, out);
            if let Some(p) = r.get_mut("params") {
                each_member(p, &at.child("params"), out, take);
            }
        });
    }
}
