//! Unit tests of the parts of the runtime that need no connection.

use rmcp::model::{CallToolResponse, CallToolResult};
use serde::Deserialize;
use serde_json::json;

use crate::{Catalog, Outcome, ToolDef, ToolError, wrapped_output};

const DEFS: &[ToolDef] = &[ToolDef {
    name: "t",
    title: None,
    description: "A test tool.",
    annotations: None,
    input_schema: r#"{"type":"object","properties":{"n":{"type":"integer","maximum":5}},"required":["n"],"additionalProperties":false}"#,
    output_schema: Some(
        r#"{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]}"#,
    ),
    resolved: &["hidden"],
}];

/// [`DEFS`] with tool `t` returning a string.
const STRING_DEFS: &[ToolDef] = &[ToolDef {
    output_schema: Some(
        r#"{"type":"object","properties":{"result":{"type":"string"}},"required":["result"]}"#,
    ),
    ..DEFS[0]
}];

/// A tool taking one string of each asserted format, returning content blocks.
const FORMATS: &[ToolDef] = &[ToolDef {
    name: "f",
    title: None,
    description: "Formats.",
    annotations: None,
    input_schema: r#"{"type":"object","properties":{"email":{"type":"string","format":"email"},"idn-email":{"type":"string","format":"idn-email"},"uri":{"type":"string","format":"uri"},"uri-reference":{"type":"string","format":"uri-reference"},"uuid":{"type":"string","format":"uuid"},"date":{"type":"string","format":"date"},"time":{"type":"string","format":"time"},"date-time":{"type":"string","format":"date-time"},"duration":{"type":"string","format":"duration"},"ipv4":{"type":"string","format":"ipv4"},"ipv6":{"type":"string","format":"ipv6"},"hostname":{"type":"string","format":"hostname"},"regex":{"type":"string","format":"regex"}}}"#,
    output_schema: None,
    resolved: &[],
}];

#[derive(Deserialize)]
struct Args {
    n: i64,
}

fn complete(response: CallToolResponse) -> CallToolResult {
    match response {
        CallToolResponse::Complete(result) => result,
        other => panic!("not a complete result: {other:?}"),
    }
}

fn text(result: &CallToolResult) -> String {
    result.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(future)
}

#[test]
fn a_panicking_tool_is_reported_and_contained() {
    let catalog = Catalog::new(DEFS);
    let response =
        block_on(
            catalog.run("t", json!({"n": 1}).as_object().cloned(), |_: Args| async {
                if true {
                    panic!("boom");
                }
                wrapped_output(&1)
            }),
        )
        .expect("a panic is a tool result, not a protocol error");
    let result = complete(response);
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text(&result), "Error executing tool t");
    // The catalog still serves after the panic.
    let response = block_on(catalog.run(
        "t",
        json!({"n": 2}).as_object().cloned(),
        |a: Args| async move { wrapped_output(&a.n) },
    ))
    .expect("ok");
    let result = complete(response);
    assert_eq!(text(&result), "2");
    assert_eq!(result.structured_content, Some(json!({"result": 2})));
}

#[test]
fn validation_reports_every_violation_and_resolved_params_are_dropped() {
    let catalog = Catalog::new(DEFS);
    let args = json!({"n": 9, "extra": true, "hidden": 1});
    let response = block_on(
        catalog.run("t", args.as_object().cloned(), |_: Args| async {
            wrapped_output(&0)
        }),
    )
    .expect("validation errors are tool results");
    let result = complete(response);
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Error executing tool t: (root) (additionalProperties): Additional properties are not allowed ('extra' was unexpected)\n\
         /n (maximum): 9 is greater than the maximum of 5"
    );
}

/// A tool whose schema JSON Schema reads more loosely than serde would on its own.
const LOOSE: &[ToolDef] = &[ToolDef {
    name: "loose",
    title: None,
    description: "Integers, a tuple open at its end, a nested object.",
    annotations: None,
    input_schema: r#"{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"pair":{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]},"deep":{"type":"object","properties":{"m":{"type":"integer","minimum":0}},"required":["m"]}},"required":["n"]}"#,
    output_schema: Some(
        r#"{"type":"object","properties":{"result":{"type":"string"}},"required":["result"]}"#,
    ),
    resolved: &[],
}];

#[derive(Debug, Deserialize, PartialEq)]
struct LooseArgs {
    n: i64,
    x: Option<f64>,
    pair: Option<(u8, String, Vec<serde_json::Value>)>,
    deep: Option<Deep>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Deep {
    m: u64,
}

fn run_loose(args: serde_json::Value) -> CallToolResult {
    let catalog = Catalog::new(LOOSE);
    complete(
        block_on(catalog.run(
            "loose",
            args.as_object().cloned(),
            |a: LooseArgs| async move { wrapped_output(&format!("{a:?}")) },
        ))
        .expect("a tool result"),
    )
}

#[test]
fn integers_written_with_a_zero_fraction_reach_integer_fields() {
    // JSON Schema counts 1.0 as an integer, so the typed struct must take it too.
    let result = run_loose(json!({"n": 1.0, "x": 2.0, "deep": {"m": 3e2}}));
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        text(&result),
        "LooseArgs { n: 1, x: Some(2.0), pair: None, deep: Some(Deep { m: 300 }) }"
    );
    let result = run_loose(json!({"n": -4.0, "x": 0.5}));
    assert_eq!(
        text(&result),
        "LooseArgs { n: -4, x: Some(0.5), pair: None, deep: None }"
    );
}

#[test]
fn violations_are_ordered_by_pointer_with_indices_as_numbers() {
    let validator = crate::catalog::schema::validator(&json!({
        "type": "object",
        "properties": {"b": {"type": "array", "items": {"type": "integer"}}, "a": {"type": "string"}},
        "required": ["c"]
    }))
    .expect("a schema");
    let mut items = vec![json!(0); 11];
    items[2] = json!("x");
    items[10] = json!("y");
    assert_eq!(
        crate::catalog::schema::violations(&validator, &json!({"b": items, "a": 1})),
        [
            "(root) (required): \"c\" is a required property",
            "/a (type): 1 is not of type \"string\"",
            "/b/2 (type): \"x\" is not of type \"integer\"",
            "/b/10 (type): \"y\" is not of type \"integer\"",
        ]
    );
}

/// A value only one branch of an `anyOf`/`oneOf` types (pydantic's optional fields) gets that
/// branch's own violations; with two branches of its type the combinator's line stays; a long
/// value is shown cut, with its length.
#[test]
fn a_value_one_branch_types_gets_that_branchs_violations_and_long_values_are_cut() {
    let validator = crate::catalog::schema::validator(&json!({
        "type": "object",
        "properties": {
            "not_before": {"anyOf": [{"type": "string", "format": "time"}, {"type": "null"}]},
            "count": {"oneOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
            "either": {"anyOf": [{"type": "string", "minLength": 3}, {"type": "string", "pattern": "^x"}]},
            "note": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]}
        }
    }))
    .expect("a schema");
    let long = "y".repeat(501);
    assert_eq!(
        crate::catalog::schema::violations(
            &validator,
            &json!({"not_before": "9am", "count": 0, "either": "ab", "note": long})
        ),
        [
            "/count (minimum): 0 is less than the minimum of 1".to_string(),
            "/either (anyOf): \"ab\" is not valid under any of the schemas listed in the 'anyOf' keyword".to_string(),
            "/not_before (format): \"9am\" is not a \"time\"".to_string(),
            format!(
                "/note (maxLength): \"{}... (503 characters) is longer than 3 characters",
                "y".repeat(79)
            ),
        ]
    );
    // A value of neither branch's type: the combinator's line.
    assert_eq!(
        crate::catalog::schema::violations(&validator, &json!({"not_before": 5})),
        [
            "/not_before (anyOf): 5 is not valid under any of the schemas listed in the 'anyOf' keyword"
        ]
    );
}

#[test]
fn every_violation_is_listed_with_its_pointer_and_keyword() {
    let result = run_loose(json!({"n": 1.5, "pair": ["a", 2], "deep": {"m": -1.0}}));
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        text(&result),
        "Error executing tool loose: /deep/m (minimum): -1.0 is less than the minimum of 0\n\
         /n (type): 1.5 is not of type \"integer\"\n\
         /pair/0 (type): \"a\" is not of type \"integer\"\n\
         /pair/1 (type): 2 is not of type \"string\""
    );
    let result = run_loose(json!({"deep": {}}));
    assert_eq!(
        text(&result),
        "Error executing tool loose: (root) (required): \"n\" is a required property\n\
         /deep (required): \"m\" is a required property"
    );
}

#[test]
fn normalising_keeps_fractions_and_out_of_range_numbers() {
    use crate::catalog::args::normalize_numbers;
    let mut v = json!([1.0, 1.5, -0.0, 1e300, 18446744073709551615u64, {"a": [2.0]}]);
    normalize_numbers(&mut v);
    assert_eq!(
        v,
        json!([1, 1.5, 0, 1e300, 18446744073709551615u64, {"a": [2]}])
    );
    // -2^63 and 2^64 are what integer literals beyond the 64-bit range are read as: they stay
    // floats; the largest floats within the range become integers.
    let mut v = json!([
        9007199254740992.0,
        -9.223_372_036_854_776e18,
        -9.223_372_036_854_775e18,
        1.844_674_407_370_955e19,
        1.844_674_407_370_955_2e19
    ]);
    normalize_numbers(&mut v);
    assert_eq!(
        v,
        json!([
            9007199254740992i64,
            -9.223_372_036_854_776e18,
            -9223372036854774784i64,
            18446744073709549568u64,
            1.844_674_407_370_955_2e19
        ])
    );
}

/// An integer the JSON reader could only read as a rounded float (beyond the 64-bit range, or
/// beyond 2^53 written with a fraction or exponent) is refused with its pointer, never turned
/// into a neighbouring integer; one within the range, written as an integer, is exact.
#[test]
fn an_integer_that_was_rounded_when_read_is_refused() {
    for (sent, shown) in [
        (r#"{"n": -9223372036854775809}"#, "-9.223372036854776e+18"),
        (
            r#"{"n": 1, "deep": {"m": 18446744073709551616}}"#,
            "1.8446744073709552e+19",
        ),
    ] {
        let args: serde_json::Value = serde_json::from_str(sent).unwrap();
        let result = run_loose(args);
        assert_eq!(result.is_error, Some(true), "{sent}");
        let pointer = if sent.contains("deep") {
            "/deep/m"
        } else {
            "/n"
        };
        assert_eq!(
            text(&result),
            format!(
                "Error executing tool loose: {pointer}: {shown} cannot be taken exactly as an integer: it lies outside the 64-bit range (its text may have been rounded into -2^63 or 2^64 when read)"
            ),
            "{sent}"
        );
    }
    let exact: serde_json::Value =
        serde_json::from_str(r#"{"n": -9223372036854775808, "x": 1e300}"#).unwrap();
    assert_eq!(
        text(&run_loose(exact)),
        "LooseArgs { n: -9223372036854775808, x: Some(1e300), pair: None, deep: None }"
    );
    // Within the range the catalog takes a float as read (as validators reading f64 take it);
    // from a transport, `McpServer` refuses one that does not give back its text first
    // (`catalog/numbers.rs`; e2e `jsonrpc.rs`).
    let rounded: serde_json::Value = serde_json::from_str(r#"{"n": 9007199254740993.0}"#).unwrap();
    assert_eq!(
        text(&run_loose(rounded)),
        "LooseArgs { n: 9007199254740992, x: None, pair: None, deep: None }"
    );
}

#[test]
fn the_arguments_digest_covers_the_arguments_as_sent() {
    use crate::catalog::tools::call_arguments_digest;
    use crate::state::arguments_digest;
    let catalog = Catalog::new(STRING_DEFS);
    let run = |args: serde_json::Value| {
        let response = block_on(
            catalog.run("t", args.as_object().cloned(), |_: Args| async {
                wrapped_output(&call_arguments_digest())
            }),
        );
        complete(response.expect("result"))
            .structured_content
            .expect("structured")["result"]
            .clone()
    };
    for args in [json!({"n": 1}), json!({"n": 1, "hidden": "x"})] {
        assert_eq!(run(args.clone()), json!(arguments_digest(args.as_object())));
    }
    assert_eq!(call_arguments_digest(), arguments_digest(None));
}

#[test]
fn form_questions_are_prepared_once_and_digest_as_rendered() {
    use rmcp::model::InputRequest;

    use crate::{
        Form,
        asking::form::{FormQuestion, form_cache, question_digest},
    };

    #[derive(Deserialize)]
    struct Confirm {
        #[allow(dead_code)]
        confirm: bool,
    }
    impl Form for Confirm {
        const SCHEMA: &'static str = r#"{"title":"T","description":"Order anyway?","type":"object","properties":{"confirm":{"type":"boolean","description":"mcpgen"}},"required":["confirm"]}"#;
    }
    #[derive(Deserialize)]
    struct Other {}
    impl Form for Other {
        const SCHEMA: &'static str = r#"{"type":"object","properties":{}}"#;
    }

    let cache = form_cache::<Confirm>();
    assert!(std::ptr::eq(cache, form_cache::<Confirm>()));
    assert!(!std::ptr::eq(cache, form_cache::<Other>()));
    let question = cache.question().expect("question");
    assert!(std::ptr::eq(question, cache.question().expect("question")));
    assert!(
        cache
            .validator()
            .expect("validator")
            .is_valid(&json!({"confirm": true}))
    );
    assert!(
        !cache
            .validator()
            .expect("validator")
            .is_valid(&json!({"confirm": 1}))
    );
    assert_eq!(
        cache.legacy_schema().expect("schema").title.as_deref(),
        Some("T")
    );
    for message in ["Order anyway?", "", "quo\"te \\ \n \u{1} é 😀", "mcpgen"] {
        let request = InputRequest::Elicitation(question.request(message.to_string()));
        let rendered = serde_json::to_value(&request).expect("json");
        assert_eq!(rendered["params"]["message"], json!(message));
        assert!(rendered["params"]["requestedSchema"].get("title").is_none());
        assert_eq!(
            question.digest(message).expect("digest"),
            question_digest(&request).expect("digest"),
            "{message:?}"
        );
    }
    // A schema that is not an elicitation schema fails at every use.
    let broken = FormQuestion::new(r#"{"type":"array"}"#)
        .err()
        .expect("error");
    assert!(
        broken.starts_with("form schema is not an elicitation schema"),
        "{broken}"
    );
}

// Sampling is deprecated by SEP-2577 (legacy connections and 2026-07-28 questions use it).
#[allow(deprecated)]
#[test]
fn each_question_needs_one_capability_and_names_it_in_the_32021_error() {
    use rmcp::model::{
        ClientCapabilities, CreateMessageRequestParams, SamplingMessage, ToolChoice,
    };

    use crate::asking::{
        ask::{AskKind, Roots, Sampling},
        capability::Capability,
    };

    let plain = Box::new(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text("hi")],
        10,
    ));
    let mut with_tools = plain.clone();
    with_tools.tool_choice = Some(ToolChoice::auto());
    assert_eq!(Sampling::capability(&plain), Capability::Sampling);
    // With tools, `sampling.tools` alone is named, whatever else the client lacks (on both eras).
    assert_eq!(Sampling::capability(&with_tools), Capability::SamplingTools);
    assert_eq!(Roots::capability(&()), Capability::Roots);
    let error = |capability: Capability, declared: serde_json::Value| {
        let declared: ClientCapabilities = serde_json::from_value(declared).expect("caps");
        match capability.require(Some(declared), &"resolver 'r'") {
            Ok(()) => None,
            Err(ToolError::Protocol(e)) => Some(serde_json::to_value(e).expect("json")),
            Err(other) => panic!("not a protocol error: {other:?}"),
        }
    };
    assert_eq!(
        error(Capability::SamplingTools, json!({})),
        Some(json!({
            "code": -32021,
            "message": "Client did not declare the sampling.tools capability required by resolver 'r'",
            "data": {"requiredCapabilities": {"sampling": {"tools": {}}}}
        }))
    );
    assert_eq!(
        error(
            Capability::SamplingTools,
            json!({"sampling": {"tools": {}}})
        ),
        None
    );
    assert_eq!(
        error(Capability::Form, json!({"elicitation": {"url": {}}})),
        Some(json!({
            "code": -32021,
            "message": "Client did not declare the form elicitation capability required by resolver 'r'",
            "data": {"requiredCapabilities": {"elicitation": {"form": {}}}}
        }))
    );
    assert_eq!(error(Capability::Form, json!({"elicitation": {}})), None);
    assert_eq!(
        error(Capability::Roots, json!({"sampling": {}})),
        Some(json!({
            "code": -32021,
            "message": "Client did not declare the roots capability required by resolver 'r'",
            "data": {"requiredCapabilities": {"roots": {}}}
        }))
    );
}

#[test]
fn tool_errors_map_to_results_or_protocol_errors() {
    let catalog = Catalog::new(DEFS);
    let run = |error: ToolError| {
        block_on(catalog.run(
            "t",
            json!({"n": 1}).as_object().cloned(),
            move |_: Args| async move { Err::<CallToolResponse, _>(error) },
        ))
    };
    let message = complete(run(ToolError::new("nope")).expect("result"));
    assert_eq!(text(&message), "Error executing tool t: nope");
    let internal = complete(run(ToolError::internal("secret")).expect("result"));
    assert_eq!(text(&internal), "Error executing tool t");
    let protocol = run(ToolError::protocol(rmcp::ErrorData::invalid_request(
        "x", None,
    )));
    assert_eq!(protocol.expect_err("protocol error").code.0, -32600);
    let unknown = block_on(catalog.run("nope", None, |_: Args| async { wrapped_output(&0) }));
    let unknown = unknown.expect_err("unknown tool");
    assert_eq!(
        (unknown.code.0, unknown.message.as_ref()),
        (-32602, "Unknown tool: nope")
    );
}

#[test]
fn tools_list_serves_the_output_schema_as_given() {
    let catalog = Catalog::new(DEFS);
    let tool = serde_json::to_value(catalog.get("t").expect("tool")).expect("json");
    assert_eq!(
        tool["outputSchema"],
        json!({"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]})
    );
    assert_eq!(tool["inputSchema"]["required"], json!(["n"]));
}

/// Runs tool `f` of [`FORMATS`] with `arguments`; the body answers the arguments it received.
fn run_formats(arguments: serde_json::Value) -> CallToolResult {
    let catalog = Catalog::new(FORMATS);
    let response = block_on(catalog.run(
        "f",
        arguments.as_object().cloned(),
        |received: serde_json::Value| async move {
            crate::content_output(vec![rmcp::model::ContentBlock::text(received.to_string())])
        },
    ));
    complete(response.expect("a tool result"))
}

#[test]
fn formats_are_asserted_each_violation_named_by_pointer() {
    let cases = [
        ("email", "not-an-email"),
        ("idn-email", "no at sign"),
        ("uri", "no scheme"),
        ("uri-reference", "\\\\not a reference"),
        ("uuid", "123e4567-e89b-12d3-a456-42661417400"),
        ("date", "2026-02-30"),
        ("time", "25:00:00Z"),
        ("date-time", "2026-03-01T09:30:00"),
        ("duration", "P1H"),
        ("ipv4", "256.0.0.1"),
        ("ipv6", "::g"),
        ("hostname", "-bad-.example"),
        ("regex", "(unclosed"),
    ];
    for (format, bad) in cases {
        let result = run_formats(json!({ format: bad }));
        assert_eq!(result.is_error, Some(true), "{format}");
        assert_eq!(
            text(&result),
            format!(
                "Error executing tool f: /{format} (format): {} is not a \"{format}\"",
                json!(bad)
            )
        );
    }
    // Several violations: one result, one line each.
    let result = run_formats(json!({"email": "x", "uuid": "y"}));
    assert_eq!(
        text(&result),
        "Error executing tool f: /email (format): \"x\" is not a \"email\"\n/uuid (format): \"y\" is not a \"uuid\""
    );
}

#[test]
fn valid_formatted_values_reach_the_body_as_sent() {
    let arguments = json!({
        "email": "ada@example.com",
        "idn-email": "ユーザー@例え.jp",
        "uri": "https://example.com/a?b=c",
        "uri-reference": "../a#b",
        "uuid": "123e4567-e89b-12d3-a456-426614174000",
        "date": "2024-02-29",
        "time": "09:30:00+09:00",
        "date-time": "2026-03-01T09:30:00+09:00",
        "duration": "P1DT2H",
        "ipv4": "192.0.2.1",
        "ipv6": "2001:db8::1",
        "hostname": "example.com",
        "regex": "^a+$"
    });
    let result = run_formats(arguments.clone());
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), arguments.to_string());
}

#[test]
fn a_result_that_does_not_match_its_output_schema_fails_in_tests() {
    let catalog = Catalog::new(DEFS);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        block_on(
            catalog.run("t", json!({"n": 1}).as_object().cloned(), |_: Args| async {
                wrapped_output(&"one")
            }),
        )
    }));
    let panic = outcome.expect_err("a result that does not validate");
    assert_eq!(
        panic.downcast_ref::<String>().map(String::as_str),
        Some(
            "tool 't' returned a result that does not validate against its outputSchema:\n/result (type): \"one\" is not of type \"integer\""
        )
    );
}

/// mcpgen gives a bare-`$ref` object output `"type": "object"` at the root: rmcp keeps such an
/// `outputSchema` for legacy clients (it drops every other root).
#[test]
fn a_ref_output_schema_with_a_root_type_survives_the_legacy_strip() {
    use rmcp::model::{ListToolsResult, ServerResult};
    const REF: &[ToolDef] = &[ToolDef {
        output_schema: Some(
            r##"{"$ref":"#/$defs/P","type":"object","$defs":{"P":{"type":"object","properties":{"x":{"type":"integer"}}}}}"##,
        ),
        ..DEFS[0]
    }];
    const BARE: &[ToolDef] = &[ToolDef {
        output_schema: Some(r##"{"$ref":"#/$defs/P","$defs":{"P":{"type":"object"}}}"##),
        ..DEFS[0]
    }];
    let listed = |defs: &[ToolDef]| {
        let mut result = ServerResult::ListToolsResult(ListToolsResult::with_all_items(
            Catalog::new(defs).tools(),
        ));
        result.strip_non_object_output_for_legacy_peer();
        serde_json::to_value(&result).expect("json")["tools"][0]["outputSchema"].clone()
    };
    assert_eq!(
        listed(REF),
        json!({"$ref":"#/$defs/P","type":"object","$defs":{"P":{"type":"object","properties":{"x":{"type":"integer"}}}}})
    );
    assert_eq!(listed(BARE), serde_json::Value::Null);
}

#[test]
fn outcome_texts() {
    let declined: Outcome<i32> = Outcome::Declined;
    let Err(ToolError::Message(m)) = declined.into_value("backorder") else {
        panic!("expected a message");
    };
    assert_eq!(
        m,
        "Resolver for parameter 'backorder' could not resolve: elicitation was decline"
    );
    let cancelled: Outcome<i32> = Outcome::Cancelled;
    assert_eq!(cancelled.action(), "cancel");
    assert_eq!(Outcome::Accepted(3).into_value("x").ok(), Some(3));
    assert_eq!(
        ToolError::not_implemented("order_book").to_string(),
        "'order_book' is not implemented yet (write it in src/handlers.rs)"
    );
}

#[test]
fn output_shapes() {
    #[derive(serde::Serialize)]
    struct Point {
        x: i64,
    }
    let object = complete(crate::object_output(&Point { x: 1 }).expect("object"));
    assert_eq!(object.structured_content, Some(json!({"x": 1})));
    assert_eq!(text(&object), "{\n  \"x\": 1\n}");
    let wrapped = complete(wrapped_output(&vec![1, 2]).expect("wrapped"));
    assert_eq!(wrapped.structured_content, Some(json!({"result": [1, 2]})));
    assert_eq!(text(&wrapped), "[\n  1,\n  2\n]");
    let string = complete(wrapped_output(&"hi").expect("string"));
    assert_eq!(text(&string), "hi");
    let blocks = vec![rmcp::model::ContentBlock::text("a")];
    let content = complete(crate::content_output(blocks).expect("content"));
    assert_eq!(text(&content), "a");
    assert_eq!(content.structured_content, None);
}

mod request_state {
    use std::time::Duration;

    use serde_json::json;

    use crate::state::{
        Binding, StatePolicy, arguments_digest, digest, invalid_state_error, verify_params,
    };

    const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";
    const OTHER: &[u8] = b"fedcba9876543210fedcba9876543210";

    fn policy(secrets: &[&[u8]], audience: &str) -> StatePolicy {
        let secrets: Vec<Vec<u8>> = secrets.iter().map(|s| s.to_vec()).collect();
        StatePolicy::new(&secrets, Duration::from_secs(600), audience).unwrap()
    }

    const BINDING: Binding<'static> = Binding {
        method: "tools/call",
        tool: "order_book",
        arguments: "abc",
        principal: None,
    };

    #[test]
    fn seal_then_open_returns_the_inner_state_and_checks_every_claim() {
        let p = policy(&[SECRET], "Bookshop");
        let inner = json!({"v": 1, "asked": {"confirm_backorder": "x"}, "outcomes": {}});
        let token = p.seal(BINDING, &inner).unwrap();
        assert!(token.starts_with("v1."));
        assert_eq!(p.open(&token, BINDING).unwrap(), inner);
        let other_tool = Binding {
            tool: "reserve_book",
            ..BINDING
        };
        assert_eq!(
            p.open(&token, other_tool).unwrap_err(),
            "bound to tool \"order_book\""
        );
        let other_args = Binding {
            arguments: "abd",
            ..BINDING
        };
        assert_eq!(
            p.open(&token, other_args).unwrap_err(),
            "bound to other arguments"
        );
        let other_method = Binding {
            method: "prompts/get",
            ..BINDING
        };
        assert_eq!(
            p.open(&token, other_method).unwrap_err(),
            "bound to method \"tools/call\""
        );
        let elsewhere = policy(&[SECRET], "Files");
        assert_eq!(
            elsewhere.open(&token, BINDING).unwrap_err(),
            "bound to audience \"Bookshop\""
        );
        // Two seals of the same state differ (random nonces).
        assert_ne!(p.seal(BINDING, &inner).unwrap(), token);
    }

    #[test]
    fn a_token_sealed_by_the_python_sdks_codec_opens() {
        // Sealed by mcp 2.3.0's `AESGCMRequestStateCodec([SECRET])` (the same key derivation,
        // key id, nonce, associated data and token layout as ours) over these claims, which
        // expire in 2100: `{"v":1,"iat":1795979548.142,"exp":4102444800.0,"m":"tools/call",
        // "t":"order_book","a":"abc","s":{..},"aud":"Bookshop"}`.
        const PYTHON_TOKEN: &str = "v1.oBT0C2xPNMX7InPSriWRa6Gt1W1vpeyTwvPIWUZtNqwdfkXkrVD5Q-O797x4\
            JhtvtqBf_2tR2GwwBxDbO3ScPVnVvsRD5mC3QhwfxUO0IGZGhXehc0ElqzxOldwcKy7x0nuy5EL4iuCYTK9K1mT-\
            UHzaK4ckNT3b10OX6Y1NTNwOvqPWof7kosyQKNSmeD4o-qsH6HCW2vhxWjl0PblDkZ1tlEw6pH6Ey1YClVAMAlg\
            eckUk9oK7eh0ioZc_4cUeW9QdiWfiqKI";
        let p = policy(&[SECRET], "Bookshop");
        assert_eq!(
            p.open(PYTHON_TOKEN, BINDING).unwrap(),
            json!({"v": 1, "asked": {"confirm_backorder": "x"}, "outcomes": {}})
        );
        // Ours has the same layout: "v1." + base64url(kid[4] ‖ nonce[12] ‖ ciphertext ‖ tag[16]),
        // with the key id of the same secret (the first 8 characters carry only the prefix and kid).
        let ours = p.seal(BINDING, &json!({})).unwrap();
        assert_eq!(ours[..8], PYTHON_TOKEN[..8]);
        assert_eq!(
            policy(&[OTHER], "Bookshop")
                .open(PYTHON_TOKEN, BINDING)
                .unwrap_err(),
            "token sealed with an unknown key"
        );
    }

    #[test]
    fn tampering_expiry_and_unknown_keys_are_rejected() {
        let p = policy(&[SECRET], "Bookshop");
        let token = p.seal(BINDING, &json!({})).unwrap();
        // Flip a character in the middle: still canonical base64url (the last character may
        // carry padding bits, and changing it can make the text invalid base64 instead).
        let mut bytes = token.clone().into_bytes();
        let middle = bytes.len() / 2;
        bytes[middle] = if bytes[middle] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        assert_eq!(
            p.open(&tampered, BINDING).unwrap_err(),
            "token failed authentication"
        );
        assert_eq!(
            p.open("v2.abc", BINDING).unwrap_err(),
            "not a v1 token (wrong prefix)"
        );
        assert_eq!(
            p.open("v1.!!", BINDING).unwrap_err(),
            "token is not base64url"
        );
        let stranger = policy(&[OTHER], "Bookshop");
        assert_eq!(
            stranger.open(&token, BINDING).unwrap_err(),
            "token sealed with an unknown key"
        );
        let brief = StatePolicy::new(&[SECRET.to_vec()], Duration::ZERO, "Bookshop").unwrap();
        let expired = brief.seal(BINDING, &json!({})).unwrap();
        assert!(
            p.open(&expired, BINDING)
                .unwrap_err()
                .starts_with("expired ")
        );
    }

    #[test]
    fn keys_rotate_and_must_be_long_enough() {
        let old = policy(&[SECRET], "Bookshop");
        let rotated = policy(&[OTHER, SECRET], "Bookshop");
        let token = old.seal(BINDING, &json!({"v": 1})).unwrap();
        assert_eq!(rotated.open(&token, BINDING).unwrap(), json!({"v": 1}));
        let new_token = rotated.seal(BINDING, &json!({"v": 1})).unwrap();
        assert_eq!(
            old.open(&new_token, BINDING).unwrap_err(),
            "token sealed with an unknown key"
        );
        assert_eq!(
            StatePolicy::new(&[vec![7; 31]], Duration::from_secs(1), "x").err(),
            Some("requestState key 1 is 31 bytes; at least 32 are required".to_string())
        );
    }

    #[test]
    fn verify_checks_a_state_against_its_request_before_anything_reads_it() {
        let p = policy(&[SECRET], "Bookshop");
        let cup = json!({"item": "cup"});
        let cup = cup.as_object();
        let sealed_for = |method: &str, target: &str, arguments| {
            let digest = arguments_digest(arguments);
            let binding = Binding {
                method,
                tool: target,
                arguments: &digest,
                principal: None,
            };
            p.seal(binding, &json!({"v": 1, "anything": ["opaque"]}))
                .unwrap()
        };
        // Absent: nothing to check.
        assert!(
            p.verify("tools/call", "paint", cup, None, None)
                .unwrap()
                .is_none()
        );
        // A state sealed for exactly this request opens, with its inner state untouched.
        let token = sealed_for("tools/call", "paint", cup);
        let verified = p
            .verify("tools/call", "paint", cup, Some(token.clone()), None)
            .unwrap()
            .expect("verified");
        assert_eq!(verified.token(), token);
        assert_eq!(verified.inner(), &json!({"v": 1, "anything": ["opaque"]}));
        assert_eq!(verified.arguments_digest(), arguments_digest(cup));
        // resources/read binds the URI and no arguments.
        let uri = "probe://items/cup";
        let token_for_uri = sealed_for("resources/read", uri, None);
        assert!(
            p.verify(
                "resources/read",
                uri,
                None,
                Some(token_for_uri.clone()),
                None
            )
            .unwrap()
            .is_some()
        );
        // Every mismatch is the one frozen error, whatever the reason.
        let mug = json!({"item": "mug"});
        let brief = StatePolicy::new(&[SECRET.to_vec()], Duration::ZERO, "Bookshop").unwrap();
        let expired = {
            let digest = arguments_digest(cup);
            let binding = Binding {
                method: "tools/call",
                tool: "paint",
                arguments: &digest,
                principal: None,
            };
            brief.seal(binding, &json!({})).unwrap()
        };
        let failures = [
            ("tools/call", "paint", cup, "not a state".to_string()),
            (
                "tools/call",
                "paint",
                cup,
                token[..token.len() - 2].to_string(),
            ),
            ("tools/call", "paint", cup, format!("{token}A")),
            ("tools/call", "label", cup, token.clone()),
            ("prompts/get", "paint", cup, token.clone()),
            ("tools/call", "paint", mug.as_object(), token.clone()),
            ("tools/call", "paint", None, token.clone()),
            ("tools/call", "paint", cup, expired),
            (
                "resources/read",
                "probe://items/mug",
                None,
                token_for_uri.clone(),
            ),
            ("tools/call", uri, None, token_for_uri.clone()),
        ];
        for (method, target, arguments, token) in failures {
            assert_eq!(
                p.verify(method, target, arguments, Some(token.clone()), None)
                    .unwrap_err(),
                invalid_state_error(),
                "{method} {target} {arguments:?} {token}"
            );
        }
        let stranger = policy(&[OTHER], "Bookshop");
        let elsewhere = policy(&[SECRET], "Files");
        for other in [stranger, elsewhere] {
            assert_eq!(
                other
                    .verify("tools/call", "paint", cup, Some(token.clone()), None)
                    .unwrap_err(),
                invalid_state_error()
            );
        }
    }

    #[test]
    fn verify_params_reads_the_params_as_sent() {
        let seal = |method: &str, target: &str, arguments: serde_json::Value| {
            let digest = arguments_digest(arguments.as_object());
            let binding = Binding {
                method,
                tool: target,
                arguments: &digest,
                principal: None,
            };
            // The process's policy, which `verify_params` opens with.
            crate::state::policy()
                .seal(binding, &json!({"v": 1}))
                .unwrap()
        };
        let frozen = Err(invalid_state_error());
        let check = |method: &str, params: serde_json::Value| {
            verify_params(&crate::state::policy(), method, Some(&params), None)
                .map(|v| v.map(|v| v.inner().clone()))
        };
        // Absent or null: passes; any other non-string: the frozen error.
        assert_eq!(check("tools/call", json!({"name": "t"})), Ok(None));
        assert_eq!(
            check("tools/call", json!({"name": "t", "requestState": null})),
            Ok(None)
        );
        for bad in [json!(123), json!(true), json!({"v1": "x"}), json!(["v1.x"])] {
            for method in ["tools/call", "prompts/get", "resources/read"] {
                assert_eq!(
                    check(
                        method,
                        json!({"name": "t", "uri": "u", "requestState": bad})
                    ),
                    frozen,
                    "{method} {bad}"
                );
            }
        }
        // Only the three carriers pass the boundary.
        assert_eq!(check("tools/list", json!({"requestState": 123})), Ok(None));
        assert!(
            verify_params(&crate::state::policy(), "tools/call", None, None)
                .unwrap()
                .is_none()
        );
        assert!(
            verify_params(
                &crate::state::policy(),
                "tools/call",
                Some(&json!([1, 2])),
                None
            )
            .unwrap()
            .is_none()
        );
        // A string is verified against name (uri) and arguments.
        let token = seal("tools/call", "t", json!({"a": 1}));
        let params = json!({"name": "t", "arguments": {"a": 1}, "requestState": token});
        assert_eq!(check("tools/call", params), Ok(Some(json!({"v": 1}))));
        let params = json!({"name": "t", "arguments": {"a": 2}, "requestState": token});
        assert_eq!(check("tools/call", params), frozen);
        let params = json!({"name": "t", "arguments": [1], "requestState": token});
        assert_eq!(check("tools/call", params), frozen);
        let params = json!({"name": 5, "arguments": {"a": 1}, "requestState": token});
        assert_eq!(check("tools/call", params), frozen);
        let token = seal("tools/call", "", json!({}));
        assert_eq!(
            check("tools/call", json!({"requestState": token})),
            Ok(Some(json!({"v": 1})))
        );
        let token = seal("resources/read", "probe://x", json!({}));
        let params =
            json!({"uri": "probe://x", "arguments": {"ignored": 1}, "requestState": token});
        assert_eq!(check("resources/read", params), Ok(Some(json!({"v": 1}))));
        let params = json!({"uri": "probe://y", "requestState": token});
        assert_eq!(check("resources/read", params), frozen);
    }

    #[test]
    fn digests_are_canonical_and_the_error_is_frozen() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "é"}});
        let b = json!({"a": {"x": "é", "y": [1, {"c": 3, "d": 2}]}, "b": 1});
        assert_eq!(digest(&a), digest(&b));
        assert_eq!(digest(&a).len(), 22);
        assert_ne!(digest(&a), digest(&json!({"b": 2})));
        assert_eq!(arguments_digest(None), digest(&json!({})));
        // Frozen values, computed by the Python SDK (mcp 2.3.0) itself: base64url of
        // SHA-256(`mcp.server.request_state.compact_json(v, sort_keys=True)`)[:16], i.e.
        // `json.dumps(v, sort_keys=True, separators=(",", ":"))` with its default
        // `ensure_ascii=True`, so non-ASCII is escaped: a state sealed by a Python server with
        // the same key verifies here and the other way round.
        assert_eq!(digest(&a), "T1pCk3FOurfXqedW1_HwbA");
        assert_eq!(arguments_digest(None), "RBNvo1WzZ4oRRq0W9-hkng");
        let title = json!({"title": "Neuromancer"});
        assert_eq!(
            arguments_digest(title.as_object()),
            "wCM6xhCeVZ7t8s1O3TPVcA"
        );
        let escapes = json!({"q": "quo\"te\\ \n\t\u{1} é / 😀", "n": null, "t": true,
                             "f": false, "i": -12, "z": []});
        assert_eq!(digest(&escapes), "WByS5U2UxmsisHqpLgDP6g");
        // Non-ASCII text (BMP, astral, DEL) and floats in both of Python's notations: the
        // digest of `_request_identity("tools/call", {"name": "t", "arguments": ...})`.
        let non_ascii = json!({"title": "Café ☕ 😀\u{7f}",
            "n": [1.0, 100.0, 1e16, 1.5e-7, 0.0001, -0.0, 123.456, 1e22, 2.5e-5]});
        let mut text = Vec::new();
        crate::state::canonical(&non_ascii, &mut text);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            r#"{"n":[1.0,100.0,1e+16,1.5e-07,0.0001,-0.0,123.456,1e+22,2.5e-05],"title":"Caf\u00e9 \u2615 \ud83d\ude00\u007f"}"#
        );
        assert_eq!(
            arguments_digest(non_ascii.as_object()),
            "WXs2yQx5nIrg32jhFN-efA"
        );
        let error = invalid_state_error();
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"code": -32602, "message": "Invalid or expired requestState",
                   "data": {"reason": "invalid_request_state"}})
        );
    }
}

mod prompts_resources {
    use rmcp::model::{
        ArgumentInfo, CompleteRequestParams, GetPromptResponse, GetPromptResult,
        ReadResourceResponse, Reference,
    };
    // Logging is deprecated by SEP-2577 (legacy connections use it).
    #[allow(deprecated)]
    use rmcp::model::LoggingLevel;
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::block_on;
    use crate::{
        Capabilities, MessageContent, MessageDef, MessageRole, PromptArgDef, PromptCatalog,
        PromptDef, ResourceBody, ResourceCatalog, ResourceDef, ServerMeta, StaticContent,
        TemplateDef, ToolError,
        catalog::{completion, prompts, resources::match_uri},
        complete, notify, prompt_output, server_config,
    };

    const ARGS: &[PromptArgDef] = &[
        PromptArgDef {
            name: "arg1",
            title: Some("First"),
            description: Some("The first"),
            required: true,
            complete: &["test", "testing", "tested", "other"],
        },
        PromptArgDef {
            name: "arg2",
            title: None,
            description: None,
            required: true,
            complete: &[],
        },
        PromptArgDef {
            name: "opt",
            title: None,
            description: None,
            required: false,
            complete: &[],
        },
    ];

    const PROMPTS: &[PromptDef] = &[
        PromptDef {
            name: "fixed",
            title: Some("Fixed"),
            description: "A fixed prompt",
            arguments: ARGS,
            messages: Some(&[
                MessageDef {
                    role: MessageRole::User,
                    content: MessageContent::Text(
                        "a='{arg1}' b='{arg2}' o='{opt}' {{arg1}} }} {nope} {",
                    ),
                },
                MessageDef {
                    role: MessageRole::Assistant,
                    content: MessageContent::Image {
                        data: "AAAA",
                        mime_type: "image/png",
                    },
                },
                MessageDef {
                    role: MessageRole::User,
                    content: MessageContent::Resource("test://text"),
                },
            ]),
        },
        PromptDef {
            name: "coded",
            title: None,
            description: "Written in code",
            arguments: ARGS,
            messages: None,
        },
    ];

    const RESOURCES: &[ResourceDef] = &[
        ResourceDef {
            uri: "test://text",
            name: "text",
            title: Some("Text"),
            description: Some("Some text"),
            mime_type: Some("text/plain"),
            content: StaticContent::Text("hello"),
        },
        ResourceDef {
            uri: "test://blob",
            name: "blob",
            title: None,
            description: None,
            mime_type: None,
            content: StaticContent::Blob("AQID"),
        },
        ResourceDef {
            uri: "test://code",
            name: "code",
            title: None,
            description: None,
            mime_type: Some("application/json"),
            content: StaticContent::Code,
        },
        ResourceDef {
            uri: "books://fixed/x",
            name: "fixed_book",
            title: None,
            description: None,
            mime_type: None,
            content: StaticContent::Code,
        },
    ];

    const TEMPLATES: &[TemplateDef] = &[
        TemplateDef {
            uri_template: "books://{shelf}/{id}",
            name: "book",
            title: None,
            description: None,
            mime_type: Some("text/markdown"),
            complete: &[("shelf", &["fiction", "fantasy", "poetry"])],
            exempt_from_path_checks: &[],
        },
        TemplateDef {
            uri_template: "books://{shelf}/{id}/cover",
            name: "cover",
            title: None,
            description: None,
            mime_type: None,
            complete: &[],
            exempt_from_path_checks: &[],
        },
        TemplateDef {
            uri_template: "git://diff/{range}",
            name: "diff",
            title: None,
            description: None,
            mime_type: None,
            complete: &[],
            exempt_from_path_checks: &["range"],
        },
    ];

    fn catalogs() -> (PromptCatalog, ResourceCatalog) {
        (
            PromptCatalog::new(PROMPTS),
            ResourceCatalog::new(RESOURCES, TEMPLATES),
        )
    }

    fn args(value: Value) -> Option<serde_json::Map<String, Value>> {
        value.as_object().cloned()
    }

    fn result(response: GetPromptResponse) -> GetPromptResult {
        match response {
            GetPromptResponse::Complete(result) => result,
            other => panic!("not complete: {other:?}"),
        }
    }

    fn read(response: ReadResourceResponse) -> Value {
        match response {
            ReadResourceResponse::Complete(result) => serde_json::to_value(result).unwrap(),
            other => panic!("not complete: {other:?}"),
        }
    }

    fn vars(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn template_matching() {
        assert_eq!(
            match_uri("test://template/{id}/data", "test://template/123/data"),
            vars(&[("id", "123")])
        );
        // A variable never spans a `/` and is never empty.
        assert_eq!(
            match_uri("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            match_uri("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(
            match_uri("test://template/{id}/data", "test://template/1/data/"),
            None
        );
        // Backtracking: the first variable gives back characters the literal needs.
        assert_eq!(
            match_uri("file:///{name}.{ext}", "file:///a.b.c"),
            vars(&[("name", "a.b"), ("ext", "c")])
        );
        assert_eq!(
            match_uri("{scheme}://x", "http://x"),
            vars(&[("scheme", "http")])
        );
        // The raw match keeps percent-encoding (the lookup decodes it) and stops at the
        // characters a simple expansion always encodes.
        assert_eq!(
            match_uri("q://{term}", "q://a%20b"),
            vars(&[("term", "a%20b")])
        );
        for stop in ["q://a?b", "q://a#b", "q://a&b", "q://a,b"] {
            assert_eq!(match_uri("q://{term}", stop), None, "{stop}");
        }
        assert_eq!(match_uri("q://{term}", "q://"), None);
        assert_eq!(match_uri("plain://x", "plain://x"), vars(&[]));
        assert_eq!(match_uri("plain://x", "plain://xy"), None);
    }

    #[test]
    fn lookup_prefers_fixed_resources_then_templates_in_order() {
        let (_, resources) = catalogs();
        let fixed = match resources.lookup("test://text").unwrap() {
            crate::Lookup::Fixed(response) => read(response),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            fixed,
            json!({"resultType": "complete", "contents": [
                {"uri": "test://text", "mimeType": "text/plain", "text": "hello"}]})
        );
        let blob = match resources.lookup("test://blob").unwrap() {
            crate::Lookup::Fixed(response) => read(response),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            blob["contents"],
            json!([{"uri": "test://blob", "blob": "AQID"}])
        );
        let code = |uri: &str| match resources.lookup(uri).unwrap() {
            crate::Lookup::Code { name, vars } => (name, Value::Object(vars)),
            other => panic!("{other:?}"),
        };
        assert_eq!(code("test://code"), ("code", json!({})));
        assert_eq!(code("books://fixed/x"), ("fixed_book", json!({})));
        assert_eq!(
            code("books://fixed/y"),
            ("book", json!({"shelf": "fixed", "id": "y"}))
        );
        assert_eq!(
            code("books://a/b/cover"),
            ("cover", json!({"shelf": "a", "id": "b"}))
        );
        // Values are percent-decoded: an encoded `/` stays inside the value, bad escapes are
        // kept, invalid UTF-8 becomes U+FFFD (as the Python SDK's `unquote`).
        assert_eq!(
            code("books://sci%20fi/a%2Fb"),
            ("book", json!({"shelf": "sci fi", "id": "a/b"}))
        );
        assert_eq!(
            code("books://%zz/%C3%A9%FF"),
            ("book", json!({"shelf": "%zz", "id": "é\u{FFFD}"}))
        );
        // The path checks run on the decoded values; `..` that stays inside is fine.
        assert_eq!(
            code("books://a/b%2F..%2Fc"),
            ("book", json!({"shelf": "a", "id": "b/../c"}))
        );
        // An exempt variable skips them.
        assert_eq!(
            code("git://diff/..%2F..%2Fmain"),
            ("diff", json!({"range": "../../main"}))
        );
        let vars: TwoVars = crate::template_vars(
            json!({"shelf": "a", "id": "b"})
                .as_object()
                .cloned()
                .unwrap(),
        )
        .unwrap();
        assert_eq!((vars.shelf.as_str(), vars.id.as_str()), ("a", "b"));
    }

    #[derive(Deserialize)]
    struct TwoVars {
        shelf: String,
        id: String,
    }

    #[test]
    fn unsafe_template_values_are_not_found() {
        let (_, resources) = catalogs();
        for uri in [
            "books://a/..",
            "books://a/%2E%2E",
            "books://a/..%2Fetc",
            "books://a/b%2F..%2F..%2Fetc",
            "books://a/..%5Cetc",
            "books://a/%2Fetc%2Fpasswd",
            "books://a/%5Cserver",
            "books://a/C:secret",
            "books://a/c%3A%5Cwindows",
            "books://a/x%00y",
            "books://%2E%2E/b/cover",
        ] {
            let error = resources.lookup(uri).unwrap_err();
            assert_eq!(
                serde_json::to_value(&error).unwrap(),
                json!({"code": -32002, "message": "Resource not found", "data": {"uri": uri}}),
                "{uri}"
            );
        }
        use crate::catalog::resources::path_problem;
        assert_eq!(path_problem("a/b/c"), None);
        assert_eq!(path_problem("a/../b"), None);
        assert_eq!(path_problem("1.0..2.0"), None);
        assert_eq!(path_problem("./a"), None);
        assert_eq!(path_problem(""), None);
        assert_eq!(
            path_problem("a/../../b"),
            Some("a `..` component climbs above the start")
        );
        assert_eq!(path_problem("/etc"), Some("it is an absolute path"));
        assert_eq!(path_problem("x:y"), Some("it is an absolute path"));
        assert_eq!(path_problem("a\0"), Some("it contains a NUL character"));
    }

    #[test]
    fn unknown_resources_and_reader_errors() {
        let (_, resources) = catalogs();
        let error = resources.lookup("nope://x").unwrap_err();
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"code": -32002, "message": "Resource not found", "data": {"uri": "nope://x"}})
        );
        let uri = "books://a/b";
        let not_found = resources
            .respond(uri, "book", Err(ToolError::resource_not_found()))
            .unwrap_err();
        assert_eq!(
            serde_json::to_value(&not_found).unwrap(),
            json!({"code": -32002, "message": "Resource not found", "data": {"uri": uri}})
        );
        let message = resources
            .respond(uri, "book", Err(ToolError::new("no such shelf")))
            .unwrap_err();
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            json!({"code": -32602, "message": "no such shelf", "data": {"uri": uri}})
        );
        let internal = resources
            .respond(uri, "book", Err(ToolError::internal("secret")))
            .unwrap_err();
        assert_eq!(
            (internal.code.0, internal.message.as_ref()),
            (-32603, "Internal error")
        );
        let text = resources
            .respond(uri, "book", Ok(ResourceBody::text("# B")))
            .unwrap();
        assert_eq!(
            read(text)["contents"],
            json!([{"uri": uri, "mimeType": "text/markdown", "text": "# B"}])
        );
        let blob = resources
            .respond("test://code", "code", Ok(ResourceBody::blob(vec![1, 2, 3])))
            .unwrap();
        assert_eq!(
            read(blob)["contents"],
            json!([{"uri": "test://code", "mimeType": "application/json", "blob": "AQID"}])
        );
        assert_eq!(
            ResourceBody::json(&json!({"a": 1})).unwrap(),
            ResourceBody::Text("{\"a\":1}".to_string())
        );
    }

    #[test]
    fn listings() {
        let (prompts, resources) = catalogs();
        let listed = serde_json::to_value(prompts.list()).unwrap();
        assert_eq!(
            listed["prompts"][0],
            json!({"name": "fixed", "title": "Fixed", "description": "A fixed prompt",
                   "arguments": [
                       {"name": "arg1", "title": "First", "description": "The first", "required": true},
                       {"name": "arg2", "required": true},
                       {"name": "opt", "required": false}]})
        );
        assert_eq!(listed["prompts"][1]["name"], "coded");
        let listed = serde_json::to_value(resources.list()).unwrap();
        assert_eq!(
            listed["resources"][0],
            json!({"uri": "test://text", "name": "text", "title": "Text",
                   "description": "Some text", "mimeType": "text/plain"})
        );
        assert_eq!(listed["resources"].as_array().unwrap().len(), 4);
        let listed = serde_json::to_value(resources.templates()).unwrap();
        assert_eq!(
            listed["resourceTemplates"],
            json!([{"uriTemplate": "books://{shelf}/{id}", "name": "book", "mimeType": "text/markdown"},
                   {"uriTemplate": "books://{shelf}/{id}/cover", "name": "cover"},
                   {"uriTemplate": "git://diff/{range}", "name": "diff"}])
        );
    }

    #[test]
    fn prompt_rendering() {
        let (prompts, resources) = catalogs();
        let rendered = prompts
            .render("fixed", args(json!({"arg1": "x", "arg2": 2})), &resources)
            .unwrap();
        assert_eq!(
            serde_json::to_value(result(rendered)).unwrap(),
            json!({"resultType": "complete", "description": "A fixed prompt", "messages": [
                {"role": "user", "content": {"type": "text",
                    "text": "a='x' b='2' o='' {arg1} } {nope} {"}},
                {"role": "assistant", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "resource", "resource":
                    {"uri": "test://text", "mimeType": "text/plain", "text": "hello"}}}]})
        );
        assert_eq!(
            prompts::render_template(
                "{{{arg1}}}",
                &PROMPTS[0],
                &args(json!({"arg1": "v"})).unwrap()
            ),
            "{v}"
        );
    }

    #[test]
    fn prompt_errors() {
        let (prompts, resources) = catalogs();
        let missing = prompts
            .render("fixed", args(json!({"opt": "o", "arg2": null})), &resources)
            .unwrap_err();
        assert_eq!(
            (missing.code.0, missing.message.as_ref()),
            (-32602, "Missing required arguments: arg1, arg2")
        );
        let missing = prompts.render("fixed", None, &resources).unwrap_err();
        assert_eq!(missing.message, "Missing required arguments: arg1, arg2");
        let unknown = prompts.render("nope", None, &resources).unwrap_err();
        assert_eq!(
            (unknown.code.0, unknown.message.as_ref()),
            (-32602, "Unknown prompt: nope")
        );
    }

    #[derive(Deserialize)]
    struct Coded {
        arg1: String,
        arg2: String,
        opt: Option<String>,
    }

    #[test]
    fn prompts_in_code() {
        let (prompts, _) = catalogs();
        let run = |arguments: Value, error: Option<ToolError>| {
            block_on(
                prompts.run("coded", args(arguments), move |a: Coded| async move {
                    if let Some(error) = error {
                        return Err(error);
                    }
                    if a.arg1 == "panic" {
                        panic!("boom");
                    }
                    let text = format!("{} {} {:?}", a.arg1, a.arg2, a.opt);
                    prompt_output(vec![crate::model::user_text(text)])
                }),
            )
        };
        let ok = result(run(json!({"arg1": "a", "arg2": "b"}), None).unwrap());
        assert_eq!(ok.description.as_deref(), Some("Written in code"));
        assert_eq!(
            serde_json::to_value(&ok.messages).unwrap(),
            json!([{"role": "user", "content": {"type": "text", "text": "a b None"}}])
        );
        let missing = run(json!({"arg2": "b"}), None).unwrap_err();
        assert_eq!(missing.message, "Missing required arguments: arg1");
        let message = run(
            json!({"arg1": "a", "arg2": "b"}),
            Some(ToolError::new("no")),
        )
        .unwrap_err();
        assert_eq!((message.code.0, message.message.as_ref()), (-32602, "no"));
        let internal = run(
            json!({"arg1": "a", "arg2": "b"}),
            Some(ToolError::internal("x")),
        )
        .unwrap_err();
        assert_eq!(internal.code.0, -32603);
        let protocol = run(
            json!({"arg1": "a", "arg2": "b"}),
            Some(ToolError::protocol(rmcp::ErrorData::invalid_request(
                "r", None,
            ))),
        )
        .unwrap_err();
        assert_eq!(protocol.code.0, -32600);
        let panicked = run(json!({"arg1": "panic", "arg2": "b"}), None).unwrap_err();
        assert_eq!(
            (panicked.code.0, panicked.message.as_ref()),
            (-32603, "Internal error")
        );
        let wrong_type = run(json!({"arg1": 1, "arg2": "b"}), None).unwrap_err();
        assert_eq!(wrong_type.code.0, -32602);
        assert!(
            wrong_type
                .message
                .starts_with("Invalid arguments for prompt coded: "),
            "{}",
            wrong_type.message
        );
    }

    fn complete_value(reference: Reference, name: &str, value: &str) -> Value {
        let (prompts, resources) = catalogs();
        let request = CompleteRequestParams::new(reference, ArgumentInfo::new(name, value));
        match complete(&prompts, &resources, &request) {
            Ok(result) => serde_json::to_value(result.completion).unwrap(),
            Err(error) => serde_json::to_value(error).unwrap(),
        }
    }

    #[test]
    fn completion_filtering() {
        assert_eq!(
            complete_value(Reference::for_prompt("fixed"), "arg1", "test"),
            json!({"values": ["test", "testing", "tested"], "total": 3, "hasMore": false})
        );
        assert_eq!(
            complete_value(Reference::for_prompt("fixed"), "arg1", ""),
            json!({"values": ["test", "testing", "tested", "other"], "total": 4, "hasMore": false})
        );
        assert_eq!(
            complete_value(Reference::for_prompt("fixed"), "arg2", "a"),
            json!({"values": [], "total": 0, "hasMore": false})
        );
        assert_eq!(
            complete_value(Reference::for_prompt("fixed"), "nope", "a"),
            json!({"values": [], "total": 0, "hasMore": false})
        );
        assert_eq!(
            complete_value(
                Reference::for_resource("books://{shelf}/{id}"),
                "shelf",
                "f"
            ),
            json!({"values": ["fiction", "fantasy"], "total": 2, "hasMore": false})
        );
        assert_eq!(
            complete_value(Reference::for_prompt("nope"), "arg1", ""),
            json!({"code": -32602, "message": "Unknown prompt: nope"})
        );
        assert_eq!(
            complete_value(Reference::for_resource("books://a/b"), "shelf", ""),
            json!({"code": -32602, "message": "Unknown resource template: books://a/b"})
        );
        let many: Vec<String> = (0..150).map(|i| format!("v{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let info = serde_json::to_value(completion::filter(&many, "v1")).unwrap();
        // v1, v10..v19, v100..v149: 61 matches.
        assert_eq!(info["total"], 61);
        assert_eq!(info["hasMore"], false);
        let info = serde_json::to_value(completion::filter(&many, "v")).unwrap();
        assert_eq!(info["values"].as_array().unwrap().len(), 100);
        assert_eq!(
            (info["total"].clone(), info["hasMore"].clone()),
            (json!(150), json!(true))
        );
    }

    #[allow(deprecated)]
    #[test]
    fn log_level_filtering() {
        use LoggingLevel::{Debug, Emergency, Error, Info, Warning};
        // Not declared: never.
        assert!(!notify::log_allowed(false, false, Emergency, None, None));
        assert!(!notify::log_allowed(
            false,
            true,
            Emergency,
            Some(Debug),
            None
        ));
        // Legacy: every level until logging/setLevel, then the threshold.
        assert!(notify::log_allowed(true, false, Debug, None, None));
        assert!(!notify::log_allowed(true, false, Info, None, Some(Warning)));
        assert!(notify::log_allowed(
            true,
            false,
            Warning,
            None,
            Some(Warning)
        ));
        assert!(notify::log_allowed(true, false, Error, None, Some(Warning)));
        // The request's logLevel does not count on legacy connections.
        assert!(!notify::log_allowed(
            true,
            false,
            Info,
            Some(Debug),
            Some(Error)
        ));
        // 2026-07-28: only with the request's logLevel, and the level must reach it.
        assert!(!notify::log_allowed(true, true, Emergency, None, None));
        assert!(!notify::log_allowed(
            true,
            true,
            Emergency,
            None,
            Some(Debug)
        ));
        assert!(notify::log_allowed(true, true, Info, Some(Info), None));
        assert!(!notify::log_allowed(true, true, Debug, Some(Info), None));
        assert!(notify::log_allowed(
            true,
            true,
            Emergency,
            Some(Debug),
            Some(Emergency)
        ));
        // The runtime's own level converts to rmcp's, in order.
        assert_eq!(
            LoggingLevel::from(crate::model::LoggingLevel::Warning),
            Warning
        );
        assert!(crate::model::LoggingLevel::Debug < crate::model::LoggingLevel::Info);
    }

    #[test]
    fn capabilities_advertise_exactly_what_is_declared() {
        let meta = |capabilities| ServerMeta {
            name: "S",
            version: "1",
            title: None,
            instructions: None,
            capabilities,
        };
        let bare = server_config(&meta(Capabilities::default()));
        assert_eq!(
            serde_json::to_value(&bare.capabilities).unwrap(),
            json!({"tools": {}})
        );
        let all = Capabilities {
            prompts: true,
            resources: true,
            completions: true,
            logging: true,
            tools_list_changed: true,
            prompts_list_changed: true,
            resources_list_changed: true,
            resource_subscriptions: true,
        };
        let full = server_config(&meta(all));
        assert_eq!(
            serde_json::to_value(&full.capabilities).unwrap(),
            json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
                   "resources": {"subscribe": true, "listChanged": true},
                   "completions": {}, "logging": {}})
        );
        assert_eq!(Capabilities::from_server(&full.capabilities), all);
        let some = Capabilities {
            prompts: true,
            resources: true,
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(server_config(&meta(some)).capabilities).unwrap(),
            json!({"tools": {}, "prompts": {}, "resources": {}})
        );
        // subscriptions/listen: -32601 (None) unless some notification is declared.
        let requested = rmcp::model::SubscriptionFilter::builder()
            .tools_list_changed()
            .prompts_list_changed()
            .resource_subscription("a://b")
            .build();
        assert_eq!(notify::accepted_filter(some, &requested), None);
        let accepted = notify::accepted_filter(all, &requested).unwrap();
        assert_eq!(
            serde_json::to_value(accepted).unwrap(),
            json!({"toolsListChanged": true, "promptsListChanged": true,
                   "resourcesListChanged": true, "resourceSubscriptions": ["a://b"]})
        );
    }

    #[test]
    fn notifier_without_declared_capabilities_is_a_no_op() {
        // `serve` never ran in this process: nothing is declared, nothing is sent.
        let notifier = crate::Notifier::of("never-built");
        block_on(async {
            notifier.tools_list_changed().await;
            notifier.prompts_list_changed().await;
            notifier.resources_list_changed().await;
            notifier.resource_updated("a://b").await;
        });
    }
}

/// The JSON-RPC decision (`jsonrpc.rs`) and the HTTP front's header rules (`http.rs`), where the
/// e2e tests (`generated-examples/e2e/tests/jsonrpc.rs`) cannot reach.
mod front {
    use axum::http::{HeaderMap, HeaderValue, header};
    use rmcp::model::{ErrorCode, ErrorData};
    use serde_json::{Value, json};

    use crate::{
        Capabilities,
        transport::{
            http::{error_code, error_status, is_zero_weight, widen_accept},
            jsonrpc::{Rejection, Verdict, custom_request_error, diagnose},
        },
    };

    fn all() -> Capabilities {
        Capabilities {
            prompts: true,
            resources: true,
            completions: true,
            logging: true,
            resource_subscriptions: true,
            ..Capabilities::default()
        }
    }

    fn rejected(bytes: &[u8]) -> Value {
        match diagnose(bytes, all(), &crate::state::policy(), None) {
            Verdict::Reject(rejection) => serde_json::from_slice(&rejection.to_json()).unwrap(),
            other => panic!("not rejected: {other:?}"),
        }
    }

    #[test]
    fn rejections_are_written_with_an_explicit_id() {
        assert_eq!(
            Rejection::parse_error().to_json(),
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
        );
        let rejection = Rejection::invalid_request(json!("a"), "why");
        assert_eq!(
            String::from_utf8(rejection.to_json()).unwrap(),
            r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"Invalid Request","data":"why"}}"#
        );
    }

    #[test]
    fn a_request_carrying_a_result_is_invalid() {
        assert_eq!(
            rejected(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","result":{}}"#),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32600, "message": "Invalid Request",
                   "data": "a request carries neither 'result' nor 'error'"}})
        );
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        assert_eq!(
            rejected(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\"}"),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602,
                   "message": "Invalid params: 'name' is required"}})
        );
    }

    #[test]
    fn nested_fields_are_named_with_their_path() {
        let initialize = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":5,"version":"1"}}}"#;
        assert_eq!(
            rejected(initialize)["error"]["message"],
            json!("Invalid params: 'clientInfo.name' must be a string")
        );
        let complete = br#"{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource"},"argument":{"name":"a","value":"b"}}}"#;
        assert_eq!(
            rejected(complete)["error"]["message"],
            json!("Invalid params: 'ref.uri' is required")
        );
        let context = br#"{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"},"context":{"arguments":[]}}}"#;
        assert_eq!(
            rejected(context)["error"]["message"],
            json!("Invalid params: 'context.arguments' must be an object")
        );
    }

    #[test]
    fn a_message_rmcp_refuses_for_a_deeper_field_is_still_answered() {
        // Every field checked here is fine; rmcp's type refuses `capabilities.elicitation`.
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":5},"clientInfo":{"name":"a","version":"b"}}}"#;
        match diagnose(body, all(), &crate::state::policy(), None) {
            Verdict::Undetermined(rejection) => {
                assert_eq!(rejection.id, json!(1));
                assert_eq!(
                    rejection.error,
                    ErrorData::invalid_params("Invalid params for initialize", None)
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn methods_not_served_are_method_not_found() {
        let not_found = |method: &str| {
            ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "Method not found",
                Some(json!(method)),
            )
        };
        let none = Capabilities::default();
        assert_eq!(
            custom_request_error("x/y", None, false, all(), &crate::state::policy(), None),
            not_found("x/y")
        );
        assert_eq!(
            custom_request_error(
                "prompts/get",
                None,
                false,
                none,
                &crate::state::policy(),
                None
            ),
            not_found("prompts/get")
        );
        // Removed at 2026-07-28: not found for an enveloped request, invalid params otherwise.
        let level = json!({"level": "loud"});
        assert_eq!(
            custom_request_error(
                "logging/setLevel",
                Some(&level),
                true,
                all(),
                &crate::state::policy(),
                None
            ),
            not_found("logging/setLevel")
        );
        assert_eq!(
            custom_request_error(
                "logging/setLevel",
                Some(&level),
                false,
                all(),
                &crate::state::policy(),
                None
            )
            .code,
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            custom_request_error(
                "tools/call",
                Some(&json!({"name": "t"})),
                false,
                all(),
                &crate::state::policy(),
                None
            ),
            ErrorData::invalid_params("Invalid params for tools/call", None)
        );
    }

    fn widened(accept: &[&str], needed: &'static str) -> Vec<String> {
        let mut headers = HeaderMap::new();
        for value in accept {
            headers.append(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        }
        widen_accept(&mut headers, needed);
        headers
            .get_all(header::ACCEPT)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn accept_ranges_are_widened_to_the_types_they_cover() {
        let both = "application/json, text/event-stream";
        assert_eq!(widened(&["*/*"], both), [both]);
        assert_eq!(widened(&["application/*", "text/*;q=0.5"], both), [both]);
        assert_eq!(widened(&["text/event-stream", "*/*;q=0.1"], both), [both]);
        assert_eq!(
            widened(&["*/*"], "text/event-stream"),
            ["text/event-stream"]
        );
        // Literal types, refused ranges and partial cover are left for rmcp to judge.
        assert_eq!(
            widened(&["application/json, text/event-stream"], both),
            ["application/json, text/event-stream"]
        );
        assert_eq!(widened(&["*/*;q=0"], both), ["*/*;q=0"]);
        assert_eq!(widened(&["application/*"], both), ["application/*"]);
        assert_eq!(widened(&["image/*"], both), ["image/*"]);
        assert!(widened(&[], both).is_empty());
        assert!(is_zero_weight("0") && is_zero_weight("0.000") && !is_zero_weight("0.001"));
        assert!(!is_zero_weight("1") && !is_zero_weight("0.0000"));
    }

    /// The 2026-07-28 answer's status: the code read from rmcp's bytes up to it, whatever the
    /// id holds; results and other shapes have none.
    #[test]
    fn error_codes_are_read_from_the_first_bytes_and_mapped_to_statuses() {
        let error = |id: Value, code: i32| {
            let message = rmcp::model::ServerJsonRpcMessage::Error(rmcp::model::JsonRpcError::new(
                Some(serde_json::from_value(id).unwrap()),
                ErrorData::new(ErrorCode(code), "x", Some(json!({"result": 1}))),
            ));
            serde_json::to_vec(&message).unwrap()
        };
        assert_eq!(
            error_code(&error(json!(7), -32602)),
            Some(ErrorCode(-32602))
        );
        assert_eq!(
            error_code(&error(json!(-3), -32601)),
            Some(ErrorCode(-32601))
        );
        // A string id holding what would look like the end of the id and an error.
        let tricky = json!("a\\\",\"error\":{\"code\":1},\"");
        assert_eq!(
            error_code(&error(tricky.clone(), -32021)),
            Some(ErrorCode(-32021))
        );
        let result = serde_json::to_vec(
            &json!({"jsonrpc": "2.0", "id": tricky, "result": {"error": {"code": 1}}}),
        )
        .unwrap();
        assert_eq!(error_code(&result), None);
        assert_eq!(error_code(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#), None);
        assert_eq!(error_code(br#"{"jsonrpc":"2.0","id":"x"#), None);
        assert_eq!(error_code(b"not json"), None);
        let long_id = json!("i".repeat(1 << 20));
        assert_eq!(error_code(&error(long_id, -32600)), Some(ErrorCode(-32600)));
        for (code, status) in [
            (-32700, 400),
            (-32600, 400),
            (-32602, 400),
            (-32020, 400),
            (-32021, 400),
            (-32022, 400),
            (-32601, 404),
            (-32603, 200),
            (-32002, 200),
            (-32000, 200),
        ] {
            assert_eq!(error_status(ErrorCode(code)).as_u16(), status, "{code}");
        }
    }
}

/// Authorization through the real HTTP stack ([`crate::RouterOptions`] with a test
/// [`crate::TokenVerifier`], called in process): the protected-resource metadata, every
/// refusal with its exact status, headers and body, the scope decision per operation kind
/// (`completion/complete` included), the resources withheld from a `subscriptions/listen`,
/// optional auth, `listVisibleOnly`, `requestState` bound to the principal and legacy
/// sessions bound to their opener.
mod authorization {
    use std::{collections::HashMap, sync::Arc, time::Duration};

    use axum::{
        body::{Body, HttpBody},
        http::{HeaderMap, Method, Request, StatusCode, header},
    };
    use rmcp::{
        ErrorData, RoleServer, ServerHandler,
        model::{
            CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
            CompleteResult, CompletionInfo, ContentBlock, GetPromptRequestParams,
            GetPromptResponse, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
            ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage,
            ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Reference,
            Resource, ResourceContents, ResourceTemplate, Role, ServerConfig, Tool,
        },
        service::RequestContext,
    };
    use serde_json::{Map, Value, json};

    use crate::{
        Access, AuthSettings, Capabilities, Context, McpServer, Principal, Rejection,
        RouterOptions, ServerMeta, TokenVerifier, Verifying, server_config,
        state::{self, Binding},
        verify_request_state,
    };

    const RESOURCE: &str = "http://localhost/mcp";
    const ISSUER: &str = "https://as.example";
    const METADATA: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";

    /// A lending library: `borrow` needs `loans:write`, prompt `advice` needs `advice:read`,
    /// resource `lib://secret` needs `secret:read`, template `lib://loans/{id}` needs
    /// `loans:read`; every request needs `catalog:read`.
    static REQUIRED: Access = Access {
        declared: true,
        required: true,
        scopes: &["catalog:read"],
        scopes_supported: &[],
        list_visible_only: false,
        tools: &[("borrow", &["loans:write"])],
        prompts: &[("advice", &["advice:read"])],
        resources: &[("lib://secret", &["secret:read"])],
        templates: &[("lib://loans/{id}", &["loans:read"])],
    };

    /// [`REQUIRED`] with `auth.required: false` and no server-wide scopes.
    static OPTIONAL: Access = Access {
        required: false,
        scopes: &[],
        ..REQUIRED
    };

    /// [`REQUIRED`] with `listVisibleOnly`.
    static VISIBLE_ONLY: Access = Access {
        list_visible_only: true,
        ..REQUIRED
    };

    /// [`REQUIRED`] with `scopesSupported` given.
    static LISTED: Access = Access {
        scopes_supported: &["catalog:read", "loans:write"],
        ..REQUIRED
    };

    #[derive(Clone)]
    struct Library;

    /// [`Library`]'s tools and resources as another server (`annex`), for two servers in one
    /// process.
    #[derive(Clone)]
    struct Annex;

    impl ServerHandler for Annex {
        fn get_info(&self) -> ServerConfig {
            let mut config = Library.get_info();
            config.server_info.name = "annex".into();
            config
        }

        async fn list_tools(
            &self,
            request: Option<PaginatedRequestParams>,
            context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            Library.list_tools(request, context).await
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            Library.call_tool(request, context).await
        }
    }

    fn who(context: &RequestContext<RoleServer>) -> String {
        crate::authorization::principal::caller(context)
            .map_or_else(|| "anonymous".to_string(), |p| p.subject.clone())
    }

    impl ServerHandler for Library {
        fn get_info(&self) -> ServerConfig {
            server_config(&ServerMeta {
                name: "library",
                version: "1",
                title: None,
                instructions: None,
                capabilities: Capabilities {
                    prompts: true,
                    resources: true,
                    completions: true,
                    resource_subscriptions: true,
                    ..Capabilities::default()
                },
            })
        }

        /// One candidate naming what is completed and for whom (the handler ran).
        async fn complete(
            &self,
            request: CompleteRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CompleteResult, ErrorData> {
            let target = match &request.r#ref {
                Reference::Prompt(prompt) => prompt.name.clone(),
                Reference::Resource(resource) => resource.uri.clone(),
                other => other.reference_type().to_string(),
            };
            let mut info = CompletionInfo::default();
            info.values = vec![format!("{target} for {}", who(&context))];
            Ok(CompleteResult::new(info))
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let schema = Arc::new(Map::from_iter([("type".to_string(), json!("object"))]));
            Ok(ListToolsResult::with_all_items(vec![
                Tool::new("search", "Search.", Arc::clone(&schema)),
                Tool::new("borrow", "Borrow.", schema),
            ]))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let CallToolRequestParams {
                name,
                arguments,
                input_responses,
                request_state,
                ..
            } = request;
            let request_state = verify_request_state(
                "tools/call",
                &name,
                arguments.as_ref(),
                request_state,
                &context,
            )?;
            let ctx = Context::new(context, name.as_ref(), input_responses, request_state);
            let caller = ctx
                .principal()
                .map_or_else(|| "anonymous".to_string(), |p| p.subject.clone());
            let text = format!("{name} by {caller}");
            Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
        }

        async fn list_prompts(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListPromptsResult, ErrorData> {
            Ok(ListPromptsResult::with_all_items(vec![
                Prompt::new("hello", Some("Hello."), None),
                Prompt::new("advice", Some("Advice."), None),
            ]))
        }

        async fn get_prompt(
            &self,
            request: GetPromptRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<GetPromptResponse, ErrorData> {
            let text = format!("{} for {}", request.name, who(&context));
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into())
        }

        async fn list_resources(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListResourcesResult, ErrorData> {
            Ok(ListResourcesResult::with_all_items(vec![
                Resource::new("lib://catalog", "catalog"),
                Resource::new("lib://secret", "secret"),
            ]))
        }

        async fn list_resource_templates(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListResourceTemplatesResult, ErrorData> {
            Ok(ListResourceTemplatesResult::with_all_items(vec![
                ResourceTemplate::new("lib://books/{id}", "book"),
                ResourceTemplate::new("lib://loans/{id}", "loan"),
            ]))
        }

        async fn read_resource(
            &self,
            request: ReadResourceRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<ReadResourceResponse, ErrorData> {
            let text = format!("{} for {}", request.uri, who(&context));
            Ok(
                ReadResourceResult::new(vec![ResourceContents::TextResourceContents {
                    uri: request.uri,
                    mime_type: None,
                    text,
                    meta: None,
                }])
                .into(),
            )
        }
    }

    fn principal(subject: &str, scopes: &[&str]) -> Principal {
        Principal {
            issuer: ISSUER.to_string(),
            subject: subject.to_string(),
            client_id: format!("{subject}-app"),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            audience: vec![RESOURCE.to_string()],
            expires_at: None,
            claims: Map::new(),
        }
    }

    /// Tokens by their text: a principal, or a rejection; any other token is invalid.
    struct Tokens(HashMap<&'static str, Result<Arc<Principal>, Rejection>>);

    impl TokenVerifier for Tokens {
        fn verify<'a>(&'a self, token: &'a str) -> Verifying<'a> {
            let answer = self
                .0
                .get(token)
                .cloned()
                .unwrap_or_else(|| Err(Rejection::Invalid(format!("unknown token {token}"))));
            Box::pin(async move { answer })
        }
    }

    const ALL: &[&str] = &[
        "catalog:read",
        "loans:write",
        "loans:read",
        "advice:read",
        "secret:read",
    ];

    fn tokens() -> Arc<Tokens> {
        let ok = |p: Principal| Ok(Arc::new(p));
        Arc::new(Tokens(HashMap::from([
            ("alice-1", ok(principal("alice", ALL))),
            // A fresh token of the same caller, with fewer scopes.
            ("alice-2", ok(principal("alice", &["catalog:read"]))),
            ("bob", ok(principal("bob", ALL))),
            ("narrow", ok(principal("narrow", &["catalog:read"]))),
            ("writer", ok(principal("writer", &["loans:write"]))),
            (
                "down",
                Err(Rejection::Unavailable("the JWKS cannot be fetched".into())),
            ),
        ])))
    }

    type Stack<H = Library> = crate::server::router::Service<H>;

    fn stack(access: &'static Access) -> Stack {
        stack_of(Library, access)
    }

    /// [`stack`] around `handler`.
    fn stack_of<H: ServerHandler + Clone>(handler: H, access: &'static Access) -> Stack<H> {
        let server = McpServer::wrap(handler).unwrap().with_access(access);
        RouterOptions::default()
            .verifier(AuthSettings::new(ISSUER, RESOURCE), tokens())
            .into_service(server)
            .unwrap()
    }

    struct Answer {
        status: StatusCode,
        headers: HeaderMap,
        body: String,
    }

    impl Answer {
        fn header(&self, name: header::HeaderName) -> &str {
            self.headers
                .get(&name)
                .map_or("<none>", |v| v.to_str().unwrap())
        }

        fn json(&self) -> Value {
            serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
        }

        /// The JSON-RPC message of an SSE answer (the first `data:` event with an `id`).
        fn event(&self) -> Value {
            self.body
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .find(|message| message.get("id").is_some())
                .unwrap_or_else(|| panic!("no message in {:?}", self.body))
        }
    }

    /// Calls the service; reads the body until its end, or for an SSE stream until its first
    /// answer.
    async fn call<S>(service: &mut S, request: Request<Body>) -> Answer
    where
        S: tower_service::Service<Request<Body>, Response = axum::response::Response>,
        S::Error: std::fmt::Debug,
    {
        std::future::poll_fn(|cx| service.poll_ready(cx))
            .await
            .unwrap();
        let response = service.call(request).await.unwrap();
        let (parts, mut body) = response.into_parts();
        let mut text = String::new();
        let sse = parts
            .headers
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.to_str().unwrap().starts_with("text/event-stream"));
        loop {
            let frame = tokio::time::timeout(
                Duration::from_secs(5),
                std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)),
            )
            .await
            .expect("the body arrives");
            let Some(frame) = frame else { break };
            if let Ok(data) = frame.unwrap().into_data() {
                text.push_str(std::str::from_utf8(&data).unwrap());
            }
            if sse && text.contains("\"id\"") && text.ends_with("\n\n") {
                break;
            }
        }
        Answer {
            status: parts.status,
            headers: parts.headers,
            body: text,
        }
    }

    /// A 2026-07-28 POST (the `_meta` envelope added), with these extra headers.
    fn modern(method: &str, mut params: Value, headers: &[(&str, &str)]) -> Request<Body> {
        params.as_object_mut().unwrap().insert(
            "_meta".into(),
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"}
            }),
        );
        let name = params["name"]
            .as_str()
            .or_else(|| params["uri"].as_str())
            .map(str::to_string);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = post(body.to_string(), headers);
        let more = request.headers_mut();
        more.insert("mcp-protocol-version", "2026-07-28".parse().unwrap());
        more.insert("mcp-method", method.parse().unwrap());
        if let Some(name) = name {
            more.insert("mcp-name", name.parse().unwrap());
        }
        request
    }

    fn post(body: String, headers: &[(&str, &str)]) -> Request<Body> {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("/mcp")
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(Body::from(body)).unwrap()
    }

    fn bearer(token: &str) -> String {
        format!("Bearer {token}")
    }

    fn get(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
        let mut request = Request::builder()
            .method(Method::GET)
            .uri(path)
            .header(header::HOST, "localhost");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(Body::empty()).unwrap()
    }

    /// The text of a 2026-07-28 tools/call answer.
    fn tool_text(answer: &Answer) -> String {
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        answer.json()["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", answer.body))
            .to_string()
    }

    /// Every authorization answer: JSON, not cached.
    fn assert_auth_answer(answer: &Answer, status: u16, challenge: &str, body: Value) {
        assert_eq!(answer.status.as_u16(), status, "{}", answer.body);
        assert_eq!(answer.header(header::WWW_AUTHENTICATE), challenge);
        assert_eq!(answer.header(header::CONTENT_TYPE), "application/json");
        assert_eq!(answer.header(header::CACHE_CONTROL), "no-store");
        assert_eq!(answer.json(), body);
    }

    fn unauthenticated(scope: &str) -> (String, Value) {
        let scope = if scope.is_empty() {
            String::new()
        } else {
            format!(", scope=\"{scope}\"")
        };
        (
            format!("Bearer resource_metadata=\"{METADATA}\"{scope}"),
            json!({"error_description": "Authentication required"}),
        )
    }

    fn invalid(scope: &str) -> (String, Value) {
        (
            format!(
                "Bearer error=\"invalid_token\", error_description=\"The access token is invalid or expired\", resource_metadata=\"{METADATA}\", scope=\"{scope}\""
            ),
            json!({"error": "invalid_token", "error_description": "The access token is invalid or expired"}),
        )
    }

    fn insufficient(scope: &str) -> (String, Value) {
        (
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{METADATA}\", error_description=\"Required scope: {scope}\""
            ),
            json!({"error": "insufficient_scope", "error_description": format!("Required scope: {scope}")}),
        )
    }

    fn call_tool(name: &str, token: Option<&str>) -> Request<Body> {
        let auth = token.map(bearer);
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        modern(
            "tools/call",
            json!({"name": name, "arguments": {}}),
            &headers,
        )
    }

    #[tokio::test]
    async fn the_metadata_is_served_at_both_well_known_paths() {
        let mut service = stack(&REQUIRED);
        let document = json!({
            "resource": RESOURCE,
            "authorization_servers": [ISSUER],
            "scopes_supported": ["advice:read", "catalog:read", "loans:read", "loans:write", "secret:read"],
            "bearer_methods_supported": ["header"],
        });
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ] {
            let answer = call(&mut service, get(path, &[])).await;
            assert_eq!(answer.status, StatusCode::OK, "{path}");
            assert_eq!(answer.header(header::CONTENT_TYPE), "application/json");
            assert_eq!(answer.header(header::CACHE_CONTROL), "public, max-age=3600");
            assert_eq!(answer.json(), document, "{path}");
            // Members in the RFC's order.
            assert!(
                answer.body.starts_with(r#"{"resource":"#),
                "{}",
                answer.body
            );
        }
        let other = call(
            &mut service,
            get("/.well-known/oauth-protected-resource/other", &[]),
        )
        .await;
        assert_eq!(other.status, StatusCode::NOT_FOUND);
        let posted = Request::builder()
            .method(Method::POST)
            .uri("/.well-known/oauth-protected-resource")
            .header(header::HOST, "localhost")
            .body(Body::empty())
            .unwrap();
        let posted = call(&mut service, posted).await;
        assert_eq!(posted.status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(posted.header(header::ALLOW), "GET, HEAD, OPTIONS");

        // Readable from any origin (a browser-based client discovers the authorization server
        // before it has a token), and a preflight for the headers such a client adds is answered.
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ] {
            let answer = call(
                &mut service,
                get(path, &[("origin", "http://localhost:6274")]),
            )
            .await;
            assert_eq!(answer.status, StatusCode::OK, "{path}");
            assert_eq!(answer.header(header::ACCESS_CONTROL_ALLOW_ORIGIN), "*");
            assert_eq!(answer.json(), document, "{path}");
            let preflight = Request::builder()
                .method(Method::OPTIONS)
                .uri(path)
                .header(header::HOST, "localhost")
                .header(header::ORIGIN, "http://localhost:6274")
                .header(header::ACCESS_CONTROL_REQUEST_METHOD, "GET")
                .header(
                    header::ACCESS_CONTROL_REQUEST_HEADERS,
                    "mcp-protocol-version",
                )
                .body(Body::empty())
                .unwrap();
            let preflight = call(&mut service, preflight).await;
            assert_eq!(preflight.status, StatusCode::NO_CONTENT, "{path}");
            assert_eq!(preflight.header(header::ACCESS_CONTROL_ALLOW_ORIGIN), "*");
            assert_eq!(
                preflight.header(header::ACCESS_CONTROL_ALLOW_METHODS),
                "GET, HEAD, OPTIONS"
            );
            assert_eq!(
                preflight.header(header::ACCESS_CONTROL_ALLOW_HEADERS),
                "mcp-protocol-version"
            );
            assert_eq!(preflight.header(header::ACCESS_CONTROL_MAX_AGE), "86400");
            assert_eq!(preflight.body, "");
        }

        // `scopesSupported` given: listed as given.
        let mut listed = stack(&LISTED);
        let answer = call(
            &mut listed,
            get("/.well-known/oauth-protected-resource", &[]),
        )
        .await;
        assert_eq!(
            answer.json()["scopes_supported"],
            json!(["catalog:read", "loans:write"])
        );

        // In a router too.
        let server = McpServer::wrap(Library).unwrap().with_access(&REQUIRED);
        let mut router = RouterOptions::default()
            .verifier(AuthSettings::new(ISSUER, RESOURCE), tokens())
            .into_router(server);
        for path in [
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-protected-resource/mcp",
        ] {
            let answer = call(&mut router, get(path, &[])).await;
            assert_eq!(answer.status, StatusCode::OK, "{path}");
            assert_eq!(answer.json(), document);
        }
        let answer = call(&mut router, post("{}".into(), &[])).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED);

        // Without authorization the paths are not served.
        let server = McpServer::wrap(Library).unwrap();
        let mut open = RouterOptions::default().into_service(server).unwrap();
        let answer = call(&mut open, get("/.well-known/oauth-protected-resource", &[])).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn a_resource_at_the_root_has_its_metadata_at_the_well_known_path() {
        let server = McpServer::wrap(Library).unwrap().with_access(&REQUIRED);
        let mut service = RouterOptions::default()
            .verifier(
                AuthSettings::new(ISSUER, "https://mcp.example.com"),
                tokens(),
            )
            .into_service(server)
            .unwrap();
        let answer = call(
            &mut service,
            get("/.well-known/oauth-protected-resource", &[]),
        )
        .await;
        assert_eq!(answer.json()["resource"], "https://mcp.example.com");
        let answer = call(&mut service, post("{}".into(), &[])).await;
        assert_eq!(
            answer.header(header::WWW_AUTHENTICATE),
            "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource\", scope=\"catalog:read\""
        );
    }

    #[tokio::test]
    async fn no_token_is_401_naming_the_metadata_and_the_scopes() {
        let mut service = stack(&REQUIRED);
        let list = modern("tools/list", json!({}), &[]);
        let (challenge, body) = unauthenticated("catalog:read");
        assert_auth_answer(&call(&mut service, list).await, 401, &challenge, body);
        // The operation's own scopes are named too.
        let (challenge, body) = unauthenticated("catalog:read loans:write");
        let answer = call(&mut service, call_tool("borrow", None)).await;
        assert_auth_answer(&answer, 401, &challenge, body);
        // A token in the query is never read.
        let mut request = call_tool("search", None);
        *request.uri_mut() = "/mcp?access_token=alice-1".parse().unwrap();
        let (challenge, body) = unauthenticated("catalog:read");
        assert_auth_answer(&call(&mut service, request).await, 401, &challenge, body);
        // GET and DELETE need a token too.
        let (challenge, body) = unauthenticated("catalog:read");
        let answer = call(
            &mut service,
            get("/mcp", &[("accept", "text/event-stream")]),
        )
        .await;
        assert_auth_answer(&answer, 401, &challenge, body.clone());
        let delete = Request::builder()
            .method(Method::DELETE)
            .uri("/mcp")
            .header(header::HOST, "localhost")
            .header("mcp-session-id", "x")
            .body(Body::empty())
            .unwrap();
        assert_auth_answer(&call(&mut service, delete).await, 401, &challenge, body);
    }

    #[tokio::test]
    async fn a_token_that_fails_is_401_invalid_token_and_an_unreachable_server_503() {
        let mut service = stack(&REQUIRED);
        let (challenge, body) = invalid("catalog:read loans:write");
        let answer = call(&mut service, call_tool("borrow", Some("garbage"))).await;
        assert_auth_answer(&answer, 401, &challenge, body);
        let (challenge, body) = invalid("catalog:read");
        let answer = call(&mut service, call_tool("search", Some("garbage"))).await;
        assert_auth_answer(&answer, 401, &challenge, body);

        let answer = call(&mut service, call_tool("search", Some("down"))).await;
        assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(answer.header(header::RETRY_AFTER), "5");
        assert_eq!(answer.header(header::CONTENT_TYPE), "application/json");
        assert_eq!(answer.header(header::CACHE_CONTROL), "no-store");
        assert_eq!(answer.header(header::WWW_AUTHENTICATE), "<none>");
        assert_eq!(
            answer.json(),
            json!({
                "error": "temporarily_unavailable",
                "error_description": "The access token cannot be verified now; try again later"
            })
        );
    }

    #[tokio::test]
    async fn a_malformed_authorization_header_is_400_invalid_request() {
        let mut service = stack(&REQUIRED);
        let cases: [(&[(&str, &str)], &str); 4] = [
            (
                &[
                    ("authorization", "Bearer alice-1"),
                    ("authorization", "Bearer bob"),
                ],
                "Exactly one Authorization header is allowed",
            ),
            (
                &[("authorization", "Bearer")],
                "The Authorization header must be 'Bearer <token>'",
            ),
            (
                &[("authorization", "Bearer  alice-1")],
                "The Authorization header must be 'Bearer <token>'",
            ),
            (
                &[("authorization", "Bearer alice-1 extra")],
                "The Authorization header must be 'Bearer <token>'",
            ),
        ];
        for (headers, why) in cases {
            let request = modern("tools/list", json!({}), headers);
            let answer = call(&mut service, request).await;
            assert_auth_answer(
                &answer,
                400,
                &format!(
                    "Bearer error=\"invalid_request\", error_description=\"{why}\", resource_metadata=\"{METADATA}\", scope=\"catalog:read\""
                ),
                json!({"error": "invalid_request", "error_description": why}),
            );
        }
        // The scheme is case-insensitive.
        let request = call_tool("search", None);
        let (mut parts, body) = request.into_parts();
        parts
            .headers
            .insert("authorization", "bEaReR alice-1".parse().unwrap());
        let answer = call(&mut service, Request::from_parts(parts, body)).await;
        assert_eq!(tool_text(&answer), "search by alice");
    }

    /// RFC 6750 §3.1: a request whose `Authorization` has another scheme lacks bearer
    /// credentials, so it is answered as one without a token: `401` with the challenge and no
    /// error code where a token is needed, served anonymously where none is.
    #[tokio::test]
    async fn another_authorization_scheme_is_a_request_without_a_token() {
        let schemes = [
            "Basic YWxpY2U6c2VjcmV0",
            "Negotiate",
            "DPoP alice-1",
            "Bearer-ish alice-1",
        ];
        let mut service = stack(&REQUIRED);
        for value in schemes {
            let request = modern("tools/list", json!({}), &[("authorization", value)]);
            let answer = call(&mut service, request).await;
            let (challenge, body) = unauthenticated("catalog:read");
            assert_auth_answer(&answer, 401, &challenge, body);
        }
        let mut service = stack(&OPTIONAL);
        for value in schemes {
            let request = call_tool("search", None);
            let (mut parts, body) = request.into_parts();
            parts
                .headers
                .insert("authorization", value.parse().unwrap());
            let answer = call(&mut service, Request::from_parts(parts, body)).await;
            assert_eq!(tool_text(&answer), "search by anonymous", "{value}");
        }
    }

    #[tokio::test]
    async fn each_operation_kind_is_403_without_its_scopes_before_anything_runs() {
        let mut service = stack(&REQUIRED);
        let auth = [("authorization", "Bearer narrow")];
        let cases = [
            (
                "tools/call",
                json!({"name": "borrow", "arguments": {}}),
                "catalog:read loans:write",
            ),
            (
                "prompts/get",
                json!({"name": "advice"}),
                "catalog:read advice:read",
            ),
            (
                "resources/read",
                json!({"uri": "lib://secret"}),
                "catalog:read secret:read",
            ),
            (
                "resources/read",
                json!({"uri": "lib://loans/7"}),
                "catalog:read loans:read",
            ),
            // Subscribing to updates needs what reading needs (checked before any era rule).
            (
                "resources/subscribe",
                json!({"uri": "lib://secret"}),
                "catalog:read secret:read",
            ),
            (
                "resources/subscribe",
                json!({"uri": "lib://loans/7"}),
                "catalog:read loans:read",
            ),
        ];
        for (method, params, scope) in cases {
            let answer = call(&mut service, modern(method, params.clone(), &auth)).await;
            let (challenge, body) = insufficient(scope);
            assert_auth_answer(&answer, 403, &challenge, body);
        }
        // What needs no scope of its own passes, with the principal in the handler.
        let answer = call(
            &mut service,
            modern("tools/call", json!({"name": "search"}), &auth),
        )
        .await;
        assert_eq!(tool_text(&answer), "search by narrow");
        let answer = call(
            &mut service,
            modern("resources/read", json!({"uri": "lib://books/7"}), &auth),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        assert_eq!(
            answer.json()["result"]["contents"][0]["text"],
            "lib://books/7 for narrow"
        );
        let answer = call(
            &mut service,
            modern("prompts/get", json!({"name": "hello"}), &auth),
        )
        .await;
        assert_eq!(
            answer.json()["result"]["messages"][0]["content"]["text"],
            "hello for narrow"
        );
        // With every scope, the operations run.
        let full = [("authorization", "Bearer alice-1")];
        let answer = call(
            &mut service,
            modern("tools/call", json!({"name": "borrow"}), &full),
        )
        .await;
        assert_eq!(tool_text(&answer), "borrow by alice");
        let answer = call(
            &mut service,
            modern("resources/read", json!({"uri": "lib://loans/7"}), &full),
        )
        .await;
        assert_eq!(
            answer.json()["result"]["contents"][0]["text"],
            "lib://loans/7 for alice"
        );
        // A batch needs what any of its elements needs (rmcp then refuses the batch).
        let batch = json!([
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "borrow"}},
        ]);
        let answer = call(&mut service, post(batch.to_string(), &auth)).await;
        let (challenge, body) = insufficient("catalog:read loans:write");
        assert_auth_answer(&answer, 403, &challenge, body);
        // A name given twice: whichever one counts, its scopes are needed.
        let twice = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"borrow","name":"search"}}"#;
        let answer = call(&mut service, post(twice.to_string(), &auth)).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.body);
        // The server-wide scope: a token without it is refused everything.
        let writer = [("authorization", "Bearer writer")];
        let answer = call(&mut service, modern("tools/list", json!({}), &writer)).await;
        let (challenge, body) = insufficient("catalog:read");
        assert_auth_answer(&answer, 403, &challenge, body.clone());
        let answer = call(
            &mut service,
            get(
                "/mcp",
                &[
                    ("authorization", "Bearer writer"),
                    ("accept", "text/event-stream"),
                ],
            ),
        )
        .await;
        assert_auth_answer(&answer, 403, &challenge, body);
    }

    #[tokio::test]
    async fn optional_auth_lets_anonymous_callers_in_but_not_to_scoped_operations() {
        let mut service = stack(&OPTIONAL);
        let answer = call(&mut service, call_tool("search", None)).await;
        assert_eq!(tool_text(&answer), "search by anonymous");
        let answer = call(&mut service, call_tool("search", Some("narrow"))).await;
        assert_eq!(tool_text(&answer), "search by narrow");
        // A token that is sent must verify.
        let answer = call(&mut service, call_tool("search", Some("garbage"))).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            answer.header(header::WWW_AUTHENTICATE),
            format!(
                "Bearer error=\"invalid_token\", error_description=\"The access token is invalid or expired\", resource_metadata=\"{METADATA}\""
            )
        );
        // An operation with scopes needs a token: the challenge names them.
        let answer = call(&mut service, call_tool("borrow", None)).await;
        let (challenge, body) = unauthenticated("loans:write");
        assert_auth_answer(&answer, 401, &challenge, body);
        let answer = call(&mut service, call_tool("borrow", Some("narrow"))).await;
        let (challenge, body) = insufficient("loans:write");
        assert_auth_answer(&answer, 403, &challenge, body);
    }

    /// `completion/complete` of `reference` (a `ref` object), for `token`.
    fn complete(reference: Value, token: Option<&str>) -> Request<Body> {
        let auth = token.map(bearer);
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        let params = json!({"ref": reference, "argument": {"name": "id", "value": ""}});
        modern("completion/complete", params, &headers)
    }

    /// The candidates of a `completion/complete` answer.
    fn candidates(answer: &Answer) -> Value {
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        answer.json()["result"]["completion"]["values"].clone()
    }

    #[tokio::test]
    async fn completing_a_scoped_prompt_or_template_needs_its_scopes() {
        let mut service = stack(&REQUIRED);
        let advice = json!({"type": "ref/prompt", "name": "advice"});
        let loans = json!({"type": "ref/resource", "uri": "lib://loans/{id}"});
        // Refused as getting the prompt or reading the resources would be, before the
        // completion handler runs.
        for (reference, scope) in [
            (&advice, "catalog:read advice:read"),
            (&loans, "catalog:read loans:read"),
        ] {
            let answer = call(&mut service, complete(reference.clone(), Some("narrow"))).await;
            let (challenge, body) = insufficient(scope);
            assert_auth_answer(&answer, 403, &challenge, body);
            let answer = call(&mut service, complete(reference.clone(), None)).await;
            let (challenge, body) = unauthenticated(scope);
            assert_auth_answer(&answer, 401, &challenge, body);
        }
        // With the scopes, the handler runs for the caller.
        let answer = call(&mut service, complete(advice.clone(), Some("alice-1"))).await;
        assert_eq!(candidates(&answer), json!(["advice for alice"]));
        let answer = call(&mut service, complete(loans, Some("alice-1"))).await;
        assert_eq!(candidates(&answer), json!(["lib://loans/{id} for alice"]));
        // What has no scopes of its own completes with the server-wide ones.
        let hello = json!({"type": "ref/prompt", "name": "hello"});
        let answer = call(&mut service, complete(hello, Some("narrow"))).await;
        assert_eq!(candidates(&answer), json!(["hello for narrow"]));
        let books = json!({"type": "ref/resource", "uri": "lib://books/{id}"});
        let answer = call(&mut service, complete(books, Some("narrow"))).await;
        assert_eq!(candidates(&answer), json!(["lib://books/{id} for narrow"]));
        // A template is looked up by its text, as the completion dispatch does: a URI it
        // matches is not a template.
        let uri = json!({"type": "ref/resource", "uri": "lib://loans/7"});
        let answer = call(&mut service, complete(uri, Some("narrow"))).await;
        assert_eq!(candidates(&answer), json!(["lib://loans/7 for narrow"]));

        // Optional auth: an anonymous caller completes what has no scopes of its own only.
        let mut service = stack(&OPTIONAL);
        let answer = call(&mut service, complete(advice.clone(), None)).await;
        let (challenge, body) = unauthenticated("advice:read");
        assert_auth_answer(&answer, 401, &challenge, body);
        let answer = call(&mut service, complete(advice, Some("narrow"))).await;
        let (challenge, body) = insufficient("advice:read");
        assert_auth_answer(&answer, 403, &challenge, body);
        let hello = json!({"type": "ref/prompt", "name": "hello"});
        let answer = call(&mut service, complete(hello, None)).await;
        assert_eq!(candidates(&answer), json!(["hello for anonymous"]));
    }

    /// An open SSE answer, read event by event.
    struct Events {
        body: Body,
        buffer: String,
    }

    impl Events {
        /// Opens `request` on `service`: the answer must be an SSE stream.
        async fn open<H: ServerHandler + Clone>(
            service: &mut Stack<H>,
            request: Request<Body>,
        ) -> Events {
            std::future::poll_fn(|cx| tower_service::Service::poll_ready(service, cx))
                .await
                .unwrap();
            let response = tower_service::Service::call(service, request)
                .await
                .unwrap();
            let (parts, body) = response.into_parts();
            assert_eq!(parts.status, StatusCode::OK);
            assert_eq!(
                parts.headers.get(header::CONTENT_TYPE).unwrap(),
                "text/event-stream"
            );
            Events {
                body,
                buffer: String::new(),
            }
        }

        /// The next JSON-RPC message on the stream, or `None` when none arrives within `wait`.
        async fn next(&mut self, wait: Duration) -> Option<Value> {
            let deadline = tokio::time::Instant::now() + wait;
            loop {
                while let Some(end) = self.buffer.find("\n\n") {
                    let event: String = self.buffer.drain(..end + 2).collect();
                    let data: String = event
                        .lines()
                        .filter_map(|line| line.strip_prefix("data:"))
                        .map(str::trim)
                        .collect();
                    if !data.is_empty() {
                        return Some(serde_json::from_str(&data).unwrap());
                    }
                }
                let frame = tokio::time::timeout_at(
                    deadline,
                    std::future::poll_fn(|cx| std::pin::Pin::new(&mut self.body).poll_frame(cx)),
                )
                .await
                .ok()?;
                let frame = frame.expect("the stream stays open").unwrap();
                if let Ok(data) = frame.into_data() {
                    self.buffer.push_str(std::str::from_utf8(&data).unwrap());
                }
            }
        }
    }

    /// `subscriptions/listen` for the resources `uris`, for `token`.
    fn listen(uris: &[&str], token: Option<&str>) -> Request<Body> {
        let auth = token.map(bearer);
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        let params = json!({"notifications": {"resourceSubscriptions": uris}});
        modern("subscriptions/listen", params, &headers)
    }

    /// `notifications/resources/updated` for `uri` on the stream of listen request `1`.
    fn updated(uri: &str) -> Value {
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": uri, "_meta": {"io.modelcontextprotocol/subscriptionId": 1}}
        })
    }

    /// Waits until the listener of `events` is registered (after its acknowledgement was
    /// sent): sends updates of `uri` until one arrives, each time after one of `before` (if
    /// any), so that an update of `before` that reached the stream would arrive first. Every
    /// message that arrives until the stream is quiet must be an update of `uri`.
    async fn synchronise(events: &mut Events, before: Option<&str>, uri: &str) {
        synchronise_with(&crate::Notifier::of("library"), events, before, uri).await;
    }

    /// [`synchronise`] with the updates sent through `notifier`.
    async fn synchronise_with(
        notifier: &crate::Notifier,
        events: &mut Events,
        before: Option<&str>,
        uri: &str,
    ) {
        for _ in 0..100 {
            if let Some(before) = before {
                notifier.resource_updated(before).await;
            }
            notifier.resource_updated(uri).await;
            let Some(first) = events.next(Duration::from_millis(50)).await else {
                continue;
            };
            assert_eq!(first, updated(uri));
            while let Some(more) = events.next(Duration::from_millis(200)).await {
                assert_eq!(more, updated(uri));
            }
            return;
        }
        panic!("no update of {uri} arrived");
    }

    /// The next message on `events` that is not a late update of `sync` (the URI
    /// [`synchronise`] sent, of which a slow machine may deliver more after it returned).
    async fn after(events: &mut Events, sync: &str) -> Value {
        loop {
            let next = events
                .next(Duration::from_secs(5))
                .await
                .expect("a message");
            if next != updated(sync) {
                return next;
            }
        }
    }

    const LISTENED: [&str; 4] = [
        "lib://secret",
        "lib://listen/loans/7",
        "lib://listen/catalog",
        "lib://listen/books/7",
    ];

    /// [`REQUIRED`] with resources of its own for the listen tests (URIs no other test
    /// notifies).
    static LISTENING: Access = Access {
        resources: &[
            ("lib://secret", &["secret:read"]),
            ("lib://listen/catalog", &[]),
        ],
        templates: &[
            ("lib://listen/loans/{id}", &["loans:read"]),
            ("lib://listen/books/{id}", &[]),
        ],
        ..REQUIRED
    };

    #[tokio::test]
    async fn a_listener_is_not_told_of_the_resources_it_may_not_read() {
        let mut service = stack(&LISTENING);
        // `narrow` may not read the fixed resource `lib://secret` nor what the template
        // `lib://listen/loans/{id}` matches: the acknowledgement (what is honoured) leaves
        // them out, and the stream is opened for the rest.
        let mut events = Events::open(&mut service, listen(&LISTENED, Some("narrow"))).await;
        let ack = events
            .next(Duration::from_secs(5))
            .await
            .expect("the acknowledgement");
        assert_eq!(
            ack,
            json!({
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {
                    "notifications": {
                        "resourceSubscriptions": ["lib://listen/catalog", "lib://listen/books/7"]
                    },
                    "_meta": {"io.modelcontextprotocol/subscriptionId": 1}
                }
            })
        );
        synchronise(&mut events, Some("lib://secret"), "lib://listen/catalog").await;
        // Registered now: the withheld updates never come, the others do, in order.
        let notifier = crate::Notifier::of("library");
        let sync = "lib://listen/catalog";
        notifier.resource_updated("lib://secret").await;
        notifier.resource_updated("lib://listen/loans/7").await;
        notifier.resource_updated("lib://listen/books/7").await;
        let next = after(&mut events, sync).await;
        assert_eq!(next, updated("lib://listen/books/7"));
        notifier.resource_updated("lib://listen/loans/7").await;
        notifier.resource_updated("lib://secret").await;
        notifier.resource_updated("lib://listen/books/7").await;
        let next = after(&mut events, sync).await;
        assert_eq!(next, updated("lib://listen/books/7"));
        drop(events);

        // With the scopes, everything is honoured and delivered.
        let mut events = Events::open(&mut service, listen(&LISTENED, Some("alice-1"))).await;
        let ack = events
            .next(Duration::from_secs(5))
            .await
            .expect("the acknowledgement");
        assert_eq!(
            ack["params"]["notifications"],
            json!({"resourceSubscriptions": LISTENED})
        );
        synchronise(&mut events, None, "lib://listen/catalog").await;
        let notifier = crate::Notifier::of("library");
        notifier.resource_updated("lib://secret").await;
        notifier.resource_updated("lib://listen/loans/7").await;
        let next = after(&mut events, "lib://listen/catalog").await;
        assert_eq!(next, updated("lib://secret"));
        let next = after(&mut events, "lib://listen/catalog").await;
        assert_eq!(next, updated("lib://listen/loans/7"));
        drop(events);

        // Nothing it may read: nothing acknowledged (rmcp leaves an empty list out), no
        // refusal of the stream.
        let only = ["lib://secret"];
        let mut events = Events::open(&mut service, listen(&only, Some("narrow"))).await;
        let ack = events
            .next(Duration::from_secs(5))
            .await
            .expect("the acknowledgement");
        assert_eq!(ack["params"]["notifications"], json!({}));
        drop(events);

        // Optional auth: an anonymous listener follows what has no scopes of its own.
        let mut service = stack(&LISTENING_OPTIONAL);
        let mut events = Events::open(&mut service, listen(&LISTENED, None)).await;
        let ack = events
            .next(Duration::from_secs(5))
            .await
            .expect("the acknowledgement");
        assert_eq!(
            ack["params"]["notifications"],
            json!({"resourceSubscriptions": ["lib://listen/catalog", "lib://listen/books/7"]})
        );
    }

    /// [`LISTENING`] with `auth.required: false` and no server-wide scopes.
    static LISTENING_OPTIONAL: Access = Access {
        required: false,
        scopes: &[],
        ..LISTENING
    };

    #[tokio::test]
    async fn a_spec_without_auth_served_with_an_issuer_protects_everything() {
        let mut service = stack(&Access::OPEN);
        let answer = call(&mut service, call_tool("search", None)).await;
        let (challenge, body) = unauthenticated("");
        assert_auth_answer(&answer, 401, &challenge, body);
        let answer = call(&mut service, call_tool("borrow", Some("writer"))).await;
        assert_eq!(tool_text(&answer), "borrow by writer");
    }

    #[tokio::test]
    async fn a_spec_with_auth_is_not_served_without_it() {
        let server = McpServer::wrap(Library).unwrap().with_access(&OPTIONAL);
        let error = RouterOptions::default()
            .try_into_router(server)
            .expect_err("refused");
        assert_eq!(
            error.to_string(),
            "this server's spec requires authorization: set --auth-issuer (or MCP_AUTH_ISSUER) and --auth-resource (or MCP_AUTH_RESOURCE)"
        );
        let server = McpServer::wrap(Library).unwrap().with_access(&REQUIRED);
        let error = RouterOptions::default()
            .verifier(AuthSettings::new(ISSUER, "mcp.example.com/mcp"), tokens())
            .try_into_router(server)
            .expect_err("refused");
        assert_eq!(
            error.to_string(),
            "the auth resource 'mcp.example.com/mcp' is not an absolute http or https URI"
        );
    }

    #[tokio::test]
    #[should_panic(expected = "this server's spec requires authorization: set --auth-issuer")]
    async fn into_router_panics_for_a_spec_with_auth_and_no_authorization() {
        let server = McpServer::wrap(Library).unwrap().with_access(&REQUIRED);
        let _ = RouterOptions::default().into_router(server);
    }

    /// The names listed, and the list's `cacheScope`.
    async fn names(
        service: &mut Stack,
        method: &str,
        token: &str,
        key: &str,
        field: &str,
    ) -> (Vec<String>, Value) {
        let auth = bearer(token);
        let answer = call(
            service,
            modern(method, json!({}), &[("authorization", &auth)]),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        let result = &answer.json()["result"];
        let names = result[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item[field].as_str().unwrap().to_string())
            .collect();
        (names, result["cacheScope"].clone())
    }

    #[tokio::test]
    async fn list_visible_only_lists_what_the_caller_may_use() {
        let mut service = stack(&VISIBLE_ONLY);
        let cases = [
            ("tools/list", "tools", "name", ["search", "borrow"]),
            ("prompts/list", "prompts", "name", ["hello", "advice"]),
            (
                "resources/list",
                "resources",
                "uri",
                ["lib://catalog", "lib://secret"],
            ),
            (
                "resources/templates/list",
                "resourceTemplates",
                "uriTemplate",
                ["lib://books/{id}", "lib://loans/{id}"],
            ),
        ];
        // A list made for its caller is cached by that caller only.
        for (method, key, field, [open, scoped]) in cases {
            assert_eq!(
                names(&mut service, method, "narrow", key, field).await,
                (vec![open.to_string()], json!("private")),
                "{method}"
            );
            assert_eq!(
                names(&mut service, method, "alice-1", key, field).await,
                (vec![open.to_string(), scoped.to_string()], json!("private")),
                "{method}"
            );
        }
        // Without the switch everything is listed.
        let mut service = stack(&REQUIRED);
        let (listed, _) = names(&mut service, "tools/list", "narrow", "tools", "name").await;
        assert_eq!(listed, ["search", "borrow"]);
    }

    /// A `requestState` for `tools/call search {}` sealed for `principal` (a binding) by the
    /// server `library`.
    fn sealed_for(principal: Option<&Principal>) -> String {
        sealed_by("library", principal)
    }

    /// A `requestState` for `tools/call search {}` sealed for `principal` by the server
    /// `server`.
    fn sealed_by(server: &str, principal: Option<&Principal>) -> String {
        let digest = state::arguments_digest(Some(&Map::new()));
        let binding = principal.map(Principal::binding);
        state::policy_of(server)
            .unwrap()
            .load()
            .seal(
                Binding {
                    method: "tools/call",
                    tool: "search",
                    arguments: &digest,
                    principal: binding.as_deref(),
                },
                &json!({"v": 1}),
            )
            .unwrap()
    }

    fn with_state(token: Option<&str>, request_state: &str) -> Request<Body> {
        let auth = token.map(bearer);
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        let params = json!({"name": "search", "arguments": {}, "requestState": request_state});
        modern("tools/call", params, &headers)
    }

    /// Two servers of different names in one process (two generated routers in one
    /// application): each opens only the `requestState` it sealed, and a change raised through
    /// one reaches only its own listeners.
    #[tokio::test]
    async fn two_servers_in_one_process_keep_their_own_state_and_notifications() {
        let frozen = json!({
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32602,
                "message": "Invalid or expired requestState",
                "data": {"reason": "invalid_request_state"}
            }
        });
        let mut library = stack(&LISTENING_OPTIONAL);
        let mut annex = stack_of(Annex, &LISTENING_OPTIONAL);
        let by_library = sealed_by("library", None);
        let by_annex = sealed_by("annex", None);
        let answer = call(&mut library, with_state(None, &by_library)).await;
        assert_eq!(tool_text(&answer), "search by anonymous");
        let answer = call(&mut annex, with_state(None, &by_annex)).await;
        assert_eq!(tool_text(&answer), "search by anonymous");
        let answer = call(&mut library, with_state(None, &by_annex)).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST);
        assert_eq!(answer.json(), frozen);
        let answer = call(&mut annex, with_state(None, &by_library)).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST);
        assert_eq!(answer.json(), frozen);

        // A listener of each server, for URIs no other test notifies.
        let uri = |name: &str| format!("lib://listen/books/annex-{name}");
        let (from_library, from_annex, end, sync) =
            (uri("library"), uri("annex"), uri("end"), uri("sync"));
        let uris = [&from_library, &from_annex, &end, &sync].map(String::as_str);
        let to_library = crate::Notifier::of("library");
        let to_annex = crate::Notifier::of("annex");
        let mut library_events = Events::open(&mut library, listen(&uris, None)).await;
        let mut annex_events = Events::open(&mut annex, listen(&uris, None)).await;
        for events in [&mut library_events, &mut annex_events] {
            let ack = events
                .next(Duration::from_secs(5))
                .await
                .expect("the acknowledgement");
            assert_eq!(
                ack["params"]["notifications"],
                json!({"resourceSubscriptions": uris})
            );
        }
        synchronise_with(&to_library, &mut library_events, None, &sync).await;
        synchronise_with(&to_annex, &mut annex_events, None, &sync).await;
        // Each server's change, then an end mark from each: a listener sees its own server's
        // change and its end mark, nothing of the other server's in between.
        to_library.resource_updated(from_library.as_str()).await;
        to_annex.resource_updated(from_annex.as_str()).await;
        to_library.resource_updated(end.as_str()).await;
        to_annex.resource_updated(end.as_str()).await;
        assert_eq!(
            after(&mut library_events, &sync).await,
            updated(&from_library)
        );
        assert_eq!(after(&mut library_events, &sync).await, updated(&end));
        assert_eq!(after(&mut annex_events, &sync).await, updated(&from_annex));
        assert_eq!(after(&mut annex_events, &sync).await, updated(&end));
    }

    #[tokio::test]
    async fn a_request_state_opens_for_its_principal_only() {
        let frozen = json!({
            "jsonrpc": "2.0",
            "id": 1,
            "error": {
                "code": -32602,
                "message": "Invalid or expired requestState",
                "data": {"reason": "invalid_request_state"}
            }
        });
        let mut service = stack(&OPTIONAL);
        let alice = principal("alice", ALL);
        let for_alice = sealed_for(Some(&alice));
        // Its caller, with a fresh token: accepted.
        let answer = call(&mut service, with_state(Some("alice-2"), &for_alice)).await;
        assert_eq!(tool_text(&answer), "search by alice");
        // Another caller, or none: the frozen error.
        for token in [Some("bob"), None] {
            let answer = call(&mut service, with_state(token, &for_alice)).await;
            assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{token:?}");
            assert_eq!(answer.json(), frozen, "{token:?}");
        }
        // Sealed anonymously: opens anonymously only.
        let anonymous = sealed_for(None);
        let answer = call(&mut service, with_state(None, &anonymous)).await;
        assert_eq!(tool_text(&answer), "search by anonymous");
        let answer = call(&mut service, with_state(Some("alice-1"), &anonymous)).await;
        assert_eq!(answer.json(), frozen);
        // The boundary of requests rmcp cannot decode reads the principal as well.
        let params = json!({"name": "search", "arguments": {}, "requestState": for_alice, "inputResponses": 5});
        let answer = call(
            &mut service,
            modern("tools/call", params, &[("authorization", "Bearer bob")]),
        )
        .await;
        assert_eq!(
            answer.json()["error"]["message"],
            "Invalid or expired requestState"
        );
    }

    fn initialize(token: Option<&str>) -> Request<Body> {
        let auth = token.map(bearer);
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
        });
        post(body.to_string(), &headers)
    }

    fn in_session(session: &str, token: Option<&str>, body: Value) -> Request<Body> {
        let auth = token.map(bearer);
        let mut headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        headers.push(("mcp-session-id", session));
        headers.push(("mcp-protocol-version", "2025-11-25"));
        post(body.to_string(), &headers)
    }

    async fn open_session(service: &mut Stack, token: Option<&str>) -> String {
        let answer = call(service, initialize(token)).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        let session = answer.headers["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = call(service, in_session(&session, token, initialized)).await;
        assert_eq!(answer.status, StatusCode::ACCEPTED, "{}", answer.body);
        session
    }

    #[tokio::test]
    async fn a_legacy_session_belongs_to_the_caller_that_opened_it() {
        let not_found = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Session not found"}});
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let call_search = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search"}});
        for access in [&REQUIRED, &OPTIONAL] {
            let mut service = stack(access);
            let session = open_session(&mut service, Some("alice-1")).await;
            // Another caller: 404, as if the session did not exist.
            let mut others = vec![Some("bob")];
            if !access.required {
                others.push(None);
            }
            for other in others {
                let answer = call(&mut service, in_session(&session, other, list.clone())).await;
                assert_eq!(answer.status, StatusCode::NOT_FOUND, "{other:?}");
                assert_eq!(answer.header(header::CONTENT_TYPE), "application/json");
                assert_eq!(answer.json(), not_found, "{other:?}");
            }
            let auth = bearer("bob");
            let headers = [
                ("authorization", auth.as_str()),
                ("mcp-session-id", session.as_str()),
                ("mcp-protocol-version", "2025-11-25"),
                ("accept", "text/event-stream"),
            ];
            let answer = call(&mut service, get("/mcp", &headers)).await;
            assert_eq!(answer.status, StatusCode::NOT_FOUND);
            assert_eq!(answer.json(), not_found);
            let mut delete = get("/mcp", &headers);
            *delete.method_mut() = Method::DELETE;
            let answer = call(&mut service, delete).await;
            assert_eq!(answer.status, StatusCode::NOT_FOUND);
            assert_eq!(answer.json(), not_found);
            // Its opener, with a fresh token: the session is kept (the DELETE above did nothing).
            let answer = call(
                &mut service,
                in_session(&session, Some("alice-2"), call_search.clone()),
            )
            .await;
            assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
            assert_eq!(
                answer.event()["result"]["content"][0]["text"],
                "search by alice"
            );
        }
        // An anonymous session is not a caller's.
        let mut service = stack(&OPTIONAL);
        let session = open_session(&mut service, None).await;
        let answer = call(
            &mut service,
            in_session(&session, Some("alice-1"), list.clone()),
        )
        .await;
        assert_eq!(answer.json(), not_found);
        let answer = call(&mut service, in_session(&session, None, list)).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.event()["result"]["tools"][0]["name"], "search");
    }

    /// How long until a stream opened now ends: `None` when it is still open after `wait`
    /// (data on the way is read and dropped).
    async fn end_of(events: &mut Events, wait: Duration) -> Option<Duration> {
        let started = tokio::time::Instant::now();
        loop {
            let frame = tokio::time::timeout_at(
                started + wait,
                std::future::poll_fn(|cx| std::pin::Pin::new(&mut events.body).poll_frame(cx)),
            )
            .await
            .ok()?;
            match frame {
                None => return Some(started.elapsed()),
                Some(frame) => drop(frame.unwrap()),
            }
        }
    }

    /// A listen stream, legacy (`GET` in a session) or 2026-07-28 (`subscriptions/listen`),
    /// lasts no longer than the token it was opened with: it ends when the token expires (its
    /// `exp` plus the verifier's leeway, here none), and a stream opened with a token without
    /// `exp` goes on.
    #[tokio::test]
    async fn a_listen_stream_ends_when_its_token_expires() {
        let seconds =
            |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        // A stack whose `brief` token expires in two seconds (`alice-1` does not expire), and
        // how long until then.
        let expiring = || {
            let expires_at = seconds(std::time::SystemTime::now()) + 2;
            let brief = Principal {
                expires_at: Some(expires_at),
                ..principal("brief", ALL)
            };
            let tokens = Tokens(HashMap::from([
                ("brief", Ok(Arc::new(brief))),
                ("alice-1", Ok(Arc::new(principal("alice", ALL)))),
            ]));
            let settings = AuthSettings {
                leeway: Duration::ZERO,
                ..AuthSettings::new(ISSUER, RESOURCE)
            };
            let server = McpServer::wrap(Library).unwrap().with_access(&LISTENING);
            let service = RouterOptions::default()
                .verifier(settings, Arc::new(tokens))
                .into_service(server)
                .unwrap();
            let left = move || {
                (std::time::UNIX_EPOCH + Duration::from_secs(expires_at))
                    .duration_since(std::time::SystemTime::now())
                    .unwrap()
            };
            (service, left)
        };
        let on_time = |ended: Duration, left: Duration| {
            assert!(
                ended + Duration::from_millis(50) >= left && ended <= left + Duration::from_secs(3),
                "ended after {ended:?}, the token expired after {left:?}"
            );
        };
        let uri = "lib://listen/books/expiring";

        // 2026-07-28: the brief token's stream ends at `exp`; alice's goes on and is told.
        let (mut service, left) = expiring();
        let mut lasting = Events::open(&mut service, listen(&[uri], Some("alice-1"))).await;
        let ack = lasting.next(Duration::from_secs(5)).await.unwrap();
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        let left = left();
        let mut brief = Events::open(&mut service, listen(&[uri], Some("brief"))).await;
        let ended = end_of(&mut brief, Duration::from_secs(10)).await;
        on_time(ended.expect("the expiring token's stream ends"), left);
        synchronise(&mut lasting, None, uri).await;
        drop(lasting);

        // Legacy: the GET stream of a session opened with the brief token ends too.
        let (mut service, left) = expiring();
        let session = open_session(&mut service, Some("brief")).await;
        let auth = bearer("brief");
        let headers = [
            ("authorization", auth.as_str()),
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
            ("accept", "text/event-stream"),
        ];
        let left = left();
        let mut stream = Events::open(&mut service, get("/mcp", &headers)).await;
        let ended = end_of(&mut stream, Duration::from_secs(10)).await;
        on_time(
            ended.expect("the expiring token's legacy stream ends"),
            left,
        );
    }
}

/// The principal claim of a sealed `requestState`, on the policy itself.
mod principal_claim {
    use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
    use serde_json::json;

    use crate::state::{Binding, StatePolicy};

    const ALICE: &str = r#"["alice-app","https://as.example","alice"]"#;
    const BOB: &str = r#"["bob-app","https://as.example","bob"]"#;

    fn binding(principal: Option<&str>) -> Binding<'_> {
        Binding {
            method: "tools/call",
            tool: "t",
            arguments: "d",
            principal,
        }
    }

    #[test]
    fn a_state_opens_for_the_principal_it_was_sealed_for_only() {
        let p = StatePolicy::new(&[vec![7; 32]], std::time::Duration::from_secs(60), "a").unwrap();
        let for_alice = p.seal(binding(Some(ALICE)), &json!({})).unwrap();
        assert_eq!(p.open(&for_alice, binding(Some(ALICE))).unwrap(), json!({}));
        assert_eq!(
            p.open(&for_alice, binding(Some(BOB))).unwrap_err(),
            "sealed for another principal"
        );
        assert_eq!(
            p.open(&for_alice, binding(None)).unwrap_err(),
            "principal drift: sealed for a caller, sent anonymously"
        );
        let anonymous = p.seal(binding(None), &json!({})).unwrap();
        assert_eq!(
            p.open(&anonymous, binding(Some(ALICE))).unwrap_err(),
            "principal drift: sealed anonymously, sent by a caller"
        );
        assert_eq!(p.open(&anonymous, binding(None)).unwrap(), json!({}));
        // Salted: two states for one caller carry different claims.
        assert_ne!(p.seal(binding(Some(ALICE)), &json!({})).unwrap(), for_alice);
    }

    #[test]
    fn the_claim_is_salt_and_a_truncated_labelled_hash_decoded_strictly() {
        use sha2::{Digest, Sha256};
        let salt = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let tag = Sha256::new()
            .chain_update(b"mcp/request-state/principal:")
            .chain_update(salt)
            .chain_update(ALICE.as_bytes())
            .finalize();
        let mut raw = salt.to_vec();
        raw.extend_from_slice(&tag[..16]);
        let claim = URL_SAFE_NO_PAD.encode(&raw);
        assert!(crate::state::principal_matches(&claim, ALICE));
        assert!(!crate::state::principal_matches(&claim, BOB));
        // Padding, another alphabet's characters and a short tag do not decode as a match.
        assert!(!crate::state::principal_matches(
            &format!("{claim}="),
            ALICE
        ));
        assert!(!crate::state::principal_matches(
            &claim[..claim.len() - 2],
            ALICE
        ));
        let standard = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&raw);
        if standard != claim {
            assert!(!crate::state::principal_matches(&standard, ALICE));
        }
        // Non-canonical trailing bits: the last character changed within its unused bits.
        let mut bytes = claim.clone().into_bytes();
        let last = bytes.len() - 1;
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let index = alphabet.iter().position(|c| *c == bytes[last]).unwrap();
        bytes[last] = alphabet[index ^ 1];
        assert!(!crate::state::principal_matches(
            std::str::from_utf8(&bytes).unwrap(),
            ALICE
        ));
    }
}

/// The stdio principal from `MCP_PRINCIPAL_*`.
mod stdio_principal {
    use std::collections::HashMap;

    use crate::authorization::principal::from_env;

    fn read(vars: &[(&str, &str)]) -> Result<Option<crate::Principal>, String> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        from_env(|name| vars.get(name).cloned())
    }

    #[test]
    fn the_principal_comes_from_the_environment() {
        assert_eq!(read(&[]), Ok(None));
        let p = read(&[("MCP_PRINCIPAL_SUBJECT", "ada")]).unwrap().unwrap();
        assert_eq!(
            (p.subject.as_str(), p.client_id.as_str(), p.issuer.as_str()),
            ("ada", "ada", "")
        );
        assert!(p.scopes.is_empty());
        assert_eq!(p.binding(), r#"["ada",null,"ada"]"#);
        let p = read(&[
            ("MCP_PRINCIPAL_SUBJECT", "ada"),
            ("MCP_PRINCIPAL_ISSUER", "https://corp.example"),
            ("MCP_PRINCIPAL_CLIENT_ID", "desktop"),
            ("MCP_PRINCIPAL_SCOPES", " loans:read  loans:write "),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(p.issuer, "https://corp.example");
        assert_eq!(p.client_id, "desktop");
        assert_eq!(p.scopes, ["loans:read", "loans:write"]);
        assert_eq!(
            read(&[("MCP_PRINCIPAL_SCOPES", "a")]),
            Err("MCP_PRINCIPAL_SUBJECT must be set when any MCP_PRINCIPAL_* variable is (the stdio principal needs a subject)".to_string())
        );
        // An empty variable counts as unset.
        assert_eq!(read(&[("MCP_PRINCIPAL_SUBJECT", "")]), Ok(None));
    }
}

/// The scope decision's partial parse of a POST body (`guard.rs`), on its own.
mod operation_scopes {
    use std::sync::Arc;

    use crate::{
        Access, AuthSettings, Rejection, TokenVerifier, Verifying, authorization::guard::Guard,
    };

    struct Never;

    impl TokenVerifier for Never {
        fn verify<'a>(&'a self, _token: &'a str) -> Verifying<'a> {
            Box::pin(async { Err(Rejection::Invalid("never".into())) })
        }
    }

    static ACCESS: Access = Access {
        declared: true,
        required: true,
        scopes: &["s"],
        scopes_supported: &[],
        list_visible_only: false,
        tools: &[("borrow", &["w"]), ("both", &["w", "x"])],
        prompts: &[("advice", &["a"])],
        resources: &[("lib://secret", &["r"])],
        templates: &[("lib://loans/{id}", &["l"]), ("lib://{any}", &["any"])],
    };

    fn guard(access: &'static Access) -> Guard {
        Guard::new(
            &AuthSettings::new("https://as.example", "https://mcp.example/mcp"),
            Arc::new(Never),
            access,
        )
        .unwrap()
    }

    #[test]
    fn each_operation_names_its_own_scopes_and_other_values_are_skipped() {
        let g = guard(&ACCESS);
        let scopes = |body: &str| g.read(body.as_bytes()).scopes;
        assert_eq!(
            scopes(r#"{"method":"tools/call","params":{"name":"borrow"}}"#),
            ["w"]
        );
        // Escapes are read as rmcp reads them.
        assert_eq!(
            scopes(r#"{"meth\u006fd":"tools/call","params":{"n\u0061me":"b\u006frrow"}}"#),
            ["w"]
        );
        assert_eq!(
            scopes(
                r#"{"method":"prompts/get","params":{"name":"advice","arguments":{"name":"borrow"}}}"#
            ),
            ["a"]
        );
        // A fixed resource, then templates in order: the first match counts.
        assert_eq!(
            scopes(r#"{"method":"resources/read","params":{"uri":"lib://secret"}}"#),
            ["r"]
        );
        assert_eq!(
            scopes(r#"{"method":"resources/read","params":{"uri":"lib://loans/7"}}"#),
            ["l"]
        );
        assert_eq!(
            scopes(r#"{"method":"resources/read","params":{"uri":"lib://x"}}"#),
            ["any"]
        );
        assert!(scopes(r#"{"method":"resources/read","params":{"uri":"other://x"}}"#).is_empty());
        // A name only counts for its method.
        assert!(scopes(r#"{"method":"prompts/get","params":{"name":"borrow"}}"#).is_empty());
        assert!(scopes(r#"{"method":"tools/list","params":{"name":"borrow"}}"#).is_empty());
        // Values of other types are skipped, never an error.
        assert!(scopes(r#"{"method":1,"params":{"name":"borrow"}}"#).is_empty());
        assert!(scopes(r#"{"method":"tools/call","params":{"name":["borrow"]}}"#).is_empty());
        assert!(scopes(r#"{"method":"tools/call","params":[1,{"name":"borrow"}]}"#).is_empty());
        assert!(scopes(r#""tools/call""#).is_empty());
        // Not JSON: rmcp serves nothing from it.
        assert!(scopes(r#"{"method":"tools/call","params":{"name":"borrow"}"#).is_empty());
        // A byte order mark is skipped (as `jsonrpc::diagnose` skips it).
        assert_eq!(
            scopes("\u{feff}{\"method\":\"tools/call\",\"params\":{\"name\":\"borrow\"}}"),
            ["w"]
        );
        // Repeated keys and batches: everything named, without duplicates.
        assert_eq!(
            scopes(r#"{"method":"tools/call","params":{"name":"both","name":"borrow"}}"#),
            ["w", "x"]
        );
        assert_eq!(
            scopes(
                r#"[{"method":"prompts/get","params":{"name":"advice"}},7,{"method":"tools/call","params":{"name":"both"}}]"#
            ),
            ["a", "w", "x"]
        );
        // Without scopes of their own, bodies are not read.
        static SERVER_WIDE: Access = Access {
            tools: &[],
            prompts: &[],
            resources: &[],
            templates: &[("lib://{any}", &[])],
            ..ACCESS
        };
        let g = guard(&SERVER_WIDE);
        assert!(
            g.read(br#"{"method":"resources/read","params":{"uri":"lib://x"}}"#)
                .scopes
                .is_empty()
        );
    }

    #[test]
    fn completion_names_the_prompt_or_template_it_completes() {
        let g = guard(&ACCESS);
        let scopes = |body: &str| g.read(body.as_bytes()).scopes;
        assert_eq!(
            scopes(
                r#"{"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"advice"},"argument":{"name":"x","value":""}}}"#
            ),
            ["a"]
        );
        // A template by its text, exactly (the completion dispatch's lookup).
        assert_eq!(
            scopes(
                r#"{"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"lib://loans/{id}"}}}"#
            ),
            ["l"]
        );
        assert!(
            scopes(r#"{"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"lib://loans/7"}}}"#)
                .is_empty()
        );
        // Whatever `ref.type` says, both members count; repeated keys count each time.
        assert_eq!(
            scopes(
                r#"{"method":"completion/complete","params":{"ref":{"type":"ref/resource","name":"advice","uri":"lib://{any}"}}}"#
            ),
            ["a", "any"]
        );
        assert_eq!(
            scopes(
                r#"{"method":"completion/complete","params":{"ref":{"name":"x"},"ref":{"n\u0061me":"advice"}}}"#
            ),
            ["a"]
        );
        // `params.name` is not a reference, nor is `ref` outside `params`.
        assert!(
            scopes(r#"{"method":"completion/complete","params":{"name":"advice","argument":{"name":"advice"}}}"#)
                .is_empty()
        );
        assert!(
            scopes(r#"{"method":"completion/complete","ref":{"name":"advice"},"params":{}}"#)
                .is_empty()
        );
        // Another method's `ref` counts for nothing.
        assert!(
            scopes(r#"{"method":"prompts/get","params":{"name":"hello","ref":{"name":"advice"}}}"#)
                .is_empty()
        );
        // Values of other types are skipped.
        assert!(
            scopes(r#"{"method":"completion/complete","params":{"ref":["advice"]}}"#).is_empty()
        );
        assert!(
            scopes(r#"{"method":"completion/complete","params":{"ref":{"name":7}}}"#).is_empty()
        );
    }

    #[test]
    fn a_listener_is_withheld_the_resources_its_caller_may_not_read() {
        use crate::{Principal, authorization::guard::narrow_listen};
        let g = guard(&ACCESS);
        let body = r#"{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["lib://secret","lib://loans/7","other://x",7,"lib://secret"]}}}"#;
        let operation = g.read(body.as_bytes());
        // Listening needs no scope of its own; the resources are read, without duplicates.
        assert!(operation.scopes.is_empty());
        assert_eq!(
            operation.listened,
            ["lib://secret", "lib://loans/7", "other://x"]
        );
        let caller = |scopes: &[&str]| Principal {
            issuer: "https://as.example".into(),
            subject: "s".into(),
            client_id: "c".into(),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            audience: Vec::new(),
            expires_at: None,
            claims: Default::default(),
        };
        // The server-wide scope only: the fixed resource and the template match are withheld.
        assert_eq!(
            g.withheld(Some(&caller(&["s"])), &operation.listened),
            (
                vec!["lib://secret".to_string(), "lib://loans/7".to_string()],
                vec!["r", "l"]
            )
        );
        assert_eq!(
            g.withheld(Some(&caller(&["s", "l"])), &operation.listened),
            (vec!["lib://secret".to_string()], vec!["r"])
        );
        assert_eq!(
            g.withheld(Some(&caller(&["s", "l", "r"])), &operation.listened),
            (Vec::new(), Vec::new())
        );
        // Without the server-wide scope nothing may be read (the request is refused before).
        assert_eq!(
            g.withheld(Some(&caller(&["l", "r"])), &operation.listened)
                .0,
            ["lib://secret", "lib://loans/7", "other://x"]
        );
        // The body rmcp reads instead: the withheld URIs gone, every other member kept.
        let withheld = ["lib://secret".to_string(), "lib://loans/7".to_string()];
        let narrowed = narrow_listen(body.as_bytes(), &withheld).unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&narrowed).unwrap(),
            serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "subscriptions/listen",
                "params": {"notifications": {"toolsListChanged": true,
                    "resourceSubscriptions": ["other://x", 7]}}})
        );
        // Escaped keys and a byte order mark are read as rmcp reads them; in a batch, only
        // the listen messages change.
        let escaped = "\u{feff}{\"meth\\u006fd\":\"subscriptions/listen\",\"params\":{\"notifications\":{\"resourceSubscriptions\":[\"lib://secret\"]}}}";
        assert_eq!(g.read(escaped.as_bytes()).listened, ["lib://secret"]);
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(
                &narrow_listen(escaped.as_bytes(), &withheld).unwrap()
            )
            .unwrap(),
            serde_json::json!({"method": "subscriptions/listen",
                "params": {"notifications": {"resourceSubscriptions": []}}})
        );
        let batch = r#"[{"method":"resources/read","params":{"notifications":{"resourceSubscriptions":["lib://secret"]}}},{"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["lib://secret"]}}}]"#;
        assert_eq!(g.read(batch.as_bytes()).listened, ["lib://secret"]);
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(
                &narrow_listen(batch.as_bytes(), &withheld).unwrap()
            )
            .unwrap(),
            serde_json::json!([
                {"method": "resources/read", "params": {"notifications": {"resourceSubscriptions": ["lib://secret"]}}},
                {"method": "subscriptions/listen", "params": {"notifications": {"resourceSubscriptions": []}}}
            ])
        );
        // A body that does not parse is not rewritten (the front then refuses it).
        assert_eq!(narrow_listen(b"{\"method\":", &withheld), None);
        // Listened resources of another method, or not strings, are not read.
        assert!(
            g.read(br#"{"method":"tools/list","params":{"notifications":{"resourceSubscriptions":["lib://secret"]}}}"#)
                .listened
                .is_empty()
        );
        assert!(
            g.read(br#"{"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":"lib://secret"}}}"#)
                .listened
                .is_empty()
        );
    }

    #[test]
    fn repeated_members_and_entries_are_read_once_each() {
        let g = guard(&ACCESS);
        // A listen naming the same resources over and over: each once, in first-seen order.
        let mut uris = vec!["\"other://x\"".to_string(); 20_000];
        uris.extend(vec!["\"lib://secret\"".to_string(); 20_000]);
        uris.push("\"lib://loans/7\"".to_string());
        let listen = format!(
            r#"{{"method":"subscriptions/listen","params":{{"notifications":{{"resourceSubscriptions":[{}]}}}}}}"#,
            uris.join(",")
        );
        assert_eq!(
            g.read(listen.as_bytes()).listened,
            ["other://x", "lib://secret", "lib://loans/7"]
        );
        // A message repeating its method and its uri: what every occurrence needs, once.
        let mut members = vec![r#""method":"resources/read""#.to_string(); 5_000];
        members
            .push(r#""params":{"uri":"other://x","uri":"lib://secret","uri":"other://x"}"#.into());
        members.extend(vec![r#""method":"resources/read""#.to_string(); 5_000]);
        let read = format!("{{{}}}", members.join(","));
        assert_eq!(g.read(read.as_bytes()).scopes, ["r"]);
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        use crate::authorization::guard::metadata_location;
        assert_eq!(
            metadata_location("http://127.0.0.1:8000/mcp").unwrap(),
            (
                "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp".to_string(),
                "/.well-known/oauth-protected-resource/mcp".to_string()
            )
        );
        assert_eq!(
            metadata_location("https://mcp.example").unwrap().0,
            "https://mcp.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            metadata_location("https://mcp.example/").unwrap().1,
            "/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            metadata_location("https://mcp.example/t/mcp?v=1")
                .unwrap()
                .0,
            "https://mcp.example/.well-known/oauth-protected-resource/t/mcp?v=1"
        );
        assert_eq!(
            metadata_location("https://mcp.example/mcp#x").unwrap_err(),
            "the auth resource 'https://mcp.example/mcp#x' has a fragment"
        );
        assert_eq!(
            metadata_location("ftp://mcp.example/mcp").unwrap_err(),
            "the auth resource 'ftp://mcp.example/mcp' is not an absolute http or https URI"
        );
    }
}

/// The test kit (`testing.rs`) against a hand-written handler in the generated shape: every era
/// and transport, every kind of `CallError`, questions with their resolvers, hand-stepped rounds,
/// capabilities and principals. No sockets, no processes.
#[cfg(feature = "testing")]
mod kit {
    use std::sync::Arc;

    use rmcp::{
        ErrorData, RoleServer, ServerHandler,
        model::{
            CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
            ListToolsResult, PaginatedRequestParams, ServerConfig, Tool,
        },
        service::RequestContext,
    };
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    use crate::{
        Access, Ask, Capabilities, Catalog, Context, Elicitation, Era, Form, McpServer, Outcome,
        Roots, Round, Sampling, ServerMeta, Slot, ToolDef, ToolError,
        model::sampled_text,
        server_config,
        testing::{
            Answer, CallError, Client, Connect, Kit, Notification, Output, Question, Step,
            TEST_ISSUER, default_capabilities, principal,
        },
        unknown_tool, verify_request_state, wrapped_output,
    };

    #[derive(Debug, Deserialize, Serialize)]
    struct Backorder {
        confirm: bool,
    }

    const SCHEMA: &str =
        r#"{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}"#;

    impl Form for Backorder {
        const SCHEMA: &'static str = SCHEMA;
    }

    const TEXT: Option<&str> = Some(
        r#"{"type":"object","properties":{"result":{"type":"string"}},"required":["result"]}"#,
    );
    const NONE: &str = r#"{"type":"object"}"#;

    const fn tool(name: &'static str, input_schema: &'static str) -> ToolDef {
        ToolDef {
            name,
            title: None,
            description: "A kit test tool.",
            annotations: None,
            input_schema,
            output_schema: TEXT,
            resolved: &[],
        }
    }

    /// `order` asks resolver `confirm` unless the title is Dune; `pick` samples through
    /// `suggest`; `places` asks `folders` for roots; `sure` and `pay` ask from the tool body
    /// (legacy only); `whoami` says who calls; `fail` fails.
    const TOOLS: &[ToolDef] = &[
        tool(
            "order",
            r#"{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}"#,
        ),
        tool(
            "pick",
            r#"{"type":"object","properties":{"genre":{"type":"string","maxLength":10}},"required":["genre"]}"#,
        ),
        tool("places", NONE),
        tool("sure", NONE),
        tool("pay", NONE),
        tool("whoami", NONE),
        tool("fail", NONE),
    ];

    #[derive(Clone)]
    struct Shop {
        catalog: Arc<Catalog>,
    }

    #[derive(Deserialize)]
    struct OrderArgs {
        title: String,
    }

    #[derive(Deserialize)]
    struct PickArgs {
        genre: String,
    }

    #[derive(Deserialize)]
    struct NoArgs {}

    impl ServerHandler for Shop {
        fn get_info(&self) -> ServerConfig {
            server_config(&ServerMeta {
                name: "shop",
                version: "1",
                title: None,
                instructions: None,
                capabilities: Capabilities::default(),
            })
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            Ok(ListToolsResult::with_all_items(self.catalog.tools()))
        }

        fn get_tool(&self, name: &str) -> Option<Tool> {
            self.catalog.get(name)
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let CallToolRequestParams {
                name,
                arguments,
                input_responses,
                request_state,
                ..
            } = request;
            let request_state = verify_request_state(
                "tools/call",
                &name,
                arguments.as_ref(),
                request_state,
                &context,
            )?;
            let ctx = Context::new(context, name.as_ref(), input_responses, request_state);
            let catalog = &*self.catalog;
            match name.as_ref() {
                "order" => catalog.run(&name, arguments, |a| order(&ctx, a)).await,
                "pick" => catalog.run(&name, arguments, |a| pick(&ctx, a)).await,
                "places" => catalog.run(&name, arguments, |a| places(&ctx, a)).await,
                "sure" => catalog.run(&name, arguments, |a| sure(&ctx, a)).await,
                "pay" => catalog.run(&name, arguments, |a| pay(&ctx, a)).await,
                "whoami" => catalog.run(&name, arguments, |a| whoami(&ctx, a)).await,
                "fail" => {
                    catalog
                        .run(&name, arguments, |_: NoArgs| async {
                            Err(ToolError::new("broken"))
                        })
                        .await
                }
                _ => Err(unknown_tool(&name)),
            }
        }
    }

    async fn order(ctx: &Context, args: OrderArgs) -> Result<CallToolResponse, ToolError> {
        let round = Round::new(ctx);
        let ask = if args.title == "Dune" {
            Ask::value(Backorder { confirm: true })
        } else {
            Ask::elicit(format!("'{}' is out of stock. Order anyway?", args.title))
        };
        let Slot::Ready(outcome) = round
            .ask::<Elicitation<_>>("confirm", async { Ok(ask) })
            .await?
        else {
            return round.input_required();
        };
        let backorder: Backorder = outcome.into_value("backorder")?;
        let text = if backorder.confirm {
            format!("Ordered '{}'.", args.title)
        } else {
            "No order placed.".to_string()
        };
        wrapped_output(&text)
    }

    // Sampling and roots are deprecated by SEP-2577 (what the kit's clients answer).
    #[allow(deprecated)]
    async fn pick(ctx: &Context, args: PickArgs) -> Result<CallToolResponse, ToolError> {
        use rmcp::model::SamplingMessage;

        let round = Round::new(ctx);
        let message = SamplingMessage::user_text(format!("Suggest one {} book.", args.genre));
        let ask = Ask::sample(vec![message], 50);
        let Slot::Ready(answer) = round.ask::<Sampling>("suggest", async { Ok(ask) }).await? else {
            return round.input_required();
        };
        wrapped_output(&format!("Pick: {}", sampled_text(&answer).unwrap_or("?")))
    }

    #[allow(deprecated)]
    async fn places(ctx: &Context, _: NoArgs) -> Result<CallToolResponse, ToolError> {
        let round = Round::new(ctx);
        let Slot::Ready(roots) = round
            .ask::<Roots>("folders", async { Ok(Ask::roots()) })
            .await?
        else {
            return round.input_required();
        };
        let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
        wrapped_output(&format!("Roots: {}", uris.join(", ")))
    }

    async fn sure(ctx: &Context, _: NoArgs) -> Result<CallToolResponse, ToolError> {
        let text = match ctx.elicit::<Backorder>("Sure?").await? {
            Outcome::Accepted(b) => format!("sure: {}", b.confirm),
            Outcome::Declined => "declined".to_string(),
            Outcome::Cancelled => "cancelled".to_string(),
        };
        wrapped_output(&text)
    }

    async fn pay(ctx: &Context, _: NoArgs) -> Result<CallToolResponse, ToolError> {
        let outcome = ctx
            .elicit_url("Pay here.", "https://pay.example/b1", "pay-b1")
            .await?;
        if matches!(outcome, Outcome::Accepted(())) {
            ctx.elicitation_complete("pay-b1").await?;
            return wrapped_output(&"paid".to_string());
        }
        wrapped_output(&"not paid".to_string())
    }

    async fn whoami(ctx: &Context, _: NoArgs) -> Result<CallToolResponse, ToolError> {
        let who = ctx
            .principal()
            .map_or_else(|| "anonymous".to_string(), |p| p.subject.clone());
        wrapped_output(&who)
    }

    fn handler() -> Shop {
        Shop {
            catalog: Arc::new(Catalog::new(TOOLS)),
        }
    }

    fn shop() -> Kit<Shop> {
        Kit::new(McpServer::wrap(handler()).unwrap(), TOOLS)
    }

    /// `whoami` needs `who:read`; nothing else needs a scope, and a token is optional.
    static GUARDED: Access = Access {
        declared: true,
        required: false,
        scopes: &[],
        scopes_supported: &[],
        list_visible_only: false,
        tools: &[("whoami", &["who:read"])],
        prompts: &[],
        resources: &[],
        templates: &[],
    };

    fn guarded_shop() -> Kit<Shop> {
        let server = McpServer::wrap(handler()).unwrap().with_access(&GUARDED);
        Kit::new(server, TOOLS)
    }

    /// The four clients of `kit`, with the defaults.
    async fn four(kit: &Kit<Shop>) -> Vec<Client> {
        kit.clients(|c| c).await
    }

    /// A client of `era`.
    fn of(kit: &Kit<Shop>, era: Era) -> Connect<Shop> {
        match era {
            Era::Legacy => kit.legacy(),
            Era::Modern => kit.stateless(),
        }
    }

    fn text(result: &CallToolResult) -> String {
        result.content[0].as_text().unwrap().text.clone()
    }

    fn neuromancer_question() -> Question {
        Question::Form {
            resolver: Some("confirm".into()),
            message: "'Neuromancer' is out of stock. Order anyway?".into(),
            schema: serde_json::from_str(SCHEMA).unwrap(),
        }
    }

    fn invalid_state() -> CallError {
        CallError::Protocol {
            code: -32602,
            message: "Invalid or expired requestState".into(),
            data: Some(json!({"reason": "invalid_request_state"})),
        }
    }

    #[tokio::test]
    async fn four_clients_with_their_labels() {
        let kit = shop();
        let labels: Vec<&str> = four(&kit).await.iter().map(Client::label).collect();
        assert_eq!(
            labels,
            [
                "legacy stdio",
                "legacy http",
                "2026-07-28 stdio",
                "2026-07-28 http"
            ]
        );
    }

    #[tokio::test]
    async fn a_value_answers_without_a_question_and_tools_are_listed() {
        let kit = shop();
        for client in four(&kit).await {
            let label = client.label();
            let result = client.call_tool("order", json!({"title": "Dune"})).await;
            let result = result.unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(text(&result), "Ordered 'Dune'.", "{label}");
            assert_eq!(
                result.structured_content,
                Some(json!({"result": "Ordered 'Dune'."})),
                "{label}"
            );
            assert_eq!(client.questions(), [], "{label}");
            let names: Vec<String> = client
                .list_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            assert_eq!(
                names,
                ["order", "pick", "places", "sure", "pay", "whoami", "fail"],
                "{label}"
            );
            let typed: String = client
                .call_typed("order", &json!({"title": "Dune"}), Output::Wrapped)
                .await
                .unwrap();
            assert_eq!(typed, "Ordered 'Dune'.", "{label}");
            client.close().await;
        }
    }

    #[tokio::test]
    async fn an_answered_question_names_its_resolver_on_both_eras() {
        let kit = shop();
        for client in four(&kit).await {
            let label = client.label();
            client.answer_elicitation(|_| Answer::accept(Backorder { confirm: true }));
            let result = client
                .call_tool("order", json!({"title": "Neuromancer"}))
                .await
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(text(&result), "Ordered 'Neuromancer'.", "{label}");
            assert_eq!(client.questions(), [neuromancer_question()], "{label}");
            client.answer_elicitation(|_| Answer::accept(json!({"confirm": false})));
            let result = client
                .call_tool("order", json!({"title": "Neuromancer"}))
                .await
                .unwrap();
            assert_eq!(text(&result), "No order placed.", "{label}");
            assert_eq!(client.take_questions().len(), 2, "{label}");
            assert_eq!(client.questions(), [], "{label}");
        }
    }

    #[tokio::test]
    async fn decline_cancel_and_a_mismatched_answer_are_tool_errors() {
        let kit = shop();
        for client in four(&kit).await {
            let label = client.label();
            let call = || client.call_tool("order", json!({"title": "Neuromancer"}));
            client.decline();
            assert_eq!(
                call().await.unwrap_err(),
                CallError::Tool("Error executing tool order: Resolver for parameter 'backorder' could not resolve: elicitation was decline".into()),
                "{label}"
            );
            client.cancel();
            assert_eq!(
                call().await.unwrap_err(),
                CallError::Tool("Error executing tool order: Resolver for parameter 'backorder' could not resolve: elicitation was cancel".into()),
                "{label}"
            );
            client.answer_elicitation(|_| Answer::accept(json!({"confirm": "yes"})));
            let mismatch = match client.era() {
                Era::Legacy => "Resolver 'confirm': Received",
                Era::Modern => "Resolver 'confirm' received",
            };
            assert_eq!(
                call().await.unwrap_err(),
                CallError::Tool(format!(
                    "Error executing tool order: {mismatch} an accepted elicitation whose content does not match the requested schema: /confirm (type): \"yes\" is not of type \"boolean\""
                )),
                "{label}"
            );
            assert_eq!(
                client.questions(),
                [
                    neuromancer_question(),
                    neuromancer_question(),
                    neuromancer_question()
                ],
                "{label}"
            );
        }
    }

    #[tokio::test]
    async fn an_unscripted_question_is_reported_with_the_question() {
        let kit = shop();
        for client in four(&kit).await {
            let label = client.label();
            let error = client
                .call_tool("order", json!({"title": "Neuromancer"}))
                .await
                .unwrap_err();
            assert_eq!(
                error,
                CallError::Unscripted(neuromancer_question()),
                "{label}"
            );
            let error = client.call_tool("places", json!({})).await.unwrap_err();
            let roots = Question::Roots {
                resolver: Some("folders".into()),
            };
            assert_eq!(error, CallError::Unscripted(roots), "{label}");
        }
    }

    #[tokio::test]
    async fn sampling_and_roots_are_answered_from_the_script() {
        let kit = shop();
        for client in four(&kit).await {
            let label = client.label();
            client.sample_text("Dune").roots(["file:///a", "file:///b"]);
            let result = client
                .call_tool("pick", json!({"genre": "scifi"}))
                .await
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(text(&result), "Pick: Dune", "{label}");
            let result = client.call_tool("places", json!({})).await.unwrap();
            assert_eq!(text(&result), "Roots: file:///a, file:///b", "{label}");
            let questions = client.questions();
            let Question::Sampling { resolver, params } = &questions[0] else {
                panic!("{label}: not sampling: {questions:?}");
            };
            assert_eq!(resolver.as_deref(), Some("suggest"), "{label}");
            assert_eq!(params["maxTokens"], 50, "{label}");
            assert_eq!(
                params["messages"],
                json!([{"role": "user", "content": {"type": "text", "text": "Suggest one scifi book."}}]),
                "{label}"
            );
            let roots = Question::Roots {
                resolver: Some("folders".into()),
            };
            assert_eq!(questions[1..], [roots], "{label}");
        }
    }

    #[tokio::test]
    async fn a_sampling_answer_can_be_made_from_the_question_text() {
        let kit = shop();
        for client in four(&kit).await {
            let label = client.label();
            client.sample_text_with(|question| {
                let asked = question.sampling_text().expect("a sampling question");
                format!("{} answered", asked.len())
            });
            let result = client
                .call_tool("pick", json!({"genre": "scifi"}))
                .await
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            // "Suggest one scifi book." is 23 characters.
            assert_eq!(text(&result), "Pick: 23 answered", "{label}");
            let questions = client.questions();
            assert_eq!(
                questions[0].sampling_text().as_deref(),
                Some("Suggest one scifi book."),
                "{label}"
            );
            assert_eq!(questions[0].message(), None, "{label}");
        }
        let several = Question::Sampling {
            resolver: None,
            params: json!({"messages": [
                {"role": "user", "content": {"type": "text", "text": "one"}},
                {"role": "assistant", "content": [{"type": "image", "data": "", "mimeType": "image/png"}, {"type": "text", "text": "two"}]},
                {"role": "user", "content": [{"type": "text", "text": "three"}]}
            ]}),
        };
        assert_eq!(several.sampling_text().as_deref(), Some("one\ntwo\nthree"));
        let roots = Question::Roots { resolver: None };
        assert_eq!(roots.sampling_text(), None);
    }

    #[tokio::test]
    async fn a_client_may_declare_everything_but_elicitation() {
        let kit = shop();
        let mut everything_but_elicitation = default_capabilities();
        everything_but_elicitation.elicitation = None;
        let clients = kit
            .clients(|c| c.capabilities(everything_but_elicitation.clone()))
            .await;
        for client in clients {
            let label = client.label();
            client.decline().sample_text("Dune");
            let error = client
                .call_tool("order", json!({"title": "Neuromancer"}))
                .await
                .unwrap_err();
            assert!(
                matches!(&error, CallError::Protocol { code: -32021, .. }),
                "{label}: {error:?}"
            );
            let result = client
                .call_tool("pick", json!({"genre": "scifi"}))
                .await
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(text(&result), "Pick: Dune", "{label}");
        }
    }

    #[tokio::test]
    async fn a_client_without_capabilities_gets_minus_32021() {
        let kit = shop();
        let clients = kit
            .clients(|c| c.capabilities(ClientCapabilities::default()))
            .await;
        for client in clients {
            let label = client.label();
            client.decline();
            let error = client
                .call_tool("order", json!({"title": "Neuromancer"}))
                .await
                .unwrap_err();
            assert_eq!(
                error,
                CallError::Protocol {
                    code: -32021,
                    message: "Client did not declare the form elicitation capability required by resolver 'confirm'".into(),
                    data: Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
                },
                "{label}"
            );
            assert_eq!(client.questions(), [], "{label}");
        }
    }

    #[tokio::test]
    async fn the_wrapper_times_out_calls_on_every_transport() {
        // No time at all: every call is past its deadline before its handler runs.
        let server = McpServer::wrap(handler())
            .unwrap()
            .tool_timeout(std::time::Duration::ZERO);
        let kit = Kit::new(server, TOOLS);
        for client in four(&kit).await {
            let label = client.label();
            assert_eq!(
                client.call_tool("whoami", json!({})).await.unwrap_err(),
                CallError::Tool(
                    "Error executing tool whoami: the call did not finish within its timeout of 0 ms"
                        .into()
                ),
                "{label}"
            );
            // An undeclared tool has the server-wide timeout too.
            assert_eq!(
                client.call_tool("nope", json!({})).await.unwrap_err(),
                CallError::Tool(
                    "Error executing tool nope: the call did not finish within its timeout of 0 ms"
                        .into()
                ),
                "{label}"
            );
        }
    }

    #[tokio::test]
    async fn invalid_arguments_protocol_output_and_client_errors() {
        let kit = shop();
        for client in four(&kit).await {
            let label = client.label();
            assert_eq!(
                client.call_tool("order", json!({})).await.unwrap_err(),
                CallError::InvalidArguments(vec![
                    "(root) (required): \"title\" is a required property".into()
                ]),
                "{label}"
            );
            assert_eq!(
                client
                    .call_tool("pick", json!({"genre": "romance novels"}))
                    .await
                    .unwrap_err(),
                CallError::InvalidArguments(vec![
                    "/genre (maxLength): \"romance novels\" is longer than 10 characters".into()
                ]),
                "{label}"
            );
            assert_eq!(
                client.call_tool("fail", json!({})).await.unwrap_err(),
                CallError::Tool("Error executing tool fail: broken".into()),
                "{label}"
            );
            assert_eq!(
                client.call_tool("nope", json!({})).await.unwrap_err(),
                CallError::Protocol {
                    code: -32602,
                    message: "Unknown tool: nope".into(),
                    data: None
                },
                "{label}"
            );
            let output: Result<i64, _> = client
                .call_typed("order", &json!({"title": "Dune"}), Output::Wrapped)
                .await;
            assert_eq!(
                output.unwrap_err(),
                CallError::Output(
                    "tool 'order': invalid type: string \"Ordered 'Dune'.\", expected i64 (the output was \"Ordered 'Dune'.\")".into()
                ),
                "{label}"
            );
            assert_eq!(
                client.call_tool("order", json!([1])).await.unwrap_err(),
                CallError::Client("the arguments must be a JSON object, not [1]".into()),
                "{label}"
            );
        }
    }

    #[tokio::test]
    async fn a_tool_body_asks_on_legacy_connections_only() {
        let kit = shop();
        for client in four(&kit).await {
            let label = client.label();
            client.answer_elicitation(|q| match q {
                Question::Url { .. } => Answer::accept_url(),
                _ => Answer::accept(json!({"confirm": true})),
            });
            let sure = client.call_tool("sure", json!({})).await;
            let pay = client.call_tool("pay", json!({})).await;
            if client.era() == Era::Modern {
                let no_back_channel = CallError::Protocol {
                    code: -32600,
                    message: "Cannot send 'elicitation/create': this transport context has no back-channel for server-initiated requests.".into(),
                    data: None,
                };
                assert_eq!(sure.unwrap_err(), no_back_channel, "{label}");
                assert_eq!(pay.unwrap_err(), no_back_channel, "{label}");
                assert_eq!(client.questions(), [], "{label}");
                continue;
            }
            assert_eq!(text(&sure.unwrap()), "sure: true", "{label}");
            assert_eq!(text(&pay.unwrap()), "paid", "{label}");
            assert_eq!(
                client.questions(),
                [
                    Question::Form {
                        resolver: None,
                        message: "Sure?".into(),
                        schema: serde_json::from_str(SCHEMA).unwrap(),
                    },
                    Question::Url {
                        resolver: None,
                        message: "Pay here.".into(),
                        url: "https://pay.example/b1".into(),
                        id: "pay-b1".into(),
                    }
                ],
                "{label}"
            );
            assert_eq!(
                client.wait_for_notifications(1).await,
                [Notification {
                    method: "notifications/elicitation/complete".into(),
                    params: json!({"elicitationId": "pay-b1"}),
                }],
                "{label}"
            );
        }
    }

    #[tokio::test]
    async fn rounds_step_a_call_by_hand_and_a_forged_state_is_refused() {
        let kit = shop();
        let clients = [
            kit.stateless().connect().await,
            kit.stateless().http().connect().await,
        ];
        for client in clients {
            let label = client.label();
            let mut rounds = client.rounds("order", json!({"title": "Neuromancer"}));
            let Step::InputRequired {
                questions,
                request_state,
            } = rounds.send().await.unwrap()
            else {
                panic!("{label}: no input_required");
            };
            assert_eq!(questions, [neuromancer_question()], "{label}");
            assert!(request_state.is_some(), "{label}");
            assert_eq!(rounds.request_state(), request_state.as_deref(), "{label}");
            rounds.answer("confirm", Answer::accept(json!({"confirm": true})));
            let Step::Complete(result) = rounds.send().await.unwrap() else {
                panic!("{label}: not complete");
            };
            assert_eq!(text(&result), "Ordered 'Neuromancer'.", "{label}");

            // Answered from the script, once with a forged state.
            client.answer_elicitation(|_| Answer::accept(json!({"confirm": false})));
            let mut rounds = client.rounds("order", json!({"title": "Neuromancer"}));
            rounds.send().await.unwrap();
            rounds.answer_from_script();
            let sealed = rounds.request_state().unwrap().to_string();
            rounds.set_request_state(Some(format!("{sealed}x")));
            assert_eq!(rounds.send().await.unwrap_err(), invalid_state(), "{label}");
            rounds.set_request_state(Some(sealed));
            rounds.answer_from_script();
            let Step::Complete(result) = rounds.send().await.unwrap() else {
                panic!("{label}: not complete");
            };
            assert_eq!(text(&result), "No order placed.", "{label}");
            assert_eq!(
                client.questions(),
                [neuromancer_question(), neuromancer_question()],
                "{label}"
            );
        }
    }

    #[tokio::test]
    #[should_panic(
        expected = "rounds() steps 2026-07-28 calls; the legacy stdio client is answered mid-call"
    )]
    async fn rounds_are_for_the_2026_era() {
        let kit = shop();
        let client = kit.legacy().connect().await;
        let _ = client.rounds("order", json!({"title": "Dune"}));
    }

    #[tokio::test]
    async fn each_stdio_connection_has_its_own_principal() {
        let kit = shop();
        let ada = kit
            .legacy()
            .principal(principal("ada", &[]))
            .connect()
            .await;
        let bob = kit
            .stateless()
            .principal(principal("bob", &[]))
            .connect()
            .await;
        let nobody = kit.legacy().connect().await;
        for (client, who) in [(&ada, "ada"), (&bob, "bob"), (&nobody, "anonymous")] {
            let result = client.call_tool("whoami", json!({})).await.unwrap();
            assert_eq!(text(&result), who, "{}", client.label());
        }
        // A requestState sealed for bob is refused to ada.
        let ada = kit
            .stateless()
            .principal(principal("ada", &[]))
            .connect()
            .await;
        let mut bobs = bob.rounds("order", json!({"title": "Neuromancer"}));
        bobs.send().await.unwrap();
        let mut adas = ada.rounds("order", json!({"title": "Neuromancer"}));
        adas.set_request_state(bobs.request_state().map(str::to_string));
        assert_eq!(adas.send().await.unwrap_err(), invalid_state());
    }

    const METADATA: &str = "http://localhost/.well-known/oauth-protected-resource/mcp";

    #[tokio::test]
    async fn over_http_the_principal_passes_the_real_guard() {
        let kit = guarded_shop();
        for era in [Era::Legacy, Era::Modern] {
            let ada = of(&kit, era)
                .http()
                .principal(principal("ada", &["who:read"]))
                .connect()
                .await;
            let result = ada.call_tool("whoami", json!({})).await.unwrap();
            assert_eq!(text(&result), "ada", "{}", ada.label());

            let bob = of(&kit, era)
                .http()
                .principal(principal("bob", &[]))
                .connect()
                .await;
            assert_eq!(
                bob.call_tool("whoami", json!({})).await.unwrap_err(),
                CallError::Refused {
                    status: 403,
                    www_authenticate: Some(format!(
                        "Bearer error=\"insufficient_scope\", scope=\"who:read\", resource_metadata=\"{METADATA}\", error_description=\"Required scope: who:read\""
                    )),
                },
                "{}",
                bob.label()
            );
            // bob may still order.
            let result = bob.call_tool("order", json!({"title": "Dune"})).await;
            assert_eq!(text(&result.unwrap()), "Ordered 'Dune'.", "{}", bob.label());

            let refused = of(&kit, era).http().bearer("forged").try_connect().await;
            assert_eq!(
                refused.map(|c: Client| c.label()).unwrap_err(),
                CallError::Refused {
                    status: 401,
                    www_authenticate: Some(format!(
                        "Bearer error=\"invalid_token\", error_description=\"The access token is invalid or expired\", resource_metadata=\"{METADATA}\""
                    )),
                }
            );
        }
        // On stdio scopes are not enforced: the principal is the caller.
        let bob = kit
            .legacy()
            .principal(principal("bob", &[]))
            .connect()
            .await;
        let result = bob.call_tool("whoami", json!({})).await.unwrap();
        assert_eq!(text(&result), "bob");
    }

    #[tokio::test]
    #[should_panic(expected = "a bearer token is sent over HTTP only")]
    async fn a_bearer_token_is_for_http() {
        let _ = shop().legacy().bearer("t").connect().await;
    }

    #[test]
    fn a_principal_for_tests() {
        let p = principal("ada", &["a", "b"]);
        assert_eq!(p.issuer, TEST_ISSUER);
        assert_eq!(p.subject, "ada");
        assert_eq!(p.client_id, "ada");
        assert_eq!(p.scopes, ["a", "b"]);
        assert_eq!(p.audience, ["http://localhost/mcp"]);
    }
}

/// The per-request wrapper (`operation.rs`): the order of the concurrency gates, the deadline
/// counted from the request's arrival, cancellation and the drain's abort, and the exact texts.
/// On tokio's paused clock, so every instant is exact.
mod gates {
    use std::{
        sync::{
            Arc,
            atomic::{AtomicBool, Ordering},
        },
        time::Duration,
    };

    use rmcp::model::ErrorCode;
    use tokio::time::{Instant, sleep};
    use tokio_util::sync::CancellationToken;

    use super::{complete, text};
    use crate::{
        Operations, Shutdown, ToolOperations,
        catalog::tools::error_result,
        operations::operation::{
            Gates, Stop, request_cancelled, shut_down_before_request_finished, shutting_down,
        },
    };

    /// `nap`: 400 ms, two at once; `slow`: one at once, no timeout of its own; `work`: nothing
    /// of its own.
    static OPERATIONS: Operations = Operations {
        tools: &[
            ToolOperations {
                name: "nap",
                timeout_ms: Some(400),
                max_concurrency: Some(2),
            },
            ToolOperations {
                name: "slow",
                timeout_ms: None,
                max_concurrency: Some(1),
            },
            ToolOperations {
                name: "work",
                timeout_ms: None,
                max_concurrency: None,
            },
        ],
        prompts: &["greet"],
        ..Operations::NONE
    };

    /// The spec's server-wide limits: 1 s, three at once.
    static LIMITED: Operations = Operations {
        timeout_ms: Some(1000),
        max_concurrency: Some(3),
        ..OPERATIONS
    };

    /// A call that sleeps `ms` and says when it finished (ms after `start`).
    async fn nap(start: Instant, ms: u64) -> u128 {
        sleep(Duration::from_millis(ms)).await;
        start.elapsed().as_millis()
    }

    fn no_slot(whose: &'static str, limit: u32, source: &'static str, ms: u64) -> Stop {
        Stop::NoSlot {
            whose,
            limit,
            source,
            timeout: Duration::from_millis(ms),
        }
    }

    #[test]
    fn the_texts() {
        let cases = [
            (
                Stop::TimedOut(Duration::from_millis(400)),
                "Error executing tool nap: the call did not finish within its timeout of 400 ms",
            ),
            (
                no_slot("the tool's", 2, "maxConcurrency", 400),
                "Error executing tool nap: too many calls at once: no slot of the tool's 2 (maxConcurrency) came free within the call's timeout of 400 ms",
            ),
            (
                no_slot("the server's", 1, "--max-concurrency", 400),
                "Error executing tool nap: too many calls at once: no slot of the server's 1 (--max-concurrency) came free within the call's timeout of 400 ms",
            ),
            (
                Stop::Aborted,
                "Error executing tool nap: the server shut down before the call finished",
            ),
        ];
        for (stop, expected) in cases {
            let message = stop.message().unwrap();
            let result = complete(error_result("nap", Some(&message)));
            assert_eq!(result.is_error, Some(true));
            assert_eq!(text(&result), expected);
        }
        assert_eq!(Stop::Cancelled.message(), None);
        let cancelled = request_cancelled();
        assert_eq!(
            (cancelled.code, cancelled.message.as_ref()),
            (ErrorCode(-32800), "Request cancelled")
        );
        let refused = shutting_down();
        assert_eq!(
            (refused.code, refused.message.as_ref()),
            (
                ErrorCode(-32000),
                "Server is shutting down; try again later"
            )
        );
        let aborted = shut_down_before_request_finished();
        assert_eq!(
            (aborted.code, aborted.message.as_ref()),
            (
                ErrorCode(-32000),
                "Server shut down before the request finished"
            )
        );
    }

    #[test]
    fn timeouts_a_tools_own_then_the_flag_then_the_spec() {
        let spec = Gates::new(&LIMITED, None, None, Shutdown::default());
        assert_eq!(spec.timeout("nap"), Some(Duration::from_millis(400)));
        assert_eq!(spec.timeout("work"), Some(Duration::from_millis(1000)));
        assert_eq!(
            spec.timeout("undeclared"),
            Some(Duration::from_millis(1000))
        );
        let flag = Gates::new(
            &LIMITED,
            Some(Duration::from_millis(200)),
            None,
            Shutdown::default(),
        );
        assert_eq!(flag.timeout("nap"), Some(Duration::from_millis(400)));
        assert_eq!(flag.timeout("work"), Some(Duration::from_millis(200)));
        let none = Gates::new(&OPERATIONS, None, None, Shutdown::default());
        assert_eq!(none.timeout("work"), None);
        assert_eq!(Gates::default().timeout("nap"), None);
    }

    #[tokio::test(start_paused = true)]
    async fn three_naps_at_once_two_run_and_time_out_one_finds_no_slot() {
        let gates = Gates::new(&OPERATIONS, None, None, Shutdown::default());
        let ct = CancellationToken::new();
        let start = Instant::now();
        let arrival = start.into_std();
        let (a, b, c) = tokio::join!(
            gates.run_tool("nap", arrival, &ct, nap(start, 1000)),
            gates.run_tool("nap", arrival, &ct, nap(start, 1000)),
            gates.run_tool("nap", arrival, &ct, nap(start, 1000)),
        );
        let timed_out = Err(Stop::TimedOut(Duration::from_millis(400)));
        assert_eq!(
            [a, b, c],
            [
                timed_out,
                timed_out,
                Err(no_slot("the tool's", 2, "maxConcurrency", 400))
            ]
        );
        assert_eq!(start.elapsed(), Duration::from_millis(400));
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_waits_for_a_slot_within_its_timeout() {
        let gates = Gates::new(&OPERATIONS, None, None, Shutdown::default());
        let ct = CancellationToken::new();
        let start = Instant::now();
        let arrival = start.into_std();
        let (a, b, c) = tokio::join!(
            gates.run_tool("nap", arrival, &ct, nap(start, 150)),
            gates.run_tool("nap", arrival, &ct, nap(start, 150)),
            gates.run_tool("nap", arrival, &ct, nap(start, 150)),
        );
        assert_eq!([a, b, c], [Ok(150), Ok(150), Ok(300)]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_tools_gate_comes_before_the_servers() {
        // Two server slots; `slow` has one slot of its own. The second `slow` call waits for
        // the tool's slot without holding a server slot, so `work` runs at once.
        let gates = Gates::new(&OPERATIONS, None, Some(2), Shutdown::default());
        let ct = CancellationToken::new();
        let start = Instant::now();
        let arrival = start.into_std();
        let (first, second, work) = tokio::join!(
            gates.run_tool("slow", arrival, &ct, nap(start, 500)),
            gates.run_tool("slow", arrival, &ct, nap(start, 500)),
            async {
                // After both `slow` calls took or waited for their slots.
                sleep(Duration::from_millis(10)).await;
                gates.run_tool("work", arrival, &ct, nap(start, 100)).await
            },
        );
        assert_eq!([first, second, work], [Ok(500), Ok(1000), Ok(110)]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_servers_gate_refuses_with_the_flags_name() {
        let gates = Gates::new(&OPERATIONS, None, Some(1), Shutdown::default());
        let ct = CancellationToken::new();
        let start = Instant::now();
        let arrival = start.into_std();
        let (work, nap_call) = tokio::join!(
            gates.run_tool("work", arrival, &ct, nap(start, 1000)),
            gates.run_tool("nap", arrival, &ct, nap(start, 10)),
        );
        assert_eq!(work, Ok(1000));
        assert_eq!(
            nap_call,
            Err(no_slot("the server's", 1, "--max-concurrency", 400))
        );
        // From the spec, the limit is named after its field.
        let spec = Gates::new(&LIMITED, None, None, Shutdown::default());
        let start = Instant::now();
        let arrival = start.into_std();
        let (a, b, c, d) = tokio::join!(
            spec.run_tool("work", arrival, &ct, nap(start, 2000)),
            spec.run_tool("work", arrival, &ct, nap(start, 2000)),
            spec.run_tool("work", arrival, &ct, nap(start, 2000)),
            spec.run_tool("work", arrival, &ct, nap(start, 10)),
        );
        let timed_out = Err(Stop::TimedOut(Duration::from_millis(1000)));
        assert_eq!(
            [a, b, c, d],
            [
                timed_out,
                timed_out,
                timed_out,
                Err(no_slot("the server's", 3, "limits.maxConcurrency", 1000))
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_counts_from_the_arrival() {
        let gates = Gates::new(&OPERATIONS, None, None, Shutdown::default());
        let ct = CancellationToken::new();
        let arrived = Instant::now();
        // The request waited 300 ms before the wrapper ran (on the wire, in rmcp's queue).
        sleep(Duration::from_millis(300)).await;
        let start = Instant::now();
        let late = gates
            .run_tool("nap", arrived.into_std(), &ct, nap(start, 200))
            .await;
        assert_eq!(late, Err(Stop::TimedOut(Duration::from_millis(400))));
        assert_eq!(start.elapsed(), Duration::from_millis(100));
        // Past its deadline before it started, a call with a free slot times out at once,
        // without running, even a handler that would answer at once.
        let start = Instant::now();
        let ran = AtomicBool::new(false);
        let later = gates
            .run_tool("nap", arrived.into_std(), &ct, async {
                ran.store(true, Ordering::SeqCst);
                0
            })
            .await;
        assert_eq!(later, Err(Stop::TimedOut(Duration::from_millis(400))));
        assert_eq!(start.elapsed(), Duration::ZERO);
        assert!(!ran.load(Ordering::SeqCst));
    }

    /// Sets its flag when dropped: the call's future was dropped, not left to run.
    struct Dropped(Arc<AtomicBool>);

    impl Drop for Dropped {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancelled_call_is_dropped_at_once() {
        let gates = Gates::new(&OPERATIONS, None, None, Shutdown::default());
        let ct = CancellationToken::new();
        let dropped = Arc::new(AtomicBool::new(false));
        let start = Instant::now();
        let guard = Dropped(Arc::clone(&dropped));
        let call = async move {
            let _guard = guard;
            nap(start, 10_000).await
        };
        let cancel = async {
            sleep(Duration::from_millis(50)).await;
            ct.cancel();
        };
        let (result, ()) =
            tokio::join!(gates.run_tool("slow", start.into_std(), &ct, call), cancel);
        assert_eq!(result, Err(Stop::Cancelled));
        assert!(dropped.load(Ordering::SeqCst));
        assert_eq!(start.elapsed(), Duration::from_millis(50));
        // Its slot was given back: the next call of the tool (one at once) runs at once.
        let fresh = CancellationToken::new();
        let next = tokio::time::timeout(
            Duration::from_secs(1),
            gates.run_tool("slow", start.into_std(), &fresh, nap(start, 1)),
        )
        .await;
        assert_eq!(next, Ok(Ok(51)));
        // A call whose request is already cancelled does not start.
        let never = gates
            .run_tool("work", start.into_std(), &ct, nap(start, 1))
            .await;
        assert_eq!(never, Err(Stop::Cancelled));
    }

    #[tokio::test(start_paused = true)]
    async fn the_drains_timeout_ends_the_calls_still_running() {
        let shutdown = Shutdown::default();
        let gates = Gates::new(&OPERATIONS, None, None, shutdown.clone());
        let ct = CancellationToken::new();
        let start = Instant::now();
        let admitted = shutdown.admit(false).expect("admitted before the drain");
        let call = async {
            let result = gates
                .run_tool("work", start.into_std(), &ct, nap(start, 30_000))
                .await;
            drop(admitted);
            result
        };
        let ((), result) = tokio::join!(shutdown.drain(Duration::from_secs(1)), call);
        assert_eq!(result, Err(Stop::Aborted));
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        assert_eq!(shutdown.in_flight(), 0);
        // Draining: a new call is refused, a call's continuation is admitted.
        assert!(shutdown.admit(false).is_none());
        assert!(shutdown.admit(true).is_some());
    }
}
