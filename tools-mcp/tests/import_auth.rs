//! Credentials of an HTTP import against real servers: our `McpServer` behind a small hyper
//! front that checks the bearer token and a header on every request (and answers `401`/`403`
//! with a challenge otherwise); the file token store's mode, atomic replacement and corrupt
//! file; the loopback authorizer's redirect; and no token in any `Debug` or error.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Bytes, Frame, Incoming};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_mcp::oauth::{AuthorizeError, Authorizer, LoopbackAuthorizer};
use tools_mcp::token_store::{FileTokenStore, TokenRecord, TokenStore, TokenStoreError};
use tools_mcp::{HttpOptions, ImportOptions, McpImport, McpServer, McpSource, codes};
use tools_runtime::{ToolCall, ToolRuntime};

const TOKEN: &str = "tok-7f3a9c-secret";
const WRONG: &str = "tok-wrong-4e1d-secret";

/// What the front does with a request whose credentials are not the expected ones.
#[derive(Clone, Copy)]
enum Refuse {
    Unauthorized,
    Forbidden,
    /// Every request passes but a `tools/call`, which gets a `403`.
    ForbiddenCalls,
}

/// A served scope with one tool, `add`, on loopback: its address.
async fn backend() -> (String, CancellationToken) {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let add = crate::support::add_tool();
    let _ = scope.register(add).unwrap();
    let server = McpServer::new(&scope, "guarded").unwrap();
    // The runtime lives as long as the server task.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let stop = CancellationToken::new();
    let token = stop.clone();
    tokio::spawn(async move {
        let _kept = (runtime, scope);
        server.serve_http(listener, HttpOptions::new(), token).await
    });
    (addr, stop)
}

type Body = BoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;

fn full(status: u16, challenge: Option<String>, text: &'static str) -> hyper::Response<Body> {
    let mut response = hyper::Response::builder().status(status);
    if let Some(challenge) = challenge {
        response = response.header("www-authenticate", challenge);
    }
    response
        .header("content-type", "application/json")
        .body(
            Full::new(Bytes::from_static(text.as_bytes()))
                .map_err(|e| match e {})
                .boxed(),
        )
        .unwrap()
}

/// A hyper front on loopback that passes a request to `backend` only when it carries
/// `Authorization: Bearer TOKEN` and `x-tenant: acme`, and refuses it as `refuse` says
/// otherwise. Its URL, and the count of requests it passed and refused.
async fn front(backend: String, refuse: Refuse) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/mcp");
    let (passed, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (p, r) = (passed.clone(), refused.clone());
    let metadata = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    tokio::spawn(async move {
        let client = reqwest::Client::new();
        loop {
            let (socket, _) = listener.accept().await.unwrap();
            let (client, backend, metadata) = (client.clone(), backend.clone(), metadata.clone());
            let (p, r) = (p.clone(), r.clone());
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                        let (client, backend, metadata) =
                            (client.clone(), backend.clone(), metadata.clone());
                        let (p, r) = (p.clone(), r.clone());
                        async move {
                            let (parts, body) = request.into_parts();
                            let body = body
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let headers = &parts.headers;
                            let bearer = headers.get("authorization").and_then(|v| v.to_str().ok());
                            let tenant = headers.get("x-tenant").and_then(|v| v.to_str().ok());
                            let calls = String::from_utf8_lossy(&body).contains("\"tools/call\"");
                            let refused = match refuse {
                                Refuse::ForbiddenCalls => calls,
                                _ => {
                                    bearer != Some(&format!("Bearer {TOKEN}"))
                                        || tenant != Some("acme")
                                }
                            };
                            if refused {
                                r.fetch_add(1, Ordering::SeqCst);
                                let response = match refuse {
                                    Refuse::Unauthorized => full(
                                        401,
                                        Some(format!(
                                            "Bearer realm=\"mcp\", scope=\"tools:read\", \
                                         resource_metadata=\"{metadata}\""
                                        )),
                                        r#"{"error":"invalid_token"}"#,
                                    ),
                                    Refuse::Forbidden | Refuse::ForbiddenCalls => full(
                                        403,
                                        Some(
                                            "Bearer error=\"insufficient_scope\", \
                                         scope=\"tools:write\""
                                                .to_owned(),
                                        ),
                                        r#"{"error":"insufficient_scope"}"#,
                                    ),
                                };
                                return Ok::<_, Infallible>(response);
                            }
                            p.fetch_add(1, Ordering::SeqCst);
                            let mut forward = client.request(
                                parts.method.clone(),
                                format!("http://{backend}{}", parts.uri.path()),
                            );
                            for (name, value) in &parts.headers {
                                if name != "host" {
                                    forward = forward.header(name, value);
                                }
                            }
                            let answer = match forward.body(body).send().await {
                                Ok(answer) => answer,
                                Err(_) => return Ok(full(502, None, "{}")),
                            };
                            let mut response = hyper::Response::builder().status(answer.status());
                            for (name, value) in answer.headers() {
                                response = response.header(name, value);
                            }
                            let stream = answer.bytes_stream().map(|chunk| {
                                chunk.map(Frame::data).map_err(|e| {
                                    Box::new(e) as Box<dyn std::error::Error + Send + Sync>
                                })
                            });
                            Ok(response
                                .body(BodyExt::boxed(StreamBody::new(stream)))
                                .unwrap())
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                    .await;
            });
        }
    });
    (url, passed, refused)
}

fn options() -> ImportOptions {
    ImportOptions::new()
        .connect_timeout(Duration::from_secs(20))
        .probe_timeout(Duration::from_secs(5))
}

/// The bearer token and the header reach a server that checks them on every request, and the
/// imported tool works through them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_token_and_headers_are_sent_with_every_request() {
    let (backend, stop) = backend().await;
    let (url, passed, refused) = front(backend, Refuse::Unauthorized).await;
    let runtime = ToolRuntime::new();
    let source = McpSource::http(&url)
        .bearer(TOKEN)
        .header("x-tenant", "acme");
    assert!(!format!("{source:?}").contains(TOKEN));
    let import = McpImport::connect(runtime.scope(), source, options())
        .await
        .unwrap();
    assert_eq!(import.tool_names(), vec!["add"]);
    let result = runtime
        .execute(ToolCall::new("c1", "add", json!({"a": 2, "b": 3})))
        .await;
    assert_eq!(result.code(), None, "{}", result.text());
    assert!(result.text().contains('5'), "{}", result.text());
    import.close().await;
    assert!(passed.load(Ordering::SeqCst) >= 3);
    assert_eq!(refused.load(Ordering::SeqCst), 0);
    stop.cancel();
}

/// A `401` is `MCP_AUTH_REQUIRED`, its one line naming the challenge (scheme, scope, metadata
/// URL), and no token appears in the error, its report or its `Debug`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_is_auth_required_and_names_the_challenge() {
    let (backend, stop) = backend().await;
    let (url, _, refused) = front(backend, Refuse::Unauthorized).await;
    for source in [
        McpSource::http(&url),
        McpSource::http(&url)
            .bearer(WRONG)
            .header("x-tenant", "acme"),
        McpSource::http(&url).bearer(TOKEN),
    ] {
        let runtime = ToolRuntime::new();
        let error = McpImport::connect(runtime.scope(), source, options())
            .await
            .unwrap_err();
        assert_eq!(error.code(), codes::MCP_AUTH_REQUIRED, "{}", error.report());
        let report = error.report();
        assert!(!report.contains('\n'), "{report}");
        assert!(
            report.contains(&format!("the MCP server {url} requires authorization")),
            "{report}"
        );
        assert!(
            report.contains("HTTP 401 Unauthorized, challenge Bearer"),
            "{report}"
        );
        assert!(report.contains("scope \"tools:read\""), "{report}");
        assert!(
            report.contains("resource metadata http://")
                && report.contains("/.well-known/oauth-protected-resource/mcp"),
            "{report}"
        );
        let debug = format!("{error:?}");
        for text in [&report, &debug, &error.to_string()] {
            assert!(!text.contains(TOKEN) && !text.contains(WRONG), "{text}");
        }
        // The chain holds the auth error.
        let source = std::error::Error::source(&error).unwrap();
        assert!(
            source
                .downcast_ref::<tools_mcp::import_auth::AuthError>()
                .is_some()
        );
    }
    assert!(refused.load(Ordering::SeqCst) >= 3);
    stop.cancel();
}

/// A `403` is `MCP_AUTH_FAILED`, naming the error and the scope asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_is_auth_failed() {
    let (backend, stop) = backend().await;
    let (url, _, _) = front(backend, Refuse::Forbidden).await;
    let runtime = ToolRuntime::new();
    let error = McpImport::connect(
        runtime.scope(),
        McpSource::http(&url).bearer(WRONG),
        options(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code(), codes::MCP_AUTH_FAILED, "{}", error.report());
    let report = error.report();
    assert!(
        report.contains(
            "HTTP 403 Forbidden, challenge Bearer (error insufficient_scope, scope \"tools:write\")"
        ),
        "{report}"
    );
    assert!(!report.contains(WRONG) && !format!("{error:?}").contains(WRONG));
    stop.cancel();
}

/// A `403` answering a tool's call fails that call with `MCP_AUTH_FAILED`, naming the scope
/// the server asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_on_a_call_fails_the_call_with_auth_failed() {
    let (backend, stop) = backend().await;
    let (url, _, refused) = front(backend, Refuse::ForbiddenCalls).await;
    let runtime = ToolRuntime::new();
    let import = McpImport::connect(
        runtime.scope(),
        McpSource::http(&url).bearer(WRONG),
        options(),
    )
    .await
    .unwrap();
    let result = runtime
        .execute(ToolCall::new("c1", "add", json!({"a": 1, "b": 2})))
        .await;
    assert_eq!(
        result.code(),
        Some(codes::MCP_AUTH_FAILED),
        "{}",
        result.text()
    );
    assert!(
        result.text().contains("scope \"tools:write\""),
        "{}",
        result.text()
    );
    assert!(!result.text().contains(WRONG));
    assert!(refused.load(Ordering::SeqCst) >= 1);
    import.close().await;
    stop.cancel();
}

/// A header HTTP does not allow fails the connection, naming the header and not its value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_header_is_named_without_its_value() {
    let runtime = ToolRuntime::new();
    let source = McpSource::http("http://127.0.0.1:9/mcp").header("x-key", "line\nbreak-secret");
    let error = McpImport::connect(runtime.scope(), source, options())
        .await
        .unwrap_err();
    assert_eq!(error.code(), codes::MCP_AUTH_FAILED);
    let report = error.report();
    assert!(report.contains("`x-key`"), "{report}");
    assert!(!report.contains("break-secret") && !format!("{error:?}").contains("break-secret"));
}

fn record(token: &str) -> TokenRecord {
    serde_json::from_value(json!({
        "client_id": "client-1",
        "token_response": {"access_token": token, "token_type": "bearer", "refresh_token": "refresh-9b2e"},
        "granted_scopes": ["tools:read"],
    }))
    .unwrap()
}

/// The file store writes mode 0600, replaces the file atomically (a reader never sees part of a
/// record, no temporary file is left), and names a corrupt file without its contents.
#[test]
fn the_file_token_store_is_private_atomic_and_clear_about_corruption() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokens.json");
    let store = FileTokenStore::new(&path);
    assert!(store.load().unwrap().is_none());
    store.save(&record(TOKEN)).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let loaded = store.load().unwrap().unwrap();
    assert_eq!(loaded.client_id(), "client-1");
    assert!(loaded.has_token());
    assert!(!format!("{loaded:?}").contains(TOKEN));
    assert!(!format!("{loaded:?}").contains("refresh-9b2e"));

    // Atomic: readers racing a writer see a whole record every time.
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            for i in 0..200 {
                store
                    .save(&record(&format!("{TOKEN}-{i}-{}", "x".repeat(i * 40))))
                    .unwrap();
            }
        })
    };
    for _ in 0..400 {
        let loaded = store.load().unwrap().unwrap();
        assert_eq!(loaded.client_id(), "client-1");
    }
    writer.join().unwrap();
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        vec![std::ffi::OsString::from("tokens.json")],
        "{left:?}"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // Corrupt: a clear error naming the file, none of its contents.
    std::fs::write(
        &path,
        format!("{{\"client_id\": \"c\", \"token_response\": \"{TOKEN}"),
    )
    .unwrap();
    let error = store.load().unwrap_err();
    assert!(
        matches!(error, TokenStoreError::Corrupt { .. }),
        "{error:?}"
    );
    let report = tools_mcp::error::report(&error);
    assert!(report.contains(&path.display().to_string()), "{report}");
    assert!(report.contains("corrupt"), "{report}");
    assert!(
        !report.contains(TOKEN) && !format!("{error:?}").contains(TOKEN),
        "{report}"
    );

    // Oversized: refused unread.
    std::fs::write(&path, vec![b' '; 2 << 20]).unwrap();
    assert!(matches!(
        store.load().unwrap_err(),
        TokenStoreError::Corrupt { .. }
    ));

    store.clear().unwrap();
    assert!(store.load().unwrap().is_none());
    store.clear().unwrap();
}

/// The loopback authorizer takes the redirect with the URL's state, refuses another state, and
/// gives up after its timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loopback_authorizer_checks_the_state_and_times_out() {
    let shown = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = shown.clone();
    let authorizer = LoopbackAuthorizer::bind(0)
        .unwrap()
        .timeout(Duration::from_secs(10))
        .on_url(move |url| seen.lock().unwrap().push(url.to_owned()));
    let redirect = authorizer.redirect_uri();
    assert_eq!(
        redirect,
        format!("http://127.0.0.1:{}/callback", authorizer.port())
    );
    let http = reqwest::Client::new();

    for (sent, expected_ok) in [("s-123", true), ("s-other", false)] {
        let url = "http://auth.invalid/authorize?response_type=code&state=s-123".to_owned();
        let waiting = {
            let authorizer = authorizer.clone();
            tokio::spawn(async move { authorizer.authorize(url).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        // A stray request first: answered 404 and ignored.
        let stray = http.get(format!(
            "http://127.0.0.1:{}/favicon.ico",
            authorizer.port()
        ));
        assert_eq!(stray.send().await.unwrap().status(), 404);
        let back = http
            .get(format!("{redirect}?code=code-55&state={sent}"))
            .send()
            .await
            .unwrap();
        assert_eq!(back.status(), 200);
        let answer = waiting.await.unwrap();
        if expected_ok {
            let callback = answer.unwrap();
            assert_eq!(callback.code.expose(), "code-55");
            assert!(!format!("{callback:?}").contains("code-55"));
        } else {
            assert!(
                matches!(answer, Err(AuthorizeError::StateMismatch)),
                "{answer:?}"
            );
        }
    }
    assert_eq!(shown.lock().unwrap().len(), 2);

    let quick = authorizer.clone().timeout(Duration::from_millis(200));
    let answer = quick
        .authorize("http://auth.invalid/?state=x".to_owned())
        .await;
    assert!(
        matches!(answer, Err(AuthorizeError::Timeout(_))),
        "{answer:?}"
    );
}

/// The codegen CLI's `--mcp-bearer-env VAR` and `--mcp-header-env NAME=VAR` read the
/// credentials from the environment and reach a server that checks them; an unset variable or
/// a malformed flag is an error naming the flag and the variable, never a value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_codegen_cli_reads_credentials_from_the_environment() {
    let (backend, stop) = backend().await;
    let (url, passed, _) = front(backend, Refuse::Unauthorized).await;
    let env = |var: &str| match var {
        "T_BEARER" => Some(TOKEN.to_owned()),
        "T_TENANT" => Some("acme".to_owned()),
        _ => None,
    };
    let source = tools_codegen::mcp::with_credentials(
        McpSource::http(&url),
        Some("T_BEARER"),
        &["x-tenant=T_TENANT".to_owned()],
        env,
    )
    .unwrap();
    let listed = tokio::task::spawn_blocking(move || {
        tools_codegen::mcp::read_catalog(&source, tools_mcp::Protocol::Auto)
    })
    .await
    .unwrap()
    .unwrap();
    assert!(listed.contains("\"add\""), "{listed}");
    assert!(passed.load(Ordering::SeqCst) > 0);

    for (bearer, headers, words) in [
        (
            Some("T_UNSET"),
            vec![],
            "--mcp-bearer-env T_UNSET: the environment variable is not set",
        ),
        (
            None,
            vec!["x-tenant".to_owned()],
            "--mcp-header-env x-tenant: expected NAME=VAR",
        ),
        (
            None,
            vec!["x-tenant=T_UNSET".to_owned()],
            "--mcp-header-env x-tenant=T_UNSET: the",
        ),
    ] {
        let error =
            tools_codegen::mcp::with_credentials(McpSource::http(&url), bearer, &headers, env)
                .unwrap_err();
        assert!(error.to_string().starts_with(words), "{error}");
    }

    // Through the CLI: an unset variable fails before connecting, with the CLI's code.
    let mut out = Vec::new();
    let mut err = Vec::new();
    let status = tools_codegen::cli::run(
        [
            "tools-codegen",
            "docs",
            "--mcp-url",
            &url,
            "--mcp-bearer-env",
            "TOOLS_MCP_TEST_SURELY_UNSET_VAR",
        ],
        &mut std::io::empty(),
        &mut out,
        &mut err,
    );
    let err = String::from_utf8(err).unwrap();
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("MCP_LIST_FAILED"), "{err}");
    assert!(err.contains("TOOLS_MCP_TEST_SURELY_UNSET_VAR"), "{err}");
    stop.cancel();
}
