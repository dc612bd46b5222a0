//! Every tool of a request in one dialect: [`project_request`], its [`Request`] and the way back
//! from a model's call ([`Request::decode_call`]).

use serde_json::Value;
use tools_schema::{CatalogEntry, excerpt};

use crate::check;
use crate::dialect::Dialect;
use crate::envelope::parameters_of;
use crate::names;
use crate::plan::DecodeError;
use crate::projection::{DialectError, Policy, Projection, fall_back, project_named};

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
/// A name collision, or any error of [`project`](fn@crate::project), or a per-request limit passed.
pub fn project_request(
    tools: &[CatalogEntry],
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
                    projection = fall_back(tool, sent, dialect, policy, findings)?;
                } else {
                    return Err(DialectError::limit(tool, dialect, violation));
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
