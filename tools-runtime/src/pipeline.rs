//! The execution pipeline: one call, from the caller's description to one published result.
//!
//! Read [`Run`] top to bottom; it is the whole state machine, in the specification's order:
//!
//! 1. [`Run::enter`]: snapshot and freeze the arguments, assign a fresh token, resolve the
//!    visible definition and snapshot every listener list;
//! 2. [`Run::admit`]: a call cancelled at entry skips every phase; otherwise resolve
//!    (`UNKNOWN_TOOL`), validate (`INVALID_ARGS`), run the pre-execute waterfall (with the
//!    approval service for `ask`), then the guards;
//! 3. [`Run::dispatch`]: the execute wrappers around the body, then output normalisation
//!    (validation against the output schema and rendering);
//! 4. [`Run::conclude`]: post-execute decisions, the cancellation override of a success,
//!    `finalize_content`, and the observers.
//!
//! Every path returns exactly one [`ToolExecutionResult`], and no phase returns while a body it
//! started is still running: bodies are awaited to completion, never raced away from.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use serde_json::Value;
use tracing::Instrument;

use crate::content::ContentBlock;
use crate::definition::ToolDefinition;
use crate::error::{ExecutionError, PanicSite};
use crate::execution::{ExecInner, ExecutionToken, ToolCall, ToolExecution};
use crate::hooks::{
    self, Approval, Listeners, PostDecision, PostListener, PostSnapshot, PostView, PreDecision,
    PreListener, Replacement,
};
use crate::registry::ToolRuntime;
use crate::result::{ToolExecutionResult, ToolFailureInfo, ToolOutcome};

/// A result still being shaped by the pipeline.
pub(crate) enum Draft {
    Success {
        value: Value,
        content: Vec<ContentBlock>,
        meta: Option<Value>,
    },
    Failure {
        message: String,
        code: Cow<'static, str>,
    },
}

impl Draft {
    fn from_error(error: ExecutionError) -> Self {
        Draft::Failure {
            message: error.to_string(),
            code: Cow::Borrowed(error.code()),
        }
    }
    fn is_success(&self) -> bool {
        matches!(self, Draft::Success { .. })
    }

    /// Replaces this draft, dropping a replaced value of any depth without recursion.
    fn replace(&mut self, next: Draft) {
        if let Draft::Success { value, .. } = std::mem::replace(self, next) {
            crate::deep::discard(value);
        }
    }
}

/// One call in flight.
pub(crate) struct Run {
    rt: ToolRuntime,
    exec: ToolExecution,
    def: Option<ToolDefinition>,
    scope_gone: bool,
    listeners: Arc<Listeners>,
    pub(crate) span: tracing::Span,
}

impl Run {
    /// Snapshot and freeze: the arguments become a shared, immutable value; the definition and
    /// the listener lists are read once, so registry changes during the call do not affect it.
    pub(crate) fn enter(rt: &ToolRuntime, call: ToolCall) -> Run {
        let ToolCall {
            call_id,
            name,
            arguments,
            cancel,
            agent,
            parent,
        } = call;
        let snapshot = rt.snapshot(&name, agent);
        let token = ExecutionToken::fresh();
        let span = tracing::info_span!(
            "tool_call",
            tool = %name,
            call_id = %call_id,
            token = token.raw(),
            parent = parent.map(ExecutionToken::raw),
            outcome = tracing::field::Empty,
        );
        let scope_gone = snapshot.chain.is_none();
        let exec = ToolExecution(Arc::new(ExecInner {
            token,
            call_id,
            name,
            arguments,
            cancel,
            agent,
            parent,
            chain: snapshot.chain.unwrap_or_default(),
            deferred: Mutex::new(Vec::new()),
            body_started: std::sync::atomic::AtomicBool::new(false),
        }));
        Run {
            rt: rt.clone(),
            exec,
            def: snapshot.def,
            scope_gone,
            listeners: snapshot.listeners,
            span,
        }
    }

    fn cancelled(&self) -> bool {
        self.exec.cancellation().is_cancelled()
    }

    fn aborted_before_dispatch(&self) -> Draft {
        Draft::from_error(ExecutionError::AbortedBeforeDispatch {
            tool: self.exec.name().to_owned(),
        })
    }

    /// The whole pipeline for one call, in order.
    pub(crate) async fn run(self) -> ToolExecutionResult {
        let draft = match self.admit().await {
            Ok(def) => self.dispatch(&def).await,
            Err(failure) => failure,
        };
        self.conclude(draft).await
    }

    /// Everything before the body: returns the definition to dispatch, or the failure.
    pub(crate) async fn admit(&self) -> Result<ToolDefinition, Draft> {
        let exec = &self.exec;
        // A call cancelled at entry has frozen its arguments (above) and skips every phase.
        if self.cancelled() {
            return Err(self.aborted_before_dispatch());
        }
        // Resolution. (Code Mode's code-only rule will refuse direct calls here, before policy.)
        let Some(def) = self.def.clone() else {
            return Err(Draft::from_error(self.unknown_tool()));
        };
        // Validation against the compiled input schema (raw definitions validate their own).
        if let Some(input) = &def.0.input
            && let Err(violations) = input.validate(exec.arguments())
        {
            return Err(Draft::from_error(ExecutionError::InvalidArgs {
                tool: def.name().to_owned(),
                violations,
            }));
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
                return Err(self.aborted_before_dispatch());
            }
        }
        match decision {
            PreDecision::Allow => {}
            PreDecision::Deny { reason } => {
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
                    return Err(Draft::from_error(ExecutionError::Denied { reason }));
                };
                let asked = reason.clone();
                let answer = match std::panic::catch_unwind(AssertUnwindSafe(|| {
                    service.request(exec.clone(), asked)
                })) {
                    Ok(fut) => AssertUnwindSafe(fut).catch_unwind().await,
                    Err(p) => Err(p),
                };
                match answer {
                    Ok(Approval::Approved) => {}
                    Ok(Approval::Denied { reason: why }) => {
                        let reason = why.or(reason).unwrap_or_else(|| {
                            format!("the call to `{}` was not approved", def.name())
                        });
                        return Err(Draft::from_error(ExecutionError::Denied { reason }));
                    }
                    Err(p) => return Err(self.panicked(PanicSite::Listener, p)),
                }
                if self.cancelled() {
                    return Err(self.aborted_before_dispatch());
                }
            }
        }
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
                    return Err(Draft::from_error(ExecutionError::GuardDenied { reason }));
                }
                Err(p) => return Err(self.panicked(PanicSite::Guard, p)),
            }
            if self.cancelled() {
                return Err(self.aborted_before_dispatch());
            }
        }
        // (The body's own entry re-checks cancellation after the wrappers.)
        Ok(def)
    }

    /// The wrappers around the body, then output normalisation.
    pub(crate) async fn dispatch(&self, def: &ToolDefinition) -> Draft {
        let dispatch = self.rt.dispatch(self.exec.clone(), def.clone());
        let out = if self.listeners.wrappers.is_empty() {
            hooks::run_body(dispatch, self.rt.clone()).await
        } else {
            self.rt.next(self.listeners.clone()).run(dispatch).await
        };
        match out {
            Err(error) => {
                let (message, code) = error.into_parts();
                Draft::Failure { message, code }
            }
            Ok(value) => self.normalise(def, value),
        }
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

    /// Validates a canonical value against the output schema and renders its content (and, for
    /// top-level calls, its presentation metadata).
    fn normalise(&self, def: &ToolDefinition, value: Value) -> Draft {
        if let Err(violations) = def.0.output.validate(&value) {
            crate::deep::discard(value);
            return Draft::from_error(ExecutionError::InvalidOutput {
                tool: def.name().to_owned(),
                violations,
            });
        }
        let args = self.exec.arguments();
        let rendered = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let content = (def.0.render)(args, &value);
            let meta = match (&def.0.presentation_meta, self.exec.parent()) {
                (Some(meta), None) => Some(meta(args, &value)),
                _ => None,
            };
            (content, meta)
        }));
        match rendered {
            Ok((content, meta)) => Draft::Success {
                value,
                content,
                meta,
            },
            Err(p) => {
                crate::deep::discard(value);
                self.panicked(PanicSite::Render, p)
            }
        }
    }

    /// Post-execute decisions, the cancellation override, `finalize_content`, observers.
    pub(crate) async fn conclude(self, mut draft: Draft) -> ToolExecutionResult {
        let exec = &self.exec;
        // The tool's deferred contexts come first; a block drops them.
        let mut contexts = exec.take_deferred();
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
                            value: crate::deep::clone(value),
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
            },
            Draft::Failure { message, code } => {
                ToolExecutionResult::failure(message, code, contexts)
            }
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
                    panic = %hooks::panic_message(&*p),
                    "finalize_content panicked; the content is kept as it was"
                ),
            }
        }
        self.span.record(
            "outcome",
            match &result.outcome {
                ToolOutcome::Success { .. } => "ok",
                ToolOutcome::Failure { error } => error_code(error),
            },
        );
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
                    panic = %hooks::panic_message(&*p),
                    "a result observer panicked; skipped"
                );
            }
        }
        result
    }

    fn panicked(&self, site: PanicSite, payload: Box<dyn std::any::Any + Send>) -> Draft {
        Draft::from_error(ExecutionError::Panicked {
            site,
            tool: self.exec.name().to_owned(),
            message: hooks::panic_message(&*payload),
        })
    }

    fn unknown_tool(&self) -> ExecutionError {
        let name = self.exec.name().to_owned();
        if self.scope_gone {
            return ExecutionError::ScopeGone { name };
        }
        let scope = self.exec.agent().unwrap_or(crate::ScopeKey::GLOBAL);
        let suggestions = closest(&name, self.rt.visible_names(scope));
        ExecutionError::UnknownTool { name, suggestions }
    }
}

fn error_code(error: &ToolFailureInfo) -> &str {
    &error.code
}

/// Up to three visible names closest to `name`, best first.
fn closest(name: &str, visible: Vec<String>) -> Vec<String> {
    let mut scored: Vec<(f64, String)> = visible
        .into_iter()
        .map(|n| (strsim::jaro_winkler(name, &n), n))
        .filter(|(s, _)| *s >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(3).map(|(_, n)| n).collect()
}

impl ToolRuntime {
    /// Runs one call through the whole pipeline and returns its one result.
    ///
    /// Never fails and never panics: every problem (unknown tool, invalid arguments, denial,
    /// cancellation, a failing or panicking body or hook) is a failure result with its code.
    /// It returns only after any body it started has settled. Dropping the returned future
    /// drops the call in place, body included, without a result.
    pub async fn execute(&self, call: ToolCall) -> ToolExecutionResult {
        let run = Run::enter(self, call);
        if run.span.is_disabled() {
            // No subscriber wants the span: skip the instrumentation wrapper entirely.
            run.run().await
        } else {
            let span = run.span.clone();
            run.run().instrument(span).await
        }
    }
}
