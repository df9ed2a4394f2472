//! The crate README's "Testing" section, followed word for word: a crate generated from
//! `tests/readme/clinic.json` (a spec in no example, written as pydantic writes schemas: a
//! `title` on every field, an enum in `$defs`), the one change the README names applied to
//! `src/handlers.rs`, the test it shows saved where it says, the `tests/tools.rs` test it
//! replaces deleted, the kit list's capabilities snippet ("everything except elicitation") in a
//! test of its own, and `cargo test`: the README's test (an accepted answer and a decline), the
//! snippet's and the rest of `tests/tools.rs` pass, with no server process and no network.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Lints, root};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn mcpgen(args: &[&str], dir: &Path) {
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
}

/// The text of `section` (`## Testing`, `### A test ..`) up to the next heading of its level or
/// higher.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no {heading:?} in\n{text}"))
        + 1;
    let body = &text[start + heading.len()..];
    let end = body
        .lines()
        .scan(0, |at, line| {
            let here = *at;
            *at += line.len() + 1;
            Some((here, line))
        })
        .find(|(_, line)| {
            let hashes = line.chars().take_while(|c| *c == '#').count();
            (1..=level).contains(&hashes) && line[hashes..].starts_with(' ')
        })
        .map_or(body.len(), |(at, _)| at);
    &text[start..start + heading.len() + end]
}

/// The fenced blocks of `text` in the language `lang`, in order, without their fences.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in text.lines() {
        match &mut current {
            None if line == format!("```{lang}") => current = Some(Vec::new()),
            Some(_) if line == "```" => out.push(current.take().unwrap().join("\n")),
            Some(lines) => lines.push(line),
            None => {}
        }
    }
    out
}

/// The text between the first `before` and the next `after` in `text`.
fn between<'a>(text: &'a str, before: &str, after: &str) -> &'a str {
    let start = text
        .find(before)
        .unwrap_or_else(|| panic!("no {before:?} in\n{text}"))
        + before.len();
    let len = text[start..]
        .find(after)
        .unwrap_or_else(|| panic!("no {after:?} after {before:?}"));
    &text[start..start + len]
}

#[test]
fn the_readme_testing_section_followed_word_for_word_passes() {
    let ws = root().join("target/readme-testing");
    let _ = std::fs::remove_dir_all(&ws);
    std::fs::create_dir_all(&ws).unwrap();
    // A workspace of its own (else cargo takes the crate for a stray part of mcpgen's own
    // workspace, whose `target/` holds it).
    common::workspace(&ws, &["clinic"]);
    let spec = root().join("tests/readme/clinic.json");
    mcpgen(&["new", "clinic", "--spec", spec.to_str().unwrap()], &ws);
    let dir = ws.join("clinic");
    let readme = read(&dir.join("README.md"));

    let testing = section(&readme, "## Testing");
    assert!(testing.contains("```sh\ncargo test\n```"), "{testing}");
    assert!(testing.contains("`tests/tools.rs` is yours"), "{testing}");
    let example = section(testing, "### A test for a tool that asks");
    // The first tool that asks, by its only resolver.
    assert!(
        example.starts_with(
            "### A test for a tool that asks\n\n`book_visit` asks first (its resolver `confirm_visit` asks a form question)."
        ),
        "{example}"
    );

    // "In `src/handlers.rs`, in `async fn confirm_visit`, replace <block> with <block>".
    let function = between(example, "in `async fn ", "`, replace");
    assert_eq!(function, "confirm_visit");
    let rust = blocks(example, "rust");
    let [stub, change, test] = rust.as_slice() else {
        panic!("three rust blocks expected in\n{example}")
    };
    assert_eq!(stub, "Err(ToolError::not_implemented(\"confirm_visit\"))");
    let handlers_path = dir.join("src/handlers.rs");
    let handlers = read(&handlers_path);
    assert_eq!(
        handlers.matches(stub.as_str()).count(),
        1,
        "the stub's line, once, in\n{handlers}"
    );
    let in_function = between(&handlers, &format!("async fn {function}("), "\n    }\n");
    assert!(in_function.contains(stub.as_str()), "{in_function}");
    std::fs::write(&handlers_path, handlers.replace(stub.as_str(), change)).unwrap();

    // "then save this as `tests/<file>`:".
    let file = between(example, "then save this as `", "`:");
    assert_eq!(file, "tests/book_visit_asks.rs");
    std::fs::write(dir.join(file), format!("{test}\n")).unwrap();

    // "The `book_visit` test of `tests/tools.rs` now fails ...: delete that test (`async fn
    // book_visit`, its attributes and doc comment)".
    assert_eq!(
        between(example, "The `", "` test of `tests/tools.rs` now fails"),
        "book_visit"
    );
    let doomed = between(
        example,
        "delete that test\n(`async fn ",
        "`, its attributes",
    );
    assert_eq!(doomed, "book_visit");
    let tools_path = dir.join("tests/tools.rs");
    let tools = read(&tools_path);
    let items: Vec<&str> = tools.split("\n\n").collect();
    let kept: Vec<&str> = (items.iter().copied())
        .filter(|item| !item.contains(&format!("async fn {doomed}() {{")))
        .collect();
    assert_eq!(
        kept.len() + 1,
        items.len(),
        "one test deleted from\n{tools}"
    );
    std::fs::write(&tools_path, kept.join("\n\n")).unwrap();

    // The capabilities of "everything except elicitation", as the list shows them, in a test
    // of their own: the form question of `book_visit` then fails with -32021.
    let kit_list = &testing[..testing.find("\n### ").unwrap_or(testing.len())];
    let capabilities = between(kit_list, "  ```rust\n", "\n  ```");
    assert!(
        capabilities.contains("everything_but_elicitation.elicitation = None;"),
        "{capabilities}"
    );
    let args = between(
        test,
        ".book_visit(serde_json::from_value(json!(",
        ")).unwrap())",
    );
    let body: String = (capabilities.lines())
        .map(|l| format!("    {}\n", l.strip_prefix("  ").unwrap_or(l)))
        .collect();
    std::fs::write(
        dir.join("tests/readme_capabilities.rs"),
        format!(
            "use clinic::generated::testing::{{CallError, TestServer}};\n\
             use clinic::handlers::Clinic;\n\n\
             #[tokio::test]\n\
             async fn everything_but_elicitation() {{\n    \
             let server = TestServer::new(Clinic::default());\n\
             {body}    \
             assert_eq!(clients.len(), 4);\n    \
             for client in clients {{\n        \
             client.decline();\n        \
             let error = client.call_tool(\"book_visit\", serde_json::json!({args})).await.unwrap_err();\n        \
             assert!(matches!(error, CallError::Protocol {{ code: -32021, .. }}), \"{{}}: {{error:?}}\", client.label());\n    \
             }}\n\
             }}\n"
        ),
    )
    .unwrap();

    // "and run `cargo test`", with the examples' lock file (see `workspace`) and a target
    // directory shared with the other generated crates' tests.
    let stdout = cargo_test(&dir);
    // The README's one test, the capabilities' one and tools.rs's other one ran and passed.
    let results: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("test result:"))
        .collect();
    let passed = |n: usize| {
        results
            .iter()
            .filter(|l| l.starts_with(&format!("test result: ok. {n} passed; 0 failed")))
            .count()
    };
    assert_eq!(
        (passed(1), passed(2)),
        (3, 0),
        "the README's test, the capabilities' and tests/tools.rs:\n{stdout}"
    );
}

/// `cargo test` in `dir`; panics with the output unless it passes. Returns the output.
fn cargo_test(dir: &Path) -> String {
    let out = common::cargo(dir, &["test", "--quiet"], Lints::None);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "cargo test failed in {}:\n{stdout}\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A crate made before the test kit (no `src/lib.rs`, `main.rs` declaring the modules, no kit
/// in `Cargo.toml`) gets it by the README's three steps.
#[test]
fn an_older_crate_gets_the_kit_by_the_readme_steps() {
    let ws = root().join("target/readme-testing-older");
    let _ = std::fs::remove_dir_all(&ws);
    // The crate one level down: cargo names a workspace member's artifacts by its path in the
    // workspace, and the other test's `clinic` shares the target directory.
    std::fs::create_dir_all(ws.join("older")).unwrap();
    common::workspace(&ws, &["older/clinic"]);
    let spec = root().join("tests/readme/clinic.json");
    mcpgen(
        &["new", "clinic", "--spec", spec.to_str().unwrap()],
        &ws.join("older"),
    );
    let dir = ws.join("older/clinic");
    let readme = read(&dir.join("README.md"));
    let older = section(&readme, "### A crate made before the test kit");
    let unindent = |block: &str| {
        (block.lines().map(|l| l.strip_prefix("   ").unwrap_or(l)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let indented = |lang: &str| -> Vec<String> {
        let mut out = Vec::new();
        let mut current: Option<Vec<&str>> = None;
        for line in older.lines() {
            match &mut current {
                None if line == format!("   ```{lang}") => current = Some(Vec::new()),
                Some(_) if line == "   ```" => {
                    out.push(unindent(&current.take().unwrap().join("\n")))
                }
                Some(lines) => lines.push(line),
                None => {}
            }
        }
        out
    };
    let rust = indented("rust");
    let toml = indented("toml");
    let [lib_rs, main_fn] = rust.as_slice() else {
        panic!("two rust blocks expected in\n{older}")
    };
    let (optional_deps, tables) = match toml.as_slice() {
        [deps, tables] => (deps.as_str(), tables.as_str()),
        [tables] => ("", tables.as_str()),
        _ => panic!("one or two toml blocks expected in\n{older}"),
    };

    // Make it an older crate: what `new` wrote before the kit.
    std::fs::remove_file(dir.join("src/lib.rs")).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "//! The `Clinic` MCP server.\n\n#[rustfmt::skip]\nmod generated;\nmod handlers;\n\n\
         fn main() -> std::process::ExitCode {\n    generated::serve(handlers::Clinic::default())\n}\n",
    )
    .unwrap();
    let manifest = read(&dir.join("Cargo.toml"));
    let mut old = manifest.clone();
    for line in optional_deps.lines() {
        old = old.replace(&format!("{line}\n"), "");
    }
    for line in tables.lines().filter(|l| !l.is_empty()) {
        let line = format!("{line}\n");
        assert!(old.contains(&line), "{line:?} not in\n{manifest}");
        old = old.replacen(&line, "", 1);
    }
    std::fs::write(dir.join("Cargo.toml"), &old).unwrap();

    // 1. Create `src/lib.rs`.
    std::fs::write(dir.join("src/lib.rs"), format!("{lib_rs}\n")).unwrap();
    // 2. Delete the module lines of `src/main.rs`; serve through the library.
    let main = read(&dir.join("src/main.rs"));
    let main: String = main
        .lines()
        .filter(|l| !matches!(*l, "mod generated;" | "mod handlers;" | "#[rustfmt::skip]"))
        .collect::<Vec<_>>()
        .join("\n");
    let start = main.find("fn main()").expect("fn main");
    std::fs::write(
        dir.join("src/main.rs"),
        format!("{}{main_fn}\n", &main[..start]),
    )
    .unwrap();
    // 3. The dependencies to `[dependencies]`, the tables at the end.
    let with_deps = if optional_deps.is_empty() {
        old.clone()
    } else {
        old.replacen(
            "[dependencies]\n",
            &format!("[dependencies]\n{optional_deps}\n"),
            1,
        )
    };
    std::fs::write(
        dir.join("Cargo.toml"),
        format!("{}\n{tables}\n", with_deps.trim_end()),
    )
    .unwrap();

    // "then `mcpgen generate` and `cargo test`".
    mcpgen(&["generate"], &dir);
    let stdout = cargo_test(&dir);
    assert!(
        stdout.contains("test result: ok. 2 passed; 0 failed"),
        "tests/tools.rs:\n{stdout}"
    );
}
