//! The report of a [`Stats`]: the summary (one row per presentation), the marks on figures
//! that say less, the bottom line, what each row counts, the per-tool table and the findings on
//! request, as text of at most [`REPORT_COLUMNS`] columns or as JSON.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;
use tools_dialects::{Dialect, Finding};

use super::{CodeForm, Encoding, NativeCell, Stats, Tokens};

/// What the report shows besides the summary and the bottom line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detail {
    /// A table of every tool's tokens per dialect.
    pub tools: bool,
    /// What each marked figure's projections dropped or widened, per tool.
    pub findings: bool,
}

/// The width the text report keeps to.
pub const REPORT_COLUMNS: usize = 100;

/// How many findings the text report lists for one tool in one dialect.
const FINDINGS_PER_CELL: usize = 8;

/// The marks of one figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Marks {
    /// Some projection dropped or widened part of a schema (or, for code, the SDK's types say
    /// less than a schema): `~`.
    pub lossy: bool,
    /// A strict dialect refused some tool, which is sent non-strict: `*`.
    pub non_strict: bool,
    /// Some tool cannot be sent in the dialect and is left out of the figure: `!`.
    pub refused: bool,
}

impl Marks {
    fn text(self) -> String {
        let mut out = String::new();
        for (on, mark) in [
            (self.lossy, '~'),
            (self.non_strict, '*'),
            (self.refused, '!'),
        ] {
            if on {
                out.push(mark);
            }
        }
        out
    }

    fn of_cell(cell: &NativeCell) -> Marks {
        Marks {
            lossy: !cell.lossy.is_empty(),
            non_strict: cell.non_strict,
            refused: cell.tokens.is_none(),
        }
    }

    fn or(self, other: Marks) -> Marks {
        Marks {
            lossy: self.lossy || other.lossy,
            non_strict: self.non_strict || other.non_strict,
            refused: self.refused || other.refused,
        }
    }
}

/// A presentation of the summary, with its figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRow {
    /// `native, anthropic` or `code, python, index`.
    pub label: String,
    /// The figure per dialect: one for a native row, every dialect for a code row.
    pub per_dialect: Vec<(Dialect, Tokens)>,
    /// The marks.
    pub marks: Marks,
}

impl SummaryRow {
    /// The lowest and highest figure over its dialects, in `o200k_base` (index 0) or
    /// `cl100k_base` (index 1).
    pub fn range(&self, encoding: usize) -> (usize, usize) {
        let values = self.per_dialect.iter().map(|(_, t)| t[encoding]);
        (values.clone().min().unwrap_or(0), values.max().unwrap_or(0))
    }
}

/// One figure of the summary: a presentation in a dialect.
#[derive(Debug, Clone)]
struct Figure {
    label: String,
    dialect: Dialect,
    tokens: Tokens,
    marks: Marks,
}

/// `1,335`
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1,335` or `1,320-1,363`.
fn range_text((low, high): (usize, usize)) -> String {
    if low == high {
        thousands(low)
    } else {
        format!("{}-{}", thousands(low), thousands(high))
    }
}

/// `text` cut into lines of at most `width` columns at spaces (a longer word keeps a line of
/// its own), its leading spaces kept, each line after the first starting with `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let lead = &text[..text.len() - text.trim_start_matches(' ').len()];
    let mut out = String::new();
    let mut line = lead.to_owned();
    let mut fresh = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !fresh && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_owned();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line.push_str(word);
        fresh = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A short name of a dialect for the per-tool table's columns.
fn short(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAiChat { strict: true } => "chat-s",
        Dialect::OpenAiChat { strict: false } => "chat",
        Dialect::OpenAiResponses { strict: true } => "resp-s",
        Dialect::OpenAiResponses { strict: false } => "resp",
        Dialect::Anthropic { strict: true } => "anth-s",
        Dialect::Anthropic { strict: false } => "anth",
        Dialect::GeminiParameters => "gem-p",
        Dialect::GeminiJsonSchema => "gem-js",
        Dialect::Mcp => "mcp",
    }
}

/// `x` as a ratio: `2.4x`.
fn times(numerator: usize, denominator: usize) -> String {
    if denominator == 0 {
        return "-".to_owned();
    }
    format!("{:.1}x", numerator as f64 / denominator as f64)
}

/// The JSON report (`--format json`).
#[derive(Debug, Serialize)]
struct JsonReport<'a> {
    tools: usize,
    encodings: [&'static str; 2],
    presentations: Vec<JsonPresentation>,
    cheapest: Option<JsonCheapest>,
    bottom_line: String,
    counts: JsonCounts,
    per_tool: Vec<JsonTool<'a>>,
    code_degraded: Vec<JsonDegraded<'a>>,
}

/// Tokens in both encodings, named.
#[derive(Debug, Serialize)]
struct JsonTokens {
    o200k_base: usize,
    cl100k_base: usize,
}

impl From<Tokens> for JsonTokens {
    fn from(tokens: Tokens) -> JsonTokens {
        JsonTokens {
            o200k_base: tokens[0],
            cl100k_base: tokens[1],
        }
    }
}

#[derive(Debug, Serialize)]
struct JsonPresentation {
    presentation: &'static str,
    language: Option<&'static str>,
    dialect: &'static str,
    tokens: JsonTokens,
    marks: Marks,
}

#[derive(Debug, Serialize)]
struct JsonCheapest {
    label: String,
    dialect: &'static str,
    tokens: JsonTokens,
    exact: bool,
}

#[derive(Debug, Serialize)]
struct JsonCell<'a> {
    tokens: Option<JsonTokens>,
    refused: Option<&'a str>,
    non_strict: bool,
    lossy: &'a [Finding],
}

impl<'a> From<&'a NativeCell> for JsonCell<'a> {
    fn from(cell: &'a NativeCell) -> JsonCell<'a> {
        JsonCell {
            tokens: cell.tokens.map(JsonTokens::from),
            refused: cell.refused.as_deref(),
            non_strict: cell.non_strict,
            lossy: &cell.lossy,
        }
    }
}

#[derive(Debug, Serialize)]
struct JsonCounts {
    native: Contents,
    code_full_sdk: &'static str,
    code_index: &'static str,
}

/// What the rows of each kind count, by kind.
type Contents = std::collections::BTreeMap<&'static str, String>;

#[derive(Debug, Serialize)]
struct JsonTool<'a> {
    name: &'a str,
    native: std::collections::BTreeMap<&'static str, JsonCell<'a>>,
}

#[derive(Debug, Serialize)]
struct JsonDegraded<'a> {
    tool: &'a str,
    first: &'a str,
}

impl Stats {
    /// The marks of the native figure of the dialect at `index`.
    fn native_marks(&self, index: usize) -> Marks {
        self.tools
            .iter()
            .filter_map(|t| t.native.get(index))
            .fold(Marks::default(), |marks, cell| {
                marks.or(Marks::of_cell(cell))
            })
    }

    /// One row per presentation: native per dialect, then Code Mode per language and form.
    pub fn summary(&self) -> Vec<SummaryRow> {
        let mut rows = Vec::new();
        for (index, dialect) in Dialect::ALL.into_iter().enumerate() {
            rows.push(SummaryRow {
                label: format!("native, {dialect}"),
                per_dialect: vec![(
                    dialect,
                    self.native_total.get(index).copied().unwrap_or([0, 0]),
                )],
                marks: self.native_marks(index),
            });
        }
        for code in &self.code {
            rows.push(SummaryRow {
                label: code.label(),
                per_dialect: Dialect::ALL
                    .into_iter()
                    .enumerate()
                    .map(|(index, dialect)| (dialect, code.total(index)))
                    .collect(),
                marks: Marks {
                    lossy: self.code_degradations > 0,
                    ..Marks::default()
                },
            });
        }
        rows
    }

    /// What each row counts, in words, one line per kind of row.
    pub fn row_contents(&self) -> Vec<(String, String)> {
        let mcp = if self.mcp_as_sent {
            let mut keys = vec![
                "name".to_owned(),
                "description".to_owned(),
                "inputSchema".to_owned(),
                "outputSchema".to_owned(),
            ];
            keys.extend(self.mcp_extra_keys.iter().cloned());
            format!(
                "each tools/list entry as the catalog file has it, every key counted: {}",
                and_list(&keys)
            )
        } else {
            "each tools/list entry's name, description, inputSchema and outputSchema (a catalog \
             keeps no more; `tools-codegen stats` on a tools/list file counts title, annotations \
             and _meta too)"
                .to_owned()
        };
        vec![
            (
                "native, openai-*".to_owned(),
                "per tool {\"type\":\"function\",\"function\":{name, description, parameters, \
                 strict}} (responses: the same without the function wrapper)"
                    .to_owned(),
            ),
            (
                "native, anthropic*".to_owned(),
                "per tool {name, description, input_schema, strict when strict}".to_owned(),
            ),
            (
                "native, gemini-*".to_owned(),
                "per tool {name, description, parameters or parametersJsonSchema}".to_owned(),
            ),
            ("native, mcp".to_owned(), mcp),
            (
                "code, full SDK".to_owned(),
                "the tools:code-only and tools:sdk prompt sections (instructions and the SDK) and \
                 the run_code definition, in each dialect (the range spans the dialects)"
                    .to_owned(),
            ),
            (
                "code, index".to_owned(),
                "the same with the index in place of the SDK, and the describe_tools definition"
                    .to_owned(),
            ),
        ]
    }

    /// The cheapest figure (in `o200k_base`) of any presentation and dialect, and the cheapest
    /// one with no `~` or `!` mark.
    fn cheapest(&self) -> (Option<Figure>, Option<Figure>) {
        let mut any: Option<Figure> = None;
        let mut exact: Option<Figure> = None;
        for row in self.summary() {
            for (dialect, tokens) in &row.per_dialect {
                let figure = || Figure {
                    label: row.label.clone(),
                    dialect: *dialect,
                    tokens: *tokens,
                    marks: row.marks,
                };
                if any.as_ref().is_none_or(|best| tokens[0] < best.tokens[0]) {
                    any = Some(figure());
                }
                if !row.marks.lossy
                    && !row.marks.refused
                    && exact.as_ref().is_none_or(|best| tokens[0] < best.tokens[0])
                {
                    exact = Some(figure());
                }
            }
        }
        (any, exact)
    }

    /// The report's conclusion, in words: which presentation is cheapest for this catalog and
    /// by how much, whether that figure is exact, and what Code Mode costs against native, up
    /// front, dialect by dialect.
    pub fn bottom_line(&self) -> String {
        let (any, exact) = self.cheapest();
        let Some(Figure {
            label,
            dialect,
            tokens,
            marks,
        }) = any
        else {
            return String::new();
        };
        let mut out = String::new();
        let where_ = |label: &str, dialect: Dialect| {
            if label.starts_with("native") {
                label.to_owned()
            } else {
                format!("{label} (in {dialect})")
            }
        };
        let _ = write!(
            out,
            "Cheapest for this catalog: {}, {} tokens (o200k_base).",
            where_(&label, dialect),
            thousands(tokens[0])
        );
        if marks.lossy || marks.refused {
            let why = if marks.refused {
                "it leaves out tools it cannot send (marked !)"
            } else {
                "its projection drops or widens part of the schemas (marked ~; --findings says \
                 what)"
            };
            match &exact {
                Some(exact) => {
                    let _ = write!(
                        out,
                        " It is cheap partly because it says less: {why}. The cheapest exact \
                         presentation is {}, {} tokens.",
                        where_(&exact.label, exact.dialect),
                        thousands(exact.tokens[0])
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        " It is cheap partly because it says less: {why}; no presentation here \
                         is exact."
                    );
                }
            }
        }
        // Native against the cheapest Code Mode form, dialect by dialect (a dialect that
        // cannot send every tool has no native figure to compare).
        let mut more: Vec<(Dialect, usize, usize)> = Vec::new();
        let mut less: Vec<(Dialect, usize, usize)> = Vec::new();
        let mut forms: BTreeSet<String> = BTreeSet::new();
        for (index, dialect) in Dialect::ALL.into_iter().enumerate() {
            if self.native_marks(index).refused {
                continue;
            }
            let native = self.native_total.get(index).map_or(0, |t| t[0]);
            let Some(best) = self.code.iter().min_by_key(|c| c.total(index)[0]) else {
                continue;
            };
            let code = best.total(index)[0];
            forms.insert(best.label());
            if code > native {
                more.push((dialect, code, native));
            } else {
                less.push((dialect, code, native));
            }
        }
        let forms: Vec<String> = forms.into_iter().collect();
        let form = and_list(&forms);
        let span = |pairs: &[(Dialect, usize, usize)], f: &dyn Fn(usize, usize) -> usize| {
            let values: Vec<usize> = pairs.iter().map(|(_, c, n)| f(*c, *n)).collect();
            let low = values.iter().copied().min().unwrap_or(0);
            let high = values.iter().copied().max().unwrap_or(0);
            range_text((low, high)).replace('-', " to ")
        };
        let ratios = |pairs: &[(Dialect, usize, usize)]| {
            let mut values: Vec<(usize, usize)> = pairs.iter().map(|(_, c, n)| (*c, *n)).collect();
            values.sort_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)));
            match (values.first(), values.last()) {
                (Some(low), Some(high)) if low != high => {
                    format!("{} to {}", times(low.0, low.1), times(high.0, high.1))
                }
                (Some(one), _) => times(one.0, one.1),
                _ => String::new(),
            }
        };
        let names = |pairs: &[(Dialect, usize, usize)]| {
            and_list(
                &pairs
                    .iter()
                    .map(|(d, _, _)| d.name().to_owned())
                    .collect::<Vec<_>>(),
            )
        };
        match (more.is_empty(), less.is_empty()) {
            (false, true) => {
                let _ = write!(
                    out,
                    " Code Mode costs more up front than native in every dialect: its cheapest \
                     form here ({form}) costs {} tokens more ({} native). It can pay back on \
                     turns that chain several calls, whose results stay inside the program.",
                    span(&more, &|c, n| c - n),
                    ratios(&more)
                );
            }
            (true, false) => {
                let _ = write!(
                    out,
                    " Code Mode costs less up front than native in every dialect: {form} saves \
                     {} tokens ({} native).",
                    span(&less, &|c, n| n - c),
                    ratios(&less)
                );
            }
            (false, false) => {
                let _ = write!(
                    out,
                    " Code Mode ({form}) costs more up front than native in {} (by {} tokens), \
                     and less in {} (by {}).",
                    names(&more),
                    span(&more, &|c, n| c - n),
                    names(&less),
                    span(&less, &|c, n| n - c)
                );
            }
            (true, true) => {}
        }
        out
    }

    /// The report the CLI prints, at most [`REPORT_COLUMNS`] wide: the summary (one row per
    /// presentation), the bottom line, what each row counts, and, as `detail` asks, the
    /// per-tool table and the findings behind the marks.
    pub fn to_text(&self, detail: Detail) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Tokens a request carries up front for {} {}, per presentation:\n",
            self.tools.len(),
            if self.tools.len() == 1 {
                "tool"
            } else {
                "tools"
            }
        );
        let _ = writeln!(
            out,
            "{:<34} {:>14} {:>14} {:>16}  marks",
            "presentation", "o200k_base", "cl100k_base", "vs cheapest"
        );
        let (cheapest, _) = self.cheapest();
        let floor = cheapest.as_ref().map_or(0, |c| c.tokens[0]);
        for row in self.summary() {
            let (low, high) = row.range(0);
            let versus = if high == floor {
                "cheapest".to_owned()
            } else if low == high {
                format!("+{}", thousands(high - floor))
            } else {
                format!(
                    "+{} to +{}",
                    thousands(low - floor),
                    thousands(high - floor)
                )
            };
            let _ = writeln!(
                out,
                "{:<34} {:>14} {:>14} {:>16}  {}",
                row.label,
                range_text(row.range(0)),
                range_text(row.range(1)),
                versus,
                row.marks.text()
            );
        }
        // An unmarked row ends in spaces.
        out = out
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n");
        out.push_str("\n\n");
        out.push_str(&wrap(&self.bottom_line(), REPORT_COLUMNS, ""));
        out.push('\n');
        out.push_str(&wrap(
            "Marks: ~ some projection dropped or widened part of a schema (for code: the SDK's \
             types say less than a schema), so the figure is cheap partly because it says less; \
             * a strict dialect refused some tool, which is counted as sent non-strict; ! some \
             tool cannot be sent in this dialect and is left out of the figure.",
            REPORT_COLUMNS,
            "  ",
        ));
        out.push_str("\nWhat each row counts (definitions as compact JSON):\n");
        for (row, what) in self.row_contents() {
            out.push_str(&wrap(&format!("  {row}: {what}"), REPORT_COLUMNS, "      "));
        }
        out.push('\n');
        out.push_str(&wrap(
            "o200k_base and cl100k_base are OpenAI's tokenizers, counted offline. Anthropic and \
             Gemini do not publish theirs: their rows use the same encodings and are \
             approximations. Providers also render definitions into the prompt their own way, so \
             every figure compares presentations rather than predicting a bill.",
            REPORT_COLUMNS,
            "",
        ));
        for (tool, dialect, why) in &self.refused {
            out.push_str(&wrap(
                &format!(
                    "refused: {} in {dialect}: {why}",
                    tools_schema::excerpt::quoted(tool)
                ),
                REPORT_COLUMNS,
                "  ",
            ));
        }
        if detail.tools {
            out.push('\n');
            out.push_str(&self.tools_table());
        }
        if detail.findings {
            out.push('\n');
            out.push_str(&self.findings_text());
        }
        if !detail.tools || !detail.findings {
            let mut asks = Vec::new();
            if !detail.tools {
                asks.push("every tool's figures: --tools".to_owned());
            }
            if !detail.findings {
                asks.push("what the marked figures dropped or widened: --findings".to_owned());
            }
            asks.push("all of it for machines: --format json".to_owned());
            out.push('\n');
            out.push_str(&wrap(
                &format!("More: {}.", asks.join("; ")),
                REPORT_COLUMNS,
                "  ",
            ));
        }
        out
    }

    /// Every tool's `o200k_base` tokens per dialect, marked like the summary, in
    /// [`REPORT_COLUMNS`] columns (long names are cut).
    fn tools_table(&self) -> String {
        const NAME: usize = 18;
        let mut out = String::new();
        out.push_str(&wrap(
            "Per tool, o200k_base tokens of its definition (chat = openai-chat, resp = \
             openai-responses, anth = anthropic, gem-p = gemini-parameters, gem-js = \
             gemini-json-schema; -s strict):",
            REPORT_COLUMNS,
            "  ",
        ));
        out.push('\n');
        let _ = write!(out, "{:<NAME$}", "tool");
        for dialect in Dialect::ALL {
            let _ = write!(out, " {:>8}", short(dialect));
        }
        out.push('\n');
        for tool in &self.tools {
            let shown = format!("{:?}", tool.name);
            let shown = shown.trim_matches('"');
            let name: String = if shown.chars().count() > NAME {
                shown.chars().take(NAME - 1).chain(['…']).collect()
            } else {
                shown.to_owned()
            };
            let _ = write!(out, "{name:<NAME$}");
            for cell in &tool.native {
                let text = match cell.tokens {
                    Some(t) => format!("{}{}", thousands(t[0]), Marks::of_cell(cell).text()),
                    None => "!".to_owned(),
                };
                let _ = write!(out, " {text:>8}");
            }
            out.push('\n');
        }
        out
    }

    /// What each marked figure's projections dropped or widened, refused or sent non-strict,
    /// tool by tool, at most [`FINDINGS_PER_CELL`] findings per tool and dialect.
    fn findings_text(&self) -> String {
        let mut out = String::from("What the marked figures dropped or widened:\n");
        let mut any = false;
        for tool in &self.tools {
            for (cell, dialect) in tool.native.iter().zip(Dialect::ALL) {
                let marks = Marks::of_cell(cell);
                if marks == Marks::default() {
                    continue;
                }
                any = true;
                let name = tools_schema::excerpt::quoted(&tool.name);
                let mut head = format!("{name} in {dialect} ({})", marks.text());
                if cell.non_strict {
                    head.push_str(": refused strict, sent non-strict");
                }
                if let Some(why) = &cell.refused {
                    head.push_str(&format!(": not sent: {why}"));
                }
                out.push_str(&wrap(&head, REPORT_COLUMNS, "    "));
                for finding in cell.lossy.iter().take(FINDINGS_PER_CELL) {
                    out.push_str(&wrap(&format!("  {finding}"), REPORT_COLUMNS, "    "));
                }
                if cell.lossy.len() > FINDINGS_PER_CELL {
                    let _ = writeln!(
                        out,
                        "  ({} more; --format json lists them all)",
                        cell.lossy.len() - FINDINGS_PER_CELL
                    );
                }
            }
        }
        if self.code_degradations > 0 {
            any = true;
            out.push_str(&wrap(
                &format!(
                    "code (~): the SDK's types say less than the schemas in {} {} of {} {}:",
                    self.code_degradations,
                    if self.code_degradations == 1 {
                        "place"
                    } else {
                        "places"
                    },
                    self.code_degraded_tools.len(),
                    if self.code_degraded_tools.len() == 1 {
                        "tool"
                    } else {
                        "tools"
                    }
                ),
                REPORT_COLUMNS,
                "    ",
            ));
            for (tool, first) in &self.code_degraded_tools {
                out.push_str(&wrap(
                    &format!("  {}: {first}", tools_schema::excerpt::quoted(tool)),
                    REPORT_COLUMNS,
                    "    ",
                ));
            }
        }
        if !any {
            out.push_str("  nothing: every figure is exact.\n");
        }
        out
    }

    /// The report as JSON (`--format json`): every presentation in every dialect with its
    /// figures and marks, the cheapest, the bottom line, what each row counts, every tool's
    /// cells with their findings, and the tools whose SDK types degrade.
    pub fn to_json(&self) -> String {
        let mut presentations = Vec::new();
        for (index, dialect) in Dialect::ALL.into_iter().enumerate() {
            presentations.push(JsonPresentation {
                presentation: "native",
                language: None,
                dialect: dialect.name(),
                tokens: self
                    .native_total
                    .get(index)
                    .copied()
                    .unwrap_or([0, 0])
                    .into(),
                marks: self.native_marks(index),
            });
        }
        for code in &self.code {
            for (index, dialect) in Dialect::ALL.into_iter().enumerate() {
                presentations.push(JsonPresentation {
                    presentation: match code.form {
                        CodeForm::FullSdk => "code-full-sdk",
                        CodeForm::Index => "code-index",
                    },
                    language: Some(code.language.name()),
                    dialect: dialect.name(),
                    tokens: code.total(index).into(),
                    marks: Marks {
                        lossy: self.code_degradations > 0,
                        ..Marks::default()
                    },
                });
            }
        }
        let (cheapest, _) = self.cheapest();
        let contents = self.row_contents();
        let content = |prefix: &str| {
            contents
                .iter()
                .find(|(row, _)| row.starts_with(prefix))
                .map(|(_, what)| what.clone())
                .unwrap_or_default()
        };
        let mut native = Contents::new();
        for (key, prefix) in [
            ("openai", "native, openai"),
            ("anthropic", "native, anthropic"),
            ("gemini", "native, gemini"),
            ("mcp", "native, mcp"),
        ] {
            native.insert(key, content(prefix));
        }
        let report = JsonReport {
            tools: self.tools.len(),
            encodings: [Encoding::O200kBase.name(), Encoding::Cl100kBase.name()],
            presentations,
            cheapest: cheapest.map(|c| JsonCheapest {
                label: c.label,
                dialect: c.dialect.name(),
                tokens: c.tokens.into(),
                exact: !c.marks.lossy && !c.marks.refused,
            }),
            bottom_line: self.bottom_line(),
            counts: JsonCounts {
                native,
                code_full_sdk: "the tools:code-only and tools:sdk prompt sections (instructions and the SDK) and the run_code definition in the dialect",
                code_index: "the tools:code-only and tools:sdk prompt sections (instructions and the index) and the run_code and describe_tools definitions in the dialect",
            },
            per_tool: self
                .tools
                .iter()
                .map(|tool| JsonTool {
                    name: &tool.name,
                    native: Dialect::ALL
                        .iter()
                        .map(|d| d.name())
                        .zip(tool.native.iter().map(JsonCell::from))
                        .collect(),
                })
                .collect(),
            code_degraded: self
                .code_degraded_tools
                .iter()
                .map(|(tool, first)| JsonDegraded { tool, first })
                .collect(),
        };
        let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
        text.push('\n');
        text
    }
}
