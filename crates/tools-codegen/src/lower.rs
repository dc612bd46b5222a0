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

use serde_json::{Map, Value};

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
    Literals(Vec<&'a Value>),
    Array(Box<Ty<'a>>),
    Object(Box<ObjectTy<'a>>),
    /// Two or more alternatives; never contains `Unknown` or `Json` (they absorb the union).
    Union(Vec<Ty<'a>>),
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
pub(crate) fn lower(schema: &Value) -> Ty<'_> {
    lower_at(schema, 0)
}

fn lower_at(schema: &Value, depth: usize) -> Ty<'_> {
    if depth > MAX_DEPTH {
        return Ty::Unknown;
    }
    match schema {
        Value::Object(map) => lower_map(map, depth),
        _ => Ty::Unknown,
    }
}

/// The description of a schema, or its title when it has none.
pub(crate) fn doc_of(schema: &Value) -> Option<&str> {
    let map = schema.as_object()?;
    let text = map
        .get("description")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .or_else(|| map.get("title").and_then(Value::as_str))?;
    (!text.trim().is_empty()).then_some(text)
}

/// The keywords the reader looks at, found in one pass over a schema object.
#[derive(Default)]
struct Keywords<'a> {
    reference: bool,
    narrowing: bool,
    constant: Option<&'a Value>,
    enumeration: Option<&'a Value>,
    types: Option<&'a Value>,
    one_of: Option<&'a Value>,
    properties: Option<&'a Value>,
    required: Option<&'a Value>,
    additional: Option<&'a Value>,
    patterns: Option<&'a Value>,
    items: Option<&'a Value>,
    prefix_items: Option<&'a Value>,
}

impl<'a> Keywords<'a> {
    fn scan(map: &'a Map<String, Value>) -> Keywords<'a> {
        let mut k = Keywords::default();
        for (key, value) in map {
            match key.as_str() {
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

fn lower_map(map: &Map<String, Value>, depth: usize) -> Ty<'_> {
    let k = Keywords::scan(map);
    if k.reference {
        return Ty::Unknown;
    }
    if let Some(value) = k.constant {
        return literals(std::slice::from_ref(value));
    }
    if let Some(values) = k.enumeration {
        return match values {
            Value::Array(values) if !values.is_empty() => literals(values),
            _ => Ty::Unknown,
        };
    }
    match k.types {
        Some(Value::String(name)) => lower_type(name, &k, depth),
        Some(Value::Array(names)) => {
            if names.is_empty() {
                return Ty::Unknown;
            }
            let mut members = Vec::with_capacity(names.len());
            for name in names {
                match name {
                    Value::String(name) => members.push(lower_type(name, &k, depth)),
                    _ => return Ty::Unknown,
                }
            }
            union(members)
        }
        Some(_) => Ty::Unknown,
        None => {
            if let Some(alternatives) = k.one_of {
                return match alternatives {
                    Value::Array(items) if !items.is_empty() => {
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

fn lower_type<'a>(name: &str, k: &Keywords<'a>, depth: usize) -> Ty<'a> {
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

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

fn literals(values: &[Value]) -> Ty<'_> {
    if !values.iter().all(is_scalar) {
        return Ty::Unknown;
    }
    let mut out: Vec<&Value> = Vec::with_capacity(values.len());
    for value in values {
        if !out.contains(&value) {
            out.push(value);
        }
    }
    Ty::Literals(out)
}

fn lower_array<'a>(k: &Keywords<'a>, depth: usize) -> Ty<'a> {
    if let Some(prefix) = k.prefix_items {
        return match prefix {
            Value::Array(_) => Ty::Array(Box::new(Ty::Unknown)),
            _ => Ty::Unknown,
        };
    }
    let element = match k.items {
        None | Some(Value::Bool(true)) => Ty::Json,
        Some(Value::Bool(false)) | Some(Value::Array(_)) => Ty::Unknown,
        Some(items @ Value::Object(_)) => lower_at(items, depth + 1),
        Some(_) => return Ty::Unknown,
    };
    Ty::Array(Box::new(element))
}

fn lower_object<'a>(k: &Keywords<'a>, depth: usize) -> Ty<'a> {
    let mut extra = match k.additional {
        None | Some(Value::Bool(true)) => Extra::Open,
        Some(Value::Bool(false)) => Extra::Closed,
        Some(schema @ Value::Object(_)) => match lower_at(schema, depth + 1) {
            Ty::Unknown | Ty::Json => Extra::Open,
            ty => Extra::Map(Box::new(ty)),
        },
        Some(_) => return Ty::Unknown,
    };
    match k.patterns {
        None => {}
        Some(Value::Object(patterns)) if !patterns.is_empty() => extra = Extra::Open,
        Some(Value::Object(_)) => {}
        Some(_) => return Ty::Unknown,
    }
    let mut required: Vec<&'a str> = Vec::new();
    match k.required {
        None => {}
        Some(Value::Array(names)) => {
            for name in names {
                match name {
                    Value::String(name) => {
                        if !required.contains(&name.as_str()) {
                            required.push(name);
                        }
                    }
                    _ => return Ty::Unknown,
                }
            }
        }
        Some(_) => return Ty::Unknown,
    }
    let mut props = Vec::new();
    match k.properties {
        None => {}
        Some(Value::Object(properties)) => {
            props.reserve(properties.len());
            for (key, schema) in properties {
                props.push(Prop {
                    key: key.as_str(),
                    ty: lower_at(schema, depth + 1),
                    required: required.contains(&key.as_str()),
                    doc: doc_of(schema),
                });
            }
        }
        Some(_) => return Ty::Unknown,
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
pub(crate) fn lower_root(schema: &Value) -> Ty<'_> {
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
