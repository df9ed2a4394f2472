//! A realistic history on a generated crate, in both modes (CLI and build.rs): add a tool, add a
//! resolver to an existing tool, change a description, rename a tool (by hand, then a tool and a
//! resolver with `generate --rename`), delete a tool, change a resolver's parameters, with user
//! code edited in between. After each step no byte of user code
//! is lost, the crate compiles, and `generate --check` says exactly when something is stale.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use common::root;

fn mcpgen(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `cargo build ARGS` in the crate, in the suite's shared target directory and with the
/// examples' lock file, so the dependencies compiled for the examples are reused (`cargo check`
/// would compile them all again, in check mode).
fn build(dir: &Path, args: &[&str]) -> (bool, String) {
    let args = [&["build", "--quiet", "--message-format=short"], args].concat();
    let out = common::cargo(dir, &args, common::Lints::None);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// True when `new` is `old` with lines inserted only (every line of `old` kept, unchanged, in
/// order).
fn only_inserted(old: &str, new: &str) -> bool {
    similar::TextDiff::from_lines(old, new)
        .ops()
        .iter()
        .all(|op| matches!(op.tag(), similar::DiffTag::Equal | similar::DiffTag::Insert))
}

fn base_spec() -> Value {
    json!({
        "name": "Shop",
        "$defs": {"Stock": {"type": "object", "properties": {"copies": {"type": "integer"}}, "required": ["copies"]}},
        "resolvers": {"check_stock": {"params": {"title": "arg"}, "returns": {"$ref": "#/$defs/Stock"}}},
        "tools": {
            "reserve_book": {
                "description": "Reserve a copy of a book.",
                "input": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
                "output": {"type": "string"},
                "resolve": {"stock": "check_stock"}
            },
            "search": {
                "description": "Search the catalog.",
                "input": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
                "output": {"type": "string"}
            }
        }
    })
}

fn write_spec(dir: &Path, spec: &Value) {
    std::fs::write(
        dir.join("spec.json"),
        serde_json::to_string_pretty(spec).unwrap() + "\n",
    )
    .unwrap();
}

/// Replaces `from` (which must occur) by `to` in the user's handlers: a user editing code.
fn user_edit(dir: &Path, from: &str, to: &str) {
    let path = dir.join("src/handlers.rs");
    let text = read(&path);
    assert!(text.contains(from), "user edit: {from:?} not in\n{text}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// The text of method `name` in the handlers, from `async fn name(` to its closing `    }\n`.
fn method_text(dir: &Path, name: &str) -> String {
    let text = read(&dir.join("src/handlers.rs"));
    let start = text
        .find(&format!("    async fn {name}("))
        .unwrap_or_else(|| panic!("no method {name}:\n{text}"));
    let end = start + text[start..].find("\n    }\n").unwrap() + "\n    }\n".len();
    text[start..end].to_string()
}

struct Step<'a> {
    dir: &'a Path,
}

impl Step<'_> {
    /// Changes the spec, checks `--check` reports staleness, runs `generate`, and returns the
    /// notes it printed. `stale` says whether `--check` must fail before `generate`.
    fn regenerate(&self, spec: &Value, stale: bool) -> String {
        write_spec(self.dir, spec);
        let (code, _, _) = mcpgen(self.dir, &["generate", "--check"]);
        assert_eq!(
            code,
            if stale { 1 } else { 0 },
            "generate --check before generate"
        );
        let before = read(&self.dir.join("src/handlers.rs"));
        let (code, _, stderr) = mcpgen(self.dir, &["generate"]);
        assert_eq!(code, 0, "{stderr}");
        let after = read(&self.dir.join("src/handlers.rs"));
        assert!(
            only_inserted(&before, &after),
            "user code changed other than by inserting stubs:\n--- before\n{before}\n--- after\n{after}"
        );
        let (code, stdout, _) = mcpgen(self.dir, &["generate", "--check"]);
        assert_eq!(
            (code, stdout.as_str()),
            (0, ""),
            "generate --check right after generate"
        );
        stderr
    }

    /// The crate's library (every line of user code, and the generated module) compiles,
    /// without warnings; not linked (the binary is built once, at the end).
    fn compiles(&self) {
        let (ok, stderr) = build(self.dir, &["--lib"]);
        assert!(ok, "the crate does not compile:\n{stderr}");
        assert!(!stderr.contains("warning"), "warnings:\n{stderr}");
    }
}

fn history(build_rs: bool) {
    let dir = std::env::temp_dir().join(format!(
        "mcpgen-history-{}-{}",
        std::process::id(),
        if build_rs { "build-rs" } else { "cli" }
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let spec_path = std::env::temp_dir().join(format!(
        "mcpgen-history-{}-{build_rs}.json",
        std::process::id()
    ));
    let mut spec = base_spec();
    std::fs::write(&spec_path, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
    let d = dir.to_str().unwrap();
    let mut args = vec![
        "new",
        "shop",
        "--spec",
        spec_path.to_str().unwrap(),
        "--dir",
        d,
    ];
    // The runtime crate, not a copy: the crate is built after every step, and the copy would be
    // compiled again each time (the bookshop example builds the copy).
    let runtime_path = root().join("runtime");
    args.extend(["--runtime-path", runtime_path.to_str().unwrap()]);
    let mcpgen_path = root();
    if build_rs {
        args.extend(["--build-rs", "--mcpgen-path", mcpgen_path.to_str().unwrap()]);
    }
    let (code, _, stderr) = mcpgen(&root(), &args);
    assert_eq!(code, 0, "{stderr}");
    std::fs::copy(
        root().join("generated-examples/Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    let step = Step { dir: &dir };

    // The user writes the behaviour, and some code of their own.
    user_edit(
        &dir,
        "        Err(ToolError::not_implemented(\"check_stock\"))",
        "        // user: a fixed inventory\n        Ok(types::Stock { copies: if _title == \"Dune\" { 7 } else { 0 } })",
    );
    user_edit(
        &dir,
        "        Err(ToolError::not_implemented(\"reserve_book\"))",
        "        Ok(format!(\"Reserved '{}' ({} left).\", _args.title, _stock.copies - 1))",
    );
    user_edit(
        &dir,
        "        Err(ToolError::not_implemented(\"search\"))",
        "        Ok(helper(&_args.query))",
    );
    let path = dir.join("src/handlers.rs");
    let mut text = read(&path);
    text.push_str("\n/// The user's own helper, outside any impl.\nfn helper(q: &str) -> String {\n    format!(\"Found 3 books matching '{q}'.\")\n}\n");
    std::fs::write(&path, text).unwrap();
    step.compiles();
    let (code, stdout, _) = mcpgen(&dir, &["generate", "--check"]);
    assert_eq!((code, stdout.as_str()), (0, ""));

    // 1. Add a tool: a stub is appended to `impl Tools`.
    spec["tools"]["list_books"] =
        json!({"description": "List every book.", "output": {"type": "string"}});
    step.regenerate(&spec, true);
    assert_eq!(
        method_text(&dir, "list_books"),
        "    async fn list_books(\n        &self,\n        _ctx: &crate::generated::Context,\n        _args: ::serde_json::Map<String, ::serde_json::Value>,\n    ) -> Result<String, crate::generated::ToolError> {\n        Err(crate::generated::ToolError::not_implemented(\"list_books\"))\n    }\n"
    );
    step.compiles();

    // 2. Add a resolver to an existing tool: a resolver stub is appended, and the tool's new
    //    signature is reported; the user updates it.
    spec["resolvers"]["price"] = json!({"params": {"title": "arg"}, "returns": {"type": "number"}});
    spec["tools"]["reserve_book"]["resolve"]["price"] = json!("price");
    let notes = step.regenerate(&spec, true);
    assert!(notes.contains("src/handlers.rs:"), "{notes}");
    assert!(
        notes.contains("the signature of tool `reserve_book` changed in the spec; it is now:"),
        "{notes}"
    );
    assert!(notes.contains("        _price: f64,"), "{notes}");
    assert!(
        method_text(&dir, "price")
            .contains("Err(crate::generated::ToolError::not_implemented(\"price\"))")
    );
    user_edit(
        &dir,
        "        _stock: types::Stock,\n    ) -> Result<String, ToolError> {",
        "        _stock: types::Stock,\n        _price: f64,\n    ) -> Result<String, ToolError> {",
    );
    step.compiles();

    // 3. Change a description: generated code only; user code byte-identical.
    let before = read(&path);
    spec["tools"]["search"]["description"] = json!("Search the catalog by title or author.");
    let notes = step.regenerate(&spec, !build_rs);
    assert_eq!(notes.matches("note:").count(), 0, "{notes}");
    assert_eq!(read(&path), before);
    if !build_rs {
        assert!(
            read(&dir.join("src/generated/mod.rs"))
                .contains("/// Search the catalog by title or author.")
        );
    }
    step.compiles();

    // 4. Rename a tool: the new name gets a stub, the old method is kept and reported; the user
    //    moves the body and deletes the old method.
    let search = spec["tools"]
        .as_object_mut()
        .unwrap()
        .shift_remove("search")
        .unwrap();
    spec["tools"]["find"] = search;
    let notes = step.regenerate(&spec, true);
    assert!(
        notes.contains("`search` implements a tool the spec no longer has; it is kept (the compiler will point at it: delete or rename it); did you rename it to `find`? Then `mcpgen generate --rename search=find` renames the method (its body kept), or move its body into the stub of `find` appended for it and delete `search`"),
        "{notes}"
    );
    assert!(
        read(&path).contains("Ok(helper(&_args.query))"),
        "the old body is kept"
    );
    let (ok, errors) = build(&dir, &["--lib"]);
    assert!(
        !ok && errors.contains("E0407"),
        "the compiler points at the kept method: {errors}"
    );
    let old = method_text(&dir, "search");
    user_edit(&dir, &old, "");
    user_edit(
        &dir,
        "        _args: crate::generated::types::FindArgs,\n    ) -> Result<String, crate::generated::ToolError> {\n        Err(crate::generated::ToolError::not_implemented(\"find\"))",
        "        _args: crate::generated::types::FindArgs,\n    ) -> Result<String, crate::generated::ToolError> {\n        Ok(helper(&_args.query))",
    );
    step.compiles();

    // 4b. Rename a tool and a resolver with `generate --rename`: each method takes the new name
    //     (the tool's also its new arguments type), bodies and every other byte kept, no stub.
    let before = read(&path);
    let find = spec["tools"]
        .as_object_mut()
        .unwrap()
        .shift_remove("find")
        .unwrap();
    spec["tools"]["find_books"] = find;
    let check_stock = spec["resolvers"]
        .as_object_mut()
        .unwrap()
        .shift_remove("check_stock")
        .unwrap();
    spec["resolvers"]["stock_of"] = check_stock;
    spec["tools"]["reserve_book"]["resolve"]["stock"] = json!("stock_of");
    write_spec(&dir, &spec);
    // What cannot be a rename is refused, and nothing is written.
    for (rename, error) in [
        (
            "reserve_book=find_books",
            "cannot rename `reserve_book`: the spec still has the tool `reserve_book` (`--rename OLD=NEW`: OLD the tool, resolver or prompt the spec no longer has, NEW its name in the spec now)",
        ),
        (
            "find=nowhere",
            "cannot rename `find` to `nowhere`: the spec has no tool, resolver or prompt `nowhere` (`--rename OLD=NEW`: OLD the tool, resolver or prompt the spec no longer has, NEW its name in the spec now)",
        ),
        (
            "lookup=stock_of",
            "cannot rename `lookup` to `stock_of`: no method `lookup` was found in an `impl` of the trait of `stock_of` under src/",
        ),
    ] {
        let (code, stdout, stderr) = mcpgen(&dir, &["generate", "--rename", rename]);
        assert_eq!(
            (code, stdout.as_str(), stderr.lines().next()),
            (2, "", Some(format!("error: {error}").as_str())),
            "{rename}"
        );
        assert_eq!(read(&path), before, "{rename}");
    }
    let (code, stdout, stderr) = mcpgen(
        &dir,
        &[
            "generate",
            "--rename",
            "find=find_books",
            "--rename",
            "check_stock=stock_of",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "", "no note: nothing is gone, nothing was added");
    let line_of = |needle: &str| before[..before.find(needle).unwrap()].matches('\n').count() + 1;
    let (line, find_line) = (line_of("async fn check_stock("), line_of("async fn find("));
    assert!(
        stdout.contains(&format!(
            "changed: src/handlers.rs (`check_stock` renamed to `stock_of` for the resolver `stock_of` (its body kept), at src/handlers.rs:{line}; `find` renamed to `find_books` for the tool `find_books` (its body kept), at src/handlers.rs:{find_line})\n"
        )),
        "{stdout}"
    );
    let expected = before
        .replacen("async fn check_stock(", "async fn stock_of(", 1)
        .replacen("async fn find(", "async fn find_books(", 1)
        .replacen("types::FindArgs,", "types::FindBooksArgs,", 1);
    assert_eq!(read(&path), expected);
    assert!(method_text(&dir, "stock_of").contains("// user: a fixed inventory"));
    assert!(method_text(&dir, "find_books").contains("Ok(helper(&_args.query))"));
    let (code, stdout, _) = mcpgen(&dir, &["generate", "--check"]);
    assert_eq!((code, stdout.as_str()), (0, ""));
    step.compiles();

    // 5. Delete a tool: kept and reported, never deleted by mcpgen.
    spec["tools"]
        .as_object_mut()
        .unwrap()
        .shift_remove("list_books");
    let notes = step.regenerate(&spec, !build_rs);
    assert!(
        notes.contains("`list_books` implements a tool the spec no longer has; it is kept (the compiler will point at it: delete or rename it)\n"),
        "no tool was added, so no rename is suggested: {notes}"
    );
    let old = method_text(&dir, "list_books");
    user_edit(&dir, &old, "");
    step.compiles();

    // 6. Change a resolver's parameters: reported with the new signature; the user updates it.
    spec["resolvers"]["stock_of"]["params"]["shelf"] = json!("arg");
    spec["tools"]["reserve_book"]["input"]["properties"]["shelf"] =
        json!({"type": "integer", "minimum": 1});
    spec["tools"]["reserve_book"]["input"]["required"] = json!(["title", "shelf"]);
    let notes = step.regenerate(&spec, !build_rs);
    assert!(
        notes.contains("the signature of resolver `stock_of` changed in the spec; it is now:"),
        "{notes}"
    );
    assert!(notes.contains("        _shelf: i64,"), "{notes}");
    user_edit(
        &dir,
        "_title: &str) -> Result<types::Stock, ToolError> {",
        "_title: &str, _shelf: i64) -> Result<types::Stock, ToolError> {",
    );
    step.compiles();
    assert!(read(&path).contains("/// The user's own helper, outside any impl."));
    assert!(read(&path).contains("// user: a fixed inventory"));

    // 7. The spec grows a prompt written in code (with a resolver), a fixed prompt, a resource
    // read in code and a template: `impl Prompts` and `impl Resources` blocks are appended.
    spec["prompts"] = json!({
        "pitch": {"description": "Pitch a title.", "arguments": {"title": {"required": true}},
                  "resolve": {"line": "blurb"}},
        "hello": {"description": "Say hello.", "arguments": {"who": {"complete": ["Ann"]}},
                  "messages": [{"role": "user", "text": "Hello {who}!"}]}
    });
    spec["resolvers"]["blurb"] = json!({"params": {"title": "arg"}, "returns": {"type": "string"}});
    spec["resources"] = json!({"shop://hours": {"name": "hours", "description": "Opening hours."}});
    spec["resourceTemplates"] = json!({"shop://books/{isbn}": {"name": "book"}});
    let notes = step.regenerate(&spec, true);
    assert!(!notes.contains("error"), "{notes}");
    let text = read(&path);
    assert!(
        text.contains("impl crate::generated::Prompts for Shop {\n    async fn pitch("),
        "{text}"
    );
    assert!(
        text.contains("impl crate::generated::Resources for Shop {\n    async fn read_hours("),
        "{text}"
    );
    assert!(text.contains("    async fn read_book(\n"), "{text}");
    step.compiles();

    // The final crate builds, binary included.
    let (ok, stderr) = build(&dir, &[]);
    assert!(ok, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&spec_path);
}

#[test]
fn history_in_cli_mode() {
    history(false);
}

#[test]
fn history_in_build_rs_mode() {
    history(true);
}
