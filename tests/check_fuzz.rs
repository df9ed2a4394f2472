//! Mutated specs, bounded so that the run takes seconds: random JSON edits of every example
//! spec in `specs/` (replaced, deleted, renamed, inserted and copied values; `x-` keys; names
//! the generated code uses or cannot use; values of the wrong type) and corrupted text.
//! `check` never panics, and either accepts a spec or reports at least one error, every
//! diagnostic located: a line >= 1 and a JSON pointer that exists in the input, for its primary
//! and every secondary label. And an `x-` key is accepted exactly where the format closes an
//! object. `MCPGEN_FUZZ_CASES` raises the number of cases of each property for a longer run.

use std::sync::LazyLock;

use mcpgen::check::check_str;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Every example spec, parsed once.
static SEEDS: LazyLock<Vec<Value>> = LazyLock::new(|| {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the example specs: {files:?}");
    files
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
});

fn seeds() -> Vec<Value> {
    SEEDS.clone()
}

/// Cases per property: a few seconds in all by default.
fn cases() -> u32 {
    std::env::var("MCPGEN_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// Interesting replacement values: the vocabulary of specs and schemas, and junk.
fn atom(i: usize) -> Value {
    let atoms = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1.5),
        json!("arg"),
        json!("context"),
        json!("elicit"),
        json!("sample"),
        json!("roots"),
        json!("check_stock"),
        json!("confirm_backorder"),
        json!("nope"),
        json!("_x"),
        json!("#/$defs/Stock"),
        json!("#/$defs/Missing"),
        json!("object"),
        json!("string"),
        json!({"resolver": "check_stock"}),
        json!({"resolver": "estimate_delivery"}),
        json!({"resolver": "confirm_backorder", "outcome": true}),
        json!({"resolver": "suggest_title", "outcome": true}),
        json!({"$ref": "#/$defs/Stock"}),
        json!({"$ref": "#/$defs/Book"}),
        json!({"$ref": "#/nowhere"}),
        json!({"$ref": "#"}),
        json!({"type": "object", "properties": {"a": {"type": "array"}}}),
        json!({"type": "object", "properties": {"n": {"not": {}}}}),
        json!({"if": {}, "then": {}}),
        json!({"type": ["string", "integer"]}),
        json!({"anyOf": [{"type": "string"}, {"$ref": "#/$defs/Backorder"}]}),
        json!({"type": "string", "pattern": "(["}),
        json!({"type": "object", "$defs": {"X": {}}}),
        json!([]),
        json!({}),
        json!("x".repeat(100)),
        json!("ctx"),
        json!("self"),
        json!({"x-note": [1, {"a": null}]}),
        json!({"resolver": "check_stock", "x-why": "audit"}),
        json!(u64::MAX),
        json!("é\u{0}\u{202e}"),
    ];
    atoms[i % atoms.len()].clone()
}

fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => m.iter().for_each(|(k, c)| {
            pointers(
                c,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, c)| pointers(c, format!("{at}/{i}"), out)),
        _ => {}
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    Replace(usize, usize),
    Delete(usize),
    Rename(usize, usize),
    Insert(usize, usize, usize),
    Copy(usize, usize),
}

/// Parent pointer and last key of `p` (the root has neither: `None`).
fn split(p: &str) -> Option<(String, String)> {
    let i = p.rfind('/')?;
    Some((
        p[..i].to_string(),
        p[i + 1..].replace("~1", "/").replace("~0", "~"),
    ))
}

fn apply(v: &mut Value, m: &Mutation) {
    let mut ps = Vec::new();
    pointers(v, String::new(), &mut ps);
    let pick = |i: usize| ps[i % ps.len()].clone();
    let keys = [
        "description",
        "resolver",
        "params",
        "returns",
        "asks",
        "resolve",
        "input",
        "output",
        "type",
        "properties",
        "required",
        "outcome",
        "$ref",
        "x-note",
        "x-",
        "zzz",
        "ctx",
        "args",
        "self",
        "Self",
        "crate",
        "state",
        "round",
        "1st",
        "_x",
        "-",
        "",
        "é",
        "a/b~c",
        "messages",
        "arguments",
        "resources",
        "name",
        "text",
        "exemptFromPathChecks",
    ];
    match *m {
        Mutation::Replace(p, a) => {
            if let Some(t) = v.pointer_mut(&pick(p)) {
                *t = atom(a);
            }
        }
        Mutation::Delete(p) => {
            let Some((parent, key)) = split(&pick(p)) else {
                return;
            };
            match v.pointer_mut(&parent) {
                Some(Value::Object(m)) => {
                    m.shift_remove(&key);
                }
                Some(Value::Array(a)) => {
                    if let Ok(i) = key.parse::<usize>()
                        && i < a.len()
                    {
                        a.remove(i);
                    }
                }
                _ => {}
            }
        }
        Mutation::Rename(p, k) => {
            let Some((parent, key)) = split(&pick(p)) else {
                return;
            };
            if let Some(Value::Object(m)) = v.pointer_mut(&parent)
                && let Some(val) = m.shift_remove(&key)
            {
                m.insert(
                    format!(
                        "{}{}",
                        keys[k % keys.len()],
                        if k % 3 == 0 { "" } else { "_" }
                    ),
                    val,
                );
            }
        }
        Mutation::Insert(p, k, a) => {
            if let Some(Value::Object(m)) = v.pointer_mut(&pick(p)) {
                m.insert(keys[k % keys.len()].to_string(), atom(a));
            }
        }
        Mutation::Copy(from, to) => {
            let src = v.pointer(&pick(from)).cloned();
            if let (Some(src), Some(t)) = (src, v.pointer_mut(&pick(to))) {
                *t = src;
            }
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(p, a)| Mutation::Replace(p, a)),
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), any::<usize>()).prop_map(|(p, k)| Mutation::Rename(p, k)),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(p, k, a)| Mutation::Insert(p, k, a)),
        (any::<usize>(), any::<usize>()).prop_map(|(f, t)| Mutation::Copy(f, t)),
    ]
}

/// True when `pointer` names a value of `v` (the text's own JSON).
fn exists(v: Option<&Value>, pointer: &str) -> bool {
    match v {
        Some(v) => v.pointer(pointer).is_some(),
        // Text that is not JSON is reported at the document root.
        None => pointer.is_empty(),
    }
}

/// Checks `text` and asserts the property.
fn assert_accepts_or_locates(text: &str) {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    match check_str("fuzz.json", text) {
        Ok(checked) => assert!(!checked.report.has_errors()),
        Err(report) => {
            assert!(report.has_errors(), "a rejected spec has an error");
            for d in &report.diagnostics {
                let span = d
                    .span
                    .clone()
                    .unwrap_or_else(|| panic!("unlocated: {d:?}\n{text}"));
                assert!(
                    span.start <= span.end && span.end <= text.len(),
                    "span out of the text: {d:?}"
                );
                let pointer = d
                    .pointer
                    .as_ref()
                    .unwrap_or_else(|| panic!("no pointer: {d:?}"));
                assert!(
                    exists(parsed.as_ref(), pointer.as_str()),
                    "the pointer of {d:?} is not in the input\n{text}"
                );
                assert!(
                    report
                        .line_col(d)
                        .is_some_and(|lc| lc.line >= 1 && lc.column >= 1)
                );
                assert!(!d.message.is_empty());
                for l in &d.secondary {
                    assert!(
                        l.span.start <= l.span.end && l.span.end <= text.len(),
                        "{d:?}"
                    );
                    assert!(
                        exists(parsed.as_ref(), l.pointer.as_str()),
                        "the secondary label {l:?} of {d:?} is not in the input\n{text}"
                    );
                }
                // Both renderings succeed and name the place.
                assert!(report.render_human().contains(&d.message));
            }
            let json: Value = serde_json::from_str(&report.render_json()).unwrap();
            assert_eq!(json.as_array().unwrap().len(), report.diagnostics.len());
        }
    }
}

/// The error codes of checking `text`, with their pointers.
fn findings(text: &str) -> Result<(), Vec<(String, String)>> {
    check_str("fuzz.json", text).map(|_| ()).map_err(|r| {
        r.diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| {
                (
                    d.code.to_string(),
                    d.pointer
                        .as_ref()
                        .map(|p| p.as_str().to_string())
                        .unwrap_or_default(),
                )
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_specs_are_accepted_or_rejected_with_located_errors(
        seed in 0usize..5,
        mutations in proptest::collection::vec(mutation(), 1..6),
        pretty in any::<bool>(),
    ) {
        let mut v = seeds().swap_remove(seed);
        for m in &mutations {
            apply(&mut v, m);
        }
        let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
        assert_accepts_or_locates(&text);
    }

    #[test]
    fn corrupted_text_never_panics(
        seed in 0usize..5,
        edits in proptest::collection::vec((any::<usize>(), prop_oneof![Just(""), Just("{"), Just("}"), Just("\""), Just(","), Just("\\"), Just("é"), Just("\n"), Just("[1,"), Just("null")]), 1..4),
    ) {
        let mut text = serde_json::to_string_pretty(&seeds().swap_remove(seed)).unwrap();
        for (at, insert) in edits {
            let mut i = at % (text.len() + 1);
            while !text.is_char_boundary(i) { i -= 1; }
            if insert.is_empty() {
                // delete one character
                if let Some(c) = text[i..].chars().next() { text.replace_range(i..i + c.len_utf8(), ""); }
            } else {
                text.insert_str(i, insert);
            }
        }
        assert_accepts_or_locates(&text);
    }

    /// Where an unknown key is an `unknown-key` error (an object of the format), an `x-` key
    /// is kept and ignored: the example spec stays valid, whatever the value.
    #[test]
    fn x_keys_are_accepted_exactly_where_the_format_closes_an_object(
        seed in 0usize..5,
        at in any::<usize>(),
        value in any::<usize>(),
    ) {
        let base = seeds().swap_remove(seed);
        let mut ps = Vec::new();
        pointers(&base, String::new(), &mut ps);
        let objects: Vec<&String> = ps.iter().filter(|p| base.pointer(p).is_some_and(Value::is_object)).collect();
        let p = objects[at % objects.len()].clone();
        let with = |key: &str| {
            let mut v = base.clone();
            v.pointer_mut(&p).unwrap().as_object_mut().unwrap().insert(key.into(), atom(value));
            v.to_string()
        };
        let unknown = findings(&with("zzz_unknown"));
        let closed = matches!(&unknown, Err(f) if f.iter().any(|(c, at)| c == "unknown-key" && *at == format!("{p}/zzz_unknown")));
        if closed {
            prop_assert_eq!(findings(&with("x-fuzz")), Ok(()), "x- key at {}", p);
        } else {
            assert_accepts_or_locates(&with("x-fuzz"));
        }
    }
}

#[test]
fn huge_and_deep_specs_end_in_a_result() {
    // 2,000 tools with a shared resolver chain.
    let mut tools = Map::new();
    for i in 0..2000 {
        tools.insert(
            format!("tool_{i}"),
            json!({"description": "d", "input": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}, "resolve": {"v": "r9"}}),
        );
    }
    let mut resolvers = Map::new();
    resolvers.insert(
        "r0".into(),
        json!({"params": {"q": "arg"}, "returns": {"type": "string"}}),
    );
    for i in 1..10 {
        resolvers.insert(format!("r{i}"), json!({"params": {"prev": {"resolver": format!("r{}", i - 1)}}, "returns": {"type": "string"}}));
    }
    let spec = json!({"name": "Huge", "resolvers": resolvers, "tools": tools});
    let checked = check_str("huge.json", &spec.to_string()).expect("valid");
    let model = &checked.model;
    assert_eq!(model.tools.len(), 2000);
    assert_eq!(
        model.tools[0]
            .chain
            .run_order
            .iter()
            .map(|r| model[*r].name.clone())
            .collect::<Vec<_>>(),
        (0..10).map(|i| format!("r{i}")).collect::<Vec<_>>()
    );

    // Nesting beyond the parser's limit is a located error, not a crash.
    let deep = format!(
        "{{\"name\": \"D\", \"tools\": {{\"t\": {{\"description\": \"d\", \"input\": {}{}}}}}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let report = check_str("deep.json", &deep).err().expect("rejected");
    assert_eq!(
        report.diagnostics[0].message,
        "invalid JSON: recursion limit exceeded"
    );
    assert_eq!(report.line_col(&report.diagnostics[0]).unwrap().line, 1);
}

/// Every object of the small example specs, not a sample: an `x-` key is accepted wherever an
/// unknown key is an `unknown-key` error, and at least the objects of the format are found so.
#[test]
fn x_keys_on_every_closed_object_of_the_small_examples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (file, expected_closed) in [
        ("specs/bookshop.json", 11),
        ("specs/bistro.json", 4),
        ("specs/files.json", 6),
    ] {
        let base: Value =
            serde_json::from_str(&std::fs::read_to_string(root.join(file)).unwrap()).unwrap();
        let mut ps = Vec::new();
        pointers(&base, String::new(), &mut ps);
        let mut closed = 0;
        for p in ps
            .iter()
            .filter(|p| base.pointer(p).is_some_and(Value::is_object))
        {
            let with = |key: &str| {
                let mut v = base.clone();
                v.pointer_mut(p)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .insert(key.into(), json!({"any": ["value"]}));
                v.to_string()
            };
            let unknown = findings(&with("zzz_unknown"));
            if matches!(&unknown, Err(f) if f.iter().any(|(c, at)| c == "unknown-key" && *at == format!("{p}/zzz_unknown")))
            {
                closed += 1;
                assert_eq!(findings(&with("x-fuzz")), Ok(()), "{file}: x- key at {p}");
            }
        }
        assert_eq!(closed, expected_closed, "{file}");
    }
}
