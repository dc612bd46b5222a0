//! The recipe of the guide's chapter "Keeping generated files current", tried from outside the
//! workspace as a user would: a workspace of its own (under `target/tests/drift-recipe`) made of
//! the chapter's code blocks, word for word: a tools crate (a `#[tool]`, a golden test, an
//! example that prints the catalog) and a host crate whose build script checks its own copy of
//! the SDK. Each way must fail on drift, name the command that rewrites the files, and pass once
//! that command ran:
//!
//! 1. the test: `cargo test -p my-tools`;
//! 2. the build script: `cargo build -p my-agent`;
//! 3. the CI step: `tools-codegen all --catalog generated/catalog.json --out-dir generated
//!    --check`, and the same fed the catalog the example prints.
//!
//! The chapter's crates take the toolkit from crates.io; the outside workspace patches it to
//! this tree (`[patch.crates-io]`). It builds into this workspace's target folder (its
//! `Cargo.lock` is this one's, so the dependencies it shares are not built again) and runs
//! offline: every crate it needs is one this workspace already fetched.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tools_codegen::golden::UPDATE_VAR;

/// The toolkit's workspace.
fn toolkit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// This test's target folder: `<target>/debug/deps/drift_recipe-<hash>` up three levels.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_owned()
}

/// The guide's chapter: its code blocks are the outside workspace's files.
const GUIDE: &str = include_str!("../docs/golden.md");

/// The files the guide's code blocks give: each block whose first line is a comment naming a
/// file of `my-tools/` or `my-agent/` (`// my-tools/src/lib.rs`, `# my-agent/Cargo.toml`).
fn guide_files() -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut lines = GUIDE.lines();
    while let Some(line) = lines.next() {
        if !line.starts_with("```") || line == "```" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        let Some(first) = block.first() else { continue };
        let name = first
            .strip_prefix("// ")
            .or_else(|| first.strip_prefix("# "))
            .unwrap_or_default();
        if name.starts_with("my-tools/") || name.starts_with("my-agent/") {
            files.push((name.to_owned(), block.join("\n") + "\n"));
        }
    }
    files
}

/// The outside workspace.
struct Outside {
    root: PathBuf,
}

impl Outside {
    fn new() -> Self {
        let root = target_dir().join("tests").join("drift-recipe");
        // Sources from scratch each run (what an earlier run generated would hide a failure);
        // the build output lives in the target folder, not here.
        if root.exists() {
            std::fs::remove_dir_all(&root).unwrap();
        }
        let toolkit = toolkit();
        let path = |krate: &str| toolkit.join(krate).display().to_string();
        let profiles = "[profile.dev]\ndebug = \"line-tables-only\"\n\n\
                        [profile.dev.package.\"*\"]\ndebug = false\n";
        let outside = Outside { root };
        // The guide's crates take the toolkit from crates.io; here it is this tree.
        outside.write(
            "Cargo.toml",
            &format!(
                "[workspace]\nresolver = \"3\"\nmembers = [\"my-tools\", \"my-agent\"]\n\n\
                 [patch.crates-io]\ntools-runtime = {{ path = {:?} }}\n\
                 tools-codegen = {{ path = {:?} }}\n\n{profiles}",
                path("tools-runtime"),
                path("tools-codegen"),
            ),
        );
        std::fs::copy(toolkit.join("Cargo.lock"), outside.root.join("Cargo.lock")).unwrap();
        let files = guide_files();
        let names: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "my-tools/Cargo.toml",
                "my-tools/src/lib.rs",
                "my-tools/tests/golden.rs",
                "my-agent/Cargo.toml",
                "my-agent/build.rs",
                "my-tools/examples/catalog.rs",
            ],
            "the guide's files"
        );
        for (name, text) in &files {
            outside.write(name, text);
        }
        outside.write(
            "my-agent/src/main.rs",
            "fn main() {\n    let catalog = my_tools::catalog().unwrap();\n    \
             println!(\"{} tools\", catalog.len());\n}\n",
        );
        outside
    }

    fn write(&self, file: &str, text: &str) {
        let path = self.root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `cargo <args>` in the outside workspace, with `TOOLS_CODEGEN_UPDATE=1` when `update`.
    fn cargo(&self, args: &[&str], update: bool) -> Run {
        let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        command
            .current_dir(&self.root)
            .args(args)
            .arg("--offline")
            .env("CARGO_TARGET_DIR", target_dir())
            .env_remove(UPDATE_VAR);
        if update {
            command.env(UPDATE_VAR, "1");
        }
        Run::of(&format!("cargo {}", args.join(" ")), command, None)
    }

    /// The catalog the tools crate's example prints (the guide's CI step).
    fn printed_catalog(&self) -> String {
        self.cargo(
            &["run", "-q", "-p", "my-tools", "--example", "catalog"],
            false,
        )
        .passes()
        .stdout
    }

    /// The `tools-codegen` binary in the outside workspace, `stdin` fed to it.
    fn codegen(&self, args: &[&str], stdin: Option<&str>) -> Run {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tools-codegen"));
        command.current_dir(&self.root).args(args);
        Run::of(&format!("tools-codegen {}", args.join(" ")), command, stdin)
    }
}

/// A finished command: its name, exit status and output (stdout and stderr together).
struct Run {
    what: String,
    ok: bool,
    code: Option<i32>,
    stdout: String,
    text: String,
}

impl Run {
    fn of(what: &str, mut command: Command, stdin: Option<&str>) -> Run {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("{what}: cannot start: {error}"));
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).unwrap();
        }
        drop(input);
        let Output {
            status,
            stdout,
            stderr,
        } = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&stdout).into_owned();
        let text = format!("{stdout}{}", String::from_utf8_lossy(&stderr));
        Run {
            what: what.to_owned(),
            ok: status.success(),
            code: status.code(),
            stdout,
            text,
        }
    }

    #[track_caller]
    fn passes(self) -> Run {
        assert!(self.ok, "{} failed:\n{}", self.what, self.text);
        self
    }

    /// Fails, naming `command` as the way to rewrite the files.
    #[track_caller]
    fn fails_naming(self, command: &str) -> Run {
        assert!(!self.ok, "{} passed:\n{}", self.what, self.text);
        assert!(
            self.text
                .contains(&format!("rewrite them with `{command}`")),
            "{} does not name `{command}`:\n{}",
            self.what,
            self.text
        );
        self
    }

    /// Shows the description `from` removed and `to` added (cargo indents what a build script
    /// writes by two spaces).
    #[track_caller]
    fn shows_change(&self, from: &str, to: &str) {
        let lines: Vec<&str> = self.text.lines().map(str::trim_start).collect();
        for (sign, text) in [('-', from), ('+', to)] {
            assert!(
                lines
                    .iter()
                    .any(|line| line.starts_with(sign) && line.contains(text)),
                "{}: no `{sign}` line with {text:?}:\n{}",
                self.what,
                self.text
            );
        }
    }
}

#[test]
fn each_way_of_the_recipe_fails_on_drift_and_names_the_command() {
    let outside = Outside::new();
    let generated = outside.root.join("my-tools/generated");
    let test = ["test", "-p", "my-tools", "--test", "golden"];
    let build = ["build", "-p", "my-agent"];
    let check = [
        "all",
        "--catalog",
        "my-tools/generated/catalog.json",
        "--out-dir",
        "my-tools/generated",
        "--check",
    ];
    // The same, the catalog read from stdin.
    let check_stdin = ["all", "--out-dir", "my-tools/generated", "--check"];

    // Nothing checked in yet: the test and the build fail, each naming its own command.
    let missing = outside
        .cargo(&test, false)
        .fails_naming("TOOLS_CODEGEN_UPDATE=1 cargo test -p my-tools");
    for file in ["sdk.ts", "sdk.py", "catalog.md", "catalog.json"] {
        assert!(
            missing.text.contains(&format!("{file} is missing")),
            "{}",
            missing.text
        );
    }
    assert!(!generated.exists(), "a failing check wrote files");
    outside
        .cargo(&build, false)
        .fails_naming("TOOLS_CODEGEN_UPDATE=1 cargo build -p my-agent");

    // The named commands write the files; then every way passes.
    outside.cargo(&test, true).passes();
    outside.cargo(&build, true).passes();
    for file in ["sdk.ts", "sdk.py", "catalog.md", "catalog.json"] {
        assert!(generated.join(file).is_file(), "{file} was not written");
    }
    assert!(outside.root.join("my-agent/generated/sdk.ts").is_file());
    outside.cargo(&test, false).passes();
    outside.cargo(&build, false).passes();
    outside.codegen(&check, None).passes();
    // The catalog the example prints is the checked-in one.
    let printed = outside.printed_catalog();
    assert_eq!(
        printed,
        std::fs::read_to_string(generated.join("catalog.json")).unwrap()
    );

    // A tool's description changes and nothing is regenerated.
    let (from, to) = ("Add two integers.", "Add two whole numbers.");
    let lib = std::fs::read_to_string(outside.root.join("my-tools/src/lib.rs")).unwrap();
    assert!(lib.contains(from), "{lib}");
    outside.write("my-tools/src/lib.rs", &lib.replace(from, to));
    outside
        .cargo(&test, false)
        .fails_naming("TOOLS_CODEGEN_UPDATE=1 cargo test -p my-tools")
        .shows_change(from, to);
    // The build script runs again (its build-dependency changed) and fails with the diff.
    outside
        .cargo(&build, false)
        .fails_naming("TOOLS_CODEGEN_UPDATE=1 cargo build -p my-agent")
        .shows_change(from, to);
    // In CI, the catalog the example prints against the checked-in files: exit 1 and a diff.
    let printed = outside.printed_catalog();
    let stale = outside.codegen(&check_stdin, Some(&printed));
    assert_eq!(stale.code, Some(1), "{}", stale.text);
    stale.shows_change(from, to);

    // The named commands bring every way back to passing.
    outside.cargo(&test, true).passes();
    outside.cargo(&build, true).passes();
    outside.cargo(&test, false).passes();
    outside.cargo(&build, false).passes();
    outside.codegen(&check, None).passes();
    outside.codegen(&check_stdin, Some(&printed)).passes();
    let sdk = std::fs::read_to_string(outside.root.join("my-agent/generated/sdk.ts")).unwrap();
    assert!(sdk.contains(to), "{sdk}");
}
