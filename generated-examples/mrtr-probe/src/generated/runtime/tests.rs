//! Unit tests of the parts of the runtime that need no connection.

use rmcp::model::{CallToolResponse, CallToolResult};
use serde::Deserialize;
use serde_json::json;

use super::{Catalog, Outcome, Output, ToolDef, ToolError, wrapped_output};

const DEFS: &[ToolDef] = &[ToolDef {
    name: "t",
    title: None,
    description: "A test tool.",
    annotations: None,
    input_schema: r#"{"type":"object","properties":{"n":{"type":"integer","maximum":5}},"required":["n"],"additionalProperties":false}"#,
    output: Output::Wrapped(r#"{"type":"integer"}"#),
    resolved: &["hidden"],
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
    let text = text(&result);
    assert!(text.starts_with("Error executing tool t: "), "{text}");
    assert!(
        text.contains("/n: 9 is greater than the maximum of 5"),
        "{text}"
    );
    assert!(text.contains("extra"), "{text}");
    assert!(!text.contains("hidden"), "{text}");
    assert_eq!(text.lines().count(), 2, "{text}");
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
fn tools_list_wraps_non_object_output() {
    let catalog = Catalog::new(DEFS);
    let tool = serde_json::to_value(catalog.get("t").expect("tool")).expect("json");
    assert_eq!(
        tool["outputSchema"],
        json!({"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]})
    );
    assert_eq!(tool["inputSchema"]["required"], json!(["n"]));
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
    let object = complete(super::object_output(&Point { x: 1 }).expect("object"));
    assert_eq!(object.structured_content, Some(json!({"x": 1})));
    assert_eq!(text(&object), "{\n  \"x\": 1\n}");
    let wrapped = complete(wrapped_output(&vec![1, 2]).expect("wrapped"));
    assert_eq!(wrapped.structured_content, Some(json!({"result": [1, 2]})));
    assert_eq!(text(&wrapped), "[\n  1,\n  2\n]");
    let string = complete(wrapped_output(&"hi").expect("string"));
    assert_eq!(text(&string), "hi");
    let blocks = vec![rmcp::model::ContentBlock::text("a")];
    let content = complete(super::content_output(blocks).expect("content"));
    assert_eq!(text(&content), "a");
    assert_eq!(content.structured_content, None);
}
