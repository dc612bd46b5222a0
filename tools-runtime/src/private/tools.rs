//! Tool definitions for `#[tool]` and `#[tools]`: reading arguments, injecting `#[context]`
//! parameters, converting results and errors, boxing bodies.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use tools_schema::Schema;

use super::schema::ObjectBuilder;
use super::{Output, ToolDefinition, ToolError, ToolFailure, ToolRunContext, codes};

/// The `Ok` type of a tool function's `Result` return type.
#[diagnostic::on_unimplemented(
    message = "the return type `{Self}` is spelled `Result` but is not `std::result::Result`",
    note = "`#[tool]` reads a return type spelled `Result<..>` as success or failure; return `std::result::Result<T, E>` (or an alias of it named `Result`)"
)]
pub trait ToolResult {
    /// The success type, whose output schema the tool declares.
    type Ok;
}

impl<T, E> ToolResult for Result<T, E> {
    type Ok = T;
}

/// An argument value the runtime can inject into a tool function parameter marked `#[context]`.
///
/// Implemented for [`ToolRunContext`], [`CancellationToken`] and `Arc<T>` (shared state installed
/// in the runtime). Implement it for your own extractor types.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected into a `#[context]` parameter: it does not implement `FromRunContext`",
    label = "not injectable",
    note = "injectable types are `ToolRunContext`, `CancellationToken` and `Arc<T>` (shared state installed in the runtime); implement `tools_runtime::FromRunContext` for your own",
    note = "a parameter the model fills in is written without `#[context]`"
)]
pub trait FromRunContext: Sized {
    /// Extracts the value from the call's run context.
    fn from_run_context(context: &ToolRunContext) -> Result<Self, ToolError>;
}

impl FromRunContext for ToolRunContext {
    fn from_run_context(context: &ToolRunContext) -> Result<Self, ToolError> {
        Ok(context.clone())
    }
}

impl FromRunContext for CancellationToken {
    fn from_run_context(context: &ToolRunContext) -> Result<Self, ToolError> {
        Ok(context.cancellation().clone())
    }
}

impl<T: Any + Send + Sync> FromRunContext for Arc<T> {
    fn from_run_context(context: &ToolRunContext) -> Result<Self, ToolError> {
        context.state::<T>().ok_or_else(|| {
            ToolError::new(format!(
                "the shared state `{}` this tool needs is not installed in the runtime",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// Reads the argument `name` from the call's arguments: a missing argument is read as `null`
/// when its type accepts that (an `Option` is then `None`); any other missing or ill-typed
/// argument is an `INVALID_ARGS` failure. (The arguments were validated against the input
/// schema first, so a required argument is never missing here.) Only `DeserializeOwned` is
/// required: the parameter's `ToolSchema` is demanded once, by the input schema, so a type
/// without it is reported once.
pub fn arg<T: DeserializeOwned>(args: &Value, name: &str) -> Result<T, ToolError> {
    // Thin generic shell over non-generic error handling: many tools share one body.
    match args.get(name) {
        Some(value) => match T::deserialize(value) {
            Ok(v) => Ok(v),
            Err(e) => Err(invalid_argument(name, &e)),
        },
        None => match T::deserialize(&Value::Null) {
            Ok(v) => Ok(v),
            Err(_) => Err(missing_argument(name)),
        },
    }
}

fn missing_argument(name: &str) -> ToolError {
    ToolError::with_code(
        codes::INVALID_ARGS,
        format!("missing required argument `{name}`"),
    )
}

fn invalid_argument(name: &str, error: &serde_json::Error) -> ToolError {
    ToolError::with_code(codes::INVALID_ARGS, format!("argument `{name}`: {error}"))
}

/// Reads the argument for a concurrency classifier: `None` when it does not deserialize (the
/// call is then classified exclusive).
pub fn classify_arg<T: DeserializeOwned>(args: &Value, name: &str) -> Option<T> {
    arg(args, name).ok()
}

/// Turns a tool function's success value into the canonical JSON value.
pub fn ok_value<T: serde::Serialize + ?Sized>(value: &T) -> Result<Value, ToolError> {
    match serde_json::to_value(value) {
        Ok(v) => Ok(v),
        Err(e) => Err(unserializable_output(&e)),
    }
}

fn unserializable_output(error: &serde_json::Error) -> ToolError {
    ToolError::new(format!(
        "the tool's output could not be serialized: {error}"
    ))
}

/// Requires the body future to be `Send`: the runtime may move a call between threads.
pub fn require_send<F: Future + Send>(future: F) -> F {
    future
}

/// The boxed future a generated tool body returns.
pub type BoxBody = futures::future::BoxFuture<'static, Result<Value, ToolError>>;

/// The body signature of a free `#[tool]` function: a plain function, so every tool shares
/// one conversion into the runtime's body type (no generic instantiation per tool).
pub type BodyPtr = fn(Arc<Value>, ToolRunContext) -> BoxBody;

/// The definition builder of a free `#[tool]` function: name, description, input schema,
/// output and body in one non-generic call (the attribute's other keys are added to it).
pub fn free_tool(
    name: &str,
    description: &str,
    input: Schema,
    output: Output,
    body: BodyPtr,
) -> crate::runtime::definition::ToolDefinitionBuilder {
    ToolDefinition::builder(name)
        .description(description)
        .input_schema(input)
        .output(output)
        .execute_boxed(Arc::new(body))
}

/// A settled body: the result of a synchronous tool function.
pub fn ready(result: Result<Value, ToolError>) -> BoxBody {
    Box::pin(std::future::ready(result))
}

/// A body that fails at once (an argument could not be read).
pub fn failed(error: ToolError) -> BoxBody {
    ready(Err(error))
}

/// Wraps a tool function's error for conversion into a [`ToolError`]: a `ToolError` is kept, a
/// [`ToolFailure`] keeps its own code, anything else [`Display`](fmt::Display)able becomes
/// `TOOL_FAILED` with its text. Call as `(&&&ErrorWrap(e)).into_tool_error()`.
#[derive(Debug)]
pub struct ErrorWrap<E>(pub E);

/// Conversion of a [`ToolError`] (highest priority).
pub trait KeepToolError {
    /// The error as a [`ToolError`].
    fn into_tool_error(self) -> ToolError;
}
impl KeepToolError for &&&ErrorWrap<ToolError> {
    fn into_tool_error(self) -> ToolError {
        self.0.clone()
    }
}

/// Conversion of a [`ToolFailure`].
pub trait ViaToolFailure {
    /// The error as a [`ToolError`] with its own code.
    fn into_tool_error(self) -> ToolError;
}
impl<E: ToolFailure> ViaToolFailure for &&ErrorWrap<E> {
    fn into_tool_error(self) -> ToolError {
        ToolError::from_failure(&self.0)
    }
}

/// Conversion of any displayable error (lowest priority).
#[diagnostic::on_unimplemented(
    message = "the error type `{Self}` of a tool function must implement `Display`",
    note = "the model reads the error's `Display` text; implement `Display` (e.g. with `thiserror`) or return `ToolError`"
)]
pub trait ViaDisplay {
    /// The error as a [`ToolError`] with code `TOOL_FAILED`.
    fn into_tool_error(self) -> ToolError;
}
impl<E: fmt::Display> ViaDisplay for &ErrorWrap<E> {
    fn into_tool_error(self) -> ToolError {
        ToolError::from_display(&self.0)
    }
}

/// A concurrency classifier that always answers `true` (the `concurrency_safe` flag).
pub fn always_concurrency_safe(_args: &Value) -> bool {
    true
}

/// The tool input root: an open object (the implicit parameter object is open).
pub fn parameters() -> ObjectBuilder {
    ObjectBuilder::new(false)
}
