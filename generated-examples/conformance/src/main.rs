//! The `Conformance` MCP server. mcpgen wrote this file once; it is yours to change.

#[rustfmt::skip]
mod generated;

mod handlers;

fn main() -> std::process::ExitCode {
    generated::serve(handlers::Conformance::default())
}
