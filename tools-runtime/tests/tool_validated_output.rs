//! `Output::tool_validated`: a raw tool publishes an output schema outside the enforced subset
//! and checks its own values; the registry neither compiles nor enforces that schema.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use tools_runtime::{Output, ToolCall, ToolDefinition, ToolRuntime, codes};

fn schema_outside_the_subset() -> serde_json::Value {
    // `$ref` and `patternProperties` are refused by the enforced subset.
    json!({
        "type": "object",
        "$defs": {"n": {"type": "integer"}},
        "properties": {"n": {"$ref": "#/$defs/n"}},
        "patternProperties": {"^x-": {"type": "string"}}
    })
}

#[tokio::test]
async fn a_raw_tool_owns_its_output_validation() {
    let refused = ToolDefinition::raw("strict")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(schema_outside_the_subset()))
        .execute(|_, _| async { Ok(json!({"n": 1})) })
        .build();
    assert_eq!(refused.unwrap_err().code(), "INVALID_OUTPUT_SCHEMA");

    let def = ToolDefinition::raw("own")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(schema_outside_the_subset()).tool_validated())
        .execute(|_, _| async { Ok(json!({"n": "not checked by the registry"})) })
        .build()
        .unwrap();
    assert_eq!(def.output_schema(), &schema_outside_the_subset());
    let runtime = ToolRuntime::new();
    let scope = runtime.scope();
    let _r = scope.register(def).unwrap();
    let result = runtime.execute(ToolCall::new("c", "own", json!({}))).await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.value(),
        Some(&json!({"n": "not checked by the registry"}))
    );
    assert_eq!(
        runtime.schemas(scope.key())[0].output_schema,
        Some(schema_outside_the_subset())
    );
    assert_ne!(result.code(), Some(codes::INVALID_OUTPUT));
}

#[test]
fn only_raw_definitions_with_object_schemas_may_validate_their_own_output() {
    let typed = ToolDefinition::builder("typed")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!({"type": "object"})).tool_validated())
        .execute(|_, _| async { Ok(json!({})) })
        .build();
    assert_eq!(typed.unwrap_err().code(), "INVALID_OUTPUT_SCHEMA");
    let not_object = ToolDefinition::raw("raw")
        .input_schema(json!({"type": "object"}))
        .output(Output::json(json!(true)).tool_validated())
        .execute(|_, _| async { Ok(json!({})) })
        .build();
    assert_eq!(not_object.unwrap_err().code(), "INVALID_OUTPUT_SCHEMA");
}
