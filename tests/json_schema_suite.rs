//! The JSON Schema Test Suite's draft 2020-12 cases (`tests/json-schema-suite/draft2020-12/`,
//! vendored, see its README) against generated servers: each case's schema is the value `v` of
//! a tool's input, `{"type": "object", "properties": {"v": <schema>}, "required": ["v"]}` (the
//! schema's own `$schema`, `$id` and `$defs` moved to the input's root, where the spec format takes them, and a
//! reference to the schema itself, `#`, made a reference to a copy of it there), and each test's
//! data the call `{"v": <data>}`.
//!
//! `mcpgen check` refuses exactly the cases of `refused.txt` (with the diagnostic code of each);
//! the others are tools of ONE generated crate, built once (clippy-clean) in the suite's shared
//! target directory, started over stdio and called with every test's data. Data the suite calls
//! valid must reach the (stub) tool: it passed validation and converted into the typed
//! arguments ("the arguments are valid but could not be converted" is a false rejection by the
//! types). Data it calls invalid must be refused. The false rejections and false acceptances
//! that remain are exactly those `docs/spec.md` lists under "JSON Schema Test Suite".

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::{Map, Value, json};

use common::{Lints, StdioSession, root};

/// One schema of the suite: its file (stem), its index there, the tool name.
struct Case {
    file: String,
    index: usize,
    tool: String,
    description: String,
    schema: Value,
    tests: Vec<(String, Value, bool)>,
}

/// The `.json` files under `dir`, its subdirectories' too, as paths relative to it.
fn json_files(dir: &Path, rel: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir.join(rel)).unwrap() {
        let e = e.unwrap();
        let rel = rel.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            json_files(dir, &rel, out);
        } else if rel.extension().is_some_and(|x| x == "json") {
            out.push(rel);
        }
    }
}

fn cases() -> Vec<Case> {
    let dir = root().join("tests/json-schema-suite/draft2020-12");
    let mut files = Vec::new();
    json_files(&dir, Path::new(""), &mut files);
    files.sort();
    let mut out = Vec::new();
    for rel in files {
        let path = dir.join(&rel);
        // `optional/format/date-time`: named in the lists as `optional/format/date-time.json`.
        let stem = rel.with_extension("").to_string_lossy().into_owned();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for (index, g) in groups.into_iter().enumerate() {
            let tests = g["tests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["description"].as_str().unwrap().to_string(),
                        t["data"].clone(),
                        t["valid"].as_bool().unwrap(),
                    )
                })
                .collect();
            out.push(Case {
                tool: format!("{}_{index}", stem.replace(['-', '/'], "_")),
                file: stem.clone(),
                index,
                description: g["description"].as_str().unwrap().to_string(),
                schema: g["schema"].clone(),
                tests,
            });
        }
    }
    out
}

/// True when `v` holds a `$ref` to the root of its document (`#`).
fn refers_to_root(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, c)| {
            (k == "$ref" && c.as_str() == Some("#"))
                || (k != "const"
                    && k != "enum"
                    && k != "default"
                    && k != "examples"
                    && refers_to_root(c))
        }),
        Value::Array(a) => a.iter().any(refers_to_root),
        _ => false,
    }
}

fn rewrite_root_refs(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, c) in m.iter_mut() {
                if k == "$ref" && c.as_str() == Some("#") {
                    *c = "#/$defs/SuiteRoot".into();
                } else if !["const", "enum", "default", "examples"].contains(&k.as_str()) {
                    rewrite_root_refs(c);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(rewrite_root_refs),
        _ => {}
    }
}

/// The tool input for a case's schema.
fn input(schema: &Value) -> Value {
    let mut s = schema.clone();
    let mut defs = Map::new();
    let mut id = None;
    let mut schema_uri = None;
    if let Value::Object(m) = &mut s {
        schema_uri = m.remove("$schema");
        id = m.remove("$id");
        if let Some(Value::Object(own)) = m.remove("$defs") {
            defs = own;
        }
    }
    let v = if refers_to_root(&s) {
        rewrite_root_refs(&mut s);
        for d in defs.values_mut() {
            rewrite_root_refs(d);
        }
        defs.insert("SuiteRoot".into(), s);
        json!({"$ref": "#/$defs/SuiteRoot"})
    } else {
        s
    };
    let mut input = json!({"type": "object", "properties": {"v": v}, "required": ["v"]});
    if !defs.is_empty() {
        input["$defs"] = Value::Object(defs);
    }
    if let Some(uri) = schema_uri {
        input["$schema"] = uri;
    }
    if let Some(id) = id {
        // The base URI of the references, with the `$defs` they point into.
        input["$id"] = id;
    }
    input
}

fn spec(tools: &[(&Case, Value)]) -> Value {
    let tools: Map<String, Value> = tools
        .iter()
        .map(|(c, input)| {
            (
                c.tool.clone(),
                json!({"description": format!("JSON Schema Test Suite, {}.json #{}.", c.file, c.index), "input": input}),
            )
        })
        .collect();
    json!({"name": "Suite", "version": "1.0.0", "tools": tools})
}

/// The codes of `mcpgen check`'s errors for `spec`, empty when it passes.
fn check(spec: &Path) -> Vec<String> {
    let (code, found) = common::check_json(Path::new(env!("CARGO_BIN_EXE_mcpgen")), spec);
    let mut codes: Vec<String> = found
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes.is_empty(), code == 0, "{}", spec.display());
    codes
}

/// The lines of `docs/spec.md`'s list of the suite's remaining disagreements: each
/// `` - `<file>.json` #<case> "<test>": <what> `` item between the two marker comments, as
/// `<file>.json #<case> "<test>": <what>` (what: `false rejection` or `false acceptance`,
/// then ` (<why>)`).
fn documented() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(root().join("docs/spec.md")).unwrap();
    let start = doc
        .find("<!-- json-schema-suite:begin -->")
        .expect("docs/spec.md: no json-schema-suite list");
    let end = doc.find("<!-- json-schema-suite:end -->").unwrap();
    doc[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| {
            let l = l.replacen('`', "", 2);
            l.split(" (").next().unwrap().to_string()
        })
        .collect()
}

#[test]
fn json_schema_test_suite_cases_reach_the_tool_exactly_when_valid() {
    let all = cases();
    let ws = root().join("target/json-schema-suite");
    let _ = std::fs::remove_dir_all(&ws);
    std::fs::create_dir_all(ws.join("specs")).unwrap();

    // What `check` refuses, case by case (on every core: about 10 s on one).
    let inputs: Vec<Value> = all.iter().map(|c| input(&c.schema)).collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = all.len().div_ceil(threads);
    let verdicts: Vec<Vec<String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = all
            .chunks(chunk)
            .zip(inputs.chunks(chunk))
            .map(|(cases, inputs)| {
                let ws = &ws;
                scope.spawn(move || {
                    cases
                        .iter()
                        .zip(inputs)
                        .map(|(case, input)| {
                            let path = ws.join("specs").join(format!("{}.json", case.tool));
                            let text = spec(&[(case, input.clone())]).to_string();
                            std::fs::write(&path, text).unwrap();
                            check(&path)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let mut refused = Vec::new();
    let mut passing = Vec::new();
    for ((case, input), codes) in all.iter().zip(inputs).zip(verdicts) {
        if codes.is_empty() {
            passing.push((case, input));
        } else {
            refused.push(format!(
                "{}.json #{} {}: {}",
                case.file,
                case.index,
                codes.join(" "),
                case.description.trim()
            ));
        }
    }
    let want: Vec<String> =
        std::fs::read_to_string(root().join("tests/json-schema-suite/refused.txt"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(str::to_string)
            .collect();
    // (What was found, for comparing and copying.)
    std::fs::write(ws.join("refused.txt"), refused.join("\n") + "\n").unwrap();
    assert_eq!(
        refused.join("\n"),
        want.join("\n"),
        "the cases `mcpgen check` refuses (tests/json-schema-suite/refused.txt; found: {})",
        ws.join("refused.txt").display()
    );

    // One crate of every case check passes, one build.
    let spec_path = ws.join("suite.json");
    std::fs::write(
        &spec_path,
        serde_json::to_string_pretty(&spec(&passing)).unwrap(),
    )
    .unwrap();
    assert_eq!(check(&spec_path), Vec::<String>::new());
    common::workspace(&ws, &["suite-cases"]);
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(["new", "suite-cases", "--spec"])
        .arg(&spec_path)
        .arg("--dir")
        .arg(ws.join("suite-cases"))
        .arg("--runtime-path")
        .arg(root().join("runtime"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::cargo(
        &ws,
        &["build", "--workspace", "--lib", "--bins"],
        Lints::Clippy,
    );
    assert!(
        out.status.success(),
        "the suite's crate does not build clippy-clean:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut session = StdioSession::start("suite", &common::target_dir().join("debug/suite-cases"));
    let (mut calls, mut reached, mut refusals) = (0, 0, 0);
    let mut found = BTreeSet::new();
    for (case, _) in &passing {
        for (test, data, valid) in &case.tests {
            calls += 1;
            let response = session.request(
                "tools/call",
                json!({"name": case.tool, "arguments": {"v": data}}),
            );
            let result = &response["result"];
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            let stub = format!(
                "Error executing tool {0}: '{0}' is not implemented yet (write it in src/handlers.rs)",
                case.tool
            );
            let got_through = text == stub;
            let unconverted = text.contains("could not be converted");
            assert!(
                got_through || (result["isError"] == json!(true) && !text.is_empty()),
                "{} #{} {test:?}: {response}",
                case.file,
                case.index
            );
            if got_through {
                reached += 1;
            } else {
                refusals += 1;
            }
            let what = match (valid, got_through, unconverted) {
                (true, false, true) => Some("false rejection, not converted"),
                (true, false, false) => Some("false rejection"),
                (false, true, _) => Some("false acceptance"),
                (false, false, true) => Some("false acceptance, not converted"),
                _ => None,
            };
            if let Some(what) = what {
                found.insert(format!(
                    "{}.json #{} {test:?}: {what}",
                    case.file, case.index
                ));
            }
        }
    }
    eprintln!(
        "json-schema-suite: {} schemas ({} refused by check), {calls} calls of {} tools: {reached} reached the tool, {refusals} refused; {} disagreements with the suite",
        all.len(),
        refused.len(),
        passing.len(),
        found.len()
    );
    std::fs::write(
        ws.join("disagreements.txt"),
        found.iter().map(|s| format!("{s}\n")).collect::<String>(),
    )
    .unwrap();
    let documented = documented();
    let undocumented: Vec<&String> = found.difference(&documented).collect();
    let gone: Vec<&String> = documented.difference(&found).collect();
    assert!(
        undocumented.is_empty() && gone.is_empty(),
        "not listed in docs/spec.md:\n{}\nlisted but not found:\n{}",
        undocumented
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        gone.iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
