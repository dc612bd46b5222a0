#!/usr/bin/env python3
"""Writes the two 50-tool crates compared by run.sh: `ours` (#[tool] + #[derive(ToolSchema)])
and `rmcp` (rmcp's #[tool] + schemars). The tools are the same: three parameters (a path, an
optional limit, a mode enum) and a structured output of four fields.

The crates are generated, never committed: they go to `target/bench-compile/{ours,rmcp}` under
the repository root (or the folder given as the first argument), each with its manifest and the
lock file kept beside this script, so both build against pinned dependency versions."""
import os
import shutil
import sys

N = 50
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
out_dir = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(root, "target", "bench-compile")

MANIFESTS = {
    "ours": f"""[package]
name = "bench-ours"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
tools-runtime = {{ path = "{os.path.join(root, 'tools-runtime')}", default-features = false }}
serde = {{ version = "1", features = ["derive"] }}

[workspace]
""",
    "rmcp": """[package]
name = "bench-rmcp"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
rmcp = { version = "=3.11.0", default-features = false, features = ["server", "macros"] }
schemars = "1"
serde = { version = "1", features = ["derive"] }
serde_json = "1"

[workspace]
""",
}


def ours():
    out = [
        "//! 50 tools written with `#[tool]` and `#[derive(ToolSchema)]`.",
        "#![allow(missing_docs, dead_code)]",
        "use serde::{Deserialize, Serialize};",
        "use tools_runtime::{tool, ToolDefinition, ToolSchema};",
        "",
    ]
    for i in range(N):
        out += [
            "/// How the tool matches.",
            "#[derive(Debug, Clone, Copy, Deserialize, ToolSchema)]",
            '#[serde(rename_all = "snake_case")]',
            f"pub enum Mode{i} {{ Exact, Prefix, Fuzzy }}",
            "",
            "/// What the tool found.",
            "#[derive(Debug, Serialize, ToolSchema)]",
            f"pub struct Found{i} {{",
            "    /// The path that was searched.",
            "    pub path: String,",
            "    /// Matching lines.",
            "    pub lines: Vec<String>,",
            "    pub total: u64,",
            "    pub truncated: bool,",
            "}",
            "",
            f"/// Tool number {i}: search one file.",
            "#[tool]",
            f"pub async fn tool_{i}(",
            "    /// The file to search.",
            "    path: String,",
            "    /// Most lines to return.",
            "    limit: Option<u32>,",
            f"    mode: Mode{i},",
            f") -> Result<Found{i}, String> {{",
            "    let _ = mode;",
            f'    let marker = "EDIT_MARKER_0 {i}";',
            "    let n = limit.unwrap_or(10) as u64;",
            f"    Ok(Found{i} {{ path, lines: vec![marker.to_owned()], total: n, truncated: false }})",
            "}",
            "",
        ]
    out += ["pub fn all() -> Vec<ToolDefinition> {", "    vec!["]
    out += [f"        tool_{i}::definition().unwrap()," for i in range(N)]
    out += ["    ]", "}", ""]
    return "\n".join(out)


def rmcp():
    out = [
        "//! The same 50 tools written with rmcp's `#[tool]` and schemars.",
        "#![allow(missing_docs, dead_code)]",
        "use rmcp::{Json, ServerHandler, handler::server::{router::tool::ToolRouter, wrapper::Parameters}, tool, tool_handler, tool_router};",
        "use schemars::JsonSchema;",
        "use serde::{Deserialize, Serialize};",
        "",
    ]
    for i in range(N):
        out += [
            "/// How the tool matches.",
            "#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]",
            '#[serde(rename_all = "snake_case")]',
            f"pub enum Mode{i} {{ Exact, Prefix, Fuzzy }}",
            "",
            f"#[derive(Debug, Deserialize, JsonSchema)]",
            f"pub struct Params{i} {{",
            "    /// The file to search.",
            "    pub path: String,",
            "    /// Most lines to return.",
            "    pub limit: Option<u32>,",
            f"    pub mode: Mode{i},",
            "}",
            "",
            "/// What the tool found.",
            "#[derive(Debug, Serialize, JsonSchema)]",
            f"pub struct Found{i} {{",
            "    /// The path that was searched.",
            "    pub path: String,",
            "    /// Matching lines.",
            "    pub lines: Vec<String>,",
            "    pub total: u64,",
            "    pub truncated: bool,",
            "}",
            "",
        ]
    out += [
        "#[derive(Debug, Clone)]",
        "pub struct Server { tool_router: ToolRouter<Self> }",
        "",
        "#[tool_router(router = tool_router)]",
        "impl Server {",
        "    pub fn new() -> Self { Self { tool_router: Self::tool_router() } }",
    ]
    for i in range(N):
        out += [
            "",
            f"    /// Tool number {i}: search one file.",
            "    #[tool]",
            f"    pub async fn tool_{i}(&self, Parameters(p): Parameters<Params{i}>) -> Result<Json<Found{i}>, String> {{",
            "        let _ = p.mode;",
            f'        let marker = "EDIT_MARKER_0 {i}";',
            "        let n = p.limit.unwrap_or(10) as u64;",
            f"        Ok(Json(Found{i} {{ path: p.path, lines: vec![marker.to_owned()], total: n, truncated: false }}))",
            "    }",
        ]
    out += ["}", "", "#[tool_handler(router = self.tool_router)]", "impl ServerHandler for Server {}", ""]
    return "\n".join(out)


def write_if_changed(path, text):
    """Leaves an unchanged file alone, so its mtime does not force a rebuild."""
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


for name, text in (("ours", ours()), ("rmcp", rmcp())):
    crate = os.path.join(out_dir, name)
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    write_if_changed(os.path.join(crate, "Cargo.toml"), MANIFESTS[name])
    lock = os.path.join(crate, "Cargo.lock")
    if not os.path.exists(lock):
        shutil.copyfile(os.path.join(here, f"{name}.Cargo.lock"), lock)
    write_if_changed(os.path.join(crate, "src", "lib.rs"), text)
print(out_dir)
