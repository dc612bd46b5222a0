//! Each call is one `tracing` span carrying the tool, call id, token, parent and outcome.
//!
//! This test sits alone in its own binary: `tracing` caches each call site's interest
//! process-wide, and a test running on another thread without a subscriber can race the
//! thread-local subscriber installed here, so sharing a binary made it flaky.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::tracing_support;

use std::sync::{Arc, Mutex};

use serde_json::json;
use tools_runtime::{Output, ToolCall, ToolDefinition, ToolRuntime, codes};
use tracing_support::Recorder;

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, _ctx| async move { Ok(json!(1)) })
        .build()
        .unwrap()
}

#[test]
fn each_call_is_a_tracing_span_with_tool_call_id_parent_and_outcome() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _t = plugin.register(tool("traced")).unwrap();
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let t = tokens.clone();
    let _o = plugin
        .on_result(move |exec, _| t.lock().unwrap().push(exec.token()))
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let _ = rt
            .execute(ToolCall::new("call-7", "traced", json!({})))
            .await;
        let parent = tokens.lock().unwrap()[0];
        let _ = rt
            .execute(ToolCall::new("call-8", "missing", json!({})).with_parent(parent))
            .await;
    });
    let mut calls: Vec<std::collections::HashMap<String, String>> = recorder
        .named("execute_tool")
        .into_iter()
        .map(|(_, span)| span.fields)
        .collect();
    calls.sort_by_key(|f| f["gen_ai.tool.call.id"].clone());
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["gen_ai.tool.name"], "traced");
    assert_eq!(calls[0]["gen_ai.tool.call.id"], "call-7");
    assert_eq!(calls[0]["agent_tools.outcome"], "ok");
    assert!(
        !calls[0].contains_key("agent_tools.parent"),
        "a top-level call has no parent"
    );
    assert_eq!(calls[1]["gen_ai.tool.name"], "missing");
    assert_eq!(calls[1]["agent_tools.outcome"], codes::UNKNOWN_TOOL);
    // The parent field is the parent's token, correlating the nested span with its parent.
    assert_eq!(
        calls[1]["agent_tools.parent"],
        calls[0]["agent_tools.token"]
    );
}

/// A duration field of a call's span, in seconds.
fn seconds(fields: &std::collections::HashMap<String, String>, key: &str) -> f64 {
    let text = fields
        .get(key)
        .unwrap_or_else(|| panic!("no {key} in {fields:?}"));
    let secs: f64 = text.parse().unwrap_or_else(|_| panic!("{key} = {text}"));
    assert!(secs.is_finite() && secs >= 0.0, "{key} = {secs}");
    secs
}

/// The span carries the scope's presentation mode and how long each phase took: the wait on
/// the approval service inside admission, the body inside dispatch; a call refused before its
/// body has no dispatch phase. `execute_batch` records the same. The span declares at most 17
/// fields: from 18 on, the OpenTelemetry layer's allocation for them is a large chunk for
/// glibc's malloc, and each traced call costs about 0.4 us more (see `Run::enter`).
#[test]
fn a_calls_span_carries_its_presentation_mode_and_the_duration_of_each_phase() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let slow = ToolDefinition::builder("slow")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, _ctx| async move {
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            Ok(json!(1))
        })
        .build()
        .unwrap();
    let _s = plugin.register(slow).unwrap();
    let _ask = plugin
        .on_pre_execute(|exec, decision| {
            if exec.call_id().starts_with("asked") {
                tools_runtime::hooks::PreDecision::ask("a person looks")
            } else {
                decision
            }
        })
        .unwrap();
    let _approval = plugin
        .set_approval(|_exec, _reason| async {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            tools_runtime::hooks::Approval::Approved
        })
        .unwrap();
    let agent = rt.agent_scope();
    let _mode = agent
        .present_as(tools_runtime::PresentationMode::Both)
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let plain = rt.execute(ToolCall::new("plain", "slow", json!({}))).await;
        assert!(!plain.is_error(), "{plain:?}");
        let asked = rt
            .execute(ToolCall::new("asked", "slow", json!({})).with_agent(agent.key()))
            .await;
        assert!(!asked.is_error(), "{asked:?}");
        let bad = rt
            .execute(ToolCall::new("invalid", "slow", json!([])))
            .await;
        assert_eq!(bad.code(), Some(codes::INVALID_ARGS));
        let batch = rt
            .execute_batch(
                vec![
                    ToolCall::new("batch-1", "slow", json!({})),
                    ToolCall::new("asked-batch-2", "slow", json!({})),
                ],
                2,
            )
            .await;
        assert!(batch.iter().all(|r| !r.is_error()), "{batch:?}");
    });
    let calls: std::collections::HashMap<String, std::collections::HashMap<String, String>> =
        recorder
            .named("execute_tool")
            .into_iter()
            .map(|(_, span)| (span.fields["gen_ai.tool.call.id"].clone(), span.fields))
            .collect();
    assert_eq!(calls.len(), 5, "{calls:?}");
    let declared = recorder.named("execute_tool")[0].1.declared;
    assert!(declared <= 17, "the span declares {declared} fields");
    for (id, mode) in [
        ("plain", "native"),
        ("asked", "both"),
        ("invalid", "native"),
        ("batch-1", "native"),
        ("asked-batch-2", "native"),
    ] {
        let fields = &calls[id];
        assert_eq!(fields["agent_tools.presentation_mode"], mode, "{id}");
        seconds(fields, "agent_tools.admit.duration");
        if id == "invalid" {
            assert!(
                !fields.contains_key("agent_tools.dispatch.duration"),
                "{fields:?}"
            );
        } else {
            // The body sleeps 30 ms: all of it inside dispatch.
            assert!(
                seconds(fields, "agent_tools.dispatch.duration") >= 0.03,
                "{id}: {fields:?}"
            );
        }
        if id.starts_with("asked") {
            // The approval service takes 20 ms: inside admission.
            assert!(
                seconds(fields, "agent_tools.admit.duration") >= 0.02,
                "{fields:?}"
            );
        }
    }
}

/// A call that pauses for a person records `APPROVAL_PENDING` and an event with the pending
/// call's id on its span; the resumed call's span has an event with the same id, and the
/// outcome of the resumed call.
#[test]
fn a_paused_call_and_its_resume_carry_the_pending_id_as_events() {
    use tools_runtime::approvals::{ApprovalKey, DurableApprovals, MemoryStore};
    use tools_runtime::hooks::{Approval, PreDecision};
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let rt = ToolRuntime::builder()
        .durable_approvals(DurableApprovals::new(
            MemoryStore::new(),
            ApprovalKey::new([5u8; 32]).unwrap(),
        ))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let _t = plugin.register(tool("gated")).unwrap();
    let _ask = plugin
        .on_pre_execute(|_exec, _decision| PreDecision::ask("a person looks"))
        .unwrap();
    let _later = plugin
        .set_approval(|_exec, _reason| async { Approval::later() })
        .unwrap();
    let agent = rt.agent_scope_named("reviewed").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let id = runtime.block_on(async {
        let paused = rt
            .execute(ToolCall::new("p-1", "gated", json!({})).with_agent(agent.key()))
            .await;
        assert_eq!(paused.code(), Some(codes::APPROVAL_PENDING), "{paused:?}");
        let handle = paused.pending.unwrap().handle().unwrap().clone();
        let done = rt.resume(&handle, Approval::Approved).await.unwrap();
        assert!(!done.is_error(), "{done:?}");
        handle.id.clone()
    });
    let spans = recorder.named("execute_tool");
    assert_eq!(spans.len(), 2, "{spans:?}");
    let outcomes: Vec<&str> = spans
        .iter()
        .map(|(_, span)| span.fields["agent_tools.outcome"].as_str())
        .collect();
    assert_eq!(outcomes, [codes::APPROVAL_PENDING, "ok"]);
    let events = recorder.events.lock().unwrap();
    let with_id: Vec<&std::collections::HashMap<String, String>> = events
        .iter()
        .filter(|e| e.get("agent_tools.pending_id") == Some(&id))
        .collect();
    assert_eq!(with_id.len(), 2, "{events:?}");
    for (event, (span, _)) in with_id.iter().zip(&spans) {
        assert_eq!(event.get("span"), Some(&span.to_string()), "{event:?}");
    }
}

/// A call resumed with edited arguments says so on its span: an event with the pending id
/// and `agent_tools.approval.edited`.
#[test]
fn a_resume_with_edited_arguments_is_an_event_on_the_span() {
    use tools_runtime::approvals::{ApprovalKey, DurableApprovals, MemoryStore};
    use tools_runtime::hooks::{Approval, PreDecision};
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let rt = ToolRuntime::builder()
        .durable_approvals(DurableApprovals::new(
            MemoryStore::new(),
            ApprovalKey::new([5u8; 32]).unwrap(),
        ))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let _t = plugin.register(tool("gated")).unwrap();
    let _ask = plugin
        .on_pre_execute(|_exec, _decision| PreDecision::ask("a person looks"))
        .unwrap();
    let _later = plugin
        .set_approval(|_exec, _reason| async { Approval::later() })
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let id = runtime.block_on(async {
        let paused = rt.execute(ToolCall::new("p-1", "gated", json!({}))).await;
        let handle = paused.pending.unwrap().handle().unwrap().clone();
        let done = rt
            .resume_edited(&handle, json!({}), Default::default())
            .await
            .unwrap();
        assert!(!done.is_error(), "{done:?}");
        handle.id.clone()
    });
    let spans = recorder.named("execute_tool");
    assert_eq!(spans.len(), 2, "{spans:?}");
    let events = recorder.events.lock().unwrap();
    let edited: Vec<_> = events
        .iter()
        .filter(|e| e.get("agent_tools.approval.edited").map(String::as_str) == Some("true"))
        .collect();
    assert_eq!(edited.len(), 1, "{events:?}");
    assert_eq!(edited[0].get("agent_tools.pending_id"), Some(&id));
    assert_eq!(edited[0].get("span"), Some(&spans[1].0.to_string()));
}

/// Says so, in a `tracing` event, when it is dropped.
struct Noisy(&'static str);

impl Drop for Noisy {
    fn drop(&mut self) {
        tracing::info!(dropped = self.0);
    }
}

/// The span an event named `dropped` = `what` was emitted in.
fn dropped_in(recorder: &Recorder, what: &str) -> Option<String> {
    let events = recorder.events.lock().unwrap();
    let event = events
        .iter()
        .find(|e| e.get("dropped").map(String::as_str) == Some(what))
        .unwrap_or_else(|| panic!("no event for {what}: {events:?}"));
    event.get("span").cloned()
}

#[test]
fn a_call_enters_its_span_once_per_poll_and_drops_its_body_inside_it() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let done = ToolDefinition::builder("done")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, _ctx| async move {
            let _noisy = Noisy("done's body");
            Ok(json!(1))
        })
        .build()
        .unwrap();
    let hangs = ToolDefinition::builder("hangs")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, _ctx| async move {
            let _noisy = Noisy("hangs' body");
            std::future::pending::<()>().await;
            Ok(json!(1))
        })
        .build()
        .unwrap();
    let _d = plugin.register(done).unwrap();
    let _h = plugin.register(hangs).unwrap();

    // Completed in one poll: the span is entered once, and the body is dropped inside it.
    let result = futures::executor::block_on(rt.execute(ToolCall::new("c1", "done", json!({}))));
    assert!(!result.is_error(), "{}", result.text());
    let (done_span, _) = recorder.named("execute_tool")[0].clone();
    assert_eq!(recorder.enters.lock().unwrap()[&done_span], 1);
    assert_eq!(
        dropped_in(&recorder, "done's body"),
        Some(done_span.to_string())
    );

    // Dropped before it completes: what the call holds (the body) is dropped inside the span.
    let mut call = Box::pin(rt.execute(ToolCall::new("c2", "hangs", json!({}))));
    let waker = futures::task::noop_waker();
    let polled = call
        .as_mut()
        .poll(&mut std::task::Context::from_waker(&waker));
    assert!(polled.is_pending());
    drop(call);
    let (hangs_span, _) = recorder.named("execute_tool")[1].clone();
    assert_eq!(
        dropped_in(&recorder, "hangs' body"),
        Some(hangs_span.to_string())
    );
}
