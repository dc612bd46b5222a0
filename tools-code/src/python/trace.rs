//! Timestamps of a run's phases, for finding where its time goes (a diagnostic, off unless the
//! environment variable [`TRACE_VAR`] names a file when the first zygote starts).
//!
//! When it is set, the host appends one line per phase to that file, `<ns> <pid> <label>`
//! (`<ns>` is `CLOCK_MONOTONIC` in nanoseconds, `<pid>` the run child's process id as the host
//! sees it, 0 when there is none yet), and hands the file to the zygote as descriptor 4, where
//! the runner (the zygote, each run child and its program process) appends its own lines with
//! the same clock and the same pid (`runner/00_channel.py` `_trace`). Every process holds the
//! file open from then on, the program's included: **a tracing runtime is not sandboxed as it
//! should be** (a program can write to the trace), so this is for benches and measurements
//! only. The `code_runtime` bench's `CODE_RUNTIME_PROFILE=python:N` turns it on and prints the
//! phases.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;

/// The environment variable that turns the trace on: the path of the file to append to.
pub(crate) const TRACE_VAR: &str = "TOOLS_CODE_PY_TRACE";

/// The trace file, if tracing (opened once per host process).
fn file() -> Option<&'static File> {
    static FILE: OnceLock<Option<File>> = OnceLock::new();
    FILE.get_or_init(|| {
        let path = std::env::var_os(TRACE_VAR)?;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
    })
    .as_ref()
}

/// The raw descriptor of the trace file the zygote gets as its descriptor 4, if tracing.
pub(crate) fn descriptor() -> Option<i32> {
    file().map(AsRawFd::as_raw_fd)
}

/// Whether phases are being traced.
pub(crate) fn enabled() -> bool {
    file().is_some()
}

/// `CLOCK_MONOTONIC` in nanoseconds (the clock the runner's `time.monotonic_ns` reads).
pub(crate) fn now() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut ts);
    }
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

/// Records that `pid`'s phase `label` happened at `ns` (from [`now`]).
pub(crate) fn at(ns: u64, pid: impl std::fmt::Display, label: &str) {
    if let Some(mut file) = file() {
        let _ = file.write_all(format!("{ns} {pid} {label}\n").as_bytes());
    }
}

/// Records that `pid`'s phase `label` happens now.
pub(crate) fn mark(pid: impl std::fmt::Display, label: &str) {
    if enabled() {
        at(now(), pid, label);
    }
}
