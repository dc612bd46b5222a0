//! The integration tests of tools-approvals. Each file beside this one is a module of this one
//! test binary. The SQLite modules need the `sqlite` feature (on by default); the PostgreSQL
//! ones need `postgres` and a real server (`TOOLS_PG_BIN`, see `pg.rs`), and fail without one:
//! `scripts/test` runs them with `--all-features`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers for the modules below, declared once here.
#[cfg(feature = "postgres")]
mod pg;
mod support;

mod conformance;
#[cfg(feature = "postgres")]
mod db_restart;
#[cfg(feature = "postgres")]
mod postgres_store;
#[cfg(feature = "postgres")]
mod replicas;
#[cfg(feature = "sqlite")]
mod restart;
#[cfg(feature = "sqlite")]
mod sqlite_store;
#[cfg(feature = "sqlite")]
mod tampering;
