//! Golden snapshots of everything the codegen renders (TypeScript SDK, Python SDK, Markdown
//! docs, usage texts, and the per-construct type table) over the construct fixture, the
//! adversarial fixture and the example catalog; and determinism: any input order gives
//! byte-identical output ending in one newline.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::codegen_support;

use codegen_support::*;
use serde_json::Value;
use std::fmt::Write as _;
use tools_codegen::{
    Language, ParsedCatalog, json_schema_to_py, json_schema_to_ts, render_catalog_markdown,
    render_python, render_sdk, render_typescript, usage_text,
};
use tools_schema::Catalog;

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(true);
    settings.set_omit_expression(true);
    settings
}

#[test]
fn snapshots_of_every_output() {
    let settings = settings();
    settings.bind(|| {
        for (name, catalog) in all_catalogs() {
            if name == "empty" {
                continue;
            }
            insta::assert_snapshot!(format!("{name}_typescript"), render_typescript(&catalog));
            insta::assert_snapshot!(format!("{name}_python"), render_python(&catalog));
            insta::assert_snapshot!(
                format!("{name}_markdown"),
                render_catalog_markdown(&catalog)
            );
        }
        let empty = Catalog::new(Vec::new()).unwrap();
        insta::assert_snapshot!("empty_typescript", render_typescript(&empty));
        insta::assert_snapshot!("empty_python", render_python(&empty));
        insta::assert_snapshot!("empty_markdown", render_catalog_markdown(&empty));
        insta::assert_snapshot!("usage_typescript", usage_text(Language::TypeScript));
        insta::assert_snapshot!("usage_python", usage_text(Language::Python));
    });
}

/// The CLI reads catalog files with `ParsedCatalog`: every fixture renders byte-identically
/// through it and through `Catalog`, so the snapshots above hold for the CLI as well.
#[test]
fn parsed_catalogs_render_the_snapshotted_text() {
    for path in [
        "tests/fixtures/codegen/constructs.json",
        "tests/fixtures/codegen/adversarial.json",
        "examples/catalog.json",
    ] {
        let text = std::fs::read_to_string(repo_root().join(path)).unwrap();
        let parsed = ParsedCatalog::from_json_str(&text, Some(path)).unwrap();
        let catalog = Catalog::from_json_str(&text, Some(path)).unwrap();
        assert!(!parsed.is_empty(), "{path}");
        for language in Language::ALL {
            assert_eq!(
                render_sdk(&parsed, language),
                render_sdk(&catalog, language),
                "{path} {language}"
            );
        }
        assert_eq!(
            render_catalog_markdown(&parsed),
            render_catalog_markdown(&catalog),
            "{path}"
        );
    }
}

/// Every property schema of the construct, adversarial and open-and-untyped fixtures, with the
/// type each standalone renderer gives it: the reading rules, one construct per row.
#[test]
fn snapshot_of_the_per_construct_types() {
    let mut table = String::new();
    for name in ["constructs", "adversarial", "open_and_untyped"] {
        for tool in fixture(name).tools() {
            let Some(Value::Object(properties)) = tool.input_schema.get("properties") else {
                continue;
            };
            if tool.name.starts_with("deep_") || tool.name == "descriptions" || tool.name == "enums"
            {
                continue;
            }
            for (key, schema) in properties {
                writeln!(table, "{}.{key}: {schema}", tool.name).unwrap();
                writeln!(
                    table,
                    "  ts: {}",
                    json_schema_to_ts(schema).replace('\n', "\n      ")
                )
                .unwrap();
                writeln!(table, "  py: {}", json_schema_to_py(schema)).unwrap();
            }
        }
    }
    settings().bind(|| insta::assert_snapshot!("per_construct_types", table));
}

fn reordered(catalog: &Catalog) -> Catalog {
    let mut tools = catalog.tools().to_vec();
    tools.reverse();
    let half = tools.len() / 2;
    tools.rotate_left(half);
    Catalog::new(tools).unwrap()
}

#[test]
fn output_is_byte_identical_for_any_input_order() {
    for (name, catalog) in all_catalogs() {
        let shuffled = reordered(&catalog);
        for language in Language::ALL {
            let a = render_sdk(&catalog, language);
            let b = render_sdk(&shuffled, language);
            assert!(
                a == b,
                "{name} {language}: the order of the input changed the output"
            );
            assert_eq!(
                a,
                render_sdk(&catalog, language),
                "{name} {language}: two renders differ"
            );
            assert!(
                a.ends_with('\n') && !a.ends_with("\n\n"),
                "{name} {language}: not one trailing newline"
            );
        }
        let a = render_catalog_markdown(&catalog);
        assert_eq!(
            a,
            render_catalog_markdown(&shuffled),
            "{name}: docs depend on the input order"
        );
        assert!(a.ends_with('\n') && !a.ends_with("\n\n"));
    }
}

#[test]
fn tools_come_in_lexicographic_order() {
    let catalog = fixture("adversarial");
    let ts = render_typescript(&catalog);
    let section = &ts[ts.find("export interface ToolArgsMap").unwrap()
        ..ts.find("export interface ToolOutputMap").unwrap()];
    let names: Vec<String> = section
        .lines()
        .filter(|l| l.starts_with("  \""))
        .map(|l| serde_json::from_str::<String>(&l[2..l.find("\": ").unwrap() + 1]).unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert_eq!(names.len(), catalog.len());
}

#[test]
fn generated_text_has_no_raw_line_separators_or_control_characters() {
    let catalog = fixture("adversarial");
    for text in [
        render_typescript(&catalog),
        render_python(&catalog),
        render_catalog_markdown(&catalog),
    ] {
        for c in ['\r', '\u{2028}', '\u{2029}', '\u{85}', '\0', '\u{feff}'] {
            assert!(!text.contains(c), "raw {c:?} in the output");
        }
    }
}

#[test]
fn wire_names_are_kept_exactly() {
    let catalog = fixture("adversarial");
    let ts = render_typescript(&catalog);
    let py = render_python(&catalog);
    for key in [
        "_from",
        "__proto__",
        "a-b",
        "a_b",
        "aB",
        "hasOwnProperty",
        "constructor",
    ] {
        assert!(
            ts.contains(&format!("{key}: string;"))
                || ts.contains(&format!("\"{key}\": string;"))
                || ts.contains(&format!("{key}?: string"))
                || ts.contains(&format!("\"{key}\"?: string")),
            "{key} renamed in TypeScript"
        );
        assert!(
            py.contains(&format!("\"{key}\": ")) || py.contains(&format!("    {key}: ")),
            "{key} renamed in Python"
        );
    }
    // A tool named `then` is no member of `tools`, which would make it awaitable.
    let tools_block = &ts[ts.find("export declare const tools").unwrap()..];
    assert!(!tools_block.contains("  then(") && !tools_block.contains("\"then\"(args"));
    assert!(
        ts.contains("  \"then\": {"),
        "the then tool keeps its types"
    );
}
