//! The integration tests of tools-schema, as modules of one test binary (one link instead of one per
//! file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers shared by several of the modules below.
mod generators;

mod catalog;
mod deep;
mod projection;
mod properties;
mod subset;
mod validate;
