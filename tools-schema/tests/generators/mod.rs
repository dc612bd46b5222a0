//! Generators of the property tests: arbitrary JSON biased towards schema keywords, schemas of
//! the subset, and values built from a schema. Shared by `tools-schema/tests/properties.rs`
//! and the dialect tests (`tools-dialects/tests/support`, through `#[path]`: a test crate
//! cannot import another's helpers).

#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};
use tools_schema::{
    AdditionalProperties, ArraySchema, NumericSchema, Schema, SchemaKind, StringSchema,
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

pub fn arb_scalar() -> impl Strategy<Value = Value> {
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

pub fn arb_json() -> impl Strategy<Value = Value> {
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

// ------------------------------------------------------------------------------------------
// Schemas in the subset, with values built from them.

const NAMES: &[&str] = &["a", "b", "c", "d", "e/f", "g~h"];

pub fn arb_annotated(kind: SchemaKind) -> impl Strategy<Value = Schema> {
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

pub fn arb_string() -> impl Strategy<Value = SchemaKind> {
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

pub fn arb_numeric() -> impl Strategy<Value = SchemaKind> {
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

pub fn arb_leaf() -> impl Strategy<Value = Schema> {
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
pub fn tag(schema: &Schema) -> Option<u8> {
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

pub fn arb_schema() -> impl Strategy<Value = Schema> {
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

pub fn arb_value_for(schema: &Schema) -> BoxedStrategy<Value> {
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
