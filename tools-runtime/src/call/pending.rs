//! A paused call as its result carries it: the [`Pending`] note, the [`PendingHandle`] to
//! resume it with, and the program's call a paused run waits on ([`AwaitingCall`]). Only the
//! data lives here, so the result types can carry it; making, writing, reading and checking a
//! handle is in [`approvals`](crate::durable::approvals).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tool_call::Principal;

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

/// The continuation of a paused call: what a host shows a reviewer, persists, and passes to
/// [`ToolRuntime::resume`](crate::ToolRuntime::resume).
///
/// It carries exactly what was reviewed (tool, arguments, agent scope, call id and, for a Code
/// Mode run, the program's call that waits) and a MAC over all of it made with the runtime's
/// [`ApprovalKey`], so a handle edited to other arguments, another tool, another agent or
/// another call is refused and nothing runs.
///
/// Its text form ([`Display`](std::fmt::Display)) is one line: `apv2.`, the handle's JSON in
/// unpadded base64url, `.`, and an HMAC-SHA256 tag over that JSON's bytes in hex. Read it back
/// with [`ToolRuntime::parse_handle`](crate::ToolRuntime::parse_handle) (or
/// [`PendingHandle::parse`] with the key): the tag is checked over the raw bytes *before*
/// anything is parsed, so a text not made with the key costs one pass of base64 and HMAC over
/// at most [`MAX_HANDLE_BYTES`], and no JSON of it is read. The JSON is then read and must be
/// written exactly as this build writes it (no second text is the same handle).
///
/// [`ApprovalKey`]: crate::approvals::ApprovalKey
/// [`MAX_HANDLE_BYTES`]: crate::approvals::MAX_HANDLE_BYTES
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
    /// Who the call was made for (the reviewer sees who asked; the resumed call is made for
    /// the same principal).
    pub principal: Option<Principal>,
    /// When the call paused, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it stops waiting, in milliseconds since the Unix epoch.
    pub expires_ms: u64,
    /// HMAC-SHA256 over the fields above, lowercase hex.
    pub mac: String,
    /// HMAC-SHA256 over the text form's body, lowercase hex.
    pub(crate) tag: String,
}

/// The call a paused Code Mode run waits on: the program's tool call that asked for approval,
/// which is what a person reviews.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AwaitingCall {
    /// The tool the program called.
    pub tool: String,
    /// The program's call id for it (`<run's call id>:code:<n>`).
    pub call_id: String,
    /// Its arguments, canonical JSON text (keys in code-point order).
    pub arguments: String,
}
