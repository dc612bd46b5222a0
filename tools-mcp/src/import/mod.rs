//! Importing an MCP server's tools into a scope.
//!
//! [`McpImport::connect`] starts or reaches a server ([`McpSource`]), lists its tools (every
//! page) and registers each one in the scope it is given as a raw definition:
//!
//! - the input schema is published as the server gave it and enforced by the tool itself
//!   against the full JSON Schema ([`FullSchema`]), with path-qualified messages;
//! - a tool with an `outputSchema` returns the result's `structuredContent`, checked against
//!   that schema ([`Output::tool_validated`]);
//! - a tool without one returns a string: the text blocks of the result joined with newlines,
//!   any other block written as a bracketed note (`[image image/png]`, `[audio audio/wav]`,
//!   `[resource URI]`, `[resource link URI]`), the output schema being [`text_output_schema`].
//!
//! A call is forwarded as `tools/call`; its cancellation token cancels the request (the server
//! receives `notifications/cancelled`). A JSON-RPC error or an `isError` result becomes a
//! failure with the server's own words (code [`codes::MCP_TOOL_ERROR`]; an `isError` text that
//! begins `Error: ` loses that prefix, which the pipeline's failure text adds once). When the
//! server has gone (exited, connection broken), calls fail with [`codes::MCP_SERVER_GONE`] until
//! [`McpImport::reconnect`] brings it back.
//!
//! Every call has a timeout: the tool's own ([`ImportOptions::tool_timeout`]) or the import's
//! ([`ImportOptions::call_timeout`], 60 seconds by default, as the TypeScript SDK's requests). The
//! definition declares it ([`ToolDefinition::timeout`]); the call enforces it itself, cancels the
//! request (the server is told) and fails with [`codes::MCP_TIMEOUT`]. Each `tools/list` page is
//! held to the import's timeout too.
//!
//! Progress: every `tools/call` carries a progress token (rmcp puts one on each request), and the
//! server's `notifications/progress` for it become progress reports of the local call
//! ([`ToolRunContext::progress`]): the call's own sink
//! ([`ToolCall::with_progress`](tools_runtime::ToolCall::with_progress)) and the progress
//! listeners of its scopes ([`Scope::on_progress`]) see them in the order the server sent them,
//! every one the server sent before its answer arriving before the call's result. A report the
//! pipeline refuses (a number that is not finite, or not above the last report's) is dropped
//! with a `tracing` warning; one for a token no call in flight has is ignored; a call holds at
//! most 256 unread reports (one beyond is dropped with a warning).
//!
//! The call's timeout bounds the whole call, unless it restarts on progress
//! ([`ImportOptions::timeout_resets_on_progress`] for every tool,
//! [`ImportOptions::tool_timeout_resets_on_progress`] for one): then each report the local call
//! takes restarts it, and a maximum total time still bounds the call. A call that goes quiet
//! for the timeout fails with [`codes::MCP_TIMEOUT`], "reported no progress for N ms"; one
//! past its maximum total time with "maximum total time of N ms"; the server is told
//! (`notifications/cancelled`) either way. The definition declares both
//! ([`ToolDefinition::timeout_max_total`]), so the runtime's own timeout wrapper, if installed,
//! agrees.
//!
//! Tasks come in two dialects, and the import speaks the one the server declares:
//!
//! - **The 2025-11-25 draft** (the TypeScript SDK's experimental tasks; npm's server-everything
//!   speaks it; the crate's `tasks_draft` module). A tool that declares
//!   `execution.taskSupport: "required"` in `tools/list` is called as a task, one that declares
//!   `"optional"` only when the options ask ([`ImportOptions::optional_tasks`],
//!   [`ImportOptions::tool_optional_task`]), one that declares `"forbidden"` (or nothing) never.
//!   The imported definition of a tool called as a task is long-running
//!   ([`ToolDefinition::is_long_running`]). Its `tools/call` carries `task` (`{"ttl": ms}`, the
//!   longest the call may wait: its maximum total time, else its timeout), and the server answers
//!   with the task. The call then polls `tasks/get` at the interval the task suggests
//!   (`pollInterval`), and takes the server's `notifications/tasks/status` for the task as they
//!   come (and its `notifications/progress` for the request's token, which go on after the
//!   answer); once the task is `completed` it fetches the result with `tasks/result`. Each new
//!   `statusMessage` of a working task becomes a progress report of the local call, numbered 1,
//!   2, ... with the message, until the server sends `notifications/progress` for the call: then
//!   only those are reports. Over HTTP the draft's `execution` is seen in a `tools/list` answer
//!   that comes as an SSE event or as a plain JSON body alike (the import's HTTP client posts
//!   `tools/list` itself, as rmcp's client reads a JSON body without it).
//! - **SEP-2663** (the `io.modelcontextprotocol/tasks` extension, as rmcp 3.11 speaks it): the
//!   import declares the extension, so a server may answer any other `tools/call` with a task
//!   (`CreateTaskResult`) instead of its result. The call then polls `tasks/get` until the task
//!   ends; `completed` carries the result inline. The server's `notifications/progress` reach
//!   the call only until the task is created; SEP-2663's `notifications/tasks` are not listened
//!   for (rmcp 3.11 cannot route them on a 2026-07-28 connection), polling is the one way.
//!
//! Either way: the interval is held to 50 ms .. 5 s (500 ms without one); the result is read as
//! a `tools/call` answer is; `failed` (with the server's error or status message) and a task the
//! server `cancelled` fail with [`codes::MCP_TOOL_ERROR`]; a task that asks for input
//! (`input_required`) fails the same way, as an imported tool has no one to ask, and is
//! cancelled. The call's limits go on counting from the call's start; a newer state of the task
//! (its `lastUpdatedAt`) counts as progress for a timeout that restarts on it. Leaving before
//! the end (the call cancelled, a limit reached, the future dropped) sends `tasks/cancel`; a
//! timeout ([`codes::MCP_TIMEOUT`]) says the call ran as a task and that the task was cancelled.
//! A call that leaves while its `tools/call` is still unanswered, on a server that declares the
//! extension or for a task-augmented call, waits up to a second for the answer before it sends
//! `notifications/cancelled`: the server may have made a task before it heard, and that task
//! (which outlives its request, and whose answer a 2026-07-28 HTTP cancellation would drop with
//! the stream) gets `tasks/cancel` instead.
//!
//! Traces: each `tools/call` runs in a client span `tools/call <tool>` (the server's name of the
//! tool; OpenTelemetry's MCP conventions' attributes, see the crate's `trace` module), the child
//! of the importing call's `execute_tool` span, with `error.type` and the ERROR status when the
//! call fails (`tool_error` for an `isError` result or a failed task, a JSON-RPC error's code,
//! otherwise the failure's code). With the feature `otel`, the request carries that span's
//! trace context in its `_meta`, `traceparent` and, when not empty, `tracestate`, where the MCP
//! 2026-07-28 revision places W3C trace context (SEP-414), so a server that reads it (ours
//! does) puts its spans in the caller's trace, under the client span. Without a valid context
//! (no OpenTelemetry layer) nothing is added.
//!
//! An answer over the limit of one message ([`ImportOptions::max_message_size`],
//! [`DEFAULT_MAX_MESSAGE_SIZE`] by default, on stdio and HTTP alike) is read past without being
//! kept and fails the call it answers with [`codes::MCP_MESSAGE_TOO_LARGE`], naming its size and
//! the limit; one that is not a readable MCP message fails it with [`codes::MCP_INVALID_RESULT`].
//!
//! Connecting under [`Protocol::Auto`] probes for 2026-07-28 with `server/discover` and gives the
//! probe its own short bound ([`ImportOptions::probe_timeout`], 5 seconds by default): a server
//! that refuses it, or stays silent that long, is spoken to with the 2025-11-25 `initialize`
//! handshake (over stdio on the same process, whose late answer to the probe is dropped; over
//! HTTP on a fresh connection). The whole of connecting is bounded by
//! [`ImportOptions::connect_timeout`].
//!
//! `notifications/tools/list_changed` (or, on a 2026-07-28 connection, the same notification on
//! a `subscriptions/listen` stream) makes the import list again: new tools are registered,
//! changed ones replaced (removed, then registered again under the same name), vanished ones
//! removed.
//!
//! [`list_tools`] connects and lists the same way, once, and gives the tools as the server listed
//! them without importing anything (what `tools-codegen --mcp-stdio`/`--mcp-url` renders).
//!
//! # Shutdown
//!
//! A stdio server is stopped as the MCP specification's lifecycle says for stdio: when the
//! connection ends ([`McpImport::close`], [`McpImport::reconnect`], the import dropped, the
//! async runtime it runs on shut down, a connect that failed or timed out, or the server's own
//! end of the connection closed) its stdin is closed, and it has
//! [`ImportOptions::exit_timeout`] ([`DEFAULT_EXIT_TIMEOUT`], 3 seconds) to exit; then it is
//! sent `SIGTERM` and has [`ImportOptions::terminate_timeout`] ([`DEFAULT_TERMINATE_TIMEOUT`],
//! 2 seconds) more; then `SIGKILL`. Its process is reaped in every case, by a thread of its own
//! that needs no async runtime, so a server outlives neither its bounds nor a runtime shut
//! down under it, and leaves no zombie. [`McpImport::close`], [`McpImport::reconnect`] and
//! [`list_tools`] wait for the process to be gone; a drop does not wait. On Linux a server
//! still running when this process ends is killed by the kernel (`PR_SET_PDEATHSIG`): a program
//! that wants its servers to finish their own shutdown awaits [`McpImport::close`] before it
//! exits.
//!
//! [`FullSchema`]: crate::FullSchema
//! [`Output::tool_validated`]: tools_runtime::Output::tool_validated
//! [`codes::MCP_TOOL_ERROR`]: crate::codes::MCP_TOOL_ERROR
//! [`codes::MCP_SERVER_GONE`]: crate::codes::MCP_SERVER_GONE
//! [`ToolDefinition::timeout`]: tools_runtime::ToolDefinition::timeout
//! [`codes::MCP_TIMEOUT`]: crate::codes::MCP_TIMEOUT
//! [`ToolRunContext::progress`]: tools_runtime::ToolRunContext::progress
//! [`ToolDefinition::timeout_max_total`]: tools_runtime::ToolDefinition::timeout_max_total
//! [`ToolDefinition::is_long_running`]: tools_runtime::ToolDefinition::is_long_running
//! [`DEFAULT_MAX_MESSAGE_SIZE`]: crate::DEFAULT_MAX_MESSAGE_SIZE
//! [`codes::MCP_MESSAGE_TOO_LARGE`]: crate::codes::MCP_MESSAGE_TOO_LARGE
//! [`codes::MCP_INVALID_RESULT`]: crate::codes::MCP_INVALID_RESULT

mod answer;
mod call;
mod cancel;
mod connect;
mod deadline;
mod handler;
mod http;
pub(crate) mod limits;
mod list;
mod options;
mod probe;
mod progress;
mod source;
mod task;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::Tool;
use rmcp::service::{Peer, RoleClient};
use tools_runtime::hooks::PreDecision;
use tools_runtime::{Registration, Scope};

use self::connect::{Connected, Wire, connect};
use self::handler::{Client, listen_for_changes};
use self::list::{list_pages, refresh};
use crate::error::McpError;
use crate::lock;
use crate::progress::ProgressRoutes;

pub use self::answer::{content_text, text_output_schema};
pub use self::limits::{MAX_PAGES, MAX_TOOLS};
pub use self::options::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_EXIT_TIMEOUT, DEFAULT_PROBE_TIMEOUT, DEFAULT_TERMINATE_TIMEOUT,
    ImportOptions, NameRule,
};
pub use self::source::{McpSource, Protocol};

/// A server's tool that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The server's name for it.
    pub name: String,
    /// Why (a schema that does not compile, for instance).
    pub reason: String,
}

struct Connection {
    client: Client,
    pid: Option<u32>,
    /// A stdio server's process: whether it is gone.
    gone: Option<crate::child::Gone>,
    /// Where the server's progress for each call in flight goes.
    progress: Arc<ProgressRoutes>,
    /// What the call spans say of the connection.
    wire: Wire,
}

struct Imported {
    local: String,
    tool: Tool,
    registration: Registration,
}

struct Inner {
    source: McpSource,
    options: ImportOptions,
    scope: Scope,
    connection: Mutex<Option<Arc<Connection>>>,
    tools: Mutex<BTreeMap<String, Imported>>,
    skipped: Mutex<Vec<Skipped>>,
    refresh: tokio::sync::Mutex<()>,
    last_error: Mutex<Option<String>>,
    /// The local names of the tools whose calls ask for approval
    /// ([`AnnotationPolicy::ask_destructive`](crate::AnnotationPolicy::ask_destructive)).
    asking: Mutex<HashSet<String>>,
    /// The pre-execute listener that asks for them, while the import lasts.
    asker: Mutex<Option<Registration>>,
}

/// The tools of one MCP server, imported into a scope (the spec's "one plugin per server").
///
/// It owns the scope: dropping the import (or [`close`](Self::close)) removes the tools and
/// closes the connection.
pub struct McpImport {
    inner: Arc<Inner>,
}

impl fmt::Debug for McpImport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpImport")
            .field("source", &self.inner.source)
            .field("tools", &self.tool_names())
            .finish_non_exhaustive()
    }
}

impl McpImport {
    /// Connects to `source`, lists its tools and registers them in `scope`. Fails, registering
    /// nothing, if the server cannot be reached or listed, or on a name collision.
    pub async fn connect(
        scope: Scope,
        source: McpSource,
        options: ImportOptions,
    ) -> Result<McpImport, McpError> {
        options.check()?;
        let inner = Arc::new(Inner {
            source,
            options,
            scope,
            connection: Mutex::new(None),
            tools: Mutex::new(BTreeMap::new()),
            skipped: Mutex::new(Vec::new()),
            refresh: tokio::sync::Mutex::new(()),
            last_error: Mutex::new(None),
            asking: Mutex::new(HashSet::new()),
            asker: Mutex::new(None),
        });
        if inner.options.annotations.asks_destructive() {
            let weak = Arc::downgrade(&inner);
            let asker = inner
                .scope
                .on_pre_execute(move |exec, decision| ask_destructive(&weak, exec, decision))
                .map_err(|source| McpError::Register {
                    name: "the pre-execute listener of destructive tools".to_owned(),
                    source,
                })?;
            *lock(&inner.asker) = Some(asker);
        }
        open(&inner).await?;
        if let Err(e) = refresh(&inner).await {
            close_connection(&inner).await;
            if let Some(asker) = lock(&inner.asker).take() {
                asker.dispose();
            }
            return Err(e);
        }
        Ok(McpImport { inner })
    }

    /// The local names of the imported tools, in name order.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = lock(&self.inner.tools)
            .values()
            .map(|t| t.local.clone())
            .collect();
        names.sort();
        names
    }

    /// The server's tools that were left out because they could not be imported.
    pub fn skipped(&self) -> Vec<Skipped> {
        lock(&self.inner.skipped).clone()
    }

    /// The scope the tools are registered in.
    pub fn scope(&self) -> &Scope {
        &self.inner.scope
    }

    /// The protocol version the connection negotiated, if connected.
    pub fn protocol_version(&self) -> Option<String> {
        let conn = lock(&self.inner.connection).clone()?;
        conn.client
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_owned())
    }

    /// The process id of a stdio server, if it is running.
    pub fn server_pid(&self) -> Option<u32> {
        lock(&self.inner.connection).as_ref().and_then(|c| c.pid)
    }

    /// Whether the connection is up.
    pub fn is_connected(&self) -> bool {
        lock(&self.inner.connection)
            .as_ref()
            .is_some_and(|c| !c.client.is_closed() && !c.client.peer().is_transport_closed())
    }

    /// The error of the last refresh that followed a `list_changed`, if it failed: the error
    /// and its sources in one line ([`McpError::report`]).
    pub fn last_refresh_error(&self) -> Option<String> {
        lock(&self.inner.last_error).clone()
    }

    /// Lists the server's tools again and brings the scope up to date (what a `list_changed`
    /// notification does).
    pub async fn refresh(&self) -> Result<(), McpError> {
        refresh(&self.inner).await
    }

    /// Closes the old connection (stopping a stdio child), connects again and lists again. The
    /// tools stay registered meanwhile; calls made before the new connection is up fail with
    /// [`codes::MCP_SERVER_GONE`].
    ///
    /// [`codes::MCP_SERVER_GONE`]: crate::codes::MCP_SERVER_GONE
    pub async fn reconnect(&self) -> Result<(), McpError> {
        close_connection(&self.inner).await;
        open(&self.inner).await?;
        refresh(&self.inner).await
    }

    /// Closes the connection and removes the tools. A stdio server is stopped as the module
    /// doc's Shutdown says, and this returns once its process is gone (or, should it outlast
    /// SIGKILL, after both bounds and five seconds more).
    pub async fn close(self) {
        close_connection(&self.inner).await;
        let tools = std::mem::take(&mut *lock(&self.inner.tools));
        for (_, t) in tools {
            t.registration.dispose();
        }
        lock(&self.inner.asking).clear();
        if let Some(asker) = lock(&self.inner.asker).take() {
            asker.dispose();
        }
    }
}

/// The import's pre-execute listener under [`AnnotationPolicy::ask_destructive`](crate::AnnotationPolicy::ask_destructive): a call of one
/// of its tools that may be destructive asks for approval, unless an earlier listener denied
/// it or asked already.
fn ask_destructive(
    inner: &Weak<Inner>,
    exec: &tools_runtime::ToolExecution,
    decision: PreDecision,
) -> PreDecision {
    if !matches!(decision, PreDecision::Allow) {
        return decision;
    }
    let asks = inner
        .upgrade()
        .is_some_and(|inner| lock(&inner.asking).contains(exec.name()));
    if asks {
        PreDecision::ask(format!(
            "`{}` may be destructive: its MCP server does not say it is read-only or \
             non-destructive (tool annotations)",
            exec.name()
        ))
    } else {
        decision
    }
}

impl Drop for McpImport {
    /// Ends the connection; a stdio server is stopped as the module doc's Shutdown says, without
    /// this drop waiting for it.
    fn drop(&mut self) {
        if let Some(conn) = lock(&self.inner.connection).take() {
            conn.client.cancellation_token().cancel();
        }
    }
}

/// Ends the connection and, for a stdio server, waits until its process is gone (closing the
/// transport closes its stdin; see `crate::child`), within the shutdown's bound.
async fn close_connection(inner: &Arc<Inner>) {
    let conn = lock(&inner.connection).take();
    if let Some(conn) = conn {
        conn.client.cancellation_token().cancel();
        let gone = conn.gone.clone();
        drop(conn);
        if let Some(mut gone) = gone {
            let bound = inner.options.shutdown().bound();
            if tokio::time::timeout(bound, gone.wait()).await.is_err() {
                tracing::warn!(?bound, "the MCP server's process is not gone yet");
            }
        }
    }
}

async fn open(inner: &Arc<Inner>) -> Result<(), McpError> {
    let Connected {
        client,
        pid,
        gone,
        progress,
        wire,
    } = connect(&inner.source, &inner.options, Arc::downgrade(inner)).await?;
    let modern = client
        .peer()
        .peer_info()
        .is_some_and(|info| !info.protocol_version.has_initialize());
    let peer = client.peer().clone();
    *lock(&inner.connection) = Some(Arc::new(Connection {
        client,
        pid,
        gone,
        progress,
        wire,
    }));
    if modern {
        listen_for_changes(Arc::downgrade(inner), peer);
    }
    Ok(())
}

fn current_peer(inner: &Inner) -> Option<Peer<RoleClient>> {
    current(inner).map(|(peer, _, _)| peer)
}

/// The peer of the connection, if it is up, its progress routes, and what a call's span says
/// of it.
fn current(inner: &Inner) -> Option<(Peer<RoleClient>, Arc<ProgressRoutes>, crate::trace::Wire)> {
    let conn = lock(&inner.connection).clone()?;
    if conn.client.is_closed() || conn.client.peer().is_transport_closed() {
        return None;
    }
    let peer = conn.client.peer().clone();
    let wire = conn.wire.now(&peer);
    Some((peer, conn.progress.clone(), wire))
}

/// Lists a server's tools without importing them: connects as [`McpImport::connect`] does (the
/// options' protocol, probe and connect timeout, the limit of one message, a stdio child's
/// stderr), reads every page of `tools/list` as an import does (each page within
/// [`ImportOptions::call_timeout`], at most [`MAX_PAGES`] pages and [`MAX_TOOLS`] tools), then
/// closes the connection, which stops a stdio child.
///
/// The tools are rmcp's, as the server gave them, in its order and under its names: the naming
/// rule and the tool timeouts of the options are not used, and nothing is compiled or refused.
/// This is what the `tools-codegen` CLI's `--mcp-stdio` and `--mcp-url` render from.
pub async fn list_tools(
    source: &McpSource,
    options: &ImportOptions,
) -> Result<Vec<Tool>, McpError> {
    let Connected { client, .. } = connect(source, options, Weak::new()).await?;
    let listed = list_pages(client.peer(), options.call_timeout)
        .await
        .map_err(|why| {
            source.auth_or(McpError::Request {
                server: source.describe(),
                method: "tools/list",
                source: why,
            })
        });
    let _ = client.cancel().await;
    let mut listed = listed?;
    listed
        .iter_mut()
        .for_each(crate::tasks_draft::forget_execution);
    Ok(listed)
}
