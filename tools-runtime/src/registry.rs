//! The registry: the shared [`ToolRuntime`], its layers (the global one and nested agent
//! scopes), masks, reservations, listener lists, and the [`Scope`] handles everything is
//! registered through.

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

use serde_json::Value;
use tools_schema::catalog::ToolSchema;

use crate::RESERVED_RUN_CODE;
use crate::ToolError;
use crate::definition::ToolDefinition;
use crate::error::RegistryError;
use crate::execution::ToolExecution;
use crate::hooks::{
    ApprovalService, ChangeFn, Dispatch, Entry, Listeners, Next, PostDecision, PostListener,
    PostSnapshot, PostView, PreDecision, PreListener, RegistryChange,
};
use crate::result::ToolExecutionResult;

pub(crate) const GLOBAL_LAYER: u64 = 0;
/// The owner of items no scope owns (agent layers made by [`ToolRuntime::agent_scope`]).
const ROOT_OWNER: u64 = 0;

/// Names a layer of the registry: the global scope or one agent scope. `Copy`; use it to view
/// the registry as that scope sees it and to make calls from it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScopeKey(pub(crate) u64);

impl ScopeKey {
    /// The global scope.
    pub const GLOBAL: ScopeKey = ScopeKey(GLOBAL_LAYER);

    /// Whether this is the global scope.
    pub fn is_global(self) -> bool {
        self.0 == GLOBAL_LAYER
    }
}

impl fmt::Debug for ScopeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_global() {
            f.write_str("ScopeKey(global)")
        } else {
            write!(f, "ScopeKey(agent #{})", self.0)
        }
    }
}

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
    fn names(&self) -> &BTreeSet<String> {
        match self {
            ToolFilter::Allow(n) | ToolFilter::Deny(n) => n,
        }
    }
    fn admits(&self, name: &str) -> bool {
        match self {
            ToolFilter::Allow(n) => n.contains(name),
            ToolFilter::Deny(n) => !n.contains(name),
        }
    }
}

struct Layer {
    parent: Option<u64>,
    tools: BTreeMap<String, (u64, ToolDefinition)>,
    reserved: BTreeMap<String, u64>,
    masks: Vec<(u64, ToolFilter)>,
}

impl Layer {
    fn new(parent: Option<u64>) -> Self {
        Layer {
            parent,
            tools: BTreeMap::new(),
            reserved: BTreeMap::new(),
            masks: Vec::new(),
        }
    }
}

enum ItemKind {
    Tool(String),
    Reserve(String),
    Mask,
    Listener,
    Approval,
    /// An agent layer created through the owning scope.
    Layer,
}

struct Item {
    owner: u64,
    layer: u64,
    kind: ItemKind,
}

struct State {
    layers: HashMap<u64, Layer>,
    items: HashMap<u64, Item>,
}

impl State {
    /// The agent layers from `layer` up to (excluding) the global one; `None` if any is gone.
    fn chain(&self, layer: u64) -> Option<Vec<u64>> {
        let mut chain = Vec::new();
        let mut cur = layer;
        while cur != GLOBAL_LAYER {
            let l = self.layers.get(&cur)?;
            chain.push(cur);
            cur = l.parent.unwrap_or(GLOBAL_LAYER);
        }
        Some(chain)
    }

    fn global(&self) -> Option<&Layer> {
        self.layers.get(&GLOBAL_LAYER)
    }

    fn admitted(&self, name: &str, chain: &[u64]) -> bool {
        chain.iter().all(|l| {
            self.layers
                .get(l)
                .is_none_or(|layer| layer.masks.iter().all(|(_, m)| m.admits(name)))
        })
    }

    fn resolve(&self, name: &str, chain: &[u64]) -> Option<&ToolDefinition> {
        for l in chain {
            if let Some((_, def)) = self.layers.get(l).and_then(|layer| layer.tools.get(name)) {
                return Some(def);
            }
        }
        let (_, def) = self.global()?.tools.get(name)?;
        self.admitted(name, chain).then_some(def)
    }

    fn visible(&self, chain: &[u64]) -> BTreeMap<&str, &ToolDefinition> {
        let mut out = BTreeMap::new();
        if let Some(g) = self.global() {
            for (name, (_, def)) in &g.tools {
                if self.admitted(name, chain) {
                    out.insert(name.as_str(), def);
                }
            }
        }
        // Outermost agent first, so nearer layers shadow farther ones.
        for l in chain.iter().rev() {
            if let Some(layer) = self.layers.get(l) {
                for (name, (_, def)) in &layer.tools {
                    out.insert(name.as_str(), def);
                }
            }
        }
        out
    }
}

struct Shared {
    state: RwLock<State>,
    listeners: RwLock<Arc<Listeners>>,
    approval: RwLock<Option<(u64, Arc<dyn ApprovalService>)>>,
    states: RwLock<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    next_id: AtomicU64,
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}
fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

/// The shared tool registry and execution pipeline. Cheap to clone, `Send + Sync`.
///
/// Register tools and listeners through a [`Scope`] ([`scope`](Self::scope) for the global
/// layer, [`agent_scope`](Self::agent_scope) for an agent), then run calls with
/// [`execute`](Self::execute) or [`execute_batch`](Self::execute_batch).
#[derive(Clone)]
pub struct ToolRuntime(Arc<Shared>);

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
}

impl ToolRuntime {
    /// An empty registry.
    pub fn new() -> Self {
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
        }))
    }

    fn next_id(&self) -> u64 {
        self.0.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A scope that registers in the global layer (a plugin's context). Dropping it disposes
    /// everything registered through it.
    pub fn scope(&self) -> Scope {
        Scope {
            rt: self.clone(),
            id: self.next_id(),
            layer: GLOBAL_LAYER,
            own_layer: false,
        }
    }

    /// A new agent scope directly under the global layer. Its registrations and masks apply to
    /// calls made from it (and from agent scopes nested in it).
    pub fn agent_scope(&self) -> Scope {
        self.new_agent(ROOT_OWNER, GLOBAL_LAYER)
    }

    fn new_agent(&self, owner: u64, parent: u64) -> Scope {
        let mut st = write(&self.0.state);
        let reg = self.add_item(&mut st, owner, parent, ItemKind::Layer);
        let layer = reg.id;
        if st.layers.contains_key(&parent) {
            st.layers.insert(layer, Layer::new(Some(parent)));
        } else {
            // The parent is gone: the new scope is born disposed.
            st.items.remove(&layer);
        }
        Scope {
            rt: self.clone(),
            id: self.next_id(),
            layer,
            own_layer: true,
        }
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

    /// The definition `name` resolves to as `scope` sees it: its own and its ancestors' local
    /// tools shadow globals, and masked globals read as absent.
    pub fn get(&self, name: &str, scope: ScopeKey) -> Option<ToolDefinition> {
        let st = read(&self.0.state);
        let chain = st.chain(scope.0)?;
        st.resolve(name, &chain).cloned()
    }

    /// Whether a global capability name passes every mask on `scope`'s chain, whether or not a
    /// tool of that name is registered. A disposed scope admits nothing.
    pub fn is_admitted(&self, name: &str, scope: ScopeKey) -> bool {
        let st = read(&self.0.state);
        match st.chain(scope.0) {
            Some(chain) => name != RESERVED_RUN_CODE && st.admitted(name, &chain),
            None => false,
        }
    }

    /// The schemas of every tool `scope` sees, without their bodies, in name order.
    pub fn schemas(&self, scope: ScopeKey) -> Vec<ToolSchema> {
        let st = read(&self.0.state);
        let Some(chain) = st.chain(scope.0) else {
            return Vec::new();
        };
        st.visible(&chain)
            .into_values()
            .map(|def| ToolSchema {
                name: def.name().to_owned(),
                description: def.description().to_owned(),
                input_schema: def.input_schema().clone(),
                output_schema: Some(def.output_schema().clone()),
            })
            .collect()
    }

    /// What `scope` sees as a [`Catalog`](tools_schema::Catalog) (the MCP `tools/list` shape the
    /// codegen renders SDKs and docs from). Fails only if a schema breaks the catalog's own rules
    /// (for instance a raw input schema nested deeper than the catalog accepts).
    pub fn catalog(
        &self,
        scope: ScopeKey,
    ) -> Result<tools_schema::Catalog, tools_schema::CatalogError> {
        tools_schema::Catalog::new(self.schemas(scope))
    }

    /// The names of every tool `scope` sees, in name order.
    pub fn visible_names(&self, scope: ScopeKey) -> Vec<String> {
        let st = read(&self.0.state);
        let Some(chain) = st.chain(scope.0) else {
            return Vec::new();
        };
        st.visible(&chain).into_keys().map(str::to_owned).collect()
    }

    pub(crate) fn snapshot(&self, name: &str, agent: Option<ScopeKey>) -> CallSnapshot {
        let listeners = read(&self.0.listeners).clone();
        let st = read(&self.0.state);
        match agent {
            None => CallSnapshot {
                def: st.resolve(name, &[]).cloned(),
                chain: Some(Vec::new()),
                listeners,
            },
            Some(key) => match st.chain(key.0) {
                Some(chain) => CallSnapshot {
                    def: st.resolve(name, &chain).cloned(),
                    chain: Some(chain),
                    listeners,
                },
                None => CallSnapshot {
                    def: None,
                    chain: None,
                    listeners,
                },
            },
        }
    }

    pub(crate) fn approval(&self) -> Option<Arc<dyn ApprovalService>> {
        read(&self.0.approval).as_ref().map(|(_, s)| s.clone())
    }

    pub(crate) fn next(&self, listeners: Arc<Listeners>) -> Next {
        Next::new(listeners, self.clone())
    }

    pub(crate) fn dispatch(&self, exec: ToolExecution, def: ToolDefinition) -> Dispatch {
        Dispatch::new(exec, def)
    }

    fn notify(&self, changes: &[RegistryChange]) {
        if changes.is_empty() {
            return;
        }
        let listeners = read(&self.0.listeners).clone();
        for change in changes {
            for entry in &listeners.change {
                let f: &ChangeFn = &*entry.f;
                if std::panic::catch_unwind(AssertUnwindSafe(|| f(change))).is_err() {
                    tracing::error!(?change, "a registry change listener panicked; skipped");
                }
            }
        }
    }

    /// Removes the given items (and, for agent layers, everything inside them).
    fn dispose_items(&self, ids: &[u64]) {
        let mut changes = Vec::new();
        let mut dropped_listeners = Vec::new();
        let mut dropped_approval = Vec::new();
        {
            let mut st = write(&self.0.state);
            let mut work: Vec<u64> = ids.to_vec();
            while let Some(id) = work.pop() {
                let Some(item) = st.items.remove(&id) else {
                    continue;
                };
                let scope = ScopeKey(item.layer);
                match item.kind {
                    ItemKind::Tool(name) => {
                        if let Some(layer) = st.layers.get_mut(&item.layer)
                            && layer.tools.get(&name).is_some_and(|(rid, _)| *rid == id)
                        {
                            layer.tools.remove(&name);
                            changes.push(RegistryChange::Removed { name, scope });
                        }
                    }
                    ItemKind::Reserve(name) => {
                        if let Some(layer) = st.layers.get_mut(&item.layer)
                            && layer.reserved.get(&name) == Some(&id)
                        {
                            layer.reserved.remove(&name);
                            changes.push(RegistryChange::Unreserved { name, scope });
                        }
                    }
                    ItemKind::Mask => {
                        if let Some(layer) = st.layers.get_mut(&item.layer) {
                            layer.masks.retain(|(mid, _)| *mid != id);
                            changes.push(RegistryChange::MasksChanged { scope });
                        }
                    }
                    ItemKind::Listener => dropped_listeners.push(id),
                    ItemKind::Approval => dropped_approval.push(id),
                    ItemKind::Layer => {
                        // The agent layer's id is the item's id; everything in it, and every
                        // nested layer, goes with it.
                        let layer_id = id;
                        st.layers.remove(&layer_id);
                        let inner: Vec<u64> = st
                            .items
                            .iter()
                            .filter(|(_, it)| it.layer == layer_id)
                            .map(|(k, _)| *k)
                            .collect();
                        let nested: Vec<u64> = st
                            .layers
                            .iter()
                            .filter(|(_, l)| l.parent == Some(layer_id))
                            .map(|(k, _)| *k)
                            .collect();
                        work.extend(inner);
                        work.extend(nested);
                        changes.push(RegistryChange::ScopeDisposed {
                            scope: ScopeKey(layer_id),
                        });
                    }
                }
            }
            if !dropped_listeners.is_empty() {
                let mut guard = write(&self.0.listeners);
                let mut next = Listeners::clone(&guard);
                for id in &dropped_listeners {
                    next.remove(*id);
                }
                *guard = Arc::new(next);
            }
            if !dropped_approval.is_empty() {
                let mut guard = write(&self.0.approval);
                if guard
                    .as_ref()
                    .is_some_and(|(id, _)| dropped_approval.contains(id))
                {
                    *guard = None;
                }
            }
        }
        self.notify(&changes);
    }

    fn dispose_owned_by(&self, owner: u64) {
        let ids: Vec<u64> = read(&self.0.state)
            .items
            .iter()
            .filter(|(_, it)| it.owner == owner)
            .map(|(k, _)| *k)
            .collect();
        self.dispose_items(&ids);
    }

    fn add_item(&self, st: &mut State, owner: u64, layer: u64, kind: ItemKind) -> Registration {
        let id = self.next_id();
        st.items.insert(id, Item { owner, layer, kind });
        Registration {
            rt: Arc::downgrade(&self.0),
            id,
        }
    }

    fn add_listener(
        &self,
        owner: u64,
        layer: u64,
        push: impl FnOnce(&mut Listeners, u64),
    ) -> Result<Registration, RegistryError> {
        let mut st = write(&self.0.state);
        if !st.layers.contains_key(&layer) {
            return Err(RegistryError::ScopeDisposed);
        }
        let reg = self.add_item(&mut st, owner, layer, ItemKind::Listener);
        let mut guard = write(&self.0.listeners);
        let mut next = Listeners::clone(&guard);
        push(&mut next, reg.id);
        *guard = Arc::new(next);
        Ok(reg)
    }
}

/// The handle of one registration (a tool, a reservation, a mask, a listener, the approval
/// service). Dropping it keeps the registration, which lasts until [`dispose`](Self::dispose)
/// or until the scope it was made through is disposed.
#[must_use = "keep the handle to remove the registration early; it otherwise lasts as long as its scope"]
pub struct Registration {
    rt: Weak<Shared>,
    id: u64,
}

impl Registration {
    /// Removes the registration now. Disposing twice, or after the scope, does nothing.
    pub fn dispose(self) {
        if let Some(shared) = self.rt.upgrade() {
            ToolRuntime(shared).dispose_items(&[self.id]);
        }
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("id", &self.id)
            .finish()
    }
}

/// A registration context: the global layer (a plugin) or one agent layer. What is registered
/// through a scope is removed when the scope is dropped or [`dispose`](Self::dispose)d; an
/// agent scope's layer, its masks and its nested agent scopes go with it.
pub struct Scope {
    rt: ToolRuntime,
    id: u64,
    layer: u64,
    /// Whether dropping this scope removes its (agent) layer.
    own_layer: bool,
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("key", &self.key())
            .finish_non_exhaustive()
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        self.rt.dispose_owned_by(self.id);
        if self.own_layer {
            self.rt.dispose_items(&[self.layer]);
        }
    }
}

impl Scope {
    /// The key of this scope's layer (for views and calls).
    pub fn key(&self) -> ScopeKey {
        ScopeKey(self.layer)
    }

    /// The runtime this scope belongs to.
    pub fn runtime(&self) -> &ToolRuntime {
        &self.rt
    }

    /// Removes everything registered through this scope (same as dropping it).
    pub fn dispose(self) {}

    /// A new agent scope nested in this one (directly under the global layer for a plugin
    /// scope). The new layer, with everything registered in it and every scope nested in it, is
    /// disposed with the returned scope, and also with this one.
    pub fn agent(&self) -> Scope {
        self.rt.new_agent(self.id, self.layer)
    }

    /// Registers `definition` in this scope's layer. A duplicate name in the same layer is an
    /// error; an agent-local tool shadows a global of the same name for that agent only. The
    /// name `run_code` is reserved and always refused.
    pub fn register(&self, definition: ToolDefinition) -> Result<Registration, RegistryError> {
        let name = definition.name().to_owned();
        if name == RESERVED_RUN_CODE {
            return Err(RegistryError::ReservedName { name });
        }
        let reg = {
            let mut st = write(&self.rt.0.state);
            let Some(layer) = st.layers.get(&self.layer) else {
                return Err(RegistryError::ScopeDisposed);
            };
            if layer.tools.contains_key(&name) {
                return Err(RegistryError::Duplicate {
                    name,
                    what: "registered",
                });
            }
            let reg = self
                .rt
                .add_item(&mut st, self.id, self.layer, ItemKind::Tool(name.clone()));
            if let Some(layer) = st.layers.get_mut(&self.layer) {
                layer.tools.insert(name.clone(), (reg.id, definition));
            }
            reg
        };
        self.rt.notify(&[RegistryChange::Registered {
            name,
            scope: self.key(),
        }]);
        Ok(reg)
    }

    /// Builds and registers a definition in one step.
    pub fn register_built(
        &self,
        builder: crate::ToolDefinitionBuilder,
    ) -> Result<Registration, RegistryError> {
        self.register(builder.build()?)
    }

    /// Reserves a capability name in this layer without a visible definition: it joins the
    /// names masks may name, but reaches no schema until a real registration supplies it.
    pub fn reserve(&self, name: impl Into<String>) -> Result<Registration, RegistryError> {
        let name = name.into();
        if name == RESERVED_RUN_CODE {
            return Err(RegistryError::ReservedName { name });
        }
        let reg = {
            let mut st = write(&self.rt.0.state);
            let Some(layer) = st.layers.get(&self.layer) else {
                return Err(RegistryError::ScopeDisposed);
            };
            if layer.reserved.contains_key(&name) {
                return Err(RegistryError::Duplicate {
                    name,
                    what: "reserved",
                });
            }
            let reg = self.rt.add_item(
                &mut st,
                self.id,
                self.layer,
                ItemKind::Reserve(name.clone()),
            );
            if let Some(layer) = st.layers.get_mut(&self.layer) {
                layer.reserved.insert(name.clone(), reg.id);
            }
            reg
        };
        self.rt.notify(&[RegistryChange::Reserved {
            name,
            scope: self.key(),
        }]);
        Ok(reg)
    }

    /// Applies an allow or deny mask to the global tools this agent scope (and its nested
    /// scopes) see. The filter is snapshotted now; masks intersect along the chain. Only agent
    /// scopes can be restricted; an empty filter, and names that are unknown, agent-local or
    /// reserved by the registry, are errors. This is visibility, not an authority boundary.
    pub fn restrict(&self, filter: ToolFilter) -> Result<Registration, RegistryError> {
        if self.layer == GLOBAL_LAYER {
            return Err(RegistryError::NotAgentScope);
        }
        if filter.names().is_empty() {
            return Err(RegistryError::EmptyFilter);
        }
        if let Some(name) = filter.names().iter().find(|n| *n == RESERVED_RUN_CODE) {
            return Err(RegistryError::ReservedName { name: name.clone() });
        }
        let reg = {
            let mut st = write(&self.rt.0.state);
            let Some(chain) = st.chain(self.layer) else {
                return Err(RegistryError::ScopeDisposed);
            };
            let mut unknown = Vec::new();
            let mut local = Vec::new();
            for name in filter.names() {
                let global = st
                    .global()
                    .is_some_and(|g| g.tools.contains_key(name) || g.reserved.contains_key(name));
                let reserved_on_chain = chain.iter().any(|l| {
                    st.layers
                        .get(l)
                        .is_some_and(|layer| layer.reserved.contains_key(name))
                });
                if global || reserved_on_chain {
                    continue;
                }
                let is_local = chain.iter().any(|l| {
                    st.layers
                        .get(l)
                        .is_some_and(|layer| layer.tools.contains_key(name))
                });
                if is_local {
                    local.push(name.clone());
                } else {
                    unknown.push(name.clone());
                }
            }
            if !unknown.is_empty() {
                return Err(RegistryError::UnknownNames { names: unknown });
            }
            if !local.is_empty() {
                return Err(RegistryError::LocalNames { names: local });
            }
            let reg = self
                .rt
                .add_item(&mut st, self.id, self.layer, ItemKind::Mask);
            if let Some(layer) = st.layers.get_mut(&self.layer) {
                layer.masks.push((reg.id, filter));
            }
            reg
        };
        self.rt
            .notify(&[RegistryChange::MasksChanged { scope: self.key() }]);
        Ok(reg)
    }

    /// Whether a global name passes every mask on this scope's chain.
    pub fn is_admitted(&self, name: &str) -> bool {
        self.rt.is_admitted(name, self.key())
    }

    /// The definition `name` resolves to in this scope.
    pub fn get(&self, name: &str) -> Option<ToolDefinition> {
        self.rt.get(name, self.key())
    }

    /// The schemas of every tool this scope sees, in name order.
    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.rt.schemas(self.key())
    }

    /// Adds a synchronous pre-execute listener. It receives the decision so far and returns the
    /// next one; listeners run in registration order. A listener registered through an agent
    /// scope sees only calls made from that agent (and its nested agents).
    pub fn on_pre_execute(
        &self,
        f: impl Fn(&ToolExecution, PreDecision) -> PreDecision + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        let layer = self.layer;
        self.rt.add_listener(self.id, layer, |l, id| {
            l.pre.push(Entry {
                id,
                layer,
                f: PreListener::Sync(Arc::new(f)),
            })
        })
    }

    /// Adds an asynchronous pre-execute listener (see [`on_pre_execute`](Self::on_pre_execute)).
    pub fn on_pre_execute_async<F, Fut>(&self, f: F) -> Result<Registration, RegistryError>
    where
        F: Fn(ToolExecution, PreDecision) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PreDecision> + Send + 'static,
    {
        let layer = self.layer;
        self.rt.add_listener(self.id, layer, |l, id| {
            l.pre.push(Entry {
                id,
                layer,
                f: PreListener::Async(Arc::new(move |e, d| Box::pin(f(e, d)))),
            })
        })
    }

    /// Adds a guard: after the pre-execute listeners, each guard may return a denial reason.
    /// A guard's denial is final; nothing later can undo it.
    pub fn guard(
        &self,
        f: impl Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        let layer = self.layer;
        self.rt.add_listener(self.id, layer, |l, id| {
            l.guards.push(Entry {
                id,
                layer,
                f: Arc::new(f),
            })
        })
    }

    /// Adds an execute wrapper around the body (for timeouts, retries, metrics). Wrappers run
    /// in registration order, the first outermost. See [`Next`] and [`Dispatch`].
    pub fn wrap_execute<F, Fut>(&self, f: F) -> Result<Registration, RegistryError>
    where
        F: Fn(Dispatch, Next) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let layer = self.layer;
        self.rt.add_listener(self.id, layer, |l, id| {
            l.wrappers.push(Entry {
                id,
                layer,
                f: Arc::new(move |d, n| Box::pin(f(d, n))),
            })
        })
    }

    /// Adds a synchronous post-execute listener; it sees each successful result (with earlier
    /// listeners' replacements) and accepts, replaces, or blocks it.
    pub fn on_post_execute(
        &self,
        f: impl Fn(&ToolExecution, PostView<'_>) -> PostDecision + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        let layer = self.layer;
        self.rt.add_listener(self.id, layer, |l, id| {
            l.post.push(Entry {
                id,
                layer,
                f: PostListener::Sync(Arc::new(f)),
            })
        })
    }

    /// Adds an asynchronous post-execute listener (it receives an owned copy of the result).
    pub fn on_post_execute_async<F, Fut>(&self, f: F) -> Result<Registration, RegistryError>
    where
        F: Fn(ToolExecution, PostSnapshot) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PostDecision> + Send + 'static,
    {
        let layer = self.layer;
        self.rt.add_listener(self.id, layer, |l, id| {
            l.post.push(Entry {
                id,
                layer,
                f: PostListener::Async(Arc::new(move |e, s| Box::pin(f(e, s)))),
            })
        })
    }

    /// Adds an observer of final results. Observers run last, see the frozen outcome, and a
    /// panicking observer is logged and skipped.
    pub fn on_result(
        &self,
        f: impl Fn(&ToolExecution, &ToolExecutionResult) + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        let layer = self.layer;
        self.rt.add_listener(self.id, layer, |l, id| {
            l.observers.push(Entry {
                id,
                layer,
                f: Arc::new(f),
            })
        })
    }

    /// Adds a listener of registry changes. Changes are shared-state notifications: every
    /// change listener sees every change, whatever its scope.
    pub fn on_change(
        &self,
        f: impl Fn(&RegistryChange) + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        let layer = self.layer;
        self.rt.add_listener(self.id, layer, |l, id| {
            l.change.push(Entry {
                id,
                layer,
                f: Arc::new(f),
            })
        })
    }

    /// Installs the approval service that answers [`PreDecision::Ask`], replacing any other.
    pub fn set_approval(
        &self,
        service: impl ApprovalService,
    ) -> Result<Registration, RegistryError> {
        let reg = {
            let mut st = write(&self.rt.0.state);
            if !st.layers.contains_key(&self.layer) {
                return Err(RegistryError::ScopeDisposed);
            }
            self.rt
                .add_item(&mut st, self.id, self.layer, ItemKind::Approval)
        };
        *write(&self.rt.0.approval) = Some((reg.id, Arc::new(service)));
        Ok(reg)
    }
}
