//! The errors of `tools-mcp`, each with a stable code.
//!
//! An [`McpError`] says what failed and where; the error underneath (an I/O error, rmcp's
//! handshake or request error, a registry error, or one of this module's enums where several
//! kinds meet: [`SpawnError`], [`ConnectError`], [`RequestError`], [`ServeError`]) is its
//! [`source`](std::error::Error::source). [`report`] (or [`McpError::report`]) joins an error
//! and its sources with `": "` for a message a person or a model reads; [`report_uncut`] keeps
//! each source's words whole.

use std::time::Duration;

use rmcp::service::{ClientInitializeError, ServerInitializeError};
use thiserror::Error;

use tools_schema::excerpt::cut;

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
    /// [`ImportOptions::tool_timeout`](crate::ImportOptions::tool_timeout)), or, for a timeout
    /// that restarts at each progress report
    /// ([`ImportOptions::timeout_resets_on_progress`](crate::ImportOptions::timeout_resets_on_progress)),
    /// reported no progress for the timeout or ran past its maximum total time (the message says
    /// which); the call was cancelled and the server told so.
    pub const MCP_TIMEOUT: &str = "MCP_TIMEOUT";
    /// A served HTTP request's bearer token was refused ([`TokenRefusal`](super::TokenRefusal)
    /// says why; each refusal has a code of its own, `MCP_TOKEN_*`): answered `401` with the
    /// `WWW-Authenticate: Bearer` challenge, `error="invalid_token"`.
    pub const MCP_UNAUTHORIZED: &str = "MCP_UNAUTHORIZED";
    /// A served request's principal lacks the scope the server or the tool needs, or maps to no
    /// slice of the registry: answered `403` with `error="insufficient_scope"` and the scope.
    pub const MCP_INSUFFICIENT_SCOPE: &str = "MCP_INSUFFICIENT_SCOPE";
    /// The HTTP server answered `401 Unauthorized`: it wants credentials the source does not
    /// have (none, or a token it rejects and OAuth could not replace). The message says what
    /// its `WWW-Authenticate` challenge asked for: scheme, scopes, resource metadata URL.
    pub const MCP_AUTH_REQUIRED: &str = "MCP_AUTH_REQUIRED";
    /// The HTTP server answered `403 Forbidden` (a token without the scope it needs, after any
    /// step-up), or an OAuth authorization could not be completed (the message says why).
    pub const MCP_AUTH_FAILED: &str = "MCP_AUTH_FAILED";
    /// A private key for `private_key_jwt` client authentication is not one that can sign
    /// (`PrivateKeyError`, feature `jwt`): not PEM, not a private key, or not of the kind the
    /// algorithm needs; the message says which, and shows none of the key.
    pub const MCP_AUTH_BAD_KEY: &str = "MCP_AUTH_BAD_KEY";
}

/// Why connecting to, importing from or serving over MCP failed.
///
/// Each variant's message says what failed and where (which server, command, method or tool);
/// the error underneath, when there is one, is its [`source`](std::error::Error::source), not a
/// part of its message. [`report`] renders the whole chain in one line, as
/// [`McpImport::last_refresh_error`](crate::McpImport::last_refresh_error) does.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum McpError {
    /// The command line of a stdio server is empty or could not be started.
    #[error("cannot start the MCP server `{command}`")]
    Spawn {
        /// The command as given.
        command: String,
        /// Why.
        source: SpawnError,
    },
    /// The connection could not be established (handshake, transport).
    #[error("cannot connect to the MCP server {server}")]
    Connect {
        /// The server (command or URL).
        server: String,
        /// Why.
        source: ConnectError,
    },
    /// A request to the server failed.
    #[error("the MCP server {server} failed `{method}`")]
    Request {
        /// The server (command or URL).
        server: String,
        /// The MCP method.
        method: &'static str,
        /// Why.
        source: RequestError,
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
        "the naming rule maps MCP tool `{remote}` to `{local}`, which is not a valid tool name"
    )]
    InvalidName {
        /// The server's name.
        remote: String,
        /// The mapped name.
        local: String,
        /// Why it is invalid.
        source: tools_schema::NameError,
    },
    /// Registering into the scope failed.
    #[error("cannot register MCP tool `{name}`")]
    Register {
        /// The local name.
        name: String,
        /// Why.
        source: tools_runtime::error::RegistryError,
    },
    /// Binding or serving a listener failed.
    #[error("MCP server I/O failed")]
    Io(#[from] std::io::Error),
    /// The MCP service could not start, or stopped with an error.
    #[error("the MCP service failed")]
    Service(#[source] ServeError),
    /// The HTTP server answered `401` and the source could not answer its challenge
    /// ([`codes::MCP_AUTH_REQUIRED`]).
    #[error("the MCP server {server} requires authorization")]
    AuthRequired {
        /// The server's URL.
        server: String,
        /// What it asked for (and why OAuth could not give it).
        source: crate::import_auth::AuthError,
    },
    /// The HTTP server answered `403`, or authorizing failed ([`codes::MCP_AUTH_FAILED`]).
    #[error("authorization to the MCP server {server} failed")]
    AuthFailed {
        /// The server's URL.
        server: String,
        /// What the server asked for, and why it could not be given.
        source: crate::import_auth::AuthError,
    },
    /// The import's options contradict each other (a maximum total time shorter than the
    /// timeout it bounds, for instance).
    #[error("invalid import options: {reason}")]
    InvalidOptions {
        /// What is wrong, naming the options.
        reason: String,
    },
}

/// Why a stdio server could not be started ([`McpError::Spawn`]).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The command line has no program.
    #[error("the command line is empty")]
    EmptyCommandLine,
    /// The source is not a stdio server.
    #[error("not a stdio server")]
    NotStdio,
    /// The program could not be started.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The child's stdin or stdout was not piped.
    #[error("its standard streams were not piped")]
    NotPiped,
}

/// Why the connection could not be established ([`McpError::Connect`]).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// Connecting took longer than
    /// [`ImportOptions::connect_timeout`](crate::ImportOptions::connect_timeout).
    #[error("no answer within {timeout:?} (ImportOptions::connect_timeout)")]
    Timeout {
        /// The bound.
        timeout: Duration,
    },
    /// The `server/discover` probe could not be sent to a stdio server.
    #[error("cannot send server/discover")]
    ProbeSend(#[source] std::io::Error),
    /// A stdio server closed its output before it answered the `server/discover` probe.
    #[error("the server closed its output during server/discover")]
    ProbeClosed,
    /// The handshake (`initialize` or `server/discover`) failed.
    #[error(transparent)]
    Handshake(Box<ClientInitializeError>),
    /// Over HTTP under [`Protocol::Auto`](crate::Protocol::Auto): `server/discover` failed, and
    /// then the `initialize` handshake (the source) failed too.
    #[error("server/discover failed ({}), then initialize", cut(&.discover.to_string()))]
    Fallback {
        /// Why `server/discover` failed.
        discover: Box<ClientInitializeError>,
        /// Why `initialize` failed.
        #[source]
        initialize: Box<ClientInitializeError>,
    },
}

/// Why a request to the server failed ([`McpError::Request`]).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The server is not connected (it exited, or the connection broke).
    #[error("the server is not connected")]
    NotConnected,
    /// A page of the answer did not come within
    /// [`ImportOptions::call_timeout`](crate::ImportOptions::call_timeout).
    #[error("no page within {timeout:?} (ImportOptions::call_timeout)")]
    Timeout {
        /// The bound.
        timeout: Duration,
    },
    /// The request failed: an error answer, or the transport.
    #[error(transparent)]
    Service(Box<rmcp::service::ServiceError>),
    /// The server lists more than [`MAX_TOOLS`](crate::import::MAX_TOOLS) tools.
    #[error(
        "the server lists more than {} tools",
        crate::import::limits::MAX_TOOLS
    )]
    TooManyTools,
    /// The server's `tools/list` did not end within [`MAX_PAGES`](crate::import::MAX_PAGES)
    /// pages.
    #[error(
        "the server's tools/list did not end within {} pages",
        crate::import::limits::MAX_PAGES
    )]
    TooManyPages,
}

/// Why the MCP service could not start or stopped ([`McpError::Service`]).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServeError {
    /// [`McpServer::new`](crate::McpServer::new) was called outside a tokio runtime.
    #[error("McpServer::new needs a tokio runtime")]
    NoRuntime(#[source] tokio::runtime::TryCurrentError),
    /// The server could not follow the scope's changes.
    #[error("cannot follow the scope's changes")]
    Listen(#[source] tools_runtime::error::RegistryError),
    /// The server could not register the guard that holds each tool's OAuth scope
    /// ([`BearerAuth::require_scope`](crate::BearerAuth::require_scope)) on every call.
    #[error("cannot register the guard of the tools' scopes")]
    Guard(#[source] tools_runtime::error::RegistryError),
    /// The client's handshake failed.
    #[error(transparent)]
    Initialize(Box<ServerInitializeError>),
    /// The service's task ended abnormally.
    #[error(transparent)]
    Task(#[from] tokio::task::JoinError),
}

/// Why a bearer token was refused (a [`TokenVerifier`](crate::auth::TokenVerifier)'s answer).
/// Each has a stable [`code`](TokenRefusal::code); the token itself is in none of them.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TokenRefusal {
    /// The request has no `Authorization: Bearer` credential.
    #[error("no bearer token")]
    Missing,
    /// The token is longer than the limit; it was not parsed.
    #[error("the token is {size} bytes, over the limit of {limit}")]
    TooLarge {
        /// Its length.
        size: usize,
        /// The limit ([`BearerAuth::max_token_size`](crate::auth::BearerAuth::max_token_size)).
        limit: usize,
    },
    /// The token is not of the verifier's form (not a JWT, bad base64, unreadable claims).
    #[error("the token is malformed")]
    Malformed(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The token's algorithm is not accepted (`none`, an HMAC algorithm, or one that is not the
    /// key's).
    #[error("the token's algorithm {alg} is not accepted")]
    Algorithm {
        /// The `alg` of its header.
        alg: String,
    },
    /// No key of the issuer's key set has the token's `kid` (also after a refresh).
    #[error("no key of the issuer's key set matches the token (kid {kid:?})")]
    UnknownKey {
        /// The `kid` of its header.
        kid: Option<String>,
    },
    /// The signature does not verify.
    #[error("the token's signature does not verify")]
    Signature(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The token has expired (`exp`, past the allowed skew).
    #[error("the token has expired")]
    Expired,
    /// The token is not valid yet (`nbf`, past the allowed skew).
    #[error("the token is not valid yet")]
    NotYetValid,
    /// The token's issuer is not the one expected.
    #[error("the token's issuer is not the expected one")]
    Issuer,
    /// The token is not for this resource (its `aud` does not name it).
    #[error("the token is not for this resource (audience)")]
    Audience,
    /// The authorization server says the token is not active (introspection).
    #[error("the token is not active")]
    Inactive,
    /// A claim the principal needs is missing or of the wrong type.
    #[error("the token's claims are unusable: {reason}")]
    Claims {
        /// Which claim, and what is wrong.
        reason: String,
    },
    /// The verifier could not reach the authorization server (key set or introspection); the
    /// token may be good. Answered `503`.
    #[error("the authorization server could not be reached")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl TokenRefusal {
    /// The stable code of this refusal.
    pub fn code(&self) -> &'static str {
        match self {
            TokenRefusal::Missing => "MCP_TOKEN_MISSING",
            TokenRefusal::TooLarge { .. } => "MCP_TOKEN_TOO_LARGE",
            TokenRefusal::Malformed(_) => "MCP_TOKEN_MALFORMED",
            TokenRefusal::Algorithm { .. } => "MCP_TOKEN_ALGORITHM",
            TokenRefusal::UnknownKey { .. } => "MCP_TOKEN_UNKNOWN_KEY",
            TokenRefusal::Signature(_) => "MCP_TOKEN_SIGNATURE",
            TokenRefusal::Expired => "MCP_TOKEN_EXPIRED",
            TokenRefusal::NotYetValid => "MCP_TOKEN_NOT_YET_VALID",
            TokenRefusal::Issuer => "MCP_TOKEN_ISSUER",
            TokenRefusal::Audience => "MCP_TOKEN_AUDIENCE",
            TokenRefusal::Inactive => "MCP_TOKEN_INACTIVE",
            TokenRefusal::Claims { .. } => "MCP_TOKEN_CLAIMS",
            TokenRefusal::Unavailable(_) => "MCP_AUTH_UNAVAILABLE",
        }
    }
}

/// `error` and its sources, joined with `": "`: the whole story of a failure in one line. A
/// source whose words its error already includes is not repeated, and each source's words are
/// cut to 200 characters (a server's own words may be long).
pub fn report(error: &(dyn std::error::Error + 'static)) -> String {
    join(error, |text| cut(text).into_owned())
}

/// [`report`] with every source's words whole: for a person at a terminal (the codegen CLI),
/// where the cause of a transport error comes after rmcp's long type names.
pub fn report_uncut(error: &(dyn std::error::Error + 'static)) -> String {
    join(error, str::to_owned)
}

fn join(error: &(dyn std::error::Error + 'static), words: fn(&str) -> String) -> String {
    let mut out = error.to_string();
    let mut previous = out.clone();
    let mut next = error.source();
    while let Some(source) = next {
        let text = source.to_string();
        if !text.is_empty() && !previous.contains(&text) {
            out.push_str(": ");
            out.push_str(&words(&text));
        }
        previous = text;
        next = source.source();
    }
    out
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
            McpError::InvalidOptions { .. } => "MCP_INVALID_OPTIONS",
            McpError::AuthRequired { .. } => codes::MCP_AUTH_REQUIRED,
            McpError::AuthFailed { .. } => codes::MCP_AUTH_FAILED,
        }
    }

    /// This error and its sources in one line (see [`report`]).
    pub fn report(&self) -> String {
        report(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_message_says_where_and_the_report_says_why() {
        let error = McpError::Spawn {
            command: "`nope --stdio`".to_owned(),
            source: SpawnError::Io(std::io::Error::from(std::io::ErrorKind::NotFound)),
        };
        assert_eq!(error.code(), "MCP_SPAWN_FAILED");
        assert_eq!(
            error.to_string(),
            "cannot start the MCP server ``nope --stdio``"
        );
        let source = std::error::Error::source(&error).unwrap();
        assert!(source.downcast_ref::<SpawnError>().is_some());
        assert_eq!(
            error.report(),
            format!(
                "cannot start the MCP server ``nope --stdio``: {}",
                std::io::Error::from(std::io::ErrorKind::NotFound)
            )
        );

        let error = McpError::Request {
            server: "http://127.0.0.1:1/mcp".to_owned(),
            method: "tools/list",
            source: RequestError::Timeout {
                timeout: Duration::from_secs(2),
            },
        };
        assert_eq!(
            report(&error),
            "the MCP server http://127.0.0.1:1/mcp failed `tools/list`: no page within 2s \
             (ImportOptions::call_timeout)"
        );
    }

    /// An error that shows its source's words in its own message, as some of rmcp's do.
    #[derive(Debug, Error)]
    #[error("transport error: {0}")]
    struct Repeats(#[source] std::io::Error);

    #[test]
    fn a_source_already_in_the_message_is_not_repeated_and_long_words_are_cut() {
        let repeats = Repeats(std::io::Error::other("broken pipe"));
        assert_eq!(report(&repeats), "transport error: broken pipe");

        let long = "x".repeat(300);
        let error = McpError::Io(std::io::Error::other(long));
        let text = report(&error);
        assert!(text.starts_with("MCP server I/O failed: xxx"), "{text}");
        assert!(text.ends_with("… (100 more bytes)"), "{text}");
    }

    #[test]
    fn errors_cross_threads_and_stay_small() {
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<McpError>();
        assert!(std::mem::size_of::<McpError>() <= 128);
    }
}
