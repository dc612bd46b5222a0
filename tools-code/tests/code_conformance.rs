//! What every Code Mode runtime does alike, through [`CodeRuntime`]: each case is written once,
//! with its program in each language (`R::pick(typescript, python)`) and, where the languages do
//! not change it, one expectation; it runs as one test per runtime, `typescript::<case>` and
//! `python::<case>`, so a failure names its case and its runtime.
//!
//! What only one runtime does (its language's values and syntax, its engine's limits, the
//! Python zygote, the TypeScript thread pool) is tested in `code_typescript` and `code_python`.
//! Every hostile case asserts the exact failure kind and then that the runtime is healthy
//! ([`TestRuntime::assert_healthy`]).
//!
//! [`CodeRuntime`]: tools_code::CodeRuntime
#![cfg(any(feature = "typescript", feature = "python"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::code_support;

use std::sync::atomic::Ordering;

use code_support::{
    BARRIER_SIZE, TestHost, TestRuntime, deadline_limits, fail, hostile, hostile_limits,
    hostile_with, ok, ordinary_limits, run_with, shared,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_code::CodeFailureKind;

/// Makes each case a test per runtime: `typescript::<case>` and `python::<case>` call the
/// case's function with that runtime, each under the cargo feature of its runtime.
macro_rules! for_each_runtime {
    ($($case:ident),* $(,)?) => {
        for_each_runtime!(@runtime typescript, "typescript", TypeScriptRuntime: $($case),*);
        for_each_runtime!(@runtime python, "python", PythonRuntime: $($case),*);
    };
    (@runtime $module:ident, $feature:literal, $runtime:ident: $($case:ident),*) => {
        #[cfg(feature = $feature)]
        mod $module {
            use tools_code::$runtime;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case::<$runtime>().await;
                }
            )*
        }
    };
}

for_each_runtime!(
    // ordinary behaviour
    no_return_means_no_result,
    tool_results_arrive_as_values,
    tool_call_error_can_be_caught,
    uncaught_tool_call_error_fails_with_its_line,
    concurrent_calls_overlap_on_the_host,
    cancellation_mid_call_aborts_the_run_and_the_call,
    unicode_in_logs_and_tool_names,
    // hostile programs
    busy_loop_times_out,
    a_loop_that_swallows_every_exception_times_out,
    catastrophic_regex_times_out,
    uncaught_memory_bomb_is_a_memory_failure,
    caught_memory_bomb_is_still_a_memory_failure,
    deep_recursion_is_a_runtime_error,
    output_flood_hits_the_output_limit,
    one_huge_log_line_hits_the_output_limit,
    a_never_settling_call_times_out_and_is_aborted,
    ten_thousand_concurrent_calls,
    a_program_over_the_size_cap_is_refused_before_it_runs,
);

// --- ordinary behaviour -------------------------------------------------------------------

async fn no_return_means_no_result<R: TestRuntime>() {
    let rt = R::for_tests();
    for (typescript, python, expected) in [
        ("console.log('x')", "print('x')", None),
        ("return undefined;", "return None", None),
        ("", "", None),
        ("return 'text';", "return 'text'", Some(json!("text"))),
    ] {
        let program = R::pick(typescript, python);
        assert_eq!(ok(&rt, program).await.result, expected, "{program:?}");
    }
}

async fn tool_results_arrive_as_values<R: TestRuntime>() {
    let rt = R::for_tests();
    let host = TestHost::new();
    let program = R::pick(
        "const r = await tools.echo({ a: [1, { b: 'c' }] });\nconst empty = await tools.echo();\nreturn [r, empty];",
        "r = await tools.echo({'a': [1, {'b': 'c'}]})\nempty = await tools.echo()\nreturn [r, empty]",
    );
    let done = run_with(&rt, &host, program, &ordinary_limits())
        .await
        .unwrap();
    assert_eq!(
        done.result,
        Some(json!([
            { "tool": "echo", "args": { "a": [1, { "b": "c" }] } },
            { "tool": "echo", "args": {} }
        ]))
    );
}

async fn tool_call_error_can_be_caught<R: TestRuntime>() {
    let rt = R::for_tests();
    let program = R::pick(
        r#"
        try {
            await tools.fail({});
            return "not reached";
        } catch (e) {
            return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message, String(e)];
        }
        "#,
        "try:\n    await tools.fail({})\nexcept ToolCallError as e:\n    return [isinstance(e, ToolCallError), isinstance(e, Exception), type(e).__name__, e.tool_name, e.message, str(e)]\nreturn 'not reached'",
    );
    let done = ok(&rt, program).await;
    // The error as the language prints it: `String(e)`, `str(e)`.
    let text = R::pick("ToolCallError: boom", "boom");
    assert_eq!(
        done.result,
        Some(json!([true, true, "ToolCallError", "fail", "boom", text]))
    );
}

async fn uncaught_tool_call_error_fails_with_its_line<R: TestRuntime>() {
    let rt = R::for_tests();
    let program = R::pick(
        "console.log('before');\nconst x = 1;\nawait tools.fail({ x });\n",
        "print('before')\nx = 1\nawait tools.fail({'x': x})\n",
    );
    let failure = fail(&rt, program, &ordinary_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime);
    assert!(failure.message.contains("boom"), "{}", failure.message);
    assert!(failure.message.contains("fail"), "{}", failure.message);
    assert_eq!(failure.logs, vec!["before"]);
    // In TypeScript, a call that fails at once is rejected while the program's frame is on the
    // stack.
    assert_eq!(failure.line, Some(3));
}

/// `Promise.all`, `asyncio.gather`.
async fn concurrent_calls_overlap_on_the_host<R: TestRuntime>() {
    let rt = R::for_tests();
    let host = TestHost::new();
    // Each `barrier` call waits until BARRIER_SIZE calls wait together: the run can only
    // finish if the calls are in flight at the same time.
    let program = R::pick(
        format!(
            "const r = await Promise.all(Array.from({{ length: {BARRIER_SIZE} }}, () => tools.barrier({{}})));\nreturn r;"
        ),
        format!(
            "import asyncio\nr = await asyncio.gather(*[tools.barrier({{}}) for _ in range({BARRIER_SIZE})])\nreturn r"
        ),
    );
    let done = run_with(&rt, &host, &program, &ordinary_limits())
        .await
        .unwrap();
    assert_eq!(done.result, Some(json!(vec![true; BARRIER_SIZE])));
    assert_eq!(host.peak.load(Ordering::SeqCst), BARRIER_SIZE);
}

async fn cancellation_mid_call_aborts_the_run_and_the_call<R: TestRuntime>() {
    let rt = R::for_tests();
    let host = TestHost::new();
    let cancel = CancellationToken::new();
    let run = rt.run(
        R::pick(
            "console.log('waiting'); await tools.never({}); return 1;",
            "print('waiting')\nawait tools.never({})\nreturn 1",
        ),
        shared(host.clone()),
        &ordinary_limits(),
        cancel.clone(),
    );
    let task = tokio::spawn(run);
    host.never_started.notified().await;
    cancel.cancel();
    let failure = task.await.unwrap().unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Aborted);
    assert_eq!(failure.logs, vec!["waiting"]);
    assert_eq!(host.never_dropped.load(Ordering::SeqCst), 1);
    rt.assert_healthy().await;
}

async fn unicode_in_logs_and_tool_names<R: TestRuntime>() {
    let rt = R::for_tests();
    let host = TestHost::with_names(&["émoji-🚀", "日本語"]);
    let program = R::pick(
        "console.log('héllo 🌍', '日本');\nconst a = await tools['émoji-🚀']({ s: '✓' });\nconst b = await tools['日本語']({});\nreturn [a.tool, a.args.s, b.tool];",
        "print('héllo 🌍', '日本')\na = await tools['émoji-🚀']({'s': '✓'})\nb = await tools.日本語({})\nreturn [a['tool'], a['args']['s'], b['tool']]",
    );
    let done = run_with(&rt, &host, program, &ordinary_limits())
        .await
        .unwrap();
    assert_eq!(done.logs, vec!["héllo 🌍 日本"]);
    assert_eq!(done.result, Some(json!(["émoji-🚀", "✓", "日本語"])));
    // A lone surrogate cannot be JSON: a log line gets a replacement (U+FFFD in TypeScript, `?`
    // in Python), a result is refused.
    let program = R::pick(
        "console.log('\\uD800'); return '\\uD800';",
        "print('\\ud800')\nreturn '\\ud800'",
    );
    let failure = fail(&rt, program, &hostile_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::InvalidResult);
    assert_eq!(failure.logs, vec![R::pick("\u{FFFD}", "?")]);
}

// --- hostile programs -----------------------------------------------------------------------

async fn busy_loop_times_out<R: TestRuntime>() {
    let program = R::pick("while (true) {}", "while True:\n    pass");
    hostile::<R>(program, CodeFailureKind::Timeout).await;
}

async fn a_loop_that_swallows_every_exception_times_out<R: TestRuntime>() {
    let program = R::pick(
        "for (;;) { try { while (true) {} } catch (e) {} finally { continue; } }",
        "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass",
    );
    hostile::<R>(program, CodeFailureKind::Timeout).await;
}

async fn catastrophic_regex_times_out<R: TestRuntime>() {
    let program = R::pick(
        r#"return /^(a+)+$/.test("a".repeat(40) + "!");"#,
        "import re\nreturn bool(re.match(r'^(a+)+$', 'a' * 40 + '!'))",
    );
    hostile::<R>(program, CodeFailureKind::Timeout).await;
}

async fn uncaught_memory_bomb_is_a_memory_failure<R: TestRuntime>() {
    let program = R::pick(
        "const keep = []; while (true) keep.push(new Array(100000).fill(keep.length));",
        "keep = []\nwhile True:\n    keep.append(bytearray(1 << 20))",
    );
    hostile::<R>(program, CodeFailureKind::Memory).await;
}

async fn caught_memory_bomb_is_still_a_memory_failure<R: TestRuntime>() {
    let program = R::pick(
        r#"
        let caught = 0;
        for (let round = 0; round < 3; round++) {
            try {
                const keep: number[][] = [];
                while (true) keep.push(new Array(100000).fill(round));
            } catch (e) {
                caught++;
            }
        }
        return caught;
        "#,
        "keep = []\ntry:\n    while True:\n        keep.append(bytearray(1 << 20))\nexcept MemoryError:\n    pass\nreturn len(keep)",
    );
    let failure = hostile::<R>(program, CodeFailureKind::Memory).await;
    assert!(failure.message.contains("memory"), "{}", failure.message);
}

async fn deep_recursion_is_a_runtime_error<R: TestRuntime>() {
    let program = R::pick(
        "function f(n: number): number { return f(n + 1) + 1; }\nreturn f(0);",
        "def f(n):\n    return f(n + 1) + 1\nreturn f(0)",
    );
    let failure = hostile::<R>(program, CodeFailureKind::Runtime).await;
    let needle = R::pick("stack", "RecursionError");
    assert!(failure.message.contains(needle), "{}", failure.message);
    // Caught, it is an ordinary error the program can recover from.
    let program = R::pick(
        "function f(n: number): number { return f(n + 1) + 1; }\ntry { f(0) } catch (e) { return e.name }",
        "def f(n):\n    return f(n + 1) + 1\ntry:\n    f(0)\nexcept Exception as e:\n    return type(e).__name__",
    );
    let done = ok(&R::for_tests(), program).await;
    let name = R::pick("RangeError", "RecursionError");
    assert_eq!(done.result, Some(json!(name)));
}

async fn output_flood_hits_the_output_limit<R: TestRuntime>() {
    // The output limit, not the deadline, must stop it, even on a slow machine.
    let limits = ordinary_limits().with_max_output_bytes(64 * 1024);
    let program = R::pick(
        "while (true) console.log('flooding the log');",
        "while True:\n    print('flooding the log')",
    );
    let failure = hostile_with::<R>(program, CodeFailureKind::OutputLimit, &limits).await;
    let kept: usize = failure.logs.iter().map(String::len).sum();
    assert!(!failure.logs.is_empty());
    assert!(kept <= 64 * 1024);
}

async fn one_huge_log_line_hits_the_output_limit<R: TestRuntime>() {
    let limits = ordinary_limits().with_max_output_bytes(1024 * 1024);
    let program = R::pick(
        "console.log('small'); console.log('x'.repeat(2 * 1024 * 1024)); return 1;",
        "print('small')\nprint('x' * (2 << 20))\nreturn 1",
    );
    let failure = hostile_with::<R>(program, CodeFailureKind::OutputLimit, &limits).await;
    assert_eq!(failure.logs, vec!["small"]);
}

async fn a_never_settling_call_times_out_and_is_aborted<R: TestRuntime>() {
    let rt = R::for_tests();
    let host = TestHost::new();
    let program = R::pick("await tools.never({});", "await tools.never({})");
    let failure = run_with(&rt, &host, program, &deadline_limits())
        .await
        .unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Timeout);
    assert_eq!(
        host.never_dropped.load(Ordering::SeqCst),
        1,
        "the call was not aborted"
    );
    rt.assert_healthy().await;
}

async fn ten_thousand_concurrent_calls<R: TestRuntime>() {
    let rt = R::for_tests();
    let host = TestHost::new();
    let program = R::pick(
        "const r = await Promise.all(Array.from({ length: 10000 }, (_, i) => tools.echo({ i })));\nreturn r.length + r[9999].args.i;",
        "import asyncio\nr = await asyncio.gather(*(tools.echo({'i': i}) for i in range(10000)))\nreturn len(r) + r[9999]['args']['i']",
    );
    let done = run_with(&rt, &host, program, &ordinary_limits())
        .await
        .unwrap();
    assert_eq!(done.result, Some(json!(19999)));
    assert_eq!(host.calls(), 10000);
    rt.assert_healthy().await;
}

async fn a_program_over_the_size_cap_is_refused_before_it_runs<R: TestRuntime>() {
    let rt = R::for_tests();
    let host = TestHost::new();
    let limit = tools_code::MAX_PROGRAM_BYTES;
    // A comment line that makes the program one byte over the cap, after a call that would be
    // made if any of it ran.
    let call = R::pick("await tools.echo({});\n", "await tools.echo({})\n");
    let comment = R::pick("//", "#");
    let filler = limit + 1 - call.len() - comment.len();
    let program = format!("{call}{comment}{}", "x".repeat(filler));
    assert_eq!(program.len(), limit + 1);
    let failure = run_with(&rt, &host, &program, &ordinary_limits())
        .await
        .unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Syntax, "{failure:?}");
    assert_eq!(
        failure.message,
        format!(
            "the program is {} bytes long; the limit is {limit} bytes",
            limit + 1
        )
    );
    assert_eq!(host.calls(), 0, "nothing of it ran");
    // At the cap it runs.
    let at_cap = &program[..program.len() - 1];
    assert!(
        run_with(&rt, &host, at_cap, &ordinary_limits())
            .await
            .is_ok()
    );
    assert_eq!(host.calls(), 1);
}
