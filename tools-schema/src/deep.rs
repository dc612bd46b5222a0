//! Stack-safe helpers for deeply nested JSON values and schemas.
//!
//! `serde_json::Value` and [`Schema`] are trees of boxes and vectors; the compiler-generated
//! `Drop`, `Clone` and `PartialEq` of such trees recurse once per level, so a value nested
//! 100,000 levels deep overflows the thread's stack when it is dropped, cloned or compared. The
//! functions here do the same work with an explicit heap-allocated work stack. Use them wherever a
//! value of unbounded depth may arrive from outside (a model, a file, an MCP server).
//!
//! ```
//! use serde_json::{json, Value};
//! use tools_schema::deep;
//!
//! // Build [[[...]]] 100,000 levels deep without recursion ...
//! let mut value = json!(0);
//! for _ in 0..100_000 {
//!     value = Value::Array(vec![value]);
//! }
//! assert_eq!(deep::depth(&value), 100_001);
//! let copy = deep::clone_value(&value);
//! assert!(deep::values_equal(&value, &copy));
//! // ... and drop it without recursion either.
//! deep::drop_value(value);
//! deep::drop_value(copy);
//! ```

use serde_json::{Map, Value};

use crate::schema::{AdditionalProperties, Annotations, Schema, SchemaKind};

/// Drops a JSON value of any depth without recursion.
pub fn drop_value(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Drops a [`Schema`] of any depth (and the JSON annotations inside it) without recursion.
pub fn drop_schema(schema: Schema) {
    let mut stack = vec![schema];
    let mut values = Vec::new();
    while let Some(schema) = stack.pop() {
        let Schema { kind, annotations } = schema;
        let Annotations {
            default,
            examples,
            extra,
            ..
        } = annotations;
        values.extend(default);
        values.extend(examples.into_iter().flatten());
        values.extend(extra.into_iter().map(|(_, v)| v));
        match kind {
            SchemaKind::Array(array) => stack.extend(array.items.map(|b| *b)),
            SchemaKind::Object(object) => {
                stack.extend(object.properties.into_iter().map(|(_, s)| s));
                if let AdditionalProperties::Schema(s) = object.additional_properties {
                    stack.push(*s);
                }
            }
            SchemaKind::OneOf(alternatives) => stack.extend(alternatives),
            _ => {}
        }
    }
    for value in values {
        drop_value(value);
    }
}

/// The nesting depth of a JSON value: 1 for a scalar or an empty container, plus one per level
/// of arrays and objects. Computed without recursion.
pub fn depth(value: &Value) -> usize {
    let mut max = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, level)) = stack.pop() {
        max = max.max(level);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, level + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, level + 1))),
            _ => {}
        }
    }
    max
}

/// Whether the nesting depth of `value` exceeds `limit`, stopping as soon as it does.
pub fn deeper_than(value: &Value, limit: usize) -> bool {
    if limit == 0 {
        return true;
    }
    // Only containers are pushed, each at a level within the limit; one with any child at the
    // limit itself has a child past it.
    let container = |v: &&Value| matches!(v, Value::Array(_) | Value::Object(_));
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((value, level)) = stack.pop() {
        match value {
            Value::Array(items) => {
                if level == limit && !items.is_empty() {
                    return true;
                }
                stack.extend(items.iter().filter(container).map(|v| (v, level + 1)));
            }
            Value::Object(map) => {
                if level == limit && !map.is_empty() {
                    return true;
                }
                stack.extend(map.values().filter(container).map(|v| (v, level + 1)));
            }
            _ => {}
        }
    }
    false
}

/// Clones a JSON value of any depth without recursion. Object key order is kept.
pub fn clone_value(value: &Value) -> Value {
    enum Step<'a> {
        Enter(&'a Value),
        Array(usize),
        Object(Vec<&'a String>),
    }
    let mut work = vec![Step::Enter(value)];
    let mut built: Vec<Value> = Vec::new();
    while let Some(step) = work.pop() {
        match step {
            Step::Enter(Value::Array(items)) => {
                work.push(Step::Array(items.len()));
                work.extend(items.iter().rev().map(Step::Enter));
            }
            Step::Enter(Value::Object(map)) => {
                work.push(Step::Object(map.keys().collect()));
                work.extend(map.values().rev().map(Step::Enter));
            }
            Step::Enter(scalar) => built.push(scalar.clone()),
            Step::Array(len) => {
                let items = built.split_off(built.len() - len);
                built.push(Value::Array(items));
            }
            Step::Object(keys) => {
                let values = built.split_off(built.len() - keys.len());
                let map: Map<String, Value> = keys.into_iter().cloned().zip(values).collect();
                built.push(Value::Object(map));
            }
        }
    }
    built.pop().unwrap_or(Value::Null)
}

/// JSON equality of two values of any depth, without recursion.
///
/// Objects are equal when they hold the same keys with equal values, in any order. Numbers are
/// compared by mathematical value, as JSON Schema does: `1` equals `1.0`.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::String(x), Value::String(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if crate::number::numbers_equal(x, y) => {}
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                stack.extend(x.iter().zip(y.iter()));
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                for (key, xv) in x {
                    match y.get(key) {
                        Some(yv) => stack.push((xv, yv)),
                        None => return false,
                    }
                }
            }
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{deeper_than, depth};
    use serde_json::json;

    #[test]
    fn deeper_than_agrees_with_depth_at_every_limit() {
        let values = [
            json!(1),
            json!([]),
            json!({}),
            json!([1]),
            json!([[1]]),
            json!({"a": {"b": []}}),
            json!({"a": 1, "b": [[[]]], "c": "x"}),
            json!([{"a": [1, 2, {"b": null}]}, 3]),
        ];
        for value in &values {
            for limit in 0..7 {
                assert_eq!(
                    deeper_than(value, limit),
                    depth(value) > limit,
                    "{value} at limit {limit}"
                );
            }
        }
    }
}
