//! The `mcpgen` command line: `check`, `schema` and `plan`, their output and exit codes.

use std::path::Path;
use std::process::Command;

fn mcpgen(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mcpgen runs");
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_seed_specs_pass_check() {
    for spec in [
        "specs/bookshop.json",
        "specs/files.json",
        "specs/bistro.json",
    ] {
        let (code, stdout, stderr) = mcpgen(&["check", spec]);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (0, "", format!("{spec}: ok\n").as_str())
        );
    }
}

#[test]
fn check_prints_location_pointer_excerpt_and_help_and_exits_1() {
    let dir = tempdir();
    let path = dir.join("bad.json");
    std::fs::write(
        &path,
        "{\n  \"name\": \"S\",\n  \"tools\": {\n    \"t\": {\"description\": \"d\", \"resolve\": {\"x\": \"lookup\"}}\n  },\n  \"resolvers\": {\"look_up\": {\"returns\": {\"type\": \"string\"}}}\n}\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let (code, stdout, stderr) = mcpgen(&["check", p]);
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    let expected = format!(
        "error[unknown-resolver]: parameter `x` of tool `t` is bound to `lookup`, which is not a resolver of this spec\n  \
         --> {p}:4:48\n  \
         |\n\
         4 |     \"t\": {{\"description\": \"d\", \"resolve\": {{\"x\": \"lookup\"}}}}\n  \
         |                                                ^^^^^^^^\n  \
         |\n  \
         = at /tools/t/resolve/x\n  \
         = help: did you mean `look_up`?\n\n\
         warning[unused-resolver]: resolver `look_up` is not used by any tool\n  \
         --> {p}:6:17\n  \
         |\n\
         6 |   \"resolvers\": {{\"look_up\": {{\"returns\": {{\"type\": \"string\"}}}}}}\n  \
         |                 ^^^^^^^^^\n  \
         |\n  \
         = at /resolvers/look_up\n\n\
         {p}: 1 error, 1 warning\n"
    );
    assert_eq!(stderr, expected);
}

#[test]
fn check_json_format_lists_every_diagnostic() {
    let dir = tempdir();
    let path = dir.join("bad.json");
    std::fs::write(
        &path,
        r#"{"name": "S", "tools": {"a b": {"description": "d"}}, "extra": 1}"#,
    )
    .unwrap();
    let (code, stdout, _) = mcpgen(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let items = v.as_array().unwrap();
    assert_eq!(
        items.len(),
        1,
        "structural errors come first, alone: {stdout}"
    );
    assert_eq!(items[0]["code"], "unknown-key");
    assert_eq!(items[0]["line"], 1);
    assert_eq!(items[0]["column"], 55);
    assert_eq!(items[0]["pointer"], "/extra");
    assert_eq!(items[0]["severity"], "error");
    assert_eq!(items[0]["file"], path.to_str().unwrap());
}

#[test]
fn usage_and_io_errors_exit_2() {
    let (code, _, stderr) = mcpgen(&["check", "does/not/exist.json"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error[io]: cannot read does/not/exist.json: No such file or directory"),
        "{stderr}"
    );
    let (code, _, _) = mcpgen(&["check"]);
    assert_eq!(code, 2);
    let (code, _, _) = mcpgen(&["frobnicate"]);
    assert_eq!(code, 2);
}

#[test]
fn the_checked_in_schema_is_current() {
    let (code, stdout, _) = mcpgen(&["schema"]);
    assert_eq!(code, 0);
    let kept =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/spec-v1.json"))
            .unwrap();
    assert!(
        stdout == kept,
        "schema/spec-v1.json is stale: run `cargo run -- schema -o schema/spec-v1.json`"
    );
}

#[test]
fn the_seed_specs_validate_against_the_format_schema() {
    let schema: serde_json::Value = serde_json::from_str(&mcpgen(&["schema"]).1).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    for spec in [
        "specs/bookshop.json",
        "specs/files.json",
        "specs/bistro.json",
    ] {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(spec)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| e.to_string()).collect();
        assert_eq!(errors, Vec::<String>::new(), "{spec}");
    }
    // And the schema rejects what check rejects structurally.
    let bad = serde_json::json!({"name": "S", "tools": {}, "resolvers": {"r": {"returns": {}, "asks": "ask"}}});
    assert!(!validator.is_valid(&bad));
}

#[test]
fn plan_lists_resolvers_in_run_order_once_each() {
    let (code, stdout, stderr) = mcpgen(&["plan", "specs/bookshop.json"]);
    assert_eq!(code, 0, "{stderr}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let order_book = &plan["tools"][3];
    assert_eq!(order_book["name"], "order_book");
    assert_eq!(
        order_book["run_order"],
        serde_json::json!(["check_stock", "estimate_delivery", "confirm_backorder"])
    );
    assert_eq!(order_book["args"], serde_json::json!(["title"]));
    assert_eq!(
        order_book["bindings"],
        serde_json::json!([
            {"param": "stock", "resolver": "check_stock", "outcome": false},
            {"param": "delivery", "resolver": "estimate_delivery", "outcome": false},
            {"param": "backorder", "resolver": "confirm_backorder", "outcome": false}
        ])
    );
    // add_book's input schema carries the Book type it references.
    let add_book = &plan["tools"][1];
    assert_eq!(
        add_book["input_schema"]["$defs"]["Book"]["properties"]["year"]["minimum"],
        1450
    );
    assert_eq!(
        add_book["input_schema"]["properties"]["book"]["$ref"],
        "#/$defs/Book"
    );
    // A string output is wrapped.
    assert_eq!(
        add_book["output"]["output_schema"],
        serde_json::json!({"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]})
    );
    let check_stock = &plan["resolvers"][0];
    assert_eq!(
        check_stock["params"],
        serde_json::json!([{"source": "arg", "name": "title", "type": {"kind": "primitive", "of": "string"}, "always": true}])
    );
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcpgen-cli-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `mcpgen <args>` in `dir` with a standard output whose reader is already gone (as after
/// `| head` stopped reading): its exit code and standard error.
fn with_closed_stdout(args: &[&str], dir: &Path) -> (i32, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(args)
        .current_dir(dir)
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("mcpgen runs");
    (
        out.status.code().expect("exited, not killed by a signal"),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A closed standard output ends the output quietly: no panic ("failed printing to stdout"), no
/// message, and the status the command has without its output.
#[test]
fn a_closed_stdout_ends_every_printing_command_quietly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempdir().join("closed-stdout");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"name\": \"S\", \"tools\": {\"t\": {}}}\n").unwrap();
    let bad = bad.to_str().unwrap();
    // A crate whose spec changed since its code was generated: `generate` has changes to print.
    let (code, _, stderr) = mcpgen(&[
        "new",
        "closed",
        "--spec",
        "specs/bookshop.json",
        "--dir",
        dir.join("closed").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let spec_path = dir.join("closed/spec.json");
    let spec = std::fs::read_to_string(&spec_path).unwrap();
    let changed = spec.replacen("\"description\": \"", "\"description\": \"Changed. ", 1);
    assert_ne!(spec, changed);
    std::fs::write(&spec_path, changed).unwrap();
    let krate = dir.join("closed");
    let krate = krate.to_str().unwrap();

    for (args, code) in [
        (vec!["plan", "specs/bookshop.json"], 0),
        (vec!["schema"], 0),
        (vec!["check", "--format", "json", "specs/bookshop.json"], 0),
        (vec!["check", "--format", "json", bad], 1),
        (vec!["generate", "--crate", krate, "--dry-run"], 0),
        (vec!["generate", "--crate", krate, "--check"], 1),
        (vec!["--help"], 0),
        (vec!["--version"], 0),
    ] {
        assert_eq!(
            with_closed_stdout(&args, root),
            (code, String::new()),
            "mcpgen {args:?}"
        );
    }
    // The output was dropped, not the work: `--dry-run` and `--check` wrote nothing.
    let (code, stdout, _) = mcpgen(&["generate", "--crate", krate, "--check"]);
    assert_eq!(code, 1);
    assert_eq!(stdout, "would change: src/generated/mod.rs (generated)\n");
}
