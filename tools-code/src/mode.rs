//! Code Mode's settings ([`CodeMode`]) and the registry-owned `run_code` definition built from
//! them: its arguments, its output declaration, and how its result reads to the model.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::analysis;
use super::assembly::CodePresenter;
use super::bridge;
use super::discovery::{self, Discovery};
use super::events::SessionEventSink;
use super::sdk::SdkViews;
use super::{CodeLanguage, CodeLimits, CodeLimitsError, CodeRuntime};
use tools_runtime::definition::RESERVED_RUN_CODE;
use tools_runtime::error::{BuildError, DefinitionError};
use tools_runtime::extension::{Coded, Extension, Installation, OwnedTool};
use tools_runtime::{ContentBlock, Output, PresentationMode, ToolDefinition};

/// The default of [`CodeMode::max_parallel_sub_calls`]: 10.
pub const DEFAULT_MAX_PARALLEL_SUB_CALLS: usize = 10;

/// The default of [`CodeMode::max_pending_sub_calls`]: 10,000.
pub const DEFAULT_MAX_PENDING_SUB_CALLS: usize = 10_000;

/// The stable code of a failed `run_code` call (the program did not parse, threw, ran out of
/// time, memory or output, or returned something that is not JSON).
pub const CODE_RUN_FAILED: &str = "CODE_RUN_FAILED";
/// A resumed run's program called differently than the journal of its first run says (see
/// [`tools_runtime::approvals`]): the run stops at the divergence.
pub const CODE_RUN_DIVERGED: &str = "CODE_RUN_DIVERGED";
/// A resumed run's program made a call that started before its first run paused and whose
/// outcome is unknown: it had not finished when the pause was stored (by the run's deadline),
/// so it was journaled *in doubt*. The program's call fails with this code at the start of its
/// message, and the tool's body is not run again.
pub const CODE_CALL_IN_DOUBT: &str = "CODE_CALL_IN_DOUBT";

/// What the model reads when a program printed nothing and returned nothing.
pub const NO_OUTPUT: &str = "(run_code completed with no output)";

/// How far the rendered result of a program is indented at most, in characters; deeper parts
/// are written as compact JSON.
pub const RESULT_MAX_INDENT: usize = 10;

/// What the spill hook sees of one sub-call result before it is recorded.
#[derive(Debug, Clone, Copy)]
pub struct SpillRequest<'a> {
    /// The sub-call id (`<outer call id>:code:<n>`).
    pub id: &'a str,
    /// The tool the program called.
    pub tool: &'a str,
    /// The model-facing content of the result.
    pub content: &'a [ContentBlock],
    /// Whether the call failed.
    pub is_error: bool,
}

/// The spill hook: returns replacement content (a preview and a locator) for a sub-call result
/// too large to record, or `None` to record it as it is.
pub type SpillFn = dyn Fn(SpillRequest<'_>) -> Option<Vec<ContentBlock>> + Send + Sync;

/// Code Mode's settings: the runtime that runs programs, their limits, how many of a program's
/// tool calls may overlap, where session events go, and the spill hook.
///
/// Install it with [`ToolRuntimeBuilder::extension`](tools_runtime::presentation::ToolRuntimeBuilder::extension); the
/// registry then owns a `run_code` definition built from it.
#[derive(Clone)]
pub struct CodeMode {
    pub(crate) runtime: Arc<dyn CodeRuntime>,
    pub(crate) limits: CodeLimits,
    pub(crate) max_parallel_sub_calls: usize,
    pub(crate) max_pending_sub_calls: usize,
    pub(crate) events: Option<Arc<dyn SessionEventSink>>,
    pub(crate) spill: Option<Arc<SpillFn>>,
    /// Whether programs are analysed before they run (see [`CodeMode::pre_run_analysis`]).
    pub(crate) analysis: bool,
    /// Whether the SDK section is the full SDK or an index (see [`CodeMode::discovery`]).
    pub(crate) discovery: Discovery,
}

impl CodeMode {
    /// Code Mode on `runtime`, with default limits, at most
    /// [`DEFAULT_MAX_PARALLEL_SUB_CALLS`] overlapping calls, no event sink and no spill hook.
    pub fn new(runtime: impl CodeRuntime + 'static) -> Self {
        Self::shared(Arc::new(runtime))
    }

    /// Code Mode on a runtime that is already shared.
    pub fn shared(runtime: Arc<dyn CodeRuntime>) -> Self {
        CodeMode {
            runtime,
            limits: CodeLimits::default(),
            max_parallel_sub_calls: DEFAULT_MAX_PARALLEL_SUB_CALLS,
            max_pending_sub_calls: DEFAULT_MAX_PENDING_SUB_CALLS,
            events: None,
            spill: None,
            analysis: true,
            discovery: Discovery::default(),
        }
    }

    /// The limits of every run.
    #[must_use]
    pub fn limits(mut self, limits: CodeLimits) -> Self {
        self.limits = limits;
        self
    }

    /// How many concurrency-safe calls of one program may run at once (at least 1; 1 runs
    /// every call alone, in order). Checked when the runtime is built.
    #[must_use]
    pub fn max_parallel_sub_calls(mut self, n: usize) -> Self {
        self.max_parallel_sub_calls = n;
        self
    }

    /// How many calls of one program may be started and not yet finished (queued in the pool
    /// or running), at least 1 (default [`DEFAULT_MAX_PENDING_SUB_CALLS`]). A call past it
    /// fails at once with a `ToolCallError` and records nothing: the queue lives outside the
    /// engine's memory limit, so it needs its own bound.
    #[must_use]
    pub fn max_pending_sub_calls(mut self, n: usize) -> Self {
        self.max_pending_sub_calls = n;
        self
    }

    /// Where the bridge records `code-dispatch-start`, `code-dispatch-progress` and
    /// `code-dispatch` events.
    #[must_use]
    pub fn events(mut self, sink: impl SessionEventSink) -> Self {
        self.events = Some(Arc::new(sink));
        self
    }

    /// A hook that may replace a sub-call's recorded content (for an oversized result: a
    /// preview and a locator). It changes what the session event carries, never what the
    /// program receives.
    #[must_use]
    pub fn spill(
        mut self,
        hook: impl Fn(SpillRequest<'_>) -> Option<Vec<ContentBlock>> + Send + Sync + 'static,
    ) -> Self {
        self.spill = Some(Arc::new(hook));
        self
    }

    /// Whether a program is analysed before it runs (on by default; see
    /// [`analysis`](super::analysis)): provably wrong programs are refused without running and
    /// listeners see what a program may call. Off, every program runs as it is and its
    /// `may_call` is open (for hosts that judge programs otherwise). On, it adds little to a
    /// run: the run reuses the analysis's parse (and, in Python, the zygote's compile), so what
    /// is added is the analysis's own walk over the tree.
    #[must_use]
    pub fn pre_run_analysis(mut self, on: bool) -> Self {
        self.analysis = on;
        self
    }

    /// Whether the SDK section carries the full SDK or, for large catalogs, a compact index
    /// with the `describe_tools` tool beside `run_code` (default: [`Discovery::Never`], the
    /// full SDK, as the behaviour contract describes; [`Discovery::auto`] is recommended for
    /// catalogs whose SDK passes
    /// [`DEFAULT_DISCOVERY_ABOVE_BYTES`](crate::DEFAULT_DISCOVERY_ABOVE_BYTES); see
    /// [`Discovery`]).
    #[must_use]
    pub fn discovery(mut self, discovery: Discovery) -> Self {
        self.discovery = discovery;
        self
    }

    /// The language of the runtime, which picks the SDK the prompt shows.
    pub fn language(&self) -> CodeLanguage {
        self.runtime.language()
    }

    /// The runtime.
    pub fn runtime(&self) -> &Arc<dyn CodeRuntime> {
        &self.runtime
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), CodeModeError> {
        if self.max_parallel_sub_calls == 0 {
            return Err(CodeModeError::ZeroParallel);
        }
        if self.max_pending_sub_calls == 0 {
            return Err(CodeModeError::ZeroPending);
        }
        self.limits.validate().map_err(CodeModeError::Limits)
    }

    /// The registry-owned `run_code` definition for these settings.
    fn definition(self: &Arc<Self>) -> Result<ToolDefinition, DefinitionError> {
        let mode = self.clone();
        let analysed = self.clone();
        let text = tools_codegen::run_code_definition(self.codegen_language());
        ToolDefinition::builder(RESERVED_RUN_CODE)
            .description(text.description)
            .input_schema(text.input_schema)
            .output(Output::new(text.output_schema, |_args, value| {
                vec![ContentBlock::text(render_result(value))]
            }))
            // The pre-run analysis, at admission: refuses a provably wrong program, says what
            // the program may call (`MayCall`) before policy runs, and leaves its parse for the
            // run.
            .prepare(move |args, ctx| analysis::prepare(analysed.clone(), args, ctx))
            .execute(move |args, ctx| bridge::run(mode.clone(), args, ctx))
            .build()
    }

    fn codegen_language(&self) -> tools_codegen::Language {
        match self.language() {
            CodeLanguage::TypeScript => tools_codegen::Language::TypeScript,
            CodeLanguage::Python => tools_codegen::Language::Python,
        }
    }
}

/// Code Mode installs itself into a runtime: `run_code` (and `describe_tools`, unless
/// discovery is [`Discovery::Never`]), offered where a scope's mode offers code, and the
/// presenter that adds them and the SDK section to prompt assembly (see
/// [`crate::assembly`]).
impl Extension for CodeMode {
    fn name(&self) -> &'static str {
        "code-mode"
    }

    fn install(self: Box<Self>) -> Result<Installation, BuildError> {
        self.validate()
            .map_err(|e| BuildError::extension("code-mode", e))?;
        let code = Arc::new(*self);
        let language = code.codegen_language();
        let defect =
            |e: DefinitionError| BuildError::extension("code-mode", CodeModeError::Definition(e));
        // The definitions' schemas are fixed and valid; a failure here is a defect of this
        // crate, reported rather than panicking.
        let run_code = code.definition().map_err(defect)?;
        let views = Arc::new(SdkViews::new(language, code.discovery));
        let describe_tools = match code.discovery {
            Discovery::Never => None,
            _ => Some(discovery::definition(language, views.clone()).map_err(defect)?),
        };
        let presenter = CodePresenter::new(
            views,
            run_code.catalog_entry(),
            describe_tools.as_ref().map(ToolDefinition::catalog_entry),
        );
        let mut installation = Installation::new()
            .tool(OwnedTool::new(run_code, PresentationMode::offers_code))
            .presenter(Arc::new(presenter));
        if let Some(describe_tools) = describe_tools {
            installation = installation.tool(OwnedTool::new(
                describe_tools,
                PresentationMode::offers_code,
            ));
        }
        Ok(installation)
    }
}

impl fmt::Debug for CodeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeMode")
            .field("runtime", &self.runtime)
            .field("limits", &self.limits)
            .field("max_parallel_sub_calls", &self.max_parallel_sub_calls)
            .field("max_pending_sub_calls", &self.max_pending_sub_calls)
            .field("events", &self.events.is_some())
            .field("spill", &self.spill.is_some())
            .field("analysis", &self.analysis)
            .field("discovery", &self.discovery)
            .finish()
    }
}

/// Code Mode settings that no runtime can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodeModeError {
    /// `max_parallel_sub_calls` is zero.
    #[error(
        "max_parallel_sub_calls is 0; it must be at least 1 (1 runs a program's calls one at a time)"
    )]
    ZeroParallel,
    /// `max_pending_sub_calls` is zero.
    #[error("max_pending_sub_calls is 0; it must be at least 1")]
    ZeroPending,
    /// The limits are unusable.
    #[error(transparent)]
    Limits(CodeLimitsError),
    /// A registry-owned definition could not be built (a defect of this crate; please report
    /// it).
    #[error("a Code Mode definition could not be built (a defect of tools-code; please report it)")]
    Definition(#[source] DefinitionError),
}

impl Coded for CodeModeError {
    fn code(&self) -> &'static str {
        CodeModeError::code(self)
    }
}

impl CodeModeError {
    /// The stable code: `ZERO_PARALLEL` or the limit's own code.
    pub fn code(&self) -> &'static str {
        match self {
            CodeModeError::ZeroParallel => "ZERO_PARALLEL",
            CodeModeError::ZeroPending => "ZERO_PENDING",
            CodeModeError::Limits(e) => e.code(),
            CodeModeError::Definition(e) => e.code(),
        }
    }
}

/// The text the model reads for a program's outcome `{logs, result?}`: the printed lines, then
/// the returned value (a string as it is, anything else as JSON indented at most
/// [`RESULT_MAX_INDENT`] characters), or [`NO_OUTPUT`].
pub fn render_result(value: &Value) -> String {
    let mut lines: Vec<String> = value
        .get("logs")
        .and_then(Value::as_array)
        .map(|logs| {
            logs.iter()
                .map(|l| match l {
                    Value::String(s) => s.clone(),
                    other => tools_schema::deep::to_string(other),
                })
                .collect()
        })
        .unwrap_or_default();
    match value.get("result") {
        None => {}
        Some(Value::String(s)) => lines.push(s.clone()),
        Some(other) => lines.push(tools_schema::deep::to_string_pretty_levels(
            other,
            RESULT_MAX_INDENT / 2,
        )),
    }
    if lines.is_empty() {
        NO_OUTPUT.to_owned()
    } else {
        lines.join("\n")
    }
}
