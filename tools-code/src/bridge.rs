//! The dispatch bridge: `run_code`'s body. It runs the model's program on the configured
//! [`CodeRuntime`](super::CodeRuntime) and turns each call the program makes into a call
//! through the whole pipeline.
//!
//! # A program's calls
//!
//! - Each call gets a number `n` (from 1, in the order the program made its calls) and the id
//!   `<outer call id>:code:<n>`; it is made from the outer call's agent scope with the outer
//!   execution's token as its `parent`, so Code Mode's code-only rule does not apply to it and
//!   every listener can tell it from a direct call.
//! - Calls start strictly in that order through a pool of the run's own (an
//!   [`OrderedPool`], the one `execute_batch` uses): consecutive calls whose
//!   [`execution_mode`](tools_runtime::ToolRuntime::execution_mode) is `Parallel` overlap, at
//!   most [`CodeMode::max_parallel_sub_calls`] at once; an `Exclusive` call waits for the pool
//!   to empty, runs alone, and calls after it wait for it.
//! - A success resolves the program's call to the final value after policy; a failure rejects
//!   it with a `ToolCallError` carrying the tool's name and the failure's message, never its
//!   code or its content.
//! - A call that starts records `code-dispatch-start` as it enters the pipeline, a
//!   `code-dispatch-progress` for each progress report its tool makes, and `code-dispatch`
//!   with its model-facing outcome (see [`super::events`]). Each report is also reported as
//!   the `run_code` call's own progress (`done` counts the run's reports; the message names
//!   the tool and what it said), so a caller of `run_code` sees a long run move. Its additional
//!   contexts are deferred through the outer call in call order, after the run, whether the
//!   program succeeded or not.
//!
//! # Settlement
//!
//! Each run has its own cancellation token, a child of the outer call's, and its calls' tokens
//! are children of another child of the outer call's. Both fire when the run settles for any
//! reason (completion, failure, deadline, divergence, cancellation of the outer call), so
//! calls still running are cancelled cooperatively and calls still queued never start (and
//! record nothing). The bridge waits for every started call to finish before `run_code`
//! returns, so each `code-dispatch` is recorded before the outer result: that is its
//! [`CodeHost::settle`], which the runtime awaits when the program ends, and which `run_code`
//! runs again once the runtime returned (for a runtime that does not settle its host).
//! A run that pauses is the one exception, bounded by its deadline (below).
//! Dropping the outer call's future drops the calls in flight with it.
//!
//! # A run that pauses for approval, and its replay
//!
//! When durable approvals are installed ([`tools_runtime::approvals`]), the bridge journals
//! each call that finished (its number, tool, canonical arguments and outcome). When a call's
//! approval is deferred (`APPROVAL_PENDING`), the whole run pauses: the run's token fires, the
//! program stops and calls still queued never start, and `run_code` leaves a [`RunPause`] (the
//! call that waits, the journal) for the pipeline, which writes the `run_code` call to the
//! store; its result carries the handle.
//!
//! The pause is not stored while calls that started before it still run: the bridge waits
//! for them (their tokens are not fired), and journals each with its outcome as it finishes.
//! The wait is bounded by the run's deadline ([`CodeLimits::timeout`](crate::CodeLimits::timeout)
//! from the run's start) and ends early if the outer call is cancelled. Then the journal is
//! sealed: each call still running is journaled *in doubt* (it started, its outcome is
//! unknown), its token fires, and its task is let go to run on outside the run. A body that
//! ignores cancellation is not waited for past the bound; when it ends, its `code-dispatch` is
//! recorded and a warning logged, and its outcome (and its additional contexts) go nowhere
//! else. A call cancelled at the bound is in doubt too, whatever it returned: its body may
//! have done part of its work. No call that started before the pause is silently run again.
//!
//! On resume the program runs again from the start. A call whose number is in the journal is
//! answered from it inside the host call, at once (no task, no place in the pool, no pipeline,
//! no body, no session event: those happened in the first run), after checking it is the same
//! call (tool and canonical arguments); a call in doubt fails there with a message that starts
//! with [`CODE_CALL_IN_DOUBT`](crate::CODE_CALL_IN_DOUBT) (it started before the pause, its
//! outcome is unknown, so it is not run again), which the program sees as the call's failure
//! and may catch; the call that waited
//! runs live with the person's decision standing for the approval service's answer; every
//! later call runs live. A program that calls differently than the journal says (another
//! tool, other arguments, or never the call that waited) fails with `CODE_RUN_DIVERGED`, and
//! nothing after the divergence runs.
//!
//! A run that may pause also journals what its program read that differs between runs (see
//! [`CodeHost::determinism`]): the seed of its random numbers, its clock readings and the
//! random bytes it drew, in order; the replay hands them back to the runtime, which gives them
//! to the program again.
//!
//! What the journal holds for a run (each call's tool, arguments and answer, eight bytes a clock
//! reading, a draw's bytes and 24 more) is held by the host, outside the engine's memory: it
//! counts against the run's
//! [`CodeLimits::memory_bytes`](crate::CodeLimits::memory_bytes). Past it the journal is dropped
//! and the run goes on; if it then has to pause, it fails with `CODE_RUN_FAILED` instead, saying
//! so. A sub-call's additional contexts are delivered once:
//! with the paused result for a call that finished before the pause was stored.
//!
//! The journal's text keeps `v: 1`; a call in doubt is an entry with `in_doubt: true` and the
//! `CODE_CALL_IN_DOUBT` message as its error, so a journal written before calls could be in
//! doubt reads as before, and a reader that does not know the field fails the call too.
//!
//! # Where a call runs
//!
//! The bridge owns every task of a run; the runtime only hands it each call with a
//! [`CallReply`](crate::CallReply). A call first runs inline, inside [`CodeHost::call`]: a call
//! whose pipeline finishes at once (a synchronous tool, a denial, a refusal) answers there,
//! with no task and no thread hop. (For TypeScript that happens on the engine's thread; keep
//! heavy synchronous work in a tool after its first `.await`, as [`CodeHost`] says.) A call
//! that has to wait moves into a task of the run's own, one task per waiting call, which
//! answers through the reply when the call ends; the drain above covers it.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::instrument::WithSubscriber;

use super::analysis::{binds, bound_tools};
use super::events::{SessionEvent, SessionEventSink};
use super::host::Determinism;
use super::host::{CallReply, HostTasks, SettleFuture};
use super::mode::{CODE_CALL_IN_DOUBT, CODE_RUN_DIVERGED, CODE_RUN_FAILED, CodeMode, SpillRequest};
use super::{CodeFailure, CodeHost, ToolCallFailure};
use crate::MayCall;
use crate::lock;
use crate::may_call::Prepared;
use tools_runtime::AdditionalContext;
use tools_runtime::ToolError;
use tools_runtime::ToolRunContext;
use tools_runtime::ToolRuntime;
use tools_runtime::approvals::{AwaitingCall, GivenDecision, RunPause};
use tools_runtime::progress::Progress;
use tools_runtime::schedule::OrderedPool;
use tools_runtime::{ProgramOrigin, ScopeKey, ToolCall};
use tools_runtime::{ToolExecutionResult, ToolOutcome};

/// `run_code`'s body: checks the arguments, runs the program with a bridge as its host, drains
/// the bridge, and returns `{logs, result?}` or a `CODE_RUN_FAILED` failure.
pub(crate) async fn run(
    mode: Arc<CodeMode>,
    args: Arc<Value>,
    ctx: ToolRunContext,
) -> Result<Value, ToolError> {
    // The input schema already requires both strings; this only reads them.
    let code = args
        .get("code")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::with_code(CODE_RUN_FAILED, "`code` must be a string"))?;
    // Calls that wait are tokio tasks; without a tokio runtime say so instead of panicking.
    let handle = tokio::runtime::Handle::try_current().map_err(|_| {
        ToolError::with_code(
            CODE_RUN_FAILED,
            "code run failed (internal): run_code must be executed inside a tokio runtime",
        )
    })?;
    // Only a registry-owned tool is given an origin for its program's calls; `run_code` is one.
    let origin = ctx.program_origin().ok_or_else(|| {
        ToolError::with_code(
            CODE_RUN_FAILED,
            "code run failed (internal): run_code runs only as the registry's own tool",
        )
    })?;
    // What the pre-run analysis found, and the parse it made for the run.
    let may_call = ctx.execution().get::<MayCall>().cloned();
    let prepared = ctx.execution().get::<Prepared>().and_then(Prepared::take);
    // The program's run: the engine's run and every call the program makes are its children.
    let span = tracing::info_span!(
        "run_code",
        gen_ai.tool.call.id = %ctx.call_id(),
        agent_tools.code.language = %mode.language(),
        agent_tools.code.may_call = may_call.as_ref().map(|m| match m {
            MayCall::Closed(_) => "closed",
            _ => "open",
        }),
        agent_tools.code.sub_calls = tracing::field::Empty,
    );
    let replay = match ctx.resumed_run() {
        Some(resumed) => Some(Replay::read(&resumed)?),
        None => None,
    };
    let relay = Arc::new(Relay {
        outer: ctx.clone(),
        reports: Mutex::new(0),
        events: mode.events.clone(),
        parent_call_id: ctx.call_id().to_owned(),
    });
    let bridge = Arc::new(Bridge {
        relay,
        runtime: ctx.runtime().clone(),
        agent: ctx.agent(),
        principal: ctx.execution().principal_arc().cloned(),
        origin,
        parent_call_id: ctx.call_id().to_owned(),
        cancel: ctx.cancellation().child_token(),
        calls: ctx.cancellation().child_token(),
        outer_cancel: ctx.cancellation().clone(),
        deadline: tokio::time::Instant::now().checked_add(mode.limits.timeout),
        in_flight: Mutex::new(InFlight::default()),
        finished: tokio::sync::Notify::new(),
        may_call,
        mode: mode.clone(),
        pool: OrderedPool::new(mode.max_parallel_sub_calls),
        submitted: AtomicU64::new(0),
        pending: AtomicUsize::new(0),
        tasks: HostTasks::new(Some(handle)),
        contexts: Mutex::new(BTreeMap::new()),
        span: span.clone(),
        dispatch: tracing::dispatcher::get_default(tracing::Dispatch::clone),
        journal: (ctx.keeps_paused_calls() || replay.is_some())
            .then(|| Mutex::new(BTreeMap::new())),
        determinism: match &replay {
            Some(replay) => Some(replay.determinism.clone()),
            None => ctx.keeps_paused_calls().then(|| Determinism {
                seed: fresh_seed(),
                ..Determinism::default()
            }),
        },
        clock: Mutex::new(Vec::new()),
        entropy: Mutex::new(Vec::new()),
        journal_bytes: AtomicUsize::new(0),
        journal_limit: mode.limits.memory_bytes,
        replay,
        stop: Mutex::new(None),
    });
    // Settles the run however this future ends: on drop (the outer call's future dropped), the
    // token fires and the calls in flight are dropped with the task set.
    let settle = Settle(bridge.clone());
    let host: Arc<dyn CodeHost> = Arc::new(Host(bridge.clone()));
    let outcome = mode
        .runtime
        .run_prepared(code, prepared, host, &mode.limits, bridge.cancel.clone())
        .instrument(tracing::info_span!(parent: &span, "code_engine"))
        .instrument(span.clone())
        .await;
    // The run settled (the runtime has settled the bridge already; this covers a runtime that
    // did not).
    bridge.settle().await;
    drop(settle);
    span.record(
        "agent_tools.code.sub_calls",
        i64::try_from(bridge.submitted.load(Ordering::Relaxed)).unwrap_or(i64::MAX),
    );
    // Every sub-call's contexts, in call order, kept whatever the program's outcome.
    let contexts = std::mem::take(&mut *lock(&bridge.contexts));
    for context in contexts.into_values().flatten() {
        ctx.defer_context(context);
    }
    if let Some(stop) = bridge.stopped() {
        return Err(stop.end(&bridge, &ctx));
    }
    match outcome {
        Ok(done) => {
            let mut out = Map::new();
            out.insert(
                "logs".to_owned(),
                Value::Array(done.logs.into_iter().map(Value::String).collect()),
            );
            if let Some(result) = done.result {
                out.insert("result".to_owned(), result);
            }
            Ok(Value::Object(out))
        }
        Err(failure) => Err(ToolError::with_code(
            CODE_RUN_FAILED,
            failure_message(&failure),
        )),
    }
}

/// `code run failed (<kind>): <message>`, then the captured output when there is any.
pub(crate) fn failure_message(failure: &CodeFailure) -> String {
    let mut message = failure.to_string();
    if let (Some(line), Some(column)) = (failure.line, failure.column) {
        message.push_str(&format!(" (line {line}, column {column})"));
    }
    if !failure.logs.is_empty() {
        message.push_str("\nCaptured output:");
        for line in &failure.logs {
            message.push('\n');
            message.push_str(line);
        }
    }
    message
}

/// Where the progress reports of a run's calls go: a `code-dispatch-progress` event each, and a
/// report of the `run_code` call itself (the program's progress: how many reports its calls
/// made, with the tool and what it said), so that a caller of `run_code` (an MCP client, a
/// timeout that resets on progress) sees the run move.
struct Relay {
    outer: ToolRunContext,
    /// How many reports the run's calls made (the outer report's `done`); held while the outer
    /// report is made, so the outer reports stay increasing.
    reports: Mutex<u64>,
    events: Option<Arc<dyn SessionEventSink>>,
    parent_call_id: String,
}

impl Relay {
    fn report(&self, id: &str, tool: &str, progress: &Progress) {
        if let Some(sink) = &self.events {
            record(
                sink.as_ref(),
                SessionEvent::CodeDispatchProgress {
                    id: id.to_owned(),
                    parent_call_id: self.parent_call_id.clone(),
                    tool: tool.to_owned(),
                    done: progress.done(),
                    total: progress.total(),
                    message: progress.message().map(str::to_owned),
                    time: SystemTime::now(),
                },
            );
        }
        let mut message = format!("{tool}: {}", progress.done());
        if let Some(total) = progress.total() {
            message.push_str(&format!("/{total}"));
        }
        if let Some(said) = progress.message() {
            message.push_str(": ");
            message.push_str(said);
        }
        let mut reports = lock(&self.reports);
        *reports += 1;
        // Refused only once `run_code` itself has settled (a call still reporting then).
        #[allow(clippy::cast_precision_loss)]
        let done = *reports as f64;
        let _ = self
            .outer
            .progress(Progress::new(done).with_message(message));
    }
}

/// One run's bridge.
struct Bridge {
    /// Where the progress of the run's calls goes.
    relay: Arc<Relay>,
    runtime: ToolRuntime,
    agent: Option<ScopeKey>,
    /// Who the run is made for: every call the program makes is made for them too.
    principal: Option<Arc<tools_runtime::Principal>>,
    /// The origin the runtime minted for this run: set on every call the program makes.
    origin: ProgramOrigin,
    parent_call_id: String,
    /// The run's own token: a child of the outer call's, fired when the run settles or
    /// pauses. The program stops on it, and calls still queued never start.
    cancel: CancellationToken,
    /// The parent of every call's token: a child of the outer call's, fired when the run
    /// settles; when it pauses, only once the calls in flight had their time (see
    /// `Bridge::settle`).
    calls: CancellationToken,
    /// The outer call's token: a pause stops waiting for the calls in flight when it fires.
    outer_cancel: CancellationToken,
    /// The run's deadline (its `CodeLimits::timeout` from when the bridge was made, so never
    /// after the engine's): how long a pause waits for the calls in flight. `None`: a timeout
    /// too large to add.
    deadline: Option<tokio::time::Instant>,
    /// The journaled run's calls that started and have not finished, and whether the pause
    /// was stored (sealed).
    in_flight: Mutex<InFlight>,
    /// Notified whenever a call of `in_flight` finishes.
    finished: tokio::sync::Notify,
    /// What the pre-run analysis found the program may call; a closed set is enforced, and
    /// bound up front. An open set binds what the outer call's scope sees, each name at its
    /// first use (a scope may have thousands).
    may_call: Option<MayCall>,
    mode: Arc<CodeMode>,
    /// Admits the program's calls in order, parallel ones up to the limit, exclusive ones alone.
    pool: OrderedPool,
    /// How many calls the program has made.
    submitted: AtomicU64,
    /// Calls started (queued or running) and not yet finished.
    pending: AtomicUsize,
    /// The calls that had to wait, each in a task of its own, spawned onto the tokio runtime
    /// `run_code` runs on (from whatever thread the runtime calls the host on).
    tasks: HostTasks,
    /// Each started call's additional contexts, by call number.
    contexts: Mutex<BTreeMap<u64, Vec<AdditionalContext>>>,
    span: tracing::Span,
    /// The `tracing` dispatcher in effect where `run_code` runs.
    dispatch: tracing::Dispatch,
    /// Each finished call by number, kept when a pause can be kept (durable approvals).
    journal: Option<Mutex<BTreeMap<u64, Entry>>>,
    /// What a resumed run replays.
    replay: Option<Replay>,
    /// The run's random seed, the clock readings and the draws to replay, for a run that may
    /// pause or
    /// is resumed (handed to the code runtime through `CodeHost::determinism`).
    determinism: Option<Determinism>,
    /// Every clock reading the program made, in order (journaled with its calls).
    clock: Mutex<Vec<f64>>,
    /// Every draw the program made from the system's random source, in order (journaled with
    /// its calls).
    entropy: Mutex<Vec<Vec<u8>>>,
    /// What the journal, the clock readings and the draws hold, in bytes (about), and the most
    /// they may:
    /// the run's memory limit. Past it the journal is dropped (`usize::MAX` marks that).
    journal_bytes: AtomicUsize,
    journal_limit: usize,
    /// Why the run stopped before its program ended: a call waits for a decision, or the
    /// resumed program diverged from its journal. The first reason stands.
    stop: Mutex<Option<Stop>>,
}

/// The calls of a journaled run that started (entered the pipeline) and have not finished.
#[derive(Default)]
struct InFlight {
    /// Each by number: its tool and canonical arguments.
    calls: BTreeMap<u64, (String, String)>,
    /// The run paused and its journal is final: a call that finishes now is not journaled,
    /// and no call starts.
    sealed: bool,
    /// Some call was still running when the journal was sealed: it is journaled in doubt.
    in_doubt: bool,
}

/// One finished call of a run, as the journal keeps it, or one in doubt: it started before
/// the run paused and had not finished when the pause was stored.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Entry {
    n: u64,
    tool: String,
    /// Canonical JSON text.
    arguments: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ok: Option<Value>,
    /// The failure's message; for a call in doubt, the `CODE_CALL_IN_DOUBT` message (so a
    /// reader that does not know `in_doubt` still fails the call instead of running it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// The call's outcome is unknown: the replay fails it with `CODE_CALL_IN_DOUBT` and never
    /// runs it. Absent (false) in a journal written before calls could be in doubt.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    in_doubt: bool,
}

impl Entry {
    /// About what the journal holds for this call, in bytes (the answer as the engine counts
    /// what the host holds, without writing it out).
    fn size(&self) -> usize {
        let answer = match (&self.ok, &self.error) {
            (Some(value), _) => crate::held_size(value),
            (None, Some(message)) => message.capacity(),
            (None, None) => 0,
        };
        self.tool.capacity() + self.arguments.capacity() + answer
    }

    /// Call `n` of `tool`, in doubt.
    fn in_doubt(n: u64, tool: String, arguments: String) -> Self {
        let error = in_doubt_message(n, &tool);
        Entry {
            n,
            tool,
            arguments,
            ok: None,
            error: Some(error),
            in_doubt: true,
        }
    }

    /// What the program receives for this call.
    fn answer(&self) -> Result<Value, ToolCallFailure> {
        if self.in_doubt {
            return Err(ToolCallFailure::new(
                self.error
                    .clone()
                    .unwrap_or_else(|| in_doubt_message(self.n, &self.tool)),
            ));
        }
        match (&self.ok, &self.error) {
            (Some(value), _) => Ok(tools_schema::deep::clone_value(value)),
            (None, Some(message)) => Err(ToolCallFailure::new(message.clone())),
            (None, None) => Ok(Value::Null),
        }
    }
}

/// What the program's call `n` of `tool` fails with when the journal holds it in doubt.
fn in_doubt_message(n: u64, tool: &str) -> String {
    format!(
        "{CODE_CALL_IN_DOUBT}: call {n} to `{}` started before the run paused for approval and \
         had not finished when the pause was stored (by the run's deadline); its outcome is \
         unknown, so it is not run again",
        tools_schema::excerpt::cut(tool)
    )
}

/// The journal's text: `{"v": 1, "seed": ..., "clock": [...], "entropy": [...], "calls":
/// [...]}` (`entropy` only when the program drew: a journal written before it existed reads
/// as one without draws).
#[derive(serde::Serialize, serde::Deserialize)]
struct Journal {
    v: u32,
    /// The seed of the program's random numbers.
    #[serde(default)]
    seed: u64,
    /// The program's clock readings, in order.
    #[serde(default)]
    clock: Vec<f64>,
    /// The program's draws from the system's random source, in order, each as hexadecimal
    /// text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    entropy: Vec<String>,
    calls: Vec<Entry>,
}

/// A seed for a run's random numbers: the standard library's per-process random keys, mixed
/// with a counter so two runs differ.
fn fresh_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(RUNS.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

/// A resumed run's journal, the call that waited, and the decision for it.
struct Replay {
    entries: BTreeMap<u64, Entry>,
    determinism: Determinism,
    awaiting: AwaitingCall,
    decision: GivenDecision,
    /// How many journaled calls the program made again, and whether it made the one that
    /// waited.
    replayed: AtomicUsize,
    awaited: std::sync::atomic::AtomicBool,
}

impl Replay {
    fn read(resumed: &tools_runtime::approvals::ResumedRun) -> Result<Self, ToolError> {
        let unreadable = |why: &dyn std::fmt::Display| {
            ToolError::with_code(
                CODE_RUN_FAILED,
                format!(
                    "code run failed (internal): the paused run's journal cannot be read: {why}"
                ),
            )
        };
        let journal: Journal = tools_schema::deep::from_str(resumed.journal())
            .and_then(serde_json::from_value)
            .map_err(|e| unreadable(&e))?;
        let entropy = journal
            .entropy
            .iter()
            .map(|draw| crate::from_hex(draw))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| unreadable(&"a draw of random bytes is not hexadecimal text"))?;
        Ok(Replay {
            entries: journal.calls.into_iter().map(|e| (e.n, e)).collect(),
            determinism: Determinism {
                seed: journal.seed,
                clock: journal.clock,
                entropy,
            },
            awaiting: resumed.awaiting().clone(),
            decision: resumed.decision(),
            replayed: AtomicUsize::new(0),
            awaited: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

/// Why a run stopped before its program ended.
enum Stop {
    /// Call `n` waits for a decision.
    Paused {
        awaiting: AwaitingCall,
        reason: Option<String>,
    },
    /// The resumed program called differently than its journal says.
    Diverged(String),
}

impl Stop {
    /// `run_code`'s error for this stop; for a pause, the pause is left for the pipeline.
    fn end(self, bridge: &Bridge, ctx: &ToolRunContext) -> ToolError {
        match self {
            Stop::Diverged(why) => ToolError::with_code(
                CODE_RUN_DIVERGED,
                format!(
                    "code run failed (diverged): the resumed program did not make the calls its \
                     first run made: {why}; nothing after that call ran"
                ),
            ),
            Stop::Paused { awaiting, reason } => {
                if bridge.journal_bytes.load(Ordering::Relaxed) == usize::MAX {
                    return ToolError::with_code(
                        CODE_RUN_FAILED,
                        format!(
                            "code run failed (limit): the program's call to `{}` waits for \
                             approval, and the run cannot pause: what its journal had to hold \
                             (its calls' arguments and answers, its clock readings, the random \
                             bytes it drew) passed the run's memory limit of {} bytes",
                            awaiting.tool, bridge.journal_limit
                        ),
                    );
                }
                let calls = bridge
                    .journal
                    .as_ref()
                    .map(|j| std::mem::take(&mut *lock(j)).into_values().collect())
                    .unwrap_or_default();
                let journal = serde_json::to_string(&Journal {
                    v: 1,
                    seed: bridge.determinism.as_ref().map_or(0, |d| d.seed),
                    clock: std::mem::take(&mut *lock(&bridge.clock)),
                    entropy: std::mem::take(&mut *lock(&bridge.entropy))
                        .iter()
                        .map(|draw| crate::to_hex(draw))
                        .collect(),
                    calls,
                })
                .unwrap_or_default();
                let tool = awaiting.tool.clone();
                ctx.pause_run(RunPause {
                    awaiting,
                    journal,
                    reason,
                });
                ToolError::with_code(
                    tools_runtime::codes::APPROVAL_PENDING,
                    format!("the program's call to `{tool}` waits for approval"),
                )
            }
        }
    }
}

/// Fires the run's token and drops the calls in flight when dropped.
struct Settle(Arc<Bridge>);

impl Drop for Settle {
    fn drop(&mut self) {
        self.0.cancel.cancel();
        self.0.calls.cancel();
        self.0.tasks.abort();
    }
}

/// The bridge as the program's host.
struct Host(Arc<Bridge>);

impl CodeHost for Host {
    fn tool_names(&self) -> Vec<String> {
        bound_tools(&self.0.runtime, self.0.scope(), self.0.may_call.as_ref())
    }

    fn binds(&self, name: &str) -> bool {
        binds(
            &self.0.runtime,
            self.0.scope(),
            self.0.may_call.as_ref(),
            name,
        )
    }

    fn bind_on_first_use(&self) -> bool {
        !matches!(self.0.may_call, Some(MayCall::Closed(_)))
    }

    fn call(&self, name: &str, args: Value, reply: CallReply) {
        let bridge = &self.0;
        // The analysis closed the set and policy may have approved the program for it: a call
        // outside it (through a form the analysis did not follow) does not run.
        if let Some(MayCall::Closed(allowed)) = &bridge.may_call
            && !allowed.contains(name)
        {
            return reply.send(Err(ToolCallFailure::new(format!(
                "`{}` is not among the tools the program was checked for before it ran ({}); \
                 call tools by name (`tools.name(...)`) so the check sees them",
                tools_schema::excerpt::cut(name),
                list(allowed),
            ))));
        }
        // A program that starts calls without ever awaiting them would otherwise queue tasks
        // without bound, outside the engine's memory limit.
        let limit = bridge.mode.max_pending_sub_calls;
        if bridge.pending.fetch_add(1, Ordering::AcqRel) >= limit {
            bridge.pending.fetch_sub(1, Ordering::AcqRel);
            return reply.send(Err(ToolCallFailure::new(format!(
                "too many unfinished tool calls: a program may have at most {limit} calls \
                 started and not yet finished; await some before starting more"
            ))));
        }
        // Numbered here, synchronously, so the numbers follow the program's order.
        let n = bridge.submitted.fetch_add(1, Ordering::Relaxed) + 1;
        // A resumed program's call that the journal holds is answered here, at once: no task,
        // no place in the pool, no pipeline.
        if let Some(answer) = bridge.answer_from_journal(n, name, &args) {
            bridge.pending.fetch_sub(1, Ordering::AcqRel);
            return reply.send(answer);
        }
        let guard = PendingGuard(bridge.clone());
        let name = name.to_owned();
        let work = async move {
            // Boxed: the pipeline's future is large, and this one is moved a few times
            // before it runs.
            let answer = Box::pin(guard.0.dispatch(n, name, args)).await;
            drop(guard);
            answer
        }
        .instrument(bridge.span.clone())
        // The runtime may call on a thread of its own: keep the subscriber `run_code` saw.
        .with_subscriber(bridge.dispatch.clone());
        bridge.tasks.answer(reply, work);
    }

    fn settle(&self) -> SettleFuture<'_> {
        Box::pin(self.0.settle())
    }

    fn determinism(&self) -> Option<Determinism> {
        self.0.determinism.clone()
    }

    fn clock_read(&self, ms: f64) {
        // Readings after the run stopped are not the first run's: a replay reads live then.
        if lock(&self.0.stop).is_none() && self.0.journal_room(std::mem::size_of::<f64>()) {
            lock(&self.0.clock).push(ms);
        }
    }

    fn entropy_read(&self, bytes: &[u8]) {
        // Like clock readings: a draw after the run stopped is not the first run's.
        if lock(&self.0.stop).is_none() && self.0.journal_room(draw_size(bytes)) {
            lock(&self.0.entropy).push(bytes.to_vec());
        }
    }
}

/// About what the journal holds for one draw of random bytes: its bytes and their `Vec`.
fn draw_size(bytes: &[u8]) -> usize {
    bytes.len().saturating_add(std::mem::size_of::<Vec<u8>>())
}

/// Counts a call as unfinished until it is dropped.
struct PendingGuard(Arc<Bridge>);

impl Drop for PendingGuard {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Bridge {
    /// Settles the run: stops what is still running, forgets what is queued, and waits for
    /// the rest.
    ///
    /// A run that pauses first waits for its calls in flight to finish (each is journaled with
    /// its outcome), until the run's deadline or the outer call's cancellation; then it seals
    /// the journal, with each call still running in doubt. Those calls are cancelled and let
    /// run on to their end outside the run (their end is recorded and logged, not journaled).
    async fn settle(&self) {
        self.cancel.cancel();
        if self.pausing() {
            self.wait_in_flight().await;
            if self.seal() {
                self.calls.cancel();
                self.tasks.detach();
                return;
            }
        }
        self.calls.cancel();
        self.tasks.join().await;
    }

    /// Whether the run stopped to pause, with a journal it can store.
    fn pausing(&self) -> bool {
        self.journal.is_some()
            && self.journal_bytes.load(Ordering::Relaxed) != usize::MAX
            && matches!(*lock(&self.stop), Some(Stop::Paused { .. }))
    }

    /// Waits until no journaled call is in flight, the run's deadline passes, or the outer
    /// call is cancelled.
    async fn wait_in_flight(&self) {
        let bound = async {
            match self.deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        let mut bound = std::pin::pin!(bound);
        loop {
            let mut notified = std::pin::pin!(self.finished.notified());
            notified.as_mut().enable();
            {
                let flight = lock(&self.in_flight);
                if flight.sealed || flight.calls.is_empty() {
                    return;
                }
            }
            tokio::select! {
                () = &mut notified => {}
                () = &mut bound => return,
                () = self.outer_cancel.cancelled() => return,
            }
        }
    }

    /// Seals the journal for the pause: each call still in flight is journaled in doubt.
    /// `true` when some call is (or was, at an earlier seal) in doubt.
    fn seal(&self) -> bool {
        let mut flight = lock(&self.in_flight);
        if !flight.sealed {
            flight.sealed = true;
            let running = std::mem::take(&mut flight.calls);
            flight.in_doubt = !running.is_empty();
            for (n, (tool, arguments)) in running {
                tracing::warn!(
                    call_id = %self.call_id(n),
                    %tool,
                    "a call in flight when the run paused did not finish by the run's deadline: \
                     it is journaled in doubt ({CODE_CALL_IN_DOUBT}) and will not run again"
                );
                let entry = Entry::in_doubt(n, tool, arguments);
                if let Some(journal) = &self.journal
                    && self.journal_room(entry.size())
                {
                    lock(journal).insert(n, entry);
                }
            }
        }
        flight.in_doubt
    }

    /// The scope the program's calls are made from: the outer call's agent scope.
    fn scope(&self) -> ScopeKey {
        self.agent.unwrap_or(ScopeKey::GLOBAL)
    }

    /// Call `n`'s id: `<outer call id>:code:<n>`.
    fn call_id(&self, n: u64) -> String {
        use std::fmt::Write;
        let mut id = String::with_capacity(self.parent_call_id.len() + 26);
        id.push_str(&self.parent_call_id);
        id.push_str(":code:");
        let _ = write!(id, "{n}");
        id
    }

    /// Runs call `n`: waits for its turn in the pool, then the whole pipeline.
    async fn dispatch(&self, n: u64, name: String, args: Value) -> Result<Value, ToolCallFailure> {
        let arguments = Arc::new(args);
        let call = ToolCall {
            call_id: self.call_id(n),
            name,
            arguments: arguments.clone(),
            cancel: self.calls.child_token(),
            agent: self.agent,
            parent: None,
            program: None,
            progress: None,
            decided: None,
            principal: self.principal.clone(),
        }
        .with_program(self.origin);
        let (relay, id, tool) = (self.relay.clone(), call.call_id.clone(), call.name.clone());
        let call = call.with_progress(move |progress| relay.report(&id, &tool, progress));
        let mode = self.runtime.execution_mode(&call);
        // The pool numbers from 0, the program's calls from 1.
        let Some(_slot) = self
            .pool
            .enter_until_cancelled(n - 1, mode, &self.cancel)
            .await
        else {
            // Still queued when the run settled: it never starts and records nothing.
            return Err(ToolCallFailure::new(
                "the call did not start because the program's run ended",
            ));
        };
        let call = match self.replayed(n, call) {
            Ok(call) => call,
            Err(answer) => return answer,
        };
        let journaled = self.journal.as_ref().map(|_| {
            (
                call.name.clone(),
                tools_schema::deep::to_canonical_string(&call.arguments),
            )
        });
        if let Some((tool, arguments)) = &journaled {
            // In flight from here until `finish`: a pause waits for it, or journals it in doubt.
            let mut flight = lock(&self.in_flight);
            if flight.sealed || self.cancel.is_cancelled() {
                return Err(ToolCallFailure::new(
                    "the call did not start because the program's run ended",
                ));
            }
            flight.calls.insert(n, (tool.clone(), arguments.clone()));
        }
        let Some(sink) = &self.mode.events else {
            // Nobody records: the call, and nothing else.
            let ToolExecutionResult {
                outcome,
                additional_contexts,
                pending,
                ..
            } = self.runtime.execute(call).await;
            return self.finish(n, journaled, outcome, additional_contexts, pending);
        };
        let id = call.call_id.clone();
        let tool = call.name.clone();
        let started = SystemTime::now();
        record(
            sink.as_ref(),
            SessionEvent::CodeDispatchStart {
                id: id.clone(),
                parent_call_id: self.parent_call_id.clone(),
                tool: tool.clone(),
                arguments,
                time: started,
            },
        );
        let ToolExecutionResult {
            outcome,
            content,
            additional_contexts,
            pending,
            ..
        } = self.runtime.execute(call).await;
        let is_error = matches!(outcome, ToolOutcome::Failure { .. });
        let recorded = self
            .mode
            .spill
            .as_ref()
            .and_then(|spill| {
                let request = SpillRequest {
                    id: &id,
                    tool: &tool,
                    content: &content,
                    is_error,
                };
                match std::panic::catch_unwind(AssertUnwindSafe(|| spill(request))) {
                    Ok(replaced) => replaced,
                    Err(_) => {
                        tracing::error!(%id, "the spill hook panicked; the content is recorded as it is");
                        None
                    }
                }
            })
            .unwrap_or(content);
        record(
            sink.as_ref(),
            SessionEvent::CodeDispatch {
                id,
                parent_call_id: self.parent_call_id.clone(),
                tool,
                content: recorded,
                is_error,
                started,
                ended: SystemTime::now(),
            },
        );
        self.finish(n, journaled, outcome, additional_contexts, pending)
    }

    /// For a resumed run, call `n` when the journal holds it: the journaled answer when the
    /// program made the same call again, the divergence (which stops the run) when it made
    /// another. Either way the call never enters the pool: its turn is given up. `None` when
    /// the journal does not hold call `n`, or the run has stopped (the call is then refused
    /// as any call after the end is).
    fn answer_from_journal(
        &self,
        n: u64,
        name: &str,
        args: &Value,
    ) -> Option<Result<Value, ToolCallFailure>> {
        let replay = self.replay.as_ref()?;
        let entry = replay.entries.get(&n)?;
        if self.cancel.is_cancelled() {
            return None;
        }
        // The pool numbers from 0, the program's calls from 1.
        self.pool.give_up(n - 1);
        if entry.tool != name || entry.arguments != tools_schema::deep::to_canonical_string(args) {
            return Some(self.diverge(format!(
                "call {n} was `{}` with other arguments than `{}` in the journal",
                tools_schema::excerpt::cut(name),
                entry.tool
            )));
        }
        replay.replayed.fetch_add(1, Ordering::Relaxed);
        if let Some(journal) = &self.journal
            && self.journal_room(entry.size())
        {
            lock(journal).insert(n, entry.clone());
        }
        Some(entry.answer())
    }

    /// For a resumed run: the call to make live, with the person's decision when it is the
    /// call that waited (the journaled calls never come here: see `answer_from_journal`). The call
    /// that waited made differently stops the run (`Err`, the program's answer).
    fn replayed(&self, n: u64, call: ToolCall) -> Result<ToolCall, Result<Value, ToolCallFailure>> {
        let Some(replay) = &self.replay else {
            return Ok(call);
        };
        if call.call_id == replay.awaiting.call_id {
            if call.name != replay.awaiting.tool
                || tools_schema::deep::to_canonical_string(&call.arguments)
                    != replay.awaiting.arguments
            {
                return Err(self.diverge(format!(
                    "call {n}, which waited for approval of `{}`, is now `{}` or has other \
                     arguments",
                    replay.awaiting.tool,
                    tools_schema::excerpt::cut(&call.name)
                )));
            }
            replay
                .awaited
                .store(true, std::sync::atomic::Ordering::Relaxed);
            return Ok(call.with_decision(replay.decision.clone()));
        }
        Ok(call)
    }

    /// Counts `bytes` more held for the journal; `false`, with the journal, the readings and
    /// the draws dropped for good, once the run's memory limit is passed.
    fn journal_room(&self, bytes: usize) -> bool {
        let limit = self.journal_limit;
        let grown = self
            .journal_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                (held != usize::MAX).then(|| {
                    let now = held.saturating_add(bytes);
                    if now <= limit { now } else { usize::MAX }
                })
            });
        match grown {
            // Dropped already.
            Err(_) => false,
            Ok(held) if held.saturating_add(bytes) <= limit => true,
            Ok(_) => {
                if let Some(journal) = &self.journal {
                    std::mem::take(&mut *lock(journal));
                }
                std::mem::take(&mut *lock(&self.clock));
                std::mem::take(&mut *lock(&self.entropy));
                false
            }
        }
    }

    /// Stops the run: the resumed program diverged from its journal.
    fn diverge(&self, why: String) -> Result<Value, ToolCallFailure> {
        let mut stop = lock(&self.stop);
        if stop.is_none() {
            *stop = Some(Stop::Diverged(why.clone()));
        }
        drop(stop);
        self.cancel.cancel();
        self.calls.cancel();
        Err(ToolCallFailure::new(format!("the run stopped: {why}")))
    }

    /// Why the run stopped early, if it did; a resumed program that ended without making every
    /// journaled call again, or the call that waited, diverged too.
    fn stopped(&self) -> Option<Stop> {
        if let Some(stop) = lock(&self.stop).take() {
            return Some(stop);
        }
        let replay = self.replay.as_ref()?;
        let replayed = replay.replayed.load(Ordering::Relaxed);
        if replayed < replay.entries.len() {
            return Some(Stop::Diverged(format!(
                "it made {replayed} of the {} calls its journal holds",
                replay.entries.len()
            )));
        }
        if !replay.awaited.load(std::sync::atomic::Ordering::Relaxed) {
            return Some(Stop::Diverged(format!(
                "it never made the call to `{}` that waited for approval",
                replay.awaiting.tool
            )));
        }
        None
    }

    /// Keeps call `n`'s contexts for the end of the run, journals it (or pauses the run when
    /// it waits for a decision), and answers the program.
    fn finish(
        &self,
        n: u64,
        journaled: Option<(String, String)>,
        outcome: ToolOutcome,
        additional_contexts: Vec<AdditionalContext>,
        pending: Option<tools_runtime::approvals::Pending>,
    ) -> Result<Value, ToolCallFailure> {
        let had_contexts = !additional_contexts.is_empty();
        if had_contexts {
            lock(&self.contexts).insert(n, additional_contexts);
        }
        if let (Some(pending), Some((tool, arguments))) = (&pending, &journaled) {
            // Its body did not run: it is not journaled, and a resumed run makes it again.
            lock(&self.in_flight).calls.remove(&n);
            self.finished.notify_waiters();
            let mut stop = lock(&self.stop);
            if stop.is_none() {
                *stop = Some(Stop::Paused {
                    awaiting: AwaitingCall {
                        tool: tool.clone(),
                        call_id: self.call_id(n),
                        arguments: arguments.clone(),
                    },
                    reason: pending.reason().map(str::to_owned),
                });
            }
            drop(stop);
            // The program stops; the calls in flight go on (see `settle`).
            self.cancel.cancel();
            return Err(ToolCallFailure::new(format!(
                "`{tool}` waits for approval: the run pauses here and continues when a person \
                 decides"
            )));
        }
        if let (Some(journal), Some((tool, arguments))) = (&self.journal, journaled) {
            // Journaled under the in-flight lock, so a seal sees the call either in flight or
            // in the journal.
            let mut flight = lock(&self.in_flight);
            flight.calls.remove(&n);
            if flight.sealed {
                drop(flight);
                self.finished_late(n, &tool, &outcome, had_contexts);
            } else {
                let (ok, error) = match &outcome {
                    ToolOutcome::Success { value } => {
                        (Some(tools_schema::deep::clone_value(value)), None)
                    }
                    ToolOutcome::Failure { error } => (None, Some(error.message.clone())),
                };
                let entry = Entry {
                    n,
                    tool,
                    arguments,
                    ok,
                    error,
                    in_doubt: false,
                };
                if self.journal_room(entry.size()) {
                    lock(journal).insert(n, entry);
                }
                drop(flight);
            }
            self.finished.notify_waiters();
        }
        match outcome {
            ToolOutcome::Success { value } => Ok(value),
            ToolOutcome::Failure { error } => Err(ToolCallFailure::new(error.message)),
        }
    }
}

impl Bridge {
    /// Call `n` finished after its run's journal was sealed for a pause, where it is in
    /// doubt. Logged: besides its `code-dispatch` session event, nothing else sees its
    /// outcome.
    fn finished_late(&self, n: u64, tool: &str, outcome: &ToolOutcome, had_contexts: bool) {
        let (ok, message) = match outcome {
            ToolOutcome::Success { .. } => (true, None),
            ToolOutcome::Failure { error } => (false, Some(error.message.as_str())),
        };
        tracing::warn!(
            call_id = %self.call_id(n),
            %tool,
            ok,
            message,
            lost_contexts = had_contexts,
            "a call of a paused run finished after the pause was stored: its outcome is not \
             in the journal (the call is in doubt there and will not run again); its \
             additional contexts, if any, are dropped"
        );
    }
}

/// Hands `event` to `sink`; a panicking sink is logged and skipped.
fn record(sink: &dyn SessionEventSink, event: SessionEvent) {
    if std::panic::catch_unwind(AssertUnwindSafe(|| sink.record(event))).is_err() {
        tracing::error!("a session event sink panicked; the event is lost");
    }
}

/// The names of a closed set, as a message lists them.
fn list(names: &std::collections::BTreeSet<String>) -> String {
    if names.is_empty() {
        return "none".to_owned();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::{Entry, Journal};

    #[test]
    fn a_call_in_doubt_is_journaled_with_its_failure_and_an_older_entry_is_not_in_doubt() {
        let entry = Entry::in_doubt(3, "slow".to_owned(), "{}".to_owned());
        let text = serde_json::to_string(&entry).unwrap();
        // A reader that does not know `in_doubt` still fails the call with its message.
        assert!(text.contains(r#""in_doubt":true"#), "{text}");
        assert!(
            text.contains(r#""error":"CODE_CALL_IN_DOUBT: call 3 to `slow`"#),
            "{text}"
        );
        let read: Entry = serde_json::from_str(&text).unwrap();
        let failure = read.answer().unwrap_err();
        assert!(
            failure.message().starts_with(crate::CODE_CALL_IN_DOUBT),
            "{failure:?}"
        );
        // Without its message, still a failure with the code.
        let bare: Entry =
            serde_json::from_str(r#"{"n":3,"tool":"slow","arguments":"{}","in_doubt":true}"#)
                .unwrap();
        assert!(
            bare.answer()
                .unwrap_err()
                .message()
                .contains("not run again")
        );
        // An entry of an older journal: a finished call, never in doubt; written back the same.
        let old = r#"{"n":1,"tool":"read","arguments":"{}","ok":"x"}"#;
        let read: Entry = serde_json::from_str(old).unwrap();
        assert!(!read.in_doubt);
        assert_eq!(read.answer().unwrap(), serde_json::json!("x"));
        assert_eq!(serde_json::to_string(&read).unwrap(), old);
    }

    #[test]
    fn a_journal_keeps_its_draws_as_hex_and_one_without_draws_still_reads() {
        let journal = Journal {
            v: 1,
            seed: 7,
            clock: vec![1.5],
            entropy: vec![crate::to_hex(&[0, 0xab, 0xff])],
            calls: Vec::new(),
        };
        let text = serde_json::to_string(&journal).unwrap();
        assert!(text.contains(r#""entropy":["00abff"]"#), "{text}");
        // A journal written before draws were journaled, and one whose program drew nothing.
        for text in [
            r#"{"v":1,"seed":7,"clock":[1.5],"calls":[]}"#,
            &serde_json::to_string(&Journal {
                entropy: Vec::new(),
                ..journal
            })
            .unwrap(),
        ] {
            assert!(!text.contains("entropy"), "{text}");
            let read: Journal = serde_json::from_str(text).unwrap();
            assert!(read.entropy.is_empty());
            assert_eq!((read.seed, read.clock), (7, vec![1.5]));
        }
    }
}
