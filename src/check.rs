//! `check`: load, validate, model and type a spec, collecting every diagnostic of the run.

use std::path::Path;

use crate::diagnostics::{Code, Diagnostic, Report};
use crate::emit::types::{self, TypeSet};
use crate::model::{self, Model};
use crate::spec::{self, LoadedSpec};
use crate::validate::validate;

/// A spec that passed every check, ready for generation.
pub struct Checked {
    /// The loaded spec.
    pub loaded: LoadedSpec,
    /// What generation consumes.
    pub model: Model,
    /// The Rust types of its schemas.
    pub types: TypeSet,
    /// Warnings (no errors).
    pub report: Report,
}

/// Checks a spec file.
pub fn check_file(path: &Path) -> Result<Checked, Report> {
    finish(spec::load(path)?)
}

/// Checks spec text (`path` names it in diagnostics).
pub fn check_str(path: impl AsRef<Path>, text: &str) -> Result<Checked, Report> {
    finish(spec::load_str(path, text)?)
}

fn finish(loaded: LoadedSpec) -> Result<Checked, Report> {
    let mut report = Report::new(Some(loaded.source.clone()));
    let mut found = validate(&loaded);
    // In the order of the file, like a compiler.
    found.sort_by_key(|d| d.span.as_ref().map(|s| s.start));
    for d in found {
        report.push(d);
    }
    if report.has_errors() {
        return Err(report);
    }
    let types = match types::generate(&loaded.spec) {
        Ok(t) => t,
        Err(errors) => {
            for e in errors {
                let span = loaded.source.span_of(&e.pointer);
                let place = crate::spec::format::describe_place(&e.pointer).0;
                let d = match e.taken_by {
                    None => Diagnostic::error(
                        Code::UnsupportedSchema,
                        format!("{place}: {}", e.message),
                    )
                    .at(e.pointer, span),
                    Some(other) => {
                        let other_span = loaded.source.key_span_of(&other);
                        Diagnostic::error(Code::NameCollision, format!("{place}: {}", e.message))
                            .at(e.pointer, span)
                            .help(r##"rename one of them, or refer to the shared type with {"$ref": "#/$defs/<Name>"}"##)
                            .related(other, other_span, "the type of this has that name")
                    }
                };
                report.push(d);
            }
            return Err(report);
        }
    };
    for f in &types.fallbacks {
        let span = loaded.source.span_of(&f.pointer);
        report.push(
            Diagnostic::warning(
                Code::SchemaTypedWider,
                format!("{} is {}", sub_schema_place(&f.pointer), f.message),
            )
            .at(f.pointer.clone(), span),
        );
    }
    let model = model::build(&loaded.spec);
    Ok(Checked {
        loaded,
        model,
        types,
        report,
    })
}

/// Names a sub-schema for a diagnostic: `property `p` of the input schema of tool `t``.
fn sub_schema_place(pointer: &crate::pointer::Pointer) -> String {
    let seg: Vec<String> = pointer.segments().collect();
    let root_len = match seg.first().map(String::as_str) {
        Some("$defs") => 2,
        _ => 3.min(seg.len()),
    };
    let root = crate::pointer::Pointer::from_segments(seg[..root_len].iter());
    let place = crate::spec::format::describe_place(&root).0;
    let rest = &seg[root_len..];
    match rest {
        [] => place,
        [.., p, name] if p == "properties" => format!("property `{name}` of {place}"),
        _ => format!(
            "the sub-schema at `{}` of {place}",
            crate::pointer::Pointer::from_segments(rest.iter())
        ),
    }
}
