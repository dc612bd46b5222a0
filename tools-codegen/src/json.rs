//! The JSON trees the renderers read schemas from.
//!
//! A [`Catalog`](tools_schema::Catalog) holds `serde_json::Value`s. Parsing a large catalog into
//! `Value`s costs more than rendering it: every object is a hash map and every key and string
//! its own allocation. [`Node`] is the lean tree the CLI reads catalog text into instead (with
//! [`parse`], a `serde_json` visitor):
//! strings borrow from the text where they have no escapes, objects are vectors of entries in
//! source order. The lowering reads either tree through the [`Json`] trait, so both give the
//! same types and the same output.
//!
//! A [`Node`] object keeps what a `Value` object (with `serde_json`'s `preserve_order`) keeps
//! when a key repeats: the key at its first position, with the last value.

use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// One node of a JSON tree, seen without its children.
#[derive(Debug, Clone, Copy)]
pub(crate) enum View<'a, J> {
    Null,
    Bool(bool),
    Number(&'a Number),
    String(&'a str),
    Array(&'a [J]),
    /// An object: read it with [`Json::entries`].
    Object,
}

/// A JSON tree the lowering can read: `serde_json::Value` or [`Node`].
pub(crate) trait Json: Serialize + Sized {
    /// What this node is.
    fn view(&self) -> View<'_, Self>;
    /// An object's entries in order, each key once; nothing for other nodes.
    fn entries(&self) -> impl Iterator<Item = (&str, &Self)>;

    /// Pretty-printed JSON text (two-space indent), written without overflowing the stack.
    fn pretty(&self) -> String;

    /// The string, when this is a string.
    fn as_str(&self) -> Option<&str> {
        match self.view() {
            View::String(s) => Some(s),
            _ => None,
        }
    }
}

impl Json for Value {
    /// A `Value` comes from a [`Catalog`](tools_schema::Catalog), which holds schemas of any
    /// depth: written by the stack-safe writer.
    fn pretty(&self) -> String {
        tools_schema::deep::to_string_pretty(self)
    }

    fn view(&self) -> View<'_, Self> {
        match self {
            Value::Null => View::Null,
            Value::Bool(b) => View::Bool(*b),
            Value::Number(n) => View::Number(n),
            Value::String(s) => View::String(s),
            Value::Array(items) => View::Array(items),
            Value::Object(_) => View::Object,
        }
    }

    fn entries(&self) -> impl Iterator<Item = (&str, &Self)> {
        self.as_object()
            .into_iter()
            .flat_map(|map| map.iter().map(|(k, v)| (k.as_str(), v)))
    }
}

/// A JSON value whose strings borrow from the text it was parsed from where they can.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    /// Entries in source order, each key once.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl Json for Node<'_> {
    /// A `Node` comes from [`parse`], which reads at most 128 nested levels, so serde_json's
    /// recursive writer stays shallow.
    fn pretty(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    fn view(&self) -> View<'_, Self> {
        match self {
            Node::Null => View::Null,
            Node::Bool(b) => View::Bool(*b),
            Node::Number(n) => View::Number(n),
            Node::String(s) => View::String(s),
            Node::Array(items) => View::Array(items),
            Node::Object(_) => View::Object,
        }
    }

    fn entries(&self) -> impl Iterator<Item = (&str, &Self)> {
        let entries: &[_] = match self {
            Node::Object(entries) => entries,
            _ => &[],
        };
        entries.iter().map(|(k, v)| (k.as_ref(), v))
    }
}

impl Node<'_> {
    /// Whether this node can be a schema: an object or a boolean.
    pub(crate) fn is_schema(&self) -> bool {
        matches!(self, Node::Object(_) | Node::Bool(_))
    }
}

/// Parses JSON text into a [`Node`] with `serde_json`; `None` when `serde_json` rejects it (a
/// caller then hands the text to `serde_json::Value` parsing, which words the error). Nesting is
/// bounded by `serde_json`'s recursion limit (128 levels), so deep text cannot overflow the stack.
pub(crate) fn parse(text: &str) -> Option<Node<'_>> {
    serde_json::from_str(text).ok()
}

/// Reads a node from JSON text. The recursion is bounded by the parser's own nesting limit
/// (128 levels), so deep text fails with a parse error instead of overflowing the stack.
impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut scratch = Scratch::default();
        deserializer.deserialize_any(NodeVisitor {
            scratch: &mut scratch,
        })
    }
}

/// Work space shared by the whole parse: the entries and items of the containers being read
/// are pushed here, and each finished container is copied out into a vector of exactly its
/// size, one allocation per container instead of a growing vector each.
#[derive(Default)]
struct Scratch<'de> {
    entries: Vec<(Cow<'de, str>, Node<'de>)>,
    items: Vec<Node<'de>>,
}

struct NodeVisitor<'s, 'de> {
    scratch: &'s mut Scratch<'de>,
}

impl<'de> DeserializeSeed<'de> for NodeVisitor<'_, 'de> {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeVisitor<'_, 'de> {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Node<'de>, E> {
        // As serde_json's `Value` does: a number without a finite f64 reads as null.
        Ok(Number::from_f64(value).map_or(Node::Null, Node::Number))
    }

    fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(value)))
    }

    fn visit_str<E>(self, value: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(value.to_owned())))
    }

    fn visit_string<E>(self, value: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(value)))
    }

    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let scratch = self.scratch;
        let start = scratch.items.len();
        while let Some(item) = seq.next_element_seed(NodeVisitor {
            scratch: &mut *scratch,
        })? {
            scratch.items.push(item);
        }
        Ok(Node::Array(scratch.items.drain(start..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        /// Objects up to this size find a repeated key by a linear scan; larger ones index
        /// their keys in a hash map.
        const SCAN: usize = 16;
        let scratch = self.scratch;
        let start = scratch.entries.len();
        let mut index: Option<HashMap<Box<str>, usize>> = None;
        while let Some(Key(key)) = map.next_key()? {
            let value = map.next_value_seed(NodeVisitor {
                scratch: &mut *scratch,
            })?;
            let entries = &mut scratch.entries[start..];
            let found = match &index {
                Some(index) => index.get(key.as_ref()).copied(),
                None => entries.iter().position(|(k, _)| *k == key),
            };
            match found.and_then(|at| entries.get_mut(at)) {
                // A repeated key keeps its first position and takes the last value.
                Some(entry) => entry.1 = value,
                None => {
                    let len = entries.len();
                    if let Some(index) = &mut index {
                        index.insert(key.as_ref().into(), len);
                    }
                    scratch.entries.push((key, value));
                    if index.is_none() && len + 1 > SCAN {
                        index = Some(
                            scratch.entries[start..]
                                .iter()
                                .enumerate()
                                .map(|(i, (k, _))| (k.as_ref().into(), i))
                                .collect(),
                        );
                    }
                }
            }
        }
        Ok(Node::Object(scratch.entries.drain(start..).collect()))
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }

            fn visit_borrowed_str<E>(self, value: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(value)))
            }

            fn visit_str<E>(self, value: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(value.to_owned())))
            }

            fn visit_string<E>(self, value: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(value)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Writes a node as JSON, exactly as the same `Value` would be written.
impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Null => serializer.serialize_unit(),
            Node::Bool(b) => serializer.serialize_bool(*b),
            Node::Number(n) => n.serialize(serializer),
            Node::String(s) => serializer.serialize_str(s),
            Node::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key.as_ref(), value)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    /// Checks the parser's contract on `text`: what it accepts, serde_json reads to the same
    /// value; what serde_json reads (within the nesting bound), it accepts.
    fn agrees(text: &str) -> Result<(), String> {
        let ours = parse(text);
        let theirs = serde_json::from_str::<Value>(text);
        match (&ours, &theirs) {
            (Some(node), Ok(value)) => {
                let a = serde_json::to_string(node).map_err(|e| e.to_string())?;
                let b = serde_json::to_string(value).map_err(|e| e.to_string())?;
                if a != b {
                    return Err(format!("{text:?}: read as {a} but serde_json reads {b}"));
                }
            }
            (Some(node), Err(e)) => {
                return Err(format!(
                    "{text:?}: accepted as {node:?}, serde_json says {e}"
                ));
            }
            (None, Ok(_)) => return Err(format!("{text:?}: rejected, serde_json reads it")),
            (None, Err(_)) => {}
        }
        Ok(())
    }

    #[test]
    fn agrees_with_serde_json_on_edge_cases() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let cases = [
            "",
            " ",
            "null",
            " true ",
            "false",
            "nul",
            "truex",
            "[]",
            "{}",
            "[1,]",
            "{\"a\":1,}",
            "[1 2]",
            "{\"a\" 1}",
            "{a:1}",
            "{\"a\":1 \"b\":2}",
            "0",
            "-0",
            "01",
            "-01",
            "1.",
            ".5",
            "1.5e",
            "1e+",
            "1E-7",
            "-1.5e300",
            "1e400",
            "-",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678",
            "1234567890123456789",
            "0.1",
            "2.5e-324",
            "\"a\\u00e9\\n\"",
            "\"\\ud800\"",
            "\"\\ud83d\\ude00\"",
            "\"\\x\"",
            "\"a\u{1}\"",
            "\"\\\"\"",
            "\"\\\\\"",
            "\"unterminated",
            "\"\\",
            "\u{feff}[]",
            "[] []",
            "[]\n",
            "{\"a\":{\"a\":[1,{}]},\"a\":2}",
            "/*c*/1",
            "[\"\u{2028}\"]",
            "\"\t\"",
            "[1,\n2]\r\n",
            "\u{a0}1",
        ];
        for case in cases {
            agrees(case).unwrap();
        }
        for n in [126, 127, 128, 129, 200] {
            agrees(&deep(n)).unwrap();
            agrees(&format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n))).unwrap();
        }
    }

    fn text_value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|f| Value::from(f).to_string()),
            "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?",
            "\"([a-z\u{e9}\u{2028} ]|\\\\[\"\\\\/bfnrt]|\\\\u[0-9a-fA-F]{4})*\"",
        ];
        leaf.prop_recursive(5, 40, 5, |inner| {
            let ws = "[ \t\r\n]{0,2}";
            prop_oneof![
                prop::collection::vec((ws, inner.clone()), 0..5).prop_map(|items| {
                    let items: Vec<String> = items.into_iter().map(|(w, v)| w + &v).collect();
                    format!("[{}]", items.join(","))
                }),
                prop::collection::vec(("[a-c]{1,2}", ws, inner), 0..6).prop_map(|entries| {
                    let entries: Vec<String> = entries
                        .into_iter()
                        .map(|(k, w, v)| format!("\"{k}\"{w}:{w}{v}"))
                        .collect();
                    format!("{{{}}}", entries.join(","))
                }),
            ]
        })
    }

    /// Generated JSON, and the same text with one character inserted or removed.
    #[test]
    fn agrees_with_serde_json_on_generated_and_mutated_text() {
        let mut runner = TestRunner::new(Config {
            cases: 2000,
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (
            text_value(),
            any::<prop::sample::Index>(),
            prop::sample::select(
                &["", ",", "]", "}", "\"", ":", "\\", "0", "-", ".", "e", " "][..],
            ),
            any::<bool>(),
        );
        runner
            .run(&strategy, |(text, at, insert, remove)| {
                agrees(&text).map_err(TestCaseError::fail)?;
                let mut chars: Vec<char> = text.chars().collect();
                let at = at.index(chars.len() + 1);
                if remove && at < chars.len() {
                    chars.remove(at);
                }
                let mut mutated: String = chars[..at.min(chars.len())].iter().collect();
                mutated.push_str(insert);
                mutated.extend(chars[at.min(chars.len())..].iter());
                agrees(&mutated).map_err(TestCaseError::fail)?;
                Ok(())
            })
            .unwrap();
    }

    /// Text nested 100,000 levels deep is rejected at the nesting bound within the stack of an
    /// ordinary spawned thread (2 MiB), unoptimised build included.
    #[test]
    fn deep_text_is_rejected_in_bounded_stack() {
        let result = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(|| {
                let n = 100_000;
                let arrays = format!("{}{}", "[".repeat(n), "]".repeat(n));
                let objects = format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n));
                (parse(&arrays).is_none(), parse(&objects).is_none())
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(result, (true, true));
    }

    #[test]
    fn repeated_keys_keep_the_first_position_and_the_last_value() {
        let text = r#"{"a": 1, "b": 2, "a": 3}"#;
        agrees(text).unwrap();
        // Past the linear-scan size, through the key index.
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{}\": {i},", i % 25));
        }
        text.push_str("\"k3\": \"last\"}");
        agrees(&text).unwrap();
    }

    #[test]
    fn plain_strings_borrow_and_escaped_ones_are_decoded() {
        let text = r#"{"plain": "x", "esc\"aped": "a\nb", "n": [1, -2, 1.5, 1e300, null, true]}"#;
        let Some(Node::Object(entries)) = parse(text) else {
            panic!("not an object");
        };
        assert!(matches!(entries[0].0, Cow::Borrowed("plain")));
        assert!(matches!(&entries[1].0, Cow::Owned(k) if k == "esc\"aped"));
        agrees(text).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        let node = parse(text).unwrap();
        assert_eq!(
            serde_json::to_string_pretty(&node).unwrap(),
            serde_json::to_string_pretty(&value).unwrap()
        );
    }
}
