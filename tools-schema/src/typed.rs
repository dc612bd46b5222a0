//! Schemas of Rust types: the [`ToolSchema`] trait.
//!
//! A type implements [`ToolSchema`] to say which JSON values stand for it. It answers twice,
//! because serde may read more shapes than it writes:
//!
//! - [`ToolSchema::input_schema`] describes what serde's `Deserialize` accepts (tool
//!   parameters use it);
//! - [`ToolSchema::output_schema`] describes what serde's `Serialize` produces (tool outputs use
//!   it).
//!
//! The trait is implemented here for the standard types a tool uses, and
//! `#[derive(ToolSchema)]` (re-exported by `tools-runtime`) implements it for structs and enums,
//! following their serde attributes. The mapping of the standard types:
//!
//! | Rust type | schema |
//! | --- | --- |
//! | `String`, `str`, `Box<str>`, `Arc<str>`, `PathBuf` | `string` |
//! | `char` | `string` of exactly one character |
//! | `bool` | `boolean` |
//! | `u8`, `u16`, `u32`, `i8`, `i16`, `i32` | `integer` bounded to the type's range |
//! | `u64`, `u128`, `usize` | `integer`, `minimum: 0` |
//! | `i64`, `i128`, `isize` | `integer` |
//! | `f32`, `f64` | `number` |
//! | `Option<T>` | `T` or `null`; a missing object field or parameter reads as `None` |
//! | `Vec<T>`, `VecDeque<T>`, `[T; N]` | `array` of `T` (`[T; N]`: exactly `N` items) |
//! | `BTreeSet<T>`, `HashSet<T>` | `array` of `T`, `uniqueItems` on output |
//! | `HashMap<String, T>`, `BTreeMap<String, T>` | `object` whose every value is `T` |
//! | `Box<T>`, `Arc<T>`, `Rc<T>` | `T` |
//! | `serde_json::Value` | unconstrained (`{}`) |
//! | `serde_json::Map<String, Value>` | `object` with any properties |
//! | `()` | `null` |
//!
//! Tuples and maps with non-string keys have no implementation: serde writes tuples as
//! positional arrays, which the schema subset cannot describe.
//!
//! ```
//! use std::collections::HashMap;
//! use serde_json::json;
//! use tools_schema::typed::ToolSchema;
//!
//! assert_eq!(u8::input_schema().to_json(), json!({"type": "integer", "minimum": 0, "maximum": 255}));
//! assert_eq!(
//!     <HashMap<String, bool>>::output_schema().to_json(),
//!     json!({"type": "object", "additionalProperties": {"type": "boolean"}}),
//! );
//! // A missing `Option` parameter reads as `None`; a present one holds the inner type.
//! assert!(<Option<String>>::OPTIONAL);
//! assert_eq!(<Option<String>>::input_field_schema(), String::input_schema());
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

use crate::schema::{
    AdditionalProperties, Annotations, ArraySchema, BooleanSchema, NumericSchema, ObjectSchema,
    Schema, SchemaKind, StringSchema,
};

/// A Rust type whose JSON form has a schema in the supported subset.
///
/// Implement it with `#[derive(ToolSchema)]`; write it by hand only for a type with a custom
/// serde implementation, and then describe exactly what that implementation reads and writes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot appear in a tool schema: it does not implement `ToolSchema`",
    label = "no `ToolSchema` for `{Self}`",
    note = "add `#[derive(ToolSchema)]` (from `tools_runtime`) next to serde's derives on the type, or implement `tools_runtime::ToolSchema` by hand for a type with a custom serde format",
    note = "tuples, maps with non-`String` keys and references have no schema: use a struct with named fields, a `String`-keyed map or an owned type",
    note = "a parameter that the runtime injects (the run context, a cancellation token, shared state) is marked `#[context]` and needs no schema"
)]
pub trait ToolSchema {
    /// The schema of every JSON value serde's `Deserialize` for this type accepts (its input,
    /// deserialize-side shape).
    fn input_schema() -> Schema;

    /// The schema of every JSON value serde's `Serialize` for this type produces (its output,
    /// serialize-side shape).
    fn output_schema() -> Schema;

    /// Whether a missing object field or parameter of this type deserializes (to `None`).
    /// `true` for `Option<T>` only.
    const OPTIONAL: bool = false;

    /// The input schema of a present field or parameter whose type is [`Self::OPTIONAL`]: for
    /// `Option<T>` it is `T`'s input schema, so the model is offered "leave it out" rather than
    /// `null`. Other types return [`Self::input_schema`].
    fn input_field_schema() -> Schema {
        Self::input_schema()
    }

    /// How deeply the type's schema nests. `#[derive(ToolSchema)]` evaluates it at compile time,
    /// so a type that contains itself through other types fails to compile with a cycle error
    /// naming this constant: a recursive type has no schema in a subset without `$ref`. The
    /// name is chosen to read as the reason and the fix in that error. Hand-written implementations keep
    /// the default.
    #[doc(hidden)]
    const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE:
        usize = 1;
}

/// A schema with the given kind and no annotations.
fn plain(kind: SchemaKind) -> Schema {
    Schema {
        kind,
        annotations: Annotations::default(),
    }
}

fn string_schema(min_length: Option<u64>, max_length: Option<u64>) -> Schema {
    plain(SchemaKind::String(StringSchema {
        min_length,
        max_length,
        ..StringSchema::default()
    }))
}

fn integer_schema(minimum: Option<Number>, maximum: Option<Number>) -> Schema {
    plain(SchemaKind::Integer(NumericSchema {
        minimum,
        maximum,
        ..NumericSchema::default()
    }))
}

fn array_schema(items: Schema, unique_items: bool, len: Option<u64>) -> Schema {
    plain(SchemaKind::Array(ArraySchema {
        items: Some(Box::new(items)),
        min_items: len,
        max_items: len,
        unique_items,
    }))
}

fn map_schema(values: Schema) -> Schema {
    plain(SchemaKind::Object(ObjectSchema {
        properties: Vec::new(),
        required: Vec::new(),
        additional_properties: AdditionalProperties::Schema(Box::new(values)),
    }))
}

/// Whether every value the schema admits includes `null` already.
fn admits_null(schema: &Schema) -> bool {
    match &schema.kind {
        SchemaKind::Any | SchemaKind::Null => true,
        SchemaKind::OneOf(alternatives) => alternatives
            .iter()
            .any(|a| matches!(a.kind, SchemaKind::Null | SchemaKind::Any)),
        _ => false,
    }
}

/// `schema` or `null`: the schema of an `Option`. The annotations of `schema` move to the
/// outer schema so a description stays on top. A schema that admits `null` already is returned
/// unchanged, so `Option<Option<T>>` and `Option<Value>` stay valid for an exact-one `oneOf`.
pub fn nullable(schema: Schema) -> Schema {
    if admits_null(&schema) {
        return schema;
    }
    let Schema { kind, annotations } = schema;
    let alternatives = match kind {
        SchemaKind::OneOf(mut alternatives) => {
            alternatives.push(plain(SchemaKind::Null));
            alternatives
        }
        kind => vec![plain(kind), plain(SchemaKind::Null)],
    };
    Schema {
        kind: SchemaKind::OneOf(alternatives),
        annotations,
    }
}

macro_rules! same_both_ways {
    ($($ty:ty => $schema:expr;)*) => {$(
        impl ToolSchema for $ty {
            fn input_schema() -> Schema {
                $schema
            }
            fn output_schema() -> Schema {
                $schema
            }
        }
    )*};
}

same_both_ways! {
    String => string_schema(None, None);
    str => string_schema(None, None);
    PathBuf => string_schema(None, None);
    Path => string_schema(None, None);
    char => string_schema(Some(1), Some(1));
    bool => plain(SchemaKind::Boolean(BooleanSchema::default()));
    u8 => integer_schema(Some(0.into()), Some(u8::MAX.into()));
    u16 => integer_schema(Some(0.into()), Some(u16::MAX.into()));
    u32 => integer_schema(Some(0.into()), Some(u32::MAX.into()));
    u64 => integer_schema(Some(0.into()), None);
    u128 => integer_schema(Some(0.into()), None);
    usize => integer_schema(Some(0.into()), None);
    i8 => integer_schema(Some(i8::MIN.into()), Some(i8::MAX.into()));
    i16 => integer_schema(Some(i16::MIN.into()), Some(i16::MAX.into()));
    i32 => integer_schema(Some(i32::MIN.into()), Some(i32::MAX.into()));
    i64 => integer_schema(None, None);
    i128 => integer_schema(None, None);
    isize => integer_schema(None, None);
    f32 => plain(SchemaKind::Number(NumericSchema::default()));
    f64 => plain(SchemaKind::Number(NumericSchema::default()));
    () => plain(SchemaKind::Null);
    Value => plain(SchemaKind::Any);
    Map<String, Value> => plain(SchemaKind::Object(ObjectSchema {
        properties: Vec::new(),
        required: Vec::new(),
        additional_properties: AdditionalProperties::Allow,
    }));
}

impl<T: ToolSchema> ToolSchema for Option<T> {
    fn input_schema() -> Schema {
        nullable(T::input_schema())
    }
    fn output_schema() -> Schema {
        nullable(T::output_schema())
    }
    const OPTIONAL: bool = true;
    fn input_field_schema() -> Schema {
        T::input_schema()
    }
    const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE:
        usize =
        T::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE;
}

macro_rules! pointer {
    ($($ptr:ident),*) => {$(
        impl<T: ToolSchema + ?Sized> ToolSchema for $ptr<T> {
            fn input_schema() -> Schema {
                T::input_schema()
            }
            fn output_schema() -> Schema {
                T::output_schema()
            }
            const OPTIONAL: bool = T::OPTIONAL;
            fn input_field_schema() -> Schema {
                T::input_field_schema()
            }
            const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE: usize = T::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE;
        }
    )*};
}

pointer!(Box, Arc, Rc);

macro_rules! sequence {
    ($($seq:ident $(: $bound:path)? => $unique_out:expr),*) => {$(
        impl<T: ToolSchema $(+ $bound)?> ToolSchema for $seq<T> {
            fn input_schema() -> Schema {
                array_schema(T::input_schema(), false, None)
            }
            fn output_schema() -> Schema {
                array_schema(T::output_schema(), $unique_out, None)
            }
            const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE: usize = T::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE + 1;
        }
    )*};
}

sequence!(Vec => false, VecDeque => false, BTreeSet => true);

impl<T: ToolSchema, S> ToolSchema for HashSet<T, S> {
    fn input_schema() -> Schema {
        array_schema(T::input_schema(), false, None)
    }
    fn output_schema() -> Schema {
        array_schema(T::output_schema(), true, None)
    }
    const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE:
        usize =
        T::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE + 1;
}

impl<T: ToolSchema> ToolSchema for [T] {
    fn input_schema() -> Schema {
        array_schema(T::input_schema(), false, None)
    }
    fn output_schema() -> Schema {
        array_schema(T::output_schema(), false, None)
    }
    const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE:
        usize =
        T::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE + 1;
}

impl<T: ToolSchema, const N: usize> ToolSchema for [T; N] {
    fn input_schema() -> Schema {
        array_schema(T::input_schema(), false, Some(N as u64))
    }
    fn output_schema() -> Schema {
        array_schema(T::output_schema(), false, Some(N as u64))
    }
    const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE:
        usize =
        T::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE + 1;
}

impl<T: ToolSchema, S> ToolSchema for HashMap<String, T, S> {
    fn input_schema() -> Schema {
        map_schema(T::input_schema())
    }
    fn output_schema() -> Schema {
        map_schema(T::output_schema())
    }
    const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE:
        usize =
        T::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE + 1;
}

impl<T: ToolSchema> ToolSchema for BTreeMap<String, T> {
    fn input_schema() -> Schema {
        map_schema(T::input_schema())
    }
    fn output_schema() -> Schema {
        map_schema(T::output_schema())
    }
    const NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE:
        usize =
        T::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE + 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input<T: ToolSchema + ?Sized>() -> Value {
        T::input_schema().to_json()
    }
    fn output<T: ToolSchema + ?Sized>() -> Value {
        T::output_schema().to_json()
    }
    fn optional<T: ToolSchema + ?Sized>() -> bool {
        T::OPTIONAL
    }

    #[test]
    fn integers_carry_their_range() {
        assert_eq!(
            input::<u8>(),
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        assert_eq!(
            input::<i16>(),
            json!({"type": "integer", "minimum": -32768, "maximum": 32767})
        );
        assert_eq!(
            input::<u32>(),
            json!({"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64})
        );
        assert_eq!(input::<u64>(), json!({"type": "integer", "minimum": 0}));
        assert_eq!(input::<usize>(), json!({"type": "integer", "minimum": 0}));
        assert_eq!(input::<i64>(), json!({"type": "integer"}));
        assert_eq!(input::<f32>(), json!({"type": "number"}));
    }

    #[test]
    fn strings_and_scalars() {
        assert_eq!(input::<String>(), json!({"type": "string"}));
        assert_eq!(input::<PathBuf>(), json!({"type": "string"}));
        assert_eq!(input::<Box<str>>(), json!({"type": "string"}));
        assert_eq!(input::<Arc<str>>(), json!({"type": "string"}));
        assert_eq!(
            input::<char>(),
            json!({"type": "string", "minLength": 1, "maxLength": 1})
        );
        assert_eq!(input::<bool>(), json!({"type": "boolean"}));
        assert_eq!(input::<()>(), json!({"type": "null"}));
        assert_eq!(input::<Value>(), json!({}));
    }

    #[test]
    fn option_is_nullable_and_optional() {
        assert_eq!(
            output::<Option<String>>(),
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]})
        );
        // Nested options and options of values that admit null stay valid exact-one unions.
        assert_eq!(
            output::<Option<Option<bool>>>(),
            json!({"oneOf": [{"type": "boolean"}, {"type": "null"}]})
        );
        assert_eq!(output::<Option<Value>>(), json!({}));
        assert_eq!(output::<Option<()>>(), json!({"type": "null"}));
        assert!(optional::<Option<u8>>());
        assert!(!optional::<u8>());
        assert_eq!(<Option<u8>>::input_field_schema(), u8::input_schema());
        assert!(optional::<Box<Option<u8>>>());
    }

    #[test]
    fn containers() {
        assert_eq!(
            input::<Vec<bool>>(),
            json!({"type": "array", "items": {"type": "boolean"}})
        );
        assert_eq!(
            input::<VecDeque<bool>>(),
            json!({"type": "array", "items": {"type": "boolean"}})
        );
        assert_eq!(
            input::<HashSet<String>>(),
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(
            output::<BTreeSet<String>>(),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true})
        );
        assert_eq!(
            input::<[u8; 2]>(),
            json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}, "minItems": 2, "maxItems": 2})
        );
        assert_eq!(
            input::<BTreeMap<String, Vec<i64>>>(),
            json!({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer"}}})
        );
        assert_eq!(
            input::<Map<String, Value>>(),
            json!({"type": "object", "additionalProperties": true})
        );
        assert_eq!(input::<Box<u64>>(), input::<u64>());
        assert_eq!(input::<Rc<u64>>(), input::<u64>());
        assert_eq!(<Vec<Vec<u8>>>::NO_SCHEMA_FOR_A_TYPE_THAT_CONTAINS_ITSELF__HOLD_THE_INNER_PART_AS_SERDE_JSON_VALUE, 3);
    }

    #[test]
    fn nullable_keeps_annotations_on_top() {
        let mut s = String::input_schema();
        s.annotations.description = Some("a name".into());
        let n = nullable(s);
        assert_eq!(n.annotations.description.as_deref(), Some("a name"));
        assert!(matches!(n.kind, SchemaKind::OneOf(ref alts) if alts.len() == 2));
    }
}
