//! The `Stress` MCP server. mcpgen wrote this file once; it is yours to change.

mod generated;

mod handlers;

fn main() -> std::process::ExitCode {
    generated::serve(handlers::Stress::default())
}
