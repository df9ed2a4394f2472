//! Thousands of mutated specs: `check` never panics, and either accepts a spec or reports at
//! least one error, every one of them located (a JSON pointer and a line:column in the file).

use mcpgen::check::check_str;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn seeds() -> Vec<Value> {
    let root = env!("CARGO_MANIFEST_DIR");
    [
        "specs/bookshop.json",
        "specs/files.json",
        "specs/bistro.json",
        "specs/conformance.json",
    ]
    .iter()
    .map(|p| {
        serde_json::from_str(&std::fs::read_to_string(format!("{root}/{p}")).unwrap()).unwrap()
    })
    .collect()
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
        "zzz",
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

/// Checks `text` and asserts the property.
fn assert_accepts_or_locates(text: &str) {
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
                assert!(d.pointer.is_some(), "no pointer: {d:?}");
                assert!(report.line_col(d).is_some());
                assert!(!d.message.is_empty());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_specs_are_accepted_or_rejected_with_located_errors(
        seed in 0usize..3,
        mutations in proptest::collection::vec(mutation(), 1..5),
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
        seed in 0usize..3,
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
    assert_eq!(checked.plan.tools.len(), 2000);
    assert_eq!(
        checked.plan.tools[0].run_order,
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
