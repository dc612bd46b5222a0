//! A `tracing` subscriber for tests that records every span, its fields and its parent, and
//! every event's fields.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone)]
pub struct SpanInfo {
    pub name: String,
    pub fields: HashMap<String, String>,
    pub parent: Option<u64>,
    /// How many fields the span's metadata declares.
    pub declared: usize,
}

/// Records every span with its fields and its parent (explicit, or the span entered on this
/// thread when it was created).
#[derive(Default, Clone)]
pub struct Recorder {
    pub spans: Arc<Mutex<HashMap<u64, SpanInfo>>>,
    /// Every event's fields (its text under `message`), its level under `level` and its span
    /// under `span`: the explicit parent, else the span entered on its thread (when one is).
    pub events: Arc<Mutex<Vec<HashMap<String, String>>>>,
    /// How many times each span was entered.
    pub enters: Arc<Mutex<HashMap<u64, usize>>>,
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
                declared: attrs.metadata().fields().len(),
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
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = HashMap::new();
        event.record(&mut Visit(&mut fields));
        fields.insert("level".to_owned(), event.metadata().level().to_string());
        let parent = match event.parent() {
            Some(explicit) => Some(explicit.into_u64()),
            None => ENTERED.with(|e| e.borrow().last().copied()),
        };
        if let Some(span) = parent {
            fields.insert("span".to_owned(), span.to_string());
        }
        self.events.lock().unwrap().push(fields);
    }
    fn enter(&self, span: &tracing::span::Id) {
        *self
            .enters
            .lock()
            .unwrap()
            .entry(span.into_u64())
            .or_default() += 1;
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

impl Recorder {
    /// The spans named `name`, in creation order, with their ids.
    pub fn named(&self, name: &str) -> Vec<(u64, SpanInfo)> {
        let mut found: Vec<(u64, SpanInfo)> = self
            .spans
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, s)| s.name == name)
            .map(|(id, s)| (*id, s.clone()))
            .collect();
        found.sort_by_key(|(id, _)| *id);
        found
    }
}
