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
    // The command that rewrites them, for the package cargo runs this test of.
    assert!(
        text.ends_with(&format!(
            "rewrite them with `{UPDATE_VAR}=1 cargo test -p tools-codegen`, then review and \
             commit the change"
        )),
        "{text}"
    );
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
fn a_named_update_command_replaces_the_cargo_one() {
    let dir = tempfile::tempdir().unwrap();
    let golden = Golden::new(dir.path())
        .files([GoldenFile::Docs])
        .update_command("TOOLS_CODEGEN_UPDATE=1 cargo xtask codegen");
    let err = golden.check_with(&catalog("x"), false).unwrap_err();
    let GoldenError::Drift { update_command, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(update_command, "TOOLS_CODEGEN_UPDATE=1 cargo xtask codegen");
    assert!(
        err.to_string()
            .contains("rewrite them with `TOOLS_CODEGEN_UPDATE=1 cargo xtask codegen`"),
        "{err}"
    );
}

/// `catalog.json` is the catalog as `Catalog::to_json_string` writes it, annotations and all,
/// whichever reader the catalog came from: what `tools-codegen all --catalog` reads back.
#[test]
fn the_catalog_file_is_the_catalog_with_every_key() {
    let text = r#"{"tools": [
        {"name": "b", "inputSchema": {"type": "object"}},
        {"name": "a", "description": "A.", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "string"}, "annotations": {"readOnlyHint": true}}
    ]}"#;
    let catalog = Catalog::from_json_str(text, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let golden = Golden::new(dir.path()).files([GoldenFile::Catalog]);
    golden.check_with(&catalog, true).unwrap();
    let written = std::fs::read_to_string(dir.path().join("catalog.json")).unwrap();
    assert_eq!(written, catalog.to_json_string());
    assert!(written.contains("\"readOnlyHint\": true"), "{written}");
    let parsed = tools_codegen::ParsedCatalog::from_json_str(text, None).unwrap();
    golden.check_with(&parsed, false).unwrap();
    // Read back, it renders what the catalog renders.
    let again = Catalog::from_json_str(&written, None).unwrap();
    for language in Language::ALL {
        assert_eq!(
            tools_codegen::render_sdk(&again, language),
            tools_codegen::render_sdk(&catalog, language)
        );
    }
}

#[test]
fn a_drifted_file_fails_with_a_unified_diff_of_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let golden = Golden::new(dir.path()).files([GoldenFile::Sdk(Language::TypeScript)]);
    golden.check_with(&catalog("Ping a host."), true).unwrap();
    let err = golden
        .check_with(&catalog("Ping a host twice."), false)
        .unwrap_err();
    let GoldenError::Drift { files, .. } = &err else {
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

/// A failed update names the file in the folder and the step, never the hidden temporary file,
/// and leaves the folder as it was. The write is made to fail by the file size limit (which
/// stops root too), in a child process: this test runs itself again under `ulimit -f 1`.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_update_names_the_file_in_the_folder_and_leaves_it_as_it_was() {
    const CHILD: &str = "TOOLS_CODEGEN_GOLDEN_CHILD_DIR";
    if let Some(dir) = std::env::var_os(CHILD) {
        let dir = std::path::PathBuf::from(dir);
        let golden = Golden::new(&dir).files([GoldenFile::Sdk(Language::TypeScript)]);
        let err = golden
            .check_with(&catalog("Ping a host."), true)
            .unwrap_err();
        assert_eq!(err.code(), "GOLDEN_IO");
        println!("GOLDEN ERROR: {err}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sdk.ts"), "old\n").unwrap();
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ\nulimit -f 1\nexec \"$0\" \"$@\"")
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_failed_update_names_the_file_in_the_folder_and_leaves_it_as_it_was",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let file = dir.path().join("sdk.ts");
    let line = text
        .lines()
        .find_map(|l| l.split_once("GOLDEN ERROR: ").map(|(_, error)| error))
        .unwrap_or_else(|| panic!("the child printed no error:\n{text}"));
    assert!(
        line.starts_with(&format!(
            "{}: cannot write the file: cannot write the new text: ",
            file.display()
        )),
        "{line}"
    );
    assert!(
        !line.contains(&format!("{}/.", dir.path().display())),
        "{line}"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["sdk.ts"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n");
}
