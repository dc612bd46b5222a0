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
//! cleanly. A tool's MCP `annotations` (its behaviour hints: [`ToolAnnotations`]) are kept;
//! other keys of a tool entry (MCP's `title`, `_meta`, ...) are ignored.
//!
//! The catalog holds **raw** schemas: it checks only that `inputSchema` and `outputSchema` are
//! JSON objects or booleans. A catalog may come from an MCP server whose schemas use constructs
//! outside the [subset](crate::subset); the codegen degrades those instead of failing (see
//! [`Schema::from_json_lenient`](crate::Schema::from_json_lenient)). An `inputSchema` of `null`
//! is read as a tool without arguments: `{"type": "object", "additionalProperties": false}`
//! ([`no_arguments`]).
//!
//! Schemas may nest to any depth: [`Catalog::from_json_str`] reads text of any depth that fits in
//! memory ([`deep::from_str`]), [`Catalog::to_json_string`] writes it back the same way, and a
//! catalog is dropped, cloned and compared without recursion. (A [`CatalogEntry`] taken out of a
//! catalog is plain data: drop deep schemas in it with [`deep::drop_value`].)
//!
//! # Tool names
//!
//! A catalog accepts **any** name JSON can hold, the empty string included: every renderer can
//! write every string (quoted keys and `callTool` in TypeScript, subscript access in Python,
//! escaped text in Markdown), and a catalog read from an MCP server should render whatever the
//! server calls its tools. The one name a catalog refuses is a name that is already taken: two
//! tools whose names are the same string. No other name is unrepresentable: distinct strings
//! stay distinct keys and string literals in both SDKs, and the identifiers derived from names
//! (Python type names, method names) are made unique by the renderers.
//!
//! [`validate_tool_name`] is MCP's rule, which registries apply to the tools they define and the
//! codegen uses to warn about names outside it: 1 to 128 characters from `A-Z`, `a-z`, `0-9`,
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
use crate::excerpt;
use crate::projection::kind_name;

/// The input schema of a tool without arguments: `{"type": "object", "additionalProperties":
/// false}`, what a catalog reads `"inputSchema": null` as.
pub fn no_arguments() -> Value {
    let mut map = serde_json::Map::new();
    map.insert("type".into(), Value::String("object".into()));
    map.insert("additionalProperties".into(), Value::Bool(false));
    Value::Object(map)
}

/// One tool of a catalog: an MCP `Tool` with its raw schemas.
///
/// `Clone`, `PartialEq` and `Debug` work on schemas of any depth without recursion (`Debug`
/// shows each schema cut to [`excerpt::LIMIT`] characters). The derived `Serialize` recurses
/// once per level: serialize deep tools with [`deep::to_string_pretty`] or through
/// [`Catalog::to_json_string`].
#[derive(Serialize, Deserialize)]
pub struct CatalogEntry {
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
    /// What the tool says of its behaviour (MCP `annotations`), if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

/// MCP's tool annotations: hints about what a tool's calls do. They are hints, not promises: a
/// client trusts a server's hints only as far as it trusts the server. Each is `None` when the
/// tool says nothing of it (MCP's defaults for a silent tool are: not read-only, destructive,
/// not idempotent, open world).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool changes nothing in its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or overwrite (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments has no further effect (meaningful when not
    /// read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world (the web, other people); `false` for a closed one (a
    /// local database, memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// Whether it says nothing.
    pub fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }

    /// The annotations an MCP `annotations` object gives: its known keys of the right type;
    /// anything else is ignored (a server's catalog is read leniently).
    pub fn from_json(value: &Value) -> Option<Self> {
        let map = value.as_object()?;
        let flag = |key: &str| map.get(key).and_then(Value::as_bool);
        let annotations = ToolAnnotations {
            title: map.get("title").and_then(Value::as_str).map(str::to_owned),
            read_only_hint: flag("readOnlyHint"),
            destructive_hint: flag("destructiveHint"),
            idempotent_hint: flag("idempotentHint"),
            open_world_hint: flag("openWorldHint"),
        };
        (!annotations.is_empty()).then_some(annotations)
    }

    /// The MCP `annotations` object: the hints that are set.
    pub fn to_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        if let Some(title) = &self.title {
            map.insert("title".into(), Value::String(title.clone()));
        }
        for (key, hint) in [
            ("readOnlyHint", self.read_only_hint),
            ("destructiveHint", self.destructive_hint),
            ("idempotentHint", self.idempotent_hint),
            ("openWorldHint", self.open_world_hint),
        ] {
            if let Some(hint) = hint {
                map.insert(key.into(), Value::Bool(hint));
            }
        }
        Value::Object(map)
    }
}

impl Clone for CatalogEntry {
    fn clone(&self) -> Self {
        CatalogEntry {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: deep::clone_value(&self.input_schema),
            output_schema: self.output_schema.as_ref().map(deep::clone_value),
            annotations: self.annotations.clone(),
        }
    }
}

impl PartialEq for CatalogEntry {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && deep::values_equal(&self.input_schema, &other.input_schema)
            && match (&self.output_schema, &other.output_schema) {
                (None, None) => true,
                (Some(a), Some(b)) => deep::values_equal(a, b),
                _ => false,
            }
            && self.annotations == other.annotations
    }
}

impl fmt::Debug for CatalogEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogEntry")
            .field("name", &excerpt::cut(&self.name))
            .field("description", &excerpt::cut(&self.description))
            .field("input_schema", &excerpt::json(&self.input_schema))
            .field(
                "output_schema",
                &self.output_schema.as_ref().map(excerpt::json),
            )
            .field("annotations", &self.annotations)
            .finish()
    }
}

/// Why a tool name does not follow MCP's naming rule ([`validate_tool_name`]).
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
/// A [`Catalog`] does not require it (see [the module docs](self#tool-names)); registries apply
/// it to the tools they define, and the codegen warns about catalog names that break it.
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
            ToolRef::Name(name) => write!(f, "tool {}", crate::excerpt::quoted(name)),
            ToolRef::Index(i) => write!(f, "tool #{i}"),
        }
    }
}

/// Why a catalog could not be read or built.
///
/// Names quoted in the messages are cut to [`excerpt::LIMIT`] characters; the fields hold them
/// whole.
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
    /// Two tools share a name.
    #[error(
        "{source_name}: tool {} is defined twice (entries #{first} and #{second}); tool names must be unique",
        excerpt::quoted(name)
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
    /// The stable error code: `CATALOG_IO`, `CATALOG_PARSE`, `CATALOG_SHAPE` or
    /// `DUPLICATE_TOOL`.
    pub fn code(&self) -> &'static str {
        match self {
            CatalogError::Io { .. } => "CATALOG_IO",
            CatalogError::Parse { .. } => "CATALOG_PARSE",
            CatalogError::Shape { .. } => "CATALOG_SHAPE",
            CatalogError::DuplicateName { .. } => "DUPLICATE_TOOL",
        }
    }
}

/// A set of tools with unique names, sorted by name.
///
/// Dropping, cloning and comparing a catalog never recurse, whatever the depth of its schemas.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Catalog {
    tools: Vec<CatalogEntry>,
}

impl Drop for Catalog {
    fn drop(&mut self) {
        drop_tools(std::mem::take(&mut self.tools));
    }
}

/// Drops tools whose schemas may be deep, without recursion.
fn drop_tools(tools: Vec<CatalogEntry>) {
    for tool in tools {
        deep::drop_value(tool.input_schema);
        if let Some(output) = tool.output_schema {
            deep::drop_value(output);
        }
    }
}

const INPUT: &str = "<input>";

impl Catalog {
    /// Builds a catalog: reads a `null` input schema as [`no_arguments`], checks that every
    /// schema is an object or a boolean, rejects duplicate names, and sorts by name. Errors name
    /// the tool by its position in `tools`. Any string is a valid name (see
    /// [the module docs](self#tool-names)).
    pub fn new(tools: Vec<CatalogEntry>) -> Result<Catalog, CatalogError> {
        Self::build(tools, INPUT, "")
    }

    fn build(
        mut tools: Vec<CatalogEntry>,
        source: &str,
        base: &str,
    ) -> Result<Catalog, CatalogError> {
        for tool in &mut tools {
            if tool.input_schema.is_null() {
                tool.input_schema = no_arguments();
            }
        }
        let checked = (|| {
            for (index, tool) in tools.iter().enumerate() {
                let at = format!("{base}/{index}");
                let schemas = [
                    ("inputSchema", Some(&tool.input_schema)),
                    ("outputSchema", tool.output_schema.as_ref()),
                ];
                for (key, schema) in schemas {
                    let Some(schema) = schema else { continue };
                    if let Value::Object(_) | Value::Bool(_) = schema {
                        continue;
                    }
                    return Err(CatalogError::Shape {
                        source_name: source.to_string(),
                        tool: Some(ToolRef::Name(tool.name.clone())),
                        pointer: format!("{at}/{key}"),
                        message: format!(
                            "expected a JSON Schema (an object or a boolean), got {}",
                            kind_name(schema)
                        ),
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
            drop_tools(tools);
            return Err(error);
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Catalog { tools })
    }

    /// Reads a catalog from JSON text: `{"tools": [...]}` or a bare array. `source` names the
    /// text in error messages (a file name); `None` writes `<input>`.
    ///
    /// Text of any nesting depth is read (see [`deep::from_str`]). A `\u` escape of half a
    /// UTF-16 surrogate pair without its other half is reported as a lone surrogate at the
    /// escape's position.
    pub fn from_json_str(text: &str, source: Option<&str>) -> Result<Catalog, CatalogError> {
        let source = source.unwrap_or(INPUT);
        let document = deep::from_str(text).map_err(|error| parse_error(text, source, &error))?;
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
        // The shape is checked on the borrowed document first, so that on an error the whole
        // document is dropped in one place, without recursion.
        if let Err(error) = check_shape(&document, source) {
            deep::drop_value(document);
            return Err(error);
        }
        let (entries, base) = match document {
            Value::Array(entries) => (entries, String::new()),
            Value::Object(mut map) => {
                let entries = match map.remove("tools") {
                    Some(Value::Array(entries)) => entries,
                    _ => Vec::new(),
                };
                deep::drop_value(Value::Object(map));
                (entries, "/tools".to_string())
            }
            other => {
                deep::drop_value(other);
                (Vec::new(), String::new())
            }
        };
        let mut tools = Vec::with_capacity(entries.len());
        for entry in entries {
            let Value::Object(mut map) = entry else {
                deep::drop_value(entry);
                continue;
            };
            let name = match map.remove("name") {
                Some(Value::String(name)) => name,
                _ => String::new(),
            };
            let description = match map.remove("description") {
                Some(Value::String(d)) => d,
                _ => String::new(),
            };
            let input_schema = map.remove("inputSchema").unwrap_or(Value::Null);
            let output_schema = match map.remove("outputSchema") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v),
            };
            let annotations = map.get("annotations").and_then(ToolAnnotations::from_json);
            // MCP's `title`, `_meta`, ...
            deep::drop_value(Value::Object(map));
            tools.push(CatalogEntry {
                name,
                description,
                input_schema,
                output_schema,
                annotations,
            });
        }
        Self::build(tools, source, &base)
    }

    /// The tools, sorted by name.
    pub fn tools(&self) -> &[CatalogEntry] {
        &self.tools
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&CatalogEntry> {
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

    /// Consumes the catalog, returning its tools sorted by name. Their schemas may be deep:
    /// drop them with [`deep::drop_value`].
    pub fn into_tools(mut self) -> Vec<CatalogEntry> {
        std::mem::take(&mut self.tools)
    }

    /// The MCP `tools/list` form: `{"tools": [...]}`, sorted by name. The value may be as deep
    /// as the schemas: drop it with [`deep::drop_value`].
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
                if let Some(annotations) = tool.annotations.as_ref().filter(|a| !a.is_empty()) {
                    entry.insert("annotations".into(), annotations.to_json());
                }
                Value::Object(entry)
            })
            .collect();
        let mut root = serde_json::Map::new();
        root.insert("tools".into(), Value::Array(tools));
        Value::Object(root)
    }

    /// [`Catalog::to_json`] pretty-printed (two-space indent) with a trailing newline. Schemas
    /// of any depth are written (see [`deep::to_string_pretty`]).
    pub fn to_json_string(&self) -> String {
        let value = self.to_json();
        let mut text = deep::to_string_pretty(&value);
        deep::drop_value(value);
        text.push('\n');
        text
    }
}

/// The first shape error of a catalog document, if any (see [`Catalog::from_json_str`]).
fn check_shape(document: &Value, source: &str) -> Result<(), CatalogError> {
    let shape = |tool: Option<ToolRef>, pointer: String, message: String| CatalogError::Shape {
        source_name: source.to_string(),
        tool,
        pointer,
        message,
    };
    let (entries, base) = match document {
        Value::Array(entries) => (entries, ""),
        Value::Object(map) => match map.get("tools") {
            Some(Value::Array(entries)) => (entries, "/tools"),
            Some(other) => {
                return Err(shape(
                    None,
                    "/tools".into(),
                    format!("expected an array of tools, got {}", kind_name(other)),
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
                    kind_name(other)
                ),
            ));
        }
    };
    for (index, entry) in entries.iter().enumerate() {
        let at = format!("{base}/{index}");
        let Value::Object(map) = entry else {
            return Err(shape(
                Some(ToolRef::Index(index)),
                at,
                format!("expected a tool object, got {}", kind_name(entry)),
            ));
        };
        let tool = match map.get("name") {
            Some(Value::String(name)) => ToolRef::Name(name.clone()),
            Some(other) => {
                return Err(shape(
                    Some(ToolRef::Index(index)),
                    format!("{at}/name"),
                    format!("expected a string, got {}", kind_name(other)),
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
        match map.get("description") {
            None | Some(Value::String(_) | Value::Null) => {}
            Some(other) => {
                return Err(shape(
                    Some(tool),
                    format!("{at}/description"),
                    format!("expected a string, got {}", kind_name(other)),
                ));
            }
        }
        if !map.contains_key("inputSchema") {
            return Err(shape(
                Some(tool),
                at,
                "the tool has no \"inputSchema\"".into(),
            ));
        }
    }
    Ok(())
}

/// The error for text `deep::from_str` rejected: serde_json's message without its position
/// (reported in the fields), except for a lone surrogate escape, which serde_json words as a
/// hex escape problem and places after it.
fn parse_error(text: &str, source: &str, error: &serde_json::Error) -> CatalogError {
    let message = error.to_string();
    if (message.starts_with("lone leading surrogate in hex escape")
        || message.starts_with("unexpected end of hex escape")
        || message.starts_with("invalid unicode code point"))
        && let Some(lone) = first_lone_surrogate(text)
    {
        return CatalogError::Parse {
            source_name: source.to_string(),
            line: lone.line,
            column: lone.column,
            message: format!(
                "lone surrogate escape \\u{:04x}: a {} half of a UTF-16 surrogate pair without its {} half; \
                 JSON text must encode a character outside the Basic Multilingual Plane as a whole pair \
                 (or as the UTF-8 character itself)",
                lone.unit,
                if lone.high {
                    "high (first)"
                } else {
                    "low (second)"
                },
                if lone.high {
                    "low (second)"
                } else {
                    "high (first)"
                },
            ),
        };
    }
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
}

/// A `\u` escape of an unpaired UTF-16 surrogate.
struct LoneSurrogate {
    unit: u16,
    high: bool,
    /// 1-based line of the escape's backslash.
    line: usize,
    /// 1-based column (in bytes, as serde_json counts) of the escape's backslash.
    column: usize,
}

/// The first unpaired surrogate escape inside a string of `text`. Only called when the JSON
/// reader stopped at such an escape, so the text before it is valid JSON and a plain scan of its
/// strings is exact.
fn first_lone_surrogate(text: &str) -> Option<LoneSurrogate> {
    let bytes = text.as_bytes();
    let hex = |at: usize| -> Option<u16> {
        let digits = bytes.get(at..at + 4)?;
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    };
    let escape_at = |at: usize| -> Option<u16> {
        if bytes.get(at) == Some(&b'\\') && bytes.get(at + 1) == Some(&b'u') {
            hex(at + 2)
        } else {
            None
        }
    };
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match (in_string, bytes[i]) {
            (false, b'"') => in_string = true,
            (true, b'"') => in_string = false,
            (true, b'\\') => {
                if let Some(unit) = escape_at(i) {
                    let lone = match unit {
                        0xD800..=0xDBFF => match escape_at(i + 6) {
                            Some(0xDC00..=0xDFFF) => {
                                i += 12;
                                continue;
                            }
                            _ => Some(true),
                        },
                        0xDC00..=0xDFFF => Some(false),
                        _ => None,
                    };
                    if let Some(high) = lone {
                        let start_of_line = bytes[..i]
                            .iter()
                            .rposition(|&b| b == b'\n')
                            .map_or(0, |p| p + 1);
                        return Some(LoneSurrogate {
                            unit,
                            high,
                            line: 1 + bytes[..start_of_line]
                                .iter()
                                .filter(|&&b| b == b'\n')
                                .count(),
                            column: i - start_of_line + 1,
                        });
                    }
                    i += 6;
                    continue;
                }
                // Any other escape is two bytes.
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}
