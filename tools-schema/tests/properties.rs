//! Property tests: no input makes the crate panic; the projection round-trips; values built
//! from a schema validate, and single mutations of them do not; the validator agrees with the
//! `jsonschema` crate on schemas of the subset.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};
use tools_schema::{
    AdditionalProperties, ArraySchema, NumericSchema, Schema, SchemaKind, StringSchema, Validator,
    assert_object_root, assert_supported,
};

// ------------------------------------------------------------------------------------------
// Arbitrary JSON, biased towards schema keywords so the subset walker sees real structure.

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "oneOf",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "$ref",
    "anyOf",
    "allOf",
    "not",
    "x-extra",
    "a",
    "b",
];
const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "null", "array", "object", "date",
];

fn arb_scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        (-3i64..20).prop_map(Value::from),
        prop::sample::select(TYPES).prop_map(|s| Value::String(s.to_string())),
        "[a-z(\\[\\]^$*+?.{}\\\\]{0,6}".prop_map(Value::String),
    ]
}

fn arb_json() -> impl Strategy<Value = Value> {
    arb_scalar().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYWORDS), inner), 0..6).prop_map(
                |entries| {
                    Value::Object(
                        entries
                            .into_iter()
                            .map(|(k, v)| (k.to_string(), v))
                            .collect::<Map<_, _>>(),
                    )
                }
            ),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_json_never_panics(schema in arb_json(), value in arb_json()) {
        let _ = assert_supported(&schema);
        let _ = assert_object_root(&schema);
        if let Ok(parsed) = Schema::from_json(&schema) {
            // What the subset accepts projects and round-trips.
            let json = parsed.to_json();
            prop_assert_eq!(Schema::from_json(&json).unwrap(), parsed);
            let validator = Validator::new(&schema).unwrap();
            let valid = validator.is_valid(&value);
            let report = validator.validate(&value);
            prop_assert_eq!(valid, report.is_ok());
            if let Err(violations) = report {
                prop_assert!(!violations.is_empty());
                for v in &violations {
                    prop_assert!(v.pointer.is_empty() || v.pointer.starts_with('/'));
                    prop_assert!(!v.message.is_empty());
                    // The full report found what the fast path found (never the fallback).
                    prop_assert_ne!(v.message.as_str(), "the value does not match the schema");
                }
            }
        } else {
            prop_assert!(Validator::new(&schema).is_err());
        }
    }
}

// ------------------------------------------------------------------------------------------
// Schemas in the subset, with values built from them.

const NAMES: &[&str] = &["a", "b", "c", "d", "e/f", "g~h"];

fn arb_annotated(kind: SchemaKind) -> impl Strategy<Value = Schema> {
    (
        prop::option::of("[a-z ]{0,8}"),
        prop::option::of("[A-Z]{1,4}"),
        // Lossless defaults only (see the subset's rule on integral floats beyond 2^53).
        prop::option::of(arb_scalar().prop_filter("lossless", |v| {
            v.as_f64()
                .is_none_or(|f| f.fract() != 0.0 || f.abs() < 9.0e15)
        })),
    )
        .prop_map(move |(description, title, default)| {
            let mut s = Schema::new(kind.clone());
            s.annotations.description = description;
            s.annotations.title = title;
            s.annotations.default = default;
            s
        })
}

fn arb_string() -> impl Strategy<Value = SchemaKind> {
    prop_oneof![
        Just(StringSchema::default()),
        prop::collection::vec("[a-z]{0,4}", 1..4).prop_map(|v| StringSchema {
            enum_values: Some(v),
            ..StringSchema::default()
        }),
        "[a-z]{0,4}".prop_map(|c| StringSchema {
            const_value: Some(c),
            ..StringSchema::default()
        }),
        (0u64..3, 0u64..4).prop_map(|(min, extra)| StringSchema {
            min_length: Some(min),
            max_length: Some(min + extra),
            pattern: Some("^[a-z]*$".into()),
            ..StringSchema::default()
        }),
    ]
    .prop_map(SchemaKind::String)
}

fn arb_numeric() -> impl Strategy<Value = SchemaKind> {
    (
        any::<bool>(),
        -50i64..50,
        0i64..100,
        prop::option::of(1i64..5),
        any::<bool>(),
    )
        .prop_map(|(integer, min, span, multiple, exclusive)| {
            let mut n = NumericSchema::default();
            if exclusive {
                n.exclusive_minimum = Some(Number::from(min - 1));
                n.exclusive_maximum = Some(Number::from(min + span + 1));
            } else {
                n.minimum = Some(Number::from(min));
                n.maximum = Some(Number::from(min + span));
            }
            // Keep a multiple of `m` inside the range.
            n.multiple_of = multiple.filter(|m| span >= *m).map(Number::from);
            if integer {
                SchemaKind::Integer(n)
            } else {
                SchemaKind::Number(n)
            }
        })
}

fn arb_leaf() -> impl Strategy<Value = Schema> {
    prop_oneof![
        Just(SchemaKind::Any),
        Just(SchemaKind::Null),
        prop_oneof![
            Just(tools_schema::BooleanSchema::default()),
            any::<bool>().prop_map(|b| tools_schema::BooleanSchema {
                enum_values: Some(vec![b]),
                const_value: None
            }),
        ]
        .prop_map(SchemaKind::Boolean),
        arb_string(),
        arb_numeric(),
    ]
    .prop_flat_map(arb_annotated)
}

/// The JSON type tag a schema's values have, for building `oneOf`s whose alternatives exclude
/// each other (`None` for `Any` and `oneOf`, which are kept out of alternatives).
fn tag(schema: &Schema) -> Option<u8> {
    Some(match &schema.kind {
        SchemaKind::Null => 0,
        SchemaKind::Boolean(_) => 1,
        SchemaKind::String(_) => 2,
        SchemaKind::Number(_) | SchemaKind::Integer(_) => 3,
        SchemaKind::Array(_) => 4,
        SchemaKind::Object(_) => 5,
        SchemaKind::Any | SchemaKind::OneOf(_) => return None,
    })
}

fn arb_schema() -> impl Strategy<Value = Schema> {
    arb_leaf().prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            (inner.clone(), 0u64..2, 0u64..3).prop_map(|(items, min, extra)| {
                Schema::new(SchemaKind::Array(ArraySchema {
                    items: Some(Box::new(items)),
                    min_items: Some(min),
                    max_items: Some(min + extra),
                    unique_items: false,
                }))
            }),
            (
                prop::collection::vec(
                    (prop::sample::select(NAMES), inner.clone(), any::<bool>()),
                    0..5
                ),
                prop_oneof![
                    Just(AdditionalProperties::Allow),
                    Just(AdditionalProperties::Deny),
                    inner
                        .clone()
                        .prop_map(|s| AdditionalProperties::Schema(Box::new(s))),
                ],
            )
                .prop_map(|(props, additional)| {
                    let mut properties: Vec<(String, Schema)> = Vec::new();
                    let mut required = Vec::new();
                    for (name, schema, req) in props {
                        if properties.iter().any(|(n, _)| n == name) {
                            continue;
                        }
                        if req {
                            required.push(name.to_string());
                        }
                        properties.push((name.to_string(), schema));
                    }
                    Schema::object(properties, required, additional)
                }),
            prop::collection::vec(inner, 1..4).prop_map(|alternatives| {
                let mut seen = Vec::new();
                let alternatives: Vec<Schema> = alternatives
                    .into_iter()
                    .filter(|s| match tag(s) {
                        Some(t) if !seen.contains(&t) => {
                            seen.push(t);
                            true
                        }
                        _ => false,
                    })
                    .collect();
                if alternatives.is_empty() {
                    Schema::null()
                } else {
                    Schema::one_of(alternatives)
                }
            }),
        ]
    })
}

fn arb_value_for(schema: &Schema) -> BoxedStrategy<Value> {
    match &schema.kind {
        SchemaKind::Any => arb_json().boxed(),
        SchemaKind::Null => Just(Value::Null).boxed(),
        SchemaKind::Boolean(b) => match &b.enum_values {
            Some(values) => prop::sample::select(values.clone())
                .prop_map(Value::Bool)
                .boxed(),
            None => any::<bool>().prop_map(Value::Bool).boxed(),
        },
        SchemaKind::String(s) => {
            if let Some(values) = &s.enum_values {
                prop::sample::select(values.clone())
                    .prop_map(Value::String)
                    .boxed()
            } else if let Some(c) = &s.const_value {
                Just(Value::String(c.clone())).boxed()
            } else {
                let min = s.min_length.unwrap_or(0) as usize;
                let max = s.max_length.map_or(8, |m| m as usize);
                prop::collection::vec(prop::char::range('a', 'z'), min..=max)
                    .prop_map(|c| Value::String(c.into_iter().collect()))
                    .boxed()
            }
        }
        SchemaKind::Number(n) | SchemaKind::Integer(n) => {
            let integer = matches!(schema.kind, SchemaKind::Integer(_));
            let lo = n
                .minimum
                .as_ref()
                .and_then(Number::as_i64)
                .or_else(|| {
                    n.exclusive_minimum
                        .as_ref()
                        .and_then(Number::as_i64)
                        .map(|m| m + 1)
                })
                .unwrap_or(-1000);
            let hi = n
                .maximum
                .as_ref()
                .and_then(Number::as_i64)
                .or_else(|| {
                    n.exclusive_maximum
                        .as_ref()
                        .and_then(Number::as_i64)
                        .map(|m| m - 1)
                })
                .unwrap_or(1000);
            let multiple = n.multiple_of.as_ref().and_then(Number::as_i64).unwrap_or(1);
            (lo..=hi, any::<bool>())
                .prop_map(move |(x, as_float)| {
                    // Round up to a multiple inside [lo, hi].
                    let mut x = x - x.rem_euclid(multiple);
                    if x < lo {
                        x += multiple;
                    }
                    if as_float && !integer {
                        json!(x as f64)
                    } else {
                        json!(x)
                    }
                })
                .boxed()
        }
        SchemaKind::Array(a) => {
            let item = a
                .items
                .as_deref()
                .map_or_else(|| arb_json().boxed(), arb_value_for);
            let min = a.min_items.unwrap_or(0) as usize;
            let max = a.max_items.map_or(3, |m| m as usize);
            prop::collection::vec(item, min..=max)
                .prop_map(Value::Array)
                .boxed()
        }
        SchemaKind::Object(o) => {
            let props: Vec<(String, BoxedStrategy<Value>, bool)> = o
                .properties
                .iter()
                .map(|(name, s)| (name.clone(), arb_value_for(s), o.required.contains(name)))
                .collect();
            let extra: BoxedStrategy<Vec<(String, Value)>> = match &o.additional_properties {
                AdditionalProperties::Deny => Just(Vec::new()).boxed(),
                AdditionalProperties::Allow => {
                    prop::collection::vec(("x[0-9]", arb_json()), 0..2).boxed()
                }
                AdditionalProperties::Schema(s) => {
                    prop::collection::vec(("x[0-9]", arb_value_for(s)), 0..3).boxed()
                }
            };
            let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
                .into_iter()
                .map(|(name, strategy, required)| {
                    if required {
                        strategy.prop_map(move |v| Some((name.clone(), v))).boxed()
                    } else {
                        prop::option::of(strategy.prop_map(move |v| (name.clone(), v))).boxed()
                    }
                })
                .collect();
            (fields, extra)
                .prop_map(|(fields, extra)| {
                    let mut map = Map::new();
                    for (k, v) in extra {
                        map.insert(k, v);
                    }
                    for (k, v) in fields.into_iter().flatten() {
                        map.insert(k, v);
                    }
                    Value::Object(map)
                })
                .boxed()
        }
        SchemaKind::OneOf(alternatives) => {
            let options: Vec<BoxedStrategy<Value>> =
                alternatives.iter().map(arb_value_for).collect();
            prop::strategy::Union::new(options).boxed()
        }
    }
}

/// Whether a value of this JSON type passes the type check of `schema` (constraints aside).
fn type_accepts(schema: &Schema, value: &Value) -> bool {
    match (&schema.kind, value) {
        (SchemaKind::Any, _) => true,
        (SchemaKind::Null, Value::Null) => true,
        (SchemaKind::Boolean(_), Value::Bool(_)) => true,
        (SchemaKind::String(_), Value::String(_)) => true,
        (SchemaKind::Number(_), Value::Number(_)) => true,
        (SchemaKind::Integer(_), Value::Number(n)) => n.is_i64() || n.is_u64(),
        (SchemaKind::Array(_), Value::Array(_)) => true,
        (SchemaKind::Object(_), Value::Object(_)) => true,
        (SchemaKind::OneOf(alts), v) => alts.iter().any(|a| type_accepts(a, v)),
        _ => false,
    }
}

enum Mutation {
    /// Replace the value at this pointer with a value of a type its schema rejects.
    Retype(Vec<PathStep>, Value),
    /// Remove a required property of the object at this pointer.
    RemoveRequired(Vec<PathStep>, String),
    /// Add a property to the closed object at this pointer.
    AddUnexpected(Vec<PathStep>),
}

#[derive(Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

/// Every mutation that certainly makes `value` invalid.
fn mutations(schema: &Schema, value: &Value) -> Vec<Mutation> {
    let mut out = Vec::new();
    // The flag says whether a retyping at this place is decided by this schema (not so for a
    // oneOf alternative: the oneOf itself decides which types are acceptable there).
    let mut stack: Vec<(&Schema, &Value, Vec<PathStep>, bool)> =
        vec![(schema, value, Vec::new(), true)];
    let candidates = [
        json!(null),
        json!(true),
        json!("zz"),
        json!(0.5),
        json!([]),
        json!({}),
    ];
    while let Some((schema, value, path, retype)) = stack.pop() {
        if retype && let Some(wrong) = candidates.iter().find(|c| !type_accepts(schema, c)) {
            out.push(Mutation::Retype(path.clone(), wrong.clone()));
        }
        match (&schema.kind, value) {
            (SchemaKind::OneOf(alts), v) => {
                if let Some(alt) = alts.iter().find(|a| type_accepts(a, v)) {
                    stack.push((alt, v, path, false));
                }
            }
            (SchemaKind::Array(a), Value::Array(items)) => {
                if let Some(item_schema) = a.items.as_deref() {
                    for (i, item) in items.iter().enumerate() {
                        let mut p = path.clone();
                        p.push(PathStep::Index(i));
                        stack.push((item_schema, item, p, true));
                    }
                }
            }
            (SchemaKind::Object(o), Value::Object(map)) => {
                for r in &o.required {
                    out.push(Mutation::RemoveRequired(path.clone(), r.clone()));
                }
                if matches!(o.additional_properties, AdditionalProperties::Deny) {
                    out.push(Mutation::AddUnexpected(path.clone()));
                }
                for (k, v) in map {
                    let s = match o.properties.iter().find(|(n, _)| n == k) {
                        Some((_, s)) => s,
                        None => match &o.additional_properties {
                            AdditionalProperties::Schema(s) => s,
                            _ => continue,
                        },
                    };
                    let mut p = path.clone();
                    p.push(PathStep::Key(k.clone()));
                    stack.push((s, v, p, true));
                }
            }
            _ => {}
        }
    }
    out
}

fn at_mut<'v>(value: &'v mut Value, path: &[PathStep]) -> &'v mut Value {
    let mut at = value;
    for step in path {
        at = match step {
            PathStep::Key(k) => at.get_mut(k.as_str()).unwrap(),
            PathStep::Index(i) => at.get_mut(*i).unwrap(),
        };
    }
    at
}

fn pointer(path: &[PathStep]) -> String {
    path.iter()
        .map(|s| match s {
            PathStep::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
            PathStep::Index(i) => format!("/{i}"),
        })
        .collect()
}

fn apply(value: &mut Value, mutation: &Mutation) -> String {
    match mutation {
        Mutation::Retype(path, wrong) => {
            *at_mut(value, path) = wrong.clone();
            pointer(path)
        }
        Mutation::RemoveRequired(path, name) => {
            at_mut(value, path)
                .as_object_mut()
                .unwrap()
                .shift_remove(name);
            pointer(path)
        }
        Mutation::AddUnexpected(path) => {
            at_mut(value, path)
                .as_object_mut()
                .unwrap()
                .insert("unexpected~/".into(), json!(1));
            pointer(path)
        }
    }
}

fn schema_and_value() -> impl Strategy<Value = (Schema, Value)> {
    arb_schema().prop_flat_map(|schema| {
        let values = arb_value_for(&schema);
        (Just(schema), values)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn schema_to_json_to_schema_is_identity(schema in arb_schema()) {
        let json = schema.to_json();
        let back = Schema::from_json(&json).unwrap();
        prop_assert_eq!(&back, &schema);
        // Byte-identical projection of equal schemas.
        prop_assert_eq!(
            serde_json::to_string(&back.to_json()).unwrap(),
            serde_json::to_string(&json).unwrap()
        );
    }

    #[test]
    fn generated_values_validate_and_mutations_do_not(
        (schema, value) in schema_and_value(),
        pick in any::<prop::sample::Index>(),
    ) {
        let validator = Validator::from_schema(&schema).unwrap();
        let report = validator.validate(&value);
        prop_assert!(report.is_ok(), "{}\n{}\n{}", schema.to_json(), value, report.unwrap_err());
        prop_assert!(validator.is_valid(&value));

        let candidates = mutations(&schema, &value);
        if !candidates.is_empty() {
            let mutation = &candidates[pick.index(candidates.len())];
            let mut bad = value.clone();
            let at = apply(&mut bad, mutation);
            prop_assert!(!validator.is_valid(&bad), "{}\n{}", schema.to_json(), bad);
            let violations = validator.validate(&bad).unwrap_err();
            prop_assert!(violations.iter().all(|v| v.message != "the value does not match the schema"));
            // Some violation is reported at the mutated place or above it (a oneOf).
            prop_assert!(
                violations.iter().any(|v| at.starts_with(&v.pointer)),
                "{} not under any of {:?}", at, violations.iter().map(|v| v.to_string()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn agrees_with_the_jsonschema_crate(
        (schema, value) in schema_and_value(),
        other in arb_json(),
    ) {
        let json = schema.to_json();
        let ours = Validator::new(&json).unwrap();
        let theirs = jsonschema::validator_for(&json).unwrap();
        for v in [&value, &other] {
            prop_assert_eq!(ours.is_valid(v), theirs.is_valid(v), "{}\n{}", json, v);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Degrading only widens: whatever the raw schema admits (by the `jsonschema` crate), the
    /// lenient reading admits too.
    #[test]
    fn lenient_reading_only_widens(schema in arb_json(), values in prop::collection::vec(arb_json(), 1..4)) {
        let (lenient, errors) = Schema::from_json_lenient(&schema);
        prop_assert_eq!(errors.is_none(), assert_supported(&schema).is_ok());
        let ours = Validator::from_schema(&lenient).unwrap();
        if let Ok(theirs) = jsonschema::validator_for(&schema) {
            for value in &values {
                if theirs.is_valid(value) {
                    prop_assert!(ours.is_valid(value), "{}\n{}\n{}", schema, lenient.to_json(), value);
                }
            }
        }
    }
}
