//! What a `run_code` program may call ([`MayCall`]), as the pre-run analysis found it, and how
//! a listener reads it from the execution ([`ExecutionExt`]).

use std::collections::BTreeSet;
use std::sync::Mutex;

use tools_runtime::ToolExecution;

use crate::PreparedProgram;

/// Code Mode's reading of a [`ToolExecution`].
pub trait ExecutionExt {
    /// The tools this `run_code` call's program may call, as the pre-run analysis found them at
    /// admission, before the pre-execute waterfall (see [`crate::analysis`]). `None` for any
    /// other call, or before admission.
    ///
    /// It is the value the prepare hook left, the same as `exec.get::<MayCall>()`.
    fn may_call(&self) -> Option<&MayCall>;
}

impl ExecutionExt for ToolExecution {
    fn may_call(&self) -> Option<&MayCall> {
        self.get::<MayCall>()
    }
}

/// The analysis's work for the run, left on the execution by the prepare hook and taken by
/// the body (once).
pub(crate) struct Prepared(pub(crate) Mutex<Option<PreparedProgram>>);

impl Prepared {
    pub(crate) fn take(&self) -> Option<PreparedProgram> {
        crate::lock(&self.0).take()
    }
}

/// The tools one call may call in turn (for `run_code`: what the program may call), as found
/// before it runs. Listeners read it with [`ExecutionExt::may_call`].
///
/// ```
/// use tools_code::MayCall;
///
/// let closed = MayCall::closed(["read_file", "list_dir"]);
/// assert!(closed.includes("read_file"));
/// assert!(!closed.any(|name| name.starts_with("delete_")));
/// assert!(MayCall::Open.any(|name| name.starts_with("delete_")));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MayCall {
    /// Exactly these tools, or fewer (possibly none). For `run_code` the bridge holds the
    /// program to it: a call outside the set fails in the program.
    Closed(BTreeSet<String>),
    /// Any tool the caller can reach: the program reaches tools in a way the analysis does not
    /// follow (a computed name, `tools` passed around, a rebound name), or was not analysed.
    Open,
}

impl MayCall {
    /// A closed set of `names`.
    pub fn closed<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        MayCall::Closed(names.into_iter().map(Into::into).collect())
    }

    /// Whether the set is open.
    pub fn is_open(&self) -> bool {
        matches!(self, MayCall::Open)
    }

    /// The closed set, or `None` when it is open.
    pub fn names(&self) -> Option<&BTreeSet<String>> {
        match self {
            MayCall::Closed(names) => Some(names),
            MayCall::Open => None,
        }
    }

    /// Whether `name` may be called (always, when the set is open).
    pub fn includes(&self, name: &str) -> bool {
        match self {
            MayCall::Closed(names) => names.contains(name),
            MayCall::Open => true,
        }
    }

    /// Whether any tool that may be called matches `pred` (always, when the set is open: an
    /// open set may reach any tool).
    pub fn any(&self, mut pred: impl FnMut(&str) -> bool) -> bool {
        match self {
            MayCall::Closed(names) => names.iter().any(|n| pred(n)),
            MayCall::Open => true,
        }
    }
}
