//! Cross-crate tests of the workspace live under `tests/tests/`: golden snapshots, conformance
//! tests that follow the specification clause by clause, compile-fail cases of the macros and the
//! type checks of the generated SDKs. This library holds only the README's examples, which run as
//! doctests so the README cannot drift from the API.

#![forbid(unsafe_code)]

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;
