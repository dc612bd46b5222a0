//! What both stores share: the columns of a paused call, and the conversions between a
//! [`PendingRecord`] and a row (times as signed 64-bit integers, the awaited call as JSON
//! text).

use tools_runtime::approvals::{
    AwaitingCall, CallState, PendingRecord, StoreError, StoredCall, Transition,
};

use crate::error::Error;

/// The record's columns, in the order every statement of both stores reads and writes them.
pub(crate) const RECORD_COLUMNS: &str =
    "id, tool, arguments, agent, call_id, reason, awaiting, journal, created_ms, expires_ms, mac";

/// A row as the database gives it, before it is checked.
pub(crate) struct RawRecord {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) arguments: String,
    pub(crate) agent: Option<String>,
    pub(crate) call_id: String,
    pub(crate) reason: Option<String>,
    pub(crate) awaiting: Option<String>,
    pub(crate) journal: Option<String>,
    pub(crate) created_ms: i64,
    pub(crate) expires_ms: i64,
    pub(crate) mac: String,
}

impl RawRecord {
    /// The record this row holds, or why it holds none.
    pub(crate) fn into_record(self, store: &'static str) -> Result<PendingRecord, StoreError> {
        let corrupt = |what: String| StoreError::Corrupt {
            store,
            id: self.id.clone(),
            what,
        };
        let awaiting = match &self.awaiting {
            None => None,
            Some(text) => Some(
                serde_json::from_str::<AwaitingCall>(text)
                    .map_err(|e| corrupt(format!("its awaited call is not readable: {e}")))?,
            ),
        };
        let created_ms = u64::try_from(self.created_ms)
            .map_err(|_| corrupt(format!("its created_ms {} is negative", self.created_ms)))?;
        let expires_ms = u64::try_from(self.expires_ms)
            .map_err(|_| corrupt(format!("its expires_ms {} is negative", self.expires_ms)))?;
        Ok(PendingRecord {
            id: self.id,
            tool: self.tool,
            arguments: self.arguments,
            agent: self.agent,
            call_id: self.call_id,
            reason: self.reason,
            awaiting,
            journal: self.journal,
            created_ms,
            expires_ms,
            mac: self.mac,
        })
    }
}

/// A record as the columns to write, checked: the times fit a signed 64-bit integer.
pub(crate) struct RowValues {
    pub(crate) awaiting: Option<String>,
    pub(crate) created_ms: i64,
    pub(crate) expires_ms: i64,
}

impl RowValues {
    pub(crate) fn of(record: &PendingRecord, store: &'static str) -> Result<Self, StoreError> {
        let awaiting = match &record.awaiting {
            None => None,
            Some(call) => Some(
                serde_json::to_string(call).map_err(|e| StoreError::Corrupt {
                    store,
                    id: record.id.clone(),
                    what: format!("its awaited call cannot be written as JSON: {e}"),
                })?,
            ),
        };
        Ok(RowValues {
            awaiting,
            created_ms: stored_time(store, "created_ms", record.created_ms)?,
            expires_ms: stored_time(store, "expires_ms", record.expires_ms)?,
        })
    }
}

/// A time to write: refused past `i64::MAX` rather than wrapped.
fn stored_time(store: &'static str, field: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| {
        Error::TimeRange {
            store,
            field,
            value,
        }
        .into_store(store)
    })
}

/// A time to compare with: every stored time is at most `i64::MAX`, so a later `now` compares
/// with each of them as `i64::MAX` does (every call expired, `created_ms < now` for all but a
/// call created at `i64::MAX` itself, which has expired too and is purged all the same).
pub(crate) fn query_time(now_ms: u64) -> i64 {
    i64::try_from(now_ms).unwrap_or(i64::MAX)
}

/// A limit to pass to SQL.
pub(crate) fn query_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// The state a row holds.
pub(crate) fn state_of(store: &'static str, id: &str, text: &str) -> Result<CallState, StoreError> {
    CallState::parse(text).ok_or_else(|| StoreError::Corrupt {
        store,
        id: id.to_owned(),
        what: format!("its state `{text}` is none of pending, resuming, done, cancelled"),
    })
}

/// The whole stored call from its record and the state and outcome columns.
pub(crate) fn stored_call(
    store: &'static str,
    raw: RawRecord,
    state: &str,
    outcome: Option<String>,
) -> Result<StoredCall, StoreError> {
    let state = state_of(store, &raw.id, state)?;
    Ok(StoredCall {
        record: raw.into_record(store)?,
        state,
        outcome,
    })
}

/// Why a call that a transition's `UPDATE` did not move stayed: `None` when it is pending and
/// live after all (it was released in between: try again).
pub(crate) fn why_not_moved(
    store: &'static str,
    id: &str,
    found: Option<(String, i64)>,
    now_ms: Option<i64>,
) -> Result<Option<Transition>, StoreError> {
    let Some((state, expires_ms)) = found else {
        return Ok(Some(Transition::Unknown));
    };
    Ok(match state_of(store, id, &state)? {
        CallState::Pending if now_ms.is_some_and(|now| now >= expires_ms) => {
            Some(Transition::Expired)
        }
        CallState::Pending => None,
        other => Some(Transition::NotPending(other)),
    })
}

/// The answer of an `INSERT ... ON CONFLICT (id) DO NOTHING` that wrote `written` rows.
pub(crate) fn inserted(store: &'static str, id: &str, written: u64) -> Result<(), StoreError> {
    if written == 0 {
        return Err(StoreError::Duplicate {
            store,
            id: id.to_owned(),
        });
    }
    Ok(())
}
