//! MCP both ways for agent-tools, on `rmcp`.
//!
//! - [`McpImport`] connects to an MCP server (a child process over stdio, or streamable HTTP;
//!   the 2026-07-28 protocol with a fallback to the 2025-11-25 `initialize` handshake) and
//!   registers its tools in a scope. They run through the whole pipeline like any other tool
//!   and appear in SDKs and Code Mode.
//! - [`serve`] exposes a scope's visible tools as an MCP server.
//!
//! ```no_run
//! use tools_mcp::{ImportOptions, McpImport, McpSource};
//! use tools_runtime::{ToolCall, ToolRuntime};
//! use serde_json::json;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = ToolRuntime::new();
//! let source = McpSource::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"]);
//! let import = McpImport::connect(runtime.scope(), source, ImportOptions::new().prefix("ev_")).await?;
//! assert!(import.tool_names().contains(&"ev_echo".to_owned()));
//! let result = runtime.execute(ToolCall::new("c1", "ev_echo", json!({"message": "hi"}))).await;
//! assert_eq!(result.text(), "Echo: hi");
//! # Ok(()) }
//! ```

pub mod error;
pub mod import;
pub mod schema;
pub mod serve;

pub use error::{McpError, codes};
pub use import::{ImportOptions, McpImport, McpSource, Protocol, Skipped, text_output_schema};
pub use schema::FullSchema;
pub use serve::{HttpOptions, McpServer};
