//! Where paused calls are kept: the [`ApprovalStore`] trait, its answers, and [`MemoryStore`],
//! the store of one process (tests, examples; nothing survives the process). The SQLite and
//! PostgreSQL stores are the `tools-approvals` crate.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use futures::future::BoxFuture;

use super::runtime::lock;
use serde::{Deserialize, Serialize};

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

/// What a store keeps of one paused call. Every field is bound by [`mac`](Self::mac); the store
/// keeps it as it was written and the runtime checks it again before it resumes anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRecord {
    /// The paused call's id: 32 lowercase hex digits, random.
    pub id: String,
    /// The tool called.
    pub tool: String,
    /// The call's arguments, canonical JSON text (keys in code-point order).
    pub arguments: String,
    /// The name of the agent scope the call was made from; `None` for the global scope.
    pub agent: Option<String>,
    /// The model's call id.
    pub call_id: String,
    /// Why approval was asked, as the asking listener said.
    pub reason: Option<String>,
    /// For a paused Code Mode run, the program's call that waits for the decision.
    pub awaiting: Option<AwaitingCall>,
    /// For a paused Code Mode run, what the run's replay needs (its journal), as JSON text.
    pub journal: Option<String>,
    /// When the call paused, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it stops waiting, in milliseconds since the Unix epoch.
    pub expires_ms: u64,
    /// HMAC-SHA256 over every field above, lowercase hex.
    pub mac: String,
}

/// Where a paused call stands in its store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallState {
    /// Waiting for its decision.
    Pending,
    /// Claimed by a resume, which has not finished (or whose process ended before it did: the
    /// body may or may not have run, so the call is never resumed again).
    Resuming,
    /// Resumed; its result was returned.
    Done,
    /// Cancelled before anyone resumed it.
    Cancelled,
}

impl CallState {
    /// The state's name as stores write it: `pending`, `resuming`, `done`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallState::Pending => "pending",
            CallState::Resuming => "resuming",
            CallState::Done => "done",
            CallState::Cancelled => "cancelled",
        }
    }

    /// The state a store wrote as [`as_str`](Self::as_str).
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => CallState::Pending,
            "resuming" => CallState::Resuming,
            "done" => CallState::Done,
            "cancelled" => CallState::Cancelled,
            _ => return None,
        })
    }
}

/// A paused call as its store has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredCall {
    /// What was written when the call paused.
    pub record: PendingRecord,
    /// Where it stands.
    pub state: CallState,
    /// For a call resumed to its end: its result's failure code, or `ok`.
    pub outcome: Option<String>,
}

/// The answer of a store asked to move a pending call on ([`ApprovalStore::claim`],
/// [`ApprovalStore::cancel`]). Only [`Moved`](Transition::Moved) changed anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// The call was pending and not expired, and has moved on; here is its record.
    Moved(Box<PendingRecord>),
    /// No call has this id.
    Unknown,
    /// The call is pending but expired.
    Expired,
    /// The call is not pending.
    NotPending(CallState),
}

/// A store failed, or holds what it cannot read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The backend failed (I/O, the database, the connection).
    #[error("the {store} store failed")]
    Backend {
        /// Which store (`sqlite`, `postgres`, ...).
        store: &'static str,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A row the store holds cannot be read back as a paused call.
    #[error("the {store} store holds a paused call `{id}` it cannot read: {what}")]
    Corrupt {
        /// Which store.
        store: &'static str,
        /// The call's id.
        id: String,
        /// What is wrong with it.
        what: String,
    },
    /// A call of this id is stored already (ids are random: this is a store shared wrongly).
    #[error("the {store} store already holds a paused call `{id}`")]
    Duplicate {
        /// Which store.
        store: &'static str,
        /// The id.
        id: String,
    },
}

/// Where paused calls are kept. Every method is one atomic step of the store; a store shared
/// by several processes (several replicas on one PostgreSQL) must make [`claim`](Self::claim)
/// succeed for one caller only.
///
/// The states move one way: `pending` -> `resuming` (claim) -> `done` (finish), `pending` ->
/// `cancelled` (cancel), and `resuming` -> `pending` (release, for a resume that could not
/// start: its agent scope is missing here). The implementations in this workspace share one
/// conformance test (`tools-approvals`' tests): a new store should pass it too.
pub trait ApprovalStore: Send + Sync + 'static {
    /// The store's name in messages (`memory`, `sqlite`, `postgres`).
    fn name(&self) -> &'static str;

    /// Writes a new pending call; durable when the future resolves.
    fn insert<'a>(&'a self, record: &'a PendingRecord) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The call of this id, in whatever state.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredCall>, StoreError>>;

    /// `pending` -> `resuming`, when the call is pending and `now_ms` is before its expiry; one
    /// caller only wins a race.
    fn claim<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>>;

    /// `resuming` -> `pending`: a claimed call whose resume could not start goes back.
    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    /// `resuming` -> `done`, with the result's failure code or `ok`.
    fn finish<'a>(&'a self, id: &'a str, outcome: &'a str)
    -> BoxFuture<'a, Result<(), StoreError>>;

    /// `pending` -> `cancelled` (expired or not).
    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Transition, StoreError>>;

    /// The calls pending and not expired at `now_ms`, oldest first, at most `limit`: a review
    /// queue.
    fn pending<'a>(
        &'a self,
        now_ms: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<PendingRecord>, StoreError>>;

    /// Deletes every call that expired before `now_ms` and every call done or cancelled that
    /// paused before it; returns how many.
    fn purge<'a>(&'a self, now_ms: u64) -> BoxFuture<'a, Result<u64, StoreError>>;
}

/// The store of one process: a map behind a lock. Nothing survives the process; use it in
/// tests and examples, and a store of `tools-approvals` in a service.
#[derive(Default)]
pub struct MemoryStore {
    calls: Mutex<HashMap<String, StoredCall>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("calls", &lock(&self.calls).len())
            .finish()
    }
}

impl ApprovalStore for MemoryStore {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn insert<'a>(&'a self, record: &'a PendingRecord) -> BoxFuture<'a, Result<(), StoreError>> {
        let mut calls = lock(&self.calls);
        let result = if calls.contains_key(&record.id) {
            Err(StoreError::Duplicate {
                store: "memory",
                id: record.id.clone(),
            })
        } else {
            calls.insert(
                record.id.clone(),
                StoredCall {
                    record: record.clone(),
                    state: CallState::Pending,
                    outcome: None,
                },
            );
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredCall>, StoreError>> {
        let found = lock(&self.calls).get(id).cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn claim<'a>(
        &'a self,
        id: &'a str,
        now_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        let moved = self.moved(id, Some(now_ms), CallState::Resuming);
        Box::pin(std::future::ready(Ok(moved)))
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        if let Some(call) = lock(&self.calls).get_mut(id)
            && call.state == CallState::Resuming
        {
            call.state = CallState::Pending;
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        if let Some(call) = lock(&self.calls).get_mut(id)
            && call.state == CallState::Resuming
        {
            call.state = CallState::Done;
            call.outcome = Some(outcome.to_owned());
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Transition, StoreError>> {
        let moved = self.moved(id, None, CallState::Cancelled);
        Box::pin(std::future::ready(Ok(moved)))
    }

    fn pending<'a>(
        &'a self,
        now_ms: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<PendingRecord>, StoreError>> {
        let mut out: Vec<PendingRecord> = lock(&self.calls)
            .values()
            .filter(|c| c.state == CallState::Pending && now_ms < c.record.expires_ms)
            .map(|c| c.record.clone())
            .collect();
        out.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        out.truncate(limit);
        Box::pin(std::future::ready(Ok(out)))
    }

    fn purge<'a>(&'a self, now_ms: u64) -> BoxFuture<'a, Result<u64, StoreError>> {
        let mut calls = lock(&self.calls);
        let before = calls.len();
        calls.retain(|_, c| !purged(c, now_ms));
        let gone = (before - calls.len()) as u64;
        Box::pin(std::future::ready(Ok(gone)))
    }
}

impl MemoryStore {
    /// `pending` -> `to`, when pending (and, with `now_ms`, not expired).
    fn moved(&self, id: &str, now_ms: Option<u64>, to: CallState) -> Transition {
        let mut calls = lock(&self.calls);
        let Some(call) = calls.get_mut(id) else {
            return Transition::Unknown;
        };
        if call.state != CallState::Pending {
            return Transition::NotPending(call.state);
        }
        if now_ms.is_some_and(|now| now >= call.record.expires_ms) {
            return Transition::Expired;
        }
        call.state = to;
        Transition::Moved(Box::new(call.record.clone()))
    }
}

/// Whether [`ApprovalStore::purge`] at `now_ms` deletes `call`: expired, or finished and paused
/// before then. Every store applies this rule.
pub fn purged(call: &StoredCall, now_ms: u64) -> bool {
    call.record.expires_ms <= now_ms
        || (matches!(call.state, CallState::Done | CallState::Cancelled)
            && call.record.created_ms < now_ms)
}
