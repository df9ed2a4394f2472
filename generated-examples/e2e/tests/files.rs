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
    list_folder_returns_entries_with_their_offsets,
    modified_since_compares_instants_in_any_offset,
    an_invalid_date_time_is_refused_by_its_format,
    an_unknown_folder_is_a_tool_error,
);

/// The `FileEntry` type, as advertised at the root of `list_folder`'s `outputSchema`.
fn file_entry_schema() -> serde_json::Value {
    json!({
        "description": "A file in a folder.",
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "modified": {"type": "string", "format": "date-time", "description": "When the file last changed, with the offset it was written in."}
        },
        "required": ["name", "modified"]
    })
}

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
            "name": "list_folder",
            "title": "List a folder",
            "description": "List the files of a folder, optionally only those modified since an instant.",
            "annotations": {"readOnlyHint": true},
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "modified_since": {"type": "string", "format": "date-time", "description": "Only files modified at or after this instant (RFC 3339, any offset)."}
                },
                "required": ["path"]
            },
            "outputSchema": {
                "type": "object",
                "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/FileEntry"}}},
                "required": ["result"],
                "$defs": {"FileEntry": file_entry_schema()}
            }
        }, {
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

/// The structured result of a successful `list_folder` call.
async fn list(session: &Session, arguments: serde_json::Value) -> serde_json::Value {
    let result = session
        .call("list_folder", arguments)
        .await
        .expect("no protocol error");
    assert_ne!(
        result.is_error,
        Some(true),
        "unexpected isError: {result:?}"
    );
    result.structured_content.expect("structuredContent")
}

async fn list_folder_returns_entries_with_their_offsets(transport: Transport) {
    let session = Session::legacy("files", transport, TestClient::full()).await;
    // Each date-time keeps the offset it was written in (none is turned into UTC).
    assert_eq!(
        list(&session, json!({"path": "/tmp/project"})).await,
        json!({"result": [
            {"name": "main.py", "modified": "2026-03-01T09:30:00+09:00"},
            {"name": "README.md", "modified": "2026-02-27T18:00:00-05:00"}
        ]})
    );
    assert_eq!(
        list(&session, json!({"path": "/tmp/empty"})).await,
        json!({"result": []})
    );
    session.close().await;
}

async fn modified_since_compares_instants_in_any_offset(transport: Transport) {
    let session = Session::legacy("files", transport, TestClient::full()).await;
    let main_py = json!({"result": [{"name": "main.py", "modified": "2026-03-01T09:30:00+09:00"}]});
    // main.py changed at 00:30 UTC; README.md at 23:00 UTC the day before.
    for since in [
        "2026-03-01T09:30:00+09:00",
        "2026-03-01T00:30:00Z",
        "2026-02-28T19:30:00-05:00",
    ] {
        assert_eq!(
            list(
                &session,
                json!({"path": "/tmp/project", "modified_since": since})
            )
            .await,
            main_py,
            "since {since}"
        );
    }
    assert_eq!(
        list(
            &session,
            json!({"path": "/tmp/project", "modified_since": "2026-03-01T09:30:01+09:00"})
        )
        .await,
        json!({"result": []})
    );
    session.close().await;
}

async fn an_invalid_date_time_is_refused_by_its_format(transport: Transport) {
    let session = Session::legacy("files", transport, TestClient::full()).await;
    assert_eq!(
        session
            .error_text(
                "list_folder",
                json!({"path": "/tmp/project", "modified_since": "yesterday"})
            )
            .await,
        r#"Error executing tool list_folder: /modified_since (format): "yesterday" is not a "date-time""#
    );
    // A date-time needs an offset.
    assert_eq!(
        session
            .error_text(
                "list_folder",
                json!({"path": "/tmp/project", "modified_since": "2026-03-01T09:30:00"})
            )
            .await,
        r#"Error executing tool list_folder: /modified_since (format): "2026-03-01T09:30:00" is not a "date-time""#
    );
    session.close().await;
}

async fn an_unknown_folder_is_a_tool_error(transport: Transport) {
    let session = Session::legacy("files", transport, TestClient::full()).await;
    assert_eq!(
        session
            .error_text("list_folder", json!({"path": "/nowhere"}))
            .await,
        "Error executing tool list_folder: no folder /nowhere"
    );
    session.close().await;
}
