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

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::schema::{AdditionalProperties, Annotations, Schema, SchemaKind};

/// Parses JSON text of any nesting depth into a [`Value`], as `serde_json::from_str` does
/// (same values, same errors, same positions), without its limit of 128 nested levels.
///
/// The parser recurses once per level; the stack it runs on is grown on the heap as the nesting
/// needs (`serde_stacker`), so any depth that fits in memory is read. Containers under
/// construction are kept off the stack, and everything built before an error is dropped without
/// recursion, so failing on deep text is as safe as reading it. Drop the result with
/// [`drop_value`] when it may be deep.
pub fn from_str(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let mut scratch = Scratch::default();
    let parsed = ValueSeed {
        scratch: &mut scratch,
    }
    .deserialize(serde_stacker::Deserializer::new(&mut de));
    scratch.clear();
    let value = parsed?;
    match de.end() {
        Ok(()) => Ok(value),
        Err(error) => {
            drop_value(value);
            Err(error)
        }
    }
}

/// How many levels [`to_string_pretty`] indents; deeper containers are written on one line.
/// It is the depth `serde_json` reads by default, so a value that `serde_json` reads by default
/// is printed exactly as `serde_json::to_string_pretty` prints it.
pub const PRETTY_LEVELS: usize = 128;

/// `serde_json::to_string_pretty` (two-space indent) of a value of any depth, written with an
/// explicit work stack instead of serde_json's recursive serializer.
///
/// It is byte for byte serde_json's text for values up to [`PRETTY_LEVELS`] levels deep. Deeper
/// containers are written compactly on one line, as `serde_json::to_string` would: indenting
/// every level makes the text grow with the square of the depth (a value 10,000 levels deep
/// would take a gigabyte of spaces).
pub fn to_string_pretty(value: &Value) -> String {
    to_string_pretty_levels(value, PRETTY_LEVELS)
}

/// [`to_string_pretty`] that indents only `levels` levels: a container at level `levels` or
/// deeper is written compactly on one line, members and all (`levels` 0 is
/// [`to_string`]). Model-facing text uses it to keep deep values readable.
pub fn to_string_pretty_levels(value: &Value, levels: usize) -> String {
    enum Step<'a> {
        /// A value; with a key, an object entry on its own line.
        Value(Option<&'a str>, &'a Value, usize),
        /// An array item on its own line.
        Item(&'a Value, usize),
        Comma,
        Close(char, usize),
    }
    fn indent(out: &mut String, level: usize) {
        for _ in 0..level {
            out.push_str("  ");
        }
    }
    let mut out = String::new();
    let mut stack = vec![Step::Value(None, value, 0)];
    while let Some(step) = stack.pop() {
        let (value, level) = match step {
            Step::Comma => {
                out.push_str(",\n");
                continue;
            }
            Step::Close(bracket, level) => {
                out.push('\n');
                indent(&mut out, level);
                out.push(bracket);
                continue;
            }
            Step::Item(value, level) => {
                indent(&mut out, level);
                (value, level)
            }
            Step::Value(Some(key), value, level) => {
                indent(&mut out, level);
                push_scalar(&mut out, &Value::String(key.to_owned()));
                out.push_str(": ");
                (value, level)
            }
            Step::Value(None, value, level) => (value, level),
        };
        match value {
            Value::Array(_) | Value::Object(_) if level >= levels => {
                push_compact(&mut out, value);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push_str("[\n");
                stack.push(Step::Close(']', level));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Item(item, level + 1));
                    if i > 0 {
                        stack.push(Step::Comma);
                    }
                }
            }
            Value::Object(map) if !map.is_empty() => {
                out.push_str("{\n");
                stack.push(Step::Close('}', level));
                let entries: Vec<_> = map.iter().collect();
                for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                    stack.push(Step::Value(Some(key), item, level + 1));
                    if i > 0 {
                        stack.push(Step::Comma);
                    }
                }
            }
            Value::Array(_) => out.push_str("[]"),
            Value::Object(_) => out.push_str("{}"),
            scalar => push_scalar(&mut out, scalar),
        }
    }
    out
}

/// `serde_json::to_string` of a value of any depth, written without recursion.
pub fn to_string(value: &Value) -> String {
    let mut out = String::new();
    push_compact(&mut out, value);
    out
}

/// The compact JSON text of `value` with every object's keys in code-point order, written
/// without recursion: one text for one JSON value whatever order its keys came in (what a
/// decision bound to a call's arguments is computed over).
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = String::new();
    walk_pieces(value, true, |piece| match piece {
        Piece::Text(text) => out.push_str(text),
        Piece::Key(key) => push_scalar(&mut out, &Value::String(key.to_owned())),
        Piece::Scalar(scalar) => push_scalar(&mut out, scalar),
    });
    out
}

/// Appends `value` as `serde_json::to_string` writes it, without recursion.
fn push_compact(out: &mut String, value: &Value) {
    compact_pieces(value, |piece| match piece {
        Piece::Text(text) => out.push_str(text),
        Piece::Key(key) => push_scalar(out, &Value::String(key.to_owned())),
        Piece::Scalar(scalar) => push_scalar(out, scalar),
    });
}

/// One piece of a value's compact JSON text.
pub(crate) enum Piece<'a> {
    /// Punctuation: a bracket, a brace, a comma or a colon.
    Text(&'static str),
    /// An object key, written as a JSON string.
    Key(&'a str),
    /// A value that is not an array or an object.
    Scalar(&'a Value),
}

/// Hands `emit` the pieces of `value`'s compact JSON text (as `serde_json::to_string` writes
/// it) in order, walking with an explicit work stack: any depth costs no stack.
pub(crate) fn compact_pieces<'a>(value: &'a Value, emit: impl FnMut(Piece<'a>)) {
    walk_pieces(value, false, emit)
}

/// [`compact_pieces`], with each object's keys in code-point order when `sorted`.
fn walk_pieces<'a>(value: &'a Value, sorted: bool, mut emit: impl FnMut(Piece<'a>)) {
    enum Step<'a> {
        Value(&'a Value),
        Key(&'a str),
        Text(&'static str),
    }
    let mut stack = vec![Step::Value(value)];
    while let Some(step) = stack.pop() {
        match step {
            Step::Text(text) => emit(Piece::Text(text)),
            Step::Key(key) => {
                emit(Piece::Key(key));
                emit(Piece::Text(":"));
            }
            Step::Value(Value::Array(items)) => {
                emit(Piece::Text("["));
                stack.push(Step::Text("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(Value::Object(map)) => {
                emit(Piece::Text("{"));
                stack.push(Step::Text("}"));
                let mut entries: Vec<_> = map.iter().collect();
                if sorted {
                    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                }
                for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                    stack.push(Step::Value(item));
                    stack.push(Step::Key(key));
                    if i > 0 {
                        stack.push(Step::Text(","));
                    }
                }
            }
            Step::Value(scalar) => emit(Piece::Scalar(scalar)),
        }
    }
}

/// Appends a scalar as serde_json writes it.
fn push_scalar(out: &mut String, value: &Value) {
    if let Ok(text) = serde_json::to_string(value) {
        out.push_str(&text);
    }
}

/// Containers under construction, shared by the whole parse: items and entries are pushed here
/// instead of into a vector on each level's stack frame, so an error leaves them to
/// [`Scratch::clear`] rather than to a recursive drop.
#[derive(Default)]
struct Scratch {
    items: Vec<Value>,
    entries: Vec<(String, Value)>,
}

impl Scratch {
    fn clear(&mut self) {
        for value in self.items.drain(..) {
            drop_value(value);
        }
        for (_, value) in self.entries.drain(..) {
            drop_value(value);
        }
    }
}

struct ValueSeed<'s> {
    scratch: &'s mut Scratch,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        // As serde_json's own reader: a number without a finite f64 reads as null.
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let scratch = self.scratch;
        let start = scratch.items.len();
        while let Some(item) = seq.next_element_seed(ValueSeed {
            scratch: &mut *scratch,
        })? {
            scratch.items.push(item);
        }
        Ok(Value::Array(scratch.items.drain(start..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let scratch = self.scratch;
        let start = scratch.entries.len();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(ValueSeed {
                scratch: &mut *scratch,
            })?;
            scratch.entries.push((key, value));
        }
        let mut object = Map::with_capacity(scratch.entries.len() - start);
        for (key, value) in scratch.entries.drain(start..) {
            // A repeated key keeps its first position and takes the last value, as in
            // serde_json; the value it replaces may be deep.
            if let Some(replaced) = object.insert(key, value) {
                drop_value(replaced);
            }
        }
        Ok(Value::Object(object))
    }
}

/// Drops `value`: a shallow one (at most two container levels, checked without allocating)
/// as usual, a deeper one with [`drop_value`]. For paths that drop many small values.
pub fn discard(value: Value) {
    if !shallow(&value) {
        drop_value(value);
    }
}

/// Whether `value` is at most two container levels deep, so that dropping or cloning it
/// recursively is harmless.
fn shallow(value: &Value) -> bool {
    fn is_container(v: &Value) -> bool {
        match v {
            Value::Array(a) => !a.is_empty(),
            Value::Object(m) => !m.is_empty(),
            _ => false,
        }
    }
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
    if shallow(value) {
        return value.clone();
    }
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
    use super::{deeper_than, depth, from_str, to_canonical_string, to_string_pretty};
    use serde_json::{Value, json};

    #[test]
    fn canonical_text_orders_keys_at_every_level_and_is_one_text_for_one_value() {
        let a = from_str(r#"{"b": [{"z": 1, "a": "x"}], "a": {"d": null, "c": 1.5}}"#).unwrap();
        let b = from_str(r#"{"a": {"c": 1.5, "d": null}, "b": [{"a": "x", "z": 1}]}"#).unwrap();
        let text = to_canonical_string(&a);
        assert_eq!(text, r#"{"a":{"c":1.5,"d":null},"b":[{"a":"x","z":1}]}"#);
        assert_eq!(text, to_canonical_string(&b));
        // Array order is the value's own; any depth is written without recursion.
        assert_ne!(
            to_canonical_string(&json!([1, 2])),
            to_canonical_string(&json!([2, 1]))
        );
        let mut deep = json!({"y": 1, "x": 2});
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        let text = to_canonical_string(&deep);
        assert!(text.ends_with(&format!("{{\"x\":2,\"y\":1}}{}", "]".repeat(100_000))));
        super::discard(deep);
    }

    #[test]
    fn pretty_text_is_serde_jsons() {
        let values = [
            json!(null),
            json!(1.5),
            json!("a\n\"\u{1}é"),
            json!([]),
            json!({}),
            json!([1, [], {}, [2, [3]], {"a": {"b": [true, null]}}]),
            json!({"x": [], "y": {}, "z": [{"k": "v"}], "\u{2028}": -0.0}),
        ];
        for value in &values {
            assert_eq!(
                to_string_pretty(value),
                serde_json::to_string_pretty(value).unwrap()
            );
        }
        // Past the indented levels, containers are compact.
        let mut deep = json!({"a": [1, {"b": 2}]});
        for _ in 0..super::PRETTY_LEVELS {
            deep = json!([deep]);
        }
        let text = to_string_pretty(&deep);
        assert!(
            text.contains(&format!(
                "{}{{\"a\":[1,{{\"b\":2}}]}}\n",
                "  ".repeat(super::PRETTY_LEVELS)
            )),
            "{text}"
        );
        assert_eq!(from_str(&text).unwrap(), deep);
    }

    #[test]
    fn text_is_read_as_serde_json_reads_it() {
        for text in [
            "{\"a\": 1, \"b\": [1.5, -2, 1e400, \"x\"], \"a\": {\"c\": null}}",
            "[18446744073709551615, -9223372036854775808, 0.1]",
            "[1,]",
            "{\"a\" 1}",
            "\"\\ud800\"",
            "[] x",
            "",
        ] {
            let ours = from_str(text);
            let theirs = serde_json::from_str::<Value>(text);
            match (ours, theirs) {
                (Ok(a), Ok(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{text}"),
                (a, b) => panic!("{text}: {a:?} but {b:?}"),
            }
        }
    }

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

#[cfg(test)]
mod capped_tests {
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
            assert_eq!(to_string(&v), v.to_string());
        }
    }

    #[test]
    fn pretty_json_matches_serde_json_within_the_cap_and_goes_compact_past_it() {
        let v = json!({"a": [1, {"b": []}], "c": {}, "d": "x"});
        assert_eq!(
            to_string_pretty_levels(&v, 5),
            serde_json::to_string_pretty(&v).unwrap()
        );
        // Members of the level-5 container would sit at 12 characters: it is compact.
        let deep = json!({"1": {"2": {"3": {"4": {"5": {"6": [1, 2]}}}}}});
        let text = to_string_pretty_levels(&deep, 5);
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
        let text = to_string_pretty_levels(&huge, 5);
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
