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

impl Schema {
    /// A schema of the given kind without annotations.
    pub fn new(kind: SchemaKind) -> Schema {
        Schema {
            kind,
            annotations: Annotations::default(),
        }
    }

    /// Unconstrained JSON (`{}`): any value.
    pub fn any() -> Schema {
        Schema::new(SchemaKind::Any)
    }

    /// `{"type": "null"}`.
    pub fn null() -> Schema {
        Schema::new(SchemaKind::Null)
    }

    /// `{"type": "boolean"}`.
    pub fn boolean() -> Schema {
        Schema::new(SchemaKind::Boolean(BooleanSchema::default()))
    }

    /// `{"type": "string"}`.
    pub fn string() -> Schema {
        Schema::new(SchemaKind::String(StringSchema::default()))
    }

    /// `{"type": "string", "enum": [...]}`.
    pub fn string_enum<I, S>(values: I) -> Schema
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Schema::new(SchemaKind::String(StringSchema {
            enum_values: Some(values.into_iter().map(Into::into).collect()),
            ..StringSchema::default()
        }))
    }

    /// `{"type": "string", "const": value}`: a tag such as a serde enum's `"type"` field.
    pub fn string_const(value: impl Into<String>) -> Schema {
        Schema::new(SchemaKind::String(StringSchema {
            const_value: Some(value.into()),
            ..StringSchema::default()
        }))
    }

    /// `{"type": "number"}`.
    pub fn number() -> Schema {
        Schema::new(SchemaKind::Number(NumericSchema::default()))
    }

    /// `{"type": "integer"}`.
    pub fn integer() -> Schema {
        Schema::new(SchemaKind::Integer(NumericSchema::default()))
    }

    /// `{"type": "integer", "minimum": min, "maximum": max}`: the range of a Rust integer type.
    pub fn integer_range(min: impl Into<Number>, max: impl Into<Number>) -> Schema {
        Schema::new(SchemaKind::Integer(NumericSchema {
            minimum: Some(min.into()),
            maximum: Some(max.into()),
            ..NumericSchema::default()
        }))
    }

    /// `{"type": "array", "items": items}`.
    pub fn array(items: Schema) -> Schema {
        Schema::new(SchemaKind::Array(ArraySchema {
            items: Some(Box::new(items)),
            ..ArraySchema::default()
        }))
    }

    /// `{"type": "array"}` without `items`: any array.
    pub fn any_array() -> Schema {
        Schema::new(SchemaKind::Array(ArraySchema::default()))
    }

    /// An object with the given properties, required names and additional properties.
    pub fn object(
        properties: Vec<(String, Schema)>,
        required: Vec<String>,
        additional_properties: AdditionalProperties,
    ) -> Schema {
        Schema::new(SchemaKind::Object(ObjectSchema {
            properties,
            required,
            additional_properties,
        }))
    }

    /// A closed object (`"additionalProperties": false`), the usual shape of a Rust struct.
    pub fn closed_object(properties: Vec<(String, Schema)>, required: Vec<String>) -> Schema {
        Schema::object(properties, required, AdditionalProperties::Deny)
    }

    /// The implicit parameter root of a tool: an open object (`"additionalProperties": true`).
    pub fn parameters(properties: Vec<(String, Schema)>, required: Vec<String>) -> Schema {
        Schema::object(properties, required, AdditionalProperties::Allow)
    }

    /// `{"type": "object"}` with no declared properties: any object.
    pub fn any_object() -> Schema {
        Schema::object(Vec::new(), Vec::new(), AdditionalProperties::Allow)
    }

    /// A map with string keys whose values match `values` (`HashMap<String, T>`).
    pub fn map(values: Schema) -> Schema {
        Schema::object(
            Vec::new(),
            Vec::new(),
            AdditionalProperties::Schema(Box::new(values)),
        )
    }

    /// `{"oneOf": [...]}`: a value must match exactly one alternative.
    pub fn one_of(alternatives: Vec<Schema>) -> Schema {
        Schema::new(SchemaKind::OneOf(alternatives))
    }

    /// `{"oneOf": [schema, {"type": "null"}]}`: the schema of an `Option<T>` value that may be
    /// `null`. The annotations of `schema` move to the `oneOf` node.
    pub fn nullable(schema: Schema) -> Schema {
        let Schema { kind, annotations } = schema;
        Schema {
            kind: SchemaKind::OneOf(vec![Schema::new(kind), Schema::null()]),
            annotations,
        }
    }

    /// Sets `description`.
    pub fn with_description(mut self, description: impl Into<String>) -> Schema {
        self.annotations.description = Some(description.into());
        self
    }

    /// Sets `title`.
    pub fn with_title(mut self, title: impl Into<String>) -> Schema {
        self.annotations.title = Some(title.into());
        self
    }

    /// Sets `default` (documentation only: defaults are never applied).
    pub fn with_default(mut self, default: Value) -> Schema {
        self.annotations.default = Some(default);
        self
    }

    /// Sets `examples`.
    pub fn with_examples(mut self, examples: Vec<Value>) -> Schema {
        self.annotations.examples = Some(examples);
        self
    }

    /// Sets `format` (an annotation, never asserted).
    pub fn with_format(mut self, format: impl Into<String>) -> Schema {
        self.annotations.format = Some(format.into());
        self
    }

    /// Adds another annotation keyword (`deprecated`, `x-...`), kept verbatim.
    pub fn with_annotation(mut self, key: impl Into<String>, value: Value) -> Schema {
        self.annotations.extra.insert(key.into(), value);
        self
    }

    /// Sets `minimum` on a number or integer schema; no effect on other kinds.
    pub fn with_minimum(mut self, minimum: impl Into<Number>) -> Schema {
        if let SchemaKind::Number(n) | SchemaKind::Integer(n) = &mut self.kind {
            n.minimum = Some(minimum.into());
        }
        self
    }

    /// Sets `maximum` on a number or integer schema; no effect on other kinds.
    pub fn with_maximum(mut self, maximum: impl Into<Number>) -> Schema {
        if let SchemaKind::Number(n) | SchemaKind::Integer(n) = &mut self.kind {
            n.maximum = Some(maximum.into());
        }
        self
    }

    /// The `description` annotation, if any.
    pub fn description(&self) -> Option<&str> {
        self.annotations.description.as_deref()
    }

    /// Whether this is an object schema (the shape a tool's parameters must have).
    pub fn is_object(&self) -> bool {
        matches!(self.kind, SchemaKind::Object(_))
    }
}
