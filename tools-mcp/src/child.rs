//! An imported stdio server's process, and how it is stopped.
//!
//! The MCP specification's shutdown for stdio (lifecycle, "Shutdown"): the client closes the
//! server's stdin and waits for it to exit, sends `SIGTERM` if it has not exited within a
//! reasonable time, and `SIGKILL` if it has not exited within a reasonable time after that.
//!
//! Each server is started by a thread of its own (`mcp-server-reaper`), which owns the child and
//! nothing else: it waits until the transport is closed or dropped, then runs that sequence with
//! the import's bounds ([`Shutdown`]: [`ImportOptions::exit_timeout`] after stdin closed,
//! [`ImportOptions::terminate_timeout`] after `SIGTERM`), reaps the child, says so
//! ([`Gone`]) and ends. It owes nothing to an async runtime: a transport dropped with its
//! runtime (a runtime shut down with the import still open), or outside any runtime, still stops
//! its server the same way, and no zombie is left. Signals go to the child only while it has not
//! been reaped, so they cannot reach another process that was given its pid.
//!
//! On Linux the child is also bound to that thread's life (`PR_SET_PDEATHSIG` with `SIGKILL`,
//! set between fork and exec): when this process ends with the sequence unfinished (its `main`
//! returned, or it was killed), the kernel kills the server, so none outlives the process that
//! started it. A program that wants its servers' own shutdown to finish (their last spans
//! exported, their state written) awaits [`McpImport::close`](crate::McpImport::close) before
//! it exits.
//!
//! [`ImportOptions::exit_timeout`]: crate::ImportOptions::exit_timeout
//! [`ImportOptions::terminate_timeout`]: crate::ImportOptions::terminate_timeout

use std::process::{Child, ChildStdin, ChildStdout, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The bounds of a stdio server's shutdown.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shutdown {
    /// How long the server has to exit once its stdin is closed, before `SIGTERM`.
    pub(crate) exit: Duration,
    /// How long it has to exit after `SIGTERM`, before `SIGKILL`.
    pub(crate) terminate: Duration,
}

impl Shutdown {
    /// The longest the whole sequence should take: both bounds, and a margin for the exit after
    /// `SIGKILL`.
    pub(crate) fn bound(self) -> Duration {
        self.exit
            .saturating_add(self.terminate)
            .saturating_add(Duration::from_secs(5))
    }
}

/// Whether the server's process is gone (exited and reaped); cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Gone(tokio::sync::watch::Receiver<bool>);

impl Gone {
    /// Waits until the process is gone.
    pub(crate) async fn wait(&mut self) {
        // An error means the reaper ended, which it does only once the child is reaped.
        let _ = self.0.wait_for(|gone| *gone).await;
    }
}

/// A running stdio server: its pid, and the handle whose drop (or [`stop`](Self::stop)) starts
/// its shutdown.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    pid: u32,
    stop: Option<mpsc::Sender<()>>,
    gone: Gone,
}

/// The server's end of the pipes, as the reaper thread hands them over.
type Started = std::io::Result<(u32, ChildStdin, ChildStdout)>;

impl ServerProcess {
    /// Starts `command` (its stdin and stdout piped) on a reaper thread of its own, stopped
    /// with `shutdown`'s bounds once the handle is stopped or dropped.
    pub(crate) fn spawn(
        mut command: std::process::Command,
        shutdown: Shutdown,
    ) -> std::io::Result<(ServerProcess, ChildStdin, ChildStdout)> {
        bind_to_this_thread(&mut command);
        let (started_tx, started_rx) = mpsc::sync_channel::<Started>(1);
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let (gone_tx, gone_rx) = tokio::sync::watch::channel(false);
        std::thread::Builder::new()
            .name("mcp-server-reaper".to_owned())
            .spawn(move || {
                let mut child = match command.spawn() {
                    Ok(child) => child,
                    Err(error) => {
                        let _ = started_tx.send(Err(error));
                        gone_tx.send_replace(true);
                        return;
                    }
                };
                let pipes = (child.stdin.take(), child.stdout.take());
                let (Some(stdin), Some(stdout)) = pipes else {
                    let _ = started_tx.send(Err(std::io::Error::other(
                        "the server's stdin or stdout is not piped",
                    )));
                    let _ = child.kill();
                    let _ = child.wait();
                    gone_tx.send_replace(true);
                    return;
                };
                if started_tx.send(Ok((child.id(), stdin, stdout))).is_ok() {
                    // Until the handle is stopped or dropped.
                    let _ = stop_rx.recv();
                }
                stop(&mut child, shutdown);
                gone_tx.send_replace(true);
            })?;
        let (pid, stdin, stdout) = started_rx.recv().map_err(|_| {
            std::io::Error::other("the thread that starts the MCP server ended early")
        })??;
        let process = ServerProcess {
            pid,
            stop: Some(stop_tx),
            gone: Gone(gone_rx),
        };
        Ok((process, stdin, stdout))
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// What says when the process is gone.
    pub(crate) fn gone(&self) -> Gone {
        self.gone.clone()
    }

    /// Starts the shutdown (the caller has closed the server's stdin first).
    pub(crate) fn stop(&mut self) {
        self.stop.take();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The shutdown sequence, from the moment the server's stdin was closed: wait, `SIGTERM`,
/// wait, `SIGKILL`; the child is reaped in every case.
fn stop(child: &mut Child, shutdown: Shutdown) {
    let pid = child.id();
    if let Some(status) = exited_within(child, shutdown.exit) {
        tracing::debug!(pid, %status, "the MCP server exited when its stdin closed");
        return;
    }
    terminate(child);
    if let Some(status) = exited_within(child, shutdown.terminate) {
        tracing::debug!(
            pid,
            %status,
            exit_timeout = ?shutdown.exit,
            "the MCP server did not exit when its stdin closed; it exited on SIGTERM"
        );
        return;
    }
    tracing::warn!(
        pid,
        exit_timeout = ?shutdown.exit,
        terminate_timeout = ?shutdown.terminate,
        "the MCP server exited neither when its stdin closed nor on SIGTERM; it was killed"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// Sends `SIGTERM` to the child (not yet reaped, so its pid is still its own).
#[cfg(unix)]
fn terminate(child: &Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) on the pid of our own child, which has not been reaped.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
}

/// Without `SIGTERM`, the next step (a kill) comes after the same wait.
#[cfg(not(unix))]
fn terminate(_child: &Child) {}

/// The child's exit status if it exits (and is reaped) within `bound`. An error of `waitpid`
/// (the child is no longer ours to wait for) counts as gone.
fn exited_within(child: &mut Child, bound: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + bound;
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            Err(error) => {
                tracing::debug!(%error, "the MCP server's process cannot be waited for");
                return Some(ExitStatus::default());
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Has the kernel kill the child when the thread that starts it (the reaper) ends: it ends once
/// the child is reaped, or with this process.
#[cfg(target_os = "linux")]
fn bind_to_this_thread(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: getpid is async-signal-safe.
    let parent = unsafe { libc::getpid() };
    // SAFETY: between fork and exec only async-signal-safe system calls are made.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent ended between fork and prctl: nothing would kill this child later.
            // (No allocation here: after fork only async-signal-safe work is allowed, and
            // `io::Error::other` would box its message.)
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn bind_to_this_thread(_command: &mut std::process::Command) {}
