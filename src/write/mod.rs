//! Writing a crate: `new` (every file, into an empty directory) and `generate` (the files mcpgen
//! owns, rewritten only when their bytes change, so cargo does not rebuild for nothing).

pub mod crate_files;
pub mod readme_graph;
pub mod readme_testing;
pub mod runtime_files;
pub mod stamp;
pub mod user_code;
pub mod workspace;

use std::path::{Path, PathBuf};

use crate::check::{Checked, check_file};
use crate::diagnostics::Report;
use crate::write::crate_files::{CrateFile, NewOptions, generated_files, new_crate_files_with};
use crate::write::runtime_files::{COPY_DIR, RuntimeSource, VENDOR_DIR, VENDOR_LIST};

/// What went wrong while writing.
#[derive(Debug)]
pub enum WriteError {
    /// The spec is invalid (the report has located diagnostics).
    Spec(Report),
    /// Bad usage or an I/O problem, with a message.
    Usage(String),
}

impl From<Report> for WriteError {
    fn from(r: Report) -> Self {
        if r.is_io() {
            WriteError::Usage(
                r.diagnostics
                    .iter()
                    .map(|d| d.message.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        } else {
            WriteError::Spec(r)
        }
    }
}

/// Writes `contents` to `path` unless the file already holds exactly these bytes. Returns
/// whether it wrote.
pub fn write_if_changed(path: &Path, contents: &str) -> std::io::Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == contents.as_bytes()) {
        return Ok(false);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, contents)?;
    Ok(true)
}

/// True for a valid cargo package name.
fn valid_crate_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The result of `new`.
pub struct Created {
    /// The crate's directory.
    pub dir: PathBuf,
    /// The files written, relative to `dir`.
    pub files: Vec<String>,
    /// Warnings of the spec check.
    pub report: Report,
    /// The root of the cargo workspace the crate lies in (its release profile belongs there).
    pub workspace: Option<PathBuf>,
}

/// `mcpgen new`: checks the spec and writes a new crate into `dir` (default `./<name>`), which
/// must not exist or be empty. Inside a cargo workspace the crate gets no `[profile.release]`
/// (cargo reads profiles from the workspace root only).
/// Where `mcpgen new NAME [--dir DIR]` creates the crate: DIR, else `./NAME`.
pub fn new_crate_dir(name: &str, dir: Option<&Path>) -> PathBuf {
    dir.map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(name))
}

pub fn new_crate(
    name: &str,
    spec: &Path,
    dir: Option<&Path>,
    options: &NewOptions,
) -> Result<Created, WriteError> {
    if !valid_crate_name(name) {
        return Err(WriteError::Usage(format!(
            "`{name}` is not a valid crate name (a letter, then letters, digits, `-` or `_`)"
        )));
    }
    let dir = new_crate_dir(name, dir);
    if let Ok(mut entries) = std::fs::read_dir(&dir)
        && entries.next().is_some()
    {
        return Err(WriteError::Usage(format!(
            "{} is not empty; `mcpgen new` only writes into a new or empty directory (use `mcpgen generate` in an existing crate)",
            dir.display()
        )));
    }
    let checked = check_file(spec)?;
    let spec_text = checked.loaded.source.text().to_string();
    let workspace = workspace::enclosing_workspace(&dir);
    let options = NewOptions {
        in_workspace: workspace.is_some(),
        ..options.clone()
    };
    let files = new_crate_files_with(&checked, name, "spec.json", &spec_text, &options)
        .map_err(WriteError::Usage)?;
    write_all(&dir, &files)?;
    Ok(Created {
        dir,
        files: files.into_iter().map(|f| f.path).collect(),
        report: checked.report,
        workspace,
    })
}

fn write_all(dir: &Path, files: &[CrateFile]) -> Result<Vec<String>, WriteError> {
    let mut written = Vec::new();
    for f in files {
        let path = dir.join(&f.path);
        match write_if_changed(&path, &f.contents) {
            Ok(true) => written.push(f.path.clone()),
            Ok(false) => {}
            Err(e) => {
                return Err(WriteError::Usage(format!(
                    "cannot write {}: {e}",
                    path.display()
                )));
            }
        }
    }
    Ok(written)
}

/// The crate mcpgen generates that `start` is in, as cargo finds a package: the nearest
/// directory from `start` upward whose `Cargo.toml` has `[package.metadata.mcpgen] spec`.
/// `Err` says where the search began.
pub fn find_crate(start: &Path) -> Result<PathBuf, WriteError> {
    let start = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
    for dir in start.ancestors() {
        if dir.join("Cargo.toml").is_file() && metadata_of(dir).is_ok() {
            return Ok(dir.to_path_buf());
        }
    }
    Err(WriteError::Usage(format!(
        "no crate made by mcpgen in {} or above it (none of their Cargo.toml files has `[package.metadata.mcpgen] spec`); give the crate with --crate DIR or the spec file",
        start.display()
    )))
}

/// Where a crate keeps its spec: `[package.metadata.mcpgen] spec` of its `Cargo.toml`.
pub fn spec_path_of(crate_dir: &Path) -> Result<PathBuf, WriteError> {
    metadata_of(crate_dir).map(|m| m.spec)
}

/// What a crate's `Cargo.toml` says of how mcpgen generates its code.
pub struct Metadata {
    /// The spec (`[package.metadata.mcpgen] spec`), joined to the crate's directory.
    pub spec: PathBuf,
    /// build.rs mode (`[package.metadata.mcpgen] mode = "build-rs"`).
    pub build_rs: bool,
    /// Where the runtime crate comes from ([`runtime_files::source_of`]).
    pub runtime: RuntimeSource,
    /// The manifest's text.
    pub manifest: String,
}

/// The crate's recorded spec path, its mode and where its runtime comes from.
pub fn metadata_of(crate_dir: &Path) -> Result<Metadata, WriteError> {
    let manifest = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| WriteError::Usage(format!("cannot read {}: {e}", manifest.display())))?;
    let value: toml::Table = text
        .parse()
        .map_err(|e| WriteError::Usage(format!("{} is not valid TOML: {e}", manifest.display())))?;
    let mcpgen_key = |key: &str| {
        value
            .get("package")
            .and_then(|p| p.get("metadata"))
            .and_then(|m| m.get("mcpgen"))
            .and_then(|m| m.get(key))
            .and_then(|s| s.as_str())
    };
    let spec = mcpgen_key("spec").ok_or_else(|| {
            WriteError::Usage(format!(
                "{} has no `[package.metadata.mcpgen] spec = \"...\"`: is this a crate made by `mcpgen new`?",
                manifest.display()
            ))
        })?;
    Ok(Metadata {
        spec: crate_dir.join(spec),
        build_rs: mcpgen_key("mode") == Some("build-rs"),
        runtime: runtime_files::source_of(&value),
        manifest: text,
    })
}

/// The result of `generate`.
pub struct Generated {
    /// Files whose bytes would change (or did), relative to the crate, with old and new text.
    pub changes: Vec<Change>,
    /// The README's resolver graph redrawn between its markers (or to be): written with the
    /// changes, but documentation, which `--check` does not fail on.
    pub docs: Vec<Change>,
    /// Notes about user code (kept methods of removed tools, changed signatures).
    pub notes: Vec<String>,
    /// Warnings of the spec check.
    pub report: Report,
}

/// One file `generate` changes.
pub struct Change {
    /// Relative path.
    pub path: String,
    /// Current text (empty when the file is new).
    pub old: String,
    /// Text after generation (empty when the file is removed).
    pub new: String,
    /// What the change is, for people.
    pub what: String,
    /// True when the file is removed: a runtime file mcpgen wrote that the runtime no longer has.
    pub remove: bool,
}

/// What `generate` plans for the crate in `crate_dir`, from its recorded spec.
pub struct Planned {
    /// The checked spec.
    pub checked: Checked,
    /// The files mcpgen owns.
    pub files: Vec<CrateFile>,
    /// A crate made with the runtime's copy: its `Cargo.toml` moved to the vendored runtime
    /// crate, and what that changed.
    pub moved: Option<user_code::ManifestMove>,
}

/// The files `generate` owns for the crate in `crate_dir`, from its recorded spec.
pub fn planned_files(crate_dir: &Path) -> Result<Planned, WriteError> {
    let Metadata {
        spec,
        build_rs,
        runtime,
        manifest,
    } = metadata_of(crate_dir)?;
    let checked = check_file(&spec)?;
    let spec_name = spec
        .strip_prefix(crate_dir)
        .unwrap_or(&spec)
        .to_string_lossy()
        .replace('\\', "/");
    let text = checked.loaded.source.text().to_string();
    // A crate that carries the runtime's copy moves to the vendored runtime crate.
    let (runtime, moved) = match runtime {
        RuntimeSource::Copy => {
            let moved =
                user_code::move_to_runtime_crate(&manifest, &checked).map_err(WriteError::Usage)?;
            (RuntimeSource::Vendored, Some(moved))
        }
        other => (other, None),
    };
    let files = generated_files(&checked, &spec_name, &text, &runtime, build_rs)
        .map_err(WriteError::Usage)?;
    Ok(Planned {
        checked,
        files,
        moved,
    })
}

/// `mcpgen generate`: rewrites the files mcpgen owns and appends stubs for new tools and
/// resolvers to the user's code. With `write == false`, only reports what would change.
/// Generated files edited by hand, or written by a newer mcpgen, are left alone unless `force`.
/// `renames` (`OLD`, `NEW`) rename the user's methods of tools, resolvers or prompts renamed in
/// the spec (see [`user_code::plan`]); one that cannot be made is an error, and nothing is written.
pub fn generate(
    crate_dir: &Path,
    write: bool,
    force: bool,
    renames: &[(String, String)],
) -> Result<Generated, WriteError> {
    let Planned {
        checked,
        files,
        moved,
    } = planned_files(crate_dir)?;
    let vendored = VendorList::read(crate_dir);
    let mut changes = Vec::new();
    let mut refused = Vec::new();
    for f in &files {
        let old = std::fs::read_to_string(crate_dir.join(&f.path)).ok();
        if old.as_deref() == Some(f.contents.as_str()) {
            continue;
        }
        let existing = match f.path.strip_prefix(VENDOR_DIR) {
            Some(_) => vendored.existing(&f.path, old.as_deref()),
            None => stamp::existing(old.as_deref()),
        };
        match existing {
            stamp::Existing::Edited if !force => refused.push(match f.path.strip_prefix(VENDOR_DIR) {
                Some(_) => format!(
                    "{} was edited by hand (its content no longer matches the hash {VENDOR_DIR}/{VENDOR_LIST} records)",
                    f.path
                ),
                None => format!(
                    "{} was edited by hand (its content no longer matches its stamp)",
                    f.path
                ),
            }),
            stamp::Existing::Newer(v) if !force => refused.push(format!(
                "{} was generated by mcpgen {v}, newer than this mcpgen {}",
                f.path,
                env!("CARGO_PKG_VERSION")
            )),
            _ => changes.push(Change {
                path: f.path.clone(),
                old: old.unwrap_or_default(),
                new: f.contents.clone(),
                what: "generated".into(),
                remove: false,
            }),
        }
    }
    let (stale_copy, kept_copy) = stale_copy_files(crate_dir, &files);
    changes.extend(stale_copy);
    let still_vendored = files.iter().any(|f| f.path.starts_with(VENDOR_DIR));
    let (stale_vendored, kept_vendored) = vendored.stale(crate_dir, &files, still_vendored);
    changes.extend(stale_vendored);
    if !refused.is_empty() {
        return Err(WriteError::Usage(format!(
            "not regenerating: {}; move your changes to src/handlers.rs (or update mcpgen), or pass --force to overwrite",
            refused.join("; ")
        )));
    }
    let mut notes = Vec::new();
    let moved_now = moved.is_some();
    if let Some(moved) = moved {
        changes.push(Change {
            path: "Cargo.toml".into(),
            old: moved.old,
            new: moved.new,
            what: "moved from the runtime's copy to the runtime crate".into(),
            remove: false,
        });
        notes.push(moved.note);
    }
    // Said once, with the move (the folder is the user's from then on).
    if moved_now && !kept_copy.is_empty() {
        notes.push(format!(
            "{COPY_DIR}/ keeps {} (edited by hand, or not written by mcpgen): the crate no longer \
             compiles that folder (it depends on the runtime crate); move what you need elsewhere \
             and delete the folder",
            kept_copy.join(", ")
        ));
    }
    if !kept_vendored.is_empty() {
        notes.push(match still_vendored {
            true => format!(
                "{VENDOR_DIR}/ keeps {} (edited by hand), which this runtime no longer has: the \
                 vendored crate does not compile it; delete it once you have what you need",
                kept_vendored.join(", ")
            ),
            false => format!(
                "{VENDOR_DIR}/ keeps {} (edited by hand): the crate no longer builds the vendored \
                 runtime (Cargo.toml names another source); delete the folder once you have what \
                 you need from it",
                kept_vendored.join(", ")
            ),
        });
    }
    let user = user_code::plan(crate_dir, &checked, renames).map_err(WriteError::Usage)?;
    notes.extend(user.notes);
    for e in user.edits {
        let stubs =
            (!e.added.is_empty()).then(|| format!("stubs added for {}", e.added.join(", ")));
        changes.push(Change {
            path: e.path,
            old: e.old,
            new: e.new,
            what: (e.renamed.into_iter().chain(stubs))
                .collect::<Vec<_>>()
                .join("; "),
            remove: false,
        });
    }
    // The README is the user's, but for the resolver graph between its markers.
    let mut docs = Vec::new();
    let readme_path = crate_dir.join("README.md");
    if let Ok(readme) = std::fs::read_to_string(&readme_path)
        && let Some(redrawn) = readme_graph::redrawn(&readme, &checked.model)
    {
        docs.push(Change {
            path: "README.md".into(),
            old: readme,
            new: redrawn,
            what: "the resolver graph between its markers redrawn".into(),
            remove: false,
        });
    }
    if write {
        for c in changes.iter().chain(&docs) {
            let path = crate_dir.join(&c.path);
            if c.remove {
                std::fs::remove_file(&path)
            } else {
                write_if_changed(&path, &c.new).map(drop)
            }
            .map_err(|e| WriteError::Usage(format!("cannot write {}: {e}", path.display())))?;
        }
        // The runtime's copy, once moved out, and a vendored runtime that lost files leave no
        // empty directory.
        if changes.iter().any(|c| c.remove) {
            let _ = std::fs::remove_dir(crate_dir.join(COPY_DIR));
            remove_empty_dirs(&crate_dir.join(VENDOR_DIR));
            if let Some(vendor) = Path::new(VENDOR_DIR).parent() {
                let _ = std::fs::remove_dir(crate_dir.join(vendor));
            }
        }
    }
    Ok(Generated {
        changes,
        docs,
        notes,
        report: checked.report,
    })
}

/// Removes the empty directories under `dir`, deepest first, and `dir` itself once empty.
fn remove_empty_dirs(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_empty_dirs(&entry.path());
        }
    }
    // Fails, as it should, while anything is left in it.
    let _ = std::fs::remove_dir(dir);
}

/// The files in `src/generated/runtime/` (the runtime's copy of crates made by an earlier
/// mcpgen) that mcpgen wrote, stamped and untouched since: all of them go once the crate
/// depends on the runtime crate. Anything else there (edited, or not mcpgen's) is left alone,
/// and named (the second list) so that a note can say so.
fn stale_copy_files(crate_dir: &Path, files: &[CrateFile]) -> (Vec<Change>, Vec<String>) {
    let Ok(entries) = std::fs::read_dir(crate_dir.join(COPY_DIR)) else {
        return (Vec::new(), Vec::new());
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".rs"))
        .collect();
    names.sort();
    let mut stale = Vec::new();
    let mut kept = Vec::new();
    for name in names {
        let path = format!("{COPY_DIR}/{name}");
        if files.iter().any(|f| f.path == path) {
            continue;
        }
        let Ok(old) = std::fs::read_to_string(crate_dir.join(&path)) else {
            kept.push(name);
            continue;
        };
        match stamp::existing(Some(&old)) {
            stamp::Existing::Pristine(_) => stale.push(Change {
                path,
                old,
                new: String::new(),
                what: "removed: the crate depends on the runtime crate".into(),
                remove: true,
            }),
            _ => kept.push(name),
        }
    }
    (stale, kept)
}

/// What the vendored runtime's [`VENDOR_LIST`] recorded of the files mcpgen wrote there.
struct VendorList {
    /// `(path relative to the crate, hash)`.
    files: Vec<(String, String)>,
    /// The mcpgen version that wrote them.
    version: Option<String>,
}

impl VendorList {
    fn read(crate_dir: &Path) -> Self {
        let text = std::fs::read_to_string(crate_dir.join(VENDOR_DIR).join(VENDOR_LIST))
            .unwrap_or_default();
        let version = text
            .lines()
            .next()
            .and_then(|l| l.split_once(", vendored by mcpgen "))
            .and_then(|(_, rest)| rest.split(':').next())
            .map(str::to_string);
        let files = runtime_files::vendor_list(&text)
            .into_iter()
            .map(|(path, hash)| (format!("{VENDOR_DIR}/{path}"), hash))
            .collect();
        VendorList { files, version }
    }

    /// The state of the vendored file `path` whose current text is `old`: written by mcpgen
    /// and untouched (its hash is the one recorded), edited, or written by a newer mcpgen. The
    /// list itself is mcpgen's whenever the files it lists are.
    fn existing(&self, path: &str, old: Option<&str>) -> stamp::Existing {
        let Some(old) = old else {
            return stamp::Existing::Missing;
        };
        if let Some(v) = &self.version
            && stamp::is_newer(v, env!("CARGO_PKG_VERSION"))
        {
            return stamp::Existing::Newer(v.clone());
        }
        if path == format!("{VENDOR_DIR}/{VENDOR_LIST}") {
            return stamp::Existing::Missing;
        }
        let hash = stamp::short_hash(old.as_bytes());
        match self.files.iter().any(|(p, h)| p == path && *h == hash) {
            true => stamp::Existing::Missing,
            false => stamp::Existing::Edited,
        }
    }

    /// The files it lists that mcpgen no longer writes, untouched since: removed. When the crate
    /// no longer vendors the runtime (`still_vendored` false: its `Cargo.toml` names another
    /// source), the list goes too. The listed files edited by hand are kept and named (the
    /// second list, paths relative to the vendored crate).
    fn stale(
        &self,
        crate_dir: &Path,
        files: &[CrateFile],
        still_vendored: bool,
    ) -> (Vec<Change>, Vec<String>) {
        let what = match still_vendored {
            true => "removed: no longer part of the runtime",
            false => "removed: the runtime is no longer vendored",
        };
        let mut stale = Vec::new();
        let mut kept = Vec::new();
        for (path, hash) in &self.files {
            if files.iter().any(|f| &f.path == path) {
                continue;
            }
            let Ok(old) = std::fs::read_to_string(crate_dir.join(path)) else {
                continue;
            };
            if stamp::short_hash(old.as_bytes()) == *hash {
                stale.push(Change {
                    path: path.clone(),
                    old,
                    new: String::new(),
                    what: what.into(),
                    remove: true,
                });
            } else {
                kept.push(
                    path.trim_start_matches(&format!("{VENDOR_DIR}/"))
                        .to_string(),
                );
            }
        }
        let list = format!("{VENDOR_DIR}/{VENDOR_LIST}");
        if !still_vendored && let Ok(old) = std::fs::read_to_string(crate_dir.join(&list)) {
            stale.push(Change {
                path: list,
                old,
                new: String::new(),
                what: what.into(),
                remove: true,
            });
        }
        (stale, kept)
    }
}

/// A unified diff of one change, for `--dry-run`.
pub fn diff(change: &Change) -> String {
    similar::TextDiff::from_lines(&change.old, &change.new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{}", change.path), &format!("b/{}", change.path))
        .to_string()
}
