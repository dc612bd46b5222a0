//! Presentation cards: the typed render intents a tool returns so that a UI can draw its calls
//! and results without knowing tool names.
//!
//! A definition may carry two pure presenters: `present_call(args)` gives a [`CallView`] for a
//! call about to run (or streaming), `present_result(args, record)` a [`ResultView`] for a
//! finished one, where the [`ResultRecord`] holds what a session log keeps of the result: its
//! model-facing content, its error flag and its presentation metadata, never the canonical value.
//! `None` selects the generic card. Both serialize with a `card` tag and the field names of the
//! specification (`rawInput`, `exitCode`, `totalLines`, ...), so a UI written against it reads
//! them as they are.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::content::ContentBlock;

/// A place in a file a call touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The file.
    pub path: String,
    /// The 1-based line, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// A change to one file: its text before (absent for a new file) and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// The file.
    pub path: String,
    /// The text before the change; `None` for a file the call creates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_text: Option<String>,
    /// The text after the change.
    pub new_text: String,
}

/// One numbered line of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumberedLine {
    /// The 1-based line number in the file.
    pub number: u64,
    /// The line's text, without its line break.
    pub text: String,
}

/// The matches of a search in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMatches {
    /// The file.
    pub path: String,
    /// The matching lines.
    pub lines: Vec<NumberedLine>,
}

/// How a call will be shown before or while it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "snake_case")]
pub enum CallView {
    /// Any call: a title, and what the UI may show of the input.
    #[serde(rename_all = "camelCase")]
    Generic {
        /// What the call does, in a few words.
        title: String,
        /// A kind a UI may pick an icon by (`read`, `edit`, `search`, `execute`, `fetch`, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        /// The arguments as given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw_input: Option<Value>,
        /// Text to show under the title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// Files the call touches.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locations: Option<Vec<Location>>,
    },
    /// A command run in a terminal.
    Terminal {
        /// The command line.
        title: String,
        /// What the command is for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The working directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// Changes to files.
    Diff {
        /// What the change is.
        title: String,
        /// The changes.
        diffs: Vec<FileDiff>,
        /// Files the call touches.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        locations: Option<Vec<Location>>,
    },
}

/// The two shapes of a finished search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum SearchShape {
    /// Matching lines grouped by file (a grep).
    Matches {
        /// The files and their matching lines.
        matches: Vec<FileMatches>,
    },
    /// A flat list of paths (a glob).
    Paths {
        /// The paths.
        paths: Vec<String>,
    },
}

/// One source a web search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSource {
    /// The page title.
    pub title: String,
    /// The address.
    pub url: String,
    /// A short excerpt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// The two kinds of a finished web retrieval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WebKind {
    /// A search: the sources found.
    Search {
        /// The query.
        query: String,
        /// The sources, best first.
        sources: Vec<WebSource>,
    },
    /// A fetch: what was retrieved.
    #[serde(rename_all = "camelCase")]
    Fetch {
        /// The address fetched.
        url: String,
        /// The HTTP status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// The content type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_type: Option<String>,
        /// A summary of what came back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
}

/// How a finished call's result will be shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "card", rename_all = "snake_case")]
pub enum ResultView {
    /// Any result: a title and text.
    Generic {
        /// A title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
    },
    /// A command's output.
    #[serde(rename_all = "camelCase")]
    Terminal {
        /// A title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// What the command printed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// Its exit code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// The signal that ended it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signal: Option<String>,
    },
    /// Changes made to files.
    Diff {
        /// A title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The changes.
        diffs: Vec<FileDiff>,
    },
    /// A finished search; `truncated` and `total` tell a UI when the list is not all there was.
    Search {
        /// Matches by file or a list of paths.
        #[serde(flatten)]
        shape: SearchShape,
        /// A title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// Whether the list was cut.
        truncated: bool,
        /// How many there were in all (matches or paths).
        total: u64,
    },
    /// A window of a file, line-numbered.
    #[serde(rename_all = "camelCase")]
    Read {
        /// A title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The file.
        path: String,
        /// The 1-based first line the read asked for (kept when `lines` is empty).
        offset: u64,
        /// The lines, with their numbers in the file.
        lines: Vec<NumberedLine>,
        /// How many lines the file has.
        total_lines: u64,
        /// The language, for highlighting.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lang: Option<String>,
        /// The plain text a UI without this card shows instead.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
    },
    /// A finished web retrieval.
    Web {
        /// A search or a fetch.
        #[serde(flatten)]
        kind: WebKind,
        /// A title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
}

/// What a session log keeps of a finished call, and all a result presenter may read: the
/// canonical value is not part of it, so a card can be drawn again from the log alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResultRecord<'a> {
    /// The model-facing content.
    pub content: &'a [ContentBlock],
    /// Whether the call failed.
    pub is_error: bool,
    /// The presentation metadata computed for the call (top-level calls only).
    pub meta: Option<&'a Value>,
}

impl ResultRecord<'_> {
    /// The text blocks of the content, joined by line breaks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A call presenter: a pure function of the arguments.
pub type PresentCallFn = dyn Fn(&Value) -> Option<CallView> + Send + Sync;
/// A result presenter: a pure function of the arguments and the logged record.
pub type PresentResultFn = dyn Fn(&Value, &ResultRecord<'_>) -> Option<ResultView> + Send + Sync;

impl CallView {
    /// The generic card of a call of `tool` with `args`.
    pub fn generic(tool: &str, args: &Value) -> Self {
        CallView::Generic {
            title: tool.to_owned(),
            kind: None,
            raw_input: Some(tools_schema::deep::clone_value(args)),
            content: None,
            locations: None,
        }
    }
}

impl ResultView {
    /// The generic card of a result: its text.
    pub fn generic(record: &ResultRecord<'_>) -> Self {
        ResultView::Generic {
            title: None,
            content: Some(record.text()),
        }
    }
}
