//! The specification's clauses, in its order ("Public API", "Injected services",
//! "Cancellation", "Live events", "Key types", "Extension points", "Parallel execution", and the
//! relevant "Known Limitations"), one test per clause, named after it.
//!
//! Presentation (`presentAs`, prompt assembly) and Code Mode belong to a later issue; the clauses
//! about them are not here, except that the reserved `run_code` name is refused everywhere.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tools_runtime::definition::ToolDefinitionBuilder;
use tools_runtime::error::RegistryError;
use tools_runtime::hooks::{Approval, PostDecision, PreDecision, RegistryChange};
use tools_runtime::{
    AdditionalContext, CancellationToken, ContentBlock, ExecutionMode, Output, Scope, ToolCall,
    ToolDefinition, ToolError, ToolExecution, ToolExecutionResult, ToolFilter, ToolOutcome,
    ToolRuntime, codes,
};

// ---------------------------------------------------------------------------------------------
// Helpers

/// A runtime and a plugin scope of it (the global layer), with `tools` registered through that
/// scope. The registrations last as long as the scope.
fn runtime_with(tools: impl IntoIterator<Item = ToolDefinition>) -> (ToolRuntime, Scope) {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    for tool in tools {
        let _ = plugin.register(tool).unwrap();
    }
    (rt, plugin)
}

/// A tool builder with input `{"type": "object"}` and output `{"type": "integer"}`; the test
/// adds the body (and whatever else it needs).
fn integer_tool(name: &str) -> ToolDefinitionBuilder {
    ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
}

/// [`integer_tool`] with input `{"type": "object", "properties": properties}`.
fn integer_tool_taking(name: &str, properties: Value) -> ToolDefinitionBuilder {
    integer_tool(name).input_schema(json!({"type": "object", "properties": properties}))
}

/// An [`integer_tool`] whose body waits for its cancellation token, then returns 1.
fn waits_for_cancellation(name: &str) -> ToolDefinitionBuilder {
    integer_tool(name).execute(|_a, ctx| async move {
        ctx.cancellation().cancelled().await;
        Ok(json!(1))
    })
}

/// A tool with input `{x?: integer}` and output `{x: integer}` that echoes `x` (default 0).
fn echo(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description(format!("echo from {name}"))
        .input_schema(json!({"type": "object", "properties": {"x": {"type": "integer"}}}))
        .output(Output::new(
            json!({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}),
            |_args, value| vec![ContentBlock::text(format!("x={}", value["x"]))],
        ))
        .execute(|args, _ctx| async move {
            Ok(json!({"x": args.get("x").cloned().unwrap_or(json!(0))}))
        })
        .build()
        .unwrap()
}

/// A tool whose body returns `value` as is (output schema `{"type": "integer"}`).
fn returns(name: &str, value: Value) -> ToolDefinition {
    integer_tool(name)
        .execute(move |_args, _ctx| {
            let value = value.clone();
            async move { Ok(value) }
        })
        .build()
        .unwrap()
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new("call-1", name, args)
}

/// `tool` with a body that returns 5 and presentation metadata `{"v": value}` (its output
/// `{"type": "integer"}`).
fn five_with_meta(tool: ToolDefinitionBuilder) -> ToolDefinition {
    tool.output(Output::json(json!({"type": "integer"})).presentation_meta(|_, v| json!({"v": v})))
        .execute(|_a, _c| async { Ok(json!(5)) })
        .build()
        .unwrap()
}

/// A call to `name` without arguments, made from `agent`.
fn call_from(name: &str, agent: &Scope) -> ToolCall {
    call(name, json!({})).with_agent(agent.key())
}

/// An agent scope of `rt` with `tools` registered in its local layer.
fn agent_with(rt: &ToolRuntime, tools: impl IntoIterator<Item = ToolDefinition>) -> Scope {
    let agent = rt.agent_scope();
    for tool in tools {
        let _ = agent.register(tool).unwrap();
    }
    agent
}

fn names(rt: &ToolRuntime, scope: &Scope) -> Vec<String> {
    rt.schemas(scope.key())
        .into_iter()
        .map(|s| s.name)
        .collect()
}

/// How many times the hooks made from it ran (shared by its clones).
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

impl Counter {
    fn bump(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    /// A pre-execute listener that counts and passes the decision on unchanged.
    fn passing_listener(
        &self,
    ) -> impl Fn(&ToolExecution, PreDecision) -> PreDecision + Send + Sync + use<> {
        let count = self.clone();
        move |_, decision| {
            count.bump();
            decision
        }
    }

    /// A guard that counts and denies nothing.
    fn admitting_guard(&self) -> impl Fn(&ToolExecution) -> Option<String> + Send + Sync + use<> {
        let count = self.clone();
        move |_| {
            count.bump();
            None
        }
    }

    /// An observer of results that counts.
    fn observer(&self) -> impl Fn(&ToolExecution, &ToolExecutionResult) + Send + Sync + use<> {
        let count = self.clone();
        move |_, _| count.bump()
    }
}

// ---------------------------------------------------------------------------------------------
// Public API

#[tokio::test]
async fn register_trusted_typed_definition_with_mandatory_output() {
    let (rt, _plugin) = runtime_with([echo("echo")]);
    let result = rt.execute(call("echo", json!({"x": 5}))).await;
    assert_eq!(result.value(), Some(&json!({"x": 5})));
    assert_eq!(result.content, vec![ContentBlock::text("x=5")]);

    // The output declaration is mandatory.
    let missing = ToolDefinition::builder("no_output")
        .input_schema(json!({"type": "object"}))
        .execute(|_a, _c| async { Ok(json!(1)) })
        .build()
        .unwrap_err();
    assert_eq!(missing.code(), "MISSING_OUTPUT");
}

#[tokio::test]
async fn register_layer_is_the_calling_scope_and_agent_tools_shadow_globals() {
    let (rt, _plugin) = runtime_with([returns("answer", json!(1))]);
    let agent = rt.agent_scope();
    let other = rt.agent_scope();
    let _l = agent.register(returns("answer", json!(2))).unwrap();
    let _only = agent.register(returns("local_only", json!(3))).unwrap();

    let global = rt.execute(call("answer", json!({}))).await;
    let shadowed = rt.execute(call_from("answer", &agent)).await;
    let unaffected = rt.execute(call_from("answer", &other)).await;
    assert_eq!(global.value(), Some(&json!(1)));
    assert_eq!(shadowed.value(), Some(&json!(2)));
    assert_eq!(unaffected.value(), Some(&json!(1)));
    // An agent's local tool exists for that agent alone.
    let elsewhere = rt.execute(call_from("local_only", &other)).await;
    assert_eq!(elsewhere.code(), Some(codes::UNKNOWN_TOOL));
}

#[test]
fn register_duplicate_names_within_one_layer_are_refused() {
    let rt = ToolRuntime::new();
    let a = rt.scope();
    let b = rt.scope();
    let _first = a.register(echo("dup")).unwrap();
    // Another plugin registers in the same (global) layer.
    let err = b.register(echo("dup")).unwrap_err();
    assert!(matches!(err, RegistryError::Duplicate { .. }));
    assert_eq!(err.code(), "DUPLICATE_NAME");
    // A different layer is fine (that is shadowing).
    let agent = rt.agent_scope();
    let _shadow = agent.register(echo("dup")).unwrap();
}

#[test]
fn register_refuses_the_reserved_run_code_name_in_every_scope() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let agent = rt.agent_scope();
    let nested = agent.agent();
    for scope in [&plugin, &agent, &nested] {
        let err = scope.register(echo("run_code")).unwrap_err();
        assert_eq!(err.code(), "RESERVED_NAME");
        assert_eq!(
            scope.reserve("run_code").unwrap_err().code(),
            "RESERVED_NAME"
        );
    }
}

#[test]
fn register_rejects_unsupported_output_and_non_positive_or_non_finite_timeout() {
    let base = || {
        ToolDefinition::builder("t")
            .input_schema(json!({"type": "object"}))
            .execute(|_a, _c| async { Ok(json!(1)) })
    };
    let unsupported = base()
        .output(Output::json(json!({"type": "integer", "if": {}})))
        .build()
        .unwrap_err();
    assert_eq!(unsupported.code(), "INVALID_OUTPUT_SCHEMA");
    assert!(unsupported.to_string().contains("/if"), "{unsupported}");

    let out = || Output::json(json!({"type": "integer"}));
    assert_eq!(
        base()
            .output(out())
            .timeout(Duration::ZERO)
            .build()
            .unwrap_err()
            .code(),
        "INVALID_TIMEOUT"
    );
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = base()
            .output(out())
            .timeout_secs_f64(bad)
            .build()
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_TIMEOUT", "{bad}");
    }
    let ok = base().output(out()).timeout_secs_f64(0.5).build().unwrap();
    assert_eq!(ok.timeout(), Some(Duration::from_millis(500)));

    // The input schema must be an object schema in the subset.
    let not_object = ToolDefinition::builder("t")
        .input_schema(json!({"type": "string"}))
        .output(out())
        .execute(|_a, _c| async { Ok(json!(1)) })
        .build()
        .unwrap_err();
    assert_eq!(not_object.code(), "INVALID_INPUT_SCHEMA");
}

#[tokio::test]
async fn register_finalize_content_replaces_only_final_content_after_normalisation_including_materialisation_errors()
 {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    // The body returns a value that breaks the output schema: an error found while
    // materialising the result. finalize_content still runs on it.
    let def = integer_tool("bad_output")
        .execute(|_a, _c| async { Ok(json!("not an integer")) })
        .finalize_content(move |_exec, result| {
            s.lock().unwrap().push(result.code().map(str::to_owned));
            Some(vec![ContentBlock::text("finalized")])
        })
        .build()
        .unwrap();
    let (rt, _plugin) = runtime_with([def]);
    let result = rt.execute(call("bad_output", json!({}))).await;
    assert_eq!(result.code(), Some(codes::INVALID_OUTPUT));
    assert_eq!(result.content, vec![ContentBlock::text("finalized")]);
    // Only content changed: the error (and absence of a value) stays.
    assert!(result.error().unwrap().message.contains("expected integer"));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![Some("INVALID_OUTPUT".to_owned())]
    );
}

#[tokio::test]
async fn register_is_disposed_with_the_calling_scope() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _r = plugin.register(echo("temp")).unwrap();
    assert!(rt.get("temp", tools_runtime::ScopeKey::GLOBAL).is_some());
    drop(plugin);
    assert!(rt.get("temp", tools_runtime::ScopeKey::GLOBAL).is_none());
    // A handle disposes one registration early.
    let plugin = rt.scope();
    let handle = plugin.register(echo("early")).unwrap();
    handle.dispose();
    assert_eq!(
        rt.execute(call("early", json!({}))).await.code(),
        Some(codes::UNKNOWN_TOOL)
    );
}

#[test]
fn restrict_applies_an_agent_scoped_mask_and_refuses_a_plain_scope() {
    let (rt, plugin) = runtime_with([echo("a"), echo("b")]);
    let err = plugin.restrict(ToolFilter::allow(["a"])).unwrap_err();
    assert_eq!(err.code(), "NOT_AGENT_SCOPE");
    let agent = rt.agent_scope();
    let _m = agent.restrict(ToolFilter::allow(["a"])).unwrap();
    assert_eq!(names(&rt, &agent), ["a"]);
    assert_eq!(
        rt.visible_names(tools_runtime::ScopeKey::GLOBAL),
        ["a", "b"]
    );
}

#[test]
fn restrict_filter_is_snapshotted_masks_intersect_and_local_tools_merge_afterwards() {
    let (rt, _plugin) = runtime_with(["a", "b", "c"].map(echo));
    let agent = rt.agent_scope();
    let mut allowed = vec!["a", "b"];
    let _m1 = agent
        .restrict(ToolFilter::allow(allowed.iter().copied()))
        .unwrap();
    allowed.push("c"); // the filter was snapshotted; this changes nothing
    let _m2 = agent.restrict(ToolFilter::deny(["b"])).unwrap();
    assert_eq!(names(&rt, &agent), ["a"]);
    // A nested agent intersects with its parent's masks.
    let nested = agent.agent();
    let _m3 = nested.restrict(ToolFilter::deny(["a"])).unwrap();
    assert!(names(&rt, &nested).is_empty());
    // Local tools merge after the masks: a local `b` is visible although the global is masked.
    let _local = agent.register(echo("b")).unwrap();
    assert_eq!(names(&rt, &agent), ["a", "b"]);
}

#[test]
fn restrict_deny_masks_admit_later_unnamed_globals_while_allow_masks_exclude_later_names() {
    let (rt, plugin) = runtime_with([echo("a")]);
    let denying = rt.agent_scope();
    let allowing = rt.agent_scope();
    let _d = denying.restrict(ToolFilter::deny(["a"])).unwrap();
    let _w = allowing.restrict(ToolFilter::allow(["a"])).unwrap();
    let _later = plugin.register(echo("later")).unwrap();
    assert_eq!(names(&rt, &denying), ["later"]);
    assert_eq!(names(&rt, &allowing), ["a"]);
}

#[test]
fn restrict_rejects_unknown_local_or_reserved_names_and_empty_filters() {
    let (rt, _plugin) = runtime_with([echo("a")]);
    let agent = rt.agent_scope();
    let _l = agent.register(echo("mine")).unwrap();
    let unknown = agent
        .restrict(ToolFilter::allow(["a", "nope"]))
        .unwrap_err();
    assert_eq!(
        unknown,
        RegistryError::UnknownNames {
            names: vec!["nope".into()]
        }
    );
    let local = agent.restrict(ToolFilter::deny(["mine"])).unwrap_err();
    assert_eq!(local.code(), "LOCAL_NAMES");
    let reserved = agent.restrict(ToolFilter::deny(["run_code"])).unwrap_err();
    assert_eq!(reserved.code(), "RESERVED_NAME");
    let empty = agent
        .restrict(ToolFilter::allow(Vec::<String>::new()))
        .unwrap_err();
    assert_eq!(empty.code(), "EMPTY_FILTER");
}

#[tokio::test]
async fn reserve_adds_a_restrictable_name_that_reaches_no_schema_until_registered() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _r = plugin.reserve("deferred").unwrap();
    assert!(rt.schemas(tools_runtime::ScopeKey::GLOBAL).is_empty());
    assert_eq!(
        plugin.reserve("deferred").unwrap_err().code(),
        "DUPLICATE_NAME"
    );
    let agent = rt.agent_scope();
    // The name is known, so a mask may name it.
    let _m = agent.restrict(ToolFilter::deny(["deferred"])).unwrap();
    assert!(!agent.is_admitted("deferred"));
    // The heavy definition loads later.
    let _def = plugin.register(echo("deferred")).unwrap();
    assert_eq!(names(&rt, &rt.scope()), ["deferred"]);
    assert!(names(&rt, &agent).is_empty());
}

#[test]
fn is_admitted_checks_every_mask_on_the_chain_independent_of_registration() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _r = plugin.reserve("x").unwrap();
    let _y = plugin.register(echo("y")).unwrap();
    let agent = rt.agent_scope();
    let nested = agent.agent();
    assert!(nested.is_admitted("x"));
    let _m = agent.restrict(ToolFilter::allow(["y"])).unwrap();
    assert!(!nested.is_admitted("x"), "absent from an allow list");
    assert!(nested.is_admitted("y"));
    let _n = nested.restrict(ToolFilter::deny(["y"])).unwrap();
    assert!(!nested.is_admitted("y"), "present in a deny list");
    assert!(
        agent.is_admitted("y"),
        "the parent is unaffected by the child's mask"
    );
    // Not registered at all, never masked: admitted.
    assert!(rt.is_admitted("never_registered", tools_runtime::ScopeKey::GLOBAL));
}

#[test]
fn get_resolves_as_one_scope_sees_it() {
    let (rt, _plugin) = runtime_with([echo("t"), echo("hidden")]);
    let agent = rt.agent_scope();
    let _l = agent.register(echo("t")).unwrap();
    let _m = agent.restrict(ToolFilter::deny(["hidden"])).unwrap();
    assert_eq!(agent.get("t").unwrap().description(), "echo from t");
    assert!(
        agent.get("hidden").is_none(),
        "a restricted-away global reads as absent"
    );
    assert!(rt.get("hidden", tools_runtime::ScopeKey::GLOBAL).is_some());
}

#[test]
fn schemas_list_what_the_scope_sees_without_executors_in_name_order() {
    let (rt, _plugin) = runtime_with(["zeta", "alpha", "mid"].map(echo));
    let schemas = rt.schemas(tools_runtime::ScopeKey::GLOBAL);
    let listed: Vec<&str> = schemas.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(listed, ["alpha", "mid", "zeta"]);
    let first = &schemas[0];
    assert_eq!(first.description, "echo from alpha");
    assert_eq!(first.input_schema["properties"]["x"]["type"], "integer");
    assert_eq!(
        first.output_schema.as_ref().unwrap()["required"],
        json!(["x"])
    );
}

#[tokio::test]
async fn guard_returning_a_reason_denies_and_none_leaves_the_call_unchanged() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let _g = plugin
        .guard(|exec| (exec.arguments()["x"] == 13).then(|| "thirteen is unlucky".into()))
        .unwrap();
    assert!(!rt.execute(call("t", json!({"x": 1}))).await.is_error());
    let denied = rt.execute(call("t", json!({"x": 13}))).await;
    assert_eq!(denied.code(), Some(codes::GUARD_DENIED));
    assert_eq!(denied.text(), "Error: thirteen is unlucky");
}

#[tokio::test]
async fn guard_from_a_plain_scope_applies_globally_and_from_an_agent_scope_to_that_agent_only() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let agent = rt.agent_scope();
    let nested = agent.agent();
    let other = rt.agent_scope();
    let _g = agent.guard(|_| Some("agent policy".into())).unwrap();
    assert_eq!(rt.execute(call("t", json!({}))).await.code(), None);
    assert_eq!(rt.execute(call_from("t", &other)).await.code(), None);
    let denied = Some(codes::GUARD_DENIED);
    assert_eq!(rt.execute(call_from("t", &agent)).await.code(), denied);
    assert_eq!(rt.execute(call_from("t", &nested)).await.code(), denied);
    let _global = plugin.guard(|_| Some("global policy".into())).unwrap();
    assert_eq!(rt.execute(call_from("t", &other)).await.code(), denied);
}

#[tokio::test]
async fn guard_denial_is_monotonic_nothing_later_turns_it_into_permission() {
    let bodies = Counter::default();
    let b = bodies.clone();
    let def = integer_tool("t")
        .execute(move |_a, _c| {
            b.bump();
            async { Ok(json!(1)) }
        })
        .build()
        .unwrap();
    let (rt, plugin) = runtime_with([def]);
    let _g = plugin.guard(|_| Some("no".into())).unwrap();
    // Everything after the guard tries to allow it.
    let _p = plugin.on_pre_execute(|_, _| PreDecision::Allow).unwrap();
    let _w = plugin
        .wrap_execute(|_d, _n| async { Ok(json!(7)) })
        .unwrap();
    let _post = plugin
        .on_post_execute(|_, _| PostDecision::replace_value(json!(8)))
        .unwrap();
    let result = rt.execute(call("t", json!({}))).await;
    assert_eq!(result.code(), Some(codes::GUARD_DENIED));
    assert_eq!(bodies.get(), 0);
}

#[tokio::test]
async fn execute_snapshots_and_freezes_arguments_and_assigns_an_opaque_token() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let _o = plugin
        .on_result(move |exec, _| {
            s.lock()
                .unwrap()
                .push((exec.token(), exec.arguments().clone()))
        })
        .unwrap();
    let args = Arc::new(json!({"x": 4}));
    let first = ToolCall::new("c1", "t", args.clone());
    let second = ToolCall::new("c2", "t", args.clone());
    let r1 = rt.execute(first).await;
    let r2 = rt.execute(second).await;
    assert_eq!(r1.value(), r2.value());
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].1, json!({"x": 4}));
    assert_ne!(seen[0].0, seen[1].0, "a fresh token per execution");
    // The caller's Arc is shared, never copied or mutated.
    assert_eq!(*args, json!({"x": 4}));
}

#[tokio::test]
async fn execute_invalid_arguments_use_the_result_path_without_reaching_policy_or_the_body() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let policy = Counter::default();
    let _p = plugin.on_pre_execute(policy.passing_listener()).unwrap();
    let _g = plugin.guard(policy.admitting_guard()).unwrap();
    let observed = Counter::default();
    let _o = plugin.on_result(observed.observer()).unwrap();
    let result = rt.execute(call("t", json!({"x": "five", "y": [1]}))).await;
    assert_eq!(result.code(), Some(codes::INVALID_ARGS));
    assert!(
        result
            .text()
            .starts_with("Error: invalid arguments for `t`: /x: expected integer")
    );
    assert_eq!(policy.get(), 0);
    assert_eq!(
        observed.get(),
        1,
        "the normal result path, observers included"
    );
}

#[tokio::test]
async fn execute_wrappers_replace_only_the_token_and_the_caller_token_is_fused_back_before_the_body()
 {
    let caller = CancellationToken::new();
    let c = caller.clone();
    let def = integer_tool("waits")
        .execute(move |_a, ctx| {
            let c = c.clone();
            async move {
                // Cancel the caller's token from inside; the body must see it through the
                // wrapper's replacement token.
                c.cancel();
                ctx.cancellation().cancelled().await;
                Ok(json!(1))
            }
        })
        .build()
        .unwrap();
    let (rt, plugin) = runtime_with([def]);
    let _w = plugin
        .wrap_execute(|mut d, next| async move {
            d.set_cancellation(CancellationToken::new()); // a token the caller knows nothing of
            next.run(d).await
        })
        .unwrap();
    let result = tokio::time::timeout(
        Duration::from_secs(5),
        rt.execute(call("waits", json!({})).with_cancel(caller)),
    )
    .await
    .expect("the caller's cancellation reached the body");
    assert_eq!(result.code(), Some(codes::ABORTED));
}

#[tokio::test]
async fn execution_mode_is_parallel_only_when_the_visible_classifier_returns_exactly_true() {
    let classified = |name: &str, f: fn(&Value) -> bool| {
        ToolDefinition::builder(name)
            .input_schema(json!({"type": "object", "properties": {"safe": {"type": "boolean"}}}))
            .output(Output::json(json!({})))
            .execute(|_a, _c| async { Ok(json!(null)) })
            .concurrency_safe(f)
            .build()
            .unwrap()
    };
    let (rt, _plugin) = runtime_with([
        classified("read", |a| a["safe"] == true),
        classified("boom", |_| panic!("classifier bug")),
        echo("undeclared"),
    ]);
    let mode = |name: &str, args: Value| rt.execution_mode(&call(name, args));
    assert_eq!(mode("read", json!({"safe": true})), ExecutionMode::Parallel);
    assert_eq!(
        mode("read", json!({"safe": false})),
        ExecutionMode::Exclusive
    );
    assert_eq!(
        mode("read", json!({"safe": "yes"})),
        ExecutionMode::Exclusive,
        "invalid"
    );
    assert_eq!(
        mode("boom", json!({})),
        ExecutionMode::Exclusive,
        "panicking"
    );
    assert_eq!(mode("undeclared", json!({})), ExecutionMode::Exclusive);
    assert_eq!(
        mode("missing", json!({})),
        ExecutionMode::Exclusive,
        "unknown"
    );
    let agent = rt.agent_scope();
    let _m = agent.restrict(ToolFilter::deny(["read"])).unwrap();
    let hidden = call("read", json!({"safe": true})).with_agent(agent.key());
    assert_eq!(
        rt.execution_mode(&hidden),
        ExecutionMode::Exclusive,
        "hidden"
    );
}

// ---------------------------------------------------------------------------------------------
// Injected services

#[tokio::test]
async fn approval_services_ask_when_installed() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let _p = plugin
        .on_pre_execute(|_, _| PreDecision::ask("writes files"))
        .unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let a = asked.clone();
    let _s = plugin
        .set_approval(
            move |exec: tools_runtime::ToolExecution, reason: Option<String>| {
                a.lock().unwrap().push(reason);
                let ok = exec.arguments()["x"] == 1;
                async move {
                    if ok {
                        Approval::Approved
                    } else {
                        Approval::Denied {
                            reason: Some("the user said no".into()),
                        }
                    }
                }
            },
        )
        .unwrap();
    assert!(!rt.execute(call("t", json!({"x": 1}))).await.is_error());
    let denied = rt.execute(call("t", json!({"x": 2}))).await;
    assert_eq!(denied.code(), Some(codes::DENIED));
    assert_eq!(denied.text(), "Error: the user said no");
    assert_eq!(*asked.lock().unwrap(), vec![Some("writes files".into()); 2]);
}

#[tokio::test]
async fn approval_ask_degrades_to_deny_without_a_service() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let _p = plugin
        .on_pre_execute(|_, _| PreDecision::Ask { reason: None })
        .unwrap();
    let result = rt.execute(call("t", json!({}))).await;
    assert_eq!(result.code(), Some(codes::DENIED));
    assert!(
        result.text().contains("requires approval"),
        "{}",
        result.text()
    );
}

// ---------------------------------------------------------------------------------------------
// Cancellation

#[tokio::test]
async fn cancellation_before_the_body_is_aborted_before_dispatch() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let token = CancellationToken::new();
    let t = token.clone();
    let _g = plugin
        .guard(move |_| {
            t.cancel();
            None
        })
        .unwrap();
    let result = rt.execute(call("t", json!({})).with_cancel(token)).await;
    assert_eq!(result.code(), Some(codes::ABORTED_BEFORE_DISPATCH));
}

#[tokio::test]
async fn cancellation_after_invocation_replaces_only_a_successful_outcome() {
    let (rt, _plugin) = runtime_with([waits_for_cancellation("ok").build().unwrap()]);
    let token = CancellationToken::new();
    let t = token.clone();
    let pending = rt.execute(call("ok", json!({})).with_cancel(token));
    let (result, ()) = tokio::join!(pending, async move {
        tokio::task::yield_now().await;
        t.cancel();
    });
    assert_eq!(result.code(), Some(codes::ABORTED));
    assert_eq!(result.value(), None);
}

#[tokio::test]
async fn cancellation_keeps_more_specific_failures() {
    // A body that fails with its own code after cancellation.
    let failing = integer_tool("fails")
        .execute(|_a, ctx| async move {
            ctx.cancellation().cancel();
            Err(ToolError::with_code("DISK_FULL", "no space left"))
        })
        .build()
        .unwrap();
    let (rt, _plugin) = runtime_with([failing]);
    // A call with a token of its own, which the hooks below cancel.
    let cancellable = |name: &str| call(name, json!({})).with_cancel(CancellationToken::new());
    assert_eq!(
        rt.execute(cancellable("fails")).await.code(),
        Some("DISK_FULL"),
        "tool failure"
    );

    // Post-policy block after cancellation.
    let agent = agent_with(&rt, [echo("blocked")]);
    let _p = agent
        .on_post_execute(|exec, _| {
            exec.cancellation().cancel();
            PostDecision::block("withheld")
        })
        .unwrap();
    let c = cancellable("blocked");
    assert_eq!(
        rt.execute(c.with_agent(agent.key())).await.code(),
        Some(codes::BLOCKED)
    );

    // Denial after cancellation.
    let denier = agent_with(&rt, [echo("denied")]);
    let _p = denier
        .on_pre_execute(|exec, _| {
            exec.cancellation().cancel();
            PreDecision::deny("no")
        })
        .unwrap();
    let c = cancellable("denied");
    // The listener denied, then the token fired: the denial is more specific and stands.
    assert_eq!(
        rt.execute(c.with_agent(denier.key())).await.code(),
        Some(codes::DENIED)
    );

    // Wrapper failure after the body started and cancellation.
    let wrapped = agent_with(&rt, [echo("wrapped")]);
    let _w = wrapped
        .wrap_execute(|d, next| async move {
            let token = d.execution().cancellation().clone();
            let _ = next.run(d).await;
            token.cancel();
            Err(ToolError::with_code("RETRY_EXHAUSTED", "gave up"))
        })
        .unwrap();
    let c = cancellable("wrapped");
    assert_eq!(
        rt.execute(c.with_agent(wrapped.key())).await.code(),
        Some("RETRY_EXHAUSTED")
    );

    // Timeout-owned TOOL_TIMEOUT.
    let slow = waits_for_cancellation("slow")
        .timeout(Duration::from_millis(20))
        .build()
        .unwrap();
    let timed = agent_with(&rt, [slow]);
    let _w = timed
        .wrap_execute(tools_runtime::wrappers::timeout())
        .unwrap();
    let _o = timed
        .wrap_execute(|d, next| async move {
            let token = d.execution().cancellation().clone();
            let out = next.run(d).await;
            token.cancel(); // the caller cancels after the deadline fired
            out
        })
        .unwrap();
    let c = cancellable("slow");
    assert_eq!(
        rt.execute(c.with_agent(timed.key())).await.code(),
        Some(codes::TOOL_TIMEOUT)
    );
}

/// A runtime with `echo("t")` registered globally and a pre-execute listener that cancels the
/// call's token and returns `decision`, then a second listener that counts its calls and
/// returns `allow`.
fn cancelling_waterfall(decision: PreDecision) -> (ToolRuntime, Scope, Counter) {
    let (rt, plugin) = runtime_with([echo("t")]);
    let later = Counter::default();
    let l = later.clone();
    let _ = plugin
        .on_pre_execute(move |exec, _| {
            exec.cancellation().cancel();
            decision.clone()
        })
        .unwrap();
    let _ = plugin
        .on_pre_execute(move |_, _| {
            l.bump();
            PreDecision::Allow
        })
        .unwrap();
    (rt, plugin, later)
}

#[tokio::test]
async fn cancellation_during_the_waterfall_keeps_a_denial_and_stops_later_listeners() {
    let (rt, _plugin, later) = cancelling_waterfall(PreDecision::deny("not today"));
    let result = rt.execute(call("t", json!({}))).await;
    assert_eq!(result.code(), Some(codes::DENIED));
    assert_eq!(result.text(), "Error: not today");
    assert_eq!(later.get(), 0, "no listener runs after the token fired");

    // An allow reached when the token fires is not a decision worth keeping.
    let (rt, _plugin, later) = cancelling_waterfall(PreDecision::Allow);
    let result = rt.execute(call("t", json!({}))).await;
    assert_eq!(result.code(), Some(codes::ABORTED_BEFORE_DISPATCH));
    assert_eq!(later.get(), 0);
}

#[tokio::test]
async fn cancellation_during_an_async_listener_keeps_its_denial() {
    // The caller's token fires from outside while an asynchronous listener is deciding.
    let (rt, plugin) = runtime_with([echo("t")]);
    let token = CancellationToken::new();
    let fire = token.clone();
    let _p = plugin
        .on_pre_execute_async(move |_, _| {
            let fire = fire.clone();
            async move {
                fire.cancel();
                tokio::task::yield_now().await;
                PreDecision::deny("policy says no")
            }
        })
        .unwrap();
    let result = rt.execute(call("t", json!({})).with_cancel(token)).await;
    assert_eq!(result.code(), Some(codes::DENIED));
}

#[tokio::test]
async fn cancellation_during_an_ask_keeps_the_degraded_denial_and_asks_nobody() {
    // No approval service: `ask` degrades to a denial, which stands.
    let (rt, _plugin, _) = cancelling_waterfall(PreDecision::ask("writes"));
    let result = rt.execute(call("t", json!({}))).await;
    assert_eq!(result.code(), Some(codes::DENIED));

    // With a service: nobody is asked about a call whose token already fired.
    let (rt, plugin, _) = cancelling_waterfall(PreDecision::ask("writes"));
    let asked = Counter::default();
    let a = asked.clone();
    let _s = plugin
        .set_approval(move |_, _| {
            a.bump();
            async { Approval::Approved }
        })
        .unwrap();
    let result = rt.execute(call("t", json!({}))).await;
    assert_eq!(result.code(), Some(codes::ABORTED_BEFORE_DISPATCH));
    assert_eq!(asked.get(), 0);
}

#[tokio::test]
async fn cancellation_while_the_approval_service_answers_keeps_a_refusal() {
    for (answer, code) in [
        (
            Approval::Denied {
                reason: Some("the user said no".into()),
            },
            codes::DENIED,
        ),
        (Approval::Approved, codes::ABORTED_BEFORE_DISPATCH),
    ] {
        let (rt, plugin) = runtime_with([echo("t")]);
        let _p = plugin
            .on_pre_execute(|_, _| PreDecision::ask("writes"))
            .unwrap();
        let _s = plugin
            .set_approval(move |exec: tools_runtime::ToolExecution, _| {
                // The user takes long enough for the caller to give up.
                exec.cancellation().cancel();
                let answer = answer.clone();
                async move { answer }
            })
            .unwrap();
        let result = rt.execute(call("t", json!({}))).await;
        assert_eq!(result.code(), Some(code), "{}", result.text());
    }
}

#[tokio::test]
async fn cancellation_during_the_guards_keeps_a_guard_denial() {
    for (deny, code) in [
        (true, codes::GUARD_DENIED),
        (false, codes::ABORTED_BEFORE_DISPATCH),
    ] {
        let (rt, plugin) = runtime_with([echo("t")]);
        let later = Counter::default();
        let _g = plugin
            .guard(move |exec| {
                exec.cancellation().cancel();
                deny.then(|| "outside the sandbox".to_owned())
            })
            .unwrap();
        let _h = plugin.guard(later.admitting_guard()).unwrap();
        let result = rt.execute(call("t", json!({}))).await;
        assert_eq!(result.code(), Some(code), "{}", result.text());
        assert_eq!(later.get(), 0, "no guard runs after the token fired");
    }
}

#[tokio::test]
async fn cancellation_pre_aborted_entry_freezes_arguments_skips_every_phase_and_publishes_one_result()
 {
    let (rt, plugin) = runtime_with([echo("t")]);
    let phases = Counter::default();
    let _p = plugin.on_pre_execute(phases.passing_listener()).unwrap();
    let _g = plugin.guard(phases.admitting_guard()).unwrap();
    let c = phases.clone();
    let _w = plugin
        .wrap_execute(move |d, n| {
            c.bump();
            async move { n.run(d).await }
        })
        .unwrap();
    let results = Arc::new(Mutex::new(Vec::new()));
    let r = results.clone();
    let _o = plugin
        .on_result(move |exec, res| {
            r.lock()
                .unwrap()
                .push((exec.arguments().clone(), res.code().map(str::to_owned)))
        })
        .unwrap();
    let token = CancellationToken::new();
    token.cancel();
    // Invalid arguments too: validation is a phase, skipped as well.
    let result = rt
        .execute(call("t", json!({"x": "bad"})).with_cancel(token))
        .await;
    assert_eq!(result.code(), Some(codes::ABORTED_BEFORE_DISPATCH));
    assert_eq!(phases.get(), 0);
    assert_eq!(
        *results.lock().unwrap(),
        vec![(
            json!({"x": "bad"}),
            Some(codes::ABORTED_BEFORE_DISPATCH.to_owned())
        )]
    );
}

#[tokio::test]
async fn cancellation_never_races_away_from_a_started_body() {
    let settled = Counter::default();
    let s = settled.clone();
    let def = integer_tool("slow_to_stop")
        .execute(move |_a, ctx| {
            let s = s.clone();
            async move {
                ctx.cancellation().cancelled().await;
                // Owned work takes a while to stop.
                tokio::time::sleep(Duration::from_millis(30)).await;
                s.bump();
                Ok(json!(1))
            }
        })
        .build()
        .unwrap();
    let (rt, _plugin) = runtime_with([def]);
    let token = CancellationToken::new();
    let t = token.clone();
    let (result, ()) = tokio::join!(
        rt.execute(call("slow_to_stop", json!({})).with_cancel(token)),
        async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            t.cancel();
        }
    );
    assert_eq!(settled.get(), 1, "the body settled before the result");
    assert_eq!(result.code(), Some(codes::ABORTED));
}

// ---------------------------------------------------------------------------------------------
// Live events

#[tokio::test]
async fn live_events_run_pre_execute_guards_wrappers_post_execute_finalize_then_observers() {
    let log = Arc::new(Mutex::new(Vec::<&'static str>::new()));
    let l = log.clone();
    let def = integer_tool("t")
        .execute(move |_a, _c| {
            l.lock().unwrap().push("body");
            async { Ok(json!(1)) }
        })
        .finalize_content({
            let l = log.clone();
            move |_, _| {
                l.lock().unwrap().push("finalize");
                None
            }
        })
        .build()
        .unwrap();
    let (rt, plugin) = runtime_with([def]);
    let push = |name: &'static str| {
        let l = log.clone();
        move || l.lock().unwrap().push(name)
    };
    let (p1, p2, g, w1, w2, post, obs) = (
        push("pre1"),
        push("pre2"),
        push("guard"),
        push("wrap-outer"),
        push("wrap-inner"),
        push("post"),
        push("observe"),
    );
    let _a = plugin.on_pre_execute(move |_, d| {
        p1();
        d
    });
    let _b = plugin.on_pre_execute(move |_, d| {
        p2();
        d
    });
    let _c = plugin.guard(move |_| {
        g();
        None
    });
    let _d = plugin.wrap_execute(move |d, n| {
        w1();
        async move { n.run(d).await }
    });
    let _e = plugin.wrap_execute(move |d, n| {
        w2();
        async move { n.run(d).await }
    });
    let _f = plugin.on_post_execute(move |_, _| {
        post();
        PostDecision::accept()
    });
    let _o = plugin.on_result(move |_, _| obs());
    let _ = rt.execute(call("t", json!({}))).await;
    assert_eq!(
        *log.lock().unwrap(),
        [
            "pre1",
            "pre2",
            "guard",
            "wrap-outer",
            "wrap-inner",
            "body",
            "post",
            "finalize",
            "observe"
        ]
    );
}

#[test]
fn live_events_registry_changes_are_unfiltered_shared_state_notifications() {
    let rt = ToolRuntime::new();
    let changes = Arc::new(Mutex::new(Vec::new()));
    let c = changes.clone();
    // A listener registered through one agent scope sees another agent's changes too.
    let watcher = rt.agent_scope();
    let _w = watcher
        .on_change(move |ch| c.lock().unwrap().push(ch.clone()))
        .unwrap();
    let plugin = rt.scope();
    let other = rt.agent_scope();
    let _a = plugin.register(echo("g")).unwrap();
    let local = other.register(echo("l")).unwrap();
    let _m = other.restrict(ToolFilter::deny(["g"])).unwrap();
    local.dispose();
    let key = other.key();
    drop(other);
    let got = changes.lock().unwrap().clone();
    assert_eq!(
        got[0],
        RegistryChange::Registered {
            name: "g".into(),
            scope: tools_runtime::ScopeKey::GLOBAL
        }
    );
    assert_eq!(
        got[1],
        RegistryChange::Registered {
            name: "l".into(),
            scope: key
        }
    );
    assert_eq!(got[2], RegistryChange::MasksChanged { scope: key });
    assert_eq!(
        got[3],
        RegistryChange::Removed {
            name: "l".into(),
            scope: key
        }
    );
    assert!(got.contains(&RegistryChange::ScopeDisposed { scope: key }));
}

// ---------------------------------------------------------------------------------------------
// Key types

#[test]
fn key_types_execution_token_is_an_opaque_copy_eq_hash_value_and_the_runtime_is_shareable() {
    fn copy_eq_hash<T: Copy + Eq + std::hash::Hash + std::fmt::Debug>() {}
    fn send_sync_clone<T: Send + Sync + Clone>() {}
    fn send_sync<T: Send + Sync>() {}
    copy_eq_hash::<tools_runtime::ExecutionToken>();
    copy_eq_hash::<tools_runtime::ScopeKey>();
    send_sync_clone::<ToolRuntime>();
    send_sync_clone::<ToolDefinition>();
    send_sync_clone::<tools_runtime::ToolExecution>();
    send_sync_clone::<tools_runtime::ToolRunContext>();
    send_sync::<Scope>();
    send_sync::<tools_runtime::Registration>();
    // The execute future can be spawned.
    fn spawnable<F: std::future::Future + Send + 'static>(_: F) {}
    let rt = ToolRuntime::new();
    let rt2 = rt.clone();
    spawnable(async move { rt2.execute(call("t", json!({}))).await });
    spawnable(async move { rt.execute_batch(vec![call("t", json!({}))], 2).await });
}

#[tokio::test]
async fn key_types_tool_definition_body_receives_frozen_args_and_a_run_context() {
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let def = ToolDefinition::builder("inspect")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({})))
        .execute(move |args, ctx| {
            *s.lock().unwrap() = Some((
                args.clone(),
                ctx.call_id().to_owned(),
                ctx.name().to_owned(),
                ctx.agent(),
                ctx.parent(),
                ctx.token(),
            ));
            async { Ok(json!(null)) }
        })
        .build()
        .unwrap();
    let (rt, _plugin) = runtime_with([def]);
    let agent = rt.agent_scope();
    let parent = rt.execute(call("inspect", json!({"p": 1}))).await;
    assert!(!parent.is_error());
    let parent_token = seen.lock().unwrap().as_ref().unwrap().5;
    let nested = ToolCall::new("c-9", "inspect", json!({"n": 2}))
        .with_agent(agent.key())
        .with_parent(parent_token);
    let _ = rt.execute(nested).await;
    let (args, call_id, name, who, parent, token) = seen.lock().unwrap().clone().unwrap();
    assert_eq!(*args, json!({"n": 2}));
    assert_eq!((call_id.as_str(), name.as_str()), ("c-9", "inspect"));
    assert_eq!(who, Some(agent.key()));
    assert_eq!(parent, Some(parent_token));
    assert_ne!(token, parent_token);
}

#[tokio::test]
async fn key_types_run_context_defers_contexts_until_the_final_result_even_on_failure_or_cancellation()
 {
    let def = integer_tool_taking("defer", json!({"mode": {"type": "string"}}))
        .execute(|args, ctx| async move {
            ctx.defer_context(AdditionalContext::new("defer", "first"));
            ctx.defer_context(AdditionalContext::new("defer", "second"));
            match args["mode"].as_str() {
                Some("fail") => Err(ToolError::new("failed")),
                Some("cancel") => {
                    ctx.cancellation().cancel();
                    Ok(json!(1))
                }
                _ => Ok(json!(1)),
            }
        })
        .build()
        .unwrap();
    let (rt, _plugin) = runtime_with([def]);
    for mode in ["ok", "fail", "cancel"] {
        let r = rt.execute(call("defer", json!({"mode": mode}))).await;
        let texts: Vec<&str> = r
            .additional_contexts
            .iter()
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(texts, ["first", "second"], "{mode}: {:?}", r.code());
    }
}

#[tokio::test]
async fn key_types_execution_result_success_and_failure_shapes_with_exact_error_content() {
    let def = ToolDefinition::builder("meta")
        .input_schema(json!({"type": "object", "properties": {"fail": {"type": "boolean"}}}))
        .output(
            Output::json(json!({"type": "integer"}))
                .presentation_meta(|args, value| json!({"args": args, "value": value})),
        )
        .execute(|args, _c| async move {
            if args["fail"] == true {
                Err(ToolError::new("it broke"))
            } else {
                Ok(json!(3))
            }
        })
        .build()
        .unwrap();
    let (rt, _plugin) = runtime_with([def]);
    let ok = rt.execute(call("meta", json!({}))).await;
    assert_eq!(ok.outcome, ToolOutcome::Success { value: json!(3) });
    assert_eq!(ok.content, vec![ContentBlock::text("3")]);
    assert_eq!(ok.meta, Some(json!({"args": {}, "value": 3})));
    let failed = rt.execute(call("meta", json!({"fail": true}))).await;
    assert!(failed.value().is_none());
    assert_eq!(failed.error().unwrap().message, "it broke");
    assert_eq!(failed.code(), Some(codes::TOOL_FAILED));
    assert_eq!(failed.content, vec![ContentBlock::text("Error: it broke")]);
    // Nested calls compute no presentation metadata.
    let nested = rt
        .execute(call("meta", json!({})).with_parent(dummy_token(&rt).await))
        .await;
    assert_eq!(nested.meta, None);
}

async fn dummy_token(rt: &ToolRuntime) -> tools_runtime::ExecutionToken {
    let token = Arc::new(Mutex::new(None));
    let t = token.clone();
    let scope = rt.agent_scope();
    let _o = scope
        .on_result(move |exec, _| *t.lock().unwrap() = Some(exec.token()))
        .unwrap();
    let _ = rt
        .execute(call("anything", json!({})).with_agent(scope.key()))
        .await;
    token.lock().unwrap().unwrap()
}

#[tokio::test]
async fn key_types_pre_tool_decision_waterfall_allow_deny_ask() {
    let (rt, plugin) = runtime_with([echo("t")]);
    // The first listener denies, the second sees the denial and overrides it for x = 1.
    let _a = plugin
        .on_pre_execute(|_, _| PreDecision::deny("default deny"))
        .unwrap();
    let _b = plugin
        .on_pre_execute_async(|exec, current| async move {
            if exec.arguments()["x"] == 1 {
                PreDecision::Allow
            } else {
                current
            }
        })
        .unwrap();
    assert!(!rt.execute(call("t", json!({"x": 1}))).await.is_error());
    let denied = rt.execute(call("t", json!({"x": 2}))).await;
    assert_eq!(denied.code(), Some(codes::DENIED));
    assert_eq!(denied.text(), "Error: default deny");
}

#[tokio::test]
async fn key_types_post_tool_decision_content_replacement_keeps_value_and_metadata() {
    let (rt, plugin) = runtime_with([five_with_meta(integer_tool("t"))]);
    let _p = plugin
        .on_post_execute(|_, view| {
            assert_eq!(view.value, &json!(5));
            PostDecision::replace_content(vec![ContentBlock::text("redacted")])
        })
        .unwrap();
    let r = rt.execute(call("t", json!({}))).await;
    assert_eq!(r.content, vec![ContentBlock::text("redacted")]);
    assert_eq!(r.value(), Some(&json!(5)));
    assert_eq!(r.meta, Some(json!({"v": 5})));
}

#[tokio::test]
async fn key_types_post_tool_decision_value_replacement_is_revalidated_and_rerendered() {
    let tool = integer_tool_taking("t", json!({"bad": {"type": "boolean"}}));
    let (rt, plugin) = runtime_with([five_with_meta(tool)]);
    let _p = plugin
        .on_post_execute(|exec, _| {
            if exec.arguments()["bad"] == true {
                PostDecision::replace_value(json!("five"))
            } else {
                PostDecision::replace_value(json!(6))
            }
        })
        .unwrap();
    let r = rt.execute(call("t", json!({}))).await;
    assert_eq!(r.value(), Some(&json!(6)));
    assert_eq!(r.content, vec![ContentBlock::text("6")]);
    assert_eq!(r.meta, Some(json!({"v": 6})));
    let bad = rt.execute(call("t", json!({"bad": true}))).await;
    assert_eq!(bad.code(), Some(codes::INVALID_OUTPUT));
}

#[tokio::test]
async fn key_types_post_tool_decision_contexts_follow_deferred_ones_and_block_discards_them() {
    let def = integer_tool_taking("t", json!({"block": {"type": "boolean"}}))
        .execute(|_a, ctx| async move {
            ctx.defer_context(AdditionalContext::new("tool", "deferred"));
            Ok(json!(1))
        })
        .build()
        .unwrap();
    let (rt, plugin) = runtime_with([def]);
    let _p = plugin
        .on_post_execute(|exec, _| {
            if exec.arguments()["block"] == true {
                PostDecision::block("not for you")
                    .with_context(AdditionalContext::new("policy", "why it was blocked"))
            } else {
                PostDecision::accept().with_context(AdditionalContext::new("policy", "attached"))
            }
        })
        .unwrap();
    let accepted = rt.execute(call("t", json!({}))).await;
    let texts = |r: &tools_runtime::ToolExecutionResult| {
        r.additional_contexts
            .iter()
            .map(|c| c.text.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(texts(&accepted), ["deferred", "attached"]);
    let blocked = rt.execute(call("t", json!({"block": true}))).await;
    assert_eq!(blocked.code(), Some(codes::BLOCKED));
    assert_eq!(blocked.text(), "Error: not for you");
    assert!(blocked.value().is_none());
    assert_eq!(texts(&blocked), ["why it was blocked"]);
}

#[tokio::test]
async fn key_types_finalize_content_runs_exactly_once_for_every_normalised_result() {
    let count = Counter::default();
    let c = count.clone();
    let def = integer_tool_taking("t", json!({"x": {"type": "integer"}}))
        .execute(|args, _c| async move {
            match args["x"].as_i64() {
                Some(0) => Err(ToolError::new("zero")),
                _ => Ok(json!(1)),
            }
        })
        .finalize_content(move |_, result| {
            c.bump();
            Some(vec![ContentBlock::text(format!("[{}]", result.text()))])
        })
        .build()
        .unwrap();
    let (rt, plugin) = runtime_with([def]);
    let _g = plugin
        .guard(|e| (e.arguments()["x"] == 9).then(|| "nine".into()))
        .unwrap();
    let cases = [
        (json!({"x": 1}), "[1]"),
        (json!({"x": 0}), "[Error: zero]"),
        (json!({"x": "s"}), ""),
        (json!({"x": 9}), "[Error: nine]"),
    ];
    for (i, (args, expected)) in cases.into_iter().enumerate() {
        let r = rt.execute(call("t", args)).await;
        assert_eq!(count.get(), i + 1);
        if !expected.is_empty() {
            assert_eq!(r.text(), expected);
        } else {
            assert!(r.text().starts_with("[Error: invalid arguments"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Extension points

#[tokio::test]
async fn extension_points_wrapper_authored_success_is_normalised_through_the_tools_output_declaration()
 {
    let (rt, plugin) = runtime_with([echo("t")]);
    let _w = plugin
        .wrap_execute(|d, _next| async move {
            // A cached answer, without running the body.
            if d.execution().arguments()["x"] == 1 {
                Ok(json!({"x": 100}))
            } else {
                Ok(json!({"wrong": true}))
            }
        })
        .unwrap();
    let cached = rt.execute(call("t", json!({"x": 1}))).await;
    assert_eq!(cached.value(), Some(&json!({"x": 100})));
    assert_eq!(
        cached.content,
        vec![ContentBlock::text("x=100")],
        "rendered by the tool"
    );
    let invalid = rt.execute(call("t", json!({"x": 2}))).await;
    assert_eq!(invalid.code(), Some(codes::INVALID_OUTPUT));
}

#[tokio::test]
async fn extension_points_content_replacement_is_not_a_confidentiality_boundary() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let _p = plugin
        .on_post_execute(|_, _| PostDecision::replace_content(vec![ContentBlock::text("***")]))
        .unwrap();
    let r = rt.execute(call("t", json!({"x": 42}))).await;
    assert_eq!(r.text(), "***");
    assert_eq!(
        r.value(),
        Some(&json!({"x": 42})),
        "programmatic consumers still get the value"
    );
}

#[tokio::test]
async fn extension_points_mcp_raw_definitions_own_input_validation_but_output_is_validated() {
    // A schema outside the subset (`if`) is published as given for a raw tool.
    let def = ToolDefinition::raw("mcp_tool")
        .description("from an MCP server")
        .input_schema(json!({"type": "object", "if": {"required": ["a"]}}))
        .output(Output::json(json!({"type": "string"})))
        .execute(|args, _c| async move {
            match args.get("a") {
                Some(Value::String(s)) => Ok(json!(s)),
                Some(_) => Ok(json!(1)), // breaks the output schema
                None => Err(ToolError::with_code(
                    "MCP_INVALID_PARAMS",
                    "`a` is required",
                )),
            }
        })
        .build()
        .unwrap();
    assert!(def.is_raw());
    let (rt, _plugin) = runtime_with([def]);
    let schema = &rt.schemas(tools_runtime::ScopeKey::GLOBAL)[0];
    assert_eq!(schema.input_schema["if"], json!({"required": ["a"]}));
    assert_eq!(
        rt.execute(call("mcp_tool", json!({}))).await.code(),
        Some("MCP_INVALID_PARAMS")
    );
    assert_eq!(
        rt.execute(call("mcp_tool", json!({"a": "hi"})))
            .await
            .value(),
        Some(&json!("hi"))
    );
    assert_eq!(
        rt.execute(call("mcp_tool", json!({"a": 5}))).await.code(),
        Some(codes::INVALID_OUTPUT)
    );
}

// ---------------------------------------------------------------------------------------------
// Parallel execution

#[tokio::test]
async fn parallel_execution_consecutive_parallel_calls_share_a_bounded_pool_and_exclusive_calls_are_barriers()
 {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let make = |name: &'static str, safe: bool| {
        let (running, peak, events) = (running.clone(), peak.clone(), events.clone());
        integer_tool_taking(name, json!({"i": {"type": "integer"}}))
            .concurrency_safe(move |_| safe)
            .execute(move |args, _c| {
                let (running, peak, events) = (running.clone(), peak.clone(), events.clone());
                async move {
                    let i = args["i"].as_i64().unwrap();
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    events
                        .lock()
                        .unwrap()
                        .push(format!("start {i} ({now} running)"));
                    // Later calls finish sooner, so completion order differs from model order.
                    tokio::time::sleep(Duration::from_millis(40 - 3 * i as u64)).await;
                    running.fetch_sub(1, Ordering::SeqCst);
                    events.lock().unwrap().push(format!("end {i}"));
                    Ok(json!(i))
                }
            })
            .build()
            .unwrap()
    };
    let (rt, plugin) = runtime_with([make("read", true), make("write", false)]);
    let observed = Arc::new(Mutex::new(Vec::new()));
    let o = observed.clone();
    let _o = plugin
        .on_result(move |exec, _| {
            o.lock()
                .unwrap()
                .push(exec.arguments()["i"].as_i64().unwrap())
        })
        .unwrap();
    let calls: Vec<ToolCall> = [
        ("read", 0),
        ("read", 1),
        ("read", 2),
        ("write", 3),
        ("read", 4),
        ("read", 5),
    ]
    .into_iter()
    .map(|(n, i)| ToolCall::new(format!("c{i}"), n, json!({"i": i})))
    .collect();
    let results = rt.execute_batch(calls, 2).await;
    let values: Vec<i64> = results
        .iter()
        .map(|r| r.value().unwrap().as_i64().unwrap())
        .collect();
    assert_eq!(values, [0, 1, 2, 3, 4, 5], "results in model order");
    assert_eq!(
        *observed.lock().unwrap(),
        [0, 1, 2, 3, 4, 5],
        "observers in model order"
    );
    assert_eq!(peak.load(Ordering::SeqCst), 2, "the pool is bounded");
    let events = events.lock().unwrap();
    let pos = |e: &str| events.iter().position(|x| x == e).unwrap();
    // The exclusive call starts after every earlier call ended and runs alone.
    assert!(pos("start 3 (1 running)") > pos("end 0").max(pos("end 1")).max(pos("end 2")));
    assert!(pos("start 4 (1 running)") > pos("end 3") || pos("start 4 (2 running)") > pos("end 3"));
    assert!(pos("start 5 (2 running)") > pos("end 3"));
}

#[tokio::test]
async fn parallel_execution_policy_runs_in_model_order_and_only_dispatch_overlaps() {
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let l = log.clone();
    let def = integer_tool_taking("r", json!({"i": {"type": "integer"}}))
        .concurrency_safe(|_| true)
        .execute(move |args, _c| {
            let l = l.clone();
            async move {
                let i = args["i"].as_i64().unwrap();
                tokio::time::sleep(Duration::from_millis(120 - 50 * i as u64)).await;
                l.lock().unwrap().push(format!("body {i}"));
                Ok(json!(i))
            }
        })
        .build()
        .unwrap();
    let (rt, plugin) = runtime_with([def]);
    let (l1, l2) = (log.clone(), log.clone());
    let _p = plugin
        .on_pre_execute_async(move |exec, d| {
            let l = l1.clone();
            async move {
                // Slow policy for early calls must not let later calls overtake it.
                let i = exec.arguments()["i"].as_i64().unwrap();
                tokio::time::sleep(Duration::from_millis(10 - 3 * i as u64)).await;
                l.lock().unwrap().push(format!("pre {i}"));
                d
            }
        })
        .unwrap();
    let _q = plugin
        .on_post_execute(move |exec, _| {
            l2.lock()
                .unwrap()
                .push(format!("post {}", exec.arguments()["i"]));
            PostDecision::accept()
        })
        .unwrap();
    let calls = (0..3)
        .map(|i| ToolCall::new(format!("c{i}"), "r", json!({"i": i})))
        .collect();
    let _ = rt.execute_batch(calls, 10).await;
    let log = log.lock().unwrap();
    let only = |prefix: &str| {
        log.iter()
            .filter(|e| e.starts_with(prefix))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(only("pre"), ["pre 0", "pre 1", "pre 2"]);
    assert_eq!(only("post"), ["post 0", "post 1", "post 2"]);
    assert_eq!(
        only("body"),
        ["body 2", "body 1", "body 0"],
        "bodies overlapped"
    );
}

// ---------------------------------------------------------------------------------------------
// Known limitations

#[tokio::test]
async fn known_limitation_concurrency_policy_is_not_an_event_gate() {
    // A pre-execute listener cannot change the mode: execution_mode reads the definition only.
    let (rt, plugin) = runtime_with([echo("t")]);
    let _p = plugin.on_pre_execute(|_, d| d).unwrap();
    assert_eq!(
        rt.execution_mode(&call("t", json!({}))),
        ExecutionMode::Exclusive
    );
}

#[tokio::test]
async fn known_limitation_pre_execute_cannot_rewrite_arguments() {
    // Listeners receive `&ToolExecution`, which has no mutable access; the body sees exactly the
    // caller's arguments.
    let (rt, plugin) = runtime_with([echo("t")]);
    let _p = plugin
        .on_pre_execute(|exec, d| {
            let mut copy = exec.arguments().clone();
            copy["x"] = json!(99); // a copy: the execution is unaffected
            d
        })
        .unwrap();
    assert_eq!(
        rt.execute(call("t", json!({"x": 1}))).await.value(),
        Some(&json!({"x": 1}))
    );
}

#[tokio::test]
async fn known_limitation_timeout_is_declarative_unless_the_timeout_wrapper_is_installed() {
    let def = integer_tool("slow")
        .timeout(Duration::from_millis(10))
        .execute(|_a, ctx| async move {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(60)) => Ok(json!(1)),
                () = ctx.cancellation().cancelled() => Err(ToolError::new("stopped")),
            }
        })
        .build()
        .unwrap();
    let (rt, plugin) = runtime_with([def]);
    assert_eq!(
        rt.execute(call("slow", json!({}))).await.value(),
        Some(&json!(1))
    );
    let _w = plugin
        .wrap_execute(tools_runtime::wrappers::timeout())
        .unwrap();
    let timed = rt.execute(call("slow", json!({}))).await;
    assert_eq!(timed.code(), Some(codes::TOOL_TIMEOUT));
    assert_eq!(timed.text(), "Error: `slow` did not finish within 10 ms");
}

#[tokio::test]
async fn names_a_caller_chose_are_quoted_cut_in_messages() {
    let (rt, plugin) = runtime_with([echo("t")]);
    let huge = "n".repeat(10 * 1024 * 1024);
    let r = rt.execute(call(&huge, json!({}))).await;
    assert_eq!(r.code(), Some(codes::UNKNOWN_TOOL));
    let text = r.text();
    assert!(text.len() < 400, "{} bytes", text.len());
    assert!(
        text.contains(&format!("… ({} more bytes)", huge.len() - 200)),
        "{text}"
    );

    // Names handed to reserve and restrict are the host's, but may come from data too.
    let _r = plugin.reserve(huge.clone()).unwrap();
    let err = plugin.reserve(huge.clone()).unwrap_err();
    assert!(err.to_string().len() < 400);
    let agent = rt.agent_scope();
    let long = "m".repeat(100_000);
    let many: Vec<String> = (0..1000).map(|i| format!("{long}{i}")).collect();
    let err = agent.restrict(ToolFilter::allow(many)).unwrap_err();
    let message = err.to_string();
    assert!(message.len() < 20 * 300, "{} bytes", message.len());
    assert!(
        message.ends_with("and 980 more"),
        "{}",
        &message[message.len() - 40..]
    );
}

#[test]
fn annotations_are_kept_and_a_read_only_destructive_tool_is_refused() {
    use tools_runtime::ToolAnnotations;
    let annotated = |name: &str, annotations: ToolAnnotations| {
        ToolDefinition::builder(name)
            .input_schema(json!({"type": "object"}))
            .output(Output::json(json!({})))
            .annotations(annotations)
            .execute(|_args, _ctx| async { Ok::<Value, ToolError>(json!(1)) })
            .build()
    };
    let read_only = ToolAnnotations {
        read_only_hint: Some(true),
        ..ToolAnnotations::default()
    };
    let def = annotated("peek", read_only.clone()).unwrap();
    assert_eq!(def.annotations(), Some(&read_only));
    assert_eq!(def.catalog_entry().annotations, Some(read_only));
    let destructive = ToolAnnotations {
        read_only_hint: Some(true),
        destructive_hint: Some(true),
        ..ToolAnnotations::default()
    };
    let err = annotated("wipe", destructive).unwrap_err();
    assert_eq!(err.code(), "INVALID_ANNOTATIONS");
    assert!(
        err.to_string()
            .contains("read-only tool cannot be destructive"),
        "{err}"
    );
    // Empty annotations are none.
    let def = annotated("plain", ToolAnnotations::default()).unwrap();
    assert_eq!(def.annotations(), None);
}
