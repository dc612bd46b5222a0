//! Progress reports ([`Progress`]), what refuses one ([`ProgressError`]) and the per-call sink;
//! documented at the public [`crate::progress`]. The state one execution keeps is in
//! `execution.rs`.

use std::fmt;
use std::sync::Arc;

/// One report of how far a running call has come.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    done: f64,
    total: Option<f64>,
    message: Option<String>,
}

impl Progress {
    /// A report that `done` units of work are done (any unit: bytes, items, percent).
    pub fn new(done: f64) -> Self {
        Progress {
            done,
            total: None,
            message: None,
        }
    }

    /// The same report with the total the work will reach, when it is known.
    #[must_use]
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// The same report with a message for people (what the work is doing now).
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// How much is done.
    pub fn done(&self) -> f64 {
        self.done
    }

    /// The total, when known.
    pub fn total(&self) -> Option<f64> {
        self.total
    }

    /// The message, when there is one.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The fraction done (`done / total`, at most 1) when a positive total is known.
    pub fn fraction(&self) -> Option<f64> {
        self.total
            .filter(|total| *total > 0.0)
            .map(|total| (self.done / total).min(1.0))
    }
}

/// Why a progress report was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgressError {
    /// `done` or `total` is not a finite number of at least zero.
    #[error("progress of `{tool}`: {what} must be a finite number of at least 0, got {value}")]
    Invalid {
        /// The tool whose call reported.
        tool: String,
        /// `done` or `total`.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// `done` is not larger than the last report's.
    #[error(
        "progress of `{tool}` must increase with each report: {done} after {last} (report how much is done, not how much was added)"
    )]
    NotIncreasing {
        /// The tool whose call reported.
        tool: String,
        /// The last report's `done`.
        last: f64,
        /// This report's `done`.
        done: f64,
    },
    /// The call's body has settled: nothing sees its progress any more.
    #[error("the call of `{tool}` has ended; its progress can no longer be reported")]
    Ended {
        /// The tool whose call reported.
        tool: String,
    },
}

impl ProgressError {
    /// The stable code of the refusal.
    pub fn code(&self) -> &'static str {
        match self {
            ProgressError::Invalid { .. } => "PROGRESS_INVALID",
            ProgressError::NotIncreasing { .. } => "PROGRESS_NOT_INCREASING",
            ProgressError::Ended { .. } => "PROGRESS_AFTER_END",
        }
    }
}

/// Where one call's progress goes, set by its caller
/// ([`ToolCall::with_progress`](crate::ToolCall::with_progress)). Cheap to clone.
#[derive(Clone)]
pub struct ProgressSink(pub(crate) Arc<dyn Fn(&Progress) + Send + Sync>);

impl ProgressSink {
    /// A sink calling `f` with each valid report of the call.
    pub fn new(f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        ProgressSink(Arc::new(f))
    }
}

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink(..)")
    }
}

/// `progress` checked against the last report's `done` (`last`), for a call of `tool`: its
/// message cut, or why it is refused.
pub(crate) fn check(
    tool: &str,
    last: Option<f64>,
    mut progress: Progress,
) -> Result<Progress, ProgressError> {
    for (what, value) in [("done", Some(progress.done)), ("total", progress.total)] {
        if let Some(value) = value
            && !(value.is_finite() && value >= 0.0)
        {
            return Err(ProgressError::Invalid {
                tool: tool.to_owned(),
                what,
                value,
            });
        }
    }
    if let Some(last) = last
        && progress.done <= last
    {
        return Err(ProgressError::NotIncreasing {
            tool: tool.to_owned(),
            last,
            done: progress.done,
        });
    }
    if let Some(message) = &mut progress.message
        && let std::borrow::Cow::Owned(cut) = tools_schema::excerpt::cut(message)
    {
        *message = cut;
    }
    Ok(progress)
}
