//! Tampering through a real store (SQLite): a handle edited in any bound field, and a row edited
//! in the database file behind the runtime's back, are refused with `APPROVAL_MISMATCH`; nothing
//! runs and the call stays pending.

use std::sync::Arc;

use serde_json::json;
use tools_approvals::SqliteStore;
use tools_runtime::approvals::{ApprovalStore, CallState, PendingHandle};
use tools_runtime::hooks::Approval;
use tools_runtime::{ToolCall, codes};

use crate::support::{Effect, handle_of, install, lines, runtime};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edited_handles_and_edited_rows_are_refused_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("approvals.db");
    let effects = dir.path().join("side-effects.txt");
    let store = Arc::new(SqliteStore::open(&path).unwrap());
    let rt = runtime(store.clone());
    let scope = rt.scope();
    let _regs = install(
        &scope,
        Effect::File {
            path: effects.clone(),
            hang: false,
        },
    );
    let handle = handle_of(
        &rt.execute(ToolCall::new("c1", "append", json!({"line": "hello"})))
            .await,
    );

    // Edited handles, each through its text form as a host would get it back.
    let mut edits: Vec<(&str, PendingHandle)> = Vec::new();
    let mut h = handle.clone();
    h.arguments = json!({"line": "rm -rf /"});
    edits.push(("arguments", h));
    let mut h = handle.clone();
    h.tool = "delete".into();
    edits.push(("tool", h));
    let mut h = handle.clone();
    h.agent = Some("root".into());
    edits.push(("agent", h));
    let mut h = handle.clone();
    h.call_id = "c2".into();
    edits.push(("call id", h));
    let mut h = handle.clone();
    h.mac = "0".repeat(64);
    edits.push(("mac", h));
    for (what, edited) in &edits {
        // Through its text, the tag no longer verifies: refused before anything is parsed.
        let err = rt.parse_handle(&edited.to_string()).unwrap_err();
        assert_eq!(err.code(), codes::APPROVAL_MISMATCH, "{what}: {err}");
        assert!(err.to_string().contains("its tag"), "{what}: {err}");
        // Held as a value, the MAC over its fields refuses it.
        let err = rt.resume(edited, Approval::Approved).await.unwrap_err();
        assert_eq!(err.code(), codes::APPROVAL_MISMATCH, "{what}: {err}");
        let err = rt.cancel_pending(edited).await.unwrap_err();
        assert_eq!(err.code(), codes::APPROVAL_MISMATCH, "{what}: {err}");
    }

    // Rows edited in the file by another program.
    let sql = rusqlite::Connection::open(&path).unwrap();
    let original: String = sql
        .query_row(
            "SELECT arguments FROM pending_calls WHERE id = ?1",
            [&handle.id],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(original, r#"{"line":"hello"}"#);
    for (column, value) in [
        ("arguments", r#"{"line":"rm -rf /"}"#),
        ("tool", "delete"),
        ("call_id", "c2"),
        ("agent", "root"),
    ] {
        let original: Option<String> = sql
            .query_row(
                &format!("SELECT {column} FROM pending_calls WHERE id = ?1"),
                [&handle.id],
                |row| row.get(0),
            )
            .unwrap();
        let edited = sql
            .execute(
                &format!("UPDATE pending_calls SET {column} = ?2 WHERE id = ?1"),
                [&handle.id, value],
            )
            .unwrap();
        assert_eq!(edited, 1);
        // The true handle no longer matches the row.
        let err = rt.resume(&handle, Approval::Approved).await.unwrap_err();
        assert_eq!(err.code(), codes::APPROVAL_MISMATCH, "{column}: {err}");
        // And the review queue leaves the row out: it fails its MAC.
        assert!(rt.pending_calls(10).await.unwrap().is_empty(), "{column}");
        // A handle made to match the edited row fails its MAC.
        let forged = store
            .get(&handle.id)
            .await
            .unwrap()
            .unwrap()
            .record
            .handle(&crate::support::key());
        let err = rt.resume(&forged, Approval::Approved).await.unwrap_err();
        assert_eq!(err.code(), codes::APPROVAL_MISMATCH, "{column}: {err}");
        sql.execute(
            &format!("UPDATE pending_calls SET {column} = ?2 WHERE id = ?1"),
            rusqlite::params![handle.id, original],
        )
        .unwrap();
    }
    assert!(lines(&effects).is_empty(), "nothing ran");
    let call = store.get(&handle.id).await.unwrap().unwrap();
    assert_eq!(call.state, CallState::Pending, "the call was never claimed");

    // Restored, the row matches again: the true handle runs it, once.
    let done = rt.resume(&handle, Approval::Approved).await.unwrap();
    assert_eq!(done.value(), Some(&json!("appended hello")));
    assert_eq!(lines(&effects), ["hello"]);
}
