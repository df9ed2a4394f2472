//! The `Operations` MCP server. mcpgen wrote this file once; it is yours to change.

/// Every request allocates and frees many small values: mimalloc serves them faster than the
/// system allocator (remove this and the `mimalloc` dependency to use the system one).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Serves the library's server (`src/lib.rs`) from the command line.
fn main() -> std::process::ExitCode {
    operations::generated::serve(operations::handlers::Operations::default())
}
