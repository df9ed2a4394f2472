//! The transports a server is served over: the HTTP front ([`http`]) in front of rmcp's
//! Streamable HTTP service with its legacy sessions ([`sessions`]), the stdio line transport
//! ([`stdio`]), and the JSON-RPC 2.0 validity both share ([`jsonrpc`]).

pub(crate) mod http;
pub(crate) mod jsonrpc;
pub(crate) mod sessions;
pub(crate) mod stdio;
