//! The Python runtime's sandbox on Linux: the report on this machine, the policies with a
//! layer missing, and escapes, each asserting the exact failure (or the harmless outcome)
//! and that the next run is unaffected.
//!
//! These tests need a machine where every layer works (unprivileged user namespaces,
//! Landlock, seccomp); on another machine the report test fails and names what is missing.
#![cfg(all(feature = "python", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::code_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use code_support::{TestHost, ordinary_limits, shared};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_code::{
    CodeFailureKind, CodeOutcome, CodeRuntime, PYTHON_PROCESS_LIMIT, PythonMode, PythonRuntime,
    SandboxLayer, SandboxPolicy,
};

async fn run(rt: &PythonRuntime, program: &str) -> CodeOutcome {
    let host = TestHost::new();
    let run = rt.run(
        program,
        shared(host),
        &ordinary_limits(),
        CancellationToken::new(),
    );
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the run did not end")
}

/// The program's result; panics with the failure otherwise.
async fn result(rt: &PythonRuntime, program: &str) -> Value {
    match run(rt, program).await {
        Ok(done) => done.result.unwrap_or(Value::Null),
        Err(failure) => panic!("expected a completion, got {failure:?}"),
    }
}

/// `attempt(f)`: a program prelude; `attempt` returns `"ok"` or `[exception class, errno]`.
const ATTEMPT: &str = "def attempt(f):\n    try:\n        f()\n        return 'ok'\n    except OSError as e:\n        return [type(e).__name__, e.errno]\n";

/// What a fresh run sees: only its own process, an empty `/tmp`, `/tmp` as its directory.
const FRESH: &str = "import os\nreturn [sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), os.listdir('/tmp'), os.getcwd(), os.getpid()]";

async fn assert_fresh(rt: &PythonRuntime) {
    assert_eq!(
        result(rt, FRESH).await,
        json!([[1], [], "/tmp", 1]),
        "the next run is not a fresh sandbox"
    );
}

/// The live descendants of `pid` with their depth below it, from the host's `/proc`.
fn descendants(pid: u32) -> Vec<(u32, usize)> {
    let mut out = Vec::new();
    let mut stack = vec![(pid, 0)];
    while let Some((parent, depth)) = stack.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in listed.split_whitespace().filter_map(|c| c.parse().ok()) {
                let stat = std::fs::read_to_string(format!("/proc/{child}/stat"));
                if stat.is_ok_and(|s| !s.contains(") Z ")) {
                    out.push((child, depth + 1));
                    stack.push((child, depth + 1));
                }
            }
        }
    }
    out
}

/// Waits until no process is left below the zygote's run children and their program
/// processes (zygote -> run child -> PID 1 of the run), i.e. nothing a program started.
async fn nothing_left_behind(rt: &PythonRuntime) {
    let zygote = rt.zygote_pid().await.expect("the zygote runs");
    let started = std::time::Instant::now();
    loop {
        let deep: Vec<_> = descendants(zygote)
            .into_iter()
            .filter(|(_, depth)| *depth > 2)
            .collect();
        if deep.is_empty() {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "processes a program started outlived its run: {deep:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_on_this_machine_has_every_layer_active() {
    let rt = PythonRuntime::new();
    assert_eq!(rt.sandbox_policy(), SandboxPolicy::Require);
    let report = rt.sandbox_report().await.unwrap();
    assert_eq!(report.policy, SandboxPolicy::Require);
    let layers: Vec<SandboxLayer> = report.layers.iter().map(|l| l.layer).collect();
    assert_eq!(layers, SandboxLayer::ALL.to_vec());
    for status in &report.layers {
        assert!(
            status.active,
            "{} is missing: {}",
            status.layer, status.reason
        );
        assert_eq!(status.reason, "");
    }
    assert!(report.is_complete(), "{report}");
    // The same holds for a spawn-per-run runtime.
    let spawn = PythonRuntime::new().with_mode(PythonMode::SpawnPerRun);
    assert!(spawn.sandbox_report().await.unwrap().is_complete());
    assert_eq!(result(&spawn, FRESH).await, json!([[1], [], "/tmp", 1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_refuses_to_start_when_a_layer_is_missing_and_names_it() {
    // The process limit is counted in the run's own user namespace, made with its PID
    // namespace: it goes with it.
    for (layer, missing) in [
        (SandboxLayer::Landlock, vec![SandboxLayer::Landlock]),
        (
            SandboxLayer::PidNamespace,
            vec![SandboxLayer::PidNamespace, SandboxLayer::ProcessLimit],
        ),
    ] {
        for mode in [PythonMode::Zygote, PythonMode::SpawnPerRun] {
            let rt = PythonRuntime::new().with_mode(mode).pretend_missing(layer);
            let failure = run(&rt, "return 1").await.unwrap_err();
            assert_eq!(failure.kind, CodeFailureKind::Internal, "{failure:?}");
            let message = &failure.message;
            assert!(
                message.contains(&format!("{layer}: disabled for a test")),
                "{mode:?} {message}"
            );
            assert!(message.contains(layer.requirement()), "{message}");
            assert!(message.contains("SandboxPolicy::BestEffort"), "{message}");
        }
        let rt = PythonRuntime::new().pretend_missing(layer);
        let report = rt.sandbox_report().await.unwrap();
        assert_eq!(report.missing(), missing, "{report}");
        assert!(rt.zygote_pid().await.is_none(), "a refused zygote was kept");
    }
}

/// Records the `tracing` events' messages.
#[derive(Clone, Default)]
struct Events(Arc<Mutex<Vec<String>>>);

struct Message<'a>(&'a mut String);

impl tracing::field::Visit for Message<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0.push_str(&format!("{value:?}"));
        }
    }
}

impl tracing::Subscriber for Events {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut text = format!("{} ", event.metadata().level());
        event.record(&mut Message(&mut text));
        self.0.lock().unwrap().push(text);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn best_effort_runs_without_the_missing_layer_and_says_so() {
    let events = Events::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tokio.block_on(async {
        let rt = PythonRuntime::new()
            .with_sandbox(SandboxPolicy::BestEffort)
            .pretend_missing(SandboxLayer::Seccomp);
        // Without the filter a socket can be made; the other layers still keep every packet
        // on this machine: the network namespace has no route (UDP), Landlock refuses TCP.
        let program = format!(
            "{ATTEMPT}import socket\ntcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\nudp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nreturn [attempt(lambda: tcp.connect(('127.0.0.1', 9))), attempt(lambda: tcp.connect(('192.0.2.1', 9))), attempt(lambda: udp.sendto(b'x', ('127.0.0.1', 9))), attempt(lambda: udp.sendto(b'x', ('192.0.2.1', 9)))]"
        );
        assert_eq!(
            result(&rt, &program).await,
            json!([
                ["PermissionError", 13],
                ["PermissionError", 13],
                ["OSError", 101],
                ["OSError", 101]
            ])
        );
        let report = rt.sandbox_report().await.unwrap();
        assert_eq!(report.policy, SandboxPolicy::BestEffort);
        assert_eq!(report.missing(), vec![SandboxLayer::Seccomp], "{report}");
        assert!(report.to_string().contains("seccomp            MISSING: disabled for a test"));
        assert_fresh(&rt).await;
    });
    let events = events.0.lock().unwrap();
    assert!(
        events.iter().any(|e| e.starts_with("WARN ")
            && e.contains("the Python sandbox runs without some layers")
            && e.contains("seccomp")),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_is_the_unsandboxed_runtime() {
    let rt = PythonRuntime::new().with_sandbox(SandboxPolicy::Off);
    let report = rt.sandbox_report().await.unwrap();
    assert_eq!(report.missing(), SandboxLayer::ALL.to_vec());
    let value = result(
        &rt,
        "import os\nreturn [os.path.exists('/etc/passwd'), os.getpid() == 1, os.getcwd()]",
    )
    .await;
    assert_eq!(value, json!([true, false, "/"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_outside_the_view_cannot_be_read() {
    let rt = PythonRuntime::new();
    let host = std::process::id();
    rt.warm_up().await.unwrap();
    let zygote = rt.zygote_pid().await.unwrap();
    let workspace = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    assert!(std::path::Path::new(workspace).exists());
    let program = format!(
        "{ATTEMPT}return [attempt(lambda: open('/etc/passwd').read()), attempt(lambda: open('/proc/{host}/environ', 'rb').read()), attempt(lambda: open('/proc/{zygote}/environ', 'rb').read()), attempt(lambda: open({workspace:?}).read()), attempt(lambda: __import__('os').listdir('/')), attempt(lambda: __import__('os').listdir('/work'))]"
    );
    assert_eq!(
        result(&rt, &program).await,
        json!([
            ["FileNotFoundError", 2],
            ["FileNotFoundError", 2],
            ["FileNotFoundError", 2],
            ["FileNotFoundError", 2],
            ["PermissionError", 13],
            ["FileNotFoundError", 2]
        ])
    );
    assert_fresh(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_temporary_folder_is_writable_and_it_goes_with_the_run() {
    let rt = PythonRuntime::new();
    let stdlib_file = "__import__('os').__file__";
    let program = format!(
        "{ATTEMPT}import os\nopen('/tmp/mine', 'w').write('kept for this run')\nos.mkdir('/tmp/dir')\nreturn [attempt(lambda: open('/x', 'w')), attempt(lambda: open(os.path.dirname({stdlib_file}) + '/evil.py', 'w')), attempt(lambda: open({stdlib_file}, 'a')), attempt(lambda: open('/dev/null', 'w').write('x')), attempt(lambda: os.mkdir('/proc/x')), open('/tmp/mine').read(), sorted(os.listdir('/tmp'))]"
    );
    assert_eq!(
        result(&rt, &program).await,
        json!([
            ["OSError", 30],
            ["OSError", 30],
            // The run's user outside its namespaces is nobody, who may not write a root file.
            ["PermissionError", 13],
            "ok",
            ["FileNotFoundError", 2],
            "kept for this run",
            ["dir", "mine"]
        ])
    );
    assert_fresh(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_socket_can_be_opened() {
    let rt = PythonRuntime::new();
    let program = format!(
        "{ATTEMPT}import socket\nreturn [attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(('127.0.0.1', 9))), attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('192.0.2.1', 9))), attempt(lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM)), attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)), attempt(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)), attempt(lambda: socket.create_connection(('example.com', 80), timeout=1))]"
    );
    assert_eq!(
        result(&rt, &program).await,
        json!([
            ["PermissionError", 1],
            ["PermissionError", 1],
            ["PermissionError", 1],
            ["PermissionError", 1],
            ["PermissionError", 1],
            ["gaierror", -3]
        ])
    );
    assert_fresh(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_bomb_stops_at_the_process_limit() {
    let rt = PythonRuntime::new();
    // Every process forks ten times (up to 1,024 processes); every process but the run's
    // first sleeps; then the first tries one more fork.
    let program = format!(
        "{ATTEMPT}import os, time\nfor _ in range(10):\n    try:\n        os.fork()\n    except OSError:\n        pass\nif os.getpid() != 1:\n    time.sleep(60)\n    os._exit(0)\ntime.sleep(0.5)\ndef fork_once():\n    if os.fork() == 0:\n        os._exit(0)\nreturn [len([p for p in os.listdir('/proc') if p.isdigit()]), attempt(fork_once)]"
    );
    let value = result(&rt, &program).await;
    let processes = value[0].as_u64().unwrap();
    // The run's processes alone make the limit: no process of the runtime's own is counted
    // beside them (the zygote clones the run's first process into its PID namespace).
    assert_eq!(processes, u64::from(PYTHON_PROCESS_LIMIT), "{value}");
    assert_eq!(value[1], json!(["BlockingIOError", 11]), "{value}");
    nothing_left_behind(&rt).await;
    assert_fresh(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_double_fork_setsid_daemon_is_gone_when_the_run_ends() {
    for mode in [PythonMode::Zygote, PythonMode::SpawnPerRun] {
        let rt = PythonRuntime::new().with_mode(mode);
        rt.warm_up().await.unwrap();
        let program = "import os, time\nr, w = os.pipe()\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.write(w, str(os.getpid()).encode())\n        time.sleep(300)\n    os._exit(0)\ndaemon = int(os.read(r, 32))\nos.kill(daemon, 0)\nreturn [daemon != 1, os.getsid(daemon) != os.getsid(0)]";
        assert_eq!(result(&rt, program).await, json!([true, true]), "{mode:?}");
        if mode == PythonMode::Zygote {
            nothing_left_behind(&rt).await;
        }
        // The daemon is not in the next run's namespace, nor anywhere else.
        assert_fresh(&rt).await;
    }
    let rt = PythonRuntime::new().with_mode(PythonMode::SpawnPerRun);
    let me = std::process::id();
    let program = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(300)\n    os._exit(0)\ntime.sleep(0.2)\nreturn 1";
    assert_eq!(result(&rt, program).await, json!(1));
    let started = std::time::Instant::now();
    while !descendants(me).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "a spawned run left {:?}",
            descendants(me)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ptrace_mount_unshare_and_other_refused_calls_fail_with_eperm() {
    let rt = PythonRuntime::new();
    let calls = [
        ("bpf", libc::SYS_bpf),
        ("keyctl", libc::SYS_keyctl),
        ("perf_event_open", libc::SYS_perf_event_open),
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("setns", libc::SYS_setns),
        ("unshare", libc::SYS_unshare),
        ("mount", libc::SYS_mount),
        ("ptrace", libc::SYS_ptrace),
        ("process_vm_readv", libc::SYS_process_vm_readv),
        ("io_uring_setup", libc::SYS_io_uring_setup),
        ("socket", libc::SYS_socket),
    ];
    let mut program = String::from(
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\ndef raw(nr, *args):\n    ctypes.set_errno(0)\n    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])\n    return [rc, ctypes.get_errno()]\nout = {}\n",
    );
    for (name, nr) in calls {
        program.push_str(&format!("out[{name:?}] = raw({nr}, 0, 0, 0, 0, 0)\n"));
    }
    program.push_str(&format!(
        "child = os.fork()\nif child == 0:\n    import time\n    time.sleep(30)\n    os._exit(0)\nout['ptrace_attach'] = raw({}, 16, child, 0, 0)\nout['clone_newuser'] = raw({}, 0x10000000 | 17, 0, 0, 0, 0)\nout['clone_newnet'] = raw({}, 0x40000000 | 17, 0, 0, 0, 0)\nout['libc.mount'] = [libc.mount(b'tmpfs', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno()]\nout['libc.unshare'] = [libc.unshare(0x10000000), ctypes.get_errno()]\nout['chroot'] = [libc.chroot(b'/tmp'), ctypes.get_errno()]\nreturn out",
        libc::SYS_ptrace,
        libc::SYS_clone,
        libc::SYS_clone
    ));
    let value = result(&rt, &program).await;
    let object = value.as_object().unwrap();
    assert_eq!(object.len(), calls.len() + 6);
    for (name, outcome) in object {
        assert_eq!(
            outcome,
            &json!([-1, 1]),
            "{name} was not refused with EPERM"
        );
    }
    assert_fresh(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_capability_and_no_way_to_gain_one() {
    let rt = PythonRuntime::new();
    let value = result(
        &rt,
        "import ctypes\nlines = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\nlibc = ctypes.CDLL(None, use_errno=True)\nreturn [lines['CapEff'], lines['CapPrm'], lines['CapBnd'], lines['NoNewPrivs'], lines['Seccomp'], libc.prctl(38, 0, 0, 0, 0), ctypes.get_errno()]",
    )
    .await;
    // prctl(PR_SET_NO_NEW_PRIVS, 0) fails with EINVAL: the flag cannot be cleared.
    assert_eq!(
        value,
        json!([
            "0000000000000000",
            "0000000000000000",
            "0000000000000000",
            "1",
            "2",
            -1,
            22
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_ends_its_own_process_ends_the_run_at_once() {
    // Its daemon would hold the run's socket open until the deadline; under the sandbox it
    // dies with the run's first process, so the run ends now, with the exit status.
    let rt = PythonRuntime::new();
    rt.warm_up().await.unwrap();
    let program = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(300)\n    os._exit(0)\ntime.sleep(0.2)\nos._exit(4)";
    let limits = ordinary_limits().with_timeout(Duration::from_secs(50));
    let host = TestHost::new();
    let failure = tokio::time::timeout(
        Duration::from_secs(40),
        rt.run(program, shared(host), &limits, CancellationToken::new()),
    )
    .await
    .expect("the run waited for its deadline")
    .unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Internal);
    assert_eq!(
        failure.message,
        "the Python process ended without reporting an outcome (exit status 4)"
    );
    nothing_left_behind(&rt).await;
    assert_fresh(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spares_whose_run_child_died_are_not_used() {
    let rt = PythonRuntime::new();
    rt.warm_up().await.unwrap();
    for spare in rt.spare_pids().await {
        // SAFETY: plain syscall on a child of our zygote, which the zygote has not reaped.
        unsafe {
            libc::kill(i32::try_from(spare).unwrap(), libc::SIGKILL);
        }
        // Once the run child is dead, its program process may still be dying (it gets its
        // parent's death signal) and hold the socket open for a moment.
        while std::fs::read_to_string(format!("/proc/{spare}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "))
        {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    assert_fresh(&rt).await;
    nothing_left_behind(&rt).await;
}

/// An interpreter installed under `/tmp` (a clean clone checked out there, with its own venv):
/// the zygote must not build its view on a directory that holds the interpreter. It did, and
/// the sandbox refused to start ("mount ... No such file or directory").
#[tokio::test]
async fn an_interpreter_under_tmp_is_sandboxed_too() {
    let python = std::env::var("TOOLS_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let dir = std::path::PathBuf::from(format!("/tmp/venv-under-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // `--copies`: the interpreter itself lives under /tmp, not a link out of it.
    let made = std::process::Command::new(&python)
        .args(["-m", "venv", "--without-pip", "--copies"])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(made.success(), "cannot make a venv with {python}");
    let rt = PythonRuntime::with_interpreter(dir.join("bin/python"));
    assert_eq!(
        result(&rt, "import os\nreturn [os.getpid(), os.listdir('/tmp')]").await,
        json!([1, []])
    );
    for layer in rt.sandbox_report().await.unwrap().layers {
        assert!(layer.active, "{layer:?}");
    }
    drop(rt);
    let _ = std::fs::remove_dir_all(&dir);
}
