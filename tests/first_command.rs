//! The README's first command, as a new user runs it: `mcpgen new` into `out/`, then
//! `cargo build` there. It once failed while every other test passed (the root workspace
//! swallowed `out/`), so it is run here the way the line says, with a debug generator, and so is
//! `new` outside any repository, whose crate must depend on the versioned runtime crate with
//! only the features its spec declares.

mod common;

use std::path::Path;
use std::process::Command;

use common::{Lints, cargo, root};

/// The first line of the README's first `sh` block.
fn first_command() -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .expect("the README starts with a sh block");
    block.lines().next().unwrap().to_string()
}

fn mcpgen(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The packages of the crate in `dir` that its normal build compiles (`cargo tree`), one name
/// each.
fn packages(dir: &Path) -> Vec<String> {
    let out = cargo(
        dir,
        &[
            "tree", "-e", "normal", "--prefix", "none", "--format", "{p}",
        ],
        Lints::None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_first_command_generates_into_out_and_builds_there() {
    let line = first_command();
    let (generate, build) = line.split_once(" && ").expect("generate && build");
    assert_eq!(build, "(cd out/bookshop && cargo build)");
    let args = generate
        .strip_prefix("cargo run -- ")
        .unwrap_or_else(|| panic!("the generator runs as a debug build: {generate}"));
    let args: Vec<&str> = args.split_whitespace().collect();
    assert_eq!(
        args,
        [
            "new",
            "bookshop",
            "--spec",
            "specs/bookshop.json",
            "--dir",
            "out/bookshop"
        ]
    );
    // The same command into a folder of its own under out/ (a developer's out/bookshop stays).
    let dir = root().join("out/suite-first-command");
    let _ = std::fs::remove_dir_all(&dir);
    let crate_dir = dir.join("bookshop");
    let rel = "out/suite-first-command/bookshop";
    let mut args = args.clone();
    *args.last_mut().unwrap() = rel;
    let (code, stderr) = mcpgen(&root(), &args);
    assert_eq!(code, 0, "{stderr}");
    // It stands alone: cargo does not take it for a member of the repository's workspace.
    let metadata = cargo(
        &crate_dir,
        &["metadata", "--no-deps", "--format-version", "1"],
        Lints::None,
    );
    let metadata = String::from_utf8_lossy(&metadata.stdout);
    let workspace_root = format!(
        "\"workspace_root\":\"{}\"",
        crate_dir.canonicalize().unwrap().display()
    );
    assert!(metadata.contains(&workspace_root), "{metadata}");
    // The examples' versions, so nothing new is downloaded; cargo drops what it does not use.
    std::fs::copy(
        root().join("generated-examples/Cargo.lock"),
        crate_dir.join("Cargo.lock"),
    )
    .unwrap();
    let out = cargo(&crate_dir, &["build"], Lints::None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A spec that is not in this repository, with or without `auth`.
fn spec(auth: bool) -> String {
    let auth = match auth {
        true => r#""auth": {"required": true, "scopes": ["notes:write"]},"#,
        false => "",
    };
    format!(
        r#"{{
  "name": "notes",
  "version": "1.0.0",
  {auth}
  "tools": {{
    "add_note": {{
      "description": "Adds a note.",
      "input": {{"type": "object", "properties": {{"text": {{"type": "string", "maxLength": 200}}}}, "required": ["text"]}}
    }}
  }}
}}"#
    )
}

#[test]
fn a_crate_made_outside_any_repository_depends_on_the_runtime_by_version_and_features() {
    let base = std::env::temp_dir().join(format!("mcpgen-outside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    for auth in [false, true] {
        let name = if auth { "notes-auth" } else { "notes" };
        let spec_file = base.join(format!("{name}.json"));
        std::fs::write(&spec_file, spec(auth)).unwrap();
        let (code, stderr) = mcpgen(&base, &["new", name, "--spec", spec_file.to_str().unwrap()]);
        assert_eq!(code, 0, "{stderr}");
        let dir = base.join(name);
        // No runtime source under src/: only the generated module and the user's files.
        let mut rs: Vec<String> = Vec::new();
        let mut dirs = vec![dir.join("src")];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    rs.push(path.strip_prefix(&dir).unwrap().display().to_string());
                }
            }
        }
        rs.sort();
        assert_eq!(
            rs,
            [
                "src/generated/mod.rs",
                "src/handlers.rs",
                "src/lib.rs",
                "src/main.rs"
            ]
        );
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let features = if auth {
            r#"["server", "auth"]"#
        } else {
            r#"["server"]"#
        };
        let line = format!(
            "mcpgen-runtime = {{ version = \"={version}\", path = \"vendor/mcpgen-runtime\", default-features = false, features = {features} }}\n"
        );
        assert!(manifest.contains(&line), "{manifest}");
        let packages = packages(&dir);
        assert!(packages.contains(&"mcpgen-runtime".to_string()));
        for crate_name in ["jsonwebtoken", "redis"] {
            let expected = auth && crate_name == "jsonwebtoken";
            assert_eq!(
                packages.contains(&crate_name.to_string()),
                expected,
                "{name}: {crate_name} in {packages:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}
