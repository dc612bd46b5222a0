//! [`PresentationMode`]: how a scope's tools reach the model.

use std::fmt;

/// How the tools are presented to the model: as native function definitions, as a typed SDK
/// the model programs against through `run_code` (Code Mode), or both.
///
/// The runtime has one (set with [`ToolRuntimeBuilder::mode`](crate::presentation::ToolRuntimeBuilder::mode),
/// `Native` by default); an agent scope may choose its own with
/// [`Scope::present_as`](crate::Scope::present_as), which nested agent scopes inherit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PresentationMode {
    /// The visible tools as function definitions; `run_code` is not offered.
    #[default]
    Native,
    /// Only `run_code` and the SDK of the visible tools. A direct call of any other tool is
    /// `UNKNOWN_TOOL` before policy runs; calls a `run_code` program makes are not affected.
    Code,
    /// The visible tools as function definitions and `run_code` with the SDK; direct calls run.
    Both,
}

impl PresentationMode {
    /// The stable lower-case name: `native`, `code` or `both`.
    pub fn as_str(self) -> &'static str {
        match self {
            PresentationMode::Native => "native",
            PresentationMode::Code => "code",
            PresentationMode::Both => "both",
        }
    }

    /// Whether the mode offers `run_code` and the SDK.
    pub fn offers_code(self) -> bool {
        !matches!(self, PresentationMode::Native)
    }

    /// Whether the mode offers the visible tools as function definitions.
    pub fn offers_native(self) -> bool {
        !matches!(self, PresentationMode::Code)
    }
}

impl fmt::Display for PresentationMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
