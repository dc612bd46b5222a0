//! The `tools-codegen` command-line tool (behind the default `cli` feature).
//!
//! [`run`] is the whole program with its streams passed in, so tests and build scripts can call
//! it without a process; `src/main.rs` only forwards to [`main`].
//!
//! Exit status: `0` success, `1` a `--check` found a file that differs (a unified diff is
//! printed), `2` bad usage or bad input (the error names the file and line and column, or the
//! tool and JSON pointer), or warnings under `--deny-warnings`.
//!
//! Warnings go to stderr and leave the exit status alone (the output is still valid): a tool
//! name outside MCP's naming rule ([`crate::name_warnings`]), and each tool whose rendered
//! types say less than its schema ([`crate::schema_warnings`]: the JSON pointer of the first
//! such place, why, and how many more the tool has). At most [`MAX_PRINTED_WARNINGS`] are
//! printed, then one line counts the rest, so a hostile catalog cannot flood the terminal.
//! `--deny-warnings` turns them into an error (`WARNINGS_DENIED`, exit 2) before anything is
//! written.

use crate::{CodegenError, Language, ParsedCatalog, Renderer};
use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use tools_schema::CatalogError;

const EXAMPLES: &str = "\
Examples:
  # Render every output of the example catalog into generated/
  tools-codegen all --catalog examples/catalog.json --out-dir generated

  # Fail (exit 1, with a diff) when the checked-in files are out of date
  tools-codegen all --catalog examples/catalog.json --out-dir generated --check

  # The TypeScript SDK on stdout, the catalog read from stdin
  my-mcp-server --list-tools | tools-codegen sdk --lang typescript

  # The Python SDK into a file, written atomically
  tools-codegen sdk --lang python --catalog tools.json --out sdk/tools.py

  # The docs, with your own templates overriding the embedded ones
  tools-codegen docs --catalog tools.json --templates my-templates --out docs/tools.md

  # What each presentation costs in tokens up front, and which is cheapest
  tools-codegen stats --catalog tools.json
  # ... with every tool's figures and what each marked figure left out; or as JSON
  tools-codegen stats --catalog tools.json --tools --findings
  tools-codegen stats --catalog tools.json --format json

  # Fail (exit 2, nothing written) when a type would degrade to unknown/Any
  tools-codegen sdk --lang typescript --catalog tools.json --out sdk.ts --deny-warnings

The catalog is the MCP tools/list result: {\"tools\": [{\"name\", \"description\",
\"inputSchema\", \"outputSchema\"}]}, or a bare array of tools. Built with the `mcp`
feature, --mcp-stdio \"COMMAND\" or --mcp-url URL reads it from a live MCP server;
--mcp-bearer-env VAR and --mcp-header-env NAME=VAR send --mcp-url credentials read from the
environment (never a command-line literal).
Warnings on stderr (the exit status stays 0): tool names outside MCP's naming rule, and
each tool whose types say less than its schema (a $ref, anyOf without type, nesting deeper
than 48 levels, ... typed unknown/Any), with the JSON pointer of the place and why.
Exit status: 0 success, 1 --check found a difference, 2 bad usage or bad input, or
warnings under --deny-warnings.";

/// How many warning lines the CLI prints; one more line counts the rest.
pub const MAX_PRINTED_WARNINGS: usize = 20;

/// The file names `all` writes into `--out-dir`.
pub const ALL_FILES: [(&str, Output); 3] = [
    ("sdk.ts", Output::Sdk(Language::TypeScript)),
    ("sdk.py", Output::Sdk(Language::Python)),
    ("catalog.md", Output::Docs),
];

/// One thing the tool can render.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The SDK in a language.
    Sdk(Language),
    /// The Markdown catalog docs.
    Docs,
}

#[derive(Debug, Parser)]
#[command(
    name = "tools-codegen",
    version,
    about = "Render a tool catalog into a typed TypeScript or Python SDK and Markdown docs.",
    long_about = "Render a tool catalog into a typed TypeScript or Python SDK and Markdown docs.\n\n\
The output is byte-identical for the same tools, whatever their order in the input.",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Render the typed SDK in one language.
    #[command(after_help = EXAMPLES)]
    Sdk {
        /// The SDK language: typescript or python.
        #[arg(long, value_name = "LANG", value_parser = parse_language)]
        lang: Language,
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Render the Markdown catalog docs.
    #[command(after_help = EXAMPLES)]
    Docs {
        #[command(flatten)]
        input: InputArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Render sdk.ts, sdk.py and catalog.md into a folder.
    #[command(after_help = EXAMPLES)]
    All {
        #[command(flatten)]
        input: InputArgs,
        /// The folder to write into (created when missing).
        #[arg(long, value_name = "DIR")]
        out_dir: PathBuf,
        /// Write nothing; exit 1 with a unified diff when a file on disk differs.
        #[arg(long)]
        check: bool,
    },
    /// Print what each presentation costs in tokens up front: a summary (native in each
    /// provider dialect, Code Mode with the full SDK and with the index), which is cheapest
    /// and by how much, and what each row counts; counted offline with o200k_base and
    /// cl100k_base.
    Stats {
        /// The catalog file (MCP tools/list JSON); `-` or absent reads stdin. The mcp row counts
        /// every key of each tool entry (title, annotations, _meta, ...).
        #[arg(long, value_name = "FILE")]
        catalog: Option<PathBuf>,
        /// `text` (at most 100 columns) or `json` (every figure, mark and finding).
        #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json"])]
        format: String,
        /// Add a table of every tool's tokens per dialect.
        #[arg(long)]
        tools: bool,
        /// Add what each marked figure's projections dropped or widened, tool by tool.
        #[arg(long)]
        findings: bool,
    },
    /// Print the Code Mode usage text for a language.
    Usage {
        /// The language: typescript or python.
        #[arg(long, value_name = "LANG", value_parser = parse_language)]
        lang: Language,
        /// Templates overriding the embedded ones (files of the same name).
        #[arg(long, value_name = "DIR")]
        templates: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
struct InputArgs {
    /// The catalog file (MCP tools/list JSON); `-` or absent reads stdin.
    #[arg(long, value_name = "FILE")]
    catalog: Option<PathBuf>,
    /// Templates overriding the embedded ones (files of the same name).
    #[arg(long, value_name = "DIR")]
    templates: Option<PathBuf>,
    /// Read the catalog from a live MCP server started with this command line (its
    /// `tools/list`, every page); split on whitespace.
    #[cfg(feature = "mcp")]
    #[arg(long, value_name = "COMMAND", conflicts_with_all = ["catalog", "mcp_url"])]
    mcp_stdio: Option<String>,
    /// Read the catalog from a live MCP server at this streamable HTTP URL.
    #[cfg(feature = "mcp")]
    #[arg(long, value_name = "URL", conflicts_with = "catalog")]
    mcp_url: Option<String>,
    /// With --mcp-url: send `Authorization: Bearer <token>`, the token read from the
    /// environment variable VAR (a credential is never a command-line literal, which shell
    /// history and `ps` would keep).
    #[cfg(feature = "mcp")]
    #[arg(long, value_name = "VAR", requires = "mcp_url")]
    mcp_bearer_env: Option<String>,
    /// With --mcp-url: send the header NAME with the value of the environment variable VAR
    /// (`--mcp-header-env 'X-Api-Key=SEARCH_KEY'`); repeatable.
    #[cfg(feature = "mcp")]
    #[arg(long, value_name = "NAME=VAR", requires = "mcp_url")]
    mcp_header_env: Vec<String>,
    /// Make warnings errors: exit 2 and write nothing when a tool name is outside MCP's
    /// naming rule or a type says less than its schema (typed unknown/Any).
    #[arg(long)]
    deny_warnings: bool,
    /// The MCP protocol generation: `auto` (2026-07-28 when the server answers `server/discover`
    /// within 5 seconds, else the 2025-11-25 `initialize` handshake), `initialize` or `discover`.
    #[cfg(feature = "mcp")]
    #[arg(long, value_name = "GENERATION", default_value = "auto",
          value_parser = ["auto", "initialize", "discover"])]
    mcp_protocol: String,
}

#[derive(Debug, Args)]
struct OutputArgs {
    /// Write to FILE instead of stdout: a regular file atomically (a hidden temporary file
    /// beside it, flushed to disk, then renamed over it; on any failure the error names FILE and
    /// the step, and FILE is left as it was), anything else (/dev/stdout, a pipe) as a stream.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Write nothing; exit 1 with a unified diff when FILE differs from the rendering.
    #[arg(long, requires = "out")]
    check: bool,
}

fn parse_language(name: &str) -> Result<Language, String> {
    Language::from_name(name)
        .ok_or_else(|| format!("unknown language {name:?}; expected typescript or python"))
}

/// Why the tool failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The catalog could not be read or is invalid.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// Standard input could not be read.
    #[error("<stdin>: cannot read the catalog: {0}")]
    Stdin(#[source] std::io::Error),
    /// The templates could not be loaded or rendered.
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    /// Tokens could not be counted.
    #[error(transparent)]
    Stats(#[from] crate::stats::StatsError),
    /// The catalog could not be read from an MCP server (`--mcp-stdio`, `--mcp-url`).
    #[cfg(feature = "mcp")]
    #[error(transparent)]
    Mcp(#[from] crate::mcp::McpListError),
    /// The catalog drew warnings and `--deny-warnings` makes them errors.
    #[error(
        "{count} {} (above) and --deny-warnings makes them errors; nothing was written",
        if *.count == 1 { "warning" } else { "warnings" }
    )]
    WarningsDenied {
        /// How many warnings there were: names outside MCP's rule, and places where a type
        /// says less than its schema.
        count: usize,
    },
    /// An output file could not be read (for `--check`) or written.
    #[error("{path}: cannot {action}: {error}")]
    File {
        /// The file.
        path: String,
        /// `read the file` (`--check`), `check the file` (`--check` on something that is not a
        /// regular file), `write the file`, or `create the folder` (`all --out-dir`).
        action: &'static str,
        /// The underlying error.
        #[source]
        error: std::io::Error,
    },
}

impl CliError {
    /// The stable error code: the catalog's or codegen's code, `STDIN`, `FILE_IO`,
    /// `WARNINGS_DENIED`, or `MCP_LIST_FAILED` (feature `mcp`).
    pub fn code(&self) -> &'static str {
        match self {
            CliError::Catalog(e) => e.code(),
            CliError::Stdin(_) => "STDIN",
            CliError::Codegen(e) => e.code(),
            CliError::File { .. } => "FILE_IO",
            CliError::WarningsDenied { .. } => "WARNINGS_DENIED",
            CliError::Stats(e) => e.code(),
            #[cfg(feature = "mcp")]
            CliError::Mcp(_) => "MCP_LIST_FAILED",
        }
    }
}

/// Runs the tool as a process: real arguments and streams, and exits with its status.
pub fn main() -> ! {
    let status = run(
        std::env::args_os(),
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(status)
}

/// Runs the tool with `args` (the first is the program name) and the given streams; returns the
/// exit status (`0`, `1` when `--check` found a difference, `2` on error).
pub fn run(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let text = error.render().to_string();
            let stream: &mut dyn Write = if error.use_stderr() { stderr } else { stdout };
            let _ = stream.write_all(text.as_bytes());
            return error.exit_code();
        }
    };
    match execute(cli.command, stdin, stdout, stderr) {
        Ok(status) => status,
        Err(error) => {
            let _ = writeln!(stderr, "tools-codegen: error[{}]: {error}", error.code());
            2
        }
    }
}

fn renderer(templates: Option<&Path>) -> Result<Renderer, CliError> {
    Ok(match templates {
        Some(dir) => Renderer::with_template_dir(dir)?,
        None => Renderer::new()?,
    })
}

/// The catalog text and the name errors give it: the file's path or `<stdin>`.
fn read(catalog: Option<&Path>, stdin: &mut dyn Read) -> Result<(String, String), CliError> {
    match catalog {
        Some(path) if path != Path::new("-") => {
            let name = path.display().to_string();
            match std::fs::read_to_string(path) {
                Ok(text) => Ok((text, name)),
                Err(error) => Err(CatalogError::Io { path: name, error }.into()),
            }
        }
        _ => {
            let mut text = String::new();
            stdin.read_to_string(&mut text).map_err(CliError::Stdin)?;
            Ok((text, "<stdin>".to_owned()))
        }
    }
}

/// The catalog text and its name, from an MCP server when `--mcp-stdio`/`--mcp-url` is given,
/// else as [`read`] gives it.
fn read_input(input: &InputArgs, stdin: &mut dyn Read) -> Result<(String, String), CliError> {
    #[cfg(feature = "mcp")]
    {
        use crate::mcp::McpListError;
        use tools_mcp::{McpSource, Protocol};
        let source = match (&input.mcp_stdio, &input.mcp_url) {
            (Some(command), _) => {
                Some(McpSource::command_line(command).map_err(McpListError::Mcp)?)
            }
            (None, Some(url)) => Some(crate::mcp::with_credentials(
                McpSource::http(url),
                input.mcp_bearer_env.as_deref(),
                &input.mcp_header_env,
                |var| std::env::var(var).ok(),
            )?),
            (None, None) => None,
        };
        if let Some(source) = source {
            // The parser admits only these names and `auto`.
            let protocol = match input.mcp_protocol.as_str() {
                "initialize" => Protocol::Initialize,
                "discover" => Protocol::Discover,
                _ => Protocol::Auto,
            };
            let text = crate::mcp::read_catalog(&source, protocol)?;
            return Ok((text, format!("MCP server {}", source.describe())));
        }
    }
    read(input.catalog.as_deref(), stdin)
}

fn render(
    renderer: &Renderer,
    catalog: &ParsedCatalog<'_>,
    output: Output,
) -> Result<String, CliError> {
    Ok(match output {
        Output::Sdk(language) => renderer.sdk(catalog, language)?,
        Output::Docs => renderer.markdown(catalog)?,
    })
}

fn execute(
    command: Command,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<i32, CliError> {
    let (input, output_args, what) = match command {
        Command::Sdk {
            lang,
            input,
            output,
        } => (input, output, Output::Sdk(lang)),
        Command::Docs { input, output } => (input, output, Output::Docs),
        Command::Stats {
            catalog,
            format,
            tools,
            findings,
        } => {
            let (text, name) = read(catalog.as_deref(), stdin)?;
            let catalog = tools_schema::Catalog::from_json_str(&text, Some(&name))?;
            let sent = crate::stats::SentEntries::from_json_str(&text);
            let report = crate::stats::stats_sent(&catalog, &sent)?;
            let out = match format.as_str() {
                "json" => report.to_json(),
                _ => report.to_text(crate::stats::Detail { tools, findings }),
            };
            write_stdout(stdout, &out)?;
            return Ok(0);
        }
        Command::Usage { lang, templates } => {
            let text = renderer(templates.as_deref())?.usage(lang)?;
            write_stdout(stdout, &text)?;
            return Ok(0);
        }
        Command::All {
            input,
            out_dir,
            check,
        } => {
            let renderer = renderer(input.templates.as_deref())?;
            let (text, name) = read_input(&input, stdin)?;
            let catalog = ParsedCatalog::from_json_str(&text, Some(&name))?;
            warn(&catalog, input.deny_warnings, stderr)?;
            let mut status = 0;
            if !check {
                std::fs::create_dir_all(&out_dir).map_err(|error| CliError::File {
                    path: out_dir.display().to_string(),
                    action: "create the folder",
                    error,
                })?;
            }
            for (name, what) in ALL_FILES {
                let text = render(&renderer, &catalog, what)?;
                let path = out_dir.join(name);
                status = status.max(deliver(&path, &text, check, stdout, stderr)?);
            }
            return Ok(status);
        }
    };
    let renderer = renderer(input.templates.as_deref())?;
    let (source, name) = read_input(&input, stdin)?;
    let catalog = ParsedCatalog::from_json_str(&source, Some(&name))?;
    warn(&catalog, input.deny_warnings, stderr)?;
    let text = render(&renderer, &catalog, what)?;
    // The process ends right after this: skip freeing the catalog piece by piece.
    std::mem::forget(catalog);
    match output_args.out {
        Some(path) => deliver(&path, &text, output_args.check, stdout, stderr),
        None => {
            write_stdout(stdout, &text)?;
            Ok(0)
        }
    }
}

/// Prints the catalog's warnings: one for each tool name outside MCP's rule (see
/// [`crate::name_warnings`]), then one for each tool whose types say less than its schema (see
/// [`crate::schema_warnings`]): its first place and how many more it has. At most
/// [`MAX_PRINTED_WARNINGS`] lines, then one that counts the rest.
///
/// # Errors
///
/// [`CliError::WarningsDenied`] when there is any warning and `deny` is set.
fn warn(catalog: &ParsedCatalog<'_>, deny: bool, stderr: &mut dyn Write) -> Result<(), CliError> {
    let names = crate::name_warnings(catalog);
    let schemas = crate::schema_warnings(catalog);
    let lines = names.len().saturating_add(schemas.len());
    let mut printed = 0;
    for warning in &names {
        if printed == MAX_PRINTED_WARNINGS {
            break;
        }
        let _ = writeln!(stderr, "tools-codegen: warning: {warning}");
        printed += 1;
    }
    for tool in &schemas {
        if printed == MAX_PRINTED_WARNINGS {
            break;
        }
        let Some(first) = tool.warnings.first() else {
            continue;
        };
        let more = match tool.total().saturating_sub(1) {
            0 => String::new(),
            1 => " (and 1 more place in this tool)".to_owned(),
            n => format!(" (and {n} more places in this tool)"),
        };
        let _ = writeln!(
            stderr,
            "tools-codegen: warning: tool {}: {first}{more}",
            tools_schema::excerpt::quoted(&tool.tool)
        );
        printed += 1;
    }
    let count = schemas
        .iter()
        .fold(names.len(), |sum, tool| sum.saturating_add(tool.total()));
    if lines > printed {
        let _ = writeln!(
            stderr,
            "tools-codegen: warning: {} more warning lines not shown ({count} warnings in all)",
            lines - printed
        );
    }
    if deny && count > 0 {
        return Err(CliError::WarningsDenied { count });
    }
    Ok(())
}

fn write_stdout(stdout: &mut dyn Write, text: &str) -> Result<(), CliError> {
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|error| CliError::File {
            path: "<stdout>".into(),
            action: "write the file",
            error,
        })
}

/// What is at an output path.
enum Existing {
    /// Nothing: the file is created.
    Missing,
    /// A regular file with this content (or `None` when it is not UTF-8 text).
    File(Option<String>),
    /// Something else (a device such as `/dev/stdout` or `/dev/full`, a pipe, a socket): it is
    /// never read, and it is written as a stream.
    Stream,
}

/// Looks at `path` without reading anything but a regular file. Errors are the caller's to
/// word (`cannot read` for `--check`, `cannot write` otherwise).
fn existing(path: &Path) -> std::io::Result<Existing> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Existing::Missing),
        Err(error) => return Err(error),
    };
    if !meta.is_file() {
        return Ok(Existing::Stream);
    }
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Existing::File(Some(text))),
        Err(error) if error.kind() == std::io::ErrorKind::InvalidData => Ok(Existing::File(None)),
        Err(error) => Err(error),
    }
}

/// Checks `path` against `text` (`check`) or writes it; returns the exit status.
///
/// Only a regular file is read (to compare, or to skip rewriting an identical file) and
/// replaced atomically. Anything else at the path (a device, a pipe) is opened and written as a
/// stream, and `--check` refuses it: there is no file content to compare.
fn deliver(
    path: &Path,
    text: &str,
    check: bool,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> Result<i32, CliError> {
    let shown = path.display().to_string();
    let fail = |action: &'static str| {
        let path = shown.clone();
        move |error: std::io::Error| CliError::File {
            path,
            action,
            error,
        }
    };
    if check {
        let existing = match existing(path).map_err(fail("read the file"))? {
            Existing::Missing => None,
            Existing::File(text) => Some(text.unwrap_or_default()),
            Existing::Stream => {
                return Err(fail("check the file")(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "it is not a regular file, so there is nothing to compare",
                )));
            }
        };
        if existing.as_deref() == Some(text) {
            return Ok(0);
        }
        let old = existing.as_deref().unwrap_or("");
        let diff = crate::golden::unified_diff(
            old,
            text,
            &format!("{shown} (on disk)"),
            &format!("{shown} (generated)"),
        );
        let _ = stdout.write_all(diff.as_bytes());
        let reason = if existing.is_some() {
            "differs from the catalog's rendering"
        } else {
            "is missing"
        };
        let _ = writeln!(
            stderr,
            "tools-codegen: {shown} {reason}; regenerate it by running the same command without --check"
        );
        return Ok(1);
    }
    // An output that cannot even be looked at (a path under a regular file, a folder without
    // permission) cannot be written either; the write below reports why.
    match existing(path).unwrap_or(Existing::Missing) {
        Existing::File(Some(old)) if old == text => {}
        Existing::Stream => write_stream(path, text).map_err(fail("write the file"))?,
        Existing::Missing | Existing::File(_) => write_atomically(path, text)?,
    }
    let _ = writeln!(stderr, "tools-codegen: wrote {shown}");
    Ok(0)
}

/// Writes `text` to something that is not a regular file, as a stream.
fn write_stream(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(text.as_bytes())?;
    file.flush()
}

/// [`files::write_atomically`](crate::files::write_atomically), with the CLI's error.
fn write_atomically(path: &Path, text: &str) -> Result<(), CliError> {
    crate::files::write_atomically(path, text).map_err(|error| CliError::File {
        path: path.display().to_string(),
        action: "write the file",
        error,
    })
}
