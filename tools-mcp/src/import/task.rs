//! Awaiting the MCP task a server answered a call with, in either dialect ([`await_task`]):
//! `tasks/get` at the task's interval, the draft's status notifications and progress, the
//! result inline or from `tasks/result`; and the draft's task-augmented `tools/call`
//! ([`task_augmented`]).

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ClientRequest};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::{Value, json};
use tools_runtime::progress::Progress;
use tools_runtime::{ToolError, ToolRunContext};
use tools_schema::excerpt::cut;

use super::answer::{Failed, call_failed, call_tool_result, server_gone};
use super::cancel::Abandoned;
use super::deadline::{CallLimits, Deadline, Limit};
use super::progress::{forward_progress, take_progress};
use crate::error::codes;
use crate::progress::{Claimed, Update};
use crate::tasks_draft::{Dialect, TaskState};

/// The bounds of the interval between two `tasks/get` of a task; the server's `pollIntervalMs`
/// (the draft's `pollInterval`) is held to them, 500 ms without one.
const POLL_MIN: Duration = Duration::from_millis(50);

const POLL_MAX: Duration = Duration::from_secs(5);

const POLL_DEFAULT: Duration = Duration::from_millis(500);

fn poll_interval(suggested: Option<u64>) -> Duration {
    suggested
        .map(Duration::from_millis)
        .unwrap_or(POLL_DEFAULT)
        .clamp(POLL_MIN, POLL_MAX)
}

/// A task-augmented `tools/call` of the 2025-11-25 draft: `params` with `task` added, its `ttl`
/// the longest the call may wait (none for a zero bound: the server's choice). The request's
/// `_meta` (trace context) goes where rmcp adds the progress token.
pub(super) fn task_augmented(
    mut params: CallToolRequestParams,
    limits: CallLimits,
) -> ClientRequest {
    let meta = params.meta.take();
    let mut task = serde_json::Map::new();
    let bound = Deadline::bound(limits);
    if !bound.is_zero() {
        let ttl = u64::try_from(bound.as_millis()).unwrap_or(u64::MAX);
        task.insert("ttl".to_owned(), Value::from(ttl));
    }
    let mut body = match serde_json::to_value(&params) {
        Ok(Value::Object(body)) => body,
        _ => serde_json::Map::new(),
    };
    body.insert("task".to_owned(), Value::Object(task));
    let mut request = rmcp::model::CustomRequest::new("tools/call", Some(Value::Object(body)));
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
    ClientRequest::CustomRequest(request)
}

/// A call awaiting its task: what it has seen of it (the last state taken, the polling
/// interval, the status messages it reported as progress) and the call's limits.
struct Awaiting<'a> {
    peer: &'a Peer<RoleClient>,
    ctx: &'a ToolRunContext,
    limits: &'a mut Deadline,
    dialect: Dialect,
    id: String,
    /// When the call runs out of time, and which limit that is.
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    limit: Limit,
    /// `tasks/cancel` unless disarmed.
    cancel: Abandoned,
    /// Whether the call was cancelled or ran out of time (then `tasks/cancel` goes, whatever
    /// the task's state).
    stopped: bool,
    /// The last state taken (without its inline result).
    seen: Option<TaskState>,
    interval: Duration,
    /// Whether the server sent `notifications/progress` for the call (then its status messages
    /// are no longer reports).
    reported: bool,
    /// How many status messages were reported.
    statuses: u32,
    last_message: Option<String>,
}

impl Awaiting<'_> {
    /// `future`'s output, unless the call is cancelled or runs out of time first.
    async fn within<F: Future>(&mut self, future: F) -> Result<F::Output, Failed> {
        let outcome = tokio::select! {
            biased;
            () = self.ctx.cancellation().cancelled() => Err(self.aborted().into()),
            () = &mut self.deadline => Err(self.timed_out().into()),
            output = future => Ok(output),
        };
        self.stopped |= outcome.is_err();
        outcome
    }

    fn aborted(&self) -> ToolError {
        ToolError::with_code(
            tools_runtime::codes::ABORTED,
            format!(
                "the call was cancelled; the MCP server was told (tasks/cancel of `{}`)",
                cut(&self.id)
            ),
        )
    }

    fn timed_out(&self) -> ToolError {
        self.limits
            .error(self.limit, self.ctx.name(), Some(&self.id))
    }

    fn failed(&self, error: ServiceError) -> Failed {
        call_failed(error, self.ctx.name(), &|why| {
            server_gone(self.ctx.name(), why)
        })
    }

    /// Takes `state` when it is this task's and later than the last
    /// ([`TaskState::later_than`]): it counts as progress for the call's limits, sets the
    /// polling interval, and (draft) its new status message becomes a progress report, numbered
    /// 1, 2, ... Gives the state taken.
    fn take(&mut self, state: TaskState) -> Option<TaskState> {
        let terminal = state.status.is_terminal();
        if state.id != self.id || !state.later_than(self.seen.as_ref()) {
            return None;
        }
        self.seen = Some(TaskState {
            result: None,
            error: None,
            ..state.clone()
        });
        self.interval = poll_interval(state.poll_ms);
        self.limit = self.limits.moved(self.deadline.as_mut());
        if self.dialect == Dialect::Draft
            && !self.reported
            && !terminal
            && let Some(message) = &state.message
            && self.last_message.as_ref() != Some(message)
        {
            self.last_message = Some(message.clone());
            self.statuses += 1;
            let progress = Progress::new(f64::from(self.statuses)).with_message(message.clone());
            let _taken = take_progress(self.ctx, progress);
        }
        Some(state)
    }

    /// One update from the server: a progress report goes to the call (and counts as
    /// progress), a status is taken as [`take`](Self::take) says. Gives a status taken.
    fn update(&mut self, update: Update) -> Option<TaskState> {
        match update {
            Update::Progress(progress) => {
                self.reported = true;
                if forward_progress(self.ctx, &progress) {
                    self.limit = self.limits.moved(self.deadline.as_mut());
                }
                None
            }
            Update::Status(state) => self.take(state),
        }
    }

    /// The task's state from `tasks/get`, taken as [`take`](Self::take) says.
    async fn poll(&mut self) -> Result<Option<TaskState>, Failed> {
        use rmcp::model::{GetTaskParams, GetTaskRequest};
        let get = GetTaskRequest::new(GetTaskParams::new(self.id.clone()));
        let peer = self.peer;
        let got = self
            .within(peer.send_request(ClientRequest::GetTaskRequest(get)))
            .await?
            .map_err(|e| self.failed(e))?;
        let got = TaskState::got(&got).ok_or_else(|| {
            ToolError::with_code(
                codes::MCP_INVALID_RESULT,
                format!(
                    "the MCP server answered tasks/get for `{}` with no task",
                    self.ctx.name()
                ),
            )
        })?;
        Ok(self.take(got))
    }

    /// The call's outcome once its task is in `state`; `None` while the task works.
    async fn outcome(&mut self, state: &mut TaskState) -> Option<Result<CallToolResult, Failed>> {
        use rmcp::model::TaskStatus;
        let tool = self.ctx.name();
        let outcome = match state.status {
            TaskStatus::Completed => match self.dialect {
                Dialect::Extension => {
                    let result = Value::Object(state.result.take().unwrap_or_default());
                    serde_json::from_value::<CallToolResult>(result).map_err(|e| {
                        ToolError::with_code(
                            codes::MCP_INVALID_RESULT,
                            format!(
                                "the MCP task of `{tool}` completed with no tools/call result: {}",
                                cut(&e.to_string())
                            ),
                        )
                        .into()
                    })
                }
                Dialect::Draft => self.fetch_result().await,
            },
            TaskStatus::Failed => {
                let words = state
                    .error
                    .as_ref()
                    .and_then(|error| error.get("message"))
                    .and_then(Value::as_str)
                    .or(state.message.as_deref())
                    .unwrap_or("no message");
                Err(Failed::tool_error(ToolError::with_code(
                    codes::MCP_TOOL_ERROR,
                    format!("the MCP task of `{tool}` failed: {}", cut(words)),
                )))
            }
            TaskStatus::Cancelled => {
                let why = state
                    .message
                    .as_deref()
                    .map(|m| format!(": {}", cut(m)))
                    .unwrap_or_default();
                Err(Failed::tool_error(ToolError::with_code(
                    codes::MCP_TOOL_ERROR,
                    format!("the MCP server cancelled the task of `{tool}`{why}"),
                )))
            }
            TaskStatus::InputRequired => {
                // Left armed: the task is cancelled.
                return Some(Err(Failed::tool_error(ToolError::with_code(
                    codes::MCP_TOOL_ERROR,
                    format!(
                        "the MCP task of `{tool}` asks for input, which an imported tool cannot \
                         give; the task was cancelled"
                    ),
                ))));
            }
            _ => return None,
        };
        if !self.stopped {
            self.cancel.disarm();
        }
        Some(outcome)
    }

    /// The draft's `tasks/result` of the completed task, read as a `tools/call` answer is.
    async fn fetch_result(&mut self) -> Result<CallToolResult, Failed> {
        let request = rmcp::model::CustomRequest::new(
            crate::tasks_draft::RESULT_METHOD,
            Some(json!({"taskId": self.id})),
        );
        let peer = self.peer;
        let fetched = self
            .within(peer.send_request(ClientRequest::CustomRequest(request)))
            .await?
            .map_err(|e| self.failed(e))?;
        call_tool_result(fetched).map_err(|unexpected| {
            ToolError::with_code(
                codes::MCP_INVALID_RESULT,
                format!(
                    "the MCP server answered tasks/result of `{}` with {unexpected}, not a \
                     tools/call result",
                    self.ctx.name()
                ),
            )
            .into()
        })
    }
}

/// Awaits the MCP task a server answered a call with, in its dialect: `tasks/get` at the
/// interval the task suggests, and (draft) the server's `notifications/progress` and
/// `notifications/tasks/status` for it as they come on `updates`, until the task ends, within
/// the call's limits (a newer state counts as progress). A completed task's result is inline
/// (SEP-2663) or fetched with `tasks/result` (draft). Leaving early (cancelled, past a limit, the
/// future dropped, a task that asks for input) sends `tasks/cancel`.
pub(super) async fn await_task(
    peer: &Peer<RoleClient>,
    dialect: Dialect,
    first: TaskState,
    ctx: &ToolRunContext,
    limits: &mut Deadline,
    mut updates: Claimed,
) -> Result<CallToolResult, Failed> {
    let (until, limit) = limits.next();
    let id = first.id.clone();
    let mut awaiting = Awaiting {
        peer,
        ctx,
        limits,
        dialect,
        cancel: Abandoned::task(peer.clone(), id.clone()),
        stopped: false,
        id,
        deadline: Box::pin(tokio::time::sleep_until(until)),
        limit,
        seen: None,
        interval: POLL_DEFAULT,
        reported: false,
        statuses: 0,
        last_message: None,
    };
    // What came with or before the answer, in order, then the state the answer gave.
    let mut latest = None;
    while let Some(update) = updates.queued() {
        latest = awaiting.update(update).or(latest);
    }
    let mut state = awaiting.take(first).or(latest).ok_or_else(|| {
        ToolError::with_code(
            codes::MCP_INVALID_RESULT,
            format!(
                "the MCP server answered `{}` with a task without a state",
                ctx.name()
            ),
        )
    })?;
    let mut poll = Box::pin(tokio::time::sleep(awaiting.interval));
    loop {
        if let Some(outcome) = awaiting.outcome(&mut state).await {
            return outcome;
        }
        let next = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => return Err(awaiting.aborted().into()),
            () = &mut awaiting.deadline => return Err(awaiting.timed_out().into()),
            Some(update) = updates.next() => awaiting.update(update),
            () = &mut poll => {
                let taken = awaiting.poll().await?;
                poll.as_mut().reset(tokio::time::Instant::now() + awaiting.interval);
                taken
            }
        };
        if let Some(next) = next {
            state = next;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rmcp::model::{
        ClientJsonRpcMessage, GetMeta, NumberOrString, ProgressToken, RequestId, RequestParamsMeta,
    };

    #[test]
    fn a_task_augmented_call_keeps_its_meta_and_asks_for_the_calls_bound() {
        let mut params = CallToolRequestParams::new("slow");
        params.arguments = json!({"n": 1}).as_object().cloned();
        params.set_traceparent("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
        let limits = CallLimits {
            timeout: Duration::from_secs(2),
            max_total: None,
        };
        let mut request = task_augmented(params, limits);
        // What rmcp adds as it sends the request.
        request
            .get_meta_mut()
            .set_progress_token(ProgressToken(NumberOrString::Number(7)));
        let message = ClientJsonRpcMessage::request(request, RequestId::Number(1));
        let wire = serde_json::to_value(&message).unwrap();
        assert_eq!(wire["method"], "tools/call");
        let params = &wire["params"];
        assert_eq!(params["name"], "slow");
        assert_eq!(params["arguments"], json!({"n": 1}));
        assert_eq!(params["task"], json!({"ttl": 2000}));
        assert_eq!(params["_meta"]["progressToken"], 7);
        assert!(
            params["_meta"]["traceparent"]
                .as_str()
                .is_some_and(|t| t.starts_with("00-0af7")),
            "{wire}"
        );
        let text = serde_json::to_string(&message).unwrap();
        assert_eq!(text.matches("\"_meta\"").count(), 1, "{text}");

        // A timeout that restarts on progress: its maximum total time is the bound.
        let limits = CallLimits {
            timeout: Duration::from_secs(2),
            max_total: Some(Duration::from_secs(30)),
        };
        let request = task_augmented(CallToolRequestParams::new("slow"), limits);
        let wire =
            serde_json::to_value(ClientJsonRpcMessage::request(request, RequestId::Number(2)))
                .unwrap();
        assert_eq!(wire["params"]["task"], json!({"ttl": 30_000}));
    }
}
