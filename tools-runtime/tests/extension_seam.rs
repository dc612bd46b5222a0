//! The extension seam without Code Mode: owned tools under reserved names, a presenter's
//! contribution to assembly, what a prepare hook leaves on the execution, and the origin of a
//! program's calls, which only an owned tool can mint.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tools_runtime::error::{BuildError, RegistryError};
use tools_runtime::extension::{Extension, Installation, OwnedTool, Presenter};
use tools_runtime::presentation::{Assembly, AssemblyError, PromptSection};
use tools_runtime::{
    CallOrigin, Callers, Extensions, Output, PresentationMode, ProgramOrigin, ScopeKey, ToolCall,
    ToolDefinition, ToolError, ToolRuntime, codes,
};

/// What the owned tool's body saw.
#[derive(Debug, Default)]
struct Seen {
    origins: Vec<Option<ProgramOrigin>>,
}

/// Owns `run_code` (offered where the mode offers code): its body calls the tool named in
/// `call` as a program would, with the origin it was minted.
#[derive(Debug)]
struct Runner {
    seen: Arc<Mutex<Seen>>,
    presents_code: bool,
}

impl Extension for Runner {
    fn name(&self) -> &'static str {
        "runner"
    }

    fn install(self: Box<Self>) -> Result<Installation, BuildError> {
        let seen = self.seen.clone();
        let def = ToolDefinition::builder("run_code")
            .description("Calls one tool as a program.")
            .input_schema(json!({
                "type": "object",
                "properties": {"call": {"type": "string"}},
                "required": ["call"]
            }))
            .output(Output::json(json!({})))
            .execute(move |args, ctx| {
                let seen = seen.clone();
                async move {
                    let origin = ctx.program_origin();
                    seen.lock().unwrap().origins.push(origin);
                    let origin = origin.ok_or_else(|| ToolError::new("no origin"))?;
                    let name = args["call"].as_str().unwrap_or_default().to_owned();
                    let mut call = ToolCall::new("inner", name, json!({})).with_program(origin);
                    call.agent = ctx.agent();
                    let result = ctx.runtime().execute(call).await;
                    Ok(json!({"code": result.code(), "text": result.text()}))
                }
            })
            .build()
            .map_err(|e| BuildError::extension("runner", e))?;
        Ok(Installation::new()
            .tool(OwnedTool::new(def, PresentationMode::offers_code))
            .presenter(Arc::new(Sections {
                presents_code: self.presents_code,
            })))
    }
}

#[derive(Debug)]
struct Sections {
    presents_code: bool,
}

impl Presenter for Sections {
    fn presents_code(&self) -> bool {
        self.presents_code
    }

    fn assemble(
        &self,
        runtime: &ToolRuntime,
        scope: ScopeKey,
        assembly: &mut Assembly,
    ) -> Result<(), AssemblyError> {
        let names = runtime.visible_names(scope).join(",");
        assembly.sections.push(PromptSection {
            id: "runner:b".to_owned(),
            order: 10,
            text: Arc::from(names),
        });
        assembly.sections.push(PromptSection {
            id: "runner:a".to_owned(),
            order: 10,
            text: Arc::from("first by id"),
        });
        Ok(())
    }
}

fn tool(name: &str, callers: Callers) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("A tool.")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({})))
        .callers(callers)
        .execute(|_args, ctx| async move {
            Ok::<Value, ToolError>(json!({"program": ctx.execution().origin().is_program()}))
        })
        .build()
        .unwrap()
}

fn runtime(mode: PresentationMode) -> (ToolRuntime, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let rt = ToolRuntime::builder()
        .mode(mode)
        .extension(Runner {
            seen: seen.clone(),
            presents_code: true,
        })
        .build()
        .unwrap();
    (rt, seen)
}

#[tokio::test]
async fn an_owned_tool_is_reserved_and_offered_where_its_modes_say() {
    let (rt, _) = runtime(PresentationMode::Native);
    let scope = rt.scope();
    let err = scope.register(tool("run_code", Callers::Any)).unwrap_err();
    assert!(matches!(err, RegistryError::ReservedName { .. }), "{err:?}");
    // Not offered under `native`.
    let result = rt
        .execute(ToolCall::new("1", "run_code", json!({"call": "x"})))
        .await;
    assert_eq!(result.code(), Some(codes::UNKNOWN_TOOL));
    assert!(rt.owned_definition("run_code").is_some());
    assert!(rt.owned_definition("describe_tools").is_none());

    let agent = rt.agent_scope();
    let _mode = agent.present_as(PresentationMode::Both).unwrap();
    let result = rt
        .execute(ToolCall::new("2", "run_code", json!({"call": "x"})).with_agent(agent.key()))
        .await;
    assert!(!result.is_error(), "{result:?}");
}

#[tokio::test]
async fn a_program_origin_is_minted_only_for_owned_tools_and_the_rules_read_it() {
    let (rt, seen) = runtime(PresentationMode::Both);
    let scope = rt.scope();
    let _direct = scope
        .register(tool("direct_only", Callers::Direct))
        .unwrap();
    let _any = scope.register(tool("any", Callers::Any)).unwrap();
    let _code = scope.register(tool("code_only", Callers::Code)).unwrap();

    // A program's call of a direct-only tool is refused by the callers rule.
    let result = rt
        .execute(ToolCall::new(
            "1",
            "run_code",
            json!({"call": "direct_only"}),
        ))
        .await;
    let value = result.value().unwrap();
    assert_eq!(value["code"], json!(codes::UNKNOWN_TOOL), "{value}");
    assert!(
        value["text"]
            .as_str()
            .unwrap()
            .contains("cannot be called from a `run_code` program"),
        "{value}"
    );
    // Other tools run and see a program's origin.
    let result = rt
        .execute(ToolCall::new("2", "run_code", json!({"call": "any"})))
        .await;
    assert_eq!(result.value().unwrap()["text"], json!("{\"program\":true}"));
    let result = rt
        .execute(ToolCall::new("3", "run_code", json!({"call": "code_only"})))
        .await;
    assert_eq!(result.value().unwrap()["text"], json!("{\"program\":true}"));
    let origins = std::mem::take(&mut seen.lock().unwrap().origins);
    assert_eq!(origins.len(), 3);
    assert!(origins.iter().all(Option::is_some));

    // A tool registered through a scope mints nothing; its nested calls are not a program's.
    let minted = Arc::new(Mutex::new(Vec::new()));
    let record = minted.clone();
    let nester = ToolDefinition::builder("nester")
        .description("Calls `code_only` as a nested call.")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({})))
        .execute(move |_args, ctx| {
            let record = record.clone();
            async move {
                record.lock().unwrap().push(ctx.program_origin());
                let result = ctx
                    .runtime()
                    .execute(ctx.nested_call("n", "code_only", json!({})))
                    .await;
                Ok::<Value, ToolError>(json!(result.code()))
            }
        })
        .build()
        .unwrap();
    let _nester = scope.register(nester).unwrap();
    let result = rt.execute(ToolCall::new("4", "nester", json!({}))).await;
    assert_eq!(*minted.lock().unwrap(), vec![None]);
    // A nested call is no program's and no direct call: a code-only tool runs for it as before.
    assert_eq!(result.value(), Some(&json!(null)));
    // A direct call of a code-only tool is refused.
    let result = rt.execute(ToolCall::new("5", "code_only", json!({}))).await;
    assert_eq!(result.code(), Some(codes::UNKNOWN_TOOL));
    assert!(
        result.text().contains("cannot be called directly"),
        "{result:?}"
    );
}

#[tokio::test]
async fn the_origin_of_a_call_is_what_it_says_and_a_program_call_has_the_run_as_parent() {
    let (rt, _) = runtime(PresentationMode::Both);
    let scope = rt.scope();
    let origins = Arc::new(Mutex::new(Vec::new()));
    let record = origins.clone();
    let _l = scope
        .on_pre_execute(move |exec, decision| {
            record
                .lock()
                .unwrap()
                .push((exec.name().to_owned(), exec.origin(), exec.parent()));
            decision
        })
        .unwrap();
    let _any = scope.register(tool("any", Callers::Any)).unwrap();
    let direct = ToolCall::new("1", "any", json!({}));
    assert_eq!(direct.origin(), CallOrigin::Direct);
    rt.execute(direct).await;
    rt.execute(ToolCall::new("2", "run_code", json!({"call": "any"})))
        .await;
    let origins = origins.lock().unwrap().clone();
    assert_eq!(origins.len(), 3, "{origins:?}");
    assert_eq!(origins[0].1, CallOrigin::Direct);
    let CallOrigin::Program(program) = origins[2].1 else {
        panic!("the program's call has a program origin: {origins:?}");
    };
    assert_eq!(origins[2].2, Some(program.run()));
    assert!(origins[1].1.is_direct());
}

/// A user type a prepare hook computes, read by a listener and by the body.
#[derive(Debug, Clone, PartialEq)]
struct Budget(u64);

#[tokio::test]
async fn what_a_prepare_hook_computes_travels_with_the_execution() {
    let rt = ToolRuntime::new();
    let scope = rt.scope();
    let def = ToolDefinition::builder("spend")
        .description("Spends a budget.")
        .input_schema(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"]
        }))
        .output(Output::json(json!({})))
        .prepare(|args, _ctx| async move {
            let mut out = Extensions::new();
            out.insert(Budget(args["n"].as_u64().unwrap_or(0) * 10));
            Ok(out)
        })
        .execute(|_args, ctx| async move {
            let budget = ctx.execution().get::<Budget>().cloned();
            Ok::<Value, ToolError>(json!(budget.map(|b| b.0)))
        })
        .build()
        .unwrap();
    let _reg = scope.register(def).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let _l = scope
        .on_pre_execute(move |exec, decision| {
            record.lock().unwrap().push(exec.get::<Budget>().cloned());
            decision
        })
        .unwrap();
    let result = rt
        .execute(ToolCall::new("1", "spend", json!({"n": 3})))
        .await;
    assert_eq!(result.value(), Some(&json!(30)));
    assert_eq!(*seen.lock().unwrap(), vec![Some(Budget(30))]);
}

#[tokio::test]
async fn a_presenter_adds_sections_in_order_and_code_needs_one_that_presents_code() {
    let (rt, _) = runtime(PresentationMode::Both);
    let scope = rt.scope();
    let _any = scope.register(tool("any", Callers::Any)).unwrap();
    let assembly = rt.assemble(scope.key()).unwrap();
    let ids: Vec<&str> = assembly.sections.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, vec!["runner:a", "runner:b"]);
    assert_eq!(&*assembly.sections[1].text, "any");

    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Code)
        .extension(Runner {
            seen: Arc::default(),
            presents_code: false,
        })
        .build()
        .unwrap();
    let err = rt.assemble(ScopeKey::GLOBAL).unwrap_err();
    assert_eq!(err.code(), "NO_CODE_RUNTIME");
}

/// Owns a name the registry does not reserve, or one another extension owns.
#[derive(Debug)]
struct Owns(&'static str);

impl Extension for Owns {
    fn name(&self) -> &'static str {
        "owns"
    }

    fn install(self: Box<Self>) -> Result<Installation, BuildError> {
        Ok(Installation::new().tool(OwnedTool::new(tool(self.0, Callers::Any), |_| true)))
    }
}

#[test]
fn an_extension_owns_only_free_reserved_names() {
    let err = ToolRuntime::builder()
        .extension(Owns("search"))
        .build()
        .unwrap_err();
    assert_eq!(err.code(), "NOT_RESERVED");
    assert!(err.to_string().contains("`search`"), "{err}");
    let err = ToolRuntime::builder()
        .extension(Owns("describe_tools"))
        .extension(Owns("describe_tools"))
        .build()
        .unwrap_err();
    assert_eq!(err.code(), "DUPLICATE_OWNED_TOOL");
}
