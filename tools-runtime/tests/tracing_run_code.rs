//! A `run_code` call is a `run_code` span (inside its own `tool_call` span), and each call its
//! program makes is a `tool_call` span whose parent is that `run_code` span.
//!
//! Alone in its binary for the reason given in `tracing_span.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use tools_runtime::code::{CodeMode, TypeScriptRuntime};
use tools_runtime::{Output, PresentationMode, ToolCall, ToolDefinition, ToolRuntime};

#[derive(Debug, Clone)]
struct SpanInfo {
    name: String,
    fields: HashMap<String, String>,
    parent: Option<u64>,
}

/// Records every span with its fields and its parent (explicit, or the span entered on this
/// thread when it was created).
#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<HashMap<u64, SpanInfo>>>,
    next: Arc<AtomicU64>,
}

thread_local! {
    static ENTERED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

struct Visit<'a>(&'a mut HashMap<String, String>);
impl tracing::field::Visit for Visit<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut fields = HashMap::new();
        attrs.record(&mut Visit(&mut fields));
        let parent = if let Some(p) = attrs.parent() {
            Some(p.into_u64())
        } else if attrs.is_contextual() {
            ENTERED.with(|e| e.borrow().last().copied())
        } else {
            None
        };
        self.spans.lock().unwrap().insert(
            id,
            SpanInfo {
                name: attrs.metadata().name().to_owned(),
                fields,
                parent,
            },
        );
        tracing::span::Id::from_u64(id)
    }
    fn record(&self, span: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        if let Some(info) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Visit(&mut info.fields));
        }
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, span: &tracing::span::Id) {
        ENTERED.with(|e| e.borrow_mut().push(span.into_u64()));
    }
    fn exit(&self, span: &tracing::span::Id) {
        ENTERED.with(|e| {
            let mut e = e.borrow_mut();
            if let Some(at) = e.iter().rposition(|s| *s == span.into_u64()) {
                e.remove(at);
            }
        });
    }
}

#[test]
fn sub_call_spans_are_children_of_the_run_code_span() {
    let recorder = Recorder::default();
    let _guard = tracing::subscriber::set_default(recorder.clone());
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .code_mode(CodeMode::new(TypeScriptRuntime::new()))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let _t = plugin
        .register(
            ToolDefinition::builder("leaf")
                .input_schema(json!({"type": "object"}))
                .output(Output::json(json!({"type": "integer"})))
                .concurrency_safe(|_| true)
                .execute(|_a, _ctx| async { Ok(json!(1)) })
                .build()
                .unwrap(),
        )
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(rt.execute(ToolCall::new(
        "outer",
        "run_code",
        json!({"code": "await Promise.all([tools.leaf({}), tools.leaf({})]); return 2;",
               "description": "two leaves"}),
    )));
    assert!(!result.is_error(), "{}", result.text());

    let spans = recorder.spans.lock().unwrap().clone();
    let find = |pred: &dyn Fn(&SpanInfo) -> bool| -> Vec<(u64, SpanInfo)> {
        let mut v: Vec<(u64, SpanInfo)> = spans
            .iter()
            .filter(|(_, s)| pred(s))
            .map(|(id, s)| (*id, s.clone()))
            .collect();
        v.sort_by_key(|(id, _)| *id);
        v
    };
    let outer = find(&|s| {
        s.name == "tool_call" && s.fields.get("tool").map(String::as_str) == Some("run_code")
    });
    assert_eq!(outer.len(), 1);
    let run = find(&|s| s.name == "run_code");
    assert_eq!(run.len(), 1);
    assert_eq!(
        run[0].1.parent,
        Some(outer[0].0),
        "run_code runs inside its tool_call span"
    );
    assert_eq!(run[0].1.fields["call_id"], "outer");
    assert_eq!(run[0].1.fields["sub_calls"], "2");
    let leaves = find(&|s| {
        s.name == "tool_call" && s.fields.get("tool").map(String::as_str) == Some("leaf")
    });
    assert_eq!(leaves.len(), 2);
    for (_, leaf) in &leaves {
        assert_eq!(leaf.parent, Some(run[0].0), "{leaf:?}");
        assert_eq!(leaf.fields["outcome"], "ok");
        assert_eq!(leaf.fields["parent"], outer[0].1.fields["token"]);
    }
}
