//! What the modules share: the key, a runtime over a store, and the `append` tool whose body
//! leaves a side effect that outlives its process (a line appended to a file) or counts its runs
//! in memory.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tools_runtime::approvals::{
    ApprovalKey, ApprovalStore, DurableApprovals, PendingHandle, PendingRecord,
};
use tools_runtime::hooks::{Approval, PreDecision};
use tools_runtime::{
    Output, Registration, Scope, ToolDefinition, ToolError, ToolExecutionResult, ToolRuntime, codes,
};

pub fn key() -> ApprovalKey {
    ApprovalKey::new(b"tools-approvals test key, 32 b..").unwrap()
}

/// A runtime whose paused calls go to `store`.
pub fn runtime(store: Arc<dyn ApprovalStore>) -> ToolRuntime {
    ToolRuntime::builder()
        .durable_approvals(DurableApprovals::with_store(store, key()))
        .build()
        .unwrap()
}

/// What the body of `append` does besides answering.
#[derive(Clone)]
pub enum Effect {
    /// Appends the call's `line` to this file (flushed to disk), and then, when `hang`, never
    /// returns.
    File { path: PathBuf, hang: bool },
    /// Counts the run under the call's `line`.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Count(Arc<Mutex<HashMap<String, u32>>>),
}

/// `append` (`{"line": string}`), a pre-execute listener that asks for every call and a service
/// that answers "later": every call pauses.
pub fn install(scope: &Scope, effect: Effect) -> Vec<Registration> {
    let append = ToolDefinition::builder("append")
        .description("Appends a line.")
        .input_schema(json!({
            "type": "object",
            "properties": {"line": {"type": "string"}},
            "required": ["line"]
        }))
        .output(Output::json(json!({"type": "string"})))
        .execute(move |args, _ctx| {
            let effect = effect.clone();
            async move {
                let line = args["line"].as_str().unwrap_or_default().to_owned();
                match effect {
                    Effect::File { path, hang } => {
                        append_line(&path, &line);
                        if hang {
                            std::future::pending::<()>().await;
                        }
                    }
                    Effect::Count(counts) => {
                        *counts.lock().unwrap().entry(line.clone()).or_default() += 1;
                    }
                }
                Ok::<Value, ToolError>(json!(format!("appended {line}")))
            }
        })
        .build()
        .unwrap();
    vec![
        scope.register(append).unwrap(),
        scope
            .on_pre_execute(|_exec, _| PreDecision::ask("appending needs a person"))
            .unwrap(),
        scope
            .set_approval(|_exec, _reason| async { Approval::later() })
            .unwrap(),
    ]
}

/// Appends `line` to `path` and flushes it to disk.
pub fn append_line(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(file, "{line}").unwrap();
    file.sync_all().unwrap();
}

/// The lines of `path` (none when it does not exist).
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The handle of a paused call's result.
pub fn handle_of(result: &ToolExecutionResult) -> PendingHandle {
    assert_eq!(result.code(), Some(codes::APPROVAL_PENDING), "{result:?}");
    result.pending.as_ref().unwrap().handle().unwrap().clone()
}

/// A claim at `at_ms` by a test replica.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub fn claim(at_ms: u64) -> tools_runtime::approvals::Claim {
    tools_runtime::approvals::Claim {
        at_ms,
        by: "test".to_owned(),
        edited_arguments: None,
    }
}

/// A bare record of a paused call created at 1 ms, for the stores' own tests.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub fn record(id: &str, expires_ms: u64) -> PendingRecord {
    PendingRecord {
        id: id.to_owned(),
        tool: "append".to_owned(),
        arguments: "{}".to_owned(),
        agent: None,
        call_id: "c1".to_owned(),
        reason: None,
        awaiting: None,
        journal: None,
        created_ms: 1,
        expires_ms,
        mac: "00".repeat(32),
        principal: None,
    }
}
