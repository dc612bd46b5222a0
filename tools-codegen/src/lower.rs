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
//! | no `type`, but `properties`/`required`/`additionalProperties`/`patternProperties` | the object they describe, or any array or scalar (a union: those keywords say nothing of other values) |
//! | no `type`, but `items`/`prefixItems` | the array they describe, or any object or scalar |
//! | `items` absent or `true` | elements of unconstrained JSON |
//! | `items` an array (tuple form) or `prefixItems` present | elements of unknown type |
//! | `additionalProperties` absent or `true` | an open object (extra keys of unknown type) |
//! | `additionalProperties: false` | a closed object |
//! | `additionalProperties` a schema | a map; with declared properties, extra keys of unknown type |
//! | `patternProperties` | extra keys of unknown type (the object is open) |
//! | a key in `required` but not in `properties` | a required key of the extra-key type (held once for all such keys: [`Undeclared`]) |
//! | a malformed keyword (`properties` not an object, `required` not strings, ...) | unknown |
//! | nesting deeper than [`MAX_DEPTH`] | unknown |
//!
//! Every unknown or ignored construct widens the type, never narrows it, so the rendered type
//! accepts every value the schema accepts.
//!
//! # What the types leave out
//!
//! Each row above that reads a schema as unknown (or drops what a keyword says about elements
//! or extra keys) is a place where the rendered SDK says less than the schema. The reader
//! reports each such place to a [`Recorder`] as a [`Degradation`], at the RFC 6901 pointer of
//! the schema node where it gave up; [`crate::schema_warnings`] collects them per tool and the
//! CLI prints them as warnings. What is reported:
//!
//! | [`Degradation`] | where |
//! | --- | --- |
//! | `TooDeep` | a schema nested deeper than [`MAX_DEPTH`] levels (once per branch, at the first level read as unknown) |
//! | `Reference` | `$ref`, `$dynamicRef`, `$recursiveRef` |
//! | `Combinator` | `anyOf`, `allOf`, `not`, `if` without `type` |
//! | `UnknownType` | a `type` name that is no JSON type |
//! | `Malformed` | a keyword whose value has the wrong shape (`properties` not an object, `required` not names, `type` not a name or names, `oneOf` not a non-empty array, ...) |
//! | `NonScalarLiteral` | `const` or `enum` with an object or array value |
//! | `NoValue` | `false`, an empty `enum`, `items: false`: schemas no value (or element) satisfies |
//! | `NotASchema` | `null`, a number, a string or an array in schema position |
//! | `Tuple` | `prefixItems`, or `items` as an array: the elements are unknown |
//! | `UntypedExtraKeys` | `patternProperties`, or an `additionalProperties` schema beside `properties`: the values of further keys are unknown |
//!
//! Not reported, because no reader could type them: keywords that only narrow a type
//! (`minLength`, `format`, `anyOf` beside `type`, ...), `integer` read as TypeScript's
//! `number`, a float literal widened to Python's `float`, and Python's `Name | dict[str, Any]`
//! for an open object, whose declared keys mypy cannot hold a dict with further keys to (see
//! [`crate::schema_rules`]).
//!
//! # Linear in the catalog
//!
//! A catalog may come from an outside server, so what it makes the reader (and the printers)
//! hold or do grows no faster than the catalog: nothing is copied per use (the type of
//! undeclared required keys is held once, [`Undeclared`]), and repeats in lists a catalog
//! controls (`enum`, `oneOf`, `required`, union members) are found by hashing
//! ([`crate::distinct`]), not by comparing each item with every earlier one.
//!
//! The reader recurses at most [`MAX_DEPTH`] levels and treats anything deeper as unknown, so a
//! schema nested 100,000 levels deep costs 48 stack frames. The bound also keeps the rendered
//! types within what `tsc` can compare: past about 100 nested levels it reports "excessive stack
//! depth" when checking a value against the type.

use crate::distinct::{NameSet, retain_first};
use crate::json::{Json, View};
use serde_json::Number;

/// Schema levels read before a subtree degrades to unknown.
pub const MAX_DEPTH: usize = 48;

/// Why the rendered type of a schema node says less than the node: what the reader could not
/// express there (each variant names its constructs; [`schema_rules`] lists every
/// construct). The display is a sentence fragment that says what was left out and how the SDK
/// types the node.
///
/// [`schema_rules`]: crate::schema_rules
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Degradation {
    /// Nested deeper than [`MAX_DEPTH`] levels: the subtree is not read.
    TooDeep,
    /// A reference keyword (`$ref`, `$dynamicRef`, `$recursiveRef`): references are not followed.
    Reference {
        /// The keyword.
        keyword: &'static str,
    },
    /// `anyOf`, `allOf`, `not` or `if` without a `type` beside it.
    Combinator {
        /// The keyword (the first of them in the schema).
        keyword: &'static str,
    },
    /// `type` names something that is not a JSON type (`"date"`).
    UnknownType {
        /// The name, as the schema spells it.
        name: String,
    },
    /// A keyword whose value has the wrong shape.
    Malformed {
        /// The keyword.
        keyword: &'static str,
        /// What its value must be (`"an object of schemas"`).
        expected: &'static str,
    },
    /// `const` or `enum` with an object or array value: only scalar literals are expressed.
    NonScalarLiteral {
        /// `const` or `enum`.
        keyword: &'static str,
    },
    /// A schema no value satisfies (`false`, an empty `enum`; `items: false` for elements).
    NoValue {
        /// What it is: `false`, `an empty enum` or `items: false`.
        what: &'static str,
    },
    /// Something other than a schema (an object or a boolean) in schema position.
    NotASchema {
        /// What was found: `null`, `a number`, `a string` or `an array`.
        found: &'static str,
    },
    /// A tuple (`prefixItems`, or `items` as an array): the elements are typed unknown.
    Tuple {
        /// `prefixItems` or `items`.
        keyword: &'static str,
    },
    /// `patternProperties`, or an `additionalProperties` schema beside `properties`: the values
    /// of undeclared keys are typed unknown.
    UntypedExtraKeys {
        /// `patternProperties` or `additionalProperties`.
        keyword: &'static str,
    },
}

/// How a node the reader gave up on is typed.
const AS_UNKNOWN: &str = "it is typed `unknown` (TypeScript) and `Any` (Python)";

impl std::fmt::Display for Degradation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Degradation::TooDeep => {
                write!(f, "nested deeper than {MAX_DEPTH} levels; {AS_UNKNOWN}")
            }
            Degradation::Reference { keyword } => {
                write!(f, "`{keyword}` is not followed; {AS_UNKNOWN}")
            }
            Degradation::Combinator { keyword } => write!(
                f,
                "`{keyword}` without `type` beside it is not expressed; {AS_UNKNOWN}"
            ),
            Degradation::UnknownType { name } => write!(
                f,
                "`type` {} is not a JSON type; {AS_UNKNOWN}",
                tools_schema::excerpt::quoted(name)
            ),
            Degradation::Malformed { keyword, expected } => {
                write!(f, "`{keyword}` is not {expected}; {AS_UNKNOWN}")
            }
            Degradation::NonScalarLiteral { keyword } => write!(
                f,
                "`{keyword}` has an object or array value, which is not expressed; {AS_UNKNOWN}"
            ),
            Degradation::NoValue { what } => {
                write!(
                    f,
                    "{what} admits no value, which is not expressed; {AS_UNKNOWN}"
                )
            }
            Degradation::NotASchema { found } => {
                write!(f, "{found} is not a schema; {AS_UNKNOWN}")
            }
            Degradation::Tuple { keyword } => write!(
                f,
                "the tuple of `{keyword}` is not expressed; its elements are typed `unknown` \
                 (TypeScript) and `Any` (Python)"
            ),
            Degradation::UntypedExtraKeys { keyword } => write!(
                f,
                "`{keyword}`{} is not expressed; the values of undeclared keys are typed \
                 `unknown` (TypeScript) and `Any` (Python)",
                if *keyword == "additionalProperties" {
                    " beside declared properties"
                } else {
                    ""
                }
            ),
        }
    }
}

/// One reference token of the pointer to the node being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// An object key (a keyword, or a property name under `properties`).
    Key(&'a str),
    /// An array index (under `oneOf`).
    Index(usize),
}

/// What the reader tells about its walk: where it is (a stack of tokens) and where it gave up.
pub(crate) trait Recorder<'a> {
    /// The reader steps into `token` of the current node.
    fn enter(&mut self, token: Token<'a>);
    /// The reader steps back out of the last token entered.
    fn leave(&mut self);
    /// The current node's type says less than the node, for this reason.
    fn degraded(&mut self, degradation: Degradation);
}

/// The recorder of plain rendering: records nothing, and compiles to nothing.
pub(crate) struct Silent;

impl Recorder<'_> for Silent {
    #[inline(always)]
    fn enter(&mut self, _: Token<'_>) {}
    #[inline(always)]
    fn leave(&mut self) {}
    #[inline(always)]
    fn degraded(&mut self, _: Degradation) {}
}

/// Reads the child `schema` reached through `tokens` (one or two) of the current node.
fn child<'a, J: Json, R: Recorder<'a>>(
    schema: &'a J,
    tokens: &[Token<'a>],
    depth: usize,
    rec: &mut R,
) -> Ty<'a> {
    for token in tokens {
        rec.enter(*token);
    }
    let ty = lower_at(schema, depth + 1, rec);
    for _ in tokens {
        rec.leave();
    }
    ty
}

/// [`Ty::Unknown`], reported to `rec` as `degradation`.
fn unknown<'a, R: Recorder<'a>>(rec: &mut R, degradation: Degradation) -> Ty<'a> {
    rec.degraded(degradation);
    Ty::Unknown
}

/// A type in the renderers' model.
///
/// A tree: no part is shared, so comparing or hashing one costs its size. Equal types are
/// found through their hash (see [`crate::distinct`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
/// `serde_json` compares them (`1` and `1.0` differ); the hash agrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Lit<'a> {
    Null,
    Bool(bool),
    Number(&'a Number),
    String(&'a str),
}

/// An object type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ObjectTy<'a> {
    /// Declared properties in source order.
    pub props: Vec<Prop<'a>>,
    /// Keys that `required` names but `properties` does not declare.
    pub undeclared: Option<Undeclared<'a>>,
    /// What keys beyond `props` may hold.
    pub extra: Extra<'a>,
    /// The object's own description (or title).
    pub doc: Option<&'a str>,
}

/// The keys an object requires without declaring them, all of one type: the values
/// `additionalProperties` admits, or JSON when it is not a schema.
///
/// The type is held once, not copied per key: a catalog with many such keys over a large (or
/// itself so built) `additionalProperties` schema would otherwise have its types grow with the
/// product of the two, or exponentially with the nesting. The printers write it once too when
/// it is not short (see [`SHARED_TYPE_BYTES`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Undeclared<'a> {
    /// The keys, in `required` order, each once.
    pub keys: Vec<&'a str>,
    /// Their one type.
    pub ty: Ty<'a>,
}

/// The longest text of an undeclared keys' type that a printer repeats for each key; a longer
/// one is written once and referred to (see [`Undeclared`]).
pub(crate) const SHARED_TYPE_BYTES: usize = 64;

impl ObjectTy<'_> {
    /// True when the object names no key: no declared property and no undeclared required key.
    pub(crate) fn has_no_keys(&self) -> bool {
        self.props.is_empty() && self.undeclared.is_none()
    }
}

/// One property of an object type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Prop<'a> {
    /// The exact wire name.
    pub key: &'a str,
    pub ty: Ty<'a>,
    pub required: bool,
    /// The property schema's description (or title).
    pub doc: Option<&'a str>,
}

/// The keys an object admits beyond its declared properties.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Extra<'a> {
    /// `additionalProperties: false`: none.
    Closed,
    /// Any key, any value.
    Open,
    /// Any key, values of this type (a map).
    Map(Box<Ty<'a>>),
}

/// Reads a raw schema. Total: never fails, never recurses deeper than [`MAX_DEPTH`].
#[cfg(test)]
pub(crate) fn lower<J: Json>(schema: &J) -> Ty<'_> {
    lower_at(schema, 0, &mut Silent)
}

fn lower_at<'a, J: Json, R: Recorder<'a>>(schema: &'a J, depth: usize, rec: &mut R) -> Ty<'a> {
    if depth > MAX_DEPTH {
        // Past the depth, any value. Not `JsonValue`: checking a deep value against that
        // recursive type makes `tsc --strict` fail with "Excessive stack depth", while
        // `unknown` (and Python's `Any`) admit every JSON value as well.
        return unknown(rec, Degradation::TooDeep);
    }
    match schema.view() {
        View::Object => lower_map(schema, depth, rec),
        // `true` admits every value, which `unknown` says exactly.
        View::Bool(true) => Ty::Unknown,
        View::Bool(false) => unknown(rec, Degradation::NoValue { what: "`false`" }),
        View::Null => unknown(rec, Degradation::NotASchema { found: "null" }),
        View::Number(_) => unknown(rec, Degradation::NotASchema { found: "a number" }),
        View::String(_) => unknown(rec, Degradation::NotASchema { found: "a string" }),
        View::Array(_) => unknown(rec, Degradation::NotASchema { found: "an array" }),
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
    /// The reference keyword, when there is one.
    reference: Option<&'static str>,
    /// The first of `anyOf`, `allOf`, `not`, `if`.
    narrowing: Option<&'static str>,
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
            reference: None,
            narrowing: None,
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
                "$ref" => k.reference = k.reference.or(Some("$ref")),
                "$dynamicRef" => k.reference = k.reference.or(Some("$dynamicRef")),
                "$recursiveRef" => k.reference = k.reference.or(Some("$recursiveRef")),
                "anyOf" => k.narrowing = k.narrowing.or(Some("anyOf")),
                "allOf" => k.narrowing = k.narrowing.or(Some("allOf")),
                "not" => k.narrowing = k.narrowing.or(Some("not")),
                "if" => k.narrowing = k.narrowing.or(Some("if")),
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

/// The names `type` may hold.
const JSON_TYPES: [&str; 7] = [
    "null", "boolean", "string", "number", "integer", "array", "object",
];

/// What `type` must be.
const TYPE_SHAPE: &str = "a type name or a non-empty array of type names";

fn lower_map<'a, J: Json, R: Recorder<'a>>(map: &'a J, depth: usize, rec: &mut R) -> Ty<'a> {
    let k = Keywords::scan(map);
    if let Some(keyword) = k.reference {
        return unknown(rec, Degradation::Reference { keyword });
    }
    if let Some(value) = k.constant {
        return literals(std::slice::from_ref(value), "const", rec);
    }
    if let Some(values) = k.enumeration {
        return match values.view() {
            View::Array(values) if !values.is_empty() => literals(values, "enum", rec),
            View::Array(_) => unknown(
                rec,
                Degradation::NoValue {
                    what: "an empty `enum`",
                },
            ),
            _ => unknown(
                rec,
                Degradation::Malformed {
                    keyword: "enum",
                    expected: "an array",
                },
            ),
        };
    }
    let malformed_type = Degradation::Malformed {
        keyword: "type",
        expected: TYPE_SHAPE,
    };
    match k.types.map(J::view) {
        Some(View::String(name)) => lower_type(name, &k, depth, rec),
        Some(View::Array(names)) => {
            if names.is_empty() {
                return unknown(rec, malformed_type);
            }
            // Every name is checked before any is read, and each distinct name is read once: a
            // repeated `"object"` would read the same subtree again at every level, which
            // nested 48 levels deep is 2^48 readings.
            let mut distinct: Vec<&str> = Vec::new();
            for name in names {
                let View::String(name) = name.view() else {
                    return unknown(rec, malformed_type);
                };
                if !JSON_TYPES.contains(&name) {
                    return unknown(
                        rec,
                        Degradation::UnknownType {
                            name: name.to_owned(),
                        },
                    );
                }
                if !distinct.contains(&name) {
                    distinct.push(name);
                }
            }
            union(
                distinct
                    .into_iter()
                    .map(|name| lower_type(name, &k, depth, rec))
                    .collect(),
            )
        }
        Some(_) => unknown(rec, malformed_type),
        None => {
            if let Some(alternatives) = k.one_of {
                return match alternatives.view() {
                    View::Array(items) if !items.is_empty() => union(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, s)| {
                                child(s, &[Token::Key("oneOf"), Token::Index(i)], depth, rec)
                            })
                            .collect(),
                    ),
                    _ => unknown(
                        rec,
                        Degradation::Malformed {
                            keyword: "oneOf",
                            expected: "a non-empty array of schemas",
                        },
                    ),
                };
            }
            if k.implies_object() || k.implies_array() {
                return untyped_container(map, &k, depth, rec);
            }
            if let Some(keyword) = k.narrowing {
                return unknown(rec, Degradation::Combinator { keyword });
            }
            Ty::Json
        }
    }
}

/// A schema with object or array keywords but no `type`: those keywords apply to objects (or
/// arrays) only, so any other value is valid too. The union of the object the keywords describe
/// (any object when there are none), the array they describe (any array when there are none),
/// and every scalar. At the root, the schema's description is the object's, as it is for a
/// root object.
fn untyped_container<'a, J: Json, R: Recorder<'a>>(
    map: &'a J,
    k: &Keywords<'a, J>,
    depth: usize,
    rec: &mut R,
) -> Ty<'a> {
    let object = if k.implies_object() {
        match lower_object(k, depth, rec) {
            Ty::Object(mut object) if depth == 0 => {
                object.doc = doc_of(map);
                Ty::Object(object)
            }
            ty => ty,
        }
    } else {
        Ty::Object(Box::new(ObjectTy {
            props: Vec::new(),
            undeclared: None,
            extra: Extra::Open,
            doc: None,
        }))
    };
    let array = if k.implies_array() {
        lower_array(k, depth, rec)
    } else {
        Ty::Array(Box::new(Ty::Json))
    };
    union(vec![
        object,
        array,
        Ty::Null,
        Ty::Boolean,
        Ty::Number,
        Ty::String,
    ])
}

fn lower_type<'a, J: Json, R: Recorder<'a>>(
    name: &str,
    k: &Keywords<'a, J>,
    depth: usize,
    rec: &mut R,
) -> Ty<'a> {
    match name {
        "null" => Ty::Null,
        "boolean" => Ty::Boolean,
        "string" => Ty::String,
        "number" => Ty::Number,
        "integer" => Ty::Integer,
        "array" => lower_array(k, depth, rec),
        "object" => lower_object(k, depth, rec),
        _ => unknown(
            rec,
            Degradation::UnknownType {
                name: name.to_owned(),
            },
        ),
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

/// The literals of `values` (of the keyword `keyword`).
fn literals<'a, J: Json, R: Recorder<'a>>(
    values: &'a [J],
    keyword: &'static str,
    rec: &mut R,
) -> Ty<'a> {
    let mut out: Vec<Lit<'_>> = Vec::with_capacity(values.len());
    for value in values {
        let Some(lit) = literal(value) else {
            return unknown(rec, Degradation::NonScalarLiteral { keyword });
        };
        out.push(lit);
    }
    retain_first(&mut out);
    Ty::Literals(out)
}

fn lower_array<'a, J: Json, R: Recorder<'a>>(
    k: &Keywords<'a, J>,
    depth: usize,
    rec: &mut R,
) -> Ty<'a> {
    if let Some(prefix) = k.prefix_items {
        return match prefix.view() {
            View::Array(_) => {
                rec.degraded(Degradation::Tuple {
                    keyword: "prefixItems",
                });
                Ty::Array(Box::new(Ty::Unknown))
            }
            _ => unknown(
                rec,
                Degradation::Malformed {
                    keyword: "prefixItems",
                    expected: "an array of schemas",
                },
            ),
        };
    }
    let element = match k.items {
        None => Ty::Json,
        Some(items) => match items.view() {
            View::Bool(true) => Ty::Json,
            View::Bool(false) => unknown(
                rec,
                Degradation::NoValue {
                    what: "`items: false`",
                },
            ),
            View::Array(_) => unknown(rec, Degradation::Tuple { keyword: "items" }),
            View::Object => child(items, &[Token::Key("items")], depth, rec),
            _ => {
                return unknown(
                    rec,
                    Degradation::Malformed {
                        keyword: "items",
                        expected: "a schema or an array of schemas",
                    },
                );
            }
        },
    };
    Ty::Array(Box::new(element))
}

fn lower_object<'a, J: Json, R: Recorder<'a>>(
    k: &Keywords<'a, J>,
    depth: usize,
    rec: &mut R,
) -> Ty<'a> {
    let mut extra = match k.additional {
        None => Extra::Open,
        Some(schema) => match schema.view() {
            View::Bool(true) => Extra::Open,
            View::Bool(false) => Extra::Closed,
            View::Object => {
                match child(schema, &[Token::Key("additionalProperties")], depth, rec) {
                    Ty::Unknown | Ty::Json => Extra::Open,
                    ty => Extra::Map(Box::new(ty)),
                }
            }
            _ => {
                return unknown(
                    rec,
                    Degradation::Malformed {
                        keyword: "additionalProperties",
                        expected: "a schema",
                    },
                );
            }
        },
    };
    if let Some(patterns) = k.patterns {
        match patterns.view() {
            View::Object => {
                if patterns.entries().next().is_some() {
                    rec.degraded(Degradation::UntypedExtraKeys {
                        keyword: "patternProperties",
                    });
                    extra = Extra::Open;
                }
            }
            _ => {
                return unknown(
                    rec,
                    Degradation::Malformed {
                        keyword: "patternProperties",
                        expected: "an object of schemas",
                    },
                );
            }
        }
    }
    let malformed_required = Degradation::Malformed {
        keyword: "required",
        expected: "an array of property names",
    };
    let mut required: Vec<&'a str> = Vec::new();
    if let Some(names) = k.required {
        let View::Array(names) = names.view() else {
            return unknown(rec, malformed_required);
        };
        for name in names {
            match name.view() {
                View::String(name) => required.push(name),
                _ => return unknown(rec, malformed_required),
            }
        }
    }
    retain_first(&mut required);
    // Looked up once per property: a set, as a list would cost properties x names.
    let required_set = NameSet::new(required.iter().copied());
    let mut props = Vec::new();
    if let Some(properties) = k.properties {
        let View::Object = properties.view() else {
            return unknown(
                rec,
                Degradation::Malformed {
                    keyword: "properties",
                    expected: "an object of schemas",
                },
            );
        };
        for (key, schema) in properties.entries() {
            props.push(Prop {
                key,
                ty: child(
                    schema,
                    &[Token::Key("properties"), Token::Key(key)],
                    depth,
                    rec,
                ),
                required: required_set.contains(key),
                doc: doc_of(schema),
            });
        }
    }
    let declared = NameSet::new(props.iter().map(|p| p.key));
    required.retain(|name| !declared.contains(name));
    // Required keys that are not declared have the map's value type (JSON when there is no
    // map), held once however many keys share it.
    let mut undeclared_ty = Ty::Json;
    if (!props.is_empty() || !required.is_empty()) && matches!(extra, Extra::Map(_)) {
        // A declared property's type need not fit the map's value type, so one index signature
        // cannot state both: the extra keys are read as unknown.
        rec.degraded(Degradation::UntypedExtraKeys {
            keyword: "additionalProperties",
        });
        if let Extra::Map(ty) = std::mem::replace(&mut extra, Extra::Open) {
            undeclared_ty = *ty;
        }
    }
    let undeclared = (!required.is_empty()).then_some(Undeclared {
        keys: required,
        ty: undeclared_ty,
    });
    Ty::Object(Box::new(ObjectTy {
        props,
        undeclared,
        extra,
        doc: None,
    }))
}

/// A union of `members`: nested unions are flattened, duplicates dropped, and an `Unknown` or
/// `Json` member absorbs the whole union.
pub(crate) fn union(members: Vec<Ty<'_>>) -> Ty<'_> {
    let mut flat: Vec<Ty<'_>> = Vec::with_capacity(members.len());
    let mut json = false;
    let mut pending = members;
    pending.reverse();
    while let Some(member) = pending.pop() {
        match member {
            Ty::Unknown => return Ty::Unknown,
            Ty::Json => json = true,
            Ty::Union(inner) => pending.extend(inner.into_iter().rev()),
            member => flat.push(member),
        }
    }
    if json {
        return Ty::Json;
    }
    retain_first(&mut flat);
    match flat.len() {
        0 => Ty::Unknown,
        1 => flat.pop().unwrap_or(Ty::Unknown),
        _ => Ty::Union(flat),
    }
}

/// Reads a tool's root schema and attaches the schema's own description to a root object.
pub(crate) fn lower_root<J: Json>(schema: &J) -> Ty<'_> {
    lower_root_recorded(schema, &mut Silent)
}

/// [`lower_root`], telling `rec` where the type says less than the schema.
pub(crate) fn lower_root_recorded<'a, J: Json, R: Recorder<'a>>(
    schema: &'a J,
    rec: &mut R,
) -> Ty<'a> {
    match lower_at(schema, 0, rec) {
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

    /// Object and array keywords apply to objects and arrays only: without `type`, every
    /// other value is valid too (`null`, `""`, `false`), so the type is a union; with `type`
    /// stated it stays the precise object or array.
    #[test]
    fn object_and_array_keywords_without_type_admit_every_other_value() {
        let others = |container: Ty<'static>| {
            let mut members = vec![container];
            members.extend([Ty::Null, Ty::Boolean, Ty::Number, Ty::String]);
            members
        };
        for schema in [
            json!({"properties": {"a": {"type": "string"}}}),
            json!({"required": ["a"]}),
            json!({"additionalProperties": false}),
            json!({"patternProperties": {"^x": {}}}),
        ] {
            let Ty::Union(members) = lower(&schema) else {
                panic!("{schema} is not a union");
            };
            assert!(matches!(members[0], Ty::Object(_)), "{schema}");
            assert_eq!(
                members[1..],
                others(Ty::Array(Box::new(Ty::Json))),
                "{schema}"
            );
        }
        let items = json!({"items": {"type": "string"}});
        let Ty::Union(members) = lower(&items) else {
            panic!("not a union");
        };
        let any_object = Ty::Object(Box::new(ObjectTy {
            props: Vec::new(),
            undeclared: None,
            extra: Extra::Open,
            doc: None,
        }));
        assert_eq!(members[0], any_object);
        assert_eq!(members[1..], others(Ty::Array(Box::new(Ty::String))));
        // Both kinds of keyword: the object and the array they describe.
        let both = json!({"properties": {}, "items": {"type": "null"}});
        let Ty::Union(members) = lower(&both) else {
            panic!("not a union");
        };
        assert!(matches!(members[0], Ty::Object(_)));
        assert_eq!(members[1..], others(Ty::Array(Box::new(Ty::Null))));
        // `type` stated: precise.
        assert!(matches!(
            lower(&json!({"type": "object", "properties": {"a": {"type": "string"}}})),
            Ty::Object(_)
        ));
        assert_eq!(
            lower(&json!({"type": "array", "items": {"type": "string"}})),
            Ty::Array(Box::new(Ty::String))
        );
        // At the root, the description is the object's, as for a typed root.
        let schema = json!({"description": "Root.", "properties": {}});
        let Ty::Union(members) = lower_root(&schema) else {
            panic!("not a union");
        };
        assert!(matches!(&members[0], Ty::Object(o) if o.doc == Some("Root.")));
    }

    #[test]
    fn required_but_undeclared_keys_are_required() {
        let schema = json!({"type": "object", "required": ["a"]});
        let Ty::Object(object) = lower(&schema) else {
            panic!("not an object");
        };
        assert!(object.props.is_empty());
        assert_eq!(
            object.undeclared,
            Some(Undeclared {
                keys: vec!["a"],
                ty: Ty::Json
            })
        );
    }

    #[test]
    fn degradations_say_what_was_left_out() {
        let unknown = "it is typed `unknown` (TypeScript) and `Any` (Python)";
        for (degradation, text) in [
            (
                Degradation::TooDeep,
                format!("nested deeper than 48 levels; {unknown}"),
            ),
            (
                Degradation::Reference { keyword: "$ref" },
                format!("`$ref` is not followed; {unknown}"),
            ),
            (
                Degradation::UnknownType {
                    name: "d\"".repeat(300),
                },
                format!(
                    "`type` \"{}\"… (400 more bytes) is not a JSON type; {unknown}",
                    "d\\\"".repeat(100)
                ),
            ),
            (
                Degradation::Malformed {
                    keyword: "required",
                    expected: "an array of property names",
                },
                format!("`required` is not an array of property names; {unknown}"),
            ),
            (
                Degradation::NoValue {
                    what: "an empty `enum`",
                },
                format!("an empty `enum` admits no value, which is not expressed; {unknown}"),
            ),
            (
                Degradation::NotASchema { found: "null" },
                format!("null is not a schema; {unknown}"),
            ),
            (
                Degradation::UntypedExtraKeys {
                    keyword: "patternProperties",
                },
                "`patternProperties` is not expressed; the values of undeclared keys are typed \
                 `unknown` (TypeScript) and `Any` (Python)"
                    .to_owned(),
            ),
            (
                Degradation::UntypedExtraKeys {
                    keyword: "additionalProperties",
                },
                "`additionalProperties` beside declared properties is not expressed; the values \
                 of undeclared keys are typed `unknown` (TypeScript) and `Any` (Python)"
                    .to_owned(),
            ),
        ] {
            assert_eq!(degradation.to_string(), text);
        }
    }

    /// Counts the nodes the reader steps into, and stops the test past a budget.
    struct Budget(usize);

    impl Recorder<'_> for Budget {
        fn enter(&mut self, _: Token<'_>) {
            self.0 = self
                .0
                .checked_sub(1)
                .expect("the reader read far more than the schema");
        }
        fn leave(&mut self) {}
        fn degraded(&mut self, _: Degradation) {}
    }

    /// A `type` array that repeats a name reads the subtree once, not once per repetition (at
    /// every level: 3^48 readings for this schema).
    #[test]
    fn repeated_type_names_read_each_subtree_once() {
        let mut schema = json!({"type": "string"});
        for _ in 0..MAX_DEPTH {
            schema = json!({"type": ["object", "object", "null", "object"], "properties": {"a": schema}});
        }
        let mut budget = Budget(10 * MAX_DEPTH);
        let ty = lower_root_recorded(&schema, &mut budget);
        assert!(
            matches!(ty, Ty::Union(ref members) if members.len() == 2),
            "{ty:?}"
        );
        assert!(budget.0 >= 8 * MAX_DEPTH, "{} steps left", budget.0);
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

    /// Long `enum`s, `oneOf`s and `required` lists, each item also repeated, are read in about
    /// one comparison per item (not one per earlier item: 10,000 alternatives took 50 million).
    #[test]
    fn long_lists_are_deduplicated_in_linear_work() {
        use crate::distinct::work;
        let n = 10_000;
        let values: Vec<serde_json::Value> =
            (0..2 * n).map(|i| json!(format!("v{}", i % n))).collect();
        let alternatives: Vec<serde_json::Value> =
            values.iter().map(|v| json!({"const": v})).collect();
        let names: Vec<serde_json::Value> =
            (0..2 * n).map(|i| json!(format!("k{}", i % n))).collect();
        let properties: serde_json::Map<String, serde_json::Value> = (0..n)
            .step_by(2)
            .map(|i| (format!("k{i}"), json!({"type": "string"})))
            .collect();
        let schemas = [
            json!({"enum": values}),
            json!({"oneOf": alternatives}),
            json!({"type": "object", "properties": properties, "required": names,
                   "additionalProperties": {"type": "integer"}}),
        ];
        work::take();
        let Ty::Literals(literals) = lower(&schemas[0]) else {
            panic!("not literals");
        };
        assert_eq!(literals.len(), n);
        assert_eq!(literals[n - 1], Lit::String("v9999"));
        let Ty::Union(members) = lower(&schemas[1]) else {
            panic!("not a union");
        };
        assert_eq!(members.len(), n);
        let Ty::Object(object) = lower(&schemas[2]) else {
            panic!("not an object");
        };
        assert_eq!(object.props.len(), n / 2);
        assert!(object.props.iter().all(|p| p.required));
        let undeclared = object.undeclared.as_ref().expect("undeclared keys");
        assert_eq!(undeclared.keys.len(), n / 2);
        assert_eq!(undeclared.keys[0], "k1");
        assert_eq!(undeclared.ty, Ty::Integer);
        let steps = work::take();
        assert!(steps < 10 * n as u64, "{steps} comparisons");
    }

    /// Required keys that `properties` does not declare hold the `additionalProperties` type
    /// once, however many keys there are and however it nests: 40 levels of two such keys
    /// each read 40 schemas, where a copy per key made 2^40 types.
    #[test]
    fn undeclared_keys_share_one_type() {
        let mut schema = json!({"type": "string"});
        for _ in 0..40 {
            schema =
                json!({"type": "object", "additionalProperties": schema, "required": ["a", "b"]});
        }
        let mut budget = Budget(100);
        let mut ty = lower_root_recorded(&schema, &mut budget);
        let mut levels = 0;
        while let Ty::Object(object) = ty {
            let undeclared = object.undeclared.expect("undeclared keys");
            assert_eq!(undeclared.keys, ["a", "b"]);
            ty = undeclared.ty;
            levels += 1;
        }
        assert_eq!((levels, ty), (40, Ty::String));
    }
}
