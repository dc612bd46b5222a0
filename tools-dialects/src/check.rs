//! A checker of tool definitions against the providers' documented rules.
//!
//! It is written from the providers' documentation ([`crate::rules`]), not from the projection:
//! it reads a finished definition as a provider would and lists every rule it breaks. The tests
//! run every projection of every corpus schema through it; [`crate::project`] uses only its
//! size limits ([`schema_limits`], [`RequestTotals`]) to refuse a tool before a request is made.
//!
//! The walks use an explicit stack: a definition of any depth is checked without recursion.

use serde_json::{Map, Value};

use crate::dialect::Dialect;
use crate::envelope::parameters_of;
use crate::pointer::push;
use crate::rules;

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer into the definition.
    pub path: String,
    /// The rule id ([`crate::rules::RULES`]).
    pub rule: &'static str,
    /// What is wrong.
    pub message: String,
}

/// One passed size limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitViolation {
    /// JSON pointer into the parameters schema where the limit is passed.
    pub path: String,
    /// The limit, in words.
    pub limit: String,
    /// The count or size reached there.
    pub found: usize,
}

/// OpenAI strict: object properties in one schema.
pub const OPENAI_MAX_PROPERTIES: usize = 5_000;
/// OpenAI strict: levels of object nesting.
pub const OPENAI_MAX_DEPTH: usize = 10;
/// OpenAI strict: enum values in one schema.
pub const OPENAI_MAX_ENUM_VALUES: usize = 1_000;
/// OpenAI strict: characters of property names, enum and const values in one schema.
pub const OPENAI_MAX_STRING_LENGTH: usize = 120_000;
/// OpenAI strict: a string enum longer than this many values ...
pub const OPENAI_LARGE_ENUM: usize = 250;
/// ... may hold at most this many characters.
pub const OPENAI_LARGE_ENUM_LENGTH: usize = 15_000;
/// Anthropic strict: strict tools per request.
pub const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;
/// Anthropic strict: optional parameters across the strict tools of a request.
pub const ANTHROPIC_MAX_OPTIONAL: usize = 24;
/// Anthropic strict: parameters with a union type across the strict tools of a request.
pub const ANTHROPIC_MAX_UNIONS: usize = 16;

const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "array", "object", "null",
];

const OPENAI_KEYS: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
const ANTHROPIC_KEYS: &[&str] = &[
    "type",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "minItems",
];
const GEMINI_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];
const GEMINI_JSON_KEYS: &[&str] = &[
    "$id",
    "$defs",
    "$ref",
    "$anchor",
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "properties",
    "additionalProperties",
    "required",
];

fn violation(path: &str, rule: &'static str, message: impl Into<String>) -> Violation {
    Violation {
        path: path.to_owned(),
        rule,
        message: message.into(),
    }
}

/// The names an object schema lists in `required`.
fn required_names(map: &Map<String, Value>) -> Vec<&str> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Every documented rule `definition` breaks as a tool definition of `dialect`.
pub fn check(dialect: Dialect, definition: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    envelope(dialect, definition, &mut out);
    let (prefix, parameters) = match (dialect, parameters_of(dialect, definition)) {
        (Dialect::OpenAiChat { .. }, Some(p)) => ("/function/parameters", p),
        (Dialect::OpenAiResponses { .. }, Some(p)) => ("/parameters", p),
        (Dialect::Anthropic { .. }, Some(p)) => ("/input_schema", p),
        (Dialect::GeminiParameters, Some(p)) => ("/parameters", p),
        (Dialect::GeminiJsonSchema, Some(p)) => ("/parametersJsonSchema", p),
        (Dialect::Mcp, Some(p)) => ("/inputSchema", p),
        (_, None) => {
            out.push(violation("", rules::ROOT_OBJECT, "no parameters schema"));
            return out;
        }
    };
    if parameters
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase)
        != Some("object".into())
    {
        out.push(violation(
            prefix,
            rules::ROOT_OBJECT,
            "the parameters are not declared as an object",
        ));
    }
    if parameters.get("anyOf").is_some() && dialect.is_strict() {
        out.push(violation(prefix, rules::ROOT_OBJECT, "anyOf at the root"));
    }
    match dialect {
        Dialect::OpenAiChat { strict: true } | Dialect::OpenAiResponses { strict: true } => {
            schema(parameters, prefix, Rules::OpenAi, &mut out);
            for limit in schema_limits(dialect, parameters) {
                out.push(violation(
                    &format!("{prefix}{}", limit.path),
                    rules::OPENAI_LIMITS,
                    format!("{} (found {})", limit.limit, limit.found),
                ));
            }
        }
        Dialect::Anthropic { strict: true } => {
            schema(parameters, prefix, Rules::Anthropic, &mut out)
        }
        Dialect::GeminiParameters => schema(parameters, prefix, Rules::Gemini, &mut out),
        Dialect::GeminiJsonSchema => {
            schema(parameters, prefix, Rules::GeminiJson, &mut out);
            references(parameters, prefix, &mut out);
        }
        _ => {}
    }
    out
}

fn envelope(dialect: Dialect, definition: &Value, out: &mut Vec<Violation>) {
    let (name_at, name) = match dialect {
        Dialect::OpenAiChat { .. } => {
            if definition.get("type") != Some(&Value::String("function".into())) {
                out.push(violation(
                    "/type",
                    rules::ROOT_OBJECT,
                    "a Chat Completions tool is {\"type\": \"function\", \"function\": {...}}",
                ));
            }
            match definition.get("function").and_then(|f| f.get("strict")) {
                Some(Value::Bool(s)) if *s == dialect.is_strict() => {}
                _ => out.push(violation(
                    "/function/strict",
                    rules::OPENAI_STRICT_KEYWORDS,
                    "`strict` must be sent explicitly and match the dialect",
                )),
            }
            (
                "/function/name",
                definition.get("function").and_then(|f| f.get("name")),
            )
        }
        Dialect::OpenAiResponses { .. } => {
            if definition.get("type") != Some(&Value::String("function".into())) {
                out.push(violation(
                    "/type",
                    rules::ROOT_OBJECT,
                    "a Responses tool is {\"type\": \"function\", \"name\", ...}",
                ));
            }
            match definition.get("strict") {
                Some(Value::Bool(s)) if *s == dialect.is_strict() => {}
                _ => out.push(violation(
                    "/strict",
                    rules::OPENAI_STRICT_KEYWORDS,
                    "`strict` must be sent explicitly and match the dialect",
                )),
            }
            ("/name", definition.get("name"))
        }
        Dialect::Anthropic { strict } => {
            let sent = definition
                .get("strict")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            if sent != strict {
                out.push(violation(
                    "/strict",
                    rules::ANTHROPIC_STRICT_KEYWORDS,
                    "`strict` does not match the dialect",
                ));
            }
            ("/name", definition.get("name"))
        }
        _ => ("/name", definition.get("name")),
    };
    let Some(name) = name.and_then(Value::as_str) else {
        out.push(violation(name_at, rules::NAMES, "no name"));
        return;
    };
    let ok = match dialect {
        Dialect::Mcp => {
            (1..=128).contains(&name.chars().count())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        }
        Dialect::GeminiParameters | Dialect::GeminiJsonSchema => {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().count() <= 64
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
        }
        _ => {
            (1..=64).contains(&name.chars().count())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        }
    };
    if !ok {
        out.push(violation(
            name_at,
            rules::NAMES,
            "the name breaks the provider's naming rule",
        ));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rules {
    OpenAi,
    Anthropic,
    Gemini,
    GeminiJson,
}

/// Walks every schema node of a parameters schema.
fn schema(root: &Value, prefix: &str, rules_of: Rules, out: &mut Vec<Violation>) {
    let (keys, rule): (&[&str], &'static str) = match rules_of {
        Rules::OpenAi => (OPENAI_KEYS, rules::OPENAI_STRICT_KEYWORDS),
        Rules::Anthropic => (ANTHROPIC_KEYS, rules::ANTHROPIC_STRICT_KEYWORDS),
        Rules::Gemini => (GEMINI_KEYS, rules::GEMINI_OPENAPI_SUBSET),
        Rules::GeminiJson => (GEMINI_JSON_KEYS, rules::GEMINI_JSON_SCHEMA_KEYWORDS),
    };
    let mut stack = vec![(root, prefix.to_owned())];
    while let Some((node, path)) = stack.pop() {
        let Value::Object(map) = node else {
            if !(rules_of == Rules::GeminiJson && node.is_boolean()) {
                out.push(violation(&path, rule, "a schema must be an object"));
            }
            continue;
        };
        for key in map.keys() {
            if !keys.contains(&key.as_str()) {
                out.push(violation(
                    &push(&path, key),
                    rule,
                    format!("`{key}` is not supported"),
                ));
            }
        }
        let ty = map.get("type");
        let type_names: Vec<&str> = match ty {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) if rules_of != Rules::Gemini => {
                ts.iter().filter_map(Value::as_str).collect()
            }
            Some(_) => {
                out.push(violation(
                    &push(&path, "type"),
                    rule,
                    "`type` must be a type name",
                ));
                Vec::new()
            }
            None => Vec::new(),
        };
        for t in &type_names {
            let known = match rules_of {
                Rules::Gemini => TYPES.contains(&t.to_ascii_lowercase().as_str()),
                _ => TYPES.contains(t),
            };
            if !known {
                out.push(violation(
                    &push(&path, "type"),
                    rule,
                    format!("unknown type {t:?}"),
                ));
            }
        }
        let composite =
            map.contains_key("anyOf") || map.contains_key("$ref") || map.contains_key("allOf");
        if type_names.is_empty()
            && !composite
            && matches!(rules_of, Rules::OpenAi | Rules::Anthropic | Rules::Gemini)
            && (!(map.contains_key("enum") || map.contains_key("const"))
                || rules_of == Rules::Gemini)
        {
            out.push(violation(&path, rule, "every schema needs a `type`"));
        }
        let is_object = type_names.iter().any(|t| t.eq_ignore_ascii_case("object"));
        if is_object
            && matches!(rules_of, Rules::OpenAi | Rules::Anthropic)
            && map.get("additionalProperties") != Some(&Value::Bool(false))
        {
            let r = if rules_of == Rules::OpenAi {
                rules::OPENAI_CLOSED_OBJECTS
            } else {
                rules::ANTHROPIC_CLOSED_OBJECTS
            };
            out.push(violation(&path, r, "`additionalProperties` must be false"));
        }
        if is_object && rules_of == Rules::OpenAi {
            let required = required_names(map);
            if let Some(Value::Object(properties)) = map.get("properties") {
                for name in properties.keys() {
                    if !required.contains(&name.as_str()) {
                        out.push(violation(
                            &push(&push(&path, "properties"), name),
                            rules::OPENAI_ALL_REQUIRED,
                            "every property must be listed in `required`",
                        ));
                    }
                }
            }
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            let ok = match rules_of {
                Rules::OpenAi => rules::OPENAI_FORMATS.contains(&format),
                Rules::Anthropic => rules::ANTHROPIC_FORMATS.contains(&format),
                Rules::Gemini => type_names.first().is_some_and(|t| {
                    rules::gemini_formats(&t.to_ascii_lowercase()).contains(&format)
                }),
                Rules::GeminiJson => true,
            };
            if !ok {
                out.push(violation(
                    &push(&path, "format"),
                    rule,
                    format!("the format {format:?} is not documented"),
                ));
            }
        }
        if let Some(values) = map.get("enum") {
            match values {
                Value::Array(values) => {
                    let scalar = values.iter().all(|v| !(v.is_array() || v.is_object()));
                    if !scalar {
                        out.push(violation(
                            &push(&path, "enum"),
                            rule,
                            "enum values must be scalars",
                        ));
                    }
                    if rules_of == Rules::Gemini
                        && (!values.iter().all(Value::is_string)
                            || !type_names.iter().any(|t| t.eq_ignore_ascii_case("string")))
                    {
                        out.push(violation(
                            &push(&path, "enum"),
                            rules::GEMINI_ENUM_STRINGS,
                            "an enum is a list of strings on a string schema",
                        ));
                    }
                }
                _ => out.push(violation(
                    &push(&path, "enum"),
                    rule,
                    "enum must be an array",
                )),
            }
        }
        if rules_of == Rules::Anthropic
            && let Some(min) = map.get("minItems")
            && !(min == &Value::from(0) || min == &Value::from(1))
        {
            out.push(violation(
                &push(&path, "minItems"),
                rule,
                "minItems may only be 0 or 1",
            ));
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            for (name, sub) in properties {
                stack.push((sub, push(&push(&path, "properties"), name)));
            }
        }
        if let Some(items) = map.get("items") {
            stack.push((items, push(&path, "items")));
        }
        if let Some(additional) = map.get("additionalProperties")
            && additional.is_object()
        {
            stack.push((additional, push(&path, "additionalProperties")));
        }
        for key in ["anyOf", "allOf", "prefixItems"] {
            if let Some(Value::Array(alternatives)) = map.get(key) {
                for (i, sub) in alternatives.iter().enumerate() {
                    stack.push((sub, format!("{}/{i}", push(&path, key))));
                }
            }
        }
        if let Some(Value::Object(defs)) = map.get("$defs") {
            for (name, sub) in defs {
                stack.push((sub, push(&push(&path, "$defs"), name)));
            }
        }
    }
}

/// Gemini resolves `$ref` strictly: every reference must point into the schema itself.
fn references(root: &Value, prefix: &str, out: &mut Vec<Violation>) {
    let mut stack = vec![(root, prefix.to_owned())];
    while let Some((node, path)) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref") {
                    let resolved = reference
                        .as_str()
                        .and_then(|r| r.strip_prefix('#'))
                        .and_then(|pointer| root.pointer(pointer));
                    if resolved.is_none() {
                        out.push(violation(
                            &push(&path, "$ref"),
                            rules::GEMINI_JSON_SCHEMA_KEYWORDS,
                            "the reference does not resolve inside the schema",
                        ));
                    }
                }
                for (key, sub) in map {
                    stack.push((sub, push(&path, key)));
                }
            }
            Value::Array(items) => {
                for (i, sub) in items.iter().enumerate() {
                    stack.push((sub, format!("{path}/{i}")));
                }
            }
            _ => {}
        }
    }
}

/// The size limits of one strict OpenAI parameters schema (see [`OPENAI_MAX_PROPERTIES`] and
/// the constants beside it), in the order they are met; empty for other dialects.
pub fn schema_limits(dialect: Dialect, parameters: &Value) -> Vec<LimitViolation> {
    if !matches!(
        dialect,
        Dialect::OpenAiChat { strict: true } | Dialect::OpenAiResponses { strict: true }
    ) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut properties = 0usize;
    let mut enums = 0usize;
    let mut text = 0usize;
    let mut reported = [false; 4];
    let mut stack = vec![(parameters, String::new(), 0usize)];
    while let Some((node, path, depth)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        let is_object = map.get("type") == Some(&Value::String("object".into()));
        let depth = depth + usize::from(is_object);
        if depth > OPENAI_MAX_DEPTH && !reported[0] {
            reported[0] = true;
            out.push(LimitViolation {
                path: path.clone(),
                limit: format!("at most {OPENAI_MAX_DEPTH} levels of object nesting"),
                found: depth,
            });
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, sub) in props {
                properties += 1;
                text += name.chars().count();
                let at = push(&push(&path, "properties"), name);
                if properties > OPENAI_MAX_PROPERTIES && !reported[1] {
                    reported[1] = true;
                    out.push(LimitViolation {
                        path: at.clone(),
                        limit: format!(
                            "at most {OPENAI_MAX_PROPERTIES} object properties in a schema"
                        ),
                        found: properties,
                    });
                }
                stack.push((sub, at, depth));
            }
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            enums += values.len();
            let length: usize = values
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum();
            text += length;
            if enums > OPENAI_MAX_ENUM_VALUES && !reported[2] {
                reported[2] = true;
                out.push(LimitViolation {
                    path: push(&path, "enum"),
                    limit: format!("at most {OPENAI_MAX_ENUM_VALUES} enum values in a schema"),
                    found: enums,
                });
            }
            if values.len() > OPENAI_LARGE_ENUM && length > OPENAI_LARGE_ENUM_LENGTH {
                out.push(LimitViolation {
                    path: push(&path, "enum"),
                    limit: format!("at most {OPENAI_LARGE_ENUM_LENGTH} characters in a string enum of more than {OPENAI_LARGE_ENUM} values"),
                    found: length,
                });
            }
        }
        if let Some(Value::String(c)) = map.get("const") {
            text += c.chars().count();
        }
        if text > OPENAI_MAX_STRING_LENGTH && !reported[3] {
            reported[3] = true;
            out.push(LimitViolation {
                path: path.clone(),
                limit: format!("at most {OPENAI_MAX_STRING_LENGTH} characters of property names, enum and const values in a schema"),
                found: text,
            });
        }
        if let Some(items) = map.get("items") {
            stack.push((items, push(&path, "items"), depth));
        }
        if let Some(Value::Array(alternatives)) = map.get("anyOf") {
            for (i, sub) in alternatives.iter().enumerate() {
                stack.push((sub, format!("{}/{i}", push(&path, "anyOf")), depth));
            }
        }
    }
    out
}

/// What one strict Anthropic schema adds to its request's totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicCounts {
    /// Paths of the optional parameters (properties not in their object's `required`).
    pub optional: Vec<String>,
    /// Paths of the parameters with a union type (`anyOf` or a type list).
    pub unions: Vec<String>,
}

/// Counts the optional parameters and unions of a strict Anthropic parameters schema.
pub fn anthropic_counts(parameters: &Value) -> AnthropicCounts {
    let mut counts = AnthropicCounts::default();
    let mut stack = vec![(parameters, String::new())];
    while let Some((node, path)) = stack.pop() {
        let Value::Object(map) = node else { continue };
        if map.contains_key("anyOf") || map.get("type").is_some_and(Value::is_array) {
            counts.unions.push(path.clone());
        }
        if let Some(Value::Object(props)) = map.get("properties") {
            let required = required_names(map);
            for name in props.keys() {
                if !required.contains(&name.as_str()) {
                    counts.optional.push(push(&push(&path, "properties"), name));
                }
            }
            for (name, sub) in props.iter().rev() {
                stack.push((sub, push(&push(&path, "properties"), name)));
            }
        }
        if let Some(items) = map.get("items") {
            stack.push((items, push(&path, "items")));
        }
        if let Some(Value::Array(alternatives)) = map.get("anyOf") {
            for (i, sub) in alternatives.iter().enumerate().rev() {
                stack.push((sub, format!("{}/{i}", push(&path, "anyOf"))));
            }
        }
    }
    counts
}

/// The running per-request totals of strict Anthropic tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestTotals {
    /// Strict tools so far.
    pub strict_tools: usize,
    /// Optional parameters so far.
    pub optional: usize,
    /// Union-typed parameters so far.
    pub unions: usize,
}

impl RequestTotals {
    /// Adds one more strict tool with `counts`, or says which limit it would pass (and adds
    /// nothing).
    pub fn add(&mut self, counts: &AnthropicCounts) -> Option<LimitViolation> {
        if self.strict_tools + 1 > ANTHROPIC_MAX_STRICT_TOOLS {
            return Some(LimitViolation {
                path: String::new(),
                limit: format!("at most {ANTHROPIC_MAX_STRICT_TOOLS} strict tools in a request"),
                found: self.strict_tools + 1,
            });
        }
        if self.optional + counts.optional.len() > ANTHROPIC_MAX_OPTIONAL {
            let index = ANTHROPIC_MAX_OPTIONAL.saturating_sub(self.optional);
            return Some(LimitViolation {
                path: counts.optional.get(index).cloned().unwrap_or_default(),
                limit: format!(
                    "at most {ANTHROPIC_MAX_OPTIONAL} optional parameters across the strict tools of a request"
                ),
                found: self.optional + counts.optional.len(),
            });
        }
        if self.unions + counts.unions.len() > ANTHROPIC_MAX_UNIONS {
            let index = ANTHROPIC_MAX_UNIONS.saturating_sub(self.unions);
            return Some(LimitViolation {
                path: counts.unions.get(index).cloned().unwrap_or_default(),
                limit: format!(
                    "at most {ANTHROPIC_MAX_UNIONS} parameters with union types across the strict tools of a request"
                ),
                found: self.unions + counts.unions.len(),
            });
        }
        self.strict_tools += 1;
        self.optional += counts.optional.len();
        self.unions += counts.unions.len();
        None
    }
}

/// The per-request rules of a list of definitions in one dialect: names unique, and for strict
/// Anthropic the request limits.
pub fn check_request(dialect: Dialect, definitions: &[Value]) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut totals = RequestTotals::default();
    for (index, definition) in definitions.iter().enumerate() {
        let name = match dialect {
            Dialect::OpenAiChat { .. } => definition.get("function").and_then(|f| f.get("name")),
            _ => definition.get("name"),
        };
        if let Some(name) = name.and_then(Value::as_str)
            && !seen.insert(name.to_owned())
        {
            out.push(violation(
                &format!("/{index}"),
                rules::NAMES,
                format!("the name {name:?} is used twice"),
            ));
        }
        if dialect == (Dialect::Anthropic { strict: true })
            && definition.get("strict") == Some(&Value::Bool(true))
        {
            let counts = definition
                .get("input_schema")
                .map(anthropic_counts)
                .unwrap_or_default();
            if let Some(limit) = totals.add(&counts) {
                out.push(violation(
                    &format!("/{index}/input_schema{}", limit.path),
                    rules::ANTHROPIC_LIMITS_RULE,
                    format!("{} (found {})", limit.limit, limit.found),
                ));
            }
        }
    }
    out
}
