use std::process::ExitCode;

use clap::Parser;

/// Generating code for large specs allocates millions of small token and syntax-tree nodes;
/// mimalloc handles that churn far better than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    mcpgen::cli::run(mcpgen::cli::Cli::parse())
}
