//! The Python sandbox's hostile tests again, as an ordinary user.
//!
//! CI runs as root, and a root host takes other paths in the sandbox (a helper maps a second
//! user for the run children, the kernel exempts root from `RLIMIT_NPROC`, root may write the
//! cgroup hierarchies). So that a guarantee that holds only for root cannot pass unnoticed, this
//! test runs the sandbox's test modules a second time in a copy of this test binary, as user
//! `nobody`, and fails with that run's output when any of them fails there. When the tests run
//! as an ordinary user already, the whole run is the unprivileged run and this test says so.
#![cfg(all(feature = "python", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The modules run again as `nobody`: every test of the sandbox and of a run's edges.
const MODULES: &[&str] = &["python_sandbox::", "python_fence::", "python_protocol::"];

/// The user and group the second run takes (`nobody`, `nogroup`).
const NOBODY: u32 = 65534;

/// Set in the second run, so it does not start a third.
const RERUN: &str = "TOOLS_UNPRIVILEGED_RERUN";

/// A command that runs as `nobody` with an empty environment but `PATH`.
fn as_nobody(program: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .current_dir("/")
        .uid(NOBODY)
        .gid(NOBODY);
    command
}

/// An interpreter `nobody` can run: the configured one when it can, else the system's (a
/// configured venv under root's home is out of its reach).
fn interpreter_for_nobody() -> PathBuf {
    let mut candidates: Vec<PathBuf> = std::env::var_os("TOOLS_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    candidates.extend(
        ["/usr/bin/python3", "/usr/local/bin/python3"]
            .iter()
            .map(PathBuf::from),
    );
    for candidate in &candidates {
        let ran = as_nobody(candidate)
            .args(["-I", "-S", "-c", "import ctypes, asyncio"])
            .output();
        if ran.is_ok_and(|out| out.status.success()) {
            return candidate.clone();
        }
    }
    panic!(
        "no Python interpreter that user nobody ({NOBODY}) can run; tried {candidates:?}. \
         Install Debian's python3 or point TOOLS_PYTHON at an interpreter outside root's home"
    );
}

/// The names of the tests `MODULES` select in `binary`.
fn listed(binary: &Path) -> Vec<String> {
    let out = Command::new(binary)
        .arg("--list")
        .args(MODULES)
        .output()
        .expect("listing the tests");
    assert!(out.status.success(), "--list failed: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_sandbox_tests_hold_for_an_unprivileged_user() {
    if std::env::var_os(RERUN).is_some() {
        return;
    }
    // SAFETY: plain syscall without arguments.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "the tests run as an ordinary user already: every sandbox test of this run is the \
             unprivileged run"
        );
        return;
    }
    let me = std::env::current_exe().expect("the test binary's path");
    let tests = listed(&me);
    assert!(
        tests.len() >= 14,
        "expected the sandbox's tests among {MODULES:?}, found {tests:?}"
    );

    // A copy `nobody` can execute, whatever the checkout's folder allows.
    let folder = tempfile::Builder::new()
        .prefix("tools-unprivileged-")
        .tempdir()
        .expect("a temporary folder");
    std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let binary = folder.path().join("integration");
    std::fs::copy(&me, &binary).expect("copying the test binary");
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();

    let python = interpreter_for_nobody();
    let out = as_nobody(&binary)
        .args(MODULES)
        .args(["--test-threads", "2"])
        .env("TOOLS_PYTHON", &python)
        .env(RERUN, "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("running the tests as nobody");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the sandbox's tests fail as user nobody (with {}): the guarantees differ from root's\n\
         --- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        python.display()
    );
    let summary = format!(
        "test result: ok. {} passed; 0 failed; 0 ignored",
        tests.len()
    );
    assert!(
        stdout.contains(&summary),
        "expected `{summary}` from the run as nobody:\n{stdout}"
    );
}
