//! Values 100,000 levels deep pass through the pipeline without overflowing the stack: frozen
//! arguments are dropped, outputs are validated, rendered, rejected and replaced without
//! recursion. The test drops the deep values it keeps with `tools_schema::deep::drop_value`
//! (a recursive drop would overflow here).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use serde_json::{Value, json};
use tools_runtime::hooks::PostDecision;
use tools_runtime::schema::deep::drop_value;
use tools_runtime::{Output, ToolCall, ToolDefinition, ToolRuntime, codes};

const DEPTH: usize = 100_000;

/// `[[[ ... [1] ... ]]]`, built without recursion.
fn deep_array() -> Value {
    let mut v = json!(1);
    for _ in 0..DEPTH {
        v = Value::Array(vec![v]);
    }
    v
}

fn deep_object() -> Value {
    let mut v = json!(1);
    for _ in 0..DEPTH {
        let mut m = serde_json::Map::new();
        m.insert("k".into(), v);
        v = Value::Object(m);
    }
    v
}

/// `{"mode": "x", "payload": payload}` (not with `json!`, which would serialize the payload
/// recursively).
fn args_with_payload(payload: Value) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("mode".into(), json!("x"));
    m.insert("payload".into(), payload);
    Value::Object(m)
}

#[test]
fn deep_arguments_and_outputs_never_overflow_the_stack() {
    // Run on a thread with a modest, explicit stack so the check does not depend on defaults.
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            rt.block_on(scenario());
        })
        .unwrap()
        .join()
        .unwrap();
}

async fn scenario() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let any = ToolDefinition::builder("deep")
        .input_schema(json!({"type": "object", "properties": {"mode": {"type": "string"}}}))
        .output(Output::json(json!({})))
        .execute(|args, _c| async move {
            match args["mode"].as_str() {
                Some("array") => Ok(deep_array()),
                _ => Ok(args
                    .get("payload")
                    .map(|_| json!("seen"))
                    .unwrap_or(json!(null))),
            }
        })
        .build()
        .unwrap();
    let _a = plugin.register(any).unwrap();
    let strict = ToolDefinition::builder("strict")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, _c| async move { Ok(deep_object()) })
        .build()
        .unwrap();
    let _s = plugin.register(strict).unwrap();

    // Deep arguments: validated, frozen, and dropped by the pipeline (it holds the last Arc).
    let r = rt
        .execute(ToolCall::new(
            "c1",
            "deep",
            Arc::new(args_with_payload(deep_object())),
        ))
        .await;
    assert_eq!(r.value(), Some(&json!("seen")));

    // A deep output: validated against `{}` and rendered as compact JSON.
    let mut r = rt
        .execute(ToolCall::new("c2", "deep", json!({"mode": "array"})))
        .await;
    let text = r.text();
    assert_eq!(r.code(), None, "{}", &text[..text.len().min(300)]);
    assert_eq!(text.len(), 2 * DEPTH + 1);
    assert!(text[..DEPTH].bytes().all(|b| b == b'['));
    assert_eq!(&text[DEPTH..=DEPTH], "1");
    assert!(text[DEPTH + 1..].bytes().all(|b| b == b']'));
    if let tools_runtime::ToolOutcome::Success { value } = &mut r.outcome {
        drop_value(std::mem::take(value));
    }

    // A deep output that breaks the output schema is rejected and dropped safely.
    let r = rt.execute(ToolCall::new("c3", "strict", json!({}))).await;
    assert_eq!(r.code(), Some(codes::INVALID_OUTPUT));

    // A post-execute listener replacing a deep value drops the old one safely.
    let agent = rt.agent_scope();
    let _p = agent
        .on_post_execute(|_, _| PostDecision::replace_value(json!("small")))
        .unwrap();
    let r = rt
        .execute(ToolCall::new("c4", "deep", json!({"mode": "array"})).with_agent(agent.key()))
        .await;
    assert_eq!(r.value(), Some(&json!("small")));
}

#[test]
fn a_raw_input_schema_100_000_levels_deep_is_listed_and_assembled_without_recursion() {
    // A schema from outside (an MCP server), nested deep: listing and prompt assembly copy,
    // compare and drop it without recursion.
    let mut schema = json!({"type": "string"});
    for _ in 0..DEPTH {
        schema = json!({"type": "object", "properties": {"a": Value::Null}})
            .as_object()
            .cloned()
            .map(|mut o| {
                o.insert("properties".into(), {
                    let mut p = serde_json::Map::new();
                    p.insert("a".into(), schema);
                    Value::Object(p)
                });
                Value::Object(o)
            })
            .unwrap();
    }
    let def = ToolDefinition::raw("deep")
        .input_schema(schema)
        .output(Output::json(json!({"type": "null"})))
        .execute(|_a, _c| async { Ok(Value::Null) })
        .build()
        .unwrap();
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _d = plugin.register(def).unwrap();
    let listed = rt.schemas(plugin.key());
    assert_eq!(listed.len(), 1);
    let assembly = rt.assemble(plugin.key()).unwrap();
    let again = rt.assemble(plugin.key()).unwrap();
    assert_eq!(assembly.tool_names(), vec!["deep"]);
    assert!(Arc::ptr_eq(&assembly.tools[0], &again.tools[0]));
    // A listed entry belongs to the caller, who drops deep schemas with `drop_value`; the
    // registry's own copies (the definition, the cached assembly) drop without recursion.
    for entry in listed {
        drop_value(entry.input_schema);
    }
    drop((assembly, again));
}
