//! The Python Code Mode runtime: what only it does (its language's values and syntax, the
//! child processes, the zygote and its spares, the protocol with the child); what every runtime
//! does alike is in `code_conformance`.
//!
//! The interpreter comes from `TOOLS_PYTHON` or `python3` on `PATH`; without one these tests fail
//! (the runtime reports an `internal` failure naming the interpreter). Every hostile test
//! asserts the exact failure kind and then that the runtime is healthy: the next run works and
//! the zygote has no child left.
#![cfg(feature = "python")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::code_support;

use std::sync::Arc;
use std::time::Duration;

use code_support::{
    BARRIER_SIZE, PATCH_JSON, ReplayHost, TestHost, TestRuntime, assert_cut,
    assert_refused_both_ways, children_of, deadline_limits, eventually_gone, fail, hostile_limits,
    is_gone, ok, ordinary_limits, run_with, shared,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_code::{
    CodeFailureKind, CodeLanguage, CodeRuntime, PythonMode, PythonRuntime, SandboxPolicy,
};

fn runtime() -> PythonRuntime {
    PythonRuntime::for_tests()
}

/// A runtime without the sandbox, for the tests that watch a program's processes from the
/// host by the pids the program sees, or run host binaries (`sleep`, `setsid`): under the
/// sandbox the program is PID 1 of its own PID namespace and sees no host binary
/// (`python_sandbox.rs` tests the same escapes there).
fn unsandboxed() -> PythonRuntime {
    PythonRuntime::new().with_sandbox(SandboxPolicy::Off)
}

// --- ordinary behaviour -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_and_return_value() {
    let rt = runtime();
    assert_eq!(rt.language(), CodeLanguage::Python);
    let done = ok(
        &rt,
        "import sys\nprint('point', {'x': 1}, [1, 'two'], None)\nprint('a\\nb')\nsys.stderr.write('err line\\n')\nprint('no newline', end='')\nreturn {'sum': 3, 'list': [True, None, 's'], 'pair': (1, 2)}",
    )
    .await;
    assert_eq!(
        done.logs,
        vec![
            "point {'x': 1} [1, 'two'] None",
            "a",
            "b",
            "err line",
            "no newline"
        ]
    );
    assert_eq!(
        done.result,
        Some(json!({ "sum": 3, "list": [true, null, "s"], "pair": [1, 2] }))
    );
    let path = rt.interpreter_path().expect("resolved");
    assert!(path.is_absolute(), "{path:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_start_when_made_not_when_awaited() {
    let rt = runtime();
    let host = TestHost::new();
    // Neither call is awaited before both are made; each waits for the other at the barrier
    // only if both were sent before the first await.
    let program = format!(
        "calls = [tools.barrier({{}}) for _ in range({BARRIER_SIZE})]\nreturn [await c for c in calls]"
    );
    let done = run_with(&rt, &host, &program, &ordinary_limits())
        .await
        .unwrap();
    assert_eq!(done.result, Some(json!(vec![true; BARRIER_SIZE])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_per_run_mode_works_and_leaves_nothing() {
    let rt = unsandboxed().with_mode(PythonMode::SpawnPerRun);
    assert_eq!(rt.mode(), PythonMode::SpawnPerRun);
    let done = ok(&rt, "import os\nprint('hi')\nreturn os.getpid()").await;
    assert_eq!(done.logs, vec!["hi"]);
    let pid = u32::try_from(done.result.unwrap().as_u64().unwrap()).unwrap();
    assert!(
        is_gone(pid),
        "the spawned interpreter {pid} is still running"
    );
    let failure = fail(&rt, "while True:\n    pass", &deadline_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Timeout);
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_interpreter_is_an_internal_failure() {
    let rt = PythonRuntime::with_interpreter("/nonexistent/python3");
    let failure = fail(&rt, "return 1", &ordinary_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Internal);
    assert!(
        failure.message.contains("/nonexistent/python3"),
        "{}",
        failure.message
    );
}

#[test]
fn a_tokio_runtime_without_io_is_reported_not_a_panic() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let python = runtime();
    let host = TestHost::new();
    let outcome = rt.block_on(python.run(
        "return 1",
        shared(host),
        &ordinary_limits(),
        CancellationToken::new(),
    ));
    let failure = outcome.unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Internal);
    assert!(
        failure.message.contains("enable_all"),
        "{}",
        failure.message
    );
}

// --- hostile programs -----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_calls_and_replies_both_ways_at_once_do_not_block() {
    // 200 calls of 100 kB each, all sent before any reply is read, each answered with its
    // 100 kB: both directions fill their socket buffers at the same time.
    let rt = runtime();
    let done = ok(
        &rt,
        "import asyncio\nr = await asyncio.gather(*(tools.echo({'s': str(i) * 100000}) for i in range(200)))\nreturn sum(len(x['args']['s']) for x in r)",
    )
    .await;
    let expected: usize = (0..200).map(|i: usize| i.to_string().len() * 100_000).sum();
    assert_eq!(done.result, Some(json!(expected)));
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_is_empty_and_started_processes_do_not_survive() {
    // Python is resource-limited, not sandboxed: the program can start processes, but they
    // die with the run, and it sees none of the host's environment.
    let rt = unsandboxed();
    let done = ok(
        &rt,
        "import os, subprocess\nchild = subprocess.Popen(['sleep', '30'])\nreturn {'env': sorted(k for k in os.environ if k != 'LC_CTYPE'), 'child': child.pid, 'cwd': os.getcwd()}",
    )
    .await;
    let result = done.result.unwrap();
    assert_eq!(result["env"], json!([]));
    assert_eq!(result["cwd"], json!("/"));
    let pid = u32::try_from(result["child"].as_u64().unwrap()).unwrap();
    assert!(
        eventually_gone(pid).await,
        "the program's subprocess {pid} survived the run: {:?}",
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
    );
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protocol_cannot_be_corrupted_by_writes() {
    let rt = runtime();
    let done = ok(
        &rt,
        "import os, sys\nos.write(1, b'\\x00\\x00\\x00\\x05junk')\nos.write(2, b'more junk')\nsys.__stdout__.write('raw')\nprint('fine')\nreturn 'ok'",
    )
    .await;
    assert_eq!(done.logs, vec!["fine"]);
    assert_eq!(done.result, Some(json!("ok")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_named_then_constructor_and_proto() {
    let rt = runtime();
    let host = TestHost::with_names(&["then", "constructor", "__proto__", "__class__"]);
    let done = run_with(
        &rt,
        &host,
        "a = await tools.then({})\nb = await tools.constructor({})\nc = await tools['__proto__']({})\nd = await tools['__class__']({})\nreturn [a['tool'], b['tool'], c['tool'], d['tool'], len(dir(tools))]",
        &ordinary_limits(),
    )
    .await
    .unwrap();
    assert_eq!(
        done.result,
        Some(json!(["then", "constructor", "__proto__", "__class__", 8]))
    );
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_runtime_stops_the_zygote_and_its_spares() {
    let rt = runtime();
    rt.warm_up().await.unwrap();
    let zygote = rt.zygote_pid().await.unwrap();
    rt.assert_healthy().await;
    let spares = rt.spare_pids().await;
    assert!(!spares.is_empty());
    drop(rt);
    for spare in spares {
        assert!(
            eventually_gone(spare).await,
            "the spare {spare} outlived its runtime"
        );
    }
    assert!(
        eventually_gone(zygote).await,
        "the zygote {zygote} outlived its runtime"
    );
}

// --- the spare children ---------------------------------------------------------------------

fn kill9(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -9 {pid} failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spares_run_the_next_programs_and_new_spares_follow() {
    let rt = unsandboxed();
    rt.warm_up().await.unwrap();
    let spares = rt.spare_pids().await;
    assert_eq!(spares.len(), 2, "warm_up forks two spares: {spares:?}");
    let zygote = rt.zygote_pid().await.unwrap();
    for spare in &spares {
        assert!(children_of(zygote).contains(spare));
    }
    let done = ok(&rt, "import os\nreturn os.getpid()").await;
    assert_eq!(
        done.result,
        Some(json!(spares[0])),
        "the run did not use the oldest spare"
    );
    let next = rt.spare_pids().await;
    assert_eq!(next.len(), 2, "{next:?}");
    assert_eq!(next[0], spares[1]);
    assert!(!next.contains(&spares[0]));
    assert!(
        eventually_gone(spares[0]).await,
        "the used child {} was not reaped",
        spares[0]
    );
    // Each run gets its own process: no two runs share one.
    let again = ok(&rt, "import os\nreturn os.getpid()").await;
    assert_eq!(again.result, Some(json!(spares[1])));
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spares_that_died_are_replaced() {
    let rt = unsandboxed();
    rt.warm_up().await.unwrap();
    let spares = rt.spare_pids().await;
    for spare in &spares {
        kill9(*spare);
        assert!(eventually_gone(*spare).await);
    }
    let done = ok(&rt, "import os\nreturn os.getpid()").await;
    let pid = u32::try_from(done.result.unwrap().as_u64().unwrap()).unwrap();
    assert!(!spares.contains(&pid), "the run used a dead spare");
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zygote_that_died_is_replaced_and_its_spares_die_with_it() {
    let rt = runtime();
    rt.warm_up().await.unwrap();
    let zygote = rt.zygote_pid().await.unwrap();
    let spares = rt.spare_pids().await;
    kill9(zygote);
    for spare in &spares {
        assert!(
            eventually_gone(*spare).await,
            "the spare {spare} outlived its zygote"
        );
    }
    let done = ok(&rt, "return 7").await;
    assert_eq!(done.result, Some(json!(7)));
    let replaced = rt.zygote_pid().await.unwrap();
    assert_ne!(replaced, zygote);
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_hold_in_a_spare_that_rehearsed() {
    // A spare that waited rehearses a run before its program comes; the limits of the real
    // run still apply in full.
    let rt = runtime();
    rt.warm_up().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let failure = fail(
        &rt,
        "x = []\nwhile True:\n    x.append(' ' * 1000000)",
        &hostile_limits(),
    )
    .await;
    assert_eq!(failure.kind, CodeFailureKind::Memory, "{}", failure.message);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let failure = fail(&rt, "while True:\n    pass", &deadline_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Timeout);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let failure = fail(
        &rt,
        "def f(n):\n    return f(n + 1)\nf(0)",
        &hostile_limits(),
    )
    .await;
    assert_eq!(
        failure.kind,
        CodeFailureKind::Runtime,
        "{}",
        failure.message
    );
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_future_is_dropped_leaves_nothing() {
    let rt = runtime();
    rt.warm_up().await.unwrap();
    let host = TestHost::new();
    let run = rt.run(
        "await tools.never({})",
        shared(host.clone()),
        &ordinary_limits(),
        CancellationToken::new(),
    );
    let task = tokio::spawn(run);
    host.never_started.notified().await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    rt.assert_healthy().await;
}

#[test]
fn a_runtime_dropped_outside_tokio_leaves_nothing() {
    // The spare is released by the zygote's control thread, which needs no tokio runtime.
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let rt = runtime();
    tokio.block_on(rt.warm_up()).unwrap();
    let zygote = tokio.block_on(rt.zygote_pid()).unwrap();
    let spares = tokio.block_on(rt.spare_pids());
    assert!(!spares.is_empty());
    drop(tokio);
    drop(rt);
    let gone = |pid: u32| {
        (0..500).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            is_gone(pid)
        })
    };
    for spare in spares {
        assert!(gone(spare), "the spare {spare} outlived its runtime");
    }
    assert!(gone(zygote), "the zygote {zygote} outlived its runtime");
}

// --- conversions ignore what the program patched (issue 18, item 6) --------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subclasses_and_odd_values_are_refused_at_depth() {
    // Each value sits two levels deep, in arguments and in the result; none of the methods the
    // program overrode runs (each would raise).
    let rt = runtime();
    let classes = "def boom(*a, **k):
    raise RuntimeError('an overridden method ran')
class D(dict):
    items = keys = values = __iter__ = __getitem__ = __len__ = boom
class L(list):
    __iter__ = __getitem__ = __len__ = boom
class S(str):
    encode = __str__ = __repr__ = __len__ = boom
class F(float):
    __repr__ = __str__ = __float__ = boom
class I(int):
    __repr__ = __str__ = __index__ = __int__ = boom
class K:
    __reduce__ = __reduce_ex__ = __repr__ = boom
class Meta(type):
    __name__ = property(boom)
class Named(metaclass=Meta):
    pass
class Key:
    __repr__ = __str__ = boom
    def __hash__(self):
        return 1
";
    for (expr, needle) in [
        ("D(a=1)", "is a D, not a JSON value"),
        ("L([1])", "is a L, not a JSON value"),
        ("S('x')", "is a S, not a JSON value"),
        ("F(1.0)", "is a F, not a JSON value"),
        ("I(1)", "is a I, not a JSON value"),
        ("K()", "is a K, not a JSON value"),
        ("Named()", "is a Named, not a JSON value"),
        ("float('nan')", "is NaN"),
        ("float('-inf')", "is infinite"),
        ("{Key(): 1}", "has a key that is not a string (a Key)"),
    ] {
        let program = format!(
            "{PATCH_JSON}{classes}
bad = lambda: {{'a': [{{'b': {expr}}}]}}
try:
    await tools.echo(bad())
    print('sent')
except TypeError as e:
    print(str(e))
return bad()"
        );
        let host = TestHost::new();
        let outcome = run_with(&rt, &host, &program, &ordinary_limits()).await;
        let path = if expr.starts_with('{') {
            "result[\"a\"][0][\"b\"] has"
        } else {
            "result[\"a\"][0][\"b\"] is"
        };
        assert_refused_both_ways(expr, outcome, &host, needle, path, "args[\"a\"][0][\"b\"]");
    }
    rt.assert_healthy().await;
}

// --- bounded messages and frames (issue 18, items 7 and 8) ------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn program_controlled_text_in_messages_is_cut() {
    let rt = runtime();
    let mb = 1024 * 1024;
    let done = ok(
        &rt,
        "name = 'n' * (1 << 20)
out = []
try:
    getattr(tools, name)
except AttributeError as e:
    out.append(str(e))
try:
    tools[name]
except KeyError as e:
    out.append(e.args[0])
try:
    await tools.echo({'k' * (1 << 20): float('nan')})
except TypeError as e:
    out.append(str(e))
return out",
    )
    .await;
    let result = done.result.unwrap();
    let messages = result.as_array().unwrap();
    assert_eq!(messages.len(), 3);
    for message in messages {
        assert_cut(message.as_str().unwrap(), mb - 200);
    }
    assert!(messages[2].as_str().unwrap().starts_with("args[\"kkk"));
    for program in [
        "raise ToolCallError('t' * (1 << 20), 'made up')",
        "raise type('E' * (1 << 20), (Exception,), {})('short')",
        "return {type('C' * (1 << 20), (), {})(): 1}",
        "return [type('C' * (1 << 20), (), {})()]",
    ] {
        let failure = fail(&rt, program, &ordinary_limits()).await;
        assert_cut(&failure.message, mb - 200);
    }
    rt.assert_healthy().await;
}

/// Finds the run's bridge through a binding's closure (nothing stops a program from doing so).
const FIND_BRIDGE: &str = "bridge = next(c.cell_contents for c in tools.echo.__closure__ if type(c.cell_contents).__name__ == 'Bridge')\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_larger_than_the_limits_allow_fails_the_run_before_it_is_read() {
    let rt = runtime();
    // 200 MiB announced, 1 KiB sent: the host must not wait for (or buffer) the rest.
    let program = format!(
        "{FIND_BRIDGE}import struct, asyncio\nprint('before')\nbridge.channel.sendall(struct.pack('>I', 200 << 20) + b'x' * 1024)\nawait asyncio.sleep(30)"
    );
    let limits = ordinary_limits().with_max_output_bytes(1024 * 1024);
    let failure = fail(&rt, &program, &limits).await;
    assert_eq!(failure.kind, CodeFailureKind::OutputLimit, "{failure:?}");
    assert!(
        failure
            .message
            .contains("announced a 209715200-byte message"),
        "{failure:?}"
    );
    assert_eq!(failure.logs, vec!["before"]);
    // The bound follows the limits: with the defaults, 200 MiB is still too much.
    let failure = fail(&rt, &program, &ordinary_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::OutputLimit, "{failure:?}");
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_call_to_an_unbound_tool_never_reaches_the_host() {
    let rt = runtime();
    let host = TestHost::new();
    let program = format!(
        "{FIND_BRIDGE}import asyncio, struct
future = asyncio.get_running_loop().create_future()
bridge.pending[999] = (future, 'forged')
body = ('{{\"t\":\"call\",\"id\":999,\"name\":\"' + 'n' * (1 << 20) + '\",\"args\":{{}}}}').encode()
bridge.channel.sendall(struct.pack('>I', len(body)) + body)
try:
    await future
except ToolCallError as e:
    return e.message"
    );
    let done = run_with(&rt, &host, &program, &ordinary_limits())
        .await
        .unwrap();
    let message = done.result.unwrap();
    let message = message.as_str().unwrap();
    assert!(message.starts_with("no tool named \"nnn"), "{message}");
    assert!(message.ends_with(" is bound in this run"), "{message}");
    assert_cut(message, 1024 * 1024 - 200);
    assert_eq!(host.calls(), 0);
}

// --- what a run starts does not outlive it (issue 18, item 9) ---------------------------------

/// Starts a process that leaves the run's process group (setsid) and one that also loses its
/// parent (a double fork), and returns their pids.
const ESCAPE: &str = "import os, subprocess, time
leader = subprocess.Popen(['setsid', 'sleep', '30'])
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(w, str(os.getpid()).encode())
        time.sleep(30)
    os._exit(0)
os.close(w)
daemon = int(os.read(r, 100))
os.waitpid(pid, 0)
time.sleep(0.2)
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_that_leave_the_process_group_do_not_survive_the_run() {
    let rt = unsandboxed();
    for ending in [
        "return [leader.pid, daemon]",
        "raise RuntimeError([leader.pid, daemon])",
    ] {
        let program = format!("{ESCAPE}{ending}");
        let host = TestHost::new();
        let pids: Vec<u32> = match run_with(&rt, &host, &program, &ordinary_limits()).await {
            Ok(done) => serde_json::from_value(done.result.unwrap()).unwrap(),
            Err(failure) => {
                let list = failure
                    .message
                    .trim_start_matches("RuntimeError: ")
                    .to_owned();
                serde_json::from_str(&list).unwrap_or_else(|_| panic!("{failure:?}"))
            }
        };
        assert_eq!(pids.len(), 2);
        for pid in pids {
            assert!(
                eventually_gone(pid).await,
                "{ending}: the process {pid} survived the run: {:?}",
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
            );
        }
    }
    // A program that exits its own process after starting them: they hold the run's socket
    // open, so the run ends at its deadline, and the zygote (their new parent) kills them.
    let program = format!("{ESCAPE}print([leader.pid, daemon])\nos._exit(0)");
    let limits = ordinary_limits().with_timeout(Duration::from_millis(1500));
    let failure = fail(&rt, &program, &limits).await;
    assert_eq!(failure.kind, CodeFailureKind::Timeout, "{failure:?}");
    let pids: Vec<u32> = serde_json::from_str(&failure.logs[0]).unwrap();
    for pid in pids {
        assert!(
            eventually_gone(pid).await,
            "the process {pid} survived its run child: {:?}",
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
        );
    }
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawn_per_run_also_kills_processes_that_left_the_group() {
    let rt = unsandboxed().with_mode(PythonMode::SpawnPerRun);
    let program = format!("{ESCAPE}return [leader.pid, daemon]");
    let done = ok(&rt, &program).await;
    let pids: Vec<u32> = serde_json::from_value(done.result.unwrap()).unwrap();
    for pid in pids {
        assert!(
            eventually_gone(pid).await,
            "the process {pid} survived the run: {:?}",
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
        );
    }
}

// --- a replayable run (a host with `determinism`) ------------------------------------------

/// Runs `program` against a host that replays runs; panics with the failure otherwise.
async fn replayed(rt: &PythonRuntime, host: &Arc<ReplayHost>, program: &str) -> serde_json::Value {
    let run = rt.run(
        program,
        host.clone(),
        &ordinary_limits(),
        CancellationToken::new(),
    );
    let done = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run did not end")
        .unwrap_or_else(|failure| panic!("expected a completion, got {failure:?}"));
    done.result.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayable_run_reads_the_given_clock_first_then_the_live_one() {
    let rt = runtime();
    let host = ReplayHost::new(1, &[1000.0, 2000.5, 86_400_000.25]);
    let program = "import datetime, time
first = [time.time(), time.time_ns(), datetime.datetime.utcnow().isoformat()]
live = time.time()
await tools.echo({})
now = datetime.datetime.now(datetime.timezone.utc)
return [first, live, now.year >= 2024, isinstance(now, datetime.datetime), repr(datetime.datetime.now())[:18]]";
    let result = replayed(&rt, &host, program).await;
    assert_eq!(
        result[0],
        json!([1.0, 2_000_500_000, "1970-01-02T00:00:00.000250"])
    );
    let live = result[1].as_f64().unwrap();
    assert!(live > 1.7e9, "{result}");
    assert_eq!(result[2], json!(true));
    assert_eq!(result[3], json!(true));
    assert_eq!(result[4], json!("datetime.datetime("));
    // Every reading, replayed or live, in order; the four before the call reached the host
    // before it.
    let readings = host.readings();
    assert_eq!(readings.len(), 6, "{readings:?}");
    assert_eq!(readings[..3], [1000.0, 2000.5, 86_400_000.25]);
    assert!((readings[3] - live * 1000.0).abs() < 0.001, "{readings:?}");
    assert_eq!(host.at_calls(), [4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaying_host_seeds_the_random_module() {
    let rt = runtime();
    let program = "import random
return [random.random(), random.randint(0, 10**9), random.sample(range(100), 5)]";
    let first = replayed(&rt, &ReplayHost::new(7, &[]), program).await;
    let again = replayed(&rt, &ReplayHost::new(7, &[]), program).await;
    let other = replayed(&rt, &ReplayHost::new(8, &[]), program).await;
    assert_eq!(first, again);
    assert_ne!(first, other);
    // A spawned interpreter (which imports the modules itself) reads the same numbers.
    let spawned = runtime().with_mode(PythonMode::SpawnPerRun);
    assert_eq!(
        replayed(&spawned, &ReplayHost::new(7, &[]), program).await,
        first
    );
    // Without a replaying host nothing is patched and the numbers are the interpreter's own.
    let program = "import datetime, random, time
return [type(time.time).__name__, datetime.datetime.__module__, type(datetime.datetime).__name__, random.random()]";
    let plain = ok(&rt, program).await.result.unwrap();
    let plain_again = ok(&rt, program).await.result.unwrap();
    assert_eq!(plain[0], json!("builtin_function_or_method"));
    assert_eq!(plain[1], json!("datetime"));
    assert_eq!(plain[2], json!("type"));
    assert_ne!(plain[3], plain_again[3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clock_readings_in_a_loop_reach_the_host_in_bounded_frames() {
    let rt = runtime();
    let host = ReplayHost::new(1, &[]);
    let program = "import time\nseen = [time.time() for _ in range(5000)]\nreturn len(seen)";
    assert_eq!(replayed(&rt, &host, program).await, json!(5000));
    let readings = host.readings();
    assert_eq!(readings.len(), 5000);
    assert!(readings.windows(2).all(|w| w[0] <= w[1]));
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayable_run_gives_back_the_given_draws_then_live_ones() {
    let rt = runtime();
    let given = vec![vec![1, 2, 3, 4], vec![0xab; 16], vec![9; 5], vec![7; 5]];
    let host = ReplayHost::with_entropy(1, &[], given);
    let program = "import os, uuid
a = os.urandom(4)
b = uuid.uuid4()
try:
    os.urandom(-1)
    negative = 'drew'
except ValueError as error:
    negative = str(error)
c = os.urandom(3)
d = os.urandom(5)
big = os.urandom(200_000)
await tools.echo({})
return [a.hex(), str(b), negative, c.hex(), d.hex(), big[:8].hex(), big[-8:].hex(), os.urandom.__name__]";
    let result = replayed(&rt, &host, program).await;
    // The first two requests have the size of the first two draws: given back. The refused
    // one draws nothing; the next asks for 3 bytes where the next draw holds 5: it and every
    // later request draw live.
    assert_eq!(result[0], json!("01020304"));
    assert_eq!(result[1], json!("abababab-abab-4bab-abab-abababababab"));
    assert_eq!(result[2], json!("negative argument not allowed"));
    let c = result[3].as_str().unwrap();
    let d = result[4].as_str().unwrap();
    assert_eq!(c.len(), 6);
    assert_eq!(d.len(), 10);
    assert_ne!(
        d, "0707070707",
        "the replay of draws ended at the request of another size"
    );
    assert_eq!(result[7], json!("urandom"));
    // Every draw, given back or live, reached the host in order, the large one whole (it
    // travelled in pieces).
    let draws = host.draws();
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(
        draws.len(),
        5,
        "{:?}",
        draws.iter().map(Vec::len).collect::<Vec<_>>()
    );
    assert_eq!(draws[0], [1, 2, 3, 4]);
    assert_eq!(draws[1], [0xab; 16]);
    assert_eq!(hex(&draws[2]), c);
    assert_eq!(hex(&draws[3]), d);
    assert_eq!(draws[4].len(), 200_000);
    assert_eq!(json!(hex(&draws[4][..8])), result[5]);
    assert_eq!(json!(hex(&draws[4][200_000 - 8..])), result[6]);
    rt.assert_healthy().await;
}

/// What draws on the system's random source reads the same when a run is given the draws of
/// another: `uuid.uuid4`, `secrets`, `random.SystemRandom`, a `random.Random()` made without a
/// seed, the module's generator seeded again without one, `tempfile`'s names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_draws_on_the_system_random_source_reads_the_same_given_the_same_draws() {
    let rt = runtime();
    let program = "import os, random, secrets, tempfile, uuid
fd, path = tempfile.mkstemp()
os.close(fd)
seen = [str(uuid.uuid4()), secrets.token_hex(8), secrets.token_urlsafe(8), secrets.randbelow(10**12),
        random.SystemRandom().random(), random.Random().random(), os.getrandom(4).hex(), path]
random.seed()
seen.append(random.random())
return seen";
    let first_host = ReplayHost::new(1, &[]);
    let first = replayed(&rt, &first_host, program).await;
    let draws = first_host.draws();
    assert!(draws.len() >= 8, "{draws:?}");
    // Given the first run's draws, a run reads what the first read and draws the same.
    let again_host = ReplayHost::with_entropy(1, &[], draws.clone());
    assert_eq!(replayed(&rt, &again_host, program).await, first);
    assert_eq!(again_host.draws(), draws);
    // A spawned interpreter (which imports the modules itself) too.
    let spawned = runtime().with_mode(PythonMode::SpawnPerRun);
    let spawned_host = ReplayHost::with_entropy(1, &[], draws);
    assert_eq!(replayed(&spawned, &spawned_host, program).await, first);
    // Without them, every value is another.
    let other = replayed(&rt, &ReplayHost::new(1, &[]), program).await;
    for (i, (a, b)) in first
        .as_array()
        .unwrap()
        .iter()
        .zip(other.as_array().unwrap())
        .enumerate()
    {
        assert_ne!(a, b, "value {i}");
    }
    // Without a replaying host nothing is patched.
    let plain = ok(
        &rt,
        "import os, random\nreturn [type(os.urandom).__name__, random.Random.seed.__module__, random._urandom is os.urandom]",
    )
    .await;
    assert_eq!(
        plain.result,
        Some(json!(["builtin_function_or_method", "random", true]))
    );
    rt.assert_healthy().await;
}

/// The interpreter runs isolated (no user site directory, no working directory on `sys.path`,
/// no `site`, an empty environment) but with a fixed hash seed, so every process iterates a set
/// of strings in the same order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_interpreter_hashes_strings_alike_and_stays_isolated() {
    let program = "import os, sys
return [sys.flags.no_user_site, getattr(sys.flags, 'safe_path', True), sys.flags.no_site, sys.flags.hash_randomization,
        '' in sys.path, os.getcwd() in sys.path, sorted(k for k in os.environ if k != 'LC_CTYPE'), hash('alpha'),
        list({'alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'}), 'site' in sys.modules]";
    let first = ok(&runtime(), program).await.result.unwrap();
    assert_eq!(first[0], json!(1), "{first}");
    assert_eq!(first[1], json!(true), "{first}");
    assert_eq!(first[2], json!(1), "{first}");
    assert_eq!(first[3], json!(0), "{first}");
    assert_eq!(first[4], json!(false), "{first}");
    assert_eq!(first[5], json!(false), "{first}");
    assert_eq!(first[6], json!([]), "{first}");
    assert_eq!(first[9], json!(false), "{first}");
    // Another zygote, and an interpreter spawned for the run, hash and iterate alike.
    assert_eq!(ok(&runtime(), program).await.result.unwrap(), first);
    let spawned = runtime().with_mode(PythonMode::SpawnPerRun);
    assert_eq!(ok(&spawned, program).await.result.unwrap(), first);
    let unsandboxed = unsandboxed();
    assert_eq!(ok(&unsandboxed, program).await.result.unwrap(), first);
}
