//! Sealed, stateless `requestState` for 2026-07-28 multi-round-trip calls.
//!
//! The state a server hands a client between rounds is encrypted and authenticated with
//! AES-256-GCM (RustCrypto `aes-gcm`, AES-NI and carry-less multiplication when the CPU has
//! them), under a key derived with HKDF-SHA256 from a configured secret: the construction of the
//! Python SDK's built-in `AESGCMRequestStateCodec`. The sealed claims bind it to the method, the
//! tool, a digest of the arguments and the server's audience, and carry an expiry; the inner
//! state (recorded answers and the digests of the questions asked) is opaque to the client.
//!
//! [`verify`] is the boundary: the generated dispatch of `tools/call`, `prompts/get` and
//! `resources/read` calls it first, so a `requestState` is opened and checked before any
//! resolver or handler runs, whether or not the call needs it, and everything after sees only a
//! [`Verified`] state. Any failure is the frozen [`invalid_state_error`].
//!
//! Keys come from `MCP_REQUEST_STATE_KEYS` (comma-separated standard or URL-safe base64 secrets
//! of at least 32 bytes; the first seals, all open, so keys rotate), or from the file
//! `MCP_REQUEST_STATE_KEYS_FILE` names (the same list; commas or newlines separate keys, blank
//! lines and `#` comments are allowed), which is read again by [`reload_keys`] (on SIGHUP, with
//! the command line) so that a new key rolls through a fleet without a restart: add it second
//! everywhere, then promote it first everywhere, then retire the old one once every state it
//! sealed has expired. Setting both variables is an error. Without either, one ephemeral
//! random key is used and replicas do not share state. `MCP_REQUEST_STATE_TTL_SECS` sets the
//! lifetime (default 600 s); `MCP_REQUEST_STATE_AUDIENCE` overrides the audience (default: the
//! server's name).
//!
//! Token: `"v1." + base64url_nopad(kid[4] ‖ nonce[12] ‖ ciphertext ‖ tag[16])`, AAD `"v1." ‖ kid`,
//! `key = HKDF-SHA256(secret, salt = none, info = "mcp/request-state/v1/aes-256-gcm")`,
//! `kid = SHA-256("mcp/request-state/v1/kid:" ‖ key)[..4]`, a random nonce per token.
//!
//! With a verified caller the claims also bind the principal, as the Python SDK does: claim
//! `p` = `base64url_nopad(salt[8] ‖ SHA-256("mcp/request-state/principal:" ‖ salt ‖
//! binding)[..16])` with a random salt, where `binding` is [`Principal::binding`] (the compact
//! JSON `[client_id, issuer, subject]`); an anonymous caller's state has no `p`. Opening
//! requires `p` exactly when the request has a principal (anonymous versus authenticated is
//! "principal drift"), decodes it strictly (canonical base64url) and compares the tag in
//! constant time (`subtle`). A state sealed for one caller is the frozen error for any other.

use std::{
    borrow::Cow,
    io::Write,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, OnceLock},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use arc_swap::ArcSwap;

use aes_gcm::{
    Aes256Gcm, Nonce,
    aead::{Aead, Generate, Key, KeyInit, Payload},
};
use base64::{
    Engine,
    engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD},
};
use hkdf::Hkdf;
use rmcp::{ErrorData, model::ErrorCode};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Environment variable holding the sealing keys.
pub const KEYS_ENV: &str = "MCP_REQUEST_STATE_KEYS";
/// Environment variable naming a file that holds the sealing keys (re-read by [`reload_keys`]).
pub const KEYS_FILE_ENV: &str = "MCP_REQUEST_STATE_KEYS_FILE";
/// Environment variable holding the state lifetime in seconds.
pub const TTL_ENV: &str = "MCP_REQUEST_STATE_TTL_SECS";
/// Environment variable overriding the audience (default: the server's name).
pub const AUDIENCE_ENV: &str = "MCP_REQUEST_STATE_AUDIENCE";
/// Default lifetime of a sealed state.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
/// Minimum length of a secret.
pub const MIN_KEY_BYTES: usize = 32;

const PREFIX: &str = "v1.";
const HKDF_INFO: &[u8] = b"mcp/request-state/v1/aes-256-gcm";
const KID_INFO: &[u8] = b"mcp/request-state/v1/kid:";
const KID_LEN: usize = 4;
const NONCE_LEN: usize = 12;
const CLOCK_SKEW_SECS: f64 = 60.0;
/// The label of the principal claim's hash input.
const PRINCIPAL_LABEL: &[u8] = b"mcp/request-state/principal:";
/// The salt of the principal claim.
const PRINCIPAL_SALT_LEN: usize = 8;
/// The tag of the principal claim (a truncated SHA-256).
const PRINCIPAL_TAG_LEN: usize = 16;

/// What a sealed state is bound to: the request it continues.
#[derive(Debug, Clone, Copy)]
pub struct Binding<'a> {
    /// The JSON-RPC method (`tools/call`, `prompts/get` or `resources/read`).
    pub method: &'a str,
    /// The tool or prompt name, or the resource URI.
    pub tool: &'a str,
    /// [`arguments_digest`] of the call's arguments.
    pub arguments: &'a str,
    /// The verified caller's [`Principal::binding`]; `None` for an anonymous caller.
    pub principal: Option<&'a str>,
}

/// The keys, lifetime and audience of this process.
pub struct StatePolicy {
    keys: Vec<([u8; KID_LEN], Aes256Gcm)>,
    ttl: Duration,
    audience: String,
    /// The keys file the keys came from (`MCP_REQUEST_STATE_KEYS_FILE`), read again on reload.
    keys_file: Option<PathBuf>,
    /// One random key of this process alone ([`StatePolicy::ephemeral`]).
    ephemeral: bool,
}

/// A server's policy as it is now; [`reload_keys`] swaps in a new one.
pub(crate) type Slot = ArcSwap<StatePolicy>;

/// The policies of the servers built in this process, by server name: each server seals and
/// opens with its own (the server's name is its default audience), so two servers in one
/// process never take each other's `requestState`. Servers of the same name share one.
static POLICIES: Mutex<Vec<(String, Arc<Slot>)>> = Mutex::new(Vec::new());

/// The policy of requests served without a server (a generated handler driven by hand): from
/// the environment with an empty audience, or an ephemeral key when the environment is
/// unusable.
static FALLBACK: OnceLock<Slot> = OnceLock::new();

/// The policy of the server `server_name`: made from the environment the first time a server
/// of that name is built (the name as the default audience), the same one afterwards. Fails on
/// a malformed key, keys file or TTL, and when both `MCP_REQUEST_STATE_KEYS` and
/// `MCP_REQUEST_STATE_KEYS_FILE` are set (nothing is kept then: the next server of that name
/// reads the environment again).
pub(crate) fn policy_of(server_name: &str) -> Result<Arc<Slot>, String> {
    let mut policies = lock(&POLICIES);
    if let Some((_, slot)) = policies.iter().find(|(name, _)| name == server_name) {
        return Ok(Arc::clone(slot));
    }
    let slot = Arc::new(ArcSwap::from_pointee(StatePolicy::from_env(server_name)?));
    policies.push((server_name.to_string(), Arc::clone(&slot)));
    Ok(slot)
}

/// The policy of requests served without a server (see [`FALLBACK`]).
fn fallback() -> &'static Slot {
    FALLBACK.get_or_init(|| {
        ArcSwap::from_pointee(StatePolicy::from_env("").unwrap_or_else(|e| {
            tracing::error!("{e}; using an ephemeral requestState key");
            StatePolicy::ephemeral(DEFAULT_TTL, "")
        }))
    })
}

/// The policy of requests served without a server, as it is now (see [`FALLBACK`]); a server's
/// requests use the server's ([`policy_of`]).
pub fn policy() -> arc_swap::Guard<Arc<StatePolicy>> {
    fallback().load()
}

/// Reads the keys file (`MCP_REQUEST_STATE_KEYS_FILE`) again, for every server of this process
/// whose keys came from it, and seals with its first key from now on, opening with all of
/// them; the lifetime and audience stay. Returns how many keys the last server reloaded uses
/// (they all read the same file). Logs the key ids (`requestState: 2 key(s) from <file> (seals
/// with kid 1a2b3c4d; also opens 9f8e7d6c)`). On any error (no keys file configured,
/// unreadable, a malformed or short key) the keys in use stay and an ERROR says so
/// (`requestState keys not reloaded: <why>; still using N key(s)`); the first error is
/// returned.
///
/// The command line calls it on SIGHUP; an embedded application picks its own trigger.
pub fn reload_keys() -> Result<usize, String> {
    let slots: Vec<Arc<Slot>> = lock(&POLICIES)
        .iter()
        .map(|(_, slot)| Arc::clone(slot))
        .collect();
    let with_file: Vec<&Arc<Slot>> = slots
        .iter()
        .filter(|slot| slot.load().keys_file.is_some())
        .collect();
    if with_file.is_empty() {
        return reload_into(slots.first().map_or(fallback(), |slot| slot));
    }
    let mut outcome = Ok(0);
    for slot in with_file {
        let reloaded = reload_into(slot);
        if outcome.is_ok() {
            outcome = reloaded;
        }
    }
    outcome
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// [`reload_keys`] on the policy in `slot`.
fn reload_into(slot: &ArcSwap<StatePolicy>) -> Result<usize, String> {
    // Two reloads at once (two quick SIGHUPs, or an application's own trigger) must not store
    // their policies in the wrong order: one at a time.
    static RELOADING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = RELOADING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let current = slot.load_full();
    let reloaded = match &current.keys_file {
        None => Err(format!("{KEYS_FILE_ENV} is not set")),
        Some(path) => read_keys_file(path).and_then(|secrets| {
            StatePolicy::new(&secrets, current.ttl, &current.audience)
                .map(|policy| policy.with_keys_file(path))
                .map_err(|e| format!("{KEYS_FILE_ENV} ({}): {e}", path.display()))
        }),
    };
    match reloaded {
        Ok(policy) => {
            let count = policy.keys.len();
            tracing::info!("{}", policy.key_line());
            slot.store(Arc::new(policy));
            Ok(count)
        }
        Err(why) => {
            tracing::error!(
                "requestState keys not reloaded: {why}; still using {} key(s)",
                current.keys.len()
            );
            Err(why)
        }
    }
}

/// Where the keys are configured: `MCP_REQUEST_STATE_KEYS`, `MCP_REQUEST_STATE_KEYS_FILE`
/// or neither (`var` reads the environment; an empty value counts as unset). Both is an error.
pub(crate) fn key_source(var: impl Fn(&str) -> Option<String>) -> Result<KeySource, String> {
    let set = |name: &str| var(name).filter(|value| !value.trim().is_empty());
    match (set(KEYS_ENV), set(KEYS_FILE_ENV)) {
        (Some(_), Some(_)) => Err(format!(
            "set {KEYS_ENV} or {KEYS_FILE_ENV}, not both (the file's keys can be reloaded with SIGHUP)"
        )),
        (Some(text), None) => Ok(KeySource::Env(text)),
        (None, Some(path)) => Ok(KeySource::File(PathBuf::from(path))),
        (None, None) => Ok(KeySource::None),
    }
}

/// Where the keys are configured ([`key_source`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum KeySource {
    /// `MCP_REQUEST_STATE_KEYS`, its value.
    Env(String),
    /// `MCP_REQUEST_STATE_KEYS_FILE`, the path.
    File(PathBuf),
    None,
}

/// The largest keys file read: far more than any list of keys (a key is 44 base64
/// characters); a larger file is refused rather than read whole.
const KEYS_FILE_MAX_BYTES: u64 = 64 * 1024;

/// The secrets a keys file holds: base64 keys separated by commas or newlines; blank lines
/// and `#` comments (to the end of the line) are skipped. The file is opened once, without
/// blocking (a FIFO or a device in its place would otherwise hold the open until a writer
/// came), and checked through that handle: only a regular file is read (a symlink to one, as
/// Kubernetes mounts its secrets, is followed); on Unix a file that group or others may write
/// is refused (whoever can write it can make the server accept state they sealed), one they may
/// read is warned about; a file over 64 KiB is refused. It reads the disk: an async caller
/// runs it on a blocking thread.
fn read_keys_file(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    use std::io::Read;
    let at = || format!("{KEYS_FILE_ENV} ({})", path.display());
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("{}: cannot read: {e}", at()))?;
    let metadata = file
        .metadata()
        .map_err(|e| format!("{}: cannot read: {e}", at()))?;
    if !metadata.is_file() {
        return Err(format!("{}: not a regular file", at()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o022 != 0 {
            return Err(format!(
                "{}: writable by other users (mode {mode:03o}); chmod 600 it",
                at()
            ));
        }
        if mode & 0o044 != 0 {
            tracing::warn!(
                "requestState: {} is readable by other users (mode {mode:03o}); chmod 600 it",
                path.display()
            );
        }
    }
    if metadata.len() > KEYS_FILE_MAX_BYTES {
        return Err(format!(
            "{}: {} bytes, more than a keys file's {KEYS_FILE_MAX_BYTES}",
            at(),
            metadata.len()
        ));
    }
    let mut text = String::new();
    file.take(KEYS_FILE_MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: cannot read: {e}", at()))?;
    parse_keys_file(&text).map_err(|e| format!("{}: {e}", at()))
}

/// The secrets of a keys file's text ([`read_keys_file`]).
fn parse_keys_file(text: &str) -> Result<Vec<Vec<u8>>, String> {
    let keys: Vec<&str> = text
        .lines()
        .map(|line| line.split_once('#').map_or(line, |(key, _)| key))
        .flat_map(|line| line.split(','))
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .collect();
    if keys.is_empty() {
        return Err("no key in the file".to_string());
    }
    keys.iter()
        .enumerate()
        .map(|(i, key)| decode_base64(key).ok_or_else(|| format!("key {} is not base64", i + 1)))
        .collect()
}

impl StatePolicy {
    /// A policy with the given secrets (each at least 32 bytes; the first seals).
    pub fn new(secrets: &[Vec<u8>], ttl: Duration, audience: &str) -> Result<Self, String> {
        if secrets.is_empty() {
            return Err("no requestState key".into());
        }
        let mut keys = Vec::with_capacity(secrets.len());
        for (i, secret) in secrets.iter().enumerate() {
            if secret.len() < MIN_KEY_BYTES {
                return Err(format!(
                    "requestState key {} is {} bytes; at least {MIN_KEY_BYTES} are required",
                    i + 1,
                    secret.len()
                ));
            }
            let mut key = [0u8; 32];
            Hkdf::<Sha256>::new(None, secret)
                .expand(HKDF_INFO, &mut key)
                .map_err(|e| format!("HKDF failed: {e}"))?;
            let mut kid = [0u8; KID_LEN];
            let hash = Sha256::new()
                .chain_update(KID_INFO)
                .chain_update(key)
                .finalize();
            kid.copy_from_slice(&hash[..KID_LEN]);
            let key: Key<Aes256Gcm> = key.into();
            let cipher = Aes256Gcm::new(&key);
            keys.push((kid, cipher));
        }
        Ok(StatePolicy {
            keys,
            ttl,
            audience: audience.to_string(),
            keys_file: None,
            ephemeral: false,
        })
    }

    /// The same policy, read from the keys file `path` (which a reload reads again).
    fn with_keys_file(mut self, path: &Path) -> Self {
        self.keys_file = Some(path.to_path_buf());
        self
    }

    /// The ids of the keys, hex: the sealing key's first.
    fn key_ids(&self) -> Vec<String> {
        self.keys
            .iter()
            .map(|(kid, _)| kid.iter().map(|b| format!("{b:02x}")).collect())
            .collect()
    }

    /// `N key(s) from <source> (seals with kid K; also opens K2, K3)` without the prefix.
    fn key_summary(&self, source: &str) -> String {
        let ids = self.key_ids();
        let mut line = format!(
            "{} key(s) from {source} (seals with kid {}",
            ids.len(),
            ids[0]
        );
        if ids.len() > 1 {
            line.push_str("; also opens ");
            line.push_str(&ids[1..].join(", "));
        }
        line.push(')');
        line
    }

    /// The log line of the keys of a keys file: `requestState: 2 key(s) from /etc/x/state-keys
    /// (seals with kid 1a2b3c4d; also opens 9f8e7d6c)`.
    /// Whether the keys come from `MCP_REQUEST_STATE_KEYS_FILE` (so [`reload_keys`] can read
    /// them again).
    pub(crate) fn has_keys_file(&self) -> bool {
        self.keys_file.is_some()
    }

    fn key_line(&self) -> String {
        let source = self
            .keys_file
            .as_deref()
            .map_or_else(|| KEYS_ENV.to_string(), |path| path.display().to_string());
        format!("requestState: {}", self.key_summary(&source))
    }

    /// A policy with one random key held only by this process.
    pub fn ephemeral(ttl: Duration, audience: &str) -> Self {
        let secret = Key::<Aes256Gcm>::generate();
        let mut policy =
            StatePolicy::new(&[secret.to_vec()], ttl, audience).expect("a 32-byte random key");
        policy.ephemeral = true;
        policy
    }

    /// Whether the key is one random key of this process alone (no key was configured): the
    /// server's replicas do not open each other's states (`--replica` and `--bus` warn).
    pub(crate) fn is_ephemeral(&self) -> bool {
        self.ephemeral
    }

    /// Reads `MCP_REQUEST_STATE_KEYS` or `MCP_REQUEST_STATE_KEYS_FILE` (not both),
    /// `MCP_REQUEST_STATE_TTL_SECS` and `MCP_REQUEST_STATE_AUDIENCE`; logs which keys are in
    /// use (their ids).
    pub fn from_env(server_name: &str) -> Result<Self, String> {
        Self::from_vars(server_name, |name| std::env::var(name).ok())
    }

    /// [`StatePolicy::from_env`] with the environment read by `var`.
    fn from_vars(server_name: &str, var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let ttl = match var(TTL_ENV) {
            Some(text) => Duration::from_secs(text.trim().parse::<u64>().map_err(|_| {
                format!("{TTL_ENV} must be a whole number of seconds, not '{text}'")
            })?),
            None => DEFAULT_TTL,
        };
        let audience = var(AUDIENCE_ENV).unwrap_or_else(|| server_name.to_string());
        match key_source(&var)? {
            KeySource::File(path) => {
                let secrets = read_keys_file(&path)?;
                let policy = StatePolicy::new(&secrets, ttl, &audience)
                    .map_err(|e| format!("{KEYS_FILE_ENV} ({}): {e}", path.display()))?
                    .with_keys_file(&path);
                tracing::info!("{}", policy.key_line());
                tracing::info!(
                    "requestState: lifetime {} s, audience '{audience}'; SIGHUP reads {} again",
                    ttl.as_secs(),
                    path.display()
                );
                Ok(policy)
            }
            KeySource::Env(text) => {
                let secrets = text
                    .split(',')
                    .map(str::trim)
                    .enumerate()
                    .map(|(i, key)| {
                        decode_base64(key)
                            .ok_or_else(|| format!("{KEYS_ENV}: key {} is not base64", i + 1))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let policy = StatePolicy::new(&secrets, ttl, &audience)
                    .map_err(|e| format!("{KEYS_ENV}: {e}"))?;
                tracing::info!(
                    "requestState: {}, lifetime {} s, audience '{audience}'",
                    policy.key_summary(KEYS_ENV),
                    ttl.as_secs()
                );
                Ok(policy)
            }
            KeySource::None => {
                // A healthy single server (stdio, or one HTTP process): INFO. Replicas are
                // warned where they are configured (`--replica`, `--bus`).
                tracing::info!(
                    "neither {KEYS_ENV} nor {KEYS_FILE_ENV} is set: requestState is sealed with a key of this process alone, so states do not survive a restart"
                );
                Ok(StatePolicy::ephemeral(ttl, &audience))
            }
        }
    }

    /// The lifetime of a sealed state.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The audience states are bound to.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// Seals `inner` for the request `binding`, valid for the policy's lifetime.
    pub fn seal<S: serde::Serialize + ?Sized>(
        &self,
        binding: Binding<'_>,
        inner: &S,
    ) -> Result<String, String> {
        let now = unix_now();
        let claims = Claims {
            v: 1,
            iat: now,
            exp: now + self.ttl.as_secs_f64(),
            m: binding.method.into(),
            t: binding.tool.into(),
            a: binding.arguments.into(),
            aud: self.audience.as_str().into(),
            p: binding.principal.map(|p| principal_claim(p).into()),
            s: inner,
        };
        let plaintext = serde_json::to_vec(&claims).map_err(|e| e.to_string())?;
        let (kid, cipher) = &self.keys[0];
        let nonce = Nonce::generate();
        let aad = aad(kid);
        let ciphertext = cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: &plaintext,
                    aad: &aad,
                },
            )
            .map_err(|_| "encryption failed".to_string())?;
        let mut raw = Vec::with_capacity(KID_LEN + NONCE_LEN + ciphertext.len());
        raw.extend_from_slice(kid);
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&ciphertext);
        let mut token = String::with_capacity(PREFIX.len() + raw.len().div_ceil(3) * 4);
        token.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(raw, &mut token);
        Ok(token)
    }

    /// Checks the `requestState` a client sent with a request: opens it and checks it against
    /// this request (`method`, `target` = the tool or prompt name or the resource URI, the
    /// digest of `arguments` as sent — none for `resources/read` —, the audience, the expiry),
    /// whether or not the call goes on to need it. `None` (absent, or JSON `null`) passes as
    /// `Ok(None)`.
    ///
    /// Any failure is the one frozen [`invalid_state_error`]; the reason is logged on the server
    /// only (WARN `rejected requestState: <reason>`). The inner state is not interpreted here: a
    /// round that cannot read it starts afresh (no progress).
    pub fn verify(
        &self,
        method: &str,
        target: &str,
        arguments: Option<&Map<String, Value>>,
        token: Option<String>,
        principal: Option<&str>,
    ) -> Result<Option<Verified>, ErrorData> {
        let Some(token) = token else {
            return Ok(None);
        };
        let digest = arguments_digest(arguments);
        let binding = Binding {
            method,
            tool: target,
            arguments: &digest,
            principal,
        };
        match self.open(&token, binding) {
            Ok(inner) => {
                tracing::debug!(method, target, "requestState accepted");
                Ok(Some(Verified {
                    token,
                    inner,
                    arguments: digest,
                }))
            }
            Err(reason) => {
                tracing::warn!(method, target, "rejected requestState: {reason}");
                Err(invalid_state_error())
            }
        }
    }

    /// Opens a state and checks its claims against `binding`; the error is the reason (for
    /// the server log only).
    pub fn open(&self, token: &str, binding: Binding<'_>) -> Result<Value, String> {
        self.open_as(token, binding)
    }

    /// [`StatePolicy::open`], reading the inner state as `S` (a state that does not read as
    /// `S` does not open).
    pub fn open_as<S: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        binding: Binding<'_>,
    ) -> Result<S, String> {
        let body = token
            .strip_prefix(PREFIX)
            .ok_or("not a v1 token (wrong prefix)")?;
        let raw = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| "token is not base64url")?;
        if raw.len() < KID_LEN + NONCE_LEN + 16 {
            return Err("token is too short".into());
        }
        let (kid, rest) = raw.split_at(KID_LEN);
        let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
        let (kid, cipher) = self
            .keys
            .iter()
            .find(|(k, _)| k == kid)
            .ok_or("token sealed with an unknown key")?;
        let aad = aad(kid);
        let plaintext = cipher
            .decrypt(
                &Nonce::try_from(nonce).map_err(|_| "bad nonce")?,
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| "token failed authentication")?;
        let claims: Claims<'_, S> =
            serde_json::from_slice(&plaintext).map_err(|e| format!("claims do not read: {e}"))?;
        if claims.v != 1 {
            return Err("unknown claims version".into());
        }
        let now = unix_now();
        if claims.iat > now + CLOCK_SKEW_SECS {
            return Err("issued in the future".into());
        }
        if now >= claims.exp {
            return Err(format!("expired {:.1} s ago", now - claims.exp));
        }
        if claims.m != binding.method {
            return Err(format!("bound to method {:?}", claims.m));
        }
        if claims.t != binding.tool {
            return Err(format!("bound to tool {:?}", claims.t));
        }
        if claims.a != binding.arguments {
            return Err("bound to other arguments".into());
        }
        if claims.aud != self.audience {
            return Err(format!("bound to audience {:?}", claims.aud));
        }
        match (claims.p.as_deref(), binding.principal) {
            (None, None) => {}
            (Some(_), None) => {
                return Err("principal drift: sealed for a caller, sent anonymously".into());
            }
            (None, Some(_)) => {
                return Err("principal drift: sealed anonymously, sent by a caller".into());
            }
            (Some(claim), Some(principal)) => {
                if !principal_matches(claim, principal) {
                    return Err("sealed for another principal".into());
                }
            }
        }
        Ok(claims.s)
    }
}

/// The sealed claims: what the state is bound to, when it expires, and the inner state
/// (`Value` when opening, `&Value` when sealing). Serialized without building a JSON value first;
/// strings borrow from the opened plaintext.
#[derive(serde::Serialize, serde::Deserialize)]
struct Claims<'a, S> {
    /// Claims version (1).
    v: u64,
    /// Issued at (Unix seconds).
    iat: f64,
    /// Expires at (Unix seconds).
    exp: f64,
    /// The JSON-RPC method.
    #[serde(borrow)]
    m: Cow<'a, str>,
    /// The tool or prompt.
    #[serde(borrow)]
    t: Cow<'a, str>,
    /// The arguments digest.
    #[serde(borrow)]
    a: Cow<'a, str>,
    /// The audience.
    #[serde(borrow)]
    aud: Cow<'a, str>,
    /// The principal claim (see the module documentation); absent for an anonymous caller.
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    p: Option<Cow<'a, str>>,
    /// The inner state.
    s: S,
}

/// A client's `requestState` that opened under one of this process's keys and matched the
/// request it came with (see [`verify`]): the only way a handler or round sees one.
#[derive(Debug)]
pub struct Verified {
    /// The token as the client echoed it.
    token: String,
    /// The inner state the server sealed (opaque JSON; a round reads its own format from it).
    inner: Value,
    /// [`arguments_digest`] of the request's arguments, which the state is bound to.
    arguments: String,
}

impl Verified {
    /// The token as the client echoed it.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The inner state, as it was sealed.
    pub fn inner(&self) -> &Value {
        &self.inner
    }

    /// The digest of the request's arguments (what a new state for this request is bound to).
    pub fn arguments_digest(&self) -> &str {
        &self.arguments
    }
}

/// The boundary check of every `tools/call`, `prompts/get` and `resources/read`, run before
/// anything else looks at the request (the Python SDK's `RequestStateBoundary`):
/// [`StatePolicy::verify`] with the serving server's `policy`, for the caller whose
/// `Principal::binding` is `principal` (`None`: anonymous). The generated dispatch reaches it
/// through `context.rs`'s `verify_request_state`, which reads the server and the caller from
/// the request.
pub fn verify(
    policy: &StatePolicy,
    method: &str,
    target: &str,
    arguments: Option<&Map<String, Value>>,
    token: Option<String>,
    principal: Option<&str>,
) -> Result<Option<Verified>, ErrorData> {
    policy.verify(method, target, arguments, token, principal)
}

/// Claim `p` for the principal `binding`: `base64url_nopad(salt ‖ tag)`.
fn principal_claim(binding: &str) -> String {
    let salt: [u8; PRINCIPAL_SALT_LEN] = {
        // Random bytes from the OS generator the keys use; eight are the salt.
        let random = Key::<Aes256Gcm>::generate();
        let mut salt = [0; PRINCIPAL_SALT_LEN];
        salt.copy_from_slice(&random[..PRINCIPAL_SALT_LEN]);
        salt
    };
    let mut raw = [0u8; PRINCIPAL_SALT_LEN + PRINCIPAL_TAG_LEN];
    raw[..PRINCIPAL_SALT_LEN].copy_from_slice(&salt);
    raw[PRINCIPAL_SALT_LEN..].copy_from_slice(&principal_tag(&salt, binding));
    URL_SAFE_NO_PAD.encode(raw)
}

/// `SHA-256(label ‖ salt ‖ binding)[..16]`.
fn principal_tag(salt: &[u8], binding: &str) -> [u8; PRINCIPAL_TAG_LEN] {
    let hash = Sha256::new()
        .chain_update(PRINCIPAL_LABEL)
        .chain_update(salt)
        .chain_update(binding.as_bytes())
        .finalize();
    let mut tag = [0; PRINCIPAL_TAG_LEN];
    tag.copy_from_slice(&hash[..PRINCIPAL_TAG_LEN]);
    tag
}

/// Whether claim `p` was made for `binding`: canonical base64url only, the tag compared in
/// constant time.
pub(crate) fn principal_matches(claim: &str, binding: &str) -> bool {
    let Ok(raw) = URL_SAFE_NO_PAD.decode(claim) else {
        return false;
    };
    if raw.len() < PRINCIPAL_SALT_LEN {
        return false;
    }
    let (salt, tag) = raw.split_at(PRINCIPAL_SALT_LEN);
    tag.ct_eq(&principal_tag(salt, binding)).into()
}

/// The methods that carry a `requestState` (and so pass the boundary).
pub const CARRIERS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// [`verify`] on a request's params as sent, before their shape is checked (the Python SDK's
/// boundary reads them so): for a [`CARRIERS`] method, a `requestState` that is absent or
/// `null` passes, any other non-string fails, and a string is verified against the params'
/// `name` (`uri` for `resources/read`) and `arguments`. Other methods pass.
///
/// For requests whose params do not fit rmcp's types (which never reach the generated
/// dispatch): a non-string `requestState` is such a request.
pub fn verify_params(
    policy: &StatePolicy,
    method: &str,
    params: Option<&Value>,
    principal: Option<&str>,
) -> Result<Option<Verified>, ErrorData> {
    if !CARRIERS.contains(&method) {
        return Ok(None);
    }
    let Some(Value::Object(params)) = params else {
        return Ok(None);
    };
    let token = match params.get("requestState") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(token)) => token.clone(),
        Some(other) => {
            let kind = match other {
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::Array(_) => "an array",
                _ => "an object",
            };
            tracing::warn!(method, "rejected requestState: {kind}, not a string");
            return Err(invalid_state_error());
        }
    };
    let key = if method == "resources/read" {
        "uri"
    } else {
        "name"
    };
    let target = match params.get(key) {
        Some(Value::String(target)) => target.clone(),
        None => String::new(),
        Some(other) => other.to_string(),
    };
    if method == "resources/read" {
        return verify(policy, method, &target, None, Some(token), principal);
    }
    match params.get("arguments") {
        None | Some(Value::Null) => verify(policy, method, &target, None, Some(token), principal),
        Some(Value::Object(arguments)) => verify(
            policy,
            method,
            &target,
            Some(arguments),
            Some(token),
            principal,
        ),
        // Arguments of the wrong shape: no state is ever sealed for them.
        Some(_) => {
            tracing::warn!(
                method,
                target,
                "rejected requestState: arguments are not an object"
            );
            Err(invalid_state_error())
        }
    }
}

/// The protocol error for a `requestState` that does not open or match.
pub fn invalid_state_error() -> ErrorData {
    ErrorData::new(
        ErrorCode::INVALID_PARAMS,
        "Invalid or expired requestState",
        Some(json!({"reason": "invalid_request_state"})),
    )
}

/// `base64url_nopad(SHA-256(canonical JSON of value)[..16])`: the digest of a call's arguments
/// or of a rendered question. Canonical JSON is compact with object keys sorted.
pub fn digest(value: &Value) -> String {
    let mut hasher = Hasher::default();
    canonical(value, &mut hasher);
    hasher.finish()
}

/// The digest of a call's arguments (absent arguments count as `{}`).
pub fn arguments_digest(arguments: Option<&Map<String, Value>>) -> String {
    let mut hasher = Hasher::default();
    match arguments {
        Some(map) => canonical_object(map, &mut hasher),
        None => hasher.write_bytes(b"{}"),
    }
    hasher.finish()
}

/// SHA-256 fed with canonical JSON as it is written (no intermediate text), finished into the
/// digest's text form.
#[derive(Default, Clone)]
pub(crate) struct Hasher(Sha256);

impl Hasher {
    pub(crate) fn write_bytes(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// Writes `text` as a JSON string (the canonical escaping, as [`canonical`] writes strings).
    pub(crate) fn write_json_str(&mut self, text: &str) {
        write_str(text, self);
    }

    /// `base64url_nopad(SHA-256[..16])`.
    pub(crate) fn finish(self) -> String {
        URL_SAFE_NO_PAD.encode(&self.0.finalize()[..16])
    }
}

impl Write for Hasher {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes `value` as canonical JSON: the Python SDK's `compact_json` with `sort_keys=True`
/// (compact, object keys sorted by code point, which their UTF-8 bytes order the same way,
/// non-ASCII escaped, floats as Python writes them), so that an argument digest is the same as
/// a Python server's and tokens interoperate. (An integer beyond 64 bits, which serde_json
/// reads as a float, is the one value written differently.)
pub(crate) fn canonical<W: Write>(value: &Value, out: &mut W) {
    match value {
        Value::Object(map) => canonical_object(map, out),
        Value::Array(items) => {
            put(out, b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    put(out, b",");
                }
                canonical(item, out);
            }
            put(out, b"]");
        }
        other => write_scalar(other, out),
    }
}

fn canonical_object<W: Write>(map: &Map<String, Value>, out: &mut W) {
    put(out, b"{");
    // serde_json's default map is ordered by key already; only an insertion-ordered map
    // (its `preserve_order` feature) needs sorting.
    if map.keys().is_sorted() {
        canonical_entries(map.iter(), out);
    } else {
        let mut entries: Vec<_> = map.iter().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        canonical_entries(entries.into_iter(), out);
    }
    put(out, b"}");
}

fn canonical_entries<'v, W: Write>(
    entries: impl Iterator<Item = (&'v String, &'v Value)>,
    out: &mut W,
) {
    for (i, (key, value)) in entries.enumerate() {
        if i > 0 {
            put(out, b",");
        }
        write_str(key, out);
        put(out, b":");
        canonical(value, out);
    }
}

/// A number, boolean, null or string, as Python's `json.dumps` writes it.
fn write_scalar<W: Write>(value: &Value, out: &mut W) {
    match value {
        Value::String(text) => write_str(text, out),
        Value::Number(number) => match number.as_f64() {
            Some(float) if number.is_f64() => write_float(float, out),
            _ => put(out, number.to_string().as_bytes()),
        },
        other => serde_json::to_writer(out, other).expect("writing JSON into memory cannot fail"),
    }
}

/// A JSON string as the Python SDK's `compact_json` (`json.dumps` with `ensure_ascii=True`)
/// writes it, so that digests agree with a Python server's: `"` and `\` escaped, `\b \f \n
/// \r \t`, every other character outside printable ASCII (space to `~`) as `\uXXXX` in
/// lower-case hex, UTF-16 surrogate pairs beyond U+FFFF.
pub(crate) fn write_str<W: Write>(text: &str, out: &mut W) {
    put(out, b"\"");
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if (' '..='~').contains(&c) && c != '"' && c != '\\' {
            continue;
        }
        put(out, &text.as_bytes()[start..i]);
        start = i + c.len_utf8();
        let short: &[u8] = match c {
            '"' => b"\\\"",
            '\\' => b"\\\\",
            '\n' => b"\\n",
            '\r' => b"\\r",
            '\t' => b"\\t",
            '\u{8}' => b"\\b",
            '\u{c}' => b"\\f",
            _ => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    write!(out, "\\u{unit:04x}").expect("writing JSON into memory cannot fail");
                }
                continue;
            }
        };
        put(out, short);
    }
    put(out, &text.as_bytes()[start..]);
    put(out, b"\"");
}

/// A float as Python's `repr` writes it (`json.dumps` uses it): the shortest digits that
/// read back as the same value, in positional notation with at least one fractional digit
/// for exponents -4 to 15 (`100.0`, `0.0001`), else as `1.5e+16` or `1e-05`.
fn write_float<W: Write>(float: f64, out: &mut W) {
    // Rust's `{:e}` gives the same shortest digits: `-1.5e16`, `1e-5`, `0e0`.
    let scientific = format!("{float:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(mantissa) => ("-", mantissa),
        None => ("", mantissa),
    };
    let text = if (-4..16).contains(&exponent) {
        let digits = mantissa.replace('.', "");
        if exponent >= 0 {
            let whole = exponent as usize + 1;
            if digits.len() <= whole {
                format!("{sign}{digits:0<whole$}.0")
            } else {
                format!("{sign}{}.{}", &digits[..whole], &digits[whole..])
            }
        } else {
            let zeros = "0".repeat((-exponent - 1) as usize);
            format!("{sign}0.{zeros}{digits}")
        }
    } else {
        let exponent_sign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exponent_sign}{:02}", exponent.abs())
    };
    put(out, text.as_bytes());
}

fn put<W: Write>(out: &mut W, bytes: &[u8]) {
    out.write_all(bytes)
        .expect("writing JSON into memory cannot fail");
}

/// The associated data of a token: `"v1." ‖ kid`.
fn aad(kid: &[u8; KID_LEN]) -> [u8; PREFIX.len() + KID_LEN] {
    let mut aad = [0; PREFIX.len() + KID_LEN];
    aad[..PREFIX.len()].copy_from_slice(PREFIX.as_bytes());
    aad[PREFIX.len()..].copy_from_slice(kid);
    aad
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    STANDARD
        .decode(text)
        .or_else(|_| URL_SAFE.decode(text))
        .or_else(|_| URL_SAFE_NO_PAD.decode(text))
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(text))
        .ok()
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The keys file and its reload (the process-wide slot is left alone: each test swaps a slot
/// of its own).
#[cfg(test)]
mod reload {
    use std::collections::HashMap;

    use super::*;

    /// Three 32-byte secrets (bytes 1, 2, 3) and their key ids, computed independently
    /// (Python: HKDF-SHA256 with `hmac`, then `hashlib.sha256(KID_INFO + key)[:4]`).
    const K1: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
    const K2: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";
    const K3: &str = "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=";
    const KID1: &str = "1a49fbd2";
    const KID2: &str = "ee5a62fc";
    const KID3: &str = "6c287c29";

    /// A keys file of the test's own, removed when dropped.
    struct KeysFile(PathBuf);

    impl KeysFile {
        fn new(name: &str, text: &str) -> KeysFile {
            let path = std::env::temp_dir()
                .join(format!("mcpgen-state-keys-{}-{name}", std::process::id()));
            let file = KeysFile(path);
            file.write(text);
            file
        }

        fn write(&self, text: &str) {
            std::fs::write(&self.0, text).expect("write the keys file");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o600))
                    .expect("chmod 600");
            }
        }

        fn vars(&self) -> impl Fn(&str) -> Option<String> + use<> {
            let path = self.0.display().to_string();
            move |name: &str| (name == KEYS_FILE_ENV).then(|| path.clone())
        }
    }

    impl Drop for KeysFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn binding(digest: &str) -> Binding<'_> {
        Binding {
            method: "tools/call",
            tool: "sign_note",
            arguments: digest,
            principal: None,
        }
    }

    /// The key id a token was sealed with (hex).
    fn kid_of(token: &str) -> String {
        let raw = URL_SAFE_NO_PAD
            .decode(token.strip_prefix("v1.").unwrap())
            .unwrap();
        raw[..4].iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn a_keys_file_rolls_a_new_key_in_three_phases() {
        let file = KeysFile::new("phases", &format!("{K1}\n"));
        let policy = StatePolicy::from_vars("fleet", file.vars()).unwrap();
        assert_eq!(policy.key_ids(), [KID1]);
        assert_eq!(
            policy.key_line(),
            format!(
                "requestState: 1 key(s) from {} (seals with kid {KID1})",
                file.0.display()
            )
        );
        let slot = ArcSwap::from_pointee(policy);
        let digest = arguments_digest(None);
        let old = slot
            .load()
            .seal(binding(&digest), &json!({"k": 1}))
            .unwrap();
        assert_eq!(kid_of(&old), KID1);

        // 1. Add: still seals with K1, now opens K2 too.
        file.write(&format!("# rotation, phase 1\n{K1}\n{K2}\n\n"));
        assert_eq!(reload_into(&slot), Ok(2));
        let policy = slot.load();
        assert_eq!(
            policy.key_line(),
            format!(
                "requestState: 2 key(s) from {} (seals with kid {KID1}; also opens {KID2})",
                file.0.display()
            )
        );
        assert_eq!(
            kid_of(&policy.seal(binding(&digest), &json!({})).unwrap()),
            KID1
        );
        assert_eq!(policy.open(&old, binding(&digest)), Ok(json!({"k": 1})));
        assert_eq!(policy.ttl(), DEFAULT_TTL);
        assert_eq!(policy.audience(), "fleet");

        // 2. Promote: seals with K2, still opens what K1 sealed.
        file.write(&format!("{K2}, {K1}"));
        assert_eq!(reload_into(&slot), Ok(2));
        let promoted = slot.load();
        let new = promoted.seal(binding(&digest), &json!({"k": 2})).unwrap();
        assert_eq!(kid_of(&new), KID2);
        assert_eq!(promoted.open(&old, binding(&digest)), Ok(json!({"k": 1})));
        assert_eq!(
            promoted.key_line(),
            format!(
                "requestState: 2 key(s) from {} (seals with kid {KID2}; also opens {KID1})",
                file.0.display()
            )
        );

        // 3. Retire: K1's states no longer open.
        file.write(&format!("{K2}  # K1 retired\n"));
        assert_eq!(reload_into(&slot), Ok(1));
        let retired = slot.load();
        assert_eq!(
            retired.open(&old, binding(&digest)),
            Err("token sealed with an unknown key".to_string())
        );
        assert_eq!(retired.open(&new, binding(&digest)), Ok(json!({"k": 2})));
    }

    #[test]
    fn a_bad_reload_keeps_the_keys_in_use() {
        let file = KeysFile::new("bad", &format!("{K1},{K3}"));
        let slot = ArcSwap::from_pointee(StatePolicy::from_vars("fleet", file.vars()).unwrap());
        assert_eq!(slot.load().key_ids(), [KID1, KID3]);
        let at = format!("{KEYS_FILE_ENV} ({})", file.0.display());
        for (text, why) in [
            (
                format!("{K2}\nnot base64!"),
                format!("{at}: key 2 is not base64"),
            ),
            (
                "AAAA".to_string(),
                format!("{at}: requestState key 1 is 3 bytes; at least 32 are required"),
            ),
            (
                "# nothing yet\n\n".to_string(),
                format!("{at}: no key in the file"),
            ),
        ] {
            file.write(&text);
            assert_eq!(reload_into(&slot), Err(why), "{text}");
            assert_eq!(slot.load().key_ids(), [KID1, KID3], "{text}");
        }
        // Writable by others: whoever can write it could make the server accept their state.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.write(K2);
            for mode in [0o620, 0o602, 0o666] {
                std::fs::set_permissions(&file.0, std::fs::Permissions::from_mode(mode)).unwrap();
                assert_eq!(
                    reload_into(&slot),
                    Err(format!(
                        "{at}: writable by other users (mode {mode:03o}); chmod 600 it"
                    )),
                );
                assert_eq!(slot.load().key_ids(), [KID1, KID3]);
            }
            // Readable by others is only warned about (secret volumes are often 0644).
            std::fs::set_permissions(&file.0, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert_eq!(reload_into(&slot), Ok(1));
            assert_eq!(slot.load().key_ids(), [KID2]);
        }
        // Larger than any keys file: refused, not read whole.
        file.write(&format!("{K1}\n{}", "#".repeat(64 * 1024)));
        let big = 64 * 1024 + K1.len() as u64 + 1;
        let kept = slot.load().key_ids();
        assert_eq!(
            reload_into(&slot),
            Err(format!(
                "{at}: {big} bytes, more than a keys file's {KEYS_FILE_MAX_BYTES}"
            )),
        );
        assert_eq!(slot.load().key_ids(), kept);
        std::fs::remove_file(&file.0).unwrap();
        let gone = reload_into(&slot).unwrap_err();
        assert!(gone.starts_with(&format!("{at}: cannot read: ")), "{gone}");
        assert_eq!(slot.load().key_ids(), kept);
    }

    /// Only a regular file is read, and nothing in the keys file's place can hold the reload:
    /// a FIFO without a writer (whose plain open would block until one came), a directory, a
    /// symlink to either are refused at once; a symlink to a regular file (how Kubernetes
    /// mounts a secret) is followed.
    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_is_read_and_nothing_blocks_the_reload() {
        use std::os::unix::{ffi::OsStrExt, fs::PermissionsExt};
        let file = KeysFile::new("special", K1);
        let slot = Arc::new(ArcSwap::from_pointee(
            StatePolicy::from_vars("fleet", file.vars()).unwrap(),
        ));
        let at = format!("{KEYS_FILE_ENV} ({})", file.0.display());
        let dir = file.0.with_extension("dir");
        let target = file.0.with_extension("target");
        let fifo = file.0.with_extension("fifo");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(&target, K2).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let name = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: `name` is a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        // A reload on another thread, awaited for at most five seconds: one that blocks fails
        // the test instead of hanging it.
        let reload = |slot: &Arc<ArcSwap<StatePolicy>>| {
            let slot = Arc::clone(slot);
            let (sent, received) = std::sync::mpsc::channel();
            std::thread::spawn(move || sent.send(reload_into(&slot)));
            received
                .recv_timeout(Duration::from_secs(5))
                .expect("the reload blocked")
        };
        let not_regular = format!("{at}: not a regular file");
        for (what, place) in [("a FIFO", &fifo), ("a directory", &dir)] {
            std::fs::remove_file(&file.0).unwrap();
            std::os::unix::fs::symlink(place, &file.0).unwrap();
            assert_eq!(
                reload(&slot),
                Err(not_regular.clone()),
                "a symlink to {what}"
            );
            assert_eq!(slot.load().key_ids(), [KID1], "{what}");
        }
        std::fs::remove_file(&file.0).unwrap();
        std::fs::rename(&fifo, &file.0).unwrap();
        assert_eq!(reload(&slot), Err(not_regular.clone()), "a FIFO");
        std::fs::remove_file(&file.0).unwrap();
        std::os::unix::fs::symlink(&target, &file.0).unwrap();
        assert_eq!(reload(&slot), Ok(1), "a symlink to a regular file");
        assert_eq!(slot.load().key_ids(), [KID2]);
        std::fs::remove_file(&file.0).unwrap();
        std::fs::remove_file(&target).unwrap();
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn keys_from_the_variable_do_not_reload() {
        let vars = |name: &str| (name == KEYS_ENV).then(|| format!("{K2},{K1}"));
        let policy = StatePolicy::from_vars("fleet", vars).unwrap();
        assert_eq!(policy.key_ids(), [KID2, KID1]);
        assert_eq!(
            policy.key_summary(KEYS_ENV),
            format!(
                "2 key(s) from MCP_REQUEST_STATE_KEYS (seals with kid {KID2}; also opens {KID1})"
            )
        );
        let slot = ArcSwap::from_pointee(policy);
        assert_eq!(
            reload_into(&slot),
            Err("MCP_REQUEST_STATE_KEYS_FILE is not set".to_string())
        );
        assert_eq!(slot.load().key_ids(), [KID2, KID1]);
    }

    #[test]
    fn both_key_variables_are_refused() {
        let both: HashMap<&str, String> = [
            (KEYS_ENV, K1.to_string()),
            (KEYS_FILE_ENV, "/etc/fleet/state-keys".to_string()),
        ]
        .into();
        let var = |name: &str| both.get(name).cloned();
        let refused = "set MCP_REQUEST_STATE_KEYS or MCP_REQUEST_STATE_KEYS_FILE, not both (the file's keys can be reloaded with SIGHUP)";
        assert_eq!(key_source(var), Err(refused.to_string()));
        assert_eq!(
            StatePolicy::from_vars("fleet", var).err().as_deref(),
            Some(refused)
        );
        // An empty value counts as unset.
        let empty_file = |name: &str| match name {
            KEYS_ENV => Some(K1.to_string()),
            KEYS_FILE_ENV => Some(" ".to_string()),
            _ => None,
        };
        assert_eq!(key_source(empty_file), Ok(KeySource::Env(K1.to_string())));
        assert_eq!(key_source(|_| None), Ok(KeySource::None));
        assert_eq!(
            key_source(|name| (name == KEYS_FILE_ENV).then(|| "/k".to_string())),
            Ok(KeySource::File(PathBuf::from("/k")))
        );
    }

    #[test]
    fn a_keys_file_separates_keys_by_commas_and_lines_and_skips_comments() {
        let text = format!("# fleet keys\n{K2},{K1}\n\n  {K3} # old\n#{K1}\n");
        let secrets = parse_keys_file(&text).unwrap();
        assert_eq!(secrets, [vec![2u8; 32], vec![1u8; 32], vec![3u8; 32]]);
        assert_eq!(parse_keys_file(""), Err("no key in the file".to_string()));
        assert_eq!(
            parse_keys_file(&format!("{K1},,x y")),
            Err("key 2 is not base64".to_string())
        );
    }
}
