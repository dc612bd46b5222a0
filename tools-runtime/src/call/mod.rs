//! The call and its result: what a caller hands the runtime and what it gets back. The
//! [`ToolCall`](tool_call::ToolCall) with the identities it names (the execution token, the
//! scope key, the principal, the call's origin), the progress a running call reports, the
//! decision a person gives on a call, the result with its content and stable codes, and the
//! note of a paused call that a result carries with its handle.
//!
//! This is the ground floor of the runtime's rooms: it imports from none of them, and every
//! other room speaks its words.

pub(crate) mod content;
pub(crate) mod decision;
pub(crate) mod pending;
pub(crate) mod progress;
pub(crate) mod result;
pub(crate) mod tool_call;
