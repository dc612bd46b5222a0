//! Scheduling: how a call may overlap with its neighbours ([`ToolRuntime::execution_mode`]) and
//! a batch runner for an agent loop ([`ToolRuntime::execute_batch`]).

use std::panic::AssertUnwindSafe;

use futures::channel::oneshot;
use tokio::sync::Semaphore;
use tracing::Instrument;

use super::Run;
use crate::base::call::{ExecutionMode, ScopeKey, ToolCall};
use crate::base::result::ToolExecutionResult;
use crate::base::runtime::ToolRuntime;

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
    pub async fn execute_batch(
        &self,
        calls: Vec<ToolCall>,
        max_parallel: usize,
    ) -> Vec<ToolExecutionResult> {
        let max = max_parallel.clamp(1, Semaphore::MAX_PERMITS.min(u32::MAX as usize));
        let pool = Semaphore::new(max);
        let n = calls.len();
        let (admit_tx, admit_rx) = batons(n);
        let (conclude_tx, conclude_rx) = batons(n);
        let pool = &pool;
        let runs = calls
            .into_iter()
            .zip(admit_tx.into_iter().zip(admit_rx))
            .zip(conclude_tx.into_iter().zip(conclude_rx))
            .map(
                |((call, (admitted, my_turn)), (concluded, my_conclusion))| async move {
                    wait(my_turn).await;
                    let mode = self.execution_mode(&call);
                    let run = Run::enter(self, call);
                    let span = run.span.clone();
                    async move {
                        let draft = match mode {
                            ExecutionMode::Parallel => match run.admit().await {
                                Err(failure) => {
                                    pass(admitted);
                                    failure
                                }
                                Ok(def) => {
                                    let permit = pool.acquire().await.ok();
                                    pass(admitted);
                                    let draft = run.dispatch(&def).await;
                                    drop(permit);
                                    draft
                                }
                            },
                            ExecutionMode::Exclusive => {
                                // Wait for the pool to drain, then run alone; later calls wait.
                                let permit = pool.acquire_many(max as u32).await.ok();
                                let draft = match run.admit().await {
                                    Ok(def) => run.dispatch(&def).await,
                                    Err(failure) => failure,
                                };
                                drop(permit);
                                pass(admitted);
                                draft
                            }
                        };
                        wait(my_conclusion).await;
                        let result = run.conclude(draft).await;
                        pass(concluded);
                        result
                    }
                    .instrument(span)
                    .await
                },
            );
        futures::future::join_all(runs).await
    }
}

/// For `n` calls: call `i` passes its sender on, and waits on the receiver of call `i - 1`
/// (the first waits on nothing).
fn batons(n: usize) -> (Vec<oneshot::Sender<()>>, Vec<Option<oneshot::Receiver<()>>>) {
    let mut senders = Vec::with_capacity(n);
    let mut receivers = Vec::with_capacity(n);
    receivers.push(None);
    for _ in 0..n {
        let (tx, rx) = oneshot::channel();
        senders.push(tx);
        receivers.push(Some(rx));
    }
    receivers.truncate(n);
    (senders, receivers)
}

async fn wait(turn: Option<oneshot::Receiver<()>>) {
    if let Some(rx) = turn {
        // A dropped sender (its call panicked away) also lets the next call go.
        let _ = rx.await;
    }
}

fn pass(tx: oneshot::Sender<()>) {
    let _ = tx.send(());
}
