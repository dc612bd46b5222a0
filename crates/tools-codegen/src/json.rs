//! The JSON trees the renderers read schemas from.
//!
//! A [`Catalog`](tools_schema::Catalog) holds `serde_json::Value`s. Parsing a large catalog into
//! `Value`s costs more than rendering it: every object is a hash map and every key and string
//! its own allocation. [`Node`] is the lean tree the CLI reads catalog text into instead (with
//! [`parse`], a single-pass reader that accepts only what `serde_json` reads to the same value):
//! strings borrow from the text where they have no escapes, objects are vectors of entries in
//! source order. The lowering reads either tree through the [`Json`] trait, so both give the
//! same types and the same output.
//!
//! A [`Node`] object keeps what a `Value` object (with `serde_json`'s `preserve_order`) keeps
//! when a key repeats: the key at its first position, with the last value.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::collections::HashMap;

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

    /// The string, when this is a string.
    fn as_str(&self) -> Option<&str> {
        match self.view() {
            View::String(s) => Some(s),
            _ => None,
        }
    }
}

impl Json for Value {
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

/// How deep containers may nest: as in `serde_json`, whose parser fails on the 128th level.
const MAX_NESTING: usize = 127;

/// Objects up to this size find a repeated key by a linear scan; larger ones index their keys
/// in a hash map.
const SCAN: usize = 16;

/// Parses JSON text into a [`Node`]; `None` when the text is not JSON that `serde_json` reads to
/// the same value.
///
/// The contract is one-sided: whatever this accepts, `serde_json::from_str::<Value>` accepts
/// too and reads to the same value (the tests check it on generated and mutated text); text it
/// rejects, a caller hands to `serde_json`, which decides and words the error. It is strict
/// RFC 8259 JSON like `serde_json`: no comments, no trailing commas, no control characters in
/// strings, nothing after the value but whitespace, at most [`MAX_NESTING`] levels. Numbers and
/// strings with escapes are decoded by `serde_json` itself, so their values agree exactly; the
/// rest (structure, plain strings, which borrow from the text) is read here in one pass.
///
/// Recursion is bounded by [`MAX_NESTING`], so deep text cannot overflow the stack.
pub(crate) fn parse(text: &str) -> Option<Node<'_>> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        entries: Vec::new(),
        items: Vec::new(),
    };
    parser.skip_whitespace();
    let node = parser.value(0)?;
    parser.skip_whitespace();
    (parser.pos == parser.bytes.len()).then_some(node)
}

/// A mask whose lowest set bit marks the first byte of `word` (little-endian) that is `"`, `\\`
/// or below 0x20, the bytes that end a plain run of a JSON string; zero when there is none.
/// (The usual SWAR tests: each may also flag bytes after a true hit, never before one.)
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    quote | backslash | control
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Work space shared by the whole parse: the entries and items of the containers being
    /// read are pushed here, and each finished container is copied out into a vector of
    /// exactly its size, one allocation per container instead of a growing vector each.
    entries: Vec<(Cow<'a, str>, Node<'a>)>,
    items: Vec<Node<'a>>,
}

impl<'a> Parser<'a> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// Consumes `byte` after optional whitespace.
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        if self.bytes.get(self.pos) == Some(&byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A value starting at the current position (no whitespace before it); `depth` is the
    /// number of containers around it.
    fn value(&mut self, depth: usize) -> Option<Node<'a>> {
        match *self.bytes.get(self.pos)? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(Node::String),
            b't' => self.word(b"true", Node::Bool(true)),
            b'f' => self.word(b"false", Node::Bool(false)),
            b'n' => self.word(b"null", Node::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn word(&mut self, word: &[u8], node: Node<'a>) -> Option<Node<'a>> {
        let end = self.pos + word.len();
        (self.bytes.get(self.pos..end)? == word).then(|| {
            self.pos = end;
            node
        })
    }

    fn number(&mut self) -> Option<Node<'a>> {
        let start = self.pos;
        let digits = |bytes: &[u8], mut at: usize| {
            let from = at;
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            (at > from).then_some(at)
        };
        let negative = self.bytes.get(start) == Some(&b'-');
        let int_start = start + usize::from(negative);
        let mut at = digits(self.bytes, int_start)?;
        if self.bytes[int_start] == b'0' && at > int_start + 1 {
            return None; // a leading zero
        }
        let integer_end = at;
        if self.bytes.get(at) == Some(&b'.') {
            at = digits(self.bytes, at + 1)?;
        }
        if let Some(b'e' | b'E') = self.bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(at) {
                at += 1;
            }
            at = digits(self.bytes, at)?;
        }
        self.pos = at;
        let text = &self.text[start..at];
        // Short integers as serde_json reads them (non-negative: u64, negative: i64); every
        // other number (fractions, exponents, -0, long integers) is decoded by serde_json.
        let short = at == integer_end && at - int_start <= 18;
        if short && !negative {
            return text.parse::<u64>().ok().map(|n| Node::Number(n.into()));
        }
        if short && self.bytes[int_start] != b'0' {
            return text.parse::<i64>().ok().map(|n| Node::Number(n.into()));
        }
        serde_json::from_str::<Number>(text).ok().map(Node::Number)
    }

    /// A string starting at the opening quote.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos + 1;
        let mut at = start;
        // Jump to the first quote, backslash or control character, eight bytes at a time.
        loop {
            match self.bytes.get(at..at + 8) {
                Some(chunk) => {
                    let mut word = [0u8; 8];
                    word.copy_from_slice(chunk);
                    let mask = special_bytes(u64::from_le_bytes(word));
                    if mask == 0 {
                        at += 8;
                        continue;
                    }
                    at += (mask.trailing_zeros() / 8) as usize;
                }
                None => {
                    while self
                        .bytes
                        .get(at)
                        .is_some_and(|&b| b != b'"' && b != b'\\' && b >= 0x20)
                    {
                        at += 1;
                    }
                }
            }
            match *self.bytes.get(at)? {
                b'"' => {
                    self.pos = at + 1;
                    return Some(Cow::Borrowed(&self.text[start..at]));
                }
                b'\\' => break,
                _ => return None,
            }
        }
        // Escapes: find the closing quote, then let serde_json decode the literal.
        while let Some(&byte) = self.bytes.get(at) {
            match byte {
                b'"' => {
                    let decoded: String = serde_json::from_str(&self.text[start - 1..=at]).ok()?;
                    self.pos = at + 1;
                    return Some(Cow::Owned(decoded));
                }
                b'\\' => at += 2,
                0..=0x1f => return None,
                _ => at += 1,
            }
        }
        None
    }

    fn array(&mut self, depth: usize) -> Option<Node<'a>> {
        if depth > MAX_NESTING {
            return None;
        }
        self.pos += 1;
        if self.eat(b']') {
            return Some(Node::Array(Vec::new()));
        }
        let start = self.items.len();
        loop {
            self.skip_whitespace();
            let item = self.value(depth)?;
            self.items.push(item);
            if self.eat(b']') {
                break;
            }
            if !self.eat(b',') {
                return None;
            }
        }
        Some(Node::Array(self.items.split_off(start)))
    }

    fn object(&mut self, depth: usize) -> Option<Node<'a>> {
        if depth > MAX_NESTING {
            return None;
        }
        self.pos += 1;
        if self.eat(b'}') {
            return Some(Node::Object(Vec::new()));
        }
        let start = self.entries.len();
        let mut index: Option<HashMap<Box<str>, usize>> = None;
        loop {
            self.skip_whitespace();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return None;
            }
            let key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            self.skip_whitespace();
            let value = self.value(depth)?;
            let entries = &mut self.entries[start..];
            let found = match &index {
                Some(index) => index.get(key.as_ref()).copied(),
                None => entries.iter().position(|(k, _)| *k == key),
            };
            match found.and_then(|at| entries.get_mut(at)) {
                // A repeated key keeps its first position and takes the last value, as in a
                // `Value` object.
                Some(entry) => entry.1 = value,
                None => {
                    let len = entries.len();
                    if let Some(index) = &mut index {
                        index.insert(key.as_ref().into(), len);
                    }
                    self.entries.push((key, value));
                    if index.is_none() && len + 1 > SCAN {
                        index = Some(
                            self.entries[start..]
                                .iter()
                                .enumerate()
                                .map(|(i, (k, _))| (k.as_ref().into(), i))
                                .collect(),
                        );
                    }
                }
            }
            if self.eat(b'}') {
                break;
            }
            if !self.eat(b',') {
                return None;
            }
        }
        Some(Node::Object(self.entries.split_off(start)))
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

    #[test]
    fn special_bytes_are_found_in_any_lane() {
        for lane in 0..8 {
            for (byte, special) in [(b'"', true), (b'\\', true), (0x1f, true), (0, true)]
                .into_iter()
                .chain([
                    (b' ', false),
                    (b'a', false),
                    (0x7f, false),
                    (0x80, false),
                    (0xff, false),
                ])
            {
                let mut word = [b'x'; 8];
                word[lane] = byte;
                // A later special byte never hides the first one.
                if lane < 7 {
                    word[7] = b'"';
                }
                let mask = special_bytes(u64::from_le_bytes(word));
                let first = (mask.trailing_zeros() / 8) as usize;
                let expected = if special {
                    lane
                } else if lane < 7 {
                    7
                } else {
                    8
                };
                assert_eq!(first, expected, "{byte} in lane {lane}");
            }
        }
        for text in [
            "[\"0123456789abcdef\\n0123456789\\\"\", \"\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\"]",
            "\"0123456\"",
            "\"01234567\"",
            "\"012345678\"",
            "\"0123456\u{1}\"",
            "[\"abc\", \"abcdefghijklmnopq\\u0041\"]",
        ] {
            agrees(text).unwrap();
        }
    }

    /// Text nested 100,000 levels deep is rejected at the nesting bound, in a small stack.
    #[test]
    fn deep_text_is_rejected_in_bounded_stack() {
        let result = std::thread::Builder::new()
            .stack_size(256 * 1024)
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
