//! The `Stress` MCP server. mcpgen wrote this file once; it is yours to change.

// mcpgen owns `src/generated/` (`mcpgen generate` rewrites it); rustfmt leaves it alone.
#[rustfmt::skip]
mod generated;

mod handlers;

fn main() -> std::process::ExitCode {
    generated::serve(handlers::Stress::default())
}
