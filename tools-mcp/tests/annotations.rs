//! Tool annotations both ways: a scope's hints served over streamable HTTP, kept by the import,
//! and, under an [`AnnotationPolicy`], turned into policy (read-only concurrency-safe,
//! destructive asking for approval, idempotent retried), and nothing of it without one.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_mcp::{AnnotationPolicy, HttpOptions, ImportOptions, McpImport, McpServer, McpSource};
use tools_runtime::hooks::Approval;
use tools_runtime::{Output, ToolAnnotations, ToolCall, ToolDefinition, ToolRuntime, tool};

/// Read a value.
#[tool(read_only, title = "Peek")]
fn peek(key: String) -> String {
    format!("value of {key}")
}

/// Drop a table (says nothing of itself: MCP reads it as destructive).
#[tool]
fn drop_table(table: String) -> String {
    format!("dropped {table}")
}

/// A tool whose first `slow` calls take a second (past the import's timeout), the next ones
/// answer at once; `calls` counts the calls that reached the body.
fn flaky(name: &str, hints: ToolAnnotations, slow: u32, calls: Arc<AtomicU32>) -> ToolDefinition {
    ToolDefinition::raw(name)
        .description("Write a value.")
        .input_schema(json!({"type": "object", "properties": {"v": {"type": "integer"}}}))
        .output(Output::json(json!({"type": "string"})))
        .annotations(hints)
        .execute(move |_, _| {
            let calls = calls.clone();
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                if n < slow {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Ok(json!(format!("written on call {}", n + 1)))
            }
        })
        .build()
        .unwrap()
}

struct Served {
    url: String,
    stop: CancellationToken,
    put: Arc<AtomicU32>,
    append: Arc<AtomicU32>,
    _scope: tools_runtime::Scope,
    _runtime: ToolRuntime,
}

async fn serve() -> Served {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let put = Arc::new(AtomicU32::new(0));
    let append = Arc::new(AtomicU32::new(0));
    let idempotent = ToolAnnotations {
        destructive_hint: Some(false),
        idempotent_hint: Some(true),
        ..ToolAnnotations::default()
    };
    let additive = ToolAnnotations {
        destructive_hint: Some(false),
        ..ToolAnnotations::default()
    };
    for definition in [
        peek::definition().unwrap(),
        drop_table::definition().unwrap(),
        flaky("put", idempotent, 1, put.clone()),
        flaky("append", additive, u32::MAX, append.clone()),
    ] {
        let _r = scope.register(definition).unwrap();
    }
    let server = McpServer::new(&scope, "annotated").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(
        server
            .clone()
            .serve_http(listener, HttpOptions::new(), stop.clone()),
    );
    Served {
        url,
        stop,
        put,
        append,
        _scope: scope,
        _runtime: runtime,
    }
}

/// A tool the approval service was asked about, and the reason it was given.
type Asked = (String, Option<String>);

fn options(policy: AnnotationPolicy) -> ImportOptions {
    ImportOptions::new()
        .annotation_policy(policy)
        .tool_timeout("put", Duration::from_millis(300))
        .tool_timeout("append", Duration::from_millis(300))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_hints_are_kept_by_the_import_and_act_on_nothing_by_default() {
    let served = serve().await;
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        McpSource::http(&served.url),
        options(AnnotationPolicy::none()),
    )
    .await
    .unwrap();

    // Served from the definitions, kept on the imported ones.
    let peek = import.scope().get("peek").unwrap();
    assert_eq!(
        peek.annotations(),
        Some(&ToolAnnotations {
            title: Some("Peek".into()),
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        })
    );
    assert_eq!(
        import.scope().get("drop_table").unwrap().annotations(),
        None
    );
    let put = import.scope().get("put").unwrap();
    assert_eq!(put.annotations().unwrap().idempotent_hint, Some(true));
    // No policy: nothing concurrency-safe, nothing asks, nothing retried.
    assert!(!peek.has_concurrency_classifier());
    let dropped = runtime
        .execute(ToolCall::new("c1", "drop_table", json!({"table": "t"})))
        .await;
    assert_eq!(dropped.text(), "dropped t");
    let timed_out = runtime
        .execute(ToolCall::new("c2", "put", json!({"v": 1})))
        .await;
    assert_eq!(timed_out.code(), Some(tools_mcp::codes::MCP_TIMEOUT));
    assert_eq!(served.put.load(Ordering::SeqCst), 1);
    served.stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_policy_makes_read_only_concurrent_destructive_asking_and_idempotent_retried() {
    let served = serve().await;
    let runtime = ToolRuntime::new();
    let policy = AnnotationPolicy::recommended().retry_idempotent(2, Duration::from_millis(10));
    let import = McpImport::connect(
        runtime.scope(),
        McpSource::http(&served.url),
        options(policy),
    )
    .await
    .unwrap();
    let scope = import.scope();
    assert!(scope.get("peek").unwrap().has_concurrency_classifier());
    assert!(!scope.get("put").unwrap().has_concurrency_classifier());

    // A destructive tool asks; without an approval service that is a denial, and nothing ran.
    let refused = runtime
        .execute(ToolCall::new("c1", "drop_table", json!({"table": "t"})))
        .await;
    assert_eq!(
        refused.code(),
        Some(tools_runtime::codes::DENIED),
        "{}",
        refused.text()
    );

    // With one, the person sees why, and a yes lets it run; read-only and non-destructive tools
    // never ask.
    let asked: Arc<Mutex<Vec<Asked>>> = Arc::default();
    let seen = asked.clone();
    let host = runtime.scope();
    let _approval = host
        .set_approval(
            move |exec: tools_runtime::ToolExecution, reason: Option<String>| {
                seen.lock().unwrap().push((exec.name().to_owned(), reason));
                async { Approval::Approved }
            },
        )
        .unwrap();
    let dropped = runtime
        .execute(ToolCall::new("c2", "drop_table", json!({"table": "t"})))
        .await;
    assert_eq!(dropped.text(), "dropped t");
    let peeked = runtime
        .execute(ToolCall::new("c3", "peek", json!({"key": "k"})))
        .await;
    assert_eq!(peeked.text(), "value of k");
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert_eq!(asked[0].0, "drop_table");
        let reason = asked[0].1.as_deref().unwrap();
        assert!(reason.contains("may be destructive"), "{reason}");
    }

    // An idempotent call that timed out is sent again, and the second answer is the result.
    let put = runtime
        .execute(ToolCall::new("c4", "put", json!({"v": 1})))
        .await;
    assert_eq!(
        put.value(),
        Some(&json!("written on call 2")),
        "{}",
        put.text()
    );
    assert_eq!(served.put.load(Ordering::SeqCst), 2);
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "a non-destructive tool asked"
    );

    // One that is not idempotent is not: one call reached the server.
    let append = runtime
        .execute(ToolCall::new("c5", "append", json!({"v": 1})))
        .await;
    assert_eq!(append.code(), Some(tools_mcp::codes::MCP_TIMEOUT));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(served.append.load(Ordering::SeqCst), 1);

    // Closed, the import's listener goes with its tools: a local tool of the same name runs
    // without asking.
    import.close().await;
    let _local = host.register(drop_table::definition().unwrap()).unwrap();
    let local = runtime
        .execute(ToolCall::new("c6", "drop_table", json!({"table": "u"})))
        .await;
    assert_eq!(local.text(), "dropped u");
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "the closed import's listener still asked"
    );
    served.stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_list_carries_the_annotations() {
    let served = serve().await;
    // The raw `tools/list` JSON as a client reads it.
    let listed = tools_mcp::list_tools(&McpSource::http(&served.url), &ImportOptions::new())
        .await
        .unwrap();
    let peek = listed.iter().find(|t| t.name == "peek").unwrap();
    let json: Value = serde_json::to_value(peek).unwrap();
    assert_eq!(json["title"], "Peek");
    assert_eq!(
        json["annotations"],
        json!({"title": "Peek", "readOnlyHint": true})
    );
    let dropped = listed.iter().find(|t| t.name == "drop_table").unwrap();
    assert!(
        serde_json::to_value(dropped)
            .unwrap()
            .get("annotations")
            .is_none()
    );
    served.stop.cancel();
}
