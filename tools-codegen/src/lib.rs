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
//! - **Accepting.** A rendered type accepts every value its schema accepts, with one documented
//!   Python exception: `TypedDict` cannot admit undeclared keys, so an open object with declared
//!   properties rejects dict literals with extra keys (see [`schema_rules`]).
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
//! use tools_schema::{Catalog, ToolSchema};
//!
//! let catalog = Catalog::new(vec![ToolSchema {
//!     name: "read-file".into(),
//!     description: "Reads a file. Never writes */ anything.".into(),
//!     input_schema: json!({
//!         "type": "object",
//!         "properties": {"path": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
//!         "required": ["path"],
//!         "additionalProperties": false
//!     }),
//!     output_schema: Some(json!({"type": "string"})),
//! }])
//! .unwrap();
//!
//! let ts = render_sdk(&catalog, Language::TypeScript);
//! assert!(ts.contains("  \"read-file\": {\n    path: string;\n    limit?: number | null;\n  };\n"));
//! assert!(ts.contains("/** Reads a file. Never writes *\\/ anything. */"));
//! assert!(ts.contains("  \"read-file\"(args: ToolArgsMap[\"read-file\"]): Promise<ToolOutputMap[\"read-file\"]>;"));
//!
//! let py = render_sdk(&catalog, Language::Python);
//! assert!(py.contains("class ReadFileArgs(TypedDict):\n    path: str\n    limit: NotRequired[int | None]\n"));
//! assert!(py.contains("def __getitem__(\n        self, name: Literal[\"read-file\"], /\n    )"));
//!
//! assert_eq!(json_schema_to_ts(&json!({"enum": ["a", 1, null]})), "\"a\" | 1 | null");
//! assert_eq!(json_schema_to_py(&json!({"type": "array", "items": {"$ref": "#/x"}})), "list[Any]");
//! assert_eq!(render_sdk(&catalog, Language::TypeScript), ts); // byte-identical
//! ```

#![warn(missing_docs)]

mod discovery;
mod distinct;
mod json;
mod lower;
mod parsed;
mod py;
mod render;
mod run_code;
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
pub use parsed::ParsedCatalog;
pub use run_code::{RunCodeDefinition, run_code_definition};
pub use tools_schema::{Catalog, ToolSchema};
pub use warnings::{MAX_LISTED_PER_TOOL, SchemaWarning, ToolWarnings};

use parsed::Tools;

use minijinja::Environment;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;

/// How raw JSON Schema is read, construct by construct.
///
/// Both languages render from one reading of the schema:
///
/// | schema | TypeScript | Python |
/// | --- | --- | --- |
/// | `{}` (no constraining keyword) | `JsonValue` | `Any` |
/// | `true`, `false`, `null` or any non-object in schema position | `unknown` | `Any` |
/// | `$ref`, `$dynamicRef`, `$recursiveRef` (not followed) | `unknown` | `Any` |
/// | `const`, `enum` of scalars | `"a" \| 1 \| true \| null` | `Literal["a", 1, True, None]` (floats widen to `float`) |
/// | `enum` with an object or array member, or empty | `unknown` | `Any` |
/// | `type`: `null`, `boolean`, `string`, `number`, `integer` | `null`, `boolean`, `string`, `number`, `number` | `None`, `bool`, `str`, `float`, `int` |
/// | `type` an array (`["string", "null"]`) | the union | the union |
/// | `type` unknown, malformed, or an empty array | `unknown` | `Any` |
/// | `oneOf` without `type` | the union of the alternatives | the union |
/// | `anyOf`, `allOf`, `not`, `if` without `type` | `unknown` | `Any` |
/// | `oneOf`, `anyOf`, `allOf`, `not`, `if` beside a `type` | ignored (they only narrow) | ignored |
/// | `type: array`; `items` absent or `true` | `JsonValue[]` | `list[Any]` |
/// | `items` a tuple array, `false`, or `prefixItems` present | `unknown[]` | `list[Any]` |
/// | `type: object` with properties | `{ key: T; opt?: T }` | a named `TypedDict` (`NotRequired` for optional keys) |
/// | extra keys allowed (`additionalProperties` absent/`true`, `patternProperties`) | `[key: string]: unknown` added | not expressible in a `TypedDict` (see below) |
/// | `additionalProperties: false` | no index signature | a closed `TypedDict` |
/// | `additionalProperties` a schema, no properties (a map) | `{ [key: string]: T }` | `dict[str, T]` |
/// | `additionalProperties` a schema beside properties | `[key: string]: unknown` | as an open object |
/// | an object without properties, open | `{ [key: string]: unknown }` | `dict[str, Any]` |
/// | an object without properties, closed | `{ [key: string]: never }` | an empty `TypedDict` |
/// | a key in `required` but not in `properties` | a required key of the extra-key type; for several keys whose type has an object or is long, the type once: `{ ... } & Record<"a" \| "b", T>` | same; a long type shared by several keys is named once by an alias (`XA = ...`) |
/// | an optional key named like an `Object.prototype` member (`constructor`, `toString`, ...) | `T \| Object["constructor"]` (an object literal without the key still inherits the member) | `T` |
/// | no `type` but object (array) keywords | read as an object (array) | same |
/// | no `type` and only other keywords (`minLength`, `format`, ...) | `JsonValue` | `Any` |
/// | malformed `properties`, `required`, `items`, `additionalProperties`, `oneOf`, `enum` | `unknown` | `Any` |
/// | nested deeper than [`MAX_DEPTH`] levels | `unknown` | `Any` |
///
/// Each row that reads as `unknown`/`Any` (or drops what a tuple, `patternProperties` or an
/// `additionalProperties` schema beside properties says) is reported by [`schema_warnings`] as
/// a [`Degradation`] at the node's JSON pointer. Rows that only widen because a language has no
/// such type (`integer` as `number`, a float literal as `float`, the Python exception below)
/// and keywords that only narrow (`minLength`, `format`, `anyOf` beside `type`) are not.
///
/// Outside an SDK render, [`json_schema_to_py`] has no module to declare a `TypedDict` in, so
/// an object with properties is `dict[str, Any]` there.
///
/// **The Python exception.** A `TypedDict` cannot admit keys it does not declare (PEP 728's
/// `extra_items` is not supported by mypy), so a Python object type with declared properties
/// rejects a dict literal carrying further keys, even where the schema allows them. Every other
/// rendered type accepts every value its schema accepts.
pub mod schema_rules {}

mod sealed {
    /// Keeps [`ToolList`](super::ToolList) to the crate's own types.
    pub trait Sealed {
        /// The tools in name order.
        fn tools(&self) -> crate::parsed::ToolsOf<'_>;
    }
}

/// What the renderers read tools from: a [`Catalog`], or a [`ParsedCatalog`] read straight
/// from JSON text. Both render byte-identically.
pub trait ToolList: sealed::Sealed {}

impl sealed::Sealed for Catalog {
    fn tools(&self) -> parsed::ToolsOf<'_> {
        parsed::ToolsOf(parsed::catalog_tools(self))
    }
}

impl ToolList for Catalog {}

impl sealed::Sealed for ParsedCatalog<'_> {
    fn tools(&self) -> parsed::ToolsOf<'_> {
        parsed::ToolsOf(ParsedCatalog::tools(self))
    }
}

impl ToolList for ParsedCatalog<'_> {}

/// Calls the generic context function `$f` with the tools of `$catalog`, whichever JSON tree
/// they are read from.
macro_rules! with_tools {
    ($catalog:expr, $f:path) => {
        match sealed::Sealed::tools($catalog).0 {
            Tools::Values(tools) => $f(&tools),
            Tools::Nodes(tools) => $f(&tools),
        }
    };
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
pub fn schema_warnings(catalog: &impl ToolList) -> Vec<ToolWarnings> {
    with_tools!(catalog, warnings::collect)
}

/// A language the SDK can be rendered in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Language {
    /// TypeScript: `render_typescript`.
    TypeScript,
    /// Python: `render_python`.
    Python,
}

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 2] = [Language::TypeScript, Language::Python];

    /// The language with this name: `typescript` (or `ts`), `python` (or `py`), in any case.
    pub fn from_name(name: &str) -> Option<Language> {
        match name.to_ascii_lowercase().as_str() {
            "typescript" | "ts" => Some(Language::TypeScript),
            "python" | "py" => Some(Language::Python),
            _ => None,
        }
    }

    /// The canonical name: `typescript` or `python`.
    pub fn name(self) -> &'static str {
        match self {
            Language::TypeScript => "typescript",
            Language::Python => "python",
        }
    }

    /// The file extension of an SDK file, without the dot: `ts` or `py`.
    pub fn extension(self) -> &'static str {
        match self {
            Language::TypeScript => "ts",
            Language::Python => "py",
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why templates could not be loaded or rendered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodegenError {
    /// The template folder does not exist or is not a folder.
    #[error("{path}: the template folder does not exist")]
    TemplateDir {
        /// The folder.
        path: String,
    },
    /// A template file could not be read.
    #[error("{path}: cannot read the template: {error}")]
    TemplateRead {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        error: std::io::Error,
    },
    /// A template has a syntax error or failed while rendering.
    #[error("{location}: {message}")]
    Template {
        /// The template file (with its folder when it was overridden) and line.
        location: String,
        /// What minijinja reported.
        message: String,
    },
}

impl CodegenError {
    /// The stable error code: `TEMPLATE_DIR`, `TEMPLATE_READ` or `TEMPLATE`.
    pub fn code(&self) -> &'static str {
        match self {
            CodegenError::TemplateDir { .. } => "TEMPLATE_DIR",
            CodegenError::TemplateRead { .. } => "TEMPLATE_READ",
            CodegenError::Template { .. } => "TEMPLATE",
        }
    }

    pub(crate) fn from_template(name: &str, dir: Option<&Path>, error: &minijinja::Error) -> Self {
        let file = match dir {
            Some(dir) if dir.join(name).exists() => dir.join(name).display().to_string(),
            _ => format!("templates/{name}"),
        };
        let location = match error.line() {
            Some(line) => format!("{file}:{line}"),
            None => file,
        };
        let mut message = error.kind().to_string();
        if let Some(detail) = error.detail() {
            message = format!("{message}: {detail}");
        }
        CodegenError::Template { location, message }
    }
}

/// Renders catalogs with a set of templates: the embedded ones ([`Renderer::new`]) or a folder
/// that overrides some of them ([`Renderer::with_template_dir`]).
#[derive(Debug)]
pub struct Renderer {
    env: Environment<'static>,
    dir: Option<std::path::PathBuf>,
}

impl Renderer {
    /// A renderer with the embedded templates.
    ///
    /// # Errors
    ///
    /// Only if an embedded template does not compile, which the crate's tests rule out.
    pub fn new() -> Result<Renderer, CodegenError> {
        Ok(Renderer {
            env: templates::environment(None)?,
            dir: None,
        })
    }

    /// A renderer whose templates are read from `dir` where it has a file of the same name
    /// (see [`templates::EMBEDDED`] for the names); the embedded ones fill the rest.
    ///
    /// # Errors
    ///
    /// The folder is missing, a file cannot be read, or a template has a syntax error (with the
    /// file and line).
    pub fn with_template_dir(dir: &Path) -> Result<Renderer, CodegenError> {
        Ok(Renderer {
            env: templates::environment(Some(dir))?,
            dir: Some(dir.to_owned()),
        })
    }

    fn render<C: Serialize>(&self, name: &str, context: C) -> Result<String, CodegenError> {
        let template = self
            .env
            .get_template(name)
            .map_err(|e| CodegenError::from_template(name, self.dir.as_deref(), &e))?;
        let text = template
            .render(context)
            .map_err(|e| CodegenError::from_template(name, self.dir.as_deref(), &e))?;
        Ok(one_trailing_newline(text))
    }

    /// The TypeScript SDK (see [`render_typescript`]).
    pub fn typescript(&self, catalog: &impl ToolList) -> Result<String, CodegenError> {
        self.render(
            templates::TYPESCRIPT_SDK,
            with_tools!(catalog, render::typescript_context),
        )
    }

    /// The Python SDK (see [`render_python`]).
    pub fn python(&self, catalog: &impl ToolList) -> Result<String, CodegenError> {
        self.render(
            templates::PYTHON_SDK,
            with_tools!(catalog, render::python_context),
        )
    }

    /// The SDK in `language`.
    pub fn sdk(&self, catalog: &impl ToolList, language: Language) -> Result<String, CodegenError> {
        match language {
            Language::TypeScript => self.typescript(catalog),
            Language::Python => self.python(catalog),
        }
    }

    /// The catalog docs (see [`render_catalog_markdown`]).
    pub fn markdown(&self, catalog: &impl ToolList) -> Result<String, CodegenError> {
        self.render(
            templates::CATALOG_MARKDOWN,
            with_tools!(catalog, render::markdown_context),
        )
    }

    /// The Code Mode usage text in `language` (see [`usage_text`]).
    pub fn usage(&self, language: Language) -> Result<String, CodegenError> {
        self.usage_with(language, false)
    }

    /// The usage text, for a full SDK or (`discovery`) for an index.
    fn usage_with(&self, language: Language, discovery: bool) -> Result<String, CodegenError> {
        let name = match language {
            Language::TypeScript => templates::USAGE_TYPESCRIPT,
            Language::Python => templates::USAGE_PYTHON,
        };
        self.render(
            name,
            minijinja::context! { language => language.name(), discovery => discovery },
        )
    }
}

fn one_trailing_newline(mut text: String) -> String {
    let kept = text.trim_end().len();
    text.truncate(kept);
    text.push('\n');
    text
}

fn embedded() -> Result<&'static Renderer, String> {
    static EMBEDDED: OnceLock<Result<Renderer, String>> = OnceLock::new();
    EMBEDDED
        .get_or_init(|| Renderer::new().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(Clone::clone)
}

/// Renders with the embedded templates. They are compiled and exercised by this crate's tests,
/// so the error branch is unreachable in a released build; should it ever happen, the error
/// is returned as a comment line instead of a panic.
fn with_embedded(
    comment: &str,
    f: impl FnOnce(&Renderer) -> Result<String, CodegenError>,
) -> String {
    match embedded()
        .map_err(|e| e.clone())
        .and_then(|r| f(r).map_err(|e| e.to_string()))
    {
        Ok(text) => text,
        Err(message) => format!("{comment} tools-codegen: template error: {message}\n"),
    }
}

/// The TypeScript SDK of `catalog`: `JsonValue`; `ToolArgsMap` and `ToolOutputMap` with each
/// tool's exact argument and output types; `ToolName`; the `ToolCallError` declaration
/// (`toolName`, `message`); `declare const tools` with one documented method per tool (quoted
/// for names that are not identifiers); and `callTool(name, args)`.
pub fn render_typescript(catalog: &impl ToolList) -> String {
    with_embedded("//", |r| r.typescript(catalog))
}

/// The Python SDK of `catalog`: a named `TypedDict` per object type (arguments, outputs and
/// nested objects), `ToolCallError` (`tool_name`, `message`), a `Tools` protocol with an
/// `async def` per tool (and `__getitem__` overloads for names that are not identifiers), and
/// `tools: Tools`. Needs Python 3.11 or later (`NotRequired`, `X | Y`).
pub fn render_python(catalog: &impl ToolList) -> String {
    with_embedded("#", |r| r.python(catalog))
}

/// The SDK of `catalog` in `language`.
pub fn render_sdk(catalog: &impl ToolList, language: Language) -> String {
    match language {
        Language::TypeScript => render_typescript(catalog),
        Language::Python => render_python(catalog),
    }
}

/// The catalog docs: a table of the tools linking to a section per tool (description, a
/// parameters table with types, required flags and descriptions, the input schema, the output
/// type and schema). Each section's anchor is `tool-<name>`.
pub fn render_catalog_markdown(catalog: &impl ToolList) -> String {
    with_embedded("<!--", |r| r.markdown(catalog))
}

/// The Code Mode instructions for `language`: how a program calls tools, handles
/// `ToolCallError`, overlaps independent calls, and returns only what it needs. It ends with a
/// line that introduces the SDK, which the prompt places right after it.
pub fn usage_text(language: Language) -> String {
    with_embedded("<!--", |r| r.usage(language))
}

/// The TypeScript type of one raw JSON Schema, laid out over several lines with property doc
/// comments. Never fails: see [`schema_rules`]. The text may refer to `JsonValue`, which the
/// SDK declares.
pub fn json_schema_to_ts(schema: &Value) -> String {
    ts::ts_type(&lower::lower_root(schema), ts::Layout::Multi { indent: 0 })
}

/// The Python type of one raw JSON Schema. Never fails: see [`schema_rules`]. Without the SDK's
/// module to declare `TypedDict`s in, an object with properties is `dict[str, Any]`. The text
/// may refer to `Any` and `Literal` from `typing`.
pub fn json_schema_to_py(schema: &Value) -> String {
    py::py_type(&lower::lower_root(schema), &mut None, &|| "T".to_owned())
}
