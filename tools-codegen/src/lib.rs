//! Deterministic renderers from a tool catalog to a TypeScript SDK, a Python SDK, Markdown docs
//! and the Code Mode usage text, and the `tools-codegen` command-line tool.
//!
//! In Code Mode the model writes a program against a typed SDK of the tools it may call, so the
//! SDK is prompt text: it has to be exact, it has to compile, and it has to be byte-identical
//! for the same tools so the prompt prefix stays cacheable. The same renderers write SDK files
//! and tool docs in a build, where `tools-codegen --check` fails when a checked-in copy drifts.
//!
//! | function | output |
//! | --- | --- |
//! | [`render_typescript`] | `JsonValue`, `ToolArgsMap`, `ToolOutputMap`, `ToolName`, `ToolCallError`, `declare const tools`, `callTool` |
//! | [`render_python`] | a `TypedDict` per object type, `ToolCallError`, a `Tools` protocol and `tools` |
//! | [`render_catalog_markdown`] | a table of the tools, then a section per tool with stable anchors |
//! | [`usage_text`] | how a program calls tools, per [`Language`] |
//! | [`render_index`], [`render_declarations`], [`rank_tools`], [`discovery_usage_text`] | discovery for large catalogs: a compact index of names, the exact declarations of chosen tools, ranking by a query |
//! | [`json_schema_to_ts`], [`json_schema_to_py`] | one type expression for one raw schema |
//! | [`run_code_definition`], [`describe_tools_definition`], [`sdk_section`], [`index_section`], [`code_only_text`] | the rest of what a Code Mode prompt sends: its own tools' definitions and the sections around the SDK |
//!
//! # Guarantees
//!
//! - **Deterministic.** Tools come in name order (the [`Catalog`] sorts them), nothing depends on
//!   time or hash order, and every output ends in exactly one newline.
//! - **Total.** Any JSON value is accepted as a schema. What the supported subset cannot express
//!   degrades to `unknown` (TypeScript) or `Any` (Python); the rules, construct by construct,
//!   are in [`schema_rules`]. Nothing here panics.
//! - **Not silent.** [`schema_warnings`] lists every place where a type degraded that way, per
//!   tool, with the JSON pointer of the schema node and the reason ([`Degradation`]); the CLI
//!   prints them as warnings (and fails on them with `--deny-warnings`).
//! - **Accepting.** A rendered type accepts every value its schema accepts: object keywords
//!   without `type` admit every non-object too, and a Python open object (one that admits keys
//!   it does not declare) is used as `Name | dict[str, Any]`, since mypy does not implement PEP
//!   728's `extra_items` (see [`schema_rules`]). The test suite feeds values generated from the
//!   schemas (by `hypothesis-jsonschema`) through `tsc --strict` and `mypy --strict`.
//! - **Stack-safe.** Schemas are read at most [`MAX_DEPTH`] levels deep; deeper subtrees are
//!   `unknown`/`Any`. A schema nested 100,000 levels renders in constant stack.
//! - **Collision-free.** TypeScript types are written inline, so no two tools can clash over a
//!   type name; Python `TypedDict` names are derived from tool and path and made unique across
//!   the module, avoiding every name the module itself uses. Wire names are never renamed:
//!   keys that are not identifiers are quoted (TypeScript) or use the functional `TypedDict`
//!   form (Python); tools whose names are not identifiers are reached with `tools["name"]`.
//! - **Escaped.** Descriptions become doc comments and docstrings that no text can end early:
//!   `*/`, `"""`, backslashes, CR, U+2028 and control characters are all neutralised.
//!
//! The renderers take any [`ToolList`]: a [`Catalog`] (schemas as `serde_json::Value`s), or a
//! [`ParsedCatalog`], which reads catalog text straight into a lean tree that borrows its
//! strings from the text. It accepts and rejects exactly what [`Catalog::from_json_str`] does,
//! renders byte-identically, and is what the CLI uses: for a large catalog, parsing into
//! `Value`s costs more than the rendering itself.
//!
//! Built with the `mcp` feature (off by default), the CLI's `--mcp-stdio` and `--mcp-url` read
//! the catalog from a live MCP server: the `mcp` module lists its tools with `tools-mcp`'s client
//! (`tools_mcp::list_tools`, the importer's own connection) and hands the CLI their `tools/list`
//! text, which it reads as it reads a file (see
//! [Codegen from a live server](#codegen-from-a-live-server)).
//!
//! # What a code runtime must provide
//!
//! The SDK text declares what the program sees; the runtime that runs the program provides it:
//!
//! - TypeScript: a global `tools` object with one async function per tool (a null-prototype
//!   object, so `constructor`, `__proto__` and `hasOwnProperty` are ordinary tool names) that
//!   has **no** `then` member: a tool named `then` would make `tools` awaitable, so the SDK
//!   declares it only through `callTool(name, args)`, a global that reaches every tool; and a
//!   `ToolCallError` class (`toolName`, `message`) that failed calls reject with.
//! - Python: a `tools` object with an async method per tool whose name is an identifier that is
//!   not a keyword, does not start with `_`, and is not one of the names the module itself uses
//!   (`Any`, `list`, `overload`, ...); the other tools are declared as `tools["name"]`
//!   (`__getitem__`), so subscript access must work for them; and a `ToolCallError` exception
//!   with `tool_name` and `message`.
//!
//! # Templates
//!
//! All file layout comes from the minijinja templates in the repository's `templates/` folder,
//! embedded at build time ([`templates::EMBEDDED`]); the Rust code computes every type, name and
//! key. [`Renderer::with_template_dir`] (the CLI's `--templates DIR`) replaces any of them.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use tools_codegen::{Language, json_schema_to_py, json_schema_to_ts, render_sdk};
//! use tools_schema::{Catalog, CatalogEntry};
//!
//! let catalog = Catalog::new(vec![CatalogEntry {
//!     name: "read-file".into(),
//!     description: "Reads a file. Never writes */ anything.".into(),
//!     input_schema: json!({
//!         "type": "object",
//!         "properties": {"path": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
//!         "required": ["path"],
//!         "additionalProperties": false
//!     }),
//!     // Open: no `additionalProperties: false`, so further keys are allowed.
//!     output_schema: Some(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
//!     annotations: None,
//! }])
//! .unwrap();
//!
//! let ts = render_sdk(&catalog, Language::TypeScript);
//! assert!(ts.contains("  \"read-file\": {\n    path: string;\n    limit?: number | null;\n  };\n"));
//! assert!(ts.contains("/** Reads a file. Never writes *\\/ anything. */"));
//! assert!(ts.contains("  \"read-file\"(args: ToolArgsMap[\"read-file\"]): Promise<ToolOutputMap[\"read-file\"]>;"));
//! assert!(ts.contains("  \"read-file\": {\n    text?: string;\n    [key: string]: unknown;\n  };\n"));
//!
//! let py = render_sdk(&catalog, Language::Python);
//! assert!(py.contains("class ReadFileArgs(TypedDict):\n    path: str\n    limit: NotRequired[int | None]\n"));
//! assert!(py.contains("class ReadFileOutput(TypedDict):  # open\n"));
//! assert!(py.contains("def __getitem__(\n        self, name: Literal[\"read-file\"], /\n    ) -> Callable[[ReadFileArgs], Awaitable[ReadFileOutput | dict[str, Any]]]:"));
//!
//! assert_eq!(json_schema_to_ts(&json!({"enum": ["a", 1, null]})), "\"a\" | 1 | null");
//! assert_eq!(json_schema_to_py(&json!({"type": "array", "items": {"$ref": "#/x"}})), "list[Any]");
//! assert_eq!(render_sdk(&catalog, Language::TypeScript), ts); // byte-identical
//! ```
//!
// The chapters of this page: markdown files in `docs/`, part of the crate's package.
#![doc = include_str!("../docs/cli.md")]
#![doc = include_str!("../docs/golden.md")]
#![doc = include_str!("../docs/stats.md")]
#![doc = include_str!("../docs/mcp.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod discovery;
mod distinct;
mod json;
mod lower;
mod parsed;
mod py;
mod render;
mod renderer;
mod run_code;
pub mod schema_rules;
pub mod templates;

#[cfg(feature = "golden")]
mod files;
#[cfg(feature = "golden")]
pub mod golden;
mod text;
mod ts;
mod warnings;

#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "stats")]
pub mod stats;

pub use discovery::{
    MAX_QUERY_WORD_BYTES, MAX_QUERY_WORDS, discovery_usage_text, name_prefix, rank_tools,
    render_declarations, render_index,
};
pub use lower::{Degradation, MAX_DEPTH};
pub use parsed::{ParsedCatalog, ToolList};
pub use py::json_schema_to_py;
pub use renderer::{
    CodegenError, Language, Renderer, render_catalog_markdown, render_python, render_sdk,
    render_typescript, usage_text,
};
pub use run_code::{
    CodeToolDefinition, DEFAULT_DESCRIBE_LIMIT, MAX_DESCRIBE_TOOLS, RunCodeDefinition,
    code_only_text, code_only_tools_text, describe_tools_definition, index_section,
    run_code_definition, sdk_section,
};
pub use tools_schema::{Catalog, CatalogEntry};
pub use ts::json_schema_to_ts;
pub use warnings::{
    MAX_LISTED_PER_TOOL, SchemaWarning, ToolWarnings, name_warnings, schema_warnings,
};
