//! Three replicas on one PostgreSQL race to resume the same 100 paused calls: each call's body
//! runs exactly once, every resume that lost says `APPROVAL_ALREADY_RESUMED`, and the store ends
//! with every call done.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt as _;
use serde_json::json;
use tools_approvals::PostgresStore;
use tools_runtime::approvals::{ApprovalStore, CallFilter, CallQuery, CallState, PendingHandle};
use tools_runtime::hooks::Approval;
use tools_runtime::{ToolCall, ToolRuntime, codes};

use crate::pg::{Durability, PgServer};
use crate::support::{Effect, handle_of, install, runtime};

const CALLS: usize = 100;
const REPLICAS: usize = 3;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_resume_the_same_hundred_calls_and_each_body_runs_once() {
    let server = PgServer::start(Durability::Tests);
    let conninfo = server.database("race").await;
    let runs: Arc<Mutex<HashMap<String, u32>>> = Arc::default();

    // The calls pause through one replica.
    let pauser = runtime(Arc::new(PostgresStore::connect(&conninfo).await.unwrap()));
    let scope = pauser.scope();
    let _regs = install(&scope, Effect::Count(runs.clone()));
    let mut handles: Vec<PendingHandle> = Vec::new();
    for i in 0..CALLS {
        let paused = pauser
            .execute(ToolCall::new(
                format!("c{i}"),
                "append",
                json!({"line": format!("call {i}")}),
            ))
            .await;
        handles.push(handle_of(&paused));
    }
    assert_eq!(pauser.pending_calls(1000).await.unwrap().len(), CALLS);

    // Three replicas, each with its own connection, resume all of them at once, in the same
    // order (so they contend for the same rows), up to 8 resumes in flight each.
    let mut replicas = Vec::new();
    for _ in 0..REPLICAS {
        let rt = runtime(Arc::new(PostgresStore::connect(&conninfo).await.unwrap()));
        let scope = rt.scope();
        let regs = install(&scope, Effect::Count(runs.clone()));
        replicas.push((rt, scope, regs));
    }
    let race = |rt: ToolRuntime, handles: Vec<PendingHandle>| {
        tokio::spawn(async move {
            futures::stream::iter(handles)
                .map(|handle| {
                    let rt = rt.clone();
                    async move {
                        let result = rt.resume(&handle, Approval::Approved).await;
                        (handle.id.clone(), result)
                    }
                })
                .buffer_unordered(8)
                .collect::<Vec<_>>()
                .await
        })
    };
    let racing: Vec<_> = replicas
        .iter()
        .map(|(rt, _, _)| race(rt.clone(), handles.clone()))
        .collect();
    let mut finished = Vec::new();
    for replica in racing {
        finished.push(replica.await.unwrap());
    }

    let mut wins: HashMap<String, usize> = HashMap::new();
    let mut won_by = [0usize; REPLICAS];
    for (replica, results) in finished.into_iter().enumerate() {
        for (id, result) in results {
            match result {
                Ok(done) => {
                    assert_eq!(done.code(), None, "{done:?}");
                    *wins.entry(id).or_default() += 1;
                    won_by[replica] += 1;
                }
                Err(err) => assert_eq!(err.code(), codes::APPROVAL_ALREADY_RESUMED, "{id}: {err}"),
            }
        }
    }
    eprintln!("the replicas ran {won_by:?}");
    assert_eq!(wins.len(), CALLS, "every call was resumed by someone");
    assert!(wins.values().all(|&n| n == 1), "{wins:?}");
    let runs = runs.lock().unwrap().clone();
    assert_eq!(runs.len(), CALLS);
    assert!(runs.values().all(|&n| n == 1), "a body ran twice: {runs:?}");

    // What the store says, read by a fresh connection.
    let reader = PostgresStore::connect(&conninfo).await.unwrap();
    for handle in &handles {
        let call = reader.get(&handle.id).await.unwrap().unwrap();
        assert_eq!(
            (call.state, call.outcome.as_deref()),
            (CallState::Done, Some("ok")),
            "{}",
            handle.id
        );
    }
    let queue = CallQuery::new(CallFilter::Pending, 1000).at(0);
    assert!(reader.calls(&queue).await.unwrap().is_empty());
}
