//! What resuming a paused Code Mode run costs, against running the same program fresh.
//!
//! One runtime in `code` mode with the TypeScript runtime, durable approvals over a
//! `MemoryStore` (the store's own cost is `tools-approvals`' bench), a trivial tool `ping` and
//! a tool `gate` whose approval the service defers. The program makes N calls of `ping`, one
//! after another, then one of `gate`, for N = 0, 10 and 100:
//!
//! - `fresh/N`: `run_code` on a runtime whose service approves `gate` at once: the N calls go
//!   through the bridge and the whole pipeline;
//! - `resume/N`: `resume` of the same program paused at `gate` (the pause itself is not timed):
//!   the N calls are answered from the journal, then `gate` runs live.
//!
//! It prints the medians side by side and the cost of one call each way: the slope between
//! N = 0 and N = 100. The target: a journaled call replays in under 10 µs (TypeScript).
//! `cargo bench -p tools-code --bench resume`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use serde_json::json;
use tools_code::{CodeMode, TypeScriptRuntime};
use tools_runtime::approvals::{ApprovalKey, DurableApprovals, MemoryStore};
use tools_runtime::hooks::{Approval, PreDecision};
use tools_runtime::{PresentationMode, Registration, Scope, ToolCall, ToolRuntime, tool};

/// Return the number given.
#[tool(concurrency_safe)]
fn ping(
    /// Any integer.
    n: i64,
) -> i64 {
    n
}

/// Pass when a person says so.
#[tool]
fn gate() -> bool {
    true
}

const SIZES: [u64; 3] = [0, 10, 100];
const SAMPLES: usize = 101;

fn program(n: u64) -> String {
    format!(
        "let s: number = 0;\nfor (let i = 0; i < {n}; i++) {{\n  s += await tools.ping({{ n: i }});\n}}\nawait tools.gate({{}});\nreturn s;"
    )
}

struct Setup {
    rt: ToolRuntime,
    _plugin: Scope,
    _regs: Vec<Registration>,
}

fn setup(defer: bool) -> Setup {
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(TypeScriptRuntime::new()))
        .durable_approvals(DurableApprovals::new(
            MemoryStore::new(),
            ApprovalKey::new([3u8; 32]).unwrap(),
        ))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let mut regs = vec![
        plugin.register(ping::definition().unwrap()).unwrap(),
        plugin.register(gate::definition().unwrap()).unwrap(),
        plugin
            .on_pre_execute(|exec, d| {
                if exec.name() == "gate" {
                    PreDecision::ask("gate")
                } else {
                    d
                }
            })
            .unwrap(),
    ];
    regs.push(if defer {
        plugin
            .set_approval(|_exec, _| async { Approval::later() })
            .unwrap()
    } else {
        plugin
            .set_approval(|_exec, _| async { Approval::Approved })
            .unwrap()
    });
    Setup {
        rt,
        _plugin: plugin,
        _regs: regs,
    }
}

fn call(code: &str) -> ToolCall {
    ToolCall::new(
        "c",
        "run_code",
        json!({"code": code, "description": "bench"}),
    )
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let fresh = setup(false);
    let paused = setup(true);
    // Every size in every round, so that a slow stretch of the machine weighs on all of them
    // alike (the per-call figures are slopes between sizes).
    let codes: Vec<String> = SIZES.iter().map(|n| program(*n)).collect();
    let mut times: Vec<(Vec<Duration>, Vec<Duration>)> =
        vec![(Vec::new(), Vec::new()); SIZES.len()];
    tokio.block_on(async {
        // Warm both paths.
        for code in &codes {
            for _ in 0..5 {
                let _ = fresh.rt.execute(call(code)).await;
            }
        }
        for i in 0..SAMPLES + 5 {
            for ((n, code), (f, r)) in SIZES.iter().zip(&codes).zip(times.iter_mut()) {
                // One fresh run, one pause (untimed), one resume.
                let start = Instant::now();
                let done = fresh.rt.execute(call(code)).await;
                let fresh_time = start.elapsed();
                assert_eq!(
                    done.value().unwrap()["result"],
                    json!(n * n.saturating_sub(1) / 2)
                );
                let pending = paused.rt.execute(call(code)).await;
                let handle = pending.pending.unwrap().handle().unwrap().clone();
                let start = Instant::now();
                let resumed = paused.rt.resume(&handle, Approval::Approved).await.unwrap();
                let resume_time = start.elapsed();
                assert_eq!(
                    resumed.value().unwrap()["result"],
                    done.value().unwrap()["result"]
                );
                if i >= 5 {
                    f.push(fresh_time);
                    r.push(resume_time);
                }
            }
        }
    });
    let rows: Vec<(u64, Duration, Duration)> = SIZES
        .iter()
        .zip(times)
        .map(|(n, (f, r))| (*n, median(f), median(r)))
        .collect();
    println!(
        "\nresume of a paused run_code against the same program fresh (TypeScript, medians of {SAMPLES}):"
    );
    println!("{:>6}  {:>12}  {:>12}", "calls", "fresh", "resume");
    for (n, f, r) in &rows {
        println!("{n:>6}  {:>9.1} µs  {:>9.1} µs", us(*f), us(*r));
    }
    let (_, f0, r0) = rows[0];
    let (n, fl, rl) = rows[rows.len() - 1];
    #[allow(clippy::cast_precision_loss)]
    let per = |a: Duration, b: Duration| (us(b) - us(a)) / n as f64;
    println!(
        "one call: executed {:.2} µs, replayed from the journal {:.2} µs (target: under 10 µs)",
        per(f0, fl),
        per(r0, rl)
    );
}
