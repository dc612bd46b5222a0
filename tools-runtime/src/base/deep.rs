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
    write_json(value, 0)
}

/// Pretty JSON text of `value` (two spaces a level, as `serde_json::to_string_pretty`) whose
/// indentation stops at `max_indent` characters: a container whose members would be indented
/// further is written compact, members and all. Written with an explicit stack.
pub(crate) fn to_pretty_json_capped(value: &Value, max_indent: usize) -> String {
    write_json(value, max_indent)
}

/// The one JSON writer behind both: `max_indent == 0` is compact.
fn write_json(value: &Value, max_indent: usize) -> String {
    enum Step<'a> {
        /// A value whose members, if it is a pretty container, sit at `depth + 1`.
        Value(&'a Value, usize),
        Text(&'static str),
        Key(&'a str, bool),
        /// A line break followed by `n` spaces.
        Break(usize),
    }
    let pretty = |depth: usize| max_indent > 0 && (depth + 1) * 2 <= max_indent;
    let mut out = String::new();
    let mut stack = vec![Step::Value(value, 0)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(t) => out.push_str(t),
            Step::Break(n) => {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', n));
            }
            Step::Key(k, spaced) => {
                out.push_str(&Value::String(k.to_owned()).to_string());
                out.push_str(if spaced { ": " } else { ":" });
            }
            Step::Value(Value::Array(items), depth) if !items.is_empty() => {
                let wide = pretty(depth);
                out.push('[');
                stack.push(Step::Text("]"));
                if wide {
                    stack.push(Step::Break(depth * 2));
                }
                for (i, item) in items.iter().enumerate().rev() {
                    // A compact container's members are compact too.
                    stack.push(Step::Value(
                        item,
                        if wide { depth + 1 } else { usize::MAX / 4 },
                    ));
                    if wide {
                        stack.push(Step::Break((depth + 1) * 2));
                    }
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(Value::Object(map), depth) if !map.is_empty() => {
                let wide = pretty(depth);
                out.push('{');
                stack.push(Step::Text("}"));
                if wide {
                    stack.push(Step::Break(depth * 2));
                }
                let entries: Vec<(&String, &Value)> = map.iter().collect();
                for (i, (k, v)) in entries.into_iter().enumerate().rev() {
                    stack.push(Step::Value(
                        v,
                        if wide { depth + 1 } else { usize::MAX / 4 },
                    ));
                    stack.push(Step::Key(k, wide));
                    if wide {
                        stack.push(Step::Break((depth + 1) * 2));
                    }
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(Value::Array(_), _) => out.push_str("[]"),
            Step::Value(Value::Object(_), _) => out.push_str("{}"),
            Step::Value(scalar, _) => out.push_str(&scalar.to_string()),
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
    fn pretty_json_matches_serde_json_within_the_cap_and_goes_compact_past_it() {
        let v = json!({"a": [1, {"b": []}], "c": {}, "d": "x"});
        assert_eq!(
            to_pretty_json_capped(&v, 10),
            serde_json::to_string_pretty(&v).unwrap()
        );
        // Members of the level-5 container would sit at 12 characters: it is compact.
        let deep = json!({"1": {"2": {"3": {"4": {"5": {"6": [1, 2]}}}}}});
        let text = to_pretty_json_capped(&deep, 10);
        assert!(text.contains(r#""5": {"6":[1,2]}"#), "{text}");
        assert!(
            text.lines().all(|l| l.len() - l.trim_start().len() <= 10),
            "{text}"
        );
        // A value of any depth is written without recursion.
        let mut huge = json!(0);
        for _ in 0..100_000 {
            huge = Value::Array(vec![huge]);
        }
        let text = to_pretty_json_capped(&huge, 10);
        discard(huge);
        assert!(text.starts_with("[\n  [\n    [\n"), "{}", &text[..40]);
        let core = format!("{}0{}", "[".repeat(1000), "]".repeat(1000));
        assert!(text.contains(&core));
        assert!(text.ends_with("\n  ]\n]"));
    }

    #[test]
    fn shallow_values_are_recognised_without_allocation() {
        assert!(shallow(&json!({"a": 1, "b": [1, 2], "c": {"d": 1}})));
        assert!(!shallow(&json!({"a": {"b": {"c": 1}}})));
        assert!(!shallow(&json!([[[1]]])));
    }
}
