#!/usr/bin/env python3
"""Writes the two 50-tool crates compared by run.sh: `ours` (#[tool] + #[derive(ToolSchema)])
and `rmcp` (rmcp's #[tool] + schemars). The tools are the same: three parameters (a path, an
optional limit, a mode enum) and a structured output of four fields."""
import os

N = 50
here = os.path.dirname(os.path.abspath(__file__))


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


for name, text in (("ours", ours()), ("rmcp", rmcp())):
    os.makedirs(os.path.join(here, name, "src"), exist_ok=True)
    with open(os.path.join(here, name, "src", "lib.rs"), "w") as f:
        f.write(text)
