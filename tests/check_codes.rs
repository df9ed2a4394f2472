//! The diagnostic codes: docs/spec.md's table lists exactly the generator's codes, in the same
//! order and with the same severities; every code is made somewhere in `src/`; and output shows
//! each by its text.

use std::path::Path;

use mcpgen::diagnostics::{Code, Diagnostic, Report, Severity};

/// The rows of the `### Codes` table of docs/spec.md: (code, severity).
fn documented() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/spec.md");
    let text = std::fs::read_to_string(path).unwrap();
    let section = text
        .split("\n### Codes\n")
        .nth(1)
        .expect("docs/spec.md has a `### Codes` section");
    let section = section.split("\n#").next().unwrap();
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            (
                cells[0]
                    .trim_start_matches("| ")
                    .trim_matches('`')
                    .to_string(),
                cells[1].to_string(),
            )
        })
        .collect()
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

#[test]
fn the_documented_codes_are_the_generators() {
    let ours: Vec<(String, String)> = Code::ALL
        .iter()
        .map(|c| {
            (
                c.as_str().to_string(),
                severity_word(c.severity()).to_string(),
            )
        })
        .collect();
    assert_eq!(documented(), ours);
    // As many rows as codes, and no code twice.
    let mut texts: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    texts.dedup();
    assert_eq!(texts.len(), Code::ALL.len());
}

#[test]
fn every_code_is_made_somewhere() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut text = String::new();
    let mut dirs = vec![src];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.ends_with("diagnostics.rs")
            {
                text.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    // `io` is made by `Diagnostic::io`.
    assert!(text.contains("Diagnostic::io("));
    let unused: Vec<String> = Code::ALL
        .iter()
        .filter(|c| **c != Code::Io)
        .map(|c| format!("Code::{c:?}"))
        .filter(|v| {
            !text
                .match_indices(v.as_str())
                .any(|(i, _)| !text[i + v.len()..].starts_with(|c: char| c.is_alphanumeric()))
        })
        .collect();
    assert_eq!(unused, Vec::<String>::new());
}

#[test]
fn output_shows_the_code_text() {
    let d = Diagnostic::error(Code::UnknownResolver, "m");
    assert_eq!(d.code.to_string(), "unknown-resolver");
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["code"], "unknown-resolver");
    assert_eq!(json["severity"], "error");
    assert_eq!(Diagnostic::io("x").code, Code::Io);
    assert!(Report::single(None, Diagnostic::io("x")).is_io());
    assert!(!Report::single(None, d).is_io());
}
