//! Atomic file writes (`host.md` §3.3.3, §10.8.5), the one helper every katari file writer
//! uses: the bytes go to a uniquely named temporary file in the target's folder (created 0600 by
//! `tempfile`), are flushed to disk, then renamed into place, so a reader sees the old file or
//! the new one and never a partial one. Each call has its own temporary file, so parallel
//! branches and other processes writing the same target never share one.

use std::io::{self, Write};
use std::path::Path;

/// How the names of temporary files begin: whoever lists a folder that writers use (the spill
/// tree's eviction) can leave files in flight alone.
pub const TEMP_PREFIX: &str = ".tmp";

/// Writes `bytes` to `path`, replacing any file there. A replaced file keeps its mode; a new one
/// is owner-only (0600).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let previous = std::fs::metadata(path).ok().map(|m| m.permissions());
    let temp = filled(path, bytes, previous)?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `bytes` to `path` unless a file is already there, for content-addressed files whose
/// name fixes their content. `true` when this call created the file; `false` when it existed,
/// or another writer put it there first (its file stays, this one's temporary file goes).
pub fn write_new(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    if path.is_file() {
        return Ok(false);
    }
    let temp = filled(path, bytes, None)?;
    match temp.persist_noclobber(path) {
        Ok(_) => Ok(true),
        // Dropping the error drops its temporary file, which removes it.
        Err(_) if path.is_file() => Ok(false),
        Err(e) => Err(e.error),
    }
}

/// Creates `dir` and its missing parents, owner-only (0700) on POSIX systems.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// A new temporary file beside `path` holding `bytes` with `permissions` (else 0600), flushed
/// to disk.
fn filled(
    path: &Path,
    bytes: &[u8],
    permissions: Option<std::fs::Permissions>,
) -> io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)?;
    temp.write_all(bytes)?;
    temp.flush()?;
    if let Some(permissions) = permissions {
        temp.as_file().set_permissions(permissions)?;
    }
    temp.as_file().sync_all()?;
    Ok(temp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn replaces_the_file_and_keeps_its_mode() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "old\n").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        }
        write_atomic(&path, b"new\n").expect("written");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new\n");
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o640);
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn a_new_file_is_owner_only_and_an_existing_one_is_kept() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let fresh = dir.path().join("fresh");
        write_atomic(&fresh, b"x").expect("written");
        #[cfg(unix)]
        assert_eq!(mode(&fresh), 0o600);

        let once = dir.path().join("sha256-x");
        assert!(write_new(&once, b"first").expect("written"));
        assert!(!write_new(&once, b"second").expect("kept"));
        assert_eq!(std::fs::read(&once).expect("read"), b"first");
        #[cfg(unix)]
        assert_eq!(mode(&once), 0o600);
        let left = std::fs::read_dir(dir.path()).expect("list").count();
        assert_eq!(left, 2, "no temporary file is left behind");
    }

    #[test]
    fn private_folders_are_owner_only() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let deep = dir.path().join("a").join("b");
        create_private_dir(&deep).expect("created");
        assert!(deep.is_dir());
        #[cfg(unix)]
        assert_eq!(mode(&deep), 0o700);
    }
}
