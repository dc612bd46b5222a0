//! The demo's workspace: a small folder of fixed files the tools work on, the rule that keeps
//! every path inside it, and a log of when each tool body ran (to show which calls overlapped).

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::DemoError;

/// The file that marks a folder as a demo workspace, so that a later run may clear it.
pub const MARKER: &str = ".tools-demo-workspace";

/// The files a fresh workspace holds, by path, in name order.
pub const FILES: &[(&str, &str)] = &[
    (
        "README.md",
        "# lamp\n\nA tiny library that switches a lamp on and off.\n\nRun `cargo test` to check it.\n",
    ),
    (
        "notes.txt",
        "- the lamp starts off\n- TODO: remember the last state\n",
    ),
    (
        "src/lib.rs",
        "/// A lamp.\npub struct Lamp {\n    pub on: bool,\n}\n\nimpl Lamp {\n    /// Flip the switch.\n    pub fn toggle(&mut self) {\n        self.on = !self.on; // TODO: count the flips\n    }\n}\n",
    ),
];

/// How long a read or a search waits before answering: a stand-in for a slow disk, so that the
/// calls that may overlap visibly do.
pub const LATENCY: Duration = Duration::from_millis(20);

/// Why a path was refused or a file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The path is absolute, empty, or climbs out with `..`.
    #[error(
        "`{path}` is outside the workspace: use a path relative to the workspace root, without `..`"
    )]
    Outside {
        /// The path as given.
        path: String,
    },
    /// The file does not exist.
    #[error("no file at `{path}`")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// Any other I/O failure.
    #[error("`{path}`: {error}")]
    Io {
        /// The path as given.
        path: String,
        /// What went wrong.
        error: std::io::Error,
    },
}

impl WorkspaceError {
    /// The stable code: `OUTSIDE_WORKSPACE`, `NOT_FOUND` or `IO`.
    pub fn code(&self) -> &'static str {
        match self {
            WorkspaceError::Outside { .. } => "OUTSIDE_WORKSPACE",
            WorkspaceError::NotFound { .. } => "NOT_FOUND",
            WorkspaceError::Io { .. } => "IO",
        }
    }

    fn io(path: &str, error: std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::NotFound {
            WorkspaceError::NotFound {
                path: path.to_owned(),
            }
        } else {
            WorkspaceError::Io {
                path: path.to_owned(),
                error,
            }
        }
    }
}

impl tools_runtime::error::ToolFailure for WorkspaceError {
    fn code(&self) -> &str {
        WorkspaceError::code(self)
    }
}

/// When one tool body ran, in the order of a shared counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodySpan {
    /// The call id.
    pub call_id: String,
    /// The counter when the body started.
    pub start: u64,
    /// The counter when it ended.
    pub end: u64,
    /// How long it ran.
    pub took: Duration,
}

/// The shared state of the demo's tools: the root folder and the log of body spans.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    clock: AtomicU64,
    spans: Mutex<Vec<BodySpan>>,
}

/// A body that is running; [`Workspace::finish`] logs it.
#[derive(Debug)]
pub struct Running {
    call_id: String,
    start: u64,
    since: Instant,
}

impl Workspace {
    /// Creates `root` fresh with the [`FILES`]. A folder that exists is cleared only when it is
    /// empty or holds the [`MARKER`] of an earlier run; any other folder is refused.
    ///
    /// # Errors
    ///
    /// [`DemoError::NotAWorkspace`] for a folder this demo did not make, [`DemoError::Io`] when
    /// the files cannot be written.
    pub fn create(root: &Path) -> Result<Workspace, DemoError> {
        let io = |error| DemoError::Io {
            path: root.to_owned(),
            error,
        };
        if root.exists() {
            let empty = std::fs::read_dir(root).map_err(io)?.next().is_none();
            if !empty && !root.join(MARKER).is_file() {
                return Err(DemoError::NotAWorkspace {
                    path: root.to_owned(),
                });
            }
            std::fs::remove_dir_all(root).map_err(io)?;
        }
        std::fs::create_dir_all(root.join("src")).map_err(io)?;
        std::fs::write(
            root.join(MARKER),
            "made by tools-demo; the next run clears this folder\n",
        )
        .map_err(io)?;
        for (path, text) in FILES {
            std::fs::write(root.join(path), text).map_err(io)?;
        }
        Ok(Workspace {
            root: root.to_owned(),
            clock: AtomicU64::new(0),
            spans: Mutex::new(Vec::new()),
        })
    }

    /// The workspace an earlier process made at `root` (see [`create`](Self::create)), as it
    /// is.
    ///
    /// # Errors
    ///
    /// [`DemoError::NotAWorkspace`] for a folder this demo did not make.
    pub fn open(root: &Path) -> Result<Workspace, DemoError> {
        if !root.join(MARKER).is_file() {
            return Err(DemoError::NotAWorkspace {
                path: root.to_owned(),
            });
        }
        Ok(Workspace {
            root: root.to_owned(),
            clock: AtomicU64::new(0),
            spans: Mutex::new(Vec::new()),
        })
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file `path` names, when it stays inside the workspace.
    ///
    /// # Errors
    ///
    /// [`WorkspaceError::Outside`] for an empty or absolute path or one with `..`.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        if outside_problem(path).is_some() {
            return Err(WorkspaceError::Outside {
                path: path.to_owned(),
            });
        }
        Ok(self.root.join(path))
    }

    /// The text of the file at `path`.
    ///
    /// # Errors
    ///
    /// As [`resolve`](Self::resolve), or the file cannot be read.
    pub fn read_text(&self, path: &str) -> Result<String, WorkspaceError> {
        let file = self.resolve(path)?;
        std::fs::read_to_string(file).map_err(|e| WorkspaceError::io(path, e))
    }

    /// The text of the file at `path`, `None` when there is none.
    ///
    /// # Errors
    ///
    /// As [`read_text`](Self::read_text), except for a missing file.
    pub fn read_if_present(&self, path: &str) -> Result<Option<String>, WorkspaceError> {
        match self.read_text(path) {
            Ok(text) => Ok(Some(text)),
            Err(WorkspaceError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Writes `text` to `path`, creating its folders.
    ///
    /// # Errors
    ///
    /// As [`resolve`](Self::resolve), or the file cannot be written.
    pub fn write_text(&self, path: &str, text: &str) -> Result<(), WorkspaceError> {
        let file = self.resolve(path)?;
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(|e| WorkspaceError::io(path, e))?;
        }
        std::fs::write(file, text).map_err(|e| WorkspaceError::io(path, e))
    }

    /// Every file of the workspace (relative paths with `/`, in name order), hidden files and
    /// folders left out.
    ///
    /// # Errors
    ///
    /// When a folder cannot be listed.
    pub fn files(&self) -> Result<Vec<String>, WorkspaceError> {
        let mut out = Vec::new();
        let mut folders = vec![(self.root.clone(), String::new())];
        while let Some((dir, prefix)) = folders.pop() {
            let entries = std::fs::read_dir(&dir).map_err(|e| WorkspaceError::io(&prefix, e))?;
            for entry in entries {
                let entry = entry.map_err(|e| WorkspaceError::io(&prefix, e))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') {
                    continue;
                }
                let rel = format!("{prefix}{name}");
                if entry.path().is_dir() {
                    folders.push((entry.path(), format!("{rel}/")));
                } else {
                    out.push(rel);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Logs that the body of `call_id` starts now.
    pub fn start(&self, call_id: &str) -> Running {
        Running {
            call_id: call_id.to_owned(),
            start: self.clock.fetch_add(1, Ordering::SeqCst),
            since: Instant::now(),
        }
    }

    /// Logs that a body ended.
    pub fn finish(&self, running: Running) {
        let span = BodySpan {
            end: self.clock.fetch_add(1, Ordering::SeqCst),
            took: running.since.elapsed(),
            call_id: running.call_id,
            start: running.start,
        };
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(span);
    }

    /// The spans logged so far.
    pub fn spans(&self) -> Vec<BodySpan> {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Why `path` is not a workspace path (`None` when it is one): empty, absolute, or with `..`.
pub fn outside_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("empty");
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('/') || path.starts_with('\\') {
        return Some("absolute");
    }
    p.components()
        .any(|c| {
            matches!(
                c,
                Component::ParentDir | Component::RootDir | Component::Prefix(_)
            )
        })
        .then_some("climbs out")
}

#[cfg(test)]
mod tests {
    use super::outside_problem;

    #[test]
    fn paths_stay_inside_the_workspace() {
        for ok in ["README.md", "src/lib.rs", "./notes.txt", "a/b/../c"] {
            let got = outside_problem(ok);
            if ok.contains("..") {
                assert_eq!(got, Some("climbs out"), "{ok}");
            } else {
                assert_eq!(got, None, "{ok}");
            }
        }
        for bad in ["", "/etc/passwd", "../secret.txt", "src/../../x", "\\x"] {
            assert!(outside_problem(bad).is_some(), "{bad}");
        }
    }
}
