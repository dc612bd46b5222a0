//! The runtime handle and the data it shares: the registry's layers, items and masks, the
//! listener lists, the approval service and the shared state. Only data lives here; the
//! registry room (`crate::registry`) gives it behaviour (scopes, registration, resolution), the
//! pipeline (`crate::pipeline`) runs calls against it.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::call::{ExecutionToken, GLOBAL_LAYER};
use super::definition::ToolDefinition;
use super::error::ToolError;
use super::execution::ToolExecution;
use super::hooks::{
    ApprovalService, PostDecision, PostSnapshot, PostView, PreDecision, RegistryChange,
};
use super::result::ToolExecutionResult;

/// An agent-scoped visibility mask over global tools. Masks are snapshotted when applied and
/// intersect along an agent's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolFilter {
    /// Only these global names are visible (later globals not named here are hidden).
    Allow(BTreeSet<String>),
    /// These global names are hidden (later globals not named here are visible).
    Deny(BTreeSet<String>),
}

impl ToolFilter {
    /// An allow mask.
    pub fn allow<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        ToolFilter::Allow(names.into_iter().map(Into::into).collect())
    }
    /// A deny mask.
    pub fn deny<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Self {
        ToolFilter::Deny(names.into_iter().map(Into::into).collect())
    }
    pub(crate) fn names(&self) -> &BTreeSet<String> {
        match self {
            ToolFilter::Allow(n) | ToolFilter::Deny(n) => n,
        }
    }
    pub(crate) fn admits(&self, name: &str) -> bool {
        match self {
            ToolFilter::Allow(n) => n.contains(name),
            ToolFilter::Deny(n) => !n.contains(name),
        }
    }
}

/// How the tools are presented to the model: as native function definitions, as a typed SDK
/// the model programs against through `run_code` (Code Mode), or both.
///
/// The runtime has one (set with [`ToolRuntimeBuilder::mode`](crate::ToolRuntimeBuilder::mode),
/// `Native` by default); an agent scope may choose its own with
/// [`Scope::present_as`](crate::Scope::present_as), which nested agent scopes inherit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PresentationMode {
    /// The visible tools as function definitions; `run_code` is not offered.
    #[default]
    Native,
    /// Only `run_code` and the SDK of the visible tools. A direct call of any other tool is
    /// `UNKNOWN_TOOL` before policy runs; calls a `run_code` program makes are not affected.
    Code,
    /// The visible tools as function definitions and `run_code` with the SDK; direct calls run.
    Both,
}

impl PresentationMode {
    /// The stable lower-case name: `native`, `code` or `both`.
    pub fn as_str(self) -> &'static str {
        match self {
            PresentationMode::Native => "native",
            PresentationMode::Code => "code",
            PresentationMode::Both => "both",
        }
    }

    /// Whether the mode offers `run_code` and the SDK.
    pub fn offers_code(self) -> bool {
        !matches!(self, PresentationMode::Native)
    }

    /// Whether the mode offers the visible tools as function definitions.
    pub fn offers_native(self) -> bool {
        !matches!(self, PresentationMode::Code)
    }
}

impl fmt::Display for PresentationMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

pub(crate) struct Layer {
    pub(crate) parent: Option<u64>,
    pub(crate) tools: BTreeMap<String, (u64, ToolDefinition)>,
    pub(crate) reserved: BTreeMap<String, u64>,
    pub(crate) masks: Vec<(u64, ToolFilter)>,
    /// The mode this agent layer chose with `present_as`, and the item that set it.
    pub(crate) present_as: Option<(u64, PresentationMode)>,
}

impl Layer {
    pub(crate) fn new(parent: Option<u64>) -> Self {
        Layer {
            parent,
            tools: BTreeMap::new(),
            reserved: BTreeMap::new(),
            masks: Vec::new(),
            present_as: None,
        }
    }
}

pub(crate) enum ItemKind {
    Tool(String),
    Reserve(String),
    Mask,
    Listener,
    Approval,
    /// An agent layer's presentation mode.
    PresentAs,
    /// An agent layer created through the owning scope.
    Layer,
}

pub(crate) struct Item {
    pub(crate) owner: u64,
    pub(crate) layer: u64,
    pub(crate) kind: ItemKind,
}

pub(crate) struct State {
    pub(crate) layers: HashMap<u64, Layer>,
    pub(crate) items: HashMap<u64, Item>,
}

pub(crate) struct Shared {
    pub(crate) state: RwLock<State>,
    pub(crate) listeners: RwLock<Arc<Listeners>>,
    pub(crate) approval: RwLock<Option<(u64, Arc<dyn ApprovalService>)>>,
    pub(crate) states: RwLock<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    pub(crate) next_id: AtomicU64,
    /// The runtime's presentation mode (agents may choose their own).
    pub(crate) mode: PresentationMode,
    /// The registry-owned `run_code` definition, when Code Mode is configured.
    pub(crate) run_code: Option<ToolDefinition>,
    /// Settings of rooms above `base` (Code Mode), kept type-erased so `base` names no room.
    pub(crate) extension: Option<Arc<dyn Any + Send + Sync>>,
    /// Counts every change of the registry's tools, reservations, masks and modes, so a view
    /// computed from them can tell it is still current.
    pub(crate) generation: AtomicU64,
    /// The tokens of the `run_code` executions in flight: a call whose parent is one of them
    /// comes from a program (the callers rule reads it).
    pub(crate) programs: Mutex<HashSet<ExecutionToken>>,
    /// The registry-owned `describe_tools` definition, when Code Mode discovery is configured.
    pub(crate) describe_tools: Option<ToolDefinition>,
}

/// Marks a `run_code` execution as in flight (in [`Shared::programs`]) until dropped.
pub(crate) struct ProgramMark {
    pub(crate) shared: Arc<Shared>,
    pub(crate) token: ExecutionToken,
}

impl Drop for ProgramMark {
    fn drop(&mut self) {
        lock(&self.shared.programs).remove(&self.token);
    }
}

pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}
/// Locks `mutex`, whether or not a holder panicked (every value kept behind one stays whole).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The shared tool registry and execution pipeline. Cheap to clone, `Send + Sync`.
///
/// Register tools and listeners through a [`Scope`](crate::Scope) ([`scope`](Self::scope) for the global
/// layer, [`agent_scope`](Self::agent_scope) for an agent), then run calls with
/// [`execute`](Self::execute) or [`execute_batch`](Self::execute_batch).
#[derive(Clone)]
pub struct ToolRuntime(pub(crate) Arc<Shared>);

impl Default for ToolRuntime {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = read(&self.0.state);
        f.debug_struct("ToolRuntime")
            .field("layers", &st.layers.len())
            .field("items", &st.items.len())
            .finish_non_exhaustive()
    }
}

/// A snapshot taken at the start of a call: the visible definition (if any), the applicable
/// chain, and every listener list.
pub(crate) struct CallSnapshot {
    pub(crate) def: Option<ToolDefinition>,
    /// `None` when the calling agent scope is gone.
    pub(crate) chain: Option<Vec<u64>>,
    pub(crate) listeners: Arc<Listeners>,
    /// The call names a tool other than `run_code`, directly (no parent), from a scope whose
    /// mode is `code`: it is refused before policy runs.
    pub(crate) code_only: bool,
    /// The tool's [`Callers`](super::definition::Callers) refuse this call (before policy,
    /// ahead of `code_only`).
    pub(crate) callers: Option<super::error::ExecutionError>,
    /// Set for a `run_code` execution: its token is marked as a program's while the call runs.
    pub(crate) program: Option<ProgramMark>,
}

impl ToolRuntime {
    /// An empty registry with its presentation mode, `run_code` definition and Code Mode settings.
    pub(crate) fn with_parts(
        mode: PresentationMode,
        run_code: Option<ToolDefinition>,
        extension: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        Self::with_code_parts(mode, run_code, None, extension)
    }

    /// [`with_parts`](Self::with_parts) with the registry-owned `describe_tools` definition.
    pub(crate) fn with_code_parts(
        mode: PresentationMode,
        run_code: Option<ToolDefinition>,
        describe_tools: Option<ToolDefinition>,
        extension: Option<Arc<dyn Any + Send + Sync>>,
    ) -> Self {
        let mut layers = HashMap::new();
        layers.insert(GLOBAL_LAYER, Layer::new(None));
        ToolRuntime(Arc::new(Shared {
            state: RwLock::new(State {
                layers,
                items: HashMap::new(),
            }),
            listeners: RwLock::new(Arc::new(Listeners::default())),
            approval: RwLock::new(None),
            states: RwLock::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            mode,
            run_code,
            extension,
            generation: AtomicU64::new(0),
            programs: Mutex::new(HashSet::new()),
            describe_tools,
        }))
    }

    /// Installs shared state reachable from tool bodies through
    /// [`ToolRunContext::state`](crate::ToolRunContext::state); returns the previous value.
    pub fn insert_state<T: Any + Send + Sync>(&self, value: T) -> Option<Arc<T>> {
        self.insert_state_arc(Arc::new(value))
    }

    /// Like [`insert_state`](Self::insert_state), for a value already shared.
    pub fn insert_state_arc<T: Any + Send + Sync>(&self, value: Arc<T>) -> Option<Arc<T>> {
        write(&self.0.states)
            .insert(TypeId::of::<T>(), value)
            .and_then(|old| old.downcast::<T>().ok())
    }

    /// Shared state of type `T`, if installed.
    pub fn state<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        read(&self.0.states)
            .get(&TypeId::of::<T>())
            .cloned()
            .and_then(|v| v.downcast::<T>().ok())
    }
}

// ---------------------------------------------------------------------------------------------
// The listener lists as stored, and the execute-wrapper chain. They live with the runtime
// handle because the lists are part of what it shares and `Next` holds the handle; keeping
// them here means no two files of `base` import each other.

pub(crate) type PreSyncFn = dyn Fn(&ToolExecution, PreDecision) -> PreDecision + Send + Sync;
pub(crate) type PreAsyncFn =
    dyn Fn(ToolExecution, PreDecision) -> BoxFuture<'static, PreDecision> + Send + Sync;
pub(crate) type GuardFn = dyn Fn(&ToolExecution) -> Option<String> + Send + Sync;
pub(crate) type WrapperFn =
    dyn Fn(Dispatch, Next) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync;
pub(crate) type PostSyncFn = dyn Fn(&ToolExecution, PostView<'_>) -> PostDecision + Send + Sync;
pub(crate) type PostAsyncFn =
    dyn Fn(ToolExecution, PostSnapshot) -> BoxFuture<'static, PostDecision> + Send + Sync;
pub(crate) type ObserverFn = dyn Fn(&ToolExecution, &ToolExecutionResult) + Send + Sync;
pub(crate) type ChangeFn = dyn Fn(&RegistryChange) + Send + Sync;

#[derive(Clone)]
pub(crate) enum PreListener {
    Sync(Arc<PreSyncFn>),
    Async(Arc<PreAsyncFn>),
}

#[derive(Clone)]
pub(crate) enum PostListener {
    Sync(Arc<PostSyncFn>),
    Async(Arc<PostAsyncFn>),
}

/// One listener with the registration that owns it and the layer it applies to.
#[derive(Clone)]
pub(crate) struct Entry<T> {
    pub(crate) id: u64,
    pub(crate) layer: u64,
    pub(crate) f: T,
}

/// A snapshot of every listener list, swapped as a whole on change so a call reads all of them
/// with one reference-count increment.
#[derive(Clone, Default)]
pub(crate) struct Listeners {
    pub(crate) pre: Vec<Entry<PreListener>>,
    pub(crate) guards: Vec<Entry<Arc<GuardFn>>>,
    pub(crate) wrappers: Vec<Entry<Arc<WrapperFn>>>,
    pub(crate) post: Vec<Entry<PostListener>>,
    pub(crate) observers: Vec<Entry<Arc<ObserverFn>>>,
    pub(crate) change: Vec<Entry<Arc<ChangeFn>>>,
}

impl Listeners {
    pub(crate) fn remove(&mut self, id: u64) -> bool {
        let before = self.len();
        self.pre.retain(|e| e.id != id);
        self.guards.retain(|e| e.id != id);
        self.wrappers.retain(|e| e.id != id);
        self.post.retain(|e| e.id != id);
        self.observers.retain(|e| e.id != id);
        self.change.retain(|e| e.id != id);
        before != self.len()
    }

    fn len(&self) -> usize {
        self.pre.len()
            + self.guards.len()
            + self.wrappers.len()
            + self.post.len()
            + self.observers.len()
            + self.change.len()
    }
}

/// The dispatch an execute wrapper sees: the read-only execution, the resolved definition, and
/// the one thing a wrapper may change, the cancellation token.
pub struct Dispatch {
    pub(crate) exec: ToolExecution,
    pub(crate) def: ToolDefinition,
    /// A wrapper's replacement token; `None` means the caller's.
    pub(crate) cancel: Option<CancellationToken>,
}

impl Dispatch {
    pub(crate) fn new(exec: ToolExecution, def: ToolDefinition) -> Self {
        Dispatch {
            exec,
            def,
            cancel: None,
        }
    }
    /// The read-only execution.
    pub fn execution(&self) -> &ToolExecution {
        &self.exec
    }
    /// The definition that will run.
    pub fn definition(&self) -> &ToolDefinition {
        &self.def
    }
    /// The current cancellation token (the caller's, unless a wrapper replaced it).
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancel.as_ref().unwrap_or(self.exec.cancellation())
    }
    /// Replaces the cancellation token for the rest of the chain. The caller's token still
    /// cancels the body: the registry fuses it back in just before the body runs.
    pub fn set_cancellation(&mut self, token: CancellationToken) {
        self.cancel = Some(token);
    }
}

impl fmt::Debug for Dispatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dispatch")
            .field("execution", &self.exec)
            .field("replaced_cancellation", &self.cancel.is_some())
            .finish_non_exhaustive()
    }
}

/// The rest of the wrapper chain, ending in the tool body. Call [`run`](Next::run) to continue
/// (more than once to retry); return without calling it to answer for the tool (a made-up
/// success is validated and rendered through the tool's own output declaration).
#[derive(Clone)]
pub struct Next {
    pub(crate) listeners: Arc<Listeners>,
    pub(crate) index: usize,
    pub(crate) runtime: ToolRuntime,
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}
