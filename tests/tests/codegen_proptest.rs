//! Property: any JSON value used as a schema, anywhere a schema goes, never panics a renderer,
//! and always yields a TypeScript SDK that passes `tsc --strict` and a Python SDK that passes
//! `mypy --strict` (so both certainly parse), plus standalone types that Python's parser
//! accepts. The external checks run once, over every generated case, after the property loop.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::codegen_support;

use codegen_support::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};
use std::cell::RefCell;
use std::process::Command;
use tools_codegen::{
    ParsedCatalog, json_schema_to_py, json_schema_to_ts, render_catalog_markdown, render_python,
    render_typescript,
};
use tools_schema::{Catalog, CatalogEntry};

/// Keys that steer the reader into every branch, plus hostile property names.
const KEYS: &[&str] = &[
    "type",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "enum",
    "const",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "$ref",
    "prefixItems",
    "patternProperties",
    "description",
    "title",
    "format",
    "__proto__",
    "constructor",
    "toString",
    "class",
    "then",
    "None",
    "a-b",
    "",
];
const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "null", "array", "object", "date",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        prop::sample::select(TYPES).prop_map(Value::from),
        "[a-z*/\"'`$\\\\{}\\n\\r\u{2028} ]{0,8}".prop_map(Value::from),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => "[a-zA-Z_$\\- ]{0,5}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &[
                "then",
                "class",
                "constructor",
                "__proto__",
                "a-b",
                "a.b",
                "x"
            ][..]
        )
        .prop_map(str::to_owned),
        "[a-zA-Z0-9_.\\-]{1,10}",
    ]
}

/// A schema value for a catalog root: objects and booleans stay, anything else becomes the
/// schema of a property (where the catalog does not look).
fn rooted(value: Value) -> Value {
    match value {
        Value::Object(_) | Value::Bool(_) => value,
        other => json!({"type": "object", "properties": {"p": other}}),
    }
}

#[test]
fn arbitrary_schemas_render_to_code_that_type_checks() {
    let cases = RefCell::new(Vec::<(String, String, Vec<String>)>::new());
    let mut runner = TestRunner::new(Config {
        cases: 64,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = prop::collection::vec((tool_name(), json_value(), json_value()), 1..4);
    runner
        .run(&strategy, |entries| {
            let mut tools = Vec::new();
            let mut standalone = Vec::new();
            for (name, input, output) in entries {
                if tools.iter().any(|t: &CatalogEntry| t.name == name) {
                    continue;
                }
                // The standalone renderers take any value as it is.
                let ts = json_schema_to_ts(&input);
                prop_assert!(!ts.is_empty());
                standalone.push(json_schema_to_py(&output));
                tools.push(CatalogEntry {
                    name,
                    description: "d */ \"\"\" ${x}".into(),
                    input_schema: rooted(input),
                    output_schema: Some(rooted(output)),
                    annotations: None,
                });
            }
            let catalog = Catalog::new(tools).unwrap();
            let ts = render_typescript(&catalog);
            let py = render_python(&catalog);
            let md = render_catalog_markdown(&catalog);
            prop_assert!(ts.ends_with('\n') && py.ends_with('\n') && md.ends_with('\n'));
            prop_assert!(!ts.contains("template error") && !py.contains("template error"));
            cases.borrow_mut().push((ts, py, standalone));
            Ok(())
        })
        .unwrap();

    let cases = cases.into_inner();
    let dir = tempfile::tempdir().unwrap();
    let mut ts_files = Vec::new();
    let mut py_files = Vec::new();
    let mut standalone = String::from("import ast\nimport sys\n\nfor source in [\n");
    for (i, (ts, py, types)) in cases.iter().enumerate() {
        std::fs::write(dir.path().join(format!("case_{i}.ts")), ts).unwrap();
        std::fs::write(dir.path().join(format!("case_{i}.py")), py).unwrap();
        ts_files.push(format!("case_{i}.ts"));
        py_files.push(format!("case_{i}.py"));
        for ty in types {
            standalone.push_str(&format!("    {},\n", Value::String(format!("T = {ty}"))));
        }
    }
    standalone.push_str("]:\n    ast.parse(source)\nprint('parsed')\n");
    let output = Command::new(python())
        .arg("-c")
        .arg(&standalone)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "a standalone Python type does not parse:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    run_tsc(dir.path(), &ts_files);
    run_mypy(dir.path(), &py_files);
}

/// JSON text for a value, with objects written entry by entry so that keys may repeat, and
/// strings that need escapes.
fn json_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        leaf().prop_map(|v| v.to_string()),
        Just("1.0".to_owned()),
        Just("-0".to_owned()),
        Just("1e400".to_owned()),
        Just("\"\\u00e9\\t\"".to_owned()),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec((key(), inner), 0..6).prop_map(|entries| {
                let entries: Vec<String> = entries
                    .into_iter()
                    .map(|(k, v)| format!("{}: {v}", Value::String(k)))
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }),
        ]
    })
}

/// One tool entry as text: the catalog's keys (sometimes missing, null, repeated or of the
/// wrong kind) and the schemas as arbitrary JSON text.
fn tool_text() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        4 => tool_name().prop_map(|n| Value::String(n).to_string()),
        1 => Just("\"bad name\"".to_owned()),
        1 => Just("7".to_owned()),
    ];
    let description = prop_oneof![
        Just(None),
        Just(Some("null".to_owned())),
        Just(Some("\"Does */ a \\\"thing\\\"\\n\"".to_owned())),
        Just(Some("[]".to_owned())),
    ];
    let schema = prop_oneof![
        4 => json_text().prop_map(|t| format!("{{\"type\": \"object\", \"properties\": {{\"p\": {t}}}}}")),
        2 => json_text(),
        1 => Just("true".to_owned()),
    ];
    let output = prop_oneof![
        Just(None),
        Just(Some("null".to_owned())),
        schema.clone().prop_map(Some)
    ];
    (
        name,
        description,
        prop::option::weighted(0.95, schema),
        output,
        any::<bool>(),
    )
        .prop_map(|(name, description, input, output, repeat)| {
            let mut entries = vec![format!("\"name\": {name}")];
            if let Some(d) = description {
                entries.push(format!("\"description\": {d}"));
            }
            if let Some(input) = input {
                entries.push(format!("\"inputSchema\": {input}"));
            }
            if let Some(output) = output {
                entries.push(format!("\"outputSchema\": {output}"));
            }
            if repeat {
                entries.push("\"description\": \"the last one counts\"".to_owned());
            }
            format!("{{{}}}", entries.join(", "))
        })
}

/// `ParsedCatalog` (the CLI's lean reader) accepts what `Catalog` accepts, fails with the same
/// message, and renders byte-identical SDKs and docs, for arbitrary catalog text: repeated
/// keys, escaped strings, odd numbers, bad names, duplicate tools, wrong kinds.
#[test]
fn parsed_catalogs_render_and_fail_exactly_like_catalogs() {
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (prop::collection::vec(tool_text(), 0..4), any::<bool>());
    runner
        .run(&strategy, |(tools, bare)| {
            let list = format!("[{}]", tools.join(", "));
            let text = if bare {
                list
            } else {
                format!("{{\"tools\": {list}, \"x\": 1}}")
            };
            let parsed = ParsedCatalog::from_json_str(&text, Some("t.json"));
            let catalog = Catalog::from_json_str(&text, Some("t.json"));
            match (parsed, catalog) {
                (Ok(parsed), Ok(catalog)) => {
                    prop_assert_eq!(parsed.len(), catalog.len());
                    prop_assert_eq!(render_typescript(&parsed), render_typescript(&catalog));
                    prop_assert_eq!(render_python(&parsed), render_python(&catalog));
                    prop_assert_eq!(
                        render_catalog_markdown(&parsed),
                        render_catalog_markdown(&catalog)
                    );
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                (a, b) => prop_assert!(false, "{text}: {a:?} but {b:?}"),
            }
            Ok(())
        })
        .unwrap();
}
