//! The integration tests of tools-schema, as modules of one test binary (one link instead of one per
//! file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers for the modules below, declared once here.
mod generators;

mod catalog;
mod deep;
mod projection;
mod properties;
mod subset;
mod validate;
