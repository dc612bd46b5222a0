//! The description of one call: what the caller supplies ([`ToolCall`]), the read-only view the
//! pipeline's listeners see ([`ToolExecution`]), and what a tool body receives
//! ([`ToolRunContext`]).

use std::any::Any;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::content::AdditionalContext;
use crate::registry::{ScopeKey, ToolRuntime};

/// The opaque identity of one execution, assigned by the registry.
///
/// It supports equality only: no public constructor, no serialization, and its `Debug` output is
/// a process-local number that means nothing outside this process. Pass it as
/// [`ToolCall::parent`] to correlate a nested call with the call that made it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExecutionToken(NonZeroU64);

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

impl ExecutionToken {
    pub(crate) fn fresh() -> Self {
        let n = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        // The counter starts at 1 and would need 2^64 calls to wrap.
        ExecutionToken(NonZeroU64::new(n).unwrap_or(NonZeroU64::MIN))
    }

    pub(crate) fn raw(self) -> u64 {
        self.0.get()
    }
}

impl fmt::Debug for ExecutionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ExecutionToken(#{})", self.0)
    }
}

/// What a caller (an agent loop) asks the registry to run.
#[derive(Debug, Clone)]
pub struct ToolCall {
    /// The model's id for the call.
    pub call_id: String,
    /// The tool name the model asked for.
    pub name: String,
    /// The arguments. They are frozen at entry: nothing in the pipeline can change them.
    pub arguments: Arc<Value>,
    /// The caller's cancellation token. Cancelling it cancels the call cooperatively.
    pub cancel: CancellationToken,
    /// The agent scope the call is made from; `None` is the global scope.
    pub agent: Option<ScopeKey>,
    /// The token of the execution that made this call, for nested calls.
    pub parent: Option<ExecutionToken>,
}

impl ToolCall {
    /// A call with a fresh cancellation token, from the global scope, without a parent.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<Arc<Value>>,
    ) -> Self {
        ToolCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            cancel: CancellationToken::new(),
            agent: None,
            parent: None,
        }
    }

    /// The same call with the caller's cancellation token.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// The same call made from an agent scope.
    pub fn with_agent(mut self, agent: ScopeKey) -> Self {
        self.agent = Some(agent);
        self
    }

    /// The same call as a nested call of `parent`.
    pub fn with_parent(mut self, parent: ExecutionToken) -> Self {
        self.parent = Some(parent);
        self
    }
}

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
}

impl Drop for ExecInner {
    fn drop(&mut self) {
        // The last owner of very deep arguments drops them without recursion.
        if let Some(args) = Arc::get_mut(&mut self.arguments) {
            crate::deep::discard(std::mem::take(args));
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

    pub(crate) fn applies(&self, layer: u64) -> bool {
        layer == crate::registry::GLOBAL_LAYER || self.0.chain.contains(&layer)
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

/// What a tool body receives beside its arguments.
///
/// It carries the execution's identity, the cancellation token the body must observe (the
/// caller's, fused with any token a wrapper installed), a way to defer contexts until the final
/// result, and access to the runtime's shared state.
#[derive(Clone)]
pub struct ToolRunContext {
    pub(crate) exec: ToolExecution,
    /// The fused token when a wrapper replaced the caller's; `None` means the caller's.
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) runtime: ToolRuntime,
}

impl ToolRunContext {
    /// The read-only view of this execution.
    pub fn execution(&self) -> &ToolExecution {
        &self.exec
    }
    /// The model's call id.
    pub fn call_id(&self) -> &str {
        self.exec.call_id()
    }
    /// The tool name.
    pub fn name(&self) -> &str {
        self.exec.name()
    }
    /// The registry-assigned token of this execution; pass it as the parent of nested calls.
    pub fn token(&self) -> ExecutionToken {
        self.exec.token()
    }
    /// The token of the execution that made this call.
    pub fn parent(&self) -> Option<ExecutionToken> {
        self.exec.parent()
    }
    /// The agent scope the call was made from.
    pub fn agent(&self) -> Option<ScopeKey> {
        self.exec.agent()
    }
    /// The token the body must observe: stop owned work and settle when it is cancelled.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancel.as_ref().unwrap_or(&self.exec.0.cancel)
    }
    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_cancelled()
    }
    /// Hold `context` until the call's final result; the loop appends it after the result.
    ///
    /// Deferred contexts survive a failing body and cancellation; only a post-execute block
    /// drops them. They come before any context a post-execute listener attaches.
    pub fn defer_context(&self, context: AdditionalContext) {
        self.exec
            .0
            .deferred
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(context);
    }
    /// Shared state of type `T` installed with [`ToolRuntime::insert_state`].
    pub fn state<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.runtime.state::<T>()
    }
    /// The runtime, for nested calls (pass [`token`](Self::token) as their parent).
    pub fn runtime(&self) -> &ToolRuntime {
        &self.runtime
    }

    /// A nested call made from this execution: same agent scope, this execution's token as its
    /// parent, and a cancellation token that this call's cancellation also cancels. Run it with
    /// `ctx.runtime().execute(...)`.
    pub fn nested_call(
        &self,
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<Arc<Value>>,
    ) -> ToolCall {
        ToolCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            cancel: self.cancellation().child_token(),
            agent: self.exec.agent(),
            parent: Some(self.exec.token()),
        }
    }
}

impl fmt::Debug for ToolRunContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRunContext")
            .field("execution", &self.exec)
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
