//! The fifth act: an approval that survives the process that asked. A first process asks to
//! write a file; the approval service answers "later", so the call is written to a SQLite file
//! and the process exits. A second process, started afterwards, resumes the same call from that
//! file with a person's yes, and the write happens, once: a third attempt is refused.
//!
//! The demo runs both processes as its own binary (`tools-demo --approval-step pause|resume`);
//! the act in [`crate::script`] starts them and prints what each did.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tools_approvals::SqliteStore;
use tools_runtime::ToolCall;
use tools_runtime::approvals::{ApprovalKey, ApprovalStore, DurableApprovals, PendingHandle};
use tools_runtime::hooks::Approval;

use crate::workspace::Workspace;
use crate::{DemoError, Setup};

/// The name of the agent scope the paused call comes from: how the second process finds it.
pub const AGENT: &str = "demo-agent";

/// The SQLite file of paused calls, in the workspace.
pub const STORE_FILE: &str = "approvals.db";

/// Where the first process leaves the handle (a host would show it to a reviewer, or keep it
/// with the conversation).
pub const HANDLE_FILE: &str = "pending-approval.txt";

/// The file the paused write creates.
pub const WRITTEN: &str = "APPROVED.md";

/// What it writes.
pub const WRITTEN_TEXT: &str = "# Approved\n\nWritten by a process that did not ask.\n";

/// The demo's MAC key. A service keeps its own with its other secrets; every replica that
/// resumes calls has the same.
const KEY: &[u8] = b"tools-demo: a service keeps its own key with its secrets";

/// The demo's registry with durable approvals over the workspace's SQLite file.
fn durable(ws: Arc<Workspace>) -> Result<(Setup, SqliteStore), DemoError> {
    let path = ws.root().join(STORE_FILE);
    let store = SqliteStore::open(&path).map_err(|e| DemoError::Approval(e.to_string()))?;
    let key = ApprovalKey::new(KEY).map_err(|e| DemoError::Approval(e.to_string()))?;
    let setup = crate::durable_setup(Some(ws), DurableApprovals::new(store.clone(), key), AGENT)?;
    Ok((setup, store))
}

/// The first process: asks to write [`WRITTEN`], is told "later", leaves the handle in
/// [`HANDLE_FILE`] and returns (the process then exits).
///
/// # Errors
///
/// When the workspace or the store cannot be opened, or the call does not pause.
pub async fn pause(root: &Path) -> Result<(), DemoError> {
    let ws = Arc::new(Workspace::open(root)?);
    let (setup, _store) = durable(ws)?;
    let call = ToolCall::new(
        "write-1",
        "write",
        json!({"path": WRITTEN, "content": WRITTEN_TEXT}),
    )
    .with_agent(setup.agent.key());
    let result = setup.runtime.execute(call).await;
    let handle = result
        .pending
        .as_ref()
        .and_then(|p| p.handle())
        .ok_or_else(|| {
            DemoError::Approval(format!("the write did not pause: {}", result.text()))
        })?;
    write_file(&root.join(HANDLE_FILE), &handle.to_string())
}

/// The second process: reads the handle and resumes the call with a person's yes; returns the
/// result's text.
///
/// # Errors
///
/// When the handle cannot be read, or the runtime refuses the resume (a second resume:
/// `APPROVAL_ALREADY_RESUMED`).
pub async fn resume(root: &Path) -> Result<String, DemoError> {
    let ws = Arc::new(Workspace::open(root)?);
    let (setup, _store) = durable(ws)?;
    let text = read_file(&root.join(HANDLE_FILE))?;
    let handle = parse_handle(&text)?;
    let result = setup
        .runtime
        .resume(&handle, Approval::Approved)
        .await
        .map_err(|e| DemoError::Approval(format!("{e} ({})", e.code())))?;
    Ok(result.text())
}

/// What the store says of the call: its state and outcome.
///
/// # Errors
///
/// When the store or the handle cannot be read.
pub async fn stored_state(root: &Path) -> Result<String, DemoError> {
    let store =
        SqliteStore::open(root.join(STORE_FILE)).map_err(|e| DemoError::Approval(e.to_string()))?;
    let handle = parse_handle(&read_file(&root.join(HANDLE_FILE))?)?;
    let call = store
        .get(&handle.id)
        .await
        .map_err(|e| DemoError::Approval(e.to_string()))?
        .ok_or_else(|| DemoError::Approval("the store lost the call".to_owned()))?;
    Ok(match call.outcome {
        Some(outcome) => format!("{} ({outcome})", call.state.as_str()),
        None => call.state.as_str().to_owned(),
    })
}

/// The handle as a reviewer reads it: what would run, from which agent, and why.
///
/// # Errors
///
/// When the handle file cannot be read.
pub fn review(root: &Path) -> Result<Vec<String>, DemoError> {
    let text = read_file(&root.join(HANDLE_FILE))?;
    let handle = parse_handle(&text)?;
    Ok(vec![
        format!("tool: {}", handle.tool),
        format!("arguments: {}", handle.arguments),
        format!("agent: {}", handle.agent.as_deref().unwrap_or("(global)")),
        format!("reason: {}", handle.reason.as_deref().unwrap_or("-")),
    ])
}

/// The handle in `text`, its tag checked with the demo's key before anything of it is read.
fn parse_handle(text: &str) -> Result<PendingHandle, DemoError> {
    let key = ApprovalKey::new(KEY).map_err(|e| DemoError::Approval(e.to_string()))?;
    PendingHandle::parse(text, &key).map_err(|e| DemoError::Approval(format!("{e} ({})", e.code())))
}

fn read_file(path: &PathBuf) -> Result<String, DemoError> {
    std::fs::read_to_string(path).map_err(|error| DemoError::Io {
        path: path.clone(),
        error,
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), DemoError> {
    std::fs::write(path, text).map_err(|error| DemoError::Io {
        path: path.to_owned(),
        error,
    })
}
