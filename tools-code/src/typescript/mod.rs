//! The TypeScript runtime: QuickJS (through `rquickjs`) in-process, with types stripped first.
//!
//! # How a run goes
//!
//! 1. The program is wrapped as the body of an async arrow function on its own first line, and
//!    its types are stripped by `swc_ts_fast_strip` in strip-only mode, which keeps every line
//!    and column. The resulting JavaScript is parsed again: it must be that one function, with
//!    the program as its whole body. A program that closes the function early (a `}` it never
//!    opened, such as `return 1; }); more(); (async () => {`) is a
//!    [`CodeFailureKind::Syntax`] failure at that bracket; nothing of it runs. Syntax that would need code generation (`enum`, `namespace`, parameter
//!    properties) and every parse error is a [`CodeFailureKind::Syntax`] failure with the line
//!    and column in the model's own text. Programs longer than 1 MiB, or nested deeper than
//!    1,000 levels (brackets, operator chains, `else if` chains, type arguments), are refused
//!    before parsing, so no recursive parser can overflow the stack.
//! 2. A pooled worker thread gives the run a fresh QuickJS runtime and context that no other
//!    program ever touched (nothing survives into the next run): the worker builds the engine
//!    for its next run (runtime, context, `console`, `ToolCallError`, the bridge) while it has
//!    nothing to do, and frees the used one after the reply was sent, so neither cost is on
//!    the caller's path. The run sets the engine's limits, binds `tools` and `callTool`, and
//!    starts the program. Top-level `await` and `return` work. A host that asks for it
//!    ([`CodeHost::bind_on_first_use`]; the `run_code` bridge does for a program whose set of
//!    tools the analysis could not close) has each name bound the first time the program reads
//!    it, so a short program in a scope of thousands of tools does not bind thousands: `tools`
//!    is then a Proxy the program cannot tell from the frozen object (members, `in`,
//!    enumeration, `Object.isFrozen`, refusal as an argument, all alike), whose handler no
//!    program can reach. Enumerating it binds every name.
//! 3. `tools.name(args)` (or `tools["odd-name"](args)`, or `callTool("name", args)`) converts `args` to strict JSON (calling
//!    with no argument sends `{}`); `undefined`, `BigInt`, cycles, sparse arrays, `-0`, `NaN`,
//!    `Infinity`, functions, symbols, proxies, non-plain objects (class instances, `Date`,
//!    `Map`, ...) and strings with unpaired surrogates reject that one call with a `TypeError`
//!    naming the path, such as `args.items[2]` (each key in a path is cut to 200 characters).
//!    The conversion uses only built-ins captured before the program exists and reads only
//!    own properties: whatever the program patched (`toJSON` anywhere, getters or setters on
//!    `Object.prototype` or `Array.prototype`, a replaced `JSON`, `Array.isArray`,
//!    `Object.keys`, ...) is never consulted, at any depth, and a proxy is refused without
//!    running any of its traps. An own getter is called once and its value converted;
//!    properties keyed by symbols and non-enumerable ones are left out. The returned value
//!    goes through the same conversion. The call goes to [`CodeHost::call`] on the worker
//!    thread (inside the context of the tokio runtime that polls [`CodeRuntime::run`]) with a
//!    [`CallReply`](crate::CallReply): an answer the host gives inside the call settles the
//!    call's promise right there, without a thread hop or a trip through the event loop; a
//!    later answer wakes the event loop, which settles the promise. The host decides where a
//!    waiting call runs (the `run_code` bridge: a task of the run's own), so calls made
//!    together (`Promise.all`) overlap; the engine spawns no task. The trade-off: work the host
//!    does inside `call` runs on the worker thread, one call after another; a host with heavy
//!    synchronous work should move it off that path (a task, or `spawn_blocking`). A [`ToolCallFailure`](crate::ToolCallFailure) rejects the call with a
//!    `ToolCallError` (an `Error` subclass with `toolName` and `message`). A tool named `then` is reachable through `callTool` only, as the generated
//!    SDK declares it: a `then` member would make `tools` a thenable.
//! 4. `console.log`, `info`, `warn`, `error`, `debug` and `trace` each append one log line:
//!    strings as they are, other values as compact JSON (errors as `Name: message` and their
//!    stack).
//! 5. The run ends when the program's promise settles. The returned value goes through the
//!    same strict JSON conversion ([`CodeFailureKind::InvalidResult`] otherwise, also when a
//!    getter throws); `undefined` means no result. An uncaught error, or a promise rejection nobody handled, is a
//!    [`CodeFailureKind::Runtime`] failure with the message and the program's line. So is a
//!    program left waiting on a promise that nothing can settle (no call in flight, and there
//!    are no timers): it fails at once instead of at the deadline. The engine stops listening
//!    to the calls still in flight, and the run's future resolves after the host has settled
//!    them ([`CodeHost::settle`]).
//!
//! # Limits and isolation
//!
//! The context has the standard JavaScript library (without typed arrays and `performance`,
//! plus `atob`/`btoa`) and nothing else: no file system, network, environment, process,
//! `require`, `import` or timers. Memory is counted by a per-run
//! allocator; once a program passes the limit the run ends as [`CodeFailureKind::Memory`] even
//! if the program catches the error. The deadline stops busy loops (and catastrophic regular
//! expressions) through the engine's interrupt handler, and waiting calls through the event
//! loop's timer. Stack depth is bounded by the engine (deep recursion is a catchable
//! `RangeError`).
//!
//! Worker threads are long-lived (a run does not pay for a thread spawn) but every run gets a
//! new engine; an idle worker holds one engine built in advance (the built-ins and the
//! prelude's core half, nothing of any program), from 5 ms after its first run on (see "What
//! a run costs"). The pool grows on demand up to
//! [`TypeScriptRuntime::with_max_threads`] threads (default: twice the available parallelism,
//! at least 4); further runs wait for a free thread, and their deadline starts when they start. Dropping the last handle to the runtime
//! cancels the runs still going (they fail as [`CodeFailureKind::Aborted`]) and joins every
//! worker thread.
//!
//! # What a run makes the host hold
//!
//! The memory limit ([`CodeLimits::memory_bytes`](crate::CodeLimits::memory_bytes)) is
//! one account for the engine's heap and what the host holds for the run outside it, so a
//! program cannot make the host hold more than its own limit by handing data over instead of
//! keeping it:
//!
//! | what the host holds | counted | until |
//! | --- | --- | --- |
//! | a call the host is still working on | its arguments as the host's `serde_json` value (an estimate of its nodes, strings and entries) and 1 KiB for the call's task, reply and bookkeeping | the host answers |
//! | an answer the program has not taken yet (it arrives while the program runs without waiting) | its JSON text and the same 1 KiB | the event loop delivers it into the engine, where the heap counts it |
//! | log lines, the result, the failure message | `max_output_bytes` (apart) | the run ends |
//!
//! A call that does not fit the account never reaches the host, and an answer that arrives
//! when the account is full is dropped: either way the run ends as a `memory` failure whose
//! message says how much the host held. A program that takes its answers as they come (it
//! awaits them) holds each in its heap only while it uses it, so it can receive any volume in
//! total; one that starts calls without awaiting them while it keeps running (a busy loop
//! after them) is stopped once their answers no longer fit its limit, not at the deadline.
//!
//! # Sizes
//!
//! What a call's arguments or the result become is counted in UTF-8 bytes of JSON text as it is
//! written, each string measured in place before it is copied, so nothing is built past the
//! limit it is for and no limit is reached as a memory failure instead:
//!
//! - Arguments past [`CodeLimits::max_call_bytes`](crate::CodeLimits::max_call_bytes)
//!   reject that one call with a `RangeError` that says how many bytes at least, the limit, and
//!   the path where the text passed it (`args is at least 16777300 bytes of JSON text, more
//!   than the 16777216 bytes one call may send (max_call_bytes); it passes the limit at
//!   args.s`); the host never sees the call and the program can catch the error and go on.
//!   Arguments of exactly `max_call_bytes` bytes cross (whatever the characters: a `"`, a `\`
//!   or a newline take 2 bytes, other control characters 6, `é` 2, `€` 3, an emoji 4).
//! - A value nested deeper than 100 levels, or that contains itself, rejects its call with a
//!   `TypeError` naming the path (in the result, it is an [`CodeFailureKind::InvalidResult`]
//!   failure). An object met more than once (a graph that is not a tree) is
//!   written out in full each time, but read once: its text is reused, so the work a value costs
//!   follows its objects and references, not its text (ten arrays of ten that refer to each
//!   other nine levels deep, 10^10 elements of text, are refused at the cap at once).
//! - A result, a log line or an uncaught error's message past what is left of
//!   [`CodeLimits::max_output_bytes`](crate::CodeLimits::max_output_bytes) is the run's
//!   [`CodeFailureKind::OutputLimit`] failure, at every size: a text whose length alone passes
//!   the limit is refused before it is built (a log line that describes an object stops once
//!   its description is sure to be too long; nested values are shown down to 100 levels).
//!
//! A call of `max_call_bytes` makes these copies: the program's string, its JSON text in the
//! engine, the host's `serde_json` value parsed straight from the engine's bytes (ASCII text is
//! read in place), and for the reply the host's JSON text and the value parsed from it in the
//! engine. The engine's are counted by the memory limit, and so are the host's while the call
//! waits or its answer is not taken (above). Under the default limits (256 MiB of memory) a
//! 16 MiB argument crosses and its 16 MiB reply comes back.
//!
//! # What a run costs
//!
//! Instructions of a warm one-call run (`tools.echo({ n: 1 })`, answered at once), counted by
//! callgrind over all threads: what `cargo bench -p tools-code --bench code_runtime --
//! --callgrind` prints (`CODE_RUNTIME_PROFILE=one_call:N` on a one-thread pool, the difference
//! between 41 runs and 21 divided by 20), beside its floor (`floor/one_call:N`: bare `rquickjs`
//! of the same version making a runtime and a context with the same intrinsics, evaluating
//! the same program with a host function standing in for the tool, and dropping both).
//! Measured 2026-12-07 on the project's 2-core VM.
//!
//! | part of a run | ours | floor |
//! | --- | --- | --- |
//! | the runtime | kept from the run before (see below) | 0.10 M to make it |
//! | the context and its intrinsics (with `atob`/`btoa`) | 0.57 M | 0.57 M |
//! | reading the prelude's core half (`prelude.bc`, 5 KB of bytecode) | 0.15 M | none |
//! | running it (its closures, the built-ins it captures for the lazy half, five host functions) | about 0.20 M | none |
//! | the program: stripping its types (0.05 M), compiling it, its call and its result | 0.16 M | 0.07 M |
//! | tearing down (ours the context, collected; the floor's its context and runtime) | 0.27 M | 0.19 M |
//! | **whole run** | **1.37 M** | **0.94 M** (ours is 1.46x) |
//!
//! It was 2.31 M (2.46x; the same bench on commit `35e00b5`), with a runtime made and freed
//! per run and the whole prelude in every run (45 KB of JavaScript, 17 KB of bytecode: 0.51 M
//! to read and 0.52 M to run).
//!
//! **The runtime** is kept for the next engine when the run left nothing in it: its context
//! freed and collected, no object, string, shape or function of it left, no job pending, no
//! atom beyond QuickJS's own, and its heap within 256 KiB of a fresh runtime's (the atom and
//! shape tables keep the size they grew to: a program that made a hundred thousand property
//! names leaves them larger, and its runtime goes). Anything else, and the runtime is freed
//! with the engine. The next run still gets a fresh context, and the host functions of each
//! context are its own (their prototype its own `Function.prototype`: `rquickjs`'s
//! `Function::new` would take it from a cache kept per runtime, filled by the first context
//! that made one, so every later context's functions would inherit from that context's
//! objects and keep it alive). Keeping it saves about 0.19 M a run.
//!
//! **The prelude** is two halves. The core
//! (`prelude.js`) binds the tools, starts the program and settles calls; the host reads plain
//! arguments and results (objects and arrays of scalars, see `read_plain` in `engine.rs`) and
//! writes log lines of primitives itself. The lazy half (`prelude_lazy.js`: the strict JSON
//! conversion of anything else, the descriptions of logged objects and thrown errors, binding
//! on first use, unhandled rejections, the replayable clock) is read the first time a run
//! needs it: such a run costs 2.20 M (`one_call_logged`, which logs an object; 2.36 M
//! before), about 0.8 M more. It may be loaded in the middle of a program that has replaced any global or
//! prototype, so it uses only built-ins the core captured before the program existed, handed
//! over in an array (`B`, whose order a unit test checks), and property descriptors without a
//! prototype; the hostile tests that patch everything run through it.
//!
//! A process that makes one run and exits costs 2.46 M against the floor's 1.78 M, both with
//! the process's own start (0.8 M): 1.38x, where it was 5.31 M (2.97x). A worker that has
//! served its first run waits 5 ms for another before it builds the engine for it, so a
//! one-shot program does not pay 1.1 M for an engine nobody uses; a runtime kept in use has
//! that engine ready long before a model's next call, and one that runs back to back builds
//! it as the run comes (as it would have to anyway). A sub-call costs ours 21 to 22 K against
//! the floor's 9.4 K (2.3x; 21.5 K before): the floor's host function hands its argument back
//! without leaving the engine, where a real call reads the arguments into the host's value,
//! hands them to the host and its reply slot, and makes its answer in the engine (a small
//! answer directly, a larger one parsed from its JSON text).
//!
//! Where a sub-call's instructions go (callgrind, inclusive, `sequential_100:21` less
//! `one_call:21` over 2,079 calls, ours against the floor's; measured 2026-12-07, 22.0 K
//! against 9.4 K):
//!
//! | part of a sub-call | ours | floor |
//! | --- | --- | --- |
//! | the host function, entered and left (`hostCall` against the floor's stand-in) | 7.7 K | 0.5 K |
//! | of it: reading the arguments into a `serde_json` value (`PlainReader::read`) | 2.4 K | - |
//! | of it: making the answer in the engine (`to_engine`, the object and its array of one) | 1.4 K | - |
//! | of it: the reply slot, the host's call, entering its tokio runtime (`host_call`) | 1.2 K | - |
//! | the promise of the call (`Promise.resolve` of the answer; the floor's `await` makes one) | 4.7 K | 3.8 K |
//! | freeing what the call made | 3.6 K | 2.0 K |
//!
//! So the 1.5x target (14.1 K) is not within reach of this design: it would leave the host
//! crossing about 1 K, less than reading one small object into the `serde_json::Value` that
//! [`CodeHost::call`] takes, while the floor's host function hands its
//! argument back without reading it. Meeting it would take a host API over engine values, or
//! a floor whose stand-in reads its arguments as a tool's host must.
//!
//! What is left between ours and the floor (0.43 M), and why:
//! - the core half itself (0.35 M to read and run, and part of the teardown): sharing its
//!   bytecode between contexts cannot take it away, as QuickJS ties a function's bytecode to
//!   the context it was read in (`JSFunctionBytecode::realm`; a call runs in that realm), so
//!   bytecode read once would run every program in the first run's realm; and one context for
//!   many runs would let one program see what the one before it did;
//! - of it, the captures the core hands the lazy half (about 0.07 M, from a one-off trial that handed it none; no bench prints it):
//!   QuickJS makes each built-in method's function object on its first access in a context,
//!   and the lazy half must have the unpatched ones;
//! - of it, the names of the core's variables: QuickJS keeps them in stripped bytecode too, one
//!   atom each to make when it is read (a build-time renaming would need a JavaScript
//!   minifier);
//! - stripping the program's types (0.05 M) and the bridge's share of a call.
//!
//! Wall clock, `CODE_RUNTIME_PROFILE=ts_wall` (500 runs each, taking turns with the floor;
//! load average 1.8): back to back, median 0.136 ms against the floor's 0.097 (1.39x; min
//! 0.064, below the floor's 0.076, as the engine is built before the run arrives); after 20 ms
//! idle, 0.338 against 0.257 (1.32x).

mod engine;
pub(crate) mod strip;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use self::engine::{Engine, Event, Job, Reply};
use super::{
    CodeFailure, CodeFailureKind, CodeHost, CodeLanguage, CodeLimits, CodeRunFuture, CodeRuntime,
    MAX_STACK_BYTES, PreparedProgram,
};

/// Numbers worker threads across all pools, so their names are unique in the process.
static NEXT_WORKER: AtomicUsize = AtomicUsize::new(0);

/// Stack size of a worker thread: the largest engine stack plus room for the type stripper.
const WORKER_STACK_BYTES: usize = MAX_STACK_BYTES + 64 * 1024 * 1024;

/// The embedded TypeScript runtime. Cheap to clone; clones share one worker pool.
#[derive(Clone)]
pub struct TypeScriptRuntime {
    pool: Arc<Pool>,
}

impl fmt::Debug for TypeScriptRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.pool.shared.lock();
        f.debug_struct("TypeScriptRuntime")
            .field("threads", &state.threads)
            .field("idle", &state.idle)
            .field("max_threads", &self.pool.max_threads)
            .finish()
    }
}

impl Default for TypeScriptRuntime {
    fn default() -> Self {
        Self::new()
    }
}

impl TypeScriptRuntime {
    /// A runtime whose pool grows up to twice the available parallelism (at least 4 threads).
    pub fn new() -> Self {
        let parallelism = std::thread::available_parallelism().map_or(2, usize::from);
        Self::with_max_threads((parallelism * 2).max(4))
    }

    /// A runtime whose pool grows up to `max_threads` threads (at least 1).
    pub fn with_max_threads(max_threads: usize) -> Self {
        TypeScriptRuntime {
            pool: Arc::new(Pool {
                shared: Arc::new(Shared::default()),
                handles: Mutex::new(Vec::new()),
                max_threads: max_threads.max(1),
            }),
        }
    }

    /// The number of worker threads alive now (idle or busy).
    pub fn threads(&self) -> usize {
        self.pool.shared.lock().threads
    }

    /// The names of the worker threads this runtime started (`code-ts-N`, unique in the
    /// process), for diagnostics and leak checks.
    pub fn worker_names(&self) -> Vec<String> {
        self.pool.shared.lock().names.clone()
    }
}

impl CodeRuntime for TypeScriptRuntime {
    fn language(&self) -> CodeLanguage {
        CodeLanguage::TypeScript
    }

    fn run_prepared(
        &self,
        program: &str,
        prepared: Option<PreparedProgram>,
        host: Arc<dyn CodeHost>,
        limits: &CodeLimits,
        cancel: CancellationToken,
    ) -> CodeRunFuture {
        let program = program.to_owned();
        // Stripped already when the pre-run analysis read the program.
        let stripped = prepared.and_then(|p| p.into_work(CodeLanguage::TypeScript));
        let limits = limits.clone();
        let pool = self.pool.clone();
        Box::pin(async move {
            if let Err(error) = limits.validate() {
                return Err(CodeFailure::new(
                    CodeFailureKind::Internal,
                    error.to_string(),
                    Vec::new(),
                ));
            }
            let Ok(handle) = tokio::runtime::Handle::try_current() else {
                return Err(CodeFailure::new(
                    CodeFailureKind::Internal,
                    "TypeScriptRuntime::run must be polled inside a tokio runtime",
                    Vec::new(),
                ));
            };
            if cancel.is_cancelled() {
                return Err(CodeFailure::new(
                    CodeFailureKind::Aborted,
                    "the run was cancelled before it started",
                    Vec::new(),
                ));
            }
            let tool_names = (!host.bind_on_first_use()).then(|| host.tool_names());
            // Settled when the run ends: the host owns the calls' work.
            let settle = host.clone();
            let (events_tx, events_rx) = mpsc::channel();
            let abort = Arc::new(AtomicBool::new(false));
            let (reply_tx, mut reply_rx) = tokio::sync::oneshot::channel::<Reply>();
            let mut guard = AbortOnDrop {
                abort: abort.clone(),
                events_tx: events_tx.clone(),
                armed: true,
            };
            let job = Job {
                program,
                stripped,
                host,
                tool_names,
                limits,
                handle,
                abort,
                cancel: cancel.clone(),
                events_tx,
                events_rx,
                reply: reply_tx,
            };
            if let Err(message) = pool.submit(job) {
                guard.armed = false;
                return Err(CodeFailure::new(
                    CodeFailureKind::Internal,
                    message,
                    Vec::new(),
                ));
            }
            drop(pool);
            let reply = tokio::select! {
                reply = &mut reply_rx => reply,
                () = cancel.cancelled() => {
                    guard.fire();
                    reply_rx.await
                }
            };
            guard.armed = false;
            // The worker has stopped listening to the calls: the host stops and finishes them.
            settle.settle().await;
            match reply {
                Ok(Reply { outcome }) => outcome,
                Err(_) => Err(CodeFailure::new(
                    CodeFailureKind::Internal,
                    "the worker thread ended without reporting the run's outcome",
                    Vec::new(),
                )),
            }
        })
    }
}

/// Stops the run when the run's future is dropped or cancelled.
struct AbortOnDrop {
    abort: Arc<AtomicBool>,
    events_tx: mpsc::Sender<Event>,
    armed: bool,
}

impl AbortOnDrop {
    fn fire(&self) {
        self.abort.store(true, Ordering::Relaxed);
        let _ = self.events_tx.send(Event::Wake);
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.fire();
        }
    }
}

/// Queue and bookkeeping shared with the worker threads.
#[derive(Default)]
struct Shared {
    state: Mutex<PoolState>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Default)]
struct PoolState {
    queue: VecDeque<Job>,
    idle: usize,
    threads: usize,
    names: Vec<String>,
    /// How to stop the run each busy worker is on, by worker number.
    running: HashMap<usize, AbortOnDrop>,
    closed: bool,
}

/// Long-lived worker threads, each creating a fresh engine per run.
struct Pool {
    shared: Arc<Shared>,
    handles: Mutex<Vec<JoinHandle<()>>>,
    max_threads: usize,
}

impl Pool {
    fn submit(&self, job: Job) -> Result<(), String> {
        let mut state = self.shared.lock();
        if state.closed {
            return Err("the TypeScript runtime was shut down".to_owned());
        }
        state.queue.push_back(job);
        let spawn = state.queue.len() > state.idle && state.threads < self.max_threads;
        if spawn {
            state.threads += 1;
            let number = NEXT_WORKER.fetch_add(1, Ordering::Relaxed) + 1;
            let name = format!("code-ts-{number}");
            state.names.push(name.clone());
            drop(state);
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name(name)
                .stack_size(WORKER_STACK_BYTES)
                .spawn(move || worker(&shared, number));
            match spawned {
                Ok(handle) => {
                    let mut handles = self.handles.lock().unwrap_or_else(PoisonError::into_inner);
                    handles.retain(|h| !h.is_finished());
                    handles.push(handle);
                }
                Err(error) => {
                    let mut state = self.shared.lock();
                    state.threads -= 1;
                    if state.threads == 0 {
                        // No thread will ever pick the job up: give it back as a failure.
                        let jobs: Vec<Job> = state.queue.drain(..).collect();
                        drop(state);
                        for job in jobs {
                            let _ = job.reply.send(Reply {
                                outcome: Err(CodeFailure::new(
                                    CodeFailureKind::Internal,
                                    format!("cannot start a worker thread: {error}"),
                                    Vec::new(),
                                )),
                            });
                        }
                    }
                }
            }
        } else {
            drop(state);
        }
        self.shared.ready.notify_one();
        Ok(())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.closed = true;
            // Runs still going are cancelled: the runtime that owns them is going away.
            for stop in state.running.values() {
                stop.fire();
            }
        }
        self.shared.ready.notify_all();
        let handles =
            std::mem::take(&mut *self.handles.lock().unwrap_or_else(PoisonError::into_inner));
        let current = std::thread::current().id();
        for handle in handles {
            if handle.thread().id() != current {
                let _ = handle.join();
            }
        }
    }
}

/// How long a worker that has served its first run waits for another before it builds the
/// engine for it: a process that makes one run and drops the runtime does not pay for an
/// engine nobody uses, and a runtime kept in use has it ready long before a model's next call.
const SECOND_ENGINE_DELAY: Duration = Duration::from_millis(5);

fn worker(shared: &Shared, number: usize) {
    // The engine for the next run, built while no run waits for this thread.
    let mut spare: Option<Engine> = None;
    // The runtime the last run left empty, for the next engine.
    let mut shell: Option<engine::Shell> = None;
    let mut served: u64 = 0;
    loop {
        if spare.is_none() && served == 1 {
            // Counted as idle meanwhile: a run that comes wakes it (or an idle worker with an
            // engine ready) rather than starting another thread.
            let mut state = shared.lock();
            let until = Instant::now() + SECOND_ENGINE_DELAY;
            state.idle += 1;
            while state.queue.is_empty() && !state.closed {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                state = shared
                    .ready
                    .wait_timeout(state, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            state.idle -= 1;
        }
        if spare.is_none() && !shared.lock().closed {
            // A failure here is retried (and reported) when a run needs the engine.
            spare = Engine::new(shell.take()).ok();
        }
        let job = {
            let mut state = shared.lock();
            loop {
                if let Some(job) = state.queue.pop_front() {
                    let stop = AbortOnDrop {
                        abort: job.abort.clone(),
                        events_tx: job.events_tx.clone(),
                        armed: false,
                    };
                    state.running.insert(number, stop);
                    break Some(job);
                }
                if state.closed {
                    break None;
                }
                state.idle += 1;
                state = shared
                    .ready
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                state.idle -= 1;
            }
        };
        match job {
            Some(job) => {
                served += 1;
                let used = engine::run_job(job, &mut spare);
                shared.lock().running.remove(&number);
                // The reply is on its way: freeing the used engine is off the caller's path.
                if let Some(used) = used {
                    shell = used.tear_down();
                }
            }
            None => {
                shared.lock().threads -= 1;
                return;
            }
        }
    }
}
