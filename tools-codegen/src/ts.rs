//! TypeScript types from the type model.
//!
//! Types are written inline (no named declarations besides the fixed SDK names), so two tools'
//! types can never collide, whatever their titles say. Objects that admit extra keys get an index
//! signature `[key: string]: unknown`, so a value with keys the schema allows but does not
//! declare still type-checks.

use crate::lower::{Extra, Lit, ObjectTy, Ty};
use crate::text::{is_ts_bare_key, push_ts_doc, ts_string};
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
            let mut seen: Vec<std::ops::Range<usize>> = Vec::with_capacity(members.len());
            for member in members {
                let before = out.len();
                if !seen.is_empty() {
                    out.push_str(" | ");
                }
                let start = out.len();
                write_ty(member, layout, out);
                let text = &out[start..];
                if seen.iter().any(|r| &out[r.clone()] == text) {
                    out.truncate(before);
                } else {
                    seen.push(start..out.len());
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

fn write_object(object: &ObjectTy<'_>, layout: Layout, out: &mut String) {
    let index: Option<Cow<'static, str>> = match &object.extra {
        Extra::Closed if object.props.is_empty() => Some(Cow::Borrowed("never")),
        Extra::Closed => None,
        Extra::Open => Some(Cow::Borrowed("unknown")),
        Extra::Map(value) => Some(Cow::Owned(ts_type(value, layout.deeper()))),
    };
    match layout {
        Layout::Compact => {
            let mut parts = Vec::new();
            for prop in &object.props {
                let optional = if prop.required { "" } else { "?" };
                let mut ty = String::new();
                write_prop_type(prop.key, prop.required, &prop.ty, layout, &mut ty);
                parts.push(format!("{}{optional}: {ty}", ts_key(prop.key)));
            }
            if let Some(index) = index {
                parts.push(format!("[key: string]: {index}"));
            }
            out.push_str("{ ");
            out.push_str(&parts.join("; "));
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
            if let Some(index) = index {
                out.push_str(&inner);
                out.push_str("[key: string]: ");
                out.push_str(&index);
                out.push_str(";\n");
            }
            out.push_str(&inner[..indent]);
            out.push('}');
        }
    }
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
}
