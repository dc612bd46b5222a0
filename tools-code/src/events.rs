//! Session events of Code Mode: what the dispatch bridge records about each call a `run_code`
//! program makes, for the host's session log.
//!
//! Each sub-call that starts records a [`SessionEvent::CodeDispatchStart`] as it enters the
//! pipeline, a [`SessionEvent::CodeDispatchProgress`] for each progress report its tool makes,
//! and, when its result is final, one [`SessionEvent::CodeDispatch`] with the
//! model-facing content and error flag (the vocabulary of a native tool result, so a UI renders
//! sub-calls the way it renders direct calls). A call still queued when the run settles records
//! neither. The events are log-only: nothing here re-enters the model's context.
//!
//! Implement [`SessionEventSink`] to receive them, or use the two shipped sinks:
//! [`ChannelSink`] (a `tokio` channel) and [`RecordingSink`] (in memory, for tests).

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::lock;
use tools_runtime::ContentBlock;

/// One event of a Code Mode run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SessionEvent {
    /// A sub-call entered the pipeline.
    CodeDispatchStart {
        /// `<outer call id>:code:<n>`, `n` counting the program's calls from 1 in the order
        /// it made them.
        id: String,
        /// The call id of the `run_code` call that made it.
        parent_call_id: String,
        /// The tool the program called.
        tool: String,
        /// The arguments, as the program passed them.
        arguments: Arc<Value>,
        /// When the sub-call entered the pipeline.
        time: SystemTime,
    },
    /// A sub-call reported progress (see [`tools_runtime::progress`]); recorded between its
    /// start and its outcome, in the order the tool reported.
    CodeDispatchProgress {
        /// The id of its [`CodeDispatchStart`](SessionEvent::CodeDispatchStart).
        id: String,
        /// The call id of the `run_code` call that made it.
        parent_call_id: String,
        /// The tool the program called.
        tool: String,
        /// How much is done.
        done: f64,
        /// The total, when the tool gave one.
        total: Option<f64>,
        /// The tool's message, when it gave one.
        message: Option<String>,
        /// When the tool reported.
        time: SystemTime,
    },
    /// A sub-call's final, model-facing outcome.
    CodeDispatch {
        /// The id of its [`CodeDispatchStart`](SessionEvent::CodeDispatchStart).
        id: String,
        /// The call id of the `run_code` call that made it.
        parent_call_id: String,
        /// The tool the program called.
        tool: String,
        /// The content a direct call would have shown the model (possibly replaced by the
        /// spill hook; see [`CodeMode::spill`](crate::CodeMode::spill)).
        content: Vec<ContentBlock>,
        /// Whether the call failed.
        is_error: bool,
        /// When the sub-call entered the pipeline.
        started: SystemTime,
        /// When its result was final.
        ended: SystemTime,
    },
}

impl SessionEvent {
    /// The event's name: `code-dispatch-start`, `code-dispatch-progress` or `code-dispatch`.
    pub fn kind(&self) -> &'static str {
        match self {
            SessionEvent::CodeDispatchStart { .. } => "code-dispatch-start",
            SessionEvent::CodeDispatchProgress { .. } => "code-dispatch-progress",
            SessionEvent::CodeDispatch { .. } => "code-dispatch",
        }
    }

    /// The sub-call id the event is about.
    pub fn id(&self) -> &str {
        match self {
            SessionEvent::CodeDispatchStart { id, .. }
            | SessionEvent::CodeDispatchProgress { id, .. }
            | SessionEvent::CodeDispatch { id, .. } => id,
        }
    }
}

/// Where the bridge sends [`SessionEvent`]s. Called from the task that runs the sub-call;
/// keep it quick (hand the event on, do not block). A panicking sink is logged and skipped.
pub trait SessionEventSink: Send + Sync + 'static {
    /// Receives one event.
    fn record(&self, event: SessionEvent);
}

impl<F> SessionEventSink for F
where
    F: Fn(SessionEvent) + Send + Sync + 'static,
{
    fn record(&self, event: SessionEvent) {
        self(event)
    }
}

/// A sink that sends each event on an unbounded `tokio` channel; events sent after the
/// receiver is dropped are discarded.
#[derive(Debug, Clone)]
pub struct ChannelSink(mpsc::UnboundedSender<SessionEvent>);

impl ChannelSink {
    /// A sink and the receiver of its events.
    pub fn new() -> (ChannelSink, mpsc::UnboundedReceiver<SessionEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (ChannelSink(tx), rx)
    }
}

impl SessionEventSink for ChannelSink {
    fn record(&self, event: SessionEvent) {
        // A closed channel means nobody listens any more; dropping the event is the contract.
        let _ = self.0.send(event);
    }
}

/// A sink that keeps every event in memory, in the order received.
#[derive(Clone, Default)]
pub struct RecordingSink(Arc<Mutex<Vec<SessionEvent>>>);

impl RecordingSink {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the events so far.
    pub fn events(&self) -> Vec<SessionEvent> {
        lock(&self.0).clone()
    }

    /// Takes the events so far, leaving the recorder empty.
    pub fn take(&self) -> Vec<SessionEvent> {
        std::mem::take(&mut *lock(&self.0))
    }
}

impl fmt::Debug for RecordingSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = lock(&self.0).len();
        f.debug_struct("RecordingSink").field("events", &n).finish()
    }
}

impl SessionEventSink for RecordingSink {
    fn record(&self, event: SessionEvent) {
        lock(&self.0).push(event);
    }
}
