//! Where the rendered types say less than the schemas: [`schema_warnings`]; and the tool names
//! outside MCP's naming rule: [`name_warnings`].
//!
//! The renderers are total: whatever a schema says that the SDK cannot express is typed
//! `unknown` (TypeScript) or `Any` (Python), which accepts every value, so the SDK stays valid.
//! That is a loss all the same (a model writing against `unknown` learns nothing about the
//! argument), and the one who publishes the SDK should hear of it. The reader reports each place
//! it gave up ([`Degradation`], listed in the module docs of the reader and in
//! [`crate::schema_rules`]); this module collects them per tool, each with the RFC 6901 pointer
//! of the schema node into the tool's catalog entry (`/inputSchema/properties/a/$ref` is the
//! pointer `/inputSchema/properties/a` with [`Degradation::Reference`]).
//!
//! A hostile catalog can hold a million such places, and each pointer is made of the schema's
//! own keys, so at most [`MAX_LISTED_PER_TOOL`] places are listed per tool (in schema order,
//! input before output) and the rest are counted: the list costs memory linear in the catalog.

use crate::json::Json;
use crate::lower::{Degradation, Recorder, Token, lower_root_recorded};
use crate::parsed::{ToolList, Tools, sealed, with_tools};
use crate::render::ToolIn;
use std::fmt;

/// How many places [`crate::schema_warnings`] lists per tool; further ones are counted in
/// [`ToolWarnings::unlisted`].
pub const MAX_LISTED_PER_TOOL: usize = 16;

/// One place in a tool's schemas where the rendered types say less than the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaWarning {
    /// RFC 6901 pointer of the schema node into the tool's catalog entry, starting with
    /// `/inputSchema` or `/outputSchema` (`/inputSchema/properties/a~1b/items`).
    pub pointer: String,
    /// What was left out there, and how the node is typed instead.
    pub degradation: Degradation,
}

impl fmt::Display for SchemaWarning {
    /// `<pointer>: <degradation>`, the pointer cut as [`tools_schema::excerpt::cut`] cuts any
    /// text that comes from the catalog.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            tools_schema::excerpt::cut(&self.pointer),
            self.degradation
        )
    }
}

/// The places in one tool's schemas where the rendered types say less than the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolWarnings {
    /// The tool's name.
    pub tool: String,
    /// The first [`MAX_LISTED_PER_TOOL`] places, input schema first, each schema in the order
    /// the reader meets them.
    pub warnings: Vec<SchemaWarning>,
    /// How many further places there are.
    pub unlisted: usize,
}

impl ToolWarnings {
    /// How many places there are in all: listed and unlisted.
    pub fn total(&self) -> usize {
        self.warnings.len().saturating_add(self.unlisted)
    }
}

/// Collects what the reader reports for one tool, with the pointer of each place.
struct Collector<'a> {
    /// `/inputSchema` or `/outputSchema`.
    root: &'static str,
    path: Vec<Token<'a>>,
    warnings: Vec<SchemaWarning>,
    unlisted: usize,
}

impl Collector<'_> {
    fn pointer(&self) -> String {
        use fmt::Write as _;
        let mut out = String::from(self.root);
        for token in &self.path {
            out.push('/');
            match token {
                Token::Key(key) => push_escaped(&mut out, key),
                Token::Index(i) => {
                    let _ = write!(out, "{i}");
                }
            }
        }
        out
    }
}

/// Appends `key` as one RFC 6901 reference token (`~` as `~0`, `/` as `~1`).
fn push_escaped(out: &mut String, key: &str) {
    for c in key.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

impl<'a> Recorder<'a> for Collector<'a> {
    fn enter(&mut self, token: Token<'a>) {
        self.path.push(token);
    }

    fn leave(&mut self) {
        self.path.pop();
    }

    fn degraded(&mut self, degradation: Degradation) {
        if self.warnings.len() < MAX_LISTED_PER_TOOL {
            let pointer = self.pointer();
            self.warnings.push(SchemaWarning {
                pointer,
                degradation,
            });
        } else {
            self.unlisted = self.unlisted.saturating_add(1);
        }
    }
}

/// One warning line for each tool name that breaks MCP's naming rule
/// ([`tools_schema::validate_tool_name`]), in name order; empty when every name follows it.
///
/// A catalog accepts any name and the renderers write every one (quoted keys and `callTool` in
/// TypeScript, `tools["name"]` in Python, escaped text in Markdown), but MCP clients and model
/// providers may refuse such a tool. Names are quoted cut to
/// [`tools_schema::excerpt::LIMIT`] characters. The CLI prints these on stderr.
pub fn name_warnings(catalog: &impl ToolList) -> Vec<String> {
    fn warn<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
        names
            .filter_map(|name| {
                let error = tools_schema::validate_tool_name(name).err()?;
                Some(format!(
                    "tool {} does not follow MCP's naming rule ({error}); it is rendered with quoted \
                     access, but MCP clients and model providers may refuse it",
                    tools_schema::excerpt::quoted(name)
                ))
            })
            .collect()
    }
    match sealed::Sealed::tools(catalog).0 {
        Tools::Values(tools) => warn(tools.iter().map(|t| t.name)),
        Tools::Nodes(tools) => warn(tools.iter().map(|t| t.name)),
    }
}

/// Every place where the rendered types say less than a tool's schema, per tool, in name order
/// (only tools with at least one); empty when every schema is expressed exactly.
///
/// What the supported subset cannot express is typed `unknown` (TypeScript) or `Any` (Python)
/// and the SDK stays valid (see [`schema_rules`]), so rendering never fails over it; this says
/// where it happened and why: a schema nested deeper than [`MAX_DEPTH`] levels, a `$ref`, an
/// `anyOf` without `type`, a malformed keyword, ... (every case is a [`Degradation`]). Each
/// place carries the RFC 6901 pointer of the schema node into the tool's catalog entry
/// (`/inputSchema/properties/a`). At most [`MAX_LISTED_PER_TOOL`] places are listed per tool,
/// the rest counted ([`ToolWarnings::unlisted`]). The reader is the renderers' own, so the
/// places are exactly where the SDKs and the docs' types degrade. The CLI prints these on
/// stderr.
///
/// ```
/// use tools_codegen::{Catalog, Degradation, schema_warnings};
///
/// let catalog = Catalog::from_json_str(
///     r##"[{"name": "find", "inputSchema": {"type": "object", "properties": {
///         "filter": {"$ref": "#/$defs/filter"}, "limit": {"type": "integer"}}}}]"##,
///     None,
/// )
/// .unwrap();
/// let found = schema_warnings(&catalog);
/// assert_eq!(found[0].tool, "find");
/// assert_eq!(found[0].warnings[0].pointer, "/inputSchema/properties/filter");
/// assert_eq!(found[0].warnings[0].degradation, Degradation::Reference { keyword: "$ref" });
/// ```
///
/// [`schema_rules`]: crate::schema_rules
/// [`MAX_DEPTH`]: crate::MAX_DEPTH
pub fn schema_warnings(catalog: &impl ToolList) -> Vec<ToolWarnings> {
    with_tools!(catalog, collect)
}

/// The warnings of every tool that has any, in the tools' order.
pub(crate) fn collect<J: Json>(tools: &[ToolIn<'_, J>]) -> Vec<ToolWarnings> {
    let mut out = Vec::new();
    for tool in tools {
        let mut collector = Collector {
            root: "/inputSchema",
            path: Vec::new(),
            warnings: Vec::new(),
            unlisted: 0,
        };
        lower_root_recorded(tool.input, &mut collector);
        if let Some(output) = tool.output {
            collector.root = "/outputSchema";
            collector.path.clear();
            lower_root_recorded(output, &mut collector);
        }
        if !collector.warnings.is_empty() {
            out.push(ToolWarnings {
                tool: tool.name.to_owned(),
                warnings: collector.warnings,
                unlisted: collector.unlisted,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn warnings(input: Value) -> Vec<(String, Degradation)> {
        let tool = ToolIn {
            name: "t",
            description: "",
            input: &input,
            output: None,
        };
        collect(&[tool])
            .into_iter()
            .flat_map(|t| t.warnings)
            .map(|w| (w.pointer, w.degradation))
            .collect()
    }

    fn at(pointer: &str, degradation: Degradation) -> (String, Degradation) {
        (pointer.to_owned(), degradation)
    }

    #[test]
    fn each_construct_is_reported_at_its_node() {
        let schema = json!({"type": "object", "properties": {
            "ref": {"$ref": "#/defs/x"},
            "any": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "date": {"type": "date"},
            "bad": {"type": "object", "properties": []},
            "obj": {"enum": [{"a": 1}]},
            "none": false,
            "num": 3,
            "tuple": {"type": "array", "prefixItems": [{"type": "string"}]},
            "pairs": {"type": "array", "items": [{"type": "string"}]},
            "pat": {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x": {}}},
            "a/b~c": {"oneOf": [{"type": "string"}, {"$dynamicRef": "#n"}]},
            "fine": {"type": "object", "additionalProperties": {"type": "string"},
                     "properties": {"k": {"type": "string"}}},
            "exact": {"type": "array", "items": true, "minItems": 1},
            "narrow": {"type": "string", "anyOf": [{"minLength": 1}], "format": "date"}
        }});
        assert_eq!(
            warnings(schema),
            [
                at(
                    "/inputSchema/properties/ref",
                    Degradation::Reference { keyword: "$ref" }
                ),
                at(
                    "/inputSchema/properties/any",
                    Degradation::Combinator { keyword: "anyOf" }
                ),
                at(
                    "/inputSchema/properties/date",
                    Degradation::UnknownType {
                        name: "date".into()
                    }
                ),
                at(
                    "/inputSchema/properties/bad",
                    Degradation::Malformed {
                        keyword: "properties",
                        expected: "an object of schemas"
                    }
                ),
                at(
                    "/inputSchema/properties/obj",
                    Degradation::NonScalarLiteral { keyword: "enum" }
                ),
                at(
                    "/inputSchema/properties/none",
                    Degradation::NoValue { what: "`false`" }
                ),
                at(
                    "/inputSchema/properties/num",
                    Degradation::NotASchema { found: "a number" }
                ),
                at(
                    "/inputSchema/properties/tuple",
                    Degradation::Tuple {
                        keyword: "prefixItems"
                    }
                ),
                at(
                    "/inputSchema/properties/pairs",
                    Degradation::Tuple { keyword: "items" }
                ),
                at(
                    "/inputSchema/properties/pat",
                    Degradation::UntypedExtraKeys {
                        keyword: "patternProperties"
                    }
                ),
                at(
                    "/inputSchema/properties/a~1b~0c/oneOf/1",
                    Degradation::Reference {
                        keyword: "$dynamicRef"
                    }
                ),
                at(
                    "/inputSchema/properties/fine",
                    Degradation::UntypedExtraKeys {
                        keyword: "additionalProperties"
                    }
                ),
            ]
        );
    }

    #[test]
    fn exact_schemas_draw_no_warning() {
        for schema in [
            json!({}),
            json!(true),
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]},
                   "b": {"enum": ["x", 1, null]}, "c": {"const": true},
                   "d": {"type": "array", "items": {"type": "integer"}},
                   "e": {"type": "object", "additionalProperties": {"type": "number"}},
                   "f": {"oneOf": [{"type": "string"}, {"type": "number"}]},
                   "g": {"type": "string", "minLength": 3, "allOf": [{"pattern": "x"}]}},
                   "required": ["a", "z"], "additionalProperties": false}),
        ] {
            assert_eq!(warnings(schema.clone()), [], "{schema}");
        }
    }

    #[test]
    fn too_deep_is_reported_once_at_the_first_level_not_read() {
        let mut schema = json!({"type": "string"});
        for _ in 0..200 {
            schema = json!({"type": "array", "items": schema});
        }
        let found = warnings(schema);
        let pointer = format!("/inputSchema{}", "/items".repeat(crate::MAX_DEPTH + 1));
        assert_eq!(found, [at(&pointer, Degradation::TooDeep)]);
    }

    #[test]
    fn places_past_the_limit_are_counted_not_listed() {
        let properties: serde_json::Map<String, Value> = (0..100)
            .map(|i| (format!("p{i}"), json!({"$ref": "#"})))
            .collect();
        let input = json!({"type": "object", "properties": properties});
        let output = json!({"$ref": "#"});
        let tool = ToolIn {
            name: "many",
            description: "",
            input: &input,
            output: Some(&output),
        };
        let found = collect(&[tool]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].tool, "many");
        assert_eq!(found[0].warnings.len(), MAX_LISTED_PER_TOOL);
        assert_eq!(found[0].unlisted, 101 - MAX_LISTED_PER_TOOL);
        assert_eq!(found[0].total(), 101);
        assert_eq!(found[0].warnings[0].pointer, "/inputSchema/properties/p0");
    }

    #[test]
    fn the_output_schema_has_its_own_root() {
        let input = json!({"type": "object"});
        let output = json!({"type": "object", "properties": {"x": {"allOf": []}}});
        let tool = ToolIn {
            name: "t",
            description: "",
            input: &input,
            output: Some(&output),
        };
        let found = collect(&[tool]);
        assert_eq!(
            found[0].warnings,
            [SchemaWarning {
                pointer: "/outputSchema/properties/x".into(),
                degradation: Degradation::Combinator { keyword: "allOf" }
            }]
        );
        assert_eq!(
            found[0].warnings[0].to_string(),
            "/outputSchema/properties/x: `allOf` without `type` beside it is not expressed; \
             it is typed `unknown` (TypeScript) and `Any` (Python)"
        );
    }
}
