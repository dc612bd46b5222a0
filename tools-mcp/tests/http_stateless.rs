//! Scale-out: 2026-07-28 requests served statelessly over streamable HTTP, each on any of
//! several independent server instances (as behind a load balancer), with no session; and a
//! dropped HTTP connection cancels the call's token.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tools_mcp::{HttpOptions, McpServer};
use tools_runtime::{Output, Scope, ToolDefinition, ToolRuntime};

fn scope(runtime: &ToolRuntime, cancelled: Arc<AtomicBool>) -> Scope {
    let scope = runtime.scope();
    let add = crate::support::add_tool();
    let wait = ToolDefinition::builder("wait")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "object"})))
        .execute(move |_, ctx| {
            let cancelled = cancelled.clone();
            async move {
                tokio::select! {
                    () = ctx.cancellation().cancelled() => {
                        cancelled.store(true, Ordering::SeqCst);
                        Ok(json!({}))
                    }
                    () = tokio::time::sleep(Duration::from_secs(60)) => Ok(json!({})),
                }
            }
        })
        .build()
        .unwrap();
    // Dropping a handle keeps the registration (it lasts as long as the scope).
    let _ = scope.register(add).unwrap();
    let _ = scope.register(wait).unwrap();
    scope
}

async fn start(scope: &Scope) -> (String, CancellationToken) {
    let server = McpServer::new(scope, "stateless").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let stop = CancellationToken::new();
    let token = stop.clone();
    tokio::spawn(async move { server.serve_http(listener, HttpOptions::new(), token).await });
    (addr, stop)
}

fn request(addr: &str, id: u64, tool: &str, arguments: Value) -> String {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": tool, "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
}

async fn exchange(addr: &str, text: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_session_are_served_by_any_instance() {
    let flag = Arc::new(AtomicBool::new(false));
    let runtime_1 = ToolRuntime::new();
    let runtime_2 = ToolRuntime::new();
    let scope_1 = scope(&runtime_1, flag.clone());
    let scope_2 = scope(&runtime_2, flag);
    let (one, stop_1) = start(&scope_1).await;
    let (two, stop_2) = start(&scope_2).await;
    for (i, addr) in [&one, &two, &one, &two].into_iter().enumerate() {
        let reply = exchange(
            addr,
            &request(addr, i as u64, "add", json!({"a": i, "b": 1})),
        )
        .await;
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert!(
            !reply.to_ascii_lowercase().contains("mcp-session-id"),
            "{reply}"
        );
        let data = reply
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .or_else(|| reply.split("\r\n\r\n").nth(1))
            .unwrap();
        let message: Value = serde_json::from_str(data.trim()).unwrap();
        assert_eq!(message["id"], i);
        assert_eq!(
            message["result"]["structuredContent"],
            json!({"sum": i + 1})
        );
    }
    stop_1.cancel();
    stop_2.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_cancels_the_call() {
    let cancelled = Arc::new(AtomicBool::new(false));
    let runtime = ToolRuntime::new();
    let scope = scope(&runtime, cancelled.clone());
    let (addr, stop) = start(&scope).await;
    let mut stream = TcpStream::connect(&addr).await.unwrap();
    stream
        .write_all(request(&addr, 1, "wait", json!({})).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!cancelled.load(Ordering::SeqCst));
    drop(stream);
    for _ in 0..200 {
        if cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the tool's token was not cancelled"
    );
    stop.cancel();
}
