//! What each presentation of a catalog costs in tokens (behind the `stats` feature).
//!
//! [`stats`] counts what a request carries up front for a catalog, per presentation:
//!
//! | presentation | what is counted (compact JSON for a definition) |
//! | --- | --- |
//! | native, one row per [`Dialect`] | every tool's definition as the dialect's request carries it: OpenAI `{"type": "function", "function": {name, description, parameters, strict}}` (Responses without the `function` wrapper), Anthropic `{name, description, input_schema, strict?}`, Gemini `{name, description, parameters}` or `parametersJsonSchema` |
//! | native, `mcp` | every `tools/list` entry as the server sent it: with [`stats_sent`] and [`SentEntries`] (the CLI), every key the catalog file holds (`title`, `annotations`, `_meta`, `icons`, ...); from a [`Catalog`] alone, `name`, `description`, `inputSchema` and `outputSchema` (all a catalog keeps) |
//! | code, full SDK, per language | the `tools:code-only` and `tools:sdk` prompt sections (the instructions and the SDK) and the `run_code` definition in each dialect |
//! | code, index, per language | the same with the index in place of the SDK, and the `describe_tools` definition as well |
//!
//! A code presentation sends its own tools' definitions in the provider's dialect, so it has a
//! figure per dialect ([`CodeStats::total`]); the summary shows their range.
//!
//! Counting is offline, with `tiktoken-rs` and its embedded BPE tables (`o200k_base`,
//! `cl100k_base`); each encoder is loaded once per process. Providers turn definitions into
//! prompt text their own way (and add a fixed preamble), so even the OpenAI figures compare
//! presentations rather than predicting invoices. Anthropic and Gemini do not publish their
//! tokenizers: their rows are counted with the same OpenAI encodings and are approximations.
//!
//! # Marks
//!
//! A cheap figure can be cheap because it says less. Every native figure knows whether some
//! tool's projection dropped or widened part of its schema (a [`Finding`] of class
//! `annotation-dropped`, `widened`, `narrowed` or `unrepresentable`), whether a strict dialect
//! refused a tool and it went non-strict instead, and whether a tool could not be sent at all
//! (it is left out of the figure and named in [`Stats::refused`]). A code figure knows whether
//! the SDK's types say less than some schema ([`crate::schema_warnings`]). The report marks
//! such figures (`~`, `*`, `!`) and lists the findings on request; [`Stats::bottom_line`] says
//! which presentation is cheapest, whether it is exact, and what Code Mode costs against native.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use serde_json::Value;
use tiktoken_rs::CoreBPE;
use tools_dialects::{Class, Dialect, Finding, Policy};
use tools_schema::Catalog;

use crate::{
    Language, code_only_text, describe_tools_definition, index_section, run_code_definition,
    schema_warnings, sdk_section,
};

mod report;

pub use report::{Detail, Marks, REPORT_COLUMNS, SummaryRow};

/// A tokenizer `stats` counts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `o200k_base` (GPT-4o, GPT-4.1, o-series, GPT-5).
    O200kBase,
    /// `cl100k_base` (GPT-4, GPT-3.5).
    Cl100kBase,
}

impl Encoding {
    /// Both encodings, in a fixed order.
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    /// `o200k_base` or `cl100k_base`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

/// Why tokens could not be counted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// An encoder could not be built from its embedded table.
    #[error("cannot load the {encoding} encoder: {message}")]
    Encoder {
        /// The encoding.
        encoding: &'static str,
        /// What the tokenizer said.
        message: String,
    },
    /// The tokenizer failed on a text (its regular expression gave up).
    #[error("the {encoding} tokenizer failed on {what}")]
    Tokenize {
        /// The encoding.
        encoding: &'static str,
        /// Which text.
        what: String,
    },
}

impl StatsError {
    /// The stable error code: `TOKENIZER_LOAD` or `TOKENIZE`.
    pub fn code(&self) -> &'static str {
        match self {
            StatsError::Encoder { .. } => "TOKENIZER_LOAD",
            StatsError::Tokenize { .. } => "TOKENIZE",
        }
    }
}

/// Both encoders, loaded once.
pub struct Counter {
    o200k: CoreBPE,
    cl100k: CoreBPE,
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Counter { o200k_base, cl100k_base }")
    }
}

impl Counter {
    /// The process's encoders, built from the tables embedded in `tiktoken-rs` on first use.
    ///
    /// # Errors
    ///
    /// An embedded table does not load (a defect of the dependency).
    pub fn get() -> Result<&'static Counter, StatsError> {
        static COUNTER: OnceLock<Result<Counter, StatsError>> = OnceLock::new();
        COUNTER
            .get_or_init(|| {
                let failed = |encoding: Encoding, message: String| StatsError::Encoder {
                    encoding: encoding.name(),
                    message,
                };
                Ok(Counter {
                    o200k: tiktoken_rs::o200k_base()
                        .map_err(|e| failed(Encoding::O200kBase, e.to_string()))?,
                    cl100k: tiktoken_rs::cl100k_base()
                        .map_err(|e| failed(Encoding::Cl100kBase, e.to_string()))?,
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The number of tokens of `text` in `encoding` (special tokens are counted as text).
    ///
    /// # Errors
    ///
    /// The tokenizer failed on the text; `what` names it in the error.
    pub fn count(&self, encoding: Encoding, text: &str, what: &str) -> Result<usize, StatsError> {
        let bpe = match encoding {
            Encoding::O200kBase => &self.o200k,
            Encoding::Cl100kBase => &self.cl100k,
        };
        // The tokenizer unwraps its regular expression's result, which can fail on adversarial
        // text (a backtracking limit): a failure is an error here, not a panic.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            bpe.encode_ordinary(text).len()
        }))
        .map_err(|_| StatsError::Tokenize {
            encoding: encoding.name(),
            what: what.to_owned(),
        })
    }

    fn both(&self, text: &str, what: &str) -> Result<Tokens, StatsError> {
        Ok([
            self.count(Encoding::O200kBase, text, what)?,
            self.count(Encoding::Cl100kBase, text, what)?,
        ])
    }
}

/// Tokens of one text in both encodings: `[o200k_base, cl100k_base]`.
pub type Tokens = [usize; 2];

fn add(a: Tokens, b: Tokens) -> Tokens {
    [a[0] + b[0], a[1] + b[1]]
}

/// The tool entries of a `tools/list` result as an MCP server sent them, by tool name: what the
/// `mcp` row counts, title, annotations, `_meta` and every other key included.
#[derive(Debug, Clone, Default)]
pub struct SentEntries {
    /// Each tool's entry as compact JSON, by name.
    entries: HashMap<String, String>,
    /// The keys the entries have beyond `name`, `description`, `inputSchema` and
    /// `outputSchema`, each once, in order.
    extra_keys: BTreeSet<String>,
}

impl SentEntries {
    /// Reads the tool entries of catalog text (`{"tools": [...]}` or a bare array of tools, as
    /// [`Catalog::from_json_str`] reads it). Lenient: text it cannot read gives no entries, and
    /// an entry without a string `name` is left out; their tools are then counted from the
    /// catalog's four fields.
    pub fn from_json_str(text: &str) -> SentEntries {
        let mut sent = SentEntries::default();
        let Ok(value) = tools_schema::deep::from_str(text) else {
            return sent;
        };
        let tools = match &value {
            Value::Object(map) => map.get("tools").and_then(Value::as_array),
            Value::Array(tools) => Some(tools),
            _ => None,
        };
        for entry in tools.into_iter().flatten() {
            let Some(map) = entry.as_object() else {
                continue;
            };
            let Some(name) = map.get("name").and_then(Value::as_str) else {
                continue;
            };
            for key in map.keys() {
                if !matches!(
                    key.as_str(),
                    "name" | "description" | "inputSchema" | "outputSchema"
                ) {
                    sent.extra_keys.insert(key.clone());
                }
            }
            sent.entries
                .insert(name.to_owned(), tools_schema::deep::to_string(entry));
        }
        tools_schema::deep::drop_value(value);
        sent
    }

    /// How many entries were read.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no entry was read.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// One tool in one dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeCell {
    /// The tokens of its definition; `None` when the dialect cannot send it ([`Self::refused`]).
    pub tokens: Option<Tokens>,
    /// Why the dialect cannot send the tool, when it cannot.
    pub refused: Option<String>,
    /// A strict dialect refused the tool, so it is sent (and counted) non-strict.
    pub non_strict: bool,
    /// What the projection that is sent dropped or widened: its findings of class
    /// `annotation-dropped`, `widened`, `narrowed` or `unrepresentable`.
    pub lossy: Vec<Finding>,
}

/// One tool's native definitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolStats {
    /// The tool's name.
    pub name: String,
    /// Per dialect, in [`Dialect::ALL`] order.
    pub native: Vec<NativeCell>,
}

/// How Code Mode shows the SDK.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeForm {
    /// Every tool's types (`Discovery::Never`).
    FullSdk,
    /// An index of the tools' names, and `describe_tools` (`Discovery::Always`).
    Index,
}

impl CodeForm {
    /// Both forms.
    pub const ALL: [CodeForm; 2] = [CodeForm::FullSdk, CodeForm::Index];

    /// `full SDK` or `index`.
    pub fn name(self) -> &'static str {
        match self {
            CodeForm::FullSdk => "full SDK",
            CodeForm::Index => "index",
        }
    }
}

/// One Code Mode presentation: a language and a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeStats {
    /// The language.
    pub language: Language,
    /// The form.
    pub form: CodeForm,
    /// The `tools:code-only` and `tools:sdk` prompt sections.
    pub sections: Tokens,
    /// Per dialect (in [`Dialect::ALL`] order), Code Mode's own definitions: `run_code`, and
    /// `describe_tools` for the index.
    pub definitions: Vec<Tokens>,
}

impl CodeStats {
    /// Sections and definitions in the dialect at `index` of [`Dialect::ALL`].
    pub fn total(&self, index: usize) -> Tokens {
        add(
            self.sections,
            self.definitions.get(index).copied().unwrap_or([0, 0]),
        )
    }

    /// `code, typescript, full SDK`.
    pub fn label(&self) -> String {
        format!("code, {}, {}", self.language, self.form.name())
    }
}

/// The token costs of a catalog's presentations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Per tool, in catalog (name) order.
    pub tools: Vec<ToolStats>,
    /// Per dialect (in [`Dialect::ALL`] order), the total of the native definitions that can
    /// be sent.
    pub native_total: Vec<Tokens>,
    /// Code Mode, per language and form.
    pub code: Vec<CodeStats>,
    /// `(tool, dialect, why)` for each definition a dialect cannot send.
    pub refused: Vec<(String, Dialect, String)>,
    /// How many places in all the SDK's types say less than the schemas (see
    /// [`crate::schema_warnings`]); the code figures are marked when there are any.
    pub code_degradations: usize,
    /// The tools whose SDK types say less than their schema, with the first place and why.
    pub code_degraded_tools: Vec<(String, String)>,
    /// What the `mcp` row counts beyond `name`, `description`, `inputSchema` and
    /// `outputSchema` (the keys of the [`SentEntries`] read; empty without them).
    pub mcp_extra_keys: Vec<String>,
    /// The `mcp` row counts the entries as sent ([`stats_sent`] with entries read).
    pub mcp_as_sent: bool,
}

/// The classes of finding that make a figure lossy.
fn is_lossy(class: Class) -> bool {
    matches!(
        class,
        Class::AnnotationDropped | Class::Widened | Class::Narrowed | Class::Unrepresentable
    )
}

/// Counts the tokens of `catalog`'s presentations (see the [module docs](self)). The `mcp` row
/// counts the four fields a [`Catalog`] keeps; [`stats_sent`] counts what a server sent.
///
/// # Errors
///
/// The encoders do not load, or the tokenizer fails on a text.
pub fn stats(catalog: &Catalog) -> Result<Stats, StatsError> {
    stats_sent(catalog, &SentEntries::default())
}

/// [`stats`], with the `mcp` row counting each tool's entry as `sent` has it (title,
/// annotations, `_meta`, ...); a tool `sent` lacks is counted from the catalog.
///
/// # Errors
///
/// The encoders do not load, or the tokenizer fails on a text.
pub fn stats_sent(catalog: &Catalog, sent: &SentEntries) -> Result<Stats, StatsError> {
    let counter = Counter::get()?;
    let mut tools = Vec::with_capacity(catalog.tools().len());
    let mut native_total = vec![[0usize; 2]; Dialect::ALL.len()];
    let mut refused = Vec::new();
    // Names as a request would send them (the portable projection), when they can be; MCP
    // sends the names as they are.
    let names =
        tools_dialects::names::NameMap::new(catalog.tools().iter().map(|t| t.name.as_str())).ok();
    let mut mcp_as_sent = false;
    for tool in catalog.tools() {
        let mut portable = tool.clone();
        if let Some(name) = names.as_ref().and_then(|n| n.sent(&tool.name)) {
            portable.name = name.to_owned();
        }
        let what = |dialect: Dialect| {
            format!(
                "the {dialect} definition of {}",
                tools_schema::excerpt::quoted(&tool.name)
            )
        };
        let mut native = Vec::with_capacity(Dialect::ALL.len());
        for (index, dialect) in Dialect::ALL.into_iter().enumerate() {
            if dialect == Dialect::Mcp
                && let Some(entry) = sent.entries.get(&tool.name)
            {
                let tokens = counter.both(entry, &what(dialect))?;
                native_total[index] = add(native_total[index], tokens);
                native.push(NativeCell {
                    tokens: Some(tokens),
                    refused: None,
                    non_strict: false,
                    lossy: Vec::new(),
                });
                mcp_as_sent = true;
                continue;
            }
            let sent_tool = if dialect == Dialect::Mcp {
                tool
            } else {
                &portable
            };
            match tools_dialects::project(sent_tool, dialect, Policy::NonStrict) {
                Ok(projection) => {
                    let non_strict = projection.sent != projection.dialect;
                    // After a fall-back the strict attempt's findings come first; what is sent
                    // is the non-strict projection, whose own findings are the last ones.
                    let findings = if non_strict {
                        tools_dialects::project(sent_tool, projection.sent, Policy::Warn)
                            .map(|p| p.findings)
                            .unwrap_or_default()
                    } else {
                        projection.findings
                    };
                    let tokens =
                        counter.both(&projection.definition.to_string(), &what(dialect))?;
                    native_total[index] = add(native_total[index], tokens);
                    native.push(NativeCell {
                        tokens: Some(tokens),
                        refused: None,
                        non_strict,
                        lossy: findings.into_iter().filter(|f| is_lossy(f.class)).collect(),
                    });
                }
                Err(error) => {
                    refused.push((tool.name.clone(), dialect, error.to_string()));
                    native.push(NativeCell {
                        tokens: None,
                        refused: Some(error.to_string()),
                        non_strict: false,
                        lossy: Vec::new(),
                    });
                }
            }
        }
        tools.push(ToolStats {
            name: tool.name.clone(),
            native,
        });
    }
    let mut code = Vec::new();
    for language in Language::ALL {
        let run_code = run_code_definition(language).to_tool_schema();
        let describe_tools = describe_tools_definition(language).to_tool_schema();
        for form in CodeForm::ALL {
            let sections = match form {
                CodeForm::FullSdk => format!(
                    "{}{}",
                    code_only_text(false),
                    sdk_section(catalog, language)
                ),
                CodeForm::Index => {
                    format!(
                        "{}{}",
                        code_only_text(true),
                        index_section(catalog, language)
                    )
                }
            };
            let sections = counter.both(&sections, "the Code Mode prompt sections")?;
            let own: &[&tools_schema::CatalogEntry] = match form {
                CodeForm::FullSdk => &[&run_code],
                CodeForm::Index => &[&run_code, &describe_tools],
            };
            let mut definitions = Vec::with_capacity(Dialect::ALL.len());
            for dialect in Dialect::ALL {
                let mut tokens = [0, 0];
                for tool in own {
                    if let Ok(projection) =
                        tools_dialects::project(tool, dialect, Policy::NonStrict)
                    {
                        let text = projection.definition.to_string();
                        tokens = add(tokens, counter.both(&text, &tool.name)?);
                    }
                }
                definitions.push(tokens);
            }
            code.push(CodeStats {
                language,
                form,
                sections,
                definitions,
            });
        }
    }
    let warnings = schema_warnings(catalog);
    let code_degradations = warnings.iter().map(|w| w.total()).sum();
    let code_degraded_tools = warnings
        .iter()
        .filter_map(|w| Some((w.tool.clone(), w.warnings.first()?.to_string())))
        .collect();
    Ok(Stats {
        tools,
        native_total,
        code,
        refused,
        code_degradations,
        code_degraded_tools,
        mcp_extra_keys: sent.extra_keys.iter().cloned().collect(),
        mcp_as_sent,
    })
}
