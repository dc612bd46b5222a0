//! The errors of `tools-mcp`, each with a stable code.

use thiserror::Error;

/// Stable codes of the failures `tools-mcp` gives imported tools' calls.
pub mod codes {
    /// The server answered `tools/call` with a JSON-RPC error or an `isError` result.
    pub const MCP_TOOL_ERROR: &str = "MCP_TOOL_ERROR";
    /// The server is not connected (it exited, or the connection broke); reconnect it.
    pub const MCP_SERVER_GONE: &str = "MCP_SERVER_GONE";
    /// The server's result does not match its own output schema, lacks `structuredContent`, or
    /// is not a readable MCP message.
    pub const MCP_INVALID_RESULT: &str = "MCP_INVALID_RESULT";
    /// The server's answer to the call is larger than the import's limit of one message
    /// ([`ImportOptions::max_message_size`](crate::ImportOptions::max_message_size)); the
    /// message names its size and the limit.
    pub const MCP_MESSAGE_TOO_LARGE: &str = "MCP_MESSAGE_TOO_LARGE";
    /// The server did not answer the call within its timeout
    /// ([`ImportOptions::call_timeout`](crate::ImportOptions::call_timeout),
    /// [`ImportOptions::tool_timeout`](crate::ImportOptions::tool_timeout)); the call was
    /// cancelled and the server told so.
    pub const MCP_TIMEOUT: &str = "MCP_TIMEOUT";
}

/// Why connecting to, importing from or serving over MCP failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum McpError {
    /// The command line of a stdio server is empty or could not be started.
    #[error("cannot start the MCP server `{command}`: {reason}")]
    Spawn {
        /// The command as given.
        command: String,
        /// Why.
        reason: String,
    },
    /// The connection could not be established (handshake, transport).
    #[error("cannot connect to the MCP server {server}: {reason}")]
    Connect {
        /// The server (command or URL).
        server: String,
        /// Why.
        reason: String,
    },
    /// A request to the server failed.
    #[error("the MCP server {server} failed `{method}`: {reason}")]
    Request {
        /// The server (command or URL).
        server: String,
        /// The MCP method.
        method: &'static str,
        /// Why.
        reason: String,
    },
    /// Two of the server's tools map to one local name, or a mapped name is already taken in the
    /// scope.
    #[error("MCP tool name collision: {details}")]
    NameCollision {
        /// Which names collide, and where.
        details: String,
    },
    /// The naming rule produced a name that is not a valid tool name.
    #[error(
        "the naming rule maps MCP tool `{remote}` to `{local}`, which is not a valid tool name: {reason}"
    )]
    InvalidName {
        /// The server's name.
        remote: String,
        /// The mapped name.
        local: String,
        /// Why it is invalid.
        reason: String,
    },
    /// Registering into the scope failed.
    #[error("cannot register MCP tool `{name}`: {reason}")]
    Register {
        /// The local name.
        name: String,
        /// Why.
        reason: String,
    },
    /// Binding or serving a listener failed.
    #[error("MCP server I/O failed: {0}")]
    Io(#[from] std::io::Error),
    /// The MCP service stopped with an error.
    #[error("the MCP service failed: {0}")]
    Service(String),
}

impl McpError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            McpError::Spawn { .. } => "MCP_SPAWN_FAILED",
            McpError::Connect { .. } => "MCP_CONNECT_FAILED",
            McpError::Request { .. } => "MCP_REQUEST_FAILED",
            McpError::NameCollision { .. } => "MCP_NAME_COLLISION",
            McpError::InvalidName { .. } => "MCP_INVALID_NAME",
            McpError::Register { .. } => "MCP_REGISTER_FAILED",
            McpError::Io(_) => "MCP_IO",
            McpError::Service(_) => "MCP_SERVICE_FAILED",
        }
    }
}
