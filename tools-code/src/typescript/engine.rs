//! One run of one program in a fresh QuickJS runtime and context, on the calling (worker) thread.
//!
//! An [`Engine`] (runtime, context, prelude evaluated) is built before its run is known, while
//! the worker is idle, and torn down after the run's reply was sent, so neither cost is on the
//! caller's path. No program ever runs in an engine another program used: each engine serves
//! exactly one run (a run refused by the type stripper never touched it and leaves it unused).
//!
//! The event loop is ours: QuickJS has no timers, so the only things that settle promises
//! asynchronously are tool calls. A call goes to the host on this thread (inside the caller's
//! tokio runtime context) with a [`CallReply`]: an answer the host gives inside the call is
//! handed straight back to the calling JavaScript; a later one arrives on the loop's channel,
//! sent from whichever thread answered. The engine spawns no task and polls no future. The
//! loop runs pending jobs, then waits for the next finished call (or a wake-up from
//! cancellation) until the wall-clock deadline, so a call that never settles still ends the
//! run on time. The interrupt handler stops running JavaScript at the same deadline, on
//! cancellation, and once the memory or output limit was hit, so a program that catches the
//! out-of-memory error still ends as a `memory` failure. The run's token is also checked before
//! each answer is delivered: an answer the cancellation brought about (a sub-call that stopped
//! because of it) must not reach the program before the run ends as cancelled.
//!
//! Rust never keeps a JavaScript value: the native functions capture only Rust state, and
//! everything that crosses is a string, a number, a plain value read in place into the host's
//! value ([`read_plain`], which runs no program code), or (for a call that failed at once) a
//! fresh object holding the message. The prelude's two halves are [`CORE`], evaluated in every
//! engine before its run is known, and [`LAZY`], read by `hostLazy` the first time a run needs
//! it.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ffi::CString;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rquickjs::allocator::{Allocator, RustAllocator};
use rquickjs::context::{EvalOptions, intrinsic};
use rquickjs::prelude::Opt;
use rquickjs::{Context, Ctx, Function, Object, Runtime, Value, qjs};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::strip::{PREFIX, StripError, strip_program};
use crate::output::Output;
use crate::{CallReply, CodeFailure, CodeFailureKind, CodeHost, CodeLimits, CodeOutcome};

const HOST: &str = "__codeModeHost";
const PROGRAM_FILE: &str = "program.ts";

/// A message to a running program's event loop.
#[derive(Debug)]
pub(crate) enum Event {
    /// A tool call finished: `Ok(json text)` or `Err(failure message)`; `held` is what the
    /// host's account counts for it until it is delivered.
    Done {
        id: u64,
        result: Result<String, String>,
        held: usize,
    },
    /// Look at the abort flag (the run was cancelled).
    Wake,
}

/// Everything a worker needs to run one program.
pub(crate) struct Job {
    pub(crate) program: String,
    /// The program with its types stripped, when the pre-run analysis did it.
    pub(crate) stripped: Option<String>,
    pub(crate) host: Arc<dyn CodeHost>,
    /// The names to bind before the program starts; `None` binds each at its first use
    /// ([`CodeHost::bind_on_first_use`]).
    pub(crate) tool_names: Option<Vec<String>>,
    pub(crate) limits: CodeLimits,
    pub(crate) handle: tokio::runtime::Handle,
    pub(crate) abort: Arc<AtomicBool>,
    /// The run's token: the async side sets `abort` when it fires, and the loop checks it
    /// itself before it delivers an answer (see [`Flags::cancelled`]).
    pub(crate) cancel: CancellationToken,
    pub(crate) events_tx: mpsc::Sender<Event>,
    pub(crate) events_rx: mpsc::Receiver<Event>,
    pub(crate) reply: tokio::sync::oneshot::Sender<Reply>,
}

/// What a worker sends back: the outcome (the async side then settles the host).
pub(crate) struct Reply {
    pub(crate) outcome: CodeOutcome,
}

/// Why JavaScript must stop, shared by the allocator, the interrupt handler and the loop.
///
/// The run's abort flag, deadline and memory limit are set when the run starts; an engine
/// waiting for its run has a flag nobody sets, a distant deadline and the default limit.
struct Flags {
    oom: Cell<bool>,
    output: Cell<bool>,
    timed_out: Cell<bool>,
    abort: RefCell<Arc<AtomicBool>>,
    /// The run's token (none while the engine waits for its run).
    cancel: RefCell<Option<CancellationToken>>,
    deadline: Cell<Instant>,
    memory_limit: Cell<usize>,
    /// Bytes the engine's heap uses now.
    used: Cell<usize>,
    /// Bytes the host holds for the run's tool calls (see [`CALL_BYTES`]), shared with the
    /// replies of the calls in flight, which add each answer as it arrives. A fresh count for
    /// each engine (the calls of an earlier run on the same runtime keep theirs).
    held: RefCell<Arc<AtomicUsize>>,
    /// What the host held when the memory limit was passed (for the failure's message).
    held_at_oom: Cell<usize>,
}

impl Flags {
    fn should_stop(&self) -> bool {
        if self.oom.get() || self.output.get() || self.abort.borrow().load(Ordering::Relaxed) {
            return true;
        }
        if !self.fits(0) {
            self.out_of_memory();
            return true;
        }
        if Instant::now() >= self.deadline.get() {
            self.timed_out.set(true);
            return true;
        }
        false
    }

    /// Whether the run's token fired; then the abort flag is set too. The async side sets it
    /// when it sees the token, but an answer the cancellation brought about (a sub-call that
    /// stopped because of it) can reach the loop first: checked before each delivery, it ends
    /// the run as cancelled rather than reaching the program.
    fn cancelled(&self) -> bool {
        let fired = self
            .cancel
            .borrow()
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled);
        if fired {
            self.abort.borrow().store(true, Ordering::Relaxed);
        }
        fired
    }

    /// Whether `extra` more bytes fit the memory limit beside the heap and what the host holds.
    fn fits(&self, extra: usize) -> bool {
        self.used
            .get()
            .checked_add(self.held.borrow().load(Ordering::Relaxed))
            .and_then(|total| total.checked_add(extra))
            .is_some_and(|total| total <= self.memory_limit.get())
    }

    /// Records that the memory limit was passed: the run ends as a `memory` failure.
    fn out_of_memory(&self) {
        if !self.oom.get() {
            self.held_at_oom
                .set(self.held.borrow().load(Ordering::Relaxed));
        }
        self.oom.set(true);
    }
}

/// What the host is counted to hold for each call it is still working on or whose answer waits
/// for the program, beside the call's arguments and answer: an estimate of the call's task, its
/// place in the map of calls in flight and in the channel, and the host's own bookkeeping.
const CALL_BYTES: usize = 1024;

/// How the program ended, as the prelude reported it.
enum Finish {
    Nothing,
    Json(String),
    /// A result the host read itself ([`read_plain`]), with an upper bound of its JSON text's
    /// size.
    Value(serde_json::Value, usize),
    Invalid(String),
    /// An uncaught error: the JSON of `{name, stack, toolName}` and the message.
    Thrown(String, String),
}

/// The longest description of a thrown value (its name and tool name cut, its position) the
/// host reads; the message comes apart and counts against the output limit.
const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

/// Rust-side state the native functions share. Holds no JavaScript value.
struct State {
    output: Output,
    finish: Option<Finish>,
    /// The first rejection nobody handled, reported when the program finished.
    unhandled: Option<(String, String)>,
    next_id: u64,
    /// Calls whose answer has not been delivered yet.
    waiting: usize,
    /// Calls answered on their first poll, waiting to be delivered.
    ready: VecDeque<Event>,
    /// The run's host, set while the engine serves its run.
    link: Option<Link>,
    /// The run's cap on one call's arguments (JSON text bytes).
    max_call_bytes: usize,
}

/// What connects an engine to its run's host.
struct Link {
    host: Arc<dyn CodeHost>,
    /// The run's tool names: the prelude names a tool by its index here.
    names: Bound,
    handle: tokio::runtime::Handle,
    events_tx: mpsc::Sender<Event>,
}

/// The names a run has bound, by the index the prelude calls them by.
enum Bound {
    /// All of them, bound before the program started.
    Listed(Rc<[String]>),
    /// Those the program has read so far, in that order (the host binds on first use).
    OnFirstUse(Vec<String>),
}

impl Bound {
    fn get(&self, index: i32) -> Option<&str> {
        let index = usize::try_from(index).ok()?;
        match self {
            Bound::Listed(names) => names.get(index),
            Bound::OnFirstUse(names) => names.get(index),
        }
        .map(String::as_str)
    }
}

/// The longest name a run that binds on first use asks its host about: a program may read
/// any string off `tools`, and a longer one is no tool (names a host lists up front have no
/// such cap).
const MAX_LOOKUP_NAME_BYTES: usize = 64 * 1024;

/// The allocator of one run: counts bytes against the memory limit (beside what the host holds
/// for the run) and records a refusal.
struct LimitedAllocator {
    flags: Rc<Flags>,
}

impl LimitedAllocator {
    fn admit(&mut self, extra: usize) -> bool {
        if self.flags.fits(extra) {
            true
        } else {
            self.flags.out_of_memory();
            false
        }
    }

    fn account(&mut self, ptr: *mut u8) -> *mut u8 {
        if ptr.is_null() {
            self.flags.out_of_memory();
        } else {
            // SAFETY: `ptr` was just returned by `RustAllocator`.
            let size = unsafe { RustAllocator::usable_size(ptr) };
            self.flags
                .used
                .set(self.flags.used.get().saturating_add(size));
        }
        ptr
    }

    fn release(&mut self, size: usize) {
        self.flags
            .used
            .set(self.flags.used.get().saturating_sub(size));
    }
}

// SAFETY: every block comes from `RustAllocator` and goes back to it; this wrapper only counts.
unsafe impl Allocator for LimitedAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admit(size) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.alloc(size);
        self.account(ptr)
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            self.flags.out_of_memory();
            return std::ptr::null_mut();
        };
        if !self.admit(total) {
            return std::ptr::null_mut();
        }
        let ptr = if total == 0 {
            RustAllocator.calloc(1, 1)
        } else {
            RustAllocator.calloc(1, total)
        };
        self.account(ptr)
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        if ptr.is_null() {
            return;
        }
        // SAFETY: the caller passes a block this allocator returned.
        unsafe {
            self.release(RustAllocator::usable_size(ptr));
            RustAllocator.dealloc(ptr);
        }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: the caller passes a block this allocator returned.
        let old = unsafe { RustAllocator::usable_size(ptr) };
        if new_size > old && !self.admit(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: as above; on failure the old block stays valid and counted.
        let new_ptr = unsafe { RustAllocator.realloc(ptr, new_size) };
        if new_ptr.is_null() {
            self.flags.out_of_memory();
            return new_ptr;
        }
        self.release(old);
        self.account(new_ptr)
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

/// How long an engine waiting for its run may spend in JavaScript: only the prelude runs there.
const IDLE_DEADLINE: Duration = Duration::from_secs(60);

/// A fresh QuickJS runtime and context with the prelude evaluated, for exactly one run.
pub(crate) struct Engine {
    // Field order is drop order: the context goes before its runtime.
    context: Context,
    shell: Shell,
    state: Rc<RefCell<State>>,
}

/// A runtime that served a run and holds nothing of it, for the next engine: the run ended
/// without passing its memory limit and without being stopped (a runtime that ran out of
/// memory, or was interrupted, is not trusted further), its context and every object, string,
/// shape and function that context made are freed, no job is pending, no atom beyond
/// QuickJS's own is left, and its heap is back within [`SHELL_SLACK`] of what a fresh runtime
/// holds (the atom and shape tables keep the size they grew to). Anything else, and the
/// runtime goes with the engine. Keeping it saves making and freeing a runtime per run
/// (about 0.2 M instructions), and leaves each run a fresh context all the same.
pub(crate) struct Shell {
    runtime: Runtime,
    flags: Rc<Flags>,
    /// The atoms of a fresh runtime (QuickJS's predefined ones).
    atoms: i64,
    /// What the heap of a fresh runtime holds.
    fresh_bytes: usize,
}

/// How much more than a fresh runtime's heap a kept runtime may hold (its grown tables).
const SHELL_SLACK: usize = 256 * 1024;

impl Shell {
    /// A fresh runtime with this crate's allocator, interrupt handler and rejection tracker.
    fn new() -> Result<Shell, String> {
        let defaults = CodeLimits::default();
        let flags = Rc::new(Flags {
            oom: Cell::new(false),
            output: Cell::new(false),
            timed_out: Cell::new(false),
            abort: RefCell::new(Arc::new(AtomicBool::new(false))),
            cancel: RefCell::new(None),
            deadline: Cell::new(Instant::now() + IDLE_DEADLINE),
            memory_limit: Cell::new(defaults.memory_bytes),
            used: Cell::new(0),
            held: RefCell::new(Arc::new(AtomicUsize::new(0))),
            held_at_oom: Cell::new(0),
        });
        let allocator = LimitedAllocator {
            flags: flags.clone(),
        };
        let runtime = Runtime::new_with_alloc(allocator)
            .map_err(|error| format!("cannot create a QuickJS runtime: {error}"))?;
        let interrupt_flags = flags.clone();
        runtime.set_interrupt_handler(Some(Box::new(move || interrupt_flags.should_stop())));
        runtime.set_host_promise_rejection_tracker(Some(Box::new(
            |ctx: Ctx<'_>, promise: Value<'_>, reason: Value<'_>, handled: bool| {
                let tracked = host_object(&ctx)
                    .and_then(|host| host.get::<_, Function<'_>>("track"))
                    .and_then(|track| track.call::<_, ()>((promise, reason, handled)));
                if tracked.is_err() {
                    // The exception (an interrupt) stays pending; the loop sees the flags.
                    let _ = ctx.catch();
                }
            },
        )));
        let atoms = runtime.memory_usage().atom_count;
        let fresh_bytes = flags.used.get();
        Ok(Shell {
            runtime,
            flags,
            atoms,
            fresh_bytes,
        })
    }

    /// Whether the runtime holds nothing of the run its context served (see [`Shell`]).
    fn is_empty(&self) -> bool {
        let flags = &self.flags;
        let stopped = flags.timed_out.get() || flags.abort.borrow().load(Ordering::Relaxed);
        if flags.oom.get() || stopped || self.runtime.is_job_pending() {
            return false;
        }
        let usage = self.runtime.memory_usage();
        usage.obj_count == 0
            && usage.shape_count == 0
            && usage.str_count == 0
            && usage.js_func_count == 0
            && usage.atom_count == self.atoms
            && self.flags.used.get() <= self.fresh_bytes.saturating_add(SHELL_SLACK)
    }

    /// The flags as a fresh runtime has them, but for the heap it uses.
    fn reset(&self) {
        let flags = &self.flags;
        let defaults = CodeLimits::default();
        flags.oom.set(false);
        flags.output.set(false);
        flags.timed_out.set(false);
        *flags.abort.borrow_mut() = Arc::new(AtomicBool::new(false));
        *flags.cancel.borrow_mut() = None;
        flags.deadline.set(Instant::now() + IDLE_DEADLINE);
        flags.memory_limit.set(defaults.memory_bytes);
        *flags.held.borrow_mut() = Arc::new(AtomicUsize::new(0));
        flags.held_at_oom.set(0);
    }
}

impl Engine {
    /// Builds an engine for a run not known yet (default memory limit, no host), on `shell`'s
    /// runtime when one is given (a runtime an earlier engine left empty), else on a new one.
    pub(crate) fn new(shell: Option<Shell>) -> Result<Engine, String> {
        let shell = match shell {
            Some(shell) => {
                shell.reset();
                shell
            }
            None => Shell::new()?,
        };
        let defaults = CodeLimits::default();
        let state = Rc::new(RefCell::new(State {
            output: Output::new(defaults.max_output_bytes),
            finish: None,
            unhandled: None,
            next_id: 0,
            waiting: 0,
            ready: VecDeque::new(),
            link: None,
            max_call_bytes: defaults.max_call_bytes,
        }));
        let context = new_context(&shell.runtime)
            .map_err(|error| format!("cannot create a QuickJS context: {error}"))?;
        context
            .with(|ctx| install(&ctx, &state, &shell.flags))
            .map_err(|failure| failure.message)?;
        Ok(Engine {
            context,
            shell,
            state,
        })
    }

    /// Ties the engine to its run: limits, abort flag and token, deadline, host.
    fn begin(
        &self,
        limits: &CodeLimits,
        (abort, cancel): (Arc<AtomicBool>, CancellationToken),
        deadline: Instant,
        link: Link,
    ) {
        *self.shell.flags.abort.borrow_mut() = abort;
        *self.shell.flags.cancel.borrow_mut() = Some(cancel);
        self.shell.flags.deadline.set(deadline);
        self.shell.flags.memory_limit.set(limits.memory_bytes);
        let stack_bytes = qjs::size_t::try_from(limits.stack_bytes).unwrap_or(qjs::size_t::MAX);
        self.context.with(|ctx| {
            // SAFETY: `ctx` is live and belongs to this thread. The stack limit is measured
            // from here (the run's frame), not from where the engine was built. It is set
            // directly: `Runtime::set_max_stack_size` turns limits above 16 MiB into "no
            // check", and a run may ask for up to `MAX_STACK_BYTES`. The worker thread's stack
            // is `MAX_STACK_BYTES` plus headroom, so `stack top - limit` stays inside it.
            unsafe {
                let rt = qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
                qjs::JS_UpdateStackTop(rt);
                qjs::JS_SetMaxStackSize(rt, stack_bytes);
            }
        });
        // Fewer collections for the small heaps most programs have (the default is 256 KiB);
        // the allocator still enforces the memory limit.
        self.shell
            .runtime
            .set_gc_threshold((limits.memory_bytes / 16).clamp(256 * 1024, 4 * 1024 * 1024));
        let mut state = self.state.borrow_mut();
        state.output = Output::new(limits.max_output_bytes);
        state.max_call_bytes = limits.max_call_bytes;
        state.link = Some(link);
    }

    /// Frees the engine's context and collects what it left; gives back the runtime when it
    /// holds nothing of the run (see [`Shell`]), else frees it too.
    pub(crate) fn tear_down(self) -> Option<Shell> {
        let Engine {
            context,
            shell,
            state,
        } = self;
        drop(context);
        shell.runtime.run_gc();
        drop(state);
        shell.is_empty().then_some(shell)
    }
}

/// Runs one job to its end and answers on its reply channel.
///
/// `spare` is an engine built in advance (or `None`, then one is built now). Returns the
/// engine the run used, for the caller to tear down after the reply is on its way (and never
/// to use again); an engine the run never touched (the program was refused before it reached
/// the engine) stays in `spare`.
#[must_use = "the used engine must be torn down"]
pub(crate) fn run_job(job: Job, spare: &mut Option<Engine>) -> Option<Engine> {
    let Job {
        program,
        stripped,
        host,
        tool_names,
        limits,
        handle,
        abort,
        cancel,
        events_tx,
        events_rx,
        reply,
    } = job;
    let deadline = Instant::now() + limits.timeout;
    // Stripped already when the pre-run analysis read the program (on the caller's thread).
    let js = match stripped.map_or_else(|| strip_program(&program), Ok) {
        Ok(js) => js,
        Err(StripError {
            message,
            line,
            column,
        }) => {
            let failure =
                CodeFailure::new(CodeFailureKind::Syntax, message, Vec::new()).at(line, column);
            let _ = reply.send(Reply {
                outcome: Err(failure),
            });
            return None;
        }
    };
    let listed: Option<Rc<[String]>> = tool_names.map(Into::into);
    let engine = match spare.take() {
        Some(engine) => engine,
        None => match Engine::new(None) {
            Ok(engine) => engine,
            Err(message) => {
                let _ = reply.send(Reply {
                    outcome: Err(internal(message)),
                });
                return None;
            }
        },
    };
    engine.begin(
        &limits,
        (abort, cancel),
        deadline,
        Link {
            host,
            names: match &listed {
                Some(names) => Bound::Listed(names.clone()),
                None => Bound::OnFirstUse(Vec::new()),
            },
            handle,
            events_tx,
        },
    );
    let outcome = drive(
        &engine,
        &js,
        &program,
        listed.as_deref(),
        &limits,
        &events_rx,
    );

    // Settlement: stop listening to the calls still in flight (their answers go to a channel
    // nobody reads); the async side settles the host.
    {
        let mut state = engine.state.borrow_mut();
        state.link = None;
        state.waiting = 0;
    }
    let _ = reply.send(Reply { outcome });
    Some(engine)
}

/// Where the loop stopped.
enum Stop {
    Finished,
    Interrupted,
    Stalled,
    Failed(CodeFailure),
}

/// The intrinsics a program gets: the standard library without typed arrays and
/// `performance` (creating those is about a third of a fresh context's cost, and tool
/// orchestration code has no use for them).
type Intrinsics = (
    intrinsic::Date,
    intrinsic::Eval,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::MapSet,
    intrinsic::Promise,
    intrinsic::WeakRef,
);

fn new_context(runtime: &Runtime) -> rquickjs::Result<Context> {
    let context = Context::custom::<Intrinsics>(runtime)?;
    context.with(|ctx| {
        // SAFETY: adds the `atob`/`btoa` globals to a live context we own.
        if unsafe { qjs::JS_AddIntrinsicAToB(ctx.as_raw().as_ptr()) } < 0 {
            return Err(rquickjs::Error::Allocation);
        }
        Ok(())
    })?;
    Ok(context)
}

fn drive(
    engine: &Engine,
    js: &str,
    program: &str,
    tool_names: Option<&[String]>,
    limits: &CodeLimits,
    events_rx: &mpsc::Receiver<Event>,
) -> CodeOutcome {
    let Engine {
        context,
        shell: Shell { runtime, flags, .. },
        state,
    } = engine;
    let determinism = state
        .borrow()
        .link
        .as_ref()
        .and_then(|link| link.host.determinism());
    let started = context.with(|ctx| start(&ctx, js, program, tool_names, limits, determinism));
    if let Err(failure) = started {
        if let Some(outcome) = finish_interrupted(flags, state, limits) {
            return outcome;
        }
        return Err(with_logs(state, failure));
    }

    let stop = event_loop(runtime, context, flags, state, events_rx);
    if let Some(outcome) = finish_interrupted(flags, state, limits) {
        return outcome;
    }
    match stop {
        Stop::Interrupted => Err(internal("the program was interrupted".into())),
        Stop::Failed(failure) => Err(with_logs(state, failure)),
        Stop::Stalled => {
            let mut output = take_output(state);
            Err(output.fail(
                CodeFailureKind::Runtime,
                "the program is waiting on a promise that nothing can settle (no tool call is \
                 in flight, and this runtime has no timers)"
                    .into(),
                None,
                None,
            ))
        }
        Stop::Finished => {
            // An uncaught error wins over a rejection nobody handled: only without one is
            // the first such rejection described.
            let thrown_already = matches!(state.borrow().finish, Some(Finish::Thrown(..)));
            context.with(|ctx| {
                if thrown_already {
                    return;
                }
                let reported = host_object(&ctx)
                    .and_then(|host| host.get::<_, Function<'_>>("reportUnhandled"))
                    .and_then(|report| report.call::<_, ()>(()));
                if reported.is_err() {
                    // An interrupt (a limit was hit): the flags below say which.
                    let _ = ctx.catch();
                }
            });
            if let Some(outcome) = finish_interrupted(flags, state, limits) {
                return outcome;
            }
            let (finish, unhandled) = {
                let mut state = state.borrow_mut();
                (state.finish.take(), state.unhandled.take())
            };
            let mut output = take_output(state);
            match (finish, unhandled) {
                (Some(Finish::Thrown(text, message)), _) => {
                    Err(thrown(output, &text, message, program, false))
                }
                (_, Some((text, message))) => Err(thrown(output, &text, message, program, true)),
                (Some(Finish::Nothing) | None, None) => output.complete(None),
                (Some(Finish::Invalid(message)), None) => Err(output.fail(
                    CodeFailureKind::InvalidResult,
                    format!("the program returned a value that is not JSON: {message}"),
                    None,
                    None,
                )),
                (Some(Finish::Value(value, size)), None) => output.complete(Some((value, size))),
                (Some(Finish::Json(text)), None) => {
                    match serde_json::from_str::<serde_json::Value>(&text) {
                        Ok(value) => output.complete(Some((value, text.len()))),
                        Err(error) => Err(output.fail(
                            CodeFailureKind::InvalidResult,
                            format!("the returned value could not be read as JSON: {error}"),
                            None,
                            None,
                        )),
                    }
                }
            }
        }
    }
}

/// Installs the core's host functions and evaluates the core half of the prelude (before the
/// run is known).
fn install<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RefCell<State>>,
    flags: &Rc<Flags>,
) -> Result<(), CodeFailure> {
    let call_state = state.clone();
    let call_flags = flags.clone();
    let host_call = host_function(
        ctx,
        move |ctx: Ctx<'js>,
              index: i32,
              args: Value<'js>,
              object_proto: Opt<Value<'js>>,
              array_proto: Opt<Value<'js>>|
              -> rquickjs::Result<Value<'js>> {
            let max = call_state.borrow().max_call_bytes;
            let answer = match (object_proto.0, array_proto.0) {
                // Plain arguments are read here, without their JSON text (see `read_plain`);
                // for any others this answers `undefined` and the prelude writes their text.
                (Some(object), Some(array)) => {
                    let protos = Protos {
                        object: &object,
                        array: &array,
                    };
                    match read_plain(&ctx, &args, &protos, max) {
                        Some((args, _)) => {
                            host_call(&call_state, &call_flags, index, Args::Value(args))
                        }
                        None => return Ok(Value::new_undefined(ctx)),
                    }
                }
                // Their JSON text, parsed straight from the engine's string (no copy in Rust).
                _ => match args.into_string() {
                    Some(text) => match with_bounded_text(text, max, |args| {
                        host_call(&call_state, &call_flags, index, Args::Text(args))
                    })? {
                        Ok(answer) => answer,
                        Err(len) => Answer::TooLarge(format!(
                            "args is {len} bytes of JSON text, more than the {max} bytes one \
                             call may send (max_call_bytes)"
                        )),
                    },
                    None => Answer::Failed("the arguments' text is not a string".to_owned()),
                },
            };
            answer.into_js(ctx)
        },
    )
    .map_err(|e| setup_error(ctx, e))?;
    // Log lines and the program's ending are measured before they are copied into Rust: what
    // cannot fit the output budget is refused uncopied, and the run ends as `output_limit`.
    // A console call's values are read here when they are simple (see `simple_line`); for
    // any others this answers false and the lazy half writes the line (`hostLine`).
    let log_state = state.clone();
    let log_flags = flags.clone();
    let host_log = host_function(ctx, move |values: Value<'js>| -> rquickjs::Result<bool> {
        let room = log_state.borrow().output.room();
        match simple_line(&values, room)? {
            SimpleLine::Line(line) => push_line(&log_state, &log_flags, Some(line)),
            SimpleLine::TooLong => push_line(&log_state, &log_flags, None),
            SimpleLine::NotSimple => return Ok(false),
        }
        Ok(true)
    })
    .map_err(|e| setup_error(ctx, e))?;
    let finish_state = state.clone();
    let finish_flags = flags.clone();
    let host_finish = host_function(
        ctx,
        move |kind: i32,
              text: rquickjs::String<'js>,
              message: rquickjs::String<'js>|
              -> rquickjs::Result<()> {
            let room = finish_state.borrow().output.room();
            // A result counts as its JSON text, an invalid result's or an error's message as
            // its text; the description beside a message is short (cut name, position).
            let finish = match kind {
                0 => Some(Finish::Nothing),
                1 => bounded_text(text, room)?.ok().map(Finish::Json),
                2 => bounded_text(text, room)?.ok().map(Finish::Invalid),
                3 | 5 => match (
                    bounded_text(text, MAX_DESCRIPTION_BYTES)?,
                    bounded_text(message, room)?,
                ) {
                    (Ok(text), Ok(message)) => Some(Finish::Thrown(text, message)),
                    _ => None,
                },
                // 4: the prelude found the text past the output limit before building it.
                _ => None,
            };
            let mut state = finish_state.borrow_mut();
            match finish {
                None => {
                    state.output.refuse();
                    finish_flags.output.set(true);
                }
                Some(Finish::Thrown(text, message)) if kind == 5 => {
                    if state.unhandled.is_none() {
                        state.unhandled = Some((text, message));
                    }
                }
                Some(finish) => {
                    if state.finish.is_none() {
                        state.finish = Some(finish);
                    }
                }
            }
            Ok(())
        },
    )
    .map_err(|e| setup_error(ctx, e))?;

    // A result the host reads itself (see `read_plain`): recorded as the value the lazy
    // half's conversion would write the JSON text of; for any other this answers false.
    let result_state = state.clone();
    let host_result = host_function(
        ctx,
        move |ctx: Ctx<'js>,
              value: Value<'js>,
              object: Value<'js>,
              array: Value<'js>|
              -> rquickjs::Result<bool> {
            let room = result_state.borrow().output.room();
            let protos = Protos {
                object: &object,
                array: &array,
            };
            let Some((value, size)) = read_plain(&ctx, &value, &protos, room) else {
                return Ok(false);
            };
            let mut state = result_state.borrow_mut();
            if state.finish.is_none() {
                state.finish = Some(Finish::Value(value, size));
            }
            Ok(true)
        },
    )
    .map_err(|e| setup_error(ctx, e))?;
    // The lazy half, read from its bytecode and called with the core's captures (`B`), the
    // run's state (`S`) and the host functions only it uses, made now.
    let lazy_state = state.clone();
    let lazy_flags = flags.clone();
    let host_lazy = host_function(
        ctx,
        move |ctx: Ctx<'js>,
              captures: Value<'js>,
              run: Value<'js>|
              -> rquickjs::Result<Value<'js>> {
            let half = LAZY.function(&ctx)?;
            let functions = lazy_functions(&ctx, &lazy_state, &lazy_flags)?;
            let mut args = rquickjs::function::Args::new(ctx.clone(), functions.len() + 2);
            args.push_arg(captures)?;
            args.push_arg(run)?;
            for function in functions {
                args.push_arg(function)?;
            }
            half.call_arg(args)
        },
    )
    .map_err(|e| setup_error(ctx, e))?;

    let prelude = CORE.function(ctx).map_err(|e| setup_error(ctx, e))?;
    let functions = [host_call, host_log, host_result, host_finish, host_lazy];
    let mut args = rquickjs::function::Args::new(ctx.clone(), functions.len());
    for function in functions {
        args.push_arg(function).map_err(|e| setup_error(ctx, e))?;
    }
    prelude
        .call_arg::<()>(args)
        .map_err(|e| setup_error(ctx, e))
}

/// The host functions only the lazy half uses, in the order it takes them: `isProxy`,
/// `jsonSize`, `utf8Size`, `hostBind`, `hostNames`, `hostLine`, `hostClock`.
fn lazy_functions<'js>(
    ctx: &Ctx<'js>,
    state: &Rc<RefCell<State>>,
    flags: &Rc<Flags>,
) -> rquickjs::Result<[Function<'js>; 7]> {
    // Asked without touching the value's traps: the conversions refuse proxies.
    let is_proxy = host_function(ctx, |value: Value<'js>| value.is_proxy())?;
    // The UTF-8 size of a string's JSON text, read in place: the conversions measure each
    // string before they copy it.
    let json_size = host_function(
        ctx,
        |text: rquickjs::String<'js>| -> rquickjs::Result<f64> {
            with_bounded_text(text, usize::MAX, json_text_size).map(|size| size.unwrap_or(-1.0))
        },
    )?;

    // A string's size in UTF-8 bytes, read in place: a message that cuts a long string says
    // how much it left out without the prelude walking the rest.
    let utf8_size = host_function(
        ctx,
        |text: rquickjs::String<'js>| -> rquickjs::Result<f64> {
            // A size the engine could hold is far below 2^53.
            #[allow(clippy::cast_precision_loss)]
            with_bounded_text(text, usize::MAX, |bytes| bytes.len() as f64)
                .map(|size| size.unwrap_or(0.0))
        },
    )?;

    // A clock reading of a run whose host replays runs (see `CodeHost::determinism`).
    let clock_state = state.clone();
    let host_clock = host_function(ctx, move |ms: f64| {
        let host = clock_state
            .borrow()
            .link
            .as_ref()
            .map(|link| link.host.clone());
        if let Some(host) = host {
            host.clock_read(ms);
        }
    })?;

    // A name the program read off `tools` for the first time, in a run that binds on first
    // use: read in place, and longer names are no tool.
    let bind_state = state.clone();
    let host_bind = host_function(
        ctx,
        move |name: rquickjs::String<'js>| -> rquickjs::Result<i32> {
            let index = with_bounded_text(name, MAX_LOOKUP_NAME_BYTES, |name| {
                bind_name(&bind_state, name)
            })?;
            Ok(index.unwrap_or(-1))
        },
    )?;
    // Every name the host binds, for a program that enumerates `tools`.
    let names_state = state.clone();
    let host_names = host_function(ctx, move || -> Vec<String> {
        let host = match &names_state.borrow().link {
            Some(Link {
                host,
                names: Bound::OnFirstUse(_),
                ..
            }) => host.clone(),
            _ => return Vec::new(),
        };
        host.tool_names()
    })?;
    // A log line the lazy half wrote; `null` for one it refused as longer than the output may
    // be.
    let line_state = state.clone();
    let line_flags = flags.clone();
    let host_line = host_function(ctx, move |line: Value<'js>| -> rquickjs::Result<()> {
        let room = line_state.borrow().output.room();
        let line = match line.into_string() {
            Some(line) => bounded_text(line, room)?.ok(),
            None => None,
        };
        push_line(&line_state, &line_flags, line);
        Ok(())
    })?;
    Ok([
        is_proxy, json_size, utf8_size, host_bind, host_names, host_line, host_clock,
    ])
}

/// Appends a log line, or (`None`, or a line the output has no room for) refuses it: the run
/// ends as `output_limit`.
fn push_line(state: &Rc<RefCell<State>>, flags: &Flags, line: Option<String>) {
    let fits = match line {
        Some(line) => state.borrow_mut().output.push(line),
        None => false,
    };
    if !fits {
        state.borrow_mut().output.refuse();
        flags.output.set(true);
    }
}

/// A host function: `f` as a JavaScript function of this context, its prototype this
/// context's `Function.prototype`. (`rquickjs`'s `Function::new` takes the prototype of its
/// host-function class from a cache kept per runtime, filled by the first context that made
/// one: the functions of every later context would inherit from that context's objects, and
/// keep it alive. Here each context's functions are its own, so a runtime holds nothing of a
/// context once it is freed; see [`Shell`].)
fn host_function<'js, P, F>(ctx: &Ctx<'js>, f: F) -> rquickjs::Result<Function<'js>>
where
    F: rquickjs::function::IntoJsFunc<'js, P> + 'js,
{
    let call = rquickjs::function::RustFunction(Box::new(
        move |params: rquickjs::function::Params<'_, 'js>| {
            params.check_params(F::param_requirements())?;
            f.call(params)
        },
    ));
    let class = rquickjs::Class::instance_proto(call, Function::prototype(ctx.clone()))?;
    class
        .into_inner()
        .into_value()
        .into_function()
        .ok_or(rquickjs::Error::Allocation)
}

/// Binds `name` (UTF-8, or WTF-8 for a string with an unpaired surrogate, which no host name
/// has) in a run that binds on first use: the index the prelude calls it by, or -1 when the
/// host has no such tool.
fn bind_name(state: &Rc<RefCell<State>>, name: &[u8]) -> i32 {
    let Ok(name) = std::str::from_utf8(name) else {
        return -1;
    };
    let host = match &state.borrow().link {
        Some(Link {
            host,
            names: Bound::OnFirstUse(_),
            ..
        }) => host.clone(),
        _ => return -1,
    };
    // Asked without the state borrowed: the host may take its time.
    if !host.binds(name) {
        return -1;
    }
    let mut state = state.borrow_mut();
    let Some(Link {
        names: Bound::OnFirstUse(names),
        ..
    }) = &mut state.link
    else {
        return -1;
    };
    let Ok(index) = i32::try_from(names.len()) else {
        return -1;
    };
    names.push(name.to_owned());
    index
}

/// Hands the UTF-8 text of a JavaScript string to `read`, or gives `Err(its length)` when it
/// is longer than `max` bytes: the length is known before anything is copied into Rust, and
/// QuickJS hands out ASCII text in place (other text is converted in the engine's heap, where
/// the memory limit counts it). An unpaired surrogate (which the prelude never sends to the
/// host) is in the bytes as WTF-8.
fn with_bounded_text<R>(
    text: rquickjs::String<'_>,
    max: usize,
    read: impl FnOnce(&[u8]) -> R,
) -> rquickjs::Result<Result<R, usize>> {
    let text = text.to_cstring()?;
    let len = text.len();
    if len > max {
        return Ok(Err(len));
    }
    // SAFETY: `as_ptr` points at the `len` bytes QuickJS wrote for this string; `text` owns
    // them until it drops at the end of this function.
    let bytes = unsafe { std::slice::from_raw_parts(text.as_ptr().cast::<u8>(), len) };
    Ok(Ok(read(bytes)))
}

/// The UTF-8 text of a JavaScript string, or `Err(its length)` when it is longer than `max`
/// bytes (see [`with_bounded_text`]). Unpaired surrogates become U+FFFD.
fn bounded_text(text: rquickjs::String<'_>, max: usize) -> rquickjs::Result<Result<String, usize>> {
    with_bounded_text(text, max, |bytes| {
        String::from_utf8_lossy(bytes).into_owned()
    })
}

/// The size in UTF-8 bytes of the JSON text `JSON.stringify` writes for a string whose UTF-8
/// (WTF-8) text is `bytes`: its quotes, and each escaped character's escape (`\"`, `\\` and
/// the short control escapes take 2 bytes, other control characters 6). -1 when the string
/// has an unpaired surrogate (WTF-8 writes one as `ED A0..BF ..`, which UTF-8 never has).
fn json_text_size(bytes: &[u8]) -> f64 {
    let mut size: usize = 2;
    for (i, &byte) in bytes.iter().enumerate() {
        size += match byte {
            b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
            0x00..=0x1f => 6,
            0xed if bytes.get(i + 1).is_some_and(|next| *next >= 0xa0) => return -1.0,
            _ => 1,
        };
    }
    // A size the engine could hold is far below 2^53.
    #[allow(clippy::cast_precision_loss)]
    let size = size as f64;
    size
}

/// Evaluates the program and starts it with the run's tools bound (or to be bound at their
/// first use, without a list).
fn start(
    ctx: &Ctx<'_>,
    js: &str,
    program: &str,
    tool_names: Option<&[String]>,
    limits: &CodeLimits,
    determinism: Option<crate::Determinism>,
) -> Result<(), CodeFailure> {
    let main: Value<'_> = match ctx.eval_with_options(js, options(PROGRAM_FILE)) {
        Ok(main) => main,
        Err(rquickjs::Error::Exception) => {
            let exception = ctx.catch();
            let text = describe_exception(ctx, exception);
            let output = Output::new(usize::MAX);
            let mut failure = thrown(output, &text, String::new(), program, false);
            if failure.message.starts_with("SyntaxError") {
                failure.kind = CodeFailureKind::Syntax;
            }
            return Err(failure);
        }
        Err(error) => return Err(setup_error(ctx, error)),
    };
    let run: Function<'_> = host_object(ctx)
        .and_then(|host| host.get("run"))
        .map_err(|e| setup_error(ctx, e))?;
    // Numbers the prelude compares sizes with; above 2^53 the precision lost is irrelevant.
    #[allow(clippy::cast_precision_loss)]
    let (max_call_bytes, max_output_bytes) =
        (limits.max_call_bytes as f64, limits.max_output_bytes as f64);
    // No list (undefined) binds each name at its first use.
    let tool_names = tool_names.map(<[String]>::to_vec);
    // A replayable run: the seed's two halves (numbers the engine holds exactly) and the clock
    // readings to give back first.
    let (seed_high, seed_low, clock) = match determinism {
        Some(d) => (
            Some(f64::from((d.seed >> 32) as u32)),
            Some(f64::from(d.seed as u32)),
            Some(d.clock),
        ),
        None => (None, None, None),
    };
    run.call::<_, ()>((
        main,
        tool_names,
        max_call_bytes,
        max_output_bytes,
        seed_high,
        seed_low,
        clock,
    ))
    .map_err(|e| setup_error(ctx, e))?;
    Ok(())
}

/// One half of the prelude: its source, the file its functions are compiled as, and its
/// bytecode compiled ahead of time.
///
/// The bytecode file (`prelude.bc`, `prelude_lazy.bc`) is the source as [`Prelude::compile`]
/// writes it, committed beside it, so no run of a process compiles a prelude (compiling the
/// prelude was four fifths of a process's first run). A unit test compiles each half again and
/// fails when its file differs (`TOOLS_CODE_UPDATE=1 cargo test -p tools-code --lib
/// prelude_bytecode` rewrites both), so the files never drift from the sources or from the
/// QuickJS that reads them.
struct Prelude {
    source: &'static str,
    file: &'static str,
    bytecode: &'static [u8],
    /// The half compiled in this process, when this QuickJS could not read `bytecode` (only
    /// a build whose QuickJS differs from the one the file was written by; the unit test
    /// keeps the project's own builds from ever getting here).
    compiled: OnceLock<Vec<u8>>,
}

/// The half every run evaluates before its program exists.
static CORE: Prelude = Prelude {
    source: include_str!("prelude.js"),
    file: "code-mode-prelude.js",
    bytecode: include_bytes!("prelude.bc"),
    compiled: OnceLock::new(),
};

/// The half a run loads the first time it needs it (`hostLazy`).
static LAZY: Prelude = Prelude {
    source: include_str!("prelude_lazy.js"),
    file: "code-mode-prelude-lazy.js",
    bytecode: include_bytes!("prelude_lazy.bc"),
    compiled: OnceLock::new(),
};

impl Prelude {
    /// The half's function, from the committed bytecode (or, where this QuickJS cannot read
    /// it, from bytecode compiled once in this process).
    fn function<'js>(&self, ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
        if let Some(bytes) = self.compiled.get() {
            return Self::read(ctx, bytes);
        }
        match Self::read(ctx, self.bytecode) {
            Ok(function) => Ok(function),
            Err(rquickjs::Error::Exception) => {
                // Another QuickJS's bytecode: clear its exception and compile the source.
                let _ = ctx.catch();
                let compiled = self.compile(ctx)?;
                Self::read(ctx, self.compiled.get_or_init(|| compiled))
            }
            Err(error) => Err(error),
        }
    }

    /// Reads prelude bytecode into `ctx` and evaluates it to the half's function.
    fn read<'js>(ctx: &Ctx<'js>, bytes: &[u8]) -> rquickjs::Result<Function<'js>> {
        let raw = ctx.as_raw().as_ptr();
        // SAFETY: `bytes` is bytecode this project's QuickJS wrote (a committed `.bc` file,
        // checked against a fresh compile by a test, or compiled in this process);
        // JS_ReadObject validates its version and framing and reports errors as exceptions.
        // JS_EvalFunction takes ownership of `object`, and `Value::from_raw` takes ownership
        // of the returned value.
        unsafe {
            let object = qjs::JS_ReadObject(
                raw,
                bytes.as_ptr(),
                bytes.len() as qjs::size_t,
                qjs::JS_READ_OBJ_BYTECODE as i32,
            );
            if qjs::JS_IsException(object) {
                return Err(rquickjs::Error::Exception);
            }
            let value = qjs::JS_EvalFunction(raw, object);
            if qjs::JS_IsException(value) {
                return Err(rquickjs::Error::Exception);
            }
            Value::from_raw(ctx.clone(), value)
                .into_function()
                .ok_or(rquickjs::Error::FromJs {
                    from: "value",
                    to: "function",
                    message: Some("the prelude did not evaluate to a function".into()),
                })
        }
    }

    /// Compiles the half without running it and serializes the bytecode.
    fn compile(&self, ctx: &Ctx<'_>) -> rquickjs::Result<Vec<u8>> {
        let raw = ctx.as_raw().as_ptr();
        let source = CString::new(self.source)?;
        let file = CString::new(self.file)?;
        // SAFETY: `source` and `file` are NUL-terminated and outlive the calls; every JSValue
        // is freed exactly once and the written buffer is released with js_free.
        unsafe {
            let compiled = qjs::JS_Eval(
                raw,
                source.as_ptr(),
                self.source.len() as qjs::size_t,
                file.as_ptr(),
                (qjs::JS_EVAL_TYPE_GLOBAL
                    | qjs::JS_EVAL_FLAG_STRICT
                    | qjs::JS_EVAL_FLAG_COMPILE_ONLY) as i32,
            );
            if qjs::JS_IsException(compiled) {
                return Err(rquickjs::Error::Exception);
            }
            let mut size: qjs::size_t = 0;
            let buffer = qjs::JS_WriteObject(
                raw,
                &raw mut size,
                compiled,
                // No source and no debug information (names, line tables): loading is
                // faster, and positions are only ever mapped for the program's own frames.
                (qjs::JS_WRITE_OBJ_BYTECODE
                    | qjs::JS_WRITE_OBJ_STRIP_SOURCE
                    | qjs::JS_WRITE_OBJ_STRIP_DEBUG) as i32,
            );
            qjs::JS_FreeValue(raw, compiled);
            if buffer.is_null() {
                return Err(rquickjs::Error::Exception);
            }
            let bytes = std::slice::from_raw_parts(buffer, size as usize).to_vec();
            qjs::js_free(raw, buffer.cast());
            Ok(bytes)
        }
    }
}

fn options(file: &str) -> EvalOptions {
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = true;
    options.filename = Some(file.to_owned());
    options
}

fn host_object<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    ctx.globals().get(HOST)
}

/// What `hostCall` gives the prelude back.
enum Answer {
    /// The call answered successfully at once: its result as JSON text. The prelude resolves
    /// the call's promise with it right away, without a trip through the event loop.
    Now(String),
    /// The same for a result that is a number: handed over as a number (the value the prelude
    /// would parse from its JSON text), without the text.
    Number(f64),
    /// The same for a result small and shallow enough to be made in the engine directly (see
    /// [`plain_size`]): handed over as the value the prelude would parse from its JSON text,
    /// in an array of one (so that it cannot be taken for any other answer).
    Value(serde_json::Value),
    /// The call failed at once, with this message: the prelude rejects the call's promise
    /// right away (so an unhandled one is seen like any other).
    Failed(String),
    /// The arguments are larger than `max_call_bytes`: the prelude rejects the call with a
    /// `RangeError` carrying this message, and the host never sees it.
    TooLarge(String),
    /// The answer (or a failure) comes later through `settle`, under the call's id: the
    /// prelude counts these calls as the host does (1, 2, 3, ...), so the id is not handed over.
    Later,
    /// The host has no room for the call in the run's memory limit: the run ends.
    OutOfMemory,
}

/// Starts one tool call.
///
/// The call goes to the host right here (inside the caller's tokio runtime context) with a
/// [`CallReply`]: a call the host answers inside [`CodeHost::call`] is answered directly,
/// without any thread hop. The answer of a call that has to wait comes later through the
/// reply, from wherever the host runs it, onto the event loop's channel; the host runs such
/// calls (the engine spawns nothing), so calls that wait overlap. Only calls answered later get
/// an id, so ids stay dense.
///
/// What the host holds for the run counts against its memory limit with the engine's heap: a
/// call that waits is counted [`CALL_BYTES`] and its arguments (as parsed) until it is
/// answered, then [`CALL_BYTES`] and its answer (as JSON text) until the answer is delivered
/// into the engine. A call the account has no room for never reaches the host: the run ends as
/// a `memory` failure. An answer that arrives while the account is over the limit is dropped
/// (the run is ending) and wakes the run, whose next check of its limits ends it.
fn host_call(state: &Rc<RefCell<State>>, flags: &Flags, index: i32, args: Args<'_>) -> Answer {
    let mut guard = state.borrow_mut();
    let state = &mut *guard;
    let Some(link) = &state.link else {
        state.next_id += 1;
        state.waiting += 1;
        let id = state.next_id;
        state.ready.push_back(Event::Done {
            id,
            result: Err("no run is in progress".to_owned()),
            held: 0,
        });
        return Answer::Later;
    };
    // The prelude binds only the run's names, by index.
    let Some(name) = link.names.get(index) else {
        return Answer::Failed(format!("no tool has the index {index} in this run"));
    };
    let args = match args {
        Args::Value(args) => args,
        Args::Text(text) => match serde_json::from_slice::<serde_json::Value>(text) {
            Ok(args) => args,
            Err(error) => {
                return Answer::Failed(format!("the arguments could not be read as JSON: {error}"));
            }
        },
    };
    let args_bytes = crate::held_size(&args);
    if !flags.fits(CALL_BYTES.saturating_add(args_bytes)) {
        tools_schema::deep::discard(args);
        flags.out_of_memory();
        return Answer::OutOfMemory;
    }
    let (reply, answer) = CallReply::pair();
    {
        let _entered = link.handle.enter();
        link.host.call(name, args, reply);
    }
    if let Some(result) = answer.try_take() {
        if let Ok(serde_json::Value::Number(number)) = &result
            && let Some(number) = number.as_f64()
        {
            return Answer::Number(number);
        }
        let result = match result {
            Ok(value) if plain_size(&value) => return Answer::Value(value),
            result => result,
        };
        return match encode(result) {
            Ok(text) => Answer::Now(text),
            Err(message) => Answer::Failed(message),
        };
    }
    state.next_id += 1;
    state.waiting += 1;
    let id = state.next_id;
    let events_tx = link.events_tx.clone();
    let held = flags.held.borrow().clone();
    let limit = flags.memory_limit.get();
    held.fetch_add(CALL_BYTES + args_bytes, Ordering::Relaxed);
    // Runs where the host answers (or here, if it answered in the meantime).
    answer.on_answer(move |result| {
        let result = encode(result);
        // The arguments went with the call; the answer waits for the program.
        let answer = match &result {
            Ok(text) | Err(text) => text.len(),
        };
        held.fetch_sub(args_bytes, Ordering::Relaxed);
        let now = held.fetch_add(answer, Ordering::Relaxed) + answer;
        if now > limit {
            // Over the run's memory limit: the run ends, the answer is not kept.
            drop(result);
            let _ = events_tx.send(Event::Wake);
            return;
        }
        let held = CALL_BYTES + answer;
        let _ = events_tx.send(Event::Done { id, result, held });
    });
    Answer::Later
}

/// A call's arguments as the prelude hands them over.
enum Args<'a> {
    /// Their JSON text, read in place from the engine's string.
    Text(&'a [u8]),
    /// Read from the value itself ([`read_plain`]).
    Value(serde_json::Value),
}

impl Answer {
    /// What `hostCall` gives the prelude back.
    fn into_js(self, ctx: Ctx<'_>) -> rquickjs::Result<Value<'_>> {
        match self {
            Answer::Now(text) => {
                rquickjs::String::from_str(ctx, &text).map(rquickjs::String::into_value)
            }
            Answer::Failed(message) => {
                let failure = Object::new(ctx)?;
                failure.set("failure", message)?;
                Ok(failure.into_value())
            }
            Answer::TooLarge(message) => {
                let failure = Object::new(ctx)?;
                failure.set("tooLarge", message)?;
                Ok(failure.into_value())
            }
            Answer::Number(number) => Ok(Value::new_number(ctx, number)),
            Answer::Value(value) => {
                let made = to_engine(&ctx, &value);
                tools_schema::deep::discard(value);
                let answer = rquickjs::Array::new(ctx)?;
                define(&answer, 0_u32, made?)?;
                Ok(answer.into_value())
            }
            Answer::Later => Ok(Value::new_bool(ctx, true)),
            // As the engine does when an allocation fails; the run's next check of its limits
            // ends it.
            Answer::OutOfMemory => Err(rquickjs::Exception::throw_internal(&ctx, "out of memory")),
        }
    }
}

/// The most values (containers and scalars together) [`read_plain`] reads, and the deepest it
/// goes: a larger or deeper value goes through the prelude's lazy half.
const PLAIN_VALUES: usize = 4096;
const PLAIN_DEPTH: usize = 32;

/// The prototypes a plain value's objects and arrays may have: the context's own
/// `Object.prototype` and `Array.prototype`, which the prelude captured before the program
/// existed and passes in.
struct Protos<'a, 'js> {
    object: &'a Value<'js>,
    array: &'a Value<'js>,
}

/// A value read straight from the engine as the host's value, with an upper bound of the size
/// of its JSON text (exact but for numbers, counted as the longest a number's text can be),
/// when it is plain: `null`, a boolean, a finite number other than -0 (an integer only below
/// 2^53 in magnitude), a string without an unpaired surrogate, an array (its prototype
/// `Array.prototype`, not a proxy) whose elements are all own data properties, or an object
/// (its prototype `Object.prototype` or null, not a proxy or a function) whose own enumerable
/// string-keyed properties are data properties, each holding a plain value; at most
/// [`PLAIN_VALUES`] values, [`PLAIN_DEPTH`] levels deep, and the size within `max` bytes.
///
/// That is exactly the value the prelude's conversion would write as JSON text and the host
/// parse back (properties in the order `Object.keys` gives, elements in order, the same
/// strings). `None` for anything else, which the prelude converts (or refuses, naming the
/// path): nothing the program wrote runs here (an accessor property means `None`, so no getter
/// is called; a proxy is refused before any trap; a hole in an array is never looked up on the
/// prototype).
fn read_plain<'js>(
    ctx: &Ctx<'js>,
    value: &Value<'js>,
    protos: &Protos<'_, 'js>,
    max: usize,
) -> Option<(serde_json::Value, usize)> {
    let mut reader = PlainReader {
        ctx,
        protos,
        max,
        size: 0,
        values: 0,
    };
    let value = reader.read(value, 0)?;
    Some((value, reader.size))
}

/// The walk of [`read_plain`]: what it has counted so far.
struct PlainReader<'a, 'js> {
    ctx: &'a Ctx<'js>,
    protos: &'a Protos<'a, 'js>,
    max: usize,
    size: usize,
    values: usize,
}

impl<'js> PlainReader<'_, 'js> {
    /// Counts `bytes` more of JSON text: `None` once the text passes `max`.
    fn add(&mut self, bytes: usize) -> Option<()> {
        self.size = self.size.saturating_add(bytes);
        (self.size <= self.max).then_some(())
    }

    fn read(&mut self, value: &Value<'js>, depth: usize) -> Option<serde_json::Value> {
        self.values += 1;
        if self.values > PLAIN_VALUES {
            return None;
        }
        if !value.is_object() {
            let (value, bytes) = scalar_value(value)?;
            self.add(bytes)?;
            return Some(value);
        }
        if depth >= PLAIN_DEPTH || value.is_proxy() || value.is_function() {
            return None;
        }
        let object = value.as_object()?;
        let proto = object.get_prototype();
        let raw = self.ctx.as_raw().as_ptr();
        if value.is_array() {
            if proto.as_ref().map(Object::as_value) != Some(self.protos.array) {
                return None;
            }
            // An array's length is its own data property: reading it runs no program code.
            let len = object.as_array()?.len();
            // The brackets, and a comma between elements.
            self.add(len.saturating_add(1).max(2))?;
            let mut items = Vec::with_capacity(len.min(PLAIN_VALUES));
            for index in 0..len {
                let index = u32::try_from(index).ok()?;
                // SAFETY: `raw` is the live context; an index atom is freed below.
                let atom = unsafe { qjs::JS_NewAtomUInt32(raw, index) };
                let item = own_data(self.ctx, object.as_raw(), atom);
                // SAFETY: `atom` was made above and is used no more.
                unsafe { qjs::JS_FreeAtom(raw, atom) };
                items.push(self.read(&item?, depth + 1)?);
            }
            return Some(serde_json::Value::Array(items));
        }
        if let Some(proto) = &proto
            && proto.as_value() != self.protos.object
        {
            return None;
        }
        let properties = OwnKeys::read(raw, object.as_raw())?;
        // The braces, and a comma between properties.
        self.add((properties.len as usize).saturating_add(1).max(2))?;
        let mut map = serde_json::Map::new();
        for property in properties.iter() {
            let (key, bytes) = atom_key(raw, property.atom)?;
            // The key's text and its colon.
            self.add(bytes + 1)?;
            let item = own_data(self.ctx, object.as_raw(), property.atom)?;
            let item = self.read(&item, depth + 1)?;
            map.insert(key, item);
        }
        Some(serde_json::Value::Object(map))
    }
}

/// What [`simple_line`] read.
enum SimpleLine {
    /// The line, within the room the output has.
    Line(String),
    /// Longer than the room the output has: refused.
    TooLong,
    /// A value the lazy half must describe.
    NotSimple,
}

/// The log line of a console call's `values` (the rest array of its arguments) read straight
/// from them, when each is a string without an unpaired surrogate, a number, a boolean, null
/// or undefined: each as the lazy half's `describe` writes it (a string as itself, -0 as
/// `-0`, any other number as its `ToString`), separated by spaces. Nothing the program wrote
/// runs here: the elements of a rest array are its own.
fn simple_line<'js>(values: &Value<'js>, room: usize) -> rquickjs::Result<SimpleLine> {
    let Some(values) = values.as_array() else {
        return Ok(SimpleLine::NotSimple);
    };
    let mut line = String::new();
    for i in 0..values.len() {
        let value: Value<'js> = values.get(i)?;
        if i > 0 {
            line.push(' ');
        }
        if let Some(string) = value.as_string() {
            let left = room.saturating_sub(line.len());
            let appended = with_bounded_text(string.clone(), left, |bytes| {
                // An unpaired surrogate (WTF-8 `ED A0..BF`) is the lazy half's to replace.
                let lone = bytes
                    .windows(2)
                    .any(|pair| pair[0] == 0xed && pair[1] >= 0xa0);
                if lone {
                    return false;
                }
                line.push_str(&String::from_utf8_lossy(bytes));
                true
            })?;
            match appended {
                Ok(true) => {}
                Ok(false) => return Ok(SimpleLine::NotSimple),
                Err(_) => return Ok(SimpleLine::TooLong),
            }
        } else if value
            .as_float()
            .is_some_and(|f| f == 0.0 && f.is_sign_negative())
        {
            line.push_str("-0");
        } else if value.is_number() {
            let number: rquickjs::Coerced<String> = value.get()?;
            line.push_str(&number.0);
        } else if let Some(flag) = value.as_bool() {
            line.push_str(if flag { "true" } else { "false" });
        } else if value.is_null() {
            line.push_str("null");
        } else if value.is_undefined() {
            line.push_str("undefined");
        } else {
            return Ok(SimpleLine::NotSimple);
        }
        if line.len() > room {
            return Ok(SimpleLine::TooLong);
        }
    }
    Ok(SimpleLine::Line(line))
}

/// The own enumerable string keys of an object, in `Object.keys` order.
struct OwnKeys {
    ctx: *mut qjs::JSContext,
    tab: *mut qjs::JSPropertyEnum,
    len: u32,
}

impl OwnKeys {
    fn read(ctx: *mut qjs::JSContext, object: qjs::JSValue) -> Option<OwnKeys> {
        let mut tab: *mut qjs::JSPropertyEnum = std::ptr::null_mut();
        let mut len: u32 = 0;
        #[allow(clippy::cast_possible_wrap)]
        let flags = (qjs::JS_GPN_STRING_MASK | qjs::JS_GPN_ENUM_ONLY) as std::ffi::c_int;
        // SAFETY: `ctx` and `object` are live (the caller holds them); on success QuickJS
        // hands over `tab` with `len` entries, freed by `Drop`.
        let status =
            unsafe { qjs::JS_GetOwnPropertyNames(ctx, &raw mut tab, &raw mut len, object, flags) };
        (status >= 0).then_some(OwnKeys { ctx, tab, len })
    }

    fn iter(&self) -> impl Iterator<Item = &qjs::JSPropertyEnum> {
        let entries: &[qjs::JSPropertyEnum] = if self.tab.is_null() || self.len == 0 {
            &[]
        } else {
            // SAFETY: QuickJS wrote `len` entries at `tab`, alive until `Drop`.
            unsafe { std::slice::from_raw_parts(self.tab, self.len as usize) }
        };
        entries.iter()
    }
}

impl Drop for OwnKeys {
    fn drop(&mut self) {
        if !self.tab.is_null() {
            // SAFETY: `tab` and `len` are what JS_GetOwnPropertyNames returned, freed once.
            unsafe { qjs::JS_FreePropertyEnum(self.ctx, self.tab, self.len) };
        }
    }
}

/// A key's text, with the size of its JSON text, when it has no unpaired surrogate.
fn atom_key(ctx: *mut qjs::JSContext, atom: qjs::JSAtom) -> Option<(String, usize)> {
    let mut len: qjs::size_t = 0;
    // SAFETY: `atom` is a live atom of `ctx` (held by the property table); the C string is
    // freed below, after it was copied.
    unsafe {
        let text = qjs::JS_AtomToCStringLen(ctx, &raw mut len, atom);
        if text.is_null() {
            let _ = qjs::JS_GetException(ctx);
            return None;
        }
        let bytes = std::slice::from_raw_parts(text.cast::<u8>(), len as usize);
        let key = well_formed(bytes);
        qjs::JS_FreeCString(ctx, text);
        key
    }
}

/// A string's text from its UTF-8 (WTF-8) bytes, with the size of its JSON text: `None` when
/// it has an unpaired surrogate (which the prelude's conversion refuses).
fn well_formed(bytes: &[u8]) -> Option<(String, usize)> {
    let size = json_text_size(bytes);
    if size < 0.0 {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?.to_owned();
    // A size the engine could hold: far below 2^53.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Some((text, size as usize))
}

/// The value of an own data property, read without running program code: `None` when it is
/// not an own property, or is an accessor (a getter is reported, not called).
fn own_data<'js>(ctx: &Ctx<'js>, object: qjs::JSValue, atom: qjs::JSAtom) -> Option<Value<'js>> {
    let mut descriptor = std::mem::MaybeUninit::<qjs::JSPropertyDescriptor>::uninit();
    // SAFETY: `object` and `atom` are live; when the property is found QuickJS fills the
    // descriptor, whose values are taken over (and freed) by the `Value`s below. Reading an
    // own property runs no program code (a getter is reported, not called).
    let (flags, value, getter, setter) = unsafe {
        let found =
            qjs::JS_GetOwnProperty(ctx.as_raw().as_ptr(), descriptor.as_mut_ptr(), object, atom);
        if found != 1 {
            if found < 0 {
                let _ = ctx.catch();
            }
            return None;
        }
        let descriptor = descriptor.assume_init();
        (
            descriptor.flags,
            Value::from_raw(ctx.clone(), descriptor.value),
            Value::from_raw(ctx.clone(), descriptor.getter),
            Value::from_raw(ctx.clone(), descriptor.setter),
        )
    };
    drop((getter, setter));
    #[allow(clippy::cast_possible_wrap)]
    let accessor = flags & qjs::JS_PROP_GETSET as std::ffi::c_int != 0;
    (!accessor).then_some(value)
}

/// A plain scalar (see [`read_plain`]) as the host's value, with the size of its JSON text (an
/// upper bound for a number).
fn scalar_value(value: &Value<'_>) -> Option<(serde_json::Value, usize)> {
    /// More than the JSON text of any finite number takes (`-1.7976931348623157e+308`).
    const NUMBER_BYTES: usize = 25;
    /// Integers below this write as digits, which the host reads back as an integer.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if let Some(int) = value.as_int() {
        return Some((serde_json::Value::from(int), NUMBER_BYTES));
    }
    if let Some(float) = value.as_float() {
        if !float.is_finite() || (float == 0.0 && float.is_sign_negative()) {
            return None;
        }
        if float.fract() == 0.0 {
            if float.abs() >= EXACT {
                return None;
            }
            // Exact: an integer below 2^53 in magnitude.
            #[allow(clippy::cast_possible_truncation)]
            return Some((serde_json::Value::from(float as i64), NUMBER_BYTES));
        }
        return serde_json::Number::from_f64(float)
            .map(|number| (serde_json::Value::Number(number), NUMBER_BYTES));
    }
    if let Some(flag) = value.as_bool() {
        return Some((serde_json::Value::Bool(flag), if flag { 4 } else { 5 }));
    }
    if value.is_null() {
        return Some((serde_json::Value::Null, 4));
    }
    let text = value.as_string()?.clone();
    let (text, size) = with_bounded_text(text, usize::MAX, well_formed)
        .ok()?
        .ok()??;
    Some((serde_json::Value::String(text), size))
}

/// Whether a host value is small and shallow enough to be made in the engine directly
/// ([`to_engine`]): at most [`PLAIN_VALUES`] values, [`PLAIN_DEPTH`] levels deep. Larger ones
/// cross as JSON text, which the engine parses without recursing on the Rust stack.
fn plain_size(value: &serde_json::Value) -> bool {
    let mut pending: Vec<(&serde_json::Value, usize)> = vec![(value, 0)];
    let mut values = 0;
    while let Some((value, depth)) = pending.pop() {
        values += 1;
        if values > PLAIN_VALUES || depth > PLAIN_DEPTH {
            return false;
        }
        match value {
            serde_json::Value::Array(items) => pending.extend(items.iter().map(|v| (v, depth + 1))),
            serde_json::Value::Object(map) => pending.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    true
}

/// A host value (one [`plain_size`] accepts) made in the engine as `JSON.parse` makes it from
/// its text: plain objects and arrays, each key an own data property (`__proto__` too), numbers
/// as the nearest double.
fn to_engine<'js>(ctx: &Ctx<'js>, value: &serde_json::Value) -> rquickjs::Result<Value<'js>> {
    Ok(match value {
        serde_json::Value::Null => Value::new_null(ctx.clone()),
        serde_json::Value::Bool(flag) => Value::new_bool(ctx.clone(), *flag),
        serde_json::Value::Number(number) => match number.as_i64() {
            Some(int) if let Ok(int) = i32::try_from(int) => Value::new_int(ctx.clone(), int),
            _ => Value::new_number(ctx.clone(), number.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(text) => {
            rquickjs::String::from_str(ctx.clone(), text)?.into_value()
        }
        serde_json::Value::Array(items) => {
            let array = rquickjs::Array::new(ctx.clone())?;
            for (index, item) in items.iter().enumerate() {
                let index = u32::try_from(index).map_err(|_| rquickjs::Error::Allocation)?;
                define(&array, index, to_engine(ctx, item)?)?;
            }
            array.into_value()
        }
        serde_json::Value::Object(map) => {
            let object = Object::new(ctx.clone())?;
            for (key, item) in map {
                define(&object, key.as_str(), to_engine(ctx, item)?)?;
            }
            object.into_value()
        }
    })
}

/// Defines `key` on a fresh object or array as `JSON.parse` does (an own, writable, enumerable,
/// configurable data property): defined, not assigned, so no setter a program put on a
/// prototype runs (nor `__proto__`'s).
fn define<'js, K: rquickjs::IntoAtom<'js>>(
    object: &Object<'js>,
    key: K,
    value: Value<'js>,
) -> rquickjs::Result<()> {
    object.prop(
        key,
        rquickjs::object::Property::from(value)
            .writable()
            .enumerable()
            .configurable(),
    )
}

/// A call id as the prelude sees it. A run cannot make 2^31 calls within its memory limit; the
/// id saturates rather than wraps if it ever did.
fn js_id(id: u64) -> i32 {
    i32::try_from(id).unwrap_or(i32::MAX)
}

/// A host answer as the text the prelude settles with.
fn encode(result: Result<serde_json::Value, crate::ToolCallFailure>) -> Result<String, String> {
    match result {
        Ok(value) => {
            let text = serde_json::to_string(&value)
                .map_err(|error| format!("the tool's result is not JSON: {error}"));
            tools_schema::deep::discard(value);
            text
        }
        Err(failure) => Err(failure.message().to_owned()),
    }
}

/// Runs jobs and delivers finished calls until the program finishes, stalls or must stop.
fn event_loop(
    runtime: &Runtime,
    context: &Context,
    flags: &Rc<Flags>,
    state: &Rc<RefCell<State>>,
    events_rx: &mpsc::Receiver<Event>,
) -> Stop {
    loop {
        loop {
            match runtime.execute_pending_job() {
                Ok(true) => {}
                Ok(false) => break,
                Err(_) => {
                    if flags.should_stop() {
                        return Stop::Interrupted;
                    }
                }
            }
            if flags.should_stop() {
                return Stop::Interrupted;
            }
        }
        if flags.should_stop() || state.borrow().output.exceeded() {
            return Stop::Interrupted;
        }
        if state.borrow().finish.is_some() {
            return Stop::Finished;
        }
        if !state.borrow().ready.is_empty() {
            if let Err(stop) = deliver(context, flags, state, None, events_rx) {
                return stop;
            }
            continue;
        }
        if state.borrow().waiting == 0 && !runtime.is_job_pending() {
            return Stop::Stalled;
        }
        let now = Instant::now();
        let deadline = flags.deadline.get();
        if now >= deadline {
            flags.timed_out.set(true);
            return Stop::Interrupted;
        }
        match events_rx.recv_timeout(deadline - now) {
            Ok(event) => {
                if let Err(stop) = deliver(context, flags, state, Some(event), events_rx) {
                    return stop;
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                flags.timed_out.set(true);
                return Stop::Interrupted;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Stop::Failed(internal("the run lost its event channel".into()));
            }
        }
    }
}

/// Delivers the calls answered at once, then `first` and every other event already queued,
/// in one entry into the engine.
fn deliver(
    context: &Context,
    flags: &Rc<Flags>,
    state: &Rc<RefCell<State>>,
    first: Option<Event>,
    events_rx: &mpsc::Receiver<Event>,
) -> Result<(), Stop> {
    context.with(|ctx| {
        let settle: Function<'_> = host_object(&ctx)
            .and_then(|host| host.get("settle"))
            .map_err(|_| Stop::Failed(internal("the prelude's settle function is gone".into())))?;
        let mut first = first;
        loop {
            let local = state.borrow_mut().ready.pop_front();
            let event = match local {
                Some(event) => event,
                None => match first.take() {
                    Some(event) => event,
                    None => match events_rx.try_recv() {
                        Ok(event) => event,
                        Err(_) => break,
                    },
                },
            };
            if let Event::Done { id, result, held } = event {
                if flags.cancelled() {
                    return Err(Stop::Interrupted);
                }
                {
                    let mut state = state.borrow_mut();
                    state.waiting = state.waiting.saturating_sub(1);
                }
                // Delivered: the answer is in the engine's heap from here on.
                flags.held.borrow().fetch_sub(held, Ordering::Relaxed);
                let (ok, text) = match result {
                    Ok(text) => (true, text),
                    Err(message) => (false, message),
                };
                if settle.call::<_, ()>((js_id(id), ok, text)).is_err() {
                    let _ = ctx.catch();
                    if flags.should_stop() {
                        return Err(Stop::Interrupted);
                    }
                }
            }
            if flags.should_stop() {
                return Err(Stop::Interrupted);
            }
        }
        Ok(())
    })
}

/// The failure for a run stopped by a limit or cancellation, if one was hit.
fn finish_interrupted(
    flags: &Flags,
    state: &Rc<RefCell<State>>,
    limits: &CodeLimits,
) -> Option<CodeOutcome> {
    let output_exceeded = flags.output.get() || state.borrow().output.exceeded();
    let (kind, message) = if flags.oom.get() {
        let held = flags.held_at_oom.get();
        let mut message = format!(
            "the program exceeded its memory limit of {} bytes",
            limits.memory_bytes
        );
        if held > 0 {
            message.push_str(&format!(
                ", counting {held} bytes the host held for its tool calls (the arguments of \
                 calls not answered yet and the answers the program had not taken yet)"
            ));
        }
        (CodeFailureKind::Memory, message)
    } else if output_exceeded {
        let mut output = take_output(state);
        return Some(Err(output.output_limit()));
    } else if flags.abort.borrow().load(Ordering::Relaxed) {
        (CodeFailureKind::Aborted, "the run was cancelled".to_owned())
    } else if flags.timed_out.get() || Instant::now() >= flags.deadline.get() {
        (
            CodeFailureKind::Timeout,
            format!(
                "the program did not finish within {} ms",
                limits.timeout.as_millis()
            ),
        )
    } else {
        return None;
    };
    let mut output = take_output(state);
    Some(Err(output.fail(kind, message, None, None)))
}

fn take_output(state: &Rc<RefCell<State>>) -> Output {
    let mut state = state.borrow_mut();
    let limit = usize::MAX;
    std::mem::replace(&mut state.output, Output::new(limit))
}

fn with_logs(state: &Rc<RefCell<State>>, failure: CodeFailure) -> CodeFailure {
    let mut output = take_output(state);
    output.fail(failure.kind, failure.message, failure.line, failure.column)
}

fn internal(message: String) -> CodeFailure {
    CodeFailure::new(CodeFailureKind::Internal, message, Vec::new())
}

fn setup_error(ctx: &Ctx<'_>, error: rquickjs::Error) -> CodeFailure {
    if matches!(error, rquickjs::Error::Exception) {
        let exception = ctx.catch();
        let text = describe_exception(ctx, exception);
        return internal(format!("the Code Mode prelude failed: {text}"));
    }
    internal(format!("the Code Mode prelude failed: {error}"))
}

/// The prelude's JSON description of a thrown value.
fn describe_exception<'js>(ctx: &Ctx<'js>, exception: Value<'js>) -> String {
    let described = host_object(ctx)
        .and_then(|host| host.get::<_, Function<'_>>("errorText"))
        .and_then(|describe| describe.call::<_, String>((exception.clone(),)));
    match described {
        Ok(text) => text,
        Err(_) => {
            let _ = ctx.catch();
            let message = exception
                .as_object()
                .and_then(|object| object.get::<_, String>("message").ok())
                .unwrap_or_else(|| "an exception".to_owned());
            let stack = exception
                .as_object()
                .and_then(|object| object.get::<_, String>("stack").ok())
                .unwrap_or_default();
            let name = exception
                .as_object()
                .and_then(|object| object.get::<_, String>("name").ok())
                .unwrap_or_else(|| "Error".to_owned());
            serde_json::json!({ "name": name, "message": message, "stack": stack, "toolName": null })
                .to_string()
        }
    }
}

#[derive(Deserialize)]
struct Thrown {
    name: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    stack: String,
    #[serde(rename = "toolName", default)]
    tool_name: Option<String>,
}

/// A `runtime` failure from the prelude's description of a thrown value and its message (the
/// message in the description, if any, when `message` is empty).
fn thrown(
    mut output: Output,
    text: &str,
    message: String,
    program: &str,
    unhandled: bool,
) -> CodeFailure {
    let (mut message, position) = match serde_json::from_str::<Thrown>(text) {
        Ok(mut thrown) => {
            if thrown.message.is_empty() {
                thrown.message = message;
            }
            let message = match &thrown.tool_name {
                Some(tool) => format!("ToolCallError from tool {tool:?}: {}", thrown.message),
                None if thrown.name == "Uncaught" => thrown.message.clone(),
                None => format!("{}: {}", thrown.name, thrown.message),
            };
            (message, position_in(&thrown.stack, program))
        }
        Err(_) => (text.to_owned(), None),
    };
    if unhandled {
        message = format!("unhandled promise rejection: {message}");
    }
    let (line, column) = position.map_or((None, None), |(l, c)| (Some(l), Some(c)));
    output.fail(CodeFailureKind::Runtime, message, line, column)
}

/// The first `program.ts:LINE:COL` in a stack trace, mapped into the model's text.
fn position_in(stack: &str, program: &str) -> Option<(u32, u32)> {
    let marker = format!("{PROGRAM_FILE}:");
    let start = stack.find(&marker)? + marker.len();
    let rest = &stack[start..];
    let mut parts = rest.splitn(3, ':');
    let line: u32 = parts.next()?.parse().ok()?;
    let column: u32 = parts
        .next()
        .map(|c| {
            c.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|c| c.parse().ok())
        .unwrap_or(1);
    let column = if line == 1 {
        let prefix = u32::try_from(PREFIX.chars().count()).unwrap_or(0);
        column.saturating_sub(prefix).max(1)
    } else {
        column
    };
    let lines = u32::try_from(program.split('\n').count()).unwrap_or(u32::MAX);
    Some((line.min(lines), column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_positions_map_into_the_program() {
        let stack = "    at f (program.ts:3:9)\n    at <anonymous> (program.ts:5:1)\n";
        assert_eq!(position_in(stack, "a\nb\nc\nd\ne"), Some((3, 9)));
        let first = format!("    at <anonymous> (program.ts:1:{})\n", PREFIX.len() + 7);
        assert_eq!(position_in(&first, "x"), Some((1, 7)));
        assert_eq!(position_in("no frames", "x"), None);
    }

    /// `prelude.bc` and `prelude_lazy.bc` are the two halves as this QuickJS compiles them
    /// now, byte for byte; `TOOLS_CODE_UPDATE=1` writes them.
    #[test]
    fn prelude_bytecode_is_the_prelude_compiled() {
        let runtime = Runtime::new().unwrap();
        let context = new_context(&runtime).unwrap();
        for (half, name) in [(&CORE, "prelude.bc"), (&LAZY, "prelude_lazy.bc")] {
            let compiled = context.with(|ctx| half.compile(&ctx)).unwrap();
            let again = context.with(|ctx| half.compile(&ctx)).unwrap();
            assert_eq!(compiled, again, "compiling {name} is not deterministic");
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("src/typescript")
                .join(name);
            if std::env::var_os("TOOLS_CODE_UPDATE").is_some() {
                std::fs::write(&path, &compiled).unwrap();
                continue;
            }
            assert!(
                half.bytecode == compiled.as_slice(),
                "{} is not {} as this QuickJS compiles it ({} bytes, {} compiled); rewrite it \
                 with `TOOLS_CODE_UPDATE=1 cargo test -p tools-code --lib prelude_bytecode` \
                 and commit it",
                path.display(),
                half.file,
                half.bytecode.len(),
                compiled.len()
            );
            // And it is what a run reads: the committed bytes load, without the fallback.
            context
                .with(|ctx| Prelude::read(&ctx, half.bytecode).map(drop))
                .unwrap();
            assert!(half.compiled.get().is_none());
        }
    }

    /// The core hands the lazy half its captures by position (`B` in `prelude.js`: each
    /// entry's comment names the constant `prelude_lazy.js` reads it into), and the built-in
    /// prototypes in the order the lazy half names them.
    #[test]
    fn the_lazy_half_reads_what_the_core_hands_it() {
        let between = |text: &'static str, from: &str, to: &str| {
            let start = text.find(from).unwrap() + from.len();
            &text[start..start + text[start..].find(to).unwrap()]
        };
        let handed: Vec<&str> = between(CORE.source, "const B = [\n", "];")
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.rsplit_once("// ").unwrap().1.trim())
            .collect();
        let read: Vec<(&str, usize)> = LAZY
            .source
            .lines()
            .filter_map(|line| {
                let (name, index) = line.trim().strip_prefix("const ")?.split_once(" = B[")?;
                Some((name, index.strip_suffix("];")?.parse().ok()?))
            })
            .collect();
        assert!(handed.len() > 30, "{handed:?}");
        assert_eq!(read.len(), handed.len(), "{read:?} against {handed:?}");
        for (position, (name, index)) in read.iter().enumerate() {
            assert_eq!((*name, *index), (handed[position], position));
        }

        let items = |list: &str| -> Vec<String> {
            list.split(',')
                .map(|item| item.trim().trim_matches('\'').replace(".prototype", ""))
                .filter(|item| !item.is_empty())
                .collect()
        };
        let protos = items(between(CORE.source, "const builtinProtos = [", "]"));
        let names = items(between(LAZY.source, "const builtinNames = [", "]"));
        assert_eq!(protos.len(), 22);
        assert_eq!(protos, names);
    }

    /// A runtime goes on to the next engine only when the run left nothing in it: not after a
    /// run that left a job pending, nor after one whose atoms grew the runtime's tables.
    #[test]
    fn a_runtime_is_kept_only_when_the_run_left_nothing() {
        let eval = |engine: &Engine, program: &str| {
            engine.context.with(|ctx| {
                let _: Value<'_> = ctx.eval(program).unwrap();
            });
        };
        // SAFETY: only the address of the engine's live runtime is read.
        let runtime_of = |engine: &Engine| {
            engine
                .context
                .with(|ctx| unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) } as usize)
        };
        let engine = Engine::new(None).unwrap();
        eval(&engine, "globalThis.kept = [Symbol.for('x'), { a: 1 }]; 1");
        let first = runtime_of(&engine);
        let shell = engine
            .tear_down()
            .expect("a run that left nothing keeps its runtime");

        let engine = Engine::new(Some(shell)).unwrap();
        assert_eq!(
            runtime_of(&engine),
            first,
            "the engine is not on the kept runtime"
        );
        engine.context.with(|ctx| {
            let seen: String = ctx.eval("typeof kept").unwrap();
            assert_eq!(seen, "undefined", "a global of the last run is visible");
        });
        eval(&engine, "Promise.resolve().then(() => 1); 1");
        assert!(engine.tear_down().is_none(), "a pending job went on");

        let engine = Engine::new(None).unwrap();
        eval(
            &engine,
            "const o = {}; for (let i = 0; i < 100000; i++) o['k' + i] = i; 1",
        );
        assert!(engine.tear_down().is_none(), "grown tables went on");

        let engine = Engine::new(None).unwrap();
        eval(&engine, "1");
        engine.shell.flags.out_of_memory();
        assert!(
            engine.tear_down().is_none(),
            "a runtime out of memory went on"
        );
        let engine = Engine::new(None).unwrap();
        engine.shell.flags.timed_out.set(true);
        assert!(engine.tear_down().is_none(), "a stopped runtime went on");
    }
}
