//! The outcome of one execution, and the stable [`codes`] a failed one carries.

use std::borrow::Cow;

use serde_json::Value;

use crate::call::content::{AdditionalContext, ContentBlock};
use crate::call::pending::Pending;

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

/// Stable failure codes that appear in [`ToolFailureInfo::code`](crate::ToolFailureInfo).
pub mod codes {
    /// The arguments do not match the tool's input schema.
    pub const INVALID_ARGS: &str = "INVALID_ARGS";
    /// No visible tool has the requested name.
    pub const UNKNOWN_TOOL: &str = "UNKNOWN_TOOL";
    /// The call was cancelled before its body started.
    pub const ABORTED_BEFORE_DISPATCH: &str = "ABORTED_BEFORE_DISPATCH";
    /// The call was cancelled after its body started, and would otherwise have succeeded.
    pub const ABORTED: &str = "ABORTED";
    /// The shipped timeout wrapper stopped the call at the definition's deadline.
    pub const TOOL_TIMEOUT: &str = "TOOL_TIMEOUT";
    /// The value the body (or a wrapper, or a post-execute listener) produced does not match the
    /// tool's output schema.
    pub const INVALID_OUTPUT: &str = "INVALID_OUTPUT";
    /// A pre-execute listener denied the call, or asked for approval that was not given.
    pub const DENIED: &str = "DENIED";
    /// A guard denied the call.
    pub const GUARD_DENIED: &str = "GUARD_DENIED";
    /// A post-execute listener blocked the result.
    pub const BLOCKED: &str = "BLOCKED";
    /// The default code of a [`ToolError`](crate::ToolError) made from a plain message.
    pub const TOOL_FAILED: &str = "TOOL_FAILED";
    /// The tool body panicked.
    pub const TOOL_PANICKED: &str = "TOOL_PANICKED";
    /// A pre-execute or post-execute listener, or the approval service, panicked.
    pub const LISTENER_PANICKED: &str = "LISTENER_PANICKED";
    /// A guard panicked.
    pub const GUARD_PANICKED: &str = "GUARD_PANICKED";
    /// An execute wrapper panicked.
    pub const WRAPPER_PANICKED: &str = "WRAPPER_PANICKED";
    /// The tool's `render` or `presentation_meta` panicked.
    pub const RENDER_PANICKED: &str = "RENDER_PANICKED";
    /// The approval service deferred its decision: the call is paused, kept in the runtime's
    /// approval store, and the result carries the handle to resume it with
    /// ([`ToolExecutionResult::pending`](crate::ToolExecutionResult::pending)).
    pub const APPROVAL_PENDING: &str = "APPROVAL_PENDING";
    /// A call could not pause, or a paused call not resume, because the runtime keeps no paused
    /// calls or the call came from an agent scope without a name.
    pub const APPROVAL_NOT_DURABLE: &str = "APPROVAL_NOT_DURABLE";
    /// A resume was given no decision.
    pub const APPROVAL_NO_DECISION: &str = "APPROVAL_NO_DECISION";
    /// The approval store failed.
    pub const APPROVAL_STORE: &str = "APPROVAL_STORE";
    /// An approval key was too short.
    pub const APPROVAL_KEY: &str = "APPROVAL_KEY";
    /// A handle's text could not be read.
    pub const APPROVAL_HANDLE_INVALID: &str = "APPROVAL_HANDLE_INVALID";
    /// A handle is not the one given for its paused call (edited, or another key).
    pub const APPROVAL_MISMATCH: &str = "APPROVAL_MISMATCH";
    /// No paused call has the handle's id.
    pub const APPROVAL_UNKNOWN: &str = "APPROVAL_UNKNOWN";
    /// The paused call expired.
    pub const APPROVAL_EXPIRED: &str = "APPROVAL_EXPIRED";
    /// The paused call is not pending: resumed before (done, failed, or claimed by a resume
    /// that has not recorded its end). The error's message says which state it found.
    pub const APPROVAL_ALREADY_RESUMED: &str = "APPROVAL_ALREADY_RESUMED";
    /// A resumed call ran, and the store could not record its end after every retry: it stays
    /// `resuming` (in doubt) until an operator settles it; the error carries its result.
    pub const APPROVAL_NOT_RECORDED: &str = "APPROVAL_NOT_RECORDED";
    /// A resume with edited arguments was refused: the paused call is a Code Mode program's,
    /// whose replay would make the reviewed call.
    pub const APPROVAL_EDIT_REFUSED: &str = "APPROVAL_EDIT_REFUSED";
    /// A resume's edited arguments do not validate against the tool's input schema.
    pub const APPROVAL_EDIT_INVALID: &str = "APPROVAL_EDIT_INVALID";
    /// A call was settled by hand that is not in doubt (not `resuming`), or with no note.
    pub const APPROVAL_NOT_IN_DOUBT: &str = "APPROVAL_NOT_IN_DOUBT";
    /// The paused call was cancelled.
    pub const APPROVAL_CANCELLED: &str = "APPROVAL_CANCELLED";
    /// The paused call's agent scope has no live scope of its name here.
    pub const APPROVAL_SCOPE_MISSING: &str = "APPROVAL_SCOPE_MISSING";
}
