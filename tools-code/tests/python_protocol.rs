//! The Python runtime's protocol with its child, attacked from the program's side (issue 24,
//! items 6, 7, 8 and 10): what a run makes the host hold (replies it never reads, arguments of
//! calls in flight, log lines), the ids of its calls (forged, duplicated, reused), arguments
//! whose JSON text would be huge, deep or cyclic, and frames only the runner may send.
//!
//! A program reaches its protocol socket through the runner's own objects (`FIND_BRIDGE`), so
//! every test here writes raw frames the way an attacker would.
#![cfg(feature = "python")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crate::code_support::ReplayHost;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_code::{
    CodeFailure, CodeFailureKind, CodeHost, CodeLimits, CodeOutcome, CodeRuntime, FnHost,
    PythonMode, PythonRuntime, SandboxLayer, SandboxPolicy,
};

/// The size of one reply of `big`.
const BIG: usize = 64 * 1024;

/// Tools, by name:
/// - `big` answers a string of [`BIG`] bytes at once;
/// - `slow` counts in `started` when it starts, waits 10 s, and counts in `ended` when it
///   ends, finished or dropped;
/// - `hold` never answers;
/// - every other name answers `{"args": args}` at once.
///
/// `calls` counts every call that reached the host.
#[derive(Default)]
struct Host {
    calls: AtomicUsize,
    started: Arc<AtomicUsize>,
    ended: Arc<AtomicUsize>,
}

/// Counts one end when dropped.
struct Ends(Arc<AtomicUsize>);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The host of one run over `host`'s tools.
fn shared(host: Arc<Host>) -> Arc<dyn CodeHost> {
    Arc::new(FnHost::new(
        ["big", "slow", "hold", "echo"],
        move |name: &str, args: Value| {
            host.calls.fetch_add(1, Ordering::SeqCst);
            let (started, ended) = (host.started.clone(), host.ended.clone());
            let name = name.to_owned();
            async move {
                match name.as_str() {
                    "big" => Ok(Value::String("b".repeat(BIG))),
                    "slow" => {
                        started.fetch_add(1, Ordering::SeqCst);
                        let _ends = Ends(ended);
                        tokio::time::sleep(Duration::from_secs(10)).await;
                        Ok(Value::Null)
                    }
                    "hold" => {
                        std::future::pending::<()>().await;
                        Ok(args)
                    }
                    _ => Ok(json!({ "args": args })),
                }
            }
        },
    ))
}

/// A run limited to 32 MiB of memory and 1 MiB of output, with a deadline long enough never
/// to fire first on a loaded machine.
fn limits() -> CodeLimits {
    CodeLimits::default()
        .with_timeout(Duration::from_secs(20))
        .with_memory_bytes(32 * 1024 * 1024)
        .with_max_output_bytes(1024 * 1024)
}

async fn run(
    rt: &PythonRuntime,
    host: &Arc<Host>,
    program: &str,
    limits: &CodeLimits,
) -> CodeOutcome {
    let run = rt.run(
        program,
        shared(host.clone()),
        limits,
        CancellationToken::new(),
    );
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run did not end")
}

async fn fail(
    rt: &PythonRuntime,
    host: &Arc<Host>,
    program: &str,
    limits: &CodeLimits,
) -> CodeFailure {
    match run(rt, host, program, limits).await {
        Ok(done) => panic!("expected a failure, got {done:?}"),
        Err(failure) => failure,
    }
}

async fn result(rt: &PythonRuntime, host: &Arc<Host>, program: &str, limits: &CodeLimits) -> Value {
    match run(rt, host, program, limits).await {
        Ok(done) => done.result.unwrap_or(Value::Null),
        Err(failure) => panic!("expected a completion, got {failure:?}"),
    }
}

/// Finds the run's bridge through a binding's closure (nothing stops a program from doing so),
/// and defines `send(text)`, which writes one raw frame on the protocol socket.
const FIND_BRIDGE: &str = "import asyncio, struct
bridge = next(c.cell_contents for c in tools.echo.__closure__ if type(c.cell_contents).__name__ == 'Bridge')
def send(*texts):
    data = b''
    for text in texts:
        body = text.encode()
        data += struct.pack('>I', len(body)) + body
    bridge.channel.sendall(data)
";

/// The first number after `label` in `message`.
fn number_after(message: &str, label: &str) -> usize {
    let at = message
        .find(label)
        .unwrap_or_else(|| panic!("no {label:?} in {message}"))
        + label.len();
    message[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("no number after {label:?} in {message}"))
}

// --- item 6: what a run makes the host hold ------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_a_program_never_reads_fail_the_run_at_its_memory_limit() {
    let rt = PythonRuntime::new();
    let limits = limits();
    // 2,000 calls of 64 KiB replies (128 MiB) that the program never reads: it never lets its
    // event loop run, sleeping or busy.
    for wait in [
        "time.sleep(15)",
        "t = time.monotonic()\nwhile time.monotonic() - t < 15:\n    pass",
    ] {
        let host = Arc::new(Host::default());
        let program =
            format!("import time\nfor i in range(2000):\n    tools.big()\n{wait}\nreturn 'waited'");
        let failure = fail(&rt, &host, &program, &limits).await;
        assert_eq!(failure.kind, CodeFailureKind::Memory, "{failure:?}");
        let message = &failure.message;
        assert!(message.contains("memory_bytes = 33554432"), "{message}");
        assert!(
            message.contains("tool replies the program has not read"),
            "{message}"
        );
        // What the host held when it stopped: at most the limit and the reply that passed it.
        let held = number_after(message, "the host held ");
        assert!(held > 32 * 1024 * 1024, "{message}");
        assert!(held <= 32 * 1024 * 1024 + BIG + 64, "{message}");
        assert!(host.calls.load(Ordering::SeqCst) < 2000, "{message}");
    }
    // The same volume, read as it comes, is fine.
    let host = Arc::new(Host::default());
    let n = result(
        &rt,
        &host,
        "import asyncio\nn = 0\nfor i in range(1000):\n    n += len(await tools.big())\nfor i in range(20):\n    n += sum(len(r) for r in await asyncio.gather(*(tools.big() for _ in range(50))))\nreturn n",
        &limits,
    )
    .await;
    assert_eq!(n, json!(2000 * BIG));
    assert_eq!(host.calls.load(Ordering::SeqCst), 2000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_of_calls_in_flight_count_against_the_memory_limit() {
    let rt = PythonRuntime::new();
    let host = Arc::new(Host::default());
    // 100 calls of 1 MiB arguments each to a tool that never answers: 100 MiB held by the host.
    let failure = fail(
        &rt,
        &host,
        "import asyncio\ns = 'x' * (1 << 20)\nfutures = [tools.hold({'s': s}) for _ in range(100)]\nawait asyncio.sleep(15)",
        &limits(),
    )
    .await;
    assert_eq!(failure.kind, CodeFailureKind::Memory, "{failure:?}");
    assert!(
        failure.message.contains("arguments of calls still running"),
        "{failure:?}"
    );
    let held = number_after(&failure.message, "the host held ");
    assert!(held <= 33 * 1024 * 1024 + 64, "{failure:?}");
    assert!(host.calls.load(Ordering::SeqCst) < 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_empty_log_lines_is_bounded() {
    let rt = PythonRuntime::new();
    let host = Arc::new(Host::default());
    // Empty lines use no output bytes, but each is a line the host keeps. (A small memory
    // limit, so that the flood passes it well before the deadline.)
    let limits = limits().with_memory_bytes(4 * 1024 * 1024);
    let failure = fail(&rt, &host, "while True:\n    print()", &limits).await;
    // (Not the whole failure in the messages: it holds a million lines.)
    assert_eq!(failure.kind, CodeFailureKind::Memory, "{}", failure.message);
    assert!(failure.message.contains("log lines"), "{}", failure.message);
    let lines = number_after(
        &failure.message,
        "bytes of arguments of calls still running, ",
    );
    assert_eq!(lines, failure.logs.len(), "{}", failure.message);
    let per_line = std::mem::size_of::<String>();
    assert!(lines * per_line > 4 * 1024 * 1024, "{}", failure.message);
    assert!(
        lines * per_line <= 4 * 1024 * 1024 + per_line,
        "{}",
        failure.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_clock_readings_in_a_replayable_run_is_bounded() {
    let rt = PythonRuntime::new();
    let host = ReplayHost::new(1, &[]);
    // Each reading is one the host keeps for the run's journal.
    let limits = limits().with_memory_bytes(4 * 1024 * 1024);
    let run = rt.run(
        "import time\nwhile True:\n    time.time()",
        host.clone(),
        &limits,
        CancellationToken::new(),
    );
    let failure = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run did not end")
        .unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Memory, "{}", failure.message);
    assert!(
        failure.message.contains("read the clock too often"),
        "{}",
        failure.message
    );
    let readings = number_after(
        &failure.message,
        "log lines (24 bytes each; their text counts in max_output_bytes), ",
    );
    assert_eq!(readings, host.readings().len(), "{}", failure.message);
    assert!(readings * 8 > 4 * 1024 * 1024, "{}", failure.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_random_draws_in_a_replayable_run_is_bounded() {
    let rt = PythonRuntime::new();
    // Each draw is one the host keeps for the run's journal: small ones, and large ones that
    // travel in pieces (each of which the child holds too while it sends it: more room).
    for (program, memory, least) in [
        ("import os\nwhile True:\n    os.urandom(16)", 4, 1000),
        ("import os\nwhile True:\n    os.urandom(300_000)", 8, 2),
    ] {
        let limits = limits().with_memory_bytes(memory * 1024 * 1024);
        let host = ReplayHost::new(1, &[]);
        let run = rt.run(program, host.clone(), &limits, CancellationToken::new());
        let failure = tokio::time::timeout(Duration::from_secs(60), run)
            .await
            .expect("the run did not end")
            .unwrap_err();
        assert_eq!(
            failure.kind,
            CodeFailureKind::Memory,
            "{program}: {}",
            failure.message
        );
        assert!(
            failure.message.contains("drew too many random bytes"),
            "{program}: {}",
            failure.message
        );
        let draws = number_after(
            &failure.message,
            "log lines (24 bytes each; their text counts in max_output_bytes), ",
        );
        let drawn = number_after(&failure.message, "draws of random bytes (");
        let reported = host.draws();
        // The last draw may still have been on its way, in pieces.
        assert!(
            draws == reported.len() || draws == reported.len() + 1,
            "{draws} / {}: {}",
            reported.len(),
            failure.message
        );
        assert!(draws >= least, "{}", failure.message);
        assert!(
            drawn + draws * 24 > memory * 1024 * 1024,
            "{}",
            failure.message
        );
        assert!(
            drawn >= reported.iter().map(Vec::len).sum::<usize>(),
            "{}",
            failure.message
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn draws_of_random_bytes_that_are_not_hexadecimal_break_the_protocol() {
    let rt = PythonRuntime::new();
    let host = ReplayHost::new(1, &[]);
    let program = format!(
        "{FIND_BRIDGE}send('{{\"t\":\"entropy\",\"draws\":[\"0g\"]}}')\nawait asyncio.sleep(15)"
    );
    let run = rt.run(&program, host.clone(), &limits(), CancellationToken::new());
    let failure = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run did not end")
        .unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Runtime, "{failure:?}");
    assert!(
        failure.message.contains("not hexadecimal"),
        "{}",
        failure.message
    );
    assert!(host.draws().is_empty());
}

// --- item 7: the ids of a program's calls ----------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_call_id_fails_the_run_and_no_call_outlives_it() {
    let rt = PythonRuntime::new();
    let host = Arc::new(Host::default());
    // A genuine call (id 1), then the same id forged, twice.
    let program = format!(
        "{FIND_BRIDGE}first = tools.slow()
send('{{\"t\":\"call\",\"id\":1,\"name\":\"slow\",\"args\":{{}}}}', '{{\"t\":\"call\",\"id\":1,\"name\":\"slow\",\"args\":{{}}}}')
await asyncio.sleep(5)
return 'finished'"
    );
    let failure = fail(&rt, &host, &program, &limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime, "{failure:?}");
    assert!(
        failure
            .message
            .contains("call id 1 while call 1 was still running"),
        "{}",
        failure.message
    );
    let started = host.started.load(Ordering::SeqCst);
    assert!((1..=2).contains(&started), "{started}");
    assert_eq!(
        host.ended.load(Ordering::SeqCst),
        started,
        "a call outlived its run"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        host.started.load(Ordering::SeqCst),
        started,
        "a call started after its run"
    );
    assert_eq!(host.ended.load(Ordering::SeqCst), started);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_call_ids_are_protocol_errors_and_never_reach_the_host() {
    let rt = PythonRuntime::new();
    for (id, needle) in [
        ("1180591620717411303424", "id"),
        ("-1", "id"),
        ("1.5", "id"),
        ("\"7\"", "id"),
        ("null", "id"),
    ] {
        let host = Arc::new(Host::default());
        let program = format!(
            "{FIND_BRIDGE}send('{{\"t\":\"call\",\"id\":{id},\"name\":\"echo\",\"args\":{{}}}}')\nawait asyncio.sleep(15)"
        );
        let failure = fail(&rt, &host, &program, &limits()).await;
        assert_eq!(failure.kind, CodeFailureKind::Runtime, "{id}: {failure:?}");
        assert!(
            failure
                .message
                .starts_with("the program broke the runner's protocol"),
            "{id}: {}",
            failure.message
        );
        assert!(
            failure.message.contains(needle),
            "{id}: {}",
            failure.message
        );
        assert_eq!(host.calls.load(Ordering::SeqCst), 0, "{id}");
    }
    // A frame that is not a message at all.
    let host = Arc::new(Host::default());
    let program = format!("{FIND_BRIDGE}send('not json')\nawait asyncio.sleep(15)");
    let failure = fail(&rt, &host, &program, &limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime, "{failure:?}");
    assert!(
        failure
            .message
            .starts_with("the program broke the runner's protocol"),
        "{failure:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_id_may_be_used_again_once_it_was_answered() {
    let rt = PythonRuntime::new();
    let host = Arc::new(Host::default());
    let program = format!(
        "{FIND_BRIDGE}out = []
for n in range(2):
    future = asyncio.get_running_loop().create_future()
    bridge.pending[1000] = (future, 'echo')
    send('{{\"t\":\"call\",\"id\":1000,\"name\":\"echo\",\"args\":{{\"n\":%d}}}}' % n)
    out.append(await future)
return out"
    );
    assert_eq!(
        result(&rt, &host, &program, &limits()).await,
        json!([{ "args": { "n": 0 } }, { "args": { "n": 1 } }])
    );
    assert_eq!(host.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_after_the_outcome_is_never_started() {
    let rt = PythonRuntime::new();
    let host = Arc::new(Host::default());
    let program = format!(
        "{FIND_BRIDGE}send('{{\"t\":\"done\",\"result\":\"forged\"}}', '{{\"t\":\"call\",\"id\":50,\"name\":\"slow\",\"args\":{{}}}}')
await asyncio.sleep(15)"
    );
    assert_eq!(
        result(&rt, &host, &program, &limits()).await,
        json!("forged")
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(host.calls.load(Ordering::SeqCst), 0);
    assert_eq!(host.started.load(Ordering::SeqCst), 0);
}

// --- item 8: a bad argument rejects only its call ---------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_deep_and_cyclic_arguments_reject_only_their_call() {
    let rt = PythonRuntime::new();
    let host = Arc::new(Host::default());
    let limits = limits().with_max_call_bytes(1024 * 1024);
    let done = result(
        &rt,
        &host,
        r#"
a = [0] * 1000
b = [a] * 1000
c = [b] * 1000
cyclic = {'n': 1}
cyclic['me'] = [cyclic]
deep = 1
for _ in range(10000):
    deep = [deep]
deep_dict = {}
for _ in range(10000):
    deep_dict = {'d': deep_dict}
s = 'x' * 100000
wide = {'k%d' % i: s for i in range(1000)}
out = []
for label, args in [('dag', {'x': c}), ('cycle', cyclic), ('deep', {'v': deep}),
                    ('deep_dict', deep_dict), ('wide', wide)]:
    try:
        await tools.echo(args)
        out.append([label, 'sent'])
    except (TypeError, ValueError) as e:
        out.append([label, type(e).__name__, str(e)])
fine = await tools.echo({'ok': 1})
return [out, fine]
"#,
        &limits,
    )
    .await;
    let out = done[0].as_array().unwrap();
    let expect = [
        (
            "dag",
            "ValueError",
            "bytes of JSON text, more than the 1048576 bytes one call may send (max_call_bytes); it passed that at args[\"x\"][0][",
        ),
        ("cycle", "TypeError", "args[\"me\"][0] is a cycle"),
        ("deep", "TypeError", "nests deeper than 100 levels"),
        ("deep_dict", "TypeError", "nests deeper than 100 levels"),
        (
            "wide",
            "ValueError",
            "more than the 1048576 bytes one call may send (max_call_bytes); it passed that at args[\"k10\"]",
        ),
    ];
    assert_eq!(out.len(), expect.len(), "{out:?}");
    // It stopped soon after the limit, not after the 10^9 items.
    let dag = out[0][2].as_str().unwrap();
    let at_least = number_after(dag, "args is at least ");
    assert!(
        (1024 * 1024..1024 * 1024 + 64 * 1024).contains(&at_least),
        "{dag}"
    );
    for (got, (label, class, needle)) in out.iter().zip(expect) {
        assert_eq!(got[0], json!(label), "{got}");
        assert_eq!(got[1], json!(class), "{got}");
        let message = got[2].as_str().unwrap();
        assert!(message.contains(needle), "{label}: {message}");
    }
    assert_eq!(done[1], json!({ "args": { "ok": 1 } }));
    assert_eq!(
        host.calls.load(Ordering::SeqCst),
        1,
        "only the valid call reached the host"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_result_is_an_output_limit_failure_at_once() {
    let rt = PythonRuntime::new();
    let host = Arc::new(Host::default());
    // 10^9 items of JSON text: the conversion stops at the output limit instead of running
    // into the deadline.
    let failure = fail(
        &rt,
        &host,
        "a = [0] * 1000\nb = [a] * 1000\nprint('before')\nreturn [b] * 1000",
        &limits(),
    )
    .await;
    assert_eq!(failure.kind, CodeFailureKind::OutputLimit, "{failure:?}");
    assert!(
        failure.message.contains("max_output_bytes = 1048576"),
        "{failure:?}"
    );
    assert_eq!(failure.logs, vec!["before"]);
}

// --- item 10: frames only the runner may send ------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_sandbox_refusal_is_the_programs_protocol_error() {
    let rt = PythonRuntime::new();
    let host = Arc::new(Host::default());
    let program = format!(
        "{FIND_BRIDGE}print('before')\nbridge.channel.error('sandbox', 'seccomp: the kernel was built without it')\nawait asyncio.sleep(15)"
    );
    let failure = fail(&rt, &host, &program, &limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime, "{failure:?}");
    let message = &failure.message;
    assert!(
        message.starts_with("the program broke the runner's protocol"),
        "{message}"
    );
    assert!(
        message.contains("only sends before the program starts"),
        "{message}"
    );
    assert!(!message.contains("SandboxPolicy::BestEffort"), "{message}");
    assert!(!message.contains("seccomp"), "{message}");
    assert_eq!(failure.logs, vec!["before"]);

    // Other frames the runner never sends once the program runs.
    for (frame, needle) in [
        (r#"{"t":"ready"}"#, "only sends before the program starts"),
        (
            r#"{"t":"error","kind":"internal","message":"the runtime failed"}"#,
            "\"internal\"",
        ),
        (r#"{"t":"error","kind":"odd","message":"x"}"#, "\"odd\""),
        (r#"{"t":"hello"}"#, "hello"),
        // Clock readings and draws of random bytes, in a run whose host does not replay runs.
        (r#"{"t":"clock","ms":[1.5]}"#, "clock readings"),
        (r#"{"t":"entropy","draws":["00"]}"#, "random bytes"),
    ] {
        let program = format!("{FIND_BRIDGE}send('{frame}')\nawait asyncio.sleep(15)");
        let failure = fail(&rt, &host, &program, &limits()).await;
        assert_eq!(
            failure.kind,
            CodeFailureKind::Runtime,
            "{frame}: {failure:?}"
        );
        assert!(
            failure
                .message
                .starts_with("the program broke the runner's protocol"),
            "{frame}: {}",
            failure.message
        );
        assert!(
            failure.message.contains(needle),
            "{frame}: {}",
            failure.message
        );
        assert!(
            !failure.message.contains("the runtime failed"),
            "{}",
            failure.message
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_sandbox_refusal_still_reads_as_the_hosts() {
    for mode in [PythonMode::Zygote, PythonMode::SpawnPerRun] {
        let rt = PythonRuntime::new()
            .with_mode(mode)
            .pretend_missing(SandboxLayer::Seccomp);
        let host = Arc::new(Host::default());
        let failure = fail(&rt, &host, "return 1", &limits()).await;
        assert_eq!(
            failure.kind,
            CodeFailureKind::Internal,
            "{mode:?} {failure:?}"
        );
        assert!(
            failure.message.contains("seccomp: disabled for a test"),
            "{failure:?}"
        );
        assert!(
            failure.message.contains("SandboxPolicy::BestEffort"),
            "{failure:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spare_that_announced_it_is_ready_runs_the_next_program() {
    // Without the sandbox the program runs in the spare itself, so its pid tells which ran it.
    let rt = PythonRuntime::new().with_sandbox(SandboxPolicy::Off);
    rt.warm_up().await.unwrap();
    let spares = rt.spare_pids().await;
    assert_eq!(spares.len(), 2);
    // Time for both spares to send their ready frame (and rehearse).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let host = Arc::new(Host::default());
    let pid = result(&rt, &host, "import os\nreturn os.getpid()", &limits()).await;
    assert_eq!(pid, json!(spares[0]), "the ready spare was not used");
}
