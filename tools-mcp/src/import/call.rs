//! The body of an imported tool ([`RemoteCall`]): the arguments checked, `tools/call` sent in a
//! client span of its own (again, as the annotation policy allows), held to the call's limits
//! while the server's progress comes, awaited as a task when the answer is one, and its result
//! read.

use std::sync::{Arc, Weak};

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::Value;
use tools_runtime::{ToolError, ToolRunContext};

use super::answer::{Failed, call_failed, call_tool_result, content_text, server_gone};
use super::cancel::Abandoned;
use super::deadline::{CallLimits, Deadline};
use super::progress::forward_progress;
use super::task::{await_task, task_augmented};
use super::{Inner, current};
use crate::annotations::Retry;
use crate::error::codes;
use crate::progress::{ProgressRoutes, Update};
use crate::schema::FullSchema;
use crate::tasks_draft::TaskState;

/// What an imported tool's body holds.
pub(super) struct RemoteCall {
    pub(super) inner: Weak<Inner>,
    pub(super) remote: String,
    pub(super) input: FullSchema,
    pub(super) output: Option<Arc<FullSchema>>,
    /// How long the server may take.
    pub(super) limits: CallLimits,
    /// Whether its calls are task-augmented (the 2025-11-25 draft's tasks).
    pub(super) as_task: bool,
    /// How often a call that timed out or lost its server is sent again
    /// ([`AnnotationPolicy::retry_idempotent`]).
    pub(super) retry: Retry,
}

impl RemoteCall {
    pub(super) async fn run(&self, args: &Value, ctx: &ToolRunContext) -> Result<Value, ToolError> {
        if let Err(violations) = self.input.validate(args) {
            return Err(ToolError::with_code(
                tools_runtime::codes::INVALID_ARGS,
                format!("invalid arguments for `{}`: {violations}", ctx.name()),
            ));
        }
        let Some(map) = args.as_object() else {
            return Err(ToolError::with_code(
                tools_runtime::codes::INVALID_ARGS,
                "the arguments of an MCP tool must be a JSON object",
            ));
        };
        let mut attempt = 0;
        loop {
            let error = match self.send(map, ctx).await {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            let Some(backoff) = self.retry.next(attempt, error.code()) else {
                return Err(error);
            };
            attempt += 1;
            tracing::debug!(
                tool = %ctx.name(),
                attempt,
                code = %error.code(),
                ?backoff,
                "retrying an idempotent MCP tool's call"
            );
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => return Err(error),
                () = tokio::time::sleep(backoff) => {}
            }
        }
    }

    /// One send of the call, in a client span of its own.
    async fn send(
        &self,
        map: &serde_json::Map<String, Value>,
        ctx: &ToolRunContext,
    ) -> Result<Value, ToolError> {
        let gone = |why: &str| server_gone(ctx.name(), why);
        let Some(inner) = self.inner.upgrade() else {
            return Err(gone("the import was closed"));
        };
        let Some((peer, routes, wire)) = current(&inner) else {
            return Err(gone("it exited or the connection broke"));
        };
        drop(inner);
        // The request's client span, the child of this call's `execute_tool` span; the trace
        // context the request carries is its own, so the server's span is its child.
        let span = crate::trace::client_span(&self.remote, &wire);
        let outcome =
            crate::trace::within(span.clone(), self.request(map, peer, routes, ctx, &span)).await;
        outcome.map_err(|Failed { error, kind }| {
            crate::trace::failed(&span, &kind);
            error
        })
    }

    /// The `tools/call` itself, in its client span `span`: sent, awaited (as a task when the
    /// answer is one), and its result read.
    async fn request(
        &self,
        map: &serde_json::Map<String, Value>,
        peer: Peer<RoleClient>,
        routes: Arc<ProgressRoutes>,
        ctx: &ToolRunContext,
        span: &tracing::Span,
    ) -> Result<Value, Failed> {
        let gone = |why: &str| server_gone(ctx.name(), why);
        let mut params = CallToolRequestParams::new(self.remote.clone());
        params.arguments = Some(map.clone());
        // The importing call's trace context, for the server's span (feature `otel`).
        crate::trace::inject(&mut params);
        let request = if self.as_task {
            task_augmented(params, self.limits)
        } else {
            ClientRequest::CallToolRequest(CallToolRequest::new(params))
        };
        let aborted = || {
            ToolError::with_code(
                tools_runtime::codes::ABORTED,
                "the call was cancelled; the MCP server was told",
            )
        };
        let mut limits = Deadline::start(self.limits);
        let (until, mut limit) = limits.next();
        let deadline = tokio::time::sleep_until(until);
        tokio::pin!(deadline);
        let sent = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => return Err(aborted().into()),
            () = &mut deadline => return Err(limits.error(limit, ctx.name(), None).into()),
            sent = peer.send_request_with_option(request, PeerRequestOptions::no_options()) => sent,
        };
        let handle = match sent {
            Ok(handle) => handle,
            Err(e) => return Err(call_failed(e, ctx.name(), &gone)),
        };
        crate::trace::sent(span, &handle.id);
        // From here, leaving before the answer (cancelled, past the timeout, or this future
        // dropped) sends `notifications/cancelled`, or `tasks/cancel` when the answer is a task
        // after all (see `Abandoned`).
        let mut progress = routes.claim(&handle.progress_token);
        let mut abandoned = Abandoned::request(peer.clone(), handle, self.as_task);
        let outcome = loop {
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => return Err(aborted().into()),
                () = &mut deadline => return Err(limits.error(limit, ctx.name(), None).into()),
                outcome = abandoned.answer() => break outcome,
                Some(update) = progress.next() => {
                    if let Update::Progress(report) = update
                        && forward_progress(ctx, &report)
                    {
                        limit = limits.moved(deadline.as_mut());
                    }
                }
            }
        };
        drop(abandoned);
        // A long-running tool may answer with a task (the server's choice under SEP-2663, the
        // draft's for a task-augmented call): await it.
        let outcome = match outcome.as_ref().ok().and_then(TaskState::created) {
            Some((dialect, task)) => {
                let result = await_task(&peer, dialect, task, ctx, &mut limits, progress).await?;
                Ok(ServerResult::CallToolResult(result))
            }
            None => {
                // The reports the server sent before its answer, still queued.
                while let Some(update) = progress.queued() {
                    if let Update::Progress(report) = update {
                        let _taken = forward_progress(ctx, &report);
                    }
                }
                drop(progress);
                outcome
            }
        };
        let result = match outcome.map(call_tool_result) {
            Ok(Ok(result)) => result,
            Ok(Err(unexpected)) => {
                return Err(ToolError::with_code(
                    codes::MCP_INVALID_RESULT,
                    format!(
                        "the MCP server answered `{}` with {unexpected}, not a tools/call result",
                        ctx.name()
                    ),
                )
                .into());
            }
            Err(e) => return Err(call_failed(e, ctx.name(), &gone)),
        };
        if result.is_error == Some(true) {
            let mut text = content_text(&result.content);
            if text.is_empty()
                && let Some(s) = &result.structured_content
            {
                text = serde_json::to_string(s).unwrap_or_default();
            }
            if text.is_empty() {
                text = "the MCP server reported an error without a message".to_owned();
            }
            // The pipeline writes a failure as `Error: <message>`; a server's text that says
            // `Error: ` already (as a served scope's failures do) is not said twice.
            if let Some(rest) = text.strip_prefix("Error: ") {
                text = rest.to_owned();
            }
            return Err(Failed::tool_error(ToolError::with_code(
                codes::MCP_TOOL_ERROR,
                text,
            )));
        }
        match &self.output {
            Some(check) => {
                let Some(value) = result.structured_content else {
                    return Err(ToolError::with_code(
                        codes::MCP_INVALID_RESULT,
                        "the MCP server declared an output schema but returned no structuredContent",
                    )
                    .into());
                };
                if let Err(violations) = check.validate(&value) {
                    return Err(ToolError::with_code(
                        codes::MCP_INVALID_RESULT,
                        format!(
                            "the MCP server's result does not match its output schema: {violations}"
                        ),
                    )
                    .into());
                }
                Ok(value)
            }
            None => Ok(Value::String(content_text(&result.content))),
        }
    }
}
