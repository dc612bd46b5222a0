//! The integration tests of tools-code. Each file beside this one is a module of this one test
//! binary, so the workspace links it once instead of once per file (each link carries the
//! engines and the pipeline: time and disk in every test run).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers for the modules below, declared once here.
mod code_support;
#[path = "../../tools-runtime/tests/tracing_support/mod.rs"]
mod tracing_support;

mod code_analysis;
mod code_approvals;
mod code_conformance;
mod code_mode;
mod code_mode_e2e;
mod code_python;
mod code_runtimes;
mod code_typescript;
mod python_fence;
mod python_protocol;
mod python_sandbox;
mod tracing_run_code;
mod typescript_fence;
mod unprivileged;
