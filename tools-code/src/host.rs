//! What a program's `tools` object is bound to: the [`CodeHost`] a run is given, the
//! [`CallReply`] through which it answers each call, and [`FnHost`], a host made of an async
//! function.
//!
//! The runtime hands each call to the host with a reply and goes back to its event loop; the
//! host decides where the call's work runs. An answer given inside [`CodeHost::call`] reaches
//! the program at once, without a trip through the event loop; an answer given later, from any
//! thread, wakes the loop. So a runtime is only its event loop: it spawns no task for a call
//! and polls no host future. The `run_code` bridge answers a call that finishes at once inline
//! and runs one that has to wait in a task of the run's own (one task per waiting call); when
//! the run ends the runtime tells the host ([`CodeHost::settle`]) and waits for it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use serde_json::Value;
use tokio::task::JoinSet;

use crate::{ToolCallFailure, lock};

/// What one call's answer is: the tool's value, or a failure the program sees as a
/// `ToolCallError`.
pub type CallResult = Result<Value, ToolCallFailure>;

/// The future [`CodeHost::settle`] returns.
pub type SettleFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// What a program's `tools` object is bound to: the tool names and the calls.
///
/// A runtime hands each call to [`call`](Self::call) with a [`CallReply`] and goes on running
/// the program; the host answers through the reply, at once or later, from any thread. The
/// `run_code` dispatch bridge implements this by running each call through the tool pipeline;
/// [`FnHost`] makes a host of an async function (tests, benches, small embeddings).
///
/// The runtimes of this crate call [`call`](Self::call) on a thread of their choosing
/// (TypeScript: the engine's worker; Python: wherever the run's future is polled), inside the
/// context of the tokio runtime that polls [`CodeRuntime::run`](crate::CodeRuntime::run), so
/// `tokio::spawn` and timers work there. Answering inside `call` is the fast path, but `call`
/// holds up the program while it runs: keep heavy synchronous work out of it (in a task, or
/// `spawn_blocking`).
///
/// When the run ends (completion, failure, deadline or cancellation) the runtime stops
/// listening (an answer after that is dropped) and awaits [`settle`](Self::settle) before the
/// run's future resolves: the host stops the calls still running and waits for them, so none
/// outlives the run. Dropping the run's future drops the run without settling.
pub trait CodeHost: Send + Sync + 'static {
    /// The names bound on `tools`, exactly as the program spells them (any string, including
    /// names that are not identifiers).
    fn tool_names(&self) -> Vec<String>;

    /// Whether `name` is one of [`tool_names`](Self::tool_names). A runtime that binds on
    /// first use (see [`bind_on_first_use`](Self::bind_on_first_use)) asks this the first time
    /// a program reads a name off `tools`. The default searches `tool_names`; a host with many
    /// names answers without listing them.
    fn binds(&self, name: &str) -> bool {
        self.tool_names().iter().any(|bound| bound == name)
    }

    /// Whether the runtime should bind each name at its first use instead of all of them
    /// before the program starts: `true` for a host whose names are many or costly to list
    /// (binding a thousand tools up front costs more than a short run). Such a run asks
    /// [`binds`](Self::binds) for each name the program reads, and lists
    /// [`tool_names`](Self::tool_names) only if the program enumerates `tools`; a name bound
    /// that way is the one the host has when the program first reads it. What the program sees
    /// is the same either way. A runtime may ignore this (the Python runtime does). The
    /// default is `false`.
    fn bind_on_first_use(&self) -> bool {
        false
    }

    /// Starts one call. `args` is already strict JSON (the runtime rejects anything else before
    /// the call reaches the host). Answer through `reply`: a `ToolCallFailure` rejects the
    /// program's call with a `ToolCallError`; a reply dropped unanswered rejects it too.
    fn call(&self, name: &str, args: Value, reply: CallReply);

    /// The run has ended: stop the calls still running and finish them. The runtime awaits
    /// this once, before its run's future resolves. The default has nothing to settle.
    fn settle(&self) -> SettleFuture<'_> {
        Box::pin(std::future::ready(()))
    }

    /// For a run the host may have to replay (a run that can pause for approval, see
    /// `tools_runtime::approvals`): what makes the program's random numbers, clock readings and
    /// random bytes the same on replay. With `Some`, the runtime seeds the program's random
    /// numbers with [`Determinism::seed`], answers the program's first clock readings with
    /// [`Determinism::clock`] in order (then with the live clock), and reports every reading
    /// to [`clock_read`](Self::clock_read); a runtime whose programs can draw from the
    /// system's random source (Python's `os.urandom`) answers their first draws with
    /// [`Determinism::entropy`] the same way and reports every draw to
    /// [`entropy_read`](Self::entropy_read). The default, `None`, leaves all of it to the
    /// runtime.
    fn determinism(&self) -> Option<Determinism> {
        None
    }

    /// A clock reading the program made, in milliseconds since the Unix epoch, in the order it
    /// made them (replayed ones included); asked only of a host whose
    /// [`determinism`](Self::determinism) is `Some`.
    fn clock_read(&self, _ms: f64) {}

    /// The bytes of one draw the program made from the system's random source, in the order it
    /// made them (replayed ones included); asked only of a host whose
    /// [`determinism`](Self::determinism) is `Some`, and only by a runtime whose programs can
    /// draw (Python; TypeScript programs have no such source). What a host keeps of them is
    /// memory spent on the run's behalf: the runtime counts each draw against the run's
    /// `memory_bytes` as it reports it.
    fn entropy_read(&self, _bytes: &[u8]) {}
}

/// What a program reads that differs between runs, as a host that replays runs fixes it (see
/// [`CodeHost::determinism`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Determinism {
    /// The seed of the program's random numbers (`Math.random` in TypeScript, the `random`
    /// module's functions in Python).
    pub seed: u64,
    /// The clock readings to give back first, in order (milliseconds since the Unix epoch):
    /// those the run being replayed made.
    pub clock: Vec<f64>,
    /// The draws from the system's random source to give back first, in order, each the bytes
    /// of one draw (Python's `os.urandom(n)` and what draws on it): those the run being
    /// replayed made. A draw is given back only to a request of its own size; the first
    /// request of another size ends the replay of draws, and it and every later one draw live.
    pub entropy: Vec<Vec<u8>>,
}

/// How a host answers one call: a one-shot, cheap to move and `Send`, to answer from any
/// thread. Answered inside [`CodeHost::call`], the answer reaches the program at once; later,
/// it wakes the runtime's event loop. Dropped unanswered, the call fails with "the host
/// dropped the call without answering".
///
/// A runtime makes one with [`CallReply::pair`] for each call.
pub struct CallReply {
    slot: Option<Arc<Slot>>,
}

/// The runtime's side of a [`CallReply`]: the answer given inside the call, or where an answer
/// given later goes. Dropped, the runtime stops listening: a later answer is dropped.
pub struct CallAnswer {
    slot: Arc<Slot>,
}

/// One call's answer between the host and the runtime.
struct Slot(Mutex<SlotState>);

type Deliver = Box<dyn FnOnce(CallResult) + Send>;

enum SlotState {
    /// No answer yet, and the runtime has not said where one goes.
    Empty,
    /// Answered; the runtime has not taken it.
    Answered(CallResult),
    /// The runtime waits: the answer goes here.
    Waiting(Deliver),
    /// Answered and delivered, or nobody listens any more.
    Closed,
}

impl CallReply {
    /// A reply for one call and the runtime's side of it.
    pub fn pair() -> (CallReply, CallAnswer) {
        let slot = Arc::new(Slot(Mutex::new(SlotState::Empty)));
        (
            CallReply {
                slot: Some(slot.clone()),
            },
            CallAnswer { slot },
        )
    }

    /// Answers the call.
    pub fn send(mut self, answer: CallResult) {
        if let Some(slot) = self.slot.take() {
            slot.answer(answer);
        }
    }
}

impl Drop for CallReply {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.answer(Err(ToolCallFailure::new(
                "the host dropped the call without answering",
            )));
        }
    }
}

impl Slot {
    fn answer(&self, answer: CallResult) {
        let mut state = lock(&self.0);
        match std::mem::replace(&mut *state, SlotState::Closed) {
            SlotState::Empty => *state = SlotState::Answered(answer),
            SlotState::Waiting(deliver) => {
                drop(state);
                deliver(answer);
            }
            // Nobody listens: the answer goes (deeply nested values without recursion).
            SlotState::Closed | SlotState::Answered(_) => {
                drop(state);
                if let Ok(value) = answer {
                    tools_schema::deep::discard(value);
                }
            }
        }
    }
}

impl CallAnswer {
    /// The answer, if the host gave it already.
    pub fn try_take(&self) -> Option<CallResult> {
        let mut state = lock(&self.slot.0);
        match std::mem::replace(&mut *state, SlotState::Closed) {
            SlotState::Answered(answer) => Some(answer),
            other => {
                *state = other;
                None
            }
        }
    }

    /// Hands the answer to `deliver` when the host gives it: on the thread that answers, or at
    /// once on this one if the answer is here already. `deliver` is not called if the host
    /// never answers and never drops its reply.
    pub fn on_answer(self, deliver: impl FnOnce(CallResult) + Send + 'static) {
        let mut state = lock(&self.slot.0);
        match std::mem::replace(&mut *state, SlotState::Closed) {
            SlotState::Answered(answer) => {
                drop(state);
                deliver(answer);
            }
            SlotState::Empty => *state = SlotState::Waiting(Box::new(deliver)),
            SlotState::Waiting(_) | SlotState::Closed => {}
        }
    }
}

impl Drop for CallAnswer {
    fn drop(&mut self) {
        // Still empty: nobody will listen (a delivery set up by `on_answer` stays).
        let mut state = lock(&self.slot.0);
        if matches!(*state, SlotState::Empty) {
            *state = SlotState::Closed;
        }
    }
}

impl fmt::Debug for CallReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallReply").finish_non_exhaustive()
    }
}

impl fmt::Debug for CallAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match *lock(&self.slot.0) {
            SlotState::Empty => "empty",
            SlotState::Answered(_) => "answered",
            SlotState::Waiting(_) => "waiting",
            SlotState::Closed => "closed",
        };
        f.debug_struct("CallAnswer").field("state", &state).finish()
    }
}

/// The tasks of one run's host: each call's future runs inline first, and only a call that has
/// to wait gets a task. Used by the bridge and [`FnHost`].
pub(crate) struct HostTasks {
    set: Mutex<JoinSet<()>>,
    /// Where tasks go; `None`: the tokio runtime whose context `call` runs in.
    handle: Option<tokio::runtime::Handle>,
}

impl HostTasks {
    pub(crate) fn new(handle: Option<tokio::runtime::Handle>) -> Self {
        HostTasks {
            set: Mutex::new(JoinSet::new()),
            handle,
        }
    }

    /// Answers `reply` with `work`'s output: at once when `work` is ready on its first poll (a
    /// call whose work finishes at once costs no task and no thread hop), otherwise from a task
    /// of this set that runs it to its end.
    pub(crate) fn answer<F>(&self, reply: CallReply, work: F)
    where
        F: Future<Output = CallResult> + Send + 'static,
    {
        let current;
        let handle = match &self.handle {
            Some(handle) => handle,
            None => match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    current = handle;
                    &current
                }
                Err(_) => {
                    reply.send(Err(ToolCallFailure::new(
                        "the host was called outside a tokio runtime",
                    )));
                    return;
                }
            },
        };
        let mut work = Box::pin(work);
        let first = {
            let _entered = handle.enter();
            work.as_mut().poll(&mut Context::from_waker(Waker::noop()))
        };
        match first {
            Poll::Ready(answer) => reply.send(answer),
            Poll::Pending => {
                let mut set = lock(&self.set);
                // Forget finished calls, so a long run does not accumulate them.
                while set.try_join_next().is_some() {}
                set.spawn_on(async move { reply.send(work.await) }, handle);
            }
        }
    }

    /// Waits until every task (spawned before or while it waits) has ended.
    pub(crate) async fn join(&self) {
        loop {
            let mut set = std::mem::take(&mut *lock(&self.set));
            if set.is_empty() {
                return;
            }
            while set.join_next().await.is_some() {}
        }
    }

    /// Lets every task run on to its end without the set: neither [`join`](Self::join) nor
    /// [`abort`](Self::abort) reaches them any more.
    pub(crate) fn detach(&self) {
        lock(&self.set).detach_all();
    }

    /// Aborts every task (each ends at its next `.await`; [`join`](Self::join) waits for that).
    pub(crate) fn abort(&self) {
        lock(&self.set).abort_all();
    }
}

/// A [`CodeHost`] made of tool names and an async function from a call's name and arguments to
/// its answer.
///
/// Each call's future is polled once inside [`CodeHost::call`]: an answer ready at once goes
/// back to the program right there; a call that has to wait runs on in a task of the host's
/// own, spawned onto the tokio runtime the call came from. [`CodeHost::settle`] aborts the calls
/// still running and waits until each has ended, so none outlives the run (a call's future is
/// dropped at its next `.await`). Use one `FnHost` per run: settling one run settles every call
/// the host is running.
///
/// ```
/// # #[cfg(feature = "typescript")]
/// # {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use serde_json::{json, Value};
/// use tokio_util::sync::CancellationToken;
/// use tools_code::{CodeLimits, CodeRuntime, FnHost, ToolCallFailure, TypeScriptRuntime};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// // `slow` waits before it answers; `add` answers at once.
/// let host = FnHost::new(["add", "slow"], |name: &str, args: Value| {
///     let name = name.to_owned();
///     async move {
///         match (name.as_str(), args["a"].as_i64(), args["b"].as_i64()) {
///             ("add", Some(a), Some(b)) => Ok(json!(a + b)),
///             ("slow", _, _) => {
///                 tokio::time::sleep(Duration::from_millis(5)).await;
///                 Ok(json!("late"))
///             }
///             _ => Err(ToolCallFailure::new("add needs two integers")),
///         }
///     }
/// });
/// let done = TypeScriptRuntime::new()
///     .run(
///         "return [await tools.add({ a: 2, b: 3 }), await tools.slow({})];",
///         Arc::new(host),
///         &CodeLimits::default(),
///         CancellationToken::new(),
///     )
///     .await
///     .unwrap();
/// assert_eq!(done.result, Some(json!([5, "late"])));
/// # });
/// # }
/// ```
pub struct FnHost<F> {
    names: Vec<String>,
    call: F,
    tasks: HostTasks,
    on_first_use: bool,
}

impl<F, Fut> FnHost<F>
where
    F: Fn(&str, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = CallResult> + Send + 'static,
{
    /// A host binding `names`, whose calls `call` answers.
    pub fn new(names: impl IntoIterator<Item = impl Into<String>>, call: F) -> Self {
        FnHost {
            names: names.into_iter().map(Into::into).collect(),
            call,
            tasks: HostTasks::new(None),
            on_first_use: false,
        }
    }

    /// Has the runtime bind each name at its first use (see [`CodeHost::bind_on_first_use`]).
    #[must_use]
    pub fn bind_on_first_use(mut self) -> Self {
        self.on_first_use = true;
        self
    }
}

impl<F, Fut> CodeHost for FnHost<F>
where
    F: Fn(&str, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = CallResult> + Send + 'static,
{
    fn tool_names(&self) -> Vec<String> {
        self.names.clone()
    }

    fn bind_on_first_use(&self) -> bool {
        self.on_first_use
    }

    fn call(&self, name: &str, args: Value, reply: CallReply) {
        self.tasks.answer(reply, (self.call)(name, args));
    }

    fn settle(&self) -> SettleFuture<'_> {
        self.tasks.abort();
        Box::pin(self.tasks.join())
    }
}

impl<F> fmt::Debug for FnHost<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnHost")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}
