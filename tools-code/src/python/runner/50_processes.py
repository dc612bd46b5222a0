# Whether this process is a zygote's run child: it prepares as a batch task (see `_batch`) and
# waits to be killed once its outcome is sent instead of leaving by itself (see `_linger`).
_FORKED = False
_SCHED_PARAM = os.sched_param(0) if hasattr(os, "sched_param") else None


def _batch(on):
    """A zygote's run child makes itself a batch task (`SCHED_BATCH`) for what it does in the
    background, and a normal one (`SCHED_OTHER`, as it was forked) whenever the host may be
    waiting for it. A batch task's wakeups do not preempt the task running on a core, so the
    spare that is being made while a run goes (its fork's set-up, its rehearsal) and the
    teardown of the run that just ended leave the core to the run and to the host reading its
    outcome; they still get their fair share of the CPU. Changing between the two at the same
    nice value needs no privilege; where it fails, nothing changes."""
    if _FORKED:
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH if on else os.SCHED_OTHER, _SCHED_PARAM)
        except (OSError, AttributeError):
            pass


def _linger():
    """Waits until the zygote kills this process. A zygote's run child that has sent its outcome
    is released by the host as soon as the host has read it: the zygote kills it with its
    process tree (or, under the sandbox, the run's PID namespace) and reaps it. Exiting by
    itself here instead put this process's teardown (its memory and, under the sandbox, its
    namespaces: a millisecond or more of CPU) on the machine at the moment the host reads the
    outcome, which is when the caller waits; killed by its release, it goes once the host has
    the outcome. It blocks at once (no Python work between the outcome and the wait: a core
    shared with the host would delay the host by that much). Nothing of the run is read after
    its outcome (the host stops reading), so what the program left running (another thread, a
    signal handler) changes nothing but the moments until the release."""
    while True:
        try:
            signal.pause()
        except BaseException:  # noqa: BLE001 - only the release ends it
            pass


def _warm_up():
    """One rehearsal in the zygote, so that what CPython builds lazily on first use is built
    once here instead of in every child."""
    loop = asyncio.new_event_loop()
    try:
        _rehearse(loop)
    except Exception:  # noqa: BLE001 - only a head start; the children do not need it
        pass
    finally:
        loop.close()
        asyncio.set_event_loop(None)


def _load_prctl():
    """`prctl` from libc, loaded once in the zygote (importing ctypes per run would be slow)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # noqa: BLE001 - best effort; the host still kills by pid
        return None


_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper(prctl):
    """Orphaned descendants of this process are reparented to it (not to init), so they stay
    in its process tree where `_kill_tree` finds them. Best effort: False if it did not work."""
    if prctl is None:
        return False
    try:
        return prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except Exception:  # noqa: BLE001
        return False


def _die_with_parent(prctl, parent):
    """Arms the death signal (die if the zygote dies) and ends this process now if its parent
    (`parent`, a `_Parent`) died before it was armed."""
    _set_pdeathsig(prctl)
    # A run child keeps what its program starts in its own tree, even a process that left
    # the process group (setsid) and whose parent exited.
    _become_subreaper(prctl)
    if not parent.alive():
        os._exit(5)


class _Parent:
    """Whether the process that forked this one (the zygote, or the interpreter the host spawned
    for one run) is still alive, asked after the death signal is armed (a parent that died
    before cannot send it). A process cloned into a PID namespace of its own has no parent
    there (`getppid` is 0): it reads its parent's pid from its own `stat` in the /proc the
    parent sees (opened at the first question, before the run's own /proc is mounted over it,
    and kept until the last, see `Sandbox.enter_run`), against the parent's pid in that /proc."""

    def __init__(self, pid, cloned, joined=False):
        # The parent's pid: as `os.getpid()` gives it, or (cloned) as its /proc names it, None
        # when that could not be read (then nothing can be told, and the answer is yes).
        self.pid = pid
        self.cloned = cloned
        # Whether this process was cloned straight into the run's cgroup (v2).
        self.joined = joined
        self.fd = None

    def alive(self):
        if not self.cloned:
            return os.getppid() == self.pid
        if self.pid is None:
            return True
        try:
            if self.fd is None:
                self.fd = os.open("/proc/self/stat", os.O_RDONLY | os.O_CLOEXEC)
            else:
                os.lseek(self.fd, 0, os.SEEK_SET)
            stat = os.read(self.fd, 1024)
            return int(stat[stat.rindex(b")") + 2 :].split()[1]) == self.pid
        except (OSError, ValueError, IndexError):
            return True

    def close(self):
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None

    def outer_pid(self):
        """This process's pid as its parent (and the host) sees it."""
        if not self.cloned:
            return os.getpid()
        try:
            return int(os.readlink("/proc/self"))
        except (OSError, ValueError):
            return 0


# The zygote's children that it cloned into a PID namespace of their own (see `_fork_run`):
# killing one kills every process of its run.
_IN_PID_NAMESPACE = set()


def _fork_run(sandbox, into=None):
    """Forks a run's first process. Under the sandbox it is cloned straight into a PID namespace
    of its own (`Sandbox.clone_pid_namespace`), where it is PID 1; where that cannot be done (or
    the layer is disabled) it is forked with `os.fork`, and the run's `pid_namespace` layer
    reports why (`Sandbox.enter_run`). `into` is the open directory of the run's cgroup v2, if
    any, to clone the child straight into. Returns `(pid, parent)`: in the child, pid 0 and the
    `_Parent` to ask whether this process is still alive; in the parent, the child's pid and
    None."""
    if sandbox.on and "pid_namespace" not in sandbox.skip:
        try:
            mine = int(os.readlink("/proc/self"))
        except (OSError, ValueError):
            mine = None
        try:
            pid, joined = sandbox.clone_pid_namespace(into)
        except OSError as error:
            sandbox.clone_error = _cut(str(error))
        else:
            if pid == 0:
                return 0, _Parent(mine, True, joined)
            _IN_PID_NAMESPACE.add(pid)
            return pid, None
    global _ORPHANS_MAY_COME
    _ORPHANS_MAY_COME = True
    me = os.getpid()
    pid = os.fork()
    return pid, (_Parent(me, False) if pid == 0 else None)


# Whether a process a run started may come to the zygote (see `_reap_orphans`): only from a
# child forked without a PID namespace of its own. A process of a run's PID namespace whose
# parent dies goes to the namespace's first process, which reaps every one before it exits
# (the first process of a namespace may not clone a sibling for itself, CLONE_PARENT).
_ORPHANS_MAY_COME = False


def _children(pid):
    """The live (not zombie) children of `pid`, from /proc (every thread's list)."""
    found = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return found
    for task in tasks:
        try:
            listed = _read_proc("/proc/%d/task/%s/children" % (pid, task)).split()
        except OSError:
            continue
        for child in listed:
            child = int(child)
            try:
                stat = _read_proc("/proc/%d/stat" % child)
                state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
            except (OSError, ValueError):
                continue
            if state != b"Z":
                found.append(child)
    return found


def _descendants(pid):
    """The live descendants of `pid`."""
    out = []
    stack = [pid]
    while stack:
        for child in _children(stack.pop()):
            out.append(child)
            stack.append(child)
    return out


def _kill_tree(pid):
    """Kills every live descendant of `pid` (a run child is a subreaper, so what its program
    started is in its tree, whatever process group or session it moved to), again until none
    is left (a process may fork while the tree is read), a bounded number of times."""
    for _ in range(1000):
        found = _descendants(pid)
        if not found:
            return
        for child in found:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass


def _kill_group(pid):
    """Kills the child, everything in its process tree and its whole process group. A child
    that is the first process of its run's PID namespace takes every process of the namespace
    with it (the kernel kills them, and tears the namespace down while the zygote goes on
    serving): one signal, no reading of the tree."""
    if pid not in _IN_PID_NAMESPACE:
        _kill_tree(pid)
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _reap_orphans(known):
    """Kills and reaps the zygote's children that are not run children it knows: processes a
    run started whose run child died first (the zygote is a subreaper, so they came here).
    Their runs are over: every live run child is a subreaper that keeps its own orphans. None
    can come while every child was cloned into a PID namespace of its own: then nothing is
    read."""
    if not _ORPHANS_MAY_COME:
        return
    for task in _safe_listdir("/proc/self/task"):
        try:
            listed = _read_proc("/proc/self/task/%s/children" % task).split()
        except OSError:
            continue
        for child in listed:
            child = int(child)
            if child in known:
                continue
            _kill_group(child)
            try:
                os.waitpid(child, os.WNOHANG)
            except ChildProcessError:
                pass


def _safe_listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def _reap_dead(dying):
    """Reaps the released children that have died, without waiting."""
    for pid in list(dying):
        usage = None
        try:
            done, _, usage = os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            dying.discard(pid)
            _IN_PID_NAMESPACE.discard(pid)
            if _TRACE_FD is not None:
                _trace_at(time.monotonic_ns(), pid, b"zygote_reaped")
                if usage is not None:
                    # The run child's CPU time, whole, with its child's (the program's process).
                    cpu = int((usage.ru_utime + usage.ru_stime) * 1e9)
                    _trace_at(time.monotonic_ns(), pid, b"spare_rusage", cpu)


