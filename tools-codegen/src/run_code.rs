//! What Code Mode sends besides the tools' types: the `run_code` and `describe_tools`
//! definitions (their descriptions, input schemas and output schemas, per language), the
//! `tools:code-only` rule and the `tools:sdk` section around the SDK or its index.
//!
//! `tools-code` builds its definitions and prompt sections from these (`mode.rs`,
//! `discovery.rs`, `assembly.rs`, `sdk.rs`), and the token accounting (`stats`) counts them, so
//! the two never disagree.

use serde_json::{Value, json};
use tools_schema::CatalogEntry;

use crate::{Language, ToolList, discovery_usage_text, render_index, render_sdk, usage_text};

/// How many tools a `describe_tools` query returns when it does not say.
pub const DEFAULT_DESCRIBE_LIMIT: u64 = 10;

/// The most tools one `describe_tools` call names or returns.
pub const MAX_DESCRIBE_TOOLS: u64 = 50;

/// The text of one of Code Mode's own tools (`run_code`, `describe_tools`) for one language.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeToolDefinition {
    /// The tool's name: `run_code` or `describe_tools`.
    pub name: &'static str,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// The JSON Schema of its result.
    pub output_schema: Value,
}

/// The text of the `run_code` tool (its former name; see [`CodeToolDefinition`]).
pub type RunCodeDefinition = CodeToolDefinition;

impl CodeToolDefinition {
    /// The catalog entry of the tool (MCP `tools/list` shape).
    pub fn to_tool_schema(&self) -> CatalogEntry {
        CatalogEntry {
            name: self.name.into(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            output_schema: Some(self.output_schema.clone()),
            annotations: None,
        }
    }
}

/// `TypeScript` or `Python`, as the tools' descriptions name the language.
fn language_word(language: Language) -> &'static str {
    match language {
        Language::TypeScript => "TypeScript",
        Language::Python => "Python",
    }
}

/// The description, input schema and output schema of `run_code` for programs in `language`:
/// `code` and `description` in, `logs` (the printed lines) and `result` out.
pub fn run_code_definition(language: Language) -> CodeToolDefinition {
    let lang = language_word(language);
    let code = match language {
        Language::TypeScript => {
            "The body of an async TypeScript function (erasable syntax only: no enum or namespace)."
        }
        Language::Python => "The body of an async Python function (top-level await and return).",
    };
    CodeToolDefinition {
        name: "run_code",
        description: format!(
            "Run a {lang} program that calls the tools of the SDK in the system prompt. Only what \
             the program prints and returns comes back."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": code,
                },
                "description": {
                    "type": "string",
                    "description": "A few words on what the program does, for the people reading along.",
                },
            },
            "required": ["code", "description"],
            "additionalProperties": false,
        }),
        output_schema: json!({
            "type": "object",
            "properties": {
                "logs": {"type": "array", "items": {"type": "string"}},
                "result": {},
            },
            "required": ["logs"],
            "additionalProperties": false,
        }),
    }
}

/// The description, input schema and output schema of `describe_tools` for programs in
/// `language`: `names`, `query` and `limit` in; the tools found, the names not found with the
/// closest ones, and their declarations out.
pub fn describe_tools_definition(language: Language) -> CodeToolDefinition {
    let lang = language_word(language);
    CodeToolDefinition {
        name: "describe_tools",
        description: format!(
            "Get the exact {lang} declarations of SDK tools, to write a run_code program \
             against: name them (`names`, exact names from the index in the prompt), or \
             describe what you need (`query`, a few words; the best matches come first)."
        ),
        input_schema: json!({
            "type": "object",
            "properties": {
                "names": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 256},
                    "maxItems": MAX_DESCRIBE_TOOLS,
                    "description": "Exact tool names, as the index writes them.",
                },
                "query": {
                    "type": "string",
                    "maxLength": 1000,
                    "description": "A few words about what the tools should do.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_DESCRIBE_TOOLS,
                    "description": format!(
                        "How many tools the query returns at most (default {DEFAULT_DESCRIBE_LIMIT})."
                    ),
                },
            },
            "additionalProperties": false,
        }),
        output_schema: json!({
            "type": "object",
            "properties": {
                "tools": {"type": "array", "items": {"type": "string"}},
                "unknown": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "closest": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["name", "closest"],
                        "additionalProperties": false,
                    },
                },
                "declarations": {"type": "string"},
            },
            "required": ["tools", "unknown", "declarations"],
            "additionalProperties": false,
        }),
    }
}

/// The `tools:sdk` prompt section with the full SDK: the usage instructions, then the SDK in a
/// fenced block.
pub fn sdk_section(catalog: &impl ToolList, language: Language) -> String {
    format!(
        "{}\n```{}\n{}```\n",
        usage_text(language).trim_end(),
        language.name(),
        render_sdk(catalog, language)
    )
}

/// The `tools:sdk` prompt section with the index (discovery): the discovery instructions, then
/// the index in a fenced block.
pub fn index_section(catalog: &impl ToolList, language: Language) -> String {
    format!(
        "{}\n```{}\n{}```\n",
        discovery_usage_text(language).trim_end(),
        language.name(),
        render_index(catalog, language)
    )
}

/// The `tools:code-only` prompt section of a `code` assembly: only `run_code` (and
/// `describe_tools` when the SDK is `indexed`) can be called directly.
pub fn code_only_text(indexed: bool) -> String {
    if indexed {
        return "## Calling tools\n\nOnly `run_code` and `describe_tools` can be called \
                directly. Every other tool below is an async function of the SDK: call it from \
                inside a `run_code` program; a direct call of it fails.\n"
            .to_owned();
    }
    "## Calling tools\n\nOnly `run_code` can be called directly. Every other tool below is an \
     async function of the SDK: call it from inside a `run_code` program; a direct call of it \
     fails.\n"
        .to_owned()
}

/// The `tools:code-only` prompt section of a `both` assembly in which some SDK tools are
/// code-only.
pub fn code_only_tools_text() -> String {
    "## Calling tools\n\nSome tools of the SDK below are not among the tools you can call \
     directly: call those from inside a `run_code` program; a direct call of one fails.\n"
        .to_owned()
}
