//! The `anthropic` wire protocol (`host.md` §8.6): the Messages API.
//!
//! One request is `POST {base_url}/v1/messages` (`{base_url}/messages` when the base URL already
//! ends in `/v1`) with `x-api-key` and `anthropic-version` headers. The thread's provider-neutral
//! messages are mapped on the way out: the system block becomes `system`, an assistant message
//! becomes `text` and `tool_use` blocks, and the tool messages that answer it become
//! `tool_result` blocks of the next user message, so every `tool_use` is answered in the next user
//! turn (the pairing invariant of §7.7.7), also for a thread begun with another provider. The
//! system block and the tool definitions carry `cache_control` breakpoints, so a long system
//! block and many tools are read from the prompt cache on the requests after the first; the
//! cache reads and writes the API reports come back in [`Usage`].
//!
//! A streamed reply is read as server-sent events (`message_start`, `content_block_start`,
//! `content_block_delta` with `text_delta` and `input_json_delta`, `content_block_stop`,
//! `message_delta` with the stop reason and usage, `message_stop`, `ping`, `error`); event types
//! it does not know are skipped, as the API's versioning policy asks. `max_tokens` is required
//! by the API: the request's, else the configured default ([`DEFAULT_MAX_TOKENS`] unless
//! `[llm.NAME]` sets `max_tokens`). `top_k` is sent; `seed` is not (the API has none).
//!
//! The transport is `llm::http`'s: redirects within the origin only, timeouts while
//! reading, the bounds on a reply, secrets redacted from every error, and retries of HTTP 429,
//! 503 and 529 (overloaded) honouring `retry-after`.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::llm::http::{self, Endpoint, EndpointConfig};
use crate::llm::{Delta, LlmError, Provider, Reply, ReplyFuture, Request, Usage};
use crate::message::{Message, Role, ToolCall};

pub use crate::llm::http::MAX_REPLY_BYTES;

/// The API's address when `[llm.NAME]` sets no `base_url`.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// `max_tokens` when neither the request nor `[llm.NAME]` sets one (§8.6).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The `anthropic-version` header sent unless the configured headers set their own.
pub const API_VERSION: &str = "2023-06-01";

/// Request fields `--extra` never replaces (the host refuses them too: §7.5.3). Any other field
/// is passed through, `system` and `max_tokens` included.
const RESERVED_FIELDS: [&str; 4] = ["model", "messages", "tools", "stream"];

/// How to reach one configured `[llm.NAME]` of kind `anthropic`.
#[derive(Clone, Debug, PartialEq)]
pub struct AnthropicConfig {
    /// The llm's name in the configuration, used in messages (`LLM 'NAME' …`).
    pub name: String,
    /// For example [`DEFAULT_BASE_URL`]; a trailing `/v1` is accepted.
    pub base_url: String,
    /// Sent as `x-api-key` when set; never shown in an error.
    pub api_key: Option<String>,
    /// Extra headers, secrets already resolved (`anthropic-beta`, or an `anthropic-version` of
    /// one's own).
    pub headers: Vec<(String, String)>,
    /// Values never shown in an error besides the API key: the header values that came from
    /// `secrets.toml`.
    pub secrets: Vec<String>,
    /// `max_tokens` for requests that set none.
    pub max_tokens: u64,
    pub connect_timeout_secs: u64,
    pub request_timeout_secs: u64,
    pub stream_idle_timeout_secs: u64,
}

/// A client of the Messages API.
#[derive(Clone, Debug)]
pub struct Anthropic {
    http: Endpoint,
    max_tokens: u64,
}

impl Anthropic {
    /// A client for `config`, holding one connection pool with its connect timeout.
    pub fn new(config: AnthropicConfig) -> Result<Anthropic, LlmError> {
        let base = config.base_url.trim_end_matches('/');
        let url = if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let mut headers = Vec::new();
        if let Some(key) = &config.api_key {
            headers.push(("x-api-key".to_string(), key.clone()));
        }
        if !config
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("anthropic-version"))
        {
            headers.push(("anthropic-version".to_string(), API_VERSION.to_string()));
        }
        headers.extend(config.headers.iter().cloned());
        let http = Endpoint::new(EndpointConfig {
            name: config.name,
            url,
            headers,
            secrets: config.api_key.into_iter().chain(config.secrets).collect(),
            connect_timeout_secs: config.connect_timeout_secs,
            request_timeout_secs: config.request_timeout_secs,
            stream_idle_timeout_secs: config.stream_idle_timeout_secs,
            retry: &[429, 503, 529],
        })?;
        Ok(Anthropic {
            http,
            max_tokens: config.max_tokens,
        })
    }

    /// Changes the bound on a reply's text and tool inputs (default [`MAX_REPLY_BYTES`]).
    pub fn with_max_reply_bytes(mut self, bytes: usize) -> Anthropic {
        self.http.max_reply_bytes = bytes;
        self
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        self.http.url()
    }

    fn name(&self) -> &str {
        self.http.name()
    }

    /// A non-streamed reply: one message object, read whole, then reported.
    async fn read_whole(
        &self,
        mut response: reqwest::Response,
        report: &mut (dyn FnMut(Delta) + Send),
        deadline: Instant,
    ) -> Result<Reply, LlmError> {
        let url = response.url().to_string();
        let body = self.http.whole_body(&mut response, deadline).await?;
        let value: Value = serde_json::from_slice(&body).map_err(|e| {
            self.http.error(format!(
                "LLM '{}' sent a reply from {url} that is not valid JSON ({e}).\n{}",
                self.name(),
                self.http.own(&String::from_utf8_lossy(&body))
            ))
        })?;
        if value["type"] == "error" || value.get("error").is_some_and(|e| !e.is_null()) {
            return Err(self.http.reported_error(&value["error"]));
        }
        if !value["content"].is_array() {
            return Err(self.http.error(format!(
                "LLM '{}' sent a reply from {url} that is not a Messages API message (it has no content). Check base_url in [llm.{}].\n{}",
                self.name(),
                self.name(),
                self.http.own(&String::from_utf8_lossy(&body))
            )));
        }
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        for block in value["content"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            match block["type"].as_str() {
                Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
                Some("tool_use") => tool_calls.push(ToolCall {
                    id: block["id"]
                        .as_str()
                        .filter(|id| !id.is_empty())
                        .map_or_else(|| format!("toolu_{}", tool_calls.len()), str::to_string),
                    name: block["name"].as_str().unwrap_or_default().to_string(),
                    arguments: input_text(&block["input"]),
                }),
                _ => {}
            }
        }
        let total = text.len() + tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>();
        if total > self.http.max_reply_bytes {
            return Err(self.http.too_large_error());
        }
        if !text.is_empty() {
            report(Delta::Text(text.clone()));
        }
        for call in &tool_calls {
            report(Delta::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
        let mut usage = None;
        merge_usage(&mut usage, &value["usage"]);
        Ok(Reply {
            text: (!text.is_empty()).then_some(text),
            tool_calls,
            finish_reason: value["stop_reason"].as_str().map(str::to_string),
            usage,
        })
    }

    /// A streamed reply: server-sent events until `message_stop` or the end of the body.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        report: &mut (dyn FnMut(Delta) + Send),
        deadline: Instant,
    ) -> Result<Reply, LlmError> {
        let mut assembly = Assembly::default();
        let stopped = self
            .http
            .read_events(response, deadline, "Messages API", |event| {
                if event.data.trim().is_empty() {
                    return Ok(false);
                }
                let data: Value = serde_json::from_str(&event.data).map_err(|e| {
                    self.http.error(format!(
                        "LLM '{}' sent a reply event that is not valid JSON ({e}).\n{}",
                        self.name(),
                        self.http.own(&event.data)
                    ))
                })?;
                let kind = data["type"].as_str().unwrap_or(event.event.as_str());
                if kind == "error" {
                    return Err(self.http.reported_error(&data["error"]));
                }
                if kind == "message_stop" {
                    return Ok(true);
                }
                assembly.add(kind, &data, report);
                if assembly.bytes > self.http.max_reply_bytes {
                    return Err(self.http.too_large_error());
                }
                Ok(false)
            })
            .await?;
        if !stopped && assembly.stop_reason.is_none() {
            return Err(self.http.error(format!(
                "LLM '{}' ended its reply stream before finishing it (no message_stop and no stop reason).",
                self.name()
            )));
        }
        Ok(assembly.finish())
    }
}

impl Provider for Anthropic {
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        on_delta: &'a mut (dyn FnMut(Delta) + Send),
    ) -> ReplyFuture<'a> {
        http::complete(self, request, on_delta)
    }
}

impl http::Exchange for Anthropic {
    fn endpoint(&self) -> &Endpoint {
        &self.http
    }

    /// One request with its retries; `report` sees every delta.
    async fn run(
        &self,
        request: &Request,
        report: &mut (dyn FnMut(Delta) + Send),
        deadline: Instant,
    ) -> Result<Reply, LlmError> {
        let body = request_body(request, self.max_tokens);
        let response = self
            .http
            .post(&body, request.stream, &request.model, deadline)
            .await?;
        if request.stream && !http::is_json(&response) {
            self.read_stream(response, report, deadline).await
        } else {
            self.read_whole(response, report, deadline).await
        }
    }
}

/// What a content block of the stream is.
enum Block {
    Text,
    /// A `tool_use` block: its position in `Assembly::calls`.
    Tool(usize),
    /// Anything else (`thinking`, blocks of later API versions): skipped.
    Other,
}

/// A reply being assembled from stream events.
#[derive(Default)]
struct Assembly {
    text: String,
    calls: Vec<ToolCall>,
    /// The block at each stream index.
    blocks: HashMap<u64, Block>,
    stop_reason: Option<String>,
    usage: Option<Usage>,
    /// Text and input bytes so far.
    bytes: usize,
}

impl Assembly {
    fn add(&mut self, kind: &str, data: &Value, report: &mut (dyn FnMut(Delta) + Send)) {
        let index = data["index"].as_u64().unwrap_or(0);
        match kind {
            "message_start" => merge_usage(&mut self.usage, &data["message"]["usage"]),
            "content_block_start" => {
                let block = &data["content_block"];
                match block["type"].as_str() {
                    Some("text") => {
                        self.blocks.insert(index, Block::Text);
                        self.push_text(block["text"].as_str().unwrap_or_default(), report);
                    }
                    Some("tool_use") => {
                        let at = self.calls.len();
                        let id = block["id"]
                            .as_str()
                            .filter(|id| !id.is_empty())
                            .map_or_else(|| format!("toolu_{at}"), str::to_string);
                        let name = block["name"].as_str().unwrap_or_default().to_string();
                        // The input starts as `{}` and comes as `input_json_delta` pieces; an
                        // input sent whole at the start is kept as its text.
                        let arguments = match &block["input"] {
                            Value::Object(o) if !o.is_empty() => input_text(&block["input"]),
                            _ => String::new(),
                        };
                        self.bytes += arguments.len();
                        report(Delta::ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        self.calls.push(ToolCall {
                            id,
                            name,
                            arguments,
                        });
                        self.blocks.insert(index, Block::Tool(at));
                    }
                    _ => {
                        self.blocks.insert(index, Block::Other);
                    }
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match (self.blocks.get(&index), delta["type"].as_str()) {
                    (Some(Block::Text) | None, Some("text_delta")) => {
                        self.push_text(delta["text"].as_str().unwrap_or_default(), report);
                    }
                    (Some(Block::Tool(at)), Some("input_json_delta")) => {
                        let piece = delta["partial_json"].as_str().unwrap_or_default();
                        self.bytes += piece.len();
                        self.calls[*at].arguments.push_str(piece);
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_string());
                }
                merge_usage(&mut self.usage, &data["usage"]);
            }
            // `content_block_stop`, `ping` and event types of later API versions.
            _ => {}
        }
    }

    fn push_text(&mut self, text: &str, report: &mut (dyn FnMut(Delta) + Send)) {
        if !text.is_empty() {
            self.text.push_str(text);
            self.bytes += text.len();
            report(Delta::Text(text.to_string()));
        }
    }

    fn finish(self) -> Reply {
        Reply {
            text: (!self.text.is_empty()).then_some(self.text),
            tool_calls: self.calls,
            finish_reason: self.stop_reason,
            usage: self.usage,
        }
    }
}

/// Folds a `usage` object into the reply's: `message_start` brings the input side, and
/// `message_delta` the (cumulative) output count and sometimes the input side again. The
/// prompt tokens are the uncached input plus the cache reads and writes, so they count the same
/// as an OpenAI-compatible endpoint's `prompt_tokens`.
fn merge_usage(usage: &mut Option<Usage>, value: &Value) {
    let Some(u) = value.as_object() else {
        return;
    };
    let sum = usage.get_or_insert_with(Usage::default);
    // A count the event leaves out keeps its earlier value: `message_delta` may repeat
    // `input_tokens` without the cache counts of `message_start`.
    if let Some(read) = u.get("cache_read_input_tokens").and_then(Value::as_u64) {
        sum.cache_read_tokens = Some(read);
    }
    if let Some(write) = u.get("cache_creation_input_tokens").and_then(Value::as_u64) {
        sum.cache_write_tokens = Some(write);
    }
    if let Some(input) = u.get("input_tokens").and_then(Value::as_u64) {
        sum.prompt_tokens =
            input + sum.cache_read_tokens.unwrap_or(0) + sum.cache_write_tokens.unwrap_or(0);
    }
    if let Some(output) = u.get("output_tokens").and_then(Value::as_u64) {
        sum.completion_tokens = output;
    }
}

/// A tool input as the arguments' text: the object serialised (the model's own JSON).
fn input_text(input: &Value) -> String {
    match input {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The JSON body of a request (§8.6, §7.5): `--extra` fields at the top level.
fn request_body(request: &Request, default_max_tokens: u64) -> Value {
    let sampling = &request.sampling;
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert(
        "max_tokens".into(),
        json!(sampling.max_tokens.unwrap_or(default_max_tokens)),
    );
    if let Some(system) = &request.system {
        // A cache breakpoint after the system block: it is the same on every request of a chat.
        body.insert(
            "system".into(),
            json!([{ "type": "text", "text": system, "cache_control": { "type": "ephemeral" } }]),
        );
    }
    body.insert(
        "messages".into(),
        Value::Array(wire_messages(&request.messages)),
    );
    if !request.tools.is_empty() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({ "name": t.name, "description": t.description, "input_schema": t.parameters })
            })
            .collect();
        // A breakpoint on the last tool caches every definition (tools come first in the
        // prompt, then the system block).
        if let Some(Value::Object(last)) = tools.last_mut() {
            last.insert("cache_control".into(), json!({ "type": "ephemeral" }));
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = sampling.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = sampling.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(k) = sampling.top_k {
        body.insert("top_k".into(), json!(k));
    }
    if !sampling.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(sampling.stop));
    }
    for (key, value) in &sampling.extra {
        if !RESERVED_FIELDS.contains(&key.as_str()) {
            body.insert(key.clone(), value.clone());
        }
    }
    body.insert("stream".into(), json!(request.stream));
    Value::Object(body)
}

/// The thread's messages as Messages API turns: tool messages become `tool_result` blocks of a
/// user turn, and consecutive turns of one role are merged (the API alternates roles), so the
/// results of an assistant turn's `tool_use` blocks are all in the user turn right after it,
/// ahead of any text.
fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::User => {
                let text = message.content.as_deref().unwrap_or_default();
                let blocks = if text.is_empty() {
                    Vec::new()
                } else {
                    vec![json!({ "type": "text", "text": text })]
                };
                ("user", blocks)
            }
            Role::Tool => {
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": wire_id(message.tool_call_id.as_deref().unwrap_or_default()),
                });
                let content = message.content.as_deref().unwrap_or_default();
                if !content.is_empty() {
                    block["content"] = json!(content);
                }
                ("user", vec![block])
            }
            Role::Assistant => {
                let mut blocks = Vec::new();
                if let Some(text) = message.content.as_deref().filter(|t| !t.trim().is_empty()) {
                    blocks.push(json!({ "type": "text", "text": text }));
                }
                for call in &message.tool_calls {
                    // Arguments that did not parse were answered with `invalid_argument`; the
                    // API needs an object, and the result tells the model what went wrong.
                    let input = match serde_json::from_str::<Value>(&call.arguments) {
                        Ok(v @ Value::Object(_)) => v,
                        _ => json!({}),
                    };
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": wire_id(&call.id),
                        "name": wire_name(&call.name),
                        "input": input,
                    }));
                }
                ("assistant", blocks)
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect()
}

/// A call id the API accepts (`[A-Za-z0-9_-]+`): ids of other providers may hold other
/// characters. The same id always maps to the same text, so a `tool_use` and its `tool_result`
/// still match.
fn wire_id(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() {
        "call".to_string()
    } else {
        id
    }
}

/// A tool name the API accepts (`[A-Za-z0-9_-]{1,64}`): a name a model made up in an earlier
/// turn may not be one.
fn wire_name(name: &str) -> String {
    if name.is_empty() {
        return "unknown".to_string();
    }
    wire_id(name).chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Sampling, ToolSpec};

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn tool_results_answer_their_calls_in_the_next_user_turn() {
        let messages = vec![
            Message::user("go"),
            Message::assistant(
                Some("Looking.".into()),
                vec![call("c.1", "f", r#"{"a":1}"#), call("c2", "g", "{\"cut")],
            ),
            Message::tool("c.1", "one"),
            Message::tool("c2", "two"),
            Message::user("and now?"),
        ];
        let wire = wire_messages(&messages);
        assert_eq!(wire.len(), 3, "{wire:#?}");
        assert_eq!(wire[1]["role"], "assistant");
        assert_eq!(wire[1]["content"][1]["id"], "c_1");
        assert_eq!(wire[1]["content"][1]["input"], json!({"a": 1}));
        assert_eq!(wire[1]["content"][2]["input"], json!({}));
        assert_eq!(wire[2]["role"], "user");
        let blocks = wire[2]["content"].as_array().expect("blocks");
        assert_eq!(blocks[0]["tool_use_id"], "c_1");
        assert_eq!(blocks[1]["tool_use_id"], "c2");
        assert_eq!(blocks[2], json!({"type": "text", "text": "and now?"}));
    }

    #[test]
    fn the_body_caches_the_system_block_and_the_tools_and_defaults_max_tokens() {
        let request = Request {
            model: "claude".into(),
            system: Some("Be brief.".into()),
            messages: vec![Message::user("hi")],
            tools: vec![
                ToolSpec {
                    name: "a".into(),
                    description: "A".into(),
                    parameters: json!({"type": "object"}),
                },
                ToolSpec {
                    name: "b".into(),
                    description: "B".into(),
                    parameters: json!({"type": "object"}),
                },
            ],
            sampling: Sampling {
                top_k: Some(5),
                seed: Some(1),
                stop: vec!["END".into()],
                ..Sampling::default()
            },
            stream: true,
        };
        let body = request_body(&request, 777);
        assert_eq!(body["max_tokens"], 777);
        assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
        assert!(body["tools"][0].get("cache_control").is_none());
        assert_eq!(body["tools"][1]["cache_control"]["type"], "ephemeral");
        assert_eq!(body["tools"][1]["input_schema"], json!({"type": "object"}));
        assert_eq!(body["top_k"], 5);
        assert_eq!(body["stop_sequences"], json!(["END"]));
        assert!(body.get("seed").is_none());
    }

    #[test]
    fn usage_of_later_events_keeps_the_cache_counts_of_message_start() {
        let mut usage = None;
        merge_usage(
            &mut usage,
            &json!({"input_tokens": 10, "cache_read_input_tokens": 300,
                    "cache_creation_input_tokens": 20, "output_tokens": 1}),
        );
        merge_usage(
            &mut usage,
            &json!({"input_tokens": 10, "output_tokens": 42}),
        );
        assert_eq!(
            usage,
            Some(Usage {
                prompt_tokens: 330,
                completion_tokens: 42,
                cache_read_tokens: Some(300),
                cache_write_tokens: Some(20),
            })
        );
    }

    #[test]
    fn ids_and_names_of_other_providers_are_made_acceptable() {
        assert_eq!(wire_id("functions.get:0"), "functions_get_0");
        assert_eq!(wire_id(""), "call");
        assert_eq!(wire_name(&"n".repeat(100)).len(), 64);
        assert_eq!(wire_name("mcp.invoke"), "mcp_invoke");
    }
}
