//! Checks a parsed [`ToolFn`] against the rules a definition must meet, recording every problem.

use super::model::{ParamKind, ToolFn};
use crate::diag::Errors;

/// The longest tool name.
const MAX_NAME: usize = 128;

/// Whether `name` follows the catalog's name rule (`tools_schema::catalog::validate_tool_name`,
/// MCP's): 1 to 128 ASCII letters, digits, `_`, `-` or `.`.
pub(crate) fn name_is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Records every problem of `tool`.
pub(crate) fn validate(tool: &ToolFn, errors: &mut Errors) {
    let name = &tool.name.value;
    if !name_is_valid(name) {
        errors.error_at(
            tool.name.span,
            format!(
                "invalid tool name `{name}`: a name is 1 to {MAX_NAME} ASCII letters, digits, `_`, `-` or `.`; \
                 write e.g. `#[tool(name = \"{}\")]`",
                suggest_name(name)
            ),
        );
    } else if name == "run_code" {
        errors.error_at(
            tool.name.span,
            "`run_code` is reserved for the Code Mode transport: choose another name with `#[tool(name = \"...\")]`",
        );
    } else if name == "describe_tools" {
        errors.error_at(
            tool.name.span,
            "`describe_tools` is reserved for Code Mode's tool discovery: choose another name with `#[tool(name = \"...\")]`",
        );
    }
    if tool
        .description
        .as_deref()
        .is_none_or(|d| d.trim().is_empty())
    {
        let span = tool
            .attrs
            .description
            .as_ref()
            .map_or(tool.ident.span(), |d| d.span);
        errors.error_at(
            span,
            "a tool needs a description, the text the model reads to decide when to call it: \
             add a `///` doc comment to the function, or write `#[tool(description = \"...\")]`",
        );
    }
    if let Some(timeout) = &tool.attrs.timeout {
        match &timeout.value {
            Ok(0) => errors.error_at(
                timeout.span,
                "a zero timeout would fail every call: give a positive duration such as `timeout = \"30s\"`, \
                 or remove `timeout` for none",
            ),
            Ok(_) => {}
            Err(message) => errors.error_at(timeout.span, message),
        }
    }
    if let Some(max_total) = &tool.attrs.max_total {
        match (&max_total.value, tool.attrs.timeout.as_ref().map(|t| &t.value)) {
            (Err(message), _) => errors.error_at(max_total.span, message),
            (Ok(_), None) => errors.error_at(
                max_total.span,
                "a timeout that resets on progress needs a timeout to reset: add `timeout = \"30s\"` \
                 (the longest quiet time), or remove `timeout_resets_on_progress`",
            ),
            (Ok(max), Some(Ok(timeout))) if max < timeout => errors.error_at(
                max_total.span,
                "`timeout_resets_on_progress` is the maximum total time of a call, and it is \
                 shorter than the timeout: give at least the timeout",
            ),
            _ => {}
        }
    }
    if let Some(callers) = &tool.attrs.callers
        && callers.value.is_none()
    {
        errors.error_at(
            callers.span,
            "`callers` says who may call the tool: write `callers = \"direct\"` (only the model, \
             directly), `callers = \"code\"` (only `run_code` programs) or `callers = \"any\"` \
             (both, the default)",
        );
    }
    if let (Some(read_only), Some(destructive)) =
        (&tool.attrs.hints.read_only, &tool.attrs.hints.destructive)
        && read_only.value
        && destructive.value
    {
        errors.error_at(
            destructive.span,
            "a `read_only` tool changes nothing, so it cannot be `destructive`: remove one of them",
        );
    }
    let mut seen: Vec<&str> = Vec::new();
    for param in tool.params.iter().filter(|p| p.kind == ParamKind::Argument) {
        if seen.contains(&param.name.as_str()) {
            errors.error(
                &param.ty,
                format!("two parameters are named `{}`: rename one", param.name),
            );
        }
        seen.push(&param.name);
    }
}

/// A valid name close to `name`: disallowed characters become `_`, truncated to the limit.
fn suggest_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME)
        .collect();
    if s.is_empty() {
        s.push_str("my_tool");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::name_is_valid;

    #[test]
    fn names() {
        assert!(name_is_valid("read_file"));
        assert!(name_is_valid("NotebookEdit"));
        assert!(name_is_valid("web-fetch2"));
        assert!(!name_is_valid(""));
        assert!(!name_is_valid("read file"));
        assert!(name_is_valid("fs.read"));
        assert!(!name_is_valid("read/file"));
        assert!(name_is_valid(&"a".repeat(128)));
        assert!(!name_is_valid(&"a".repeat(129)));
    }
}
