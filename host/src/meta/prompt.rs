//! `mcp_prompt_S` (`host.md` §10.9): a rendered prompt flattened into one text block — a lone
//! user message as its text, otherwise `[user]`/`[assistant]` sections — with binary parts
//! spilled and named by their file.

use katari_chat::tools::{ErrorKind, ToolError};
use serde_json::Value;

use super::invoke::{self, Blob, Rewrite};

/// The text of one content part.
fn part(part: &Value, rewrite: &Rewrite<'_>) -> String {
    let field = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let saved = |kind: &str, blob: Blob| match blob {
        Blob::Spilled(spilled) => format!(
            "({kind} content saved to {})",
            spilled["path"].as_str().unwrap_or_default()
        ),
        Blob::Text(text) => text,
        Blob::Failed(error) => format!(
            "({kind} content not saved: {})",
            error["error"]["message"].as_str().unwrap_or_default()
        ),
    };
    let kind = field(part, "type").unwrap_or_default();
    match kind.as_str() {
        "text" => field(part, "text").unwrap_or_default(),
        "image" | "audio" => match field(part, "data") {
            Some(data) => saved(
                &kind,
                rewrite.blob(&data, None, field(part, "mimeType").as_deref(), None, false),
            ),
            None => format!("({kind} content without data)"),
        },
        "resource" => {
            let resource = part.get("resource").unwrap_or(&Value::Null);
            if let Some(text) = field(resource, "text") {
                text
            } else if let Some(blob) = field(resource, "blob") {
                let uri = field(resource, "uri");
                let mime = field(resource, "mimeType");
                saved(
                    "binary",
                    rewrite.blob(&blob, uri.as_deref(), mime.as_deref(), None, true),
                )
            } else {
                "(resource content without text or blob)".to_string()
            }
        }
        "resource_link" => format!("(resource: {})", field(part, "uri").unwrap_or_default()),
        "" => "(content without a type)".to_string(),
        other => format!("({other} content)"),
    }
}

/// The text of a message's `content`: one part, or several joined by newlines.
fn content(content: &Value, rewrite: &Rewrite<'_>) -> String {
    match content {
        Value::Array(parts) => parts
            .iter()
            .map(|p| part(p, rewrite))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::String(text) => text.clone(),
        other => part(other, rewrite),
    }
}

/// The tool result for the raw `prompts/get` result `raw` of prompt `name`.
pub fn render(raw: &str, name: &str, rewrite: &Rewrite<'_>) -> Result<String, ToolError> {
    let server_error = |why: String| ToolError::new(ErrorKind::ServerError, why);
    let value: Value = serde_json::from_str(raw)
        .map_err(|e| server_error(format!("The reply for prompt '{name}' is not JSON: {e}")))?;
    let Some(messages) = value.get("messages").and_then(Value::as_array) else {
        return Err(server_error(format!(
            "The reply for prompt '{name}' has no 'messages' list."
        )));
    };
    let role = |m: &Value| {
        m.get("role")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string()
    };
    let body = |m: &Value| content(m.get("content").unwrap_or(&Value::Null), rewrite);
    let text = match messages.as_slice() {
        [only] if role(only) == "user" => body(only),
        _ => messages
            .iter()
            .map(|m| format!("[{}]\n{}", role(m), body(m)))
            .collect::<Vec<_>>()
            .join("\n\n"),
    };
    Ok(invoke::bound_text(&text).unwrap_or(text))
}
