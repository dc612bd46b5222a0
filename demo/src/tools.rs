//! The demo's four `#[tool]` tools and their cards.
//!
//! | tool | what it does | scheduling | result card |
//! | --- | --- | --- | --- |
//! | `read` | a window of a file's lines | concurrency-safe | `read`, line-numbered |
//! | `search` | a literal text over every file | concurrency-safe | `search`, grouped by file |
//! | `write` | replaces (or creates) a file | exclusive | `diff` |
//! | `shell` | `ls`, `cat` or `wc -l`, run in Rust (no real shell) | concurrency-safe | `terminal` |
//!
//! Each result card is drawn from the arguments and the model-facing content alone (what a
//! session log keeps), so the cards of a Code Mode program's sub-calls, which carry no
//! presentation metadata, come out the same as those of direct calls.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tools_runtime::cards::{
    CallView, FileDiff, FileMatches, Location, NumberedLine, ResultRecord, ResultView, SearchShape,
};
use tools_runtime::error::{DefinitionError, ToolFailure};
use tools_runtime::{ContentBlock, ToolDefinition, ToolRunContext, ToolSchema, tool};

use crate::workspace::{LATENCY, Workspace, WorkspaceError, outside_problem};

/// The most matches a search returns.
pub const MAX_MATCHES: usize = 50;

/// The definitions of the four tools, in name order.
///
/// # Errors
///
/// Only if a schema fell outside the supported subset (a defect of this crate).
pub fn definitions() -> Result<Vec<ToolDefinition>, DefinitionError> {
    Ok(vec![
        read::definition()?,
        search::definition()?,
        shell::definition()?,
        write::definition()?,
    ])
}

// ---------------------------------------------------------------------------------------------
// read

/// A window of a file's lines.
#[derive(Debug, Serialize, ToolSchema)]
pub struct ReadWindow {
    /// The file.
    pub path: String,
    /// The 1-based number of the first line.
    pub offset: u64,
    /// The lines, without their line breaks.
    pub lines: Vec<String>,
    /// How many lines the file has.
    pub total_lines: u64,
}

/// Read lines of a text file in the workspace.
#[tool(
    concurrency_safe,
    render = render_read,
    present_call = read_call_card,
    present_result = read_result_card
)]
pub async fn read(
    /// The file, relative to the workspace root.
    path: String,
    /// The 1-based first line (default 1).
    offset: Option<u64>,
    /// How many lines at most (default: to the end).
    limit: Option<u64>,
    #[context] ws: Arc<Workspace>,
    #[context] ctx: ToolRunContext,
) -> Result<ReadWindow, WorkspaceError> {
    let running = ws.start(ctx.call_id());
    tokio::time::sleep(LATENCY).await;
    let text = ws.read_text(&path);
    ws.finish(running);
    let text = text?;
    let all: Vec<&str> = text.lines().collect();
    let offset = offset.unwrap_or(1).max(1);
    let skip = usize::try_from(offset - 1).unwrap_or(usize::MAX);
    let take = limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    Ok(ReadWindow {
        lines: all
            .iter()
            .skip(skip)
            .take(take)
            .map(|l| (*l).to_owned())
            .collect(),
        total_lines: all.len() as u64,
        offset,
        path,
    })
}

/// The model reads `path (N lines)` and the window numbered like `cat -n`.
pub fn render_read(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    let path = value["path"].as_str().unwrap_or_default();
    let total = value["total_lines"].as_u64().unwrap_or(0);
    let offset = value["offset"].as_u64().unwrap_or(1);
    let mut text = format!("{path} ({total} lines)");
    for (i, line) in value["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .enumerate()
    {
        text.push_str(&format!("\n{:>6}\t{line}", offset + i as u64));
    }
    vec![ContentBlock::text(text)]
}

/// A `read` call: a generic card of kind `read` with the file as its location.
pub fn read_call_card(args: &Value) -> Option<CallView> {
    let path = args["path"].as_str()?;
    let offset = args["offset"].as_u64();
    Some(CallView::Generic {
        title: match offset {
            Some(n) => format!("Read {path} from line {n}"),
            None => format!("Read {path}"),
        },
        kind: Some("read".into()),
        raw_input: None,
        content: None,
        locations: Some(vec![Location {
            path: path.to_owned(),
            line: offset,
        }]),
    })
}

/// A `read` result: the `read` card, its lines numbered as in the file. Failures get the
/// generic card.
pub fn read_result_card(args: &Value, record: &ResultRecord<'_>) -> Option<ResultView> {
    if record.is_error {
        return None;
    }
    let text = record.text();
    let mut lines = text.lines();
    let header = lines.next()?;
    let total = header
        .rsplit_once(" (")?
        .1
        .strip_suffix(" lines)")?
        .parse()
        .ok()?;
    let lines = lines
        .map(|line| {
            let (number, text) = line.split_once('\t')?;
            Some(NumberedLine {
                number: number.trim().parse().ok()?,
                text: text.to_owned(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let path = args["path"].as_str()?;
    Some(ResultView::Read {
        title: None,
        path: path.to_owned(),
        offset: args["offset"].as_u64().unwrap_or(1),
        lines,
        total_lines: total,
        lang: language(path).map(str::to_owned),
        content: None,
    })
}

fn language(path: &str) -> Option<&'static str> {
    match path.rsplit_once('.')?.1 {
        "rs" => Some("rust"),
        "md" => Some("markdown"),
        "ts" => Some("typescript"),
        "py" => Some("python"),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// search

/// One matching line.
#[derive(Debug, Serialize, ToolSchema)]
pub struct Hit {
    /// The file.
    pub path: String,
    /// The 1-based line number.
    pub line: u64,
    /// The line's text.
    pub text: String,
}

/// What a search found.
#[derive(Debug, Serialize, ToolSchema)]
pub struct SearchHits {
    /// The text searched for.
    pub pattern: String,
    /// The matching lines, by file and line.
    pub matches: Vec<Hit>,
    /// How many lines matched in all (more than `matches` holds when the list was cut).
    pub total: u64,
}

/// Find the lines that contain a text (case-sensitive, no wildcards) in every workspace file.
#[tool(
    concurrency_safe,
    render = render_search,
    present_call = search_call_card,
    present_result = search_result_card
)]
pub async fn search(
    /// The text to look for.
    pattern: String,
    #[context] ws: Arc<Workspace>,
    #[context] ctx: ToolRunContext,
) -> Result<SearchHits, WorkspaceError> {
    let running = ws.start(ctx.call_id());
    tokio::time::sleep(LATENCY).await;
    let found = find(&ws, &pattern);
    ws.finish(running);
    let all = found?;
    Ok(SearchHits {
        total: all.len() as u64,
        matches: all.into_iter().take(MAX_MATCHES).collect(),
        pattern,
    })
}

fn find(ws: &Workspace, pattern: &str) -> Result<Vec<Hit>, WorkspaceError> {
    let mut hits = Vec::new();
    for path in ws.files()? {
        // Files that are not text are skipped, as grep does.
        let Ok(text) = ws.read_text(&path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if line.contains(pattern) {
                hits.push(Hit {
                    path: path.clone(),
                    line: i as u64 + 1,
                    text: line.to_owned(),
                });
            }
        }
    }
    Ok(hits)
}

/// The model reads a count, then `path:line:text` lines as grep prints them.
pub fn render_search(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    let total = value["total"].as_u64().unwrap_or(0);
    let pattern = value["pattern"].as_str().unwrap_or_default();
    let hits = value["matches"].as_array().map_or(&[][..], Vec::as_slice);
    let mut text = format!("{total} matching lines for \"{pattern}\"");
    if (hits.len() as u64) < total {
        text.push_str(&format!(" (the first {} shown)", hits.len()));
    }
    for hit in hits {
        text.push_str(&format!(
            "\n{}:{}:{}",
            hit["path"].as_str().unwrap_or_default(),
            hit["line"].as_u64().unwrap_or(0),
            hit["text"].as_str().unwrap_or_default()
        ));
    }
    vec![ContentBlock::text(text)]
}

/// A `search` call: a generic card of kind `search`.
pub fn search_call_card(args: &Value) -> Option<CallView> {
    let pattern = args["pattern"].as_str()?;
    Some(CallView::Generic {
        title: format!("Search for \"{pattern}\""),
        kind: Some("search".into()),
        raw_input: None,
        content: None,
        locations: None,
    })
}

/// A `search` result: the `search` card with the matches grouped by file.
pub fn search_result_card(args: &Value, record: &ResultRecord<'_>) -> Option<ResultView> {
    if record.is_error {
        return None;
    }
    let text = record.text();
    let mut lines = text.lines();
    let header = lines.next()?;
    let total: u64 = header.split_once(' ')?.0.parse().ok()?;
    let mut matches: Vec<FileMatches> = Vec::new();
    let mut shown = 0u64;
    for line in lines {
        let mut parts = line.splitn(3, ':');
        let (path, number, text) = (parts.next()?, parts.next()?, parts.next()?);
        let numbered = NumberedLine {
            number: number.parse().ok()?,
            text: text.to_owned(),
        };
        shown += 1;
        match matches.last_mut() {
            Some(last) if last.path == path => last.lines.push(numbered),
            _ => matches.push(FileMatches {
                path: path.to_owned(),
                lines: vec![numbered],
            }),
        }
    }
    Some(ResultView::Search {
        shape: SearchShape::Matches { matches },
        title: Some(format!("\"{}\"", args["pattern"].as_str()?)),
        truncated: shown < total,
        total,
    })
}

// ---------------------------------------------------------------------------------------------
// write

/// What a write did.
#[derive(Debug, Serialize, ToolSchema)]
pub struct WriteOutcome {
    /// The file.
    pub path: String,
    /// Whether the file is new.
    pub created: bool,
    /// Every line of the file before and after, each prefixed by ` ` (kept), `-` (removed) or
    /// `+` (added).
    pub changes: Vec<String>,
}

/// Write a text file in the workspace, replacing what it held.
#[tool(
    render = render_write,
    present_call = write_call_card,
    present_result = write_result_card
)]
pub fn write(
    /// The file, relative to the workspace root.
    path: String,
    /// The new text of the whole file.
    content: String,
    #[context] ws: Arc<Workspace>,
    #[context] ctx: ToolRunContext,
) -> Result<WriteOutcome, WorkspaceError> {
    let running = ws.start(ctx.call_id());
    let done = replace(&ws, &path, &content);
    ws.finish(running);
    let old = done?;
    Ok(WriteOutcome {
        created: old.is_none(),
        changes: full_diff(old.as_deref().unwrap_or(""), &content),
        path,
    })
}

fn replace(ws: &Workspace, path: &str, content: &str) -> Result<Option<String>, WorkspaceError> {
    let old = ws.read_if_present(path)?;
    ws.write_text(path, content)?;
    Ok(old)
}

/// Every line of `old` and `new`, prefixed by ` `, `-` or `+` (line breaks dropped).
pub fn full_diff(old: &str, new: &str) -> Vec<String> {
    similar::TextDiff::from_lines(old, new)
        .iter_all_changes()
        .map(|change| {
            let sign = match change.tag() {
                similar::ChangeTag::Equal => ' ',
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
            };
            let line = change.value();
            format!("{sign}{}", line.strip_suffix('\n').unwrap_or(line))
        })
        .collect()
}

/// The model reads what happened and the whole file as a diff.
pub fn render_write(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    let path = value["path"].as_str().unwrap_or_default();
    let changes: Vec<&str> = value["changes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let added = changes.iter().filter(|c| c.starts_with('+')).count();
    let removed = changes.iter().filter(|c| c.starts_with('-')).count();
    let head = if value["created"].as_bool().unwrap_or(false) {
        format!("Created {path} ({added} lines)")
    } else {
        format!("Updated {path} (+{added} -{removed})")
    };
    let mut text = head;
    for change in changes {
        text.push('\n');
        text.push_str(change);
    }
    vec![ContentBlock::text(text)]
}

/// A `write` call: a generic card of kind `edit` (the old text is not known before it runs).
pub fn write_call_card(args: &Value) -> Option<CallView> {
    let path = args["path"].as_str()?;
    let lines = args["content"].as_str()?.lines().count();
    Some(CallView::Generic {
        title: format!("Write {path}"),
        kind: Some("edit".into()),
        raw_input: None,
        content: Some(crate::show::count(lines as u64, "line")),
        locations: Some(vec![Location {
            path: path.to_owned(),
            line: None,
        }]),
    })
}

/// A `write` result: the `diff` card, the old and new text taken back out of the content.
pub fn write_result_card(args: &Value, record: &ResultRecord<'_>) -> Option<ResultView> {
    if record.is_error {
        return None;
    }
    let text = record.text();
    let mut lines = text.lines();
    let created = match lines.next()? {
        head if head.starts_with("Created ") => true,
        head if head.starts_with("Updated ") => false,
        _ => return None,
    };
    let (mut old, mut new) = (String::new(), String::new());
    for line in lines {
        let (sign, rest) = line.split_at_checked(1)?;
        match sign {
            " " => {
                old.push_str(rest);
                old.push('\n');
                new.push_str(rest);
                new.push('\n');
            }
            "-" => {
                old.push_str(rest);
                old.push('\n');
            }
            "+" => {
                new.push_str(rest);
                new.push('\n');
            }
            _ => return None,
        }
    }
    Some(ResultView::Diff {
        title: None,
        diffs: vec![FileDiff {
            path: args["path"].as_str()?.to_owned(),
            old_text: (!created).then_some(old),
            new_text: new,
        }],
    })
}

// ---------------------------------------------------------------------------------------------
// shell

/// What a command printed.
#[derive(Debug, Serialize, ToolSchema)]
pub struct ShellOutput {
    /// The command line.
    pub command: String,
    /// What it printed.
    pub output: String,
}

/// Why the shell refused a command.
#[derive(Debug, thiserror::Error)]
pub enum ShellError {
    /// The command is not one this shell knows.
    #[error(
        "`{0}` is not a command this shell runs (it runs `ls [DIR]`, `cat FILE...`, `wc -l FILE...`)"
    )]
    Unsupported(String),
    /// The command is known but its arguments are not.
    #[error("usage: {0}")]
    Usage(&'static str),
    /// A file could not be used.
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
}

impl ToolFailure for ShellError {
    fn code(&self) -> &str {
        match self {
            ShellError::Unsupported(_) => "UNSUPPORTED_COMMAND",
            ShellError::Usage(_) => "USAGE",
            ShellError::Workspace(e) => e.code(),
        }
    }
}

/// Run a read-only command in the workspace: `ls [DIR]`, `cat FILE...` or `wc -l FILE...`.
/// Words are split on spaces; there are no pipes, quotes or globs.
#[tool(
    concurrency_safe,
    render = render_shell,
    present_call = shell_call_card,
    present_result = shell_result_card
)]
pub async fn shell(
    /// The command line.
    command: String,
    #[context] ws: Arc<Workspace>,
    #[context] ctx: ToolRunContext,
) -> Result<ShellOutput, ShellError> {
    let running = ws.start(ctx.call_id());
    tokio::time::sleep(LATENCY).await;
    let output = run_command(&ws, &command);
    ws.finish(running);
    Ok(ShellOutput {
        output: output?,
        command,
    })
}

/// The operands of a command line that name files (everything after the command that is not
/// a flag).
pub fn command_paths(command: &str) -> Vec<&str> {
    command
        .split_whitespace()
        .skip(1)
        .filter(|w| !w.starts_with('-'))
        .collect()
}

fn run_command(ws: &Workspace, command: &str) -> Result<String, ShellError> {
    let words: Vec<&str> = command.split_whitespace().collect();
    match words.as_slice() {
        ["ls"] => list(ws, ""),
        ["ls", dir] => list(ws, dir),
        ["ls", ..] => Err(ShellError::Usage("ls [DIR]")),
        ["cat", files @ ..] if !files.is_empty() => {
            let mut out = String::new();
            for file in files {
                out.push_str(&ws.read_text(file)?);
            }
            Ok(out)
        }
        ["cat"] => Err(ShellError::Usage("cat FILE...")),
        ["wc", "-l", files @ ..] if !files.is_empty() => {
            let mut out = String::new();
            let mut total = 0;
            for file in files {
                let n = ws.read_text(file)?.lines().count();
                total += n;
                out.push_str(&format!("{n} {file}\n"));
            }
            if files.len() > 1 {
                out.push_str(&format!("{total} total\n"));
            }
            Ok(out)
        }
        ["wc", ..] => Err(ShellError::Usage("wc -l FILE...")),
        [other, ..] => Err(ShellError::Unsupported((*other).to_owned())),
        [] => Err(ShellError::Usage("a command: ls, cat or wc -l")),
    }
}

fn list(ws: &Workspace, dir: &str) -> Result<String, ShellError> {
    let prefix = match dir.trim_end_matches('/') {
        "" | "." => String::new(),
        d => {
            if outside_problem(d).is_some() {
                return Err(WorkspaceError::Outside { path: dir.into() }.into());
            }
            format!("{d}/")
        }
    };
    let mut names: Vec<String> = ws
        .files()?
        .iter()
        .filter_map(|f| f.strip_prefix(&prefix))
        .map(|rest| match rest.split_once('/') {
            Some((folder, _)) => format!("{folder}/"),
            None => rest.to_owned(),
        })
        .collect();
    names.dedup();
    if names.is_empty() && !prefix.is_empty() {
        return Err(WorkspaceError::NotFound { path: dir.into() }.into());
    }
    Ok(names.iter().map(|n| format!("{n}\n")).collect())
}

/// The model reads what the command printed.
pub fn render_shell(_args: &Value, value: &Value) -> Vec<ContentBlock> {
    vec![ContentBlock::text(
        value["output"].as_str().unwrap_or_default().trim_end(),
    )]
}

/// A `shell` call: the `terminal` card with the command line.
pub fn shell_call_card(args: &Value) -> Option<CallView> {
    Some(CallView::Terminal {
        title: args["command"].as_str()?.to_owned(),
        description: None,
        cwd: None,
    })
}

/// A `shell` result: the `terminal` card with the output and an exit code (1 for a failure).
pub fn shell_result_card(args: &Value, record: &ResultRecord<'_>) -> Option<ResultView> {
    Some(ResultView::Terminal {
        title: Some(args["command"].as_str()?.to_owned()),
        output: Some(record.text()),
        exit_code: Some(i32::from(record.is_error)),
        signal: None,
    })
}
