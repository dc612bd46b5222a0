//! The SDKs and docs of the demo's tools are checked in under `demo/generated/`; this test
//! fails with a diff when the tools change without them. Rewrite them with
//! `TOOLS_CODEGEN_UPDATE=1 cargo test -p tools-demo`, then review and commit.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use tools_codegen::golden::Golden;

#[test]
fn the_checked_in_sdks_and_docs_match_the_tools() {
    let catalog = tools_demo::catalog().unwrap();
    Golden::new(concat!(env!("CARGO_MANIFEST_DIR"), "/generated")).assert_current(&catalog);
}
