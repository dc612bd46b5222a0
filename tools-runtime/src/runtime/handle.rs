//! The runtime handle and the data it shares: the registry's layers, items and masks, the
//! listener lists, the approval service and the shared state. Only data lives here; the
//! registry room (`crate::registry`) gives it behaviour (scopes, registration, resolution), the
//! pipeline (`crate::pipeline`) runs calls against it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use tools_schema::catalog::CatalogEntry;

use crate::assembly::{AssembleHook, Assembly, AssemblyError};
use crate::call::result::ToolExecutionResult;
use crate::call::tool_call::{GLOBAL_LAYER, ScopeKey};
use crate::durable::approvals::DurableApprovals;
use crate::errors::ToolError;
use crate::execution::ToolExecution;
use crate::extensions::Extensions;
use crate::mode::PresentationMode;
use crate::policy::{
    ApprovalService, PostDecision, PostSnapshot, PostView, PreDecision, RegistryChange,
};
use crate::runtime::definition::ToolDefinition;

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

pub(crate) struct Layer {
    pub(crate) parent: Option<u64>,
    pub(crate) tools: BTreeMap<String, (u64, ToolDefinition)>,
    pub(crate) reserved: BTreeMap<String, u64>,
    pub(crate) masks: Vec<(u64, ToolFilter)>,
    /// The mode this agent layer chose with `present_as`, and the item that set it.
    pub(crate) present_as: Option<(u64, PresentationMode)>,
    /// The agent layer's name, unique among live layers (see `State::names`).
    pub(crate) name: Option<Arc<str>>,
}

impl Layer {
    pub(crate) fn new(parent: Option<u64>) -> Self {
        Layer {
            parent,
            tools: BTreeMap::new(),
            reserved: BTreeMap::new(),
            masks: Vec::new(),
            present_as: None,
            name: None,
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
    /// The live agent layers that have a name, by name.
    pub(crate) names: HashMap<Arc<str>, u64>,
}

/// The registry-owned definitions by name, with the modes whose scopes they are offered to.
pub(crate) type OwnedTools = BTreeMap<String, (ToolDefinition, fn(PresentationMode) -> bool)>;

/// Per scope and mode: the generation a list was made at, and the list.
pub(crate) type NativeCache = HashMap<(ScopeKey, PresentationMode), (u64, Arc<SchemaList>)>;

pub(crate) struct Shared {
    pub(crate) state: RwLock<State>,
    pub(crate) listeners: RwLock<Arc<Listeners>>,
    pub(crate) approval: RwLock<Option<(u64, Arc<dyn ApprovalService>)>>,
    /// Where paused calls are kept, and the key binding them (durable approvals).
    pub(crate) durable: Option<DurableApprovals>,
    /// The shared state of tool bodies ([`ToolRuntime::insert_state`]), each value an `Arc`.
    pub(crate) states: RwLock<Extensions>,
    pub(crate) next_id: AtomicU64,
    /// The runtime's presentation mode (agents may choose their own).
    pub(crate) mode: PresentationMode,
    /// The registry-owned definitions the extensions installed, by their reserved names, with
    /// the modes whose scopes they are offered to.
    pub(crate) owned: OwnedTools,
    /// The extensions' presenters, in installation order.
    pub(crate) presenters: Vec<Arc<dyn Presenter>>,
    /// The assemble hook.
    pub(crate) hook: Option<Arc<AssembleHook>>,
    /// Native definitions per scope and mode, while current (see `presentation`).
    pub(crate) native_cache: Mutex<NativeCache>,
    /// Counts every change of the registry's tools, reservations, masks and modes, so a view
    /// computed from them can tell it is still current.
    pub(crate) generation: AtomicU64,
}

/// What an extension adds to prompt assembly (see
/// [`extension`](crate::extension) for the seam).
pub trait Presenter: Send + Sync + fmt::Debug + 'static {
    /// Whether this presenter renders what a mode that offers code needs (an SDK). Without one
    /// that does, assembling a scope whose mode is `code` or `both` fails with
    /// [`AssemblyError::NoCodeRuntime`](crate::presentation::AssemblyError::NoCodeRuntime).
    fn presents_code(&self) -> bool {
        false
    }

    /// Adds this extension's tool definitions and prompt sections to `assembly`, the scope's
    /// assembly so far (its `mode`, the native definitions in name order). The registry then
    /// orders the tools (`tool_order`) and the sections, and runs the assemble hook.
    fn assemble(
        &self,
        runtime: &ToolRuntime,
        scope: ScopeKey,
        assembly: &mut Assembly,
    ) -> Result<(), AssemblyError>;
}

/// A scope's catalog entries, in name order, shared between views of the registry. Raw
/// schemas from outside may be deep: the entries a list is the last owner of are dropped
/// without recursion.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SchemaList(pub Vec<Arc<CatalogEntry>>);

impl SchemaList {
    /// The entries, each shared.
    pub fn new(entries: Vec<CatalogEntry>) -> Self {
        SchemaList(entries.into_iter().map(Arc::new).collect())
    }
}

impl Drop for SchemaList {
    fn drop(&mut self) {
        for entry in &mut self.0 {
            if let Some(entry) = Arc::get_mut(entry) {
                tools_schema::deep::discard(std::mem::take(&mut entry.input_schema));
                if let Some(output) = entry.output_schema.take() {
                    tools_schema::deep::discard(output);
                }
            }
        }
    }
}

pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}
pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}
/// Locks a mutex whether or not a holder panicked: the one helper, kept in the store's room
/// (the lowest room that locks).
pub(crate) use crate::durable::store::lock;

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
    /// The definition is one the registry owns (an extension installed it).
    pub(crate) owned: bool,
    /// The registry's admission rules refuse the call before policy (the code-only rule, the
    /// tool's [`Callers`](crate::runtime::definition::Callers)).
    pub(crate) refusal: Option<crate::errors::ExecutionError>,
    /// The calling scope's presentation mode; `None` when the scope is gone.
    pub(crate) mode: Option<PresentationMode>,
}

impl ToolRuntime {
    /// An empty registry with its presentation mode, owned definitions, presenters and hook.
    pub(crate) fn with_parts(
        mode: PresentationMode,
        owned: OwnedTools,
        presenters: Vec<Arc<dyn Presenter>>,
        hook: Option<Arc<AssembleHook>>,
        durable: Option<DurableApprovals>,
    ) -> Self {
        let mut layers = HashMap::new();
        layers.insert(GLOBAL_LAYER, Layer::new(None));
        ToolRuntime(Arc::new(Shared {
            state: RwLock::new(State {
                layers,
                items: HashMap::new(),
                names: HashMap::new(),
            }),
            listeners: RwLock::new(Arc::new(Listeners::default())),
            approval: RwLock::new(None),
            durable,
            states: RwLock::new(Extensions::new()),
            next_id: AtomicU64::new(1),
            mode,
            owned,
            presenters,
            hook,
            native_cache: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
        }))
    }

    /// Installs shared state reachable from tool bodies through
    /// [`ToolRunContext::state`](crate::ToolRunContext::state); returns the previous value.
    pub fn insert_state<T: Send + Sync + 'static>(&self, value: T) -> Option<Arc<T>> {
        self.insert_state_arc(Arc::new(value))
    }

    /// Like [`insert_state`](Self::insert_state), for a value already shared.
    pub fn insert_state_arc<T: Send + Sync + 'static>(&self, value: Arc<T>) -> Option<Arc<T>> {
        write(&self.0.states).insert(value)
    }

    /// Shared state of type `T`, if installed.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        read(&self.0.states).get::<Arc<T>>().cloned()
    }
}

// ---------------------------------------------------------------------------------------------
// The listener lists as stored, and the execute-wrapper chain. They live with the runtime
// handle because the lists are part of what it shares and `Next` holds the handle; keeping
// them here means the `policy` room below need not know the handle.

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
pub(crate) use crate::execution::ProgressListenerFn;

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
    pub(crate) progress: Vec<Entry<Arc<ProgressListenerFn>>>,
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
        self.progress.retain(|e| e.id != id);
        before != self.len()
    }

    fn len(&self) -> usize {
        self.pre.len()
            + self.guards.len()
            + self.wrappers.len()
            + self.post.len()
            + self.observers.len()
            + self.change.len()
            + self.progress.len()
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
