//! Writing generated files: atomically, with ordinary permissions.

use std::io::Write as _;
use std::path::{Path, PathBuf};

#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}

/// Writes a temporary file beside `path`, then renames it over `path`: a reader sees the old
/// file or the new one, never a half-written one. A replaced file keeps its permissions; a new
/// one gets the usual 0644 (less the umask), not the private 0600 of a temporary file.
pub(crate) fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|error| {
        std::io::Error::new(
            error.kind(),
            format!("cannot create the folder {}: {error}", dir.display()),
        )
    })?;
    let mut builder = tempfile::Builder::new();
    if let Some(permissions) = std::fs::metadata(path)
        .ok()
        .map(|meta| meta.permissions())
        .or_else(default_permissions)
    {
        builder.permissions(permissions);
    }
    let mut file = builder.tempfile_in(&dir)?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
