//! The `run_code` tool's text: its description, input schema and output schema, per language.
//!
//! The registry builds its `run_code` definition from this (`tools-runtime`'s `code/mode.rs`),
//! and the token accounting (`stats`) counts it, so the two never disagree.

use serde_json::{Value, json};
use tools_schema::CatalogEntry;

use crate::Language;

/// The text of the `run_code` tool for one language.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCodeDefinition {
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments: `code` and `description`, both required.
    pub input_schema: Value,
    /// The JSON Schema of its result: `logs` (the printed lines) and `result`.
    pub output_schema: Value,
}

impl RunCodeDefinition {
    /// The catalog entry of `run_code` (MCP `tools/list` shape).
    pub fn to_tool_schema(&self) -> CatalogEntry {
        CatalogEntry {
            name: "run_code".into(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            output_schema: Some(self.output_schema.clone()),
        }
    }
}

/// The description, input schema and output schema of `run_code` for programs in `language`.
pub fn run_code_definition(language: Language) -> RunCodeDefinition {
    let (lang, code) = match language {
        Language::TypeScript => (
            "TypeScript",
            "The body of an async TypeScript function (erasable syntax only: no enum or namespace).",
        ),
        Language::Python => (
            "Python",
            "The body of an async Python function (top-level await and return).",
        ),
    };
    RunCodeDefinition {
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
