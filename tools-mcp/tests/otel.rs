//! One trace across MCP (feature `otel`): the `tools-mcp serve` binary, built with the feature,
//! exports its spans to a loopback OTLP receiver; a tool imported from it in this process, called
//! under an OpenTelemetry subscriber exporting to the same receiver, runs its `tools/call` in a
//! client span and sends that span's trace context in the request's `_meta`, and the server's
//! spans join the caller's trace: importing `execute_tool <tool>` -> client `tools/call <tool>`
//! -> server `tools/call <tool>` -> server `execute_tool <tool>`, each MCP span with the
//! OpenTelemetry MCP conventions' attributes, and a failure's `error.type` and ERROR status on
//! both. Imported over stdio, the server exports its spans when the import closes its stdin;
//! neither side exports rmcp's own spans unless asked. Over stdio, a raw client checks the
//! `_meta` keys on the wire, that an invalid or absent `traceparent` parents nothing and fails
//! nothing, and that the server exports its spans when its stdin closes.

#![cfg(feature = "otel")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use serde_json::{Value, json};
use tools_mcp::{ImportOptions, McpImport, McpSource};
use tools_otel::receiver::{Received, Receiver};
use tools_runtime::{ToolCall, ToolRuntime};

use crate::support::{RawStdio, SERVER, serve_http_command};

/// OTLP's `SPAN_KIND_SERVER` (`opentelemetry.proto.trace.v1.Span.SpanKind`).
const SPAN_KIND_SERVER: i32 = 2;
/// OTLP's `SPAN_KIND_CLIENT`.
const SPAN_KIND_CLIENT: i32 = 3;
/// OTLP's `STATUS_CODE_ERROR` (`opentelemetry.proto.trace.v1.Status.StatusCode`).
const STATUS_CODE_ERROR: i32 = 2;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `tools-mcp serve` with its spans exported to `receiver` as service `service`.
fn server_command(receiver: &Receiver, service: &str) -> Command {
    let mut command = Command::new(SERVER);
    command
        .arg("serve")
        .env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.url())
        .env("OTEL_SERVICE_NAME", service)
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("OTEL_TRACES_EXPORTER");
    command
}

/// The spans of `service` named `name`.
fn named<'a>(spans: &'a [Received], service: &str, name: &str) -> Vec<&'a Received> {
    spans
        .iter()
        .filter(|r| r.service == service && r.span.name == name)
        .collect()
}

fn summary(spans: &[Received]) -> Vec<String> {
    spans
        .iter()
        .map(|r| {
            format!(
                "{} {} trace={} id={} parent={}",
                r.service,
                r.span.name,
                hex(&r.span.trace_id),
                hex(&r.span.span_id),
                hex(&r.span.parent_span_id)
            )
        })
        .collect()
}

#[test]
fn an_imported_call_and_the_servers_execution_of_it_are_one_trace() {
    let receiver = Receiver::start().unwrap();
    // The server, over HTTP, stopped by SIGTERM below (a normal shutdown that exports).
    let (mut child, url, _) = serve_http_command(server_command(&receiver, "otel-served"));
    let (subscriber, guard) = tools_otel::Otel::new("otel-importer")
        .endpoint(receiver.url())
        .subscriber()
        .unwrap()
        .expect("OpenTelemetry is set up (OTEL_SDK_DISABLED must not be true for this test)");
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        tokio.block_on(async {
            let runtime = ToolRuntime::new();
            let import = McpImport::connect(
                runtime.scope(),
                McpSource::http(url),
                ImportOptions::new().prefix("remote_"),
            )
            .await
            .unwrap();
            let result = runtime
                .execute(ToolCall::new(
                    "traced",
                    "remote_echo",
                    json!({"message": "across"}),
                ))
                .await;
            assert_eq!(result.text(), "across", "{result:?}");
            import.close().await;
        });
    });
    drop(tokio);
    guard.shutdown();
    // SIGTERM: the server stops serving and exports what is left before it exits.
    let pid = libc::pid_t::try_from(child.0.id()).unwrap();
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = child.0.wait().unwrap();
    assert!(
        status.success(),
        "the server exits cleanly on SIGTERM: {status}"
    );

    let spans = receiver.spans();
    let all = summary(&spans);
    let calling = named(&spans, "otel-importer", "execute_tool remote_echo");
    assert_eq!(calling.len(), 1, "{all:#?}");
    let calling = &calling[0].span;
    let client = named(&spans, "otel-importer", "tools/call echo");
    assert_eq!(client.len(), 1, "{all:#?}");
    let client_attrs = client[0].attributes();
    let client = &client[0].span;
    let mcp = named(&spans, "otel-served", "tools/call echo");
    assert_eq!(mcp.len(), 1, "{all:#?}");
    let attrs = mcp[0].attributes();
    let mcp = &mcp[0].span;
    let executing = named(&spans, "otel-served", "execute_tool echo");
    assert_eq!(executing.len(), 1, "{all:#?}");
    let executing = &executing[0].span;

    assert_eq!(client.trace_id, calling.trace_id, "one trace: {all:#?}");
    assert_eq!(mcp.trace_id, calling.trace_id, "one trace: {all:#?}");
    assert_eq!(executing.trace_id, calling.trace_id, "one trace: {all:#?}");
    assert_eq!(
        client.parent_span_id, calling.span_id,
        "the client span is the child of the importing call's: {all:#?}"
    );
    assert_eq!(
        mcp.parent_span_id, client.span_id,
        "the server's span is the child of the client span: {all:#?}"
    );
    // The client span: OpenTelemetry's MCP conventions, over streamable HTTP.
    assert_eq!(client.kind, SPAN_KIND_CLIENT);
    assert_eq!(client_attrs["mcp.method.name"], "tools/call");
    assert_eq!(client_attrs["gen_ai.tool.name"], "echo");
    assert_eq!(client_attrs["gen_ai.operation.name"], "execute_tool");
    assert_eq!(client_attrs["network.transport"], "tcp");
    assert_eq!(client_attrs["network.protocol.name"], "http");
    assert!(
        client_attrs["mcp.protocol.version"].starts_with("20"),
        "{client_attrs:?}"
    );
    assert_eq!(
        client_attrs["jsonrpc.request.id"], attrs["jsonrpc.request.id"],
        "both sides name the one request"
    );
    assert!(!client_attrs.contains_key("error.type"), "{client_attrs:?}");
    assert!(!attrs.contains_key("error.type"), "{attrs:?}");
    // The server span: the same connection seen from the other end (stateless, no session).
    assert_eq!(attrs["network.transport"], "tcp");
    assert_eq!(attrs["network.protocol.name"], "http");
    assert_eq!(
        attrs["mcp.protocol.version"],
        client_attrs["mcp.protocol.version"]
    );
    assert!(!attrs.contains_key("mcp.session.id"), "{attrs:?}");
    assert_eq!(
        executing.parent_span_id, mcp.span_id,
        "the server's execution is the child of its MCP span: {all:#?}"
    );
    assert_eq!(mcp.kind, SPAN_KIND_SERVER);
    assert_eq!(attrs["rpc.system"], "mcp");
    assert_eq!(attrs["mcp.method.name"], "tools/call");
    assert_eq!(attrs["gen_ai.tool.name"], "echo");
    assert!(attrs.contains_key("jsonrpc.request.id"), "{attrs:?}");
    assert_ne!(
        named(&spans, "otel-importer", "execute_tool remote_echo")[0].service,
        named(&spans, "otel-served", "execute_tool echo")[0].service
    );
}

fn call(message: &str, meta: Option<Value>) -> Value {
    let mut params = json!({"name": "echo", "arguments": {"message": message}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    params
}

#[test]
fn stdio_serve_parents_on_a_valid_traceparent_only_and_exports_when_stdin_closes() {
    let receiver = Receiver::start().unwrap();
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent_id = "00f067aa0ba902b7";
    let mut peer = RawStdio::start(server_command(&receiver, "otel-stdio"));
    peer.initialize(json!({}));
    let valid = json!({
        "traceparent": format!("00-{trace_id}-{parent_id}-01"),
        "tracestate": "vendor=on"
    });
    let invalid = json!({"traceparent": "00-nonsense-01"});
    for (id, text, meta) in [
        (2, "valid", Some(valid)),
        (3, "invalid", Some(invalid)),
        (4, "absent", None),
    ] {
        let answer = peer.request(id, "tools/call", call(text, meta));
        assert_eq!(answer["result"]["content"][0]["text"], text, "{answer}");
        assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
    }
    // An unknown tool is a JSON-RPC error: its code is the span's `error.type`.
    let unknown = peer.request(5, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // Closing stdin stops the server, which exports its spans before it exits.
    let status = peer.close();
    assert!(status.success(), "the server exits cleanly: {status}");

    let spans = receiver.spans();
    let all = summary(&spans);
    let unknown = named(&spans, "otel-stdio", "tools/call nope");
    assert_eq!(unknown.len(), 1, "{all:#?}");
    assert_eq!(unknown[0].attributes()["error.type"], "-32602");
    assert_eq!(
        unknown[0].span.status.as_ref().map(|s| s.code),
        Some(STATUS_CODE_ERROR)
    );
    let mcp = named(&spans, "otel-stdio", "tools/call echo");
    assert_eq!(mcp.len(), 3, "{all:#?}");
    let by_id = |id: &str| {
        mcp.iter()
            .find(|r| r.attributes()["jsonrpc.request.id"] == id)
            .unwrap_or_else(|| panic!("no span for request {id}: {all:#?}"))
            .span
            .clone()
    };
    let (valid, invalid, absent) = (by_id("2"), by_id("3"), by_id("4"));
    assert_eq!(hex(&valid.trace_id), trace_id);
    assert_eq!(hex(&valid.parent_span_id), parent_id);
    assert_eq!(valid.trace_state, "vendor=on");
    for other in [&invalid, &absent] {
        assert_ne!(hex(&other.trace_id), trace_id, "{all:#?}");
        assert_ne!(hex(&other.parent_span_id), parent_id, "{all:#?}");
    }
    // Each call's execution is the child of its MCP span.
    let executing = named(&spans, "otel-stdio", "execute_tool echo");
    assert_eq!(executing.len(), 3, "{all:#?}");
    for span in [&valid, &invalid, &absent] {
        assert!(
            executing
                .iter()
                .any(|e| e.span.parent_span_id == span.span_id && e.span.trace_id == span.trace_id),
            "{all:#?}"
        );
    }
}

#[test]
fn stdio_serve_exports_when_stopped_by_sigterm_with_stdin_open() {
    let receiver = Receiver::start().unwrap();
    let mut peer = RawStdio::start(server_command(&receiver, "otel-sigterm"));
    peer.initialize(json!({}));
    let answer = peer.request(1, "tools/call", call("before the signal", None));
    assert_eq!(answer["result"]["content"][0]["text"], "before the signal");
    let pid = libc::pid_t::try_from(peer.pid()).unwrap();
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    // Stdin stays open: the signal alone stops the server.
    let status = peer.exited();
    assert!(
        status.success(),
        "the server exits cleanly on SIGTERM: {status}"
    );
    let spans = receiver.spans();
    assert_eq!(
        named(&spans, "otel-sigterm", "tools/call echo").len(),
        1,
        "{:#?}",
        summary(&spans)
    );
}

/// `tools-mcp serve` as a stdio import source, exporting its spans to `receiver` as `service`.
fn served_over_stdio(receiver: &Receiver, service: &str) -> McpSource {
    McpSource::stdio(SERVER, ["serve"])
        .env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.url())
        .env("OTEL_SERVICE_NAME", service)
        .env("OTEL_SDK_DISABLED", "false")
}

/// Imports `tools-mcp serve` over stdio under an OpenTelemetry subscriber exporting as
/// `service` with `targets` (the default without), makes the calls `messages` of
/// `remote_echo` and closes the import: the results, and every span received.
fn import_over_stdio(
    service: &str,
    targets: Option<tools_otel::Targets>,
    messages: &[&str],
) -> (Vec<tools_runtime::ToolExecutionResult>, Vec<Received>) {
    let receiver = Receiver::start().unwrap();
    let mut otel = tools_otel::Otel::new(service).endpoint(receiver.url());
    if let Some(targets) = targets {
        otel = otel.targets(targets);
    }
    let (subscriber, guard) = otel.subscriber().unwrap().expect("OpenTelemetry is set up");
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let served = format!("{service}-served");
    let results = tracing::subscriber::with_default(subscriber, || {
        tokio.block_on(async {
            let runtime = ToolRuntime::new();
            let import = McpImport::connect(
                runtime.scope(),
                served_over_stdio(&receiver, &served),
                ImportOptions::new().prefix("remote_"),
            )
            .await
            .unwrap();
            let mut results = Vec::new();
            for (n, message) in messages.iter().enumerate() {
                let call =
                    ToolCall::new(format!("c{n}"), "remote_echo", json!({"message": message}));
                results.push(runtime.execute(call).await);
            }
            // Closing stdin stops the server, which exports its spans as it exits; `close`
            // returns once it is gone.
            import.close().await;
            results
        })
    });
    drop(tokio);
    guard.shutdown();
    (results, receiver.spans())
}

#[test]
fn imported_over_stdio_a_failure_reads_once_and_both_sides_mark_it() {
    let (results, spans) = import_over_stdio("otel-stdio", None, &["fine", "forbidden", "again"]);
    let all = summary(&spans);
    assert_eq!(results[0].text(), "fine");
    assert_eq!(results[2].text(), "again");
    // The server's `isError` text is `Error: ...`; the caller reads one `Error: `.
    let refused = &results[1];
    assert_eq!(refused.code(), Some(tools_mcp::codes::MCP_TOOL_ERROR));
    assert_eq!(refused.text(), "Error: echo refuses `forbidden`");

    // The server exported its spans when the import closed its stdin.
    let served = named(&spans, "otel-stdio-served", "tools/call echo");
    let clients = named(&spans, "otel-stdio", "tools/call echo");
    assert_eq!((served.len(), clients.len()), (3, 3), "{all:#?}");
    for span in served.iter().chain(&clients) {
        let attrs = span.attributes();
        assert_eq!(attrs["network.transport"], "pipe", "{attrs:?}");
        assert!(!attrs.contains_key("network.protocol.name"), "{attrs:?}");
        assert!(attrs["mcp.protocol.version"].starts_with("20"), "{attrs:?}");
        assert!(!attrs.contains_key("mcp.session.id"), "{attrs:?}");
    }
    // The `isError` call: `error.type = "tool_error"` and the ERROR status on both MCP spans.
    let failed = |spans: &[&Received]| -> Received {
        let failed: Vec<&&Received> = spans
            .iter()
            .filter(|r| r.attributes().contains_key("error.type"))
            .collect();
        assert_eq!(failed.len(), 1, "{all:#?}");
        (*failed[0]).clone()
    };
    let (server, client) = (failed(&served), failed(&clients));
    for span in [&server, &client] {
        assert_eq!(span.attributes()["error.type"], "tool_error");
        assert_eq!(
            span.span.status.as_ref().map(|s| s.code),
            Some(STATUS_CODE_ERROR),
            "{:?}",
            span.span
        );
    }
    assert_eq!(server.span.parent_span_id, client.span.span_id, "{all:#?}");
    for span in served.iter().chain(&clients) {
        if span.span.span_id != server.span.span_id && span.span.span_id != client.span.span_id {
            assert_ne!(
                span.span.status.as_ref().map(|s| s.code),
                Some(STATUS_CODE_ERROR)
            );
        }
    }

    // Each served call's id is `mcp-` and 128 random bits, unlike any other's.
    let ids: std::collections::BTreeSet<String> =
        named(&spans, "otel-stdio-served", "execute_tool echo")
            .iter()
            .map(|r| r.attributes()["gen_ai.tool.call.id"].clone())
            .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    for id in &ids {
        let hex = id.strip_prefix("mcp-").unwrap_or_else(|| panic!("{id}"));
        assert!(
            hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
    }

    // Neither side exports rmcp's spans by default.
    assert!(
        spans.iter().all(|r| r.span.name != "serve_inner"),
        "{all:#?}"
    );
}

#[test]
fn rmcp_spans_are_exported_when_their_target_is_named() {
    let targets = tools_otel::toolkit_targets().with_target("rmcp", tracing::Level::TRACE);
    let (results, spans) = import_over_stdio("otel-rmcp", Some(targets), &["named"]);
    assert_eq!(results[0].text(), "named");
    let all = summary(&spans);
    assert!(
        !named(&spans, "otel-rmcp", "serve_inner").is_empty(),
        "the importer named rmcp: {all:#?}"
    );
    assert!(
        named(&spans, "otel-rmcp-served", "serve_inner").is_empty(),
        "the server did not: {all:#?}"
    );
}

#[test]
fn a_failed_task_a_json_rpc_error_and_a_timeout_mark_the_client_span() {
    let receiver = Receiver::start().unwrap();
    let (subscriber, guard) = tools_otel::Otel::new("otel-failures")
        .endpoint(receiver.url())
        .subscriber()
        .unwrap()
        .expect("OpenTelemetry is set up");
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        tokio.block_on(async {
            let runtime = ToolRuntime::new();
            // A draft task that fails.
            let import = McpImport::connect(
                runtime.scope(),
                crate::support::draft_tasks_source(),
                ImportOptions::new().optional_tasks(true),
            )
            .await
            .unwrap();
            let call = ToolCall::new("t", "maybe", json!({"ms": 100, "fail": true}));
            let failed = runtime.execute(call).await;
            assert_eq!(
                failed.code(),
                Some(tools_mcp::codes::MCP_TOOL_ERROR),
                "{failed:?}"
            );
            import.close().await;
            // A call the server answers with a JSON-RPC error.
            let dir = tempfile::tempdir().unwrap();
            let import = McpImport::connect(
                runtime.scope(),
                McpSource::stdio(
                    crate::support::python().to_string_lossy().into_owned(),
                    [
                        crate::support::peers()
                            .join("shutdown.py")
                            .to_string_lossy()
                            .into_owned(),
                        "eof".to_owned(),
                        dir.path().join("notes").to_string_lossy().into_owned(),
                    ],
                ),
                ImportOptions::new(),
            )
            .await
            .unwrap();
            let refused = runtime
                .execute(ToolCall::new("r", "refuse", json!({})))
                .await;
            assert_eq!(
                refused.text(),
                "Error: the MCP server refused the call: refused on purpose",
                "{refused:?}"
            );
            import.close().await;
            // A call past its timeout.
            let import = McpImport::connect(
                runtime.scope(),
                McpSource::stdio(SERVER, ["serve"]).env("OTEL_SDK_DISABLED", "true"),
                ImportOptions::new()
                    .prefix("remote_")
                    .tool_timeout("wait", std::time::Duration::from_millis(300)),
            )
            .await
            .unwrap();
            let call = ToolCall::new("w", "remote_wait", json!({"ms": 5000}));
            let timed_out = runtime.execute(call).await;
            assert_eq!(
                timed_out.code(),
                Some(tools_mcp::codes::MCP_TIMEOUT),
                "{timed_out:?}"
            );
            import.close().await;
        });
    });
    drop(tokio);
    guard.shutdown();
    let spans = receiver.spans();
    let all = summary(&spans);
    for (name, error_type) in [
        ("tools/call maybe", "tool_error"),
        ("tools/call refuse", "-32001"),
        ("tools/call wait", "MCP_TIMEOUT"),
    ] {
        let client = named(&spans, "otel-failures", name);
        assert_eq!(client.len(), 1, "{all:#?}");
        assert_eq!(client[0].span.kind, SPAN_KIND_CLIENT);
        assert_eq!(client[0].attributes()["error.type"], error_type, "{name}");
        assert_eq!(
            client[0].span.status.as_ref().map(|s| s.code),
            Some(STATUS_CODE_ERROR),
            "{name}"
        );
    }
}

#[test]
fn in_an_http_session_both_spans_carry_its_id() {
    let receiver = Receiver::start().unwrap();
    let mut command = server_command(&receiver, "otel-session-served");
    command.arg("--sessions");
    let (mut child, url, _) = serve_http_command(command);
    let (subscriber, guard) = tools_otel::Otel::new("otel-session")
        .endpoint(receiver.url())
        .subscriber()
        .unwrap()
        .expect("OpenTelemetry is set up");
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        tokio.block_on(async {
            let runtime = ToolRuntime::new();
            // A 2025-11-25 session (the 2026-07-28 revision has none).
            let import = McpImport::connect(
                runtime.scope(),
                McpSource::http(url),
                ImportOptions::new()
                    .prefix("remote_")
                    .protocol(tools_mcp::Protocol::Initialize),
            )
            .await
            .unwrap();
            let result = runtime
                .execute(ToolCall::new("s", "remote_echo", json!({"message": "in"})))
                .await;
            assert_eq!(result.text(), "in", "{result:?}");
            import.close().await;
        });
    });
    drop(tokio);
    guard.shutdown();
    let pid = libc::pid_t::try_from(child.0.id()).unwrap();
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    assert!(child.0.wait().unwrap().success());

    let spans = receiver.spans();
    let all = summary(&spans);
    let client = named(&spans, "otel-session", "tools/call echo");
    let server = named(&spans, "otel-session-served", "tools/call echo");
    assert_eq!((client.len(), server.len()), (1, 1), "{all:#?}");
    let (client, server) = (client[0].attributes(), server[0].attributes());
    let session = &client["mcp.session.id"];
    assert!(!session.is_empty(), "{client:?}");
    assert_eq!(&server["mcp.session.id"], session, "{server:?}");
    assert_eq!(client["mcp.protocol.version"], "2025-11-25");
    assert_eq!(server["mcp.protocol.version"], "2025-11-25");
}
