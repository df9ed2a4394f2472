//! mcpgen: generate typed Rust MCP servers, with resolvers and elicitation, from a spec.
//!
//! The pipeline, one module per stage:
//! [`source`] (text with positions) -> [`spec`] (typed model, format schema) ->
//! [`validate`] (every generation-time error, over the resolver [`graph`]) -> [`model`] (the
//! typed model every emitter reads) -> [`emit`] (tokens and files) -> [`write`] (the crate on
//! disk) -> [`cli`], [`builder`]. [`samples`] makes the example arguments of the tests `new`
//! writes.

pub mod builder;
pub mod check;
pub mod cli;
pub mod dev;
pub mod diagnostics;
pub mod emit;
pub mod forms;
pub mod graph;
pub mod integers;
pub mod model;
pub mod names;
pub mod pointer;
pub mod refs;
pub mod samples;
pub mod source;
pub mod spec;
pub mod validate;
pub mod write;

pub use builder::Builder;
pub use write::runtime_files::RuntimeSource;
