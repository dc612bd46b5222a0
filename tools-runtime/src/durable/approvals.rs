//! Durable approvals' vocabulary: the settings ([`DurableApprovals`]), the key
//! ([`ApprovalKey`]), what a store keeps of a paused call ([`PendingRecord`]), the handle a host
//! shows and persists ([`PendingHandle`]), the MAC that binds them, and the errors
//! ([`ApprovalError`]). The store is in
//! [`store`](super::store); the pipeline pauses and resumes.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::call::decision::{Approval, GivenDecision};
use crate::call::pending::AwaitingCall;
use crate::call::pending::PendingHandle;
use crate::call::result::ToolExecutionResult;
use crate::call::result::codes;
use crate::call::tool_call::Principal;
use crate::durable::store::{ApprovalStore, CallState, PendingRecord, StoreError, StoredCall};

/// The shortest key [`ApprovalKey::new`] accepts, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// How long a paused call waits for its decision unless
/// [`DurableApprovals::expire_after`] says otherwise: seven days.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The largest handle text [`PendingHandle::parse`] reads, in bytes (a handle carries the
/// call's arguments).
pub const MAX_HANDLE_BYTES: usize = 8 * 1024 * 1024;

/// What a handle's text starts with (the version of its form).
const HANDLE_PREFIX: &str = "apv2.";

/// What the handles of the first form started with: refused, with a message that says where
/// to find the call's current handle.
const OLD_HANDLE_PREFIX: &str = "apv1.";

/// What the MAC is computed over first: the form's version, so a MAC of another form never
/// verifies.
const MAC_CONTEXT: &[u8] = b"agent-tools/approval/v1";

/// What the tag of a handle's text is computed over first, before the text's body.
const TAG_CONTEXT: &[u8] = b"agent-tools/approval/handle/v2";

/// How many times a resumed call's end is written to the store before the resume gives up
/// ([`DurableApprovals::record_retries`]).
pub const DEFAULT_RECORD_ATTEMPTS: u32 = 7;

/// The wait before the second attempt to write a resumed call's end; each later wait doubles
/// it (0.1 s, 0.2 s, ... 3.2 s: 6.3 s in all with [`DEFAULT_RECORD_ATTEMPTS`]).
pub const DEFAULT_RECORD_BACKOFF: Duration = Duration::from_millis(100);

/// The key of the MAC that binds a decision to the call a person reviewed (HMAC-SHA256). Every
/// process that resumes calls paused by another must have the same key; keep it with the
/// service's other secrets. Its `Debug` shows nothing of it.
#[derive(Clone)]
pub struct ApprovalKey(Arc<[u8]>);

impl ApprovalKey {
    /// A key of these bytes.
    ///
    /// # Errors
    ///
    /// [`ApprovalError::KeyTooShort`] for fewer than [`MIN_KEY_BYTES`] bytes.
    pub fn new(bytes: impl AsRef<[u8]>) -> Result<Self, ApprovalError> {
        let bytes = bytes.as_ref();
        if bytes.len() < MIN_KEY_BYTES {
            return Err(ApprovalError::KeyTooShort { len: bytes.len() });
        }
        Ok(ApprovalKey(Arc::from(bytes)))
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes a key of any length; `new` has checked ours is not trivially short.
        match <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0) {
            Ok(mac) => mac,
            Err(_) => unreachable_mac(),
        }
    }
}

#[cold]
fn unreachable_mac() -> Hmac<Sha256> {
    // `new_from_slice` fails only for fixed-length MACs; HMAC has none. A key of zeros keeps
    // this total without a panic path.
    <Hmac<Sha256> as KeyInit>::new(&Default::default())
}

impl fmt::Debug for ApprovalKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApprovalKey(..)")
    }
}

/// What makes approvals durable: where paused calls are kept, the key that binds each decision
/// to its call, and how long a paused call waits. Install with
/// [`ToolRuntimeBuilder::durable_approvals`](crate::presentation::ToolRuntimeBuilder::durable_approvals).
#[derive(Clone)]
pub struct DurableApprovals {
    pub(crate) store: Arc<dyn ApprovalStore>,
    pub(crate) key: ApprovalKey,
    pub(crate) expiry: Duration,
    pub(crate) replica: Arc<str>,
    pub(crate) record_attempts: u32,
    pub(crate) record_backoff: Duration,
}

impl DurableApprovals {
    /// Paused calls kept in `store`, bound with `key`, waiting [`DEFAULT_EXPIRY`].
    pub fn new(store: impl ApprovalStore, key: ApprovalKey) -> Self {
        Self::with_store(Arc::new(store), key)
    }

    /// The same, with a store shared with other runtimes or code.
    pub fn with_store(store: Arc<dyn ApprovalStore>, key: ApprovalKey) -> Self {
        DurableApprovals {
            store,
            key,
            expiry: DEFAULT_EXPIRY,
            replica: default_replica().into(),
            record_attempts: DEFAULT_RECORD_ATTEMPTS,
            record_backoff: DEFAULT_RECORD_BACKOFF,
        }
    }

    /// The name this process writes on each call it claims (a call `resuming` since when, by
    /// whom: what an operator reads to judge whether the call is in doubt). By default the
    /// host's name and the process id, `host:pid`; give each replica a name its operators
    /// recognise (a pod's name, say).
    #[must_use]
    pub fn replica(mut self, name: impl Into<String>) -> Self {
        self.replica = name.into().into();
        self
    }

    /// How a resumed call's end is written when the store fails after the body ran (a database
    /// restarting): up to `attempts` times (at least once), waiting `first_backoff` before the
    /// second and twice as long before each later one. After the last, the resume fails with
    /// [`ApprovalError::NotRecorded`], which carries the call's result. Defaults:
    /// [`DEFAULT_RECORD_ATTEMPTS`], [`DEFAULT_RECORD_BACKOFF`].
    #[must_use]
    pub fn record_retries(mut self, attempts: u32, first_backoff: Duration) -> Self {
        self.record_attempts = attempts.max(1);
        self.record_backoff = first_backoff;
        self
    }

    /// How long a paused call waits for its decision; after that, resuming it fails with
    /// [`ApprovalError::Expired`].
    #[must_use]
    pub fn expire_after(mut self, expiry: Duration) -> Self {
        self.expiry = expiry;
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ApprovalStore> {
        &self.store
    }
}

impl fmt::Debug for DurableApprovals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DurableApprovals")
            .field("store", &self.store.name())
            .field("expiry", &self.expiry)
            .field("replica", &self.replica)
            .field("record_attempts", &self.record_attempts)
            .field("record_backoff", &self.record_backoff)
            .finish_non_exhaustive()
    }
}

/// What the body of a registry-owned tool leaves when the program it runs pauses as a whole
/// because one of the program's calls waits for a decision
/// ([`ToolRunContext::pause_run`](crate::ToolRunContext::pause_run)): the call that waits and
/// what the run's replay needs. The pipeline writes it to the store with the outer call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPause {
    /// The program's call that waits for the decision.
    pub awaiting: AwaitingCall,
    /// What a resumed run replays (the body's own format), as JSON text.
    pub journal: String,
    /// Why approval was asked.
    pub reason: Option<String>,
}

/// A resumed run, as the body of a registry-owned tool sees it
/// ([`ToolRunContext::resumed_run`](crate::ToolRunContext::resumed_run)): the journal it left
/// when it paused, the call that waited, and the decision for that call.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumedRun {
    pub(crate) journal: String,
    pub(crate) awaiting: AwaitingCall,
    pub(crate) decision: Approval,
}

impl ResumedRun {
    /// The journal the run left when it paused.
    pub fn journal(&self) -> &str {
        &self.journal
    }

    /// The program's call that waited.
    pub fn awaiting(&self) -> &AwaitingCall {
        &self.awaiting
    }

    /// The decision for that call, to set on it when the program makes it again
    /// ([`ToolCall::with_decision`](crate::ToolCall::with_decision)): it stands for the
    /// approval service's answer for that call only (same call id, tool and arguments).
    pub fn decision(&self) -> GivenDecision {
        GivenDecision {
            call_id: self.awaiting.call_id.clone(),
            tool: self.awaiting.tool.clone(),
            arguments: self.awaiting.arguments.clone(),
            decision: self.decision.clone(),
        }
    }
}

impl PendingRecord {
    /// The handle of this record (what [`ToolExecutionResult::pending`] carries), its text
    /// tagged with `key`.
    ///
    /// [`ToolExecutionResult::pending`]: crate::ToolExecutionResult::pending
    pub fn handle(&self, key: &ApprovalKey) -> PendingHandle {
        let mut handle = PendingHandle {
            id: self.id.clone(),
            tool: self.tool.clone(),
            arguments: tools_schema::deep::from_str(&self.arguments).unwrap_or(Value::Null),
            agent: self.agent.clone(),
            call_id: self.call_id.clone(),
            reason: self.reason.clone(),
            awaiting: self.awaiting.clone(),
            journal_sha256: self.journal.as_deref().map(sha256_hex),
            principal: self
                .principal
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok()),
            created_ms: self.created_ms,
            expires_ms: self.expires_ms,
            mac: self.mac.clone(),
            tag: String::new(),
        };
        handle.tag = hex(&tag_of(key, handle.body().as_bytes()));
        handle
    }
}

/// The keys of a handle's JSON body, in the order it is written.
const BODY_KEYS: [&str; 12] = [
    "id",
    "tool",
    "arguments",
    "agent",
    "call_id",
    "reason",
    "awaiting",
    "journal_sha256",
    "principal",
    "created_ms",
    "expires_ms",
    "mac",
];

impl PendingHandle {
    /// The MAC this handle's fields give under `key`, lowercase hex.
    pub(crate) fn expected_mac(&self, key: &ApprovalKey) -> String {
        let arguments = tools_schema::deep::to_canonical_string(&self.arguments);
        mac_hex(
            key,
            &MacFields {
                id: &self.id,
                tool: &self.tool,
                arguments: &arguments,
                agent: self.agent.as_deref(),
                call_id: &self.call_id,
                reason: self.reason.as_deref(),
                awaiting: self.awaiting.as_ref(),
                journal_sha256: self.journal_sha256.as_deref(),
                principal: self.principal.as_ref().map(principal_text).as_deref(),
                created_ms: self.created_ms,
                expires_ms: self.expires_ms,
            },
        )
    }

    /// Checks this handle against its MAC, then against `record` field by field: `Ok` only
    /// when the handle is exactly the one the runtime gave for that record.
    pub(crate) fn check(
        &self,
        key: &ApprovalKey,
        record: &PendingRecord,
    ) -> Result<(), ApprovalError> {
        if !constant_time_eq(self.expected_mac(key).as_bytes(), self.mac.as_bytes()) {
            return Err(ApprovalError::Mismatch {
                what: "its MAC (the handle was edited, or made with another key)",
            });
        }
        let differs = if self.tool != record.tool {
            Some("the tool")
        } else if tools_schema::deep::to_canonical_string(&self.arguments) != record.arguments {
            Some("the arguments")
        } else if self.agent != record.agent {
            Some("the agent scope")
        } else if self.call_id != record.call_id {
            Some("the call id")
        } else if self.awaiting != record.awaiting {
            Some("the program's awaited call")
        } else if self.journal_sha256 != record.journal.as_deref().map(sha256_hex) {
            Some("the program's journal")
        } else if self.principal.as_ref().map(principal_text) != record.principal {
            Some("the principal")
        } else if self.reason != record.reason
            || self.created_ms != record.created_ms
            || self.expires_ms != record.expires_ms
        {
            Some("the reason or the times")
        } else if !constant_time_eq(record.mac.as_bytes(), self.mac.as_bytes()) {
            Some("the stored MAC")
        } else {
            None
        };
        match differs {
            Some(what) => Err(ApprovalError::Mismatch { what }),
            None => Ok(()),
        }
    }

    /// The JSON body of the text form: the fields in [`BODY_KEYS`] order, compact, written
    /// without recursion (the arguments may be of any depth).
    fn body(&self) -> String {
        let mut out = String::with_capacity(256);
        let text = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
        let opt = |s: Option<&str>| s.map_or_else(|| "null".to_owned(), text);
        let awaiting = match &self.awaiting {
            None => "null".to_owned(),
            Some(call) => format!(
                "{{\"tool\":{},\"call_id\":{},\"arguments\":{}}}",
                text(&call.tool),
                text(&call.call_id),
                text(&call.arguments)
            ),
        };
        let values = [
            text(&self.id),
            text(&self.tool),
            tools_schema::deep::to_string(&self.arguments),
            opt(self.agent.as_deref()),
            text(&self.call_id),
            opt(self.reason.as_deref()),
            awaiting,
            opt(self.journal_sha256.as_deref()),
            self.principal
                .as_ref()
                .map_or_else(|| "null".to_owned(), principal_text),
            self.created_ms.to_string(),
            self.expires_ms.to_string(),
            text(&self.mac),
        ];
        out.push('{');
        for (i, (key, value)) in BODY_KEYS.iter().zip(values).enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(key);
            out.push_str("\":");
            out.push_str(&value);
        }
        out.push('}');
        out
    }

    /// The length of this handle's text form, in bytes.
    pub(crate) fn text_len(&self) -> usize {
        let body = self.body().len();
        HANDLE_PREFIX.len() + (body * 4).div_ceil(3) + 1 + self.tag.len()
    }

    /// Reads a handle's text, checking its tag with `key` over the raw bytes before anything
    /// is parsed.
    ///
    /// In order: the length (at most [`MAX_HANDLE_BYTES`], before anything else), surrounding
    /// whitespace trimmed, the `apv2.` prefix, the tag's form, the body's base64, the tag
    /// (`APPROVAL_MISMATCH` when it was not made with `key` over these bytes), and only then the
    /// JSON, which must be exactly what this build writes for those fields.
    ///
    /// # Errors
    ///
    /// [`ApprovalError::HandleInvalid`] saying what was wrong, or [`ApprovalError::Mismatch`]
    /// for a tag that does not verify.
    pub fn parse(text: &str, key: &ApprovalKey) -> Result<Self, ApprovalError> {
        let invalid = |why: String| ApprovalError::HandleInvalid { why };
        if text.len() > MAX_HANDLE_BYTES {
            return Err(invalid(format!(
                "it is {} bytes long; a handle is at most {MAX_HANDLE_BYTES}",
                text.len()
            )));
        }
        let text = text.trim();
        let Some(rest) = text.strip_prefix(HANDLE_PREFIX) else {
            if text.starts_with(OLD_HANDLE_PREFIX) {
                return Err(invalid(format!(
                    "it is a handle of the first form (`{OLD_HANDLE_PREFIX}`), which this build \
                     no longer reads; the call's current handle is in `paused_calls`"
                )));
            }
            return Err(invalid(format!("it does not start with `{HANDLE_PREFIX}`")));
        };
        let Some((body, tag)) = rest.rsplit_once('.') else {
            return Err(invalid("it has no `.` before its tag".to_owned()));
        };
        let tag = unhex32(tag)
            .ok_or_else(|| invalid("its tag is not 64 lowercase hexadecimal digits".to_owned()))?;
        let body = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|e| invalid(format!("its body is not unpadded base64url: {e}")))?;
        if !constant_time_eq(&tag_of(key, &body), &tag) {
            return Err(ApprovalError::Mismatch {
                what: "its tag (the text was edited, or made with another key)",
            });
        }
        // From here on the bytes are the runtime's own: made with the key.
        let body = std::str::from_utf8(&body)
            .map_err(|e| invalid(format!("its body is not UTF-8: {e}")))?;
        let value = tools_schema::deep::from_str(body)
            .map_err(|e| invalid(format!("its body is not JSON: {e}")))?;
        let handle = Self::from_body(value).map_err(|what| invalid(format!("its body {what}")))?;
        if handle.body() != body {
            return Err(invalid(
                "its body is not written as this build writes a handle".to_owned(),
            ));
        }
        Ok(PendingHandle {
            tag: hex(&tag),
            ..handle
        })
    }

    /// The handle whose body is `value` (its tag still to be set), or what is wrong with it.
    fn from_body(value: Value) -> Result<Self, String> {
        let Value::Object(mut map) = value else {
            return Err("is not a JSON object".to_owned());
        };
        if map.len() != BODY_KEYS.len() || BODY_KEYS.iter().any(|k| !map.contains_key(*k)) {
            return Err(format!(
                "does not have exactly the keys {}",
                BODY_KEYS.join(", ")
            ));
        }
        let mut take = |key: &str| map.remove(key).unwrap_or(Value::Null);
        let string = |key: &str, v: Value| match v {
            Value::String(s) => Ok(s),
            _ => Err(format!("has a `{key}` that is not a string")),
        };
        let optional = |key: &str, v: Value| match v {
            Value::Null => Ok(None),
            Value::String(s) => Ok(Some(s)),
            _ => Err(format!("has a `{key}` that is neither a string nor null")),
        };
        let number = |key: &str, v: Value| {
            v.as_u64()
                .ok_or_else(|| format!("has a `{key}` that is not a whole number"))
        };
        let id = string("id", take("id"))?;
        let tool = string("tool", take("tool"))?;
        let arguments = take("arguments");
        let agent = optional("agent", take("agent"))?;
        let call_id = string("call_id", take("call_id"))?;
        let reason = optional("reason", take("reason"))?;
        let awaiting = match take("awaiting") {
            Value::Null => None,
            other => Some(
                serde_json::from_value::<AwaitingCall>(other)
                    .map_err(|e| format!("has an `awaiting` that is not a call: {e}"))?,
            ),
        };
        let journal_sha256 = optional("journal_sha256", take("journal_sha256"))?;
        let principal = match take("principal") {
            Value::Null => None,
            other => Some(
                serde_json::from_value::<Principal>(other)
                    .map_err(|e| format!("has a `principal` that is not one: {e}"))?,
            ),
        };
        let created_ms = number("created_ms", take("created_ms"))?;
        let expires_ms = number("expires_ms", take("expires_ms"))?;
        let mac = string("mac", take("mac"))?;
        Ok(PendingHandle {
            id,
            tool,
            arguments,
            agent,
            call_id,
            reason,
            awaiting,
            journal_sha256,
            principal,
            created_ms,
            expires_ms,
            mac,
            tag: String::new(),
        })
    }
}

impl fmt::Display for PendingHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(HANDLE_PREFIX)?;
        f.write_str(&URL_SAFE_NO_PAD.encode(self.body()))?;
        f.write_str(".")?;
        f.write_str(&self.tag)
    }
}

/// The tag of a handle text's body under `key`.
fn tag_of(key: &ApprovalKey, body: &[u8]) -> [u8; 32] {
    let mut mac = key.mac();
    mac.update(TAG_CONTEXT);
    mac.update(body);
    mac.finalize().into_bytes().into()
}

/// 32 bytes from 64 lowercase hex digits.
fn unhex32(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

/// The fields a MAC binds, in the order they are fed to it.
pub(crate) struct MacFields<'a> {
    pub(crate) id: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a str,
    pub(crate) agent: Option<&'a str>,
    pub(crate) call_id: &'a str,
    pub(crate) reason: Option<&'a str>,
    pub(crate) awaiting: Option<&'a AwaitingCall>,
    pub(crate) journal_sha256: Option<&'a str>,
    pub(crate) principal: Option<&'a str>,
    pub(crate) created_ms: u64,
    pub(crate) expires_ms: u64,
}

/// HMAC-SHA256 over `fields`, each written with its length first (so no two different sets of
/// fields feed the same bytes), lowercase hex.
pub(crate) fn mac_hex(key: &ApprovalKey, fields: &MacFields<'_>) -> String {
    let mut mac = key.mac();
    let mut put = |bytes: &[u8]| {
        mac.update(&(bytes.len() as u64).to_be_bytes());
        mac.update(bytes);
    };
    put(MAC_CONTEXT);
    put(fields.id.as_bytes());
    put(fields.tool.as_bytes());
    put(fields.arguments.as_bytes());
    put_option(&mut put, fields.agent);
    put(fields.call_id.as_bytes());
    put_option(&mut put, fields.reason);
    match fields.awaiting {
        None => put(b"-"),
        Some(awaiting) => {
            put(b"+");
            put(awaiting.tool.as_bytes());
            put(awaiting.call_id.as_bytes());
            put(awaiting.arguments.as_bytes());
        }
    }
    put_option(&mut put, fields.journal_sha256);
    put_option(&mut put, fields.principal);
    put(&fields.created_ms.to_be_bytes());
    put(&fields.expires_ms.to_be_bytes());
    hex(&mac.finalize().into_bytes())
}

fn put_option(put: &mut impl FnMut(&[u8]), field: Option<&str>) {
    match field {
        None => put(b"-"),
        Some(text) => {
            put(b"+");
            put(text.as_bytes());
        }
    }
}

/// The canonical JSON text of a principal, as a record keeps it and the MAC binds it (keys in
/// code-point order).
pub(crate) fn principal_text(principal: &Principal) -> String {
    match serde_json::to_value(principal) {
        Ok(value) => tools_schema::deep::to_canonical_string(&value),
        Err(_) => "null".to_owned(),
    }
}

/// SHA-256 of `text`, lowercase hex.
pub(crate) fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    use fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// Equality whose time does not depend on where two MACs first differ.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A fresh id for a paused call: 128 random bits, lowercase hex.
pub(crate) fn fresh_id() -> Result<String, StoreError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Backend {
        store: "runtime",
        source: format!("no randomness for a pending call's id: {e}").into(),
    })?;
    Ok(hex(&bytes))
}

/// The name a runtime writes on the calls it claims when none was given
/// ([`DurableApprovals::replica`]): `host:pid`.
fn default_replica() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_owned());
    format!("{host}:{}", std::process::id())
}

/// A time in milliseconds since the Unix epoch, as an operator reads it (RFC 3339, UTC).
pub(crate) fn time_text(ms: u64) -> String {
    let at = UNIX_EPOCH.checked_add(Duration::from_millis(ms));
    match at {
        Some(at) => humantime::format_rfc3339_millis(at).to_string(),
        None => format!("{ms} ms after the Unix epoch"),
    }
}

/// Where a paused call stands, as an operator reads it ([`ToolRuntime::paused_calls`]).
///
/// [`ToolRuntime::paused_calls`]: crate::ToolRuntime::paused_calls
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallStatus {
    /// Waiting for its decision.
    Pending,
    /// It waited past its expiry; it never ran and never will.
    Expired,
    /// Claimed by a resume that has not recorded its end: its body is running, or, when the
    /// process that claimed it is gone, *in doubt* (it may or may not have run). It is never
    /// resumed again; an operator settles it by hand
    /// ([`ToolRuntime::settle_pending`](crate::ToolRuntime::settle_pending)).
    Resuming {
        /// When it was claimed (`None` for a claim a build that kept no claims wrote).
        since_ms: Option<u64>,
        /// Who claimed it ([`DurableApprovals::replica`]).
        by: Option<String>,
    },
    /// Resumed to its end, or settled as done by hand.
    Done {
        /// Its result's failure code or `ok` (`None` when settled by hand).
        outcome: Option<String>,
        /// The operator's note, when settled by hand.
        note: Option<String>,
    },
    /// Settled as failed by hand.
    Failed {
        /// The operator's note.
        note: Option<String>,
    },
    /// Cancelled before anyone resumed it.
    Cancelled,
}

impl CallStatus {
    /// The status of `call` at `now_ms`.
    pub fn of(call: &StoredCall, now_ms: u64) -> Self {
        match call.state {
            CallState::Pending if now_ms >= call.record.expires_ms => CallStatus::Expired,
            CallState::Pending => CallStatus::Pending,
            CallState::Resuming => CallStatus::Resuming {
                since_ms: call.claim.as_ref().map(|c| c.at_ms),
                by: call.claim.as_ref().map(|c| c.by.clone()),
            },
            CallState::Done => CallStatus::Done {
                outcome: call.outcome.clone(),
                note: call.note.clone(),
            },
            CallState::Failed => CallStatus::Failed {
                note: call.note.clone(),
            },
            CallState::Cancelled => CallStatus::Cancelled,
        }
    }

    /// The state's one-word name: `pending`, `expired`, `resuming`, `done`, `failed`,
    /// `cancelled`.
    pub fn name(&self) -> &'static str {
        match self {
            CallStatus::Pending => "pending",
            CallStatus::Expired => "expired",
            CallStatus::Resuming { .. } => "resuming",
            CallStatus::Done { .. } => "done",
            CallStatus::Failed { .. } => "failed",
            CallStatus::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for CallStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallStatus::Pending => f.write_str("pending"),
            CallStatus::Expired => f.write_str("expired (it waited past its expiry and never ran)"),
            CallStatus::Resuming { since_ms, by } => {
                f.write_str("resuming")?;
                if let Some(since) = since_ms {
                    write!(f, " since {}", time_text(*since))?;
                }
                if let Some(by) = by {
                    write!(f, " by `{by}`")?;
                }
                f.write_str(
                    ": its resume has not recorded an end (still running, or in doubt if that \
                     process is gone: settle it by hand)",
                )
            }
            CallStatus::Done {
                note: Some(note), ..
            } => write!(f, "done (settled by hand: {note})"),
            CallStatus::Done {
                outcome: Some(outcome),
                ..
            } => write!(f, "done (outcome `{outcome}`)"),
            CallStatus::Done { .. } => f.write_str("done"),
            CallStatus::Failed { note: Some(note) } => {
                write!(f, "failed (settled by hand: {note})")
            }
            CallStatus::Failed { note: None } => f.write_str("failed (settled by hand)"),
            CallStatus::Cancelled => f.write_str("cancelled"),
        }
    }
}

/// One paused call as an operator sees it ([`ToolRuntime::paused_calls`]): its handle (what
/// was reviewed), where it stands, and what its resume wrote.
///
/// [`ToolRuntime::paused_calls`]: crate::ToolRuntime::paused_calls
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PausedCall {
    /// The call's handle, checked against the key: resume or cancel it with this while it is
    /// pending.
    pub handle: PendingHandle,
    /// Where it stands.
    pub status: CallStatus,
    /// The arguments a reviewer edited it to, when it was resumed with edits.
    pub edited_arguments: Option<Value>,
    /// When it reached `done`, `failed` or `cancelled`, in milliseconds since the Unix epoch.
    pub settled_ms: Option<u64>,
}

impl PausedCall {
    pub(crate) fn of(call: StoredCall, handle: PendingHandle, now_ms: u64) -> Self {
        let status = CallStatus::of(&call, now_ms);
        let edited_arguments = call
            .claim
            .and_then(|c| c.edited_arguments)
            .and_then(|text| tools_schema::deep::from_str(&text).ok());
        PausedCall {
            handle,
            status,
            edited_arguments,
            settled_ms: call.settled_ms,
        }
    }
}

/// Why a call could not pause, or a paused call could not be resumed or cancelled. Each has a
/// stable [`code`](Self::code).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApprovalError {
    /// [`ApprovalKey::new`] was given too few bytes.
    #[error("an approval key needs at least {MIN_KEY_BYTES} bytes; this one has {len}")]
    KeyTooShort {
        /// How many bytes it had.
        len: usize,
    },
    /// The runtime keeps no paused calls: it was built without
    /// [`durable_approvals`](crate::presentation::ToolRuntimeBuilder::durable_approvals).
    #[error(
        "this runtime keeps no paused calls: build it with `durable_approvals` to pause and \
         resume calls"
    )]
    NotDurable,
    /// The call that asked was made from an agent scope without a name, which another process
    /// could not find again: make agent scopes that pause calls with
    /// [`ToolRuntime::agent_scope_named`](crate::ToolRuntime::agent_scope_named).
    #[error(
        "the call was made from an agent scope without a name, which a resume could not find \
         again; make the scope with `agent_scope_named`"
    )]
    UnnamedScope,
    /// [`ToolRuntime::resume`](crate::ToolRuntime::resume) was given
    /// [`Approval::Deferred`](crate::hooks::Approval::Deferred), which decides nothing.
    #[error("a resume needs a decision (approved or denied); `Deferred` decides nothing")]
    NoDecision,
    /// The handle's text could not be read; or, when a call pauses, its handle's text would be
    /// longer than [`MAX_HANDLE_BYTES`] and could not be read back (the call does not pause).
    #[error("the handle cannot be read: {why}")]
    HandleInvalid {
        /// What was wrong.
        why: String,
    },
    /// The handle is not the one the runtime gave for this paused call: nothing ran.
    #[error("the handle does not match the paused call: {what} differs; nothing was run")]
    Mismatch {
        /// What differs.
        what: &'static str,
    },
    /// The store has no paused call of this id (never paused here, or purged).
    #[error("no paused call has the id `{id}`")]
    Unknown {
        /// The id.
        id: String,
    },
    /// The call waited past its expiry.
    #[error("the paused call `{id}` expired; nothing was run")]
    Expired {
        /// The id.
        id: String,
    },
    /// The call is not pending: it was resumed before (done, or failed), or a resume of it is
    /// under way or ended with its process (`resuming`). The status says which.
    #[error("the paused call `{id}` is not pending: it is {status}; it is not run twice")]
    AlreadyResumed {
        /// The id.
        id: String,
        /// Where the call stands.
        status: CallStatus,
    },
    /// The resumed call ran, and its end could not be written to the store after every retry
    /// ([`DurableApprovals::record_retries`]): the store still has it `resuming`, in doubt,
    /// until an operator settles it. The call's result is here ([`ApprovalError::result`]).
    #[error(
        "the paused call `{id}` ran (its result: {}), and the store could not record its end \
         after {attempts} attempts: it stays `resuming` (in doubt) until it is settled by hand",
        outcome_of(result)
    )]
    NotRecorded {
        /// The id.
        id: String,
        /// The call's one result.
        result: Box<ToolExecutionResult>,
        /// How many times the end was written.
        attempts: u32,
        /// The store's last failure.
        #[source]
        source: StoreError,
    },
    /// Edited arguments were given for a Code Mode program's call: its replay makes the call
    /// with the arguments the program computes, which are the reviewed ones. Approve or deny
    /// it as it is. Nothing was claimed; the call stays pending.
    #[error(
        "the paused call `{id}` is a Code Mode program's call to `{tool}`; its arguments cannot \
         be edited (the program's replay would make the reviewed call): approve or deny it as it \
         is; it stays pending"
    )]
    EditRefused {
        /// The id.
        id: String,
        /// The program's tool.
        tool: String,
    },
    /// The edited arguments do not validate against the tool's input schema. Nothing was
    /// claimed; the call stays pending.
    #[error(
        "the edited arguments for `{tool}` are not valid: {violations}; the call stays pending"
    )]
    EditInvalid {
        /// The tool.
        tool: String,
        /// What is wrong, in the validator's words.
        violations: String,
    },
    /// A call was to be settled by hand that is not in doubt (not `resuming`), or without a
    /// note saying why.
    #[error("the paused call `{id}` cannot be settled by hand: {why}")]
    NotInDoubt {
        /// The id.
        id: String,
        /// Why not.
        why: String,
    },
    /// The call was cancelled.
    #[error("the paused call `{id}` was cancelled; nothing was run")]
    Cancelled {
        /// The id.
        id: String,
    },
    /// The call was made from an agent scope of this name, and this runtime has no live agent
    /// scope of that name ([`ToolRuntime::named_agent_scope`](crate::ToolRuntime::agent_scope_named)).
    /// The call stays paused.
    #[error(
        "the paused call was made from the agent scope `{agent}`, and no live agent scope has \
         that name here; it stays paused"
    )]
    ScopeMissing {
        /// The agent scope's name.
        agent: String,
    },
    /// The store failed.
    #[error("the approval store failed")]
    Store(#[from] StoreError),
}

impl ApprovalError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            ApprovalError::KeyTooShort { .. } => codes::APPROVAL_KEY,
            ApprovalError::NotDurable | ApprovalError::UnnamedScope => codes::APPROVAL_NOT_DURABLE,
            ApprovalError::NoDecision => codes::APPROVAL_NO_DECISION,
            ApprovalError::HandleInvalid { .. } => codes::APPROVAL_HANDLE_INVALID,
            ApprovalError::Mismatch { .. } => codes::APPROVAL_MISMATCH,
            ApprovalError::Unknown { .. } => codes::APPROVAL_UNKNOWN,
            ApprovalError::Expired { .. } => codes::APPROVAL_EXPIRED,
            ApprovalError::AlreadyResumed { .. } => codes::APPROVAL_ALREADY_RESUMED,
            ApprovalError::NotRecorded { .. } => codes::APPROVAL_NOT_RECORDED,
            ApprovalError::EditRefused { .. } => codes::APPROVAL_EDIT_REFUSED,
            ApprovalError::EditInvalid { .. } => codes::APPROVAL_EDIT_INVALID,
            ApprovalError::NotInDoubt { .. } => codes::APPROVAL_NOT_IN_DOUBT,
            ApprovalError::Cancelled { .. } => codes::APPROVAL_CANCELLED,
            ApprovalError::ScopeMissing { .. } => codes::APPROVAL_SCOPE_MISSING,
            ApprovalError::Store(_) => codes::APPROVAL_STORE,
        }
    }

    /// The call's result, for [`NotRecorded`](Self::NotRecorded): the call ran, and this is
    /// what it produced.
    pub fn result(&self) -> Option<&ToolExecutionResult> {
        match self {
            ApprovalError::NotRecorded { result, .. } => Some(result),
            _ => None,
        }
    }

    /// The call's result, for [`NotRecorded`](Self::NotRecorded), taken out of the error.
    pub fn into_result(self) -> Option<ToolExecutionResult> {
        match self {
            ApprovalError::NotRecorded { result, .. } => Some(*result),
            _ => None,
        }
    }
}

/// How a result reads in a message: `ok`, or its failure code.
fn outcome_of(result: &ToolExecutionResult) -> &str {
    result.code().unwrap_or("ok")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &ApprovalKey) -> PendingRecord {
        let arguments = r#"{"path":"a.txt","text":"hi"}"#.to_owned();
        let mac = mac_hex(
            key,
            &MacFields {
                id: "00ff",
                tool: "write",
                arguments: &arguments,
                agent: Some("bot"),
                call_id: "c1",
                reason: None,
                awaiting: None,
                journal_sha256: None,
                principal: None,
                created_ms: 1,
                expires_ms: 2,
            },
        );
        PendingRecord {
            id: "00ff".into(),
            tool: "write".into(),
            arguments,
            agent: Some("bot".into()),
            call_id: "c1".into(),
            reason: None,
            awaiting: None,
            journal: None,
            created_ms: 1,
            expires_ms: 2,
            mac,
            principal: None,
        }
    }

    #[test]
    fn a_handle_round_trips_through_its_text_and_checks_against_its_record() {
        let key = ApprovalKey::new([7u8; 32]).unwrap();
        let record = record(&key);
        let handle = record.handle(&key);
        let text = handle.to_string();
        assert!(text.starts_with("apv2."), "{text}");
        let back = PendingHandle::parse(&text, &key).unwrap();
        assert_eq!(back, handle);
        back.check(&key, &record).unwrap();
        // Key order in the arguments is not part of what was reviewed.
        let mut reordered = back.clone();
        reordered.arguments = serde_json::json!({"text": "hi", "path": "a.txt"});
        reordered.check(&key, &record).unwrap();
    }

    #[test]
    fn an_edited_handle_or_another_key_is_a_mismatch() {
        let key = ApprovalKey::new([7u8; 32]).unwrap();
        let record = record(&key);
        let handle = record.handle(&key);
        let mut edits: Vec<PendingHandle> = Vec::new();
        let mut h = handle.clone();
        h.arguments["path"] = "/etc/passwd".into();
        edits.push(h);
        let mut h = handle.clone();
        h.tool = "delete".into();
        edits.push(h);
        let mut h = handle.clone();
        h.agent = Some("other".into());
        edits.push(h);
        let mut h = handle.clone();
        h.call_id = "c2".into();
        edits.push(h);
        let mut h = handle.clone();
        h.expires_ms = u64::MAX;
        edits.push(h);
        let mut h = handle.clone();
        h.mac = "0".repeat(64);
        edits.push(h);
        for edited in edits {
            let err = edited.check(&key, &record).unwrap_err();
            assert_eq!(err.code(), "APPROVAL_MISMATCH", "{edited:?}");
        }
        let other = ApprovalKey::new([8u8; 32]).unwrap();
        assert_eq!(
            handle.check(&other, &record).unwrap_err().code(),
            "APPROVAL_MISMATCH"
        );
        // A record edited in the store no longer matches a true handle.
        let mut stored = record.clone();
        stored.arguments = r#"{"path":"b.txt","text":"hi"}"#.into();
        let err = handle.check(&key, &stored).unwrap_err();
        assert!(err.to_string().contains("the arguments"), "{err}");
    }

    #[test]
    fn bad_handle_text_is_a_clear_error() {
        let key = ApprovalKey::new([7u8; 32]).unwrap();
        let good = record(&key).handle(&key).to_string();
        let (body, _) = good.rsplit_once('.').unwrap();
        let tagged = |body: &[u8]| {
            format!(
                "apv2.{}.{}",
                URL_SAFE_NO_PAD.encode(body),
                hex(&tag_of(&key, body))
            )
        };
        for (text, code, says) in [
            (
                "xyz".to_owned(),
                "APPROVAL_HANDLE_INVALID",
                "does not start with `apv2.`",
            ),
            (
                "apv1.eyJpZCI6MX0".to_owned(),
                "APPROVAL_HANDLE_INVALID",
                "first form",
            ),
            (
                "apv2.abc".to_owned(),
                "APPROVAL_HANDLE_INVALID",
                "no `.` before its tag",
            ),
            (
                "apv2.abc.12".to_owned(),
                "APPROVAL_HANDLE_INVALID",
                "64 lowercase",
            ),
            (
                format!("apv2.!!!.{}", "0".repeat(64)),
                "APPROVAL_HANDLE_INVALID",
                "base64url",
            ),
            (
                format!("{body}.{}", "0".repeat(64)),
                "APPROVAL_MISMATCH",
                "its tag",
            ),
            (tagged(b"not json"), "APPROVAL_HANDLE_INVALID", "not JSON"),
            (
                tagged(br#"{"id":1}"#),
                "APPROVAL_HANDLE_INVALID",
                "exactly the keys",
            ),
        ] {
            let err = PendingHandle::parse(&text, &key).unwrap_err();
            assert_eq!(err.code(), code, "{text}: {err}");
            assert!(err.to_string().contains(says), "{text}: {err}");
        }
        // Another key's handle fails its tag.
        let other = ApprovalKey::new([8u8; 32]).unwrap();
        assert_eq!(
            PendingHandle::parse(&good, &other).unwrap_err().code(),
            "APPROVAL_MISMATCH"
        );
        assert_eq!(
            ApprovalKey::new(b"short").unwrap_err().code(),
            "APPROVAL_KEY"
        );
    }

    #[test]
    fn a_text_is_checked_before_it_is_parsed_and_one_text_is_one_handle() {
        let key = ApprovalKey::new([7u8; 32]).unwrap();
        // 100,000 unclosed brackets (and the most the size cap allows) without the key: refused
        // at the tag, with no JSON read (a parse of it took hundreds of MiB before).
        for len in [100_000, MAX_HANDLE_BYTES / 2] {
            let deep = "[".repeat(len);
            let text = format!(
                "apv2.{}.{}",
                URL_SAFE_NO_PAD.encode(deep.as_bytes()),
                "0".repeat(64)
            );
            let err = PendingHandle::parse(&text, &key).unwrap_err();
            assert_eq!(err.code(), "APPROVAL_MISMATCH", "{len}");
        }
        // The length is judged before trimming: whitespace does not buy room.
        let padded = format!("{}{}", " ".repeat(MAX_HANDLE_BYTES), "apv2.x.y");
        let err = PendingHandle::parse(&padded, &key).unwrap_err();
        assert!(err.to_string().contains("at most"), "{err}");
        // A body with the right tag but a key twice (or any other writing of the same fields)
        // is refused: only the runtime's own writing is a handle.
        let record = record(&key);
        let body = record.handle(&key).body();
        let twice = body.replacen("{\"id\":\"00ff\",", "{\"id\":\"00ff\",\"id\":\"00ff\",", 1);
        assert_ne!(twice, body);
        let spaced = body.replacen(',', ", ", 1);
        for variant in [twice, spaced] {
            let text = format!(
                "apv2.{}.{}",
                URL_SAFE_NO_PAD.encode(variant.as_bytes()),
                hex(&tag_of(&key, variant.as_bytes()))
            );
            let err = PendingHandle::parse(&text, &key).unwrap_err();
            assert_eq!(err.code(), "APPROVAL_HANDLE_INVALID", "{variant}: {err}");
        }
        // Deep arguments made by the runtime round-trip.
        let mut deep = record.clone();
        deep.arguments = format!("{{\"a\":{}1{}}}", "[".repeat(5_000), "]".repeat(5_000));
        let handle = deep.handle(&key);
        let text = handle.to_string();
        assert_eq!(handle.text_len(), text.len());
        let back = PendingHandle::parse(&text, &key).unwrap();
        assert_eq!(back.to_string(), text);
        tools_schema::deep::drop_value(back.arguments);
        tools_schema::deep::drop_value(handle.arguments);
    }
}
