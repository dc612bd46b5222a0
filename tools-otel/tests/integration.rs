//! The toolkit's spans reach a real OTLP/HTTP receiver on loopback (built here from the
//! `opentelemetry-proto` types): the span tree of a `run_code` call with its analysis, its run
//! and its program's calls, with the GenAI conventions' names and attributes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use serde_json::json;
use tools_code::{CodeMode, TypeScriptRuntime};
use tools_otel::receiver::{Received, Receiver};
use tools_runtime::{Output, PresentationMode, ToolCall, ToolDefinition, ToolRuntime};

#[test]
fn a_run_code_call_reaches_an_otlp_receiver_as_one_tree_with_the_genai_attributes() {
    let receiver = Receiver::start().unwrap();
    let (subscriber, guard) = tools_otel::Otel::new("tools-otel-test")
        .endpoint(receiver.url())
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

    let received = receiver.spans();
    assert!(received.iter().all(|r| r.service == "tools-otel-test"));
    let by_name = |name: &str| -> Vec<&Received> {
        received.iter().filter(|r| r.span.name == name).collect()
    };
    let names: Vec<&str> = received.iter().map(|r| r.span.name.as_str()).collect();
    let outer = by_name("execute_tool run_code");
    assert_eq!(outer.len(), 1, "{names:?}");
    let attrs = outer[0].attributes();
    let outer = &outer[0].span;
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
    assert_eq!(analysis[0].span.parent_span_id, outer.span_id);
    assert_eq!(run[0].span.parent_span_id, outer.span_id);
    assert_eq!(run[0].attributes()["agent_tools.code.sub_calls"], "2");
    let engine = by_name("code_engine");
    assert_eq!(engine.len(), 1);
    assert_eq!(engine[0].span.parent_span_id, run[0].span.span_id);

    let token = by_name("execute_tool run_code")[0].attributes()["agent_tools.token"].clone();
    let leaves = by_name("execute_tool leaf");
    assert_eq!(leaves.len(), 2);
    for leaf in &leaves {
        let attrs = leaf.attributes();
        assert_eq!(leaf.span.parent_span_id, run[0].span.span_id);
        assert_eq!(
            leaf.span.trace_id, outer.trace_id,
            "one trace for the whole call"
        );
        assert_eq!(attrs["agent_tools.origin"], "program");
        assert_eq!(attrs["agent_tools.parent"], token);
        assert_eq!(attrs["gen_ai.tool.description"], "A leaf that answers 1.");
        assert!(attrs["gen_ai.tool.call.id"].starts_with("outer:code:"));
    }

    // A failed call carries its code and the error status.
    let lost = by_name("execute_tool nope");
    assert_eq!(lost.len(), 1);
    let attrs = lost[0].attributes();
    assert_eq!(attrs["error.type"], "UNKNOWN_TOOL");
    assert_eq!(attrs["agent_tools.outcome"], "UNKNOWN_TOOL");
    let status = lost[0].span.status.as_ref().unwrap();
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_ne!(
        lost[0].span.trace_id, outer.trace_id,
        "another call, another trace"
    );
}

#[test]
fn trace_context_goes_out_of_a_span_and_parents_a_span_elsewhere() {
    let receiver = Receiver::start().unwrap();
    let (subscriber, guard) = tools_otel::Otel::new("propagation")
        .endpoint(receiver.url())
        .subscriber()
        .unwrap()
        .unwrap();
    let (sent, parented_wrong) = tracing::subscriber::with_default(subscriber, || {
        assert_eq!(
            tools_otel::current(),
            None,
            "outside any span there is none"
        );
        let sent = tracing::info_span!("sender").in_scope(|| tools_otel::current().unwrap());
        // "Another process": a span given the context that came in.
        let receiving = tracing::info_span!("receiver");
        assert!(tools_otel::set_remote_parent(
            &receiving,
            &sent.traceparent,
            &sent.tracestate
        ));
        receiving.in_scope(|| {});
        let wrong = tracing::info_span!("unparented");
        let parented = tools_otel::set_remote_parent(&wrong, "00-not-a-context", "");
        wrong.in_scope(|| {});
        (sent, parented)
    });
    guard.shutdown();
    assert!(!parented_wrong, "an invalid traceparent parents nothing");
    let spans = receiver.spans();
    let find = |name: &str| {
        spans
            .iter()
            .find(|r| r.span.name == name)
            .unwrap()
            .span
            .clone()
    };
    let (sender, receiving) = (find("sender"), find("receiver"));
    assert_eq!(receiving.trace_id, sender.trace_id);
    assert_eq!(receiving.parent_span_id, sender.span_id);
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    assert_eq!(
        sent.traceparent,
        format!("00-{}-{}-01", hex(&sender.trace_id), hex(&sender.span_id))
    );
    assert_ne!(find("unparented").trace_id, sender.trace_id);
}
