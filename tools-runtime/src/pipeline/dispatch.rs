//! Dispatch: the execute wrappers around the body ([`Next`]), the body itself, and the
//! normalisation of its canonical value (output validation, rendering, presentation metadata).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::Value;

use super::{Draft, Run};
use crate::errors::{ExecutionError, PanicSite, ToolError, panicked};
use crate::runtime::context::ToolRunContext;
use crate::runtime::definition::ToolDefinition;
use crate::runtime::handle::ToolRuntime;
use crate::runtime::handle::{Dispatch, Listeners, Next};

impl Run {
    /// The wrappers around the body, then output normalisation.
    pub(crate) async fn dispatch(&self, def: &ToolDefinition) -> Draft {
        let dispatch = Dispatch::new(self.exec.clone(), def.clone());
        let out = if self.listeners.wrappers.is_empty() {
            run_body(dispatch, self.rt.clone()).await
        } else {
            Next::new(self.listeners.clone(), self.rt.clone())
                .run(dispatch)
                .await
        };
        match out {
            Err(error) => {
                let (message, code) = error.into_parts();
                Draft::Failure { message, code }
            }
            Ok(value) => self.normalise(def, value),
        }
    }

    /// Validates a canonical value against the output schema and renders its content (and, for
    /// top-level calls, its presentation metadata).
    pub(super) fn normalise(&self, def: &ToolDefinition, value: Value) -> Draft {
        if let Err(violations) = def.0.output.validate(&value) {
            tools_schema::deep::discard(value);
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
                tools_schema::deep::discard(value);
                self.panicked(PanicSite::Render, p)
            }
        }
    }
}

impl Next {
    pub(crate) fn new(listeners: Arc<Listeners>, runtime: ToolRuntime) -> Self {
        Next {
            listeners,
            index: 0,
            runtime,
        }
    }

    /// Runs the rest of the chain with `dispatch`.
    pub fn run(&self, dispatch: Dispatch) -> BoxFuture<'static, Result<Value, ToolError>> {
        let wrappers = &self.listeners.wrappers;
        let mut i = self.index;
        while i < wrappers.len() && !dispatch.exec.applies(wrappers[i].layer) {
            i += 1;
        }
        let Some(entry) = wrappers.get(i) else {
            return Box::pin(run_body(dispatch, self.runtime.clone()));
        };
        let next = Next {
            listeners: self.listeners.clone(),
            index: i + 1,
            runtime: self.runtime.clone(),
        };
        let tool = dispatch.def.name().to_owned();
        let f = entry.f.clone();
        match std::panic::catch_unwind(AssertUnwindSafe(|| f(dispatch, next))) {
            Ok(fut) => Box::pin(async move {
                match AssertUnwindSafe(fut).catch_unwind().await {
                    Ok(r) => r,
                    Err(p) => Err(panicked(PanicSite::Wrapper, tool, p)),
                }
            }),
            Err(p) => Box::pin(std::future::ready(Err(panicked(
                PanicSite::Wrapper,
                tool,
                p,
            )))),
        }
    }
}

/// The innermost step: check cancellation, fuse the caller's token back in, and run the body
/// to completion (it is never raced away from).
pub(crate) async fn run_body(dispatch: Dispatch, runtime: ToolRuntime) -> Result<Value, ToolError> {
    let Dispatch { exec, def, cancel } = dispatch;
    if exec.cancellation().is_cancelled() || cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
        return Err(ToolError::from_execution(
            ExecutionError::AbortedBeforeDispatch {
                tool: def.name().to_owned(),
            },
        ));
    }
    // A replaced token is fused with the caller's: the body sees a child of the wrapper's token,
    // which the caller's cancellation also cancels (below).
    let fused = cancel.map(|c| (c.child_token(), exec.cancellation().clone()));
    exec.0.body_started.store(true, Ordering::Release);
    let args = exec.arguments_arc().clone();
    let ctx = ToolRunContext {
        exec,
        cancel: fused.as_ref().map(|(f, _)| f.clone()),
        runtime,
    };
    let started = std::panic::catch_unwind(AssertUnwindSafe(|| (def.0.body)(args, ctx)));
    let fut = match started {
        Ok(fut) => AssertUnwindSafe(fut).catch_unwind(),
        Err(p) => return Err(panicked(PanicSite::Body, def.name().to_owned(), p)),
    };
    let out = match fused {
        None => fut.await,
        Some((fused, caller)) => {
            let mut fut = std::pin::pin!(fut);
            tokio::select! {
                biased;
                r = &mut fut => r,
                () = caller.cancelled() => {
                    fused.cancel();
                    fut.await
                }
            }
        }
    };
    out.unwrap_or_else(|p| Err(panicked(PanicSite::Body, def.name().to_owned(), p)))
}
