//! Durable approval stores for `tools-runtime`: where paused tool calls wait for a person, across
//! restarts and replicas.
//!
//! A call whose approval service answers `Approval::later()` is written to the runtime's
//! [`ApprovalStore`](tools_runtime::approvals::ApprovalStore) and returns `APPROVAL_PENDING`
//! with a handle; `ToolRuntime::resume` completes it later (see
//! [`tools_runtime::approvals`] for the rules). This crate has the two stores a service uses:
//!
//! - [`SqliteStore`] (feature `sqlite`, on by default): one SQLite file (WAL,
//!   `synchronous = FULL`), for a service on one machine; several processes may open the file.
//! - `PostgresStore` (feature `postgres`): one PostgreSQL table shared by every replica; a
//!   claim is one conditional `UPDATE ... RETURNING`, so two replicas never both resume a call.
//!
//! Both keep every field of a [`PendingRecord`](tools_runtime::approvals::PendingRecord) in a
//! column of its own, with where the call stands (its state, the claim's replica and time, the
//! edited arguments, the settlement's time and note), create their schema on first use,
//! migrate a schema of version 1 to version 2 and refuse one written by a newer build
//! ([`Error::SchemaVersion`]), and refuse a time past `i64::MAX` milliseconds rather than wrap
//! it. A failure is the trait's `StoreError::Backend` (the runtime's `APPROVAL_STORE`) whose
//! source is this crate's [`Error`], whose source is the driver's error; [`code_of`] reads its
//! stable code. Both pass the conformance suite in this crate's tests, which `MemoryStore` passes
//! too.
//!
//! ```
//! # #[cfg(feature = "sqlite")] {
//! use serde_json::{json, Value};
//! use tools_approvals::SqliteStore;
//! use tools_runtime::approvals::{ApprovalKey, DurableApprovals};
//! use tools_runtime::hooks::{Approval, PreDecision};
//! use tools_runtime::{Output, Scope, ToolCall, ToolDefinition, ToolError, ToolRuntime};
//!
//! /// A runtime over the store in `dir`, with a `write` tool that waits for a person (in the
//! /// scope returned: the tool and the hooks last as long as it does).
//! fn service(dir: &std::path::Path) -> (ToolRuntime, Scope) {
//!     let store = SqliteStore::open(dir.join("approvals.db")).unwrap();
//!     let key = ApprovalKey::new(b"a secret of at least sixteen bytes").unwrap();
//!     let runtime = ToolRuntime::builder()
//!         .durable_approvals(DurableApprovals::new(store, key))
//!         .build()
//!         .unwrap();
//!     let plugin = runtime.scope();
//!     let write = ToolDefinition::builder("write")
//!         .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
//!         .output(Output::json(json!({"type": "string"})))
//!         .execute(|args, _ctx| async move {
//!             Ok::<Value, ToolError>(json!(format!("wrote {}", args["path"])))
//!         })
//!         .build()
//!         .unwrap();
//!     let _ = plugin.register(write).unwrap();
//!     let _ = plugin.on_pre_execute(|_exec, _| PreDecision::ask("writes need a person")).unwrap();
//!     let _ = plugin.set_approval(|_exec, _reason| async { Approval::later() }).unwrap();
//!     (runtime, plugin)
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let (runtime, plugin) = service(dir.path());
//! let paused = runtime.execute(ToolCall::new("c1", "write", json!({"path": "a.txt"}))).await;
//! assert_eq!(paused.code(), Some("APPROVAL_PENDING"));
//! let text = paused.pending.unwrap().handle().unwrap().to_string(); // show it, keep it
//! drop((runtime, plugin)); // the service stops
//!
//! // After a restart: the same tools, file and key.
//! let (runtime, _plugin) = service(dir.path());
//! let handle = runtime.parse_handle(&text).unwrap();
//! let done = runtime.resume(&handle, Approval::Approved).await.unwrap();
//! assert_eq!(done.value(), Some(&json!("wrote \"a.txt\"")));
//! let again = runtime.resume(&handle, Approval::Approved).await.unwrap_err();
//! assert_eq!(again.code(), "APPROVAL_ALREADY_RESUMED");
//! # });
//! # }
//! ```
//!
//! The `calls` example is an operator's view of a store: the calls by state (those in doubt
//! among them), one call, and settling a call in doubt by hand
//! (`cargo run -p tools-approvals --example calls -- --sqlite approvals.db list --state resuming`).
//!
//! With PostgreSQL, the same with
//! `DurableApprovals::new(PostgresStore::connect("host=... user=... dbname=...").await?, key)`
//! in every replica. `connect` speaks no TLS: use a local socket, a private network or a
//! TLS-terminating proxy, or `PostgresStore::from_client` with a connector of your own.
//!
//! # What holds, whatever crashes
//!
//! - **At most once.** A resume claims the call (`pending` -> `resuming`) before the body runs,
//!   in one atomic step: one `BEGIN IMMEDIATE` transaction in SQLite, one conditional
//!   `UPDATE ... RETURNING` in PostgreSQL, so of two replicas racing for a call one runs it and
//!   the other gets `APPROVAL_ALREADY_RESUMED`. A process killed during a resume leaves the call
//!   `resuming` (in doubt), and it is never run again; a database that restarts after the body
//!   ran is retried through, and one that stays down past the retries gives
//!   `APPROVAL_NOT_RECORDED` and leaves the call in doubt. SQLite commits with
//!   `synchronous = FULL` in WAL mode: a claim lost to a power cut could let a call whose body
//!   ran run again.
//! - **What was reviewed is what runs.** A stored row edited behind the runtime's back fails the
//!   MAC check (`APPROVAL_MISMATCH`) and nothing runs; the review queue
//!   (`ToolRuntime::pending_calls`) leaves such rows out.
//! - **Versioned schemas.** Both stores are at schema version 2. A version 1 database is
//!   migrated when a store opens it (PostgreSQL under an advisory lock, so replicas starting
//!   together migrate once). A database written by a newer build is refused
//!   (`APPROVALS_SCHEMA_VERSION`) rather than misread; times past `i64::MAX` ms are refused
//!   (`APPROVALS_TIME_RANGE`) rather than wrapped.
//!
//! The tests run one conformance suite over the memory store and both stores, kill processes
//! with SIGKILL between the pause and the resume and during the resume (then find the call in
//! doubt and settle it), crash the PostgreSQL server while a resumed body runs (once brought
//! back within the retries, once left down past them), and race two replicas on a PostgreSQL
//! server they start themselves (`scripts/test` installs Debian's `postgresql` when it is
//! missing).

mod error;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod row;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use error::{Error, code_of, codes};
#[cfg(feature = "postgres")]
pub use postgres::{POSTGRES_SCHEMA_VERSION, PostgresStore};
#[cfg(feature = "sqlite")]
pub use sqlite::{BUSY_TIMEOUT, SQLITE_SCHEMA_VERSION, SqliteStore};
