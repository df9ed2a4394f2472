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

#[cfg(feature = "server")]
mod args;
#[cfg(feature = "server")]
mod ask;
#[cfg(feature = "server")]
mod auth;
#[cfg(feature = "bus")]
mod bus;
#[cfg(feature = "server")]
mod capability;
#[cfg(feature = "server")]
mod completion;
#[cfg(feature = "server")]
mod context;
#[cfg(feature = "server")]
mod errors;
#[cfg(feature = "server")]
mod form;
#[cfg(feature = "server")]
mod guard;
#[cfg(feature = "server")]
mod http;
#[cfg(feature = "testing")]
mod inprocess;
#[cfg(feature = "server")]
mod jsonrpc;
#[cfg(feature = "server")]
mod notify;
#[cfg(feature = "auth")]
mod oauth;
#[cfg(feature = "server")]
mod operation;
#[cfg(feature = "server")]
mod output;
#[cfg(feature = "server")]
mod principal;
#[cfg(feature = "server")]
mod prompts;
#[cfg(feature = "server")]
mod resources;
#[cfg(feature = "server")]
mod round;
#[cfg(feature = "server")]
mod router;
#[cfg(feature = "server")]
mod schema;
#[cfg(feature = "server")]
mod serve;
#[cfg(feature = "server")]
mod server;
#[cfg(feature = "server")]
mod sessions;
#[cfg(feature = "server")]
mod state;
#[cfg(feature = "server")]
mod stdio;
#[cfg(feature = "server")]
mod telemetry;
#[cfg(any(feature = "auth", feature = "telemetry"))]
mod tls;
#[cfg(feature = "server")]
mod tools;

#[cfg(feature = "source")]
pub mod source;

/// The test kit: the real server in process, clients of both eras over stdio and HTTP, scripted
/// answers and a record of every question (feature `testing`; see `testing.rs`).
#[cfg(feature = "testing")]
pub mod testing;

#[cfg(all(test, feature = "server"))]
mod tests;

#[cfg(feature = "server")]
pub use args::{IntArg, int_arg};
#[cfg(feature = "server")]
pub use ask::{Ask, AskKind, Elicitation, Roots, Sampling};
#[cfg(feature = "server")]
pub use auth::{AuthSettings, DEFAULT_LEEWAY, Introspection, Rejection, TokenVerifier, Verifying};
#[cfg(feature = "server")]
pub use completion::complete;
#[cfg(feature = "server")]
pub use context::{Context, Era, verify_request_state};
#[cfg(feature = "server")]
pub use errors::{Outcome, ToolError};
#[cfg(feature = "server")]
pub use form::Form;
#[cfg(feature = "server")]
pub use notify::{Notifier, notifier};
#[cfg(feature = "auth")]
pub use oauth::OAuthVerifier;
#[cfg(feature = "server")]
pub use operation::{Operations, ToolOperations};
#[cfg(feature = "server")]
pub use output::{content_output, object_output, wrapped_output};
#[cfg(feature = "server")]
pub use principal::{Access, Principal, unauthenticated};
#[cfg(feature = "server")]
pub use prompts::{
    MessageContent, MessageDef, MessageRole, PromptArgDef, PromptCatalog, PromptDef, prompt_output,
    unknown_prompt,
};
#[cfg(feature = "server")]
pub use resources::{
    Lookup, ResourceBody, ResourceCatalog, ResourceDef, StaticContent, TemplateDef, template_vars,
};
#[cfg(feature = "server")]
pub use round::{Round, Slot};
#[cfg(feature = "server")]
pub use router::{DEFAULT_HOSTS, DEFAULT_ORIGINS, DEFAULT_PATH, RouterOptions, Shutdown};
#[cfg(feature = "server")]
pub use serve::serve;
#[cfg(feature = "server")]
pub use server::{Capabilities, ConfigError, Generated, McpServer, ServerMeta, server_config};
#[cfg(feature = "server")]
pub use state::{
    StatePolicy, Verified, invalid_state_error, reload_keys as reload_request_state_keys,
};
#[cfg(feature = "telemetry")]
pub use telemetry::SpanLayer;
#[cfg(feature = "server")]
pub use telemetry::{Telemetry, resolve};
#[cfg(feature = "server")]
pub use tools::{Catalog, ToolDef, unknown_tool};

/// rmcp model types that handler code commonly needs (sampling and roots results, content,
/// prompt messages, log levels).
///
/// Sampling, roots and logging types are aliased here so that user code naming them does not
/// trigger rmcp's SEP-2577 deprecation warnings.
#[cfg(feature = "server")]
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

/// The crates generated code names besides `serde` and `serde_json` (which typify's types
/// derive from), re-exported so that a generated crate's `[dependencies]` stay short, as
/// `tonic::codegen` does for tonic's generated code.
#[cfg(feature = "server")]
pub mod codegen {
    pub use ::axum;
    pub use ::rmcp;
}
