//! What is SQLite's own: the file's settings and schema version, the errors and their chains,
//! two stores (two connections) on one file racing for the same calls, and use outside Tokio.

use std::error::Error as _;
use std::sync::Arc;

use futures::future::join_all;
use tools_approvals::{SqliteStore, code_of, codes};
use tools_runtime::approvals::{ApprovalStore, CallState, Settle, Settled, StoreError, Transition};

use crate::support::record;

/// The error and its sources, joined.
fn chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        out.push_str(": ");
        out.push_str(&e.to_string());
        next = e.source();
    }
    out
}

#[tokio::test]
async fn the_file_is_made_once_in_wal_mode_and_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.db");
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.path(), path);
    store.insert(&record("aa", 10)).await.unwrap();
    drop(store);

    let sql = rusqlite::Connection::open(&path).unwrap();
    let (mode, version): (String, i64) = (
        sql.pragma_query_value(None, "journal_mode", |r| r.get(0))
            .unwrap(),
        sql.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap(),
    );
    assert_eq!((mode.as_str(), version), ("wal", 2));
    // Reopening keeps what is there.
    let store = SqliteStore::open(&path).unwrap();
    assert!(store.get("aa").await.unwrap().is_some());
    drop(store);

    sql.pragma_update(None, "user_version", 3).unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert_eq!(err.code(), codes::APPROVALS_SCHEMA_VERSION);
    assert!(
        err.to_string()
            .contains("schema version 3; this build of tools-approvals reads version 2"),
        "{err}"
    );

    let err = SqliteStore::open(dir.path().join("no/such/folder/approvals.db")).unwrap_err();
    assert_eq!(err.code(), codes::APPROVALS_OPEN);
    let text = chain(&err);
    assert!(
        text.contains("no/such/folder/approvals.db") && err.source().is_some(),
        "{text}"
    );
}

/// The schema the first build wrote (version 1), as it wrote it.
const SCHEMA_V1: &str = "
CREATE TABLE pending_calls (
    id          TEXT PRIMARY KEY NOT NULL,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    agent       TEXT,
    call_id     TEXT NOT NULL,
    reason      TEXT,
    awaiting    TEXT,
    journal     TEXT,
    created_ms  INTEGER NOT NULL,
    expires_ms  INTEGER NOT NULL,
    mac         TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'resuming', 'done', 'cancelled')),
    outcome     TEXT
) STRICT;
CREATE INDEX pending_calls_queue ON pending_calls (created_ms, id) WHERE state = 'pending';
CREATE INDEX pending_calls_expiry ON pending_calls (expires_ms);
INSERT INTO pending_calls (id, tool, arguments, call_id, created_ms, expires_ms, mac, state, outcome)
    VALUES ('aa', 'append', '{}', 'c1', 1, 10, 'm1', 'pending', NULL),
           ('bb', 'append', '{}', 'c2', 2, 10, 'm2', 'resuming', NULL),
           ('cc', 'append', '{}', 'c3', 3, 10, 'm3', 'done', 'ok');
PRAGMA user_version = 1;
";

#[tokio::test]
async fn a_file_of_the_first_schema_is_migrated_with_its_calls() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(SCHEMA_V1)
        .unwrap();
    let store = SqliteStore::open(&path).unwrap();
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2);
    let get = |id: &'static str| {
        let store = store.clone();
        async move { store.get(id).await.unwrap().unwrap() }
    };
    assert_eq!(get("aa").await.state, CallState::Pending);
    // A call left `resuming` by the first build: no claim recorded, and it can be settled.
    let bb = get("bb").await;
    assert_eq!((bb.state, bb.claim), (CallState::Resuming, None));
    assert_eq!(
        store
            .settle("bb", Settle::Failed, "checked", 5)
            .await
            .unwrap(),
        Settled::Moved
    );
    assert_eq!(get("bb").await.state, CallState::Failed);
    let cc = get("cc").await;
    assert_eq!(
        (cc.state, cc.outcome.as_deref()),
        (CallState::Done, Some("ok"))
    );
    assert!(matches!(
        store.claim("aa", &crate::support::claim(5)).await.unwrap(),
        Transition::Moved(_)
    ));
    // Opened again, it is not migrated twice.
    drop(store);
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(
        store.get("aa").await.unwrap().unwrap().state,
        CallState::Resuming
    );
}

#[tokio::test]
async fn a_time_past_i64_max_is_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("approvals.db")).unwrap();
    let err = store.insert(&record("aa", u64::MAX)).await.unwrap_err();
    assert!(matches!(
        err,
        StoreError::Backend {
            store: "sqlite",
            ..
        }
    ));
    assert_eq!(code_of(&err), Some(codes::APPROVALS_TIME_RANGE));
    let text = chain(&err);
    assert!(
        text.contains("expires_ms (18446744073709551615 ms) does not fit"),
        "{text}"
    );
    assert_eq!(store.get("aa").await.unwrap(), None);
}

#[tokio::test]
async fn a_corrupt_row_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.db");
    let store = SqliteStore::open(&path).unwrap();
    store.insert(&record("aa", 10)).await.unwrap();
    let sql = rusqlite::Connection::open(&path).unwrap();
    sql.execute("UPDATE pending_calls SET awaiting = 'not json'", [])
        .unwrap();
    let err = store.get("aa").await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { store: "sqlite", id, what }
            if id == "aa" && what.contains("awaited call is not readable")),
        "{err:?}"
    );
    // A state the schema does not allow cannot be written.
    let refused = sql.execute("UPDATE pending_calls SET state = 'gone'", []);
    assert!(refused.is_err(), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_connections_to_one_file_never_both_win_a_claim() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.db");
    let first: Arc<dyn ApprovalStore> = Arc::new(SqliteStore::open(&path).unwrap());
    let second: Arc<dyn ApprovalStore> = Arc::new(SqliteStore::open(&path).unwrap());
    let ids: Vec<String> = (0..50).map(|i| format!("{i:032x}")).collect();
    for id in &ids {
        first.insert(&record(id, u64::MAX >> 1)).await.unwrap();
    }
    let claims = |store: Arc<dyn ApprovalStore>, ids: Vec<String>| {
        tokio::spawn(async move {
            let mut won = Vec::new();
            for id in ids {
                match store.claim(&id, &crate::support::claim(5)).await.unwrap() {
                    Transition::Moved(record) => won.push(record.id),
                    Transition::NotPending(CallState::Resuming) => {}
                    other => panic!("{other:?}"),
                }
            }
            won
        })
    };
    let reversed: Vec<String> = ids.iter().rev().cloned().collect();
    let results = join_all([
        claims(first.clone(), ids.clone()),
        claims(second.clone(), ids.clone()),
        claims(first.clone(), reversed.clone()),
        claims(second.clone(), reversed),
    ])
    .await;
    let mut won: Vec<String> = results.into_iter().flat_map(Result::unwrap).collect();
    won.sort();
    assert_eq!(won, ids, "each call claimed exactly once");
}

#[test]
fn the_store_works_outside_a_tokio_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("approvals.db")).unwrap();
    futures::executor::block_on(async {
        store.insert(&record("aa", 10)).await.unwrap();
        assert!(matches!(
            store.claim("aa", &crate::support::claim(5)).await.unwrap(),
            Transition::Moved(_)
        ));
    });
}
