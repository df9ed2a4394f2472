//! Multi-round-trip (MRTR) on 2026-07-28 connections: the seed examples driven by rmcp's client
//! (`ClientLifecycleMode::Discover`, auto-driven `call_tool`) over stdio and Streamable HTTP,
//! and the probe example driven round by round with `call_tool_once`.
#![allow(deprecated)]

mod common;

use std::collections::BTreeMap;

use common::{Question, Session, TestClient, Transport};
use rmcp::{
    ErrorData,
    model::{CallToolRequestParams, CallToolResponse, ElicitResult, ElicitationAction},
    service::ServiceError,
};
use serde_json::{Value, json};

over_both_transports!(
    bookshop_in_stock_asks_nothing,
    bookshop_backorder_accepted,
    bookshop_backorder_refused,
    bookshop_backorder_declined_or_cancelled,
    bookshop_recommend_samples,
    bookshop_missing_capabilities_give_32021,
    files_four_outcomes_and_no_question_for_an_empty_folder,
    files_missing_capability_gives_32021,
    probe_batches_independent_questions,
);

fn backorder_question() -> Question {
    Question::Form {
        message: "'Neuromancer' is out of stock (2-3 weeks). Order anyway?".into(),
        schema: json!({
            "description": "The customer's answer when a title is out of stock.",
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "description": "Order anyway and wait?"}},
            "required": ["confirm"]
        }),
    }
}

fn server_info(name: &str, version: &str) -> Value {
    json!({"io.modelcontextprotocol/serverInfo": {"name": name, "version": version}})
}

async fn bookshop_in_stock_asks_nothing(transport: Transport) {
    let client = TestClient::full();
    let session = Session::modern("bookshop", transport, client.clone()).await;
    let result = session
        .call("order_book", json!({"title": "Dune"}))
        .await
        .expect("no protocol error");
    assert_eq!(
        common::only_text(&result),
        "Ordered 'Dune'; it arrives tomorrow."
    );
    assert_eq!(
        serde_json::to_value(&result.meta).unwrap(),
        server_info("Bookshop", "1.0.0")
    );
    assert_eq!(
        session.text("reserve_book", json!({"title": "Dune"})).await,
        "Reserved 'Dune' (6 copies left)."
    );
    assert_eq!(client.asked(), vec![]);
    // tools/list: a cacheable result with resultType, ttlMs/cacheScope and serverInfo.
    let list = session.service.list_tools(None).await.expect("tools/list");
    let list = serde_json::to_value(&list).unwrap();
    assert_eq!(list["resultType"], "complete");
    assert_eq!(list["ttlMs"], 0);
    assert_eq!(list["cacheScope"], "private");
    assert_eq!(list["_meta"], server_info("Bookshop", "1.0.0"));
    assert_eq!(list["tools"].as_array().unwrap().len(), 5);
    session.close().await;
}

async fn bookshop_backorder_accepted(transport: Transport) {
    let client = TestClient::full().accept(json!({"confirm": true}));
    let session = Session::modern("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .text("order_book", json!({"title": "Neuromancer"}))
            .await,
        "Backordered 'Neuromancer'; it ships in 2-3 weeks."
    );
    assert_eq!(client.asked(), vec![backorder_question()]);
    session.close().await;
}

async fn bookshop_backorder_refused(transport: Transport) {
    let client = TestClient::full().accept(json!({"confirm": false}));
    let session = Session::modern("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .text("order_book", json!({"title": "Neuromancer"}))
            .await,
        "No order placed."
    );
    assert_eq!(client.asked(), vec![backorder_question()]);
    session.close().await;
}

async fn bookshop_backorder_declined_or_cancelled(transport: Transport) {
    let client = TestClient::full()
        .answer(ElicitResult::new(ElicitationAction::Decline))
        .answer(ElicitResult::new(ElicitationAction::Cancel));
    let session = Session::modern("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .error_text("order_book", json!({"title": "Neuromancer"}))
            .await,
        "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was decline"
    );
    assert_eq!(
        session
            .error_text("order_book", json!({"title": "Neuromancer"}))
            .await,
        "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was cancel"
    );
    assert_eq!(
        client.asked(),
        vec![backorder_question(), backorder_question()]
    );
    assert_eq!(*client.script.unscripted.lock().unwrap(), 0);
    session.close().await;
}

async fn bookshop_recommend_samples(transport: Transport) {
    let client = TestClient::full().sample("Dune");
    let session = Session::modern("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .text("recommend_book", json!({"genre": "scifi"}))
            .await,
        "Today's scifi pick: Dune"
    );
    assert_eq!(
        client.asked(),
        vec![Question::Sample(json!({
            "messages": [{"role": "user", "content": {"type": "text",
                "text": "Suggest one scifi book title. Answer with the title only."}}],
            "maxTokens": 50
        }))]
    );
    session.close().await;
}

async fn bookshop_missing_capabilities_give_32021(transport: Transport) {
    let client = TestClient::with_capabilities(json!({}));
    let session = Session::modern("bookshop", transport, client.clone()).await;
    let error = session
        .protocol_error("order_book", json!({"title": "Neuromancer"}))
        .await;
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.message,
        "Client did not declare the form elicitation capability required by resolver 'confirm_backorder'"
    );
    assert_eq!(
        error.data,
        Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}}))
    );
    let error = session
        .protocol_error("recommend_book", json!({"genre": "scifi"}))
        .await;
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.message,
        "Client did not declare the sampling capability required by resolver 'suggest_title'"
    );
    assert_eq!(
        error.data,
        Some(json!({"requiredCapabilities": {"sampling": {}}}))
    );
    assert_eq!(
        session.text("order_book", json!({"title": "Dune"})).await,
        "Ordered 'Dune'; it arrives tomorrow."
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

fn delete_question() -> Question {
    Question::Form {
        message: "/tmp/project has 2 file(s). Delete anyway?".into(),
        schema: json!({
            "description": "The user's confirmation.",
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"]
        }),
    }
}

async fn files_four_outcomes_and_no_question_for_an_empty_folder(transport: Transport) {
    let client = TestClient::full()
        .accept(json!({"ok": false}))
        .answer(ElicitResult::new(ElicitationAction::Decline))
        .answer(ElicitResult::new(ElicitationAction::Cancel))
        .accept(json!({"ok": true}));
    let session = Session::modern("files", transport, client.clone()).await;
    let path = json!({"path": "/tmp/project"});
    assert_eq!(
        session.text("delete_folder", path.clone()).await,
        "kept the folder"
    );
    assert_eq!(
        session.text("delete_folder", path.clone()).await,
        "declined: folder not deleted"
    );
    assert_eq!(
        session.text("delete_folder", path.clone()).await,
        "cancelled: folder not deleted"
    );
    assert_eq!(
        session.text("delete_folder", path.clone()).await,
        "deleted /tmp/project"
    );
    assert_eq!(client.asked(), vec![delete_question(); 4]);
    assert_eq!(
        session
            .text("delete_folder", json!({"path": "/tmp/empty"}))
            .await,
        "deleted /tmp/empty"
    );
    assert_eq!(client.asked().len(), 4, "no question for an empty folder");
    session.close().await;
}

async fn files_missing_capability_gives_32021(transport: Transport) {
    let client = TestClient::with_capabilities(json!({"elicitation": {"url": {}}}));
    let session = Session::modern("files", transport, client.clone()).await;
    let error = session
        .protocol_error("delete_folder", json!({"path": "/tmp/project"}))
        .await;
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.message,
        "Client did not declare the form elicitation capability required by resolver 'confirm_delete'"
    );
    assert_eq!(
        error.data,
        Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}}))
    );
    session.close().await;
}

// ---------------------------------------------------------------------------------------------
// Rounds driven by hand (probe example).

/// One `tools/call` with optional answers and state: the input_required result or the text.
#[derive(Debug)]
enum Reply {
    Input {
        /// inputRequests as JSON (key → request).
        requests: Value,
        state: String,
        meta: Value,
    },
    Done(String),
    Failed(String),
}

impl Reply {
    fn keys(&self) -> Vec<String> {
        match self {
            Reply::Input { requests, .. } => {
                requests.as_object().unwrap().keys().cloned().collect()
            }
            other => panic!("expected input_required, got {other:?}"),
        }
    }
    fn state(&self) -> String {
        match self {
            Reply::Input { state, .. } => state.clone(),
            other => panic!("expected input_required, got {other:?}"),
        }
    }
    fn requests(&self) -> Value {
        match self {
            Reply::Input { requests, .. } => requests.clone(),
            other => panic!("expected input_required, got {other:?}"),
        }
    }
}

async fn once(
    session: &Session,
    tool: &str,
    arguments: Value,
    answers: Option<Value>,
    state: Option<&str>,
) -> Result<Reply, ErrorData> {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let mut params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
    if let Some(Value::Object(answers)) = answers {
        let answers: BTreeMap<String, Value> = answers.into_iter().collect();
        params = params.with_input_responses(answers);
    }
    if let Some(state) = state {
        params = params.with_request_state(state.to_string());
    }
    let call = session.service.call_tool_once(params);
    match tokio::time::timeout(std::time::Duration::from_secs(20), call).await {
        Err(_) => panic!("tools/call {tool} timed out"),
        Ok(Err(ServiceError::McpError(error))) => Err(error),
        Ok(Err(other)) => panic!("tools/call {tool} failed: {other}"),
        Ok(Ok(CallToolResponse::InputRequired(result))) => Ok(Reply::Input {
            requests: serde_json::to_value(result.input_requests.expect("inputRequests")).unwrap(),
            state: result.request_state.expect("requestState"),
            meta: serde_json::to_value(result.meta).unwrap(),
        }),
        Ok(Ok(CallToolResponse::Complete(result))) => {
            let text = common::only_text(&result);
            Ok(if result.is_error == Some(true) {
                Reply::Failed(text)
            } else {
                Reply::Done(text)
            })
        }
        Ok(Ok(other)) => panic!("unexpected response {other:?}"),
    }
}

fn color_request(item: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form",
        "message": format!("Which color for the {item}?"),
        "requestedSchema": {"description": "A color choice.", "type": "object",
            "properties": {"color": {"type": "string"}}, "required": ["color"]}
    }})
}

fn size_request(item: &str, mood: &str) -> Value {
    json!({"method": "elicitation/create", "params": {
        "mode": "form",
        "message": format!("Which size for the {item}? (mood: {mood})"),
        "requestedSchema": {"description": "A size choice.", "type": "object",
            "properties": {"size": {"type": "integer", "minimum": 1}}, "required": ["size"]}
    }})
}

fn describe_request(color: &str, item: &str) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text",
            "text": format!("Describe a {color} {item} in one line.")}}],
        "maxTokens": 40
    }})
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn sampled(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "fake-model"})
}

async fn runs(session: &Session, resolver: &str) -> u64 {
    session
        .text("runs", json!({"resolver": resolver}))
        .await
        .parse()
        .unwrap()
}

async fn probe(transport: Transport) -> Session {
    Session::modern("mrtr-probe", transport, TestClient::full()).await
}

async fn probe_batches_independent_questions(transport: Transport) {
    let session = probe(transport).await;
    let cup = json!({"item": "cup"});
    // Round 1: the two independent questions together; `describe` waits for the color.
    let round1 = once(&session, "make", cup.clone(), None, None)
        .await
        .unwrap();
    assert_eq!(
        round1.requests(),
        json!({"ask_color": color_request("cup"), "ask_size": size_request("cup", "calm")})
    );
    let Reply::Input { meta, .. } = &round1 else {
        unreachable!()
    };
    assert_eq!(meta, &server_info("Probe", "0.1.0"));
    assert_eq!(
        (
            runs(&session, "ask_color").await,
            runs(&session, "ask_size").await,
            runs(&session, "describe").await
        ),
        (1, 1, 0)
    );
    // Round 2: both answers; the dependent question comes next, alone.
    let answers = json!({"ask_color": accept(json!({"color": "red"})), "ask_size": accept(json!({"size": 3}))});
    let round2 = once(
        &session,
        "make",
        cup.clone(),
        Some(answers),
        Some(&round1.state()),
    )
    .await
    .unwrap();
    assert_eq!(
        round2.requests(),
        json!({"describe": describe_request("red", "cup")})
    );
    assert_eq!(
        (
            runs(&session, "ask_color").await,
            runs(&session, "ask_size").await,
            runs(&session, "describe").await
        ),
        (2, 2, 1)
    );
    // Round 3: only the new answer is sent; the earlier ones travel in the sealed state.
    let round3 = once(
        &session,
        "make",
        cup.clone(),
        Some(json!({"describe": sampled("A cheerful cup.")})),
        Some(&round2.state()),
    )
    .await
    .unwrap();
    match round3 {
        Reply::Done(text) => assert_eq!(text, "Made a size-3 red cup: A cheerful cup."),
        other => panic!("expected the result, got {other:?}"),
    }
    // Every resolver ran exactly once per round.
    assert_eq!(
        (
            runs(&session, "ask_color").await,
            runs(&session, "ask_size").await,
            runs(&session, "describe").await
        ),
        (3, 3, 2)
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_auto_driven_over_three_rounds() {
    let client = TestClient::full()
        .accept(json!({"color": "blue"}))
        .accept(json!({"size": 2}))
        .sample("A calm blue mug.");
    let session = Session::modern("mrtr-probe", Transport::Stdio, client.clone()).await;
    assert_eq!(
        session.text("make", json!({"item": "mug"})).await,
        "Made a size-2 blue mug: A calm blue mug."
    );
    assert_eq!(client.asked().len(), 3, "{:?}", client.asked());
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_changed_question_is_asked_again() {
    let session = probe(Transport::Stdio).await;
    let cup = json!({"item": "cup"});
    let round1 = once(&session, "make", cup.clone(), None, None)
        .await
        .unwrap();
    assert_eq!(
        session.text("set_mood", json!({"mood": "stormy"})).await,
        "Mood is now stormy."
    );
    // The size answer was given to the "calm" question: it is discarded and the new question
    // asked; the unchanged color question keeps its answer, so `describe` is asked too.
    let answers = json!({"ask_color": accept(json!({"color": "red"})), "ask_size": accept(json!({"size": 3}))});
    let round2 = once(
        &session,
        "make",
        cup.clone(),
        Some(answers),
        Some(&round1.state()),
    )
    .await
    .unwrap();
    assert_eq!(
        round2.requests(),
        json!({"ask_size": size_request("cup", "stormy"), "describe": describe_request("red", "cup")})
    );
    // Answering with the round-2 state: the state now records the "stormy" question as asked,
    // so the answer (and the sampled text) completes the call.
    let stale = json!({"ask_size": accept(json!({"size": 3})), "describe": sampled("Red.")});
    let round3 = once(
        &session,
        "make",
        cup.clone(),
        Some(stale),
        Some(&round2.state()),
    )
    .await
    .unwrap();
    match round3 {
        Reply::Done(text) => assert_eq!(text, "Made a size-3 red cup: Red."),
        other => panic!("expected the result, got {other:?}"),
    }
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_missing_unknown_and_extra_answer_keys() {
    let session = probe(Transport::Stdio).await;
    let cup = json!({"item": "cup"});
    let state = once(&session, "make", cup.clone(), None, None)
        .await
        .unwrap()
        .state();
    // Missing key: the unanswered question is asked again, the answered one moves on.
    let partial = once(
        &session,
        "make",
        cup.clone(),
        Some(json!({"ask_color": accept(json!({"color": "green"}))})),
        Some(&state),
    )
    .await
    .unwrap();
    assert_eq!(partial.keys(), vec!["ask_size", "describe"]);
    // Only unknown keys: both questions again, no error.
    let unknown = once(
        &session,
        "make",
        cup.clone(),
        Some(json!({"nope": accept(json!({"color": "green"}))})),
        Some(&state),
    )
    .await
    .unwrap();
    assert_eq!(unknown.keys(), vec!["ask_color", "ask_size"]);
    // Extra keys next to the real answers are ignored.
    let extra = once(
        &session,
        "make",
        cup.clone(),
        Some(json!({
            "ask_color": accept(json!({"color": "green"})),
            "ask_size": accept(json!({"size": 1})),
            "extra": {"action": "accept", "content": {"anything": 1}}
        })),
        Some(&state),
    )
    .await
    .unwrap();
    assert_eq!(
        extra.requests(),
        json!({"describe": describe_request("green", "cup")})
    );
    // Answers without requestState are discarded: both questions again.
    let stateless = once(
        &session,
        "make",
        cup.clone(),
        Some(json!({"ask_color": accept(json!({"color": "green"})), "ask_size": accept(json!({"size": 1}))})),
        None,
    )
    .await
    .unwrap();
    assert_eq!(stateless.keys(), vec!["ask_color", "ask_size"]);
    // An answer that does not match the form is an isError, as on legacy connections.
    let invalid = once(
        &session,
        "make",
        cup.clone(),
        Some(json!({"ask_color": accept(json!({"color": "green"})), "ask_size": accept(json!({"size": 0}))})),
        Some(&state),
    )
    .await
    .unwrap();
    match invalid {
        Reply::Failed(text) => assert_eq!(
            text,
            "Error executing tool make: Resolver 'ask_size' received an accepted elicitation whose content does not match the requested schema: /size (minimum): 0 is less than the minimum of 1"
        ),
        other => panic!("expected isError, got {other:?}"),
    }
    // Declining the color: `paint` binds the plain value, so the call fails like on legacy.
    let paint = json!({"item": "wall"});
    let state = once(&session, "paint", paint.clone(), None, None)
        .await
        .unwrap()
        .state();
    match once(
        &session,
        "paint",
        paint,
        Some(json!({"ask_color": {"action": "decline"}})),
        Some(&state),
    )
    .await
    .unwrap()
    {
        Reply::Failed(text) => assert_eq!(
            text,
            "Error executing tool paint: Resolver for parameter 'color' could not resolve: elicitation was decline"
        ),
        other => panic!("expected isError, got {other:?}"),
    }
    session.close().await;
}

fn assert_invalid_state(error: ErrorData) {
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.message, "Invalid or expired requestState");
    assert_eq!(error.data, Some(json!({"reason": "invalid_request_state"})));
}

fn tamper(state: &str) -> String {
    // Flip one character of the sealed body (not the `v1.` prefix).
    let mut chars: Vec<char> = state.chars().collect();
    let i = chars.len() / 2;
    chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
    chars.into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_rejects_tampered_cross_tool_and_cross_argument_state() {
    let session = probe(Transport::Stdio).await;
    let cup = json!({"item": "cup"});
    let state = once(&session, "make", cup.clone(), None, None)
        .await
        .unwrap()
        .state();
    let answers = json!({"ask_color": accept(json!({"color": "red"}))});
    for (tool, arguments, token) in [
        ("make", cup.clone(), tamper(&state)),
        ("make", cup.clone(), format!("{state}A")),
        ("make", cup.clone(), "v1.".to_string()),
        ("make", cup.clone(), "not a state".to_string()),
        ("paint", cup.clone(), state.clone()),
        ("make", json!({"item": "mug"}), state.clone()),
    ] {
        let error = once(
            &session,
            tool,
            arguments.clone(),
            Some(answers.clone()),
            Some(&token),
        )
        .await
        .expect_err(&format!("{tool} {arguments} with a bad state must fail"));
        assert_invalid_state(error);
    }
    // The genuine state still works, and the server keeps serving.
    let next = once(&session, "make", cup.clone(), Some(answers), Some(&state))
        .await
        .unwrap();
    assert_eq!(next.keys(), vec!["ask_size", "describe"]);
    assert_eq!(
        session.text("set_mood", json!({"mood": "fine"})).await,
        "Mood is now fine."
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_rejects_expired_state() {
    let session = Session::modern_env(
        "mrtr-probe",
        Transport::Stdio,
        TestClient::full(),
        &[("MCP_REQUEST_STATE_TTL_SECS", "1")],
    )
    .await;
    let cup = json!({"item": "cup"});
    let answers = json!({"ask_color": accept(json!({"color": "red"}))});
    let fresh = once(&session, "make", cup.clone(), None, None)
        .await
        .unwrap()
        .state();
    let next = once(
        &session,
        "make",
        cup.clone(),
        Some(answers.clone()),
        Some(&fresh),
    )
    .await
    .unwrap();
    assert_eq!(
        next.keys(),
        vec!["ask_size", "describe"],
        "a fresh state opens"
    );
    tokio::time::sleep(std::time::Duration::from_millis(1300)).await;
    let error = once(&session, "make", cup, Some(answers), Some(&fresh))
        .await
        .expect_err("an expired state must fail");
    assert_invalid_state(error);
    session.close().await;
}

const KEY_A: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci1vbmUtMzItYnl0ZXMhIQ==";
const KEY_B: &str = "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci10d28tMzItYnl0ZXMhIQ==";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_state_moves_between_processes_with_a_shared_key_only() {
    let cup = json!({"item": "cup"});
    let answers = json!({"ask_color": accept(json!({"color": "red"})), "ask_size": accept(json!({"size": 2}))});
    let start = |env: &'static [(&'static str, &'static str)]| {
        Session::modern_env("mrtr-probe", Transport::Stdio, TestClient::full(), env)
    };
    let first = start(&[("MCP_REQUEST_STATE_KEYS", KEY_A)]).await;
    let state = once(&first, "make", cup.clone(), None, None)
        .await
        .unwrap()
        .state();
    // Same key (rotated: the old key is still accepted for opening), same audience: accepted.
    let rotated = start(&[(
        "MCP_REQUEST_STATE_KEYS",
        concat!(
            "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci10d28tMzItYnl0ZXMhIQ==",
            ",",
            "bWNwZ2VuLXRlc3Qta2V5LW51bWJlci1vbmUtMzItYnl0ZXMhIQ=="
        ),
    )])
    .await;
    let next = once(
        &rotated,
        "make",
        cup.clone(),
        Some(answers.clone()),
        Some(&state),
    )
    .await
    .unwrap();
    assert_eq!(next.keys(), vec!["describe"]);
    // Another key: rejected.
    let other_key = start(&[("MCP_REQUEST_STATE_KEYS", KEY_B)]).await;
    assert_invalid_state(
        once(
            &other_key,
            "make",
            cup.clone(),
            Some(answers.clone()),
            Some(&state),
        )
        .await
        .expect_err("another key"),
    );
    // Same key, another audience (another server): rejected.
    let other_audience = start(&[
        ("MCP_REQUEST_STATE_KEYS", KEY_A),
        ("MCP_REQUEST_STATE_AUDIENCE", "Elsewhere"),
    ])
    .await;
    assert_invalid_state(
        once(
            &other_audience,
            "make",
            cup.clone(),
            Some(answers.clone()),
            Some(&state),
        )
        .await
        .expect_err("another audience"),
    );
    // No key configured: an ephemeral key, so the state is not accepted either.
    let ephemeral = start(&[]).await;
    assert_invalid_state(
        once(&ephemeral, "make", cup, Some(answers), Some(&state))
            .await
            .expect_err("ephemeral key"),
    );
    for session in [first, rotated, other_key, other_audience, ephemeral] {
        session.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_missing_capability_is_32021_not_a_question() {
    let session = Session::modern(
        "mrtr-probe",
        Transport::Stdio,
        TestClient::with_capabilities(json!({"elicitation": {}})),
    )
    .await;
    let cup = json!({"item": "cup"});
    // Both form questions are allowed (bare `elicitation`), so round 1 asks them.
    let state = once(&session, "make", cup.clone(), None, None)
        .await
        .unwrap()
        .state();
    // Round 2 would ask for sampling, which the client did not declare.
    let error = once(
        &session,
        "make",
        cup,
        Some(json!({"ask_color": accept(json!({"color": "red"})), "ask_size": accept(json!({"size": 2}))})),
        Some(&state),
    )
    .await
    .expect_err("-32021");
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.message,
        "Client did not declare the sampling capability required by resolver 'describe'"
    );
    assert_eq!(
        error.data,
        Some(json!({"requiredCapabilities": {"sampling": {}}}))
    );
    session.close().await;
}
