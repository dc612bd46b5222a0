//! Reading a catalog from a live MCP server (behind the `mcp` feature, off by default).
//!
//! [`fetch_catalog`] starts a server as a child process (stdio) or reaches one over streamable
//! HTTP, lists every page of `tools/list` and returns the catalog as JSON text in the MCP
//! `tools/list` shape, which the CLI then reads exactly as it reads a catalog file.
//!
//! This is a minimal `rmcp` client of its own rather than `tools-mcp`'s: `tools-mcp` depends on
//! `tools-runtime`, which depends on this crate, so using it here would make a cycle. It tries
//! the 2026-07-28 protocol (`server/discover`) first and, if the server refuses it, connects again
//! with the `initialize` handshake.

use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpServerSource {
    /// A command line (split on whitespace, no shell quoting) started as a child process.
    Stdio(String),
    /// A streamable HTTP endpoint (plain `http://`).
    Url(String),
}

impl McpServerSource {
    /// The source as errors name it.
    pub fn describe(&self) -> String {
        match self {
            McpServerSource::Stdio(command) => format!("MCP server `{command}`"),
            McpServerSource::Url(url) => format!("MCP server {url}"),
        }
    }
}

/// Why a catalog could not be read from a server.
#[derive(Debug, thiserror::Error)]
#[error("{server}: {reason}")]
pub struct McpFetchError {
    /// The server, as [`McpServerSource::describe`] names it.
    pub server: String,
    /// What failed.
    pub reason: String,
}

/// How long connecting and listing may take in all.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Lists every tool of the server (all pages) and returns `{"tools": [...]}` as JSON text.
pub fn fetch_catalog(source: &McpServerSource) -> Result<String, McpFetchError> {
    let fail = |reason: String| McpFetchError {
        server: source.describe(),
        reason,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(format!("cannot start an async runtime: {e}")))?;
    runtime.block_on(async {
        match tokio::time::timeout(TIMEOUT, list(source)).await {
            Ok(result) => result.map_err(fail),
            Err(_) => Err(fail(format!("no complete tools/list within {TIMEOUT:?}"))),
        }
    })
}

async fn list(source: &McpServerSource) -> Result<String, String> {
    let modern = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = match connect(source, modern).await {
        Ok(client) => client,
        Err(first) => connect(source, ClientLifecycleMode::Initialize)
            .await
            .map_err(|second| format!("cannot connect ({first}; then {second})"))?,
    };
    let tools = client
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    let _ = client.cancel().await;
    let tools = serde_json::to_value(&tools).map_err(|e| e.to_string())?;
    let catalog = serde_json::json!({ "tools": tools });
    serde_json::to_string(&catalog).map_err(|e| e.to_string())
}

async fn connect(
    source: &McpServerSource,
    lifecycle: ClientLifecycleMode,
) -> Result<RunningService<RoleClient, ()>, String> {
    match source {
        McpServerSource::Stdio(line) => {
            let mut words = line.split_whitespace();
            let program = words.next().ok_or("the command line is empty")?;
            let mut command = tokio::process::Command::new(program);
            command.args(words);
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(std::process::Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start it: {e}"))?;
            ().serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| e.to_string())
        }
        McpServerSource::Url(url) => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            ().serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| e.to_string())
        }
    }
}
