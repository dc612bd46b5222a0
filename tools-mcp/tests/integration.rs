//! The integration tests of tools-mcp, as modules of one test binary (one link instead of one per
//! file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers for the modules below, declared once here.
mod support;

mod annotations;
mod codegen_live;
mod http_stateless;
mod import_auth;
mod import_everything;
// Only with the `jwt` feature (the module is `#![cfg(feature = "jwt")]`).
mod import_oauth;
mod import_python;
mod inherited_fds;
mod limits;
mod malformed;
// Only with the `otel` feature (the module is `#![cfg(feature = "otel")]`).
mod otel;
mod probe;
mod progress;
mod round_trip;
// Only with the `jwt` feature (the module is `#![cfg(feature = "jwt")]`).
mod serve_auth;
mod serve_python;
mod shutdown;
mod stateless_cancel;
mod tasks;
