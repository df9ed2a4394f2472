//! The `mcpgen` command line: a thin face over the library.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand, ValueEnum};

use crate::check::check_file;
use crate::diagnostics::Report;

/// Generate typed Rust MCP servers, with resolvers and elicitation, from a spec.
#[derive(Debug, Parser)]
#[command(name = "mcpgen", version, about, after_help = EXAMPLES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// `mcpgen --help`'s examples.
const EXAMPLES: &str = "Examples:
  mcpgen new bookshop --spec spec.json     a crate in ./bookshop (then: cd bookshop && cargo run)
  mcpgen check                             the spec of the crate here (or above), with every problem
  mcpgen generate                          regenerate that crate's code after a spec edit
  mcpgen dev -- --bind 127.0.0.1:8000      regenerate, rebuild and restart on every edit (HTTP)
  mcpgen graph > graph.mmd                 its resolver graph (Mermaid; --format dot for Graphviz)
  mcpgen completions bash > ~/.local/share/bash-completion/completions/mcpgen";

/// `OLD=NEW` of `generate --rename`.
fn parse_rename(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((old, new)) if !old.is_empty() && !new.is_empty() && !new.contains('=') => {
            Ok((old.to_string(), new.to_string()))
        }
        _ => Err(format!("`{s}` is not OLD=NEW (two names joined by `=`)")),
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a spec and report every problem with its location.
    Check {
        /// The spec file (default: the spec of the crate mcpgen made in the current directory
        /// or the nearest one above it).
        spec: Option<PathBuf>,
        /// Output format of the diagnostics.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Print the JSON Schema of the spec format (for `"$schema"` and editor completion).
    Schema {
        /// Write to this file instead of standard output.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Create a new server crate from a spec.
    New {
        /// The crate (and package) name.
        name: String,
        /// The spec file; it is copied into the crate as `spec.json`.
        #[arg(long)]
        spec: PathBuf,
        /// Where to create the crate (default: `./<NAME>`); must be new or empty.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Generate the code from a build script into OUT_DIR instead of src/generated/.
        #[arg(long)]
        build_rs: bool,
        /// With --build-rs: the mcpgen library the build script uses, at this path (default:
        /// this mcpgen's own source when it has one outside a registry, else this version from
        /// the registry).
        #[arg(long, requires = "build_rs")]
        mcpgen_path: Option<PathBuf>,
        /// Where the runtime crate `mcpgen-runtime` (pinned to this mcpgen's version) comes
        /// from: `vendored` (default; a copy in vendor/mcpgen-runtime/, which builds with no
        /// `mcpgen-runtime` in any registry) or `registry` (crates.io, once it is published).
        #[arg(long, value_enum, conflicts_with = "runtime_path")]
        runtime: Option<RuntimeChoice>,
        /// Depend on the runtime crate at this path (mcpgen's `runtime/`) instead: several
        /// crates then compile it once.
        #[arg(long)]
        runtime_path: Option<PathBuf>,
    },
    /// Regenerate the code mcpgen owns in a crate, from the spec its Cargo.toml records.
    Generate {
        /// The crate's directory (default: the crate mcpgen made in the current directory or
        /// the nearest one above it, as cargo finds a package).
        #[arg(long = "crate")]
        crate_dir: Option<PathBuf>,
        /// Write nothing; exit 1 when any generated file would change (for CI).
        #[arg(long)]
        check: bool,
        /// Write nothing; show the changes as a diff.
        #[arg(long)]
        dry_run: bool,
        /// Overwrite generated files even when edited by hand or written by a newer mcpgen.
        #[arg(long)]
        force: bool,
        /// A tool, resolver or prompt renamed in the spec from OLD to NEW: its method in your
        /// code is renamed (the body kept) instead of a stub being added (repeatable).
        #[arg(long, value_name = "OLD=NEW", value_parser = parse_rename)]
        rename: Vec<(String, String)>,
    },
    /// Print the resolved plan of a valid spec as JSON: each tool's arguments, resolved
    /// parameters and resolvers in run order.
    Plan {
        /// The spec file (default: the spec of the crate here or above).
        spec: Option<PathBuf>,
    },
    /// Draw the resolver graph of a valid spec: tools, prompts, the resolvers each runs, what
    /// each asks, and where every value comes from (arguments, the request context, the
    /// verified caller, other resolvers).
    Graph {
        /// The spec file (default: the spec of the crate here or above).
        spec: Option<PathBuf>,
        /// Mermaid (renders in GitHub and GitLab Markdown) or Graphviz dot.
        #[arg(long, value_enum, default_value_t = GraphFormat::Mermaid)]
        format: GraphFormat,
        /// Only this tool or prompt, its resolvers numbered in run order.
        #[arg(long, value_name = "NAME")]
        tool: Option<String>,
    },
    /// The edit loop: regenerate, build and (re)start the server, then again on every change
    /// of the spec or the crate's own code; diagnostics are printed in place and the last
    /// good server keeps running. Ctrl-C stops it.
    Dev {
        /// The crate's directory (default: the crate here or above).
        #[arg(long = "crate")]
        crate_dir: Option<PathBuf>,
        /// The server's arguments, after `--` (`--transport http` is added unless they name a
        /// transport).
        #[arg(last = true)]
        server_args: Vec<String>,
    },
    /// Print a shell completion script for mcpgen.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// `graph --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// A Mermaid flowchart.
    Mermaid,
    /// A Graphviz digraph.
    Dot,
}

/// Where `new` takes the runtime crate from (`--runtime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuntimeChoice {
    /// A copy of the whole crate in vendor/mcpgen-runtime/.
    Vendored,
    /// The registry (crates.io), by version.
    Registry,
}

/// Diagnostic output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people: excerpts of the spec with the offending item marked.
    Human,
    /// For tools: a JSON array.
    Json,
}

/// Exit code: the spec is invalid.
pub const EXIT_INVALID: u8 = 1;
/// Exit code: usage or I/O error.
pub const EXIT_USAGE: u8 = 2;

fn is_io(report: &Report) -> bool {
    report.is_io()
}

/// Set once standard output's reader has gone away.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output. A reader that went away (`mcpgen plan spec.json | head`)
/// ends the output quietly, as it ends `cat`'s: nothing more is written, no message, and the
/// command finishes with the status it has without its output (0 for `plan` and `schema`; 1 for
/// `check` of an invalid spec or `generate --check` of stale code). Any other failure to write
/// is an I/O error: `Err(2)`, said on standard error.
fn out(text: &str) -> Result<(), ExitCode> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => {
            err(&format!("error: cannot write to standard output: {e}\n"));
            Err(ExitCode::from(EXIT_USAGE))
        }
    }
}

/// Writes `text` to standard error, if it can (a closed standard error silences the message,
/// it does not end the command).
fn err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

fn print_report(report: &Report, format: Format) -> Result<(), ExitCode> {
    match format {
        Format::Json => out(&report.render_json()),
        Format::Human => {
            err(&report.render_human());
            Ok(())
        }
    }
}

/// Runs a parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    match run_command(cli) {
        Ok(code) | Err(code) => code,
    }
}

/// [`run`], where `Err` ends the command early (standard output failing).
fn run_command(cli: Cli) -> Result<ExitCode, ExitCode> {
    Ok(match cli.command {
        Command::Check { spec, format } => {
            let spec = match spec_or_crate(spec) {
                Ok(spec) => spec,
                Err(e) => return write_error(e),
            };
            match check_file(&spec) {
                Ok(checked) => {
                    if format == Format::Json || !checked.report.diagnostics.is_empty() {
                        print_report(&checked.report, format)?;
                    } else {
                        err(&format!("{}: ok\n", spec.display()));
                    }
                    ExitCode::SUCCESS
                }
                Err(report) => {
                    print_report(&report, format)?;
                    ExitCode::from(if is_io(&report) {
                        EXIT_USAGE
                    } else {
                        EXIT_INVALID
                    })
                }
            }
        }
        Command::Schema { output } => {
            let text = crate::spec::format::format_schema_text();
            match output {
                Some(path) => match std::fs::write(&path, text) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        err(&format!("error: cannot write {}: {e}\n", path.display()));
                        ExitCode::from(EXIT_USAGE)
                    }
                },
                None => {
                    out(&text)?;
                    ExitCode::SUCCESS
                }
            }
        }
        Command::New {
            name,
            spec,
            dir,
            build_rs,
            mcpgen_path,
            runtime,
            runtime_path,
        } => {
            use crate::write::runtime_files::RuntimeSource;
            // Paths in the new crate's Cargo.toml are relative to it, as `cargo add --path`
            // writes them.
            let crate_dir = crate::write::new_crate_dir(&name, dir.as_deref());
            // In build.rs mode the build script's mcpgen depends on a runtime of its own: the
            // crate takes the same one (two packages `mcpgen-runtime` of one version from two
            // paths cannot share a lockfile).
            let mcpgen_dir = match build_rs {
                true => mcpgen_path.or_else(own_source),
                false => None,
            };
            let runtime_path = runtime_path.or_else(|| {
                let dir = mcpgen_dir.as_ref()?.join("runtime");
                (runtime.is_none() && dir.join("Cargo.toml").exists()).then_some(dir)
            });
            let runtime = match (runtime_path.map(runtime_crate_at).transpose(), runtime) {
                (Ok(Some(path)), _) => RuntimeSource::Path(path_value(path, &crate_dir)),
                (Ok(None), Some(RuntimeChoice::Registry)) => RuntimeSource::Registry,
                (Ok(None), _) if build_rs && mcpgen_dir.is_none() => RuntimeSource::Registry,
                (Ok(None), _) => RuntimeSource::Vendored,
                (Err(message), _) => {
                    err(&format!("error: {message}\n"));
                    return Ok(ExitCode::from(EXIT_USAGE));
                }
            };
            let version = env!("CARGO_PKG_VERSION");
            let options = crate::write::crate_files::NewOptions {
                build_rs,
                mcpgen_dependency: mcpgen_dir.map(|p| {
                    let path = toml::Value::String(path_value(p, &crate_dir)).to_string();
                    format!("{{ version = \"={version}\", path = {path} }}")
                }),
                runtime,
                // `new_crate` finds out whether the crate lands in a workspace.
                ..Default::default()
            };
            match crate::write::new_crate(&name, &spec, dir.as_deref(), &options) {
                Ok(created) => {
                    if !created.report.diagnostics.is_empty() {
                        print_report(&created.report, Format::Human)?;
                    }
                    if let Some(root) = &created.workspace {
                        err(&format!(
                            "note: {} is inside the cargo workspace at {}: add it to the workspace's `members` if it is not one yet; cargo reads profiles from the workspace root only, so the crate has no `[profile.release]` (for serving, put `lto = \"fat\"` and `codegen-units = 1` in the root's)\n",
                            created.dir.display(),
                            root.display()
                        ));
                    }
                    err(&format!(
                        "created {} ({} files); next: cd {} && cargo run\n",
                        created.dir.display(),
                        created.files.len(),
                        created.dir.display()
                    ));
                    ExitCode::SUCCESS
                }
                Err(e) => write_error(e)?,
            }
        }
        Command::Generate {
            crate_dir,
            check,
            dry_run,
            force,
            rename,
        } => {
            let crate_dir = match crate_dir {
                Some(dir) => dir,
                None => match crate::write::find_crate(Path::new(".")) {
                    Ok(dir) => dir,
                    Err(e) => return write_error(e),
                },
            };
            match crate::write::generate(&crate_dir, !(check || dry_run), force, &rename) {
                Ok(generated) => {
                    if !generated.report.diagnostics.is_empty() {
                        print_report(&generated.report, Format::Human)?;
                    }
                    let verb = if check || dry_run {
                        "would change"
                    } else {
                        "changed"
                    };
                    for c in generated.changes.iter().chain(&generated.docs) {
                        out(&format!("{verb}: {} ({})\n", c.path, c.what))?;
                        if dry_run {
                            out(&crate::write::diff(c))?;
                        }
                    }
                    for n in &generated.notes {
                        err(&format!("note: {n}\n"));
                    }
                    if generated.changes.is_empty() && generated.docs.is_empty() {
                        err(&format!(
                            "{}: generated code is up to date\n",
                            crate_dir.display()
                        ));
                    }
                    if check && !generated.changes.is_empty() {
                        ExitCode::from(EXIT_INVALID)
                    } else {
                        ExitCode::SUCCESS
                    }
                }
                Err(e) => write_error(e)?,
            }
        }
        Command::Graph { spec, format, tool } => {
            let spec = match spec_or_crate(spec) {
                Ok(spec) => spec,
                Err(e) => return write_error(e),
            };
            match check_file(&spec) {
                Ok(checked) => {
                    let syntax = match format {
                        GraphFormat::Mermaid => crate::emit::diagram::Syntax::Mermaid,
                        GraphFormat::Dot => crate::emit::diagram::Syntax::Dot,
                    };
                    match crate::emit::diagram::render(&checked.model, syntax, tool.as_deref()) {
                        Ok(text) => {
                            out(&text)?;
                            ExitCode::SUCCESS
                        }
                        Err(message) => {
                            err(&format!(
                                "error: {message}
"
                            ));
                            ExitCode::from(EXIT_USAGE)
                        }
                    }
                }
                Err(report) => {
                    print_report(&report, Format::Human)?;
                    ExitCode::from(if is_io(&report) {
                        EXIT_USAGE
                    } else {
                        EXIT_INVALID
                    })
                }
            }
        }
        Command::Dev {
            crate_dir,
            server_args,
        } => {
            let crate_dir = match crate_dir {
                Some(dir) => dir,
                None => match crate::write::find_crate(Path::new(".")) {
                    Ok(dir) => dir,
                    Err(e) => return write_error(e),
                },
            };
            let options = crate::dev::DevOptions {
                crate_dir,
                server_args,
            };
            match crate::dev::run(&options) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => write_error(e)?,
            }
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "mcpgen", &mut script);
            out(&String::from_utf8_lossy(&script))?;
            ExitCode::SUCCESS
        }
        Command::Plan { spec } => {
            let spec = match spec_or_crate(spec) {
                Ok(spec) => spec,
                Err(e) => return write_error(e),
            };
            match check_file(&spec) {
                Ok(checked) => {
                    let text =
                        serde_json::to_string_pretty(&checked.model.to_json()).unwrap_or_default();
                    out(&format!("{text}\n"))?;
                    ExitCode::SUCCESS
                }
                Err(report) => {
                    print_report(&report, Format::Human)?;
                    ExitCode::from(if is_io(&report) {
                        EXIT_USAGE
                    } else {
                        EXIT_INVALID
                    })
                }
            }
        }
    })
}

/// `spec`, or the spec of the crate mcpgen made in the current directory or above it.
fn spec_or_crate(spec: Option<PathBuf>) -> Result<PathBuf, crate::write::WriteError> {
    match spec {
        Some(spec) => Ok(spec),
        None => crate::write::find_crate(Path::new("."))
            .and_then(|dir| crate::write::spec_path_of(&dir)),
    }
}

fn write_error(e: crate::write::WriteError) -> Result<ExitCode, ExitCode> {
    Ok(match e {
        crate::write::WriteError::Spec(report) => {
            print_report(&report, Format::Human)?;
            ExitCode::from(EXIT_INVALID)
        }
        crate::write::WriteError::Usage(message) => {
            err(&format!("error: {message}\n"));
            ExitCode::from(EXIT_USAGE)
        }
    })
}

/// `path` as the manifest of the crate in `crate_dir` names it (`/`-separated): relative to that
/// directory (symbolic links resolved on both sides), so the crate and what it depends on can
/// move together; as given when either cannot be resolved.
fn path_value(path: PathBuf, crate_dir: &Path) -> String {
    let relative = std::fs::canonicalize(&path)
        .ok()
        .zip(resolved(crate_dir))
        .and_then(|(path, base)| pathdiff::diff_paths(path, base));
    relative
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// `dir` absolute with symbolic links resolved, also when it does not exist yet (its deepest
/// existing ancestor resolved, the rest of it appended); `None` when a part that does not exist
/// is `..` or `.`.
fn resolved(dir: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(dir).ok()?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(resolved) = existing.canonicalize() {
            return Some(rest.iter().rev().fold(resolved, |p, part| p.join(part)));
        }
        rest.push(existing.file_name()?);
        existing = existing.parent()?;
    }
}

/// This mcpgen's own source directory, when it has one that is not a registry's copy (built
/// from a checkout, or by `cargo install --path`): what a build.rs-mode crate depends on by
/// default, so it builds with no `mcpgen` in any registry.
fn own_source() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let in_registry = dir
        .components()
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w[0].as_os_str() == "registry" && w[1].as_os_str() == "src");
    (!in_registry && dir.join("Cargo.toml").exists()).then_some(dir)
}

/// `path` when it is the runtime crate's directory (a `Cargo.toml` of the package
/// `mcpgen-runtime`), else what is wrong, for `--runtime-path`.
fn runtime_crate_at(path: PathBuf) -> Result<PathBuf, String> {
    use crate::write::runtime_files::CRATE_NAME;
    let manifest = path.join("Cargo.toml");
    let name = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("--runtime-path: cannot read {}: {e}", manifest.display()))?
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| Some(t.get("package")?.get("name")?.as_str()?.to_string()));
    match name.as_deref() {
        Some(CRATE_NAME) => Ok(path),
        _ => Err(format!(
            "--runtime-path: {} is not the manifest of the crate `{CRATE_NAME}` (give the `runtime/` directory of mcpgen's repository)",
            manifest.display()
        )),
    }
}
