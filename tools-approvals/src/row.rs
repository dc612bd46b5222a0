//! What both stores share: the columns of a paused call, and the conversions between a
//! [`PendingRecord`] and a row (times as signed 64-bit integers, the awaited call as JSON
//! text).

use tools_runtime::approvals::{
    AwaitingCall, CallFilter, CallState, Claim, PendingRecord, StoreError, StoredCall, Transition,
};

use crate::error::Error;

/// The record's columns, in the order every statement of both stores reads and writes them.
pub(crate) const RECORD_COLUMNS: &str = "id, tool, arguments, agent, call_id, reason, awaiting, journal, created_ms, expires_ms, mac, \
     principal";

/// The columns after the record's, in the order every statement of both stores reads them: where
/// the call stands, and what its claim and its settlement wrote.
pub(crate) const STATE_COLUMNS: &str =
    "state, outcome, claimed_ms, claimed_by, edited_arguments, settled_ms, note";

/// The states a row may hold, as the schema's `CHECK` lists them.
pub(crate) const STATES: &str = "'pending', 'resuming', 'done', 'failed', 'cancelled'";

/// The state columns of a row as the database gives them, before they are checked.
pub(crate) struct RawState {
    pub(crate) state: String,
    pub(crate) outcome: Option<String>,
    pub(crate) claimed_ms: Option<i64>,
    pub(crate) claimed_by: Option<String>,
    pub(crate) edited_arguments: Option<String>,
    pub(crate) settled_ms: Option<i64>,
    pub(crate) note: Option<String>,
}

/// The `WHERE` condition of the calls `filter` passes at `now_ms` (a number this crate made,
/// written into the text: every filter's statement then takes the same parameters).
pub(crate) fn filter_condition(filter: CallFilter, now_ms: i64) -> String {
    match filter {
        CallFilter::All => "TRUE".to_owned(),
        CallFilter::Pending => format!("state = 'pending' AND expires_ms > {now_ms}"),
        CallFilter::Expired => format!("state = 'pending' AND expires_ms <= {now_ms}"),
        CallFilter::Resuming => "state = 'resuming'".to_owned(),
        CallFilter::Done => "state = 'done'".to_owned(),
        CallFilter::Failed => "state = 'failed'".to_owned(),
        CallFilter::Cancelled => "state = 'cancelled'".to_owned(),
    }
}

/// The cursor of a listing as parameters: after `(created_ms, id)`, or before every call.
pub(crate) fn cursor(after: Option<&(u64, String)>) -> (i64, String) {
    match after {
        Some((created_ms, id)) => (query_time(*created_ms), id.clone()),
        None => (-1, String::new()),
    }
}

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
    pub(crate) principal: Option<String>,
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
            principal: self.principal,
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
        what: format!("its state `{text}` is none of pending, resuming, done, failed, cancelled"),
    })
}

/// The whole stored call from its record and its state columns.
pub(crate) fn stored_call(
    store: &'static str,
    raw: RawRecord,
    columns: RawState,
) -> Result<StoredCall, StoreError> {
    let id = raw.id.clone();
    let state = state_of(store, &id, &columns.state)?;
    let time = |field: &str, value: Option<i64>| {
        value
            .map(|ms| {
                u64::try_from(ms).map_err(|_| StoreError::Corrupt {
                    store,
                    id: id.clone(),
                    what: format!("its {field} {ms} is negative"),
                })
            })
            .transpose()
    };
    let claimed_ms = time("claimed_ms", columns.claimed_ms)?;
    let settled_ms = time("settled_ms", columns.settled_ms)?;
    // A claim written by a build that kept none has neither time nor name.
    let claim = match (claimed_ms, columns.claimed_by) {
        (Some(at_ms), Some(by)) => Some(Claim {
            at_ms,
            by,
            edited_arguments: columns.edited_arguments,
        }),
        _ => None,
    };
    Ok(StoredCall {
        record: raw.into_record(store)?,
        state,
        outcome: columns.outcome,
        claim,
        settled_ms,
        note: columns.note,
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
