//! Support for the code the macros generate. Not public API: names here may change in any
//! release. The generated code names only paths under `::tools_runtime::__private`, so a user
//! depends on `tools-runtime` alone.

use std::sync::Arc;

use serde_json::Value;

pub use core::option::Option::{self, None, Some};
pub use core::result::Result::{self, Err, Ok};
pub use serde;
pub use serde_json;
pub use std::time::Duration;
pub use tools_schema::typed::{ToolSchema, nullable};
pub use tools_schema::{
    AdditionalProperties, Annotations, Schema, SchemaKind, StringSchema, ToolAnnotations,
};

pub use crate::call::content::ContentBlock;
pub use crate::call::result::ToolExecutionResult;
pub use crate::call::result::codes;
pub use crate::errors::{DefinitionError, ToolError, ToolFailure};
pub use crate::execution::ToolExecution;
pub use crate::runtime::cards::{CallView, ResultRecord, ResultView};
pub use crate::runtime::context::ToolRunContext;
pub use crate::runtime::definition::{Callers, Output, ToolDefinition};

/// The type generated code implements [`ToolParts`] and [`DerivedSchemas`] for. rustc
/// compiles a method together with the module of its `Self` type, so code generated this way
/// is compiled apart from the user's module: editing one tool body then leaves it to be reused
/// as it is.
#[derive(Debug, Clone, Copy)]
pub struct Anchor;

/// The schema builders of a type with `#[derive(ToolSchema)]`, implemented for [`Anchor`] with
/// the type as `T` (so they are compiled with this module; see [`Anchor`]).
pub trait DerivedSchemas<T: ?Sized> {
    /// The input (deserialize-side) schema.
    fn input() -> Schema;
    /// The output (serialize-side) schema; the input schema unless the two differ.
    fn output() -> Schema {
        Self::input()
    }
}

/// The parts of a free `#[tool]` function that do not depend on its body, implemented for
/// [`Anchor`] with the function's definition holder as `T` (so they are compiled with this
/// module; see [`Anchor`]).
pub trait ToolParts<T: ?Sized> {
    /// The function's return type.
    type Ret;
    /// The tool's definition.
    fn definition() -> Result<ToolDefinition, DefinitionError>;
    /// The tool's body: reads the parameters from the call's arguments and context, then calls
    /// the function. A synchronous function runs here; an async function's future is returned,
    /// converting its result when it completes.
    fn start(args: Arc<Value>, ctx: ToolRunContext) -> BoxBody;
    /// Turns the function's result into the canonical value or a failure.
    fn convert(ret: Self::Ret) -> Result<Value, ToolError>;
}

pub mod later;
mod schema;
mod tools;

pub use schema::*;
pub use tools::*;
