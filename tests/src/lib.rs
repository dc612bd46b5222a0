//! Cross-crate tests of the workspace live under `tests/tests/`: golden snapshots, conformance
//! tests that follow the specification clause by clause, compile-fail cases of the macros and the
//! type checks of the generated SDKs. This library is empty on purpose.
