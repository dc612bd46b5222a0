//! What the pre-run analysis of a `run_code` program costs, beside a run of the same program.
//!
//! On one runtime in `code` mode with a TypeScript code runtime and one trivial tool (`ping`):
//!
//! - `analysis/typescript_200_lines`: the analysis alone (parse with swc, both passes) of a
//!   200-line TypeScript program with 40 call sites of 4 tools in functions, callbacks and
//!   branches, aliases and literal arguments;
//! - `analysis/run_code_200_lines_one_call`: `run_code` of that program through the whole
//!   pipeline (analysis, judging against the SDK, the run), which makes one call;
//! - `analysis/run_code_1_line_one_call`: `run_code` of a one-line program making one call;
//! - `analysis/run_code_200_lines_unanalysed`: the 200-line `run_code` on a runtime whose
//!   analysis is off (`CodeMode::pre_run_analysis(false)`), so that the difference is what the
//!   analysis adds to a run: the program is stripped and parsed once for both (the run takes
//!   the text the analysis stripped), so that is the two passes and the judging, not a parse;
//! - `analysis/python_200_lines`: the Python analysis of a 200-line Python program in the
//!   warm zygote (a round trip to another process).
//!
//! After criterion's report it prints the medians of its own measurement, where each pair
//! compared takes turns going first (whichever goes second finds warmer caches):
//!
//! - the analysis alone, and the parse it shares with the run alone: the difference is the
//!   analysis's own passes (the parse is the run's, made once for both);
//! - the analysed and the unanalysed run of the 200-line program: the difference is what the
//!   analysis adds to a run, end to end.
//!
//! Target of the issue: the TypeScript analysis of a 200-line program well under 0.2 ms, less
//! than a tenth of the run. The figures that answer it are the own passes and what the
//! analysis adds, since the parse it reads is the run's own.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::{Value, json};
use tools_code::analysis::{__shared_parse_only, analyse_typescript};
use tools_code::{CodeMode, CodeRuntime, PythonRuntime, TypeScriptRuntime};
use tools_runtime::{PresentationMode, Scope, ToolCall, ToolRuntime, tool};

/// Return the number given.
#[tool(concurrency_safe)]
fn ping(
    /// Any integer.
    n: i64,
) -> i64 {
    n
}

/// A 200-line TypeScript program: helpers with tool calls that never run, one call that does.
fn typescript_program() -> String {
    let mut lines = vec![
        "const t = tools;".to_owned(),
        "type Entry = { name: string; size: number };".to_owned(),
    ];
    let mut i = 0;
    while lines.len() < 196 {
        lines.push(format!(
            "async function helper{i}(items: Entry[], flag: boolean): Promise<number> {{"
        ));
        lines.push(format!(
            "  const sizes = items.map((e) => e.size * {i}).filter((s) => s > 0);"
        ));
        lines.push(format!("  if (flag) {{ await t.ping({{ n: {i} }}); }}"));
        lines.push(
            "  const more = await Promise.all(items.map(async (e) => tools['ping']({ n: e.size })));"
                .to_owned(),
        );
        lines.push(format!(
            "  return sizes.reduce((a, b) => a + b, 0) + more.length + /* tools.ping */ {i};"
        ));
        lines.push("}".to_owned());
        i += 1;
    }
    lines.push("// the one call that runs".to_owned());
    lines.push("const one = await tools.ping({ n: 1 });".to_owned());
    lines.push("const label: string = `one is ${one}`;".to_owned());
    lines.push("return one;".to_owned());
    lines.join("\n")
}

/// A 200-line Python program of the same shape.
fn python_program() -> String {
    let mut lines = vec!["t = tools".to_owned()];
    let mut i = 0;
    while lines.len() < 196 {
        lines.push(format!("async def helper{i}(items, flag):"));
        lines.push(format!(
            "    sizes = [e['size'] * {i} for e in items if e['size'] > 0]"
        ));
        lines.push(format!("    if flag:\n        await t.ping({{'n': {i}}})"));
        lines.push("    more = [await tools['ping']({'n': e['size']}) for e in items]".to_owned());
        lines.push(format!(
            "    return sum(sizes) + len(more) + {i}  # tools.ping"
        ));
        i += 1;
    }
    lines.push("# the one call that runs".to_owned());
    lines.push("one = await tools.ping({'n': 1})".to_owned());
    lines.push("return one".to_owned());
    lines.join("\n")
}

struct Cases {
    tokio: tokio::runtime::Runtime,
    runtime: ToolRuntime,
    /// The same, with the pre-run analysis off.
    unanalysed: ToolRuntime,
    _unanalysed_plugin: Scope,
    _plugin: Scope,
    python: PythonRuntime,
    /// Python runtimes in `code` mode with the analysis on and off.
    python_on: ToolRuntime,
    python_off: ToolRuntime,
    typescript: String,
    /// The same program with a different last line, for the analysis alone and the unanalysed
    /// runs: the analysis keeps the stripped text of each program for its run (a cache shared
    /// by every runtime of the process, keyed by the exact text), and only the analysed run
    /// may find its program there.
    alone: String,
    unanalysed_program: String,
    python_program: String,
    /// The Python program with other last lines, for the analysed and the unanalysed runs
    /// (the zygote's compiled code is kept for the run by the exact text, like TypeScript's
    /// stripped text).
    python_analysed: String,
    python_unanalysed: String,
}

/// A runtime in `code` mode with `ping`, running `mode`'s programs.
fn runtime_with_ping(mode: CodeMode) -> ToolRuntime {
    let runtime = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(mode)
        .build()
        .unwrap();
    let plugin = runtime.scope();
    std::mem::forget(plugin.register(ping::definition().unwrap()).unwrap());
    std::mem::forget(plugin);
    runtime
}

impl Cases {
    fn new() -> Cases {
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let runtime = ToolRuntime::builder()
            .mode(PresentationMode::Code)
            .extension(CodeMode::new(TypeScriptRuntime::new()))
            .build()
            .unwrap();
        let plugin = runtime.scope();
        std::mem::forget(plugin.register(ping::definition().unwrap()).unwrap());
        let unanalysed = ToolRuntime::builder()
            .mode(PresentationMode::Code)
            .extension(CodeMode::new(TypeScriptRuntime::new()).pre_run_analysis(false))
            .build()
            .unwrap();
        let unanalysed_plugin = unanalysed.scope();
        std::mem::forget(
            unanalysed_plugin
                .register(ping::definition().unwrap())
                .unwrap(),
        );
        let python = PythonRuntime::new();
        tokio.block_on(python.warm_up()).unwrap();
        let python_on = runtime_with_ping(CodeMode::new(PythonRuntime::new()));
        let python_off =
            runtime_with_ping(CodeMode::new(PythonRuntime::new()).pre_run_analysis(false));
        let cases = Cases {
            tokio,
            runtime,
            unanalysed,
            _unanalysed_plugin: unanalysed_plugin,
            _plugin: plugin,
            python,
            typescript: typescript_program(),
            alone: format!("{}\n// analysed alone", typescript_program()),
            unanalysed_program: format!("{}\n// run unanalysed", typescript_program()),
            python_program: python_program(),
            python_analysed: format!("{}\n# run analysed", python_program()),
            python_unanalysed: format!("{}\n# run unanalysed", python_program()),
            python_on,
            python_off,
        };
        // Both programs are analysed, closed, and the TypeScript one runs.
        let found = analyse_typescript(&cases.typescript).unwrap().unwrap();
        assert!(!found.open && found.uses.len() > 60, "{found:?}");
        let found = cases.python_analysis();
        assert!(!found.open && found.uses.len() > 60, "{found:?}");
        assert_eq!(cases.run_code(&cases.typescript)["result"], json!(1));
        assert_eq!(
            cases.run_unanalysed(&cases.unanalysed_program)["result"],
            json!(1)
        );
        let python = cases.run_on(&cases.python_on, &cases.python_analysed);
        assert_eq!(python["result"], json!(1));
        let python = cases.run_on(&cases.python_off, &cases.python_unanalysed);
        assert_eq!(python["result"], json!(1));
        cases
    }

    fn run_code(&self, program: &str) -> Value {
        self.run_on(&self.runtime, program)
    }

    fn run_unanalysed(&self, program: &str) -> Value {
        self.run_on(&self.unanalysed, program)
    }

    fn run_on(&self, runtime: &ToolRuntime, program: &str) -> Value {
        let call = ToolCall::new(
            "outer",
            "run_code",
            json!({"code": program, "description": "bench"}),
        );
        let result = self.tokio.block_on(runtime.execute(call));
        match result.value() {
            Some(value) => value.clone(),
            None => panic!("run_code failed: {}", result.text()),
        }
    }

    fn python_analysis(&self) -> tools_code::analysis::ProgramAnalysis {
        self.tokio
            .block_on(self.python.analyse(&self.python_program))
            .unwrap()
            .unwrap()
    }
}

const ONE_LINE: &str = "return await tools.ping({ n: 1 });";

fn criterion_benches(c: &mut Criterion, cases: &Cases) {
    let mut group = c.benchmark_group("analysis");
    group.bench_function("typescript_200_lines", |b| {
        b.iter(|| black_box(analyse_typescript(black_box(&cases.alone))));
    });
    group.bench_function("run_code_200_lines_one_call", |b| {
        b.iter(|| black_box(cases.run_code(&cases.typescript)));
    });
    group.bench_function("run_code_200_lines_unanalysed", |b| {
        b.iter(|| black_box(cases.run_unanalysed(&cases.unanalysed_program)));
    });
    group.bench_function("run_code_1_line_one_call", |b| {
        b.iter(|| black_box(cases.run_code(ONE_LINE)));
    });
    group.bench_function("python_200_lines", |b| {
        b.iter(|| black_box(cases.python_analysis()));
    });
    group.finish();
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

/// Medians of interleaved runs, so that the figures share the machine's state.
fn summary(cases: &Cases) {
    const ROUNDS: usize = 300;
    let (mut ts, mut run200, mut run1, mut py) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut parse = Vec::new();
    let mut unanalysed = Vec::new();
    for round in 0..ROUNDS {
        // Each pair takes turns going first, so that neither always finds the caches as the
        // other left them.
        let alone = || time(|| drop(black_box(analyse_typescript(&cases.alone))));
        let parse_only = || time(|| _ = black_box(__shared_parse_only(&cases.alone)));
        if round % 2 == 0 {
            ts.push(alone());
            parse.push(parse_only());
        } else {
            parse.push(parse_only());
            ts.push(alone());
        }
        let analysed = || time(|| drop(black_box(cases.run_code(&cases.typescript))));
        let plain = || time(|| drop(black_box(cases.run_unanalysed(&cases.unanalysed_program))));
        if round % 2 == 0 {
            run200.push(analysed());
            unanalysed.push(plain());
        } else {
            unanalysed.push(plain());
            run200.push(analysed());
        }
        run1.push(time(|| drop(black_box(cases.run_code(ONE_LINE)))));
        py.push(time(|| drop(black_box(cases.python_analysis()))));
    }
    let (ts, run200, run1, py) = (median(ts), median(run200), median(run1), median(py));
    let unanalysed = median(unanalysed);
    let parse = median(parse);
    let added = run200.as_secs_f64() - unanalysed.as_secs_f64();
    println!("\nmedians of {ROUNDS} interleaved rounds:");
    println!(
        "  TypeScript analysis alone, 200 lines (strip and parse included): {:>9.1} µs",
        micros(ts)
    );
    println!(
        "    of which the parse the run makes anyway: {:>9.1} µs",
        micros(parse)
    );
    println!(
        "    the analysis's own passes:             {:>9.1} µs (target well under 200 µs)",
        micros(ts) - micros(parse)
    );
    println!(
        "  run_code, 200-line program, one call:     {:>9.1} µs",
        micros(run200)
    );
    println!(
        "  the same, analysis off:                   {:>9.1} µs",
        micros(unanalysed)
    );
    println!(
        "  what the analysis adds to that run:       {:>9.1} µs (the parse is the run's own; the two runs take turns)",
        added * 1e6
    );
    println!(
        "  run_code, one-line program, one call:     {:>9.1} µs",
        micros(run1)
    );
    let own = ts.as_secs_f64() - parse.as_secs_f64();
    println!(
        "  own passes / run of the same program:     {:>9.1} % (target under 10 %)",
        100.0 * own / run200.as_secs_f64()
    );
    println!(
        "  own passes / one-line one-call run:       {:>9.1} %",
        100.0 * own / run1.as_secs_f64()
    );
    println!(
        "  analysis with its parse / run of the same program: {:>5.1} %",
        100.0 * ts.as_secs_f64() / run200.as_secs_f64()
    );
    println!(
        "  Python analysis in the zygote, 200 lines: {:>9.1} µs (with the compile the run then skips)",
        micros(py)
    );

    // Python runs take milliseconds: fewer rounds, the two runs taking turns.
    const PYTHON_ROUNDS: usize = 40;
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for round in 0..PYTHON_ROUNDS {
        let analysed = || {
            time(|| {
                drop(black_box(
                    cases.run_on(&cases.python_on, &cases.python_analysed),
                ))
            })
        };
        let plain = || {
            time(|| {
                drop(black_box(
                    cases.run_on(&cases.python_off, &cases.python_unanalysed),
                ))
            })
        };
        if round % 2 == 0 {
            on.push(analysed());
            off.push(plain());
        } else {
            off.push(plain());
            on.push(analysed());
        }
    }
    let (on, off) = (median(on), median(off));
    println!("medians of {PYTHON_ROUNDS} rounds, Python (zygote, sandboxed):");
    println!(
        "  run_code, 200-line program, one call:     {:>9.1} µs",
        micros(on)
    );
    println!(
        "  the same, analysis off:                   {:>9.1} µs",
        micros(off)
    );
    println!(
        "  what the analysis adds to that run:       {:>9.1} µs (the run takes the code the zygote compiled from the analysed tree)",
        micros(on) - micros(off)
    );
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let cases = Cases::new();
    let mut c = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
        .sample_size(30);
    criterion_benches(&mut c, &cases);
    c.final_summary();
    summary(&cases);
}
