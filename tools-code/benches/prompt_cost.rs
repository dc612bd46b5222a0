//! What each presentation costs in the prompt, in tokens and in bytes, for the example catalog
//! (`examples/catalog.json`, 5 tools) and a 1,000-tool catalog made from it (50 prefixes of 20
//! tools each, every tool one of the five example schemas under a new name), per code language:
//!
//! - **native**: the tool definitions a `native` assembly offers (each as compact JSON: name,
//!   description, input and output schema), summed; and **native-input**, the same without
//!   the output schemas (some providers' function definitions carry none);
//! - **code, full SDK**: a `code` assembly without discovery: the `run_code` definition plus
//!   the `tools:code-only` and `tools:sdk` sections;
//! - **code, index**: a `code` assembly with `Discovery::Always`: the `run_code` and
//!   `describe_tools` definitions plus both sections, the SDK section being the index;
//! - **describe 3**: what one `describe_tools` answer for three tools adds when the model asks
//!   (the text it reads).
//!
//! Each figure is counted on exactly the text a request would carry: in tokens of
//! `o200k_base` (the tokenizer of OpenAI's current models, counted offline with the
//! `tools-codegen` `stats` counter; other providers' tokenizers differ, so read those as an
//! approximation for them), and in UTF-8 bytes. The bench also prints how long a first
//! (rendering) assembly of the 1,000 tools takes, full SDK and index. Run it with
//! `cargo bench -p tools-runtime --bench prompt_cost`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Instant;

use serde_json::{Value, json};
use tools_code::{CodeMode, Discovery, PythonRuntime, TypeScriptRuntime};
use tools_codegen::stats::{Counter, Encoding};
use tools_runtime::presentation::Assembly;
use tools_runtime::{
    Output, PresentationMode, Registration, ToolCall, ToolDefinition, ToolRuntime,
};

/// The example catalog's tools: (name, description, input schema, output schema).
fn example() -> Vec<(String, String, Value, Value)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/catalog.json");
    let text = std::fs::read_to_string(path).unwrap();
    let catalog: Value = serde_json::from_str(&text).unwrap();
    catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["description"].as_str().unwrap().to_owned(),
                t["inputSchema"].clone(),
                t.get("outputSchema").cloned().unwrap_or(json!({})),
            )
        })
        .collect()
}

/// 1,000 tools: 50 prefixes, 20 tools each, cycling through the example's schemas.
fn thousand() -> Vec<(String, String, Value, Value)> {
    let base = example();
    let mut out = Vec::with_capacity(1000);
    for p in 0..50 {
        for i in 0..20 {
            let (name, description, input, output) = &base[(p * 20 + i) % base.len()];
            let stem = name.replace('-', "_");
            out.push((
                format!("svc{p:02}_{stem}_{i:02}"),
                format!("{description} (service {p}, variant {i})"),
                input.clone(),
                output.clone(),
            ));
        }
    }
    out
}

/// A raw definition of the tool. An output schema outside the enforced subset (the example's
/// `web-fetch` has one) is replaced by `{}`, any JSON value: the figures then count that tool's
/// output as `{}` in every presentation alike.
fn definition(tool: &(String, String, Value, Value)) -> ToolDefinition {
    let (name, description, input, output) = tool;
    let build = |output: &Value| {
        ToolDefinition::raw(name.clone())
            .description(description.clone())
            .input_schema(input.clone())
            .output(Output::json(output.clone()))
            .execute(|_args, _ctx| async { Ok(json!(null)) })
            .build()
    };
    build(output).or_else(|_| build(&json!({}))).unwrap()
}

fn runtime(
    code: CodeMode,
    mode: PresentationMode,
    discovery: Discovery,
    tools: &[(String, String, Value, Value)],
) -> (ToolRuntime, tools_runtime::Scope, Vec<Registration>) {
    let rt = ToolRuntime::builder()
        .mode(mode)
        .extension(code.discovery(discovery))
        .build()
        .unwrap();
    let plugin = rt.scope();
    let regs = tools
        .iter()
        .map(|t| plugin.register(definition(t)).unwrap())
        .collect();
    (rt, plugin, regs)
}

/// The bytes of an assembly: each definition as compact JSON, and each section's text.
fn bytes(assembly: &Assembly) -> usize {
    let tools: usize = assembly
        .tools
        .iter()
        .map(|t| serde_json::to_string(&**t).unwrap().len())
        .sum();
    let sections: usize = assembly.sections.iter().map(|s| s.text.len()).sum();
    tools + sections
}

/// The `o200k_base` tokens of an assembly: each definition as compact JSON, and each section's
/// text.
fn tokens(assembly: &Assembly) -> usize {
    let counter = Counter::get().unwrap();
    let count = |text: &str| counter.count(Encoding::O200kBase, text, "bench").unwrap();
    let tools: usize = assembly
        .tools
        .iter()
        .map(|t| count(&serde_json::to_string(&**t).unwrap()))
        .sum();
    let sections: usize = assembly.sections.iter().map(|s| count(&s.text)).sum();
    tools + sections
}

/// The tokens and bytes of one row.
struct Figures {
    native: (usize, usize),
    full: (usize, usize),
    index: (usize, usize),
    describe: (usize, usize),
}

fn row(label: &str, tools: &[(String, String, Value, Value)], code: fn() -> CodeMode) -> Figures {
    let (native_rt, native_plugin, _r0) =
        runtime(code(), PresentationMode::Native, Discovery::Never, tools);
    let native_assembly = native_rt.assemble(native_plugin.key()).unwrap();
    let native = bytes(&native_assembly);
    // Without the output schemas, which some providers' function definitions do not carry.
    let native_inputs: usize = native_assembly
        .tools
        .iter()
        .map(|t| {
            let mut entry = serde_json::to_value(&**t).unwrap();
            if let Some(map) = entry.as_object_mut() {
                map.remove("outputSchema");
            }
            serde_json::to_string(&entry).unwrap().len()
        })
        .sum();

    let (full_rt, full_plugin, _r1) =
        runtime(code(), PresentationMode::Code, Discovery::Never, tools);
    let started = Instant::now();
    let full_assembly = full_rt.assemble(full_plugin.key()).unwrap();
    let full_time = started.elapsed();
    let full = bytes(&full_assembly);

    let (index_rt, index_plugin, _r2) =
        runtime(code(), PresentationMode::Code, Discovery::Always, tools);
    let started = Instant::now();
    let index_assembly = index_rt.assemble(index_plugin.key()).unwrap();
    let index_time = started.elapsed();
    let index = bytes(&index_assembly);

    let names: Vec<&str> = tools.iter().take(3).map(|t| t.0.as_str()).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let answer = runtime.block_on(index_rt.execute(ToolCall::new(
        "d",
        "describe_tools",
        json!({"names": names}),
    )));
    assert!(!answer.is_error(), "{}", answer.text());
    let describe = answer.text().len();
    let describe_tokens = Counter::get()
        .unwrap()
        .count(Encoding::O200kBase, &answer.text(), "describe")
        .unwrap();

    println!(
        "{label:<24} {:>6} {native:>9} {native_inputs:>12} {full:>15} {index:>12} {describe:>11}   {:>8.2} {:>8.2}",
        tools.len(),
        full_time.as_secs_f64() * 1e3,
        index_time.as_secs_f64() * 1e3,
    );
    Figures {
        native: (tokens(&native_assembly), native),
        full: (tokens(&full_assembly), full),
        index: (tokens(&index_assembly), index),
        describe: (describe_tokens, describe),
    }
}

fn main() {
    // `cargo bench` passes `--bench`; any filter argument is ignored (one table).
    println!("Prompt cost in BYTES (UTF-8)");
    println!(
        "{:<24} {:>6} {:>9} {:>12} {:>15} {:>12} {:>11}   {:>8} {:>8}",
        "catalog / language",
        "tools",
        "native",
        "native-input",
        "code: full SDK",
        "code: index",
        "describe 3",
        "full ms",
        "index ms"
    );
    let ts = || CodeMode::new(TypeScriptRuntime::new());
    let py = || CodeMode::new(PythonRuntime::new());
    let example = example();
    let thousand = thousand();
    let rows = [
        (
            "example / typescript",
            row("example / typescript", &example, ts),
        ),
        ("example / python", row("example / python", &example, py)),
        (
            "1,000 tools / typescript",
            row("1,000 tools / typescript", &thousand, ts),
        ),
        (
            "1,000 tools / python",
            row("1,000 tools / python", &thousand, py),
        ),
    ];
    println!(
        "(native: the definitions as compact JSON; native-input: the same without output schemas; code: run_code (and describe_tools) plus the \
         tools:code-only and tools:sdk sections; describe 3: one describe_tools answer for three \
         tools; ms: a first, rendering assembly; web-fetch's output schema, outside the enforced \
         subset, counts as {{}})"
    );
    println!();
    println!(
        "Prompt cost in TOKENS (o200k_base; an approximation for other providers' tokenizers)"
    );
    println!(
        "{:<24} {:>9} {:>15} {:>12} {:>11}   (bytes per token: native / full SDK)",
        "catalog / language", "native", "code: full SDK", "code: index", "describe 3"
    );
    for (label, f) in &rows {
        #[allow(clippy::cast_precision_loss)]
        let ratio = |(tokens, bytes): (usize, usize)| bytes as f64 / tokens.max(1) as f64;
        println!(
            "{label:<24} {:>9} {:>15} {:>12} {:>11}   {:.2} / {:.2}",
            f.native.0,
            f.full.0,
            f.index.0,
            f.describe.0,
            ratio(f.native),
            ratio(f.full)
        );
    }
}
