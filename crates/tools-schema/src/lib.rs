//! The schema vocabulary shared by every crate of the toolkit.
//!
//! This crate owns the typed [`Schema`] model, its projection to and from JSON Schema, the
//! enforced raw subset, path-qualified validation, and the tool catalog. It does no I/O beyond
//! reading a catalog file and knows nothing about execution.

pub mod schema;

pub use schema::{
    AdditionalProperties, Annotations, ArraySchema, BooleanSchema, NumericSchema, ObjectSchema,
    Schema, SchemaKind, StringSchema,
};
pub mod typed;
