//! Durable approvals in one process (`tools_runtime::approvals`): a deferred call pauses into
//! the store and returns its handle; a resume completes it once, with the observers, the
//! guards and the body as the rules say; a handle edited in any bound field is refused and
//! nothing runs; expiry, cancellation, agent scopes by name. The stores of `tools-approvals`
//! are tested there, with processes that are killed in between.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tools_runtime::approvals::{
    ApprovalKey, ApprovalStore, CallFilter, CallQuery, CallState, CallStatus, Claim,
    DurableApprovals, MemoryStore, PendingHandle, PendingRecord, Settle, Settled, StoreError,
    StoredCall, Transition,
};
use tools_runtime::hooks::{Approval, PreDecision};
use tools_runtime::{Output, Scope, ToolCall, ToolDefinition, ToolError, ToolRuntime, codes};

fn key() -> ApprovalKey {
    ApprovalKey::new(b"0123456789abcdef0123456789abcdef").unwrap()
}

/// A runtime with durable approvals over `store`.
fn runtime(store: Arc<MemoryStore>, expiry: Duration) -> ToolRuntime {
    ToolRuntime::builder()
        .durable_approvals(DurableApprovals::with_store(store, key()).expire_after(expiry))
        .build()
        .unwrap()
}

/// What one runtime's `write` tool and policy have seen.
#[derive(Default)]
struct Counts {
    bodies: AtomicUsize,
    pre: AtomicUsize,
    observed: Mutex<Vec<Option<String>>>,
}

/// `write` (its body counts), a pre-execute listener that asks, a service that defers, and an
/// observer; all through `scope`.
fn install(scope: &Scope, counts: &Arc<Counts>) -> Vec<tools_runtime::Registration> {
    let c = counts.clone();
    let write = ToolDefinition::builder("write")
        .input_schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
            "required": ["path"]
        }))
        .output(Output::json(json!({"type": "string"})))
        .execute(move |args, _ctx| {
            let c = c.clone();
            async move {
                c.bodies.fetch_add(1, Ordering::SeqCst);
                Ok::<Value, ToolError>(json!(format!(
                    "wrote {}",
                    args["path"].as_str().unwrap_or("")
                )))
            }
        })
        .build()
        .unwrap();
    let c = counts.clone();
    let o = counts.clone();
    vec![
        scope.register(write).unwrap(),
        scope
            .on_pre_execute(move |_exec, _| {
                c.pre.fetch_add(1, Ordering::SeqCst);
                PreDecision::ask("writes need a person")
            })
            .unwrap(),
        scope
            .set_approval(|_exec, _reason| async { Approval::later() })
            .unwrap(),
        scope
            .on_result(move |_exec, result| {
                o.observed
                    .lock()
                    .unwrap()
                    .push(result.code().map(str::to_owned));
            })
            .unwrap(),
    ]
}

fn handle_of(result: &tools_runtime::ToolExecutionResult) -> PendingHandle {
    assert_eq!(result.code(), Some(codes::APPROVAL_PENDING), "{result:?}");
    result.pending.as_ref().unwrap().handle().unwrap().clone()
}

#[tokio::test]
async fn a_deferred_call_pauses_and_its_resume_gives_the_one_result_with_observers() {
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(store.clone(), Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);

    let paused = rt
        .execute(ToolCall::new(
            "c1",
            "write",
            json!({"text": "hi", "path": "a.txt"}),
        ))
        .await;
    let handle = handle_of(&paused);
    assert!(
        paused
            .text()
            .contains("waiting for approval (writes need a person)"),
        "{}",
        paused.text()
    );
    assert_eq!(handle.reason.as_deref(), Some("writes need a person"));
    assert_eq!(handle.tool, "write");
    assert_eq!(handle.call_id, "c1");
    // Written before the result returned; nothing ran and nobody observed a result.
    let stored = store.get(&handle.id).await.unwrap().unwrap();
    assert_eq!(stored.state, CallState::Pending);
    assert_eq!(stored.record.arguments, r#"{"path":"a.txt","text":"hi"}"#);
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 0);
    assert!(counts.observed.lock().unwrap().is_empty());
    assert_eq!(counts.pre.load(Ordering::SeqCst), 1);

    // The text form round-trips; the resume runs the body once, without asking again.
    let handle: PendingHandle = rt.parse_handle(&handle.to_string()).unwrap();
    let done = rt.resume(&handle, Approval::Approved).await.unwrap();
    assert_eq!(done.value(), Some(&json!("wrote a.txt")));
    assert!(done.pending.is_none());
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 1);
    assert_eq!(
        counts.pre.load(Ordering::SeqCst),
        1,
        "pre-execute does not run again"
    );
    assert_eq!(*counts.observed.lock().unwrap(), vec![None]);
    let stored = store.get(&handle.id).await.unwrap().unwrap();
    assert_eq!(
        (stored.state, stored.outcome.as_deref()),
        (CallState::Done, Some("ok"))
    );

    // Once only.
    let again = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(again.code(), codes::APPROVAL_ALREADY_RESUMED);
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_denial_on_resume_is_the_calls_denied_result_and_guards_run_again() {
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(store, Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let scope = rt.scope();
    let _regs = install(&scope, &counts);

    let first = handle_of(
        &rt.execute(ToolCall::new("c1", "write", json!({"path": "a"})))
            .await,
    );
    let denied = rt
        .resume(&first, Approval::deny("not today"))
        .await
        .unwrap();
    assert_eq!(denied.code(), Some(codes::DENIED));
    assert_eq!(denied.text(), "Error: not today");

    // Policy changed while the second call waited: the guard sees the resumed call.
    let second = handle_of(
        &rt.execute(ToolCall::new("c2", "write", json!({"path": "b"})))
            .await,
    );
    let _guard = scope
        .guard(|exec| (exec.arguments()["path"] == "b").then(|| "b is closed now".to_owned()))
        .unwrap();
    let guarded = rt.resume(&second, Approval::Approved).await.unwrap();
    assert_eq!(guarded.code(), Some(codes::GUARD_DENIED));
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 0);
    assert_eq!(
        *counts.observed.lock().unwrap(),
        vec![Some("DENIED".to_owned()), Some("GUARD_DENIED".to_owned())]
    );
    // A resume decides: a deferral is no decision.
    let third = handle_of(
        &rt.execute(ToolCall::new("c3", "write", json!({"path": "c"})))
            .await,
    );
    let err = rt.resume(&third, Approval::later()).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_NO_DECISION);
}

#[tokio::test]
async fn a_handle_edited_in_any_bound_field_is_refused_and_nothing_runs() {
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(store, Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let handle = handle_of(
        &rt.execute(ToolCall::new("c1", "write", json!({"path": "a"})))
            .await,
    );

    let mut edits: Vec<(&str, PendingHandle)> = Vec::new();
    let mut h = handle.clone();
    h.arguments = json!({"path": "/etc/passwd"});
    edits.push(("arguments", h));
    let mut h = handle.clone();
    h.tool = "delete".into();
    edits.push(("tool", h));
    let mut h = handle.clone();
    h.agent = Some("root".into());
    edits.push(("agent", h));
    let mut h = handle.clone();
    h.call_id = "c9".into();
    edits.push(("call id", h));
    let mut h = handle.clone();
    h.mac = h.mac.replace(|c: char| c != '0', "0");
    edits.push(("mac", h));
    for (what, edited) in &edits {
        // Through the text form, as a host would receive it back: its tag fails.
        let err = rt.parse_handle(&edited.to_string()).unwrap_err();
        assert_eq!(err.code(), codes::APPROVAL_MISMATCH, "{what}: {err}");
        // As a value: its MAC fails.
        let err = rt.resume(edited, Approval::Approved).await.unwrap_err();
        assert_eq!(err.code(), codes::APPROVAL_MISMATCH, "{what}: {err}");
    }
    // Another runtime's key refuses it too.
    let other = ToolRuntime::builder()
        .durable_approvals(DurableApprovals::new(
            MemoryStore::new(),
            ApprovalKey::new([1u8; 32]).unwrap(),
        ))
        .build()
        .unwrap();
    let err = other.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_UNKNOWN, "{err}");
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 0);
    // The true handle still works, once.
    let done = rt.resume(&handle, Approval::Approved).await.unwrap();
    assert_eq!(done.value(), Some(&json!("wrote a")));
}

#[tokio::test]
async fn expired_and_cancelled_calls_do_not_run() {
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(store.clone(), Duration::ZERO);
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let expired = handle_of(
        &rt.execute(ToolCall::new("c1", "write", json!({"path": "a"})))
            .await,
    );
    let err = rt.resume(&expired, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_EXPIRED);
    assert!(rt.pending_calls(10).await.unwrap().is_empty());
    assert_eq!(rt.purge_pending().await.unwrap(), 1);

    let rt = runtime(store, Duration::from_secs(60));
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let handle = handle_of(
        &rt.execute(ToolCall::new("c2", "write", json!({"path": "b"})))
            .await,
    );
    assert_eq!(rt.pending_calls(10).await.unwrap(), vec![handle.clone()]);
    rt.cancel_pending(&handle).await.unwrap();
    let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_CANCELLED);
    let err = rt.cancel_pending(&handle).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_CANCELLED);
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_call_from_a_named_agent_resumes_in_another_runtime_from_the_scope_of_that_name() {
    let store = Arc::new(MemoryStore::new());
    let first = runtime(store.clone(), Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let plugin = first.scope();
    let _regs = install(&plugin, &counts);
    let agent = first.agent_scope_named("support-bot").unwrap();
    assert_eq!(
        first.agent_scope_named("support-bot").unwrap_err().code(),
        "AGENT_NAME_TAKEN"
    );
    assert_eq!(first.named_agent("support-bot"), Some(agent.key()));
    let handle = handle_of(
        &first
            .execute(ToolCall::new("c1", "write", json!({"path": "a"})).with_agent(agent.key()))
            .await,
    );
    assert_eq!(handle.agent.as_deref(), Some("support-bot"));
    drop(agent);
    assert_eq!(
        first.named_agent("support-bot"),
        None,
        "the name goes with the scope"
    );
    drop(first);

    // "Another process": the same tools, store and key, and no scope of that name yet.
    let second = runtime(store, Duration::from_secs(60));
    let counts2 = Arc::new(Counts::default());
    let plugin2 = second.scope();
    let _regs2 = install(&plugin2, &counts2);
    let err = second
        .resume(&handle, Approval::Approved)
        .await
        .unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_SCOPE_MISSING);
    let agent = second.agent_scope_named("support-bot").unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _agent_observer = agent
        .on_result(move |exec, _| s.lock().unwrap().push(exec.agent()))
        .unwrap();
    let done = second.resume(&handle, Approval::Approved).await.unwrap();
    assert_eq!(done.value(), Some(&json!("wrote a")));
    assert_eq!(*seen.lock().unwrap(), vec![Some(agent.key())]);
    assert_eq!(counts2.bodies.load(Ordering::SeqCst), 1);
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_deferral_that_cannot_be_kept_fails_the_call_with_a_clear_code() {
    // No durable approvals.
    let rt = ToolRuntime::new();
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let result = rt
        .execute(ToolCall::new("c1", "write", json!({"path": "a"})))
        .await;
    assert_eq!(result.code(), Some(codes::APPROVAL_NOT_DURABLE));
    assert!(
        result.text().contains("durable_approvals"),
        "{}",
        result.text()
    );
    assert_eq!(
        *counts.observed.lock().unwrap(),
        vec![Some("APPROVAL_NOT_DURABLE".to_owned())]
    );

    // An agent scope without a name.
    let rt = runtime(Arc::new(MemoryStore::new()), Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let agent = rt.agent_scope();
    let result = rt
        .execute(ToolCall::new("c1", "write", json!({"path": "a"})).with_agent(agent.key()))
        .await;
    assert_eq!(result.code(), Some(codes::APPROVAL_NOT_DURABLE));
    assert!(
        result.text().contains("agent_scope_named"),
        "{}",
        result.text()
    );
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn resuming_again_says_which_state_it_found() {
    let store = Arc::new(MemoryStore::new());
    let rt = ToolRuntime::builder()
        .durable_approvals(DurableApprovals::with_store(store.clone(), key()).replica("api-3"))
        .build()
        .unwrap();
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let handle = handle_of(
        &rt.execute(ToolCall::new("c1", "write", json!({"path": "a"})))
            .await,
    );
    rt.resume(&handle, Approval::Approved).await.unwrap();
    let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_ALREADY_RESUMED);
    assert!(
        err.to_string().contains("it is done (outcome `ok`)"),
        "{err}"
    );
    let done = rt.paused_call(&handle.id).await.unwrap().unwrap();
    assert_eq!(
        done.status,
        CallStatus::Done {
            outcome: Some("ok".to_owned()),
            note: None
        }
    );
    assert!(done.settled_ms.is_some());
    // The claim names the replica.
    let stored = store.get(&handle.id).await.unwrap().unwrap();
    assert_eq!(stored.claim.unwrap().by, "api-3");

    // A call claimed and never finished (its process gone): resuming it says so.
    let handle = handle_of(
        &rt.execute(ToolCall::new("c2", "write", json!({"path": "b"})))
            .await,
    );
    let claim = Claim {
        at_ms: handle.created_ms,
        by: "api-1".to_owned(),
        edited_arguments: None,
    };
    assert!(matches!(
        store.claim(&handle.id, &claim).await.unwrap(),
        Transition::Moved(_)
    ));
    let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_ALREADY_RESUMED);
    let text = err.to_string();
    assert!(
        text.contains("resuming since") && text.contains("by `api-1`"),
        "{text}"
    );
    assert!(text.contains("in doubt"), "{text}");
    assert!(rt.pending_calls(10).await.unwrap().is_empty());
    let listed = rt
        .paused_calls(CallQuery::new(CallFilter::Resuming, 10))
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].status,
        CallStatus::Resuming {
            since_ms: Some(handle.created_ms),
            by: Some("api-1".to_owned())
        }
    );
    // Settling needs a note, and only a call in doubt.
    let err = rt
        .settle_pending(&handle.id, Settle::Failed, "  ")
        .await
        .unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_NOT_IN_DOUBT);
    let failed = rt
        .settle_pending(&handle.id, Settle::Failed, "no file b: it never ran")
        .await
        .unwrap();
    assert_eq!(
        failed.status,
        CallStatus::Failed {
            note: Some("no file b: it never ran".to_owned())
        }
    );
    let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("failed (settled by hand: no file b: it never ran)"),
        "{err}"
    );
    let err = rt
        .settle_pending("00", Settle::Done, "x")
        .await
        .unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_UNKNOWN);
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 1);
}

/// A memory store whose `finish` fails the first `failures` times (`u32::MAX`: always), as a
/// database restarting after the body ran would.
struct FlakyFinish {
    inner: MemoryStore,
    failures: u32,
    attempts: AtomicUsize,
}

impl ApprovalStore for FlakyFinish {
    fn name(&self) -> &'static str {
        "flaky"
    }
    fn insert<'a>(&'a self, record: &'a PendingRecord) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.insert(record)
    }
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<StoredCall>, StoreError>> {
        self.inner.get(id)
    }
    fn claim<'a>(
        &'a self,
        id: &'a str,
        claim: &'a Claim,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        self.inner.claim(id, claim)
    }
    fn release<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.release(id)
    }
    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let attempt = self.attempts.fetch_add(1, Ordering::SeqCst) as u32;
        if attempt < self.failures {
            return Box::pin(std::future::ready(Err(StoreError::Backend {
                store: "flaky",
                source: "the database is restarting".into(),
            })));
        }
        self.inner.finish(id, outcome, at_ms)
    }
    fn settle<'a>(
        &'a self,
        id: &'a str,
        settle: Settle,
        note: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Settled, StoreError>> {
        self.inner.settle(id, settle, note, at_ms)
    }
    fn cancel<'a>(
        &'a self,
        id: &'a str,
        at_ms: u64,
    ) -> BoxFuture<'a, Result<Transition, StoreError>> {
        self.inner.cancel(id, at_ms)
    }
    fn calls<'a>(
        &'a self,
        query: &'a CallQuery,
    ) -> BoxFuture<'a, Result<Vec<StoredCall>, StoreError>> {
        self.inner.calls(query)
    }
    fn purge<'a>(&'a self, now_ms: u64) -> BoxFuture<'a, Result<u64, StoreError>> {
        self.inner.purge(now_ms)
    }
}

#[tokio::test]
async fn the_end_of_a_resumed_call_is_retried_and_a_lost_one_is_said() {
    for (failures, recorded) in [(3, true), (u32::MAX, false)] {
        let store = Arc::new(FlakyFinish {
            inner: MemoryStore::new(),
            failures,
            attempts: AtomicUsize::new(0),
        });
        let rt = ToolRuntime::builder()
            .durable_approvals(
                DurableApprovals::with_store(store.clone(), key())
                    .record_retries(5, Duration::from_millis(1)),
            )
            .build()
            .unwrap();
        let counts = Arc::new(Counts::default());
        let plugin = rt.scope();
        let _regs = install(&plugin, &counts);
        let handle = handle_of(
            &rt.execute(ToolCall::new("c1", "write", json!({"path": "a"})))
                .await,
        );
        let resumed = rt.resume(&handle, Approval::Approved).await;
        assert_eq!(counts.bodies.load(Ordering::SeqCst), 1, "the body ran once");
        let call = store.get(&handle.id).await.unwrap().unwrap();
        if recorded {
            // Three failures, then the fourth attempt wrote it.
            let done = resumed.unwrap();
            assert_eq!(done.value(), Some(&json!("wrote a")));
            assert_eq!(store.attempts.load(Ordering::SeqCst), 4);
            assert_eq!(call.state, CallState::Done);
        } else {
            // Every attempt failed: the caller is told, with the result, and the call stays
            // in doubt where an operator finds it.
            let err = resumed.unwrap_err();
            assert_eq!(err.code(), codes::APPROVAL_NOT_RECORDED);
            assert_eq!(store.attempts.load(Ordering::SeqCst), 5);
            let text = err.to_string();
            assert!(
                text.contains("ran (its result: ok)") && text.contains("after 5 attempts"),
                "{text}"
            );
            assert!(std::error::Error::source(&err).is_some());
            assert_eq!(err.result().unwrap().value(), Some(&json!("wrote a")));
            assert_eq!(call.state, CallState::Resuming);
            let in_doubt = rt
                .paused_calls(CallQuery::new(CallFilter::Resuming, 10))
                .await
                .unwrap();
            assert_eq!(in_doubt.len(), 1);
            // Purging never deletes it; resuming never runs it again.
            rt.purge_pending().await.unwrap();
            let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
            assert_eq!(err.code(), codes::APPROVAL_ALREADY_RESUMED);
            assert_eq!(counts.bodies.load(Ordering::SeqCst), 1);
            assert!(store.get(&handle.id).await.unwrap().is_some());
        }
    }
}

#[tokio::test]
async fn a_reviewer_edits_the_arguments_and_approves() {
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(store.clone(), Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _observer = plugin
        .on_result(move |exec, _| {
            s.lock()
                .unwrap()
                .push((exec.arguments().clone(), exec.reviewed_arguments().cloned()))
        })
        .unwrap();
    let handle = handle_of(
        &rt.execute(ToolCall::new("c1", "write", json!({"path": "/etc/passwd"})))
            .await,
    );

    // Arguments the schema refuses: nothing claimed, the call stays pending.
    let err = rt
        .resume_edited(&handle, json!({"text": 5}), Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_EDIT_INVALID, "{err}");
    assert!(err.to_string().contains("path"), "{err}");
    assert_eq!(rt.pending_calls(10).await.unwrap(), vec![handle.clone()]);

    // Valid ones: the body runs with them; both are kept; listeners see both.
    let done = rt
        .resume_edited(
            &handle,
            json!({"text": "x", "path": "notes.txt"}),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(done.value(), Some(&json!("wrote notes.txt")));
    assert_eq!(counts.bodies.load(Ordering::SeqCst), 1);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(
            json!({"text": "x", "path": "notes.txt"}),
            Some(json!({"path": "/etc/passwd"}))
        )]
    );
    let stored = store.get(&handle.id).await.unwrap().unwrap();
    assert_eq!(stored.record.arguments, r#"{"path":"/etc/passwd"}"#);
    assert_eq!(
        stored.claim.unwrap().edited_arguments.as_deref(),
        Some(r#"{"path":"notes.txt","text":"x"}"#)
    );
    let listed = rt.paused_call(&handle.id).await.unwrap().unwrap();
    assert_eq!(
        listed.edited_arguments,
        Some(json!({"path": "notes.txt", "text": "x"}))
    );
    assert_eq!(listed.handle.arguments, json!({"path": "/etc/passwd"}));
}

#[tokio::test]
async fn no_call_policy_refused_leaves_a_handle() {
    // Each refusal: the call's result has no handle, and the store holds nothing.
    let cases: [(&str, &str); 5] = [
        ("deny", codes::DENIED),
        ("service_denies", codes::DENIED),
        ("guard", codes::GUARD_DENIED),
        ("invalid", codes::INVALID_ARGS),
        ("cancelled", codes::ABORTED_BEFORE_DISPATCH),
    ];
    for (case, code) in cases {
        let store = Arc::new(MemoryStore::new());
        let rt = runtime(store.clone(), Duration::from_secs(60));
        let plugin = rt.scope();
        let write = ToolDefinition::builder("write")
            .input_schema(json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"]
            }))
            .output(Output::json(json!({"type": "string"})))
            .execute(|_args, _ctx| async { Ok::<Value, ToolError>(json!("wrote")) })
            .build()
            .unwrap();
        let _w = plugin.register(write).unwrap();
        let cancel = tokio_util::sync::CancellationToken::new();
        let deny = case == "deny";
        let _pre = plugin
            .on_pre_execute(move |_exec, _| {
                if deny {
                    PreDecision::deny("never")
                } else {
                    PreDecision::ask("a person decides")
                }
            })
            .unwrap();
        let service_denies = case == "service_denies";
        let fire = (case == "cancelled").then(|| cancel.clone());
        let _approval = plugin
            .set_approval(move |_exec, _reason| {
                let fire = fire.clone();
                async move {
                    if let Some(token) = fire {
                        // Cancelled while the person is being asked, who answers "later".
                        token.cancel();
                    }
                    if service_denies {
                        Approval::Denied {
                            reason: Some("no".into()),
                        }
                    } else {
                        Approval::later()
                    }
                }
            })
            .unwrap();
        let guard = case == "guard";
        let _guard = plugin
            .guard(move |_exec| guard.then(|| "writes are frozen".to_owned()))
            .unwrap();
        let arguments = if case == "invalid" {
            json!({"path": 7})
        } else {
            json!({"path": "a"})
        };
        let result = rt
            .execute(ToolCall::new("c1", "write", arguments).with_cancel(cancel.clone()))
            .await;
        assert_eq!(result.code(), Some(code), "{case}: {result:?}");
        assert!(result.pending.is_none(), "{case}");
        let everything = store
            .calls(&CallQuery::new(CallFilter::All, 10))
            .await
            .unwrap();
        assert!(everything.is_empty(), "{case}: {everything:?}");
    }
    // Cancelled before the ask: the service is never asked, nothing is kept.
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(store.clone(), Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let result = rt
        .execute(ToolCall::new("c1", "write", json!({"path": "a"})).with_cancel(cancel))
        .await;
    assert_eq!(result.code(), Some(codes::ABORTED_BEFORE_DISPATCH));
    assert!(result.pending.is_none());
    assert!(
        store
            .calls(&CallQuery::new(CallFilter::All, 10))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_call_too_large_for_its_handle_does_not_pause() {
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(store.clone(), Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    // 6.5 MiB of text: its handle's base64 would pass the 8 MiB a handle text may have.
    let text = "x".repeat(6_500_000);
    let result = rt
        .execute(ToolCall::new(
            "c1",
            "write",
            json!({"path": "a", "text": text}),
        ))
        .await;
    assert_eq!(
        result.code(),
        Some(codes::APPROVAL_HANDLE_INVALID),
        "{}",
        result.text()
    );
    assert!(
        result.text().contains("too large to pause"),
        "{}",
        result.text()
    );
    assert!(result.pending.is_none());
    assert!(
        store
            .calls(&CallQuery::new(CallFilter::All, 10))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_principal_travels_through_a_pause_and_binds_the_handle() {
    let store = Arc::new(MemoryStore::new());
    let rt = runtime(store.clone(), Duration::from_secs(60));
    let counts = Arc::new(Counts::default());
    let plugin = rt.scope();
    let _regs = install(&plugin, &counts);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _observer = plugin
        .on_result(move |exec, result| {
            s.lock().unwrap().push((
                result.code().map(str::to_owned),
                exec.principal().map(|p| p.subject.clone()),
            ))
        })
        .unwrap();
    let alice = tools_runtime::Principal::new("alice")
        .with_client_id("support-console")
        .with_scopes(["notes:write"])
        .with_claim("tenant", json!("acme"));
    let handle = handle_of(
        &rt.execute(
            ToolCall::new("c1", "write", json!({"path": "a"})).with_principal(alice.clone()),
        )
        .await,
    );
    // The reviewer sees who asked; the text carries it, bound by the MAC.
    assert_eq!(handle.principal.as_ref(), Some(&alice));
    let handle = rt.parse_handle(&handle.to_string()).unwrap();
    assert_eq!(handle.principal.as_ref(), Some(&alice));
    let stored = store.get(&handle.id).await.unwrap().unwrap();
    assert_eq!(
        stored.record.principal.as_deref(),
        Some(
            r#"{"claims":{"tenant":"acme"},"client_id":"support-console","scopes":["notes:write"],"subject":"alice"}"#
        )
    );
    // Someone else's name on the handle: refused.
    let mut forged = handle.clone();
    forged.principal = Some(tools_runtime::Principal::new("mallory"));
    let err = rt.resume(&forged, Approval::Approved).await.unwrap_err();
    assert_eq!(err.code(), codes::APPROVAL_MISMATCH);
    // The resumed call is made for alice.
    rt.resume(&handle, Approval::Approved).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(None, Some("alice".to_owned()))]
    );
}

#[tokio::test]
async fn a_nested_call_is_made_for_its_parents_principal() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let inner = ToolDefinition::builder("inner")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({})))
        .execute(|_args, ctx| async move {
            Ok::<Value, ToolError>(json!(
                ctx.execution().principal().map(|p| p.subject.clone())
            ))
        })
        .build()
        .unwrap();
    let outer = ToolDefinition::builder("outer")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({})))
        .execute(|_args, ctx| async move {
            let call = ctx.nested_call("n1", "inner", json!({}));
            let result = ctx.runtime().execute(call).await;
            Ok::<Value, ToolError>(result.value().cloned().unwrap_or(Value::Null))
        })
        .build()
        .unwrap();
    let _i = plugin.register(inner).unwrap();
    let _o = plugin.register(outer).unwrap();
    let result = rt
        .execute(
            ToolCall::new("c1", "outer", json!({}))
                .with_principal(tools_runtime::Principal::new("bob")),
        )
        .await;
    assert_eq!(result.value(), Some(&json!("bob")));
    let result = rt.execute(ToolCall::new("c2", "outer", json!({}))).await;
    assert_eq!(result.value(), Some(&Value::Null));
}
