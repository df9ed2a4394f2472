//! The mcpgen runtime: the fixed, spec-independent part of every generated crate.
//!
//! This is the crate `mcpgen-runtime`. Every crate mcpgen writes depends on it (vendored in
//! `vendor/mcpgen-runtime/` by default, a path, or the registry) and names it
//! `generated::runtime`. The spec-dependent code mcpgen writes (`generated/mod.rs`) calls into
//! it; user code (`handlers.rs`) sees [`Context`], [`Ask`], [`Outcome`], [`ToolError`],
//! [`Form`], [`ResourceBody`], [`Notifier`] and [`model`]. See `runtime/README.md` in the
//! mcpgen repository for the API.
//!
//! The modules, by concern: `server` (the complete server, its HTTP router and the command
//! line), `transport` (the HTTP front, stdio, legacy sessions, JSON-RPC validity), `catalog`
//! (tools, prompts, resources, completions, schemas and arguments), `asking` (resolvers'
//! questions, rounds, forms and the request's [`Context`]), `authorization` (settings, the
//! OAuth verifier, the HTTP front's guard, principals and access), `operations` (the wrapper
//! every request runs in, and telemetry), `notify` (change notifications, and the bus across
//! replicas); the small shared ones: `errors`, `state` (sealed `requestState`),
//! `capabilities`, `request` (what a request carries in its extensions), `shutdown` and `tls`;
//! and the public [`testing`] (feature `testing`: the test kit) and `source` (feature `source`:
//! this crate's own files, for mcpgen). They import one another without cycles (mcpgen's
//! `tests/check_imports.rs`).

#[cfg(feature = "server")]
mod asking;
#[cfg(feature = "server")]
mod authorization;
#[cfg(feature = "server")]
mod capabilities;
#[cfg(feature = "server")]
mod catalog;
#[cfg(feature = "server")]
mod errors;
#[cfg(feature = "server")]
mod notify;
#[cfg(feature = "server")]
mod operations;
#[cfg(feature = "server")]
mod request;
#[cfg(feature = "server")]
mod scope;
#[cfg(feature = "server")]
mod server;
#[cfg(feature = "server")]
mod shutdown;
#[cfg(feature = "server")]
mod state;
#[cfg(any(feature = "auth", feature = "telemetry"))]
mod tls;
#[cfg(feature = "server")]
mod transport;

#[cfg(feature = "source")]
pub mod source;

/// The test kit: the real server in process, clients of both eras over stdio and HTTP, scripted
/// answers and a record of every question (feature `testing`; see `src/testing/`).
#[cfg(feature = "testing")]
pub mod testing;

#[cfg(all(test, feature = "server"))]
mod tests;

#[cfg(feature = "server")]
pub use asking::{
    ask::{Ask, AskKind, Elicitation, Roots, Sampling},
    context::{Context, Era, verify_request_state},
    form::Form,
    round::{Round, Slot},
};
#[cfg(feature = "auth")]
pub use authorization::oauth::OAuthVerifier;
#[cfg(feature = "server")]
pub use authorization::{
    AuthSettings, DEFAULT_LEEWAY, Introspection, Rejection, TokenVerifier, Verifying,
    principal::{Access, Principal, unauthenticated},
};
#[cfg(feature = "server")]
pub use capabilities::Capabilities;
#[cfg(feature = "server")]
pub use catalog::{
    args::{IntArg, int_arg},
    completion::complete,
    output::{content_output, object_output, wrapped_output},
    prompts::{
        MessageContent, MessageDef, MessageRole, PromptArgDef, PromptCatalog, PromptDef,
        prompt_output, unknown_prompt,
    },
    resources::{
        Lookup, ResourceBody, ResourceCatalog, ResourceDef, StaticContent, TemplateDef,
        template_vars,
    },
    tools::{Catalog, ToolDef, unknown_tool},
};
#[cfg(feature = "server")]
pub use errors::{Outcome, ToolError};
#[cfg(feature = "server")]
pub use notify::Notifier;
#[cfg(feature = "telemetry")]
pub use operations::telemetry::SpanLayer;
#[cfg(feature = "server")]
pub use operations::{
    operation::{Operations, ToolOperations},
    telemetry::{Telemetry, resolve},
};
#[cfg(feature = "server")]
pub use server::{
    ConfigError, Generated, McpServer, ServerMeta,
    router::{DEFAULT_HOSTS, DEFAULT_ORIGINS, DEFAULT_PATH, RouterOptions},
    serve::serve,
    server_config,
};
#[cfg(feature = "server")]
pub use shutdown::Shutdown;
#[cfg(feature = "server")]
pub use state::{
    StatePolicy, Verified, invalid_state_error, reload_keys as reload_request_state_keys,
};

/// rmcp model types that handler code commonly needs (sampling and roots results, content,
/// prompt messages, log levels).
///
/// Sampling, roots and logging types are aliased here so that user code naming them does not
/// trigger rmcp's SEP-2577 deprecation warnings.
// The aliases name rmcp's deprecated types: the one place that does, for user code.
#[allow(deprecated)]
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
    /// The parameters of `sampling/createMessage` (for [`Ask::sample_with`](crate::Ask::sample_with)).
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
