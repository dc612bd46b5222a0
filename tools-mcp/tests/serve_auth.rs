//! The served HTTP endpoint as an OAuth resource server (#37): JWT bearer tokens checked
//! against a JWKS served by the test, the protected resource metadata, the 401/403 challenges,
//! one registry served to two tenants with different slices, the step-up of a tool's scope,
//! and hostile tokens refused before anything of the registry is reached; a tool's scope on a
//! Code Mode program's calls, task offering per tenant, the introspection cache, the binary's
//! bearer flags, the call span's `user.id` and a 2025-11-25 session with a bearer. Only with the `jwt`
//! feature (`scripts/test` runs it: `cargo test -p tools-mcp --features jwt --test integration
//! serve_auth`).

#![cfg(feature = "jwt")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tools_mcp::{
    BearerAuth, HttpOptions, IntrospectionVerifier, JwtVerifier, McpServer, TokenVerifier,
};
use tools_runtime::{Output, Scope, ToolDefinition, ToolRuntime};

const ISSUER: &str = "http://issuer.test";
const KID: &str = "test-key-1";

fn key_pem() -> Vec<u8> {
    std::fs::read(super::support::peers().join("auth_test_key.pem")).unwrap()
}

fn public_pem() -> Vec<u8> {
    std::fs::read(super::support::peers().join("auth_test_key.pub.pem")).unwrap()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A JWT signed with the test key (RS256, kid `KID`) of these claims.
fn sign(claims: &Value) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(KID.to_owned());
    let key = EncodingKey::from_rsa_pem(&key_pem()).unwrap();
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

fn claims(subject: &str, audience: &str, scope: &str) -> Value {
    json!({
        "iss": ISSUER, "sub": subject, "aud": audience, "scope": scope,
        "client_id": format!("{subject}-app"), "exp": now() + 600, "iat": now(),
    })
}

/// Serves the test key's JWKS on loopback; counts the fetches.
async fn jwks() -> (String, Arc<AtomicUsize>) {
    let key = EncodingKey::from_rsa_pem(&key_pem()).unwrap();
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::RS256).unwrap();
    jwk.common.key_id = Some(KID.to_owned());
    let set = serde_json::to_string(&JwkSet { keys: vec![jwk] }).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    let fetches = Arc::new(AtomicUsize::new(0));
    let count = fetches.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            let set = set.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{set}",
                    set.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, fetches)
}

/// The registry: `echo` for everyone (its runs counted), `alpha_only` in tenant A's agent
/// scope, `beta_only` in tenant B's; and the subject each call was made for.
struct Fixture {
    _runtime: ToolRuntime,
    _scopes: Vec<Scope>,
    runs: Arc<AtomicUsize>,
    subjects: Arc<Mutex<Vec<String>>>,
    addr: String,
    resource: String,
    fetches: Arc<AtomicUsize>,
    stop: CancellationToken,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn tool(name: &str, runs: Arc<AtomicUsize>, subjects: Arc<Mutex<Vec<String>>>) -> ToolDefinition {
    ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "object"})))
        .execute(move |_, ctx| {
            let runs = runs.clone();
            let subjects = subjects.clone();
            let subject = ctx.execution().principal().map(|p| p.subject.clone());
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                subjects
                    .lock()
                    .unwrap()
                    .push(subject.clone().unwrap_or_default());
                Ok(json!({"for": subject}))
            }
        })
        .build()
        .unwrap()
}

/// A runtime whose global scope has `echo` (see [`tool`]), with its run count and subjects.
fn echo_registry() -> (
    ToolRuntime,
    Scope,
    Arc<AtomicUsize>,
    Arc<Mutex<Vec<String>>>,
) {
    let runtime = ToolRuntime::new();
    let global = runtime.scope();
    let runs = Arc::new(AtomicUsize::new(0));
    let subjects = Arc::new(Mutex::new(Vec::new()));
    let _ = global
        .register(tool("echo", runs.clone(), subjects.clone()))
        .unwrap();
    (runtime, global, runs, subjects)
}

async fn fixture(configure: impl FnOnce(BearerAuth) -> BearerAuth) -> Fixture {
    let (jwks_uri, fetches) = jwks().await;
    fixture_of(ISSUER, jwks_uri, fetches, configure).await
}

/// The fixture for tokens of `issuer`, whose keys are at `jwks_uri`.
async fn fixture_of(
    issuer: &str,
    jwks_uri: String,
    fetches: Arc<AtomicUsize>,
    configure: impl FnOnce(BearerAuth) -> BearerAuth,
) -> Fixture {
    let owned = issuer.to_owned();
    let verifier = move |resource: &str| -> Arc<dyn TokenVerifier> {
        Arc::new(JwtVerifier::new(owned, resource.to_owned(), jwks_uri))
    };
    fixture_verified(issuer, verifier, fetches, configure).await
}

/// The fixture with the verifier `verifier` makes for the resource.
async fn fixture_verified(
    issuer: &str,
    verifier: impl FnOnce(&str) -> Arc<dyn TokenVerifier>,
    fetches: Arc<AtomicUsize>,
    configure: impl FnOnce(BearerAuth) -> BearerAuth,
) -> Fixture {
    let (runtime, global, runs, subjects) = echo_registry();
    let alpha = global.agent();
    let _ = alpha
        .register(tool("alpha_only", runs.clone(), subjects.clone()))
        .unwrap();
    let beta = global.agent();
    let _ = beta
        .register(tool("beta_only", runs.clone(), subjects.clone()))
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let auth = configure(
        BearerAuth::with_shared(verifier(&resource), resource.clone())
            .authorization_server(issuer)
            .scopes_supported(["mcp", "admin"])
            .required_scopes(["mcp"]),
    );
    let (a, b) = (alpha.key(), beta.key());
    let server = McpServer::new(&global, "tenants")
        .unwrap()
        .bearer_auth(auth)
        .tenants(move |p| match p.subject.as_str() {
            "alice" | "alpha" => Some(a),
            "bob" | "beta" => Some(b),
            _ => None,
        });
    let stop = CancellationToken::new();
    let token = stop.clone();
    tokio::spawn(async move { server.serve_http(listener, HttpOptions::new(), token).await });
    Fixture {
        _runtime: runtime,
        _scopes: vec![global, alpha, beta],
        runs,
        subjects,
        addr,
        resource,
        fetches,
        stop,
    }
}

/// A 2026-07-28 request without a session, with `authorization` when given.
fn post(addr: &str, authorization: Option<&str>, method: &str, params: Value) -> String {
    post_declaring(addr, authorization, method, params, json!({}))
}

/// The same, the client declaring `capabilities`.
fn post_declaring(
    addr: &str,
    authorization: Option<&str>,
    method: &str,
    params: Value,
    capabilities: Value,
) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut auth = authorization.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    if let Some(name) = params["name"].as_str().or(params["taskId"].as_str()) {
        auth.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

async fn exchange(addr: &str, text: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // A server that refuses the head may close before the whole request is written.
    let _ = stream.write_all(text.as_bytes()).await;
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out).await;
    String::from_utf8_lossy(&out).into_owned()
}

fn status(reply: &str) -> u16 {
    reply
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn header<'a>(reply: &'a str, name: &str) -> Option<&'a str> {
    let head = reply.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

fn message(reply: &str) -> Value {
    let data = reply
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .or_else(|| reply.split("\r\n\r\n").nth(1))
        .unwrap();
    serde_json::from_str(data.trim()).unwrap()
}

async fn list(f: &Fixture, token: &str) -> Vec<String> {
    let reply = exchange(
        &f.addr,
        &post(
            &f.addr,
            Some(&format!("Bearer {token}")),
            "tools/list",
            json!({}),
        ),
    )
    .await;
    assert_eq!(status(&reply), 200, "{reply}");
    let mut names: Vec<String> = message(&reply)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

async fn call(f: &Fixture, token: &str, tool: &str) -> String {
    exchange(
        &f.addr,
        &post(
            &f.addr,
            Some(&format!("Bearer {token}")),
            "tools/call",
            json!({"name": tool, "arguments": {}}),
        ),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_and_the_challenge_without_a_token() {
    let f = fixture(|a| a).await;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let reply = exchange(
            &f.addr,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                f.addr
            ),
        )
        .await;
        assert_eq!(status(&reply), 200, "{reply}");
        let document = message(&reply);
        assert_eq!(document["resource"], f.resource);
        assert_eq!(document["authorization_servers"], json!([ISSUER]));
        assert_eq!(document["scopes_supported"], json!(["mcp", "admin"]));
        assert_eq!(document["bearer_methods_supported"], json!(["header"]));
    }
    let reply = exchange(&f.addr, &post(&f.addr, None, "tools/list", json!({}))).await;
    assert_eq!(status(&reply), 401, "{reply}");
    assert_eq!(
        header(&reply, "www-authenticate").unwrap(),
        format!(
            "Bearer resource_metadata=\"http://{}/.well-known/oauth-protected-resource/mcp\", \
             scope=\"mcp\"",
            f.addr
        )
    );
    assert!(!reply.contains("\"result\""), "{reply}");
    assert_eq!(
        f.fetches.load(Ordering::SeqCst),
        0,
        "no token, no key fetched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tenant_sees_and_calls_its_own_slice_as_its_principal() {
    let f = fixture(|a| a).await;
    let alice = sign(&claims("alice", &f.resource, "mcp"));
    let bob = sign(&claims("bob", &f.resource, "mcp"));
    assert_eq!(list(&f, &alice).await, vec!["alpha_only", "echo"]);
    assert_eq!(list(&f, &bob).await, vec!["beta_only", "echo"]);

    let reply = call(&f, &alice, "alpha_only").await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(
        message(&reply)["result"]["structuredContent"],
        json!({"for": "alice"})
    );
    // Bob's tool is not in Alice's slice: unknown, as MCP answers a tool it does not have.
    let reply = call(&f, &alice, "beta_only").await;
    assert_eq!(message(&reply)["error"]["code"], -32602, "{reply}");
    let reply = call(&f, &bob, "echo").await;
    assert_eq!(
        message(&reply)["result"]["structuredContent"],
        json!({"for": "bob"})
    );
    assert_eq!(*f.subjects.lock().unwrap(), vec!["alice", "bob"]);

    // A principal the rule gives no scope: 403, nothing run.
    let carol = sign(&claims("carol", &f.resource, "mcp"));
    let reply = call(&f, &carol, "echo").await;
    assert_eq!(status(&reply), 403, "{reply}");
    assert!(
        header(&reply, "www-authenticate")
            .unwrap()
            .contains("error=\"insufficient_scope\"")
    );
    // Without the required scope: 403 naming it.
    let scopeless = sign(&claims("alice", &f.resource, "other"));
    let reply = call(&f, &scopeless, "echo").await;
    assert_eq!(status(&reply), 403, "{reply}");
    let challenge = header(&reply, "www-authenticate").unwrap();
    assert!(challenge.contains("scope=\"other mcp\""), "{challenge}");
    assert_eq!(f.runs.load(Ordering::SeqCst), 2);
    assert_eq!(f.fetches.load(Ordering::SeqCst), 1, "the key set is kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_scope_is_a_step_up_challenge_and_the_tool_is_listed() {
    let f = fixture(|a| a.require_scope("echo", "admin")).await;
    let plain = sign(&claims("alice", &f.resource, "mcp"));
    assert_eq!(list(&f, &plain).await, vec!["alpha_only", "echo"]);
    let reply = call(&f, &plain, "echo").await;
    assert_eq!(status(&reply), 403, "{reply}");
    let challenge = header(&reply, "www-authenticate").unwrap();
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"mcp admin\""),
        "{challenge}"
    );
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
    let admin = sign(&claims("alice", &f.resource, "mcp admin"));
    let reply = call(&f, &admin, "echo").await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_tokens_are_refused_before_the_registry() {
    let f = fixture(|a| a).await;
    let good = claims("alice", &f.resource, "mcp");
    let b64 = |v: &Value| {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let unsigned = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT"})),
        b64(&good)
    );
    // Algorithm confusion: HMAC with the RSA public key as the secret.
    let mut hs = Header::new(Algorithm::HS256);
    hs.kid = Some(KID.to_owned());
    let confused = jsonwebtoken::encode(
        &hs,
        &good,
        &EncodingKey::from_secret(&public_pem()).unwrap(),
    )
    .unwrap();
    let mut other_kid = Header::new(Algorithm::RS256);
    other_kid.kid = Some("rotated-away".to_owned());
    let key = EncodingKey::from_rsa_pem(&key_pem()).unwrap();
    let unknown_kid = jsonwebtoken::encode(&other_kid, &good, &key).unwrap();
    let mut expired = good.clone();
    expired["exp"] = json!(now() - 3600);
    let mut early = good.clone();
    early["nbf"] = json!(now() + 3600);
    let mut no_exp = good.clone();
    no_exp.as_object_mut().unwrap().remove("exp");
    let mut issuer = good.clone();
    issuer["iss"] = json!("http://evil.test");
    // One character of the signature changed (not its last, whose low bits are padding).
    let signed = sign(&good);
    let at = signed.len() - 10;
    let flipped = if &signed[at..=at] == "A" { "B" } else { "A" };
    let tampered = format!("{}{flipped}{}", &signed[..at], &signed[at + 1..]);
    let cases: Vec<(&str, String)> = vec![
        ("garbage", "not-a-jwt".to_owned()),
        ("alg none", unsigned),
        ("hmac with the rsa key", confused),
        ("unknown kid", unknown_kid),
        (
            "another audience",
            sign(&claims("alice", "http://other.test/mcp", "mcp")),
        ),
        ("wrong issuer", sign(&issuer)),
        ("expired", sign(&expired)),
        ("not yet valid", sign(&early)),
        ("no exp", sign(&no_exp)),
        ("tampered signature", tampered),
        ("100 KB", "a".repeat(100 * 1024)),
    ];
    for (what, token) in &cases {
        for method in ["tools/list", "tools/call"] {
            let reply = exchange(
                &f.addr,
                &post(
                    &f.addr,
                    Some(&format!("Bearer {token}")),
                    method,
                    json!({"name": "echo", "arguments": {}}),
                ),
            )
            .await;
            assert_eq!(status(&reply), 401, "{what}: {reply}");
            let challenge = header(&reply, "www-authenticate").unwrap();
            assert!(
                challenge.contains("error=\"invalid_token\""),
                "{what}: {challenge}"
            );
            assert!(!reply.contains("\"tools\""), "{what}: listed: {reply}");
        }
    }
    // A 1 MiB token: refused by the size of the head (hyper's 431) or of the token (401).
    let huge = format!("Bearer {}", "a".repeat(1024 * 1024));
    let reply = exchange(
        &f.addr,
        &post(&f.addr, Some(&huge), "tools/list", json!({})),
    )
    .await;
    assert!(
        [401, 431].contains(&status(&reply)) || reply.is_empty(),
        "{}",
        &reply[..reply.len().min(300)]
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0, "no tool body ran");

    // A flood of tokens naming unknown keys costs no fetch per token.
    let before = f.fetches.load(Ordering::SeqCst);
    for i in 0..40 {
        let mut h = Header::new(Algorithm::RS256);
        h.kid = Some(format!("unknown-{i}"));
        let token = jsonwebtoken::encode(&h, &good, &key).unwrap();
        let reply = call(&f, &token, "echo").await;
        assert_eq!(status(&reply), 401, "{reply}");
    }
    let fetched = f.fetches.load(Ordering::SeqCst) - before;
    assert!(fetched <= 1, "{fetched} key set fetches for 40 bad tokens");
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);

    // And a good token still works.
    let reply = call(&f, &sign(&good), "echo").await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
}

/// A real client against the server, with a real authorization server
/// (`tests/peers/auth_server.py`: client_credentials, RS256 JWTs, JWKS): the 401 sends it to the
/// metadata and the authorization server, each client sees its own slice, and a tool's scope
/// makes it step up (a second grant, with the scope the 403 named) when `steps_up`. `client`
/// runs one client program: (resource URL, issuer, client id, secret, scope, tool) to its
/// output, whose last line is JSON.
async fn oauth_clients(
    steps_up: bool,
    client: impl Fn(&str, &str, &str, &str, &str, &str) -> std::process::Output,
) {
    let python = super::support::python();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("grants.jsonl");
    let clients = json!({
        "alpha": {"secret": "alpha-secret", "scopes": ["mcp", "admin"]},
        "beta": {"secret": "beta-secret", "scopes": ["mcp"]},
    });
    let mut server = tokio::process::Command::new(&python)
        .arg(super::support::peers().join("auth_server.py"))
        .arg(clients.to_string())
        .arg(&log)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start tests/peers/auth_server.py with the mcp venv's Python");
    let mut lines = tokio::io::BufReader::new(server.stdout.take().unwrap());
    let mut first = String::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        tokio::io::AsyncBufReadExt::read_line(&mut lines, &mut first),
    )
    .await
    .expect("the authorization server did not start")
    .unwrap();
    let started: Value = serde_json::from_str(&first).expect(&first);
    let issuer = started["issuer"].as_str().unwrap().to_owned();
    let jwks_uri = started["jwks_uri"].as_str().unwrap().to_owned();
    let f = fixture_of(&issuer, jwks_uri, Arc::new(AtomicUsize::new(0)), |a| {
        a.require_scope("echo", "admin")
    })
    .await;

    let run = |id: &str, secret: &str, scope: &str, tool: &str| {
        let output = client(&f.resource, &issuer, id, secret, scope, tool);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let last = text.lines().last().unwrap_or_default().to_owned();
        serde_json::from_str::<Value>(&last).expect(&text)
    };
    let alpha = tokio::task::block_in_place(|| run("alpha", "alpha-secret", "mcp", "echo"));
    assert_eq!(alpha["tools"], json!(["alpha_only", "echo"]), "{alpha}");
    if steps_up {
        assert_eq!(alpha["call"], json!({"for": "alpha"}), "{alpha}");
    } else {
        // The client saw the 403 insufficient_scope and re-authorized once, with its own scope.
        let error = alpha["error"].as_str().unwrap_or_default();
        assert!(error.contains("403"), "{alpha}");
        let alpha =
            tokio::task::block_in_place(|| run("alpha", "alpha-secret", "mcp admin", "echo"));
        assert_eq!(alpha["call"], json!({"for": "alpha"}), "{alpha}");
    }
    let beta = tokio::task::block_in_place(|| run("beta", "beta-secret", "mcp", "beta_only"));
    assert_eq!(beta["tools"], json!(["beta_only", "echo"]), "{beta}");
    assert_eq!(beta["call"], json!({"for": "beta"}), "{beta}");

    let grants: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let scopes = |who: &str| -> Vec<String> {
        grants
            .iter()
            .filter(|g| g["client"] == who)
            .map(|g| g["scope"].as_str().unwrap().to_owned())
            .collect()
    };
    // Alpha stepped up to `admin` for `echo` (or, without step-up, asked again for what it had
    // and then was configured with it); beta never needed it.
    let alpha_grants = if steps_up {
        vec!["mcp", "mcp admin"]
    } else {
        vec!["mcp", "mcp", "mcp admin"]
    };
    assert_eq!(scopes("alpha"), alpha_grants, "{grants:?}");
    assert_eq!(scopes("beta"), vec!["mcp"], "{grants:?}");
    assert!(
        grants.iter().all(|g| g["resource"] == f.resource.as_str()),
        "{grants:?}"
    );
    assert_eq!(*f.subjects.lock().unwrap(), vec!["alpha", "beta"]);
}

/// PyPI `mcp`'s OAuth client (`ClientCredentialsOAuthProvider`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_authorizes_lists_its_slice_and_steps_up() {
    let python = super::support::python();
    oauth_clients(true, |url, issuer, id, secret, scope, tool| {
        std::process::Command::new(&python)
            .arg(super::support::peers().join("oauth_client.py"))
            .args([url, issuer, id, secret, scope, tool])
            .output()
            .unwrap()
    })
    .await;
}

/// npm's TypeScript SDK client (`ClientCredentialsProvider` of its auth extensions). Its
/// client_credentials grant (1.32) asks for the provider's configured scope only
/// (`fetchToken` passes `clientMetadata.scope`, not the challenge's), so it answers the step-up
/// challenge by asking again for what it had and gives up; configured with the scope, it calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_client_authorizes_and_lists_its_slice() {
    let sdk = super::support::ts_sdk();
    oauth_clients(false, |url, issuer, id, secret, scope, tool| {
        std::process::Command::new("node")
            .arg(super::support::peers().join("oauth_client.mjs"))
            .arg(&sdk)
            .args([url, issuer, id, secret, scope, tool])
            .output()
            .unwrap()
    })
    .await;
}

/// An introspection endpoint (RFC 7662) on loopback: `good` and each `flood-...` are active for
/// `audience`, `elsewhere` active for another audience, anything else inactive; a request without the
/// server's Basic credentials is answered 401. Counts the requests.
async fn introspection(audience: Arc<Mutex<String>>) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/introspect", listener.local_addr().unwrap());
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            let audience = audience.lock().unwrap().clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let mut read = 0;
                // Head and the short form body.
                while read < buf.len() {
                    let n = stream.read(&mut buf[read..]).await.unwrap_or(0);
                    read += n;
                    let text = String::from_utf8_lossy(&buf[..read]);
                    if n == 0 || text.contains("token_type_hint=access_token") {
                        break;
                    }
                }
                let text = String::from_utf8_lossy(&buf[..read]).to_lowercase();
                // "mcp-server:s3cret" in Basic.
                let (status, answer) =
                    if !text.contains("authorization: basic bwnwlxnlcnzlcjpzm2nyzxq=") {
                        ("401 Unauthorized", json!({"error": "invalid_client"}))
                    } else if text.contains("token=good&") {
                        (
                            "200 OK",
                            json!({"active": true, "sub": "alice", "client_id": "alice-app",
                        "scope": "mcp", "aud": audience, "exp": now() + 60}),
                        )
                    } else if text.contains("token=flood-") {
                        (
                            "200 OK",
                            json!({"active": true, "sub": "alice", "scope": "mcp",
                        "aud": audience, "exp": now() + 60}),
                        )
                    } else if text.contains("token=elsewhere&") {
                        (
                            "200 OK",
                            json!({"active": true, "sub": "alice", "scope": "mcp",
                        "aud": "http://other.test/mcp", "exp": now() + 60}),
                        )
                    } else {
                        ("200 OK", json!({"active": false}))
                    };
                let body = answer.to_string();
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            });
        }
    });
    (url, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_are_introspected() {
    let audience = Arc::new(Mutex::new(String::new()));
    let (endpoint, asked) = introspection(audience.clone()).await;
    let set = audience.clone();
    let f = fixture_verified(
        ISSUER,
        move |resource: &str| -> Arc<dyn TokenVerifier> {
            *set.lock().unwrap() = resource.to_owned();
            Arc::new(
                IntrospectionVerifier::new(endpoint, resource)
                    .client_credentials("mcp-server", "s3cret"),
            )
        },
        Arc::new(AtomicUsize::new(0)),
        |a| a,
    )
    .await;
    assert_eq!(list(&f, "good").await, vec!["alpha_only", "echo"]);
    let reply = call(&f, "good", "alpha_only").await;
    assert_eq!(
        message(&reply)["result"]["structuredContent"],
        json!({"for": "alice"}),
        "{reply}"
    );
    for token in ["elsewhere", "revoked"] {
        let reply = call(&f, token, "echo").await;
        assert_eq!(status(&reply), 401, "{token}: {reply}");
        assert!(
            header(&reply, "www-authenticate")
                .unwrap()
                .contains("invalid_token")
        );
    }
    assert_eq!(f.runs.load(Ordering::SeqCst), 1);
    // `good`'s second request was answered from the cache; refusals are not kept.
    assert_eq!(
        asked.load(Ordering::SeqCst),
        3,
        "one introspection per token"
    );
    let reply = call(&f, "revoked", "echo").await;
    assert_eq!(status(&reply), 401, "{reply}");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        4,
        "an inactive answer is asked again"
    );
}

/// The introspection cache (#37): a second request with a token does not ask the endpoint, an
/// expired entry does, and a flood of distinct (active) tokens keeps the cache to its bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn introspection_answers_are_cached_within_bounds() {
    let audience = Arc::new(Mutex::new(String::new()));
    let (endpoint, asked) = introspection(audience.clone()).await;
    let set = audience.clone();
    let kept: Arc<Mutex<Option<IntrospectionVerifier>>> = Arc::new(Mutex::new(None));
    let keep = kept.clone();
    let ttl = std::time::Duration::from_millis(400);
    let f = fixture_verified(
        ISSUER,
        move |resource: &str| -> Arc<dyn TokenVerifier> {
            *set.lock().unwrap() = resource.to_owned();
            let verifier = IntrospectionVerifier::new(endpoint, resource)
                .client_credentials("mcp-server", "s3cret")
                .cache(5, ttl);
            *keep.lock().unwrap() = Some(verifier.clone());
            Arc::new(verifier)
        },
        Arc::new(AtomicUsize::new(0)),
        |a| a,
    )
    .await;
    let verifier = kept.lock().unwrap().clone().unwrap();
    for _ in 0..3 {
        let reply = call(&f, "good", "echo").await;
        assert_eq!(status(&reply), 200, "{reply}");
    }
    assert_eq!(asked.load(Ordering::SeqCst), 1, "asked once, then cached");
    assert_eq!(verifier.cached_tokens(), 1);
    tokio::time::sleep(ttl + std::time::Duration::from_millis(200)).await;
    let reply = call(&f, "good", "echo").await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "the expired entry asked again"
    );

    for i in 0..40 {
        let token = format!("flood-{i}");
        assert_eq!(list(&f, &token).await, vec!["alpha_only", "echo"]);
        assert!(
            verifier.cached_tokens() <= 5,
            "{}",
            verifier.cached_tokens()
        );
    }
    assert_eq!(asked.load(Ordering::SeqCst), 42);
    assert_eq!(verifier.cached_tokens(), 5);
    // The newest are kept: the last flood token is answered from the cache.
    let _ = list(&f, "flood-39").await;
    assert_eq!(asked.load(Ordering::SeqCst), 42);
    assert_eq!(f.runs.load(Ordering::SeqCst), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_key_set_is_503_with_retry_after() {
    // A port nothing listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let jwks_uri = format!("http://{}/jwks", closed.local_addr().unwrap());
    drop(closed);
    let f = fixture_of(ISSUER, jwks_uri, Arc::new(AtomicUsize::new(0)), |a| a).await;
    let token = sign(&claims("alice", &f.resource, "mcp"));
    for _ in 0..3 {
        let reply = call(&f, &token, "echo").await;
        assert_eq!(status(&reply), 503, "{reply}");
        assert!(header(&reply, "retry-after").is_some(), "{reply}");
    }
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
}

/// Keeps every event's level and fields, as text.
struct Keep(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Keep {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!(" {}={value:?}", field.name()));
            }
        }
        let mut fields = Fields(format!("{}", event.metadata().level()));
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
}

/// Each refusal is logged with its code and reason, and no log line holds the token. One
/// thread, so the subscriber set for it sees the server's tasks too.
#[tokio::test(flavor = "current_thread")]
async fn refusals_are_logged_with_their_reason_and_never_the_token() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let lines = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(Keep(lines.clone()));
    let _guard = tracing::subscriber::set_default(subscriber);
    let f = fixture(|a| a).await;
    let mut expired = claims("alice", &f.resource, "mcp");
    expired["exp"] = json!(now() - 3600);
    let expired = sign(&expired);
    let other = sign(&claims("alice", "http://other.test/mcp", "mcp"));
    for (token, code) in [
        (&expired, "MCP_TOKEN_EXPIRED"),
        (&other, "MCP_TOKEN_AUDIENCE"),
    ] {
        // Other tests' threads, without this subscriber, may have cached the refusal's
        // callsite as uninteresting in the meantime (the interest cache is process-wide).
        tracing::callsite::rebuild_interest_cache();
        let reply = call(&f, token, "echo").await;
        assert_eq!(status(&reply), 401, "{reply}");
        let logged = lines.lock().unwrap().clone();
        assert!(
            logged
                .iter()
                .any(|l| l.starts_with("DEBUG") && l.contains(code) && l.contains("refused")),
            "{code} not logged: {logged:#?}"
        );
    }
    let logged = lines.lock().unwrap().clone();
    for token in [&expired, &other] {
        // Neither the token nor its signature.
        let signature = token.rsplit('.').next().unwrap();
        assert!(
            !logged
                .iter()
                .any(|l| l.contains(token.as_str()) || l.contains(signature)),
            "a token was logged: {logged:#?}"
        );
    }
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
}

/// The test key's JWKS under `kid`.
fn key_set(kid: &str) -> String {
    let key = EncodingKey::from_rsa_pem(&key_pem()).unwrap();
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::RS256).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    serde_json::to_string(&JwkSet { keys: vec![jwk] }).unwrap()
}

fn sign_with_kid(claims: &Value, kid: &str) -> String {
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some(kid.to_owned());
    let key = EncodingKey::from_rsa_pem(&key_pem()).unwrap();
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

/// A key set that the test rotates; counts the fetches.
async fn rotating_jwks(set: Arc<Mutex<String>>) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks", listener.local_addr().unwrap());
    let fetches = Arc::new(AtomicUsize::new(0));
    let count = fetches.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            let body = set.lock().unwrap().clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (url, fetches)
}

/// A rotated key is picked up by fetching the set again on its unknown `kid`, but never twice
/// within the refresh interval: a key that left the set is refused once the set is fetched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_is_fetched_on_its_unknown_kid_within_the_rate_limit() {
    let set = Arc::new(Mutex::new(key_set("old")));
    let (uri, fetches) = rotating_jwks(set.clone()).await;
    let interval = std::time::Duration::from_millis(300);
    let f = fixture_verified(
        ISSUER,
        move |resource: &str| -> Arc<dyn TokenVerifier> {
            Arc::new(JwtVerifier::new(ISSUER, resource, uri).refresh_interval(interval))
        },
        fetches.clone(),
        |a| a,
    )
    .await;
    let good = claims("alice", &f.resource, "mcp");
    let reply = call(&f, &sign_with_kid(&good, "old"), "echo").await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(fetches.load(Ordering::SeqCst), 1);

    *set.lock().unwrap() = key_set("new");
    // Within the interval: no fetch, so the new key is not known yet.
    let reply = call(&f, &sign_with_kid(&good, "new"), "echo").await;
    assert_eq!(status(&reply), 401, "{reply}");
    assert_eq!(fetches.load(Ordering::SeqCst), 1);

    tokio::time::sleep(interval + std::time::Duration::from_millis(100)).await;
    let reply = call(&f, &sign_with_kid(&good, "new"), "echo").await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
    // The old key left the set: refused, and asking again so soon fetches nothing.
    let reply = call(&f, &sign_with_kid(&good, "old"), "echo").await;
    assert_eq!(status(&reply), 401, "{reply}");
    assert_eq!(fetches.load(Ordering::SeqCst), 2);
    assert_eq!(f.runs.load(Ordering::SeqCst), 2);
}

/// A served scope under Code Mode (TypeScript) with `read_doc` for everyone and `write_doc`
/// needing `docs:write`; each body's runs counted (read, write).
struct CodeFixture {
    _runtime: ToolRuntime,
    _scope: Scope,
    reads: Arc<AtomicUsize>,
    writes: Arc<AtomicUsize>,
    addr: String,
    resource: String,
    stop: CancellationToken,
}

impl Drop for CodeFixture {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn code_fixture() -> CodeFixture {
    let (jwks_uri, _) = jwks().await;
    let runtime = ToolRuntime::builder()
        .mode(tools_runtime::PresentationMode::Code)
        .extension(tools_code::CodeMode::new(
            tools_code::TypeScriptRuntime::new(),
        ))
        .build()
        .unwrap();
    let scope = runtime.scope();
    let reads = Arc::new(AtomicUsize::new(0));
    let writes = Arc::new(AtomicUsize::new(0));
    let subjects = Arc::new(Mutex::new(Vec::new()));
    let _ = scope
        .register(tool("read_doc", reads.clone(), subjects.clone()))
        .unwrap();
    let _ = scope
        .register(tool("write_doc", writes.clone(), subjects))
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let auth = BearerAuth::new(JwtVerifier::new(ISSUER, &resource, jwks_uri), &resource)
        .authorization_server(ISSUER)
        .required_scopes(["mcp"])
        .require_scope("write_doc", "docs:write");
    let server = McpServer::new(&scope, "code").unwrap().bearer_auth(auth);
    let stop = CancellationToken::new();
    let token = stop.clone();
    tokio::spawn(async move { server.serve_http(listener, HttpOptions::new(), token).await });
    CodeFixture {
        _runtime: runtime,
        _scope: scope,
        reads,
        writes,
        addr,
        resource,
        stop,
    }
}

/// A tool's scope holds on a Code Mode program's calls (#37): a reader's program that calls the
/// write tool gets the refusal as that call's error (naming the tool and the scope) and the
/// body never runs; an editor's program writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_scope_holds_on_a_code_mode_programs_calls() {
    let f = code_fixture().await;
    let program = "const read = await tools.read_doc({});\n\
        try {\n\
          const wrote = await tools.write_doc({});\n\
          return {read, wrote};\n\
        } catch (e) {\n\
          return {read, refused: String(e && e.message ? e.message : e)};\n\
        }";
    let run = |token: String| {
        let addr = f.addr.clone();
        async move {
            let reply = exchange(
                &addr,
                &post(
                    &addr,
                    Some(&format!("Bearer {token}")),
                    "tools/call",
                    json!({"name": "run_code",
                           "arguments": {"code": program, "description": "read, then write"}}),
                ),
            )
            .await;
            assert_eq!(status(&reply), 200, "{reply}");
            message(&reply)["result"].clone()
        }
    };
    let reader = sign(&claims("alice", &f.resource, "mcp"));
    let result = run(reader).await;
    assert_ne!(result["isError"], true, "{result}");
    let value = &result["structuredContent"]["result"];
    assert_eq!(value["read"], json!({"for": "alice"}), "{result}");
    let refused = value["refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains("insufficient_scope")
            && refused.contains("`write_doc`")
            && refused.contains("`docs:write`"),
        "{result}"
    );
    assert_eq!(
        f.writes.load(Ordering::SeqCst),
        0,
        "the write body never ran"
    );

    let editor = sign(&claims("bob", &f.resource, "mcp docs:write"));
    let result = run(editor).await;
    let value = &result["structuredContent"]["result"];
    assert_eq!(value["wrote"], json!({"for": "bob"}), "{result}");
    assert!(value.get("refused").is_none(), "{result}");
    assert_eq!(f.writes.load(Ordering::SeqCst), 1);
    assert_eq!(f.reads.load(Ordering::SeqCst), 2);

    // The direct call is still the front's step-up (`403`), before anything runs.
    let reader = sign(&claims("alice", &f.resource, "mcp"));
    let reply = exchange(
        &f.addr,
        &post(
            &f.addr,
            Some(&format!("Bearer {reader}")),
            "tools/call",
            json!({"name": "write_doc", "arguments": {}}),
        ),
    )
    .await;
    assert_eq!(status(&reply), 403, "{reply}");
    assert_eq!(f.writes.load(Ordering::SeqCst), 1);
}

/// The guard refuses a program's call even when nothing of HTTP is involved: a call made for a
/// principal from the served scope, as another host of the same runtime would make it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_holds_a_tool_scope_on_a_call_made_in_process() {
    let f = code_fixture().await;
    let runtime = f._runtime.clone();
    let principal = tools_runtime::Principal::new("carol").with_scopes(["mcp"]);
    let ran = runtime
        .execute(
            tools_runtime::ToolCall::new(
                "c1",
                "run_code",
                json!({"code": "return await tools.write_doc({});", "description": "write"}),
            )
            .with_principal(principal),
        )
        .await;
    assert!(ran.is_error(), "{}", ran.text());
    assert!(ran.text().contains("insufficient_scope"), "{}", ran.text());
    assert_eq!(f.writes.load(Ordering::SeqCst), 0);
    // For no principal the guard is not asked (the host authenticated no one).
    let ran = runtime
        .execute(tools_runtime::ToolCall::new(
            "c2",
            "run_code",
            json!({"code": "return await tools.write_doc({});", "description": "write"}),
        ))
        .await;
    assert!(!ran.is_error(), "{}", ran.text());
    assert_eq!(f.writes.load(Ordering::SeqCst), 1);
}

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// Whether MCP tasks are offered follows the tenant's slice (#37): the server's own scope lists
/// nothing long-running; tenant A's `slow` is long-running, tenant B's `slow` is not. Alice's
/// `server/discover` declares tasks and her call is a task (which she can follow to its result);
/// Bob's declares none and his call is answered at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_offering_follows_the_tenants_slice() {
    let (jwks_uri, _) = jwks().await;
    let (_runtime, global, _runs, _subjects) = echo_registry();
    let slow = |long: bool| {
        let builder = ToolDefinition::builder("slow")
            .input_schema(json!({"type": "object"}))
            .output(Output::json(json!({"type": "string"})));
        let builder = if long {
            builder.long_running()
        } else {
            builder
        };
        builder
            .execute(|_, _| async {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                Ok(json!("slept"))
            })
            .build()
            .unwrap()
    };
    let alpha = global.agent();
    let _ = alpha.register(slow(true)).unwrap();
    let beta = global.agent();
    let _ = beta.register(slow(false)).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let resource = format!("http://{addr}/mcp");
    let auth = BearerAuth::new(JwtVerifier::new(ISSUER, &resource, jwks_uri), &resource)
        .authorization_server(ISSUER)
        .required_scopes(["mcp"]);
    let (a, b) = (alpha.key(), beta.key());
    let server = McpServer::new(&global, "tenants")
        .unwrap()
        .bearer_auth(auth)
        .tenants(move |p| match p.subject.as_str() {
            "alice" => Some(a),
            "bob" => Some(b),
            _ => None,
        });
    let stop = CancellationToken::new();
    let token = stop.clone();
    let serving = server.clone();
    tokio::spawn(async move {
        serving
            .serve_http(listener, HttpOptions::new(), token)
            .await
    });
    let _keep = (global, alpha, beta);

    let declaring = json!({"extensions": {TASKS: {}}});
    let send = |token: &str, method: &str, params: Value| {
        let request = post_declaring(
            &addr,
            Some(&format!("Bearer {token}")),
            method,
            params,
            declaring.clone(),
        );
        let addr = addr.clone();
        async move { message(&exchange(&addr, &request).await) }
    };
    let alice = sign(&claims("alice", &resource, "mcp"));
    let bob = sign(&claims("bob", &resource, "mcp"));

    let discovered = send(&alice, "server/discover", json!({})).await;
    assert!(
        discovered["result"]["capabilities"]
            .to_string()
            .contains(TASKS),
        "alice: {discovered}"
    );
    let discovered = send(&bob, "server/discover", json!({})).await;
    assert!(
        discovered["result"].is_object()
            && !discovered["result"]["capabilities"]
                .to_string()
                .contains(TASKS),
        "bob: {discovered}"
    );

    let call = json!({"name": "slow", "arguments": {}});
    let created = send(&alice, "tools/call", call.clone()).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let task = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mut done = Value::Null;
    for _ in 0..200 {
        done = send(&alice, "tasks/get", json!({"taskId": task})).await;
        if done["result"]["status"] != "working" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "slept",
        "{done}"
    );
    // The task is Alice's: Bob's `tasks/get` finds no such task.
    let other = send(&bob, "tasks/get", json!({"taskId": task})).await;
    assert!(other["error"].is_object(), "{other}");

    let plain = send(&bob, "tools/call", call).await;
    assert_eq!(plain["result"]["content"][0]["text"], "slept", "{plain}");
    assert!(plain["result"].get("taskId").is_none(), "{plain}");
    assert_eq!(server.task_count(), 1);
    stop.cancel();
}

/// `tools-mcp serve --http` with bearer flags (#37): the binary serves the metadata its flags
/// say, refuses a request without a token (`401`), serves one with a JWT of the issuer whose
/// JWKS the test serves, and holds `--require-scope` (the step-up `403`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_as_a_resource_server_from_its_flags() {
    let (jwks_uri, fetches) = jwks().await;
    let resource = "http://tools-mcp.test/mcp";
    let (_child, url, _line) = tokio::task::block_in_place(|| {
        super::support::serve_http(&[
            "--resource",
            resource,
            "--jwt-issuer",
            ISSUER,
            "--jwks-url",
            &jwks_uri,
            "--scope",
            "mcp",
            "--scope",
            "math",
            "--required-scope",
            "mcp",
            "--require-scope",
            "add=math",
        ])
    });
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap()
        .to_owned();
    let reply = exchange(
        &addr,
        &format!(
            "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\n\
             Connection: close\r\n\r\n"
        ),
    )
    .await;
    assert_eq!(status(&reply), 200, "{reply}");
    let document = message(&reply);
    assert_eq!(document["resource"], resource);
    assert_eq!(document["authorization_servers"], json!([ISSUER]));
    assert_eq!(document["scopes_supported"], json!(["mcp", "math"]));

    let echo = json!({"name": "echo", "arguments": {"message": "hi"}});
    let reply = exchange(&addr, &post(&addr, None, "tools/call", echo.clone())).await;
    assert_eq!(status(&reply), 401, "{reply}");
    assert!(
        header(&reply, "www-authenticate")
            .unwrap()
            .contains("oauth-protected-resource/mcp"),
        "{reply}"
    );
    assert_eq!(fetches.load(Ordering::SeqCst), 0);

    let plain = format!("Bearer {}", sign(&claims("alice", resource, "mcp")));
    let reply = exchange(&addr, &post(&addr, Some(&plain), "tools/call", echo)).await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(
        message(&reply)["result"]["content"][0]["text"],
        "hi",
        "{reply}"
    );

    let add = json!({"name": "add", "arguments": {"a": 1, "b": 2}});
    let reply = exchange(&addr, &post(&addr, Some(&plain), "tools/call", add.clone())).await;
    assert_eq!(status(&reply), 403, "{reply}");
    assert!(
        header(&reply, "www-authenticate")
            .unwrap()
            .contains("scope=\"mcp math\""),
        "{reply}"
    );
    let math = format!("Bearer {}", sign(&claims("alice", resource, "mcp math")));
    let reply = exchange(&addr, &post(&addr, Some(&math), "tools/call", add)).await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(
        message(&reply)["result"]["structuredContent"],
        json!({"sum": 3}),
        "{reply}"
    );
    // Another audience is refused.
    let other = format!(
        "Bearer {}",
        sign(&claims("alice", "http://other.test/mcp", "mcp"))
    );
    let reply = exchange(
        &addr,
        &post(
            &addr,
            Some(&other),
            "tools/call",
            json!({"name": "stats", "arguments": {}}),
        ),
    )
    .await;
    assert_eq!(status(&reply), 401, "{reply}");
}

/// Bearer flags the binary cannot act on are refused at start, exit code 2, naming the problem
/// (and never a secret: the introspection client's secret comes from a variable).
#[test]
fn the_binary_refuses_bad_bearer_flags() {
    let cases: &[(&[&str], &str)] = &[
        (&["--resource", "http://h/mcp"], "SERVE_BEARER_ON_STDIO"),
        (
            &[
                "--http",
                "127.0.0.1:0",
                "--jwt-issuer",
                "http://i",
                "--jwks-url",
                "http://k",
            ],
            "SERVE_NO_RESOURCE",
        ),
        (
            &["--http", "127.0.0.1:0", "--resource", "http://h/mcp"],
            "SERVE_NO_VERIFIER",
        ),
        (
            &[
                "--http",
                "127.0.0.1:0",
                "--resource",
                "http://h/mcp",
                "--jwt-issuer",
                "http://i",
                "--jwks-url",
                "http://k",
                "--introspection-url",
                "http://x",
            ],
            "SERVE_TWO_VERIFIERS",
        ),
        (
            &[
                "--http",
                "127.0.0.1:0",
                "--resource",
                "http://h/mcp",
                "--jwt-issuer",
                "http://i",
            ],
            "SERVE_JWT_INCOMPLETE",
        ),
        (
            &[
                "--http",
                "127.0.0.1:0",
                "--resource",
                "http://h/mcp",
                "--introspection-url",
                "http://x",
                "--introspection-client-id-env",
                "TOOLS_MCP_TEST_ID",
            ],
            "SERVE_CREDENTIALS_INCOMPLETE",
        ),
        (
            &[
                "--http",
                "127.0.0.1:0",
                "--resource",
                "http://h/mcp",
                "--introspection-url",
                "http://x",
                "--introspection-client-id-env",
                "TOOLS_MCP_TEST_UNSET_ID",
                "--introspection-client-secret-env",
                "TOOLS_MCP_TEST_UNSET_SECRET",
            ],
            "SERVE_MISSING_ENV",
        ),
        (
            &[
                "--http",
                "127.0.0.1:0",
                "--resource",
                "http://h/mcp",
                "--introspection-url",
                "http://x",
                "--require-scope",
                "add",
            ],
            "SERVE_BAD_TOOL_SCOPE",
        ),
    ];
    for (args, code) in cases {
        let output = std::process::Command::new(super::support::SERVER)
            .arg("serve")
            .args(*args)
            .env_remove("TOOLS_MCP_TEST_UNSET_ID")
            .env_remove("TOOLS_MCP_TEST_UNSET_SECRET")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(code), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}: it did not start");
    }
}

/// `tools-mcp serve --http --introspection-url` with the client credentials read from the
/// variables its flags name: opaque tokens are introspected with them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_introspects_with_credentials_from_the_environment() {
    let resource = "http://tools-mcp.test/mcp";
    let (endpoint, asked) = introspection(Arc::new(Mutex::new(resource.to_owned()))).await;
    let mut command = std::process::Command::new(super::support::SERVER);
    command
        .arg("serve")
        .args(["--resource", resource, "--introspection-url", &endpoint])
        .args(["--introspection-client-id-env", "TOOLS_MCP_TEST_CLIENT"])
        .args(["--introspection-client-secret-env", "TOOLS_MCP_TEST_SECRET"])
        .env("TOOLS_MCP_TEST_CLIENT", "mcp-server")
        .env("TOOLS_MCP_TEST_SECRET", "s3cret");
    let (_child, url, _line) =
        tokio::task::block_in_place(|| super::support::serve_http_command(command));
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap()
        .to_owned();
    let echo = json!({"name": "echo", "arguments": {"message": "hi"}});
    let reply = exchange(
        &addr,
        &post(&addr, Some("Bearer good"), "tools/call", echo.clone()),
    )
    .await;
    assert_eq!(status(&reply), 200, "{reply}");
    assert_eq!(message(&reply)["result"]["content"][0]["text"], "hi");
    let reply = exchange(
        &addr,
        &post(&addr, Some("Bearer revoked"), "tools/call", echo),
    )
    .await;
    assert_eq!(status(&reply), 401, "{reply}");
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

/// Keeps the fields of every span named `name`, as `field=value` text, when made and when
/// recorded later.
struct SpanFields {
    name: &'static str,
    seen: Arc<Mutex<Vec<String>>>,
}

struct Visit<'a>(&'a mut String);

impl tracing::field::Visit for Visit<'_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push_str(&format!(" {}={value}", field.name()));
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl<S> tracing_subscriber::Layer<S> for SpanFields
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if attrs.metadata().name() == self.name {
            let mut text = String::new();
            attrs.record(&mut Visit(&mut text));
            self.seen.lock().unwrap().push(text);
        }
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if ctx.span(id).is_some_and(|s| s.name() == self.name) {
            let mut text = String::new();
            values.record(&mut Visit(&mut text));
            self.seen.lock().unwrap().push(text);
        }
    }
}

/// The served call's span records the authenticated subject as `user.id` (and never the
/// token). One thread, so the subscriber set for it sees the server's tasks too.
#[tokio::test(flavor = "current_thread")]
async fn the_call_span_records_the_subject_as_user_id() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(SpanFields {
        name: "mcp tools/call",
        seen: seen.clone(),
    });
    let _guard = tracing::subscriber::set_default(subscriber);
    let f = fixture(|a| a).await;
    let alice = sign(&claims("alice", &f.resource, "mcp"));
    // Other tests' threads, without this subscriber, may cache the span's callsite as
    // uninteresting (the interest cache is process-wide): rebuilt, and asked again if so.
    for _ in 0..5 {
        tracing::callsite::rebuild_interest_cache();
        let reply = call(&f, &alice, "echo").await;
        assert_eq!(status(&reply), 200, "{reply}");
        if !seen.lock().unwrap().is_empty() {
            break;
        }
    }
    let fields = seen.lock().unwrap().clone();
    assert!(
        fields.iter().any(|f| f.contains("user.id=alice")),
        "{fields:#?}"
    );
    assert!(
        fields.iter().any(|f| f.contains("gen_ai.tool.name=echo")),
        "{fields:#?}"
    );
    let signature = alice.rsplit('.').next().unwrap();
    assert!(!fields.iter().any(|f| f.contains(signature)), "{fields:#?}");
}

/// A 2025-11-25 session with bearer auth: `initialize` at that version with a token opens a
/// session, a call in it runs for the token's principal, and a request of the session without
/// a token is `401` (every request is authenticated, session or not).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_session_with_a_bearer_token() {
    let (jwks_uri, _) = jwks().await;
    let (_runtime, global, runs, _subjects) = echo_registry();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let url = format!("http://{addr}/mcp");
    let auth = BearerAuth::new(JwtVerifier::new(ISSUER, &url, jwks_uri), &url)
        .authorization_server(ISSUER)
        .required_scopes(["mcp"]);
    let server = McpServer::new(&global, "sessions")
        .unwrap()
        .bearer_auth(auth);
    let stop = CancellationToken::new();
    let token = stop.clone();
    tokio::spawn(async move {
        server
            .serve_http(listener, HttpOptions::new().sessions(true), token)
            .await
    });
    let _keep = global;
    let bearer = format!("Bearer {}", sign(&claims("alice", &url, "mcp")));
    let client = reqwest::Client::new();
    let send = |body: Value, session: Option<&str>, authorization: Option<&str>| {
        let mut request = client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        if let Some(authorization) = authorization {
            request = request.header("Authorization", authorization);
        }
        request.send()
    };
    let data = |text: &str| -> Value {
        let line = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .rfind(|d| !d.trim().is_empty())
            .unwrap_or(text);
        serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});

    let refused = send(initialize.clone(), None, None).await.unwrap();
    assert_eq!(refused.status(), 401);

    let opened = send(initialize, None, Some(&bearer)).await.unwrap();
    assert_eq!(opened.status(), 200);
    let session = opened
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .expect("a session id")
        .to_owned();
    let answer = data(&opened.text().await.unwrap());
    assert_eq!(
        answer["result"]["protocolVersion"], "2025-11-25",
        "{answer}"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let acknowledged = send(initialized, Some(&session), Some(&bearer))
        .await
        .unwrap();
    assert!(
        acknowledged.status().is_success(),
        "{}",
        acknowledged.status()
    );

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}});
    let ran = send(call.clone(), Some(&session), Some(&bearer))
        .await
        .unwrap();
    assert_eq!(ran.status(), 200);
    let answer = data(&ran.text().await.unwrap());
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"for": "alice"}),
        "{answer}"
    );

    // Each request is served for its own token's principal, whoever opened the session.
    let other = format!("Bearer {}", sign(&claims("bob", &url, "mcp")));
    let ran = send(call.clone(), Some(&session), Some(&other))
        .await
        .unwrap();
    assert_eq!(ran.status(), 200);
    let answer = data(&ran.text().await.unwrap());
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"for": "bob"}),
        "{answer}"
    );

    let refused = send(call, Some(&session), None).await.unwrap();
    assert_eq!(refused.status(), 401);
    assert!(
        refused
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("resource_metadata=")),
        "{:?}",
        refused.headers()
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    stop.cancel();
}

/// The guard holds a tool's scope in a tenant's slice too (the scope the tenant rule gives the
/// principal), and leaves alone the calls made from a scope this server does not serve for
/// that principal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guard_follows_the_tenant_rule() {
    let f = fixture(|a| {
        a.require_scope("alpha_only", "admin")
            .require_scope("echo", "admin")
    })
    .await;
    let alpha = f._scopes[1].key();
    let beta = f._scopes[2].key();
    let alice = tools_runtime::Principal::new("alice").with_scopes(["mcp"]);
    let call = |agent| {
        tools_runtime::ToolCall::new("c", "alpha_only", json!({}))
            .with_agent(agent)
            .with_principal(alice.clone())
    };
    let refused = f._runtime.execute(call(alpha)).await;
    assert_eq!(refused.code(), Some("GUARD_DENIED"), "{}", refused.text());
    assert!(refused.text().contains("`admin`"), "{}", refused.text());
    // Alice's slice is alpha's: a call made for her from beta's scope is not this server's
    // (and beta has no `alpha_only`: unknown there).
    let elsewhere = f._runtime.execute(call(beta)).await;
    assert_eq!(
        elsewhere.code(),
        Some("UNKNOWN_TOOL"),
        "{}",
        elsewhere.text()
    );
    let echo = |agent| {
        tools_runtime::ToolCall::new("e", "echo", json!({}))
            .with_agent(agent)
            .with_principal(alice.clone())
    };
    let refused = f._runtime.execute(echo(alpha)).await;
    assert_eq!(refused.code(), Some("GUARD_DENIED"), "{}", refused.text());
    let elsewhere = f._runtime.execute(echo(beta)).await;
    assert!(!elsewhere.is_error(), "{}", elsewhere.text());
    let admin = tools_runtime::Principal::new("alice").with_scopes(["mcp", "admin"]);
    let ran = f
        ._runtime
        .execute(
            tools_runtime::ToolCall::new("c", "alpha_only", json!({}))
                .with_agent(alpha)
                .with_principal(admin),
        )
        .await;
    assert!(!ran.is_error(), "{}", ran.text());
    assert_eq!(f.runs.load(Ordering::SeqCst), 2);
}
