//! Emission: Rust types through typify, then the generated module's code, one concern per module.

pub mod access;
pub mod calls;
pub mod diagram;
pub mod docs;
pub mod fields;
pub mod handler;
pub mod idents;
pub mod module;
pub mod operations;
pub mod print;
pub mod service;
pub mod signatures;
pub mod stubs;
pub mod tables;
pub mod testing;
pub mod types;
pub mod typing;
