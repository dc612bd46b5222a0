//! The execution pipeline: one call, from the caller's description to one published result.
//!
//! Read [`Run`] top to bottom; it is the whole state machine, in the specification's order:
//!
//! 1. [`Run::enter`]: snapshot and freeze the arguments, assign a fresh token, resolve the
//!    visible definition and snapshot every listener list;
//! 2. [`Run::admit`]: a call cancelled at entry skips every phase; otherwise resolve
//!    (`UNKNOWN_TOOL`), validate (`INVALID_ARGS`), run the definition's prepare hook (for
//!    `run_code`, the pre-run analysis), run the pre-execute waterfall (with the approval
//!    service for `ask`), then the guards;
//! 3. [`Run::dispatch`]: the execute wrappers around the body, then output normalisation
//!    (validation against the output schema and rendering);
//! 4. [`Run::conclude`]: post-execute decisions, the cancellation override of a success,
//!    `finalize_content`, and the observers.
//!
//! The phases live in this room's files: [`policy`] (admission), [`dispatch`] (wrappers, body,
//! normalisation), [`conclude`] (post-execute to observers), and [`schedule`] (how a model turn's
//! calls overlap). [`wrappers`] holds the opt-in execute wrappers.
//!
//! Every path returns exactly one [`ToolExecutionResult`], and no phase returns while a body it
//! started is still running: bodies are awaited to completion, never raced away from.

mod conclude;
mod dispatch;
mod in_span;
mod pause;
mod policy;
pub mod schedule;
pub mod wrappers;

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;

use crate::call::content::ContentBlock;
use crate::call::result::{ToolExecutionResult, ToolFailureInfo};
use crate::call::tool_call::{ExecutionToken, GLOBAL_LAYER, ScopeKey, ToolCall};
use crate::errors::{ExecutionError, PanicSite, panic_message};
use crate::execution::{ExecInner, ProgressState, ToolExecution};
use crate::mode::PresentationMode;
use crate::runtime::definition::ToolDefinition;
use crate::runtime::handle::Listeners;
use crate::runtime::handle::ToolRuntime;
use crate::suggest::SUGGEST_AT;

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
    /// The call paused for a decision that comes later (see `pause`).
    Paused(Box<crate::call::pending::Pending>),
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
            tools_schema::deep::discard(value);
        }
    }
}

/// One call in flight.
pub(crate) struct Run {
    rt: ToolRuntime,
    exec: ToolExecution,
    def: Option<ToolDefinition>,
    scope_gone: bool,
    /// The registry's admission rules refuse this call (see `CallSnapshot::refusal`).
    refusal: Option<ExecutionError>,
    listeners: Arc<Listeners>,
    pub(crate) span: tracing::Span,
    /// A resumed call's decision, which stands for the approval service's answer: validation
    /// and the pre-execute waterfall do not run again (see `ToolRuntime::resume`).
    pub(crate) resumed: Option<crate::call::decision::Approval>,
}

impl Run {
    /// Snapshot and freeze: the arguments become a shared, immutable value; the definition and
    /// the listener lists are read once, so registry changes during the call do not affect it.
    pub(crate) fn enter(rt: &ToolRuntime, call: ToolCall) -> Run {
        // A program's call has the run as its parent, whatever `parent` said.
        let origin = call.origin();
        let ToolCall {
            call_id,
            name,
            arguments,
            cancel,
            agent,
            progress,
            decided,
            principal,
            ..
        } = call;
        let token = ExecutionToken::fresh();
        let snapshot = rt.snapshot(&name, agent, origin);
        // Named and attributed as OpenTelemetry's GenAI conventions say for a tool's execution
        // (`otel.name` gives the exported span its name), with the toolkit's own attributes
        // under `agent_tools.`. Nothing here is evaluated without a subscriber that wants it.
        // Strings are recorded as `&str`: the OpenTelemetry layer copies one into an attribute,
        // where a formatted value costs it a formatter too, and a string grown as it is written.
        //
        // At most 17 fields (`tracing_span`'s tests hold it): the OpenTelemetry layer allocates
        // 56 bytes a field for each span, and from 18 on that is a "large" chunk for glibc's
        // malloc, which then consolidates its fast bins whenever its thread cache is empty (as
        // it is when the batch exporter's thread frees the spans): measured, a traced call
        // costs about 0.4 us more with 18 fields than with 17 (callgrind shows the
        // consolidation). The fields recorded when the call ends come first: `record_all!`
        // looks each up by name, from the first.
        let span = tracing::info_span!(
            "execute_tool",
            agent_tools.outcome = tracing::field::Empty,
            agent_tools.admit.duration = tracing::field::Empty,
            agent_tools.dispatch.duration = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            agent_tools.policy = tracing::field::Empty,
            otel.name = span_name(snapshot.def.as_ref(), &name).as_ref(),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = name.as_str(),
            gen_ai.tool.call.id = call_id.as_str(),
            gen_ai.tool.type = "function",
            gen_ai.tool.description = snapshot.def.as_ref().map(ToolDefinition::description),
            // Integers as `i64`: the OpenTelemetry layer exports a `u64` as text.
            agent_tools.token = i64::try_from(token.raw()).unwrap_or(i64::MAX),
            agent_tools.parent = origin.parent().map(|t| i64::try_from(t.raw()).unwrap_or(i64::MAX)),
            agent_tools.origin = origin_name(origin),
            agent_tools.agent_scope = agent.map(|scope| i64::try_from(scope.0).unwrap_or(i64::MAX)),
            agent_tools.presentation_mode = snapshot.mode.map(PresentationMode::as_str),
        );
        let scope_gone = snapshot.chain.is_none();
        let chain = snapshot.chain.unwrap_or_default();
        let listening = snapshot
            .listeners
            .progress
            .iter()
            .filter(|e| e.layer == GLOBAL_LAYER || chain.contains(&e.layer))
            .map(|e| e.f.clone())
            .collect();
        let exec = ToolExecution(Arc::new(ExecInner {
            token,
            call_id,
            name,
            arguments,
            cancel,
            agent,
            chain,
            deferred: Mutex::new(Vec::new()),
            body_started: std::sync::atomic::AtomicBool::new(false),
            origin,
            owned: snapshot.owned,
            extensions: std::sync::OnceLock::new(),
            progress: ProgressState::new(progress, listening),
            run_pause: std::sync::OnceLock::new(),
            resumed_run: std::sync::OnceLock::new(),
            reviewed: std::sync::OnceLock::new(),
            principal,
        }));
        // A decision given for this very call of a resumed program stands for the approval
        // service's answer; for any other call it means nothing.
        let resumed = decided.and_then(|given| {
            (origin.is_program()
                && given.call_id == exec.call_id()
                && given.tool == exec.name()
                && given.arguments == tools_schema::deep::to_canonical_string(exec.arguments()))
            .then_some(given.decision)
        });
        Run {
            rt: rt.clone(),
            exec,
            def: snapshot.def,
            scope_gone,
            refusal: snapshot.refusal,
            listeners: snapshot.listeners,
            span,
            resumed,
        }
    }

    /// Records the policy's answer on the call's span (`allowed`, `denied`, `approved`,
    /// `not_approved`, `deferred`, `guard_denied`).
    pub(crate) fn record_policy(&self, answer: &'static str) {
        // `tracing` looks the field up by name before it finds the span disabled.
        if !self.span.is_disabled() {
            self.span.record("agent_tools.policy", answer);
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
    ///
    /// `execute_batch` makes the same steps in its own order. The steps are awaited here
    /// directly rather than through an `async fn` shared with it: each such layer moves the
    /// phase's future (two kilobytes) once more on every call.
    pub(crate) async fn run(self) -> ToolExecutionResult {
        let mut clock = PhaseClock::start(&self.span);
        let admitted = self.admit().await;
        self.admitted(&admitted, &mut clock);
        let draft = match admitted {
            Ok(def) => {
                let mut draft = self.dispatch(&def).await;
                if let Some(pause) = self.paused_program() {
                    draft = self.pause_run(pause).await;
                }
                self.dispatched(&mut clock);
                draft
            }
            Err(failure) => failure,
        };
        self.conclude(draft, clock).await
    }

    /// After [`admit`](Self::admit): its duration goes on the span; a call refused has no
    /// body, so nothing sees its progress from now on (a prepare hook may have reported some).
    pub(crate) fn admitted(
        &self,
        admitted: &Result<ToolDefinition, Draft>,
        clock: &mut PhaseClock,
    ) {
        if admitted.is_err() {
            self.exec.end_progress();
        }
        clock.admit = clock.lap();
    }

    /// The program the body ran that paused as a whole, when it did: the call then pauses
    /// with it (`pause_run`), before [`dispatched`](Self::dispatched).
    pub(crate) fn paused_program(&self) -> Option<crate::durable::approvals::RunPause> {
        self.exec.0.run_pause.get().cloned()
    }

    /// After [`dispatch`](Self::dispatch) (and a program's pause): the body has settled, so
    /// nothing sees the call's progress any more; the duration goes on the span.
    pub(crate) fn dispatched(&self, clock: &mut PhaseClock) {
        self.exec.end_progress();
        clock.dispatch = clock.lap();
    }

    fn panicked(&self, site: PanicSite, payload: Box<dyn std::any::Any + Send>) -> Draft {
        Draft::from_error(ExecutionError::Panicked {
            site,
            tool: self.exec.name().to_owned(),
            message: panic_message(&*payload),
        })
    }

    fn unknown_tool(&self) -> ExecutionError {
        if let Some(refusal) = &self.refusal {
            return refusal.clone();
        }
        let name = self.exec.name().to_owned();
        if self.scope_gone {
            return ExecutionError::ScopeGone { name };
        }
        let scope = self.exec.agent().unwrap_or(ScopeKey::GLOBAL);
        let visible = self.rt.visible_names(scope);
        let suggestions =
            crate::suggest::closest(&name, visible.iter().map(String::as_str), SUGGEST_AT)
                .into_iter()
                .map(str::to_owned)
                .collect();
        ExecutionError::UnknownTool { name, suggestions }
    }
}

fn error_code(error: &ToolFailureInfo) -> &str {
    &error.code
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
            in_span::InSpan::new(span, run.run()).await
        }
    }
}

/// The name of the span of a call of `tool` (`otel.name`): the definition's, made once, or
/// (for a tool not found) made now.
fn span_name<'a>(def: Option<&'a ToolDefinition>, tool: &str) -> Cow<'a, str> {
    match def {
        Some(def) => Cow::Borrowed(def.span_name()),
        None => Cow::Owned(format!("execute_tool {tool}")),
    }
}

/// A call's phases timed for its span: `agent_tools.admit.duration` (a wait on the approval
/// service included) and `agent_tools.dispatch.duration`, in seconds, recorded with the outcome
/// in one go when the call ends (each `record` is a lookup of the span in an OpenTelemetry
/// layer). The conclusion is the rest of the span (the span's own end is its end). Without a
/// subscriber that wants the span it reads no clock.
#[derive(Default)]
pub(crate) struct PhaseClock {
    /// When the current phase started; `None` when nothing is timed.
    at: Option<Instant>,
    pub(crate) admit: Option<f64>,
    pub(crate) dispatch: Option<f64>,
}

impl PhaseClock {
    /// Starts the first phase now, when the span is recorded: not for a disabled span, nor
    /// for one made for no subscriber (`tracing` makes those when a subscriber elsewhere in
    /// the process took an interest in the call site).
    pub(crate) fn start(span: &tracing::Span) -> Self {
        let recorded = span
            .with_subscriber(|(_, dispatch)| !dispatch.is::<tracing::subscriber::NoSubscriber>())
            .unwrap_or(false);
        PhaseClock {
            at: recorded.then(Instant::now),
            ..PhaseClock::default()
        }
    }

    /// Whether the span is recorded (see [`start`](Self::start)).
    pub(crate) fn timed(&self) -> bool {
        self.at.is_some()
    }

    /// Starts the next phase now without counting the time since the last (a wait for a
    /// turn, which belongs to no phase).
    pub(crate) fn restart(&mut self) {
        if self.at.is_some() {
            self.at = Some(Instant::now());
        }
    }

    /// Ends the current phase: its duration in seconds, and the next phase starts.
    pub(crate) fn lap(&mut self) -> Option<f64> {
        let started = self.at?;
        let now = Instant::now();
        self.at = Some(now);
        Some(now.duration_since(started).as_secs_f64())
    }
}

/// How a call's origin reads on its span.
fn origin_name(origin: crate::call::tool_call::CallOrigin) -> &'static str {
    match origin {
        crate::call::tool_call::CallOrigin::Direct => "direct",
        crate::call::tool_call::CallOrigin::Nested { .. } => "nested",
        crate::call::tool_call::CallOrigin::Program(_) => "program",
    }
}
