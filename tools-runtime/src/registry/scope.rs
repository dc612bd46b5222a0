//! [`Scope`]: the handle a plugin or an agent registers through, and the [`Registration`] handle
//! of one registration.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Weak};

use serde_json::Value;
use tools_schema::catalog::CatalogEntry;

use crate::call::progress::Progress;
use crate::call::result::ToolExecutionResult;
use crate::call::tool_call::{GLOBAL_LAYER, ScopeKey};
use crate::errors::{RegistryError, ToolError};
use crate::execution::ToolExecution;
use crate::mode::PresentationMode;
use crate::policy::{
    ApprovalService, PostDecision, PostSnapshot, PostView, PreDecision, RegistryChange,
};
use crate::runtime::definition::{ToolDefinition, ToolDefinitionBuilder};
use crate::runtime::handle::{ChangeFn, Dispatch, Entry, GuardFn, Listeners, Next, ObserverFn};
use crate::runtime::handle::{ItemKind, Shared, ToolFilter, ToolRuntime, write};
use crate::runtime::handle::{PostListener, PreListener, ProgressListenerFn, WrapperFn};

/// The handle of one registration (a tool, a reservation, a mask, a listener, the approval
/// service). Dropping it keeps the registration, which lasts until [`dispose`](Self::dispose)
/// or until the scope it was made through is disposed.
#[must_use = "keep the handle to remove the registration early; it otherwise lasts as long as its scope"]
pub struct Registration {
    pub(super) rt: Weak<Shared>,
    pub(super) id: u64,
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
    pub(super) rt: ToolRuntime,
    pub(super) id: u64,
    pub(super) layer: u64,
    /// Whether dropping this scope removes its (agent) layer.
    pub(super) own_layer: bool,
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

    /// A new agent scope nested in this one, as [`agent`](Self::agent), named `name`: see
    /// [`ToolRuntime::agent_scope_named`].
    ///
    /// # Errors
    ///
    /// [`RegistryError::AgentNameTaken`] while a live agent scope has the name.
    pub fn agent_named(&self, name: impl Into<String>) -> Result<Scope, RegistryError> {
        self.rt.new_named_agent(self.id, self.layer, name.into())
    }

    /// Registers `definition` in this scope's layer. A duplicate name in the same layer is an
    /// error; an agent-local tool shadows a global of the same name for that agent only. The
    /// names `run_code` and `describe_tools` are reserved and always refused.
    pub fn register(&self, definition: ToolDefinition) -> Result<Registration, RegistryError> {
        let name = definition.name().to_owned();
        if super::is_registry_owned(&name) {
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
        builder: ToolDefinitionBuilder,
    ) -> Result<Registration, RegistryError> {
        self.register(builder.build()?)
    }

    /// Reserves a capability name in this layer without a visible definition: it joins the
    /// names masks may name, but reaches no schema until a real registration supplies it.
    pub fn reserve(&self, name: impl Into<String>) -> Result<Registration, RegistryError> {
        let name = name.into();
        if super::is_registry_owned(&name) {
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
        if let Some(name) = filter.names().iter().find(|n| super::is_registry_owned(n)) {
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

    /// Chooses how this agent scope (and the agent scopes nested in it) presents its tools to
    /// the model, shadowing the runtime's mode. Only agent scopes can choose, once each; the
    /// choice goes with the returned registration or the scope. It changes what
    /// [`ToolRuntime::assemble`](crate::ToolRuntime::assemble) contributes and, under
    /// [`Code`](PresentationMode::Code), which calls run directly; [`schemas`](Self::schemas) is
    /// unchanged.
    pub fn present_as(&self, mode: PresentationMode) -> Result<Registration, RegistryError> {
        if self.layer == GLOBAL_LAYER {
            return Err(RegistryError::PresentAsOnGlobal);
        }
        let reg = {
            let mut st = write(&self.rt.0.state);
            let Some(layer) = st.layers.get(&self.layer) else {
                return Err(RegistryError::ScopeDisposed);
            };
            if let Some((_, current)) = layer.present_as {
                return Err(RegistryError::PresentAsTwice {
                    current: current.as_str().to_owned(),
                });
            }
            let reg = self
                .rt
                .add_item(&mut st, self.id, self.layer, ItemKind::PresentAs);
            if let Some(layer) = st.layers.get_mut(&self.layer) {
                layer.present_as = Some((reg.id, mode));
            }
            reg
        };
        self.rt
            .notify(&[RegistryChange::PresentationChanged { scope: self.key() }]);
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
    pub fn schemas(&self) -> Vec<CatalogEntry> {
        self.rt.schemas(self.key())
    }

    /// Adds a synchronous pre-execute listener. It receives the decision so far and returns the
    /// next one; listeners run in registration order. A listener registered through an agent
    /// scope sees only calls made from that agent (and its nested agents).
    pub fn on_pre_execute(
        &self,
        f: impl Fn(&ToolExecution, PreDecision) -> PreDecision + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        self.listen(|l| &mut l.pre, PreListener::Sync(Arc::new(f)))
    }

    /// Adds an asynchronous pre-execute listener (see [`on_pre_execute`](Self::on_pre_execute)).
    pub fn on_pre_execute_async<F, Fut>(&self, f: F) -> Result<Registration, RegistryError>
    where
        F: Fn(ToolExecution, PreDecision) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PreDecision> + Send + 'static,
    {
        self.listen(
            |l| &mut l.pre,
            PreListener::Async(Arc::new(move |e, d| Box::pin(f(e, d)))),
        )
    }

    /// Adds a guard: after the pre-execute listeners, each guard may return a denial reason.
    /// A guard's denial is final; nothing later can undo it.
    pub fn guard(
        &self,
        f: impl Fn(&ToolExecution) -> Option<String> + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        self.listen::<Arc<GuardFn>>(|l| &mut l.guards, Arc::new(f))
    }

    /// Adds an execute wrapper around the body (for timeouts, retries, metrics). Wrappers run
    /// in registration order, the first outermost. See [`Next`] and [`Dispatch`].
    pub fn wrap_execute<F, Fut>(&self, f: F) -> Result<Registration, RegistryError>
    where
        F: Fn(Dispatch, Next) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.listen::<Arc<WrapperFn>>(|l| &mut l.wrappers, Arc::new(move |d, n| Box::pin(f(d, n))))
    }

    /// Adds a synchronous post-execute listener; it sees each successful result (with earlier
    /// listeners' replacements) and accepts, replaces, or blocks it.
    pub fn on_post_execute(
        &self,
        f: impl Fn(&ToolExecution, PostView<'_>) -> PostDecision + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        self.listen(|l| &mut l.post, PostListener::Sync(Arc::new(f)))
    }

    /// Adds an asynchronous post-execute listener (it receives an owned copy of the result).
    pub fn on_post_execute_async<F, Fut>(&self, f: F) -> Result<Registration, RegistryError>
    where
        F: Fn(ToolExecution, PostSnapshot) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = PostDecision> + Send + 'static,
    {
        self.listen(
            |l| &mut l.post,
            PostListener::Async(Arc::new(move |e, s| Box::pin(f(e, s)))),
        )
    }

    /// Adds an observer of final results. Observers run last, see the frozen outcome, and a
    /// panicking observer is logged and skipped.
    pub fn on_result(
        &self,
        f: impl Fn(&ToolExecution, &ToolExecutionResult) + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        self.listen::<Arc<ObserverFn>>(|l| &mut l.observers, Arc::new(f))
    }

    /// Adds a listener of the progress reports of the calls this scope's listeners apply to
    /// (see [`crate::progress`]). It runs on the reporting body's task: keep it short; one
    /// that panics is logged and skipped.
    pub fn on_progress(
        &self,
        f: impl Fn(&ToolExecution, &Progress) + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        self.listen::<Arc<ProgressListenerFn>>(|l| &mut l.progress, Arc::new(f))
    }

    /// Adds a listener of registry changes. Changes are shared-state notifications: every
    /// change listener sees every change, whatever its scope.
    pub fn on_change(
        &self,
        f: impl Fn(&RegistryChange) + Send + Sync + 'static,
    ) -> Result<Registration, RegistryError> {
        self.listen::<Arc<ChangeFn>>(|l| &mut l.change, Arc::new(f))
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

    /// Adds `f` to the listener list `list` picks, owned by this scope and applying to its
    /// layer: the one way every `on_*`, `guard` and `wrap_execute` registers.
    fn listen<T>(
        &self,
        list: fn(&mut Listeners) -> &mut Vec<Entry<T>>,
        f: T,
    ) -> Result<Registration, RegistryError> {
        let layer = self.layer;
        self.rt
            .add_listener(self.id, layer, |l, id| list(l).push(Entry { id, layer, f }))
    }
}
