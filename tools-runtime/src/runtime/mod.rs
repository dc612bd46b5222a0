//! The runtime handle and the definitions it holds: [`ToolRuntime`](handle::ToolRuntime) and
//! the data it shares (layers, items, listener lists, the execute-wrapper chain), the
//! [`ToolDefinition`](definition::ToolDefinition) with its builder and its output (validation,
//! cards), and the [`ToolRunContext`](context::ToolRunContext) a body receives.
//!
//! They are one room because they are defined through each other: the handle's shared state
//! holds definitions, a definition's body receives a run context, and the context carries the
//! handle (for nested calls and shared state). No split of them into rooms could import one
//! way. Everything else they use is in the rooms below; the registry, the pipeline and
//! presentation give the handle its behaviour.

pub(crate) mod cards;
pub(crate) mod context;
pub(crate) mod definition;
pub(crate) mod handle;
pub(crate) mod validation;
