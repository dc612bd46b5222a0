//! The typed schema model: one vocabulary, many projections.
//!
//! A [`Schema`] is a [`SchemaKind`] (what values are allowed) plus [`Annotations`] (what a reader
//! is told about them). JSON Schema text is one projection of it (see [`Schema::to_json`] and
//! [`Schema::from_json`]); the TypeScript and Python types the codegen prints are others.

use serde_json::{Map, Number, Value};

/// A schema in the supported vocabulary.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// What values the schema admits.
    pub kind: SchemaKind,
    /// Descriptions and other non-validating keywords, kept losslessly.
    pub annotations: Annotations,
}

/// Non-validating keywords. Every keyword the subset does not interpret is kept in
/// [`Annotations::extra`] as lossless JSON, so a projection never drops information.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Annotations {
    /// `title`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `default`: documentation only; defaults are never applied.
    pub default: Option<Value>,
    /// `examples`.
    pub examples: Option<Vec<Value>>,
    /// `format`: an annotation, never asserted.
    pub format: Option<String>,
    /// Any other annotation keyword (`deprecated`, `readOnly`, `x-*`, ...), in source order.
    pub extra: Map<String, Value>,
}

/// What values a [`Schema`] admits.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaKind {
    /// Unconstrained JSON (`{}`): any value.
    Any,
    /// `{"type": "null"}`.
    Null,
    /// `{"type": "boolean"}`, optionally with `enum`/`const`.
    Boolean(BooleanSchema),
    /// `{"type": "string"}`.
    String(StringSchema),
    /// `{"type": "number"}`: any JSON number.
    Number(NumericSchema),
    /// `{"type": "integer"}`: a JSON number with no fractional part.
    Integer(NumericSchema),
    /// `{"type": "array"}`.
    Array(ArraySchema),
    /// `{"type": "object"}`.
    Object(ObjectSchema),
    /// `{"oneOf": [...]}`: a value must match exactly one alternative.
    OneOf(Vec<Schema>),
}

/// Constraints of a boolean schema.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BooleanSchema {
    /// `enum`: the admitted values.
    pub enum_values: Option<Vec<bool>>,
    /// `const`: the single admitted value.
    pub const_value: Option<bool>,
}

/// Constraints of a string schema.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StringSchema {
    /// `enum`: the admitted values.
    pub enum_values: Option<Vec<String>>,
    /// `const`: the single admitted value.
    pub const_value: Option<String>,
    /// `minLength`, in Unicode scalar values.
    pub min_length: Option<u64>,
    /// `maxLength`, in Unicode scalar values.
    pub max_length: Option<u64>,
    /// `pattern`: an ECMA-262 regular expression, unanchored.
    pub pattern: Option<String>,
}

/// Constraints of a number or integer schema. Values are kept as [`serde_json::Number`] so they
/// project back to JSON exactly as written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NumericSchema {
    /// `enum`: the admitted values.
    pub enum_values: Option<Vec<Number>>,
    /// `const`: the single admitted value.
    pub const_value: Option<Number>,
    /// `minimum` (inclusive).
    pub minimum: Option<Number>,
    /// `maximum` (inclusive).
    pub maximum: Option<Number>,
    /// `exclusiveMinimum` (a number, as in JSON Schema 2020-12).
    pub exclusive_minimum: Option<Number>,
    /// `exclusiveMaximum` (a number, as in JSON Schema 2020-12).
    pub exclusive_maximum: Option<Number>,
    /// `multipleOf` (strictly positive).
    pub multiple_of: Option<Number>,
}

/// Constraints of an array schema.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArraySchema {
    /// `items`: the schema of every element; `None` checks only that the value is an array.
    pub items: Option<Box<Schema>>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `uniqueItems`.
    pub unique_items: bool,
}

/// Constraints of an object schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectSchema {
    /// `properties`, in declaration order.
    pub properties: Vec<(String, Schema)>,
    /// `required`: names that must be present.
    pub required: Vec<String>,
    /// `additionalProperties`: what keys outside `properties` may hold.
    pub additional_properties: AdditionalProperties,
}

/// The `additionalProperties` of an object schema.
#[derive(Debug, Clone, PartialEq)]
pub enum AdditionalProperties {
    /// `true`: any other key, any value (an open object).
    Allow,
    /// `false`: no other key (a closed object).
    Deny,
    /// A schema every other key's value must match: a map such as `HashMap<String, T>`.
    /// This is a deliberate extension of the boolean-only form of the specification.
    Schema(Box<Schema>),
}
