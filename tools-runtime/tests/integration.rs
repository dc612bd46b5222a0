//! The integration tests of tools-runtime. Each file beside this one is a module of this one test
//! binary, so the workspace links it once instead of once per file (each link carries the engines
//! and the pipeline: time and disk in every test run).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers for the modules below, declared once here.
mod tracing_support;

mod approvals;
mod cancellation_stress;
mod cards;
mod cc_names;
mod conformance;
mod deep_values;
mod extension_seam;
mod faults;
mod ordered_pool;
mod progress;
mod scopes;
mod tool_validated_output;
mod tracing_span;
mod wrappers;
