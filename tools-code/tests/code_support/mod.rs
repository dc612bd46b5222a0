//! A scripted [`CodeHost`] shared by the Code Mode runtime tests, their limits, and (in
//! `runtime`) the runtimes under test with the helpers that run programs on them.
#![allow(dead_code)]

mod programs;
mod runtime;

pub use programs::*;
pub use runtime::*;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use std::sync::Mutex;

use serde_json::{Value, json};
use tokio::sync::{Barrier, Notify};
use tools_code::{CallReply, CodeHost, CodeLimits, Determinism, FnHost, ToolCallFailure};

/// Tools, by name:
/// - `fail` fails with the message `boom`;
/// - `never` never answers (dropping its future, polled or not, counts in `never_dropped`);
/// - `barrier` waits until `BARRIER_SIZE` calls are waiting together (so it only answers if
///   the calls overlap), counting the peak of calls waiting in `peak`, then answers `true`;
/// - every other name answers `{"tool": name, "args": args}` at once.
#[derive(Debug)]
pub struct TestHost {
    pub names: Vec<String>,
    pub calls: AtomicUsize,
    pub never_started: Notify,
    pub never_dropped: Arc<AtomicUsize>,
    pub barrier: Barrier,
    pub in_flight: Arc<AtomicUsize>,
    pub peak: Arc<AtomicUsize>,
}

/// How many `barrier` calls must wait together.
pub const BARRIER_SIZE: usize = 50;

impl TestHost {
    pub fn new() -> Arc<Self> {
        Self::with_names(&[])
    }

    pub fn with_names(extra: &[&str]) -> Arc<Self> {
        let mut names: Vec<String> = ["echo", "fail", "never", "barrier"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        names.extend(extra.iter().map(|s| (*s).to_owned()));
        Arc::new(TestHost {
            names,
            calls: AtomicUsize::new(0),
            never_started: Notify::new(),
            never_dropped: Arc::new(AtomicUsize::new(0)),
            barrier: Barrier::new(BARRIER_SIZE),
            in_flight: Arc::new(AtomicUsize::new(0)),
            peak: Arc::new(AtomicUsize::new(0)),
        })
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

struct CountDrop(Arc<AtomicUsize>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The host of one run over `host`'s tools (holding `Arc<TestHost>`, so the calls' futures can
/// borrow the barrier for `'static`).
pub fn shared(host: Arc<TestHost>) -> Arc<dyn CodeHost> {
    let names = host.names.clone();
    Arc::new(FnHost::new(names, move |name: &str, args: Value| {
        let host = host.clone();
        host.calls.fetch_add(1, Ordering::SeqCst);
        let name = name.to_owned();
        let guard = (name == "never").then(|| CountDrop(host.never_dropped.clone()));
        async move {
            let _guard = guard;
            match name.as_str() {
                "fail" => Err(ToolCallFailure::new("boom")),
                "never" => {
                    host.never_started.notify_one();
                    std::future::pending::<()>().await;
                    Ok(Value::Null)
                }
                "barrier" => {
                    let now = host.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    host.peak.fetch_max(now, Ordering::SeqCst);
                    host.barrier.wait().await;
                    host.in_flight.fetch_sub(1, Ordering::SeqCst);
                    Ok(Value::Bool(true))
                }
                _ => Ok(json!({ "tool": name, "args": args })),
            }
        }
    }))
}

/// Limits for hostile programs that some other limit (memory, output, syntax, ...) must stop:
/// a small memory limit and a deadline long enough never to fire first on a loaded machine.
pub fn hostile_limits() -> CodeLimits {
    CodeLimits::default()
        .with_timeout(Duration::from_secs(20))
        .with_memory_bytes(32 * 1024 * 1024)
}

/// Limits for hostile programs the deadline must stop: a short deadline keeps the suite fast.
pub fn deadline_limits() -> CodeLimits {
    hostile_limits().with_timeout(Duration::from_millis(300))
}

/// Generous limits for ordinary programs (long enough never to fire on a loaded CI machine).
pub fn ordinary_limits() -> CodeLimits {
    CodeLimits::default().with_timeout(Duration::from_secs(20))
}

/// The child processes of `pid` (threads included).
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether `pid` is gone (or only a zombie waiting for init).
pub fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits (up to 5 s) for a killed process to disappear; a SIGKILL is delivered asynchronously.
pub async fn eventually_gone(pid: u32) -> bool {
    for _ in 0..500 {
        if is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// A host that replays runs ([`CodeHost::determinism`]): it gives the program `seed`, `clock`
/// and `entropy`, keeps every clock reading and draw of random bytes the program reports, and
/// notes at each call how many readings it had then. One tool, `echo`, answers its arguments
/// at once.
pub struct ReplayHost {
    pub seed: u64,
    pub clock: Vec<f64>,
    pub entropy: Vec<Vec<u8>>,
    pub readings: Mutex<Vec<f64>>,
    pub draws: Mutex<Vec<Vec<u8>>>,
    /// How many readings had been reported when each call reached the host.
    pub at_calls: Mutex<Vec<usize>>,
}

impl ReplayHost {
    pub fn new(seed: u64, clock: &[f64]) -> Arc<Self> {
        Self::with_entropy(seed, clock, Vec::new())
    }

    pub fn with_entropy(seed: u64, clock: &[f64], entropy: Vec<Vec<u8>>) -> Arc<Self> {
        Arc::new(ReplayHost {
            seed,
            clock: clock.to_vec(),
            entropy,
            readings: Mutex::new(Vec::new()),
            draws: Mutex::new(Vec::new()),
            at_calls: Mutex::new(Vec::new()),
        })
    }

    pub fn readings(&self) -> Vec<f64> {
        self.readings.lock().unwrap().clone()
    }

    pub fn draws(&self) -> Vec<Vec<u8>> {
        self.draws.lock().unwrap().clone()
    }

    pub fn at_calls(&self) -> Vec<usize> {
        self.at_calls.lock().unwrap().clone()
    }
}

impl CodeHost for ReplayHost {
    fn tool_names(&self) -> Vec<String> {
        vec!["echo".to_owned()]
    }

    fn call(&self, _name: &str, args: Value, reply: CallReply) {
        let seen = self.readings.lock().unwrap().len();
        self.at_calls.lock().unwrap().push(seen);
        reply.send(Ok(args));
    }

    fn determinism(&self) -> Option<Determinism> {
        Some(Determinism {
            seed: self.seed,
            clock: self.clock.clone(),
            entropy: self.entropy.clone(),
        })
    }

    fn clock_read(&self, ms: f64) {
        self.readings.lock().unwrap().push(ms);
    }

    fn entropy_read(&self, bytes: &[u8]) {
        self.draws.lock().unwrap().push(bytes.to_vec());
    }
}
