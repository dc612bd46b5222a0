//! Define, govern and run the tools of LLM agents.
//!
//! A [`ToolRuntime`] is a registry many agents share. Tools and policy hooks are registered
//! through [`Scope`]s: [`ToolRuntime::scope`] for the global layer (what a plugin registers),
//! [`ToolRuntime::agent_scope`] and [`Scope::agent`] for agent layers that nest, shadow globals
//! and mask them. Everything registered through a scope goes when the scope is dropped.
//!
//! Every model tool call runs through [`ToolRuntime::execute`], one pipeline in a fixed order:
//! freeze the arguments, resolve the tool (`UNKNOWN_TOOL`), validate them (`INVALID_ARGS`),
//! pre-execute decisions ([`Scope::on_pre_execute`]: allow, deny, or ask an
//! [`ApprovalService`](hooks::ApprovalService)), guards ([`Scope::guard`]), execute wrappers around the body
//! ([`Scope::wrap_execute`]), output validation (`INVALID_OUTPUT`) and rendering, post-execute
//! decisions ([`Scope::on_post_execute`]), the definition's `finalize_content`, and observers
//! ([`Scope::on_result`]). Each call publishes exactly one [`ToolExecutionResult`]. Cancellation
//! is cooperative through a [`CancellationToken`]; see [`codes`] for the failure codes.
//!
//! [`ToolRuntime::execution_mode`] and [`ToolRuntime::execute_batch`] schedule a model turn's
//! calls: concurrency-safe calls overlap in a bounded pool, others run alone, and results come
//! back in the model's order; the pool is [`schedule::OrderedPool`], which any scheduler with
//! the same rule can use (Code Mode runs a program's calls through one). [`wrappers`] ships an opt-in timeout wrapper and call metrics.
//! A long-running body reports how far it has come ([`ToolRunContext::progress`], see
//! [`progress`]); the call's caller and its scopes' listeners see the reports, and a timeout
//! can restart on them. Each call is an `execute_tool <name>` `tracing` span with
//! OpenTelemetry's GenAI attributes (exported by the `tools-otel` crate).
//!
//! # Presentation and Code Mode
//!
//! Per agent, the model sees the tools as native function definitions, as a typed SDK it
//! programs against through the reserved `run_code` tool, or both ([`PresentationMode`]: set
//! on the runtime with [`ToolRuntime::builder`], per agent with [`Scope::present_as`]).
//! [`ToolRuntime::assemble`] gives what a scope contributes to a model request (see
//! [`presentation`]). Code Mode itself (the `run_code` tool, its TypeScript and Python
//! runtimes, the SDK section) is the `tools-code` crate, installed through this crate's
//! [`extension`] seam: a runtime without it compiles no engine. The registry's own rules still
//! hold for every call: a tool's [`Callers`] and, under `code`, the code-only rule, read from
//! the call's [`CallOrigin`].
//!
//! # Decisions worth knowing
//!
//! - **Scoping.** A listener, guard or wrapper registered through an agent scope sees only calls
//!   made from that agent or from agents nested in it; one registered through a global scope sees
//!   every call. Registry change notifications are the exception: every `on_change` listener sees
//!   every change.
//! - **Snapshots.** A call reads the visible definition and every listener list once, at entry;
//!   registrations made or disposed during the call apply to later calls.
//! - **Waterfalls.** Pre-execute listeners receive the decision so far and return the next one,
//!   so a later listener may overturn an earlier denial; guards cannot be overturned.
//! - **No task is spawned.** [`ToolRuntime::execute`] runs every phase inside its own future and
//!   awaits the body to completion, so it returns only after the body settled. Dropping that
//!   future drops the call in place (body included) and publishes no result. A wrapper that
//!   spawns the rest of the chain onto another task leaves this guarantee.
//! - **A decision beats a cancellation.** When the caller's token fires while policy runs, a
//!   denial reached so far (pre-execute, an `ask` without a service, a refused approval, a
//!   guard) is the result; anything else becomes `ABORTED_BEFORE_DISPATCH` and nothing later in
//!   policy runs. After the body started, cancellation replaces only a success (`ABORTED`).
//! - **Timeouts are cooperative.** A definition's `timeout` is declarative; the opt-in
//!   [`wrappers::timeout`] enforces it by cancelling the body's token and waiting for it to stop.
//! - **Tracing.** Each call is an `execute_tool` span (exported as `execute_tool <name>`) with
//!   OpenTelemetry's GenAI attributes and the toolkit's own under `agent_tools.` (see
//!   [Traces](#traces)). `agent_tools.token` and `agent_tools.parent` are process-local numbers
//!   that correlate spans and mean nothing outside the process.
//! - **Fault containment.** A panicking body, hook or wrapper becomes a failure result; a
//!   panicking observer or progress listener is logged and skipped.
//!
//! # What else is here
//!
//! - Each call's [`CallOrigin`] (direct, nested, or a program's), and the typed [`Extensions`] a
//!   definition's prepare hook leaves on the execution for listeners and the body to read.
//! - The extension seam ([`extension`]): owned tools under the reserved names, and a presenter
//!   that adds to prompt assembly.
//! - Presentation cards ([`cards`]: `CallView` and `ResultView`, drawn by a definition's
//!   `present_call` and `present_result` from the arguments and what a log keeps of the result,
//!   with a generic fallback) and Claude Code tool names ([`cc_names::NameTable`]).
//! - MCP's behaviour hints on a definition ([`ToolAnnotations`]).
//!
//! # Example
//!
//! Register a tool, add a guard, execute a call, read the result:
//!
//! ```
//! use serde_json::{json, Value};
//! use tools_runtime::{Output, ToolCall, ToolDefinition, ToolError, ToolRuntime};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let runtime = ToolRuntime::new();
//! let plugin = runtime.scope();
//!
//! let greet = ToolDefinition::builder("greet")
//!     .description("Greet someone by name.")
//!     .input_schema(json!({
//!         "type": "object",
//!         "properties": {"name": {"type": "string"}},
//!         "required": ["name"]
//!     }))
//!     .output(Output::json(json!({"type": "string"})))
//!     .execute(|args, _ctx| async move {
//!         let name = args["name"].as_str().unwrap_or_default();
//!         Ok::<Value, ToolError>(json!(format!("Hello, {name}!")))
//!     })
//!     .build()
//!     .unwrap();
//! let _greet = plugin.register(greet).unwrap();
//!
//! // Policy: nobody greets Mallory.
//! let _guard = plugin
//!     .guard(|exec| (exec.arguments()["name"] == "Mallory").then(|| "not Mallory".to_owned()))
//!     .unwrap();
//!
//! let ok = runtime.execute(ToolCall::new("call-1", "greet", json!({"name": "Ada"}))).await;
//! assert_eq!(ok.value(), Some(&json!("Hello, Ada!")));
//! assert_eq!(ok.text(), "Hello, Ada!");
//!
//! let denied = runtime
//!     .execute(ToolCall::new("call-2", "greet", json!({"name": "Mallory"})))
//!     .await;
//! assert_eq!(denied.code(), Some("GUARD_DENIED"));
//! assert_eq!(denied.text(), "Error: not Mallory");
//!
//! let invalid = runtime.execute(ToolCall::new("call-3", "greet", json!({}))).await;
//! assert_eq!(invalid.code(), Some("INVALID_ARGS"));
//!
//! let typo = runtime.execute(ToolCall::new("call-4", "greeet", json!({}))).await;
//! assert_eq!(typo.code(), Some("UNKNOWN_TOOL"));
//! assert!(typo.text().contains("did you mean `greet`?"));
//! # }
//! ```
//!
// The chapters of this page: markdown files in `docs/`, part of the crate's package.
#![doc = include_str!("../docs/progress.md")]
#![doc = include_str!("../docs/approvals.md")]
#![doc = include_str!("../docs/traces.md")]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod assembly;
mod call;
pub mod cc_names;
mod durable;
mod errors;
mod execution;
mod extensions;
mod mode;
mod pipeline;
mod policy;
pub mod presentation;
mod registry;
mod runtime;
pub mod suggest;

#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;

pub use pipeline::schedule;
pub use pipeline::wrappers;

/// The schema vocabulary (`tools-schema`): the typed [`Schema`](schema::Schema) model, JSON
/// Schema projection, validation, and the catalog entry [`schema::CatalogEntry`] that
/// [`ToolRuntime::schemas`] returns.
pub use tools_schema as schema;

/// The seam registry-owned capabilities (Code Mode) plug into when the runtime is built.
pub mod extension {
    pub use crate::presentation::extension::*;
    pub use crate::runtime::handle::{Presenter, SchemaList};
}
pub mod progress {
    //! How far a running call has come: the reports a tool body makes ([`Progress`]), what refuses
    //! a report ([`ProgressError`]), and who sees them.
    //!
    //! A body reports with [`ToolRunContext::progress`](crate::ToolRunContext::progress). Each
    //! report is checked before anything sees it: `done` and `total` must be finite and at least
    //! zero, and `done` must be larger than the last report's (the rule MCP sets for
    //! `notifications/progress`, so a report can be forwarded as it is). A message longer than
    //! [`excerpt::LIMIT`](tools_schema::excerpt::LIMIT) characters is cut, with a note of how much
    //! was left out. A report after the call's body has settled is
    //! refused: nothing sees progress after the call's result.
    //!
    //! A valid report goes, in this order, to
    //!
    //! 1. the call's own sink, set by its caller with
    //!    [`ToolCall::with_progress`](crate::ToolCall::with_progress) (MCP serve forwards it to the
    //!    client; Code Mode's bridge records it as a session event and reports it as the program's
    //!    progress);
    //! 2. the progress listeners of the call's scopes
    //!    ([`Scope::on_progress`](crate::Scope::on_progress)), those the call entered with;
    //! 3. the [`timeout`](crate::wrappers::timeout) wrapper, which restarts the deadline of a tool
    //!    whose timeout [resets on progress](crate::definition::ToolDefinitionBuilder::timeout_resets_on_progress).
    //!
    //! Sinks and listeners run on the body's task, inside the call: keep them short. One that
    //! panics is logged and skipped.
    //!
    //! ```
    //! use serde_json::json;
    //! use tools_runtime::progress::Progress;
    //! use tools_runtime::{Output, ToolCall, ToolDefinition, ToolRuntime};
    //!
    //! # tokio::runtime::Runtime::new().unwrap().block_on(async {
    //! let runtime = ToolRuntime::new();
    //! let plugin = runtime.scope();
    //! let copy = ToolDefinition::builder("copy")
    //!     .input_schema(json!({"type": "object"}))
    //!     .output(Output::json(json!({"type": "integer"})))
    //!     .execute(|_args, ctx| async move {
    //!         for part in 1..=3 {
    //!             ctx.progress(Progress::new(f64::from(part)).with_total(3.0).with_message("copying"))?;
    //!         }
    //!         Ok(json!(3))
    //!     })
    //!     .build()
    //!     .unwrap();
    //! let _copy = plugin.register(copy).unwrap();
    //!
    //! let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    //! let sink = seen.clone();
    //! let call = ToolCall::new("c1", "copy", json!({}))
    //!     .with_progress(move |progress| sink.lock().unwrap().push(progress.done()));
    //! let result = runtime.execute(call).await;
    //! assert_eq!(result.value(), Some(&json!(3)));
    //! assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0]);
    //! # });
    //! ```

    pub use crate::call::progress::{Progress, ProgressError, ProgressSink};
}
pub mod approvals {
    //! Approvals that wait for a person, survive a restart and bind to what was reviewed.
    //!
    //! An [`ApprovalService`](crate::hooks::ApprovalService) may answer
    //! [`Approval::Deferred`](crate::hooks::Approval::Deferred) instead of yes or no. With durable
    //! approvals installed ([`ToolRuntimeBuilder::durable_approvals`](crate::presentation::ToolRuntimeBuilder::durable_approvals)),
    //! the call is then written to an [`ApprovalStore`] before `execute` returns, at once, a
    //! failure with the code `APPROVAL_PENDING` whose [`pending`](crate::ToolExecutionResult::pending)
    //! carries a [`PendingHandle`]: show it to a reviewer, persist it (its text form is one
    //! line), and later call [`ToolRuntime::resume`](crate::ToolRuntime::resume) with it and
    //! the decision, in this process or in any other that has the same tools registered, the
    //! same store and the same key, after a restart too. Resume returns the one result the call
    //! would have produced.
    //!
    //! # The rules
    //!
    //! - **What was reviewed is what runs.** The handle carries the tool, the canonical
    //!   arguments (keys in code-point order), the agent scope's name and the call id, and an
    //!   HMAC-SHA256 over them with the host's [`ApprovalKey`]. A handle edited to other
    //!   arguments, another tool, agent or call, a MAC made with another key, or a stored row
    //!   edited behind the runtime's back is refused (`APPROVAL_MISMATCH`) and nothing runs.
    //!   Its text is read back with [`ToolRuntime::parse_handle`](crate::ToolRuntime::parse_handle),
    //!   which checks a second HMAC over the text's raw bytes before it parses anything.
    //! - **Only a call that could run pauses.** A call denied (a pre-execute listener, the
    //!   approval service, a guard), with invalid arguments, or cancelled before or while the
    //!   approval service is asked leaves nothing in the store: no handle of it exists. The
    //!   guards run before the pause, and again on resume.
    //! - **At most once.** A resume first claims the call in the store (`pending` ->
    //!   `resuming`, one winner however many processes race, with the replica's name,
    //!   [`DurableApprovals::replica`], and the time), runs it, then marks it `done`, retrying
    //!   that write ([`DurableApprovals::record_retries`]); when it still fails, the resume
    //!   fails with [`ApprovalError::NotRecorded`], which carries the result. Resuming it again,
    //!   or a call cancelled ([`ToolRuntime::cancel_pending`](crate::ToolRuntime::cancel_pending))
    //!   or expired ([`DurableApprovals::expire_after`], default [`DEFAULT_EXPIRY`]), is an
    //!   error that says the state it found, and runs nothing.
    //! - **In doubt.** A call whose resume never recorded its end (its process died, or the
    //!   store stayed down) stays `resuming`: its body may have run, so it is never resumed
    //!   again and never purged. [`ToolRuntime::paused_calls`](crate::ToolRuntime::paused_calls)
    //!   lists the calls in each state ([`CallStatus`]: pending, expired, resuming since when and
    //!   by whom, done, failed, cancelled), and
    //!   [`ToolRuntime::settle_pending`](crate::ToolRuntime::settle_pending) settles one in doubt
    //!   by hand, as done or failed, with a note.
    //! - **Edited arguments.** [`ToolRuntime::resume_edited`](crate::ToolRuntime::resume_edited)
    //!   approves a call with arguments the reviewer changed, validated first; the store keeps
    //!   both, and the listeners see the reviewed ones as
    //!   [`ToolExecution::reviewed_arguments`](crate::ToolExecution::reviewed_arguments).
    //!   A Code Mode program's call cannot be edited.
    //! - **What runs again on resume.** Resolution and the definition's prepare hook run again;
    //!   argument validation and the pre-execute listeners that ran before the ask do not; the
    //!   decision given to `resume` stands for the approval service's answer; the guards run,
    //!   because policy may have changed while the call waited. Then the body, post-execute
    //!   listeners, `finalize_content` and observers, as for any call. None of those ran when
    //!   the call paused: the paused result is not the call's result.
    //! - **Agent scopes by name.** A call made from an agent scope pauses only if the scope has
    //!   a name ([`ToolRuntime::agent_scope_named`](crate::ToolRuntime::agent_scope_named)); the
    //!   resume runs it from the live scope of that name, and fails with
    //!   `APPROVAL_SCOPE_MISSING` (the call stays pending) where there is none.
    //! - **Calls inside calls.** A call a tool body makes (`ToolRunContext::nested_call`)
    //!   pauses on its own: the body receives its `APPROVAL_PENDING` result, handle included,
    //!   and resuming it runs that call alone. A call a Code Mode program makes pauses the whole
    //!   run instead: the `run_code` call's result is pending, its handle's `awaiting` names the
    //!   program's call to review, and the resume replays the program (`tools-code`'s bridge).
    //! - Without durable approvals, or from an unnamed agent scope, a deferral fails the call
    //!   with `APPROVAL_NOT_DURABLE`; a store that fails, with `APPROVAL_STORE`.
    //!
    //! [`MemoryStore`] keeps paused calls in the process (tests, examples); the
    //! `tools-approvals` crate has the SQLite store (one machine) and the PostgreSQL store
    //! (replicas sharing paused calls).
    //!
    //! ```
    //! use serde_json::{json, Value};
    //! use tools_runtime::approvals::{ApprovalKey, DurableApprovals, MemoryStore};
    //! use tools_runtime::hooks::{Approval, PreDecision};
    //! use tools_runtime::{Output, ToolCall, ToolDefinition, ToolError, ToolRuntime};
    //!
    //! # tokio::runtime::Runtime::new().unwrap().block_on(async {
    //! let key = ApprovalKey::new(b"a secret of at least sixteen bytes").unwrap();
    //! let runtime = ToolRuntime::builder()
    //!     .durable_approvals(DurableApprovals::new(MemoryStore::new(), key))
    //!     .build()
    //!     .unwrap();
    //! let plugin = runtime.scope();
    //! let write = ToolDefinition::builder("write")
    //!     .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
    //!     .output(Output::json(json!({"type": "string"})))
    //!     .execute(|args, _ctx| async move { Ok::<Value, ToolError>(json!(format!("wrote {}", args["path"]))) })
    //!     .build()
    //!     .unwrap();
    //! let _write = plugin.register(write).unwrap();
    //! let _ask = plugin.on_pre_execute(|_exec, _| PreDecision::ask("writes need a person")).unwrap();
    //! let _later = plugin.set_approval(|_exec, _reason| async { Approval::later() }).unwrap();
    //!
    //! let paused = runtime.execute(ToolCall::new("c1", "write", json!({"path": "a.txt"}))).await;
    //! assert_eq!(paused.code(), Some("APPROVAL_PENDING"));
    //! let text = paused.pending.unwrap().handle().unwrap().to_string(); // persist this
    //!
    //! // Later, perhaps in another process with the same tools, store and key:
    //! let handle = runtime.parse_handle(&text).unwrap();
    //! let done = runtime.resume(&handle, Approval::Approved).await.unwrap();
    //! assert_eq!(done.value(), Some(&json!("wrote \"a.txt\"")));
    //! let again = runtime.resume(&handle, Approval::Approved).await.unwrap_err();
    //! assert_eq!(again.code(), "APPROVAL_ALREADY_RESUMED");
    //! # });
    //! ```

    pub use crate::call::decision::GivenDecision;
    pub use crate::call::pending::{AwaitingCall, Pending, PendingHandle};
    pub use crate::durable::approvals::{
        ApprovalError, ApprovalKey, CallStatus, DEFAULT_EXPIRY, DEFAULT_RECORD_ATTEMPTS,
        DEFAULT_RECORD_BACKOFF, DurableApprovals, MAX_HANDLE_BYTES, MIN_KEY_BYTES, PausedCall,
        ResumedRun, RunPause,
    };
    pub use crate::durable::store::{
        ApprovalStore, CallFilter, CallQuery, CallState, Claim, MemoryStore, PendingRecord, Settle,
        Settled, StoreError, StoredCall, Transition, purged,
    };
}
/// Presentation cards: the render intents a tool gives a UI for its calls and results.
pub mod cards {
    pub use crate::runtime::cards::*;
}
/// The policy hooks a scope registers (pre-execute and post-execute decisions, approval,
/// registry changes) and the execute-wrapper chain ([`Dispatch`](hooks::Dispatch),
/// [`Next`](hooks::Next)).
pub mod hooks {
    pub use crate::call::decision::Approval;
    pub use crate::policy::*;
    pub use crate::runtime::handle::{Dispatch, Next};
}
/// The errors of registration, definition, execution and building, beside the stable
/// [`codes`] of failed calls. A tool body's own error is [`ToolError`], at the root.
pub mod error {
    pub use crate::errors::{
        DefinitionError, ExecutionError, PanicSite, RegistryError, ToolFailure,
    };
    pub use crate::presentation::extension::BuildError;
}
/// The parts of a [`ToolDefinition`]: its builder, the hook and body
/// types, the default renderer, the reserved names.
pub mod definition {
    pub use crate::runtime::definition::{
        BodyFn, ConcurrencyFn, FinalizeContentFn, PrepareFn, PresentationMetaFn,
        RESERVED_DESCRIBE_TOOLS, RESERVED_NAMES, RESERVED_RUN_CODE, RenderFn, SchemaSource,
        ToolDefinitionBuilder, render_json,
    };
}

pub use call::content::{AdditionalContext, ContentBlock};
pub use call::result::codes;
pub use call::result::{ToolExecutionResult, ToolFailureInfo, ToolOutcome};
pub use call::tool_call::{
    CallOrigin, ExecutionMode, ExecutionToken, Principal, ProgramOrigin, ScopeKey, ToolCall,
};
pub use errors::ToolError;
pub use execution::ToolExecution;
pub use extensions::Extensions;
pub use mode::PresentationMode;
pub use registry::{Registration, Scope};
pub use runtime::context::ToolRunContext;
pub use runtime::definition::{Callers, Output, ToolDefinition};
pub use runtime::handle::{ToolFilter, ToolRuntime};
pub use tokio_util::sync::CancellationToken;

/// Injection of `#[context]` parameters of a `#[tool]` function.
pub use __private::FromRunContext;
/// `#[tool]`, `#[tools]` and `#[derive(ToolSchema)]`; see [`tools_macros`] for the whole guide.
pub use tools_macros::{ToolSchema, tool, tools};
/// MCP's behaviour hints of a tool ([`ToolDefinitionBuilder::annotations`](crate::definition::ToolDefinitionBuilder::annotations)).
pub use tools_schema::ToolAnnotations;
/// Schemas of Rust types: implemented for the standard types, derived for yours.
pub use tools_schema::typed::ToolSchema;
