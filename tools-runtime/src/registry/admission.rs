//! The registry's admission rules: what refuses a call before any policy sees it, read from
//! the facts of the call alone. Two rules, both over the core's vocabulary, so they hold
//! whether or not Code Mode is installed:
//!
//! - **callers**: a tool's [`Callers`] say who may call it (the model directly, a program, or
//!   both); a call from elsewhere is refused with a message that says where it can be called;
//! - **code only**: under the `code` presentation mode the model calls only the registry's own
//!   tools directly (`run_code`, `describe_tools`); any other direct call is refused.
//!
//! Who made the call is its [`CallOrigin`]: a program's calls carry an origin only a
//! registry-owned tool can mint, so neither a model nor a tool registered through a scope can
//! make a call pass for a program's (host code that sees a program's call can pass its origin
//! on: an origin is not a secret).

use crate::call::tool_call::CallOrigin;
use crate::errors::ExecutionError;
use crate::mode::PresentationMode;
use crate::runtime::definition::Callers;

/// What the rules read of one call.
pub(crate) struct CallFacts<'a> {
    /// The tool's name.
    pub(crate) name: &'a str,
    /// The resolved definition's callers.
    pub(crate) callers: Callers,
    /// The calling scope's presentation mode.
    pub(crate) mode: PresentationMode,
    /// Where the call comes from.
    pub(crate) origin: CallOrigin,
}

/// The refusal of a call the rules do not admit; `None` admits it (policy then runs).
pub(crate) fn refusal(facts: &CallFacts<'_>) -> Option<ExecutionError> {
    let CallFacts {
        name,
        callers,
        mode,
        origin,
    } = *facts;
    let direct = origin.is_direct();
    let callers_refusal = match callers {
        Callers::Direct if direct && mode == PresentationMode::Code => {
            Some(ExecutionError::DirectCallersOnly {
                name: name.to_owned(),
                from_program: false,
                direct_offered: false,
            })
        }
        Callers::Direct if origin.is_program() => Some(ExecutionError::DirectCallersOnly {
            name: name.to_owned(),
            from_program: true,
            direct_offered: mode.offers_native(),
        }),
        // Under `code` the code-only rule below refuses every direct call already.
        Callers::Code if direct && mode != PresentationMode::Code => {
            Some(ExecutionError::CodeCallersOnly {
                name: name.to_owned(),
                code_offered: mode.offers_code(),
            })
        }
        _ => None,
    };
    if callers_refusal.is_some() {
        return callers_refusal;
    }
    (direct && mode == PresentationMode::Code && !super::is_registry_owned(name)).then(|| {
        ExecutionError::CodeOnly {
            name: name.to_owned(),
        }
    })
}
