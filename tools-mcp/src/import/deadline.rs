//! The time limits of an imported tool's calls ([`CallLimits`]), and the deadline of one call
//! under them ([`Deadline`]), moved on by progress when the timeout restarts on it.

use std::time::Duration;

use tools_runtime::ToolError;
use tools_schema::excerpt::cut;

use crate::error::codes;

/// The time limits of an imported tool's calls.
#[derive(Debug, Clone, Copy)]
pub(super) struct CallLimits {
    /// How long the server may take to answer (or, with `max_total`, to report progress).
    pub(super) timeout: Duration,
    /// With a maximum total time, the timeout restarts at each progress report.
    pub(super) max_total: Option<Duration>,
}

/// Which limit a call ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Limit {
    /// The timeout, which does not restart.
    Timeout,
    /// The timeout that restarts on progress: no report for that long.
    NoProgress,
    /// The maximum total time.
    MaxTotal,
}

/// The deadline of one call under its [`CallLimits`], moved on by progress.
pub(super) struct Deadline {
    limits: CallLimits,
    start: tokio::time::Instant,
    quiet_until: tokio::time::Instant,
}

impl Deadline {
    pub(super) fn start(limits: CallLimits) -> Deadline {
        let start = tokio::time::Instant::now();
        Deadline {
            limits,
            start,
            quiet_until: start + limits.timeout,
        }
    }

    /// When the call runs out of time, and which limit it is then.
    pub(super) fn next(&self) -> (tokio::time::Instant, Limit) {
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
    pub(super) fn moved(&mut self, deadline: std::pin::Pin<&mut tokio::time::Sleep>) -> Limit {
        self.progressed();
        let (until, limit) = self.next();
        deadline.reset(until);
        limit
    }

    /// The longest the call may take: its maximum total time, or its timeout when that does
    /// not restart.
    pub(super) fn bound(limits: CallLimits) -> Duration {
        limits.max_total.unwrap_or(limits.timeout)
    }

    /// The call's error for running into `limit`; `task` is the MCP task it ran as, if any.
    pub(super) fn error(&self, limit: Limit, tool: &str, task: Option<&str>) -> ToolError {
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
