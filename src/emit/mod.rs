//! Emission: Rust types through typify, then (later stages) the server code.

pub mod crate_files;
pub mod docs;
pub mod fields;
pub mod print;
pub mod runtime_files;
pub mod server;
pub mod service;
pub mod types;
pub mod typing;
