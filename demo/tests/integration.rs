//! The demo's tests, as modules of one test binary (one link instead of one per file).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod cards;
mod demo;
mod golden;
mod typecheck;
