//! The `tools-codegen` binary, run as a process.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tools_codegen::{Catalog, Language, render_catalog_markdown, render_sdk, usage_text};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn codegen(args: &[&str]) -> Output {
    codegen_with_stdin(args, None)
}

fn codegen_with_stdin(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tools-codegen"))
        .current_dir(repo())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn example() -> Catalog {
    Catalog::load(&repo().join("examples/catalog.json")).unwrap()
}

#[test]
fn the_readme_main_job_command_renders_all_three_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("generated");
    let out_str = out.to_str().unwrap();
    let run = codegen(&[
        "all",
        "--catalog",
        "examples/catalog.json",
        "--out-dir",
        out_str,
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let catalog = example();
    let ts = std::fs::read_to_string(out.join("sdk.ts")).unwrap();
    let py = std::fs::read_to_string(out.join("sdk.py")).unwrap();
    let md = std::fs::read_to_string(out.join("catalog.md")).unwrap();
    assert_eq!(ts, render_sdk(&catalog, Language::TypeScript));
    assert_eq!(py, render_sdk(&catalog, Language::Python));
    assert_eq!(md, render_catalog_markdown(&catalog));
    assert!(stderr(&run).contains("wrote"));
    // Nothing but the three files: the temporary files were renamed into place.
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["catalog.md", "sdk.py", "sdk.ts"]);

    // --check passes on fresh files, and fails with a diff once one drifts.
    let check = [
        "all",
        "--catalog",
        "examples/catalog.json",
        "--out-dir",
        out_str,
        "--check",
    ];
    let clean = codegen(&check);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert_eq!(stdout(&clean), "");
    let edited = ts.replace("export type ToolName", "export type ToolNames");
    std::fs::write(out.join("sdk.ts"), &edited).unwrap();
    std::fs::remove_file(out.join("catalog.md")).unwrap();
    let drift = codegen(&check);
    assert_eq!(drift.status.code(), Some(1));
    let diff = stdout(&drift);
    assert!(
        diff.contains("sdk.ts (on disk)") && diff.contains("sdk.ts (generated)"),
        "{diff}"
    );
    assert!(diff.contains("-export type ToolNames") && diff.contains("+export type ToolName "));
    assert!(diff.contains("@@ "));
    assert!(
        stderr(&drift).contains("catalog.md is missing"),
        "{}",
        stderr(&drift)
    );
    assert!(
        stderr(&drift).contains("sdk.ts differs"),
        "{}",
        stderr(&drift)
    );
    // --check writes nothing.
    assert_eq!(std::fs::read_to_string(out.join("sdk.ts")).unwrap(), edited);
    assert!(!out.join("catalog.md").exists());
}

#[test]
fn sdk_reads_stdin_and_writes_stdout() {
    let text = std::fs::read_to_string(repo().join("examples/catalog.json")).unwrap();
    for (lang, language) in [
        ("typescript", Language::TypeScript),
        ("python", Language::Python),
    ] {
        let run = codegen_with_stdin(&["sdk", "--lang", lang], Some(&text));
        assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
        assert_eq!(stdout(&run), render_sdk(&example(), language));
    }
    let run = codegen_with_stdin(&["docs", "--catalog", "-"], Some(&text));
    assert_eq!(stdout(&run), render_catalog_markdown(&example()));
}

#[test]
fn out_writes_a_file_and_check_compares_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nested/sdk.py");
    let file_str = file.to_str().unwrap();
    let args = [
        "sdk",
        "--lang",
        "py",
        "--catalog",
        "examples/catalog.json",
        "--out",
        file_str,
    ];
    let run = codegen(&args);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        render_sdk(&example(), Language::Python)
    );
    let mut check = args.to_vec();
    check.push("--check");
    assert_eq!(codegen(&check).status.code(), Some(0));
    std::fs::write(&file, "stale\n").unwrap();
    let drift = codegen(&check);
    assert_eq!(drift.status.code(), Some(1));
    assert!(stdout(&drift).contains("-stale"));
}

#[cfg(unix)]
#[test]
fn out_keeps_the_permissions_of_the_file_it_replaces() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sdk.ts");
    std::fs::write(&file, "old\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let args = [
        "sdk",
        "--lang",
        "ts",
        "--catalog",
        "examples/catalog.json",
        "--out",
        file.to_str().unwrap(),
    ];
    let run = codegen(&args);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    // A new file is not private to its owner the way a raw temporary file (0600) is, unless
    // the umask says so.
    let fresh = dir.path().join("fresh.ts");
    let mut args = args;
    args[6] = fresh.to_str().unwrap();
    assert_eq!(codegen(&args).status.code(), Some(0));
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    let umask = current_umask();
    assert_eq!(mode, 0o644 & !umask);
}

/// The umask of this process (which the spawned binary inherits), as Linux reports it.
#[cfg(unix)]
fn current_umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        .unwrap_or(0o022)
}

#[test]
fn bad_input_names_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"tools\": [\n  {\"name\": \"a\",, }\n]}").unwrap();
    let run = codegen(&["docs", "--catalog", broken.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    let message = stderr(&run);
    assert!(message.contains("broken.json:2:"), "{message}");
    assert!(message.contains("CATALOG_PARSE"), "{message}");

    let shape = dir.path().join("shape.json");
    std::fs::write(&shape, r#"{"tools": [{"name": "ok", "inputSchema": 5}]}"#).unwrap();
    let run = codegen(&["docs", "--catalog", shape.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    let message = stderr(&run);
    assert!(
        message.contains("tool \"ok\"") && message.contains("/tools/0/inputSchema"),
        "{message}"
    );

    let run = codegen_with_stdin(
        &["sdk", "--lang", "typescript"],
        Some(
            "[{\"name\": \"dup\", \"inputSchema\": {}}, {\"name\": \"dup\", \"inputSchema\": {}}]",
        ),
    );
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr(&run).contains("<stdin>") && stderr(&run).contains("DUPLICATE_TOOL"),
        "{}",
        stderr(&run)
    );

    let run = codegen(&["docs", "--catalog", "does/not/exist.json"]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr(&run).contains("does/not/exist.json"),
        "{}",
        stderr(&run)
    );

    let run = codegen(&[
        "sdk",
        "--lang",
        "rust",
        "--catalog",
        "examples/catalog.json",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr(&run).contains("expected typescript or python"),
        "{}",
        stderr(&run)
    );

    let run = codegen(&["docs", "--catalog", "examples/catalog.json", "--check"]);
    assert_eq!(run.status.code(), Some(2), "--check needs --out");
}

#[test]
fn help_shows_examples() {
    for args in [&["--help"][..], &["all", "--help"], &["sdk", "--help"]] {
        let run = codegen(args);
        assert_eq!(run.status.code(), Some(0));
        let text = stdout(&run);
        assert!(text.contains("Examples:"), "{text}");
        assert!(
            text.contains("tools-codegen all --catalog examples/catalog.json --out-dir generated")
        );
        assert!(text.contains("--check"));
    }
}

#[test]
fn templates_can_be_overridden() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("catalog.md.jinja"),
        "{% for tool in tools %}* {{ tool.name }}: {{ tool.summary | md_cell }}\n{% endfor %}",
    )
    .unwrap();
    let templates = dir.path().to_str().unwrap();
    let run = codegen(&[
        "docs",
        "--catalog",
        "examples/catalog.json",
        "--templates",
        templates,
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(stdout(&run).starts_with("* list_tasks: List the tasks on the board, newest first.\n"));
    // The templates not in the folder stay the embedded ones.
    let run = codegen(&[
        "sdk",
        "--lang",
        "typescript",
        "--catalog",
        "examples/catalog.json",
        "--templates",
        templates,
    ]);
    assert_eq!(stdout(&run), render_sdk(&example(), Language::TypeScript));

    std::fs::write(
        dir.path().join("catalog.md.jinja"),
        "line one\n{% for x in %}\n",
    )
    .unwrap();
    let run = codegen(&[
        "docs",
        "--catalog",
        "examples/catalog.json",
        "--templates",
        templates,
    ]);
    assert_eq!(run.status.code(), Some(2));
    let message = stderr(&run);
    assert!(
        message.contains("catalog.md.jinja:2") && message.contains("TEMPLATE"),
        "{message}"
    );

    let run = codegen(&[
        "docs",
        "--catalog",
        "examples/catalog.json",
        "--templates",
        "no/such/dir",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(stderr(&run).contains("no/such/dir"), "{}", stderr(&run));
}

#[test]
fn usage_prints_the_code_mode_text() {
    for (lang, language) in [
        ("typescript", Language::TypeScript),
        ("python", Language::Python),
    ] {
        let run = codegen(&["usage", "--lang", lang]);
        assert_eq!(run.status.code(), Some(0));
        assert_eq!(stdout(&run), usage_text(language));
    }
}

/// Something that is not a regular file is never read: `/dev/full` (endless zeros to a reader)
/// fails with "cannot write", under a memory limit that reading it whole would exceed.
#[cfg(target_os = "linux")]
#[test]
fn out_to_a_device_is_written_as_a_stream_and_never_read() {
    let run = Command::new("sh")
        .current_dir(repo())
        .arg("-c")
        .arg("ulimit -v 2000000 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_tools-codegen"))
        .args([
            "sdk",
            "--lang",
            "typescript",
            "--catalog",
            "examples/catalog.json",
            "--out",
            "/dev/full",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    let message = stderr(&run);
    assert!(
        message.starts_with("tools-codegen: error[FILE_IO]: /dev/full: cannot write the file: "),
        "{message}"
    );
    assert!(!message.contains("cannot read"), "{message}");

    // /dev/null takes the text and stays a device.
    let run = codegen(&[
        "docs",
        "--catalog",
        "examples/catalog.json",
        "--out",
        "/dev/null",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    // --check has nothing to compare a device with.
    let run = codegen(&[
        "docs",
        "--catalog",
        "examples/catalog.json",
        "--out",
        "/dev/null",
        "--check",
    ]);
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr(&run).contains("/dev/null: cannot check the file: it is not a regular file"),
        "{}",
        stderr(&run)
    );
}

/// `--out /dev/stdout` into a pipe writes the rendering into the pipe.
#[cfg(target_os = "linux")]
#[test]
fn out_to_dev_stdout_writes_into_the_pipe() {
    let run = codegen(&[
        "sdk",
        "--lang",
        "python",
        "--catalog",
        "examples/catalog.json",
        "--out",
        "/dev/stdout",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(stdout(&run), render_sdk(&example(), Language::Python));
}

/// An output path that cannot be written (under a regular file: as root too) says "cannot
/// write", with the reason; `--check` on it says "cannot read".
#[test]
fn unwritable_outputs_say_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain.txt");
    std::fs::write(&file, "x").unwrap();
    for out in [file.join("sdk.ts"), file.join("deeper/sdk.ts")] {
        let out = out.to_str().unwrap();
        let args = [
            "sdk",
            "--lang",
            "typescript",
            "--catalog",
            "examples/catalog.json",
            "--out",
            out,
        ];
        let run = codegen(&args);
        assert_eq!(run.status.code(), Some(2));
        let message = stderr(&run);
        assert!(
            message.starts_with(&format!(
                "tools-codegen: error[FILE_IO]: {out}: cannot write the file: "
            )),
            "{message}"
        );
        let mut check = args.to_vec();
        check.push("--check");
        let run = codegen(&check);
        assert_eq!(run.status.code(), Some(2));
        assert!(
            stderr(&run).contains(&format!("{out}: cannot read the file: ")),
            "{}",
            stderr(&run)
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

/// Every catalog that parses and has the MCP shape renders: names outside MCP's rule (with a
/// warning each, bounded in length), a null input schema, and a schema nested 20,000 levels.
#[test]
fn hostile_names_null_inputs_and_deep_schemas_render() {
    let deep = format!(
        "{}{{\"type\": \"string\"}}{}",
        "{\"type\": \"object\", \"properties\": {\"a\": ".repeat(20_000),
        "}}".repeat(20_000)
    );
    let long = "n".repeat(1_000_000);
    let text = format!(
        r#"{{"tools": [
            {{"name": "a b", "inputSchema": {{}}}},
            {{"name": "ns:tool", "inputSchema": null}},
            {{"name": "", "inputSchema": {{"type": "object"}}}},
            {{"name": "日本", "description": "x", "inputSchema": {deep}}},
            {{"name": "x/y\"z", "inputSchema": {{}}}},
            {{"name": "{long}", "inputSchema": {{}}}},
            {{"name": "fine_name", "inputSchema": {{}}}}
        ]}}"#
    );
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("hostile.json");
    std::fs::write(&catalog, &text).unwrap();
    let out = dir.path().join("out");
    let run = codegen(&[
        "all",
        "--catalog",
        catalog.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    let message = stderr(&run);
    assert_eq!(run.status.code(), Some(0), "{message:.2000}");
    let warnings: Vec<&str> = message
        .lines()
        .filter(|l| {
            l.starts_with("tools-codegen: warning: tool ")
                && l.contains("does not follow MCP's naming rule")
        })
        .collect();
    assert_eq!(warnings.len(), 6, "{message:.2000}");
    // The deep schema is cut to MAX_DEPTH levels, and says so.
    let deep: Vec<&str> = message
        .lines()
        .filter(|l| {
            l.starts_with("tools-codegen: warning: tool \"日本\": /inputSchema/properties/a/")
        })
        .collect();
    assert_eq!(deep.len(), 1, "{message:.2000}");
    assert!(
        deep[0].contains("nested deeper than 48 levels"),
        "{}",
        deep[0]
    );
    assert!(!message.contains("fine_name"));
    assert!(message.len() < 6000, "{} bytes", message.len());
    assert!(message.contains("… (999800 more bytes)"));

    let ts = std::fs::read_to_string(out.join("sdk.ts")).unwrap();
    assert!(
        ts.contains("  \"ns:tool\": {\n    [key: string]: never;\n  };"),
        "{ts:.3000}"
    );
    assert!(ts.contains("  \"x/y\\\"z\"(args: ToolArgsMap[\"x/y\\\"z\"])"));
    let py = std::fs::read_to_string(out.join("sdk.py")).unwrap();
    assert!(py.contains("Literal[\"a b\"]") && py.contains("Literal[\"\"]"));
    let md = std::fs::read_to_string(out.join("catalog.md")).unwrap();
    assert!(
        md.contains("<a id=\"tool-a~20b\"></a><code>a b</code>"),
        "{md:.3000}"
    );
    assert!(md.contains("<a id=\"tool-x~2Fy~22z\"></a><code>x/y\"z</code>"));
    assert!(md.contains("(#tool-~E6~97~A5~E6~9C~AC)"));
    assert!(md.contains("<a id=\"tool-\"></a><code></code>"));
}

#[test]
fn stats_prints_the_token_costs_of_each_presentation() {
    let output = codegen(&["stats", "--catalog", "examples/catalog.json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    for expected in [
        "native, openai-chat-strict",
        "native, gemini-json-schema",
        "code, typescript, full SDK",
        "code, python, index",
        "Cheapest for this catalog: ",
        "Code Mode costs more up front than native",
        "What each row counts",
        "approximations",
        "--tools",
        "--findings",
        "--format json",
    ] {
        // The report wraps its sentences at 100 columns.
        let flat = text.replace('\n', " ");
        assert!(flat.contains(expected), "{expected} missing from\n{text}");
    }
    // The summary leads; no per-tool rows unless asked for.
    assert!(!text.contains("read_file"), "{text}");
    let detailed = stdout(&codegen(&[
        "stats",
        "--catalog",
        "examples/catalog.json",
        "--tools",
        "--findings",
    ]));
    assert!(detailed.contains("\nread_file "), "{detailed}");
    assert!(detailed.contains("What the marked figures dropped or widened:"));
    for report in [&text, &detailed] {
        let widest = report.lines().map(|l| l.chars().count()).max();
        assert!(
            widest.is_some_and(|w| w <= 100),
            "{widest:?} columns:\n{report}"
        );
    }
    let json = stdout(&codegen(&[
        "stats",
        "--catalog",
        "examples/catalog.json",
        "--format",
        "json",
    ]));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["tools"], 5);
    assert_eq!(
        json["presentations"].as_array().map(Vec::len),
        Some(9 + 4 * 9)
    );
    assert!(json["per_tool"][0]["native"]["mcp"]["tokens"]["o200k_base"].is_u64());
    let output = codegen(&["stats", "--catalog", "no/such/file.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no/such/file.json"),
        "{}",
        stderr(&output)
    );
    let output = codegen(&[
        "stats",
        "--catalog",
        "examples/catalog.json",
        "--format",
        "xml",
    ]);
    assert_eq!(output.status.code(), Some(2));
}

/// The example catalog's TypeScript SDK into `out`, run by `sh` after `setup` (shell commands).
#[cfg(target_os = "linux")]
fn codegen_after(setup: &str, out: &Path) -> Output {
    Command::new("sh")
        .current_dir(repo())
        .arg("-c")
        .arg(format!("{setup}\nexec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_tools-codegen"))
        .args([
            "sdk",
            "--lang",
            "typescript",
            "--catalog",
            "examples/catalog.json",
        ])
        .arg("--out")
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The entries of a folder, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// A write that fails half way (the file size limit, which stops root too) names the file
/// asked for and the step, never the hidden temporary file, and leaves nothing behind: the
/// old file is as it was and the temporary file is gone.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_write_names_the_requested_file_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sdk.ts");
    std::fs::write(&out, "old\n").unwrap();
    // `ulimit -f 1` allows 512 or 1024 bytes, less than the SDK; with SIGXFSZ ignored the
    // write fails with EFBIG instead of killing the process.
    let run = codegen_after("trap '' XFSZ\nulimit -f 1", &out);
    let message = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{message}");
    assert!(
        message.starts_with(&format!(
            "tools-codegen: error[FILE_IO]: {}: cannot write the file: cannot write the new text: ",
            out.display()
        )),
        "{message}"
    );
    assert!(
        !message.contains(&format!("{}/.", dir.path().display())),
        "{message}"
    );
    assert_eq!(entries(dir.path()), ["sdk.ts"]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
}

/// The user id of this process, as Linux reports it.
#[cfg(target_os = "linux")]
fn current_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// A folder where no file can be created (a read-only tmpfs in a private mount namespace as
/// root, whom permissions do not stop; a folder without write permission otherwise) names the
/// file asked for and the folder; a folder in place of the file names the file.
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_folder_or_a_folder_in_place_of_the_file_names_the_requested_file() {
    let dir = tempfile::tempdir().unwrap();
    let sealed = dir.path().join("sealed");
    std::fs::create_dir(&sealed).unwrap();
    let out = sealed.join("sdk.ts");
    let run = if current_uid() == 0 {
        let mount = format!(
            "mount -t tmpfs -o ro tmpfs '{}' || exit 99",
            sealed.display()
        );
        let run = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(format!("{mount}\nexec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_tools-codegen"))
            .current_dir(repo())
            .args([
                "sdk",
                "--lang",
                "typescript",
                "--catalog",
                "examples/catalog.json",
            ])
            .arg("--out")
            .arg(&out)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_ne!(run.status.code(), Some(99), "{}", stderr(&run));
        run
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&sealed, std::fs::Permissions::from_mode(0o555)).unwrap();
        codegen_after("", &out)
    };
    let message = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{message}");
    assert!(
        message.starts_with(&format!(
            "tools-codegen: error[FILE_IO]: {}: cannot write the file: cannot create a temporary file in {}: ",
            out.display(),
            sealed.display()
        )),
        "{message}"
    );
    assert!(
        !message.contains(&format!("{}/.", sealed.display())),
        "{message}"
    );
    assert!(entries(&sealed).is_empty());

    let folder = dir.path().join("folder.ts");
    std::fs::create_dir(&folder).unwrap();
    let run = codegen_after("", &folder);
    let message = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{message}");
    assert!(
        message.starts_with(&format!(
            "tools-codegen: error[FILE_IO]: {}: cannot write the file: ",
            folder.display()
        )),
        "{message}"
    );
    assert!(entries(&folder).is_empty());
    assert_eq!(entries(dir.path()), ["folder.ts", "sealed"]);
}

/// A type checker: the environment variable, then the repository's `.tools` (where
/// `scripts/test` installs it), then `PATH`. A missing one fails the test: a type check never
/// passes by being skipped.
fn checker(var: &str, local: &str, name: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    let local = repo().join(local);
    if local.exists() {
        return local;
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .find(|candidate| candidate.is_file())
        })
        .unwrap_or_else(|| {
            panic!("`{name}` was not found (set {var}, or run ./scripts/test, which installs it)")
        })
}

/// A catalog text with a plain tool and one whose input nests `levels` objects, written
/// without recursion.
fn deep_catalog(levels: usize) -> String {
    format!(
        r#"{{"tools": [
            {{"name": "plain", "inputSchema": {{"type": "object", "properties": {{"q": {{"type": "string"}}}}, "required": ["q"]}}}},
            {{"name": "deep", "description": "Nested.", "inputSchema": {}{{"type": "string"}}{}}}
        ]}}"#,
        r#"{"type": "object", "properties": {"a": "#.repeat(levels),
        "}}".repeat(levels)
    )
}

/// A schema 20,000 levels deep renders, with one warning that names the tool, the pointer of
/// the first level not read and why; the files are still valid TypeScript and Python
/// (`tsc --strict`, `mypy --strict`). `--deny-warnings` makes it an error and writes nothing.
#[test]
fn a_schema_20_000_levels_deep_warns_where_it_is_cut_and_still_type_checks() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("deep.json");
    std::fs::write(&catalog, deep_catalog(20_000)).unwrap();
    let out = dir.path().join("out");
    let args = [
        "all",
        "--catalog",
        catalog.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ];
    let run = codegen(&args);
    let message = stderr(&run);
    assert_eq!(run.status.code(), Some(0), "{message}");
    let warnings: Vec<&str> = message
        .lines()
        .filter(|l| l.starts_with("tools-codegen: warning: "))
        .collect();
    assert_eq!(warnings.len(), 1, "{message}");
    let pointer = format!(
        "/inputSchema{}",
        "/properties/a".repeat(tools_codegen::MAX_DEPTH + 1)
    );
    let shown = tools_schema::excerpt::cut(&pointer);
    assert_eq!(
        warnings[0],
        format!(
            "tools-codegen: warning: tool \"deep\": {shown}: nested deeper than 48 levels; it is \
             typed `unknown` (TypeScript) and `Any` (Python)"
        )
    );

    let output = Command::new(checker("TOOLS_TSC", ".tools/node_modules/.bin/tsc", "tsc"))
        .current_dir(&out)
        .args(["--strict", "--noEmit", "--pretty", "false"])
        .args(["--target", "es2022", "--module", "commonjs", "sdk.ts"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "tsc --strict failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let output = Command::new(checker("TOOLS_MYPY", ".tools/venv/bin/mypy", "mypy"))
        .current_dir(&out)
        .args(["--strict", "--no-error-summary", "--cache-dir"])
        .arg(dir.path().join(".mypy_cache"))
        .arg("sdk.py")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "mypy --strict failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    let denied_out = dir.path().join("denied");
    let mut denied = args.to_vec();
    denied[4] = denied_out.to_str().unwrap();
    denied.push("--deny-warnings");
    let run = codegen(&denied);
    let message = stderr(&run);
    assert_eq!(run.status.code(), Some(2), "{message}");
    assert!(message.contains(warnings[0]), "{message}");
    assert!(
        message.ends_with(
            "tools-codegen: error[WARNINGS_DENIED]: 1 warning (above) and --deny-warnings makes \
             them errors; nothing was written\n"
        ),
        "{message}"
    );
    assert!(!denied_out.exists());
}

/// The library lists the same place, with the whole pointer, reading the 20,000 levels on a
/// small stack.
#[test]
fn schema_warnings_read_a_schema_20_000_levels_deep_in_little_stack() {
    let found = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let catalog = Catalog::from_json_str(&deep_catalog(20_000), None).unwrap();
            tools_codegen::schema_warnings(&catalog)
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].tool, "deep");
    assert_eq!(found[0].unlisted, 0);
    assert_eq!(
        found[0].warnings,
        [tools_codegen::SchemaWarning {
            pointer: format!(
                "/inputSchema{}",
                "/properties/a".repeat(tools_codegen::MAX_DEPTH + 1)
            ),
            degradation: tools_codegen::Degradation::TooDeep,
        }]
    );
}

/// A catalog with a warning in every tool prints one line per tool up to the bound, then one
/// line that counts the rest; a tool with many places says how many more it has.
#[test]
fn warnings_are_bounded_per_tool_and_in_all() {
    let many: Vec<String> = (0..1000)
        .map(|i| format!(r##""p{i}": {{"$ref": "#/$defs/x"}}"##))
        .collect();
    let mut tools = vec![format!(
        r#"{{"name": "a_many", "inputSchema": {{"type": "object", "properties": {{{}}}}}}}"#,
        many.join(", ")
    )];
    tools.extend((0..500).map(|i| {
        format!(r#"{{"name": "t{i:03}", "inputSchema": {{"type": "object", "properties": {{"x": {{"anyOf": []}}}}}}}}"#)
    }));
    let text = format!(r#"{{"tools": [{}]}}"#, tools.join(", "));
    let run = codegen_with_stdin(&["sdk", "--lang", "python"], Some(&text));
    let message = stderr(&run);
    assert_eq!(run.status.code(), Some(0), "{message:.3000}");
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(
        lines.len(),
        tools_codegen::cli::MAX_PRINTED_WARNINGS + 1,
        "{message:.3000}"
    );
    assert_eq!(
        lines[0],
        "tools-codegen: warning: tool \"a_many\": /inputSchema/properties/p0: `$ref` is not \
         followed; it is typed `unknown` (TypeScript) and `Any` (Python) (and 999 more places \
         in this tool)"
    );
    assert_eq!(
        lines[1],
        "tools-codegen: warning: tool \"t000\": /inputSchema/properties/x: `anyOf` without \
         `type` beside it is not expressed; it is typed `unknown` (TypeScript) and `Any` (Python)"
    );
    assert_eq!(
        lines[tools_codegen::cli::MAX_PRINTED_WARNINGS],
        format!(
            "tools-codegen: warning: {} more warning lines not shown (1500 warnings in all)",
            501 - tools_codegen::cli::MAX_PRINTED_WARNINGS
        )
    );
    // The SDK is on stdout all the same.
    assert!(stdout(&run).contains("class AManyArgs(TypedDict):"));
    // --deny-warnings counts every place.
    let run = codegen_with_stdin(&["sdk", "--lang", "python", "--deny-warnings"], Some(&text));
    assert_eq!(run.status.code(), Some(2));
    assert!(
        stderr(&run).ends_with(
            "error[WARNINGS_DENIED]: 1500 warnings (above) and --deny-warnings makes them \
             errors; nothing was written\n"
        ),
        "{:.3000}",
        stderr(&run)
    );
    assert_eq!(stdout(&run), "");
}
