//! The Files example (`outcome: true` binding) over stdio and Streamable HTTP.
//! Every scenario starts a fresh server process, so folder state starts from the seed's.
#![allow(deprecated)]

mod common;

use common::{Question, Session, TestClient, Transport};
use rmcp::model::{ElicitResult, ElicitationAction};
use serde_json::json;

over_both_transports!(
    tools_list_is_exact,
    empty_folder_is_deleted_without_a_question,
    accepted_ok_deletes,
    accepted_not_ok_keeps,
    declined,
    cancelled,
    no_elicitation_capability,
);

fn project_question() -> Question {
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

async fn tools_list_is_exact(transport: Transport) {
    let session = Session::legacy("files", transport, TestClient::full()).await;
    let tools = session.service.list_all_tools().await.expect("tools/list");
    assert_eq!(
        serde_json::to_value(&tools).unwrap(),
        json!([{
            "name": "delete_folder",
            "title": "Delete a folder",
            "description": "Delete a folder, asking for confirmation when it is not empty.",
            "annotations": {"destructiveHint": true},
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]}
        }])
    );
    session.close().await;
}

async fn empty_folder_is_deleted_without_a_question(transport: Transport) {
    let client = TestClient::full();
    let session = Session::legacy("files", transport, client.clone()).await;
    assert_eq!(
        session
            .text("delete_folder", json!({"path": "/tmp/empty"}))
            .await,
        "deleted /tmp/empty"
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

async fn accepted_ok_deletes(transport: Transport) {
    let client = TestClient::full().accept(json!({"ok": true}));
    let session = Session::legacy("files", transport, client.clone()).await;
    assert_eq!(
        session
            .text("delete_folder", json!({"path": "/tmp/project"}))
            .await,
        "deleted /tmp/project"
    );
    assert_eq!(client.asked(), vec![project_question()]);
    // The folder is gone now: nothing to confirm the second time.
    assert_eq!(
        session
            .text("delete_folder", json!({"path": "/tmp/project"}))
            .await,
        "deleted /tmp/project"
    );
    assert_eq!(client.asked(), vec![project_question()]);
    session.close().await;
}

async fn accepted_not_ok_keeps(transport: Transport) {
    let client = TestClient::full().accept(json!({"ok": false}));
    let session = Session::legacy("files", transport, client.clone()).await;
    assert_eq!(
        session
            .text("delete_folder", json!({"path": "/tmp/project"}))
            .await,
        "kept the folder"
    );
    assert_eq!(client.asked(), vec![project_question()]);
    session.close().await;
}

async fn declined(transport: Transport) {
    let client = TestClient::full().answer(ElicitResult::new(ElicitationAction::Decline));
    let session = Session::legacy("files", transport, client.clone()).await;
    assert_eq!(
        session
            .text("delete_folder", json!({"path": "/tmp/project"}))
            .await,
        "declined: folder not deleted"
    );
    assert_eq!(client.asked(), vec![project_question()]);
    session.close().await;
}

async fn cancelled(transport: Transport) {
    let client = TestClient::full().answer(ElicitResult::new(ElicitationAction::Cancel));
    let session = Session::legacy("files", transport, client.clone()).await;
    assert_eq!(
        session
            .text("delete_folder", json!({"path": "/tmp/project"}))
            .await,
        "cancelled: folder not deleted"
    );
    assert_eq!(client.asked(), vec![project_question()]);
    session.close().await;
}

async fn no_elicitation_capability(transport: Transport) {
    // URL-only elicitation does not cover form questions.
    let client = TestClient::with_capabilities(json!({"elicitation": {"url": {}}, "sampling": {}}));
    let session = Session::legacy("files", transport, client.clone()).await;
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
    assert_eq!(
        session
            .text("delete_folder", json!({"path": "/tmp/empty"}))
            .await,
        "deleted /tmp/empty"
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}
