//! Computing the template contexts: every type, name and key the templates print.

use crate::json::Json;
use crate::lower::{ObjectTy, SHARED_TYPE_BYTES, Ty, lower_root};
use crate::py::{PyModule, py_type};
use crate::text::ts_string;
use crate::ts::{Layout, ts_key, ts_type};
use serde::Serialize;

/// One tool as the renderers read it, from a [`Catalog`](tools_schema::Catalog) or a
/// [`ParsedCatalog`](crate::ParsedCatalog).
#[derive(Debug)]
pub(crate) struct ToolIn<'a, J> {
    pub name: &'a str,
    pub description: &'a str,
    pub input: &'a J,
    pub output: Option<&'a J>,
}

/// A tool in the TypeScript SDK template.
#[derive(Debug, Serialize)]
pub(crate) struct TsTool {
    name: String,
    key: String,
    description: String,
    args: String,
    output: String,
    bindable: bool,
}

/// The TypeScript SDK template's context.
#[derive(Debug, Serialize)]
pub(crate) struct TsContext {
    tools: Vec<TsTool>,
}

/// Tool names that cannot be members of the `tools` object: a `then` member would make the
/// object a thenable, so `await tools` (or returning it from an async function) would call it.
const TS_UNBINDABLE: &[&str] = &["then"];

pub(crate) fn typescript_context<J: Json>(tools: &[ToolIn<'_, J>]) -> TsContext {
    let layout = Layout::Multi { indent: 2 };
    let tools = tools
        .iter()
        .map(|tool| TsTool {
            name: ts_string(tool.name),
            key: ts_key(tool.name),
            description: tool.description.to_owned(),
            args: ts_type(&lower_root(tool.input), layout),
            output: match tool.output {
                Some(schema) => ts_type(&lower_root(schema), layout),
                None => "JsonValue".to_owned(),
            },
            bindable: !TS_UNBINDABLE.contains(&tool.name),
        })
        .collect();
    TsContext { tools }
}

/// A `TypedDict` in the Python SDK template, or a type alias (`alias` set).
#[derive(Debug, Serialize)]
pub(crate) struct PyTypedDict {
    name: String,
    description: String,
    functional: bool,
    fields: Vec<PyField>,
    alias: Option<String>,
    /// It admits keys it does not declare, so it is used as `Name | dict[str, Any]` (see
    /// [`crate::py`]); the line declaring it is marked `# open`. False for a closed object and
    /// an alias.
    open: bool,
}

/// A `TypedDict` key in the Python SDK template.
#[derive(Debug, Serialize)]
pub(crate) struct PyField {
    key: String,
    ty: String,
    description: String,
}

/// A tool in the Python SDK template.
#[derive(Debug, Serialize)]
pub(crate) struct PyTool {
    name: String,
    method: String,
    description: String,
    args: String,
    output: String,
}

/// The Python SDK template's context.
#[derive(Debug, Serialize)]
pub(crate) struct PyContext {
    typed_dicts: Vec<PyTypedDict>,
    /// Some `TypedDict` is open: the module says once what `# open` means.
    any_open: bool,
    method_tools: Vec<PyTool>,
    subscript_tools: Vec<PyTool>,
}

pub(crate) fn python_context<J: Json>(tools: &[ToolIn<'_, J>]) -> PyContext {
    let mut module = PyModule::new(tools.iter().map(|t| t.name));
    let mut typed = Vec::with_capacity(tools.len());
    for tool in tools {
        let mut m = Some(&mut module);
        // Each base once per tool, not once per name derived from it.
        let args_base = PyModule::root_base(tool.name, "Args");
        let args = py_type(&lower_root(tool.input), &mut m, &|| args_base.clone());
        let output = match tool.output {
            Some(schema) => {
                let output_base = PyModule::root_base(tool.name, "Output");
                py_type(&lower_root(schema), &mut m, &|| output_base.clone())
            }
            None => "Any".to_owned(),
        };
        typed.push((tool, args, output));
    }
    let defs = std::mem::take(&mut module.defs);
    let any_open = defs.iter().any(|def| def.open);
    let typed_dicts = defs
        .into_iter()
        .map(|def| {
            let functional = !def.fields.iter().all(|f| module.is_class_field(&f.key));
            let fields = def
                .fields
                .into_iter()
                .map(|f| PyField {
                    key: if functional {
                        crate::text::py_string(&f.key)
                    } else {
                        f.key
                    },
                    ty: if f.required {
                        f.ty
                    } else {
                        format!("NotRequired[{}]", f.ty)
                    },
                    description: f.doc.unwrap_or_default(),
                })
                .collect();
            PyTypedDict {
                name: def.name,
                description: def.doc.unwrap_or_default(),
                functional,
                fields,
                alias: def.alias,
                open: def.open,
            }
        })
        .collect();
    let mut method_tools = Vec::new();
    let mut subscript_tools = Vec::new();
    for (tool, args, output) in typed {
        let entry = PyTool {
            name: tool.name.to_owned(),
            method: tool.name.to_owned(),
            description: tool.description.to_owned(),
            args,
            output,
        };
        if module.is_method_name(tool.name) {
            method_tools.push(entry);
        } else {
            subscript_tools.push(entry);
        }
    }
    PyContext {
        typed_dicts,
        any_open,
        method_tools,
        subscript_tools,
    }
}

/// A top-level argument in the docs template.
#[derive(Debug, Serialize)]
pub(crate) struct MdParam {
    name: String,
    ty: String,
    required: bool,
    description: String,
}

/// A tool in the docs template.
#[derive(Debug, Serialize)]
pub(crate) struct MdTool {
    name: String,
    name_md: String,
    anchor: String,
    summary: String,
    description: String,
    args_type: String,
    params: Vec<MdParam>,
    output_type: String,
    input_schema: String,
    output_schema: String,
    input_fence: String,
    output_fence: String,
}

/// The docs template's context.
#[derive(Debug, Serialize)]
pub(crate) struct MdContext {
    tools: Vec<MdTool>,
}

/// The anchor of a tool's section: `tool-` and the name, with every byte outside
/// `A-Z a-z 0-9 _ - .` written `~XX` (two uppercase hex digits). A name that follows MCP's rule
/// is kept as it is; any other name still gets an id without spaces, quotes or markup, and as
/// `~` is never kept, distinct names get distinct anchors.
pub(crate) fn anchor(name: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(name.len() + 5);
    out.push_str("tool-");
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "~{b:02X}");
        }
    }
    out
}

/// A tool name as inline code in Markdown: backticks for a name that follows MCP's rule (the
/// usual case, and what older docs show), an escaped `<code>` element for any other name.
fn name_markdown(name: &str) -> String {
    if tools_schema::validate_tool_name(name).is_ok() {
        format!("`{name}`")
    } else {
        crate::templates::md_code(&crate::text::visible_controls(name))
    }
}

/// A backtick fence longer than any backtick run in `text` (at least three).
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Pretty JSON, with U+2028, U+2029, U+0085 and U+FEFF escaped (JSON allows them raw, but
/// some viewers break lines on them or hide them). Schemas of any depth are written without
/// recursion (see [`Json::pretty`]).
fn pretty<J: Json>(value: &J) -> String {
    let text = value.pretty();
    if !text.contains(['\u{2028}', '\u{2029}', '\u{85}', '\u{feff}']) {
        return text;
    }
    text.replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
        .replace('\u{85}', "\\u0085")
        .replace('\u{feff}', "\\ufeff")
}

/// The rows of the parameters table: the declared properties, then the undeclared required
/// keys. These share one type (see [`crate::lower::Undeclared`]): each row shows it when it is
/// at most [`SHARED_TYPE_BYTES`] long, else the first row does and the others have an empty
/// type, which the template shows as the same as above.
fn md_params(object: &ObjectTy<'_>) -> Vec<MdParam> {
    let mut params: Vec<MdParam> = object
        .props
        .iter()
        .map(|p| MdParam {
            name: p.key.to_owned(),
            ty: ts_type(&p.ty, Layout::Compact),
            required: p.required,
            description: p.doc.unwrap_or_default().to_owned(),
        })
        .collect();
    if let Some(undeclared) = &object.undeclared {
        let ty = ts_type(&undeclared.ty, Layout::Compact);
        let repeat = ty.len() <= SHARED_TYPE_BYTES;
        let mut ty = Some(ty);
        for key in &undeclared.keys {
            params.push(MdParam {
                name: (*key).to_owned(),
                ty: match &ty {
                    Some(text) if repeat => text.clone(),
                    _ => ty.take().unwrap_or_default(),
                },
                required: true,
                description: String::new(),
            });
        }
    }
    params
}

pub(crate) fn markdown_context<J: Json>(tools: &[ToolIn<'_, J>]) -> MdContext {
    let tools = tools
        .iter()
        .map(|tool| {
            let args = lower_root(tool.input);
            let params = match &args {
                Ty::Object(object) => md_params(object),
                _ => Vec::new(),
            };
            let input_schema = pretty(tool.input);
            let (output_type, output_schema) = match tool.output {
                Some(schema) => (
                    ts_type(&lower_root(schema), Layout::Compact),
                    pretty(schema),
                ),
                None => (String::new(), String::new()),
            };
            let summary = crate::text::doc_lines(tool.description)
                .into_iter()
                .find(|l| !l.is_empty())
                .unwrap_or_default()
                .to_owned();
            MdTool {
                name: tool.name.to_owned(),
                name_md: name_markdown(tool.name),
                anchor: anchor(tool.name),
                summary,
                description: tool.description.to_owned(),
                args_type: ts_type(&args, Layout::Compact),
                params,
                output_type,
                input_fence: fence_for(&input_schema),
                output_fence: fence_for(&output_schema),
                input_schema,
                output_schema,
            }
        })
        .collect();
    MdContext { tools }
}
