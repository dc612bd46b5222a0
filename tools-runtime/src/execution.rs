//! The execution: the read-only view of one call in flight that the pipeline's listeners,
//! guards, wrappers and the body's context see ([`ToolExecution`]), with the state it keeps
//! (its progress, what its prepare hook computed, the run a paused program leaves or resumes).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::call::content::AdditionalContext;
use crate::call::progress::{self, Progress, ProgressError, ProgressSink};
use crate::call::tool_call::{CallOrigin, ExecutionToken, GLOBAL_LAYER, ScopeKey};
use crate::extensions::Extensions;

/// A progress listener ([`Scope::on_progress`](crate::Scope::on_progress)).
pub(crate) type ProgressListenerFn = dyn Fn(&ToolExecution, &Progress) + Send + Sync;

/// One execution's progress: the last report, whether the body has settled, where reports go.
pub(crate) struct ProgressState {
    sink: Option<ProgressSink>,
    /// The progress listeners of the call's scopes, those the call entered with.
    listeners: Vec<Arc<ProgressListenerFn>>,
    last: Mutex<Option<f64>>,
    ended: AtomicBool,
    /// Counts valid reports, for the timeout wrapper; made when it subscribes (most calls have
    /// no such wrapper, and pay nothing for it).
    reports: OnceLock<tokio::sync::watch::Sender<u64>>,
}

impl ProgressState {
    pub(crate) fn new(sink: Option<ProgressSink>, listeners: Vec<Arc<ProgressListenerFn>>) -> Self {
        ProgressState {
            sink,
            listeners,
            last: Mutex::new(None),
            ended: AtomicBool::new(false),
            reports: OnceLock::new(),
        }
    }
}

pub(crate) struct ExecInner {
    pub(crate) token: ExecutionToken,
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) arguments: Arc<Value>,
    pub(crate) cancel: CancellationToken,
    pub(crate) agent: Option<ScopeKey>,
    /// The layers whose listeners apply (the agent's chain); empty for a global call.
    pub(crate) chain: Vec<u64>,
    pub(crate) deferred: Mutex<Vec<AdditionalContext>>,
    /// Set just before the body is invoked.
    pub(crate) body_started: AtomicBool,
    /// Where the call comes from.
    pub(crate) origin: CallOrigin,
    /// The call resolved to a registry-owned definition (one an extension installed).
    pub(crate) owned: bool,
    /// What the definition's prepare hook computed (set once, at admission).
    pub(crate) extensions: OnceLock<Extensions>,
    pub(crate) progress: ProgressState,
    /// What a registry-owned body left when its program paused (see `ToolRunContext::pause_run`).
    pub(crate) run_pause: OnceLock<crate::durable::approvals::RunPause>,
    /// The resumed run this execution continues, when it resumes a paused program.
    pub(crate) resumed_run: OnceLock<Arc<crate::durable::approvals::ResumedRun>>,
    /// For a call resumed with arguments a reviewer edited, the arguments reviewed.
    pub(crate) reviewed: OnceLock<Arc<Value>>,
    /// Who the call is made for.
    pub(crate) principal: Option<Arc<crate::call::tool_call::Principal>>,
}

impl Drop for ExecInner {
    fn drop(&mut self) {
        // The last owner of very deep arguments drops them without recursion.
        if let Some(args) = Arc::get_mut(&mut self.arguments) {
            tools_schema::deep::discard(std::mem::take(args));
        }
    }
}

/// The read-only view of one execution that listeners, guards, wrappers and observers see.
///
/// Cheap to clone (a shared handle). Nothing in it can be changed after entry.
#[derive(Clone)]
pub struct ToolExecution(pub(crate) Arc<ExecInner>);

impl ToolExecution {
    /// The registry-assigned token of this execution.
    pub fn token(&self) -> ExecutionToken {
        self.0.token
    }
    /// The model's call id.
    pub fn call_id(&self) -> &str {
        &self.0.call_id
    }
    /// The requested tool name.
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The frozen arguments.
    pub fn arguments(&self) -> &Value {
        &self.0.arguments
    }
    /// Who the call is made for ([`Principal`](crate::Principal)), as the caller set it
    /// ([`ToolCall::with_principal`](crate::ToolCall::with_principal)), inherited by the calls
    /// it makes and kept through a pause; `None` when the host authenticated no one.
    pub fn principal(&self) -> Option<&crate::call::tool_call::Principal> {
        self.0.principal.as_deref()
    }

    /// The principal as a shared handle, to set on another call.
    pub fn principal_arc(&self) -> Option<&Arc<crate::call::tool_call::Principal>> {
        self.0.principal.as_ref()
    }

    /// For a call resumed with arguments a reviewer edited
    /// ([`ToolRuntime::resume_edited`](crate::ToolRuntime::resume_edited)), the arguments the
    /// call paused with and the reviewer saw; [`arguments`](Self::arguments) are the edited
    /// ones. `None` for every other call.
    pub fn reviewed_arguments(&self) -> Option<&Value> {
        self.0.reviewed.get().map(|v| &**v)
    }
    /// The frozen arguments as a shared handle.
    pub fn arguments_arc(&self) -> &Arc<Value> {
        &self.0.arguments
    }
    /// The caller's cancellation token.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.0.cancel
    }
    /// The agent scope the call was made from; `None` is the global scope.
    pub fn agent(&self) -> Option<ScopeKey> {
        self.0.agent
    }
    /// The token of the execution that made this call.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.0.origin.parent()
    }

    /// Where the call comes from: the caller's own, made by another execution, or made by a
    /// program.
    pub fn origin(&self) -> CallOrigin {
        self.0.origin
    }

    /// The value of type `T` the definition's prepare hook computed for this call at
    /// admission, before the pre-execute waterfall (for `run_code`, Code Mode's analysis
    /// leaves what the program may call). `None` before admission, for a definition without a
    /// prepare hook, or when the hook left no `T`.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.0.extensions.get()?.get::<T>()
    }

    /// Everything the prepare hook computed (see [`get`](Self::get)).
    pub fn extensions(&self) -> Option<&Extensions> {
        self.0.extensions.get()
    }

    /// Records what the prepare hook computed; only the first record counts.
    pub(crate) fn set_extensions(&self, extensions: Extensions) {
        let _ = self.0.extensions.set(extensions);
    }

    /// Checks a report of the body against the last one and hands it to the call's sink, its
    /// scopes' listeners and the timeout wrapper (see [`crate::progress`]).
    pub(crate) fn report_progress(&self, progress: Progress) -> Result<(), ProgressError> {
        let state = &self.0.progress;
        // Held while the report is checked, recorded and delivered: reports from two tasks of
        // one body reach everyone in the order they were recorded, and none is delivered after
        // `end_progress` (which takes the same lock). Nothing a sink or a listener is given can
        // report progress of this call, so none can re-enter it.
        let mut last = state.last.lock().unwrap_or_else(PoisonError::into_inner);
        if state.ended.load(Ordering::Acquire) {
            return Err(ProgressError::Ended {
                tool: self.name().to_owned(),
            });
        }
        let progress = progress::check(self.name(), *last, progress)?;
        *last = Some(progress.done());
        tracing::debug!(
            tool = self.name(),
            call_id = self.call_id(),
            done = progress.done(),
            total = progress.total(),
            message = progress.message(),
            "tool progress"
        );
        let deliver = |f: &dyn Fn()| {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
                tracing::error!(
                    tool = self.name(),
                    "a progress sink or listener panicked; skipped"
                );
            }
        };
        if let Some(sink) = &state.sink {
            deliver(&|| (sink.0)(&progress));
        }
        for listener in &state.listeners {
            deliver(&|| listener(self, &progress));
        }
        if let Some(reports) = state.reports.get() {
            reports.send_modify(|count| *count += 1);
        }
        drop(last);
        Ok(())
    }

    /// The body has settled: no report is accepted from now on.
    pub(crate) fn end_progress(&self) {
        let state = &self.0.progress;
        let _last = state.last.lock().unwrap_or_else(PoisonError::into_inner);
        state.ended.store(true, Ordering::Release);
    }

    /// Sees each valid report (as a count), for the timeout wrapper.
    pub(crate) fn progress_reports(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0
            .progress
            .reports
            .get_or_init(|| tokio::sync::watch::Sender::new(0))
            .subscribe()
    }

    pub(crate) fn applies(&self, layer: u64) -> bool {
        layer == GLOBAL_LAYER || self.0.chain.contains(&layer)
    }

    pub(crate) fn take_deferred(&self) -> Vec<AdditionalContext> {
        std::mem::take(
            &mut *self
                .0
                .deferred
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

impl fmt::Debug for ToolExecution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecution")
            .field("token", &self.0.token)
            .field("call_id", &self.0.call_id)
            .field("name", &self.0.name)
            .field("agent", &self.0.agent)
            .field("origin", &self.0.origin)
            .finish_non_exhaustive()
    }
}
