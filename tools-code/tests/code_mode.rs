//! Code Mode in the registry, clause by clause (the spec's "Service" config and modes,
//! `presentAs`, "Code Mode", "Parallel execution" for bindings, "Model Experience"): presentation
//! modes, prompt assembly, the reserved `run_code` transport, the dispatch bridge, session
//! events, contexts, settlement and the result. Programs run on the TypeScript runtime here; the
//! end-to-end tests of both languages are in `code_mode_e2e.rs`.

#![cfg(feature = "typescript")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tools_code::{
    CODE_ONLY_SECTION, CODE_RUN_FAILED, CodeLimits, CodeMode, NO_OUTPUT, RecordingSink,
    SDK_SECTION, SessionEvent, TypeScriptRuntime,
};
use tools_runtime::error::RegistryError;
use tools_runtime::hooks::PostDecision;
use tools_runtime::presentation::{AssembleOptions, AssemblyError};
use tools_runtime::progress::Progress;
use tools_runtime::{
    AdditionalContext, ContentBlock, Output, PresentationMode, Scope, ToolCall, ToolDefinition,
    ToolFilter, ToolRuntime, codes,
};

// ---------------------------------------------------------------------------------------------
// Helpers

/// `{x?: integer}` in, `{x}` out; concurrency-safe when `safe`.
fn echo_tool(name: &str, safe: bool) -> ToolDefinition {
    let b = ToolDefinition::builder(name)
        .description(format!("echo from {name}"))
        .input_schema(json!({"type": "object", "properties": {"x": {"type": "integer"}}}))
        .output(Output::json(json!({"type": "object"})))
        .execute(|args, _ctx| async move {
            Ok(json!({"x": args.get("x").cloned().unwrap_or(json!(0))}))
        });
    if safe {
        b.concurrency_safe(|_| true).build().unwrap()
    } else {
        b.build().unwrap()
    }
}

fn echo(name: &str) -> ToolDefinition {
    echo_tool(name, true)
}

fn code_runtime(mode: PresentationMode) -> ToolRuntime {
    ToolRuntime::builder()
        .mode(mode)
        .extension(CodeMode::new(TypeScriptRuntime::new()))
        .build()
        .unwrap()
}

fn with_sink(mode: CodeMode) -> (ToolRuntime, RecordingSink) {
    let sink = RecordingSink::new();
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(mode.events(sink.clone()))
        .build()
        .unwrap();
    (rt, sink)
}

fn run_code(code: &str) -> ToolCall {
    ToolCall::new(
        "outer",
        "run_code",
        json!({"code": code, "description": "a test program"}),
    )
}

fn names(rt: &ToolRuntime, scope: &Scope) -> Vec<String> {
    rt.assemble(scope.key())
        .unwrap()
        .tool_names()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

fn kinds(events: &[SessionEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| (e.kind().to_owned(), e.id().to_owned()))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Presentation modes

#[tokio::test]
async fn mode_is_native_by_default_and_set_on_the_runtime() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    assert_eq!(
        rt.presentation_mode(plugin.key()),
        Some(PresentationMode::Native)
    );
    let rt = code_runtime(PresentationMode::Both);
    let agent = rt.agent_scope();
    assert_eq!(
        rt.presentation_mode(agent.key()),
        Some(PresentationMode::Both)
    );
}

#[tokio::test]
async fn present_as_overrides_per_agent_and_is_inherited_by_nested_agents() {
    let rt = code_runtime(PresentationMode::Native);
    let plugin = rt.scope();
    let _t = plugin.register(echo("read")).unwrap();
    let agent = rt.agent_scope();
    let other = rt.agent_scope();
    let _p = agent.present_as(PresentationMode::Code).unwrap();
    let nested = agent.agent();
    assert_eq!(
        rt.presentation_mode(agent.key()),
        Some(PresentationMode::Code)
    );
    assert_eq!(
        rt.presentation_mode(nested.key()),
        Some(PresentationMode::Code)
    );
    assert_eq!(
        rt.presentation_mode(other.key()),
        Some(PresentationMode::Native)
    );
    assert_eq!(names(&rt, &agent), vec!["run_code"]);
    assert_eq!(names(&rt, &other), vec!["read"]);
}

#[tokio::test]
async fn present_as_fails_from_the_global_scope_and_on_a_second_call() {
    let rt = code_runtime(PresentationMode::Native);
    let plugin = rt.scope();
    let err = plugin.present_as(PresentationMode::Code).unwrap_err();
    assert_eq!(err, RegistryError::PresentAsOnGlobal);
    assert_eq!(err.code(), "PRESENT_AS_ON_GLOBAL");
    let agent = rt.agent_scope();
    let _first = agent.present_as(PresentationMode::Code).unwrap();
    let err = agent.present_as(PresentationMode::Both).unwrap_err();
    assert_eq!(err.code(), "PRESENT_AS_TWICE");
    assert!(err.to_string().contains("`code`"), "{err}");
}

#[tokio::test]
async fn present_as_is_disposed_with_its_registration_and_with_its_scope() {
    let rt = code_runtime(PresentationMode::Native);
    let agent = rt.agent_scope();
    let reg = agent.present_as(PresentationMode::Code).unwrap();
    reg.dispose();
    assert_eq!(
        rt.presentation_mode(agent.key()),
        Some(PresentationMode::Native)
    );
    // A second choice is allowed once the first is gone.
    let _again = agent.present_as(PresentationMode::Both).unwrap();
    let key = agent.key();
    drop(agent);
    assert_eq!(rt.presentation_mode(key), None);
}

#[tokio::test]
async fn present_as_leaves_schemas_unchanged() {
    let rt = code_runtime(PresentationMode::Native);
    let plugin = rt.scope();
    let _a = plugin.register(echo("a")).unwrap();
    let _b = plugin.register(echo("b")).unwrap();
    let agent = rt.agent_scope();
    let before = rt.schemas(agent.key());
    let _p = agent.present_as(PresentationMode::Code).unwrap();
    assert_eq!(rt.schemas(agent.key()), before);
    assert!(before.iter().all(|s| s.name != "run_code"));
}

// ---------------------------------------------------------------------------------------------
// Prompt assembly

#[tokio::test]
async fn assembly_per_mode_contributes_definitions_and_sections() {
    for (mode, tools, sections) in [
        (PresentationMode::Native, vec!["a", "b"], vec![]),
        (
            PresentationMode::Code,
            vec!["run_code"],
            vec![(CODE_ONLY_SECTION, 140), (SDK_SECTION, 150)],
        ),
        (
            PresentationMode::Both,
            vec!["a", "b", "run_code"],
            vec![(SDK_SECTION, 150)],
        ),
    ] {
        let rt = code_runtime(mode);
        let plugin = rt.scope();
        let _b = plugin.register(echo("b")).unwrap();
        let _a = plugin.register(echo("a")).unwrap();
        let assembly = rt.assemble(plugin.key()).unwrap();
        assert_eq!(assembly.mode, mode);
        assert_eq!(assembly.tool_names(), tools, "{mode}");
        let got: Vec<(&str, i32)> = assembly
            .sections
            .iter()
            .map(|s| (s.id.as_str(), s.order))
            .collect();
        assert_eq!(got, sections, "{mode}");
    }
}

#[tokio::test]
async fn the_sdk_section_holds_the_usage_and_the_sdk_of_the_visible_tools_in_name_order() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let _z = plugin.register(echo("zeta")).unwrap();
    let _a = plugin.register(echo("alpha")).unwrap();
    let _h = plugin.register(echo("hidden")).unwrap();
    let agent = rt.agent_scope();
    let _m = agent.restrict(ToolFilter::deny(["hidden"])).unwrap();
    let sdk = rt
        .assemble(agent.key())
        .unwrap()
        .section(SDK_SECTION)
        .unwrap()
        .text
        .clone();
    assert!(sdk.starts_with("## Calling tools from code"), "{sdk}");
    assert!(sdk.contains("```typescript\n"));
    let (alpha, zeta) = (sdk.find("alpha(").unwrap(), sdk.find("zeta(").unwrap());
    assert!(alpha < zeta, "lexicographic order");
    assert!(!sdk.contains("hidden"), "a masked tool is not in the SDK");
    assert!(!sdk.contains("run_code("), "run_code is not a binding");
}

#[tokio::test]
async fn the_sdk_is_byte_identical_for_an_unchanged_tool_set_and_follows_changes() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let _a = plugin.register(echo("a")).unwrap();
    let agent = rt.agent_scope();
    let first = rt.assemble(agent.key()).unwrap();
    let second = rt.assemble(agent.key()).unwrap();
    assert_eq!(first, second);
    let first_sdk = first.section(SDK_SECTION).unwrap().text.clone();
    let second_sdk = second.section(SDK_SECTION).unwrap().text.clone();
    assert!(
        Arc::ptr_eq(&first_sdk, &second_sdk),
        "an unchanged tool set re-assembles from the cache, without rendering"
    );

    // A change elsewhere (another agent's local tool) leaves this scope's set as it was: the
    // cached text is kept.
    let other = rt.agent_scope();
    let _local = other.register(echo("elsewhere")).unwrap();
    let third = rt.assemble(agent.key()).unwrap();
    assert!(Arc::ptr_eq(
        &first_sdk,
        &third.section(SDK_SECTION).unwrap().text
    ));

    // A change of the visible set renders anew, and the same set again renders the same bytes.
    let b = plugin.register(echo("b")).unwrap();
    let with_b = rt.assemble(agent.key()).unwrap();
    assert!(with_b.section(SDK_SECTION).unwrap().text.contains("b("));
    b.dispose();
    let again = rt.assemble(agent.key()).unwrap();
    assert_eq!(*again.section(SDK_SECTION).unwrap().text, *first_sdk);
}

#[tokio::test]
async fn tool_order_orders_definitions_and_rejects_what_the_mode_does_not_contribute() {
    let rt = code_runtime(PresentationMode::Native);
    let plugin = rt.scope();
    for n in ["a", "b", "c"] {
        let _ = plugin.register(echo(n)).unwrap();
    }
    let _r = plugin.reserve("later").unwrap();
    let options = AssembleOptions {
        tool_order: vec!["c".into(), "later".into(), "a".into()],
    };
    let assembly = rt.assemble_with(plugin.key(), &options).unwrap();
    assert_eq!(assembly.tool_names(), vec!["c", "a", "b"]);

    let agent = rt.agent_scope();
    let _p = agent.present_as(PresentationMode::Code).unwrap();
    let err = rt.assemble_with(agent.key(), &options).unwrap_err();
    assert_eq!(err.code(), "TOOL_ORDER");
    assert!(err.to_string().contains("`c`"), "{err}");
    let unknown = AssembleOptions {
        tool_order: vec!["nope".into()],
    };
    assert!(matches!(
        rt.assemble_with(plugin.key(), &unknown),
        Err(AssemblyError::ToolOrder { .. })
    ));
    let run_code_first = AssembleOptions {
        tool_order: vec!["run_code".into()],
    };
    assert_eq!(
        rt.assemble_with(agent.key(), &run_code_first)
            .unwrap()
            .tool_names(),
        vec!["run_code"]
    );
}

#[tokio::test]
async fn an_assemble_hook_replaces_the_assembly_authoritatively() {
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(TypeScriptRuntime::new()))
        .on_assemble(|_scope, assembly| {
            let mut replaced = assembly.clone();
            replaced.sections.retain(|s| s.id != CODE_ONLY_SECTION);
            replaced.tools.clear();
            Some(replaced)
        })
        .build()
        .unwrap();
    let plugin = rt.scope();
    let assembly = rt.assemble(plugin.key()).unwrap();
    assert!(assembly.tools.is_empty());
    assert!(assembly.section(CODE_ONLY_SECTION).is_none());
    assert!(assembly.section(SDK_SECTION).is_some());
}

#[tokio::test]
async fn a_non_native_mode_without_a_code_runtime_fails_assembly_naming_the_fix() {
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Both)
        .build()
        .unwrap();
    let plugin = rt.scope();
    let err = rt.assemble(plugin.key()).unwrap_err();
    assert_eq!(err.code(), "NO_CODE_RUNTIME");
    assert!(
        err.to_string().contains("extension(CodeMode::new("),
        "{err}"
    );
    // A native agent of the same runtime still assembles.
    let agent = rt.agent_scope();
    let _p = agent.present_as(PresentationMode::Native).unwrap();
    assert!(rt.assemble(agent.key()).is_ok());
}

#[tokio::test]
async fn a_disposed_scope_does_not_assemble() {
    let rt = code_runtime(PresentationMode::Native);
    let agent = rt.agent_scope();
    let key = agent.key();
    drop(agent);
    assert_eq!(rt.assemble(key).unwrap_err(), AssemblyError::ScopeDisposed);
}

// ---------------------------------------------------------------------------------------------
// run_code, the reserved transport

#[tokio::test]
async fn run_code_is_reserved_in_every_mode() {
    for mode in [
        PresentationMode::Native,
        PresentationMode::Code,
        PresentationMode::Both,
    ] {
        let rt = code_runtime(mode);
        let plugin = rt.scope();
        let agent = rt.agent_scope();
        let fake = echo("run_code");
        for err in [
            plugin.register(fake.clone()).unwrap_err(),
            agent.register(fake.clone()).unwrap_err(),
            plugin.reserve("run_code").unwrap_err(),
            agent.restrict(ToolFilter::deny(["run_code"])).unwrap_err(),
            agent.restrict(ToolFilter::allow(["run_code"])).unwrap_err(),
        ] {
            assert_eq!(err.code(), "RESERVED_NAME", "{mode}: {err}");
        }
        assert!(!rt.is_admitted("run_code", agent.key()));
    }
}

#[tokio::test]
async fn run_code_takes_code_and_description_and_has_its_own_output_declaration() {
    let rt = code_runtime(PresentationMode::Code);
    let def = rt.owned_definition("run_code").unwrap();
    assert_eq!(
        def.input_schema()["required"],
        json!(["code", "description"])
    );
    assert_eq!(def.output_schema()["required"], json!(["logs"]));
    for args in [json!({"code": "return 1"}), json!({"description": "x"})] {
        let r = rt
            .execute(ToolCall::new("c", "run_code", args.clone()))
            .await;
        assert_eq!(r.code(), Some(codes::INVALID_ARGS), "{args}");
    }
}

#[tokio::test]
async fn run_code_is_unknown_where_the_mode_is_native() {
    let rt = code_runtime(PresentationMode::Native);
    let r = rt.execute(run_code("return 1")).await;
    assert_eq!(r.code(), Some(codes::UNKNOWN_TOOL));
    assert!(
        rt.get("run_code", tools_runtime::ScopeKey::GLOBAL)
            .is_none()
    );
    let agent = rt.agent_scope();
    let _p = agent.present_as(PresentationMode::Both).unwrap();
    assert!(rt.get("run_code", agent.key()).is_some());
    let r = rt
        .execute(run_code("return 1").with_agent(agent.key()))
        .await;
    assert!(!r.is_error(), "{}", r.text());
}

#[tokio::test]
async fn under_code_a_direct_call_is_unknown_before_any_policy_and_names_the_way_back() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let _t = plugin.register(echo("read")).unwrap();
    let policy = Arc::new(AtomicUsize::new(0));
    let (p1, p2) = (policy.clone(), policy.clone());
    let _pre = plugin
        .on_pre_execute(move |_, d| {
            p1.fetch_add(1, Ordering::SeqCst);
            d
        })
        .unwrap();
    let _g = plugin
        .guard(move |_| {
            p2.fetch_add(1, Ordering::SeqCst);
            None
        })
        .unwrap();
    let r = rt
        .execute(ToolCall::new("c", "read", json!({"x": "not even valid"})))
        .await;
    assert_eq!(r.code(), Some(codes::UNKNOWN_TOOL));
    assert!(
        r.text().contains("from inside a `run_code` program"),
        "{}",
        r.text()
    );
    assert_eq!(policy.load(Ordering::SeqCst), 0, "no listener saw the call");

    // A call with a parent token (a program's call) is exempt.
    let outer = rt
        .execute(run_code("return await tools.read({x: 3})"))
        .await;
    assert_eq!(outer.value().unwrap()["result"], json!({"x": 3}));
    assert_eq!(
        policy.load(Ordering::SeqCst),
        4,
        "run_code and read, each seen twice"
    );

    // An unknown name is still an ordinary unknown tool.
    let r = rt.execute(ToolCall::new("c", "reed", json!({}))).await;
    assert!(r.text().contains("unknown tool `reed`"), "{}", r.text());
}

#[tokio::test]
async fn under_both_direct_calls_run() {
    let rt = code_runtime(PresentationMode::Both);
    let plugin = rt.scope();
    let _t = plugin.register(echo("read")).unwrap();
    let r = rt
        .execute(ToolCall::new("c", "read", json!({"x": 1})))
        .await;
    assert_eq!(r.value(), Some(&json!({"x": 1})));
}

// ---------------------------------------------------------------------------------------------
// The bridge

#[tokio::test]
async fn sub_calls_run_the_whole_pipeline_with_the_outer_token_as_parent() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let _t = plugin.register(echo("read")).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _o = plugin
        .on_result(move |exec, _| {
            s.lock().unwrap().push((
                exec.name().to_owned(),
                exec.call_id().to_owned(),
                exec.token(),
                exec.parent(),
            ));
        })
        .unwrap();
    // A post-execute replacement is what the program receives: the final value after policy.
    let _p = plugin
        .on_post_execute(|exec, view| {
            if exec.name() == "read" {
                PostDecision::replace_value(json!({"x": view.value["x"].as_i64().unwrap() * 10}))
            } else {
                PostDecision::accept()
            }
        })
        .unwrap();
    let r = rt
        .execute(run_code(
            "return [await tools.read({x: 1}), await tools.read({x: 2})];",
        ))
        .await;
    assert_eq!(r.value().unwrap()["result"], json!([{"x": 10}, {"x": 20}]));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let outer = seen.iter().find(|(n, ..)| n == "run_code").unwrap();
    assert_eq!(outer.3, None);
    let subs: Vec<_> = seen.iter().filter(|(n, ..)| n == "read").collect();
    assert_eq!(subs[0].1, "outer:code:1");
    assert_eq!(subs[1].1, "outer:code:2");
    assert!(subs.iter().all(|s| s.3 == Some(outer.2)));
}

#[tokio::test]
async fn an_open_program_binds_each_tool_at_its_first_use_as_the_scope_has_it_then() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let _a = plugin.register(echo("alpha")).unwrap();
    // Registers `gamma` when called (its scope is kept for the test's lifetime).
    let kept: Arc<Mutex<Vec<Scope>>> = Arc::default();
    let (registry, keep) = (rt.clone(), kept.clone());
    let register = ToolDefinition::builder("register_gamma")
        .description("registers gamma")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "object"})))
        .execute(move |_args, _ctx| {
            let scope = registry.scope();
            let _ = scope.register(echo("gamma")).unwrap();
            keep.lock().unwrap().push(scope);
            async { Ok(json!({})) }
        })
        .build()
        .unwrap();
    let _r = plugin.register(register).unwrap();
    // A computed name: the analysis cannot close the set, so the run binds on first use.
    let r = rt
        .execute(run_code(
            "const n = (s: string) => s;
             const before = typeof tools[n('gamma')];
             await tools[n('register_gamma')]({});
             const after = await tools[n('gamma')]({x: 5});
             return [before, after, 'alpha' in tools, typeof tools[n('run_code')], Object.keys(tools)];",
        ))
        .await;
    assert_eq!(
        r.value().unwrap()["result"],
        json!([
            "undefined",
            {"x": 5},
            true,
            "undefined",
            ["alpha", "gamma", "register_gamma"]
        ]),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn a_failed_sub_call_rejects_with_a_tool_call_error_carrying_only_name_and_message() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let _t = plugin.register(echo("write")).unwrap();
    let _g = plugin
        .guard(|exec| (exec.name() == "write").then(|| "writes are off today".to_owned()))
        .unwrap();
    let r = rt
        .execute(run_code(
            r#"try { await tools.write({x: 1}); return "no"; }
               catch (e) { return {name: e.name, tool: e.toolName, message: e.message,
                                   isError: e instanceof ToolCallError, code: e.code ?? null}; }"#,
        ))
        .await;
    assert_eq!(
        r.value().unwrap()["result"],
        json!({"name": "ToolCallError", "tool": "write", "message": "writes are off today",
               "isError": true, "code": null})
    );
    // A bad argument rejects that call only (computed: a literal one is refused before the
    // program runs, see code_analysis.rs).
    let r = rt
        .execute(run_code(
            r#"let out = []; const bad: any = ["nope"][0];
               try { await tools.write({x: bad}); } catch (e) { out.push(e.toolName); }
               out.push((await tools.write({x: 1}).catch(e => e.message)));
               return out;"#,
        ))
        .await;
    assert_eq!(
        r.value().unwrap()["result"],
        json!(["write", "writes are off today"])
    );
}

/// A tool whose body counts how many calls run at once and records the peak; it sleeps
/// `millis` so that calls that may overlap do.
fn counting(
    name: &str,
    safe: bool,
    now: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
    log: Arc<Mutex<Vec<String>>>,
) -> ToolDefinition {
    let n = name.to_owned();
    let b = ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "null"})))
        .execute(move |_args, _ctx| {
            let (now, peak, log, n) = (now.clone(), peak.clone(), log.clone(), n.clone());
            async move {
                let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(running, Ordering::SeqCst);
                log.lock()
                    .unwrap()
                    .push(format!("start {n} ({running} running)"));
                tokio::time::sleep(Duration::from_millis(50)).await;
                now.fetch_sub(1, Ordering::SeqCst);
                log.lock().unwrap().push(format!("end {n}"));
                Ok(Value::Null)
            }
        });
    if safe {
        b.concurrency_safe(|_| true).build().unwrap()
    } else {
        b.build().unwrap()
    }
}

#[tokio::test]
async fn safe_calls_overlap_up_to_the_limit_and_an_exclusive_call_runs_alone_as_a_barrier() {
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(TypeScriptRuntime::new()).max_parallel_sub_calls(3))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let (now, peak, log) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(Mutex::new(Vec::new())),
    );
    let _s = plugin
        .register(counting(
            "safe",
            true,
            now.clone(),
            peak.clone(),
            log.clone(),
        ))
        .unwrap();
    let _x = plugin
        .register(counting(
            "excl",
            false,
            now.clone(),
            peak.clone(),
            log.clone(),
        ))
        .unwrap();
    let r = rt
        .execute(run_code(
            r#"await Promise.all([tools.safe({}), tools.safe({}), tools.safe({}), tools.safe({}),
                                 tools.excl({}), tools.safe({})]);"#,
        ))
        .await;
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(peak.load(Ordering::SeqCst), 3, "{:?}", log.lock().unwrap());
    let log = log.lock().unwrap().clone();
    let excl_start = log
        .iter()
        .position(|l| l.starts_with("start excl"))
        .unwrap();
    let excl_end = log.iter().position(|l| l == "end excl").unwrap();
    assert_eq!(log[excl_start], "start excl (1 running)", "{log:?}");
    assert_eq!(
        excl_end,
        excl_start + 1,
        "nothing ran beside the exclusive call: {log:?}"
    );
    let safe_ends_before = log[..excl_start]
        .iter()
        .filter(|l| *l == "end safe")
        .count();
    assert_eq!(safe_ends_before, 4, "the pool drained before it: {log:?}");
}

#[tokio::test]
async fn max_parallel_sub_calls_is_validated_and_one_means_serial() {
    let err = ToolRuntime::builder()
        .extension(CodeMode::new(TypeScriptRuntime::new()).max_parallel_sub_calls(0))
        .build()
        .unwrap_err();
    assert_eq!(err.code(), "ZERO_PARALLEL");
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(CodeMode::new(TypeScriptRuntime::new()).max_parallel_sub_calls(1))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let (now, peak, log) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(Mutex::new(Vec::new())),
    );
    let _s = plugin
        .register(counting("safe", true, now, peak.clone(), log))
        .unwrap();
    let r = rt
        .execute(run_code(
            "await Promise.all([tools.safe({}), tools.safe({}), tools.safe({})]);",
        ))
        .await;
    assert!(!r.is_error(), "{}", r.text());
    assert_eq!(peak.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn invalid_limits_are_refused_when_the_runtime_is_built() {
    let err = ToolRuntime::builder()
        .extension(
            CodeMode::new(TypeScriptRuntime::new())
                .limits(CodeLimits::default().with_max_output_bytes(0)),
        )
        .build()
        .unwrap_err();
    assert_eq!(err.code(), "LIMIT_ZERO_OUTPUT");
}

// ---------------------------------------------------------------------------------------------
// Session events

#[tokio::test]
async fn each_started_sub_call_records_a_start_and_its_model_facing_outcome() {
    let (rt, sink) = with_sink(CodeMode::new(TypeScriptRuntime::new()));
    let plugin = rt.scope();
    let _t = plugin.register(echo("read")).unwrap();
    let _g = plugin
        .guard(|exec| (exec.arguments()["x"] == 2).then(|| "not two".to_owned()))
        .unwrap();
    let r = rt
        .execute(run_code(
            "await tools.read({x: 1}); await tools.read({x: 2}).catch(() => null);",
        ))
        .await;
    assert!(!r.is_error(), "{}", r.text());
    let events = sink.take();
    assert_eq!(
        kinds(&events),
        vec![
            ("code-dispatch-start".into(), "outer:code:1".into()),
            ("code-dispatch".into(), "outer:code:1".into()),
            ("code-dispatch-start".into(), "outer:code:2".into()),
            ("code-dispatch".into(), "outer:code:2".into()),
        ]
    );
    match &events[0] {
        SessionEvent::CodeDispatchStart {
            parent_call_id,
            tool,
            arguments,
            ..
        } => {
            assert_eq!(parent_call_id, "outer");
            assert_eq!(tool, "read");
            assert_eq!(**arguments, json!({"x": 1}));
        }
        other => panic!("{other:?}"),
    }
    match (&events[1], &events[3]) {
        (
            SessionEvent::CodeDispatch {
                content: ok,
                is_error: false,
                started,
                ended,
                ..
            },
            SessionEvent::CodeDispatch {
                content: failed,
                is_error: true,
                ..
            },
        ) => {
            assert_eq!(ok, &vec![ContentBlock::text(r#"{"x":1}"#)]);
            assert_eq!(failed, &vec![ContentBlock::text("Error: not two")]);
            assert!(started <= ended);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_sub_calls_progress_is_a_session_event_and_the_runs_own_progress() {
    let (rt, sink) = with_sink(CodeMode::new(TypeScriptRuntime::new()));
    let plugin = rt.scope();
    let export = ToolDefinition::builder("export")
        .description("reports twice")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_args, ctx| async move {
            ctx.progress(Progress::new(1.0).with_total(2.0).with_message("first"))?;
            ctx.progress(Progress::new(2.0).with_total(2.0))?;
            Ok(json!(2))
        })
        .build()
        .unwrap();
    let _e = plugin.register(export).unwrap();
    type Reports = Arc<Mutex<Vec<(f64, Option<String>)>>>;
    let outer: Reports = Arc::default();
    let o = outer.clone();
    let call = run_code("return (await tools.export({})) + (await tools.export({}));")
        .with_progress(move |p| {
            o.lock()
                .unwrap()
                .push((p.done(), p.message().map(str::to_owned)))
        });
    let r = rt.execute(call).await;
    assert_eq!(r.value().unwrap()["result"], json!(4), "{}", r.text());
    let events = sink.events();
    assert_eq!(
        kinds(&events),
        [
            ("code-dispatch-start", "outer:code:1"),
            ("code-dispatch-progress", "outer:code:1"),
            ("code-dispatch-progress", "outer:code:1"),
            ("code-dispatch", "outer:code:1"),
            ("code-dispatch-start", "outer:code:2"),
            ("code-dispatch-progress", "outer:code:2"),
            ("code-dispatch-progress", "outer:code:2"),
            ("code-dispatch", "outer:code:2"),
        ]
        .map(|(k, i)| (k.to_owned(), i.to_owned()))
    );
    let SessionEvent::CodeDispatchProgress {
        parent_call_id,
        tool,
        done,
        total,
        message,
        ..
    } = &events[1]
    else {
        panic!("{:?}", events[1]);
    };
    assert_eq!(
        (
            parent_call_id.as_str(),
            tool.as_str(),
            *done,
            *total,
            message.as_deref()
        ),
        ("outer", "export", 1.0, Some(2.0), Some("first"))
    );
    // The run's own progress counts its calls' reports.
    assert_eq!(
        *outer.lock().unwrap(),
        [
            (1.0, Some("export: 1/2: first".to_owned())),
            (2.0, Some("export: 2/2".to_owned())),
            (3.0, Some("export: 1/2: first".to_owned())),
            (4.0, Some("export: 2/2".to_owned())),
        ]
    );
}

#[tokio::test]
async fn a_queued_call_abandoned_at_settlement_records_nothing() {
    let (rt, sink) = with_sink(CodeMode::new(TypeScriptRuntime::new()).max_parallel_sub_calls(1));
    let plugin = rt.scope();
    let started = Arc::new(AtomicUsize::new(0));
    let s = started.clone();
    let slow = ToolDefinition::builder("slow")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "null"})))
        .concurrency_safe(|_| true)
        .execute(move |_a, ctx| {
            let s = s.clone();
            async move {
                s.fetch_add(1, Ordering::SeqCst);
                ctx.cancellation().cancelled().await;
                Ok(Value::Null)
            }
        })
        .build()
        .unwrap();
    let _t = plugin.register(slow).unwrap();
    // The program returns while its first call runs and the second waits in the pool.
    let r = rt
        .execute(run_code("tools.slow({}); tools.slow({}); return 'left';"))
        .await;
    assert_eq!(r.value().unwrap()["result"], json!("left"));
    assert_eq!(started.load(Ordering::SeqCst), 1);
    let events = sink.take();
    assert_eq!(
        kinds(&events),
        vec![
            ("code-dispatch-start".into(), "outer:code:1".into()),
            ("code-dispatch".into(), "outer:code:1".into()),
        ],
        "the started call is cancelled and recorded before run_code returns; the queued one never"
    );
    match &events[1] {
        SessionEvent::CodeDispatch {
            is_error, content, ..
        } => {
            assert!(is_error);
            assert!(
                content[0].as_text().unwrap().contains("cancelled"),
                "{content:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_spill_hook_replaces_recorded_content_but_not_the_programs_value() {
    let (rt, sink) = with_sink(CodeMode::new(TypeScriptRuntime::new()).spill(|req| {
        let size: usize = req
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .map(str::len)
            .sum();
        (size > 20).then(|| {
            vec![ContentBlock::text(format!(
                "[{} bytes, stored as {}]",
                size, req.id
            ))]
        })
    }));
    let plugin = rt.scope();
    let _t = plugin.register(echo("read")).unwrap();
    let r = rt
        .execute(run_code(
            "const small = await tools.read({x: 1}); const big = await tools.read({x: 123456789012345}); return big.x;",
        ))
        .await;
    assert_eq!(r.value().unwrap()["result"], json!(123456789012345_i64));
    let contents: Vec<Vec<ContentBlock>> = sink
        .take()
        .into_iter()
        .filter_map(|e| match e {
            SessionEvent::CodeDispatch { content, .. } => Some(content),
            _ => None,
        })
        .collect();
    assert_eq!(contents[0], vec![ContentBlock::text(r#"{"x":1}"#)]);
    assert_eq!(
        contents[1],
        vec![ContentBlock::text("[21 bytes, stored as outer:code:2]")]
    );
}

// ---------------------------------------------------------------------------------------------
// Contexts and settlement

fn deferring(name: &str) -> ToolDefinition {
    let n = name.to_owned();
    ToolDefinition::builder(name)
        .input_schema(json!({"type": "object", "properties": {"ms": {"type": "integer"}}}))
        .output(Output::json(json!({"type": "null"})))
        .concurrency_safe(|_| true)
        .execute(move |args, ctx| {
            let n = n.clone();
            async move {
                let ms = args["ms"].as_u64().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ctx.defer_context(AdditionalContext::new(n.clone(), format!("from {n}")));
                Ok(Value::Null)
            }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn sub_call_contexts_are_deferred_in_dispatch_order_and_kept_when_the_program_fails() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let _a = plugin.register(deferring("first")).unwrap();
    let _b = plugin.register(deferring("second")).unwrap();
    // `first` finishes last, but was called first.
    let r = rt
        .execute(run_code(
            "await Promise.all([tools.first({ms: 40}), tools.second({ms: 0})]); throw new Error('late');",
        ))
        .await;
    assert_eq!(r.code(), Some(CODE_RUN_FAILED));
    let texts: Vec<&str> = r
        .additional_contexts
        .iter()
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(texts, vec!["from first", "from second"]);
}

#[tokio::test]
async fn a_deadline_aborts_in_flight_sub_calls_and_the_bridge_drains_before_returning() {
    let (rt, sink) = with_sink(
        CodeMode::new(TypeScriptRuntime::new())
            .limits(CodeLimits::default().with_timeout(Duration::from_millis(200))),
    );
    let plugin = rt.scope();
    let ended = Arc::new(AtomicBool::new(false));
    let e = ended.clone();
    let stuck = ToolDefinition::builder("stuck")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "null"})))
        .execute(move |_a, ctx| {
            let e = e.clone();
            async move {
                ctx.cancellation().cancelled().await;
                tokio::time::sleep(Duration::from_millis(30)).await;
                e.store(true, Ordering::SeqCst);
                Ok(Value::Null)
            }
        })
        .build()
        .unwrap();
    let _t = plugin.register(stuck).unwrap();
    let r = rt.execute(run_code("await tools.stuck({});")).await;
    assert!(
        ended.load(Ordering::SeqCst),
        "the body finished before run_code returned"
    );
    assert_eq!(r.code(), Some(CODE_RUN_FAILED));
    assert!(
        r.text().starts_with("Error: code run failed (timeout)"),
        "{}",
        r.text()
    );
    assert_eq!(
        sink.take().len(),
        2,
        "the aborted call's dispatch is recorded inside the turn"
    );
}

#[tokio::test]
async fn cancelling_the_outer_call_cancels_the_run_and_its_sub_calls() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let ended = Arc::new(AtomicBool::new(false));
    let e = ended.clone();
    let stuck = ToolDefinition::builder("stuck")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "null"})))
        .execute(move |_a, ctx| {
            let e = e.clone();
            async move {
                ctx.cancellation().cancelled().await;
                e.store(true, Ordering::SeqCst);
                Ok(Value::Null)
            }
        })
        .build()
        .unwrap();
    let _t = plugin.register(stuck).unwrap();
    let token = tokio_util::sync::CancellationToken::new();
    let fire = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        fire.cancel();
    });
    let r = rt
        .execute(run_code("await tools.stuck({});").with_cancel(token))
        .await;
    assert!(ended.load(Ordering::SeqCst));
    assert_eq!(r.code(), Some(CODE_RUN_FAILED));
    assert!(
        r.text().starts_with("Error: code run failed (aborted)"),
        "{}",
        r.text()
    );
}

// ---------------------------------------------------------------------------------------------
// The result

#[tokio::test]
async fn the_result_reads_as_logs_then_the_value() {
    let rt = code_runtime(PresentationMode::Code);
    for (code, value, text) in [
        (
            "console.log('a'); console.log('b', 1); return 'plain text';",
            json!({"logs": ["a", "b 1"], "result": "plain text"}),
            "a\nb 1\nplain text".to_owned(),
        ),
        (
            "return {k: [1, 2]};",
            json!({"logs": [], "result": {"k": [1, 2]}}),
            "{\n  \"k\": [\n    1,\n    2\n  ]\n}".to_owned(),
        ),
        (
            "return null;",
            json!({"logs": [], "result": null}),
            "null".to_owned(),
        ),
        ("let x = 1;", json!({"logs": []}), NO_OUTPUT.to_owned()),
        (
            "return [[[[[[[1]]]]]]];",
            json!({"logs": [], "result": [[[[[[[1]]]]]]]}),
            "[\n  [\n    [\n      [\n        [\n          [[1]]\n        ]\n      ]\n    ]\n  ]\n]"
                .to_owned(),
        ),
    ] {
        let r = rt.execute(run_code(code)).await;
        assert_eq!(r.value(), Some(&value), "{code}");
        assert_eq!(r.text(), text, "{code}");
    }
}

#[tokio::test]
async fn a_failed_run_is_code_run_failed_with_its_kind_message_and_captured_output() {
    let rt = code_runtime(PresentationMode::Code);
    let r = rt
        .execute(run_code(
            "console.log('step 1'); throw new Error('bad input');",
        ))
        .await;
    assert_eq!(r.code(), Some(CODE_RUN_FAILED));
    let text = r.text();
    assert!(
        text.starts_with("Error: code run failed (runtime): "),
        "{text}"
    );
    assert!(text.contains("bad input"), "{text}");
    assert!(text.ends_with("\nCaptured output:\nstep 1"), "{text}");

    let r = rt.execute(run_code("return 1 +;")).await;
    assert!(
        r.text().starts_with("Error: code run failed (syntax)"),
        "{}",
        r.text()
    );
    assert!(r.text().contains("line 1"), "{}", r.text());
}

#[tokio::test]
async fn output_over_max_output_bytes_fails_explicitly() {
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(
            CodeMode::new(TypeScriptRuntime::new())
                .limits(CodeLimits::default().with_max_output_bytes(64)),
        )
        .build()
        .unwrap();
    let r = rt.execute(run_code("return 'x'.repeat(100);")).await;
    assert_eq!(r.code(), Some(CODE_RUN_FAILED));
    assert!(r.text().contains("(output_limit)"), "{}", r.text());
    let r = rt.execute(run_code("return 'x'.repeat(10);")).await;
    assert!(!r.is_error());
}

#[tokio::test]
async fn calls_past_max_pending_sub_calls_fail_at_once_and_record_nothing() {
    let err = ToolRuntime::builder()
        .extension(CodeMode::new(TypeScriptRuntime::new()).max_pending_sub_calls(0))
        .build()
        .unwrap_err();
    assert_eq!(err.code(), "ZERO_PENDING");

    let (rt, sink) = with_sink(CodeMode::new(TypeScriptRuntime::new()).max_pending_sub_calls(2));
    let plugin = rt.scope();
    let _t = plugin
        .register(counting(
            "slow",
            true,
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(Mutex::new(Vec::new())),
        ))
        .unwrap();
    let r = rt
        .execute(run_code(
            r#"const calls = [tools.slow({}), tools.slow({}), tools.slow({})];
               const settled = await Promise.allSettled(calls);
               const after = await tools.slow({});
               return settled.map(s => s.status === "fulfilled" ? "ok" : s.reason.message)
                             .concat([after === null ? "ok" : "?"]);"#,
        ))
        .await;
    let result = r.value().unwrap()["result"].clone();
    assert_eq!(result[0], "ok");
    assert_eq!(result[1], "ok");
    assert!(
        result[2]
            .as_str()
            .unwrap()
            .starts_with("too many unfinished tool calls"),
        "{result}"
    );
    assert_eq!(result[3], "ok", "a slot frees when a call finishes");
    let ids: Vec<String> = sink.take().iter().map(|e| e.id().to_owned()).collect();
    let mut first_two = ids[..4].to_vec();
    first_two.sort();
    assert_eq!(
        first_two,
        vec![
            "outer:code:1",
            "outer:code:1",
            "outer:code:2",
            "outer:code:2"
        ]
    );
    assert_eq!(
        ids[4..],
        ["outer:code:3", "outer:code:3"],
        "the refused call took no number and recorded nothing"
    );
}

#[test]
fn run_code_outside_a_tokio_runtime_fails_with_a_message_not_a_panic() {
    let rt = code_runtime(PresentationMode::Code);
    let r = futures::executor::block_on(rt.execute(run_code("return 1;")));
    assert_eq!(r.code(), Some(CODE_RUN_FAILED));
    assert!(r.text().contains("inside a tokio runtime"), "{}", r.text());
}

// ---------------------------------------------------------------------------------------------
// The principal

/// A program's calls are made for the principal its `run_code` call was made for: a guard and
/// the tool's body see the same one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_programs_calls_are_made_for_the_runs_principal() {
    let rt = code_runtime(PresentationMode::Code);
    let plugin = rt.scope();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let whoami = ToolDefinition::builder("whoami")
        .description("who is asking")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "string"})))
        .execute(|_args, ctx| async move {
            Ok(json!(
                ctx.execution()
                    .principal()
                    .map_or("nobody".to_owned(), |p| p.subject.clone())
            ))
        })
        .build()
        .unwrap();
    let _t = plugin.register(whoami).unwrap();
    let _g = plugin
        .guard(move |exec| {
            if exec.name() == "whoami" {
                s.lock().unwrap().push(
                    exec.principal()
                        .map(|p| (p.subject.clone(), p.has_scope("notes:read"))),
                );
            }
            None
        })
        .unwrap();
    let principal = tools_runtime::Principal::new("alice").with_scopes(["notes:read"]);
    let result = rt
        .execute(run_code("return await tools.whoami({});").with_principal(principal))
        .await;
    assert!(!result.is_error(), "{result:?}");
    assert_eq!(result.value().unwrap()["result"], json!("alice"));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![Some(("alice".to_owned(), true))]
    );
    // Without one, the program's calls have none.
    let result = rt.execute(run_code("return await tools.whoami({});")).await;
    assert_eq!(result.value().unwrap()["result"], json!("nobody"));
}
