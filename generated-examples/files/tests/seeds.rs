//! The seed's Files behaviours (`/work/shared/seeds/000`, the reference `files_ref.py`: an
//! `outcome: true` binding, so the tool sees every answer) through the crate's test kit, on the
//! four clients (legacy and 2026-07-28, stdio framing and the HTTP stack, all in process).
//! Deleting changes the state: every test starts a fresh server.

use files::generated::runtime::codegen::rmcp::model::ClientCapabilities;
use files::generated::testing::{Answer, CallError, Question, TestServer};
use files::generated::types::{Confirm, DeleteFolderArgs, ListFolderArgs};
use files::handlers::Files;
use serde_json::json;

fn delete(path: &str) -> DeleteFolderArgs {
    DeleteFolderArgs { path: path.into() }
}

/// What `confirm_delete` asks for `/tmp/project`.
fn project_question() -> Question {
    Question::Form {
        resolver: Some("confirm_delete".into()),
        message: "/tmp/project has 2 file(s). Delete anyway?".into(),
        schema: json!({
            "description": "The user's confirmation.",
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"]
        }),
    }
}

#[tokio::test]
async fn empty_folder_is_deleted_without_a_question() {
    let server = TestServer::new(Files::default());
    for client in server.clients().await {
        assert_eq!(
            client.delete_folder(delete("/tmp/empty")).await.as_deref(),
            Ok("deleted /tmp/empty"),
            "{}",
            client.label()
        );
        assert_eq!(client.questions(), vec![], "{}", client.label());
    }
}

#[tokio::test]
async fn accepted_ok_deletes_and_the_folder_is_gone() {
    let server = TestServer::new(Files::default());
    let clients = server.clients().await;
    let first = &clients[0];
    first.answer_elicitation(|_| Answer::accept(json!({"ok": true})));
    assert_eq!(
        first.delete_folder(delete("/tmp/project")).await.as_deref(),
        Ok("deleted /tmp/project"),
        "{}",
        first.label()
    );
    assert_eq!(
        first.questions(),
        vec![project_question()],
        "{}",
        first.label()
    );
    // The clients share the server's state: the folder is gone for every one of them, so
    // nothing is asked again.
    for client in &clients {
        client.answer_elicitation(|_| Answer::accept(json!({"ok": true})));
        assert_eq!(
            client
                .delete_folder(delete("/tmp/project"))
                .await
                .as_deref(),
            Ok("deleted /tmp/project"),
            "{}",
            client.label()
        );
    }
    assert_eq!(
        first.questions(),
        vec![project_question()],
        "{}",
        first.label()
    );
    for client in &clients[1..] {
        assert_eq!(client.questions(), vec![], "{}", client.label());
    }
}

#[tokio::test]
async fn the_four_answers() {
    let server = TestServer::new(Files::default());
    for client in server.clients().await {
        let label = client.label();
        client.answer_elicitation(|_| Answer::accept(json!({"ok": false})));
        assert_eq!(
            client
                .delete_folder(delete("/tmp/project"))
                .await
                .as_deref(),
            Ok("kept the folder"),
            "{label}"
        );
        client.decline();
        assert_eq!(
            client
                .delete_folder(delete("/tmp/project"))
                .await
                .as_deref(),
            Ok("declined: folder not deleted"),
            "{label}"
        );
        client.cancel();
        assert_eq!(
            client
                .delete_folder(delete("/tmp/project"))
                .await
                .as_deref(),
            Ok("cancelled: folder not deleted"),
            "{label}"
        );
        assert_eq!(client.questions(), vec![project_question(); 3], "{label}");
    }
    // Nothing was deleted: each client is asked again, and the last one's yes deletes it.
    let last = server.stateless().http().connect().await;
    last.answer_elicitation(|_| Answer::accept(json!({"ok": true})));
    assert_eq!(
        last.delete_folder(delete("/tmp/project")).await.as_deref(),
        Ok("deleted /tmp/project")
    );
    assert_eq!(last.questions(), vec![project_question()]);
}

#[tokio::test]
async fn each_client_deletes_on_its_own_server() {
    for connect in [
        "legacy stdio",
        "legacy http",
        "stateless stdio",
        "stateless http",
    ] {
        let server = TestServer::new(Files::default());
        let builder = if connect.starts_with("legacy") {
            server.legacy()
        } else {
            server.stateless()
        };
        let client = if connect.ends_with("http") {
            builder.http().connect().await
        } else {
            builder.stdio().connect().await
        };
        client.answer_elicitation(|_| Answer::accept(Confirm { ok: true }));
        assert_eq!(
            client
                .delete_folder(delete("/tmp/project"))
                .await
                .as_deref(),
            Ok("deleted /tmp/project"),
            "{connect}"
        );
        assert_eq!(client.questions(), vec![project_question()], "{connect}");
    }
}

#[tokio::test]
async fn no_form_elicitation_capability_gives_32021() {
    // URL-only elicitation does not cover form questions.
    let url_only: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"url": {}}, "sampling": {}})).unwrap();
    let server = TestServer::new(Files::default());
    let clients = server
        .clients_with(|connect| connect.capabilities(url_only.clone()))
        .await;
    for client in clients {
        let label = client.label();
        assert_eq!(
            client.delete_folder(delete("/tmp/project")).await,
            Err(CallError::Protocol {
                code: -32021,
                message: "Client did not declare the form elicitation capability required by resolver 'confirm_delete'".into(),
                data: Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
            }),
            "{label}"
        );
        assert_eq!(client.questions(), vec![], "{label}");
    }
    // Nothing to ask, nothing to declare.
    let client = server
        .legacy()
        .capabilities(ClientCapabilities::default())
        .connect()
        .await;
    assert_eq!(
        client.delete_folder(delete("/tmp/empty")).await.as_deref(),
        Ok("deleted /tmp/empty")
    );
}

#[tokio::test]
async fn list_folder_keeps_each_offset_and_compares_instants() {
    let server = TestServer::new(Files::default());
    for client in server.clients().await {
        let label = client.label();
        let list = |since: Option<&str>| {
            client.list_folder(ListFolderArgs {
                path: "/tmp/project".into(),
                modified_since: since.map(|s| s.parse().expect("an RFC 3339 date-time")),
            })
        };
        let all = list(None)
            .await
            .unwrap_or_else(|e| panic!("{label}: {e:?}"));
        assert_eq!(
            serde_json::to_value(&all).unwrap(),
            json!([
                {"name": "main.py", "modified": "2026-03-01T09:30:00+09:00"},
                {"name": "README.md", "modified": "2026-02-27T18:00:00-05:00"}
            ]),
            "{label}"
        );
        // main.py changed at 00:30 UTC; README.md at 23:00 UTC the day before.
        for since in [
            "2026-03-01T09:30:00+09:00",
            "2026-03-01T00:30:00Z",
            "2026-02-28T19:30:00-05:00",
        ] {
            let newer = list(Some(since))
                .await
                .unwrap_or_else(|e| panic!("{label}: {e:?}"));
            assert_eq!(
                serde_json::to_value(&newer).unwrap(),
                json!([{"name": "main.py", "modified": "2026-03-01T09:30:00+09:00"}]),
                "{label}: since {since}"
            );
        }
        let none = list(Some("2026-03-01T09:30:01+09:00")).await;
        assert_eq!(none.map(|files| files.len()), Ok(0), "{label}");
        let empty = client
            .list_folder(ListFolderArgs {
                path: "/tmp/empty".into(),
                modified_since: None,
            })
            .await;
        assert_eq!(empty.map(|files| files.len()), Ok(0), "{label}");
    }
}

#[tokio::test]
async fn an_invalid_date_time_and_an_unknown_folder() {
    let server = TestServer::new(Files::default());
    for client in server.clients().await {
        let label = client.label();
        assert_eq!(
            client
                .call_tool(
                    "list_folder",
                    json!({"path": "/tmp/project", "modified_since": "yesterday"})
                )
                .await,
            Err(CallError::InvalidArguments(vec![
                r#"/modified_since (format): "yesterday" is not a "date-time""#.into()
            ])),
            "{label}"
        );
        assert_eq!(
            client
                .list_folder(ListFolderArgs {
                    path: "/nowhere".into(),
                    modified_since: None,
                })
                .await
                .unwrap_err(),
            CallError::Tool("Error executing tool list_folder: no folder /nowhere".into()),
            "{label}"
        );
    }
}
