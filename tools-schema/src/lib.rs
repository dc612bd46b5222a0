//! The schema vocabulary shared by every crate of the toolkit.
//!
//! This crate owns the typed [`Schema`] model, its projection to and from JSON Schema, the
//! enforced raw subset, path-qualified validation, and the tool catalog. It does no I/O beyond
//! reading a catalog file and knows nothing about execution.
//!
//! | module | what it holds |
//! | --- | --- |
//! | [`schema`] | the typed model: [`Schema`] = [`SchemaKind`] + [`Annotations`], with constructors |
//! | [`projection`] | [`Schema::to_json`] (fixed key order), [`Schema::from_json`] and [`Schema::from_json_lenient`] |
//! | [`subset`] | the enforced raw subset: [`assert_supported`], [`assert_object_root`], [`SubsetErrors`] |
//! | [`validate`] | [`Validator`]: compiled once, reports every [`Violation`] with its JSON pointer |
//! | [`catalog`] | [`CatalogEntry`] and [`Catalog`], the MCP `tools/list` shape |
//! | [`deep`] | stack-safe drop, clone, equality and depth of deep values and schemas |
//! | [`excerpt`] | [`excerpt::cut`]: user-controlled text quoted in messages, cut to [`excerpt::LIMIT`] characters |
//!
//! # Decisions
//!
//! - **The subset** ([`subset`]): `type` (one name), `enum`/`const` on scalar types with values
//!   of the declared type, the numeric bounds (`minimum`, `maximum`, `exclusiveMinimum`,
//!   `exclusiveMaximum`, `multipleOf`), the string keywords (`minLength`, `maxLength`,
//!   `pattern`), the array keywords (`items`, `minItems`, `maxItems`, `uniqueItems`), the object
//!   keywords (`properties`, `required`, `additionalProperties` as `true`, `false` or a schema),
//!   exact-one `oneOf`, and annotations. References, definitions, the other combinators and the
//!   keywords the typed projections cannot express are rejected by name, with a JSON pointer.
//!   The validation keywords are in because the macros derive them from Rust types (`minimum: 0`
//!   for unsigned integers, ranges for narrow ones, `minItems`/`maxItems` for arrays).
//! - **Nullable values** are `{"oneOf": [T, {"type": "null"}]}`, never a type list: one shape
//!   for every projection ([`Schema::nullable`]).
//! - **Boolean schemas** (`true`/`false`) are not schemas in the subset (write `{}` for any
//!   value); a `null` or other non-object root is rejected with the kind found.
//! - **Open and closed objects**: a raw object without `additionalProperties` is open, as in
//!   JSON Schema; the typed model always knows, and [`Schema::to_json`] always writes it. The
//!   implicit parameter root ([`Schema::parameters`]) is open.
//! - **Lossless annotations**: a `serde_json::Value` cannot hold the non-JSON values the
//!   specification guards against; what it can hide is an integer that lost digits when it was
//!   parsed, which the subset check flags (see [the subset docs](subset#lossless-annotations)).
//! - **Unknown keywords** are annotations, kept verbatim and in order in
//!   [`Annotations::extra`]; `format` is an annotation and never asserted.
//! - **Validation** ([`validate`]) is this crate's own compiled walker rather than the
//!   `jsonschema` crate: it reports every violation in words a model can act on, never recurses
//!   (the `jsonschema` crate does), and on the realistic 10-field argument object of the
//!   `validate` bench it is as fast as `jsonschema`'s `is_valid`. A property test checks that
//!   both agree on generated schemas and values. `pattern` uses the linear-time `regex` crate.
//! - **Deep input**: every walker here (projection, subset check, validation, catalog checks)
//!   uses an explicit work stack, so schemas and values 100,000 levels deep are handled without
//!   overflowing the stack; [`deep`] has stack-safe drop, clone and equality for callers that
//!   hold such values.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use tools_schema::{Schema, Validator};
//!
//! // The implicit parameter root of a tool: an open object.
//! let params = Schema::parameters(
//!     vec![
//!         ("path".into(), Schema::string().with_description("Absolute file path")),
//!         ("offset".into(), Schema::integer().with_minimum(0)),
//!         ("mode".into(), Schema::string_enum(["exact", "regex"])),
//!     ],
//!     vec!["path".into()],
//! );
//! let json = params.to_json();
//! assert_eq!(
//!     json.to_string(),
//!     r#"{"type":"object","properties":{"path":{"type":"string","description":"Absolute file path"},"offset":{"type":"integer","minimum":0},"mode":{"type":"string","enum":["exact","regex"]}},"required":["path"],"additionalProperties":true}"#
//! );
//! assert_eq!(Schema::from_json(&json).unwrap(), params);
//!
//! let validator = Validator::from_schema(&params).unwrap();
//! let errors = validator
//!     .validate(&json!({"offset": "ten", "mode": "fast"}))
//!     .unwrap_err();
//! assert_eq!(
//!     errors.to_string(),
//!     "missing required property \"path\"\n\
//!      /offset: expected integer, got string \"ten\"\n\
//!      /mode: \"fast\" is not one of \"exact\", \"regex\""
//! );
//! ```

#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod catalog;
pub mod deep;
pub mod excerpt;
mod number;
mod pattern;
pub mod projection;
pub mod schema;
pub mod subset;
pub mod validate;

pub use catalog::{
    Catalog, CatalogEntry, CatalogError, NameError, ToolAnnotations, ToolRef, no_arguments,
    validate_tool_name,
};
pub use schema::{
    AdditionalProperties, Annotations, ArraySchema, BooleanSchema, NumericSchema, ObjectSchema,
    Schema, SchemaKind, StringSchema,
};
pub use subset::{SubsetError, SubsetErrors, assert_object_root, assert_supported};
pub use validate::{Validator, Violation, Violations};
pub mod typed;
