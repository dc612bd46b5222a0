//! Cancellation without HTTP sessions: a 2025-11-25 client (the official Python one) that
//! gives up on a call sends `notifications/cancelled` and keeps its connection; `tools-mcp
//! serve` without `--sessions` cancels the call it names. The startup line says what cancels a
//! call in each mode.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;

use crate::support;

#[test]
fn a_2025_client_cancels_a_call_on_a_server_without_sessions() {
    let (_server, url, line) = support::serve_http(&[]);
    assert!(line.contains("(cancellation: "), "{line}");
    assert!(line.contains("notifications/cancelled"), "{line}");
    let seen = support::python_json(
        "limits_client.py",
        &["legacy", "--http", &url, "--", "cancel"],
    );
    assert_eq!(seen, json!({"cancelled": 1}));
}

#[test]
fn the_startup_line_says_what_a_session_does_with_a_dropped_connection() {
    let (_server, url, line) = support::serve_http(&["--sessions"]);
    assert!(
        line.contains("a dropped connection does not (the session keeps the call)"),
        "{line}"
    );
    // In a session, notifications/cancelled still cancels.
    let seen = support::python_json(
        "limits_client.py",
        &["legacy", "--http", &url, "--", "cancel"],
    );
    assert_eq!(seen, json!({"cancelled": 1}));
}
