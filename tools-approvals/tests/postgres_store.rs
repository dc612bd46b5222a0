//! What is PostgreSQL's own, on a real server: replicas creating the tables at once, a newer
//! schema refused, times past `i64::MAX` refused, a broken connection made again, and errors
//! with their chains.

use std::error::Error as _;

use futures::future::join_all;
use tools_approvals::{PostgresStore, code_of, codes};
use tools_runtime::approvals::{ApprovalStore, StoreError, Transition};

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
        store.claim("aa", 5).await.unwrap(),
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
        .batch_execute("UPDATE tools_approvals_meta SET value = 2 WHERE name = 'schema_version'")
        .await
        .unwrap();
    let err = PostgresStore::connect(&newer).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVALS_SCHEMA_VERSION, "{err}");
    assert!(err.to_string().contains("schema version 2"), "{err}");

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

#[test]
fn connecting_outside_a_tokio_runtime_is_an_error_not_a_panic() {
    let err = futures::executor::block_on(PostgresStore::connect(
        "host=127.0.0.1 port=1 user=postgres",
    ))
    .unwrap_err();
    assert_eq!(err.code(), codes::APPROVALS_NO_RUNTIME, "{err}");
}
