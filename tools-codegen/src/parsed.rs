//! Catalog text read straight into the lean tree the renderers need: what the CLI renders from;
//! and [`ToolList`], what the renderers read tools from, over either tree.

use crate::json::Node;
use crate::render::ToolIn;
use serde_json::Value;
use std::borrow::Cow;
use tools_schema::{Catalog, CatalogError, validate_tool_name};

/// A catalog read from JSON text for rendering, borrowing its strings from the text.
///
/// It accepts exactly what [`Catalog::from_json_str`] accepts, fails with exactly its errors
/// (file, line and column, or tool and JSON pointer), and renders byte-identically; it is only
/// cheaper to build. A [`Catalog`] parses every schema into `serde_json::Value`s (a hash map per
/// object, an allocation per key); this keeps objects as vectors of entries and strings as
/// slices of the text (the crate's `render` bench times both readers side by side). Text it
/// does not accept is handed to [`Catalog::from_json_str`], so error messages come from one
/// place. Reading is stack-safe: the lean reader stops at the nesting depth `serde_json` stops
/// at (127 levels) and leaves deeper text to [`Catalog`], which reads any depth.
///
/// ```
/// use tools_codegen::{Language, ParsedCatalog, render_sdk};
/// use tools_schema::Catalog;
///
/// let text = r#"{"tools": [{"name": "echo", "inputSchema": {"type": "object",
///     "properties": {"text": {"type": "string"}}, "required": ["text"]}}]}"#;
/// let parsed = ParsedCatalog::from_json_str(text, Some("tools.json")).unwrap();
/// let catalog = Catalog::from_json_str(text, Some("tools.json")).unwrap();
/// assert_eq!(render_sdk(&parsed, Language::TypeScript), render_sdk(&catalog, Language::TypeScript));
///
/// let error = ParsedCatalog::from_json_str(
///     r#"[{"name": "a b", "inputSchema": {}}, {"name": "a b", "inputSchema": {}}]"#,
///     None,
/// )
/// .unwrap_err();
/// assert_eq!(error.code(), "DUPLICATE_TOOL");
/// ```
#[derive(Debug)]
pub struct ParsedCatalog<'a> {
    inner: Inner<'a>,
    /// The text it was read from (for [`GoldenFile::Catalog`](crate::golden::GoldenFile)).
    #[cfg_attr(not(feature = "golden"), allow(dead_code))]
    text: &'a str,
}

#[derive(Debug)]
enum Inner<'a> {
    /// Tools sorted by name.
    Lean(Vec<LeanTool<'a>>),
    /// Text the lean reader left to [`Catalog`], which accepted it.
    Catalog(Catalog),
}

#[derive(Debug)]
struct LeanTool<'a> {
    name: Cow<'a, str>,
    description: Cow<'a, str>,
    input: Node<'a>,
    output: Option<Node<'a>>,
}

impl<'a> ParsedCatalog<'a> {
    /// Reads a catalog from JSON text: `{"tools": [...]}` or a bare array, as
    /// [`Catalog::from_json_str`] does. `source` names the text in error messages (a file
    /// name); `None` writes `<input>`.
    ///
    /// # Errors
    ///
    /// Those of [`Catalog::from_json_str`], word for word.
    pub fn from_json_str(text: &'a str, source: Option<&str>) -> Result<Self, CatalogError> {
        let inner = match lean(text) {
            Some(tools) => Inner::Lean(tools),
            None => Inner::Catalog(Catalog::from_json_str(text, source)?),
        };
        Ok(ParsedCatalog { inner, text })
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        match &self.inner {
            Inner::Lean(tools) => tools.len(),
            Inner::Catalog(catalog) => catalog.len(),
        }
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn tools(&self) -> Tools<'_> {
        match &self.inner {
            Inner::Lean(tools) => Tools::Nodes(
                tools
                    .iter()
                    .map(|tool| ToolIn {
                        name: &tool.name,
                        description: &tool.description,
                        input: &tool.input,
                        output: tool.output.as_ref(),
                    })
                    .collect(),
            ),
            Inner::Catalog(catalog) => catalog_tools(catalog),
        }
    }
}

/// The tools of a catalog, in name order, as the renderers read them (opaque outside the
/// crate).
#[derive(Debug)]
pub struct ToolsOf<'a>(pub(crate) Tools<'a>);

/// The tools of a catalog, in name order, over one of the two JSON trees.
#[derive(Debug)]
pub(crate) enum Tools<'a> {
    /// From a [`Catalog`].
    Values(Vec<ToolIn<'a, Value>>),
    /// From a [`ParsedCatalog`].
    Nodes(Vec<ToolIn<'a, Node<'a>>>),
}

pub(crate) fn catalog_tools(catalog: &Catalog) -> Tools<'_> {
    Tools::Values(
        catalog
            .tools()
            .iter()
            .map(|tool| ToolIn {
                name: &tool.name,
                description: &tool.description,
                input: &tool.input_schema,
                output: tool.output_schema.as_ref(),
            })
            .collect(),
    )
}

pub(crate) mod sealed {
    /// Keeps [`ToolList`](super::ToolList) to the crate's own types.
    pub trait Sealed {
        /// The tools in name order.
        fn tools(&self) -> crate::parsed::ToolsOf<'_>;

        /// The catalog as [`Catalog::to_json_string`](tools_schema::Catalog::to_json_string)
        /// writes it, every key kept (annotations too).
        #[cfg(feature = "golden")]
        fn catalog_json(&self) -> String;
    }
}

/// What the renderers read tools from: a [`Catalog`], or a [`ParsedCatalog`] read straight
/// from JSON text. Both render byte-identically.
pub trait ToolList: sealed::Sealed {}

impl sealed::Sealed for Catalog {
    fn tools(&self) -> ToolsOf<'_> {
        ToolsOf(catalog_tools(self))
    }

    #[cfg(feature = "golden")]
    fn catalog_json(&self) -> String {
        self.to_json_string()
    }
}

impl ToolList for Catalog {}

impl sealed::Sealed for ParsedCatalog<'_> {
    fn tools(&self) -> ToolsOf<'_> {
        ToolsOf(ParsedCatalog::tools(self))
    }

    /// The lean tree keeps only what the renderers read, so the text is read again as a
    /// [`Catalog`], which accepts whatever the lean reader accepted; were it ever to refuse,
    /// the text is written as it was given.
    #[cfg(feature = "golden")]
    fn catalog_json(&self) -> String {
        match &self.inner {
            Inner::Catalog(catalog) => catalog.to_json_string(),
            Inner::Lean(_) => Catalog::from_json_str(self.text, None)
                .map_or_else(|_| self.text.to_owned(), |catalog| catalog.to_json_string()),
        }
    }
}

impl ToolList for ParsedCatalog<'_> {}

/// Calls the generic context function `$f` with the tools of `$catalog`, whichever JSON tree
/// they are read from.
macro_rules! with_tools {
    ($catalog:expr, $f:path) => {
        match $crate::parsed::sealed::Sealed::tools($catalog).0 {
            $crate::parsed::Tools::Values(tools) => $f(&tools),
            $crate::parsed::Tools::Nodes(tools) => $f(&tools),
        }
    };
}
pub(crate) use with_tools;

/// The tools of `text` when it is a catalog [`Catalog::from_json_str`] accepts and the lean
/// reader can vouch for; `None` leaves the text to [`Catalog`] (which then reports the error).
///
/// What `Catalog` checks, and how it holds here:
/// - the JSON grammar: [`crate::json::parse`] accepts only text `serde_json` reads to the same
///   value;
/// - the shape: `{"tools": [...]}` or an array, each entry an object with a string `name`, a
///   string or null or absent `description`, an `inputSchema` and an optional (or null)
///   `outputSchema` that are objects or booleans; a repeated key counts with its last value in
///   both trees;
/// - the names: no name twice; names outside MCP's rule ([`validate_tool_name`]) are left to
///   [`Catalog`], which accepts them (the lean reader keeps to the common case);
/// - `inputSchema: null`, which [`Catalog`] reads as a tool without arguments, is left to it;
/// - depth: [`crate::json::parse`] reads at most 128 nested levels; deeper text is left to
///   [`Catalog`], which reads any depth.
fn lean(text: &str) -> Option<Vec<LeanTool<'_>>> {
    let document = crate::json::parse(text)?;
    let entries = match document {
        Node::Array(entries) => entries,
        Node::Object(keys) => match keys.into_iter().find(|(key, _)| key == "tools")? {
            (_, Node::Array(entries)) => entries,
            _ => return None,
        },
        _ => return None,
    };
    let mut tools = Vec::with_capacity(entries.len());
    for entry in entries {
        let Node::Object(keys) = entry else {
            return None;
        };
        let (mut name, mut description, mut input, mut output) = (None, None, None, None);
        for (key, value) in keys {
            match key.as_ref() {
                "name" => name = Some(value),
                "description" => description = Some(value),
                "inputSchema" => input = Some(value),
                "outputSchema" => output = Some(value),
                _ => {}
            }
        }
        let Some(Node::String(name)) = name else {
            return None;
        };
        validate_tool_name(&name).ok()?;
        let description = match description {
            None | Some(Node::Null) => Cow::Borrowed(""),
            Some(Node::String(text)) => text,
            Some(_) => return None,
        };
        let input = input.filter(Node::is_schema)?;
        let output = match output {
            None | Some(Node::Null) => None,
            Some(schema) if schema.is_schema() => Some(schema),
            Some(_) => return None,
        };
        tools.push(LeanTool {
            name,
            description,
            input,
            output,
        });
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    if tools.windows(2).any(|pair| pair[0].name == pair[1].name) {
        return None;
    }
    Some(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Errors come from `Catalog`, word for word, nothing `Catalog` rejects is accepted, and
    /// what the lean reader leaves to `Catalog` renders the same.
    #[test]
    fn rejected_text_fails_exactly_as_catalog_does() {
        let deep = format!(
            "[{{\"name\": \"a\", \"inputSchema\": {}{}}}]",
            "{\"items\": ".repeat(130),
            "}".repeat(130)
        );
        for text in [
            "",
            "{\"tools\": [}",
            "{\"tools\": 1}",
            "{\"tool\": []}",
            "3",
            "[1]",
            "[{\"inputSchema\": {}}]",
            "[{\"name\": 1, \"inputSchema\": {}}]",
            "[{\"name\": \"a b\", \"inputSchema\": {}}]",
            "[{\"name\": \"\", \"inputSchema\": {}}]",
            "[{\"name\": \"a\"}]",
            "[{\"name\": \"a\", \"description\": 5, \"inputSchema\": {}}]",
            "[{\"name\": \"a\", \"inputSchema\": []}]",
            "[{\"name\": \"a\", \"inputSchema\": null}]",
            "[{\"name\": \"a\", \"inputSchema\": {}, \"outputSchema\": \"x\"}]",
            "[{\"name\": \"a\", \"inputSchema\": {}}, {\"name\": \"a\", \"inputSchema\": {}}]",
            "[{\"name\": \"a\", \"inputSchema\": {}}] x",
            &deep,
        ] {
            let parsed = ParsedCatalog::from_json_str(text, Some("t.json"));
            let catalog = Catalog::from_json_str(text, Some("t.json"));
            match (parsed, catalog) {
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                // Names outside MCP's rule, a null input schema and deep text are accepted by
                // both readers, and render the same.
                (Ok(a), Ok(b)) => {
                    for language in crate::Language::ALL {
                        assert_eq!(
                            crate::render_sdk(&a, language),
                            crate::render_sdk(&b, language),
                            "{text}"
                        );
                    }
                    assert_eq!(
                        crate::render_catalog_markdown(&a),
                        crate::render_catalog_markdown(&b)
                    );
                }
                (a, b) => panic!("{text}: {a:?} but {b:?}"),
            }
        }
    }

    #[test]
    fn accepted_text_is_read_leanly_in_name_order() {
        let text = r#"{"tools": [
            {"name": "b", "description": null, "inputSchema": true, "outputSchema": null},
            {"name": "a", "description": "first", "inputSchema": {"type": "object"}, "extra": 1}
        ], "nextCursor": "x"}"#;
        let parsed = ParsedCatalog::from_json_str(text, None).unwrap();
        let Inner::Lean(tools) = &parsed.inner else {
            panic!("not read leanly");
        };
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(tools[1].description, "");
        assert!(tools[1].output.is_none());
        assert_eq!(parsed.len(), 2);
    }
}
