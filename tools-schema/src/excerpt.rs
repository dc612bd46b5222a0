//! Bounded quotes of user-controlled text in messages.
//!
//! Error messages and warnings quote what they are about: a tool name, a property name, a
//! value, a pattern. All of those can come from outside (a model, an MCP server, a catalog
//! file) and can be of any size, and a message that repeats a 10 MB name is a 10 MB message.
//! Every crate of the toolkit quotes such text through [`cut`], which keeps at most [`LIMIT`]
//! characters and says how much it left out:
//!
//! ```
//! use tools_schema::excerpt::{self, LIMIT};
//!
//! assert_eq!(excerpt::cut("read_file"), "read_file");
//! let long = "x".repeat(LIMIT + 500);
//! assert_eq!(
//!     excerpt::cut(&long),
//!     format!("{}… (500 more bytes)", "x".repeat(LIMIT))
//! );
//! ```
//!
//! [`quoted`] is the same cut for text shown as a JSON string literal (the quotes close after the
//! kept part, the marker follows them), and [`json`] for a whole JSON value, written compactly
//! without recursion.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use crate::deep::{self, Piece};

/// How many characters of a quoted text a message keeps; the rest is replaced by a marker.
pub const LIMIT: usize = 200;

/// Where to cut `text`: the byte length of its first [`LIMIT`] characters, or `None` when it is
/// no longer than that.
fn cut_point(text: &str) -> Option<usize> {
    // At most 4 bytes a character: anything up to LIMIT bytes is short enough.
    if text.len() <= LIMIT {
        return None;
    }
    text.char_indices().nth(LIMIT).map(|(at, _)| at)
}

fn marker(rest: usize) -> String {
    format!(
        "… ({rest} more {})",
        if rest == 1 { "byte" } else { "bytes" }
    )
}

/// `text` itself when it has at most [`LIMIT`] characters; otherwise its first `LIMIT`
/// characters followed by `… (N more bytes)`, where `N` is the length in bytes of what was cut.
/// The cut falls on a character boundary.
pub fn cut(text: &str) -> Cow<'_, str> {
    match cut_point(text) {
        None => Cow::Borrowed(text),
        Some(at) => {
            let mut out = String::with_capacity(at + 32);
            out.push_str(&text[..at]);
            out.push_str(&marker(text.len() - at));
            Cow::Owned(out)
        }
    }
}

/// `text` as a JSON string literal, cut as [`cut`] does: `"abc"` for short text, and
/// `"<first LIMIT characters>"… (N more bytes)` for long text.
pub fn quoted(text: &str) -> String {
    match cut_point(text) {
        None => Value::String(text.to_owned()).to_string(),
        Some(at) => {
            let mut out = Value::String(text[..at].to_owned()).to_string();
            out.push_str(&marker(text.len() - at));
            out
        }
    }
}

/// A JSON value as compact JSON text, cut as [`cut`] does (the byte count is that of the whole
/// compact text). Written with an explicit work stack: values of any depth and size cost time
/// linear in their size and no stack.
pub fn json(value: &Value) -> String {
    // Enough text to cut at LIMIT characters; past it only the length is counted.
    let cap = LIMIT * 4 + 4;
    let mut out = String::new();
    let mut total = 0usize;
    let push = |out: &mut String, total: &mut usize, piece: &str| {
        *total += piece.len();
        if out.len() < cap {
            out.push_str(piece);
        }
    };
    deep::compact_pieces(value, |piece| match piece {
        Piece::Text(text) => push(&mut out, &mut total, text),
        Piece::Key(key) => push(
            &mut out,
            &mut total,
            &Value::String(key.to_owned()).to_string(),
        ),
        Piece::Scalar(Value::String(s)) => {
            // Only the part that can still be shown is escaped; the rest is counted.
            total += escaped_len(s);
            if out.len() < cap {
                let shown = match s.char_indices().nth(LIMIT) {
                    Some((at, _)) => &s[..at],
                    None => s,
                };
                out.push_str(&Value::String(shown.to_owned()).to_string());
            }
        }
        Piece::Scalar(scalar) => {
            let mut text = String::new();
            let _ = write!(text, "{scalar}");
            push(&mut out, &mut total, &text);
        }
    });
    match cut_point(&out) {
        None if total == out.len() => out,
        None => {
            let rest = total - out.len();
            out.push_str(&marker(rest));
            out
        }
        Some(at) => {
            let rest = total - at;
            out.truncate(at);
            out.push_str(&marker(rest));
            out
        }
    }
}

/// The length of `s` as a JSON string literal, as `serde_json` writes it.
fn escaped_len(s: &str) -> usize {
    2 + s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_text_is_kept_whole() {
        assert!(matches!(cut("abc"), Cow::Borrowed("abc")));
        let exact = "é".repeat(LIMIT);
        assert_eq!(cut(&exact), exact.as_str());
        assert_eq!(quoted("a\"b"), "\"a\\\"b\"");
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        let text = format!("{}{}", "é".repeat(LIMIT), "日本");
        assert_eq!(cut(&text), format!("{}… (6 more bytes)", "é".repeat(LIMIT)));
        let one = format!("{}x", "a".repeat(LIMIT));
        assert_eq!(cut(&one), format!("{}… (1 more byte)", "a".repeat(LIMIT)));
        assert_eq!(
            quoted(&one),
            format!("\"{}\"… (1 more byte)", "a".repeat(LIMIT))
        );
    }

    #[test]
    fn values_are_cut_and_counted_whole() {
        assert_eq!(
            json(&json!({"a": [1, "x\n", null]})),
            r#"{"a":[1,"x\n",null]}"#
        );
        let big = json!({"k": "v".repeat(10_000), "n": [1, 2, 3]});
        let full = big.to_string();
        let shown = json(&big);
        assert_eq!(
            shown,
            format!("{}… ({} more bytes)", &full[..LIMIT], full.len() - LIMIT)
        );
        let escapes = "\"\\\n\u{1}\u{8}é";
        assert_eq!(escaped_len(escapes), Value::from(escapes).to_string().len());
        // Deep values are written without recursion.
        let mut deep = json!(0);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert!(json(&deep).ends_with("… (199801 more bytes)"));
        crate::deep::drop_value(deep);
    }
}
