//! TypeScript types from the type model.
//!
//! Types are written inline (no named declarations besides the fixed SDK names), so two tools'
//! types can never collide, whatever their titles say. Objects that admit extra keys get an index
//! signature `[key: string]: unknown`, so a value with keys the schema allows but does not
//! declare still type-checks.

use crate::distinct::TextPieces;
use crate::lower::{Extra, Lit, ObjectTy, SHARED_TYPE_BYTES, Ty, lower_root};
use crate::text::{is_ts_bare_key, push_ts_doc, ts_string};
use serde_json::Value;
use std::borrow::Cow;

/// How a type is laid out.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Layout {
    /// Objects span lines, properties carry doc comments; `indent` is the current depth in
    /// spaces (the closing brace's column).
    Multi { indent: usize },
    /// Everything on one line, no comments (for tables).
    Compact,
}

impl Layout {
    fn deeper(self) -> Layout {
        match self {
            Layout::Multi { indent } => Layout::Multi { indent: indent + 2 },
            Layout::Compact => Layout::Compact,
        }
    }
}

/// The members every object inherits from `Object.prototype` (as `lib.es5.d.ts` declares them).
/// An object literal that omits an optional property of one of these names still has it,
/// inherited, and TypeScript checks the inherited member against the property type, so such an
/// optional property's type also admits the inherited member (`constructor?: string |
/// Object["constructor"]`): that is also what reading it from a value without the key returns.
const OBJECT_MEMBERS: &[&str] = &[
    "constructor",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
    "toLocaleString",
    "toString",
    "valueOf",
];

/// The type of a property, widened by the inherited member for an optional property named like
/// an `Object.prototype` member (see [`OBJECT_MEMBERS`]).
fn write_prop_type(key: &str, required: bool, ty: &Ty<'_>, layout: Layout, out: &mut String) {
    write_ty(ty, layout, out);
    if !required && OBJECT_MEMBERS.contains(&key) {
        out.push_str(" | Object[");
        out.push_str(&ts_string(key));
        out.push(']');
    }
}

/// A TypeScript key: bare when it is a plain identifier and not a reserved word, quoted otherwise.
pub(crate) fn ts_key(key: &str) -> String {
    if is_ts_bare_key(key) {
        key.to_owned()
    } else {
        ts_string(key)
    }
}

/// The TypeScript type of one raw JSON Schema, laid out over several lines with property doc
/// comments. Never fails: see [`schema_rules`]. The text may refer to `JsonValue`, which the
/// SDK declares.
///
/// [`schema_rules`]: crate::schema_rules
pub fn json_schema_to_ts(schema: &Value) -> String {
    ts_type(&lower_root(schema), Layout::Multi { indent: 0 })
}

/// Writes `ty` as a TypeScript type expression.
pub(crate) fn ts_type(ty: &Ty<'_>, layout: Layout) -> String {
    let mut out = String::new();
    write_ty(ty, layout, &mut out);
    out
}

fn write_literal(value: &Lit<'_>, out: &mut String) {
    match value {
        Lit::String(s) => out.push_str(&ts_string(s)),
        Lit::Null => out.push_str("null"),
        Lit::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Lit::Number(n) => {
            use std::fmt::Write as _;
            let _ = write!(out, "{n}");
        }
    }
}

/// True when `ty` renders as one token that `T[]` can follow without parentheses.
fn is_atom(ty: &Ty<'_>) -> bool {
    match ty {
        Ty::Literals(values) => {
            values.len() == 1
                && !values
                    .iter()
                    .any(|v| matches!(v, Lit::Number(n) if n.as_f64().is_some_and(|n| n < 0.0)))
        }
        Ty::Array(inner) => is_atom(inner),
        Ty::Union(_) | Ty::Object(_) => false,
        _ => true,
    }
}

fn write_ty(ty: &Ty<'_>, layout: Layout, out: &mut String) {
    match ty {
        Ty::Unknown => out.push_str("unknown"),
        Ty::Json => out.push_str("JsonValue"),
        Ty::Null => out.push_str("null"),
        Ty::Boolean => out.push_str("boolean"),
        Ty::String => out.push_str("string"),
        Ty::Number | Ty::Integer => out.push_str("number"),
        Ty::Literals(values) => {
            for (i, value) in values.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                write_literal(value, out);
            }
        }
        Ty::Array(element) => {
            if is_atom(element) {
                write_ty(element, layout, out);
                out.push_str("[]");
            } else {
                out.push_str("Array<");
                write_ty(element, layout, out);
                out.push('>');
            }
        }
        Ty::Union(members) => {
            // Members are written in place; one whose text repeats an earlier member's is
            // taken back out again.
            let mut seen = TextPieces::default();
            let mut first = true;
            for member in members {
                let before = out.len();
                if !first {
                    out.push_str(" | ");
                }
                let start = out.len();
                write_ty(member, layout, out);
                if seen.insert(out, start..out.len()) {
                    first = false;
                } else {
                    out.truncate(before);
                }
            }
        }
        Ty::Object(object) => write_object(object, layout, out),
    }
}

/// `n` spaces, without an allocation for the usual depths.
fn spaces(n: usize) -> Cow<'static, str> {
    const SPACES: &str = "                                                                ";
    match SPACES.get(..n) {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(" ".repeat(n)),
    }
}

/// Writes a key bare or quoted (see [`ts_key`]) without an intermediate string when bare.
fn write_key(key: &str, out: &mut String) {
    if is_ts_bare_key(key) {
        out.push_str(key);
    } else {
        out.push_str(&ts_string(key));
    }
}

/// True when `ty` has an object type in it (outside objects: only arrays and unions are
/// looked into), so its text in the multi-line layout depends on where it is written.
fn has_object(ty: &Ty<'_>) -> bool {
    match ty {
        Ty::Object(_) => true,
        Ty::Array(element) => has_object(element),
        Ty::Union(members) => members.iter().any(has_object),
        _ => false,
    }
}

/// Writes an object type. Declared properties come first, then the undeclared required keys,
/// then the index signature. The undeclared keys share one type (see
/// [`crate::lower::Undeclared`]): with one key, or a type without objects whose text is at
/// most [`SHARED_TYPE_BYTES`] long, each key is written with it; otherwise the type is
/// written once, after the object, as `{ ... } & Record<"a" | "b", T>`. Either way the type is
/// written once, so nested objects built this way cost their size, not a power of it.
fn write_object(object: &ObjectTy<'_>, layout: Layout, out: &mut String) {
    let Some(undeclared) = &object.undeclared else {
        return write_members(object, None, layout, out);
    };
    let keys = undeclared.keys.as_slice();
    if keys.len() == 1 {
        return write_members(
            object,
            Some((keys, Shared::Ty(&undeclared.ty))),
            layout,
            out,
        );
    }
    if has_object(&undeclared.ty) {
        // An object's text depends on its indentation, so it is written where it goes.
        write_members(object, None, layout, out);
        write_record(keys, |out| write_ty(&undeclared.ty, layout, out), out);
        return;
    }
    let text = ts_type(&undeclared.ty, layout.deeper());
    if text.len() > SHARED_TYPE_BYTES {
        write_members(object, None, layout, out);
        write_record(keys, |out| out.push_str(&text), out);
    } else {
        write_members(object, Some((keys, Shared::Text(&text))), layout, out);
    }
}

/// The type of undeclared required keys written inside the braces.
#[derive(Clone, Copy)]
enum Shared<'t, 'a> {
    /// Written from the type (for one key).
    Ty(&'t Ty<'a>),
    /// Its text, written already.
    Text(&'t str),
}

/// ` & Record<"a" | "b", T>`, with `T` written by `write`.
fn write_record(keys: &[&str], write: impl FnOnce(&mut String), out: &mut String) {
    out.push_str(" & Record<");
    for (i, key) in keys.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        out.push_str(&ts_string(key));
    }
    out.push_str(", ");
    write(out);
    out.push('>');
}

/// Writes the braces of an object type: its declared properties, the undeclared required
/// keys given with their type (when it is written inside), and the index signature.
fn write_members(
    object: &ObjectTy<'_>,
    undeclared: Option<(&[&str], Shared<'_, '_>)>,
    layout: Layout,
    out: &mut String,
) {
    let (undeclared, shared): (&[&str], _) = undeclared.unwrap_or((&[], Shared::Text("")));
    let write_shared = |out: &mut String| match shared {
        Shared::Ty(ty) => write_ty(ty, layout.deeper(), out),
        Shared::Text(text) => out.push_str(text),
    };
    let index = match &object.extra {
        Extra::Closed if object.has_no_keys() => Some(Index::Never),
        Extra::Closed => None,
        Extra::Open => Some(Index::Unknown),
        Extra::Map(value) => Some(Index::Map(value)),
    };
    let write_index = |index: &Index<'_, '_>, out: &mut String| match index {
        Index::Never => out.push_str("never"),
        Index::Unknown => out.push_str("unknown"),
        Index::Map(value) => write_ty(value, layout.deeper(), out),
    };
    match layout {
        Layout::Compact => {
            out.push_str("{ ");
            let mut first = true;
            let mut separate = |out: &mut String| {
                if !first {
                    out.push_str("; ");
                }
                first = false;
            };
            for prop in &object.props {
                separate(out);
                write_key(prop.key, out);
                if !prop.required {
                    out.push('?');
                }
                out.push_str(": ");
                write_prop_type(prop.key, prop.required, &prop.ty, layout, out);
            }
            for key in undeclared {
                separate(out);
                write_key(key, out);
                out.push_str(": ");
                write_shared(out);
            }
            if let Some(index) = &index {
                separate(out);
                out.push_str("[key: string]: ");
                write_index(index, out);
            }
            out.push_str(" }");
        }
        Layout::Multi { indent } => {
            let inner = spaces(indent + 2);
            out.push_str("{\n");
            for prop in &object.props {
                if let Some(doc) = prop.doc {
                    push_ts_doc(out, doc, &inner);
                }
                let optional = if prop.required { "" } else { "?" };
                out.push_str(&inner);
                write_key(prop.key, out);
                out.push_str(optional);
                out.push_str(": ");
                write_prop_type(prop.key, prop.required, &prop.ty, layout.deeper(), out);
                out.push_str(";\n");
            }
            for key in undeclared {
                out.push_str(&inner);
                write_key(key, out);
                out.push_str(": ");
                write_shared(out);
                out.push_str(";\n");
            }
            if let Some(index) = &index {
                out.push_str(&inner);
                out.push_str("[key: string]: ");
                write_index(index, out);
                out.push_str(";\n");
            }
            out.push_str(&inner[..indent]);
            out.push('}');
        }
    }
}

/// What an object's index signature admits.
enum Index<'t, 'a> {
    Never,
    Unknown,
    Map(&'t Ty<'a>),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::lower;
    use serde_json::json;

    fn ts(schema: serde_json::Value) -> String {
        ts_type(&lower(&schema), Layout::Compact)
    }

    #[test]
    fn scalars_and_unions() {
        assert_eq!(ts(json!({"type": ["string", "null"]})), "string | null");
        assert_eq!(
            ts(json!({"enum": ["a", 1, true, null]})),
            "\"a\" | 1 | true | null"
        );
        assert_eq!(
            ts(json!({"type": "array", "items": {"type": ["string", "null"]}})),
            "Array<string | null>"
        );
        assert_eq!(ts(json!({"type": "array"})), "JsonValue[]");
        assert_eq!(
            ts(json!({"type": "array", "items": {"const": -1}})),
            "Array<-1>"
        );
        assert_eq!(ts(json!({"anyOf": []})), "unknown");
    }

    #[test]
    fn objects() {
        assert_eq!(
            ts(
                json!({"type": "object", "properties": {"_from": {"type": "string"}, "a-b": {}},
                      "required": ["_from"], "additionalProperties": false})
            ),
            "{ _from: string; \"a-b\"?: JsonValue }"
        );
        assert_eq!(
            ts(json!({"type": "object", "additionalProperties": false})),
            "{ [key: string]: never }"
        );
        assert_eq!(
            ts(json!({"type": "object", "additionalProperties": {"type": "number"}})),
            "{ [key: string]: number }"
        );
        assert_eq!(
            ts(json!({"type": "object", "properties": {"new": {"type": "string"}}})),
            "{ \"new\"?: string; [key: string]: unknown }"
        );
        assert_eq!(
            ts(
                json!({"type": "object", "properties": {"toString": {"type": "string"}},
                      "additionalProperties": false})
            ),
            "{ toString?: string | Object[\"toString\"] }"
        );
    }

    /// Object keywords without `type`: the object, or any other value.
    #[test]
    fn untyped_objects_admit_other_values() {
        assert_eq!(
            ts(json!({"properties": {"a": {"type": "string"}}, "additionalProperties": false})),
            "{ a?: string } | JsonValue[] | null | boolean | number | string"
        );
        assert_eq!(
            ts(json!({"items": {"type": "string"}})),
            "{ [key: string]: unknown } | string[] | null | boolean | number | string"
        );
    }

    #[test]
    fn undeclared_keys_write_their_type_once_unless_short() {
        // One key, or a short type without objects: written with each key.
        assert_eq!(
            ts(
                json!({"type": "object", "required": ["a"], "additionalProperties": {"type": "object"}})
            ),
            "{ a: { [key: string]: unknown }; [key: string]: unknown }"
        );
        assert_eq!(
            ts(
                json!({"type": "object", "required": ["a", "b"], "additionalProperties": {"type": "integer"}})
            ),
            "{ a: number; b: number; [key: string]: unknown }"
        );
        assert_eq!(
            ts(json!({"type": "object", "required": ["a", "b"]})),
            "{ a: JsonValue; b: JsonValue; [key: string]: unknown }"
        );
        // A type with an object, or a long one: once, after the object.
        assert_eq!(
            ts(
                json!({"type": "object", "properties": {"x": {}}, "required": ["a", "b"],
                      "additionalProperties": {"type": "object", "properties": {"y": {"type": "string"}}}})
            ),
            "{ x?: JsonValue; [key: string]: unknown } & Record<\"a\" | \"b\", { y?: string; [key: string]: unknown }>"
        );
        let long: Vec<String> = (0..10).map(|i| format!("value{i}")).collect();
        assert_eq!(
            ts(
                json!({"type": "object", "required": ["a", "b"], "additionalProperties": {"enum": long}})
            ),
            format!(
                "{{ [key: string]: unknown }} & Record<\"a\" | \"b\", {}>",
                long.iter()
                    .map(|v| format!("\"{v}\""))
                    .collect::<Vec<_>>()
                    .join(" | ")
            )
        );
        // Multi-line, the shared type is indented as the object is.
        let schema = json!({"type": "object", "required": ["a", "b"],
                            "additionalProperties": {"type": "object", "properties": {"y": {"type": "string"}}}});
        assert_eq!(
            ts_type(&lower(&schema), Layout::Multi { indent: 2 }),
            "{\n    [key: string]: unknown;\n  } & Record<\"a\" | \"b\", {\n    y?: string;\n    [key: string]: unknown;\n  }>"
        );
    }

    /// Required keys over an `additionalProperties` type that is built the same way, 40
    /// levels deep: the text grows with the levels (a copy per key doubled it at each level).
    #[test]
    fn nested_undeclared_keys_grow_linearly() {
        let mut schema = json!({"type": "string"});
        for _ in 0..40 {
            schema =
                json!({"type": "object", "additionalProperties": schema, "required": ["a", "b"]});
        }
        for layout in [Layout::Compact, Layout::Multi { indent: 0 }] {
            let text = ts_type(&lower(&schema), layout);
            assert!(text.len() < 40 * 100, "{} bytes: {text:.300}", text.len());
        }
    }

    /// A union's members are told apart from earlier ones in about one comparison each.
    #[test]
    fn long_unions_are_written_in_linear_work() {
        use crate::distinct::work;
        let n = 10_000;
        let alternatives: Vec<serde_json::Value> = (0..n)
            .map(|i| {
                let key = format!("p{i}");
                json!({"type": "object", "properties": {&key: {"type": "integer"}}, "required": [key],
                       "additionalProperties": false})
            })
            .chain([json!({"type": "integer"}), json!({"type": "number"})])
            .collect();
        let schema = json!({"oneOf": alternatives});
        let ty = lower(&schema);
        work::take();
        let text = ts_type(&ty, Layout::Compact);
        let steps = work::take();
        assert!(steps < 2 * n as u64, "{steps} comparisons");
        // `integer` and `number` both read `number`, which is written once.
        assert!(
            text.starts_with("{ p0: number } | { p1: number } | "),
            "{text:.100}"
        );
        assert!(
            text.ends_with("| { p9999: number } | number"),
            "{text:.100}"
        );
    }
}
