//! Tests of the tools, through the test kit (`generated::testing`): the real server in process,
//! on both protocol eras and both transports. mcpgen wrote this file once; it is yours.
//!
//! What the runtime does to calls (timeouts, concurrency limits, cancellation, drain) is tested
//! with real clients in peers/tests/python/test_limits.py and test_cancellation.py and in
//! generated-examples/e2e/tests/operations.rs; these tests pin what each tool does when left
//! alone, and the counts those tests read.

use operations::generated::testing::{Answer, CallError, TestClient, TestServer};
use operations::generated::types;
use operations::handlers::Operations;
use serde_json::{Value, json};

/// The counts `stats` reports for `tag`, as JSON.
async fn stats(client: &TestClient, tag: &str) -> Value {
    let stats = client
        .stats(types::StatsArgs { tag: tag.into() })
        .await
        .unwrap();
    serde_json::to_value(stats).unwrap()
}

/// `quote` prices the item (one euro per character, 20 % tax) and asks to buy it.
#[tokio::test]
async fn quote() {
    let server = TestServer::new(Operations::default());
    for client in server.clients().await {
        client.answer_elicitation(|_| Answer::accept(json!({"ok": true})));
        let answer = client
            .quote(types::QuoteArgs { item: "pen".into() })
            .await
            .unwrap();
        assert_eq!(answer, "Bought pen for 360 cents.", "{}", client.label());
        let asked: Vec<(Option<String>, Option<String>)> = (client.take_questions().iter())
            .map(|q| (q.resolver().map(Into::into), q.message().map(Into::into)))
            .collect();
        assert_eq!(
            asked,
            [(
                Some("confirm".to_string()),
                Some("Buy pen for 360 cents?".to_string())
            )],
            "{}",
            client.label()
        );
        client.answer_elicitation(|_| Answer::accept(json!({"ok": false})));
        let answer = client
            .quote(types::QuoteArgs {
                item: "notebook".into(),
            })
            .await
            .unwrap();
        assert_eq!(answer, "Did not buy notebook.", "{}", client.label());
    }
}

/// An empty item name is an `isError` result, before anything is asked.
#[tokio::test]
async fn quote_without_item() {
    let server = TestServer::new(Operations::default());
    for client in server.clients().await {
        let error = client
            .quote(types::QuoteArgs { item: "".into() })
            .await
            .unwrap_err();
        assert_eq!(
            error,
            CallError::Tool("Error executing tool quote: name an item".into()),
            "{}",
            client.label()
        );
        assert!(client.take_questions().is_empty(), "{}", client.label());
    }
}

/// `nap`, `work` and `grind` run to their end when nothing stops them, and are counted
/// `started` and `finished` under their tag.
#[tokio::test]
async fn sleepers_finish_and_are_counted() {
    let server = TestServer::new(Operations::default());
    for client in server.clients().await {
        let tag = format!("done-{}", client.label());
        let nap = client
            .nap(types::NapArgs {
                ms: 10,
                tag: tag.clone(),
            })
            .await
            .unwrap();
        assert_eq!(nap, "Slept 10 ms.", "{}", client.label());
        let work = client
            .work(types::WorkArgs {
                ms: 0,
                tag: tag.clone(),
            })
            .await
            .unwrap();
        assert_eq!(work, "Worked 0 ms.", "{}", client.label());
        let grind = client
            .grind(types::GrindArgs {
                ms: 20,
                tag: tag.clone(),
            })
            .await
            .unwrap();
        assert_eq!(grind, "Ground 20 ms.", "{}", client.label());
        assert_eq!(
            stats(&client, &tag).await,
            json!({"started": 3, "finished": 3, "dropped": 0, "stopped_early": 0}),
            "{}",
            client.label()
        );
    }
}

/// A tag never used counts nothing.
#[tokio::test]
async fn stats_of_an_unknown_tag() {
    let server = TestServer::new(Operations::default());
    for client in server.clients().await {
        assert_eq!(
            stats(&client, "never").await,
            json!({"started": 0, "finished": 0, "dropped": 0, "stopped_early": 0}),
            "{}",
            client.label()
        );
    }
}

/// `fail` is always an `isError` result.
#[tokio::test]
async fn fail() {
    let server = TestServer::new(Operations::default());
    for client in server.clients().await {
        let error = client
            .fail(serde_json::from_value(json!({})).unwrap())
            .await
            .unwrap_err();
        assert_eq!(
            error,
            CallError::Tool("Error executing tool fail: this tool always fails".into()),
            "{}",
            client.label()
        );
    }
}
