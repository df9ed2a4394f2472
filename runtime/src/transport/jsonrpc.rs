//! JSON-RPC 2.0 validity: the one decision "is this a valid JSON-RPC message for a method this
//! server serves, and if not, what is the answer", shared by the stdio framing (`stdio.rs`), the
//! HTTP front (`http.rs`) and the handler wrapper (`serve.rs`).
//!
//! rmcp decodes every message into its typed model first (the hot path parses once). What it
//! cannot decode it mishandles: on stdio it ignores text that is not JSON and answers everything
//! else with `-32600` without an `id` member; over HTTP it answers `415` with a text body; a known
//! method with missing or ill-typed params decodes as a custom request and gets `-32601`. Those
//! messages come here, and only those, so the diagnosis may parse them again:
//!
//! * not JSON: `-32700 Parse error`, `"id": null`;
//! * a batch (MCP removed JSON-RPC batching in 2025-06-18) or anything but an object: `-32600`,
//!   `"id": null`;
//! * an object that is not a valid request (`jsonrpc` not `"2.0"`, `method` not a string, `id`
//!   neither a string nor an integer): `-32600` with its `id` when the `id` is usable, else null;
//! * a method this server serves with missing or ill-typed params: `-32602` naming the field;
//! * a method it does not serve: `-32601`;
//! * a malformed notification or response: no answer at all (JSON-RPC 2.0 §4.1, §5).

use std::borrow::Cow;

use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Map, Value};

use crate::{
    authorization::principal::Principal,
    capabilities::Capabilities,
    state::{self, StatePolicy},
};

/// What to do with a message rmcp could not take as it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// Nothing found wrong here (rmcp's typed decoding is stricter in some deeper field); the
    /// answer when the message must be rejected all the same.
    Undetermined(Rejection),
    /// Answer with this error.
    Reject(Rejection),
    /// A malformed notification or response: log it, answer nothing.
    Drop(String),
}

/// An error response to send instead of handing the message on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    /// The request's `id`, or `Value::Null` when there is none usable.
    pub id: Value,
    pub error: ErrorData,
}

impl Rejection {
    fn new(id: Value, code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Rejection {
            id,
            error: ErrorData::new(code, message, None),
        }
    }

    /// `-32700 Parse error`, `"id": null` (the text as the Python SDK sends it).
    pub fn parse_error() -> Self {
        Rejection::new(Value::Null, ErrorCode::PARSE_ERROR, "Parse error")
    }

    /// `-32600 Invalid Request` with `data` saying what is wrong.
    pub fn invalid_request(id: Value, reason: &str) -> Self {
        let mut rejection = Rejection::new(id, ErrorCode::INVALID_REQUEST, "Invalid Request");
        rejection.error.data = Some(Value::String(reason.to_string()));
        rejection
    }

    /// The response as one line of JSON (no newline). rmcp's own error type leaves out a
    /// missing `id`; JSON-RPC 2.0 §5 requires `"id": null`, so the line is written here.
    pub fn to_json(&self) -> Vec<u8> {
        let mut line = br#"{"jsonrpc":"2.0","id":"#.to_vec();
        // Neither can fail: a JSON value and rmcp's error type.
        let _ = serde_json::to_writer(&mut line, &self.id);
        line.extend_from_slice(br#","error":"#);
        let _ = serde_json::to_writer(&mut line, &self.error);
        line.push(b'}');
        line
    }
}

/// Whether this server serves `method` (the ones whose capability it declares; which era may
/// call it is decided after decoding, as for well-formed requests).
pub(crate) fn serves(capabilities: Capabilities, method: &str) -> bool {
    match method {
        "initialize"
        | "ping"
        | "server/discover"
        | "tools/list"
        | "tools/call"
        | "subscriptions/listen" => true,
        "prompts/list" | "prompts/get" => capabilities.prompts,
        "resources/list" | "resources/templates/list" | "resources/read" => capabilities.resources,
        "resources/subscribe" | "resources/unsubscribe" => capabilities.resource_subscriptions,
        "completion/complete" => capabilities.completions,
        "logging/setLevel" => capabilities.logging,
        _ => false,
    }
}

/// The methods 2026-07-28 removed: a request carrying its envelope does not find them.
fn removed_in_2026(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "logging/setLevel"
            | "resources/subscribe"
            | "resources/unsubscribe"
    )
}

/// The key whose presence in a request's `params._meta` marks the 2026-07-28 envelope (the key
/// alone, as in the Python SDK's `_has_modern_envelope`: a half-built envelope is still one).
pub(crate) const ENVELOPE_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// `-32600` for a request carrying the 2026-07-28 envelope on a stdio connection that
/// `initialize` opened in the handshake era (the Python SDK's text; it refuses the other era
/// on a connection once the first request has chosen one).
pub(crate) fn envelope_on_legacy_connection() -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_REQUEST,
        "this connection serves the handshake protocol era; requests carrying the 2026-07-28 envelope are not accepted on it",
        None,
    )
}

/// `-32601` for a method this server does not serve (the message as the Python SDK sends it,
/// the method as `data`).
pub(crate) fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        "Method not found",
        Some(Value::String(method.to_string())),
    )
}

/// Diagnoses one message (a stdio line or an HTTP body) that rmcp could not decode, sent by
/// `principal` (whom a `requestState` in it must have been sealed for).
pub(crate) fn diagnose(
    bytes: &[u8],
    capabilities: Capabilities,
    policy: &StatePolicy,
    principal: Option<&Principal>,
) -> Verdict {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return Verdict::Reject(Rejection::parse_error());
    };
    let message = match value {
        Value::Object(message) => message,
        Value::Array(items) if !items.is_empty() => {
            return Verdict::Reject(Rejection::invalid_request(
                Value::Null,
                "batches are not supported (MCP 2025-06-18 removed JSON-RPC batching): send one message at a time",
            ));
        }
        _ => {
            return Verdict::Reject(Rejection::invalid_request(
                Value::Null,
                "a JSON-RPC message must be a JSON object",
            ));
        }
    };
    diagnose_object(&message, capabilities, policy, principal)
}

fn diagnose_object(
    message: &Map<String, Value>,
    capabilities: Capabilities,
    policy: &StatePolicy,
    principal: Option<&Principal>,
) -> Verdict {
    let id = message.get("id");
    let is_response = message.get("method").is_none()
        && (message.contains_key("result") || message.contains_key("error"));
    let Some(id) = id else {
        if is_response {
            return Verdict::Drop("a response without an id".into());
        }
        if message.get("method").is_some_and(Value::is_string) {
            return Verdict::Drop("a malformed notification".into());
        }
        // Neither a request, a notification (which has a `method`) nor a response: JSON-RPC's
        // Invalid Request, with a null id since none can be read.
        return Verdict::Reject(Rejection::invalid_request(
            Value::Null,
            "a JSON-RPC message needs a string 'method' (or, for a response, an 'id')",
        ));
    };
    if is_response {
        return Verdict::Drop("a malformed response".into());
    }
    let usable = match id {
        Value::String(_) => true,
        Value::Number(n) => n.is_i64() || n.is_u64(),
        _ => false,
    };
    if !usable {
        return Verdict::Reject(Rejection::invalid_request(
            Value::Null,
            "'id' must be a string or an integer",
        ));
    }
    let reject = |reason: &str| Verdict::Reject(Rejection::invalid_request(id.clone(), reason));
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return reject("'jsonrpc' must be \"2.0\"");
    }
    if message.contains_key("result") || message.contains_key("error") {
        return reject("a request carries neither 'result' nor 'error'");
    }
    let method = match message.get("method") {
        None => return reject("'method' is required"),
        Some(Value::String(method)) => method.as_str(),
        Some(_) => return reject("'method' must be a string"),
    };
    let params = match message.get("params") {
        None | Some(Value::Null) => None,
        Some(Value::Object(params)) => Some(params),
        Some(_) => {
            return Verdict::Reject(Rejection {
                id: id.clone(),
                error: ErrorData::invalid_params(
                    "Invalid params: 'params' must be an object",
                    None,
                ),
            });
        }
    };
    // The 2026-07-28 envelope: the methods that era removed do not exist for this request.
    let enveloped = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(ENVELOPE_KEY));
    if !serves(capabilities, method) || (enveloped && removed_in_2026(method)) {
        return Verdict::Reject(Rejection {
            id: id.clone(),
            error: method_not_found(method),
        });
    }
    // The `requestState` boundary comes before any other check of the params, as in the
    // Python SDK: a non-string state is the frozen -32602, not a complaint about its type.
    if let Err(error) = state::verify_params(
        policy,
        method,
        message.get("params"),
        principal.map(Principal::binding).as_deref(),
    ) {
        return Verdict::Reject(Rejection {
            id: id.clone(),
            error,
        });
    }
    match params_error(method, params) {
        Some(error) => Verdict::Reject(Rejection {
            id: id.clone(),
            error,
        }),
        None => Verdict::Undetermined(Rejection {
            id: id.clone(),
            error: ErrorData::invalid_params(format!("Invalid params for {method}"), None),
        }),
    }
}

/// The `-32602` for `method` called with `params` (without or with `_meta`), naming the first
/// missing or ill-typed field; `None` when the fields checked here are fine.
pub(crate) fn params_error(method: &str, params: Option<&Map<String, Value>>) -> Option<ErrorData> {
    check_params(method, params)
        .err()
        .map(|reason| ErrorData::invalid_params(format!("Invalid params: {reason}"), None))
}

/// The answer to a request rmcp decoded as a custom one (a method outside its model, or a
/// method it knows whose params did not fit its type): `-32601` for a method this server does
/// not serve, else the frozen `requestState` error when the request carries a bad state, else
/// `-32602` naming the field (generic when no field checked here is wrong:
/// rmcp's type is stricter in some deeper field). `enveloped`: the request carries the
/// 2026-07-28 envelope; `principal`: its verified caller.
pub(crate) fn custom_request_error(
    method: &str,
    params: Option<&Value>,
    enveloped: bool,
    capabilities: Capabilities,
    policy: &StatePolicy,
    principal: Option<&Principal>,
) -> ErrorData {
    if !serves(capabilities, method) || (enveloped && removed_in_2026(method)) {
        return method_not_found(method);
    }
    // The `requestState` boundary first, as in `diagnose_object`.
    if let Err(error) = state::verify_params(
        policy,
        method,
        params,
        principal.map(Principal::binding).as_deref(),
    ) {
        return error;
    }
    let params = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(params)) => Some(params),
        Some(_) => {
            return ErrorData::invalid_params("Invalid params: 'params' must be an object", None);
        }
    };
    params_error(method, params)
        .unwrap_or_else(|| ErrorData::invalid_params(format!("Invalid params for {method}"), None))
}

/// The answer to a list request (`tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list`) that rmcp decoded without params, from the message's bytes:
/// rmcp reads params it cannot decode (a `cursor` that is not a string) as absent, which would
/// list from the start. `-32602` naming the field, or `None` when the params are indeed absent
/// or fine. Only such requests come here (a list request without params is a few bytes), so
/// valid requests are not parsed twice.
pub(crate) fn list_params_error(bytes: &[u8]) -> Option<ErrorData> {
    let message: Value = serde_json::from_slice(bytes).ok()?;
    let params = message.get("params")?.as_object()?;
    params_error("tools/list", Some(params))
}

/// Whether `request` is a list request that rmcp decoded without params (see
/// [`list_params_error`]).
pub(crate) fn is_list_without_params(request: &rmcp::model::ClientRequest) -> bool {
    use rmcp::model::ClientRequest::*;
    match request {
        ListToolsRequest(r) => r.params.is_none(),
        ListPromptsRequest(r) => r.params.is_none(),
        ListResourcesRequest(r) => r.params.is_none(),
        ListResourceTemplatesRequest(r) => r.params.is_none(),
        _ => false,
    }
}

/// The JSON type a field must have.
#[derive(Clone, Copy)]
enum Kind {
    String,
    Object,
}

impl Kind {
    fn matches(self, value: &Value) -> bool {
        match self {
            Kind::String => value.is_string(),
            Kind::Object => value.is_object(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::String => "a string",
            Kind::Object => "an object",
        }
    }
}

/// Checks one field of `object` (at `path`, e.g. `ref.name`).
fn field<'a>(
    object: Option<&'a Map<String, Value>>,
    path: &str,
    key: &str,
    kind: Kind,
    required: bool,
) -> Result<Option<&'a Value>, String> {
    let name = if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    };
    match object.and_then(|o| o.get(key)) {
        None if required => Err(format!("'{name}' is required")),
        None => Ok(None),
        Some(Value::Null) if !required => Ok(None),
        Some(value) if kind.matches(value) => Ok(Some(value)),
        Some(_) => Err(format!("'{name}' must be {}", kind.name())),
    }
}

const LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn check_params(method: &str, params: Option<&Map<String, Value>>) -> Result<(), String> {
    use Kind::{Object, String};
    field(params, "", "_meta", Object, false)?;
    match method {
        "tools/call" | "prompts/get" => {
            field(params, "", "name", String, true)?;
            field(params, "", "arguments", Object, false)?;
            field(params, "", "inputResponses", Object, false)?;
            field(params, "", "requestState", String, false)?;
        }
        "resources/read" => {
            field(params, "", "uri", String, true)?;
            field(params, "", "inputResponses", Object, false)?;
            field(params, "", "requestState", String, false)?;
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            field(params, "", "uri", String, true)?;
        }
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list" => {
            field(params, "", "cursor", String, false)?;
        }
        "completion/complete" => {
            let reference = field(params, "", "ref", Object, true)?.and_then(Value::as_object);
            let kind = field(reference, "ref", "type", String, true)?.and_then(Value::as_str);
            match kind {
                Some("ref/prompt") => {
                    field(reference, "ref", "name", String, true)?;
                }
                Some("ref/resource") => {
                    field(reference, "ref", "uri", String, true)?;
                }
                _ => return Err("'ref.type' must be \"ref/prompt\" or \"ref/resource\"".into()),
            }
            let argument = field(params, "", "argument", Object, true)?.and_then(Value::as_object);
            field(argument, "argument", "name", String, true)?;
            field(argument, "argument", "value", String, true)?;
            let context = field(params, "", "context", Object, false)?.and_then(Value::as_object);
            field(context, "context", "arguments", Object, false)?;
        }
        "logging/setLevel" => {
            let level = field(params, "", "level", String, true)?.and_then(Value::as_str);
            if !level.is_some_and(|level| LEVELS.contains(&level)) {
                return Err(format!("'level' must be one of {}", LEVELS.join(", ")));
            }
        }
        "initialize" => {
            field(params, "", "protocolVersion", String, true)?;
            field(params, "", "capabilities", Object, true)?;
            let info = field(params, "", "clientInfo", Object, true)?.and_then(Value::as_object);
            field(info, "clientInfo", "name", String, true)?;
            field(info, "clientInfo", "version", String, true)?;
        }
        "subscriptions/listen" => {
            field(params, "", "notifications", Object, true)?;
        }
        _ => {}
    }
    Ok(())
}

/// The requests served while the server drains although they belong to no call: the
/// catalog's lists and `ping`. They start no work (the lists are answered from the catalog),
/// and a client may need one to finish a call in flight: the Python SDK client lists the tools
/// after a call's result, to check it against the tool's output schema, before it hands the
/// result over (a refused list fails the call).
pub(crate) const SERVED_WHILE_DRAINING: [&str; 5] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "ping",
];

/// Whether a message that arrives while the server drains is still served: what
/// [`continues_call`] passes, or a request of [`SERVED_WHILE_DRAINING`]. Anything else is new
/// work and is refused.
pub(crate) fn served_while_draining(bytes: &[u8]) -> bool {
    continues_call(bytes) || {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        matches!(
            serde_json::from_slice::<Value>(bytes),
            Ok(Value::Object(message))
                if message.contains_key("id")
                    && message
                        .get("method")
                        .and_then(Value::as_str)
                        .is_some_and(|method| SERVED_WHILE_DRAINING.contains(&method))
        )
    }
}

/// Whether a message that arrives while the server drains belongs to a call already in flight,
/// and so is still served: a response or error (a legacy client's answer to an elicitation,
/// sampling or roots request, which arrives as a new POST), a notification
/// (`notifications/cancelled` among them), or a `tools/call`, `prompts/get` or
/// `resources/read` carrying `requestState` (a 2026-07-28 retry of a round already begun).
/// Anything else (`initialize`, a new call, a body that is not one JSON-RPC object) is new work
/// (but see [`served_while_draining`]).
pub(crate) fn continues_call(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Ok(Value::Object(message)) = serde_json::from_slice::<Value>(bytes) else {
        return false;
    };
    let Some(method) = message.get("method") else {
        // A response: `result` or `error` (a malformed one is dropped unanswered anyway).
        return message.contains_key("result") || message.contains_key("error");
    };
    if !message.contains_key("id") {
        return method.is_string();
    }
    matches!(
        method.as_str(),
        Some("tools/call" | "prompts/get" | "resources/read")
    ) && message
        .get("params")
        .and_then(|params| params.get("requestState"))
        .is_some_and(|state| !state.is_null())
}

/// Whether `bytes` are an `initialize` request as rmcp decodes it (what opens a legacy session;
/// a body rmcp cannot decode is not one: rmcp answers it).
pub(crate) fn is_initialize(bytes: &[u8]) -> bool {
    use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
    matches!(
        serde_json::from_slice::<ClientJsonRpcMessage>(bytes),
        Ok(ClientJsonRpcMessage::Request(request))
            if matches!(request.request, ClientRequest::InitializeRequest(_))
    )
}

/// The `id` of a request's bytes for an answer the front writes itself (a usable string or
/// integer `id`), else `Value::Null`.
pub(crate) fn request_id(bytes: &[u8]) -> Value {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let id = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(mut message)) => message.remove("id"),
        _ => None,
    };
    match id {
        Some(Value::String(id)) => Value::String(id),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Value::Number(n),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_notifications_and_retries_continue_a_call_and_new_work_does_not() {
        let continues = |message: Value| continues_call(message.to_string().as_bytes());
        // A legacy client's answers to the server's own requests.
        assert!(continues(
            json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept"}})
        ));
        assert!(continues(
            json!({"jsonrpc": "2.0", "id": "s-1", "error": {"code": -1, "message": "no"}})
        ));
        // Notifications.
        assert!(continues(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        ));
        assert!(continues(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ));
        // 2026-07-28 retries of a round already begun.
        for method in ["tools/call", "prompts/get", "resources/read"] {
            assert!(
                continues(
                    json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"name": "quote", "requestState": "sealed"}})
                ),
                "{method}"
            );
            assert!(
                !continues(
                    json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"name": "quote"}})
                ),
                "{method}"
            );
            assert!(
                !continues(
                    json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"name": "quote", "requestState": null}})
                ),
                "{method}"
            );
        }
        // New work.
        for method in [
            "initialize",
            "tools/list",
            "ping",
            "subscriptions/listen",
            "completion/complete",
        ] {
            assert!(
                !continues(
                    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"requestState": "x"}})
                ),
                "{method}"
            );
        }
        assert!(!continues(json!({"jsonrpc": "2.0", "id": 1})));
        assert!(!continues(
            json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
        ));
        assert!(!continues(json!({"jsonrpc": "2.0", "method": 5})));
        assert!(!continues_call(b"{not json"));
        assert!(!continues_call(b""));
        assert!(continues_call(
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}"
        ));
    }

    #[test]
    fn the_catalogs_lists_and_ping_are_served_while_draining_and_other_new_work_is_not() {
        let served = |message: Value| served_while_draining(message.to_string().as_bytes());
        for method in SERVED_WHILE_DRAINING {
            assert!(
                served(json!({"jsonrpc": "2.0", "id": 1, "method": method})),
                "{method}"
            );
            assert!(
                served(
                    json!({"jsonrpc": "2.0", "id": "a", "method": method, "params": {"cursor": "x"}})
                ),
                "{method}"
            );
        }
        // What continues a call.
        assert!(served(
            json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "accept"}})
        ));
        assert!(served(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
        ));
        // New work.
        for method in [
            "initialize",
            "server/discover",
            "tools/call",
            "prompts/get",
            "resources/read",
            "completion/complete",
            "subscriptions/listen",
            "logging/setLevel",
            "resources/subscribe",
            "tools/LIST",
        ] {
            assert!(
                !served(json!({"jsonrpc": "2.0", "id": 1, "method": method})),
                "{method}"
            );
        }
        assert!(!served(
            json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}])
        ));
        assert!(!served_while_draining(b"{not json"));
    }

    #[test]
    fn an_initialize_is_one_rmcp_decodes_as_one() {
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}}});
        assert!(is_initialize(initialize.to_string().as_bytes()));
        let mut no_params = initialize.clone();
        no_params.as_object_mut().unwrap().remove("params");
        assert!(!is_initialize(no_params.to_string().as_bytes()));
        let mut notification = initialize.clone();
        notification.as_object_mut().unwrap().remove("id");
        assert!(!is_initialize(notification.to_string().as_bytes()));
        assert!(!is_initialize(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
                .to_string()
                .as_bytes()
        ));
        assert!(!is_initialize(b"{not json"));
    }

    #[test]
    fn the_request_id_is_a_string_or_an_integer_else_null() {
        assert_eq!(
            request_id(br#"{"jsonrpc":"2.0","id":7,"method":"x"}"#),
            json!(7)
        );
        assert_eq!(request_id(br#"{"id":"a-1","method":"x"}"#), json!("a-1"));
        assert_eq!(request_id(br#"{"id":1.5,"method":"x"}"#), Value::Null);
        assert_eq!(request_id(br#"{"id":null}"#), Value::Null);
        assert_eq!(request_id(br#"{"method":"x"}"#), Value::Null);
        assert_eq!(request_id(b"[1]"), Value::Null);
        assert_eq!(request_id(b"garbage"), Value::Null);
    }
}
