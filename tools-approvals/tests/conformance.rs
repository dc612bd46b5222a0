//! One conformance suite for every `ApprovalStore`: each method and each transition, with the
//! answers `MemoryStore` gives (the reference), run against `MemoryStore`, `SqliteStore` and
//! `PostgresStore`. A new store should pass [`conformance`] too.

use std::sync::Arc;

use futures::future::join_all;
use tools_runtime::approvals::{
    ApprovalStore, AwaitingCall, CallState, MemoryStore, PendingRecord, StoreError, StoredCall,
    Transition, purged,
};

/// A base time (ms); the suite's calls are created at and after it.
const T: u64 = 1_700_000_000_000;

/// A record with nothing optional.
fn bare(id: &str, created_ms: u64, expires_ms: u64) -> PendingRecord {
    PendingRecord {
        id: id.to_owned(),
        tool: "append".to_owned(),
        arguments: r#"{"line":"x"}"#.to_owned(),
        agent: None,
        call_id: format!("call-{id}"),
        reason: None,
        awaiting: None,
        journal: None,
        created_ms,
        expires_ms,
        mac: format!("{:0>64}", id),
    }
}

/// A record with every optional field, and text that tests the columns: quotes, backslashes,
/// newlines, non-ASCII, an escaped NUL in the JSON.
fn full(id: &str, created_ms: u64, expires_ms: u64) -> PendingRecord {
    PendingRecord {
        id: id.to_owned(),
        tool: "run_code".to_owned(),
        arguments: r#"{"code":"print(\"é\\n\")\n","nul":"\u0000","n":[1,2.5,null]}"#.to_owned(),
        agent: Some("support-bot ünïcödé".to_owned()),
        call_id: "toolu_01 'quoted'".to_owned(),
        reason: Some("writes need a person;\n-- not SQL".to_owned()),
        awaiting: Some(AwaitingCall {
            tool: "write".to_owned(),
            call_id: "toolu_01:code:3".to_owned(),
            arguments: r#"{"path":"a \"b\".txt"}"#.to_owned(),
        }),
        journal: Some(r#"{"calls":[{"n":1,"result":"ok"}],"seed":42}"#.to_owned()),
        created_ms,
        expires_ms,
        mac: "ab".repeat(32),
    }
}

fn stored(record: &PendingRecord, state: CallState, outcome: Option<&str>) -> StoredCall {
    StoredCall {
        record: record.clone(),
        state,
        outcome: outcome.map(str::to_owned),
    }
}

async fn state(store: &dyn ApprovalStore, id: &str) -> (CallState, Option<String>) {
    let call = store.get(id).await.unwrap().unwrap();
    (call.state, call.outcome)
}

/// Every method and transition of `store`, which must be empty.
pub async fn conformance(store: &dyn ApprovalStore) {
    let name = store.name();
    let a = full("aa01", T, T + 1_000);
    let b = bare("bb01", T + 1, T + 1_000);

    // Insert and get: every field round-trips, `None`s included.
    store.insert(&a).await.unwrap();
    store.insert(&b).await.unwrap();
    assert_eq!(
        store.get("aa01").await.unwrap(),
        Some(stored(&a, CallState::Pending, None)),
        "{name}"
    );
    assert_eq!(
        store.get("bb01").await.unwrap(),
        Some(stored(&b, CallState::Pending, None)),
        "{name}"
    );
    assert_eq!(store.get("ffff").await.unwrap(), None, "{name}");

    // A second call of the same id is refused and changes nothing.
    let mut other = bare("aa01", T + 5, T + 9);
    other.tool = "delete".to_owned();
    match store.insert(&other).await {
        Err(StoreError::Duplicate { id, store: which }) => {
            assert_eq!((id.as_str(), which), ("aa01", name));
        }
        other => panic!("{name}: a duplicate insert answered {other:?}"),
    }
    assert_eq!(
        store.get("aa01").await.unwrap(),
        Some(stored(&a, CallState::Pending, None)),
        "{name}"
    );

    // Claim: pending -> resuming, with the record; then refused while resuming.
    assert_eq!(
        store.claim("aa01", T + 10).await.unwrap(),
        Transition::Moved(Box::new(a.clone())),
        "{name}"
    );
    assert_eq!(
        state(store, "aa01").await,
        (CallState::Resuming, None),
        "{name}"
    );
    assert_eq!(
        store.claim("aa01", T + 10).await.unwrap(),
        Transition::NotPending(CallState::Resuming),
        "{name}"
    );
    assert_eq!(
        store.cancel("aa01").await.unwrap(),
        Transition::NotPending(CallState::Resuming),
        "{name}"
    );

    // Release: resuming -> pending; on a pending call it does nothing, nor does finish.
    store.release("aa01").await.unwrap();
    assert_eq!(
        state(store, "aa01").await,
        (CallState::Pending, None),
        "{name}"
    );
    store.release("aa01").await.unwrap();
    store.finish("aa01", "ok").await.unwrap();
    assert_eq!(
        state(store, "aa01").await,
        (CallState::Pending, None),
        "{name}"
    );

    // Finish: resuming -> done with the outcome; nothing moves a done call.
    assert!(matches!(
        store.claim("aa01", T + 20).await.unwrap(),
        Transition::Moved(_)
    ));
    store.finish("aa01", "ok").await.unwrap();
    let done = (CallState::Done, Some("ok".to_owned()));
    assert_eq!(state(store, "aa01").await, done, "{name}");
    for transition in [
        store.claim("aa01", T + 30).await.unwrap(),
        store.cancel("aa01").await.unwrap(),
    ] {
        assert_eq!(
            transition,
            Transition::NotPending(CallState::Done),
            "{name}"
        );
    }
    store.release("aa01").await.unwrap();
    store.finish("aa01", "TOOL_ERROR").await.unwrap();
    assert_eq!(state(store, "aa01").await, done, "{name}");
    assert_eq!(
        store.get("aa01").await.unwrap().unwrap().record,
        a,
        "{name}"
    );

    // Cancel: pending -> cancelled, with the record; a cancelled call is not claimed.
    assert_eq!(
        store.cancel("bb01").await.unwrap(),
        Transition::Moved(Box::new(b.clone())),
        "{name}"
    );
    assert_eq!(
        state(store, "bb01").await,
        (CallState::Cancelled, None),
        "{name}"
    );
    assert_eq!(
        store.claim("bb01", T + 2).await.unwrap(),
        Transition::NotPending(CallState::Cancelled),
        "{name}"
    );
    assert_eq!(
        store.cancel("bb01").await.unwrap(),
        Transition::NotPending(CallState::Cancelled),
        "{name}"
    );

    // Expiry: a claim at or after `expires_ms` is refused and changes nothing; before it, it
    // wins. A cancel ignores expiry.
    let c = bare("cc01", T + 2, T + 10);
    store.insert(&c).await.unwrap();
    for now in [T + 10, T + 11, u64::MAX] {
        assert_eq!(
            store.claim("cc01", now).await.unwrap(),
            Transition::Expired,
            "{name} at {now}"
        );
    }
    assert_eq!(
        state(store, "cc01").await,
        (CallState::Pending, None),
        "{name}"
    );
    assert_eq!(
        store.claim("cc01", T + 9).await.unwrap(),
        Transition::Moved(Box::new(c.clone())),
        "{name}"
    );
    let e = bare("ee01", T + 2, T + 3);
    store.insert(&e).await.unwrap();
    assert_eq!(
        store.cancel("ee01").await.unwrap(),
        Transition::Moved(Box::new(e.clone())),
        "{name}"
    );

    // An unknown id: claim and cancel say so; release and finish do nothing.
    assert_eq!(
        store.claim("ffff", T).await.unwrap(),
        Transition::Unknown,
        "{name}"
    );
    assert_eq!(
        store.cancel("ffff").await.unwrap(),
        Transition::Unknown,
        "{name}"
    );
    store.release("ffff").await.unwrap();
    store.finish("ffff", "ok").await.unwrap();
    assert_eq!(store.get("ffff").await.unwrap(), None, "{name}");

    // The review queue: pending and live only, oldest first (ties by id, in byte order), at
    // most `limit`, records whole.
    let q0 = full("dd00", T + 3, T + 4);
    let q1 = bare("dd02", T + 3, T + 1_000);
    let q2 = full("dd01", T + 3, T + 1_000);
    let q3 = bare("d0ff", T + 5, T + 1_000);
    for q in [&q3, &q1, &q0, &q2] {
        store.insert(q).await.unwrap();
    }
    let ids = |records: Vec<PendingRecord>| -> Vec<String> {
        records.into_iter().map(|r| r.id).collect()
    };
    assert_eq!(
        store.pending(T + 4, 100).await.unwrap(),
        vec![q2.clone(), q1.clone(), q3.clone()],
        "{name}"
    );
    assert_eq!(
        ids(store.pending(T + 3, 100).await.unwrap()),
        ["dd00", "dd01", "dd02", "d0ff"],
        "{name}"
    );
    assert_eq!(
        ids(store.pending(T + 4, 2).await.unwrap()),
        ["dd01", "dd02"],
        "{name}"
    );
    assert!(store.pending(T + 4, 0).await.unwrap().is_empty(), "{name}");
    assert!(
        store
            .pending(u64::MAX, usize::MAX)
            .await
            .unwrap()
            .is_empty(),
        "{name}"
    );

    // Many claims of one call at once: one wins.
    let r = bare("ff01", T + 6, T + 1_000);
    store.insert(&r).await.unwrap();
    let claims = join_all((0..16).map(|_| store.claim("ff01", T + 7))).await;
    let won = claims
        .iter()
        .filter(|c| matches!(c, Ok(Transition::Moved(_))))
        .count();
    assert_eq!(won, 1, "{name}: {claims:?}");
    assert!(
        claims.iter().all(|c| matches!(
            c,
            Ok(Transition::Moved(_) | Transition::NotPending(CallState::Resuming))
        )),
        "{name}: {claims:?}"
    );

    // The largest time a store must keep.
    let far = bare("ff02", i64::MAX as u64 - 1, i64::MAX as u64);
    store.insert(&far).await.unwrap();
    assert_eq!(
        store.get("ff02").await.unwrap(),
        Some(stored(&far, CallState::Pending, None)),
        "{name}"
    );

    // Purge deletes exactly what `purged` says, at a time in the middle and then at the end
    // of time.
    let every = [
        "aa01", "bb01", "cc01", "ee01", "dd00", "dd01", "dd02", "d0ff", "ff01", "ff02",
    ];
    for now in [T + 4, u64::MAX] {
        let mut going = Vec::new();
        let mut staying = Vec::new();
        for id in every {
            if let Some(call) = store.get(id).await.unwrap() {
                if purged(&call, now) {
                    going.push(id);
                } else {
                    staying.push(id);
                }
            }
        }
        assert!(!going.is_empty(), "{name}: the suite purges something");
        assert_eq!(
            store.purge(now).await.unwrap(),
            going.len() as u64,
            "{name} at {now}: {going:?}"
        );
        for id in going {
            assert_eq!(store.get(id).await.unwrap(), None, "{name}: {id} purged");
        }
        for id in staying {
            assert!(store.get(id).await.unwrap().is_some(), "{name}: {id} kept");
        }
    }
    assert_eq!(store.purge(u64::MAX).await.unwrap(), 0, "{name}");
}

#[tokio::test]
async fn the_memory_store_conforms() {
    conformance(&MemoryStore::new()).await;
}

#[cfg(feature = "sqlite")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let store = tools_approvals::SqliteStore::open(dir.path().join("approvals.db")).unwrap();
    conformance(&store).await;
    // Through the runtime's `Arc<dyn ApprovalStore>`, reopened: the file kept nothing.
    let again: Arc<dyn ApprovalStore> =
        Arc::new(tools_approvals::SqliteStore::open(dir.path().join("approvals.db")).unwrap());
    assert!(again.pending(0, 10).await.unwrap().is_empty());
    assert_eq!(again.name(), "sqlite");
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_store_conforms() {
    let server = crate::pg::PgServer::start(crate::pg::Durability::Tests);
    let conninfo = server.database("conformance").await;
    let store: Arc<dyn ApprovalStore> = Arc::new(
        tools_approvals::PostgresStore::connect(&conninfo)
            .await
            .unwrap(),
    );
    assert_eq!(store.name(), "postgres");
    conformance(store.as_ref()).await;
}
