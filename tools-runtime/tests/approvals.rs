//! Durable approvals in one process (`tools_runtime::approvals`): a deferred call pauses into
//! the store and returns its handle; a resume completes it once, with the observers, the
//! guards and the body as the rules say; a handle edited in any bound field is refused and
//! nothing runs; expiry, cancellation, agent scopes by name. The stores of `tools-approvals`
//! are tested there, with processes that are killed in between.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tools_runtime::approvals::{
    ApprovalKey, ApprovalStore, CallState, DurableApprovals, MemoryStore, PendingHandle,
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
    let handle: PendingHandle = handle.to_string().parse().unwrap();
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
        // Through the text form, as a host would receive it back.
        let edited: PendingHandle = edited.to_string().parse().unwrap();
        let err = rt.resume(&edited, Approval::Approved).await.unwrap_err();
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
