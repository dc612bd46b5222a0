//! Type stripping: the model's TypeScript becomes JavaScript with every line and column kept.
//!
//! The program is wrapped as the body of an async arrow function *on its first line*, so a
//! position in the wrapped text maps back to the model's text by subtracting the prefix length
//! from columns on line 1. `swc_ts_fast_strip` in strip-only mode replaces type syntax with
//! whitespace and refuses syntax that would need code generation (`enum`, `namespace`,
//! parameter properties), each with a span we report as line and column.
//!
//! Wrapping alone would let a program close the function early (`return 1; }); more(); (async
//! () => {`): the text would still parse, as several statements, and the code after the stray
//! `}` would run outside the function. So the stripped JavaScript, exactly what the engine will
//! run, is parsed again and must be one statement, the arrow function, whose body starts at the
//! wrapper's `{` and ends at the wrapper's `}`: then the program is that body and nothing else.
//! Otherwise the program is refused as a syntax error at the bracket that closed the function,
//! in the program's own lines and columns (also when the stray bracket makes the wrapped text
//! fail to parse: the program alone is parsed to find it).

use std::sync::{Arc, Mutex, PoisonError};

use swc_common::errors::{DiagnosticBuilder, Emitter, Handler};
use swc_common::input::StringInput;
use swc_common::sync::Lrc;
use swc_common::{BytePos, SourceMap, Spanned};
use swc_ecma_ast::{ArrowFunctionBody, EsVersion, Expr, Script, Stmt};
use swc_ecma_parser::error::SyntaxError;
use swc_ecma_parser::{EsSyntax, Lexer, Parser, Syntax};
use swc_ts_fast_strip::{Mode, Options, operate};

/// Text put in front of the program, on the same line.
pub(crate) const PREFIX: &str = "(async () => {";
/// Text put after the program, on a new line (so a trailing `//` comment cannot swallow it).
pub(crate) const SUFFIX: &str = "\n})";

pub(crate) use crate::MAX_PROGRAM_BYTES;

/// The deepest bracket nesting accepted before parsing (parsers recurse on nesting).
pub(crate) const MAX_NESTING: usize = 1000;

/// A program that cannot run, with the position in the model's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StripError {
    pub(crate) message: String,
    pub(crate) line: Option<u32>,
    pub(crate) column: Option<u32>,
}

/// Strips the types from `program` and returns the wrapped JavaScript.
pub(crate) fn strip_program(program: &str) -> Result<String, StripError> {
    check_size(program)?;
    check_nesting(program)?;
    let js = strip_typescript(program)?;
    let body = body_of(&js)?;
    // Only a `}` token can close the wrapper's body (punctuators have no escapes): a program
    // without that byte cannot, and is not parsed twice.
    if body.contains('}') {
        parse_checked(&js, body)?;
    }
    Ok(js)
}

/// [`strip_program`], and the syntax tree of the JavaScript it returns (always parsed, and
/// checked to be the wrapper with the program as its whole body): the tree the pre-run analysis
/// reads, so that a program is parsed for its run and its analysis once.
///
/// `Ok(None)` when the program nests deeper than `max_nesting` (the analysis parses on the
/// caller's stack, which is smaller than the workers'; see [`check_nesting_to`]): the run
/// judges such a program on its own thread.
pub(crate) fn strip_and_parse(
    program: &str,
    max_nesting: usize,
) -> Result<Option<(String, Script)>, StripError> {
    check_size(program)?;
    if check_nesting_to(program, max_nesting.min(MAX_NESTING)).is_err() {
        return Ok(None);
    }
    let js = strip_typescript(program)?;
    let body = body_of(&js)?;
    let script = parse_checked(&js, body)?;
    Ok(Some((js, script)))
}

/// The program wrapped as the body of the async function it runs in.
fn wrap(program: &str) -> String {
    let mut wrapped = String::with_capacity(PREFIX.len() + program.len() + SUFFIX.len());
    wrapped.push_str(PREFIX);
    wrapped.push_str(program);
    wrapped.push_str(SUFFIX);
    wrapped
}

/// The program between the wrapper's prefix and suffix in the stripped JavaScript `js`.
fn body_of(js: &str) -> Result<&str, StripError> {
    js.strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .ok_or_else(|| StripError {
            message: "the type stripper changed the function around the program".into(),
            line: None,
            column: None,
        })
}

/// Refuses a program longer than [`MAX_PROGRAM_BYTES`].
fn check_size(program: &str) -> Result<(), StripError> {
    match crate::too_long(program) {
        Some(message) => Err(StripError {
            message,
            line: None,
            column: None,
        }),
        None => Ok(()),
    }
}

/// Strips the types from `program` (its size and nesting checked already): the wrapped
/// JavaScript, not yet checked to be one function.
fn strip_typescript(program: &str) -> Result<String, StripError> {
    let wrapped = wrap(program);

    let cm: Lrc<SourceMap> = Lrc::default();
    let diagnostics: Diagnostics = Arc::new(Mutex::new(Vec::new()));
    let handler = Handler::with_emitter(
        false,
        false,
        Box::new(Collect {
            diagnostics: diagnostics.clone(),
        }),
    );
    let options = Options {
        module: Some(false),
        mode: Mode::StripOnly,
        ..Options::default()
    };
    match operate(&cm, &handler, wrapped, options) {
        // Checked again by the caller on what the engine will run, as JavaScript: a construct
        // the two readings parse differently cannot open a way out of the function.
        Ok(output) => Ok(output.code),
        Err(error) => {
            let collected =
                std::mem::take(&mut *diagnostics.lock().unwrap_or_else(PoisonError::into_inner));
            let Some((message, pos)) = collected.into_iter().next() else {
                return Err(StripError {
                    message: error.message,
                    line: None,
                    column: None,
                });
            };
            // Where the wrapped text stopped parsing, in the program's bytes.
            let failed_at = pos.map_or(program.len(), |pos| {
                let offset = cm.lookup_byte_offset(pos).pos.0 as usize;
                offset.saturating_sub(PREFIX.len()).min(program.len())
            });
            // The program alone stops earlier, at a closing bracket: that bracket closed the
            // function (and the wrapper's own `}` was left over).
            if let Some(offset) = stray_bracket(program, typescript_syntax())
                && offset < failed_at
            {
                return Err(early_close(program, Some(offset)));
            }
            let (line, column) = match pos {
                Some(pos) => locate(&cm, pos, program),
                None => (None, None),
            };
            Err(StripError {
                message,
                line,
                column,
            })
        }
    }
}

/// Parses the stripped JavaScript `wrapped` (the wrapper around `program`, the stripped body)
/// and checks that it is one statement, the wrapper's arrow function, whose body spans the
/// whole program: a program that closes the function early is refused at the bracket that
/// closed it. Text that does not parse as JavaScript is refused with the parser's message.
fn parse_checked(wrapped: &str, program: &str) -> Result<Script, StripError> {
    let syntax = Syntax::Es(EsSyntax::default());
    let start = BytePos(1);
    let Some(end) = end_of(wrapped, start) else {
        return Err(StripError {
            message: format!("the program is longer than the limit of {MAX_PROGRAM_BYTES} bytes"),
            line: None,
            column: None,
        });
    };
    let mut parser = parser_for(wrapped, start, end, syntax);
    let parsed = parser.parse_script();
    let errors = parser.take_errors();
    let script = match parsed {
        Ok(script) if errors.is_empty() => script,
        parsed => {
            // Where the wrapped text stops parsing, in the program's bytes (the suffix counts
            // as the program's end).
            let prefix = u32::try_from(PREFIX.len()).unwrap_or(u32::MAX);
            let first = parsed
                .err()
                .into_iter()
                .chain(errors)
                .min_by_key(|error| error.span().lo);
            let wrapped_error = first
                .as_ref()
                .map(|error| error.span().lo.0.saturating_sub(start.0 + prefix))
                .and_then(|o| usize::try_from(o).ok())
                .map_or(program.len(), |o| o.min(program.len()));
            // The program alone stops earlier, at a `}`: that brace closed the function.
            return match stray_bracket(program, syntax) {
                Some(offset) if offset < wrapped_error => Err(early_close(program, Some(offset))),
                _ => {
                    let (line, column) = line_and_column(program, wrapped_error);
                    Err(StripError {
                        message: first.map_or_else(
                            || "the program does not parse".to_owned(),
                            |error| error.kind().msg().into_owned(),
                        ),
                        line,
                        column,
                    })
                }
            };
        }
    };
    if wraps_whole(&script, start, end) {
        return Ok(script);
    }
    Err(early_close(program, stray_bracket(program, syntax)))
}

/// Whether `script` (the wrapped text parsed from `start` to `end`) is one statement, the
/// wrapper's arrow function, whose body is the whole program.
fn wraps_whole(script: &Script, start: BytePos, end: BytePos) -> bool {
    // The wrapper's `{` is the last byte of the prefix; its `}` is the second-to-last byte of
    // the wrapped text, and the `)` after it the last.
    let body_lo = start.0 + u32::try_from(PREFIX.len() - 1).unwrap_or(u32::MAX);
    let body_hi = end.0 - 1;
    match script.body.as_slice() {
        [Stmt::Expr(statement)] => match &*statement.expr {
            Expr::Paren(paren) if paren.span.hi == end => match &*paren.expr {
                Expr::Arrow(arrow) if arrow.is_async && arrow.params.is_empty() => {
                    match &*arrow.body {
                        ArrowFunctionBody::FunctionBody(block) => {
                            block.span.lo.0 == body_lo && block.span.hi.0 == body_hi
                        }
                        ArrowFunctionBody::Expr(_) => false,
                    }
                }
                _ => false,
            },
            _ => false,
        },
        _ => false,
    }
}

/// The end position of `text` starting at `start`, if it fits the parser's positions.
fn end_of(text: &str, start: BytePos) -> Option<BytePos> {
    u32::try_from(text.len())
        .ok()
        .and_then(|len| len.checked_add(start.0))
        .map(BytePos)
}

/// TypeScript, with the stripper's syntax options.
fn typescript_syntax() -> Syntax {
    Syntax::Typescript(Options::default().parser)
}

/// A parser over `text`.
fn parser_for(text: &str, start: BytePos, end: BytePos, syntax: Syntax) -> Parser<Lexer<'_>> {
    let lexer = Lexer::new(
        syntax,
        EsVersion::latest(),
        StringInput::new(text, start, end),
        None,
    );
    Parser::new_from(lexer)
}

/// Where the program alone (not wrapped) stops parsing, if that is at a `}` or `)`: a
/// bracket it never opened. Parsed as a module, which allows top-level `await`; `return` is
/// allowed in the body, so that complaint is ignored.
fn stray_bracket(program: &str, syntax: Syntax) -> Option<usize> {
    let start = BytePos(1);
    let end = end_of(program, start)?;
    let mut parser = parser_for(program, start, end, syntax);
    let fatal = parser.parse_module().err();
    let errors = parser.take_errors();
    let offset = fatal
        .into_iter()
        .chain(errors)
        .filter(|error| !matches!(error.kind(), SyntaxError::ReturnNotAllowed))
        .map(|error| error.span().lo.0.saturating_sub(start.0))
        .min()
        .and_then(|o| usize::try_from(o).ok())?;
    matches!(program.as_bytes().get(offset), Some(b'}' | b')')).then_some(offset)
}

/// The error for a program that closes its function early, at the bracket that does it (the
/// program's first position when it cannot be found).
fn early_close(program: &str, offset: Option<usize>) -> StripError {
    let (line, column) = match offset {
        Some(offset) => line_and_column(program, offset),
        None => (Some(1), Some(1)),
    };
    StripError {
        message: "this closing bracket has no opening one in the program: it would close the \
                  function the program runs in (the program is the body of an async function)"
            .to_owned(),
        line,
        column,
    }
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (Option<u32>, Option<u32>) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |t| t.chars().count()) + 1;
    (u32::try_from(line).ok(), u32::try_from(column).ok())
}

/// Maps a position in the wrapped text to a 1-based line and column in the model's text.
fn locate(cm: &SourceMap, pos: BytePos, program: &str) -> (Option<u32>, Option<u32>) {
    let Ok(loc) = cm.try_lookup_char_pos(pos) else {
        return (None, None);
    };
    let prefix_chars = PREFIX.chars().count();
    let mut line = loc.line;
    let mut column = loc.col.0 + 1;
    if line == 1 {
        column = column.saturating_sub(prefix_chars).max(1);
    }
    // A position inside the suffix (an error at the end of input) maps to the program's end.
    let program_lines = program.split('\n').count();
    if line > program_lines {
        line = program_lines;
        let last = program.rsplit('\n').next().unwrap_or("");
        column = last.chars().count() + 1;
    }
    (u32::try_from(line).ok(), u32::try_from(column).ok())
}

/// Diagnostics as (message, primary position), shared with the handler's emitter.
type Diagnostics = Arc<Mutex<Vec<(String, Option<BytePos>)>>>;

/// Collects diagnostics.
struct Collect {
    diagnostics: Diagnostics,
}

impl Emitter for Collect {
    fn emit(&mut self, db: &mut DiagnosticBuilder<'_>) {
        let message = db.message();
        let pos = db.span.primary_span().map(|span| span.lo);
        self.diagnostics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((message, pos));
    }
}

/// Whether `word` is one the parsers recurse on when it repeats within one statement (`if`,
/// `else`, `for`, `while`, `do`, `with`, `typeof`, `void`, `delete`, `await`, `new`, `yield`,
/// `keyof`, `readonly`, `infer`, `unique`, `extends`): a `match`, which compiles to a switch on
/// the length (the scan asks this of every word of the program).
fn is_chain_word(word: &str) -> bool {
    matches!(
        word,
        "if" | "else"
            | "for"
            | "while"
            | "do"
            | "with"
            | "typeof"
            | "void"
            | "delete"
            | "await"
            | "new"
            | "yield"
            | "keyof"
            | "readonly"
            | "infer"
            | "unique"
            | "extends"
    )
}

/// Refuses programs nested deeper than [`MAX_NESTING`] before any recursive parser sees them.
///
/// The scan skips comments, string and template text. It is a guard, not a parser; it refuses
/// a program when any of these passes [`MAX_NESTING`]:
/// - bracket depth (`(`, `[`, `{`, `${` against their closers);
/// - a run of prefix operators (`!!!!x`, `- - -x`);
/// - within one statement (between `;`, `{`, `}` and `,`), the count of constructs parsers
///   recurse on without brackets: `?`, `=>`, assignments, `<`, and words such as `if`, `else`,
///   `typeof`, `new`, `await`, `keyof`;
/// - `<` without a matching `>` within one statement (nested type arguments);
/// - `else` in the whole program, past twice the limit (`else if` chains).
fn check_nesting(program: &str) -> Result<(), StripError> {
    check_nesting_to(program, MAX_NESTING)
}

/// [`check_nesting`] with another limit (the pre-run analysis parses on the caller's smaller
/// stack, so it uses a lower one).
fn check_nesting_to(program: &str, max_nesting: usize) -> Result<(), StripError> {
    let bytes = program.as_bytes();
    let mut depth: usize = 0;
    // Each open template literal remembers the depth of its `${` so `}` can resume the text.
    let mut templates: Vec<usize> = Vec::new();
    let mut unary_run: usize = 0;
    let mut chain: usize = 0;
    let mut angle: usize = 0;
    let mut elses: usize = 0;
    let mut i = 0;
    let mut line: u32 = 1;
    let mut line_start = 0;
    let too_deep = |i: usize, line: u32, line_start: usize| StripError {
        message: format!(
            "the program nests deeper than {max_nesting} levels; split the expression into smaller statements"
        ),
        line: Some(line),
        column: program
            .get(line_start..i)
            .and_then(|text| u32::try_from(text.chars().count() + 1).ok()),
    };
    let mut in_template_text = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\n' {
            line = line.saturating_add(1);
            line_start = i + 1;
        }
        if in_template_text {
            match b {
                b'\\' => i += 1,
                b'`' => in_template_text = false,
                b'$' if bytes.get(i + 1) == Some(&b'{') => {
                    in_template_text = false;
                    depth += 1;
                    templates.push(depth);
                    if depth > max_nesting {
                        return Err(too_deep(i, line, line_start));
                    }
                    i += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        let mut chained = false;
        match b {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        line = line.saturating_add(1);
                        line_start = i + 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            b'\'' | b'"' => {
                let quote = b;
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'`' => in_template_text = true,
            b'(' | b'[' => {
                depth += 1;
                if depth > max_nesting {
                    return Err(too_deep(i, line, line_start));
                }
            }
            b'{' => {
                depth += 1;
                chain = 0;
                angle = 0;
                if depth > max_nesting {
                    return Err(too_deep(i, line, line_start));
                }
            }
            b')' | b']' => depth = depth.saturating_sub(1),
            b'}' => {
                if templates.last() == Some(&depth) {
                    templates.pop();
                    in_template_text = true;
                }
                depth = depth.saturating_sub(1);
                chain = 0;
                angle = 0;
            }
            b';' => {
                chain = 0;
                angle = 0;
            }
            b',' => chain = 0,
            b'!' | b'~' | b'-' | b'+' => {
                unary_run += 1;
                if unary_run > max_nesting {
                    return Err(too_deep(i, line, line_start));
                }
                if bytes.get(i + 1) == Some(&b'=') {
                    chained = true;
                }
                i += 1;
                if !chained {
                    continue;
                }
            }
            b'?' => chained = true,
            b'<' => {
                chained = true;
                angle += 1;
                if angle > max_nesting {
                    return Err(too_deep(i, line, line_start));
                }
            }
            b'>' => angle = angle.saturating_sub(1),
            b'=' => {
                let next = bytes.get(i + 1).copied();
                let prev = i.checked_sub(1).and_then(|p| bytes.get(p)).copied();
                if next == Some(b'>') {
                    chained = true;
                    i += 1;
                } else if next != Some(b'=') && !matches!(prev, Some(b'=' | b'!' | b'<' | b'>')) {
                    chained = true;
                }
            }
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] == b'$')
                {
                    i += 1;
                }
                let word = program.get(start..i).unwrap_or("");
                if word == "else" {
                    elses += 1;
                    if elses > 2 * max_nesting {
                        return Err(too_deep(start, line, line_start));
                    }
                }
                unary_run = 0;
                if is_chain_word(word) {
                    chain += 1;
                    if chain > max_nesting {
                        return Err(too_deep(start, line, line_start));
                    }
                }
                continue;
            }
            _ => {}
        }
        if chained {
            chain += 1;
            if chain > max_nesting {
                return Err(too_deep(i, line, line_start));
            }
        }
        unary_run = 0;
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_stripped_and_positions_kept() {
        let js = strip_program("const x: number = 1;\nreturn x as number;").unwrap();
        assert!(js.starts_with(PREFIX));
        assert_eq!(js.lines().count(), 3);
        assert!(!js.contains("number"));
    }

    #[test]
    fn enums_are_refused_with_their_position() {
        let err = strip_program("const a = 1;\n  enum Color { Red }\n").unwrap_err();
        assert_eq!(err.line, Some(2));
        assert_eq!(err.column, Some(3));
        assert!(err.message.contains("enum"), "{}", err.message);
    }

    #[test]
    fn first_line_columns_exclude_the_wrapper() {
        let err = strip_program("namespace N { export const x = 1 }").unwrap_err();
        assert_eq!((err.line, err.column), (Some(1), Some(1)));
    }

    #[test]
    fn an_error_at_the_end_maps_into_the_program() {
        let err = strip_program("if (x) {\n  foo(").unwrap_err();
        assert_eq!(err.line, Some(2));
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        for program in [
            format!("return {}1{};", "(".repeat(5000), ")".repeat(5000)),
            format!("return {}x;", "!".repeat(5000)),
            format!("return {}1;", "a => ".repeat(5000)),
            format!("{} x;", "if (a) ".repeat(5000)),
            format!("let x: {}number{};", "A<".repeat(5000), ">".repeat(5000)),
            format!("return {}1;", "a ? b : ".repeat(5000)),
            format!("return {}1;", "typeof ".repeat(5000)),
            format!("if (a) {{}}{}", " else if (a) {}".repeat(5000)),
        ] {
            let err = strip_program(&program).unwrap_err();
            assert!(err.message.contains("nests deeper"), "{}", err.message);
        }
        let too_long = "x;".repeat(MAX_PROGRAM_BYTES);
        assert!(strip_program(&too_long).is_err());
    }

    #[test]
    fn ordinary_programs_pass_the_nesting_guard() {
        // Run on a thread with the worker's stack: debug builds use much more per level.
        let ok = std::thread::Builder::new()
            .stack_size(64 * 1024 * 1024)
            .spawn(|| {
                let nested = format!("return {}1{};", "(".repeat(300), ")".repeat(300));
                let text = format!(
                    "const s = '{}' + `${{1}}{}`;\nfor (let i = 0; i < 10; i++) {{ a = i >= 2 ? i : -i; }}\n{}",
                    "(".repeat(5000),
                    "[".repeat(5000),
                    "x = 1;\n".repeat(5000)
                );
                [nested, text].iter().all(|p| strip_program(p).is_ok())
            })
            .unwrap()
            .join()
            .unwrap();
        assert!(ok);
    }

    #[test]
    fn the_analysis_parse_gives_the_runs_text_and_verdict() {
        let programs = [
            "const x: number = 1;\nreturn x as number;",
            "return await tools.read({ path: 'a' });",
            "return 1",
            "return 1; }); more(); (async () => {",
            "const a = 1;\n  enum Color { Red }\n",
            "if (x) {\n  foo(",
            "let s = `${1}}`; return s;",
        ];
        for program in programs {
            match (
                strip_program(program),
                strip_and_parse(program, MAX_NESTING),
            ) {
                (Ok(js), Ok(Some((same, script)))) => {
                    assert_eq!(js, same, "{program}");
                    assert_eq!(script.body.len(), 1, "{program}");
                }
                (Err(error), Err(same)) => assert_eq!(error, same, "{program}"),
                (one, other) => panic!(
                    "{program}: {one:?} against {:?}",
                    other.map(|p| p.map(|p| p.0))
                ),
            }
        }
    }
}
