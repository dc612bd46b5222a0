//! The integration tests of tools-dialects, as modules of one test binary (one link instead of one
//! per file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers shared by several of the modules below.
mod support;

mod behaviour;
mod corpus;
mod snapshots;
