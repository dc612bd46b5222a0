//! Code Mode end to end, per language: a `run_code` program against tools made with `#[tool]`,
//! through the whole pipeline of the registry.
//!
//! One program per language overlaps three concurrency-safe calls (their bodies wait on one
//! shared barrier, so they only finish if they run together), issues an exclusive call while
//! they run and two more calls while that one waits (the exclusive call must run alone, and the
//! calls after it must start after it ends), collects contexts deferred by tool bodies, catches
//! a guard's denial as a `ToolCallError`, and returns a filtered value. The test then checks the
//! order the bodies ran in, every session event, the outer result's contexts, value and text.
//!
//! A second test per language cancels the outer call while a sub-call runs: the sub-call's body
//! has ended when `execute` returns, and the run fails as aborted.
//!
//! The Python tests find the interpreter as the Python runtime tests do (`TOOLS_PYTHON`, else
//! `python3` on `PATH`); without one they fail.
#![cfg(any(feature = "typescript", feature = "python"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{Barrier, Notify};
use tools_code::{CODE_RUN_FAILED, CodeMode, CodeRuntime, RecordingSink, SessionEvent};
use tools_runtime::{
    AdditionalContext, CancellationToken, ContentBlock, PresentationMode, Registration, Scope,
    ToolCall, ToolExecutionResult, ToolRunContext, ToolRuntime, ToolSchema, tool,
};

/// How long a run may take before the test fails instead of hanging: the barrier of the three
/// overlapping calls never opens if the calls run one after another.
const RUN_BOUND: Duration = Duration::from_secs(10);

/// The shared state the tools reach through `#[context] Arc<Probe>`.
struct Probe {
    /// The three `fetch` bodies wait here together.
    barrier: Barrier,
    /// `start <tool> <arg>` and `end <tool> <arg>`, in the order the bodies ran.
    log: Mutex<Vec<String>>,
    /// Fired when the `note` body for `second` ends; the one for `first` waits for it, so the
    /// two finish in the reverse of their call order.
    second_noted: Notify,
    /// Fired when the `hang` body starts.
    hang_started: Notify,
    /// Set by the `hang` body as its very last step.
    hang_ended: AtomicBool,
}

impl Probe {
    fn new() -> Self {
        Probe {
            barrier: Barrier::new(3),
            log: Mutex::new(Vec::new()),
            second_noted: Notify::new(),
            hang_started: Notify::new(),
            hang_ended: AtomicBool::new(false),
        }
    }

    fn record(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// A number and its square.
#[derive(Serialize, ToolSchema)]
struct Square {
    n: i64,
    square: i64,
}

/// Square a number (waits until three calls are running together).
#[tool(concurrency_safe)]
async fn fetch(
    /// The number.
    n: i64,
    #[context] probe: Arc<Probe>,
) -> Square {
    probe.record(format!("start fetch {n}"));
    probe.barrier.wait().await;
    probe.record(format!("end fetch {n}"));
    Square { n, square: n * n }
}

/// Commit a checkpoint (exclusive: it runs alone).
#[tool]
async fn commit(
    /// The checkpoint's label.
    label: String,
    #[context] probe: Arc<Probe>,
    #[context] ctx: ToolRunContext,
) -> String {
    probe.record(format!("start commit {label}"));
    // Give anything that wrongly runs beside this call the chance to show up in the log.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    ctx.defer_context(AdditionalContext::new(
        "commit",
        format!("{label} committed"),
    ));
    probe.record(format!("end commit {label}"));
    format!("committed {label}")
}

/// Take a note; defers it as context for the model.
#[tool(concurrency_safe)]
async fn note(
    /// The note.
    text: String,
    #[context] probe: Arc<Probe>,
    #[context] ctx: ToolRunContext,
) -> String {
    probe.record(format!("start note {text}"));
    if text == "first" {
        probe.second_noted.notified().await;
    }
    ctx.defer_context(
        AdditionalContext::new("note", format!("noted: {text}"))
            .with_meta(json!({"len": text.len()})),
    );
    probe.record(format!("end note {text}"));
    if text == "second" {
        probe.second_noted.notify_one();
    }
    text.to_uppercase()
}

/// Read a secret (a guard denies every key).
#[tool(concurrency_safe)]
async fn secret(
    /// The key.
    key: String,
    #[context] probe: Arc<Probe>,
) -> String {
    probe.record(format!("start secret {key}"));
    key
}

/// Wait until cancelled, then wind down.
#[tool(concurrency_safe)]
async fn hang(#[context] probe: Arc<Probe>, #[context] cancel: CancellationToken) -> String {
    probe.record("start hang".to_owned());
    probe.hang_started.notify_one();
    cancel.cancelled().await;
    // Winding down takes a while: a caller that does not wait for the body returns first.
    tokio::time::sleep(Duration::from_millis(100)).await;
    probe.record("end hang".to_owned());
    probe.hang_ended.store(true, Ordering::SeqCst);
    "stopped".to_owned()
}

struct Setup {
    runtime: ToolRuntime,
    probe: Arc<Probe>,
    sink: RecordingSink,
    /// Dropping the scope would dispose the tools.
    _plugin: Scope,
    _regs: Vec<Registration>,
}

fn setup(code_runtime: impl CodeRuntime + 'static) -> Setup {
    let sink = RecordingSink::new();
    let runtime = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(code_runtime).events(sink.clone()))
        .build()
        .unwrap();
    let probe = Arc::new(Probe::new());
    runtime.insert_state_arc(probe.clone());
    let plugin = runtime.scope();
    let mut regs = Vec::new();
    for def in [
        fetch::definition().unwrap(),
        commit::definition().unwrap(),
        note::definition().unwrap(),
        secret::definition().unwrap(),
        hang::definition().unwrap(),
    ] {
        regs.push(plugin.register(def).unwrap());
    }
    regs.push(
        plugin
            .guard(|exec| {
                (exec.name() == "secret").then(|| {
                    format!(
                        "the key `{}` is off limits",
                        exec.arguments()["key"].as_str().unwrap_or_default()
                    )
                })
            })
            .unwrap(),
    );
    Setup {
        runtime,
        probe,
        sink,
        _plugin: plugin,
        _regs: regs,
    }
}

fn run_code(code: &str) -> ToolCall {
    ToolCall::new(
        "outer",
        "run_code",
        json!({"code": code, "description": "end-to-end test"}),
    )
}

async fn execute_bounded(runtime: &ToolRuntime, call: ToolCall) -> ToolExecutionResult {
    tokio::time::timeout(RUN_BOUND, runtime.execute(call))
        .await
        .expect("the run did not end: the three fetch calls did not overlap")
}

const TS_PROGRAM: &str = r#"
type Square = { n: number; square: number };
// 1-3: concurrency-safe; they only finish if they run together.
const fetches: Promise<Square[]> = Promise.all([
  tools.fetch({ n: 1 }),
  tools.fetch({ n: 2 }),
  tools.fetch({ n: 3 }),
]);
// 4: exclusive, made while 1-3 run: it waits for them and runs alone.
const commit: Promise<string> = tools.commit({ label: "checkpoint" });
// 5-6: made while 4 waits: they start after it ends.
const notes: Promise<string[]> = Promise.all([
  tools.note({ text: "first" }),
  tools.note({ text: "second" }),
]);
const [a, b, c] = await fetches;
const committed = await commit;
const noted = await notes;
// 7: denied by a guard.
let denied: unknown = "not denied";
try {
  await tools.secret({ key: "root" });
} catch (e) {
  denied = e instanceof ToolCallError ? [e.toolName, e.message] : String(e);
}
console.log("sum of squares", a.square + b.square + c.square);
return {
  big: [a, b, c].filter((r) => r.square > 1).map((r) => r.n),
  committed,
  noted,
  denied,
};
"#;

const PY_PROGRAM: &str = r#"
import asyncio
# 1-3: concurrency-safe; they only finish if they run together.
fetches = asyncio.gather(tools.fetch({'n': 1}), tools.fetch({'n': 2}), tools.fetch({'n': 3}))
# 4: exclusive, made while 1-3 run: it waits for them and runs alone.
commit = tools.commit({'label': 'checkpoint'})
# 5-6: made while 4 waits: they start after it ends.
notes = asyncio.gather(tools.note({'text': 'first'}), tools.note({'text': 'second'}))
a, b, c = await fetches
committed = await commit
noted = await notes
# 7: denied by a guard.
denied = 'not denied'
try:
    await tools.secret({'key': 'root'})
except ToolCallError as e:
    denied = [e.tool_name, e.message]
print('sum of squares', a['square'] + b['square'] + c['square'])
return {
    'big': [r['n'] for r in (a, b, c) if r['square'] > 1],
    'committed': committed,
    'noted': list(noted),
    'denied': denied,
}
"#;

fn text(t: &str) -> Vec<ContentBlock> {
    vec![ContentBlock::text(t)]
}

/// Runs the program and checks everything the registry and the program report.
async fn overlapping_exclusive_guarded_and_deferred(
    code_runtime: impl CodeRuntime + 'static,
    program: &str,
) {
    let s = setup(code_runtime);
    let result = execute_bounded(&s.runtime, run_code(program)).await;
    assert!(!result.is_error(), "{}", result.text());

    // The value and the text the model reads.
    let expected_result = json!({
        "big": [2, 3],
        "committed": "committed checkpoint",
        "noted": ["FIRST", "SECOND"],
        "denied": ["secret", "the key `root` is off limits"],
    });
    assert_eq!(
        result.value(),
        Some(&json!({"logs": ["sum of squares 14"], "result": expected_result}))
    );
    assert_eq!(
        result.text(),
        "sum of squares 14\n{\n  \"big\": [\n    2,\n    3\n  ],\n  \"committed\": \"committed checkpoint\",\n  \"noted\": [\n    \"FIRST\",\n    \"SECOND\"\n  ],\n  \"denied\": [\n    \"secret\",\n    \"the key `root` is off limits\"\n  ]\n}"
    );

    // Contexts deferred by the bodies, in call order (note 6 finished before note 5).
    assert_eq!(
        result.additional_contexts,
        vec![
            AdditionalContext::new("commit", "checkpoint committed"),
            AdditionalContext::new("note", "noted: first").with_meta(json!({"len": 5})),
            AdditionalContext::new("note", "noted: second").with_meta(json!({"len": 6})),
        ]
    );

    // The order the bodies ran in.
    let log = s.probe.log();
    assert_eq!(log.len(), 12, "{log:?}");
    let set = |range: std::ops::Range<usize>| -> BTreeSet<&str> {
        log[range].iter().map(String::as_str).collect()
    };
    assert_eq!(
        set(0..3),
        BTreeSet::from(["start fetch 1", "start fetch 2", "start fetch 3"]),
        "the three fetch calls overlap: {log:?}"
    );
    assert_eq!(
        set(3..6),
        BTreeSet::from(["end fetch 1", "end fetch 2", "end fetch 3"]),
        "{log:?}"
    );
    assert_eq!(
        log[6..8],
        ["start commit checkpoint", "end commit checkpoint"],
        "the exclusive call runs alone: {log:?}"
    );
    assert_eq!(
        set(8..12),
        BTreeSet::from([
            "start note first",
            "start note second",
            "end note first",
            "end note second"
        ]),
        "the calls after the exclusive one start after it ends: {log:?}"
    );
    let end_first = log.iter().position(|l| l == "end note first").unwrap();
    let end_second = log.iter().position(|l| l == "end note second").unwrap();
    assert!(end_second < end_first, "{log:?}");
    assert!(
        !log.iter().any(|l| l.contains("secret")),
        "a denied call's body never runs: {log:?}"
    );

    // The session events: one start and one outcome per call, in pipeline order.
    let events = s.sink.events();
    assert_eq!(events.len(), 14, "{events:#?}");
    let ids = |range: std::ops::Range<usize>| -> BTreeSet<String> {
        events[range]
            .iter()
            .map(|e| format!("{} {}", e.kind(), e.id()))
            .collect()
    };
    let expected_ids = |ns: &[u32]| -> BTreeSet<String> {
        ns.iter()
            .flat_map(|n| {
                [
                    format!("code-dispatch-start outer:code:{n}"),
                    format!("code-dispatch outer:code:{n}"),
                ]
            })
            .collect()
    };
    assert_eq!(ids(0..6), expected_ids(&[1, 2, 3]), "{events:#?}");
    assert_eq!(ids(6..8), expected_ids(&[4]), "{events:#?}");
    assert_eq!(ids(8..12), expected_ids(&[5, 6]), "{events:#?}");
    assert_eq!(ids(12..14), expected_ids(&[7]), "{events:#?}");

    let fetch_content = |n: i64| text(&format!("{{\"n\":{n},\"square\":{}}}", n * n));
    let expected: Vec<(u32, &str, Value, Vec<ContentBlock>, bool)> = vec![
        (1, "fetch", json!({"n": 1}), fetch_content(1), false),
        (2, "fetch", json!({"n": 2}), fetch_content(2), false),
        (3, "fetch", json!({"n": 3}), fetch_content(3), false),
        (
            4,
            "commit",
            json!({"label": "checkpoint"}),
            text("committed checkpoint"),
            false,
        ),
        (5, "note", json!({"text": "first"}), text("FIRST"), false),
        (6, "note", json!({"text": "second"}), text("SECOND"), false),
        (
            7,
            "secret",
            json!({"key": "root"}),
            text("Error: the key `root` is off limits"),
            true,
        ),
    ];
    for (n, tool, arguments, content, is_error) in expected {
        let id = format!("outer:code:{n}");
        let mine: Vec<&SessionEvent> = events.iter().filter(|e| e.id() == id).collect();
        assert_eq!(mine.len(), 2, "{id}: {events:#?}");
        match mine[0] {
            SessionEvent::CodeDispatchStart {
                parent_call_id,
                tool: t,
                arguments: a,
                ..
            } => {
                assert_eq!(parent_call_id, "outer");
                assert_eq!(t, tool, "{id}");
                assert_eq!(**a, arguments, "{id}");
            }
            other => panic!("{id}: expected the start first, got {other:?}"),
        }
        match mine[1] {
            SessionEvent::CodeDispatch {
                parent_call_id,
                tool: t,
                content: c,
                is_error: e,
                started,
                ended,
                ..
            } => {
                assert_eq!(parent_call_id, "outer");
                assert_eq!(t, tool, "{id}");
                assert_eq!(*c, content, "{id}");
                assert_eq!(*e, is_error, "{id}");
                assert!(started <= ended, "{id}");
            }
            other => panic!("{id}: expected the outcome second, got {other:?}"),
        }
    }
}

/// Cancels the outer call while its sub-call runs.
async fn cancelled_during_a_sub_call(code_runtime: impl CodeRuntime + 'static, program: &str) {
    let s = setup(code_runtime);
    let cancel = CancellationToken::new();
    let call = run_code(program).with_cancel(cancel.clone());
    let started = s.probe.hang_started.notified();
    let runtime = s.runtime.clone();
    let run = tokio::spawn(async move { runtime.execute(call).await });
    tokio::time::timeout(RUN_BOUND, started)
        .await
        .expect("the hang body did not start");
    cancel.cancel();
    let result = tokio::time::timeout(RUN_BOUND, run)
        .await
        .expect("the cancelled run did not end")
        .unwrap();
    assert!(
        s.probe.hang_ended.load(Ordering::SeqCst),
        "execute returned while the sub-call's body was still running"
    );
    assert_eq!(s.probe.log(), ["start hang", "end hang"]);

    assert_eq!(result.code(), Some(CODE_RUN_FAILED), "{}", result.text());
    assert_eq!(
        result.text(),
        "Error: code run failed (aborted): the run was cancelled"
    );
    assert!(result.additional_contexts.is_empty());

    // The sub-call started, was cancelled, and its outcome was recorded before the result.
    let events = s.sink.events();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0].kind(), "code-dispatch-start");
    assert_eq!(events[0].id(), "outer:code:1");
    match &events[1] {
        SessionEvent::CodeDispatch {
            id,
            tool,
            is_error,
            content,
            ..
        } => {
            assert_eq!(id, "outer:code:1");
            assert_eq!(tool, "hang");
            assert!(*is_error);
            assert_eq!(*content, text("Error: the call to `hang` was cancelled"));
        }
        other => panic!("expected the outcome, got {other:?}"),
    }
}

const TS_HANG: &str = "await tools.hang();\nreturn 'not reached';";
const PY_HANG: &str = "await tools.hang()\nreturn 'not reached'";

#[cfg(feature = "typescript")]
mod typescript {
    use super::*;
    use tools_code::TypeScriptRuntime;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn overlapping_exclusive_guarded_and_deferred_calls() {
        overlapping_exclusive_guarded_and_deferred(TypeScriptRuntime::new(), TS_PROGRAM).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_run_leaves_no_body_running() {
        cancelled_during_a_sub_call(TypeScriptRuntime::new(), TS_HANG).await;
    }
}

#[cfg(feature = "python")]
mod python {
    use super::*;
    use tools_code::PythonRuntime;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn overlapping_exclusive_guarded_and_deferred_calls() {
        overlapping_exclusive_guarded_and_deferred(PythonRuntime::new(), PY_PROGRAM).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_run_leaves_no_body_running() {
        cancelled_during_a_sub_call(PythonRuntime::new(), PY_HANG).await;
    }
}
