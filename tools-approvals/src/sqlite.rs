//! [`SqliteStore`]: paused calls in one SQLite file, for a service on one machine (several
//! processes may share the file).
//!
//! The file is in WAL mode (readers do not wait for the writer) with `synchronous = FULL`: each
//! commit is flushed to disk before the store answers. `NORMAL` would be enough for a crash of
//! the process, but a power cut could then lose the last commits, and the lost commit may be a
//! claim whose body already ran: after the reboot the call would be pending again and could run
//! twice. One `fsync` a pause and two a resume is the price of "once".
//!
//! Each method runs on Tokio's blocking pool (`spawn_blocking`; rusqlite is synchronous) over
//! one connection behind a mutex, so the statements of one store run one at a time. A claim, a
//! cancel and a settlement are one `BEGIN IMMEDIATE` transaction each: the conditional `UPDATE` and, when it
//! moved nothing, the read that says why, with the write lock held, so two processes sharing the
//! file never both win. Another process holding the lock is waited for up to [`BUSY_TIMEOUT`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use tools_runtime::approvals::{
    ApprovalStore, CallQuery, Claim, PendingRecord, Settle, Settled, StoreError, StoredCall,
    Transition,
};

use crate::error::Error;
use crate::row::{
    RECORD_COLUMNS, RawRecord, RawState, RowValues, STATE_COLUMNS, STATES, cursor,
    filter_condition, inserted, query_limit, query_time, state_of, stored_call, why_not_moved,
};

/// The name of this store in messages.
const STORE: &str = "sqlite";

/// The version of the schema this build writes and reads (`PRAGMA user_version`). Version 1
/// (no claims, settlements or `failed` state) is migrated to it when the file is opened.
pub const SQLITE_SCHEMA_VERSION: i64 = 2;

/// How long a statement waits for another connection's write lock before it fails.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The table of version 2, named `{table}`. `STRICT` makes SQLite refuse a value of the wrong
/// type.
const TABLE_V2: &str = "
CREATE TABLE {table} (
    id               TEXT PRIMARY KEY NOT NULL,
    tool             TEXT NOT NULL,
    arguments        TEXT NOT NULL,
    agent            TEXT,
    call_id          TEXT NOT NULL,
    reason           TEXT,
    awaiting         TEXT,
    journal          TEXT,
    created_ms       INTEGER NOT NULL,
    expires_ms       INTEGER NOT NULL,
    mac              TEXT NOT NULL,
    principal        TEXT,
    state            TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ({states})),
    outcome          TEXT,
    claimed_ms       INTEGER,
    claimed_by       TEXT,
    edited_arguments TEXT,
    settled_ms       INTEGER,
    note             TEXT
) STRICT;
";

/// The indexes of version 2: listings by state, oldest first (the review queue among them), and
/// purging the expired.
const INDEXES_V2: &str = "
CREATE INDEX pending_calls_state ON pending_calls (state, created_ms, id);
CREATE INDEX pending_calls_expiry ON pending_calls (expires_ms);
";

/// The table of version 2 made from one of version 1: SQLite cannot change a `CHECK`, so the
/// rows are copied into a new table that then takes the old one's name (in the migration's
/// transaction: all or nothing).
const MIGRATE_V1: &str = "
INSERT INTO pending_calls_v2 (id, tool, arguments, agent, call_id, reason, awaiting, journal,
                              created_ms, expires_ms, mac, state, outcome)
    SELECT id, tool, arguments, agent, call_id, reason, awaiting, journal,
           created_ms, expires_ms, mac, state, outcome FROM pending_calls;
DROP TABLE pending_calls;
ALTER TABLE pending_calls_v2 RENAME TO pending_calls;
";

/// The text of table `table` of version 2.
fn table_v2(table: &str) -> String {
    TABLE_V2
        .replace("{table}", table)
        .replace("{states}", STATES)
}

/// Paused calls in a SQLite file. See the [module](self) for how it keeps them.
///
/// Cloning it shares the connection.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens the store in the SQLite file at `path`, creating the file and its schema when they
    /// do not exist. It blocks (briefly; up to [`BUSY_TIMEOUT`] while another process holds the
    /// file's write lock): call it at start-up, or from `spawn_blocking`.
    ///
    /// # Errors
    ///
    /// [`Error::Open`] when the file cannot be opened or set up (a folder that does not exist,
    /// no permission, not a SQLite file), [`Error::SchemaVersion`] when a newer build of this
    /// crate wrote it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref().to_path_buf();
        let open_err = |doing: &'static str| {
            let path = path.clone();
            move |source| Error::Open {
                path,
                doing,
                source,
            }
        };
        let mut conn = Connection::open(&path).map_err(open_err("opening the file"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(open_err("setting the busy timeout"))?;
        // Persistent in the file; a no-op when it is in WAL mode already.
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(open_err("setting WAL mode"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), %mode, "the SQLite approval store is not in WAL mode");
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open_err("setting synchronous = FULL"))?;
        migrate(&mut conn).map_err(|e| match e {
            Migration::Sqlite(source) => open_err("creating the schema")(source),
            Migration::Newer(error) => error,
        })?;
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path,
                conn: Mutex::new(conn),
            }),
        })
    }

    /// The file this store keeps its calls in.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `work` on the connection: on Tokio's blocking pool when called inside a Tokio
    /// runtime, else on this thread.
    fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, StoreError>> {
        let inner = self.inner.clone();
        let job = move || work(&mut lock(&inner.conn));
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => Box::pin(async move {
                handle
                    .spawn_blocking(job)
                    .await
                    .map_err(|source| Error::Task { source }.into_store(STORE))?
            }),
            Err(_) => Box::pin(std::future::ready(job())),
        }
    }
}

/// The connection, after a panic while it was held too: a transaction the panic left open was
/// rolled back when it dropped.
fn lock(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    conn.lock().unwrap_or_else(PoisonError::into_inner)
}

enum Migration {
    Sqlite(rusqlite::Error),
    Newer(Error),
}

impl From<rusqlite::Error> for Migration {
    fn from(e: rusqlite::Error) -> Self {
        Migration::Sqlite(e)
    }
}

/// Creates the schema in a new file, migrates one of version 1; refuses a file of a newer
/// version.
fn migrate(conn: &mut Connection) -> Result<(), Migration> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    match version {
        0 => {
            tx.execute_batch(&table_v2("pending_calls"))?;
            tx.execute_batch(INDEXES_V2)?;
            tx.pragma_update(None, "user_version", SQLITE_SCHEMA_VERSION)?;
        }
        1 => {
            tx.execute_batch(&table_v2("pending_calls_v2"))?;
            tx.execute_batch(MIGRATE_V1)?;
            tx.execute_batch(INDEXES_V2)?;
            tx.pragma_update(None, "user_version", SQLITE_SCHEMA_VERSION)?;
        }
        SQLITE_SCHEMA_VERSION => {}
        found => {
            return Err(Migration::Newer(Error::SchemaVersion {
                store: STORE,
                found,
                supported: SQLITE_SCHEMA_VERSION,
            }));
        }
    }
    tx.commit()?;
    Ok(())
}

/// A statement's failure as the trait's error.
fn failed(doing: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |source| Error::Sqlite { doing, source }.into_store(STORE)
}

/// The record of a row whose first columns are [`RECORD_COLUMNS`].
fn raw_record(row: &Row<'_>) -> rusqlite::Result<RawRecord> {
    Ok(RawRecord {
        id: row.get(0)?,
        tool: row.get(1)?,
        arguments: row.get(2)?,
        agent: row.get(3)?,
        call_id: row.get(4)?,
        reason: row.get(5)?,
        awaiting: row.get(6)?,
        journal: row.get(7)?,
        created_ms: row.get(8)?,
        expires_ms: row.get(9)?,
        mac: row.get(10)?,
        principal: row.get(11)?,
    })
}

/// The state columns of a row whose columns [`RECORD_COLUMNS`] then [`STATE_COLUMNS`] are.
fn raw_state(row: &Row<'_>) -> rusqlite::Result<RawState> {
    Ok(RawState {
        state: row.get(12)?,
        outcome: row.get(13)?,
        claimed_ms: row.get(14)?,
        claimed_by: row.get(15)?,
        edited_arguments: row.get(16)?,
        settled_ms: row.get(17)?,
        note: row.get(18)?,
    })
}

/// The whole call of a row of [`RECORD_COLUMNS`] then [`STATE_COLUMNS`].
fn raw_call(row: &Row<'_>) -> rusqlite::Result<(RawRecord, RawState)> {
    Ok((raw_record(row)?, raw_state(row)?))
}

/// Where a transition takes a pending call.
enum Target<'a> {
    /// `resuming`, with the claim, when not expired at the claim's time.
    Claim(&'a Claim),
    /// `cancelled` at this time, expired or not.
    Cancel(i64),
}

/// `pending` -> `target`, in one immediate transaction.
fn transition(
    conn: &mut Connection,
    id: &str,
    target: Target<'_>,
    doing: &'static str,
) -> Result<Transition, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(failed(doing))?;
    let (moved, now_ms) = match target {
        Target::Claim(claim) => {
            let now = query_time(claim.at_ms);
            let moved = tx
                .prepare_cached(&format!(
                    "UPDATE pending_calls SET state = 'resuming', claimed_ms = ?2, \
                     claimed_by = ?3, edited_arguments = ?4 \
                     WHERE id = ?1 AND state = 'pending' AND expires_ms > ?2 \
                     RETURNING {RECORD_COLUMNS}"
                ))
                .and_then(|mut st| {
                    st.query_row(
                        params![id, now, claim.by, claim.edited_arguments],
                        raw_record,
                    )
                    .optional()
                })
                .map_err(failed(doing))?;
            (moved, Some(now))
        }
        Target::Cancel(at_ms) => {
            let moved = tx
                .prepare_cached(&format!(
                    "UPDATE pending_calls SET state = 'cancelled', settled_ms = ?2 \
                     WHERE id = ?1 AND state = 'pending' RETURNING {RECORD_COLUMNS}"
                ))
                .and_then(|mut st| st.query_row(params![id, at_ms], raw_record).optional())
                .map_err(failed(doing))?;
            (moved, None)
        }
    };
    let answer = match moved {
        Some(raw) => Transition::Moved(Box::new(raw.into_record(STORE)?)),
        None => {
            let found = tx
                .prepare_cached("SELECT state, expires_ms FROM pending_calls WHERE id = ?1")
                .and_then(|mut st| {
                    st.query_row([id], |row| Ok((row.get(0)?, row.get(1)?)))
                        .optional()
                })
                .map_err(failed(doing))?;
            // With the write lock held, a pending call that did not move has expired.
            why_not_moved(STORE, id, found, now_ms)?.unwrap_or(Transition::Expired)
        }
    };
    tx.commit().map_err(failed(doing))?;
    Ok(answer)
}

impl ApprovalStore for SqliteStore {
    fn name(&self) -> &'static str {
        STORE
    }

    fn insert<'a>(&'a self, record: &'a PendingRecord) -> BoxFuture<'a, Result<(), StoreError>> {
        let record = record.clone();
        self.run(move |conn| {
            let values = RowValues::of(&record, STORE)?;
            let written = conn
                .prepare_cached(&format!(
                    "INSERT INTO pending_calls ({RECORD_COLUMNS}) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) \
                     ON CONFLICT (id) DO NOTHING"
                ))
                .and_then(|mut st| {
                    st.execute(params![
                        record.id,
                        record.tool,
                        record.arguments,
                        record.agent,
                        record.call_id,
                        record.reason,
                        values.awaiting,
                        record.journal,
                        values.created_ms,
                        values.expires_ms,
                        record.mac,
                        record.principal,
                    ])
                })
                .map_err(failed("write a paused call"))?;
            inserted(STORE, &record.id, written as u64)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredCall>, StoreError>> {
        let id = id.to_owned();
        self.run(move |conn| {
            let found = conn
                .prepare_cached(&format!(
                    "SELECT {RECORD_COLUMNS}, {STATE_COLUMNS} FROM pending_calls WHERE id = ?1"
                ))
                .and_then(|mut st| st.query_row([&id], raw_call).optional())
                .map_err(failed("read a paused call"))?;
            found
                .map(|(raw, state)| stored_call(STORE, raw, state))
                .transpose()
        })
    }

    fn claim<'a>(
        &'a self,
        id: &'a str,
        claim: &'a Claim,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        let id = id.to_owned();
        let claim = claim.clone();
        self.run(move |conn| transition(conn, &id, Target::Claim(&claim), "claim a paused call"))
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        let id = id.to_owned();
        self.run(move |conn| {
            conn.prepare_cached(
                "UPDATE pending_calls SET state = 'pending', claimed_ms = NULL, \
                 claimed_by = NULL, edited_arguments = NULL WHERE id = ?1 AND state = 'resuming'",
            )
            .and_then(|mut st| st.execute([&id]))
            .map_err(failed("release a claimed call"))?;
            Ok(())
        })
    }

    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let id = id.to_owned();
        let outcome = outcome.to_owned();
        self.run(move |conn| {
            conn.prepare_cached(
                "UPDATE pending_calls SET state = 'done', outcome = ?2, settled_ms = ?3 \
                 WHERE id = ?1 AND state = 'resuming'",
            )
            .and_then(|mut st| st.execute(params![id, outcome, query_time(at_ms)]))
            .map_err(failed("mark a resumed call done"))?;
            Ok(())
        })
    }

    fn settle<'a>(
        &'a self,
        id: &'a str,
        settle: Settle,
        note: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Settled, StoreError>> {
        let id = id.to_owned();
        let note = note.to_owned();
        self.run(move |conn| {
            let doing = "settle a call in doubt";
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(failed(doing))?;
            let moved = tx
                .prepare_cached(
                    "UPDATE pending_calls SET state = ?2, note = ?3, settled_ms = ?4 \
                     WHERE id = ?1 AND state = 'resuming'",
                )
                .and_then(|mut st| {
                    st.execute(params![
                        id,
                        settle.state().as_str(),
                        note,
                        query_time(at_ms)
                    ])
                })
                .map_err(failed(doing))?;
            let answer = if moved == 1 {
                Settled::Moved
            } else {
                let found: Option<String> = tx
                    .prepare_cached("SELECT state FROM pending_calls WHERE id = ?1")
                    .and_then(|mut st| st.query_row([&id], |row| row.get(0)).optional())
                    .map_err(failed(doing))?;
                match found {
                    None => Settled::Unknown,
                    Some(state) => Settled::NotResuming(state_of(STORE, &id, &state)?),
                }
            };
            tx.commit().map_err(failed(doing))?;
            Ok(answer)
        })
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        let id = id.to_owned();
        self.run(move |conn| {
            transition(
                conn,
                &id,
                Target::Cancel(query_time(at_ms)),
                "cancel a paused call",
            )
        })
    }

    fn calls<'a>(
        &'a self,
        query: &'a CallQuery,
    ) -> BoxFuture<'a, Result<Vec<StoredCall>, StoreError>> {
        let condition = filter_condition(query.filter, query_time(query.now_ms));
        let (after_ms, after_id) = cursor(query.after.as_ref());
        let limit = query_limit(query.limit);
        self.run(move |conn| {
            let rows = conn
                .prepare_cached(&format!(
                    "SELECT {RECORD_COLUMNS}, {STATE_COLUMNS} FROM pending_calls \
                     WHERE {condition} AND (created_ms, id) > (?1, ?2) \
                     ORDER BY created_ms, id LIMIT ?3"
                ))
                .and_then(|mut st| {
                    st.query_map(params![after_ms, after_id, limit], raw_call)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(failed("list the paused calls"))?;
            rows.into_iter()
                .map(|(raw, state)| stored_call(STORE, raw, state))
                .collect()
        })
    }

    fn purge<'a>(&'a self, now_ms: u64) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.run(move |conn| {
            let gone = conn
                .prepare_cached(
                    "DELETE FROM pending_calls \
                     WHERE (state = 'pending' AND expires_ms <= ?1) \
                     OR (state IN ('done', 'failed', 'cancelled') AND created_ms < ?1)",
                )
                .and_then(|mut st| st.execute([query_time(now_ms)]))
                .map_err(failed("purge finished and expired calls"))?;
            Ok(gone as u64)
        })
    }
}
