//! MCP tasks (SEP-2663, as rmcp 3.11 speaks it): our serve runs a long-running tool as a task
//! for a client that declares the extension (on the wire: create, get, the one result inline,
//! cancel), and our import awaits a server's task, cancels it when its call is cancelled, and
//! fails with `MCP_TIMEOUT` (cancelling the task) when it outlives the call's timeout. And a real
//! peer's own tasks in the 2025-11-25 draft: server-everything's `simulate-research-query`
//! imported, called as a task, its report fetched with `tasks/result` and its stages seen as
//! progress; a timeout and a cancellation of the local call leave the task cancelled on the
//! server (asked with `tasks/get` by `tests/peers/record.mjs`, which records the wire); and the
//! same task over streamable HTTP with plain JSON answers (`tests/peers/everything_json.mjs`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_mcp::{
    HttpOptions, ImportOptions, McpImport, McpServer, McpSource, Protocol, TaskOptions, codes,
};
use tools_runtime::progress::Progress;

use crate::support;
use tools_runtime::{Output, Scope, ToolCall, ToolDefinition, ToolRuntime};

/// A scope with `slow` (reports `steps` steps 20 ms apart, then answers `{"steps": n}`) and
/// `wait` (waits for its cancellation, counting it in `cancelled`).
fn scope(runtime: &ToolRuntime, cancelled: Arc<AtomicU32>) -> Scope {
    let scope = runtime.scope();
    let slow = ToolDefinition::builder("slow")
        .description("Take a few steps.")
        .input_schema(json!({
            "type": "object",
            "properties": {"steps": {"type": "integer", "minimum": 0, "maximum": 100}},
            "required": ["steps"]
        }))
        .output(Output::json(json!({
            "type": "object",
            "properties": {"steps": {"type": "integer"}},
            "required": ["steps"]
        })))
        .execute(|args, ctx| async move {
            let steps = args["steps"].as_u64().unwrap_or(0);
            for n in 1..=steps {
                tokio::time::sleep(Duration::from_millis(20)).await;
                ctx.progress(Progress::new(n as f64).with_total(steps as f64))?;
            }
            Ok(json!({"steps": steps}))
        })
        .build()
        .unwrap();
    let wait = ToolDefinition::builder("wait")
        .description("Wait until cancelled.")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "string"})))
        .execute(move |_args, ctx| {
            let cancelled = cancelled.clone();
            async move {
                ctx.cancellation().cancelled().await;
                cancelled.fetch_add(1, Ordering::SeqCst);
                Ok(json!("cancelled"))
            }
        })
        .build()
        .unwrap();
    let _ = scope.register(slow).unwrap();
    let _ = scope.register(wait).unwrap();
    scope
}

struct Served {
    url: String,
    server: McpServer,
    cancelled: Arc<AtomicU32>,
    stop: CancellationToken,
    _scope: Scope,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The scope served on loopback HTTP, `slow` and `wait` long-running.
async fn serve(options: HttpOptions) -> Served {
    let runtime = ToolRuntime::new();
    let cancelled = Arc::new(AtomicU32::new(0));
    let scope = scope(&runtime, cancelled.clone());
    let server = McpServer::new(&scope, "tasks").unwrap().tasks(
        TaskOptions::new()
            .tools(["slow", "wait"])
            .poll_interval(Duration::from_millis(50)),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(server.clone().serve_http(listener, options, stop.clone()));
    Served {
        url,
        server,
        cancelled,
        stop,
        _scope: scope,
    }
}

/// Waits (10 s at most) for `check` to hold.
async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

// ---------------------------------------------------------------------------------------------
// On the wire.

/// Posts one 2026-07-28 request; the last JSON-RPC message of the answer.
async fn post(url: &str, id: u64, method: &str, params: Value, tasks: bool) -> Value {
    let mut params = params;
    let capabilities = if tasks {
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        json!({})
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params["name"]
        .as_str()
        .or(params["taskId"].as_str())
        .unwrap_or("")
        .to_owned();
    let body = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", method)
        .header("Mcp-Name", name)
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let last = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .rfind(|d| !d.trim().is_empty())
        .unwrap_or(&body)
        .trim()
        .to_owned();
    serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// `tasks/get` until the task is no longer working (10 s at most): the last answer.
async fn settled(url: &str, task: &str) -> Value {
    let mut last = Value::Null;
    for n in 0..200 {
        last = post(url, 100 + n, "tasks/get", json!({"taskId": task}), true).await;
        if last["result"]["status"] != "working" {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the task is still working: {last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_running_tool_answers_with_a_task_whose_get_gives_the_one_result() {
    let served = serve(HttpOptions::new()).await;
    let url = &served.url;
    let created = post(
        url,
        1,
        "tools/call",
        json!({"name": "slow", "arguments": {"steps": 3}}),
        true,
    )
    .await;
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working", "{created}");
    assert_eq!(result["pollIntervalMs"], 50, "{created}");
    let task = result["taskId"].as_str().unwrap().to_owned();
    let done = settled(url, &task).await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["structuredContent"],
        json!({"steps": 3}),
        "{done}"
    );
    assert_eq!(done["result"]["ttlMs"], 600_000, "{done}");
    // The one result: asked again, the same.
    let again = post(url, 2, "tasks/get", json!({"taskId": task}), true).await;
    assert_eq!(again["result"], done["result"]);
    // A client that does not declare the extension gets the ordinary answer.
    let plain = post(
        url,
        3,
        "tools/call",
        json!({"name": "slow", "arguments": {"steps": 1}}),
        false,
    )
    .await;
    assert_eq!(
        plain["result"]["structuredContent"],
        json!({"steps": 1}),
        "{plain}"
    );
    assert_eq!(served.server.task_count(), 1);
    // An unknown task is an invalid-params error.
    let unknown = post(url, 4, "tasks/get", json!({"taskId": "nope"}), true).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_cancel_cancels_the_call_and_the_task_ends_cancelled() {
    let served = serve(HttpOptions::new()).await;
    let url = &served.url;
    let created = post(
        url,
        1,
        "tools/call",
        json!({"name": "wait", "arguments": {}}),
        true,
    )
    .await;
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let working = post(url, 2, "tasks/get", json!({"taskId": task}), true).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    let ack = post(url, 3, "tasks/cancel", json!({"taskId": task}), true).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let done = settled(url, &task).await;
    assert_eq!(done["result"]["status"], "cancelled", "{done}");
    assert!(done["result"].get("result").is_none(), "{done}");
    assert_eq!(served.cancelled.load(Ordering::SeqCst), 1);
}

// ---------------------------------------------------------------------------------------------
// Our serve, imported by our import.

async fn import(served: &Served, options: ImportOptions) -> (ToolRuntime, McpImport) {
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(runtime.scope(), McpSource::http(&served.url), options)
        .await
        .unwrap();
    (runtime, import)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_import_awaits_a_served_task() {
    for (sessions, protocol) in [(false, Protocol::Auto), (true, Protocol::Initialize)] {
        let served = serve(HttpOptions::new().sessions(sessions)).await;
        let (runtime, _import) = import(&served, ImportOptions::new().protocol(protocol)).await;
        let result = runtime
            .execute(ToolCall::new("c", "slow", json!({"steps": 5})))
            .await;
        assert_eq!(result.value(), Some(&json!({"steps": 5})), "{result:?}");
        assert_eq!(
            served.server.task_count(),
            1,
            "it ran as a task ({protocol:?})"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_an_imported_call_cancels_its_task() {
    let served = serve(HttpOptions::new()).await;
    let (runtime, _import) = import(&served, ImportOptions::new()).await;
    let cancel = CancellationToken::new();
    let call = runtime.execute(ToolCall::new("c", "wait", json!({})).with_cancel(cancel.clone()));
    let server = served.server.clone();
    let canceller = async {
        assert!(
            eventually(|| server.task_count() == 1).await,
            "no task was created"
        );
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, canceller);
    assert_eq!(
        result.code(),
        Some(tools_runtime::codes::ABORTED),
        "{result:?}"
    );
    let cancelled = served.cancelled.clone();
    assert!(
        eventually(|| cancelled.load(Ordering::SeqCst) == 1).await,
        "the served call was not cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_outlives_the_timeout_fails_and_is_cancelled() {
    let served = serve(HttpOptions::new()).await;
    let (runtime, _import) = import(
        &served,
        ImportOptions::new().tool_timeout("wait", Duration::from_millis(700)),
    )
    .await;
    let result = runtime.execute(ToolCall::new("c", "wait", json!({}))).await;
    assert_eq!(result.code(), Some(codes::MCP_TIMEOUT), "{result:?}");
    assert!(
        result.text().contains("did not answer `wait` within 700ms"),
        "{}",
        result.text()
    );
    assert!(
        result.text().contains("ran as the MCP task"),
        "{}",
        result.text()
    );
    let cancelled = served.cancelled.clone();
    assert!(
        eventually(|| cancelled.load(Ordering::SeqCst) == 1).await,
        "the task was not cancelled"
    );
}

// ---------------------------------------------------------------------------------------------
// Tasks from the definition.

/// A scope with `marked`, whose definition is long-running (it answers `"done"`).
fn marked_scope(runtime: &ToolRuntime) -> Scope {
    let scope = runtime.scope();
    let marked = ToolDefinition::builder("marked")
        .description("A long-running tool.")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "string"})))
        .long_running()
        .execute(|_args, _ctx| async { Ok(json!("done")) })
        .build()
        .unwrap();
    let _ = scope.register(marked).unwrap();
    scope
}

/// `server` on loopback HTTP: its URL and the token that stops it.
async fn serve_server(server: McpServer) -> (String, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(server.serve_http(listener, HttpOptions::new(), stop.clone()));
    (url, stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_running_definition_is_a_task_without_options_unless_they_turn_definitions_off() {
    let runtime = ToolRuntime::new();
    let scope = marked_scope(&runtime);
    let call = json!({"name": "marked", "arguments": {}});

    // No `tasks` call: the definition is enough.
    let (url, stop) = serve_server(McpServer::new(&scope, "marked").unwrap()).await;
    let created = post(&url, 1, "tools/call", call.clone(), true).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = settled(&url, &task).await;
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "done",
        "{done}"
    );
    stop.cancel();

    // Options that name another tool: `marked` is still a task (either is enough).
    let named = McpServer::new(&scope, "marked")
        .unwrap()
        .tasks(TaskOptions::new().tool("other"));
    let (url, stop) = serve_server(named).await;
    let created = post(&url, 1, "tools/call", call.clone(), true).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    stop.cancel();

    // Definitions off: the ordinary answer, and no tasks offered at all.
    let off = McpServer::new(&scope, "marked")
        .unwrap()
        .tasks(TaskOptions::new().long_running_definitions(false));
    let (url, stop) = serve_server(off).await;
    let plain = post(&url, 1, "tools/call", call, true).await;
    assert_eq!(plain["result"]["content"][0]["text"], "done", "{plain}");
    assert!(plain["result"].get("taskId").is_none(), "{plain}");
    let get = post(&url, 2, "tasks/get", json!({"taskId": "nope"}), true).await;
    assert_eq!(get["error"]["code"], -32601, "{get}");
    stop.cancel();
}

/// `tasks/get` on stdio until the task is no longer working (10 s at most): its result.
fn settled_stdio(peer: &mut support::RawStdio, first_id: u64, task: &str) -> Value {
    let mut last = Value::Null;
    for n in 0..200 {
        last = peer.request(first_id + n, "tasks/get", json!({"taskId": task}));
        if last["result"]["status"] != "working" {
            return last["result"].clone();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the task is still working: {last}");
}

const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

#[test]
fn the_binary_serves_its_long_running_tool_as_a_task_over_stdio() {
    let mut command = std::process::Command::new(support::SERVER);
    command.arg("serve");
    let mut peer = support::RawStdio::start(command);
    let init = peer.initialize(json!({"extensions": {TASKS_EXTENSION: {}}}));
    assert!(
        init["result"]["capabilities"]["extensions"]
            .get(TASKS_EXTENSION)
            .is_some(),
        "the server declares the tasks extension: {init}"
    );

    // `job` is long-running: a task, whose get gives the one result.
    let created = peer.request(
        1,
        "tools/call",
        json!({"name": "job", "arguments": {"steps": 3, "ms": 10}}),
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let done = settled_stdio(&mut peer, 100, &task);
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"steps": 3}),
        "{done}"
    );

    // `count` is not: the ordinary answer, from the same client.
    let counted = peer.request(
        2,
        "tools/call",
        json!({"name": "count", "arguments": {"to": 2, "ms": 0}}),
    );
    assert_eq!(
        counted["result"]["structuredContent"],
        json!({"counted": 2}),
        "{counted}"
    );

    // tasks/cancel cancels the job's call; the task ends cancelled and the body saw it.
    let created = peer.request(
        3,
        "tools/call",
        json!({"name": "job", "arguments": {"steps": 1000, "ms": 1000}}),
    );
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let ack = peer.request(4, "tasks/cancel", json!({"taskId": task}));
    assert!(ack.get("error").is_none(), "{ack}");
    let cancelled = settled_stdio(&mut peer, 300, &task);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    let stats = peer.request(5, "tools/call", json!({"name": "stats", "arguments": {}}));
    assert_eq!(
        stats["result"]["structuredContent"]["cancelled"], 1,
        "{stats}"
    );
    assert!(peer.close().success());

    // A client without the extension gets the ordinary answer from `job`.
    let mut command = std::process::Command::new(support::SERVER);
    command.arg("serve");
    let mut plain = support::RawStdio::start(command);
    plain.initialize(json!({}));
    let answer = plain.request(
        1,
        "tools/call",
        json!({"name": "job", "arguments": {"steps": 2, "ms": 0}}),
    );
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"steps": 2}),
        "{answer}"
    );
    assert!(plain.close().success());
}

// ---------------------------------------------------------------------------------------------
// A task the server made before it heard of the cancellation.

/// A server whose one tool, `late`, answers with a task only after a pause (it says when it has
/// made the task), and which records each `tasks/cancel`.
#[derive(Clone)]
struct LateTask {
    made: Arc<tokio::sync::Notify>,
    cancelled: Arc<std::sync::Mutex<Vec<String>>>,
}

impl rmcp::ServerHandler for LateTask {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }

    fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> impl Future<Output = Result<rmcp::model::ListToolsResult, rmcp::ErrorData>>
    + rmcp::service::MaybeSendFuture
    + '_ {
        let schema = json!({"type": "object"}).as_object().cloned().unwrap();
        let tool = rmcp::model::Tool::new("late", "Answers with a task, late.", schema);
        std::future::ready(Ok(rmcp::model::ListToolsResult::with_all_items(vec![tool])))
    }

    async fn call_tool(
        &self,
        _request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let task = rmcp::model::Task::new(
            "late-task",
            rmcp::model::TaskStatus::Working,
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
        );
        self.made.notify_one();
        // The caller leaves meanwhile; the task is answered anyway.
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(rmcp::model::CallToolResponse::Task(
            rmcp::model::CreateTaskResult::new(task),
        ))
    }

    fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> impl Future<Output = Result<rmcp::model::GetTaskResult, rmcp::ErrorData>>
    + rmcp::service::MaybeSendFuture
    + '_ {
        let task = rmcp::model::Task::new(
            request.task_id,
            rmcp::model::TaskStatus::Working,
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
        );
        std::future::ready(Ok(rmcp::model::GetTaskResult::new(
            rmcp::model::DetailedTask::new(task, rmcp::model::TaskPayload::Working),
        )))
    }

    fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> impl Future<Output = Result<(), rmcp::ErrorData>> + rmcp::service::MaybeSendFuture + '_
    {
        self.cancelled.lock().unwrap().push(request.task_id);
        std::future::ready(Ok(()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_left_before_its_answer_cancels_the_task_the_answer_brings() {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let server = LateTask {
        made: Arc::default(),
        cancelled: Arc::default(),
    };
    let handler = server.clone();
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let accept = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let service = hyper_util::service::TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .with_upgrades()
                    .await;
            });
        }
    });

    let runtime = ToolRuntime::new();
    let _import = McpImport::connect(runtime.scope(), McpSource::http(url), ImportOptions::new())
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let call = runtime.execute(ToolCall::new("c", "late", json!({})).with_cancel(cancel.clone()));
    let made = server.made.clone();
    let canceller = async {
        made.notified().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, canceller);
    assert_eq!(
        result.code(),
        Some(tools_runtime::codes::ABORTED),
        "{result:?}"
    );
    let cancelled = server.cancelled.clone();
    assert!(
        eventually(|| cancelled.lock().unwrap().as_slice() == ["late-task"]).await,
        "the task the late answer brought was not cancelled: {:?}",
        cancelled.lock().unwrap()
    );
    accept.abort();
}

// ---------------------------------------------------------------------------------------------
// A real peer's own tasks: npm's server-everything speaks the 2025-11-25 draft (the TypeScript
// SDK's experimental tasks). Its `simulate-research-query` declares `taskSupport: "required"`
// and takes four stages of a second each, reporting each in its status message.

const RESEARCH: &str = "ev_simulate-research-query";

/// The lines `tests/peers/record.mjs` wrote to `log`: (direction, message).
fn recorded(log: &std::path::Path) -> Vec<(char, Value)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (mark, message) = line.split_once(' ')?;
            Some((mark.chars().next()?, serde_json::from_str(message).ok()?))
        })
        .collect()
}

/// The requests of `method` the import sent, as recorded.
fn sent(log: &std::path::Path, method: &str) -> Vec<Value> {
    recorded(log)
        .into_iter()
        .filter(|(mark, m)| *mark == '>' && m["method"] == method)
        .map(|(_, m)| m)
        .collect()
}

/// The id of the one task the server made, as recorded.
fn made_task(log: &std::path::Path) -> String {
    let made: Vec<String> = recorded(log)
        .into_iter()
        .filter(|(mark, _)| *mark == '<')
        .filter_map(|(_, m)| m["result"]["task"]["taskId"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(made.len(), 1, "one task: {made:?}");
    made[0].clone()
}

/// What the server said of task `id` when the recorder asked after its `tasks/cancel` (10 s at
/// most).
async fn status_after_cancel(log: &std::path::Path, id: &str) -> Value {
    let mut asked = Vec::new();
    for _ in 0..200 {
        let lines = recorded(log);
        asked = lines
            .iter()
            .filter(|(mark, m)| *mark == '+' && m["params"]["taskId"] == id)
            .map(|(_, m)| m["id"].clone())
            .collect();
        if let Some(answer) = lines
            .iter()
            .find(|(mark, m)| *mark == '<' && asked.contains(&m["id"]))
        {
            return answer.1["result"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no tasks/get after a tasks/cancel of {id} (asked: {asked:?})");
}

async fn import_everything(
    log: &std::path::Path,
    options: ImportOptions,
) -> (ToolRuntime, McpImport) {
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        support::everything_recorded(log),
        options.prefix("ev_"),
    )
    .await
    .expect("server-everything connects");
    assert!(
        import.tool_names().contains(&RESEARCH.to_owned()),
        "{:?}",
        import.tool_names()
    );
    (runtime, import)
}

/// The progress reports of a call: done, message.
type Reports = Arc<std::sync::Mutex<Vec<(f64, Option<String>)>>>;

/// A call whose progress reports are collected, and a signal at the first.
fn watched(call: ToolCall) -> (ToolCall, Reports, Arc<tokio::sync::Notify>) {
    let reports = Reports::default();
    let first = Arc::new(tokio::sync::Notify::new());
    let (sink, signal) = (reports.clone(), first.clone());
    let call = call.with_progress(move |progress| {
        sink.lock()
            .unwrap()
            .push((progress.done(), progress.message().map(str::to_owned)));
        signal.notify_one();
    });
    (call, reports, first)
}

/// The bound a call against server-everything must end within: not a claim of speed, only that
/// it did not hang.
const NO_HANG: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everythings_research_task_is_awaited_to_the_report_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wire.log");
    let (runtime, _import) = import_everything(&log, ImportOptions::new()).await;
    let schemas = runtime.schemas(tools_runtime::ScopeKey::GLOBAL);
    let research = schemas.iter().find(|s| s.name == RESEARCH).unwrap();
    assert_eq!(research.input_schema["required"], json!(["topic"]));

    let (call, reports, _) = watched(ToolCall::new("c", RESEARCH, json!({"topic": "MCP tasks"})));
    let result = tokio::time::timeout(NO_HANG, runtime.execute(call))
        .await
        .expect("the call did not hang");
    assert!(!result.is_error(), "{}", result.text());
    // The server's own report, fetched with tasks/result.
    let report = result.text();
    for part in [
        "# Research Report: MCP tasks",
        "- **Topic**: MCP tasks",
        "- Stage 1: Gathering sources ✓",
        "- Stage 4: Generating report ✓",
        "Client calls `tasks/result` → Server returns this final result",
        "*This is a simulated research report from the Everything MCP Server.*",
    ] {
        assert!(report.contains(part), "{part:?} missing from {report}");
    }
    // Each stage's status message, as a progress report of the local call.
    assert_eq!(
        *reports.lock().unwrap(),
        [
            (1.0, Some("Gathering sources...".to_owned())),
            (2.0, Some("Analyzing content...".to_owned())),
            (3.0, Some("Synthesizing findings...".to_owned())),
            (4.0, Some("Generating report...".to_owned())),
        ]
    );
    // On the wire: a task-augmented call, its result fetched, nothing cancelled.
    let calls = sent(&log, "tools/call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["params"]["name"], "simulate-research-query");
    assert!(calls[0]["params"]["task"]["ttl"].is_u64(), "{}", calls[0]);
    let task = made_task(&log);
    let fetched = sent(&log, "tasks/result");
    assert_eq!(fetched.len(), 1, "{fetched:?}");
    assert_eq!(fetched[0]["params"]["taskId"], task.as_str());
    assert!(sent(&log, "tasks/cancel").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_research_task_past_the_timeout_fails_and_the_server_has_it_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wire.log");
    let options =
        ImportOptions::new().tool_timeout("simulate-research-query", Duration::from_millis(1500));
    let (runtime, _import) = import_everything(&log, options).await;
    let call = ToolCall::new("c", RESEARCH, json!({"topic": "patience"}));
    let result = tokio::time::timeout(NO_HANG, runtime.execute(call))
        .await
        .expect("the call did not hang");
    assert_eq!(result.code(), Some(codes::MCP_TIMEOUT), "{result:?}");
    let task = made_task(&log);
    let text = result.text();
    assert!(
        text.contains(&format!("did not answer `{RESEARCH}` within 1.5s")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "it ran as the MCP task `{task}`, which was cancelled"
        )),
        "{text}"
    );
    let after = status_after_cancel(&log, &task).await;
    assert_eq!(after["status"], "cancelled", "{after}");
    assert_eq!(sent(&log, "tasks/cancel").len(), 1);
    assert!(sent(&log, "tasks/result").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_research_call_has_the_server_cancel_its_task() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("wire.log");
    let (runtime, _import) = import_everything(&log, ImportOptions::new()).await;
    let cancel = CancellationToken::new();
    let (call, _reports, first) = watched(
        ToolCall::new("c", RESEARCH, json!({"topic": "second thoughts"}))
            .with_cancel(cancel.clone()),
    );
    let canceller = async {
        // The first report is the task's first status: the task exists.
        first.notified().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::time::timeout(NO_HANG, async {
        tokio::join!(runtime.execute(call), canceller)
    })
    .await
    .expect("the call did not hang");
    assert_eq!(
        result.code(),
        Some(tools_runtime::codes::ABORTED),
        "{result:?}"
    );
    let task = made_task(&log);
    assert!(
        result.text().contains(&format!("tasks/cancel of `{task}`")),
        "{}",
        result.text()
    );
    let after = status_after_cancel(&log, &task).await;
    assert_eq!(after["status"], "cancelled", "{after}");
    assert_eq!(
        after["statusMessage"], "Client cancelled task execution.",
        "{after}"
    );
}

/// Over HTTP with plain JSON answers (`tests/peers/everything_json.mjs`): rmcp's client reads a
/// JSON body itself, and the research tool's `execution` must survive it for the call to be a
/// task (called plainly, a tool that requires a task is refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everythings_research_task_is_awaited_over_http_with_json_answers() {
    let (_peer, url) = support::everything_json();
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        McpSource::http(&url),
        ImportOptions::new().prefix("ev_"),
    )
    .await
    .expect("server-everything connects over HTTP");
    assert!(
        import.tool_names().contains(&RESEARCH.to_owned()),
        "{:?}",
        import.tool_names()
    );
    let (call, reports, _) = watched(ToolCall::new(
        "c",
        RESEARCH,
        json!({"topic": "JSON bodies"}),
    ));
    let result = tokio::time::timeout(NO_HANG, runtime.execute(call))
        .await
        .expect("the call did not hang");
    assert!(!result.is_error(), "{}", result.text());
    let report = result.text();
    for part in [
        "# Research Report: JSON bodies",
        "- Stage 4: Generating report ✓",
        "Client calls `tasks/result` → Server returns this final result",
    ] {
        assert!(report.contains(part), "{part:?} missing from {report}");
    }
    // The task's status messages (by `tasks/get`, or a status notification on the session's
    // stream) are its progress: stages in order, however many were seen between polls.
    let stages = [
        "Gathering sources...",
        "Analyzing content...",
        "Synthesizing findings...",
        "Generating report...",
    ];
    let reports = reports.lock().unwrap().clone();
    assert!(!reports.is_empty(), "no progress");
    let seen: Vec<usize> = reports
        .iter()
        .map(|(_, message)| {
            stages
                .iter()
                .position(|stage| message.as_deref() == Some(*stage))
                .unwrap_or_else(|| panic!("not a stage: {reports:?}"))
        })
        .collect();
    assert!(seen.is_sorted_by(|a, b| a < b), "{reports:?}");
}

// ---------------------------------------------------------------------------------------------
// What a draft tool declares optional (`tests/peers/draft_tasks.mjs`).

async fn import_draft(options: ImportOptions) -> (ToolRuntime, McpImport) {
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(runtime.scope(), support::draft_tasks_source(), options)
        .await
        .expect("the draft peer connects");
    (runtime, import)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_declaring_tasks_optional_is_a_task_only_when_the_import_opts_in() {
    let call = || ToolCall::new("c", "maybe", json!({"ms": 100}));
    let (runtime, _import) = import_draft(ImportOptions::new()).await;
    let result = runtime.execute(call()).await;
    assert_eq!(result.value(), Some(&json!("done plainly")), "{result:?}");

    for options in [
        ImportOptions::new().optional_tasks(true),
        ImportOptions::new().tool_optional_task("maybe", true),
    ] {
        let (runtime, _import) = import_draft(options).await;
        let result = tokio::time::timeout(NO_HANG, runtime.execute(call()))
            .await
            .expect("the call did not hang");
        assert_eq!(result.value(), Some(&json!("done as a task")), "{result:?}");
    }
    // One tool's own setting wins over the import's.
    let options = ImportOptions::new()
        .optional_tasks(true)
        .tool_optional_task("maybe", false);
    let (runtime, _import) = import_draft(options).await;
    let result = runtime.execute(call()).await;
    assert_eq!(result.value(), Some(&json!("done plainly")), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_draft_task_is_its_calls_error() {
    let (runtime, _import) = import_draft(ImportOptions::new().optional_tasks(true)).await;
    let call = ToolCall::new("c", "maybe", json!({"ms": 100, "fail": true}));
    let result = tokio::time::timeout(NO_HANG, runtime.execute(call))
        .await
        .expect("the call did not hang");
    assert_eq!(result.code(), Some(codes::MCP_TOOL_ERROR), "{result:?}");
    assert_eq!(
        result.text(),
        "Error: the MCP task of `maybe` failed: it broke",
        "{result:?}"
    );
}
