//! The toolkit's demo: one scripted model turn against a registry of `#[tool]` tools over a
//! small workspace folder, printed as a person would want to read it.
//!
//! `cargo run -p tools-demo` needs no network and no API key (it needs `python3` for its Python
//! part). It makes a small folder in `target/demo-workspace` and prints six acts:
//!
//! 1. **Native tools.** The model's turn of seven calls runs through `execute_batch`: the two
//!    reads and the search overlap, the write asks for approval (answered yes by the script) and
//!    runs alone, the two shell commands overlap after it, and the guard refuses
//!    `../secret.txt`. Every call and result is drawn through the tool's own cards: a read
//!    line-numbered, a search grouped by file, a write as a unified diff, a command as a terminal.
//! 2. **Code Mode, TypeScript.** The same agent presented as code: the prompt sections and their
//!    sizes, the one tool offered (`run_code`), a program that reads three files under
//!    `Promise.all`, catches the `ToolCallError` of a refused path, searches, writes a summary
//!    and returns it; its sub-calls are drawn as a tree from the session events, each through
//!    its card.
//! 3. **Code Mode, Python.** The same program with `asyncio.gather`.
//! 4. The TypeScript SDK, Python SDK and docs of the tools, written to `generated/` in the folder.
//! 5. **An approval that outlives its process** ([`approvals`]). The demo starts itself twice
//!    more: the first process asks to write `APPROVED.md`, its approval service answers
//!    "later", the call goes to a SQLite file (`approvals.db`, `tools-approvals`) and the process
//!    exits; the second resumes the same call from the file with a person's yes and the write
//!    happens; a third resume of the same handle is refused (`APPROVAL_ALREADY_RESUMED`).
//! 6. **MCP with identity** ([`mcp_act`]). The same tools served over streamable HTTP on
//!    loopback behind bearer tokens (`McpServer::bearer_auth`; every call needs `files:read`,
//!    `write` also `files:write`, `BearerAuth::require_scope`). A caller without a token is
//!    refused (`MCP_AUTH_REQUIRED`); a reader imports the tools with its token
//!    (`McpSource::http(url).bearer(..)`), reads, and its write is refused for the missing scope
//!    (`MCP_AUTH_FAILED`, the step-up challenge); an editor's write runs. The served registry's
//!    listeners show whom each call was made for.
//!
//! Colour is on only when the output is a terminal and `NO_COLOR` is unset. `--out DIR` puts the
//! folder elsewhere; the demo clears only a folder it made (it leaves a marker file) or an empty
//! one. Its tests run it and compare the output with a snapshot (durations masked), snapshot
//! each tool's cards, and keep the SDKs and docs of its tools checked in under `demo/generated/`
//! with the golden helper of `tools-codegen` (`demo/tests/golden.rs`; when a tool changes,
//! `TOOLS_CODEGEN_UPDATE=1 cargo test -p tools-demo` rewrites the files). `cargo run -p
//! tools-demo --features otel` exports the demo's spans over OTLP (`tools-otel`).

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
