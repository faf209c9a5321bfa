//! `prelude.file` (`prelude.md` §12): handles to local, content-addressed blobs in the host's blob
//! folder: the bytes in `<id>`, the metadata (`{"contentType": …, "size": n}`) in `<id>.json`.

use std::path::PathBuf;

use base64::Engine as _;
use katari_runtime::control::Ctl;
use katari_runtime::machine::Ctx;
use katari_runtime::value::Value;

use super::{Args, Kind, R, natives};

natives! {
    "prelude.file.read_base64" ["value"] Kind::Pure => read_base64;
    "prelude.file.content_type" ["value"] Kind::Pure => content_type;
    "prelude.file.size" ["value"] Kind::Pure => size;
    "prelude.file.path" ["value"] Kind::Pure => path;
}

/// Whether `id` is `sha256-` followed by 64 lowercase hex digits. Any other id (a wire object
/// may carry anything) names no blob, and never a path outside the blob folder.
fn well_formed(id: &str) -> bool {
    id.strip_prefix("sha256-").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// The path of the blob's bytes; a missing blob panics.
fn blob(ctx: &Ctx, a: &Args<'_>) -> Result<PathBuf, Ctl> {
    let id = a.file(0)?;
    let path = ctx.host().blob_dir().join(id);
    if well_formed(id) && path.is_file() {
        Ok(path)
    } else {
        Err(a.fail(format_args!(
            "file {id} does not exist in the local blob store"
        )))
    }
}

fn read_base64(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let path = blob(ctx, a)?;
    let bytes = std::fs::read(&path)
        .map_err(|e| a.fail(format_args!("cannot read {}: {e}", path.display())))?;
    Ok(Value::str(
        base64::engine::general_purpose::STANDARD.encode(bytes),
    ))
}

fn content_type(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let path = blob(ctx, a)?;
    let mut meta = path.into_os_string();
    meta.push(".json");
    let recorded = std::fs::read_to_string(meta)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json.get("contentType")?.as_str().map(str::to_string))
        .unwrap_or_default();
    Ok(Value::str(recorded))
}

fn size(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let path = blob(ctx, a)?;
    let len = std::fs::metadata(&path)
        .map_err(|e| a.fail(format_args!("cannot read {}: {e}", path.display())))?
        .len();
    Ok(Value::int(len as f64))
}

fn path(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let path = blob(ctx, a)?;
    let absolute = std::path::absolute(&path).unwrap_or(path);
    Ok(Value::str(absolute.to_string_lossy().into_owned()))
}
