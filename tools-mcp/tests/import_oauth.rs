//! OAuth of an HTTP import end to end, against a real authorization server
//! (`tests/peers/auth_server.py`: the authorization code with PKCE, the refresh_token grant,
//! short-lived RS256 JWT access tokens) and a real resource server: tools-mcp's own
//! `McpServer` behind `BearerAuth` with the `JwtVerifier` (feature `jwt`) checking each token's
//! signature, audience and expiry against the authorization server's JWKS, with no leeway. Our
//! own server is used (not a Python one) because its verifier's refusal of an expired token is
//! exact and already tested (`serve_auth`), so a call that succeeds after expiry proves the
//! client refreshed.
//!
//! - the tokens kept in a `FileTokenStore` serve a second process (this test binary run again,
//!   `second_process`), which connects without calling its `Authorizer`, and, once the access
//!   token has expired, refreshes it with the refresh token;
//! - the person's step has its own bound (`OAuth::authorize_timeout`), and
//!   `ImportOptions::connect_timeout` does not count it, but still bounds the network.
//! - a `private_key_jwt` client (RS256) is authorized, and a key that is not the client's is
//!   refused by the authorization server, with no byte of the key in the error.

#![cfg(feature = "jwt")]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_mcp::oauth::{AuthorizeError, Authorizer, BoxFuture, Callback, OAuth};
use tools_mcp::token_store::FileTokenStore;
use tools_mcp::{
    BearerAuth, HttpOptions, ImportOptions, JwtVerifier, McpImport, McpServer, McpSource, codes,
};
use tools_runtime::{ToolCall, ToolRuntime};

/// The public client registered with the authorization server.
const CLIENT: &str = "cli";
/// Where the authorization server redirects (nothing listens: the headless person reads the
/// redirect's `Location`).
const REDIRECT: &str = "http://127.0.0.1:9/callback";
/// The access tokens' lifetime, in seconds. The client refreshes a token once less than half
/// of it remains, so a second process started at once still uses the first token.
const TTL: u64 = 8;
/// The variable that makes `second_process` run, holding what it needs.
const CHILD: &str = "TOOLS_MCP_OAUTH_SECOND_PROCESS";

/// The person, headless: waits `delay` (a person reading the page), then fetches the
/// authorization URL without following redirects and reads the code from the `Location`.
/// Counts its calls. `hang` makes it never answer.
struct Person {
    calls: Arc<AtomicUsize>,
    delay: Duration,
    hang: bool,
}

impl Person {
    fn new(delay: Duration) -> (Person, Arc<AtomicUsize>) {
        let calls = Arc::new(AtomicUsize::new(0));
        let person = Person {
            calls: calls.clone(),
            delay,
            hang: false,
        };
        (person, calls)
    }
}

impl Authorizer for Person {
    fn redirect_uri(&self) -> String {
        REDIRECT.to_owned()
    }

    fn authorize(&self, url: String) -> BoxFuture<'_, Result<Callback, AuthorizeError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if self.hang {
                futures::future::pending::<()>().await;
            }
            tokio::time::sleep(self.delay).await;
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| AuthorizeError::Other(e.to_string()))?;
            let response = http
                .get(&url)
                .send()
                .await
                .map_err(|e| AuthorizeError::Other(e.to_string()))?;
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or(AuthorizeError::BadRedirect {
                    reason: "no Location header",
                })?;
            Callback::from_redirect(location)
        })
    }
}

/// The authorization server (killed on drop) and its log of grants.
struct AuthServer {
    _child: tokio::process::Child,
    issuer: String,
    jwks_uri: String,
    log: std::path::PathBuf,
}

impl AuthServer {
    /// The server with the public client [`CLIENT`].
    async fn start(dir: &std::path::Path) -> AuthServer {
        let clients =
            json!({CLIENT: {"public": true, "scopes": ["mcp"], "redirect_uris": [REDIRECT]}});
        AuthServer::start_with(dir, clients).await
    }

    /// The server with the clients `clients` (see `auth_server.py`).
    async fn start_with(dir: &std::path::Path, clients: Value) -> AuthServer {
        let log = dir.join("grants.jsonl");
        let mut child = tokio::process::Command::new(super::support::python())
            .arg(super::support::peers().join("auth_server.py"))
            .arg(clients.to_string())
            .arg(&log)
            .arg(TTL.to_string())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start tests/peers/auth_server.py with the mcp venv's Python");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        tokio::time::timeout(
            Duration::from_secs(30),
            tokio::io::AsyncBufReadExt::read_line(&mut lines, &mut first),
        )
        .await
        .expect("the authorization server did not start")
        .unwrap();
        let started: Value = serde_json::from_str(&first).expect(&first);
        // It prints its line before it listens.
        let issuer = started["issuer"].as_str().unwrap();
        let addr = issuer.trim_start_matches("http://").to_owned();
        let deadline = Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(&addr).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "the authorization server does not listen"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        AuthServer {
            _child: child,
            issuer: started["issuer"].as_str().unwrap().to_owned(),
            jwks_uri: started["jwks_uri"].as_str().unwrap().to_owned(),
            log,
        }
    }

    /// The grants logged so far (`authorize`, `authorization_code`, `refresh_token`).
    fn grants(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["grant"].as_str().unwrap().to_owned()
            })
            .collect()
    }
}

/// Our server with one tool, `add`, behind the bearer front: its URL (the resource), and the
/// token that stops it.
async fn resource_server(auth: &AuthServer) -> (String, CancellationToken, ToolRuntime) {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let add = crate::support::add_tool();
    let _ = scope.register(add).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier = JwtVerifier::new(&auth.issuer, &url, &auth.jwks_uri).leeway(Duration::ZERO);
    let bearer = BearerAuth::new(verifier, url.clone())
        .authorization_server(&auth.issuer)
        .scopes_supported(["mcp"])
        .required_scopes(["mcp"]);
    let server = McpServer::new(&scope, "guarded")
        .unwrap()
        .bearer_auth(bearer);
    let stop = CancellationToken::new();
    let token = stop.clone();
    tokio::spawn(async move {
        let _kept = scope;
        server.serve_http(listener, HttpOptions::new(), token).await
    });
    (url, stop, runtime)
}

/// Imports `url` with `oauth` and calls `add` once: the sum.
async fn import_and_add(
    url: &str,
    oauth: OAuth,
    options: ImportOptions,
) -> (McpImport, ToolRuntime) {
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(runtime.scope(), McpSource::http(url).oauth(oauth), options)
        .await
        .unwrap_or_else(|e| panic!("{}: {}", e.code(), e.report()));
    add(&runtime, &import, "first").await;
    (import, runtime)
}

async fn add(runtime: &ToolRuntime, import: &McpImport, id: &str) {
    let name = import
        .tool_names()
        .into_iter()
        .find(|n| n.ends_with("add"))
        .expect("the add tool is imported");
    let result = runtime
        .execute(ToolCall::new(id, &name, json!({"a": 2, "b": 3})))
        .await;
    assert!(
        result.code().is_none(),
        "{:?}: {}",
        result.code(),
        result.text()
    );
    assert!(result.text().contains('5'), "{}", result.text());
}

fn access_token(path: &std::path::Path) -> String {
    let record: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    record["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Tokens across processes and their refresh: (a) the first import authorizes through the
/// person (who takes longer than the connection's bound) and keeps the tokens in a file;
/// (b) a second process with the same file connects and calls without calling its
/// `Authorizer`; (c) once the access token has expired (the server refuses it), a call
/// refreshes it with the refresh token and succeeds; (d) the file is mode 0600 and whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_tokens_serve_a_second_process_and_are_refreshed_after_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthServer::start(dir.path()).await;
    let (url, stop, _server_runtime) = resource_server(&auth).await;
    let tokens = dir.path().join("tokens.json");

    // (a) The person takes 1.5 s; the connection's bound is 1 s and does not count them.
    let (person, calls) = Person::new(Duration::from_millis(1500));
    let oauth = OAuth::new(person)
        .client_id(CLIENT)
        .token_store(FileTokenStore::new(&tokens));
    let started = Instant::now();
    let (import, _runtime) = import_and_add(
        &url,
        oauth,
        ImportOptions::new()
            .connect_timeout(Duration::from_secs(1))
            .probe_timeout(Duration::from_millis(500)),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_millis(1500));
    import.close().await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(auth.grants(), ["authorize", "authorization_code"]);
    let first = access_token(&tokens);

    // (b) and (c) in a new process: this test binary, running `second_process`.
    let output = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "import_oauth::second_process",
            "--ignored",
            "--nocapture",
        ])
        .env(
            CHILD,
            json!({"url": url, "tokens": tokens, "log": auth.log}).to_string(),
        )
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SECOND "))
        .unwrap_or_else(|| panic!("the second process reported nothing:\n{stdout}"));
    let report: Value = serde_json::from_str(report).unwrap();
    assert_eq!(report["authorizer_calls"], 0, "{report}");
    assert_eq!(report["calls"], 2, "{report}");
    // The call after the expiry refreshed (once; a slow start may have refreshed at connect
    // too, past half the token's life).
    let (before, after) = (
        &report["refreshes_before_expiry"],
        &report["refreshes_after"],
    );
    assert_eq!(after.as_u64(), before.as_u64().map(|n| n + 1), "{report}");
    // One person's authorization in all: the rest are refreshes.
    let grants = auth.grants();
    assert_eq!(
        grants[..2],
        ["authorize", "authorization_code"],
        "{grants:?}"
    );
    assert!(
        grants.len() > 2 && grants[2..].iter().all(|g| g == "refresh_token"),
        "{grants:?}"
    );

    // The first token has expired: the server refuses it, so the second call did refresh.
    let refused = reqwest::Client::new()
        .post(&url)
        .bearer_auth(&first)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert_ne!(access_token(&tokens), first, "the refreshed token is kept");

    // (d) Mode 0600, one whole record, no temporary file left beside it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&tokens).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let record: Value = serde_json::from_slice(&std::fs::read(&tokens).unwrap()).unwrap();
    assert_eq!(record["client_id"], CLIENT);
    assert!(record["token_response"]["refresh_token"].is_string());
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tokens"))
        .collect();
    assert_eq!(names, ["tokens.json"]);
    stop.cancel();
}

/// The second process of the test above (run only by it, through [`CHILD`]): connects with the
/// token file and an `Authorizer` that must not be called, calls `add`, waits for the access
/// token to expire, calls again, and prints what happened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the second process of stored_tokens_serve_a_second_process_and_are_refreshed_after_expiry"]
async fn second_process() {
    let given: Value = serde_json::from_str(
        &std::env::var(CHILD).expect("run by stored_tokens_serve_a_second_process_..."),
    )
    .unwrap();
    let url = given["url"].as_str().unwrap();
    let tokens = given["tokens"].as_str().unwrap();
    let (person, authorizer_calls) = Person::new(Duration::ZERO);
    let oauth = OAuth::new(person)
        .client_id(CLIENT)
        .token_store(FileTokenStore::new(tokens));
    let log = std::path::PathBuf::from(given["log"].as_str().unwrap());
    let refreshes = || {
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"refresh_token\""))
            .count()
    };
    let (import, runtime) = import_and_add(url, oauth, ImportOptions::new()).await;
    let before = refreshes();
    // Past the token's expiry (and the half of its life after which it is refreshed).
    tokio::time::sleep(Duration::from_secs(TTL + 1)).await;
    add(&runtime, &import, "second").await;
    import.close().await;
    let report = json!({
        "authorizer_calls": authorizer_calls.load(Ordering::SeqCst),
        "calls": 2,
        "refreshes_before_expiry": before,
        "refreshes_after": refreshes(),
    });
    println!("SECOND {report}");
}

/// A person who never answers fails the authorization at `OAuth::authorize_timeout` (2 s),
/// not at the connection's bound (0.5 s), which does not count the person's time; the error
/// names the step and the bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_persons_step_has_its_own_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthServer::start(dir.path()).await;
    let (url, stop, _server_runtime) = resource_server(&auth).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let person = Person {
        calls: calls.clone(),
        delay: Duration::ZERO,
        hang: true,
    };
    let oauth = OAuth::new(person)
        .client_id(CLIENT)
        .authorize_timeout(Duration::from_secs(2));
    let runtime = ToolRuntime::new();
    let started = Instant::now();
    let error = McpImport::connect(
        runtime.scope(),
        McpSource::http(&url).oauth(oauth),
        ImportOptions::new()
            .connect_timeout(Duration::from_millis(500))
            .probe_timeout(Duration::from_millis(300)),
    )
    .await
    .expect_err("a person who never answers cannot authorize");
    let elapsed = started.elapsed();
    let report = error.report();
    assert!(
        error.code() == codes::MCP_AUTH_REQUIRED || error.code() == codes::MCP_AUTH_FAILED,
        "{}: {report}",
        error.code()
    );
    assert!(
        report
            .contains("Authorizer::authorize) did not finish within 2s (OAuth::authorize_timeout)"),
        "{report}"
    );
    assert!(!report.contains("connect_timeout"), "{report}");
    assert!(elapsed >= Duration::from_secs(2), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(calls.load(Ordering::SeqCst) >= 1);
    stop.cancel();
}

/// With OAuth configured, the connection's bound still bounds the network: a server that never
/// answers fails at `connect_timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_bound_still_bounds_the_network() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // Accepts and holds every connection, answering nothing.
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let (person, calls) = Person::new(Duration::ZERO);
    let runtime = ToolRuntime::new();
    let started = Instant::now();
    let error = McpImport::connect(
        runtime.scope(),
        McpSource::http(&url).oauth(OAuth::new(person).client_id(CLIENT)),
        ImportOptions::new()
            .connect_timeout(Duration::from_millis(800))
            .probe_timeout(Duration::from_millis(300)),
    )
    .await
    .expect_err("a silent server cannot be connected");
    let elapsed = started.elapsed();
    assert!(
        error.report().contains("ImportOptions::connect_timeout"),
        "{}",
        error.report()
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

/// `private_key_jwt` against a real authorization server (PyJWT verifying the assertion with
/// the client's registered public key, its `aud`, `iss`, `sub`, `exp` and `jti`): an RS256 key
/// gets a token the resource server takes; a key that is not the client's is refused, and the
/// error says so without a byte of the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_key_jwt_client_is_authorized_and_a_wrong_key_refused() {
    use tools_mcp::oauth::{PrivateKey, SigningAlgorithm};
    let peers = super::support::peers();
    let read = |name: &str| std::fs::read_to_string(peers.join(name)).unwrap();
    let (rsa, rsa_public, ec_public) = (
        read("auth_test_key.pem"),
        read("auth_test_key.pub.pem"),
        read("client_ec_key.pub.pem"),
    );
    let dir = tempfile::tempdir().unwrap();
    let clients = json!({
        "svc": {"public_key": rsa_public, "scopes": ["mcp"]},
        "other": {"public_key": ec_public, "scopes": ["mcp"]},
    });
    let auth = AuthServer::start_with(dir.path(), clients).await;
    let (url, stop, _server_runtime) = resource_server(&auth).await;

    let key = PrivateKey::from_pem(&rsa, SigningAlgorithm::RS256).unwrap();
    let (import, _runtime) = import_and_add(
        &url,
        OAuth::client_credentials_jwt("svc", key),
        ImportOptions::new(),
    )
    .await;
    import.close().await;
    assert_eq!(auth.grants(), ["client_credentials"]);

    // `other` registered an EC key; an assertion signed with the RSA key is not its.
    let wrong = PrivateKey::from_pem(&rsa, SigningAlgorithm::RS256).unwrap();
    let runtime = ToolRuntime::new();
    let error = McpImport::connect(
        runtime.scope(),
        McpSource::http(&url).oauth(OAuth::client_credentials_jwt("other", wrong)),
        ImportOptions::new(),
    )
    .await
    .expect_err("a key that is not the client's is refused");
    let report = error.report();
    assert_eq!(error.code(), codes::MCP_AUTH_FAILED, "{report}");
    assert!(
        report.contains("the token endpoint refused the client assertion: invalid_client"),
        "{report}"
    );
    for line in rsa.lines().filter(|l| !l.starts_with("-----")) {
        assert!(!report.contains(line), "{report}");
    }
    assert_eq!(auth.grants(), ["client_credentials"]);
    stop.cancel();
}
