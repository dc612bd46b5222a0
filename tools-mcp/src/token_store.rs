//! Where OAuth tokens are kept between requests and runs: the [`TokenStore`] trait, an
//! in-memory store ([`MemoryTokenStore`], the default) and a file store ([`FileTokenStore`]).
//!
//! A [`TokenRecord`] is what the OAuth client keeps for one server: the client id it registered
//! or was given, the token response (access token, refresh token, expiry), the scopes granted
//! and the issuer. Its `Debug` shows no token. The file store writes it as JSON to a file of
//! mode `0600`, atomically: a temporary file in the same directory, written, flushed to disk
//! (`fsync`), renamed over the old file, and the directory flushed, so a reader sees the old
//! record or the new one, never part of one. A file that is not a record is an error that names
//! the file ([`TokenStoreError::Corrupt`]), never a silent new authorization.

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::StoredCredentials;

/// The largest token file read (a record is a few KiB).
pub const MAX_TOKEN_FILE: u64 = 1 << 20;

/// The credentials the OAuth client keeps for one server. Its `Debug` redacts the tokens.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct TokenRecord(pub(crate) StoredCredentials);

impl TokenRecord {
    /// A record of a bearer `token` issued to `client_id` by `issuer` (no refresh token, no
    /// expiry known).
    pub(crate) fn bearer(
        client_id: &str,
        token: &str,
        issuer: Option<String>,
    ) -> Result<TokenRecord, crate::oauth::OAuthError> {
        let response = serde_json::json!({"access_token": token, "token_type": "bearer"});
        let response = serde_json::from_value(response)
            .map_err(|e| crate::oauth::OAuthError::Store(TokenStoreError::Other(e.to_string())))?;
        Ok(TokenRecord(
            StoredCredentials::new(client_id.to_owned(), Some(response), Vec::new(), None)
                .with_issuer(issuer),
        ))
    }

    /// A record of the token response `token` issued to `client_id` by `issuer` at
    /// `received_at` (seconds since the epoch), granting `granted_scopes`.
    #[cfg(feature = "jwt")]
    pub(crate) fn issued(
        client_id: &str,
        token: rmcp::transport::auth::OAuthTokenResponse,
        granted_scopes: Vec<String>,
        received_at: u64,
        issuer: Option<String>,
    ) -> TokenRecord {
        TokenRecord(
            StoredCredentials::new(
                client_id.to_owned(),
                Some(token),
                granted_scopes,
                Some(received_at),
            )
            .with_issuer(issuer),
        )
    }

    /// The OAuth client id the tokens were issued to.
    pub fn client_id(&self) -> &str {
        &self.0.client_id
    }

    /// The scopes granted.
    pub fn granted_scopes(&self) -> &[String] {
        &self.0.granted_scopes
    }

    /// Whether the record holds a token (a record may keep only a client id).
    pub fn has_token(&self) -> bool {
        self.0.token_response.is_some()
    }
}

impl fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenRecord")
            .field("client_id", &self.0.client_id)
            .field(
                "token",
                &self.0.token_response.as_ref().map(|_| "[REDACTED]"),
            )
            .field("granted_scopes", &self.0.granted_scopes)
            .field("issuer", &self.0.issuer)
            .finish()
    }
}

/// Why a token store failed. It names the file, never a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenStoreError {
    /// The file could not be read, written or removed.
    #[error("the token file {path} could not be {action}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`read`, `written`, `removed`).
        action: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a token record (not JSON of one, or over [`MAX_TOKEN_FILE`]).
    #[error("the token file {path} is corrupt (remove it to authorize again)")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it (serde's position, or its size).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A store of the application failed.
    #[error("the token store failed: {0}")]
    Other(String),
}

/// Where the OAuth client keeps a server's [`TokenRecord`]. Its methods are short and may block
/// (a file's read or write); the client calls them on tokio's blocking pool.
pub trait TokenStore: Send + Sync + 'static {
    /// The record kept, if any.
    fn load(&self) -> Result<Option<TokenRecord>, TokenStoreError>;
    /// Keeps `record`, replacing the one kept.
    fn save(&self, record: &TokenRecord) -> Result<(), TokenStoreError>;
    /// Forgets the record kept.
    fn clear(&self) -> Result<(), TokenStoreError>;
}

/// A store in memory, for one process's life: the default.
#[derive(Default, Clone)]
pub struct MemoryTokenStore {
    record: Arc<Mutex<Option<TokenRecord>>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> MemoryTokenStore {
        MemoryTokenStore::default()
    }
}

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTokenStore")
            .field("record", &*crate::lock(&self.record))
            .finish()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self) -> Result<Option<TokenRecord>, TokenStoreError> {
        Ok(crate::lock(&self.record).clone())
    }

    fn save(&self, record: &TokenRecord) -> Result<(), TokenStoreError> {
        *crate::lock(&self.record) = Some(record.clone());
        Ok(())
    }

    fn clear(&self) -> Result<(), TokenStoreError> {
        *crate::lock(&self.record) = None;
        Ok(())
    }
}

/// A store in one file (see the module doc: mode `0600`, atomic replacement, `fsync`).
#[derive(Debug, Clone)]
pub struct FileTokenStore {
    path: PathBuf,
}

impl FileTokenStore {
    /// A store in the file `path` (its directory must exist).
    pub fn new(path: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, action: &'static str) -> impl FnOnce(std::io::Error) -> TokenStoreError + '_ {
        move |source| TokenStoreError::Io {
            path: self.path.clone(),
            action,
            source,
        }
    }

    fn corrupt(&self, source: Box<dyn std::error::Error + Send + Sync>) -> TokenStoreError {
        TokenStoreError::Corrupt {
            path: self.path.clone(),
            source,
        }
    }
}

/// A temporary file's name beside `path`: the name, a dot and 16 random hex digits.
fn temporary(path: &Path) -> PathBuf {
    let mut bytes = [0u8; 8];
    // Without randomness the name is still unique enough with the pid (create_new refuses a
    // clash).
    let _ = getrandom::fill(&mut bytes);
    let suffix: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tokens".to_owned());
    path.with_file_name(format!(".{name}.{}.{suffix}.tmp", std::process::id()))
}

impl TokenStore for FileTokenStore {
    fn load(&self) -> Result<Option<TokenRecord>, TokenStoreError> {
        let file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io("read")(e)),
        };
        let mut text = Vec::new();
        file.take(MAX_TOKEN_FILE + 1)
            .read_to_end(&mut text)
            .map_err(self.io("read"))?;
        if text.len() as u64 > MAX_TOKEN_FILE {
            return Err(self.corrupt(format!("it is larger than {MAX_TOKEN_FILE} bytes").into()));
        }
        serde_json::from_slice::<TokenRecord>(&text)
            .map(Some)
            .map_err(|e| self.corrupt(Box::new(e)))
    }

    fn save(&self, record: &TokenRecord) -> Result<(), TokenStoreError> {
        let text = serde_json::to_vec(record).map_err(|e| TokenStoreError::Other(e.to_string()))?;
        let temporary = temporary(&self.path);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let written = (|| {
            let mut file = options.open(&temporary)?;
            file.write_all(&text)?;
            file.sync_all()?;
            drop(file);
            std::fs::rename(&temporary, &self.path)
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(self.io("written")(e));
        }
        // The rename itself made durable.
        if let Some(dir) = self.path.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(dir) = std::fs::File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }

    fn clear(&self) -> Result<(), TokenStoreError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.io("removed")(e)),
        }
    }
}
