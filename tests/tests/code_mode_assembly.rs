//! Golden snapshots of prompt assembly in every presentation mode (`native`, `code`, `both`),
//! for a TypeScript and a Python code runtime, over three small `#[tool]` tools (one named
//! `fs.read-file`, which is not an identifier in either language); and that re-assembling an
//! unchanged tool set gives byte-identical text.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Write as _;
use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use tools_code::{CodeMode, PythonRuntime, TypeScriptRuntime};
use tools_runtime::presentation::Assembly;
use tools_runtime::{
    Output, PresentationMode, Registration, Scope, ToolDefinition, ToolRuntime, ToolSchema, tool,
};

/// Read lines from a text file.
#[tool(name = "fs.read-file", concurrency_safe)]
async fn read_file(
    /// Absolute path of the file.
    path: String,
    /// 1-based first line (default 1).
    offset: Option<u64>,
) -> Result<Vec<String>, String> {
    Ok(vec![format!("{path}:{}", offset.unwrap_or(1))])
}

/// Add two integers.
#[tool(concurrency_safe)]
fn add(
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
) -> i64 {
    a + b
}

/// One search hit.
#[derive(Serialize, ToolSchema)]
struct Hit {
    /// Where the hit is.
    url: String,
    /// How well it matches, from 0 to 1.
    score: f64,
}

/// Search the index.
#[tool]
async fn search(
    /// What to look for.
    query: String,
    /// How many hits at most.
    limit: Option<u32>,
) -> Vec<Hit> {
    let _ = limit;
    vec![Hit {
        url: query,
        score: 1.0,
    }]
}

#[derive(Clone, Copy, Debug)]
enum Lang {
    TypeScript,
    Python,
}

impl Lang {
    fn name(self) -> &'static str {
        match self {
            Lang::TypeScript => "typescript",
            Lang::Python => "python",
        }
    }

    fn code_mode(self) -> CodeMode {
        match self {
            Lang::TypeScript => CodeMode::new(TypeScriptRuntime::new()),
            Lang::Python => CodeMode::new(PythonRuntime::new()),
        }
    }
}

const LANGS: [Lang; 2] = [Lang::TypeScript, Lang::Python];
const MODES: [PresentationMode; 3] = [
    PresentationMode::Native,
    PresentationMode::Code,
    PresentationMode::Both,
];

fn definitions() -> Vec<ToolDefinition> {
    vec![
        read_file::definition().unwrap(),
        add::definition().unwrap(),
        search::definition().unwrap(),
    ]
}

/// A runtime in `mode`, its global scope and the registrations of the three tools.
fn runtime(lang: Lang, mode: PresentationMode) -> (ToolRuntime, Scope, Vec<Registration>) {
    let rt = ToolRuntime::builder()
        .mode(mode)
        .extension(lang.code_mode())
        .build()
        .unwrap();
    let plugin = rt.scope();
    let regs = definitions()
        .into_iter()
        .map(|d| plugin.register(d).unwrap())
        .collect();
    (rt, plugin, regs)
}

/// The assembly as reviewable text: the mode, each tool definition as JSON, each section.
fn render(assembly: &Assembly) -> String {
    let mut out = String::new();
    writeln!(out, "mode: {}", assembly.mode.as_str()).unwrap();
    writeln!(out, "tools: {:?}", assembly.tool_names()).unwrap();
    for tool in &assembly.tools {
        writeln!(out, "\n=== tool {}", tool.name).unwrap();
        writeln!(out, "{}", serde_json::to_string_pretty(&**tool).unwrap()).unwrap();
    }
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

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings
}

#[test]
fn snapshots_of_every_mode_and_language() {
    settings().bind(|| {
        for lang in LANGS {
            for mode in MODES {
                let (rt, plugin, _regs) = runtime(lang, mode);
                let assembly = rt.assemble(plugin.key()).unwrap();
                assert_eq!(assembly.mode, mode);
                let expected_tools: &[&str] = match mode {
                    PresentationMode::Native => &["add", "fs.read-file", "search"],
                    PresentationMode::Code => &["run_code"],
                    PresentationMode::Both => &["add", "fs.read-file", "run_code", "search"],
                };
                assert_eq!(assembly.tool_names(), expected_tools, "{lang:?} {mode:?}");
                let expected_sections: &[&str] = match mode {
                    PresentationMode::Native => &[],
                    PresentationMode::Code => &["tools:code-only", "tools:sdk"],
                    PresentationMode::Both => &["tools:sdk"],
                };
                let ids: Vec<&str> = assembly.sections.iter().map(|s| s.id.as_str()).collect();
                assert_eq!(ids, expected_sections, "{lang:?} {mode:?}");

                insta::assert_snapshot!(
                    format!("{}_{}", lang.name(), mode.as_str()),
                    render(&assembly)
                );

                // An agent scope choosing the mode with `present_as` on a `native` runtime
                // assembles exactly what the runtime-wide mode does.
                let (native_rt, native_plugin, _native_regs) =
                    runtime(lang, PresentationMode::Native);
                let agent = native_plugin.agent();
                let _present =
                    (mode != PresentationMode::Native).then(|| agent.present_as(mode).unwrap());
                assert_eq!(
                    native_rt.assemble(agent.key()).unwrap(),
                    assembly,
                    "{lang:?} {mode:?}"
                );
            }
        }
    });
}

/// The whole assembly as text; `String` equality compares the bytes.
fn assembly_text(assembly: &Assembly) -> String {
    render(assembly)
}

/// A tool that is not one of the three.
fn extra(name: &str) -> ToolDefinition {
    ToolDefinition::builder(name)
        .description("An extra tool.")
        .input_schema(json!({"type": "object", "properties": {}}))
        .output(Output::json(json!({"type": "null"})))
        .execute(|_args, _ctx| async { Ok(json!(null)) })
        .build()
        .unwrap()
}

#[test]
fn reassembling_an_unchanged_tool_set_gives_byte_identical_text() {
    for lang in LANGS {
        for mode in [PresentationMode::Code, PresentationMode::Both] {
            let (rt, plugin, _regs) = runtime(lang, mode);
            let first = rt.assemble(plugin.key()).unwrap();
            let first_text = assembly_text(&first);

            // Again, nothing changed: the same bytes, from the cache.
            let again = rt.assemble(plugin.key()).unwrap();
            assert_eq!(assembly_text(&again), first_text, "{lang:?} {mode:?}");
            let sdk = |a: &Assembly| a.section("tools:sdk").unwrap().text.clone();
            assert!(Arc::ptr_eq(&sdk(&first), &sdk(&again)), "{lang:?} {mode:?}");

            // Changes the scope does not see (tools registered and disposed in a sibling agent
            // scope): the same bytes.
            let sibling = rt.agent_scope();
            sibling.register(extra("hidden")).unwrap().dispose();
            let _kept = sibling.register(extra("hidden_too")).unwrap();
            let during = rt.assemble(plugin.key()).unwrap();
            assert_eq!(assembly_text(&during), first_text, "{lang:?} {mode:?}");
            drop(sibling);
            let after = rt.assemble(plugin.key()).unwrap();
            assert_eq!(assembly_text(&after), first_text, "{lang:?} {mode:?}");

            // A change the scope sees: different text naming the new tool; undone, the same
            // bytes as before.
            let seen = plugin.register(extra("zz_extra")).unwrap();
            let changed = rt.assemble(plugin.key()).unwrap();
            assert_ne!(assembly_text(&changed), first_text, "{lang:?} {mode:?}");
            assert!(sdk(&changed).contains("zz_extra"), "{lang:?} {mode:?}");
            seen.dispose();
            let undone = rt.assemble(plugin.key()).unwrap();
            assert_eq!(assembly_text(&undone), first_text, "{lang:?} {mode:?}");

            // Another runtime, the same tools registered in the reverse order: the same bytes.
            let other = ToolRuntime::builder()
                .mode(mode)
                .extension(lang.code_mode())
                .build()
                .unwrap();
            let other_plugin = other.scope();
            let _other_regs: Vec<Registration> = definitions()
                .into_iter()
                .rev()
                .map(|d| other_plugin.register(d).unwrap())
                .collect();
            let fresh = other.assemble(other_plugin.key()).unwrap();
            assert_eq!(assembly_text(&fresh), first_text, "{lang:?} {mode:?}");
        }
    }
}
