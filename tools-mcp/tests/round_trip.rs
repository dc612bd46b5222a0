//! Round trip: a scope served over streamable HTTP and imported into a second runtime keeps its
//! schemas; calls, list changes and Code Mode's `run_code` cross both pipelines.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use serde::Serialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_code::{CodeMode, TypeScriptRuntime};
use tools_mcp::{HttpOptions, ImportOptions, McpImport, McpServer, McpSource, text_output_schema};
use tools_runtime::{
    Output, PresentationMode, ScopeKey, ToolCall, ToolDefinition, ToolRuntime, ToolSchema, tool,
};

/// A sum.
#[derive(Serialize, ToolSchema)]
struct Sum {
    /// a + b.
    sum: i64,
}

/// Add two integers.
#[tool(concurrency_safe)]
fn add(a: i64, b: i64) -> Sum {
    Sum { sum: a + b }
}

/// Shout a word.
#[tool]
fn shout(
    /// The word.
    word: String,
) -> String {
    word.to_uppercase()
}

async fn serve(runtime: &ToolRuntime, scope: &tools_runtime::Scope) -> (String, CancellationToken) {
    let _ = runtime;
    let server = McpServer::new(scope, "round-trip").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    let token = stop.clone();
    tokio::spawn(async move { server.serve_http(listener, HttpOptions::new(), token).await });
    (url, stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_and_imported_schemas_match_and_calls_cross() {
    let a = ToolRuntime::new();
    let plugin = a.scope();
    let _add = plugin.register(add::definition().unwrap()).unwrap();
    let _shout = plugin.register(shout::definition().unwrap()).unwrap();
    let raw = ToolDefinition::raw("lookup")
        .description("Look a key up.")
        .input_schema(json!({
            "type": "object",
            "$defs": {"key": {"type": "string", "minLength": 1}},
            "properties": {"key": {"$ref": "#/$defs/key"}},
            "required": ["key"]
        }))
        .output(Output::json(
            json!({"type": "object", "properties": {"found": {"type": "boolean"}}}),
        ))
        .execute(|_, _| async { Ok(json!({"found": true})) })
        .build()
        .unwrap();
    let _raw = plugin.register(raw).unwrap();
    let (url, stop) = serve(&a, &plugin).await;

    let b = ToolRuntime::new();
    let import = McpImport::connect(b.scope(), McpSource::http(&url), ImportOptions::new())
        .await
        .unwrap();
    assert_eq!(import.protocol_version().as_deref(), Some("2026-07-28"));
    let served = a.schemas(plugin.key());
    let imported = b.schemas(ScopeKey::GLOBAL);
    assert_eq!(
        served.iter().map(|s| &s.name).collect::<Vec<_>>(),
        imported.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    for (s, i) in served.iter().zip(&imported) {
        assert_eq!(s.description, i.description, "{}", s.name);
        assert_eq!(s.input_schema, i.input_schema, "{}", s.name);
        let object_output = s
            .output_schema
            .as_ref()
            .is_some_and(|o| o["type"] == "object");
        if object_output {
            assert_eq!(s.output_schema, i.output_schema, "{}", s.name);
        } else {
            // A non-object output is served as text only, and imported as text.
            assert_eq!(i.output_schema, Some(text_output_schema()), "{}", s.name);
        }
    }

    let sum = b
        .execute(ToolCall::new("c1", "add", json!({"a": 2, "b": 40})))
        .await;
    assert_eq!(sum.value(), Some(&json!({"sum": 42})));
    let loud = b
        .execute(ToolCall::new("c2", "shout", json!({"word": "hey"})))
        .await;
    assert_eq!(loud.value(), Some(&json!("HEY")));
    // B enforces A's full schema (`$ref`, `minLength`) before the call leaves.
    let empty = b
        .execute(ToolCall::new("c3", "lookup", json!({"key": ""})))
        .await;
    assert_eq!(empty.code(), Some(tools_runtime::codes::INVALID_ARGS));
    assert!(empty.text().contains("/key: "), "{}", empty.text());
    // A's own validation answers through MCP when B's is bypassed by a wrong type in A's view.
    let wrong = b
        .execute(ToolCall::new("c4", "add", json!({"a": "x", "b": 1})))
        .await;
    assert_eq!(wrong.code(), Some(tools_runtime::codes::INVALID_ARGS));

    // A registration in A reaches B through list_changed; so does a removal.
    let late = plugin
        .register(
            ToolDefinition::builder("late")
                .input_schema(json!({"type": "object"}))
                .output(Output::json(json!({"type": "object"})))
                .execute(|_, _| async { Ok(json!({"late": true})) })
                .build()
                .unwrap(),
        )
        .unwrap();
    wait_for(|| import.tool_names().contains(&"late".to_owned())).await;
    let late_call = b.execute(ToolCall::new("c5", "late", json!({}))).await;
    assert_eq!(late_call.value(), Some(&json!({"late": true})));
    late.dispose();
    wait_for(|| !import.tool_names().contains(&"late".to_owned())).await;
    assert!(b.get("late", ScopeKey::GLOBAL).is_none());
    stop.cancel();
}

async fn wait_for(condition: impl Fn() -> bool) {
    for _ in 0..200 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the condition did not hold within 10 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_code_presentation_the_served_list_is_run_code_alone() {
    let a = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(TypeScriptRuntime::new()))
        .build()
        .unwrap();
    let plugin = a.scope();
    let _add = plugin.register(add::definition().unwrap()).unwrap();
    let server = McpServer::new(&plugin, "code").unwrap();
    let names: Vec<String> = server.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, vec!["run_code".to_owned()]);

    let (url, stop) = serve(&a, &plugin).await;
    let b = ToolRuntime::new();
    let import = McpImport::connect(
        b.scope(),
        McpSource::http(&url),
        ImportOptions::new().prefix("a_"),
    )
    .await
    .unwrap();
    assert_eq!(import.tool_names(), vec!["a_run_code".to_owned()]);
    let program = "const r = await tools.add({a: 1, b: 2}); return r.sum;";
    let ran = b
        .execute(ToolCall::new(
            "c1",
            "a_run_code",
            json!({"code": program, "description": "add"}),
        ))
        .await;
    assert!(!ran.is_error(), "{}", ran.text());
    assert_eq!(ran.value().unwrap()["result"], 3);
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imported_tools_appear_in_the_sdk_and_run_from_code_mode() {
    let a = ToolRuntime::new();
    let plugin = a.scope();
    let _add = plugin.register(add::definition().unwrap()).unwrap();
    let (url, stop) = serve(&a, &plugin).await;

    let b = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(TypeScriptRuntime::new()))
        .build()
        .unwrap();
    let _import = McpImport::connect(
        b.scope(),
        McpSource::http(&url),
        ImportOptions::new().prefix("remote_"),
    )
    .await
    .unwrap();
    let prompt = b.assemble(ScopeKey::GLOBAL).unwrap();
    assert_eq!(prompt.tool_names(), vec!["run_code"]);
    let sdk = &prompt.section(tools_code::SDK_SECTION).unwrap().text;
    assert!(sdk.contains("remote_add("), "{sdk}");
    let program = "const r = await tools.remote_add({a: 20, b: 22}); return r.sum;";
    let ran = b
        .execute(ToolCall::new(
            "c1",
            "run_code",
            json!({"code": program, "description": "add"}),
        ))
        .await;
    assert!(!ran.is_error(), "{}", ran.text());
    assert_eq!(ran.value().unwrap()["result"], 42);
    stop.cancel();
}
