//! Text helpers shared by the renderers: identifier rules, reserved words, string literals and
//! comment escaping.
//!
//! Every function here is total: any input text yields output that cannot end the comment or
//! string it is placed in, and cannot inject code.

use std::borrow::Cow;

/// True when `s` is a plain ASCII identifier: `[A-Za-z_$][A-Za-z0-9_$]*` when `dollar` is set
/// (JavaScript), `[A-Za-z_][A-Za-z0-9_]*` otherwise (Python).
///
/// Identifiers are restricted to ASCII on purpose: Unicode identifiers are legal in both
/// languages but Python normalises them (NFKC), so two distinct wire names could become one
/// attribute.
pub(crate) fn is_ascii_identifier(s: &str, dollar: bool) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let head_ok = first.is_ascii_alphabetic() || first == '_' || (dollar && first == '$');
    head_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (dollar && c == '$'))
}

/// A function that tells whether a string is one of a list of words (a `match`, which compiles
/// to a dispatch on length and bytes), and the list as a constant for the tests.
macro_rules! word_list {
    ($(#[$doc:meta])* $list:ident, $test:ident, [$($word:literal),* $(,)?]) => {
        #[cfg(test)]
        const $list: &[&str] = &[$($word),*];

        $(#[$doc])*
        fn $test(name: &str) -> bool {
            matches!(name, $($word)|*)
        }
    };
}

word_list!(
/// TypeScript/JavaScript reserved words, contextual keywords and names with a meaning inside a
/// type literal (`new(...)` is a construct signature, `get`/`set` start accessors). Such names are
/// always written quoted, which is legal for every one of them.
TS_RESERVED, is_ts_reserved, [
    "abstract",
    "accessor",
    "any",
    "as",
    "asserts",
    "async",
    "await",
    "bigint",
    "boolean",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "constructor",
    "continue",
    "debugger",
    "declare",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "from",
    "function",
    "get",
    "global",
    "if",
    "implements",
    "import",
    "in",
    "infer",
    "instanceof",
    "interface",
    "is",
    "keyof",
    "let",
    "module",
    "namespace",
    "never",
    "new",
    "null",
    "number",
    "object",
    "of",
    "out",
    "override",
    "package",
    "private",
    "protected",
    "public",
    "readonly",
    "require",
    "return",
    "satisfies",
    "set",
    "static",
    "string",
    "super",
    "switch",
    "symbol",
    "this",
    "throw",
    "true",
    "try",
    "type",
    "typeof",
    "undefined",
    "unique",
    "unknown",
    "var",
    "void",
    "while",
    "with",
    "yield",
]);

word_list!(
/// Python hard keywords: never an attribute or a class-form `TypedDict` field.
PY_KEYWORDS, is_py_hard_keyword, [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
]);

/// True when `name` can be written bare as a TypeScript property or method name.
pub(crate) fn is_ts_bare_key(name: &str) -> bool {
    is_ascii_identifier(name, true) && !is_ts_reserved(name)
}

/// True when `name` is a Python hard keyword.
pub(crate) fn is_py_keyword(name: &str) -> bool {
    is_py_hard_keyword(name)
}

/// A TypeScript string literal (double-quoted JSON escaping, plus U+2028/U+2029 escaped).
pub(crate) fn ts_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || is_line_separator(c) => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Python string literal (double-quoted; control characters and line separators escaped).
pub(crate) fn py_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    push_py_escaped(&mut out, s, true);
    out.push('"');
    out
}

/// Appends `s` escaped for the inside of a double-quoted (or triple-double-quoted) Python string.
/// With `escape_newline` false, `\n` stays a real newline (for docstrings).
fn push_py_escaped(out: &mut String, s: &str, escape_newline: bool) {
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' if escape_newline => out.push_str("\\n"),
            '\n' => out.push('\n'),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_line_separator(c) || c == '\u{feff}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
}

/// Unicode characters that some tools treat as line breaks inside source text.
fn is_line_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}')
}

/// False when `text` certainly has no line break: every line break starts with one of these
/// bytes (U+0085 is C2 85, U+2028 and U+2029 are E2 80 A8/A9).
fn may_break_lines(text: &str) -> bool {
    text.bytes()
        .any(|b| matches!(b, b'\r' | b'\n' | 0xC2 | 0xE2))
}

/// Splits documentation text into lines on every kind of line break (`\r\n`, `\r`, `\n`, U+2028,
/// U+2029, U+0085), trims trailing whitespace, and drops leading and trailing blank lines.
pub(crate) fn doc_lines(text: &str) -> Vec<&str> {
    if !may_break_lines(text) {
        let line = text.trim_end();
        return if line.is_empty() {
            Vec::new()
        } else {
            vec![line]
        };
    }
    let mut lines = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(['\r', '\n', '\u{2028}', '\u{2029}', '\u{85}']) {
        lines.push(rest[..at].trim_end());
        let tail = &rest[at..];
        let skip = if tail.starts_with("\r\n") {
            2
        } else {
            tail.chars().next().map_or(1, char::len_utf8)
        };
        rest = &tail[skip..];
    }
    lines.push(rest.trim_end());
    let first = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let last = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(first, |i| i + 1);
    lines.truncate(last);
    lines.drain(..first);
    lines
}

/// Replaces control characters (other than tab) and a byte-order mark with a visible `\xNN` /
/// `\uNNNN` spelling so comments hold printable text only.
pub(crate) fn visible_controls(line: &str) -> Cow<'_, str> {
    // A control character is one byte below 0x20 or 0x7F; U+FEFF is EF BB BF.
    if !line
        .bytes()
        .any(|b| (b < 0x20 && b != b'\t') || b == 0x7f || b == 0xEF)
    {
        return Cow::Borrowed(line);
    }
    let hidden = |c: char| ((c as u32) < 0x20 && c != '\t') || c == '\u{7f}' || c == '\u{feff}';
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c == '\u{feff}' {
            out.push_str("\\ufeff");
        } else if hidden(c) {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A JSDoc block comment for `text`, each line prefixed by `indent`, ending in a newline; empty
/// when the text is blank. `*/` cannot occur in the result's body: it is written `*\/`.
pub(crate) fn ts_doc(text: &str, indent: &str) -> String {
    let mut out = String::new();
    push_ts_doc(&mut out, text, indent);
    out
}

/// Appends [`ts_doc`]`(text, indent)` to `out`.
pub(crate) fn push_ts_doc(out: &mut String, text: &str, indent: &str) {
    // One line (the usual case) is written without collecting the lines.
    let line;
    let lines: &[&str] = if may_break_lines(text) {
        &doc_lines(text)
    } else {
        line = [text.trim_end()];
        if line[0].is_empty() { &[] } else { &line }
    };
    let push_line = |out: &mut String, line: &str| {
        let line = visible_controls(line);
        if !line.contains('*') {
            out.push_str(&line);
            return;
        }
        let mut pieces = line.split("*/");
        out.push_str(pieces.next().unwrap_or_default());
        for piece in pieces {
            out.push_str("*\\/");
            out.push_str(piece);
        }
    };
    match lines {
        [] => {}
        [line] => {
            out.push_str(indent);
            out.push_str("/** ");
            push_line(out, line);
            out.push_str(" */\n");
        }
        lines => {
            out.push_str(indent);
            out.push_str("/**\n");
            for line in lines {
                out.push_str(indent);
                if line.is_empty() {
                    out.push_str(" *\n");
                } else {
                    out.push_str(" * ");
                    push_line(out, line);
                    out.push('\n');
                }
            }
            out.push_str(indent);
            out.push_str(" */\n");
        }
    }
}

/// Python `#` comment lines for `text`, each prefixed by `indent`, ending in a newline.
pub(crate) fn py_comment(text: &str, indent: &str) -> String {
    let mut out = String::new();
    for line in doc_lines(text) {
        if line.is_empty() {
            out.push_str(&format!("{indent}#\n"));
        } else {
            out.push_str(&format!("{indent}# {}\n", visible_controls(line)));
        }
    }
    out
}

/// A Python docstring statement for `text` at `indent`, ending in a newline; empty when blank.
/// Quotes and backslashes are escaped, so the text cannot close the string.
pub(crate) fn py_docstring(text: &str, indent: &str) -> String {
    let lines = doc_lines(text);
    if lines.is_empty() {
        return String::new();
    }
    let escape = |l: &str| {
        let mut s = String::new();
        push_py_escaped(&mut s, l, true);
        s
    };
    if lines.len() == 1 {
        return format!("{indent}\"\"\"{}\"\"\"\n", escape(lines[0]));
    }
    let mut out = format!("{indent}\"\"\"{}\n", escape(lines[0]));
    for line in &lines[1..] {
        if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("{indent}{}\n", escape(line)));
        }
    }
    out.push_str(&format!("{indent}\"\"\"\n"));
    out
}

/// `PascalCase` of the ASCII alphanumeric runs of `s` (`search_files` -> `SearchFiles`,
/// `getUser` -> `GetUser`), its first `max` characters. May be empty, may start with a digit.
pub(crate) fn pascal_case(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut upper_next = true;
    for c in s.chars() {
        if out.len() == max {
            break;
        }
        if c.is_ascii_alphanumeric() {
            if upper_next {
                out.push(c.to_ascii_uppercase());
                upper_next = false;
            } else {
                out.push(c);
            }
        } else {
            upper_next = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_lines_split_on_every_line_break() {
        assert_eq!(doc_lines("one line  "), ["one line"]);
        assert_eq!(doc_lines(" \t "), Vec::<&str>::new());
        assert_eq!(
            doc_lines("\n\na\r\nb\rc\u{2028}d\u{2029}e\u{85}f é \n\n"),
            ["a", "b", "c", "d", "e", "f é"]
        );
        assert_eq!(doc_lines("a\n\n\nb"), ["a", "", "", "b"]);
        assert_eq!(
            visible_controls("a\u{0}\u{7f}\u{feff}\tb"),
            "a\\x00\\x7f\\ufeff\tb"
        );
        assert_eq!(ts_doc("a */ b", ""), "/** a *\\/ b */\n");
    }

    #[test]
    fn word_tests_match_their_lists() {
        for word in TS_RESERVED {
            assert!(is_ts_reserved(word) && !is_ts_bare_key(word), "{word}");
        }
        for word in PY_KEYWORDS {
            assert!(is_py_keyword(word), "{word}");
        }
        assert!(!is_ts_reserved("newer") && !is_py_keyword("Class"));
    }

    #[test]
    fn identifiers() {
        assert!(is_ascii_identifier("_from", false));
        assert!(is_ascii_identifier("$x", true));
        assert!(!is_ascii_identifier("$x", false));
        assert!(!is_ascii_identifier("a-b", true));
        assert!(!is_ascii_identifier("1a", true));
        assert!(!is_ascii_identifier("", true));
        assert!(!is_ascii_identifier("é", true));
        assert!(!is_ts_bare_key("new"));
        assert!(is_ts_bare_key("query"));
        assert!(is_py_keyword("class"));
        assert!(!is_py_keyword("type"));
    }

    #[test]
    fn strings_escape_everything_dangerous() {
        assert_eq!(ts_string("a\"b\\\u{2028}\r"), "\"a\\\"b\\\\\\u2028\\r\"");
        assert_eq!(py_string("a\"b\\\u{0}\n"), "\"a\\\"b\\\\\\x00\\n\"");
    }

    #[test]
    fn doc_comments_cannot_be_closed() {
        let doc = ts_doc("ends */ here\r\nnext\u{2028}line", "  ");
        assert_eq!(
            doc,
            "  /**\n   * ends *\\/ here\n   * next\n   * line\n   */\n"
        );
        assert_eq!(ts_doc("  \n ", ""), "");
        let py = py_docstring("say \"\"\" and \\ end\"", "    ");
        assert_eq!(py, "    \"\"\"say \\\"\\\"\\\" and \\\\ end\\\"\"\"\"\n");
        assert_eq!(py_comment("a\nb\u{0}", ""), "# a\n# b\\x00\n");
    }

    #[test]
    fn pascal() {
        assert_eq!(pascal_case("search_files", 64), "SearchFiles");
        assert_eq!(pascal_case("getUser", 64), "GetUser");
        assert_eq!(pascal_case("a-b", 64), "AB");
        assert_eq!(pascal_case("--", 64), "");
        assert_eq!(pascal_case("get_user_name", 5), "GetUs");
    }
}
