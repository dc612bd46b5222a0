//! Where paused calls are kept: the [`ApprovalStore`] trait, its answers, and [`MemoryStore`],
//! the store of one process (tests, examples; nothing survives the process). The SQLite and
//! PostgreSQL stores are the `tools-approvals` crate.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;

use crate::call::pending::AwaitingCall;

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
    /// Who the call was made for ([`Principal`](crate::Principal)), canonical JSON text.
    pub principal: Option<String>,
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
    /// Resumed; its result was returned (or an operator settled it as done by hand,
    /// [`ApprovalStore::settle`]).
    Done,
    /// An operator settled a call in doubt as failed by hand ([`ApprovalStore::settle`]).
    Failed,
    /// Cancelled before anyone resumed it.
    Cancelled,
}

impl CallState {
    /// The state's name as stores write it: `pending`, `resuming`, `done`, `failed`,
    /// `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallState::Pending => "pending",
            CallState::Resuming => "resuming",
            CallState::Done => "done",
            CallState::Failed => "failed",
            CallState::Cancelled => "cancelled",
        }
    }

    /// Whether the call has reached its end (`done`, `failed` or `cancelled`): nothing moves it
    /// any more.
    pub fn is_settled(self) -> bool {
        matches!(
            self,
            CallState::Done | CallState::Failed | CallState::Cancelled
        )
    }

    /// The state a store wrote as [`as_str`](Self::as_str).
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "pending" => CallState::Pending,
            "resuming" => CallState::Resuming,
            "done" => CallState::Done,
            "failed" => CallState::Failed,
            "cancelled" => CallState::Cancelled,
            _ => return None,
        })
    }
}

/// What a resume writes when it claims a call ([`ApprovalStore::claim`]), kept with the call
/// from then on: when, by whom, and the arguments a reviewer edited the call to, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// When the resume claimed the call, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Who claimed it: the replica's name ([`DurableApprovals::replica`](crate::approvals::DurableApprovals::replica)).
    pub by: String,
    /// The arguments the reviewer edited the call to, canonical JSON text; `None` when the call
    /// runs with the arguments it paused with.
    pub edited_arguments: Option<String>,
}

/// How an operator settles a call in doubt by hand ([`ApprovalStore::settle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Settle {
    /// The call's effect happened (the operator checked): it is `done`.
    Done,
    /// The call's effect did not happen, or is to be treated as not having happened: it is
    /// `failed`.
    Failed,
}

impl Settle {
    /// The state the call moves to.
    pub fn state(self) -> CallState {
        match self {
            Settle::Done => CallState::Done,
            Settle::Failed => CallState::Failed,
        }
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
    /// What the resume that claimed it wrote; `None` for a call never claimed (and for one
    /// claimed by a build that did not keep claims).
    pub claim: Option<Claim>,
    /// When it reached `done`, `failed` or `cancelled`, in milliseconds since the Unix epoch
    /// (`None` before, and for a call settled by a build that did not keep the time).
    pub settled_ms: Option<u64>,
    /// The operator's note, for a call settled by hand.
    pub note: Option<String>,
}

impl StoredCall {
    /// A call just paused: `pending`, nothing else known yet.
    pub fn pending(record: PendingRecord) -> Self {
        StoredCall {
            record,
            state: CallState::Pending,
            outcome: None,
            claim: None,
            settled_ms: None,
            note: None,
        }
    }
}

/// Which calls [`ApprovalStore::calls`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CallFilter {
    /// Every call, whatever its state.
    All,
    /// Pending and not expired: the review queue.
    Pending,
    /// Pending and expired: they wait for nobody, and never run.
    Expired,
    /// Claimed by a resume that has not recorded its end: running, or in doubt when the
    /// process that claimed it is gone.
    Resuming,
    /// Done.
    Done,
    /// Settled as failed.
    Failed,
    /// Cancelled.
    Cancelled,
}

impl CallFilter {
    /// Whether `call` passes this filter at `now_ms`. Every store applies this rule.
    pub fn matches(self, call: &StoredCall, now_ms: u64) -> bool {
        let expired = now_ms >= call.record.expires_ms;
        match self {
            CallFilter::All => true,
            CallFilter::Pending => call.state == CallState::Pending && !expired,
            CallFilter::Expired => call.state == CallState::Pending && expired,
            CallFilter::Resuming => call.state == CallState::Resuming,
            CallFilter::Done => call.state == CallState::Done,
            CallFilter::Failed => call.state == CallState::Failed,
            CallFilter::Cancelled => call.state == CallState::Cancelled,
        }
    }
}

/// A page of calls to list ([`ApprovalStore::calls`]): those passing `filter` at `now_ms`,
/// oldest first (by pause time, then id), after `after` when given, at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallQuery {
    /// Which calls.
    pub filter: CallFilter,
    /// The time `Pending` and `Expired` are judged at, in milliseconds since the Unix epoch.
    pub now_ms: u64,
    /// Only calls after this one in the listing's order: the `(created_ms, id)` of the last
    /// call of the previous page.
    pub after: Option<(u64, String)>,
    /// At most this many.
    pub limit: usize,
}

impl CallQuery {
    /// The first page of at most `limit` calls passing `filter` now.
    pub fn new(filter: CallFilter, limit: usize) -> Self {
        CallQuery {
            filter,
            now_ms: now_ms(),
            after: None,
            limit,
        }
    }

    /// The same, judged at `now_ms` (milliseconds since the Unix epoch) instead of now.
    #[must_use]
    pub fn at(mut self, now_ms: u64) -> Self {
        self.now_ms = now_ms;
        self
    }

    /// The next page: the calls after the one paused at `created_ms` with id `id` (the last
    /// of the previous page).
    #[must_use]
    pub fn after(mut self, created_ms: u64, id: impl Into<String>) -> Self {
        self.after = Some((created_ms, id.into()));
        self
    }

    /// Whether `call` belongs to this page's listing (its filter and its cursor; not the
    /// limit).
    pub fn admits(&self, call: &StoredCall) -> bool {
        self.filter.matches(call, self.now_ms)
            && self.after.as_ref().is_none_or(|(created_ms, id)| {
                (call.record.created_ms, call.record.id.as_str()) > (*created_ms, id.as_str())
            })
    }
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

/// The answer of a store asked to settle a call in doubt by hand ([`ApprovalStore::settle`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The call was `resuming` and is now settled.
    Moved,
    /// No call has this id.
    Unknown,
    /// The call is not `resuming`: in this state, unchanged.
    NotResuming(CallState),
}

/// Where paused calls are kept. Every method is one atomic step of the store; a store shared
/// by several processes (several replicas on one PostgreSQL) must make [`claim`](Self::claim)
/// succeed for one caller only.
///
/// The states move one way: `pending` -> `resuming` (claim) -> `done` (finish), `pending` ->
/// `cancelled` (cancel), `resuming` -> `done` or `failed` (settle, by an operator, for a call
/// in doubt), and `resuming` -> `pending` (release, for a resume that could not start: its
/// agent scope is missing here). The implementations in this workspace share one conformance
/// test (`tools-approvals`' tests): a new store should pass it too.
pub trait ApprovalStore: Send + Sync + 'static {
    /// The store's name in messages (`memory`, `sqlite`, `postgres`).
    fn name(&self) -> &'static str;

    /// Writes a new pending call; durable when the future resolves.
    fn insert<'a>(&'a self, record: &'a PendingRecord) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The call of this id, in whatever state.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredCall>, StoreError>>;

    /// `pending` -> `resuming`, when the call is pending and `claim.at_ms` is before its
    /// expiry, writing `claim` with it; one caller only wins a race.
    fn claim<'a>(
        &'a self,
        id: &'a str,
        claim: &'a Claim,
    ) -> BoxFuture<'a, Result<Transition, StoreError>>;

    /// `resuming` -> `pending`, the claim forgotten: a claimed call whose resume could not
    /// start goes back.
    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;

    /// `resuming` -> `done` at `at_ms`, with the result's failure code or `ok`. A call not
    /// `resuming` (settled by hand meanwhile) is left as it is.
    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// `resuming` -> `done` or `failed` at `at_ms`, with an operator's `note`: a call in doubt
    /// (its resume's process ended before it recorded the end) settled by hand.
    fn settle<'a>(
        &'a self,
        id: &'a str,
        settle: Settle,
        note: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Settled, StoreError>>;

    /// `pending` -> `cancelled` at `at_ms` (expired or not).
    fn cancel<'a>(
        &'a self,
        id: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>>;

    /// The calls `query` asks for, oldest first (by `created_ms`, then id), at most
    /// `query.limit`. [`CallQuery::admits`] is the rule.
    fn calls<'a>(
        &'a self,
        query: &'a CallQuery,
    ) -> BoxFuture<'a, Result<Vec<StoredCall>, StoreError>>;

    /// Deletes every call pending past its expiry at `now_ms` (it never ran) and every call
    /// `done`, `failed` or `cancelled` that paused before `now_ms`; returns how many. A call
    /// `resuming` is never deleted: its body may have run, and it stays until settled.
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
            calls.insert(record.id.clone(), StoredCall::pending(record.clone()));
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
        claim: &'a Claim,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        let moved = self.moved(id, Some(claim.at_ms), |call| {
            call.state = CallState::Resuming;
            call.claim = Some(claim.clone());
        });
        Box::pin(std::future::ready(Ok(moved)))
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        if let Some(call) = lock(&self.calls).get_mut(id)
            && call.state == CallState::Resuming
        {
            call.state = CallState::Pending;
            call.claim = None;
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        if let Some(call) = lock(&self.calls).get_mut(id)
            && call.state == CallState::Resuming
        {
            call.state = CallState::Done;
            call.outcome = Some(outcome.to_owned());
            call.settled_ms = Some(at_ms);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn settle<'a>(
        &'a self,
        id: &'a str,
        settle: Settle,
        note: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Settled, StoreError>> {
        let answer = match lock(&self.calls).get_mut(id) {
            None => Settled::Unknown,
            Some(call) if call.state != CallState::Resuming => Settled::NotResuming(call.state),
            Some(call) => {
                call.state = settle.state();
                call.note = Some(note.to_owned());
                call.settled_ms = Some(at_ms);
                Settled::Moved
            }
        };
        Box::pin(std::future::ready(Ok(answer)))
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        let moved = self.moved(id, None, |call| {
            call.state = CallState::Cancelled;
            call.settled_ms = Some(at_ms);
        });
        Box::pin(std::future::ready(Ok(moved)))
    }

    fn calls<'a>(
        &'a self,
        query: &'a CallQuery,
    ) -> BoxFuture<'a, Result<Vec<StoredCall>, StoreError>> {
        let mut out: Vec<StoredCall> = lock(&self.calls)
            .values()
            .filter(|c| query.admits(c))
            .cloned()
            .collect();
        out.sort_by(|a, b| {
            (a.record.created_ms, &a.record.id).cmp(&(b.record.created_ms, &b.record.id))
        });
        out.truncate(query.limit);
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
    /// `pending` -> what `apply` makes of it, when pending (and, with `now_ms`, not expired).
    fn moved(
        &self,
        id: &str,
        now_ms: Option<u64>,
        apply: impl FnOnce(&mut StoredCall),
    ) -> Transition {
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
        apply(call);
        Transition::Moved(Box::new(call.record.clone()))
    }
}

/// Whether [`ApprovalStore::purge`] at `now_ms` deletes `call`: pending past its expiry, or
/// settled (`done`, `failed`, `cancelled`) and paused before then. A call `resuming` never is.
/// Every store applies this rule.
pub fn purged(call: &StoredCall, now_ms: u64) -> bool {
    match call.state {
        CallState::Pending => call.record.expires_ms <= now_ms,
        CallState::Resuming => false,
        CallState::Done | CallState::Failed | CallState::Cancelled => {
            call.record.created_ms < now_ms
        }
    }
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Locks `mutex`, whether or not a holder panicked (every value kept behind one stays whole).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
