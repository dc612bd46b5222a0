//! The shipped, opt-in execute wrappers: the timeout wrapper (`TOOL_TIMEOUT`) and per-tool
//! metrics.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tools_runtime::wrappers::{Metrics, timeout};
use tools_runtime::{
    CancellationToken, Output, ToolCall, ToolDefinition, ToolError, ToolRuntime, codes,
};

fn sleeper(
    name: &str,
    millis: u64,
    limit: Option<Duration>,
    stopped: Arc<AtomicBool>,
) -> ToolDefinition {
    let mut b = ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})));
    if let Some(limit) = limit {
        b = b.timeout(limit);
    }
    b.execute(move |_a, ctx| {
        let stopped = stopped.clone();
        async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(millis)) => Ok(json!(millis)),
                () = ctx.cancellation().cancelled() => {
                    tokio::time::sleep(Duration::from_millis(5)).await; // cleaning up
                    stopped.store(true, Ordering::SeqCst);
                    Ok(json!(0))
                }
            }
        }
    })
    .build()
    .unwrap()
}

#[tokio::test]
async fn timeout_wrapper_fails_late_calls_with_tool_timeout_after_the_body_settles() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let stopped = Arc::new(AtomicBool::new(false));
    let _slow = plugin
        .register(sleeper(
            "slow",
            10_000,
            Some(Duration::from_millis(20)),
            stopped.clone(),
        ))
        .unwrap();
    let _w = plugin.wrap_execute(timeout()).unwrap();
    let r = rt.execute(ToolCall::new("c", "slow", json!({}))).await;
    assert_eq!(r.code(), Some(codes::TOOL_TIMEOUT));
    assert!(r.value().is_none());
    assert!(
        stopped.load(Ordering::SeqCst),
        "the body was cancelled and settled first"
    );
}

#[tokio::test]
async fn timeout_wrapper_leaves_fast_calls_and_calls_without_a_timeout_alone() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let flag = Arc::new(AtomicBool::new(false));
    let _fast = plugin
        .register(sleeper(
            "fast",
            1,
            Some(Duration::from_secs(30)),
            flag.clone(),
        ))
        .unwrap();
    let _none = plugin
        .register(sleeper("untimed", 30, None, flag.clone()))
        .unwrap();
    let _w = plugin.wrap_execute(timeout()).unwrap();
    assert_eq!(
        rt.execute(ToolCall::new("c", "fast", json!({})))
            .await
            .value(),
        Some(&json!(1))
    );
    assert_eq!(
        rt.execute(ToolCall::new("c", "untimed", json!({})))
            .await
            .value(),
        Some(&json!(30))
    );
    assert!(!flag.load(Ordering::SeqCst));
}

#[tokio::test]
async fn timeout_wrapper_keeps_the_callers_cancellation_working() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let stopped = Arc::new(AtomicBool::new(false));
    let _slow = plugin
        .register(sleeper(
            "slow",
            10_000,
            Some(Duration::from_secs(60)),
            stopped.clone(),
        ))
        .unwrap();
    let _w = plugin.wrap_execute(timeout()).unwrap();
    let token = CancellationToken::new();
    let t = token.clone();
    let (r, ()) = tokio::join!(
        rt.execute(ToolCall::new("c", "slow", json!({})).with_cancel(token)),
        async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            t.cancel();
        }
    );
    assert_eq!(r.code(), Some(codes::ABORTED));
    assert!(stopped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn metrics_wrapper_records_per_tool_counts_failures_and_latencies() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let flag = Arc::new(AtomicBool::new(false));
    let _a = plugin
        .register(sleeper("nap", 20, None, flag.clone()))
        .unwrap();
    let failing = ToolDefinition::builder("fails")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({})))
        .execute(|_a, _c| async { Err(ToolError::new("nope")) })
        .build()
        .unwrap();
    let _b = plugin.register(failing).unwrap();
    let metrics = Metrics::new();
    let _w = plugin.wrap_execute(metrics.wrapper()).unwrap();
    for _ in 0..3 {
        let _ = rt.execute(ToolCall::new("c", "nap", json!({}))).await;
    }
    for _ in 0..2 {
        let _ = rt.execute(ToolCall::new("c", "fails", json!({}))).await;
    }
    // Calls refused before dispatch never reach the wrapper.
    let _ = rt.execute(ToolCall::new("c", "nap", json!({"x": 1}))).await; // valid (open object)
    let _ = rt.execute(ToolCall::new("c", "missing", json!({}))).await;
    let nap = metrics.get("nap").unwrap();
    assert_eq!((nap.calls, nap.failures), (4, 0));
    // Lower bounds that follow from the body sleeping 20 ms (not a speed claim).
    assert!(nap.min >= Duration::from_millis(20), "{nap:?}");
    assert!(nap.min <= nap.mean() && nap.mean() <= nap.max);
    assert!(nap.total >= Duration::from_millis(80));
    let fails = metrics.get("fails").unwrap();
    assert_eq!((fails.calls, fails.failures), (2, 2));
    assert_eq!(metrics.get("missing"), None);
    assert_eq!(
        metrics.snapshot().keys().collect::<Vec<_>>(),
        ["fails", "nap"]
    );
}
