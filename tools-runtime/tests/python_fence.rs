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

use code_support::{Shared, TestHost, ordinary_limits};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_runtime::code::{
    CodeFailureKind, CodeLimits, CodeOutcome, CodeRuntime, PythonMode, PythonRuntime,
    SandboxLayer, SandboxPolicy,
};

async fn run_with(rt: &PythonRuntime, program: &str, limits: &CodeLimits) -> CodeOutcome {
    let run = rt.run(
        program,
        Arc::new(Shared(TestHost::new())),
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
                    let dev_ino = (entry["dev"].as_u64().unwrap(), entry["ino"].as_u64().unwrap());
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
        let mqueue = if mqueue == 0 { json!("ok") } else { json!(mqueue) };
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
