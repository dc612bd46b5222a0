# --- the sandbox ---------------------------------------------------------------------------
#
# Layers, in the order they are set up (see the module doc of `python/mod.rs` for why here):
#   in the zygote, once:     user namespace, network namespace, mount namespace with the
#                            read-only view (pivot_root into it);
#   in each run child A:     a user namespace of its own, a PID namespace, a mount namespace,
#                            an IPC namespace, the process limit; then it forks B, the first
#                            process (PID 1) of the new PID namespace, which runs the program;
#   in B, before it waits:   a fresh /proc, an empty /tmp and /dev/shm, no_new_privs, Landlock,
#                            dropped capabilities, the seccomp filter.
# All of it happens before the program arrives (a spare is ready with every layer in place).

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_CLONE_INTO_CGROUP = 0x200000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_NOATIME = 1024
_MS_NODIRATIME = 2048
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_RELATIME = 1 << 21
_MNT_DETACH = 2
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
# Landlock (the syscall numbers are the same on every architecture).
_LANDLOCK_CREATE_RULESET = 444
_LANDLOCK_ADD_RULE = 445
_LANDLOCK_RESTRICT_SELF = 446
_LL_EXECUTE = 1 << 0
_LL_WRITE_FILE = 1 << 1
_LL_READ_FILE = 1 << 2
_LL_READ_DIR = 1 << 3
_LL_TRUNCATE = 1 << 14
_LL_IOCTL_DEV = 1 << 15
_LL_FILE_RIGHTS = _LL_EXECUTE | _LL_WRITE_FILE | _LL_READ_FILE | _LL_TRUNCATE | _LL_IOCTL_DEV

# The layers, as the host names them.
LAYERS = (
    "user_namespace",
    "pid_namespace",
    "network_namespace",
    "mount_namespace",
    "landlock",
    "seccomp",
    "no_new_privileges",
    "capabilities",
    "process_limit",
    "memory_account",
)

# When the host runs as root: the user id inside the zygote's user namespace that run children
# switch to, and the host's user id it stands for ("nobody"). The kernel exempts root's
# processes from RLIMIT_NPROC, so a run must not be root outside its namespaces.
_RUN_ID = 1000
_NOBODY = 65534

# Device files the view keeps (read and write).
_DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")


class SandboxError(Exception):
    """A layer that could not be set up: `layer` names it."""

    def __init__(self, layer, message):
        super().__init__("%s: %s" % (layer, message))
        self.layer = layer


class Sandbox:
    """The sandbox settings from the host and what holds: `status[layer]` is None when the
    layer is active, else why it is not."""

    def __init__(self, config):
        self.policy = config.get("policy", "off")
        self.skip = set(config.get("skip", ()))
        self.filter = bytes.fromhex(config.get("seccomp", ""))
        self.nproc = int(config.get("nproc", 64))
        self.tmp_bytes = int(config.get("tmp_bytes", 64 << 20))
        self.shm_bytes = int(config.get("shm_bytes", 16 << 20))
        self.tmp_inodes = int(config.get("tmp_inodes", 16384))
        self.pivot_root = config.get("pivot_root")
        self.clone_number = config.get("clone")
        self.clone3_number = config.get("clone3")
        # clone3, for a clone straight into the run's cgroup (v2); None once it failed.
        self._clone3 = None
        # Why the last clone into a PID namespace failed (see `_fork_run`).
        self.clone_error = None
        self._clone = None
        # Why there is no clone (see `clone_pid_namespace`).
        self._no_clone = None
        # libc's close_range(2), where it has it (see `_close_inherited`).
        self.close_range = None
        self.status = {}
        # The user id run children switch to in the zygote's user namespace (host root only).
        self.run_id = None
        self.host_uid = os.getuid()
        # The view's read-only paths (Landlock rules are built from them).
        self.view = []
        # Made once by `prepare`: the Landlock plan (or why there is none) and the seccomp
        # program.
        self._landlock_plan = None
        self._landlock_error = "Landlock was not prepared"
        self._program = None
        self._capbset = []
        self._capset = None
        self.libc = None
        if self.policy != "off":
            import ctypes

            self.ctypes = ctypes
            self.libc = ctypes.CDLL(None, use_errno=True)
            try:
                self.close_range = self.libc.close_range
                self.close_range.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_int]
                self.close_range.restype = ctypes.c_int
            except AttributeError:
                self.close_range = None
            try:
                for name in ("PyOS_BeforeFork", "PyOS_AfterFork_Child", "PyOS_AfterFork_Parent"):
                    hook = getattr(ctypes.pythonapi, name)
                    hook.argtypes = []
                    hook.restype = None
                if self.clone_number is None:
                    self._no_clone = "no clone system call number for this architecture"
                else:
                    # Called holding the GIL, as `os.fork` calls `fork` (see
                    # `clone_pid_namespace`).
                    calls = ctypes.PyDLL(None, use_errno=True)
                    self._clone = calls["syscall"]
                    self._clone.argtypes = [ctypes.c_long] + [ctypes.c_ulong] * 5
                    self._clone.restype = ctypes.c_long
                    if self.clone3_number is not None:
                        self._clone3 = calls["syscall"]
                        self._clone3.argtypes = [ctypes.c_long, ctypes.c_char_p, ctypes.c_ulong]
                        self._clone3.restype = ctypes.c_long
            except AttributeError as error:
                # An interpreter that does not export its fork hooks (or a libc without syscall).
                self._clone = self._clone3 = None
                self._no_clone = "the interpreter's fork hooks cannot be called: %s" % _cut(str(error))

    @property
    def on(self):
        return self.policy != "off"

    def _check(self, rc, what):
        if rc is None or rc < 0:
            errno = self.ctypes.get_errno()
            raise OSError(errno, "%s: %s" % (what, os.strerror(errno)))
        return rc

    def _layer(self, layer, setup, needs=()):
        """Sets up `layer` with `setup()`, recording whether it holds. Under "require" a failure
        raises SandboxError; under "best_effort" it is recorded and the run goes on."""
        if layer in self.skip:
            self.status[layer] = "disabled for a test (pretend_missing)"
        else:
            missing = [n for n in needs if self.status.get(n, "not set up") is not None]
            if missing:
                self.status[layer] = "needs %s" % ", ".join(missing)
            else:
                try:
                    setup()
                    self.status[layer] = None
                    return True
                except Exception as error:  # noqa: BLE001 - recorded, and fatal under require
                    self.status[layer] = _cut(str(error))
        if self.policy == "require":
            raise SandboxError(layer, self.status[layer])
        return False

    # -- syscalls ----------------------------------------------------------------------------

    def _unshare(self, flags, what):
        self._check(self.libc.unshare(flags), "unshare(%s)" % what)

    def _write(self, path, text):
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def _map_root(self, uid, gid):
        """Maps root in the new user namespace to `uid`/`gid` outside it."""
        try:
            self._write("/proc/self/setgroups", "deny")
        except FileNotFoundError:
            pass
        self._write("/proc/self/uid_map", "0 %d 1" % uid)
        self._write("/proc/self/gid_map", "0 %d 1" % gid)

    def _mount(self, source, target, fstype, flags, data=None):
        c = self.ctypes
        rc = self.libc.mount(
            c.c_char_p(None if source is None else source.encode()),
            c.c_char_p(target.encode()),
            c.c_char_p(None if fstype is None else fstype.encode()),
            c.c_ulong(flags),
            c.c_char_p(None if data is None else data.encode()),
        )
        self._check(rc, "mount %s on %s" % (source or fstype or "(remount)", target))

    def _prctl(self, *args):
        c = self.ctypes
        return self.libc.prctl(*[c.c_ulong(a) if _type(a) is int else a for a in args])

    # -- in each run child, first -------------------------------------------------------------

    def join_account(self, fds, joined=False):
        """Joins the run's cgroup (one per hierarchy): the host made it and passed its
        cgroup.procs, so this process and everything it starts are born inside, counted by the
        run's memory and process limits. Writing "0" moves the writer; the kernel checks the
        write against whoever opened the file (the host). A process `joined` already (cloned
        into the cgroup, v2) writes nothing. Closes the descriptors. Returns the SandboxError
        under "require", None otherwise (a failure is recorded)."""
        if not fds:
            return None

        def join():
            if not joined:
                for fd in fds:
                    os.write(fd, b"0")

        try:
            self._layer("memory_account", join)
        except SandboxError as error:
            return error
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
        return None

    # -- in the zygote, once -----------------------------------------------------------------

    def enter_zygote(self):
        """The layers every run shares: a user namespace (root inside is the host's user
        outside, with no capability over the host), a network namespace (only loopback, down),
        and a mount namespace whose root is the read-only view."""
        if not self.on:
            return
        uid, gid = os.getuid(), os.getgid()

        def user():
            if uid == 0:
                self._unshare_as_root()
            else:
                self._unshare(_CLONE_NEWUSER, "CLONE_NEWUSER")
                self._map_root(uid, gid)

        self._layer("user_namespace", user)
        self._layer("network_namespace", lambda: self._unshare(_CLONE_NEWNET, "CLONE_NEWNET"), ("user_namespace",))
        self._layer("mount_namespace", self._enter_view, ("user_namespace",))
        self.prepare()

    def _unshare_as_root(self):
        """A user namespace for a zygote the host's root started: a helper left outside it
        (with root's CAP_SETUID there) maps root inside to root outside, and _RUN_ID inside to
        nobody outside, the user run children switch to."""
        me = os.getpid()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(w)
            code = 1
            try:
                if os.read(r, 1) == b"u":
                    for name in ("uid_map", "gid_map"):
                        self._write("/proc/%d/%s" % (me, name), "0 0 1\n%d %d 1\n" % (_RUN_ID, _NOBODY))
                    code = 0
            finally:
                os._exit(code)
        os.close(r)
        try:
            self._unshare(_CLONE_NEWUSER, "CLONE_NEWUSER")
            os.write(w, b"u")
        finally:
            os.close(w)
            _, status = os.waitpid(pid, 0)
        if status != 0:
            raise OSError("the helper outside the user namespace could not write its id maps")
        self.run_id = _RUN_ID

    def _view_paths(self):
        """The interpreter, its standard library and the directories of the shared libraries
        it has loaded, each resolved; nested paths are dropped (their parent is in)."""
        paths = {os.path.realpath(sys.executable), os.path.realpath(os.path.dirname(os.__file__))}
        try:
            maps = _read_proc("/proc/self/maps").decode("utf-8", "replace")
        except OSError:
            maps = ""
        for line in maps.splitlines():
            parts = line.split(None, 5)
            if _len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
                path = parts[5].strip()
                if os.path.exists(path):
                    paths.add(os.path.dirname(os.path.realpath(path)))
        out = []
        for path in sorted(paths, key=lambda p: (_len(p), p)):
            if not any(path == kept or path.startswith(kept.rstrip("/") + "/") for kept in out):
                out.append(path)
        return out

    def _locked_flags(self, path):
        """The flags of the mount holding `path` that a remount inside a user namespace must
        keep (they are locked)."""
        flags = os.statvfs(path).f_flag
        out = _MS_NOSUID | _MS_NODEV
        for st, ms in ((8, _MS_NOEXEC), (1024, _MS_NOATIME), (2048, _MS_NODIRATIME), (4096, _MS_RELATIME)):
            if flags & st:
                out |= ms
        return out

    def _enter_view(self):
        # With their own IPC and UTS namespaces: no System V IPC object or host name shared
        # with the host.
        self._unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS, "CLONE_NEWNS|CLONE_NEWIPC|CLONE_NEWUTS")
        self._mount(None, "/", None, _MS_REC | _MS_PRIVATE)
        self.view = self._view_paths()

        def holds_view(d):
            # The tmpfs mounted on the staging directory would hide any view path beneath it
            # (an interpreter installed under /tmp, say) before it is bound into the view.
            return any(path == d or path.startswith(d + "/") for path in self.view)

        base = next((d for d in ("/tmp", "/mnt", "/var/tmp", "/run", "/opt", "/srv", "/media", "/home")
                     if os.path.isdir(d) and not holds_view(d)), None)
        if base is None:
            raise OSError("no directory to build the view in (/tmp, /mnt, ... all hold the interpreter)")
        self._mount("tmpfs", base, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
        for path in self.view + [d for d in _DEVICES if os.path.exists(d)]:
            target = base + path
            if os.path.isdir(path):
                os.makedirs(target, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
            self._mount(path, target, None, _MS_BIND)
            if path not in _DEVICES:
                self._mount(None, target, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | self._locked_flags(path))
        # /proc: the host's, for the zygote's own bookkeeping of its children; each run mounts
        # a fresh one over it that shows only the run's own processes.
        os.makedirs(base + "/proc", exist_ok=True)
        self._mount("/proc", base + "/proc", None, _MS_BIND | _MS_REC)
        os.makedirs(base + "/tmp", exist_ok=True)
        # Where each run mounts its own /dev/shm (POSIX shared memory and semaphores).
        os.makedirs(base + "/dev/shm", exist_ok=True)
        self._mount(None, base, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
        os.chdir(base)
        c = self.ctypes
        rc = -1
        if self.pivot_root is not None:
            rc = self.libc.syscall(c.c_long(self.pivot_root), c.c_char_p(b"."), c.c_char_p(b"."))
        self._check(rc, "pivot_root")
        self._check(self.libc.umount2(c.c_char_p(b"."), _MNT_DETACH), "umount the old root")
        os.chdir("/")

    # -- in each run child, before the program ----------------------------------------------

    def clone_pid_namespace(self, into=None):
        """`os.fork`, but the child is the first process (PID 1) of a new PID namespace owned by
        this process's user namespace (the zygote's): a raw `clone(CLONE_NEWPID | SIGCHLD)`
        without a stack (fork semantics: the child goes on from here on a copy of this stack),
        wrapped in the interpreter's own fork hooks the way `os.fork` wraps `fork`
        (`PyOS_BeforeFork`, then `PyOS_AfterFork_Child` or `PyOS_AfterFork_Parent`, the call
        made holding the GIL: ctypes' `PyDLL`). It skips what libc's `fork` does besides the
        system call (its atfork handlers, resetting locks other threads may hold), which is
        sound only in a process with one thread: checked on every call. With `into`, the open
        directory of the run's cgroup v2, it is a `clone3` with `CLONE_INTO_CGROUP` first, so
        the child is born in the run's cgroup (no migration); where that fails (it is not
        tried again) the plain clone, and the child joins through `cgroup.procs`. Returns
        `(pid, joined)`: pid 0 in the child, the child's pid in this one; whether the child
        was born in the cgroup. Raises OSError where it cannot be done."""
        if self._clone is None:
            raise OSError(self._no_clone or "no clone system call")
        threads = _len(_safe_listdir("/proc/self/task"))
        if threads != 1:
            raise OSError("the zygote has %d threads, and a raw clone is safe with one only" % threads)
        args = None
        if into is not None and self._clone3 is not None:
            # struct clone_args: flags, pidfd, child_tid, parent_tid, exit_signal, stack,
            # stack_size, tls, set_tid, set_tid_size, cgroup.
            args = struct.pack("=11Q", _CLONE_NEWPID | _CLONE_INTO_CGROUP, 0, 0, 0, signal.SIGCHLD, 0, 0, 0, 0, 0, into)
        api = self.ctypes.pythonapi
        api.PyOS_BeforeFork()
        pid = -1
        if args is not None:
            pid = self._clone3(self.clone3_number, args, _len(args))
        joined = pid >= 0
        if not joined:
            pid = self._clone(self.clone_number, _CLONE_NEWPID | signal.SIGCHLD, 0, 0, 0, 0)
        if pid == 0:
            api.PyOS_AfterFork_Child()
            return 0, joined
        errno = self.ctypes.get_errno()
        api.PyOS_AfterFork_Parent()
        if args is not None and not joined:
            self._clone3 = None
        if pid < 0:
            raise OSError(errno, "clone(CLONE_NEWPID): %s" % os.strerror(errno))
        return pid, joined

    def enter_run(self, parent, prctl):
        """In B, a run's first process, before it waits for its program. B was cloned straight
        into a PID namespace of its own (`clone_pid_namespace`), owned by the zygote's user
        namespace, where B holds every capability, so first what takes them there: its mount
        and IPC namespaces and their file systems (a `proc` of the run's PID namespace takes
        CAP_SYS_ADMIN over the user namespace that owns it); then a user of its own (the run's
        user outside, when the host is root, and a user namespace, so that RLIMIT_NPROC counts
        this run's processes only) and the process limit; last the restrictions that cannot be
        undone (no_new_privs, Landlock, capabilities, seccomp). `parent` (a `_Parent`) tells
        whether the zygote died while the death signal was cleared by the change of user."""
        if not self.on:
            return

        def namespaces():
            if not parent.cloned:
                raise OSError(self.clone_error or "the run's first process is not in a PID namespace of its own")
            # The run's own IPC namespace: its System V objects and POSIX message queues die
            # with the run's last process.
            self._unshare(_CLONE_NEWNS | _CLONE_NEWIPC, "CLONE_NEWNS|CLONE_NEWIPC")

        self._layer("pid_namespace", namespaces)
        _trace(b"b_namespaces")
        if self.status.get("pid_namespace") is None and self.status.get("mount_namespace") is None:
            # The mount namespace is the run's alone: its /tmp and /proc go with the run.
            def mounts():
                # Capped in bytes and in files (a file's inode and dentry are kernel memory
                # that the size does not count), and owned by the user the run becomes.
                owner = "uid=%d,gid=%d" % ((self.run_id, self.run_id) if self.run_id is not None else (os.getuid(), os.getgid()))
                self._mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV, "size=%d,nr_inodes=%d,mode=0700,%s" % (self.tmp_bytes, self.tmp_inodes, owner))
                self._mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "size=%d,nr_inodes=%d,mode=0700,%s" % (self.shm_bytes, self.tmp_inodes, owner))
                self._mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
                os.chdir("/tmp")

            self._layer("mount_namespace", mounts)
            _trace(b"b_mounts")
        if self.status.get("pid_namespace") is None:
            self._layer("pid_namespace", self._own_user)
            # A change of user clears the parent-death signal: armed again here, and a parent
            # that died in between (the signal could not come) ends this process now.
            _set_pdeathsig(prctl)
            if not parent.alive():
                os._exit(5)
        parent.close()

        def nproc():
            if self.host_uid == 0 and self.run_id is None:
                raise OSError("the run's processes are the host's root, whom RLIMIT_NPROC does not bind")
            resource.setrlimit(resource.RLIMIT_NPROC, (self.nproc, self.nproc))

        self._layer("process_limit", nproc, ("pid_namespace",))
        _trace(b"b_user")
        self._layer("no_new_privileges", lambda: self._check(self._prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS"))
        self._layer("landlock", self._landlock, ("no_new_privileges",))
        _trace(b"b_landlock")
        self._layer("capabilities", self._drop_capabilities)
        _trace(b"b_capabilities")
        self._layer("seccomp", self._seccomp, ("no_new_privileges",))
        _trace(b"b_seccomp")

    def _own_user(self):
        """The run's own user: when the host is root, the user that stands for nobody outside
        (root's processes are exempt from RLIMIT_NPROC, and may write root's files); then a
        user namespace of the run's own, whose root is that user, so that RLIMIT_NPROC counts
        the run's processes only. It gives no capability over the zygote's user namespace, so
        none over the run's mounts, which that namespace owns."""
        if self.run_id is not None:
            os.setgroups([])
            os.setresgid(self.run_id, self.run_id, self.run_id)
            os.setresuid(self.run_id, self.run_id, self.run_id)
            # A change of user makes the process undumpable, and its /proc/self files
            # root's: its own id maps could not be written.
            self._check(self._prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "PR_SET_DUMPABLE")
        uid, gid = os.getuid(), os.getgid()
        self._unshare(_CLONE_NEWUSER, "CLONE_NEWUSER")
        self._map_root(uid, gid)

    def _plan_landlock(self):
        """What the Landlock ruleset of a run holds, worked out once in the zygote: the
        accesses handled and each rule's path and accesses. The ruleset itself is made in each
        run's process: its /tmp and /proc are file systems of that run, and a rule on the
        directory they cover would not reach them (Landlock skips hidden mount points)."""
        c = self.ctypes
        abi = self.libc.syscall(c.c_long(_LANDLOCK_CREATE_RULESET), None, c.c_long(0), c.c_long(1))
        self._check(abi, "Landlock is not enabled in this kernel")
        handled = (1 << 13) - 1
        if abi >= 2:
            handled |= 1 << 13  # REFER
        if abi >= 3:
            handled |= _LL_TRUNCATE
        if abi >= 5:
            handled |= _LL_IOCTL_DEV
        net = 3 if abi >= 4 else 0  # BIND_TCP | CONNECT_TCP, with no rule allowing any
        scoped = 3 if abi >= 6 else 0  # abstract unix sockets and signals stay inside
        size = 8 if abi < 4 else 16 if abi < 6 else 24
        attr = c.create_string_buffer(struct.pack("=QQQ", handled, net, scoped)[:size], size)
        read = _LL_READ_FILE | _LL_READ_DIR | _LL_EXECUTE
        viewed = self.status.get("mount_namespace") is None
        # With the view, each run mounts its own /tmp over the view's: a view path beneath /tmp
        # (an interpreter installed there) is hidden from the run, and gets no rule.
        rules = [(path, read) for path in self.view
                 if not (viewed and (path == "/tmp" or path.startswith("/tmp/")))]
        rules += [(d, _LL_READ_FILE | _LL_WRITE_FILE) for d in _DEVICES if os.path.exists(d)]
        if viewed:
            rules += [("/tmp", handled), ("/dev/shm", handled), ("/proc", _LL_READ_FILE | _LL_READ_DIR)]
        planned = []
        for path, allowed in rules:
            if not os.path.isdir(path):
                allowed &= _LL_FILE_RIGHTS
            planned.append((path, allowed & handled))
        return attr, size, planned

    def prepare(self):
        """In the zygote, after its layers: what each run child's restrictions use, worked out
        once (the Landlock plan, the seccomp program)."""
        if not self.on:
            return
        try:
            self._landlock_plan = self._plan_landlock()
        except Exception as error:  # noqa: BLE001 - recorded; the layer reports it per child
            self._landlock_error = _cut(str(error))
        if self.filter and _len(self.filter) % 8 == 0:
            c = self.ctypes

            class Program(c.Structure):
                _fields_ = [("len", c.c_ushort), ("filter", c.c_char_p)]

            self._program = Program(_len(self.filter) // 8, self.filter)
        # The arguments of the calls that drop every capability, made once (a spare then
        # makes only the calls).
        c = self.ctypes
        try:
            last = int(_read_proc("/proc/sys/kernel/cap_last_cap"))
        except (OSError, ValueError):
            last = 40
        zero = c.c_ulong(0)
        self._capbset = [(c.c_int(_PR_CAPBSET_DROP), c.c_ulong(cap), zero, zero, zero) for cap in range(last + 1)]
        header = c.create_string_buffer(struct.pack("=Ii", 0x20080522, 0), 8)
        self._capset = (header, c.create_string_buffer(bytes(24), 24))

    def _landlock(self):
        if self._landlock_plan is None:
            raise OSError(self._landlock_error)
        attr, size, rules = self._landlock_plan
        c = self.ctypes
        syscall = self.libc.syscall
        ruleset = self._check(syscall(c.c_long(_LANDLOCK_CREATE_RULESET), attr, c.c_long(size), c.c_long(0)), "landlock_create_ruleset")
        try:
            for path, allowed in rules:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                try:
                    rule = struct.pack("=Qi", allowed, fd)
                    self._check(syscall(c.c_long(_LANDLOCK_ADD_RULE), c.c_long(ruleset), c.c_long(1), rule, c.c_long(0)), "landlock_add_rule %s" % path)
                finally:
                    os.close(fd)
            self._check(syscall(c.c_long(_LANDLOCK_RESTRICT_SELF), c.c_long(ruleset), c.c_long(0)), "landlock_restrict_self")
        finally:
            os.close(ruleset)

    def _drop_capabilities(self):
        prctl = self.libc.prctl
        for args in self._capbset:
            if prctl(*args) < 0:
                self._check(-1, "PR_CAPBSET_DROP")
        self._check(self.libc.capset(*self._capset), "capset")

    def _seccomp(self):
        if self._program is None:
            raise OSError("no seccomp filter for this architecture")
        c = self.ctypes
        self._check(self._prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, c.byref(self._program), 0, 0), "PR_SET_SECCOMP")

    def report(self):
        return {layer: self.status.get(layer, "not set up") for layer in LAYERS}


