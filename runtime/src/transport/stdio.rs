//! The stdio transport: newline-delimited JSON-RPC read and written here rather than by rmcp's
//! `AsyncRwTransport`, so that every line gets the answer JSON-RPC 2.0 requires.
//!
//! rmcp's transport ignores a line that is not JSON (a request left unanswered), answers any
//! other undecodable line with `-32600` without an `id` member, drops lines with invalid UTF-8,
//! and ends the session when a notification or response arrives before its handshake has
//! chosen an era. Here each line is decoded once into rmcp's model; a line that does not decode,
//! or decodes as a custom request, is answered from [`jsonrpc`] and the session goes on
//! with the next line. Invalid UTF-8 is decoded with replacement characters first, as the
//! Python SDK's stdin does.
//!
//! The connection's principal (the command line's from `MCP_PRINCIPAL_*`; a test client's own)
//! goes into every request's extensions, where [`principal::caller`](crate::authorization::principal::caller) finds it: each
//! connection has its own.

use std::{borrow::Cow, sync::Arc};

use rmcp::{
    RoleServer,
    model::{
        ClientJsonRpcMessage, ClientRequest, Extensions, GetExtensions, GetMeta, ProtocolVersion,
        ServerJsonRpcMessage,
    },
    transport::Transport,
};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::{
    authorization::principal::Principal,
    capabilities::Capabilities,
    catalog::numbers,
    request::Raw,
    scope::Scope,
    transport::jsonrpc::{self, Rejection, Verdict},
};

/// The longest line taken (as rmcp's transport): a longer one is answered with `-32600` and
/// skipped without being buffered.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// rmcp's [`Transport`] over a reader and a writer of JSON-RPC lines.
pub(crate) struct Lines<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    write: Arc<tokio::sync::Mutex<W>>,
    capabilities: Capabilities,
    /// The server's `requestState` policy, for the boundary of requests rmcp cannot decode.
    scope: Scope,
    supported: Vec<ProtocolVersion>,
    /// rmcp's handshake is over. Until then rmcp takes only requests (anything else ends the
    /// session), so notifications and responses are dropped: an `initialize` or a request
    /// with a complete 2026-07-28 envelope at a supported version ends it, as in rmcp.
    opened: bool,
    /// `initialize` opened this connection in the handshake era: a request carrying the
    /// 2026-07-28 envelope is refused (rmcp would serve it statelessly).
    legacy: bool,
    /// The connection's caller (scopes are not enforced on stdio), put into every request's
    /// extensions.
    principal: Option<Arc<Principal>>,
    /// More values every request's extensions get (the test kit's question log).
    extensions: Extensions,
}

/// One bounded read.
enum Read {
    Line,
    Oversized,
    Eof,
}

impl<R, W> Lines<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport for a connection whose caller is `principal` (`None`: anonymous).
    pub fn new(
        read: R,
        write: W,
        capabilities: Capabilities,
        scope: Scope,
        supported: Vec<ProtocolVersion>,
        principal: Option<Arc<Principal>>,
    ) -> Self {
        Lines {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            write: Arc::new(tokio::sync::Mutex::new(write)),
            capabilities,
            scope,
            supported,
            opened: false,
            legacy: false,
            principal,
            extensions: Extensions::new(),
        }
    }

    /// Also puts (clones of) `extensions` into every request's extensions (the test kit's
    /// log of questions).
    #[cfg(feature = "testing")]
    pub fn with_extensions(mut self, extensions: Extensions) -> Self {
        self.extensions = extensions;
        self
    }

    /// Reads one line into `self.line` without letting it grow past [`MAX_LINE`]. Cancel-safe
    /// (rmcp polls `receive` in a `select!`): a partial line stays in `self.line`.
    async fn read_line(&mut self) -> std::io::Result<Read> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Read::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut result = None;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
            } else if self.line.len() + take > MAX_LINE {
                self.line.clear();
                self.discarding = newline.is_none();
                result = Some(Read::Oversized);
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    result = Some(Read::Line);
                }
            }
            self.read.consume(take);
            if let Some(result) = result {
                return Ok(result);
            }
        }
    }

    /// Writes `rejection` as a line (in a task of its own: `receive` may be cancelled).
    fn answer(&self, rejection: &Rejection) {
        tracing::debug!(id = %rejection.id, error = ?rejection.error, "rejected a message");
        let mut line = rejection.to_json();
        line.push(b'\n');
        let write = Arc::clone(&self.write);
        tokio::spawn(async move {
            let mut write = write.lock().await;
            if let Err(e) = write_line(&mut *write, &line).await {
                tracing::error!("cannot write to stdout: {e}");
            }
        });
    }

    /// What to do with a decoded message: `None` when it was answered or dropped here.
    fn admit(
        &mut self,
        message: ClientJsonRpcMessage,
        line: &[u8],
    ) -> Option<ClientJsonRpcMessage> {
        match &message {
            ClientJsonRpcMessage::Request(request) => {
                if jsonrpc::is_list_without_params(&request.request)
                    && jsonrpc::serves(self.capabilities, request.request.method())
                    && let Some(error) = jsonrpc::list_params_error(line)
                {
                    let id = serde_json::to_value(&request.id).unwrap_or_default();
                    self.answer(&Rejection { id, error });
                    return None;
                }
                let initialize = matches!(request.request, ClientRequest::InitializeRequest(_));
                if self.legacy
                    && !initialize
                    && request
                        .request
                        .get_meta()
                        .contains_key(jsonrpc::ENVELOPE_KEY)
                {
                    let id = serde_json::to_value(&request.id).unwrap_or_default();
                    let error = jsonrpc::envelope_on_legacy_connection();
                    self.answer(&Rejection { id, error });
                    return None;
                }
                self.legacy |= initialize && !self.opened;
                if let ClientRequest::CustomRequest(custom) = &request.request {
                    let error = jsonrpc::custom_request_error(
                        &custom.method,
                        custom.params.as_ref(),
                        custom.get_meta().protocol_version().is_some(),
                        self.capabilities,
                        &self.scope.policy(),
                        self.principal.as_deref(),
                    );
                    let id = serde_json::to_value(&request.id).unwrap_or_default();
                    self.answer(&Rejection { id, error });
                    return None;
                }
                if !self.opened {
                    self.opened = match &request.request {
                        ClientRequest::InitializeRequest(_) => true,
                        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
                        other => {
                            let meta = other.get_meta();
                            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                                .is_empty()
                                && meta
                                    .protocol_version()
                                    .is_some_and(|v| self.supported.contains(&v))
                        }
                    };
                }
                Some(message)
            }
            _ if !self.opened => {
                tracing::debug!("dropped a notification or response sent before the handshake");
                None
            }
            _ => Some(message),
        }
    }

    /// Decodes one line (without its newline): the message for rmcp, or `None` when the line
    /// was answered or dropped here.
    fn decode(&mut self, line: &[u8]) -> Option<ClientJsonRpcMessage> {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(line) {
            return self.admit(message, line);
        }
        let line: Cow<'_, [u8]> = match String::from_utf8_lossy(line) {
            Cow::Borrowed(_) => Cow::Borrowed(line),
            Cow::Owned(replaced) => {
                tracing::debug!("a line with invalid UTF-8: decoded with replacement characters");
                if let Ok(message) = serde_json::from_str::<ClientJsonRpcMessage>(&replaced) {
                    return self.admit(message, replaced.as_bytes());
                }
                Cow::Owned(replaced.into_bytes())
            }
        };
        match jsonrpc::diagnose(
            &line,
            self.capabilities,
            &self.scope.policy(),
            self.principal.as_deref(),
        ) {
            Verdict::Reject(rejection) | Verdict::Undetermined(rejection) => {
                self.answer(&rejection);
            }
            Verdict::Drop(what) => tracing::debug!("dropped {what}"),
        }
        None
    }
}

async fn write_line<W: AsyncWrite + Unpin>(write: &mut W, line: &[u8]) -> std::io::Result<()> {
    write.write_all(line).await?;
    write.flush().await
}

impl<R, W> Transport<RoleServer> for Lines<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut write = write.lock().await;
            write_line(&mut *write, &line).await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.read_line().await {
                Ok(Read::Line) => {}
                Ok(Read::Oversized) => {
                    self.answer(&Rejection::invalid_request(
                        serde_json::Value::Null,
                        "the message is longer than 16 MiB",
                    ));
                    continue;
                }
                Ok(Read::Eof) => return None,
                Err(e) => {
                    tracing::error!("cannot read stdin: {e}");
                    return None;
                }
            }
            let mut line = std::mem::take(&mut self.line);
            let content = line.strip_suffix(b"\n").unwrap_or(&line);
            let content = content.strip_suffix(b"\r").unwrap_or(content);
            let decoded = if content.iter().all(u8::is_ascii_whitespace) {
                None
            } else {
                self.decode(content)
            };
            // A call whose arguments hold a float keeps its text, for the numbers as sent
            // (`catalog/numbers.rs`).
            let raw = match &decoded {
                Some(ClientJsonRpcMessage::Request(request)) => match &request.request {
                    ClientRequest::CallToolRequest(call)
                        if numbers::holds_float(call.params.arguments.as_ref()) =>
                    {
                        Some(Raw(axum::body::Bytes::copy_from_slice(content)))
                    }
                    _ => None,
                },
                _ => None,
            };
            line.clear();
            self.line = line;
            if let Some(mut message) = decoded {
                if let ClientJsonRpcMessage::Request(request) = &mut message {
                    let extensions = request.request.extensions_mut();
                    if let Some(principal) = &self.principal {
                        extensions.insert(Arc::clone(principal));
                    }
                    if let Some(raw) = raw {
                        extensions.insert(raw);
                    }
                    if !self.extensions.is_empty() {
                        extensions.extend(self.extensions.clone());
                    }
                }
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.write.lock().await.shutdown().await
    }
}
