//! Serving a scope as an MCP server.
//!
//! [`McpServer`] answers `tools/list` with what the scope is presented as (its visible tools
//! under `native`, `run_code` alone under `code`, both under `both`; the same list
//! [`ToolRuntime::assemble`] gives a model) and runs every `tools/call` through
//! [`ToolRuntime::execute`], so policy, guards, approval, wrappers, post-execute decisions and
//! observers all apply. Calls run as the scope's agent when the scope is an agent scope.
//!
//! - A success returns the tool's content and, when the tool declares an object output schema
//!   (published as `outputSchema`), its value as `structuredContent`.
//! - A failure (denied, invalid arguments, a tool error) returns `isError: true` with the
//!   pipeline's text (`Error: ...`), which the model can read and act on, as MCP asks for tool
//!   and argument errors.
//! - An unknown tool is a JSON-RPC error, `-32602` (invalid params), as MCP specifies.
//! - One incoming message may be at most [`McpServer::max_message_size`] bytes
//!   ([`DEFAULT_MAX_MESSAGE_SIZE`], 16 MiB, on stdio and HTTP alike). A larger request is read
//!   past, never kept, and answered with a JSON-RPC error for its id (`-32600`, naming its size
//!   and the limit; on HTTP with status `413`); the connection stays usable. A line or body that
//!   is not JSON gets the parse error `-32700`, JSON that is no message `-32600`, each with
//!   `"id": null` when no id can be read (see [`crate::wire`]).
//! - Cancellation ([`HttpOptions::cancellation`] says the same on the server's startup line):
//!   `notifications/cancelled` cancels the call's token on stdio and in an HTTP session. Without
//!   a session (the default HTTP mode, and every 2026-07-28 request), a closed response stream
//!   cancels its call (2026-07-28's own way to cancel). A 2025-11-25 client without a session
//!   keeps its stream and sends `notifications/cancelled`: that cancels the call it names when
//!   exactly one 2025-11-25 call in flight without a session came from that client address with
//!   that id. It cannot reach a call held by another process behind a balancer, nor tell apart
//!   two clients behind one address that reuse an id (neither is cancelled then); and a client
//!   behind the caller's address can cancel its call (turn sessions on where clients that do
//!   not trust each other share an address, such as one proxy). In a 2025-11-25 HTTP session
//!   (`HttpOptions::sessions`), a dropped connection does not cancel: the session keeps the
//!   call, as it keeps the session.
//! - Progress: a `tools/call` whose `_meta` carries a `progressToken` runs with a progress sink
//!   ([`ToolCall::with_progress`]), and each report the pipeline accepts from the call (its
//!   body's [`ToolRunContext::progress`](tools_runtime::ToolRunContext::progress), which checks
//!   that reports are finite and increasing) is sent as `notifications/progress` with that token
//!   (`progress`, `total`, `message`) while the call runs, in the order it was made. Every report
//!   is handed to the transport before the result is sent, and none after it. On stdio and in an
//!   HTTP session it goes on the connection (rmcp routes it to the request's response stream by
//!   its token); without a session, on the request's own response stream (the answer becomes an
//!   SSE stream). A request without a token gets no notification. A client that reads more
//!   slowly than the tool reports has at most 256 reports waiting; past that the newest replaces
//!   the last waiting one, so what it receives still increases. Only the call's own reports are
//!   sent: the progress of calls it makes (Code Mode's sub-calls) reaches the client only as far
//!   as the call itself reports it.
//! - Tasks: a tool whose definition is long-running
//!   ([`ToolDefinition::is_long_running`](tools_runtime::ToolDefinition::is_long_running)), or
//!   that [`McpServer::tasks`] names, is offered as an MCP task: a client that declares the
//!   tasks extension gets a task for each call of one (create, `tasks/get`, `tasks/cancel`), run
//!   through the same pipeline. See [`crate::tasks`] for which wins, the states, the one result,
//!   the bounds and the ids.
//! - Traces: every `tools/call` runs in a span `mcp tools/call` (exported as `tools/call
//!   <tool>`, kind server, with `rpc.system = "mcp"`, `mcp.method.name`, `gen_ai.tool.name`,
//!   `gen_ai.operation.name`, `jsonrpc.request.id`, `mcp.protocol.version`, `mcp.session.id` in
//!   an HTTP session, `network.transport` (`pipe` on [`serve_stdio`](McpServer::serve_stdio),
//!   `tcp` over HTTP; not recorded for another transport given to
//!   [`serve_transport`](McpServer::serve_transport)) and `network.protocol.name = "http"` over
//!   HTTP), which holds the pipeline's `execute_tool <tool>` span (a task's call too). An
//!   `isError` answer sets `error.type = "tool_error"` on it and the ERROR status, a JSON-RPC
//!   error (an unknown tool) its code. The call's `gen_ai.tool.call.id` (the pipeline's call id)
//!   is `mcp-` and 128 random bits in hex. With the `otel` feature, a `traceparent` in the
//!   request's `_meta` (and its `tracestate`) makes that span the child of the caller's span, in
//!   the caller's trace; an absent or invalid one leaves it where it is, and nothing fails.
//!   Without a subscriber the span is not built.
//! - When the scope's list changes (a registration, a removal, a mask), connected clients get
//!   `notifications/tools/list_changed`: on a session (stdio, or a stateful HTTP session) when
//!   they initialized, on a 2026-07-28 `subscriptions/listen` stream when they asked for it.
//!
//! A tool whose schema nests deeper than [`MAX_DEPTH`] levels is left
//! out of the list (the wire encoder recurses); it stays callable by name.

use crate::lock;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CreateTaskResult,
    DiscoverResult, GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, RequestId,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{
    MaybeSendFuture, NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext,
    SubscriptionSink,
};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;
use tools_runtime::schema::CatalogEntry;
use tools_runtime::{
    ContentBlock, Registration, Scope, ScopeKey, ToolCall, ToolExecutionResult, ToolOutcome,
    ToolRuntime,
};

use crate::auth::BearerAuth;
use crate::error::{McpError, ServeError};
use crate::schema::MAX_DEPTH;
use crate::serve_auth::{Caller, TenantRule};
use crate::tasks::{TaskOptions, TaskTable};
use crate::wire::{DEFAULT_MAX_MESSAGE_SIZE, LineTransport};
use crate::wire::{HttpCaller, SESSION_HEADER};

/// A call in flight without a session: the client's address and the request's id.
type StatelessKey = (IpAddr, RequestId);

struct ServeInner {
    runtime: ToolRuntime,
    scope: ScopeKey,
    name: String,
    calls: AtomicU64,
    sessions: Mutex<Vec<Peer<RoleServer>>>,
    streams: Mutex<Vec<SubscriptionSink>>,
    changed: tokio::sync::Notify,
    listener: Mutex<Option<Registration>>,
    /// Bumped each time the served list changes.
    generation: AtomicU64,
    /// Whether a listed tool's definition is long-running (updated when the list changes).
    long_running_listed: AtomicBool,
    /// The generation at each accepted `subscriptions/listen`, oldest first: a change between
    /// the acknowledgment and the stream's registration is still sent.
    accepted: Mutex<std::collections::VecDeque<u64>>,
    /// The HTTP calls in flight without a session, by client address and request id, each with
    /// a serial number and the token that cancels it.
    stateless: Mutex<HashMap<StatelessKey, Vec<(u64, tokio_util::sync::CancellationToken)>>>,
    serial: AtomicU64,
    /// A tenant rule is set: a change may change a tenant's list and not the server's own.
    tenants: AtomicBool,
    /// The bearer front's tool scopes and the tenant rule, for the guard that holds a tool's
    /// scope on every call made for a principal from a served scope (see `scope_guard`).
    policy: Mutex<ServedPolicy>,
    /// Holds the guard (a global-layer scope of this server's own: dropped with the server,
    /// it disposes the guard).
    _guard_scope: Scope,
}

/// What the tool-scope guard reads: the bearer front, the tenant rule.
#[derive(Default)]
struct ServedPolicy {
    auth: Option<Arc<BearerAuth>>,
    tenants: Option<Arc<TenantRule>>,
}

impl ServeInner {
    /// Registers a call in flight without a session until the guard drops.
    fn register_stateless(
        self: &Arc<Self>,
        key: StatelessKey,
        token: tokio_util::sync::CancellationToken,
    ) -> StatelessCall {
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        lock(&self.stateless)
            .entry(key.clone())
            .or_default()
            .push((serial, token));
        StatelessCall {
            inner: self.clone(),
            key,
            serial,
        }
    }
}

/// Removes a call from the table of calls in flight without a session when it ends.
struct StatelessCall {
    inner: Arc<ServeInner>,
    key: StatelessKey,
    serial: u64,
}

impl Drop for StatelessCall {
    fn drop(&mut self) {
        let mut table = lock(&self.inner.stateless);
        if let Some(calls) = table.get_mut(&self.key) {
            calls.retain(|(serial, _)| *serial != self.serial);
            if calls.is_empty() {
                table.remove(&self.key);
            }
        }
    }
}

impl Drop for ServeInner {
    fn drop(&mut self) {
        // The change listener goes with the last clone of the server.
        if let Some(registration) = lock(&self.listener).take() {
            registration.dispose();
        }
    }
}

/// A scope served as an MCP server. Cheap to clone; every clone serves the same scope and
/// shares the list of connected clients to notify.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<ServeInner>,
    limit: usize,
    tasks: Arc<TaskTable>,
    /// Serving this process's stdio (what the spans say of the transport).
    stdio: bool,
    /// The bearer front of `serve_http` ([`crate::auth`]).
    pub(crate) auth: Option<Arc<BearerAuth>>,
    /// The scope of each authenticated principal.
    pub(crate) tenants: Option<Arc<TenantRule>>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("scope", &self.inner.scope)
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server for what `scope` sees, named `name` in its `serverInfo`. Must be called inside a
    /// tokio runtime (it starts the task that sends `list_changed`).
    pub fn new(scope: &Scope, name: impl Into<String>) -> Result<McpServer, McpError> {
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|e| McpError::Service(ServeError::NoRuntime(e)))?;
        let guard_scope = scope.runtime().scope();
        let inner = Arc::new(ServeInner {
            runtime: scope.runtime().clone(),
            scope: scope.key(),
            name: name.into(),
            calls: AtomicU64::new(0),
            sessions: Mutex::new(Vec::new()),
            streams: Mutex::new(Vec::new()),
            changed: tokio::sync::Notify::new(),
            listener: Mutex::new(None),
            generation: AtomicU64::new(0),
            long_running_listed: AtomicBool::new(false),
            accepted: Mutex::new(std::collections::VecDeque::new()),
            stateless: Mutex::new(HashMap::new()),
            serial: AtomicU64::new(0),
            tenants: AtomicBool::new(false),
            policy: Mutex::new(ServedPolicy::default()),
            _guard_scope: guard_scope,
        });
        // Registered before the change listener below (a guard changes no list).
        let weak = Arc::downgrade(&inner);
        let _guard = inner
            ._guard_scope
            .guard(move |exec| scope_guard(&weak, exec))
            .map_err(|e| McpError::Service(ServeError::Guard(e)))?;
        let weak = Arc::downgrade(&inner);
        let registration = scope
            .on_change(move |_| {
                if let Some(inner) = weak.upgrade() {
                    inner.changed.notify_one();
                }
            })
            .map_err(|e| McpError::Service(ServeError::Listen(e)))?;
        *lock(&inner.listener) = Some(registration);
        let first = listed(&inner);
        note_long_running(&inner, &first);
        handle.spawn(watch_changes(Arc::downgrade(&inner), first));
        Ok(McpServer {
            inner,
            limit: DEFAULT_MAX_MESSAGE_SIZE,
            tasks: Arc::new(TaskTable::new(TaskOptions::new())),
            stdio: false,
            auth: None,
            tenants: None,
        })
    }

    /// Serves [`serve_http`](Self::serve_http) as an OAuth resource server: every request needs
    /// a bearer token that `auth`'s verifier accepts, and is made for the principal it gives
    /// (see [`crate::auth`] for the metadata, the challenges and the step-up). Applies to this
    /// server and the clones made from it after this call.
    ///
    /// A tool's scope ([`BearerAuth::require_scope`]) holds on every call made for the
    /// principal from the scope it is served from: its `tools/call` (the front's `403`), and
    /// the calls that call makes, a Code Mode program's included (a guard of this server's
    /// refuses them, `GUARD_DENIED`; see [`crate::auth`]). The tool scopes the guard holds are
    /// those of the last `bearer_auth` call on any clone.
    pub fn bearer_auth(mut self, auth: BearerAuth) -> McpServer {
        let auth = Arc::new(auth);
        lock(&self.inner.policy).auth = Some(auth.clone());
        self.auth = Some(auth);
        self
    }

    /// Serves each authenticated principal from the scope `rule` gives it (its own slice of the
    /// registry: an agent scope per tenant or per client, with its own masks, guards and
    /// approvals), so `tools/list` shows and `tools/call` admits that scope's tools only. A
    /// principal the rule gives `None` is answered `403`. The rule gives a [`ScopeKey`], not a
    /// [`Scope`]: the caller keeps the scopes alive (a dropped `Scope` disposes its layer, and a
    /// key of a disposed scope lists nothing and runs nothing). Requests without a principal
    /// (stdio, HTTP without [`bearer_auth`](Self::bearer_auth)) are served from the server's own
    /// scope. The rule runs once per request; keep it quick. With a rule, every registry change
    /// sends `list_changed` (a hint: each client lists its own slice again).
    pub fn tenants(
        mut self,
        rule: impl Fn(&tools_runtime::Principal) -> Option<ScopeKey> + Send + Sync + 'static,
    ) -> McpServer {
        let rule: Arc<TenantRule> = Arc::new(rule);
        lock(&self.inner.policy).tenants = Some(rule.clone());
        self.tenants = Some(rule);
        self.inner.tenants.store(true, Ordering::SeqCst);
        self
    }

    /// The MCP tasks of this server under `options`: the tools they name run as tasks besides
    /// those whose definition is long-running (unless
    /// [`TaskOptions::long_running_definitions`]`(false)`), and the table's bounds. Without
    /// this call a server has [`TaskOptions::new`]: the long-running definitions, the default
    /// bounds. See [`crate::tasks`]. Replaces the task table of this server and of clones made
    /// from it after this call.
    pub fn tasks(mut self, options: TaskOptions) -> McpServer {
        self.tasks = Arc::new(TaskTable::new(options));
        self
    }

    /// Whether this server offers tasks now: the options name a tool, a listed tool's
    /// definition is long-running (and the options follow the definitions), or tasks are kept
    /// (a task outlives its tool's listing, so `tasks/get` still reaches it).
    fn offers_tasks(&self) -> bool {
        self.tasks.names_any()
            || (self.tasks.follows_definitions()
                && self.inner.long_running_listed.load(Ordering::Relaxed))
            || !self.tasks.is_empty()
    }

    /// Whether this server offers tasks to a caller served from `scope` (a tenant's slice, or
    /// the server's own): as [`offers_tasks`](Self::offers_tasks) says, with the tools that
    /// `scope` lists. What `initialize` and `server/discover` declare to that caller.
    fn offers_tasks_in(&self, scope: ScopeKey) -> bool {
        if scope == self.inner.scope {
            return self.offers_tasks();
        }
        self.tasks.names_any()
            || !self.tasks.is_empty()
            || (self.tasks.follows_definitions()
                && long_running_in(&self.inner, scope, &listed_in(&self.inner, scope)))
    }

    /// Whether a `tools/call` from `scope` may be answered with a task (the tool then decides,
    /// by the options and its definition in `scope`). For a tenant's slice this does not list
    /// the slice on each call: the tool's own definition there decides.
    fn tasks_for_call(&self, scope: ScopeKey) -> bool {
        if scope == self.inner.scope {
            return self.offers_tasks();
        }
        self.tenants_may_have_tasks()
    }

    /// Whether a tenant's slice may be offered tasks, whatever it lists.
    fn tenants_may_have_tasks(&self) -> bool {
        self.tasks.names_any() || self.tasks.follows_definitions() || !self.tasks.is_empty()
    }

    /// The server's configuration, declaring tasks when `tasks`.
    fn info(&self, tasks: bool) -> ServerConfig {
        let builder = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed();
        let capabilities = if tasks {
            builder.enable_tasks().build()
        } else {
            builder.build()
        };
        let mut implementation = Implementation::default();
        implementation.name = self.inner.name.clone();
        implementation.version = env!("CARGO_PKG_VERSION").to_owned();
        ServerConfig::new(capabilities).with_server_info(implementation)
    }

    /// The largest incoming message, in bytes, on stdio and HTTP alike
    /// ([`DEFAULT_MAX_MESSAGE_SIZE`], 16 MiB, by default). A larger request is answered with a
    /// JSON-RPC error for its id that names its size and the limit. Applies to
    /// [`serve_stdio`](Self::serve_stdio) and [`serve_http`](Self::serve_http); a transport given
    /// to [`serve_transport`](Self::serve_transport) keeps its own framing.
    pub fn max_message_size(mut self, bytes: usize) -> McpServer {
        self.limit = bytes;
        self
    }

    /// How many MCP tasks this server keeps, working and finished (see [`tasks`](Self::tasks)).
    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// The limit of one incoming message.
    pub(crate) fn message_limit(&self) -> usize {
        self.limit
    }

    /// Cancels the call in flight without a session that `ip` made with `id`, if it is the only
    /// one (see the module doc).
    pub(crate) fn cancel_stateless(&self, ip: IpAddr, id: &RequestId) {
        let table = lock(&self.inner.stateless);
        match table.get(&(ip, id.clone())).map(Vec::as_slice) {
            Some([(_, token)]) => token.cancel(),
            Some(calls) => tracing::warn!(
                client = %ip,
                calls = calls.len(),
                "notifications/cancelled names an id that several calls in flight from one \
                 address carry; none is cancelled"
            ),
            None => {
                tracing::debug!(client = %ip, "notifications/cancelled for no call in flight here")
            }
        }
    }

    /// The `tools/list` entries: what the scope is presented as, in presentation order.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools_in(self.inner.scope)
    }

    /// The `tools/list` entries of `scope`.
    fn tools_in(&self, scope: ScopeKey) -> Vec<Tool> {
        listed_in(&self.inner, scope)
            .iter()
            .filter_map(|schema| to_mcp_tool(schema))
            .collect()
    }

    /// Serves one connection on `transport` (stdio, a pipe, any rmcp transport) until the peer
    /// closes it.
    pub async fn serve_transport<T, E, A>(self, transport: T) -> Result<(), McpError>
    where
        T: rmcp::transport::IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = self
            .serve(transport)
            .await
            .map_err(|e| McpError::Service(ServeError::Initialize(Box::new(e))))?;
        running
            .waiting()
            .await
            .map_err(|e| McpError::Service(ServeError::Task(e)))?;
        Ok(())
    }

    /// Serves over this process's stdin and stdout until the client closes them, one JSON-RPC
    /// message per line (see [`max_message_size`](Self::max_message_size)).
    pub async fn serve_stdio(mut self) -> Result<(), McpError> {
        self.stdio = true;
        let (read, write) = rmcp::transport::stdio();
        let transport = LineTransport::<RoleServer>::new(
            read,
            write,
            self.limit,
            "McpServer::max_message_size",
            true,
        );
        self.serve_transport(transport).await
    }

    /// Serves streamable HTTP on `listener` (every path) until `shutdown` is cancelled. See
    /// [`HttpOptions`] for sessions and allowed hosts, and [`HttpOptions::cancellation`] for
    /// what cancels a call.
    pub async fn serve_http(
        self,
        listener: tokio::net::TcpListener,
        options: HttpOptions,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> Result<(), McpError> {
        crate::serve_http::serve(self, listener, options, shutdown).await
    }
}

/// How the HTTP transport runs.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Keep a session per 2025-11-25 client (`Mcp-Session-Id`), which lets `list_changed` reach
    /// it. Off, every request stands alone (what a load balancer over many processes needs);
    /// 2026-07-28 requests are always served without a session.
    pub sessions: bool,
    /// The `Host` values accepted; `None` keeps rmcp's default, loopback only.
    pub allowed_hosts: Option<Vec<String>>,
}

impl HttpOptions {
    /// Stateless, loopback hosts only.
    pub fn new() -> HttpOptions {
        HttpOptions::default()
    }

    /// With sessions for 2025-11-25 clients.
    pub fn sessions(mut self, on: bool) -> HttpOptions {
        self.sessions = on;
        self
    }

    /// The accepted `Host` values (names, or `host:port`), for a deployment behind a name.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> HttpOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// What cancels a call in this mode, in one sentence for a server's startup line (the
    /// `tools-mcp serve` binary prints it).
    pub fn cancellation(&self) -> &'static str {
        if self.sessions {
            "cancellation: in a 2025-11-25 session, notifications/cancelled cancels its call and \
             a dropped connection does not (the session keeps the call); without a session, a \
             closed response stream cancels its call, and a 2025-11-25 notifications/cancelled \
             cancels it only when no other call in flight from that client address has the same \
             id"
        } else {
            "cancellation: a closed response stream cancels its call; a 2025-11-25 \
             notifications/cancelled cancels it only when no other call in flight from that \
             client address has the same id, and cannot reach a call held by another process \
             behind a balancer"
        }
    }
}

fn listed(inner: &ServeInner) -> Vec<Arc<CatalogEntry>> {
    listed_in(inner, inner.scope)
}

fn listed_in(inner: &ServeInner, scope: ScopeKey) -> Vec<Arc<CatalogEntry>> {
    match inner.runtime.assemble(scope) {
        Ok(assembly) => assembly.tools,
        Err(e) => {
            tracing::warn!(error = %e, "cannot assemble the served scope; listing its schemas");
            inner
                .runtime
                .schemas(scope)
                .into_iter()
                .map(Arc::new)
                .collect()
        }
    }
}

fn same_list(a: &[Arc<CatalogEntry>], b: &[Arc<CatalogEntry>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.name == y.name
                && x.description == y.description
                && x.annotations == y.annotations
                && tools_schema::deep::values_equal(&x.input_schema, &y.input_schema)
                && match (&x.output_schema, &y.output_schema) {
                    (None, None) => true,
                    (Some(p), Some(q)) => tools_schema::deep::values_equal(p, q),
                    _ => false,
                }
        })
}

/// Notes whether a tool of `listed` has a long-running definition.
fn note_long_running(inner: &ServeInner, listed: &[Arc<CatalogEntry>]) {
    let any = long_running_in(inner, inner.scope, listed);
    inner.long_running_listed.store(any, Ordering::Relaxed);
}

/// Whether a tool of `listed` has a long-running definition in `scope`.
fn long_running_in(inner: &ServeInner, scope: ScopeKey, listed: &[Arc<CatalogEntry>]) -> bool {
    listed.iter().any(|entry| {
        inner
            .runtime
            .get(&entry.name, scope)
            .is_some_and(|d| d.is_long_running())
    })
}

async fn watch_changes(weak: Weak<ServeInner>, mut last: Vec<Arc<CatalogEntry>>) {
    loop {
        let Some(inner) = weak.upgrade() else {
            return;
        };
        // Hold only a weak reference while waiting, so the server can go away.
        let notified = {
            let inner = inner.clone();
            async move { inner.changed.notified().await }
        };
        drop(inner);
        notified.await;
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let now = listed(&inner);
        // A definition replaced by one that is (not) long-running may list the same.
        note_long_running(&inner, &now);
        if same_list(&now, &last) && !inner.tenants.load(Ordering::SeqCst) {
            continue;
        }
        last = now;
        inner.generation.fetch_add(1, Ordering::SeqCst);
        let sessions = lock(&inner.sessions).clone();
        let mut alive = Vec::with_capacity(sessions.len());
        for peer in sessions {
            if peer.is_transport_closed() {
                continue;
            }
            if peer.notify_tool_list_changed().await.is_ok() {
                alive.push(peer);
            }
        }
        *lock(&inner.sessions) = alive;
        let streams = lock(&inner.streams).clone();
        let mut open = Vec::with_capacity(streams.len());
        for sink in streams {
            if sink.notify_tool_list_changed().await.is_ok() {
                open.push(sink);
            }
        }
        *lock(&inner.streams) = open;
    }
}

/// The MCP form of a catalog entry; `None` for a schema too deep to send.
fn to_mcp_tool(schema: &CatalogEntry) -> Option<Tool> {
    if tools_schema::deep::deeper_than(&schema.input_schema, MAX_DEPTH)
        || schema
            .output_schema
            .as_ref()
            .is_some_and(|o| tools_schema::deep::deeper_than(o, MAX_DEPTH))
    {
        tracing::warn!(tool = %schema.name, "schema too deep to list over MCP; left out");
        return None;
    }
    let Value::Object(input) = schema.input_schema.clone() else {
        return None;
    };
    let mut tool = Tool::new(schema.name.clone(), schema.description.clone(), input);
    if let Some(annotations) = schema.annotations.as_ref().filter(|a| !a.is_empty()) {
        tool.title.clone_from(&annotations.title);
        tool.annotations = Some(crate::annotations::served(annotations));
    }
    if let Some(Value::Object(output)) = &schema.output_schema
        && output.get("type").and_then(Value::as_str) == Some("object")
    {
        tool = tool.with_raw_output_schema(Arc::new(output.clone()));
    }
    Some(tool)
}

/// The MCP form of the result's content, the blocks moved (a large text is not copied).
fn content(blocks: Vec<ContentBlock>) -> Vec<rmcp::model::ContentBlock> {
    blocks
        .into_iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(rmcp::model::ContentBlock::text(text)),
            ContentBlock::Image { data, mime_type } => {
                Some(rmcp::model::ContentBlock::image(data, mime_type))
            }
            _ => None,
        })
        .collect()
}

fn to_call_result(result: ToolExecutionResult, structured: bool) -> CallToolResult {
    let ToolExecutionResult {
        outcome,
        content: blocks,
        ..
    } = result;
    let blocks = content(blocks);
    match outcome {
        ToolOutcome::Success { value } => {
            let mut out = CallToolResult::success(blocks);
            if structured {
                out.structured_content = Some(value);
            }
            out
        }
        _ => CallToolResult::error(blocks),
    }
}

/// The client's address when the request is a 2025-11-25 one that came over HTTP without a
/// session. A 2026-07-28 request is cancelled by closing its response stream, as that version
/// says, so `notifications/cancelled` is not looked up for it.
fn stateless_caller(context: &RequestContext<RoleServer>) -> Option<IpAddr> {
    let parts = context.extensions.get::<hyper::http::request::Parts>()?;
    if parts.headers.contains_key(SESSION_HEADER) {
        return None;
    }
    let modern = parts
        .headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| serde_json::from_value::<ProtocolVersion>(Value::String(v.to_owned())).ok())
        .is_some_and(|v| !v.has_initialize());
    if modern {
        return None;
    }
    parts.extensions.get::<HttpCaller>().map(|c| c.ip)
}

/// The id of a served call (its span's `gen_ai.tool.call.id`): `mcp-` and 128 random bits in
/// hex, so that replicas of one server do not give two calls one id (the caller's request id
/// is on the `tools/call` span, `jsonrpc.request.id`). Should the system's random source fail,
/// `mcp-<pid>-<n>`, the process's id and the call's number in it.
fn call_id(n: u64) -> String {
    use std::fmt::Write as _;
    let mut bytes = [0u8; 16];
    match getrandom::fill(&mut bytes) {
        Ok(()) => {
            let mut id = String::with_capacity(4 + 2 * bytes.len());
            id.push_str("mcp-");
            for byte in bytes {
                let _ = write!(id, "{byte:02x}");
            }
            id
        }
        Err(error) => {
            tracing::warn!(%error, "no random call id; the process's id and a counter instead");
            format!("mcp-{}-{n}", std::process::id())
        }
    }
}

/// Who a request is for, and the scope it is served from: the bearer front's [`Caller`] over
/// HTTP, else no one and the server's own scope.
#[derive(Clone)]
struct For {
    scope: ScopeKey,
    principal: Option<Arc<tools_runtime::Principal>>,
}

impl For {
    /// The key of the principal a task belongs to: its subject and client.
    fn owner(&self) -> Option<String> {
        self.principal.as_ref().map(|p| {
            format!(
                "{}\u{0}{}",
                p.subject,
                p.client_id.as_deref().unwrap_or_default()
            )
        })
    }
}

/// The guard every call of the runtime passes (registered by [`McpServer::new`]): a call made
/// for a principal, from the scope this server serves (or the one its tenant rule gives that
/// principal), of a tool that [`BearerAuth::require_scope`] names, is refused when the
/// principal lacks one of the tool's scopes. This holds a served `tools/call`, the calls its
/// body makes, a Code Mode program's calls and a resumed call alike: each carries the
/// principal. A call made for no principal, or from a scope this server does not serve, is
/// not its business.
fn scope_guard(weak: &Weak<ServeInner>, exec: &tools_runtime::ToolExecution) -> Option<String> {
    let principal = exec.principal()?;
    let inner = weak.upgrade()?;
    let (auth, tenants) = {
        let policy = lock(&inner.policy);
        (policy.auth.clone()?, policy.tenants.clone())
    };
    if auth.tool_scopes(exec.name()).is_empty() {
        return None;
    }
    let from = exec.agent().unwrap_or(ScopeKey::GLOBAL);
    let served = from == inner.scope || tenants.is_some_and(|rule| rule(principal) == Some(from));
    if !served {
        return None;
    }
    crate::serve_auth::tool_scope_refusal(&auth, principal, exec.name(), exec.origin())
}

fn caller(inner: &ServeInner, context: &RequestContext<RoleServer>) -> For {
    let found = context
        .extensions
        .get::<hyper::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>());
    match found {
        Some(caller) => For {
            scope: caller.scope.unwrap_or(inner.scope),
            principal: Some(caller.principal.clone()),
        },
        None => For {
            scope: inner.scope,
            principal: None,
        },
    }
}

/// The call of `tools/call` number `n`: as the scope's agent, for the principal, cancelled by
/// `cancel`.
fn new_call(
    n: u64,
    name: &str,
    args: Value,
    cancel: tokio_util::sync::CancellationToken,
    who: &For,
) -> ToolCall {
    let mut call = ToolCall::new(call_id(n), name.to_owned(), args).with_cancel(cancel);
    if let Some(principal) = &who.principal {
        call = call.with_principal(principal.clone());
    }
    if who.scope.is_global() {
        call
    } else {
        call.with_agent(who.scope)
    }
}

/// The `tools/call` answer for a call's result: an unknown tool is the JSON-RPC error `-32602`.
fn answer(
    inner: &ServeInner,
    scope: ScopeKey,
    name: &str,
    result: ToolExecutionResult,
) -> Result<CallToolResult, ErrorData> {
    if result.code() == Some(tools_runtime::codes::UNKNOWN_TOOL) {
        let message = result
            .error()
            .map(|e| e.message.clone())
            .unwrap_or_default();
        return Err(ErrorData::invalid_params(message, None));
    }
    let structured = result.value().is_some_and(Value::is_object)
        && inner.runtime.get(name, scope).is_some_and(|d| {
            d.output_schema().get("type").and_then(Value::as_str) == Some("object")
        })
        || (name == tools_runtime::definition::RESERVED_RUN_CODE
            && result.value().is_some_and(Value::is_object));
    Ok(to_call_result(result, structured))
}

/// What the call's span says of the connection: HTTP when rmcp's HTTP service hands over the
/// request's parts (with the session's id, in a session), stdio when this server serves its
/// process's stdio, nothing for another transport.
fn wire(context: &RequestContext<RoleServer>, stdio: bool) -> crate::trace::Wire {
    let mut wire = match context.extensions.get::<hyper::http::request::Parts>() {
        Some(parts) => crate::trace::Wire {
            session: parts
                .headers
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            ..crate::trace::Wire::http()
        },
        None if stdio => crate::trace::Wire::stdio(),
        None => crate::trace::Wire::default(),
    };
    wire.version = context.protocol_version().map(|v| v.as_str().to_owned());
    wire
}

/// Records a failed answer on the call's span, as OpenTelemetry's MCP conventions say: an
/// `isError` result is `error.type = "tool_error"`, a JSON-RPC error its code; both with the
/// ERROR status.
fn record_answer(span: &tracing::Span, answered: &Result<CallToolResult, ErrorData>) {
    match answered {
        Ok(result) if result.is_error == Some(true) => crate::trace::failed(span, "tool_error"),
        Ok(_) => {}
        Err(error) => crate::trace::failed(span, &error.code.0.to_string()),
    }
}

/// Starts the call as a task of `table` and gives the task at once; the call runs in the
/// background, its progress the task's status message, its answer the task's one result.
fn start_task(
    inner: Arc<ServeInner>,
    table: Arc<TaskTable>,
    n: u64,
    name: String,
    args: Value,
    span: tracing::Span,
    who: For,
) -> Result<CreateTaskResult, ErrorData> {
    let entry = table.create(who.owner())?;
    let task = entry.task();
    let keep = table.keep();
    // The task holds no reference to its table: dropping the server cancels it.
    drop(table);
    let sink = entry.clone();
    let call = new_call(n, &name, args, entry.cancellation(), &who)
        .with_progress(move |progress| sink.progress(progress));
    // The task's call runs in the request's span: it is the caller's trace's too.
    tokio::spawn(async move {
        let result = crate::trace::within(span.clone(), inner.runtime.execute(call)).await;
        let answered = answer(&inner, who.scope, &name, result);
        record_answer(&span, &answered);
        entry.finish(answered, keep);
    });
    Ok(CreateTaskResult::new(task))
}

impl ServerHandler for McpServer {
    /// Without a request at hand (rmcp's own gate of `tasks/*`): tasks are declared when the
    /// server's own scope offers them, or, with a tenant rule, when a tenant's slice may (the
    /// options name a tool or follow the definitions). `initialize` and `server/discover`
    /// declare what the caller's own slice offers.
    fn get_info(&self) -> ServerConfig {
        let tenants = self.inner.tenants.load(Ordering::Relaxed);
        self.info(self.offers_tasks() || (tenants && self.tenants_may_have_tasks()))
    }

    fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<InitializeResult, ErrorData>> + MaybeSendFuture + '_ {
        context.peer.set_peer_info(request.clone());
        let scope = caller(&self.inner, &context).scope;
        let answered = self.negotiate_initialize(&request).map(|mut info| {
            info.capabilities = self.info(self.offers_tasks_in(scope)).capabilities;
            info
        });
        std::future::ready(answered)
    }

    fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<DiscoverResult, ErrorData>> + MaybeSendFuture + '_ {
        let scope = caller(&self.inner, &context).scope;
        std::future::ready(Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.info(self.offers_tasks_in(scope)),
        )))
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + MaybeSendFuture + '_ {
        let scope = caller(&self.inner, &context).scope;
        std::future::ready(Ok(ListToolsResult::with_all_items(self.tools_in(scope))))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|t| t.name == name)
    }

    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + MaybeSendFuture + '_ {
        let inner = self.inner.clone();
        let who = caller(&inner, &context);
        // The caller's slice decides whether tasks are offered (a tenant's, or the server's).
        let tasks = self.tasks_for_call(who.scope).then(|| self.tasks.clone());
        let stdio = self.stdio;
        // Boxed: rmcp moves the handler's future into a task of its own for every request, and
        // the call's future (the whole pipeline) is large; moved as a pointer, it is copied
        // once, into its box.
        Box::pin(async move {
            let n = inner.calls.fetch_add(1, Ordering::Relaxed);
            let name = request.name.to_string();
            let args = Value::Object(request.arguments.unwrap_or_default());
            // A call without the tool's scope: the front answers it `403` (the step-up), and
            // the guard (`scope_guard`) refuses whatever reaches the pipeline another way.
            // The call's span, parented on the caller's trace context when `_meta` has one.
            let wire = wire(&context, stdio);
            let span = crate::trace::call_span(&name, &context.id, &context.meta, &wire);
            if let Some(principal) = &who.principal {
                span.record("user.id", principal.subject.as_str());
            }
            if let Some(table) = tasks
                && context
                    .client_capabilities()
                    .is_some_and(|c| c.supports_tasks())
                && table.runs(&name, || {
                    inner
                        .runtime
                        .get(&name, who.scope)
                        .is_some_and(|d| d.is_long_running())
                })
            {
                return start_task(inner, table, n, name, args, span, who)
                    .map(CallToolResponse::Task);
            }
            let cancel = context.ct.child_token();
            // Over HTTP without a session, rmcp drops `notifications/cancelled`; the front door
            // finds the call here instead (see `serve_http`).
            let _stateless = stateless_caller(&context)
                .map(|ip| inner.register_stateless((ip, context.id.clone()), cancel.clone()));
            let call = new_call(n, &name, args, cancel, &who);
            // With a progress token, the call's reports go to the client while it runs.
            let result = crate::trace::within(span.clone(), async {
                match context.meta.get_progress_token() {
                    Some(token) => {
                        crate::progress::execute_forwarding(
                            &inner.runtime,
                            call,
                            token,
                            context.peer.clone(),
                        )
                        .await
                    }
                    None => inner.runtime.execute(call).await,
                }
            })
            .await;
            let answered = answer(&inner, who.scope, &name, result);
            record_answer(&span, &answered);
            answered.map(CallToolResponse::Complete)
        })
    }

    fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetTaskResult, ErrorData>> + MaybeSendFuture + '_ {
        // rmcp answers `tasks/*` itself (method not found) while the server offers no tasks.
        let owner = caller(&self.inner, &context).owner();
        let outcome = self
            .tasks
            .get(&request.task_id, owner.as_deref())
            .map(GetTaskResult::new);
        std::future::ready(outcome)
    }

    fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        let owner = caller(&self.inner, &context).owner();
        let outcome = self.tasks.cancel(&request.task_id, owner.as_deref());
        std::future::ready(outcome)
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        lock(&self.inner.sessions).push(context.peer);
        std::future::ready(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        if requested.tools_list_changed != Some(true) {
            return None;
        }
        let mut accepted = lock(&self.inner.accepted);
        // Bounded: a listen that never reaches `listen` leaves one entry, dropped oldest first.
        if accepted.len() >= 1024 {
            accepted.pop_front();
        }
        accepted.push_back(self.inner.generation.load(Ordering::SeqCst));
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), ErrorData>> + MaybeSendFuture + '_ {
        let sink = context.sink().clone();
        lock(&self.inner.streams).push(sink.clone());
        let seen = lock(&self.inner.accepted).pop_front();
        let missed = seen.is_some_and(|g| g != self.inner.generation.load(Ordering::SeqCst));
        async move {
            if missed {
                // The list changed after the acknowledgment, before the stream was registered.
                let _ = sink.notify_tool_list_changed().await;
            }
            context.cancelled().await;
            Ok(())
        }
    }
}
