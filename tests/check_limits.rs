//! The spec's limits (`limits`, a tool's `timeoutMs` and `maxConcurrency`), with exact
//! expectations (code, message, line:column, JSON pointer, help, subjects, the second place
//! where there is one): values below 1, counts and times out of range, a request body limit
//! below 1024 bytes, a tool allowed more calls at once than the server; what a valid spec's
//! model holds; and the `OPERATIONS` table the generated module gets.

use mcpgen::check::check_str;
use mcpgen::diagnostics::{Severity, Subject};
use mcpgen::emit::module::generated_module;
use serde_json::json;

#[derive(Debug, Clone, PartialEq)]
struct Found {
    severity: Severity,
    code: &'static str,
    message: String,
    line: usize,
    column: usize,
    pointer: String,
    help: Option<String>,
    subjects: Vec<Subject>,
    /// The other places: (line, column, pointer, label).
    secondary: Vec<(usize, usize, String, String)>,
}

/// Every diagnostic of checking `text`, in file order.
fn found(text: &str) -> Vec<Found> {
    let report = match check_str("spec.json", text) {
        Ok(c) => c.report,
        Err(r) => r,
    };
    let source = report.source.clone().expect("a spec file");
    (report.diagnostics.iter())
        .map(|d| {
            let lc = report.line_col(d).expect("every diagnostic is located");
            Found {
                severity: d.severity,
                code: d.code.as_str(),
                message: d.message.clone(),
                line: lc.line,
                column: lc.column,
                pointer: d.pointer.as_ref().expect("a pointer").as_str().to_string(),
                help: d.help.clone(),
                subjects: d.subjects.clone(),
                secondary: (d.secondary.iter())
                    .map(|r| {
                        let lc = source.line_col(r.span.start);
                        (
                            lc.line,
                            lc.column,
                            r.pointer.as_str().to_string(),
                            r.message.clone(),
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Line and column (1-based) of the first occurrence of `needle`.
fn at(text: &str, needle: &str) -> (usize, usize) {
    let offset = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in spec"));
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line, column)
}

const SERVER_DEFAULT: &str = "leave the key out for the default (or the flag's value)";
const TOOL_DEFAULT: &str = "leave the key out for the server-wide limit (`limits`, or the flag's)";

/// An error at the value `value_text` (the first occurrence), about `subjects`.
fn error(
    text: &str,
    code: &'static str,
    message: &str,
    value_text: &str,
    pointer: &str,
    help: &str,
    subjects: Vec<Subject>,
) -> Found {
    let (line, column) = at(text, value_text);
    Found {
        severity: Severity::Error,
        code,
        message: message.to_string(),
        line,
        column,
        pointer: pointer.to_string(),
        help: Some(help.to_string()),
        subjects,
        secondary: vec![],
    }
}

#[test]
fn limits_below_one_are_located_at_their_values() {
    let text = r#"{
  "name": "Limited",
  "limits": {"timeoutMs": 0, "maxConcurrency": -3, "maxSessions": 0, "sessionIdleTimeoutMs": -1},
  "tools": {
    "nap": {"description": "Nap.", "timeoutMs": -400, "maxConcurrency": 0}
  }
}
"#;
    let nap = || vec![Subject::Tool("nap".into())];
    assert_eq!(
        found(text),
        vec![
            error(
                text,
                "limit-not-positive",
                "`limits.timeoutMs` is 0; a limit is an integer of at least 1",
                "0,",
                "/limits/timeoutMs",
                SERVER_DEFAULT,
                vec![],
            ),
            error(
                text,
                "limit-not-positive",
                "`limits.maxConcurrency` is -3; a limit is an integer of at least 1",
                "-3",
                "/limits/maxConcurrency",
                SERVER_DEFAULT,
                vec![],
            ),
            error(
                text,
                "limit-not-positive",
                "`limits.maxSessions` is 0; a limit is an integer of at least 1",
                "0, \"sessionIdle",
                "/limits/maxSessions",
                SERVER_DEFAULT,
                vec![],
            ),
            error(
                text,
                "limit-not-positive",
                "`limits.sessionIdleTimeoutMs` is -1; a limit is an integer of at least 1",
                "-1}",
                "/limits/sessionIdleTimeoutMs",
                SERVER_DEFAULT,
                vec![],
            ),
            error(
                text,
                "limit-not-positive",
                "`timeoutMs` of tool `nap` is -400; a limit is an integer of at least 1",
                "-400",
                "/tools/nap/timeoutMs",
                TOOL_DEFAULT,
                nap(),
            ),
            error(
                text,
                "limit-not-positive",
                "`maxConcurrency` of tool `nap` is 0; a limit is an integer of at least 1",
                "0}",
                "/tools/nap/maxConcurrency",
                TOOL_DEFAULT,
                nap(),
            ),
        ]
    );
}

#[test]
fn counts_times_and_body_sizes_out_of_range() {
    let text = r#"{
  "name": "Limited",
  "limits": {"maxRequestBytes": 1023, "maxSessions": 4294967296, "sessionIdleTimeoutMs": 31536000001},
  "tools": {
    "nap": {"description": "Nap.", "timeoutMs": 31536000000, "maxConcurrency": 4294967295}
  }
}
"#;
    assert_eq!(
        found(text),
        vec![
            error(
                text,
                "limit-too-small",
                "`limits.maxRequestBytes` is 1023; the largest request body must be at least 1024 bytes, or ordinary requests are refused",
                "1023",
                "/limits/maxRequestBytes",
                "write at least 1024 (the default is 4194304, 4 MiB)",
                vec![],
            ),
            error(
                text,
                "limit-too-large",
                "`limits.maxSessions` is 4294967296; a count is at most 4294967295",
                "4294967296",
                "/limits/maxSessions",
                SERVER_DEFAULT,
                vec![],
            ),
            error(
                text,
                "limit-too-large",
                "`limits.sessionIdleTimeoutMs` is 31536000001; a time is at most 365 days (31536000000 ms)",
                "31536000001",
                "/limits/sessionIdleTimeoutMs",
                SERVER_DEFAULT,
                vec![],
            ),
        ],
        "the largest time and count themselves are valid"
    );
    // 1024 bytes is the least body limit.
    let smallest = text
        .replace("1023", "1024")
        .replace("4294967296", "1")
        .replace("31536000001", "1");
    assert_eq!(found(&smallest), vec![]);
}

#[test]
fn an_integer_beyond_i64_is_located_and_a_fraction_is_a_wrong_type() {
    let text = r#"{
  "name": "Limited",
  "limits": {"timeoutMs": 99999999999999999999},
  "tools": {"nap": {"description": "Nap.", "maxConcurrency": 1.5}}
}
"#;
    let found = found(text);
    let short: Vec<(&str, String, (usize, usize), String)> = found
        .iter()
        .map(|f| {
            (
                f.code,
                f.message.clone(),
                (f.line, f.column),
                f.pointer.clone(),
            )
        })
        .collect();
    assert_eq!(
        short,
        vec![
            (
                "invalid-value",
                "invalid value for `/limits/timeoutMs`: 1e+20 is greater than the maximum of 9223372036854775807".to_string(),
                at(text, "99999"),
                "/limits/timeoutMs".to_string(),
            ),
            (
                "wrong-type",
                "wrong value type for `maxConcurrency` of tool `nap`: expected an integer, found a number".to_string(),
                at(text, "1.5"),
                "/tools/nap/maxConcurrency".to_string(),
            ),
        ]
    );
}

/// `1e3` and `1000.0` are integers to JSON Schema but not to the decoder: the one error is at
/// the value, with the way to write it (found trying specs from other tools, which write
/// integral floats).
#[test]
fn an_integer_written_as_a_float_is_located_at_its_value() {
    let text = r#"{
  "name": "Limited",
  "limits": {"maxConcurrency": 8},
  "tools": {"nap": {"description": "Nap.", "timeoutMs": 1e3}}
}
"#;
    assert_eq!(
        found(text),
        vec![error(
            text,
            "invalid-spec",
            "`timeoutMs` of tool `nap` does not decode: invalid type: floating point `1000.0`, expected i64",
            "1e3",
            "/tools/nap/timeoutMs",
            "write a whole number without a decimal point or an exponent",
            vec![Subject::Tool("nap".into())],
        )]
    );
    let text = text
        .replace("\"timeoutMs\": 1e3", "\"timeoutMs\": 500")
        .replace(": 8}", ": 8.0}");
    let found = found(&text);
    assert_eq!(
        (
            found.len(),
            found[0].pointer.as_str(),
            found[0].message.as_str(),
            (found[0].line, found[0].column)
        ),
        (
            1,
            "/limits/maxConcurrency",
            "`/limits/maxConcurrency` does not decode: invalid type: floating point `8.0`, expected i64",
            at(&text, "8.0")
        )
    );
}

#[test]
fn a_tool_allowed_more_calls_than_the_server_is_a_warning() {
    let text = r#"{
  "name": "Limited",
  "limits": {"maxConcurrency": 4},
  "tools": {
    "nap": {"description": "Nap.", "maxConcurrency": 8},
    "work": {"description": "Work.", "maxConcurrency": 4}
  }
}
"#;
    let checked = check_str("spec.json", text).unwrap_or_else(|r| panic!("{}", r.render_human()));
    assert!(!checked.report.has_errors());
    let (line, column) = at(text, "8}");
    let (limit_line, limit_column) = at(text, "4}");
    assert_eq!(
        found(text),
        vec![Found {
            severity: Severity::Warning,
            code: "tool-concurrency-above-server",
            message: "tool `nap` allows 8 calls at once, more than the 4 the whole server runs (`limits.maxConcurrency`), which binds first".into(),
            line,
            column,
            pointer: "/tools/nap/maxConcurrency".into(),
            help: Some("lower the tool's `maxConcurrency` to 4 or less, or raise `limits.maxConcurrency`".into()),
            subjects: vec![Subject::Tool("nap".into())],
            secondary: vec![(
                limit_line,
                limit_column,
                "/limits/maxConcurrency".into(),
                "the server's limit".into()
            )],
        }]
    );
    // Without a server-wide limit, any tool limit stands alone.
    let alone = text.replace(r#""limits": {"maxConcurrency": 4},"#, "");
    assert_eq!(found(&alone), vec![]);
}

#[test]
fn limits_are_unknown_keys_elsewhere() {
    let text = r#"{
  "name": "Limited",
  "limits": {"timeout": 5},
  "tools": {}
}
"#;
    let found = found(text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].code, "unknown-key");
    assert_eq!(found[0].pointer, "/limits/timeout");
}

const ALL: &str = r#"{
  "name": "Limited",
  "limits": {"timeoutMs": 30000, "maxConcurrency": 64, "maxRequestBytes": 4194304, "maxSessions": 3500, "sessionIdleTimeoutMs": 1800000},
  "tools": {
    "nap": {"description": "Nap.", "timeoutMs": 400, "maxConcurrency": 2},
    "work": {"description": "Work."}
  },
  "prompts": {"hello": {"description": "Hello.", "messages": [{"role": "user", "text": "hi"}]}}
}
"#;

#[test]
fn the_model_holds_the_limits() {
    let checked = check_str("spec.json", ALL).unwrap_or_else(|r| panic!("{}", r.render_human()));
    let plan = checked.model.to_json();
    assert_eq!(
        plan["limits"],
        json!({"timeout_ms": 30000, "max_concurrency": 64, "max_request_bytes": 4194304,
               "max_sessions": 3500, "session_idle_timeout_ms": 1800000})
    );
    assert_eq!(plan["tools"][0]["timeout_ms"], json!(400));
    assert_eq!(plan["tools"][0]["max_concurrency"], json!(2));
    // Absent limits are not in the plan at all.
    assert_eq!(plan["tools"][1].get("timeout_ms"), None);
    assert_eq!(plan["tools"][1].get("max_concurrency"), None);
    let none = check_str("spec.json", r#"{"name": "Plain", "tools": {}}"#).unwrap();
    assert_eq!(none.model.to_json().get("limits"), None);
}

/// The `static OPERATIONS` item of a generated module, from its doc to its `};`.
fn operations_item(module: &str) -> String {
    let start = module
        .find("/// The spec's limits")
        .expect("the module has OPERATIONS");
    let end = start + module[start..].find("\n};\n").expect("the item ends") + 4;
    module[start..end].to_string()
}

const DOC: &str =
    "/// The spec's limits (`limits`, each tool's `timeoutMs` and `maxConcurrency`) and the
/// names of its tools and prompts: the runtime's timeouts and concurrency gates come
/// from it (the command line's flags override the server-wide values, never a tool's),
/// and spans and metrics name only what it lists.
";

#[test]
fn every_limit_set_leaves_nothing_to_operations_none() {
    let checked = check_str("spec.json", ALL).unwrap();
    let module = generated_module(&checked.model, &checked.types).unwrap();
    assert_eq!(
        operations_item(&module),
        format!(
            "{DOC}static OPERATIONS: runtime::Operations = runtime::Operations {{
    timeout_ms: Some(30000),
    max_concurrency: Some(64),
    max_request_bytes: Some(4194304),
    max_sessions: Some(3500),
    session_idle_timeout_ms: Some(1800000),
    tools: &[
        runtime::ToolOperations {{
            name: \"nap\",
            timeout_ms: Some(400),
            max_concurrency: Some(2),
        }},
        runtime::ToolOperations {{
            name: \"work\",
            timeout_ms: None,
            max_concurrency: None,
        }},
    ],
    prompts: &[\"hello\"],
}};
"
        )
    );
    assert!(module.contains(
        "    fn operations() -> &'static runtime::Operations {\n        &OPERATIONS\n    }\n"
    ));
}

#[test]
fn a_spec_without_limits_still_names_its_tools() {
    let checked = check_str(
        "spec.json",
        r#"{"name": "Plain", "tools": {"ping": {"description": "Ping."}}}"#,
    )
    .unwrap();
    let module = generated_module(&checked.model, &checked.types).unwrap();
    assert_eq!(
        operations_item(&module),
        format!(
            "{DOC}static OPERATIONS: runtime::Operations = runtime::Operations {{
    tools: &[
        runtime::ToolOperations {{
            name: \"ping\",
            timeout_ms: None,
            max_concurrency: None,
        }},
    ],
    prompts: &[],
    ..runtime::Operations::NONE
}};
"
        )
    );
}
