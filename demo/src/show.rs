//! Drawing cards as terminal text: colour with plain ANSI codes when asked, plain text
//! otherwise.

use tools_runtime::cards::{CallView, FileDiff, ResultView, SearchShape};

/// Whether to colour, and the colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Colour on (ANSI escape codes) or off (plain text).
    pub color: bool,
}

impl Style {
    /// Colour when `stdout` is a terminal and `NO_COLOR` is unset or empty.
    pub fn detect() -> Style {
        use std::io::IsTerminal;
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: std::io::stdout().is_terminal() && !no_color,
        }
    }

    /// Plain text.
    pub const PLAIN: Style = Style { color: false };

    fn paint(self, code: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Bold.
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
    /// Dim, for what matters less.
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
    /// Red: removed lines, failures.
    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }
    /// Green: added lines, successes.
    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }
    /// Yellow: questions and warnings.
    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }
    /// Bold cyan: act headings.
    pub fn heading(self, text: &str) -> String {
        self.paint("1;36", text)
    }
    /// Cyan: headings and hunk headers.
    pub fn cyan(self, text: &str) -> String {
        self.paint("36", text)
    }
}

/// `n` and `noun`, with an `s` unless `n` is 1.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A call card as lines of text.
pub fn call_card(view: &CallView, style: Style) -> Vec<String> {
    match view {
        CallView::Generic {
            title,
            kind,
            content,
            raw_input,
            ..
        } => {
            let mut head = format!("▸ {}", style.bold(title));
            if let Some(kind) = kind {
                head.push_str(&style.dim(&format!("  [{kind}]")));
            }
            if let Some(content) = content {
                head.push_str(&style.dim(&format!("  {content}")));
            }
            let mut out = vec![head];
            if let Some(input) = raw_input {
                out.push(style.dim(&format!("  {input}")));
            }
            out
        }
        CallView::Terminal { title, .. } => {
            vec![format!("{} {}", style.dim("$"), style.bold(title))]
        }
        CallView::Diff { title, diffs, .. } => {
            let mut out = vec![format!("▸ {}", style.bold(title))];
            for diff in diffs {
                out.extend(diff_lines(diff, style));
            }
            out
        }
    }
}

/// A result card as lines of text; `is_error` colours a generic card as a failure.
pub fn result_card(view: &ResultView, is_error: bool, style: Style) -> Vec<String> {
    match view {
        ResultView::Generic { title, content } => {
            let mut out = Vec::new();
            if let Some(title) = title {
                out.push(style.bold(title));
            }
            for line in content.as_deref().unwrap_or_default().lines() {
                out.push(if is_error {
                    style.red(&format!("✗ {line}"))
                } else {
                    line.to_owned()
                });
            }
            out
        }
        ResultView::Read {
            path,
            lines,
            total_lines,
            lang,
            ..
        } => {
            let mut head = format!("{path} · {}", count(*total_lines, "line"));
            if let Some(lang) = lang {
                head.push_str(&format!(" · {lang}"));
            }
            let mut out = vec![style.dim(&head)];
            let width = lines
                .last()
                .map_or(1, |l| l.number.to_string().len())
                .max(3);
            for line in lines {
                out.push(format!(
                    "{} {}",
                    style.dim(&format!("{:>width$} │", line.number)),
                    line.text
                ));
            }
            out
        }
        ResultView::Search {
            shape,
            title,
            truncated,
            total,
        } => {
            let mut head = count(*total, "matching line");
            if let Some(title) = title {
                head.push_str(&format!(" for {title}"));
            }
            if *truncated {
                head.push_str(" (cut)");
            }
            let mut out = vec![style.dim(&head)];
            match shape {
                SearchShape::Matches { matches } => {
                    for file in matches {
                        out.push(style.bold(&file.path));
                        for line in &file.lines {
                            out.push(format!(
                                "{} {}",
                                style.dim(&format!("{:>5} │", line.number)),
                                line.text
                            ));
                        }
                    }
                }
                SearchShape::Paths { paths } => out.extend(paths.iter().cloned()),
            }
            out
        }
        ResultView::Diff { title, diffs } => {
            let mut out = Vec::new();
            if let Some(title) = title {
                out.push(style.bold(title));
            }
            for diff in diffs {
                out.extend(diff_lines(diff, style));
            }
            out
        }
        ResultView::Terminal {
            output,
            exit_code,
            signal,
            ..
        } => {
            let mut out: Vec<String> = output
                .as_deref()
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect();
            match (exit_code, signal) {
                (_, Some(signal)) => out.push(style.red(&format!("killed by {signal}"))),
                (Some(0), None) => out.push(style.dim("exit 0")),
                (Some(code), None) => out.push(style.red(&format!("exit {code}"))),
                (None, None) => {}
            }
            out
        }
        ResultView::Web { title, .. } => vec![style.bold(title.as_deref().unwrap_or("web"))],
    }
}

/// A file change as a unified diff (three lines of context), removed lines red and added green.
pub fn diff_lines(diff: &FileDiff, style: Style) -> Vec<String> {
    let old = diff.old_text.as_deref().unwrap_or("");
    let from = match diff.old_text {
        Some(_) => format!("--- a/{}", diff.path),
        None => "--- /dev/null".to_owned(),
    };
    let mut out = vec![
        style.bold(&from),
        style.bold(&format!("+++ b/{}", diff.path)),
    ];
    let text = similar::TextDiff::from_lines(old, &diff.new_text);
    let unified = text.unified_diff();
    let mut unified = unified;
    for hunk in unified.context_radius(3).iter_hunks() {
        out.push(style.cyan(&hunk.header().to_string()));
        for change in hunk.iter_changes() {
            let value = change.value();
            let line = value.strip_suffix('\n').unwrap_or(value);
            out.push(match change.tag() {
                similar::ChangeTag::Equal => format!(" {line}"),
                similar::ChangeTag::Delete => style.red(&format!("-{line}")),
                similar::ChangeTag::Insert => style.green(&format!("+{line}")),
            });
        }
    }
    out
}
