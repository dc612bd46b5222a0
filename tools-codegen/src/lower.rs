//! Reading a raw JSON Schema value into the small type model both languages render.
//!
//! The catalog holds raw JSON Schema (it may come from an MCP server), so this reader accepts any
//! [`serde_json::Value`] and never fails: whatever the supported subset cannot express becomes
//! [`Ty::Unknown`], a type that accepts every value. The rules, construct by construct:
//!
//! | schema | read as |
//! | --- | --- |
//! | `{}` (no constraining keyword) | unconstrained JSON ([`Ty::Json`]) |
//! | `true`, `false`, `null`, a number, string or array in schema position | unknown |
//! | `$ref`, `$dynamicRef`, `$recursiveRef` | unknown (references are not followed) |
//! | `const` / `enum` of scalars | the literal values; a non-scalar member makes it unknown |
//! | `type` a known name, or an array of them (`["string", "null"]`) | that type, or the union |
//! | `type` an unknown name, not a string or array, or an empty array | unknown |
//! | `oneOf` (no `type`) | the union of its alternatives |
//! | `anyOf`, `allOf`, `not`, `if` (no `type`) | unknown |
//! | `anyOf`, `allOf`, `not`, `if`, `oneOf` beside a `type` | ignored: they only narrow the `type` |
//! | no `type`, but `properties`/`required`/`additionalProperties`/`patternProperties` | an object |
//! | no `type`, but `items`/`prefixItems` | an array |
//! | `items` absent or `true` | elements of unconstrained JSON |
//! | `items` an array (tuple form) or `prefixItems` present | elements of unknown type |
//! | `additionalProperties` absent or `true` | an open object (extra keys of unknown type) |
//! | `additionalProperties: false` | a closed object |
//! | `additionalProperties` a schema | a map; with declared properties, extra keys of unknown type |
//! | `patternProperties` | extra keys of unknown type (the object is open) |
//! | a key in `required` but not in `properties` | a required key of the extra-key type |
//! | a malformed keyword (`properties` not an object, `required` not strings, ...) | unknown |
//! | nesting deeper than [`MAX_DEPTH`] | unknown |
//!
//! Every unknown or ignored construct widens the type, never narrows it, so the rendered type
//! accepts every value the schema accepts.
//!
//! The reader recurses at most [`MAX_DEPTH`] levels and treats anything deeper as unknown, so a
//! schema nested 100,000 levels deep costs 48 stack frames. The bound also keeps the rendered
//! types within what `tsc` can compare: past about 100 nested levels it reports "excessive stack
//! depth" when checking a value against the type.

use crate::json::{Json, View};
use serde_json::Number;

/// Schema levels read before a subtree degrades to unknown.
pub const MAX_DEPTH: usize = 48;

/// A type in the renderers' model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ty<'a> {
    /// Outside the subset: accepts anything (TypeScript `unknown`, Python `Any`).
    Unknown,
    /// Unconstrained JSON (TypeScript `JsonValue`, Python `Any`).
    Json,
    Null,
    Boolean,
    String,
    Number,
    Integer,
    /// Scalar literal values (strings, numbers, booleans, null), deduplicated, in source order.
    Literals(Vec<Lit<'a>>),
    Array(Box<Ty<'a>>),
    Object(Box<ObjectTy<'a>>),
    /// Two or more alternatives; never contains `Unknown` or `Json` (they absorb the union).
    Union(Vec<Ty<'a>>),
}

/// A scalar literal of an `enum` or `const`. Equal when the JSON values are equal as
/// `serde_json` compares them (`1` and `1.0` differ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Lit<'a> {
    Null,
    Bool(bool),
    Number(&'a Number),
    String(&'a str),
}

/// An object type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ObjectTy<'a> {
    /// Declared properties in source order, then keys that are required but undeclared.
    pub props: Vec<Prop<'a>>,
    /// What keys beyond `props` may hold.
    pub extra: Extra<'a>,
    /// The object's own description (or title).
    pub doc: Option<&'a str>,
}

/// One property of an object type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prop<'a> {
    /// The exact wire name.
    pub key: &'a str,
    pub ty: Ty<'a>,
    pub required: bool,
    /// The property schema's description (or title).
    pub doc: Option<&'a str>,
}

/// The keys an object admits beyond its declared properties.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Extra<'a> {
    /// `additionalProperties: false`: none.
    Closed,
    /// Any key, any value.
    Open,
    /// Any key, values of this type (a map).
    Map(Box<Ty<'a>>),
}

/// Reads a raw schema. Total: never fails, never recurses deeper than [`MAX_DEPTH`].
pub(crate) fn lower<J: Json>(schema: &J) -> Ty<'_> {
    lower_at(schema, 0)
}

fn lower_at<J: Json>(schema: &J, depth: usize) -> Ty<'_> {
    if depth > MAX_DEPTH {
        // Past the depth, any value. Not `JsonValue`: checking a deep value against that
        // recursive type makes `tsc --strict` fail with "Excessive stack depth", while
        // `unknown` (and Python's `Any`) admit every JSON value as well.
        return Ty::Unknown;
    }
    match schema.view() {
        View::Object => lower_map(schema, depth),
        _ => Ty::Unknown,
    }
}

/// The description of a schema, or its title when it has none.
pub(crate) fn doc_of<J: Json>(schema: &J) -> Option<&str> {
    let mut description = None;
    let mut title = None;
    for (key, value) in schema.entries() {
        match key {
            "description" => description = Some(value),
            "title" => title = Some(value),
            _ => {}
        }
    }
    let text = description
        .and_then(J::as_str)
        .filter(|s| !s.trim().is_empty())
        .or_else(|| title.and_then(J::as_str))?;
    (!text.trim().is_empty()).then_some(text)
}

/// The keywords the reader looks at, found in one pass over a schema object.
struct Keywords<'a, J> {
    reference: bool,
    narrowing: bool,
    constant: Option<&'a J>,
    enumeration: Option<&'a J>,
    types: Option<&'a J>,
    one_of: Option<&'a J>,
    properties: Option<&'a J>,
    required: Option<&'a J>,
    additional: Option<&'a J>,
    patterns: Option<&'a J>,
    items: Option<&'a J>,
    prefix_items: Option<&'a J>,
}

impl<'a, J: Json> Keywords<'a, J> {
    fn scan(map: &'a J) -> Keywords<'a, J> {
        let mut k = Keywords {
            reference: false,
            narrowing: false,
            constant: None,
            enumeration: None,
            types: None,
            one_of: None,
            properties: None,
            required: None,
            additional: None,
            patterns: None,
            items: None,
            prefix_items: None,
        };
        for (key, value) in map.entries() {
            match key {
                "$ref" | "$dynamicRef" | "$recursiveRef" => k.reference = true,
                "anyOf" | "allOf" | "not" | "if" => k.narrowing = true,
                "const" => k.constant = Some(value),
                "enum" => k.enumeration = Some(value),
                "type" => k.types = Some(value),
                "oneOf" => k.one_of = Some(value),
                "properties" => k.properties = Some(value),
                "required" => k.required = Some(value),
                "additionalProperties" => k.additional = Some(value),
                "patternProperties" => k.patterns = Some(value),
                "items" => k.items = Some(value),
                "prefixItems" => k.prefix_items = Some(value),
                _ => {}
            }
        }
        k
    }

    fn implies_object(&self) -> bool {
        self.properties.is_some()
            || self.required.is_some()
            || self.additional.is_some()
            || self.patterns.is_some()
    }

    fn implies_array(&self) -> bool {
        self.items.is_some() || self.prefix_items.is_some()
    }
}

fn lower_map<J: Json>(map: &J, depth: usize) -> Ty<'_> {
    let k = Keywords::scan(map);
    if k.reference {
        return Ty::Unknown;
    }
    if let Some(value) = k.constant {
        return literals(std::slice::from_ref(value));
    }
    if let Some(values) = k.enumeration {
        return match values.view() {
            View::Array(values) if !values.is_empty() => literals(values),
            _ => Ty::Unknown,
        };
    }
    match k.types.map(J::view) {
        Some(View::String(name)) => lower_type(name, &k, depth),
        Some(View::Array(names)) => {
            if names.is_empty() {
                return Ty::Unknown;
            }
            let mut members = Vec::with_capacity(names.len());
            for name in names {
                match name.view() {
                    View::String(name) => members.push(lower_type(name, &k, depth)),
                    _ => return Ty::Unknown,
                }
            }
            union(members)
        }
        Some(_) => Ty::Unknown,
        None => {
            if let Some(alternatives) = k.one_of {
                return match alternatives.view() {
                    View::Array(items) if !items.is_empty() => {
                        union(items.iter().map(|s| lower_at(s, depth + 1)).collect())
                    }
                    _ => Ty::Unknown,
                };
            }
            if k.implies_object() {
                return lower_object(&k, depth);
            }
            if k.implies_array() {
                return lower_array(&k, depth);
            }
            if k.narrowing {
                return Ty::Unknown;
            }
            Ty::Json
        }
    }
}

fn lower_type<'a, J: Json>(name: &str, k: &Keywords<'a, J>, depth: usize) -> Ty<'a> {
    match name {
        "null" => Ty::Null,
        "boolean" => Ty::Boolean,
        "string" => Ty::String,
        "number" => Ty::Number,
        "integer" => Ty::Integer,
        "array" => lower_array(k, depth),
        "object" => lower_object(k, depth),
        _ => Ty::Unknown,
    }
}

/// The literal of a scalar value; `None` for an array or an object.
fn literal<J: Json>(value: &J) -> Option<Lit<'_>> {
    match value.view() {
        View::Null => Some(Lit::Null),
        View::Bool(b) => Some(Lit::Bool(b)),
        View::Number(n) => Some(Lit::Number(n)),
        View::String(s) => Some(Lit::String(s)),
        View::Array(_) | View::Object => None,
    }
}

fn literals<J: Json>(values: &[J]) -> Ty<'_> {
    let mut out: Vec<Lit<'_>> = Vec::with_capacity(values.len());
    for value in values {
        let Some(lit) = literal(value) else {
            return Ty::Unknown;
        };
        if !out.contains(&lit) {
            out.push(lit);
        }
    }
    Ty::Literals(out)
}

fn lower_array<'a, J: Json>(k: &Keywords<'a, J>, depth: usize) -> Ty<'a> {
    if let Some(prefix) = k.prefix_items {
        return match prefix.view() {
            View::Array(_) => Ty::Array(Box::new(Ty::Unknown)),
            _ => Ty::Unknown,
        };
    }
    let element = match k.items {
        None => Ty::Json,
        Some(items) => match items.view() {
            View::Bool(true) => Ty::Json,
            View::Bool(false) | View::Array(_) => Ty::Unknown,
            View::Object => lower_at(items, depth + 1),
            _ => return Ty::Unknown,
        },
    };
    Ty::Array(Box::new(element))
}

fn lower_object<'a, J: Json>(k: &Keywords<'a, J>, depth: usize) -> Ty<'a> {
    let mut extra = match k.additional {
        None => Extra::Open,
        Some(schema) => match schema.view() {
            View::Bool(true) => Extra::Open,
            View::Bool(false) => Extra::Closed,
            View::Object => match lower_at(schema, depth + 1) {
                Ty::Unknown | Ty::Json => Extra::Open,
                ty => Extra::Map(Box::new(ty)),
            },
            _ => return Ty::Unknown,
        },
    };
    if let Some(patterns) = k.patterns {
        match patterns.view() {
            View::Object => {
                if patterns.entries().next().is_some() {
                    extra = Extra::Open;
                }
            }
            _ => return Ty::Unknown,
        }
    }
    let mut required: Vec<&'a str> = Vec::new();
    if let Some(names) = k.required {
        let View::Array(names) = names.view() else {
            return Ty::Unknown;
        };
        for name in names {
            match name.view() {
                View::String(name) => {
                    if !required.contains(&name) {
                        required.push(name);
                    }
                }
                _ => return Ty::Unknown,
            }
        }
    }
    let mut props = Vec::new();
    if let Some(properties) = k.properties {
        let View::Object = properties.view() else {
            return Ty::Unknown;
        };
        for (key, schema) in properties.entries() {
            props.push(Prop {
                key,
                ty: lower_at(schema, depth + 1),
                required: required.contains(&key),
                doc: doc_of(schema),
            });
        }
    }
    for name in required {
        if !props.iter().any(|p| p.key == name) {
            let ty = match &extra {
                Extra::Map(ty) => (**ty).clone(),
                Extra::Closed | Extra::Open => Ty::Json,
            };
            props.push(Prop {
                key: name,
                ty,
                required: true,
                doc: None,
            });
        }
    }
    if !props.is_empty() && matches!(extra, Extra::Map(_)) {
        // A declared property's type need not fit the map's value type, so one index signature
        // cannot state both: the extra keys are read as unknown.
        extra = Extra::Open;
    }
    Ty::Object(Box::new(ObjectTy {
        props,
        extra,
        doc: None,
    }))
}

/// A union of `members`: nested unions are flattened, duplicates dropped, and an `Unknown` or
/// `Json` member absorbs the whole union.
pub(crate) fn union(members: Vec<Ty<'_>>) -> Ty<'_> {
    let mut flat: Vec<Ty<'_>> = Vec::with_capacity(members.len());
    let mut pending = members;
    pending.reverse();
    while let Some(member) = pending.pop() {
        match member {
            Ty::Unknown => return Ty::Unknown,
            Ty::Union(inner) => pending.extend(inner.into_iter().rev()),
            member => {
                if !flat.contains(&member) {
                    flat.push(member);
                }
            }
        }
    }
    if flat.contains(&Ty::Json) {
        return Ty::Json;
    }
    match flat.len() {
        0 => Ty::Unknown,
        1 => flat.pop().unwrap_or(Ty::Unknown),
        _ => Ty::Union(flat),
    }
}

/// Reads a tool's root schema and attaches the schema's own description to a root object.
pub(crate) fn lower_root<J: Json>(schema: &J) -> Ty<'_> {
    match lower(schema) {
        Ty::Object(mut object) => {
            object.doc = doc_of(schema);
            Ty::Object(object)
        }
        ty => ty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nullable_type_arrays_are_unions() {
        assert_eq!(
            lower(&json!({"type": ["string", "null"]})),
            Ty::Union(vec![Ty::String, Ty::Null])
        );
    }

    #[test]
    fn unsupported_constructs_degrade() {
        for schema in [
            json!(true),
            json!(false),
            json!(null),
            json!(3),
            json!({"$ref": "#/x"}),
            json!({"anyOf": [{"type": "string"}]}),
            json!({"allOf": []}),
            json!({"type": "date"}),
            json!({"type": 5}),
            json!({"type": "object", "properties": []}),
            json!({"type": "object", "required": [1]}),
            json!({"enum": [{"a": 1}]}),
            json!({"enum": []}),
            json!({"type": ["string", "bogus"]}),
        ] {
            assert_eq!(lower(&schema), Ty::Unknown, "{schema}");
        }
        assert_eq!(lower(&json!({})), Ty::Json);
        assert_eq!(
            lower(&json!({"type": "string", "anyOf": [{"minLength": 1}]})),
            Ty::String
        );
    }

    #[test]
    fn required_but_undeclared_keys_are_required() {
        let schema = json!({"type": "object", "required": ["a"]});
        let Ty::Object(object) = lower(&schema) else {
            panic!("not an object");
        };
        assert_eq!(object.props.len(), 1);
        assert!(object.props[0].required);
        assert_eq!(object.props[0].ty, Ty::Json);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let mut schema = json!({"type": "string"});
        for _ in 0..200 {
            schema = json!({"type": "array", "items": schema});
        }
        let mut ty = lower(&schema);
        let mut levels = 0;
        while let Ty::Array(inner) = ty {
            levels += 1;
            ty = *inner;
        }
        assert_eq!(levels, MAX_DEPTH + 1);
        assert_eq!(ty, Ty::Unknown);
    }
}
