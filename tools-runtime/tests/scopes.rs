//! Scopes, masks, reservations, admission, shadowing and disposal, beyond the conformance
//! clauses: nesting, disposal cascades, handles, listener scoping, shared state, and the
//! `UNKNOWN_TOOL` suggestions.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tools_runtime::error::RegistryError;
use tools_runtime::{Output, ScopeKey, ToolCall, ToolDefinition, ToolFilter, ToolRuntime, codes};

fn tool(name: &str, answer: i64) -> ToolDefinition {
    ToolDefinition::builder(name)
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(move |_a, _c| async move { Ok(json!(answer)) })
        .build()
        .unwrap()
}

async fn answer(rt: &ToolRuntime, name: &str, scope: ScopeKey) -> Result<i64, String> {
    let r = rt
        .execute(ToolCall::new("c", name, json!({})).with_agent(scope))
        .await;
    match r.value() {
        Some(v) => Ok(v.as_i64().unwrap()),
        None => Err(r.code().unwrap().to_owned()),
    }
}

#[tokio::test]
async fn nested_agents_see_their_ancestors_locals_and_the_nearest_shadow_wins() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _g = plugin.register(tool("t", 0)).unwrap();
    let parent = rt.agent_scope();
    let child = parent.agent();
    let grandchild = child.agent();
    let _p = parent.register(tool("t", 1)).unwrap();
    let _p2 = parent.register(tool("parent_only", 10)).unwrap();
    let _c = child.register(tool("t", 2)).unwrap();
    assert_eq!(answer(&rt, "t", parent.key()).await, Ok(1));
    assert_eq!(answer(&rt, "t", child.key()).await, Ok(2));
    assert_eq!(answer(&rt, "t", grandchild.key()).await, Ok(2));
    assert_eq!(answer(&rt, "parent_only", grandchild.key()).await, Ok(10));
    assert_eq!(answer(&rt, "t", ScopeKey::GLOBAL).await, Ok(0));
    // The child's masks cannot hide the parent's local tool (masks apply to globals): naming it
    // is an error.
    let err = child
        .restrict(ToolFilter::deny(["parent_only"]))
        .unwrap_err();
    assert_eq!(err.code(), "LOCAL_NAMES");
}

#[tokio::test]
async fn disposing_an_agent_scope_removes_its_layer_nested_scopes_and_listeners() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _g = plugin.register(tool("g", 0)).unwrap();
    let parent = rt.agent_scope();
    let child = parent.agent();
    let _l = child.register(tool("l", 1)).unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let _o = child
        .on_result(move |_, _| {
            h.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    let child_key = child.key();
    assert_eq!(answer(&rt, "l", child_key).await, Ok(1));
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    drop(parent); // the child layer goes with its parent
    let gone = rt
        .execute(ToolCall::new("c", "g", json!({})).with_agent(child_key))
        .await;
    assert_eq!(gone.code(), Some(codes::UNKNOWN_TOOL));
    assert!(gone.text().contains("disposed"), "{}", gone.text());
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the child's observer went too"
    );
    assert!(rt.schemas(child_key).is_empty());
    assert!(!rt.is_admitted("g", child_key));
    // Registering through the dead scope is refused; its handles dispose as no-ops.
    assert_eq!(
        child.register(tool("x", 2)).unwrap_err(),
        RegistryError::ScopeDisposed
    );
    assert_eq!(
        child.restrict(ToolFilter::deny(["g"])).unwrap_err(),
        RegistryError::ScopeDisposed
    );
    assert!(child.agent().register(tool("y", 3)).is_err());
    drop(child);
    // Globals are untouched.
    assert_eq!(answer(&rt, "g", ScopeKey::GLOBAL).await, Ok(0));
}

#[tokio::test]
async fn disposing_a_plugin_scope_removes_what_it_registered_only() {
    let rt = ToolRuntime::new();
    let a = rt.scope();
    let b = rt.scope();
    let _x = a.register(tool("x", 1)).unwrap();
    let _y = b.register(tool("y", 2)).unwrap();
    let _g = a.guard(|_| Some("a's guard".into())).unwrap();
    let _r = a.reserve("later").unwrap();
    assert_eq!(
        answer(&rt, "y", ScopeKey::GLOBAL).await,
        Err(codes::GUARD_DENIED.into())
    );
    a.dispose();
    assert_eq!(answer(&rt, "y", ScopeKey::GLOBAL).await, Ok(2));
    assert_eq!(
        answer(&rt, "x", ScopeKey::GLOBAL).await,
        Err(codes::UNKNOWN_TOOL.into())
    );
    // The reservation went with it: the name is unknown to masks again.
    let agent = rt.agent_scope();
    assert_eq!(
        agent
            .restrict(ToolFilter::deny(["later"]))
            .unwrap_err()
            .code(),
        "UNKNOWN_NAMES"
    );
}

/// A tool (or a listener) that owns a scope: dropping it disposes what that scope
/// registered, from inside the disposal that removes it.
#[test]
fn what_a_disposal_removes_may_own_scopes_of_its_own() {
    let rt = ToolRuntime::new();
    let owner = rt.scope();
    // A plugin that registered `inner`, owned by a tool and a listener of `owner`.
    let inner = rt.scope();
    let _i = inner.register(tool("inner", 1)).unwrap();
    let inner = Arc::new(inner);
    let held = inner.clone();
    let loader = ToolDefinition::builder("loader")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(move |_a, _c| {
            let _keeps = &held;
            async { Ok(json!(0)) }
        })
        .build()
        .unwrap();
    let _l = owner.register(loader).unwrap();
    let held = inner.clone();
    let _c = owner
        .on_change(move |_| {
            let _keeps = &held;
        })
        .unwrap();
    drop(inner);
    assert!(rt.get("inner", ScopeKey::GLOBAL).is_some());
    // The owner's tool and listener go together: the last one dropped takes `inner` with it.
    // (Dropped on a thread of its own: a disposal that deadlocks fails the test instead of
    // hanging it.)
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(owner);
        let _ = done_tx.send(());
    });
    done_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("disposing a scope whose tool owns a scope deadlocked");
    assert!(rt.get("inner", ScopeKey::GLOBAL).is_none());
    assert!(rt.get("loader", ScopeKey::GLOBAL).is_none());
}

#[tokio::test]
async fn handles_dispose_single_registrations_idempotently() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let agent = rt.agent_scope();
    let _t = plugin.register(tool("t", 1)).unwrap();
    let mask = agent.restrict(ToolFilter::deny(["t"])).unwrap();
    assert!(!agent.is_admitted("t"));
    mask.dispose();
    assert!(agent.is_admitted("t"));
    let guard = plugin.guard(|_| Some("no".into())).unwrap();
    assert!(answer(&rt, "t", ScopeKey::GLOBAL).await.is_err());
    guard.dispose();
    assert_eq!(answer(&rt, "t", ScopeKey::GLOBAL).await, Ok(1));
    // A handle that outlives its scope disposes nothing.
    let other = rt.scope();
    let late = other.register(tool("late", 2)).unwrap();
    drop(other);
    late.dispose();
    // Re-registering after disposal works.
    let _again = plugin.register(tool("late", 3)).unwrap();
    assert_eq!(answer(&rt, "late", ScopeKey::GLOBAL).await, Ok(3));
}

#[tokio::test]
async fn a_reserved_name_in_an_agent_layer_is_restrictable_there() {
    let rt = ToolRuntime::new();
    let agent = rt.agent_scope();
    let _r = agent.reserve("deferred").unwrap();
    let _m = agent.restrict(ToolFilter::allow(["deferred"])).unwrap();
    assert!(agent.is_admitted("deferred"));
    assert!(!agent.is_admitted("anything_else"));
    assert!(
        !agent.is_admitted("run_code"),
        "the reserved transport is never a global"
    );
}

#[tokio::test]
async fn unknown_tool_names_the_closest_visible_tools_only() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    for n in ["read_file", "read_image", "write_file", "bash"] {
        let _ = plugin.register(tool(n, 0)).unwrap();
    }
    let agent = rt.agent_scope();
    let _m = agent.restrict(ToolFilter::deny(["read_image"])).unwrap();
    let r = rt.execute(ToolCall::new("c", "read_fil", json!({}))).await;
    assert_eq!(r.code(), Some(codes::UNKNOWN_TOOL));
    assert!(
        r.text()
            .starts_with("Error: unknown tool `read_fil`; did you mean one of `read_file`"),
        "{}",
        r.text()
    );
    let hidden = rt
        .execute(ToolCall::new("c", "read_imag", json!({})).with_agent(agent.key()))
        .await;
    assert!(!hidden.text().contains("read_image"), "{}", hidden.text());
    let far = rt.execute(ToolCall::new("c", "zzzzzz", json!({}))).await;
    assert_eq!(far.text(), "Error: unknown tool `zzzzzz`");
    // A masked-away global is unknown to that agent, even by its exact name.
    let masked = rt
        .execute(ToolCall::new("c", "read_image", json!({})).with_agent(agent.key()))
        .await;
    assert_eq!(masked.code(), Some(codes::UNKNOWN_TOOL));
}

#[tokio::test]
async fn bodies_reach_shared_state_through_the_run_context() {
    struct Counter(AtomicUsize);
    let rt = ToolRuntime::new();
    rt.insert_state(Counter(AtomicUsize::new(41)));
    let plugin = rt.scope();
    let def = ToolDefinition::builder("bump")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, ctx| async move {
            let counter = ctx
                .state::<Counter>()
                .ok_or_else(|| tools_runtime::ToolError::new("no counter installed"))?;
            Ok(json!(counter.0.fetch_add(1, Ordering::SeqCst) + 1))
        })
        .build()
        .unwrap();
    let _t = plugin.register(def).unwrap();
    assert_eq!(answer(&rt, "bump", ScopeKey::GLOBAL).await, Ok(42));
    assert_eq!(answer(&rt, "bump", ScopeKey::GLOBAL).await, Ok(43));
    assert_eq!(rt.state::<Counter>().unwrap().0.load(Ordering::SeqCst), 43);
}

#[tokio::test]
async fn a_call_keeps_the_definition_and_listeners_it_entered_with() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let rt2 = rt.clone();
    let reg = Arc::new(std::sync::Mutex::new(None));
    let r2 = reg.clone();
    // The body disposes its own registration and adds a guard mid-call.
    let def = ToolDefinition::builder("self_removing")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(move |_a, _c| {
            let handle = r2.lock().unwrap().take();
            let scope = rt2.scope();
            async move {
                if let Some(h) = handle {
                    tools_runtime::Registration::dispose(h);
                }
                let _g = scope.guard(|_| Some("late guard".into())).unwrap();
                std::mem::forget(scope);
                Ok(json!(5))
            }
        })
        .build()
        .unwrap();
    *reg.lock().unwrap() = Some(plugin.register(def).unwrap());
    assert_eq!(answer(&rt, "self_removing", ScopeKey::GLOBAL).await, Ok(5));
    assert_eq!(
        answer(&rt, "self_removing", ScopeKey::GLOBAL).await,
        Err(codes::UNKNOWN_TOOL.into())
    );
}

#[tokio::test]
async fn a_composite_tool_makes_nested_calls_with_its_token_as_parent_and_its_agent_scope() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let agent = rt.agent_scope();
    let _inner = agent.register(tool("inner", 7)).unwrap();
    let parents = Arc::new(std::sync::Mutex::new(Vec::new()));
    let p = parents.clone();
    let _o = plugin
        .on_result(move |exec, _| {
            p.lock()
                .unwrap()
                .push((exec.name().to_owned(), exec.token(), exec.parent()))
        })
        .unwrap();
    let outer = ToolDefinition::builder("outer")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "integer"})))
        .execute(|_a, ctx| async move {
            let call = ctx.nested_call("outer:1", "inner", json!({}));
            let r = ctx.runtime().execute(call).await;
            for c in r.additional_contexts.iter().cloned() {
                ctx.defer_context(c);
            }
            r.value()
                .cloned()
                .ok_or_else(|| tools_runtime::ToolError::new(r.text()))
        })
        .build()
        .unwrap();
    let _t = plugin.register(outer).unwrap();
    // `inner` is local to the agent, so the nested call must carry the agent scope.
    assert_eq!(answer(&rt, "outer", agent.key()).await, Ok(7));
    let seen = parents.lock().unwrap();
    let (inner_name, _, inner_parent) = &seen[0];
    let (outer_name, outer_token, outer_parent) = &seen[1];
    assert_eq!(
        (inner_name.as_str(), outer_name.as_str()),
        ("inner", "outer")
    );
    assert_eq!(*inner_parent, Some(*outer_token));
    assert_eq!(*outer_parent, None);
}

#[test]
fn the_catalog_of_a_scope_is_what_it_sees_in_the_mcp_shape() {
    let rt = ToolRuntime::new();
    let plugin = rt.scope();
    let _a = plugin.register(tool("b_tool", 1)).unwrap();
    let _b = plugin.register(tool("a_tool", 2)).unwrap();
    let agent = rt.agent_scope();
    let _m = agent.restrict(ToolFilter::deny(["b_tool"])).unwrap();
    let catalog = rt.catalog(agent.key()).unwrap();
    let json = catalog.to_json();
    assert_eq!(json["tools"].as_array().unwrap().len(), 1);
    assert_eq!(json["tools"][0]["name"], "a_tool");
    assert_eq!(json["tools"][0]["inputSchema"], json!({"type": "object"}));
    assert_eq!(json["tools"][0]["outputSchema"], json!({"type": "integer"}));
    assert_eq!(rt.catalog(ScopeKey::GLOBAL).unwrap().len(), 2);
}
