//! Property tests: no input makes the crate panic; the projection round-trips; values built
//! from a schema validate, and single mutations of them do not; the validator agrees with the
//! `jsonschema` crate on schemas of the subset.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::{Value, json};
use tools_schema::{
    AdditionalProperties, Schema, SchemaKind, Validator, assert_object_root, assert_supported,
};

use crate::generators;
use generators::{arb_json, arb_schema, arb_value_for};

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
