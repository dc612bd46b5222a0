//! One conformance suite for every `ApprovalStore`: each method and each transition, with the
//! answers `MemoryStore` gives (the reference), run against `MemoryStore`, `SqliteStore` and
//! `PostgresStore`. A new store should pass [`conformance`] too.

use std::sync::Arc;

use futures::future::join_all;
use tools_runtime::approvals::{
    ApprovalStore, AwaitingCall, CallFilter, CallQuery, CallState, Claim, MemoryStore,
    PendingRecord, Settle, Settled, StoreError, StoredCall, Transition, purged,
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
        principal: None,
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
        principal: Some(r#"{"claims":{"tenant":"ünï \"q\""},"subject":"alice"}"#.to_owned()),
    }
}

fn stored(record: &PendingRecord) -> StoredCall {
    StoredCall::pending(record.clone())
}

/// A claim at `at_ms` by the suite's replica, with no edit.
fn claim(at_ms: u64) -> Claim {
    Claim {
        at_ms,
        by: "replica-1".to_owned(),
        edited_arguments: None,
    }
}

/// The records of `calls`.
fn records(calls: Vec<StoredCall>) -> Vec<PendingRecord> {
    calls.into_iter().map(|c| c.record).collect()
}

/// The review queue at `now_ms`, at most `limit`.
async fn queue(store: &dyn ApprovalStore, now_ms: u64, limit: usize) -> Vec<PendingRecord> {
    let query = CallQuery::new(CallFilter::Pending, limit).at(now_ms);
    records(store.calls(&query).await.unwrap())
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
    assert_eq!(store.get("aa01").await.unwrap(), Some(stored(&a)), "{name}");
    assert_eq!(store.get("bb01").await.unwrap(), Some(stored(&b)), "{name}");
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
    assert_eq!(store.get("aa01").await.unwrap(), Some(stored(&a)), "{name}");

    // Claim: pending -> resuming, with the record; then refused while resuming.
    assert_eq!(
        store.claim("aa01", &claim(T + 10)).await.unwrap(),
        Transition::Moved(Box::new(a.clone())),
        "{name}"
    );
    assert_eq!(
        state(store, "aa01").await,
        (CallState::Resuming, None),
        "{name}"
    );
    // The claim is kept with the call: since when, by whom.
    let claimed = store.get("aa01").await.unwrap().unwrap();
    assert_eq!(claimed.claim, Some(claim(T + 10)), "{name}");
    assert_eq!((claimed.settled_ms, claimed.note), (None, None), "{name}");
    assert_eq!(
        store.claim("aa01", &claim(T + 10)).await.unwrap(),
        Transition::NotPending(CallState::Resuming),
        "{name}"
    );
    assert_eq!(
        store.cancel("aa01", T + 50).await.unwrap(),
        Transition::NotPending(CallState::Resuming),
        "{name}"
    );

    // Release: resuming -> pending, the claim forgotten; on a pending call it does nothing,
    // nor does finish.
    store.release("aa01").await.unwrap();
    assert_eq!(store.get("aa01").await.unwrap(), Some(stored(&a)), "{name}");
    store.release("aa01").await.unwrap();
    store.finish("aa01", "ok", T + 60).await.unwrap();
    assert_eq!(
        state(store, "aa01").await,
        (CallState::Pending, None),
        "{name}"
    );

    // Finish: resuming -> done with the outcome; nothing moves a done call.
    assert!(matches!(
        store.claim("aa01", &claim(T + 20)).await.unwrap(),
        Transition::Moved(_)
    ));
    store.finish("aa01", "ok", T + 60).await.unwrap();
    let done = (CallState::Done, Some("ok".to_owned()));
    assert_eq!(state(store, "aa01").await, done, "{name}");
    let finished = store.get("aa01").await.unwrap().unwrap();
    assert_eq!(
        (finished.claim, finished.settled_ms, finished.note),
        (Some(claim(T + 20)), Some(T + 60), None),
        "{name}"
    );
    for transition in [
        store.claim("aa01", &claim(T + 30)).await.unwrap(),
        store.cancel("aa01", T + 50).await.unwrap(),
    ] {
        assert_eq!(
            transition,
            Transition::NotPending(CallState::Done),
            "{name}"
        );
    }
    store.release("aa01").await.unwrap();
    store.finish("aa01", "TOOL_ERROR", T + 60).await.unwrap();
    assert_eq!(state(store, "aa01").await, done, "{name}");
    assert_eq!(
        store.get("aa01").await.unwrap().unwrap().record,
        a,
        "{name}"
    );

    // Cancel: pending -> cancelled, with the record; a cancelled call is not claimed.
    assert_eq!(
        store.cancel("bb01", T + 50).await.unwrap(),
        Transition::Moved(Box::new(b.clone())),
        "{name}"
    );
    assert_eq!(
        state(store, "bb01").await,
        (CallState::Cancelled, None),
        "{name}"
    );
    assert_eq!(
        store.get("bb01").await.unwrap().unwrap().settled_ms,
        Some(T + 50),
        "{name}"
    );
    assert_eq!(
        store.claim("bb01", &claim(T + 2)).await.unwrap(),
        Transition::NotPending(CallState::Cancelled),
        "{name}"
    );
    assert_eq!(
        store.cancel("bb01", T + 50).await.unwrap(),
        Transition::NotPending(CallState::Cancelled),
        "{name}"
    );

    // Expiry: a claim at or after `expires_ms` is refused and changes nothing; before it, it
    // wins. A cancel ignores expiry.
    let c = bare("cc01", T + 2, T + 10);
    store.insert(&c).await.unwrap();
    for now in [T + 10, T + 11, u64::MAX] {
        assert_eq!(
            store.claim("cc01", &claim(now)).await.unwrap(),
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
        store.claim("cc01", &claim(T + 9)).await.unwrap(),
        Transition::Moved(Box::new(c.clone())),
        "{name}"
    );
    let e = bare("ee01", T + 2, T + 3);
    store.insert(&e).await.unwrap();
    assert_eq!(
        store.cancel("ee01", T + 50).await.unwrap(),
        Transition::Moved(Box::new(e.clone())),
        "{name}"
    );

    // An unknown id: claim and cancel say so; release and finish do nothing.
    assert_eq!(
        store.claim("ffff", &claim(T)).await.unwrap(),
        Transition::Unknown,
        "{name}"
    );
    assert_eq!(
        store.cancel("ffff", T + 50).await.unwrap(),
        Transition::Unknown,
        "{name}"
    );
    store.release("ffff").await.unwrap();
    store.finish("ffff", "ok", T + 60).await.unwrap();
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
        queue(store, T + 4, 100).await,
        vec![q2.clone(), q1.clone(), q3.clone()],
        "{name}"
    );
    assert_eq!(
        ids(queue(store, T + 3, 100).await),
        ["dd00", "dd01", "dd02", "d0ff"],
        "{name}"
    );
    assert_eq!(
        ids(queue(store, T + 4, 2).await),
        ["dd01", "dd02"],
        "{name}"
    );
    assert!(queue(store, T + 4, 0).await.is_empty(), "{name}");
    assert!(
        queue(store, u64::MAX, usize::MAX).await.is_empty(),
        "{name}"
    );

    // Settling by hand: only a call `resuming` (in doubt) moves, to `done` or `failed` with the
    // note and the time; a claim's edited arguments are kept with it.
    let g = bare("gg01", T + 7, T + 1_000);
    let h = bare("gg02", T + 7, T + 1_000);
    store.insert(&g).await.unwrap();
    store.insert(&h).await.unwrap();
    assert_eq!(
        store
            .settle("gg01", Settle::Failed, "early", T + 70)
            .await
            .unwrap(),
        Settled::NotResuming(CallState::Pending),
        "{name}"
    );
    let edited = Claim {
        at_ms: T + 8,
        by: "replica-2 ünï".to_owned(),
        edited_arguments: Some(r#"{"line":"y \"quoted\""}"#.to_owned()),
    };
    assert!(matches!(
        store.claim("gg01", &edited).await.unwrap(),
        Transition::Moved(_)
    ));
    assert!(matches!(
        store.claim("gg02", &claim(T + 8)).await.unwrap(),
        Transition::Moved(_)
    ));
    let note = "checked the ledger: no row was written; 'quoted' -- not SQL";
    assert_eq!(
        store
            .settle("gg01", Settle::Failed, note, T + 70)
            .await
            .unwrap(),
        Settled::Moved,
        "{name}"
    );
    assert_eq!(
        store
            .settle("gg02", Settle::Done, "the file is there", T + 71)
            .await
            .unwrap(),
        Settled::Moved,
        "{name}"
    );
    let failed = store.get("gg01").await.unwrap().unwrap();
    assert_eq!(
        (
            failed.state,
            failed.outcome.as_deref(),
            failed.note.as_deref()
        ),
        (CallState::Failed, None, Some(note)),
        "{name}"
    );
    assert_eq!(
        (failed.claim, failed.settled_ms),
        (Some(edited.clone()), Some(T + 70)),
        "{name}"
    );
    let settled_done = store.get("gg02").await.unwrap().unwrap();
    assert_eq!(
        (settled_done.state, settled_done.note.as_deref()),
        (CallState::Done, Some("the file is there")),
        "{name}"
    );
    // Settled is final: settling again, a late finish, a release, a claim change nothing.
    assert_eq!(
        store
            .settle("gg01", Settle::Done, "again", T + 72)
            .await
            .unwrap(),
        Settled::NotResuming(CallState::Failed),
        "{name}"
    );
    store.finish("gg01", "ok", T + 73).await.unwrap();
    store.release("gg01").await.unwrap();
    assert_eq!(
        store.claim("gg01", &claim(T + 74)).await.unwrap(),
        Transition::NotPending(CallState::Failed),
        "{name}"
    );
    assert_eq!(
        state(store, "gg01").await,
        (CallState::Failed, None),
        "{name}"
    );
    assert_eq!(
        store
            .settle("ffff", Settle::Done, "nothing", T)
            .await
            .unwrap(),
        Settled::Unknown,
        "{name}"
    );

    // Many claims of one call at once: one wins.
    let r = bare("ff01", T + 6, T + 1_000);
    store.insert(&r).await.unwrap();
    let racing = claim(T + 7);
    let claims = join_all((0..16).map(|_| store.claim("ff01", &racing))).await;
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
        Some(stored(&far)),
        "{name}"
    );

    // Listings: each filter lists exactly what `CallQuery::admits` says, oldest first (ties
    // by id), whole; pages follow one another with `after`.
    let every = [
        "aa01", "bb01", "cc01", "ee01", "dd00", "dd01", "dd02", "d0ff", "ff01", "ff02", "gg01",
        "gg02",
    ];
    let filters = [
        CallFilter::All,
        CallFilter::Pending,
        CallFilter::Expired,
        CallFilter::Resuming,
        CallFilter::Done,
        CallFilter::Failed,
        CallFilter::Cancelled,
    ];
    for now in [T + 4, T + 2_000] {
        for filter in filters {
            let query = CallQuery::new(filter, usize::MAX).at(now);
            let mut expected = Vec::new();
            for id in every {
                let call = store.get(id).await.unwrap().unwrap();
                if query.admits(&call) {
                    expected.push(call);
                }
            }
            expected.sort_by(|x, y| {
                (x.record.created_ms, &x.record.id).cmp(&(y.record.created_ms, &y.record.id))
            });
            let listed = store.calls(&query).await.unwrap();
            assert_eq!(listed, expected, "{name}: {filter:?} at {now}");
            assert!(
                filter == CallFilter::All || listed.len() < every.len(),
                "{name}: {filter:?} filters"
            );
        }
    }
    let all = store
        .calls(&CallQuery::new(CallFilter::All, usize::MAX).at(T))
        .await
        .unwrap();
    assert_eq!(all.len(), every.len(), "{name}");
    let mut paged = Vec::new();
    let mut query = CallQuery::new(CallFilter::All, 5).at(T);
    loop {
        let page = store.calls(&query).await.unwrap();
        let Some(last) = page.last() else { break };
        query = query
            .clone()
            .after(last.record.created_ms, last.record.id.clone());
        assert!(page.len() <= 5, "{name}");
        paged.extend(page);
    }
    assert_eq!(paged, all, "{name}: pages of 5");
    assert!(
        store
            .calls(&CallQuery::new(CallFilter::All, 0).at(T))
            .await
            .unwrap()
            .is_empty(),
        "{name}"
    );

    // Purge deletes exactly what `purged` says, at a time in the middle and then at the end
    // of time; a call `resuming` (`cc01`, `ff01`) stays, expired or not: its body may have run.
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
    for id in ["cc01", "ff01"] {
        assert_eq!(
            state(store, id).await,
            (CallState::Resuming, None),
            "{name}: {id} is resuming and kept"
        );
    }
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
    assert!(queue(again.as_ref(), 0, 10).await.is_empty());
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
