//! The edges of a TypeScript run (issue 24, items 6, 8 and 9): what one call's arguments, a
//! result, a log line or an error message can make the run do, at every size, and what a run
//! makes the host hold.
//!
//! - A bad argument (a graph whose text would be huge, a cycle, nesting too deep) rejects that
//!   one call: the program catches the error, goes on, and the host never sees the call.
//! - Arguments are measured in UTF-8 bytes of JSON text against `max_call_bytes`: at the cap
//!   they cross, one byte over it they are a catchable `RangeError`, whatever the characters.
//! - A result, a log line or an error message past `max_output_bytes` is the run's
//!   `output_limit` failure at every size, never a memory failure or a timeout.
#![cfg(feature = "typescript")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::code_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use code_support::{TestHost, ordinary_limits, shared};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_code::{
    CODE_RUN_FAILED, CodeCompletion, CodeFailure, CodeFailureKind, CodeHost, CodeLimits, CodeMode,
    CodeOutcome, CodeRuntime, DEFAULT_MAX_CALL_BYTES, FnHost, TypeScriptRuntime,
};
use tools_runtime::{Output, PresentationMode, ToolCall, ToolDefinition, ToolRuntime};

const MIB: usize = 1024 * 1024;

fn runtime() -> TypeScriptRuntime {
    TypeScriptRuntime::with_max_threads(1)
}

/// Runs `program` against a fresh [`TestHost`]; returns the outcome and the host.
async fn run(program: &str, limits: &CodeLimits) -> (CodeOutcome, Arc<TestHost>) {
    let rt = runtime();
    let host = TestHost::new();
    let run = rt.run(
        program,
        shared(host.clone()),
        limits,
        CancellationToken::new(),
    );
    // A hang is a failure, not a stuck test.
    let outcome = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the run did not end");
    (outcome, host)
}

async fn completes(program: &str, limits: &CodeLimits) -> (CodeCompletion, Arc<TestHost>) {
    match run(program, limits).await {
        (Ok(done), host) => (done, host),
        (Err(failure), _) => panic!(
            "expected a completion, got {}: {}",
            failure.kind,
            cut(&failure.message)
        ),
    }
}

async fn fails(program: &str, limits: &CodeLimits, kind: CodeFailureKind) -> CodeFailure {
    match run(program, limits).await {
        (Ok(done), _) => panic!("expected a {kind} failure, got {done:?}"),
        (Err(failure), _) => {
            assert_eq!(failure.kind, kind, "{}", cut(&failure.message));
            failure
        }
    }
}

/// The start of a long message, for assertion output.
fn cut(message: &str) -> String {
    message.chars().take(400).collect()
}

/// A program that makes the bad call `call`, catches what it rejects with, makes a normal call
/// after, and returns `[error name, error message, the normal call's tool]`.
fn catches(setup: &str, call: &str) -> String {
    format!(
        "{setup}\nlet caught: any = null;\ntry {{ await {call}; }} catch (e) {{ caught = e; }}\n\
         const after = await tools.echo({{ ok: true }});\n\
         return [caught === null ? null : caught.name, caught === null ? null : caught.message, after.tool];"
    )
}

/// Runs a [`catches`] program: the bad call was rejected with `name`, the normal call went
/// through, and the host saw only the normal call. Returns the rejection's message.
async fn rejected_alone(setup: &str, call: &str, limits: &CodeLimits, name: &str) -> String {
    let (done, host) = completes(&catches(setup, call), limits).await;
    let result = done.result.expect("the program returns");
    assert_eq!(result[0], json!(name), "{}", cut(&result.to_string()));
    assert_eq!(result[2], json!("echo"), "the call after went through");
    assert_eq!(host.calls(), 1, "the host saw only the call after");
    result[1].as_str().unwrap().to_owned()
}

// --- item 8: a bad argument rejects its call, not the run ----------------------------------

/// Ten arrays of ten, nine times over: ten objects whose text would be 10^10 zeros.
const HUGE_DAG: &str = "let a: any = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];\n\
     for (let i = 0; i < 9; i++) a = [a, a, a, a, a, a, a, a, a, a];";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_whose_text_is_huge_rejects_only_its_call() {
    let message = rejected_alone(
        HUGE_DAG,
        "tools.echo({ x: a })",
        &ordinary_limits(),
        "RangeError",
    )
    .await;
    // Which limit, and where the text passed it.
    assert!(
        message.starts_with("args is at least "),
        "{}",
        cut(&message)
    );
    assert!(
        message.contains(&format!(
            "more than the {DEFAULT_MAX_CALL_BYTES} bytes one call may send (max_call_bytes)"
        )),
        "{}",
        cut(&message)
    );
    assert!(
        message.contains("it passes the limit at args.x[0]"),
        "{}",
        cut(&message)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cycle_rejects_only_its_call() {
    let message = rejected_alone(
        "const a: any = { list: [1, 2] }; a.list.push({ back: a });",
        "tools.echo({ x: a })",
        &ordinary_limits(),
        "TypeError",
    )
    .await;
    assert!(
        message.starts_with("args.x.list[2].back is a cycle (it contains itself)"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nesting_ten_thousand_deep_rejects_only_its_call() {
    let message = rejected_alone(
        "let a: any = []; for (let i = 0; i < 10000; i++) a = [a];",
        "tools.echo({ x: a })",
        &ordinary_limits(),
        "TypeError",
    )
    .await;
    assert!(
        message.starts_with(&format!("args.x{}", "[0]".repeat(98))),
        "{}",
        cut(&message)
    );
    assert!(
        message.contains("nests deeper than 100 levels"),
        "{}",
        cut(&message)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_that_fits_crosses_whole() {
    // Shared objects are written out in full each time they are met, however often, and a
    // shared object met again deeper than it may nest is refused there.
    let (done, host) = completes(
        "let a: any = [0, 'x'.repeat(300), { k: [true, null] }];\n\
         for (let i = 0; i < 3; i++) a = [a, a, { a }, a];\n\
         const r = await tools.echo({ x: a, y: a });\n\
         const same = JSON.stringify(r.args) === JSON.stringify({ x: a, y: a });\n\
         let deep: any = [1]; for (let i = 0; i < 60; i++) deep = [deep];\n\
         const shared = [deep, 'y'.repeat(300)];\n\
         let outer: any = shared; for (let i = 0; i < 50; i++) outer = [outer];\n\
         let m = '';\n\
         try { await tools.echo([shared, outer]); } catch (e) { m = e.message; }\n\
         return [same, m];",
        &ordinary_limits(),
    )
    .await;
    let result = done.result.unwrap();
    assert_eq!(result[0], json!(true), "the host got the same value");
    let message = result[1].as_str().unwrap();
    assert!(
        message.starts_with(&format!("args[1]{}", "[0]".repeat(50))),
        "{message}"
    );
    assert!(
        message.contains("nests deeper than 100 levels"),
        "{message}"
    );
    assert_eq!(host.calls(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_whose_text_is_huge_is_the_output_limit() {
    let failure = fails(
        &format!("{HUGE_DAG}\nreturn a;"),
        &ordinary_limits(),
        CodeFailureKind::OutputLimit,
    )
    .await;
    assert!(failure.message.contains("max_output_bytes"), "{failure:?}");
}

// --- item 9: arguments at every size -------------------------------------------------------

/// A program that sends `{ s }` (`s` built by `expr`) and returns what the host got back
/// (`["sent", length]`) or what the call was rejected with (`[name, message]`).
fn send_string(expr: &str) -> String {
    format!(
        "const s: string = {expr};\n\
         try {{ const r = await tools.echo({{ s }}); return ['sent', r.args.s.length, r.args.s === s]; }}\n\
         catch (e) {{ return [e.name, e.message]; }}"
    )
}

/// Sends `{ s }` whose JSON text is `bytes` long and checks what happened against `cap`.
async fn at_size(expr: &str, bytes: usize, limits: &CodeLimits) {
    let cap = limits.max_call_bytes;
    let (done, host) = completes(&send_string(expr), limits).await;
    let result = done.result.unwrap();
    if bytes <= cap {
        assert_eq!(result[0], json!("sent"), "{bytes} bytes: {result}");
        assert_eq!(result[2], json!(true), "{bytes} bytes arrived whole");
        assert_eq!(host.calls(), 1);
    } else {
        assert_eq!(result[0], json!("RangeError"), "{bytes} bytes");
        let message = result[1].as_str().unwrap();
        assert!(
            message.starts_with(&format!("args is at least {bytes} bytes of JSON text, more than the {cap} bytes one call may send (max_call_bytes); it passes the limit at args.s")),
            "{bytes} bytes: {message}"
        );
        assert_eq!(host.calls(), 0, "the host never saw it");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_string_argument_at_the_default_cap_crosses_and_one_byte_more_is_a_range_error() {
    // `{"s":"…"}` is the string and 8 bytes. The default limits: 256 MiB of memory hold the
    // program's string and every copy a call makes of it.
    let limits = ordinary_limits();
    let cap = DEFAULT_MAX_CALL_BYTES;
    for bytes in [12 * MIB, cap - 1, cap, cap + 1, 17 * MIB, 32 * MIB] {
        at_size(&format!("'x'.repeat({})", bytes - 8), bytes, &limits).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_byte_text_at_the_default_cap_is_counted_in_utf8_bytes() {
    // Five million euro signs (3 bytes each, one UTF-16 unit) and ASCII to reach the size.
    let limits = ordinary_limits();
    let cap = DEFAULT_MAX_CALL_BYTES;
    let euros = 5_000_000;
    for bytes in [cap, cap + 1] {
        let rest = bytes - 8 - 3 * euros;
        at_size(
            &format!("'\\u20ac'.repeat({euros}) + 'x'.repeat({rest})"),
            bytes,
            &limits,
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_character_counts_as_its_json_text() {
    // Each unit is a string whose JSON text (in UTF-8) is `size` bytes; `n` of them and ASCII
    // up to the size make texts of cap - 1, cap and cap + 1 bytes.
    let cap = 10_000;
    let limits = ordinary_limits().with_max_call_bytes(cap);
    for (unit, size) in [
        ("x", 1),
        ("\\u00e9", 2),        // é: 2 bytes
        ("\\u20ac", 3),        // €: 3 bytes
        ("\\ud83d\\ude80", 4), // a rocket: a surrogate pair, 4 bytes
        ("\\\"", 2),           // a quote, escaped
        ("\\\\", 2),           // a backslash, escaped
        ("\\n", 2),            // a newline, escaped
        ("\\u0001", 6),        // a control character, escaped as \u0001
        ("\\u007f", 1),        // DEL is not escaped
        ("\\u2028", 3),        // nor is the line separator
    ] {
        let n = 1000;
        for bytes in [cap - 1, cap, cap + 1] {
            let rest = bytes - 8 - n * size;
            at_size(
                &format!("'{unit}'.repeat({n}) + 'x'.repeat({rest})"),
                bytes,
                &limits,
            )
            .await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_count_too_and_the_path_names_where_the_cap_was_passed() {
    let limits = ordinary_limits().with_max_call_bytes(1000);
    let message = rejected_alone(
        "const args: any = { list: [] }; for (let i = 0; i < 100; i++) args.list.push({ ['k\\u00e9' + i]: i });",
        "tools.echo(args)",
        &limits,
        "RangeError",
    )
    .await;
    // `{"list":[` is 9 bytes; entry i is `{"ké<i>":<i>}`, 10 bytes while i has one digit and
    // 12 with two, with a comma before all but the first: 989 bytes up to entry 76. Entry 77's
    // comma, brace and key (`"ké77":`, 8 bytes) make 999, and its object, the array and the
    // root each need a closing bracket: 1,002.
    assert_eq!(
        message,
        "args is at least 1002 bytes of JSON text, more than the 1000 bytes one call may send \
         (max_call_bytes); it passes the limit at args.list[77][\"k\u{e9}77\"]"
    );
}

// --- item 9: output at every size --------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_a_log_line_or_a_result_past_the_output_limit_is_the_output_limit_at_every_size()
{
    let limits = ordinary_limits().with_max_output_bytes(MIB);
    for mib in [8, 12, 16, 32, 64] {
        let text = format!("'x'.repeat({mib} * 1024 * 1024)");
        for program in [
            format!("throw new Error({text});"),
            format!("throw new ToolCallError('echo', {text});"),
            format!("Promise.reject(new Error({text})); return 1;"),
            format!("console.log({text});"),
            format!("console.log('a', {text}, 'b');"),
            format!("console.log({{ s: {text} }});"),
            format!("return {text};"),
            format!("return {{ s: {text} }};"),
        ] {
            let failure = fails(&program, &limits, CodeFailureKind::OutputLimit).await;
            assert!(
                failure.message.contains("max_output_bytes = 1048576 bytes"),
                "{program}: {}",
                cut(&failure.message)
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_error_message_under_the_output_limit_is_reported_whole() {
    // The default limits: a 16 MiB message is under the 64 MiB of output.
    let failure = fails(
        "throw new Error('m'.repeat(16 * 1024 * 1024));",
        &ordinary_limits(),
        CodeFailureKind::Runtime,
    )
    .await;
    assert_eq!(failure.message.len(), "Error: ".len() + 16 * MIB);
    let failure = fails(
        "throw new ToolCallError('echo', '\\u20ac'.repeat(4 * 1024 * 1024));",
        &ordinary_limits(),
        CodeFailureKind::Runtime,
    )
    .await;
    assert!(
        failure
            .message
            .starts_with("ToolCallError from tool \"echo\": \u{20ac}")
    );
    assert_eq!(
        failure.message.len(),
        "ToolCallError from tool \"echo\": ".len() + 12 * MIB
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_at_the_limit_fits_and_one_byte_more_does_not() {
    let cap = 1000;
    let limits = ordinary_limits().with_max_output_bytes(cap);
    // A result is its JSON text: 499 two-byte characters and the quotes.
    let (done, _) = completes("return '\\u00e9'.repeat(499);", &limits).await;
    assert_eq!(done.result, Some(Value::from("\u{e9}".repeat(499))));
    fails(
        "return '\\u00e9'.repeat(499) + 'x';",
        &limits,
        CodeFailureKind::OutputLimit,
    )
    .await;
    // A log line is its text: 333 three-byte characters and one more byte.
    let (done, _) = completes("console.log('\\u20ac'.repeat(333) + 'x');", &limits).await;
    assert_eq!(done.logs[0].len(), cap);
    fails(
        "console.log('\\u20ac'.repeat(333) + 'xy');",
        &limits,
        CodeFailureKind::OutputLimit,
    )
    .await;
    // A message is its text, after `Error: `.
    let failure = fails(
        &format!("throw new Error('x'.repeat({}));", cap - "Error: ".len()),
        &limits,
        CodeFailureKind::Runtime,
    )
    .await;
    assert_eq!(failure.message.len(), cap);
    fails(
        &format!(
            "throw new Error('x'.repeat({}));",
            cap + 1 - "Error: ".len()
        ),
        &limits,
        CodeFailureKind::OutputLimit,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_whose_description_is_huge_or_deep_are_bounded_in_logs_and_errors() {
    // One 1 MiB string a thousand times: its description would be a gigabyte.
    let many = "const s = 'x'.repeat(1024 * 1024); const a: string[] = []; for (let i = 0; i < 1000; i++) a.push(s);";
    fails(
        &format!("{many}\nconsole.log(a);"),
        &ordinary_limits(),
        CodeFailureKind::OutputLimit,
    )
    .await;
    let failure = fails(
        &format!("{many}\nthrow a;"),
        &ordinary_limits(),
        CodeFailureKind::Runtime,
    )
    .await;
    assert!(
        failure
            .message
            .contains("a value whose description is longer than the output may be"),
        "{}",
        cut(&failure.message)
    );
    // Nested 100,000 deep: described down to 100 levels, in a log line and in an error.
    let deep = "let a: any = []; for (let i = 0; i < 100000; i++) a = [a];";
    let (done, _) = completes(
        &format!("{deep}\nconsole.log(a); return 1;"),
        &ordinary_limits(),
    )
    .await;
    assert_eq!(
        done.logs[0],
        format!("{}\"[Array]\"{}", "[".repeat(100), "]".repeat(100))
    );
    let failure = fails(
        &format!("{deep}\nthrow a;"),
        &ordinary_limits(),
        CodeFailureKind::Runtime,
    )
    .await;
    assert!(
        failure
            .message
            .starts_with("the program threw a non-Error value: [[[["),
        "{}",
        cut(&failure.message)
    );
    // A value that contains itself: shown once, then `[Circular]`.
    let cycle = "const c: any = { a: 1 }; c.self = c;";
    let (done, _) = completes(
        &format!("{cycle}\nconsole.log(c); return 1;"),
        &ordinary_limits(),
    )
    .await;
    assert_eq!(done.logs[0], r#"{"a":1,"self":"[Circular]"}"#);
    let failure = fails(
        &format!("{cycle}\nthrow c;"),
        &ordinary_limits(),
        CodeFailureKind::Runtime,
    )
    .await;
    assert_eq!(
        failure.message,
        r#"the program threw a non-Error value: {"a":1,"self":"[Circular]"}"#
    );
}

// --- item 6: what a run makes the host hold ----------------------------------------------

/// The size of one `big` answer.
const ANSWER_BYTES: usize = 64 * 1024;

/// A host whose calls answer later: `big` yields once and answers a 64 KiB string, `hold`
/// never answers (and keeps its arguments), anything else answers `true` after a yield.
struct LaterHost {
    calls: AtomicUsize,
}

impl LaterHost {
    /// The host of one run, counting its calls in `self`.
    fn host(self: &Arc<Self>) -> Arc<dyn CodeHost> {
        let this = self.clone();
        Arc::new(FnHost::new(
            ["big", "hold", "small"],
            move |name: &str, args: Value| {
                this.calls.fetch_add(1, Ordering::SeqCst);
                let name = name.to_owned();
                async move {
                    tokio::task::yield_now().await;
                    match name.as_str() {
                        "big" => Ok(Value::String("a".repeat(ANSWER_BYTES))),
                        "hold" => {
                            let _kept = args;
                            std::future::pending::<()>().await;
                            Ok(Value::Null)
                        }
                        _ => Ok(Value::Bool(true)),
                    }
                }
            },
        ))
    }
}

/// Runs `program` against a fresh [`LaterHost`] with a 32 MiB memory limit.
async fn run_later(program: &str) -> (CodeOutcome, Arc<LaterHost>) {
    let host = Arc::new(LaterHost {
        calls: AtomicUsize::new(0),
    });
    let limits = ordinary_limits().with_memory_bytes(32 * MIB);
    // The runtime outlives the run: dropping its last handle would cancel the run.
    let rt = runtime();
    let run = rt.run(program, host.host(), &limits, CancellationToken::new());
    let outcome = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the run did not end");
    (outcome, host)
}

fn held_by_the_host(failure: &CodeFailure) {
    assert_eq!(failure.kind, CodeFailureKind::Memory, "{}", failure.message);
    assert!(
        failure.message.starts_with(&format!(
            "the program exceeded its memory limit of {} bytes, counting ",
            32 * MIB
        )),
        "{}",
        failure.message
    );
    assert!(
        failure
            .message
            .contains("bytes the host held for its tool calls"),
        "{}",
        failure.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_a_busy_program_never_takes_count_against_its_memory_limit() {
    // 1,000 answers of 64 KiB (62.5 MiB) for a run of 32 MiB, which never yields to take them:
    // before they were counted, the host held them all until the deadline.
    let (outcome, _) =
        run_later("for (let i = 0; i < 1000; i++) tools.big({});\nwhile (true) {}").await;
    held_by_the_host(&outcome.unwrap_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_answers_taken_as_they_come_fit() {
    let (outcome, host) = run_later(
        "let n = 0;\nfor (let i = 0; i < 1000; i++) n += (await tools.big({})).length;\nreturn n;",
    )
    .await;
    assert_eq!(outcome.unwrap().result, Some(json!(1000 * ANSWER_BYTES)));
    assert_eq!(host.calls.load(Ordering::SeqCst), 1000);
    // Started together and awaited at the end, as long as they fit the limit together.
    let (outcome, _) = run_later(
        "const all: Promise<string>[] = [];\nfor (let i = 0; i < 100; i++) all.push(tools.big({}));\n\
         let n = 0;\nfor (const one of all) n += (await one).length;\nreturn n;",
    )
    .await;
    assert_eq!(outcome.unwrap().result, Some(json!(100 * ANSWER_BYTES)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_of_calls_in_flight_count_against_the_memory_limit() {
    // Each call hands the host its own copy of a 1 MiB string that the program holds once.
    let (outcome, host) = run_later(
        "const s = 'x'.repeat(1024 * 1024);\nfor (let i = 0; i < 100; i++) tools.hold({ s });\nawait tools.hold({});",
    )
    .await;
    held_by_the_host(&outcome.unwrap_err());
    let calls = host.calls.load(Ordering::SeqCst);
    assert!(
        calls > 0 && calls < 32,
        "the host was handed no more than the limit: {calls} calls of 1 MiB"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_run_code_the_answers_a_program_never_takes_are_a_memory_failure() {
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(runtime()).limits(ordinary_limits().with_memory_bytes(32 * MIB)))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let big = ToolDefinition::builder("big")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "string"})))
        .concurrency_safe(|_| true)
        .execute(|_args, _ctx| async move {
            tokio::task::yield_now().await;
            Ok(Value::String("a".repeat(ANSWER_BYTES)))
        })
        .build()
        .unwrap();
    let _registered = plugin.register(big).unwrap();
    let call = ToolCall::new(
        "outer",
        "run_code",
        json!({
            "code": "for (let i = 0; i < 1000; i++) tools.big({});\nwhile (true) {}",
            "description": "never takes its answers"
        }),
    );
    let result = rt.execute(call).await;
    assert_eq!(result.code(), Some(CODE_RUN_FAILED));
    assert!(
        result.text().starts_with("Error: code run failed (memory)"),
        "{}",
        result.text()
    );
}
