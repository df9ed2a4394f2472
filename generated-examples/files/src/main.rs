//! The Files MCP server (user-owned: mcpgen writes this file once).

// mcpgen owns `src/generated/` (`mcpgen generate` rewrites it); rustfmt leaves it alone.
#[rustfmt::skip]
mod generated;
mod handlers;

fn main() -> std::process::ExitCode {
    generated::serve(handlers::Files::default())
}
