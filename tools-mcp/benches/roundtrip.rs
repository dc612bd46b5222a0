//! `tools/call` round trips per second over stdio: our server (every call through
//! `ToolRuntime::execute`: resolution, input validation, the policy chain, output validation and
//! rendering) beside an `rmcp` `ToolRouter` server with the same `echo` tool, both child
//! processes driven by the same rmcp client, one call at a time. Prints both rates and the
//! ratio of the time per call (target: at most 1.15x).
//!
//! `cargo bench -p tools-mcp --bench stdio_roundtrip`. Run without `--bench` (as `cargo test`
//! does) it makes a few calls to each server and prints nothing but a line.
//!
//! The bench re-executes itself as the server: `TOOLS_MCP_BENCH_SERVE=ours|rmcp`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ServiceExt, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

const ROLE: &str = "TOOLS_MCP_BENCH_SERVE";

/// Echo a message back.
#[tools_runtime::tool(concurrency_safe)]
fn echo(
    /// The message.
    message: String,
) -> String {
    message
}

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The message.
    message: String,
}

struct RouterServer;

#[tool_router(server_handler)]
impl RouterServer {
    #[tool(name = "echo", description = "Echo a message back.")]
    fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        message
    }
}

async fn serve(role: &str) {
    match role {
        "ours" => {
            let runtime = tools_runtime::ToolRuntime::new();
            let scope = runtime.scope();
            let _r = scope.register(echo::definition().unwrap()).unwrap();
            let server = tools_mcp::McpServer::new(&scope, "bench").unwrap();
            server.serve_stdio().await.unwrap();
        }
        _ => {
            let running = RouterServer.serve(rmcp::transport::stdio()).await.unwrap();
            running.waiting().await.unwrap();
        }
    }
}

async fn client(role: &str) -> RunningService<RoleClient, ()> {
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command.env(ROLE, role);
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .unwrap()
}

async fn calls(client: &RunningService<RoleClient, ()>, n: usize) -> Duration {
    let start = Instant::now();
    for i in 0..n {
        let mut params = CallToolRequestParams::new("echo");
        params.arguments = json!({"message": format!("m{i}")}).as_object().cloned();
        let result = client.call_tool(params).await.unwrap();
        assert_ne!(result.is_error, Some(true));
    }
    start.elapsed()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        serve(&role).await;
        return;
    }
    let bench = std::env::args().any(|a| a == "--bench");
    let ours = client("ours").await;
    let router = client("rmcp").await;
    let (warm, n, rounds) = if bench { (500, 2_000, 5) } else { (5, 5, 1) };
    calls(&ours, warm).await;
    calls(&router, warm).await;
    let (mut t_ours, mut t_router) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..rounds {
        t_ours += calls(&ours, n).await;
        t_router += calls(&router, n).await;
    }
    let total = (n * rounds) as f64;
    let per_ours = t_ours.as_secs_f64() / total;
    let per_router = t_router.as_secs_f64() / total;
    if !bench {
        println!("stdio_roundtrip: smoke run ok (pass --bench to measure)");
        return;
    }
    println!("tools/call over stdio, echo, one call at a time, {total} calls each:");
    println!(
        "  tools-mcp McpServer (pipeline)  {:>9.1} calls/s  {:>7.1} us/call",
        1.0 / per_ours,
        per_ours * 1e6
    );
    println!(
        "  rmcp ToolRouter                 {:>9.1} calls/s  {:>7.1} us/call",
        1.0 / per_router,
        per_router * 1e6
    );
    println!(
        "  time per call, ours / rmcp: {:.3}x (target <= 1.15x)",
        per_ours / per_router
    );
    let _ = ours.cancel().await;
    let _ = router.cancel().await;
}
