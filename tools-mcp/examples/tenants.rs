//! One registry served over streamable HTTP to two tenants, each with its own slice, behind
//! bearer tokens. The verifier here is a fixed table (two tokens, for the example); a real
//! server uses `JwtVerifier` (feature `jwt`) or `IntrospectionVerifier`.
//!
//! `cargo run -p tools-mcp --example tenants`: serves on loopback, asks as each tenant (and as
//! no one) with plain HTTP, prints what each sees, and stops.

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_mcp::{BearerAuth, HttpOptions, McpServer, TokenRefusal, TokenVerifier};
use tools_runtime::{Output, Principal, ToolDefinition, ToolRuntime};

/// Two known tokens; anything else is refused.
struct Table;

impl TokenVerifier for Table {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenRefusal>> {
        let found = match token {
            "token-of-alice" => Ok(Principal::new("alice").with_scopes(["mcp"])),
            "token-of-bob" => Ok(Principal::new("bob").with_scopes(["mcp"])),
            _ => Err(TokenRefusal::Inactive),
        };
        Box::pin(std::future::ready(found))
    }
}

fn tool(name: &str) -> Result<ToolDefinition, Box<dyn std::error::Error>> {
    Ok(ToolDefinition::builder(name)
        .description(format!("The tool {name}."))
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "object"})))
        .execute(|_, ctx| {
            let who = ctx.execution().principal().map(|p| p.subject.clone());
            async move { Ok(json!({"for": who})) }
        })
        .build()?)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // One registry: a tool for everyone, and one agent scope per tenant with its own tool.
    let runtime = ToolRuntime::new();
    let shared = runtime.scope();
    let _ = shared.register(tool("search")?)?;
    let alice = shared.agent();
    let _ = alice.register(tool("alice_reports")?)?;
    let bob = shared.agent();
    let _ = bob.register(tool("bob_invoices")?)?;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let auth = BearerAuth::new(Table, url.clone())
        .authorization_server("https://auth.example.com")
        .required_scopes(["mcp"]);
    let (a, b) = (alice.key(), bob.key());
    let server = McpServer::new(&shared, "tenants")?
        .bearer_auth(auth)
        .tenants(move |p| match p.subject.as_str() {
            "alice" => Some(a),
            "bob" => Some(b),
            _ => None,
        });
    let stop = CancellationToken::new();
    tokio::spawn(server.serve_http(listener, HttpOptions::new(), stop.clone()));

    let http = reqwest::Client::new();
    for token in [None, Some("token-of-alice"), Some("token-of-bob")] {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "example", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }}
        });
        let mut request = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list")
            .body(body.to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await?;
        let status = response.status();
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = response.text().await?;
        let data = text
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap_or(&text);
        let names: Vec<String> = serde_json::from_str::<Value>(data)
            .ok()
            .and_then(|m| m["result"]["tools"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect();
        println!(
            "{:<16} {status} {names:?} {}",
            token.unwrap_or("(no token)"),
            challenge.unwrap_or_default()
        );
    }
    stop.cancel();
    Ok(())
}
