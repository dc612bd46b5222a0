//! Projection of the typed model to JSON Schema and back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Number, Value, json};
use tools_schema::{
    AdditionalProperties, Annotations, ArraySchema, BooleanSchema, NumericSchema, ObjectSchema,
    Schema, SchemaKind, StringSchema,
};

#[test]
fn fixed_key_order_whatever_the_source_order() {
    let a: Value = serde_json::from_str(
        r#"{"default": 1, "maximum": 9, "minimum": 0, "description": "n", "type": "integer", "x-a": 1, "title": "N"}"#,
    )
    .unwrap();
    let b: Value = serde_json::from_str(
        r#"{"type": "integer", "x-a": 1, "title": "N", "minimum": 0, "description": "n", "maximum": 9, "default": 1}"#,
    )
    .unwrap();
    let ja = Schema::from_json(&a).unwrap().to_json();
    let jb = Schema::from_json(&b).unwrap().to_json();
    let text = serde_json::to_string(&ja).unwrap();
    assert_eq!(text, serde_json::to_string(&jb).unwrap());
    assert_eq!(
        text,
        r#"{"type":"integer","title":"N","description":"n","minimum":0,"maximum":9,"default":1,"x-a":1}"#
    );
}

#[test]
fn every_keyword_in_order() {
    let schema = json!({
        "examples": [[]],
        "default": [],
        "uniqueItems": true,
        "maxItems": 2,
        "minItems": 1,
        "items": {"type": "string", "pattern": "a", "maxLength": 3, "minLength": 1, "const": "a", "enum": ["a"], "format": "f"},
        "description": "d",
        "title": "t",
        "type": "array",
        "deprecated": true,
    });
    let text = serde_json::to_string(&Schema::from_json(&schema).unwrap().to_json()).unwrap();
    assert_eq!(
        text,
        r#"{"type":"array","title":"t","description":"d","items":{"type":"string","format":"f","enum":["a"],"const":"a","minLength":1,"maxLength":3,"pattern":"a"},"minItems":1,"maxItems":2,"uniqueItems":true,"default":[],"examples":[[]],"deprecated":true}"#
    );
    let numeric = json!({"multipleOf": 2, "exclusiveMaximum": 10, "maximum": 9, "exclusiveMinimum": 0, "minimum": 1, "const": 4, "enum": [4], "type": "number"});
    let text = serde_json::to_string(&Schema::from_json(&numeric).unwrap().to_json()).unwrap();
    assert_eq!(
        text,
        r#"{"type":"number","enum":[4],"const":4,"minimum":1,"exclusiveMinimum":0,"maximum":9,"exclusiveMaximum":10,"multipleOf":2}"#
    );
    let object = json!({"additionalProperties": false, "required": ["a"], "properties": {"b": {}, "a": {"type": "boolean", "const": true, "enum": [true]}}, "type": "object"});
    let text = serde_json::to_string(&Schema::from_json(&object).unwrap().to_json()).unwrap();
    assert_eq!(
        text,
        r#"{"type":"object","properties":{"b":{},"a":{"type":"boolean","enum":[true],"const":true}},"required":["a"],"additionalProperties":false}"#
    );
    let one_of = json!({"description": "x", "oneOf": [{"type": "null"}, {}]});
    let text = serde_json::to_string(&Schema::from_json(&one_of).unwrap().to_json()).unwrap();
    assert_eq!(text, r#"{"description":"x","oneOf":[{"type":"null"},{}]}"#);
}

#[test]
fn raw_objects_are_open_and_explicit_objects_state_it() {
    let raw = Schema::from_json(&json!({"type": "object"})).unwrap();
    assert_eq!(raw, Schema::any_object());
    assert_eq!(
        raw.to_json(),
        json!({"type": "object", "additionalProperties": true})
    );
    assert_eq!(
        Schema::closed_object(vec![], vec![]).to_json(),
        json!({"type": "object", "additionalProperties": false})
    );
    let map =
        Schema::from_json(&json!({"type": "object", "additionalProperties": {"type": "string"}}))
            .unwrap();
    assert_eq!(map, Schema::map(Schema::string()));
}

#[test]
fn constructors_build_the_expected_model() {
    let params = Schema::parameters(
        vec![
            (
                "path".into(),
                Schema::string().with_description("Absolute file path"),
            ),
            ("offset".into(), Schema::number()),
            (
                "tags".into(),
                Schema::array(Schema::string_enum(["a", "b"])),
            ),
            (
                "note".into(),
                Schema::nullable(Schema::string().with_title("Note")),
            ),
            ("kind".into(), Schema::string_const("circle")),
            ("n".into(), Schema::integer_range(0u8, 255u8)),
            ("any".into(), Schema::any().with_annotation("x-y", json!(1))),
            ("list".into(), Schema::any_array()),
            (
                "b".into(),
                Schema::boolean()
                    .with_default(json!(false))
                    .with_examples(vec![json!(true)]),
            ),
            ("z".into(), Schema::null().with_format("none")),
            (
                "m".into(),
                Schema::integer().with_minimum(1).with_maximum(3),
            ),
        ],
        vec!["path".into()],
    );
    assert!(params.is_object());
    assert_eq!(
        params.to_json(),
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute file path"},
                "offset": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "note": {"title": "Note", "oneOf": [{"type": "string"}, {"type": "null"}]},
                "kind": {"type": "string", "const": "circle"},
                "n": {"type": "integer", "minimum": 0, "maximum": 255},
                "any": {"x-y": 1},
                "list": {"type": "array"},
                "b": {"type": "boolean", "default": false, "examples": [true]},
                "z": {"type": "null", "format": "none"},
                "m": {"type": "integer", "minimum": 1, "maximum": 3},
            },
            "required": ["path"],
            "additionalProperties": true,
        })
    );
    assert_eq!(Schema::from_json(&params.to_json()).unwrap(), params);
    assert_eq!(params.description(), None);
}

#[test]
fn interpreted_keys_in_extra_are_not_written() {
    let mut schema = Schema::string();
    schema
        .annotations
        .extra
        .insert("type".into(), json!("integer"));
    schema.annotations.extra.insert("x-ok".into(), json!(1));
    assert_eq!(schema.to_json(), json!({"type": "string", "x-ok": 1}));
}

#[test]
fn typed_model_round_trips_field_by_field() {
    let schema = Schema {
        kind: SchemaKind::Object(ObjectSchema {
            properties: vec![
                (
                    "s".into(),
                    Schema::new(SchemaKind::String(StringSchema {
                        enum_values: Some(vec!["x".into()]),
                        const_value: Some("x".into()),
                        min_length: Some(1),
                        max_length: Some(2),
                        pattern: Some("^x$".into()),
                    })),
                ),
                (
                    "n".into(),
                    Schema::new(SchemaKind::Integer(NumericSchema {
                        enum_values: Some(vec![Number::from(1)]),
                        const_value: Some(Number::from(1)),
                        minimum: Some(Number::from(-5)),
                        maximum: Some(Number::from(u64::MAX)),
                        exclusive_minimum: Some(Number::from_f64(-5.5).unwrap()),
                        exclusive_maximum: Some(Number::from(7)),
                        multiple_of: Some(Number::from_f64(0.5).unwrap()),
                    })),
                ),
                (
                    "b".into(),
                    Schema::new(SchemaKind::Boolean(BooleanSchema {
                        enum_values: Some(vec![true, false]),
                        const_value: None,
                    })),
                ),
                (
                    "a".into(),
                    Schema::new(SchemaKind::Array(ArraySchema {
                        items: Some(Box::new(Schema::null())),
                        min_items: Some(0),
                        max_items: Some(4),
                        unique_items: true,
                    })),
                ),
            ],
            required: vec!["s".into(), "a".into()],
            additional_properties: AdditionalProperties::Schema(Box::new(Schema::any())),
        }),
        annotations: Annotations {
            title: Some("T".into()),
            description: Some("D".into()),
            default: Some(json!({"s": "x"})),
            examples: Some(vec![json!({"s": "x"}), json!(null)]),
            format: Some("f".into()),
            extra: [("x-k".to_string(), json!({"deep": [1, 2.5, "s"]}))]
                .into_iter()
                .collect(),
        },
    };
    let json = schema.to_json();
    assert_eq!(Schema::from_json(&json).unwrap(), schema);
    // Equal schemas give byte-identical JSON.
    let again = Schema::from_json(&json).unwrap().to_json();
    assert_eq!(
        serde_json::to_string(&json).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
}
