//! Fault containment: a panicking body, listener, guard, wrapper, renderer or approval service
//! becomes a failure result with its own code; a panicking observer, finalizer or change
//! listener is logged and skipped; the registry keeps serving. (The `tracing` span of each call
//! is tested in `tracing_span.rs`, alone in its binary.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tools_runtime::hooks::{PostDecision, PreDecision};
use tools_runtime::{
    AdditionalContext, ContentBlock, Output, Scope, ToolCall, ToolDefinition, ToolRuntime, codes,
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
