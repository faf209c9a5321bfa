//! The `openai` wire protocol (`host.md` §8.1–§8.4): any OpenAI-compatible chat-completions
//! endpoint.

/// How to reach one configured `[llm.NAME]` of kind `openai`.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenAiConfig {
    /// The llm's name in the configuration, used in messages (`LLM 'NAME' …`).
    pub name: String,
    /// For example `http://127.0.0.1:8080/v1`; the request goes to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer KEY` when set.
    pub api_key: Option<String>,
    /// Extra headers, secrets already resolved.
    pub headers: Vec<(String, String)>,
    pub connect_timeout_secs: u64,
    pub request_timeout_secs: u64,
    pub stream_idle_timeout_secs: u64,
}
