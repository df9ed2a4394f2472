//! `mcpgen graph` (the resolver graph as Mermaid or Graphviz), the crate README's picture that
//! `new` writes and `generate` redraws, `mcpgen completions`, and the commands that find the
//! crate's spec from a directory inside it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn mcpgen_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("mcpgen runs");
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn mcpgen(args: &[&str]) -> (i32, String, String) {
    mcpgen_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpgen-graph-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const LENDING: &str = r#"flowchart LR
    t0(["tool search_catalog"])
    t1(["tool my_loans<br/>scopes: loans:read"])
    t2(["tool borrow_book<br/>scopes: loans:write"])
    t3(["tool return_book<br/>scopes: loans:write"])
    p0[["prompt loan_summary"]]
    r0["member"]
    r1["confirm_borrow<br/>asks: elicit"]
    a_book_5fid[/"argument book_id"/]
    caller[/"verified caller"/]
    a_book_5fid -->|"book_id"| r1
    caller -->|"me"| r0
    r0 -->|"member"| p0
    r0 -->|"member"| r1
    r0 -->|"member"| t1
    r0 -->|"member"| t2
    r0 -->|"member"| t3
    r1 -->|"confirmation (outcome)"| t2
"#;

#[test]
fn the_mermaid_picture_names_every_tool_prompt_resolver_and_source() {
    let (code, stdout, stderr) = mcpgen(&["graph", "generated-examples/lending/spec.json"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(stdout, LENDING);
}

#[test]
fn one_tool_in_dot_numbers_its_resolvers_in_run_order() {
    let (code, stdout, stderr) = mcpgen(&[
        "graph",
        "specs/bookshop.json",
        "--tool",
        "order_book",
        "--format",
        "dot",
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        r#"digraph "Bookshop" {
    rankdir=LR;
    t3 [label="tool order_book", shape=box, style=rounded];
    r0 [label="1. check_stock", shape=box];
    r1 [label="2. estimate_delivery", shape=box];
    r2 [label="3. confirm_backorder\nasks: elicit", shape=box];
    a_title [label="argument title", shape=parallelogram];
    a_title -> r0 [label="title"];
    a_title -> r2 [label="title"];
    r0 -> r1 [label="stock"];
    r0 -> r2 [label="stock"];
    r0 -> t3 [label="stock"];
    r1 -> t3 [label="delivery"];
    r2 -> t3 [label="backorder"];
}
"#
    );
}

#[test]
fn a_context_parameter_and_a_sampling_resolver_are_drawn() {
    let dir = tempdir("context");
    let spec = dir.join("spec.json");
    std::fs::write(
        &spec,
        r#"{"name": "S", "version": "1.0.0",
            "resolvers": {
              "ask_model": {"params": {"ctx": "context", "topic": "arg"}, "asks": "sample"},
              "pick": {"params": {"idea": {"resolver": "ask_model"}}, "returns": {"type": "string"}}
            },
            "tools": {
              "brainstorm": {"description": "d", "input": {"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]},
                             "resolve": {"choice": "pick"}}
            }}"#,
    )
    .unwrap();
    let (code, stdout, stderr) = mcpgen(&["graph", spec.to_str().unwrap(), "--tool", "brainstorm"]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert_eq!(
        stdout,
        r#"flowchart LR
    t0(["tool brainstorm"])
    r0["1. ask_model<br/>asks: sample"]
    r1["2. pick"]
    a_topic[/"argument topic"/]
    ctx[/"request context"/]
    a_topic -->|"topic"| r0
    ctx -->|"ctx"| r0
    r0 -->|"idea"| r1
    r1 -->|"choice"| t0
"#
    );
}

#[test]
fn an_unknown_tool_is_a_usage_error_naming_the_known_ones() {
    let (code, stdout, stderr) = mcpgen(&["graph", "specs/bookshop.json", "--tool", "nope"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            "error: no tool or prompt is named `nope`; the spec has: search_books, add_book, reserve_book, order_book, recommend_book\n"
        )
    );
}

#[test]
fn completions_are_printed_for_each_shell() {
    let (code, bash, stderr) = mcpgen(&["completions", "bash"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(bash.starts_with("_mcpgen() {\n"), "{bash}");
    for sub in ["check", "new", "generate", "plan", "graph", "completions"] {
        assert!(bash.contains(&format!("mcpgen,{sub})")), "bash: {sub}");
    }
    let (code, zsh, _) = mcpgen(&["completions", "zsh"]);
    assert_eq!(code, 0);
    assert!(zsh.starts_with("#compdef mcpgen\n"), "{zsh}");
    let (code, fish, _) = mcpgen(&["completions", "fish"]);
    assert_eq!(code, 0);
    assert!(
        fish.contains("complete -c mcpgen -n \"__fish_mcpgen_needs_command\" -f -a \"graph\""),
        "{fish}"
    );
}

#[test]
fn the_help_shows_examples() {
    let (code, stdout, _) = mcpgen(&["--help"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Examples:\n  mcpgen new bookshop --spec spec.json "),
        "{stdout}"
    );
}

/// A crate made by `new`: `check`, `plan`, `graph` and `generate` find its spec from a
/// directory inside it; the README carries the picture, which `generate` redraws after a spec
/// edit and leaves alone without its markers.
#[test]
fn commands_find_the_crate_upward_and_generate_redraws_the_readme_graph() {
    let dir = tempdir("crate");
    let krate = dir.join("shop");
    let (code, _, stderr) = mcpgen(&[
        "new",
        "shop",
        "--spec",
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("generated-examples/lending/spec.json")
            .to_string_lossy(),
        "--dir",
        krate.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let readme = std::fs::read_to_string(krate.join("README.md")).unwrap();
    let block = format!(
        "<!-- mcpgen:graph (mcpgen generate redraws this block from the spec; delete both markers to keep your own) -->\n```mermaid\n{LENDING}```\n<!-- /mcpgen:graph -->"
    );
    assert!(readme.contains(&block), "{readme}");

    let inside = krate.join("src");
    let (code, _, stderr) = mcpgen_in(&inside, &["check"]);
    assert_eq!(
        (code, stderr),
        (0, format!("{}: ok\n", krate.join("spec.json").display()))
    );
    let (code, stdout, _) = mcpgen_in(&inside, &["graph"]);
    assert_eq!((code, stdout.as_str()), (0, LENDING));
    let (code, stdout, _) = mcpgen_in(&inside, &["plan"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("{\n  \"name\": \"Lending\""), "{stdout}");

    // The borrow confirmation dropped from the spec: generate redraws the picture.
    let spec_path = krate.join("spec.json");
    let spec = std::fs::read_to_string(&spec_path).unwrap();
    let edited = spec.replace(
        r#"{"member": "member", "confirmation": {"resolver": "confirm_borrow", "outcome": true}}"#,
        r#"{"member": "member"}"#,
    );
    assert_ne!(
        edited, spec,
        "the borrow_book binding is in the lending spec"
    );
    std::fs::write(&spec_path, edited).unwrap();
    let (code, stdout, stderr) = mcpgen_in(&inside, &["generate"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("changed: README.md (the resolver graph between its markers redrawn)"),
        "{stdout}"
    );
    let readme = std::fs::read_to_string(krate.join("README.md")).unwrap();
    assert!(
        !readme.contains(r#"r1 -->|"confirmation (outcome)"| t2"#),
        "{readme}"
    );
    assert!(readme.contains(r#"r0 -->|"member"| t2"#), "{readme}");
    let (code, stdout, _) = mcpgen_in(&inside, &["generate", "--check"]);
    assert_eq!((code, stdout.as_str()), (0, ""));

    // Without its markers the README is the user's alone.
    let own = "# shop\n\nMy own words, and my own picture.\n";
    std::fs::write(krate.join("README.md"), own).unwrap();
    std::fs::write(&spec_path, spec).unwrap();
    let (code, stdout, stderr) = mcpgen_in(&inside, &["generate"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("README.md"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(krate.join("README.md")).unwrap(),
        own
    );

    // Outside any crate: a usage error naming where the search began.
    let outside = tempdir("outside");
    let (code, _, stderr) = mcpgen_in(&outside, &["generate"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(&format!(
            "error: no crate made by mcpgen in {} or above it",
            outside.display()
        )),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&outside);
}
