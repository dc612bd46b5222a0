//! The integration tests of tools-dialects, as modules of one test binary (one link instead of one
//! per file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers for the modules below, declared once here.
mod support;

mod behaviour;
mod corpus;
mod snapshots;
