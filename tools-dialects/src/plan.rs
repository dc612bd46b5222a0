//! The decoder: what a projection reshaped, node by node, and how to undo it.
//!
//! A [`Decoder`] walks the model's arguments along the reshaped nodes only; everything a
//! projection passed through unchanged is kept as it is. The walk follows the plan, whose depth
//! is bounded by the schema's (see [`crate::MAX_SCHEMA_DEPTH`]), never the value's, so deep
//! arguments cannot exhaust the stack.

use std::sync::Arc;

use serde_json::{Map, Value};
use tools_schema::{Validator, deep, excerpt};

use crate::pointer::push;

/// How one node of the provider's shape maps back to the canonical shape.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// Same shape in both: nothing to do.
    Keep,
    /// An object some of whose properties need work.
    Object {
        /// The declared properties that need work.
        props: Vec<Prop>,
        /// The projection closed an open object or a map with declared properties: canonical
        /// values with other keys cannot be sent.
        closed: bool,
    },
    /// A map sent as an array of `{"key", "value"}` pairs.
    Pairs(Box<Plan>),
    /// An array whose items need work.
    Array(Box<Plan>),
    /// A union: the first alternative whose decoded value its canonical schema accepts.
    Union(Vec<Branch>),
    /// `null` as it is, anything else through the inner plan (Gemini's `nullable`).
    OrNull(Box<Plan>),
    /// Any JSON value sent as JSON text in a string.
    JsonText,
    /// A number or boolean sent as its JSON text (Gemini enums are strings only).
    ScalarText,
}

/// A declared property of a reshaped object.
#[derive(Debug, Clone)]
pub(crate) struct Prop {
    pub name: String,
    pub plan: Plan,
    /// Optional in the canonical schema, required-and-nullable in the provider's: `null` means
    /// absent.
    pub null_is_absent: bool,
    /// The canonical schema itself admits `null`, so an explicit `null` cannot be told from
    /// absent and cannot be sent.
    pub null_ambiguous: bool,
}

/// One alternative of a union.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    pub plan: Plan,
    pub canonical: Arc<Validator>,
}

impl Plan {
    pub(crate) fn is_keep(&self) -> bool {
        matches!(self, Plan::Keep)
    }
}

/// Why the model's arguments could not be turned back into canonical arguments.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DecodeError {
    /// JSON pointer into the arguments (`""` for the whole value).
    pub path: String,
    /// What was expected and what came.
    pub message: String,
}

impl DecodeError {
    /// The stable error code: `INVALID_PROVIDER_ARGS`.
    pub fn code(&self) -> &'static str {
        "INVALID_PROVIDER_ARGS"
    }
}

/// Why a canonical value has no provider shape (see [`Decoder::encode`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct EncodeError {
    /// JSON pointer into the canonical value.
    pub path: String,
    /// What cannot be sent.
    pub message: String,
}

impl EncodeError {
    /// The stable error code: `NOT_REPRESENTABLE`.
    pub fn code(&self) -> &'static str {
        "NOT_REPRESENTABLE"
    }
}

/// Turns the arguments a model sent in a provider's shape back into the canonical arguments the
/// tool body expects, undoing every reshaping of the projection.
#[derive(Debug, Clone)]
pub struct Decoder {
    plan: Plan,
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn decode_error(path: &str, message: String) -> DecodeError {
    DecodeError {
        path: path.to_owned(),
        message,
    }
}

impl Decoder {
    pub(crate) fn new(plan: Plan) -> Decoder {
        Decoder { plan }
    }

    /// A decoder that changes nothing (the projection reshaped nothing).
    pub fn identity() -> Decoder {
        Decoder { plan: Plan::Keep }
    }

    /// Whether decoding changes nothing: the provider's shape is the canonical shape.
    pub fn is_identity(&self) -> bool {
        self.plan.is_keep()
    }

    /// The canonical arguments of the provider-shaped `value`.
    ///
    /// # Errors
    ///
    /// A reshaped node holds something its provider shape does not allow (a pair list that is
    /// not an array, a repeated map key, JSON text that does not parse), with the path.
    pub fn decode(&self, value: Value) -> Result<Value, DecodeError> {
        decode(&self.plan, value, "")
    }

    /// The provider shape of a canonical value: what a model following the projected schema
    /// sends for it. The inverse of [`Decoder::decode`]; used by tests and to show examples.
    ///
    /// # Errors
    ///
    /// The value uses something the projection gave up: an explicit `null` where `null` now
    /// means absent, or a key an object closed by the projection no longer has.
    pub fn encode(&self, value: &Value) -> Result<Value, EncodeError> {
        encode(&self.plan, value, "")
    }
}

fn decode(plan: &Plan, value: Value, path: &str) -> Result<Value, DecodeError> {
    match plan {
        Plan::Keep => Ok(value),
        Plan::Object { props, .. } => {
            let Value::Object(map) = value else {
                return Err(decode_error(
                    path,
                    format!("expected an object, got {}", kind(&value)),
                ));
            };
            let mut out = Map::new();
            for (key, inner) in map {
                match props.iter().find(|p| p.name == key) {
                    Some(prop) if prop.null_is_absent && inner.is_null() => {}
                    Some(prop) => {
                        let decoded = decode(&prop.plan, inner, &push(path, &key))?;
                        out.insert(key, decoded);
                    }
                    None => {
                        out.insert(key, inner);
                    }
                }
            }
            Ok(Value::Object(out))
        }
        Plan::Pairs(inner) => {
            let Value::Array(items) = value else {
                return Err(decode_error(
                    path,
                    format!(
                        "expected an array of {{\"key\", \"value\"}} pairs, got {}",
                        kind(&value)
                    ),
                ));
            };
            let mut map = Map::new();
            for (index, item) in items.into_iter().enumerate() {
                let at = format!("{path}/{index}");
                let Value::Object(mut pair) = item else {
                    return Err(decode_error(
                        &at,
                        format!(
                            "expected a {{\"key\", \"value\"}} pair, got {}",
                            kind(&item)
                        ),
                    ));
                };
                let key = match pair.remove("key") {
                    Some(Value::String(key)) => key,
                    Some(other) => {
                        return Err(decode_error(
                            &format!("{at}/key"),
                            format!("expected a string, got {}", kind(&other)),
                        ));
                    }
                    None => return Err(decode_error(&at, "missing \"key\"".into())),
                };
                let Some(inner_value) = pair.remove("value") else {
                    return Err(decode_error(&at, "missing \"value\"".into()));
                };
                if map.contains_key(&key) {
                    return Err(decode_error(
                        &format!("{at}/key"),
                        format!("the key {} is given twice", excerpt::quoted(&key)),
                    ));
                }
                let decoded = decode(inner, inner_value, &format!("{at}/value"))?;
                map.insert(key, decoded);
            }
            Ok(Value::Object(map))
        }
        Plan::Array(inner) => {
            let Value::Array(items) = value else {
                // Not an array: the canonical validation reports it in its own words.
                return Ok(value);
            };
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| decode(inner, item, &format!("{path}/{i}")))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
        Plan::Union(branches) => {
            for branch in branches {
                if let Ok(decoded) = decode(&branch.plan, deep::clone_value(&value), path) {
                    if branch.canonical.is_valid(&decoded) {
                        return Ok(decoded);
                    }
                    deep::drop_value(decoded);
                }
            }
            // No alternative fits: hand the value on for validation to explain.
            Ok(value)
        }
        Plan::OrNull(inner) => match value {
            Value::Null => Ok(Value::Null),
            other => decode(inner, other, path),
        },
        Plan::JsonText => match value {
            Value::String(text) => deep::from_str(&text).map_err(|error| {
                decode_error(
                    path,
                    format!("expected JSON text, but it does not parse: {error}"),
                )
            }),
            other => Err(decode_error(
                path,
                format!("expected a string of JSON text, got {}", kind(&other)),
            )),
        },
        Plan::ScalarText => match value {
            Value::String(text) => match serde_json::from_str::<Value>(&text) {
                Ok(scalar @ (Value::Number(_) | Value::Bool(_) | Value::Null)) => Ok(scalar),
                _ => Err(decode_error(
                    path,
                    format!(
                        "expected a number or boolean written as text, got {}",
                        excerpt::quoted(&text)
                    ),
                )),
            },
            other => Ok(other),
        },
    }
}

fn encode_error(path: &str, message: impl Into<String>) -> EncodeError {
    EncodeError {
        path: path.to_owned(),
        message: message.into(),
    }
}

fn encode(plan: &Plan, value: &Value, path: &str) -> Result<Value, EncodeError> {
    match plan {
        Plan::Keep => Ok(deep::clone_value(value)),
        Plan::Object { props, closed } => {
            let Value::Object(map) = value else {
                return Ok(deep::clone_value(value));
            };
            if *closed
                && let Some(extra) = map.keys().find(|k| !props.iter().any(|p| &p.name == *k))
            {
                return Err(encode_error(
                    &push(path, extra),
                    "the provider's schema closes this object: keys it does not declare cannot be sent",
                ));
            }
            let mut out = Map::new();
            for (key, inner) in map {
                let at = push(path, key);
                match props.iter().find(|p| &p.name == key) {
                    Some(prop) => {
                        if prop.null_ambiguous && inner.is_null() {
                            return Err(encode_error(
                                &at,
                                "null means absent in the provider's schema, so an explicit null cannot be sent",
                            ));
                        }
                        out.insert(key.clone(), encode(&prop.plan, inner, &at)?);
                    }
                    None => {
                        out.insert(key.clone(), deep::clone_value(inner));
                    }
                }
            }
            for prop in props {
                if prop.null_is_absent && !map.contains_key(&prop.name) {
                    out.insert(prop.name.clone(), Value::Null);
                }
            }
            Ok(Value::Object(out))
        }
        Plan::Pairs(inner) => {
            let Value::Object(map) = value else {
                return Ok(deep::clone_value(value));
            };
            let mut pairs = Vec::with_capacity(map.len());
            for (key, v) in map {
                let mut pair = Map::new();
                pair.insert("key".into(), Value::String(key.clone()));
                pair.insert("value".into(), encode(inner, v, &push(path, key))?);
                pairs.push(Value::Object(pair));
            }
            Ok(Value::Array(pairs))
        }
        Plan::Array(inner) => match value {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| encode(inner, item, &format!("{path}/{i}")))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            other => Ok(deep::clone_value(other)),
        },
        Plan::Union(branches) => match branches.iter().find(|b| b.canonical.is_valid(value)) {
            Some(branch) => {
                let sent = encode(&branch.plan, value, path)?;
                // A reshaped alternative can produce what another alternative also takes (an
                // empty map and an empty array both as `[]`): what would read back as another
                // value is refused rather than sent (the projection reports `union-reshape`).
                match decode(plan, deep::clone_value(&sent), path) {
                    Ok(back) if deep::values_equal(&back, value) => Ok(sent),
                    _ => Err(encode_error(
                        path,
                        "in this dialect the value would read back as another alternative's",
                    )),
                }
            }
            None => Err(encode_error(path, "the value matches no alternative")),
        },
        Plan::OrNull(inner) => match value {
            Value::Null => Ok(Value::Null),
            other => encode(inner, other, path),
        },
        Plan::JsonText => Ok(Value::String(value.to_string())),
        Plan::ScalarText => match value {
            Value::Number(_) | Value::Bool(_) => Ok(Value::String(value.to_string())),
            other => Ok(deep::clone_value(other)),
        },
    }
}
