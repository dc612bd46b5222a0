//! Define, govern and run the tools of LLM agents.
//!
//! This crate will own tool definitions, the scoped registry, the execution pipeline with its
//! policy hooks, cancellation, scheduling, prompt assembly and presentation modes, Code Mode and
//! its embedded code runtimes. Users depend on this crate alone: it re-exports the schema types
//! and the macros.

pub mod code;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
