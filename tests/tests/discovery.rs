//! Discovery for large catalogs: the codegen's index and declarations (snapshots, byte
//! stability, and a type check of the index with the declarations of every tool, for every
//! catalog of the codegen tests), the `Discovery` setting in prompt assembly (snapshots, the
//! `Auto` threshold to the byte), `describe_tools` (names, unknown names, queries, limits, the
//! empty request, what it may describe, where it exists), and an end-to-end turn per language:
//! a 200-tool agent whose prompt is an index, a `describe_tools` call whose answer goes into
//! the prompt, and a program written against that answer (type-checked with `tsc` / `mypy`)
//! that calls the discovered tool.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::codegen_support;
use crate::tracing_support::Recorder;

use std::fmt::Write as _;

use codegen_support::{all_catalogs, example, run_mypy, run_tsc};
use serde_json::{Value, json};
use tools_code::{CodeMode, Discovery, PythonRuntime, TypeScriptRuntime};
use tools_codegen::{Language, render_declarations, render_index};
use tools_runtime::presentation::Assembly;
use tools_runtime::{
    Callers, Output, PresentationMode, Registration, Scope, ToolCall, ToolDefinition, ToolFilter,
    ToolRuntime, codes,
};

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings
}

fn names(catalog: &tools_schema::Catalog) -> Vec<&str> {
    catalog.tools().iter().map(|t| t.name.as_str()).collect()
}

#[test]
fn index_and_declarations_of_the_example_catalog() {
    let catalog = example();
    let mut order = names(&catalog);
    order.reverse();
    settings().bind(|| {
        for language in Language::ALL {
            let index = render_index(&catalog, language);
            assert_eq!(render_index(&catalog, language), index, "byte-stable");
            insta::assert_snapshot!(format!("index_{language}"), index);
            // Two tools, in the order asked for; a repeat and an unknown name are skipped.
            let two = [order[0], order[1], order[0], "no_such_tool"];
            let declarations = render_declarations(&catalog, &two, language);
            assert_eq!(render_declarations(&catalog, &two, language), declarations);
            insta::assert_snapshot!(format!("declarations_{language}"), declarations);
            let first = declarations.find(order[0]).unwrap();
            let second = declarations.find(order[1]).unwrap();
            assert!(first < second, "{language}: the order asked for");
        }
    });
}

#[test]
fn the_index_groups_names_one_line_per_prefix_and_quotes_odd_names() {
    for (label, catalog) in all_catalogs() {
        for language in Language::ALL {
            let index = render_index(&catalog, language);
            let comment = match language {
                Language::TypeScript => "// ",
                Language::Python => "# ",
            };
            // Every group line is a comment line naming its tools; together they name every
            // tool once.
            let groups: Vec<&str> = index
                .lines()
                .filter(|l| l.starts_with(comment) && l.contains("): "))
                .collect();
            let listed: usize = groups
                .iter()
                .map(|l| {
                    let close = l.find("): ").unwrap();
                    let open = l[..close].rfind(" (").unwrap();
                    l[open + 2..close].parse::<usize>().unwrap()
                })
                .sum();
            assert_eq!(
                listed,
                catalog.tools().len(),
                "{label} {language}:\n{index}"
            );
            for tool in catalog.tools() {
                if tools_schema::validate_tool_name(&tool.name).is_ok() {
                    assert!(
                        groups.iter().any(|l| l.contains(tool.name.as_str())),
                        "{label} {language}: {}",
                        tool.name
                    );
                }
            }
        }
    }
}

#[test]
fn the_index_with_every_declaration_type_checks() {
    let dir = tempfile::tempdir().unwrap();
    let mut ts_files = Vec::new();
    let mut py_files = Vec::new();
    for (label, catalog) in all_catalogs() {
        let mut order = names(&catalog);
        order.reverse();
        for language in Language::ALL {
            let text = format!(
                "{}\n{}",
                render_index(&catalog, language),
                render_declarations(&catalog, &order, language)
            );
            let file = format!("{label}_discovery.{}", language.extension());
            std::fs::write(dir.path().join(&file), text).unwrap();
            match language {
                Language::TypeScript => ts_files.push(file),
                Language::Python => py_files.push(file),
            }
        }
    }
    run_tsc(dir.path(), &ts_files);
    run_mypy(dir.path(), &py_files);
}

// ---------------------------------------------------------------------------------------------
// The runtime.

/// A tool with one string argument `x` that answers `<name>: <x>`.
fn filler(name: &str, description: &str) -> ToolDefinition {
    let owned = name.to_owned();
    ToolDefinition::builder(name)
        .description(description)
        .input_schema(json!({
            "type": "object",
            "properties": {"x": {"type": "string", "description": "Anything."}},
            "required": ["x"],
            "additionalProperties": false,
        }))
        .output(Output::json(json!({"type": "string"})))
        .concurrency_safe(|_| true)
        .execute(move |args, _ctx| {
            let owned = owned.clone();
            async move {
                Ok(json!(format!(
                    "{owned}: {}",
                    args["x"].as_str().unwrap_or("")
                )))
            }
        })
        .build()
        .unwrap()
}

/// The tool the end-to-end turn discovers.
fn forecast() -> ToolDefinition {
    ToolDefinition::builder("weather_forecast")
        .description("The weather forecast for a city, day by day.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city."},
                "days": {"type": "integer", "minimum": 1, "maximum": 7, "description": "How many days (default 3)."},
            },
            "required": ["city"],
            "additionalProperties": false,
        }))
        .output(Output::json(json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["city", "days"],
            "additionalProperties": false,
        })))
        .concurrency_safe(|_| true)
        .execute(|args, _ctx| async move {
            let days = args["days"].as_u64().unwrap_or(3);
            let list: Vec<String> = (1..=days).map(|d| format!("day {d}: sunny")).collect();
            Ok(json!({"city": args["city"], "days": list}))
        })
        .build()
        .unwrap()
}

/// 200 tools in five groups (with `weather_forecast` among them).
fn large_catalog() -> Vec<ToolDefinition> {
    let groups = [
        ("calendar", "an event in the calendar"),
        ("db", "a row of the database"),
        ("fs", "a file of the workspace"),
        ("github", "an issue of the repository"),
        ("weather", "the measurements of a station"),
    ];
    let mut defs = vec![forecast()];
    for (group, what) in groups {
        for i in 0..40 {
            if group == "weather" && i == 0 {
                continue;
            }
            defs.push(filler(
                &format!("{group}_op_{i:02}"),
                &format!("Operation {i} on {what}."),
            ));
        }
    }
    defs
}

fn three() -> Vec<ToolDefinition> {
    vec![
        filler("fs.read-file", "Read lines from a text file."),
        filler("add", "Add two integers."),
        filler("search", "Search the index."),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Lang {
    TypeScript,
    Python,
}

impl Lang {
    fn code_mode(self) -> CodeMode {
        match self {
            Lang::TypeScript => CodeMode::new(TypeScriptRuntime::new()),
            Lang::Python => CodeMode::new(PythonRuntime::new()),
        }
    }
    fn language(self) -> Language {
        match self {
            Lang::TypeScript => Language::TypeScript,
            Lang::Python => Language::Python,
        }
    }
}

const LANGS: [Lang; 2] = [Lang::TypeScript, Lang::Python];

fn runtime(
    lang: Lang,
    mode: PresentationMode,
    discovery: Discovery,
    defs: Vec<ToolDefinition>,
) -> (ToolRuntime, Scope, Vec<Registration>) {
    let rt = ToolRuntime::builder()
        .mode(mode)
        .extension(lang.code_mode().discovery(discovery))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let regs = defs
        .into_iter()
        .map(|d| plugin.register(d).unwrap())
        .collect();
    (rt, plugin, regs)
}

fn render(assembly: &Assembly) -> String {
    let mut out = String::new();
    writeln!(out, "mode: {}", assembly.mode.as_str()).unwrap();
    writeln!(out, "tools: {:?}", assembly.tool_names()).unwrap();
    for tool in &assembly.tools {
        if tool.name == "describe_tools" {
            writeln!(out, "\n=== tool {}", tool.name).unwrap();
            writeln!(out, "{}", serde_json::to_string_pretty(&**tool).unwrap()).unwrap();
        }
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

#[test]
fn assembly_snapshots_with_the_index() {
    settings().bind(|| {
        for lang in LANGS {
            for mode in [PresentationMode::Code, PresentationMode::Both] {
                let (rt, plugin, _regs) = runtime(lang, mode, Discovery::Always, three());
                let assembly = rt.assemble(plugin.key()).unwrap();
                let expected: &[&str] = match mode {
                    PresentationMode::Code => &["describe_tools", "run_code"],
                    _ => &[
                        "add",
                        "describe_tools",
                        "fs.read-file",
                        "run_code",
                        "search",
                    ],
                };
                assert_eq!(assembly.tool_names(), expected);
                insta::assert_snapshot!(
                    format!("assembly_{}_{mode}", lang.language()),
                    render(&assembly)
                );
                // Byte-identical again, and from another runtime with the tools in reverse.
                assert_eq!(
                    render(&rt.assemble(plugin.key()).unwrap()),
                    render(&assembly)
                );
                let mut reversed = three();
                reversed.reverse();
                let (other, other_plugin, _other_regs) =
                    runtime(lang, mode, Discovery::Always, reversed);
                assert_eq!(
                    render(&other.assemble(other_plugin.key()).unwrap()),
                    render(&assembly)
                );
            }
        }
    });
}

#[test]
fn auto_shows_the_full_sdk_up_to_the_threshold_and_the_index_past_it() {
    for lang in LANGS {
        let (rt, plugin, _regs) = runtime(lang, PresentationMode::Code, Discovery::Never, three());
        let full = rt.assemble(plugin.key()).unwrap();
        let bytes = full.section("tools:sdk").unwrap().text.len();
        assert_eq!(full.tool_names(), ["run_code"]);

        let (at, at_plugin, _r1) = runtime(
            lang,
            PresentationMode::Code,
            Discovery::Auto { above_bytes: bytes },
            three(),
        );
        assert_eq!(at.assemble(at_plugin.key()).unwrap(), full, "{lang:?}");

        let (past, past_plugin, _r2) = runtime(
            lang,
            PresentationMode::Code,
            Discovery::Auto {
                above_bytes: bytes - 1,
            },
            three(),
        );
        let indexed = past.assemble(past_plugin.key()).unwrap();
        assert_eq!(indexed.tool_names(), ["describe_tools", "run_code"]);
        let sdk = &indexed.section("tools:sdk").unwrap().text;
        assert!(sdk.contains("describe_tools"), "{sdk}");
        assert!(sdk.len() < bytes, "{lang:?}");

        // The default threshold keeps a small catalog's full SDK.
        let rt = ToolRuntime::builder()
            .mode(PresentationMode::Code)
            .extension(lang.code_mode())
            .build()
            .unwrap();
        let plugin = rt.scope();
        let _regs: Vec<Registration> = three()
            .into_iter()
            .map(|d| plugin.register(d).unwrap())
            .collect();
        assert_eq!(rt.assemble(plugin.key()).unwrap(), full, "{lang:?}");
    }
}

#[test]
fn the_default_shows_the_full_sdk_of_a_large_catalog_with_a_warning_and_auto_indexes_it() {
    let assemble = |discovery: Option<Discovery>| {
        let mode = match discovery {
            Some(discovery) => Lang::TypeScript.code_mode().discovery(discovery),
            None => Lang::TypeScript.code_mode(),
        };
        let rt = ToolRuntime::builder()
            .mode(PresentationMode::Code)
            .extension(mode)
            .build()
            .unwrap();
        let plugin = rt.scope();
        let _regs: Vec<Registration> = large_catalog()
            .into_iter()
            .map(|d| plugin.register(d).unwrap())
            .collect();
        let recorder = Recorder::default();
        let assembly = tracing::subscriber::with_default(recorder.clone(), || {
            rt.assemble(plugin.key()).unwrap()
        });
        let warnings: Vec<String> = recorder
            .events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["level"] == "WARN")
            .map(|e| e["message"].clone())
            .collect();
        (assembly, warnings)
    };
    // The contract's behaviour by default: the full SDK, and a warning that says what to do.
    let (full, warnings) = assemble(None);
    assert_eq!(full.tool_names(), ["run_code"]);
    let bytes = full.section("tools:sdk").unwrap().text.len();
    assert!(bytes > tools_code::DEFAULT_DISCOVERY_ABOVE_BYTES);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("Discovery::auto()") && warnings[0].contains(&bytes.to_string()),
        "{warnings:?}"
    );
    // `Discovery::auto()` indexes it, without a warning.
    let (assembly, warnings) = assemble(Some(Discovery::auto()));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(assembly.tool_names(), ["describe_tools", "run_code"]);
    let sdk = &assembly.section("tools:sdk").unwrap().text;
    assert!(
        sdk.contains("// weather (40): weather_forecast, weather_op_01,"),
        "{sdk}"
    );
    assert!(
        assembly
            .section("tools:code-only")
            .unwrap()
            .text
            .contains("Only `run_code` and `describe_tools` can be called directly.")
    );
}

fn describe(args: Value) -> ToolCall {
    ToolCall::new("d1", "describe_tools", args)
}

#[tokio::test]
async fn describe_tools_names_unknown_names_queries_and_limits() {
    let (rt, _plugin, _regs) = runtime(
        Lang::TypeScript,
        PresentationMode::Code,
        Discovery::Always,
        large_catalog(),
    );
    // Names, in the order given; a repeat is described once; an unknown name gets the closest.
    let result = rt
        .execute(describe(
            json!({"names": ["fs_op_02", "db_op_01", "fs_op_02", "weather_forcast"]}),
        ))
        .await;
    let value = result.value().unwrap();
    assert_eq!(value["tools"], json!(["fs_op_02", "db_op_01"]));
    assert_eq!(
        value["unknown"],
        json!([{"name": "weather_forcast", "closest": ["weather_forecast", "weather_op_01", "weather_op_02"]}])
    );
    let text = result.text();
    assert!(
        text.starts_with("```typescript\n/** The argument object"),
        "{text}"
    );
    assert!(text.contains(
        "  fs_op_02(args: ToolArgsMap[\"fs_op_02\"]): Promise<ToolOutputMap[\"fs_op_02\"]>;"
    ));
    assert!(text.ends_with(
        "```\nNo tool of the SDK is named `weather_forcast`; the closest: `weather_forecast`, `weather_op_01`, `weather_op_02`."
    ), "{text}");
    // Byte-stable.
    let again = rt
        .execute(describe(
            json!({"names": ["fs_op_02", "db_op_01", "fs_op_02", "weather_forcast"]}),
        ))
        .await;
    assert_eq!(again.text(), text);

    // A query: the best match first; `limit` bounds the query's share.
    let result = rt
        .execute(describe(
            json!({"query": "forecast for a city", "limit": 1}),
        ))
        .await;
    assert_eq!(
        result.value().unwrap()["tools"],
        json!(["weather_forecast"])
    );
    let result = rt
        .execute(describe(
            json!({"query": "issue of the repository", "limit": 3}),
        ))
        .await;
    assert_eq!(
        result.value().unwrap()["tools"],
        json!(["github_op_00", "github_op_01", "github_op_02"])
    );
    // Names and a query: the names first, the query's matches after, without repeats.
    let result = rt
        .execute(describe(
            json!({"names": ["github_op_01"], "query": "repository issue", "limit": 2}),
        ))
        .await;
    assert_eq!(
        result.value().unwrap()["tools"],
        json!(["github_op_01", "github_op_00", "github_op_02"])
    );
    // Nothing matches.
    let result = rt.execute(describe(json!({"query": "zebra"}))).await;
    assert_eq!(
        result.text(),
        "No tool matched. Try other words in `query`, or exact names from the index in `names`."
    );
    // Nothing asked.
    for args in [json!({}), json!({"names": [], "query": "  "})] {
        let result = rt.execute(describe(args)).await;
        assert_eq!(result.code(), Some(tools_code::DESCRIBE_TOOLS_EMPTY));
        assert_eq!(
            result.text(),
            "Error: describe_tools needs `names` (exact tool names from the index), `query` (a \
             few words about what you need), or both"
        );
    }
    // Bounds are the schema's.
    let result = rt.execute(describe(json!({"names": vec!["x"; 51]}))).await;
    assert_eq!(result.code(), Some(codes::INVALID_ARGS));
    let result = rt
        .execute(describe(json!({"query": "x", "limit": 0})))
        .await;
    assert_eq!(result.code(), Some(codes::INVALID_ARGS));
}

#[tokio::test]
async fn describe_tools_describes_only_the_scopes_sdk() {
    let mut defs = three();
    defs.push(
        ToolDefinition::builder("ask_user")
            .description("Ask the person at the keyboard.")
            .input_schema(json!({"type": "object"}))
            .output(Output::json(json!({"type": "string"})))
            .callers(Callers::Direct)
            .execute(|_args, _ctx| async { Ok(json!("yes")) })
            .build()
            .unwrap(),
    );
    let (rt, plugin, _regs) = runtime(
        Lang::TypeScript,
        PresentationMode::Both,
        Discovery::Always,
        defs,
    );
    let agent = plugin.agent();
    let _mask = agent.restrict(ToolFilter::deny(["search"])).unwrap();
    let call = describe(json!({"names": ["add", "search", "ask_user"]})).with_agent(agent.key());
    let result = rt.execute(call).await;
    let value = result.value().unwrap();
    assert_eq!(value["tools"], json!(["add"]));
    let unknown: Vec<&str> = value["unknown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(unknown, ["search", "ask_user"]);
    // The global scope still sees `search`.
    let result = rt.execute(describe(json!({"names": ["search"]}))).await;
    assert_eq!(result.value().unwrap()["tools"], json!(["search"]));
}

#[tokio::test]
async fn describe_tools_exists_only_with_code_mode_and_discovery_and_is_reserved() {
    // Native: unknown.
    let (rt, plugin, _regs) = runtime(
        Lang::TypeScript,
        PresentationMode::Native,
        Discovery::Always,
        three(),
    );
    let result = rt.execute(describe(json!({"names": ["add"]}))).await;
    assert_eq!(result.code(), Some(codes::UNKNOWN_TOOL));
    // Reserved whatever the mode.
    let err = plugin
        .register(filler("describe_tools", "Mine."))
        .unwrap_err();
    assert_eq!(err.code(), "RESERVED_NAME");
    assert_eq!(
        plugin.reserve("describe_tools").unwrap_err().code(),
        "RESERVED_NAME"
    );
    // `Never`: no such tool, even under `code`.
    let (rt, _plugin, _regs) = runtime(
        Lang::TypeScript,
        PresentationMode::Code,
        Discovery::Never,
        three(),
    );
    let result = rt.execute(describe(json!({"names": ["add"]}))).await;
    assert_eq!(result.code(), Some(codes::UNKNOWN_TOOL));
    // A program does not see it.
    let (rt, _plugin, _regs) = runtime(
        Lang::TypeScript,
        PresentationMode::Code,
        Discovery::Always,
        three(),
    );
    let args =
        json!({"code": "return typeof (tools as any).describe_tools;", "description": "look"});
    let result = rt.execute(ToolCall::new("c", "run_code", args)).await;
    assert_eq!(result.text(), "undefined");
}

/// One end-to-end turn: the prompt is an index; the model asks `describe_tools`, reads its
/// answer, and writes a program against it that calls the discovered tool.
async fn discover_and_call(lang: Lang) {
    let (rt, plugin, _regs) = runtime(
        lang,
        PresentationMode::Code,
        Discovery::Auto { above_bytes: 4096 },
        large_catalog(),
    );
    let language = lang.language();
    let assembly = rt.assemble(plugin.key()).unwrap();
    assert_eq!(assembly.tool_names(), ["describe_tools", "run_code"]);
    let index = assembly.section("tools:sdk").unwrap().text.to_string();
    assert!(index.contains("weather_forecast"), "{index}");
    assert!(!index.contains("city"), "the index has no types");

    // The model's first call.
    let found = rt
        .execute(describe(
            json!({"query": "weather forecast for a city", "limit": 2}),
        ))
        .await;
    assert!(!found.is_error(), "{}", found.text());
    let value = found.value().unwrap();
    assert_eq!(value["tools"][0], json!("weather_forecast"));
    let answer = found.text();
    // What the model reads goes into its context; the program it writes is checked against
    // the declarations in it.
    let declarations = value["declarations"].as_str().unwrap();
    assert!(answer.contains(declarations));
    let fence = format!("```{}\n", language.name());
    let index_code = index
        .split(&fence)
        .nth(1)
        .unwrap()
        .trim_end_matches("```\n");

    let dir = tempfile::tempdir().unwrap();
    let (program, result) = match lang {
        Lang::TypeScript => {
            let program = "const f = await tools.weather_forecast({ city: \"Oslo\", days: 2 });\n\
                           return f.city + \": \" + f.days.join(\", \");";
            let file = format!(
                "{index_code}\n{declarations}\nexport async function main(): Promise<string> {{\n{program}\n}}\n"
            );
            std::fs::write(dir.path().join("turn.ts"), file).unwrap();
            run_tsc(dir.path(), &["turn.ts".to_owned()]);
            (program, "Oslo: day 1: sunny, day 2: sunny")
        }
        Lang::Python => {
            let program = "f = await tools.weather_forecast({'city': 'Oslo', 'days': 2})\n\
                           return f['city'] + ': ' + ', '.join(f['days'])";
            let body: String = program.lines().map(|l| format!("    {l}\n")).collect();
            let file = format!("{index_code}\n{declarations}\n\nasync def main() -> str:\n{body}");
            std::fs::write(dir.path().join("turn.py"), file).unwrap();
            run_mypy(dir.path(), &["turn.py".to_owned()]);
            (program, "Oslo: day 1: sunny, day 2: sunny")
        }
    };
    let args = json!({"code": program, "description": "the forecast"});
    let ran = rt.execute(ToolCall::new("c2", "run_code", args)).await;
    assert_eq!(ran.text(), result, "{lang:?}");
}

#[tokio::test]
async fn a_typescript_turn_discovers_a_tool_and_calls_it() {
    discover_and_call(Lang::TypeScript).await;
}

#[tokio::test]
async fn a_python_turn_discovers_a_tool_and_calls_it() {
    discover_and_call(Lang::Python).await;
}
