//! Progress over MCP, against real peers: `tools-mcp serve`'s `count` called by the Python `mcp`
//! client with a progress callback (stdio and HTTP, both protocol generations, with and without
//! sessions); server-everything's `trigger-long-running-operation` imported, its progress seen
//! as the local call's; a Python server's out-of-order and foreign reports dropped; our own
//! serve imported by our own import; and, on the wire, no notification without a token and none
//! after the result.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;
use tools_mcp::{HttpOptions, ImportOptions, McpImport, McpServer, McpSource, Protocol};
use tools_runtime::progress::Progress;
use tools_runtime::{Output, Scope, ToolCall, ToolDefinition, ToolRuntime};

use crate::support::{self, SERVER};

/// What a progress report says: done, total, message.
type Seen = (f64, Option<f64>, Option<String>);

fn seen(progress: &Progress) -> Seen {
    (
        progress.done(),
        progress.total(),
        progress.message().map(str::to_owned),
    )
}

/// A call of `tool` whose reports are collected.
fn collecting(call: ToolCall) -> (ToolCall, Arc<Mutex<Vec<Seen>>>) {
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = reports.clone();
    let call = call.with_progress(move |progress| sink.lock().unwrap().push(seen(progress)));
    (call, reports)
}

/// `count` to `n` as `tools-mcp serve` reports it.
fn counted(n: u32) -> Vec<Seen> {
    (1..=n)
        .map(|i| {
            (
                f64::from(i),
                Some(f64::from(n)),
                Some(format!("{i} of {n}")),
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Serve, to the Python client.

fn python_client(mode: &str, transport: &[&str]) -> Value {
    let mut args = vec![mode];
    args.extend_from_slice(transport);
    support::python_json("progress_client.py", &args)
}

fn check_python(seen: &Value, protocol: &str) {
    assert_eq!(seen["protocol"], protocol, "{seen}");
    assert_eq!(seen["is_error"], false, "{seen}");
    assert_eq!(seen["result"], json!({"counted": 5}), "{seen}");
    let expected: Vec<Value> = (1..=5)
        .map(|i| json!([f64::from(i), 5.0, format!("{i} of 5")]))
        .collect();
    assert_eq!(seen["progress"], json!(expected), "{seen}");
    assert_eq!(seen["without_callback"], json!({"counted": 3}), "{seen}");
}

#[test]
fn serve_sends_progress_to_the_python_client_over_stdio_with_initialize() {
    let seen = python_client("legacy", &["--stdio", SERVER, "serve"]);
    check_python(&seen, "2025-11-25");
}

#[test]
fn serve_sends_progress_to_the_python_client_over_stdio_with_2026_07_28() {
    let seen = python_client("auto", &["--stdio", SERVER, "serve"]);
    check_python(&seen, "2026-07-28");
}

#[test]
fn serve_sends_progress_to_the_python_client_in_an_http_session() {
    let (_server, url, _) = support::serve_http(&["--sessions"]);
    let seen = python_client("legacy", &["--http", &url]);
    check_python(&seen, "2025-11-25");
}

#[test]
fn serve_sends_progress_to_the_python_client_over_http_without_a_session() {
    let (_server, url, _) = support::serve_http(&[]);
    let seen = python_client("legacy", &["--http", &url]);
    check_python(&seen, "2025-11-25");
}

#[test]
fn serve_sends_progress_to_the_python_client_over_http_with_2026_07_28() {
    let (_server, url, _) = support::serve_http(&[]);
    let seen = python_client("auto", &["--http", &url]);
    check_python(&seen, "2026-07-28");
}

// ---------------------------------------------------------------------------------------------
// Import.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everythings_long_running_operation_reports_progress_through_the_import() {
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        support::everything_source(),
        ImportOptions::new().prefix("ev_"),
    )
    .await
    .expect("server-everything connects");
    assert!(
        import
            .tool_names()
            .contains(&"ev_trigger-long-running-operation".to_owned())
    );
    // A listener of the scope sees the reports, with the call they belong to.
    let heard = Arc::new(Mutex::new(Vec::new()));
    let ear = heard.clone();
    // (A registration lasts as long as its scope.)
    let listening = runtime.scope();
    let _listener = listening
        .on_progress(move |exec, progress| {
            ear.lock().unwrap().push((
                exec.call_id().to_owned(),
                progress.done(),
                progress.total(),
            ));
        })
        .unwrap();
    let (call, reports) = collecting(ToolCall::new(
        "long",
        "ev_trigger-long-running-operation",
        json!({"duration": 0.5, "steps": 5}),
    ));
    let result = runtime.execute(call).await;
    assert!(!result.is_error(), "{}", result.text());
    assert!(
        result.text().contains("Steps: 5"),
        "the operation ran its 5 steps: {}",
        result.text()
    );
    // Every step, in order, each with its total, all before the result.
    let expected: Vec<Seen> = (1..=5).map(|i| (f64::from(i), Some(5.0), None)).collect();
    assert_eq!(*reports.lock().unwrap(), expected);
    let expected: Vec<(String, f64, Option<f64>)> = (1..=5)
        .map(|i| ("long".to_owned(), f64::from(i), Some(5.0)))
        .collect();
    assert_eq!(*heard.lock().unwrap(), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_a_server_sends_out_of_order_or_for_no_call_are_dropped() {
    let runtime = ToolRuntime::new();
    let _import = McpImport::connect(
        runtime.scope(),
        support::python_stdio("server.py"),
        ImportOptions::new().prefix("py_"),
    )
    .await
    .expect("the Python server connects");
    let (call, reports) = collecting(ToolCall::new("j", "py_jumpy", json!({})));
    let result = runtime.execute(call).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.value(), Some(&json!({"result": "jumped"})));
    // 1 again and 0.5 do not increase; 3 of 4 is for a token this call does not have.
    assert_eq!(
        *reports.lock().unwrap(),
        vec![
            (1.0, Some(4.0), Some("one".to_owned())),
            (2.0, Some(4.0), Some("two".to_owned())),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Our serve, imported by our import: every report, in order, before the result.

fn counting_scope(runtime: &ToolRuntime) -> Scope {
    let scope = runtime.scope();
    let count = ToolDefinition::builder("count")
        .description("Count to `to`, reporting each number.")
        .input_schema(json!({
            "type": "object",
            "properties": {"to": {"type": "integer", "minimum": 0}},
            "required": ["to"]
        }))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|args, ctx| async move {
            let to = args["to"].as_u64().unwrap_or(0).min(1000) as u32;
            for n in 1..=to {
                ctx.progress(
                    Progress::new(f64::from(n))
                        .with_total(f64::from(to))
                        .with_message(format!("{n} of {to}")),
                )?;
                tokio::task::yield_now().await;
            }
            Ok(json!(to))
        })
        .build()
        .unwrap();
    let _ = scope.register(count).unwrap();
    scope
}

/// A scope with `count` served on loopback HTTP: its URL, what stops it, and the scope (the
/// registration lasts as long as it).
async fn serve_here(options: HttpOptions) -> (String, CancellationToken, Scope) {
    let served = ToolRuntime::new();
    let scope = counting_scope(&served);
    let server = McpServer::new(&scope, "counting").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(server.serve_http(listener, options, stop.clone()));
    (url, stop, scope)
}

/// Imports `source` with `protocol` and calls its `count` to 50 (`ms` 0 where the tool takes it),
/// with a sink: every report arrives, in order, before the result.
async fn count_through(source: McpSource, protocol: Protocol) {
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        source,
        ImportOptions::new().protocol(protocol),
    )
    .await
    .unwrap();
    let (call, reports) = collecting(ToolCall::new("c", "count", json!({"to": 50, "ms": 0})));
    let result = runtime.execute(call).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(*reports.lock().unwrap(), counted(50));
    // A call of the same tool without a sink goes on unbothered.
    let quiet = runtime
        .execute(ToolCall::new("q", "count", json!({"to": 2, "ms": 0})))
        .await;
    assert!(!quiet.is_error(), "{}", quiet.text());
    import.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_progress_reaches_an_import_over_stdio() {
    for protocol in [Protocol::Auto, Protocol::Initialize] {
        count_through(McpSource::stdio(SERVER, ["serve"]), protocol).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_progress_reaches_an_import_over_http() {
    for (sessions, protocol) in [
        (false, Protocol::Auto),
        (false, Protocol::Initialize),
        (true, Protocol::Initialize),
    ] {
        let (url, stop, _served) = serve_here(HttpOptions::new().sessions(sessions)).await;
        count_through(McpSource::http(&url), protocol).await;
        stop.cancel();
    }
}

// ---------------------------------------------------------------------------------------------
// On the wire.

/// The JSON-RPC messages of an SSE (or JSON) response body, in order.
fn messages(body: &str) -> Vec<Value> {
    let events: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_json::from_str(d.trim()).unwrap())
        .collect();
    if events.is_empty() {
        vec![serde_json::from_str(body.trim()).unwrap()]
    } else {
        events
    }
}

fn progress_of(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_progress_precedes_the_result_and_needs_a_token() {
    let (url, stop, _served) = serve_here(HttpOptions::new()).await;
    let client = reqwest::Client::new();
    let post = |id: u64, meta: Value| {
        let mut meta = meta;
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "raw", "version": "1"});
        meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
        client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "count")
            .body(
                json!({
                    "jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "count", "arguments": {"to": 3}, "_meta": meta}
                })
                .to_string(),
            )
            .send()
    };
    let body = post(1, json!({"progressToken": "tok-1"}))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let got = messages(&body);
    let last = got.last().unwrap();
    assert_eq!(last["id"], 1, "the result comes last: {body}");
    assert_eq!(last["result"]["structuredContent"], Value::Null, "{body}");
    assert_eq!(last["result"]["content"][0]["text"], "3", "{body}");
    assert_eq!(
        progress_of(&got),
        vec![
            json!({"progressToken": "tok-1", "progress": 1.0, "total": 3.0, "message": "1 of 3"}),
            json!({"progressToken": "tok-1", "progress": 2.0, "total": 3.0, "message": "2 of 3"}),
            json!({"progressToken": "tok-1", "progress": 3.0, "total": 3.0, "message": "3 of 3"}),
        ],
        "{body}"
    );
    assert_eq!(got.len(), 4, "{body}");

    let body = post(2, json!({})).await.unwrap().text().await.unwrap();
    let got = messages(&body);
    assert!(
        progress_of(&got).is_empty(),
        "no token, no progress: {body}"
    );
    assert_eq!(got.last().unwrap()["id"], 2, "{body}");
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_progress_precedes_the_result_and_nothing_follows_it() {
    let mut child = tokio::process::Command::new(SERVER)
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = async |message: Value| {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    };
    send(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}
        }
    }))
    .await;
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    send(json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "count", "arguments": {"to": 4, "ms": 0}, "_meta": {"progressToken": 7}}
    }))
    .await;
    // Everything up to the answer of a ping sent after the call's result.
    let mut seen = Vec::new();
    let mut pinged = false;
    while let Some(line) = lines.next_line().await.unwrap() {
        let message: Value = serde_json::from_str(&line).unwrap();
        let is_result = message["id"] == 2;
        let is_pong = message["id"] == 3;
        seen.push(message);
        if is_result && !pinged {
            pinged = true;
            send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
        }
        if is_pong {
            break;
        }
    }
    let ids: Vec<Value> = seen.iter().map(|m| m["id"].clone()).collect();
    let result_at = ids.iter().position(|id| *id == 2).unwrap();
    let after: Vec<&Value> = seen[result_at + 1..]
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(after.is_empty(), "progress after the result: {after:?}");
    let before: Vec<f64> = progress_of(&seen[..result_at])
        .iter()
        .map(|p| {
            assert_eq!(p["progressToken"], 7);
            assert_eq!(p["total"], 4.0);
            p["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(before, [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(
        seen[result_at]["result"]["structuredContent"],
        json!({"counted": 4})
    );
}
