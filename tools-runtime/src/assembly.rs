//! What prompt assembly produces: an [`Assembly`] of tool definitions and [`PromptSection`]s,
//! and why one could not be made ([`AssemblyError`]). The presentation room builds it; an
//! installed [`Presenter`](crate::extension::Presenter) adds to it.

use std::sync::Arc;

use tools_schema::catalog::CatalogEntry;

use crate::call::tool_call::ScopeKey;
use crate::mode::PresentationMode;

/// One section of the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSection {
    /// A stable id, such as `tools:sdk`.
    pub id: String,
    /// Sections are laid out by ascending order (ties by id).
    pub order: i32,
    /// The text.
    pub text: Arc<str>,
}

/// What a scope contributes to a model request: tool definitions and prompt sections.
#[derive(Debug, Clone, PartialEq)]
pub struct Assembly {
    /// The mode the scope uses.
    pub mode: PresentationMode,
    /// The tool definitions, in order: `tool_order`'s names first, then the rest by name.
    pub tools: Vec<Arc<CatalogEntry>>,
    /// The prompt sections, by ascending order.
    pub sections: Vec<PromptSection>,
}

impl Assembly {
    /// The names of the tool definitions, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// The section with this id.
    pub fn section(&self, id: &str) -> Option<&PromptSection> {
        self.sections.iter().find(|s| s.id == id)
    }
}

/// Options of one assembly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssembleOptions {
    /// Tool names to put first, in this order. Naming a tool the mode does not contribute
    /// rejects the assembly; a reserved name without a definition yet is allowed and skipped.
    pub tool_order: Vec<String>,
}

/// Why a scope could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssemblyError {
    /// The scope has been disposed.
    #[error("the scope has been disposed")]
    ScopeDisposed,
    /// The mode offers Code Mode, but the runtime has no code runtime.
    #[error(
        "the scope's presentation mode is `{mode}`, which needs a code runtime to render the SDK \
         for, and none is installed: build the runtime with Code Mode (tools-code: \
         `ToolRuntime::builder().extension(CodeMode::new(TypeScriptRuntime::new()))`, or a \
         Python runtime), or present this scope as `native`"
    )]
    NoCodeRuntime {
        /// The scope's mode.
        mode: PresentationMode,
    },
    /// `tool_order` names a tool the mode does not contribute.
    #[error(
        "tool_order names `{name}`, which the `{mode}` presentation does not offer as a tool \
         definition{}", if *.mode == PresentationMode::Code { " (under `code` only `run_code` is)" } else { "" }
    )]
    ToolOrder {
        /// The name.
        name: String,
        /// The scope's mode.
        mode: PresentationMode,
    },
    /// The visible schemas could not form a catalog for the SDK.
    #[error("cannot render the SDK: {message}")]
    Catalog {
        /// What the catalog refused.
        message: String,
    },
    /// The assemble hook panicked.
    #[error("the assemble hook panicked: {message}")]
    HookPanicked {
        /// The panic message.
        message: String,
    },
}

impl AssemblyError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            AssemblyError::ScopeDisposed => "SCOPE_DISPOSED",
            AssemblyError::NoCodeRuntime { .. } => "NO_CODE_RUNTIME",
            AssemblyError::ToolOrder { .. } => "TOOL_ORDER",
            AssemblyError::Catalog { .. } => "SDK_CATALOG",
            AssemblyError::HookPanicked { .. } => "ASSEMBLE_HOOK_PANICKED",
        }
    }
}

/// The assemble hook: sees the scope and the registry's assembly and may return a replacement,
/// which is then the assembly, unchecked. A hook that replaces a Code Mode assembly owns keeping
/// `run_code` and its SDK usable.
pub type AssembleHook = dyn Fn(ScopeKey, &Assembly) -> Option<Assembly> + Send + Sync;
