//! The seam a registry-owned capability plugs into when the runtime is built: Code Mode
//! (`tools-code`) and any other tool the registry itself owns.
//!
//! An [`Extension`] is installed with
//! [`ToolRuntimeBuilder::extension`](crate::presentation::ToolRuntimeBuilder::extension). When the runtime
//! is built it is asked once for its [`Installation`]:
//!
//! - **owned tools** ([`OwnedTool`]): definitions under the registry's reserved names
//!   ([`RESERVED_NAMES`](crate::definition::RESERVED_NAMES)), offered where a scope's presentation mode
//!   says. No scope can register, reserve or mask those names. The body of an owned tool may
//!   run programs whose calls carry a [`ProgramOrigin`](crate::ProgramOrigin)
//!   ([`ToolRunContext::program_origin`](crate::ToolRunContext::program_origin)), which the
//!   registry's admission rules read;
//! - **a presenter** ([`Presenter`]): what the extension adds to a scope's
//!   [`Assembly`](crate::presentation::Assembly) (its tool definitions and prompt sections).
//!
//! The admission rules over a call's facts (its origin, the scope's mode, the tool's
//! [`Callers`](crate::Callers)) are the registry's own: they are written over the core's
//! vocabulary and hold whether or not an extension is installed (see `ARCHITECTURE.md`).
//!
//! ```
//! use serde_json::json;
//! use tools_runtime::extension::{Extension, Installation, OwnedTool};
//! use tools_runtime::error::BuildError;
//! use tools_runtime::{Output, ToolCall, ToolDefinition, ToolRuntime};
//!
//! /// Owns `describe_tools`, offered to every scope, answering with the names it sees.
//! #[derive(Debug)]
//! struct Names;
//!
//! impl Extension for Names {
//!     fn name(&self) -> &'static str {
//!         "names"
//!     }
//!     fn install(self: Box<Self>) -> Result<Installation, BuildError> {
//!         let def = ToolDefinition::builder("describe_tools")
//!             .description("List the tools.")
//!             .input_schema(json!({"type": "object"}))
//!             .output(Output::json(json!({"type": "array", "items": {"type": "string"}})))
//!             .execute(|_args, ctx| async move {
//!                 let scope = ctx.agent().unwrap_or(tools_runtime::ScopeKey::GLOBAL);
//!                 Ok(json!(ctx.runtime().visible_names(scope)))
//!             })
//!             .build()
//!             .map_err(|e| BuildError::extension("names", e))?;
//!         Ok(Installation::new().tool(OwnedTool::new(def, |_mode| true)))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let runtime = ToolRuntime::builder().extension(Names).build().unwrap();
//! let result = runtime.execute(ToolCall::new("c1", "describe_tools", json!({}))).await;
//! assert_eq!(result.value(), Some(&json!([])));
//! # }
//! ```

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use crate::call::progress::ProgressError;
use crate::mode::PresentationMode;
use crate::runtime::definition::ToolDefinition;
use crate::runtime::handle::Presenter;

/// A registry-owned capability, installed when the runtime is built (see the
/// [module](crate::extension)).
pub trait Extension: Send + 'static {
    /// A short name for messages (`code-mode`).
    fn name(&self) -> &'static str;

    /// Checks the extension's settings and gives what it installs. Called once, by
    /// [`ToolRuntimeBuilder::build`](crate::presentation::ToolRuntimeBuilder::build), which fails with the
    /// error returned here.
    fn install(self: Box<Self>) -> Result<Installation, BuildError>;
}

/// What an [`Extension`] installs: its owned tools and its presenter.
#[derive(Default)]
pub struct Installation {
    pub(crate) tools: Vec<OwnedTool>,
    pub(crate) presenter: Option<Arc<dyn Presenter>>,
}

impl Installation {
    /// Nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an owned tool.
    #[must_use]
    pub fn tool(mut self, tool: OwnedTool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Sets the presenter (shared: an owned tool's body may read the presenter's views, as
    /// Code Mode's `describe_tools` reads the SDK it rendered).
    #[must_use]
    pub fn presenter(mut self, presenter: Arc<dyn Presenter>) -> Self {
        self.presenter = Some(presenter);
        self
    }
}

impl fmt::Debug for Installation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Installation")
            .field("tools", &self.tools)
            .field("presenter", &self.presenter)
            .finish()
    }
}

/// A definition the registry owns, under one of its reserved names, and the presentation modes
/// whose scopes it is offered to.
#[derive(Clone)]
pub struct OwnedTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) offered: fn(PresentationMode) -> bool,
}

impl OwnedTool {
    /// `definition`, resolved for a scope whose mode passes `offered` (Code Mode's tools:
    /// [`PresentationMode::offers_code`]).
    pub fn new(definition: ToolDefinition, offered: fn(PresentationMode) -> bool) -> Self {
        OwnedTool {
            definition,
            offered,
        }
    }

    /// The definition.
    pub fn definition(&self) -> &ToolDefinition {
        &self.definition
    }
}

impl fmt::Debug for OwnedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedTool")
            .field("name", &self.definition.name())
            .finish_non_exhaustive()
    }
}

/// Why a runtime could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// An extension refused its settings.
    #[error("the {extension} extension refused its settings ({code})")]
    Extension {
        /// The extension's name.
        extension: &'static str,
        /// The stable code of the refusal.
        code: &'static str,
        /// What was refused.
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
    /// An extension owns a name the registry does not reserve.
    #[error(
        "the {extension} extension owns a tool named `{name}`, which is not one of the \
         registry's reserved names ({})", crate::runtime::definition::RESERVED_NAMES.join(", ")
    )]
    NotReserved {
        /// The extension's name.
        extension: &'static str,
        /// The tool's name.
        name: String,
    },
    /// Two owned tools have the same name.
    #[error("the {extension} extension owns `{name}`, which another extension already owns")]
    Duplicate {
        /// The extension's name.
        extension: &'static str,
        /// The tool's name.
        name: String,
    },
}

/// An error with a stable code, as [`BuildError::extension`] keeps it.
pub trait Coded: Error + Send + Sync + 'static {
    /// The stable code.
    fn code(&self) -> &'static str;
}

impl Coded for crate::errors::DefinitionError {
    fn code(&self) -> &'static str {
        crate::errors::DefinitionError::code(self)
    }
}

impl Coded for ProgressError {
    fn code(&self) -> &'static str {
        ProgressError::code(self)
    }
}

impl BuildError {
    /// The refusal of `extension`, with `error`'s code.
    pub fn extension(extension: &'static str, error: impl Coded) -> Self {
        BuildError::Extension {
            extension,
            code: error.code(),
            source: Box::new(error),
        }
    }

    /// The stable code: the extension's own, `NOT_RESERVED` or `DUPLICATE_OWNED_TOOL`.
    pub fn code(&self) -> &'static str {
        match self {
            BuildError::Extension { code, .. } => code,
            BuildError::NotReserved { .. } => "NOT_RESERVED",
            BuildError::Duplicate { .. } => "DUPLICATE_OWNED_TOOL",
        }
    }

    /// The extension's own error, when it is of type `E`.
    pub fn downcast_ref<E: Error + 'static>(&self) -> Option<&E> {
        match self {
            BuildError::Extension { source, .. } => source.downcast_ref::<E>(),
            _ => None,
        }
    }
}
