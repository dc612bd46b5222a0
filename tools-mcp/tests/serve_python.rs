//! `tools-mcp serve` to the official Python MCP client (PyPI `mcp`), over stdio and streamable
//! HTTP, with both protocol generations: list, call, a structured call, a denied call, invalid
//! arguments, an unknown tool, a cancellation the server observes, and `list_changed` after a
//! registration.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

const SERVER: &str = env!("CARGO_BIN_EXE_tools-mcp");

fn run_client(mode: &str, transport: &[&str]) -> Value {
    let output = Command::new(support::python())
        .arg(support::peers().join("client.py"))
        .arg(mode)
        .args(transport)
        .output()
        .expect("the Python client runs");
    assert!(
        output.status.success(),
        "the Python client failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .last()
        .expect("the client prints its findings");
    serde_json::from_str(line).unwrap()
}

fn check(seen: &Value, protocol: &str) {
    assert_eq!(seen["protocol"], protocol);
    assert_eq!(
        seen["tools"],
        json!([
            "add",
            "count",
            "echo",
            "enable_extra",
            "job",
            "stats",
            "wait"
        ])
    );
    assert_eq!(
        seen["add_output_schema"]["properties"]["sum"]["type"],
        "integer"
    );
    // The `#[tool]` hints, as MCP annotations; a tool that says nothing has none.
    assert_eq!(seen["add_title"], "Add two integers");
    assert_eq!(
        seen["add_annotations"],
        json!({"title": "Add two integers", "readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(seen["echo_annotations"], Value::Null);
    assert_eq!(seen["echo"], json!({"text": "hi", "is_error": false}));
    assert_eq!(
        seen["add"],
        json!({"structured": {"sum": 5}, "is_error": false})
    );
    assert_eq!(
        seen["denied"],
        json!({"text": "Error: echo refuses `forbidden`", "is_error": true})
    );
    assert_eq!(seen["invalid"]["is_error"], true);
    assert!(
        seen["invalid"]["text"]
            .as_str()
            .unwrap()
            .contains("/a: expected integer"),
        "{seen}"
    );
    assert_eq!(seen["unknown"]["code"], -32602);
    assert!(
        seen["unknown"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool")
    );
    assert_eq!(
        seen["cancelled"], 1,
        "the server saw the wait cancelled: {seen}"
    );
    assert_eq!(seen["list_changed"], true, "{seen}");
    assert_eq!(
        seen["tools_after"],
        json!([
            "add",
            "count",
            "echo",
            "enable_extra",
            "extra",
            "job",
            "stats",
            "wait"
        ])
    );
}

#[test]
fn stdio_with_the_initialize_handshake() {
    let seen = run_client("legacy", &["--stdio", SERVER, "serve"]);
    check(&seen, "2025-11-25");
}

#[test]
fn stdio_with_2026_07_28() {
    let seen = run_client("auto", &["--stdio", SERVER, "serve"]);
    check(&seen, "2026-07-28");
}

struct HttpServer {
    child: Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_server(extra: &[&str]) -> HttpServer {
    let mut child = Command::new(SERVER)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    // `listening on ADDR (cancellation: ...)`
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    HttpServer {
        child,
        url: format!("http://{addr}/mcp"),
    }
}

#[test]
fn http_with_sessions_and_the_initialize_handshake() {
    let server = http_server(&["--sessions"]);
    let seen = run_client("legacy", &["--http", &server.url]);
    check(&seen, "2025-11-25");
}

#[test]
fn http_stateless_with_2026_07_28() {
    let server = http_server(&[]);
    let seen = run_client("auto", &["--http", &server.url]);
    check(&seen, "2026-07-28");
}
