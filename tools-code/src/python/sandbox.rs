//! The Python runtime's sandbox: the policy, the report of what holds on this machine, the
//! settings handed to the runner and the seccomp filter (built here, installed by the runner).

use std::fmt;

use serde_json::Value;

/// What the Python runtime does about the operating-system sandbox around a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxPolicy {
    /// Every layer must hold: the runtime refuses to start (an `internal` failure naming each
    /// missing layer and the kernel or container setting that would allow it) when one does
    /// not. The default: programs come from a model.
    #[default]
    Require,
    /// Runs with the layers this machine allows; the missing ones are named in
    /// [`PythonRuntime::sandbox_report`](super::PythonRuntime::sandbox_report) and in a
    /// `tracing` warning when the zygote starts.
    BestEffort,
    /// No sandbox: the program has the host process's user, file system, network and
    /// processes (only the resource limits hold).
    Off,
}

impl SandboxPolicy {
    fn code(self) -> &'static str {
        match self {
            SandboxPolicy::Require => "require",
            SandboxPolicy::BestEffort => "best_effort",
            SandboxPolicy::Off => "off",
        }
    }
}

/// One layer of the sandbox. See the crate docs' chapter "Security of Code Mode"
/// (`tools-code/docs/security.md`) for what each prevents and what it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SandboxLayer {
    /// A user namespace: the run is root only inside it, with no capability over the host.
    UserNamespace,
    /// A PID namespace per run: the program's first process is its PID 1, every process it
    /// starts dies with the run, and no host process is visible.
    PidNamespace,
    /// A network namespace with nothing but a loopback interface (down).
    NetworkNamespace,
    /// A mount namespace whose root is a read-only view (the interpreter, its standard
    /// library, the shared libraries it loaded, `/dev/null` and kin), a `/proc` of the run's
    /// own processes and an empty private `/tmp` and `/dev/shm` (capped in bytes and in files:
    /// [`TMP_BYTES`], [`SHM_BYTES`], [`TMP_INODES`]) that are discarded with the run; with a
    /// UTS namespace of its own and an IPC namespace per run (no System V IPC object or POSIX
    /// message queue is shared with the host or outlives its run).
    MountNamespace,
    /// Landlock rules matching that view: read and execute beneath it, everything beneath
    /// `/tmp`, nothing else; TCP bind and connect refused; signals and abstract unix sockets
    /// scoped to the run.
    Landlock,
    /// A seccomp filter refusing what a tool-calling program never needs.
    Seccomp,
    /// `no_new_privs`: no `execve` can gain privileges.
    NoNewPrivileges,
    /// Every capability dropped (effective, permitted, inheritable and the bounding set).
    Capabilities,
    /// At most [`PROCESS_LIMIT`] processes and threads per run (`RLIMIT_NPROC`, counted in the
    /// run's own user namespace).
    ProcessLimit,
    /// One memory account per run: a cgroup per run child, made and removed by the host, whose
    /// limit (`memory_bytes` beyond what the run child held when its run started, no swap)
    /// counts every process of the run, anonymous and shared memory (`memfd`, `/dev/shm`),
    /// `tmpfs` pages (`/tmp`) and the kernel memory its files use, with its own process limit
    /// ([`PROCESS_LIMIT`]). Without it only `RLIMIT_AS` per process bounds memory. It is a
    /// resource limit, not isolation: under [`SandboxPolicy::Off`] it still applies where a
    /// cgroup can be had (and its absence never stops a run there), though the report under
    /// `Off` lists every layer, this one too, as inactive.
    MemoryAccount,
}

/// What a run's memory limit does not count without [`SandboxLayer::MemoryAccount`].
pub(crate) const NOT_COUNTED: &str = "without it memory_bytes is RLIMIT_AS per process: the \
     memory of the run's other processes, shared memory (memfd, /dev/shm), tmpfs pages (/tmp) \
     and kernel memory (inodes, dentries) are not counted";

/// The most processes (and threads) one sandboxed run may have at a time, its first process
/// included: no process of the runtime's own is counted beside them (under
/// [`PythonMode::SpawnPerRun`](crate::PythonMode::SpawnPerRun) the spawned interpreter above
/// the run is in its cgroup, so such a run gets one less).
pub const PROCESS_LIMIT: u32 = 64;

/// The size of a sandboxed run's `/tmp` (a `tmpfs`; writes past it fail with `ENOSPC`).
pub const TMP_BYTES: u64 = 64 << 20;

/// The most files (inodes: files, directories, links) a sandboxed run's `/tmp`, and its
/// `/dev/shm`, may hold each; one more fails with `ENOSPC`. A file's inode and directory entry
/// are kernel memory that [`TMP_BYTES`] does not count (about 1 KiB each, also counted in the
/// run's memory account where there is one).
pub const TMP_INODES: u64 = 16_384;

/// The size of a sandboxed run's `/dev/shm` (a `tmpfs` of its own, for POSIX shared memory
/// and semaphores; writes past it fail with `ENOSPC`).
pub const SHM_BYTES: u64 = 16 << 20;

impl SandboxLayer {
    /// Every layer, in the order the report lists them.
    pub const ALL: [SandboxLayer; 10] = [
        SandboxLayer::UserNamespace,
        SandboxLayer::PidNamespace,
        SandboxLayer::NetworkNamespace,
        SandboxLayer::MountNamespace,
        SandboxLayer::Landlock,
        SandboxLayer::Seccomp,
        SandboxLayer::NoNewPrivileges,
        SandboxLayer::Capabilities,
        SandboxLayer::ProcessLimit,
        SandboxLayer::MemoryAccount,
    ];

    /// The stable snake-case name (`user_namespace`, `pid_namespace`, ...).
    pub fn code(self) -> &'static str {
        match self {
            SandboxLayer::UserNamespace => "user_namespace",
            SandboxLayer::PidNamespace => "pid_namespace",
            SandboxLayer::NetworkNamespace => "network_namespace",
            SandboxLayer::MountNamespace => "mount_namespace",
            SandboxLayer::Landlock => "landlock",
            SandboxLayer::Seccomp => "seccomp",
            SandboxLayer::NoNewPrivileges => "no_new_privileges",
            SandboxLayer::Capabilities => "capabilities",
            SandboxLayer::ProcessLimit => "process_limit",
            SandboxLayer::MemoryAccount => "memory_account",
        }
    }

    /// The kernel or container setting that allows this layer.
    pub fn requirement(self) -> &'static str {
        match self {
            SandboxLayer::UserNamespace
            | SandboxLayer::PidNamespace
            | SandboxLayer::NetworkNamespace
            | SandboxLayer::MountNamespace
            | SandboxLayer::ProcessLimit => {
                "unprivileged user namespaces: a kernel with CONFIG_USER_NS (and CONFIG_PID_NS, \
                 CONFIG_NET_NS), sysctl user.max_user_namespaces > 0, \
                 kernel.unprivileged_userns_clone=1 where that sysctl exists, \
                 kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 23.10+, and a \
                 container that allows unshare/clone with namespace flags (Docker: \
                 --security-opt seccomp=unconfined or a profile that allows them)"
            }
            SandboxLayer::Landlock => {
                "Landlock: a kernel >= 5.13 with CONFIG_SECURITY_LANDLOCK=y and `landlock` in \
                 the active LSM list (the lsm= boot parameter or CONFIG_LSM); network rules \
                 need ABI 4 (kernel 6.7), scoping ABI 6 (6.12)"
            }
            SandboxLayer::Seccomp => {
                "seccomp filters: a kernel with CONFIG_SECCOMP_FILTER=y on x86_64 or aarch64, \
                 and a container that allows prctl(PR_SET_SECCOMP)"
            }
            SandboxLayer::NoNewPrivileges => "prctl(PR_SET_NO_NEW_PRIVS): Linux >= 3.5",
            SandboxLayer::MemoryAccount => {
                "a cgroup per run: a cgroup v2 hierarchy whose cgroup beside or above the host's \
                 gives its children the memory and pids controllers and was delegated to the host \
                 (systemd: Delegate=memory pids with DelegateSubgroup=), or the cgroup v1 memory \
                 and pids hierarchies mounted and writable by the host (root)"
            }
            SandboxLayer::Capabilities => {
                "prctl(PR_CAPBSET_DROP) and capset: a user namespace (see user_namespace) or \
                 CAP_SETPCAP"
            }
        }
    }
}

impl fmt::Display for SandboxLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// Whether one layer holds, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerStatus {
    /// The layer.
    pub layer: SandboxLayer,
    /// Whether a run child gets it on this machine.
    pub active: bool,
    /// Why it is not active (the failing call and its error), empty when it is.
    pub reason: String,
}

/// What the sandbox holds on this machine: each layer, as the zygote found it when it set up
/// its own layers and one throwaway run child's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxReport {
    /// The policy runs follow.
    pub policy: SandboxPolicy,
    /// Every layer of [`SandboxLayer::ALL`], in that order.
    pub layers: Vec<LayerStatus>,
}

impl SandboxReport {
    /// The layers that are not active.
    pub fn missing(&self) -> Vec<SandboxLayer> {
        self.layers
            .iter()
            .filter(|l| !l.active)
            .map(|l| l.layer)
            .collect()
    }

    /// Whether every layer is active.
    pub fn is_complete(&self) -> bool {
        self.layers.iter().all(|l| l.active)
    }

    /// The status of `layer`.
    pub fn layer(&self, layer: SandboxLayer) -> Option<&LayerStatus> {
        self.layers.iter().find(|l| l.layer == layer)
    }

    /// A report with every layer off (the policy is [`SandboxPolicy::Off`]).
    pub(crate) fn off() -> SandboxReport {
        SandboxReport {
            policy: SandboxPolicy::Off,
            layers: SandboxLayer::ALL
                .iter()
                .map(|&layer| LayerStatus {
                    layer,
                    active: false,
                    reason: "the sandbox policy is Off".to_owned(),
                })
                .collect(),
        }
    }

    /// Reads the runner's report (`{"layer": null | "reason"}`); a layer it does not name is
    /// missing.
    pub(crate) fn from_runner(policy: SandboxPolicy, value: Option<&Value>) -> SandboxReport {
        let layers = SandboxLayer::ALL
            .iter()
            .map(|&layer| {
                let entry = value.and_then(|v| v.get(layer.code()));
                match entry {
                    Some(Value::Null) => LayerStatus {
                        layer,
                        active: true,
                        reason: String::new(),
                    },
                    Some(Value::String(reason)) => LayerStatus {
                        layer,
                        active: false,
                        reason: if layer == SandboxLayer::MemoryAccount {
                            format!("{}; {NOT_COUNTED}", tools_schema::excerpt::cut(reason))
                        } else {
                            tools_schema::excerpt::cut(reason).into_owned()
                        },
                    },
                    _ => LayerStatus {
                        layer,
                        active: false,
                        reason: "the Python runner did not report it".to_owned(),
                    },
                }
            })
            .collect();
        SandboxReport { policy, layers }
    }

    /// The refusal under [`SandboxPolicy::Require`]: each missing layer, why, and what allows it.
    pub(crate) fn refusal(&self) -> String {
        let mut out = String::from(
            "the Python sandbox is required (SandboxPolicy::Require) but these layers are not \
             available here:",
        );
        for status in self.layers.iter().filter(|l| !l.active) {
            out.push_str(&format!(
                "\n- {}: {}; needs {}",
                status.layer,
                status.reason,
                status.layer.requirement()
            ));
        }
        out.push_str(
            "\nUse SandboxPolicy::BestEffort to run with what is available, or \
             SandboxPolicy::Off for trusted programs.",
        );
        out
    }
}

/// The failure of a run whose process could not set up a layer under
/// [`SandboxPolicy::Require`] (`message` is the runner's `layer: reason`).
pub(crate) fn child_refusal(message: &str) -> String {
    let (code, reason) = message.split_once(": ").unwrap_or((message, ""));
    match SandboxLayer::ALL.iter().find(|l| l.code() == code) {
        Some(&layer) => SandboxReport {
            policy: SandboxPolicy::Require,
            layers: vec![LayerStatus {
                layer,
                active: false,
                reason: tools_schema::excerpt::cut(reason).into_owned(),
            }],
        }
        .refusal(),
        None => format!(
            "the Python sandbox could not be set up in the run's process: {}",
            tools_schema::excerpt::cut(message)
        ),
    }
}

impl fmt::Display for SandboxReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Python sandbox ({}):", self.policy.code())?;
        for status in &self.layers {
            if status.active {
                write!(f, "\n  {:<18} active", status.layer.code())?;
            } else {
                write!(
                    f,
                    "\n  {:<18} MISSING: {}",
                    status.layer.code(),
                    status.reason
                )?;
            }
        }
        Ok(())
    }
}

/// The sandbox settings handed to the runner (its second argument, as JSON).
pub(crate) fn runner_config(policy: SandboxPolicy, skip: &[SandboxLayer]) -> String {
    let filter = seccomp_filter().map(|program| {
        let mut hex = String::with_capacity(program.len() * 2);
        for byte in program {
            hex.push_str(&format!("{byte:02x}"));
        }
        hex
    });
    serde_json::json!({
        "sandbox": {
            "policy": policy.code(),
            "skip": skip.iter().map(|l| l.code()).collect::<Vec<_>>(),
            "seccomp": filter.unwrap_or_default(),
            "nproc": PROCESS_LIMIT,
            "tmp_bytes": TMP_BYTES,
            "tmp_inodes": TMP_INODES,
            "shm_bytes": SHM_BYTES,
            "pivot_root": pivot_root_number(),
            "clone": clone_number(),
            "clone3": clone3_number(),
        }
    })
    .to_string()
}

fn pivot_root_number() -> Option<i64> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        Some(libc::SYS_pivot_root)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

/// The `clone` system call's number, for the zygote's clone of a run's first process into a
/// PID namespace of its own (`runner/70_sandbox.py` `clone_pid_namespace`: flags first and every
/// other argument 0, which is the same call whatever order the architecture takes them in).
fn clone_number() -> Option<i64> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        Some(libc::SYS_clone)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

/// The `clone3` system call's number, for the zygote's clone of a run's first process straight
/// into its cgroup where the account is cgroup v2 (`CLONE_INTO_CGROUP`).
fn clone3_number() -> Option<i64> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        Some(libc::SYS_clone3)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

// Classic BPF as seccomp runs it.
const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const BPF_JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const EPERM: u32 = 1;
const ENOSYS: u32 = 38;
/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of the first argument (little-endian).
const ARG0_LOW: u32 = 16;
/// Every `CLONE_NEW*` flag (and `CLONE_NEWTIME`): a `clone` asking for any is refused.
const CLONE_NAMESPACES: u32 = 0x0000_0080
    | 0x0002_0000
    | 0x0200_0000
    | 0x0400_0000
    | 0x0800_0000
    | 0x1000_0000
    | 0x2000_0000
    | 0x4000_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// The system calls the filter refuses with `EPERM`: new sockets (the protocol's socket is
/// inherited; `socketpair` stays, asyncio needs it), other processes' memory, mounts, kernel
/// modules and kexec, keys, BPF, perf events, namespaces, io_uring (whose operations bypass
/// seccomp), file handles (open_by_handle_at reaches any file of a mount), userfaultfd, swap,
/// reboot, the kernel log and accounting.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn refused() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_socket,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_reboot,
        libc::SYS_syslog,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_personality,
        libc::SYS_pidfd_getfd,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_iopl,
        libc::SYS_ioperm,
        libc::SYS_modify_ldt,
        libc::SYS_uselib,
    ]);
    calls
}

fn op(code: u16, jt: u8, jf: u8, k: u32) -> [u8; 8] {
    let mut out = [0u8; 8];
    out[0..2].copy_from_slice(&code.to_ne_bytes());
    out[2] = jt;
    out[3] = jf;
    out[4..8].copy_from_slice(&k.to_ne_bytes());
    out
}

/// The seccomp filter as `struct sock_filter` bytes, or `None` on an architecture it does not
/// know. A system call from another architecture's table (x32, or 32-bit calls on a 64-bit
/// kernel) kills the process; refused calls fail with `EPERM`; `clone` with a namespace flag
/// fails with `EPERM`; `clone3` fails with `ENOSYS` (its flags are out of a filter's reach,
/// and the C library then falls back to `clone`); everything else is allowed.
pub(crate) fn seccomp_filter() -> Option<Vec<u8>> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let mut program: Vec<[u8; 8]> = vec![
            op(BPF_LD_W_ABS, 0, 0, ARCH),
            op(BPF_JEQ_K, 1, 0, AUDIT_ARCH),
            op(BPF_RET_K, 0, 0, RET_KILL_PROCESS),
            op(BPF_LD_W_ABS, 0, 0, NR),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            // x32 system calls (bit 30) share the architecture tag: refuse them all.
            program.push(op(BPF_JGE_K, 0, 1, 0x4000_0000));
            program.push(op(BPF_RET_K, 0, 0, RET_ERRNO | EPERM));
        }
        for call in refused() {
            let nr = u32::try_from(call).ok()?;
            program.push(op(BPF_JEQ_K, 0, 1, nr));
            program.push(op(BPF_RET_K, 0, 0, RET_ERRNO | EPERM));
        }
        let clone3 = u32::try_from(libc::SYS_clone3).ok()?;
        program.push(op(BPF_JEQ_K, 0, 1, clone3));
        program.push(op(BPF_RET_K, 0, 0, RET_ERRNO | ENOSYS));
        let clone = u32::try_from(libc::SYS_clone).ok()?;
        program.push(op(BPF_JEQ_K, 0, 3, clone));
        program.push(op(BPF_LD_W_ABS, 0, 0, ARG0_LOW));
        program.push(op(BPF_JSET_K, 0, 1, CLONE_NAMESPACES));
        program.push(op(BPF_RET_K, 0, 0, RET_ERRNO | EPERM));
        program.push(op(BPF_RET_K, 0, 0, RET_ALLOW));
        Some(program.concat())
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_checks_the_architecture_first_and_allows_last() {
        let program = seccomp_filter().unwrap_or_default();
        assert_eq!(program.len() % 8, 0);
        assert!(program.len() / 8 < 200, "a filter fits u16 and stays short");
        assert_eq!(&program[..8], &op(BPF_LD_W_ABS, 0, 0, ARCH));
        assert_eq!(
            &program[program.len() - 8..],
            &op(BPF_RET_K, 0, 0, RET_ALLOW)
        );
    }

    #[test]
    fn a_report_without_a_layer_names_it_and_its_setting() {
        let value = serde_json::json!({"user_namespace": null, "landlock": "ENOSYS"});
        let report = SandboxReport::from_runner(SandboxPolicy::Require, Some(&value));
        assert!(
            report
                .layer(SandboxLayer::UserNamespace)
                .is_some_and(|l| l.active)
        );
        assert!(!report.is_complete());
        let refusal = report.refusal();
        assert!(refusal.contains("- landlock: ENOSYS; needs Landlock: a kernel >= 5.13"));
        assert!(refusal.contains("- seccomp: the Python runner did not report it"));
    }
}
