//! Tests of the tools, through the test kit (`generated::testing`): the real server in process,
//! on both protocol eras and both transports. mcpgen wrote this file once; it is yours.
//!
//! One replica alone: what crosses replicas (the bus, sessions behind nginx, key rotation) is
//! tested with real nginx and Redis in peers/tests/python/test_replicas.py.

use fleet::generated::testing::{Answer, Question, TestServer};
use fleet::generated::types;
use fleet::handlers::Fleet;
use serde_json::json;

/// `write_note` stores the note on this replica (read back through `notes://{id}`).
#[tokio::test]
async fn write_note() {
    let server = TestServer::new(Fleet::default());
    for (i, client) in server.clients().await.into_iter().enumerate() {
        let id = format!("n{i}");
        let text = format!("Note number {i}, from {}", client.label());
        let answer = client
            .write_note(types::WriteNoteArgs {
                id: id.clone(),
                text: text.clone(),
            })
            .await
            .unwrap();
        assert_eq!(
            answer,
            format!("Wrote notes://{id} ({} characters).", text.chars().count()),
            "{}",
            client.label()
        );
        let read = client
            .read_resource(&format!("notes://{id}"))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&read.contents).unwrap(),
            json!([{"uri": format!("notes://{id}"), "mimeType": "text/plain", "text": text}]),
            "{}",
            client.label()
        );
    }
}

/// `touch_catalog` only announces a change.
#[tokio::test]
async fn touch_catalog() {
    let server = TestServer::new(Fleet::default());
    for client in server.clients().await {
        let answer = client.touch_catalog(Default::default()).await.unwrap();
        assert_eq!(answer, "The resource list changed.", "{}", client.label());
    }
}

/// `sign_note` asks who signs, then asks to confirm with that name.
#[tokio::test]
async fn sign_note() {
    let server = TestServer::new(Fleet::default());
    for client in server.clients().await {
        client.answer_elicitation(|question| match question.resolver() {
            Some("ask_name") => Answer::accept(json!({"name": "Ada"})),
            _ => Answer::accept(json!({"confirm": true})),
        });
        let answer = client
            .sign_note(types::SignNoteArgs::builder().id("n1").try_into().unwrap())
            .await
            .unwrap();
        assert_eq!(answer, "Note 'n1' signed by Ada.", "{}", client.label());
        let questions = client.take_questions();
        let asked: Vec<(Option<&str>, Option<&str>)> = questions
            .iter()
            .map(|q| (q.resolver(), q.message()))
            .collect();
        assert_eq!(
            asked,
            [
                (Some("ask_name"), Some("Who signs note 'n1'?")),
                (Some("ask_confirm"), Some("Sign note 'n1' as Ada?")),
            ],
            "{}",
            client.label()
        );
        assert!(
            questions.iter().all(|q| matches!(q, Question::Form { .. })),
            "{}",
            client.label()
        );
        client.answer_elicitation(|question| match question.resolver() {
            Some("ask_name") => Answer::accept(json!({"name": "Bob"})),
            _ => Answer::accept(json!({"confirm": false})),
        });
        let answer = client
            .sign_note(types::SignNoteArgs::builder().id("n2").try_into().unwrap())
            .await
            .unwrap();
        assert_eq!(answer, "Note 'n2' not signed.", "{}", client.label());
    }
}
