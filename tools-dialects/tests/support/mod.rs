//! Shared helpers of the dialect tests: the corpora the other crates' tests use, and the
//! schema and value generators of `tools-schema`'s property tests (its
//! `tests/generators/mod.rs`, included by path: a test crate cannot import another's helpers).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use tools_schema::{Catalog, CatalogEntry};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// A catalog file under the repository root.
pub fn catalog(path: &str) -> Vec<CatalogEntry> {
    Catalog::load(&repo_root().join(path))
        .unwrap_or_else(|e| panic!("{e}"))
        .tools()
        .to_vec()
}

/// The macro gallery of the tests crate: each tool's catalog entry as its snapshot pins it.
pub fn gallery() -> Vec<CatalogEntry> {
    let dir = repo_root().join("tests/tests/snapshots");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("integration__macros_gallery__") && n.ends_with(".snap")
            })
        })
        .collect();
    files.sort();
    assert!(
        files.len() >= 10,
        "the macro gallery snapshots are missing from {dir:?}"
    );
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            // insta's header is between the first two `---` lines.
            let body = text.splitn(3, "---\n").nth(2).unwrap();
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{path:?}: {e}"))
        })
        .collect()
}

/// Every corpus, by name: the macro gallery, the codegen fixtures, the example catalog.
pub fn corpora() -> Vec<(&'static str, Vec<CatalogEntry>)> {
    vec![
        ("gallery", gallery()),
        (
            "constructs",
            catalog("tests/fixtures/codegen/constructs.json"),
        ),
        (
            "adversarial",
            catalog("tests/fixtures/codegen/adversarial.json"),
        ),
        ("example", catalog("examples/catalog.json")),
    ]
}

#[path = "../../../tools-schema/tests/generators/mod.rs"]
mod generators;
// Each test file uses some of them.
#[allow(unused_imports)]
pub use generators::{arb_json, arb_schema, arb_value_for};
