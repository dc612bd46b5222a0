//! The token accounting: counts of known texts, totals that add up, the run_code definition
//! counted as the registry builds it, and the CLI's `stats` report.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use tools_codegen::stats::{Counter, Encoding, stats};
use tools_codegen::{Catalog, CatalogEntry, Language, run_code_definition, usage_text};
use tools_dialects::{Dialect, Policy, project};

fn example() -> Catalog {
    Catalog::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/catalog.json"),
    )
    .unwrap()
}

#[test]
fn known_texts_have_their_known_token_counts() {
    let counter = Counter::get().unwrap();
    // Token ids from the reference tokenizer: "hello world" is [15339, 1917] in cl100k_base
    // and [24912, 2375] in o200k_base.
    assert_eq!(
        counter
            .count(Encoding::Cl100kBase, "hello world", "t")
            .unwrap(),
        2
    );
    assert_eq!(
        counter
            .count(Encoding::O200kBase, "hello world", "t")
            .unwrap(),
        2
    );
    assert_eq!(counter.count(Encoding::O200kBase, "", "t").unwrap(), 0);
    // The two encodings differ on ordinary text.
    let text = "日本語のテキストをトークンに分割するとき、新しい語彙は短くなる。";
    assert_ne!(
        counter.count(Encoding::Cl100kBase, text, "t").unwrap(),
        counter.count(Encoding::O200kBase, text, "t").unwrap()
    );
    // Loaded once: the same encoders every time.
    assert!(std::ptr::eq(counter, Counter::get().unwrap()));
}

#[test]
fn per_tool_counts_add_up_to_the_totals_and_code_mode_counts_its_three_parts() {
    let catalog = example();
    let report = stats(&catalog).unwrap();
    assert_eq!(report.tools.len(), catalog.tools().len());
    let counter = Counter::get().unwrap();
    for (index, dialect) in Dialect::ALL.into_iter().enumerate() {
        for e in 0..2 {
            let sum: usize = report
                .tools
                .iter()
                .map(|t| t.native[index].unwrap()[e])
                .sum();
            assert_eq!(report.native_total[index][e], sum, "{dialect}");
        }
        // One tool recounted by hand: its definition as compact JSON.
        let tool = &catalog.tools()[0];
        let definition = project(tool, dialect, Policy::NonStrict)
            .unwrap()
            .definition;
        let expected = counter
            .count(Encoding::O200kBase, &definition.to_string(), "t")
            .unwrap();
        assert_eq!(report.tools[0].native[index].unwrap()[0], expected);
    }
    for mode in &report.code_mode {
        let usage = counter
            .count(Encoding::O200kBase, &usage_text(mode.language), "t")
            .unwrap();
        assert_eq!(mode.instructions[0], usage);
        let run_code = run_code_definition(mode.language).to_tool_schema();
        let definition = project(&run_code, Dialect::Mcp, Policy::Error)
            .unwrap()
            .definition;
        let expected = counter
            .count(Encoding::O200kBase, &definition.to_string(), "t")
            .unwrap();
        assert_eq!(mode.run_code[8][0], expected);
        assert_eq!(
            mode.total(8)[0],
            mode.sdk[0] + mode.instructions[0] + expected
        );
        assert!(mode.sdk[0] > 100);
    }
    let text = report.to_text();
    assert!(
        text.contains("native total (cl100k_base)") && text.contains("approximations"),
        "{text}"
    );
    assert!(text.contains("Code Mode, python"), "{text}");
}

#[test]
fn a_refused_definition_is_named_and_left_out_of_the_totals() {
    let mut deep = json!({"type": "string"});
    for _ in 0..300 {
        deep = json!({"type": "array", "items": deep});
    }
    let catalog = Catalog::new(vec![CatalogEntry {
        name: "deep".into(),
        description: String::new(),
        input_schema: json!({"type": "object", "properties": {"a": deep}}),
        output_schema: None,
    }])
    .unwrap();
    let report = stats(&catalog).unwrap();
    assert!(report.tools[0].native.iter().all(Option::is_none));
    assert_eq!(report.native_total, vec![[0, 0]; Dialect::ALL.len()]);
    assert_eq!(report.refused.len(), Dialect::ALL.len());
    assert!(
        report
            .to_text()
            .contains("refused: \"deep\" in openai-chat-strict")
    );
}

#[test]
fn the_run_code_text_is_one_per_language() {
    let ts = run_code_definition(Language::TypeScript);
    let py = run_code_definition(Language::Python);
    assert!(ts.description.contains("TypeScript") && py.description.contains("Python"));
    assert_eq!(ts.input_schema["required"], json!(["code", "description"]));
    assert_eq!(ts.output_schema, py.output_schema);
    assert_eq!(ts.to_tool_schema().name, "run_code");
}

/// `1,335`
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn the_readme_figures_are_the_example_catalogs() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
    )
    .unwrap();
    let report = stats(&example()).unwrap();
    let labels = [
        "OpenAI Chat, strict",
        "OpenAI Chat",
        "OpenAI Responses, strict",
        "OpenAI Responses",
        "Anthropic, strict",
        "Anthropic",
        "Gemini `parameters`",
        "Gemini `parametersJsonSchema`",
        "MCP (with output schemas)",
    ];
    let pair = |t: [usize; 2]| format!("{} ({})", thousands(t[0]), thousands(t[1]));
    for (index, label) in labels.iter().enumerate() {
        let row = format!(
            "| {label} | {} | {} | {} |",
            pair(report.native_total[index]),
            pair(report.code_mode[0].total(index)),
            pair(report.code_mode[1].total(index)),
        );
        assert!(
            readme.contains(&row),
            "README.md should have the row\n{row}\n(regenerate the table with `tools-codegen stats --catalog examples/catalog.json`)"
        );
    }
}
