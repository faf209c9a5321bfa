//! The spill tree (`host.md` §10.8): binary content from MCP servers never reaches the model as
//! base64; it is decoded (as a stream, at most 50 MiB) and written to
//! `mcp-resources/SERVER/SHA256.EXT` in the cache folder, and the model gets a small object
//! naming the file.
//!
//! **Invariant:** a visible spill file is always complete. Each write goes through
//! [`katari_runtime::atomic::write_new`]: a temporary file of its own in the same folder (0600),
//! renamed into place only if no file of that name exists; a writer that loses the race drops
//! its temporary file and refreshes the winner's modification time, so the same content always
//! ends at the same path, once.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use base64::Engine as _;
use katari_runtime::atomic;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// The most bytes one blob may decode to (§10.8.2).
pub const MAX_BLOB: usize = 52_428_800;

/// The size of the whole tree after which the oldest files are evicted (§10.8.6).
pub const TREE_LIMIT: u64 = 536_870_912;

/// Where spilled files go, and how large the tree may grow.
#[derive(Clone, Debug)]
pub struct Spill {
    root: PathBuf,
    limit: u64,
}

/// A file in the tree.
#[derive(Clone, Debug, PartialEq)]
pub struct Saved {
    /// Absolute.
    pub path: PathBuf,
    /// Lower-case hex of the bytes' SHA-256.
    pub sha256: String,
    pub size: u64,
}

impl Spill {
    /// The tree `mcp-resources/` under the cache folder `cache`, bounded at 512 MiB.
    pub fn new(cache: &Path) -> Spill {
        let cache = std::path::absolute(cache).unwrap_or_else(|_| cache.to_path_buf());
        Spill {
            root: cache.join("mcp-resources"),
            limit: TREE_LIMIT,
        }
    }

    /// The same tree with another eviction bound (tests use a small one).
    pub fn with_limit(mut self, limit: u64) -> Spill {
        self.limit = limit;
        self
    }

    /// Writes `bytes` for the server whose sanitised name is `server`, with the extension of
    /// the MIME type the server claimed; returns the file. Eviction follows a new write.
    pub fn save(&self, server: &str, bytes: &[u8], mime: Option<&str>) -> std::io::Result<Saved> {
        let sha256: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let dir = self.root.join(server);
        atomic::create_private_dir(&dir)?;
        let path = dir.join(format!("{sha256}.{}", extension(mime)));
        let saved = Saved {
            path: path.clone(),
            sha256,
            size: bytes.len() as u64,
        };
        if atomic::write_new(&path, bytes)? {
            self.evict(&path);
        } else {
            // Written before, or by another writer a moment ago: the same content, so the file
            // stays and counts as new for eviction.
            touch(&path)?;
        }
        Ok(saved)
    }

    /// Deletes the oldest files until the tree fits its bound, never `keep`. Failures are
    /// ignored (another process may be evicting the same files).
    fn evict(&self, keep: &Path) {
        let mut files = Vec::new();
        let Ok(servers) = std::fs::read_dir(&self.root) else {
            return;
        };
        for server in servers.flatten() {
            let Ok(entries) = std::fs::read_dir(server.path()) else {
                continue;
            };
            for entry in entries.flatten() {
                // Other writers' temporary files are not theirs to lose.
                if entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with(atomic::TEMP_PREFIX)
                {
                    continue;
                }
                let Ok(meta) = entry.metadata() else {
                    continue;
                };
                if meta.is_file() {
                    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    files.push((modified, meta.len(), entry.path()));
                }
            }
        }
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        if total <= self.limit {
            return;
        }
        files.sort();
        for (_, len, path) in files {
            if total <= self.limit {
                break;
            }
            if path == keep {
                continue;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }
}

/// Refreshes a file's modification time (a reused spill file counts as new for eviction).
fn touch(path: &Path) -> std::io::Result<()> {
    std::fs::File::open(path)?.set_modified(SystemTime::now())
}

/// The file extension of a claimed MIME type (§10.8.4's fixed table; parameters such as
/// `; charset=…` and letter case are ignored), `bin` for anything else.
pub fn extension(mime: Option<&str>) -> &'static str {
    let essence = mime
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "application/gzip" => "gz",
        "application/json" => "json",
        "application/pdf" => "pdf",
        "application/zip" => "zip",
        "audio/mpeg" => "mp3",
        "image/gif" => "gif",
        "image/jpeg" => "jpg",
        "image/png" => "png",
        "image/webp" => "webp",
        "text/csv" => "csv",
        "video/mp4" => "mp4",
        _ => "bin",
    }
}

/// Why a blob was not decoded.
#[derive(Debug, PartialEq, Eq)]
pub enum BlobError {
    /// More than [`MAX_BLOB`] bytes.
    TooLarge,
    NotBase64,
}

/// Decodes base64 (standard alphabet, padding optional, ASCII whitespace ignored) in chunks,
/// stopping as soon as the output would pass [`MAX_BLOB`]: a blob that is too large is
/// recognised from its length before anything is decoded.
pub fn decode_blob(text: &str) -> Result<Vec<u8>, BlobError> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    const CHUNK: usize = 64 * 1024;
    let digits = text.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = text
        .bytes()
        .rev()
        .filter(|b| !b.is_ascii_whitespace())
        .take(2)
        .filter(|&b| b == b'=')
        .count();
    let estimate = (digits / 4 * 3 + (digits % 4).saturating_sub(1)).saturating_sub(padding);
    if estimate > MAX_BLOB {
        return Err(BlobError::TooLarge);
    }
    let mut out = Vec::with_capacity(estimate);
    let mut chunk: Vec<u8> = Vec::with_capacity(CHUNK);
    let mut padded = false;
    let mut flush = |chunk: &mut Vec<u8>, out: &mut Vec<u8>| -> Result<(), BlobError> {
        if chunk.is_empty() {
            return Ok(());
        }
        // Padding may only end the whole text, not a chunk in the middle of it.
        if padded {
            return Err(BlobError::NotBase64);
        }
        padded = chunk.last() == Some(&b'=');
        LENIENT
            .decode_vec(&chunk[..], out)
            .map_err(|_| BlobError::NotBase64)?;
        chunk.clear();
        if out.len() > MAX_BLOB {
            return Err(BlobError::TooLarge);
        }
        Ok(())
    };
    for b in text.bytes() {
        if b.is_ascii_whitespace() {
            continue;
        }
        chunk.push(b);
        if chunk.len() == CHUNK {
            flush(&mut chunk, &mut out)?;
        }
    }
    flush(&mut chunk, &mut out)?;
    Ok(out)
}

/// The object that replaces a spilled item (§10.8.7).
pub fn spilled(
    saved: &Saved,
    uri: Option<&str>,
    mime: Option<&str>,
    audience: Option<&Value>,
) -> Value {
    let mut object = Map::new();
    object.insert("spilled".into(), Value::Bool(true));
    object.insert(
        "path".into(),
        Value::String(saved.path.display().to_string()),
    );
    object.insert("uri".into(), json!(uri));
    object.insert("mime_type".into(), json!(mime));
    object.insert("sniffed".into(), Value::Bool(false));
    object.insert("size_bytes".into(), json!(saved.size));
    object.insert("sha256".into(), Value::String(saved.sha256.clone()));
    if let Some(audience) = audience {
        object.insert("audience".into(), audience.clone());
    }
    Value::Object(object)
}

/// The message of the `too_large` error (§10.8.2); `from` is the URI, or what the content came
/// from when it has none.
pub fn too_large(from: &str) -> String {
    format!("Binary content from {from} exceeds the 50 MiB limit and was not saved.")
}
