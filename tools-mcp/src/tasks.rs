//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663, as rmcp 3.11 speaks it),
//! served.
//!
//! A tool is long-running when its definition says so
//! ([`ToolDefinitionBuilder::long_running`](tools_runtime::definition::ToolDefinitionBuilder::long_running),
//! `#[tool(long_running)]`) or when [`TaskOptions::tool`] names it (by its served name: for a
//! tool whose definition is not yours to mark, such as an imported one or `run_code`). Either
//! is enough; naming cannot turn a long-running definition off, only
//! [`TaskOptions::long_running_definitions`]`(false)` can, for every tool at once (a server
//! behind a balancer, where a `tasks/get` may reach another process, wants that). Every server
//! follows the definitions with the default options; [`McpServer::tasks`](crate::McpServer::tasks)
//! gives other options. The server declares the extension when a tool it lists is long-running
//! or the options name a tool (looked at again when the list changes). With a tenant rule
//! ([`McpServer::tenants`](crate::McpServer::tenants)) the caller's slice decides, not the
//! server's own scope: its `initialize` and `server/discover` declare the extension when that
//! slice lists a long-running tool, and its call of a tool is a task when the tool's definition
//! in that slice is long-running. (rmcp's own check of `tasks/get` and `tasks/cancel`, which has
//! no caller at hand, then lets them through whenever a slice may have tasks; a task of another
//! principal is still not found.)
//!
//! When a client that declares the tasks extension calls a long-running tool, the server answers
//! `tools/call` at once with a task (`CreateTaskResult`, status `working`) and runs the call in
//! the background through the same [`ToolRuntime::execute`](tools_runtime::ToolRuntime::execute)
//! pipeline as any call, so policy, guards, approval, wrappers and observers apply. A client that
//! does not declare the extension gets the ordinary answer, as before.
//!
//! - `tasks/get` gives the task's state: `working` (its `statusMessage` is the call's last
//!   progress report, and `lastUpdatedAt` moves with each report), then one terminal state that
//!   never changes: `completed` with the call's one result inline (an `isError` result for a
//!   denial or a tool error, as `tools/call` would answer), `cancelled`, or `failed` with a
//!   JSON-RPC error (the tool is unknown to the scope). SEP-2663 has no `tasks/result`: the
//!   result comes inline in the `tasks/get` of a finished task; a client waits by polling (the
//!   task suggests `pollIntervalMs`).
//! - `tasks/cancel` cancels the call's token (the body sees it as a cancellation of the call);
//!   once the call has settled the task is `cancelled`, whatever the body returned. Cancelling a
//!   finished task changes nothing. Closing the connection or the request's stream does not
//!   cancel a task: it outlives the request that created it.
//! - Bounds: at most [`TaskOptions::max_tasks`] tasks are kept (1024 by default), working and
//!   finished together; a finished task is kept [`TaskOptions::keep_finished`] (10 minutes by
//!   default, the task's `ttlMs` once it has finished) and then forgotten (`tasks/get` answers
//!   `-32602`, unknown task). When the table is full, finished tasks go first, oldest first; a
//!   table full of working tasks refuses a new one with a JSON-RPC error (`-32603`). Dropping
//!   the last clone of the server cancels the tasks still working.
//! - A task id is 128 bits from the process's random hash keys: whoever holds it can read and
//!   cancel the task (there is no other owner check, as a 2026-07-28 request has no session).
//!
//! Serve speaks SEP-2663 only. The import awaits a server's tasks in SEP-2663 and in the
//! 2025-11-25 draft, which one the server declares ([`import`](crate::import), Tasks).

use crate::lock;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use tokio_util::sync::CancellationToken;
use tools_runtime::progress::Progress;

/// The default of [`TaskOptions::max_tasks`].
pub const DEFAULT_MAX_TASKS: usize = 1024;
/// The default of [`TaskOptions::keep_finished`].
pub const DEFAULT_KEEP_FINISHED: Duration = Duration::from_secs(600);
/// The default of [`TaskOptions::poll_interval`].
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Which served tools run as MCP tasks besides those whose definition is long-running, and the
/// bounds of the task table (see the module doc).
#[derive(Debug, Clone)]
pub struct TaskOptions {
    tools: HashSet<String>,
    definitions: bool,
    max_tasks: usize,
    keep_finished: Duration,
    poll_interval: Duration,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            tools: HashSet::new(),
            definitions: true,
            max_tasks: DEFAULT_MAX_TASKS,
            keep_finished: DEFAULT_KEEP_FINISHED,
            poll_interval: DEFAULT_POLL_INTERVAL,
        }
    }
}

impl TaskOptions {
    /// The tools whose definitions are long-running run as tasks, no other;
    /// [`DEFAULT_MAX_TASKS`], [`DEFAULT_KEEP_FINISHED`], [`DEFAULT_POLL_INTERVAL`]. What every
    /// server has unless given other options.
    pub fn new() -> TaskOptions {
        TaskOptions::default()
    }

    /// The tool `name` (its served name) is long-running, whatever its definition says: a client
    /// that declares the tasks extension gets a task for each call of it.
    pub fn tool(mut self, name: impl Into<String>) -> TaskOptions {
        self.tools.insert(name.into());
        self
    }

    /// [`tool`](Self::tool) for each of `names`.
    pub fn tools<I, S>(mut self, names: I) -> TaskOptions
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tools.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether a tool whose definition is long-running
    /// ([`ToolDefinition::is_long_running`](tools_runtime::ToolDefinition::is_long_running))
    /// runs as a task (`true` by default). Off, only the tools named here do.
    pub fn long_running_definitions(mut self, on: bool) -> TaskOptions {
        self.definitions = on;
        self
    }

    /// The most tasks kept at once, working and finished (at least 1).
    pub fn max_tasks(mut self, n: usize) -> TaskOptions {
        self.max_tasks = n.max(1);
        self
    }

    /// How long a finished task is kept for `tasks/get` before it is forgotten.
    pub fn keep_finished(mut self, keep: Duration) -> TaskOptions {
        self.keep_finished = keep;
        self
    }

    /// The polling interval a task suggests to its client (`pollIntervalMs`).
    pub fn poll_interval(mut self, every: Duration) -> TaskOptions {
        self.poll_interval = every;
        self
    }
}

/// One task's state.
struct State {
    task: Task,
    terminal: Option<TaskPayload>,
    finished_at: Option<Instant>,
    cancel_requested: bool,
}

/// One task.
pub(crate) struct Entry {
    state: Mutex<State>,
    cancel: CancellationToken,
    serial: u64,
    /// Who created it (a served call's principal, subject and client): only they reach it.
    owner: Option<String>,
}

impl Entry {
    /// The task's id.
    #[cfg(test)]
    pub(crate) fn id(&self) -> String {
        lock(&self.state).task.task_id.clone()
    }

    /// The token of the task's call.
    pub(crate) fn cancellation(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The seed state for `CreateTaskResult`.
    pub(crate) fn task(&self) -> Task {
        lock(&self.state).task.clone()
    }

    /// The call reported progress: it becomes the status message.
    pub(crate) fn progress(&self, progress: &Progress) {
        let mut state = lock(&self.state);
        if state.terminal.is_some() {
            return;
        }
        let mut words = match progress.total() {
            Some(total) => format!("{} of {}", progress.done(), total),
            None => format!("{}", progress.done()),
        };
        if let Some(message) = progress.message() {
            words.push_str(": ");
            words.push_str(message);
        }
        state.task.status_message = Some(tools_schema::excerpt::cut(&words).into_owned());
        state.task.last_updated_at = now();
    }

    /// The call has settled with `outcome`: the task's one terminal state (cancelled when
    /// `tasks/cancel` came first, whatever the call returned).
    pub(crate) fn finish(&self, outcome: Result<CallToolResult, ErrorData>, keep: Duration) {
        let mut state = lock(&self.state);
        if state.terminal.is_some() {
            return;
        }
        let payload = if state.cancel_requested {
            TaskPayload::Cancelled
        } else {
            match outcome {
                Ok(result) => TaskPayload::Completed {
                    result: to_object(&result),
                },
                Err(error) => TaskPayload::Failed {
                    error: to_object(&error),
                },
            }
        };
        state.task.status = payload.status();
        state.terminal = Some(payload);
        state.finished_at = Some(Instant::now());
        state.task.last_updated_at = now();
        state.task.ttl_ms = Some(u64::try_from(keep.as_millis()).unwrap_or(u64::MAX));
    }

    fn detailed(&self) -> DetailedTask {
        let state = lock(&self.state);
        let payload = state.terminal.clone().unwrap_or(TaskPayload::Working);
        DetailedTask::new(state.task.clone(), payload)
    }

    fn finished_at(&self) -> Option<Instant> {
        lock(&self.state).finished_at
    }
}

fn to_object(value: &impl serde::Serialize) -> JsonObject {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => JsonObject::new(),
    }
}

/// The tasks of one server (every clone of it).
pub(crate) struct TaskTable {
    options: TaskOptions,
    tasks: Mutex<HashMap<String, Arc<Entry>>>,
    keys: std::hash::RandomState,
    serial: AtomicU64,
}

impl TaskTable {
    pub(crate) fn new(options: TaskOptions) -> TaskTable {
        TaskTable {
            options,
            tasks: Mutex::new(HashMap::new()),
            keys: std::hash::RandomState::new(),
            serial: AtomicU64::new(0),
        }
    }

    /// Whether calls of `tool` run as tasks; `long_running` says whether its definition is
    /// (asked only when the options do not name it and follow the definitions).
    pub(crate) fn runs(&self, tool: &str, long_running: impl FnOnce() -> bool) -> bool {
        self.options.tools.contains(tool) || (self.options.definitions && long_running())
    }

    /// Whether the options name any tool.
    pub(crate) fn names_any(&self) -> bool {
        !self.options.tools.is_empty()
    }

    /// Whether the definitions' word counts.
    pub(crate) fn follows_definitions(&self) -> bool {
        self.options.definitions
    }

    /// Whether no task is kept (without sweeping the finished ones out).
    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.tasks).is_empty()
    }

    /// How many tasks are kept, working and finished.
    pub(crate) fn len(&self) -> usize {
        let mut tasks = lock(&self.tasks);
        self.sweep(&mut tasks);
        tasks.len()
    }

    /// How long a finished task is kept.
    pub(crate) fn keep(&self) -> Duration {
        self.options.keep_finished
    }

    /// A new working task, or an error when the table is full of working tasks.
    pub(crate) fn create(&self, owner: Option<String>) -> Result<Arc<Entry>, ErrorData> {
        let mut tasks = lock(&self.tasks);
        self.sweep(&mut tasks);
        if tasks.len() >= self.options.max_tasks {
            // The oldest finished task goes.
            let oldest = tasks
                .iter()
                .filter_map(|(id, e)| e.finished_at().map(|at| (at, e.serial, id.clone())))
                .min()
                .map(|(_, _, id)| id);
            match oldest {
                Some(id) => {
                    tasks.remove(&id);
                }
                None => {
                    return Err(ErrorData::internal_error(
                        format!(
                            "too many MCP tasks working ({}, TaskOptions::max_tasks); try again \
                             when one has finished",
                            self.options.max_tasks
                        ),
                        None,
                    ));
                }
            }
        }
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        let id = self.new_id(serial);
        let at = now();
        let mut task = Task::new(id.clone(), TaskStatus::Working, at.clone(), at);
        task.poll_interval_ms =
            Some(u64::try_from(self.options.poll_interval.as_millis()).unwrap_or(u64::MAX));
        let entry = Arc::new(Entry {
            state: Mutex::new(State {
                task,
                terminal: None,
                finished_at: None,
                cancel_requested: false,
            }),
            cancel: CancellationToken::new(),
            serial,
            owner,
        });
        tasks.insert(id, entry.clone());
        Ok(entry)
    }

    /// `tasks/get` by `owner`: a task another principal created is unknown to it.
    pub(crate) fn get(&self, id: &str, owner: Option<&str>) -> Result<DetailedTask, ErrorData> {
        let mut tasks = lock(&self.tasks);
        self.sweep(&mut tasks);
        tasks
            .get(id)
            .filter(|e| e.owner.as_deref() == owner)
            .map(|e| e.detailed())
            .ok_or_else(|| unknown(id))
    }

    /// `tasks/cancel`: cancels a working task's call; a finished one is left as it is.
    pub(crate) fn cancel(&self, id: &str, owner: Option<&str>) -> Result<(), ErrorData> {
        let entry = {
            let mut tasks = lock(&self.tasks);
            self.sweep(&mut tasks);
            tasks
                .get(id)
                .filter(|e| e.owner.as_deref() == owner)
                .cloned()
                .ok_or_else(|| unknown(id))?
        };
        {
            let mut state = lock(&entry.state);
            if state.terminal.is_some() {
                return Ok(());
            }
            state.cancel_requested = true;
            state.task.status_message = Some("cancelling".to_owned());
            state.task.last_updated_at = now();
        }
        entry.cancel.cancel();
        Ok(())
    }

    /// Forgets finished tasks kept their time.
    fn sweep(&self, tasks: &mut HashMap<String, Arc<Entry>>) {
        let keep = self.options.keep_finished;
        tasks.retain(|_, e| e.finished_at().is_none_or(|at| at.elapsed() < keep));
    }

    fn new_id(&self, serial: u64) -> String {
        let mut id = String::with_capacity(32);
        for half in 0..2u8 {
            let mut hasher = self.keys.build_hasher();
            hasher.write_u64(serial);
            hasher.write_u8(half);
            id.push_str(&format!("{:016x}", hasher.finish()));
        }
        id
    }
}

impl Drop for TaskTable {
    fn drop(&mut self) {
        for entry in lock(&self.tasks).values() {
            entry.cancel.cancel();
        }
    }
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "unknown task `{}` (never created here, or forgotten since it finished)",
            tools_schema::excerpt::cut(id)
        ),
        None,
    )
}

/// Now, in ISO 8601 (UTC, milliseconds: a client can see each progress report move it).
fn now() -> String {
    iso8601(SystemTime::now())
}

/// `at` in ISO 8601, UTC, to the millisecond (the epoch for a time before it).
fn iso8601(at: SystemTime) -> String {
    let since = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn timestamps_are_iso_8601() {
        let at = |secs| iso8601(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(1_764_765_296), "2025-12-03T12:34:56.000Z");
        assert_eq!(
            iso8601(SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_765_296_789)),
            "2025-12-03T12:34:56.789Z"
        );
    }

    #[test]
    fn the_table_is_bounded_finished_tasks_going_first() {
        let table = TaskTable::new(TaskOptions::new().tool("t").max_tasks(2));
        let first = table.create(None).unwrap();
        let second = table.create(None).unwrap();
        assert_ne!(first.id(), second.id());
        assert_eq!(first.id().len(), 32);
        assert!(table.create(None).is_err(), "two working tasks fill it");
        first.finish(Ok(CallToolResult::success(vec![])), table.keep());
        let third = table.create(None).unwrap();
        assert!(
            table.get(&first.id(), None).is_err(),
            "the finished one went"
        );
        assert!(table.get(&second.id(), None).is_ok() && table.get(&third.id(), None).is_ok());
    }

    #[test]
    fn a_cancelled_task_ends_cancelled_and_keeps_its_one_result() {
        let table = TaskTable::new(TaskOptions::new().tool("t"));
        let task = table.create(None).unwrap();
        table.cancel(&task.id(), None).unwrap();
        assert!(task.cancellation().is_cancelled());
        assert_eq!(
            table.get(&task.id(), None).unwrap().status(),
            TaskStatus::Working
        );
        task.finish(Ok(CallToolResult::success(vec![])), table.keep());
        assert_eq!(
            table.get(&task.id(), None).unwrap().status(),
            TaskStatus::Cancelled
        );
        // The one result stays: a second settlement changes nothing.
        task.finish(Err(ErrorData::internal_error("late", None)), table.keep());
        assert_eq!(
            table.get(&task.id(), None).unwrap().status(),
            TaskStatus::Cancelled
        );
        table.cancel(&task.id(), None).unwrap();
        assert!(table.get("nope", None).is_err() && table.cancel("nope", None).is_err());
        // A task is its creator's: another principal, or none, finds no such task.
        let owned = table.create(Some("alice\u{0}app".to_owned())).unwrap();
        assert!(table.get(&owned.id(), Some("alice\u{0}app")).is_ok());
        assert!(table.get(&owned.id(), Some("bob\u{0}app")).is_err());
        assert!(table.get(&owned.id(), None).is_err());
        assert!(table.cancel(&owned.id(), Some("bob\u{0}app")).is_err());
        assert!(!owned.cancellation().is_cancelled());
    }

    #[test]
    fn finished_tasks_are_forgotten_after_their_time() {
        let table = TaskTable::new(TaskOptions::new().tool("t").keep_finished(Duration::ZERO));
        let task = table.create(None).unwrap();
        task.finish(Ok(CallToolResult::success(vec![])), table.keep());
        assert!(table.get(&task.id(), None).is_err());
    }
}
