//! The enforced raw JSON Schema subset.
//!
//! Raw JSON Schema (a `serde_json::Value`) is accepted wherever a typed [`Schema`] is, as long as
//! it stays inside the subset the typed model can express. [`assert_supported`] checks that and
//! reports **every** offending keyword, each with the RFC 6901 JSON pointer of the keyword and
//! the keyword's name; [`assert_object_root`] additionally requires an object root (tool
//! inputs, subagents, workflows).
//!
//! # The subset
//!
//! Every schema node is a JSON object. Which keywords it may carry depends on its `type`:
//!
//! | node | keywords besides the annotations |
//! | --- | --- |
//! | no `type`, no `oneOf` | none: an annotation-only node admits any JSON value (`{}`) |
//! | `"oneOf": [...]` (no `type`) | none: a value must match exactly one alternative |
//! | `"type": "null"` | none |
//! | `"type": "boolean"` | `enum`, `const` |
//! | `"type": "string"` | `enum`, `const`, `minLength`, `maxLength`, `pattern` |
//! | `"type": "number"` / `"integer"` | `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` |
//! | `"type": "array"` | `items` (one schema), `minItems`, `maxItems`, `uniqueItems` |
//! | `"type": "object"` | `properties`, `required`, `additionalProperties` (`true`, `false` or a schema) |
//!
//! Annotations may appear on every node: `title`, `description` and `format` (strings),
//! `default` (any JSON, never applied), `examples` (an array), and any keyword this crate does
//! not know (`deprecated`, `readOnly`, `$schema`, `$comment`, `x-...`), kept verbatim.
//!
//! Rules the check enforces, each reported with its own pointer:
//!
//! - `type` is a single name among `null`, `boolean`, `string`, `number`, `integer`, `array`,
//!   `object`. A list of types (`["string", "null"]`) is not in the subset: a nullable value is
//!   `{"oneOf": [{...}, {"type": "null"}]}`, which every projection (TypeScript, Python) can print
//!   as a plain union. OpenAPI's `nullable` is rejected with the same hint.
//! - Keywords of another type (`minLength` on a number, `properties` without `"type": "object"`)
//!   are errors, not silently ignored annotations.
//! - `enum` and `const` are allowed on the scalar types `boolean`, `string`, `number` and
//!   `integer` only, and every value must have the declared type (an integer for `integer`).
//!   `enum` lists at least one value.
//! - `oneOf` lists at least one alternative and is not combined with `type`.
//! - Every name in `required` is a string, listed once, and declared in `properties` (a required
//!   property the schema does not describe cannot be printed as a typed field).
//! - Numeric bounds are numbers; `multipleOf` is strictly positive; length and count bounds are
//!   non-negative integers; `uniqueItems` is a boolean; `pattern` compiles (see below).
//! - Every keyword outside the subset is rejected by name: references and definitions (`$ref`,
//!   `$defs`, `definitions`, `$dynamicRef`, `$anchor`, ...), the other combinators (`anyOf`,
//!   `allOf`, `not`, `if`/`then`/`else`), and the keywords whose meaning the typed projections
//!   cannot express (`patternProperties`, `propertyNames`, `dependentSchemas`,
//!   `dependentRequired`, `dependencies`, `prefixItems`, `additionalItems`, `contains`,
//!   `unevaluatedProperties`, `unevaluatedItems`, `minProperties`, `maxProperties`,
//!   `contentSchema`, `nullable`).
//! - A boolean schema (`true` or `false` in place of a schema object) is rejected with a hint:
//!   write `{}` for "any value"; a schema that admits nothing has no use as a tool parameter.
//!   `additionalProperties: true | false` is a keyword value, not a schema, and is allowed.
//! - A `null` root, or any root that is not an object, is rejected with the kind of value found.
//!
//! A schema from outside (an MCP server) that breaks these rules can still be read with
//! [`Schema::from_json_lenient`], which drops what the subset cannot express, only ever admitting
//! more values than the raw schema, and returns the same errors alongside.
//!
//! # Lossless annotations
//!
//! The specification asks that annotations stay lossless JSON. In TypeScript that excludes
//! `undefined`, `NaN`, functions, sparse arrays and the like; a `serde_json::Value` cannot hold
//! any of those, and its strings are always valid Unicode. What a `Value` can hide is a number
//! that lost digits while it was parsed: `serde_json` turns an integer literal outside the
//! `i64`/`u64` range into the nearest `f64`. The original text is gone by then, so the check
//! flags the only observable trace: a float with no fractional part whose magnitude is 2^53 or
//! more (beyond which an `f64` no longer holds every integer, and a JavaScript consumer no longer
//! holds it safely either). This applies to every number in a schema (annotations, `enum`,
//! `const`, bounds). Write such values as strings. Duplicate object keys in source text are
//! likewise lost by the parser (the last one wins) and cannot be detected afterwards.
//!
//! # Patterns
//!
//! `pattern` is compiled with the [`regex`](https://docs.rs/regex) crate, which guarantees
//! matching in linear time (a model-controlled string cannot trigger catastrophic backtracking).
//! Its syntax agrees with ECMA-262 for the usual constructs; the constructs whose meaning
//! differs are translated to ECMA-262's: `\d`, `\w` and `\b` are ASCII-based, `\s` is
//! ECMA-262's white space (U+FEFF and every Unicode space separator, not U+0085), `.` stops at
//! every line terminator, and each holds inside brackets and negated. Look-around and back-references are not supported and are
//! reported as an error on the `pattern` keyword.
//!
//! ```
//! use serde_json::json;
//! use tools_schema::subset::{assert_object_root, assert_supported};
//!
//! assert!(assert_supported(&json!({"type": "string", "enum": ["a", "b"]})).is_ok());
//!
//! let errors = assert_supported(&json!({
//!     "type": "object",
//!     "properties": {"a": {"$ref": "#/$defs/a"}, "b": {"type": ["string", "null"]}},
//! }))
//! .unwrap_err();
//! assert_eq!(errors.code(), "UNSUPPORTED_SCHEMA");
//! assert_eq!(errors.len(), 2);
//! assert_eq!(errors.iter().next().unwrap().pointer, "/properties/a/$ref");
//! assert_eq!(errors.iter().next().unwrap().keyword, "$ref");
//!
//! assert!(assert_object_root(&json!({"type": "string"})).is_err());
//! ```

use std::fmt;

use serde_json::Value;

use crate::schema::Schema;

/// One keyword outside the subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubsetError {
    /// RFC 6901 JSON pointer to the offending keyword (`/properties/a/$ref`), or to the value
    /// inside it that is wrong (`/enum/1`), or to the schema node itself when the node as a whole
    /// is wrong (a boolean schema, a non-object; `""` for the root).
    pub pointer: String,
    /// The offending keyword (`"$ref"`, `"type"`, ...); `""` when the node itself is wrong (a
    /// boolean schema, a non-object).
    pub keyword: String,
    /// What is wrong and, where there is one, what to write instead.
    pub message: String,
}

impl fmt::Display for SubsetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            std::borrow::Cow::Borrowed("(root)")
        } else {
            crate::excerpt::cut(&self.pointer)
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// Every keyword of a schema that is outside the subset: never empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SubsetErrors {
    errors: Vec<SubsetError>,
}

impl SubsetErrors {
    /// Wraps a list of errors; `None` when the list is empty.
    pub fn new(errors: Vec<SubsetError>) -> Option<Self> {
        if errors.is_empty() {
            None
        } else {
            Some(Self { errors })
        }
    }

    /// A single error.
    pub fn single(
        pointer: impl Into<String>,
        keyword: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            errors: vec![SubsetError {
                pointer: pointer.into(),
                keyword: keyword.into(),
                message: message.into(),
            }],
        }
    }

    /// The stable error code: `UNSUPPORTED_SCHEMA`.
    pub fn code(&self) -> &'static str {
        "UNSUPPORTED_SCHEMA"
    }

    /// The errors, in document order.
    pub fn errors(&self) -> &[SubsetError] {
        &self.errors
    }

    /// Iterates over the errors.
    pub fn iter(&self) -> std::slice::Iter<'_, SubsetError> {
        self.errors.iter()
    }

    /// How many errors there are (at least one).
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Always `false`: a `SubsetErrors` holds at least one error.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Consumes the list.
    pub fn into_vec(self) -> Vec<SubsetError> {
        self.errors
    }
}

impl fmt::Display for SubsetErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.errors.as_slice() {
            [one] => write!(f, "unsupported schema: {one}"),
            many => {
                write!(f, "unsupported schema ({} problems):", many.len())?;
                for error in many {
                    write!(f, "\n  {error}")?;
                }
                Ok(())
            }
        }
    }
}

impl<'a> IntoIterator for &'a SubsetErrors {
    type Item = &'a SubsetError;
    type IntoIter = std::slice::Iter<'a, SubsetError>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

impl IntoIterator for SubsetErrors {
    type Item = SubsetError;
    type IntoIter = std::vec::IntoIter<SubsetError>;
    fn into_iter(self) -> Self::IntoIter {
        self.errors.into_iter()
    }
}

/// Checks that a raw JSON Schema is inside the subset (see the [module docs](self)), reporting
/// every offending keyword. Any root type is allowed.
pub fn assert_supported(schema: &Value) -> Result<(), SubsetErrors> {
    Schema::from_json(schema).map(crate::deep::drop_schema)
}

/// Checks that a raw JSON Schema is inside the subset **and** describes a JSON object at its
/// root (`"type": "object"`), as tool inputs, subagents and workflows require. Subset errors and
/// the root error are reported together.
pub fn assert_object_root(schema: &Value) -> Result<(), SubsetErrors> {
    let root_error = object_root_error(schema);
    match (Schema::from_json(schema), root_error) {
        (Ok(parsed), None) => {
            crate::deep::drop_schema(parsed);
            Ok(())
        }
        (Ok(parsed), Some(root)) => {
            crate::deep::drop_schema(parsed);
            Err(SubsetErrors { errors: vec![root] })
        }
        (Err(errors), None) => Err(errors),
        (Err(mut errors), Some(root)) => {
            if !errors.errors.contains(&root) {
                errors.errors.insert(0, root);
            }
            Err(errors)
        }
    }
}

fn object_root_error(schema: &Value) -> Option<SubsetError> {
    let (keyword, message) = match schema {
        Value::Object(map) => match map.get("type") {
            Some(Value::String(t)) if t == "object" => return None,
            Some(Value::String(t)) => (
                "type",
                format!(
                    "the root must describe an object (`\"type\": \"object\"`), not {}",
                    crate::excerpt::cut(t)
                ),
            ),
            Some(_) => (
                "type",
                "the root must describe an object (`\"type\": \"object\"`)".to_string(),
            ),
            None => (
                "type",
                "the root must state `\"type\": \"object\"`; a root without a type admits any value"
                    .to_string(),
            ),
        },
        _ => return crate::projection::non_object_schema_error(schema, ""),
    };
    Some(SubsetError {
        pointer: String::new(),
        keyword: keyword.to_string(),
        message,
    })
}
