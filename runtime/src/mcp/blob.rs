//! Writing content-addressed blobs (`prelude.md` §12) into the host's blob folder, in the
//! layout `prelude.file` reads: the bytes in `sha256-<hex>`, the metadata
//! `{"contentType": …, "size": n}` in `sha256-<hex>.json`. Files are written owner-only (0600)
//! through [`crate::atomic`]: each write has its own temporary file, so parallel branches and
//! processes storing the same blob never share one, and readers never see half a blob.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::atomic;

/// Stores `bytes` with their content type; returns the blob id (`sha256-<hex>`).
pub fn store(dir: &Path, bytes: &[u8], content_type: &str) -> std::io::Result<String> {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let id = format!("sha256-{hex}");
    atomic::create_private_dir(dir)?;
    // The name fixes the content: a blob that is there already stays as it is.
    atomic::write_new(&dir.join(&id), bytes)?;
    let meta = serde_json::json!({"contentType": content_type, "size": bytes.len()});
    atomic::write_atomic(&dir.join(format!("{id}.json")), meta.to_string().as_bytes())?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_content_addressed_and_owner_only() {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let dir = folder.path().join("blobs");
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
    }
}
