//! Writing content-addressed blobs (`prelude.md` §12) into the host's blob folder, in the
//! layout `prelude.file` reads: the bytes in `sha256-<hex>`, the metadata
//! `{"contentType": …, "size": n}` in `sha256-<hex>.json`. Files are written owner-only (0600)
//! through a temporary file and a rename, so readers never see half a blob.

use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};

/// Stores `bytes` with their content type; returns the blob id (`sha256-<hex>`).
pub fn store(dir: &Path, bytes: &[u8], content_type: &str) -> std::io::Result<String> {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let id = format!("sha256-{hex}");
    create_private_dir(dir)?;
    let path = dir.join(&id);
    if !path.is_file() {
        write_private(dir, &id, bytes)?;
    }
    let meta = serde_json::json!({"contentType": content_type, "size": bytes.len()});
    write_private(dir, &format!("{id}.json"), meta.to_string().as_bytes())?;
    Ok(id)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn write_private(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temp, dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_content_addressed_and_owner_only() {
        let dir = std::env::temp_dir().join(format!("katari-blob-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let id = store(&dir, b"hello", "text/plain").expect("store");
        assert_eq!(
            id,
            "sha256-2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(std::fs::read(dir.join(&id)).expect("bytes"), b"hello");
        let meta = std::fs::read_to_string(dir.join(format!("{id}.json"))).expect("meta");
        assert_eq!(meta, r#"{"contentType":"text/plain","size":5}"#);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(&id))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
