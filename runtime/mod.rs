//! The mcpgen runtime: the fixed, spec-independent part of every generated crate.
//!
//! This is the crate `mcpgen-runtime`, and every crate mcpgen writes carries a copy of it as the
//! module `generated::runtime` (`src/generated/runtime/`, without the tests), so a generated
//! crate builds with crates.io crates alone. The files refer to each other by `super::`, which
//! names the crate root here and `generated::runtime` in the copy. The spec-dependent code next
//! to the copy (`generated/mod.rs`) calls into it; user code (`handlers.rs`) sees [`Context`],
//! [`Ask`], [`Outcome`], [`ToolError`], [`Form`], [`ResourceBody`], [`Notifier`] and [`model`].
//! See `runtime/README.md` in the mcpgen repository for the API.
// Not every generated crate uses every helper (a server without sampling never calls
// `Ask::sample`), so unused items are expected here. Sampling and roots are deprecated in rmcp
// (SEP-2577) but are exactly what legacy connections use.
// A crate from before the test kit may not declare the `testing` feature its copy names.
#![allow(dead_code, unused_imports, deprecated, unexpected_cfgs)]

mod args;
mod ask;
mod auth;
mod bus;
mod capability;
mod completion;
mod context;
mod errors;
mod form;
mod guard;
mod http;
#[cfg(feature = "testing")]
mod inprocess;
mod jsonrpc;
mod notify;
mod oauth;
mod operation;
mod output;
mod principal;
mod prompts;
mod resources;
mod round;
mod router;
mod schema;
mod serve;
mod server;
mod sessions;
mod state;
mod stdio;
mod telemetry;
mod tools;

/// The test kit: the real server in process, clients of both eras over stdio and HTTP, scripted
/// answers and a record of every question (feature `testing`; see `testing.rs`).
#[cfg(feature = "testing")]
pub mod testing;

#[cfg(test)]
mod tests;

pub use args::{IntArg, int_arg};
pub use ask::{Ask, AskKind, Elicitation, Roots, Sampling};
pub use auth::{AuthSettings, DEFAULT_LEEWAY, Introspection, Rejection, TokenVerifier, Verifying};
pub use completion::complete;
pub use context::{Context, Era, verify_request_state};
pub use errors::{Outcome, ToolError};
pub use form::Form;
pub use notify::{Notifier, notifier};
pub use oauth::OAuthVerifier;
pub use operation::{Operations, ToolOperations};
pub use output::{content_output, object_output, wrapped_output};
pub use principal::{Access, Principal, unauthenticated};
pub use prompts::{
    MessageContent, MessageDef, MessageRole, PromptArgDef, PromptCatalog, PromptDef, prompt_output,
    unknown_prompt,
};
pub use resources::{
    Lookup, ResourceBody, ResourceCatalog, ResourceDef, StaticContent, TemplateDef, template_vars,
};
pub use round::{Round, Slot};
pub use router::{DEFAULT_HOSTS, DEFAULT_ORIGINS, DEFAULT_PATH, RouterOptions, Shutdown};
pub use serve::serve;
pub use server::{Capabilities, ConfigError, Generated, McpServer, ServerMeta, server_config};
pub use state::{
    StatePolicy, Verified, invalid_state_error, reload_keys as reload_request_state_keys,
};
#[cfg(feature = "telemetry")]
pub use telemetry::SpanLayer;
pub use telemetry::{Telemetry, resolve};
pub use tools::{Catalog, ToolDef, unknown_tool};

/// rmcp model types that handler code commonly needs (sampling and roots results, content,
/// prompt messages, log levels).
///
/// Sampling, roots and logging types are aliased here so that user code naming them does not
/// trigger rmcp's SEP-2577 deprecation warnings.
pub mod model {
    pub use rmcp::model::{
        ContentBlock, EmbeddedResource, GetPromptResult, ImageContent, PromptMessage,
        ResourceContents, Role, Root,
    };

    /// The role of a [`PromptMessage`] (`Role::User`, `Role::Assistant`).
    pub type PromptMessageRole = rmcp::model::Role;
    /// The level of a log message (`ctx.log(LoggingLevel::Info, ..)`), lowest first.
    ///
    /// The same levels as rmcp's (deprecated by SEP-2577) `rmcp::model::LoggingLevel`, without
    /// its deprecation warnings; `ctx.log` takes either.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum LoggingLevel {
        /// `debug`
        Debug,
        /// `info`
        Info,
        /// `notice`
        Notice,
        /// `warning`
        Warning,
        /// `error`
        Error,
        /// `critical`
        Critical,
        /// `alert`
        Alert,
        /// `emergency`
        Emergency,
    }

    impl From<LoggingLevel> for rmcp::model::LoggingLevel {
        fn from(level: LoggingLevel) -> Self {
            match level {
                LoggingLevel::Debug => Self::Debug,
                LoggingLevel::Info => Self::Info,
                LoggingLevel::Notice => Self::Notice,
                LoggingLevel::Warning => Self::Warning,
                LoggingLevel::Error => Self::Error,
                LoggingLevel::Critical => Self::Critical,
                LoggingLevel::Alert => Self::Alert,
                LoggingLevel::Emergency => Self::Emergency,
            }
        }
    }

    /// The client's answer to `sampling/createMessage` (what an `asks: "sample"` resolver yields).
    pub type CreateMessageResult = rmcp::model::CreateMessageResult;
    /// The parameters of `sampling/createMessage` (for [`Ask::sample_with`](super::Ask::sample_with)).
    pub type CreateMessageRequestParams = rmcp::model::CreateMessageRequestParams;
    /// One message of a sampling request (`SamplingMessage::user_text(..)`).
    pub type SamplingMessage = rmcp::model::SamplingMessage;
    /// The client's answer to `roots/list` (what an `asks: "roots"` resolver yields).
    pub type ListRootsResult = rmcp::model::ListRootsResult;

    /// A user message with text (`PromptMessage::new_text(Role::User, text)`).
    pub fn user_text(text: impl Into<String>) -> PromptMessage {
        PromptMessage::new_text(Role::User, text)
    }

    /// An assistant message with text.
    pub fn assistant_text(text: impl Into<String>) -> PromptMessage {
        PromptMessage::new_text(Role::Assistant, text)
    }

    /// The text of a sampling answer: its first content block, when that is text.
    pub fn sampled_text(result: &CreateMessageResult) -> Option<&str> {
        result
            .message
            .content
            .first()
            .and_then(|block| block.as_text())
            .map(|text| text.text.as_str())
    }
}
