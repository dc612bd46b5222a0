//! What is PostgreSQL's own, on a real server: replicas creating the tables at once, a newer
//! schema refused, times past `i64::MAX` refused, a broken connection made again, and errors
//! with their chains.

use std::error::Error as _;

use futures::future::join_all;
use tools_approvals::{PostgresStore, code_of, codes};
use tools_runtime::approvals::{ApprovalStore, CallState, Settle, Settled, StoreError, Transition};

use crate::support::record;

use crate::pg::{Durability, PgServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_versions_times_and_a_new_connection() {
    let server = PgServer::start(Durability::Tests);

    // Eight replicas start at once on an empty database: one makes the tables, all connect.
    let conninfo = server.database("replicas").await;
    let stores = join_all((0..8).map(|_| PostgresStore::connect(&conninfo))).await;
    let stores: Vec<PostgresStore> = stores.into_iter().map(Result::unwrap).collect();
    stores[0].insert(&record("aa", 10)).await.unwrap();
    assert!(stores[7].get("aa").await.unwrap().is_some());
    drop(stores);

    // A time past i64::MAX is refused, with its chain.
    let store = PostgresStore::connect(&conninfo).await.unwrap();
    let err = store.insert(&record("bb", u64::MAX)).await.unwrap_err();
    assert!(matches!(
        err,
        StoreError::Backend {
            store: "postgres",
            ..
        }
    ));
    assert_eq!(code_of(&err), Some(codes::APPROVALS_TIME_RANGE));
    assert!(
        err.source()
            .unwrap()
            .to_string()
            .contains("expires_ms (18446744073709551615 ms) does not fit"),
        "{err:?}"
    );
    assert_eq!(store.get("bb").await.unwrap(), None);

    // The server ends the store's connection (as a restart would): the call in flight may
    // fail; the next one connects again.
    let admin = server.client("postgres").await;
    let ended = admin
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = 'replicas' AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    assert!(ended >= 1);
    let mut recovered = false;
    for _ in 0..50 {
        match store.get("aa").await {
            Ok(found) => {
                assert!(found.is_some());
                recovered = true;
                break;
            }
            Err(err) => {
                assert_eq!(code_of(&err), Some(codes::APPROVALS_POSTGRES), "{err:?}");
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    }
    assert!(recovered, "the store did not connect again");
    assert!(matches!(
        store.claim("aa", &crate::support::claim(5)).await.unwrap(),
        Transition::Moved(_)
    ));

    // A store over a client of one's own.
    let own = PostgresStore::from_client(server.client("replicas").await)
        .await
        .unwrap();
    assert!(own.get("aa").await.unwrap().is_some());

    // A schema of a newer version is refused.
    let newer = server.database("newer").await;
    drop(PostgresStore::connect(&newer).await.unwrap());
    let client = server.client("newer").await;
    client
        .batch_execute("UPDATE tools_approvals_meta SET value = 3 WHERE name = 'schema_version'")
        .await
        .unwrap();
    let err = PostgresStore::connect(&newer).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVALS_SCHEMA_VERSION, "{err}");
    assert!(err.to_string().contains("schema version 3"), "{err}");

    // Tables of the first schema, with a call of each state it had: eight replicas connect at
    // once, one migrates, every call is there, and the new states are allowed.
    let old = server.database("first_schema").await;
    server
        .client("first_schema")
        .await
        .batch_execute(SCHEMA_V1)
        .await
        .unwrap();
    let stores = join_all((0..8).map(|_| PostgresStore::connect(&old))).await;
    let stores: Vec<PostgresStore> = stores.into_iter().map(Result::unwrap).collect();
    let bb = stores[3].get("bb").await.unwrap().unwrap();
    assert_eq!((bb.state, bb.claim), (CallState::Resuming, None));
    assert_eq!(
        stores[5]
            .settle("bb", Settle::Failed, "checked", 5)
            .await
            .unwrap(),
        Settled::Moved
    );
    assert_eq!(
        stores[0].get("bb").await.unwrap().unwrap().state,
        CallState::Failed
    );
    let cc = stores[1].get("cc").await.unwrap().unwrap();
    assert_eq!(
        (cc.state, cc.outcome.as_deref()),
        (CallState::Done, Some("ok"))
    );
    let version: i64 = server
        .client("first_schema")
        .await
        .query_one(
            "SELECT value FROM tools_approvals_meta WHERE name = 'schema_version'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(version, 2);

    // No server there.
    let err = PostgresStore::connect("host=127.0.0.1 port=1 user=postgres connect_timeout=5")
        .await
        .unwrap_err();
    assert_eq!(err.code(), codes::APPROVALS_CONNECT, "{err}");
    assert!(err.source().is_some());
    let err = PostgresStore::connect("this is not = a conninfo '")
        .await
        .unwrap_err();
    assert_eq!(err.code(), codes::APPROVALS_CONNECT, "{err}");
}

/// The tables the first build made (version 1), with a call in each of its states.
const SCHEMA_V1: &str = r#"
CREATE TABLE tools_approvals_meta (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
INSERT INTO tools_approvals_meta (name, value) VALUES ('schema_version', 1);
CREATE TABLE tools_approvals_pending (
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
CREATE INDEX tools_approvals_queue
    ON tools_approvals_pending (created_ms, id) WHERE state = 'pending';
CREATE INDEX tools_approvals_expiry ON tools_approvals_pending (expires_ms);
INSERT INTO tools_approvals_pending (id, tool, arguments, call_id, created_ms, expires_ms, mac, state, outcome)
    VALUES ('aa', 'append', '{}', 'c1', 1, 10, 'm1', 'pending', NULL),
           ('bb', 'append', '{}', 'c2', 2, 10, 'm2', 'resuming', NULL),
           ('cc', 'append', '{}', 'c3', 3, 10, 'm3', 'done', 'ok');
"#;

#[test]
fn connecting_outside_a_tokio_runtime_is_an_error_not_a_panic() {
    let err = futures::executor::block_on(PostgresStore::connect(
        "host=127.0.0.1 port=1 user=postgres",
    ))
    .unwrap_err();
    assert_eq!(err.code(), codes::APPROVALS_NO_RUNTIME, "{err}");
}
