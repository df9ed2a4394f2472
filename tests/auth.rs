//! Authorization end to end on the generator side: a spec with `auth` (`tests/auth/library.json`:
//! server-wide and per-operation scopes, `"principal"` parameters on plain, chained and asking
//! resolvers) and its variant with `auth.required: false` become crates whose generated text is
//! asserted exactly where it carries authorization (the `ACCESS` table, `Generated::access`, the
//! resolver signatures and their docs, the calls that take the principal, the README section,
//! `mcpgen plan`), and which build clippy-clean with handlers that read the principal. A spec
//! without `auth` gets none of it.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use common::{Lints, root};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn mcpgen(args: &[&str], dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mcpgen {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn assert_contains(text: &str, expected: &[&str], what: &str) {
    for e in expected {
        assert!(text.contains(e), "{what}: {e}\nnot in\n{text}");
    }
}

/// Where a principal comes from, as a resolver's doc says it (after its first line).
const PRINCIPAL_DOC: &str =
    "over HTTP the principal of the request's bearer token, verified against
    /// `--auth-issuer` and `--auth-resource` before anything runs; over stdio the one
    /// `MCP_PRINCIPAL_SUBJECT` (with `MCP_PRINCIPAL_ISSUER`, `MCP_PRINCIPAL_CLIENT_ID`,
    /// `MCP_PRINCIPAL_SCOPES`) describes.";

#[test]
fn a_spec_with_auth_generates_its_access_table_and_principal_resolvers_and_builds() {
    let spec = root().join("tests/auth/library.json");
    let ws = root().join("target/auth-spec/ws");
    let _ = std::fs::remove_dir_all(&ws);
    std::fs::create_dir_all(&ws).unwrap();
    common::workspace(&ws, &["library", "open-library"]);
    let mut open: Value = serde_json::from_str(&read(&spec)).unwrap();
    open["auth"]["required"] = json!(false);
    open["name"] = json!("OpenLibrary");
    let open_spec = ws.join("open-library.json");
    std::fs::write(&open_spec, serde_json::to_string_pretty(&open).unwrap()).unwrap();
    let spec_arg = spec.to_str().unwrap();
    // Both crates depend on the runtime crate: it compiles once for the two.
    let runtime = root().join("runtime");
    let runtime = runtime.to_str().unwrap();
    mcpgen(
        &[
            "new",
            "library",
            "--spec",
            spec_arg,
            "--runtime-path",
            runtime,
        ],
        &ws,
    );
    mcpgen(
        &[
            "new",
            "open-library",
            "--spec",
            "open-library.json",
            "--runtime-path",
            runtime,
        ],
        &ws,
    );

    // `mcpgen plan` shows the requirements.
    let plan: Value = serde_json::from_str(&mcpgen(&["plan", spec_arg], &ws)).unwrap();
    assert_eq!(
        plan["auth"],
        json!({"required": true, "scopes": ["catalog:read"], "scopes_supported": ["catalog:read", "loans:read", "loans:write"], "list_visible_only": false})
    );
    assert_eq!(
        plan["tools"][2]["scopes"],
        json!(["loans:read", "loans:write"])
    );
    assert_eq!(
        plan["resolvers"][0]["params"],
        json!([{"source": "principal", "name": "me"}, {"source": "context", "name": "ctx"}])
    );

    let library = ws.join("library");
    let generated = read(&library.join("src/generated/mod.rs"));
    assert_contains(
        &generated,
        &[
            "pub use self::runtime::{\n    Ask, Context, Form, Outcome, Principal, ResourceBody, ToolError, model::*,\n};",
            "static ACCESS: runtime::Access = runtime::Access {
    declared: true,
    required: true,
    scopes: &[\"catalog:read\"],
    scopes_supported: &[\"catalog:read\", \"loans:read\", \"loans:write\"],
    list_visible_only: false,
    tools: &[(\"my_loans\", &[\"loans:read\"]), (\"borrow\", &[\"loans:read\", \"loans:write\"])],
    prompts: &[(\"overdue\", &[\"loans:read\"])],
    resources: &[(\"library://rules\", &[]), (\"library://ledger\", &[\"loans:write\"])],
    templates: &[(\"library://loans/{id}\", &[\"loans:read\"])],
};",
            "    fn from_state(state: S) -> Self {
        Handler::new(state)
    }

    fn access() -> &'static runtime::Access {
        &ACCESS
    }

    fn operations() -> &'static runtime::Operations {
        &OPERATIONS
    }
}",
            &format!(
                "    /// The member calling: the token's subject.
    ///
    /// `me` is the verified caller:
    /// {PRINCIPAL_DOC}
    fn member(
        &self,
        ctx: &Context,
        me: &Principal,
    ) -> impl Future<Output = Result<String, ToolError>> + Send;"
            ),
            "        who: &Principal,\n        member: &str,\n    ) -> impl Future<Output = Result<u64, ToolError>> + Send;",
            "        title: &str,\n        caller: &Principal,\n    ) -> impl Future<Output = Result<Ask<types::ConfirmBorrowValue>, ToolError>> + Send;",
            "    /// Borrow a book.
    ///
    /// Needs the scopes `loans:read` `loans:write`, besides the server-wide `catalog:read`.
    /// Over HTTP a caller without them gets the `403` scope challenge before anything runs.
    fn borrow(",
            "    /// Reads `library://ledger`.
    ///
    /// Needs the scope `loans:write`, besides the server-wide `catalog:read`.
    /// Over HTTP a caller without them gets the `403` scope challenge before anything runs.",
            // The principal is taken once, before any resolver runs; simple and asking chains.
            "    let principal = ctx.principal().ok_or_else(runtime::unauthenticated)?;
    let r_member = runtime::resolve(\"member\", Resolvers::member(state, ctx, principal))
        .await?;
    let output = Tools::my_loans(state, ctx, args, r_member).await?;",
            "    let principal = ctx.principal().ok_or_else(runtime::unauthenticated)?;
    let round = Round::new(ctx);",
            "            let call = Resolvers::loan_limit(state, ctx, principal, member);
            Slot::Ready(runtime::resolve(\"loan_limit\", call).await?)",
            "        let ask = Resolvers::confirm_borrow(state, ctx, args.title.as_str(), principal);
        round.ask::<runtime::Elicitation<_>>(\"confirm_borrow\", ask).await?",
            "    let principal = ctx.principal().ok_or_else(runtime::unauthenticated)?;
    let r_member = runtime::resolve(\"member\", Resolvers::member(state, ctx, principal))
        .await?;
    let messages = Prompts::overdue(state, ctx, args, r_member).await?;",
        ],
        "library's generated module",
    );
    // A tool whose chain takes no principal does not look for one.
    let search = generated.split("async fn call_search").nth(1).unwrap();
    let search = search.split("\n}\n").next().unwrap();
    assert!(!search.contains("principal"), "{search}");

    let handlers_path = library.join("src/handlers.rs");
    let handlers = read(&handlers_path);
    assert_contains(
        &handlers,
        &[
            "use crate::generated::{\n    Ask, ContentBlock, Context, Principal, PromptMessage, Prompts, Resolvers, ResourceBody,\n    Resources, ToolError, Tools,\n};",
            &format!(
                "    /// `me` is the verified caller:
    /// {PRINCIPAL_DOC}
    async fn member(&self, _ctx: &Context, _me: &Principal) -> Result<String, ToolError> {{"
            ),
            "    async fn loan_limit(\n        &self,\n        _ctx: &Context,\n        _who: &Principal,\n        _member: &str,\n    ) -> Result<u64, ToolError> {",
            "        _title: &str,\n        _caller: &Principal,\n    ) -> Result<Ask<types::ConfirmBorrowValue>, ToolError> {",
        ],
        "library's handlers",
    );

    let readme = read(&library.join("README.md"));
    assert_contains(
        &readme,
        &[
            "\n## Authorization\n\nThe spec declares `auth`: over HTTP this server is an OAuth 2.1 resource server (the MCP\nauthorization specification). Every request needs a valid bearer access token.\nEvery request needs the scope `catalog:read`.\nOperations that need scopes of their own:\n\n- tool `my_loans`: `loans:read`\n- tool `borrow`: `loans:read` `loans:write`\n- prompt `overdue`: `loans:read`\n- resource `library://ledger`: `loans:write`\n- template `library://loans/{id}`: `loans:read`\n",
            "| `--auth-issuer URL` | `MCP_AUTH_ISSUER` |",
            "| `--auth-resource URL` | `MCP_AUTH_RESOURCE` |",
            "Without an issuer the server refuses to start over HTTP (exit 2), saying which flag to set.",
            "`https://mcp.example.com/.well-known/oauth-protected-resource/mcp` (and\n`/.well-known/oauth-protected-resource`), listing the issuer and the scopes `catalog:read` `loans:read` `loans:write`.",
            "and `MCP_PRINCIPAL_SCOPES` (space-separated). Without `MCP_PRINCIPAL_SUBJECT` the server refuses\nto start (exit 2).",
            "      \"env\": {\"MCP_PRINCIPAL_SUBJECT\": \"you@example.com\"}",
            "- `borrow` (resolved before it runs: `member`, `limit`, `confirm`) (needs `loans:read` `loans:write`): Borrow a book.",
        ],
        "library's README",
    );

    // Not required: the principal is optional, and taken as it is.
    let open_dir = ws.join("open-library");
    let generated = read(&open_dir.join("src/generated/mod.rs"));
    assert_contains(
        &generated,
        &[
            "    required: false,\n",
            &format!(
                "    /// `me` is the verified caller, if any:
    /// {PRINCIPAL_DOC}
    /// `None` for an anonymous HTTP request (the spec's `auth.required` is false) and
    /// over stdio without `MCP_PRINCIPAL_SUBJECT`.
    fn member(
        &self,
        ctx: &Context,
        me: Option<&Principal>,
    ) -> impl Future<Output = Result<String, ToolError>> + Send;"
            ),
            "    let principal = ctx.principal();\n    let r_member = runtime::resolve(\"member\", Resolvers::member(state, ctx, principal))\n        .await?;",
        ],
        "open-library's generated module",
    );
    assert!(!generated.contains("unauthenticated"));
    let open_readme = read(&open_dir.join("README.md"));
    assert_contains(
        &open_readme,
        &[
            "Anonymous requests pass (`auth.required` is false), but a token that is\nsent must verify, and an operation with scopes of its own needs one.",
            "Without them a `\"principal\"` resolver receives `None`.",
        ],
        "open-library's README",
    );
    assert!(!open_readme.contains("\"env\""));

    // Handlers that read the principal, through the names the generated module exports.
    let handlers = handlers
        .replace(
            "async fn member(&self, _ctx: &Context, _me: &Principal) -> Result<String, ToolError> {\n        Err(ToolError::not_implemented(\"member\"))",
            "async fn member(&self, _ctx: &Context, me: &Principal) -> Result<String, ToolError> {\n        Ok(format!(\"{} ({} via {})\", me.subject, me.issuer, me.client_id))",
        )
        .replace(
            "        Err(ToolError::not_implemented(\"loan_limit\"))",
            "        let librarian = _who.has_scopes(&[\"loans:write\"]) && !_member.is_empty();\n        Ok(if librarian { 20 } else { 3 })",
        );
    assert!(handlers.contains("me.subject"));
    assert!(handlers.contains("has_scopes"));
    std::fs::write(&handlers_path, handlers).unwrap();
    let open_handlers = open_dir.join("src/handlers.rs");
    let text = read(&open_handlers).replace(
        "async fn member(&self, _ctx: &Context, _me: Option<&Principal>) -> Result<String, ToolError> {\n        Err(ToolError::not_implemented(\"member\"))",
        "async fn member(\n        &self,\n        _ctx: &Context,\n        me: Option<&Principal>,\n    ) -> Result<String, ToolError> {\n        Ok(me.map_or_else(|| \"anonymous\".to_string(), |p| p.subject.clone()))",
    );
    assert!(text.contains("\"anonymous\""), "{text}");
    std::fs::write(&open_handlers, text).unwrap();

    // Every target, linted (in the suite's shared target directory).
    let out = common::cargo(
        &ws,
        &[
            "build",
            "--workspace",
            "--all-targets",
            "--quiet",
            "--message-format=short",
        ],
        Lints::Clippy,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the crates do not build clippy-clean:\n{stderr}"
    );
    assert!(!stderr.contains("warning"), "warnings:\n{stderr}");
}

#[test]
fn a_spec_without_auth_generates_no_access_table() {
    let generated = read(&root().join("generated-examples/bookshop/src/generated/mod.rs"));
    for absent in ["ACCESS", "fn access", "Principal", "principal"] {
        assert!(!generated.contains(absent), "{absent} in bookshop");
    }
}
