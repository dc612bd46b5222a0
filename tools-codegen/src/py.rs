//! Python types from the type model.
//!
//! Inside the SDK every object with declared properties (or a closed object) becomes a named
//! `TypedDict`; its name comes from the tool and the path to it (`SearchArgs`,
//! `SearchArgsFilter`, `SearchOutputItem`, `SearchArgsModeVariant2`), made unique across the
//! whole module. A `TypedDict` uses the class form when every key is a plain identifier that
//! shadows nothing, and the functional form (`X = TypedDict("X", {...})`) otherwise, so wire names
//! are kept exactly. Definitions are emitted children first, so no name is used before it is
//! defined.
//!
//! Python's `TypedDict` cannot admit keys it does not declare (mypy does not support PEP 728), so
//! an open object with declared properties is typed by those properties only: a dict literal
//! with further keys is rejected by mypy even though the schema allows it. This is the one place
//! where a rendered type is narrower than its schema; an open object without declared properties
//! is `dict[str, Any]` and accepts every key.

use crate::lower::{Extra, Lit, ObjectTy, Ty};
use crate::text::{is_ascii_identifier, is_py_keyword, pascal_case, py_string};
use std::collections::BTreeSet;

/// Names the SDK module binds or reads besides the generated ones: they are never taken by a
/// generated type, a class-form field, or a tool method.
pub(crate) const PY_MODULE_NAMES: &[&str] = &[
    "annotations",
    "Any",
    "Awaitable",
    "Callable",
    "Exception",
    "Literal",
    "NotRequired",
    "Protocol",
    "ToolCallError",
    "Tools",
    "TypedDict",
    "bool",
    "dict",
    "float",
    "int",
    "list",
    "object",
    "overload",
    "self",
    "str",
    "tools",
    "type",
];

/// One `TypedDict` declaration.
#[derive(Debug, Clone)]
pub(crate) struct TypedDictDef {
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<FieldDef>,
}

/// One `TypedDict` key.
#[derive(Debug, Clone)]
pub(crate) struct FieldDef {
    pub key: String,
    pub ty: String,
    pub required: bool,
    pub doc: Option<String>,
}

/// The naming context of one SDK render: the generated definitions and the names taken.
#[derive(Debug)]
pub(crate) struct PyModule {
    /// Definitions in emission order (every definition after the ones it refers to).
    pub defs: Vec<TypedDictDef>,
    taken: BTreeSet<String>,
}

impl PyModule {
    /// A module in which `tool_names` (the tools' wire names) are reserved as well.
    pub(crate) fn new<'a>(tool_names: impl IntoIterator<Item = &'a str>) -> PyModule {
        let mut taken: BTreeSet<String> = PY_MODULE_NAMES.iter().map(|s| (*s).to_owned()).collect();
        taken.extend(tool_names.into_iter().map(str::to_owned));
        PyModule {
            defs: Vec::new(),
            taken,
        }
    }

    /// Claims a unique type name starting from `base` (`Base`, `Base2`, `Base3`, ...).
    fn claim(&mut self, base: &str) -> String {
        let base = if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            format!("T{base}")
        } else {
            base.to_owned()
        };
        let mut candidate = base.clone();
        let mut n = 2u64;
        while self.taken.contains(&candidate) || is_py_keyword(&candidate) {
            candidate = format!("{base}{n}");
            n += 1;
        }
        self.taken.insert(candidate.clone());
        candidate
    }

    /// The base type name for a tool's arguments (`Args`) or output (`Output`).
    pub(crate) fn root_base(tool_name: &str, suffix: &str) -> String {
        let pascal = pascal_case(tool_name);
        if pascal.is_empty() {
            format!("Tool{suffix}")
        } else {
            format!("{pascal}{suffix}")
        }
    }

    /// True when `key` can be a class-form `TypedDict` field: a plain identifier, not a keyword,
    /// not a dunder-style name (it would be mangled), and not a name the module binds (it would
    /// shadow that name for the annotations that follow in the class body).
    pub(crate) fn is_class_field(&self, key: &str) -> bool {
        is_ascii_identifier(key, false)
            && !is_py_keyword(key)
            && !key.starts_with("__")
            && !self.taken.contains(key)
    }

    /// True when a tool can be an attribute of `tools`: a plain identifier, not a keyword, no
    /// leading underscore (private and mangled names), and not a name used in the annotations of
    /// the `Tools` class body. (Generated type names never equal a tool name: tool names are
    /// reserved when the module is created.)
    pub(crate) fn is_method_name(&self, name: &str) -> bool {
        is_ascii_identifier(name, false)
            && !is_py_keyword(name)
            && !name.starts_with('_')
            && !PY_MODULE_NAMES.contains(&name)
    }
}

fn literal(value: &Lit<'_>) -> Option<String> {
    match value {
        Lit::String(s) => Some(py_string(s)),
        Lit::Null => Some("None".to_owned()),
        Lit::Bool(true) => Some("True".to_owned()),
        Lit::Bool(false) => Some("False".to_owned()),
        // `Literal` admits ints only; a float member widens to `float`.
        Lit::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Lit::Number(_) => None,
    }
}

/// Writes `ty` as a Python type expression. With a module, objects become named `TypedDict`s
/// (their names derived from `hint`); without one, every object with declared properties is
/// `dict[str, Any]`.
///
/// `hint` computes the base name of a `TypedDict` for `ty`; it is called only when one is
/// declared.
pub(crate) fn py_type(
    ty: &Ty<'_>,
    module: &mut Option<&mut PyModule>,
    hint: &dyn Fn() -> String,
) -> String {
    match ty {
        Ty::Unknown | Ty::Json => "Any".to_owned(),
        Ty::Null => "None".to_owned(),
        Ty::Boolean => "bool".to_owned(),
        Ty::String => "str".to_owned(),
        Ty::Number => "float".to_owned(),
        Ty::Integer => "int".to_owned(),
        Ty::Literals(values) => {
            let mut parts: Vec<String> = Vec::new();
            let mut float = false;
            for value in values {
                match literal(value) {
                    Some(text) => parts.push(text),
                    None => float = true,
                }
            }
            let mut out = String::new();
            if !parts.is_empty() {
                out = format!("Literal[{}]", parts.join(", "));
            }
            if float {
                if !out.is_empty() {
                    out.push_str(" | ");
                }
                out.push_str("float");
            }
            out
        }
        Ty::Array(element) => format!(
            "list[{}]",
            py_type(element, module, &|| format!("{}Item", hint()))
        ),
        Ty::Union(members) => {
            let mut seen: Vec<String> = Vec::with_capacity(members.len());
            for (i, member) in members.iter().enumerate() {
                let text = py_type(member, module, &|| format!("{}Variant{}", hint(), i + 1));
                if text == "Any" {
                    return text;
                }
                if !seen.contains(&text) {
                    seen.push(text);
                }
            }
            seen.join(" | ")
        }
        Ty::Object(object) => py_object(object, module, hint),
    }
}

fn py_object(
    object: &ObjectTy<'_>,
    module: &mut Option<&mut PyModule>,
    hint: &dyn Fn() -> String,
) -> String {
    let typed_dict = !object.props.is_empty() || object.extra == Extra::Closed;
    let claimed = if typed_dict {
        module.as_deref_mut().map(|m| m.claim(&hint()))
    } else {
        None
    };
    if let Some(name) = claimed {
        let mut fields = Vec::with_capacity(object.props.len());
        for prop in &object.props {
            let ty = py_type(&prop.ty, module, &|| {
                let key_part = pascal_case(prop.key);
                if key_part.is_empty() {
                    format!("{name}Field")
                } else {
                    format!("{name}{key_part}")
                }
            });
            fields.push(FieldDef {
                key: prop.key.to_owned(),
                ty,
                required: prop.required,
                doc: prop.doc.map(str::to_owned),
            });
        }
        if let Some(m) = module.as_deref_mut() {
            m.defs.push(TypedDictDef {
                name: name.clone(),
                doc: object.doc.map(str::to_owned),
                fields,
            });
        }
        return name;
    }
    match (&object.extra, object.props.is_empty()) {
        (Extra::Map(value), true) => {
            let value = py_type(value, module, &|| format!("{}Value", hint()));
            format!("dict[str, {value}]")
        }
        _ => "dict[str, Any]".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::lower;
    use serde_json::json;

    fn py(schema: serde_json::Value) -> String {
        py_type(&lower(&schema), &mut None, &|| "T".to_owned())
    }

    #[test]
    fn standalone_types() {
        assert_eq!(py(json!({"type": ["integer", "null"]})), "int | None");
        assert_eq!(
            py(json!({"enum": ["a", 1, 1.5, null, true]})),
            "Literal[\"a\", 1, None, True] | float"
        );
        assert_eq!(py(json!({"type": "array"})), "list[Any]");
        assert_eq!(
            py(json!({"type": "object", "additionalProperties": {"type": "string"}})),
            "dict[str, str]"
        );
        assert_eq!(
            py(json!({"type": "object", "properties": {"a": {"type": "string"}}})),
            "dict[str, Any]"
        );
        assert_eq!(
            py(json!({"oneOf": [{"type": "string"}, {"$ref": "#"}]})),
            "Any"
        );
    }

    #[test]
    fn names_are_unique_and_children_come_first() {
        let mut module = PyModule::new(["FooArgs"]);
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}}}});
        let ty = lower(&schema);
        let name = py_type(&ty, &mut Some(&mut module), &|| "FooArgs".to_owned());
        assert_eq!(name, "FooArgs2");
        let names: Vec<&str> = module.defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["FooArgs2A", "FooArgs2"]);
        assert!(!module.is_class_field("FooArgs2A"));
        assert!(!module.is_class_field("__proto__"));
        assert!(module.is_class_field("_from"));
        assert!(!module.is_method_name("_private"));
        assert!(!module.is_method_name("overload"));
    }
}
