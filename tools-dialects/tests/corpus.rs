//! Every schema of the corpora the other crates' tests use (the macro gallery, the codegen
//! fixtures, the example catalog), through every projection under every policy: nothing
//! panics, every finding has a path, every output is accepted by the checker written from the
//! providers' documentation, and the round trip canonical value -> provider shape -> decoder
//! gives the canonical value back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::support;

use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::Value;
use support::{arb_schema, arb_value_for, corpora};
use tools_dialects::{Class, Dialect, DialectError, Policy, check, project, project_request};
use tools_schema::{CatalogEntry, Schema, deep};

#[test]
fn every_corpus_tool_projects_into_every_dialect_and_passes_the_checker() {
    let mut projected = 0;
    for (corpus, tools) in corpora() {
        for dialect in Dialect::ALL {
            for policy in [Policy::Warn, Policy::NonStrict, Policy::Error] {
                // One tool at a time: the per-request limits are a test of their own.
                for tool in &tools {
                    let request = match project_request(std::slice::from_ref(tool), dialect, policy)
                    {
                        Ok(request) => request,
                        Err(DialectError::Unrepresentable { .. }) if policy == Policy::Error => {
                            continue;
                        }
                        Err(DialectError::Limit { .. }) if policy != Policy::NonStrict => continue,
                        Err(error) => panic!("{corpus}/{}: {dialect}: {error}", tool.name),
                    };
                    let projection = &request.tools[0];
                    for finding in &projection.findings {
                        assert!(
                            finding.path.starts_with('#'),
                            "{corpus}/{}: {dialect}: a finding without a path: {finding}",
                            tool.name
                        );
                        assert!(
                            tools_dialects::rules::rule(finding.rule).is_some(),
                            "{finding}"
                        );
                    }
                    if policy == Policy::NonStrict && dialect.is_strict() {
                        let unrepresentable = projection
                            .findings
                            .iter()
                            .any(|f| f.class == Class::Unrepresentable);
                        assert_eq!(
                            projection.sent.is_strict(),
                            !unrepresentable && projection.sent == dialect,
                            "{}",
                            tool.name
                        );
                    }
                    let violations = check::check(projection.sent, &projection.definition);
                    let best_effort = projection.sent == dialect
                        && projection
                            .findings
                            .iter()
                            .any(|f| f.class == Class::Unrepresentable);
                    if best_effort {
                        // Policy::Warn (or a dialect without a non-strict form) sends what it
                        // can; that the checker may refuse it is what the finding says.
                        projected += 1;
                        continue;
                    }
                    assert!(
                        violations.is_empty(),
                        "{corpus}/{}: {}: {violations:#?}\n{}",
                        tool.name,
                        projection.sent,
                        serde_json::to_string_pretty(&projection.definition).unwrap()
                    );
                    projected += 1;
                }
            }
        }
    }
    assert!(projected > 1000, "{projected}");
}

/// The projections of one canonical schema in the dialects that reshape.
const RESHAPING: [Dialect; 5] = [
    Dialect::OpenAiChat { strict: true },
    Dialect::OpenAiResponses { strict: true },
    Dialect::Anthropic { strict: true },
    Dialect::GeminiParameters,
    Dialect::GeminiJsonSchema,
];

fn round_trip(label: &str, schema: &Schema, cases: u32) {
    let tool = CatalogEntry {
        name: "t".into(),
        description: String::new(),
        input_schema: schema.to_json(),
        output_schema: None,
        annotations: None,
    };
    let validator = tools_schema::Validator::from_schema(schema).unwrap();
    for dialect in RESHAPING {
        let projection = match project(&tool, dialect, Policy::Warn) {
            Ok(p) => p,
            Err(DialectError::Limit { .. }) => continue,
            Err(e) => panic!("{label}: {dialect}: {e}"),
        };
        let lossy = projection
            .findings
            .iter()
            .any(|f| matches!(f.class, Class::Narrowed | Class::Unrepresentable));
        let parameters = tools_dialects::parameters_of(dialect, &projection.definition).unwrap();
        // The provider shape of a value is accepted by the projected schema (Gemini's OpenAPI
        // dialect is not JSON Schema: `nullable` and `format: enum` mean something else there).
        let provider = (dialect != Dialect::GeminiParameters)
            .then(|| jsonschema::validator_for(parameters).unwrap());
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&arb_value_for(schema), |value| {
            // Providers send arguments as objects.
            if !validator.is_valid(&value) || !value.is_object() {
                return Err(TestCaseError::reject("the generator missed a constraint"));
            }
            let sent = match projection.decoder.encode(&value) {
                Ok(sent) => sent,
                Err(error) => {
                    if lossy {
                        return Ok(());
                    }
                    return Err(TestCaseError::fail(format!(
                        "{error} without a narrowing finding"
                    )));
                }
            };
            if let Some(provider) = &provider
                && !provider.is_valid(&sent)
            {
                return Err(TestCaseError::fail(format!(
                    "the provider's schema refuses {sent} (from {value})"
                )));
            }
            let back = projection
                .decoder
                .decode(sent.clone())
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            if !deep::values_equal(&back, &value) {
                return Err(TestCaseError::fail(format!("{value} -> {sent} -> {back}")));
            }
            Ok(())
        });
        match result {
            Ok(()) => {}
            Err(proptest::test_runner::TestError::Abort(_)) => {}
            Err(e) => panic!(
                "{label}: {dialect}: {e}\n{}",
                serde_json::to_string_pretty(parameters).unwrap()
            ),
        }
    }
}

#[test]
fn canonical_values_survive_every_reshaping_of_every_corpus_schema() {
    let mut checked = 0;
    for (corpus, tools) in corpora() {
        for tool in tools {
            let input = if tool.input_schema.is_null() {
                tools_schema::no_arguments()
            } else {
                tool.input_schema.clone()
            };
            // Only schemas inside the subset are canonical; values of schemas nested past 12
            // levels would grow with the power of the depth (the deep ones are covered above).
            if deep::deeper_than(&input, 24) {
                continue;
            }
            let Ok(schema) = Schema::from_json(&input) else {
                continue;
            };
            round_trip(&format!("{corpus}/{}", tool.name), &schema, 32);
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked}");
}

#[test]
fn canonical_values_survive_every_reshaping_of_generated_schemas() {
    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&arb_schema(), |schema| {
            let root = Schema::parameters(vec![("p".into(), schema)], Vec::new());
            round_trip("generated", &root, 8);
            Ok(())
        })
        .unwrap();
}

#[test]
fn every_projection_of_a_hostile_catalog_checks_after_name_projection() {
    let mut tools: Vec<CatalogEntry> = Vec::new();
    for name in [
        "",
        " ",
        "a b",
        "a/b",
        "ns:tool",
        "x.y:z",
        "café",
        "日本語",
        "1st",
        "-x",
        &"n".repeat(100),
    ] {
        tools.push(CatalogEntry {
            name: name.to_owned(),
            description: String::new(),
            input_schema: Value::Null,
            output_schema: None,
            annotations: None,
        });
    }
    for dialect in Dialect::ALL {
        let request = project_request(&tools, dialect, Policy::Warn).unwrap();
        for projection in &request.tools {
            assert_eq!(
                check::check(projection.sent, &projection.definition),
                Vec::new(),
                "{dialect}"
            );
        }
        let definitions: Vec<Value> = request.tools.iter().map(|p| p.definition.clone()).collect();
        assert_eq!(check::check_request(dialect, &definitions), Vec::new());
        for tool in &tools {
            let sent = request.names.sent(&tool.name).unwrap().to_owned();
            let (original, args) = request.decode_call(&sent, serde_json::json!({})).unwrap();
            assert_eq!(original, tool.name);
            assert_eq!(args, serde_json::json!({}));
        }
    }
}
