//! Stack safety: schemas 100,000 levels deep (objects, arrays, unions, maps) render in bounded
//! stack. The reader stops at `MAX_DEPTH` and renders the rest as `unknown` / `Any`.
//!
//! A 100,000-level `serde_json::Value` would overflow the stack when dropped recursively, so
//! every deep value here is dropped with `tools_schema::deep::drop_value`, which uses a work
//! list.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Each deep value is built by moving the previous level in; `json!` would copy it recursively.

use serde_json::{Value, json};
use tools_codegen::{MAX_DEPTH, json_schema_to_py, json_schema_to_ts};

const LEVELS: usize = 100_000;

/// `{...base, key: inner}`, built by moving `inner` (the `json!` macro would serialize a copy of
/// it, recursively).
fn wrap(base: Value, key: &str, inner: Value) -> Value {
    let Value::Object(mut map) = base else {
        unreachable!()
    };
    map.insert(key.to_owned(), inner);
    Value::Object(map)
}

fn deep(kind: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..LEVELS {
        schema = match kind {
            0 => wrap(
                json!({"type": "object", "required": ["a"]}),
                "properties",
                wrap(json!({}), "a", schema),
            ),
            1 => wrap(json!({"type": "array"}), "items", schema),
            2 => wrap(
                json!({}),
                "oneOf",
                Value::Array(vec![schema, json!({"type": "null"})]),
            ),
            _ => wrap(json!({"type": "object"}), "additionalProperties", schema),
        };
    }
    schema
}

/// Runs on a thread with a small stack (256 KiB) to show the renderers need little of it.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn schemas_100_000_levels_deep_render_in_bounded_stack() {
    for kind in 0..4 {
        let schema = deep(kind);
        let (schema, ts, py) = on_small_stack(move || {
            let ts = json_schema_to_ts(&schema);
            let py = json_schema_to_py(&schema);
            (schema, ts, py)
        });
        tools_schema::deep::drop_value(schema);
        assert!(ts.contains("unknown"), "kind {kind}: {ts:.200}");
        assert!(py.contains("Any"), "kind {kind}: {py:.200}");
        // Bounded output: the reader stopped after MAX_DEPTH levels.
        assert!(
            ts.len() < 200 * MAX_DEPTH * MAX_DEPTH,
            "kind {kind}: {} bytes",
            ts.len()
        );
        assert!(
            py.len() < 100 * MAX_DEPTH,
            "kind {kind}: {} bytes",
            py.len()
        );
    }
}

#[test]
fn arrays_deeper_than_the_bound_keep_the_bound_then_degrade() {
    let mut schema = json!({"type": "integer"});
    for _ in 0..200 {
        schema = json!({"type": "array", "items": schema});
    }
    let ts = json_schema_to_ts(&schema);
    assert_eq!(ts, format!("unknown{}", "[]".repeat(MAX_DEPTH + 1)));
    let py = json_schema_to_py(&schema);
    assert_eq!(
        py,
        format!(
            "{}Any{}",
            "list[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        )
    );
}
