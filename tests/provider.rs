//! Helpers for tests of an LLM provider (`chat/tests/openai.rs`, `chat/tests/anthropic.rs`):
//! one request run with every delta collected, and the outcomes taken apart.

use katari_chat::llm::{Delta, LlmError, Provider, Reply, Request};
use katari_chat::message::ToolCall;

/// Runs one request and returns its outcome with every delta reported.
pub async fn complete(
    client: &dyn Provider,
    request: &Request,
) -> (Result<Reply, LlmError>, Vec<Delta>) {
    let mut deltas = Vec::new();
    let mut on_delta = |d: Delta| deltas.push(d);
    let result = client.complete(request, &mut on_delta).await;
    (result, deltas)
}

/// The text deltas, joined.
pub fn streamed_text(deltas: &[Delta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Text(t) => Some(t.as_str()),
            Delta::ToolCall { .. } => None,
        })
        .collect()
}

/// The reply of a request that must succeed.
pub fn ok(result: Result<Reply, LlmError>) -> Reply {
    result.unwrap_or_else(|e| panic!("the request failed: {e}"))
}

/// The error of a request that must fail.
pub fn err(result: Result<Reply, LlmError>) -> LlmError {
    match result {
        Ok(reply) => panic!("the request succeeded: {reply:?}"),
        Err(e) => e,
    }
}

/// A tool call of a conversation.
pub fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}
