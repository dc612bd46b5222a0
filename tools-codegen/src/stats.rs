//! What each presentation of a catalog costs in tokens (behind the `stats` feature).
//!
//! [`stats`] counts, per tool and in total, the tokens of each tool's native definition in every
//! provider dialect ([`tools_dialects::Dialect::ALL`]), beside the Code Mode presentation of the
//! same catalog per language: the SDK, the usage instructions, and the `run_code` definition in
//! each dialect. Counting is offline, with `tiktoken-rs` and its embedded BPE tables
//! (`o200k_base`, `cl100k_base`); each encoder is loaded once per process.
//!
//! What is counted is the text of what is sent: a definition as compact JSON, the SDK and
//! instructions as the prompt carries them. Providers turn definitions into prompt text their
//! own way (and add a fixed preamble), so even the OpenAI figures are approximations of what a
//! request is billed; they compare presentations, they do not predict invoices. Anthropic and
//! Gemini do not publish their tokenizers: their columns are counted with the same OpenAI
//! encodings and are approximations.
//!
//! A definition that a dialect refuses (a provider limit, a name collision) is sent as the
//! policy [`tools_dialects::Policy::NonStrict`] would send it, and when even that fails it is
//! counted as absent and named in [`Stats::refused`].

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;
use tools_dialects::{Dialect, Policy};
use tools_schema::Catalog;

use crate::{Language, render_sdk, run_code_definition, usage_text};

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

    fn both(&self, text: &str, what: &str) -> Result<[usize; 2], StatsError> {
        Ok([
            self.count(Encoding::O200kBase, text, what)?,
            self.count(Encoding::Cl100kBase, text, what)?,
        ])
    }
}

/// Tokens of one text in both encodings: `[o200k_base, cl100k_base]`.
pub type Tokens = [usize; 2];

/// One tool's native definitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolStats {
    /// The tool's name.
    pub name: String,
    /// Per dialect (in [`Dialect::ALL`] order), the tokens of its definition; `None` when the
    /// dialect refuses it.
    pub native: Vec<Option<Tokens>>,
}

/// The Code Mode presentation in one language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeModeStats {
    /// The language.
    pub language: Language,
    /// The SDK text.
    pub sdk: Tokens,
    /// The usage instructions.
    pub instructions: Tokens,
    /// The `run_code` definition per dialect (in [`Dialect::ALL`] order).
    pub run_code: Vec<Tokens>,
}

impl CodeModeStats {
    /// SDK + instructions + `run_code` in the dialect at `index` of [`Dialect::ALL`].
    pub fn total(&self, index: usize) -> Tokens {
        let run_code = self.run_code.get(index).copied().unwrap_or([0, 0]);
        [
            self.sdk[0] + self.instructions[0] + run_code[0],
            self.sdk[1] + self.instructions[1] + run_code[1],
        ]
    }
}

/// The token costs of a catalog's presentations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Per tool, in catalog (name) order.
    pub tools: Vec<ToolStats>,
    /// Per dialect (in [`Dialect::ALL`] order), the total of the native definitions.
    pub native_total: Vec<Tokens>,
    /// Code Mode per language.
    pub code_mode: Vec<CodeModeStats>,
    /// `(tool, dialect, why)` for each definition a dialect refused.
    pub refused: Vec<(String, Dialect, String)>,
}

/// Counts the tokens of `catalog`'s presentations (see the [module docs](self)).
///
/// # Errors
///
/// The encoders do not load, or the tokenizer fails on a text.
pub fn stats(catalog: &Catalog) -> Result<Stats, StatsError> {
    let counter = Counter::get()?;
    let mut tools = Vec::with_capacity(catalog.tools().len());
    let mut native_total = vec![[0usize; 2]; Dialect::ALL.len()];
    let mut refused = Vec::new();
    // Names as a request would send them (the portable projection), when they can be.
    let names =
        tools_dialects::names::NameMap::new(catalog.tools().iter().map(|t| t.name.as_str())).ok();
    for tool in catalog.tools() {
        let mut sent_tool = tool.clone();
        if let Some(sent) = names.as_ref().and_then(|n| n.sent(&tool.name)) {
            sent_tool.name = sent.to_owned();
        }
        let mut native = Vec::with_capacity(Dialect::ALL.len());
        for (index, dialect) in Dialect::ALL.into_iter().enumerate() {
            match tools_dialects::project(&sent_tool, dialect, Policy::NonStrict) {
                Ok(projection) => {
                    let text = projection.definition.to_string();
                    let tokens = counter.both(
                        &text,
                        &format!(
                            "the {dialect} definition of {}",
                            tools_schema::excerpt::quoted(&tool.name)
                        ),
                    )?;
                    native_total[index][0] += tokens[0];
                    native_total[index][1] += tokens[1];
                    native.push(Some(tokens));
                }
                Err(error) => {
                    refused.push((tool.name.clone(), dialect, error.to_string()));
                    native.push(None);
                }
            }
        }
        tools.push(ToolStats {
            name: tool.name.clone(),
            native,
        });
    }
    let mut code_mode = Vec::new();
    for language in Language::ALL {
        let sdk = counter.both(&render_sdk(catalog, language), "the SDK")?;
        let instructions = counter.both(&usage_text(language), "the instructions")?;
        let run_code_tool = run_code_definition(language).to_tool_schema();
        let mut run_code = Vec::with_capacity(Dialect::ALL.len());
        for dialect in Dialect::ALL {
            let tokens = match tools_dialects::project(&run_code_tool, dialect, Policy::NonStrict) {
                Ok(projection) => counter.both(&projection.definition.to_string(), "run_code")?,
                Err(_) => [0, 0],
            };
            run_code.push(tokens);
        }
        code_mode.push(CodeModeStats {
            language,
            sdk,
            instructions,
            run_code,
        });
    }
    Ok(Stats {
        tools,
        native_total,
        code_mode,
        refused,
    })
}

impl Stats {
    /// The report the CLI prints: a table of tools by dialect (`o200k_base`), the totals in
    /// both encodings, Code Mode per language, and the refusals.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let columns: Vec<&str> = Dialect::ALL.iter().map(|d| d.name()).collect();
        let width = self
            .tools
            .iter()
            .map(|t| t.name.chars().count().min(40))
            .chain([28])
            .max()
            .unwrap_or(28);
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Tokens of each tool's native definition (compact JSON, o200k_base), per dialect:\n"
        );
        let header = |out: &mut String| {
            let _ = write!(out, "{:width$}", "");
            for c in &columns {
                let _ = write!(out, " {c:>w$}", w = c.len().max(8));
            }
            out.push('\n');
        };
        let row =
            |out: &mut String, label: &str, cells: &mut dyn Iterator<Item = Option<usize>>| {
                let shown: String = label.chars().take(40).collect();
                let _ = write!(out, "{shown:width$}");
                for (c, cell) in columns.iter().zip(cells) {
                    let w = c.len().max(8);
                    match cell {
                        Some(n) => {
                            let _ = write!(out, " {n:>w$}");
                        }
                        None => {
                            let _ = write!(out, " {:>w$}", "-");
                        }
                    }
                }
                out.push('\n');
            };
        header(&mut out);
        for tool in &self.tools {
            let label = format!("{:?}", tool.name);
            let label = label.trim_matches('"');
            row(
                &mut out,
                label,
                &mut tool.native.iter().map(|t| t.map(|t| t[0])),
            );
        }
        for (i, encoding) in Encoding::ALL.iter().enumerate() {
            row(
                &mut out,
                &format!("native total ({})", encoding.name()),
                &mut self.native_total.iter().map(|t| Some(t[i])),
            );
        }
        for mode in &self.code_mode {
            let _ = writeln!(
                out,
                "\nCode Mode, {}: SDK {} + instructions {} tokens (o200k_base; cl100k_base {} + {}), plus run_code per dialect:",
                mode.language, mode.sdk[0], mode.instructions[0], mode.sdk[1], mode.instructions[1]
            );
            header(&mut out);
            for (i, encoding) in Encoding::ALL.iter().enumerate() {
                row(
                    &mut out,
                    &format!("run_code ({})", encoding.name()),
                    &mut mode.run_code.iter().map(|t| Some(t[i])),
                );
            }
            for (i, encoding) in Encoding::ALL.iter().enumerate() {
                row(
                    &mut out,
                    &format!("Code Mode total ({})", encoding.name()),
                    &mut (0..columns.len()).map(|d| Some(mode.total(d)[i])),
                );
            }
        }
        let _ = writeln!(
            out,
            "\no200k_base and cl100k_base are OpenAI's tokenizers, counted offline. Anthropic and Gemini \
             do not publish theirs: their columns use the same encodings and are approximations. \
             Providers also render definitions into the prompt their own way, so every figure \
             compares presentations rather than predicting a bill."
        );
        for (tool, dialect, why) in &self.refused {
            let _ = writeln!(
                out,
                "refused: {} in {dialect}: {why}",
                tools_schema::excerpt::quoted(tool)
            );
        }
        out
    }
}
