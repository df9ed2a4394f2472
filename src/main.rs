use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    mcpgen::cli::run(mcpgen::cli::Cli::parse())
}
