//! The golden check of checked-in generated files: pass, drift with a readable diff, update.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use tools_codegen::golden::{Golden, GoldenError, GoldenFile, UPDATE_VAR};
use tools_codegen::{Catalog, Language};

fn catalog(description: &str) -> Catalog {
    let text = format!(
        r#"{{"tools": [{{"name": "ping", "description": "{description}", "inputSchema": {{"type": "object", "properties": {{"host": {{"type": "string"}}}}}}}}]}}"#
    );
    Catalog::from_json_str(&text, None).unwrap()
}

#[test]
fn missing_files_fail_then_update_writes_them_and_the_check_passes() {
    let dir = tempfile::tempdir().unwrap();
    let golden = Golden::new(dir.path());
    let err = golden
        .check_with(&catalog("Ping a host."), false)
        .unwrap_err();
    assert_eq!(err.code(), "GOLDEN_DRIFT");
    let text = err.to_string();
    for name in [
        "sdk.ts is missing",
        "sdk.py is missing",
        "catalog.md is missing",
    ] {
        assert!(text.contains(name), "{text}");
    }
    assert!(text.contains(&format!("{UPDATE_VAR}=1")), "{text}");
    assert!(
        !dir.path().join("sdk.ts").exists(),
        "a check alone writes nothing"
    );

    golden.check_with(&catalog("Ping a host."), true).unwrap();
    for name in ["sdk.ts", "sdk.py", "catalog.md"] {
        assert!(dir.path().join(name).is_file(), "{name}");
    }
    golden.check_with(&catalog("Ping a host."), false).unwrap();
    golden.assert_current(&catalog("Ping a host."));
}

#[test]
fn a_drifted_file_fails_with_a_unified_diff_of_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let golden = Golden::new(dir.path()).files([GoldenFile::Sdk(Language::TypeScript)]);
    golden.check_with(&catalog("Ping a host."), true).unwrap();
    let err = golden
        .check_with(&catalog("Ping a host twice."), false)
        .unwrap_err();
    let GoldenError::Drift { files } = &err else {
        panic!("{err}");
    };
    assert_eq!(files.len(), 1);
    assert!(!files[0].missing);
    assert!(
        files[0].diff.contains("-  /** Ping a host. */"),
        "{}",
        files[0].diff
    );
    assert!(
        files[0].diff.contains("+  /** Ping a host twice. */"),
        "{}",
        files[0].diff
    );
    assert!(files[0].diff.contains("(checked in)"));
    // Only the configured file is checked.
    assert!(!dir.path().join("sdk.py").exists());
}

#[test]
fn assert_current_panics_with_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let golden = Golden::new(dir.path()).files([GoldenFile::Docs]);
    golden.check_with(&catalog("Ping a host."), true).unwrap();
    std::fs::write(dir.path().join("catalog.md"), "edited by hand\n").unwrap();
    // This test must not run in update mode, or it would rewrite the file instead.
    if tools_codegen::golden::update_requested() {
        panic!("unset {UPDATE_VAR} to run this test");
    }
    let caught = std::panic::catch_unwind(|| golden.assert_current(&catalog("Ping a host.")));
    let message = caught.unwrap_err();
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(message.contains("-edited by hand"), "{message}");
}

#[test]
fn an_unreadable_file_is_an_io_error_not_a_drift() {
    let dir = tempfile::tempdir().unwrap();
    // A folder where the file should be: reading it fails whoever runs the test.
    std::fs::create_dir(dir.path().join("sdk.ts")).unwrap();
    let golden = Golden::new(dir.path()).files([GoldenFile::Sdk(Language::TypeScript)]);
    let err = golden.check_with(&catalog("x"), false).unwrap_err();
    assert_eq!(err.code(), "GOLDEN_IO");
    assert!(err.to_string().contains("cannot read the file"), "{err}");
    let err = golden.check_with(&catalog("x"), true).unwrap_err();
    assert_eq!(err.code(), "GOLDEN_IO");
}
