//! What a Code Mode run costs, per runtime, against the alternatives.
//!
//! Three programs, each a fresh run against a host that answers every call at once with its
//! arguments:
//!
//! - `one_call`: one tool call;
//! - `sequential_100`: 100 calls, each awaited before the next;
//! - `concurrent_1000`: 1,000 calls under `Promise.all` / `asyncio.gather`.
//!
//! Compared side by side in one run:
//!
//! - TypeScript (QuickJS, type stripping included) against a Node.js `worker_threads` worker
//!   started per run with the same calls bridged over `postMessage`
//!   (`benches/code-runtime/node-worker.mjs`, or `NODE_WORKER_SCRIPT`, run with `node` from
//!   `PATH` or `TOOLS_NODE`);
//! - Python through the zygote, sandboxed (the default, `SandboxPolicy::Require`) and without
//!   the sandbox (`SandboxPolicy::Off`, the runtime before the sandbox), against a plain
//!   interpreter process per run (no sandbox).
//!
//! After criterion's report the bench prints the medians of its own measurement, the ratios,
//! the bridge overhead per call (`(sequential_100 - one_call) / 99`), and what the per-run
//! memory account (a cgroup per run child) costs a one-call Python run: sandboxed and
//! unsandboxed runs with it and without it (`pretend_missing(SandboxLayer::MemoryAccount)`),
//! taking turns; then a sandboxed one-call Python run back to back and after idle against its
//! target, beside the figures of an older build of this bench when `CODE_RUNTIME_BASELINE`
//! names one (measured in turns in the same run). Targets on the reference machine: a one-call
//! TypeScript run at most 0.3 ms, at most 10 µs per call, a Python run through the zygote at
//! most 5 ms, a sandboxed one-call Python run at most 1.5x the unsandboxed one and at most 2 ms.
//!
//! TypeScript is also compared with its floor: bare `rquickjs` (the version the runtime uses)
//! making a runtime and a context, evaluating the same program with a host function standing
//! in for the tool, and dropping both ([`floor_once`]); the summary prints each program's
//! ratio to it and the ratio per sub-call.
//!
//! `-- --callgrind` prints TypeScript's instruction counts beside its floor's (a process making
//! one run, a warm one-call run, a sequential sub-call), each from runs of this bench under
//! `valgrind --tool=callgrind` (which must be on the `PATH`).
//!
//! `CODE_RUNTIME_PROFILE` runs one thing instead: `ts_wall` a one-call TypeScript run against
//! its floor in wall-clock time, back to back and after 20 ms idle (also part of the summary);
//! `NAME:N` a TypeScript program N times (a loop
//! for `perf`), `floor/NAME:N` its floor N times (instruction counts of both under
//! `valgrind --tool=callgrind`, the difference between N and 1 runs divided by N - 1, are the
//! figures the ratios are claimed from); `python:N[:GAP_MS]` N sandboxed one-call Python runs with the phase trace on,
//! and prints where their time goes (the tables in `python/mod.rs`, "What a run costs");
//! `python_times:N:GAP_MS` the median of N such runs, untraced (what a newer build reads from
//! the baseline); `python_compare` only the comparison against the baseline;
//! `python_back_to_back` only issue #38's figures (a sandboxed one-call run back to back beside
//! `Off` back to back and a spawned `python3`, and sustained runs a second), which the summary
//! prints last.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tools_code::{
    CallReply, CodeHost, CodeLimits, CodeRuntime, PythonMode, PythonRuntime, SandboxLayer,
    SandboxPolicy, TypeScriptRuntime,
};

/// Answers every call at once with its arguments.
struct Echo;

impl CodeHost for Echo {
    fn tool_names(&self) -> Vec<String> {
        vec!["echo".to_owned()]
    }

    fn call(&self, _name: &str, args: Value, reply: CallReply) {
        reply.send(Ok(args));
    }
}

const TS: [(&str, &str); 3] = [
    (
        "one_call",
        "const r: { n: number } = await tools.echo({ n: 1 });\nreturn r;",
    ),
    (
        "sequential_100",
        "let s: number = 0;\nfor (let i = 0; i < 100; i++) {\n  const r: { n: number } = await tools.echo({ n: i });\n  s += r.n;\n}\nreturn s;",
    ),
    (
        "concurrent_1000",
        "const r: unknown[] = await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.echo({ n: i })));\nreturn r.length;",
    ),
];

/// A one-call program that logs an object, which the host does not describe itself: the run
/// loads the prelude's lazy half. Profiled (`one_call_logged:N`) and counted by `--callgrind`
/// against the floor of `one_call` (the floor has no console), not timed by criterion.
const TS_LOGGED: (&str, &str) = (
    "one_call_logged",
    "const r: { n: number } = await tools.echo({ n: 1 });\nconsole.log(r);\nreturn r;",
);

/// The floor of each TypeScript program: the same programs as JavaScript (nothing to strip),
/// for [`floor_once`].
const FLOOR: [(&str, &str); 3] = [
    (
        "one_call",
        "(async () => {\n  const r = await echo({ n: 1 });\n  return r;\n})()",
    ),
    (
        "sequential_100",
        "(async () => {\n  let s = 0;\n  for (let i = 0; i < 100; i++) {\n    const r = await echo({ n: i });\n    s += r.n;\n  }\n  return s;\n})()",
    ),
    (
        "concurrent_1000",
        "(async () => {\n  const r = await Promise.all(Array.from({ length: 1000 }, (_, i) => echo({ n: i })));\n  return r.length;\n})()",
    ),
];

/// The floor of a TypeScript run, what no Code Mode run can go below: the same `rquickjs`
/// making a runtime and a context with the intrinsics a Code Mode context has, evaluating the program with a host function `echo`
/// standing in for the tool (it answers with its argument, as [`Echo`] does), driving its
/// promise to the end, and dropping both. No prelude, no limits, no stripping, no thread.
fn floor_once(program: &str) {
    let runtime = rquickjs::Runtime::new().unwrap();
    let context = rquickjs::Context::custom::<FloorIntrinsics>(&runtime).unwrap();
    context.with(|ctx| {
        let echo = rquickjs::Function::new(ctx.clone(), floor_echo).unwrap();
        ctx.globals().set("echo", echo).unwrap();
        let promise: rquickjs::Promise<'_> = ctx.eval(program).unwrap();
        let _value: rquickjs::Value<'_> = promise.finish().unwrap();
    });
}

/// The intrinsics of the floor's context: those a Code Mode context gets (`Intrinsics` in
/// `src/typescript/engine.rs`; keep the two alike), so both make the same context.
type FloorIntrinsics = (
    rquickjs::context::intrinsic::Date,
    rquickjs::context::intrinsic::Eval,
    rquickjs::context::intrinsic::RegExpCompiler,
    rquickjs::context::intrinsic::RegExp,
    rquickjs::context::intrinsic::Json,
    rquickjs::context::intrinsic::Proxy,
    rquickjs::context::intrinsic::MapSet,
    rquickjs::context::intrinsic::Promise,
    rquickjs::context::intrinsic::WeakRef,
);

/// The floor's stand-in for the tool: answers with its argument.
fn floor_echo<'js>(value: rquickjs::Value<'js>) -> rquickjs::Value<'js> {
    value
}

/// The median time of `n` floor runs of `program`, after one more.
fn floor_median(program: &str, n: usize) -> Duration {
    floor_once(program);
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            floor_once(program);
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

const PY: [(&str, &str); 3] = [
    ("one_call", "r = await tools.echo({'n': 1})\nreturn r"),
    (
        "sequential_100",
        "s = 0\nfor i in range(100):\n    r = await tools.echo({'n': i})\n    s += r['n']\nreturn s",
    ),
    (
        "concurrent_1000",
        "import asyncio\nr = await asyncio.gather(*(tools.echo({'n': i}) for i in range(1000)))\nreturn len(r)",
    ),
];

/// `(min, median, p90)` of `times`.
fn spread(mut times: Vec<Duration>) -> (Duration, Duration, Duration) {
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    (times[0], at(0.5), at(0.9))
}

/// A one-call TypeScript run against its floor in wall-clock time, `n` runs each taking turns,
/// back to back and after `idle` without work (the way a model's calls come): min, median and
/// 90th percentile of each, and the ratios of the medians (`CODE_RUNTIME_PROFILE=ts_wall`).
fn ts_wall_clock(rt: &tokio::runtime::Runtime, n: usize, idle: Duration) {
    let ts = TypeScriptRuntime::new();
    let (program, floor) = (TS[0].1, FLOOR[0].1);
    // Warm both (the pool's first engine, the allocator's pages).
    for _ in 0..20 {
        run_once(rt, &ts, program);
        floor_once(floor);
    }
    println!(
        "\nTypeScript one-call run against its floor, wall clock, {n} runs each taking turns (min / median / p90):"
    );
    for (label, gap) in [("back to back", Duration::ZERO), ("after idle", idle)] {
        let mut ours = Vec::with_capacity(n);
        let mut theirs = Vec::with_capacity(n);
        for _ in 0..n {
            std::thread::sleep(gap);
            let start = Instant::now();
            run_once(rt, &ts, program);
            ours.push(start.elapsed());
            std::thread::sleep(gap);
            let start = Instant::now();
            floor_once(floor);
            theirs.push(start.elapsed());
        }
        let (o, t) = (spread(ours), spread(theirs));
        let label = if gap.is_zero() {
            label.to_owned()
        } else {
            format!("{label} ({} ms)", gap.as_millis())
        };
        println!(
            "  {label:<18} ours {:.3} / {:.3} / {:.3} ms   floor {:.3} / {:.3} / {:.3} ms   median ours/floor = {:.2}x",
            ms(o.0),
            ms(o.1),
            ms(o.2),
            ms(t.0),
            ms(t.1),
            ms(t.2),
            o.1.as_secs_f64() / t.1.as_secs_f64()
        );
    }
}

fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn run_once(rt: &tokio::runtime::Runtime, runtime: &dyn CodeRuntime, program: &str) {
    let limits = CodeLimits::default();
    let outcome =
        rt.block_on(runtime.run(program, Arc::new(Echo), &limits, CancellationToken::new()));
    assert!(outcome.is_ok(), "{outcome:?}");
}

fn median_of(
    rt: &tokio::runtime::Runtime,
    runtime: &dyn CodeRuntime,
    program: &str,
    n: usize,
) -> Duration {
    run_once(rt, runtime, program);
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            run_once(rt, runtime, program);
            start.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn criterion_benches(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let ts = TypeScriptRuntime::new();
    let mut group = c.benchmark_group("typescript");
    for (name, program) in TS {
        group.bench_function(name, |b| b.iter(|| run_once(rt, &ts, program)));
    }
    for (name, program) in FLOOR {
        group.bench_function(format!("floor/{name}"), |b| b.iter(|| floor_once(program)));
    }
    group.finish();

    let zygote = PythonRuntime::new();
    rt.block_on(zygote.warm_up()).unwrap();
    let unsandboxed = PythonRuntime::new().with_sandbox(SandboxPolicy::Off);
    rt.block_on(unsandboxed.warm_up()).unwrap();
    let spawn = PythonRuntime::new()
        .with_mode(PythonMode::SpawnPerRun)
        .with_sandbox(SandboxPolicy::Off);
    let mut group = c.benchmark_group("python");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    for (name, program) in PY {
        group.bench_function(format!("zygote/{name}"), |b| {
            b.iter(|| run_once(rt, &zygote, program));
        });
        group.bench_function(format!("zygote_unsandboxed/{name}"), |b| {
            b.iter(|| run_once(rt, &unsandboxed, program));
        });
        group.bench_function(format!("spawn/{name}"), |b| {
            b.iter(|| run_once(rt, &spawn, program));
        });
    }
    group.finish();
}

fn node_medians() -> Result<Value, String> {
    let script = std::env::var_os("NODE_WORKER_SCRIPT").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../benches/code-runtime/node-worker.mjs")
        },
        PathBuf::from,
    );
    let node = std::env::var_os("TOOLS_NODE").unwrap_or_else(|| "node".into());
    let output = Command::new(&node)
        .arg(&script)
        .arg("30")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", PathBuf::from(&node).display()))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    serde_json::from_slice(&output.stdout).map_err(|e| format!("unreadable node output: {e}"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn summary(rt: &tokio::runtime::Runtime) {
    let n = 60;
    println!("\n=== Code Mode runtimes: medians of {n} fresh runs each (host answers at once) ===");

    let ts = TypeScriptRuntime::new();
    let ts_medians: Vec<(&str, Duration)> = TS
        .iter()
        .map(|(name, program)| (*name, median_of(rt, &ts, program, n)))
        .collect();
    let floors: Vec<Duration> = FLOOR
        .iter()
        .map(|(_, program)| floor_median(program, n))
        .collect();
    println!(
        "\nTypeScript (QuickJS, fresh engine per run, stripping included) vs its floor (bare rquickjs, the same program with a host function for the tool):"
    );
    for ((name, ours), floor) in ts_medians.iter().zip(&floors) {
        println!(
            "  {name:<16} run_code engine {:>9.3} ms   floor {:>9.3} ms   ours/floor = {:>5.2}x",
            ms(*ours),
            ms(*floor),
            ours.as_secs_f64() / floor.as_secs_f64()
        );
    }
    let per_call =
        |a: Duration, b: Duration, calls: f64| (a.as_secs_f64() - b.as_secs_f64()) / calls * 1e6;
    let ours_call = per_call(ts_medians[1].1, ts_medians[0].1, 99.0);
    let floor_call = per_call(floors[1], floors[0], 99.0);
    println!(
        "  per sequential sub-call: ours {ours_call:.2} µs, floor {floor_call:.2} µs, ours/floor = {:.2}x",
        ours_call / floor_call
    );
    ts_wall_clock(rt, 200, Duration::from_millis(20));
    let node = node_medians();
    println!(
        "\nTypeScript (QuickJS, fresh engine per run, stripping included) vs a Node.js worker_threads worker per run:"
    );
    for (name, ours) in &ts_medians {
        match &node {
            Ok(node) => {
                let theirs = node["median_ms"][name].as_f64().unwrap_or(f64::NAN);
                println!(
                    "  {name:<16} quickjs {:>9.3} ms   node worker {:>9.3} ms   node/quickjs = {:>7.1}x",
                    ms(*ours),
                    theirs,
                    theirs / ms(*ours)
                );
            }
            Err(_) => println!("  {name:<16} quickjs {:>9.3} ms", ms(*ours)),
        }
    }
    match &node {
        Ok(node) => println!("  (node {})", node["node"].as_str().unwrap_or("?")),
        Err(error) => println!("  node comparison skipped: {error}"),
    }
    let one = ts_medians[0].1;
    let seq = ts_medians[1].1;
    let conc = ts_medians[2].1;
    println!(
        "  bridge overhead per call: sequential {:.2} µs, concurrent {:.2} µs (target <= 10 µs); one-call run {:.3} ms (target <= 0.3 ms)",
        (seq.as_secs_f64() - one.as_secs_f64()) / 99.0 * 1e6,
        (conc.as_secs_f64() - one.as_secs_f64()) / 999.0 * 1e6,
        ms(one)
    );

    let zygote = PythonRuntime::new();
    rt.block_on(zygote.warm_up()).unwrap();
    let unsandboxed = PythonRuntime::new().with_sandbox(SandboxPolicy::Off);
    rt.block_on(unsandboxed.warm_up()).unwrap();
    let spawn = PythonRuntime::new()
        .with_mode(PythonMode::SpawnPerRun)
        .with_sandbox(SandboxPolicy::Off);
    let py_n = 30;
    println!(
        "\nPython: zygote fork per run, sandboxed and not, vs a plain interpreter process per run ({py_n} runs each):"
    );
    println!(
        "  {}",
        rt.block_on(zygote.sandbox_report())
            .unwrap()
            .to_string()
            .replace('\n', "\n  ")
    );
    let mut zygote_one = Duration::ZERO;
    let mut unsandboxed_one = Duration::ZERO;
    for (name, program) in PY {
        let z = median_of(rt, &zygote, program, py_n);
        let u = median_of(rt, &unsandboxed, program, py_n);
        let s = median_of(rt, &spawn, program, py_n);
        if name == "one_call" {
            zygote_one = z;
            unsandboxed_one = u;
        }
        println!(
            "  {name:<16} sandboxed zygote {:>9.3} ms   unsandboxed zygote {:>9.3} ms   sandboxed/unsandboxed = {:>5.2}x   spawn {:>9.3} ms   spawn/unsandboxed zygote = {:>6.1}x",
            ms(z),
            ms(u),
            z.as_secs_f64() / u.as_secs_f64(),
            ms(s),
            s.as_secs_f64() / u.as_secs_f64()
        );
    }
    println!(
        "  one-call run through the sandboxed zygote: {:.3} ms, {:.2}x the unsandboxed {:.3} ms (target <= 1.5x)",
        ms(zygote_one),
        zygote_one.as_secs_f64() / unsandboxed_one.as_secs_f64(),
        ms(unsandboxed_one)
    );
    println!(
        "  one-call run through the zygote: {:.3} ms (target <= 5 ms); interpreter {}",
        ms(zygote_one),
        zygote
            .interpreter_path()
            .map_or_else(|| "?".to_owned(), |p| p.display().to_string())
    );
    account_cost(rt, &zygote, &unsandboxed, py_n * 2);
    one_call_against_baseline(rt);
    python_back_to_back(rt);
}

/// `n` one-call runs of `runtime` (warmed up, ten runs first), each after `gap` of idle: their
/// times, sorted, and the CPU time per run, in ms, of this process and of the zygote with its
/// reaped children (from `/proc`, in clock ticks; a spawned interpreter is a reaped child of
/// this process).
fn times_with_cpu(
    rt: &tokio::runtime::Runtime,
    runtime: &PythonRuntime,
    n: usize,
    gap: Duration,
) -> (Vec<Duration>, f64) {
    rt.block_on(runtime.warm_up()).unwrap();
    let program = PY[0].1;
    for _ in 0..10 {
        run_once(rt, runtime, program);
    }
    std::thread::sleep(Duration::from_millis(100));
    let zygote = rt.block_on(runtime.zygote_pid()).map(|p| p.to_string());
    let ticks = || cpu_ticks("self") + zygote.as_deref().map_or(0, cpu_ticks);
    let before = ticks();
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            std::thread::sleep(gap);
            let start = Instant::now();
            run_once(rt, runtime, program);
            start.elapsed()
        })
        .collect();
    // Until the last runs' children are reaped.
    std::thread::sleep(Duration::from_millis(100));
    let after = ticks();
    times.sort();
    // SAFETY: plain sysconf query.
    let tick_ms = 1e3 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (times, (after - before) as f64 * tick_ms / n as f64)
}

/// The machine's load averages over 1, 5 and 15 minutes, from `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Sandboxed one-call runs a second, for `window`, from `callers` callers each running one
/// after another on a warmed-up runtime.
fn sustained(
    rt: &tokio::runtime::Runtime,
    runtime: &PythonRuntime,
    callers: usize,
    window: Duration,
) -> f64 {
    rt.block_on(runtime.warm_up()).unwrap();
    let program = PY[0].1;
    for _ in 0..10 {
        run_once(rt, runtime, program);
    }
    let start = Instant::now();
    let done: usize = rt.block_on(async {
        let loops = (0..callers).map(|_| async {
            let mut runs = 0;
            while start.elapsed() < window {
                let outcome = runtime
                    .run(
                        program,
                        Arc::new(Echo),
                        &CodeLimits::default(),
                        CancellationToken::new(),
                    )
                    .await;
                assert!(outcome.is_ok(), "{outcome:?}");
                runs += 1;
            }
            runs
        });
        futures::future::join_all(loops).await.into_iter().sum()
    });
    done as f64 / start.elapsed().as_secs_f64()
}

/// Issue #38's figures, in one run: a sandboxed one-call Python run back to back (each right
/// after the previous one, so each waits for the spare made after the run before the last)
/// beside `SandboxPolicy::Off` back to back, in rounds that take turns (so the machine's load
/// falls on both alike), and a spawned `python3` per run (`SpawnPerRun`, `Off`), with the CPU
/// each costs per run; then how many sandboxed runs a second the machine sustains (one caller,
/// and two). Also `CODE_RUNTIME_PROFILE=python_back_to_back`.
fn python_back_to_back(rt: &tokio::runtime::Runtime) {
    let rounds = 5;
    let n = 40;
    println!(
        "\nPython, a one-call run back to back, {rounds} rounds of {n} runs taking turns (median of the rounds' medians and p90s; CPU per run: host + zygote + run processes); load average {}:",
        load_average()
    );
    let sandboxed = PythonRuntime::new();
    let off = PythonRuntime::new().with_sandbox(SandboxPolicy::Off);
    // Per runtime: the rounds' medians, p90s and CPU per run, in ms.
    let mut figures = [
        [Vec::new(), Vec::new(), Vec::new()],
        [Vec::new(), Vec::new(), Vec::new()],
    ];
    for _ in 0..rounds {
        for (runtime, figures) in [&sandboxed, &off].into_iter().zip(figures.iter_mut()) {
            let (times, cpu) = times_with_cpu(rt, runtime, n, Duration::ZERO);
            figures[0].push(ms(times[n / 2]));
            figures[1].push(ms(times[n * 9 / 10]));
            figures[2].push(cpu);
        }
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let [ours, theirs] = figures.map(|f| [median(&f[0]), median(&f[1]), median(&f[2])]);
    for (label, [m, p90, cpu]) in [("sandboxed (Require)", ours), ("Off", theirs)] {
        println!("  {label:<22}{m:>7.3} ms  p90 {p90:>7.3} ms  CPU {cpu:>5.2} ms");
    }
    drop(off);
    let spawn_n = 20;
    let spawn = PythonRuntime::new()
        .with_mode(PythonMode::SpawnPerRun)
        .with_sandbox(SandboxPolicy::Off);
    let (times, cpu) = times_with_cpu(rt, &spawn, spawn_n, Duration::ZERO);
    println!(
        "  spawned python3 (Off) {:>7.3} ms  p90 {:>7.3} ms  CPU {cpu:>5.2} ms  ({spawn_n} runs)",
        ms(times[spawn_n / 2]),
        ms(times[spawn_n * 9 / 10])
    );
    let verdict = |met: bool| if met { "met" } else { "not met" };
    println!(
        "  sandboxed/Off = {:.2}x (target <= 1.2x: {}); sandboxed {:.3} ms (target <= 1.5 ms: {})",
        ours[0] / theirs[0],
        verdict(ours[0] <= theirs[0] * 1.2),
        ours[0],
        verdict(ours[0] <= 1.5)
    );
    let window = Duration::from_secs(3);
    let one = sustained(rt, &sandboxed, 1, window);
    let two = sustained(rt, &sandboxed, 2, window);
    println!(
        "  sustained, sandboxed, over {} s: {one:.0} runs/s from one caller, {two:.0} runs/s from two (target >= 200 runs/s: {}); load average after: {}",
        window.as_secs(),
        verdict(one.max(two) >= 200.0),
        load_average()
    );
}

/// The sandboxed one-call run against the target (at most 2 ms) and, when `CODE_RUNTIME_BASELINE`
/// names an older build of this bench (one with `CODE_RUNTIME_PROFILE=python_times`), against
/// that build's figure, measured in turns in this one run (each round: the baseline's runs in
/// its own process, then this build's, on a fresh runtime each). Two ways: back to back (each
/// run right after the previous one, so each waits for the spare made after the run before the
/// last: what bounds it is the CPU a spare costs), and after idle (30 ms between runs, the way
/// a model's calls come: a spare is ready, so this is a run's own path).
fn one_call_against_baseline(rt: &tokio::runtime::Runtime) {
    let rounds = 5;
    let n = 40;
    let baseline = std::env::var_os("CODE_RUNTIME_BASELINE").map(PathBuf::from);
    println!(
        "\nPython, a sandboxed one-call run, {rounds} rounds of {n} runs (median of the rounds' medians); load average {}:",
        load_average()
    );
    for (label, gap) in [
        ("back to back", Duration::ZERO),
        ("after 30 ms idle", Duration::from_millis(30)),
    ] {
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        let mut cpu = Vec::new();
        for _ in 0..rounds {
            if let Some(path) = &baseline {
                let output = Command::new(path)
                    .env(
                        "CODE_RUNTIME_PROFILE",
                        format!("python_times:{n}:{}", gap.as_millis()),
                    )
                    .output();
                let median = output.ok().and_then(|o| {
                    let text = String::from_utf8_lossy(&o.stdout).into_owned();
                    text.split_whitespace().nth(1)?.parse::<f64>().ok()
                });
                theirs.extend(median);
            }
            let (times, per_run) = one_call_times_with_cpu(rt, n, gap);
            ours.push(ms(times[n / 2]));
            cpu.push(per_run);
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        let ours = median(ours).unwrap_or(f64::NAN);
        let cpu = median(cpu).unwrap_or(f64::NAN);
        let verdict = if ours <= 2.0 { "met" } else { "not met" };
        match median(theirs) {
            Some(theirs) => println!(
                "  {label:<17} {ours:>7.3} ms   baseline {theirs:>7.3} ms   this/baseline = {:>4.2}x   target <= 2 ms: {verdict}   (CPU per run, host + zygote + run children: {cpu:.1} ms)",
                ours / theirs
            ),
            None => println!(
                "  {label:<17} {ours:>7.3} ms   target <= 2 ms: {verdict}   (CPU per run, host + zygote + run children: {cpu:.1} ms)"
            ),
        }
    }
    match &baseline {
        Some(path) => println!(
            "  baseline: {}; load average after: {}",
            path.display(),
            load_average()
        ),
        None => println!(
            "  (set CODE_RUNTIME_BASELINE to an older build of this bench, from `cargo bench --no-run`, to print its figures beside these)"
        ),
    }
}

/// What the memory account costs a one-call run: each runtime against the same runtime
/// without it (`BestEffort` / `Off` with the layer pretended missing), runs taking turns so
/// that the machine's load falls on both alike.
fn account_cost(
    rt: &tokio::runtime::Runtime,
    sandboxed: &PythonRuntime,
    unsandboxed: &PythonRuntime,
    n: usize,
) {
    let program = PY[0].1;
    let without = |policy| {
        let runtime = PythonRuntime::new()
            .with_sandbox(policy)
            .pretend_missing(SandboxLayer::MemoryAccount);
        rt.block_on(runtime.warm_up()).unwrap();
        runtime
    };
    let sandboxed_without = without(SandboxPolicy::BestEffort);
    let unsandboxed_without = without(SandboxPolicy::Off);
    let pairs = [
        ("sandboxed", sandboxed, &sandboxed_without),
        ("unsandboxed", unsandboxed, &unsandboxed_without),
    ];
    println!(
        "\nPython, the memory account (a cgroup per run child) on a one-call run, {n} runs each, taking turns:"
    );
    let mut medians = Vec::new();
    for (label, with, without) in pairs {
        run_once(rt, with, program);
        run_once(rt, without, program);
        let mut times = [Vec::with_capacity(n), Vec::with_capacity(n)];
        for _ in 0..n {
            for (i, runtime) in [with, without].into_iter().enumerate() {
                let start = Instant::now();
                run_once(rt, runtime, program);
                times[i].push(start.elapsed());
            }
        }
        let [a, b] = times.map(|mut t| {
            t.sort();
            t[t.len() / 2]
        });
        println!(
            "  {label:<12} with the account {:>8.3} ms   without {:>8.3} ms   with/without = {:>5.2}x",
            ms(a),
            ms(b),
            a.as_secs_f64() / b.as_secs_f64()
        );
        medians.push((a, b));
    }
    let (sandboxed_with, sandboxed_without) = medians[0];
    let (unsandboxed_with, unsandboxed_without) = medians[1];
    println!(
        "  sandboxed/unsandboxed: {:.2}x with the account (both have it), {:.2}x without (target <= 1.5x)",
        sandboxed_with.as_secs_f64() / unsandboxed_with.as_secs_f64(),
        sandboxed_without.as_secs_f64() / unsandboxed_without.as_secs_f64()
    );
}

/// The phases of a sandboxed one-call Python run, each `(label, from, to)`: the time from the
/// trace line `from` to the line `to` of the same run child (see `python/trace.rs`).
const CRITICAL_PATH: [(&str, &str, &str); 13] = [
    ("take a spare", "host_run_start", "host_spare_taken"),
    (
        "set the memory limit (cgroup)",
        "host_spare_taken",
        "host_limit_set",
    ),
    (
        "program frame sent -> received",
        "host_limit_set",
        "program_received",
    ),
    (
        "  of which: spare not ready yet",
        "host_limit_set",
        "loop_built",
    ),
    ("RLIMIT_AS, /proc reads", "program_received", "limits_set"),
    ("compile the program", "limits_set", "compiled"),
    ("start it, first call sent", "compiled", "call_sent"),
    (
        "call round trip (host answers)",
        "call_sent",
        "reply_received",
    ),
    ("program returns", "reply_received", "program_returned"),
    ("result checked and sent", "program_returned", "result_sent"),
    ("result frame -> host", "result_sent", "host_result"),
    ("host after the result", "host_result", "host_run_end"),
    (
        "whole run (caller's view)",
        "host_run_start",
        "host_run_end",
    ),
];

/// The phases of making a spare (off the caller's path), as in [`CRITICAL_PATH`]. The spare is
/// the run's first process itself (B, PID 1 of the run's PID namespace), cloned by the zygote.
const SPARE_MAKING: [(&str, &str, &str); 19] = [
    (
        "host: cgroup made (mkdirs, pids.max, opens)",
        "host_spare_requested",
        "host_cgroup_made",
    ),
    (
        "host -> zygote fork request",
        "host_cgroup_made",
        "zygote_fork_received",
    ),
    (
        "zygote: clone B, answer",
        "zygote_fork_received",
        "zygote_fork_answered",
    ),
    (
        "zygote answer -> host",
        "zygote_fork_answered",
        "host_spare_forked",
    ),
    (
        "B: first step after the clone",
        "zygote_fork_received",
        "b_start",
    ),
    ("B: join the cgroup", "b_start", "b_joined"),
    (
        "B: close fds, death signal, pgid",
        "b_joined",
        "b_ready_to_sandbox",
    ),
    (
        "B: mount and IPC namespaces",
        "b_ready_to_sandbox",
        "b_namespaces",
    ),
    (
        "B: /tmp, /dev/shm, /proc mounts",
        "b_namespaces",
        "b_mounts",
    ),
    ("B: run user, user namespace, NPROC", "b_mounts", "b_user"),
    ("B: no_new_privs, Landlock", "b_user", "b_landlock"),
    ("B: drop capabilities", "b_landlock", "b_capabilities"),
    ("B: seccomp", "b_capabilities", "b_seccomp"),
    ("B: ready frame", "b_seccomp", "ready_sent"),
    ("B: event loop (Run)", "ready_sent", "loop_built"),
    (
        "spare made: request -> event loop built",
        "host_spare_requested",
        "loop_built",
    ),
    (
        "spare made -> taken (negative: not ready)",
        "loop_built",
        "host_spare_taken",
    ),
    (
        "B: rehearsal (after 5 ms idle)",
        "rehearsal_start",
        "rehearsal_end",
    ),
    ("B: whole life, clone -> exit", "b_start", "child_exit"),
];

/// What happens after the result (off the caller's path), as in [`CRITICAL_PATH`].
const AFTER: [(&str, &str, &str); 4] = [
    ("child: result sent -> exit", "result_sent", "child_exit"),
    (
        "host: result -> release sent",
        "host_result",
        "host_release_sent",
    ),
    (
        "release -> zygote",
        "host_release_sent",
        "zygote_release_received",
    ),
    (
        "zygote: release -> reaped",
        "zygote_release_received",
        "zygote_reaped",
    ),
];

/// `CODE_RUNTIME_PROFILE=python:N[:GAP_MS]` runs N sandboxed one-call Python runs (GAP_MS of
/// idle between runs, none by default) with the phase trace on, and prints each phase's median
/// and 90th percentile.
fn profile_python(rt: &tokio::runtime::Runtime, spec: &str) {
    if spec == "python_back_to_back" {
        python_back_to_back(rt);
        return;
    }
    let mut parts = spec.split(':').skip(1);
    let n: usize = parts.next().unwrap_or("200").parse().unwrap();
    let gap = Duration::from_millis(parts.next().unwrap_or("0").parse().unwrap());
    let path = std::env::var_os("TOOLS_CODE_PY_TRACE").expect("set by main");
    let _ = std::fs::remove_file(&path);
    let runtime = PythonRuntime::new();
    rt.block_on(runtime.warm_up()).unwrap();
    let program = PY[0].1;
    for _ in 0..10 {
        run_once(rt, &runtime, program);
    }
    std::thread::sleep(Duration::from_millis(200));
    // What the warm-up runs wrote (the host holds the file open: it is read from here on).
    let skip = std::fs::metadata(&path).map_or(0, |m| m.len());
    let zygote = rt.block_on(runtime.zygote_pid()).unwrap();
    let cpu_before = [cpu_ticks("self"), cpu_ticks(&zygote.to_string())];
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        std::thread::sleep(gap);
        let start = Instant::now();
        run_once(rt, &runtime, program);
        times.push(start.elapsed());
    }
    std::thread::sleep(Duration::from_millis(300));
    let cpu_after = [cpu_ticks("self"), cpu_ticks(&zygote.to_string())];
    drop(runtime);
    times.sort();
    let bytes = std::fs::read(&path).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes[usize::try_from(skip).unwrap()..]).into_owned();
    // Per run child, per label: the time, and (from the runner) the writing process and its
    // CPU time.
    type Line<'a> = (u64, Option<(&'a str, u64)>);
    let mut runs: std::collections::HashMap<&str, std::collections::HashMap<&str, Line<'_>>> =
        std::collections::HashMap::new();
    for line in text.lines() {
        let mut fields = line.split(' ');
        let (Some(ns), Some(pid), Some(label)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Ok(ns) = ns.parse::<u64>() else { continue };
        let cpu = match (fields.next(), fields.next().and_then(|c| c.parse().ok())) {
            (Some(writer), Some(cpu)) => Some((writer, cpu)),
            _ => None,
        };
        if pid != "0" {
            runs.entry(pid)
                .or_default()
                .entry(label)
                .or_insert((ns, cpu));
        }
    }
    // Only the runs measured (and the spares made for them).
    let measured: Vec<_> = runs
        .values()
        .filter(|r| r.contains_key("host_run_start") && r.contains_key("host_run_end"))
        .collect();
    println!(
        "sandboxed one-call Python run, {n} runs, {} ms between runs: median {:.3} ms, p90 {:.3} ms ({} runs traced)",
        gap.as_millis(),
        ms(times[n / 2]),
        ms(times[n * 9 / 10]),
        measured.len()
    );
    // SAFETY: plain sysconf query.
    let tick_ms = 1e3 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    println!(
        "CPU time per run: host {:.3} ms, zygote and run children {:.3} ms (reaped children's included)",
        (cpu_after[0] - cpu_before[0]) as f64 * tick_ms / n as f64,
        (cpu_after[1] - cpu_before[1]) as f64 * tick_ms / n as f64,
    );
    let table = |title: &str, steps: &[(&str, &str, &str)], all: bool| {
        println!(
            "\n{title}\n  {:<46} {:>9} {:>9} {:>9} {:>6}",
            "phase", "median", "p90", "CPU", "runs"
        );
        let median = |mut d: Vec<f64>| {
            d.sort_by(f64::total_cmp);
            (!d.is_empty()).then(|| (d[d.len() / 2], d[d.len() * 9 / 10]))
        };
        for (label, from, to) in steps {
            let pairs: Vec<(&Line<'_>, &Line<'_>)> = runs
                .values()
                .filter(|r| all || r.contains_key("host_run_start"))
                .filter_map(|r| Some((r.get(from)?, r.get(to)?)))
                .collect();
            let wall = median(
                pairs
                    .iter()
                    .map(|(a, b)| (b.0 as f64 - a.0 as f64) / 1e6)
                    .collect(),
            );
            // CPU time where one process wrote both lines.
            let cpu = median(
                pairs
                    .iter()
                    .filter_map(|(a, b)| match (a.1, b.1) {
                        (Some((wa, ca)), Some((wb, cb))) if wa == wb => {
                            Some((cb as f64 - ca as f64) / 1e6)
                        }
                        _ => None,
                    })
                    .collect(),
            );
            let cpu = cpu.map_or_else(|| "-".to_owned(), |(m, _)| format!("{m:.3} ms"));
            match wall {
                Some((m, p90)) => println!(
                    "  {label:<46} {m:>6.3} ms {p90:>6.3} ms {cpu:>9} {:>6}",
                    pairs.len()
                ),
                None => println!("  {label:<46} {:>9}", "-"),
            }
        }
    };
    // The whole-life CPU time the zygote reads from `wait4` (its exit included), per run.
    let mut lives: Vec<f64> = runs
        .values()
        .filter_map(|r| Some(r.get("spare_rusage")?.1?.1 as f64 / 1e6))
        .collect();
    lives.sort_by(f64::total_cmp);
    if !lives.is_empty() {
        println!(
            "CPU of the run's first process (B), whole life (from the zygote's wait4): median {:.3} ms ({} runs)",
            lives[lives.len() / 2],
            lives.len()
        );
    }
    table("the caller's path (ms):", &CRITICAL_PATH, false);
    table(
        "making a spare (off the caller's path):",
        &SPARE_MAKING,
        true,
    );
    table("after the result (off the caller's path):", &AFTER, false);
}

/// One-call runs through a fresh sandboxed runtime (warmed up, ten runs first): `n` runs, each
/// after `gap` of idle; their times, sorted.
fn one_call_times(rt: &tokio::runtime::Runtime, n: usize, gap: Duration) -> Vec<Duration> {
    one_call_times_with_cpu(rt, n, gap).0
}

/// [`one_call_times`], and the CPU time per run, in ms, of this process and of the zygote with
/// its reaped children (from `/proc`, in clock ticks: meaningful over many runs).
fn one_call_times_with_cpu(
    rt: &tokio::runtime::Runtime,
    n: usize,
    gap: Duration,
) -> (Vec<Duration>, f64) {
    times_with_cpu(rt, &PythonRuntime::new(), n, gap)
}

/// `CODE_RUNTIME_PROFILE=python_times:N:GAP_MS`: N sandboxed one-call runs, GAP_MS of idle
/// before each; prints `median_ms M p90_ms P` (read by a newer bench comparing against this
/// one, see `CODE_RUNTIME_BASELINE`).
fn python_times(rt: &tokio::runtime::Runtime, spec: &str) {
    let mut parts = spec.split(':');
    let n: usize = parts.next().unwrap_or("30").parse().unwrap();
    let gap = Duration::from_millis(parts.next().unwrap_or("0").parse().unwrap());
    let times = one_call_times(rt, n, gap);
    println!(
        "median_ms {:.4} p90_ms {:.4}",
        ms(times[n / 2]),
        ms(times[n * 9 / 10])
    );
}

/// utime + stime + cutime + cstime of process `pid` (or `self`), in clock ticks.
fn cpu_ticks(pid: &str) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rfind(')').map_or("", |i| &stat[i + 2..]);
    // Fields 14-17 of stat; `after` starts at field 3.
    after
        .split(' ')
        .skip(11)
        .take(4)
        .filter_map(|f| f.parse::<i64>().ok())
        .sum()
}

/// `CODE_RUNTIME_PROFILE=NAME:N` runs the TypeScript program `NAME` N times and prints the
/// median and the mean, nothing else: a loop to put under `perf` or `valgrind`.
fn profile(rt: &tokio::runtime::Runtime, spec: &str) {
    if spec == "ts_wall" {
        ts_wall_clock(rt, 500, Duration::from_millis(20));
        return;
    }
    if spec == "python_compare" {
        one_call_against_baseline(rt);
        return;
    }
    if let Some(spec) = spec.strip_prefix("python_times:") {
        python_times(rt, spec);
        return;
    }
    if spec.starts_with("python") {
        profile_python(rt, spec);
        return;
    }
    let (name, n) = spec.split_once(':').unwrap_or((spec, "2000"));
    let n: usize = n.parse().unwrap();
    if let Some(name) = name.strip_prefix("floor/") {
        // The floor alone, `n` runs (for `valgrind --tool=callgrind` beside `NAME:N`).
        let program = FLOOR.iter().find(|(k, _)| *k == name).unwrap().1;
        let start = Instant::now();
        for _ in 0..n {
            floor_once(program);
        }
        println!(
            "floor/{name}: mean {:.3} ms over {n} runs",
            ms(start.elapsed()) / n as f64
        );
        return;
    }
    // Exactly `n` runs, as the floor makes (no warm-up run: `NAME:1` is a process that makes
    // one run).
    let program = TS
        .iter()
        .chain([&TS_LOGGED])
        .find(|(k, _)| *k == name)
        .unwrap()
        .1;
    // One worker thread, as the floor runs on one: how many threads a pool grows to (each with
    // the engine it built for its next run) depends on timing, and would move the counts.
    let ts = TypeScriptRuntime::with_max_threads(1);
    let start = Instant::now();
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let run = Instant::now();
            run_once(rt, &ts, program);
            run.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "{name}: median {:.3} ms, mean {:.3} ms over {n} runs",
        ms(times[times.len() / 2]),
        ms(start.elapsed()) / n as f64
    );
    // A process of several runs ends with the engine for a next run built (under callgrind,
    // fifty times slower, too) before the pool is dropped, so its count does not depend on
    // whether the pool got to that first. A process of one run drops the runtime at once, as
    // a one-shot program does.
    if n > 1 {
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The instructions (all threads) of this bench run as `CODE_RUNTIME_PROFILE=spec` under
/// `valgrind --tool=callgrind`.
fn instructions(spec: &str) -> u64 {
    let out = std::env::temp_dir().join(format!(
        "code-runtime-cg-{}-{}.out",
        std::process::id(),
        spec.replace(['/', ':'], "_")
    ));
    let status = Command::new("valgrind")
        .args(["-q", "--tool=callgrind", "--dump-instr=no"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(std::env::current_exe().unwrap())
        .env("CODE_RUNTIME_PROFILE", spec)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("valgrind on the PATH");
    assert!(status.success(), "{spec} under callgrind: {status}");
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    text.lines()
        .find_map(|l| l.strip_prefix("totals:"))
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("no totals for {spec}"))
}

/// `--callgrind`: TypeScript's instructions beside its floor's, each from processes run under
/// callgrind: a warm run ((41 runs - 21 runs) / 20), the same for a run that loads the prelude's
/// lazy half (`one_call_logged`, against the floor of `one_call`), a sub-call
/// ((`sequential_100` - `one_call`, 21 runs each) / (21 x 99)), and a process that makes one
/// run and exits (its whole count, the process's start included).
fn callgrind_against_floor() {
    let n = 21;
    let count = |name: &str, runs: usize| {
        (
            instructions(&format!("{name}:{runs}")),
            instructions(&format!("floor/{name}:{runs}")),
        )
    };
    let (one_ours, one_floor) = count("one_call", 1);
    let (many_ours, many_floor) = count("one_call", n);
    let (more_ours, more_floor) = count("one_call", 2 * n - 1);
    let (seq_ours, seq_floor) = count("sequential_100", n);
    let logged_many = instructions(&format!("one_call_logged:{n}"));
    let logged_more = instructions(&format!("one_call_logged:{}", 2 * n - 1));
    let warm = |more: u64, many: u64| more.saturating_sub(many) as f64 / (n - 1) as f64;
    let sub = |seq: u64, many: u64| seq.saturating_sub(many) as f64 / (n * 99) as f64;
    let rows = [
        (
            "a process making one run",
            one_ours as f64,
            one_floor as f64,
        ),
        (
            "a warm one-call run",
            warm(more_ours, many_ours),
            warm(more_floor, many_floor),
        ),
        (
            "a warm run loading the lazy half",
            warm(logged_more, logged_many),
            warm(more_floor, many_floor),
        ),
        (
            "a sequential sub-call",
            sub(seq_ours, many_ours),
            sub(seq_floor, many_floor),
        ),
    ];
    println!(
        "TypeScript against its floor (bare rquickjs), instructions of all threads (callgrind):"
    );
    println!(
        "  {:<34} {:>14} {:>14} {:>7}",
        "", "tools-code", "floor", "ratio"
    );
    for (label, ours, floor) in rows {
        println!(
            "  {label:<34} {ours:>14.0} {floor:>14.0} {:>6.2}x",
            ours / floor
        );
    }
}

fn main() {
    if std::env::var("CODE_RUNTIME_PROFILE").is_ok_and(|s| s.starts_with("python:"))
        && std::env::var_os("TOOLS_CODE_PY_TRACE").is_none()
    {
        let path = std::env::temp_dir().join(format!("code-py-trace-{}", std::process::id()));
        // SAFETY: no other thread runs yet (the tokio runtime is built below).
        unsafe { std::env::set_var("TOOLS_CODE_PY_TRACE", path) };
    }
    if std::env::args().any(|a| a == "--callgrind") {
        callgrind_against_floor();
        return;
    }
    let rt = tokio_runtime();
    if let Ok(spec) = std::env::var("CODE_RUNTIME_PROFILE") {
        profile(&rt, &spec);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c, &rt);
    summary(&rt);
    c.final_summary();
}
