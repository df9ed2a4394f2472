//! The `mcpgen` command line: a thin face over the library.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::check::check_file;
use crate::diagnostics::Report;

/// Generate typed Rust MCP servers, with resolvers and elicitation, from a spec.
#[derive(Debug, Parser)]
#[command(name = "mcpgen", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate a spec and report every problem with its location.
    Check {
        /// The spec file.
        spec: PathBuf,
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
        /// With --build-rs: depend on the mcpgen library at this path instead of crates.io.
        #[arg(long, requires = "build_rs")]
        mcpgen_path: Option<PathBuf>,
    },
    /// Regenerate the code mcpgen owns in a crate, from the spec its Cargo.toml records.
    Generate {
        /// The crate's directory.
        #[arg(long = "crate", default_value = ".")]
        crate_dir: PathBuf,
        /// Write nothing; exit 1 when any generated file would change (for CI).
        #[arg(long)]
        check: bool,
        /// Write nothing; show the changes as a diff.
        #[arg(long)]
        dry_run: bool,
        /// Overwrite generated files even when edited by hand or written by a newer mcpgen.
        #[arg(long)]
        force: bool,
    },
    /// Print the resolved plan of a valid spec as JSON: each tool's arguments, resolved
    /// parameters and resolvers in run order.
    Plan {
        /// The spec file.
        spec: PathBuf,
    },
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

fn print_report(report: &Report, format: Format) {
    let text = match format {
        Format::Human => report.render_human(),
        Format::Json => report.render_json(),
    };
    match format {
        Format::Json => print!("{text}"),
        Format::Human => eprint!("{text}"),
    }
}

/// Runs a parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Check { spec, format } => match check_file(&spec) {
            Ok(checked) => {
                if format == Format::Json || !checked.report.diagnostics.is_empty() {
                    print_report(&checked.report, format);
                } else {
                    eprintln!("{}: ok", spec.display());
                }
                ExitCode::SUCCESS
            }
            Err(report) => {
                print_report(&report, format);
                ExitCode::from(if is_io(&report) {
                    EXIT_USAGE
                } else {
                    EXIT_INVALID
                })
            }
        },
        Command::Schema { output } => {
            let text = crate::spec::format::format_schema_text();
            match output {
                Some(path) => match std::fs::write(&path, text) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("error: cannot write {}: {e}", path.display());
                        ExitCode::from(EXIT_USAGE)
                    }
                },
                None => {
                    let _ = std::io::stdout().write_all(text.as_bytes());
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
        } => {
            let options = crate::write::crate_files::NewOptions {
                build_rs,
                mcpgen_dependency: mcpgen_path.map(|p| {
                    let p = std::fs::canonicalize(&p).unwrap_or(p);
                    format!(
                        "{{ path = {} }}",
                        serde_json::to_string(&p.to_string_lossy()).unwrap_or_default()
                    )
                }),
                // `new_crate` finds out whether the crate lands in a workspace.
                ..Default::default()
            };
            match crate::write::new_crate(&name, &spec, dir.as_deref(), &options) {
                Ok(created) => {
                    if !created.report.diagnostics.is_empty() {
                        print_report(&created.report, Format::Human);
                    }
                    if let Some(root) = &created.workspace {
                        eprintln!(
                            "note: {} is inside the cargo workspace at {}: add it to the workspace's `members` if it is not one yet; cargo reads profiles from the workspace root only, so the crate has no `[profile.release]` (for serving, put `lto = \"fat\"` and `codegen-units = 1` in the root's)",
                            created.dir.display(),
                            root.display()
                        );
                    }
                    eprintln!(
                        "created {} ({} files); next: cd {} && cargo run",
                        created.dir.display(),
                        created.files.len(),
                        created.dir.display()
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => write_error(e),
            }
        }
        Command::Generate {
            crate_dir,
            check,
            dry_run,
            force,
        } => match crate::write::generate(&crate_dir, !(check || dry_run), force) {
            Ok(generated) => {
                if !generated.report.diagnostics.is_empty() {
                    print_report(&generated.report, Format::Human);
                }
                let verb = if check || dry_run {
                    "would change"
                } else {
                    "changed"
                };
                for c in &generated.changes {
                    println!("{verb}: {} ({})", c.path, c.what);
                    if dry_run {
                        print!("{}", crate::write::diff(c));
                    }
                }
                for n in &generated.notes {
                    eprintln!("note: {n}");
                }
                if generated.changes.is_empty() {
                    eprintln!("{}: generated code is up to date", crate_dir.display());
                }
                if check && !generated.changes.is_empty() {
                    ExitCode::from(EXIT_INVALID)
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(e) => write_error(e),
        },
        Command::Plan { spec } => match check_file(&spec) {
            Ok(checked) => {
                let text =
                    serde_json::to_string_pretty(&checked.model.to_json()).unwrap_or_default();
                println!("{text}");
                ExitCode::SUCCESS
            }
            Err(report) => {
                print_report(&report, Format::Human);
                ExitCode::from(if is_io(&report) {
                    EXIT_USAGE
                } else {
                    EXIT_INVALID
                })
            }
        },
    }
}

fn write_error(e: crate::write::WriteError) -> ExitCode {
    match e {
        crate::write::WriteError::Spec(report) => {
            print_report(&report, Format::Human);
            ExitCode::from(EXIT_INVALID)
        }
        crate::write::WriteError::Usage(message) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
