//! The definition object of each dialect around projected parameters, and the way back to them.

use serde_json::{Map, Value, json};
use tools_schema::{CatalogEntry, deep};

use crate::dialect::Dialect;

/// The definition object of `dialect` around projected parameters.
pub(crate) fn envelope(
    dialect: Dialect,
    name: &str,
    tool: &CatalogEntry,
    parameters: Value,
) -> Value {
    let mut out = Map::new();
    let description = (!tool.description.is_empty()).then(|| json!(tool.description));
    match dialect {
        Dialect::OpenAiChat { strict } => {
            let mut function = Map::new();
            function.insert("name".into(), json!(name));
            if let Some(d) = description {
                function.insert("description".into(), d);
            }
            function.insert("parameters".into(), parameters);
            function.insert("strict".into(), json!(strict));
            out.insert("type".into(), json!("function"));
            out.insert("function".into(), Value::Object(function));
        }
        Dialect::OpenAiResponses { strict } => {
            out.insert("type".into(), json!("function"));
            out.insert("name".into(), json!(name));
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            out.insert("parameters".into(), parameters);
            out.insert("strict".into(), json!(strict));
        }
        Dialect::Anthropic { strict } => {
            out.insert("name".into(), json!(name));
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            out.insert("input_schema".into(), parameters);
            if strict {
                out.insert("strict".into(), json!(true));
            }
        }
        Dialect::GeminiParameters | Dialect::GeminiJsonSchema => {
            out.insert("name".into(), json!(name));
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            let key = if dialect == Dialect::GeminiParameters {
                "parameters"
            } else {
                "parametersJsonSchema"
            };
            out.insert(key.into(), parameters);
        }
        Dialect::Mcp => {
            out.insert("name".into(), json!(name));
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            out.insert("inputSchema".into(), parameters);
            if let Some(output) = &tool.output_schema {
                out.insert("outputSchema".into(), deep::clone_value(output));
            }
        }
    }
    Value::Object(out)
}

/// The parameters schema inside a definition of `dialect`.
pub fn parameters_of(dialect: Dialect, definition: &Value) -> Option<&Value> {
    match dialect {
        Dialect::OpenAiChat { .. } => definition.get("function")?.get("parameters"),
        Dialect::OpenAiResponses { .. } => definition.get("parameters"),
        Dialect::Anthropic { .. } => definition.get("input_schema"),
        Dialect::GeminiParameters => definition.get("parameters"),
        Dialect::GeminiJsonSchema => definition.get("parametersJsonSchema"),
        Dialect::Mcp => definition.get("inputSchema"),
    }
}
