//! The toolkit's demo: one scripted model turn against a registry of `#[tool]` tools over a
//! small workspace folder, printed as a person would want to read it.
//!
//! `cargo run -p tools-demo` needs no network and no API key. It shows, in order:
//!
//! 1. **native tools**: a turn of seven calls run by `execute_batch` (the reads and the
//!    search overlap, the write runs alone after asking for approval, a guard refuses a path
//!    outside the workspace), each call and result drawn through the tool's own cards;
//! 2. **Code Mode in TypeScript**: the same agent presented as code: the assembled prompt
//!    (sections and sizes, the one tool offered), a program that fans out reads under
//!    `Promise.all`, catches a `ToolCallError` and returns a summary, and its sub-calls as a
//!    tree of cards built from the session events;
//! 3. **Code Mode in Python**: the same program in Python;
//! 4. the TypeScript SDK, Python SDK and Markdown docs of the tools, written into the workspace;
//! 5. **an approval that survives its process**: a write asked for in one process is paused
//!    into a SQLite file, and a second process resumes it with a person's yes ([`approvals`]).
//!
//! Colour is used only when standard output is a terminal and `NO_COLOR` is not set.

#![forbid(unsafe_code)]

pub mod approvals;
pub mod mcp_act;
pub mod script;
pub mod show;
pub mod tools;
pub mod workspace;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use tools_code::CodeMode;
use tools_runtime::approvals::DurableApprovals;
use tools_runtime::hooks::{Approval, PreDecision};
use tools_runtime::{PresentationMode, Registration, Scope, ToolExecution, ToolRuntime};

use crate::workspace::{Workspace, outside_problem};

/// Why the demo stopped.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The command line was not understood.
    #[error("{0}")]
    Usage(String),
    /// The workspace folder exists and was not made by this demo.
    #[error(
        "{}: the folder exists and was not made by tools-demo; pass --out with an empty or new folder",
        .path.display()
    )]
    NotAWorkspace {
        /// The folder.
        path: PathBuf,
    },
    /// A file or folder could not be used.
    #[error("{}: {error}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// Standard output could not be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
    /// A tool definition could not be built.
    #[error(transparent)]
    Definition(#[from] tools_runtime::error::DefinitionError),
    /// The registry refused a registration.
    #[error(transparent)]
    Registry(#[from] tools_runtime::error::RegistryError),
    /// The runtime could not be built (Code Mode refused its settings).
    #[error(transparent)]
    Build(#[from] tools_runtime::error::BuildError),
    /// The prompt could not be assembled.
    #[error(transparent)]
    Assembly(#[from] tools_runtime::presentation::AssemblyError),
    /// The tools do not form a catalog.
    #[error(transparent)]
    Catalog(#[from] tools_runtime::schema::CatalogError),
    /// The SDKs and docs could not be written.
    #[error(transparent)]
    Golden(#[from] tools_codegen::golden::GoldenError),
    /// The fifth act's paused call could not be kept, read or resumed.
    #[error("approval: {0}")]
    Approval(String),
    /// The sixth act's MCP server or client failed.
    #[error(transparent)]
    Mcp(#[from] tools_mcp::McpError),
    /// The sixth act saw what it should not have (a caller let in, a call refused otherwise).
    #[error("mcp act: {0}")]
    McpAct(String),
}

impl DemoError {
    /// The stable code of the failure.
    pub fn code(&self) -> &'static str {
        match self {
            DemoError::Usage(_) => "USAGE",
            DemoError::NotAWorkspace { .. } => "NOT_A_WORKSPACE",
            DemoError::Io { .. } => "IO",
            DemoError::Output(_) => "OUTPUT",
            DemoError::Definition(e) => e.code(),
            DemoError::Registry(e) => e.code(),
            DemoError::Build(e) => e.code(),
            DemoError::Assembly(e) => e.code(),
            DemoError::Catalog(_) => "CATALOG",
            DemoError::Golden(e) => e.code(),
            DemoError::Approval(_) => "APPROVAL",
            DemoError::Mcp(e) => e.code(),
            DemoError::McpAct(_) => "MCP_ACT",
        }
    }
}

/// What the reason of the demo's approval question says.
pub const APPROVAL_REASON: &str = "a write changes a file in the workspace";

/// One approval question and its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The call that asked.
    pub call_id: String,
    /// Why.
    pub reason: Option<String>,
    /// The answer.
    pub answer: Approval,
}

/// A registry with the demo's tools and policy, and the agent scope the model's calls come
/// from.
#[derive(Debug)]
pub struct Setup {
    /// The registry.
    pub runtime: ToolRuntime,
    /// The agent the model's calls are made from.
    pub agent: Scope,
    /// Every approval question asked so far, in order.
    pub approvals: Arc<Mutex<Vec<Asked>>>,
    // Dropped before the scopes that made them.
    _registrations: Vec<Registration>,
    _plugin: Scope,
}

impl Setup {
    /// The approval questions asked by `call_id`.
    pub fn asked_by(&self, call_id: &str) -> Vec<Asked> {
        self.approvals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|a| a.call_id == call_id)
            .cloned()
            .collect()
    }
}

/// Builds a registry with the four tools in its global scope, the workspace guard, a
/// pre-execute listener that asks before every write, an approval service that answers yes
/// (and logs the question), and an agent scope presented as `mode`. `code` configures Code
/// Mode; `state` is the workspace the tools work on.
///
/// # Errors
///
/// When a definition, registration or the Code Mode settings are refused.
pub fn setup(
    code: Option<CodeMode>,
    mode: PresentationMode,
    state: Option<Arc<Workspace>>,
) -> Result<Setup, DemoError> {
    build(code, mode, state, None)
}

/// The same registry, natively, with durable approvals: the approval service answers "later",
/// so a write pauses into `durable`'s store, and the agent scope is named `agent` (a resume
/// finds it by that name).
///
/// # Errors
///
/// When a definition or registration is refused, or `agent` is taken.
pub fn durable_setup(
    state: Option<Arc<Workspace>>,
    durable: DurableApprovals,
    agent: &str,
) -> Result<Setup, DemoError> {
    build(
        None,
        PresentationMode::Native,
        state,
        Some((durable, agent)),
    )
}

fn build(
    code: Option<CodeMode>,
    mode: PresentationMode,
    state: Option<Arc<Workspace>>,
    durable: Option<(DurableApprovals, &str)>,
) -> Result<Setup, DemoError> {
    let mut builder = ToolRuntime::builder();
    if let Some(code) = code {
        builder = builder.extension(code);
    }
    let (answer, agent_name) = match durable {
        Some((durable, agent)) => {
            builder = builder.durable_approvals(durable);
            (Approval::later(), Some(agent))
        }
        None => (Approval::Approved, None),
    };
    let runtime = builder.build()?;
    if let Some(state) = state {
        runtime.insert_state_arc(state);
    }
    let plugin = runtime.scope();
    let mut registrations = Vec::new();
    for definition in tools::definitions()? {
        registrations.push(plugin.register(definition)?);
    }
    registrations.push(plugin.guard(workspace_guard)?);
    registrations.push(plugin.on_pre_execute(|exec, decision| {
        if exec.name() == "write" && decision == PreDecision::Allow {
            PreDecision::ask(APPROVAL_REASON)
        } else {
            decision
        }
    })?);
    let approvals = Arc::new(Mutex::new(Vec::new()));
    let log = approvals.clone();
    registrations.push(plugin.set_approval(
        move |exec: ToolExecution, reason: Option<String>| {
            // The demo's person at the keyboard: says yes (or, with durable approvals, "later":
            // the call pauses), and the demo shows the question.
            let answer = answer.clone();
            log.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(Asked {
                    call_id: exec.call_id().to_owned(),
                    reason,
                    answer: answer.clone(),
                });
            async move { answer }
        },
    )?);
    let agent = match agent_name {
        Some(name) => runtime.agent_scope_named(name)?,
        None => runtime.agent_scope(),
    };
    if mode != PresentationMode::Native {
        registrations.push(agent.present_as(mode)?);
    }
    Ok(Setup {
        runtime,
        agent,
        approvals,
        _registrations: registrations,
        _plugin: plugin,
    })
}

/// The guard of the demo: every path a call names must stay inside the workspace.
pub fn workspace_guard(exec: &ToolExecution) -> Option<String> {
    let args = exec.arguments();
    let paths: Vec<&str> = match exec.name() {
        "read" | "write" => args["path"].as_str().into_iter().collect(),
        "shell" => args["command"]
            .as_str()
            .map(tools::command_paths)
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    paths
        .into_iter()
        .find(|p| outside_problem(p).is_some())
        .map(|p| format!("`{p}` is outside the workspace; paths are relative to its root"))
}

/// The catalog of the demo's tools (what the SDKs and docs are rendered from).
///
/// # Errors
///
/// When the registry cannot be built or the tools do not form a catalog.
pub fn catalog() -> Result<tools_runtime::schema::Catalog, DemoError> {
    let setup = setup(None, PresentationMode::Native, None)?;
    Ok(setup.runtime.catalog(setup.agent.key())?)
}
