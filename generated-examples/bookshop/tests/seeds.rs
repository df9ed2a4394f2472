//! The seed's Bookshop behaviours (`/work/shared/seeds/000`, the reference `bookshop_ref.py`)
//! through the crate's test kit: every exact text, every question, on the four clients
//! (legacy and 2026-07-28, stdio framing and the HTTP stack, all in process).

use std::num::NonZeroU64;

use bookshop::generated::runtime::codegen::rmcp::model::ClientCapabilities;
use bookshop::generated::testing::{Answer, CallError, Era, Question, Step, TestServer};
use bookshop::generated::types::{
    AddBookArgs, Backorder, Book, OrderBookArgs, RecommendBookArgs, ReserveBookArgs,
    SearchBooksArgs, SearchBooksArgsGenre,
};
use bookshop::handlers::Bookshop;
use serde_json::json;

fn server() -> TestServer<Bookshop> {
    TestServer::new(Bookshop::default())
}

fn order(title: &str) -> OrderBookArgs {
    OrderBookArgs {
        title: title.into(),
    }
}

/// What `confirm_backorder` asks when the title is out of stock.
fn backorder_question() -> Question {
    Question::Form {
        resolver: Some("confirm_backorder".into()),
        message: "'Neuromancer' is out of stock (2-3 weeks). Order anyway?".into(),
        schema: json!({
            "description": "The customer's answer when a title is out of stock.",
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "description": "Order anyway and wait?"}},
            "required": ["confirm"]
        }),
    }
}

/// What `suggest_title` asks the client's model for the genre `scifi`.
fn scifi_question() -> Question {
    Question::Sampling {
        resolver: Some("suggest_title".into()),
        params: json!({
            "messages": [{"role": "user", "content": {"type": "text",
                "text": "Suggest one scifi book title. Answer with the title only."}}],
            "maxTokens": 50
        }),
    }
}

#[tokio::test]
async fn search_books_with_defaults_and_enum() {
    let server = server();
    for client in server.clients().await {
        let found = client
            .search_books(SearchBooksArgs {
                query: "dune".into(),
                limit: NonZeroU64::new(2).unwrap(),
                genre: Some(SearchBooksArgsGenre::Poetry),
            })
            .await;
        assert_eq!(
            found.as_deref(),
            Ok("Found 3 books matching 'dune' in poetry (showing up to 2)."),
            "{}",
            client.label()
        );
        // Without `limit` the schema's default applies (a typed call always sends it).
        let result = client
            .call_tool("search_books", json!({"query": "dune"}))
            .await
            .unwrap_or_else(|e| panic!("{}: {e:?}", client.label()));
        assert_eq!(
            serde_json::to_value(&result.structured_content).unwrap(),
            json!({"result": "Found 3 books matching 'dune' (showing up to 10)."}),
            "{}",
            client.label()
        );
        assert_eq!(client.questions(), vec![], "{}", client.label());
    }
}

#[tokio::test]
async fn invalid_arguments_are_reported_before_anything_runs() {
    let server = server();
    for client in server.clients().await {
        let label = client.label();
        let too_many = client
            .search_books(SearchBooksArgs {
                query: "dune".into(),
                limit: NonZeroU64::new(99).unwrap(),
                genre: None,
            })
            .await;
        assert_eq!(
            too_many,
            Err(CallError::InvalidArguments(vec![
                "/limit (maximum): 99 is greater than the maximum of 50".into()
            ])),
            "{label}"
        );
        let too_old = client
            .add_book(AddBookArgs {
                book: Book {
                    title: "Dune".into(),
                    author: "Frank Herbert".into(),
                    year: 1400,
                },
            })
            .await;
        assert_eq!(
            too_old,
            Err(CallError::InvalidArguments(vec![
                "/book/year (minimum): 1400 is less than the minimum of 1450".into()
            ])),
            "{label}"
        );
        // Every violation, one each.
        let all = client
            .call_tool("search_books", json!({"limit": 0, "genre": "horror"}))
            .await;
        let Err(CallError::InvalidArguments(mut violations)) = all else {
            panic!("{label}: expected invalid arguments, got {all:?}")
        };
        violations.sort();
        assert_eq!(
            violations,
            vec![
                "(root) (required): \"query\" is a required property",
                "/genre (enum): \"horror\" is not one of \"fiction\", \"non-fiction\" or \"poetry\"",
                "/limit (minimum): 0 is less than the minimum of 1",
            ],
            "{label}"
        );
        // A resolver-backed tool with invalid arguments asks nothing and runs nothing.
        assert_eq!(
            client.call_tool("order_book", json!({"title": 3})).await,
            Err(CallError::InvalidArguments(vec![
                "/title (type): 3 is not of type \"string\"".into()
            ])),
            "{label}"
        );
        assert_eq!(client.questions(), vec![], "{label}");
    }
}

#[tokio::test]
async fn add_book() {
    let server = server();
    for client in server.clients().await {
        let added = client
            .add_book(AddBookArgs {
                book: Book {
                    title: "Dune".into(),
                    author: "Frank Herbert".into(),
                    year: 1965,
                },
            })
            .await;
        assert_eq!(
            added.as_deref(),
            Ok("Added 'Dune' by Frank Herbert (1965)."),
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn reserve_book_resolves_stock_without_asking() {
    let server = server();
    for client in server.clients().await {
        let label = client.label();
        let reserve = |title: &str| {
            client.reserve_book(ReserveBookArgs {
                title: title.into(),
            })
        };
        assert_eq!(
            reserve("Dune").await.as_deref(),
            Ok("Reserved 'Dune' (6 copies left)."),
            "{label}"
        );
        assert_eq!(
            reserve("Neuromancer").await.as_deref(),
            Ok("'Neuromancer' is out of stock."),
            "{label}"
        );
        // A value sent for the resolved parameter is ignored: the resolver's value wins.
        let result = client
            .call_tool(
                "reserve_book",
                json!({"title": "Neuromancer", "stock": {"title": "Neuromancer", "copies": 99}}),
            )
            .await
            .unwrap_or_else(|e| panic!("{label}: {e:?}"));
        assert_eq!(
            serde_json::to_value(&result.structured_content).unwrap(),
            json!({"result": "'Neuromancer' is out of stock."}),
            "{label}"
        );
        assert_eq!(client.questions(), vec![], "{label}");
    }
}

#[tokio::test]
async fn order_book_in_stock_asks_nothing() {
    let server = server();
    for client in server.clients().await {
        assert_eq!(
            client.order_book(order("Dune")).await.as_deref(),
            Ok("Ordered 'Dune'; it arrives tomorrow."),
            "{}",
            client.label()
        );
        assert_eq!(client.questions(), vec![], "{}", client.label());
    }
}

#[tokio::test]
async fn order_book_backorder_accepted() {
    let server = server();
    for client in server.clients().await {
        client.answer_elicitation(|_| Answer::accept(Backorder { confirm: true }));
        assert_eq!(
            client.order_book(order("Neuromancer")).await.as_deref(),
            Ok("Backordered 'Neuromancer'; it ships in 2-3 weeks."),
            "{}",
            client.label()
        );
        assert_eq!(
            client.questions(),
            vec![backorder_question()],
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn order_book_backorder_refused() {
    let server = server();
    for client in server.clients().await {
        client.answer_elicitation(|_| Answer::accept(json!({"confirm": false})));
        assert_eq!(
            client.order_book(order("Neuromancer")).await.as_deref(),
            Ok("No order placed."),
            "{}",
            client.label()
        );
        assert_eq!(
            client.questions(),
            vec![backorder_question()],
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn order_book_backorder_declined_or_cancelled() {
    let server = server();
    for client in server.clients().await {
        let label = client.label();
        client.decline();
        assert_eq!(
            client.order_book(order("Neuromancer")).await,
            Err(CallError::Tool(
                "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was decline".into()
            )),
            "{label}"
        );
        client.cancel();
        assert_eq!(
            client.order_book(order("Neuromancer")).await,
            Err(CallError::Tool(
                "Error executing tool order_book: Resolver for parameter 'backorder' could not resolve: elicitation was cancel".into()
            )),
            "{label}"
        );
        assert_eq!(
            client.questions(),
            vec![backorder_question(), backorder_question()],
            "{label}"
        );
        // Still serving.
        assert_eq!(
            client.order_book(order("Dune")).await.as_deref(),
            Ok("Ordered 'Dune'; it arrives tomorrow."),
            "{label}"
        );
    }
}

#[tokio::test]
async fn order_book_answer_not_matching_the_form() {
    let server = server();
    for client in server.clients().await {
        client.answer_elicitation(|_| Answer::accept(json!({"confirm": "yes"})));
        // The Python SDK words this differently on each era (legacy: the resolver's error
        // wrapped; 2026-07-28: the retry's own check).
        let mismatch = match client.era() {
            Era::Legacy => "Resolver 'confirm_backorder': Received",
            Era::Modern => "Resolver 'confirm_backorder' received",
        };
        assert_eq!(
            client.order_book(order("Neuromancer")).await,
            Err(CallError::Tool(format!(
                "Error executing tool order_book: {mismatch} an accepted elicitation whose content does not match the requested schema: /confirm (type): \"yes\" is not of type \"boolean\""
            ))),
            "{}",
            client.label()
        );
        assert_eq!(
            client.questions(),
            vec![backorder_question()],
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn an_unscripted_question_is_reported_with_the_question() {
    let server = server();
    for client in server.clients().await {
        assert_eq!(
            client.order_book(order("Neuromancer")).await,
            Err(CallError::Unscripted(backorder_question())),
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn recommend_book_samples() {
    let server = server();
    for client in server.clients().await {
        client.sample_text("Dune");
        let picked = client
            .recommend_book(RecommendBookArgs {
                genre: "scifi".into(),
            })
            .await;
        assert_eq!(
            picked.as_deref(),
            Ok("Today's scifi pick: Dune"),
            "{}",
            client.label()
        );
        assert_eq!(
            client.questions(),
            vec![scifi_question()],
            "{}",
            client.label()
        );
    }
}

#[tokio::test]
async fn missing_client_capabilities_give_32021() {
    let server = server();
    let clients = server
        .clients_with(|connect| connect.capabilities(ClientCapabilities::default()))
        .await;
    for client in clients {
        let label = client.label();
        assert_eq!(
            client.order_book(order("Neuromancer")).await,
            Err(CallError::Protocol {
                code: -32021,
                message: "Client did not declare the form elicitation capability required by resolver 'confirm_backorder'".into(),
                data: Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
            }),
            "{label}"
        );
        let recommended = client
            .recommend_book(RecommendBookArgs {
                genre: "scifi".into(),
            })
            .await;
        assert_eq!(
            recommended,
            Err(CallError::Protocol {
                code: -32021,
                message:
                    "Client did not declare the sampling capability required by resolver 'suggest_title'"
                        .into(),
                data: Some(json!({"requiredCapabilities": {"sampling": {}}})),
            }),
            "{label}"
        );
        // No question needed, no capability needed; and the server keeps serving.
        assert_eq!(
            client.order_book(order("Dune")).await.as_deref(),
            Ok("Ordered 'Dune'; it arrives tomorrow."),
            "{label}"
        );
        assert_eq!(client.questions(), vec![], "{label}");
    }
}

#[tokio::test]
async fn unknown_tool_is_a_protocol_error() {
    let server = server();
    for client in server.clients().await {
        let result = client.call_tool("nope", json!({})).await;
        let Err(CallError::Protocol { code, message, .. }) = result else {
            panic!(
                "{}: expected a protocol error, got {result:?}",
                client.label()
            )
        };
        assert_eq!(
            (code, message.as_str()),
            (-32602, "Unknown tool: nope"),
            "{}",
            client.label()
        );
    }
}

/// The 2026-07-28 retry loop stepped by hand: the question comes back with a `requestState`,
/// and the answer sent with it completes the call.
#[tokio::test]
async fn backorder_rounds_by_hand() {
    let server = server();
    for transport in ["stdio", "http"] {
        let connect = server.stateless();
        let client = match transport {
            "stdio" => connect.stdio().connect().await,
            _ => connect.http().connect().await,
        };
        let label = client.label();
        let mut rounds = client.rounds("order_book", json!({"title": "Neuromancer"}));
        let first = rounds
            .send()
            .await
            .unwrap_or_else(|e| panic!("{label}: {e:?}"));
        let Step::InputRequired {
            questions,
            request_state,
        } = first
        else {
            panic!("{label}: expected a question, got {first:?}")
        };
        assert_eq!(questions, vec![backorder_question()], "{label}");
        assert!(request_state.is_some(), "{label}: no requestState");
        assert_eq!(rounds.request_state(), request_state.as_deref(), "{label}");
        rounds.answer(
            "confirm_backorder",
            Answer::accept(Backorder { confirm: true }),
        );
        let Step::Complete(result) = rounds
            .send()
            .await
            .unwrap_or_else(|e| panic!("{label}: {e:?}"))
        else {
            panic!("{label}: expected the result")
        };
        assert_eq!(
            serde_json::to_value(&result.structured_content).unwrap(),
            json!({"result": "Backordered 'Neuromancer'; it ships in 2-3 weeks."}),
            "{label}"
        );
        assert_ne!(result.is_error, Some(true), "{label}");
    }
}
