//! The demo's programs are written against the SDKs the model is shown: the TypeScript program
//! passes `tsc --strict` against `demo/generated/sdk.ts`, the Python program `mypy --strict`
//! against `demo/generated/sdk.py` (which the golden test keeps equal to the tools).
//!
//! The checkers come from `TOOLS_TSC` / `TOOLS_MYPY`, then `.tools` in the repository (which
//! `./scripts/test` fills), then `PATH`; a missing checker fails the test.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use tools_demo::script::{PYTHON_PROGRAM, TYPESCRIPT_PROGRAM};

fn find_tool(var: &str, local: &str, name: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(local);
    if local.exists() {
        return local;
    }
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()) {
        if dir.join(name).is_file() {
            return dir.join(name);
        }
    }
    panic!("`{name}` was not found (set {var}, or run ./scripts/test, which installs it)");
}

fn generated(file: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("generated")
            .join(file),
    )
    .unwrap()
}

fn indent(program: &str) -> String {
    program
        .lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("    {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn check(tool: PathBuf, dir: &Path, args: &[&str]) {
    let out = Command::new(tool)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the checker runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_typescript_program_type_checks_against_the_generated_sdk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sdk.ts"), generated("sdk.ts")).unwrap();
    let program = format!(
        "import {{ tools, ToolCallError }} from \"./sdk\";\n\n\
         export async function program() {{\n{}\n}}\n",
        indent(TYPESCRIPT_PROGRAM)
    );
    std::fs::write(dir.path().join("program.ts"), program).unwrap();
    check(
        find_tool("TOOLS_TSC", ".tools/node_modules/.bin/tsc", "tsc"),
        dir.path(),
        &[
            "--strict",
            "--noEmit",
            "--pretty",
            "false",
            "--target",
            "es2022",
            "--module",
            "commonjs",
            "program.ts",
        ],
    );
}

#[test]
fn the_python_program_type_checks_against_the_generated_sdk() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sdk.py"), generated("sdk.py")).unwrap();
    let program = format!(
        "from sdk import ToolCallError, tools\n\n\nasync def program() -> object:\n{}\n",
        indent(PYTHON_PROGRAM)
    );
    std::fs::write(dir.path().join("program.py"), program).unwrap();
    let cache = dir.path().join(".mypy_cache");
    check(
        find_tool("TOOLS_MYPY", ".tools/venv/bin/mypy", "mypy"),
        dir.path(),
        &[
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            cache.to_str().unwrap(),
            "program.py",
        ],
    );
}
