//! The walk that projects a canonical [`Schema`] onto one provider's dialect.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tools_schema::{
    AdditionalProperties, Annotations, ArraySchema, NumericSchema, ObjectSchema, Schema,
    SchemaKind, StringSchema, Validator,
};

use crate::finding::{Class, Finding};
use crate::plan::{Branch, Plan, Prop};
use crate::pointer::push;
use crate::rules;

/// The schema rules a projection follows. Non-strict OpenAI, non-strict Anthropic and MCP take
/// the canonical JSON Schema as it is and never reach this walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// OpenAI Structured Outputs, `strict: true` (Chat Completions and Responses alike).
    OpenAiStrict,
    /// Anthropic strict tool use.
    AnthropicStrict,
    /// Gemini `parameters`: the OpenAPI 3.0 schema subset.
    GeminiParameters,
    /// Gemini `parametersJsonSchema`.
    GeminiJsonSchema,
}

pub(crate) struct Walk {
    target: Target,
    pub(crate) findings: Vec<Finding>,
}

fn type_name(kind: &SchemaKind) -> &'static str {
    match kind {
        SchemaKind::Any => "any",
        SchemaKind::Null => "null",
        SchemaKind::Boolean(_) => "boolean",
        SchemaKind::String(_) => "string",
        SchemaKind::Number(_) => "number",
        SchemaKind::Integer(_) => "integer",
        SchemaKind::Array(_) => "array",
        SchemaKind::Object(_) => "object",
        SchemaKind::OneOf(_) => "oneOf",
    }
}

impl Walk {
    pub(crate) fn new(target: Target) -> Walk {
        Walk {
            target,
            findings: Vec::new(),
        }
    }

    fn find(&mut self, path: &str, rule: &'static str, class: Class, message: impl Into<String>) {
        self.findings.push(Finding {
            path: if path.is_empty() {
                "#".into()
            } else {
                format!("#{path}")
            },
            rule,
            class,
            message: message.into(),
        });
    }

    fn strict(&self) -> bool {
        matches!(self.target, Target::OpenAiStrict | Target::AnthropicStrict)
    }

    /// Projects the root of a tool's input schema.
    pub(crate) fn root(&mut self, schema: &Schema) -> (Value, Plan) {
        if matches!(schema.kind, SchemaKind::Any) {
            // Providers send arguments as an object: an unconstrained root is an open object.
            self.find(
                "",
                rules::ROOT_OBJECT,
                Class::Narrowed,
                "parameters of any type are sent as an object, the only arguments providers send",
            );
            let mut object = Schema::any_object();
            object.annotations = schema.annotations.clone();
            return self.node(&object, "");
        }
        if !schema.is_object() {
            self.find(
                "",
                rules::ROOT_OBJECT,
                Class::Unrepresentable,
                format!(
                    "the provider wants an object at the root of a tool's parameters; this schema is {}",
                    type_name(&schema.kind)
                ),
            );
        }
        self.node(schema, "")
    }

    /// Projects one node; `path` is its JSON pointer in the canonical schema.
    fn node(&mut self, schema: &Schema, path: &str) -> (Value, Plan) {
        let mut out = Map::new();
        let plan = match &schema.kind {
            SchemaKind::Any => self.any(&mut out, path),
            SchemaKind::Null => {
                out.insert("type".into(), json!("null"));
                Plan::Keep
            }
            SchemaKind::Boolean(b) => {
                let values = listed(&b.const_value, &b.enum_values);
                self.scalar(&mut out, "boolean", values, b.const_value.is_some(), path)
            }
            SchemaKind::String(s) => self.string(&mut out, s, path),
            SchemaKind::Number(n) => self.numeric(&mut out, "number", n, path),
            SchemaKind::Integer(n) => self.numeric(&mut out, "integer", n, path),
            SchemaKind::Array(a) => self.array(&mut out, a, path),
            SchemaKind::Object(o) => self.object(&mut out, o, path),
            SchemaKind::OneOf(alternatives) => self.one_of(&mut out, alternatives, path),
        };
        let json_text = matches!(plan, Plan::JsonText);
        self.annotations(&mut out, &schema.annotations, json_text, path);
        if json_text {
            let said = out.get("description").and_then(Value::as_str).unwrap_or("");
            let sep = if said.is_empty() { "" } else { " " };
            let text = format!("{said}{sep}Any JSON value, written as JSON text.");
            out.insert("description".into(), json!(text));
        }
        (Value::Object(out), plan)
    }

    fn any(&mut self, out: &mut Map<String, Value>, path: &str) -> Plan {
        match self.target {
            Target::GeminiJsonSchema => Plan::Keep,
            _ => {
                self.find(
                    path,
                    rules::ANY_AS_JSON_TEXT,
                    Class::Reshaped,
                    "any JSON value is sent as JSON text in a string and parsed back",
                );
                out.insert("type".into(), json!("string"));
                Plan::JsonText
            }
        }
    }

    /// A boolean, or a number or string with an `enum`/`const`, once its keywords are chosen.
    fn scalar(
        &mut self,
        out: &mut Map<String, Value>,
        type_name: &'static str,
        values: Option<Vec<Value>>,
        is_const: bool,
        path: &str,
    ) -> Plan {
        let Some(values) = values else {
            out.insert("type".into(), json!(type_name));
            return Plan::Keep;
        };
        let keyword = if is_const { "const" } else { "enum" };
        match self.target {
            Target::GeminiParameters if type_name != "string" => {
                self.find(
                    &push(path, keyword),
                    rules::GEMINI_ENUM_STRINGS,
                    Class::Reshaped,
                    format!("a {type_name} {keyword} is sent as a string enum of the values' JSON text and parsed back"),
                );
                out.insert("type".into(), json!("string"));
                out.insert("format".into(), json!("enum"));
                let texts: Vec<Value> = values
                    .iter()
                    .map(|v| Value::String(v.to_string()))
                    .collect();
                out.insert("enum".into(), Value::Array(texts));
                Plan::ScalarText
            }
            Target::GeminiParameters | Target::GeminiJsonSchema => {
                out.insert("type".into(), json!(type_name));
                if is_const {
                    self.find(
                        &push(path, "const"),
                        rules::GEMINI_CONST_AS_ENUM,
                        Class::Reshaped,
                        "`const` is sent as a one-value `enum` (the same value comes back)",
                    );
                }
                if self.target == Target::GeminiParameters {
                    out.insert("format".into(), json!("enum"));
                }
                out.insert("enum".into(), Value::Array(values));
                Plan::Keep
            }
            Target::OpenAiStrict | Target::AnthropicStrict => {
                out.insert("type".into(), json!(type_name));
                if is_const {
                    out.insert(
                        "const".into(),
                        values.into_iter().next().unwrap_or(Value::Null),
                    );
                } else {
                    out.insert("enum".into(), Value::Array(values));
                }
                Plan::Keep
            }
        }
    }

    fn drop_keyword(&mut self, path: &str, keyword: &str, rule: &'static str) {
        self.find(
            &push(path, keyword),
            rule,
            Class::Widened,
            format!("`{keyword}` is not supported here and is left out; the tool's own validation still enforces it"),
        );
    }

    fn string(&mut self, out: &mut Map<String, Value>, s: &StringSchema, path: &str) -> Plan {
        let values = listed(&s.const_value, &s.enum_values);
        let plan = self.scalar(out, "string", values, s.const_value.is_some(), path);
        let (lengths, pattern, rule) = match self.target {
            Target::OpenAiStrict => (false, true, rules::OPENAI_STRICT_KEYWORDS),
            Target::AnthropicStrict => (false, true, rules::ANTHROPIC_STRICT_KEYWORDS),
            Target::GeminiParameters => (true, true, rules::GEMINI_OPENAPI_SUBSET),
            Target::GeminiJsonSchema => (false, false, rules::GEMINI_JSON_SCHEMA_KEYWORDS),
        };
        for (keyword, value) in [("minLength", s.min_length), ("maxLength", s.max_length)] {
            if let Some(value) = value {
                if lengths {
                    out.insert(keyword.into(), json!(value));
                } else {
                    self.drop_keyword(path, keyword, rule);
                }
            }
        }
        if let Some(p) = &s.pattern {
            if pattern {
                out.insert("pattern".into(), json!(p));
            } else {
                self.drop_keyword(path, "pattern", rule);
            }
        }
        plan
    }

    fn numeric(
        &mut self,
        out: &mut Map<String, Value>,
        type_name: &'static str,
        n: &NumericSchema,
        path: &str,
    ) -> Plan {
        let values = listed(&n.const_value, &n.enum_values);
        let plan = self.scalar(out, type_name, values, n.const_value.is_some(), path);
        let bounds = [
            ("minimum", &n.minimum),
            ("exclusiveMinimum", &n.exclusive_minimum),
            ("maximum", &n.maximum),
            ("exclusiveMaximum", &n.exclusive_maximum),
            ("multipleOf", &n.multiple_of),
        ];
        for (keyword, value) in bounds {
            let Some(value) = value else { continue };
            let kept = match self.target {
                Target::OpenAiStrict => true,
                Target::AnthropicStrict => false,
                Target::GeminiParameters | Target::GeminiJsonSchema => {
                    matches!(keyword, "minimum" | "maximum")
                }
            };
            if kept {
                out.insert(keyword.into(), Value::Number(value.clone()));
                continue;
            }
            // An exclusive bound on an integer is an inclusive bound one step in.
            let inclusive = match (keyword, type_name, value.as_i64()) {
                ("exclusiveMinimum", "integer", Some(v))
                    if self.target != Target::AnthropicStrict =>
                {
                    v.checked_add(1).map(|v| ("minimum", v))
                }
                ("exclusiveMaximum", "integer", Some(v))
                    if self.target != Target::AnthropicStrict =>
                {
                    v.checked_sub(1).map(|v| ("maximum", v))
                }
                _ => None,
            };
            match inclusive {
                Some((inclusive, v)) if !out.contains_key(inclusive) => {
                    self.find(
                        &push(path, keyword),
                        rules::GEMINI_OPENAPI_SUBSET,
                        Class::Lossless,
                        format!("`{keyword}` on an integer is written as `{inclusive}: {v}`"),
                    );
                    out.insert(inclusive.into(), json!(v));
                }
                _ => {
                    let rule = match self.target {
                        Target::AnthropicStrict => rules::ANTHROPIC_STRICT_KEYWORDS,
                        Target::GeminiParameters => rules::GEMINI_OPENAPI_SUBSET,
                        _ => rules::GEMINI_JSON_SCHEMA_KEYWORDS,
                    };
                    self.drop_keyword(path, keyword, rule);
                }
            }
        }
        plan
    }

    fn array(&mut self, out: &mut Map<String, Value>, a: &ArraySchema, path: &str) -> Plan {
        out.insert("type".into(), json!("array"));
        let items_plan = match &a.items {
            Some(items) => {
                let (value, plan) = self.node(items, &push(path, "items"));
                out.insert("items".into(), value);
                plan
            }
            None if self.target == Target::GeminiJsonSchema => Plan::Keep,
            None => {
                let mut items = Map::new();
                let plan = self.any(&mut items, &push(path, "items"));
                out.insert("items".into(), Value::Object(items));
                plan
            }
        };
        let rule = match self.target {
            Target::OpenAiStrict => rules::OPENAI_STRICT_KEYWORDS,
            Target::AnthropicStrict => rules::ANTHROPIC_STRICT_KEYWORDS,
            Target::GeminiParameters => rules::GEMINI_OPENAPI_SUBSET,
            Target::GeminiJsonSchema => rules::GEMINI_JSON_SCHEMA_KEYWORDS,
        };
        if let Some(min) = a.min_items {
            if self.target == Target::AnthropicStrict && min > 1 {
                self.find(
                    &push(path, "minItems"),
                    rules::ANTHROPIC_STRICT_KEYWORDS,
                    Class::Widened,
                    format!("`minItems` may only be 0 or 1 in strict mode; {min} is sent as 1"),
                );
                out.insert("minItems".into(), json!(1));
            } else {
                out.insert("minItems".into(), json!(min));
            }
        }
        if let Some(max) = a.max_items {
            if self.target == Target::AnthropicStrict {
                self.drop_keyword(path, "maxItems", rule);
            } else {
                out.insert("maxItems".into(), json!(max));
            }
        }
        if a.unique_items {
            self.drop_keyword(path, "uniqueItems", rule);
        }
        if items_plan.is_keep() {
            Plan::Keep
        } else {
            Plan::Array(Box::new(items_plan))
        }
    }

    fn object(&mut self, out: &mut Map<String, Value>, o: &ObjectSchema, path: &str) -> Plan {
        // A map with no declared properties becomes a list of pairs where the dialect has no
        // schema-valued `additionalProperties`.
        if let AdditionalProperties::Schema(values) = &o.additional_properties
            && o.properties.is_empty()
            && self.target != Target::GeminiJsonSchema
        {
            self.find(
                &push(path, "additionalProperties"),
                rules::MAP_AS_PAIRS,
                Class::Reshaped,
                "a map is sent as an array of {\"key\", \"value\"} pairs and turned back into an object",
            );
            let (value, plan) = self.node(values, &push(path, "additionalProperties"));
            let mut pair = Map::new();
            pair.insert("type".into(), json!("object"));
            pair.insert(
                "properties".into(),
                json!({"key": {"type": "string"}, "value": value}),
            );
            pair.insert("required".into(), json!(["key", "value"]));
            if self.strict() {
                pair.insert("additionalProperties".into(), json!(false));
            }
            out.insert("type".into(), json!("array"));
            out.insert("items".into(), Value::Object(pair));
            return Plan::Pairs(Box::new(plan));
        }
        out.insert("type".into(), json!("object"));
        let mut props = Vec::new();
        let mut properties = Map::new();
        let all_required = self.target == Target::OpenAiStrict;
        // By hash: a scan of `required` per property was quadratic in a long object.
        let required_names: std::collections::HashSet<&str> =
            o.required.iter().map(|r| r.as_str()).collect();
        for (name, schema) in &o.properties {
            let at = push(&push(path, "properties"), name);
            let (mut value, plan) = self.node(schema, &at);
            let required = required_names.contains(name.as_str());
            let mut null_is_absent = false;
            let mut null_ambiguous = false;
            if all_required && !required {
                null_is_absent = true;
                null_ambiguous = admits_null(schema);
                if null_ambiguous {
                    self.find(
                        &at,
                        rules::OPENAI_ALL_REQUIRED,
                        Class::Narrowed,
                        "optional and already nullable: made required, `null` now means absent, so an explicit null cannot be sent",
                    );
                } else {
                    self.find(
                        &at,
                        rules::OPENAI_ALL_REQUIRED,
                        Class::Reshaped,
                        "optional: made required and nullable; `null` is turned back into absent",
                    );
                }
                // Never merged into the node's own `anyOf`: the null alternative wraps it.
                value = json!({"anyOf": [value, {"type": "null"}]});
            }
            properties.insert(name.clone(), value);
            if null_is_absent || !plan.is_keep() {
                props.push(Prop {
                    name: name.clone(),
                    plan,
                    null_is_absent,
                    null_ambiguous,
                });
            }
        }
        if !o.properties.is_empty() {
            out.insert("properties".into(), Value::Object(properties));
        }
        let required: Vec<Value> = if all_required {
            o.properties.iter().map(|(n, _)| json!(n)).collect()
        } else {
            // A required name without a declared property: the strict dialects cannot say it.
            o.required.iter().map(|n| json!(n)).collect()
        };
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        let mut closed = false;
        match (&o.additional_properties, self.target) {
            (AdditionalProperties::Deny, Target::GeminiParameters) => {
                self.find(
                    &push(path, "additionalProperties"),
                    rules::GEMINI_OPENAPI_SUBSET,
                    Class::Widened,
                    "the OpenAPI schema cannot close an object; the tool's own validation still refuses other keys",
                );
            }
            (
                AdditionalProperties::Allow | AdditionalProperties::Schema(_),
                Target::GeminiParameters,
            ) => {}
            (_, Target::GeminiJsonSchema) => {
                let value = match &o.additional_properties {
                    AdditionalProperties::Allow => json!(true),
                    AdditionalProperties::Deny => json!(false),
                    AdditionalProperties::Schema(values) => {
                        let (value, plan) = self.node(values, &push(path, "additionalProperties"));
                        if !plan.is_keep() {
                            // Gemini's JSON Schema dialect keeps every node's shape but `const`,
                            // which decodes to the same value: nothing to undo.
                            self.find(
                                &push(path, "additionalProperties"),
                                rules::GEMINI_JSON_SCHEMA_KEYWORDS,
                                Class::Unrepresentable,
                                "the values of this map cannot be decoded",
                            );
                        }
                        value
                    }
                };
                out.insert("additionalProperties".into(), value);
            }
            (AdditionalProperties::Deny, _) => {
                out.insert("additionalProperties".into(), json!(false));
            }
            (AdditionalProperties::Allow | AdditionalProperties::Schema(_), _) => {
                let rule = if self.target == Target::OpenAiStrict {
                    rules::OPENAI_CLOSED_OBJECTS
                } else {
                    rules::ANTHROPIC_CLOSED_OBJECTS
                };
                self.find(
                    &push(path, "additionalProperties"),
                    rule,
                    Class::Narrowed,
                    "strict mode closes every object: keys the schema does not declare can no longer be sent",
                );
                out.insert("additionalProperties".into(), json!(false));
                closed = true;
            }
        }
        if self.target == Target::GeminiParameters
            && let AdditionalProperties::Schema(_) = &o.additional_properties
        {
            self.find(
                &push(path, "additionalProperties"),
                rules::GEMINI_OPENAPI_SUBSET,
                Class::Narrowed,
                "an object with both properties and a value schema for other keys: only the declared properties are described",
            );
        }
        if props.is_empty() && !closed {
            Plan::Keep
        } else {
            Plan::Object { props, closed }
        }
    }

    fn one_of(
        &mut self,
        out: &mut Map<String, Value>,
        alternatives: &[Schema],
        path: &str,
    ) -> Plan {
        let at = push(path, "oneOf");
        // Gemini's OpenAPI subset: a nullable alternative becomes `nullable: true`.
        let (nulls, others): (Vec<&Schema>, Vec<&Schema>) = alternatives
            .iter()
            .partition(|s| matches!(s.kind, SchemaKind::Null));
        let gemini_nullable = self.target == Target::GeminiParameters && !nulls.is_empty();
        let kept: Vec<&Schema> = if gemini_nullable {
            others
        } else {
            alternatives.iter().collect()
        };
        if !disjoint_all(alternatives) {
            self.find(
                &at,
                rules::ONE_OF_DISJOINT,
                Class::Unrepresentable,
                "the alternatives of this `oneOf` may overlap, so `anyOf` would accept values `oneOf` refuses",
            );
        }
        if gemini_nullable && kept.len() == 1 {
            self.find(
                &at,
                rules::GEMINI_NULLABLE,
                Class::Lossless,
                "`oneOf` with `null` is written as `nullable: true`",
            );
            if let Some(only) = kept.first() {
                let (value, plan) = self.node(only, &format!("{at}/0"));
                if let Value::Object(map) = value {
                    out.extend(map);
                }
                out.insert("nullable".into(), json!(true));
                return if plan.is_keep() {
                    Plan::Keep
                } else {
                    Plan::OrNull(Box::new(plan))
                };
            }
        }
        if disjoint_all(alternatives) {
            self.find(
                &at,
                rules::ONE_OF_DISJOINT,
                Class::Lossless,
                "the alternatives exclude each other, so `oneOf` is written as `anyOf`",
            );
        }
        let mut branches = Vec::new();
        let mut values = Vec::new();
        for (index, alternative) in alternatives.iter().enumerate() {
            if gemini_nullable && matches!(alternative.kind, SchemaKind::Null) {
                continue;
            }
            let (value, plan) = self.node(alternative, &format!("{at}/{index}"));
            values.push(value);
            branches.push((plan, alternative));
        }
        if reshaped_overlap(&values, &branches) {
            self.find(
                &at,
                rules::UNION_RESHAPE,
                Class::Narrowed,
                "a reshaped alternative's values can look like another alternative's once sent, \
                 so such values cannot be sent",
            );
        }
        out.insert("anyOf".into(), Value::Array(values));
        if gemini_nullable {
            out.insert("nullable".into(), json!(true));
        }
        if branches.iter().all(|(plan, _)| plan.is_keep()) {
            return Plan::Keep;
        }
        let mut union = Vec::new();
        for (plan, alternative) in branches {
            match Validator::from_schema(alternative) {
                Ok(validator) => union.push(Branch {
                    plan,
                    canonical: Arc::new(validator),
                }),
                Err(_) => {
                    self.find(
                        &at,
                        rules::ONE_OF_DISJOINT,
                        Class::Unrepresentable,
                        "an alternative cannot be compiled, so its values cannot be decoded",
                    );
                }
            }
        }
        let plan = Plan::Union(union);
        if gemini_nullable {
            Plan::OrNull(Box::new(plan))
        } else {
            plan
        }
    }

    fn annotations(
        &mut self,
        out: &mut Map<String, Value>,
        a: &Annotations,
        json_text: bool,
        path: &str,
    ) {
        if let Some(title) = &a.title {
            out.insert("title".into(), json!(title));
        }
        if let Some(description) = &a.description {
            out.insert("description".into(), json!(description));
        }
        if let Some(format) = &a.format {
            let ty = out.get("type").and_then(Value::as_str);
            let f = format.as_str();
            let allowed = !json_text
                && match self.target {
                    Target::OpenAiStrict => {
                        ty == Some("string") && rules::OPENAI_FORMATS.contains(&f)
                    }
                    Target::AnthropicStrict => {
                        ty == Some("string") && rules::ANTHROPIC_FORMATS.contains(&f)
                    }
                    // `enum` is the format the projection writes for a string enum, never an
                    // annotation's.
                    Target::GeminiParameters => {
                        !out.contains_key("format")
                            && f != "enum"
                            && ty.is_some_and(|t| rules::gemini_formats(t).contains(&f))
                    }
                    Target::GeminiJsonSchema => true,
                };
            if allowed {
                out.insert("format".into(), json!(format));
            } else {
                self.find(
                    &push(path, "format"),
                    rules::ANNOTATIONS,
                    Class::AnnotationDropped,
                    format!(
                        "the format {} is not one the provider documents here",
                        tools_schema::excerpt::quoted(format)
                    ),
                );
            }
        }
        let default_kept = self.target == Target::GeminiParameters;
        if let Some(default) = &a.default {
            if default_kept {
                out.insert("default".into(), tools_schema::deep::clone_value(default));
            } else {
                self.find(
                    &push(path, "default"),
                    rules::ANNOTATIONS,
                    Class::AnnotationDropped,
                    "`default` is left out",
                );
            }
        }
        if a.examples.is_some() {
            self.find(
                &push(path, "examples"),
                rules::ANNOTATIONS,
                Class::AnnotationDropped,
                "`examples` is left out",
            );
        }
        for key in a.extra.keys() {
            self.find(
                &push(path, key),
                rules::ANNOTATIONS,
                Class::AnnotationDropped,
                format!("the annotation `{key}` is left out"),
            );
        }
    }
}

/// Whether a canonical schema admits `null`.
fn admits_null(schema: &Schema) -> bool {
    match &schema.kind {
        SchemaKind::Any | SchemaKind::Null => true,
        SchemaKind::OneOf(alternatives) => alternatives.iter().any(admits_null),
        _ => false,
    }
}

/// The JSON types a schema admits; `None` for any type.
fn types(schema: &Schema) -> Option<Vec<&'static str>> {
    Some(match &schema.kind {
        SchemaKind::Any => return None,
        SchemaKind::Null => vec!["null"],
        SchemaKind::Boolean(_) => vec!["boolean"],
        SchemaKind::String(_) => vec!["string"],
        SchemaKind::Number(_) | SchemaKind::Integer(_) => vec!["number"],
        SchemaKind::Array(_) => vec!["array"],
        SchemaKind::Object(_) => vec!["object"],
        SchemaKind::OneOf(alternatives) => {
            let mut all = Vec::new();
            for alternative in alternatives {
                all.extend(types(alternative)?);
            }
            all
        }
    })
}

/// The values a scalar schema lists: its `const` alone, or else its `enum`.
fn listed<T: Clone + Into<Value>>(
    const_value: &Option<T>,
    enum_values: &Option<Vec<T>>,
) -> Option<Vec<Value>> {
    match (const_value, enum_values) {
        (Some(value), _) => Some(vec![value.clone().into()]),
        (None, Some(values)) => Some(values.iter().cloned().map(Into::into).collect()),
        (None, None) => None,
    }
}

/// The finite set of values a scalar schema admits, when it has one (`enum`/`const`).
fn finite_values(schema: &Schema) -> Option<Vec<Value>> {
    match &schema.kind {
        SchemaKind::Boolean(b) => listed(&b.const_value, &b.enum_values),
        SchemaKind::String(s) => listed(&s.const_value, &s.enum_values),
        SchemaKind::Number(n) | SchemaKind::Integer(n) => listed(&n.const_value, &n.enum_values),
        SchemaKind::Null => Some(vec![Value::Null]),
        _ => None,
    }
}

fn values_disjoint(a: &[Value], b: &[Value]) -> bool {
    !a.iter()
        .any(|x| b.iter().any(|y| tools_schema::deep::values_equal(x, y)))
}

/// Whether no value can match both schemas, as far as can be proven cheaply: different JSON
/// types, disjoint `enum`/`const` sets, or objects that require a shared property whose value
/// sets are disjoint (a tag).
pub(crate) fn disjoint(a: &Schema, b: &Schema) -> bool {
    if let (Some(ta), Some(tb)) = (types(a), types(b))
        && !ta.iter().any(|t| tb.contains(t))
    {
        return true;
    }
    if let (SchemaKind::OneOf(alternatives), _) = (&a.kind, &b.kind) {
        return alternatives.iter().all(|x| disjoint(x, b));
    }
    if let (_, SchemaKind::OneOf(alternatives)) = (&a.kind, &b.kind) {
        return alternatives.iter().all(|y| disjoint(a, y));
    }
    if let (Some(va), Some(vb)) = (finite_values(a), finite_values(b)) {
        return values_disjoint(&va, &vb);
    }
    if let (SchemaKind::Object(oa), SchemaKind::Object(ob)) = (&a.kind, &b.kind) {
        for (name, sa) in &oa.properties {
            if !oa.required.contains(name) || !ob.required.contains(name) {
                continue;
            }
            let Some((_, sb)) = ob.properties.iter().find(|(n, _)| n == name) else {
                continue;
            };
            if disjoint(sa, sb) {
                return true;
            }
        }
    }
    false
}

/// Whether every pair of alternatives is [`disjoint`].
pub(crate) fn disjoint_all(alternatives: &[Schema]) -> bool {
    alternatives
        .iter()
        .enumerate()
        .all(|(i, a)| alternatives[i + 1..].iter().all(|b| disjoint(a, b)))
}

/// Whether some alternative is reshaped into another JSON type (a map sent as pairs, a value
/// sent as JSON text, a scalar sent as text) that another alternative's provider values can
/// have too: then a sent value may read back as the other alternative's. (Reshapings that keep
/// the type are told apart by the canonical alternatives, which the `oneOf` rule already judges
/// for overlap.)
fn reshaped_overlap(values: &[Value], branches: &[(Plan, &Schema)]) -> bool {
    fn changes_type(plan: &Plan) -> bool {
        match plan {
            Plan::Pairs(_) | Plan::JsonText | Plan::ScalarText => true,
            Plan::OrNull(inner) => changes_type(inner),
            _ => false,
        }
    }
    let kinds: Vec<Option<Vec<&'static str>>> = values.iter().map(json_kinds).collect();
    branches.iter().enumerate().any(|(i, (plan, _))| {
        changes_type(plan)
            && kinds.iter().enumerate().any(|(j, other)| {
                j != i
                    && match (&kinds[i], other) {
                        (Some(a), Some(b)) => a.iter().any(|k| b.contains(k)),
                        // A value of any type overlaps everything.
                        _ => true,
                    }
            })
    })
}

/// The JSON types a projected schema's values can have (`integer` counted as `number`), or
/// `None` when it does not say (any type).
fn json_kinds(schema: &Value) -> Option<Vec<&'static str>> {
    fn kind(name: &str) -> Option<&'static str> {
        match name.to_ascii_lowercase().as_str() {
            "null" => Some("null"),
            "boolean" => Some("boolean"),
            "integer" | "number" => Some("number"),
            "string" => Some("string"),
            "array" => Some("array"),
            "object" => Some("object"),
            _ => None,
        }
    }
    let map = schema.as_object()?;
    let mut kinds = Vec::new();
    match map.get("type") {
        Some(Value::String(name)) => kinds.push(kind(name)?),
        Some(Value::Array(names)) => {
            for name in names {
                kinds.push(kind(name.as_str()?)?);
            }
        }
        Some(_) => return None,
        None => {
            let alternatives = map.get("anyOf")?.as_array()?;
            for alternative in alternatives {
                kinds.extend(json_kinds(alternative)?);
            }
        }
    }
    if map.get("nullable") == Some(&Value::Bool(true)) {
        kinds.push("null");
    }
    Some(kinds)
}
