//! `pattern`: ECMA-262-flavoured regular expressions compiled with the `regex` crate.
//!
//! The `regex` crate matches in time linear in the input, so a string chosen by a model cannot
//! make validation slow. Its syntax agrees with ECMA-262 on the constructs schemas use; the ones
//! whose meaning differs are rewritten to ECMA-262's (see `translate`). Look-around and
//! back-references are not available and are reported when the schema is checked.

use regex::Regex;

/// Size limit of a compiled pattern, so a schema cannot make the validator allocate without
/// bound.
const SIZE_LIMIT: usize = 1 << 20;

/// ECMA-262's `\d`: ASCII digits (the `regex` crate's would take every Unicode digit).
const DIGIT: &str = "0-9";
/// ECMA-262's `\w`: ASCII letters, digits and `_`.
const WORD: &str = "0-9A-Za-z_";
/// ECMA-262's `\s`: WhiteSpace and LineTerminator, that is tab, vertical tab, form feed, space,
/// U+00A0, U+FEFF, every Unicode space separator (Zs), LF, CR, U+2028 and U+2029. The `regex`
/// crate's `\s` (Unicode `White_Space`) lacks U+FEFF and adds U+0085.
const SPACE: &str = r"\t\n\x0B\x0C\r\x20\xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
/// ECMA-262's `.`: any character but a line terminator (the `regex` crate's excludes only LF).
const DOT: &str = r"[^\n\r\x{2028}\x{2029}]";

/// Rewrites the ECMA-262 constructs whose meaning differs in the `regex` crate: the class
/// escapes `\d \D \w \W \s \S` (in and out of brackets), `.`, the word boundaries `\b \B`
/// (ASCII words in ECMA-262), and `[\b]` (a backspace).
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('d' | 'D' | 'w' | 'W' | 's' | 'S')) => {
                    let body = match e.to_ascii_lowercase() {
                        'd' => DIGIT,
                        'w' => WORD,
                        _ => SPACE,
                    };
                    let negated = e.is_ascii_uppercase();
                    match (in_class, negated) {
                        // Inside brackets a negated class nests: `[a\D]` is `[a[^0-9]]`.
                        (false, _) | (true, true) => {
                            out.push_str(if negated { "[^" } else { "[" });
                            out.push_str(body);
                            out.push(']');
                        }
                        (true, false) => out.push_str(body),
                    }
                }
                Some('b') if in_class => out.push_str(r"\x08"),
                Some(e @ ('b' | 'B')) => {
                    out.push_str("(?-u:\\");
                    out.push(e);
                    out.push(')');
                }
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '.' if !in_class => out.push_str(DOT),
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A `]` or `^]` right after the opening bracket is literal.
                let rest = chars.as_str();
                if let Some(stripped) = rest.strip_prefix("^]") {
                    out.push_str("^\\]");
                    chars = stripped.chars();
                } else if let Some(stripped) = rest.strip_prefix(']') {
                    out.push_str("\\]");
                    chars = stripped.chars();
                }
            }
            // A `[` inside brackets is a literal in ECMA-262, a nested class in `regex`.
            '[' => out.push_str("\\["),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            other => out.push(other),
        }
    }
    out
}

/// Compiles a schema `pattern`, or says why it cannot be used.
pub(crate) fn compile(pattern: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(&translate(pattern))
        .size_limit(SIZE_LIMIT)
        .build()
        .map_err(|error| {
            let detail = match &error {
                regex::Error::Syntax(text) => text
                    .lines()
                    .rev()
                    .find(|l| l.starts_with("error:"))
                    .map(str::to_string)
                    .unwrap_or_else(|| text.clone()),
                regex::Error::CompiledTooBig(_) => "the compiled pattern is too large".to_string(),
                _ => error.to_string(),
            };
            let hint = if pattern.contains("(?=")
                || pattern.contains("(?!")
                || pattern.contains("(?<=")
                || pattern.contains("(?<!")
            {
                " (look-around is not supported)"
            } else {
                ""
            };
            format!(
                "`pattern` {} cannot be compiled: {}{hint}",
                crate::excerpt::quoted(pattern),
                crate::excerpt::cut(&detail)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_and_words_are_ascii() {
        let re = compile(r"^\d+$").unwrap();
        assert!(re.is_match("123"));
        assert!(!re.is_match("١٢٣"));
        let re = compile(r"^[\w-]+$").unwrap();
        assert!(re.is_match("a_b-c"));
        assert!(!re.is_match("é"));
        let re = compile(r"^\W$").unwrap();
        assert!(re.is_match("é"));
        // A `]` right after `[` is a literal, as in the regex crate.
        let re = compile(r"^[]a]$").unwrap();
        assert!(re.is_match("]") && re.is_match("a"));
    }

    /// `\s` and `\S` follow ECMA-262: U+FEFF and every space separator are white space,
    /// U+0085 is not; in and out of brackets, negated or not.
    #[test]
    fn white_space_is_ecma_262s() {
        let ecma_space = [
            '\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{a0}', '\u{1680}', '\u{2000}', '\u{2005}',
            '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}', '\u{feff}',
        ];
        let not_space = ['a', '\u{85}', '\u{180e}', '\u{200b}', '_', '0'];
        let space = compile(r"^\s$").unwrap();
        let non_space = compile(r"^\S$").unwrap();
        let in_class = compile(r"^[\s]$").unwrap();
        let negated_in_class = compile(r"^[\S]$").unwrap();
        let not_in_class = compile(r"^[^\s]$").unwrap();
        for c in ecma_space {
            let text = c.to_string();
            assert!(space.is_match(&text), "{c:?}");
            assert!(in_class.is_match(&text), "{c:?}");
            assert!(!non_space.is_match(&text), "{c:?}");
            assert!(!negated_in_class.is_match(&text), "{c:?}");
            assert!(!not_in_class.is_match(&text), "{c:?}");
        }
        for c in not_space {
            let text = c.to_string();
            assert!(!space.is_match(&text), "{c:?}");
            assert!(non_space.is_match(&text), "{c:?}");
            assert!(negated_in_class.is_match(&text), "{c:?}");
            assert!(not_in_class.is_match(&text), "{c:?}");
        }
    }

    /// The other class escapes, the dot and word boundaries follow ECMA-262 too.
    #[test]
    fn other_classes_are_ecma_262s() {
        // Negated classes inside brackets are ASCII-based as well.
        let re = compile(r"^[\D]$").unwrap();
        assert!(re.is_match("١") && re.is_match("a") && !re.is_match("5"));
        let re = compile(r"^[\Wa]$").unwrap();
        assert!(re.is_match("é") && re.is_match("a") && !re.is_match("b"));
        let re = compile(r"^[^\d\s]+$").unwrap();
        assert!(re.is_match("ab١") && !re.is_match("a b") && !re.is_match("a\u{feff}"));
        // The dot stops at every line terminator.
        let re = compile(r"^.$").unwrap();
        assert!(re.is_match("é"));
        for c in ['\n', '\r', '\u{2028}', '\u{2029}'] {
            assert!(!re.is_match(&c.to_string()), "{c:?}");
        }
        assert!(compile(r"^[.]$").unwrap().is_match("."));
        // Word boundaries are between ASCII word characters and the rest.
        let re = compile(r"\bx\b").unwrap();
        assert!(re.is_match("éxé") && re.is_match("a x") && !re.is_match("axb"));
        assert!(compile(r"\Bx").unwrap().is_match("ax"));
        // `[\b]` is a backspace; `[` inside brackets is literal.
        assert!(compile(r"^[\b]$").unwrap().is_match("\u{8}"));
        assert!(compile(r"^[[a]$").unwrap().is_match("["));
    }

    #[test]
    fn lookaround_is_reported() {
        let error = compile("^(?=a)").unwrap_err();
        assert!(error.contains("look-around"), "{error}");
    }
}
