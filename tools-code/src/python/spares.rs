//! The pool of spare run children: forked by the zygote ahead of time, each waiting for one
//! program, so that no fork is on a run's critical path.

use std::sync::Arc;

use super::process::{Spare, Zygote};

/// How many spare children the runtime keeps. Two, so that when runs come back to back the
/// next one finds a spare ready while the one forked after the previous run is still being
/// made; one spare alone made such runs wait for a fork each.
pub(super) const SPARES: usize = 2;

/// The spare children: forked by the zygote ahead of time, each waiting for one program.
#[derive(Default)]
pub(super) struct Spares {
    pub(super) ready: std::sync::Mutex<std::collections::VecDeque<Spare>>,
    /// Held while spares are being forked, so that a run that finds none ready waits for that
    /// fork rather than forking another child, and [`PythonRuntime::spare_pids`] sees them.
    ///
    /// [`PythonRuntime::spare_pids`]: super::PythonRuntime::spare_pids
    pub(super) forking: Arc<tokio::sync::Mutex<()>>,
}

impl Spares {
    /// The oldest spare of `zygote` that still waits; the others that do not (their zygote
    /// died, they were killed) are released as they drop.
    fn pop_ready(&self, zygote: &Zygote) -> Option<Spare> {
        let mut ready = self
            .ready
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while let Some(spare) = ready.pop_front() {
            if spare.is_ready(zygote) {
                return Some(spare);
            }
        }
        None
    }

    pub(super) fn len(&self) -> usize {
        self.ready
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// Keeps `spare` unless there are enough already (then it drops and is released).
    pub(super) fn push(&self, spare: Spare) {
        let mut ready = self
            .ready
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ready.len() < SPARES {
            ready.push_back(spare);
        }
    }

    /// A child for a run: a spare if one is ready, else the one being forked, else a fresh fork.
    pub(super) async fn take(&self, zygote: &Zygote) -> Result<Spare, String> {
        if let Some(spare) = self.pop_ready(zygote) {
            return Ok(spare);
        }
        let _forking = self.forking.lock().await;
        if let Some(spare) = self.pop_ready(zygote) {
            return Ok(spare);
        }
        zygote.spare().await
    }

    /// Forks spares until there are [`SPARES`], in the background. The fork lock is taken
    /// before this returns when it is free (so the next run and [`PythonRuntime::spare_pids`]
    /// wait for these forks rather than miss them). The task holds only the pool and the
    /// zygote: if the runtime is dropped meanwhile, the new spares drop with the task and are
    /// released.
    ///
    /// [`PythonRuntime::spare_pids`]: super::PythonRuntime::spare_pids
    pub(super) fn refill(self: &Arc<Self>, zygote: Arc<Zygote>) {
        if self.len() >= SPARES {
            return;
        }
        let locked = self.forking.clone().try_lock_owned().ok();
        let spares = self.clone();
        tokio::spawn(async move {
            let _forking = match locked {
                Some(locked) => locked,
                None => spares.forking.clone().lock_owned().await,
            };
            while spares.len() < SPARES && zygote.is_alive() {
                match zygote.spare().await {
                    Ok(spare) => spares.push(spare),
                    Err(_) => break,
                }
            }
        });
    }
}
