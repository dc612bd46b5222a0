def _refuse(sock, error):
    """Tells the host that this child could not set up its sandbox and leaves."""
    try:
        Channel(sock).error("sandbox", str(error))
    except BaseException:  # noqa: BLE001
        pass
    os._exit(7)


def _mirror(pid):
    """Waits for `pid` and ends this process the same way (exit code or signal)."""
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(0)
    if _TRACE_FD is not None:
        # The CPU time of the program's process, whole (its exit included), and this one's so
        # far.
        mine = resource.getrusage(resource.RUSAGE_SELF)
        now = time.monotonic_ns()
        _trace_at(now, _trace_pid, b"b_rusage", int((usage.ru_utime + usage.ru_stime) * 1e9))
        _trace_at(now, _trace_pid, b"a_rusage_before_exit", int((mine.ru_utime + mine.ru_stime) * 1e9))
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
        except (OSError, ValueError):
            pass
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


def run_sandboxed(sandbox, sock, prctl, parent):
    """In B, the run's first process: sets up the run's layers (`Sandbox.enter_run`, nothing
    under `Off`), refusing before `ready` under "require" when one does not hold, then runs
    the program (`child_main`)."""
    try:
        sandbox.enter_run(parent, prctl)
    except SandboxError as error:
        _refuse(sock, error)
    child_main(sock)
    os._exit(0)


def sandboxed_child(sandbox, sock, prctl):
    """A run the host spawned an interpreter for: that interpreter (which set up the zygote's
    layers) forks B, the run's first process (PID 1 of a new PID namespace, see `_fork_run`),
    and ends as B ended."""
    if not sandbox.on:
        child_main(sock)
        return
    pid, parent = _fork_run(sandbox)
    if pid == 0:
        _trace_name(prctl, b"py-run-b")
        _die_with_parent(prctl, parent)
        run_sandboxed(sandbox, sock, prctl, parent)
    sock.close()
    _mirror(pid)


def probe(sandbox, prctl, account=()):
    """Sets up a run's layers in a throwaway child, forked as a run's first process is, and
    returns the whole report. The child first joins the cgroup whose cgroup.procs are `account`
    (made for it by the host), under every policy: the memory account is a resource limit, not
    isolation."""
    if not sandbox.on and not account:
        return sandbox.report()
    r, w = os.pipe()
    pid, parent = _fork_run(sandbox)
    if pid == 0:
        os.close(r)
        try:
            if sandbox.on:
                sandbox.policy = "best_effort"  # record every layer; the zygote decides
            sandbox.join_account(account)
            _die_with_parent(prctl, parent)
            sandbox.enter_run(parent, prctl)
            os.write(w, json.dumps(sandbox.report()).encode())
            os._exit(0)
        finally:
            os._exit(1)
    os.close(w)
    chunks = []
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    _IN_PID_NAMESPACE.discard(pid)
    try:
        status = json.loads(b"".join(chunks).decode("utf-8"))
    except ValueError:
        status = None
    if not isinstance(status, dict):
        status = sandbox.report()
        for layer in LAYERS:
            if status[layer] == "not set up":
                status[layer] = "the probe child could not report"
    return status


def _fd_ceiling():
    """One more than the highest descriptor this process may hold: the highest listed in
    /proc/self/fd, else the hard RLIMIT_NOFILE (capped), so a closing loop stays bounded where
    the interpreter was built without close_range."""
    try:
        return max(int(fd) for fd in os.listdir("/proc/self/fd")) + 1
    except (OSError, ValueError):
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        return 1 << 20 if hard == resource.RLIM_INFINITY or hard > 1 << 20 else hard


def _close_inherited(keep, close_range=None):
    """Closes every descriptor but 0, 1, 2 (/dev/null) and those in `keep`: a descriptor the
    host held without close-on-exec (inherited from its own parent, or opened by a library
    without O_CLOEXEC) would reach the program, and Landlock and the mount namespace do not
    apply to files already open. With `close_range` (libc's, as `Sandbox` loads it), one call
    per gap up to the highest descriptor there can be; else, or where the kernel lacks it,
    `os.closerange` up to the highest descriptor /proc/self/fd lists (one close_range(2) per
    gap where the interpreter has it, a loop where not)."""
    gaps = []
    low = 3
    for fd in sorted(keep):
        if fd > low:
            gaps.append((low, fd - 1))
        if fd >= low:
            low = fd + 1
    if close_range is not None and all(close_range(first, last, 0) == 0 for first, last in gaps + [(low, 0xFFFFFFFF)]):
        return
    for first, last in gaps:
        os.closerange(first, last + 1)
    ceiling = _fd_ceiling()
    if low < ceiling:
        os.closerange(low, ceiling)


def _set_pdeathsig(prctl):
    """Dies with its parent (set again after each namespace change, to be sure it holds)."""
    if prctl is not None:
        try:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except Exception:  # noqa: BLE001
            pass


