//! LLM providers (`host.md` §8) behind one small trait, so a second wire protocol is one more
//! file. A provider sends one request and reports the reply's text as it streams; the engine
//! decides everything else (tools, retries of the turn, writing the thread).

pub mod openai;
pub mod sse;
pub mod trim;

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

use crate::message::{Message, ToolCall};

/// A function offered to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// `[A-Za-z0-9_-]{1,64}` (§7.6.3).
    pub name: String,
    pub description: String,
    /// An object schema.
    pub parameters: Value,
}

/// Sampling parameters after precedence (§7.5.1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    /// Honoured by providers that support it; the OpenAI wire does not send it (§7.5.4).
    pub top_k: Option<u64>,
    pub max_tokens: Option<u64>,
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    /// Provider-specific top-level request fields (`--extra`, §7.5.3).
    pub extra: Map<String, Value>,
}

/// One request to a model.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub model: String,
    /// The system block (§7.4); `None` when every part is empty.
    pub system: Option<String>,
    pub messages: Vec<Message>,
    /// Empty: no tools are offered (and none is sent).
    pub tools: Vec<ToolSpec>,
    pub sampling: Sampling,
    /// Stream the reply (SSE) or ask for it whole (`--no-stream`).
    pub stream: bool,
}

/// Token counts the provider reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// The whole reply to one request.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    pub text: Option<String>,
    /// In the order the model made them (by stream index).
    pub tool_calls: Vec<ToolCall>,
    /// `stop`, `tool_calls`, `length`, … as the provider said it.
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
}

/// What a provider reports while a reply streams.
#[derive(Clone, Debug, PartialEq)]
pub enum Delta {
    /// A piece of the reply's text.
    Text(String),
    /// The model started a tool call (its name is known).
    ToolCall { id: String, name: String },
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq)]
pub struct LlmError {
    /// The message for the person (§8.4): names the LLM and the fix where one is known; the
    /// provider's own message, sanitised, on the next line.
    pub message: String,
    /// Whether any delta had been reported before the failure (nothing is retried then: §8.3).
    pub after_output: bool,
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The future a provider returns.
pub type ReplyFuture<'a> = Pin<Box<dyn Future<Output = Result<Reply, LlmError>> + Send + 'a>>;

/// A model behind a wire protocol.
pub trait Provider: Send + Sync {
    /// Sends `request` and reports deltas through `on_delta` as they arrive; resolves to the
    /// whole reply. Dropping the future cancels the request.
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        on_delta: &'a mut (dyn FnMut(Delta) + Send),
    ) -> ReplyFuture<'a>;
}
