//! The messages of a conversation as the engine, the providers and the thread store see them,
//! and the pairing invariant of `host.md` §7.7.7 that every history sent to a model keeps.

use serde::{Deserialize, Serialize};

/// Who wrote a message. The system block is never a message of the thread (§7.4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" => Some(Role::Tool),
            _ => None,
        }
    }
}

/// One tool call of an assistant message, as the model made it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model sent them (JSON text that may not parse: §7.7.6).
    pub arguments: String,
}

/// One message of a thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// The text; `None` for an assistant message that only calls tools.
    pub content: Option<String>,
    /// The calls of an assistant message, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool message answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: Some(text.into()),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    pub fn assistant(text: Option<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message {
            role: Role::Assistant,
            content: text,
            tool_calls,
            tool_call_id: None,
        }
    }

    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            role: Role::Tool,
            content: Some(content.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
}

/// Checks the pairing invariant (§7.7.7) of a history: every assistant message with tool calls
/// is followed by exactly one tool message per call id (before the next non-tool message), and
/// no tool message appears without its call. `Err` says what is wrong.
pub fn check_pairing(history: &[Message]) -> Result<(), String> {
    let mut i = 0;
    while i < history.len() {
        let m = &history[i];
        match m.role {
            Role::Tool => {
                return Err(format!(
                    "message {i}: tool result for {:?} without a call before it",
                    m.tool_call_id
                ));
            }
            Role::User => i += 1,
            Role::Assistant => {
                let mut open: Vec<&str> = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
                let mut j = i + 1;
                while j < history.len() && history[j].role == Role::Tool {
                    let id = history[j].tool_call_id.as_deref().unwrap_or("");
                    match open.iter().position(|o| *o == id) {
                        Some(k) => {
                            open.remove(k);
                        }
                        None => {
                            return Err(format!(
                                "message {j}: tool result for '{id}' matches no open call"
                            ));
                        }
                    }
                    j += 1;
                }
                if !open.is_empty() {
                    return Err(format!(
                        "message {i}: tool calls without results: {}",
                        open.join(", ")
                    ));
                }
                i = j;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "f".into(),
            arguments: "{}".into(),
        }
    }

    #[test]
    fn paired_histories_pass_and_broken_ones_say_why() {
        let good = vec![
            Message::user("hi"),
            Message::assistant(None, vec![call("a"), call("b")]),
            Message::tool("b", "1"),
            Message::tool("a", "2"),
            Message::assistant(Some("done".into()), vec![]),
        ];
        assert_eq!(check_pairing(&good), Ok(()));
        let missing = &good[..3];
        assert!(
            check_pairing(missing)
                .expect_err("an error")
                .contains("without results: a")
        );
        let orphan = vec![Message::user("hi"), Message::tool("x", "1")];
        assert!(
            check_pairing(&orphan)
                .expect_err("an error")
                .contains("without a call")
        );
        let twice = vec![
            Message::assistant(None, vec![call("a")]),
            Message::tool("a", "1"),
            Message::tool("a", "1"),
        ];
        assert!(
            check_pairing(&twice)
                .expect_err("an error")
                .contains("matches no open call")
        );
    }
}
