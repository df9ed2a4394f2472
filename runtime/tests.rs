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

mod request_state {
    use std::time::Duration;

    use serde_json::json;

    use super::super::state::{
        Binding, StatePolicy, arguments_digest, digest, invalid_state_error,
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
    fn digests_are_canonical_and_the_error_is_frozen() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "é"}});
        let b = json!({"a": {"x": "é", "y": [1, {"c": 3, "d": 2}]}, "b": 1});
        assert_eq!(digest(&a), digest(&b));
        assert_eq!(digest(&a).len(), 22);
        assert_ne!(digest(&a), digest(&json!({"b": 2})));
        assert_eq!(arguments_digest(None), digest(&json!({})));
        let error = invalid_state_error();
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"code": -32602, "message": "Invalid or expired requestState",
                   "data": {"reason": "invalid_request_state"}})
        );
    }
}
