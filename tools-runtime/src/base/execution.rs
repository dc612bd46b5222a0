//! The read-only view of one execution that the pipeline's listeners see ([`ToolExecution`]).

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::call::{ExecutionToken, GLOBAL_LAYER, ScopeKey};
use super::content::AdditionalContext;

pub(crate) struct ExecInner {
    pub(crate) token: ExecutionToken,
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) arguments: Arc<Value>,
    pub(crate) cancel: CancellationToken,
    pub(crate) agent: Option<ScopeKey>,
    pub(crate) parent: Option<ExecutionToken>,
    /// The layers whose listeners apply (the agent's chain); empty for a global call.
    pub(crate) chain: Vec<u64>,
    pub(crate) deferred: Mutex<Vec<AdditionalContext>>,
    /// Set just before the body is invoked.
    pub(crate) body_started: AtomicBool,
    /// What the call may call, when its definition's prepare hook said (set at admission).
    pub(crate) may_call: OnceLock<MayCall>,
}

impl Drop for ExecInner {
    fn drop(&mut self) {
        // The last owner of very deep arguments drops them without recursion.
        if let Some(args) = Arc::get_mut(&mut self.arguments) {
            super::deep::discard(std::mem::take(args));
        }
    }
}

/// The read-only view of one execution that listeners, guards, wrappers and observers see.
///
/// Cheap to clone (a shared handle). Nothing in it can be changed after entry.
#[derive(Clone)]
pub struct ToolExecution(pub(crate) Arc<ExecInner>);

impl ToolExecution {
    /// The registry-assigned token of this execution.
    pub fn token(&self) -> ExecutionToken {
        self.0.token
    }
    /// The model's call id.
    pub fn call_id(&self) -> &str {
        &self.0.call_id
    }
    /// The requested tool name.
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The frozen arguments.
    pub fn arguments(&self) -> &Value {
        &self.0.arguments
    }
    /// The frozen arguments as a shared handle.
    pub fn arguments_arc(&self) -> &Arc<Value> {
        &self.0.arguments
    }
    /// The caller's cancellation token.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.0.cancel
    }
    /// The agent scope the call was made from; `None` is the global scope.
    pub fn agent(&self) -> Option<ScopeKey> {
        self.0.agent
    }
    /// The token of the execution that made this call.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.0.parent
    }

    /// The tools this call may call in turn, as its definition's prepare hook found them at
    /// admission, before the pre-execute waterfall: for `run_code`, the tool calls the program
    /// can make (see [`crate::code::analysis`]). `None` for a call whose definition has no
    /// prepare hook, or whose hook did not say.
    pub fn may_call(&self) -> Option<&MayCall> {
        self.0.may_call.get()
    }

    /// Records what the call may call; only the first record counts.
    pub(crate) fn set_may_call(&self, may_call: MayCall) {
        let _ = self.0.may_call.set(may_call);
    }

    pub(crate) fn applies(&self, layer: u64) -> bool {
        layer == GLOBAL_LAYER || self.0.chain.contains(&layer)
    }

    pub(crate) fn take_deferred(&self) -> Vec<AdditionalContext> {
        std::mem::take(
            &mut *self
                .0
                .deferred
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

impl fmt::Debug for ToolExecution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecution")
            .field("token", &self.0.token)
            .field("call_id", &self.0.call_id)
            .field("name", &self.0.name)
            .field("agent", &self.0.agent)
            .field("parent", &self.0.parent)
            .finish_non_exhaustive()
    }
}

/// The tools one call may call in turn (for `run_code`: what the program may call), as found
/// before it runs. See [`ToolExecution::may_call`].
///
/// ```
/// use tools_runtime::MayCall;
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
