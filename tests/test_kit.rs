//! The test kit in freshly generated crates: `cargo test` in crates `mcpgen new` just wrote
//! (kit-bookshop, `specs/bookshop.json`; library, `tests/auth/library.json`, a spec with `auth`;
//! parts, `tests/test_kit/parts.json`, arguments with a `pattern` mcpgen matches and one it
//! cannot) passes exactly the tests `new` writes into `tests/tools.rs`, one per tool, each
//! calling its tool through `generated::testing` on both protocol eras and both transports, in
//! process (no server process, no socket). `cargo build` never compiles the kit: the `testing` feature is
//! turned on by the crate's dev-dependency on itself only.
//!
//! Three crates only (the kit compiles rmcp's client side); the schema corpus checks the
//! generated kit of every corpus spec with clippy (`--all-features`) without building tests.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Lints, root};

/// `cargo <args>` in `dir`, in the suite's shared target directory; its stdout and stderr, or
/// a panic with them.
fn cargo(dir: &Path, args: &[&str]) -> (String, String) {
    let out = common::cargo(dir, args, Lints::None);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "cargo {args:?} failed in {}:\n{stdout}\n{stderr}",
        dir.display()
    );
    (stdout, stderr)
}

#[test]
fn the_tests_new_writes_pass_through_the_kit_and_builds_leave_it_out() {
    let ws = root().join("target/test-kit/ws");
    let _ = std::fs::remove_dir_all(&ws);
    std::fs::create_dir_all(&ws).unwrap();
    // Not `bookshop`: the example of that name shares the target directory.
    common::workspace(&ws, &["kit-bookshop", "library", "parts"]);
    for (name, spec) in [
        ("kit-bookshop", "specs/bookshop.json"),
        ("library", "tests/auth/library.json"),
        ("parts", "tests/test_kit/parts.json"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
            .args(["new", name, "--spec"])
            .arg(root().join(spec))
            .arg("--dir")
            .arg(ws.join(name))
            .arg("--runtime-path")
            .arg(root().join("runtime"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // `check_part`'s SKU pattern is matched; `set_pin`'s look-ahead is beyond mcpgen, so its
    // test sends `{}` as raw JSON and expects the violations.
    let tools = std::fs::read_to_string(ws.join("parts/tests/tools.rs")).unwrap();
    for expected in [
        "            .check_part(\n                serde_json::from_value(json!({ \"sku\" : \"SKU-AAA00\", \"quantity\" : 1 }))\n",
        "/// mcpgen could not make arguments the input schema accepts (a `pattern` with a look-around,\n\
         /// say): this test sends `{}` as raw JSON and expects the server's violations. Replace it with a\n\
         /// call of `client.set_pin(..)` with valid arguments, asserting what the tool answers.\n",
        "    let expected = CallError::InvalidArguments(vec![\n        \"(root) (required): \\\"pin\\\" is a required property\".to_string(),\n    ]);\n",
        "let error = client.call_tool(\"set_pin\", json!({})).await.unwrap_err();",
    ] {
        assert!(tools.contains(expected), "{expected}\nnot in\n{tools}");
    }

    // A normal build has neither the feature nor rmcp's client.
    let (tree, _) = cargo(
        &ws,
        &[
            "tree",
            "-p",
            "kit-bookshop",
            "-e",
            "features,no-dev",
            "--prefix",
            "none",
        ],
    );
    for absent in [
        "kit-bookshop feature \"testing\"",
        "rmcp feature \"client\"",
    ] {
        assert!(
            !tree.contains(absent),
            "{absent} in a normal build:\n{tree}"
        );
    }
    assert!(tree.contains("rmcp feature \"server\""), "{tree}");
    // Tests have both, through the dev-dependency.
    let (tree, _) = cargo(
        &ws,
        &[
            "tree",
            "-p",
            "kit-bookshop",
            "-e",
            "features",
            "--prefix",
            "none",
        ],
    );
    for present in [
        "kit-bookshop feature \"testing\"",
        "rmcp feature \"client\"",
    ] {
        assert!(
            tree.contains(present),
            "no {present} with dev-dependencies:\n{tree}"
        );
    }

    let (stdout, stderr) = cargo(&ws, &["test", "--workspace", "--", "--test-threads=4"]);
    let mut passed: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... ok"))
        .collect();
    passed.sort_unstable();
    assert_eq!(
        passed,
        [
            "add_book",
            "borrow",
            "check_part",
            "my_loans",
            "order_book",
            "recommend_book",
            "reserve_book",
            "search",
            "search_books",
            "set_pin"
        ],
        "{stdout}\n{stderr}"
    );
    assert_eq!(
        stderr.matches("Running tests/tools.rs").count(),
        3,
        "{stderr}"
    );
    assert!(!stdout.contains("FAILED"), "{stdout}");
}
