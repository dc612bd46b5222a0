//! `pattern`: ECMA-262-flavoured regular expressions compiled with the `regex` crate.
//!
//! The `regex` crate matches in time linear in the input, so a string chosen by a model cannot
//! make validation slow. Its syntax agrees with ECMA-262 on the constructs schemas use; the
//! character classes `\d`, `\D`, `\w` and `\W` are rewritten to their ASCII meaning (as in
//! ECMA-262, where the `regex` crate would match Unicode digits and letters). Look-around and
//! back-references are not available and are reported when the schema is checked.

use regex::Regex;

/// Size limit of a compiled pattern, so a schema cannot make the validator allocate without
/// bound.
const SIZE_LIMIT: usize = 1 << 20;

/// Rewrites the ECMA-262 classes that differ from the `regex` crate's defaults.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('d' | 'D' | 'w' | 'W')) => {
                    let ascii = if matches!(e, 'd' | 'D') {
                        "0-9"
                    } else {
                        "0-9A-Za-z_"
                    };
                    let negated = matches!(e, 'D' | 'W');
                    match (in_class, negated) {
                        (false, false) => {
                            out.push('[');
                            out.push_str(ascii);
                            out.push(']');
                        }
                        (false, true) => {
                            out.push_str("[^");
                            out.push_str(ascii);
                            out.push(']');
                        }
                        (true, false) => out.push_str(ascii),
                        // A negated class inside a class has no short ASCII spelling; keep
                        // the crate's meaning.
                        (true, true) => {
                            out.push('\\');
                            out.push(e);
                        }
                    }
                }
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
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
            format!("`pattern` {pattern:?} cannot be compiled: {detail}{hint}")
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

    #[test]
    fn lookaround_is_reported() {
        let error = compile("^(?=a)").unwrap_err();
        assert!(error.contains("look-around"), "{error}");
    }
}
