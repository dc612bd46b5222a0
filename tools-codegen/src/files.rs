//! Writing generated files: atomically, with ordinary permissions, and with errors that name the
//! step that failed.
//!
//! [`write_atomically`] writes a hidden temporary file beside the requested one, flushes it to
//! disk, and renames it over the requested path. Its callers (the CLI, [`crate::golden`]) put
//! the requested path in front of every error; the error itself says which step failed
//! ([`WriteFailure`]) and never consists of the temporary file's name alone (the `tempfile`
//! crate's own errors end in `at path ".tmpXXXX"`, which is why the temporary file is opened
//! here and its errors are kept plain). Whatever step fails, the temporary file is removed and
//! the requested path is left as it was.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The permission bits a new generated file is created with (less the umask).
#[cfg(unix)]
const NEW_FILE_MODE: u32 = 0o644;

/// One step of [`write_atomically`] that failed, with the OS error; its message reads after
/// `<requested path>: cannot write the file: `.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WriteFailure {
    /// The folder of the requested path could not be created.
    #[error("cannot create the folder {}: {error}", .dir.display())]
    CreateDir {
        dir: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// No temporary file could be created in the folder.
    #[error("cannot create a temporary file in {}: {error}", .dir.display())]
    CreateTemp {
        dir: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// The permissions of the file being replaced could not be given to the new text.
    #[error("cannot give the new text the permissions of the file it replaces: {error}")]
    Permissions {
        #[source]
        error: std::io::Error,
    },
    /// The text could not be written.
    #[error("cannot write the new text: {error}")]
    Write {
        #[source]
        error: std::io::Error,
    },
    /// The text could not be flushed to disk.
    #[error("cannot flush the new text to disk: {error}")]
    Sync {
        #[source]
        error: std::io::Error,
    },
    /// The temporary file could not be renamed over the requested path.
    #[error("cannot rename the temporary file {} over it: {error}", display_name(.temp))]
    Rename {
        temp: PathBuf,
        #[source]
        error: std::io::Error,
    },
}

impl WriteFailure {
    fn error(&self) -> &std::io::Error {
        match self {
            WriteFailure::CreateDir { error, .. }
            | WriteFailure::CreateTemp { error, .. }
            | WriteFailure::Permissions { error }
            | WriteFailure::Write { error }
            | WriteFailure::Sync { error }
            | WriteFailure::Rename { error, .. } => error,
        }
    }
}

impl From<WriteFailure> for std::io::Error {
    /// An I/O error of the same kind whose message is the failure's (the OS error is its
    /// source).
    fn from(failure: WriteFailure) -> std::io::Error {
        std::io::Error::new(failure.error().kind(), failure)
    }
}

/// The file name of a temporary file (it sits beside the requested path, so the folder adds
/// nothing).
fn display_name(path: &Path) -> String {
    match path.file_name() {
        Some(name) => Path::new(name).display().to_string(),
        None => path.display().to_string(),
    }
}

/// Writes a temporary file beside `path`, flushes it to disk, then renames it over `path`: a
/// reader sees the old file or the new one, never a half-written one. A replaced file keeps its
/// permission bits; a new one gets the usual 0644 (less the umask), not the private 0600 of a
/// temporary file. Missing folders are created.
///
/// # Errors
///
/// The step that failed, as an [`std::io::Error`] of the OS error's kind whose message is a
/// [`WriteFailure`]'s. The temporary file is removed on every failure and `path` is unchanged.
pub(crate) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    write(path, text).map_err(std::io::Error::from)
}

fn write(path: &Path, text: &str) -> Result<(), WriteFailure> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|error| WriteFailure::CreateDir {
        dir: dir.clone(),
        error,
    })?;
    let replaced = std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|meta| meta.permissions());
    // `make_in` leaves the errors of the closure as they are; `tempfile_in` (and the `Write`
    // impl of `NamedTempFile`) would add the temporary file's path to them.
    let mut file = tempfile::Builder::new()
        .make_in(&dir, |temp| open_new(temp, replaced.is_none()))
        .map_err(|error| WriteFailure::CreateTemp {
            dir: dir.clone(),
            error,
        })?;
    // From here on, dropping `file` removes the temporary file.
    if let Some(permissions) = replaced {
        file.as_file()
            .set_permissions(kept_permissions(permissions))
            .map_err(|error| WriteFailure::Permissions { error })?;
    }
    file.as_file_mut()
        .write_all(text.as_bytes())
        .map_err(|error| WriteFailure::Write { error })?;
    file.as_file()
        .sync_all()
        .map_err(|error| WriteFailure::Sync { error })?;
    file.persist(path).map_err(|failed| WriteFailure::Rename {
        temp: failed.file.path().to_owned(),
        error: failed.error,
    })?;
    Ok(())
}

/// Creates the temporary file: 0644 less the umask for a new file (`fresh`), 0600 for one that
/// replaces a file (it gets that file's bits once open).
fn open_new(temp: &Path, fresh: bool) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(if fresh { NEW_FILE_MODE } else { 0o600 });
    }
    #[cfg(not(unix))]
    let _ = fresh;
    options.open(temp)
}

/// The permissions a replacing file takes over: the read, write and execute bits (a generated
/// text never becomes set-user-ID, set-group-ID or sticky).
fn kept_permissions(permissions: std::fs::Permissions) -> std::fs::Permissions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::Permissions::from_mode(permissions.mode() & 0o777)
    }
    #[cfg(not(unix))]
    {
        permissions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A folder in place of the file: the rename fails, the message says so (with the
    /// temporary file's name as detail), and the temporary file is gone.
    #[test]
    fn a_failed_rename_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("sdk.ts");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep"), "x").unwrap();
        let error = write_atomically(&target, "text\n").unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with("cannot rename the temporary file .tmp")
                && message.contains(" over it: "),
            "{message}"
        );
        assert_eq!(names(dir.path()), ["sdk.ts"]);
        assert_eq!(names(&target), ["keep"]);
    }

    /// A folder under a regular file cannot be created: the message names that folder.
    #[test]
    fn a_folder_that_cannot_be_created_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let error = write_atomically(&plain.join("sub/sdk.ts"), "text\n").unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotADirectory);
        let message = error.to_string();
        let folder = format!("cannot create the folder {}: ", plain.join("sub").display());
        assert!(message.starts_with(&folder), "{message}");
        assert_eq!(names(dir.path()), ["plain"]);
    }
}
