//! [`PostgresStore`]: paused calls in one PostgreSQL table, shared by every replica of a
//! service.
//!
//! - **One winner.** A claim is one statement, `UPDATE ... SET state = 'resuming' WHERE id = $1
//!   AND state = 'pending' AND expires_ms > $2 RETURNING ...`: PostgreSQL locks the row, a
//!   second replica's `UPDATE` waits for the first to commit and then finds the call no longer
//!   pending, so two replicas never both win. When nothing moved, a plain read says why
//!   (unknown, expired, or its state); should that read find the call pending and live (it was
//!   released in between), the claim is tried again.
//! - **Listings** ([`calls`](ApprovalStore::calls), the review queue among them) are plain
//!   reads: they lock nothing and skip nothing, so every replica's queue shows every pending
//!   call, whatever another replica is claiming.
//! - **Version 1 tables** are migrated to version 2 when a store connects, under the same lock
//!   and only when the version read under it is 1, so replicas starting together migrate once.
//! - **The table** is created when missing, under a transaction-scoped advisory lock, so
//!   replicas starting together do not race on `CREATE TABLE IF NOT EXISTS` (which is not safe
//!   under concurrency by itself). A meta table holds the schema's version.
//! - **Times** are `BIGINT`: a time past `i64::MAX` is refused ([`Error::TimeRange`]) rather
//!   than wrapped. Ids sort in byte order (`COLLATE "C"`), as in the other stores.
//! - **No TLS.** [`PostgresStore::connect`] speaks plain TCP or a Unix socket (`host=/run/...`):
//!   use it on a local socket, a private network, or through a TLS-terminating proxy. For TLS,
//!   connect a client yourself with the TLS connector of your choice and hand it to
//!   [`PostgresStore::from_client`].
//! - **A broken connection** (the server restarted) fails the calls in flight; a store made by
//!   [`connect`](PostgresStore::connect) connects again on its next call. A store made
//!   [`from_client`](PostgresStore::from_client) cannot: make a new one. A claim whose answer
//!   was lost with the connection may have committed: that call then stays `resuming`, and is
//!   never run (rather than maybe twice).
//! - PostgreSQL's `TEXT` holds no NUL character: a call whose tool name, reason or agent name has
//!   one cannot pause (`APPROVAL_STORE`). Arguments are JSON text, which escapes it.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use tokio::task::JoinHandle;
use tokio_postgres::tls::NoTls;
use tokio_postgres::{Client, Config, Row, Statement};
use tools_runtime::approvals::{
    ApprovalStore, CallQuery, CallState, Claim, PendingRecord, Settle, Settled, StoreError,
    StoredCall, Transition,
};

use crate::error::Error;
use crate::row::{
    RECORD_COLUMNS, RawRecord, RawState, RowValues, STATE_COLUMNS, STATES, cursor,
    filter_condition, inserted, query_limit, query_time, state_of, stored_call, why_not_moved,
};

/// The name of this store in messages.
const STORE: &str = "postgres";

/// The version of the schema this build writes and reads (the meta table's `schema_version`).
/// Version 1 (no claims, settlements or `failed` state) is migrated to it when a store
/// connects.
pub const POSTGRES_SCHEMA_VERSION: i64 = 2;

/// The key of the advisory lock held while the schema is created (any number unlikely to be
/// another application's: "tools-ap" in ASCII).
const SCHEMA_LOCK: i64 = 0x746f_6f6c_732d_6170;

/// How many times a claim or a cancel reads a call pending and live after its `UPDATE` moved
/// nothing (a release in between) before it answers that the call was not pending.
const TRANSITION_TRIES: usize = 8;

/// Creates the tables when missing. One transaction: the advisory lock is released at its end.
const SCHEMA_V1: &str = r#"
BEGIN;
SELECT pg_advisory_xact_lock({lock});
CREATE TABLE IF NOT EXISTS tools_approvals_meta (
    name  TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO tools_approvals_meta (name, value) VALUES ('schema_version', 1)
    ON CONFLICT (name) DO NOTHING;
CREATE TABLE IF NOT EXISTS tools_approvals_pending (
    id          TEXT COLLATE "C" PRIMARY KEY,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    agent       TEXT,
    call_id     TEXT NOT NULL,
    reason      TEXT,
    awaiting    TEXT,
    journal     TEXT,
    created_ms  BIGINT NOT NULL,
    expires_ms  BIGINT NOT NULL,
    mac         TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'resuming', 'done', 'cancelled')),
    outcome     TEXT
);
CREATE INDEX IF NOT EXISTS tools_approvals_queue
    ON tools_approvals_pending (created_ms, id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS tools_approvals_expiry ON tools_approvals_pending (expires_ms);
COMMIT;
"#;

/// Version 1 -> 2, under the same lock: the claim's and the settlement's columns, the `failed`
/// state, and listings by state. Idempotent, and only when the version read under the lock is
/// 1 (a replica that lost the race finds 2 and changes nothing).
const MIGRATE_V2: &str = r#"
BEGIN;
SELECT pg_advisory_xact_lock({lock});
DO $$
BEGIN
    IF (SELECT value FROM tools_approvals_meta WHERE name = 'schema_version') = 1 THEN
        ALTER TABLE tools_approvals_pending
            ADD COLUMN IF NOT EXISTS claimed_ms BIGINT,
            ADD COLUMN IF NOT EXISTS claimed_by TEXT,
            ADD COLUMN IF NOT EXISTS edited_arguments TEXT,
            ADD COLUMN IF NOT EXISTS settled_ms BIGINT,
            ADD COLUMN IF NOT EXISTS note TEXT,
            ADD COLUMN IF NOT EXISTS principal TEXT,
            DROP CONSTRAINT IF EXISTS tools_approvals_pending_state_check,
            ADD CONSTRAINT tools_approvals_pending_state_check CHECK (state IN ({states}));
        CREATE INDEX IF NOT EXISTS tools_approvals_state
            ON tools_approvals_pending (state, created_ms, id);
        UPDATE tools_approvals_meta SET value = 2 WHERE name = 'schema_version';
    END IF;
END
$$;
COMMIT;
"#;

/// Paused calls in a PostgreSQL table. See the [module](self) for how it keeps them.
pub struct PostgresStore {
    /// The live connection and its statements; replaced when it breaks.
    conn: Mutex<Arc<Conn>>,
    /// Where to connect again (`None` for a store made from a client).
    config: Option<Config>,
    /// One reconnection at a time.
    reconnecting: tokio::sync::Mutex<()>,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("reconnects", &self.config.is_some())
            .finish_non_exhaustive()
    }
}

/// A connection and its prepared statements.
struct Conn {
    client: Client,
    /// The task driving the connection (when this crate spawned it); ended with the store.
    driver: Option<JoinHandle<()>>,
    insert: Statement,
    get: Statement,
    claim: Statement,
    cancel: Statement,
    explain: Statement,
    release: Statement,
    finish: Statement,
    settle: Statement,
    purge: Statement,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(driver) = &self.driver {
            driver.abort();
        }
    }
}

impl Conn {
    async fn prepare(client: Client, driver: Option<JoinHandle<()>>) -> Result<Self, Error> {
        let prep = |sql: String| {
            let client = &client;
            async move {
                client
                    .prepare(&sql)
                    .await
                    .map_err(|source| Error::Postgres {
                        doing: "prepare its statements",
                        source,
                    })
            }
        };
        let table = "tools_approvals_pending";
        Ok(Conn {
            insert: prep(format!(
                "INSERT INTO {table} ({RECORD_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
                 ON CONFLICT (id) DO NOTHING"
            ))
            .await?,
            get: prep(format!(
                "SELECT {RECORD_COLUMNS}, {STATE_COLUMNS} FROM {table} WHERE id = $1"
            ))
            .await?,
            claim: prep(format!(
                "UPDATE {table} SET state = 'resuming', claimed_ms = $2, claimed_by = $3, \
                 edited_arguments = $4 \
                 WHERE id = $1 AND state = 'pending' AND expires_ms > $2 RETURNING {RECORD_COLUMNS}"
            ))
            .await?,
            cancel: prep(format!(
                "UPDATE {table} SET state = 'cancelled', settled_ms = $2 \
                 WHERE id = $1 AND state = 'pending' RETURNING {RECORD_COLUMNS}"
            ))
            .await?,
            explain: prep(format!(
                "SELECT state, expires_ms FROM {table} WHERE id = $1"
            ))
            .await?,
            release: prep(format!(
                "UPDATE {table} SET state = 'pending', claimed_ms = NULL, claimed_by = NULL, \
                 edited_arguments = NULL WHERE id = $1 AND state = 'resuming'"
            ))
            .await?,
            finish: prep(format!(
                "UPDATE {table} SET state = 'done', outcome = $2, settled_ms = $3 \
                 WHERE id = $1 AND state = 'resuming'"
            ))
            .await?,
            settle: prep(format!(
                "UPDATE {table} SET state = $2, note = $3, settled_ms = $4 \
                 WHERE id = $1 AND state = 'resuming'"
            ))
            .await?,
            purge: prep(format!(
                "DELETE FROM {table} WHERE (state = 'pending' AND expires_ms <= $1) \
                 OR (state IN ('done', 'failed', 'cancelled') AND created_ms < $1)"
            ))
            .await?,
            client,
            driver,
        })
    }
}

/// Connects with `config` and spawns the task that drives the connection.
async fn connect_client(config: &Config) -> Result<(Client, JoinHandle<()>), Error> {
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| Error::NoRuntime)?;
    let (client, connection) = config
        .connect(NoTls)
        .await
        .map_err(|source| Error::Connect {
            doing: "connecting",
            source,
        })?;
    let driver = runtime.spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "the PostgreSQL approval store's connection ended");
        }
    });
    Ok((client, driver))
}

/// Creates the schema when missing, migrates one of version 1; refuses one of a newer
/// version.
async fn ensure_schema(client: &Client) -> Result<(), Error> {
    let lock = SCHEMA_LOCK.to_string();
    client
        .batch_execute(&SCHEMA_V1.replace("{lock}", &lock))
        .await
        .map_err(|source| Error::Postgres {
            doing: "create its tables",
            source,
        })?;
    client
        .batch_execute(
            &MIGRATE_V2
                .replace("{lock}", &lock)
                .replace("{states}", STATES),
        )
        .await
        .map_err(|source| Error::Postgres {
            doing: "migrate its tables to version 2",
            source,
        })?;
    let found: i64 = client
        .query_one(
            "SELECT value FROM tools_approvals_meta WHERE name = 'schema_version'",
            &[],
        )
        .await
        .and_then(|row| row.try_get(0))
        .map_err(|source| Error::Postgres {
            doing: "read the schema version",
            source,
        })?;
    if found != POSTGRES_SCHEMA_VERSION {
        return Err(Error::SchemaVersion {
            store: STORE,
            found,
            supported: POSTGRES_SCHEMA_VERSION,
        });
    }
    Ok(())
}

impl PostgresStore {
    /// Connects to PostgreSQL with `conninfo` (`host=... port=... user=... dbname=...` or a
    /// `postgresql://` URL; no TLS, see the [module](self)) and creates the store's tables when
    /// they are missing. It spawns the task that drives the connection on the current Tokio
    /// runtime, which must outlive the store.
    ///
    /// # Errors
    ///
    /// [`Error::Connect`] when `conninfo` cannot be read or the server not reached,
    /// [`Error::NoRuntime`] outside a Tokio runtime,
    /// [`Error::Postgres`] when the tables cannot be created or the statements prepared,
    /// [`Error::SchemaVersion`] when a newer build made them.
    pub async fn connect(conninfo: &str) -> Result<Self, Error> {
        let config: Config = conninfo.parse().map_err(|source| Error::Connect {
            doing: "reading the connection settings",
            source,
        })?;
        let (client, driver) = connect_client(&config).await?;
        ensure_schema(&client).await?;
        let conn = Conn::prepare(client, Some(driver)).await?;
        Ok(PostgresStore {
            conn: Mutex::new(Arc::new(conn)),
            config: Some(config),
            reconnecting: tokio::sync::Mutex::new(()),
        })
    }

    /// The store over a client you connected (with TLS, say, or pooled settings). Whoever
    /// connected it drives its connection; the store does not connect again when it breaks.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect), less connecting.
    pub async fn from_client(client: Client) -> Result<Self, Error> {
        ensure_schema(&client).await?;
        let conn = Conn::prepare(client, None).await?;
        Ok(PostgresStore {
            conn: Mutex::new(Arc::new(conn)),
            config: None,
            reconnecting: tokio::sync::Mutex::new(()),
        })
    }

    /// The live connection: the current one, or a new one when it broke and the store knows
    /// where to connect.
    async fn conn(&self) -> Result<Arc<Conn>, StoreError> {
        let current = self.current();
        let Some(config) = &self.config else {
            return Ok(current);
        };
        if !current.client.is_closed() {
            return Ok(current);
        }
        let _one = self.reconnecting.lock().await;
        let current = self.current();
        if !current.client.is_closed() {
            return Ok(current);
        }
        tracing::info!("the PostgreSQL approval store connects again");
        let (client, driver) = connect_client(config)
            .await
            .map_err(|e| e.into_store(STORE))?;
        let fresh = Arc::new(
            Conn::prepare(client, Some(driver))
                .await
                .map_err(|e| e.into_store(STORE))?,
        );
        *self.conn.lock().unwrap_or_else(PoisonError::into_inner) = fresh.clone();
        Ok(fresh)
    }

    fn current(&self) -> Arc<Conn> {
        self.conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// `pending` -> `resuming` (with `claim`) or `cancelled` (at `cancel_ms`), or why not.
    async fn transition(
        &self,
        id: &str,
        claim: Option<&Claim>,
        cancel_ms: i64,
        doing: &'static str,
    ) -> Result<Transition, StoreError> {
        let conn = self.conn().await?;
        let now_ms = claim.map(|c| query_time(c.at_ms));
        for _ in 0..TRANSITION_TRIES {
            let moved = match (claim, now_ms) {
                (Some(claim), Some(now)) => {
                    conn.client
                        .query_opt(
                            &conn.claim,
                            &[&id, &now, &claim.by, &claim.edited_arguments],
                        )
                        .await
                }
                _ => {
                    conn.client
                        .query_opt(&conn.cancel, &[&id, &cancel_ms])
                        .await
                }
            }
            .map_err(failed(doing))?;
            if let Some(row) = moved {
                return Ok(Transition::Moved(Box::new(
                    raw_record(&row)
                        .map_err(failed(doing))?
                        .into_record(STORE)?,
                )));
            }
            let found = conn
                .client
                .query_opt(&conn.explain, &[&id])
                .await
                .map_err(failed(doing))?
                .map(|row| Ok::<_, tokio_postgres::Error>((row.try_get(0)?, row.try_get(1)?)))
                .transpose()
                .map_err(failed(doing))?;
            if let Some(answer) = why_not_moved(STORE, id, found, now_ms)? {
                return Ok(answer);
            }
        }
        // Pending each time it was read, and never moved: it was claimed and released over and
        // over meanwhile. Not pending when this caller tried.
        Ok(Transition::NotPending(CallState::Resuming))
    }
}

/// A statement's failure as the trait's error.
fn failed(doing: &'static str) -> impl FnOnce(tokio_postgres::Error) -> StoreError {
    move |source| Error::Postgres { doing, source }.into_store(STORE)
}

/// The whole call of a row of [`RECORD_COLUMNS`] then [`STATE_COLUMNS`].
fn raw_call(row: &Row) -> Result<(RawRecord, RawState), tokio_postgres::Error> {
    Ok((
        raw_record(row)?,
        RawState {
            state: row.try_get(12)?,
            outcome: row.try_get(13)?,
            claimed_ms: row.try_get(14)?,
            claimed_by: row.try_get(15)?,
            edited_arguments: row.try_get(16)?,
            settled_ms: row.try_get(17)?,
            note: row.try_get(18)?,
        },
    ))
}

/// The record of a row whose first columns are [`RECORD_COLUMNS`].
fn raw_record(row: &Row) -> Result<RawRecord, tokio_postgres::Error> {
    Ok(RawRecord {
        id: row.try_get(0)?,
        tool: row.try_get(1)?,
        arguments: row.try_get(2)?,
        agent: row.try_get(3)?,
        call_id: row.try_get(4)?,
        reason: row.try_get(5)?,
        awaiting: row.try_get(6)?,
        journal: row.try_get(7)?,
        created_ms: row.try_get(8)?,
        expires_ms: row.try_get(9)?,
        mac: row.try_get(10)?,
        principal: row.try_get(11)?,
    })
}

impl ApprovalStore for PostgresStore {
    fn name(&self) -> &'static str {
        STORE
    }

    fn insert<'a>(&'a self, record: &'a PendingRecord) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let values = RowValues::of(record, STORE)?;
            let conn = self.conn().await?;
            let written = conn
                .client
                .execute(
                    &conn.insert,
                    &[
                        &record.id,
                        &record.tool,
                        &record.arguments,
                        &record.agent,
                        &record.call_id,
                        &record.reason,
                        &values.awaiting,
                        &record.journal,
                        &values.created_ms,
                        &values.expires_ms,
                        &record.mac,
                        &record.principal,
                    ],
                )
                .await
                .map_err(failed("write a paused call"))?;
            inserted(STORE, &record.id, written)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredCall>, StoreError>> {
        Box::pin(async move {
            let conn = self.conn().await?;
            let Some(row) = conn
                .client
                .query_opt(&conn.get, &[&id])
                .await
                .map_err(failed("read a paused call"))?
            else {
                return Ok(None);
            };
            let (raw, state) = raw_call(&row).map_err(failed("read a paused call"))?;
            stored_call(STORE, raw, state).map(Some)
        })
    }

    fn claim<'a>(
        &'a self,
        id: &'a str,
        claim: &'a Claim,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        Box::pin(self.transition(id, Some(claim), 0, "claim a paused call"))
    }

    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let conn = self.conn().await?;
            conn.client
                .execute(&conn.release, &[&id])
                .await
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
        Box::pin(async move {
            let conn = self.conn().await?;
            conn.client
                .execute(&conn.finish, &[&id, &outcome, &query_time(at_ms)])
                .await
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
        Box::pin(async move {
            let doing = "settle a call in doubt";
            let conn = self.conn().await?;
            let state = settle.state().as_str();
            let moved = conn
                .client
                .execute(&conn.settle, &[&id, &state, &note, &query_time(at_ms)])
                .await
                .map_err(failed(doing))?;
            if moved == 1 {
                return Ok(Settled::Moved);
            }
            let found = conn
                .client
                .query_opt(&conn.explain, &[&id])
                .await
                .map_err(failed(doing))?;
            Ok(match found {
                None => Settled::Unknown,
                Some(row) => {
                    let state: String = row.try_get(0).map_err(failed(doing))?;
                    Settled::NotResuming(state_of(STORE, id, &state)?)
                }
            })
        })
    }

    fn cancel<'a>(
        &'a self,
        id: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        Box::pin(self.transition(id, None, query_time(at_ms), "cancel a paused call"))
    }

    fn calls<'a>(
        &'a self,
        query: &'a CallQuery,
    ) -> BoxFuture<'a, Result<Vec<StoredCall>, StoreError>> {
        Box::pin(async move {
            let doing = "list the paused calls";
            let condition = filter_condition(query.filter, query_time(query.now_ms));
            let (after_ms, after_id) = cursor(query.after.as_ref());
            let conn = self.conn().await?;
            let rows = conn
                .client
                .query(
                    &format!(
                        "SELECT {RECORD_COLUMNS}, {STATE_COLUMNS} FROM tools_approvals_pending \
                         WHERE {condition} AND (created_ms, id) > ($1, $2) \
                         ORDER BY created_ms, id LIMIT $3"
                    ),
                    &[&after_ms, &after_id, &query_limit(query.limit)],
                )
                .await
                .map_err(failed(doing))?;
            rows.iter()
                .map(|row| {
                    let (raw, state) = raw_call(row).map_err(failed(doing))?;
                    stored_call(STORE, raw, state)
                })
                .collect()
        })
    }

    fn purge<'a>(&'a self, now_ms: u64) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            let conn = self.conn().await?;
            conn.client
                .execute(&conn.purge, &[&query_time(now_ms)])
                .await
                .map_err(failed("purge finished and expired calls"))
        })
    }
}
