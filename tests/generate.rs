//! `mcpgen new` and `mcpgen generate`, and the golden check: the checked-in generated examples
//! are exactly what mcpgen produces now.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcpgen::RuntimeSource;
use mcpgen::check::check_file;
use mcpgen::write::crate_files::{NewOptions, Owner, new_crate_files, new_crate_files_with};
use mcpgen::write::runtime_files::{VENDOR_DIR, VENDOR_LIST, vendored};
use mcpgen::write::{Planned, planned_files};

const EXAMPLES: [&str; 11] = [
    "bookshop",
    "files",
    "bistro",
    "mrtr-probe",
    "stress",
    "conformance",
    "differential",
    "embedded",
    "lending",
    "fleet",
    "operations",
];

/// The examples whose `Cargo.toml` has dependencies of their own code's, in a block of its own
/// after the ones `new` writes (up to the blank line).
const OWN_DEPENDENCIES: &[&str] = &["conformance", "operations", "embedded"];

/// The comment line that starts an example's own dependencies.
const OWN_DEPENDENCIES_COMMENT: &str =
    "# This example's own code uses these (not the generated code):\n";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn mcpgen(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// How many files `new` writes: nine of the crate's own, and the vendored runtime's.
fn new_crate_file_count() -> usize {
    9 + vendored().len()
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mcpgen-gen-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn checked_in_generated_code_is_what_mcpgen_produces() {
    let mut stale = Vec::new();
    for ex in EXAMPLES {
        let dir = root().join("generated-examples").join(ex);
        let Planned { files, moved, .. } =
            planned_files(&dir).unwrap_or_else(|e| panic!("{ex}: {e:?}"));
        // Every example depends on the runtime crate by path: nothing to move, nothing vendored.
        assert!(moved.is_none(), "{ex}: its Cargo.toml names no runtime");
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["src/generated/mod.rs"], "{ex}");
        assert!(files.iter().all(|f| f.owner == Owner::Mcpgen));
        for f in files {
            let on_disk = std::fs::read_to_string(dir.join(&f.path)).unwrap_or_default();
            if on_disk != f.contents {
                stale.push(format!("generated-examples/{ex}/{}", f.path));
            }
        }
        // No generated file that mcpgen no longer produces: no copy of the runtime, no vendored
        // runtime.
        for gone in ["src/generated/runtime", "vendor"] {
            let path = dir.join(gone);
            assert!(!path.exists(), "{}", path.display());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated code (run `cargo run -- generate --crate generated-examples/<name>`): {stale:#?}"
    );
}

#[test]
fn example_manifests_and_specs_are_what_new_writes() {
    for ex in EXAMPLES {
        let dir = root().join("generated-examples").join(ex);
        let spec_text = std::fs::read_to_string(dir.join("spec.json")).unwrap();
        // The examples' specs are the repository's specs, with `$schema` one level further up
        // (mrtr-probe, a test fixture, has its spec only in its crate; differential's is the
        // differential test's corpus, `peers/tests/differential_corpus.json`, which that test
        // compares with the crate's; embedded, an axum application around the conformance
        // fixture, serves `specs/conformance.json`).
        let spec = if ex == "embedded" { "conformance" } else { ex };
        if let Ok(original) =
            std::fs::read_to_string(root().join("specs").join(format!("{spec}.json")))
        {
            assert_eq!(
                spec_text,
                original.replace(
                    "\"../schema/spec-v1.json\"",
                    "\"../../schema/spec-v1.json\""
                ),
                "{ex}/spec.json"
            );
        } else {
            assert!(
                ex == "mrtr-probe" || ex == "differential",
                "{ex}: no specs/{ex}.json"
            );
        }
        let checked =
            check_file(&dir.join("spec.json")).unwrap_or_else(|r| panic!("{}", r.render_human()));
        // The examples are members of the generated-examples workspace: no profile of their own.
        // All were made with `--runtime-path runtime` from the repository's root.
        let options = NewOptions {
            in_workspace: true,
            runtime: RuntimeSource::Path("../../runtime".into()),
            ..NewOptions::default()
        };
        let files = new_crate_files_with(&checked, ex, "spec.json", &spec_text, &options).unwrap();
        for path in ["Cargo.toml", "README.md", ".gitignore"] {
            let mut expected = files
                .iter()
                .find(|f| f.path == path)
                .unwrap()
                .contents
                .clone();
            let mut actual = std::fs::read_to_string(dir.join(path)).unwrap();
            if path == "Cargo.toml" {
                // The lines an example has of its own, and only those.
                if OWN_DEPENDENCIES.contains(&ex) {
                    actual = without_own_dependencies(&actual)
                        .unwrap_or_else(|| panic!("{ex}: no block of its own dependencies"));
                }
                if ex == "fleet" {
                    expected = expected.replacen(
                        "\ndefault = [\"telemetry\"]\n",
                        "\n# This example runs as replicas: the notification bus is on.\ndefault = [\"telemetry\", \"bus\"]\n",
                        1,
                    );
                }
            }
            assert!(
                actual == expected,
                "generated-examples/{ex}/{path} differs from what `mcpgen new` writes:\n{expected}"
            );
        }
    }
}

/// `manifest` without the block of an example's own dependencies: the comment line
/// [`OWN_DEPENDENCIES_COMMENT`] at the start of a line, then dependency lines up to the blank
/// line (which stays). `None` without that block, or with other lines than dependencies in it.
fn without_own_dependencies(manifest: &str) -> Option<String> {
    let start = manifest.find(&format!("\n{OWN_DEPENDENCIES_COMMENT}"))? + 1;
    let block = &manifest[start..];
    let end = block.find("\n\n")? + 1;
    let lines: Vec<&str> = block[OWN_DEPENDENCIES_COMMENT.len()..end].lines().collect();
    let dependency = |l: &&str| {
        l.split_once(" = ").is_some_and(|(name, _)| {
            !name.is_empty() && !name.starts_with('#') && !name.contains(' ')
        })
    };
    (!lines.is_empty() && lines.iter().all(dependency))
        .then(|| format!("{}{}", &manifest[..start], &block[end..]))
}

#[test]
fn an_examples_own_dependencies_are_one_block_of_dependency_lines() {
    let manifest = "[dependencies]\nserde = \"1\"\n# This example's own code uses these (not the generated code):\ntokio = \"1\"\nclap = { version = \"4\" }\n\n[features]\n";
    assert_eq!(
        without_own_dependencies(manifest).as_deref(),
        Some("[dependencies]\nserde = \"1\"\n\n[features]\n")
    );
    // Not a dependency line, or no line at all, or no comment: not the block.
    for bad in [
        manifest.replace("clap = { version = \"4\" }", "# more"),
        manifest.replace("tokio = \"1\"\nclap = { version = \"4\" }\n", ""),
        manifest.replace("# This example's own", "# These"),
    ] {
        assert_eq!(without_own_dependencies(&bad), None, "{bad}");
    }
}

/// The `[profile.release]` section (to the end of the file) of a manifest `new` writes.
fn release_profile(manifest: &str) -> &str {
    let start = manifest
        .find("\n[profile.release]\n")
        .unwrap_or_else(|| panic!("no release profile in {manifest}"));
    &manifest[start + 1..]
}

#[test]
fn the_examples_workspace_root_holds_the_release_profile_new_writes() {
    let checked = check_file(&root().join("specs/bookshop.json")).unwrap();
    let text = checked.loaded.source.text().to_string();
    let files = new_crate_files(&checked, "bookshop", "spec.json", &text).unwrap();
    let manifest = &files
        .iter()
        .find(|f| f.path == "Cargo.toml")
        .unwrap()
        .contents;
    assert_eq!(
        release_profile(manifest),
        "[profile.release]\nlto = \"fat\"\ncodegen-units = 1\n"
    );
    let root_manifest =
        std::fs::read_to_string(root().join("generated-examples/Cargo.toml")).unwrap();
    assert!(
        root_manifest.ends_with(release_profile(manifest)),
        "generated-examples/Cargo.toml should end with the release profile `new` writes:\n{root_manifest}"
    );
}

#[test]
fn new_inside_a_workspace_leaves_the_release_profile_to_the_root_and_says_so() {
    let files = new_crate_file_count();
    let ws = tempdir("workspace");
    std::fs::create_dir_all(ws.join("crates")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/alone\"]\n",
    )
    .unwrap();
    let ws = std::fs::canonicalize(ws).unwrap();
    let member = ws.join("crates/shop");
    let m = member.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "shop", "--spec", "specs/bookshop.json", "--dir", m]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "note: {m} is inside the cargo workspace at {}: add it to the workspace's `members` if it is not one yet; cargo reads profiles from the workspace root only, so the crate has no `[profile.release]` (for serving, put `lto = \"fat\"` and `codegen-units = 1` in the root's)\ncreated {m} ({files} files); next: cd {m} && cargo run\n",
            ws.display()
        )
    );
    let manifest = std::fs::read_to_string(member.join("Cargo.toml")).unwrap();
    assert!(!manifest.contains("[profile"), "{manifest}");
    let readme = std::fs::read_to_string(member.join("README.md")).unwrap();
    assert!(!readme.contains("[profile.release]"), "{readme}");
    // A directory the workspace excludes stands alone and keeps its profile.
    let alone = ws.join("crates/alone");
    let a = alone.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "alone", "--spec", "specs/bookshop.json", "--dir", a]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        format!("created {a} ({files} files); next: cd {a} && cargo run\n")
    );
    let manifest = std::fs::read_to_string(alone.join("Cargo.toml")).unwrap();
    assert_eq!(
        release_profile(&manifest),
        "[profile.release]\nlto = \"fat\"\ncodegen-units = 1\n"
    );
    let readme = std::fs::read_to_string(alone.join("README.md")).unwrap();
    assert!(
        readme.contains("`target/release/alone`.\nRelease builds optimise the whole program as one (`[profile.release]` in `Cargo.toml`): they take\na few minutes, and the server answers more calls per second.\n"),
        "{readme}"
    );
    std::fs::remove_dir_all(ws).unwrap();
}

#[test]
fn new_writes_a_complete_crate_and_refuses_a_non_empty_directory() {
    let files = new_crate_file_count();
    // The crate's 9 files, and the runtime's 46 (its README and sources), its manifest and the
    // list of what mcpgen wrote there.
    assert_eq!(files, 57);
    let dir = tempdir("new");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&[
        "new",
        "my-shop",
        "--spec",
        "specs/bookshop.json",
        "--dir",
        d,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        format!("created {d} ({files} files); next: cd {d} && cargo run\n")
    );
    let mut found: Vec<String> = Vec::new();
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    walk(&dir, &dir, &mut found);
    found.sort();
    let mut expected: Vec<String> = [
        ".gitignore",
        "Cargo.toml",
        "README.md",
        "spec.json",
        "src/lib.rs",
        "src/main.rs",
        "src/handlers.rs",
        "src/generated/mod.rs",
        "tests/tools.rs",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(vendored().iter().map(|(n, _)| format!("{VENDOR_DIR}/{n}")))
    .collect();
    expected.sort();
    assert_eq!(found, expected);
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.starts_with("[package]\nname = \"my-shop\"\n"),
        "{manifest}"
    );
    assert!(
        manifest.contains("\n[package.metadata.mcpgen]\nspec = \"spec.json\"\n"),
        "{manifest}"
    );
    // Outside any workspace the crate carries its own release profile.
    assert_eq!(
        release_profile(&manifest),
        "[profile.release]\nlto = \"fat\"\ncodegen-units = 1\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("spec.json")).unwrap(),
        std::fs::read_to_string(root().join("specs/bookshop.json")).unwrap()
    );
    let handlers = std::fs::read_to_string(dir.join("src/handlers.rs")).unwrap();
    assert!(handlers.contains(
        "    async fn order_book(\n        &self,\n        _ctx: &Context,\n        _args: types::OrderBookArgs,\n        _stock: types::Stock,\n        _delivery: String,\n        _backorder: types::Backorder,\n    ) -> Result<String, ToolError> {\n        Err(ToolError::not_implemented(\"order_book\"))\n    }\n"
    ), "{handlers}");

    // A second `new` into the same directory is refused and changes nothing.
    let before = std::fs::read_to_string(dir.join("src/handlers.rs")).unwrap();
    let (code, _, stderr) = mcpgen(&["new", "my-shop", "--spec", "specs/files.json", "--dir", d]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        format!(
            "error: {d} is not empty; `mcpgen new` only writes into a new or empty directory (use `mcpgen generate` in an existing crate)\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/handlers.rs")).unwrap(),
        before
    );

    // `generate --check` is clean right after `new`, and writes nothing.
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!((code, stdout.as_str()), (0, ""));

    // A description edit makes `--check` fail and list exactly the files whose bytes change:
    // the generated module (the vendored runtime does not depend on the spec); `generate` then
    // rewrites only it.
    let spec = dir.join("spec.json");
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("Reserve a copy of a book.", "Reserve one copy of a book.");
    std::fs::write(&spec, text).unwrap();
    let Planned { files: planned, .. } = planned_files(&dir).unwrap();
    let changing: Vec<String> = planned
        .iter()
        .filter(|f| std::fs::read_to_string(dir.join(&f.path)).unwrap() != f.contents)
        .map(|f| f.path.clone())
        .collect();
    assert_eq!(changing, ["src/generated/mod.rs"]);
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!(
        (code, stdout.as_str()),
        (1, "would change: src/generated/mod.rs (generated)\n")
    );
    let snapshot = |dir: &Path| -> Vec<(String, String, std::time::SystemTime)> {
        let mut files = Vec::new();
        walk(dir, dir, &mut files);
        files.sort();
        files
            .into_iter()
            .map(|f| {
                let p = dir.join(&f);
                let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
                (f, std::fs::read_to_string(&p).unwrap(), mtime)
            })
            .collect()
    };
    let before_generate = snapshot(&dir);
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "changed: src/generated/mod.rs (generated)\n")
    );
    assert!(
        std::fs::read_to_string(dir.join("src/generated/mod.rs"))
            .unwrap()
            .contains("/// Reserve one copy of a book.")
    );
    let after_generate = snapshot(&dir);
    assert_eq!(
        before_generate.len(),
        after_generate.len(),
        "no file added or removed"
    );
    for (old, new) in before_generate.iter().zip(&after_generate) {
        if old.0 != "src/generated/mod.rs" {
            assert_eq!(old, new, "{} is not rewritten", old.0);
        }
    }
    // A second run writes nothing.
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "",
            format!("{d}: generated code is up to date\n").as_str()
        )
    );
    assert_eq!(snapshot(&dir), after_generate, "nothing is rewritten");

    // A generated file edited by hand is not overwritten without --force.
    let generated = dir.join("src/generated/mod.rs");
    let edited = std::fs::read_to_string(&generated).unwrap().replace(
        "/// Reserve one copy of a book.",
        "/// Reserve a copy (my edit).",
    );
    std::fs::write(&generated, &edited).unwrap();
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("Reserve one copy of a book.", "Reserve a copy of a book.");
    std::fs::write(&spec, text).unwrap();
    let (code, _, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: not regenerating: src/generated/mod.rs was edited by hand"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&generated).unwrap(), edited);
    let (code, _, _) = mcpgen(&["generate", "--crate", d, "--force"]);
    assert_eq!(code, 0);
    assert!(
        std::fs::read_to_string(&generated)
            .unwrap()
            .contains("/// Reserve a copy of a book.")
    );

    // Reformatting a generated file (say, by rustfmt) is not an edit: it is rewritten without
    // --force.
    let pristine = std::fs::read_to_string(&generated).unwrap();
    let formatted = pristine.replacen(
        "pub use ::mcpgen_runtime as runtime;",
        "pub   use ::mcpgen_runtime   as runtime ;",
        1,
    );
    assert_ne!(formatted, pristine);
    std::fs::write(&generated, &formatted).unwrap();
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "changed: src/generated/mod.rs (generated)\n")
    );
    assert_eq!(std::fs::read_to_string(&generated).unwrap(), pristine);

    // A crate generated by a newer mcpgen is not regenerated without --force.
    let newer = formatted.replacen(
        &format!("mcpgen {} from", env!("CARGO_PKG_VERSION")),
        "mcpgen 99.0.0 from",
        1,
    );
    std::fs::write(&generated, &newer).unwrap();
    let (code, _, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains(
            "src/generated/mod.rs was generated by mcpgen 99.0.0, newer than this mcpgen"
        ),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/handlers.rs")).unwrap(),
        before,
        "user code is untouched"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `[dependencies]` and `[features]` of a crate made by the mcpgen before the runtime crate
/// (a few of them: its runtime's dependencies, the optional ones among them, and a user's own
/// `clap`), as `old_style_manifest` writes them into a new crate's `Cargo.toml`.
const COPY_DEPENDENCIES: &str = r#"[dependencies]
rmcp = { version = "3.11", default-features = false, features = ["server", "transport-io", "transport-streamable-http-server", "elicitation"] }
tokio = { version = "1", features = ["macros", "rt-multi-thread", "io-std", "io-util", "net", "signal", "sync", "time"] }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
clap = { version = "4.6", features = ["derive", "env"] }
opentelemetry = { version = "0.33", default-features = false, features = ["trace", "metrics"], optional = true }
tracing-opentelemetry = { version = "0.34", default-features = false, optional = true }
sse-stream = { version = "0.2", optional = true }
mimalloc = { version = "0.1", features = ["no_thp"] }
"#;
const COPY_FEATURES: &str = r#"[features]
default = ["telemetry"]
telemetry = ["dep:opentelemetry", "dep:tracing-opentelemetry"]
testing = ["rmcp/client", "rmcp/transport-streamable-http-client", "dep:sse-stream"]
"#;

/// `manifest` (what `new` writes) as the mcpgen before the runtime crate wrote it: no runtime
/// dependency, [`COPY_DEPENDENCIES`] and [`COPY_FEATURES`] instead of its own sections.
fn old_style_manifest(manifest: &str) -> String {
    let section = |name: &str| {
        let start = manifest.find(&format!("\n[{name}]\n")).unwrap() + 1;
        let end = start + manifest[start..].find("\n\n").unwrap() + 1;
        start..end
    };
    let (deps, features) = (section("dependencies"), section("features"));
    let old = format!(
        "{}{COPY_DEPENDENCIES}{}{COPY_FEATURES}{}",
        &manifest[..deps.start],
        &manifest[deps.end..features.start],
        &manifest[features.end..]
    );
    // Nor did that mcpgen write the comment on the runtime's verifier.
    old.lines()
        .filter(|line| !(line.starts_with('#') && line.contains("mcpgen-runtime/auth")))
        .filter(|line| *line != "# the spec has no `auth`, so the runtime's OAuth verifier is left out by default.")
        .map(|line| format!("{line}\n"))
        .collect()
}

/// A crate made by the mcpgen before the runtime crate (a copy of the runtime's modules in
/// `src/generated/runtime/`, stamped with the runtime's hash, and no `mcpgen-runtime` in its
/// `Cargo.toml`) moves to the vendored runtime crate on `generate`: the pristine files of the
/// copy go, a hand-edited one and a user's own file stay, the vendored crate is written, and
/// `Cargo.toml` gains the runtime's line, passes the features on and loses the copy's optional
/// dependencies, with a note saying so.
#[test]
fn generate_moves_a_crate_from_the_runtimes_copy_to_the_vendored_runtime_crate() {
    use mcpgen::write::stamp::{runtime_stamp, short_hash, stamp};
    let dir = tempdir("old-runtime");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "shop", "--spec", "specs/bookshop.json", "--dir", d]);
    assert_eq!(code, 0, "{stderr}");
    let new_manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let generated = dir.join("src/generated/mod.rs");
    let module = std::fs::read_to_string(&generated).unwrap();
    // Back to what the previous mcpgen wrote.
    std::fs::remove_dir_all(dir.join("vendor")).unwrap();
    let old_manifest = old_style_manifest(&new_manifest);
    assert!(!old_manifest.contains("mcpgen-runtime"), "{old_manifest}");
    std::fs::write(dir.join("Cargo.toml"), &old_manifest).unwrap();
    let body = module.split_once('\n').unwrap().1;
    let old_body = body.replacen(
        "/// The runtime crate `mcpgen-runtime`, under the name this module's code uses.\npub use ::mcpgen_runtime as runtime;\n",
        "pub mod runtime;\n",
        1,
    );
    assert_ne!(old_body, body);
    let spec_hash = short_hash(&std::fs::read(dir.join("spec.json")).unwrap());
    std::fs::write(&generated, stamp(&old_body, "spec.json", &spec_hash)).unwrap();
    let copy = dir.join("src/generated/runtime");
    std::fs::create_dir_all(&copy).unwrap();
    let runtime_hash = short_hash(b"the previous runtime");
    let source = |path: &str| {
        mcpgen_runtime::source::FILES
            .iter()
            .find(|(p, _)| *p == path)
            .unwrap()
            .1
    };
    // The copy was flat: its `mod.rs` is the crate's `src/lib.rs`.
    for (name, path) in [
        ("errors.rs", "src/errors.rs"),
        ("mod.rs", "src/lib.rs"),
        ("tools.rs", "src/catalog/tools.rs"),
    ] {
        std::fs::write(copy.join(name), runtime_stamp(source(path), &runtime_hash)).unwrap();
    }
    // A copy file edited by hand, and a file of the user's own: neither is mcpgen's to remove.
    let tools = std::fs::read_to_string(copy.join("tools.rs"))
        .unwrap()
        .replacen("pub ", "pub(crate) ", 1);
    std::fs::write(copy.join("tools.rs"), &tools).unwrap();
    std::fs::write(copy.join("notes.rs"), "// mine\n").unwrap();

    let mut expected: Vec<String> = vec!["would change: src/generated/mod.rs (generated)".into()];
    expected.extend(
        vendored()
            .iter()
            .map(|(n, _)| format!("would change: {VENDOR_DIR}/{n} (generated)")),
    );
    for name in ["errors.rs", "mod.rs"] {
        expected.push(format!(
            "would change: src/generated/runtime/{name} (removed: the crate depends on the runtime crate)"
        ));
    }
    expected.push(
        "would change: Cargo.toml (moved from the runtime's copy to the runtime crate)".into(),
    );
    let runtime_line = r#"mcpgen-runtime = { version = "=0.1.0", path = "vendor/mcpgen-runtime", default-features = false, features = ["server"] }"#;
    let note = format!(
        "note: this crate carried a copy of the runtime in src/generated/runtime/; it now depends on the runtime crate, vendored in vendor/mcpgen-runtime/ (which `mcpgen generate` keeps current). Cargo.toml changed: `[dependencies]` gained\n{runtime_line}\n`[features]` now pass the runtime's on:\ntelemetry = [\"mcpgen-runtime/telemetry\"]\nbus = [\"mcpgen-runtime/bus\"]\ntesting = [\"mcpgen-runtime/testing\"]\nthe copy's optional dependencies `opentelemetry`, `tracing-opentelemetry`, `sse-stream` are gone\nthe copy's dependencies `rmcp`, `tokio`, `clap` stay; the runtime crate brings its own, so remove those your code does not use\nnote: src/generated/runtime/ keeps notes.rs, tools.rs (edited by hand, or not written by mcpgen): the crate no longer compiles that folder (it depends on the runtime crate); move what you need elsewhere and delete the folder\n"
    );
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!((code, stderr.as_str()), (1, note.as_str()), "{stdout}");
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected);
    assert!(!dir.join("vendor").exists(), "--check writes nothing");
    assert_eq!(
        std::fs::read_to_string(dir.join("Cargo.toml")).unwrap(),
        old_manifest
    );

    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stderr.as_str()), (0, note.as_str()), "{stdout}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        expected
            .iter()
            .map(|l| l.replacen("would change", "changed", 1))
            .collect::<Vec<_>>()
    );
    // The copy's pristine files are gone; the edited one and the user's stay.
    let mut left: Vec<String> = std::fs::read_dir(&copy)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["notes.rs", "tools.rs"]);
    assert_eq!(
        std::fs::read_to_string(copy.join("tools.rs")).unwrap(),
        tools
    );
    assert_eq!(
        std::fs::read_to_string(copy.join("notes.rs")).unwrap(),
        "// mine\n"
    );
    // The generated module and the vendored crate are what `new` writes now.
    assert_eq!(std::fs::read_to_string(&generated).unwrap(), module);
    for (path, contents) in vendored() {
        assert_eq!(
            &std::fs::read_to_string(dir.join(VENDOR_DIR).join(path)).unwrap(),
            contents,
            "{path}"
        );
    }
    // Cargo.toml: the optional dependencies out, the runtime's line in, the features passed
    // on; every other line as it was (comments and order kept).
    let moved_dependencies = format!(
        "[dependencies]\n{}{runtime_line}\n",
        COPY_DEPENDENCIES
            .strip_prefix("[dependencies]\n")
            .unwrap()
            .lines()
            .filter(|l| !l.contains("optional = true"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    let moved_features = "[features]\ndefault = [\"telemetry\"]\ntelemetry = [\"mcpgen-runtime/telemetry\"]\ntesting = [\"mcpgen-runtime/testing\"]\nbus = [\"mcpgen-runtime/bus\"]\n";
    assert_eq!(
        std::fs::read_to_string(dir.join("Cargo.toml")).unwrap(),
        old_manifest
            .replacen(COPY_DEPENDENCIES, &moved_dependencies, 1)
            .replacen(COPY_FEATURES, moved_features, 1)
    );
    // Moved once: nothing more to change, and no more notes.
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "",
            format!("{d}: generated code is up to date\n").as_str()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The vendored runtime is mcpgen's, as the generated module is: a file of it edited by hand is
/// not overwritten without `--force`; a file its list records that the runtime no longer has
/// is removed when untouched, kept when edited; one deleted is written again.
#[test]
fn the_vendored_runtime_is_kept_current_and_protected() {
    use mcpgen::write::stamp::short_hash;
    let dir = tempdir("vendored");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "shop", "--spec", "specs/bookshop.json", "--dir", d]);
    assert_eq!(code, 0, "{stderr}");
    let vendor = dir.join(VENDOR_DIR);
    let errors = vendor.join("src/errors.rs");
    let pristine = std::fs::read_to_string(&errors).unwrap();
    // Even a change of whitespace is an edit: the list records the bytes.
    let edited = pristine.replacen("pub ", "pub  ", 1);
    assert_ne!(edited, pristine);
    std::fs::write(&errors, &edited).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            "error: not regenerating: vendor/mcpgen-runtime/src/errors.rs was edited by hand (its content no longer matches the hash vendor/mcpgen-runtime/.mcpgen-vendored records); move your changes to src/handlers.rs (or update mcpgen), or pass --force to overwrite\n"
        )
    );
    assert_eq!(std::fs::read_to_string(&errors).unwrap(), edited);
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--force"]);
    assert_eq!(
        (code, stdout.as_str()),
        (
            0,
            "changed: vendor/mcpgen-runtime/src/errors.rs (generated)\n"
        )
    );
    assert_eq!(std::fs::read_to_string(&errors).unwrap(), pristine);

    // Files of an older runtime (flat, as before `src/`), recorded in the list: `gone.rs`
    // untouched, `kept.rs` edited.
    let list_path = vendor.join(VENDOR_LIST);
    let list = std::fs::read_to_string(&list_path).unwrap();
    std::fs::write(vendor.join("gone.rs"), "// gone\n").unwrap();
    std::fs::write(vendor.join("kept.rs"), "// kept, and edited\n").unwrap();
    let old_list = format!(
        "{list}{}  gone.rs\n{}  kept.rs\n",
        short_hash(b"// gone\n"),
        short_hash(b"// kept\n")
    );
    std::fs::write(&list_path, &old_list).unwrap();
    // And a vendored file deleted.
    std::fs::remove_file(vendor.join("src/catalog/tools.rs")).unwrap();
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!(
        (code, stdout.as_str()),
        (
            1,
            "would change: vendor/mcpgen-runtime/src/catalog/tools.rs (generated)\nwould change: vendor/mcpgen-runtime/.mcpgen-vendored (generated)\nwould change: vendor/mcpgen-runtime/gone.rs (removed: no longer part of the runtime)\n"
        )
    );
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "changed: vendor/mcpgen-runtime/src/catalog/tools.rs (generated)\nchanged: vendor/mcpgen-runtime/.mcpgen-vendored (generated)\nchanged: vendor/mcpgen-runtime/gone.rs (removed: no longer part of the runtime)\n",
            "note: vendor/mcpgen-runtime/ keeps kept.rs (edited by hand), which this runtime no longer has: the vendored crate does not compile it; delete it once you have what you need\n"
        )
    );
    assert!(!vendor.join("gone.rs").exists());
    assert_eq!(
        std::fs::read_to_string(vendor.join("kept.rs")).unwrap(),
        "// kept, and edited\n"
    );
    assert_eq!(std::fs::read_to_string(&list_path).unwrap(), list);
    for (path, contents) in vendored() {
        assert_eq!(
            &std::fs::read_to_string(vendor.join(path)).unwrap(),
            contents,
            "{path}"
        );
    }
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!((code, stdout.as_str()), (0, ""));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crate whose `Cargo.toml` stops vendoring the runtime (here: the registry's, by version)
/// loses the vendored copy on the next `generate`: every file its list records, untouched,
/// goes, the list with them, and no empty folder is left; one edited by hand stays, named in a
/// note.
#[test]
fn generate_removes_the_vendored_runtime_once_the_crate_names_another_source() {
    let vendored_line = r#", path = "vendor/mcpgen-runtime""#;
    let unvendor = |dir: &Path| {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(manifest.contains(vendored_line), "{manifest}");
        std::fs::write(
            dir.join("Cargo.toml"),
            manifest.replacen(vendored_line, "", 1),
        )
        .unwrap();
    };
    let mut removed: Vec<String> = vendored()
        .iter()
        .map(|(n, _)| n.to_string())
        .filter(|n| n != VENDOR_LIST)
        .collect();
    removed.push(VENDOR_LIST.to_string());
    let removal = |names: &[String]| -> String {
        names
            .iter()
            .map(|n| {
                format!("changed: {VENDOR_DIR}/{n} (removed: the runtime is no longer vendored)\n")
            })
            .collect()
    };

    // Untouched: all of it goes, vendor/ too.
    let dir = tempdir("unvendored");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "shop", "--spec", "specs/bookshop.json", "--dir", d]);
    assert_eq!(code, 0, "{stderr}");
    unvendor(&dir);
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (0, removal(&removed).as_str(), "")
    );
    assert!(!dir.join("vendor").exists());
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!((code, stdout.as_str()), (0, ""));
    let _ = std::fs::remove_dir_all(&dir);

    // One source file edited by hand: it stays, with the folders that hold it, and a note says
    // so once.
    let dir = tempdir("unvendored-edited");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "shop", "--spec", "specs/bookshop.json", "--dir", d]);
    assert_eq!(code, 0, "{stderr}");
    let edited = removed
        .iter()
        .find(|n| n.ends_with("errors.rs"))
        .unwrap()
        .clone();
    let path = dir.join(VENDOR_DIR).join(&edited);
    let text = std::fs::read_to_string(&path).unwrap() + "// mine\n";
    std::fs::write(&path, &text).unwrap();
    unvendor(&dir);
    let others: Vec<String> = removed.iter().filter(|n| **n != edited).cloned().collect();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            removal(&others).as_str(),
            format!("note: {VENDOR_DIR}/ keeps {edited} (edited by hand): the crate no longer builds the vendored runtime (Cargo.toml names another source); delete the folder once you have what you need from it\n").as_str()
        )
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // What is left under vendor/: the edited file, and only the folders on its way.
    let kept = format!("{VENDOR_DIR}/{edited}");
    let mut left = Vec::new();
    let mut dirs = vec![dir.join("vendor")];
    while let Some(d) = dirs.pop() {
        let rel = d.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
        assert!(kept.starts_with(&format!("{rel}/")), "{rel} is left");
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            match p.is_dir() {
                true => dirs.push(p),
                false => left.push(p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned()),
            }
        }
    }
    assert_eq!(left, [kept]);
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    assert!(!stderr.contains("keeps"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn new_rejects_bad_names_and_bad_specs_without_writing() {
    let dir = tempdir("bad");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "9lives", "--spec", "specs/bookshop.json", "--dir", d]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: `9lives` is not a valid crate name (a letter, then letters, digits, `-` or `_`)\n"
    );
    let bad = std::env::temp_dir().join(format!("mcpgen-bad-spec-{}.json", std::process::id()));
    std::fs::write(
        &bad,
        r#"{"name": "X", "tools": {"t": {"description": "d", "resolve": {"p": "nope"}}}}"#,
    )
    .unwrap();
    let (code, _, stderr) = mcpgen(&["new", "x", "--spec", bad.to_str().unwrap(), "--dir", d]);
    assert_eq!(code, 1);
    assert!(
        stderr.starts_with("error[unknown-resolver]: parameter `p` of tool `t` is bound to `nope`"),
        "{stderr}"
    );
    assert!(!dir.exists(), "nothing is written for an invalid spec");
    let (code, _, stderr) = mcpgen(&["generate", "--crate", "specs"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: cannot read specs/Cargo.toml"),
        "{stderr}"
    );
}

#[test]
fn template_readers_document_the_path_checks_and_their_exemptions() {
    let dir = tempdir("exempt");
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("git.json");
    std::fs::write(
        &spec,
        r#"{"name": "Git", "tools": {},
  "resourceTemplates": {"git://diff/{range}/{file}": {"name": "diff", "exemptFromPathChecks": ["range"]}}}"#,
    )
    .unwrap();
    let out = dir.join("crate");
    let (code, _, stderr) = mcpgen(&[
        "new",
        "git-reader",
        "--spec",
        spec.to_str().unwrap(),
        "--dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let module = std::fs::read_to_string(out.join("src/generated/mod.rs")).unwrap();
    assert!(
        module.contains(
            "    /// Reads URIs matching `git://diff/{range}/{file}`.
    ///
    /// The variables are percent-decoded and have passed the path checks: no NUL, no `..`
    /// that climbs above the start, not an absolute path. Join them onto a root and check
    /// containment before opening files.
    /// Exempt from the path checks in the spec: `range`.
    fn read_diff(
"
        ),
        "{module}"
    );
    assert!(module.contains("        exempt_from_path_checks: &[\"range\"],\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crate made before the test kit (no `src/lib.rs`, no `testing` feature) gets a note from
/// `generate` for each thing it lacks, saying what to add; `generate` writes none of the user's
/// files.
#[test]
fn generate_notes_what_a_crate_made_before_the_test_kit_lacks() {
    let dir = tempdir("before-kit");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&[
        "new",
        "old-shop",
        "--spec",
        "specs/bookshop.json",
        "--dir",
        d,
    ]);
    assert_eq!(code, 0, "{stderr}");
    // Right after `new`: nothing to note.
    let (code, _, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stderr.as_str()),
        (0, format!("{d}: generated code is up to date\n").as_str())
    );
    std::fs::remove_file(dir.join("src/lib.rs")).unwrap();
    let manifest_path = dir.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    let testing = "testing = [\"mcpgen-runtime/testing\"]\n";
    let old_manifest = manifest.replacen(testing, "", 1);
    assert_ne!(old_manifest, manifest);
    std::fs::write(&manifest_path, &old_manifest).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stdout.as_str()), (0, ""));
    assert_eq!(
        stderr,
        format!(
            "note: the test kit (`generated::testing`, for tests in tests/) needs the layout `mcpgen new` writes now, and this crate has no src/lib.rs: move the `mod generated` and `mod handlers` items of src/main.rs into a new src/lib.rs as `pub mod` (src/main.rs then calls `<crate>::generated::serve(..)`), and add `[lib] doctest = false` to Cargo.toml (the README's \"Testing\" section of a crate made by `mcpgen new` shows it)\nnote: this crate's `[features]` do not pass the runtime's on; set in `[features]`:\n{testing}{d}: generated code is up to date\n"
        )
    );
    assert!(
        !dir.join("src/lib.rs").exists(),
        "generate writes no user file"
    );
    assert_eq!(
        std::fs::read_to_string(&manifest_path).unwrap(),
        old_manifest
    );
    // Each note goes once it is acted on.
    std::fs::write(&manifest_path, &manifest).unwrap();
    let (code, _, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(code, 0);
    assert!(
        stderr.starts_with("note: the test kit (`generated::testing`, for tests in tests/)")
            && stderr.matches("note: ").count() == 1,
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crate whose `Cargo.toml` lacks a dependency the generated code now needs (one the generated
/// code names that the user removed, one a spec edit brought: `regress` for a `pattern`) gets
/// one note from `generate` with the exact lines to add; `Cargo.toml` is left as it was.
#[test]
fn generate_notes_the_dependencies_a_crate_lacks() {
    let dir = tempdir("lacks-deps");
    let d = dir.to_str().unwrap();
    let spec = serde_json::json!({
        "name": "Lacks",
        "tools": {"echo": {"description": "Echoes.", "output": {"type": "string"},
            "input": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}
    });
    let spec_path = dir.with_extension("json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let (code, _, stderr) = mcpgen(&[
        "new",
        "lacks",
        "--spec",
        spec_path.to_str().unwrap(),
        "--dir",
        d,
    ]);
    assert_eq!(code, 0, "{stderr}");
    let manifest_path = dir.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    assert!(!manifest.contains("regress"), "{manifest}");
    // As if the user had removed `serde_json`, which the generated code names.
    let serde_json = mcpgen::write::runtime_files::NAMED_BY_GENERATED_CODE
        .iter()
        .find(|d| d.starts_with("serde_json = "))
        .expect("generated code names serde_json");
    let old_manifest = manifest.replace(&format!("\n{serde_json}\n"), "\n");
    assert_ne!(old_manifest, manifest);
    std::fs::write(&manifest_path, &old_manifest).unwrap();
    // A spec edit that needs regress.
    let mut edited = spec.clone();
    edited["tools"]["echo"]["input"]["properties"]["text"]["pattern"] = "^[a-z]+$".into();
    std::fs::write(dir.join("spec.json"), edited.to_string()).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "changed: src/generated/mod.rs (generated)\n"),
        "{stderr}"
    );
    assert!(
        stderr.starts_with(&format!(
            "note: the generated code needs 2 dependencies this crate's Cargo.toml does not declare; add to `[dependencies]`:\n{serde_json}\nregress = \"0.12\"\n"
        )),
        "{stderr}"
    );
    assert_eq!(stderr.matches("note: ").count(), 1, "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&manifest_path).unwrap(),
        old_manifest
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&spec_path);
}

/// A crate whose `[features]` do not pass the runtime's on (no `telemetry`, made before
/// telemetry became one; a `bus` of another value) gets one note from `generate`: the lines to
/// set. A runtime dependency of another version, or without a feature the spec needs, gets one
/// too. `Cargo.toml` is left as it was.
#[test]
fn generate_notes_a_crate_whose_features_or_runtime_line_do_not_fit() {
    let dir = tempdir("no-telemetry");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "tele", "--spec", "specs/bookshop.json", "--dir", d]);
    assert_eq!(code, 0, "{stderr}");
    let manifest_path = dir.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    let features = mcpgen::write::runtime_files::crate_features();
    assert_eq!(
        features,
        [
            "default = [\"telemetry\"]",
            "telemetry = [\"mcpgen-runtime/telemetry\"]",
            "bus = [\"mcpgen-runtime/bus\"]",
            "testing = [\"mcpgen-runtime/testing\"]",
        ]
    );
    let mut old_manifest = manifest.clone();
    for line in &features[..2] {
        old_manifest = old_manifest.replacen(&format!("{line}\n"), "", 1);
    }
    old_manifest = old_manifest.replacen(&format!("{}\n", features[2]), "bus = []\n", 1);
    assert_ne!(old_manifest, manifest);
    std::fs::write(&manifest_path, &old_manifest).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "note: this crate's `[features]` do not pass the runtime's on; set in `[features]`:\n{}\n{d}: generated code is up to date\n",
            features[..3].join("\n"),
        )
    );
    assert_eq!(
        std::fs::read_to_string(&manifest_path).unwrap(),
        old_manifest
    );

    // The runtime's line: another version, and (for a spec with `auth`) no `auth`.
    let runtime_line = r#"mcpgen-runtime = { version = "=0.1.0", path = "vendor/mcpgen-runtime", default-features = false, features = ["server"] }"#;
    assert!(
        manifest.contains(&format!("\n{runtime_line}\n")),
        "{manifest}"
    );
    let other = manifest.replacen(
        runtime_line,
        r#"mcpgen-runtime = { version = "=0.0.9", path = "vendor/mcpgen-runtime", default-features = false }"#,
        1,
    );
    std::fs::write(&manifest_path, &other).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "note: this crate's `mcpgen-runtime` dependency does not fit: it asks for version `=0.0.9`, and this code is generated for `=0.1.0`; it lacks the feature `server` the spec needs; set in `[dependencies]`:\n{runtime_line}\n{d}: generated code is up to date\n"
        )
    );
    assert_eq!(std::fs::read_to_string(&manifest_path).unwrap(), other);
    std::fs::write(&manifest_path, &manifest).unwrap();
    let mut spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("spec.json")).unwrap()).unwrap();
    spec["auth"] = serde_json::json!({"required": true, "scopes": ["books:read"]});
    std::fs::write(dir.join("spec.json"), spec.to_string()).unwrap();
    let (code, _, stderr) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "note: this crate's `mcpgen-runtime` dependency does not fit: it lacks the feature `auth` the spec needs; set in `[dependencies]`:\n{}\n",
            runtime_line.replace(r#"["server"]"#, r#"["server", "auth"]"#)
        )),
        "{stderr}"
    );
    assert_eq!(stderr.matches("note: ").count(), 1, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `new --runtime-path`: the crate depends on the runtime crate at that path (relative to the
/// crate), vendors nothing, and `generate` agrees. Its `Cargo.toml` decides: pointed at the
/// vendored copy's path, `generate` writes the copy; pointed back, it removes what it wrote.
#[test]
fn a_crate_can_depend_on_the_runtime_crate_at_a_path() {
    let dir = tempdir("runtime-crate");
    let d = dir.to_str().unwrap();
    let runtime_dir = root().join("runtime").canonicalize().unwrap();
    let (code, _, stderr) = mcpgen(&[
        "new",
        "shop",
        "--spec",
        "specs/bookshop.json",
        "--dir",
        d,
        "--runtime-path",
        "runtime",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        format!("created {d} (9 files); next: cd {d} && cargo run\n")
    );
    assert!(!dir.join("src/generated/runtime").exists());
    assert!(!dir.join("vendor").exists());
    let module = std::fs::read_to_string(dir.join("src/generated/mod.rs")).unwrap();
    assert!(
        module.contains("\npub use ::mcpgen_runtime as runtime;\n")
            && !module.contains("pub mod runtime;"),
        "{module}"
    );
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    // The path is relative to the crate (as `cargo add --path` writes it) and leads to the
    // runtime's directory.
    let runtime_line = manifest
        .lines()
        .find(|l| l.starts_with("mcpgen-runtime = "))
        .unwrap_or_else(|| panic!("{manifest}"))
        .to_string();
    let path: String = runtime_line
        .strip_prefix("mcpgen-runtime = { version = \"=0.1.0\", path = ")
        .and_then(|rest| rest.strip_suffix(", default-features = false, features = [\"server\"] }"))
        .map(|quoted| serde_json::from_str(quoted).unwrap())
        .unwrap_or_else(|| panic!("{runtime_line}"));
    assert!(path.starts_with("../"), "{path}");
    assert_eq!(dir.join(&path).canonicalize().unwrap(), runtime_dir);
    let checked = check_file(&root().join("specs/bookshop.json")).unwrap();
    let named = mcpgen::write::crate_files::dependencies(&checked);
    assert_eq!(
        named,
        [
            r#"serde = { version = "1", features = ["derive"] }"#,
            r#"serde_json = "1""#,
            r#"mimalloc = { version = "0.1", features = ["no_thp"] }"#,
        ]
    );
    let deps_section = format!(
        "\n[dependencies]\n# The runtime (`generated::runtime`), pinned to the mcpgen that made this crate. Its features\n# are this crate's, passed on (see `[features]`); the spec decides the rest.\n{runtime_line}\n{}\n\n",
        named.join("\n")
    );
    assert!(manifest.contains(&deps_section), "{manifest}");
    assert!(
        manifest.contains("\n[features]\ndefault = [\"telemetry\"]\ntelemetry = [\"mcpgen-runtime/telemetry\"]\nbus = [\"mcpgen-runtime/bus\"]\ntesting = [\"mcpgen-runtime/testing\"]\n\n"),
        "{manifest}"
    );
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        readme.contains("- The runtime is the crate `mcpgen-runtime` at the path its line in `Cargo.toml` names (a\n  checkout of mcpgen's `runtime/`), pinned to the version of the mcpgen that made this crate.\n")
            && !readme.contains("vendor/"),
        "{readme}"
    );
    assert_eq!(
        mcpgen(&["generate", "--check", "--crate", d]),
        (
            0,
            String::new(),
            format!("{d}: generated code is up to date\n")
        )
    );

    // Pointed at the vendored copy's path: `generate` writes the copy, and nothing else.
    let vendored_line = runtime_line.replacen(&toml_string(&path), &toml_string(VENDOR_DIR), 1);
    assert_ne!(vendored_line, runtime_line);
    let vendored_manifest = manifest.replacen(&runtime_line, &vendored_line, 1);
    std::fs::write(dir.join("Cargo.toml"), &vendored_manifest).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        vendored()
            .iter()
            .map(|(n, _)| format!("changed: {VENDOR_DIR}/{n} (generated)"))
            .collect::<Vec<_>>()
    );
    for (name, contents) in vendored() {
        assert_eq!(
            &std::fs::read_to_string(dir.join(VENDOR_DIR).join(name)).unwrap(),
            contents,
            "{name}"
        );
    }
    assert_eq!(mcpgen(&["generate", "--check", "--crate", d]).0, 0);

    // Back to the path: the files the copy's list records (all untouched) go, then the list,
    // and no folder is left.
    std::fs::write(dir.join("Cargo.toml"), &manifest).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        vendored()
            .iter()
            .filter(|(n, _)| n != VENDOR_LIST)
            .chain(vendored().iter().filter(|(n, _)| n == VENDOR_LIST))
            .map(|(n, _)| format!(
                "changed: {VENDOR_DIR}/{n} (removed: the runtime is no longer vendored)"
            ))
            .collect::<Vec<_>>()
    );
    assert!(!dir.join("vendor").exists());
    assert_eq!(
        std::fs::read_to_string(dir.join("src/generated/mod.rs")).unwrap(),
        module
    );
    assert_eq!(mcpgen(&["generate", "--check", "--crate", d]).0, 0);
    let _ = std::fs::remove_dir_all(&dir);

    // Not the runtime's directory.
    let (code, stdout, stderr) = mcpgen(&[
        "new",
        "shop",
        "--spec",
        "specs/bookshop.json",
        "--dir",
        d,
        "--runtime-path",
        "specs",
    ]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            "error: --runtime-path: cannot read specs/Cargo.toml: No such file or directory (os error 2)\n"
        )
    );
    let (code, _, stderr) = mcpgen(&[
        "new",
        "shop",
        "--spec",
        "specs/bookshop.json",
        "--dir",
        d,
        "--runtime-path",
        ".",
    ]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "error: --runtime-path: ./Cargo.toml is not the manifest of the crate `mcpgen-runtime` (give the `runtime/` directory of mcpgen's repository)\n"
        )
    );
    assert!(!dir.exists());
}

/// `text` as a TOML basic string, as the manifest's lines write paths.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// `new --runtime registry`: the runtime's line names the version alone (no path), nothing is
/// vendored, and `generate` agrees; `--runtime` and `--runtime-path` are one choice.
#[test]
fn new_can_take_the_runtime_from_the_registry() {
    let dir = tempdir("registry");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&[
        "new",
        "shop",
        "--spec",
        "specs/bookshop.json",
        "--dir",
        d,
        "--runtime",
        "registry",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        format!("created {d} (9 files); next: cd {d} && cargo run\n")
    );
    assert!(!dir.join("vendor").exists());
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let lines: Vec<&str> = manifest
        .lines()
        .filter(|l| l.starts_with("mcpgen-runtime = "))
        .collect();
    assert_eq!(
        lines,
        [
            r#"mcpgen-runtime = { version = "=0.1.0", default-features = false, features = ["server"] }"#
        ]
    );
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        readme.contains("- The runtime is the crate `mcpgen-runtime` from the registry, pinned to the version of the\n  mcpgen that made this crate.\n"),
        "{readme}"
    );
    assert_eq!(
        mcpgen(&["generate", "--check", "--crate", d]),
        (
            0,
            String::new(),
            format!("{d}: generated code is up to date\n")
        )
    );
    let _ = std::fs::remove_dir_all(&dir);

    let (code, stdout, stderr) = mcpgen(&[
        "new",
        "shop",
        "--spec",
        "specs/bookshop.json",
        "--dir",
        d,
        "--runtime",
        "registry",
        "--runtime-path",
        "runtime",
    ]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            "error: the argument '--runtime <RUNTIME>' cannot be used with '--runtime-path <RUNTIME_PATH>'\n\nUsage: mcpgen new --spec <SPEC> --dir <DIR> --runtime <RUNTIME> <NAME>\n\nFor more information, try '--help'.\n"
        )
    );
    assert!(!dir.exists());
}

/// The paths `new` writes into the crate's Cargo.toml (`--runtime-path`, `--mcpgen-path`) are
/// relative to the crate, as `cargo add --path` writes them, with symbolic links resolved: the
/// crate moves with what it depends on (a repository cloned elsewhere still builds).
#[test]
fn new_writes_dependency_paths_relative_to_the_crate() {
    let dir = tempdir("relative-paths");
    let runtime = dir.join("tools/mcpgen/runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::write(
        runtime.join("Cargo.toml"),
        "[package]\nname = \"mcpgen-runtime\"\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.join("tools"), dir.join("link")).unwrap();
    let spec = root().join("specs/bookshop.json");
    let new = |crate_dir: &str, runtime_path: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_mcpgen"))
            .args(["new", "shop", "--spec", spec.to_str().unwrap(), "--dir"])
            .args([crate_dir, "--build-rs", "--mcpgen-path", "link/mcpgen"])
            .args(["--runtime-path", runtime_path])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        std::fs::read_to_string(dir.join(crate_dir).join("Cargo.toml")).unwrap()
    };
    for (crate_dir, runtime_path, expected) in [
        (
            "servers/shop",
            "tools/mcpgen/runtime",
            "\"../../tools/mcpgen/runtime\"",
        ),
        // Through the link, and with `..` in the crate's own path.
        (
            "servers/../shop",
            "link/mcpgen/runtime",
            "\"../tools/mcpgen/runtime\"",
        ),
    ] {
        let manifest = new(crate_dir, runtime_path);
        let line = format!(
            "mcpgen-runtime = {{ version = \"=0.1.0\", path = {expected}, default-features = false, features = [\"server\"] }}\n"
        );
        assert!(manifest.contains(&line), "{line}{manifest}");
        let mcpgen = expected.replace("/runtime\"", "\"");
        let line = format!("mcpgen = {{ version = \"=0.1.0\", path = {mcpgen} }}\n");
        assert!(manifest.contains(&line), "{line}{manifest}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The examples' end-to-end tests and the peers build the same set of examples in one cargo
/// build each (`EXAMPLES` in `generated-examples/e2e/tests/common/mod.rs`, the `-p` list of
/// `peers/run.sh`): cargo unifies features over the packages of one build, so two different
/// sets compile the runtime and the examples twice.
#[test]
fn the_e2e_tests_and_the_peers_build_the_same_examples() {
    let common =
        std::fs::read_to_string(root().join("generated-examples/e2e/tests/common/mod.rs")).unwrap();
    let start = common.find("pub const EXAMPLES: [&str; ").unwrap();
    let list = &common[start..common[start..].find("];").unwrap() + start];
    let mut e2e: Vec<&str> = list.split('"').skip(1).step_by(2).collect();
    let run = std::fs::read_to_string(root().join("peers/run.sh")).unwrap();
    let line = run
        .lines()
        .find(|l| {
            l.starts_with("cargo build --manifest-path \"$ROOT/generated-examples/Cargo.toml\"")
        })
        .unwrap();
    let mut peers: Vec<&str> = line
        .split(" -p ")
        .skip(1)
        .map(|p| p.split_whitespace().next().unwrap())
        .collect();
    e2e.sort_unstable();
    peers.sort_unstable();
    assert_eq!(e2e.len(), 10, "{list}");
    assert_eq!(e2e, peers);
}
