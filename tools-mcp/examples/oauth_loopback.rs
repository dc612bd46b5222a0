//! Importing an MCP server that needs OAuth, from a CLI: the authorization URL is printed, the
//! person opens it, and the redirect comes back to a loopback listener; the tokens are kept in a
//! file (mode 0600), so a second run authorizes no more until they expire and cannot be
//! refreshed.
//!
//! ```text
//! cargo run -p tools-mcp --example oauth_loopback -- http://127.0.0.1:3000/mcp [tokens.json]
//! ```

use std::time::Duration;

use tools_mcp::oauth::{LoopbackAuthorizer, OAuth};
use tools_mcp::token_store::FileTokenStore;
use tools_mcp::{ImportOptions, McpImport, McpSource};
use tools_runtime::ToolRuntime;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .ok_or("usage: oauth_loopback <server-url> [token-file]")?;
    let tokens = args.next().unwrap_or_else(|| "mcp-tokens.json".to_owned());

    // 127.0.0.1:8765/callback is the redirect URI registered (dynamically) with the server.
    let authorizer = LoopbackAuthorizer::bind(8765)?
        .on_url(|url| eprintln!("Open this URL in a browser to authorize:\n\n  {url}\n"));
    let oauth = OAuth::new(authorizer)
        .client_name("agent-tools example")
        // The person has 5 minutes to log in (the default, said here to be seen).
        .authorize_timeout(Duration::from_secs(300))
        .token_store(FileTokenStore::new(tokens));

    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        McpSource::http(url).oauth(oauth),
        // The connection's bound counts the network only, not the person's time on their step.
        ImportOptions::new().connect_timeout(Duration::from_secs(30)),
    )
    .await
    .map_err(|e| format!("{}: {}", e.code(), e.report()))?;
    for name in import.tool_names() {
        println!("{name}");
    }
    import.close().await;
    Ok(())
}
