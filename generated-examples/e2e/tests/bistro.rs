//! The Bistro example (questions asked from tool bodies through the context) over stdio and
//! Streamable HTTP, on legacy connections and on a 2026-07-28 connection.
#![allow(deprecated)]

mod common;

use std::time::{Duration, Instant};

use common::{Question, Session, TestClient, Transport, eventually};
use rmcp::model::{ElicitResult, ElicitationAction};
use serde_json::json;

over_both_transports!(
    free_date_books_without_a_question,
    alternative_date_accepted,
    alternative_date_default,
    alternative_refused,
    deposit_accepted,
    deposit_declined,
    deposit_completion_notification,
    url_elicitation_needs_the_url_capability,
    modern_connection_gets_no_back_channel_error,
);

fn date_question() -> Question {
    Question::Form {
        message: "No tables for 2 on 2025-12-25. Would you like to try another date?".into(),
        schema: json!({
            "description": "Whether to try another date, and which.",
            "type": "object",
            "properties": {
                "accept_alternative": {"type": "boolean", "description": "Try another date?"},
                "date": {"type": "string", "default": "2025-12-26", "description": "Alternative date (YYYY-MM-DD)"}
            },
            "required": ["accept_alternative"]
        }),
    }
}

fn deposit_question() -> Question {
    Question::Url {
        message: "A 20 EUR deposit confirms your booking.".into(),
        url: "https://pay.example.com/deposit/b42".into(),
        id: "deposit-b42".into(),
    }
}

async fn free_date_books_without_a_question(transport: Transport) {
    let client = TestClient::full();
    let session = Session::legacy("bistro", transport, client.clone()).await;
    assert_eq!(
        session
            .text("book_table", json!({"date": "2025-12-27", "party_size": 2}))
            .await,
        "Booked a table for 2 on 2025-12-27."
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

async fn alternative_date_accepted(transport: Transport) {
    let client =
        TestClient::full().accept(json!({"accept_alternative": true, "date": "2025-12-27"}));
    let session = Session::legacy("bistro", transport, client.clone()).await;
    assert_eq!(
        session
            .text("book_table", json!({"date": "2025-12-25", "party_size": 2}))
            .await,
        "Booked a table for 2 on 2025-12-27."
    );
    assert_eq!(client.asked(), vec![date_question()]);
    session.close().await;
}

async fn alternative_date_default(transport: Transport) {
    // The form's default date applies when the answer leaves it out.
    let client = TestClient::full().accept(json!({"accept_alternative": true}));
    let session = Session::legacy("bistro", transport, client.clone()).await;
    assert_eq!(
        session
            .text("book_table", json!({"date": "2025-12-25", "party_size": 2}))
            .await,
        "Booked a table for 2 on 2025-12-26."
    );
    assert_eq!(client.asked(), vec![date_question()]);
    session.close().await;
}

async fn alternative_refused(transport: Transport) {
    let client = TestClient::full()
        .accept(json!({"accept_alternative": false, "date": "2025-12-27"}))
        .answer(ElicitResult::new(ElicitationAction::Decline))
        .answer(ElicitResult::new(ElicitationAction::Cancel));
    let session = Session::legacy("bistro", transport, client.clone()).await;
    for _ in 0..3 {
        assert_eq!(
            session
                .text("book_table", json!({"date": "2025-12-25", "party_size": 2}))
                .await,
            "No booking made."
        );
    }
    assert_eq!(
        client.asked(),
        vec![date_question(), date_question(), date_question()]
    );
    session.close().await;
}

async fn deposit_accepted(transport: Transport) {
    let client = TestClient::full().answer(ElicitResult::new(ElicitationAction::Accept));
    let session = Session::legacy("bistro", transport, client.clone()).await;
    assert_eq!(
        session
            .text("pay_deposit", json!({"booking_id": "b42"}))
            .await,
        "Complete the payment in your browser."
    );
    assert_eq!(client.asked(), vec![deposit_question()]);
    session.close().await;
}

async fn deposit_declined(transport: Transport) {
    let client = TestClient::full()
        .answer(ElicitResult::new(ElicitationAction::Decline))
        .answer(ElicitResult::new(ElicitationAction::Cancel));
    let session = Session::legacy("bistro", transport, client.clone()).await;
    for _ in 0..2 {
        assert_eq!(
            session
                .text("pay_deposit", json!({"booking_id": "b42"}))
                .await,
            "No deposit taken. The booking expires in one hour."
        );
    }
    assert_eq!(client.asked(), vec![deposit_question(), deposit_question()]);
    session.close().await;
}

async fn deposit_completion_notification(transport: Transport) {
    let client = TestClient::full();
    let session = Session::legacy("bistro", transport, client.clone()).await;
    assert_eq!(
        session
            .text("confirm_deposit", json!({"booking_id": "b42"}))
            .await,
        "Deposit received for booking b42."
    );
    let expected = vec![(
        "notifications/elicitation/complete".to_string(),
        Some(json!({"elicitationId": "deposit-b42"})),
    )];
    assert!(
        eventually(|| client.notifications() == expected).await,
        "notifications: {:?}",
        client.notifications()
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

async fn url_elicitation_needs_the_url_capability(transport: Transport) {
    let client = TestClient::with_capabilities(json!({"elicitation": {"form": {}}}));
    let session = Session::legacy("bistro", transport, client.clone()).await;
    let error = session
        .protocol_error("pay_deposit", json!({"booking_id": "b42"}))
        .await;
    assert_eq!(error.code.0, -32021);
    assert_eq!(
        error.message,
        "Client did not declare the url elicitation capability required by tool 'pay_deposit'"
    );
    assert_eq!(
        error.data,
        Some(json!({"requiredCapabilities": {"elicitation": {"url": {}}}}))
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

async fn modern_connection_gets_no_back_channel_error(transport: Transport) {
    let client =
        TestClient::full().accept(json!({"accept_alternative": true, "date": "2025-12-27"}));
    let session = Session::modern("bistro", transport, client.clone()).await;
    let started = Instant::now();
    let error = session
        .protocol_error("book_table", json!({"date": "2025-12-25", "party_size": 2}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered at once"
    );
    assert_eq!(error.code.0, -32600);
    assert_eq!(
        error.message,
        "Cannot send 'elicitation/create': this transport context has no back-channel for server-initiated requests."
    );
    assert_eq!(client.asked(), vec![]);
    // Calls that ask nothing work on the modern connection.
    assert_eq!(
        session
            .text("book_table", json!({"date": "2025-12-27", "party_size": 2}))
            .await,
        "Booked a table for 2 on 2025-12-27."
    );
    session.close().await;
}
