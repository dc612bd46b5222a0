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

use crate::lock;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::process::Stdio;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientJsonRpcMessage, ClientRequest, DiscoverRequest,
    DiscoverRequestParams, Implementation, JsonRpcMessage, ProgressNotificationParam,
    ProtocolVersion, RequestId, RequestMetaObject, ServerResult, SubscriptionFilter, Tool,
};
use rmcp::service::MaybeSendFuture;
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, Peer, PeerRequestOptions,
    RoleClient, RunningService, ServiceError,
};
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use serde_json::{Value, json};
use tools_runtime::hooks::PreDecision;
use tools_runtime::progress::Progress;
use tools_runtime::{Output, Registration, Scope, ToolDefinition, ToolError, ToolRunContext};

use crate::annotations::{AnnotationPolicy, Hints, Retry};
use crate::error::{ConnectError, McpError, RequestError, SpawnError, codes, report};
use crate::import_http::LimitedClient;
use crate::progress::{Claimed, ProgressRoutes, ProgressTap, Update};
use crate::schema::FullSchema;
use crate::tasks_draft::{Dialect, TaskState, TaskSupport};
use crate::wire::{DEFAULT_MAX_MESSAGE_SIZE, LineTransport, REASON_TOO_LARGE, made_up_reason};
use tools_schema::excerpt::cut;

/// Where an MCP server is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpSource {
    /// A server started as a child process, spoken to over its stdin and stdout. On Linux it
    /// gets those and stderr and no other descriptor of the host: whatever the host holds
    /// without close-on-exec (a descriptor it inherited, or one a library opened without
    /// `O_CLOEXEC`) is closed when the server's program starts.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: Vec<(String, String)>,
    },
    /// A server reached over streamable HTTP (plain `http://`; this crate builds no TLS stack).
    Http {
        /// The endpoint, such as `http://127.0.0.1:8080/mcp`.
        url: String,
        /// Its credentials ([`McpSource::bearer`], [`McpSource::header`],
        /// [`McpSource::oauth`]; none by default).
        auth: crate::import_auth::HttpAuth,
    },
}

impl McpSource {
    /// A child process: `program` with `args`.
    pub fn stdio<I, S>(program: impl Into<String>, args: I) -> McpSource
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        McpSource::Stdio {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        }
    }

    /// A child process from one command line, split on whitespace (no shell quoting: pass
    /// arguments with spaces through [`McpSource::stdio`]).
    pub fn command_line(line: &str) -> Result<McpSource, McpError> {
        let mut words = line.split_whitespace();
        let Some(program) = words.next() else {
            return Err(McpError::Spawn {
                command: line.to_owned(),
                source: SpawnError::EmptyCommandLine,
            });
        };
        Ok(McpSource::stdio(program, words))
    }

    /// A streamable HTTP endpoint.
    pub fn http(url: impl Into<String>) -> McpSource {
        McpSource::Http {
            url: url.into(),
            auth: crate::import_auth::HttpAuth::default(),
        }
    }

    /// The same source with an extra environment variable (stdio only; ignored for HTTP).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> McpSource {
        if let McpSource::Stdio { env, .. } = &mut self {
            env.push((key.into(), value.into()));
        }
        self
    }

    /// The OAuth of an HTTP source, if it authorizes.
    pub(crate) fn oauth_of(&self) -> Option<&crate::oauth::OAuth> {
        match self {
            McpSource::Http { auth, .. } => auth.oauth.as_ref(),
            McpSource::Stdio { .. } => None,
        }
    }

    /// The source in words, for messages.
    pub fn describe(&self) -> String {
        match self {
            McpSource::Stdio { program, args, .. } => {
                let mut s = format!("`{program}");
                for a in args {
                    s.push(' ');
                    s.push_str(a);
                }
                s.push('`');
                cut(&s).into_owned()
            }
            McpSource::Http { url, .. } => cut(url).into_owned(),
        }
    }
}

/// Which protocol generation to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Protocol {
    /// Probe for 2026-07-28 (`server/discover`, no session) within
    /// [`ImportOptions::probe_timeout`]; if the server refuses it or stays silent that long,
    /// use the `initialize` handshake (2025-11-25): on the same stdio process (a late answer to
    /// the probe is dropped), on a fresh HTTP connection.
    #[default]
    Auto,
    /// The `initialize` handshake, 2025-11-25.
    Initialize,
    /// 2026-07-28 only (`server/discover`).
    Discover,
}

impl Protocol {
    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Protocol::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
            Protocol::Initialize => ClientLifecycleMode::Initialize,
            Protocol::Discover => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        }
    }
}

/// Maps a server's tool name to a local one; `None` leaves the tool out.
pub type NameRule = dyn Fn(&str) -> Option<String> + Send + Sync;

/// How to import: the naming rule, the protocol, the limits and the timeouts.
#[derive(Clone)]
pub struct ImportOptions {
    naming: Arc<NameRule>,
    protocol: Protocol,
    inherit_stderr: bool,
    connect_timeout: Duration,
    probe_timeout: Duration,
    call_timeout: Duration,
    tool_timeouts: HashMap<String, Duration>,
    max_total: Option<Duration>,
    tool_max_totals: HashMap<String, Duration>,
    optional_tasks: bool,
    tool_optional_tasks: HashMap<String, bool>,
    max_message_size: usize,
    exit_timeout: Duration,
    terminate_timeout: Duration,
    annotations: AnnotationPolicy,
}

/// The default of [`ImportOptions::call_timeout`].
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// The default of [`ImportOptions::probe_timeout`].
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// The default of [`ImportOptions::exit_timeout`].
pub const DEFAULT_EXIT_TIMEOUT: Duration = Duration::from_secs(3);
/// The default of [`ImportOptions::terminate_timeout`].
pub const DEFAULT_TERMINATE_TIMEOUT: Duration = Duration::from_secs(2);

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            naming: Arc::new(|name: &str| Some(name.to_owned())),
            protocol: Protocol::Auto,
            inherit_stderr: false,
            connect_timeout: Duration::from_secs(60),
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            tool_timeouts: HashMap::new(),
            max_total: None,
            tool_max_totals: HashMap::new(),
            optional_tasks: false,
            tool_optional_tasks: HashMap::new(),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            exit_timeout: DEFAULT_EXIT_TIMEOUT,
            terminate_timeout: DEFAULT_TERMINATE_TIMEOUT,
            annotations: AnnotationPolicy::none(),
        }
    }
}

impl fmt::Debug for ImportOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImportOptions")
            .field("protocol", &self.protocol)
            .field("inherit_stderr", &self.inherit_stderr)
            .field("connect_timeout", &self.connect_timeout)
            .field("probe_timeout", &self.probe_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("tool_timeouts", &self.tool_timeouts)
            .field("max_total", &self.max_total)
            .field("tool_max_totals", &self.tool_max_totals)
            .field("optional_tasks", &self.optional_tasks)
            .field("tool_optional_tasks", &self.tool_optional_tasks)
            .field("max_message_size", &self.max_message_size)
            .field("exit_timeout", &self.exit_timeout)
            .field("terminate_timeout", &self.terminate_timeout)
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

impl ImportOptions {
    /// Names kept as the server gives them, [`Protocol::Auto`], the child's stderr discarded,
    /// calls bounded by [`DEFAULT_CALL_TIMEOUT`], messages by [`DEFAULT_MAX_MESSAGE_SIZE`].
    pub fn new() -> ImportOptions {
        ImportOptions::default()
    }

    /// Every local name is `prefix` + the server's name.
    pub fn prefix(mut self, prefix: impl Into<String>) -> ImportOptions {
        let prefix = prefix.into();
        self.naming = Arc::new(move |name: &str| Some(format!("{prefix}{name}")));
        self
    }

    /// A naming rule of your own: the server's name in, the local name out, `None` to leave the
    /// tool out. Two tools mapped to one name, a mapped name that is not a valid tool name, or
    /// one already registered in the scope's layer, is an error.
    pub fn rename(
        mut self,
        rule: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> ImportOptions {
        self.naming = Arc::new(rule);
        self
    }

    /// The protocol generation.
    pub fn protocol(mut self, protocol: Protocol) -> ImportOptions {
        self.protocol = protocol;
        self
    }

    /// How long connecting may take, the server's start-up, the probe and the handshake
    /// included (60 seconds by default; a server fetched by `npx` on first use can be slow).
    /// The person's step of an OAuth authorization is not counted: it has its own bound,
    /// [`OAuth::authorize_timeout`](crate::oauth::OAuth::authorize_timeout).
    pub fn connect_timeout(mut self, timeout: Duration) -> ImportOptions {
        self.connect_timeout = timeout;
        self
    }

    /// How long [`Protocol::Auto`] waits for the answer to its `server/discover` probe before it
    /// falls back to the `initialize` handshake ([`DEFAULT_PROBE_TIMEOUT`], 5 seconds, by
    /// default). Over stdio the bound counts from the server's start: a server slower than that
    /// to start is spoken to with the handshake, which it also answers; raise the bound, or pin
    /// [`Protocol::Discover`], to wait for it.
    pub fn probe_timeout(mut self, timeout: Duration) -> ImportOptions {
        self.probe_timeout = timeout;
        self
    }

    /// How long a call of an imported tool may wait for the server's answer
    /// ([`DEFAULT_CALL_TIMEOUT`], 60 seconds, by default); [`tool_timeout`](Self::tool_timeout)
    /// sets one tool's own. A call past it is cancelled (the server is told) and fails with
    /// [`codes::MCP_TIMEOUT`]. Each `tools/list` page is held to it too.
    pub fn call_timeout(mut self, timeout: Duration) -> ImportOptions {
        self.call_timeout = timeout;
        self
    }

    /// The timeout of the server's tool `name` (the server's name, before renaming), in place of
    /// [`call_timeout`](Self::call_timeout). The imported definition declares it
    /// ([`ToolDefinition::timeout`]).
    pub fn tool_timeout(mut self, name: impl Into<String>, timeout: Duration) -> ImportOptions {
        self.tool_timeouts.insert(name.into(), timeout);
        self
    }

    /// Makes the timeout of every imported call ([`call_timeout`](Self::call_timeout), or the
    /// tool's own [`tool_timeout`](Self::tool_timeout)) restart at each progress report the
    /// server sends for that call, as
    /// [`ToolDefinitionBuilder::timeout_resets_on_progress`](tools_runtime::definition::ToolDefinitionBuilder::timeout_resets_on_progress)
    /// does for a local tool: a call whose server keeps reporting keeps running, one that goes
    /// quiet for the timeout fails with [`codes::MCP_TIMEOUT`] ("reported no progress for N
    /// ms"), and `max_total` still bounds the whole call ("maximum total time of N ms"). Either
    /// way the request is cancelled and the server told (`notifications/cancelled`). A report
    /// counts when the local call accepts it (finite, above the last one). The imported
    /// definitions declare it ([`ToolDefinition::timeout_max_total`]).
    /// [`tool_timeout_resets_on_progress`](Self::tool_timeout_resets_on_progress) sets one
    /// tool's own. A `max_total` shorter than a timeout it bounds makes
    /// [`McpImport::connect`] fail ([`McpError::InvalidOptions`]).
    pub fn timeout_resets_on_progress(mut self, max_total: Duration) -> ImportOptions {
        self.max_total = Some(max_total);
        self
    }

    /// [`timeout_resets_on_progress`](Self::timeout_resets_on_progress) for the server's tool
    /// `name` alone (the server's name, before renaming), in place of the import's setting.
    pub fn tool_timeout_resets_on_progress(
        mut self,
        name: impl Into<String>,
        max_total: Duration,
    ) -> ImportOptions {
        self.tool_max_totals.insert(name.into(), max_total);
        self
    }

    /// Calls every tool whose server declares the 2025-11-25 draft's `taskSupport: "optional"`
    /// as a task (off by default: such a tool is called plainly, and the server answers as it
    /// would any call). A tool that declares `"required"` is always called as a task, one that
    /// declares `"forbidden"` (or nothing) never; see the module doc's Tasks.
    /// [`tool_optional_task`](Self::tool_optional_task) sets one tool's own.
    pub fn optional_tasks(mut self, on: bool) -> ImportOptions {
        self.optional_tasks = on;
        self
    }

    /// [`optional_tasks`](Self::optional_tasks) for the server's tool `name` alone (the server's
    /// name, before renaming), in place of the import's setting.
    pub fn tool_optional_task(mut self, name: impl Into<String>, on: bool) -> ImportOptions {
        self.tool_optional_tasks.insert(name.into(), on);
        self
    }

    /// Whether the server's tool `remote`, declaring draft tasks optional, is called as a task.
    fn optional_task(&self, remote: &str) -> bool {
        self.tool_optional_tasks
            .get(remote)
            .copied()
            .unwrap_or(self.optional_tasks)
    }

    /// The time limits of a call of the server's tool `remote`.
    fn limits(&self, remote: &str) -> CallLimits {
        CallLimits {
            timeout: self
                .tool_timeouts
                .get(remote)
                .copied()
                .unwrap_or(self.call_timeout),
            max_total: self.tool_max_totals.get(remote).copied().or(self.max_total),
        }
    }

    /// Fails on limits that contradict each other: a maximum total time shorter than the timeout
    /// it bounds, or bounding a zero timeout.
    fn check(&self) -> Result<(), McpError> {
        let import = CallLimits {
            timeout: self.call_timeout,
            max_total: self.max_total,
        };
        let tools = self
            .tool_timeouts
            .keys()
            .chain(self.tool_max_totals.keys())
            .map(|name| (format!("tool `{}`", cut(name)), self.limits(name)));
        for (whose, limits) in std::iter::once(("the import".to_owned(), import)).chain(tools) {
            let Some(max_total) = limits.max_total else {
                continue;
            };
            if limits.timeout.is_zero() {
                return Err(McpError::InvalidOptions {
                    reason: format!(
                        "the timeout of {whose} is zero, so it cannot restart on progress \
                         (timeout_resets_on_progress)"
                    ),
                });
            }
            if max_total < limits.timeout {
                return Err(McpError::InvalidOptions {
                    reason: format!(
                        "the maximum total time of {whose} ({max_total:?}, \
                         timeout_resets_on_progress) is shorter than its timeout ({:?})",
                        limits.timeout
                    ),
                });
            }
        }
        Ok(())
    }

    /// The largest message taken from the server, in bytes ([`DEFAULT_MAX_MESSAGE_SIZE`], 16
    /// MiB, by default, on stdio and HTTP alike). A larger answer fails the call it answers with
    /// [`codes::MCP_MESSAGE_TOO_LARGE`], naming its size and the limit.
    pub fn max_message_size(mut self, bytes: usize) -> ImportOptions {
        self.max_message_size = bytes;
        self
    }

    /// Pass the child's stderr through to this process's (off by default).
    pub fn inherit_stderr(mut self, inherit: bool) -> ImportOptions {
        self.inherit_stderr = inherit;
        self
    }

    /// How long a stdio server has to exit once its stdin is closed, before it is sent
    /// `SIGTERM` ([`DEFAULT_EXIT_TIMEOUT`], 3 seconds, by default). Its stdin is closed when
    /// the connection ends: [`McpImport::close`], [`McpImport::reconnect`], the import dropped,
    /// the async runtime it runs on shut down, or the server's own end of the connection
    /// closed. See the module doc's Shutdown.
    pub fn exit_timeout(mut self, timeout: Duration) -> ImportOptions {
        self.exit_timeout = timeout;
        self
    }

    /// How long a stdio server has to exit after `SIGTERM`, before it is sent `SIGKILL`
    /// ([`DEFAULT_TERMINATE_TIMEOUT`], 2 seconds, by default). See the module doc's Shutdown.
    pub fn terminate_timeout(mut self, timeout: Duration) -> ImportOptions {
        self.terminate_timeout = timeout;
        self
    }

    /// What the server's tool annotations turn into ([`AnnotationPolicy::none`] by default:
    /// kept and served on, no policy). See [`crate::annotations`] for the table.
    pub fn annotation_policy(mut self, policy: AnnotationPolicy) -> ImportOptions {
        self.annotations = policy;
        self
    }

    /// The bounds of a stdio server's shutdown.
    fn shutdown(&self) -> crate::child::Shutdown {
        crate::child::Shutdown {
            exit: self.exit_timeout,
            terminate: self.terminate_timeout,
        }
    }
}

/// The schema of an imported tool's value when the server declares no output schema.
pub fn text_output_schema() -> Value {
    json!({
        "type": "string",
        "description": "The text of the MCP result: its text blocks joined with newlines; other blocks as bracketed notes."
    })
}

/// A server's tool that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The server's name for it.
    pub name: String,
    /// Why (a schema that does not compile, for instance).
    pub reason: String,
}

type Client = RunningService<RoleClient, Handler>;

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

/// A connection's client and what comes with it.
struct Connected {
    client: Client,
    pid: Option<u32>,
    gone: Option<crate::child::Gone>,
    progress: Arc<ProgressRoutes>,
    wire: Wire,
}

/// What a call's client span says of its connection: the transport, and over HTTP where the
/// session's id is noted once there is one.
#[derive(Clone)]
struct Wire {
    base: crate::trace::Wire,
    session: Option<crate::import_http::SessionSlot>,
}

impl Wire {
    /// The span's facts now, with the version the connection negotiated.
    fn now(&self, peer: &Peer<RoleClient>) -> crate::trace::Wire {
        let mut wire = self.base.clone();
        wire.version = peer
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_owned());
        wire.session = self
            .session
            .as_ref()
            .and_then(|slot| lock(slot).as_deref().map(str::to_owned));
        wire
    }
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
    /// ([`AnnotationPolicy::ask_destructive`]).
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

/// The import's pre-execute listener under [`AnnotationPolicy::ask_destructive`]: a call of one
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

/// The client side's handler: follows `list_changed`.
struct Handler {
    inner: Weak<Inner>,
}

/// Who this client says it is.
fn client_implementation() -> Implementation {
    let mut implementation = Implementation::default();
    implementation.name = "tools-mcp".to_owned();
    implementation.version = env!("CARGO_PKG_VERSION").to_owned();
    implementation
}

impl ClientHandler for Handler {
    /// What the `initialize` handshake sends: it is the 2025-11-25 handshake, so it asks for
    /// 2025-11-25 (rmcp's default would be the newest version, which `initialize` cannot give).
    fn get_info(&self) -> ClientConfig {
        // The tasks extension: a long-running tool may answer with a task, which the call awaits.
        let capabilities = ClientCapabilities::builder().enable_tasks().build();
        ClientConfig::new(capabilities, client_implementation())
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        spawn_refresh(self.inner.clone());
        std::future::ready(())
    }
}

fn spawn_refresh(weak: Weak<Inner>) {
    tokio::spawn(async move {
        let Some(inner) = weak.upgrade() else {
            return;
        };
        let outcome = refresh(&inner).await;
        *lock(&inner.last_error) = outcome.err().map(|e| {
            let report = report(&e);
            tracing::warn!(error = %report, "MCP tool list refresh failed");
            report
        });
    });
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

/// Has the child close every descriptor above stderr when its program starts: they are marked
/// close-on-exec between fork and exec (`close_range` with `CLOSE_RANGE_CLOEXEC`, else one
/// `fcntl` per possible descriptor), so the standard library's own exec-error pipe still works.
#[cfg(target_os = "linux")]
fn only_standard_streams(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: between fork and exec only async-signal-safe system calls are made, on
    // descriptors of the child's own table.
    unsafe {
        command.pre_exec(|| {
            if libc::close_range(
                3,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC as libc::c_int,
            ) == 0
            {
                return Ok(());
            }
            // Kernels before 5.11: every descriptor the limit allows, one call each.
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            let end = if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut limit) == 0 {
                limit.rlim_cur.min(1 << 20)
            } else {
                1 << 16
            };
            let end = libc::c_int::try_from(end).unwrap_or(libc::c_int::MAX);
            for fd in 3..end {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags >= 0 {
                    libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
                }
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn only_standard_streams(_command: &mut std::process::Command) {}

/// Connects to `source` within [`ImportOptions::connect_timeout`]; the handler follows
/// `list_changed` for the import `inner` (none for a dangling `Weak`).
async fn connect(
    source: &McpSource,
    options: &ImportOptions,
    inner: Weak<Inner>,
) -> Result<Connected, McpError> {
    let timeout = options.connect_timeout;
    // The person's step of an OAuth authorization is bounded by its own timeout, not this one.
    match crate::oauth::within(
        timeout,
        source.oauth_of(),
        connect_unbounded(source, options, inner),
    )
    .await
    {
        Some(connected) => connected,
        None => Err(McpError::Connect {
            server: source.describe(),
            source: ConnectError::Timeout { timeout },
        }),
    }
}

/// Connects with the options' protocol: over stdio, one process (probed first under
/// [`Protocol::Auto`]); over HTTP, a `server/discover` attempt bounded by the probe timeout and,
/// if it fails, the `initialize` handshake on a fresh connection. rmcp's own `Auto` mode is not
/// used: its probe waits a fixed 10 seconds and then fails when the probe's answer comes late.
async fn connect_unbounded(
    source: &McpSource,
    options: &ImportOptions,
    inner: Weak<Inner>,
) -> Result<Connected, McpError> {
    let server = source.describe();
    let connect_error = |why: ConnectError| McpError::Connect {
        server: server.clone(),
        source: why,
    };
    let handshake_error = |e| source.auth_or(connect_error(ConnectError::Handshake(Box::new(e))));
    let handler = || Handler {
        inner: inner.clone(),
    };
    let protocol = options.protocol;
    let progress = Arc::new(ProgressRoutes::default());
    match source {
        McpSource::Stdio { .. } => {
            let mut transport = spawn(source, options)?;
            let pid = transport.child_id();
            let gone = transport.child_gone();
            let lifecycle = match protocol {
                Protocol::Auto => match probe(&mut transport, options.probe_timeout).await {
                    Ok(Probe::Modern) => Protocol::Discover.lifecycle(),
                    Ok(Probe::Legacy) => Protocol::Initialize.lifecycle(),
                    Err(e) => return Err(connect_error(e)),
                },
                other => other.lifecycle(),
            };
            let client = handler()
                .serve_with_lifecycle(ProgressTap::new(transport, progress.clone()), lifecycle)
                .await
                .map_err(handshake_error)?;
            Ok(Connected {
                client,
                pid,
                gone,
                progress,
                wire: Wire {
                    base: crate::trace::Wire::stdio(),
                    session: None,
                },
            })
        }
        McpSource::Http { url, auth } => {
            let session = crate::import_http::SessionSlot::default();
            let headers = auth.header_map().map_err(|e| McpError::AuthFailed {
                server: server.clone(),
                source: e,
            })?;
            let attempt = |lifecycle: ClientLifecycleMode| {
                let client =
                    LimitedClient::new(options.max_message_size).noting_session(session.clone());
                let mut config = client.config(url).custom_headers(headers.clone());
                if let Some(bearer) = &auth.bearer {
                    config = config.auth_header(bearer.expose());
                }
                let tap = progress.clone();
                let handler = handler();
                let serve: futures::future::BoxFuture<'_, _> = match &auth.oauth {
                    Some(oauth) => {
                        let client = crate::oauth::Authorized {
                            inner: client,
                            oauth: oauth.clone(),
                            url: url.as_str().into(),
                        };
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        Box::pin(
                            handler
                                .serve_with_lifecycle(ProgressTap::new(transport, tap), lifecycle),
                        )
                    }
                    None => {
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        Box::pin(
                            handler
                                .serve_with_lifecycle(ProgressTap::new(transport, tap), lifecycle),
                        )
                    }
                };
                serve
            };
            let client = match protocol {
                Protocol::Auto => {
                    let probed = crate::oauth::within(
                        options.probe_timeout,
                        auth.oauth.as_ref(),
                        attempt(Protocol::Discover.lifecycle()),
                    )
                    .await;
                    match probed {
                        Some(Ok(client)) => client,
                        Some(Err(first)) => attempt(Protocol::Initialize.lifecycle())
                            .await
                            .map_err(|second| {
                                source.auth_or(connect_error(ConnectError::Fallback {
                                    discover: Box::new(first),
                                    initialize: Box::new(second),
                                }))
                            })?,
                        None => attempt(Protocol::Initialize.lifecycle())
                            .await
                            .map_err(handshake_error)?,
                    }
                }
                other => attempt(other.lifecycle()).await.map_err(handshake_error)?,
            };
            Ok(Connected {
                client,
                pid: None,
                gone: None,
                progress,
                wire: Wire {
                    base: crate::trace::Wire::http(),
                    session: Some(session),
                },
            })
        }
    }
}

/// Starts a stdio server, its stdin and stdout the transport's, its other descriptors closed,
/// its process stopped as `crate::child` says when the transport closes or drops.
fn spawn(
    source: &McpSource,
    options: &ImportOptions,
) -> Result<LineTransport<RoleClient>, McpError> {
    let McpSource::Stdio { program, args, env } = source else {
        return Err(McpError::Spawn {
            command: source.describe(),
            source: SpawnError::NotStdio,
        });
    };
    let spawn_error = |why: SpawnError| McpError::Spawn {
        command: source.describe(),
        source: why,
    };
    let mut command = std::process::Command::new(program);
    command
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if options.inherit_stderr {
            Stdio::inherit()
        } else {
            Stdio::null()
        });
    only_standard_streams(&mut command);
    let (child, stdin, stdout) = crate::child::ServerProcess::spawn(command, options.shutdown())
        .map_err(|e| spawn_error(SpawnError::Io(e)))?;
    // Registered with this runtime's reactor; dropping them closes the pipes.
    let stdin =
        tokio::process::ChildStdin::from_std(stdin).map_err(|e| spawn_error(SpawnError::Io(e)))?;
    let stdout = tokio::process::ChildStdout::from_std(stdout)
        .map_err(|e| spawn_error(SpawnError::Io(e)))?;
    Ok(LineTransport::new(
        stdout,
        stdin,
        options.max_message_size,
        "ImportOptions::max_message_size",
        false,
    )
    .with_child(child))
}

/// What the `server/discover` probe found.
enum Probe {
    /// The server offers 2026-07-28.
    Modern,
    /// It refused the probe, offers no 2026-07-28, or did not answer in time.
    Legacy,
}

/// The id of the probe: a string, which rmcp's own numeric ids never are.
const PROBE_ID: &str = "tools-mcp-probe";

/// Sends `server/discover` on a stdio transport and waits up to `bound` for the answer. A server
/// that does not answer in time is taken as legacy, and a late answer is dropped.
async fn probe(
    transport: &mut LineTransport<RoleClient>,
    bound: Duration,
) -> Result<Probe, ConnectError> {
    let id = RequestId::String(PROBE_ID.into());
    let meta = RequestMetaObject::with_client_context(
        ProtocolVersion::V_2026_07_28,
        client_implementation(),
        ClientCapabilities::default(),
    );
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover.extensions.insert(meta);
    transport
        .send(ClientJsonRpcMessage::request(
            ClientRequest::DiscoverRequest(discover),
            id.clone(),
        ))
        .await
        .map_err(ConnectError::ProbeSend)?;
    let answer = async {
        loop {
            match transport.receive().await {
                None => {
                    return Err(ConnectError::ProbeClosed);
                }
                Some(JsonRpcMessage::Response(r)) if r.id == id => {
                    let modern = matches!(
                        &r.result,
                        ServerResult::DiscoverResult(d)
                            if d.supported_versions.contains(&ProtocolVersion::V_2026_07_28)
                    );
                    return Ok(if modern { Probe::Modern } else { Probe::Legacy });
                }
                Some(JsonRpcMessage::Error(e)) if e.id.as_ref().is_none_or(|e| *e == id) => {
                    return Ok(Probe::Legacy);
                }
                // Logging and other traffic before an answer.
                Some(_) => {}
            }
        }
    };
    match tokio::time::timeout(bound, answer).await {
        Ok(outcome) => outcome,
        Err(_) => {
            tracing::debug!(?bound, "no answer to server/discover; using initialize");
            transport.ignore_answers_to(id);
            Ok(Probe::Legacy)
        }
    }
}

/// On a 2026-07-28 connection, list changes come on a `subscriptions/listen` stream.
fn listen_for_changes(weak: Weak<Inner>, peer: Peer<RoleClient>) {
    tokio::spawn(async move {
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = match peer.listen(filter).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "MCP server offers no list_changed subscription");
                return;
            }
        };
        while let Ok(Some(_)) = subscription.next().await {
            if weak.strong_count() == 0 {
                return;
            }
            spawn_refresh(weak.clone());
        }
    });
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

/// At most this many `tools/list` pages are read (a server that never stops paging is an error).
pub const MAX_PAGES: usize = 1_000;
/// At most this many tools are imported from one server.
pub const MAX_TOOLS: usize = 10_000;

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

/// Every page of `tools/list`, bounded by [`MAX_PAGES`] and [`MAX_TOOLS`], each page by
/// `timeout`.
async fn list_pages(peer: &Peer<RoleClient>, timeout: Duration) -> Result<Vec<Tool>, RequestError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor
            .take()
            .map(|c| rmcp::model::PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = tokio::time::timeout(timeout, peer.list_tools(params))
            .await
            .map_err(|_| RequestError::Timeout { timeout })?
            .map_err(|e| RequestError::Service(Box::new(e)))?;
        tools.extend(page.tools);
        if tools.len() > MAX_TOOLS {
            return Err(RequestError::TooManyTools);
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(tools),
        }
    }
    Err(RequestError::TooManyPages)
}

async fn refresh(inner: &Arc<Inner>) -> Result<(), McpError> {
    let _one_at_a_time = inner.refresh.lock().await;
    let server = inner.source.describe();
    let Some(peer) = current_peer(inner) else {
        return Err(McpError::Request {
            server,
            method: "tools/list",
            source: RequestError::NotConnected,
        });
    };
    let listed = list_pages(&peer, inner.options.call_timeout)
        .await
        .map_err(|source| {
            inner.source.auth_or(McpError::Request {
                server: server.clone(),
                method: "tools/list",
                source,
            })
        })?;

    // The wanted state: remote name -> (local name, tool).
    let mut wanted: BTreeMap<String, (String, Tool)> = BTreeMap::new();
    let mut by_local: HashMap<String, String> = HashMap::new();
    for tool in listed {
        let remote = tool.name.to_string();
        let Some(local) = (inner.options.naming)(&remote) else {
            continue;
        };
        if let Err(source) = tools_runtime::schema::validate_tool_name(&local) {
            return Err(McpError::InvalidName {
                remote: cut(&remote).into_owned(),
                local: cut(&local).into_owned(),
                source,
            });
        }
        if let Some(other) = by_local.insert(local.clone(), remote.clone()) {
            return Err(McpError::NameCollision {
                details: format!(
                    "the server's tools `{}` and `{}` both map to `{}`",
                    cut(&other),
                    cut(&remote),
                    cut(&local)
                ),
            });
        }
        if wanted.insert(remote.clone(), (local, tool)).is_some() {
            return Err(McpError::NameCollision {
                details: format!("the server lists `{}` twice", cut(&remote)),
            });
        }
    }

    // Remove what vanished or changed.
    let mut removed = Vec::new();
    {
        let mut tools = lock(&inner.tools);
        let stale: Vec<String> = tools
            .iter()
            .filter(|(remote, have)| match wanted.get(*remote) {
                None => true,
                Some((local, tool)) => *local != have.local || *tool != have.tool,
            })
            .map(|(remote, _)| remote.clone())
            .collect();
        for remote in stale {
            if let Some(t) = tools.remove(&remote) {
                lock(&inner.asking).remove(&t.local);
                removed.push(t);
            }
        }
    }
    for t in removed {
        t.registration.dispose();
    }

    // Register what is new (or changed).
    let mut skipped = Vec::new();
    let mut first_error = None;
    for (remote, (local, tool)) in wanted {
        if lock(&inner.tools).contains_key(&remote) {
            continue;
        }
        let definition = match definition(inner, &remote, &local, &tool) {
            Ok((d, asks)) => {
                if asks {
                    lock(&inner.asking).insert(local.clone());
                }
                d
            }
            Err(reason) => {
                tracing::warn!(tool = %remote, %reason, "MCP tool not imported");
                skipped.push(Skipped {
                    name: remote,
                    reason,
                });
                continue;
            }
        };
        match inner.scope.register(definition) {
            Ok(registration) => {
                lock(&inner.tools).insert(
                    remote,
                    Imported {
                        local,
                        tool,
                        registration,
                    },
                );
            }
            Err(tools_runtime::error::RegistryError::Duplicate { name, .. }) => {
                first_error.get_or_insert(McpError::NameCollision {
                    details: format!(
                        "`{}` (the server's `{}`) is already registered in the scope",
                        cut(&name),
                        cut(&remote)
                    ),
                });
            }
            Err(source) => {
                first_error.get_or_insert(McpError::Register {
                    name: local,
                    source,
                });
            }
        }
    }
    *lock(&inner.skipped) = skipped;
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn definition(
    inner: &Arc<Inner>,
    remote: &str,
    local: &str,
    tool: &Tool,
) -> Result<(ToolDefinition, bool), String> {
    let input_schema = Value::Object((*tool.input_schema).clone());
    let input = FullSchema::compile(&input_schema)
        .map_err(|e| format!("its input schema cannot be used: {e}"))?;
    let (output, output_check) = match &tool.output_schema {
        Some(schema) => {
            let schema = Value::Object((**schema).clone());
            let check = FullSchema::compile(&schema)
                .map_err(|e| format!("its output schema cannot be used: {e}"))?;
            (Output::json(schema).tool_validated(), Some(Arc::new(check)))
        }
        None => (Output::json(text_output_schema()), None),
    };
    let description = tool
        .description
        .as_deref()
        .map(str::to_owned)
        .or_else(|| tool.title.clone())
        .unwrap_or_default();
    let limits = inner.options.limits(remote);
    let as_task = match crate::tasks_draft::task_support(tool) {
        Some(TaskSupport::Required) => true,
        Some(TaskSupport::Optional) => inner.options.optional_task(remote),
        Some(TaskSupport::Forbidden) | None => false,
    };
    let annotations = tool
        .annotations
        .as_ref()
        .and_then(|a| crate::annotations::imported(remote, a));
    let treatment = inner
        .options
        .annotations
        .treatment(&Hints::of(annotations.as_ref()));
    let call = Arc::new(RemoteCall {
        inner: Arc::downgrade(inner),
        remote: remote.to_owned(),
        input,
        output: output_check,
        limits,
        as_task,
        retry: treatment.retry,
    });
    let mut builder = ToolDefinition::raw(local)
        .description(description)
        .input_schema(input_schema)
        .output(output);
    if let Some(annotations) = annotations {
        builder = builder.annotations(annotations);
    }
    if treatment.concurrency_safe {
        builder = builder.concurrency_safe(|_| true);
    }
    if as_task {
        // Its calls run as tasks: a server of ours offers it as one too.
        builder = builder.long_running();
    }
    if !limits.timeout.is_zero() {
        builder = builder.timeout(limits.timeout);
        if let Some(max_total) = limits.max_total {
            builder = builder.timeout_resets_on_progress(max_total);
        }
    }
    builder
        .execute(move |args: Arc<Value>, ctx: ToolRunContext| {
            let call = call.clone();
            async move { call.run(&args, &ctx).await }
        })
        .build()
        .map(|d| (d, treatment.ask))
        .map_err(|e| e.to_string())
}

/// The time limits of an imported tool's calls.
#[derive(Debug, Clone, Copy)]
struct CallLimits {
    /// How long the server may take to answer (or, with `max_total`, to report progress).
    timeout: Duration,
    /// With a maximum total time, the timeout restarts at each progress report.
    max_total: Option<Duration>,
}

/// Which limit a call ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    /// The timeout, which does not restart.
    Timeout,
    /// The timeout that restarts on progress: no report for that long.
    NoProgress,
    /// The maximum total time.
    MaxTotal,
}

/// The deadline of one call under its [`CallLimits`], moved on by progress.
struct Deadline {
    limits: CallLimits,
    start: tokio::time::Instant,
    quiet_until: tokio::time::Instant,
}

impl Deadline {
    fn start(limits: CallLimits) -> Deadline {
        let start = tokio::time::Instant::now();
        Deadline {
            limits,
            start,
            quiet_until: start + limits.timeout,
        }
    }

    /// When the call runs out of time, and which limit it is then.
    fn next(&self) -> (tokio::time::Instant, Limit) {
        match self.limits.max_total {
            None => (self.quiet_until, Limit::Timeout),
            Some(max) if self.start + max <= self.quiet_until => {
                (self.start + max, Limit::MaxTotal)
            }
            Some(_) => (self.quiet_until, Limit::NoProgress),
        }
    }

    /// The call made progress: a timeout that restarts on progress restarts now.
    fn progressed(&mut self) {
        if self.limits.max_total.is_some() {
            self.quiet_until = tokio::time::Instant::now() + self.limits.timeout;
        }
    }

    /// [`progressed`](Self::progressed), with `deadline` moved to the call's new end: the limit
    /// it then is.
    fn moved(&mut self, deadline: std::pin::Pin<&mut tokio::time::Sleep>) -> Limit {
        self.progressed();
        let (until, limit) = self.next();
        deadline.reset(until);
        limit
    }

    /// The longest the call may take: its maximum total time, or its timeout when that does
    /// not restart.
    fn bound(limits: CallLimits) -> Duration {
        limits.max_total.unwrap_or(limits.timeout)
    }

    /// The call's error for running into `limit`; `task` is the MCP task it ran as, if any.
    fn error(&self, limit: Limit, tool: &str, task: Option<&str>) -> ToolError {
        let told = match task {
            None => "the call was cancelled and the server was told".to_owned(),
            Some(id) => format!(
                "it ran as the MCP task `{}`, which was cancelled (tasks/cancel)",
                cut(id)
            ),
        };
        let message = match limit {
            Limit::Timeout => format!(
                "the MCP server did not answer `{tool}` within {:?} (its timeout; set by \
                 ImportOptions::call_timeout or tool_timeout); {told}",
                self.limits.timeout
            ),
            Limit::NoProgress => format!(
                "the MCP server reported no progress on `{tool}` for {} ms (its timeout, which \
                 restarts at each progress report; set by ImportOptions::call_timeout or \
                 tool_timeout); {told}",
                self.limits.timeout.as_millis()
            ),
            Limit::MaxTotal => format!(
                "the MCP server did not finish `{tool}` within its maximum total time of {} ms \
                 (ImportOptions::timeout_resets_on_progress or \
                 tool_timeout_resets_on_progress); {told}",
                self.limits.max_total.unwrap_or_default().as_millis()
            ),
        };
        ToolError::with_code(codes::MCP_TIMEOUT, message)
    }
}

/// What an imported tool's body holds.
struct RemoteCall {
    inner: Weak<Inner>,
    remote: String,
    input: FullSchema,
    output: Option<Arc<FullSchema>>,
    /// How long the server may take.
    limits: CallLimits,
    /// Whether its calls are task-augmented (the 2025-11-25 draft's tasks).
    as_task: bool,
    /// How often a call that timed out or lost its server is sent again
    /// ([`AnnotationPolicy::retry_idempotent`]).
    retry: Retry,
}

/// A call's failure, and its `error.type` on the call's client span (the OpenTelemetry MCP
/// conventions' values: `tool_error` for an `isError` result or a failed task, a JSON-RPC
/// error's code; otherwise the failure's own code).
struct Failed {
    error: ToolError,
    kind: std::borrow::Cow<'static, str>,
}

impl From<ToolError> for Failed {
    fn from(error: ToolError) -> Failed {
        let kind = std::borrow::Cow::Owned(error.code().to_owned());
        Failed { error, kind }
    }
}

impl Failed {
    /// The server's tool failed (`isError`, or its task failed).
    fn tool_error(error: ToolError) -> Failed {
        Failed {
            error,
            kind: std::borrow::Cow::Borrowed("tool_error"),
        }
    }
}

impl RemoteCall {
    async fn run(&self, args: &Value, ctx: &ToolRunContext) -> Result<Value, ToolError> {
        if let Err(violations) = self.input.validate(args) {
            return Err(ToolError::with_code(
                tools_runtime::codes::INVALID_ARGS,
                format!("invalid arguments for `{}`: {violations}", ctx.name()),
            ));
        }
        let Some(map) = args.as_object() else {
            return Err(ToolError::with_code(
                tools_runtime::codes::INVALID_ARGS,
                "the arguments of an MCP tool must be a JSON object",
            ));
        };
        let mut attempt = 0;
        loop {
            let error = match self.send(map, ctx).await {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            let Some(backoff) = self.retry.next(attempt, error.code()) else {
                return Err(error);
            };
            attempt += 1;
            tracing::debug!(
                tool = %ctx.name(),
                attempt,
                code = %error.code(),
                ?backoff,
                "retrying an idempotent MCP tool's call"
            );
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => return Err(error),
                () = tokio::time::sleep(backoff) => {}
            }
        }
    }

    /// One send of the call, in a client span of its own.
    async fn send(
        &self,
        map: &serde_json::Map<String, Value>,
        ctx: &ToolRunContext,
    ) -> Result<Value, ToolError> {
        let gone = |why: &str| server_gone(ctx.name(), why);
        let Some(inner) = self.inner.upgrade() else {
            return Err(gone("the import was closed"));
        };
        let Some((peer, routes, wire)) = current(&inner) else {
            return Err(gone("it exited or the connection broke"));
        };
        drop(inner);
        // The request's client span, the child of this call's `execute_tool` span; the trace
        // context the request carries is its own, so the server's span is its child.
        let span = crate::trace::client_span(&self.remote, &wire);
        let outcome =
            crate::trace::within(span.clone(), self.request(map, peer, routes, ctx, &span)).await;
        outcome.map_err(|Failed { error, kind }| {
            crate::trace::failed(&span, &kind);
            error
        })
    }

    /// The `tools/call` itself, in its client span `span`: sent, awaited (as a task when the
    /// answer is one), and its result read.
    async fn request(
        &self,
        map: &serde_json::Map<String, Value>,
        peer: Peer<RoleClient>,
        routes: Arc<ProgressRoutes>,
        ctx: &ToolRunContext,
        span: &tracing::Span,
    ) -> Result<Value, Failed> {
        let gone = |why: &str| server_gone(ctx.name(), why);
        let mut params = CallToolRequestParams::new(self.remote.clone());
        params.arguments = Some(map.clone());
        // The importing call's trace context, for the server's span (feature `otel`).
        crate::trace::inject(&mut params);
        let request = if self.as_task {
            task_augmented(params, self.limits)
        } else {
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        };
        let aborted = || {
            ToolError::with_code(
                tools_runtime::codes::ABORTED,
                "the call was cancelled; the MCP server was told",
            )
        };
        let mut limits = Deadline::start(self.limits);
        let (until, mut limit) = limits.next();
        let deadline = tokio::time::sleep_until(until);
        tokio::pin!(deadline);
        let sent = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => return Err(aborted().into()),
            () = &mut deadline => return Err(limits.error(limit, ctx.name(), None).into()),
            sent = peer.send_request_with_option(request, PeerRequestOptions::no_options()) => sent,
        };
        let handle = match sent {
            Ok(handle) => handle,
            Err(e) => return Err(call_failed(e, ctx.name(), &gone)),
        };
        crate::trace::sent(span, &handle.id);
        // From here, leaving before the answer (cancelled, past the timeout, or this future
        // dropped) sends `notifications/cancelled`, or `tasks/cancel` when the answer is a task
        // after all (see `Abandoned`).
        let mut progress = routes.claim(&handle.progress_token);
        let mut abandoned = Abandoned::request(peer.clone(), handle, self.as_task);
        let outcome = loop {
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => return Err(aborted().into()),
                () = &mut deadline => return Err(limits.error(limit, ctx.name(), None).into()),
                outcome = abandoned.answer() => break outcome,
                Some(update) = progress.next() => {
                    if let Update::Progress(report) = update
                        && forward_progress(ctx, &report)
                    {
                        limit = limits.moved(deadline.as_mut());
                    }
                }
            }
        };
        drop(abandoned);
        // A long-running tool may answer with a task (the server's choice under SEP-2663, the
        // draft's for a task-augmented call): await it.
        let outcome = match outcome.as_ref().ok().and_then(TaskState::created) {
            Some((dialect, task)) => {
                let result = await_task(&peer, dialect, task, ctx, &mut limits, progress).await?;
                Ok(ServerResult::CallToolResult(result))
            }
            None => {
                // The reports the server sent before its answer, still queued.
                while let Some(update) = progress.queued() {
                    if let Update::Progress(report) = update {
                        let _taken = forward_progress(ctx, &report);
                    }
                }
                drop(progress);
                outcome
            }
        };
        let result = match outcome.map(call_tool_result) {
            Ok(Ok(result)) => result,
            Ok(Err(unexpected)) => {
                return Err(ToolError::with_code(
                    codes::MCP_INVALID_RESULT,
                    format!(
                        "the MCP server answered `{}` with {unexpected}, not a tools/call result",
                        ctx.name()
                    ),
                )
                .into());
            }
            Err(e) => return Err(call_failed(e, ctx.name(), &gone)),
        };
        if result.is_error == Some(true) {
            let mut text = content_text(&result.content);
            if text.is_empty()
                && let Some(s) = &result.structured_content
            {
                text = serde_json::to_string(s).unwrap_or_default();
            }
            if text.is_empty() {
                text = "the MCP server reported an error without a message".to_owned();
            }
            // The pipeline writes a failure as `Error: <message>`; a server's text that says
            // `Error: ` already (as a served scope's failures do) is not said twice.
            if let Some(rest) = text.strip_prefix("Error: ") {
                text = rest.to_owned();
            }
            return Err(Failed::tool_error(ToolError::with_code(
                codes::MCP_TOOL_ERROR,
                text,
            )));
        }
        match &self.output {
            Some(check) => {
                let Some(value) = result.structured_content else {
                    return Err(ToolError::with_code(
                        codes::MCP_INVALID_RESULT,
                        "the MCP server declared an output schema but returned no structuredContent",
                    )
                    .into());
                };
                if let Err(violations) = check.validate(&value) {
                    return Err(ToolError::with_code(
                        codes::MCP_INVALID_RESULT,
                        format!(
                            "the MCP server's result does not match its output schema: {violations}"
                        ),
                    )
                    .into());
                }
                Ok(value)
            }
            None => Ok(Value::String(content_text(&result.content))),
        }
    }
}

/// The bounds of the interval between two `tasks/get` of a task; the server's `pollIntervalMs`
/// (the draft's `pollInterval`) is held to them, 500 ms without one.
const POLL_MIN: Duration = Duration::from_millis(50);
const POLL_MAX: Duration = Duration::from_secs(5);
const POLL_DEFAULT: Duration = Duration::from_millis(500);

fn poll_interval(suggested: Option<u64>) -> Duration {
    suggested
        .map(Duration::from_millis)
        .unwrap_or(POLL_DEFAULT)
        .clamp(POLL_MIN, POLL_MAX)
}

/// A task-augmented `tools/call` of the 2025-11-25 draft: `params` with `task` added, its `ttl`
/// the longest the call may wait (none for a zero bound: the server's choice). The request's
/// `_meta` (trace context) goes where rmcp adds the progress token.
fn task_augmented(mut params: CallToolRequestParams, limits: CallLimits) -> ClientRequest {
    let meta = params.meta.take();
    let mut task = serde_json::Map::new();
    let bound = Deadline::bound(limits);
    if !bound.is_zero() {
        let ttl = u64::try_from(bound.as_millis()).unwrap_or(u64::MAX);
        task.insert("ttl".to_owned(), Value::from(ttl));
    }
    let mut body = match serde_json::to_value(&params) {
        Ok(Value::Object(body)) => body,
        _ => serde_json::Map::new(),
    };
    body.insert("task".to_owned(), Value::Object(task));
    let mut request = rmcp::model::CustomRequest::new("tools/call", Some(Value::Object(body)));
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
    ClientRequest::CustomRequest(request)
}

/// A call awaiting its task: what it has seen of it (the last state taken, the polling
/// interval, the status messages it reported as progress) and the call's limits.
struct Awaiting<'a> {
    peer: &'a Peer<RoleClient>,
    ctx: &'a ToolRunContext,
    limits: &'a mut Deadline,
    dialect: Dialect,
    id: String,
    /// When the call runs out of time, and which limit that is.
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    limit: Limit,
    /// `tasks/cancel` unless disarmed.
    cancel: Abandoned,
    /// Whether the call was cancelled or ran out of time (then `tasks/cancel` goes, whatever
    /// the task's state).
    stopped: bool,
    /// The last state taken (without its inline result).
    seen: Option<TaskState>,
    interval: Duration,
    /// Whether the server sent `notifications/progress` for the call (then its status messages
    /// are no longer reports).
    reported: bool,
    /// How many status messages were reported.
    statuses: u32,
    last_message: Option<String>,
}

impl Awaiting<'_> {
    /// `future`'s output, unless the call is cancelled or runs out of time first.
    async fn within<F: Future>(&mut self, future: F) -> Result<F::Output, Failed> {
        let outcome = tokio::select! {
            biased;
            () = self.ctx.cancellation().cancelled() => Err(self.aborted().into()),
            () = &mut self.deadline => Err(self.timed_out().into()),
            output = future => Ok(output),
        };
        self.stopped |= outcome.is_err();
        outcome
    }

    fn aborted(&self) -> ToolError {
        ToolError::with_code(
            tools_runtime::codes::ABORTED,
            format!(
                "the call was cancelled; the MCP server was told (tasks/cancel of `{}`)",
                cut(&self.id)
            ),
        )
    }

    fn timed_out(&self) -> ToolError {
        self.limits
            .error(self.limit, self.ctx.name(), Some(&self.id))
    }

    fn failed(&self, error: ServiceError) -> Failed {
        call_failed(error, self.ctx.name(), &|why| {
            server_gone(self.ctx.name(), why)
        })
    }

    /// Takes `state` when it is this task's and later than the last
    /// ([`TaskState::later_than`]): it counts as progress for the call's limits, sets the
    /// polling interval, and (draft) its new status message becomes a progress report, numbered
    /// 1, 2, ... Gives the state taken.
    fn take(&mut self, state: TaskState) -> Option<TaskState> {
        let terminal = state.status.is_terminal();
        if state.id != self.id || !state.later_than(self.seen.as_ref()) {
            return None;
        }
        self.seen = Some(TaskState {
            result: None,
            error: None,
            ..state.clone()
        });
        self.interval = poll_interval(state.poll_ms);
        self.limit = self.limits.moved(self.deadline.as_mut());
        if self.dialect == Dialect::Draft
            && !self.reported
            && !terminal
            && let Some(message) = &state.message
            && self.last_message.as_ref() != Some(message)
        {
            self.last_message = Some(message.clone());
            self.statuses += 1;
            let progress = Progress::new(f64::from(self.statuses)).with_message(message.clone());
            let _taken = take_progress(self.ctx, progress);
        }
        Some(state)
    }

    /// One update from the server: a progress report goes to the call (and counts as
    /// progress), a status is taken as [`take`](Self::take) says. Gives a status taken.
    fn update(&mut self, update: Update) -> Option<TaskState> {
        match update {
            Update::Progress(progress) => {
                self.reported = true;
                if forward_progress(self.ctx, &progress) {
                    self.limit = self.limits.moved(self.deadline.as_mut());
                }
                None
            }
            Update::Status(state) => self.take(state),
        }
    }

    /// The task's state from `tasks/get`, taken as [`take`](Self::take) says.
    async fn poll(&mut self) -> Result<Option<TaskState>, Failed> {
        use rmcp::model::{GetTaskParams, GetTaskRequest};
        let get = GetTaskRequest::new(GetTaskParams::new(self.id.clone()));
        let peer = self.peer;
        let got = self
            .within(peer.send_request(ClientRequest::GetTaskRequest(get)))
            .await?
            .map_err(|e| self.failed(e))?;
        let got = TaskState::got(&got).ok_or_else(|| {
            ToolError::with_code(
                codes::MCP_INVALID_RESULT,
                format!(
                    "the MCP server answered tasks/get for `{}` with no task",
                    self.ctx.name()
                ),
            )
        })?;
        Ok(self.take(got))
    }

    /// The call's outcome once its task is in `state`; `None` while the task works.
    async fn outcome(&mut self, state: &mut TaskState) -> Option<Result<CallToolResult, Failed>> {
        use rmcp::model::TaskStatus;
        let tool = self.ctx.name();
        let outcome = match state.status {
            TaskStatus::Completed => match self.dialect {
                Dialect::Extension => {
                    let result = Value::Object(state.result.take().unwrap_or_default());
                    serde_json::from_value::<CallToolResult>(result).map_err(|e| {
                        ToolError::with_code(
                            codes::MCP_INVALID_RESULT,
                            format!(
                                "the MCP task of `{tool}` completed with no tools/call result: {}",
                                cut(&e.to_string())
                            ),
                        )
                        .into()
                    })
                }
                Dialect::Draft => self.fetch_result().await,
            },
            TaskStatus::Failed => {
                let words = state
                    .error
                    .as_ref()
                    .and_then(|error| error.get("message"))
                    .and_then(Value::as_str)
                    .or(state.message.as_deref())
                    .unwrap_or("no message");
                Err(Failed::tool_error(ToolError::with_code(
                    codes::MCP_TOOL_ERROR,
                    format!("the MCP task of `{tool}` failed: {}", cut(words)),
                )))
            }
            TaskStatus::Cancelled => {
                let why = state
                    .message
                    .as_deref()
                    .map(|m| format!(": {}", cut(m)))
                    .unwrap_or_default();
                Err(Failed::tool_error(ToolError::with_code(
                    codes::MCP_TOOL_ERROR,
                    format!("the MCP server cancelled the task of `{tool}`{why}"),
                )))
            }
            TaskStatus::InputRequired => {
                // Left armed: the task is cancelled.
                return Some(Err(Failed::tool_error(ToolError::with_code(
                    codes::MCP_TOOL_ERROR,
                    format!(
                        "the MCP task of `{tool}` asks for input, which an imported tool cannot \
                         give; the task was cancelled"
                    ),
                ))));
            }
            _ => return None,
        };
        if !self.stopped {
            self.cancel.disarm();
        }
        Some(outcome)
    }

    /// The draft's `tasks/result` of the completed task, read as a `tools/call` answer is.
    async fn fetch_result(&mut self) -> Result<CallToolResult, Failed> {
        let request = rmcp::model::CustomRequest::new(
            crate::tasks_draft::RESULT_METHOD,
            Some(json!({"taskId": self.id})),
        );
        let peer = self.peer;
        let fetched = self
            .within(peer.send_request(ClientRequest::CustomRequest(request)))
            .await?
            .map_err(|e| self.failed(e))?;
        call_tool_result(fetched).map_err(|unexpected| {
            ToolError::with_code(
                codes::MCP_INVALID_RESULT,
                format!(
                    "the MCP server answered tasks/result of `{}` with {unexpected}, not a \
                     tools/call result",
                    self.ctx.name()
                ),
            )
            .into()
        })
    }
}

/// Awaits the MCP task a server answered a call with, in its dialect: `tasks/get` at the
/// interval the task suggests, and (draft) the server's `notifications/progress` and
/// `notifications/tasks/status` for it as they come on `updates`, until the task ends, within
/// the call's limits (a newer state counts as progress). A completed task's result is inline
/// (SEP-2663) or fetched with `tasks/result` (draft). Leaving early (cancelled, past a limit, the
/// future dropped, a task that asks for input) sends `tasks/cancel`.
async fn await_task(
    peer: &Peer<RoleClient>,
    dialect: Dialect,
    first: TaskState,
    ctx: &ToolRunContext,
    limits: &mut Deadline,
    mut updates: Claimed,
) -> Result<CallToolResult, Failed> {
    let (until, limit) = limits.next();
    let id = first.id.clone();
    let mut awaiting = Awaiting {
        peer,
        ctx,
        limits,
        dialect,
        cancel: Abandoned::task(peer.clone(), id.clone()),
        stopped: false,
        id,
        deadline: Box::pin(tokio::time::sleep_until(until)),
        limit,
        seen: None,
        interval: POLL_DEFAULT,
        reported: false,
        statuses: 0,
        last_message: None,
    };
    // What came with or before the answer, in order, then the state the answer gave.
    let mut latest = None;
    while let Some(update) = updates.queued() {
        latest = awaiting.update(update).or(latest);
    }
    let mut state = awaiting.take(first).or(latest).ok_or_else(|| {
        ToolError::with_code(
            codes::MCP_INVALID_RESULT,
            format!(
                "the MCP server answered `{}` with a task without a state",
                ctx.name()
            ),
        )
    })?;
    let mut poll = Box::pin(tokio::time::sleep(awaiting.interval));
    loop {
        if let Some(outcome) = awaiting.outcome(&mut state).await {
            return outcome;
        }
        let next = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => return Err(awaiting.aborted().into()),
            () = &mut awaiting.deadline => return Err(awaiting.timed_out().into()),
            Some(update) = updates.next() => awaiting.update(update),
            () = &mut poll => {
                let taken = awaiting.poll().await?;
                poll.as_mut().reset(tokio::time::Instant::now() + awaiting.interval);
                taken
            }
        };
        if let Some(next) = next {
            state = next;
        }
    }
}

/// A server's progress report as a report of the local call; whether it was taken (see
/// [`take_progress`]).
fn forward_progress(ctx: &ToolRunContext, report: &ProgressNotificationParam) -> bool {
    let mut progress = Progress::new(report.progress);
    if let Some(total) = report.total {
        progress = progress.with_total(total);
    }
    if let Some(message) = &report.message {
        progress = progress.with_message(message.clone());
    }
    take_progress(ctx, progress)
}

/// `progress` as a report of the local call; whether it was taken. One the pipeline refuses
/// (not finite, not increasing, after the call ended) is dropped with a warning.
fn take_progress(ctx: &ToolRunContext, progress: Progress) -> bool {
    match ctx.progress(progress) {
        Ok(()) => true,
        Err(refused) => {
            tracing::warn!(
                tool = ctx.name(),
                code = refused.code(),
                error = %refused,
                "an MCP server's progress report was dropped"
            );
            false
        }
    }
}

/// The `tools/call` result in a server's answer, or what the answer was instead. A result that
/// omits `content` is read as an empty one, as rmcp's own `call_tool` does.
fn call_tool_result(answer: ServerResult) -> Result<CallToolResult, &'static str> {
    match answer {
        ServerResult::CallToolResult(result) => Ok(result),
        ServerResult::EmptyResult(_) | ServerResult::TaskAckResult(_) => {
            Ok(CallToolResult::default())
        }
        ServerResult::CustomResult(custom)
            if custom
                .0
                .as_object()
                .is_some_and(|o| o.keys().all(|k| k == "_meta")) =>
        {
            Ok(CallToolResult::default())
        }
        ServerResult::CreateTaskResult(_) => Err("a task the import did not await"),
        ServerResult::InputRequiredResult(_) => Err("a request for input"),
        _ => Err("another kind of result"),
    }
}

/// The call's error for a failed request of the call (a JSON-RPC error's `error.type` is its
/// code).
fn call_failed(error: ServiceError, tool: &str, gone: &dyn Fn(&str) -> ToolError) -> Failed {
    if let Some(refused) = crate::import_auth::refusal(&error, "", None) {
        return Failed::tool_error(ToolError::with_code(
            refused.code(),
            format!(
                "the MCP server refused the call of `{tool}`: {}",
                report(&refused)
            ),
        ));
    }
    let failed = match error {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            gone("it exited or the connection broke during the call")
        }
        ServiceError::McpError(e) => match made_up_reason(&e) {
            Some(REASON_TOO_LARGE) => ToolError::with_code(
                codes::MCP_MESSAGE_TOO_LARGE,
                format!("the MCP call of `{tool}` failed: {}", cut(&e.message)),
            ),
            Some(_) => ToolError::with_code(
                codes::MCP_INVALID_RESULT,
                format!("the MCP call of `{tool}` failed: {}", cut(&e.message)),
            ),
            None => {
                return Failed {
                    error: ToolError::with_code(
                        codes::MCP_TOOL_ERROR,
                        format!("the MCP server refused the call: {}", cut(&e.message)),
                    ),
                    kind: std::borrow::Cow::Owned(e.code.0.to_string()),
                };
            }
        },
        e => ToolError::with_code(
            codes::MCP_TOOL_ERROR,
            format!("the MCP call failed: {}", cut(&e.to_string())),
        ),
    };
    failed.into()
}

/// How long a request the call left is still awaited, before `notifications/cancelled`, when the
/// server declares the tasks extension: its answer may be a task made before it heard, which
/// then gets `tasks/cancel` (once told, a 2026-07-28 HTTP server's answer is lost with the closed
/// stream, and the task would run on).
const TASK_GRACE: Duration = Duration::from_secs(1);

/// The answer to a request in flight.
type Answer = std::pin::Pin<Box<dyn Future<Output = Result<ServerResult, ServiceError>> + Send>>;

/// Tells the server a request or a task was abandoned when dropped armed: the call was
/// cancelled, ran past its limits, or its future was dropped. A request gets
/// `notifications/cancelled` (from a server that declares tasks, only when no answer came within
/// [`TASK_GRACE`]; an answer that is a task gets `tasks/cancel` instead); a task gets
/// `tasks/cancel`.
struct Abandoned {
    peer: Peer<RoleClient>,
    left: Option<Left>,
}

/// What a call leaves behind when it goes early.
enum Left {
    Request {
        id: RequestId,
        answer: Answer,
        /// How long to wait for the answer before telling the server (a server with tasks).
        grace: Option<Duration>,
    },
    Task(String),
}

impl Abandoned {
    /// A request in flight: armed until [`answer`](Self::answer) gives its answer. A
    /// task-augmented request (the draft's) waits for its answer as a request to a server that
    /// declares the tasks extension does.
    fn request(
        peer: Peer<RoleClient>,
        handle: rmcp::service::RequestHandle<RoleClient>,
        task_augmented: bool,
    ) -> Abandoned {
        let id = handle.id.clone();
        let grace = (task_augmented
            || peer
                .peer_info()
                .is_some_and(|info| info.capabilities.supports_tasks()))
        .then_some(TASK_GRACE);
        Abandoned {
            peer,
            left: Some(Left::Request {
                id,
                answer: Box::pin(handle.await_response()),
                grace,
            }),
        }
    }

    /// The request's answer (never, for a task); once it came, nothing is left to tell.
    async fn answer(&mut self) -> Result<ServerResult, ServiceError> {
        let outcome = match &mut self.left {
            Some(Left::Request { answer, .. }) => answer.await,
            _ => return std::future::pending().await,
        };
        self.left = None;
        outcome
    }

    fn task(peer: Peer<RoleClient>, id: String) -> Abandoned {
        Abandoned {
            peer,
            left: Some(Left::Task(id)),
        }
    }

    /// The answer came: nothing to tell.
    fn disarm(&mut self) {
        self.left = None;
    }
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(left) = self.left.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            match left {
                Left::Request {
                    id,
                    mut answer,
                    grace,
                } => {
                    // A server with tasks may have answered with a task already: it outlives
                    // its request, so it is cancelled on its own.
                    if let Some(grace) = grace {
                        match tokio::time::timeout(grace, &mut answer).await {
                            Ok(Ok(answer)) => {
                                if let Some((_, task)) = TaskState::created(&answer) {
                                    cancel_task(&peer, task.id).await;
                                }
                                // Otherwise answered: nothing runs on.
                                return;
                            }
                            Ok(Err(_)) => return,
                            Err(_) => {}
                        }
                    }
                    let cancelled = CancelledNotificationParam::new(
                        Some(id),
                        Some("the call was abandoned by its caller".to_owned()),
                    );
                    let _ = peer.notify_cancelled(cancelled).await;
                }
                Left::Task(id) => cancel_task(&peer, id).await,
            }
        });
    }
}

/// Sends `tasks/cancel` for the task `id`, whatever the answer's shape (an empty one under
/// SEP-2663, the cancelled task in the draft); a failure is only logged.
async fn cancel_task(peer: &Peer<RoleClient>, id: String) {
    use rmcp::model::{CancelTaskParams, CancelTaskRequest};
    let request = CancelTaskRequest::new(CancelTaskParams::new(id));
    if let Err(error) = peer
        .send_request(ClientRequest::CancelTaskRequest(request))
        .await
    {
        tracing::debug!(%error, "tasks/cancel failed");
    }
}

/// The text of MCP content blocks: text as itself, any other block as a bracketed note.
pub fn content_text(content: &[rmcp::model::ContentBlock]) -> String {
    use rmcp::model::ContentBlock as C;
    let mut out = String::new();
    for block in content {
        if !out.is_empty() {
            out.push('\n');
        }
        match block {
            C::Text(t) => out.push_str(&t.text),
            C::Image(i) => out.push_str(&format!("[image {}]", i.mime_type)),
            C::Audio(a) => out.push_str(&format!("[audio {}]", a.mime_type)),
            C::Resource(r) => {
                let uri = match &r.resource {
                    rmcp::model::ResourceContents::TextResourceContents { uri, .. }
                    | rmcp::model::ResourceContents::BlobResourceContents { uri, .. } => uri,
                    _ => "",
                };
                out.push_str(&format!("[resource {uri}]"));
            }
            C::ResourceLink(l) => out.push_str(&format!("[resource link {}]", l.uri)),
            _ => out.push_str("[content]"),
        }
    }
    out
}

/// The failure of a call whose server is no longer connected (`why` says how it was seen).
fn server_gone(tool: &str, why: &str) -> ToolError {
    ToolError::with_code(
        codes::MCP_SERVER_GONE,
        format!(
            "the MCP server of `{tool}` is not connected ({why}); the import must reconnect it"
        ),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rmcp::model::{GetMeta, NumberOrString, ProgressToken, RequestParamsMeta};

    #[test]
    fn a_task_augmented_call_keeps_its_meta_and_asks_for_the_calls_bound() {
        let mut params = CallToolRequestParams::new("slow");
        params.arguments = json!({"n": 1}).as_object().cloned();
        params.set_traceparent("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
        let limits = CallLimits {
            timeout: Duration::from_secs(2),
            max_total: None,
        };
        let mut request = task_augmented(params, limits);
        // What rmcp adds as it sends the request.
        request
            .get_meta_mut()
            .set_progress_token(ProgressToken(NumberOrString::Number(7)));
        let message = ClientJsonRpcMessage::request(request, RequestId::Number(1));
        let wire = serde_json::to_value(&message).unwrap();
        assert_eq!(wire["method"], "tools/call");
        let params = &wire["params"];
        assert_eq!(params["name"], "slow");
        assert_eq!(params["arguments"], json!({"n": 1}));
        assert_eq!(params["task"], json!({"ttl": 2000}));
        assert_eq!(params["_meta"]["progressToken"], 7);
        assert!(
            params["_meta"]["traceparent"]
                .as_str()
                .is_some_and(|t| t.starts_with("00-0af7")),
            "{wire}"
        );
        let text = serde_json::to_string(&message).unwrap();
        assert_eq!(text.matches("\"_meta\"").count(), 1, "{text}");

        // A timeout that restarts on progress: its maximum total time is the bound.
        let limits = CallLimits {
            timeout: Duration::from_secs(2),
            max_total: Some(Duration::from_secs(30)),
        };
        let request = task_augmented(CallToolRequestParams::new("slow"), limits);
        let wire =
            serde_json::to_value(ClientJsonRpcMessage::request(request, RequestId::Number(2)))
                .unwrap();
        assert_eq!(wire["params"]["task"], json!({"ttl": 30_000}));
    }
}
