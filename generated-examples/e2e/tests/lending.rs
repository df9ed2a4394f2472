//! The lending example (a spec with `auth`, per-operation scopes and a `"principal"` resolver)
//! where no authorization server is involved:
//!
//! * over stdio the principal comes from `MCP_PRINCIPAL_*` and reaches the `member` resolver
//!   (each tool's exact result names that member; its scopes decide who is a librarian), both
//!   eras; scopes are not enforced there (the MCP authorization specification covers HTTP);
//! * without `MCP_PRINCIPAL_SUBJECT` the stdio server refuses to start, and over HTTP without
//!   `--auth-issuer` too, each with its exact message and exit status 2;
//! * over HTTP with an issuer, what needs no token check: the protected-resource metadata and
//!   the 401 challenge without a token.
//!
//! The real authorization server (oidc-provider) and the real clients' OAuth flows are in
//! `peers/tests/node/lending.test.mjs` and `peers/tests/python/test_lending_auth.py`.
#![allow(deprecated)]

mod common;

use std::{
    process::{Command, Stdio},
    time::Duration,
};

use common::{Question, Session, TestClient, Transport};
use rmcp::{
    ErrorData,
    model::{
        ElicitResult, ElicitationAction, GetPromptRequestParams, ReadResourceRequestParams,
        ResourceContents,
    },
    service::ServiceError,
};
use serde_json::{Value, json};

const DUNE: &str = "lib-1: 'Dune' by Frank Herbert (2 of 2 on the shelf)";

/// A member with loans:read only, as `MCP_PRINCIPAL_*`.
const ALICE: &[(&str, &str)] = &[
    ("MCP_PRINCIPAL_SUBJECT", "alice"),
    ("MCP_PRINCIPAL_ISSUER", "https://id.example.com"),
    ("MCP_PRINCIPAL_SCOPES", "catalog:read loans:read"),
];

/// A librarian: the scopes include loans:write.
const LIBRARIAN: &[(&str, &str)] = &[
    ("MCP_PRINCIPAL_SUBJECT", "desk-1"),
    (
        "MCP_PRINCIPAL_SCOPES",
        "catalog:read loans:read loans:write",
    ),
];

fn spec() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../lending/spec.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("spec.json")).expect("spec JSON")
}

async fn stdio(modern: bool, client: TestClient, env: &[(&str, &str)]) -> Session {
    if modern {
        Session::modern_env("lending", Transport::Stdio, client, env).await
    } else {
        Session::legacy_env("lending", Transport::Stdio, client, env).await
    }
}

/// The text of a resource read, or its JSON-RPC error.
async fn read(session: &Session, uri: &str) -> Result<String, ErrorData> {
    match session
        .service
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
    {
        Ok(result) => {
            assert_eq!(result.contents.len(), 1, "{result:?}");
            match &result.contents[0] {
                ResourceContents::TextResourceContents {
                    uri: got,
                    mime_type,
                    text,
                    ..
                } => {
                    assert_eq!(
                        (got.as_str(), mime_type.as_deref()),
                        (uri, Some("application/json"))
                    );
                    Ok(text.clone())
                }
                other => panic!("a text resource: {other:?}"),
            }
        }
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("resources/read {uri}: {other}"),
    }
}

async fn the_principal_reaches_the_resolver(modern: bool) {
    let client = TestClient::full()
        .accept(json!({"confirm": true}))
        .answer(ElicitResult::new(ElicitationAction::Decline));
    let session = stdio(modern, client.clone(), ALICE).await;
    assert_eq!(
        session
            .text("search_catalog", json!({"query": "DUNE herbert"}))
            .await,
        DUNE
    );
    assert_eq!(
        session
            .text("search_catalog", json!({"query": "nothing"}))
            .await,
        "No book matches 'nothing'."
    );
    assert_eq!(
        session.text("my_loans", json!({})).await,
        "alice has no loans."
    );
    // Scopes are not enforced over stdio: alice (no loans:write) borrows; the member is the
    // principal's subject, whatever the arguments say.
    assert_eq!(
        session
            .text(
                "borrow_book",
                json!({"book_id": "lib-1", "member": "mallory"})
            )
            .await,
        "alice borrowed 'Dune' (lib-1); due back in 21 days. 1 of 2 copies on the shelf."
    );
    assert_eq!(
        session
            .text("borrow_book", json!({"book_id": "lib-4"}))
            .await,
        "alice did not borrow 'Kindred'."
    );
    assert_eq!(
        session
            .error_text("borrow_book", json!({"book_id": "lib-1"}))
            .await,
        "Error executing tool borrow_book: alice already has 'Dune' on loan."
    );
    assert_eq!(
        session
            .error_text("borrow_book", json!({"book_id": "lib-9"}))
            .await,
        "Error executing tool borrow_book: There is no book lib-9 in the catalog."
    );
    let schema = spec()["$defs"]["BorrowConfirmation"].clone();
    let asked = |title: &str, author: &str| Question::Form {
        message: format!("Borrow '{title}' by {author} as alice? It is due back in 21 days."),
        schema: schema.clone(),
    };
    assert_eq!(
        client.asked(),
        vec![
            asked("Dune", "Frank Herbert"),
            asked("Kindred", "Octavia E. Butler")
        ]
    );
    assert_eq!(
        session.text("my_loans", json!({})).await,
        "alice has 1 loan: lib-1 Dune."
    );
    assert_eq!(
        read(&session, "library://members/alice/loans").await,
        Ok(r#"[{"book_id":"lib-1","title":"Dune"}]"#.to_string())
    );
    let refused = read(&session, "library://members/bob/loans")
        .await
        .expect_err("not a librarian");
    assert_eq!(
        (refused.code.0, refused.message.as_ref(), refused.data),
        (
            -32602,
            "alice may read only their own loans (librarians: loans:write).",
            Some(json!({"uri": "library://members/bob/loans"}))
        )
    );
    let prompt = session
        .service
        .get_prompt(
            GetPromptRequestParams::new("loan_summary")
                .with_arguments(json!({"tone": "friendly"}).as_object().unwrap().clone()),
        )
        .await
        .expect("prompts/get");
    assert_eq!(
        serde_json::to_value(&prompt.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text", "text":
            "In a friendly tone, summarise these loans for the member and remind them that a loan lasts 21 days. alice has 1 loan: lib-1 Dune."}}])
    );
    assert_eq!(
        session
            .text("return_book", json!({"book_id": "lib-1"}))
            .await,
        "alice returned 'Dune' (lib-1)."
    );
    assert_eq!(
        session
            .error_text("return_book", json!({"book_id": "lib-1"}))
            .await,
        "Error executing tool return_book: alice has not borrowed 'Dune'."
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_principal_reaches_the_resolver_legacy() {
    the_principal_reaches_the_resolver(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_principal_reaches_the_resolver_2026_07_28() {
    the_principal_reaches_the_resolver(true).await;
}

/// A principal whose scopes include loans:write is a librarian: it reads anyone's loans and the
/// ledger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_librarian_reads_every_loan() {
    let client = TestClient::full().accept(json!({"confirm": true}));
    let session = stdio(true, client, LIBRARIAN).await;
    assert_eq!(
        session
            .text("borrow_book", json!({"book_id": "lib-3"}))
            .await,
        "desk-1 borrowed 'Neuromancer' (lib-3); due back in 21 days. 0 of 1 copies on the shelf."
    );
    assert_eq!(
        read(&session, "library://members/bob/loans").await,
        Ok("[]".to_string())
    );
    assert_eq!(
        read(&session, "library://ledger").await,
        Ok(r#"{"desk-1":[{"book_id":"lib-3","title":"Neuromancer"}]}"#.to_string())
    );
    assert_eq!(
        session
            .text("search_catalog", json!({"query": "neuromancer"}))
            .await,
        "lib-3: 'Neuromancer' by William Gibson (0 of 1 on the shelf)"
    );
    session.close().await;
}

/// Runs the lending binary with `args` and no `MCP_*` variables: (exit code, stderr).
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let mut command = Command::new(common::binary("lending"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars() {
        if name.starts_with("MCP_") {
            command.env_remove(name);
        }
    }
    let output = command.output().expect("run lending");
    (
        output.status.code(),
        String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    )
}

#[test]
fn stdio_without_a_principal_refuses_to_start() {
    assert_eq!(
        refused(&["--log-level", "warn"]),
        (
            Some(2),
            "error: this server's spec requires authorization: over stdio set MCP_PRINCIPAL_SUBJECT (the caller's subject; MCP authorization applies to HTTP)\n"
                .to_string()
        )
    );
}

/// The stdio server says once, at start, that scopes are not enforced and who the principal is
/// (its binding: `[client_id, issuer, subject]`).
#[test]
fn stdio_logs_the_principal_and_that_scopes_are_not_enforced() {
    let output = Command::new(common::binary("lending"))
        .args(["--log-level", "info"])
        .envs(ALICE.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run lending");
    let stderr = String::from_utf8(output.stderr).expect("UTF-8 stderr");
    let line = r#"INFO mcpgen_runtime::server::serve: stdio: scopes are not enforced (MCP authorization applies to HTTP); principal: subject 'alice', client 'alice', issuer 'https://id.example.com'"#;
    assert_eq!(
        stderr.lines().filter(|l| l.ends_with(line)).count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("scopes are not enforced").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn http_without_an_issuer_refuses_to_start() {
    let bind = format!("127.0.0.1:{}", common::free_port());
    let message = "error: this server's spec requires authorization: set --auth-issuer (or MCP_AUTH_ISSUER) and --auth-resource (or MCP_AUTH_RESOURCE)\n";
    assert_eq!(
        refused(&["--transport", "http", "--bind", &bind]),
        (Some(2), message.to_string())
    );
}

/// Over HTTP with an issuer (here one that does not answer): the protected-resource metadata is
/// served without any authorization server, and a request without a token gets the challenge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_metadata_and_the_challenge_need_no_authorization_server() {
    let issuer = format!("http://127.0.0.1:{}", common::free_port());
    let port = common::free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let mut child = tokio::process::Command::new(common::binary("lending"))
        .args([
            "--transport",
            "http",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--log-level",
            "error",
            "--auth-issuer",
            &issuer,
            "--auth-resource",
            &resource,
        ])
        .kill_on_drop(true)
        .spawn()
        .expect("spawn lending");
    let mut up = false;
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(up, "lending did not start");
    common::tls_provider();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let origin = format!("http://127.0.0.1:{port}");
    let metadata = json!({
        "resource": resource,
        "authorization_servers": [issuer],
        "scopes_supported": ["catalog:read", "loans:read", "loans:write"],
        "bearer_methods_supported": ["header"]
    });
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let res = http.get(format!("{origin}{path}")).send().await.unwrap();
        assert_eq!(res.status().as_u16(), 200, "{path}");
        assert_eq!(res.headers()["content-type"], "application/json");
        assert_eq!(res.headers()["cache-control"], "public, max-age=3600");
        let body: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
        assert_eq!(body, metadata, "{path}");
    }
    let res = http
        .post(format!("{origin}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 401);
    assert_eq!(
        res.headers()["www-authenticate"],
        format!(
            r#"Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp", scope="catalog:read""#
        )
        .as_str()
    );
    assert_eq!(res.headers()["content-type"], "application/json");
    assert_eq!(res.headers()["cache-control"], "no-store");
    assert_eq!(
        res.text().await.unwrap(),
        r#"{"error_description":"Authentication required"}"#
    );
    let _ = child.kill().await;
}
