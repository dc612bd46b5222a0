//! The client under test of the MCP conformance suite's client scenarios
//! (`npx @modelcontextprotocol/conformance client --command '<this> ' --scenario <name>`):
//! `scripts/test` runs it against every OAuth scenario and the plain ones.
//!
//! The suite appends the server's URL as the last argument and names the scenario in
//! `MCP_CONFORMANCE_SCENARIO` (its data, a pre-registered client's id and secret say, in
//! `MCP_CONFORMANCE_CONTEXT`). The client imports the server's tools with [`McpImport`] over
//! streamable HTTP, the source authorizing with [`OAuth`] when the server asks, calls each tool
//! once with arguments made from its schema, and closes. The person's step is headless: the
//! authorization URL is fetched without following redirects and the code taken from the
//! redirect's `Location`, as the suite's own clients do. It exits 1 with the error's report on
//! stderr when connecting fails. Built with the `jwt` feature (as `scripts/conformance` builds
//! it) it also answers `auth/client-credentials-jwt` (private_key_jwt); without it, that
//! scenario fails.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tools_mcp::oauth::{AuthorizeError, Authorizer, BoxFuture, Callback, Enterprise, OAuth};
use tools_mcp::{ImportOptions, McpImport, McpSource};
use tools_runtime::{ToolCall, ToolRuntime};

/// Where the suite's authorization servers redirect to (nothing listens: the redirect is read
/// from the `Location` header).
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The client ID metadata document URL the suite's CIMD scenario expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The headless person: follows no redirect and reads the code from the first one.
#[derive(Debug)]
struct Headless {
    http: reqwest::Client,
}

impl Authorizer for Headless {
    fn redirect_uri(&self) -> String {
        REDIRECT_URI.to_owned()
    }

    fn authorize(&self, url: String) -> BoxFuture<'_, Result<Callback, AuthorizeError>> {
        Box::pin(async move {
            let response = self
                .http
                .get(&url)
                .send()
                .await
                .map_err(|e| AuthorizeError::Other(format!("the authorization page: {e}")))?;
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .ok_or(AuthorizeError::BadRedirect {
                    reason: "no Location header",
                })?;
            Callback::from_redirect(location)
        })
    }
}

/// Arguments for a tool, made from its input schema: each required property a value of its type.
fn arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let value = match property.get("type").and_then(Value::as_str) {
            Some("number" | "integer") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        arguments.insert(name.clone(), value);
    }
    Value::Object(arguments)
}

fn oauth(scenario: &str, context: &Value) -> Result<OAuth, Box<dyn std::error::Error>> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let mut oauth = OAuth::new(Headless { http })
        .client_name("agent-tools-conformance")
        .client_metadata_url(CLIENT_METADATA_URL);
    if scenario == "auth/client-credentials-basic"
        && let (Some(id), Some(secret)) = (
            context.get("client_id").and_then(Value::as_str),
            context.get("client_secret").and_then(Value::as_str),
        )
    {
        return Ok(OAuth::client_credentials(id, secret));
    }
    #[cfg(feature = "jwt")]
    if scenario == "auth/client-credentials-jwt" {
        use tools_mcp::oauth::{PrivateKey, SigningAlgorithm};
        let text = |key: &str| context.get(key).and_then(Value::as_str).unwrap_or_default();
        let algorithm = match text("signing_algorithm") {
            "RS256" => SigningAlgorithm::RS256,
            "ES384" => SigningAlgorithm::ES384,
            _ => SigningAlgorithm::ES256,
        };
        let key = PrivateKey::from_pem(text("private_key_pem"), algorithm)?;
        return Ok(OAuth::client_credentials_jwt(text("client_id"), key));
    }
    if scenario == "auth/cross-app-access-complete-flow" {
        let text = |key: &str| {
            context
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        return Ok(OAuth::enterprise(Enterprise::new(
            text("idp_issuer"),
            text("idp_token_endpoint"),
            text("idp_client_id"),
            text("idp_id_token"),
            text("client_id"),
            text("client_secret"),
        )));
    }
    if scenario == "auth/pre-registration"
        && let Some(id) = context.get("client_id").and_then(Value::as_str)
    {
        oauth = oauth.client_id(id);
        if let Some(secret) = context.get("client_secret").and_then(Value::as_str) {
            oauth = oauth.client_secret(secret);
        }
    }
    Ok(oauth)
}

async fn run(url: &str, scenario: &str, context: &Value) -> Result<(), Box<dyn std::error::Error>> {
    let source = McpSource::http(url).oauth(oauth(scenario, context)?);
    let runtime = ToolRuntime::new();
    let options = ImportOptions::new()
        .connect_timeout(Duration::from_secs(20))
        .call_timeout(Duration::from_secs(10));
    let import = McpImport::connect(runtime.scope(), source, options).await?;
    let scope = runtime.scope();
    for (i, name) in import.tool_names().into_iter().enumerate() {
        let Some(definition) = scope.get(&name) else {
            continue;
        };
        let call = ToolCall::new(format!("c{i}"), &name, arguments(definition.input_schema()));
        let result = runtime.execute(call).await;
        eprintln!("{name}: {:?} {}", result.code(), result.text());
    }
    import.close().await;
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(url) = std::env::args().nth(1).filter(|a| !a.is_empty()) else {
        eprintln!("usage: conformance_client <server-url> (MCP_CONFORMANCE_SCENARIO names it)");
        std::process::exit(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    if let Err(e) = run(&url, &scenario, &context).await {
        let text = match e.downcast_ref::<tools_mcp::McpError>() {
            Some(e) => format!("{}: {}", e.code(), tools_mcp::error::report_uncut(e)),
            None => e.to_string(),
        };
        eprintln!("{scenario}: {text}");
        std::process::exit(1);
    }
}
