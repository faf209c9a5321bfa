//! Atomic file writes (`host.md` §3.3.3): the bytes go to a temporary file in the target's
//! folder, are flushed to disk, then renamed over the target, so a reader sees the old file or
//! the new one and never a partial one. A replaced file keeps its mode.

use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically. When `path` exists, the new file gets its mode;
/// otherwise the temporary file's own mode (0600) stays.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let previous = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.flush()?;
    if let Some(permissions) = previous {
        file.as_file().set_permissions(permissions)?;
    }
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
        }
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("list").collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
    }
}
