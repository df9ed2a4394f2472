//! The seed's Bistro behaviours (`/work/shared/seeds/002`, the reference `bistro_ref.py`:
//! questions asked from tool bodies with `ctx.elicit` and `ctx.elicit_url`) through the crate's
//! test kit, over stdio framing and the HTTP stack in process. `ctx.elicit` needs the legacy
//! back-channel: on 2026-07-28 the same calls get -32600 (seed 002), and calls that ask nothing
//! work on both eras.

use std::time::Duration;

use bistro::generated::runtime::codegen::rmcp::model::ClientCapabilities;
use bistro::generated::testing::{Answer, CallError, Question, TestClient, TestServer};
use bistro::generated::types::{
    AlternativeDate, BookTableArgs, ConfirmDepositArgs, PayDepositArgs,
};
use bistro::handlers::Bistro;
use serde_json::{Value, json};

/// The two legacy clients (stdio, HTTP) of `server`.
async fn legacy(server: &TestServer<Bistro>) -> Vec<TestClient> {
    vec![
        server.legacy().stdio().connect().await,
        server.legacy().http().connect().await,
    ]
}

/// The two 2026-07-28 clients (stdio, HTTP) of `server`.
async fn stateless(server: &TestServer<Bistro>) -> Vec<TestClient> {
    vec![
        server.stateless().stdio().connect().await,
        server.stateless().http().connect().await,
    ]
}

fn christmas() -> BookTableArgs {
    BookTableArgs {
        date: "2025-12-25".into(),
        party_size: 2,
    }
}

fn b42() -> PayDepositArgs {
    PayDepositArgs {
        booking_id: "b42".into(),
    }
}

/// What `book_table` asks when the date is full (from the tool body: no resolver).
fn date_question() -> Question {
    Question::Form {
        resolver: None,
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

/// What `pay_deposit` asks for booking `b42`.
fn deposit_question() -> Question {
    Question::Url {
        resolver: None,
        message: "A 20 EUR deposit confirms your booking.".into(),
        url: "https://pay.example.com/deposit/b42".into(),
        id: "deposit-b42".into(),
    }
}

#[tokio::test]
async fn free_date_books_without_a_question_on_both_eras() {
    let server = TestServer::new(Bistro);
    for client in server.clients().await {
        let booked = client
            .book_table(BookTableArgs {
                date: "2025-12-27".into(),
                party_size: 2,
            })
            .await;
        assert_eq!(
            booked.as_deref(),
            Ok("Booked a table for 2 on 2025-12-27."),
            "{}",
            client.label()
        );
        assert_eq!(client.questions(), vec![], "{}", client.label());
    }
}

#[tokio::test]
async fn alternative_date_accepted() {
    let server = TestServer::new(Bistro);
    for client in legacy(&server).await {
        client.answer_elicitation(|_| {
            Answer::accept(AlternativeDate {
                accept_alternative: true,
                date: "2025-12-27".into(),
            })
        });
        assert_eq!(
            client.book_table(christmas()).await.as_deref(),
            Ok("Booked a table for 2 on 2025-12-27."),
            "{}",
            client.label()
        );
        assert_eq!(
            client.questions(),
            vec![date_question()],
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn alternative_date_default() {
    // The form's default date applies when the answer leaves it out.
    let server = TestServer::new(Bistro);
    for client in legacy(&server).await {
        client.answer_elicitation(|_| Answer::accept(json!({"accept_alternative": true})));
        assert_eq!(
            client.book_table(christmas()).await.as_deref(),
            Ok("Booked a table for 2 on 2025-12-26."),
            "{}",
            client.label()
        );
        assert_eq!(
            client.questions(),
            vec![date_question()],
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn alternative_refused_declined_or_cancelled() {
    let server = TestServer::new(Bistro);
    for client in legacy(&server).await {
        let label = client.label();
        client.answer_elicitation(|_| {
            Answer::accept(json!({"accept_alternative": false, "date": "2025-12-27"}))
        });
        assert_eq!(
            client.book_table(christmas()).await.as_deref(),
            Ok("No booking made."),
            "{label}"
        );
        client.decline();
        assert_eq!(
            client.book_table(christmas()).await.as_deref(),
            Ok("No booking made."),
            "{label}"
        );
        client.cancel();
        assert_eq!(
            client.book_table(christmas()).await.as_deref(),
            Ok("No booking made."),
            "{label}"
        );
        assert_eq!(client.questions(), vec![date_question(); 3], "{label}");
    }
}

#[tokio::test]
async fn deposit_accepted() {
    let server = TestServer::new(Bistro);
    for client in legacy(&server).await {
        client.answer_elicitation(|_| Answer::accept_url());
        assert_eq!(
            client.pay_deposit(b42()).await.as_deref(),
            Ok("Complete the payment in your browser."),
            "{}",
            client.label()
        );
        assert_eq!(
            client.questions(),
            vec![deposit_question()],
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn deposit_declined_or_cancelled() {
    let server = TestServer::new(Bistro);
    for client in legacy(&server).await {
        let label = client.label();
        client.decline();
        assert_eq!(
            client.pay_deposit(b42()).await.as_deref(),
            Ok("No deposit taken. The booking expires in one hour."),
            "{label}"
        );
        client.cancel();
        assert_eq!(
            client.pay_deposit(b42()).await.as_deref(),
            Ok("No deposit taken. The booking expires in one hour."),
            "{label}"
        );
        assert_eq!(
            client.questions(),
            vec![deposit_question(), deposit_question()],
            "{label}"
        );
    }
}

/// The notifications `client` received, as (method, params).
fn notifications(client: &TestClient) -> Vec<(String, Value)> {
    client
        .notifications()
        .into_iter()
        .map(|n| (n.method, n.params))
        .collect()
}

#[tokio::test]
async fn deposit_completion_notification() {
    let server = TestServer::new(Bistro);
    for client in legacy(&server).await {
        let label = client.label();
        let confirmed = client
            .confirm_deposit(ConfirmDepositArgs {
                booking_id: "b42".into(),
            })
            .await;
        assert_eq!(
            confirmed.as_deref(),
            Ok("Deposit received for booking b42."),
            "{label}"
        );
        let expected = vec![(
            "notifications/elicitation/complete".to_string(),
            json!({"elicitationId": "deposit-b42"}),
        )];
        // The client handles notifications on a task of its own: it may see this one a moment
        // after the result.
        for _ in 0..100 {
            if notifications(&client) == expected {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(notifications(&client), expected, "{label}");
        assert_eq!(client.questions(), vec![], "{label}");
    }
}

#[tokio::test]
async fn url_elicitation_needs_the_url_capability() {
    let form_only: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
    let server = TestServer::new(Bistro);
    for connect in [server.legacy().stdio(), server.legacy().http()] {
        let client = connect.capabilities(form_only.clone()).connect().await;
        assert_eq!(
            client.pay_deposit(b42()).await,
            Err(CallError::Protocol {
                code: -32021,
                message: "Client did not declare the url elicitation capability required by tool 'pay_deposit'".into(),
                data: Some(json!({"requiredCapabilities": {"elicitation": {"url": {}}}})),
            }),
            "{}",
            client.label()
        );
        assert_eq!(client.questions(), vec![], "{}", client.label());
    }
}

#[tokio::test]
async fn a_2026_07_28_connection_has_no_back_channel() {
    let server = TestServer::new(Bistro);
    for client in stateless(&server).await {
        let label = client.label();
        client.answer_elicitation(|_| {
            Answer::accept(AlternativeDate {
                accept_alternative: true,
                date: "2025-12-27".into(),
            })
        });
        let refused = client.book_table(christmas()).await;
        let Err(CallError::Protocol { code, message, .. }) = refused else {
            panic!("{label}: expected a protocol error, got {refused:?}")
        };
        assert_eq!(
            (code, message.as_str()),
            (
                -32600,
                "Cannot send 'elicitation/create': this transport context has no back-channel for server-initiated requests."
            ),
            "{label}"
        );
        assert_eq!(client.questions(), vec![], "{label}");
        // Calls that ask nothing work.
        let booked = client
            .book_table(BookTableArgs {
                date: "2025-12-27".into(),
                party_size: 2,
            })
            .await;
        assert_eq!(
            booked.as_deref(),
            Ok("Booked a table for 2 on 2025-12-27."),
            "{label}"
        );
    }
}
