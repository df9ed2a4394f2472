//! The spec: its typed model, the format's JSON Schema, and loading a file into the model.

pub mod asks;
pub mod format;
pub mod load;
pub mod model;

pub use load::{LoadedSpec, load, load_str};
pub use model::*;
