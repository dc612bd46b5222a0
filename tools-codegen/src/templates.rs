//! The minijinja templates the renderers lay their output out with, and the filters they use.
//!
//! The templates live in the repository's `templates/` folder and are embedded at build time,
//! read through `tools-codegen/templates`, a symbolic link to that folder: `cargo package`
//! follows it, so the crate's package carries the templates and builds on its own.
//! [`Renderer::with_template_dir`](crate::Renderer::with_template_dir) replaces any of them by a
//! file of the same name from another folder.

use crate::CodegenError;
use crate::text::{doc_lines, py_comment, py_docstring, py_string, ts_doc, visible_controls};
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use std::path::Path;

/// The TypeScript SDK template.
pub const TYPESCRIPT_SDK: &str = "typescript_sdk.ts.jinja";
/// The Python SDK template.
pub const PYTHON_SDK: &str = "python_sdk.py.jinja";
/// The catalog docs template.
pub const CATALOG_MARKDOWN: &str = "catalog.md.jinja";
/// The TypeScript Code Mode usage text template.
pub const USAGE_TYPESCRIPT: &str = "usage_typescript.md.jinja";
/// The Python Code Mode usage text template.
pub const USAGE_PYTHON: &str = "usage_python.md.jinja";

/// The TypeScript index template (discovery).
pub const TYPESCRIPT_INDEX: &str = "typescript_index.ts.jinja";
/// The Python index template (discovery).
pub const PYTHON_INDEX: &str = "python_index.py.jinja";
/// The TypeScript declarations template (discovery).
pub const TYPESCRIPT_DECLARATIONS: &str = "typescript_declarations.ts.jinja";
/// The Python declarations template (discovery).
pub const PYTHON_DECLARATIONS: &str = "python_declarations.py.jinja";

/// Every template, by file name, with its embedded text.
pub const EMBEDDED: &[(&str, &str)] = &[
    (
        TYPESCRIPT_SDK,
        include_str!("../templates/typescript_sdk.ts.jinja"),
    ),
    (PYTHON_SDK, include_str!("../templates/python_sdk.py.jinja")),
    (
        CATALOG_MARKDOWN,
        include_str!("../templates/catalog.md.jinja"),
    ),
    (
        USAGE_TYPESCRIPT,
        include_str!("../templates/usage_typescript.md.jinja"),
    ),
    (
        USAGE_PYTHON,
        include_str!("../templates/usage_python.md.jinja"),
    ),
    (
        TYPESCRIPT_INDEX,
        include_str!("../templates/typescript_index.ts.jinja"),
    ),
    (
        PYTHON_INDEX,
        include_str!("../templates/python_index.py.jinja"),
    ),
    (
        TYPESCRIPT_DECLARATIONS,
        include_str!("../templates/typescript_declarations.ts.jinja"),
    ),
    (
        PYTHON_DECLARATIONS,
        include_str!("../templates/python_declarations.py.jinja"),
    ),
];

/// Builds the environment from the embedded templates, each replaced by `dir/<name>` when that
/// file exists.
pub(crate) fn environment(dir: Option<&Path>) -> Result<Environment<'static>, CodegenError> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Filters borrow their text from the template value instead of copying it.
    env.add_filter("ts_doc", |text: &str, indent: usize| {
        ts_doc(text, &" ".repeat(indent))
    });
    env.add_filter("py_docstring", |text: &str, indent: usize| {
        py_docstring(text, &" ".repeat(indent))
    });
    env.add_filter("py_comment", |text: &str, indent: usize| {
        py_comment(text, &" ".repeat(indent))
    });
    env.add_filter("py_string", py_string);
    env.add_filter("md_text", md_text);
    env.add_filter("md_cell", md_cell);
    env.add_filter("md_code", md_code);
    if let Some(dir) = dir
        && !dir.is_dir()
    {
        return Err(CodegenError::TemplateDir {
            path: dir.display().to_string(),
        });
    }
    for (name, embedded) in EMBEDDED {
        let source = match dir.map(|d| d.join(name)) {
            Some(path) if path.exists() => {
                std::fs::read_to_string(&path).map_err(|error| CodegenError::TemplateRead {
                    path: path.display().to_string(),
                    error,
                })?
            }
            _ => (*embedded).to_owned(),
        };
        env.add_template_owned(*name, source)
            .map_err(|error| CodegenError::from_template(name, dir, &error))?;
    }
    Ok(env)
}

/// HTML-escapes `&`, `<` and `>`, and makes control characters visible (`\x00`).
fn html_escape(text: &str) -> String {
    let text = visible_controls(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Text for a Markdown paragraph: HTML is escaped, and a line that would start a heading, a
/// quote, a list, a table row or a rule is escaped with a backslash, so a description cannot
/// change the document's structure.
pub(crate) fn md_text(text: &str) -> String {
    let lines: Vec<String> = doc_lines(text)
        .iter()
        .map(|line| {
            let escaped = html_escape(line);
            let trimmed = escaped.trim_start();
            let starts_block = trimmed.starts_with(['#', '>', '|', '-', '+', '*', '=', '`', '~']);
            if starts_block {
                let indent = &escaped[..escaped.len() - trimmed.len()];
                format!("{indent}\\{trimmed}")
            } else {
                escaped
            }
        })
        .collect();
    lines.join("\n")
}

/// Text for one Markdown table cell: one line (`<br>` between lines), HTML and `|` escaped.
pub(crate) fn md_cell(text: &str) -> String {
    doc_lines(text)
        .iter()
        .map(|line| html_escape(line).replace('|', "\\|"))
        .collect::<Vec<_>>()
        .join("<br>")
}

/// Inline code inside a Markdown table cell: `<code>` with HTML and `|` escaped.
pub(crate) fn md_code(text: &str) -> String {
    let one_line = doc_lines(text).join(" ");
    format!(
        "<code>{}</code>",
        html_escape(&one_line).replace('|', "&#124;")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escaping() {
        assert_eq!(md_cell("a | b\nc</script>"), "a \\| b<br>c&lt;/script&gt;");
        assert_eq!(md_code("\"a\" | \"b\""), "<code>\"a\" &#124; \"b\"</code>");
        assert_eq!(
            md_text("# not a heading\nplain"),
            "\\# not a heading\nplain"
        );
    }

    #[test]
    fn embedded_templates_compile() {
        assert!(environment(None).is_ok());
    }
}
