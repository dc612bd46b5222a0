//! Importing npm's `@modelcontextprotocol/server-everything` over stdio, through the pipeline.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_mcp::{ImportOptions, McpImport, codes};
use tools_runtime::{ToolCall, ToolRuntime};

async fn import(runtime: &ToolRuntime) -> McpImport {
    McpImport::connect(
        runtime.scope(),
        support::everything_source(),
        ImportOptions::new().prefix("ev_"),
    )
    .await
    .expect("server-everything connects")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_registered_and_called_through_the_pipeline() {
    let runtime = ToolRuntime::new();
    let import = import(&runtime).await;
    let names = import.tool_names();
    eprintln!("negotiated {:?}", import.protocol_version());
    assert!(import.protocol_version().is_some());
    for expected in [
        "ev_echo",
        "ev_get-structured-content",
        "ev_trigger-long-running-operation",
    ] {
        assert!(
            names.contains(&expected.to_owned()),
            "{expected} missing from {names:?}"
        );
    }
    // Every listed tool the server offers is visible in the registry under its mapped name.
    let schemas = runtime.schemas(tools_runtime::ScopeKey::GLOBAL);
    let registered: Vec<&str> = schemas.iter().map(|s| s.name.as_str()).collect();
    for name in &names {
        assert!(registered.contains(&name.as_str()), "{name} not registered");
    }
    let echo = schemas.iter().find(|s| s.name == "ev_echo").unwrap();
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    assert_eq!(echo.description, "Echoes back the input string");

    let result = runtime
        .execute(ToolCall::new("c1", "ev_echo", json!({"message": "hello"})))
        .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.value(), Some(&json!("Echo: hello")));
    assert_eq!(result.text(), "Echo: hello");

    // Structured content, validated against the server's own output schema.
    let structured = schemas
        .iter()
        .find(|s| s.name == "ev_get-structured-content")
        .unwrap();
    assert!(
        structured
            .output_schema
            .as_ref()
            .is_some_and(|o| o["properties"]["humidity"].is_object())
    );
    let result = runtime
        .execute(ToolCall::new(
            "c2",
            "ev_get-structured-content",
            json!({"location": "Chicago"}),
        ))
        .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.value(),
        Some(&json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_are_checked_against_the_full_schema_and_guards_apply() {
    let runtime = ToolRuntime::new();
    let _import = import(&runtime).await;
    let wrong = runtime
        .execute(ToolCall::new(
            "c1",
            "ev_get-structured-content",
            json!({"location": "Paris"}),
        ))
        .await;
    assert_eq!(wrong.code(), Some(tools_runtime::codes::INVALID_ARGS));
    assert!(wrong.text().contains("/location: "), "{}", wrong.text());
    let missing = runtime
        .execute(ToolCall::new("c2", "ev_echo", json!({})))
        .await;
    assert_eq!(missing.code(), Some(tools_runtime::codes::INVALID_ARGS));
    assert!(
        missing
            .text()
            .contains("\"message\" is a required property"),
        "{}",
        missing.text()
    );

    let policy = runtime.scope();
    let _guard = policy
        .guard(|call| {
            (call.arguments()["message"] == "secret").then(|| "no secrets to the server".to_owned())
        })
        .unwrap();
    let denied = runtime
        .execute(ToolCall::new("c3", "ev_echo", json!({"message": "secret"})))
        .await;
    assert_eq!(denied.code(), Some(tools_runtime::codes::GUARD_DENIED));
    assert_eq!(denied.text(), "Error: no secrets to the server");
    let allowed = runtime
        .execute(ToolCall::new("c4", "ev_echo", json!({"message": "public"})))
        .await;
    assert_eq!(allowed.text(), "Echo: public");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_is_cancelled_mid_call_and_the_connection_stays_usable() {
    let runtime = ToolRuntime::new();
    let _import = import(&runtime).await;
    let cancel = CancellationToken::new();
    let call = ToolCall::new(
        "long",
        "ev_trigger-long-running-operation",
        json!({"duration": 60, "steps": 60}),
    )
    .with_cancel(cancel.clone());
    let rt = runtime.clone();
    let running = tokio::spawn(async move { rt.execute(call).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!running.is_finished());
    cancel.cancel();
    let result = running.await.unwrap();
    assert_eq!(
        result.code(),
        Some(tools_runtime::codes::ABORTED),
        "{}",
        result.text()
    );
    let after = runtime
        .execute(ToolCall::new(
            "c2",
            "ev_echo",
            json!({"message": "still here"}),
        ))
        .await;
    assert_eq!(after.text(), "Echo: still here");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_fails_its_calls_clearly_and_can_be_reconnected() {
    let runtime = ToolRuntime::new();
    let import = import(&runtime).await;
    let pid = import.server_pid().expect("a stdio child has a pid");
    let rt = runtime.clone();
    let running = tokio::spawn(async move {
        rt.execute(ToolCall::new(
            "long",
            "ev_trigger-long-running-operation",
            json!({"duration": 60, "steps": 60}),
        ))
        .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!running.is_finished());
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let result = running.await.unwrap();
    assert_eq!(
        result.code(),
        Some(codes::MCP_SERVER_GONE),
        "{}",
        result.text()
    );
    assert!(result.text().contains("not connected"), "{}", result.text());
    let later = runtime
        .execute(ToolCall::new("c2", "ev_echo", json!({"message": "x"})))
        .await;
    assert_eq!(
        later.code(),
        Some(codes::MCP_SERVER_GONE),
        "{}",
        later.text()
    );
    assert!(!import.is_connected());

    import.reconnect().await.expect("reconnects");
    assert!(import.is_connected());
    let back = runtime
        .execute(ToolCall::new("c3", "ev_echo", json!({"message": "back"})))
        .await;
    assert_eq!(back.text(), "Echo: back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_mapped_by_the_rule_and_collisions_are_errors() {
    let runtime = ToolRuntime::new();
    let only_echo = McpImport::connect(
        runtime.scope(),
        support::everything_source(),
        ImportOptions::new().rename(|name| (name == "echo").then(|| "say".to_owned())),
    )
    .await
    .unwrap();
    assert_eq!(only_echo.tool_names(), vec!["say".to_owned()]);
    let said = runtime
        .execute(ToolCall::new("c1", "say", json!({"message": "m"})))
        .await;
    assert_eq!(said.text(), "Echo: m");

    let all_one = McpImport::connect(
        runtime.scope(),
        support::everything_source(),
        ImportOptions::new().rename(|_| Some("same".to_owned())),
    )
    .await
    .unwrap_err();
    assert_eq!(all_one.code(), "MCP_NAME_COLLISION");
    assert!(
        all_one.to_string().contains("both map to `same`"),
        "{all_one}"
    );

    let taken = McpImport::connect(
        runtime.scope(),
        support::everything_source(),
        ImportOptions::new().rename(|name| (name == "echo").then(|| "say".to_owned())),
    )
    .await;
    // `say` lives in the global layer already (another plugin's registration).
    let err = taken.unwrap_err();
    assert_eq!(err.code(), "MCP_NAME_COLLISION");
    assert!(err.to_string().contains("already registered"), "{err}");
    drop(only_echo);
}
