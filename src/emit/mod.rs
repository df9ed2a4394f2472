//! Emission: Rust types through typify, then (later stages) the server code.

pub mod types;
