//! The sixth act: the demo's tools served over MCP (streamable HTTP on loopback) behind bearer
//! tokens, and imported by two callers whose tokens carry different scopes.

use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_mcp::{
    BearerAuth, HttpOptions, ImportOptions, McpImport, McpServer, McpSource, TokenRefusal,
    TokenVerifier,
};
use tools_runtime::{PresentationMode, Principal, ToolCall, ToolRuntime};

use crate::script::Printer;
use crate::workspace::Workspace;
use crate::{DemoError, setup};

/// The scope every caller needs, and the one a write needs besides.
pub const READ_SCOPE: &str = "files:read";
/// The scope of `write` (a step up from [`READ_SCOPE`]).
pub const WRITE_SCOPE: &str = "files:write";

/// The demo's token table: two callers, one that may only read. A real server checks JWTs
/// against its issuer's keys (`tools_mcp::JwtVerifier`, feature `jwt`) or introspects them.
struct DemoTokens;

impl TokenVerifier for DemoTokens {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenRefusal>> {
        let found = match token {
            "reader-token" => Ok(Principal::new("reader").with_scopes([READ_SCOPE])),
            "editor-token" => Ok(Principal::new("editor").with_scopes([READ_SCOPE, WRITE_SCOPE])),
            _ => Err(TokenRefusal::Inactive),
        };
        Box::pin(std::future::ready(found))
    }
}

/// Runs the act.
pub(crate) async fn mcp_act(p: &mut Printer<'_>, ws: &Arc<Workspace>) -> Result<(), DemoError> {
    p.heading("6. MCP with identity: the tools served to two callers, each with its own scopes")?;
    let served = setup(None, PresentationMode::Native, Some(ws.clone()))?;
    // Who each served call was made for, as the registry's listeners see it.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let _who = served.agent.on_pre_execute(move |exec, decision| {
        let who = exec.principal().map_or("nobody", |p| p.subject.as_str());
        log.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(format!("{} for {who}", exec.name()));
        decision
    })?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(DemoError::Output)?;
    let address = listener.local_addr().map_err(DemoError::Output)?;
    let url = format!("http://{address}/mcp");
    let auth = BearerAuth::new(DemoTokens, url.clone())
        .authorization_server("https://auth.example.invalid")
        .required_scopes([READ_SCOPE])
        .require_scope("write", WRITE_SCOPE);
    let server = McpServer::new(&served.agent, "tools-demo")?.bearer_auth(auth);
    let stop = CancellationToken::new();
    let serving = tokio::spawn(server.serve_http(listener, HttpOptions::new(), stop.clone()));
    p.line(format!(
        "  served on loopback (streamable HTTP); every call needs a token with {READ_SCOPE}, write {WRITE_SCOPE} too"
    ))?;

    let outcome = callers(p, &url).await;
    stop.cancel();
    let _ = serving.await;
    outcome?;
    p.sub("What the served registry's listeners saw (the principal travels with each call)")?;
    let seen = seen.lock().unwrap_or_else(PoisonError::into_inner).clone();
    p.lines("  ", &seen)?;
    Ok(())
}

async fn callers(p: &mut Printer<'_>, url: &str) -> Result<(), DemoError> {
    let style = p.style;
    // No token: refused at the door, with the challenge naming where to get one.
    let runtime = ToolRuntime::new();
    match McpImport::connect(runtime.scope(), McpSource::http(url), ImportOptions::new()).await {
        Ok(_) => {
            return Err(DemoError::McpAct(
                "a caller without a token was let in".into(),
            ));
        }
        Err(e) if e.code() == tools_mcp::codes::MCP_AUTH_REQUIRED => p.line(format!(
            "  without a token: {}",
            style.red(&format!("refused ({})", e.code()))
        ))?,
        Err(e) => return Err(e.into()),
    }
    for (who, token) in [("reader", "reader-token"), ("editor", "editor-token")] {
        p.sub(&format!(
            "The {who} imports the tools (token with its scopes)"
        ))?;
        let runtime = ToolRuntime::new();
        let import = McpImport::connect(
            runtime.scope(),
            McpSource::http(url).bearer(token),
            ImportOptions::new().prefix("ws_"),
        )
        .await?;
        p.line(format!("  imported: {}", import.tool_names().join(", ")))?;
        let read = runtime
            .execute(ToolCall::new("m1", "ws_read", json!({"path": "notes.txt"})))
            .await;
        p.line(format!(
            "  ws_read notes.txt: {}",
            if !read.is_error() {
                style.green("ok")
            } else {
                style.red(&read.text())
            }
        ))?;
        let write = runtime
            .execute(ToolCall::new(
                "m2",
                "ws_write",
                json!({"path": format!("from-{who}.txt"), "content": format!("written by the {who}\n")}),
            ))
            .await;
        if !write.is_error() {
            p.line(format!("  ws_write from-{who}.txt: {}", style.green("ok")))?;
        } else {
            let code = write.code().unwrap_or("?");
            if code != tools_mcp::codes::MCP_AUTH_FAILED || !write.text().contains(WRITE_SCOPE) {
                return Err(DemoError::McpAct(format!(
                    "the {who}'s write failed otherwise: {}",
                    write.text()
                )));
            }
            p.line(format!(
                "  ws_write from-{who}.txt: {}",
                style.red(&format!(
                    "refused ({code}): the server asks for the scope {WRITE_SCOPE} (step up)"
                ))
            ))?;
        }
        import.close().await;
    }
    Ok(())
}
