//! The demo is the README's main command: it runs here with its output snapshotted (times
//! masked), so a change that breaks or alters it fails the test command.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::{Command, Output};

fn demo(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tools-demo"))
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("the demo binary runs")
}

/// Replaces the workspace folder and every duration, the only parts that change between runs.
fn mask(text: &str, workspace: &Path) -> String {
    let text = text.replace(&workspace.display().to_string(), "<workspace>");
    regex::Regex::new(r"\d+ ms")
        .unwrap()
        .replace_all(&text, "<t> ms")
        .into_owned()
}

#[test]
fn the_demo_runs_every_act_and_prints_the_same_text_each_time() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    let out = demo(&["--out".as_ref(), workspace.as_os_str()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "the demo failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains("SKIPPED"),
        "the Python part was skipped; the test environment must have python3:\n{stdout}"
    );
    assert!(!stdout.contains('\x1b'), "colour escapes in piped output");
    insta::assert_snapshot!("demo_output", mask(&stdout, &workspace));

    // The files it wrote are there, and the SDKs are the checked-in ones.
    let generated = Path::new(env!("CARGO_MANIFEST_DIR")).join("generated");
    for file in ["sdk.ts", "sdk.py", "catalog.md"] {
        assert_eq!(
            std::fs::read_to_string(workspace.join("generated").join(file)).unwrap(),
            std::fs::read_to_string(generated.join(file)).unwrap(),
            "{file}"
        );
    }
    assert!(workspace.join("SUMMARY.md").is_file());

    // A second run clears the folder it made and prints the same text.
    let again = demo(&["--out".as_ref(), workspace.as_os_str()]);
    assert!(again.status.success());
    assert_eq!(
        mask(&String::from_utf8(again.stdout).unwrap(), &workspace),
        mask(&stdout, &workspace)
    );
}

#[test]
fn the_demo_refuses_a_folder_it_did_not_make_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let out = demo(&["--out".as_ref(), dir.path().as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("was not made by tools-demo"), "{stderr}");
    assert!(stderr.contains("NOT_A_WORKSPACE"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn an_unknown_argument_or_a_missing_folder_is_a_usage_error() {
    for args in [&["--colour"][..], &["--out"][..]] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        let out = demo(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains("usage: tools-demo"), "{stderr}");
    }
    let help = demo(&["--help".as_ref()]);
    assert!(help.status.success());
    assert!(
        String::from_utf8(help.stdout)
            .unwrap()
            .starts_with("usage: tools-demo")
    );
}
