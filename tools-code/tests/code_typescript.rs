//! The TypeScript Code Mode runtime: what only it does (its language's values and syntax,
//! QuickJS and its limits, the pool of engine threads); what every runtime does alike is in
//! `code_conformance`.
//!
//! Every hostile test asserts the exact failure kind and then that the runtime is healthy: the
//! next run on the same one-thread pool works and no worker thread was added or left stuck.
#![cfg(feature = "typescript")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::code_support;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use code_support::{
    PATCH_EVERYTHING, TestHost, TestRuntime, assert_cut, assert_refused_both_ways, fail, hostile,
    hostile_limits, hostile_with, ok, ordinary_limits, run_with, shared,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_code::{
    CodeCompletion, CodeFailureKind, CodeLanguage, CodeLimits, CodeRuntime, FnHost,
    MAX_STACK_BYTES, TypeScriptRuntime,
};

fn runtime() -> TypeScriptRuntime {
    TypeScriptRuntime::for_tests()
}

// --- ordinary behaviour -------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_and_return_value() {
    let rt = runtime();
    assert_eq!(rt.language(), CodeLanguage::TypeScript);
    let done = ok(
        &rt,
        r#"
        interface Point { x: number; y: number }
        const p: Point = { x: 1, y: 2 };
        console.log("point", p, [1, "two"], null, undefined, 3n, -0);
        console.info("info");
        console.warn("warn");
        console.error(new TypeError("bad"));
        return { sum: p.x + p.y, list: [true, null, "s"] };
        "#,
    )
    .await;
    assert_eq!(
        done.logs[0],
        r#"point {"x":1,"y":2} [1,"two"] null undefined 3n -0"#
    );
    assert_eq!(done.logs[1], "info");
    assert_eq!(done.logs[2], "warn");
    assert!(
        done.logs[3].starts_with("TypeError: bad"),
        "{}",
        done.logs[3]
    );
    assert_eq!(
        done.result,
        Some(json!({ "sum": 3, "list": [true, null, "s"] }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_is_kept_as_a_result() {
    // `undefined` is no result, as a run without `return` (code_conformance); `null` is a
    // JSON value.
    let rt = runtime();
    assert_eq!(ok(&rt, "return null;").await.result, Some(Value::Null));
    assert_eq!(ok(&rt, "return undefined;").await.result, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_errors_carry_the_program_line() {
    let rt = runtime();
    let failure = fail(
        &rt,
        "const a: number = 1;\n\nnull.boom();\n",
        &ordinary_limits(),
    )
    .await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime);
    assert!(
        failure.message.starts_with("TypeError"),
        "{}",
        failure.message
    );
    assert_eq!(failure.line, Some(3));
    // QuickJS places a `new Error(...)` frame at the constructor's name.
    let failure = fail(&rt, "throw new Error('first line')", &ordinary_limits()).await;
    assert_eq!(failure.line, Some(1));
    assert_eq!(failure.column, Some(11));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_stops_a_busy_program() {
    let rt = runtime();
    let host = TestHost::new();
    let cancel = CancellationToken::new();
    let run = rt.run(
        "await tools.echo({}); while (true) {}",
        shared(host.clone()),
        &ordinary_limits(),
        cancel.clone(),
    );
    let task = tokio::spawn(run);
    while host.calls() == 0 {
        tokio::task::yield_now().await;
    }
    cancel.cancel();
    let failure = task.await.unwrap().unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Aborted);
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_runtime_ends_its_threads() {
    let rt = runtime();
    rt.assert_healthy().await;
    let names = rt.worker_names();
    assert_eq!(names.len(), 1);
    drop(rt);
    let alive = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|entry| std::fs::read_to_string(entry.unwrap().path().join("comm")).ok())
        .any(|comm| names.contains(&comm.trim().to_owned()));
    assert!(
        !alive,
        "worker {names:?} still alive after the runtime was dropped"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_runtime_cancels_runs_in_flight() {
    let rt = runtime();
    let host = TestHost::new();
    let run = rt.run(
        "await tools.never({});",
        shared(host.clone()),
        &ordinary_limits(),
        CancellationToken::new(),
    );
    let task = tokio::spawn(run);
    host.never_started.notified().await;
    drop(rt);
    let failure = task.await.unwrap().unwrap_err();
    assert_eq!(failure.kind, CodeFailureKind::Aborted);
    assert_eq!(host.never_dropped.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_share_a_pool_but_not_state() {
    let rt = TypeScriptRuntime::with_max_threads(2);
    let host = TestHost::new();
    let runs: Vec<_> = (0..8)
        .map(|i| {
            rt.run(
                &format!("(globalThis as any).seen = (globalThis as any).seen ?? {i};\nreturn (globalThis as any).seen;"),
                shared(host.clone()),
                &ordinary_limits(),
                CancellationToken::new(),
            )
        })
        .collect();
    let results = futures::future::join_all(runs).await;
    for (i, result) in results.into_iter().enumerate() {
        assert_eq!(result.unwrap().result, Some(json!(i)));
    }
    assert!(rt.threads() <= 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_arguments_reach_the_host_as_their_json_text_would() {
    // A plain object of a few scalars is read by the host without its JSON text; with a nested
    // object beside them the prelude writes the text and the host parses it. Both must give
    // the host the same value, to the representation of each number and the order of keys.
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = received.clone();
    let host = FnHost::new(["echo"], move |_name: &str, args: Value| {
        seen.lock().unwrap().push(args);
        async { Ok(Value::Bool(true)) }
    });
    let program = r#"
        const plain: any = Object.create(null);
        plain.p = 1;
        plain.q = 'r';
        const cases: any[] = [
            {}, { n: 1 }, { n: -5 }, { n: 0 }, { f: 0.1 }, { f: -2.5e-7 }, { f: 1.5e300 },
            { x: 5.0 }, { big: 9007199254740991 }, { big: -9007199254740991 },
            { big: 9007199254740992 }, { big: 1e21 }, { big: 2 ** 31 }, { small: -(2 ** 31) },
            { t: true, f: false, z: null }, { s: 'plain text', e: '' },
            { '2': 'a', '1': 'b', b: 1, a: 2 }, plain, { q: 'say "hi"' }, { u: 'héllo' },
            { k: 'x'.repeat(300) }, { 'odd key': 1, 'k\\': 2 },
        ];
        for (const c of cases) {
            await tools.echo(c);
            await tools.echo({ ...c, nested: {} });
        }
        return cases.length;
    "#;
    let done = runtime()
        .run(
            program,
            Arc::new(host),
            &ordinary_limits(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let cases = done.result.unwrap().as_u64().unwrap() as usize;
    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 2 * cases);
    for pair in received.chunks(2) {
        let (read, mut parsed) = (pair[0].clone(), pair[1].clone());
        assert!(parsed.as_object_mut().unwrap().remove("nested").is_some());
        assert_eq!(read, parsed);
        assert_eq!(
            serde_json::to_string(&read).unwrap(),
            serde_json::to_string(&parsed).unwrap()
        );
    }
}

// --- hostile programs -----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_is_stopped_at_every_stack_limit() {
    // The smallest and the largest stack a run may ask for, and one in between: the engine's
    // stack check must hold at each (a missing check would overflow the thread's stack).
    for stack in [64 * 1024, 32 * 1024 * 1024, MAX_STACK_BYTES] {
        let limits = hostile_limits().with_stack_bytes(stack);
        let failure = hostile_with::<TypeScriptRuntime>(
            "function f(n: number): number { return f(n + 1) + 1; }\nreturn f(0);",
            CodeFailureKind::Runtime,
            &limits,
        )
        .await;
        assert!(
            failure.message.contains("stack"),
            "{stack}: {}",
            failure.message
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_result_hits_the_output_limit() {
    let limits = hostile_limits().with_max_output_bytes(1024);
    hostile_with::<TypeScriptRuntime>(
        "return 'x'.repeat(4096);",
        CodeFailureKind::OutputLimit,
        &limits,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promise_nothing_can_settle_fails_at_once() {
    let failure =
        hostile::<TypeScriptRuntime>("await new Promise(() => {});", CodeFailureKind::Runtime)
            .await;
    assert!(
        failure.message.contains("nothing can settle"),
        "{}",
        failure.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unawaited_calls_are_aborted_when_the_run_settles() {
    let rt = runtime();
    let host = TestHost::new();
    let done = run_with(
        &rt,
        &host,
        "tools.never({}); tools.never({}); return 'done';",
        &ordinary_limits(),
    )
    .await
    .unwrap();
    assert_eq!(done.result, Some(json!("done")));
    assert_eq!(host.never_dropped.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unhandled_rejection_fails_the_run() {
    let failure = hostile::<TypeScriptRuntime>(
        "tools.fail({}); await tools.echo({}); return 1;",
        CodeFailureKind::Runtime,
    )
    .await;
    assert!(failure.message.contains("unhandled"), "{}", failure.message);
    assert!(failure.message.contains("boom"), "{}", failure.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_cannot_break_the_bridge_by_patching_builtins() {
    let rt = runtime();
    let done = ok(
        &rt,
        r#"
        JSON.stringify = () => "{}";
        Array.isArray = () => false;
        Object.getPrototypeOf = () => null;
        RegExp.prototype.test = () => true;
        RegExp.prototype.exec = () => [""];
        (Promise as any).withResolvers = () => ({});
        const r = await tools.echo({ list: [1, 2] });
        const flat = await tools.echo({ quote: 'a","injected":"x', n: 1 });
        return [r.args, flat.args];
        "#,
    )
    .await;
    assert_eq!(
        done.result,
        Some(json!([{ "list": [1, 2] }, { "quote": "a\",\"injected\":\"x", "n": 1 }]))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flat_arguments_and_results_keep_every_value() {
    // Flat objects of scalars take a shortcut to JSON text; whatever needs escaping (or is not
    // a scalar) takes the general path. Both must give the same values.
    let rt = runtime();
    let program = r#"
        const args = {
            plain: "abc", quote: 'say "hi"', backslash: "a\\b", control: "tab\tnew\nline\u0001",
            astral: "\u{1F600}", bmp: "caf\u00e9 \u2028", empty: "",
            int: 42, neg: -7, frac: 0.1, big: 1e21, small: 5e-324, max: 1.7976931348623157e308,
            t: true, f: false, nothing: null,
            "key \"quoted\"": 1, "10": "ten", "2": "two", "\u00fc": 3, "": 4,
        };
        const r = await tools.echo(args);
        return { sent: JSON.stringify(args), got: r.args, back: args };
    "#;
    let done = ok(&rt, program).await;
    let result = done.result.unwrap();
    let sent: Value = serde_json::from_str(result["sent"].as_str().unwrap()).unwrap();
    assert_eq!(
        result["got"], sent,
        "the host got other values than JSON.stringify gives"
    );
    assert_eq!(
        result["back"], sent,
        "the result differs from JSON.stringify's text"
    );
    assert_eq!(sent["quote"], json!("say \"hi\""));
    assert_eq!(sent["control"], json!("tab\tnew\nline\u{1}"));
    assert_eq!(sent["astral"], json!("\u{1F600}"));
    assert_eq!(sent["big"], json!(1e21));
    assert_eq!(sent["key \"quoted\""], json!(1));
    // Keys keep the order JSON.stringify uses (integer-like keys first).
    let text = serde_json::to_string(&result["got"]).unwrap();
    assert!(
        text.find("\"10\"").unwrap() > text.find("\"2\"").unwrap(),
        "{text}"
    );

    // A getter is read once, and its value is what crosses.
    let done = ok(
        &rt,
        r#"
        let reads = 0;
        const args = { get n() { reads++; return reads; } };
        const r = await tools.echo(args);
        return [r.args, reads];
        "#,
    )
    .await;
    assert_eq!(done.result, Some(json!([{ "n": 1 }, 1])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_logs_and_results_read_by_the_host_are_what_the_general_path_writes() {
    // The host writes a console line of primitives and reads a plain result itself; anything
    // else goes through the prelude's lazy half (here: a getter, which only it calls). The two
    // must agree.
    let rt = runtime();
    let done = ok(
        &rt,
        r#"
        const values: unknown[] = [-0, 0, 7, -2.5, 0.1, 1e21, 1e-7, 5e-324, NaN, Infinity,
            -Infinity, true, false, null, undefined, "plain", "", "caf\u00e9 \u{1F600}", "tab\there"];
        console.log(...values);
        console.log(...values, {});
        console.warn("lone \uD800 surrogate");
        console.log();
        return 1;
        "#,
    )
    .await;
    let line = "-0 0 7 -2.5 0.1 1e+21 1e-7 5e-324 NaN Infinity -Infinity true false null \
                undefined plain  caf\u{e9} \u{1F600} tab\there";
    assert_eq!(done.logs[0], line);
    assert_eq!(done.logs[1], format!("{line} {{}}"));
    assert_eq!(done.logs[2], "lone \u{FFFD} surrogate");
    assert_eq!(done.logs[3], "");

    for value in [
        "42",
        "-7",
        "0.1",
        "1e21",
        "1e-7",
        "2 ** 60",
        "true",
        "null",
        "'plain'",
        "''",
        "'say \"hi\" \\\\ tab\\t caf\\u00e9 \\u{1F600} \\u2028'",
        "{ i: 42, f: 0.1, big: 1e21, small: 1e-7, t: true, n: null, s: 'plain', e: '' }",
        "{}",
        "[]",
        "Object.create(null)",
        "{ list: [1, [2, { deep: [3, 'x'] }], []], o: { a: {}, b: [null, true] }, '\\u00fc': 1 }",
        "{ '10': 'ten', '2': 'two', z: 1, a: 2 }",
        "Object.assign([1, 2], { extra: 3 })",
        "JSON.parse('[' + '['.repeat(40) + ']'.repeat(40) + ']')",
        "Array.from({ length: 5000 }, (_, i) => i)",
    ] {
        let simple = ok(&rt, &format!("return {value};")).await.result.unwrap();
        let program = format!("return {{ get v() {{ return {value}; }} }};");
        let general = ok(&rt, &program).await.result.unwrap();
        assert_eq!(json!({ "v": simple }), general, "{value}");
    }
    // What the host leaves to the general path is converted, or refused, there as before.
    let getter = ok(&rt, "return { get n() { return 1; } };").await;
    assert_eq!(getter.result, Some(json!({ "n": 1 })));
    for value in [
        "-0",
        "NaN",
        "{ n: -0 }",
        "{ n: [Infinity] }",
        "[1, , 3]",
        "{ s: 'lone \\uD800' }",
        "new (class A {})()",
        "[new Map()]",
    ] {
        let program = format!("return {value};");
        let failure = run_with(&rt, &TestHost::new(), &program, &ordinary_limits())
            .await
            .unwrap_err();
        assert_eq!(failure.kind, CodeFailureKind::InvalidResult, "{value}");
    }

    // The output limit counts the same text either way: 20 bytes fit 20, 21 do not.
    let limits = ordinary_limits().with_max_output_bytes(20);
    for (value, fits) in [
        ("'x'.repeat(18)", true),
        ("'x'.repeat(19)", false),
        ("['x'.repeat(16)]", true),
        ("['x'.repeat(17)]", false),
        ("{ abcdefghijkl: 123 }", true),
        ("{ abcdefghijklm: 123 }", false),
        ("1234567890.123456789", true),
    ] {
        let program = format!("return {value};");
        match run_with(&rt, &TestHost::new(), &program, &limits).await {
            Ok(done) => assert!(fits, "{value} fit: {done:?}"),
            Err(failure) => {
                assert!(!fits, "{value}: {failure:?}");
                assert_eq!(failure.kind, CodeFailureKind::OutputLimit, "{value}");
            }
        }
    }
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_made_as_json_parse_makes_them_even_when_prototypes_are_patched() {
    // Small answers are made in the engine by the host, larger ones parsed from their text:
    // either way each key is an own data property (`__proto__` too) and no setter a program
    // put on a prototype runs.
    let rt = runtime();
    for args in [
        r#"'{"__proto__": {"x": 1}, "list": [1, [2]]}'"#,
        r#"'{"__proto__": {"x": 1}, "list": [1, [2]], "long": [' + '0,'.repeat(5000) + '0]}'"#,
    ] {
        let program = format!(
            r#"
            Object.defineProperty(Array.prototype, "0", {{
                set(_v) {{ throw new Error("an array setter ran"); }},
                get() {{ return "from the prototype"; }}, configurable: true,
            }});
            Object.defineProperty(Object.prototype, "tool", {{
                set(_v) {{ throw new Error("an object setter ran"); }}, configurable: true,
            }});
            const r: any = await tools.echo(JSON.parse({args}));
            return [Object.keys(r.args).slice(0, 2).join(","),
                Object.getPrototypeOf(r.args) === Object.prototype, r.args.__proto__.x,
                r.args.list[1][0], r.tool];
            "#
        );
        let done = ok(&rt, &program).await;
        assert_eq!(
            done.result,
            Some(json!(["__proto__,list", true, 1, 2, "echo"])),
            "{args}"
        );
    }
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_gets_its_own_limits_and_a_program_cannot_restart_itself() {
    // Engines are built before their run is known: the run's limits must still apply.
    let rt = runtime();
    let bomb = "const keep: number[][] = []; for (let i = 0; i < 40; i++) keep.push(new Array(100000).fill(i)); return keep.length;";
    let small = CodeLimits::default()
        .with_timeout(Duration::from_secs(20))
        .with_memory_bytes(8 * 1024 * 1024);
    for _ in 0..2 {
        assert_eq!(ok(&rt, bomb).await.result, Some(json!(40)));
        assert_eq!(fail(&rt, bomb, &small).await.kind, CodeFailureKind::Memory);
    }
    let short = CodeLimits::default().with_timeout(Duration::from_millis(200));
    assert_eq!(
        fail(&rt, "while (true) {}", &short).await.kind,
        CodeFailureKind::Timeout
    );
    assert_eq!(ok(&rt, "return 1;").await.result, Some(json!(1)));
    // A program refused by the type stripper never touches an engine; the next run works.
    let failure = fail(&rt, "enum E { A }", &ordinary_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Syntax);
    rt.assert_healthy().await;

    // The prelude's `run` starts the program once; a second start is refused.
    let done = ok(
        &rt,
        r#"
        try {
            (globalThis as any).__codeModeHost.run(async () => 1, ["echo"]);
            return "restarted";
        } catch (e) {
            return (e as Error).name;
        }
        "#,
    )
    .await;
    assert_eq!(done.result, Some(json!("TypeError")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_files_network_environment_process_or_modules() {
    let rt = runtime();
    let done = ok(
        &rt,
        r#"
        const g = globalThis as any;
        return [typeof require, typeof process, typeof fetch, typeof XMLHttpRequest,
                typeof WebSocket, typeof std, typeof os, typeof Deno, typeof Bun,
                typeof setTimeout, typeof g.__codeModeHost.settle,
                btoa("hi"), typeof Uint8Array];
        "#,
    )
    .await;
    let mut expected = vec![json!("undefined"); 10];
    expected.push(json!("function"));
    expected.push(json!("aGk="));
    expected.push(json!("undefined"));
    assert_eq!(done.result, Some(Value::Array(expected)));

    for program in [
        "return require('fs').readFileSync('/etc/passwd', 'utf8');",
        "return process.env.HOME;",
        "return await fetch('http://127.0.0.1/');",
        "return std.loadFile('/etc/passwd');",
        "return await import('fs');",
        "return await import('/etc/passwd');",
    ] {
        let failure = fail(&rt, program, &hostile_limits()).await;
        assert_eq!(
            failure.kind,
            CodeFailureKind::Runtime,
            "{program}: {failure:?}"
        );
    }
    for program in ["import fs from 'fs';\nreturn fs;", "export const x = 1;"] {
        let failure = fail(&rt, program, &hostile_limits()).await;
        assert_eq!(
            failure.kind,
            CodeFailureKind::Syntax,
            "{program}: {failure:?}"
        );
        assert_eq!(failure.line, Some(1), "{program}: {failure:?}");
    }
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_values_are_refused_not_overflowed() {
    let rt = runtime();
    let done = ok(
        &rt,
        r#"
        let v: any = 1;
        for (let i = 0; i < 100000; i++) v = [v];
        try { await tools.echo({ v }); return "sent"; } catch (e) { return e.message; }
        "#,
    )
    .await;
    let message = done.result.unwrap();
    assert!(
        message.as_str().unwrap().contains("nests deeper than 100"),
        "{message}"
    );
    let failure = fail(
        &rt,
        "let v: any = 1; for (let i = 0; i < 100000; i++) v = { v }; return v;",
        &ordinary_limits(),
    )
    .await;
    assert_eq!(failure.kind, CodeFailureKind::InvalidResult);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enums_namespaces_and_parameter_properties_are_syntax_failures() {
    let rt = runtime();
    for (program, line, column) in [
        (
            "const a = 1;\n\nenum Color { Red, Green }\nreturn Color.Red;",
            3,
            1,
        ),
        ("namespace Space { export const x = 1; }", 1, 1),
        (
            "const b = 2;\n  class P { constructor(private x: number) {} }",
            2,
            33,
        ),
    ] {
        let failure = fail(&rt, program, &hostile_limits()).await;
        assert_eq!(failure.kind, CodeFailureKind::Syntax, "{program}");
        assert_eq!(failure.line, Some(line), "{program}: {failure:?}");
        assert_eq!(failure.column, Some(column), "{program}: {failure:?}");
    }
    // Erasable syntax is fine.
    let done = ok(
        &rt,
        "type T = { a: number };\ndeclare const never: string;\nconst t = { a: 1 } satisfies T;\nfunction id<X>(x: X): X { return x }\nreturn id<number>(t.a as number)!;",
    )
    .await;
    assert_eq!(done.result, Some(json!(1)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_named_then_constructor_and_proto() {
    let rt = runtime();
    let host = TestHost::with_names(&["then", "constructor", "__proto__", "hasOwnProperty"]);
    let done = run_with(
        &rt,
        &host,
        r#"
        // `then` is reachable through callTool only, so `tools` is not a thenable.
        if ((await tools) !== tools || "then" in tools) throw new Error("tools is a thenable");
        const a = await callTool("then", { n: 1 });
        const b = await tools.constructor({ n: 2 });
        const c = await tools["__proto__"]({ n: 3 });
        const d = await tools.hasOwnProperty({ n: 4 });
        const e = await callTool("constructor", { n: 5 });
        let unknown = "";
        try { await callTool("missing", {}); } catch (err) {
          unknown = err instanceof ToolCallError ? err.toolName : "wrong error";
        }
        return [a.tool, b.tool, c.tool, d.tool, e.tool, unknown, Object.keys(tools).length];
        "#,
        &ordinary_limits(),
    )
    .await
    .unwrap();
    assert_eq!(
        done.result,
        Some(json!([
            "then",
            "constructor",
            "__proto__",
            "hasOwnProperty",
            "constructor",
            "missing",
            7
        ]))
    );
    let done = run_with(
        &rt,
        &host,
        "return await tools.echo({ ['__proto__']: { polluted: true }, constructor: 1 });",
        &ordinary_limits(),
    )
    .await
    .unwrap();
    assert_eq!(
        done.result.unwrap()["args"],
        json!({ "__proto__": { "polluted": true }, "constructor": 1 })
    );
    rt.assert_healthy().await;
}

// --- the program is exactly the body of its function (issue 18, item 5) ---------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_cannot_close_the_function_it_runs_in() {
    let rt = runtime();
    for (program, line, column) in [
        // Closes the wrapper, runs code outside it, and opens a new function to end in.
        (
            "return 1; }); console.log('outside'); (async () => {",
            1,
            11,
        ),
        ("const a = 1;\nreturn a;\n})();\n", 3, 1),
        ("}) + (async () => {", 1, 1),
        ("  return 2;\n  }), (async () => {", 2, 3),
        (
            "const x = { a: 1 };\nif (x.a) {\n  console.log('in');\n}}\n(async () => {",
            4,
            2,
        ),
    ] {
        let host = TestHost::new();
        let failure = match run_with(&rt, &host, program, &hostile_limits()).await {
            Ok(done) => panic!("{program:?} ran: {done:?}"),
            Err(failure) => failure,
        };
        assert_eq!(
            failure.kind,
            CodeFailureKind::Syntax,
            "{program:?}: {failure:?}"
        );
        assert_eq!(
            (failure.line, failure.column),
            (Some(line), Some(column)),
            "{program:?}: {failure:?}"
        );
        assert!(failure.logs.is_empty(), "{program:?} ran code: {failure:?}");
        assert!(
            failure.message.contains("would close the function"),
            "{program:?}: {}",
            failure.message
        );
        assert_eq!(host.calls(), 0);
    }
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn braces_in_comments_strings_and_templates_still_run() {
    let rt = runtime();
    let program = "// }); (async () => {\n\
        /* }) */ const s: string = \"}); (async () => {\";\n\
        const t = `})${'{'}(async () => {${s.length}}`;\n\
        const re = /\\}\\)/;\n\
        return [s, t, re.test('})')]; // })";
    let done = ok(&rt, program).await;
    assert_eq!(
        done.result,
        Some(json!(["}); (async () => {", "}){(async () => {18}", true]))
    );
    // A trailing line comment cannot swallow the end of the function.
    assert_eq!(ok(&rt, "return 3; // }").await.result, Some(json!(3)));
    // An unterminated comment or template is a syntax error in the program.
    for program in ["return 1; /* })", "return `})"] {
        let failure = fail(&rt, program, &hostile_limits()).await;
        assert_eq!(failure.kind, CodeFailureKind::Syntax, "{program}");
        assert_eq!(failure.line, Some(1), "{program}: {failure:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn engine_syntax_errors_point_into_the_program() {
    // The type stripper accepts a redeclared `const`; the engine refuses it. Its position must
    // be the program's own.
    let rt = runtime();
    let failure = fail(
        &rt,
        "const a = 1;\nconst a = 2;\nreturn a;",
        &hostile_limits(),
    )
    .await;
    assert_eq!(failure.kind, CodeFailureKind::Syntax, "{failure:?}");
    assert_eq!(failure.line, Some(2), "{failure:?}");
    let failure = fail(&rt, "let b = 1; let b = 2;", &hostile_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Syntax, "{failure:?}");
    assert_eq!(failure.line, Some(1), "{failure:?}");
    rt.assert_healthy().await;
}

// --- conversions ignore what the program patched (issue 18, item 6) --------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_that_cannot_cross_are_refused_at_depth_even_when_patched() {
    // Each value sits two levels deep, in arguments and in the result, with the prototypes
    // patched; the message names its path and nothing the program installed runs.
    let rt = runtime();
    let cases: [(&str, &str); 8] = [
        ("new Proxy({}, traps)", "is a Proxy"),
        ("new Proxy([], traps)", "is a Proxy"),
        ("cyclic", "is a cycle"),
        ("10n", "is a BigInt"),
        ("undefined", "is undefined"),
        ("[1, , 3]", "[1] is a hole"),
        ("new Map()", "is Map object"),
        ("new (class Point { x = 1 })()", "is an instance of a class"),
    ];
    for (expr, needle) in cases {
        let program = format!(
            "{PATCH_EVERYTHING}
            let trapped = 0;
            const traps = {{
                get() {{ trapped++; return 1; }}, ownKeys() {{ trapped++; return []; }},
                getPrototypeOf() {{ trapped++; return Object.prototype; }},
                getOwnPropertyDescriptor() {{ trapped++; return undefined; }}, has() {{ trapped++; return false; }},
            }};
            const cyclic: any = {{ n: 1 }}; cyclic.me = [cyclic];
            const bad = () => ({{ a: [{{ b: {expr} }}] }});
            let message = 'sent';
            try {{ await tools.echo(bad()); }} catch (e) {{ message = (e instanceof TypeError) + ' ' + e.message; }}
            if (trapped !== 0) throw new Error('a trap ran ' + trapped + ' times');
            if (message === 'sent') throw new Error('the call was sent');
            console.log(message);
            return bad();"
        );
        let host = TestHost::new();
        let outcome = run_with(&rt, &host, &program, &ordinary_limits()).await;
        assert_refused_both_ways(
            expr,
            outcome,
            &host,
            needle,
            "result.a[0].b",
            "true args.a[0].b",
        );
    }
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_getters_symbol_keys_and_non_enumerable_properties() {
    // Documented conversions: an own getter is called once and its value crosses; properties
    // keyed by symbols, and non-enumerable ones, are left out (as JSON.stringify does).
    let rt = runtime();
    let done = ok(
        &rt,
        r#"
        let reads = 0;
        const make = () => {
            const o: any = { plain: 1, get counted() { reads++; return [reads]; } };
            o[Symbol("hidden")] = 2;
            Object.defineProperty(o, "quiet", { value: 3, enumerable: false });
            return { nested: [o] };
        };
        const r = await tools.echo(make());
        return { sent: r.args, back: make(), reads };
        "#,
    )
    .await;
    assert_eq!(
        done.result,
        Some(json!({
            "sent": { "nested": [{ "plain": 1, "counted": [1] }] },
            "back": { "nested": [{ "plain": 1, "counted": [2] }] },
            // Read when the result object was built, before its conversion called the getter.
            "reads": 1
        }))
    );
    // A getter that deletes a later property: the deleted one is left out, and no prototype
    // getter stands in for it.
    let done = ok(
        &rt,
        r#"
        Object.defineProperty(Object.prototype, "later", { get() { return "from the prototype"; }, configurable: true });
        const o: any = { get first() { delete o.later; return 1; }, later: 2 };
        const r = await tools.echo({ o: [o] });
        return r.args;
        "#,
    )
    .await;
    assert_eq!(done.result, Some(json!({ "o": [{ "first": 1 }] })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_reported_when_everything_is_patched() {
    let rt = runtime();
    let program = format!("{PATCH_EVERYTHING}\nthrow new TypeError('plain');");
    let failure = fail(&rt, &program, &hostile_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime, "{failure:?}");
    assert_eq!(failure.message, "TypeError: plain");
    assert_eq!(failure.line, Some(program.lines().count() as u32));
    let program = format!("{PATCH_EVERYTHING}\nPromise.reject(new Error('lost'));\nreturn 1;");
    let failure = fail(&rt, &program, &hostile_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime, "{failure:?}");
    assert_eq!(failure.message, "unhandled promise rejection: Error: lost");
    let program = format!("{PATCH_EVERYTHING}\nthrow {{ odd: [1] }};");
    let failure = fail(&rt, &program, &hostile_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime, "{failure:?}");
    assert!(
        failure
            .message
            .starts_with("the program threw a non-Error value"),
        "{failure:?}"
    );
    rt.assert_healthy().await;
}

// --- bounded messages and sizes (issue 18, items 7 and 8) ------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn program_controlled_text_in_messages_is_cut() {
    let rt = runtime();
    let mb = 1024 * 1024;
    // An unknown tool's name, caught and uncaught.
    let done = ok(
        &rt,
        "const name = 'n'.repeat(1024 * 1024);\ntry { await callTool(name, {}); } catch (e) { return [e.message, e.toolName.length]; }",
    )
    .await;
    let result = done.result.unwrap();
    assert_cut(result[0].as_str().unwrap(), mb - 200);
    assert_eq!(
        result[1],
        json!(mb),
        "the error object keeps the whole name"
    );
    let failure = fail(
        &rt,
        "await callTool('n'.repeat(1024 * 1024), {});",
        &ordinary_limits(),
    )
    .await;
    assert_eq!(failure.kind, CodeFailureKind::Runtime);
    assert!(failure.message.starts_with("ToolCallError from tool \"nnn"));
    assert_cut(&failure.message, mb - 200);
    // A property name in a conversion path, in arguments and in the result.
    let program = "const key = 'k'.repeat(1024 * 1024);\nlet m = '';\ntry { await tools.echo({ [key]: undefined }); } catch (e) { m = e.message; }\nconsole.log(m);\nreturn { a: { [key + '-']: undefined } };";
    let failure = fail(&rt, program, &ordinary_limits()).await;
    assert_eq!(failure.kind, CodeFailureKind::InvalidResult);
    assert_cut(&failure.message, mb + 1 - 200);
    assert!(
        failure.message.contains("result.a[\"kkk"),
        "{}",
        &failure.message[..100]
    );
    assert_cut(&failure.logs[0], mb - 200);
    assert!(failure.logs[0].starts_with("args.kkk"));
    // A thrown value that is not an Error, an error's name, and a tool name the program made up.
    for program in [
        "throw 'v'.repeat(1024 * 1024);",
        "const e = new Error('short'); e.name = 'N'.repeat(1024 * 1024); throw e;",
        "throw new ToolCallError('t'.repeat(1024 * 1024), 'made up');",
    ] {
        let failure = fail(&rt, program, &ordinary_limits()).await;
        assert_eq!(failure.kind, CodeFailureKind::Runtime, "{program}");
        assert_cut(&failure.message, mb - 200);
    }
    rt.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_comments_and_type_syntax_next_to_brackets_open_no_way_out() {
    // HTML-like comments are comments for both the parser and the engine: what follows them on
    // the line never runs.
    let rt = runtime();
    for program in [
        "let y = 1, z = 5; let x: any = y <!--z; }); console.log('escaped'); (async () => {",
        "let z = 5;\n--> }); console.log('escaped'); (async () => {",
    ] {
        let done = ok(&rt, program).await;
        assert_eq!(done, CodeCompletion::default(), "{program:?}");
    }
    // Type syntax stripped next to a `/` does not turn a regular expression into a division
    // that lets a `}` through.
    for program in [
        "const f: any = (x: any) => x; const re = 1; let a: any = f<number> / re}/; console.log('escaped'); (async () => {",
        "const f: any = (x: any) => x; let a: any = f<number>\n/1}/; console.log('escaped'); (async () => {",
        "let a: any = 1 as any\n/1}/; console.log('escaped'); (async () => {",
        "let a: any = <any>1\n/1}/; console.log('escaped'); (async () => {",
    ] {
        let failure = fail(&rt, program, &hostile_limits()).await;
        assert_eq!(
            failure.kind,
            CodeFailureKind::Syntax,
            "{program:?}: {failure:?}"
        );
        assert!(failure.logs.is_empty(), "{program:?}: {failure:?}");
    }
    rt.assert_healthy().await;
}

// --- binding on first use -------------------------------------------------------------------

/// A program that looks at `tools` every way a program can, and reports what it saw.
const LOOK_AT_TOOLS: &str = r#"
const seen: Record<string, unknown> = {};
const tryIt = (label: string, f: () => unknown) => {
  try { seen[label] = f(); } catch (e) { seen[label] = "throws " + (e as Error).name; }
};
seen.first = typeof tools.b;
seen.firstAgain = tools.b === tools.b;
seen.odd = typeof tools["odd-name"];
seen.missing = typeof (tools as any).missing;
seen.has = ["b" in tools, "missing" in tools, "then" in tools, "constructor" in tools];
seen.thenable = (await tools) === tools;
seen.viaCallTool = (await callTool("then", { n: 1 })).tool;
seen.proto = (await tools["__proto__"]({ n: 2 })).tool;
seen.descriptor = Object.getOwnPropertyDescriptor(tools, "a") !== undefined &&
  Object.getOwnPropertyDescriptor(tools, "a")!.writable === false &&
  Object.getOwnPropertyDescriptor(tools, "a")!.enumerable === true &&
  Object.getOwnPropertyDescriptor(tools, "a")!.configurable === false;
seen.noDescriptor = Object.getOwnPropertyDescriptor(tools, "missing") === undefined;
seen.prototype = Object.getPrototypeOf(tools) === null;
tryIt("assign", () => { (tools as any).b = 1; return "assigned"; });
tryIt("assignNew", () => { (tools as any).fresh = 1; return "assigned"; });
tryIt("remove", () => { delete (tools as any).b; return "deleted"; });
tryIt("removeMissing", () => delete (tools as any).missing);
tryIt("define", () => { Object.defineProperty(tools, "x", { value: 1 }); return "defined"; });
tryIt("setPrototype", () => { Object.setPrototypeOf(tools, {}); return "set"; });
tryIt("setPrototypeNull", () => { Object.setPrototypeOf(tools, null); return "set"; });
seen.keys = Object.keys(tools);
seen.names = Object.getOwnPropertyNames(tools);
const forIn: string[] = [];
for (const k in tools) forIn.push(k);
seen.forIn = forIn;
seen.frozen = Object.isFrozen(tools);
seen.extensible = Object.isExtensible(tools);
seen.json = JSON.stringify(tools);
console.log(tools);
try { await tools.b({ t: tools }); } catch (e) { seen.asArgsMessage = (e as Error).message; }
seen.afterAll = (await tools.a({ n: 3 })).tool;
return seen;
"#;

/// The tools the program above looks at (in a host's order, not sorted).
const LOOKED_AT: [&str; 9] = [
    "b",
    "a",
    "then",
    "constructor",
    "__proto__",
    "odd-name",
    "10",
    "2",
    "z",
];

fn naming_host(on_first_use: bool) -> Arc<dyn tools_code::CodeHost> {
    let host = FnHost::new(LOOKED_AT, |name: &str, _args: Value| {
        let name = name.to_owned();
        async move { Ok(json!({ "tool": name })) }
    });
    if on_first_use {
        Arc::new(host.bind_on_first_use())
    } else {
        Arc::new(host)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_bound_on_first_use_look_like_tools_bound_up_front() {
    let rt = runtime();
    let mut seen = Vec::new();
    for on_first_use in [false, true] {
        let done = rt
            .run(
                LOOK_AT_TOOLS,
                naming_host(on_first_use),
                &ordinary_limits(),
                CancellationToken::new(),
            )
            .await
            .unwrap();
        seen.push(done);
    }
    let (up_front, on_first_use) = (&seen[0], &seen[1]);
    assert_eq!(on_first_use.result, up_front.result);
    assert_eq!(on_first_use.logs, up_front.logs);
    let seen = up_front.result.as_ref().unwrap();
    // What both saw, spelled out: keys in the order an object orders them, `then` left out.
    let keys = json!([
        "2",
        "10",
        "b",
        "a",
        "constructor",
        "__proto__",
        "odd-name",
        "z"
    ]);
    assert_eq!(seen["keys"], keys);
    assert_eq!(seen["names"], keys);
    assert_eq!(seen["forIn"], keys);
    assert_eq!(seen["first"], "function");
    assert_eq!(seen["firstAgain"], true);
    assert_eq!(seen["odd"], "function");
    assert_eq!(seen["missing"], "undefined");
    assert_eq!(seen["has"], json!([true, false, false, true]));
    assert_eq!(seen["thenable"], true);
    assert_eq!(seen["viaCallTool"], "then");
    assert_eq!(seen["proto"], "__proto__");
    assert_eq!(seen["descriptor"], true);
    assert_eq!(seen["noDescriptor"], true);
    assert_eq!(seen["prototype"], true);
    for refused in ["assign", "assignNew", "remove", "define", "setPrototype"] {
        assert_eq!(seen[refused], "throws TypeError", "{refused}: {seen}");
    }
    assert_eq!(seen["removeMissing"], true);
    assert_eq!(seen["setPrototypeNull"], "set");
    assert_eq!(seen["frozen"], true);
    assert_eq!(seen["extensible"], false);
    assert_eq!(seen["json"], "{}");
    assert_eq!(seen["afterAll"], "a");
    assert!(
        seen["asArgsMessage"]
            .as_str()
            .unwrap()
            .starts_with(r#"args.t["2"] is a function"#),
        "{seen}"
    );
    assert!(
        up_front.logs[0].starts_with(r#"{"2":"[Function"#),
        "{:?}",
        up_front.logs
    );
}

/// A host of many names that counts what the runtime asks it.
struct Counting {
    names: Vec<String>,
    listed: std::sync::atomic::AtomicUsize,
    looked_up: Mutex<Vec<String>>,
}

impl tools_code::CodeHost for Counting {
    fn tool_names(&self) -> Vec<String> {
        self.listed.fetch_add(1, Ordering::SeqCst);
        self.names.clone()
    }

    fn binds(&self, name: &str) -> bool {
        self.looked_up.lock().unwrap().push(name.to_owned());
        self.names.iter().any(|n| n == name)
    }

    fn bind_on_first_use(&self) -> bool {
        true
    }

    fn call(&self, name: &str, _args: Value, reply: tools_code::CallReply) {
        reply.send(Ok(json!(name)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_binds_on_first_use_asks_once_a_name_and_lists_nothing() {
    let rt = runtime();
    let host = Arc::new(Counting {
        names: (0..1000).map(|i| format!("tool_{i:04}")).collect(),
        listed: std::sync::atomic::AtomicUsize::new(0),
        looked_up: Mutex::new(Vec::new()),
    });
    let long = "x".repeat(70 * 1024);
    let done = rt
        .run(
            &format!(
                r#"
                const name = "tool_" + "0007";
                const out = [];
                for (let i = 0; i < 5; i++) out.push(await tools[name]({{}}));
                out.push(await callTool(name, {{}}));
                out.push(typeof tools.nope, typeof tools.nope, "tool_0008" in tools);
                out.push(typeof (tools as any)["{long}"]);
                return out;
                "#
            ),
            host.clone(),
            &ordinary_limits(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        done.result,
        Some(json!([
            "tool_0007",
            "tool_0007",
            "tool_0007",
            "tool_0007",
            "tool_0007",
            "tool_0007",
            "undefined",
            "undefined",
            true,
            "undefined"
        ]))
    );
    assert_eq!(host.listed.load(Ordering::SeqCst), 0);
    // Each tool found is asked for once; a name that is none is asked each time it is read,
    // and a name longer than any lookup (64 KiB) is never asked.
    assert_eq!(
        *host.looked_up.lock().unwrap(),
        ["tool_0007", "nope", "nope", "tool_0008"]
    );

    // Enumerating lists them once, and binds the rest.
    let done = rt
        .run(
            "const a = Object.keys(tools).length; const b = Object.keys(tools).length; return [a, b, await tools.tool_0999({})];",
            host.clone(),
            &ordinary_limits(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(done.result, Some(json!([1000, 1000, "tool_0999"])));
    assert_eq!(host.listed.load(Ordering::SeqCst), 1);
}
