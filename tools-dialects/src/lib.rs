//! Provider dialects of tool schemas.
//!
//! The registry holds one canonical schema per tool (the [`tools_schema`] subset). Every model
//! provider takes a different dialect of JSON Schema for tool definitions. This crate projects a
//! tool onto each of them, says what each projection lost or changed (a [`Finding`] per change,
//! with its path and the provider rule behind it), checks the providers' documented limits before
//! any request is made, and turns the model's arguments back into canonical arguments
//! ([`Decoder`]) so the tool body never sees a provider's shape.
//!
//! | [`Dialect`] | definition | schema rules |
//! | --- | --- | --- |
//! | `OpenAiChat { strict }` | `{"type": "function", "function": {name, description, parameters, strict}}` | strict: every property required (optional ones nullable), every object closed, supported keywords only, size limits |
//! | `OpenAiResponses { strict }` | `{"type": "function", name, description, parameters, strict}` | as Chat Completions |
//! | `Anthropic { strict }` | `{name, description, input_schema, strict?}` | strict: every object closed, no numeric or length bounds, `minItems` 0 or 1; per request at most 20 strict tools, 24 optional parameters, 16 unions |
//! | `GeminiParameters` | `{name, description, parameters}` | the OpenAPI 3.0 subset: no `additionalProperties`, `oneOf` or `const`, string enums only, `nullable` |
//! | `GeminiJsonSchema` | `{name, description, parametersJsonSchema}` | JSON Schema without `oneOf` and `const` |
//! | `Mcp` | `{name, description, inputSchema, outputSchema?}` (JSON Schema 2020-12) | none: the canonical schema as it is |
//!
//! Non-strict OpenAI and Anthropic send the canonical schema unchanged (`strict: false` is
//! always written for OpenAI). Every rule, with its source, is in [`rules::RULES`].
//!
//! # Findings and policy
//!
//! A [`Finding`] is `{path, rule, class}`: the JSON pointer (prefixed `#`) of the canonical
//! schema node, the id of the [rule](rules) and the [`Class`] of change. Findings of class
//! [`Class::Unrepresentable`] are what the [`Policy`] of a call decides about: fail, warn (keep
//! the best effort), or send that tool non-strict. A provider's size limits are always errors
//! ([`DialectError::Limit`]) naming the tool, the path and the limit.
//!
//! # Decoding
//!
//! A strict dialect reshapes some nodes: an optional property becomes required and nullable, a
//! map becomes an array of `{"key", "value"}` pairs, a value of any type becomes JSON text, a
//! Gemini number enum becomes strings. [`Decoder::decode`] undoes each, so
//! `decode(encode(v)) == v` for every canonical value `v` the projection can carry
//! ([`Decoder::encode`] says which it cannot).
//!
//! # Tool names
//!
//! [`names::NameMap`] projects names onto `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, reports
//! collisions, and maps the model's calls back; [`project_request`] uses it.
//!
//! # Example
//!
//! ```
//! use serde_json::json;
//! use tools_dialects::{Class, Dialect, Policy, project};
//! use tools_schema::ToolSchema;
//!
//! let tool = ToolSchema {
//!     name: "set_env".into(),
//!     description: "Set variables.".into(),
//!     input_schema: json!({
//!         "type": "object",
//!         "properties": {
//!             "vars": {"type": "object", "additionalProperties": {"type": "string"}},
//!             "scope": {"type": "string", "enum": ["user", "system"]}
//!         },
//!         "required": ["vars"],
//!         "additionalProperties": false
//!     }),
//!     output_schema: None,
//! };
//! let strict = project(&tool, Dialect::OpenAiChat { strict: true }, Policy::Error).unwrap();
//! assert_eq!(strict.definition["function"]["strict"], json!(true));
//! let params = &strict.definition["function"]["parameters"];
//! assert_eq!(params["required"], json!(["vars", "scope"]));
//! assert_eq!(params["properties"]["vars"]["type"], json!("array"));
//! assert!(strict.findings.iter().any(|f| f.class == Class::Reshaped && f.path == "#/properties/vars/additionalProperties"));
//!
//! // What the model sends, back to what the tool expects.
//! let sent = json!({"vars": [{"key": "PATH", "value": "/bin"}], "scope": null});
//! assert_eq!(strict.decoder.decode(sent).unwrap(), json!({"vars": {"PATH": "/bin"}}));
//! ```

#![warn(missing_docs)]

pub mod check;
pub mod names;
mod plan;
mod project;
pub mod rules;

use serde_json::{Map, Value, json};
use tools_schema::{Schema, ToolSchema, deep, excerpt};

pub use plan::{DecodeError, Decoder, EncodeError};

use project::{Target, Walk};

/// How deep, in JSON levels, a tool's input schema may nest before it is refused
/// ([`DialectError::TooDeep`]). Far past every provider's own nesting limit.
pub const MAX_SCHEMA_DEPTH: usize = 256;

/// A provider's dialect of tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dialect {
    /// OpenAI Chat Completions function tools.
    OpenAiChat {
        /// Structured Outputs (`strict: true`).
        strict: bool,
    },
    /// OpenAI Responses function tools.
    OpenAiResponses {
        /// Structured Outputs (`strict: true`).
        strict: bool,
    },
    /// Anthropic Messages tools (`input_schema`).
    Anthropic {
        /// Strict tool use (`strict: true`).
        strict: bool,
    },
    /// Gemini function declarations with `parameters` (its OpenAPI subset).
    GeminiParameters,
    /// Gemini function declarations with `parametersJsonSchema`.
    GeminiJsonSchema,
    /// MCP `tools/list` entries (JSON Schema 2020-12).
    Mcp,
}

impl Dialect {
    /// Every dialect, in a fixed order.
    pub const ALL: [Dialect; 9] = [
        Dialect::OpenAiChat { strict: true },
        Dialect::OpenAiChat { strict: false },
        Dialect::OpenAiResponses { strict: true },
        Dialect::OpenAiResponses { strict: false },
        Dialect::Anthropic { strict: true },
        Dialect::Anthropic { strict: false },
        Dialect::GeminiParameters,
        Dialect::GeminiJsonSchema,
        Dialect::Mcp,
    ];

    /// A short stable name: `openai-chat-strict`, `anthropic`, `gemini-parameters`, `mcp`, ...
    pub fn name(self) -> &'static str {
        match self {
            Dialect::OpenAiChat { strict: true } => "openai-chat-strict",
            Dialect::OpenAiChat { strict: false } => "openai-chat",
            Dialect::OpenAiResponses { strict: true } => "openai-responses-strict",
            Dialect::OpenAiResponses { strict: false } => "openai-responses",
            Dialect::Anthropic { strict: true } => "anthropic-strict",
            Dialect::Anthropic { strict: false } => "anthropic",
            Dialect::GeminiParameters => "gemini-parameters",
            Dialect::GeminiJsonSchema => "gemini-json-schema",
            Dialect::Mcp => "mcp",
        }
    }

    /// Whether this is a strict (grammar-constrained) dialect.
    pub fn is_strict(self) -> bool {
        matches!(
            self,
            Dialect::OpenAiChat { strict: true }
                | Dialect::OpenAiResponses { strict: true }
                | Dialect::Anthropic { strict: true }
        )
    }

    /// The same provider without strict mode (itself when it has none).
    pub fn non_strict(self) -> Dialect {
        match self {
            Dialect::OpenAiChat { .. } => Dialect::OpenAiChat { strict: false },
            Dialect::OpenAiResponses { .. } => Dialect::OpenAiResponses { strict: false },
            Dialect::Anthropic { .. } => Dialect::Anthropic { strict: false },
            other => other,
        }
    }

    fn target(self) -> Option<Target> {
        match self {
            Dialect::OpenAiChat { strict: true } | Dialect::OpenAiResponses { strict: true } => {
                Some(Target::OpenAiStrict)
            }
            Dialect::Anthropic { strict: true } => Some(Target::AnthropicStrict),
            Dialect::GeminiParameters => Some(Target::GeminiParameters),
            Dialect::GeminiJsonSchema => Some(Target::GeminiJsonSchema),
            _ => None,
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a projection did to one node of the canonical schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Written differently, same meaning (`oneOf` of disjoint alternatives as `anyOf`).
    Lossless,
    /// An annotation the dialect does not take was left out.
    AnnotationDropped,
    /// A constraint was left out: the provider accepts more than the tool does (the tool's own
    /// validation still refuses it).
    Widened,
    /// The provider accepts less than the tool does: some canonical values cannot be sent.
    Narrowed,
    /// A different shape the [`Decoder`] turns back (optional to nullable, map to pairs, ...).
    Reshaped,
    /// The dialect cannot say this; what is sent is a best effort. The [`Policy`] decides.
    Unrepresentable,
}

/// One change a projection made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// JSON pointer of the canonical schema node or keyword, prefixed with `#` (`#` is the
    /// root).
    pub path: String,
    /// The id of the provider rule ([`rules::RULES`]).
    pub rule: &'static str,
    /// What kind of change.
    pub class: Class,
    /// What was done, in words.
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let class = match self.class {
            Class::Lossless => "lossless",
            Class::AnnotationDropped => "annotation-dropped",
            Class::Widened => "widened",
            Class::Narrowed => "narrowed",
            Class::Reshaped => "reshaped",
            Class::Unrepresentable => "unrepresentable",
        };
        write!(
            f,
            "{} [{class}, {}]: {}",
            self.path, self.rule, self.message
        )
    }
}

/// What to do when a tool's schema has something a dialect cannot represent
/// ([`Class::Unrepresentable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Fail with [`DialectError::Unrepresentable`].
    #[default]
    Error,
    /// Send the best effort and keep the findings.
    Warn,
    /// Send this tool in the provider's non-strict dialect (strict dialects only; the others
    /// behave as [`Policy::Warn`]). Also used when a strict tool passes a provider limit.
    NonStrict,
}

/// A tool in one dialect.
#[derive(Debug, Clone)]
pub struct Projection {
    /// The dialect asked for.
    pub dialect: Dialect,
    /// The dialect sent: the non-strict one when the policy fell back.
    pub sent: Dialect,
    /// The tool definition to put in the request.
    pub definition: Value,
    /// What the projection changed, in schema order. After a fallback, the strict attempt's
    /// findings are kept, so it is clear why.
    pub findings: Vec<Finding>,
    /// Turns the model's arguments back into canonical ones.
    pub decoder: Decoder,
}

/// Why a tool cannot be sent in a dialect.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DialectError {
    /// The input schema nests deeper than [`MAX_SCHEMA_DEPTH`].
    #[error("tool {tool}: the input schema nests deeper than {limit} levels")]
    TooDeep {
        /// The tool, quoted.
        tool: String,
        /// The limit.
        limit: usize,
    },
    /// Something the dialect cannot represent, under [`Policy::Error`].
    #[error("tool {tool}: {dialect} cannot represent {path} ({rule}): {message}")]
    Unrepresentable {
        /// The tool, quoted.
        tool: String,
        /// The dialect.
        dialect: Dialect,
        /// The canonical schema path.
        path: String,
        /// The rule id.
        rule: &'static str,
        /// What cannot be said.
        message: String,
    },
    /// A provider's documented limit is passed.
    #[error("tool {tool}: {dialect} allows {limit}; {path} makes it {found}")]
    Limit {
        /// The tool, quoted.
        tool: String,
        /// The dialect.
        dialect: Dialect,
        /// Where the limit is passed (a path in the projected schema).
        path: String,
        /// The limit, in words.
        limit: String,
        /// The count or size reached.
        found: usize,
    },
    /// Two tools project to the same name.
    #[error(transparent)]
    Names(#[from] names::NameCollision),
}

impl DialectError {
    /// The stable error code: `SCHEMA_TOO_DEEP`, `UNREPRESENTABLE`, `PROVIDER_LIMIT` or
    /// `NAME_COLLISION`.
    pub fn code(&self) -> &'static str {
        match self {
            DialectError::TooDeep { .. } => "SCHEMA_TOO_DEEP",
            DialectError::Unrepresentable { .. } => "UNREPRESENTABLE",
            DialectError::Limit { .. } => "PROVIDER_LIMIT",
            DialectError::Names(e) => e.code(),
        }
    }
}

/// The canonical input schema of a tool (`null` is a tool without arguments).
fn input_of(tool: &ToolSchema) -> Value {
    match &tool.input_schema {
        Value::Null => tools_schema::no_arguments(),
        other => deep::clone_value(other),
    }
}

/// Projects one tool onto `dialect` under `policy`, with the tool's own name.
///
/// # Errors
///
/// [`DialectError::TooDeep`], [`DialectError::Unrepresentable`] under [`Policy::Error`], and
/// [`DialectError::Limit`] when a strict schema passes a provider's size limits (under
/// [`Policy::NonStrict`] the tool is sent non-strict instead).
pub fn project(
    tool: &ToolSchema,
    dialect: Dialect,
    policy: Policy,
) -> Result<Projection, DialectError> {
    project_named(tool, &tool.name, dialect, policy)
}

fn project_named(
    tool: &ToolSchema,
    name: &str,
    dialect: Dialect,
    policy: Policy,
) -> Result<Projection, DialectError> {
    let input = input_of(tool);
    if deep::deeper_than(&input, MAX_SCHEMA_DEPTH) {
        deep::drop_value(input);
        return Err(DialectError::TooDeep {
            tool: excerpt::quoted(&tool.name),
            limit: MAX_SCHEMA_DEPTH,
        });
    }
    let Some(target) = dialect.target() else {
        let (input, findings) = plain_root(input);
        if let Some(first) = findings.iter().find(|f| f.class == Class::Unrepresentable)
            && policy == Policy::Error
        {
            return Err(DialectError::Unrepresentable {
                tool: excerpt::quoted(&tool.name),
                dialect,
                path: first.path.clone(),
                rule: first.rule,
                message: first.message.clone(),
            });
        }
        let definition = envelope(dialect, name, tool, input);
        return Ok(Projection {
            dialect,
            sent: dialect,
            definition,
            findings,
            decoder: Decoder::identity(),
        });
    };
    let (schema, errors) = Schema::from_json_lenient(&input);
    deep::drop_value(input);
    let mut walk = Walk::new(target);
    for error in errors.map(|e| e.into_vec()).unwrap_or_default() {
        walk_outside_subset(&mut walk, error);
    }
    let (parameters, plan) = walk.root(&schema);
    deep::drop_schema(schema);
    let findings = std::mem::take(&mut walk.findings);
    let fall_back = |findings: Vec<Finding>| -> Result<Projection, DialectError> {
        let mut projection = project_named(tool, name, dialect.non_strict(), policy)?;
        projection.dialect = dialect;
        let mut all = findings;
        all.append(&mut projection.findings);
        projection.findings = all;
        Ok(projection)
    };
    if let Some(first) = findings.iter().find(|f| f.class == Class::Unrepresentable) {
        match policy {
            Policy::Error => {
                return Err(DialectError::Unrepresentable {
                    tool: excerpt::quoted(&tool.name),
                    dialect,
                    path: first.path.clone(),
                    rule: first.rule,
                    message: first.message.clone(),
                });
            }
            Policy::NonStrict if dialect.is_strict() => return fall_back(findings),
            _ => {}
        }
    }
    if let Some(violation) = check::schema_limits(dialect, &parameters)
        .into_iter()
        .next()
    {
        if policy == Policy::NonStrict && dialect.is_strict() {
            return fall_back(findings);
        }
        return Err(DialectError::Limit {
            tool: excerpt::quoted(&tool.name),
            dialect,
            path: violation.path,
            limit: violation.limit,
            found: violation.found,
        });
    }
    Ok(Projection {
        dialect,
        sent: dialect,
        definition: envelope(dialect, name, tool, parameters),
        findings,
        decoder: Decoder::new(plan),
    })
}

/// The canonical schema as the non-strict dialects send it: as it is, with `type: object` added
/// to a root that constrains nothing (every provider wants an object root and sends objects).
fn plain_root(mut input: Value) -> (Value, Vec<Finding>) {
    if input.get("type") == Some(&json!("object")) {
        return (input, Vec::new());
    }
    let (schema, _) = Schema::from_json_lenient(&input);
    let any = matches!(schema.kind, tools_schema::SchemaKind::Any);
    deep::drop_schema(schema);
    let finding = |class, message: &str| Finding {
        path: "#".into(),
        rule: rules::ROOT_OBJECT,
        class,
        message: message.into(),
    };
    match &mut input {
        Value::Object(map) if any => {
            map.insert("type".into(), json!("object"));
            let f = finding(
                Class::Narrowed,
                "parameters of any type are sent as an object, the only arguments providers send",
            );
            (input, vec![f])
        }
        _ => {
            let f = finding(
                Class::Unrepresentable,
                "the provider wants an object at the root of a tool's parameters",
            );
            (input, vec![f])
        }
    }
}

fn walk_outside_subset(walk: &mut Walk, error: tools_schema::SubsetError) {
    walk.findings.push(Finding {
        path: format!("#{}", error.pointer),
        rule: rules::OUTSIDE_SUBSET,
        class: Class::Widened,
        message: error.message,
    });
}

/// The definition object of `dialect` around projected parameters.
fn envelope(dialect: Dialect, name: &str, tool: &ToolSchema, parameters: Value) -> Value {
    let mut out = Map::new();
    let description = (!tool.description.is_empty()).then(|| json!(tool.description));
    match dialect {
        Dialect::OpenAiChat { strict } => {
            let mut function = Map::new();
            function.insert("name".into(), json!(name));
            if let Some(d) = description {
                function.insert("description".into(), d);
            }
            function.insert("parameters".into(), parameters);
            function.insert("strict".into(), json!(strict));
            out.insert("type".into(), json!("function"));
            out.insert("function".into(), Value::Object(function));
        }
        Dialect::OpenAiResponses { strict } => {
            out.insert("type".into(), json!("function"));
            out.insert("name".into(), json!(name));
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            out.insert("parameters".into(), parameters);
            out.insert("strict".into(), json!(strict));
        }
        Dialect::Anthropic { strict } => {
            out.insert("name".into(), json!(name));
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            out.insert("input_schema".into(), parameters);
            if strict {
                out.insert("strict".into(), json!(true));
            }
        }
        Dialect::GeminiParameters | Dialect::GeminiJsonSchema => {
            out.insert("name".into(), json!(name));
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            let key = if dialect == Dialect::GeminiParameters {
                "parameters"
            } else {
                "parametersJsonSchema"
            };
            out.insert(key.into(), parameters);
        }
        Dialect::Mcp => {
            out.insert("name".into(), json!(name));
            if let Some(d) = description {
                out.insert("description".into(), d);
            }
            out.insert("inputSchema".into(), parameters);
            if let Some(output) = &tool.output_schema {
                out.insert("outputSchema".into(), deep::clone_value(output));
            }
        }
    }
    Value::Object(out)
}

/// The parameters schema inside a definition of `dialect`.
pub fn parameters_of(dialect: Dialect, definition: &Value) -> Option<&Value> {
    match dialect {
        Dialect::OpenAiChat { .. } => definition.get("function")?.get("parameters"),
        Dialect::OpenAiResponses { .. } => definition.get("parameters"),
        Dialect::Anthropic { .. } => definition.get("input_schema"),
        Dialect::GeminiParameters => definition.get("parameters"),
        Dialect::GeminiJsonSchema => definition.get("parametersJsonSchema"),
        Dialect::Mcp => definition.get("inputSchema"),
    }
}

/// Every tool of a request in one dialect, under portable names.
#[derive(Debug, Clone)]
pub struct Request {
    /// The projections, in the order of the tools given.
    pub tools: Vec<Projection>,
    /// The sent names and their originals.
    pub names: names::NameMap,
}

/// Why a model's call cannot be mapped back to a tool call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The model called a name no tool of the request was sent under.
    #[error("the model called {0}, which is not a tool of this request")]
    UnknownName(String),
    /// The arguments do not have the provider shape.
    #[error("tool {tool}: {error}")]
    Arguments {
        /// The tool's original name, quoted.
        tool: String,
        /// What is wrong.
        error: DecodeError,
    },
}

impl CallError {
    /// The stable error code: `UNKNOWN_TOOL` or `INVALID_PROVIDER_ARGS`.
    pub fn code(&self) -> &'static str {
        match self {
            CallError::UnknownName(_) => "UNKNOWN_TOOL",
            CallError::Arguments { error, .. } => error.code(),
        }
    }
}

impl Request {
    /// The original tool name and canonical arguments of a call the model made with a sent
    /// name and provider-shaped arguments.
    ///
    /// # Errors
    ///
    /// [`CallError::UnknownName`] for a name that was not sent; [`CallError::Arguments`] when
    /// the arguments cannot be decoded.
    pub fn decode_call(
        &self,
        sent_name: &str,
        arguments: Value,
    ) -> Result<(String, Value), CallError> {
        let Some(original) = self.names.original(sent_name) else {
            return Err(CallError::UnknownName(excerpt::quoted(sent_name)));
        };
        let Some(index) = self.names.index(sent_name) else {
            return Err(CallError::UnknownName(excerpt::quoted(sent_name)));
        };
        let Some(projection) = self.tools.get(index) else {
            return Err(CallError::UnknownName(excerpt::quoted(sent_name)));
        };
        let value = projection
            .decoder
            .decode(arguments)
            .map_err(|error| CallError::Arguments {
                tool: excerpt::quoted(original),
                error,
            })?;
        Ok((original.to_owned(), value))
    }
}

/// Projects every tool of a request onto `dialect`: names onto the portable rule (collisions
/// are an error), each schema under `policy`, and the per-request limits of strict Anthropic
/// (20 strict tools, 24 optional parameters, 16 unions), checked in tool order; under
/// [`Policy::NonStrict`] the tool that would pass a limit is sent non-strict instead.
///
/// # Errors
///
/// A name collision, or any error of [`project`], or a per-request limit passed.
pub fn project_request(
    tools: &[ToolSchema],
    dialect: Dialect,
    policy: Policy,
) -> Result<Request, DialectError> {
    let names = names::NameMap::new(tools.iter().map(|t| t.name.as_str()))?;
    let mut projections = Vec::with_capacity(tools.len());
    let mut totals = check::RequestTotals::default();
    for (tool, sent) in tools.iter().zip(names.sent_names()) {
        let mut projection = project_named(tool, sent, dialect, policy)?;
        if projection.sent == (Dialect::Anthropic { strict: true }) {
            let parameters = parameters_of(projection.sent, &projection.definition);
            let counts = parameters.map(check::anthropic_counts).unwrap_or_default();
            if let Some(violation) = totals.add(&counts) {
                if policy == Policy::NonStrict {
                    let findings = std::mem::take(&mut projection.findings);
                    projection = project_named(tool, sent, dialect.non_strict(), policy)?;
                    projection.dialect = dialect;
                    let mut all = findings;
                    all.append(&mut projection.findings);
                    projection.findings = all;
                } else {
                    return Err(DialectError::Limit {
                        tool: excerpt::quoted(&tool.name),
                        dialect,
                        path: violation.path,
                        limit: violation.limit,
                        found: violation.found,
                    });
                }
            }
        }
        projections.push(projection);
    }
    Ok(Request {
        tools: projections,
        names,
    })
}
