//! What a tool body receives beside its arguments ([`ToolRunContext`]).

use std::any::Any;
use std::fmt;
use std::sync::{Arc, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::call::content::AdditionalContext;
use crate::call::progress::{Progress, ProgressError};
use crate::call::tool_call::{ExecutionToken, ProgramOrigin, ScopeKey, ToolCall};
use crate::execution::ToolExecution;
use crate::runtime::handle::ToolRuntime;

/// What a tool body receives beside its arguments.
///
/// It carries the execution's identity, the cancellation token the body must observe (the
/// caller's, fused with any token a wrapper installed), a way to defer contexts until the final
/// result, and access to the runtime's shared state.
#[derive(Clone)]
pub struct ToolRunContext {
    pub(crate) exec: ToolExecution,
    /// The fused token when a wrapper replaced the caller's; `None` means the caller's.
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) runtime: ToolRuntime,
}

impl ToolRunContext {
    /// The read-only view of this execution.
    pub fn execution(&self) -> &ToolExecution {
        &self.exec
    }
    /// The model's call id.
    pub fn call_id(&self) -> &str {
        self.exec.call_id()
    }
    /// The tool name.
    pub fn name(&self) -> &str {
        self.exec.name()
    }
    /// The registry-assigned token of this execution; pass it as the parent of nested calls.
    pub fn token(&self) -> ExecutionToken {
        self.exec.token()
    }
    /// The token of the execution that made this call.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.exec.parent()
    }
    /// The agent scope the call was made from.
    pub fn agent(&self) -> Option<ScopeKey> {
        self.exec.agent()
    }
    /// The token the body must observe: stop owned work and settle when it is cancelled.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancel.as_ref().unwrap_or(&self.exec.0.cancel)
    }
    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_cancelled()
    }
    /// Hold `context` until the call's final result; the loop appends it after the result.
    ///
    /// Deferred contexts survive a failing body and cancellation; only a post-execute block
    /// drops them. They come before any context a post-execute listener attaches.
    pub fn defer_context(&self, context: AdditionalContext) {
        self.exec
            .0
            .deferred
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(context);
    }
    /// Reports how far the call has come (see [`crate::progress`]): the call's caller, the
    /// progress listeners of its scopes and a timeout that resets on progress see it. Refused
    /// when a number is not finite or below zero, when `done` is not larger than the last
    /// report's, and after the body has settled. `?` turns the refusal into the call's failure.
    pub fn progress(&self, progress: Progress) -> Result<(), ProgressError> {
        self.exec.report_progress(progress)
    }

    /// Shared state of type `T` installed with [`ToolRuntime::insert_state`].
    pub fn state<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.runtime.state::<T>()
    }
    /// The runtime, for nested calls (pass [`token`](Self::token) as their parent).
    pub fn runtime(&self) -> &ToolRuntime {
        &self.runtime
    }

    /// A nested call made from this execution: same agent scope and principal, this
    /// execution's token as its parent, and a cancellation token that this call's cancellation
    /// also cancels. Run it with `ctx.runtime().execute(...)`.
    pub fn nested_call(
        &self,
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<Arc<Value>>,
    ) -> ToolCall {
        ToolCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            cancel: self.cancellation().child_token(),
            agent: self.exec.agent(),
            parent: Some(self.exec.token()),
            program: None,
            progress: None,
            decided: None,
            principal: self.exec.0.principal.clone(),
        }
    }

    /// The origin of the calls a program run by this execution makes, for the body of a
    /// registry-owned tool (one an [`Extension`](crate::extension::Extension) installed, such
    /// as Code Mode's `run_code`); `None` for any other tool. Set it on each of the program's
    /// calls with [`ToolCall::with_program`]: the registry's rules then know them for a
    /// program's.
    pub fn program_origin(&self) -> Option<ProgramOrigin> {
        self.exec
            .0
            .owned
            .then(|| ProgramOrigin::mint(self.exec.token()))
    }

    /// For the body of a registry-owned tool whose program's call waits for a decision: the
    /// whole run pauses. The body leaves `pause` here and ends (with any error); the pipeline
    /// then writes the call, with `pause`, to the approval store, and the call's result is
    /// `APPROVAL_PENDING` with its handle. Returns `false`, and keeps nothing, for any other
    /// tool's body or when a pause was left already.
    pub fn pause_run(&self, pause: crate::durable::approvals::RunPause) -> bool {
        self.exec.0.owned && self.exec.0.run_pause.set(pause).is_ok()
    }

    /// The paused run this call resumes, for the body of a registry-owned tool: replay its
    /// journal, and set [its decision](crate::durable::approvals::ResumedRun::decision) on the call
    /// that waited when the program makes it again.
    pub fn resumed_run(&self) -> Option<Arc<crate::durable::approvals::ResumedRun>> {
        self.exec.0.resumed_run.get().cloned()
    }

    /// Whether a paused call can be kept ([durable approvals](crate::approvals) are
    /// installed): a body that journals its program's calls for a resume does so only then.
    pub fn keeps_paused_calls(&self) -> bool {
        self.runtime.0.durable.is_some()
    }
}

impl fmt::Debug for ToolRunContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRunContext")
            .field("execution", &self.exec)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
