//! The fence around one Python run: what the host hands a run without meaning to (inherited
//! file descriptors), what one run leaves for the next (System V and POSIX IPC), and what a
//! run's memory limit counts (one cgroup per run: every process, shared memory, tmpfs pages,
//! kernel memory). Each test asserts the host's own measurement of the outcome and that the
//! next run is unaffected.
#![cfg(all(feature = "python", target_os = "linux"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::code_support;

use std::ffi::CString;
use std::sync::Arc;
use std::time::Duration;

use code_support::{TestHost, ordinary_limits, shared};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_code::{
    CodeFailureKind, CodeLimits, CodeOutcome, CodeRuntime, PYTHON_SHM_BYTES, PYTHON_TMP_INODES,
    PythonMode, PythonRuntime, SandboxLayer, SandboxPolicy,
};

async fn run_with(rt: &PythonRuntime, program: &str, limits: &CodeLimits) -> CodeOutcome {
    let run = rt.run(
        program,
        shared(TestHost::new()),
        limits,
        CancellationToken::new(),
    );
    tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the run did not end")
}

/// The program's result; panics with the failure otherwise.
async fn result(rt: &PythonRuntime, program: &str) -> Value {
    match run_with(rt, program, &ordinary_limits()).await {
        Ok(done) => done.result.unwrap_or(Value::Null),
        Err(failure) => panic!("expected a completion, got {failure:?}"),
    }
}

/// A file descriptor opened the way a careless library opens one: without `O_CLOEXEC`, so
/// every process this one starts inherits it. Closed on drop.
struct Leaky(i32);

impl Leaky {
    fn open(path: &std::path::Path, flags: i32) -> Leaky {
        let path = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; the descriptor is owned by the returned value.
        let fd = unsafe { libc::open(path.as_ptr(), flags) };
        assert!(fd >= 0, "open: {}", std::io::Error::last_os_error());
        // SAFETY: plain fcntl on our own descriptor.
        let cloexec = unsafe { libc::fcntl(fd, libc::F_GETFD) } & libc::FD_CLOEXEC;
        assert_eq!(cloexec, 0, "the descriptor must be inheritable");
        Leaky(fd)
    }
}

impl Drop for Leaky {
    fn drop(&mut self) {
        // SAFETY: our own descriptor, closed once.
        unsafe {
            libc::close(self.0);
        }
    }
}

/// Every descriptor number up to 1,024: what it is, and what reading and writing it did. The
/// protocol socket is the run's own (only sockets are not read or written: a write there would
/// be a protocol error of the program's making).
const SCAN_FDS: &str = r"import os, stat
listed = sorted(int(fd) for fd in os.listdir('/proc/self/fd'))
found = []
for fd in range(1024):
    try:
        st = os.fstat(fd)
    except OSError:
        continue
    kind = 'sock' if stat.S_ISSOCK(st.st_mode) else 'chr' if stat.S_ISCHR(st.st_mode) else 'reg' if stat.S_ISREG(st.st_mode) else 'dir' if stat.S_ISDIR(st.st_mode) else 'other'
    entry = {'fd': fd, 'kind': kind, 'dev': st.st_dev, 'ino': st.st_ino}
    if kind != 'sock':
        try:
            entry['read'] = os.pread(fd, 64, 0).decode('latin-1')
        except OSError as e:
            entry['read'] = e.errno
        try:
            entry['wrote'] = ['ok', os.write(fd, b'LEAKED')]
        except OSError as e:
            entry['wrote'] = ['refused', e.errno]
    found.append(entry)
return {'listed': listed, 'found': found}";

/// Issue #24, item 1: descriptors the host holds without close-on-exec must not reach a
/// program, in either mode and under every policy. The descriptors are opened before the
/// runtime starts its zygote (it inherits them) and stay open while the runs go.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptors_the_host_holds_do_not_reach_the_program() {
    let dir = std::env::temp_dir().join(format!("fence-fds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret_path = dir.join("secret");
    let target_path = dir.join("target");
    std::fs::write(&secret_path, "the host's secret").unwrap();
    std::fs::write(&target_path, "untouched").unwrap();
    let secret = Leaky::open(&secret_path, libc::O_RDONLY);
    let target = Leaky::open(&target_path, libc::O_RDWR);
    let directory = Leaky::open(&dir, libc::O_RDONLY | libc::O_DIRECTORY);
    let identity = |path: &std::path::Path| {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).unwrap();
        (meta.dev(), meta.ino())
    };
    let host_files = [
        identity(&secret_path),
        identity(&target_path),
        identity(&dir),
    ];

    for policy in [SandboxPolicy::Require, SandboxPolicy::Off] {
        for mode in [PythonMode::Zygote, PythonMode::SpawnPerRun] {
            let rt = PythonRuntime::new().with_mode(mode).with_sandbox(policy);
            // Two runs: the first from a spare forked right after the zygote started, the
            // second from one forked after a run.
            for round in 0..2 {
                let value = result(&rt, SCAN_FDS).await;
                let found = value["found"].as_array().unwrap();
                let at = format!("{mode:?} {policy:?} run {round}: {value}");
                for entry in found {
                    let fd = entry["fd"].as_i64().unwrap();
                    let kind = entry["kind"].as_str().unwrap();
                    let dev_ino = (
                        entry["dev"].as_u64().unwrap(),
                        entry["ino"].as_u64().unwrap(),
                    );
                    assert!(!host_files.contains(&dev_ino), "a host file is open: {at}");
                    assert!(
                        kind == "sock" || (kind == "chr" && fd <= 2) || kind == "other",
                        "fd {fd} is a {kind}: {at}"
                    );
                    let read = entry["read"].as_str().unwrap_or_default();
                    assert!(!read.contains("secret"), "{at}");
                    // Only /dev/null (0, 1, 2) takes a write.
                    if entry["wrote"][0] == "ok" {
                        assert!(fd <= 2, "fd {fd} took a write: {at}");
                    }
                }
                // Nothing beyond what the run itself opened: 0-2, its socket, the event loop.
                assert!(found.len() <= 8, "{at}");
            }
        }
    }
    assert_eq!(
        std::fs::read_to_string(&target_path).unwrap(),
        "untouched",
        "a program wrote into a host file"
    );
    drop((secret, target, directory));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What one run leaves behind through IPC: a System V shared-memory segment, message queue and
/// semaphore set (key 0x2424), a POSIX shared-memory object and a POSIX message queue, each
/// written to. Returns what each step did (`'ok'` or the errno).
const LEAVE_IPC: &str = r"import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
KEY, CREAT = 0x2424, 0o1000 | 0o600
def check(rc):
    if rc == -1 or rc is None:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return rc
out = {}
def step(name, f):
    try:
        f()
        out[name] = 'ok'
    except OSError as e:
        out[name] = e.errno
def shm():
    ident = check(libc.shmget(KEY, 1 << 20, CREAT))
    addr = libc.shmat(ident, None, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        check(-1)
    ctypes.memmove(addr, b'left by run N', 13)
    check(libc.shmdt(ctypes.c_void_p(addr)))
def msg():
    ident = check(libc.msgget(KEY, CREAT))
    body = struct.pack('l16s', 1, b'left by run N')
    check(libc.msgsnd(ident, body, 16, 0))
def sem():
    ident = check(libc.semget(KEY, 1, CREAT))
    check(libc.semctl(ident, 0, 16, 7))
def posix_shm():
    fd = os.open('/dev/shm/fence', os.O_CREAT | os.O_RDWR, 0o600)
    os.write(fd, b'left by run N')
    os.close(fd)
def mqueue():
    mq = check(libc.mq_open(b'/fence', os.O_CREAT | os.O_RDWR, 0o600, None))
    check(libc.mq_send(mq, b'left by run N', 13, 0))
for name, f in [('shm', shm), ('msg', msg), ('sem', sem), ('posix_shm', posix_shm), ('mqueue', mqueue)]:
    step(name, f)
return out";

/// What the next run finds of it: each object opened without creating it (the errno, or what
/// it holds), and the objects `/proc/sysvipc` lists.
const FIND_IPC: &str = r"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
KEY = 0x2424
def found(rc):
    return ctypes.get_errno() if rc == -1 else 'found'
out = {
    'shm': found(libc.shmget(KEY, 0, 0)),
    'msg': found(libc.msgget(KEY, 0)),
    'sem': found(libc.semget(KEY, 0, 0)),
    'mqueue': found(libc.mq_open(b'/fence', os.O_RDWR)),
}
try:
    out['posix_shm'] = open('/dev/shm/fence').read()
except OSError as e:
    out['posix_shm'] = e.errno
for kind in ('shm', 'msg', 'sem'):
    out['listed_' + kind] = len(open('/proc/sysvipc/' + kind).read().splitlines()) - 1
return out";

/// Issue #24, item 2: a run's System V and POSIX IPC objects go with it. Two runs on one
/// runtime (one zygote): the first creates and writes one of each, the second finds none.
/// Landlock refuses POSIX message queues outright (their files are outside every rule), so a
/// runtime without Landlock shows that a queue, made, still goes with its run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipc_objects_of_one_run_are_gone_for_the_next() {
    let runtimes = [
        (PythonRuntime::new(), libc::EACCES),
        (
            PythonRuntime::new().with_mode(PythonMode::SpawnPerRun),
            libc::EACCES,
        ),
        (
            PythonRuntime::new()
                .with_sandbox(SandboxPolicy::BestEffort)
                .pretend_missing(SandboxLayer::Landlock),
            0,
        ),
    ];
    for (rt, mqueue) in runtimes {
        let mode = rt.mode();
        let mqueue = if mqueue == 0 {
            json!("ok")
        } else {
            json!(mqueue)
        };
        assert_eq!(
            result(&rt, LEAVE_IPC).await,
            json!({"shm": "ok", "msg": "ok", "sem": "ok", "posix_shm": "ok", "mqueue": mqueue}),
            "{mode:?}: the first run could not make its objects, so the test proves nothing"
        );
        assert_eq!(
            result(&rt, FIND_IPC).await,
            json!({
                "shm": libc::ENOENT, "msg": libc::ENOENT, "sem": libc::ENOENT,
                "mqueue": libc::ENOENT, "posix_shm": libc::ENOENT,
                "listed_shm": 0, "listed_msg": 0, "listed_sem": 0
            }),
            "{mode:?}: the next run found what the first left"
        );
    }
}

/// This machine's cgroup v1 memory hierarchy (and CI's): where the tests read a run's account.
const MEMORY_HIERARCHY: &str = "/sys/fs/cgroup/memory";

/// The cgroup of process `pid` in the cgroup v1 hierarchy of `controller`, from
/// `/proc/PID/cgroup` (the hierarchies are mounted at `/sys/fs/cgroup/<controller>`).
fn cgroup_of(pid: u32, controller: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let path = text
        .lines()
        .find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let _ = fields.next();
            let controllers = fields.next()?;
            let path = fields.next()?;
            controllers
                .split(',')
                .any(|c| c == controller)
                .then_some(path)
        })
        .expect("a cgroup v1 hierarchy");
    std::path::Path::new(MEMORY_HIERARCHY)
        .with_file_name(controller)
        .join(path.trim_start_matches('/'))
}

/// The memory cgroup of process `pid`.
fn memory_cgroup(pid: u32) -> std::path::PathBuf {
    cgroup_of(pid, "memory")
}

/// The memory cgroup of the next spare of `rt` (a zygote runtime), once the spare has joined
/// it (its first step, which may come after the fork's answer).
async fn spare_cgroup(rt: &PythonRuntime) -> std::path::PathBuf {
    rt.warm_up().await.unwrap();
    let spare = rt.spare_pids().await[0];
    let started = std::time::Instant::now();
    loop {
        let dir = memory_cgroup(spare);
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        if name.starts_with(&format!("tools-code-{}-", std::process::id())) {
            return dir;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the spare is not in a run cgroup of its own: {}",
            dir.display()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A spare is the run's first process itself: a child of the zygote, PID 1 of the run's PID
/// namespace, and the only process of the run's cgroup (no run child outside the namespace
/// that would count in the run's account and process limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spare_is_pid_1_of_its_run_with_no_process_above_it_in_the_run() {
    let rt = PythonRuntime::new();
    let memory = spare_cgroup(&rt).await;
    let spare = rt.spare_pids().await[0];
    let zygote = rt.zygote_pid().await.unwrap();
    assert!(
        children(zygote).contains(&spare),
        "the spare {spare} is not the zygote's child: {:?}",
        children(zygote)
    );
    let status = std::fs::read_to_string(format!("/proc/{spare}/status")).unwrap();
    let nspid: Vec<&str> = status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(nspid, [spare.to_string().as_str(), "1"], "{status}");
    // It joins the memory cgroup, then the pids one.
    let started = std::time::Instant::now();
    while cgroup_of(spare, "pids") == cgroup_of(std::process::id(), "pids") {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no pids cgroup"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    for dir in [memory, cgroup_of(spare, "pids")] {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap();
        assert_eq!(procs.trim(), spare.to_string(), "{}", dir.display());
    }
    // The program sees itself as PID 1 with its parent outside its namespace.
    assert_eq!(
        result(&rt, "import os\nreturn [os.getpid(), os.getppid()]").await,
        json!([1, 0])
    );
}

/// Reads a number from a cgroup file.
fn read_number(dir: &std::path::Path, name: &str) -> u64 {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    text.trim().parse().unwrap()
}

/// A host whose one tool, `measure`, answers what the kernel counts for the run's memory
/// account at that moment (read from the cgroup's files, not from the program).
struct Measure(std::path::PathBuf);

impl tools_code::CodeHost for Measure {
    fn tool_names(&self) -> Vec<String> {
        vec!["measure".to_owned()]
    }

    fn call(&self, _name: &str, _args: Value, reply: tools_code::CallReply) {
        let dir = &self.0;
        let oom = std::fs::read_to_string(dir.join("memory.oom_control")).unwrap();
        reply.send(Ok(json!({
            "usage": read_number(dir, "memory.usage_in_bytes"),
            "peak": read_number(dir, "memory.max_usage_in_bytes"),
            "limit": read_number(dir, "memory.limit_in_bytes"),
            "swap_limit": read_number(dir, "memory.memsw.limit_in_bytes"),
            "kernel": read_number(dir, "memory.kmem.usage_in_bytes"),
            "oom_kills": oom.lines().find_map(|l| l.strip_prefix("oom_kill ")).unwrap().trim().parse::<u64>().unwrap(),
        })));
    }
}

/// Runs `program` on the next spare of `rt` (a zygote runtime, warmed up) with `memory_bytes`
/// and a `measure` tool reading that spare's cgroup.
async fn measured_run(rt: &PythonRuntime, program: &str, memory_bytes: usize) -> CodeOutcome {
    let dir = spare_cgroup(rt).await;
    let limits = ordinary_limits().with_memory_bytes(memory_bytes);
    let run = rt.run(
        program,
        Arc::new(Measure(dir)),
        &limits,
        CancellationToken::new(),
    );
    tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the run did not end")
}

/// The limit every memory test runs with.
const LIMIT: usize = 32 << 20;

/// A run after a hostile one works normally.
async fn next_run_works(rt: &PythonRuntime) {
    assert_eq!(
        result(rt, "import os\nreturn [os.getpid(), os.listdir('/tmp')]").await,
        json!([1, []]),
        "the next run is not a fresh one"
    );
}

/// Issue #24, item 3: children that each allocate and touch 24 MiB, twelve of them (288 MiB),
/// while each stays within its own `RLIMIT_AS`. Each reports once its memory is touched and
/// then holds it; the program measures the account once every child has reported or died.
const FORKS: &str = r"import os, select
N, EACH = 12, 24 << 20
ready_r, ready_w = os.pipe()
release_r, release_w = os.pipe()
kids = []
for i in range(N):
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(release_w)
        block = bytearray(EACH)
        block[::4096] = b'\x01' * (EACH // 4096)
        os.write(ready_w, bytes([i]))
        os.read(release_r, 1)
        os._exit(0)
    kids.append(pid)
os.close(ready_w)
os.close(release_r)
reported, dead = set(), {}
while len(reported | {kids.index(p) for p in dead}) < N:
    if select.select([ready_r], [], [], 0.05)[0]:
        reported.update(os.read(ready_r, N))
    for pid in kids:
        if pid not in dead:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                dead[pid] = status
measured = await tools.measure({})
os.close(release_w)
for pid in kids:
    if pid not in dead:
        dead[pid] = os.waitpid(pid, 0)[1]
killed = sum(1 for s in dead.values() if os.WIFSIGNALED(s) and os.WTERMSIG(s) == 9)
return {'reported': len(reported), 'killed': killed, 'measured': measured}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forked_children_share_the_run_s_one_memory_limit() {
    let rt = PythonRuntime::new();
    match measured_run(&rt, FORKS, LIMIT).await {
        Ok(done) => {
            let value = done.result.unwrap();
            let measured = &value["measured"];
            let (peak, limit) = (
                measured["peak"].as_u64().unwrap(),
                measured["limit"].as_u64().unwrap(),
            );
            // The limit is what the spare held plus LIMIT; all the run's processes together
            // never held more, and the kernel ended children to keep it so.
            assert!(limit >= LIMIT as u64 && limit < 2 * LIMIT as u64, "{value}");
            assert_eq!(measured["swap_limit"], measured["limit"], "{value}");
            assert!(peak <= limit, "{value}");
            assert!(value["killed"].as_u64().unwrap() >= 1, "{value}");
            assert!(measured["oom_kills"].as_u64().unwrap() >= 1, "{value}");
            assert!(
                value["reported"].as_u64().unwrap() * (24 << 20) <= limit + (24 << 20),
                "{value}"
            );
        }
        // The kernel chose the program's own process.
        Err(failure) => assert_eq!(failure.kind, CodeFailureKind::Memory, "{failure:?}"),
    }
    next_run_works(&rt).await;
}

/// Issue #24, item 4: shared memory is counted. A `memfd` of 512 MiB, written a MiB at a
/// time, is not address space; the run's account ends the run.
const MEMFD: &str = "import os\nfd = os.memfd_create('fill')\nchunk = b'x' * (1 << 20)\nfor _ in range(512):\n    os.write(fd, chunk)\nreturn 'wrote 512 MiB'";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memfd_is_counted_in_every_mode_and_policy() {
    for (mode, policy) in [
        (PythonMode::Zygote, SandboxPolicy::Require),
        (PythonMode::SpawnPerRun, SandboxPolicy::Require),
        // The account is a resource limit, not isolation: it holds without the sandbox too.
        (PythonMode::Zygote, SandboxPolicy::Off),
        (PythonMode::SpawnPerRun, SandboxPolicy::Off),
    ] {
        let rt = PythonRuntime::new().with_mode(mode).with_sandbox(policy);
        let limits = ordinary_limits().with_memory_bytes(LIMIT);
        let failure = run_with(&rt, MEMFD, &limits).await.unwrap_err();
        assert_eq!(
            failure.kind,
            CodeFailureKind::Memory,
            "{mode:?} {policy:?}: {failure:?}"
        );
        assert!(
            failure.message.starts_with(&format!(
                "the run exceeded its memory limit (memory_bytes = {LIMIT} bytes, counting every process of the run, shared memory"
            )) && failure.message.contains("and the kernel ended it"),
            "{mode:?} {policy:?}: {}",
            failure.message
        );
        if policy == SandboxPolicy::Require {
            next_run_works(&rt).await;
        } else {
            assert_eq!(result(&rt, "return 1").await, json!(1));
        }
    }
}

/// Issue #24, item 5: empty files in `/tmp` stop at the inode cap, and the kernel memory they
/// use is counted in the run's account.
const FILES: &str = "import os\nmade, err = 0, None\ntry:\n    for i in range(500000):\n        os.close(os.open('/tmp/f%d' % i, os.O_CREAT | os.O_WRONLY, 0o600))\n        made += 1\nexcept OSError as e:\n    err = e.errno\nreturn {'made': made, 'errno': err, 'measured': await tools.measure({})}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_stop_at_the_inode_cap_and_their_kernel_memory_is_counted() {
    let rt = PythonRuntime::new();
    let value = match measured_run(&rt, FILES, LIMIT).await {
        Ok(done) => done.result.unwrap(),
        Err(failure) => panic!("{failure:?}"),
    };
    let made = value["made"].as_u64().unwrap();
    assert_eq!(value["errno"], json!(libc::ENOSPC), "{value}");
    // The root directory takes one inode.
    assert!(
        made < PYTHON_TMP_INODES && made + 16 >= PYTHON_TMP_INODES,
        "{value}"
    );
    let measured = &value["measured"];
    let kernel = measured["kernel"].as_u64().unwrap();
    // Inodes and dentries of those files (hundreds of bytes each) are charged to the run, and
    // within the counter its limit applies to.
    assert!(kernel >= made * 256, "{value}");
    assert!(measured["usage"].as_u64().unwrap() >= kernel, "{value}");
    next_run_works(&rt).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dev_shm_is_private_and_capped() {
    let rt = PythonRuntime::new();
    let program = "import os\nfd = os.open('/dev/shm/big', os.O_CREAT | os.O_WRONLY, 0o600)\nwritten, err = 0, None\nchunk = b'x' * (1 << 20)\ntry:\n    while written < (64 << 20):\n        written += os.write(fd, chunk)\nexcept OSError as e:\n    err = e.errno\nreturn [written, err, sorted(os.listdir('/dev/shm'))]";
    assert_eq!(
        result(&rt, program).await,
        json!([PYTHON_SHM_BYTES, libc::ENOSPC, ["big"]])
    );
    assert_eq!(
        result(&rt, "import os\nreturn os.listdir('/dev/shm')").await,
        json!([])
    );
}

/// Waits until `count()` is `expected` (the host removes a run's cgroup in the background once
/// its processes are gone).
async fn settles(what: &str, expected: usize, count: impl Fn() -> usize) {
    let started = std::time::Instant::now();
    while count() != expected {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{what}: {} run cgroups, expected {expected}",
            count()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// No run cgroup outlives its run, and none outlives the runtime: a spare's goes with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_cgroups_go_with_their_runs_and_with_the_runtime() {
    let rt = PythonRuntime::new();
    let dir = spare_cgroup(&rt).await;
    let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
    // This runtime's cgroups: `tools-code-<pid>-<runtime>-<n>`.
    let prefix = name[..=name.rfind('-').unwrap()].to_owned();
    let parents = [
        dir.parent().unwrap().to_path_buf(),
        cgroup_of(std::process::id(), "pids"),
    ];
    let count = || {
        parents
            .iter()
            .flat_map(|p| std::fs::read_dir(p).unwrap().flatten())
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .count()
    };
    // Two spares, each in the memory and the pids hierarchy.
    settles("after warm-up", 4, count).await;
    for _ in 0..5 {
        assert_eq!(result(&rt, "return 1").await, json!(1));
    }
    let limits = ordinary_limits().with_memory_bytes(LIMIT);
    let failure = run_with(&rt, MEMFD, &limits).await.unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Memory);
    settles("after seven runs", 4, count).await;
    drop(rt);
    settles("after the runtime was dropped", 0, count).await;
}

/// Without a cgroup, `Require` refuses to start (in both modes), and `BestEffort` runs and its
/// report says what the memory limit does not count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_account_require_refuses_and_best_effort_says_what_is_not_counted() {
    let layer = SandboxLayer::MemoryAccount;
    for mode in [PythonMode::Zygote, PythonMode::SpawnPerRun] {
        let rt = PythonRuntime::new().with_mode(mode).pretend_missing(layer);
        let failure = run_with(&rt, "return 1", &ordinary_limits())
            .await
            .unwrap_err();
        assert_eq!(failure.kind, CodeFailureKind::Internal, "{failure:?}");
        let message = &failure.message;
        assert!(
            message.contains("- memory_account: disabled for a test (pretend_missing)")
                && message.contains(layer.requirement()),
            "{mode:?}: {message}"
        );
    }
    let rt = PythonRuntime::new()
        .with_sandbox(SandboxPolicy::BestEffort)
        .pretend_missing(layer);
    assert_eq!(result(&rt, "return 1").await, json!(1));
    let report = rt.sandbox_report().await.unwrap();
    assert_eq!(report.missing(), vec![layer], "{report}");
    let reason = &report.layer(layer).unwrap().reason;
    assert!(
        reason.starts_with("disabled for a test (pretend_missing); without it memory_bytes is RLIMIT_AS per process: the memory of the run's other processes, shared memory (memfd, /dev/shm), tmpfs pages (/tmp) and kernel memory (inodes, dentries) are not counted"),
        "{reason}"
    );
    // Its spares are where the host is: no cgroup of their own.
    let spare = rt.spare_pids().await[0];
    assert_eq!(memory_cgroup(spare), memory_cgroup(std::process::id()));
}

/// The children of `pid` (of its main thread, the only one a runner process has).
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .collect()
}

/// The live descendants of `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(parent) = stack.pop() {
        let listed = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children"))
            .unwrap_or_default();
        for child in listed.split_whitespace().filter_map(|c| c.parse().ok()) {
            out.push(child);
            stack.push(child);
        }
    }
    out
}

/// Issue #24, item 10: a memory limit the run's process cannot take says so. A limit past any
/// address space (it ended every run as "exit status 137") is no limit; one above the hard
/// `RLIMIT_AS` the host passed down names both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_limit_that_cannot_be_set_says_so() {
    for mode in [PythonMode::Zygote, PythonMode::SpawnPerRun] {
        let rt = PythonRuntime::new().with_mode(mode);
        for bytes in [usize::MAX, 1 << 63] {
            let limits = ordinary_limits().with_memory_bytes(bytes);
            let done = run_with(&rt, "return 1", &limits).await;
            assert_eq!(
                done.map(|d| d.result),
                Ok(Some(json!(1))),
                "{mode:?} {bytes}"
            );
        }
    }
    let rt = PythonRuntime::new();
    rt.warm_up().await.unwrap();
    let zygote = rt.zygote_pid().await.unwrap();
    let hard: u64 = 1 << 30;
    // Every process of the zygote's tree, listed again until each spare (the program's process
    // itself) is listed and a listing finds none it has not limited. (A process copies its
    // parent's limits early in its fork and joins the parent's list of children later, after
    // the cgroup check, which can wait for a grace period while another cgroup migrates: so a
    // child that is not listed yet may hold the old limits. A listed one is limited after.)
    let mut limited = std::collections::HashSet::new();
    let waited = std::time::Instant::now();
    loop {
        let tree: Vec<u32> = std::iter::once(zygote).chain(descendants(zygote)).collect();
        let fresh: Vec<u32> = tree
            .iter()
            .copied()
            .filter(|p| !limited.contains(p))
            .collect();
        let listed = children(zygote);
        let spares_forked = rt
            .spare_pids()
            .await
            .iter()
            .all(|spare| listed.contains(spare));
        if fresh.is_empty() && spares_forked {
            break;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(30),
            "the zygote's children are not its spares"
        );
        for pid in fresh {
            limited.insert(pid);
            let limit = libc::rlimit {
                rlim_cur: hard,
                rlim_max: hard,
            };
            // SAFETY: a valid rlimit; the target is a process of our own zygote.
            let rc = unsafe {
                libc::prlimit(
                    i32::try_from(pid).unwrap(),
                    libc::RLIMIT_AS,
                    &limit,
                    std::ptr::null_mut(),
                )
            };
            let error = std::io::Error::last_os_error();
            // A process that ended since the listing needs no limit.
            assert!(
                rc == 0 || error.raw_os_error() == Some(libc::ESRCH),
                "prlimit: {error}"
            );
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let limits = ordinary_limits().with_memory_bytes(2 << 30);
    let failure = run_with(&rt, "return 1", &limits).await.unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Memory, "{failure:?}");
    assert!(
        failure
            .message
            .starts_with("the memory limit cannot be set: RLIMIT_AS of ")
            && failure
                .message
                .contains("memory_bytes 2147483648) was refused (")
            && failure.message.ends_with(
                "the hard RLIMIT_AS this process inherited from the host is 1073741824 bytes"
            ),
        "{}",
        failure.message
    );
    assert_eq!(result(&rt, "return 1").await, json!(1));
}
