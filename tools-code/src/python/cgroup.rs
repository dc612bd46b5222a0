//! The memory account of a run: one cgroup per run child, made and removed by the host.
//!
//! `RLIMIT_AS` bounds one process's address space: a program that forks multiplies it, and a
//! `memfd`, `tmpfs` pages and the kernel memory of its files are not address space at all. A
//! cgroup counts all of it for every process in it. The host makes one cgroup per run child
//! (per spare) before the child is forked, with a process limit and no swap, and hands its
//! `cgroup.procs` (one per hierarchy) to the child with the fork request; the child writes `0`
//! there as its very first step (it joins), so it and everything its program starts are born
//! inside. The kernel checks such a write against the credentials of whoever opened the file
//! (the host). When a run takes the spare, the host reads what the spare already holds and sets
//! the memory limit to that plus the run's `memory_bytes` (as `RLIMIT_AS` is set to the current
//! address space plus `memory_bytes`), so a spare is never killed by a limit below what it
//! holds. When the run is over the host removes the cgroup, retrying in the background while
//! its processes are still dying.
//!
//! # Which hierarchy
//!
//! Detected once per host process, from `/proc/self/cgroup` and `/proc/self/mountinfo`:
//!
//! - **cgroup v2** (most current distributions) when the unified hierarchy offers the memory
//!   and pids controllers to the host's cgroup. Run cgroups are made in the host's own cgroup
//!   when its `cgroup.subtree_control` already gives them memory and pids (the host sits in the
//!   root cgroup, or someone arranged it), else beside it, in its parent, when the parent gives
//!   its children both and was delegated to the host (systemd marks a delegated cgroup with the
//!   `trusted.delegate` or `user.delegate` attribute; or the parent belongs to the host's
//!   non-root user): the layout of `Delegate=memory pids` with `DelegateSubgroup=main`, where
//!   the host's processes sit in the `main` leaf. cgroup v2 gives controllers only to the
//!   children of a cgroup without processes of its own, so the host's cgroup itself can rarely
//!   serve. Files: `memory.max`, `memory.swap.max` = 0, `memory.oom.group` = 1 (an
//!   out-of-memory kill ends the whole run), `pids.max`, `memory.current`, `memory.events`
//!   (`oom_kill`).
//! - **cgroup v1** otherwise, when the `memory` and `pids` controllers are mounted: run cgroups
//!   are made in the host's own cgroup of each. That needs root (or a hierarchy owned by the
//!   host's user). Files: `memory.limit_in_bytes` and then `memory.memsw.limit_in_bytes` (the
//!   same value: no swap; the second must not be below the first, so the order matters; it is
//!   absent when the kernel does not account swap, and then swap is not counted),
//!   `pids.max`, `memory.usage_in_bytes`, `memory.oom_control` (`oom_kill`). On current kernels
//!   v1 charges kernel memory (slab, inodes, dentries) to the same counter as user memory.
//!
//! What was found on the project's machines (Linux 6.18, as root): the v1 `memory` and `pids`
//! controllers mounted writable under `/sys/fs/cgroup/{memory,pids}` beside an empty v2 mount
//! (no controller), swap accounting on (`memory.memsw.*` present). There, 200,000 empty files
//! charged about 50 MiB of kernel memory to the creating cgroup's `memory.usage_in_bytes`,
//! and a 512 MiB `memfd` in a cgroup limited to 64 MiB was ended by the cgroup's OOM killer.
//!
//! # What it costs
//!
//! Per spare, off the run's critical path: two `mkdir`s, a `pids.max` write and five opens (the
//! two `cgroup.procs`, the usage and limit files) in the zygote's control thread (0.15-0.25 ms
//! here), the child's join, and the removal (by a thread of its own, a batch task). A join
//! is a cgroup migration, which takes the kernel's `cgroup_threadgroup_rwsem` for writing:
//! without the hierarchy's `favordynmods` mount option (Linux 6.0+) that waits for an RCU grace
//! period whenever no migration happened during the previous one. Measured here: 0.03-0.05 ms
//! when spares are made less than about 5 ms apart, about 15 ms when they are 30 ms or more
//! apart; while it waits, every `fork` and thread creation on the machine waits too. So a run
//! that comes right after another may wait for its spare to finish joining (see the
//! `code_runtime` bench); mounting the hierarchy with `favordynmods` makes joins cheap. On the
//! critical path: one read and one or two writes on files opened when the cgroup was made (the
//! limit, 0.02-0.04 ms).
//!
//! Names: `tools-code-<host pid>-<runtime>-<n>`. A host process that exits (or crashes) while
//! the processes of its runs or spares are still alive cannot remove their cgroups (a cgroup
//! with processes cannot be removed, and the background remover dies with the host): it leaves
//! them behind, empty once the zygote is gone. The next host process to detect the hierarchy
//! removes those of hosts that no longer run, once they are more than a minute old. Dropping
//! the runtime before exiting, and giving the remover a moment, leaves nothing.

use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{OnceLock, mpsc};
use std::time::{Duration, Instant};

use super::sandbox::PROCESS_LIMIT;

/// Where this machine lets the host make run cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Hierarchy {
    /// cgroup v2: run cgroups are made in `parent`, which gives its children the memory and
    /// pids controllers.
    V2 {
        /// The cgroup the run cgroups are made in.
        parent: PathBuf,
    },
    /// cgroup v1: run cgroups are made in the host's own cgroup of the `memory` and `pids`
    /// hierarchies.
    V1 {
        /// The host's cgroup in the `memory` hierarchy.
        memory: PathBuf,
        /// The host's cgroup in the `pids` hierarchy.
        pids: PathBuf,
        /// Whether the kernel accounts swap (`memory.memsw.*` exists).
        swap: bool,
    },
}

/// The prefix of every run cgroup's name.
const PREFIX: &str = "tools-code-";

/// The hierarchy of this host process, detected once (or why there is none).
pub(crate) fn hierarchy() -> Result<Hierarchy, String> {
    static FOUND: OnceLock<Result<Hierarchy, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let read = |path: &str| {
                std::fs::read_to_string(path)
                    .map_err(|e| format!("no cgroup can be had: cannot read {path}: {e}"))
            };
            let found = find(&read("/proc/self/cgroup")?, &read("/proc/self/mountinfo")?);
            if let Ok(hierarchy) = &found {
                remove_stale(hierarchy);
            }
            found
        })
        .clone()
}

/// Finds the hierarchy from the text of `/proc/self/cgroup` and `/proc/self/mountinfo`: cgroup
/// v2 where it offers memory and pids, else v1 with both controllers mounted.
pub(crate) fn find(cgroup: &str, mountinfo: &str) -> Result<Hierarchy, String> {
    let mounts = parse_mounts(mountinfo);
    let mut v1_memory = None;
    let mut v1_pids = None;
    let mut unified = None;
    for line in cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            unified = Some(path.to_owned());
            continue;
        }
        for controller in controllers.split(',') {
            match controller {
                "memory" => v1_memory = Some(path.to_owned()),
                "pids" => v1_pids = Some(path.to_owned()),
                _ => {}
            }
        }
    }
    let mut v2_reason = None;
    if let Some(path) = unified
        && let Some(own) = locate(&mounts, |m| m.fstype == "cgroup2", &path)
    {
        let offered = controllers(&own.join("cgroup.controllers"));
        if has_memory_and_pids(&offered) {
            return v2_parent(&own);
        }
        v2_reason = Some(format!(
            "the cgroup v2 hierarchy does not offer the memory and pids controllers to {} \
             (its cgroup.controllers: {:?})",
            own.display(),
            offered.join(" ")
        ));
    }
    let v1 = |controller: &str, path: &Option<String>| {
        path.as_ref().and_then(|path| {
            locate(
                &mounts,
                |m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == controller),
                path,
            )
        })
    };
    match (v1("memory", &v1_memory), v1("pids", &v1_pids)) {
        (Some(memory), Some(pids)) => {
            let swap = memory.join("memory.memsw.limit_in_bytes").exists();
            Ok(Hierarchy::V1 { memory, pids, swap })
        }
        (memory, _) => {
            let missing = if memory.is_none() { "memory" } else { "pids" };
            Err(match v2_reason {
                Some(reason) => {
                    format!("{reason}, and no cgroup v1 {missing} hierarchy is mounted")
                }
                None => format!(
                    "no cgroup v2 hierarchy and no cgroup v1 {missing} hierarchy is mounted"
                ),
            })
        }
    }
}

/// The cgroup v2 parent of run cgroups, given the host's own cgroup `own`.
fn v2_parent(own: &Path) -> Result<Hierarchy, String> {
    let gives = |dir: &Path| has_memory_and_pids(&controllers(&dir.join("cgroup.subtree_control")));
    if gives(own) {
        return Ok(Hierarchy::V2 {
            parent: own.to_path_buf(),
        });
    }
    if let Some(parent) = own.parent()
        && parent.join("cgroup.procs").exists()
        && gives(parent)
        && delegated(parent)
    {
        return Ok(Hierarchy::V2 {
            parent: parent.to_path_buf(),
        });
    }
    Err(format!(
        "the host's cgroup {} does not give its children the memory and pids controllers \
         (cgroup v2 gives controllers only to the children of a cgroup without processes), and \
         its parent is not a cgroup delegated to the host that does: run the host in a leaf of a \
         delegated cgroup (systemd: Delegate=memory pids with DelegateSubgroup=)",
        own.display()
    ))
}

/// Whether the cgroup `dir` was delegated to this process: systemd's mark, or owned by the
/// host's (non-root) user.
fn delegated(dir: &Path) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) {
            for name in [c"trusted.delegate", c"user.delegate"] {
                let mut value = [0u8; 8];
                // SAFETY: valid C strings and a buffer of the given length.
                let n = unsafe {
                    libc::getxattr(
                        path.as_ptr(),
                        name.as_ptr(),
                        value.as_mut_ptr().cast(),
                        value.len(),
                    )
                };
                if n == 1 && value[0] == b'1' {
                    return true;
                }
            }
        }
    }
    // SAFETY: plain syscall without arguments.
    let euid = unsafe { libc::geteuid() };
    euid != 0 && std::fs::metadata(dir).is_ok_and(|m| m.uid() == euid)
}

fn has_memory_and_pids(controllers: &[String]) -> bool {
    ["memory", "pids"]
        .iter()
        .all(|wanted| controllers.iter().any(|c| c == wanted))
}

/// The words of a `cgroup.controllers` or `cgroup.subtree_control` file (none if unreadable).
fn controllers(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// One cgroup file system mount.
struct Mount {
    /// The cgroup the mount shows at its mount point.
    root: String,
    point: PathBuf,
    fstype: String,
    options: String,
}

fn parse_mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let fstype = right.next()?;
            let _source = right.next()?;
            let options = right.next().unwrap_or_default();
            Some(Mount {
                root: unescape(fields.get(3)?),
                point: PathBuf::from(unescape(fields.get(4)?)),
                fstype: fstype.to_owned(),
                options: options.to_owned(),
            })
        })
        .collect()
}

/// Undoes mountinfo's octal escapes (`\040` for a space, ...).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(code) = bytes
                .get(i + 1..i + 4)
                .and_then(|d| std::str::from_utf8(d).ok())
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        {
            out.push(code);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The directory of cgroup `path` in the first mount `wanted` accepts that shows it.
fn locate(mounts: &[Mount], wanted: impl Fn(&Mount) -> bool, path: &str) -> Option<PathBuf> {
    mounts.iter().filter(|m| wanted(m)).find_map(|mount| {
        let root = mount.root.trim_end_matches('/');
        let rest = path.strip_prefix(root)?;
        if !(rest.is_empty() || rest.starts_with('/')) || rest.split('/').any(|p| p == "..") {
            return None;
        }
        let dir = mount.point.join(rest.trim_start_matches('/'));
        dir.join("cgroup.procs").exists().then_some(dir)
    })
}

/// Removes run cgroups of host processes that no longer run (a crash left them behind), made
/// more than a minute ago (a host in another PID namespace that shares the hierarchy may look
/// gone from here: a cgroup it is about to hand to a child is young, one with processes cannot
/// be removed).
fn remove_stale(hierarchy: &Hierarchy) {
    let parents = match hierarchy {
        Hierarchy::V2 { parent } => vec![parent.clone()],
        Hierarchy::V1 { memory, pids, .. } => vec![memory.clone(), pids.clone()],
    };
    for parent in parents {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(PREFIX))
                .and_then(|n| n.split('-').next())
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age > Duration::from_secs(60)));
            if old && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

/// Why a memory limit could not be set on a run's cgroup.
#[derive(Debug)]
pub(crate) struct LimitError {
    /// The file that refused it (or could not be read).
    pub(crate) file: PathBuf,
    /// The value written, if it got that far.
    pub(crate) value: Option<u64>,
    pub(crate) error: io::Error,
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.value {
            Some(value) => write!(
                f,
                "writing {value} to {} failed: {}",
                self.file.display(),
                self.error
            ),
            None => write!(f, "reading {} failed: {}", self.file.display(), self.error),
        }
    }
}

/// The run cgroups of one runtime: where they are made and how they are named.
#[derive(Debug)]
pub(crate) struct Account {
    hierarchy: Hierarchy,
    /// Under `SandboxPolicy::Require`: a run without its cgroup does not start.
    strict: bool,
    /// `tools-code-<host pid>-<runtime>-`.
    prefix: String,
    next: AtomicU64,
}

impl Account {
    /// The account of a new runtime on `hierarchy`; `strict` under `SandboxPolicy::Require`.
    pub(crate) fn new(hierarchy: Hierarchy, strict: bool) -> Account {
        static RUNTIMES: AtomicU64 = AtomicU64::new(0);
        let runtime = RUNTIMES.fetch_add(1, Ordering::Relaxed);
        Account {
            hierarchy,
            strict,
            prefix: format!("{PREFIX}{}-{runtime}-", std::process::id()),
            next: AtomicU64::new(0),
        }
    }

    /// The cgroup of one run child, or, when it cannot be made and the policy allows that, none
    /// (with a warning: the run has only its per-process limits).
    pub(crate) fn for_run(&self) -> Result<Option<RunCgroup>, String> {
        match self.create() {
            Ok(cgroup) => Ok(Some(cgroup)),
            Err(reason) if self.strict => Err(reason),
            Err(reason) => {
                tracing::warn!(
                    "a Python run goes without its memory account ({reason}); {}",
                    super::sandbox::NOT_COUNTED
                );
                Ok(None)
            }
        }
    }

    /// Makes the cgroup of one run child: its directories (one per hierarchy), its process
    /// limit and no swap, and opens its `cgroup.procs` for the child to join.
    pub(crate) fn create(&self) -> Result<RunCgroup, String> {
        let name = format!(
            "{}{}",
            self.prefix,
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        let (version, dirs) = match &self.hierarchy {
            Hierarchy::V2 { parent } => (Version::V2, vec![parent.join(&name)]),
            Hierarchy::V1 { memory, pids, swap } => (
                Version::V1 { swap: *swap },
                vec![memory.join(&name), pids.join(&name)],
            ),
        };
        let mut cgroup = RunCgroup {
            version,
            dirs: Vec::with_capacity(dirs.len()),
            procs: Vec::new(),
            dir: None,
            memory: None,
        };
        for dir in dirs {
            std::fs::create_dir(&dir)
                .map_err(|e| format!("cannot create the run's cgroup {}: {e}", dir.display()))?;
            // Pushed once made, so that a later failure removes it (on drop).
            cgroup.dirs.push(dir);
        }
        cgroup.configure()?;
        for dir in &cgroup.dirs {
            let path = dir.join("cgroup.procs");
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
            cgroup.procs.push(file.into());
        }
        if cgroup.version == Version::V2 {
            // Best effort: without it the child joins through `cgroup.procs`.
            cgroup.dir = std::fs::File::open(&cgroup.dirs[0]).ok().map(OwnedFd::from);
        }
        // Opened now, so that setting the limit when a run takes the spare is one read and one
        // or two writes (if this fails, they are opened then).
        cgroup.memory = cgroup.open_memory_files().ok();
        Ok(cgroup)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1 { swap: bool },
    V2,
}

/// The cgroup of one run child (its directory in each hierarchy). Dropped, it is removed in
/// the background once its processes are gone.
#[derive(Debug)]
pub(crate) struct RunCgroup {
    version: Version,
    /// v2: one directory; v1: the `memory` one, then the `pids` one.
    dirs: Vec<PathBuf>,
    /// The open `cgroup.procs` of each, until handed to the child.
    procs: Vec<OwnedFd>,
    /// v2: its directory, open until handed to the zygote, which clones the run's first
    /// process straight into it (`CLONE_INTO_CGROUP`) where it can, rather than have it
    /// migrate through `cgroup.procs`.
    dir: Option<OwnedFd>,
    /// Its memory usage and limit files, opened when it was made.
    memory: Option<MemoryFiles>,
}

/// The open files a run's memory limit is read from and written to
/// ([`RunCgroup::memory_paths`]).
#[derive(Debug)]
struct MemoryFiles {
    usage: std::fs::File,
    limits: Vec<std::fs::File>,
}

impl RunCgroup {
    /// Its settings that do not depend on the run: the process limit, no swap and (v2) one
    /// out-of-memory kill ending every process of the run.
    fn configure(&self) -> Result<(), String> {
        let limit = PROCESS_LIMIT.to_string();
        // (file, value, whether the kernel may lack it): `memory.swap.max` is absent when the
        // kernel does not account swap (then swap is not counted), `memory.oom.group` before
        // Linux 4.19.
        let settings: Vec<(PathBuf, &str, bool)> = match self.version {
            Version::V2 => vec![
                (self.file("pids.max"), &limit, false),
                (self.file("memory.swap.max"), "0", true),
                (self.file("memory.oom.group"), "1", true),
            ],
            Version::V1 { .. } => vec![(self.dirs[1].join("pids.max"), &limit, false)],
        };
        for (path, value, optional) in settings {
            if optional && !path.exists() {
                continue;
            }
            write_file(&path, value)
                .map_err(|e| format!("cannot write {value} to {}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// A file of the memory cgroup.
    fn file(&self, name: &str) -> PathBuf {
        self.dirs[0].join(name)
    }

    /// Takes the open `cgroup.procs` files, for the child to join.
    pub(crate) fn take_procs(&mut self) -> Vec<OwnedFd> {
        std::mem::take(&mut self.procs)
    }

    /// Takes the open directory of a v2 cgroup, for the zygote to clone the run's first
    /// process into (none under v1, where a process can only migrate).
    pub(crate) fn take_dir(&mut self) -> Option<OwnedFd> {
        self.dir.take()
    }

    /// The file whose number is what the cgroup holds, and the limit files in the order they
    /// are written (memsw must not be below the memory limit: the memory limit first).
    fn memory_paths(&self) -> (PathBuf, Vec<PathBuf>) {
        let usage = self.file(match self.version {
            Version::V2 => "memory.current",
            Version::V1 { .. } => "memory.usage_in_bytes",
        });
        let names: &[&str] = match self.version {
            Version::V2 => &["memory.max"],
            Version::V1 { swap: true } => &["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"],
            Version::V1 { swap: false } => &["memory.limit_in_bytes"],
        };
        (usage, names.iter().map(|name| self.file(name)).collect())
    }

    /// Opens the files [`RunCgroup::limit_memory`] reads and writes.
    fn open_memory_files(&self) -> io::Result<MemoryFiles> {
        let (usage, limits) = self.memory_paths();
        let open = |path: &Path, write: bool| {
            std::fs::OpenOptions::new()
                .read(!write)
                .write(write)
                .open(path)
        };
        Ok(MemoryFiles {
            usage: open(&usage, false)?,
            limits: limits
                .iter()
                .map(|path| open(path, true))
                .collect::<io::Result<_>>()?,
        })
    }

    /// Sets the memory limit to what the cgroup holds now plus `bytes` (rounded up to whole
    /// pages), with no swap on top; returns the limit. One read and one or two writes, on files
    /// opened when the cgroup was made (else opened now).
    pub(crate) fn limit_memory(&self, bytes: usize) -> Result<u64, LimitError> {
        use std::os::unix::fs::FileExt;
        let (usage_path, limit_paths) = self.memory_paths();
        let usage = match &self.memory {
            Some(files) => read_u64_at(&files.usage),
            None => std::fs::File::open(&usage_path).and_then(|file| read_u64_at(&file)),
        }
        .map_err(|error| LimitError {
            file: usage_path,
            value: None,
            error,
        })?;
        let page = 4096u64;
        let limit = usage
            .saturating_add(u64::try_from(bytes).unwrap_or(u64::MAX))
            .div_ceil(page)
            .saturating_mul(page);
        let text = limit.to_string();
        for (i, path) in limit_paths.into_iter().enumerate() {
            let write = |file: &std::fs::File| -> io::Result<()> {
                // Cgroup files take each write whole, wherever it is written; plain files (the
                // unit tests') need it alone at the start.
                file.set_len(0)?;
                match file.write_at(text.as_bytes(), 0)? {
                    n if n == text.len() => Ok(()),
                    _ => Err(io::Error::new(io::ErrorKind::WriteZero, "short write")),
                }
            };
            let written = match self.memory.as_ref().and_then(|files| files.limits.get(i)) {
                Some(file) => write(file),
                None => std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .and_then(|file| write(&file)),
            };
            written.map_err(|error| LimitError {
                file: path,
                value: Some(limit),
                error,
            })?;
        }
        Ok(limit)
    }

    /// How many processes the kernel's out-of-memory killer ended in this cgroup (`None` if
    /// that cannot be read).
    pub(crate) fn oom_kills(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.file(match self.version {
            Version::V2 => "memory.events",
            Version::V1 { .. } => "memory.oom_control",
        }))
        .ok()?;
        text.lines().find_map(|line| {
            line.strip_prefix("oom_kill ")
                .and_then(|n| n.trim().parse().ok())
        })
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        self.procs.clear();
        remove_later(std::mem::take(&mut self.dirs));
    }
}

/// Writes `value` to a cgroup file (truncating, as a shell's `>` does: cgroup files ignore it,
/// the unit tests' plain files need it).
fn write_file(path: &Path, value: &str) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    file.write_all(value.as_bytes())
}

/// The number in an open cgroup file (read again from its start).
fn read_u64_at(file: &std::fs::File) -> io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let mut buffer = [0u8; 64];
    let n = file.read_at(&mut buffer, 0)?;
    let text = std::str::from_utf8(&buffer[..n])
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"))?;
    parse_u64(text)
}

fn parse_u64(text: &str) -> io::Result<u64> {
    let text = text.trim();
    if text == "max" {
        return Ok(u64::MAX);
    }
    text.parse().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not a number: {text:?}"),
        )
    })
}

/// How long the remover keeps trying to remove a cgroup whose processes do not go.
const REMOVE_FOR: Duration = Duration::from_secs(600);

/// Hands `dirs` to the remover thread, which removes each once its processes are gone (a
/// cgroup with processes cannot be removed; the zygote reaps a released child a little after
/// the run returned). Off the run's critical path: one channel send.
fn remove_later(dirs: Vec<PathBuf>) {
    if dirs.is_empty() {
        return;
    }
    static REMOVER: OnceLock<Option<std::sync::Mutex<mpsc::Sender<Vec<PathBuf>>>>> =
        OnceLock::new();
    let remover = REMOVER.get_or_init(|| {
        let (sender, queue) = mpsc::channel::<Vec<PathBuf>>();
        std::thread::Builder::new()
            .name("code-py-cgroups".to_owned())
            .spawn(move || {
                super::become_batch();
                remover(&queue);
            })
            .ok()
            .map(|_| std::sync::Mutex::new(sender))
    });
    let sent = remover.as_ref().is_some_and(|sender| {
        sender
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .send(dirs.clone())
            .is_ok()
    });
    if !sent {
        for dir in dirs {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Removes the cgroups it is handed, retrying those that still hold processes: every 2 ms at
/// first, backing off to every 200 ms.
fn remover(queue: &mpsc::Receiver<Vec<PathBuf>>) {
    let mut pending: Vec<(PathBuf, Instant)> = Vec::new();
    let mut wait = Duration::from_millis(2);
    loop {
        let received = if pending.is_empty() {
            queue
                .recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected)
        } else {
            queue.recv_timeout(wait)
        };
        match received {
            Ok(dirs) => {
                let now = Instant::now();
                pending.extend(dirs.into_iter().map(|d| (d, now)));
                wait = Duration::from_millis(2);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                wait = (wait * 2).min(Duration::from_millis(200));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) if pending.is_empty() => return,
            Err(mpsc::RecvTimeoutError::Disconnected) => std::thread::sleep(wait),
        }
        pending.retain(|(dir, since)| match std::fs::remove_dir(dir) {
            Ok(()) => false,
            Err(error) if error.kind() == io::ErrorKind::NotFound => false,
            Err(error) => {
                if since.elapsed() < REMOVE_FOR {
                    return true;
                }
                tracing::warn!(
                    cgroup = %dir.display(),
                    "a run's cgroup still cannot be removed after {} s ({error}); left behind",
                    REMOVE_FOR.as_secs()
                );
                false
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory tree under the system's temporary directory, removed on drop.
    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str) -> Tree {
            let dir =
                std::env::temp_dir().join(format!("cgroup-test-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Tree(dir)
        }

        fn file(&self, path: &str, text: &str) {
            let path = self.0.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn mountinfo(point: &Path, fstype: &str, options: &str) -> String {
        format!(
            "35 31 0:32 / {} rw,relatime - {fstype} {fstype} rw{options}\n",
            point.display()
        )
    }

    #[test]
    fn v1_is_found_from_the_memory_and_pids_lines() {
        let tree = Tree::new("v1");
        tree.file("memory/host/a/cgroup.procs", "");
        tree.file("memory/host/a/memory.memsw.limit_in_bytes", "");
        tree.file("pids/cgroup.procs", "");
        let info = mountinfo(&tree.0.join("memory"), "cgroup", ",memory")
            + &mountinfo(&tree.0.join("pids"), "cgroup", ",pids")
            + &mountinfo(&tree.0.join("unified"), "cgroup2", "");
        let found = find("8:pids:/\n4:memory:/host/a\n0::/\n", &info).unwrap();
        assert_eq!(
            found,
            Hierarchy::V1 {
                memory: tree.0.join("memory/host/a"),
                pids: tree.0.join("pids"),
                swap: true
            }
        );
        // Without the pids controller there is no account, and the reason says so.
        let error = find("4:memory:/host/a\n", &info).unwrap_err();
        assert_eq!(
            error,
            "no cgroup v2 hierarchy and no cgroup v1 pids hierarchy is mounted"
        );
    }

    #[test]
    fn v2_is_preferred_where_it_offers_memory_and_pids() {
        let tree = Tree::new("v2");
        tree.file("cg/cgroup.procs", "");
        tree.file("cg/svc/cgroup.procs", "");
        tree.file("cg/svc/cgroup.controllers", "cpu memory pids\n");
        tree.file("cg/svc/cgroup.subtree_control", "memory pids\n");
        let info = mountinfo(&tree.0.join("cg"), "cgroup2", "");
        assert_eq!(
            find("0::/svc\n", &info).unwrap(),
            Hierarchy::V2 {
                parent: tree.0.join("cg/svc")
            }
        );
        // The host's cgroup holds processes, so it gives no controller; its parent does but
        // was not delegated (no mark, owned by root): no account, with the way to get one.
        tree.file("cg/svc/main/cgroup.procs", "");
        tree.file("cg/svc/main/cgroup.controllers", "memory pids\n");
        tree.file("cg/svc/main/cgroup.subtree_control", "");
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } == 0 {
            let error = find("0::/svc/main\n", &info).unwrap_err();
            assert!(error.contains("DelegateSubgroup="), "{error}");
        }
        // A v2 hierarchy without the controllers: v1 is looked for, and the reason names both.
        tree.file("cg/svc/cgroup.controllers", "cpu io\n");
        let error = find("0::/svc\n", &info).unwrap_err();
        assert!(
            error.starts_with("the cgroup v2 hierarchy does not offer the memory and pids")
                && error.ends_with("and no cgroup v1 memory hierarchy is mounted"),
            "{error}"
        );
    }

    #[test]
    fn a_cgroup_outside_the_mount_is_not_located() {
        let tree = Tree::new("outside");
        tree.file("cg/cgroup.procs", "");
        let info = format!(
            "35 31 0:32 /inner {} rw - cgroup2 cgroup2 rw\n",
            tree.0.join("cg").display()
        );
        let mounts = parse_mounts(&info);
        assert_eq!(locate(&mounts, |_| true, "/inner"), Some(tree.0.join("cg")));
        assert_eq!(locate(&mounts, |_| true, "/other"), None);
        assert_eq!(locate(&mounts, |_| true, "/inner/../x"), None);
        assert_eq!(unescape(r"/a\040b"), "/a b");
    }

    #[test]
    fn v2_limits_are_written_to_their_files() {
        let tree = Tree::new("v2-files");
        for name in [
            "memory.max",
            "memory.swap.max",
            "memory.oom.group",
            "pids.max",
        ] {
            tree.file(&format!("run/{name}"), "max\n");
        }
        tree.file("run/memory.current", "1048576\n");
        tree.file(
            "run/memory.events",
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n",
        );
        let cgroup = RunCgroup {
            version: Version::V2,
            dirs: vec![tree.0.join("run")],
            procs: Vec::new(),
            dir: None,
            memory: None,
        };
        cgroup.configure().unwrap();
        let limit = cgroup.limit_memory(32 << 20).unwrap();
        assert_eq!(limit, (1 << 20) + (32 << 20));
        let read = |name: &str| std::fs::read_to_string(tree.0.join("run").join(name)).unwrap();
        assert_eq!(read("memory.max"), limit.to_string());
        assert_eq!(read("memory.swap.max"), "0");
        assert_eq!(read("memory.oom.group"), "1");
        assert_eq!(read("pids.max"), PROCESS_LIMIT.to_string());
        assert_eq!(cgroup.oom_kills(), Some(2));
    }

    #[test]
    fn v1_limits_set_memory_before_memsw_and_read_oom_control() {
        let tree = Tree::new("v1-files");
        for name in ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"] {
            tree.file(&format!("mem/{name}"), "9223372036854771712\n");
        }
        tree.file("mem/memory.usage_in_bytes", "5000\n");
        tree.file(
            "mem/memory.oom_control",
            "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
        );
        tree.file("pids/pids.max", "max\n");
        let cgroup = RunCgroup {
            version: Version::V1 { swap: true },
            dirs: vec![tree.0.join("mem"), tree.0.join("pids")],
            procs: Vec::new(),
            dir: None,
            memory: None,
        };
        cgroup.configure().unwrap();
        // Rounded up to whole pages.
        assert_eq!(cgroup.limit_memory(4096).unwrap(), 12288);
        let read = |name: &str| std::fs::read_to_string(tree.0.join(name)).unwrap();
        assert_eq!(read("mem/memory.limit_in_bytes"), "12288");
        assert_eq!(read("mem/memory.memsw.limit_in_bytes"), "12288");
        assert_eq!(read("pids/pids.max"), PROCESS_LIMIT.to_string());
        assert_eq!(cgroup.oom_kills(), Some(0));
        // A file that cannot be written names itself and the value.
        std::fs::remove_file(tree.0.join("mem/memory.memsw.limit_in_bytes")).unwrap();
        let error = cgroup.limit_memory(4096).unwrap_err().to_string();
        assert!(
            error.starts_with("writing 12288 to ") && error.contains("memory.memsw.limit_in_bytes"),
            "{error}"
        );
    }
}
