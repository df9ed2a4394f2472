//! The kit's view of a call and a real client's agree: the calls of `tests/agreement.json`
//! through the test kit, on both eras and both transports, give exactly the results written
//! there; `peers/tests/python/test_kit_agreement.py` checks the Python SDK client (mcp 2.3.0,
//! stdio, the built binary) against the same file.

use bookshop::generated::runtime::codegen::rmcp::model::CallToolResult;
use bookshop::generated::testing::{Answer, CallError, TestClient, TestServer};
use bookshop::handlers::Bookshop;
use serde_json::{Value, json};

fn agreement() -> Value {
    serde_json::from_str(include_str!("agreement.json")).expect("agreement.json is JSON")
}

/// A result as the file holds it: `{content, structuredContent, isError}`. The kit reports an
/// `isError` result as `CallError::Tool` with its text; the server's error results are that
/// one text block without structured content (its `error_result`).
fn view(result: Result<CallToolResult, CallError>) -> Value {
    match result {
        Ok(result) => json!({
            "content": serde_json::to_value(&result.content).expect("content is JSON"),
            "structuredContent": result.structured_content,
            "isError": result.is_error.unwrap_or(false),
        }),
        Err(CallError::Tool(text)) => json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": null,
            "isError": true,
        }),
        Err(other) => panic!("expected a result, got {other:?}"),
    }
}

/// The answer a call's `elicitation` describes.
fn answer(elicitation: &Value) -> Answer {
    match elicitation["action"].as_str() {
        Some("accept") => Answer::accept(elicitation["content"].clone()),
        Some("decline") => Answer::Decline,
        Some("cancel") => Answer::Cancel,
        other => panic!("unknown elicitation action {other:?}"),
    }
}

/// Scripts `client` as the call says: its answer to the question, the sampled text.
fn script(client: &TestClient, call: &Value) {
    if let Some(elicitation) = call.get("elicitation") {
        let elicitation = elicitation.clone();
        client.answer_elicitation(move |_| answer(&elicitation));
    }
    if let Some(text) = call.get("sampled") {
        client.sample_text(text.as_str().expect("sampled is a string"));
    }
}

async fn check(era: &str, clients: Vec<TestClient>) {
    let agreement = agreement();
    let expected = &agreement["results"][era];
    for client in clients {
        for call in agreement["calls"].as_array().expect("calls") {
            let name = call["name"].as_str().expect("name");
            script(&client, call);
            let result = client
                .call_tool(
                    call["tool"].as_str().expect("tool"),
                    call["arguments"].clone(),
                )
                .await;
            assert_eq!(view(result), expected[name], "{}: {name}", client.label());
        }
    }
}

#[tokio::test]
async fn legacy_results_are_the_agreed_ones() {
    let server = TestServer::new(Bookshop::default());
    let clients = vec![
        server.legacy().stdio().connect().await,
        server.legacy().http().connect().await,
    ];
    check("legacy", clients).await;
}

#[tokio::test]
async fn results_of_2026_07_28_are_the_agreed_ones() {
    let server = TestServer::new(Bookshop::default());
    let clients = vec![
        server.stateless().stdio().connect().await,
        server.stateless().http().connect().await,
    ];
    check("2026-07-28", clients).await;
}

#[test]
fn every_call_has_a_result_on_both_eras() {
    let agreement = agreement();
    let mut names: Vec<&str> = (agreement["calls"].as_array().expect("calls").iter())
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    names.sort();
    for era in ["legacy", "2026-07-28"] {
        let results = agreement["results"][era].as_object().expect("results");
        let mut keys: Vec<&str> = results.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, names, "{era}");
    }
}
