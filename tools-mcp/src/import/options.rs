//! How to import ([`ImportOptions`]): the naming rule, the protocol, the limits and the
//! timeouts, and their defaults.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tools_schema::excerpt::cut;

use super::deadline::CallLimits;
use super::source::Protocol;
use crate::annotations::AnnotationPolicy;
use crate::error::McpError;
use crate::wire::DEFAULT_MAX_MESSAGE_SIZE;

/// Maps a server's tool name to a local one; `None` leaves the tool out.
pub type NameRule = dyn Fn(&str) -> Option<String> + Send + Sync;

/// How to import: the naming rule, the protocol, the limits and the timeouts.
#[derive(Clone)]
pub struct ImportOptions {
    pub(super) naming: Arc<NameRule>,
    pub(super) protocol: Protocol,
    pub(super) inherit_stderr: bool,
    pub(super) connect_timeout: Duration,
    pub(super) probe_timeout: Duration,
    pub(super) call_timeout: Duration,
    tool_timeouts: HashMap<String, Duration>,
    max_total: Option<Duration>,
    tool_max_totals: HashMap<String, Duration>,
    optional_tasks: bool,
    tool_optional_tasks: HashMap<String, bool>,
    pub(super) max_message_size: usize,
    exit_timeout: Duration,
    terminate_timeout: Duration,
    pub(super) annotations: AnnotationPolicy,
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
    ///
    /// [`codes::MCP_TIMEOUT`]: crate::codes::MCP_TIMEOUT
    pub fn call_timeout(mut self, timeout: Duration) -> ImportOptions {
        self.call_timeout = timeout;
        self
    }

    /// The timeout of the server's tool `name` (the server's name, before renaming), in place of
    /// [`call_timeout`](Self::call_timeout). The imported definition declares it
    /// ([`ToolDefinition::timeout`]).
    ///
    /// [`ToolDefinition::timeout`]: tools_runtime::ToolDefinition::timeout
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
    ///
    /// [`codes::MCP_TIMEOUT`]: crate::codes::MCP_TIMEOUT
    /// [`ToolDefinition::timeout_max_total`]: tools_runtime::ToolDefinition::timeout_max_total
    /// [`McpImport::connect`]: super::McpImport::connect
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
    pub(super) fn optional_task(&self, remote: &str) -> bool {
        self.tool_optional_tasks
            .get(remote)
            .copied()
            .unwrap_or(self.optional_tasks)
    }

    /// The time limits of a call of the server's tool `remote`.
    pub(super) fn limits(&self, remote: &str) -> CallLimits {
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
    pub(super) fn check(&self) -> Result<(), McpError> {
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
    ///
    /// [`codes::MCP_MESSAGE_TOO_LARGE`]: crate::codes::MCP_MESSAGE_TOO_LARGE
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
    ///
    /// [`McpImport::close`]: super::McpImport::close
    /// [`McpImport::reconnect`]: super::McpImport::reconnect
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
    pub(super) fn shutdown(&self) -> crate::child::Shutdown {
        crate::child::Shutdown {
            exit: self.exit_timeout,
            terminate: self.terminate_timeout,
        }
    }
}
