//! The Probe MCP server (user-owned: mcpgen writes this file once).

mod generated;
mod handlers;

fn main() -> std::process::ExitCode {
    generated::serve(handlers::Probe::default())
}
