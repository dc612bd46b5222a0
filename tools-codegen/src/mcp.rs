//! Reading a catalog from a live MCP server (behind the `mcp` feature, off by default).
//!
//! [`fetch_catalog`] starts a server as a child process (stdio) or reaches one over streamable
//! HTTP, lists every page of `tools/list` and returns the catalog as JSON text in the MCP
//! `tools/list` shape, which the CLI then reads exactly as it reads a catalog file.
//!
//! This is a minimal `rmcp` client of its own rather than `tools-mcp`'s: `tools-mcp` depends on
//! `tools-runtime`, which depends on this crate, so using it here would make a cycle. Under
//! [`McpProtocol::Auto`] it tries the 2026-07-28 protocol (`server/discover`) first, within its
//! own short bound ([`FetchOptions::probe_timeout`], 5 seconds by default), and, if the server
//! refuses it or stays silent that long, connects again with the `initialize` handshake (a stdio
//! server is started a second time). [`McpProtocol::Initialize`] and [`McpProtocol::Discover`]
//! pin one generation (the CLI's `--mcp-protocol`). The handshake asks for 2025-11-25, the
//! version it can give.

use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
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

/// The default of [`FetchOptions::probe_timeout`].
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Which protocol generation to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum McpProtocol {
    /// 2026-07-28 when the server answers `server/discover` within the probe's bound, else the
    /// `initialize` handshake on a fresh connection.
    #[default]
    Auto,
    /// The `initialize` handshake, 2025-11-25.
    Initialize,
    /// 2026-07-28 only (`server/discover`).
    Discover,
}

impl std::str::FromStr for McpProtocol {
    type Err = String;

    /// `auto`, `initialize` or `discover`.
    fn from_str(text: &str) -> Result<McpProtocol, String> {
        match text {
            "auto" => Ok(McpProtocol::Auto),
            "initialize" => Ok(McpProtocol::Initialize),
            "discover" => Ok(McpProtocol::Discover),
            other => Err(format!(
                "`{other}` is no MCP protocol generation (auto, initialize or discover)"
            )),
        }
    }
}

/// How [`fetch_catalog_with`] connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FetchOptions {
    /// The protocol generation.
    pub protocol: McpProtocol,
    /// How long [`McpProtocol::Auto`] waits for the answer to `server/discover`.
    pub probe_timeout: Duration,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            protocol: McpProtocol::Auto,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
        }
    }
}

impl FetchOptions {
    /// The same options with this protocol generation.
    pub fn protocol(mut self, protocol: McpProtocol) -> FetchOptions {
        self.protocol = protocol;
        self
    }

    /// The same options with this bound on the `server/discover` probe.
    pub fn probe_timeout(mut self, timeout: Duration) -> FetchOptions {
        self.probe_timeout = timeout;
        self
    }
}

/// Lists every tool of the server (all pages) and returns `{"tools": [...]}` as JSON text.
pub fn fetch_catalog(source: &McpServerSource) -> Result<String, McpFetchError> {
    fetch_catalog_with(source, &FetchOptions::default())
}

/// [`fetch_catalog`] with options: the protocol generation and the probe's bound.
pub fn fetch_catalog_with(
    source: &McpServerSource,
    options: &FetchOptions,
) -> Result<String, McpFetchError> {
    let fail = |reason: String| McpFetchError {
        server: source.describe(),
        reason,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(format!("cannot start an async runtime: {e}")))?;
    runtime.block_on(async {
        match tokio::time::timeout(TIMEOUT, list(source, options)).await {
            Ok(result) => result.map_err(fail),
            Err(_) => Err(fail(format!("no complete tools/list within {TIMEOUT:?}"))),
        }
    })
}

async fn list(source: &McpServerSource, options: &FetchOptions) -> Result<String, String> {
    let modern = || ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let legacy = || connect(source, ClientLifecycleMode::Initialize);
    let client = match options.protocol {
        McpProtocol::Auto => {
            let bound = options.probe_timeout;
            match tokio::time::timeout(bound, connect(source, modern())).await {
                Ok(Ok(client)) => client,
                Ok(Err(first)) => legacy()
                    .await
                    .map_err(|second| format!("cannot connect ({first}; then {second})"))?,
                Err(_) => legacy().await.map_err(|second| {
                    format!("cannot connect (no answer to server/discover within {bound:?}; then {second})")
                })?,
            }
        }
        McpProtocol::Initialize => legacy().await.map_err(|e| format!("cannot connect: {e}"))?,
        McpProtocol::Discover => connect(source, modern())
            .await
            .map_err(|e| format!("cannot connect: {e}"))?,
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

/// What the `initialize` handshake sends: 2025-11-25 (rmcp's default would be the newest
/// version, which that handshake cannot give).
fn handler() -> ClientConfig {
    let mut implementation = Implementation::default();
    implementation.name = "tools-codegen".to_owned();
    implementation.version = env!("CARGO_PKG_VERSION").to_owned();
    ClientConfig::new(ClientCapabilities::default(), implementation)
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

async fn connect(
    source: &McpServerSource,
    lifecycle: ClientLifecycleMode,
) -> Result<RunningService<RoleClient, ClientConfig>, String> {
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
            handler()
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| e.to_string())
        }
        McpServerSource::Url(url) => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            handler()
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| e.to_string())
        }
    }
}
