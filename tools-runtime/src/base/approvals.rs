//! Durable approvals' vocabulary: the settings ([`DurableApprovals`]), the key
//! ([`ApprovalKey`]), what a store keeps of a paused call ([`PendingRecord`]), the handle a host
//! shows and persists ([`PendingHandle`]), the MAC that binds them, and the errors
//! ([`ApprovalError`]). The store is in `base::store`; the pipeline pauses and resumes.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::error::codes;
use super::store::{ApprovalStore, AwaitingCall, PendingRecord, StoreError};

/// The shortest key [`ApprovalKey::new`] accepts, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// How long a paused call waits for its decision unless
/// [`DurableApprovals::expire_after`] says otherwise: seven days.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The largest handle text [`PendingHandle::from_str`] reads, in bytes (a handle carries the
/// call's arguments).
pub const MAX_HANDLE_BYTES: usize = 8 * 1024 * 1024;

/// What a handle's text starts with (the version of its form).
const HANDLE_PREFIX: &str = "apv1.";

/// What the MAC is computed over first: the form's version, so a MAC of another form never
/// verifies.
const MAC_CONTEXT: &[u8] = b"agent-tools/approval/v1";

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
        }
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
            .finish_non_exhaustive()
    }
}

/// A paused call, as its result carries it ([`ToolExecutionResult::pending`]).
///
/// [`ToolExecutionResult::pending`]: crate::ToolExecutionResult::pending
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub(crate) handle: Option<PendingHandle>,
    pub(crate) reason: Option<String>,
}

impl Pending {
    /// The handle to resume the call with. `None` for a call a Code Mode program made: the
    /// program's run pauses as a whole, and the `run_code` call's result carries the handle.
    pub fn handle(&self) -> Option<&PendingHandle> {
        self.handle.as_ref()
    }

    /// Why approval was asked, if the asking listener or the service said.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
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
    pub(crate) decision: super::hooks::Approval,
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

/// A person's decision for one call of a resumed program. Only the runtime makes one
/// ([`ResumedRun::decision`]); the pipeline takes it for the approval service's answer only for
/// a program's call of exactly that call id, tool and canonical arguments, and ignores it
/// otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenDecision {
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) arguments: String,
    pub(crate) decision: super::hooks::Approval,
}

impl PendingRecord {
    /// The handle of this record (what [`ToolExecutionResult::pending`] carries).
    ///
    /// [`ToolExecutionResult::pending`]: crate::ToolExecutionResult::pending
    pub fn handle(&self) -> PendingHandle {
        PendingHandle {
            id: self.id.clone(),
            tool: self.tool.clone(),
            arguments: tools_schema::deep::from_str(&self.arguments).unwrap_or(Value::Null),
            agent: self.agent.clone(),
            call_id: self.call_id.clone(),
            reason: self.reason.clone(),
            awaiting: self.awaiting.clone(),
            journal_sha256: self.journal.as_deref().map(sha256_hex),
            created_ms: self.created_ms,
            expires_ms: self.expires_ms,
            mac: self.mac.clone(),
        }
    }
}

/// The continuation of a paused call: what a host shows a reviewer, persists, and passes to
/// [`ToolRuntime::resume`](crate::ToolRuntime::resume).
///
/// Its text form ([`Display`](fmt::Display), [`FromStr`]) is `apv1.` followed by its JSON in
/// unpadded base64url; it also serializes as that JSON. It carries exactly what was reviewed
/// (tool, arguments, agent scope, call id and, for a Code Mode run, the program's call that
/// waits) and a MAC over all of it made with the runtime's [`ApprovalKey`], so a handle edited
/// to other arguments, another tool, another agent or another call is refused and nothing
/// runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendingHandle {
    /// The paused call's id in the store.
    pub id: String,
    /// The tool called.
    pub tool: String,
    /// The arguments as the call made them.
    pub arguments: Value,
    /// The name of the agent scope the call was made from; `None` for the global scope.
    pub agent: Option<String>,
    /// The model's call id.
    pub call_id: String,
    /// Why approval was asked.
    pub reason: Option<String>,
    /// For a paused Code Mode run, the program's call that waits for the decision.
    pub awaiting: Option<AwaitingCall>,
    /// For a paused Code Mode run, the SHA-256 of its journal, lowercase hex.
    pub journal_sha256: Option<String>,
    /// When the call paused, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it stops waiting, in milliseconds since the Unix epoch.
    pub expires_ms: u64,
    /// HMAC-SHA256 over the fields above, lowercase hex.
    pub mac: String,
}

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
}

impl fmt::Display for PendingHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let json = serde_json::to_vec(self).map_err(|_| fmt::Error)?;
        f.write_str(HANDLE_PREFIX)?;
        f.write_str(&URL_SAFE_NO_PAD.encode(json))
    }
}

impl FromStr for PendingHandle {
    type Err = ApprovalError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.len() > MAX_HANDLE_BYTES {
            return Err(ApprovalError::HandleInvalid {
                why: format!(
                    "it is {} bytes long; a handle is at most {MAX_HANDLE_BYTES}",
                    text.len()
                ),
            });
        }
        let Some(body) = text.strip_prefix(HANDLE_PREFIX) else {
            return Err(ApprovalError::HandleInvalid {
                why: format!("it does not start with `{HANDLE_PREFIX}`"),
            });
        };
        let json = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|e| ApprovalError::HandleInvalid {
                why: format!("its body is not unpadded base64url: {e}"),
            })?;
        let json = std::str::from_utf8(&json).map_err(|e| ApprovalError::HandleInvalid {
            why: format!("its body is not UTF-8: {e}"),
        })?;
        let value =
            tools_schema::deep::from_str(json).map_err(|e| ApprovalError::HandleInvalid {
                why: format!("its body is not JSON: {e}"),
            })?;
        PendingHandle::deserialize(value).map_err(|e| ApprovalError::HandleInvalid {
            why: format!("its body is not a handle: {e}"),
        })
    }
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

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
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
    /// The handle's text could not be read.
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
    /// The call was resumed before (or a resume of it is under way, or ended with its process).
    #[error("the paused call `{id}` was already resumed; it is not run twice")]
    AlreadyResumed {
        /// The id.
        id: String,
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
            ApprovalError::Cancelled { .. } => codes::APPROVAL_CANCELLED,
            ApprovalError::ScopeMissing { .. } => codes::APPROVAL_SCOPE_MISSING,
            ApprovalError::Store(_) => codes::APPROVAL_STORE,
        }
    }
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
        }
    }

    #[test]
    fn a_handle_round_trips_through_its_text_and_checks_against_its_record() {
        let key = ApprovalKey::new([7u8; 32]).unwrap();
        let record = record(&key);
        let handle = record.handle();
        let text = handle.to_string();
        assert!(text.starts_with("apv1."), "{text}");
        let back: PendingHandle = text.parse().unwrap();
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
        let handle = record.handle();
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
        for (text, says) in [
            ("xyz", "does not start with `apv1.`"),
            ("apv1.!!!", "not unpadded base64url"),
            ("apv1.bm90IGpzb24", "not JSON"),
            ("apv1.eyJpZCI6MX0", "not a handle"),
        ] {
            let err = text.parse::<PendingHandle>().unwrap_err();
            assert_eq!(err.code(), "APPROVAL_HANDLE_INVALID");
            assert!(err.to_string().contains(says), "{text}: {err}");
        }
        assert_eq!(
            ApprovalKey::new(b"short").unwrap_err().code(),
            "APPROVAL_KEY"
        );
    }
}
