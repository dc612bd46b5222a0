//! MCP tasks as the 2025-11-25 draft puts them on the wire (the TypeScript SDK's experimental
//! tasks, which npm's server-everything speaks), for the import; and the state of a task in
//! either dialect.
//!
//! In the draft a server says per tool whether its calls run as tasks: the tool's
//! `execution.taskSupport` in `tools/list` is `"required"`, `"optional"` or `"forbidden"`. A
//! client asks for a task by adding `task` (`{"ttl": ms}`) to the `tools/call` params (a
//! task-augmented request); the server answers `{"task": {taskId, status, statusMessage?,
//! createdAt, lastUpdatedAt, ttl, pollInterval?}}`, answers `tasks/get` with the task's fields,
//! `tasks/result` with the call's result once the task is terminal (blocking until then),
//! `tasks/cancel` with the cancelled task, and may send `notifications/tasks/status` (the task's
//! fields) at each change. SEP-2663, which rmcp 3.11 speaks, has none of these shapes: a task
//! there is the server's choice, flattened with `resultType: "task"`, and its result comes inline
//! in `tasks/get`.
//!
//! rmcp's `Tool` has no `execution` and drops it while reading `tools/list`. So that the import
//! can see it, the transports of an import hand each answer that mentions `taskSupport` to
//! [`carry_execution`] before rmcp reads it (stdio's each line, HTTP's each `tools/list` answer,
//! an SSE event or a plain JSON body alike), which copies each tool's `execution` into the tool's
//! `_meta` under [`EXECUTION_META`], a key of this crate; [`task_support`] reads it back and
//! [`forget_execution`] removes it where tools are handed out as the server gave them. The other
//! draft shapes pass through rmcp as they are: a `{"task": …}` answer is a `CustomResult`, a
//! `tasks/get` answer a `GetTaskResult` (when rmcp can read it as one) or a `CustomResult`, a
//! status notification a `CustomNotification`; [`TaskState`] reads a task from any of them.

use rmcp::model::{CustomNotification, JsonObject, ServerResult, TaskStatus, Tool};
use serde_json::Value;

/// The `_meta` key under which an import keeps a tool's draft `execution` (see the module doc).
pub(crate) const EXECUTION_META: &str = "tools-mcp/execution";
/// The draft's task status notification.
pub(crate) const STATUS_NOTIFICATION: &str = "notifications/tasks/status";
/// The draft's request for a task's result.
pub(crate) const RESULT_METHOD: &str = "tasks/result";

/// What a tool declares of tasks in the draft (`execution.taskSupport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskSupport {
    /// Its calls must be task-augmented.
    Required,
    /// Its calls may be task-augmented.
    Optional,
    /// Its calls must not be (also what an unknown word means).
    Forbidden,
}

/// What `tool` declares of draft tasks, as [`carry_execution`] kept it; `None` when it declares
/// nothing.
pub(crate) fn task_support(tool: &Tool) -> Option<TaskSupport> {
    let word = tool
        .meta
        .as_ref()?
        .get(EXECUTION_META)?
        .get("taskSupport")?
        .as_str()?;
    Some(match word {
        "required" => TaskSupport::Required,
        "optional" => TaskSupport::Optional,
        _ => TaskSupport::Forbidden,
    })
}

/// Removes what [`carry_execution`] added to `tool` (an empty `_meta` goes too).
pub(crate) fn forget_execution(tool: &mut Tool) {
    if let Some(meta) = &mut tool.meta {
        meta.remove(EXECUTION_META);
        if meta.is_empty() {
            tool.meta = None;
        }
    }
}

/// Whether `text` has `needle` in it.
fn mentions(text: &[u8], needle: &[u8]) -> bool {
    let Some((first, rest)) = needle.split_first() else {
        return true;
    };
    text.windows(needle.len())
        .any(|w| w[0] == *first && &w[1..] == rest)
}

/// The message `text` with each listed tool's `execution` copied into its `_meta` under
/// [`EXECUTION_META`] (any value there before is replaced, or removed when the tool has no
/// `execution`); `None` when there is nothing to carry (no `taskSupport` in it, not JSON, no
/// `result.tools`), and the message goes to rmcp as it came.
pub(crate) fn carry_execution(text: &[u8]) -> Option<Vec<u8>> {
    if !mentions(text, b"taskSupport") {
        return None;
    }
    let mut message: Value = serde_json::from_slice(text).ok()?;
    let tools = message
        .get_mut("result")?
        .get_mut("tools")?
        .as_array_mut()?;
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        let execution = tool.get("execution").filter(|e| e.is_object()).cloned();
        let meta = tool
            .entry("_meta")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        let Some(meta) = meta.as_object_mut() else {
            continue;
        };
        match execution {
            Some(execution) => {
                meta.insert(EXECUTION_META.to_owned(), execution);
            }
            None => {
                meta.remove(EXECUTION_META);
            }
        }
        if meta.is_empty() {
            tool.remove("_meta");
        }
    }
    serde_json::to_vec(&message).ok()
}

/// The dialect a task was made in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// SEP-2663 (the `io.modelcontextprotocol/tasks` extension, as rmcp 3.11 speaks it): the
    /// result comes inline in `tasks/get`.
    Extension,
    /// The 2025-11-25 draft: the result comes from `tasks/result`.
    Draft,
}

/// A task's state, as either dialect reports it (`tasks/get`, the answer that made it, a status
/// notification).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskState {
    /// The task's id.
    pub(crate) id: String,
    /// Its status.
    pub(crate) status: TaskStatus,
    /// Its `statusMessage`.
    pub(crate) message: Option<String>,
    /// Its `lastUpdatedAt` (ISO 8601; empty when absent).
    pub(crate) updated: String,
    /// The polling interval it suggests, in milliseconds (`pollIntervalMs`, the draft's
    /// `pollInterval`).
    pub(crate) poll_ms: Option<u64>,
    /// SEP-2663: the result of a completed task, inline.
    pub(crate) result: Option<JsonObject>,
    /// SEP-2663: the JSON-RPC error of a failed task, inline.
    pub(crate) error: Option<JsonObject>,
}

impl TaskState {
    /// The task in the fields of `value` (`taskId` and `status` needed).
    fn from_value(value: &Value) -> Option<TaskState> {
        let id = value.get("taskId")?.as_str()?.to_owned();
        let status: TaskStatus = serde_json::from_value(value.get("status")?.clone()).ok()?;
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let object = |key: &str| value.get(key).and_then(Value::as_object).cloned();
        let poll_ms = value
            .get("pollIntervalMs")
            .or_else(|| value.get("pollInterval"))
            .and_then(Value::as_u64);
        Some(TaskState {
            id,
            status,
            message: text("statusMessage"),
            updated: text("lastUpdatedAt").unwrap_or_default(),
            poll_ms,
            result: object("result"),
            error: object("error"),
        })
    }

    /// The task a `tools/call` was answered with, and its dialect; `None` for any other answer.
    pub(crate) fn created(answer: &ServerResult) -> Option<(Dialect, TaskState)> {
        match answer {
            ServerResult::CreateTaskResult(created) => {
                let value = serde_json::to_value(&created.task).ok()?;
                Some((Dialect::Extension, TaskState::from_value(&value)?))
            }
            ServerResult::CustomResult(custom) => Some((
                Dialect::Draft,
                TaskState::from_value(custom.0.get("task")?)?,
            )),
            _ => None,
        }
    }

    /// The id of the draft task a `tools/call` was answered with, if it was.
    pub(crate) fn created_draft_id(answer: &ServerResult) -> Option<&str> {
        match answer {
            ServerResult::CustomResult(custom) => custom.0.get("task")?.get("taskId")?.as_str(),
            _ => None,
        }
    }

    /// The task in a `tasks/get` answer, in either dialect.
    pub(crate) fn got(answer: &ServerResult) -> Option<TaskState> {
        let value = match answer {
            ServerResult::GetTaskResult(got) => serde_json::to_value(got).ok()?,
            ServerResult::CustomResult(custom) => custom.0.clone(),
            _ => return None,
        };
        TaskState::from_value(&value)
    }

    /// The task of a draft `notifications/tasks/status`; `None` for another notification.
    pub(crate) fn notified(notification: &CustomNotification) -> Option<TaskState> {
        if notification.method != STATUS_NOTIFICATION {
            return None;
        }
        TaskState::from_value(notification.params.as_ref()?)
    }

    /// Whether this state is a later one than `seen`, the last taken (`None` before the
    /// first): updated later, or at the same time and saying something else (a server whose
    /// clock ticks coarsely). The same server writes both times, so ISO 8601 strings of one
    /// format compare as times; a terminal state is always later.
    pub(crate) fn later_than(&self, seen: Option<&TaskState>) -> bool {
        let Some(seen) = seen else {
            return true;
        };
        self.status.is_terminal()
            || self.updated > seen.updated
            || (self.updated == seen.updated
                && (self.status != seen.status || self.message != seen.message))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rmcp::model::{ServerJsonRpcMessage, ServerNotification};
    use serde_json::json;

    /// How rmcp reads a server's answer.
    fn answer(result: Value) -> ServerResult {
        let message = json!({"jsonrpc": "2.0", "id": 1, "result": result});
        match serde_json::from_value::<ServerJsonRpcMessage>(message).unwrap() {
            ServerJsonRpcMessage::Response(response) => response.result,
            other => panic!("not a response: {other:?}"),
        }
    }

    fn draft_task(status: &str) -> Value {
        json!({
            "taskId": "t1",
            "status": status,
            "ttl": 300_000,
            "createdAt": "2026-01-01T00:00:00.000Z",
            "lastUpdatedAt": "2026-01-01T00:00:01.000Z",
            "pollInterval": 1000,
            "statusMessage": "Analyzing content..."
        })
    }

    #[test]
    fn a_listed_tools_execution_survives_rmcp_in_its_meta() {
        let line = json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [
            {"name": "slow", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}},
            {"name": "maybe", "inputSchema": {"type": "object"}, "_meta": {"x": 1},
             "execution": {"taskSupport": "optional"}},
            {"name": "plain", "inputSchema": {"type": "object"},
             "_meta": {EXECUTION_META: {"taskSupport": "required"}}},
            {"name": "never", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "forbidden"}}
        ]}});
        let carried = carry_execution(line.to_string().as_bytes()).unwrap();
        let message: ServerJsonRpcMessage = serde_json::from_slice(&carried).unwrap();
        let ServerJsonRpcMessage::Response(response) = message else {
            panic!("not a response");
        };
        let ServerResult::ListToolsResult(list) = response.result else {
            panic!("not a tools list");
        };
        let support: Vec<_> = list.tools.iter().map(task_support).collect();
        assert_eq!(
            support,
            [
                Some(TaskSupport::Required),
                Some(TaskSupport::Optional),
                None,
                Some(TaskSupport::Forbidden)
            ]
        );
        let mut maybe = list.tools[1].clone();
        forget_execution(&mut maybe);
        assert_eq!(maybe.meta.as_ref().unwrap().get("x"), Some(&json!(1)));
        assert!(maybe.meta.as_ref().unwrap().get(EXECUTION_META).is_none());
        let mut slow = list.tools[0].clone();
        forget_execution(&mut slow);
        assert!(slow.meta.is_none());
        // Nothing to carry: the line goes as it came.
        assert!(carry_execution(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_none());
        assert!(carry_execution(br#"{"taskSupport": "#).is_none());
    }

    #[test]
    fn rmcp_keeps_a_draft_task_answer_whole() {
        let created = answer(json!({"task": draft_task("working")}));
        assert!(
            matches!(created, ServerResult::CustomResult(_)),
            "{created:?}"
        );
        assert_eq!(TaskState::created_draft_id(&created), Some("t1"));
        let (dialect, state) = TaskState::created(&created).unwrap();
        assert_eq!(dialect, Dialect::Draft);
        assert_eq!(state.status, TaskStatus::Working);
        assert_eq!(state.poll_ms, Some(1000));
        assert_eq!(state.message.as_deref(), Some("Analyzing content..."));
        // tasks/get, whatever rmcp makes of it.
        for status in [
            "working",
            "input_required",
            "completed",
            "failed",
            "cancelled",
        ] {
            let got = TaskState::got(&answer(draft_task(status))).unwrap();
            assert_eq!(got.id, "t1");
            assert_eq!(serde_json::to_value(got.status).unwrap(), json!(status));
            assert_eq!(got.updated, "2026-01-01T00:00:01.000Z");
            assert!(got.result.is_none() && got.error.is_none());
        }
        // A plain result is no task.
        let plain = answer(json!({"content": []}));
        assert!(TaskState::created(&plain).is_none());
        assert!(TaskState::created_draft_id(&plain).is_none());
    }

    #[test]
    fn a_status_notification_is_read() {
        let message = json!({"jsonrpc": "2.0", "method": STATUS_NOTIFICATION,
                             "params": draft_task("working")});
        let ServerJsonRpcMessage::Notification(notification) =
            serde_json::from_value::<ServerJsonRpcMessage>(message).unwrap()
        else {
            panic!("not a notification");
        };
        let ServerNotification::CustomNotification(custom) = notification.notification else {
            panic!("not a custom notification");
        };
        let state = TaskState::notified(&custom).unwrap();
        assert_eq!(state.id, "t1");
        assert!(state.later_than(None));
        let mut seen = state.clone();
        assert!(!state.later_than(Some(&seen)), "the same state again");
        seen.updated = "2026-01-01T00:00:00.999Z".to_owned();
        assert!(state.later_than(Some(&seen)));
        seen.updated = "2026-01-01T00:00:01.001Z".to_owned();
        assert!(!state.later_than(Some(&seen)), "an older state");
        seen.updated.clone_from(&state.updated);
        seen.message = Some("Gathering sources...".to_owned());
        assert!(
            state.later_than(Some(&seen)),
            "the same time, another message"
        );
    }
}
