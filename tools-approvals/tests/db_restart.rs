//! The database goes down while a resumed call's body runs, on a real PostgreSQL: when it comes
//! back within the retries, the call's end is written and the call is `done`; when it stays
//! down past them, the resume says the end was not recorded (with the result), and the call
//! stays `resuming` where an operator finds it and settles it. The body runs once either way.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tools_approvals::PostgresStore;
use tools_runtime::approvals::{
    ApprovalStore, CallFilter, CallQuery, CallState, CallStatus, DurableApprovals, Settle,
};
use tools_runtime::hooks::{Approval, PreDecision};
use tools_runtime::{Output, ToolCall, ToolDefinition, ToolError, ToolRuntime, codes};

use crate::pg::{Down, Durability, PgServer};
use crate::support::{handle_of, key};

/// What the body does to the database after its effect.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outage {
    /// Crashes it and brings it back 1.5 s later, while the resume retries.
    Brief,
    /// Takes it down; the test brings it back after the resume returned.
    Long,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_restart_after_the_body_ran_is_retried_through_or_said() {
    for outage in [Outage::Brief, Outage::Long] {
        let server = Arc::new(PgServer::start(Durability::Tests));
        let conninfo = server.database("restart").await;
        let store = Arc::new(PostgresStore::connect(&conninfo).await.unwrap());
        let rt = ToolRuntime::builder()
            .durable_approvals(
                DurableApprovals::with_store(store.clone(), key())
                    .replica("replica-a")
                    // 0.2 + 0.4 + 0.8 + 1.6 + 3.2 s: past a brief outage, short of a long one.
                    .record_retries(6, Duration::from_millis(200)),
            )
            .build()
            .unwrap();
        let runs = Arc::new(AtomicUsize::new(0));
        let armed = Arc::new(Mutex::new(false));
        let (r, a, s) = (runs.clone(), armed.clone(), server.clone());
        let write = ToolDefinition::builder("write")
            .input_schema(json!({"type": "object"}))
            .output(Output::json(json!({"type": "string"})))
            .execute(move |_args, _ctx| {
                let (runs, armed, server) = (r.clone(), a.clone(), s.clone());
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    if std::mem::take(&mut *armed.lock().unwrap()) {
                        let server = server.clone();
                        tokio::task::spawn_blocking(move || {
                            server.down(Down::Crash);
                            if outage == Outage::Brief {
                                std::thread::sleep(Duration::from_millis(1_500));
                                server.up();
                            }
                        })
                        .await
                        .unwrap();
                    }
                    Ok::<Value, ToolError>(json!("written"))
                }
            })
            .build()
            .unwrap();
        let scope = rt.scope();
        let _regs = [
            scope.register(write).unwrap(),
            scope
                .on_pre_execute(|_exec, _| PreDecision::ask("a person decides"))
                .unwrap(),
            scope
                .set_approval(|_exec, _reason| async { Approval::later() })
                .unwrap(),
        ];
        let handle = handle_of(&rt.execute(ToolCall::new("c1", "write", json!({}))).await);
        *armed.lock().unwrap() = true;
        let resumed = rt.resume(&handle, Approval::Approved).await;
        assert_eq!(runs.load(Ordering::SeqCst), 1, "the body ran once");
        match outage {
            Outage::Brief => {
                let done = resumed.unwrap();
                assert_eq!(done.value(), Some(&json!("written")));
                // A store of its own (a third replica) reads it done.
                let reader = PostgresStore::connect(&conninfo).await.unwrap();
                let call = reader.get(&handle.id).await.unwrap().unwrap();
                assert_eq!(
                    (call.state, call.outcome.as_deref()),
                    (CallState::Done, Some("ok"))
                );
            }
            Outage::Long => {
                let err = resumed.unwrap_err();
                assert_eq!(err.code(), codes::APPROVAL_NOT_RECORDED, "{err}");
                assert_eq!(err.result().unwrap().value(), Some(&json!("written")));
                server.up();
                let reader = PostgresStore::connect(&conninfo).await.unwrap();
                let call = reader.get(&handle.id).await.unwrap().unwrap();
                assert_eq!(call.state, CallState::Resuming);
                assert_eq!(call.claim.unwrap().by, "replica-a");
                // The operator finds it in doubt and settles it; it never runs again.
                let in_doubt = rt
                    .paused_calls(CallQuery::new(CallFilter::Resuming, 10))
                    .await
                    .unwrap();
                assert_eq!(in_doubt.len(), 1, "{in_doubt:?}");
                assert!(matches!(
                    in_doubt[0].status,
                    CallStatus::Resuming { by: Some(ref by), .. } if by == "replica-a"
                ));
                let again = rt.resume(&handle, Approval::Approved).await.unwrap_err();
                assert_eq!(again.code(), codes::APPROVAL_ALREADY_RESUMED);
                rt.settle_pending(&handle.id, Settle::Done, "the row is in the ledger")
                    .await
                    .unwrap();
                let call = reader.get(&handle.id).await.unwrap().unwrap();
                assert_eq!(call.state, CallState::Done);
                assert_eq!(runs.load(Ordering::SeqCst), 1);
            }
        }
    }
}
