//! The enforced subset: what is accepted, what is rejected, and how it is reported.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use tools_schema::{SubsetError, assert_object_root, assert_supported};

fn errors(schema: Value) -> Vec<(String, String)> {
    match assert_supported(&schema) {
        Ok(()) => Vec::new(),
        Err(e) => e
            .iter()
            .map(
                |SubsetError {
                     pointer, keyword, ..
                 }| (pointer.clone(), keyword.clone()),
            )
            .collect(),
    }
}

fn message(schema: Value) -> String {
    let e = assert_supported(&schema).unwrap_err();
    assert_eq!(e.len(), 1, "{e}");
    e.errors()[0].message.clone()
}

fn pk(p: &str, k: &str) -> (String, String) {
    (p.to_string(), k.to_string())
}

#[test]
fn accepts_the_whole_subset() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "description": "All keywords",
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^a", "format": "uri", "enum": ["a", "ab"]},
            "c": {"type": "string", "const": "x", "default": "x", "examples": ["x"]},
            "n": {"type": "number", "minimum": -1.5, "maximum": 2, "exclusiveMinimum": -2, "exclusiveMaximum": 3, "multipleOf": 0.5},
            "i": {"type": "integer", "enum": [1, 2.0], "const": 1},
            "b": {"type": "boolean", "enum": [true], "const": true},
            "z": {"type": "null", "deprecated": true},
            "a": {"type": "array", "items": {}, "minItems": 0, "maxItems": 3, "uniqueItems": true},
            "o": {"type": "object", "additionalProperties": {"type": "integer"}},
            "u": {"oneOf": [{"type": "string"}, {"type": "null"}], "x-extra": {"nested": [1, 2]}},
            "any": {"description": "anything", "readOnly": true},
        },
        "required": ["s", "n"],
        "additionalProperties": false,
    });
    assert_supported(&schema).unwrap();
    assert_object_root(&schema).unwrap();
    assert_supported(&json!({})).unwrap();
    assert_supported(&json!({"type": "string"})).unwrap();
}

#[test]
fn rejects_each_unsupported_keyword_with_its_pointer() {
    let cases = [
        ("$ref", json!("#/$defs/a")),
        ("$defs", json!({"a": {}})),
        ("definitions", json!({"a": {}})),
        ("$dynamicRef", json!("#a")),
        ("$anchor", json!("a")),
        ("anyOf", json!([{}])),
        ("allOf", json!([{}])),
        ("not", json!({})),
        ("if", json!({})),
        ("then", json!({})),
        ("else", json!({})),
        ("patternProperties", json!({"^a": {}})),
        ("propertyNames", json!({})),
        ("dependentSchemas", json!({})),
        ("dependentRequired", json!({})),
        ("dependencies", json!({})),
        ("prefixItems", json!([{}])),
        ("additionalItems", json!({})),
        ("contains", json!({})),
        ("unevaluatedProperties", json!(false)),
        ("unevaluatedItems", json!(false)),
        ("minProperties", json!(1)),
        ("maxProperties", json!(1)),
        ("nullable", json!(true)),
    ];
    for (keyword, value) in cases {
        let mut inner = serde_json::Map::new();
        inner.insert(keyword.to_string(), value);
        let schema = json!({"type": "object", "properties": {"a/b": Value::Object(inner)}});
        assert_eq!(
            errors(schema),
            [pk(&format!("/properties/a~1b/{keyword}"), keyword)],
            "{keyword}"
        );
    }
}

#[test]
fn reports_every_problem_at_once() {
    let schema = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/x"},
            "b": {"type": ["string", "null"]},
            "c": {"type": "array", "items": {"anyOf": [], "not": {}}},
        },
        "required": ["a", "zz", "a"],
        "allOf": [],
    });
    assert_eq!(
        errors(schema),
        [
            pk("/properties/a/$ref", "$ref"),
            pk("/properties/b/type", "type"),
            pk("/properties/c/items/anyOf", "anyOf"),
            pk("/properties/c/items/not", "not"),
            pk("/required/1", "required"),
            pk("/required/2", "required"),
            pk("/allOf", "allOf"),
        ]
    );
}

#[test]
fn display_lists_all_errors() {
    let e = assert_supported(&json!({"anyOf": [], "not": {}})).unwrap_err();
    assert_eq!(e.code(), "UNSUPPORTED_SCHEMA");
    let text = e.to_string();
    assert!(
        text.starts_with("unsupported schema (2 problems):\n"),
        "{text}"
    );
    assert!(text.contains("/anyOf: "), "{text}");
    assert!(text.contains("/not: "), "{text}");
    let one = assert_supported(&json!({"$ref": "#"})).unwrap_err();
    assert_eq!(
        one.to_string(),
        "unsupported schema: /$ref: references are not supported; inline the referenced schema"
    );
}

#[test]
fn types() {
    assert!(message(json!({"type": "date"})).starts_with("unknown type name \"date\""));
    assert!(message(json!({"type": ["string", "null"]})).contains("oneOf"));
    assert!(message(json!({"type": 1})).contains("must be a type name string"));
    assert!(message(json!({"nullable": true})).contains("oneOf"));
}

#[test]
fn keywords_must_belong_to_the_type() {
    assert_eq!(
        message(json!({"type": "integer", "minLength": 1})),
        "`minLength` applies to type string, but this node has type integer"
    );
    assert_eq!(
        message(json!({"properties": {}})),
        "`properties` applies to type object, but this node has a node without `type`"
    );
    assert_eq!(
        errors(json!({"type": "string", "items": {}, "minimum": 1})),
        [pk("/items", "items"), pk("/minimum", "minimum")]
    );
    assert!(message(json!({"type": "string", "oneOf": [{}]})).contains("cannot be combined"));
    assert!(message(json!({"type": "null", "enum": [null]})).contains("scalar types"));
    assert!(message(json!({"type": "array", "enum": [[]]})).contains("scalar types"));
    assert!(message(json!({"enum": ["a"]})).contains("scalar types"));
}

#[test]
fn enum_and_const_values_match_the_type() {
    assert_eq!(
        errors(json!({"type": "string", "enum": ["a", 1, "b", null]})),
        [pk("/enum/1", "enum"), pk("/enum/3", "enum")]
    );
    assert_eq!(
        message(json!({"type": "integer", "enum": [1, 1.5]})),
        "`enum` values must match the declared type integer: expected an integer, got 1.5"
    );
    assert_eq!(
        errors(json!({"type": "boolean", "const": "true"})),
        [pk("/const", "const")]
    );
    assert_eq!(
        errors(json!({"type": "number", "const": "1"})),
        [pk("/const", "const")]
    );
    assert_eq!(
        message(json!({"type": "string", "enum": []})),
        "`enum` must list at least one value"
    );
    assert!(message(json!({"type": "string", "enum": "a"})).contains("must be an array"));
}

#[test]
fn keyword_values_are_checked() {
    let cases = [
        (json!({"type": "string", "minLength": -1}), "/minLength"),
        (json!({"type": "string", "maxLength": 1.5}), "/maxLength"),
        (json!({"type": "string", "pattern": 1}), "/pattern"),
        (json!({"type": "string", "pattern": "("}), "/pattern"),
        (json!({"type": "string", "pattern": "(?<=a)b"}), "/pattern"),
        (json!({"type": "number", "minimum": "0"}), "/minimum"),
        (
            json!({"type": "number", "exclusiveMinimum": true}),
            "/exclusiveMinimum",
        ),
        (json!({"type": "number", "multipleOf": 0}), "/multipleOf"),
        (json!({"type": "number", "multipleOf": -2}), "/multipleOf"),
        (json!({"type": "array", "items": [{}]}), "/items"),
        (json!({"type": "array", "minItems": "1"}), "/minItems"),
        (json!({"type": "array", "uniqueItems": 1}), "/uniqueItems"),
        (json!({"type": "object", "properties": []}), "/properties"),
        (json!({"type": "object", "required": "a"}), "/required"),
        (json!({"type": "object", "required": [1]}), "/required/0"),
        (
            json!({"type": "object", "additionalProperties": 1}),
            "/additionalProperties",
        ),
        (json!({"oneOf": []}), "/oneOf"),
        (json!({"oneOf": {}}), "/oneOf"),
        (json!({"title": 1}), "/title"),
        (json!({"description": ["a"]}), "/description"),
        (json!({"format": true}), "/format"),
        (json!({"examples": "a"}), "/examples"),
    ];
    for (schema, pointer) in cases {
        let e = assert_supported(&schema).unwrap_err();
        assert_eq!(e.len(), 1, "{schema}: {e}");
        assert_eq!(e.errors()[0].pointer, pointer, "{schema}: {e}");
    }
    assert!(message(json!({"type": "string", "pattern": "(?=a)"})).contains("look-around"));
    assert_eq!(
        message(json!({"type": "object", "properties": {"a": {}}, "required": ["a", "a"]})),
        "\"a\" is listed twice in `required`"
    );
    assert_eq!(
        message(json!({"type": "object", "required": ["b"]})),
        "required property \"b\" is not declared in `properties`"
    );
}

#[test]
fn boolean_null_and_non_object_schemas() {
    let t = assert_supported(&json!(true)).unwrap_err();
    assert_eq!(
        (
            t.errors()[0].pointer.as_str(),
            t.errors()[0].keyword.as_str()
        ),
        ("", "")
    );
    assert!(t.errors()[0].message.contains("write `{}`"), "{t}");
    let f = assert_supported(&json!(false)).unwrap_err();
    assert!(f.errors()[0].message.contains("`false`"), "{f}");
    assert_eq!(message(json!(null)), "expected a schema object, got null");
    assert_eq!(
        message(json!("string")),
        "expected a schema object, got a string"
    );
    assert_eq!(
        message(json!([{}])),
        "expected a schema object, got an array"
    );
    assert_eq!(message(json!(1)), "expected a schema object, got a number");
    assert_eq!(
        errors(json!({"type": "array", "items": true})),
        [pk("/items", "")]
    );
    assert_eq!(
        errors(json!({"type": "object", "properties": {"a": false}})),
        [pk("/properties/a", "")]
    );
    // additionalProperties true/false is a keyword value, not a schema.
    assert_supported(&json!({"type": "object", "additionalProperties": true})).unwrap();
    assert_supported(&json!({"type": "object", "additionalProperties": false})).unwrap();
    let display = assert_supported(&json!(null)).unwrap_err().to_string();
    assert_eq!(
        display,
        "unsupported schema: (root): expected a schema object, got null"
    );
}

#[test]
fn object_root() {
    assert_object_root(&json!({"type": "object"})).unwrap();
    let e = assert_object_root(&json!({"type": "string"})).unwrap_err();
    assert_eq!(e.errors()[0].keyword, "type");
    assert!(e.errors()[0].message.contains("not string"), "{e}");
    let e = assert_object_root(&json!({})).unwrap_err();
    assert!(e.errors()[0].message.contains("admits any value"), "{e}");
    let e = assert_object_root(&json!({"oneOf": [{"type": "object"}]})).unwrap_err();
    assert_eq!(e.len(), 1);
    // Root and subset errors together, the root first; a non-object root once.
    let e = assert_object_root(&json!({"type": "array", "anyOf": []})).unwrap_err();
    assert_eq!(e.len(), 2);
    assert_eq!(e.errors()[0].keyword, "type");
    assert_eq!(e.errors()[1].keyword, "anyOf");
    let e = assert_object_root(&json!(null)).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(assert_object_root(&json!(true)).unwrap_err().len(), 1);
}

#[test]
fn annotations_must_be_lossless() {
    // serde_json parses an integer beyond u64 as a float: the digits are gone.
    let schema: Value = serde_json::from_str(
        r#"{"type": "integer", "default": 123456789012345678901234567890, "x-big": [1, {"a": 18446744073709551616}]}"#,
    )
    .unwrap();
    assert_eq!(
        errors(schema),
        [pk("/default", "default"), pk("/x-big/1/a", "x-big")]
    );
    let bound: Value = serde_json::from_str(r#"{"type": "integer", "maximum": 1e20}"#).unwrap();
    assert!(message(bound).contains("not lossless"));
    let en: Value =
        serde_json::from_str(r#"{"type": "number", "enum": [9007199254740993.0]}"#).unwrap();
    assert_eq!(errors(en), [pk("/enum/0", "enum")]);
    // Exact integers and ordinary floats are fine.
    assert_supported(
        &json!({"type": "integer", "maximum": u64::MAX, "minimum": i64::MIN, "default": 0.1}),
    )
    .unwrap();
}

#[test]
fn lenient_reading_degrades_by_widening() {
    use tools_schema::Schema;
    let raw = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/a", "description": "kept"},
            "b": {"type": ["string", "null"]},
            "c": {"type": "string", "pattern": "(?=x)", "minLength": 1},
            "d": true,
            "e": {"type": "integer", "minimum": "0", "maximum": 9},
        },
        "required": ["a", "zz"],
        "patternProperties": {"^x": {}},
        "additionalProperties": false,
    });
    let (schema, errors) = Schema::from_json_lenient(&raw);
    assert_eq!(errors.unwrap().len(), 7);
    assert_eq!(
        schema.to_json(),
        json!({
            "type": "object",
            "properties": {
                "a": {"description": "kept"},
                "b": {},
                "c": {"type": "string", "minLength": 1},
                "d": {},
                "e": {"type": "integer", "maximum": 9},
            },
            "required": ["a"],
            "additionalProperties": true,
        })
    );
    let (clean, none) = Schema::from_json_lenient(&json!({"type": "string"}));
    assert!(none.is_none());
    assert_eq!(clean, Schema::string());
    let (root, errors) = Schema::from_json_lenient(&json!(null));
    assert_eq!(root, Schema::any());
    assert_eq!(errors.unwrap().len(), 1);
}

/// JSON Schema 2020-12 lets integer-valued keywords be written as decimals with no fraction.
#[test]
fn integer_keywords_may_be_written_as_decimals() {
    use tools_schema::{Schema, Validator};
    for (schema, bad) in [
        (
            json!({"type": "string", "minLength": 1.0, "maxLength": 2.0}),
            json!("abc"),
        ),
        (
            json!({"type": "array", "minItems": 1.0, "maxItems": 1e0}),
            json!([1, 2]),
        ),
    ] {
        assert_eq!(assert_supported(&schema), Ok(()), "{schema}");
        let validator = Validator::new(&schema).unwrap();
        assert!(validator.validate(&bad).is_err(), "{schema} admits {bad}");
    }
    let parsed = Schema::from_json(&json!({"type": "string", "maxLength": 2.0})).unwrap();
    assert_eq!(parsed.to_json(), json!({"type": "string", "maxLength": 2}));
    // Huge bounds read as the largest count.
    let parsed = Schema::from_json(&json!({"type": "array", "maxItems": 1e300})).unwrap();
    assert_eq!(
        parsed.to_json(),
        json!({"type": "array", "maxItems": u64::MAX})
    );
    for bad in [json!(1.5), json!(-1.0), json!(-0.5), json!("2")] {
        let errors = errors(json!({"type": "string", "minLength": bad}));
        assert_eq!(errors.len(), 1, "{bad}");
        assert_eq!(errors[0].0, "/minLength");
    }
    // The echo of a rejected value is bounded.
    let long = json!({"type": "string", "minLength": "x".repeat(1_000_000)});
    let message = assert_supported(&long).unwrap_err().to_string();
    assert!(message.len() < 600, "{} bytes", message.len());
    assert!(message.ends_with("… (999802 more bytes)"), "{message}");
}
