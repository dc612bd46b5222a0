//! The outcome of one execution.

use std::borrow::Cow;

use serde_json::Value;

use super::content::{AdditionalContext, ContentBlock};
use super::handle::Pending;

/// The error of a failed call: a message and a stable code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailureInfo {
    /// What went wrong, in words a model can act on.
    pub message: String,
    /// The stable code (see [`codes`](crate::codes)), or a tool's own code.
    pub code: Cow<'static, str>,
}

/// Whether a call succeeded, and with what.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The call succeeded with a canonical value that matches the tool's output schema.
    Success {
        /// The canonical value.
        value: Value,
    },
    /// The call failed; a failure has no value.
    Failure {
        /// The error.
        error: ToolFailureInfo,
    },
}

/// The final, normalised result of one execution.
///
/// Every call publishes exactly one. A failure's content is exactly `Error: <message>` (unless
/// the definition's `finalize_content` replaced it).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolExecutionResult {
    /// Success with a value, or failure with an error.
    pub outcome: ToolOutcome,
    /// The model-facing content.
    pub content: Vec<ContentBlock>,
    /// Presentation metadata (from the output's `presentation_meta`, top-level calls only).
    pub meta: Option<Value>,
    /// Contexts for the loop to append after the result, in order.
    pub additional_contexts: Vec<AdditionalContext>,
    /// Set when the call paused for a decision that comes later (code `APPROVAL_PENDING`, see
    /// [`approvals`](crate::approvals)): the handle to show, persist and
    /// [resume](crate::ToolRuntime::resume) it with. Only the runtime makes one.
    pub pending: Option<Pending>,
}

impl ToolExecutionResult {
    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Failure { .. })
    }
    /// The canonical value of a success.
    pub fn value(&self) -> Option<&Value> {
        match &self.outcome {
            ToolOutcome::Success { value } => Some(value),
            ToolOutcome::Failure { .. } => None,
        }
    }
    /// The error of a failure.
    pub fn error(&self) -> Option<&ToolFailureInfo> {
        match &self.outcome {
            ToolOutcome::Success { .. } => None,
            ToolOutcome::Failure { error } => Some(error),
        }
    }
    /// The failure code, `None` on success.
    pub fn code(&self) -> Option<&str> {
        self.error().map(|e| &*e.code)
    }
    /// All text blocks of the content, joined with newlines.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let Some(t) = block.as_text() {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
        }
        out
    }

    pub(crate) fn failure(
        message: String,
        code: Cow<'static, str>,
        additional_contexts: Vec<AdditionalContext>,
    ) -> Self {
        let content = vec![ContentBlock::text(format!("Error: {message}"))];
        ToolExecutionResult {
            outcome: ToolOutcome::Failure {
                error: ToolFailureInfo { message, code },
            },
            content,
            meta: None,
            additional_contexts,
            pending: None,
        }
    }
}
