//! The shared vocabulary every room of the runtime speaks, below all of them: the call and its
//! token, the scope key, the execution view, the run context a body receives, the definition, the
//! content and result types, the errors and their codes, the hook types the registry stores and
//! the pipeline runs, and the runtime handle with the data it shares.
//!
//! Only data and the small behaviour that belongs to it live here. What the registry does with
//! that data (scopes, registration, masks, resolution) is in [`crate::registry`]; what happens to
//! a call is in [`crate::pipeline`]. Nothing here imports from those rooms, so the arrows point
//! one way: `base` <- `registry` <- `pipeline`, with `code` and the macros' support beside them.

pub(crate) mod approvals;
pub(crate) mod assembly;
pub(crate) mod call;
pub(crate) mod cards;
pub(crate) mod content;
pub(crate) mod context;
pub(crate) mod definition;
pub(crate) mod error;
pub(crate) mod execution;
pub(crate) mod extension;
pub(crate) mod extensions;
pub(crate) mod handle;
pub(crate) mod hooks;
pub(crate) mod mode;
pub(crate) mod progress;
pub(crate) mod result;
pub(crate) mod runtime;
pub(crate) mod store;
pub(crate) mod validation;
