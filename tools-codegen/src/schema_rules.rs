//! How raw JSON Schema is read, construct by construct.
//!
//! Both languages render from one reading of the schema:
//!
//! | schema | TypeScript | Python |
//! | --- | --- | --- |
//! | `{}` (no constraining keyword) | `JsonValue` | `Any` |
//! | `true`, `false`, `null` or any non-object in schema position | `unknown` | `Any` |
//! | `$ref`, `$dynamicRef`, `$recursiveRef` (not followed) | `unknown` | `Any` |
//! | `const`, `enum` of scalars | `"a" \| 1 \| true \| null` | `Literal["a", 1, True, None]` (floats widen to `float`) |
//! | `enum` with an object or array member, or empty | `unknown` | `Any` |
//! | `type`: `null`, `boolean`, `string`, `number`, `integer` | `null`, `boolean`, `string`, `number`, `number` | `None`, `bool`, `str`, `float`, `int` |
//! | `type` an array (`["string", "null"]`) | the union | the union |
//! | `type` unknown, malformed, or an empty array | `unknown` | `Any` |
//! | `oneOf` without `type` | the union of the alternatives | the union |
//! | `anyOf`, `allOf`, `not`, `if` without `type` | `unknown` | `Any` |
//! | `oneOf`, `anyOf`, `allOf`, `not`, `if` beside a `type` | ignored (they only narrow) | ignored |
//! | `type: array`; `items` absent or `true` | `JsonValue[]` | `list[Any]` |
//! | `items` a tuple array, `false`, or `prefixItems` present | `unknown[]` | `list[Any]` |
//! | `type: object` with properties | `{ key: T; opt?: T }` | a named `TypedDict` (`NotRequired` for optional keys) |
//! | extra keys allowed (`additionalProperties` absent, `true` or `{}`, `patternProperties`): an open object | `[key: string]: unknown` added | the `TypedDict`, used as `Name \| dict[str, Any]` (see below); its line is marked `# open` |
//! | `additionalProperties: false` | no index signature | the `TypedDict` alone, unmarked |
//! | `additionalProperties` a schema, no properties (a map) | `{ [key: string]: T }` | `dict[str, T]` |
//! | `additionalProperties` a schema beside properties | `[key: string]: unknown` | as an open object |
//! | an object without properties, open | `{ [key: string]: unknown }` | `dict[str, Any]` |
//! | an object without properties, closed | `{ [key: string]: never }` | an empty `TypedDict` |
//! | a key in `required` but not in `properties` | a required key of the extra-key type; for several keys whose type has an object or is long, the type once: `{ ... } & Record<"a" \| "b", T>` | same; a long type shared by several keys is named once by an alias (`XA = ...`) |
//! | an optional key named like an `Object.prototype` member (`constructor`, `toString`, ...) | `T \| Object["constructor"]` (an object literal without the key still inherits the member) | `T` |
//! | no `type` but object keywords (`properties`, `required`, `additionalProperties`, `patternProperties`) | the object they describe, or any other value (they constrain objects only): `{ ... } \| JsonValue[] \| null \| boolean \| number \| string` | `XVariant1 \| list[Any] \| None \| bool \| float \| str` |
//! | no `type` but array keywords (`items`, `prefixItems`) | the array they describe, or any other value: `{ [key: string]: unknown } \| T[] \| null \| ...` | `dict[str, Any] \| list[T] \| None \| ...` |
//! | no `type` and only other keywords (`minLength`, `format`, ...) | `JsonValue` | `Any` |
//! | malformed `properties`, `required`, `items`, `additionalProperties`, `oneOf`, `enum` | `unknown` | `Any` |
//! | nested deeper than [`MAX_DEPTH`] levels | `unknown` | `Any` |
//!
//! Each row that reads as `unknown`/`Any` (or drops what a tuple, `patternProperties` or an
//! `additionalProperties` schema beside properties says) is reported by [`schema_warnings`] as
//! a [`Degradation`] at the node's JSON pointer. Rows that only widen because a language has no
//! such type (`integer` as `number`, a float literal as `float`, Python's open objects below)
//! and keywords that only narrow (`minLength`, `format`, `anyOf` beside `type`) are not.
//!
//! Outside an SDK render, [`json_schema_to_py`] has no module to declare a `TypedDict` in, so
//! an object with properties is `dict[str, Any]` there.
//!
//! **Open objects in Python.** A plain `TypedDict` rejects a dict literal with a key it does not
//! declare. PEP 728 lets a `TypedDict` admit them (`extra_items=Any`), but mypy does not
//! implement it (mypy 2.4 refuses the keyword and still rejects the key), so an open object with
//! declared keys is written `Name | dict[str, Any]` where it is used, and a dict with further keys
//! type-checks as the `dict` alternative. The price: for an open object, mypy holds a dict
//! literal to the declared keys' types only when it matches the `TypedDict`, since one that does
//! not falls through to `dict[str, Any]`; a closed object (`additionalProperties: false`) is the
//! `TypedDict` alone and checked in full. Every rendered type, in both languages, accepts every
//! value its schema accepts.
//!
//! [`MAX_DEPTH`]: crate::MAX_DEPTH
//! [`schema_warnings`]: crate::schema_warnings
//! [`Degradation`]: crate::Degradation
//! [`json_schema_to_py`]: crate::json_schema_to_py
