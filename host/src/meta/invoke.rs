//! Bounded results (`host.md` §10.6): a tool result within bounds reaches the model as the exact
//! bytes the server sent; otherwise only what is out of bounds is rewritten — long text cut at
//! a character boundary, binary items spilled, oversized structured content replaced by a
//! marker, and trailing items omitted while the whole is still too large. The same bounds apply
//! to `mcp_read_S`'s multi-item responses and `mcp_prompt_S`'s text.

use katari_chat::tools::{ErrorKind, ToolError};
use serde_json::{Map, Value, json};

use super::spill::{self, BlobError, Spill};

/// The most bytes of one text item, of structured content, and of a whole result (§10.6.2).
pub const LIMIT: usize = 204_800;

/// The largest character boundary of `text` at or below `at`.
pub fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `text` bounded like a tool's text item: at most [`LIMIT`] bytes, cut at a character
/// boundary and followed by the truncation line when longer.
pub fn bound_text(text: &str) -> Option<String> {
    if text.len() <= LIMIT {
        return None;
    }
    let kept = floor_boundary(text, LIMIT);
    Some(format!(
        "{}\n[truncated: showing the first {kept} of {} bytes; call the tool again with narrower arguments]",
        &text[..kept],
        text.len()
    ))
}

/// What a rewrite needs: where binary content goes and how messages name its source.
pub struct Rewrite<'a> {
    pub spill: &'a Spill,
    /// The sanitised server name (the spill folder).
    pub server: &'a str,
    /// What content without a URI came from, for the `too_large` message (`tool 'NAME'`).
    pub source: String,
}

/// What became of a base64 payload.
pub enum Blob {
    /// Saved to the spill tree: the spill object.
    Spilled(Value),
    /// Valid UTF-8, when text was acceptable.
    Text(String),
    /// The error entry that replaces the item.
    Failed(Value),
}

/// The error entry that replaces an item (`{"error": {"type", "message"}}`).
pub fn error_item(kind: ErrorKind, message: String) -> Value {
    json!({"error": {"type": kind.as_str(), "message": message}})
}

impl Rewrite<'_> {
    /// Decodes one base64 payload and spills it. `text_ok` lets bytes that are valid UTF-8
    /// come back as text (§10.8.3).
    pub fn blob(
        &self,
        data: &str,
        uri: Option<&str>,
        mime: Option<&str>,
        audience: Option<&Value>,
        text_ok: bool,
    ) -> Blob {
        let from = uri.map_or_else(|| self.source.clone(), str::to_string);
        let bytes = match spill::decode_blob(data) {
            Ok(bytes) => bytes,
            Err(BlobError::TooLarge) => {
                return Blob::Failed(error_item(ErrorKind::TooLarge, spill::too_large(&from)));
            }
            Err(BlobError::NotBase64) => {
                return Blob::Failed(error_item(
                    ErrorKind::ServerError,
                    format!("Binary content from {from} is not valid base64."),
                ));
            }
        };
        let bytes = if text_ok {
            match String::from_utf8(bytes) {
                Ok(text) => return Blob::Text(text),
                Err(e) => e.into_bytes(),
            }
        } else {
            bytes
        };
        match self.spill.save(self.server, &bytes, mime) {
            Ok(saved) => Blob::Spilled(spill::spilled(&saved, uri, mime, audience)),
            Err(e) => Blob::Failed(error_item(
                ErrorKind::ServerError,
                format!("Binary content from {from} could not be saved: {e}"),
            )),
        }
    }

    /// One content item of a tool result, rewritten if it is out of bounds.
    fn item(&self, item: &Value) -> Value {
        let Some(object) = item.as_object() else {
            return item.clone();
        };
        let text = |key: &str| object.get(key).and_then(Value::as_str);
        let audience = object.get("annotations").and_then(|a| a.get("audience"));
        match text("type") {
            Some("text") => match text("text").and_then(bound_text) {
                Some(bounded) => {
                    let mut copy = object.clone();
                    copy.insert("text".into(), Value::String(bounded));
                    Value::Object(copy)
                }
                None => item.clone(),
            },
            Some("image" | "audio") => {
                let Some(data) = text("data") else {
                    return error_item(
                        ErrorKind::ServerError,
                        format!(
                            "A {} item from {} has no base64 'data'.",
                            text("type").unwrap_or_default(),
                            self.source
                        ),
                    );
                };
                match self.blob(data, None, text("mimeType"), audience, false) {
                    Blob::Spilled(value) | Blob::Failed(value) => value,
                    // Not reached: images and audio are never taken as text.
                    Blob::Text(_) => item.clone(),
                }
            }
            Some("resource") => {
                let Some(resource) = object.get("resource").and_then(Value::as_object) else {
                    return item.clone();
                };
                let field = |key: &str| resource.get(key).and_then(Value::as_str);
                let audience = resource
                    .get("annotations")
                    .and_then(|a| a.get("audience"))
                    .or(audience);
                let bounded = |text: &str, resource: &Map<String, Value>| {
                    let mut resource = resource.clone();
                    resource.remove("blob");
                    resource.insert(
                        "text".into(),
                        Value::String(bound_text(text).unwrap_or_else(|| text.to_string())),
                    );
                    let mut copy = object.clone();
                    copy.insert("resource".into(), Value::Object(resource));
                    Value::Object(copy)
                };
                if let Some(blob) = field("blob") {
                    match self.blob(blob, field("uri"), field("mimeType"), audience, true) {
                        Blob::Spilled(value) | Blob::Failed(value) => value,
                        Blob::Text(text) => bounded(&text, resource),
                    }
                } else if let Some(text) = field("text")
                    && text.len() > LIMIT
                {
                    bounded(text, resource)
                } else {
                    item.clone()
                }
            }
            _ => item.clone(),
        }
    }
}

/// Whether a content item holds binary data (image, audio, an embedded blob).
fn binary(item: &Value) -> bool {
    match item.get("type").and_then(Value::as_str) {
        Some("image" | "audio") => true,
        Some("resource") => item.get("resource").and_then(|r| r.get("blob")).is_some(),
        _ => false,
    }
}

/// The marker for structured content over the limit.
fn structured_marker(bytes: usize) -> Value {
    json!({"truncated": true, "original_bytes": bytes,
           "note": format!("structured content of {bytes} bytes exceeds the {LIMIT}-byte limit; call the tool again with narrower arguments")})
}

/// The item that stands for `count` omitted items.
fn omitted(count: usize) -> Value {
    json!({"omitted_items": count,
           "note": format!("{count} more content items omitted: the response is capped at {LIMIT} bytes")})
}

fn size(value: &Value) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// Keeps the items of `object[key]` in order while the whole object stays within [`LIMIT`]
/// (the first item always), replacing the rest by one `omitted_items` item (§10.6.3).
pub fn cap(object: &mut Map<String, Value>, key: &str) {
    if size(&Value::Object(object.clone())) <= LIMIT {
        return;
    }
    let Some(Value::Array(items)) = object.insert(key.into(), Value::Array(Vec::new())) else {
        return;
    };
    let base = size(&Value::Object(object.clone()));
    let sizes: Vec<usize> = items.iter().map(size).collect();
    let total = items.len();
    // The size with the first `n` items kept and a marker for the rest.
    let with = |n: usize| {
        let marker = if n < total {
            size(&omitted(total - n))
        } else {
            0
        };
        let parts = n + usize::from(n < total);
        base + sizes[..n].iter().sum::<usize>() + marker + parts.saturating_sub(1)
    };
    let mut n = 1.min(total);
    while n < total && with(n + 1) <= LIMIT {
        n += 1;
    }
    let mut kept: Vec<Value> = items.into_iter().take(n).collect();
    if n < total {
        kept.push(omitted(total - n));
    }
    object.insert(key.into(), Value::Array(kept));
}

/// The text the model receives for a `tools/call` result whose exact text is `raw`.
pub fn bound(raw: &str, rewrite: &Rewrite<'_>) -> Result<String, ToolError> {
    let value: Value = serde_json::from_str(raw).map_err(|e| {
        ToolError::new(
            ErrorKind::ServerError,
            format!("The result from {} is not JSON: {e}", rewrite.source),
        )
    })?;
    let Value::Object(mut result) = value else {
        return Err(ToolError::new(
            ErrorKind::ServerError,
            format!("The result from {} is not a JSON object.", rewrite.source),
        ));
    };
    let content = result.get("content").and_then(Value::as_array);
    if raw.len() <= LIMIT && !content.is_some_and(|items| items.iter().any(binary)) {
        return Ok(raw.to_string());
    }
    if let Some(Value::Array(items)) = result.get("content") {
        let items: Vec<Value> = items.iter().map(|item| rewrite.item(item)).collect();
        result.insert("content".into(), Value::Array(items));
    }
    if let Some(structured) = result.get("structuredContent") {
        let bytes = size(structured);
        if bytes > LIMIT {
            result.insert("structuredContent".into(), structured_marker(bytes));
        }
    }
    cap(&mut result, "content");
    serde_json::to_string(&Value::Object(result))
        .map_err(|e| ToolError::new(ErrorKind::ServerError, e.to_string()))
}

/// The text of a result with `isError: true` (its text items joined by spaces, or a generic
/// line when it has none); `None` for a result that did not fail.
pub fn failure_text(result: &str) -> Option<String> {
    let value: Value = serde_json::from_str(result).ok()?;
    if value.get("isError").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let texts: Vec<&str> = value
        .get("content")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("text")?.as_str())
                .collect()
        })
        .unwrap_or_default();
    Some(if texts.is_empty() {
        "the tool reported an error".to_string()
    } else {
        texts.join(" ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_at_a_character_boundary_with_the_truncation_line() {
        let text = "€".repeat(100_000);
        let bounded = bound_text(&text).expect("bounded");
        let (kept, line) = bounded.split_once('\n').expect("a line");
        assert_eq!(kept.len(), 204_798);
        assert_eq!(
            line,
            "[truncated: showing the first 204798 of 300000 bytes; call the tool again with narrower arguments]"
        );
        assert_eq!(bound_text("short"), None);
    }

    #[test]
    fn items_are_kept_while_they_fit_and_the_rest_omitted() {
        let item = |n: usize| json!({"type": "text", "text": "x".repeat(n)});
        let mut object = Map::new();
        object.insert(
            "content".into(),
            json!([item(150_000), item(50_000), item(10_000), item(1)]),
        );
        cap(&mut object, "content");
        let items = object["content"].as_array().expect("items");
        assert_eq!(items.len(), 3);
        assert_eq!(items[2]["omitted_items"], 2);
        assert_eq!(
            items[2]["note"],
            "2 more content items omitted: the response is capped at 204800 bytes"
        );
        assert!(size(&Value::Object(object.clone())) <= LIMIT);
        // The first item is kept whatever its size.
        let mut object = Map::new();
        object.insert("content".into(), json!([item(300_000), item(1)]));
        cap(&mut object, "content");
        assert_eq!(object["content"].as_array().map(Vec::len), Some(2));
        assert_eq!(object["content"][1]["omitted_items"], 1);
    }
}
