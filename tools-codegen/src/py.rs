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
//! An object that admits keys it does not declare (`additionalProperties` absent, `true`, `{}` or
//! a schema beside declared properties, or `patternProperties`) is an *open* object. PEP 728
//! would say so in the `TypedDict` itself (`extra_items=Any`), but mypy does not implement it
//! (mypy 2.4 refuses the keyword and still rejects the extra key), so an open object with
//! declared keys is written `Name | dict[str, Any]` where it is used: a dict with further keys
//! type-checks as the `dict` alternative. The `TypedDict` still documents the declared keys (a
//! value that matches it is read with their types), but mypy enforces them only for a closed
//! object (`additionalProperties: false`), which is the `TypedDict` alone. An open object's
//! `TypedDict` is marked `# open` on the line that declares it, and the module's docstring (the
//! declarations' first comment) says what the mark means; a closed one is unmarked. An open
//! object without declared keys is `dict[str, Any]`.

use crate::distinct::TextPieces;
use crate::lower::{Extra, Lit, ObjectTy, SHARED_TYPE_BYTES, Ty, lower_root};
use crate::text::{is_ascii_identifier, is_py_keyword, pascal_case, py_string};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

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

/// One `TypedDict` declaration, or a type alias.
#[derive(Debug, Clone)]
pub(crate) struct TypedDictDef {
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<FieldDef>,
    /// Set for a type alias (`Name = <type>`) instead of a `TypedDict`: the type of the
    /// undeclared required keys of an object when it is long and shared by several keys
    /// (see [`crate::lower::Undeclared`]).
    pub alias: Option<String>,
    /// The object admits keys beyond `fields`, so it is used as `Name | dict[str, Any]` (see
    /// the module docs); false for a closed object and for an alias.
    pub open: bool,
}

/// The alternative an open object's `TypedDict` is used with: what admits its further keys.
const OPEN_ALTERNATIVE: &str = " | dict[str, Any]";

/// One `TypedDict` key.
#[derive(Debug, Clone)]
pub(crate) struct FieldDef {
    pub key: String,
    pub ty: String,
    pub required: bool,
    pub doc: Option<String>,
}

/// The most characters a generated type name takes from one tool name or key (see
/// [`name_part`]).
pub(crate) const NAME_PART_CHARS: usize = 64;

/// The most characters of a generated type name before the number that makes it unique: the
/// parts of a name add up along the path to an object (at most [`crate::MAX_DEPTH`] of them),
/// and every object under a path repeats them.
pub(crate) const NAME_CHARS: usize = 256;

/// The part of a generated type name taken from a tool name or a key: its [`pascal_case`],
/// cut to [`NAME_PART_CHARS`]. A catalog's names and keys may be of any length, and each
/// type name under them repeats this part.
pub(crate) fn name_part(name: &str) -> String {
    pascal_case(name, NAME_PART_CHARS)
}

/// The naming context of one SDK render: the generated definitions and the names taken.
#[derive(Debug)]
pub(crate) struct PyModule {
    /// Definitions in emission order (every definition after the ones it refers to).
    pub defs: Vec<TypedDictDef>,
    taken: BTreeSet<String>,
    /// For each base name claimed, the number to try next: every number below it is taken, so
    /// many objects with the same base name cost one step each, not one per earlier one.
    next: HashMap<String, u64>,
}

impl PyModule {
    /// A module in which `tool_names` (the tools' wire names) are reserved as well.
    pub(crate) fn new<'a>(tool_names: impl IntoIterator<Item = &'a str>) -> PyModule {
        let mut taken: BTreeSet<String> = PY_MODULE_NAMES.iter().map(|s| (*s).to_owned()).collect();
        taken.extend(tool_names.into_iter().map(str::to_owned));
        PyModule {
            defs: Vec::new(),
            taken,
            next: HashMap::new(),
        }
    }

    /// Claims a unique type name starting from `base` (`Base`, `Base2`, `Base3`, ...), with
    /// `base` cut to [`NAME_CHARS`].
    fn claim(&mut self, base: &str) -> String {
        let mut base = if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            format!("T{base}")
        } else {
            base.to_owned()
        };
        if base.len() > NAME_CHARS {
            let mut end = NAME_CHARS;
            while !base.is_char_boundary(end) {
                end -= 1;
            }
            base.truncate(end);
        }
        let mut candidate = base.clone();
        if self.taken.contains(&candidate) || is_py_keyword(&candidate) {
            let mut n = self.next.get(&base).copied().unwrap_or(2);
            loop {
                #[cfg(test)]
                crate::distinct::work::step();
                candidate = format!("{base}{n}");
                n += 1;
                if !self.taken.contains(&candidate) {
                    break;
                }
            }
            self.next.insert(base, n);
        }
        self.taken.insert(candidate.clone());
        candidate
    }

    /// The base type name for a tool's arguments (`Args`) or output (`Output`).
    pub(crate) fn root_base(tool_name: &str, suffix: &str) -> String {
        let pascal = name_part(tool_name);
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

/// Writes a literal `Literal` admits; false (nothing written) for a float, which it does not.
fn write_literal(value: &Lit<'_>, out: &mut String) -> bool {
    match value {
        Lit::String(s) => out.push_str(&py_string(s)),
        Lit::Null => out.push_str("None"),
        Lit::Bool(true) => out.push_str("True"),
        Lit::Bool(false) => out.push_str("False"),
        Lit::Number(n) if n.is_i64() || n.is_u64() => {
            use std::fmt::Write as _;
            let _ = write!(out, "{n}");
        }
        Lit::Number(_) => return false,
    }
    true
}

/// The Python type of one raw JSON Schema. Never fails: see [`schema_rules`]. Without the SDK's
/// module to declare `TypedDict`s in, an object with properties is `dict[str, Any]`. The text
/// may refer to `Any` and `Literal` from `typing`.
///
/// [`schema_rules`]: crate::schema_rules
pub fn json_schema_to_py(schema: &Value) -> String {
    py_type(&lower_root(schema), &mut None, &|| "T".to_owned())
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
    let mut out = String::new();
    write_py(ty, module, hint, &mut out);
    out
}

/// [`py_type`], appended to `out`: every part is written in place, so nested arrays, maps and
/// unions cost their size, not their size times their depth.
fn write_py(
    ty: &Ty<'_>,
    module: &mut Option<&mut PyModule>,
    hint: &dyn Fn() -> String,
    out: &mut String,
) {
    match ty {
        Ty::Unknown | Ty::Json => out.push_str("Any"),
        Ty::Null => out.push_str("None"),
        Ty::Boolean => out.push_str("bool"),
        Ty::String => out.push_str("str"),
        Ty::Number => out.push_str("float"),
        Ty::Integer => out.push_str("int"),
        Ty::Literals(values) => {
            let start = out.len();
            let mut float = false;
            for value in values {
                let before = out.len();
                out.push_str(if before == start { "Literal[" } else { ", " });
                if !write_literal(value, out) {
                    out.truncate(before);
                    float = true;
                }
            }
            if out.len() > start {
                out.push(']');
            }
            if float {
                if out.len() > start {
                    out.push_str(" | ");
                }
                out.push_str("float");
            }
        }
        Ty::Array(element) => {
            out.push_str("list[");
            write_py(element, module, &|| format!("{}Item", hint()), out);
            out.push(']');
        }
        Ty::Union(members) => {
            // Members are written in place; one whose text repeats an earlier member's is
            // taken back out again.
            let start = out.len();
            let mut seen = TextPieces::default();
            let mut first = true;
            for (i, member) in members.iter().enumerate() {
                let before = out.len();
                if !first {
                    out.push_str(" | ");
                }
                let at = out.len();
                write_py(
                    member,
                    module,
                    &|| format!("{}Variant{}", hint(), i + 1),
                    out,
                );
                if &out[at..] == "Any" {
                    out.truncate(start);
                    out.push_str("Any");
                    return;
                }
                if seen.insert(out, at..out.len()) {
                    first = false;
                } else {
                    out.truncate(before);
                }
            }
        }
        Ty::Object(object) => py_object(object, module, hint, out),
    }
}

/// The base name of a field's `TypedDict` in the `TypedDict` `name`: the name and the key's
/// [`name_part`] (`Field` when it has none).
fn field_base(name: &str, key_part: &str) -> String {
    if key_part.is_empty() {
        format!("{name}Field")
    } else {
        format!("{name}{key_part}")
    }
}

fn py_object(
    object: &ObjectTy<'_>,
    module: &mut Option<&mut PyModule>,
    hint: &dyn Fn() -> String,
    out: &mut String,
) {
    let typed_dict = !object.has_no_keys() || object.extra == Extra::Closed;
    let claimed = if typed_dict {
        module.as_deref_mut().map(|m| m.claim(&hint()))
    } else {
        None
    };
    if let Some(name) = claimed {
        let mut fields = Vec::with_capacity(object.props.len());
        for prop in &object.props {
            // Once per key, not per name derived from it.
            let key_part = name_part(prop.key);
            let ty = py_type(&prop.ty, module, &|| field_base(&name, &key_part));
            fields.push(FieldDef {
                key: prop.key.to_owned(),
                ty,
                required: prop.required,
                doc: prop.doc.map(str::to_owned),
            });
        }
        if let Some(undeclared) = &object.undeclared {
            // One type for every key, written once (named after the first key), then repeated
            // when short, else named by an alias.
            let key_part = name_part(undeclared.keys.first().copied().unwrap_or_default());
            let base = || field_base(&name, &key_part);
            let mut ty = py_type(&undeclared.ty, module, &base);
            if undeclared.keys.len() > 1
                && ty.len() > SHARED_TYPE_BYTES
                && let Some(m) = module.as_deref_mut()
            {
                let alias = m.claim(&base());
                m.defs.push(TypedDictDef {
                    name: alias.clone(),
                    doc: None,
                    fields: Vec::new(),
                    alias: Some(std::mem::replace(&mut ty, alias)),
                    open: false,
                });
            }
            for key in &undeclared.keys {
                fields.push(FieldDef {
                    key: (*key).to_owned(),
                    ty: ty.clone(),
                    required: true,
                    doc: None,
                });
            }
        }
        let open = object.extra != Extra::Closed;
        if let Some(m) = module.as_deref_mut() {
            m.defs.push(TypedDictDef {
                name: name.clone(),
                doc: object.doc.map(str::to_owned),
                fields,
                alias: None,
                open,
            });
        }
        out.push_str(&name);
        if open {
            out.push_str(OPEN_ALTERNATIVE);
        }
        return;
    }
    match (&object.extra, object.has_no_keys()) {
        (Extra::Map(value), true) => {
            out.push_str("dict[str, ");
            write_py(value, module, &|| format!("{}Value", hint()), out);
            out.push(']');
        }
        _ => out.push_str("dict[str, Any]"),
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
        // Object keywords without `type`: the object, or any other value.
        assert_eq!(
            py(json!({"properties": {"a": {"type": "string"}}})),
            "dict[str, Any] | list[Any] | None | bool | float | str"
        );
    }

    #[test]
    fn names_are_unique_and_children_come_first() {
        let mut module = PyModule::new(["FooArgs"]);
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "string"}}}}});
        let ty = lower(&schema);
        let name = py_type(&ty, &mut Some(&mut module), &|| "FooArgs".to_owned());
        // Open objects (no `additionalProperties: false`): each is used with the `dict`
        // alternative that admits their further keys.
        assert_eq!(name, "FooArgs2 | dict[str, Any]");
        let names: Vec<&str> = module.defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["FooArgs2A", "FooArgs2"]);
        assert_eq!(module.defs[1].fields[0].ty, "FooArgs2A | dict[str, Any]");
        assert!(module.defs.iter().all(|d| d.open));
        assert!(!module.is_class_field("FooArgs2A"));
        assert!(!module.is_class_field("__proto__"));
        assert!(module.is_class_field("_from"));
        assert!(!module.is_method_name("_private"));
        assert!(!module.is_method_name("overload"));
    }

    /// A closed object is its `TypedDict` alone; an open one (`additionalProperties` absent,
    /// `true`, `{}`, a schema beside properties, or `patternProperties`) is used with `dict`.
    #[test]
    fn open_objects_admit_further_keys_and_closed_ones_do_not() {
        let closed = json!({"type": "object", "properties": {"a": {"type": "string"}},
                            "additionalProperties": false});
        let mut module = PyModule::new([]);
        assert_eq!(
            py_type(&lower(&closed), &mut Some(&mut module), &|| "C".to_owned()),
            "C"
        );
        assert!(!module.defs[0].open);
        for extra in [
            json!({}),
            json!({"additionalProperties": true}),
            json!({"additionalProperties": {}}),
            json!({"additionalProperties": {"type": "integer"}}),
            json!({"patternProperties": {"^x": {"type": "string"}}}),
        ] {
            let mut schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
            if let (Some(schema), Some(extra)) = (schema.as_object_mut(), extra.as_object()) {
                schema.extend(extra.clone());
            }
            let mut module = PyModule::new([]);
            assert_eq!(
                py_type(&lower(&schema), &mut Some(&mut module), &|| "O".to_owned()),
                "O | dict[str, Any]",
                "{schema}"
            );
            assert!(module.defs[0].open, "{schema}");
        }
    }

    /// The size of the definitions of `module`, about as the SDK prints them.
    fn defs_bytes(module: &PyModule) -> usize {
        module
            .defs
            .iter()
            .map(|d| {
                d.name.len()
                    + d.alias.as_ref().map_or(0, String::len)
                    + d.fields
                        .iter()
                        .map(|f| f.key.len() + f.ty.len() + 4)
                        .sum::<usize>()
            })
            .sum()
    }

    #[test]
    fn undeclared_keys_share_their_type_and_a_long_one_is_aliased() {
        let mut module = PyModule::new([]);
        let long: Vec<String> = (0..10).map(|i| format!("value{i}")).collect();
        let schema = json!({"type": "object", "properties": {
            "o": {"type": "object", "required": ["a", "b"],
                  "additionalProperties": {"type": "object", "properties": {"y": {"type": "string"}}}},
            "e": {"type": "object", "required": ["a", "b"], "additionalProperties": {"enum": long}},
            "i": {"type": "object", "required": ["a", "b"], "additionalProperties": {"type": "integer"}}},
            "additionalProperties": false});
        let ty = lower(&schema);
        assert_eq!(
            py_type(&ty, &mut Some(&mut module), &|| "T".to_owned()),
            "T"
        );
        type Def = (String, Option<String>, Vec<(String, String)>);
        let defs: Vec<Def> = module
            .defs
            .iter()
            .map(|d| {
                let fields = d.fields.iter().map(|f| (f.key.clone(), f.ty.clone()));
                (d.name.clone(), d.alias.clone(), fields.collect())
            })
            .collect();
        let field = |k: &str, t: &str| (k.to_owned(), t.to_owned());
        let literal = long
            .iter()
            .map(|v| format!("\"{v}\""))
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(
            defs,
            [
                ("TOA".to_owned(), None, vec![field("y", "str")]),
                (
                    "TO".to_owned(),
                    None,
                    vec![
                        field("a", "TOA | dict[str, Any]"),
                        field("b", "TOA | dict[str, Any]")
                    ]
                ),
                (
                    "TEA".to_owned(),
                    Some(format!("Literal[{literal}]")),
                    vec![]
                ),
                (
                    "TE".to_owned(),
                    None,
                    vec![field("a", "TEA"), field("b", "TEA")]
                ),
                (
                    "TI".to_owned(),
                    None,
                    vec![field("a", "int"), field("b", "int")]
                ),
                (
                    "T".to_owned(),
                    None,
                    // Each is open (its `additionalProperties` admits further keys).
                    vec![
                        field("o", "TO | dict[str, Any]"),
                        field("e", "TE | dict[str, Any]"),
                        field("i", "TI | dict[str, Any]")
                    ]
                ),
            ]
        );
    }

    /// 40 levels of objects with two undeclared keys over the level below: the definitions
    /// grow with the levels (a `TypedDict` per key doubled them at each level).
    #[test]
    fn nested_undeclared_keys_grow_linearly() {
        let mut schema = json!({"type": "object", "properties": {"x": {"type": "string"}}});
        for _ in 0..40 {
            schema =
                json!({"type": "object", "additionalProperties": schema, "required": ["a", "b"]});
        }
        let mut module = PyModule::new([]);
        py_type(&lower(&schema), &mut Some(&mut module), &|| "T".to_owned());
        assert_eq!(module.defs.len(), 41);
        assert!(
            defs_bytes(&module) < 41 * 150,
            "{} bytes",
            defs_bytes(&module)
        );
    }

    /// Many objects whose names come out alike take one step each to name (`TA`, `TA2`, ...
    /// `TA20000`), not one per name taken before.
    #[test]
    fn alike_names_are_claimed_in_linear_work() {
        use crate::distinct::work;
        let n = 20_000;
        let properties: serde_json::Map<String, serde_json::Value> = (0..n)
            .map(|i| {
                // `a`, `a!`, `a!!`... all read `A`; the key's length does not matter here.
                let key = format!("a{}", "!".repeat(i % 50)) + &"#".repeat(i / 50);
                (
                    key,
                    json!({"type": "object", "properties": {"x": {"type": "string"}}}),
                )
            })
            .collect();
        let schema = json!({"type": "object", "properties": properties});
        let ty = lower(&schema);
        let mut module = PyModule::new([]);
        work::take();
        py_type(&ty, &mut Some(&mut module), &|| "T".to_owned());
        let steps = work::take();
        assert!(steps < 3 * n as u64, "{steps} names tried");
        let names: Vec<&str> = module.defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names[..3], ["TA", "TA2", "TA3"]);
        assert_eq!(names[n - 1], "TA20000");
    }

    /// A long tool name, long keys and long paths make names of bounded length: the name of
    /// every `TypedDict` under them repeated the whole tool name and every key on its path.
    #[test]
    fn names_are_cut() {
        let n = 1000;
        let children: serde_json::Map<String, serde_json::Value> = (0..n)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({"type": "object", "properties": {"x": {"type": "string"}}}),
                )
            })
            .collect();
        let mut schema = json!({"type": "object", "properties": children});
        for level in 0..40 {
            schema = json!({"type": "object", "properties": {format!("{level}{}", "k".repeat(20)): schema}});
        }
        let key = "K".repeat(100_000);
        let schema =
            json!({"oneOf": [{"type": "object", "properties": {key: schema}}, {"type": "null"}]});
        let ty = lower(&schema);
        let tool = "t".repeat(100_000);
        let base = PyModule::root_base(&tool, "Args");
        assert_eq!(base, format!("T{}Args", "t".repeat(NAME_PART_CHARS - 1)));
        let mut module = PyModule::new([tool.as_str()]);
        let text = py_type(&ty, &mut Some(&mut module), &|| base.clone());
        assert!(text.len() <= NAME_CHARS + 20, "{text}");
        assert_eq!(module.defs.len(), n + 42);
        let longest = module.defs.iter().map(|d| d.name.len()).max();
        assert!(longest.is_some_and(|l| l <= NAME_CHARS + 4), "{longest:?}");
        // Cut names stay distinct.
        let names: std::collections::HashSet<&str> =
            module.defs.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names.len(), module.defs.len());
        let bytes = defs_bytes(&module);
        assert!(
            bytes < 3 * module.defs.len() * (NAME_CHARS + 8),
            "{bytes} bytes"
        );
    }

    /// A union's members are told apart from earlier ones in about one comparison each.
    #[test]
    fn long_unions_are_written_in_linear_work() {
        use crate::distinct::work;
        let n = 10_000;
        let alternatives: Vec<serde_json::Value> = (0..n)
            .map(|i| json!({"type": "array", "items": {"const": i}}))
            .chain([
                json!({"type": "integer"}),
                json!({"const": 1.5}),
                json!({"type": "number"}),
            ])
            .collect();
        let schema = json!({"oneOf": alternatives});
        let ty = lower(&schema);
        work::take();
        let text = py_type(&ty, &mut None, &|| "T".to_owned());
        let steps = work::take();
        assert!(steps < 2 * n as u64, "{steps} comparisons");
        assert!(
            text.starts_with("list[Literal[0]] | list[Literal[1]] | "),
            "{text:.100}"
        );
        // `{"const": 1.5}` and `number` both read `float`, which is written once.
        assert!(
            text.ends_with("| list[Literal[9999]] | int | float"),
            "{text:.100}"
        );
    }
}
