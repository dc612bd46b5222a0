//! Scheduling: how a call may overlap with its neighbours ([`ToolRuntime::execution_mode`]),
//! the [`OrderedPool`] that holds calls to that rule, and a batch runner for an agent loop
//! ([`ToolRuntime::execute_batch`], which runs a model turn through one pool; Code Mode's
//! bridge runs a program's calls through another).
//!
//! # The ordered pool
//!
//! One rule, whoever schedules: entries are admitted strictly by sequence number; consecutive
//! [`Parallel`](ExecutionMode::Parallel) entries overlap, at most `max_parallel` at once; an
//! [`Exclusive`](ExecutionMode::Exclusive) entry waits for the pool to drain, runs alone, and
//! later entries wait for it to leave. An entry leaves when its [`PoolGuard`] is dropped.
//!
//! ```
//! use tools_runtime::schedule::OrderedPool;
//! use tools_runtime::{CancellationToken, ExecutionMode};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let pool = OrderedPool::new(2);
//! // Entry 0 and 1 may overlap.
//! let first = pool.enter(0, ExecutionMode::Parallel).await;
//! let second = pool.enter(1, ExecutionMode::Parallel).await;
//! assert_eq!(pool.running(), 2);
//! // Entry 2 is exclusive: it waits until both left. Its turn came, so waiting for room is
//! // what remains, and a token can stop that.
//! let cancel = CancellationToken::new();
//! let third = pool.enter_until_cancelled(2, ExecutionMode::Exclusive, &cancel);
//! let mut third = std::pin::pin!(third);
//! assert!(futures::poll!(third.as_mut()).is_pending());
//! drop((first, second));
//! let third = third.await.expect("not cancelled");
//! assert_eq!(pool.running(), 1);
//! drop(third);
//! // A cancelled wait gives the entry up: it never runs, and later entries do not wait for it.
//! cancel.cancel();
//! assert!(pool.enter_until_cancelled(3, ExecutionMode::Parallel, &cancel).await.is_none());
//! let fifth = pool.enter(4, ExecutionMode::Parallel).await;
//! assert_eq!(pool.running(), 1);
//! # drop(fifth);
//! # }
//! ```
//!
//! Admission and entry are two steps when something must happen in order between them: a
//! [`Turn`] ([`OrderedPool::turn`]) is an entry's place in the order; [`Turn::enter`] waits for
//! room. While a parallel entry holds its turn, later entries wait; once it enters (or drops
//! the turn without entering), the next one's turn comes. An exclusive entry keeps the turn
//! until it leaves. [`ToolRuntime::execute_batch`] uses this to run policy strictly in order
//! and let only dispatch overlap.
//!
//! Everything runs inside the futures the pool returns: it spawns no task and needs no
//! particular executor. Waiting is cancellable: [`OrderedPool::enter_until_cancelled`] gives
//! up when a [`CancellationToken`] fires, and dropping any of the pool's futures gives the
//! entry up too. An entry that gives up before its turn never runs, and its number is
//! skipped when its turn comes, so later entries do not wait for it forever.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use tokio_util::sync::CancellationToken;

use super::Run;
use crate::call::result::ToolExecutionResult;
use crate::call::tool_call::{ExecutionMode, ScopeKey, ToolCall};
use crate::runtime::handle::{ToolRuntime, lock};

impl ToolRuntime {
    /// How `call` may be scheduled: [`Parallel`](ExecutionMode::Parallel) only when the tool the
    /// caller's scope sees declares a concurrency classifier, the arguments are valid, and the
    /// classifier returns `true`. An unknown or hidden tool, a missing classifier, invalid
    /// arguments or a panicking classifier all mean [`Exclusive`](ExecutionMode::Exclusive).
    pub fn execution_mode(&self, call: &ToolCall) -> ExecutionMode {
        let scope = call.agent.unwrap_or(ScopeKey::GLOBAL);
        let Some(def) = self.get(&call.name, scope) else {
            return ExecutionMode::Exclusive;
        };
        let Some(classifier) = &def.0.concurrency else {
            return ExecutionMode::Exclusive;
        };
        if let Some(input) = &def.0.input
            && !input.is_valid(&call.arguments)
        {
            return ExecutionMode::Exclusive;
        }
        match std::panic::catch_unwind(AssertUnwindSafe(|| classifier(&call.arguments))) {
            Ok(true) => ExecutionMode::Parallel,
            Ok(false) => ExecutionMode::Exclusive,
            Err(_) => {
                tracing::warn!(tool = %call.name, "a concurrency classifier panicked; the call runs exclusively");
                ExecutionMode::Exclusive
            }
        }
    }

    /// Runs the calls of one model turn and returns their results in the model's order.
    ///
    /// Calls are admitted (policy: pre-execute listeners, approval, guards) strictly in order.
    /// Consecutive parallel calls then overlap their dispatch and bodies in a rolling pool of at
    /// most `max_parallel` (at least 1); an exclusive call waits until the pool is empty, runs
    /// alone, and later calls start only after it. Post-execute decisions, `finalize_content`
    /// and observers run in the model's order. Everything runs inside the returned future (no
    /// task is spawned), so it returns only after every body has settled.
    ///
    /// The pool is an [`OrderedPool`]: a call's [`Turn`] is its place in the admission order.
    /// A parallel call takes its turn, runs policy, and enters the pool (which passes the turn
    /// on) before its dispatch; an exclusive call enters first, so policy, dispatch and body
    /// all run alone. A second pool of one, entered exclusively, orders the conclusions.
    pub async fn execute_batch(
        &self,
        calls: Vec<ToolCall>,
        max_parallel: usize,
    ) -> Vec<ToolExecutionResult> {
        let pool = OrderedPool::new(max_parallel);
        // Conclusions one at a time, in the model's order.
        let concluding = OrderedPool::new(1);
        let (pool, concluding) = (&pool, &concluding);
        let runs = calls.into_iter().zip(0u64..).map(|(call, seq)| async move {
            let turn = pool.turn(seq).await;
            let mode = self.execution_mode(&call);
            let run = Run::enter(self, call);
            let span = run.span.clone();
            super::in_span::InSpan::new(span, async move {
                let mut clock = super::PhaseClock::start(&run.span);
                // `Run::run`'s steps, in the batch's order.
                let running = &run;
                let dispatched = |mut clock: super::PhaseClock, def| async move {
                    clock.restart();
                    let mut draft = running.dispatch(&def).await;
                    if let Some(pause) = running.paused_program() {
                        draft = running.pause_run(pause).await;
                    }
                    running.dispatched(&mut clock);
                    (draft, clock)
                };
                let (draft, clock) = match mode {
                    ExecutionMode::Parallel => {
                        let admitted = run.admit().await;
                        run.admitted(&admitted, &mut clock);
                        match admitted {
                            Err(failure) => {
                                // Refused: the next call's turn comes now.
                                drop(turn);
                                (failure, clock)
                            }
                            Ok(def) => {
                                let _slot = turn.enter(ExecutionMode::Parallel).await;
                                dispatched(clock, def).await
                            }
                        }
                    }
                    ExecutionMode::Exclusive => {
                        // Waits for the pool to drain, then runs alone; later calls wait.
                        let _slot = turn.enter(ExecutionMode::Exclusive).await;
                        clock.restart();
                        let admitted = run.admit().await;
                        run.admitted(&admitted, &mut clock);
                        match admitted {
                            Ok(def) => dispatched(clock, def).await,
                            Err(failure) => (failure, clock),
                        }
                    }
                };
                let _conclusion = concluding.enter(seq, ExecutionMode::Exclusive).await;
                run.conclude(draft, clock).await
            })
            .await
        });
        futures::future::join_all(runs).await
    }
}

/// A pool that admits entries strictly by sequence number, lets parallel entries overlap up to
/// a limit and runs an exclusive entry alone (see the [module docs](self)).
///
/// Sequence numbers start at 0 and each is used once. The pool can be shared by reference
/// between the futures of one task (as [`ToolRuntime::execute_batch`] does) or put in an `Arc`
/// and used from many tasks.
pub struct OrderedPool {
    max: usize,
    state: Mutex<PoolState>,
}

#[derive(Default)]
struct PoolState {
    /// The number whose turn it is: every entry before it has entered or given up.
    next: u64,
    /// Entries inside now.
    running: usize,
    /// The wakers of the entries waiting, by number. Only the one whose turn it is can make
    /// progress, so only it is woken.
    waiting: HashMap<u64, Waker>,
    /// Numbers after `next` whose entries gave up before their turn.
    gave_up: BTreeSet<u64>,
}

impl PoolState {
    /// Passes the turn on from `seq`, which holds it, skipping numbers given up; returns the
    /// waker of the entry whose turn it now is, if it waits.
    fn pass(&mut self, seq: u64) -> Option<Waker> {
        self.next = seq.saturating_add(1);
        while !self.gave_up.is_empty() && self.gave_up.remove(&self.next) {
            self.next = self.next.saturating_add(1);
        }
        self.waker_of_next()
    }

    /// Takes the waker of the entry whose turn it is, if it waits.
    fn waker_of_next(&mut self) -> Option<Waker> {
        if self.waiting.is_empty() {
            return None;
        }
        self.waiting.remove(&self.next)
    }
}

impl fmt::Debug for OrderedPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("OrderedPool")
            .field("max_parallel", &self.max)
            .field("next", &state.next)
            .field("running", &state.running)
            .field("waiting", &state.waiting.len())
            .finish()
    }
}

impl OrderedPool {
    /// A pool in which at most `max_parallel` parallel entries overlap (at least 1).
    pub fn new(max_parallel: usize) -> Self {
        OrderedPool {
            max: max_parallel.max(1),
            state: Mutex::new(PoolState::default()),
        }
    }

    /// How many parallel entries may overlap.
    pub fn max_parallel(&self) -> usize {
        self.max
    }

    /// How many entries are inside now.
    pub fn running(&self) -> usize {
        lock(&self.state).running
    }

    /// Waits for entry `seq`'s turn: every entry before it has entered (an exclusive one has
    /// also left) or given up.
    pub async fn turn(&self, seq: u64) -> Turn<'_> {
        Wait::new(self, seq, None).await;
        Turn {
            pool: self,
            seq,
            held: true,
        }
    }

    /// Waits for entry `seq`'s turn, then for room, and enters as `mode`: the turn and
    /// [`Turn::enter`] in one step.
    pub async fn enter(&self, seq: u64, mode: ExecutionMode) -> PoolGuard<'_> {
        Wait::new(self, seq, Some(mode)).await;
        PoolGuard {
            pool: self,
            seq,
            exclusive: mode == ExecutionMode::Exclusive,
        }
    }

    /// Gives entry `seq` up without waiting: it never enters, and its turn passes on (now, if
    /// it has come; when it comes, otherwise). For an entry that turns out to need no place,
    /// such as a call answered from a journal.
    pub fn give_up(&self, seq: u64) {
        drop(Wait::new(self, seq, None));
    }

    /// [`enter`](Self::enter), or `None` when `cancel` fires first (also when it has fired
    /// already, even if there is room): the entry gives up and never runs.
    pub async fn enter_until_cancelled(
        &self,
        seq: u64,
        mode: ExecutionMode,
        cancel: &CancellationToken,
    ) -> Option<PoolGuard<'_>> {
        let mut wait = Wait::new(self, seq, Some(mode));
        if cancel.is_cancelled() {
            // Given up (dropping `wait`): later entries skip it.
            return None;
        }
        // Admitted at once, the token need not be watched.
        let entered = wait.attempt()
            || tokio::select! {
                biased;
                () = cancel.cancelled() => false,
                () = &mut wait => true,
            };
        entered.then_some(PoolGuard {
            pool: self,
            seq,
            exclusive: mode == ExecutionMode::Exclusive,
        })
    }
}

/// An entry's turn: every entry before it has entered or given up, and the entries after it
/// wait until it enters or drops the turn (which passes it on).
#[must_use = "dropping a turn passes it on without entering"]
pub struct Turn<'a> {
    pool: &'a OrderedPool,
    seq: u64,
    /// Whether this value still holds the turn (entering hands it to the waiting future).
    held: bool,
}

impl<'a> Turn<'a> {
    /// The entry's sequence number.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Waits for room and enters as `mode`: a parallel entry when fewer than `max_parallel`
    /// are inside (it then passes the turn on), an exclusive one when nothing is (it keeps the
    /// turn until it leaves). Dropping the future before it is ready passes the turn on.
    pub async fn enter(mut self, mode: ExecutionMode) -> PoolGuard<'a> {
        // From here the waiting future holds the turn (and passes it on if it is dropped).
        self.held = false;
        let (pool, seq) = (self.pool, self.seq);
        Wait::new(pool, seq, Some(mode)).await;
        PoolGuard {
            pool,
            seq,
            exclusive: mode == ExecutionMode::Exclusive,
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if self.held {
            let waker = lock(&self.pool.state).pass(self.seq);
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }
}

impl fmt::Debug for Turn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Turn").field("seq", &self.seq).finish()
    }
}

/// A place in the pool; dropping it leaves, which lets the next entry in.
#[must_use = "dropping the guard leaves the pool at once"]
pub struct PoolGuard<'a> {
    pool: &'a OrderedPool,
    seq: u64,
    exclusive: bool,
}

impl PoolGuard<'_> {
    /// The entry's sequence number.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The mode the entry entered as.
    pub fn mode(&self) -> ExecutionMode {
        if self.exclusive {
            ExecutionMode::Exclusive
        } else {
            ExecutionMode::Parallel
        }
    }
}

impl Drop for PoolGuard<'_> {
    fn drop(&mut self) {
        let waker = {
            let mut state = lock(&self.pool.state);
            state.running = state.running.saturating_sub(1);
            if self.exclusive {
                state.pass(self.seq)
            } else {
                state.waker_of_next()
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl fmt::Debug for PoolGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolGuard")
            .field("seq", &self.seq)
            .field("mode", &self.mode())
            .finish()
    }
}

/// Waits until entry `seq` has its turn and, when `mode` is set, until it has entered as that
/// mode. Dropped before that, the entry gives up: its turn passes on if it has it, and it is
/// skipped when its turn comes otherwise.
struct Wait<'a> {
    pool: &'a OrderedPool,
    seq: u64,
    mode: Option<ExecutionMode>,
    /// Whether a waker of this entry may be in the pool's map.
    registered: bool,
    done: bool,
}

impl<'a> Wait<'a> {
    fn new(pool: &'a OrderedPool, seq: u64, mode: Option<ExecutionMode>) -> Self {
        Wait {
            pool,
            seq,
            mode,
            registered: false,
            done: false,
        }
    }

    /// Takes the turn (and enters, when a mode is set) if it can now; with `state` locked.
    fn step(&mut self, state: &mut PoolState) -> Option<Option<Waker>> {
        if self.done {
            return Some(None);
        }
        if state.next != self.seq {
            return None;
        }
        let woken = match self.mode {
            None => None,
            Some(ExecutionMode::Parallel) if state.running < self.pool.max => {
                state.running += 1;
                state.pass(self.seq)
            }
            Some(ExecutionMode::Exclusive) if state.running == 0 => {
                state.running = 1;
                None
            }
            Some(_) => return None,
        };
        if self.registered {
            state.waiting.remove(&self.seq);
        }
        self.done = true;
        Some(woken)
    }

    /// Whether the entry took its turn (and entered) right now, without waiting.
    fn attempt(&mut self) -> bool {
        let step = self.step(&mut lock(&self.pool.state));
        match step {
            Some(waker) => {
                if let Some(waker) = waker {
                    waker.wake();
                }
                true
            }
            None => false,
        }
    }
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // `Wait` is `Unpin`: a reference and plain values.
        let this = self.get_mut();
        let mut state = lock(&this.pool.state);
        if let Some(waker) = this.step(&mut state) {
            drop(state);
            if let Some(waker) = waker {
                waker.wake();
            }
            return Poll::Ready(());
        }
        match state.waiting.get_mut(&this.seq) {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            Some(waker) => waker.clone_from(cx.waker()),
            None => {
                state.waiting.insert(this.seq, cx.waker().clone());
            }
        }
        this.registered = true;
        Poll::Pending
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let waker = {
            let mut state = lock(&self.pool.state);
            if self.registered {
                state.waiting.remove(&self.seq);
            }
            if state.next == self.seq {
                state.pass(self.seq)
            } else {
                if self.seq > state.next {
                    state.gave_up.insert(self.seq);
                }
                None
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}
