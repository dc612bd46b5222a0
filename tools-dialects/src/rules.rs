//! The provider rules the projections and the checker encode, each with its source.
//!
//! Every [`Finding`](crate::Finding) names one of these rules by its id. The sources are the
//! providers' own documentation pages as they read when this crate was written (late 2025); the
//! providers change these rules, so each is stated here in the words of what is encoded, and
//! [`RULES`] is the one table to update.

/// One documented provider rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The id findings carry.
    pub id: &'static str,
    /// What is encoded.
    pub text: &'static str,
    /// Where the provider documents it.
    pub source: &'static str,
}

const OPENAI_SUPPORTED: &str =
    "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas";
const ANTHROPIC_LIMITS: &str =
    "https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations";
const GEMINI_SCHEMA: &str = "https://ai.google.dev/api/caching#Schema";
const GEMINI_DECLARATION: &str = "https://ai.google.dev/api/caching#FunctionDeclaration";

/// The parameters of a tool are an object.
pub const ROOT_OBJECT: &str = "root-object";
/// Strict OpenAI: every property is listed in `required`; optional ones are made nullable.
pub const OPENAI_ALL_REQUIRED: &str = "openai-all-required";
/// Strict OpenAI: `additionalProperties: false` on every object.
pub const OPENAI_CLOSED_OBJECTS: &str = "openai-closed-objects";
/// Strict OpenAI: the keywords it supports.
pub const OPENAI_STRICT_KEYWORDS: &str = "openai-strict-keywords";
/// Strict OpenAI: size limits of one schema.
pub const OPENAI_LIMITS: &str = "openai-limits";
/// Strict Anthropic: `additionalProperties: false` on every object.
pub const ANTHROPIC_CLOSED_OBJECTS: &str = "anthropic-closed-objects";
/// Strict Anthropic: the keywords it supports.
pub const ANTHROPIC_STRICT_KEYWORDS: &str = "anthropic-strict-keywords";
/// Strict Anthropic: limits per request.
pub const ANTHROPIC_LIMITS_RULE: &str = "anthropic-request-limits";
/// Gemini `parameters`: the OpenAPI 3.0 subset of its `Schema` object.
pub const GEMINI_OPENAPI_SUBSET: &str = "gemini-openapi-subset";
/// Gemini `parameters`: `enum` holds strings only.
pub const GEMINI_ENUM_STRINGS: &str = "gemini-enum-strings";
/// Gemini `parameters`: `null` alternatives are `nullable: true`.
pub const GEMINI_NULLABLE: &str = "gemini-nullable";
/// Gemini: `const` is sent as a one-value `enum`.
pub const GEMINI_CONST_AS_ENUM: &str = "gemini-const-as-enum";
/// Gemini `parametersJsonSchema`: the keywords it supports; references resolve locally.
pub const GEMINI_JSON_SCHEMA_KEYWORDS: &str = "gemini-json-schema-keywords";
/// `oneOf` is written as `anyOf` only when the alternatives provably exclude each other, and
/// never merged into an existing `anyOf`.
pub const ONE_OF_DISJOINT: &str = "one-of-disjoint";
/// A union whose reshaped alternative's provider values can look like another alternative's
/// cannot be read back without guessing: such values are refused when they are sent.
pub const UNION_RESHAPE: &str = "union-reshape";
/// Maps become arrays of `{"key", "value"}` pairs where a dialect cannot type other keys.
pub const MAP_AS_PAIRS: &str = "map-as-pairs";
/// Any JSON value is sent as JSON text where a dialect wants a type on every node.
pub const ANY_AS_JSON_TEXT: &str = "any-as-json-text";
/// Annotations a dialect does not take.
pub const ANNOTATIONS: &str = "annotations";
/// The canonical schema was outside the enforced subset and was read by widening.
pub const OUTSIDE_SUBSET: &str = "outside-subset";
/// Function names.
pub const NAMES: &str = "tool-names";

/// The string formats strict OpenAI documents ([`OPENAI_STRICT_KEYWORDS`]).
pub(crate) const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// The string formats strict Anthropic documents ([`ANTHROPIC_STRICT_KEYWORDS`]).
pub(crate) const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// The formats Gemini's OpenAPI schema documents for a node of the (lowercase) type `ty`
/// ([`GEMINI_OPENAPI_SUBSET`]).
pub(crate) fn gemini_formats(ty: &str) -> &'static [&'static str] {
    match ty {
        "string" => &["enum", "date-time"],
        "number" => &["float", "double"],
        "integer" => &["int32", "int64"],
        _ => &[],
    }
}

/// Every rule, with what is encoded and its source.
pub const RULES: &[Rule] = &[
    Rule {
        id: ROOT_OBJECT,
        text: "The parameters of a function or tool are a JSON Schema object at the root (OpenAI: \"The root level object must be an object, and not use anyOf\"; Anthropic: input_schema is an object schema; Gemini: parameters are an OBJECT).",
        source: OPENAI_SUPPORTED,
    },
    Rule {
        id: OPENAI_ALL_REQUIRED,
        text: "Strict OpenAI: all fields must be required; an optional field is emulated with a union with null.",
        source: "https://platform.openai.com/docs/guides/structured-outputs#all-fields-must-be-required",
    },
    Rule {
        id: OPENAI_CLOSED_OBJECTS,
        text: "Strict OpenAI: additionalProperties: false must always be set in objects.",
        source: "https://platform.openai.com/docs/guides/structured-outputs#additionalproperties-false-must-always-be-set-in-objects",
    },
    Rule {
        id: OPENAI_STRICT_KEYWORDS,
        text: "Strict OpenAI supports type, properties, required, additionalProperties, items, enum, const, anyOf (not at the root), $ref/$defs, title and description, and the constraints: strings pattern and format (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid); numbers multipleOf, maximum, exclusiveMaximum, minimum, exclusiveMinimum; arrays minItems and maxItems. Not supported and left out: minLength, maxLength, uniqueItems, oneOf, allOf, not, if/then/else, patternProperties, default, examples.",
        source: OPENAI_SUPPORTED,
    },
    Rule {
        id: OPENAI_LIMITS,
        text: "Strict OpenAI: at most 5,000 object properties in total, at most 10 levels of object nesting, at most 1,000 enum values in total, at most 120,000 characters in all property names, definition names, enum values and const values together, and for one string enum of more than 250 values at most 15,000 characters of values.",
        source: "https://platform.openai.com/docs/guides/structured-outputs#objects-have-limitations-on-nesting-depth-and-size",
    },
    Rule {
        id: ANTHROPIC_CLOSED_OBJECTS,
        text: "Strict Anthropic: additionalProperties must be false on every object.",
        source: ANTHROPIC_LIMITS,
    },
    Rule {
        id: ANTHROPIC_STRICT_KEYWORDS,
        text: "Strict Anthropic supports the basic types, enum of scalars, const, anyOf, allOf (limited), local $ref/$defs, required, additionalProperties: false, the string formats date-time, time, date, duration, email, hostname, uri, ipv4, ipv6 and uuid, simple patterns, and minItems of 0 or 1. Not supported and left out: minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, maxItems, uniqueItems, recursive schemas.",
        source: ANTHROPIC_LIMITS,
    },
    Rule {
        id: ANTHROPIC_LIMITS_RULE,
        text: "Strict Anthropic, per request: at most 20 strict tools, at most 24 optional parameters across all strict schemas, at most 16 parameters with union types (anyOf or a type list) across all strict schemas; past these the API answers \"compiled grammar is too large\".",
        source: ANTHROPIC_LIMITS,
    },
    Rule {
        id: GEMINI_OPENAPI_SUBSET,
        text: "Gemini parameters take its Schema object, a subset of OpenAPI 3.0: type, format, title, description, nullable, enum, items, minItems, maxItems, properties, required, minProperties, maxProperties, minLength, maxLength, pattern, example, anyOf, propertyOrdering, default, minimum, maximum. No additionalProperties, oneOf, const, exclusive bounds, multipleOf, uniqueItems or references. Formats: float/double for numbers, int32/int64 for integers, enum and date-time for strings.",
        source: GEMINI_SCHEMA,
    },
    Rule {
        id: GEMINI_ENUM_STRINGS,
        text: "Gemini parameters: enum is a list of strings on a STRING schema with format enum.",
        source: GEMINI_SCHEMA,
    },
    Rule {
        id: GEMINI_NULLABLE,
        text: "Gemini parameters: a value that may be null is marked nullable: true.",
        source: GEMINI_SCHEMA,
    },
    Rule {
        id: GEMINI_CONST_AS_ENUM,
        text: "Gemini takes enum rather than const; a const is a one-value enum.",
        source: "https://ai.google.dev/gemini-api/docs/structured-output#json-schema",
    },
    Rule {
        id: GEMINI_JSON_SCHEMA_KEYWORDS,
        text: "Gemini parametersJsonSchema supports type, title, description, enum, format, minimum, maximum, items, prefixItems, minItems, maxItems, properties, required, additionalProperties, anyOf, and $ref/$defs/$anchor resolved strictly within the schema. Other keywords (oneOf, const, minLength, maxLength, pattern, uniqueItems, exclusive bounds, multipleOf, default, examples) are left out.",
        source: GEMINI_DECLARATION,
    },
    Rule {
        id: ONE_OF_DISJOINT,
        text: "No strict dialect documents oneOf. It is written as anyOf only when its alternatives provably exclude each other (different JSON types, disjoint enum/const sets, or a required tag property with disjoint values), and never merged into an existing anyOf: the null alternative of an optional field wraps the node instead.",
        source: OPENAI_SUPPORTED,
    },
    Rule {
        id: UNION_RESHAPE,
        text: "An alternative of a union that is reshaped for the provider (a map sent as pairs, a value sent as JSON text, a number sent as text) may produce values another alternative also takes, such as an empty map and an empty array both sent as []: the decoder could not tell them apart, so those values cannot be sent and the union is reported as narrowed.",
        source: "tools-dialects: a consequence of the reshapings above, not a provider rule",
    },
    Rule {
        id: MAP_AS_PAIRS,
        text: "A map (additionalProperties with a schema) cannot be typed where additionalProperties must be false (strict OpenAI and Anthropic) or does not exist (Gemini parameters): it is sent as an array of {key, value} objects.",
        source: OPENAI_SUPPORTED,
    },
    Rule {
        id: ANY_AS_JSON_TEXT,
        text: "Strict OpenAI, strict Anthropic and Gemini parameters want a type on every node: a value of any type is sent as a string of JSON text.",
        source: OPENAI_SUPPORTED,
    },
    Rule {
        id: ANNOTATIONS,
        text: "Annotations other than title and description (and default for Gemini parameters, format where documented) are left out of provider schemas.",
        source: OPENAI_SUPPORTED,
    },
    Rule {
        id: OUTSIDE_SUBSET,
        text: "A catalog schema outside the toolkit's enforced subset is read by widening (tools_schema::Schema::from_json_lenient) before it is projected.",
        source: "tools-schema: subset.rs",
    },
    Rule {
        id: NAMES,
        text: "Function names: OpenAI and Anthropic ^[a-zA-Z0-9_-]{1,64}$; Gemini starts with a letter or underscore, at most 64 characters. The portable rule is ^[A-Za-z_][A-Za-z0-9_-]{0,63}$.",
        source: "https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools",
    },
];

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}
