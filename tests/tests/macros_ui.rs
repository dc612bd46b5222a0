//! Compile-fail cases of `#[tool]`, `#[tools]` and `#[derive(ToolSchema)]`: one per
//! diagnostic, each `.stderr` pinned (regenerate with `TRYBUILD=overwrite` and read them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[test]
fn diagnostics() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}
