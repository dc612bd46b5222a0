//! The tool catalog: tool names, descriptions and raw schemas in the MCP `tools/list` shape.
//!
//! A [`Catalog`] is what the codegen renders SDKs and docs from, and what a registry exports.
//! Its JSON form is the MCP `tools/list` result:
//!
//! ```json
//! {"tools": [{"name": "read_file", "description": "...", "inputSchema": {...}, "outputSchema": {...}}]}
//! ```
//!
//! Reading also accepts a bare array of tools. Writing always produces `{"tools": [...]}`,
//! sorted by name, pretty-printed with a trailing newline, so a checked-in catalog diffs
//! cleanly. Other keys of a tool entry (MCP's `title`, `annotations`, `_meta`, ...) are ignored.
//!
//! The catalog holds **raw** schemas: it checks only that `inputSchema` and `outputSchema` are
//! JSON objects or booleans. A catalog may come from an MCP server whose schemas use constructs
//! outside the [subset](crate::subset); the codegen degrades those instead of failing (see
//! [`Schema::from_json_lenient`](crate::Schema::from_json_lenient)).
//!
//! Every schema is at most [`MAX_SCHEMA_DEPTH`] levels deep, which is also how deep
//! `serde_json`'s parser reads: anything the catalog writes it can read back, and the
//! recursive serializer never meets a deeper value.
//!
//! # Tool names
//!
//! [`validate_tool_name`] applies MCP's rule: 1 to 128 characters from `A-Z`, `a-z`, `0-9`,
//! `_`, `-` and `.`. Providers accept less for native function calling: OpenAI and Anthropic
//! limit function names to `^[a-zA-Z0-9_-]{1,64}$` (no `.`, at most 64 characters), and Google
//! Gemini function names must start with a letter or an underscore and are limited to 64
//! characters (`.` and `-` allowed after the first). A registry that exposes tools natively to
//! those providers translates or rejects longer or dotted names itself.
//!
//! ```
//! use tools_schema::Catalog;
//!
//! let catalog = Catalog::from_json_str(
//!     r#"[{"name": "b", "inputSchema": {"type": "object"}},
//!         {"name": "a", "description": "first", "inputSchema": {"type": "object"}}]"#,
//!     Some("tools.json"),
//! )
//! .unwrap();
//! assert_eq!(catalog.tools()[0].name, "a");
//! assert!(catalog.to_json_string().starts_with("{\n  \"tools\": [\n"));
//!
//! let error = Catalog::from_json_str("{\"tools\": [}", Some("tools.json")).unwrap_err();
//! assert_eq!(error.to_string(), "tools.json:1:12: invalid JSON: expected value");
//! ```

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::deep;
use crate::projection::kind_name;

/// How deep a schema in a catalog may nest (the depth `serde_json` parses by default).
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// One tool of a catalog: an MCP `Tool` with its raw schemas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The tool name (see [`validate_tool_name`]).
    pub name: String,
    /// What the tool does, for the model. May be empty.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of the arguments (MCP `inputSchema`).
    #[serde(rename = "inputSchema")]
    pub input_schema: Value,
    /// The JSON Schema of the structured result (MCP `outputSchema`), if declared.
    #[serde(
        rename = "outputSchema",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub output_schema: Option<Value>,
}

/// Why a tool name is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("a tool name must not be empty")]
    Empty,
    /// The name has more than 128 characters.
    #[error("a tool name has at most 128 characters; this one has {length}")]
    TooLong {
        /// The name's length in characters.
        length: usize,
    },
    /// The name contains a character outside `A-Z a-z 0-9 _ - .`.
    #[error(
        "a tool name may contain only A-Z, a-z, 0-9, '_', '-' and '.'; found {character:?} at position {position}"
    )]
    InvalidCharacter {
        /// The offending character.
        character: char,
        /// Its position, in characters from 0.
        position: usize,
    },
}

impl NameError {
    /// The stable error code: `INVALID_TOOL_NAME`.
    pub fn code(&self) -> &'static str {
        "INVALID_TOOL_NAME"
    }
}

/// Checks a tool name against MCP's rule: 1 to 128 characters from `A-Z`, `a-z`, `0-9`, `_`,
/// `-` and `.`.
///
/// Some providers accept less; see the [module docs](self#tool-names): OpenAI and Anthropic
/// function names must match `^[a-zA-Z0-9_-]{1,64}$`.
pub fn validate_tool_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if let Some((position, character)) = name
        .chars()
        .enumerate()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(NameError::InvalidCharacter {
            character,
            position,
        });
    }
    let length = name.chars().count();
    if length > 128 {
        return Err(NameError::TooLong { length });
    }
    Ok(())
}

/// Which tool an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRef {
    /// A tool with a readable name.
    Name(String),
    /// A tool entry without a usable name, by its position in the input list.
    Index(usize),
}

impl fmt::Display for ToolRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolRef::Name(name) => write!(f, "tool {}", Value::String(name.clone())),
            ToolRef::Index(i) => write!(f, "tool #{i}"),
        }
    }
}

/// Why a catalog could not be read or built.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The file could not be read.
    #[error("{path}: cannot read the catalog: {error}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        error: std::io::Error,
    },
    /// The text is not JSON.
    #[error("{source_name}:{line}:{column}: invalid JSON: {message}")]
    Parse {
        /// The file name, or `<input>`.
        source_name: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser found.
        message: String,
    },
    /// The JSON does not have the catalog shape.
    #[error("{source_name}: {}{pointer}: {message}", tool.as_ref().map(|t| format!("{t} at ")).unwrap_or_default())]
    Shape {
        /// The file name, or `<input>`.
        source_name: String,
        /// The tool concerned, when the problem is inside one.
        tool: Option<ToolRef>,
        /// RFC 6901 pointer into the catalog document (`/tools/3/inputSchema`).
        pointer: String,
        /// What is wrong.
        message: String,
    },
    /// A tool name breaks the naming rule.
    #[error("{source_name}: tool #{index} ({pointer}): invalid name {name:?}: {error}")]
    InvalidName {
        /// The file name, or `<input>`.
        source_name: String,
        /// Position of the tool in the input list.
        index: usize,
        /// Pointer to the name (`/tools/3/name`).
        pointer: String,
        /// The rejected name.
        name: String,
        /// Why.
        #[source]
        error: NameError,
    },
    /// Two tools share a name.
    #[error(
        "{source_name}: tool {name:?} is defined twice (entries #{first} and #{second}); tool names must be unique"
    )]
    DuplicateName {
        /// The file name, or `<input>`.
        source_name: String,
        /// The shared name.
        name: String,
        /// Position of the first entry.
        first: usize,
        /// Position of the second entry.
        second: usize,
    },
}

impl CatalogError {
    /// The stable error code: `CATALOG_IO`, `CATALOG_PARSE`, `CATALOG_SHAPE`,
    /// `INVALID_TOOL_NAME` or `DUPLICATE_TOOL`.
    pub fn code(&self) -> &'static str {
        match self {
            CatalogError::Io { .. } => "CATALOG_IO",
            CatalogError::Parse { .. } => "CATALOG_PARSE",
            CatalogError::Shape { .. } => "CATALOG_SHAPE",
            CatalogError::InvalidName { .. } => "INVALID_TOOL_NAME",
            CatalogError::DuplicateName { .. } => "DUPLICATE_TOOL",
        }
    }
}

/// A set of tools with unique, valid names, sorted by name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Catalog {
    tools: Vec<ToolSchema>,
}

const INPUT: &str = "<input>";

impl Catalog {
    /// Builds a catalog: checks every name and every schema's shape and depth, rejects
    /// duplicates, and sorts by name. Errors name the tool by its position in `tools`.
    pub fn new(tools: Vec<ToolSchema>) -> Result<Catalog, CatalogError> {
        Self::build(tools, INPUT, "")
    }

    fn build(
        mut tools: Vec<ToolSchema>,
        source: &str,
        base: &str,
    ) -> Result<Catalog, CatalogError> {
        let checked = (|| {
            for (index, tool) in tools.iter().enumerate() {
                let at = format!("{base}/{index}");
                if let Err(error) = validate_tool_name(&tool.name) {
                    return Err(CatalogError::InvalidName {
                        source_name: source.to_string(),
                        index,
                        pointer: format!("{at}/name"),
                        name: tool.name.clone(),
                        error,
                    });
                }
                let schemas = [
                    ("inputSchema", Some(&tool.input_schema)),
                    ("outputSchema", tool.output_schema.as_ref()),
                ];
                for (key, schema) in schemas {
                    let Some(schema) = schema else { continue };
                    let message = match schema {
                        Value::Object(_) | Value::Bool(_) => {
                            if deep::deeper_than(schema, MAX_SCHEMA_DEPTH) {
                                format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
                            } else {
                                continue;
                            }
                        }
                        other => format!(
                            "expected a JSON Schema (an object or a boolean), got {}",
                            kind_name(other)
                        ),
                    };
                    return Err(CatalogError::Shape {
                        source_name: source.to_string(),
                        tool: Some(ToolRef::Name(tool.name.clone())),
                        pointer: format!("{at}/{key}"),
                        message,
                    });
                }
            }
            let mut order: Vec<usize> = (0..tools.len()).collect();
            order.sort_by(|&a, &b| tools[a].name.cmp(&tools[b].name).then(a.cmp(&b)));
            for pair in order.windows(2) {
                if let [a, b] = *pair
                    && tools[a].name == tools[b].name
                {
                    return Err(CatalogError::DuplicateName {
                        source_name: source.to_string(),
                        name: tools[a].name.clone(),
                        first: a,
                        second: b,
                    });
                }
            }
            Ok(())
        })();
        if let Err(error) = checked {
            // A rejected schema may be arbitrarily deep: drop it without recursion.
            for tool in tools {
                deep::drop_value(tool.input_schema);
                if let Some(output) = tool.output_schema {
                    deep::drop_value(output);
                }
            }
            return Err(error);
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Catalog { tools })
    }

    /// Reads a catalog from JSON text: `{"tools": [...]}` or a bare array. `source` names the
    /// text in error messages (a file name); `None` writes `<input>`.
    pub fn from_json_str(text: &str, source: Option<&str>) -> Result<Catalog, CatalogError> {
        let source = source.unwrap_or(INPUT);
        let document: Value = serde_json::from_str(text).map_err(|error| {
            let message = error.to_string();
            // serde_json appends " at line L column C"; the position is reported separately.
            let message = match message.rfind(" at line ") {
                Some(cut) => message[..cut].to_string(),
                None => message,
            };
            CatalogError::Parse {
                source_name: source.to_string(),
                line: error.line(),
                column: error.column(),
                message,
            }
        })?;
        Self::from_value(document, source)
    }

    /// Reads a catalog file (see [`Catalog::from_json_str`]); errors name the file.
    pub fn load(path: &Path) -> Result<Catalog, CatalogError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| CatalogError::Io {
            path: name.clone(),
            error,
        })?;
        Self::from_json_str(&text, Some(&name))
    }

    /// Reads a catalog from an already parsed JSON document (see [`Catalog::from_json_str`]).
    pub fn from_json_value(document: Value, source: Option<&str>) -> Result<Catalog, CatalogError> {
        Self::from_value(document, source.unwrap_or(INPUT))
    }

    fn from_value(document: Value, source: &str) -> Result<Catalog, CatalogError> {
        let shape = |tool: Option<ToolRef>, pointer: String, message: String| CatalogError::Shape {
            source_name: source.to_string(),
            tool,
            pointer,
            message,
        };
        let (entries, base) = match document {
            Value::Array(entries) => (entries, String::new()),
            Value::Object(mut map) => match map.remove("tools") {
                Some(Value::Array(entries)) => (entries, "/tools".to_string()),
                Some(other) => {
                    return Err(shape(
                        None,
                        "/tools".into(),
                        format!("expected an array of tools, got {}", kind_name(&other)),
                    ));
                }
                None => {
                    return Err(shape(
                        None,
                        String::new(),
                        "expected {\"tools\": [...]} or an array of tools; there is no \"tools\" key"
                            .into(),
                    ));
                }
            },
            other => {
                return Err(shape(
                    None,
                    String::new(),
                    format!(
                        "expected {{\"tools\": [...]}} or an array of tools, got {}",
                        kind_name(&other)
                    ),
                ));
            }
        };
        let mut tools = Vec::with_capacity(entries.len());
        for (index, entry) in entries.into_iter().enumerate() {
            let at = format!("{base}/{index}");
            let Value::Object(mut map) = entry else {
                return Err(shape(
                    Some(ToolRef::Index(index)),
                    at,
                    format!("expected a tool object, got {}", kind_name(&entry)),
                ));
            };
            let name = match map.remove("name") {
                Some(Value::String(name)) => name,
                Some(other) => {
                    return Err(shape(
                        Some(ToolRef::Index(index)),
                        format!("{at}/name"),
                        format!("expected a string, got {}", kind_name(&other)),
                    ));
                }
                None => {
                    return Err(shape(
                        Some(ToolRef::Index(index)),
                        at,
                        "the tool has no \"name\"".into(),
                    ));
                }
            };
            let tool = ToolRef::Name(name.clone());
            let description = match map.remove("description") {
                Some(Value::String(d)) => d,
                None | Some(Value::Null) => String::new(),
                Some(other) => {
                    return Err(shape(
                        Some(tool),
                        format!("{at}/description"),
                        format!("expected a string, got {}", kind_name(&other)),
                    ));
                }
            };
            let Some(input_schema) = map.remove("inputSchema") else {
                return Err(shape(
                    Some(tool),
                    at,
                    "the tool has no \"inputSchema\"".into(),
                ));
            };
            let output_schema = match map.remove("outputSchema") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v),
            };
            tools.push(ToolSchema {
                name,
                description,
                input_schema,
                output_schema,
            });
        }
        Self::build(tools, source, &base)
    }

    /// The tools, sorted by name.
    pub fn tools(&self) -> &[ToolSchema] {
        &self.tools
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&ToolSchema> {
        self.tools
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .and_then(|i| self.tools.get(i))
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the catalog has no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Consumes the catalog, returning its tools sorted by name.
    pub fn into_tools(self) -> Vec<ToolSchema> {
        self.tools
    }

    /// The MCP `tools/list` form: `{"tools": [...]}`, sorted by name.
    pub fn to_json(&self) -> Value {
        let tools = self
            .tools
            .iter()
            .map(|tool| {
                let mut entry = serde_json::Map::new();
                entry.insert("name".into(), Value::String(tool.name.clone()));
                entry.insert(
                    "description".into(),
                    Value::String(tool.description.clone()),
                );
                entry.insert("inputSchema".into(), deep::clone_value(&tool.input_schema));
                if let Some(output) = &tool.output_schema {
                    entry.insert("outputSchema".into(), deep::clone_value(output));
                }
                Value::Object(entry)
            })
            .collect();
        let mut root = serde_json::Map::new();
        root.insert("tools".into(), Value::Array(tools));
        Value::Object(root)
    }

    /// [`Catalog::to_json`] pretty-printed (two-space indent) with a trailing newline.
    pub fn to_json_string(&self) -> String {
        let value = self.to_json();
        // Depth is bounded by `MAX_SCHEMA_DEPTH`, so the recursive serializer is safe, and
        // serializing a `Value` to a `String` cannot fail.
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    }
}
