//! A decision on one call that asked for approval: the approval service's answer
//! ([`Approval`]), and a person's decision that the call of a resumed program carries
//! ([`GivenDecision`], [`ToolCall::decided`](super::tool_call::ToolCall::decided)).

/// The answer of an [`ApprovalService`](crate::hooks::ApprovalService).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// The call may proceed.
    Approved,
    /// The call is refused.
    Denied {
        /// Why, if the service says.
        reason: Option<String>,
    },
    /// The decision comes later, from a person who may answer in days: the call pauses. With
    /// [durable approvals](crate::approvals) the call is written to the store and its result
    /// (`APPROVAL_PENDING`) carries the handle to [resume](crate::ToolRuntime::resume) it with;
    /// without, the call fails with `APPROVAL_NOT_DURABLE`.
    Deferred {
        /// Why, if the service says (shown with the handle).
        reason: Option<String>,
    },
}

impl Approval {
    /// A refusal with `reason`.
    pub fn deny(reason: impl Into<String>) -> Self {
        Approval::Denied {
            reason: Some(reason.into()),
        }
    }
    /// A deferral: the call pauses until [`ToolRuntime::resume`](crate::ToolRuntime::resume).
    pub fn later() -> Self {
        Approval::Deferred { reason: None }
    }
}

/// A person's decision for one call of a resumed program. Only the runtime makes one
/// ([`ResumedRun::decision`](crate::approvals::ResumedRun::decision)); the pipeline takes it
/// for the approval service's answer only for a program's call of exactly that call id, tool
/// and canonical arguments, and ignores it otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct GivenDecision {
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) arguments: String,
    pub(crate) decision: Approval,
}
