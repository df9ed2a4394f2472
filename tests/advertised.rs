//! Every schema a generated server advertises is a valid, self-contained JSON Schema 2020-12
//! document: each tool's `inputSchema` and `outputSchema` and each form's `requestedSchema`, as
//! the generator computes them (the checked-in examples carry exactly these, see
//! `tests/generate.rs`), for every example and for the specs under `tests/advertised/`.
//!
//! For each document: it validates against the 2020-12 meta-schema; it compiles; every `$ref`
//! resolves inside it; `$defs` appear only at its root, and only those it (transitively) needs;
//! tool schemas have `"type": "object"` at the root (MCP requires it, and rmcp drops an
//! `outputSchema` without it on legacy connections). Prompt arguments are advertised as a list
//! of names, not as a schema, so there is nothing to check for them.

use std::path::{Path, PathBuf};

use mcpgen::check::{Checked, check_file};
use mcpgen::emit::signatures::Signatures;
use mcpgen::model::wire::advertised_output;
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One advertised document and where it is advertised.
struct Doc {
    at: String,
    schema: Value,
    /// A tool's input or output schema (a form's root is an object too, by construction).
    tool: bool,
}

/// Every document the server of `checked` advertises.
fn advertised(checked: &Checked) -> Vec<Doc> {
    let mut docs = Vec::new();
    for t in &checked.model.tools {
        docs.push(Doc {
            at: format!("tool `{}` inputSchema", t.name),
            schema: t.input_schema.clone(),
            tool: true,
        });
        if let Some(o) = &t.output {
            docs.push(Doc {
                at: format!("tool `{}` outputSchema", t.name),
                schema: o.output_schema.clone(),
                tool: true,
            });
        }
    }
    for (ty, schema) in Signatures::new(&checked.model, &checked.types).forms_of() {
        docs.push(Doc {
            at: format!("form `{ty}` requestedSchema"),
            schema,
            tool: false,
        });
    }
    docs
}

/// The value at JSON pointer `pointer` (already without `#`) of `doc`.
fn resolve<'a>(doc: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(doc);
    }
    let pointer = percent_decode(pointer)?;
    doc.pointer(&pointer)
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Every `$ref` of `schema` (not inside data keywords), with the pointer where it sits.
fn refs(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(m) => {
            for (k, v) in m {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                if k == "$ref" {
                    out.push((here, v.as_str().unwrap_or("<not a string>").to_string()));
                } else if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    refs(v, &here, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                refs(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Pointers of every `$defs` keyword in `schema` (not inside data keywords).
fn defs_keywords(schema: &Value, at: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(m) => {
            for (k, v) in m {
                let here = format!("{at}/{k}");
                if k == "$defs" {
                    out.push(here.clone());
                }
                if !matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                    defs_keywords(v, &here, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                defs_keywords(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The problems of one advertised document (empty: none).
fn problems(doc: &Doc) -> Vec<String> {
    let schema = &doc.schema;
    let mut out = Vec::new();
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        out.push(format!(
            "not a valid 2020-12 schema: {e} at {}",
            e.instance_path()
        ));
    }
    if let Err(e) = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
    {
        out.push(format!("does not compile: {e}"));
    }
    if doc.tool && schema.get("type") != Some(&json!("object")) {
        out.push("no \"type\": \"object\" at the root".into());
    }
    let mut all = Vec::new();
    refs(schema, "", &mut all);
    for (at, r) in &all {
        match r.strip_prefix('#') {
            Some(pointer) if resolve(schema, pointer).is_some() => {}
            Some(_) => out.push(format!("$ref {r:?} at {at} resolves to nothing")),
            None => out.push(format!("$ref {r:?} at {at} points outside the document")),
        }
    }
    let mut nested = Vec::new();
    defs_keywords(schema, "", &mut nested);
    nested.retain(|p| p != "/$defs");
    if !nested.is_empty() {
        out.push(format!("$defs not at the root: {nested:?}"));
    }
    // Every root `$defs` entry is needed: reachable from the document outside `$defs`.
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        let mut body = schema.clone();
        body.as_object_mut().unwrap().remove("$defs");
        let mut reached: Vec<String> = Vec::new();
        let mut queue = vec![body];
        while let Some(v) = queue.pop() {
            let mut found = Vec::new();
            refs(&v, "", &mut found);
            for (_, r) in found {
                if let Some(name) = r.strip_prefix("#/$defs/")
                    && !reached.iter().any(|n| n == name)
                    && let Some(def) = defs.get(name)
                {
                    reached.push(name.to_string());
                    queue.push(def.clone());
                }
            }
        }
        for name in defs.keys() {
            if !reached.contains(name) {
                out.push(format!("$defs/{name} is carried but not needed"));
            }
        }
    }
    out
}

fn check_all(spec: &Path) -> (usize, Vec<String>) {
    let checked = check_file(spec).unwrap_or_else(|r| panic!("{}", r.render_human()));
    let docs = advertised(&checked);
    let mut failures = Vec::new();
    for doc in &docs {
        for p in problems(doc) {
            failures.push(format!(
                "{}: {}: {p}\n  {}",
                spec.display(),
                doc.at,
                doc.schema
            ));
        }
    }
    (docs.len(), failures)
}

#[test]
fn every_schema_every_example_advertises_is_valid_and_resolves() {
    // Every example crate (every folder of generated-examples with a spec), so a new one is
    // covered without a list to keep.
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("generated-examples"))
        .unwrap()
        .map(|e| e.unwrap().path().join("spec.json"))
        .filter(|p| p.is_file())
        .collect();
    examples.sort();
    assert_eq!(examples.len(), 11, "{examples:?}");
    let mut failures = Vec::new();
    for spec in &examples {
        let ex = spec
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy();
        let (count, f) = check_all(spec);
        assert!(count > 0, "{ex} advertises no schema");
        failures.extend(f);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_schema_of_the_corpus_is_valid_and_resolves() {
    let dir = root().join("tests/advertised");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    specs.sort();
    assert!(!specs.is_empty());
    let mut failures = Vec::new();
    for spec in &specs {
        failures.extend(check_all(spec).1);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The documents of `tests/advertised/outputs.json`, by where they are advertised.
fn corpus_docs() -> Vec<(String, Value)> {
    let checked = check_file(&root().join("tests/advertised/outputs.json"))
        .unwrap_or_else(|r| panic!("{}", r.render_human()));
    advertised(&checked)
        .into_iter()
        .map(|d| (d.at, d.schema))
        .collect()
}

fn doc_at(docs: &[(String, Value)], at: &str) -> Value {
    docs.iter()
        .find(|(a, _)| a == at)
        .unwrap_or_else(|| panic!("no {at}"))
        .1
        .clone()
}

#[test]
fn a_wrapped_output_carries_the_defs_it_needs_at_its_root() {
    let docs = corpus_docs();
    let author =
        json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let book = json!({
        "type": "object",
        "properties": {"title": {"type": "string"}, "author": {"$ref": "#/$defs/Author"}},
        "required": ["title", "author"]
    });
    // An array of `$ref`: the type and what it references, nothing else (`Shelf` is not needed).
    assert_eq!(
        doc_at(&docs, "tool `list_books` outputSchema"),
        json!({
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Book"}}},
            "required": ["result"],
            "$defs": {"Author": author, "Book": book}
        })
    );
    // A nullable `$ref`.
    assert_eq!(
        doc_at(&docs, "tool `find_book` outputSchema"),
        json!({
            "type": "object",
            "properties": {"result": {"anyOf": [{"$ref": "#/$defs/Book"}, {"type": "null"}]}},
            "required": ["result"],
            "$defs": {"Author": author, "Book": book}
        })
    );
    // A bare `$ref` to an object: advertised as is, with `"type": "object"` at the root.
    assert_eq!(
        doc_at(&docs, "tool `get_book` outputSchema"),
        json!({"$ref": "#/$defs/Book", "type": "object", "$defs": {"Author": author, "Book": book}})
    );
}

#[test]
fn wrapped_results_validate_against_their_advertised_schema() {
    let docs = corpus_docs();
    let validator = |at: &str| {
        jsonschema::draft202012::new(&doc_at(&docs, at)).unwrap_or_else(|e| panic!("{at}: {e}"))
    };
    let book = json!({"title": "Dune", "author": {"name": "Frank Herbert"}});
    let list = validator("tool `list_books` outputSchema");
    assert!(list.is_valid(&json!({"result": [book.clone()]})));
    assert!(!list.is_valid(&json!({"result": [{"title": "Dune", "author": {}}]})));
    assert!(!list.is_valid(&json!([book.clone()])));
    let find = validator("tool `find_book` outputSchema");
    assert!(find.is_valid(&json!({"result": null})));
    assert!(find.is_valid(&json!({"result": book.clone()})));
    assert!(!find.is_valid(&json!({"result": 3})));
    let tree = validator("tool `tree` outputSchema");
    assert!(
        tree.is_valid(
            &json!({"result": [{"value": 1, "children": [{"value": 2, "children": []}]}]})
        )
    );
    assert!(!tree.is_valid(
        &json!({"result": [{"value": 1, "children": [{"value": "x", "children": []}]}]})
    ));
}

/// A schema with its own `$defs` and references to its root (`#`), as pydantic writes a
/// recursive model, wrapped: the `$defs` (and `$schema`) move to the root of the document and `#` becomes
/// `#/properties/result`, so every reference still means what it meant.
#[test]
fn wrapping_moves_own_defs_to_the_root_and_relocates_references_into_the_schema() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "array",
        "items": {"$ref": "#/$defs/Node"},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "siblings": {"$ref": "#"},
                    "first": {"$ref": "#/items"}
                },
                "required": ["value"]
            }
        }
    });
    let doc = advertised_output(&Default::default(), &schema, true);
    assert_eq!(
        doc,
        json!({
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            "required": ["result"],
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer"},
                        "siblings": {"$ref": "#/properties/result"},
                        "first": {"$ref": "#/properties/result/items"}
                    },
                    "required": ["value"]
                }
            }
        })
    );
    let problems = problems(&Doc {
        at: "wrapped".into(),
        schema: doc.clone(),
        tool: true,
    });
    assert!(problems.is_empty(), "{problems:?}");
    let v = jsonschema::draft202012::new(&doc).unwrap();
    assert!(v.is_valid(&json!({"result": [{"value": 1, "siblings": [{"value": 2}]}]})));
    assert!(!v.is_valid(&json!({"result": [{"value": 1, "siblings": [{"value": "two"}]}]})));
}

/// The checks themselves find what they are meant to find.
#[test]
fn the_checks_catch_dangling_references_nested_defs_and_extra_defs() {
    let nested = Doc {
        at: "old wrapping".into(),
        schema: json!({
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Book"}, "$defs": {"Book": {"type": "object"}}}},
            "required": ["result"]
        }),
        tool: true,
    };
    assert_eq!(
        problems(&nested),
        vec![
            "does not compile: Pointer '/$defs/Book' does not exist".to_string(),
            "$ref \"#/$defs/Book\" at /properties/result/items/$ref resolves to nothing"
                .to_string(),
            "$defs not at the root: [\"/properties/result/$defs\"]".to_string(),
        ]
    );
    let extra = Doc {
        at: "extra".into(),
        schema: json!({"$ref": "#/$defs/A", "$defs": {"A": {"type": "object"}, "B": {}}}),
        tool: true,
    };
    assert_eq!(
        problems(&extra),
        vec![
            "no \"type\": \"object\" at the root".to_string(),
            "$defs/B is carried but not needed".to_string(),
        ]
    );
    let invalid = Doc {
        at: "invalid".into(),
        schema: json!({"type": "object", "minProperties": -1}),
        tool: true,
    };
    assert_eq!(problems(&invalid).len(), 2, "{:?}", problems(&invalid));
}

/// A form's property given as a `$ref` to a `$defs` enum is sent inline: a form is flat and
/// carries no `$defs`.
#[test]
fn a_form_with_a_ref_property_is_sent_flat() {
    let checked = check_file(&root().join("tests/advertised/inputs.json"))
        .unwrap_or_else(|r| panic!("{}", r.render_human()));
    let forms: Vec<(String, Value)> = advertised(&checked)
        .into_iter()
        .filter(|d| d.at.starts_with("form "))
        .map(|d| (d.at, d.schema))
        .collect();
    assert_eq!(
        forms,
        vec![
            // Every flat `$defs` object is a form (`ctx.elicit` may ask for it).
            (
                "form `types :: Money` requestedSchema".to_string(),
                json!({
                    "type": "object",
                    "properties": {
                        "amount": {"type": "number"},
                        "currency": {"type": "string", "enum": ["EUR", "JPY", "USD"]}
                    },
                    "required": ["amount", "currency"]
                })
            ),
            (
                "form `types :: Unused` requestedSchema".to_string(),
                json!({"type": "object", "properties": {"x": {"type": "string"}}})
            ),
            (
                "form `types :: Approval` requestedSchema".to_string(),
                json!({
                    "description": "Approve the payment?",
                    "type": "object",
                    "properties": {
                        "ok": {"type": "boolean"},
                        "currency": {"type": "string", "enum": ["EUR", "JPY", "USD"], "description": "Pay in"},
                        "contact": {"type": "string", "format": "email"}
                    },
                    "required": ["ok"]
                })
            ),
            (
                "form `types :: NoteValue` requestedSchema".to_string(),
                json!({"type": "object", "properties": {"text": {"type": "string", "maxLength": 100}}, "required": ["text"]})
            ),
        ]
    );
}
