//! Importing a Python `mcp` MCPServer (PyPI) over stdio, with 2026-07-28 and with the
//! `initialize` handshake, and over streamable HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;
use tools_mcp::{ImportOptions, McpImport, McpSource, Protocol, codes};
use tools_runtime::{ScopeKey, ToolCall, ToolRuntime};

fn stdio_source() -> McpSource {
    McpSource::stdio(
        support::python().to_string_lossy().into_owned(),
        [
            support::peers()
                .join("server.py")
                .to_string_lossy()
                .into_owned(),
            "stdio".to_owned(),
        ],
    )
}

async fn exercise(runtime: &ToolRuntime, import: &McpImport) {
    assert_eq!(
        import.tool_names(),
        vec!["py_fail", "py_forecast", "py_greet", "py_grow", "py_jumpy"]
    );
    let greet = runtime
        .execute(ToolCall::new("c1", "py_greet", json!({"name": "Ada"})))
        .await;
    // Python's `str` return is declared as an output schema `{"result": string}`, so the value
    // is the structured content.
    assert_eq!(
        greet.value(),
        Some(&json!({"result": "Hello, Ada!"})),
        "{greet:?}"
    );

    let schemas = runtime.schemas(ScopeKey::GLOBAL);
    let forecast = schemas.iter().find(|s| s.name == "py_forecast").unwrap();
    let output = forecast.output_schema.as_ref().unwrap();
    assert!(
        output.get("$defs").is_some(),
        "pydantic's nested model uses $defs: {output}"
    );
    let value = runtime
        .execute(ToolCall::new("c2", "py_forecast", json!({"city": "Oslo"})))
        .await;
    assert!(!value.is_error(), "{}", value.text());
    assert_eq!(
        value.value(),
        Some(
            &json!({"city": "Oslo", "temperature": 21.5, "wind": {"speed": 3.0, "direction": "NW"}})
        )
    );
    let invalid = runtime
        .execute(ToolCall::new(
            "c3",
            "py_forecast",
            json!({"city": "Oslo", "days": 9}),
        ))
        .await;
    assert_eq!(invalid.code(), Some(tools_runtime::codes::INVALID_ARGS));
    assert!(invalid.text().contains("/days: "), "{}", invalid.text());

    let failed = runtime
        .execute(ToolCall::new("c4", "py_fail", json!({"reason": "testing"})))
        .await;
    assert_eq!(failed.code(), Some(codes::MCP_TOOL_ERROR));
    assert!(
        failed.text().contains("failed on purpose: testing"),
        "{}",
        failed.text()
    );
}

async fn grows(runtime: &ToolRuntime, import: &McpImport) {
    let grow = runtime
        .execute(ToolCall::new("g", "py_grow", json!({})))
        .await;
    assert_eq!(grow.value(), Some(&json!({"result": "ok"})), "{grow:?}");
    let mut seen = false;
    for _ in 0..100 {
        if import.tool_names().contains(&"py_grown".to_owned()) {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        seen,
        "list_changed did not bring `grown`: {:?}",
        import.tool_names()
    );
    let grown = runtime
        .execute(ToolCall::new("g2", "py_grown", json!({})))
        .await;
    assert_eq!(
        grown.value(),
        Some(&json!({"result": "grown"})),
        "{grown:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_with_2026_07_28() {
    let runtime = ToolRuntime::new();
    // The probe's bound counts from the server's start; Python takes seconds to import `mcp` on
    // a busy machine, and a later answer would mean the `initialize` handshake instead.
    let import = McpImport::connect(
        runtime.scope(),
        stdio_source(),
        ImportOptions::new()
            .prefix("py_")
            .probe_timeout(Duration::from_secs(60)),
    )
    .await
    .unwrap();
    assert_eq!(import.protocol_version().as_deref(), Some("2026-07-28"));
    exercise(&runtime, &import).await;
    grows(&runtime, &import).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_with_the_initialize_handshake() {
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        stdio_source(),
        ImportOptions::new()
            .prefix("py_")
            .protocol(Protocol::Initialize),
    )
    .await
    .unwrap();
    assert_eq!(import.protocol_version().as_deref(), Some("2025-11-25"));
    exercise(&runtime, &import).await;
    grows(&runtime, &import).await;
}

struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http() {
    let mut child = Command::new(support::python())
        .arg(support::peers().join("server.py"))
        .arg("http")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _peer = Peer(child);
    let port = line.trim().strip_prefix("port ").unwrap().to_owned();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let runtime = ToolRuntime::new();
    // The server prints its port before it listens: retry for a while.
    let mut import = None;
    for _ in 0..100 {
        match McpImport::connect(
            runtime.scope(),
            McpSource::http(&url),
            ImportOptions::new().prefix("py_"),
        )
        .await
        {
            Ok(i) => {
                import = Some(i);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let import = import.expect("the Python HTTP server came up");
    exercise(&runtime, &import).await;
}
