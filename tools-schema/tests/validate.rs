//! Validation: every keyword and every message form, plus a golden file of messages.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use tools_schema::{Validator, Violations};

fn check(schema: Value, value: Value) -> Result<(), Violations> {
    let validator = Validator::new(&schema).unwrap();
    let result = validator.validate(&value);
    // The fast path and the full report always agree.
    assert_eq!(
        validator.is_valid(&value),
        result.is_ok(),
        "{schema} / {value}"
    );
    result
}

fn messages(schema: Value, value: Value) -> Vec<String> {
    match check(schema, value) {
        Ok(()) => Vec::new(),
        Err(v) => v.iter().map(ToString::to_string).collect(),
    }
}

fn one(schema: Value, value: Value) -> String {
    let m = messages(schema, value);
    assert_eq!(m.len(), 1, "{m:?}");
    m.into_iter().next().unwrap()
}

#[test]
fn issue_message_forms() {
    let params = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": "integer"},
            "mode": {"type": "string", "enum": ["exact", "regex"]},
        },
        "required": ["path"],
    });
    assert_eq!(
        messages(params.clone(), json!({"offset": "ten", "mode": "fast"})),
        [
            "missing required property \"path\"",
            "/offset: expected integer, got string \"ten\"",
            "/mode: \"fast\" is not one of \"exact\", \"regex\"",
        ]
    );
    let closed = json!({
        "type": "object",
        "properties": {"color": {"type": "string"}, "size": {"type": "integer"}},
        "additionalProperties": false,
    });
    assert_eq!(
        one(closed, json!({"colour": "red"})),
        "unexpected property \"colour\" (allowed: \"color\", \"size\")"
    );
    let shape = json!({
        "type": "object",
        "properties": {"shape": {"oneOf": [
            {"type": "object", "properties": {"r": {"type": "number"}}},
            {"type": "object", "properties": {"w": {"type": "number"}}},
        ]}},
    });
    assert_eq!(
        one(shape, json!({"shape": {"r": 1, "w": 2}})),
        "/shape: matched 2 oneOf alternatives, expected exactly 1 (alternatives 0 and 1 both match)"
    );
}

#[test]
fn nested_required_is_reported_at_the_object() {
    let schema = json!({
        "type": "object",
        "properties": {"opts": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false,
        }},
    });
    let violations = check(schema, json!({"opts": {}})).unwrap_err();
    let v = &violations.violations()[0];
    assert_eq!(v.pointer, "/opts");
    assert_eq!(v.message, "missing required property \"path\"");
    assert_eq!(v.to_string(), "/opts: missing required property \"path\"");
    assert_eq!(violations.code(), "INVALID_VALUE");
}

#[test]
fn types() {
    let cases = [
        ("null", json!(null), json!(0), "expected null, got number 0"),
        (
            "boolean",
            json!(true),
            json!("true"),
            "expected boolean, got string \"true\"",
        ),
        (
            "string",
            json!("s"),
            json!(1.5),
            "expected string, got number 1.5",
        ),
        (
            "number",
            json!(1.5),
            json!(null),
            "expected number, got null",
        ),
        (
            "integer",
            json!(3),
            json!(3.5),
            "expected integer, got number 3.5",
        ),
        (
            "array",
            json!([]),
            json!({}),
            "expected array, got empty object",
        ),
        (
            "object",
            json!({}),
            json!([1, 2]),
            "expected object, got array of 2 items",
        ),
        (
            "object",
            json!({}),
            json!([]),
            "expected object, got empty array",
        ),
    ];
    for (ty, good, bad, message) in cases {
        let schema = json!({"type": ty});
        assert!(check(schema.clone(), good).is_ok(), "{ty}");
        assert_eq!(one(schema, bad), message, "{ty}");
    }
    // JSON Schema counts 3.0 as an integer.
    assert!(check(json!({"type": "integer"}), json!(3.0)).is_ok());
    assert_eq!(
        one(json!({"type": "string"}), json!({"a": 1})),
        "expected string, got object with 1 property"
    );
    assert_eq!(
        one(json!({"type": "boolean"}), json!([1])),
        "expected boolean, got array of 1 item"
    );
    // Any JSON.
    for value in [
        json!(null),
        json!(1),
        json!("x"),
        json!([{}]),
        json!({"a": []}),
    ] {
        assert!(check(json!({"description": "anything"}), value).is_ok());
    }
}

#[test]
fn long_strings_are_shortened_in_messages() {
    use tools_schema::excerpt::LIMIT;
    let long = "x".repeat(LIMIT + 100);
    let message = one(json!({"type": "integer"}), json!(long));
    assert_eq!(
        message,
        format!(
            "expected integer, got string \"{}\"… (100 more bytes)",
            "x".repeat(LIMIT)
        )
    );
}

/// Property names, values, enum and const echoes and patterns quoted in a message are cut to
/// the excerpt limit, however long they are.
#[test]
fn every_quoted_text_is_bounded() {
    let huge = "k".repeat(10_000_000);
    let closed = json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false});
    let mut value = serde_json::Map::new();
    value.insert(huge.clone(), json!(1));
    let message = one(closed, Value::Object(value));
    assert!(message.len() < 600, "{} bytes", message.len());
    assert!(message.contains("… (9999800 more bytes)"), "{message:.300}");

    let required =
        json!({"type": "object", "properties": {huge.clone(): {}}, "required": [huge.clone()]});
    let message = one(required, json!({}));
    assert!(message.len() < 600, "{} bytes", message.len());

    let enumerated = json!({"type": "string", "enum": [huge.clone(), "b"]});
    let message = one(enumerated, json!(huge.clone()[1..].to_string()));
    assert!(message.len() < 1000, "{} bytes", message.len());

    let constant = json!({"type": "string", "const": huge.clone()});
    let message = one(constant, json!("x"));
    assert!(message.len() < 600, "{} bytes", message.len());

    let pattern = format!("^{}$", "a".repeat(5_000));
    let message = one(json!({"type": "string", "pattern": pattern}), json!("b"));
    assert!(message.len() < 600, "{} bytes", message.len());

    // A pointer made of long keys is cut in the text, kept whole in the field.
    let open = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    let mut value = serde_json::Map::new();
    value.insert(huge.clone(), json!("x"));
    let errors = Validator::new(&open)
        .unwrap()
        .validate(&Value::Object(value))
        .unwrap_err();
    assert_eq!(errors.violations()[0].pointer.len(), huge.len() + 1);
    assert!(errors.to_string().len() < 600);
}

#[test]
fn enum_and_const() {
    assert_eq!(
        one(json!({"type": "integer", "enum": [1, 2, 3]}), json!(4)),
        "4 is not one of 1, 2, 3"
    );
    assert!(check(json!({"type": "integer", "enum": [1, 2, 3]}), json!(2.0)).is_ok());
    assert_eq!(
        one(json!({"type": "number", "enum": [0.5]}), json!(1)),
        "1 is not one of 0.5"
    );
    assert_eq!(
        one(json!({"type": "boolean", "enum": [true]}), json!(false)),
        "false is not one of true"
    );
    assert_eq!(
        one(
            json!({"type": "string", "const": "circle"}),
            json!("square")
        ),
        "expected \"circle\", got \"square\""
    );
    assert_eq!(
        one(json!({"type": "integer", "const": 7}), json!(8)),
        "expected 7, got 8"
    );
    assert_eq!(
        one(json!({"type": "boolean", "const": true}), json!(false)),
        "expected true, got false"
    );
    assert!(check(json!({"type": "string", "const": "a"}), json!("a")).is_ok());
    // A wrong type is reported once, not once per keyword.
    assert_eq!(
        one(json!({"type": "string", "enum": ["a"]}), json!(1)),
        "expected string, got number 1"
    );
}

#[test]
fn numeric_bounds() {
    let s = json!({"type": "number", "minimum": 0, "maximum": 10});
    assert!(check(s.clone(), json!(0)).is_ok());
    assert!(check(s.clone(), json!(10.0)).is_ok());
    assert_eq!(one(s.clone(), json!(-1)), "-1 is less than the minimum 0");
    assert_eq!(one(s, json!(10.5)), "10.5 is greater than the maximum 10");
    let s = json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1});
    assert!(check(s.clone(), json!(0.5)).is_ok());
    assert_eq!(
        one(s.clone(), json!(0)),
        "0 is not greater than the exclusive minimum 0"
    );
    assert_eq!(
        one(s, json!(1)),
        "1 is not less than the exclusive maximum 1"
    );
    let s = json!({"type": "integer", "multipleOf": 3});
    assert!(check(s.clone(), json!(-9)).is_ok());
    assert_eq!(one(s, json!(10)), "10 is not a multiple of 3");
    assert!(check(json!({"type": "number", "multipleOf": 0.1}), json!(0.3)).is_ok());
    // u64 bounds are exact.
    let s = json!({"type": "integer", "minimum": 0, "maximum": u64::MAX});
    assert!(check(s.clone(), json!(u64::MAX)).is_ok());
    assert_eq!(one(s, json!(-1)), "-1 is less than the minimum 0");
    // Several failing keywords on one value are all reported.
    assert_eq!(
        messages(
            json!({"type": "integer", "minimum": 5, "multipleOf": 2}),
            json!(3)
        ),
        ["3 is less than the minimum 5", "3 is not a multiple of 2"]
    );
}

#[test]
fn string_keywords() {
    let s = json!({"type": "string", "minLength": 2, "maxLength": 3});
    assert!(check(s.clone(), json!("ab")).is_ok());
    // Lengths count characters, not bytes.
    assert!(check(s.clone(), json!("äöü")).is_ok());
    assert_eq!(
        one(s.clone(), json!("a")),
        "expected at least 2 characters, got 1"
    );
    assert_eq!(
        one(s, json!("abcd")),
        "expected at most 3 characters, got 4"
    );
    assert_eq!(
        one(json!({"type": "string", "minLength": 1}), json!("")),
        "expected at least 1 character, got 0"
    );
    let s = json!({"type": "string", "pattern": "^[a-z]+$"});
    assert!(check(s.clone(), json!("abc")).is_ok());
    assert_eq!(
        one(s, json!("ab c")),
        "\"ab c\" does not match the pattern \"^[a-z]+$\""
    );
    // Patterns are unanchored, as in JSON Schema.
    assert!(check(json!({"type": "string", "pattern": "b"}), json!("abc")).is_ok());
}

#[test]
fn array_keywords() {
    let s = json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2});
    assert!(check(s.clone(), json!([1])).is_ok());
    assert_eq!(one(s.clone(), json!([])), "expected at least 1 item, got 0");
    assert_eq!(
        one(s.clone(), json!([1, 2, 3])),
        "expected at most 2 items, got 3"
    );
    assert_eq!(
        messages(s, json!([1, "2", true])),
        [
            "expected at most 2 items, got 3",
            "/1: expected integer, got string \"2\"",
            "/2: expected integer, got boolean true",
        ]
    );
    let u = json!({"type": "array", "uniqueItems": true});
    assert!(check(u.clone(), json!([1, "1", [1], {"a": 1}])).is_ok());
    assert_eq!(
        one(u.clone(), json!([{"a": 1, "b": 2}, 3, {"b": 2, "a": 1}])),
        "items 0 and 2 are equal; the items must be unique"
    );
    assert_eq!(
        one(u.clone(), json!([1, 1.0])),
        "items 0 and 1 are equal; the items must be unique"
    );
    // The hashed path for long arrays.
    let mut long: Vec<Value> = (0..100).map(|i| json!({"i": i})).collect();
    assert!(check(u.clone(), Value::Array(long.clone())).is_ok());
    long.push(json!({"i": 42}));
    assert_eq!(
        one(u, Value::Array(long)),
        "items 42 and 100 are equal; the items must be unique"
    );
    // Without `items`, only the container is checked.
    assert!(check(json!({"type": "array"}), json!([1, "a", null])).is_ok());
}

#[test]
fn object_keywords() {
    // Raw objects are open unless they say otherwise.
    let open = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    assert!(check(open.clone(), json!({"a": 1, "b": "anything"})).is_ok());
    assert_eq!(
        one(open, json!({"a": "1"})),
        "/a: expected integer, got string \"1\""
    );
    // A closed object with no properties accepts only {}.
    let empty = json!({"type": "object", "additionalProperties": false});
    assert!(check(empty.clone(), json!({})).is_ok());
    assert_eq!(
        one(empty, json!({"x": 1})),
        "unexpected property \"x\" (this object takes no properties)"
    );
    // A map: every value matches the additionalProperties schema.
    let map = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    assert!(check(map.clone(), json!({"a": 1, "b": 2})).is_ok());
    assert_eq!(
        messages(map, json!({"a": 1, "b/c": "x", "d~": false})),
        [
            "/b~1c: expected integer, got string \"x\"",
            "/d~0: expected integer, got boolean false",
        ]
    );
    // Properties are found in any order, also in large objects.
    // Names of different lengths, more than the linear-search limit: the sorted lookup.
    let names: Vec<String> = (0..40).map(|i| format!("p{i}")).collect();
    let props: serde_json::Map<String, Value> = names
        .iter()
        .map(|n| (n.clone(), json!({"type": "integer"})))
        .collect();
    let big = json!({"type": "object", "properties": props, "required": names, "additionalProperties": false});
    let value: serde_json::Map<String, Value> =
        names.iter().rev().map(|n| (n.clone(), json!(1))).collect();
    assert!(check(big.clone(), Value::Object(value.clone())).is_ok());
    let mut missing = value.clone();
    missing.remove("p7");
    missing.insert("zz".into(), json!(1));
    assert_eq!(
        messages(big, Value::Object(missing)),
        [
            "missing required property \"p7\"",
            format!(
                "unexpected property \"zz\" (allowed: {})",
                tools_schema::excerpt::cut(
                    &(0..40)
                        .map(|i| format!("\"p{i}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            )
            .as_str(),
        ]
    );
}

#[test]
fn defaults_are_not_applied() {
    let s = json!({"type": "object", "properties": {"n": {"type": "integer", "default": 3}}, "required": ["n"]});
    assert_eq!(one(s, json!({})), "missing required property \"n\"");
}

#[test]
fn one_of_none_matched_says_why() {
    let s = json!({"oneOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]});
    assert!(check(s.clone(), json!("a")).is_ok());
    assert!(check(s.clone(), json!(3)).is_ok());
    assert_eq!(
        one(s, json!(-1)),
        "matched none of the 2 oneOf alternatives, expected exactly 1 \
         (alternative 0: expected string, got number -1; alternative 1: -1 is less than the minimum 0)"
    );
    // A tagged union: the tag tells the alternatives apart.
    let tagged = json!({"type": "object", "properties": {"shape": {"oneOf": [
        {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}}, "required": ["kind", "r"], "additionalProperties": false},
        {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}}, "required": ["kind", "side"], "additionalProperties": false},
    ]}}});
    assert!(check(tagged.clone(), json!({"shape": {"kind": "circle", "r": 1}})).is_ok());
    assert_eq!(
        one(tagged, json!({"shape": {"kind": "square", "r": 1}})),
        "/shape: matched none of the 2 oneOf alternatives, expected exactly 1 \
         (alternative 0: /shape/kind: expected \"circle\", got \"square\"; \
         alternative 1: missing required property \"side\")"
    );
    // Three matches.
    let any3 = json!({"oneOf": [{}, {"description": "x"}, {"title": "y"}]});
    assert_eq!(
        one(any3, json!(1)),
        "matched 3 oneOf alternatives, expected exactly 1 (alternatives 0, 1, 2 match)"
    );
}

#[test]
fn nested_one_of() {
    // A oneOf inside a oneOf alternative: inner failures decide the outer count.
    let s = json!({"oneOf": [
        {"type": "array", "items": {"oneOf": [{"type": "integer"}, {"type": "string"}]}},
        {"type": "null"},
    ]});
    assert!(check(s.clone(), json!([1, "a"])).is_ok());
    assert!(check(s.clone(), json!(null)).is_ok());
    let m = one(s, json!([1, true]));
    assert!(
        m.starts_with("matched none of the 2 oneOf alternatives"),
        "{m}"
    );
    assert!(
        m.contains("alternative 0: /1: matched none of the 2 oneOf alternatives"),
        "{m}"
    );
}

#[test]
fn violations_api() {
    let validator = Validator::new(&json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}})).unwrap();
    let violations = validator.validate(&json!({"a": "x", "b": 1})).unwrap_err();
    assert_eq!(violations.len(), 2);
    assert!(!violations.is_empty());
    let pointers: Vec<&str> = violations.iter().map(|v| v.pointer.as_str()).collect();
    assert_eq!(pointers, ["/a", "/b"]);
    assert_eq!(
        violations.to_string(),
        "/a: expected integer, got string \"x\"\n/b: expected string, got number 1"
    );
    let owned: Vec<_> = violations.clone().into_iter().collect();
    assert_eq!(owned, violations.into_vec());
    // Clone + Send + Sync, usable from several threads.
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Validator>();
    let v2 = validator.clone();
    std::thread::spawn(move || assert!(v2.is_valid(&json!({"a": 1}))))
        .join()
        .unwrap();
    assert_eq!(
        validator.schema_json(),
        &json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "additionalProperties": true})
    );
}

#[test]
fn unsupported_schemas_do_not_compile() {
    let error = Validator::new(&json!({"$ref": "#/x"})).unwrap_err();
    assert_eq!(error.code(), "UNSUPPORTED_SCHEMA");
    let error = Validator::new(&json!({"type": "string", "pattern": "(?=a)"})).unwrap_err();
    assert!(error.to_string().contains("look-around"), "{error}");
}

/// The golden file: one realistic schema, many wrong values, every message.
#[test]
fn golden_messages() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "pattern": "^/"},
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "exclusiveMinimum": 0, "maximum": 1000},
            "mode": {"type": "string", "enum": ["exact", "regex"]},
            "ratio": {"type": "number", "multipleOf": 0.25},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3, "uniqueItems": true},
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
            "style": {
                "type": "object",
                "properties": {"color": {"type": "string"}, "size": {"type": "integer"}},
                "required": ["color"],
                "additionalProperties": false,
            },
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}}, "required": ["kind", "r"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}}, "required": ["kind", "side"], "additionalProperties": false},
                {"type": "object", "additionalProperties": true},
            ]},
            "note": {"oneOf": [{"type": "string"}, {"type": "null"}]},
            "flag": {"type": "boolean", "const": true},
        },
        "required": ["path", "mode"],
        "additionalProperties": false,
    });
    let validator = Validator::new(&schema).unwrap();
    let values = [
        json!({"path": "/a", "mode": "exact"}),
        json!({"offset": "ten"}),
        json!({"path": "", "mode": "fast", "offset": -1, "limit": 0}),
        json!({"path": "rel", "mode": "regex", "limit": 1001, "ratio": 0.3}),
        json!({"path": "/a", "mode": "exact", "tags": ["a", "b", "a", 4]}),
        json!({"path": "/a", "mode": "exact", "env": {"HOME": "/root", "N": 1}}),
        json!({"path": "/a", "mode": "exact", "style": {"colour": "red", "size": "L"}}),
        json!({"path": "/a", "mode": "exact", "shape": {"kind": "circle", "r": 1}}),
        json!({"path": "/a", "mode": "exact", "shape": 5}),
        json!({"path": "/a", "mode": "exact", "note": 5, "flag": false}),
        json!({"path": "/a", "mode": "exact", "extra": 1, "another": [1]}),
        json!([]),
        json!(null),
    ];
    let mut golden = String::new();
    for value in values {
        golden.push_str(&format!("value: {value}\n"));
        match validator.validate(&value) {
            Ok(()) => golden.push_str("  valid\n"),
            Err(violations) => {
                for v in &violations {
                    golden.push_str(&format!("  {v}\n"));
                }
            }
        }
    }
    insta::assert_snapshot!("violation_messages", golden);
}
