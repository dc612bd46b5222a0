//! A `run_code` call is a `run_code` span (inside its own `tool_call` span), and each call its
//! program makes is a `tool_call` span whose parent is that `run_code` span.
//!
//! Alone in its binary for the reason given in `tracing_span.rs`.

#![cfg(feature = "typescript")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::tracing_support;

use serde_json::json;
use tools_code::{CodeMode, TypeScriptRuntime};
use tools_runtime::{Output, PresentationMode, ToolCall, ToolDefinition, ToolRuntime};
use tracing_support::{Recorder, SpanInfo};

#[test]
fn sub_call_spans_are_children_of_the_run_code_span() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(TypeScriptRuntime::new()))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let _t = plugin
        .register(
            ToolDefinition::builder("leaf")
                .input_schema(json!({"type": "object"}))
                .output(Output::json(json!({"type": "integer"})))
                .concurrency_safe(|_| true)
                .execute(|_a, _ctx| async { Ok(json!(1)) })
                .build()
                .unwrap(),
        )
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(rt.execute(ToolCall::new(
        "outer",
        "run_code",
        json!({"code": "await Promise.all([tools.leaf({}), tools.leaf({})]); return 2;",
               "description": "two leaves"}),
    )));
    assert!(!result.is_error(), "{}", result.text());

    let spans = recorder.spans.lock().unwrap().clone();
    let find = |pred: &dyn Fn(&SpanInfo) -> bool| -> Vec<(u64, SpanInfo)> {
        let mut v: Vec<(u64, SpanInfo)> = spans
            .iter()
            .filter(|(_, s)| pred(s))
            .map(|(id, s)| (*id, s.clone()))
            .collect();
        v.sort_by_key(|(id, _)| *id);
        v
    };
    let outer = find(&|s| {
        s.name == "execute_tool"
            && s.fields.get("gen_ai.tool.name").map(String::as_str) == Some("run_code")
    });
    assert_eq!(outer.len(), 1);
    let run = find(&|s| s.name == "run_code");
    assert_eq!(run.len(), 1);
    assert_eq!(
        run[0].1.parent,
        Some(outer[0].0),
        "run_code runs inside its execute_tool span"
    );
    assert_eq!(run[0].1.fields["gen_ai.tool.call.id"], "outer");
    assert_eq!(run[0].1.fields["agent_tools.code.sub_calls"], "2");
    assert_eq!(run[0].1.fields["agent_tools.code.may_call"], "closed");
    // The analysis is a child of the run_code call, the engine's run a child of the run.
    let analysis = find(&|s| s.name == "code_analysis");
    assert_eq!(analysis.len(), 1);
    assert_eq!(analysis[0].1.parent, Some(outer[0].0));
    let engine = find(&|s| s.name == "code_engine");
    assert_eq!(engine.len(), 1);
    assert_eq!(engine[0].1.parent, Some(run[0].0));
    let leaves = find(&|s| {
        s.name == "execute_tool"
            && s.fields.get("gen_ai.tool.name").map(String::as_str) == Some("leaf")
    });
    assert_eq!(leaves.len(), 2);
    for (_, leaf) in &leaves {
        assert_eq!(leaf.parent, Some(run[0].0), "{leaf:?}");
        assert_eq!(leaf.fields["agent_tools.outcome"], "ok");
        assert_eq!(
            leaf.fields["agent_tools.parent"],
            outer[0].1.fields["agent_tools.token"]
        );
    }
}
