//! The `openai` wire protocol (`host.md` §8.1–§8.4): any OpenAI-compatible chat-completions
//! endpoint.
//!
//! One request is `POST {base_url}/chat/completions`; a streamed reply is read as server-sent
//! events (the linear parser of [`crate::llm::sse`] over reqwest's body chunks) and assembled
//! into a [`Reply`] while its text and tool calls are reported as [`Delta`]s. A non-streamed
//! reply (`stream: false`, or a server that answers a stream request with one JSON object)
//! reports its whole text as one `Delta::Text`, then one `Delta::ToolCall` per call, once it is
//! read.
//!
//! The transport (redirects within the origin only, timeouts while reading, the bounds on a
//! reply, retries of HTTP 429 and 503 honouring `Retry-After`, secrets redacted from every
//! error) is `llm::http`'s, shared with the `anthropic` provider. A 10 MB reply is
//! accepted whole.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::llm::http::{self, Endpoint, EndpointConfig};
use crate::llm::{Delta, LlmError, Provider, Reply, ReplyFuture, Request, Usage};
use crate::message::{Message, Role, ToolCall};

pub use crate::llm::http::MAX_REPLY_BYTES;

/// Request fields `--extra` never replaces (the host refuses them too: §7.5.3).
const RESERVED_FIELDS: [&str; 5] = ["model", "messages", "tools", "stream", "stream_options"];

/// How to reach one configured `[llm.NAME]` of kind `openai`.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenAiConfig {
    /// The llm's name in the configuration, used in messages (`LLM 'NAME' …`).
    pub name: String,
    /// For example `http://127.0.0.1:8080/v1`; the request goes to `{base_url}/chat/completions`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer KEY` when set; never shown in an error.
    pub api_key: Option<String>,
    /// Extra headers, secrets already resolved.
    pub headers: Vec<(String, String)>,
    /// Values never shown in an error besides the API key: the header values that came from
    /// `secrets.toml`.
    pub secrets: Vec<String>,
    pub connect_timeout_secs: u64,
    pub request_timeout_secs: u64,
    pub stream_idle_timeout_secs: u64,
}

/// A client of one OpenAI-compatible endpoint.
#[derive(Clone, Debug)]
pub struct OpenAi {
    http: Endpoint,
}

impl OpenAi {
    /// A client for `config`, holding one connection pool with its connect timeout.
    pub fn new(config: OpenAiConfig) -> Result<OpenAi, LlmError> {
        let mut headers = Vec::new();
        if let Some(key) = &config.api_key {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        headers.extend(config.headers.iter().cloned());
        let http = Endpoint::new(EndpointConfig {
            url: format!(
                "{}/chat/completions",
                config
                    .base_url
                    .strip_suffix('/')
                    .unwrap_or(&config.base_url)
            ),
            name: config.name,
            headers,
            secrets: config.api_key.into_iter().chain(config.secrets).collect(),
            connect_timeout_secs: config.connect_timeout_secs,
            request_timeout_secs: config.request_timeout_secs,
            stream_idle_timeout_secs: config.stream_idle_timeout_secs,
            retry: &[429, 503],
        })?;
        Ok(OpenAi { http })
    }

    /// Changes the bound on a reply's text and arguments (default [`MAX_REPLY_BYTES`]).
    pub fn with_max_reply_bytes(mut self, bytes: usize) -> OpenAi {
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

    /// A non-streamed reply (`stream: false`, or a server that answered a stream request with
    /// one JSON object): read whole, then reported.
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
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            return Err(self.http.reported_error(error));
        }
        let choice = &value["choices"][0];
        let message = &choice["message"];
        let text = content_text(&message["content"]);
        let mut tool_calls = Vec::new();
        for (i, call) in message["tool_calls"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let id = call["id"]
                .as_str()
                .filter(|id| !id.is_empty())
                .map_or_else(|| format!("call_{i}"), str::to_string);
            tool_calls.push(ToolCall {
                id,
                name: call["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                arguments: arguments_text(&call["function"]["arguments"]),
            });
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
        Ok(Reply {
            text: (!text.is_empty()).then_some(text),
            tool_calls,
            finish_reason: choice["finish_reason"].as_str().map(str::to_string),
            usage: usage(&value["usage"]),
        })
    }

    /// A streamed reply: server-sent events until `data: [DONE]` or the end of the body.
    async fn read_stream(
        &self,
        response: reqwest::Response,
        report: &mut (dyn FnMut(Delta) + Send),
        deadline: Instant,
    ) -> Result<Reply, LlmError> {
        let mut assembly = Assembly::default();
        let done = self
            .http
            .read_events(response, deadline, "chat-completions", |event| {
                if event.data.trim() == "[DONE]" {
                    return Ok(true);
                }
                let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
                    self.http.error(format!(
                        "LLM '{}' sent a reply chunk that is not valid JSON ({e}).\n{}",
                        self.name(),
                        self.http.own(&event.data)
                    ))
                })?;
                if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
                    return Err(self.http.reported_error(error));
                }
                assembly.add(&chunk, report);
                if assembly.bytes > self.http.max_reply_bytes {
                    return Err(self.http.too_large_error());
                }
                Ok(false)
            })
            .await?;
        if !done && assembly.finish_reason.is_none() {
            return Err(self.http.error(format!(
                "LLM '{}' ended its reply stream before finishing it (no [DONE] and no finish reason).",
                self.name()
            )));
        }
        Ok(assembly.finish())
    }
}

impl Provider for OpenAi {
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        on_delta: &'a mut (dyn FnMut(Delta) + Send),
    ) -> ReplyFuture<'a> {
        http::complete(self, request, on_delta)
    }
}

impl http::Exchange for OpenAi {
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
        let body = request_body(request);
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

/// A reply being assembled from stream chunks.
#[derive(Default)]
struct Assembly {
    text: String,
    calls: Vec<PartialCall>,
    /// For each stream index, the call it is currently building (a position in `calls`).
    by_index: HashMap<u64, usize>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// Text and argument bytes so far.
    bytes: usize,
}

struct PartialCall {
    id: String,
    /// The id was made up because the stream had not sent one (yet).
    made_up_id: bool,
    name: String,
    arguments: String,
    announced: bool,
}

impl Assembly {
    fn add(&mut self, chunk: &Value, report: &mut (dyn FnMut(Delta) + Send)) {
        if let Some(usage) = usage(&chunk["usage"]) {
            self.usage = Some(usage);
        }
        // Only the first choice counts (requests never ask for more than one).
        let Some(choice) = chunk["choices"].as_array().and_then(|c| {
            c.iter()
                .find(|c| c["index"].as_u64().unwrap_or(0) == 0)
                .or(c.first())
        }) else {
            return;
        };
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            self.text.push_str(text);
            self.bytes += text.len();
            report(Delta::Text(text.to_string()));
        }
        for (position, call) in delta["tool_calls"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            self.add_call(position, call, report);
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish_reason = Some(reason.to_string());
        }
    }

    /// One tool-call delta: by `index` (its position when the index is missing), a new `id` at
    /// a used index starting a new call.
    fn add_call(&mut self, position: usize, delta: &Value, report: &mut (dyn FnMut(Delta) + Send)) {
        let index = delta["index"].as_u64().unwrap_or(position as u64);
        let id = delta["id"].as_str().filter(|id| !id.is_empty());
        let current = self.by_index.get(&index).copied();
        let at = match (current, id) {
            (Some(at), Some(id)) if self.calls[at].made_up_id && self.calls[at].name.is_empty() => {
                self.calls[at].id = id.to_string();
                self.calls[at].made_up_id = false;
                at
            }
            (Some(at), Some(id)) if self.calls[at].id != id => self.start_call(index, Some(id)),
            (Some(at), _) => at,
            (None, id) => self.start_call(index, id),
        };
        let call = &mut self.calls[at];
        if let Some(name) = delta["function"]["name"].as_str().filter(|n| !n.is_empty()) {
            // Some servers repeat the name in every chunk; others could split it.
            if call.name != name {
                call.name.push_str(name);
            }
        }
        let arguments = &delta["function"]["arguments"];
        if !arguments.is_null() {
            let piece = arguments_text(arguments);
            self.bytes += piece.len();
            call.arguments.push_str(&piece);
        }
        if !call.announced && !call.name.is_empty() {
            call.announced = true;
            report(Delta::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
            });
        }
    }

    fn start_call(&mut self, index: u64, id: Option<&str>) -> usize {
        let at = self.calls.len();
        self.calls.push(PartialCall {
            id: id.map_or_else(|| format!("call_{at}"), str::to_string),
            made_up_id: id.is_none(),
            name: String::new(),
            arguments: String::new(),
            announced: false,
        });
        self.by_index.insert(index, at);
        at
    }

    fn finish(self) -> Reply {
        Reply {
            text: (!self.text.is_empty()).then_some(self.text),
            tool_calls: self
                .calls
                .into_iter()
                .map(|c| ToolCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            finish_reason: self.finish_reason,
            usage: self.usage,
        }
    }
}

/// The JSON body of a request (§8.1, §7.5): never `top_k` (§7.5.4); `--extra` fields at the
/// top level.
fn request_body(request: &Request) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(json!({ "role": "system", "content": system }));
    }
    messages.extend(request.messages.iter().map(wire_message));
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                json!({ "type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let sampling = &request.sampling;
    if let Some(t) = sampling.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = sampling.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(n) = sampling.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    if let Some(seed) = sampling.seed {
        body.insert("seed".into(), json!(seed));
    }
    if !sampling.stop.is_empty() {
        body.insert("stop".into(), json!(sampling.stop));
    }
    for (key, value) in &sampling.extra {
        if !RESERVED_FIELDS.contains(&key.as_str()) {
            body.insert(key.clone(), value.clone());
        }
    }
    body.insert("stream".into(), json!(request.stream));
    if request.stream {
        body.insert("stream_options".into(), json!({ "include_usage": true }));
    }
    Value::Object(body)
}

/// A message in OpenAI's shape.
fn wire_message(message: &Message) -> Value {
    match message.role {
        Role::User => {
            json!({ "role": "user", "content": message.content.as_deref().unwrap_or("") })
        }
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.as_deref().unwrap_or(""),
            "content": message.content.as_deref().unwrap_or(""),
        }),
        Role::Assistant => {
            let mut m = Map::new();
            m.insert("role".into(), json!("assistant"));
            m.insert("content".into(), json!(message.content));
            if !message.tool_calls.is_empty() {
                let calls = message
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({ "id": c.id, "type": "function", "function": {
                            "name": c.name, "arguments": c.arguments,
                        }})
                    })
                    .collect();
                m.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(m)
        }
    }
}

/// A message's `content`: a string, or the text parts of an array of parts.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().or(p.as_str()))
            .collect(),
        _ => String::new(),
    }
}

/// Arguments as text: normally a JSON string; a server that sends an object gets it serialised.
fn arguments_text(arguments: &Value) -> String {
    match arguments {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn usage(value: &Value) -> Option<Usage> {
    value.as_object().map(|u| Usage {
        prompt_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
        completion_tokens: u
            .get("completion_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        cache_read_tokens: value["prompt_tokens_details"]["cached_tokens"].as_u64(),
        cache_write_tokens: None,
    })
}
