//! The `Operations` MCP server as a library: the generated code and your handlers. `src/main.rs`
//! serves it; the tests in `tests/` call it through `generated::testing`. mcpgen wrote
//! this file once; it is yours to change.

#[rustfmt::skip]
pub mod generated;

pub mod handlers;
