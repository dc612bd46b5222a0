//! Errors: the failure a tool body returns ([`ToolError`]), the failures the pipeline itself
//! produces ([`ExecutionError`]), and the errors of building and registering definitions
//! ([`DefinitionError`], [`RegistryError`]). Each has a stable `code()` string, one of the
//! [`codes`] the call room keeps with the result. A call that could not pause carries the
//! approvals room's [`ApprovalError`], so this room sits above that one.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;

use tools_schema::excerpt::cut;

use crate::call::progress::ProgressError;
use crate::call::result::codes;
use crate::durable::approvals::ApprovalError;

/// A user error type that names its own failure code.
///
/// Implement it for the error type of a tool body so the result carries your code instead of
/// [`codes::TOOL_FAILED`]; `?` then converts it into a [`ToolError`]. The `#[tool]` macro prefers
/// this trait over [`fmt::Display`] when a body's error type implements both.
///
/// ```
/// use tools_runtime::ToolError;
/// use tools_runtime::error::ToolFailure;
///
/// #[derive(Debug)]
/// struct NotFound(String);
/// impl std::fmt::Display for NotFound {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         write!(f, "no file at {}", self.0)
///     }
/// }
/// impl ToolFailure for NotFound {
///     fn code(&self) -> &str { "NOT_FOUND" }
/// }
///
/// let err: ToolError = NotFound("/tmp/x".into()).into();
/// assert_eq!(err.code(), "NOT_FOUND");
/// assert_eq!(err.message(), "no file at /tmp/x");
/// ```
pub trait ToolFailure: fmt::Display {
    /// The stable code of this failure, such as `NOT_FOUND`.
    fn code(&self) -> &str;
}

/// The failure of a tool body or an execute wrapper: a message for the model and a stable code.
///
/// The failure content the model reads is exactly `Error: <message>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
    code: Cow<'static, str>,
}

impl ToolError {
    /// A failure with `message` and the default code [`codes::TOOL_FAILED`].
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: Cow::Borrowed(codes::TOOL_FAILED),
        }
    }

    /// A failure with an explicit `code`.
    pub fn with_code(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            code: code.into(),
        }
    }

    /// A failure from a type that names its own code.
    pub fn from_failure<E: ToolFailure + ?Sized>(error: &E) -> Self {
        ToolError {
            message: error.to_string(),
            code: Cow::Owned(error.code().to_owned()),
        }
    }

    /// A failure from anything displayable, with the default code [`codes::TOOL_FAILED`].
    pub fn from_display<E: fmt::Display + ?Sized>(error: &E) -> Self {
        ToolError::new(error.to_string())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The stable code.
    pub fn code(&self) -> &str {
        &self.code
    }

    pub(crate) fn into_parts(self) -> (String, Cow<'static, str>) {
        (self.message, self.code)
    }

    pub(crate) fn from_execution(error: ExecutionError) -> Self {
        ToolError {
            message: error.to_string(),
            code: Cow::Borrowed(error.code()),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl<E: ToolFailure> From<E> for ToolError {
    fn from(error: E) -> Self {
        ToolError::from_failure(&error)
    }
}

impl From<ProgressError> for ToolError {
    fn from(error: ProgressError) -> Self {
        ToolError::with_code(error.code(), error.to_string())
    }
}

/// Where in the pipeline a panic was caught.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PanicSite {
    /// The tool body.
    Body,
    /// A pre-execute or post-execute listener, or the approval service.
    Listener,
    /// A guard.
    Guard,
    /// An execute wrapper.
    Wrapper,
    /// The output declaration's `render` or `presentation_meta`.
    Render,
}

impl fmt::Display for PanicSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PanicSite::Body => "the tool body",
            PanicSite::Listener => "a listener",
            PanicSite::Guard => "a guard",
            PanicSite::Wrapper => "an execute wrapper",
            PanicSite::Render => "the output renderer",
        })
    }
}

/// A failure the pipeline itself produces. Its [`code`](ExecutionError::code) and message become
/// the result's [`ToolFailureInfo`](crate::ToolFailureInfo).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutionError {
    /// No visible tool has this name. The requested name comes from the model and is quoted
    /// cut to [`excerpt::LIMIT`](tools_schema::excerpt::LIMIT) characters with a marker; so are
    /// the names in the other variants that quote a requested name.
    #[error("unknown tool `{}`{}", cut(.name), suggestion(.suggestions))]
    UnknownTool {
        /// The requested name.
        name: String,
        /// The closest visible names, best first.
        suggestions: Vec<String>,
    },
    /// The call names a tool other than `run_code` (and `describe_tools`) directly, from a
    /// scope in Code Mode (`code`), where only those may be called directly.
    #[error(
        "`{}` cannot be called directly here: this agent calls its tools from `run_code` \
         programs; call it from inside a `run_code` program instead",
        cut(.name)
    )]
    CodeOnly {
        /// The requested name.
        name: String,
    },
    /// The tool declares [`Callers::Code`](crate::Callers::Code) and the model called it
    /// directly (a call without a parent).
    #[error("{}", code_callers_message(.name, *.code_offered))]
    CodeCallersOnly {
        /// The requested name.
        name: String,
        /// Whether the agent's mode offers `run_code`, the way the tool can be called.
        code_offered: bool,
    },
    /// The tool declares [`Callers::Direct`](crate::Callers::Direct) and a `run_code` program
    /// called it, or the model called it directly from an agent presented as `code`.
    #[error("{}", direct_callers_message(.name, *.from_program, *.direct_offered))]
    DirectCallersOnly {
        /// The requested name.
        name: String,
        /// Whether a `run_code` program made the call.
        from_program: bool,
        /// Whether the agent's mode offers direct calls of its tools (`native` or `both`).
        direct_offered: bool,
    },
    /// The calling agent scope is no longer live.
    #[error("unknown tool `{}`: the calling agent scope has been disposed", cut(.name))]
    ScopeGone {
        /// The requested name.
        name: String,
    },
    /// The arguments do not match the input schema.
    #[error("invalid arguments for `{tool}`: {violations}")]
    InvalidArgs {
        /// The tool.
        tool: String,
        /// Every violation, `; `-separated, each with its JSON pointer.
        violations: String,
    },
    /// Cancelled before the body started.
    #[error("the call to `{tool}` was cancelled before it started")]
    AbortedBeforeDispatch {
        /// The tool.
        tool: String,
    },
    /// Cancelled after the body started.
    #[error("the call to `{tool}` was cancelled")]
    Aborted {
        /// The tool.
        tool: String,
    },
    /// A pre-execute listener denied the call (or approval was not given).
    #[error("{reason}")]
    Denied {
        /// The reason given.
        reason: String,
    },
    /// A guard denied the call.
    #[error("{reason}")]
    GuardDenied {
        /// The reason given.
        reason: String,
    },
    /// The produced value does not match the output schema.
    #[error("`{tool}` produced an invalid output: {violations}")]
    InvalidOutput {
        /// The tool.
        tool: String,
        /// Every violation, `; `-separated.
        violations: String,
    },
    /// A post-execute listener blocked the result.
    #[error("{feedback}")]
    Blocked {
        /// The listener's feedback.
        feedback: String,
    },
    /// The shipped timeout wrapper stopped the call.
    #[error("`{tool}` did not finish within {millis} ms")]
    Timeout {
        /// The tool.
        tool: String,
        /// The deadline, in milliseconds.
        millis: u128,
    },
    /// The shipped timeout wrapper stopped a call whose timeout resets on progress: it made no
    /// progress report for the timeout.
    #[error("`{tool}` reported no progress for {millis} ms")]
    NoProgress {
        /// The tool.
        tool: String,
        /// The timeout, in milliseconds.
        millis: u128,
    },
    /// The shipped timeout wrapper stopped a call whose timeout resets on progress: it ran for
    /// its maximum total time, progress or not.
    #[error("`{tool}` did not finish within its maximum total time of {millis} ms")]
    MaxTotalTime {
        /// The tool.
        tool: String,
        /// The maximum total time, in milliseconds.
        millis: u128,
    },
    /// The approval service deferred its decision and the call could not pause: the runtime
    /// keeps no paused calls, the call came from an agent scope without a name, or the store
    /// failed. The code is the [`ApprovalError`](crate::approvals::ApprovalError)'s.
    #[error("the call to `{tool}` could not pause for its approval: {error}")]
    PauseFailed {
        /// The tool.
        tool: String,
        /// Why.
        #[source]
        error: std::sync::Arc<ApprovalError>,
    },
    /// A panic was caught.
    #[error("{site} of `{tool}` panicked: {message}")]
    Panicked {
        /// Where.
        site: PanicSite,
        /// The tool.
        tool: String,
        /// The panic payload, when it was a string.
        message: String,
    },
}

/// Names for a message, each cut, at most [`LIST_LIMIT`] of them, comma-separated.
/// The message of [`ExecutionError::CodeCallersOnly`]: what the tool allows, then the way back
/// when the agent has one.
fn code_callers_message(name: &str, code_offered: bool) -> String {
    let name = cut(name);
    if code_offered {
        format!(
            "`{name}` cannot be called directly: it can only be called from inside a `run_code` \
             program; call it there instead, as a function of the SDK"
        )
    } else {
        format!(
            "`{name}` cannot be called directly: it can only be called from inside a `run_code` \
             program, and this agent is not offered `run_code`, so it cannot be called here"
        )
    }
}

/// The message of [`ExecutionError::DirectCallersOnly`]: what the tool allows, then the way back
/// when the agent has one.
fn direct_callers_message(name: &str, from_program: bool, direct_offered: bool) -> String {
    let name = cut(name);
    let head = if from_program {
        format!(
            "`{name}` cannot be called from a `run_code` program: it can only be called directly"
        )
    } else {
        format!("`{name}` is not available here: it can only be called directly")
    };
    if direct_offered {
        format!("{head}; make it a tool call of its own, outside `run_code`")
    } else {
        format!(
            "{head}, and this agent calls its tools only through `run_code`, so it cannot be \
             called here"
        )
    }
}

fn cut_list(names: &[String]) -> String {
    let mut out: Vec<String> = names
        .iter()
        .take(LIST_LIMIT)
        .map(|n| cut(n).into_owned())
        .collect();
    if names.len() > LIST_LIMIT {
        out.push(format!("and {} more", names.len() - LIST_LIMIT));
    }
    out.join(", ")
}

/// How many names a message lists at most.
const LIST_LIMIT: usize = 20;

fn suggestion(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        many => {
            let list: Vec<String> = many.iter().map(|n| format!("`{n}`")).collect();
            format!("; did you mean one of {}?", list.join(", "))
        }
    }
}

impl ExecutionError {
    /// The stable code of this failure (see [`codes`]).
    pub fn code(&self) -> &'static str {
        match self {
            ExecutionError::UnknownTool { .. }
            | ExecutionError::CodeOnly { .. }
            | ExecutionError::CodeCallersOnly { .. }
            | ExecutionError::DirectCallersOnly { .. }
            | ExecutionError::ScopeGone { .. } => codes::UNKNOWN_TOOL,
            ExecutionError::InvalidArgs { .. } => codes::INVALID_ARGS,
            ExecutionError::AbortedBeforeDispatch { .. } => codes::ABORTED_BEFORE_DISPATCH,
            ExecutionError::Aborted { .. } => codes::ABORTED,
            ExecutionError::Denied { .. } => codes::DENIED,
            ExecutionError::GuardDenied { .. } => codes::GUARD_DENIED,
            ExecutionError::InvalidOutput { .. } => codes::INVALID_OUTPUT,
            ExecutionError::Blocked { .. } => codes::BLOCKED,
            ExecutionError::Timeout { .. }
            | ExecutionError::NoProgress { .. }
            | ExecutionError::MaxTotalTime { .. } => codes::TOOL_TIMEOUT,
            ExecutionError::PauseFailed { error, .. } => error.code(),
            ExecutionError::Panicked { site, .. } => match site {
                PanicSite::Body => codes::TOOL_PANICKED,
                PanicSite::Listener => codes::LISTENER_PANICKED,
                PanicSite::Guard => codes::GUARD_PANICKED,
                PanicSite::Wrapper => codes::WRAPPER_PANICKED,
                PanicSite::Render => codes::RENDER_PANICKED,
            },
        }
    }
}

/// A definition could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// The name breaks the tool-name rule (1 to 128 characters from `A-Z a-z 0-9 _ - .`).
    #[error("invalid tool name {name:?}: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No body was given.
    #[error("tool `{name}` has no body: call `execute(...)` on the builder")]
    MissingBody {
        /// The tool.
        name: String,
    },
    /// No output declaration was given.
    #[error("tool `{name}` has no output declaration: call `output(...)` on the builder")]
    MissingOutput {
        /// The tool.
        name: String,
    },
    /// No input schema was given.
    #[error("tool `{name}` has no input schema: call `input_schema(...)` on the builder")]
    MissingInputSchema {
        /// The tool.
        name: String,
    },
    /// The input schema is outside the supported subset or not an object schema.
    #[error("tool `{name}`: unsupported input schema: {details}")]
    InvalidInputSchema {
        /// The tool.
        name: String,
        /// What is wrong and where (JSON pointers).
        details: String,
    },
    /// The output schema is outside the supported subset.
    #[error("tool `{name}`: unsupported output schema: {details}")]
    InvalidOutputSchema {
        /// The tool.
        name: String,
        /// What is wrong and where (JSON pointers).
        details: String,
    },
    /// The timeout is zero, negative or not finite.
    #[error("tool `{name}`: the timeout must be positive and finite, got {given}")]
    InvalidTimeout {
        /// The tool.
        name: String,
        /// The given value, as written.
        given: String,
    },
    /// A timeout that resets on progress without a timeout, or with a maximum total time
    /// shorter than the timeout.
    #[error("tool `{name}`: {reason}")]
    InvalidProgressTimeout {
        /// The tool.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The annotations contradict each other (a read-only tool that says it is destructive).
    #[error("tool `{name}`: {reason}")]
    InvalidAnnotations {
        /// The tool.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

impl DefinitionError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            DefinitionError::InvalidName { .. } => "INVALID_TOOL_NAME",
            DefinitionError::MissingBody { .. } => "MISSING_BODY",
            DefinitionError::MissingOutput { .. } => "MISSING_OUTPUT",
            DefinitionError::MissingInputSchema { .. } => "MISSING_INPUT_SCHEMA",
            DefinitionError::InvalidInputSchema { .. } => "INVALID_INPUT_SCHEMA",
            DefinitionError::InvalidOutputSchema { .. } => "INVALID_OUTPUT_SCHEMA",
            DefinitionError::InvalidTimeout { .. }
            | DefinitionError::InvalidProgressTimeout { .. } => "INVALID_TIMEOUT",
            DefinitionError::InvalidAnnotations { .. } => "INVALID_ANNOTATIONS",
        }
    }
}

/// A registry operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The name is already registered (or reserved) in this layer.
    #[error("`{}` is already {what} in this scope", cut(.name))]
    Duplicate {
        /// The name.
        name: String,
        /// `registered` or `reserved`.
        what: &'static str,
    },
    /// The name is reserved by the registry (`run_code`, `describe_tools`).
    #[error(
        "`{}` is reserved by the registry and cannot be registered, reserved or restricted",
        cut(.name)
    )]
    ReservedName {
        /// The name.
        name: String,
    },
    /// An agent scope of this name is live already: names of live agent scopes are unique in a
    /// runtime (a paused call finds its scope by name when it is resumed).
    #[error("an agent scope named `{}` is live already", cut(.name))]
    AgentNameTaken {
        /// The name.
        name: String,
    },
    /// `restrict` was called on the global scope.
    #[error("only an agent scope can be restricted; the global tool set is changed by registering")]
    NotAgentScope,
    /// The filter names nothing.
    #[error("a tool filter must name at least one tool")]
    EmptyFilter,
    /// The filter names tools that are not global tools or reserved global names.
    #[error("the filter names unknown tools: {}", cut_list(.names))]
    UnknownNames {
        /// The unknown names.
        names: Vec<String>,
    },
    /// The filter names tools local to an agent scope; masks apply to global tools only.
    #[error(
        "the filter names agent-local tools, which masks do not apply to: {}",
        cut_list(.names)
    )]
    LocalNames {
        /// The local names.
        names: Vec<String>,
    },
    /// `present_as` was called on the global scope.
    #[error(
        "only an agent scope can choose its presentation mode; the runtime's own mode is set \
         with `ToolRuntime::builder().mode(..)`"
    )]
    PresentAsOnGlobal,
    /// `present_as` was called a second time on the same scope.
    #[error(
        "this scope already chose its presentation mode (`{current}`); dispose that \
         registration first"
    )]
    PresentAsTwice {
        /// The mode chosen first.
        current: String,
    },
    /// The scope (or one of its ancestors) has been disposed.
    #[error("the scope has been disposed")]
    ScopeDisposed,
    /// The definition could not be built.
    #[error(transparent)]
    Definition(#[from] DefinitionError),
}

impl RegistryError {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            RegistryError::Duplicate { .. } => "DUPLICATE_NAME",
            RegistryError::ReservedName { .. } => "RESERVED_NAME",
            RegistryError::NotAgentScope => "NOT_AGENT_SCOPE",
            RegistryError::AgentNameTaken { .. } => "AGENT_NAME_TAKEN",
            RegistryError::EmptyFilter => "EMPTY_FILTER",
            RegistryError::UnknownNames { .. } => "UNKNOWN_NAMES",
            RegistryError::LocalNames { .. } => "LOCAL_NAMES",
            RegistryError::PresentAsOnGlobal => "PRESENT_AS_ON_GLOBAL",
            RegistryError::PresentAsTwice { .. } => "PRESENT_AS_TWICE",
            RegistryError::ScopeDisposed => "SCOPE_DISPOSED",
            RegistryError::Definition(e) => e.code(),
        }
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_owned()
    }
}

/// A panic at `site` as the failure it becomes.
pub(crate) fn panicked(site: PanicSite, tool: String, payload: Box<dyn Any + Send>) -> ToolError {
    ToolError::from_execution(ExecutionError::Panicked {
        site,
        tool,
        message: panic_message(&*payload),
    })
}
