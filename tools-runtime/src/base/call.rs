//! What a caller supplies: the [`ToolCall`], the [`ExecutionToken`] the registry assigns to each
//! execution, and the [`ScopeKey`] naming the layer a call is made from.

use std::fmt;
use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

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
    pub decided: Option<crate::base::approvals::GivenDecision>,
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
        }
    }

    /// The same call with the decision a person gave for it while its program was paused
    /// ([`ResumedRun::decision`](crate::approvals::ResumedRun::decision)).
    pub fn with_decision(mut self, decision: crate::base::approvals::GivenDecision) -> Self {
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
