//! Finding the real MCP peers the tests start. `./scripts/test` installs them into `.tools`
//! and passes their paths; a missing peer fails the test (it never skips).

#![allow(dead_code, clippy::panic)]

use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn find(var: &str, local: &str, what: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    let local = repo_root().join(local);
    if local.exists() {
        return local;
    }
    panic!(
        "{what} was not found (set {var}, or run ./scripts/test, which installs it into .tools)"
    );
}

/// `dist/index.js` of npm's `@modelcontextprotocol/server-everything`.
pub fn everything() -> PathBuf {
    find(
        "TOOLS_MCP_EVERYTHING",
        ".tools/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        "npm's @modelcontextprotocol/server-everything",
    )
}

/// A Python with PyPI's `mcp` installed.
pub fn python() -> PathBuf {
    find(
        "TOOLS_MCP_PYTHON",
        ".tools/mcpvenv/bin/python",
        "a Python with PyPI's `mcp`",
    )
}

/// The folder of the Python peers of these tests.
pub fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// `node <server-everything>` as an import source.
pub fn everything_source() -> tools_mcp::McpSource {
    tools_mcp::McpSource::stdio(
        "node",
        [
            everything().to_string_lossy().into_owned(),
            "stdio".to_owned(),
        ],
    )
}
