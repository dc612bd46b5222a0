//! Reading a catalog from a live MCP server (behind the `mcp` feature, off by default): the
//! CLI's `--mcp-stdio` and `--mcp-url`.
//!
//! [`read_catalog`] lists the server's tools with `tools-mcp`'s client
//! ([`tools_mcp::list_tools`]: the importer's own connection and listing, every page) and writes
//! them as a `tools/list` result, `{"tools": [...]}`, which the CLI then reads exactly as it reads
//! a catalog file. The tools are taken as the server gave them: a name outside MCP's rule or a
//! schema the SDK cannot type is a warning of the CLI, as for a file, not a reason to leave a tool
//! out.
//!
//! Under [`Protocol::Auto`] the client probes for 2026-07-28 (`server/discover`) for at most
//! [`tools_mcp::import::DEFAULT_PROBE_TIMEOUT`] (5 seconds), then uses the 2025-11-25
//! `initialize` handshake (over stdio on the same process, over HTTP on a fresh connection);
//! [`Protocol::Initialize`] and [`Protocol::Discover`] pin one generation (the CLI's
//! `--mcp-protocol`). Connecting and listing take at most [`TIMEOUT`] in all.

use std::time::Duration;

use serde::Serialize;
use tools_mcp::{ImportOptions, McpError, McpSource, Protocol};

/// How long connecting and listing may take in all.
pub const TIMEOUT: Duration = Duration::from_secs(120);

/// Why a catalog could not be read from a server. The CLI's code for each is `MCP_LIST_FAILED`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpListError {
    /// The server could not be started, reached or listed: the message is the error and its
    /// sources in one line ([`tools_mcp::error::report_uncut`]).
    #[error("{}", tools_mcp::error::report_uncut(.0))]
    Mcp(#[source] McpError),
    /// A credential flag (`--mcp-bearer-env`, `--mcp-header-env`) could not be used: the
    /// variable is not set, or the flag is not `NAME=VAR`. The message names the flag and the
    /// variable, never a value.
    #[error("{flag} {given}: {why}")]
    Credential {
        /// The flag.
        flag: &'static str,
        /// What it was given (a variable's name, or `NAME=VAR`).
        given: String,
        /// What is wrong.
        why: &'static str,
    },
    /// Connecting and listing took longer than [`TIMEOUT`].
    #[error("the MCP server {server} gave no complete tools/list within {timeout:?}")]
    Timeout {
        /// The server, as [`McpSource::describe`] names it.
        server: String,
        /// The bound.
        timeout: Duration,
    },
    /// The async runtime that speaks to the server could not be started.
    #[error("cannot start an async runtime to reach the MCP server: {0}")]
    Runtime(#[source] std::io::Error),
    /// The listed tools could not be written as JSON text.
    #[error("cannot write the MCP server's tools as JSON: {0}")]
    Json(#[source] serde_json::Error),
}

/// `source` with the credentials of the CLI's `--mcp-bearer-env VAR` and `--mcp-header-env
/// NAME=VAR` flags, each value read from the environment through `env` (the variable's value, if
/// set and Unicode).
pub fn with_credentials(
    mut source: McpSource,
    bearer_env: Option<&str>,
    header_env: &[String],
    env: impl Fn(&str) -> Option<String>,
) -> Result<McpSource, McpListError> {
    let unset = |flag, var: &str| McpListError::Credential {
        flag,
        given: var.to_owned(),
        why: "the environment variable is not set (or not Unicode)",
    };
    if let Some(var) = bearer_env {
        let token = env(var).ok_or_else(|| unset("--mcp-bearer-env", var))?;
        source = source.bearer(token);
    }
    for given in header_env {
        let Some((name, var)) = given
            .split_once('=')
            .filter(|(name, var)| !name.is_empty() && !var.is_empty())
        else {
            return Err(McpListError::Credential {
                flag: "--mcp-header-env",
                given: given.clone(),
                why: "expected NAME=VAR (a header's name and an environment variable's)",
            });
        };
        let value = env(var).ok_or_else(|| unset("--mcp-header-env", given))?;
        source = source.header(name, value);
    }
    Ok(source)
}

/// The shape of a `tools/list` result.
#[derive(Serialize)]
struct ToolsList<T> {
    tools: T,
}

/// Lists every tool of the server (all pages) with the protocol generation `protocol` and
/// returns `{"tools": [...]}` as JSON text. Blocks; it runs its own async runtime.
pub fn read_catalog(source: &McpSource, protocol: Protocol) -> Result<String, McpListError> {
    // The client's own bounds lie past the CLI's, so that the CLI's is the one a slow server
    // meets (it names no option of the library).
    let past = TIMEOUT + Duration::from_secs(1);
    let options = ImportOptions::new()
        .protocol(protocol)
        .connect_timeout(past)
        .call_timeout(past);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(McpListError::Runtime)?;
    // The timer is made inside the runtime, which it needs.
    let listed = runtime.block_on(async {
        tokio::time::timeout(TIMEOUT, tools_mcp::list_tools(source, &options)).await
    });
    let tools = listed
        .map_err(|_| McpListError::Timeout {
            server: source.describe(),
            timeout: TIMEOUT,
        })?
        .map_err(McpListError::Mcp)?;
    serde_json::to_string(&ToolsList { tools }).map_err(McpListError::Json)
}
