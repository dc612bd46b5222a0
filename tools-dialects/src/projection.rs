//! One tool in one dialect: [`project`] under a [`Policy`], its [`Projection`] and its
//! [`DialectError`]s.
//!
//! For the strict and Gemini dialects [`project`] runs the walk of the `project` module, applies
//! the policy to what the walk could not represent and refuses a schema past a provider's size
//! limits ([`check::schema_limits`]); every dialect's parameters are then wrapped in its
//! definition object (the `envelope` module).

use serde_json::{Value, json};
use tools_schema::{CatalogEntry, Schema, deep, excerpt};

use crate::check;
use crate::dialect::Dialect;
use crate::envelope::envelope;
use crate::finding::{Class, Finding};
use crate::names;
use crate::plan::Decoder;
use crate::project::Walk;
use crate::rules;

/// How deep, in JSON levels, a tool's input schema may nest before it is refused
/// ([`DialectError::TooDeep`]). Far past every provider's own nesting limit.
pub const MAX_SCHEMA_DEPTH: usize = 256;

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

    /// `tool` cannot be sent in `dialect` because of the finding `first`.
    fn unrepresentable(tool: &CatalogEntry, dialect: Dialect, first: &Finding) -> DialectError {
        DialectError::Unrepresentable {
            tool: excerpt::quoted(&tool.name),
            dialect,
            path: first.path.clone(),
            rule: first.rule,
            message: first.message.clone(),
        }
    }

    /// `tool` passes a limit of `dialect`.
    pub(crate) fn limit(
        tool: &CatalogEntry,
        dialect: Dialect,
        violation: check::LimitViolation,
    ) -> DialectError {
        DialectError::Limit {
            tool: excerpt::quoted(&tool.name),
            dialect,
            path: violation.path,
            limit: violation.limit,
            found: violation.found,
        }
    }
}

/// The canonical input schema of a tool (`null` is a tool without arguments).
fn input_of(tool: &CatalogEntry) -> Value {
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
    tool: &CatalogEntry,
    dialect: Dialect,
    policy: Policy,
) -> Result<Projection, DialectError> {
    project_named(tool, &tool.name, dialect, policy)
}

pub(crate) fn project_named(
    tool: &CatalogEntry,
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
            return Err(DialectError::unrepresentable(tool, dialect, first));
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
    if let Some(first) = findings.iter().find(|f| f.class == Class::Unrepresentable) {
        match policy {
            Policy::Error => {
                return Err(DialectError::unrepresentable(tool, dialect, first));
            }
            Policy::NonStrict if dialect.is_strict() => {
                return fall_back(tool, name, dialect, policy, findings);
            }
            _ => {}
        }
    }
    if let Some(violation) = check::schema_limits(dialect, &parameters)
        .into_iter()
        .next()
    {
        if policy == Policy::NonStrict && dialect.is_strict() {
            return fall_back(tool, name, dialect, policy, findings);
        }
        return Err(DialectError::limit(tool, dialect, violation));
    }
    Ok(Projection {
        dialect,
        sent: dialect,
        definition: envelope(dialect, name, tool, parameters),
        findings,
        decoder: Decoder::new(plan),
    })
}

/// `tool` projected in the non-strict form of `dialect`, as the policy's fall-back: the
/// projection still names `dialect` as asked for, and keeps the strict attempt's `findings`
/// ahead of its own, so it is clear why.
pub(crate) fn fall_back(
    tool: &CatalogEntry,
    name: &str,
    dialect: Dialect,
    policy: Policy,
    findings: Vec<Finding>,
) -> Result<Projection, DialectError> {
    let mut projection = project_named(tool, name, dialect.non_strict(), policy)?;
    projection.dialect = dialect;
    let mut all = findings;
    all.append(&mut projection.findings);
    projection.findings = all;
    Ok(projection)
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
