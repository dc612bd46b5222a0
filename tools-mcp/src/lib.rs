//! MCP both ways for agent-tools, on `rmcp`.
//!
//! - [`McpImport`] connects to an MCP server (a child process over stdio, or streamable HTTP;
//!   the 2026-07-28 protocol, falling back to the 2025-11-25 `initialize` handshake) and
//!   registers its tools in a scope as raw definitions that validate their arguments and
//!   results against the server's full JSON Schema ([`FullSchema`]). They run through the whole
//!   pipeline like any other tool and appear in SDKs and Code Mode. `list_changed` is followed;
//!   cancellation is forwarded; every call has a timeout ([`codes::MCP_TIMEOUT`]); an answer
//!   over the size limit fails its call ([`codes::MCP_MESSAGE_TOO_LARGE`]); a dead server's tools
//!   fail with [`codes::MCP_SERVER_GONE`] until [`McpImport::reconnect`].
//! - [`list_tools`] connects the same way, lists a server's tools once (every page) and closes,
//!   importing nothing: the `tools-codegen` CLI renders a live server's catalog from it.
//! - [`McpServer`] serves what a scope sees over stdio or streamable HTTP, every call through
//!   [`ToolRuntime::execute`](tools_runtime::ToolRuntime::execute).
//! - Progress goes both ways: a served call whose request carries a `progressToken` sends each
//!   of its reports ([`ToolRunContext::progress`](tools_runtime::ToolRunContext::progress)) to
//!   the client as `notifications/progress` while it runs, and an imported tool's call turns the
//!   server's `notifications/progress` into reports of the local call, in the server's order and
//!   all before the result (see [`serve`] and [`import`]).
//! - MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663, as rmcp 3.11 speaks
//!   it): a tool whose definition is long-running
//!   ([`ToolDefinition::is_long_running`](tools_runtime::ToolDefinition::is_long_running)), or
//!   that [`McpServer::tasks`] names, is served as a task: its calls by a client that declares
//!   the extension answer at once with a task that `tasks/get` follows to its one result and
//!   `tasks/cancel` cancels ([`tasks`]); an imported tool whose server answers with a task
//!   awaits it by polling `tasks/get`, cancels it with `tasks/cancel`, and holds it to the
//!   call's timeout (see [`import`]). The import also speaks the tasks of the 2025-11-25 draft
//!   (the TypeScript SDK's experimental tasks, npm's server-everything's): a tool that declares
//!   `execution.taskSupport: "required"` (or `"optional"`, when
//!   [`ImportOptions::optional_tasks`] asks) is called task-augmented, its task followed by
//!   `tasks/get` and `notifications/tasks/status` (each new status message a progress report of
//!   the call), its result fetched with `tasks/result`, the same limits and cancellation
//!   holding. Which dialect a call speaks is what the server declares: the draft for a tool that
//!   declares task support so, SEP-2663 for a task the server answers with otherwise.
//! - Traces, as OpenTelemetry's MCP semantic conventions name them: an imported tool's
//!   `tools/call` runs in a client span `tools/call <tool>` under the importing call's
//!   `execute_tool` span, and a served `tools/call` in a server span `tools/call <tool>` holding
//!   the pipeline's `execute_tool <tool>` span. With the `otel` feature (an optional dependency
//!   on `tools-otel`; without it nothing of OpenTelemetry is compiled), trace context crosses in
//!   `_meta`, so both processes' spans are one trace (see [Traces](#traces)).
//! - Credentials for an HTTP server ([`auth`], [`oauth`], [`token_store`]): a bearer token and
//!   headers per source ([`McpSource::bearer`], [`McpSource::header`]), or OAuth 2.1 as the MCP
//!   authorization specification describes it ([`McpSource::oauth`]: protected resource and
//!   authorization server metadata, dynamic or pre-registered clients and client ID metadata
//!   documents, the authorization code with PKCE and the `resource` parameter, refresh, scope
//!   step-up on `403 insufficient_scope`, the client credentials grant). A server's `401` is
//!   [`codes::MCP_AUTH_REQUIRED`], a `403` or a failed authorization
//!   [`codes::MCP_AUTH_FAILED`], each saying in one line what the server's challenge asked for.
//!   No token is logged, put in a span, or shown by a `Debug` or an error.
//! - Both sides hold an incoming message to one limit, [`DEFAULT_MAX_MESSAGE_SIZE`] (16 MiB) by
//!   default on stdio and HTTP alike, and answer what they cannot read with a JSON-RPC error
//!   ([`wire`]).
//!
//! A scope served on loopback HTTP and imported into a second runtime:
//!
//! ```
//! use serde_json::json;
//! use tokio_util::sync::CancellationToken;
//! use tools_mcp::{HttpOptions, ImportOptions, McpImport, McpServer, McpSource};
//! use tools_runtime::{ToolCall, ToolRuntime, tool};
//!
//! /// Add two integers.
//! #[tool]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Serve a scope.
//! let served = ToolRuntime::new();
//! let plugin = served.scope();
//! let _add = plugin.register(add::definition()?)?;
//! let server = McpServer::new(&plugin, "calculator")?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let url = format!("http://{}/mcp", listener.local_addr()?);
//! let stop = CancellationToken::new();
//! tokio::spawn(server.serve_http(listener, HttpOptions::new(), stop.clone()));
//!
//! // Import it elsewhere, prefixed.
//! let runtime = ToolRuntime::new();
//! let import =
//!     McpImport::connect(runtime.scope(), McpSource::http(url), ImportOptions::new().prefix("calc_"))
//!         .await?;
//! assert_eq!(import.tool_names(), vec!["calc_add"]);
//! let result = runtime.execute(ToolCall::new("c1", "calc_add", json!({"a": 2, "b": 3}))).await;
//! assert_eq!(result.text(), "5");
//! let refused = runtime.execute(ToolCall::new("c2", "calc_add", json!({"a": "two"}))).await;
//! assert_eq!(refused.code(), Some("INVALID_ARGS"));
//! stop.cancel();
//! # Ok(()) }
//! ```
//!
//! # Identity: a resource server where each caller sees its own slice
//!
//! [`McpServer::bearer_auth`] makes the HTTP endpoint an OAuth 2.1 resource server ([`auth`]):
//! every request needs a bearer token that a [`TokenVerifier`] accepts (`JwtVerifier` checks
//! JWTs against the issuer's JWKS, feature `jwt`; [`IntrospectionVerifier`] asks the
//! authorization server, RFC 7662; or your own), and is made for the [`Principal`](tools_runtime::Principal) it gives
//! (subject, client, scopes, claims): on every call
//! ([`ToolCall::with_principal`](tools_runtime::ToolCall::with_principal)), so policy, guards,
//! approvals and bodies read it, and on the call's span as `user.id`. [`McpServer::tenants`]
//! gives each principal its scope: `tools/list` shows and `tools/call` runs that slice only.
//!
//! - `/.well-known/oauth-protected-resource` (and the same with the endpoint's path appended,
//!   RFC 9728) gives `resource`, `authorization_servers`, `scopes_supported`,
//!   `bearer_methods_supported`, with no token.
//! - No token: `401`, `WWW-Authenticate: Bearer resource_metadata="...", scope="..."`. A refused
//!   token: the same with `error="invalid_token"`. The verifier unreachable: `503`.
//! - A missing required scope, or a principal the tenant rule gives no scope: `403
//!   insufficient_scope`. A tool named by [`BearerAuth::require_scope`] called without its
//!   scope: `403` with `error="insufficient_scope", scope="<held> <needed>"`, the step-up
//!   challenge (the tool stays listed, so a client can learn it is there). The calls such a
//!   call makes, a Code Mode program's among them, are held to the tool's scope as well
//!   (`GUARD_DENIED`, ``insufficient_scope: `tool` needs ...``).
//! - Hostile input reaches nothing of the registry (no list, no call, no body): a token over
//!   [`BearerAuth::max_token_size`] (8 KiB) is refused by its length before it is parsed (hyper
//!   refuses a head over about 400 KB with `431`); `alg: none` and every HMAC algorithm are
//!   refused whatever the key set holds (no algorithm confusion with an RSA key); an unknown
//!   `kid`, another audience, another issuer, an expired token or one not valid yet (60 s of
//!   skew, at most 5 minutes) is refused; a flood of tokens naming unknown keys costs at most
//!   one key set fetch per `JwtVerifier::refresh_interval` (30 s). Each refusal is logged at
//!   `debug` (`warn` when the authorization server cannot be reached) with its stable code
//!   ([`TokenRefusal::code`]); the token never is.
//!
//! One registry served to two tenants, each with a tool of its own beside a shared one (the
//! verifier is a fixed table here; `examples/tenants.rs` runs the same and prints what each
//! sees):
//!
//! ```
//! use futures::future::BoxFuture;
//! use tokio_util::sync::CancellationToken;
//! use tools_mcp::{BearerAuth, HttpOptions, McpServer, TokenRefusal, TokenVerifier};
//! use tools_runtime::{Principal, ToolRuntime, tool};
//!
//! /// Search the shared index.
//! #[tool]
//! fn search(query: String) -> String {
//!     format!("results for {query}")
//! }
//!
//! /// Alice's reports.
//! #[tool]
//! fn reports() -> Vec<String> {
//!     vec!["q3".to_owned()]
//! }
//!
//! struct Table;
//! impl TokenVerifier for Table {
//!     fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenRefusal>> {
//!         let found = match token {
//!             "alice-token" => Ok(Principal::new("alice").with_scopes(["mcp"])),
//!             "bob-token" => Ok(Principal::new("bob").with_scopes(["mcp"])),
//!             _ => Err(TokenRefusal::Inactive),
//!         };
//!         Box::pin(std::future::ready(found))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = ToolRuntime::new();
//! let shared = runtime.scope();
//! let _search = shared.register(search::definition()?)?;
//! let alice = shared.agent(); // sees `search` and its own `reports`
//! let _reports = alice.register(reports::definition()?)?;
//! let bob = shared.agent(); // sees `search` only
//!
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let url = format!("http://{}/mcp", listener.local_addr()?);
//! let auth = BearerAuth::new(Table, url.clone())
//!     .authorization_server("https://auth.example.com")
//!     .required_scopes(["mcp"])
//!     .require_scope("reports", "reports:read"); // a step-up for this tool
//! let (a, b) = (alice.key(), bob.key());
//! let server = McpServer::new(&shared, "tenants")?
//!     .bearer_auth(auth)
//!     .tenants(move |p| match p.subject.as_str() {
//!         "alice" => Some(a),
//!         "bob" => Some(b),
//!         _ => None, // 403
//!     });
//! let stop = CancellationToken::new();
//! tokio::spawn(server.serve_http(listener, HttpOptions::new(), stop.clone()));
//!
//! // Without a token: the challenge that points a client at the metadata.
//! let refused = reqwest::Client::new().post(&url).body("{}").send().await?;
//! assert_eq!(refused.status(), 401);
//! let challenge = refused.headers()["www-authenticate"].to_str()?;
//! assert!(challenge.starts_with("Bearer resource_metadata=\"http://"));
//! stop.cancel();
//! # Ok(()) }
//! ```
//!
//! ## Credentials and OAuth
//!
//! A bearer token (from the environment, not a literal) and a header, sent with every request:
//!
//! ```no_run
//! use tools_mcp::{ImportOptions, McpImport, McpSource};
//! use tools_runtime::ToolRuntime;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let runtime = ToolRuntime::new();
//! let source = McpSource::http("http://127.0.0.1:8080/mcp")
//!     .bearer(std::env::var("SEARCH_TOKEN")?)
//!     .header("x-tenant", "acme");
//! match McpImport::connect(runtime.scope(), source, ImportOptions::new()).await {
//!     Ok(import) => println!("{:?}", import.tool_names()),
//!     // MCP_AUTH_REQUIRED: the MCP server http://127.0.0.1:8080/mcp requires authorization:
//!     // HTTP 401 Unauthorized, challenge Bearer (scope "search", resource metadata http://…)
//!     Err(e) => eprintln!("{}: {}", e.code(), e.report()),
//! }
//! # Ok(()) }
//! ```
//!
//! OAuth: [`oauth::OAuth`] with an [`oauth::Authorizer`], the person's step, which the
//! application implements ([`oauth::LoopbackAuthorizer`] prints the URL and takes the redirect
//! on `127.0.0.1`), and a [`token_store::TokenStore`] ([`token_store::MemoryTokenStore`] by
//! default, [`token_store::FileTokenStore`] to keep tokens between runs). The source authorizes
//! when the server first answers `401`, refreshes and steps up as the server asks, and shares
//! one authorization among the requests refused at once; `examples/oauth_loopback.rs` is a CLI
//! that does it, and the module doc of [`oauth`] an example. `scripts/conformance` runs the
//! official MCP conformance suite's OAuth client scenarios against `examples/conformance_client.rs`.
//!
//! Over stdio, `McpSource::stdio("npx", ["-y", "@modelcontextprotocol/server-everything"])`
//! starts a server as a child process, and [`McpServer::serve_stdio`] serves this process's
//! stdin and stdout; the `tools-mcp serve` binary of this crate is an example of the latter.
//!
// The chapters of this page: markdown files in `docs/`, part of the crate's package.
#![doc = include_str!("../docs/import.md")]
#![doc = include_str!("../docs/serve.md")]
#![doc = include_str!("../docs/auth.md")]
#![doc = include_str!("../docs/traces.md")]
#![doc = include_str!("../docs/tests.md")]

pub mod annotations;
pub mod auth;
mod child;
mod credential;
pub mod error;
pub mod import;
pub mod import_auth;
#[cfg(feature = "jwt")]
mod jwt;
pub mod oauth;
mod progress;
pub mod schema;
pub mod serve;
mod serve_auth;
mod serve_http;
pub mod tasks;
mod tasks_draft;
pub mod token_store;
mod trace;
pub mod wire;
#[cfg(feature = "jwt")]
pub use jwt::JwtVerifier;

pub use annotations::AnnotationPolicy;
pub use auth::{BearerAuth, IntrospectionVerifier, TokenRefusal, TokenVerifier};
pub use error::{McpError, codes};
pub use import::{
    ImportOptions, McpImport, McpSource, Protocol, Skipped, list_tools, text_output_schema,
};
pub use import_auth::{Challenge, HttpAuth, Secret};
pub use schema::FullSchema;
pub use serve::{HttpOptions, McpServer};
pub use tasks::TaskOptions;
pub use wire::DEFAULT_MAX_MESSAGE_SIZE;

/// The guard of `m`, also when a thread panicked while holding it (the data is kept consistent
/// by every writer).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
