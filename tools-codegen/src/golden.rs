//! Checked-in SDKs and docs kept current by a test (behind the `golden` feature, on by default).
//!
//! A team keeps its registry's generated files in git, so a reviewer sees how a change to a tool
//! changes what the model reads. [`Golden`] renders a catalog (for instance
//! `ToolRuntime::catalog(scope)`) and compares the result with the files in a folder, in the
//! manner of `insta` and `expect-test`:
//!
//! - when they match, nothing happens;
//! - when the environment variable [`UPDATE_VAR`] (`TOOLS_CODEGEN_UPDATE`) is `1` (or `true`,
//!   `yes`, `always`), the files that differ are rewritten (each atomically) and the check
//!   passes;
//! - otherwise the check fails with a unified diff of every file that drifted and the command
//!   that updates them. The diff is the shortest one up to [`SHORTEST_DIFF_LINES`] changed
//!   lines; past them (two texts that differ throughout) it shows the changed lines removed,
//!   then added, since the shortest diff's time grows with the square of such texts.
//!
//! The command a failure names is the one that rewrites the files from where the check ran:
//! `TOOLS_CODEGEN_UPDATE=1 cargo test -p <package>` from a test, `TOOLS_CODEGEN_UPDATE=1 cargo
//! build -p <package>` from a build script ([`Golden::build_script`]), the package being the one
//! cargo runs (`CARGO_PKG_NAME`); [`Golden::update_command`] names another.
//!
//! ```
//! use tools_codegen::golden::Golden;
//! use tools_codegen::Catalog;
//!
//! let catalog = Catalog::from_json_str(
//!     r#"{"tools": [{"name": "ping", "description": "Ping.", "inputSchema": {"type": "object"}}]}"#,
//!     None,
//! )
//! .unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let golden = Golden::new(dir.path());
//! // Nothing checked in yet: the check fails and says what is missing ...
//! let drift = golden.check_with(&catalog, false).unwrap_err();
//! assert!(drift.to_string().contains("sdk.ts is missing"));
//! // ... and the update mode writes the files, after which the check passes.
//! golden.check_with(&catalog, true).unwrap();
//! golden.check_with(&catalog, false).unwrap();
//! ```
//!
//! In a test, [`Golden::assert_current`] panics with the diff, so `cargo test` shows it; in a
//! build script, [`Golden::build_script`] does the same and tells cargo when to run it again.
//! The crate's guide, "Keeping generated files current", gives the three recipes (a test, a
//! build script, a `--check` step in CI).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::{Language, ToolList, render_catalog_markdown, render_sdk};

/// The environment variable that asks [`Golden::check`] to rewrite drifted files.
pub const UPDATE_VAR: &str = "TOOLS_CODEGEN_UPDATE";

/// What a [`Golden`] renders into its folder, by file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldenFile {
    /// The SDK in a language (`sdk.ts`, `sdk.py`).
    Sdk(Language),
    /// The Markdown catalog docs (`catalog.md`).
    Docs,
    /// The catalog itself as MCP `tools/list` JSON (`catalog.json`, as
    /// [`Catalog::to_json_string`](tools_schema::Catalog::to_json_string) writes it): the file
    /// `tools-codegen all --catalog catalog.json --check` reads in CI, and a reviewer's view of
    /// every schema change. Not among [`Golden::new`]'s files: add it with [`Golden::files`].
    Catalog,
}

impl GoldenFile {
    /// The file name in the folder: the same names `tools-codegen all` writes.
    pub fn file_name(self) -> &'static str {
        match self {
            GoldenFile::Sdk(Language::TypeScript) => "sdk.ts",
            GoldenFile::Sdk(Language::Python) => "sdk.py",
            GoldenFile::Docs => "catalog.md",
            GoldenFile::Catalog => "catalog.json",
        }
    }

    fn render(self, catalog: &impl ToolList) -> String {
        match self {
            GoldenFile::Sdk(language) => render_sdk(catalog, language),
            GoldenFile::Docs => render_catalog_markdown(catalog),
            GoldenFile::Catalog => crate::parsed::sealed::Sealed::catalog_json(catalog),
        }
    }
}

/// A folder of generated files checked against a catalog.
#[derive(Debug, Clone)]
pub struct Golden {
    dir: PathBuf,
    files: Vec<GoldenFile>,
    update_command: Option<String>,
}

/// Where a check runs, for the command its failure names.
#[derive(Debug, Clone, Copy)]
enum Caller {
    Test,
    BuildScript,
}

impl Golden {
    /// The folder `dir`, holding `sdk.ts`, `sdk.py` and `catalog.md`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Golden {
            dir: dir.into(),
            files: vec![
                GoldenFile::Sdk(Language::TypeScript),
                GoldenFile::Sdk(Language::Python),
                GoldenFile::Docs,
            ],
            update_command: None,
        }
    }

    /// The command a drift failure names to rewrite the files, instead of the one worked out
    /// from where the check runs (for instance `TOOLS_CODEGEN_UPDATE=1 cargo xtask codegen`).
    #[must_use]
    pub fn update_command(mut self, command: impl Into<String>) -> Self {
        self.update_command = Some(command.into());
        self
    }

    /// The same folder holding only `files`.
    #[must_use]
    pub fn files(mut self, files: impl IntoIterator<Item = GoldenFile>) -> Self {
        self.files = files.into_iter().collect();
        self
    }

    /// Checks the folder against `catalog`, rewriting drifted files when [`UPDATE_VAR`] asks.
    ///
    /// # Errors
    ///
    /// [`GoldenError::Drift`] with every drifted file's diff, or [`GoldenError::Io`] when a file
    /// cannot be read or written.
    pub fn check(&self, catalog: &impl ToolList) -> Result<(), GoldenError> {
        self.check_with(catalog, update_requested())
    }

    /// [`check`](Self::check) with the update decision given instead of read from the
    /// environment.
    ///
    /// # Errors
    ///
    /// As [`check`](Self::check).
    pub fn check_with(&self, catalog: &impl ToolList, update: bool) -> Result<(), GoldenError> {
        self.check_from(catalog, update, Caller::Test)
    }

    fn check_from(
        &self,
        catalog: &impl ToolList,
        update: bool,
        caller: Caller,
    ) -> Result<(), GoldenError> {
        let mut drifted = Vec::new();
        for file in &self.files {
            let path = self.dir.join(file.file_name());
            let text = file.render(catalog);
            let existing = match std::fs::read_to_string(&path) {
                Ok(existing) => Some(existing),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
                Err(error) => {
                    return Err(GoldenError::Io {
                        path,
                        action: "read",
                        error,
                    });
                }
            };
            if existing.as_deref() == Some(text.as_str()) {
                continue;
            }
            if update {
                write_atomically(&path, &text)?;
                continue;
            }
            let shown = path.display().to_string();
            let diff = unified_diff(
                existing.as_deref().unwrap_or(""),
                &text,
                &format!("{shown} (checked in)"),
                &format!("{shown} (generated)"),
            );
            drifted.push(Drifted {
                path,
                missing: existing.is_none(),
                diff,
            });
        }
        if drifted.is_empty() {
            Ok(())
        } else {
            Err(GoldenError::Drift {
                files: drifted,
                update_command: self.command(caller),
            })
        }
    }

    /// The command that rewrites the files from where the check runs.
    fn command(&self, caller: Caller) -> String {
        if let Some(command) = &self.update_command {
            return command.clone();
        }
        let verb = match caller {
            Caller::Test => "test",
            Caller::BuildScript => "build",
        };
        // Cargo sets the package's name for the tests and build scripts it runs.
        match std::env::var("CARGO_PKG_NAME") {
            Ok(package) if !package.is_empty() => {
                format!("{UPDATE_VAR}=1 cargo {verb} -p {package}")
            }
            _ => format!("{UPDATE_VAR}=1 cargo {verb}"),
        }
    }

    /// [`check`](Self::check) for tests: panics with the diff and the update command on drift.
    ///
    /// # Panics
    ///
    /// When a file drifted, or cannot be read or written.
    #[allow(clippy::panic)]
    #[track_caller]
    pub fn assert_current(&self, catalog: &impl ToolList) {
        if let Err(error) = self.check(catalog) {
            panic!("{error}");
        }
    }

    /// [`assert_current`](Self::assert_current) for a build script (`build.rs`): the build
    /// fails on drift, naming `TOOLS_CODEGEN_UPDATE=1 cargo build -p <package>`.
    ///
    /// It first tells cargo when to run the script again: when a checked file changes
    /// (`cargo:rerun-if-changed`) and when [`UPDATE_VAR`] does (`cargo:rerun-if-env-changed`).
    /// A change to the tools is a change to the script's build-dependency, which runs it again
    /// anyway. Cargo then stops running it for other changes of the package, so a host whose
    /// build script does more prints its own `rerun-if` lines too.
    ///
    /// The tools must come from another crate, a build-dependency of this one: a build script
    /// cannot call the functions of the crate it builds. The crate's guide has the recipe.
    ///
    /// # Panics
    ///
    /// When a file drifted, or cannot be read or written.
    #[allow(clippy::panic)]
    #[track_caller]
    pub fn build_script(&self, catalog: &impl ToolList) {
        println!("cargo:rerun-if-env-changed={UPDATE_VAR}");
        for file in &self.files {
            println!(
                "cargo:rerun-if-changed={}",
                self.dir.join(file.file_name()).display()
            );
        }
        if let Err(error) = self.check_from(catalog, update_requested(), Caller::BuildScript) {
            panic!("{error}");
        }
    }
}

/// Whether [`UPDATE_VAR`] asks for an update.
pub fn update_requested() -> bool {
    std::env::var(UPDATE_VAR).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "always"
        )
    })
}

/// One file whose checked-in text differs from the catalog's rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drifted {
    /// The file.
    pub path: PathBuf,
    /// Whether it is not there at all.
    pub missing: bool,
    /// A unified diff from the checked-in text to the generated one (see
    /// [`SHORTEST_DIFF_LINES`]).
    pub diff: String,
}

/// Why a golden check failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GoldenError {
    /// Files drifted from the catalog.
    #[error("{}", drift_message(.files, .update_command))]
    Drift {
        /// Every drifted file.
        files: Vec<Drifted>,
        /// The command that rewrites them (see [`Golden::update_command`]).
        update_command: String,
    },
    /// A file could not be read or written.
    #[error("{}: cannot {action} the file: {error}", .path.display())]
    Io {
        /// The file in the folder (never the temporary file it is written through: a failed
        /// write says which step failed, removes the temporary file and leaves this one as it
        /// was).
        path: PathBuf,
        /// `read` or `write`.
        action: &'static str,
        /// The underlying error.
        #[source]
        error: std::io::Error,
    },
}

impl GoldenError {
    /// The stable code: `GOLDEN_DRIFT` or `GOLDEN_IO`.
    pub fn code(&self) -> &'static str {
        match self {
            GoldenError::Drift { .. } => "GOLDEN_DRIFT",
            GoldenError::Io { .. } => "GOLDEN_IO",
        }
    }
}

fn drift_message(files: &[Drifted], update_command: &str) -> String {
    let mut out = String::new();
    for file in files {
        let _ = fmt::Write::write_fmt(
            &mut out,
            format_args!(
                "{} {}\n{}\n",
                file.path.display(),
                if file.missing {
                    "is missing"
                } else {
                    "differs from the catalog's rendering"
                },
                file.diff
            ),
        );
    }
    out.push_str(&format!(
        "the generated files drifted from the tools; rewrite them with `{update_command}`, \
         then review and commit the change"
    ));
    out
}

/// The most changed lines (of both texts together, past the lines they start and end with in
/// common) for which the diff of a drifted file ([`Drifted::diff`], and the CLI's `--check`)
/// is the shortest one; past them it shows the changed lines removed, then added.
pub const SHORTEST_DIFF_LINES: usize = 10_000;

/// A unified diff (three lines of context) from `old` to `new`, under the two headers: the one
/// [`Golden`] reports and the CLI's `--check` prints.
///
/// The shortest diff (Myers') costs time in proportion to the changed lines times the edits,
/// which for two large texts that differ throughout grows with the square of their size (a
/// 12,000-tool SDK checked against another took 44 s). Up to [`SHORTEST_DIFF_LINES`] changed
/// lines it is found; past them the changed lines are written as removed, then added (one
/// hunk between the common start and end), in time linear in the texts.
pub(crate) fn unified_diff(old: &str, new: &str, old_header: &str, new_header: &str) -> String {
    let mut config = similar::TextDiff::configure();
    if changed_lines(old, new) > SHORTEST_DIFF_LINES {
        // A deadline already past makes `similar` give up before its first step: it writes the
        // range between the common start and end as removed and added. The deadline is a
        // second back so it has passed whatever the clock's resolution: the text is the same
        // on every run.
        let now = std::time::Instant::now();
        config.deadline(
            now.checked_sub(std::time::Duration::from_secs(1))
                .unwrap_or(now),
        );
    }
    config
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_header, new_header)
        .to_string()
}

/// The lines of `old` and `new` together, less those they start and end with in common.
fn changed_lines(old: &str, new: &str) -> usize {
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let new: Vec<&str> = new.split_inclusive('\n').collect();
    let start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let end = old[start..]
        .iter()
        .rev()
        .zip(new[start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    old.len() + new.len() - 2 * (start + end)
}

fn write_atomically(path: &Path, text: &str) -> Result<(), GoldenError> {
    crate::files::write_atomically(path, text).map_err(|error| GoldenError::Io {
        path: path.to_owned(),
        action: "write",
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` lines, every other one `<tag> <i>` and the others the same in every text.
    fn interleaved(tag: &str, n: usize) -> String {
        let mut text = String::from("start\nstart\nstart\nstart\n");
        for i in 0..n {
            text.push_str(&format!("same {i}\n{tag} {i}\n"));
        }
        text.push_str("end\nend\nend\nend\n");
        text
    }

    /// The lines of each kind (' ', '-', '+') in the order they come, runs merged.
    fn runs(diff: &str) -> Vec<(char, usize)> {
        let mut runs: Vec<(char, usize)> = Vec::new();
        for line in diff.lines().skip(3) {
            let kind = line.chars().next().unwrap_or(' ');
            match runs.last_mut() {
                Some((last, count)) if *last == kind => *count += 1,
                _ => runs.push((kind, 1)),
            }
        }
        runs
    }

    #[test]
    fn small_drifts_get_the_shortest_diff() {
        let diff = unified_diff(&interleaved("old", 10), &interleaved("new", 10), "a", "b");
        assert!(
            diff.starts_with("--- a\n+++ b\n@@ -3,25 +3,25 @@\n"),
            "{diff}"
        );
        // Each changed line on its own, between the lines in common.
        assert_eq!(runs(&diff).len(), 1 + 10 * 3, "{diff}");
    }

    /// Past `SHORTEST_DIFF_LINES` changed lines, one hunk: removed, then added, found in linear
    /// time. (The shortest diff, every other line on its own, costs the changed lines times the
    /// edits; for two texts that differ throughout, the square of their size.)
    #[test]
    fn large_drifts_are_removed_then_added() {
        let n = 6_000;
        let (old, new) = (interleaved("old", n), interleaved("new", n));
        assert!(changed_lines(&old, &new) > SHORTEST_DIFF_LINES);
        let diff = unified_diff(&old, &new, "a", "b");
        assert!(
            diff.starts_with(&format!("--- a\n+++ b\n@@ -3,{0} +3,{0} @@\n", 2 * n + 5)),
            "{diff:.200}"
        );
        let runs = runs(&diff);
        assert!(
            runs.len() == 4,
            "{} runs of kept, removed and added lines: {:?} ...",
            runs.len(),
            &runs[..8]
        );
        assert_eq!(
            runs,
            [(' ', 3), ('-', 2 * n - 1), ('+', 2 * n - 1), (' ', 3)]
        );
    }
}
