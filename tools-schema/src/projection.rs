//! Projection of [`Schema`] to JSON Schema text and back.
//!
//! Both directions walk the tree with an explicit work stack, so schemas of any depth are
//! handled without recursion.
//!
//! # Key order
//!
//! [`Schema::to_json`] writes keys in one fixed order, so equal schemas give byte-identical JSON
//! (stable prompts, stable generated files, stable KV caches):
//!
//! `type`, `title`, `description`, `format`, `enum`, `const`, `minimum`, `exclusiveMinimum`,
//! `maximum`, `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength`, `pattern`, `items`,
//! `minItems`, `maxItems`, `uniqueItems`, `properties`, `required`, `additionalProperties`,
//! `oneOf`, `default`, `examples`, then the other annotations in their stored order.
//!
//! Absent or default-valued keywords are left out (`uniqueItems` only when `true`, `properties`
//! and `required` only when non-empty), except `additionalProperties`, which every object
//! states. An entry of [`Annotations::extra`] whose key the subset interprets (`type`, `items`,
//! ...) is not written: it would change what the schema means.
//!
//! ```
//! use serde_json::json;
//! use tools_schema::Schema;
//!
//! let raw = json!({"maximum": 9, "x-unit": "s", "type": "integer", "description": "Delay"});
//! let schema = Schema::from_json(&raw).unwrap();
//! assert_eq!(
//!     schema.to_json().to_string(),
//!     r#"{"type":"integer","description":"Delay","maximum":9,"x-unit":"s"}"#
//! );
//!
//! // Outside the subset: rejected, or read leniently by widening.
//! let mcp = json!({"type": "object", "properties": {"id": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}});
//! assert!(Schema::from_json(&mcp).is_err());
//! let (lenient, errors) = Schema::from_json_lenient(&mcp);
//! assert_eq!(errors.unwrap().errors()[0].pointer, "/properties/id/anyOf");
//! assert_eq!(
//!     lenient.to_json(),
//!     json!({"type": "object", "properties": {"id": {}}, "additionalProperties": true})
//! );
//! ```

use serde_json::{Map, Number, Value};

use crate::deep;
use crate::number;
use crate::schema::{
    AdditionalProperties, Annotations, ArraySchema, BooleanSchema, NumericSchema, ObjectSchema,
    Schema, SchemaKind, StringSchema,
};
use crate::subset::{SubsetError, SubsetErrors};

/// Keywords the subset interprets on some node type.
const SUBSET_KEYWORDS: &[&str] = &[
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "properties",
    "required",
    "additionalProperties",
    "oneOf",
];

/// Annotation keywords with a typed place in [`Annotations`].
const TYPED_ANNOTATIONS: &[&str] = &["title", "description", "default", "examples", "format"];

/// Keywords outside the subset, each with the reason given to the author.
const REJECTED: &[(&str, &str)] = &[
    (
        "$ref",
        "references are not supported; inline the referenced schema",
    ),
    (
        "$defs",
        "definitions are not supported; inline each definition where it is used",
    ),
    (
        "definitions",
        "definitions are not supported; inline each definition where it is used",
    ),
    ("$dynamicRef", "dynamic references are not supported"),
    ("$dynamicAnchor", "dynamic anchors are not supported"),
    ("$recursiveRef", "recursive references are not supported"),
    ("$recursiveAnchor", "recursive anchors are not supported"),
    (
        "$anchor",
        "anchors are not supported (there are no references to resolve)",
    ),
    ("$vocabulary", "vocabularies are not supported"),
    (
        "anyOf",
        "`anyOf` is not supported; use `oneOf` with alternatives that exclude each other",
    ),
    (
        "allOf",
        "`allOf` is not supported; merge the schemas into one",
    ),
    ("not", "`not` is not supported"),
    (
        "if",
        "conditional schemas (`if`/`then`/`else`) are not supported; use `oneOf`",
    ),
    (
        "then",
        "conditional schemas (`if`/`then`/`else`) are not supported; use `oneOf`",
    ),
    (
        "else",
        "conditional schemas (`if`/`then`/`else`) are not supported; use `oneOf`",
    ),
    (
        "patternProperties",
        "`patternProperties` is not supported; use `additionalProperties` with a schema",
    ),
    ("propertyNames", "`propertyNames` is not supported"),
    (
        "dependentSchemas",
        "`dependentSchemas` is not supported; use `oneOf`",
    ),
    (
        "dependentRequired",
        "`dependentRequired` is not supported; use `oneOf`",
    ),
    (
        "dependencies",
        "`dependencies` is not supported; use `oneOf`",
    ),
    (
        "prefixItems",
        "tuples (`prefixItems`) are not supported; use an object",
    ),
    (
        "additionalItems",
        "tuples (`additionalItems`) are not supported; use an object",
    ),
    ("contains", "`contains` is not supported"),
    ("minContains", "`minContains` is not supported"),
    ("maxContains", "`maxContains` is not supported"),
    (
        "unevaluatedProperties",
        "`unevaluatedProperties` is not supported; use `additionalProperties`",
    ),
    ("unevaluatedItems", "`unevaluatedItems` is not supported"),
    ("minProperties", "`minProperties` is not supported"),
    ("maxProperties", "`maxProperties` is not supported"),
    ("contentSchema", "`contentSchema` is not supported"),
    (
        "nullable",
        "`nullable` is not supported; write `\"oneOf\": [{...}, {\"type\": \"null\"}]`",
    ),
];

/// What a keyword is to the subset.
#[derive(Clone, Copy)]
enum Class {
    /// Interpreted by the subset (on some node type).
    Subset,
    /// A typed annotation (`title`, `description`, `default`, `examples`, `format`).
    Annotation,
    /// Outside the subset, with the reason.
    Rejected(&'static str),
}

/// One hash lookup per keyword instead of scanning the tables above.
static CLASSES: std::sync::LazyLock<std::collections::HashMap<&'static str, Class>> =
    std::sync::LazyLock::new(|| {
        let mut map = std::collections::HashMap::new();
        for k in SUBSET_KEYWORDS {
            map.insert(*k, Class::Subset);
        }
        for k in TYPED_ANNOTATIONS {
            map.insert(*k, Class::Annotation);
        }
        for (k, reason) in REJECTED {
            map.insert(*k, Class::Rejected(reason));
        }
        map
    });

/// Escapes one reference token of an RFC 6901 JSON pointer.
pub(crate) fn escape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains(['~', '/']) {
        std::borrow::Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        std::borrow::Cow::Borrowed(token)
    }
}

/// One reference token of a pointer under construction.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Handle on a pointer stored in [`Parser::paths`]; pointers are materialised only for errors,
/// so deep schemas cost memory linear in their size.
type PathId = u32;
const ROOT: PathId = u32::MAX;

/// A short name for the kind of a JSON value, for messages.
pub(crate) fn kind_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The error for a schema position that holds something other than a schema object.
pub(crate) fn non_object_schema_error(value: &Value, pointer: &str) -> Option<SubsetError> {
    let message = match value {
        Value::Object(_) => return None,
        Value::Bool(true) => "the boolean schema `true` is not supported; write `{}` for a value that may be any JSON".to_string(),
        Value::Bool(false) => "the boolean schema `false` (no value is valid) is not supported".to_string(),
        Value::Null => "expected a schema object, got null".to_string(),
        other => format!("expected a schema object, got {}", kind_name(other)),
    };
    Some(SubsetError {
        pointer: pointer.to_string(),
        keyword: String::new(),
        message,
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    Any,
    OneOf,
    Null,
    Boolean,
    String,
    Number,
    Integer,
    Array,
    Object,
    /// `type` was present but invalid: keywords are parsed, applicability is not checked.
    Invalid,
}

impl Ty {
    fn from_name(name: &str) -> Option<Ty> {
        Some(match name {
            "null" => Ty::Null,
            "boolean" => Ty::Boolean,
            "string" => Ty::String,
            "number" => Ty::Number,
            "integer" => Ty::Integer,
            "array" => Ty::Array,
            "object" => Ty::Object,
            _ => return None,
        })
    }

    fn describe(self) -> &'static str {
        match self {
            Ty::Any => "a node without `type`",
            Ty::OneOf => "a `oneOf` node",
            Ty::Null => "type null",
            Ty::Boolean => "type boolean",
            Ty::String => "type string",
            Ty::Number => "type number",
            Ty::Integer => "type integer",
            Ty::Array => "type array",
            Ty::Object => "type object",
            Ty::Invalid => "this node",
        }
    }

    /// Whether `keyword` (one of [`SUBSET_KEYWORDS`]) applies to nodes of this type.
    fn allows(self, keyword: &str) -> bool {
        match self {
            Ty::Invalid => true,
            Ty::Any | Ty::Null => false,
            Ty::OneOf => keyword == "oneOf",
            Ty::Boolean => matches!(keyword, "enum" | "const"),
            Ty::String => matches!(
                keyword,
                "enum" | "const" | "minLength" | "maxLength" | "pattern"
            ),
            Ty::Number | Ty::Integer => matches!(
                keyword,
                "enum"
                    | "const"
                    | "minimum"
                    | "maximum"
                    | "exclusiveMinimum"
                    | "exclusiveMaximum"
                    | "multipleOf"
            ),
            Ty::Array => matches!(keyword, "items" | "minItems" | "maxItems" | "uniqueItems"),
            Ty::Object => matches!(keyword, "properties" | "required" | "additionalProperties"),
        }
    }
}

/// Which types own a keyword, for the "does not apply" message.
fn owner_of(keyword: &str) -> &'static str {
    match keyword {
        "enum" | "const" => "the scalar types (boolean, string, number, integer)",
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            "types number and integer"
        }
        "minLength" | "maxLength" | "pattern" => "type string",
        "items" | "minItems" | "maxItems" | "uniqueItems" => "type array",
        "properties" | "required" | "additionalProperties" => "type object",
        "oneOf" => "nodes without `type`",
        _ => "other types",
    }
}

enum AddlPlan {
    Allow,
    Deny,
    Child,
}

/// A node whose children are being built.
struct Pending {
    ty: Ty,
    annotations: Annotations,
    /// The node's own constraints, for the kinds that have no children.
    leaf: Option<SchemaKind>,
    array: ArraySchema,
    has_items: bool,
    property_names: Vec<String>,
    required: Vec<String>,
    additional: AddlPlan,
    one_of: usize,
}

enum Step<'a> {
    Enter(&'a Value, PathId),
    Build(Box<Pending>),
}

struct Parser<'a> {
    errors: Vec<SubsetError>,
    /// For each error, its position in the document (see [`Parser::chain`]).
    order: Vec<Vec<PathId>>,
    paths: Vec<(PathId, Seg<'a>)>,
}

impl<'a> Parser<'a> {
    fn seg(&mut self, parent: PathId, seg: Seg<'a>) -> PathId {
        self.paths.push((parent, seg));
        (self.paths.len() - 1) as PathId
    }

    fn pointer(&self, id: PathId) -> String {
        let mut segs = Vec::new();
        let mut at = id;
        while let Some((parent, seg)) = self.paths.get(at as usize) {
            segs.push(*seg);
            at = *parent;
        }
        let mut out = String::new();
        for seg in segs.iter().rev() {
            out.push('/');
            match seg {
                Seg::Key(k) => out.push_str(&escape_token(k)),
                Seg::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    /// The ids from the root down to `id`; comparing chains orders errors as in the document,
    /// because sibling segments are created in document order.
    fn chain(&self, id: PathId) -> Vec<PathId> {
        let mut chain = Vec::new();
        let mut at = id;
        while let Some((parent, _)) = self.paths.get(at as usize) {
            chain.push(at);
            at = *parent;
        }
        chain.reverse();
        chain
    }

    fn error(&mut self, at: PathId, keyword: &str, message: impl Into<String>) {
        let pointer = self.pointer(at);
        let chain = self.chain(at);
        self.order.push(chain);
        self.errors.push(SubsetError {
            pointer,
            keyword: keyword.to_string(),
            message: message.into(),
        });
    }

    /// Flags numbers inside `value` that may have lost precision; `true` when there are none.
    fn check_lossless(&mut self, value: &'a Value, pointer: PathId, keyword: &str) -> bool {
        let before = self.errors.len();
        let mut stack = vec![(value, pointer)];
        while let Some((value, at)) = stack.pop() {
            match value {
                Value::Number(n) if number::may_be_lossy(n) => self.error(
                    at,
                    keyword,
                    format!(
                        "the number {n} is not lossless JSON: an integral value of magnitude 2^53 or more \
                         may have lost digits when it was parsed; write it as a string"
                    ),
                ),
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate().rev() {
                        let id = self.seg(at, Seg::Index(i));
                        stack.push((item, id));
                    }
                }
                Value::Object(map) => {
                    let mut entries: Vec<_> = map.iter().collect();
                    entries.reverse();
                    for (k, v) in entries {
                        let id = self.seg(at, Seg::Key(k));
                        stack.push((v, id));
                    }
                }
                _ => {}
            }
        }
        self.errors.len() == before
    }

    fn number(&mut self, value: &'a Value, at: PathId, keyword: &str) -> Option<Number> {
        match value {
            Value::Number(n) if number::may_be_lossy(n) => {
                self.check_lossless(value, at, keyword);
                None
            }
            Value::Number(n) => Some(n.clone()),
            other => {
                self.error(
                    at,
                    keyword,
                    format!("`{keyword}` must be a number, got {}", kind_name(other)),
                );
                None
            }
        }
    }

    /// A length or count bound: a non-negative integer, which JSON Schema lets a document
    /// write as a decimal (`2.0`). One too large for `u64` is read as `u64::MAX`, a bound no
    /// string or array reaches either.
    fn count(&mut self, value: &'a Value, at: PathId, keyword: &str) -> Option<u64> {
        let count = match value {
            Value::Number(n) => n.as_u64().or_else(|| {
                let f = n.as_f64()?;
                // `as` saturates: a bound past u64 is read as u64::MAX.
                (number::is_integer(n) && f >= 0.0).then_some(f as u64)
            }),
            _ => None,
        };
        match count {
            Some(n) => Some(n),
            None => {
                self.error(
                    at,
                    keyword,
                    format!(
                        "`{keyword}` must be a non-negative integer, got {}",
                        crate::excerpt::json(value)
                    ),
                );
                None
            }
        }
    }

    fn string(&mut self, value: &'a Value, at: PathId, keyword: &str) -> Option<String> {
        match value {
            Value::String(s) => Some(s.clone()),
            other => {
                self.error(
                    at,
                    keyword,
                    format!("`{keyword}` must be a string, got {}", kind_name(other)),
                );
                None
            }
        }
    }

    /// Parses one `enum` or `const` value of a scalar type.
    fn scalar(&mut self, ty: Ty, value: &'a Value, at: PathId, keyword: &str) -> Option<Scalar> {
        let ok = match (ty, value) {
            (Ty::Boolean, Value::Bool(b)) => Some(Scalar::Bool(*b)),
            (Ty::String, Value::String(s)) => Some(Scalar::String(s.clone())),
            (Ty::Number, Value::Number(n)) => Some(Scalar::Number(n.clone())),
            (Ty::Integer, Value::Number(n)) if number::is_integer(n) => {
                Some(Scalar::Number(n.clone()))
            }
            (Ty::Invalid, _) => None,
            _ => {
                let expected = match ty {
                    Ty::Boolean => "a boolean",
                    Ty::String => "a string",
                    Ty::Number => "a number",
                    Ty::Integer => "an integer",
                    _ => "a value of the declared type",
                };
                self.error(
                    at,
                    keyword,
                    format!(
                        "`{keyword}` values must match the declared {}: expected {expected}, got {}",
                        ty.describe(),
                        crate::excerpt::json(value)
                    ),
                );
                return None;
            }
        };
        if let Some(Scalar::Number(n)) = &ok
            && number::may_be_lossy(n)
        {
            self.check_lossless(value, at, keyword);
            return None;
        }
        ok
    }
}

enum Scalar {
    Bool(bool),
    String(String),
    Number(Number),
}

impl Schema {
    /// Reads a raw JSON Schema into the typed model, checking that it is inside the enforced
    /// subset (see [`crate::subset`]). All problems are reported together, each with its JSON
    /// pointer and keyword.
    ///
    /// An object node without `additionalProperties` is open
    /// ([`AdditionalProperties::Allow`]), as in standard JSON Schema. Keywords the subset does
    /// not interpret are kept in [`Annotations::extra`], in source order.
    ///
    /// The walk uses an explicit work stack: schemas of any depth are read without recursion.
    pub fn from_json(value: &Value) -> Result<Schema, SubsetErrors> {
        let (schema, errors) = Self::parse(value);
        match SubsetErrors::new(errors) {
            None => Ok(schema),
            Some(errors) => {
                deep::drop_schema(schema);
                Err(errors)
            }
        }
    }

    /// Reads any raw JSON Schema into the typed model, degrading what the subset cannot
    /// express instead of failing, and reports what was degraded.
    ///
    /// This is for schemas that come from outside (an MCP server's catalog), where the codegen
    /// must print *some* type. Degrading only ever widens: a rejected keyword is dropped (`$ref`,
    /// `anyOf`, `allOf`, `not`, `if`, ... leave an unconstrained node), a schema position that
    /// holds no schema object (`true`, `false`, `null`) becomes `{}`, an unknown `type` or a
    /// type list becomes `{}`, an invalid keyword value is dropped, a required name that is not
    /// declared is no longer required, and an object with `patternProperties` is treated as open.
    /// Every value the raw schema admits is admitted by the result. The errors are the ones
    /// [`Schema::from_json`] would return; `None` when nothing was degraded.
    pub fn from_json_lenient(value: &Value) -> (Schema, Option<SubsetErrors>) {
        let (schema, errors) = Self::parse(value);
        (schema, SubsetErrors::new(errors))
    }

    /// The one walk behind [`Schema::from_json`] and [`Schema::from_json_lenient`].
    fn parse(value: &Value) -> (Schema, Vec<SubsetError>) {
        let mut parser = Parser {
            errors: Vec::new(),
            order: Vec::new(),
            paths: Vec::new(),
        };
        let mut built: Vec<Schema> = Vec::new();
        let mut work = vec![Step::Enter(value, ROOT)];
        while let Some(step) = work.pop() {
            match step {
                Step::Enter(value, pointer) => {
                    parser.enter(value, pointer, &mut work, &mut built);
                }
                Step::Build(pending) => {
                    let schema = assemble(*pending, &mut built);
                    built.push(schema);
                }
            }
        }
        let result = built.pop().unwrap_or_else(Schema::any);
        for rest in built {
            deep::drop_schema(rest);
        }
        let mut ordered: Vec<(Vec<PathId>, SubsetError)> =
            parser.order.into_iter().zip(parser.errors).collect();
        ordered.sort_by(|a, b| a.0.cmp(&b.0));
        (result, ordered.into_iter().map(|(_, e)| e).collect())
    }

    /// Projects the schema to JSON Schema with a fixed key order (see the
    /// [projection docs](crate::projection)), so equal schemas give byte-identical JSON.
    ///
    /// The walk uses an explicit work stack: schemas of any depth are written without recursion.
    pub fn to_json(&self) -> Value {
        enum Out<'a> {
            Enter(&'a Schema),
            Exit(&'a Schema, usize),
        }
        let mut work = vec![Out::Enter(self)];
        let mut built: Vec<Value> = Vec::new();
        while let Some(step) = work.pop() {
            match step {
                Out::Enter(schema) => {
                    // Children are entered in reverse so they are built in order.
                    let exit = work.len();
                    work.push(Out::Exit(schema, 0));
                    match &schema.kind {
                        SchemaKind::Array(array) => {
                            work.extend(array.items.as_deref().map(Out::Enter));
                        }
                        SchemaKind::Object(object) => {
                            if let AdditionalProperties::Schema(s) = &object.additional_properties {
                                work.push(Out::Enter(s));
                            }
                            work.extend(object.properties.iter().rev().map(|(_, s)| Out::Enter(s)));
                        }
                        SchemaKind::OneOf(alternatives) => {
                            work.extend(alternatives.iter().rev().map(Out::Enter));
                        }
                        _ => {}
                    }
                    let count = work.len() - exit - 1;
                    if let Some(Out::Exit(_, n)) = work.get_mut(exit) {
                        *n = count;
                    }
                }
                Out::Exit(schema, count) => {
                    let start = built.len().saturating_sub(count);
                    let children = built.split_off(start);
                    built.push(write_node(schema, children));
                }
            }
        }
        built.pop().unwrap_or(Value::Null)
    }
}

fn numbers(values: &[Number]) -> Value {
    Value::Array(values.iter().cloned().map(Value::Number).collect())
}

fn write_numeric(map: &mut Map<String, Value>, n: &NumericSchema) {
    if let Some(values) = &n.enum_values {
        map.insert("enum".into(), numbers(values));
    }
    if let Some(v) = &n.const_value {
        map.insert("const".into(), Value::Number(v.clone()));
    }
    let bounds = [
        ("minimum", &n.minimum),
        ("exclusiveMinimum", &n.exclusive_minimum),
        ("maximum", &n.maximum),
        ("exclusiveMaximum", &n.exclusive_maximum),
        ("multipleOf", &n.multiple_of),
    ];
    for (key, value) in bounds {
        if let Some(v) = value {
            map.insert(key.into(), Value::Number(v.clone()));
        }
    }
}

fn write_node(schema: &Schema, children: Vec<Value>) -> Value {
    let mut map = Map::new();
    let a = &schema.annotations;
    let type_name = match &schema.kind {
        SchemaKind::Any | SchemaKind::OneOf(_) => None,
        SchemaKind::Null => Some("null"),
        SchemaKind::Boolean(_) => Some("boolean"),
        SchemaKind::String(_) => Some("string"),
        SchemaKind::Number(_) => Some("number"),
        SchemaKind::Integer(_) => Some("integer"),
        SchemaKind::Array(_) => Some("array"),
        SchemaKind::Object(_) => Some("object"),
    };
    if let Some(t) = type_name {
        map.insert("type".into(), Value::String(t.into()));
    }
    if let Some(t) = &a.title {
        map.insert("title".into(), Value::String(t.clone()));
    }
    if let Some(d) = &a.description {
        map.insert("description".into(), Value::String(d.clone()));
    }
    if let Some(f) = &a.format {
        map.insert("format".into(), Value::String(f.clone()));
    }
    let mut children = children.into_iter();
    match &schema.kind {
        SchemaKind::Any | SchemaKind::Null => {}
        SchemaKind::Boolean(b) => {
            if let Some(values) = &b.enum_values {
                map.insert(
                    "enum".into(),
                    Value::Array(values.iter().map(|v| Value::Bool(*v)).collect()),
                );
            }
            if let Some(v) = b.const_value {
                map.insert("const".into(), Value::Bool(v));
            }
        }
        SchemaKind::String(s) => {
            if let Some(values) = &s.enum_values {
                map.insert(
                    "enum".into(),
                    Value::Array(values.iter().cloned().map(Value::String).collect()),
                );
            }
            if let Some(v) = &s.const_value {
                map.insert("const".into(), Value::String(v.clone()));
            }
            if let Some(n) = s.min_length {
                map.insert("minLength".into(), Value::from(n));
            }
            if let Some(n) = s.max_length {
                map.insert("maxLength".into(), Value::from(n));
            }
            if let Some(p) = &s.pattern {
                map.insert("pattern".into(), Value::String(p.clone()));
            }
        }
        SchemaKind::Number(n) | SchemaKind::Integer(n) => write_numeric(&mut map, n),
        SchemaKind::Array(array) => {
            if array.items.is_some()
                && let Some(items) = children.next()
            {
                map.insert("items".into(), items);
            }
            if let Some(n) = array.min_items {
                map.insert("minItems".into(), Value::from(n));
            }
            if let Some(n) = array.max_items {
                map.insert("maxItems".into(), Value::from(n));
            }
            if array.unique_items {
                map.insert("uniqueItems".into(), Value::Bool(true));
            }
        }
        SchemaKind::Object(object) => {
            if !object.properties.is_empty() {
                let mut props = Map::new();
                for (name, _) in &object.properties {
                    props.insert(name.clone(), children.next().unwrap_or(Value::Null));
                }
                map.insert("properties".into(), Value::Object(props));
            }
            if !object.required.is_empty() {
                map.insert(
                    "required".into(),
                    Value::Array(object.required.iter().cloned().map(Value::String).collect()),
                );
            }
            let additional = match &object.additional_properties {
                AdditionalProperties::Allow => Value::Bool(true),
                AdditionalProperties::Deny => Value::Bool(false),
                AdditionalProperties::Schema(_) => children.next().unwrap_or(Value::Bool(true)),
            };
            map.insert("additionalProperties".into(), additional);
        }
        SchemaKind::OneOf(_) => {
            map.insert("oneOf".into(), Value::Array(children.collect()));
        }
    }
    if let Some(d) = &a.default {
        map.insert("default".into(), deep::clone_value(d));
    }
    if let Some(e) = &a.examples {
        map.insert(
            "examples".into(),
            Value::Array(e.iter().map(deep::clone_value).collect()),
        );
    }
    for (key, value) in &a.extra {
        let interpreted =
            SUBSET_KEYWORDS.contains(&key.as_str()) || TYPED_ANNOTATIONS.contains(&key.as_str());
        if !interpreted && !map.contains_key(key) {
            map.insert(key.clone(), deep::clone_value(value));
        }
    }
    Value::Object(map)
}

impl<'a> Parser<'a> {
    fn enter(
        &mut self,
        value: &'a Value,
        pointer: PathId,
        work: &mut Vec<Step<'a>>,
        built: &mut Vec<Schema>,
    ) {
        let map = match value {
            Value::Object(map) => map,
            other => {
                if let Some(error) = non_object_schema_error(other, &self.pointer(pointer)) {
                    let chain = self.chain(pointer);
                    self.order.push(chain);
                    self.errors.push(error);
                }
                built.push(Schema::any());
                return;
            }
        };

        // Decide the node's type first: keyword applicability depends on it.
        let type_at = self.seg(pointer, Seg::Key("type"));
        let ty = match map.get("type") {
            None if map.contains_key("oneOf") => Ty::OneOf,
            None => Ty::Any,
            Some(Value::String(name)) => match Ty::from_name(name) {
                Some(ty) => ty,
                None => {
                    self.error(
                        type_at,
                        "type",
                        format!(
                            "unknown type name {value}; expected one of \"null\", \"boolean\", \"string\", \
                             \"number\", \"integer\", \"array\", \"object\"",
                            value = crate::excerpt::quoted(name)
                        ),
                    );
                    Ty::Invalid
                }
            },
            Some(Value::Array(_)) => {
                self.error(
                    type_at,
                    "type",
                    "a list of types is not supported; for a nullable value write \
                     `\"oneOf\": [{...}, {\"type\": \"null\"}]`",
                );
                Ty::Invalid
            }
            Some(other) => {
                self.error(
                    type_at,
                    "type",
                    format!(
                        "`type` must be a type name string, got {}",
                        kind_name(other)
                    ),
                );
                Ty::Invalid
            }
        };

        let mut pending = Pending {
            ty,
            annotations: Annotations::default(),
            leaf: None,
            array: ArraySchema::default(),
            has_items: false,
            property_names: Vec::new(),
            required: Vec::new(),
            additional: AddlPlan::Allow,
            one_of: 0,
        };
        let mut string = StringSchema::default();
        let mut numeric = NumericSchema::default();
        let mut boolean = BooleanSchema::default();
        // Children, in the order `assemble` pops them: items, properties, additional, oneOf.
        let mut children: Vec<(&'a Value, PathId)> = Vec::new();
        let mut property_children: Vec<(&'a Value, PathId)> = Vec::new();
        let mut additional_child: Option<(&'a Value, PathId)> = None;
        let mut one_of_children: Vec<(&'a Value, PathId)> = Vec::new();
        let mut required_value: Option<(&'a Value, PathId)> = None;
        let mut property_map: Option<&'a Map<String, Value>> = None;

        for (key, v) in map {
            let at = self.seg(pointer, Seg::Key(key));
            let k = key.as_str();
            let class = CLASSES.get(k).copied();
            if let Some(Class::Rejected(reason)) = class {
                self.error(at, k, reason);
                continue;
            }
            if let Some(Class::Annotation) = class {
                match k {
                    "title" => pending.annotations.title = self.string(v, at, k),
                    "description" => pending.annotations.description = self.string(v, at, k),
                    "format" => pending.annotations.format = self.string(v, at, k),
                    "default" => {
                        if self.check_lossless(v, at, k) {
                            pending.annotations.default = Some(deep::clone_value(v));
                        }
                    }
                    _ => match v {
                        Value::Array(items) => {
                            if self.check_lossless(v, at, k) {
                                pending.annotations.examples =
                                    Some(items.iter().map(deep::clone_value).collect());
                            }
                        }
                        other => self.error(
                            at,
                            k,
                            format!("`examples` must be an array, got {}", kind_name(other)),
                        ),
                    },
                }
                continue;
            }
            if class.is_none() {
                if self.check_lossless(v, at, k) {
                    pending
                        .annotations
                        .extra
                        .insert(key.clone(), deep::clone_value(v));
                }
                continue;
            }
            if k == "type" {
                continue;
            }
            if !ty.allows(k) {
                let message = if k == "oneOf" {
                    format!(
                        "`oneOf` cannot be combined with `type`; put the type into each alternative \
                         (this node has {})",
                        ty.describe()
                    )
                } else {
                    format!(
                        "`{k}` applies to {}, but this node has {}",
                        owner_of(k),
                        ty.describe()
                    )
                };
                self.error(at, k, message);
                continue;
            }
            match k {
                "enum" => match v {
                    Value::Array(values) if !values.is_empty() => {
                        let mut parsed = Vec::new();
                        let mut rejected = false;
                        for (i, item) in values.iter().enumerate() {
                            let item_at = self.seg(at, Seg::Index(i));
                            match self.scalar(ty, item, item_at, k) {
                                Some(s) => parsed.push(s),
                                None => rejected = true,
                            }
                        }
                        // A partly rejected list is dropped whole: degrading only widens.
                        if !rejected {
                            set_enum(ty, parsed, &mut boolean, &mut string, &mut numeric);
                        }
                    }
                    Value::Array(_) => {
                        self.error(at, k, "`enum` must list at least one value");
                    }
                    other => self.error(
                        at,
                        k,
                        format!("`enum` must be an array, got {}", kind_name(other)),
                    ),
                },
                "const" => {
                    if let Some(s) = self.scalar(ty, v, at, k) {
                        match s {
                            Scalar::Bool(b) => boolean.const_value = Some(b),
                            Scalar::String(s) => string.const_value = Some(s),
                            Scalar::Number(n) => numeric.const_value = Some(n),
                        }
                    }
                }
                "minimum" => numeric.minimum = self.number(v, at, k),
                "maximum" => numeric.maximum = self.number(v, at, k),
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    let parsed = if v.is_boolean() {
                        self.error(
                            at,
                            k,
                            format!(
                                "`{k}` must be a number (the boolean form of JSON Schema draft 4 is not supported)"
                            ),
                        );
                        None
                    } else {
                        self.number(v, at, k)
                    };
                    if k == "exclusiveMinimum" {
                        numeric.exclusive_minimum = parsed;
                    } else {
                        numeric.exclusive_maximum = parsed;
                    }
                }
                "multipleOf" => {
                    let positive = v.as_f64().is_some_and(|f| f > 0.0);
                    if v.is_number() && !positive {
                        self.error(at, k, format!(
                            "`multipleOf` must be greater than 0, got {}",
                            crate::excerpt::json(v)
                        ));
                    } else {
                        numeric.multiple_of = self.number(v, at, k);
                    }
                }
                "minLength" => string.min_length = self.count(v, at, k),
                "maxLength" => string.max_length = self.count(v, at, k),
                "pattern" => {
                    if let Some(p) = self.string(v, at, k) {
                        match crate::pattern::compile(&p) {
                            Ok(_) => string.pattern = Some(p),
                            Err(message) => self.error(at, k, message),
                        }
                    }
                }
                "minItems" => pending.array.min_items = self.count(v, at, k),
                "maxItems" => pending.array.max_items = self.count(v, at, k),
                "uniqueItems" => match v {
                    Value::Bool(b) => pending.array.unique_items = *b,
                    other => self.error(
                        at,
                        k,
                        format!("`uniqueItems` must be a boolean, got {}", kind_name(other)),
                    ),
                },
                "items" => match v {
                    Value::Array(_) => self.error(
                        at,
                        k,
                        "the array (tuple) form of `items` is not supported; give one schema for every item",
                    ),
                    _ => children.push((v, at)),
                },
                "properties" => match v {
                    Value::Object(props) => {
                        property_map = Some(props);
                        for (name, schema) in props {
                            property_children.push((schema, self.seg(at, Seg::Key(name))));
                        }
                    }
                    other => self.error(
                        at,
                        k,
                        format!("`properties` must be an object, got {}", kind_name(other)),
                    ),
                },
                "required" => required_value = Some((v, at)),
                "additionalProperties" => match v {
                    Value::Bool(true) => pending.additional = AddlPlan::Allow,
                    Value::Bool(false) => pending.additional = AddlPlan::Deny,
                    Value::Object(_) => additional_child = Some((v, at)),
                    other => self.error(
                        at,
                        k,
                        format!(
                            "`additionalProperties` must be true, false or a schema object, got {}",
                            kind_name(other)
                        ),
                    ),
                },
                "oneOf" => match v {
                    Value::Array(alternatives) if !alternatives.is_empty() => {
                        for (i, alt) in alternatives.iter().enumerate() {
                            one_of_children.push((alt, self.seg(at, Seg::Index(i))));
                        }
                    }
                    Value::Array(_) => {
                        self.error(at, k, "`oneOf` must list at least one alternative");
                    }
                    other => self.error(
                        at,
                        k,
                        format!("`oneOf` must be an array, got {}", kind_name(other)),
                    ),
                },
                _ => {}
            }
        }

        if let Some((v, at)) = required_value {
            match v {
                Value::Array(names) => {
                    // The names listed so far, by hash: a long `required` list is read in
                    // linear time (a scan of the list per name made it quadratic).
                    let mut listed = std::collections::HashSet::with_capacity(names.len());
                    for (i, name) in names.iter().enumerate() {
                        let item_at = self.seg(at, Seg::Index(i));
                        match name {
                            Value::String(name) => {
                                if listed.contains(name.as_str()) {
                                    self.error(
                                        item_at,
                                        "required",
                                        format!(
                                            "{v} is listed twice in `required`",
                                            v = crate::excerpt::quoted(name)
                                        ),
                                    );
                                } else if !property_map.is_some_and(|p| p.contains_key(name)) {
                                    self.error(
                                        item_at,
                                        "required",
                                        format!(
                                            "required property {v} is not declared in `properties`",
                                            v = crate::excerpt::quoted(name)
                                        ),
                                    );
                                } else {
                                    listed.insert(name.as_str());
                                    pending.required.push(name.clone());
                                }
                            }
                            other => self.error(
                                item_at,
                                "required",
                                format!("`required` must list strings, got {}", kind_name(other)),
                            ),
                        }
                    }
                }
                other => self.error(
                    at,
                    "required",
                    format!(
                        "`required` must be an array of strings, got {}",
                        kind_name(other)
                    ),
                ),
            }
        }

        // Dropping `patternProperties` must not close an object to the keys it described.
        if map.contains_key("patternProperties") && matches!(pending.additional, AddlPlan::Deny) {
            pending.additional = AddlPlan::Allow;
        }
        pending.leaf = match ty {
            Ty::Any | Ty::Invalid => Some(SchemaKind::Any),
            Ty::Null => Some(SchemaKind::Null),
            Ty::Boolean => Some(SchemaKind::Boolean(boolean)),
            Ty::String => Some(SchemaKind::String(string)),
            Ty::Number => Some(SchemaKind::Number(numeric)),
            Ty::Integer => Some(SchemaKind::Integer(numeric)),
            Ty::Array | Ty::Object | Ty::OneOf => None,
        };
        pending.has_items = !children.is_empty();
        pending.property_names = property_map
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        if additional_child.is_some() {
            pending.additional = AddlPlan::Child;
        }
        pending.one_of = one_of_children.len();
        children.extend(property_children);
        children.extend(additional_child);
        children.extend(one_of_children);

        if children.is_empty() && pending.leaf.is_some() && ty != Ty::Invalid {
            let schema = assemble(pending, built);
            built.push(schema);
            return;
        }
        // Build after the children, which are entered in document order.
        work.push(Step::Build(Box::new(pending)));
        for (value, at) in children.into_iter().rev() {
            work.push(Step::Enter(value, at));
        }
    }
}

fn set_enum(
    ty: Ty,
    parsed: Vec<Scalar>,
    boolean: &mut BooleanSchema,
    string: &mut StringSchema,
    numeric: &mut NumericSchema,
) {
    match ty {
        Ty::Boolean => {
            boolean.enum_values = Some(
                parsed
                    .into_iter()
                    .filter_map(|s| match s {
                        Scalar::Bool(b) => Some(b),
                        _ => None,
                    })
                    .collect(),
            );
        }
        Ty::String => {
            string.enum_values = Some(
                parsed
                    .into_iter()
                    .filter_map(|s| match s {
                        Scalar::String(v) => Some(v),
                        _ => None,
                    })
                    .collect(),
            );
        }
        Ty::Number | Ty::Integer => {
            numeric.enum_values = Some(
                parsed
                    .into_iter()
                    .filter_map(|s| match s {
                        Scalar::Number(n) => Some(n),
                        _ => None,
                    })
                    .collect(),
            );
        }
        _ => {}
    }
}

/// Pops the children of `pending` from `built` and assembles the node.
fn assemble(mut pending: Pending, built: &mut Vec<Schema>) -> Schema {
    let count = usize::from(pending.has_items)
        + pending.property_names.len()
        + usize::from(matches!(pending.additional, AddlPlan::Child))
        + pending.one_of;
    let start = built.len().saturating_sub(count);
    let mut children = built.split_off(start).into_iter();
    let items = if pending.has_items {
        children.next()
    } else {
        None
    };
    let properties: Vec<(String, Schema)> = pending
        .property_names
        .drain(..)
        .zip(children.by_ref())
        .collect();
    let additional = match pending.additional {
        AddlPlan::Allow => AdditionalProperties::Allow,
        AddlPlan::Deny => AdditionalProperties::Deny,
        AddlPlan::Child => match children.next() {
            Some(s) => AdditionalProperties::Schema(Box::new(s)),
            None => AdditionalProperties::Allow,
        },
    };
    let alternatives: Vec<Schema> = children.collect();
    let kind = match (pending.ty, pending.leaf) {
        (Ty::Array, _) => {
            let mut array = pending.array;
            array.items = items.map(Box::new);
            SchemaKind::Array(array)
        }
        (Ty::Object, _) => SchemaKind::Object(ObjectSchema {
            properties,
            required: pending.required,
            additional_properties: additional,
        }),
        // An empty or invalid `oneOf` (an error already) degrades to any value.
        (Ty::OneOf, _) if alternatives.is_empty() => SchemaKind::Any,
        (Ty::OneOf, _) => SchemaKind::OneOf(alternatives),
        (_, leaf) => {
            // Children of an invalid node: the whole parse fails, drop them without recursion.
            for s in items
                .into_iter()
                .chain(properties.into_iter().map(|(_, s)| s))
            {
                deep::drop_schema(s);
            }
            if let AdditionalProperties::Schema(s) = additional {
                deep::drop_schema(*s);
            }
            for s in alternatives {
                deep::drop_schema(s);
            }
            leaf.unwrap_or(SchemaKind::Any)
        }
    };
    Schema {
        kind,
        annotations: pending.annotations,
    }
}
