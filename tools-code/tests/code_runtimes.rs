//! The scenarios `code_typescript` and `code_python` both test, as one table: each row is a
//! scenario with its program in each language and what its run must show. Every row runs on
//! both runtimes, as the tests `typescript::<row>` and `python::<row>` (each under the cargo
//! feature of its runtime), so a failure names its row and its language; a failed check also
//! prints the program and what its run gave.
//!
//! A row is one of:
//! - [`Row::Run`]: one program per language, run once against a [`TestHost`], and a check of
//!   its outcome (the same for both languages, or with the values that differ picked by
//!   language: [`Ran::pick`]);
//! - [`Row::EachFails`]: a list of hostile programs per language (the values each language has
//!   differ), each of which must fail as the row's kind, with its needle in the message and at
//!   its position.
//!
//! After a row's runs the runtime must be healthy ([`TestRuntime::assert_healthy`]).
//!
//! What only one runtime does stays in its own module; what every runtime does alike, with the
//! same expectation in both languages, is also in `code_conformance`.
#![cfg(any(feature = "typescript", feature = "python"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::code_support;

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::Duration;

use code_support::{
    PATCH_EVERYTHING, PATCH_JSON, TestHost, TestRuntime, assert_only_the_valid_call_was_sent, fail,
    hostile_limits, ok, ordinary_limits, run_with,
};
use serde_json::json;
use tools_code::{
    CodeCompletion, CodeFailure, CodeFailureKind, CodeLanguage, CodeLimits, CodeOutcome,
};

/// Makes each row a test per runtime: `typescript::<row>` and `python::<row>` run the row
/// `<row>()` on that runtime, each under the cargo feature of its runtime.
macro_rules! rows {
    ($($row:ident),* $(,)?) => {
        rows!(@runtime typescript, "typescript", TypeScriptRuntime: $($row),*);
        rows!(@runtime python, "python", PythonRuntime: $($row),*);
    };
    (@runtime $module:ident, $feature:literal, $runtime:ident: $($row:ident),*) => {
        #[cfg(feature = $feature)]
        mod $module {
            use tools_code::$runtime;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $row() {
                    super::run_row::<$runtime>(stringify!($row), super::$row()).await;
                }
            )*
        }
    };
}

rows!(
    no_state_survives_into_the_next_run,
    arguments_that_are_not_json_reject_only_that_call,
    patched_builtins_do_not_change_arguments_or_results,
    arguments_larger_than_max_call_bytes_never_reach_the_host,
    a_call_limit_under_two_bytes_is_refused,
    invalid_limits_are_reported,
    returning_values_that_are_not_json,
    throwing_unusual_values,
    syntax_errors_report_their_position,
);

// --- the table's rows ---------------------------------------------------------------------

/// A program changes globals, builtins and modules; the next run on the runtime sees none of it.
fn no_state_survives_into_the_next_run() -> Row {
    Run::new(
        "return [typeof (globalThis as any).leak, ({} as any).polluted === undefined, typeof [].push, JSON.stringify({a: 1})];",
        "import builtins, json\nreturn [hasattr(builtins, 'leak'), json.dumps({'a': 1}), 'g' in globals()]",
        |ran| {
            let expected = ran.pick(
                json!(["undefined", true, "function", "{\"a\":1}"]),
                json!([false, "{\"a\": 1}", false]),
            );
            assert_eq!(ran.completion().result, Some(expected));
        },
    )
    .after(
        r#"
        (globalThis as any).leak = 42;
        (Object.prototype as any).polluted = 1;
        (Array.prototype as any).push = null;
        JSON.stringify = () => "hijacked";
        return 1;
        "#,
        "import builtins, json\nbuiltins.leak = 42\njson.dumps = None\nglobal g\ng = 1\nreturn 1",
    )
    .into()
}

/// Each call whose arguments are not JSON is refused with an error the program catches (a
/// `TypeError` naming the value's path); only the valid call reaches the host.
fn arguments_that_are_not_json_reject_only_that_call() -> Row {
    Run::new(
        r#"
        const cyclic: any = { n: 1 }; cyclic.me = cyclic;
        const bad: [string, any][] = [
            ["undefined", { a: undefined }],
            ["bigint", { n: 1n }],
            ["cycle", cyclic],
            ["sparse", { list: [1, , 3] }],
            ["negzero", { z: -0 }],
            ["nan", { x: NaN }],
            ["inf", { x: [Infinity] }],
            ["function", { f() {} }],
            ["symbol", { s: Symbol("s") }],
            ["date", { when: new Date() }],
            ["odd key", { "odd key": { deep: new Set() } }],
        ];
        const messages: string[] = [];
        for (const [label, args] of bad) {
            try { await tools.echo(args); messages.push(label + ": sent"); }
            catch (e) { messages.push(label + ": " + (e instanceof TypeError) + " " + e.message); }
        }
        const fine = await tools.echo({ ok: [0, 1.5, "", false, null] });
        return { messages, fine: fine.args };
        "#,
        r#"
cyclic = {'n': 1}
cyclic['me'] = cyclic
deep = 1
for _ in range(1000):
    deep = [deep]
bad = [
    ('set', {'s': {1}}),
    ('cycle', cyclic),
    ('nan', {'x': float('nan')}),
    ('function', {'f': print}),
    ('object', {'o': object()}),
    ('deep', {'v': deep}),
]
messages = []
for label, args in bad:
    try:
        await tools.echo(args)
        messages.append(label + ': sent')
    except TypeError as e:
        messages.append(label + ': ' + str(e))
fine = await tools.echo({'ok': [0, 1.5, '', False, None]})
return {'messages': messages, 'fine': fine['args']}
"#,
        |ran| {
            let expected: &[&str] = ran.pick(
                &[
                    "undefined: true args.a is undefined",
                    "bigint: true args.n is a BigInt",
                    "cycle: true args.me is a cycle",
                    "sparse: true args.list[1] is a hole",
                    "negzero: true args.z is -0",
                    "nan: true args.x is NaN",
                    "inf: true args.x[0] is Infinity",
                    "function: true args.f is a function",
                    "symbol: true args.s is a symbol",
                    "date: true args.when is Date object",
                    "odd key: true args[\"odd key\"].deep is Set object",
                ],
                &[
                    "set: args[\"s\"] is a set",
                    "cycle: args[\"me\"] is a cycle",
                    "nan: args[\"x\"] is NaN",
                    "function: args[\"f\"] is a builtin_function_or_method",
                    "object: args[\"o\"] is a object",
                    "deep: args[\"v\"]",
                ],
            );
            let result = ran.completion().result.clone().unwrap();
            let messages = assert_only_the_valid_call_was_sent(&result, ran.host, expected);
            if ran.language == CodeLanguage::Python {
                // Python's list has a value nested too deep; TypeScript's refusal of one is
                // `deeply_nested_values_are_refused_not_overflowed`.
                assert!(
                    messages[5].contains("nests deeper than 100"),
                    "{}",
                    messages[5]
                );
            }
        },
    )
    .into()
}

/// With every built-in a conversion could consult patched (prototypes and globals in
/// TypeScript, the `json` module in Python), arguments and results still cross as they are.
fn patched_builtins_do_not_change_arguments_or_results() -> Row {
    Run::new(
        format!(
            "{PATCH_EVERYTHING}
        const value = {{ list: [1, [2, {{ deep: [3, 'x'] }}], []], o: {{ a: {{}}, b: [null, true] }}, s: 'q\"' }};
        const r = await tools.echo(value);
        const flat = await tools.echo({{ n: 1, s: 'plain' }});
        return {{ sent: r.args, flat: flat.args, nested: [value] }};"
        ),
        format!(
            "{PATCH_JSON}
value = {{'list': [1, [2, {{'deep': (3, 'x')}}], []], 'o': {{'a': {{}}, 'b': [None, True, 1.5, -2]}}, 's': 'q\"\\u00e9\\n'}}
r = await tools.echo(value)
return {{'sent': r['args'], 'nested': [value]}}"
        ),
        |ran| {
            let typescript = json!({ "list": [1, [2, { "deep": [3, "x"] }], []], "o": { "a": {}, "b": [null, true] }, "s": "q\"" });
            let python = json!({ "list": [1, [2, { "deep": [3, "x"] }], []], "o": { "a": {}, "b": [null, true, 1.5, -2] }, "s": "q\"é\n" });
            let expected = ran.pick(
                json!({ "sent": typescript, "flat": { "n": 1, "s": "plain" }, "nested": [typescript] }),
                json!({ "sent": python, "nested": [python] }),
            );
            assert_eq!(ran.completion().result, Some(expected));
        },
    )
    .into()
}

/// Arguments over `max_call_bytes` are refused in the program (TypeScript: a `RangeError`,
/// Python: a `ValueError`), counted in UTF-8 bytes; the call that fits reaches the host.
fn arguments_larger_than_max_call_bytes_never_reach_the_host() -> Row {
    Run::new(
        r#"
        const out: string[] = [];
        for (const args of [{ s: "x".repeat(2000) }, { s: "\u20ac".repeat(400) }]) {
            try { await tools.echo(args); out.push("sent"); }
            catch (e) { out.push((e instanceof RangeError) + " " + e.message); }
        }
        const fine = await tools.echo({ s: "x".repeat(900) });
        return [out, fine.args.s.length];
        "#,
        "out = []
for args in [{'s': 'x' * 2000}, {'s': '\\u20ac' * 400}]:
    try:
        await tools.echo(args)
        out.append('sent')
    except ValueError as e:
        out.append(str(e))
fine = await tools.echo({'s': 'x' * 900})
return [out, len(fine['args']['s'])]",
        |ran| {
            let result = ran.completion().result.clone().unwrap();
            match ran.language {
                CodeLanguage::TypeScript => {
                    assert_eq!(result[1], json!(900));
                    let messages = result[0].as_array().unwrap();
                    assert_eq!(messages.len(), 2);
                    assert!(
                        messages[0].as_str().unwrap().starts_with(
                            "true args is at least 2008 bytes of JSON text, more than the 1000"
                        ),
                        "{messages:?}"
                    );
                    // 400 euro signs are 400 UTF-16 units but 1200 UTF-8 bytes: counted in
                    // UTF-8 bytes.
                    assert!(
                        messages[1].as_str().unwrap().starts_with(
                            "true args is at least 1208 bytes of JSON text, more than the 1000"
                        ),
                        "{messages:?}"
                    );
                }
                CodeLanguage::Python => assert_eq!(
                    result,
                    json!([
                        [
                            "args is at least 2008 bytes of JSON text, more than the 1000 bytes one call may send (max_call_bytes); it passed that at args[\"s\"]",
                            "args is 1208 bytes of JSON text, more than the 1000 bytes one call may send (max_call_bytes)"
                        ],
                        900
                    ])
                ),
            }
            assert_eq!(
                ran.host.calls(),
                1,
                "only the call that fits reached the host"
            );
        },
    )
    .limits(ordinary_limits().with_max_call_bytes(1000))
    .into()
}

/// A `max_call_bytes` under 2 (the size of `{}`) is refused before the program runs.
fn a_call_limit_under_two_bytes_is_refused() -> Row {
    Run::new("return 1;", "return 1", |ran| {
        let failure = ran.failure();
        assert_eq!(failure.kind, CodeFailureKind::Internal);
        assert!(failure.message.contains("max_call_bytes"), "{failure:?}");
    })
    .limits(ordinary_limits().with_max_call_bytes(1))
    .into()
}

/// Limits no run can use (a zero timeout) fail the run as `internal`, naming the limit.
fn invalid_limits_are_reported() -> Row {
    Run::new("return 1", "return 1", |ran| {
        let failure = ran.failure();
        assert_eq!(failure.kind, CodeFailureKind::Internal);
        assert!(failure.message.contains("timeout"), "{}", failure.message);
    })
    .limits(CodeLimits::default().with_timeout(Duration::ZERO))
    .into()
}

fn returning_values_that_are_not_json() -> Row {
    Row::EachFails {
        kind: CodeFailureKind::InvalidResult,
        typescript: vec![
            fails_with("return () => 1;", "result is a function"),
            fails_with(
                "const a: any = {}; a.self = a; return a;",
                "result.self is a cycle",
            ),
            fails_with("return new Date(0);", "result is Date object"),
            fails_with("return 10n;", "result is a BigInt"),
            fails_with("return { a: undefined };", "result.a is undefined"),
            fails_with("return [1, , 3];", "result[1] is a hole"),
            fails_with("return NaN;", "result is NaN"),
            fails_with("return { m: new Map() };", "result.m is Map object"),
            fails_with("return Symbol('s');", "result is a symbol"),
        ],
        python: vec![
            fails_with("return lambda: 1", "result is a function"),
            fails_with(
                "a = {}\na['self'] = a\nreturn a",
                "result[\"self\"] is a cycle",
            ),
            fails_with(
                "import datetime\nreturn datetime.date(2020, 1, 1)",
                "result is a date",
            ),
            fails_with("return 2 ** 70", "result is an integer too large"),
            fails_with("return {'a': {1, 2}}", "result[\"a\"] is a set"),
            fails_with("return float('nan')", "result is NaN"),
            fails_with("return -0.0", "result is -0.0"),
            fails_with("return {1: 'x'}", "result has a key that is not a string"),
            fails_with("return b'bytes'", "result is a bytes"),
        ],
    }
}

/// Throwing (raising) what is not an ordinary error fails the run with the value in the
/// message.
fn throwing_unusual_values() -> Row {
    Row::EachFails {
        kind: CodeFailureKind::Runtime,
        typescript: vec![
            fails_with("throw 'a plain string';", "a plain string"),
            fails_with("throw { code: 7 };", "{\"code\":7}"),
            fails_with("throw null;", "null"),
            fails_with("throw undefined;", "undefined"),
            fails_with("await Promise.reject(42);", "42"),
        ],
        python: vec![
            fails_with(
                "raise 'a plain string'",
                "exceptions must derive from BaseException",
            ),
            fails_with("raise SystemExit(3)", "SystemExit"),
            fails_with("raise KeyboardInterrupt()", "KeyboardInterrupt"),
            fails_with(
                "class Odd(Exception):\n    def __str__(self):\n        return 'odd text'\nraise Odd()",
                "Odd: odd text",
            ),
        ],
    }
}

fn syntax_errors_report_their_position() -> Row {
    let deep = format!("return {}1{};", "[".repeat(5000), "]".repeat(5000));
    Row::EachFails {
        kind: CodeFailureKind::Syntax,
        typescript: vec![
            syntax_at("const ok = 1;\nconst x = ;\n", At::Is(2), At::Is(11)),
            syntax_at("return (1 +;", At::Is(1), At::Any),
            syntax_at("if (true) {\n  console.log('open'", At::Is(2), At::Any),
            syntax_at(deep, At::Any, At::Any),
        ],
        python: vec![
            syntax_at("x = 1\ny = (1 +\nz = 2\n", At::Some, At::Any),
            syntax_at("ok = 1\n  bad_indent = 2\n", At::Is(2), At::Any),
            syntax_at("x = 1\nreturn x +* 2", At::Is(2), At::Some),
        ],
    }
}

// --- what a row is, and how it runs -------------------------------------------------------

/// A scenario of the table.
enum Row {
    /// One program per language and a check of its run.
    Run(Run),
    /// Programs that must each fail as `kind` under [`hostile_limits`], one runtime for the
    /// row's programs in the language.
    EachFails {
        kind: CodeFailureKind,
        typescript: Vec<Fails>,
        python: Vec<Fails>,
    },
}

/// One program per language, run against a fresh [`TestHost`] (its tools and nothing else),
/// and the check of its outcome.
struct Run {
    typescript: String,
    python: String,
    /// Programs each language's runtime runs (and must complete) first.
    before: Option<(String, String)>,
    limits: CodeLimits,
    check: Box<dyn Fn(&Ran<'_>)>,
}

impl Run {
    /// The row under [`ordinary_limits`].
    fn new(
        typescript: impl Into<String>,
        python: impl Into<String>,
        check: impl Fn(&Ran<'_>) + 'static,
    ) -> Self {
        Run {
            typescript: typescript.into(),
            python: python.into(),
            before: None,
            limits: ordinary_limits(),
            check: Box::new(check),
        }
    }

    /// Runs these programs first, on the same runtime.
    fn after(mut self, typescript: impl Into<String>, python: impl Into<String>) -> Self {
        self.before = Some((typescript.into(), python.into()));
        self
    }

    fn limits(mut self, limits: CodeLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl From<Run> for Row {
    fn from(run: Run) -> Self {
        Row::Run(run)
    }
}

/// What a [`Run`] row's check looks at.
struct Ran<'a> {
    language: CodeLanguage,
    outcome: &'a CodeOutcome,
    host: &'a TestHost,
}

impl Ran<'_> {
    /// `typescript` or `python`, whichever is the language of this run.
    fn pick<T>(&self, typescript: T, python: T) -> T {
        match self.language {
            CodeLanguage::TypeScript => typescript,
            CodeLanguage::Python => python,
        }
    }

    /// The completion; panics with the failure otherwise.
    fn completion(&self) -> &CodeCompletion {
        match self.outcome {
            Ok(done) => done,
            Err(failure) => panic!("expected a completion, got {failure:?}"),
        }
    }

    /// The failure; panics with the completion otherwise.
    fn failure(&self) -> &CodeFailure {
        match self.outcome {
            Ok(done) => panic!("expected a failure, got {done:?}"),
            Err(failure) => failure,
        }
    }
}

/// A hostile program of an [`Row::EachFails`] row: its message contains `needle`, and its
/// position is `line` and `column`.
struct Fails {
    program: String,
    needle: &'static str,
    line: At,
    column: At,
}

/// A position of a failure as a case expects it.
#[derive(Clone, Copy, Debug)]
enum At {
    /// Whatever it is, or none.
    Any,
    /// Some position.
    Some,
    /// This one.
    Is(u32),
}

impl At {
    fn assert(self, what: &str, actual: Option<u32>, failure: &CodeFailure) {
        match self {
            At::Any => {}
            At::Some => assert!(actual.is_some(), "no {what}: {failure:?}"),
            At::Is(expected) => assert_eq!(actual, Some(expected), "{what}: {failure:?}"),
        }
    }
}

/// A program that fails with `needle` in its message.
fn fails_with(program: impl Into<String>, needle: &'static str) -> Fails {
    Fails {
        program: program.into(),
        needle,
        line: At::Any,
        column: At::Any,
    }
}

/// A program whose syntax error is at `line` and `column`.
fn syntax_at(program: impl Into<String>, line: At, column: At) -> Fails {
    Fails {
        program: program.into(),
        needle: "",
        line,
        column,
    }
}

/// Runs `row` on a fresh `R` and asserts what the row expects; then that the runtime is healthy.
/// A failed check names the row and the language, and shows the program and its outcome.
async fn run_row<R: TestRuntime>(name: &str, row: Row) {
    let rt = R::for_tests();
    let language = R::LANGUAGE;
    match row {
        Row::Run(run) => {
            if let Some((typescript, python)) = &run.before {
                ok(&rt, R::pick(typescript, python)).await;
            }
            let host = TestHost::new();
            let program = R::pick(&run.typescript, &run.python);
            let outcome = run_with(&rt, &host, program, &run.limits).await;
            let ran = Ran {
                language,
                outcome: &outcome,
                host: &host,
            };
            explain(name, language, program, &outcome, || (run.check)(&ran));
        }
        Row::EachFails {
            kind,
            typescript,
            python,
        } => {
            for case in R::pick(&typescript, &python) {
                let failure = fail(&rt, &case.program, &hostile_limits()).await;
                let outcome = Err(failure);
                explain(name, language, &case.program, &outcome, || {
                    let failure = outcome.as_ref().unwrap_err();
                    assert_eq!(failure.kind, kind, "{}", case.program);
                    assert!(
                        failure.message.contains(case.needle),
                        "{}: {}",
                        case.program,
                        failure.message
                    );
                    case.line.assert("line", failure.line, failure);
                    case.column.assert("column", failure.column, failure);
                });
            }
        }
    }
    rt.assert_healthy().await;
}

/// Runs `check`; if it panics, panics again with the row, the language, the program and the
/// run's outcome (each cut to a readable length) before the check's own message.
fn explain(
    name: &str,
    language: CodeLanguage,
    program: &str,
    outcome: &CodeOutcome,
    check: impl FnOnce(),
) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(check)) {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied());
        let Some(message) = message else {
            resume_unwind(panic)
        };
        panic!(
            "row {name} failed in {language:?}: {}\n--- program:\n{}\n--- outcome:\n{}",
            cut(message),
            cut(program),
            cut(&format!("{outcome:#?}"))
        );
    }
}

/// `text`, or its first 4000 bytes (to a character boundary) and how much was left out.
fn cut(text: &str) -> String {
    const KEEP: usize = 4000;
    if text.len() <= KEEP {
        return text.to_owned();
    }
    let end = (0..=KEEP)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap();
    format!("{}… ({} more bytes)", &text[..end], text.len() - end)
}
