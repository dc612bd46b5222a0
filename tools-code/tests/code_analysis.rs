//! The pre-run analysis of `run_code` programs and what policy sees of it: a table of programs
//! per language with the set each may call and the verdict (run, refused before running, or a
//! syntax error reported as the run reports it); listeners that judge a program by `may_call`;
//! an approval asked once for a whole program; the bridge holding a program to its set.
//!
//! The Python half needs an interpreter (`TOOLS_PYTHON` or `python3` on `PATH`); without one it
//! fails.

#![cfg(all(feature = "typescript", feature = "python"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_code::{
    CODE_NOT_RUN, CODE_RUN_FAILED, CallReply, CodeHost, CodeLimits, CodeMode, CodeRuntime,
    ExecutionExt, MAX_ANALYSIS_NESTING, MayCall, PythonMode, PythonRuntime, TypeScriptRuntime,
};
use tools_runtime::hooks::{Approval, PreDecision};
use tools_runtime::{
    Extensions, Output, PresentationMode, ToolCall, ToolDefinition, ToolError, ToolRuntime, codes,
};

// ---------------------------------------------------------------------------------------------
// The catalog

/// A tool that counts its calls and answers `{"ok": true}`.
fn tool(name: &str, schema: Value, calls: &Arc<AtomicUsize>) -> ToolDefinition {
    let calls = calls.clone();
    ToolDefinition::builder(name)
        .description(format!("the {name} tool"))
        .input_schema(schema)
        .output(Output::json(json!({"type": "object"})))
        .execute(move |_args, _ctx| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ToolError>(json!({"ok": true})) }
        })
        .build()
        .unwrap()
}

fn closed(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required,
           "additionalProperties": false})
}

struct Fixture {
    rt: ToolRuntime,
    /// Body runs of every tool but `run_code`.
    calls: Arc<AtomicUsize>,
    /// What the pre-execute listener saw of each `run_code` call.
    seen: Arc<Mutex<Vec<Option<MayCall>>>>,
    _scope: tools_runtime::Scope,
    _listener: tools_runtime::Registration,
}

fn fixture(runtime: Arc<dyn CodeRuntime>) -> Fixture {
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::shared(runtime))
        .build()
        .unwrap();
    let scope = rt.scope();
    let calls = Arc::new(AtomicUsize::new(0));
    let path = json!({"type": "string"});
    for def in [
        tool(
            "read_file",
            closed(
                json!({"path": path, "offset": {"type": "integer"}}),
                &["path"],
            ),
            &calls,
        ),
        tool(
            "write_file",
            closed(
                json!({"path": path, "content": {"type": "string"}}),
                &["path", "content"],
            ),
            &calls,
        ),
        tool(
            "delete_file",
            closed(json!({"path": path}), &["path"]),
            &calls,
        ),
        tool(
            "list_dir",
            json!({"type": "object", "properties": {"path": path}}),
            &calls,
        ),
    ] {
        std::mem::forget(scope.register(def).unwrap());
    }
    let raw_calls = calls.clone();
    let raw = ToolDefinition::raw("search")
        .description("a raw tool: validates its own input")
        .input_schema(closed(json!({"query": {"type": "string"}}), &["query"]))
        .output(Output::json(json!({"type": "object"})))
        .execute(move |_args, _ctx| {
            raw_calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, ToolError>(json!({"ok": true})) }
        })
        .build()
        .unwrap();
    std::mem::forget(scope.register(raw).unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let listener = scope
        .on_pre_execute(move |exec, decision| {
            if exec.name() == "run_code" {
                record.lock().unwrap().push(exec.may_call().cloned());
            }
            decision
        })
        .unwrap();
    Fixture {
        rt,
        calls,
        seen,
        _scope: scope,
        _listener: listener,
    }
}

fn run_code(code: &str) -> ToolCall {
    ToolCall::new(
        "outer",
        "run_code",
        json!({"code": code, "description": "a test program"}),
    )
}

// ---------------------------------------------------------------------------------------------
// The table

/// What should become of a program.
#[derive(Debug)]
enum Verdict {
    /// It was not refused, and the listener saw this set (`None`: open).
    Runs(Option<&'static [&'static str]>),
    /// Refused before running: every fragment is in the message.
    Refused(&'static [&'static str]),
    /// A syntax error, reported as the run reports it.
    Syntax,
}

use Verdict::{Refused, Runs, Syntax};

/// A program run on a runtime without the analysis gives the failure the run reports; used to
/// check that syntax errors read as they did.
#[derive(Debug)]
struct NoTools;

impl CodeHost for NoTools {
    fn tool_names(&self) -> Vec<String> {
        Vec::new()
    }
    fn call(&self, _name: &str, _args: Value, reply: CallReply) {
        reply.send(Ok(Value::Null));
    }
}

async fn check_table(runtime: Arc<dyn CodeRuntime>, table: &[(&str, Verdict)]) {
    let f = fixture(runtime.clone());
    for (i, (program, verdict)) in table.iter().enumerate() {
        f.seen.lock().unwrap().clear();
        let before = f.calls.load(Ordering::SeqCst);
        let result = f.rt.execute(run_code(program)).await;
        let seen = f.seen.lock().unwrap().clone();
        let what = format!("case {i}: {program:?} -> {result:?}");
        match verdict {
            Runs(expected) => {
                assert_ne!(result.code(), Some(CODE_NOT_RUN), "{what}");
                assert_eq!(seen.len(), 1, "the listener saw the program once: {what}");
                let expected = expected.map(|names| MayCall::closed(names.iter().copied()));
                let expected = expected.unwrap_or(MayCall::Open);
                assert_eq!(seen[0], Some(expected), "{what}");
            }
            Refused(fragments) => {
                assert_eq!(result.code(), Some(CODE_NOT_RUN), "{what}");
                let message = result.error().unwrap().message.clone();
                assert!(message.starts_with("the program was not run: "), "{what}");
                for fragment in *fragments {
                    assert!(message.contains(fragment), "{fragment:?} missing: {what}");
                }
                assert!(seen.is_empty(), "no listener saw a refused program: {what}");
                assert_eq!(
                    f.calls.load(Ordering::SeqCst),
                    before,
                    "nothing ran: {what}"
                );
            }
            Syntax => {
                assert_eq!(result.code(), Some(CODE_RUN_FAILED), "{what}");
                let failure = runtime
                    .run(
                        program,
                        Arc::new(NoTools),
                        &CodeLimits::default(),
                        CancellationToken::new(),
                    )
                    .await
                    .unwrap_err();
                assert_eq!(failure.code(), "syntax", "{what}");
                let mut expected = failure.to_string();
                if let (Some(line), Some(column)) = (failure.line, failure.column) {
                    expected.push_str(&format!(" (line {line}, column {column})"));
                }
                assert_eq!(result.error().unwrap().message, expected, "{what}");
                assert_eq!(
                    f.calls.load(Ordering::SeqCst),
                    before,
                    "nothing ran: {what}"
                );
            }
        }
    }
}

const READ: &[&str] = &["read_file"];

fn typescript_table() -> Vec<(&'static str, Verdict)> {
    vec![
        // Each form of call.
        ("await tools.read_file({path: 'a'})", Runs(Some(READ))),
        (
            "await tools['write_file']({path: 'a', content: 'b'})",
            Runs(Some(&["write_file"])),
        ),
        ("await tools[`list_dir`]()", Runs(Some(&["list_dir"]))),
        ("await callTool('list_dir', {})", Runs(Some(&["list_dir"]))),
        ("return 1", Runs(Some(&[]))),
        // Dynamic access opens the set and is never refused for it.
        (
            "const name = 'read_file';\nawait tools[name]({path: 'a'})",
            Runs(None),
        ),
        ("const n = ['list_dir'][0];\nawait callTool(n)", Runs(None)),
        ("const nope = 'nope';\nawait tools[nope]?.({})", Runs(None)),
        // Aliases are followed when proved; otherwise the set opens.
        (
            "const t = tools;\nawait t.read_file({path: 'a'});\nawait t.list_dir()",
            Runs(Some(&["list_dir", "read_file"])),
        ),
        (
            "const t = tools;\nconst u = t;\nawait u.delete_file({path: 'x'})",
            Runs(Some(&["delete_file"])),
        ),
        (
            "const c = callTool;\nawait c('read_file', {path: 'a'})",
            Runs(Some(READ)),
        ),
        (
            "let t = tools;\nif (Date.now() < 0) { t = {} as any; }\nawait t.read_file({path: 'a'})",
            Runs(None),
        ),
        (
            "const t = tools;\nawait t.nope_tool({})",
            Refused(&["line 2, column 9", "nope_tool"]),
        ),
        // `tools` handed around, or the global object reached.
        ("return Object.keys(tools)", Runs(None)),
        (
            "const { read_file } = tools;\nawait read_file({path: 'a'})",
            Runs(None),
        ),
        ("const o = { tools };\nreturn 1", Runs(None)),
        (
            "await (globalThis as any).tools.read_file({path: 'a'})",
            Runs(None),
        ),
        (
            "const f = function (this: any) { return this; };\nreturn 1",
            Runs(None),
        ),
        ("const F = (() => 0).constructor;\nreturn 1", Runs(None)),
        ("return eval('1')", Runs(None)),
        // A program that names `tools` for something else: never refused through it.
        (
            "function f(tools: any) { return tools.nope(); }\nawait tools.list_dir()",
            Runs(None),
        ),
        // Calls in callbacks count.
        (
            "await Promise.all(['a', 'b'].map(async (p) => tools.read_file({path: p})));\n[1].forEach(() => { tools.list_dir(); });",
            Runs(Some(&["list_dir", "read_file"])),
        ),
        (
            "await Promise.all([1].map(() => tools.nope_tool({})))",
            Refused(&["line 1, column 39", "no tool named `nope_tool`"]),
        ),
        // Comments and strings that mention a tool do not count.
        (
            "// tools.delete_file({path: '/'})\n/* tools.nope() */\nconst s = \"tools.delete_file({})\";\nconst t2 = `callTool(\"write_file\")`;\nawait tools.list_dir();\nreturn s + t2",
            Runs(Some(&["list_dir"])),
        ),
        // A reference that is not a call is never refused.
        (
            "if (tools.maybe_tool) { await tools.list_dir(); }\nawait tools.other_tool?.({});",
            Runs(Some(&["list_dir"])),
        ),
        (
            "const r = tools.read_file;\nawait r({path: 'a'})",
            Runs(Some(READ)),
        ),
        // Provably wrong: a name not in the SDK, with the closest names.
        (
            "const x = 1;\nawait tools.raed_file({path: 'a'})",
            Refused(&[
                "line 2, column 13",
                "no tool named `raed_file` in the SDK",
                "`read_file`",
            ]),
        ),
        (
            "await callTool('delete_files', {path: 'a'})",
            Refused(&["line 1, column 16", "`delete_files`", "`delete_file`"]),
        ),
        // Provably wrong: literal arguments against the schema.
        (
            "await tools.read_file({})",
            Refused(&[
                "line 1, column 13",
                "the arguments of `read_file` do not match its input schema",
                "missing required property \"path\"",
            ]),
        ),
        (
            "await tools.read_file()",
            Refused(&["missing required property \"path\""]),
        ),
        (
            "await tools.read_file({path: 'a', colour: 'red'})",
            Refused(&["unexpected property \"colour\""]),
        ),
        (
            "await tools.read_file({path: 42})",
            Refused(&["/path: expected string, got"]),
        ),
        (
            "await tools.read_file({path: 'a', offset: 1.5})",
            Refused(&["/offset"]),
        ),
        // Partly literal: what the known part decides.
        (
            "const p = 'a';\nawait tools.read_file({path: p, offset: 'ten'})",
            Refused(&["line 2, column 13", "/offset: expected integer, got string"]),
        ),
        (
            "const c = 'x';\nawait tools.write_file({content: c})",
            Refused(&["missing required property \"path\""]),
        ),
        (
            "const c = 'x';\nawait tools.delete_file({path: c, force: c})",
            Refused(&["unexpected property \"force\" (allowed: \"path\")"]),
        ),
        // Several problems are listed together.
        (
            "await tools.nope_one({});\nawait tools.read_file({});",
            Refused(&[
                "2 calls cannot succeed",
                "line 1, column 13",
                "line 2, column 13",
            ]),
        ),
        // Never refused: spread arguments and computed values.
        (
            "const a: any[] = [{path: 1}];\nawait tools.read_file(...a).catch(() => 0)",
            Runs(Some(READ)),
        ),
        (
            "const extra = {};\nawait tools.read_file({...extra, path: 'a', bogus: 1}).catch(() => 0)",
            Runs(Some(READ)),
        ),
        (
            "const k = 'path';\nawait tools.read_file({[k]: 'a'})",
            Runs(Some(READ)),
        ),
        (
            "await tools.read_file({path: ['a'].join(''), offset: 1 + 1})",
            Runs(Some(READ)),
        ),
        (
            "await tools.read_file(undefined as any).catch(() => 0)",
            Runs(Some(READ)),
        ),
        // A raw tool validates its own input; an open object takes any key.
        ("await tools.search({anything: 1})", Runs(Some(&["search"]))),
        (
            "await tools.list_dir({whatever: 1})",
            Runs(Some(&["list_dir"])),
        ),
        // Syntax errors read as the run reports them, also when a call is wrong too.
        ("await tools.read_file({path: 'a'}", Syntax),
        ("enum E { A }\nawait tools.nope_tool({})", Syntax),
        ("return 1; }); (async () => {", Syntax),
    ]
}

fn python_table() -> Vec<(&'static str, Verdict)> {
    vec![
        ("await tools.read_file({'path': 'a'})", Runs(Some(READ))),
        (
            "await tools['write_file']({'path': 'a', 'content': 'b'})",
            Runs(Some(&["write_file"])),
        ),
        ("await tools.list_dir()", Runs(Some(&["list_dir"]))),
        ("await tools.list_dir(None)", Runs(Some(&["list_dir"]))),
        ("return 1", Runs(Some(&[]))),
        // Dynamic access.
        (
            "name = 'read_file'\nawait tools[name]({'path': 'a'})",
            Runs(None),
        ),
        ("f = getattr(tools, 'list_dir')\nawait f()", Runs(None)),
        // Aliases.
        (
            "t = tools\nawait t.read_file({'path': 'a'})\nawait t.list_dir()",
            Runs(Some(&["list_dir", "read_file"])),
        ),
        (
            "t = tools\nu = t\nawait u.delete_file({'path': 'x'})",
            Runs(Some(&["delete_file"])),
        ),
        (
            "t = tools\nif False:\n    t = None\nawait t.read_file({'path': 'a'})",
            Runs(None),
        ),
        (
            "t = tools\nawait t.nope_tool({})",
            Refused(&["line 2, column 9", "nope_tool"]),
        ),
        // Handed around, rebound, or reached by name.
        ("return dir(tools)", Runs(None)),
        (
            "def f(tools):\n    return tools.nope()\nawait tools.list_dir()",
            Runs(None),
        ),
        ("return globals()['tools']", Runs(None)),
        ("return tools.__class__", Runs(None)),
        ("return tools.__dir__()", Runs(None)),
        (
            "return await tools._Tools__bindings['list_dir']()",
            Runs(None),
        ),
        // Calls in callbacks and comprehensions count.
        (
            "import asyncio\nawait asyncio.gather(*[tools.read_file({'path': p}) for p in ['a', 'b']])\nf = lambda: tools.list_dir()\nawait f()",
            Runs(Some(&["list_dir", "read_file"])),
        ),
        (
            "async def go():\n    return await tools.nope_tool({})\nreturn 1",
            Refused(&["line 2, column 24", "no tool named `nope_tool`"]),
        ),
        // Comments and strings.
        (
            "# tools.delete_file({'path': '/'})\ns = \"tools.delete_file({})\"\nawait tools.list_dir()\nreturn s",
            Runs(Some(&["list_dir"])),
        ),
        // A reference that is not a call.
        (
            "if hasattr(tools, 'x'):\n    pass\nr = tools.read_file\nawait r({'path': 'a'})",
            Runs(None),
        ),
        (
            "r = tools.read_file\nawait r({'path': 'a'})",
            Runs(Some(READ)),
        ),
        // Provably wrong.
        (
            "x = 1\nawait tools.raed_file({'path': 'a'})",
            Refused(&[
                "line 2, column 13",
                "no tool named `raed_file`",
                "`read_file`",
            ]),
        ),
        (
            "await tools.read_file({})",
            Refused(&["missing required property \"path\""]),
        ),
        (
            "await tools.read_file()",
            Refused(&["missing required property \"path\""]),
        ),
        (
            "await tools.read_file({'path': 'a', 'colour': 'red'})",
            Refused(&["unexpected property \"colour\""]),
        ),
        (
            "await tools.read_file({'path': 42})",
            Refused(&["/path: expected string, got"]),
        ),
        (
            "p = 'a'\nawait tools.read_file({'path': p, 'offset': 'ten'})",
            Refused(&["line 2, column 13", "/offset: expected integer, got string"]),
        ),
        // Never refused.
        (
            "a = {'path': 1}\ntry:\n    await tools.read_file({**a, 'bogus': 1})\nexcept Exception:\n    pass",
            Runs(Some(READ)),
        ),
        (
            "args = [{'path': 'a'}]\nawait tools.read_file(*args)",
            Runs(Some(READ)),
        ),
        (
            "await tools.read_file({'path': ''.join(['a']), 'offset': 1 + 1})",
            Runs(Some(READ)),
        ),
        (
            "await tools.search({'anything': 1})",
            Runs(Some(&["search"])),
        ),
        // Syntax errors.
        ("await tools.read_file({'path': 'a'}", Syntax),
        ("x = = 1\nawait tools.nope_tool({})", Syntax),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_programs() {
    check_table(Arc::new(TypeScriptRuntime::new()), &typescript_table()).await;
}

/// A refusal quotes at most 200 characters of a name and lists at most ten problems.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_stay_short() {
    let long = format!("await tools.{}()", "x".repeat(300));
    let many: String = (0..12)
        .map(|i| format!("await tools.nope{i}();\n"))
        .collect();
    let long: &'static str = Box::leak(long.into_boxed_str());
    let many: &'static str = Box::leak(many.into_boxed_str());
    let table = [
        (
            long,
            Refused(&["no tool named `xxxxxxxxxx", "x\u{2026} (100 more bytes)`"]),
        ),
        (
            many,
            Refused(&[
                "12 calls cannot succeed",
                "line 10, column 13",
                "- and 2 more",
            ]),
        ),
    ];
    check_table(Arc::new(TypeScriptRuntime::new()), &table).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_programs() {
    check_table(Arc::new(PythonRuntime::new()), &python_table()).await;
}

// ---------------------------------------------------------------------------------------------
// Policy

/// A listener that denies any program that may call a `delete_*` tool (an open set may).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_denies_by_may_call() {
    let f = fixture(Arc::new(TypeScriptRuntime::new()));
    let scope = f.rt.scope();
    let _deny = scope
        .on_pre_execute(|exec, decision| match exec.may_call() {
            Some(may) if may.any(|name| name.starts_with("delete_")) => PreDecision::Deny {
                reason: "this program may delete files".into(),
            },
            _ => decision,
        })
        .unwrap();
    let deleting = "await tools.read_file({path: 'a'});\nawait tools.delete_file({path: 'a'})";
    let result = f.rt.execute(run_code(deleting)).await;
    assert_eq!(result.code(), Some(codes::DENIED));
    assert!(result.text().contains("this program may delete files"));
    assert_eq!(f.calls.load(Ordering::SeqCst), 0, "nothing of it ran");

    let open = "const name = 'read_file';\nawait tools[name]({path: 'a'})";
    let result = f.rt.execute(run_code(open)).await;
    assert_eq!(result.code(), Some(codes::DENIED), "an open set may delete");

    let reading = "await tools.read_file({path: 'a'});\nreturn 'read'";
    let result = f.rt.execute(run_code(reading)).await;
    assert_eq!(result.value(), Some(&json!({"logs": [], "result": "read"})));
    assert_eq!(f.calls.load(Ordering::SeqCst), 1);
}

/// Ask once when a program may write; its calls still go through the pipeline one by one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_asked_once_for_a_program() {
    let f = fixture(Arc::new(TypeScriptRuntime::new()));
    let scope = f.rt.scope();
    let sub_calls = Arc::new(AtomicUsize::new(0));
    let counted = sub_calls.clone();
    let _ask = scope
        .on_pre_execute(move |exec, decision| {
            if exec.parent().is_some() {
                counted.fetch_add(1, Ordering::SeqCst);
                return decision;
            }
            match exec.may_call() {
                Some(may) if may.any(|name| name.starts_with("write_")) => PreDecision::Ask {
                    reason: Some("the program may write files".into()),
                },
                _ => decision,
            }
        })
        .unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let record = asked.clone();
    let _approval = scope
        .set_approval(
            move |exec: tools_runtime::ToolExecution, reason: Option<String>| {
                record.lock().unwrap().push((
                    exec.name().to_owned(),
                    exec.may_call().cloned(),
                    reason,
                ));
                async { Approval::Approved }
            },
        )
        .unwrap();
    let program = "for (const p of ['a', 'b', 'c']) {\n  await tools.write_file({path: p, content: 'x'});\n}\nawait tools.read_file({path: 'a'});";
    let result = f.rt.execute(run_code(program)).await;
    assert!(!result.is_error(), "{result:?}");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(
        asked,
        vec![(
            "run_code".to_owned(),
            Some(MayCall::closed(["read_file", "write_file"])),
            Some("the program may write files".to_owned()),
        )],
        "asked once, for the program"
    );
    assert_eq!(
        sub_calls.load(Ordering::SeqCst),
        4,
        "each call passed policy"
    );
    assert_eq!(f.calls.load(Ordering::SeqCst), 4);

    // A program that only reads is not asked about.
    let result =
        f.rt.execute(run_code("await tools.read_file({path: 'a'})"))
            .await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(f.calls.load(Ordering::SeqCst), 5);
}

/// A program that reaches a tool in a way the analysis does not see (here the `Function`
/// constructor under a computed name) cannot call outside the set it was checked for: a
/// program whose set is closed has only that set bound (and the bridge refuses any other name).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_holds_a_program_to_its_closed_set() {
    let f = fixture(Arc::new(TypeScriptRuntime::new()));
    for (call, refusal) in [
        ("tools.delete_file({path: \"x\"})", "not a function"),
        (
            "callTool(\"delete_file\", {path: \"x\"})",
            "no tool named \"delete_file\" is bound in this run",
        ),
    ] {
        f.seen.lock().unwrap().clear();
        let program = format!(
            "const k = 'constr' + 'uctor';\nconst F = (async () => 0)[k];\ntry {{\n  await F('return {call}')();\n}} catch (e) {{\n  return String(e);\n}}\nawait tools.read_file({{path: 'a'}});\nreturn 'no error'"
        );
        let result = f.rt.execute(run_code(&program)).await;
        let seen = f.seen.lock().unwrap().clone();
        assert_eq!(seen, vec![Some(MayCall::closed(["read_file"]))]);
        let text = result.text();
        assert!(text.contains(refusal), "{call}: {text}");
        assert_eq!(f.calls.load(Ordering::SeqCst), 0, "delete_file did not run");
    }
}

/// Sub-calls are not analysed: their `may_call` is `None`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_calls_carry_no_analysis() {
    let f = fixture(Arc::new(TypeScriptRuntime::new()));
    let scope = f.rt.scope();
    let sub = Arc::new(Mutex::new(Vec::new()));
    let record = sub.clone();
    let _l = scope
        .on_pre_execute(move |exec, decision| {
            if exec.parent().is_some() {
                record.lock().unwrap().push(exec.may_call().cloned());
            }
            decision
        })
        .unwrap();
    let result = f.rt.execute(run_code("await tools.list_dir()")).await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(*sub.lock().unwrap(), vec![None]);
}

/// Any definition may carry a prepare hook: it runs after validation and before every
/// listener, and may refuse the call or record what it may call.
#[tokio::test]
async fn a_definition_prepare_hook_refuses_or_records() {
    let rt = ToolRuntime::builder().build().unwrap();
    let scope = rt.scope();
    let def = ToolDefinition::builder("batch")
        .description("calls the tools it names")
        .input_schema(json!({"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}}, "required": ["names"]}))
        .output(Output::json(json!({})))
        .prepare(|args, _ctx| async move {
            let names: BTreeSet<String> = args["names"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect();
            if names.contains("forbidden") {
                return Err(ToolError::with_code("BATCH_REFUSED", "`forbidden` is not allowed"));
            }
            let mut prepared = Extensions::new();
            prepared.insert(MayCall::Closed(names));
            Ok(prepared)
        })
        .execute(|_args, _ctx| async { Ok::<_, ToolError>(json!(null)) })
        .build()
        .unwrap();
    let _reg = scope.register(def).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let _l = scope
        .on_pre_execute(move |exec, decision| {
            record.lock().unwrap().push(exec.may_call().cloned());
            decision
        })
        .unwrap();
    let ok = rt
        .execute(ToolCall::new("1", "batch", json!({"names": ["a", "b"]})))
        .await;
    assert!(!ok.is_error());
    let refused = rt
        .execute(ToolCall::new("2", "batch", json!({"names": ["forbidden"]})))
        .await;
    assert_eq!(refused.code(), Some("BATCH_REFUSED"));
    assert_eq!(
        refused.error().unwrap().message,
        "`forbidden` is not allowed"
    );
    let invalid = rt.execute(ToolCall::new("3", "batch", json!({}))).await;
    assert_eq!(
        invalid.code(),
        Some(codes::INVALID_ARGS),
        "validation comes first"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        vec![Some(MayCall::closed(["a", "b"]))],
        "listeners saw only the call that was not refused"
    );
}

// ---------------------------------------------------------------------------------------------
// Limits

/// A program nested as deep as the analysis goes is analysed on the caller's stack (here a
/// tokio worker's); a deeper one is not analysed (its set is open) and runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nesting_limits_of_the_analysis() {
    let f = fixture(Arc::new(TypeScriptRuntime::new()));
    let nested = |depth: usize| {
        format!(
            "return {}await tools.nope_tool({{}}){};",
            "[".repeat(depth),
            "]".repeat(depth)
        )
    };
    let result =
        f.rt.execute(run_code(&nested(MAX_ANALYSIS_NESTING - 4)))
            .await;
    assert_eq!(result.code(), Some(CODE_NOT_RUN), "{result:?}");
    let result =
        f.rt.execute(run_code(&nested(MAX_ANALYSIS_NESTING + 10)))
            .await;
    assert_eq!(result.code(), Some(CODE_RUN_FAILED), "{result:?}");
    assert!(result.text().contains("(runtime)"), "it ran: {result:?}");
    assert_eq!(*f.seen.lock().unwrap(), vec![Some(MayCall::Open)]);
}

/// Without a zygote (spawn per run) Python programs are not analysed: open, never refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_without_a_zygote_is_not_analysed() {
    let f = fixture(Arc::new(
        PythonRuntime::new().with_mode(PythonMode::SpawnPerRun),
    ));
    let result = f.rt.execute(run_code("await tools.nope_tool({})")).await;
    assert_eq!(result.code(), Some(CODE_RUN_FAILED), "{result:?}");
    assert!(result.text().contains("(runtime)"), "it ran: {result:?}");
    assert_eq!(*f.seen.lock().unwrap(), vec![Some(MayCall::Open)]);
}

/// A Python program longer than the zygote analyses is not analysed: open, never refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_python_program_is_not_analysed() {
    let f = fixture(Arc::new(PythonRuntime::new()));
    let padding = "x = 1\n".repeat(300 * 1024 / 6);
    let program = format!("{padding}await tools.nope_tool({{}})");
    let result = f.rt.execute(run_code(&program)).await;
    assert_eq!(result.code(), Some(CODE_RUN_FAILED), "{result:?}");
    assert_eq!(*f.seen.lock().unwrap(), vec![Some(MayCall::Open)]);
}

/// With the analysis off, every program runs as it is and may call anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_analysis_can_be_turned_off() {
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(TypeScriptRuntime::new()).pre_run_analysis(false))
        .build()
        .unwrap();
    let scope = rt.scope();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let _l = scope
        .on_pre_execute(move |exec, decision| {
            record.lock().unwrap().push(exec.may_call().cloned());
            decision
        })
        .unwrap();
    let result = rt.execute(run_code("await tools.nope_tool({})")).await;
    assert_eq!(result.code(), Some(CODE_RUN_FAILED), "{result:?}");
    assert!(result.text().contains("(runtime)"), "it ran: {result:?}");
    assert_eq!(*seen.lock().unwrap(), vec![Some(MayCall::Open)]);
}
