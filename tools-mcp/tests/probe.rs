//! The protocol probe and the handshake: a server that never answers `server/discover` gets
//! the `initialize` handshake after the probe's own bound, on the same process (import) or a
//! fresh one (the codegen CLI, which can also pin the generation); and `Protocol::Initialize`
//! asks for 2025-11-25, the version that handshake can give.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use serde_json::{Value, json};
use tools_mcp::{ImportOptions, McpImport, McpSource, Protocol};
use tools_runtime::{ToolCall, ToolRuntime};

use crate::support;

fn silent() -> String {
    format!(
        "{} {}",
        support::python().display(),
        support::peers().join("silent_probe.py").display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_silent_to_the_probe_gets_the_handshake_on_the_same_process() {
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        McpSource::command_line(&silent()).unwrap(),
        ImportOptions::new()
            .probe_timeout(Duration::from_secs(2))
            .connect_timeout(Duration::from_secs(120)),
    )
    .await
    .unwrap();
    assert_eq!(import.protocol_version().as_deref(), Some("2025-11-25"));
    let seen = runtime
        .execute(ToolCall::new("c1", "seen", json!({})))
        .await;
    let methods: Value = serde_json::from_str(&seen.text()).unwrap();
    // One process saw the probe, then the handshake (no second process was started).
    assert_eq!(
        methods,
        json!([
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_initialize_handshake_asks_for_2025_11_25() {
    let runtime = ToolRuntime::new();
    let _import = McpImport::connect(
        runtime.scope(),
        support::python_stdio("limits_server.py"),
        ImportOptions::new().protocol(Protocol::Initialize),
    )
    .await
    .unwrap();
    let asked = runtime
        .execute(ToolCall::new("c1", "client_version", json!({})))
        .await;
    assert_eq!(
        asked.value(),
        Some(&json!({"result": "2025-11-25"})),
        "{asked:?}"
    );
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let mut argv = vec!["tools-codegen"];
    argv.extend_from_slice(args);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = tools_codegen::cli::run(argv, &mut std::io::empty(), &mut out, &mut err);
    (
        status,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn codegen_falls_back_from_a_silent_probe_and_can_pin_the_generation() {
    let command = silent();
    let (status, docs, err) = cli(&["docs", "--mcp-stdio", &command]);
    assert_eq!(status, 0, "{err}");
    assert!(docs.contains("The methods this process received"), "{docs}");
    let (status, docs, err) = cli(&[
        "docs",
        "--mcp-stdio",
        &command,
        "--mcp-protocol",
        "initialize",
    ]);
    assert_eq!(status, 0, "{err}");
    assert!(docs.contains("The methods this process received"), "{docs}");
    let (status, _, err) = cli(&["docs", "--mcp-stdio", &command, "--mcp-protocol", "newest"]);
    assert_eq!(status, 2);
    assert!(err.contains("--mcp-protocol"), "{err}");
}
