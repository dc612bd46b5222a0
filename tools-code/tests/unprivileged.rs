//! The Python sandbox's hostile tests again, as an ordinary user.
//!
//! CI runs as root, and a root host takes other paths in the sandbox (a helper maps a second
//! user for the run children, the kernel exempts root from `RLIMIT_NPROC`, root may write the
//! cgroup hierarchies). So that a guarantee that holds only for root cannot pass unnoticed, this
//! test runs the sandbox's test modules a second time in a copy of this test binary, as user
//! `nobody`, and fails with that run's output when any of them fails there. When the tests run
//! as an ordinary user already, the whole run is the unprivileged run and this test says so.
//!
//! A run's memory account needs a cgroup the host may write: root may write the v1 hierarchies
//! of this project's machines, an ordinary user only what was delegated to it. So the test
//! delegates as an operator would: a cgroup of the `memory` and `pids` hierarchies, owned by
//! `nobody`, that the second run joins before its first instruction (v1; a machine with another
//! layout fails here and says so). Without that, the second run's `Require` refuses to start,
//! which is the difference between the two that the runtime's report names.
#![cfg(all(feature = "python", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::CString;
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

/// A cgroup of each v1 hierarchy the memory account uses, made inside this process's own and
/// owned by `nobody` (a delegation); removed with whatever the second run left in it.
struct Delegated {
    folders: Vec<PathBuf>,
}

impl Delegated {
    fn new() -> Delegated {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap();
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let folders = ["memory", "pids"]
            .iter()
            .map(|controller| {
                // `ID:memory:/path` in /proc/self/cgroup; the hierarchy's mount point from the
                // mount whose super options name the controller.
                let path = own
                    .lines()
                    .filter_map(|line| {
                        let mut fields = line.splitn(3, ':');
                        fields.next()?;
                        Some((fields.next()?, fields.next()?))
                    })
                    .find(|(controllers, _)| controllers.split(',').any(|c| c == *controller))
                    .map(|(_, path)| path.trim_start_matches('/').to_owned())
                    .unwrap_or_else(|| {
                        panic!(
                            "this test delegates a cgroup v1 `{controller}` hierarchy, and this \
                             machine mounts none:\n{own}"
                        )
                    });
                let point = mountinfo
                    .lines()
                    .filter_map(|line| line.split_once(" - "))
                    .find(|(_, right)| {
                        let mut right = right.split(' ');
                        right.next() == Some("cgroup")
                            && right
                                .nth(1)
                                .is_some_and(|o| o.split(',').any(|c| c == *controller))
                    })
                    .and_then(|(left, _)| left.split(' ').nth(4))
                    .map(PathBuf::from)
                    .expect("the hierarchy's mount point");
                let folder = point
                    .join(path)
                    .join(format!("tools-unprivileged-{}", std::process::id()));
                std::fs::create_dir(&folder).unwrap_or_else(|e| {
                    panic!("cannot make the delegated cgroup {}: {e}", folder.display())
                });
                for entry in std::iter::once(folder.clone()).chain(
                    std::fs::read_dir(&folder)
                        .unwrap()
                        .map(|entry| entry.unwrap().path()),
                ) {
                    std::os::unix::fs::chown(&entry, Some(NOBODY), Some(NOBODY)).unwrap();
                }
                folder
            })
            .collect();
        Delegated { folders }
    }

    /// Has the command's process join every delegated cgroup before its program starts (after
    /// it became `nobody`, as cgroup v1 allows for a process of the file's owner).
    fn join(&self, command: &mut Command) {
        let files: Vec<CString> = self
            .folders
            .iter()
            .map(|f| CString::new(f.join("cgroup.procs").to_string_lossy().as_bytes()).unwrap())
            .collect();
        // SAFETY: only open, write and close between fork and exec, on paths made before.
        unsafe {
            command.pre_exec(move || {
                for file in &files {
                    let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                    let error = std::io::Error::last_os_error();
                    libc::close(fd);
                    if written != 1 {
                        return Err(error);
                    }
                }
                Ok(())
            });
        }
    }
}

impl Drop for Delegated {
    fn drop(&mut self) {
        for folder in &self.folders {
            // The run cgroups left in it first (their processes die with the second run's
            // zygote, a moment after it exits).
            for _ in 0..200 {
                let inner: Vec<PathBuf> = std::fs::read_dir(folder)
                    .map(|entries| {
                        entries
                            .flatten()
                            .map(|e| e.path())
                            .filter(|p| p.is_dir())
                            .collect()
                    })
                    .unwrap_or_default();
                let all_gone = inner.iter().all(|p| std::fs::remove_dir(p).is_ok());
                if all_gone && std::fs::remove_dir(folder).is_ok() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    }
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
    let delegated = Delegated::new();
    let mut command = as_nobody(&binary);
    delegated.join(&mut command);
    let out = command
        .args(MODULES)
        .args(["--test-threads", "2"])
        .env("TOOLS_PYTHON", &python)
        .env(RERUN, "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("running the tests as nobody");
    drop(delegated);
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
