//! Policy: everything that decides whether a call may reach its body, in order: resolution,
//! argument validation, the definition's prepare hook (for `run_code`, the pre-run analysis of
//! the program), the pre-execute waterfall (with the approval service for `ask`), and the
//! guards.
//!
//! # Cancellation during policy
//!
//! A decision is more specific than a cancellation. The caller's token is checked after each
//! pre-execute listener, after the approval service answers and after each guard; once it has
//! fired, policy stops at that point and:
//!
//! - a denial reached so far stands (`DENIED` from the waterfall as it stands, from an `ask`
//!   without an approval service, or from a refused approval; `GUARD_DENIED` from a guard);
//! - anything else (an `allow`, an approval, a guard that passed) becomes
//!   `ABORTED_BEFORE_DISPATCH`, and no later listener, approval request or guard runs.
//!
//! A call whose token had fired before entry skips policy entirely (`ABORTED_BEFORE_DISPATCH`).
//!
//! # A deferred decision
//!
//! When the approval service defers (`Approval::later()`), the call pauses only if it could
//! still run: a call whose token fired meanwhile is `ABORTED_BEFORE_DISPATCH`, and the guards
//! run first (a denial is `GUARD_DENIED`); no handle exists for either. Only then is the call
//! written to the store, and its guards run again when it is resumed.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use super::{Draft, Run};
use crate::call::decision::Approval;
use crate::errors::{ExecutionError, PanicSite};
use crate::policy::PreDecision;
use crate::runtime::context::ToolRunContext;
use crate::runtime::definition::ToolDefinition;
use crate::runtime::handle::PreListener;

impl Run {
    /// Everything before the body: returns the definition to dispatch, or the failure.
    pub(crate) async fn admit(&self) -> Result<ToolDefinition, Draft> {
        let exec = &self.exec;
        // A call cancelled at entry has frozen its arguments (above) and skips every phase.
        if self.cancelled() {
            return Err(self.aborted_before_dispatch());
        }
        // Resolution; under `code`, a direct call of any tool but `run_code` is refused here,
        // and so is a call the tool's callers do not allow (see `Callers`), before policy, so
        // nothing observes or approves a call that can only fail.
        let Some(def) = self.def.clone() else {
            return Err(Draft::from_error(self.unknown_tool()));
        };
        // Validation against the compiled input schema (raw definitions validate their own);
        // a resumed call was validated before it paused.
        if self.resumed.is_none()
            && let Some(input) = &def.0.input
            && let Err(violations) = input.validate(exec.arguments())
        {
            return Err(Draft::from_error(ExecutionError::InvalidArgs {
                tool: def.name().to_owned(),
                violations,
            }));
        }
        // The prepare hook: it may refuse the call before anyone observes or approves it, and
        // leaves what it computed on the execution (`ToolExecution::get`) for the listeners
        // below and the body.
        if let Some(prepare) = &def.0.prepare {
            let ctx = ToolRunContext {
                exec: exec.clone(),
                cancel: None,
                runtime: self.rt.clone(),
            };
            let args = exec.arguments_arc().clone();
            let prepared = match std::panic::catch_unwind(AssertUnwindSafe(|| prepare(args, ctx))) {
                Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
                Err(p) => Err(p),
            };
            match prepared {
                Ok(Ok(extensions)) => exec.set_extensions(extensions),
                Ok(Err(error)) => {
                    let (message, code) = error.into_parts();
                    return Err(Draft::Failure { message, code });
                }
                Err(p) => return Err(self.panicked(PanicSite::Body, p)),
            }
            if self.cancelled() {
                return Err(self.aborted_before_dispatch());
            }
        }
        if let Some(decision) = &self.resumed {
            // A resumed call: the pre-execute listeners ran before it paused, and the decision
            // it was resumed with stands for the approval service's answer.
            if let Some(failure) = self
                .decided(&def, decision.clone(), None)
                .or_else(|| self.guards())
            {
                return Err(failure);
            }
            return Ok(def);
        }
        // The pre-execute waterfall: each listener turns the decision so far into the next.
        let mut decision = PreDecision::Allow;
        for entry in self.listeners.pre.iter().filter(|e| exec.applies(e.layer)) {
            let outcome = match &entry.f {
                PreListener::Sync(f) => {
                    let current = decision.clone();
                    std::panic::catch_unwind(AssertUnwindSafe(|| f(exec, current)))
                }
                PreListener::Async(f) => {
                    let current = decision.clone();
                    match std::panic::catch_unwind(AssertUnwindSafe(|| f(exec.clone(), current))) {
                        Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
                        Err(p) => Err(p),
                    }
                }
            };
            decision = match outcome {
                Ok(d) => d,
                Err(p) => return Err(self.panicked(PanicSite::Listener, p)),
            };
            if self.cancelled() {
                // The waterfall stops here; the decision so far is judged below, where a
                // denial keeps its precedence over the cancellation.
                break;
            }
        }
        match decision {
            PreDecision::Allow => {
                self.record_policy("allowed");
                if self.cancelled() {
                    return Err(self.aborted_before_dispatch());
                }
            }
            PreDecision::Deny { reason } => {
                self.record_policy("denied");
                return Err(Draft::from_error(ExecutionError::Denied { reason }));
            }
            PreDecision::Ask { reason } => {
                let Some(service) = self.rt.approval() else {
                    let reason = match reason {
                        Some(r) => format!(
                            "{r} (approval is required and no approval service is available)"
                        ),
                        None => format!(
                            "calling `{}` requires approval and no approval service is available",
                            def.name()
                        ),
                    };
                    self.record_policy("not_approved");
                    return Err(Draft::from_error(ExecutionError::Denied { reason }));
                };
                // Nobody is asked about a call that can no longer run.
                if self.cancelled() {
                    return Err(self.aborted_before_dispatch());
                }
                let asked = reason.clone();
                let answer = match std::panic::catch_unwind(AssertUnwindSafe(|| {
                    service.request(exec.clone(), asked)
                })) {
                    Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
                    Err(p) => Err(p),
                };
                match answer {
                    Ok(Approval::Deferred { reason: why }) => {
                        // No handle is made for a call that cannot run: one cancelled while
                        // the service was asked, or one a guard denies now (the guards run
                        // again on resume, when policy may have changed).
                        if self.cancelled() {
                            return Err(self.aborted_before_dispatch());
                        }
                        if let Some(failure) = self.guards() {
                            return Err(failure);
                        }
                        self.record_policy("deferred");
                        return Err(self.pause(why.or(reason)).await);
                    }
                    Ok(answer) => {
                        if let Some(failure) = self.decided(&def, answer, reason) {
                            return Err(failure);
                        }
                    }
                    Err(p) => return Err(self.panicked(PanicSite::Listener, p)),
                }
            }
        }
        match self.guards() {
            Some(failure) => Err(failure),
            None => Ok(def),
        }
    }

    /// An approval's answer (approved or denied), then the cancellation check after it.
    fn decided(
        &self,
        def: &ToolDefinition,
        answer: Approval,
        asked: Option<String>,
    ) -> Option<Draft> {
        match answer {
            Approval::Approved => self.record_policy("approved"),
            Approval::Denied { reason: why } => {
                self.record_policy("not_approved");
                let reason = why
                    .or(asked)
                    .unwrap_or_else(|| format!("the call to `{}` was not approved", def.name()));
                return Some(Draft::from_error(ExecutionError::Denied { reason }));
            }
            // `resume` refuses a deferral before it runs anything, and `admit` pauses on one.
            Approval::Deferred { .. } => {
                return Some(Draft::from_error(ExecutionError::Denied {
                    reason: format!("the call to `{}` was not decided", def.name()),
                }));
            }
        }
        self.cancelled().then(|| self.aborted_before_dispatch())
    }

    /// The guards: synchronous and monotonic; the first denial is final. `Some` is the
    /// failure that stops the call.
    fn guards(&self) -> Option<Draft> {
        let exec = &self.exec;
        // Guards: synchronous and monotonic; the first denial is final.
        for entry in self
            .listeners
            .guards
            .iter()
            .filter(|e| exec.applies(e.layer))
        {
            match std::panic::catch_unwind(AssertUnwindSafe(|| (entry.f)(exec))) {
                Ok(None) => {}
                Ok(Some(reason)) => {
                    self.record_policy("guard_denied");
                    return Some(Draft::from_error(ExecutionError::GuardDenied { reason }));
                }
                Err(p) => return Some(self.panicked(PanicSite::Guard, p)),
            }
            if self.cancelled() {
                return Some(self.aborted_before_dispatch());
            }
        }
        // (The body's own entry re-checks cancellation after the wrappers.)
        None
    }
}
