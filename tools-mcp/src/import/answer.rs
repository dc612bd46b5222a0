//! What a server's answer to a call becomes: the `tools/call` result in it, the text of its
//! content ([`content_text`], of the schema [`text_output_schema`]), or the call's failure
//! ([`Failed`]).

use rmcp::model::{CallToolResult, ServerResult};
use rmcp::service::ServiceError;
use serde_json::{Value, json};
use tools_runtime::ToolError;
use tools_schema::excerpt::cut;

use crate::error::{codes, report};
use crate::wire::{REASON_TOO_LARGE, made_up_reason};

/// The schema of an imported tool's value when the server declares no output schema.
pub fn text_output_schema() -> Value {
    json!({
        "type": "string",
        "description": "The text of the MCP result: its text blocks joined with newlines; other blocks as bracketed notes."
    })
}

/// A call's failure, and its `error.type` on the call's client span (the OpenTelemetry MCP
/// conventions' values: `tool_error` for an `isError` result or a failed task, a JSON-RPC
/// error's code; otherwise the failure's own code).
pub(super) struct Failed {
    pub(super) error: ToolError,
    pub(super) kind: std::borrow::Cow<'static, str>,
}

impl From<ToolError> for Failed {
    fn from(error: ToolError) -> Failed {
        let kind = std::borrow::Cow::Owned(error.code().to_owned());
        Failed { error, kind }
    }
}

impl Failed {
    /// The server's tool failed (`isError`, or its task failed).
    pub(super) fn tool_error(error: ToolError) -> Failed {
        Failed {
            error,
            kind: std::borrow::Cow::Borrowed("tool_error"),
        }
    }
}

/// The `tools/call` result in a server's answer, or what the answer was instead. A result that
/// omits `content` is read as an empty one, as rmcp's own `call_tool` does.
pub(super) fn call_tool_result(answer: ServerResult) -> Result<CallToolResult, &'static str> {
    match answer {
        ServerResult::CallToolResult(result) => Ok(result),
        ServerResult::EmptyResult(_) | ServerResult::TaskAckResult(_) => {
            Ok(CallToolResult::default())
        }
        ServerResult::CustomResult(custom)
            if custom
                .0
                .as_object()
                .is_some_and(|o| o.keys().all(|k| k == "_meta")) =>
        {
            Ok(CallToolResult::default())
        }
        ServerResult::CreateTaskResult(_) => Err("a task the import did not await"),
        ServerResult::InputRequiredResult(_) => Err("a request for input"),
        _ => Err("another kind of result"),
    }
}

/// The call's error for a failed request of the call (a JSON-RPC error's `error.type` is its
/// code).
pub(super) fn call_failed(
    error: ServiceError,
    tool: &str,
    gone: &dyn Fn(&str) -> ToolError,
) -> Failed {
    if let Some(refused) = crate::import_auth::refusal(&error, "", None) {
        return Failed::tool_error(ToolError::with_code(
            refused.code(),
            format!(
                "the MCP server refused the call of `{tool}`: {}",
                report(&refused)
            ),
        ));
    }
    let failed = match error {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            gone("it exited or the connection broke during the call")
        }
        ServiceError::McpError(e) => match made_up_reason(&e) {
            Some(REASON_TOO_LARGE) => ToolError::with_code(
                codes::MCP_MESSAGE_TOO_LARGE,
                format!("the MCP call of `{tool}` failed: {}", cut(&e.message)),
            ),
            Some(_) => ToolError::with_code(
                codes::MCP_INVALID_RESULT,
                format!("the MCP call of `{tool}` failed: {}", cut(&e.message)),
            ),
            None => {
                return Failed {
                    error: ToolError::with_code(
                        codes::MCP_TOOL_ERROR,
                        format!("the MCP server refused the call: {}", cut(&e.message)),
                    ),
                    kind: std::borrow::Cow::Owned(e.code.0.to_string()),
                };
            }
        },
        e => ToolError::with_code(
            codes::MCP_TOOL_ERROR,
            format!("the MCP call failed: {}", cut(&e.to_string())),
        ),
    };
    failed.into()
}

/// The text of MCP content blocks: text as itself, any other block as a bracketed note.
pub fn content_text(content: &[rmcp::model::ContentBlock]) -> String {
    use rmcp::model::ContentBlock as C;
    let mut out = String::new();
    for block in content {
        if !out.is_empty() {
            out.push('\n');
        }
        match block {
            C::Text(t) => out.push_str(&t.text),
            C::Image(i) => out.push_str(&format!("[image {}]", i.mime_type)),
            C::Audio(a) => out.push_str(&format!("[audio {}]", a.mime_type)),
            C::Resource(r) => {
                let uri = match &r.resource {
                    rmcp::model::ResourceContents::TextResourceContents { uri, .. }
                    | rmcp::model::ResourceContents::BlobResourceContents { uri, .. } => uri,
                    _ => "",
                };
                out.push_str(&format!("[resource {uri}]"));
            }
            C::ResourceLink(l) => out.push_str(&format!("[resource link {}]", l.uri)),
            _ => out.push_str("[content]"),
        }
    }
    out
}

/// The failure of a call whose server is no longer connected (`why` says how it was seen).
pub(super) fn server_gone(tool: &str, why: &str) -> ToolError {
    ToolError::with_code(
        codes::MCP_SERVER_GONE,
        format!(
            "the MCP server of `{tool}` is not connected ({why}); the import must reconnect it"
        ),
    )
}
