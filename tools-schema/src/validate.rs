//! Path-qualified validation of JSON values against a schema in the subset.
//!
//! A [`Validator`] is compiled once from a schema (when a tool is registered) into a flat table
//! of nodes, and then reused for every call; it is `Clone + Send + Sync` and cheap to clone.
//!
//! [`Validator::validate`] returns **every** violation, each with the RFC 6901 JSON pointer of
//! the offending value and a message a model can act on:
//!
//! ```text
//! /offset: expected integer, got string "ten"
//! missing required property "path"
//! /mode: "fast" is not one of "exact", "regex"
//! unexpected property "colour" (allowed: "color", "size")
//! /shape: matched 2 oneOf alternatives, expected exactly 1 (alternatives 0 and 1 both match)
//! ```
//!
//! Rules: an object without `properties` and an array without `items` get only the container
//! check; `default` is never applied; an object's missing required properties and unexpected
//! properties are reported at the object's pointer; `integer` accepts any number without a
//! fractional part (`3.0` included), as JSON Schema does; string lengths count Unicode scalar
//! values; `enum`/`const` compare numbers by value (`1` equals `1.0`).
//!
//! # How it runs
//!
//! Validation walks the value with an explicit work stack (no recursion), so values and schemas
//! of any depth are safe. The common case, a valid value, takes a fast path that stops at the
//! first problem and builds no messages or pointers; only when it fails does a second walk
//! collect every violation with its pointer. Inside a `oneOf`, each alternative is tried with
//! the same short-circuiting walk, on the same work stack.
//!
//! `pattern` uses the `regex` crate (linear-time matching; see [`crate::subset`]).
//!
//! ```
//! use serde_json::json;
//! use tools_schema::Validator;
//!
//! let validator = Validator::new(&json!({
//!     "type": "object",
//!     "properties": {
//!         "path": {"type": "string"},
//!         "offset": {"type": "integer", "minimum": 0},
//!     },
//!     "required": ["path"],
//!     "additionalProperties": false,
//! }))
//! .unwrap();
//!
//! assert!(validator.is_valid(&json!({"path": "/etc/hosts", "offset": 3})));
//! let violations = validator.validate(&json!({"offset": "ten"})).unwrap_err();
//! assert_eq!(
//!     violations.to_string(),
//!     "missing required property \"path\"\n/offset: expected integer, got string \"ten\""
//! );
//! ```

use std::fmt;
use std::sync::Arc;

use regex::Regex;
use serde_json::{Number, Value};

use crate::deep;
use crate::excerpt;
use crate::number::{self, Num};
use crate::projection::escape_token;
use crate::schema::{AdditionalProperties, Schema, SchemaKind};
use crate::subset::SubsetErrors;

/// One problem with a value: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// RFC 6901 JSON pointer of the offending value (`""` for the root). For a missing required
    /// property or an unexpected one, the pointer of the object that holds it.
    pub pointer: String,
    /// What is wrong, in words a model can act on (`expected integer, got string "ten"`).
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            // A pointer is made of the value's own keys: cut like any other quoted text.
            write!(f, "{}: {}", excerpt::cut(&self.pointer), self.message)
        }
    }
}

/// Every violation of a value: never empty. `Display` writes one violation per line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Violations {
    violations: Vec<Violation>,
}

impl Violations {
    /// The stable error code: `INVALID_VALUE`.
    pub fn code(&self) -> &'static str {
        "INVALID_VALUE"
    }

    /// The violations, in document order.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    /// Iterates over the violations.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.violations.iter()
    }

    /// How many violations there are (at least one).
    pub fn len(&self) -> usize {
        self.violations.len()
    }

    /// Always `false`: a `Violations` holds at least one violation.
    pub fn is_empty(&self) -> bool {
        self.violations.is_empty()
    }

    /// Consumes the list.
    pub fn into_vec(self) -> Vec<Violation> {
        self.violations
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.violations.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{violation}")?;
        }
        Ok(())
    }
}

impl<'a> IntoIterator for &'a Violations {
    type Item = &'a Violation;
    type IntoIter = std::slice::Iter<'a, Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.violations.iter()
    }
}

impl IntoIterator for Violations {
    type Item = Violation;
    type IntoIter = std::vec::IntoIter<Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.violations.into_iter()
    }
}

// ---------------------------------------------------------------------------------------------
// Compiled form

type NodeId = u32;

#[derive(Debug)]
enum Node {
    Any,
    Null,
    Boolean {
        enum_values: Option<Box<[bool]>>,
        const_value: Option<bool>,
    },
    String(Box<StringNode>),
    Number(Box<NumberNode>),
    Array {
        items: Option<NodeId>,
        min_items: Option<u64>,
        max_items: Option<u64>,
        unique_items: bool,
    },
    Object(Box<ObjectNode>),
    OneOf(Box<[NodeId]>),
}

#[derive(Debug)]
struct StringNode {
    enum_values: Option<Box<[String]>>,
    const_value: Option<String>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<(String, Regex)>,
}

#[derive(Debug)]
struct NumberNode {
    integer: bool,
    enum_values: Option<Box<[Number]>>,
    const_value: Option<Number>,
    /// Bounds as written (for messages) and pre-converted (for comparisons).
    minimum: Option<(Number, Num)>,
    maximum: Option<(Number, Num)>,
    exclusive_minimum: Option<(Number, Num)>,
    exclusive_maximum: Option<(Number, Num)>,
    multiple_of: Option<Number>,
}

fn bound(n: &Option<Number>) -> Option<(Number, Num)> {
    n.as_ref().map(|n| (n.clone(), number::num(n)))
}

#[derive(Debug)]
struct Prop {
    name: Box<str>,
    node: NodeId,
    required: bool,
}

#[derive(Debug)]
enum Additional {
    Allow,
    Deny,
    Node(NodeId),
}

#[derive(Debug)]
struct ObjectNode {
    /// In declaration order.
    props: Box<[Prop]>,
    /// Indices into `props`, sorted by [`by_length_then_bytes`], for lookup in large objects.
    by_name: Box<[u32]>,
    /// Indices into `props` of the required properties, in `required` order.
    required: Box<[u32]>,
    additional: Additional,
}

/// String equality tuned for the short strings of property names and enum members: compares
/// with a few word loads instead of a call to `memcmp`.
#[inline(always)]
fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    #[inline(always)]
    fn word8(s: &[u8], at: usize) -> u64 {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(&s[at..at + 8]);
        u64::from_ne_bytes(buf)
    }
    #[inline(always)]
    fn word4(s: &[u8], at: usize) -> u32 {
        let mut buf = [0u8; 4];
        buf.copy_from_slice(&s[at..at + 4]);
        u32::from_ne_bytes(buf)
    }
    match n {
        0 => true,
        1..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        8..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

/// The order of [`ObjectNode::by_name`]: most comparisons are decided by the length alone.
fn by_length_then_bytes(a: &str, b: &str) -> std::cmp::Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// Objects with at most this many properties are searched linearly.
const LINEAR_LOOKUP: usize = 24;

impl ObjectNode {
    fn find(&self, key: &str, hint: usize) -> Option<usize> {
        if let Some(p) = self.props.get(hint)
            && str_eq(&p.name, key)
        {
            return Some(hint);
        }
        self.find_slow(key)
    }

    #[inline(never)]
    fn find_slow(&self, key: &str) -> Option<usize> {
        if self.props.len() <= LINEAR_LOOKUP {
            self.props.iter().position(|p| str_eq(&p.name, key))
        } else {
            self.by_name
                .binary_search_by(|&i| by_length_then_bytes(&self.props[i as usize].name, key))
                .ok()
                .map(|pos| self.by_name[pos] as usize)
        }
    }

    fn allowed_list(&self) -> String {
        let list = self
            .props
            .iter()
            .map(|p| quote(&p.name))
            .collect::<Vec<_>>()
            .join(", ");
        excerpt::cut(&list).into_owned()
    }
}

struct Inner {
    nodes: Vec<Node>,
    schema_json: Value,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The schema may be arbitrarily deep: dismantle it without recursion.
        deep::drop_value(std::mem::take(&mut self.schema_json));
    }
}

/// A schema compiled for validation. Build it once, validate many values.
///
/// Cloning is cheap (a reference count); the validator is `Send + Sync`.
#[derive(Clone)]
pub struct Validator {
    inner: Arc<Inner>,
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Validator")
            .field("nodes", &self.inner.nodes.len())
            .finish_non_exhaustive()
    }
}

impl Validator {
    /// Compiles a raw JSON Schema, which must be inside the subset (see [`crate::subset`]).
    pub fn new(schema: &Value) -> Result<Validator, SubsetErrors> {
        let parsed = Schema::from_json(schema)?;
        let result = Self::compile(&parsed);
        deep::drop_schema(parsed);
        result
    }

    /// Compiles a typed schema. It is checked against the subset too (a pattern must compile,
    /// every required property must be declared, ...).
    pub fn from_schema(schema: &Schema) -> Result<Validator, SubsetErrors> {
        let json = schema.to_json();
        let checked = Schema::from_json(&json);
        deep::drop_value(json);
        let checked = checked?;
        let result = Self::compile(&checked);
        deep::drop_schema(checked);
        result
    }

    /// The schema this validator checks, in its canonical projection ([`Schema::to_json`]).
    pub fn schema_json(&self) -> &Value {
        &self.inner.schema_json
    }

    /// Whether `value` satisfies the schema. Stops at the first problem.
    pub fn is_valid(&self, value: &Value) -> bool {
        Walk::new(&self.inner.nodes, Fast).run(value)
    }

    /// Checks `value`, returning every violation when it does not satisfy the schema.
    pub fn validate(&self, value: &Value) -> Result<(), Violations> {
        if self.is_valid(value) {
            return Ok(());
        }
        let mut walk = Walk::new(&self.inner.nodes, Rich::default());
        walk.run(value);
        let mut violations = walk.mode.violations;
        if violations.is_empty() {
            // The two walks apply the same rules; this is a guard, not an expected path.
            violations.push(Violation {
                pointer: String::new(),
                message: "the value does not match the schema".to_string(),
            });
        }
        Err(Violations { violations })
    }

    fn compile(schema: &Schema) -> Result<Validator, SubsetErrors> {
        let mut nodes: Vec<Node> = vec![Node::Any];
        let mut work: Vec<(&Schema, NodeId)> = vec![(schema, 0)];
        let mut errors = Vec::new();
        while let Some((schema, id)) = work.pop() {
            let child = |_: &Schema, nodes: &mut Vec<Node>| -> NodeId {
                let id = nodes.len() as NodeId;
                nodes.push(Node::Any);
                id
            };
            let node = match &schema.kind {
                SchemaKind::Any => Node::Any,
                SchemaKind::Null => Node::Null,
                SchemaKind::Boolean(b) => Node::Boolean {
                    enum_values: b.enum_values.clone().map(Vec::into_boxed_slice),
                    const_value: b.const_value,
                },
                SchemaKind::String(s) => {
                    let pattern = match &s.pattern {
                        Some(p) => match crate::pattern::compile(p) {
                            Ok(re) => Some((p.clone(), re)),
                            Err(message) => {
                                errors.push(crate::subset::SubsetError {
                                    pointer: String::new(),
                                    keyword: "pattern".into(),
                                    message,
                                });
                                None
                            }
                        },
                        None => None,
                    };
                    Node::String(Box::new(StringNode {
                        enum_values: s.enum_values.clone().map(Vec::into_boxed_slice),
                        const_value: s.const_value.clone(),
                        min_length: s.min_length,
                        max_length: s.max_length,
                        pattern,
                    }))
                }
                SchemaKind::Number(n) | SchemaKind::Integer(n) => {
                    Node::Number(Box::new(NumberNode {
                        integer: matches!(schema.kind, SchemaKind::Integer(_)),
                        enum_values: n.enum_values.clone().map(Vec::into_boxed_slice),
                        const_value: n.const_value.clone(),
                        minimum: bound(&n.minimum),
                        maximum: bound(&n.maximum),
                        exclusive_minimum: bound(&n.exclusive_minimum),
                        exclusive_maximum: bound(&n.exclusive_maximum),
                        multiple_of: n.multiple_of.clone(),
                    }))
                }
                SchemaKind::Array(a) => {
                    let items = a.items.as_deref().map(|s| {
                        let id = child(s, &mut nodes);
                        work.push((s, id));
                        id
                    });
                    Node::Array {
                        items,
                        min_items: a.min_items,
                        max_items: a.max_items,
                        unique_items: a.unique_items,
                    }
                }
                SchemaKind::Object(o) => {
                    let props: Vec<Prop> = o
                        .properties
                        .iter()
                        .map(|(name, s)| {
                            let node = child(s, &mut nodes);
                            work.push((s, node));
                            Prop {
                                name: name.as_str().into(),
                                node,
                                required: o.required.contains(name),
                            }
                        })
                        .collect();
                    let required = o
                        .required
                        .iter()
                        .filter_map(|r| props.iter().position(|p| &*p.name == r))
                        .map(|i| i as u32)
                        .collect();
                    let mut by_name: Vec<u32> = (0..props.len() as u32).collect();
                    by_name.sort_by(|&a, &b| {
                        by_length_then_bytes(&props[a as usize].name, &props[b as usize].name)
                    });
                    let additional = match &o.additional_properties {
                        AdditionalProperties::Allow => Additional::Allow,
                        AdditionalProperties::Deny => Additional::Deny,
                        AdditionalProperties::Schema(s) => {
                            let id = child(s, &mut nodes);
                            work.push((s, id));
                            Additional::Node(id)
                        }
                    };
                    Node::Object(Box::new(ObjectNode {
                        props: props.into_boxed_slice(),
                        by_name: by_name.into_boxed_slice(),
                        required,
                        additional,
                    }))
                }
                SchemaKind::OneOf(alternatives) => {
                    let ids: Vec<NodeId> = alternatives
                        .iter()
                        .map(|s| {
                            let id = child(s, &mut nodes);
                            work.push((s, id));
                            id
                        })
                        .collect();
                    Node::OneOf(ids.into_boxed_slice())
                }
            };
            if let Some(slot) = nodes.get_mut(id as usize) {
                *slot = node;
            }
        }
        if let Some(errors) = SubsetErrors::new(errors) {
            return Err(errors);
        }
        Ok(Validator {
            inner: Arc::new(Inner {
                nodes,
                schema_json: schema.to_json(),
            }),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The walk

/// How a walk records where it is and what went wrong.
trait Mode<'v> {
    /// A handle on the current JSON pointer (nothing in the fast mode).
    type Path: Copy;
    /// Whether violations are collected (and the walk goes on after one).
    const RICH: bool;
    fn root(&mut self) -> Self::Path;
    fn key(&mut self, parent: Self::Path, key: &'v str) -> Self::Path;
    fn index(&mut self, parent: Self::Path, index: usize) -> Self::Path;
    fn pointer(&self, path: Self::Path) -> String;
    fn report(&mut self, path: Self::Path, message: String);
}

/// Stops at the first violation; tracks no paths.
struct Fast;

impl<'v> Mode<'v> for Fast {
    type Path = ();
    const RICH: bool = false;
    #[inline(always)]
    fn root(&mut self) {}
    #[inline(always)]
    fn key(&mut self, _: (), _: &'v str) {}
    #[inline(always)]
    fn index(&mut self, _: (), _: usize) {}
    fn pointer(&self, _: ()) -> String {
        String::new()
    }
    fn report(&mut self, _: (), _: String) {}
}

#[derive(Clone, Copy)]
enum Segment<'v> {
    Key(&'v str),
    Index(usize),
}

/// Collects every violation with its pointer. Paths live in an arena of (parent, segment).
#[derive(Default)]
struct Rich<'v> {
    segments: Vec<(u32, Segment<'v>)>,
    violations: Vec<Violation>,
}

const ROOT_PATH: u32 = u32::MAX;

impl<'v> Mode<'v> for Rich<'v> {
    type Path = u32;
    const RICH: bool = true;
    fn root(&mut self) -> u32 {
        ROOT_PATH
    }
    fn key(&mut self, parent: u32, key: &'v str) -> u32 {
        self.segments.push((parent, Segment::Key(key)));
        (self.segments.len() - 1) as u32
    }
    fn index(&mut self, parent: u32, index: usize) -> u32 {
        self.segments.push((parent, Segment::Index(index)));
        (self.segments.len() - 1) as u32
    }
    fn pointer(&self, path: u32) -> String {
        let mut parts = Vec::new();
        let mut at = path;
        while let Some((parent, segment)) = self.segments.get(at as usize) {
            parts.push(*segment);
            at = *parent;
        }
        let mut out = String::new();
        for part in parts.iter().rev() {
            out.push('/');
            match part {
                Segment::Key(k) => out.push_str(&escape_token(k)),
                Segment::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }
    fn report(&mut self, path: u32, message: String) {
        let pointer = self.pointer(path);
        self.violations.push(Violation { pointer, message });
    }
}

enum Frame<'v, P> {
    Check(NodeId, &'v Value, P),
    /// The alternative of the innermost `oneOf` being tried has passed every check.
    AltDone,
}

/// A `oneOf` whose alternatives are being tried.
struct Scope<'v, P> {
    node: NodeId,
    value: &'v Value,
    path: P,
    /// The next alternative to try.
    next: usize,
    /// Stack length when the current alternative started (its `AltDone` marker sits there).
    base: usize,
    matched: Vec<usize>,
    /// Rich mode: the first violation of each failed alternative, for the "none matched" text.
    reasons: Vec<(usize, String)>,
}

/// The current node failed and must not be checked further.
struct Abort;

/// How many container levels the fast walk checks in place (bounded recursion) before it
/// defers to the work stack.
const INLINE_DEPTH: u32 = 4;

struct Walk<'c, 'v, M: Mode<'v>> {
    nodes: &'c [Node],
    /// Current nesting of in-place container checks (fast mode), at most [`INLINE_DEPTH`].
    inline_depth: u32,
    stack: Vec<Frame<'v, M::Path>>,
    scopes: Vec<Scope<'v, M::Path>>,
    mode: M,
}

impl<'c, 'v, M: Mode<'v>> Walk<'c, 'v, M> {
    fn new(nodes: &'c [Node], mode: M) -> Self {
        Walk {
            nodes,
            inline_depth: 0,
            stack: Vec::new(),
            scopes: Vec::new(),
            mode,
        }
    }

    /// Walks `value` from the root node; `false` when a violation was found (in the fast mode,
    /// at the first one).
    fn run(&mut self, value: &'v Value) -> bool {
        let root = self.mode.root();
        let mut ok = true;
        if self.check(0, value, root).is_err() && !self.after_abort() {
            return false;
        }
        while let Some(frame) = self.stack.pop() {
            let flow = match frame {
                Frame::Check(node, value, path) => match self.check(node, value, path) {
                    Ok(()) => true,
                    Err(Abort) => self.after_abort(),
                },
                Frame::AltDone => match self.settle(true) {
                    Ok(()) => true,
                    Err(Abort) => self.after_abort(),
                },
            };
            if !flow {
                ok = false;
                if !M::RICH {
                    return false;
                }
            }
        }
        ok
    }

    /// After a check aborted: inside a `oneOf`, the current alternative failed (which may make
    /// the `oneOf` itself fail, and so on outwards); outside one, the fast walk is over. Returns
    /// whether the walk may go on. A loop, not recursion: nesting depth costs no stack.
    fn after_abort(&mut self) -> bool {
        loop {
            let Some(scope) = self.scopes.last() else {
                return M::RICH;
            };
            let base = scope.base;
            self.stack.truncate(base);
            if self.settle(false).is_ok() {
                return true;
            }
        }
    }

    /// Records the outcome of the current alternative of the innermost `oneOf`, then starts the
    /// next one or settles the `oneOf`. `Err` when the `oneOf` failed and the failure aborts the
    /// enclosing node.
    fn settle(&mut self, passed: bool) -> Result<(), Abort> {
        let outermost = self.scopes.len() == 1;
        let Some(scope) = self.scopes.last_mut() else {
            return Ok(());
        };
        if passed {
            scope.matched.push(scope.next - 1);
        }
        let alternatives: &[NodeId] = match self.nodes.get(scope.node as usize) {
            Some(Node::OneOf(alternatives)) => alternatives,
            _ => &[],
        };
        let settled = scope.matched.len() >= 2 && !(M::RICH && outermost);
        if !settled && let Some(&alt) = alternatives.get(scope.next) {
            scope.next += 1;
            scope.base = self.stack.len();
            let (value, path) = (scope.value, scope.path);
            self.stack.push(Frame::AltDone);
            self.stack.push(Frame::Check(alt, value, path));
            return Ok(());
        }
        let Some(scope) = self.scopes.pop() else {
            return Ok(());
        };
        if scope.matched.len() == 1 {
            return Ok(());
        }
        let count = alternatives.len();
        self.fail(scope.path, || one_of_message(&scope, count))
    }

    /// Reports a violation. Inside a `oneOf` alternative or in the fast mode this aborts the
    /// current node; in the rich mode outside any `oneOf` the walk records it and goes on.
    #[inline]
    fn fail(&mut self, path: M::Path, message: impl FnOnce() -> String) -> Result<(), Abort> {
        let depth = self.scopes.len();
        if let Some(scope) = self.scopes.last() {
            if M::RICH && depth == 1 {
                let alternative = scope.next - 1;
                if !scope.reasons.iter().any(|(a, _)| *a == alternative) {
                    let pointer = self.mode.pointer(path);
                    let text = message();
                    // Where the failure is at the oneOf's own value, its pointer adds nothing.
                    let text = if pointer.is_empty() || pointer == self.mode.pointer(scope.path) {
                        text
                    } else {
                        format!("{pointer}: {text}")
                    };
                    if let Some(scope) = self.scopes.last_mut() {
                        scope.reasons.push((alternative, text));
                    }
                }
            }
            return Err(Abort);
        }
        if M::RICH {
            self.mode.report(path, message());
            Ok(())
        } else {
            Err(Abort)
        }
    }

    /// Checks a child value: scalars at once, containers later from the stack.
    #[inline]
    fn child(&mut self, node: NodeId, value: &'v Value, path: M::Path) -> Result<(), Abort> {
        if !M::RICH {
            match self.nodes.get(node as usize) {
                // A oneOf always goes through the stack: its alternatives are delimited there.
                Some(Node::OneOf(_)) => {}
                // Containers are checked in place up to a small, fixed nesting (no work-stack
                // allocation for the usual shallow arguments), then through the stack.
                Some(Node::Array { .. } | Node::Object(_)) => {
                    if self.inline_depth < INLINE_DEPTH {
                        self.inline_depth += 1;
                        let result = self.check(node, value, path);
                        self.inline_depth -= 1;
                        return result;
                    }
                }
                _ => return self.check(node, value, path),
            }
        }
        self.stack.push(Frame::Check(node, value, path));
        Ok(())
    }

    fn check(&mut self, node: NodeId, value: &'v Value, path: M::Path) -> Result<(), Abort> {
        let nodes = self.nodes;
        let Some(node_ref) = nodes.get(node as usize) else {
            return Ok(());
        };
        match node_ref {
            Node::Any => Ok(()),
            Node::Null => match value {
                Value::Null => Ok(()),
                other => self.fail(path, || type_message("null", other)),
            },
            Node::Boolean {
                enum_values,
                const_value,
            } => {
                let Value::Bool(b) = value else {
                    return self.fail(path, || type_message("boolean", value));
                };
                if let Some(values) = enum_values
                    && !values.contains(b)
                {
                    self.fail(path, || {
                        let list: Vec<String> = values.iter().map(bool::to_string).collect();
                        format!("{b} is not one of {}", joined(&list))
                    })?;
                }
                if let Some(c) = const_value
                    && c != b
                {
                    self.fail(path, || format!("expected {c}, got {b}"))?;
                }
                Ok(())
            }
            Node::String(s) => {
                let Value::String(text) = value else {
                    return self.fail(path, || type_message("string", value));
                };
                self.check_string(s, text, path)
            }
            Node::Number(n) => {
                let Value::Number(x) = value else {
                    let name = if n.integer { "integer" } else { "number" };
                    return self.fail(path, || type_message(name, value));
                };
                if n.integer && !number::is_integer(x) {
                    return self.fail(path, || type_message("integer", value));
                }
                self.check_number(n, x, path)
            }
            Node::Array {
                items,
                min_items,
                max_items,
                unique_items,
            } => {
                let Value::Array(elements) = value else {
                    return self.fail(path, || type_message("array", value));
                };
                let len = elements.len() as u64;
                if let Some(min) = *min_items
                    && len < min
                {
                    self.fail(path, || {
                        format!("expected at least {min} {}, got {len}", plural(min, "item"))
                    })?;
                }
                if let Some(max) = *max_items
                    && len > max
                {
                    self.fail(path, || {
                        format!("expected at most {max} {}, got {len}", plural(max, "item"))
                    })?;
                }
                if *unique_items && let Some((a, b)) = first_duplicate(elements) {
                    self.fail(path, || {
                        format!("items {a} and {b} are equal; the items must be unique")
                    })?;
                }
                if let Some(items) = *items {
                    if M::RICH {
                        for (i, element) in elements.iter().enumerate().rev() {
                            let p = self.mode.index(path, i);
                            self.stack.push(Frame::Check(items, element, p));
                        }
                    } else {
                        for (i, element) in elements.iter().enumerate() {
                            let p = self.mode.index(path, i);
                            self.child(items, element, p)?;
                        }
                    }
                }
                Ok(())
            }
            Node::Object(o) => {
                let Value::Object(map) = value else {
                    return self.fail(path, || type_message("object", value));
                };
                if M::RICH {
                    self.check_object_rich(o, map, path)
                } else {
                    self.check_object_fast(o, map, path)
                }
            }
            Node::OneOf(alternatives) => {
                let Some(&first) = alternatives.first() else {
                    return Ok(());
                };
                let base = self.stack.len();
                self.scopes.push(Scope {
                    node,
                    value,
                    path,
                    next: 1,
                    base,
                    matched: Vec::new(),
                    reasons: Vec::new(),
                });
                self.stack.push(Frame::AltDone);
                self.stack.push(Frame::Check(first, value, path));
                Ok(())
            }
        }
    }

    #[inline]
    fn check_object_fast(
        &mut self,
        o: &'c ObjectNode,
        map: &'v serde_json::Map<String, Value>,
        path: M::Path,
    ) -> Result<(), Abort> {
        let mut found_required = 0usize;
        let mut hint = 0usize;
        for (key, v) in map {
            // Arguments usually come in declaration order: try the next property first.
            let found = match o.props.get(hint) {
                Some(p) if str_eq(&p.name, key) => Some(hint),
                _ => o.find_slow(key),
            };
            match found {
                Some(i) => {
                    hint = i + 1;
                    let prop = &o.props[i];
                    found_required += usize::from(prop.required);
                    let p = self.mode.key(path, key);
                    self.child(prop.node, v, p)?;
                }
                None => match o.additional {
                    Additional::Allow => {}
                    Additional::Deny => return self.fail(path, String::new),
                    Additional::Node(node) => {
                        let p = self.mode.key(path, key);
                        self.child(node, v, p)?;
                    }
                },
            }
        }
        if found_required < o.required.len() {
            return self.fail(path, String::new);
        }
        Ok(())
    }

    fn check_object_rich(
        &mut self,
        o: &'c ObjectNode,
        map: &'v serde_json::Map<String, Value>,
        path: M::Path,
    ) -> Result<(), Abort> {
        for &r in o.required.iter() {
            let name = &o.props[r as usize].name;
            if !map.contains_key(&**name) {
                self.fail(path, || {
                    format!("missing required property {}", quote(name))
                })?;
            }
        }
        if matches!(o.additional, Additional::Deny) {
            for key in map.keys() {
                if o.find(key, 0).is_none() {
                    self.fail(path, || {
                        if o.props.is_empty() {
                            format!(
                                "unexpected property {} (this object takes no properties)",
                                quote(key)
                            )
                        } else {
                            format!(
                                "unexpected property {} (allowed: {})",
                                quote(key),
                                o.allowed_list()
                            )
                        }
                    })?;
                }
            }
        }
        for (key, v) in map.iter().rev() {
            let node = match o.find(key, 0) {
                Some(i) => o.props[i].node,
                None => match o.additional {
                    Additional::Node(node) => node,
                    _ => continue,
                },
            };
            let p = self.mode.key(path, key);
            self.stack.push(Frame::Check(node, v, p));
        }
        Ok(())
    }

    #[inline]
    fn check_string(&mut self, s: &StringNode, text: &str, path: M::Path) -> Result<(), Abort> {
        if let Some(values) = &s.enum_values
            && !values.iter().any(|v| str_eq(v, text))
        {
            self.fail(path, || {
                let list: Vec<String> = values.iter().map(|v| quote(v)).collect();
                format!("{} is not one of {}", preview_str(text), joined(&list))
            })?;
        }
        if let Some(c) = &s.const_value
            && c != text
        {
            self.fail(path, || {
                format!("expected {}, got {}", quote(c), preview_str(text))
            })?;
        }
        // A character takes 1 to 4 bytes: most length checks are decided by the byte length.
        let bytes = text.len() as u64;
        let undecided = s.min_length.is_some_and(|min| bytes / 4 < min)
            || s.max_length.is_some_and(|max| bytes > max);
        if undecided {
            let len = text.chars().count() as u64;
            if let Some(min) = s.min_length
                && len < min
            {
                self.fail(path, || {
                    format!(
                        "expected at least {min} {}, got {len}",
                        plural(min, "character")
                    )
                })?;
            }
            if let Some(max) = s.max_length
                && len > max
            {
                self.fail(path, || {
                    format!(
                        "expected at most {max} {}, got {len}",
                        plural(max, "character")
                    )
                })?;
            }
        }
        if let Some((source, re)) = &s.pattern
            && !re.is_match(text)
        {
            self.fail(path, || {
                format!(
                    "{} does not match the pattern {}",
                    preview_str(text),
                    quote(source)
                )
            })?;
        }
        Ok(())
    }

    #[inline]
    fn check_number(&mut self, n: &NumberNode, x: &Number, path: M::Path) -> Result<(), Abort> {
        use std::cmp::Ordering::{Greater, Less};
        if let Some(values) = &n.enum_values
            && !values.iter().any(|v| number::numbers_equal(v, x))
        {
            self.fail(path, || {
                let list: Vec<String> = values.iter().map(Number::to_string).collect();
                format!("{x} is not one of {}", joined(&list))
            })?;
        }
        if let Some(c) = &n.const_value
            && !number::numbers_equal(c, x)
        {
            self.fail(path, || format!("expected {c}, got {x}"))?;
        }
        let xv = number::num(x);
        if let Some((min, mv)) = &n.minimum
            && number::compare_num(xv, *mv) == Some(Less)
        {
            self.fail(path, || format!("{x} is less than the minimum {min}"))?;
        }
        if let Some((max, mv)) = &n.maximum
            && number::compare_num(xv, *mv) == Some(Greater)
        {
            self.fail(path, || format!("{x} is greater than the maximum {max}"))?;
        }
        if let Some((min, mv)) = &n.exclusive_minimum
            && number::compare_num(xv, *mv) != Some(Greater)
        {
            self.fail(path, || {
                format!("{x} is not greater than the exclusive minimum {min}")
            })?;
        }
        if let Some((max, mv)) = &n.exclusive_maximum
            && number::compare_num(xv, *mv) != Some(Less)
        {
            self.fail(path, || {
                format!("{x} is not less than the exclusive maximum {max}")
            })?;
        }
        if let Some(m) = &n.multiple_of
            && !number::is_multiple_of(x, m)
        {
            self.fail(path, || format!("{x} is not a multiple of {m}"))?;
        }
        Ok(())
    }
}

fn one_of_message<P>(scope: &Scope<'_, P>, count: usize) -> String {
    if scope.matched.is_empty() {
        let mut text =
            format!("matched none of the {count} oneOf alternatives, expected exactly 1");
        let all_same =
            scope.reasons.len() == count && scope.reasons.windows(2).all(|w| w[0].1 == w[1].1);
        match scope.reasons.first() {
            Some((_, reason)) if all_same && count > 1 => {
                text.push_str(" (every alternative: ");
                text.push_str(reason);
                text.push(')');
            }
            Some(_) => {
                let reasons: Vec<String> = scope
                    .reasons
                    .iter()
                    .map(|(i, r)| format!("alternative {i}: {r}"))
                    .collect();
                text.push_str(" (");
                text.push_str(&reasons.join("; "));
                text.push(')');
            }
            None => {}
        }
        text
    } else {
        let list: Vec<String> = scope.matched.iter().map(usize::to_string).collect();
        let which = match list.as_slice() {
            [a, b] => format!("alternatives {a} and {b} both match"),
            _ => format!("alternatives {} match", joined(&list)),
        };
        format!(
            "matched {} oneOf alternatives, expected exactly 1 ({which})",
            scope.matched.len()
        )
    }
}

fn plural(n: u64, word: &str) -> String {
    match (n, word) {
        (1, _) => word.to_string(),
        (_, "property") => "properties".to_string(),
        _ => format!("{word}s"),
    }
}

/// A JSON string literal, cut to [`excerpt::LIMIT`] characters when long.
fn quote(text: &str) -> String {
    excerpt::quoted(text)
}

/// A list of quoted values, as a whole cut to [`excerpt::LIMIT`] characters.
fn joined(list: &[String]) -> String {
    excerpt::cut(&list.join(", ")).into_owned()
}

/// A string from the validated value, quoted: the same cut as [`quote`].
fn preview_str(text: &str) -> String {
    excerpt::quoted(text)
}

/// `expected <type>, got <kind> <preview>`.
fn type_message(expected: &str, got: &Value) -> String {
    let got = match got {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", preview_str(s)),
        Value::Array(items) if items.is_empty() => "empty array".to_string(),
        Value::Array(items) => format!(
            "array of {} {}",
            items.len(),
            plural(items.len() as u64, "item")
        ),
        Value::Object(map) => match map.len() {
            0 => "empty object".to_string(),
            n => format!("object with {n} {}", plural(n as u64, "property")),
        },
    };
    format!("expected {expected}, got {got}")
}

/// The first pair of equal items (by JSON equality), if any. Hashes a bounded prefix of each
/// item's structure, then compares items with equal hashes; no recursion on item depth.
fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    if items.len() < 2 {
        return None;
    }
    if items.len() <= 16 {
        for j in 1..items.len() {
            for i in 0..j {
                if deep::values_equal(&items[i], &items[j]) {
                    return Some((i, j));
                }
            }
        }
        return None;
    }
    let mut hashed: Vec<(u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, v)| (shallow_hash(v, 3), i))
        .collect();
    hashed.sort_unstable();
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    while start < hashed.len() {
        let mut end = start + 1;
        while end < hashed.len() && hashed[end].0 == hashed[start].0 {
            end += 1;
        }
        for j in start + 1..end {
            for i in start..j {
                let (a, b) = (hashed[i].1.min(hashed[j].1), hashed[i].1.max(hashed[j].1));
                if deep::values_equal(&items[a], &items[b]) && best.is_none_or(|(_, bb)| b < bb) {
                    best = Some((a, b));
                }
            }
        }
        start = end;
    }
    best
}

fn mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(0x100_0000_01b3).rotate_left(29)
}

fn hash_str(s: &str) -> u64 {
    s.bytes()
        .fold(0xcbf2_9ce4_8422_2325, |h, b| mix(h, u64::from(b)))
}

/// A hash of `value` that looks at most `levels` levels deep (equal values hash equally;
/// numbers hash by value, objects regardless of key order).
fn shallow_hash(value: &Value, levels: u32) -> u64 {
    match value {
        Value::Null => 1,
        Value::Bool(b) => 2 + u64::from(*b),
        Value::Number(n) => match number::num(n) {
            number::Num::Int(i) => mix(4, i as u64),
            number::Num::Float(f) if f.fract() == 0.0 && f.abs() < 1e30 => mix(4, f as i128 as u64),
            number::Num::Float(f) => mix(5, f.to_bits()),
        },
        Value::String(s) => mix(6, hash_str(s)),
        Value::Array(items) => {
            let mut h = mix(7, items.len() as u64);
            if levels > 0 {
                for item in items {
                    h = mix(h, shallow_hash(item, levels - 1));
                }
            }
            h
        }
        Value::Object(map) => {
            let mut h = mix(8, map.len() as u64);
            let mut sum = 0u64;
            for (k, v) in map {
                let entry = if levels > 0 {
                    mix(hash_str(k), shallow_hash(v, levels - 1))
                } else {
                    hash_str(k)
                };
                sum = sum.wrapping_add(entry);
            }
            h = mix(h, sum);
            h
        }
    }
}
