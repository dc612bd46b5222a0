//! An imported stdio server is stopped as the MCP specification's lifecycle says: its stdin
//! closed, then `SIGTERM` after `exit_timeout`, then `SIGKILL` after `terminate_timeout`, and
//! reaped every time, whether the import is closed, dropped, or its runtime shut down. The
//! servers are `tests/peers/shutdown.py` in its three modes, each writing to a file how it was
//! stopped.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::{Duration, Instant};

use tools_mcp::{ImportOptions, McpImport, McpSource};
use tools_runtime::{ToolCall, ToolRuntime};

use crate::support;

/// `shutdown.py MODE FILE` as an import source.
fn source(mode: &str, file: &Path) -> McpSource {
    McpSource::stdio(
        support::python().to_string_lossy().into_owned(),
        [
            support::peers()
                .join("shutdown.py")
                .to_string_lossy()
                .into_owned(),
            mode.to_owned(),
            file.to_string_lossy().into_owned(),
        ],
    )
}

fn options(exit: Duration, terminate: Duration) -> ImportOptions {
    ImportOptions::new()
        .exit_timeout(exit)
        .terminate_timeout(terminate)
}

/// The lines the server wrote.
fn notes(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Whether a process `pid` exists, a zombie included (`kill(pid, 0)` succeeds for one).
fn exists(pid: u32) -> bool {
    let pid = libc::pid_t::try_from(pid).unwrap();
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Waits up to `bound` for process `pid` to be gone (exited and reaped).
fn gone_within(pid: u32, bound: Duration) -> bool {
    let deadline = Instant::now() + bound;
    while exists(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

async fn connected(
    runtime: &ToolRuntime,
    mode: &str,
    file: &Path,
    opts: ImportOptions,
) -> McpImport {
    let import = McpImport::connect(runtime.scope(), source(mode, file), opts)
        .await
        .unwrap_or_else(|e| panic!("{}", e.report()));
    let pong = runtime
        .execute(ToolCall::new("c1", "ping", serde_json::json!({})))
        .await;
    assert_eq!(pong.text(), "pong", "{pong:?}");
    import
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_when_its_stdin_closes_is_not_signalled() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes");
    let runtime = ToolRuntime::new();
    let import = connected(
        &runtime,
        "eof",
        &file,
        options(Duration::from_secs(10), Duration::from_secs(10)),
    )
    .await;
    let pid = import.server_pid().unwrap();
    let started = Instant::now();
    import.close().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        !exists(pid),
        "the server is gone, and reaped, when close returns"
    );
    assert_eq!(notes(&file), ["started", "eof"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_its_stdin_closing_gets_sigterm_after_the_exit_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes");
    let runtime = ToolRuntime::new();
    let exit = Duration::from_millis(400);
    let import = connected(
        &runtime,
        "term",
        &file,
        options(exit, Duration::from_secs(10)),
    )
    .await;
    let pid = import.server_pid().unwrap();
    let started = Instant::now();
    import.close().await;
    let took = started.elapsed();
    assert!(
        took >= exit,
        "SIGTERM comes after the exit timeout: {took:?}"
    );
    assert!(
        took < Duration::from_secs(5),
        "and does not wait for SIGKILL: {took:?}"
    );
    assert!(!exists(pid));
    assert_eq!(notes(&file), ["started", "stdin closed", "term"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_stdin_and_sigterm_is_killed_after_both_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes");
    let runtime = ToolRuntime::new();
    let (exit, terminate) = (Duration::from_millis(300), Duration::from_millis(300));
    let import = connected(&runtime, "stubborn", &file, options(exit, terminate)).await;
    let pid = import.server_pid().unwrap();
    let started = Instant::now();
    import.close().await;
    let took = started.elapsed();
    assert!(took >= exit + terminate, "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(!exists(pid), "killed and reaped");
    assert_eq!(notes(&file), ["started", "stdin closed", "sigterm ignored"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_import_stops_its_server_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes");
    let runtime = ToolRuntime::new();
    let (exit, terminate) = (Duration::from_millis(300), Duration::from_millis(300));
    let import = connected(&runtime, "stubborn", &file, options(exit, terminate)).await;
    let pid = import.server_pid().unwrap();
    let started = Instant::now();
    drop(import);
    assert!(exists(pid), "a drop does not wait for the server");
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "the stubborn server is killed after both bounds"
    );
    assert!(
        started.elapsed() >= exit + terminate,
        "{:?}",
        started.elapsed()
    );
    assert_eq!(notes(&file), ["started", "stdin closed", "sigterm ignored"]);
}

#[test]
fn a_runtime_shut_down_under_an_open_import_stops_its_server() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes");
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let runtime = ToolRuntime::new();
    let exit = Duration::from_millis(300);
    let import = tokio.block_on(connected(
        &runtime,
        "term",
        &file,
        options(exit, Duration::from_secs(10)),
    ));
    let pid = import.server_pid().unwrap();
    // The connection's task, and with it the transport, go with the runtime; the import stays.
    drop(tokio);
    assert!(
        gone_within(pid, Duration::from_secs(5)),
        "the server is stopped without a runtime"
    );
    assert_eq!(notes(&file), ["started", "stdin closed", "term"]);
    drop(import);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connect_that_fails_stops_the_server_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes");
    let runtime = ToolRuntime::new();
    // The name rule refuses the server's one tool name: connecting fails after the handshake.
    let opts = options(Duration::from_millis(300), Duration::from_secs(10))
        .rename(|_| Some("not a valid name".to_owned()));
    let failed = McpImport::connect(runtime.scope(), source("term", &file), opts).await;
    assert!(failed.is_err());
    // The failed connect closed the connection and waited for the server to be gone.
    assert_eq!(notes(&file), ["started", "stdin closed", "term"]);
}

/// Set in the copy of this test binary that imports a server and exits without closing it.
const EXITING_CHILD: &str = "TOOLS_MCP_TEST_EXIT_WITH_SERVER";

/// Whether process `pid` has ended: gone, or a zombie no longer ours to reap (after this test's
/// child exited, its server's parent is whatever reaps orphans here).
fn dead_within(pid: u32, bound: Duration) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        let dead = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            // `pid (comm) S ...`: the state follows the last `)`.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        };
        if dead {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_server_still_running_when_the_importing_process_exits_is_killed_with_it() {
    let name =
        "shutdown::a_server_still_running_when_the_importing_process_exits_is_killed_with_it";
    if let Some(file) = std::env::var_os(EXITING_CHILD) {
        // The child: a stubborn server, bounds too long to matter, and an exit without close.
        let tokio = tokio::runtime::Runtime::new().unwrap();
        let runtime = ToolRuntime::new();
        let opts = options(Duration::from_secs(60), Duration::from_secs(60));
        let import = tokio.block_on(connected(&runtime, "stubborn", Path::new(&file), opts));
        println!("server pid {}", import.server_pid().unwrap());
        use std::io::Write as _;
        std::io::stdout().flush().unwrap();
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes");
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(EXITING_CHILD, &file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pid: u32 = stdout
        .lines()
        .find_map(|line| line.split_once("server pid ").map(|(_, pid)| pid.trim()))
        .unwrap_or_else(|| panic!("no pid in {stdout}"))
        .parse()
        .unwrap();
    assert!(
        dead_within(pid, Duration::from_secs(5)),
        "the kernel killed the server with the process that started it"
    );
    // It was killed: it never got as far as SIGTERM (nor would it have exited on it).
    assert_eq!(notes(&file), ["started"]);
}
