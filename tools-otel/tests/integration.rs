//! The toolkit's spans reach a real OTLP/HTTP receiver on loopback (built here from the
//! `opentelemetry-proto` types): the span tree of a `run_code` call with its analysis, its run
//! and its program's calls, with the GenAI conventions' names and attributes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use prost::Message as _;
use serde_json::json;
use tools_code::{CodeMode, TypeScriptRuntime};
use tools_runtime::{Output, PresentationMode, ToolCall, ToolDefinition, ToolRuntime};

/// A minimal OTLP/HTTP receiver: answers every `POST /v1/traces` with 200 and keeps the spans
/// (and each request's resource attributes).
struct Receiver {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
    services: Arc<Mutex<Vec<String>>>,
}

fn receiver() -> Receiver {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let services: Arc<Mutex<Vec<String>>> = Arc::default();
    let (kept, names) = (spans.clone(), services.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (kept, names) = (kept.clone(), names.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                loop {
                    // One HTTP/1.1 request: its line, its headers, its body.
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    assert!(line.starts_with("POST /v1/traces "), "{line}");
                    let mut length = 0usize;
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).unwrap();
                        let header = header.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
                    for resource_spans in request.resource_spans {
                        if let Some(resource) = &resource_spans.resource {
                            for attribute in &resource.attributes {
                                if attribute.key == "service.name"
                                    && let Some(AnyValue::StringValue(name)) =
                                        attribute.value.as_ref().and_then(|v| v.value.clone())
                                {
                                    names.lock().unwrap().push(name);
                                }
                            }
                        }
                        for scope_spans in resource_spans.scope_spans {
                            kept.lock().unwrap().extend(scope_spans.spans);
                        }
                    }
                    stream
                        .write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
                        )
                        .unwrap();
                }
            });
        }
    });
    Receiver {
        url,
        spans,
        services,
    }
}

fn attributes(span: &Span) -> HashMap<String, String> {
    span.attributes
        .iter()
        .map(|a| {
            let value = match a.value.as_ref().and_then(|v| v.value.clone()) {
                Some(AnyValue::StringValue(s)) => s,
                Some(AnyValue::IntValue(i)) => i.to_string(),
                Some(AnyValue::BoolValue(b)) => b.to_string(),
                Some(AnyValue::DoubleValue(d)) => d.to_string(),
                other => format!("{other:?}"),
            };
            (a.key.clone(), value)
        })
        .collect()
}

#[test]
fn a_run_code_call_reaches_an_otlp_receiver_as_one_tree_with_the_genai_attributes() {
    let receiver = receiver();
    let (subscriber, guard) = tools_otel::Otel::new("tools-otel-test")
        .endpoint(&receiver.url)
        .subscriber()
        .unwrap()
        .expect("OTEL_SDK_DISABLED is not set in this test");
    let runtime = ToolRuntime::builder()
        .mode(PresentationMode::Both)
        .extension(CodeMode::new(TypeScriptRuntime::new()))
        .build()
        .unwrap();
    let plugin = runtime.scope();
    let leaf = ToolDefinition::builder("leaf")
        .description("A leaf that answers 1.")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, _c| async { Ok(json!(1)) })
        .build()
        .unwrap();
    let _leaf = plugin.register(leaf).unwrap();
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        let result = tokio.block_on(runtime.execute(ToolCall::new(
            "outer",
            "run_code",
            json!({"code": "return (await tools.leaf({})) + (await tools.leaf({}));",
                   "description": "two leaves"}),
        )));
        assert_eq!(
            result.value().unwrap()["result"],
            json!(2),
            "{}",
            result.text()
        );
        let missing = tokio.block_on(runtime.execute(ToolCall::new("lost", "nope", json!({}))));
        assert!(missing.is_error());
    });
    // Exports what is waiting.
    guard.shutdown();

    let spans = receiver.spans.lock().unwrap().clone();
    let by_name = |name: &str| -> Vec<&Span> { spans.iter().filter(|s| s.name == name).collect() };
    let outer = by_name("execute_tool run_code");
    assert_eq!(
        outer.len(),
        1,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let outer = outer[0];
    let attrs = attributes(outer);
    assert_eq!(attrs["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attrs["gen_ai.tool.name"], "run_code");
    assert_eq!(attrs["gen_ai.tool.call.id"], "outer");
    assert_eq!(attrs["gen_ai.tool.type"], "function");
    assert_eq!(attrs["agent_tools.origin"], "direct");
    assert_eq!(attrs["agent_tools.policy"], "allowed");
    assert_eq!(attrs["agent_tools.outcome"], "ok");
    assert!(attrs.contains_key("gen_ai.tool.description"));
    assert!(outer.parent_span_id.is_empty(), "the outer call is a root");

    let analysis = by_name("code_analysis");
    let run = by_name("run_code");
    assert_eq!((analysis.len(), run.len()), (1, 1));
    assert_eq!(analysis[0].parent_span_id, outer.span_id);
    assert_eq!(run[0].parent_span_id, outer.span_id);
    assert_eq!(attributes(run[0])["agent_tools.code.sub_calls"], "2");
    let engine = by_name("code_engine");
    assert_eq!(engine.len(), 1);
    assert_eq!(engine[0].parent_span_id, run[0].span_id);

    let leaves = by_name("execute_tool leaf");
    assert_eq!(leaves.len(), 2);
    for leaf in &leaves {
        let attrs = attributes(leaf);
        assert_eq!(leaf.parent_span_id, run[0].span_id);
        assert_eq!(
            leaf.trace_id, outer.trace_id,
            "one trace for the whole call"
        );
        assert_eq!(attrs["agent_tools.origin"], "program");
        assert_eq!(
            attrs["agent_tools.parent"],
            attributes(outer)["agent_tools.token"]
        );
        assert_eq!(attrs["gen_ai.tool.description"], "A leaf that answers 1.");
        assert!(attrs["gen_ai.tool.call.id"].starts_with("outer:code:"));
    }

    // A failed call carries its code and the error status.
    let lost = by_name("execute_tool nope");
    assert_eq!(lost.len(), 1);
    let attrs = attributes(lost[0]);
    assert_eq!(attrs["error.type"], "UNKNOWN_TOOL");
    assert_eq!(attrs["agent_tools.outcome"], "UNKNOWN_TOOL");
    let status = lost[0].status.as_ref().unwrap();
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_ne!(
        lost[0].trace_id, outer.trace_id,
        "another call, another trace"
    );

    assert!(
        receiver
            .services
            .lock()
            .unwrap()
            .iter()
            .all(|name| name == "tools-otel-test")
    );
}
