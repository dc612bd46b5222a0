//! The errors of `tools-approvals`, each with a stable [`code`](Error::code).
//!
//! Opening or connecting a store fails with an [`Error`]. Once a store is in a runtime, its
//! methods answer [`StoreError`] (the trait's error, which the runtime turns into
//! `APPROVAL_STORE`): a failure of the database is [`StoreError::Backend`] whose
//! [`source`](std::error::Error::source) is an [`Error`] naming the step, whose source is the
//! driver's error.

use tools_runtime::approvals::StoreError;

/// Stable codes of [`Error`].
pub mod codes {
    /// The SQLite database could not be opened or created.
    pub const APPROVALS_OPEN: &str = "APPROVALS_OPEN";
    /// The database holds a schema of a version this build does not read (a newer build wrote
    /// it).
    pub const APPROVALS_SCHEMA_VERSION: &str = "APPROVALS_SCHEMA_VERSION";
    /// A statement of the SQLite store failed.
    pub const APPROVALS_SQLITE: &str = "APPROVALS_SQLITE";
    /// The connection to PostgreSQL could not be made (or its settings not read).
    pub const APPROVALS_CONNECT: &str = "APPROVALS_CONNECT";
    /// A statement of the PostgreSQL store failed.
    pub const APPROVALS_POSTGRES: &str = "APPROVALS_POSTGRES";
    /// A time to write does not fit the database's signed 64-bit integer.
    pub const APPROVALS_TIME_RANGE: &str = "APPROVALS_TIME_RANGE";
    /// The blocking task a SQLite statement ran on did not finish (it panicked, or its runtime
    /// shut down).
    pub const APPROVALS_TASK: &str = "APPROVALS_TASK";
    /// The PostgreSQL store was connected outside a Tokio runtime (it spawns the task that
    /// drives its connection).
    pub const APPROVALS_NO_RUNTIME: &str = "APPROVALS_NO_RUNTIME";
}

/// What failed in a store of this crate. See [`codes`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The SQLite database could not be opened, created or set up.
    #[cfg(feature = "sqlite")]
    #[error("cannot open the SQLite approval store `{path}` ({doing})")]
    Open {
        /// The database file.
        path: std::path::PathBuf,
        /// The step that failed.
        doing: &'static str,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The database's schema has a version this build does not read.
    #[error(
        "the {store} approval store has schema version {found}; this build of tools-approvals \
         reads version {supported} (a newer build wrote it: upgrade this one)"
    )]
    SchemaVersion {
        /// `sqlite` or `postgres`.
        store: &'static str,
        /// The version found.
        found: i64,
        /// The version this build reads.
        supported: i64,
    },
    /// A statement of the SQLite store failed.
    #[cfg(feature = "sqlite")]
    #[error("SQLite failed to {doing}")]
    Sqlite {
        /// What the store was doing (`claim a paused call`, ...).
        doing: &'static str,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The connection to PostgreSQL could not be made.
    #[cfg(feature = "postgres")]
    #[error("cannot connect to PostgreSQL ({doing})")]
    Connect {
        /// The step that failed.
        doing: &'static str,
        /// The driver's error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// A statement of the PostgreSQL store failed.
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL failed to {doing}")]
    Postgres {
        /// What the store was doing.
        doing: &'static str,
        /// The driver's error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// A time to write is past the largest the database holds (`i64::MAX` milliseconds, some
    /// 292 million years): it is refused rather than wrapped.
    #[error(
        "the paused call's {field} ({value} ms) does not fit a signed 64-bit integer; the {store} \
         store refuses it rather than wrap it"
    )]
    TimeRange {
        /// `sqlite` or `postgres`.
        store: &'static str,
        /// `created_ms` or `expires_ms`.
        field: &'static str,
        /// The value.
        value: u64,
    },
    /// [`PostgresStore::connect`](crate::PostgresStore::connect) was called outside a Tokio
    /// runtime.
    #[cfg(feature = "postgres")]
    #[error("the PostgreSQL approval store needs a Tokio runtime to drive its connection")]
    NoRuntime,
    /// The blocking task a SQLite statement ran on did not finish.
    #[error("the blocking task of the SQLite store did not finish")]
    Task {
        /// Tokio's error (a panic or a runtime shutting down).
        #[source]
        source: tokio::task::JoinError,
    },
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            #[cfg(feature = "sqlite")]
            Error::Open { .. } => codes::APPROVALS_OPEN,
            Error::SchemaVersion { .. } => codes::APPROVALS_SCHEMA_VERSION,
            #[cfg(feature = "sqlite")]
            Error::Sqlite { .. } => codes::APPROVALS_SQLITE,
            #[cfg(feature = "postgres")]
            Error::Connect { .. } => codes::APPROVALS_CONNECT,
            #[cfg(feature = "postgres")]
            Error::Postgres { .. } => codes::APPROVALS_POSTGRES,
            Error::TimeRange { .. } => codes::APPROVALS_TIME_RANGE,
            #[cfg(feature = "postgres")]
            Error::NoRuntime => codes::APPROVALS_NO_RUNTIME,
            Error::Task { .. } => codes::APPROVALS_TASK,
        }
    }

    /// This error as the trait's [`StoreError::Backend`] of the store `store`.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn into_store(self, store: &'static str) -> StoreError {
        StoreError::Backend {
            store,
            source: Box::new(self),
        }
    }
}

/// The code of a [`StoreError`] of this crate's stores: the [`Error`] underneath a
/// [`StoreError::Backend`], else `None` (a duplicate id or a corrupt row, which the runtime's
/// own codes name).
pub fn code_of(error: &StoreError) -> Option<&'static str> {
    match error {
        StoreError::Backend { source, .. } => source.downcast_ref::<Error>().map(Error::code),
        _ => None,
    }
}
