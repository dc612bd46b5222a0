//! The server under test of the MCP conformance suite's server scenarios
//! (`npx @modelcontextprotocol/conformance server --url <url> --scenario <name>`):
//! `scripts/conformance` runs it against every scenario that applies to a tools server.
//!
//! A registry of the tools those scenarios call (`test_simple_text`, `test_image_content`,
//! `test_error_handling`, `test_tool_with_progress`, and `json_schema_2020_12_tool`, whose
//! input schema uses JSON Schema 2020-12 keywords), served by [`McpServer`] over streamable
//! HTTP with sessions on a loopback port. The registry refuses `$defs` and `$ref` in a
//! validated tool's schema, so `json_schema_2020_12_tool` is a raw tool, its schema published
//! as given. It prints its URL (`http://127.0.0.1:<port>/mcp`)
//! as its first line on stdout and serves until killed.

use std::io::Write as _;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_mcp::{HttpOptions, McpServer};
use tools_runtime::progress::Progress;
use tools_runtime::{ContentBlock, Output, Scope, ToolDefinition, ToolError, ToolRuntime};

/// A 1x1 red pixel PNG, base64.
const RED_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

type Error = Box<dyn std::error::Error + Send + Sync>;

fn scope(runtime: &ToolRuntime) -> Result<Scope, Error> {
    let scope = runtime.scope();
    let none = json!({"type": "object", "properties": {}});
    let simple = ToolDefinition::builder("test_simple_text")
        .description("Returns a simple text.")
        .input_schema(none.clone())
        .output(Output::json(json!({"type": "string"})))
        .execute(|_, _| async move { Ok(json!("This is a simple text response for testing.")) })
        .build()?;
    let image = ToolDefinition::builder("test_image_content")
        .description("Returns a 1x1 red PNG image.")
        .input_schema(none.clone())
        .output(Output::new(json!({"type": "object"}), |_, _| {
            vec![ContentBlock::Image {
                data: RED_PIXEL_PNG.to_owned(),
                mime_type: "image/png".to_owned(),
            }]
        }))
        .execute(|_, _| async move { Ok(json!({})) })
        .build()?;
    let error = ToolDefinition::builder("test_error_handling")
        .description("Always fails.")
        .input_schema(none.clone())
        .output(Output::json(json!({"type": "object"})))
        .execute(|_, _| async move {
            Err::<Value, _>(ToolError::new(
                "This tool intentionally returns an error for testing",
            ))
        })
        .build()?;
    let progress = ToolDefinition::builder("test_tool_with_progress")
        .description("Reports progress 0, 50 and 100 of 100, then returns.")
        .input_schema(none)
        .output(Output::json(json!({"type": "string"})))
        .execute(|_, ctx| async move {
            for n in [0.0, 50.0, 100.0] {
                ctx.progress(
                    Progress::new(n)
                        .with_total(100.0)
                        .with_message(format!("{n} of 100")),
                )?;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(json!("Progress complete"))
        })
        .build()?;
    let schema = ToolDefinition::raw("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"}
            },
            "additionalProperties": false
        }))
        .output(Output::json(json!({"type": "string"})))
        .execute(|_, _| async move { Ok(json!("ok")) })
        .build()?;
    for tool in [simple, image, error, progress, schema] {
        // The registration lasts as long as the scope.
        let _ = scope.register(tool)?;
    }
    Ok(scope)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let runtime = ToolRuntime::new();
    let scope = scope(&runtime)?;
    let server = McpServer::new(&scope, "conformance-server")?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let mut out = std::io::stdout();
    writeln!(out, "http://{addr}/mcp")?;
    out.flush()?;
    server
        .serve_http(
            listener,
            HttpOptions::new().sessions(true),
            CancellationToken::new(),
        )
        .await?;
    Ok(())
}
