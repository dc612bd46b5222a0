//! Per-tool callers (`Callers`, `#[tool(callers = "...")]`) in every presentation mode: the
//! whole mode x callers table (what assembly offers as definitions, what the SDK holds, what a
//! direct call and a `run_code` program's call get, refusals word for word), that refusals
//! come before policy, that calls a tool body makes itself are not affected, that
//! `schemas(agent)` still lists every tool, and golden snapshots of the assemblies.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::json;
use tools_code::{CODE_NOT_RUN, CodeMode, PythonRuntime, TypeScriptRuntime};
use tools_runtime::presentation::Assembly;
use tools_runtime::{
    Callers, Output, PresentationMode, Registration, Scope, ToolCall, ToolDefinition,
    ToolRunContext, ToolRuntime, codes, tool,
};

/// Echo the text, from anywhere.
#[tool(concurrency_safe)]
fn anywhere(
    /// The text.
    text: String,
) -> String {
    format!("anywhere {text}")
}

/// Ask the person at the keyboard (only the model may call it, directly).
#[tool(callers = "direct")]
fn ask_user(
    /// The question.
    text: String,
) -> String {
    format!("asked {text}")
}

/// List every record of a kind (a large result: only programs may call it).
#[tool(callers = "code", concurrency_safe)]
fn all_records(
    /// The kind of record.
    text: String,
) -> Vec<String> {
    vec![format!("record {text}")]
}

/// Call another tool from this tool's body and return what it answered.
#[tool]
async fn relay(
    /// The tool to call.
    tool: String,
    #[context] ctx: ToolRunContext,
) -> String {
    let call = ctx.nested_call("relayed", tool, json!({"text": "r"}));
    ctx.runtime().execute(call).await.text()
}

const MODES: [PresentationMode; 3] = [
    PresentationMode::Native,
    PresentationMode::Code,
    PresentationMode::Both,
];

struct Setup {
    rt: ToolRuntime,
    plugin: Scope,
    /// How many calls reached the pre-execute listeners, by tool name.
    policy_calls: Arc<std::sync::Mutex<Vec<String>>>,
    _regs: Vec<Registration>,
}

fn setup(mode: PresentationMode, code: CodeMode) -> Setup {
    let rt = ToolRuntime::builder()
        .mode(mode)
        .extension(code)
        .build()
        .unwrap();
    let plugin = rt.scope();
    let mut regs: Vec<Registration> = [
        anywhere::definition().unwrap(),
        ask_user::definition().unwrap(),
        all_records::definition().unwrap(),
        relay::definition().unwrap(),
    ]
    .into_iter()
    .map(|d| plugin.register(d).unwrap())
    .collect();
    let policy_calls = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = policy_calls.clone();
    regs.push(
        plugin
            .on_pre_execute(move |exec, decision| {
                seen.lock().unwrap().push(exec.name().to_owned());
                decision
            })
            .unwrap(),
    );
    Setup {
        rt,
        plugin,
        policy_calls,
        _regs: regs,
    }
}

fn ts() -> CodeMode {
    CodeMode::new(TypeScriptRuntime::new())
}

/// What one tool gets in one mode.
struct Row {
    mode: PresentationMode,
    tool: &'static str,
    /// Offered as a tool definition.
    native: bool,
    /// In the SDK (and in `sdk_names`).
    sdk: bool,
    /// A direct call: `Ok(text)` or `Err(message)` (code `UNKNOWN_TOOL`).
    direct: Result<&'static str, &'static str>,
    /// A program's call, where the mode offers `run_code`: `Ok(the value as JSON text)` or
    /// `Err(message)`.
    program: Option<Result<&'static str, &'static str>>,
}

const CODE_ONLY_RULE: &str = "cannot be called directly here: this agent calls its tools from \
                              `run_code` programs; call it from inside a `run_code` program \
                              instead";

fn table() -> Vec<Row> {
    use PresentationMode::{Both, Code, Native};
    vec![
        // native: no SDK, no programs.
        Row {
            mode: Native,
            tool: "anywhere",
            native: true,
            sdk: false,
            direct: Ok("anywhere x"),
            program: None,
        },
        Row {
            mode: Native,
            tool: "ask_user",
            native: true,
            sdk: false,
            direct: Ok("asked x"),
            program: None,
        },
        Row {
            mode: Native,
            tool: "all_records",
            native: false,
            sdk: false,
            direct: Err(
                "`all_records` cannot be called directly: it can only be called from inside a \
                 `run_code` program, and this agent is not offered `run_code`, so it cannot be \
                 called here",
            ),
            program: None,
        },
        // code: only run_code is called directly.
        Row {
            mode: Code,
            tool: "anywhere",
            native: false,
            sdk: true,
            direct: Err(CODE_ONLY_RULE),
            program: Some(Ok("\"anywhere x\"")),
        },
        Row {
            mode: Code,
            tool: "ask_user",
            native: false,
            sdk: false,
            direct: Err(
                "`ask_user` is not available here: it can only be called directly, and this \
                 agent calls its tools only through `run_code`, so it cannot be called here",
            ),
            program: Some(Err(
                "`ask_user` cannot be called from a `run_code` program: it can only be called \
                 directly, and this agent calls its tools only through `run_code`, so it cannot \
                 be called here",
            )),
        },
        Row {
            mode: Code,
            tool: "all_records",
            native: false,
            sdk: true,
            direct: Err(CODE_ONLY_RULE),
            program: Some(Ok("[\"record x\"]")),
        },
        // both: each tool exactly as its callers say.
        Row {
            mode: Both,
            tool: "anywhere",
            native: true,
            sdk: true,
            direct: Ok("anywhere x"),
            program: Some(Ok("\"anywhere x\"")),
        },
        Row {
            mode: Both,
            tool: "ask_user",
            native: true,
            sdk: false,
            direct: Ok("asked x"),
            program: Some(Err(
                "`ask_user` cannot be called from a `run_code` program: it can only be called \
                 directly; make it a tool call of its own, outside `run_code`",
            )),
        },
        Row {
            mode: Both,
            tool: "all_records",
            native: false,
            sdk: true,
            direct: Err(
                "`all_records` cannot be called directly: it can only be called from inside a \
                 `run_code` program; call it there instead, as a function of the SDK",
            ),
            program: Some(Ok("[\"record x\"]")),
        },
    ]
}

/// A TypeScript program that calls `tool` and returns what it got, or the refusal's message.
/// A program that calls `tool` by a computed name: the pre-run analysis cannot see which tool
/// (the set is open), so the call reaches the pipeline and any refusal comes from there.
fn program(tool: &str) -> String {
    format!(
        "const name = ['{tool}'][0];\n\
         try {{ return JSON.stringify(await tools[name]({{text: 'x'}})); }} \
         catch (e) {{ return 'refused: ' + (e instanceof ToolCallError ? e.toolName + ': ' + e.message : String(e)); }}"
    )
}

/// A program that calls `tool` by its literal name: a refused call is seen before the run.
fn literal_program(tool: &str) -> String {
    format!("return JSON.stringify(await tools.{tool}({{text: 'x'}}));")
}

#[tokio::test]
async fn the_mode_and_callers_table() {
    for row in table() {
        let what = format!("{} {}", row.mode, row.tool);
        let s = setup(row.mode, ts());
        let key = s.plugin.key();
        let assembly = s.rt.assemble(key).unwrap();
        assert_eq!(
            assembly.tool_names().contains(&row.tool),
            row.native,
            "{what}: {:?}",
            assembly.tool_names()
        );
        // The SDK set, and the SDK text rendered from it.
        assert_eq!(
            s.rt.sdk_names(key).contains(&row.tool.to_owned()),
            row.sdk || (row.mode == PresentationMode::Native && row.tool != "ask_user"),
            "{what}"
        );
        if let Some(sdk) = assembly.section("tools:sdk") {
            let declared = format!("  {}(args: ToolArgsMap[\"{}\"])", row.tool, row.tool);
            assert_eq!(sdk.text.contains(&declared), row.sdk, "{what}");
        } else {
            assert!(!row.sdk, "{what}");
        }
        // `schemas` lists every visible tool whatever its callers and the mode.
        let names: Vec<String> = s.rt.schemas(key).into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            ["all_records", "anywhere", "ask_user", "relay"],
            "{what}"
        );

        // A direct call.
        let result =
            s.rt.execute(ToolCall::new("c1", row.tool, json!({"text": "x"})))
                .await;
        match row.direct {
            Ok(text) => assert_eq!(result.text(), text, "{what}"),
            Err(message) => {
                let expected = if message == CODE_ONLY_RULE {
                    format!("Error: `{}` {message}", row.tool)
                } else {
                    format!("Error: {message}")
                };
                assert_eq!(result.text(), expected, "{what}");
                assert_eq!(result.code(), Some(codes::UNKNOWN_TOOL), "{what}");
                assert!(
                    s.policy_calls.lock().unwrap().is_empty(),
                    "{what}: a refused call reached policy"
                );
            }
        }

        // A program's call.
        match row.program {
            None => assert!(!row.mode.offers_code()),
            Some(expected) => {
                s.policy_calls.lock().unwrap().clear();
                let args = json!({"code": program(row.tool), "description": "call it"});
                let result = s.rt.execute(ToolCall::new("c2", "run_code", args)).await;
                assert!(!result.is_error(), "{what}: {}", result.text());
                let got = result.value().unwrap()["result"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                match expected {
                    Ok(json_text) => assert_eq!(got, json_text, "{what}"),
                    Err(message) => {
                        assert_eq!(got, format!("refused: {}: {message}", row.tool), "{what}");
                        assert_eq!(
                            *s.policy_calls.lock().unwrap(),
                            ["run_code"],
                            "{what}: a refused call reached policy"
                        );
                        // Called by its literal name, the program is refused before it runs
                        // (and before any policy), with the same words.
                        s.policy_calls.lock().unwrap().clear();
                        let args =
                            json!({"code": literal_program(row.tool), "description": "call it"});
                        let result = s.rt.execute(ToolCall::new("c3", "run_code", args)).await;
                        assert_eq!(result.code(), Some(CODE_NOT_RUN), "{what}");
                        assert_eq!(
                            result.text(),
                            format!("Error: the program was not run: line 1, column 35: {message}"),
                            "{what}"
                        );
                        assert!(
                            s.policy_calls.lock().unwrap().is_empty(),
                            "{what}: a refused program reached policy"
                        );
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn calls_a_tool_body_makes_are_not_affected() {
    let s = setup(PresentationMode::Both, ts());
    // A code-only tool, called by a body that the model called directly.
    let result =
        s.rt.execute(ToolCall::new("c1", "relay", json!({"tool": "all_records"})))
            .await;
    assert_eq!(result.text(), "[\"record r\"]");
    // A direct-only tool, called by a body that a program called.
    let code = "return await tools.relay({tool: 'ask_user'});";
    let args = json!({"code": code, "description": "relay"});
    let result = s.rt.execute(ToolCall::new("c2", "run_code", args)).await;
    assert_eq!(result.text(), "asked r");
}

#[tokio::test]
async fn a_run_code_token_stops_marking_programs_when_the_run_ends() {
    // The parent token of a finished run is no longer a program's: a direct-only call with it
    // as parent (say, replayed by a host) runs.
    let s = setup(PresentationMode::Both, ts());
    let parent = Arc::new(std::sync::Mutex::new(None));
    let seen = parent.clone();
    let _listener = s
        .plugin
        .on_pre_execute(move |exec, decision| {
            if exec.name() == "run_code" {
                *seen.lock().unwrap() = Some(exec.token());
            }
            decision
        })
        .unwrap();
    let args = json!({"code": "return 1;", "description": "nothing"});
    let result = s.rt.execute(ToolCall::new("c1", "run_code", args)).await;
    assert!(!result.is_error(), "{}", result.text());
    let token = parent.lock().unwrap().unwrap();
    let call = ToolCall::new("c2", "ask_user", json!({"text": "x"})).with_parent(token);
    assert_eq!(s.rt.execute(call).await.text(), "asked x");
}

#[test]
fn the_builder_and_the_macro_declare_callers() {
    assert_eq!(anywhere::definition().unwrap().callers(), Callers::Any);
    assert_eq!(ask_user::definition().unwrap().callers(), Callers::Direct);
    assert_eq!(all_records::definition().unwrap().callers(), Callers::Code);
    let built = ToolDefinition::builder("t")
        .description("A tool.")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "null"})))
        .callers(Callers::Code)
        .execute(|_args, _ctx| async { Ok(json!(null)) })
        .build()
        .unwrap();
    assert_eq!(built.callers(), Callers::Code);
    for c in [Callers::Any, Callers::Direct, Callers::Code] {
        assert_eq!(Callers::from_name(c.as_str()), Some(c));
    }
    assert_eq!(Callers::from_name("program"), None);
}

#[test]
fn changing_only_a_tools_callers_changes_the_assembly() {
    // The assembly cache must not take a re-registration with other callers for an unchanged
    // tool set.
    let rt = ToolRuntime::builder()
        .mode(PresentationMode::Both)
        .extension(ts())
        .build()
        .unwrap();
    let plugin = rt.scope();
    let def = |callers| {
        ToolDefinition::builder("t")
            .description("A tool.")
            .input_schema(json!({"type": "object"}))
            .output(Output::json(json!({"type": "null"})))
            .callers(callers)
            .execute(|_args, _ctx| async { Ok(json!(null)) })
            .build()
            .unwrap()
    };
    let reg = plugin.register(def(Callers::Any)).unwrap();
    let before = rt.assemble(plugin.key()).unwrap();
    assert_eq!(before.tool_names(), ["run_code", "t"]);
    assert!(before.section("tools:code-only").is_none());
    reg.dispose();
    let _reg = plugin.register(def(Callers::Code)).unwrap();
    let after = rt.assemble(plugin.key()).unwrap();
    assert_eq!(after.tool_names(), ["run_code"]);
    assert!(after.section("tools:code-only").is_some());
    assert!(
        after
            .section("tools:sdk")
            .unwrap()
            .text
            .contains("  t(args")
    );
}

/// The assembly as reviewable text: the mode, each definition's name and description, each
/// section.
fn render(assembly: &Assembly) -> String {
    let mut out = String::new();
    writeln!(out, "mode: {}", assembly.mode.as_str()).unwrap();
    writeln!(out, "tools: {:?}", assembly.tool_names()).unwrap();
    for section in &assembly.sections {
        writeln!(
            out,
            "\n=== section {} (order {})",
            section.id, section.order
        )
        .unwrap();
        out.push_str(&section.text);
    }
    out
}

#[test]
fn snapshots_of_callers_in_every_mode_and_language() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings.bind(|| {
        for (lang, code) in [
            ("typescript", ts as fn() -> CodeMode),
            ("python", || CodeMode::new(PythonRuntime::new())),
        ] {
            for mode in MODES {
                let s = setup(mode, code());
                let assembly = s.rt.assemble(s.plugin.key()).unwrap();
                insta::assert_snapshot!(format!("{lang}_{mode}"), render(&assembly));
                // Byte-identical again.
                assert_eq!(
                    render(&s.rt.assemble(s.plugin.key()).unwrap()),
                    render(&assembly)
                );
            }
        }
    });
}

#[tokio::test]
async fn a_python_program_gets_the_same_refusal() {
    let s = setup(PresentationMode::Both, CodeMode::new(PythonRuntime::new()));
    // By a computed name the call reaches the pipeline, which refuses it.
    let code = "name = ['ask_user'][0]\ntry:\n    return await getattr(tools, name)({'text': 'x'})\nexcept ToolCallError as e:\n    return e.tool_name + ': ' + e.message\n";
    let args = json!({"code": code, "description": "ask"});
    let result = s.rt.execute(ToolCall::new("c1", "run_code", args)).await;
    assert_eq!(
        result.text(),
        "ask_user: `ask_user` cannot be called from a `run_code` program: it can only be called \
         directly; make it a tool call of its own, outside `run_code`"
    );
    // By its literal name the program is refused before it runs, with the same words.
    let code = "return await tools.ask_user({'text': 'x'})\n";
    let args = json!({"code": code, "description": "ask"});
    let result = s.rt.execute(ToolCall::new("c2", "run_code", args)).await;
    assert_eq!(result.code(), Some(CODE_NOT_RUN));
    assert_eq!(
        result.text(),
        "Error: the program was not run: line 1, column 20: `ask_user` cannot be called from a \
         `run_code` program: it can only be called directly; make it a tool call of its own, \
         outside `run_code`"
    );
    let code = "return await tools.all_records({'text': 'x'})";
    let args = json!({"code": code, "description": "all"});
    let result = s.rt.execute(ToolCall::new("c2", "run_code", args)).await;
    assert_eq!(result.text(), "[\n  \"record x\"\n]");
}
