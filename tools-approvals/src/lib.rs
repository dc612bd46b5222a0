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
//! - [`PostgresStore`] (feature `postgres`): one PostgreSQL table shared by every replica; a
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
//! in every replica.

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
