//! Stack safety for values of any depth on the pipeline's own paths: dropping and rendering.

use serde_json::Value;

/// Whether `value` is at most two container levels deep (checked without allocating), so that
/// dropping or cloning it recursively is harmless.
fn shallow(value: &Value) -> bool {
    fn scalars(v: &Value) -> bool {
        match v {
            Value::Array(items) => items.iter().all(|i| !is_container(i)),
            Value::Object(map) => map.values().all(|i| !is_container(i)),
            _ => true,
        }
    }
    match value {
        Value::Array(items) => items.iter().all(scalars),
        Value::Object(map) => map.values().all(scalars),
        _ => true,
    }
}

fn is_container(v: &Value) -> bool {
    match v {
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
        _ => false,
    }
}

/// Drops `value`; a deep one without recursion.
pub(crate) fn discard(value: Value) {
    if !shallow(&value) {
        tools_schema::deep::drop_value(value);
    }
}

/// Clones `value`; a deep one without recursion.
pub(crate) fn clone(value: &Value) -> Value {
    if shallow(value) {
        value.clone()
    } else {
        tools_schema::deep::clone_value(value)
    }
}

/// Compact JSON text of `value`, written with an explicit stack (same text as
/// `serde_json::to_string`).
pub(crate) fn to_compact_json(value: &Value) -> String {
    enum Step<'a> {
        Value(&'a Value),
        Text(&'static str),
        Key(&'a str),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Key(k) => {
                out.push_str(&Value::String(k.to_owned()).to_string());
                out.push(':');
            }
            Step::Value(Value::Array(items)) => {
                out.push('[');
                stack.push(Step::Text("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(Value::Object(map)) => {
                out.push('{');
                stack.push(Step::Text("}"));
                let entries: Vec<(&String, &Value)> = map.iter().collect();
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    stack.push(Step::Value(v));
                    stack.push(Step::Key(k));
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(scalar) => out.push_str(&scalar.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_json_matches_serde_json() {
        for v in [
            json!(null),
            json!("a \"quoted\" \n string"),
            json!([1, 2.5, [], {}, [[]]]),
            json!({"b": {"c": [true, false, null]}, "a": "x", "é": -0.0}),
        ] {
            assert_eq!(to_compact_json(&v), v.to_string());
        }
    }

    #[test]
    fn shallow_values_are_recognised_without_allocation() {
        assert!(shallow(&json!({"a": 1, "b": [1, 2], "c": {"d": 1}})));
        assert!(!shallow(&json!({"a": {"b": {"c": 1}}})));
        assert!(!shallow(&json!([[[1]]])));
    }
}
