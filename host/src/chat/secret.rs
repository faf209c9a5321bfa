//! The `get_secret` tool (`host.md` §7.11): offered only with `--allow-secrets`; it reads one key
//! of `secrets.toml` for the model and shows the person `[secret read: KEY]`, never the value.

use std::io::Write;
use std::sync::Arc;

use katari_chat::llm::ToolSpec;
use katari_chat::tools::{ErrorKind, ToolError, ToolFuture, Tools};
use serde_json::{Value, json};

use crate::config::Config;

pub const NAME: &str = "get_secret";

/// The tool over the process's configuration.
pub struct GetSecret {
    pub config: Arc<Config>,
}

impl Tools for GetSecret {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: NAME.to_string(),
            description: "Read one value from the person's secrets.toml by its key. Use only when the task needs the secret itself.".to_string(),
            parameters: json!({
                "type": "object",
                "properties": {"key": {"type": "string", "description": "The key in secrets.toml"}},
                "required": ["key"],
                "additionalProperties": false
            }),
        }]
    }

    fn concurrent(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, _name: &'a str, arguments: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let Some(key) = arguments.get("key").and_then(Value::as_str) else {
                return Err(ToolError::new(
                    ErrorKind::InvalidArgument,
                    "get_secret takes {\"key\": string}.",
                ));
            };
            let shown = katari_runtime::mcp::text::sanitize(key);
            let _ = writeln!(std::io::stderr(), "[secret read: {shown}]");
            // Read at each call, with the same permission check as every other use (§3.3.2),
            // so an edit shows up without restarting the chat.
            let secrets = crate::config::secrets::read(&self.config.files.secrets)
                .map_err(|e| ToolError::new(ErrorKind::ServerError, e.message().to_string()))?;
            match secrets.get(key) {
                Some(value) => Ok(json!({"key": key, "value": value}).to_string()),
                None => Err(ToolError::new(
                    ErrorKind::NotFound,
                    format!("There is no secret named '{key}' in secrets.toml."),
                )),
            }
        })
    }
}
