//! `mcpgen new` and `mcpgen generate`, and the golden check: the checked-in generated examples
//! are exactly what mcpgen produces now.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcpgen::check::check_file;
use mcpgen::write::crate_files::{NewOptions, Owner, new_crate_files, new_crate_files_with};
use mcpgen::write::planned_files;

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

/// The examples that carry the runtime's copy (what `new` writes by default; embedded's own
/// `main.rs` uses the copy's dependencies `clap` and `tracing`); the others depend on the
/// runtime crate, so their workspace compiles it once.
const VENDORED: &[&str] = &["bookshop", "embedded"];

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

/// How many files `new` writes: nine of the crate's own, and the runtime's.
fn new_crate_file_count() -> usize {
    9 + mcpgen::write::runtime_files::vendored().files.len()
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
        let (_, files) = planned_files(&dir).unwrap_or_else(|e| panic!("{ex}: {e:?}"));
        assert!(files.iter().all(|f| f.owner == Owner::Mcpgen));
        for f in files {
            let on_disk = std::fs::read_to_string(dir.join(&f.path)).unwrap_or_default();
            if on_disk != f.contents {
                stale.push(format!("generated-examples/{ex}/{}", f.path));
            }
        }
        // No generated file that mcpgen no longer produces (and no copy of the runtime in an
        // example that depends on the runtime crate).
        let runtime_dir = dir.join("src/generated/runtime");
        if !VENDORED.contains(&ex) {
            assert!(!runtime_dir.exists(), "{}", runtime_dir.display());
            continue;
        }
        for entry in std::fs::read_dir(&runtime_dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(
                mcpgen::write::runtime_files::vendored()
                    .files
                    .iter()
                    .any(|(n, _)| *n == name),
                "generated-examples/{ex}/src/generated/runtime/{name} is not part of the runtime"
            );
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
        // All but the vendored ones were made with `--runtime-path ../runtime`.
        let options = NewOptions {
            in_workspace: true,
            runtime_dependency: (!VENDORED.contains(&ex))
                .then(|| r#"{ path = "../../runtime", default-features = false }"#.to_string()),
            ..NewOptions::default()
        };
        let files = new_crate_files_with(&checked, ex, "spec.json", &spec_text, &options).unwrap();
        for path in ["Cargo.toml", "README.md", ".gitignore"] {
            let expected = &files.iter().find(|f| f.path == path).unwrap().contents;
            let actual = std::fs::read_to_string(dir.join(path)).unwrap();
            assert!(
                &actual == expected,
                "generated-examples/{ex}/{path} differs from what `mcpgen new` writes:\n{expected}"
            );
        }
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
    assert_eq!(files, 41);
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
    .chain(
        mcpgen::write::runtime_files::vendored()
            .files
            .iter()
            .map(|(n, _)| format!("src/generated/runtime/{n}")),
    )
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
    // the generated module (the runtime's files are stamped with the runtime's hash, not the
    // spec's); `generate` then rewrites only it.
    let spec = dir.join("spec.json");
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("Reserve a copy of a book.", "Reserve one copy of a book.");
    std::fs::write(&spec, text).unwrap();
    let (_, planned) = planned_files(&dir).unwrap();
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
    let formatted = pristine.replacen("pub mod runtime;", "pub   mod   runtime ;", 1);
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

/// A crate generated before the runtime had a hash of its own: every runtime file stamped with
/// the spec's hash, the runtime's tests (`tests.rs`, `mod tests;`) among them.
#[test]
fn a_runtime_stamped_with_the_spec_hash_is_regenerated_cleanly() {
    use mcpgen::write::runtime_files::{RUNTIME_FILES, vendored};
    use mcpgen::write::stamp::{short_hash, stamp};
    let dir = tempdir("old-runtime");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "shop", "--spec", "specs/bookshop.json", "--dir", d]);
    assert_eq!(code, 0, "{stderr}");
    let runtime = dir.join("src/generated/runtime");
    let spec_hash = short_hash(&std::fs::read(dir.join("spec.json")).unwrap());
    for (name, source) in RUNTIME_FILES {
        std::fs::write(runtime.join(name), stamp(source, "spec.json", &spec_hash)).unwrap();
    }
    assert!(
        std::fs::read_to_string(runtime.join("mod.rs"))
            .unwrap()
            .contains("\n#[cfg(test)]\nmod tests;\n")
    );
    // A file of the user's own in the directory is not mcpgen's.
    std::fs::write(runtime.join("notes.rs"), "// mine\n").unwrap();

    // Every runtime file changes (its stamp), tests.rs goes; the generated module does not.
    let mut expected: Vec<String> = vendored()
        .files
        .iter()
        .map(|(n, _)| format!("would change: src/generated/runtime/{n} (generated)"))
        .collect();
    expected.push(
        "would change: src/generated/runtime/tests.rs (removed: no longer part of the runtime)"
            .into(),
    );
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!(code, 1);
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected);

    // An old runtime file edited by hand is protected as before.
    let errors = runtime.join("errors.rs");
    let old = std::fs::read_to_string(&errors).unwrap();
    std::fs::write(&errors, old.replace("pub enum", "pub(crate) enum")).unwrap();
    let (code, _, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(
            "error: not regenerating: src/generated/runtime/errors.rs was edited by hand"
        ),
        "{stderr}"
    );
    assert!(runtime.join("tests.rs").exists(), "nothing is written");
    std::fs::write(&errors, &old).unwrap();

    let (code, stdout, _) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        expected
            .iter()
            .map(|l| l.replacen("would change", "changed", 1))
            .collect::<Vec<_>>()
    );
    assert!(!runtime.join("tests.rs").exists());
    assert_eq!(
        std::fs::read_to_string(runtime.join("notes.rs")).unwrap(),
        "// mine\n"
    );
    let (_, planned) = planned_files(&dir).unwrap();
    for f in &planned {
        assert_eq!(
            std::fs::read_to_string(dir.join(&f.path)).unwrap(),
            f.contents,
            "{}",
            f.path
        );
    }
    assert!(
        !std::fs::read_to_string(runtime.join("mod.rs"))
            .unwrap()
            .contains("mod tests")
    );
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--check"]);
    assert_eq!((code, stdout.as_str()), (0, ""));
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

/// runtime/README.md lists the dependencies a new crate gets: the runtime crate's (its
/// Cargo.toml's `[dependencies]`, in order), then mimalloc; bookshop's manifest (what `new`
/// writes, checked above) has exactly those.
#[test]
fn runtime_readme_lists_exactly_the_runtime_dependencies() {
    let runtime = mcpgen::write::runtime_files::dependencies();
    assert_eq!(
        runtime.first().map(String::as_str),
        Some(
            r#"rmcp = { version = "3.11", default-features = false, features = ["server", "transport-io", "transport-streamable-http-server", "elicitation"] }"#
        )
    );
    let manifest =
        std::fs::read_to_string(root().join("generated-examples/bookshop/Cargo.toml")).unwrap();
    let new_crate: Vec<&str> = manifest
        .split_once("\n[dependencies]\n")
        .map(|(_, deps)| deps)
        .unwrap()
        .lines()
        .take_while(|l| !l.is_empty())
        .collect();
    let mut expected: Vec<&str> = runtime.iter().map(String::as_str).collect();
    expected.push(r#"mimalloc = { version = "0.1", features = ["no_thp"] }"#);
    assert_eq!(new_crate, expected);
    let readme = std::fs::read_to_string(root().join("runtime/README.md")).unwrap();
    let block = readme
        .split_once("```toml\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block)
        .expect("a toml block in runtime/README.md");
    assert_eq!(block.lines().collect::<Vec<_>>(), expected);
}

/// A crate made before the test kit (no `src/lib.rs`, no `testing` feature) gets one note from
/// `generate` saying what to add; `generate` writes none of the user's files.
#[test]
fn generate_notes_once_what_a_crate_made_before_the_test_kit_lacks() {
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
    let features = mcpgen::write::runtime_files::features();
    let old_manifest = match manifest.split_once("\n[features]\n") {
        Some((before, after)) => {
            let rest = after.split_once("\n[profile.release]\n").map(|(_, p)| p);
            let rest = rest.map(|p| format!("\n[profile.release]\n{p}"));
            format!("{before}{}", rest.unwrap_or_default())
        }
        None => manifest.clone(),
    };
    std::fs::write(&manifest_path, &old_manifest).unwrap();
    let lacks = if features.is_empty() {
        "no src/lib.rs"
    } else {
        "no src/lib.rs and no `testing` feature in Cargo.toml"
    };
    let optional: Vec<String> = mcpgen::write::runtime_files::dependencies()
        .into_iter()
        .filter(|d| d.contains("optional = true"))
        .collect();
    let optional = if optional.is_empty() {
        String::new()
    } else {
        format!("to `[dependencies]`\n{}\n", optional.join("\n"))
    };
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stdout.as_str()), (0, ""));
    assert_eq!(
        stderr,
        format!(
            "note: the test kit (`generated::testing`, for tests in tests/) needs the layout `mcpgen new` writes now, and this crate has {lacks}: move the `mod generated` and `mod handlers` items of src/main.rs into a new src/lib.rs as `pub mod` (src/main.rs then calls `old_shop::generated::serve(..)`); in Cargo.toml add `[lib] doctest = false`, {optional}`[features]` with\n{}\nand `[dev-dependencies] old-shop = {{ path = \".\", default-features = false, features = [\"testing\"] }}` (the README's \"Testing\" section of a crate made by `mcpgen new` shows them)\n{d}: generated code is up to date\n",
            features.join("\n")
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
    let _ = std::fs::remove_dir_all(&dir);
}

/// A crate whose `Cargo.toml` lacks a dependency the generated code now needs (one the runtime
/// took on since the crate was made, one a spec edit brought: `regress` for a `pattern`) gets
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
    // As if the crate was made before the runtime took on humantime.
    let humantime = mcpgen::write::runtime_files::dependencies()
        .into_iter()
        .find(|d| d.starts_with("humantime = "))
        .expect("the runtime depends on humantime");
    let old_manifest = manifest.replace(&format!("{humantime}\n"), "");
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
            "note: the generated code needs 2 dependencies this crate's Cargo.toml does not declare; add to `[dependencies]`:\n{humantime}\nregress = \"0.12\"\n"
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

/// A crate with the test kit but no `telemetry` feature (made before telemetry became one) gets
/// one note from `generate`: the optional dependency lines and the features to declare.
#[test]
fn generate_notes_a_crate_without_the_telemetry_feature() {
    let dir = tempdir("no-telemetry");
    let d = dir.to_str().unwrap();
    let (code, _, stderr) = mcpgen(&["new", "tele", "--spec", "specs/bookshop.json", "--dir", d]);
    assert_eq!(code, 0, "{stderr}");
    let manifest_path = dir.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path).unwrap();
    let features = mcpgen::write::runtime_files::features();
    let declared: Vec<&String> = features
        .iter()
        .filter(|f| f.starts_with("default = ") || f.starts_with("telemetry = "))
        .collect();
    assert_eq!(declared.len(), 2, "{features:?}");
    let mut old_manifest = manifest.clone();
    for line in &declared {
        old_manifest = old_manifest.replace(&format!("{line}\n"), "");
    }
    assert_ne!(old_manifest, manifest);
    std::fs::write(&manifest_path, &old_manifest).unwrap();
    let optional = [
        "opentelemetry",
        "opentelemetry_sdk",
        "opentelemetry-otlp",
        "opentelemetry-prometheus",
        "prometheus",
        "tracing-opentelemetry",
    ]
    .map(|name| {
        mcpgen::write::runtime_files::dependencies()
            .into_iter()
            .find(|d| d.starts_with(&format!("{name} = ")) && d.contains("optional = true"))
            .unwrap_or_else(|| panic!("no optional {name} in the runtime's dependencies"))
    });
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stdout.as_str()), (0, ""), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "note: this crate's Cargo.toml has no `telemetry` feature, so its server is built without OpenTelemetry export and `--metrics-bind` (and cargo warns of the unknown cfg); to keep them, in `[dependencies]` replace (or add) these lines:\n{}\nadd to `[features]`:\n{}\nand add `default-features = false` to the crate's own `[dev-dependencies]` line\n{d}: generated code is up to date\n",
            optional.join("\n"),
            declared
                .iter()
                .map(|f| f.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    );
    assert_eq!(
        std::fs::read_to_string(&manifest_path).unwrap(),
        old_manifest
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `new --runtime-path`: the crate depends on the runtime crate instead of carrying its copy
/// (no `src/generated/runtime/`, `generated::runtime` re-exports `mcpgen_runtime`, only the
/// dependencies generated code names, the features passed on), and `generate` agrees. A
/// vendored crate whose `Cargo.toml` gains the dependency loses its copy on `generate`; one
/// that drops it gets the copy back and a note of the dependencies the copy needs.
#[test]
fn a_crate_can_depend_on_the_runtime_crate_instead_of_its_copy() {
    use mcpgen::RuntimeSource;
    use mcpgen::write::runtime_files::{crate_dependencies, crate_features, dependencies};
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
        .strip_prefix("mcpgen-runtime = { path = ")
        .and_then(|rest| rest.strip_suffix(", default-features = false }"))
        .map(|quoted| serde_json::from_str(quoted).unwrap())
        .unwrap_or_else(|| panic!("{runtime_line}"));
    assert!(path.starts_with("../"), "{path}");
    assert_eq!(dir.join(&path).canonicalize().unwrap(), runtime_dir);
    let named = crate_dependencies(RuntimeSource::Crate);
    let names: Vec<&str> = named
        .iter()
        .map(|l| l.split(" = ").next().unwrap())
        .collect();
    assert_eq!(names, ["rmcp", "tokio", "axum", "serde", "serde_json"]);
    assert!(
        named.iter().all(|l| dependencies().contains(l)),
        "the same lines as the runtime's: {named:?}"
    );
    let deps_section = format!(
        "[dependencies]\n# The runtime (`generated::runtime`) is this crate, not a copy in src/generated/runtime/; its\n# features are this crate's, passed on (see `[features]`).\n{runtime_line}\n{}\nmimalloc = {{ version = \"0.1\", features = [\"no_thp\"] }}\n",
        named.join("\n")
    );
    assert!(manifest.contains(&deps_section), "{manifest}");
    assert_eq!(
        crate_features(RuntimeSource::Crate),
        [
            "default = [\"telemetry\"]",
            "telemetry = [\"mcpgen-runtime/telemetry\"]",
            "testing = [\"mcpgen-runtime/testing\"]",
        ]
    );
    assert!(
        manifest.contains("[features]\ndefault = [\"telemetry\"]\ntelemetry = [\"mcpgen-runtime/telemetry\"]\ntesting = [\"mcpgen-runtime/testing\"]\n"),
        "{manifest}"
    );
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    assert!(
        readme.contains("its `runtime` is the runtime crate `mcpgen-runtime`")
            && !readme.contains("is a copy of the runtime crate"),
        "{readme}"
    );
    assert_eq!(mcpgen(&["generate", "--check", "--crate", d]).0, 0);

    // Back to the copy: drop the dependency line, regenerate.
    let vendored_manifest = manifest.replace(&format!("{runtime_line}\n"), "");
    std::fs::write(dir.join("Cargo.toml"), &vendored_manifest).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(code, 0, "{stderr}");
    let copy = &mcpgen::write::runtime_files::vendored().files;
    assert_eq!(stdout.lines().count(), 1 + copy.len(), "{stdout}");
    assert!(
        stdout.starts_with("changed: src/generated/mod.rs (generated)\n"),
        "{stdout}"
    );
    for (name, _) in copy {
        assert!(
            dir.join("src/generated/runtime").join(name).exists(),
            "{name}"
        );
    }
    let lacking: Vec<String> = dependencies()
        .into_iter()
        .filter(|l| !l.contains("optional = true") && !named.contains(l))
        .collect();
    let copy_features: Vec<String> = crate_features(RuntimeSource::Vendored)
        .into_iter()
        .filter(|l| !l.starts_with("default = "))
        .collect();
    assert_eq!(copy_features.len(), 2, "{copy_features:?}");
    let optional: Vec<String> = dependencies()
        .into_iter()
        .filter(|l| l.contains("optional = true"))
        .collect();
    assert_eq!(
        stderr,
        format!(
            "note: the generated code needs {} dependencies this crate's Cargo.toml does not declare; add to `[dependencies]`:\n{}\nnote: this crate's `[features]` do not fit a crate that carries the runtime's copy; set in `[features]`:\n{}\nand add to `[dependencies]`:\n{}\n",
            lacking.len(),
            lacking.join("\n"),
            copy_features.join("\n"),
            optional.join("\n"),
        )
    );
    assert_eq!(mcpgen(&["generate", "--check", "--crate", d]).0, 0);

    // And to the crate again: the copy's files (all pristine) go, with their directory.
    std::fs::write(dir.join("Cargo.toml"), &manifest).unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--check", "--crate", d]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!((code, stderr.as_str()), (0, ""), "{stdout}");
    assert_eq!(
        stdout
            .matches("(removed: the crate depends on the runtime crate)")
            .count(),
        copy.len(),
        "{stdout}"
    );
    assert!(!dir.join("src/generated/runtime").exists());
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
        let line = format!("mcpgen-runtime = {{ path = {expected}, default-features = false }}\n");
        assert!(manifest.contains(&line), "{line}{manifest}");
        let mcpgen = expected.replace("/runtime\"", "\"");
        let line = format!("mcpgen = {{ path = {mcpgen} }}\n");
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
