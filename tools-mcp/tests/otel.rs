//! One trace across MCP (feature `otel`): the `tools-mcp serve` binary, built with the feature,
//! exports its spans to a loopback OTLP receiver; a tool imported from it in this process, called
//! under an OpenTelemetry subscriber exporting to the same receiver, sends its trace context in
//! the `tools/call`'s `_meta`, and the server's spans join the caller's trace: the server's
//! `tools/call <tool>` span is the child of the importing `execute_tool <tool>` span, and the
//! server's own `execute_tool <tool>` span is the child of that. Over stdio, a raw client checks
//! the `_meta` keys on the wire, that an invalid or absent `traceparent` parents nothing and
//! fails nothing, and that the server exports its spans when its stdin closes.

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
    let mcp = named(&spans, "otel-served", "tools/call echo");
    assert_eq!(mcp.len(), 1, "{all:#?}");
    let attrs = mcp[0].attributes();
    let mcp = &mcp[0].span;
    let executing = named(&spans, "otel-served", "execute_tool echo");
    assert_eq!(executing.len(), 1, "{all:#?}");
    let executing = &executing[0].span;

    assert_eq!(mcp.trace_id, calling.trace_id, "one trace: {all:#?}");
    assert_eq!(executing.trace_id, calling.trace_id, "one trace: {all:#?}");
    assert_eq!(
        mcp.parent_span_id, calling.span_id,
        "the server's span is the child of the importing call's: {all:#?}"
    );
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
    // Closing stdin stops the server, which exports its spans before it exits.
    let status = peer.close();
    assert!(status.success(), "the server exits cleanly: {status}");

    let spans = receiver.spans();
    let all = summary(&spans);
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
