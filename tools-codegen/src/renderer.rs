//! The [`Renderer`] and what it renders with: the SDK [`Language`]s, the [`CodegenError`]s of
//! loading and rendering templates, and the functions that render with the embedded templates
//! ([`render_typescript`], [`render_python`], [`render_sdk`], [`render_catalog_markdown`],
//! [`usage_text`]), which never fail.

use crate::parsed::{ToolList, with_tools};
use crate::{render, templates};
use minijinja::Environment;
use serde::Serialize;
use std::path::Path;
use std::sync::OnceLock;

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

    pub(crate) fn render<C: Serialize>(
        &self,
        name: &str,
        context: C,
    ) -> Result<String, CodegenError> {
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
    pub(crate) fn usage_with(
        &self,
        language: Language,
        discovery: bool,
    ) -> Result<String, CodegenError> {
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
pub(crate) fn with_embedded(
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
