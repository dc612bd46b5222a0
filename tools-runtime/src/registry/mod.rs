//! The registry room: the runtime's layers (the global one and nested agent scopes), what is
//! registered in them, masks and reservations, how a name resolves for a scope, and the
//! [`Scope`] handles everything is registered through (in `scope`). Its data is declared in
//! [`crate::runtime::handle`]; this room gives it behaviour.

mod admission;
mod scope;

pub use scope::{Registration, Scope};

use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tools_schema::catalog::CatalogEntry;

use crate::call::tool_call::{CallOrigin, GLOBAL_LAYER, ScopeKey};
use crate::errors::RegistryError;
use crate::mode::PresentationMode;
use crate::policy::{ApprovalService, RegistryChange};
use crate::runtime::definition::{Callers, RESERVED_NAMES, ToolDefinition};
use crate::runtime::handle::{
    CallSnapshot, Item, ItemKind, Layer, State, ToolRuntime, read, write,
};
use crate::runtime::handle::{ChangeFn, Listeners};

/// Whether `name` is one of the registry's own tools (`run_code`, `describe_tools`): reserved,
/// never registered, reserved or restricted by a scope, and callable directly under `code`.
pub(crate) fn is_registry_owned(name: &str) -> bool {
    RESERVED_NAMES.contains(&name)
}

/// The owner of items no scope owns (agent layers made by [`ToolRuntime::agent_scope`]).
const ROOT_OWNER: u64 = 0;

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

    /// The mode of the nearest layer on `chain` that chose one, else `default`.
    fn mode(&self, chain: &[u64], default: PresentationMode) -> PresentationMode {
        chain
            .iter()
            .find_map(|l| self.layers.get(l).and_then(|layer| layer.present_as))
            .map_or(default, |(_, mode)| mode)
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

impl ToolRuntime {
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

    /// A new agent scope directly under the global layer, with a name unique among the live
    /// agent scopes of this runtime. The name is how a [paused call](crate::approvals) made
    /// from the scope finds it again when it is resumed, in this process or another one that
    /// makes a scope of the same name.
    ///
    /// # Errors
    ///
    /// [`RegistryError::AgentNameTaken`] while a live agent scope has the name.
    pub fn agent_scope_named(&self, name: impl Into<String>) -> Result<Scope, RegistryError> {
        self.new_named_agent(ROOT_OWNER, GLOBAL_LAYER, name.into())
    }

    /// The live agent scope named `name` (see [`agent_scope_named`](Self::agent_scope_named)).
    pub fn named_agent(&self, name: &str) -> Option<ScopeKey> {
        read(&self.0.state).names.get(name).copied().map(ScopeKey)
    }

    /// The name of the agent scope `scope`, if it has one.
    pub fn agent_name(&self, scope: ScopeKey) -> Option<Arc<str>> {
        read(&self.0.state)
            .layers
            .get(&scope.0)
            .and_then(|layer| layer.name.clone())
    }

    pub(crate) fn new_named_agent(
        &self,
        owner: u64,
        parent: u64,
        name: String,
    ) -> Result<Scope, RegistryError> {
        let mut st = write(&self.0.state);
        if st.names.contains_key(name.as_str()) {
            return Err(RegistryError::AgentNameTaken { name });
        }
        Ok(self.agent_in(&mut st, owner, parent, Some(Arc::from(name))))
    }

    fn new_agent(&self, owner: u64, parent: u64) -> Scope {
        let mut st = write(&self.0.state);
        self.agent_in(&mut st, owner, parent, None)
    }

    fn agent_in(&self, st: &mut State, owner: u64, parent: u64, name: Option<Arc<str>>) -> Scope {
        let reg = self.add_item(st, owner, parent, ItemKind::Layer);
        let layer = reg.id;
        if st.layers.contains_key(&parent) {
            let mut new = Layer::new(Some(parent));
            if let Some(name) = name {
                st.names.insert(name.clone(), layer);
                new.name = Some(name);
            }
            st.layers.insert(layer, new);
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

    /// The definition `name` resolves to as `scope` sees it: its own and its ancestors' local
    /// tools shadow globals, and masked globals read as absent.
    pub fn get(&self, name: &str, scope: ScopeKey) -> Option<ToolDefinition> {
        let st = read(&self.0.state);
        let chain = st.chain(scope.0)?;
        self.resolve_in(&st, name, &chain)
    }

    /// Whether a global capability name passes every mask on `scope`'s chain, whether or not a
    /// tool of that name is registered. A disposed scope admits nothing.
    pub fn is_admitted(&self, name: &str, scope: ScopeKey) -> bool {
        let st = read(&self.0.state);
        match st.chain(scope.0) {
            Some(chain) => !is_registry_owned(name) && st.admitted(name, &chain),
            None => false,
        }
    }

    /// The schemas of every tool `scope` sees, without their bodies, in name order: the
    /// agent's capabilities, the same whatever its presentation mode and whatever each tool's
    /// [`Callers`] (what a prompt offers is [`native_schemas`](Self::native_schemas) and
    /// [`sdk_schemas`](Self::sdk_schemas)).
    pub fn schemas(&self, scope: ScopeKey) -> Vec<CatalogEntry> {
        let st = read(&self.0.state);
        let Some(chain) = st.chain(scope.0) else {
            return Vec::new();
        };
        st.visible(&chain)
            .into_values()
            .map(ToolDefinition::catalog_entry)
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

    /// The schemas of the tools `scope`'s `run_code` programs can call, in name order: every
    /// visible tool whose [`Callers`] allow code (all but the direct-only ones). This is the
    /// SDK's tool set: prompt assembly renders the SDK (or its index) from exactly these, and
    /// `describe_tools` describes only these. Unlike [`schemas`](Self::schemas), it does not
    /// depend on whether the scope's mode offers Code Mode at all.
    pub fn sdk_schemas(&self, scope: ScopeKey) -> Vec<CatalogEntry> {
        self.presented(scope, Callers::allows_code)
    }

    /// The names of [`sdk_schemas`](Self::sdk_schemas), in name order.
    pub fn sdk_names(&self, scope: ScopeKey) -> Vec<String> {
        let st = read(&self.0.state);
        let Some(chain) = st.chain(scope.0) else {
            return Vec::new();
        };
        st.visible(&chain)
            .into_iter()
            .filter(|(_, def)| def.callers().allows_code())
            .map(|(name, _)| name.to_owned())
            .collect()
    }

    /// The schemas of the tools `scope` can offer the model as definitions to call directly,
    /// in name order: every visible tool whose [`Callers`] allow a direct call (all but the
    /// code-only ones). Prompt assembly offers exactly these where the mode is `native` or
    /// `both`.
    pub fn native_schemas(&self, scope: ScopeKey) -> Vec<CatalogEntry> {
        self.presented(scope, Callers::allows_direct)
    }

    fn presented(&self, scope: ScopeKey, keep: fn(Callers) -> bool) -> Vec<CatalogEntry> {
        let st = read(&self.0.state);
        let Some(chain) = st.chain(scope.0) else {
            return Vec::new();
        };
        st.visible(&chain)
            .into_values()
            .filter(|def| keep(def.callers()))
            .map(ToolDefinition::catalog_entry)
            .collect()
    }

    /// What a call reads once, at entry: the definition it resolves to, the agent's chain, the
    /// listener lists, and whether the registry's admission rules refuse it (see
    /// [`admission`]).
    pub(crate) fn snapshot(
        &self,
        name: &str,
        agent: Option<ScopeKey>,
        origin: CallOrigin,
    ) -> CallSnapshot {
        let listeners = read(&self.0.listeners).clone();
        let st = read(&self.0.state);
        let chain = match agent {
            None => Some(Vec::new()),
            Some(key) => st.chain(key.0),
        };
        let Some(chain) = chain else {
            return CallSnapshot {
                def: None,
                chain: None,
                listeners,
                owned: false,
                refusal: None,
                mode: None,
            };
        };
        let def = self.resolve_in(&st, name, &chain);
        let mode = st.mode(&chain, self.0.mode);
        let refusal = def.as_ref().and_then(|def| {
            admission::refusal(&admission::CallFacts {
                name,
                callers: def.callers(),
                mode,
                origin,
            })
        });
        let owned = def.is_some() && is_registry_owned(name);
        CallSnapshot {
            def: if refusal.is_some() { None } else { def },
            chain: Some(chain),
            listeners,
            owned,
            refusal,
            mode: Some(mode),
        }
    }

    /// `name` as `chain` sees it: a registry-owned name is the definition an extension
    /// installed, wherever the scope's mode offers it; every other name resolves through the
    /// layers.
    fn resolve_in(&self, st: &State, name: &str, chain: &[u64]) -> Option<ToolDefinition> {
        if !is_registry_owned(name) {
            return st.resolve(name, chain).cloned();
        }
        let (def, offered) = self.0.owned.get(name)?;
        offered(st.mode(chain, self.0.mode)).then(|| def.clone())
    }

    /// The names reserved in the global layer and on `scope`'s chain.
    pub(crate) fn reserved_names(&self, scope: ScopeKey) -> BTreeSet<String> {
        let st = read(&self.0.state);
        let chain = st.chain(scope.0).unwrap_or_default();
        std::iter::once(GLOBAL_LAYER)
            .chain(chain)
            .filter_map(|l| st.layers.get(&l))
            .flat_map(|layer| layer.reserved.keys().cloned())
            .collect()
    }

    /// The presentation mode `scope` uses: the nearest `present_as` on its chain, else the
    /// runtime's mode. `None` for a disposed scope.
    pub fn presentation_mode(&self, scope: ScopeKey) -> Option<PresentationMode> {
        let st = read(&self.0.state);
        let chain = st.chain(scope.0)?;
        Some(st.mode(&chain, self.0.mode))
    }

    /// The registry-owned definition of `name` (`run_code`, `describe_tools`), when an
    /// extension installed one (see [`extension`](crate::extension)).
    pub fn owned_definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.0.owned.get(name).map(|(def, _)| def)
    }

    /// A number that changes whenever the registry's tools, reservations, masks or modes
    /// change: a view computed from them (an extension's cached SDK) compares it to know it is
    /// current.
    pub fn generation(&self) -> u64 {
        self.0.generation.load(Ordering::Acquire)
    }

    pub(crate) fn approval(&self) -> Option<Arc<dyn ApprovalService>> {
        read(&self.0.approval).as_ref().map(|(_, s)| s.clone())
    }

    fn notify(&self, changes: &[RegistryChange]) {
        if changes.is_empty() {
            return;
        }
        self.0.generation.fetch_add(1, Ordering::AcqRel);
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
    ///
    /// What is removed is dropped after the locks are released: a tool's body, a listener or
    /// an approval service may own a [`Scope`] (a tool that registers tools keeps
    /// what it registered), whose drop disposes through this same function.
    fn dispose_items(&self, ids: &[u64]) {
        let mut changes = Vec::new();
        let mut dropped_listeners = Vec::new();
        let mut dropped_approval = Vec::new();
        let mut released: Vec<Box<dyn std::any::Any>> = Vec::new();
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
                            released.push(Box::new(layer.tools.remove(&name)));
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
                    ItemKind::PresentAs => {
                        if let Some(layer) = st.layers.get_mut(&item.layer)
                            && layer.present_as.is_some_and(|(pid, _)| pid == id)
                        {
                            layer.present_as = None;
                            changes.push(RegistryChange::PresentationChanged { scope });
                        }
                    }
                    ItemKind::Listener => dropped_listeners.push(id),
                    ItemKind::Approval => dropped_approval.push(id),
                    ItemKind::Layer => {
                        // The agent layer's id is the item's id; everything in it, and every
                        // nested layer, goes with it.
                        let layer_id = id;
                        let removed = st.layers.remove(&layer_id);
                        if let Some(name) = removed.as_ref().and_then(|l| l.name.as_ref())
                            && st.names.get(name) == Some(&layer_id)
                        {
                            st.names.remove(name);
                        }
                        released.push(Box::new(removed));
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
                released.push(Box::new(std::mem::replace(&mut *guard, Arc::new(next))));
            }
            if !dropped_approval.is_empty() {
                let mut guard = write(&self.0.approval);
                if guard
                    .as_ref()
                    .is_some_and(|(id, _)| dropped_approval.contains(id))
                {
                    released.push(Box::new(guard.take()));
                }
            }
        }
        drop(released);
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
