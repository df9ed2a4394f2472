//! `mcpgen new` and `mcpgen generate`, and the golden check: the checked-in generated examples
//! are exactly what mcpgen produces now.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcpgen::check::check_file;
use mcpgen::write::crate_files::{NewOptions, Owner, new_crate_files, new_crate_files_with};
use mcpgen::write::planned_files;

const EXAMPLES: [&str; 7] = [
    "bookshop",
    "files",
    "bistro",
    "mrtr-probe",
    "stress",
    "conformance",
    "differential",
];

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
        // No generated file that mcpgen no longer produces.
        let runtime_dir = dir.join("src/generated/runtime");
        for entry in std::fs::read_dir(&runtime_dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(
                mcpgen::write::crate_files::RUNTIME_FILES
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
        // compares with the crate's).
        if let Ok(original) =
            std::fs::read_to_string(root().join("specs").join(format!("{ex}.json")))
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
        let options = NewOptions {
            in_workspace: true,
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
            "note: {m} is inside the cargo workspace at {}: add it to the workspace's `members` if it is not one yet; cargo reads profiles from the workspace root only, so the crate has no `[profile.release]` (for serving, put `lto = \"fat\"` and `codegen-units = 1` in the root's)\ncreated {m} (27 files); next: cd {m} && cargo run\n",
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
        format!("created {a} (27 files); next: cd {a} && cargo run\n")
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
        format!("created {d} (27 files); next: cd {d} && cargo run\n")
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
        "src/main.rs",
        "src/handlers.rs",
        "src/generated/mod.rs",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(
        mcpgen::write::crate_files::RUNTIME_FILES
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

    // A spec change makes `--check` fail and lists the file; `generate` then rewrites only it.
    let spec = dir.join("spec.json");
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("Reserve a copy of a book.", "Reserve one copy of a book.");
    std::fs::write(&spec, text).unwrap();
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d, "--check"]);
    let stale: Vec<&str> = stdout.lines().collect();
    assert_eq!(code, 1);
    // The stamp of every generated file names the spec's hash, so all of them are stale.
    assert_eq!(
        stale.len(),
        1 + mcpgen::write::crate_files::RUNTIME_FILES.len(),
        "{stdout}"
    );
    assert_eq!(stale[0], "would change: src/generated/mod.rs (generated)");
    let (code, stdout, _) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.lines().count(),
        1 + mcpgen::write::crate_files::RUNTIME_FILES.len()
    );
    assert!(
        std::fs::read_to_string(dir.join("src/generated/mod.rs"))
            .unwrap()
            .contains("/// Reserve one copy of a book.")
    );
    // A second run writes nothing: unchanged files keep their mtime.
    let runtime_file = dir.join("src/generated/runtime/mod.rs");
    let mtime = std::fs::metadata(&runtime_file)
        .unwrap()
        .modified()
        .unwrap();
    let (code, stdout, stderr) = mcpgen(&["generate", "--crate", d]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "",
            format!("{d}: generated code is up to date\n").as_str()
        )
    );
    assert_eq!(
        std::fs::metadata(&runtime_file)
            .unwrap()
            .modified()
            .unwrap(),
        mtime,
        "unchanged files are not rewritten"
    );

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

#[test]
fn runtime_readme_lists_exactly_the_runtime_dependencies() {
    let listed = std::fs::read_to_string(root().join("runtime/dependencies.toml")).unwrap();
    let listed: Vec<&str> = listed
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let readme = std::fs::read_to_string(root().join("runtime/README.md")).unwrap();
    let block = readme
        .split_once("```toml\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block)
        .expect("a toml block in runtime/README.md");
    assert_eq!(block.lines().collect::<Vec<_>>(), listed);
}
