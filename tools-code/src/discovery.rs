//! Discovery for large catalogs: the [`Discovery`] setting and the registry-owned
//! `describe_tools` tool.
//!
//! A catalog of hundreds of tools makes an SDK too large to send with every request. With
//! discovery, the `tools:sdk` section carries a compact index instead (each tool's name, grouped
//! by the first part of the name, one line per group; rendered by
//! [`tools_codegen::render_index`]), and the model asks `describe_tools` for the exact
//! declarations of the tools it needs, by name or by a query, before it writes a program
//! against them. `describe_tools` is offered beside `run_code` wherever the SDK section is an
//! index, is called directly (not from a program), and describes only the tools of the
//! scope's SDK ([`ToolRuntime::sdk_schemas`]). Its answers, like the index, are byte-stable
//! for an unchanged tool set. Unless discovery is [`Discovery::Never`], it can be called
//! wherever the mode offers Code Mode, even while a small SDK is shown in full and it is not
//! offered: describing a tool is always safe.

use std::sync::Arc;

use serde_json::{Value, json};
use tools_codegen::Language;
use tools_schema::catalog::CatalogEntry;

use tools_runtime::definition::RESERVED_DESCRIBE_TOOLS;
use tools_runtime::error::DefinitionError;
use tools_runtime::{
    ContentBlock, Output, ScopeKey, ToolDefinition, ToolError, ToolRunContext, ToolRuntime,
};

use crate::sdk::SdkViews;
pub use crate::sdk::{DEFAULT_DISCOVERY_ABOVE_BYTES, Discovery};

/// How many tools a query of `describe_tools` returns when `limit` is not given (its text is
/// `tools-codegen`'s, which `stats` counts).
pub const DEFAULT_DESCRIBE_LIMIT: u64 = tools_codegen::DEFAULT_DESCRIBE_LIMIT;

/// The most tools one `describe_tools` call may name, and the largest `limit`.
pub const MAX_DESCRIBE_TOOLS: u64 = tools_codegen::MAX_DESCRIBE_TOOLS;

/// The stable code of a `describe_tools` call that asked for nothing.
pub const DESCRIBE_TOOLS_EMPTY: &str = "DESCRIBE_TOOLS_EMPTY";

/// The registry-owned `describe_tools` definition for programs in `language`, describing the
/// SDK tools of `views`.
pub(crate) fn definition(
    language: Language,
    views: Arc<SdkViews>,
) -> Result<ToolDefinition, DefinitionError> {
    let text = tools_codegen::describe_tools_definition(language);
    ToolDefinition::builder(RESERVED_DESCRIBE_TOOLS)
        .description(text.description)
        .input_schema(text.input_schema)
        .output(Output::new(text.output_schema, move |_args, value| {
            vec![ContentBlock::text(render(value, language))]
        }))
        .concurrency_safe(|_| true)
        .execute(move |args, ctx| {
            let views = views.clone();
            async move { describe(language, &views, &args, &ctx) }
        })
        .build()
}

/// `describe_tools`' body: the named tools in the order given, then the query's best matches,
/// and their declarations.
fn describe(
    language: Language,
    views: &SdkViews,
    args: &Value,
    ctx: &ToolRunContext,
) -> Result<Value, ToolError> {
    let names: Vec<&str> = args
        .get("names")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .filter(|q| !q.trim().is_empty());
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_DESCRIBE_LIMIT)
        .min(MAX_DESCRIBE_TOOLS);
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    if names.is_empty() && query.is_none() {
        return Err(ToolError::with_code(
            DESCRIBE_TOOLS_EMPTY,
            "describe_tools needs `names` (exact tool names from the index), `query` (a few \
             words about what you need), or both",
        ));
    }
    let rt: &ToolRuntime = ctx.runtime();
    let scope = ctx.agent().unwrap_or(ScopeKey::GLOBAL);
    let tools = views.sdk_tools(rt, scope);
    let find = |name: &str| -> Option<&CatalogEntry> {
        let at = tools
            .0
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()?;
        tools.0.get(at).map(|t| &**t)
    };

    let mut chosen: Vec<&CatalogEntry> = Vec::new();
    let mut unknown = Vec::new();
    for name in names {
        match find(name) {
            Some(tool) if !chosen.iter().any(|c| c.name == tool.name) => chosen.push(tool),
            Some(_) => {}
            None => unknown.push(json!({
                "name": tools_schema::excerpt::cut(name),
                "closest": closest(name, tools.0.iter().map(|t| t.name.as_str())),
            })),
        }
    }
    if let Some(query) = query {
        let ranked = tools_codegen::rank_tools(
            tools
                .0
                .iter()
                .map(|t| (t.name.as_str(), t.description.as_str())),
            query,
        );
        let named = chosen.len();
        for name in ranked {
            if chosen.len() - named >= limit {
                break;
            }
            if let Some(tool) = find(name)
                && !chosen[..named].iter().any(|c| c.name == tool.name)
            {
                chosen.push(tool);
            }
        }
    }
    let declarations = if chosen.is_empty() {
        String::new()
    } else {
        let catalog = tools_schema::Catalog::new(chosen.iter().map(|t| (*t).clone()).collect())
            .map_err(|e| ToolError::new(format!("cannot describe the tools: {e}")))?;
        let order: Vec<&str> = chosen.iter().map(|t| t.name.as_str()).collect();
        tools_codegen::render_declarations(&catalog, &order, language)
    };
    let names: Vec<&str> = chosen.iter().map(|t| t.name.as_str()).collect();
    Ok(json!({
        "tools": names,
        "unknown": unknown,
        "declarations": declarations,
    }))
}

/// Up to three names closest to `name`, best first.
fn closest<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    tools_runtime::suggest::closest(name, names, tools_runtime::suggest::SUGGEST_AT)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// What the model reads: the declarations in a fenced block, then a line per unknown name.
pub(crate) fn render(value: &Value, language: Language) -> String {
    let mut out = String::new();
    let declarations = value
        .get("declarations")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if declarations.is_empty() {
        out.push_str(
            "No tool matched. Try other words in `query`, or exact names from the index in \
             `names`.\n",
        );
    } else {
        // The declarations are generated code: no line of theirs is a fence of backticks.
        out.push_str(&format!("```{}\n{declarations}```\n", language.name()));
    }
    let unknown = value
        .get("unknown")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for entry in unknown {
        let name = entry
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let closest: Vec<String> = entry
            .get("closest")
            .and_then(Value::as_array)
            .map(|c| {
                c.iter()
                    .filter_map(Value::as_str)
                    .map(|n| format!("`{n}`"))
                    .collect()
            })
            .unwrap_or_default();
        if closest.is_empty() {
            out.push_str(&format!("No tool of the SDK is named `{name}`.\n"));
        } else {
            out.push_str(&format!(
                "No tool of the SDK is named `{name}`; the closest: {}.\n",
                closest.join(", ")
            ));
        }
    }
    out.trim_end().to_owned()
}
