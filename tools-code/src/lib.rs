//! Code Mode for `tools-runtime`: the model sees a scope's tools as a typed SDK and calls them
//! from a program it writes, through the registry-owned `run_code` tool.
//!
//! [`CodeMode`] is an [`Extension`](tools_runtime::extension::Extension): install it when the
//! runtime is built (`ToolRuntime::builder().extension(CodeMode::new(runtime))`). It gives the
//! registry `run_code` (and `describe_tools`, see [`discovery`]), offered to every scope whose
//! [`PresentationMode`](tools_runtime::PresentationMode) is `code` or `both`, and adds the SDK
//! section to prompt assembly ([`assembly`]). A program's tool calls go through the runtime's
//! one pipeline, as nested calls of the `run_code` call carrying a
//! [`ProgramOrigin`](tools_runtime::ProgramOrigin), scheduled by a per-run pool; only what the
//! program prints and returns comes back to the model. Before a program runs, its pre-run
//! [`analysis`] refuses what is provably wrong and tells listeners what it may call
//! ([`ExecutionExt::may_call`]).
//!
//! ```
//! # #[cfg(feature = "typescript")]
//! # {
//! use serde_json::{json, Value};
//! use tools_code::{CodeMode, TypeScriptRuntime};
//! use tools_runtime::{Output, PresentationMode, ToolCall, ToolDefinition, ToolError, ToolRuntime};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let runtime = ToolRuntime::builder()
//!     .mode(PresentationMode::Code)
//!     .extension(CodeMode::new(TypeScriptRuntime::new()))
//!     .build()
//!     .unwrap();
//! let plugin = runtime.scope();
//! let _add = plugin
//!     .register(
//!         ToolDefinition::builder("add")
//!             .description("Add two integers.")
//!             .input_schema(json!({
//!                 "type": "object",
//!                 "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
//!                 "required": ["a", "b"]
//!             }))
//!             .output(Output::json(json!({"type": "integer"})))
//!             .concurrency_safe(|_| true)
//!             .execute(|args, _ctx| async move {
//!                 Ok::<Value, ToolError>(json!(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)))
//!             })
//!             .build()
//!             .unwrap(),
//!     )
//!     .unwrap();
//!
//! // Under `code` the model calls `run_code`; a direct call of `add` is refused.
//! let program = "const [x, y] = await Promise.all([tools.add({a: 1, b: 2}), tools.add({a: 3, b: 4})]);\n\
//!                console.log('sums', x, y);\n\
//!                return x + y;";
//! let result = runtime
//!     .execute(ToolCall::new("call-1", "run_code", json!({"code": program, "description": "add twice"})))
//!     .await;
//! assert_eq!(result.text(), "sums 3 7\n10");
//! let direct = runtime.execute(ToolCall::new("call-2", "add", json!({"a": 1, "b": 1}))).await;
//! assert_eq!(direct.code(), Some("UNKNOWN_TOOL"));
//! # }
//! # }
//! ```
//!
//! # Runtimes
//!
//! A Code Mode program is the *body* of an async function written by the model. It calls tools
//! through a `tools` object, prints with `console.log` (TypeScript) or `print` (Python), and may
//! `return` a JSON value. A runtime runs one program at a time per call to [`CodeRuntime::run`],
//! with state that is fresh for every run, and reports either a [`CodeCompletion`] (the captured
//! log lines and the optional return value) or a [`CodeFailure`] whose [`CodeFailureKind`] says
//! what went wrong.
//!
//! The runtime never decides what a tool call does: every call goes to the [`CodeHost`] the caller
//! passes in, with a [`CallReply`] to answer through, at once or later. The host decides where a
//! call's work runs; the runtime is only the program's event loop (it spawns no task for a
//! call). The dispatch bridge of `run_code` implements [`CodeHost`] by running each call
//! through the tool pipeline; tests and benches implement it directly or through [`FnHost`],
//! a host made of an async function.
//!
//! | runtime | feature | how it runs |
//! | --- | --- | --- |
//! | [`TypeScriptRuntime`] | `typescript` | QuickJS in-process, a fresh engine per run on a pooled thread, types stripped first |
//! | [`PythonRuntime`] | `python` | CPython in a child process forked from a warm zygote, or spawned per run |
//!
//! Both features are on by default, and each one is what brings in its engine. Counted with
//! `cargo tree -e normal` (distinct crates, this one included; `tools-runtime` alone is 64):
//!
//! | features | crates | what the feature adds |
//! | --- | --- | --- |
//! | `typescript`, `python` (default) | 187 | both of the below |
//! | `typescript` | 183 | `rquickjs` (QuickJS, compiled from C) and swc's strip-only TypeScript parser |
//! | `python` | 72 | `libc` and tokio's `process`, `net` and `io-util`: the interpreter is the machine's `python3` |
//! | none | 68 | `run_code`, the prompt sections, discovery and the [`CodeRuntime`] seam for a runtime of your own |
//!
//! A host that runs only Python programs writes
//! `tools-code = { version = "0.1", default-features = false, features = ["python"] }`.
//!
//! # Limits
//!
//! [`CodeLimits`] holds the memory limit, the wall-clock deadline, the stack limit, the output
//! cap (`max_output_bytes`, 64 MiB by default, counted over the UTF-8 bytes of every log line, the
//! compact JSON text of the result and the failure message together) and the size of one tool
//! call's arguments (`max_call_bytes`, 16 MiB by default, as compact JSON text). All are on by
//! default. Nothing a program hands the host is copied before it is checked against these: the
//! Python runtime fails a run as soon as a message from the child announces more than the
//! limits allow, before reading it.
//!
//! # Text quoted in messages
//!
//! Messages that quote text the program controls (a tool name it asked for, a property name in
//! a conversion path, an error's name or class name, a thrown value that is not an error) quote
//! at most 200 characters of it, followed by `… (N more bytes)` saying how many UTF-8 bytes were
//! left out. The message of an error the program raises is its own text and is not cut; like
//! every log line, it counts against `max_output_bytes`.
//!
//! # Example
//!
//! ```
//! # #[cfg(feature = "typescript")]
//! # {
//! use std::sync::Arc;
//! use serde_json::{json, Value};
//! use tokio_util::sync::CancellationToken;
//! use tools_code::{CallReply, CodeHost, CodeLimits, CodeRuntime, ToolCallFailure,
//!     TypeScriptRuntime};
//!
//! /// A host with one tool, `add`, that answers at once.
//! struct Adder;
//!
//! impl CodeHost for Adder {
//!     fn tool_names(&self) -> Vec<String> {
//!         vec!["add".to_owned()]
//!     }
//!     fn call(&self, name: &str, args: Value, reply: CallReply) {
//!         reply.send(match (name, args["a"].as_i64(), args["b"].as_i64()) {
//!             ("add", Some(a), Some(b)) => Ok(json!(a + b)),
//!             _ => Err(ToolCallFailure::new("add needs two integers")),
//!         });
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let runtime = TypeScriptRuntime::new();
//! let program = r#"
//!     const sum: number = await tools.add({ a: 2, b: 3 });
//!     console.log("sum is", sum);
//!     return { sum };
//! "#;
//! let done = runtime
//!     .run(program, Arc::new(Adder), &CodeLimits::default(), CancellationToken::new())
//!     .await
//!     .unwrap();
//! assert_eq!(done.logs, vec!["sum is 5"]);
//! assert_eq!(done.result, Some(json!({ "sum": 5 })));
//! # });
//! # }
//! ```
//!
// The chapters of this page: markdown files in `docs/`, part of the crate's package.
#![doc = include_str!("../docs/parts.md")]
#![doc = include_str!("../docs/analysis.md")]
#![doc = include_str!("../docs/callers-and-discovery.md")]
#![doc = include_str!("../docs/approvals.md")]
#![doc = include_str!("../docs/security.md")]

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub mod analysis;
pub mod assembly;
mod bridge;
pub mod discovery;
pub mod events;
mod host;
mod may_call;
mod mode;
#[cfg(any(feature = "typescript", feature = "python"))]
mod output;
mod sdk;

#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "typescript")]
pub mod typescript;

pub use analysis::{CODE_NOT_RUN, MAX_ANALYSIS_NESTING};
pub use assembly::{CODE_ONLY_SECTION, CODE_ONLY_SECTION_ORDER, SDK_SECTION, SDK_SECTION_ORDER};
pub use discovery::{
    DEFAULT_DESCRIBE_LIMIT, DEFAULT_DISCOVERY_ABOVE_BYTES, DESCRIBE_TOOLS_EMPTY, Discovery,
    MAX_DESCRIBE_TOOLS,
};
pub use events::{ChannelSink, RecordingSink, SessionEvent, SessionEventSink};
pub use host::{CallAnswer, CallReply, CallResult, CodeHost, Determinism, FnHost, SettleFuture};
pub use may_call::{ExecutionExt, MayCall};
pub use mode::{
    CODE_CALL_IN_DOUBT, CODE_RUN_DIVERGED, CODE_RUN_FAILED, CodeMode, CodeModeError,
    DEFAULT_MAX_PARALLEL_SUB_CALLS, DEFAULT_MAX_PENDING_SUB_CALLS, NO_OUTPUT, RESULT_MAX_INDENT,
    SpillFn, SpillRequest, render_result,
};
#[cfg(feature = "python")]
pub use python::{
    LayerStatus, PROCESS_LIMIT as PYTHON_PROCESS_LIMIT, SHM_BYTES as PYTHON_SHM_BYTES,
    SandboxLayer, SandboxPolicy, SandboxReport, TMP_BYTES as PYTHON_TMP_BYTES,
    TMP_INODES as PYTHON_TMP_INODES,
};
#[cfg(feature = "python")]
pub use python::{PythonMode, PythonRuntime};
#[cfg(feature = "typescript")]
pub use typescript::TypeScriptRuntime;

/// The language a [`CodeRuntime`] runs; the registry picks the SDK renderer by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeLanguage {
    /// TypeScript (erasable syntax only), run as JavaScript after its types are stripped.
    TypeScript,
    /// Python 3.
    Python,
}

impl CodeLanguage {
    /// The stable lower-case name: `typescript` or `python`.
    pub fn as_str(self) -> &'static str {
        match self {
            CodeLanguage::TypeScript => "typescript",
            CodeLanguage::Python => "python",
        }
    }
}

impl fmt::Display for CodeLanguage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call as the host reports it. The program sees it as a `ToolCallError` carrying
/// the tool's name and this message, nothing else.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolCallFailure {
    message: String,
}

impl ToolCallFailure {
    /// A failure with a human-readable message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolCallFailure {
            message: message.into(),
        }
    }

    /// The message the program sees.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The limits of one run. All are on by default; see each field for its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeLimits {
    /// Memory the program may use, in bytes (default 256 MiB). For TypeScript this bounds the
    /// engine's heap together with what the host holds for the run outside it (the arguments
    /// of calls still running, answers not taken yet). For Python it bounds the run's memory
    /// account (a cgroup per run: every process, shared memory, `tmpfs` pages, kernel memory;
    /// see `SandboxLayer::MemoryAccount`), each process's
    /// address space beyond the interpreter's own (`RLIMIT_AS`), and what the host holds for
    /// the run (replies not read, arguments of calls still running, log lines). Past it the run
    /// fails as [`CodeFailureKind::Memory`]; the runtimes' module docs have the tables.
    pub memory_bytes: usize,
    /// Wall-clock deadline from the moment the program starts (default 30 s). Time spent
    /// waiting for a free worker is not counted.
    pub timeout: Duration,
    /// Stack the program may use, in bytes (default 1 MiB, at most 64 MiB). Python maps it to a
    /// recursion limit of about one frame per 512 bytes.
    pub stack_bytes: usize,
    /// Cap on the output, in bytes (default 64 MiB): the UTF-8 bytes of every log line, the
    /// compact JSON text of the result and the failure message, together.
    pub max_output_bytes: usize,
    /// Cap on the arguments of one tool call, in bytes of compact JSON text (default 16 MiB).
    /// A call with larger arguments is rejected in the program (a `RangeError` in TypeScript,
    /// a `ValueError` in Python) and never reaches the host.
    pub max_call_bytes: usize,
}

/// The default memory limit: 256 MiB.
pub const DEFAULT_MEMORY_BYTES: usize = 256 * 1024 * 1024;
/// The default deadline: 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default stack limit: 1 MiB.
pub const DEFAULT_STACK_BYTES: usize = 1024 * 1024;
/// The default output cap: 64 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 64 * 1024 * 1024;
/// The default cap on one call's arguments: 16 MiB.
pub const DEFAULT_MAX_CALL_BYTES: usize = 16 * 1024 * 1024;
/// The largest stack limit a run may ask for: 64 MiB.
pub const MAX_STACK_BYTES: usize = 64 * 1024 * 1024;
/// The longest program either runtime accepts, in bytes of UTF-8 text: 1 MiB. A longer one is
/// a [`CodeFailureKind::Syntax`] failure that gives its size and the limit, before anything of
/// it is parsed or run.
pub const MAX_PROGRAM_BYTES: usize = 1024 * 1024;

/// Why a program longer than [`MAX_PROGRAM_BYTES`] is refused (its size and the limit), or
/// `None` for one that is not.
#[cfg(any(feature = "typescript", feature = "python"))]
pub(crate) fn too_long(program: &str) -> Option<String> {
    (program.len() > MAX_PROGRAM_BYTES).then(|| {
        format!(
            "the program is {} bytes long; the limit is {MAX_PROGRAM_BYTES} bytes",
            program.len()
        )
    })
}

impl Default for CodeLimits {
    fn default() -> Self {
        CodeLimits {
            memory_bytes: DEFAULT_MEMORY_BYTES,
            timeout: DEFAULT_TIMEOUT,
            stack_bytes: DEFAULT_STACK_BYTES,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_call_bytes: DEFAULT_MAX_CALL_BYTES,
        }
    }
}

impl CodeLimits {
    /// Sets the memory limit in bytes.
    #[must_use]
    pub fn with_memory_bytes(mut self, bytes: usize) -> Self {
        self.memory_bytes = bytes;
        self
    }

    /// Sets the wall-clock deadline.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the stack limit in bytes.
    #[must_use]
    pub fn with_stack_bytes(mut self, bytes: usize) -> Self {
        self.stack_bytes = bytes;
        self
    }

    /// Sets the output cap in bytes.
    #[must_use]
    pub fn with_max_output_bytes(mut self, bytes: usize) -> Self {
        self.max_output_bytes = bytes;
        self
    }

    /// Sets the cap on one call's arguments, in bytes of compact JSON text.
    #[must_use]
    pub fn with_max_call_bytes(mut self, bytes: usize) -> Self {
        self.max_call_bytes = bytes;
        self
    }

    /// Checks that every limit is usable. Runtimes call this first and fail the run with
    /// [`CodeFailureKind::Internal`] and this error's message otherwise.
    pub fn validate(&self) -> Result<(), CodeLimitsError> {
        if self.memory_bytes < 1024 * 1024 {
            return Err(CodeLimitsError::MemoryTooSmall {
                bytes: self.memory_bytes,
            });
        }
        if self.timeout.is_zero() {
            return Err(CodeLimitsError::ZeroTimeout);
        }
        if !(64 * 1024..=MAX_STACK_BYTES).contains(&self.stack_bytes) {
            return Err(CodeLimitsError::StackOutOfRange {
                bytes: self.stack_bytes,
            });
        }
        if self.max_output_bytes == 0 {
            return Err(CodeLimitsError::ZeroOutput);
        }
        if self.max_call_bytes < 2 {
            return Err(CodeLimitsError::CallTooSmall {
                bytes: self.max_call_bytes,
            });
        }
        Ok(())
    }
}

/// A [`CodeLimits`] value that no run can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeLimitsError {
    /// `memory_bytes` is below 1 MiB.
    #[error("limits.memory_bytes is {bytes}, but a run needs at least 1 MiB (1048576 bytes)")]
    MemoryTooSmall {
        /// The configured value.
        bytes: usize,
    },
    /// `timeout` is zero.
    #[error("limits.timeout is zero; give the program some time to run")]
    ZeroTimeout,
    /// `stack_bytes` is outside 64 KiB ..= 64 MiB.
    #[error(
        "limits.stack_bytes is {bytes}, but it must be between 65536 (64 KiB) and 67108864 (64 MiB)"
    )]
    StackOutOfRange {
        /// The configured value.
        bytes: usize,
    },
    /// `max_output_bytes` is zero.
    #[error("limits.max_output_bytes is zero; a run needs room for at least its failure message")]
    ZeroOutput,
    /// `max_call_bytes` is below 2 (the size of `{}`).
    #[error("limits.max_call_bytes is {bytes}, but a call needs at least 2 bytes (`{{}}`)")]
    CallTooSmall {
        /// The configured value.
        bytes: usize,
    },
}

impl CodeLimitsError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            CodeLimitsError::MemoryTooSmall { .. } => "LIMIT_MEMORY_TOO_SMALL",
            CodeLimitsError::ZeroTimeout => "LIMIT_ZERO_TIMEOUT",
            CodeLimitsError::StackOutOfRange { .. } => "LIMIT_STACK_OUT_OF_RANGE",
            CodeLimitsError::ZeroOutput => "LIMIT_ZERO_OUTPUT",
            CodeLimitsError::CallTooSmall { .. } => "LIMIT_CALL_TOO_SMALL",
        }
    }
}

/// A run that finished: what it printed and what it returned.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CodeCompletion {
    /// The captured log lines, in order.
    pub logs: Vec<String>,
    /// The returned value; `None` when the program returned nothing (`undefined` / `None`).
    pub result: Option<Value>,
}

/// Why a run failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodeFailureKind {
    /// The program does not parse (or uses syntax the runtime refuses, such as a TypeScript
    /// `enum`); the failure carries the line and column in the model's text.
    Syntax,
    /// An uncaught error, with its message and the program's line where known.
    Runtime,
    /// The wall-clock deadline passed.
    Timeout,
    /// The program exceeded its memory limit (even if it caught the error).
    Memory,
    /// Logs, result and failure message together exceeded `max_output_bytes`.
    OutputLimit,
    /// The returned value is not strict JSON.
    InvalidResult,
    /// The run was cancelled.
    Aborted,
    /// The runtime itself failed (could not start, lost its worker, was misconfigured).
    Internal,
}

impl CodeFailureKind {
    /// The stable lower-case name: `syntax`, `runtime`, `timeout`, `memory`, `output_limit`,
    /// `invalid_result`, `aborted` or `internal`.
    pub fn code(self) -> &'static str {
        match self {
            CodeFailureKind::Syntax => "syntax",
            CodeFailureKind::Runtime => "runtime",
            CodeFailureKind::Timeout => "timeout",
            CodeFailureKind::Memory => "memory",
            CodeFailureKind::OutputLimit => "output_limit",
            CodeFailureKind::InvalidResult => "invalid_result",
            CodeFailureKind::Aborted => "aborted",
            CodeFailureKind::Internal => "internal",
        }
    }
}

impl fmt::Display for CodeFailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// A run that failed, with the log lines captured before it did.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("code run failed ({kind}): {message}")]
pub struct CodeFailure {
    /// What went wrong.
    pub kind: CodeFailureKind,
    /// A human-readable explanation (for `runtime`, the error's name and message).
    pub message: String,
    /// The log lines captured before the failure.
    pub logs: Vec<String>,
    /// The 1-based line in the model's program, where known.
    pub line: Option<u32>,
    /// The 1-based column in the model's program, where known.
    pub column: Option<u32>,
}

impl CodeFailure {
    /// A failure without a position.
    pub fn new(kind: CodeFailureKind, message: impl Into<String>, logs: Vec<String>) -> Self {
        CodeFailure {
            kind,
            message: message.into(),
            logs,
            line: None,
            column: None,
        }
    }

    /// Adds the 1-based line and column in the model's program.
    #[must_use]
    pub fn at(mut self, line: Option<u32>, column: Option<u32>) -> Self {
        self.line = line;
        self.column = column;
        self
    }

    /// The stable code of the failure kind (see [`CodeFailureKind::code`]).
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

/// The outcome of one run.
pub type CodeOutcome = Result<CodeCompletion, CodeFailure>;

/// The future [`CodeRuntime::run`] returns. Dropping it cancels the run.
pub type CodeRunFuture = Pin<Box<dyn Future<Output = CodeOutcome> + Send>>;

/// The future [`CodeRuntime::analyse`] returns: `None` when the runtime does not analyse the
/// program, the failure the run would report for a program that does not parse, or what the
/// analysis found.
pub type AnalyseFuture =
    Pin<Box<dyn Future<Output = Option<Result<analysis::ProgramAnalysis, CodeFailure>>> + Send>>;

/// Work done on one program ahead of its run, for that run: TypeScript's stripped JavaScript
/// (the run's own wrapper check already passed on it), Python's code object compiled by the
/// zygote from the tree it analysed (marshalled). The pre-run analysis leaves it on the
/// `run_code` execution and the run takes it, so a program is parsed once for both. It is a
/// pure function of the program's text; a run given none does the work itself.
#[derive(Clone, PartialEq, Eq)]
pub struct PreparedProgram {
    pub(crate) language: CodeLanguage,
    pub(crate) work: String,
}

impl PreparedProgram {
    /// The language the work is for.
    pub fn language(&self) -> CodeLanguage {
        self.language
    }

    /// The work if it is for `language`.
    #[cfg(any(feature = "typescript", feature = "python"))]
    pub(crate) fn into_work(self, language: CodeLanguage) -> Option<String> {
        (self.language == language).then_some(self.work)
    }
}

impl fmt::Debug for PreparedProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedProgram")
            .field("language", &self.language)
            .field("bytes", &self.work.len())
            .finish()
    }
}

/// Locks `mutex`, whether or not a holder panicked (every value kept behind one stays whole).
pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An estimate of the bytes a `serde_json` value holds on the heap and inline: each node, each
/// string's and array's capacity, each object entry's key and slot.
pub(crate) fn held_size(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    const NODE: usize = std::mem::size_of::<Value>();
    const ENTRY: usize = std::mem::size_of::<String>() + 2 * std::mem::size_of::<usize>();
    let mut size = NODE;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => size += text.capacity(),
            Value::Array(items) => {
                size += items.capacity() * NODE;
                stack.extend(items);
            }
            Value::Object(map) => {
                for (key, item) in map {
                    size += ENTRY + key.capacity() + NODE;
                    stack.push(item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    size
}

/// `bytes` as lowercase hexadecimal text (how random bytes a program drew travel and are
/// journaled, see [`Determinism::entropy`]).
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len().saturating_mul(2));
    for &byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    text
}

/// The bytes of hexadecimal `text` (either case); `None` when it is not an even number of
/// hexadecimal digits.
pub(crate) fn from_hex(text: &str) -> Option<Vec<u8>> {
    fn digit(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    }
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks_exact(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

/// A language runtime for Code Mode programs.
///
/// `run` must be polled inside a tokio runtime: the host's calls run in its context. Every run
/// gets fresh state; nothing one run leaves behind is visible to the next. The runtime hands
/// each call to the host ([`CodeHost::call`], inside that runtime's context) and spawns no task
/// for it; when the run ends it stops listening to the calls still running and awaits
/// [`CodeHost::settle`], so the returned future resolves only after the host has settled them.
pub trait CodeRuntime: Send + Sync + fmt::Debug {
    /// The language this runtime runs.
    fn language(&self) -> CodeLanguage;

    /// Runs `program` against `host` under `limits` until it completes, fails, reaches its
    /// deadline or `cancel` fires (then the run fails as [`CodeFailureKind::Aborted`]), using
    /// the work the pre-run analysis did on it when given (see [`PreparedProgram`]; a runtime
    /// may ignore it, or work it cannot use, and do the work itself). `run_code` runs every
    /// program through this.
    fn run_prepared(
        &self,
        program: &str,
        prepared: Option<PreparedProgram>,
        host: Arc<dyn CodeHost>,
        limits: &CodeLimits,
        cancel: CancellationToken,
    ) -> CodeRunFuture;

    /// [`run_prepared`](Self::run_prepared) without prepared work: the runtime parses and
    /// compiles `program` itself.
    fn run(
        &self,
        program: &str,
        host: Arc<dyn CodeHost>,
        limits: &CodeLimits,
        cancel: CancellationToken,
    ) -> CodeRunFuture {
        self.run_prepared(program, None, host, limits, cancel)
    }

    /// Finds the tool calls `program` can make without running it (see [`analysis`]). The
    /// default analyses nothing (`None`: every program may call any tool). `run_code` asks this
    /// for Python programs; TypeScript programs are analysed by the crate itself, whatever the
    /// runtime.
    fn analyse(&self, program: &str) -> AnalyseFuture {
        let _ = program;
        Box::pin(std::future::ready(None))
    }
}

#[cfg(test)]
mod tests {
    use super::{from_hex, to_hex};

    #[test]
    fn hex_text_round_trips_and_refuses_what_is_not_hex() {
        let bytes: Vec<u8> = (0..=255).collect();
        let text = to_hex(&bytes);
        assert_eq!(text.len(), 512);
        assert!(text.starts_with("000102") && text.ends_with("fdfeff"));
        assert_eq!(from_hex(&text), Some(bytes));
        assert_eq!(from_hex("ABcd"), Some(vec![0xab, 0xcd]));
        assert_eq!(from_hex(""), Some(Vec::new()));
        for bad in ["0", "0g", "zz", "é0", " 00"] {
            assert_eq!(from_hex(bad), None, "{bad}");
        }
    }
}
