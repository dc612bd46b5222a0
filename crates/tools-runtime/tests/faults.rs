//! Fault containment: a panicking body, listener, guard, wrapper, renderer or approval service
//! becomes a failure result with its own code; a panicking observer, finalizer or change
//! listener is logged and skipped; the registry keeps serving. And each call is one `tracing`
//! span carrying the tool, call id, token, parent and outcome.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tools_runtime::{
    AdditionalContext, ContentBlock, Output, PostDecision, PreDecision, Scope, ToolCall,
    ToolDefinition, ToolRuntime, codes,
};

fn tool(name: &str, body_panics: bool) -> ToolDefinition {
    ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(move |_a, ctx| async move {
            ctx.defer_context(AdditionalContext::new("t", "kept"));
            if body_panics {
                panic!("body exploded");
            }
            Ok(json!(1))
        })
        .build()
        .unwrap()
}

async fn run(rt: &ToolRuntime, scope: &Scope, name: &str) -> tools_runtime::ToolExecutionResult {
    rt.execute(ToolCall::new("c", name, json!({})).with_agent(scope.key()))
        .await
}

#[tokio::test]
async fn every_panicking_hook_becomes_a_failure_with_its_own_code_and_the_registry_keeps_serving() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _ok = plugin.register(tool("fine", false)).unwrap();

    // The body, in its async part; deferred contexts survive.
    let a = rt.agent_scope();
    let _t = a.register(tool("t", true)).unwrap();
    let r = run(&rt, &a, "t").await;
    assert_eq!(r.code(), Some(codes::TOOL_PANICKED));
    assert_eq!(
        r.text(),
        "Error: the tool body of `t` panicked: body exploded"
    );
    assert_eq!(r.additional_contexts.len(), 1);

    // The body, before it returns a future.
    let a = rt.agent_scope();
    let sync_panic = ToolDefinition::builder("t")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({})))
        .execute_boxed(Arc::new(|_a, _c| panic!("no future for you")))
        .build()
        .unwrap();
    let _t = a.register(sync_panic).unwrap();
    assert_eq!(run(&rt, &a, "t").await.code(), Some(codes::TOOL_PANICKED));

    // A synchronous and an asynchronous pre-execute listener.
    let a = rt.agent_scope();
    let _t = a.register(tool("t", false)).unwrap();
    let _l = a.on_pre_execute(|_, _| panic!("pre")).unwrap();
    assert_eq!(
        run(&rt, &a, "t").await.code(),
        Some(codes::LISTENER_PANICKED)
    );
    let a = rt.agent_scope();
    let _t = a.register(tool("t", false)).unwrap();
    let _l = a
        .on_pre_execute_async(|_, d| async move {
            tokio::task::yield_now().await;
            if matches!(d, PreDecision::Allow) {
                panic!("async pre");
            }
            d
        })
        .unwrap();
    assert_eq!(
        run(&rt, &a, "t").await.code(),
        Some(codes::LISTENER_PANICKED)
    );

    // The approval service.
    let a = rt.agent_scope();
    let _t = a.register(tool("t", false)).unwrap();
    let _l = a.on_pre_execute(|_, _| PreDecision::ask("check")).unwrap();
    let _s = a
        .set_approval(
            |_e: tools_runtime::ToolExecution, _r: Option<String>| async { panic!("approval") },
        )
        .unwrap();
    assert_eq!(
        run(&rt, &a, "t").await.code(),
        Some(codes::LISTENER_PANICKED)
    );
    drop(a);

    // A guard.
    let a = rt.agent_scope();
    let _t = a.register(tool("t", false)).unwrap();
    let _g = a.guard(|_| panic!("guard")).unwrap();
    assert_eq!(run(&rt, &a, "t").await.code(), Some(codes::GUARD_PANICKED));

    // A wrapper, synchronously and inside its future.
    let a = rt.agent_scope();
    let _t = a.register(tool("t", false)).unwrap();
    let _w = a
        .wrap_execute(
            |_d, _n| -> futures::future::Ready<Result<Value, tools_runtime::ToolError>> {
                panic!("wrapper")
            },
        )
        .unwrap();
    assert_eq!(
        run(&rt, &a, "t").await.code(),
        Some(codes::WRAPPER_PANICKED)
    );
    let a = rt.agent_scope();
    let _t = a.register(tool("t", false)).unwrap();
    let _w = a
        .wrap_execute(|d, n| async move {
            let _ = n.run(d).await;
            panic!("after the body")
        })
        .unwrap();
    assert_eq!(
        run(&rt, &a, "t").await.code(),
        Some(codes::WRAPPER_PANICKED)
    );

    // A post-execute listener.
    let a = rt.agent_scope();
    let _t = a.register(tool("t", false)).unwrap();
    let _p = a
        .on_post_execute(|_, _| -> PostDecision { panic!("post") })
        .unwrap();
    assert_eq!(
        run(&rt, &a, "t").await.code(),
        Some(codes::LISTENER_PANICKED)
    );

    // The renderer.
    let a = rt.agent_scope();
    let bad_render = ToolDefinition::builder("t")
        .input_schema(json!({"type": "object"}))
        .output(Output::new(json!({}), |_, _| panic!("render")))
        .execute(|_a, _c| async { Ok(json!(1)) })
        .build()
        .unwrap();
    let _t = a.register(bad_render).unwrap();
    assert_eq!(run(&rt, &a, "t").await.code(), Some(codes::RENDER_PANICKED));

    // After all that, the registry still serves.
    let r = rt.execute(ToolCall::new("c", "fine", json!({}))).await;
    assert_eq!(r.value(), Some(&json!(1)));
}

#[tokio::test]
async fn panicking_observers_finalizers_and_change_listeners_are_logged_and_skipped() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _c = plugin.on_change(|_| panic!("change listener")).unwrap();
    let def = ToolDefinition::builder("t")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, _c| async { Ok(json!(2)) })
        .finalize_content(|_, _| panic!("finalizer"))
        .build()
        .unwrap();
    let _t = plugin.register(def).unwrap(); // the change listener panics here, contained
    let seen = Arc::new(AtomicUsize::new(0));
    let _o1 = plugin.on_result(|_, _| panic!("observer")).unwrap();
    let s = seen.clone();
    let _o2 = plugin
        .on_result(move |_, _| {
            s.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    let r = rt.execute(ToolCall::new("c", "t", json!({}))).await;
    assert_eq!(r.value(), Some(&json!(2)));
    assert_eq!(r.content, vec![ContentBlock::text("2")], "content kept");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        1,
        "the next observer still ran"
    );
}

// --- tracing --------------------------------------------------------------------------------

/// A minimal subscriber that records every `tool_call` span's fields.
#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<HashMap<u64, HashMap<String, String>>>>,
    next: Arc<AtomicUsize>,
}

struct Visit<'a>(&'a mut HashMap<String, String>);
impl tracing::field::Visit for Visit<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) as u64 + 1;
        let mut fields = HashMap::new();
        fields.insert("@name".to_owned(), attrs.metadata().name().to_owned());
        attrs.record(&mut Visit(&mut fields));
        self.spans.lock().unwrap().insert(id, fields);
        tracing::span::Id::from_u64(id)
    }
    fn record(&self, span: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        if let Some(fields) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Visit(fields));
        }
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn each_call_is_a_tracing_span_with_tool_call_id_parent_and_outcome() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _t = plugin.register(tool("traced", false)).unwrap();
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
    let spans = recorder.spans.lock().unwrap();
    let mut calls: Vec<&HashMap<String, String>> = spans
        .values()
        .filter(|f| f["@name"] == "tool_call")
        .collect();
    calls.sort_by_key(|f| f["call_id"].clone());
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["tool"], "traced");
    assert_eq!(calls[0]["call_id"], "call-7");
    assert_eq!(calls[0]["outcome"], "ok");
    assert!(
        !calls[0].contains_key("parent"),
        "a top-level call has no parent"
    );
    assert_eq!(calls[1]["tool"], "missing");
    assert_eq!(calls[1]["outcome"], codes::UNKNOWN_TOOL);
    // The parent field is the parent's token, correlating the nested span with its parent.
    assert_eq!(calls[1]["parent"], calls[0]["token"]);
}
