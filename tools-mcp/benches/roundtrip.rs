//! `tools/call` round trips, one call at a time, over stdio and over streamable HTTP: our server
//! (every call through `ToolRuntime::execute`: resolution, input validation, the policy chain,
//! output validation and rendering; our stdio framing and HTTP front door with their size
//! limit) beside an `rmcp` `ToolRouter` server with the same tools on rmcp's own transports. Both
//! run as child processes driven by the same rmcp client. Each transport is measured with a
//! small result (`echo`) and with results of 1 MiB and 10 MiB (`blob`). Prints the time per call
//! of each and the ratio (target: at most 1.05x for small calls, 1.15x for large results).
//!
//! `cargo bench -p tools-mcp --bench roundtrip`. Run without `--bench` (as `cargo test` does) it
//! makes a few calls of each kind and prints one line.
//!
//! `cargo bench -p tools-mcp --bench roundtrip -- --callgrind` counts instructions instead
//! (stable on a busy machine, where time is not): each server runs under
//! `valgrind --tool=callgrind` for a short and a long series of small `echo` calls over each
//! transport, and the difference between the two, divided by the calls between them, is the
//! server's instructions per call (all its threads; the client is not counted). It prints
//! ours beside rmcp's and the ratio (target: at most 1.05x). It needs `valgrind` on the `PATH`;
//! `TOOLS_MCP_BENCH_CALLGRIND_DIR=DIR` keeps the profiles (`ROLE.TRANSPORT.CALLS.out`) there.
//!
//! The bench re-executes itself as the server: `TOOLS_MCP_BENCH_SERVE=ours|rmcp` with
//! `TOOLS_MCP_BENCH_TRANSPORT=stdio|http` (an HTTP server prints `listening on ADDR`). Both HTTP
//! servers run without sessions, as `HttpOptions::new()` does.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ServiceExt, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

const ROLE: &str = "TOOLS_MCP_BENCH_SERVE";
const TRANSPORT: &str = "TOOLS_MCP_BENCH_TRANSPORT";

/// Echo a message back.
#[tools_runtime::tool(concurrency_safe)]
fn echo(
    /// The message.
    message: String,
) -> String {
    message
}

/// A text of `size` bytes.
#[tools_runtime::tool(concurrency_safe)]
fn blob(
    /// Its size in bytes.
    size: usize,
) -> String {
    "x".repeat(size)
}

#[derive(Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The message.
    message: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct BlobArgs {
    /// Its size in bytes.
    size: usize,
}

#[derive(Clone)]
struct RouterServer;

#[tool_router(server_handler)]
impl RouterServer {
    #[tool(name = "echo", description = "Echo a message back.")]
    fn echo(&self, Parameters(EchoArgs { message }): Parameters<EchoArgs>) -> String {
        message
    }

    #[tool(name = "blob", description = "A text of `size` bytes.")]
    fn blob(&self, Parameters(BlobArgs { size }): Parameters<BlobArgs>) -> String {
        "x".repeat(size)
    }
}

/// Our server, and the scope whose tools it serves (they last as long as it does).
fn ours() -> (tools_mcp::McpServer, tools_runtime::Scope) {
    let runtime = tools_runtime::ToolRuntime::new();
    let scope = runtime.scope();
    let _e = scope.register(echo::definition().unwrap()).unwrap();
    let _b = scope.register(blob::definition().unwrap()).unwrap();
    (tools_mcp::McpServer::new(&scope, "bench").unwrap(), scope)
}

async fn listener() -> tokio::net::TcpListener {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("listening on {}", listener.local_addr().unwrap());
    use std::io::Write;
    std::io::stdout().flush().unwrap();
    listener
}

/// rmcp's streamable HTTP service on hyper, without sessions.
async fn serve_rmcp_http(listener: tokio::net::TcpListener) {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    let service = StreamableHttpService::new(
        || Ok(RouterServer),
        std::sync::Arc::new(LocalSessionManager::default()),
        config,
    );
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .with_upgrades()
                .await;
        });
    }
}

async fn serve(role: &str, transport: &str) {
    match (role, transport) {
        ("oursraw", _) => {
            let (server, _scope) = ours();
            server
                .serve_transport(rmcp::transport::stdio())
                .await
                .unwrap();
        }
        ("ours", "stdio") => {
            let (server, _scope) = ours();
            server.serve_stdio().await.unwrap();
        }
        ("ours", _) => {
            let (server, _scope) = ours();
            let listener = listener().await;
            server
                .serve_http(
                    listener,
                    tools_mcp::HttpOptions::new(),
                    tokio_util::sync::CancellationToken::new(),
                )
                .await
                .unwrap();
        }
        (_, "stdio") => {
            let running = RouterServer.serve(rmcp::transport::stdio()).await.unwrap();
            running.waiting().await.unwrap();
        }
        _ => serve_rmcp_http(listener().await).await,
    }
}

struct Peer {
    client: RunningService<RoleClient, ()>,
    /// The HTTP server's process (a stdio server's belongs to its transport).
    _child: Option<tokio::process::Child>,
}

fn command(
    role: &str,
    transport: &str,
    callgrind: Option<&std::path::Path>,
) -> tokio::process::Command {
    let exe = std::env::current_exe().unwrap();
    let mut command = match callgrind {
        Some(out) => {
            let mut command = tokio::process::Command::new("valgrind");
            command
                .arg("-q")
                .arg("--tool=callgrind")
                .arg("--dump-instr=no")
                .arg(format!("--callgrind-out-file={}", out.display()))
                .arg(exe)
                .stderr(std::process::Stdio::null());
            command
        }
        None => tokio::process::Command::new(exe),
    };
    command.env(ROLE, role).env(TRANSPORT, transport);
    command
}

async fn peer(role: &str, transport: &str) -> Peer {
    peer_with(role, transport, None).await
}

async fn peer_with(role: &str, transport: &str, callgrind: Option<&std::path::Path>) -> Peer {
    if transport == "stdio" {
        let client =
            ().serve(TokioChildProcess::new(command(role, transport, callgrind)).unwrap())
                .await
                .unwrap();
        return Peer {
            client,
            _child: None,
        };
    }
    let mut child = command(role, transport, callgrind)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut line = String::new();
    tokio::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .await
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let client = ().serve(transport).await.unwrap();
    Peer {
        client,
        _child: Some(child),
    }
}

/// One kind of call: the tool, its arguments, and the length of the text it answers.
struct Load {
    label: &'static str,
    tool: &'static str,
    args: Value,
    answer_len: usize,
    /// Calls per round when measuring.
    calls: usize,
}

fn loads() -> Vec<Load> {
    vec![
        Load {
            label: "echo",
            tool: "echo",
            args: json!({"message": "m"}),
            answer_len: 1,
            calls: 2_000,
        },
        Load {
            label: "1 MiB",
            tool: "blob",
            args: json!({"size": 1 << 20}),
            answer_len: 1 << 20,
            calls: 100,
        },
        Load {
            label: "10 MiB",
            tool: "blob",
            args: json!({"size": 10 << 20}),
            answer_len: 10 << 20,
            calls: 10,
        },
    ]
}

async fn calls(peer: &Peer, load: &Load, n: usize) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        let mut params = CallToolRequestParams::new(load.tool);
        params.arguments = load.args.as_object().cloned();
        let result = peer.client.call_tool(params).await.unwrap();
        assert_ne!(result.is_error, Some(true));
        let text = result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.len());
        assert_eq!(text, Some(load.answer_len));
    }
    start.elapsed()
}

/// The instructions a server ran (all threads) serving `warm + n` echo calls: it runs under
/// callgrind, and ends when its client closes stdin (stdio) or at a SIGTERM (HTTP), which
/// callgrind survives to write its counts.
async fn server_instructions(role: &str, transport: &str, warm: usize, n: usize) -> u64 {
    // `TOOLS_MCP_BENCH_CALLGRIND_DIR` keeps the profiles there, for `callgrind_annotate`.
    let kept = std::env::var_os("TOOLS_MCP_BENCH_CALLGRIND_DIR").map(std::path::PathBuf::from);
    let dir = kept.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("tools-mcp-bench-{}", std::process::id()))
    });
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{role}.{transport}.{n}.out"));
    let _ = std::fs::remove_file(&out);
    let mut peer = peer_with(role, transport, Some(&out)).await;
    let load = &loads()[0];
    calls(&peer, load, warm + n).await;
    let _ = peer.client.cancel().await;
    match peer._child.take() {
        Some(mut child) => {
            let pid = child.id().unwrap();
            // SAFETY: sends a signal to our own child, which has not been waited for.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            child.wait().await.unwrap();
        }
        None => {
            // The stdio transport waits for its child when it closes; give callgrind its time.
            for _ in 0..600 {
                if std::fs::metadata(&out).is_ok_and(|m| m.len() > 0) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    // The totals line is written last: wait until it is there.
    let mut text = String::new();
    for _ in 0..600 {
        text = std::fs::read_to_string(&out).unwrap_or_default();
        if text.lines().any(|l| l.starts_with("totals:")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let total = text
        .lines()
        .find_map(|l| l.strip_prefix("totals:"))
        .and_then(|t| t.trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("no totals in {}", out.display()));
    if kept.is_none() {
        let _ = std::fs::remove_file(&out);
    }
    total
}

/// Instructions per small call of each server, from two series under callgrind.
async fn callgrind_per_call() {
    let (warm, short, long) = (20, 0, 500);
    println!(
        "tools/call of echo, one call at a time: server instructions per call (callgrind, all \
         threads; ({long} calls - {short} calls) / {}, after {warm} warm calls), ours / rmcp \
         (target <= 1.05x):",
        long - short
    );
    println!(
        "  {:<6} {:>22} {:>22} {:>7}",
        "", "tools-mcp McpServer", "rmcp ToolRouter", "ratio"
    );
    for transport in ["stdio", "http"] {
        let mut per_call = Vec::new();
        for role in ["ours", "rmcp"] {
            let a = server_instructions(role, transport, warm, short).await;
            let b = server_instructions(role, transport, warm, long).await;
            per_call.push(b.saturating_sub(a) as f64 / (long - short) as f64);
        }
        println!(
            "  {:<6} {:>22.0} {:>22.0} {:>6.3}x",
            transport,
            per_call[0],
            per_call[1],
            per_call[0] / per_call[1]
        );
    }
}

fn micros(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n as f64
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        let transport = std::env::var(TRANSPORT).unwrap_or_else(|_| "stdio".to_owned());
        serve(&role, &transport).await;
        return;
    }
    if std::env::args().any(|a| a == "--callgrind") {
        callgrind_per_call().await;
        return;
    }
    let bench = std::env::args().any(|a| a == "--bench");
    let rounds = if bench { 5 } else { 1 };
    if bench {
        println!(
            "tools/call round trips, one call at a time; time per call, ours / rmcp (target: small calls <= 1.05x, large results <= 1.15x):"
        );
        println!(
            "  {:<6} {:<7} {:>8} {:>22} {:>22} {:>7}",
            "", "result", "calls", "tools-mcp McpServer", "rmcp ToolRouter", "ratio"
        );
    }
    for transport in ["stdio", "http"] {
        let ours = peer("ours", transport).await;
        let router = peer("rmcp", transport).await;
        for load in loads() {
            let n = if bench { load.calls } else { 2 };
            // Warm both (connections, allocators, page cache).
            calls(&ours, &load, n.div_ceil(4)).await;
            calls(&router, &load, n.div_ceil(4)).await;
            let (mut t_ours, mut t_router) = (Duration::ZERO, Duration::ZERO);
            for _ in 0..rounds {
                t_ours += calls(&ours, &load, n).await;
                t_router += calls(&router, &load, n).await;
            }
            let total = n * rounds;
            if bench {
                let (a, b) = (micros(t_ours, total), micros(t_router, total));
                println!(
                    "  {:<6} {:<7} {:>8} {:>19.1} us {:>19.1} us {:>6.3}x",
                    transport,
                    load.label,
                    total,
                    a,
                    b,
                    a / b
                );
            }
        }
        let _ = ours.client.cancel().await;
        let _ = router.client.cancel().await;
    }
    if !bench {
        println!("roundtrip: smoke run ok (pass --bench to measure)");
    }
}
