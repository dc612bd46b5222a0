//! `tools-codegen sdk|docs|all --mcp-stdio "<command>"` and `--mcp-url URL` render from a live
//! server's `tools/list` exactly as from a catalog file holding that list.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_mcp::{HttpOptions, McpServer};
use tools_runtime::{Output, ToolDefinition, ToolRuntime};

const SERVER: &str = env!("CARGO_BIN_EXE_tools-mcp");

fn cli(args: &[&str]) -> (i32, String, String) {
    let mut argv = vec!["tools-codegen"];
    argv.extend_from_slice(args);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let status = tools_codegen::cli::run(argv, &mut std::io::empty(), &mut out, &mut err);
    (
        status,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn stdio_renders_as_the_catalog_file_of_the_same_list() {
    let command = format!("{SERVER} serve");
    let (status, live, err) = cli(&["sdk", "--lang", "typescript", "--mcp-stdio", &command]);
    assert_eq!(status, 0, "{err}");
    for name in ["add", "echo", "enable_extra", "stats", "wait"] {
        assert!(
            live.contains(&format!("{name}(")),
            "{name} missing:\n{live}"
        );
    }
    // The same list as a catalog file renders to the same bytes.
    let catalog = tools_codegen::mcp::read_catalog(
        &tools_mcp::McpSource::command_line(&command).unwrap(),
        tools_mcp::Protocol::Auto,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("catalog.json");
    std::fs::write(&file, catalog).unwrap();
    let (status, from_file, err) = cli(&[
        "sdk",
        "--lang",
        "typescript",
        "--catalog",
        file.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{err}");
    assert_eq!(live, from_file);

    let out = dir.path().join("out");
    let (status, _, err) = cli(&[
        "all",
        "--mcp-stdio",
        &command,
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{err}");
    let docs = std::fs::read_to_string(out.join("catalog.md")).unwrap();
    assert!(docs.contains("Echo a message back."), "{docs}");
    let (status, _, _) = cli(&[
        "all",
        "--mcp-stdio",
        &command,
        "--out-dir",
        out.to_str().unwrap(),
        "--check",
    ]);
    assert_eq!(status, 0);
}

#[test]
fn server_everything_over_stdio() {
    let command = format!("node {} stdio", support::everything().display());
    let (status, docs, err) = cli(&["docs", "--mcp-stdio", &command]);
    assert_eq!(status, 0, "{err}");
    assert!(docs.contains("get-structured-content"), "{docs}");
    assert!(docs.contains("Echoes back the input string"), "{docs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_renders_the_served_scope() {
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let _r = scope
        .register(
            ToolDefinition::builder("lookup")
                .description("Look a key up.")
                .input_schema(json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}))
                .output(Output::json(json!({"type": "object", "properties": {"found": {"type": "boolean"}}, "required": ["found"]})))
                .execute(|_, _| async { Ok(json!({"found": true})) })
                .build()
                .unwrap(),
        )
        .unwrap();
    let server = McpServer::new(&scope, "codegen").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    let token = stop.clone();
    tokio::spawn(async move { server.serve_http(listener, HttpOptions::new(), token).await });

    let expected = tools_codegen::render_python(&runtime.catalog(scope.key()).unwrap());
    let live =
        tokio::task::spawn_blocking(move || cli(&["sdk", "--lang", "python", "--mcp-url", &url]))
            .await
            .unwrap();
    assert_eq!(live.0, 0, "{}", live.2);
    assert_eq!(live.1, expected);

    let (status, _, err) =
        tokio::task::spawn_blocking(|| cli(&["docs", "--mcp-url", "http://127.0.0.1:9/mcp"]))
            .await
            .unwrap();
    assert_eq!(status, 2);
    assert!(err.contains("MCP_LIST_FAILED"), "{err}");
    stop.cancel();
}
