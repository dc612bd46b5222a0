//! What a caller supplies: the [`ToolCall`], the [`ExecutionToken`] the registry assigns to each
//! execution, the [`ScopeKey`] naming the layer a call is made from, and the [`Principal`] it
//! is made for.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::decision::GivenDecision;
use super::progress::{Progress, ProgressSink};

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

/// Who a call is made for: the authenticated caller (an OAuth token's subject, client and
/// scopes, a session's user). The host that authenticated the caller sets it
/// ([`ToolCall::with_principal`]); it travels with the call, to the calls the call makes
/// (nested calls, a Code Mode program's calls) and through a pause (the reviewer of a paused
/// call sees who asked, and the resumed call is made for the same principal). Listeners,
/// guards, the approval service and bodies read it
/// ([`ToolExecution::principal`](crate::ToolExecution::principal)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Principal {
    /// Who: the token's `sub`, a user id.
    pub subject: String,
    /// The client (application) acting for the subject, if known (a token's `client_id` or
    /// `azp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The scopes granted to the caller (a token's `scope`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Other claims the host wants policy to see.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub claims: serde_json::Map<String, Value>,
}

impl Principal {
    /// A principal of this subject, with no client, scopes or claims.
    pub fn new(subject: impl Into<String>) -> Self {
        Principal {
            subject: subject.into(),
            client_id: None,
            scopes: Vec::new(),
            claims: serde_json::Map::new(),
        }
    }

    /// The same, acting through this client.
    #[must_use]
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The same, with these scopes granted.
    #[must_use]
    pub fn with_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The same, with one more claim.
    #[must_use]
    pub fn with_claim(mut self, name: impl Into<String>, value: Value) -> Self {
        self.claims.insert(name.into(), value);
        self
    }

    /// Whether `scope` is granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
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
    /// Set on the calls a program makes through a registry-owned tool (a `run_code` program's
    /// tool calls): the origin the runtime minted for that run. The call's `parent` is then
    /// the run's token, whatever `parent` says.
    pub program: Option<ProgramOrigin>,
    /// Where the call's progress reports go (see [`crate::progress`]): set by the caller that
    /// wants them (an MCP server forwarding them to its client, a UI).
    pub progress: Option<ProgressSink>,
    /// A person's decision for this call, when a resumed program makes again the call it
    /// paused on (see [`crate::approvals`]); only the runtime makes one.
    pub decided: Option<GivenDecision>,
    /// Who the call is made for ([`Principal`]); `None` when the host authenticated no one.
    pub principal: Option<Arc<Principal>>,
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
            program: None,
            progress: None,
            decided: None,
            principal: None,
        }
    }

    /// The same call made for `principal` (see [`Principal`]).
    pub fn with_principal(mut self, principal: impl Into<Arc<Principal>>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// The same call with the decision a person gave for it while its program was paused
    /// ([`ResumedRun::decision`](crate::approvals::ResumedRun::decision)).
    pub fn with_decision(mut self, decision: GivenDecision) -> Self {
        self.decided = Some(decision);
        self
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

    /// The same call as one a program makes: `origin` comes from
    /// [`ToolRunContext::program_origin`](crate::ToolRunContext::program_origin) of the
    /// registry-owned execution that runs the program, and becomes the call's parent too.
    pub fn with_program(mut self, origin: ProgramOrigin) -> Self {
        self.parent = Some(origin.run);
        self.program = Some(origin);
        self
    }

    /// The same call with `f` receiving each progress report its body makes, as the body makes
    /// it (see [`crate::progress`]); never after the call's result.
    pub fn with_progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(ProgressSink::new(f));
        self
    }

    /// Where the call comes from, as the runtime will see it.
    pub fn origin(&self) -> CallOrigin {
        match (self.program, self.parent) {
            (Some(program), _) => CallOrigin::Program(program),
            (None, Some(parent)) => CallOrigin::Nested { parent },
            (None, None) => CallOrigin::Direct,
        }
    }
}

/// Where a call comes from: what the registry's rules (Code Mode's code-only rule, a tool's
/// [`Callers`](crate::Callers)) read, and what tells one call from another in a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallOrigin {
    /// The caller's own call (a model's turn): it has no parent.
    Direct,
    /// A call another execution made in turn (a tool body calling a tool).
    Nested {
        /// The execution that made the call.
        parent: ExecutionToken,
    },
    /// A call a program made (a `run_code` program's tool call).
    Program(ProgramOrigin),
}

impl CallOrigin {
    /// Whether a program made the call.
    pub fn is_program(self) -> bool {
        matches!(self, CallOrigin::Program(_))
    }

    /// Whether the caller made the call itself (no parent).
    pub fn is_direct(self) -> bool {
        matches!(self, CallOrigin::Direct)
    }

    /// The execution that made the call, if another one did.
    pub fn parent(self) -> Option<ExecutionToken> {
        match self {
            CallOrigin::Direct => None,
            CallOrigin::Nested { parent } => Some(parent),
            CallOrigin::Program(program) => Some(program.run),
        }
    }
}

/// The origin of the calls one program run makes. Only the runtime makes one (there is no
/// public constructor): [`ToolRunContext::program_origin`](crate::ToolRunContext::program_origin)
/// gives it to the body of a registry-owned tool, such as Code Mode's `run_code`, which sets it
/// on each call the program makes ([`ToolCall::with_program`]). A tool registered through a
/// scope cannot mint one, so a call that says it comes from a program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProgramOrigin {
    run: ExecutionToken,
}

impl ProgramOrigin {
    pub(crate) fn mint(run: ExecutionToken) -> Self {
        ProgramOrigin { run }
    }

    /// The execution running the program (the `run_code` call).
    pub fn run(self) -> ExecutionToken {
        self.run
    }
}

pub(crate) const GLOBAL_LAYER: u64 = 0;

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

/// Whether a call may run beside other calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExecutionMode {
    /// The call may overlap with neighbouring parallel calls.
    Parallel,
    /// The call runs alone, as an ordering barrier.
    Exclusive,
}
