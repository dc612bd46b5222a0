//! The cross-crate tests, as modules of one test binary (one link instead of one per file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers for the modules below, declared once here.
mod codegen_support;
#[path = "../../tools-runtime/tests/tracing_support/mod.rs"]
mod tracing_support;

mod architecture;
mod callers;
mod code_mode_assembly;
mod codegen_deep;
mod codegen_hostile;
mod codegen_proptest;
mod codegen_samples;
mod codegen_snapshots;
mod codegen_typecheck;
mod discovery;
mod macros_basic;
mod macros_derive;
mod macros_gallery;
mod macros_ui;
