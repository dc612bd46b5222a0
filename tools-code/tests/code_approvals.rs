//! A program's call that waits for a person pauses the whole run (`tools_runtime::approvals`):
//! the `run_code` result is `APPROVAL_PENDING` with a handle that names the waiting call; on
//! resume the program runs again, the journaled calls are answered without running their
//! bodies again, the approved call runs live and the program goes on. A program that calls
//! differently on replay fails with `CODE_RUN_DIVERGED`. Both languages.

#![cfg(any(feature = "typescript", feature = "python"))]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tools_code::{CODE_RUN_DIVERGED, CodeMode, CodeRuntime, RecordingSink, SessionEvent};
use tools_runtime::approvals::{
    ApprovalKey, ApprovalStore, DurableApprovals, MemoryStore, PendingHandle,
};
use tools_runtime::hooks::{Approval, PreDecision};
use tools_runtime::{
    Output, PresentationMode, Registration, ToolCall, ToolDefinition, ToolExecutionResult,
    ToolRuntime, codes,
};

/// How many times each tool's body ran, by tool and argument.
type Ran = Arc<Mutex<BTreeMap<String, usize>>>;

struct Setup {
    rt: ToolRuntime,
    ran: Ran,
    sink: RecordingSink,
    _agent: tools_runtime::Scope,
    _regs: Vec<Registration>,
    _plugin: tools_runtime::Scope,
}

/// `read` (free) and `write` (asks; the service defers), counting their bodies, on a runtime
/// in code mode with durable approvals over `store`, from the agent scope `coder`.
fn setup(runtime: impl CodeRuntime + 'static, store: Arc<MemoryStore>) -> Setup {
    setup_over(runtime, store, None)
}

/// The same over any store; with `effects`, each body also appends `<tool> <path>` to that
/// file (what a killed process leaves behind).
fn setup_over(
    runtime: impl CodeRuntime + 'static,
    store: Arc<dyn ApprovalStore>,
    effects: Option<std::path::PathBuf>,
) -> Setup {
    let sink = RecordingSink::new();
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(runtime).events(sink.clone()))
        .durable_approvals(DurableApprovals::with_store(
            store,
            ApprovalKey::new([9u8; 32]).unwrap(),
        ))
        .build()
        .unwrap();
    let ran: Ran = Arc::new(Mutex::new(BTreeMap::new()));
    let plugin = rt.scope();
    let mut regs = Vec::new();
    for name in ["read", "write"] {
        let ran = ran.clone();
        let effects = effects.clone();
        let def = ToolDefinition::builder(name)
            .input_schema(json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"]
            }))
            .output(Output::json(json!({"type": "string"})))
            .execute(move |args, _ctx| {
                let ran = ran.clone();
                let effects = effects.clone();
                async move {
                    let path = args["path"].as_str().unwrap_or("").to_owned();
                    if let Some(file) = &effects {
                        use std::io::Write;
                        let mut f = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(file)
                            .unwrap();
                        writeln!(f, "{name} {path}").unwrap();
                        f.sync_all().unwrap();
                    }
                    *ran.lock()
                        .unwrap()
                        .entry(format!("{name} {path}"))
                        .or_default() += 1;
                    Ok::<Value, tools_runtime::ToolError>(json!(format!("{name}:{path}")))
                }
            })
            .build()
            .unwrap();
        regs.push(plugin.register(def).unwrap());
    }
    regs.push(
        plugin
            .on_pre_execute(|exec, decision| {
                if exec.name() == "write" {
                    PreDecision::ask("writes need a person")
                } else {
                    decision
                }
            })
            .unwrap(),
    );
    regs.push(
        plugin
            .set_approval(|_exec, _reason| async { Approval::later() })
            .unwrap(),
    );
    let agent = rt.agent_scope_named("coder").unwrap();
    Setup {
        rt,
        ran,
        sink,
        _agent: agent,
        _regs: regs,
        _plugin: plugin,
    }
}

fn run_code(setup: &Setup, code: &str) -> ToolCall {
    ToolCall::new(
        "outer",
        "run_code",
        json!({"code": code, "description": "test"}),
    )
    .with_agent(setup._agent.key())
}

fn handle_of(result: &ToolExecutionResult) -> PendingHandle {
    assert_eq!(result.code(), Some(codes::APPROVAL_PENDING), "{result:?}");
    result.pending.as_ref().unwrap().handle().unwrap().clone()
}

fn ran(setup: &Setup) -> BTreeMap<String, usize> {
    setup.ran.lock().unwrap().clone()
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

/// Pause on the write, resume in a second runtime (same store and key: "another process"),
/// and check every body ran exactly once and the program finished.
async fn pause_and_resume(
    make: impl Fn() -> Box<dyn Fn(Arc<MemoryStore>) -> Setup>,
    program: &str,
) {
    let store = Arc::new(MemoryStore::new());
    let first = make()(store.clone());
    let paused = first.rt.execute(run_code(&first, program)).await;
    let handle = handle_of(&paused);
    let awaiting = handle.awaiting.clone().unwrap();
    assert_eq!(awaiting.tool, "write");
    assert_eq!(awaiting.call_id, "outer:code:2");
    assert_eq!(awaiting.arguments, r#"{"path":"b.txt"}"#);
    assert_eq!(handle.reason.as_deref(), Some("writes need a person"));
    assert_eq!(ran(&first), counts(&[("read a.txt", 1)]));

    let second = make()(store);
    // A program's call cannot be approved with edited arguments: its replay would make the
    // reviewed call. Refused before anything is claimed; the call stays pending.
    let refused = second
        .rt
        .resume_edited(
            &handle,
            json!({"code": "return 1", "description": "edited"}),
            Default::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), codes::APPROVAL_EDIT_REFUSED, "{refused}");
    assert!(refused.to_string().contains("`write`"), "{refused}");
    assert_eq!(
        second.rt.pending_calls(10).await.unwrap(),
        vec![handle.clone()]
    );
    let text = handle.to_string();
    let done = second
        .rt
        .resume(&second.rt.parse_handle(&text).unwrap(), Approval::Approved)
        .await
        .unwrap();
    assert!(!done.is_error(), "{done:?}");
    assert_eq!(
        done.value().unwrap()["result"],
        json!(["read:a.txt", "write:b.txt", "read:c.txt"])
    );
    // The journaled read did not run again; the write and the last read ran live once.
    assert_eq!(
        ran(&second),
        counts(&[("read c.txt", 1), ("write b.txt", 1)])
    );
    // The resumed run recorded only its live calls.
    let starts: Vec<String> = second
        .sink
        .events()
        .iter()
        .filter_map(|e| match e {
            SessionEvent::CodeDispatchStart { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(starts, ["outer:code:2", "outer:code:3"]);
    let again = second
        .rt
        .resume(&handle, Approval::Approved)
        .await
        .unwrap_err();
    assert_eq!(again.code(), codes::APPROVAL_ALREADY_RESUMED);
}

/// What a program reads that differs between runs (random numbers, the clock) is journaled
/// and read back on replay: the resumed program makes the same calls and returns the same
/// values it read in its first run.
async fn random_and_clock_replay(
    make: impl Fn() -> Box<dyn Fn(Arc<MemoryStore>) -> Setup>,
    program: &str,
) {
    let store = Arc::new(MemoryStore::new());
    let first = make()(store.clone());
    let handle = handle_of(&first.rt.execute(run_code(&first, program)).await);
    let read_first: Vec<String> = ran(&first).into_keys().collect();
    assert_eq!(read_first.len(), 1, "{read_first:?}");
    let second = make()(store);
    let done = second.rt.resume(&handle, Approval::Approved).await.unwrap();
    assert!(!done.is_error(), "{done:?}");
    // The journaled read was not made again, and the values the program returns are those
    // it read before the pause (the read's path holds them).
    assert_eq!(ran(&second), counts(&[("write b.txt", 1)]));
    let result = done.value().unwrap()["result"].as_str().unwrap().to_owned();
    assert_eq!(format!("read {result}"), read_first[0]);
}

/// What a program draws from the system's random source (`os.urandom` and what draws on it)
/// is journaled and given back on replay: a program that draws values before the call that
/// waits, passes them to a journaled call, draws again and passes those to the call that
/// waits, resumes (in a new runtime: another process's interpreter) with the same values.
async fn entropy_replay(make: impl Fn() -> Box<dyn Fn(Arc<MemoryStore>) -> Setup>, program: &str) {
    let store = Arc::new(MemoryStore::new());
    let first = make()(store.clone());
    let handle = handle_of(&first.rt.execute(run_code(&first, program)).await);
    let read_first: Vec<String> = ran(&first).into_keys().collect();
    assert_eq!(read_first.len(), 1, "{read_first:?}");
    let awaiting: Value =
        serde_json::from_str(&handle.awaiting.clone().unwrap().arguments).unwrap();
    let second = make()(store);
    let done = second.rt.resume(&handle, Approval::Approved).await.unwrap();
    assert!(!done.is_error(), "{done:?}");
    let result = done.value().unwrap()["result"].clone();
    let (before, paused) = (
        result[0].as_str().unwrap().to_owned(),
        result[1].as_str().unwrap().to_owned(),
    );
    // The journaled read was made with what the program drew first, and the call that
    // waited with what it drew then: the same values in both runs.
    assert_eq!(format!("read {before}"), read_first[0]);
    assert_eq!(awaiting["path"], json!(paused));
    assert_eq!(ran(&second), counts(&[(&format!("write {paused}"), 1)]));
    // Each value is a fresh draw: none repeats between the two rounds.
    let words = |text: &str| text.split(' ').map(str::to_owned).collect::<Vec<_>>();
    let (a, b) = (words(&before), words(&paused));
    assert_eq!(a.len(), b.len(), "{before} / {paused}");
    for (x, y) in a.iter().zip(&b) {
        assert_ne!(x, y, "{before} / {paused}");
    }
}

/// A program whose calls follow the iteration order of a set of strings (which follows the
/// interpreter's hash seed) makes the same calls when it resumes in another runtime's
/// interpreter.
async fn set_order_replay(
    make: impl Fn() -> Box<dyn Fn(Arc<MemoryStore>) -> Setup>,
    program: &str,
    words: usize,
) {
    let store = Arc::new(MemoryStore::new());
    let first = make()(store.clone());
    let handle = handle_of(&first.rt.execute(run_code(&first, program)).await);
    assert_eq!(ran(&first).len(), words);
    let second = make()(store);
    let done = second.rt.resume(&handle, Approval::Approved).await.unwrap();
    assert!(!done.is_error(), "{done:?}");
    assert_eq!(ran(&second), counts(&[("write b.txt", 1)]));
}

/// A denial reaches the program as the call's failure, and the program goes on.
async fn denied_on_resume(
    make: impl Fn() -> Box<dyn Fn(Arc<MemoryStore>) -> Setup>,
    program: &str,
) {
    let store = Arc::new(MemoryStore::new());
    let setup = make()(store);
    let handle = handle_of(&setup.rt.execute(run_code(&setup, program)).await);
    let done = setup
        .rt
        .resume(&handle, Approval::deny("no writes today"))
        .await
        .unwrap();
    assert!(!done.is_error(), "{done:?}");
    assert_eq!(
        done.value().unwrap()["result"],
        json!(["read:a.txt", "denied: no writes today", "read:c.txt"])
    );
    assert_eq!(ran(&setup), counts(&[("read a.txt", 1), ("read c.txt", 1)]));
}

/// A program whose first call depends on what changed while it waited (here the tools it
/// sees: one more was registered) makes a different call on replay: the run fails at once and
/// nothing after it runs.
async fn diverges(make: impl Fn() -> Box<dyn Fn(Arc<MemoryStore>) -> Setup>, program: &str) {
    let store = Arc::new(MemoryStore::new());
    let setup = make()(store);
    let handle = handle_of(&setup.rt.execute(run_code(&setup, program)).await);
    let extra = ToolDefinition::builder("extra")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "string"})))
        .execute(|_args, _ctx| async { Ok::<Value, tools_runtime::ToolError>(json!("extra")) })
        .build()
        .unwrap();
    let _extra = setup._plugin.register(extra).unwrap();
    let before = ran(&setup);
    let done = setup.rt.resume(&handle, Approval::Approved).await.unwrap();
    assert_eq!(done.code(), Some(CODE_RUN_DIVERGED), "{done:?}");
    assert!(done.text().contains("call 1"), "{}", done.text());
    assert_eq!(ran(&setup), before, "nothing ran after the divergence");
}

const TS_PROGRAM: &str = r#"
const a = await tools.read({ path: "a.txt" });
let b: string;
try {
  b = await tools.write({ path: "b.txt" });
} catch (e) {
  b = "denied: " + (e as Error).message;
}
const c = await tools.read({ path: "c.txt" });
return [a, b, c];
"#;

const TS_RANDOM: &str = r#"
const seen = String(Math.random()) + " " + String(Date.now()) + " " + String(new Date().getTime()) + " " + Date();
await tools.read({ path: seen });
await tools.write({ path: "b.txt" });
return seen;
"#;

const TS_CATALOG: &str = r#"
await tools.read({ path: Object.keys(tools).join(",") });
await tools.write({ path: "b.txt" });
return "done";
"#;

const PY_PROGRAM: &str = r#"
a = await tools.read({'path': 'a.txt'})
try:
    b = await tools.write({'path': 'b.txt'})
except ToolCallError as e:
    b = 'denied: ' + e.message
c = await tools.read({'path': 'c.txt'})
return [a, b, c]
"#;

const PY_RANDOM: &str = r#"
import datetime, random, time
seen = ' '.join([
    repr(random.random()), str(random.randint(0, 10**9)), random.choice('abcdefgh'),
    repr(time.time()), str(time.time_ns()), time.strftime('%H:%M:%S'),
    repr(datetime.datetime.now()), datetime.datetime.utcnow().isoformat(),
    datetime.datetime.now(datetime.timezone.utc).isoformat(), datetime.date.today().isoformat(),
])
await tools.read({'path': seen})
await tools.write({'path': 'b.txt'})
return seen
"#;

const PY_ENTROPY: &str = r#"
import os, random, secrets, tempfile, uuid
def draw():
    fd, path = tempfile.mkstemp()
    os.close(fd)
    os.unlink(path)
    return ' '.join([
        str(uuid.uuid4()), secrets.token_hex(16), secrets.token_urlsafe(8), str(secrets.randbelow(10**12)),
        os.urandom(12).hex(), repr(random.SystemRandom().random()),
        repr(random.Random().random()), os.path.basename(path),
    ])
before = draw()
await tools.read({'path': before})
paused = draw()
await tools.write({'path': paused})
return [before, paused]
"#;

const PY_SET_ORDER: &str = r#"
words = {'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa',
         'lambda', 'mu', 'nu', 'xi', 'omicron', 'pi'}
for word in words:
    await tools.read({'path': word})
await tools.write({'path': 'b.txt'})
return 'done'
"#;

const PY_CATALOG: &str = r#"
await tools.read({'path': ','.join(dir(tools))})
await tools.write({'path': 'b.txt'})
return 'done'
"#;

/// How the `slow` tool of [`in_flight`] behaves.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Slow {
    /// Finishes after 200 ms, whatever happens meanwhile (well within the run's deadline).
    Quick,
    /// Ignores cancellation: finishes only when the test releases it.
    IgnoresCancellation,
    /// Honours cancellation: finishes when its call is cancelled (or the test releases it).
    HonoursCancellation,
}

/// A runtime with `slow` and `write`, both concurrency-safe; `write` asks and the service
/// defers it. Counts each body's runs; `release` lets a waiting `slow` finish.
struct InFlight {
    rt: ToolRuntime,
    slow_ran: Arc<std::sync::atomic::AtomicUsize>,
    write_ran: Arc<std::sync::atomic::AtomicUsize>,
    release: Arc<tokio::sync::Notify>,
    sink: RecordingSink,
    _agent: tools_runtime::Scope,
    _regs: Vec<Registration>,
    _plugin: tools_runtime::Scope,
}

impl InFlight {
    fn slow_ran(&self) -> usize {
        self.slow_ran.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn write_ran(&self) -> usize {
        self.write_ran.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn run_code(&self, code: &str) -> ToolCall {
        ToolCall::new(
            "outer",
            "run_code",
            json!({"code": code, "description": "test"}),
        )
        .with_agent(self._agent.key())
    }

    /// Waits (generously) until `slow`'s call in the first run ended and was recorded, and
    /// says whether it failed.
    async fn slow_recorded(&self) -> bool {
        for _ in 0..6000 {
            let ended = self.sink.events().into_iter().find_map(|e| match e {
                SessionEvent::CodeDispatch { id, is_error, .. } if id == "outer:code:1" => {
                    Some(is_error)
                }
                _ => None,
            });
            if let Some(is_error) = ended {
                return is_error;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("slow's call never ended: {:?}", self.sink.events());
    }
}

fn in_flight(
    runtime: impl CodeRuntime + 'static,
    store: Arc<MemoryStore>,
    slow: Slow,
    limits: tools_code::CodeLimits,
) -> InFlight {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let sink = RecordingSink::new();
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(runtime).limits(limits).events(sink.clone()))
        .durable_approvals(DurableApprovals::with_store(
            store,
            ApprovalKey::new([9u8; 32]).unwrap(),
        ))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let slow_ran = Arc::new(AtomicUsize::new(0));
    let write_ran = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Notify::new());
    let mut regs = Vec::new();
    let (ran, gate) = (slow_ran.clone(), release.clone());
    let def = ToolDefinition::builder("slow")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "string"})))
        .concurrency_safe(|_| true)
        .execute(move |_args, ctx| {
            let (ran, gate) = (ran.clone(), gate.clone());
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
                match slow {
                    Slow::Quick => {
                        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    }
                    Slow::IgnoresCancellation => gate.notified().await,
                    Slow::HonoursCancellation => {
                        tokio::select! {
                            () = ctx.cancellation().cancelled() => {
                                return Err(tools_runtime::ToolError::new("slow was cancelled"));
                            }
                            () = gate.notified() => {}
                        }
                    }
                }
                Ok::<Value, tools_runtime::ToolError>(json!("slow:done"))
            }
        })
        .build()
        .unwrap();
    regs.push(plugin.register(def).unwrap());
    let ran = write_ran.clone();
    let def = ToolDefinition::builder("write")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "string"})))
        .concurrency_safe(|_| true)
        .execute(move |_args, _ctx| {
            let ran = ran.clone();
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
                Ok::<Value, tools_runtime::ToolError>(json!("write:done"))
            }
        })
        .build()
        .unwrap();
    regs.push(plugin.register(def).unwrap());
    regs.push(
        plugin
            .on_pre_execute(|exec, decision| {
                if exec.name() == "write" {
                    PreDecision::ask("writes need a person")
                } else {
                    decision
                }
            })
            .unwrap(),
    );
    regs.push(
        plugin
            .set_approval(|_exec, _reason| async { Approval::later() })
            .unwrap(),
    );
    let agent = rt.agent_scope_named("coder").unwrap();
    InFlight {
        rt,
        slow_ran,
        write_ran,
        release,
        sink,
        _agent: agent,
        _regs: regs,
        _plugin: plugin,
    }
}

type MakeInFlight = fn(Arc<MemoryStore>, Slow, tools_code::CodeLimits) -> InFlight;

/// A program starts `slow` and then `write` together; `write` is deferred while `slow` still
/// runs. The pause waits for `slow` (it finishes well within the run's deadline) and journals
/// it: the resumed run answers it from the journal, so each body ran once and the program's
/// result has `slow`'s answer.
async fn in_flight_call_is_journaled(make: MakeInFlight, program: &str) {
    let store = Arc::new(MemoryStore::new());
    let limits = tools_code::CodeLimits::default();
    let first = make(store.clone(), Slow::Quick, limits.clone());
    let paused = first.rt.execute(first.run_code(program)).await;
    let handle = handle_of(&paused);
    assert_eq!(handle.awaiting.as_ref().unwrap().tool, "write");
    assert_eq!(handle.awaiting.as_ref().unwrap().call_id, "outer:code:2");
    assert_eq!((first.slow_ran(), first.write_ran()), (1, 0));
    // `slow` ended (and was recorded) before the pause was stored, as a success.
    assert!(!first.slow_recorded().await);

    let second = make(store, Slow::Quick, limits);
    let text = handle.to_string();
    let done = second
        .rt
        .resume(&second.rt.parse_handle(&text).unwrap(), Approval::Approved)
        .await
        .unwrap();
    assert!(!done.is_error(), "{done:?}");
    assert_eq!(
        done.value().unwrap()["result"],
        json!(["slow:done", "write:done"])
    );
    assert_eq!(
        (first.slow_ran() + second.slow_ran(), second.write_ran()),
        (1, 1),
        "slow ran once in all, write once"
    );
}

/// The same program with a `slow` that outlasts the bound (the run's deadline, short here):
/// the pause is stored with `slow`'s call in doubt, and the resumed program sees that call
/// fail with `CODE_CALL_IN_DOUBT` instead of running its body again. The first run's `slow`,
/// released afterwards, still ends and is recorded.
async fn in_flight_call_past_the_bound_is_in_doubt(make: MakeInFlight, program: &str, slow: Slow) {
    let store = Arc::new(MemoryStore::new());
    let limits = tools_code::CodeLimits::default().with_timeout(std::time::Duration::from_secs(2));
    let first = make(store.clone(), slow, limits);
    let paused = first.rt.execute(first.run_code(program)).await;
    let handle = handle_of(&paused);
    assert_eq!(handle.awaiting.as_ref().unwrap().call_id, "outer:code:2");
    assert_eq!((first.slow_ran(), first.write_ran()), (1, 0));

    // The resumed run has the default deadline: nothing in it waits.
    let second = make(store, slow, tools_code::CodeLimits::default());
    let text = handle.to_string();
    let done = second
        .rt
        .resume(&second.rt.parse_handle(&text).unwrap(), Approval::Approved)
        .await
        .unwrap();
    assert!(!done.is_error(), "{done:?}");
    let result = done.value().unwrap()["result"].clone();
    let seen = result[0].as_str().unwrap_or_default();
    assert!(
        seen.starts_with("failed: ") && seen.contains(tools_code::CODE_CALL_IN_DOUBT),
        "{result}"
    );
    assert!(
        seen.contains("`slow`") && seen.contains("not run again"),
        "{seen}"
    );
    assert_eq!(result[1], json!("write:done"));
    assert_eq!(
        (first.slow_ran() + second.slow_ran(), second.write_ran()),
        (1, 1),
        "slow ran once in all, write once"
    );
    // The first run's `slow` ends after the pause was stored: its end is recorded, and
    // nothing breaks.
    first.release.notify_waiters();
    first.release.notify_one();
    // Its call was cancelled at the bound: whatever the body returned, the call failed.
    assert!(first.slow_recorded().await);
    assert_eq!(first.slow_ran() + second.slow_ran(), 1);
}

const TS_IN_FLIGHT: &str = r#"
const [s, w] = await Promise.all([
  tools.slow({}).catch((e: Error) => "failed: " + e.message),
  tools.write({}),
]);
return [s, w];
"#;

const PY_IN_FLIGHT: &str = r#"
import asyncio
s, w = await asyncio.gather(tools.slow({}), tools.write({}), return_exceptions=True)
if isinstance(s, ToolCallError):
    s = 'failed: ' + s.message
return [s, w]
"#;

#[cfg(feature = "typescript")]
mod typescript {
    use super::*;
    use tools_code::TypeScriptRuntime;

    fn make() -> Box<dyn Fn(Arc<MemoryStore>) -> Setup> {
        Box::new(|store| setup(TypeScriptRuntime::new(), store))
    }

    fn make_in_flight(
        store: Arc<MemoryStore>,
        slow: Slow,
        limits: tools_code::CodeLimits,
    ) -> InFlight {
        in_flight(TypeScriptRuntime::new(), store, slow, limits)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_in_flight_at_the_pause_is_waited_for_and_journaled() {
        in_flight_call_is_journaled(make_in_flight, TS_IN_FLIGHT).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_that_ignores_cancellation_past_the_bound_is_in_doubt_not_rerun() {
        in_flight_call_past_the_bound_is_in_doubt(
            make_in_flight,
            TS_IN_FLIGHT,
            Slow::IgnoresCancellation,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_cancelled_at_the_bound_is_in_doubt_not_rerun() {
        in_flight_call_past_the_bound_is_in_doubt(
            make_in_flight,
            TS_IN_FLIGHT,
            Slow::HonoursCancellation,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_paused_program_resumes_with_its_journal_and_runs_each_body_once() {
        pause_and_resume(make, TS_PROGRAM).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_denial_reaches_the_resumed_program_as_the_calls_failure() {
        denied_on_resume(make, TS_PROGRAM).await;
    }

    /// `execute_batch` pauses a program's run as `execute` does: the batch's `run_code` result
    /// is pending, and resuming it finishes the program.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_program_run_in_a_batch_pauses_and_resumes() {
        let store = Arc::new(MemoryStore::new());
        let first = make()(store.clone());
        let mut results = first
            .rt
            .execute_batch(vec![run_code(&first, TS_PROGRAM)], 4)
            .await;
        let paused = results.remove(0);
        let handle = handle_of(&paused);
        assert_eq!(handle.awaiting.as_ref().unwrap().call_id, "outer:code:2");
        let second = make()(store);
        let done = second.rt.resume(&handle, Approval::Approved).await.unwrap();
        assert_eq!(
            done.value().unwrap()["result"],
            json!(["read:a.txt", "write:b.txt", "read:c.txt"])
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_program_that_calls_differently_on_replay_diverges() {
        diverges(make, TS_CATALOG).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn random_numbers_and_the_clock_read_the_same_on_replay() {
        random_and_clock_replay(make, TS_RANDOM).await;
    }

    /// What the journal holds lives in the host, outside the engine: it counts against the
    /// run's memory limit. A program whose calls' answers pass it (each answer let go at once,
    /// so the engine never holds them together) runs on, and cannot pause.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_journal_past_the_memory_limit_is_dropped_and_the_run_cannot_pause() {
        let store = Arc::new(MemoryStore::new());
        let limits = tools_code::CodeLimits::default()
            .with_timeout(std::time::Duration::from_secs(20))
            .with_memory_bytes(32 * 1024 * 1024);
        // Code Mode held to 32 MiB, a tool answering 4 MiB, and a write that asks.
        let rt = ToolRuntime::builder()
            .mode(PresentationMode::Code)
            .extension(CodeMode::new(TypeScriptRuntime::new()).limits(limits))
            .durable_approvals(DurableApprovals::with_store(
                store.clone(),
                ApprovalKey::new([9u8; 32]).unwrap(),
            ))
            .build()
            .unwrap();
        let plugin = rt.scope();
        let big = ToolDefinition::builder("big")
            .input_schema(json!({"type": "object"}))
            .output(Output::json(json!({"type": "string"})))
            .execute(|_args, _ctx| async {
                Ok::<Value, tools_runtime::ToolError>(json!("x".repeat(4 * 1024 * 1024)))
            })
            .build()
            .unwrap();
        let _big = plugin.register(big).unwrap();
        let write = ToolDefinition::builder("write")
            .input_schema(json!({"type": "object"}))
            .output(Output::json(json!({"type": "string"})))
            .execute(|_args, _ctx| async { Ok::<Value, tools_runtime::ToolError>(json!("wrote")) })
            .build()
            .unwrap();
        let _write = plugin.register(write).unwrap();
        let _ask = plugin
            .on_pre_execute(|exec, d| {
                if exec.name() == "write" {
                    PreDecision::ask("writes need a person")
                } else {
                    d
                }
            })
            .unwrap();
        let _later = plugin
            .set_approval(|_exec, _reason| async { Approval::later() })
            .unwrap();
        let program = r#"
let total = 0;
for (let i = 0; i < 10; i++) total += (await tools.big({})).length;
await tools.write({});
return total;
"#;
        let result = rt
            .execute(ToolCall::new(
                "outer",
                "run_code",
                json!({"code": program, "description": "test"}),
            ))
            .await;
        assert_eq!(
            result.code(),
            Some(tools_code::CODE_RUN_FAILED),
            "{result:?}"
        );
        assert!(result.pending.is_none());
        assert!(
            result.text().contains("cannot pause") && result.text().contains("memory limit"),
            "{}",
            result.text()
        );
        let everything =
            tools_runtime::approvals::CallQuery::new(tools_runtime::approvals::CallFilter::All, 10);
        assert!(store.calls(&everything).await.unwrap().is_empty());
    }
}

#[cfg(feature = "python")]
mod python {
    use super::*;
    use tools_code::PythonRuntime;

    fn make() -> Box<dyn Fn(Arc<MemoryStore>) -> Setup> {
        Box::new(|store| setup(PythonRuntime::new(), store))
    }

    fn make_in_flight(
        store: Arc<MemoryStore>,
        slow: Slow,
        limits: tools_code::CodeLimits,
    ) -> InFlight {
        in_flight(PythonRuntime::new(), store, slow, limits)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_in_flight_at_the_pause_is_waited_for_and_journaled() {
        in_flight_call_is_journaled(make_in_flight, PY_IN_FLIGHT).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_that_ignores_cancellation_past_the_bound_is_in_doubt_not_rerun() {
        in_flight_call_past_the_bound_is_in_doubt(
            make_in_flight,
            PY_IN_FLIGHT,
            Slow::IgnoresCancellation,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_cancelled_at_the_bound_is_in_doubt_not_rerun() {
        in_flight_call_past_the_bound_is_in_doubt(
            make_in_flight,
            PY_IN_FLIGHT,
            Slow::HonoursCancellation,
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_paused_program_resumes_with_its_journal_and_runs_each_body_once() {
        pause_and_resume(make, PY_PROGRAM).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_denial_reaches_the_resumed_program_as_the_calls_failure() {
        denied_on_resume(make, PY_PROGRAM).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_program_that_calls_differently_on_replay_diverges() {
        diverges(make, PY_CATALOG).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn random_numbers_and_the_clock_read_the_same_on_replay() {
        random_and_clock_replay(make, PY_RANDOM).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn random_bytes_uuids_and_secrets_read_the_same_on_replay() {
        entropy_replay(make, PY_ENTROPY).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sets_iteration_order_is_the_same_on_replay_in_another_interpreter() {
        set_order_replay(make, PY_SET_ORDER, 16).await;
    }
}

/// Restarts, for real: a child process (this test binary again, running [`restart_child`])
/// pauses a program into a SQLite file and is killed with SIGKILL; this process then resumes
/// it from the file. Every body that ran before the pause ran once in all (counted in a file).
mod restart {
    use std::os::unix::process::ExitStatusExt;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::*;

    const CHILD_DIR: &str = "TOOLS_CODE_APPROVALS_CHILD_DIR";
    const CHILD_LANGUAGE: &str = "TOOLS_CODE_APPROVALS_CHILD_LANGUAGE";

    fn effects(dir: &Path) -> PathBuf {
        dir.join("effects.txt")
    }

    fn handle_file(dir: &Path) -> PathBuf {
        dir.join("handle.txt")
    }

    fn over_sqlite(dir: &Path, language: &str) -> Setup {
        let store = Arc::new(tools_approvals::SqliteStore::open(dir.join("approvals.db")).unwrap());
        match language {
            #[cfg(feature = "typescript")]
            "typescript" => setup_over(
                tools_code::TypeScriptRuntime::new(),
                store,
                Some(effects(dir)),
            ),
            #[cfg(feature = "python")]
            "python" => setup_over(tools_code::PythonRuntime::new(), store, Some(effects(dir))),
            other => panic!("no runtime for {other}"),
        }
    }

    fn program(language: &str) -> &'static str {
        if language == "python" {
            PY_RESTART
        } else {
            TS_PROGRAM
        }
    }

    /// [`PY_PROGRAM`]'s calls, with what differs between processes in their arguments: a
    /// `uuid4` (the system's random source) in the journaled read's path, and the iteration
    /// order of a set of strings (the interpreter's hash seed) in the write's, the call that
    /// waits.
    const PY_RESTART: &str = r#"
import uuid
key = str(uuid.uuid4())
order = ','.join({'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa'})
a = await tools.read({'path': 'a.txt ' + key})
b = await tools.write({'path': 'b.txt ' + order})
c = await tools.read({'path': 'c.txt'})
return [a, b, c]
"#;

    /// The child's side: run only by the tests below, in a process of its own.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "the child process of the restart tests, which run it"]
    async fn restart_child() {
        let (Some(dir), Ok(language)) =
            (std::env::var_os(CHILD_DIR), std::env::var(CHILD_LANGUAGE))
        else {
            return;
        };
        let dir = PathBuf::from(dir);
        let setup = over_sqlite(&dir, &language);
        let paused = setup.rt.execute(run_code(&setup, program(&language))).await;
        let handle = handle_of(&paused);
        let tmp = dir.join("handle.tmp");
        std::fs::write(&tmp, handle.to_string()).unwrap();
        std::fs::rename(&tmp, handle_file(&dir)).unwrap();
        loop {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    async fn paused_by_a_killed_process_then_resumed(language: &str) {
        let dir = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(dir.path().join("child.log")).unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "code_approvals::restart::restart_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir.path())
            .env(CHILD_LANGUAGE, language)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while !handle_file(dir.path()).exists() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "the child exited first ({status}):\n{}",
                    std::fs::read_to_string(dir.path().join("child.log")).unwrap_or_default()
                );
            }
            assert!(
                Instant::now() < deadline,
                "the child did not pause in 120 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
        // The read's path and the write's: `a.txt` and `b.txt`, and in Python a uuid and a
        // set's order after them (the killed process's).
        let before = lines(&effects(dir.path()));
        assert_eq!(before.len(), 1, "{before:?}");
        let read = before[0].strip_prefix("read ").unwrap().to_owned();
        assert!(read.starts_with("a.txt"), "{read}");

        // A new process's runtime over the same file.
        let setup = over_sqlite(dir.path(), language);
        let handle: PendingHandle = setup
            .rt
            .parse_handle(&std::fs::read_to_string(handle_file(dir.path())).unwrap())
            .unwrap();
        let awaiting: Value =
            serde_json::from_str(&handle.awaiting.clone().unwrap().arguments).unwrap();
        let write = awaiting["path"].as_str().unwrap().to_owned();
        assert!(write.starts_with("b.txt"), "{write}");
        if language == "python" {
            assert_eq!(read.len(), "a.txt ".len() + 36, "{read}");
            assert_eq!(write.split(',').count(), 10, "{write}");
        }
        let done = setup.rt.resume(&handle, Approval::Approved).await.unwrap();
        assert!(!done.is_error(), "{done:?}");
        assert_eq!(
            done.value().unwrap()["result"],
            json!([
                format!("read:{read}"),
                format!("write:{write}"),
                "read:c.txt"
            ])
        );
        assert_eq!(
            lines(&effects(dir.path())),
            [
                format!("read {read}"),
                format!("write {write}"),
                "read c.txt".to_owned()
            ],
            "every body ran once in all"
        );
        let again = setup
            .rt
            .resume(&handle, Approval::Approved)
            .await
            .unwrap_err();
        assert_eq!(again.code(), codes::APPROVAL_ALREADY_RESUMED);
        assert_eq!(lines(&effects(dir.path())).len(), 3);
    }

    #[cfg(feature = "typescript")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_typescript_program_paused_by_a_killed_process_resumes_from_the_file() {
        paused_by_a_killed_process_then_resumed("typescript").await;
    }

    #[cfg(feature = "python")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_python_program_paused_by_a_killed_process_resumes_from_the_file() {
        paused_by_a_killed_process_then_resumed("python").await;
    }
}
