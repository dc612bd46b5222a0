//! Conclusion: post-execute decisions, the cancellation override of a success,
//! `finalize_content`, and the observers; the one result of the call leaves from here.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;

use futures::FutureExt;

use super::{Draft, PhaseClock, Run, error_code};
use crate::call::result::{ToolExecutionResult, ToolOutcome};
use crate::errors::{ExecutionError, PanicSite, panic_message};
use crate::policy::{PostDecision, PostSnapshot, PostView, Replacement};
use crate::runtime::handle::PostListener;

impl Run {
    /// Post-execute decisions, the cancellation override, `finalize_content`, observers.
    pub(crate) async fn conclude(self, mut draft: Draft, clock: PhaseClock) -> ToolExecutionResult {
        let exec = &self.exec;
        // The tool's deferred contexts come first; a block drops them.
        let mut contexts = exec.take_deferred();
        // A paused call has no result yet: nothing concludes it now (see `pause`).
        if let Draft::Paused(pending) = draft {
            return self.paused(pending, contexts, &clock);
        }
        if let (true, Some(def)) = (draft.is_success(), &self.def) {
            for entry in self.listeners.post.iter().filter(|e| exec.applies(e.layer)) {
                if self.cancelled() {
                    break;
                }
                let Draft::Success {
                    value,
                    content,
                    meta,
                } = &draft
                else {
                    break;
                };
                let decided = match &entry.f {
                    PostListener::Sync(f) => std::panic::catch_unwind(AssertUnwindSafe(|| {
                        f(
                            exec,
                            PostView {
                                value,
                                content,
                                meta: meta.as_ref(),
                            },
                        )
                    })),
                    PostListener::Async(f) => {
                        let snapshot = PostSnapshot {
                            value: tools_schema::deep::clone_value(value),
                            content: content.clone(),
                            meta: meta.clone(),
                        };
                        match std::panic::catch_unwind(AssertUnwindSafe(|| {
                            f(exec.clone(), snapshot)
                        })) {
                            Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
                            Err(p) => Err(p),
                        }
                    }
                };
                match decided {
                    Err(p) => {
                        draft.replace(self.panicked(PanicSite::Listener, p));
                        break;
                    }
                    Ok(PostDecision::Block {
                        feedback,
                        contexts: only,
                    }) => {
                        draft.replace(Draft::from_error(ExecutionError::Blocked { feedback }));
                        contexts = only;
                        break;
                    }
                    Ok(PostDecision::Accept {
                        replace,
                        contexts: more,
                    }) => {
                        contexts.extend(more);
                        match replace {
                            None => {}
                            Some(Replacement::Content(new)) => {
                                if let Draft::Success { content, .. } = &mut draft {
                                    *content = new;
                                }
                            }
                            Some(Replacement::Value(new)) => {
                                draft.replace(self.normalise(def, new));
                                if !draft.is_success() {
                                    break;
                                }
                            }
                        }
                    }
                }
            }
        }
        // Cancellation can replace only a success; every failure keeps its own code.
        if draft.is_success() && self.cancelled() {
            draft.replace(self.aborted());
        }
        let mut result = match draft {
            Draft::Success {
                value,
                content,
                meta,
            } => ToolExecutionResult {
                outcome: ToolOutcome::Success { value },
                content,
                meta,
                additional_contexts: contexts,
                pending: None,
            },
            Draft::Failure { message, code } => {
                ToolExecutionResult::failure(message, code, contexts)
            }
            // Handled above, before anything concluded.
            Draft::Paused(pending) => return self.paused(pending, contexts, &clock),
        };
        // The definition's last word on content, exactly once, on every normalised result.
        if let Some(finalize) = self
            .def
            .as_ref()
            .and_then(|d| d.0.finalize_content.as_ref())
        {
            match std::panic::catch_unwind(AssertUnwindSafe(|| finalize(exec, &result))) {
                Ok(Some(content)) => result.content = content,
                Ok(None) => {}
                Err(p) => tracing::error!(
                    panic = %panic_message(&*p),
                    "finalize_content panicked; the content is kept as it was"
                ),
            }
        }
        // Observers see the frozen outcome; a panicking observer is logged and skipped.
        for entry in self
            .listeners
            .observers
            .iter()
            .filter(|e| exec.applies(e.layer))
        {
            if let Err(p) = std::panic::catch_unwind(AssertUnwindSafe(|| (entry.f)(exec, &result)))
            {
                tracing::error!(
                    panic = %panic_message(&*p),
                    "a result observer panicked; skipped"
                );
            }
        }
        // The outcome and the phases' durations, in one record, for a span that is recorded
        // (`tracing` would look each field up by name before finding nobody records it).
        if !clock.timed() {
            return result;
        }
        let (admit, dispatch) = (clock.admit, clock.dispatch);
        match &result.outcome {
            ToolOutcome::Success { .. } => tracing::record_all!(
                self.span,
                agent_tools.outcome = "ok",
                agent_tools.admit.duration = admit,
                agent_tools.dispatch.duration = dispatch,
            ),
            ToolOutcome::Failure { error } => {
                let code = error_code(error);
                tracing::record_all!(
                    self.span,
                    agent_tools.outcome = code,
                    error.type = code,
                    otel.status_code = "ERROR",
                    agent_tools.admit.duration = admit,
                    agent_tools.dispatch.duration = dispatch,
                );
            }
        }
        result
    }

    /// Cancellation replacing a success: `ABORTED` once the body has started, otherwise
    /// `ABORTED_BEFORE_DISPATCH` (a wrapper answered without the body).
    fn aborted(&self) -> Draft {
        if self.exec.0.body_started.load(Ordering::Acquire) {
            Draft::from_error(ExecutionError::Aborted {
                tool: self.exec.name().to_owned(),
            })
        } else {
            self.aborted_before_dispatch()
        }
    }
}
