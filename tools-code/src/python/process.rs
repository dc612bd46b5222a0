//! Child processes of the Python runtime: resolving the interpreter, the zygote and its control
//! socket (with file-descriptor passing), and the spawn-per-run process.
//!
//! Every child gets its private socket as file descriptor 3 (or, for a forked run, a descriptor
//! the zygote receives with `SCM_RIGHTS`), an empty environment but `PYTHONHASHSEED=0` (which
//! the runner drops from its environment as it starts, see [`Interpreter::command`]), `/` as
//! its working directory and `/dev/null` as stdin, stdout and stderr. Where the run's memory is
//! accounted (see `cgroup.rs`), each run child is made with a cgroup of its own: a forked one gets its
//! `cgroup.procs` files with the fork request and joins as its first step, a spawned one joins
//! between fork and exec.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};

use serde::Deserialize;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use super::CONTROL_TIMEOUT;
use super::cgroup::{Account, RunCgroup};
use super::frames::READY_FRAME;
use super::trace;

/// The resolved interpreter.
#[derive(Debug, Clone)]
pub(crate) struct Interpreter {
    path: PathBuf,
    /// Whether it takes `-P` (CPython 3.11 and later): no potentially unsafe path (for `-c`,
    /// the working directory) put first on `sys.path`.
    safe_path: bool,
}

/// What the resolving interpreter prints: its real executable, then whether it has
/// `sys.flags.safe_path` (`-P`).
const RESOLVE: &str =
    "import sys; print(sys.executable); print(int(hasattr(sys.flags, 'safe_path')))";

impl Interpreter {
    /// Resolves `configured`, else `TOOLS_PYTHON`, else `python3`, to the real executable by
    /// asking it for `sys.executable` (a version-manager shim then costs nothing per run).
    pub(crate) async fn resolve(configured: Option<PathBuf>) -> Result<Interpreter, String> {
        let candidate = configured
            .or_else(|| std::env::var_os("TOOLS_PYTHON").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("python3"));
        let output = Command::new(&candidate)
            .args(["-I", "-S", "-c", RESOLVE])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|e| {
                format!(
                    "cannot start the Python interpreter {}: {e} (set TOOLS_PYTHON or configure a path)",
                    candidate.display()
                )
            })?;
        if !output.status.success() {
            return Err(format!(
                "the Python interpreter {} failed to start ({})",
                candidate.display(),
                output.status
            ));
        }
        let printed = String::from_utf8_lossy(&output.stdout);
        let (executable, safe_path) = match printed.trim_end().rsplit_once('\n') {
            Some((executable, flag)) => (executable.trim(), flag.trim() == "1"),
            None => (printed.trim(), false),
        };
        let path = if executable.is_empty() {
            candidate
        } else {
            PathBuf::from(executable)
        };
        Ok(Interpreter { path, safe_path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// `python -s -P -S -c RUNNER MODE CONFIG` with `fd` as descriptor 3 in a new process group
    /// (`CONFIG` is the runner's settings as JSON: the sandbox's), joining the cgroups whose
    /// `cgroup.procs` are `join` before it execs (a failure to join fails the spawn when
    /// `strict`, and is ignored otherwise). A zygote started while the trace is on (see
    /// `trace.rs`) gets the trace file as its descriptor 4, and a last argument `trace` says so.
    ///
    /// Isolated as `-I` would, but for the hash seed: `-I` is `-E -P -s`, and `-E` (ignore
    /// every `PYTHON*` variable) would ignore `PYTHONHASHSEED` too. So the environment is
    /// cleared and holds only `PYTHONHASHSEED=0`: every interpreter hashes strings and bytes
    /// alike, so the iteration order of a set of them is the same in every process, which the
    /// replay of a paused run needs (see "A run its host may replay" in the module doc of
    /// `python/mod.rs`). `-s`: no user site directory; `-P` (an interpreter older than 3.11
    /// lacks it, and the runner drops the entry itself): no working directory on `sys.path`;
    /// `-S`: no `site` at all. The runner removes `PYTHONHASHSEED` from its environment
    /// before anything else, so a program sees none.
    fn command(
        &self,
        runner: &str,
        mode: &str,
        config: &str,
        fd: RawFd,
        join: Vec<RawFd>,
        strict: bool,
    ) -> Command {
        let trace = if mode == "zygote" {
            super::trace::descriptor()
        } else {
            None
        };
        let mut command = Command::new(&self.path);
        command.args(["-s", "-S"]);
        if self.safe_path {
            command.arg("-P");
        }
        command.args(["-c", runner, mode, config]);
        if trace.is_some() {
            command.arg("trace");
        }
        command
            .env_clear()
            .env("PYTHONHASHSEED", "0")
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        // SAFETY: only async-signal-safe calls (write, dup2, fcntl, setpgid, close) between
        // fork and exec.
        unsafe {
            command.pre_exec(move || {
                // Out of the way of descriptor 3 first (the trace file may be 3 here).
                let trace = match trace {
                    Some(trace) => {
                        let moved = libc::fcntl(trace, libc::F_DUPFD_CLOEXEC, 10);
                        if moved < 0 {
                            return Err(io::Error::last_os_error());
                        }
                        Some(moved)
                    }
                    None => None,
                };
                for &procs in &join {
                    // "0": the writing process itself.
                    if libc::write(procs, b"0".as_ptr().cast(), 1) != 1 && strict {
                        return Err(io::Error::last_os_error());
                    }
                }
                if fd == 3 {
                    let flags = libc::fcntl(fd, libc::F_GETFD);
                    if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                } else if libc::dup2(fd, 3) < 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(trace) = trace {
                    if libc::dup2(trace, 4) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    libc::close(trace);
                }
                if libc::setpgid(0, 0) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        command
    }
}

/// The pre-started interpreter that forks a child per run.
///
/// One control thread per zygote owns the control socket and serves every request in order;
/// a [`RunProcess`] holds a sender of that thread's queue, so its `Drop` can release the
/// child without a tokio runtime, and the thread lives until the zygote and every child it
/// forked have been dropped. Then it closes the control socket (the zygote kills every child
/// still alive and exits) and reaps the zygote.
pub(crate) struct Zygote {
    requests: mpsc::Sender<Request>,
    pid: u32,
    alive: Arc<AtomicBool>,
    /// The sandbox report from its first answer (`{"layer": null | "reason"}`).
    sandbox: Option<serde_json::Value>,
    /// Where the run children's cgroups are made: only when the zygote's throwaway run child
    /// could join one.
    account: Option<Arc<Account>>,
}

/// A request to the control thread.
enum Request {
    /// Fork a child that runs on `socket`; the reply owns it (as a [`RunProcess`] built with
    /// `requests`), so a child whose caller went away is still released.
    Fork {
        socket: OwnedFd,
        /// Where the child's cgroup is made (here, off the caller's task): its `cgroup.procs`
        /// go with the request, the rest with the child.
        account: Option<Arc<Account>>,
        requests: mpsc::Sender<Request>,
        reply: oneshot::Sender<Result<RunProcess, String>>,
    },
    /// Kill the child's process tree and group; the zygote reaps it once it has died. No reply.
    /// Its cgroup (if any) is dropped here afterwards (and so removed once empty), so that the
    /// thread that releases the run wakes no other thread but this one.
    Release { pid: i32, cgroup: Option<RunCgroup> },
    /// Kill the child's process tree and group, wait for it and answer its wait status.
    Reap {
        pid: i32,
        reply: oneshot::Sender<Result<Option<i32>, String>>,
    },
    /// Answer once the zygote is ready, with its sandbox report. The first ping carries the
    /// `cgroup.procs` of a cgroup for the zygote's throwaway run child to join (if any).
    Ping {
        account: Vec<OwnedFd>,
        reply: oneshot::Sender<Result<Option<serde_json::Value>, String>>,
    },
    /// Analyse one program on `socket` (a frame in, a frame out; `runner/60_analysis.py`
    /// `_serve_analysis`); answered once the zygote is done with it.
    Analyse {
        socket: OwnedFd,
        reply: oneshot::Sender<Result<(), String>>,
    },
}

#[derive(Deserialize)]
struct ControlReply {
    #[serde(default)]
    pid: Option<i32>,
    #[serde(default)]
    status: Option<i32>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    sandbox: Option<serde_json::Value>,
}

impl Zygote {
    /// Starts a zygote and waits until it answers. `account` is where run cgroups are made (or
    /// why there are none): the zygote's throwaway run child joins one made for it, and the
    /// report's `memory_account` says whether it could.
    pub(crate) async fn start(
        interpreter: &Interpreter,
        runner: &str,
        config: &str,
        account: Result<Arc<Account>, String>,
    ) -> Result<Zygote, String> {
        let (host, child) =
            seqpacket_pair().map_err(|e| format!("cannot create the zygote socket: {e}"))?;
        set_timeout(&host).map_err(|e| format!("cannot configure the zygote socket: {e}"))?;
        let mut command = interpreter.command(
            runner,
            "zygote",
            config,
            child.as_raw_fd(),
            Vec::new(),
            false,
        );
        let process = command.spawn().map_err(|e| {
            format!(
                "cannot start the Python zygote {}: {e}",
                interpreter.path().display()
            )
        })?;
        drop(child);
        let pid = process.id().unwrap_or(0);
        let alive = Arc::new(AtomicBool::new(true));
        let (requests, queue) = mpsc::channel();
        let thread_alive = alive.clone();
        std::thread::Builder::new()
            .name("code-py-zygote".to_owned())
            .spawn(move || {
                super::become_batch();
                control_loop(host, &queue, &thread_alive, process);
            })
            .map_err(|e| format!("cannot start the zygote's control thread: {e}"))?;
        let mut zygote = Zygote {
            requests,
            pid,
            alive,
            sandbox: None,
            account: None,
        };
        let mut probe = account.and_then(|account| Ok((account.create()?, account)));
        let procs = match &mut probe {
            Ok((cgroup, _)) => cgroup.take_procs(),
            Err(_) => Vec::new(),
        };
        // Wait until it answers, so the first run does not pay for the start.
        let (reply, answer) = oneshot::channel();
        zygote.send(Request::Ping {
            account: procs,
            reply,
        })?;
        let mut report = answer.await.map_err(gone)??;
        match probe {
            Ok((_, account)) => {
                let joined = report
                    .as_ref()
                    .and_then(|r| r.get("memory_account"))
                    .is_some_and(serde_json::Value::is_null);
                zygote.account = joined.then_some(account);
            }
            Err(reason) => {
                if let Some(serde_json::Value::Object(layers)) = &mut report {
                    layers.insert("memory_account".to_owned(), reason.into());
                }
            }
        }
        zygote.sandbox = report;
        Ok(zygote)
    }

    /// The sandbox report it gave when it started.
    pub(crate) fn sandbox(&self) -> Option<&serde_json::Value> {
        self.sandbox.as_ref()
    }

    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    pub(crate) fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// Forks a child that prepares a run and then waits for its program on the returned
    /// socket.
    pub(crate) async fn spare(&self) -> Result<Spare, String> {
        let (host, child) =
            UnixStream::pair().map_err(|e| format!("cannot create the run socket: {e}"))?;
        let (reply, answer) = oneshot::channel();
        self.send(Request::Fork {
            socket: child.into(),
            account: self.account.clone(),
            requests: self.requests.clone(),
            reply,
        })?;
        let process = answer.await.map_err(gone)??;
        let pidfd = match &process.kind {
            Kind::Forked { pid, .. } => pidfd_open(*pid),
            Kind::Spawned(_) => None,
        };
        Ok(Spare {
            process,
            socket: host,
            zygote: self.pid,
            pidfd,
        })
    }

    /// Has the zygote analyse one program on `socket` (the pre-run analysis: the caller writes
    /// the program frame and reads the answer frame there). Resolves once the zygote is done.
    pub(crate) async fn analyse(&self, socket: OwnedFd) -> Result<(), String> {
        let (reply, answer) = oneshot::channel();
        self.send(Request::Analyse { socket, reply })?;
        answer.await.map_err(gone)?
    }

    fn send(&self, request: Request) -> Result<(), String> {
        self.requests.send(request).map_err(|_| {
            self.alive.store(false, Ordering::Relaxed);
            "the Python zygote's control thread is gone".to_owned()
        })
    }
}

fn gone(_: oneshot::error::RecvError) -> String {
    "the Python zygote's control thread dropped a request".to_owned()
}

/// A forked child that has prepared a run and waits for its program.
pub(crate) struct Spare {
    pub(crate) process: RunProcess,
    pub(crate) socket: UnixStream,
    /// The zygote that forked it.
    zygote: u32,
    /// A pidfd of the child (where the kernel has them), readable once it has exited: whether
    /// it still lives is then one `poll`, not a read of `/proc`.
    pidfd: Option<OwnedFd>,
}

impl Spare {
    /// The child's process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        match &self.process.kind {
            Kind::Forked { pid, .. } => u32::try_from(*pid).ok(),
            Kind::Spawned(child) => child.id(),
        }
    }

    /// Whether it was forked by `zygote` and still waits: it is alive, its end of the socket
    /// is open and it has sent nothing but, perhaps, its ready frame (`READY`, which the run
    /// then reads first). A child that sent anything else (a sandbox refusal) or closed its
    /// end is not. One `poll` of its pidfd (a read of `/proc/PID/stat` where there are no
    /// pidfds) and one non-blocking `recv` with `MSG_PEEK`.
    pub(crate) fn is_ready(&self, zygote: &Zygote) -> bool {
        if self.zygote != zygote.pid() || !zygote.is_alive() {
            return false;
        }
        // Under the sandbox the program's process is the run child's child: when the run
        // child died, that process may not have died of it yet and still hold the socket.
        if let Kind::Forked { pid, .. } = &self.process.kind {
            let exited = match self.pidfd.as_ref().and_then(has_exited) {
                Some(exited) => exited,
                None => is_zombie(*pid),
            };
            if exited {
                return false;
            }
        }
        // One byte more than the ready frame, to see that nothing follows it.
        let mut pending = [0u8; READY_FRAME.len() + 1];
        // SAFETY: `pending` is valid for its length; MSG_PEEK leaves the socket unchanged.
        let n = unsafe {
            libc::recv(
                self.socket.as_raw_fd(),
                pending.as_mut_ptr().cast(),
                pending.len(),
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        match usize::try_from(n) {
            Ok(n) => pending.get(..n) == Some(&READY_FRAME[..]),
            Err(_) => io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock,
        }
    }
}

/// Serves the zygote's requests in order until every sender is gone, then closes the control
/// socket (the zygote kills its children and exits) and reaps the zygote.
fn control_loop(
    control: OwnedFd,
    queue: &mpsc::Receiver<Request>,
    alive: &AtomicBool,
    mut zygote: Child,
) {
    while let Ok(request) = queue.recv() {
        match request {
            Request::Fork {
                socket,
                account,
                requests,
                reply,
            } => {
                let requested = trace::enabled().then(trace::now);
                let mut cgroup = match account.map(|a| a.for_run()).transpose() {
                    Ok(cgroup) => cgroup.flatten(),
                    Err(reason) => {
                        let _ = reply.send(Err(reason));
                        continue;
                    }
                };
                let made = trace::enabled().then(trace::now);
                let mut fds = vec![socket];
                fds.extend(
                    cgroup
                        .as_mut()
                        .map(RunCgroup::take_procs)
                        .unwrap_or_default(),
                );
                // cgroup v2: the directory last, for a clone straight into it.
                let request = match cgroup.as_mut().and_then(RunCgroup::take_dir) {
                    Some(dir) => {
                        fds.push(dir);
                        r#"{"op":"fork","into":true}"#
                    }
                    None => r#"{"op":"fork"}"#,
                };
                let forked = exchange(&control, alive, request, fds).and_then(|reply| {
                    match (reply.pid, reply.error) {
                        (Some(pid), _) => {
                            if let (Some(requested), Some(made)) = (requested, made) {
                                trace::at(requested, pid, "host_spare_requested");
                                trace::at(made, pid, "host_cgroup_made");
                                trace::mark(pid, "host_spare_forked");
                            }
                            Ok(RunProcess {
                                kind: Kind::Forked { pid, requests },
                                finished: false,
                                cgroup,
                            })
                        }
                        (None, error) => Err(format!(
                            "the Python zygote could not fork: {}",
                            error.unwrap_or_else(|| "no reason given".to_owned())
                        )),
                    }
                });
                // If the caller went away, the returned process drops here and is released.
                let _ = reply.send(forked);
            }
            Request::Release { pid, cgroup } => {
                let _ = exchange(
                    &control,
                    alive,
                    &format!(r#"{{"op":"release","pid":{pid}}}"#),
                    Vec::new(),
                );
                drop(cgroup);
            }
            Request::Reap { pid, reply } => {
                let status = exchange(
                    &control,
                    alive,
                    &format!(r#"{{"op":"reap","pid":{pid}}}"#),
                    Vec::new(),
                )
                .map(|r| r.status);
                let _ = reply.send(status);
            }
            Request::Ping { account, reply } => {
                let _ = reply.send(
                    exchange(&control, alive, r#"{"op":"ping"}"#, account).map(|r| r.sandbox),
                );
            }
            Request::Analyse { socket, reply } => {
                let served = exchange(&control, alive, r#"{"op":"analyse"}"#, vec![socket]);
                let _ = reply.send(served.map(drop));
            }
        }
    }
    drop(control);
    alive.store(false, Ordering::Relaxed);
    let waited = std::time::Instant::now();
    while waited.elapsed() < CONTROL_TIMEOUT {
        if !matches!(zygote.try_wait(), Ok(None)) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // It did not leave on its own: `kill_on_drop` kills and reaps it.
    drop(zygote);
}

/// One request and its reply on the zygote's control socket, with `fds` attached.
fn exchange(
    control: &OwnedFd,
    alive: &AtomicBool,
    request: &str,
    fds: Vec<OwnedFd>,
) -> Result<ControlReply, String> {
    let exchange = || -> io::Result<Vec<u8>> {
        let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        send_with_fds(control, request.as_bytes(), &raw)?;
        let mut buffer = vec![0u8; 16 * 1024];
        // SAFETY: `buffer` is valid for `buffer.len()` bytes.
        let n = unsafe {
            libc::recv(
                control.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                0,
            )
        };
        if n <= 0 {
            return Err(if n == 0 {
                io::Error::new(io::ErrorKind::UnexpectedEof, "the zygote closed its socket")
            } else {
                io::Error::last_os_error()
            });
        }
        buffer.truncate(usize::try_from(n).unwrap_or(0));
        Ok(buffer)
    };
    match exchange() {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("the Python zygote sent an unreadable reply: {e}")),
        Err(error) => {
            alive.store(false, Ordering::Relaxed);
            Err(format!("the Python zygote stopped answering: {error}"))
        }
    }
}

/// The process running one program. Dropped before [`RunProcess::finish`], it is stopped and
/// reaped in the background: a forked child is released to the zygote (which kills its
/// process tree and group at once and reaps it when it has died); a spawned one is killed
/// with its process tree and group and reaped by tokio.
pub(crate) struct RunProcess {
    kind: Kind,
    finished: bool,
    /// Its cgroup, removed once its processes are gone (after the process is released).
    cgroup: Option<RunCgroup>,
}

enum Kind {
    /// A child of the zygote; `requests` reaches the zygote's control thread.
    Forked {
        pid: i32,
        requests: mpsc::Sender<Request>,
    },
    /// A child of this process.
    Spawned(Child),
}

impl RunProcess {
    /// Starts an interpreter that runs one program on `socket`, in `cgroup` if given (a
    /// failure to join it fails the start when `strict`).
    pub(crate) fn spawn(
        interpreter: &Interpreter,
        runner: &str,
        config: &str,
        socket: UnixStream,
        mut cgroup: Option<RunCgroup>,
        strict: bool,
    ) -> Result<RunProcess, String> {
        let fd: OwnedFd = socket.into();
        // Open until the spawn returns (close-on-exec: the interpreter never holds them).
        let procs = cgroup
            .as_mut()
            .map(RunCgroup::take_procs)
            .unwrap_or_default();
        let join = procs.iter().map(AsRawFd::as_raw_fd).collect();
        let child = interpreter
            .command(runner, "run", config, fd.as_raw_fd(), join, strict)
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the Python interpreter {}: {e}",
                    interpreter.path().display()
                )
            })?;
        drop(fd);
        drop(procs);
        Ok(RunProcess {
            kind: Kind::Spawned(child),
            finished: false,
            cgroup,
        })
    }

    /// Its cgroup, where the run's memory is accounted.
    pub(crate) fn cgroup(&self) -> Option<&RunCgroup> {
        self.cgroup.as_ref()
    }

    /// Kills the process tree and group (whatever the run left running), waits until the
    /// process has been reaped and returns a description of how it ended.
    pub(crate) async fn finish(&mut self) -> Option<String> {
        self.finished = true;
        match &mut self.kind {
            Kind::Forked { pid, requests } => {
                let (reply, answer) = oneshot::channel();
                if requests.send(Request::Reap { pid: *pid, reply }).is_err() {
                    return Some("the Python zygote's control thread is gone".to_owned());
                }
                match answer.await {
                    Ok(Ok(Some(status))) => Some(describe_status(status)),
                    Ok(Ok(None)) => None,
                    Ok(Err(error)) => Some(error),
                    Err(error) => Some(gone(error)),
                }
            }
            Kind::Spawned(child) => {
                kill_group(child);
                let _ = child.start_kill();
                match child.wait().await {
                    Ok(status) => Some(status.to_string()),
                    Err(error) => Some(format!("cannot reap the Python process: {error}")),
                }
            }
        }
    }
}

impl Drop for RunProcess {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        match &mut self.kind {
            // The zygote kills it: only the zygote knows whether the pid is still its child.
            Kind::Forked { pid, requests } => {
                trace::mark(*pid, "host_release_sent");
                let _ = requests.send(Request::Release {
                    pid: *pid,
                    cgroup: self.cgroup.take(),
                });
            }
            // `kill_on_drop` kills and reaps the process itself; the group goes here.
            Kind::Spawned(child) => kill_group(child),
        }
    }
}

/// Kills everything the spawned child started (it is a subreaper, so that is its process
/// tree, whatever process group or session a process moved to) and its process group.
fn kill_group(child: &Child) {
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        kill_tree(pid);
        // SAFETY: plain syscall; the group id is our own unreaped child's pid, so it cannot
        // have been reused.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Kills every live descendant of `pid`, reading the tree again until none is left (a process
/// may fork while it is read), a bounded number of times.
fn kill_tree(pid: i32) {
    for _ in 0..1000 {
        let found = descendants(pid);
        if found.is_empty() {
            return;
        }
        for child in found {
            // SAFETY: plain syscall. `child` was listed as a live child in /proc just now; a
            // descendant that already died stays a zombie (its pid is not reused) until its
            // parent, which this kills too, or the subreaper reaps it.
            unsafe {
                libc::kill(child, libc::SIGKILL);
            }
        }
    }
}

/// The live (not zombie) descendants of `pid`, from `/proc/PID/task/TID/children`.
fn descendants(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(parent) = stack.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(listed) = std::fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in listed
                .split_whitespace()
                .filter_map(|c| c.parse::<i32>().ok())
            {
                if !is_zombie(child) {
                    out.push(child);
                    stack.push(child);
                }
            }
        }
    }
    out
}

/// A pidfd of `pid`, if the kernel has them (Linux 5.3+). Taken while the zygote has not reaped
/// the child (it reaps only released children), so it names that child.
fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain syscall; a non-negative result is a new descriptor nothing else owns.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, libc::PIDFD_NONBLOCK) };
        let fd = RawFd::try_from(fd).ok().filter(|fd| *fd >= 0)?;
        // SAFETY: see above.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Whether the process of `pidfd` has exited (a pidfd polls readable then); `None` if `poll`
/// failed.
fn has_exited(pidfd: &OwnedFd) -> Option<bool> {
    let mut poll = libc::pollfd {
        fd: pidfd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no waiting.
    let n = unsafe { libc::poll(&raw mut poll, 1, 0) };
    (n >= 0).then_some(n > 0)
}

/// Whether `pid` has died and waits to be reaped (or is gone).
fn is_zombie(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return true;
    };
    stat.rfind(')')
        .and_then(|end| stat.get(end + 2..end + 3))
        .is_none_or(|state| state == "Z")
}

fn describe_status(status: i32) -> String {
    if libc::WIFSIGNALED(status) {
        format!("killed by signal {}", libc::WTERMSIG(status))
    } else if libc::WIFEXITED(status) {
        format!("exit status {}", libc::WEXITSTATUS(status))
    } else {
        format!("wait status {status}")
    }
}

fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_timeout(fd: &OwnedFd) -> io::Result<()> {
    let timeout = libc::timeval {
        tv_sec: libc::time_t::try_from(CONTROL_TIMEOUT.as_secs()).unwrap_or(10),
        tv_usec: 0,
    };
    for option in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: `timeout` is a valid timeval for the size given.
        let rc = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                (&raw const timeout).cast(),
                libc::socklen_t::try_from(std::mem::size_of::<libc::timeval>()).unwrap_or(16),
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The most descriptors one control message carries (a run's socket and two `cgroup.procs`
/// under cgroup v1; its socket, one `cgroup.procs` and the cgroup's directory under v2).
const MAX_FDS: usize = 4;

/// Sends one message, with `fds` attached as `SCM_RIGHTS` when there are any.
fn send_with_fds(socket: &OwnedFd, data: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let mut iov = libc::iovec {
        iov_base: data.as_ptr().cast_mut().cast(),
        iov_len: data.len(),
    };
    // Room for MAX_FDS descriptors, aligned for cmsghdr.
    let mut control = [0u64; 8];
    // SAFETY: zeroed msghdr is a valid "no name, no control" header.
    let mut header: libc::msghdr = unsafe { std::mem::zeroed() };
    header.msg_iov = &raw mut iov;
    header.msg_iovlen = 1;
    if !fds.is_empty() {
        if fds.len() > MAX_FDS {
            return Err(io::Error::other("too many descriptors for one message"));
        }
        let fds_len = u32::try_from(std::mem::size_of_val(fds))
            .map_err(|_| io::Error::other("too many descriptors for one message"))?;
        // SAFETY: CMSG_SPACE/CMSG_LEN only compute sizes.
        let space = unsafe { libc::CMSG_SPACE(fds_len) } as usize;
        if space > std::mem::size_of_val(&control) {
            return Err(io::Error::other("control buffer too small"));
        }
        header.msg_control = control.as_mut_ptr().cast();
        header.msg_controllen = space as _;
        // SAFETY: msg_control points at `space` writable, aligned bytes, enough for one header
        // carrying `fds`.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&raw const header);
            if cmsg.is_null() {
                return Err(io::Error::other("no room for the control message"));
            }
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(fds_len) as _;
            let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
            for (i, &fd) in fds.iter().enumerate() {
                std::ptr::write_unaligned(data.add(i), fd);
            }
        }
    }
    // SAFETY: `header` and everything it points to live until sendmsg returns.
    let sent = unsafe { libc::sendmsg(socket.as_raw_fd(), &raw const header, libc::MSG_NOSIGNAL) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
