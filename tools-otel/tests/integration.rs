//! The toolkit's spans reach a real OTLP/HTTP receiver on loopback (built here from the
//! `opentelemetry-proto` types): the span tree of a `run_code` call with its analysis, its run
//! and its program's calls, with the GenAI conventions' names and attributes. And a call's span
//! as the SDK hands it to an exporter: every attribute, its value and its type.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use opentelemetry::Value;
use opentelemetry::trace::{SpanKind, Status};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData};
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
    assert_eq!(attrs["agent_tools.presentation_mode"], "both");
    assert!(attrs.contains_key("gen_ai.tool.description"));
    // Each phase's duration arrives as a number of seconds.
    let secs = |key: &str| -> f64 {
        attrs[key]
            .parse()
            .unwrap_or_else(|_| panic!("{key} = {}", attrs[key]))
    };
    for phase in ["admit", "dispatch"] {
        assert!(secs(&format!("agent_tools.{phase}.duration")) >= 0.0);
    }
    assert!(outer.parent_span_id.is_empty(), "the outer call is a root");

    let analysis = by_name("code_analysis");
    let run = by_name("run_code");
    assert_eq!((analysis.len(), run.len()), (1, 1));
    assert_eq!(analysis[0].span.parent_span_id, outer.span_id);
    assert_eq!(run[0].span.parent_span_id, outer.span_id);
    // Numbers are exported as numbers.
    assert_eq!(run[0].int_attribute("agent_tools.code.sub_calls"), Some(2));
    let engine = by_name("code_engine");
    assert_eq!(engine.len(), 1);
    assert_eq!(engine[0].span.parent_span_id, run[0].span.span_id);

    let token = by_name("execute_tool run_code")[0]
        .int_attribute("agent_tools.token")
        .expect("the token is an integer");
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
        assert_eq!(attrs["agent_tools.presentation_mode"], "both");
        assert_eq!(leaf.int_attribute("agent_tools.parent"), Some(token));
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
    // This test's own spans are under its target, `integration`: exported when named.
    let (subscriber, guard) = tools_otel::Otel::new("propagation")
        .endpoint(receiver.url())
        .targets(tools_otel::toolkit_targets().with_target("integration", tracing::Level::TRACE))
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

/// An exporter that keeps the spans it is given, as the SDK hands them over.
#[derive(Debug, Clone, Default)]
struct Keeping(Arc<Mutex<Vec<SpanData>>>);

impl opentelemetry_sdk::trace::SpanExporter for Keeping {
    async fn export(&self, batch: Vec<SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

/// A subscriber with `layer_for` over a provider that hands each span, as it ends, to a
/// [`Keeping`] exporter.
fn keeping() -> (
    Keeping,
    SdkTracerProvider,
    impl tracing::Subscriber + Send + Sync + 'static,
) {
    use tracing_subscriber::layer::SubscriberExt as _;
    let kept = Keeping::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(kept.clone())
        .build();
    let subscriber = tracing_subscriber::registry().with(tools_otel::layer_for(&provider));
    (kept, provider, subscriber)
}

/// A span's attributes by name; a name recorded twice fails the test.
fn attributes(span: &SpanData) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for kv in &span.attributes {
        let before = out.insert(kv.key.to_string(), kv.value.clone());
        assert!(before.is_none(), "{} recorded twice", kv.key);
    }
    out
}

/// An integer attribute (a token or a scope's number), exported as an integer.
fn number(attributes: &BTreeMap<String, Value>, key: &str) -> i64 {
    match &attributes[key] {
        Value::I64(n) if *n > 0 => *n,
        other => panic!("{key}: {other:?} is no positive integer"),
    }
}

/// Takes the phases' durations out of a span's attributes: each a float of seconds, `phases`
/// and no other.
fn take_durations(attributes: &mut BTreeMap<String, Value>, phases: &[&str]) {
    for phase in phases {
        let key = format!("agent_tools.{phase}.duration");
        match attributes.remove(&key) {
            Some(Value::F64(secs)) if secs.is_finite() && secs >= 0.0 => {}
            other => panic!("{key}: {other:?} is no duration in seconds"),
        }
    }
    let left: Vec<&String> = attributes
        .keys()
        .filter(|k| k.ends_with(".duration"))
        .collect();
    assert!(left.is_empty(), "durations of no phase: {left:?}");
}

#[test]
fn a_calls_span_reaches_the_exporter_with_every_attribute_its_value_and_its_type() {
    let (kept, provider, subscriber) = keeping();
    let runtime = ToolRuntime::new();
    let plugin = runtime.scope();
    let echo = ToolDefinition::builder("echo")
        .description("Says it back.")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, _c| async { Ok(json!(1)) })
        .build()
        .unwrap();
    let _echo = plugin.register(echo).unwrap();
    let agent = runtime.agent_scope();
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let seen = tokens.clone();
    let _observer = plugin
        .on_result(move |exec, _| seen.lock().unwrap().push(exec.token()))
        .unwrap();
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        tokio.block_on(async {
            let direct = runtime
                .execute(ToolCall::new("c1", "echo", json!({})))
                .await;
            assert!(!direct.is_error(), "{}", direct.text());
            let parent = tokens.lock().unwrap()[0];
            let nested = runtime
                .execute(
                    ToolCall::new("c2", "echo", json!({}))
                        .with_parent(parent)
                        .with_agent(agent.key()),
                )
                .await;
            assert!(!nested.is_error(), "{}", nested.text());
            let missing = runtime
                .execute(ToolCall::new("c3", "nope", json!({})))
                .await;
            assert!(missing.is_error());
        });
    });
    provider.shutdown().unwrap();

    let spans = kept.0.lock().unwrap().clone();
    let call = |id: &str| -> &SpanData {
        let found: Vec<&SpanData> = spans
            .iter()
            .filter(|s| {
                s.attributes.iter().any(|kv| {
                    kv.key.as_str() == "gen_ai.tool.call.id"
                        && kv.value == Value::from(id.to_owned())
                })
            })
            .collect();
        assert_eq!(found.len(), 1, "one span for {id}: {spans:?}");
        found[0]
    };
    // What every call's span has, then `more` (strings) and `numbers` (integers).
    let expected = |id: &str,
                    tool: &str,
                    more: &[(&str, &str)],
                    numbers: &[(&str, i64)]|
     -> BTreeMap<String, Value> {
        [
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", tool),
            ("gen_ai.tool.call.id", id),
            ("gen_ai.tool.type", "function"),
        ]
        .iter()
        .chain(more)
        .map(|(k, v)| ((*k).to_owned(), Value::from((*v).to_owned())))
        .chain(
            numbers
                .iter()
                .map(|(k, n)| ((*k).to_owned(), Value::I64(*n))),
        )
        .collect()
    };

    // A direct call that succeeds.
    let direct = call("c1");
    assert_eq!(direct.name, "execute_tool echo");
    assert_eq!(direct.span_kind, SpanKind::Internal);
    assert_eq!(direct.status, Status::Unset);
    assert_eq!(direct.parent_span_id, opentelemetry::trace::SpanId::INVALID);
    let mut attrs = attributes(direct);
    take_durations(&mut attrs, &["admit", "dispatch"]);
    let token = number(&attrs, "agent_tools.token");
    let done = [
        ("gen_ai.tool.description", "Says it back."),
        ("agent_tools.presentation_mode", "native"),
        ("agent_tools.policy", "allowed"),
        ("agent_tools.outcome", "ok"),
    ];
    let more = [("agent_tools.origin", "direct")];
    assert_eq!(
        attrs,
        expected(
            "c1",
            "echo",
            &[&more[..], &done].concat(),
            &[("agent_tools.token", token)]
        )
    );

    // A nested call from an agent scope: its parent's token and the scope.
    let nested = call("c2");
    assert_eq!(nested.name, "execute_tool echo");
    assert_eq!(nested.status, Status::Unset);
    let mut attrs = attributes(nested);
    take_durations(&mut attrs, &["admit", "dispatch"]);
    let nested_token = number(&attrs, "agent_tools.token");
    assert_ne!(nested_token, token);
    let scope = number(&attrs, "agent_tools.agent_scope");
    let more = [("agent_tools.origin", "nested")];
    let numbers = [
        ("agent_tools.token", nested_token),
        ("agent_tools.parent", token),
        ("agent_tools.agent_scope", scope),
    ];
    assert_eq!(
        attrs,
        expected("c2", "echo", &[&more[..], &done].concat(), &numbers)
    );

    // A call of no tool: no description, no policy, its code, and the error status.
    let missing = call("c3");
    assert_eq!(missing.name, "execute_tool nope");
    assert_eq!(missing.status, Status::error(""));
    let mut attrs = attributes(missing);
    take_durations(&mut attrs, &["admit"]);
    let missing_token = number(&attrs, "agent_tools.token");
    let more = [
        ("agent_tools.origin", "direct"),
        ("agent_tools.presentation_mode", "native"),
        ("agent_tools.outcome", "UNKNOWN_TOOL"),
        ("error.type", "UNKNOWN_TOOL"),
    ];
    assert_eq!(
        attrs,
        expected("c3", "nope", &more, &[("agent_tools.token", missing_token)])
    );
}

#[test]
fn inside_a_call_the_current_trace_context_is_the_calls_span() {
    let (kept, provider, subscriber) = keeping();
    let runtime = ToolRuntime::new();
    let plugin = runtime.scope();
    let seen = Arc::new(Mutex::new(None));
    let inside = seen.clone();
    let probe = ToolDefinition::builder("probe")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(move |_a, _c| {
            // What an imported MCP tool sends on in its request's `_meta`.
            *inside.lock().unwrap() = tools_otel::current();
            async { Ok(json!(1)) }
        })
        .build()
        .unwrap();
    let _probe = plugin.register(probe).unwrap();
    tracing::subscriber::with_default(subscriber, || {
        let tokio = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let result = tokio.block_on(runtime.execute(ToolCall::new("p1", "probe", json!({}))));
        assert!(!result.is_error(), "{}", result.text());
    });
    provider.shutdown().unwrap();
    let sent = seen
        .lock()
        .unwrap()
        .clone()
        .expect("a trace context inside the call");
    let spans = kept.0.lock().unwrap().clone();
    let call = spans
        .iter()
        .find(|s| s.name == "execute_tool probe")
        .unwrap();
    assert_eq!(
        sent.traceparent,
        format!(
            "00-{}-{}-01",
            call.span_context.trace_id(),
            call.span_context.span_id()
        )
    );
}

/// Spans and events of `targets`' choosing, under a subscriber exporting to a fresh receiver:
/// an `rmcp` span (as rmcp's `serve_inner` is) between two of the toolkit's, and a `hyper` event
/// in the toolkit's outer span.
fn export_with(targets: Option<tools_otel::Targets>) -> Vec<Received> {
    let receiver = Receiver::start().unwrap();
    let mut otel = tools_otel::Otel::new("filtered").endpoint(receiver.url());
    if let Some(targets) = targets {
        otel = otel.targets(targets);
    }
    let (subscriber, guard) = otel.subscriber().unwrap().unwrap();
    tracing::subscriber::with_default(subscriber, || {
        tracing::info_span!(target: "tools_runtime::pipeline", "toolkit outer").in_scope(|| {
            tracing::debug!(target: "hyper::proto", "a library's event");
            tracing::info_span!(target: "rmcp::service", "serve_inner").in_scope(|| {
                tracing::info_span!(target: "tools_mcp::trace", "toolkit inner").in_scope(|| {});
            });
        });
    });
    guard.shutdown();
    receiver.spans()
}

#[test]
fn only_the_toolkits_spans_are_exported_unless_more_targets_are_named() {
    let spans = export_with(None);
    let names: Vec<&str> = spans.iter().map(|r| r.span.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let find = |spans: &[Received], name: &str| {
        spans
            .iter()
            .find(|r| r.span.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .span
            .clone()
    };
    let (outer, inner) = (find(&spans, "toolkit outer"), find(&spans, "toolkit inner"));
    assert!(
        outer.events.is_empty(),
        "the library's event is not exported: {:?}",
        outer.events
    );
    assert_eq!(
        inner.parent_span_id, outer.span_id,
        "a span under one that is not exported takes the nearest exported one as its parent"
    );
    assert_eq!(inner.trace_id, outer.trace_id);

    // Named, the library's span and event are exported too, in their places.
    let targets = tools_otel::toolkit_targets()
        .with_target("rmcp", tracing::Level::TRACE)
        .with_target("hyper", tracing::Level::TRACE);
    let spans = export_with(Some(targets));
    assert_eq!(spans.len(), 3, "{spans:?}");
    let (outer, library, inner) = (
        find(&spans, "toolkit outer"),
        find(&spans, "serve_inner"),
        find(&spans, "toolkit inner"),
    );
    assert_eq!(library.parent_span_id, outer.span_id);
    assert_eq!(inner.parent_span_id, library.span_id);
    assert_eq!(outer.events.len(), 1, "{:?}", outer.events);
    assert_eq!(outer.events[0].name, "a library's event");
}
