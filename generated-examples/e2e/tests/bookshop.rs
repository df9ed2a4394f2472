//! The Bookshop example against the seed's exact behaviour, over stdio and Streamable HTTP.
#![allow(deprecated)]

mod common;

use common::{Question, Session, TestClient, Transport};
use rmcp::model::{ElicitResult, ElicitationAction};
use serde_json::json;

over_both_transports!(
    tools_list_is_exact,
    search_books_with_defaults_and_enum,
    invalid_arguments_are_reported_before_anything_runs,
    add_book,
    reserve_book_resolves_stock_without_asking,
    order_book_in_stock_asks_nothing,
    order_book_backorder_accepted,
    order_book_backorder_refused,
    order_book_backorder_declined_or_cancelled,
    order_book_answer_not_matching_the_form,
    recommend_book_samples,
    missing_client_capabilities_give_32021,
    unknown_tool_is_a_protocol_error,
);

fn string_output() -> serde_json::Value {
    json!({"type":"object","properties":{"result":{"type":"string"}},"required":["result"]})
}

async fn tools_list_is_exact(transport: Transport) {
    let session = Session::legacy("bookshop", transport, TestClient::full()).await;
    let tools = session.service.list_all_tools().await.expect("tools/list");
    let tools = serde_json::to_value(&tools).unwrap();
    let title_only =
        json!({"type":"object","properties":{"title":{"type":"string"}},"required":["title"]});
    let expected = json!([
        {
            "name": "search_books",
            "title": "Search the catalog",
            "description": "Search the catalog by title or author.",
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Title or author to search for."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10,
                              "description": "Maximum number of results."},
                    "genre": {"type": "string", "enum": ["fiction", "non-fiction", "poetry"]}
                },
                "required": ["query"]
            },
            "outputSchema": string_output()
        },
        {
            "name": "add_book",
            "description": "Add a book to the catalog.",
            "inputSchema": {
                "type": "object",
                "properties": {"book": {"$ref": "#/$defs/Book"}},
                "required": ["book"],
                "$defs": {"Book": {
                    "description": "A book in the catalog.",
                    "type": "object",
                    "properties": {
                        "title": {"type": "string"},
                        "author": {"type": "string"},
                        "year": {"type": "integer", "minimum": 1450, "description": "Year of first publication.", "maximum": 9223372036854775807_u64}
                    },
                    "required": ["title", "author", "year"]
                }}
            },
            "outputSchema": string_output()
        },
        {
            "name": "reserve_book",
            "description": "Reserve a copy of a book.",
            "inputSchema": title_only,
            "outputSchema": string_output()
        },
        {
            "name": "order_book",
            "description": "Order a book from the shop.",
            "inputSchema": title_only,
            "outputSchema": string_output()
        },
        {
            "name": "recommend_book",
            "description": "Recommend a book in the given genre.",
            "inputSchema": {"type":"object","properties":{"genre":{"type":"string"}},"required":["genre"]},
            "outputSchema": string_output()
        }
    ]);
    assert_eq!(tools, expected);
    session.close().await;
}

async fn search_books_with_defaults_and_enum(transport: Transport) {
    let client = TestClient::full();
    let session = Session::legacy("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .text(
                "search_books",
                json!({"query": "dune", "limit": 2, "genre": "poetry"})
            )
            .await,
        "Found 3 books matching 'dune' in poetry (showing up to 2)."
    );
    assert_eq!(
        session.text("search_books", json!({"query": "dune"})).await,
        "Found 3 books matching 'dune' (showing up to 10)."
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

async fn invalid_arguments_are_reported_before_anything_runs(transport: Transport) {
    let client = TestClient::full();
    let session = Session::legacy("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .error_text("search_books", json!({"query": "dune", "limit": 99}))
            .await,
        "Error executing tool search_books: /limit (maximum): 99 is greater than the maximum of 50"
    );
    assert_eq!(
        session
            .error_text(
                "add_book",
                json!({"book": {"title": "Dune", "author": "Frank Herbert", "year": 1400}})
            )
            .await,
        "Error executing tool add_book: /book/year (minimum): 1400 is less than the minimum of 1450"
    );
    // Every violation, one line each.
    let all = session
        .error_text("search_books", json!({"limit": 0, "genre": "horror"}))
        .await;
    let mut lines: Vec<&str> = all
        .strip_prefix("Error executing tool search_books: ")
        .expect("prefix")
        .lines()
        .collect();
    lines.sort();
    assert_eq!(
        lines,
        vec![
            "(root) (required): \"query\" is a required property",
            "/genre (enum): \"horror\" is not one of \"fiction\", \"non-fiction\" or \"poetry\"",
            "/limit (minimum): 0 is less than the minimum of 1",
        ]
    );
    // A resolver-backed tool with invalid arguments asks nothing and runs nothing.
    let order = session.error_text("order_book", json!({"title": 3})).await;
    assert_eq!(
        order,
        "Error executing tool order_book: /title (type): 3 is not of type \"string\""
    );
    assert_eq!(client.asked(), vec![]);
    // The server keeps serving.
    assert_eq!(
        session
            .text("search_books", json!({"query": "dune", "limit": 50}))
            .await,
        "Found 3 books matching 'dune' (showing up to 50)."
    );
    session.close().await;
}

async fn add_book(transport: Transport) {
    let session = Session::legacy("bookshop", transport, TestClient::full()).await;
    assert_eq!(
        session
            .text(
                "add_book",
                json!({"book": {"title": "Dune", "author": "Frank Herbert", "year": 1965}})
            )
            .await,
        "Added 'Dune' by Frank Herbert (1965)."
    );
    session.close().await;
}

async fn reserve_book_resolves_stock_without_asking(transport: Transport) {
    let client = TestClient::full();
    let session = Session::legacy("bookshop", transport, client.clone()).await;
    assert_eq!(
        session.text("reserve_book", json!({"title": "Dune"})).await,
        "Reserved 'Dune' (6 copies left)."
    );
    assert_eq!(
        session
            .text("reserve_book", json!({"title": "Neuromancer"}))
            .await,
        "'Neuromancer' is out of stock."
    );
    // A value sent for the resolved parameter is ignored: the resolver's value wins.
    assert_eq!(
        session
            .text(
                "reserve_book",
                json!({"title": "Neuromancer", "stock": {"title": "Neuromancer", "copies": 99}})
            )
            .await,
        "'Neuromancer' is out of stock."
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

async fn order_book_in_stock_asks_nothing(transport: Transport) {
    let client = TestClient::full();
    let session = Session::legacy("bookshop", transport, client.clone()).await;
    assert_eq!(
        session.text("order_book", json!({"title": "Dune"})).await,
        "Ordered 'Dune'; it arrives tomorrow."
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

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

async fn order_book_backorder_accepted(transport: Transport) {
    let client = TestClient::full().accept(json!({"confirm": true}));
    let session = Session::legacy("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .text("order_book", json!({"title": "Neuromancer"}))
            .await,
        "Backordered 'Neuromancer'; it ships in 2-3 weeks."
    );
    assert_eq!(client.asked(), vec![backorder_question()]);
    session.close().await;
}

async fn order_book_backorder_refused(transport: Transport) {
    let client = TestClient::full().accept(json!({"confirm": false}));
    let session = Session::legacy("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .text("order_book", json!({"title": "Neuromancer"}))
            .await,
        "No order placed."
    );
    assert_eq!(client.asked(), vec![backorder_question()]);
    session.close().await;
}

async fn order_book_backorder_declined_or_cancelled(transport: Transport) {
    let client = TestClient::full()
        .answer(ElicitResult::new(ElicitationAction::Decline))
        .answer(ElicitResult::new(ElicitationAction::Cancel));
    let session = Session::legacy("bookshop", transport, client.clone()).await;
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
    // Still serving.
    assert_eq!(
        session.text("order_book", json!({"title": "Dune"})).await,
        "Ordered 'Dune'; it arrives tomorrow."
    );
    session.close().await;
}

async fn order_book_answer_not_matching_the_form(transport: Transport) {
    let client = TestClient::full().accept(json!({"confirm": "yes"}));
    let session = Session::legacy("bookshop", transport, client.clone()).await;
    assert_eq!(
        session
            .error_text("order_book", json!({"title": "Neuromancer"}))
            .await,
        "Error executing tool order_book: Resolver 'confirm_backorder': Received an accepted elicitation whose content does not match the requested schema: /confirm (type): \"yes\" is not of type \"boolean\""
    );
    assert_eq!(client.asked(), vec![backorder_question()]);
    session.close().await;
}

async fn recommend_book_samples(transport: Transport) {
    let client = TestClient::full().sample("Dune");
    let session = Session::legacy("bookshop", transport, client.clone()).await;
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

async fn missing_client_capabilities_give_32021(transport: Transport) {
    let client = TestClient::with_capabilities(json!({}));
    let session = Session::legacy("bookshop", transport, client.clone()).await;
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
    // No question needed, no capability needed; and the server keeps serving.
    assert_eq!(
        session.text("order_book", json!({"title": "Dune"})).await,
        "Ordered 'Dune'; it arrives tomorrow."
    );
    assert_eq!(client.asked(), vec![]);
    session.close().await;
}

async fn unknown_tool_is_a_protocol_error(transport: Transport) {
    let session = Session::legacy("bookshop", transport, TestClient::full()).await;
    let error = session.protocol_error("nope", json!({})).await;
    assert_eq!(
        (error.code.0, error.message.as_ref()),
        (-32602, "Unknown tool: nope")
    );
    assert_eq!(
        session.text("reserve_book", json!({"title": "Dune"})).await,
        "Reserved 'Dune' (6 copies left)."
    );
    session.close().await;
}
