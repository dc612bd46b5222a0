//! Tool definitions and their builder.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use tools_schema::Schema;
use tools_schema::catalog::{CatalogEntry, ToolAnnotations};

use crate::call::content::ContentBlock;
use crate::call::result::ToolExecutionResult;
use crate::errors::{DefinitionError, ToolError};
use crate::execution::ToolExecution;
use crate::extensions::Extensions;
use crate::runtime::cards::{CallView, PresentCallFn, PresentResultFn, ResultRecord, ResultView};
use crate::runtime::context::ToolRunContext;
use crate::runtime::validation::{self, Compiled};

/// The tool name reserved for Code Mode's transport: no scope can register, reserve or restrict
/// it.
pub const RESERVED_RUN_CODE: &str = "run_code";

/// The tool name reserved for Code Mode's discovery tool: like `run_code`, no scope can
/// register, reserve or restrict it.
pub const RESERVED_DESCRIBE_TOOLS: &str = "describe_tools";

/// Every name the registry reserves for the tools it owns (installed by an
/// [`Extension`](crate::extension::Extension)).
pub const RESERVED_NAMES: [&str; 2] = [RESERVED_RUN_CODE, RESERVED_DESCRIBE_TOOLS];

/// Who may call a tool: the model directly (a call of its own, with no parent), a `run_code`
/// program, or both. It refines the agent's [`PresentationMode`](crate::PresentationMode) for
/// one tool, and only ever narrows it:
///
/// | mode | `Any` | `Direct` | `Code` |
/// | --- | --- | --- | --- |
/// | `native` | a definition | a definition | hidden; a direct call is refused |
/// | `code` | in the SDK | hidden; every call is refused | in the SDK |
/// | `both` | a definition and in the SDK | a definition; refused from a program | in the SDK; refused directly |
///
/// A refused call fails with `UNKNOWN_TOOL` before policy runs, and its message says how the
/// tool can be called instead (when the agent's mode offers a way). Calls a tool body makes
/// itself (nested calls whose parent is not a `run_code` run) are not affected.
/// [`ToolRuntime::schemas`](crate::ToolRuntime::schemas) still lists every visible tool,
/// whatever its callers: it reports the agent's capabilities, not its prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Callers {
    /// The model directly and `run_code` programs (the default).
    #[default]
    Any,
    /// Only the model directly: left out of the SDK, refused from a program.
    Direct,
    /// Only `run_code` programs: not offered as a definition, refused when called directly.
    Code,
}

impl Callers {
    /// The stable lower-case name: `any`, `direct` or `code`.
    pub fn as_str(self) -> &'static str {
        match self {
            Callers::Any => "any",
            Callers::Direct => "direct",
            Callers::Code => "code",
        }
    }

    /// The callers named `any`, `direct` or `code`.
    pub fn from_name(name: &str) -> Option<Callers> {
        match name {
            "any" => Some(Callers::Any),
            "direct" => Some(Callers::Direct),
            "code" => Some(Callers::Code),
            _ => None,
        }
    }

    /// Whether the model may call the tool directly (it can be offered as a definition).
    pub fn allows_direct(self) -> bool {
        !matches!(self, Callers::Code)
    }

    /// Whether a `run_code` program may call the tool (it belongs in the SDK).
    pub fn allows_code(self) -> bool {
        !matches!(self, Callers::Direct)
    }
}

impl fmt::Display for Callers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The async body of a tool: frozen arguments and a run context in, a canonical value out.
pub type BodyFn = dyn Fn(Arc<Value>, ToolRunContext) -> BoxFuture<'static, Result<Value, ToolError>>
    + Send
    + Sync;
/// Renders a canonical value (with the call's arguments) to model-facing content.
pub type RenderFn = dyn Fn(&Value, &Value) -> Vec<ContentBlock> + Send + Sync;
/// Derives presentation metadata from the arguments and the canonical value.
pub type PresentationMetaFn = dyn Fn(&Value, &Value) -> Value + Send + Sync;
/// Replaces the final content of a normalised result (`None` keeps it).
pub type FinalizeContentFn =
    dyn Fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>> + Send + Sync;
/// A definition's prepare hook: runs at admission, after input validation and before the
/// pre-execute waterfall, with the frozen (valid) arguments and a run context like the body's.
/// `Err` refuses the call (its code and message become the call's failure; no listener, approval
/// or body runs); `Ok(extensions)` is what the hook computed, kept on the execution: listeners
/// read it with [`ToolExecution::get`], the body through its context's execution. Code Mode's
/// `run_code` hook is the pre-run analysis of the program, which leaves what the program may
/// call and the parse the run reuses.
pub type PrepareFn = dyn Fn(Arc<Value>, ToolRunContext) -> BoxFuture<'static, Result<Extensions, ToolError>>
    + Send
    + Sync;
/// Classifies one call's arguments as safe to run concurrently (`true`) or not.
pub type ConcurrencyFn = dyn Fn(&Value) -> bool + Send + Sync;

/// A schema given either as the typed model or as raw JSON Schema.
#[derive(Debug, Clone)]
pub enum SchemaSource {
    /// The typed model.
    Typed(Box<Schema>),
    /// Raw JSON Schema.
    Json(Value),
}

impl SchemaSource {
    fn into_json(self) -> Value {
        match self {
            SchemaSource::Typed(s) => validation::typed_to_json(&s),
            SchemaSource::Json(v) => v,
        }
    }
}

impl From<Schema> for SchemaSource {
    fn from(s: Schema) -> Self {
        SchemaSource::Typed(Box::new(s))
    }
}
impl From<&Schema> for SchemaSource {
    fn from(s: &Schema) -> Self {
        SchemaSource::Typed(Box::new(s.clone()))
    }
}
impl From<Value> for SchemaSource {
    fn from(v: Value) -> Self {
        SchemaSource::Json(v)
    }
}

/// The mandatory output declaration of a tool: the schema of its canonical value, how a value
/// renders to content, and optional presentation metadata.
#[derive(Clone)]
pub struct Output {
    schema: SchemaSource,
    render: Arc<RenderFn>,
    presentation_meta: Option<Arc<PresentationMetaFn>>,
    /// The tool validates its own values (see [`Output::tool_validated`]).
    tool_validated: bool,
}

impl Output {
    /// An output with `schema` and a `render(args, value)` function.
    pub fn new(
        schema: impl Into<SchemaSource>,
        render: impl Fn(&Value, &Value) -> Vec<ContentBlock> + Send + Sync + 'static,
    ) -> Self {
        Output {
            schema: schema.into(),
            render: Arc::new(render),
            presentation_meta: None,
            tool_validated: false,
        }
    }

    /// An output with `schema` rendered as JSON text: a string value as itself, any other value
    /// as compact JSON.
    pub fn json(schema: impl Into<SchemaSource>) -> Self {
        Output::new(schema, |_args, value| vec![render_json(value)])
    }

    /// The same output with a `presentation_meta(args, value)` function, computed for
    /// top-level calls only.
    pub fn presentation_meta(
        mut self,
        meta: impl Fn(&Value, &Value) -> Value + Send + Sync + 'static,
    ) -> Self {
        self.presentation_meta = Some(Arc::new(meta));
        self
    }

    /// The same output, validated by the tool rather than the registry: the schema is published
    /// as given (any JSON object schema, not only the enforced subset) and the registry does not
    /// check values against it. Only a [raw](ToolDefinition::raw) definition may declare one
    /// (any other is a build error, `INVALID_OUTPUT_SCHEMA`); its body must check what it
    /// returns, as `tools-mcp` does for an MCP server's output schema.
    pub fn tool_validated(mut self) -> Self {
        self.tool_validated = true;
        self
    }
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Output")
            .field("schema", &self.schema)
            .field("presentation_meta", &self.presentation_meta.is_some())
            .field("tool_validated", &self.tool_validated)
            .finish_non_exhaustive()
    }
}

/// Renders a value the way [`Output::json`] does.
pub fn render_json(value: &Value) -> ContentBlock {
    match value {
        Value::String(s) => ContentBlock::text(s.clone()),
        Value::Array(_) | Value::Object(_) => {
            ContentBlock::text(tools_schema::deep::to_string(value))
        }
        other => ContentBlock::text(other.to_string()),
    }
}

pub(crate) struct DefInner {
    pub(crate) name: String,
    /// `execute_tool <name>`, the name of a call's span (`otel.name`), made once here rather
    /// than formatted for every call a subscriber records.
    pub(crate) span_name: Box<str>,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    /// `None` for raw definitions, which validate their own input.
    pub(crate) input: Option<Compiled>,
    pub(crate) output_schema: Value,
    pub(crate) output: Compiled,
    pub(crate) render: Arc<RenderFn>,
    pub(crate) presentation_meta: Option<Arc<PresentationMetaFn>>,
    pub(crate) body: Arc<BodyFn>,
    pub(crate) finalize_content: Option<Arc<FinalizeContentFn>>,
    pub(crate) timeout: Option<Duration>,
    /// The maximum total time of a call whose timeout resets on progress.
    pub(crate) max_total: Option<Duration>,
    /// The tool may run for minutes (see `ToolDefinitionBuilder::long_running`).
    pub(crate) long_running: bool,
    pub(crate) concurrency: Option<Arc<ConcurrencyFn>>,
    pub(crate) present_call: Option<Arc<PresentCallFn>>,
    pub(crate) present_result: Option<Arc<PresentResultFn>>,
    pub(crate) prepare: Option<Arc<PrepareFn>>,
    pub(crate) callers: Callers,
    /// What the tool says of its behaviour (MCP's annotations).
    pub(crate) annotations: Option<ToolAnnotations>,
}

impl Drop for DefInner {
    fn drop(&mut self) {
        // Raw schemas from outside may be deep: dropped without recursion.
        tools_schema::deep::discard(std::mem::take(&mut self.input_schema));
        tools_schema::deep::discard(std::mem::take(&mut self.output_schema));
    }
}

/// A tool: its schemas, its output declaration and its body. Cheap to clone.
///
/// Build one with [`ToolDefinition::builder`] (input validated by the registry) or
/// [`ToolDefinition::raw`] (for tools from outside, such as an MCP server, that validate their
/// own input); the output of both is validated by the registry.
#[derive(Clone)]
pub struct ToolDefinition(pub(crate) Arc<DefInner>);

impl ToolDefinition {
    /// A builder for a tool whose input the registry validates.
    pub fn builder(name: impl Into<String>) -> ToolDefinitionBuilder {
        ToolDefinitionBuilder::new(name.into(), false)
    }

    /// A builder for a raw tool: its input schema is published as given and not enforced (the
    /// body owns input validation); its output is still validated, unless it is declared
    /// [`Output::tool_validated`].
    pub fn raw(name: impl Into<String>) -> ToolDefinitionBuilder {
        ToolDefinitionBuilder::new(name.into(), true)
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.0.name
    }
    /// The name of a call's span: `execute_tool <name>`.
    pub(crate) fn span_name(&self) -> &str {
        &self.0.span_name
    }
    /// The description.
    pub fn description(&self) -> &str {
        &self.0.description
    }
    /// The input schema, as JSON Schema.
    pub fn input_schema(&self) -> &Value {
        &self.0.input_schema
    }
    /// Checks `arguments` against the compiled input schema, as the pipeline does before the
    /// tool runs: every violation, `; `-separated, each with its JSON pointer. `None` for a raw
    /// definition, which validates its own input.
    pub fn check_input(&self, arguments: &Value) -> Option<Result<(), String>> {
        self.0.input.as_ref().map(|input| input.validate(arguments))
    }
    /// The output schema, as JSON Schema.
    pub fn output_schema(&self) -> &Value {
        &self.0.output_schema
    }
    /// The declared timeout (enforced only by [`timeout_wrapper`](crate::wrappers::timeout)).
    pub fn timeout(&self) -> Option<Duration> {
        self.0.timeout
    }
    /// The maximum total time of a call when its [`timeout`](Self::timeout) restarts at each
    /// progress report
    /// ([`timeout_resets_on_progress`](ToolDefinitionBuilder::timeout_resets_on_progress));
    /// `None` when the timeout bounds the whole call.
    pub fn timeout_max_total(&self) -> Option<Duration> {
        self.0.max_total
    }
    /// Whether the tool says its calls may run for minutes
    /// ([`long_running`](ToolDefinitionBuilder::long_running)).
    pub fn is_long_running(&self) -> bool {
        self.0.long_running
    }
    /// Whether this is a raw definition (input not validated by the registry).
    pub fn is_raw(&self) -> bool {
        self.0.input.is_none()
    }
    /// Who may call this tool (see [`Callers`]).
    pub fn callers(&self) -> Callers {
        self.0.callers
    }
    /// Whether a concurrency classifier is declared.
    pub fn has_concurrency_classifier(&self) -> bool {
        self.0.concurrency.is_some()
    }
    /// Whether `value` matches the output schema.
    pub fn output_is_valid(&self, value: &Value) -> bool {
        self.0.output.is_valid(value)
    }
    /// Renders `value` with the output declaration's `render`.
    pub fn render(&self, args: &Value, value: &Value) -> Vec<ContentBlock> {
        (self.0.render)(args, value)
    }

    /// The catalog entry of this tool (its schemas without the body), as
    /// [`ToolRuntime::schemas`](crate::ToolRuntime::schemas) lists it; deep schemas are copied
    /// without recursion.
    pub fn catalog_entry(&self) -> CatalogEntry {
        CatalogEntry {
            name: self.0.name.clone(),
            description: self.0.description.clone(),
            input_schema: tools_schema::deep::clone_value(&self.0.input_schema),
            output_schema: Some(tools_schema::deep::clone_value(&self.0.output_schema)),
            annotations: self.0.annotations.clone(),
        }
    }

    /// What the tool says of its behaviour (MCP's annotations: read-only, destructive,
    /// idempotent, open world), if it says anything
    /// ([`ToolDefinitionBuilder::annotations`]).
    pub fn annotations(&self) -> Option<&ToolAnnotations> {
        self.0.annotations.as_ref()
    }

    /// The card of a call with `args`: the tool's own when it has a call presenter, the
    /// arguments are valid, and the presenter gives one; otherwise the generic card. Arguments
    /// from an old log that no longer validate, and a panicking presenter, fall back too.
    pub fn present_call(&self, args: &Value) -> CallView {
        self.0
            .present_call
            .as_ref()
            .filter(|_| self.accepts(args))
            .and_then(|present| {
                std::panic::catch_unwind(AssertUnwindSafe(|| present(args))).unwrap_or_else(|_| {
                    tracing::error!(tool = %self.0.name, "a call presenter panicked; the generic card is used");
                    None
                })
            })
            .unwrap_or_else(|| CallView::generic(&self.0.name, args))
    }

    /// The card of a finished call from what a log keeps of it (see [`ResultRecord`]), with the
    /// same fallbacks as [`present_call`](Self::present_call).
    pub fn present_result(&self, args: &Value, record: &ResultRecord<'_>) -> ResultView {
        self.0
            .present_result
            .as_ref()
            .filter(|_| self.accepts(args))
            .and_then(|present| {
                std::panic::catch_unwind(AssertUnwindSafe(|| present(args, record)))
                    .unwrap_or_else(|_| {
                        tracing::error!(tool = %self.0.name, "a result presenter panicked; the generic card is used");
                        None
                    })
            })
            .unwrap_or_else(|| ResultView::generic(record))
    }

    /// Whether `args` pass the input schema (raw definitions accept anything here).
    fn accepts(&self, args: &Value) -> bool {
        self.0
            .input
            .as_ref()
            .is_none_or(|input| input.is_valid(args))
    }
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinition")
            .field("name", &self.0.name)
            .field("raw", &self.is_raw())
            .field("timeout", &self.0.timeout)
            .field("timeout_max_total", &self.0.max_total)
            .field("long_running", &self.0.long_running)
            .finish_non_exhaustive()
    }
}

/// Builds a [`ToolDefinition`]; every problem is reported by [`build`](Self::build).
///
/// ```
/// use serde_json::{json, Value};
/// use tools_runtime::{Output, ToolDefinition, ToolError};
///
/// let def = ToolDefinition::builder("add")
///     .description("Add two integers.")
///     .input_schema(json!({
///         "type": "object",
///         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
///         "required": ["a", "b"]
///     }))
///     .output(Output::json(json!({"type": "integer"})))
///     .execute(|args, _ctx| async move {
///         let a = args["a"].as_i64().unwrap_or(0);
///         let b = args["b"].as_i64().unwrap_or(0);
///         Ok::<Value, ToolError>(json!(a + b))
///     })
///     .build()
///     .unwrap();
/// assert_eq!(def.name(), "add");
/// ```
#[must_use = "a builder does nothing until `build()`"]
pub struct ToolDefinitionBuilder {
    name: String,
    raw: bool,
    description: String,
    input: Option<SchemaSource>,
    output: Option<Output>,
    body: Option<Arc<BodyFn>>,
    finalize_content: Option<Arc<FinalizeContentFn>>,
    timeout: Option<Result<Duration, String>>,
    max_total: Option<Duration>,
    long_running: bool,
    concurrency: Option<Arc<ConcurrencyFn>>,
    present_call: Option<Arc<PresentCallFn>>,
    present_result: Option<Arc<PresentResultFn>>,
    prepare: Option<Arc<PrepareFn>>,
    callers: Callers,
    annotations: Option<ToolAnnotations>,
}

impl ToolDefinitionBuilder {
    fn new(name: String, raw: bool) -> Self {
        ToolDefinitionBuilder {
            name,
            raw,
            description: String::new(),
            input: None,
            output: None,
            body: None,
            finalize_content: None,
            timeout: None,
            max_total: None,
            long_running: false,
            concurrency: None,
            present_call: None,
            present_result: None,
            prepare: None,
            callers: Callers::Any,
            annotations: None,
        }
    }

    /// The description the model reads.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }

    /// The input schema: the typed model or raw JSON Schema. For a validated definition it must
    /// be an object schema in the supported subset; it is compiled once, here.
    pub fn input_schema(mut self, schema: impl Into<SchemaSource>) -> Self {
        self.input = Some(schema.into());
        self
    }

    /// The mandatory output declaration.
    pub fn output(mut self, output: Output) -> Self {
        self.output = Some(output);
        self
    }

    /// The async body. It receives the frozen arguments and a [`ToolRunContext`], must observe
    /// the context's cancellation token, and settles only after its owned work stops.
    pub fn execute<F, Fut>(mut self, body: F) -> Self
    where
        F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        self.body = Some(Arc::new(move |args, ctx| Box::pin(body(args, ctx))));
        self
    }

    /// The body as an already boxed function (for generated code).
    pub fn execute_boxed(mut self, body: Arc<BodyFn>) -> Self {
        self.body = Some(body);
        self
    }

    /// A synchronous, total function that may replace the final content of every normalised
    /// result of this tool, failures included. Return `None` to keep the content.
    pub fn finalize_content(
        mut self,
        finalize: impl Fn(&ToolExecution, &ToolExecutionResult) -> Option<Vec<ContentBlock>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.finalize_content = Some(Arc::new(finalize));
        self
    }

    /// A cooperative timeout. The registry does not enforce it; the opt-in
    /// [`timeout`](crate::wrappers::timeout) wrapper does. Zero is a build error.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(if timeout.is_zero() {
            Err(format!("{timeout:?}"))
        } else {
            Ok(timeout)
        });
        self
    }

    /// A timeout in (possibly fractional) seconds, as it comes from configuration: zero,
    /// negative and non-finite values are build errors.
    pub fn timeout_secs_f64(mut self, seconds: f64) -> Self {
        self.timeout = Some(match Duration::try_from_secs_f64(seconds) {
            Ok(d) if !d.is_zero() => Ok(d),
            _ => Err(format!("{seconds} s")),
        });
        self
    }

    /// Makes the [`timeout`](Self::timeout) restart at each progress report of the call (see
    /// [`crate::progress`]): a long-running tool that keeps reporting keeps running, one that
    /// goes quiet for the timeout is stopped (`TOOL_TIMEOUT`, "reported no progress for ...").
    /// `max_total` still bounds the whole call, progress or not. Enforced by the
    /// [`timeout`](crate::wrappers::timeout) wrapper, like the timeout itself. Without a
    /// timeout, or with `max_total` shorter than the timeout, the build fails
    /// (`INVALID_TIMEOUT`).
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use tools_runtime::{Output, ToolDefinition};
    ///
    /// let export = ToolDefinition::builder("export")
    ///     .input_schema(json!({"type": "object"}))
    ///     .output(Output::json(json!({"type": "string"})))
    ///     .timeout(Duration::from_secs(30))
    ///     .timeout_resets_on_progress(Duration::from_secs(3600))
    ///     .execute(|_args, _ctx| async { Ok(json!("done")) })
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(export.timeout_max_total(), Some(Duration::from_secs(3600)));
    /// ```
    pub fn timeout_resets_on_progress(mut self, max_total: Duration) -> Self {
        self.max_total = Some(max_total);
        self
    }

    /// Says the tool's calls may run for minutes: a caller that can wait without holding a
    /// request open should. `tools-mcp` serve offers such a tool as an MCP task to clients
    /// that support tasks (the call returns a task at once; the client polls for its one
    /// result). It changes nothing in the registry's pipeline. Pair it with progress reports
    /// and a timeout that resets on them ([`timeout_resets_on_progress`](Self::timeout_resets_on_progress)).
    pub fn long_running(mut self) -> Self {
        self.long_running = true;
        self
    }

    /// A per-call classifier: a call runs in parallel with its neighbours only when this
    /// returns exactly `true` for its (valid) arguments.
    pub fn concurrency_safe(
        mut self,
        classifier: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.concurrency = Some(Arc::new(classifier));
        self
    }

    /// The call presenter: a pure function of the arguments giving the tool's own card (see
    /// [`CallView`]); `None` selects the generic card.
    pub fn present_call(
        mut self,
        present: impl Fn(&Value) -> Option<CallView> + Send + Sync + 'static,
    ) -> Self {
        self.present_call = Some(Arc::new(present));
        self
    }

    /// The result presenter: a pure function of the arguments and the logged record (content,
    /// error flag, presentation metadata; see [`ResultRecord`]); `None` selects the generic
    /// card.
    pub fn present_result(
        mut self,
        present: impl Fn(&Value, &ResultRecord<'_>) -> Option<ResultView> + Send + Sync + 'static,
    ) -> Self {
        self.present_result = Some(Arc::new(present));
        self
    }

    /// A prepare hook (see [`PrepareFn`]): checks a call before any policy sees it and leaves
    /// what it computed for the listeners and the body. A panic in it fails the call as a
    /// panicking body does.
    pub fn prepare<F, Fut>(mut self, prepare: F) -> Self
    where
        F: Fn(Arc<Value>, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Extensions, ToolError>> + Send + 'static,
    {
        self.prepare = Some(Arc::new(move |args, ctx| Box::pin(prepare(args, ctx))));
        self
    }

    /// What the tool says of its behaviour: MCP's annotations (read-only, destructive,
    /// idempotent, open world, a title), listed with its schemas ([`ToolDefinition::catalog_entry`])
    /// and served over MCP. They are hints for clients and people; the registry's policy does
    /// not act on them unless you ask it to (see `tools-mcp`'s import options).
    ///
    /// # Errors
    ///
    /// [`build`](Self::build) refuses a read-only tool that says it is destructive.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = (!annotations.is_empty()).then_some(annotations);
        self
    }

    /// Who may call the tool: the model directly, `run_code` programs, or both (the default;
    /// see [`Callers`]).
    pub fn callers(mut self, callers: Callers) -> Self {
        self.callers = callers;
        self
    }

    /// Checks everything and compiles the schemas.
    pub fn build(self) -> Result<ToolDefinition, DefinitionError> {
        let name = self.name;
        if let Err(e) = tools_schema::validate_tool_name(&name) {
            return Err(DefinitionError::InvalidName {
                reason: e.to_string(),
                name,
            });
        }
        let Some(body) = self.body else {
            return Err(DefinitionError::MissingBody { name });
        };
        let Some(output) = self.output else {
            return Err(DefinitionError::MissingOutput { name });
        };
        let timeout = match self.timeout {
            None => None,
            Some(Ok(d)) => Some(d),
            Some(Err(given)) => return Err(DefinitionError::InvalidTimeout { name, given }),
        };
        if let Some(max_total) = self.max_total {
            let reason = match timeout {
                None => Some(
                    "a timeout that resets on progress needs a timeout (`timeout`) to reset"
                        .to_owned(),
                ),
                Some(timeout) if max_total < timeout => Some(format!(
                    "the maximum total time ({max_total:?}) must be at least the timeout ({timeout:?})"
                )),
                Some(_) => None,
            };
            if let Some(reason) = reason {
                return Err(DefinitionError::InvalidProgressTimeout { name, reason });
            }
        }
        if let Some(a) = &self.annotations
            && a.read_only_hint == Some(true)
            && a.destructive_hint == Some(true)
        {
            return Err(DefinitionError::InvalidAnnotations {
                name,
                reason: "a read-only tool cannot be destructive (`readOnlyHint` and \
                         `destructiveHint` are both true)"
                    .to_owned(),
            });
        }
        let Some(input_source) = self.input else {
            return Err(DefinitionError::MissingInputSchema { name });
        };
        let input_schema = input_source.into_json();
        let input = if self.raw {
            if !input_schema.is_object() {
                return Err(DefinitionError::InvalidInputSchema {
                    name,
                    details: "a raw input schema must be a JSON object".to_owned(),
                });
            }
            None
        } else {
            match Compiled::input(&input_schema) {
                Ok(c) => Some(c),
                Err(details) => return Err(DefinitionError::InvalidInputSchema { name, details }),
            }
        };
        let output_schema = output.schema.into_json();
        let unchecked = Value::Object(serde_json::Map::new());
        let enforced = if output.tool_validated {
            if !self.raw || !output_schema.is_object() {
                return Err(DefinitionError::InvalidOutputSchema {
                    name,
                    details: "a tool-validated output needs a raw definition and a JSON object \
                              schema"
                        .to_owned(),
                });
            }
            // Published, not enforced: the registry checks nothing (`{}` accepts every value).
            &unchecked
        } else {
            &output_schema
        };
        let compiled_output = match Compiled::output(enforced) {
            Ok(c) => c,
            Err(details) => return Err(DefinitionError::InvalidOutputSchema { name, details }),
        };
        Ok(ToolDefinition(Arc::new(DefInner {
            span_name: format!("execute_tool {name}").into_boxed_str(),
            name,
            description: self.description,
            input_schema,
            input,
            output_schema,
            output: compiled_output,
            render: output.render,
            presentation_meta: output.presentation_meta,
            body,
            finalize_content: self.finalize_content,
            timeout,
            max_total: self.max_total,
            long_running: self.long_running,
            concurrency: self.concurrency,
            present_call: self.present_call,
            present_result: self.present_result,
            prepare: self.prepare,
            callers: self.callers,
            annotations: self.annotations,
        })))
    }
}

impl fmt::Debug for ToolDefinitionBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDefinitionBuilder")
            .field("name", &self.name)
            .field("raw", &self.raw)
            .finish_non_exhaustive()
    }
}
