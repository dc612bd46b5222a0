//! The token accounting: counts of known texts, totals that add up, Code Mode counted as
//! `tools-code` sends it, the `mcp` row counting what a server sent, the marks on figures that
//! say less, the bottom line, and the CLI's `stats` report.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use tools_codegen::stats::{CodeForm, Counter, Detail, Encoding, SentEntries, stats, stats_sent};
use tools_codegen::{
    Catalog, CatalogEntry, Language, code_only_text, describe_tools_definition, index_section,
    run_code_definition, sdk_section,
};
use tools_dialects::{Class, Dialect, Policy, project};

fn example() -> Catalog {
    Catalog::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/catalog.json"),
    )
    .unwrap()
}

fn o200k(text: &str) -> usize {
    Counter::get()
        .unwrap()
        .count(Encoding::O200kBase, text, "t")
        .unwrap()
}

/// The index of `dialect` in [`Dialect::ALL`].
fn at(dialect: Dialect) -> usize {
    Dialect::ALL.iter().position(|d| *d == dialect).unwrap()
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
    assert_eq!(o200k("hello world"), 2);
    assert_eq!(o200k(""), 0);
    // The two encodings differ on ordinary text.
    let text = "日本語のテキストをトークンに分割するとき、新しい語彙は短くなる。";
    assert_ne!(
        counter.count(Encoding::Cl100kBase, text, "t").unwrap(),
        o200k(text)
    );
    // Loaded once: the same encoders every time.
    assert!(std::ptr::eq(counter, Counter::get().unwrap()));
}

#[test]
fn per_tool_counts_add_up_and_code_mode_counts_what_tools_code_sends() {
    let catalog = example();
    let report = stats(&catalog).unwrap();
    assert_eq!(report.tools.len(), catalog.tools().len());
    for (index, dialect) in Dialect::ALL.into_iter().enumerate() {
        for e in 0..2 {
            let sum: usize = report
                .tools
                .iter()
                .map(|t| t.native[index].tokens.unwrap()[e])
                .sum();
            assert_eq!(report.native_total[index][e], sum, "{dialect}");
        }
        // One tool recounted by hand: its definition as compact JSON.
        let tool = &catalog.tools()[0];
        let definition = project(tool, dialect, Policy::NonStrict)
            .unwrap()
            .definition;
        assert_eq!(
            report.tools[0].native[index].tokens.unwrap()[0],
            o200k(&definition.to_string())
        );
    }
    assert_eq!(report.code.len(), 4);
    let mcp = at(Dialect::Mcp);
    for code in &report.code {
        let language = code.language;
        let (sections, own) = match code.form {
            CodeForm::FullSdk => (
                format!(
                    "{}{}",
                    code_only_text(false),
                    sdk_section(&catalog, language)
                ),
                vec![run_code_definition(language)],
            ),
            CodeForm::Index => (
                format!(
                    "{}{}",
                    code_only_text(true),
                    index_section(&catalog, language)
                ),
                vec![
                    run_code_definition(language),
                    describe_tools_definition(language),
                ],
            ),
        };
        assert_eq!(code.sections[0], o200k(&sections), "{}", code.label());
        let definitions: usize = own
            .iter()
            .map(|d| {
                let definition = project(&d.to_tool_schema(), Dialect::Mcp, Policy::Error)
                    .unwrap()
                    .definition;
                o200k(&definition.to_string())
            })
            .sum();
        assert_eq!(code.definitions[mcp][0], definitions);
        assert_eq!(code.total(mcp)[0], code.sections[0] + definitions);
    }
    // Every type of the example's SDK says what its schema says.
    assert_eq!(report.code_degradations, 0);
}

/// A `tools/list` result as a server sends it: title, annotations and `_meta` beside the four
/// fields a catalog keeps.
const SENT: &str = r#"{"tools": [{"name": "get", "title": "Get a page", "description": "Fetch a page.",
  "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
  "annotations": {"readOnlyHint": true, "openWorldHint": true},
  "_meta": {"example.com/owner": "web team", "example.com/cost": 3}}]}"#;

#[test]
fn the_mcp_row_counts_every_key_a_server_sent() {
    let catalog = Catalog::from_json_str(SENT, None).unwrap();
    let sent = SentEntries::from_json_str(SENT);
    assert_eq!(sent.len(), 1);
    let mcp = at(Dialect::Mcp);
    let full = stats_sent(&catalog, &sent).unwrap();
    let entry: Value = serde_json::from_str(SENT).unwrap();
    let expected = o200k(&entry["tools"][0].to_string());
    assert_eq!(full.native_total[mcp][0], expected);
    assert!(full.mcp_as_sent);
    assert_eq!(full.mcp_extra_keys, ["_meta", "annotations", "title"]);
    // A catalog alone keeps four fields, and the report says so.
    let four = stats(&catalog).unwrap();
    assert!(four.native_total[mcp][0] < expected);
    assert!(!four.mcp_as_sent);
    let counts = |report: &tools_codegen::stats::Stats| {
        report
            .row_contents()
            .into_iter()
            .find(|(row, _)| row == "native, mcp")
            .unwrap()
            .1
    };
    assert!(
        counts(&full).contains("_meta, annotations and title"),
        "{}",
        counts(&full)
    );
    assert!(
        counts(&four).contains("a catalog keeps no more"),
        "{}",
        counts(&four)
    );
    // Unreadable text gives no entries: the catalog's fields are counted.
    assert!(SentEntries::from_json_str("{").is_empty());
}

/// A tree whose nodes refer to themselves: Gemini's dialect drops the references, so its
/// definition is small because it says less.
fn recursive() -> Catalog {
    Catalog::new(vec![CatalogEntry {
        name: "tree".into(),
        description: "Walks a tree.".into(),
        input_schema: json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "required": ["root"],
            "$defs": {"node": {"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}
        }),
        output_schema: None,
        annotations: None,
    }])
    .unwrap()
}

#[test]
fn figures_that_say_less_are_marked_and_the_bottom_line_names_the_cheapest_exact_one() {
    let report = stats(&recursive()).unwrap();
    let gemini = &report.tools[0].native[at(Dialect::GeminiJsonSchema)];
    assert!(
        gemini
            .lossy
            .iter()
            .any(|f| f.class == Class::Widened && f.path == "#/properties/root/$ref"),
        "{gemini:?}"
    );
    assert!(report.tools[0].native[at(Dialect::Mcp)].lossy.is_empty());
    let rows = report.summary();
    let row = |label: &str| rows.iter().find(|r| r.label == label).unwrap();
    assert!(row("native, gemini-json-schema").marks.lossy);
    assert!(!row("native, anthropic").marks.lossy);
    // The SDK types the reference `unknown`: Code Mode's figures are marked too.
    assert!(row("code, python, full SDK").marks.lossy);
    let bottom = report.bottom_line();
    assert!(
        bottom.starts_with("Cheapest for this catalog: native, gemini-json-schema, ")
            && bottom.contains("cheap partly because it says less")
            && bottom.contains("The cheapest exact presentation is native, anthropic, "),
        "{bottom}"
    );
    let findings = report.to_text(Detail {
        tools: false,
        findings: true,
    });
    assert!(
        findings.contains("\"tree\" in gemini-json-schema (~)")
            && findings.contains("#/properties/root/$ref [widened, outside-subset]"),
        "{findings}"
    );
}

#[test]
fn a_tool_sent_non_strict_is_marked() {
    let catalog = Catalog::new(vec![CatalogEntry {
        name: "overlap".into(),
        description: String::new(),
        input_schema: json!({"type": "object", "properties": {
            "v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}, "required": ["v"]}),
        output_schema: None,
        annotations: None,
    }])
    .unwrap();
    let report = stats(&catalog).unwrap();
    let strict = &report.tools[0].native[at(Dialect::OpenAiChat { strict: true })];
    assert!(strict.non_strict);
    // What is counted is the non-strict definition, and it is exact.
    assert_eq!(
        strict.tokens,
        report.tools[0].native[at(Dialect::OpenAiChat { strict: false })].tokens
    );
    assert!(strict.lossy.is_empty(), "{:?}", strict.lossy);
    let rows = report.summary();
    assert!(rows[0].marks.non_strict && !rows[0].marks.lossy);
    let text = report.to_text(Detail::default());
    assert!(
        text.lines()
            .any(|l| l.starts_with("native, openai-chat-strict") && l.ends_with('*')),
        "{text}"
    );
}

#[test]
fn the_bottom_line_says_whether_code_mode_costs_more_up_front() {
    let small = stats(&example()).unwrap().bottom_line();
    assert!(
        small.contains("Code Mode costs more up front than native in every dialect"),
        "{small}"
    );
    // 300 tools: the index costs less than their definitions.
    let tools: Vec<CatalogEntry> = (0..300)
        .map(|i| {
            let mut tool = example().tools()[i % 5].clone();
            tool.name = format!("group{}_{}_{i}", i / 20, tool.name);
            tool
        })
        .collect();
    let large = stats(&Catalog::new(tools).unwrap()).unwrap().bottom_line();
    assert!(
        large.contains("Code Mode costs less up front than native in every dialect: code, ")
            && large.contains(", index saves "),
        "{large}"
    );
}

#[test]
fn a_refused_definition_is_named_marked_and_left_out_of_the_totals() {
    let mut deep = json!({"type": "string"});
    for _ in 0..300 {
        deep = json!({"type": "array", "items": deep});
    }
    let catalog = Catalog::new(vec![CatalogEntry {
        name: "deep".into(),
        description: String::new(),
        input_schema: json!({"type": "object", "properties": {"a": deep}}),
        output_schema: None,
        annotations: None,
    }])
    .unwrap();
    let report = stats(&catalog).unwrap();
    assert!(report.tools[0].native.iter().all(|c| c.tokens.is_none()));
    assert_eq!(report.native_total, vec![[0, 0]; Dialect::ALL.len()]);
    assert_eq!(report.refused.len(), Dialect::ALL.len());
    assert!(report.summary()[..9].iter().all(|r| r.marks.refused));
    let text = report.to_text(Detail::default());
    assert!(
        text.contains("refused: \"deep\" in openai-chat-strict"),
        "{text}"
    );
    // No native figure is complete, so the bottom line compares none.
    assert!(!report.bottom_line().contains("than native"));
}

#[test]
fn the_reports_fit_100_columns_and_the_json_has_every_figure() {
    let mut tools = example().tools().to_vec();
    tools[0].name = "a_tool_with_a_name_far_longer_than_the_column_for_names".into();
    let report = stats(&Catalog::new(tools).unwrap()).unwrap();
    let text = report.to_text(Detail {
        tools: true,
        findings: true,
    });
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 100, "{widest} columns:\n{text}");
    assert!(text.contains("a_tool_with_a_nam… "), "{text}");
    let json: Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["presentations"].as_array().unwrap().len(), 9 + 4 * 9);
    let first = &json["presentations"][0];
    assert_eq!(first["dialect"], "openai-chat-strict");
    assert_eq!(
        first["tokens"]["o200k_base"],
        json!(report.native_total[0][0])
    );
    assert!(
        json["bottom_line"]
            .as_str()
            .unwrap()
            .starts_with("Cheapest")
    );
    assert!(json["counts"]["native"]["mcp"].is_string());
    let cell = &json["per_tool"][1]["native"]["anthropic-strict"];
    assert!(cell["lossy"].as_array().is_some(), "{cell}");
}

#[test]
fn the_run_code_and_describe_tools_texts_are_one_per_language() {
    let ts = run_code_definition(Language::TypeScript);
    let py = run_code_definition(Language::Python);
    assert!(ts.description.contains("TypeScript") && py.description.contains("Python"));
    assert_eq!(ts.input_schema["required"], json!(["code", "description"]));
    assert_eq!(ts.output_schema, py.output_schema);
    assert_eq!(ts.to_tool_schema().name, "run_code");
    let describe = describe_tools_definition(Language::Python);
    assert_eq!(describe.to_tool_schema().name, "describe_tools");
    assert!(describe.description.contains("Python declarations"));
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
fn the_stats_chapter_figures_are_the_example_catalogs() {
    // The chapter of the crate docs that shows the example catalog's summary (`docs/stats.md`).
    let chapter = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/stats.md"),
    )
    .unwrap();
    let report = stats(&example()).unwrap();
    let range = |row: &tools_codegen::stats::SummaryRow, e: usize| {
        let (low, high) = row.range(e);
        if low == high {
            thousands(low)
        } else {
            format!("{}-{}", thousands(low), thousands(high))
        }
    };
    for row in report.summary() {
        let line = format!(
            "| {} | {} ({}) |",
            row.label,
            range(&row, 0),
            range(&row, 1)
        );
        assert!(
            chapter.contains(&line),
            "docs/stats.md should have the row\n{line}\n(regenerate the table with `tools-codegen stats --catalog examples/catalog.json`)"
        );
    }
    let bottom = report.bottom_line();
    assert!(
        chapter.replace('\n', " ").contains(&bottom),
        "docs/stats.md should quote the bottom line\n{bottom}"
    );
}
