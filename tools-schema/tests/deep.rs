//! Every walker of the crate on schemas and values 100,000 levels deep.
//!
//! The values are built with loops and dismantled with `tools_schema::deep::drop_*`, because the
//! compiler-generated `Drop` of a `serde_json::Value` or a `Schema` recurses once per level.
//! Assertions compare with the crate's iterative helpers for the same reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Map, Value, json};
use tools_schema::{
    Catalog, CatalogEntry, Schema, SchemaKind, Validator, assert_object_root, assert_supported,
    deep,
};

const DEPTH: usize = 100_000;

/// `[[[...0...]]]`, `DEPTH` arrays deep.
fn deep_array_value(leaf: Value) -> Value {
    let mut value = leaf;
    for _ in 0..DEPTH {
        value = Value::Array(vec![value]);
    }
    value
}

/// `{"a": {"a": ... leaf}}`, `DEPTH` objects deep.
fn deep_object_value(leaf: Value) -> Value {
    let mut value = leaf;
    for _ in 0..DEPTH {
        let mut map = Map::new();
        map.insert("a".into(), value);
        value = Value::Object(map);
    }
    value
}

/// An array-of-array-of-... schema of `DEPTH` levels around `leaf`.
fn deep_array_schema(leaf: Schema) -> Schema {
    let mut schema = leaf;
    for _ in 0..DEPTH {
        schema = Schema::array(schema);
    }
    schema
}

/// A closed object schema nesting property `a`, `DEPTH` levels, with `oneOf` every 10 levels.
fn deep_mixed_schema() -> Schema {
    let mut schema = Schema::integer();
    for level in 0..DEPTH {
        schema = Schema::closed_object(vec![("a".into(), schema)], vec!["a".into()]);
        if level % 10 == 0 {
            schema = Schema::one_of(vec![schema, Schema::string()]);
        }
    }
    schema
}

/// Raw JSON for `{"type": "array", "items": ...}` nested `DEPTH` levels.
fn deep_array_schema_json() -> Value {
    let mut value = json!({"type": "integer"});
    for _ in 0..DEPTH {
        let mut map = Map::new();
        map.insert("type".into(), json!("array"));
        map.insert("items".into(), value);
        value = Value::Object(map);
    }
    value
}

#[test]
fn projection_round_trips_a_deep_schema() {
    let schema = deep_mixed_schema();
    let json = schema.to_json();
    assert!(deep::depth(&json) > 2 * DEPTH);
    let back = Schema::from_json(&json).unwrap();
    let again = back.to_json();
    assert!(deep::values_equal(&json, &again));
    deep::drop_value(json);
    deep::drop_value(again);
    deep::drop_schema(back);
    deep::drop_schema(schema);
}

#[test]
fn subset_check_handles_deep_raw_schemas() {
    let raw = deep_array_schema_json();
    assert_supported(&raw).unwrap();
    let errors = assert_object_root(&raw).unwrap_err();
    assert_eq!(errors.errors()[0].pointer, "");

    // One offending keyword at the bottom: the pointer is 100,000 tokens long.
    let mut bad = json!({"type": "integer", "anyOf": []});
    for _ in 0..DEPTH {
        let mut map = Map::new();
        map.insert("type".into(), json!("array"));
        map.insert("items".into(), bad);
        bad = Value::Object(map);
    }
    let errors = assert_supported(&bad).unwrap_err();
    assert_eq!(errors.len(), 1);
    let error = &errors.errors()[0];
    assert_eq!(error.keyword, "anyOf");
    assert_eq!(error.pointer.len(), "/items".len() * DEPTH + "/anyOf".len());
    assert!(error.pointer.ends_with("/items/anyOf"));
    deep::drop_value(raw);
    deep::drop_value(bad);
}

#[test]
fn validator_compiles_and_checks_deep_schemas_and_values() {
    let schema = deep_array_schema(Schema::integer());
    let validator = Validator::from_schema(&schema).unwrap();
    deep::drop_schema(schema);

    let good = deep_array_value(json!(7));
    assert!(validator.is_valid(&good));
    validator.validate(&good).unwrap();

    let bad = deep_array_value(json!("seven"));
    assert!(!validator.is_valid(&bad));
    let violations = validator.validate(&bad).unwrap_err();
    assert_eq!(violations.len(), 1);
    let v = &violations.violations()[0];
    assert_eq!(v.pointer.len(), 2 * DEPTH);
    assert_eq!(v.message, "expected integer, got string \"seven\"");

    let clone = validator.clone();
    drop(validator);
    assert!(clone.is_valid(&good));
    deep::drop_value(good);
    deep::drop_value(bad);
    // Dropping the last clone dismantles the deep schema JSON it holds without recursion.
    drop(clone);
}

#[test]
fn validator_handles_deep_one_of_nesting() {
    let schema = deep_mixed_schema();
    let validator = Validator::from_schema(&schema).unwrap();
    deep::drop_schema(schema);

    let good = deep_object_value(json!(1));
    assert!(validator.is_valid(&good));
    // The innermost value is wrong: every enclosing oneOf fails in turn.
    let bad = deep_object_value(json!(true));
    assert!(!validator.is_valid(&bad));
    let violations = validator.validate(&bad).unwrap_err();
    assert_eq!(violations.len(), 1);
    assert!(
        violations.violations()[0]
            .message
            .starts_with("matched none of the 2 oneOf alternatives"),
        "{}",
        violations.violations()[0]
            .message
            .chars()
            .take(200)
            .collect::<String>()
    );
    deep::drop_value(good);
    deep::drop_value(bad);
}

#[test]
fn deep_values_under_an_open_schema_are_accepted() {
    let validator = Validator::new(&json!({"type": "object"})).unwrap();
    let value = deep_object_value(json!(null));
    assert!(validator.is_valid(&value));
    let unique = Validator::new(&json!({"type": "array", "uniqueItems": true})).unwrap();
    let items = Value::Array(vec![deep_array_value(json!(1)), deep_array_value(json!(1))]);
    let violations = unique.validate(&items).unwrap_err();
    assert_eq!(
        violations.to_string(),
        "items 0 and 1 are equal; the items must be unique"
    );
    deep::drop_value(value);
    deep::drop_value(items);
}

#[test]
fn catalog_reads_deep_schemas_without_a_depth_limit() {
    // Parsing: no recursion limit; a deep array is read, then refused for its shape.
    let text = format!(
        "{{\"tools\": [{{\"name\": \"t\", \"inputSchema\": {}1{}}}]}}",
        "[".repeat(DEPTH),
        "]".repeat(DEPTH)
    );
    let error = Catalog::from_json_str(&text, Some("deep.json")).unwrap_err();
    assert_eq!(error.code(), "CATALOG_SHAPE");
    assert_eq!(
        error.to_string(),
        "deep.json: tool \"t\" at /tools/0/inputSchema: expected a JSON Schema (an object or a boolean), got an array"
    );

    // Building: a deep schema value is kept, and the catalog drops it without recursion.
    let tool = CatalogEntry {
        name: "t".into(),
        description: String::new(),
        input_schema: deep_object_value(json!({})),
        output_schema: None,
        annotations: None,
    };
    let catalog = Catalog::new(vec![tool]).unwrap();
    assert_eq!(deep::depth(&catalog.tools()[0].input_schema), DEPTH + 1);
    drop(catalog);
}

#[test]
fn deep_helpers_are_iterative() {
    let value = deep_object_value(json!([1, 2]));
    assert_eq!(deep::depth(&value), DEPTH + 2);
    assert!(deep::deeper_than(&value, 128));
    let copy = deep::clone_value(&value);
    assert!(deep::values_equal(&value, &copy));
    deep::drop_value(copy);
    deep::drop_value(value);

    let schema = deep_array_schema(Schema::string());
    assert!(matches!(schema.kind, SchemaKind::Array(_)));
    deep::drop_schema(schema);
}
