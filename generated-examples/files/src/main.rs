//! The Files MCP server (user-owned: mcpgen writes this file once).

// mcpgen owns `src/generated/` (`mcpgen generate` rewrites it); rustfmt leaves it alone.
#[rustfmt::skip]
mod generated;
mod handlers;

/// Every request allocates and frees many small values: mimalloc serves them faster than the
/// system allocator (remove this and the `mimalloc` dependency to use the system one).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    generated::serve(handlers::Files::default())
}
