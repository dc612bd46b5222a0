//! The limit of one message and the timeout of a call, both ways, against real peers.
//!
//! Serve: the official Python client sends `tools-mcp serve` a request over the limit, over
//! stdio and HTTP, with both protocol generations; it gets a JSON-RPC error for its id that
//! names the size and the limit, and its session goes on. Import: a Python `MCPServer` answers
//! over the limit (over stdio, and over HTTP as an SSE event or a plain JSON body); the call
//! fails with `MCP_MESSAGE_TOO_LARGE` instead of waiting forever, and the next call works; a
//! tool list over the limit fails the import, naming the limit. A call the server does not
//! answer in time fails with `MCP_TIMEOUT` and the server sees it cancelled; a timeout that
//! restarts on progress lets a reporting call run past it, and fails one that goes quiet, or runs
//! past its maximum total time, saying which.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use serde_json::{Value, json};
use tools_mcp::{DEFAULT_MAX_MESSAGE_SIZE, ImportOptions, McpImport, McpSource, codes};
use tools_runtime::{ScopeKey, ToolCall, ToolRuntime};

use crate::support::{self, SERVER};

/// What the Python client saw: the oversized call refused for its id, the next call answered.
fn assert_refused(seen: &Value, size_at_least: usize, limit: usize) {
    let first = &seen["first"];
    assert_eq!(first["error"]["code"], -32600, "{seen}");
    let message = first["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("over the limit of {limit} bytes")),
        "{message}"
    );
    let size: usize = message
        .strip_prefix("the request is ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no size in {message}"));
    assert!(size > size_at_least, "{message}");
    assert_eq!(seen["after"], json!({"text": "after", "is_error": false}));
}

fn oversized(mode: &str, target: &[&str], bytes: usize) -> Value {
    let bytes = bytes.to_string();
    let mut args: Vec<&str> = vec![mode];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--", "oversized", &bytes]);
    support::python_json("limits_client.py", &args)
}

#[test]
fn serve_stdio_refuses_an_oversized_request_for_its_id() {
    let seen = oversized(
        "legacy",
        &["--stdio", SERVER, "serve", "--max-message-size", "1048576"],
        2_000_000,
    );
    assert_refused(&seen, 2_000_000, 1_048_576);
}

#[test]
fn serve_stdio_holds_requests_to_the_default_limit() {
    let over = DEFAULT_MAX_MESSAGE_SIZE + 1000;
    let seen = oversized("auto", &["--stdio", SERVER, "serve"], over);
    assert_refused(&seen, over, DEFAULT_MAX_MESSAGE_SIZE);
}

#[test]
fn serve_http_refuses_an_oversized_request_for_its_id() {
    let (_server, url, _) = support::serve_http(&["--max-message-size", "1048576"]);
    for mode in ["legacy", "auto"] {
        let seen = oversized(mode, &["--http", &url], 2_000_000);
        assert_refused(&seen, 2_000_000, 1_048_576);
    }
}

#[test]
fn serve_http_has_the_default_limit_of_stdio() {
    // rmcp's own HTTP limit was 4 MiB: a 5 MB request is within the one default (`add` ignores
    // the argument it does not take, so its answer is small).
    let (_server, url, _) = support::serve_http(&[]);
    let seen = support::python_json(
        "limits_client.py",
        &["auto", "--http", &url, "--", "padded", "5000000"],
    );
    assert_eq!(
        seen["first"],
        json!({"text": "{\"sum\":5}", "is_error": false}),
        "{seen}"
    );
    let over = DEFAULT_MAX_MESSAGE_SIZE + 1000;
    let seen = oversized("auto", &["--http", &url], over);
    assert_refused(&seen, over, DEFAULT_MAX_MESSAGE_SIZE);
}

async fn connect(source: McpSource, options: ImportOptions) -> (ToolRuntime, McpImport) {
    let runtime = ToolRuntime::new();
    // An HTTP peer prints its port before it listens: retry for a while.
    let mut last = None;
    for _ in 0..100 {
        match McpImport::connect(runtime.scope(), source.clone(), options.clone()).await {
            Ok(import) => return (runtime, import),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot connect: {last:?}");
}

/// A call that would otherwise wait forever is bounded here, so the test fails instead.
async fn execute(runtime: &ToolRuntime, call: ToolCall) -> tools_runtime::ToolExecutionResult {
    tokio::time::timeout(Duration::from_secs(240), runtime.execute(call))
        .await
        .expect("the call got no result at all")
}

async fn oversized_answer_fails_its_call(source: McpSource, size_words: &str) {
    let (runtime, _import) = connect(source, ImportOptions::new()).await;
    // 20 MiB of text, sent as content and as structured content: about 40 MiB.
    let big = execute(
        &runtime,
        ToolCall::new("c1", "blob", json!({"size": 20 * 1024 * 1024})),
    )
    .await;
    assert_eq!(big.code(), Some(codes::MCP_MESSAGE_TOO_LARGE), "{big:?}");
    let text = big.text();
    assert!(
        text.contains(&format!("limit of {DEFAULT_MAX_MESSAGE_SIZE} bytes")),
        "{text}"
    );
    assert!(text.contains(size_words), "{text}");
    assert!(text.contains("ImportOptions::max_message_size"), "{text}");
    let small = execute(&runtime, ToolCall::new("c2", "blob", json!({"size": 3}))).await;
    assert_eq!(small.value(), Some(&json!({"result": "xxx"})), "{small:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_stdio_fails_an_oversized_answer_as_its_call() {
    // Over stdio the whole line is read past, so its size is known.
    oversized_answer_fails_its_call(support::python_stdio("limits_server.py"), "answer is 4").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_http_fails_an_oversized_answer_as_its_call() {
    let (_peer, url) = support::python_http("limits_server.py");
    // An HTTP client stops reading at the limit.
    oversized_answer_fails_its_call(McpSource::http(url), "answer is larger than the limit").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_http_fails_an_oversized_json_body_as_its_call() {
    // The same server answering with plain JSON bodies rather than SSE events.
    let (_peer, url) = support::python_http_json("limits_server.py");
    oversized_answer_fails_its_call(McpSource::http(url), "answer is larger than the limit").await;
}

/// The words of an import refused for a `tools/list` answer over `limit`.
fn assert_list_refused(error: &tools_mcp::McpError, limit: usize) {
    let text = format!("{error} ({error:?})");
    assert!(text.contains(&format!("limit of {limit} bytes")), "{text}");
    assert!(text.contains("answer is larger than the limit"), "{text}");
    assert!(text.contains("ImportOptions::max_message_size"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_http_refuses_a_tool_list_over_the_limit_as_an_event_or_a_json_body() {
    // The handshake's answers are a few hundred bytes, the tool list about 2 KiB.
    let limit = 1024;
    for (peer, url) in [
        support::python_http("limits_server.py"),
        support::python_http_json("limits_server.py"),
    ] {
        let options = ImportOptions::new().max_message_size(limit);
        let error = McpImport::connect(ToolRuntime::new().scope(), McpSource::http(&url), options)
            .await
            .expect_err("a tool list over the limit fails the import");
        assert_list_refused(&error, limit);
        drop(peer);
    }
}

async fn wait_for_cancelled(runtime: &ToolRuntime) -> Value {
    wait_for_cancellations(runtime, 1).await
}

/// The server's count of cancelled calls, once it reaches `n` (or what it was after 10 s).
async fn wait_for_cancellations(runtime: &ToolRuntime, n: u64) -> Value {
    let mut count = json!(null);
    for i in 0..200 {
        let seen = execute(
            runtime,
            ToolCall::new(format!("k{i}"), "cancelled", json!({})),
        )
        .await;
        count = seen.value().cloned().unwrap_or_default();
        if count == json!({"result": n}) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_calls_time_out_and_the_server_is_told() {
    let (runtime, _import) = connect(
        support::python_stdio("limits_server.py"),
        ImportOptions::new().call_timeout(Duration::from_secs(1)),
    )
    .await;
    let slept = execute(
        &runtime,
        ToolCall::new("c1", "sleep", json!({"seconds": 600})),
    )
    .await;
    assert_eq!(slept.code(), Some(codes::MCP_TIMEOUT), "{slept:?}");
    assert!(slept.text().contains("within 1s"), "{}", slept.text());
    assert!(
        slept.text().contains("ImportOptions::call_timeout"),
        "{}",
        slept.text()
    );
    assert_eq!(wait_for_cancelled(&runtime).await, json!({"result": 1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_timeout_is_declared_and_enforced() {
    let (runtime, _import) = connect(
        support::python_stdio("limits_server.py"),
        ImportOptions::new().tool_timeout("sleep", Duration::from_millis(500)),
    )
    .await;
    let sleep = runtime.get("sleep", ScopeKey::GLOBAL).unwrap();
    assert_eq!(sleep.timeout(), Some(Duration::from_millis(500)));
    let blob = runtime.get("blob", ScopeKey::GLOBAL).unwrap();
    assert_eq!(
        blob.timeout(),
        Some(tools_mcp::import::DEFAULT_CALL_TIMEOUT)
    );
    let slept = execute(
        &runtime,
        ToolCall::new("c1", "sleep", json!({"seconds": 600})),
    )
    .await;
    assert_eq!(slept.code(), Some(codes::MCP_TIMEOUT), "{slept:?}");
    assert_eq!(wait_for_cancelled(&runtime).await, json!({"result": 1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_that_restarts_on_progress_outlives_a_reporting_call_and_stops_a_quiet_one() {
    let (runtime, _import) = connect(
        support::python_stdio("limits_server.py"),
        ImportOptions::new()
            .call_timeout(Duration::from_secs(1))
            .timeout_resets_on_progress(Duration::from_secs(120)),
    )
    .await;
    let steady = runtime.get("steady", ScopeKey::GLOBAL).unwrap();
    assert_eq!(steady.timeout(), Some(Duration::from_secs(1)));
    assert_eq!(steady.timeout_max_total(), Some(Duration::from_secs(120)));
    // Three seconds of reports 50 ms apart: three times the timeout, never quiet for it.
    let ran = execute(
        &runtime,
        ToolCall::new("c1", "steady", json!({"seconds": 3, "every": 0.05})),
    )
    .await;
    assert_eq!(
        ran.value(),
        Some(&json!({"result": "steady for 60 steps"})),
        "{ran:?}"
    );
    // One report, then quiet.
    let quiet = execute(
        &runtime,
        ToolCall::new("c2", "quiet", json!({"seconds": 600})),
    )
    .await;
    assert_eq!(quiet.code(), Some(codes::MCP_TIMEOUT), "{quiet:?}");
    assert!(
        quiet
            .text()
            .contains("reported no progress on `quiet` for 1000 ms"),
        "{}",
        quiet.text()
    );
    assert_eq!(
        wait_for_cancellations(&runtime, 1).await,
        json!({"result": 1})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maximum_total_time_bounds_a_call_that_keeps_reporting() {
    let (runtime, _import) = connect(
        support::python_stdio("limits_server.py"),
        ImportOptions::new()
            .call_timeout(Duration::from_secs(1))
            .tool_timeout_resets_on_progress("steady", Duration::from_secs(2)),
    )
    .await;
    let ran = execute(
        &runtime,
        ToolCall::new("c1", "steady", json!({"seconds": 600, "every": 0.05})),
    )
    .await;
    assert_eq!(ran.code(), Some(codes::MCP_TIMEOUT), "{ran:?}");
    assert!(
        ran.text()
            .contains("did not finish `steady` within its maximum total time of 2000 ms"),
        "{}",
        ran.text()
    );
    assert_eq!(
        wait_for_cancellations(&runtime, 1).await,
        json!({"result": 1})
    );
    // Only `steady` restarts on progress: `quiet`'s report does not move its timeout.
    let quiet = runtime.get("quiet", ScopeKey::GLOBAL).unwrap();
    assert_eq!(quiet.timeout_max_total(), None);
    let quiet = execute(
        &runtime,
        ToolCall::new("c2", "quiet", json!({"seconds": 600})),
    )
    .await;
    assert_eq!(quiet.code(), Some(codes::MCP_TIMEOUT), "{quiet:?}");
    assert!(quiet.text().contains("within 1s"), "{}", quiet.text());
    assert_eq!(
        wait_for_cancellations(&runtime, 2).await,
        json!({"result": 2})
    );
}

#[tokio::test]
async fn a_maximum_total_time_shorter_than_its_timeout_is_refused() {
    for (whose, options) in [
        (
            "of the import (5s",
            ImportOptions::new()
                .call_timeout(Duration::from_secs(10))
                .timeout_resets_on_progress(Duration::from_secs(5)),
        ),
        (
            "of tool `slow` (5s",
            ImportOptions::new()
                .call_timeout(Duration::from_secs(4))
                .tool_timeout("slow", Duration::from_secs(10))
                .timeout_resets_on_progress(Duration::from_secs(5)),
        ),
        (
            "of tool `slow` (5s",
            ImportOptions::new()
                .call_timeout(Duration::from_secs(10))
                .tool_timeout_resets_on_progress("slow", Duration::from_secs(5)),
        ),
    ] {
        let refused = McpImport::connect(
            ToolRuntime::new().scope(),
            McpSource::stdio("/nonexistent/server", ["stdio"]),
            options,
        )
        .await
        .unwrap_err();
        assert_eq!(refused.code(), "MCP_INVALID_OPTIONS", "{refused}");
        assert!(
            refused.to_string().contains(whose)
                && refused
                    .to_string()
                    .contains("is shorter than its timeout (10s)"),
            "{refused}"
        );
    }
}
