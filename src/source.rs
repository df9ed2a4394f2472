//! A spec file's text and where each JSON value in it sits.
//!
//! The document is parsed twice: by `serde_json` into a [`serde_json::Value`] (its errors carry
//! line and column, and its recursion limit turns absurdly deep nesting into an error instead of
//! a stack overflow), then, once that succeeded, by `jsonc-parser` in strict JSON mode into a
//! syntax tree whose nodes carry byte ranges. The tree is flattened into a map from JSON pointer
//! to the ranges of the member's key and value, which is all later stages need to locate a
//! diagnostic.
//!
//! A text that cannot be read is a [`ReadError`]; `spec/load.rs` turns it into a
//! diagnostic (this module knows nothing of diagnostics, which render with its positions).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jsonc_parser::ast::{ObjectPropName, Value as Node};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions};

use crate::pointer::Pointer;

/// Where one JSON value sits in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The member's key, when the value is an object member.
    pub key: Option<Range<usize>>,
    /// The value itself.
    pub value: Range<usize>,
}

/// A spec file: its path, its text, and the places of all its values. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SourceFile(Arc<SourceInner>);

#[derive(Debug)]
struct SourceInner {
    path: PathBuf,
    text: String,
    line_starts: Vec<usize>,
    places: HashMap<String, Place>,
}

/// A parsed document: the value, and the file it came from.
#[derive(Debug, Clone)]
pub struct Document {
    /// The parsed JSON value.
    pub value: serde_json::Value,
    /// The file, with positions.
    pub source: SourceFile,
}

/// A 1-based line and column (the column counts characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCol {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1, in characters.
    pub column: usize,
}

impl SourceFile {
    /// A file with no known places (used before parsing succeeded).
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> Self {
        Self::with_places(path.into(), text.into(), HashMap::new())
    }

    fn with_places(path: PathBuf, text: String, places: HashMap<String, Place>) -> Self {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile(Arc::new(SourceInner {
            path,
            text,
            line_starts,
            places,
        }))
    }

    /// The file's path as given.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// The place of the value at `pointer`, if the document has one there.
    pub fn place(&self, pointer: &Pointer) -> Option<&Place> {
        self.0.places.get(pointer.as_str())
    }

    /// The best range for a diagnostic about `pointer`: the value's range, or the range of the
    /// nearest ancestor that exists (a missing member is reported at its parent object).
    pub fn span_of(&self, pointer: &Pointer) -> Range<usize> {
        let mut p = pointer.clone();
        loop {
            if let Some(place) = self.0.places.get(p.as_str()) {
                return place.value.clone();
            }
            if !p.pop() {
                return 0..0;
            }
        }
    }

    /// The range of the key of the member at `pointer` (or its value's range when it has none).
    pub fn key_span_of(&self, pointer: &Pointer) -> Range<usize> {
        match self.0.places.get(pointer.as_str()) {
            Some(Place { key: Some(k), .. }) => k.clone(),
            _ => self.span_of(pointer),
        }
    }

    /// Line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let inner = &self.0;
        let offset = offset.min(inner.text.len());
        let line = match inner.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = inner.line_starts[line];
        let column = inner.text[start..offset].chars().count() + 1;
        LineCol {
            line: line + 1,
            column,
        }
    }

    /// Byte offset of a 1-based line and column (as `serde_json` reports them).
    fn offset_of(&self, line: usize, column: usize) -> usize {
        let inner = &self.0;
        let Some(&start) = inner.line_starts.get(line.saturating_sub(1)) else {
            return inner.text.len();
        };
        let line_text = &inner.text[start..];
        let line_end = line_text.find('\n').unwrap_or(line_text.len());
        let col = column.saturating_sub(1);
        line_text[..line_end]
            .char_indices()
            .nth(col)
            .map_or(start + line_end, |(i, _)| start + i)
    }
}

/// Why a spec file gives no document.
#[derive(Debug, Clone)]
pub enum ReadError {
    /// The file could not be read: what and why.
    Io(String),
    /// The text is no JSON document a spec may be.
    Invalid(Invalid),
}

/// A text that is no JSON document a spec may be: what is wrong, and where.
#[derive(Debug, Clone)]
pub struct Invalid {
    /// Invalid JSON, or a key repeated.
    pub kind: InvalidKind,
    /// What is wrong, e.g. `invalid JSON: trailing comma`.
    pub message: String,
    /// Where: the repeated key's member, or the root for invalid JSON.
    pub pointer: Pointer,
    /// The byte range in the text.
    pub span: Range<usize>,
    /// The text (with the places of its values when it is JSON).
    pub source: SourceFile,
}

/// The two ways a text is not a spec document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidKind {
    /// Not JSON.
    Json,
    /// An object repeats a key.
    DuplicateKey,
}

/// Reads and parses a spec file.
pub fn read(path: &Path) -> Result<Document, ReadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ReadError::Io(format!("cannot read {}: {e}", path.display())))?;
    parse(path, text).map_err(ReadError::Invalid)
}

/// Parses a document's text. Invalid JSON gives one located error.
pub fn parse(path: impl Into<PathBuf>, text: impl Into<String>) -> Result<Document, Invalid> {
    let (path, text) = (path.into(), text.into());
    let source = SourceFile::new(path.clone(), text.clone());
    let invalid_json = |message: String, span: Range<usize>, source: SourceFile| Invalid {
        kind: InvalidKind::Json,
        message: format!("invalid JSON: {message}"),
        pointer: Pointer::root(),
        span,
        source,
    };
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            let offset = source.offset_of(e.line(), e.column());
            let message = strip_position(&e.to_string());
            let span = offset..(offset + 1).min(text.len());
            return Err(invalid_json(message, span, source));
        }
    };
    let options = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    let ast = match jsonc_parser::parse_to_ast(&text, &CollectOptions::default(), &options) {
        Ok(r) => r,
        Err(e) => {
            // serde_json accepted the text, so this cannot normally happen; report, never panic.
            let range = e.range();
            return Err(invalid_json(
                e.kind().to_string(),
                range.start..range.end,
                source,
            ));
        }
    };
    let mut places = HashMap::new();
    let mut duplicates = Vec::new();
    if let Some(root) = &ast.value {
        index(root, Pointer::root(), None, &mut places, &mut duplicates);
    }
    let source = SourceFile::with_places(path, text.clone(), places);
    if let Some((pointer, range)) = duplicates.into_iter().next() {
        let key = pointer.last().unwrap_or_default().to_string();
        return Err(Invalid {
            kind: InvalidKind::DuplicateKey,
            message: format!("duplicate key `{key}`: JSON objects in a spec must not repeat a key"),
            pointer,
            span: range,
            source,
        });
    }
    Ok(Document { value, source })
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn index(
    node: &Node<'_>,
    pointer: Pointer,
    key: Option<Range<usize>>,
    places: &mut HashMap<String, Place>,
    duplicates: &mut Vec<(Pointer, Range<usize>)>,
) {
    let r = node.range();
    match node {
        Node::Object(obj) => {
            let mut seen = std::collections::HashSet::new();
            for prop in &obj.properties {
                let name = match &prop.name {
                    ObjectPropName::String(s) => s.value.to_string(),
                    ObjectPropName::Word(w) => w.value.to_string(),
                };
                let kr = prop.name.range();
                let child = pointer.child(&name);
                if !seen.insert(name) {
                    duplicates.push((child.clone(), kr.start..kr.end));
                }
                index(
                    &prop.value,
                    child,
                    Some(kr.start..kr.end),
                    places,
                    duplicates,
                );
            }
        }
        Node::Array(arr) => {
            for (i, el) in arr.elements.iter().enumerate() {
                index(el, pointer.child(&i.to_string()), None, places, duplicates);
            }
        }
        _ => {}
    }
    places.insert(
        pointer.as_str().to_string(),
        Place {
            key,
            value: r.start..r.end,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_and_line_columns() {
        let doc = parse("s.json", "{\n  \"a\": {\"b\": [1, \"x\"]}\n}\n").unwrap();
        let p = Pointer::parse("/a/b/1").unwrap();
        let span = doc.source.span_of(&p);
        assert_eq!(&doc.source.text()[span.clone()], "\"x\"");
        assert_eq!(
            doc.source.line_col(span.start),
            LineCol {
                line: 2,
                column: 18
            }
        );
        let key = doc.source.key_span_of(&Pointer::parse("/a").unwrap());
        assert_eq!(&doc.source.text()[key], "\"a\"");
        // A missing member falls back to its parent.
        let missing = doc.source.span_of(&Pointer::parse("/a/zzz").unwrap());
        assert_eq!(&doc.source.text()[missing], "{\"b\": [1, \"x\"]}");
    }

    #[test]
    fn invalid_json_is_located() {
        let e = parse("s.json", "{\n  \"a\": 1,\n}\n").unwrap_err();
        let lc = e.source.line_col(e.span.start);
        assert_eq!((lc.line, lc.column), (3, 1));
        assert_eq!(e.kind, InvalidKind::Json);
        assert_eq!(e.message, "invalid JSON: trailing comma");
    }

    #[test]
    fn comments_are_invalid_json() {
        let e = parse("s.json", "{\n  // a note\n  \"a\": 1\n}\n").unwrap_err();
        let lc = e.source.line_col(e.span.start);
        assert_eq!((lc.line, lc.column), (2, 3));
        assert_eq!(e.kind, InvalidKind::Json);
        assert_eq!(e.message, "invalid JSON: key must be a string");
        let e = parse("s.json", "{\"a\": /* a note */ 1}").unwrap_err();
        assert_eq!(e.message, "invalid JSON: expected value");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(100_000);
        let e = parse("s.json", text).unwrap_err();
        assert_eq!(e.message, "invalid JSON: recursion limit exceeded");
    }

    #[test]
    fn duplicate_keys_are_rejected() {
        let e = parse("s.json", "{\"a\": 1, \"a\": 2}").unwrap_err();
        assert_eq!(e.kind, InvalidKind::DuplicateKey);
        assert_eq!(
            e.message,
            "duplicate key `a`: JSON objects in a spec must not repeat a key"
        );
        assert_eq!(e.pointer.as_str(), "/a");
        assert_eq!(e.source.line_col(e.span.start).column, 10);
    }
}
