//! What a server serves, as mcpgen emits it: the tool, prompt and resource catalogs
//! ([`tools`], [`prompts`], [`resources`]), completions ([`completion`]), and how a tool's
//! arguments come in ([`args`]) and its result goes out ([`output`]), each checked against its
//! JSON Schema ([`schema`]).

pub(crate) mod args;
pub(crate) mod completion;
pub(crate) mod numbers;
pub(crate) mod output;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod schema;
pub(crate) mod tools;
