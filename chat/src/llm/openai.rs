//! The `openai` wire protocol (`host.md` §8.1–§8.4): any OpenAI-compatible chat-completions
//! endpoint.
//!
//! One request is `POST {base_url}/chat/completions`; a streamed reply is read as server-sent
//! events (the linear parser of [`crate::llm::sse`] over reqwest's body chunks) and assembled
//! into a [`Reply`] while its text and tool calls are reported as [`Delta`]s. A non-streamed
//! reply (`stream: false`, or a server that answers a stream request with one JSON object)
//! reports its whole text as one `Delta::Text`, then one `Delta::ToolCall` per call, once it is
//! read. An HTML page answered with HTTP 200 (a base_url that points at a web site) fails with a
//! message naming its content type and URL.
//!
//! Timeouts run on tokio's timer: the runtime that polls [`OpenAi::complete`] needs time enabled.
//!
//! Bounds, so a faulty or hostile endpoint costs a clear error and never exhausts memory or
//! time:
//! - a reply's text and tool-call arguments together may be at most [`MAX_REPLY_BYTES`]
//!   (16 MiB; [`OpenAi::with_max_reply_bytes`] changes it): past it the request fails. A 10 MB
//!   reply is therefore accepted whole;
//! - one server-sent event may hold at most that plus 1 MiB of framing, counted as its bytes
//!   arrive (before its line is complete or parsed); a non-streamed reply's body may be at most
//!   twice the reply bound plus 1 MiB (JSON escapes and framing);
//! - an error response's body is read up to 1 MiB, and the provider's message taken from it is
//!   cut to about 300 characters on one line, without control characters;
//! - no bytes for `stream_idle_timeout_secs` while a streamed reply is awaited or read fails the
//!   request; the whole request, retries and the reading of every body included, is bounded by
//!   `request_timeout_secs`, checked after every chunk received.
//!
//! HTTP 429 and 503 are retried up to 3 times, honouring `Retry-After` (seconds; 1 s, 2 s, 4 s
//! without it). Both come before any output, so nothing seen by the person is ever sent twice
//! (§8.3). A wait longer than 30 s, or longer than what is left of `request_timeout_secs`, is not
//! waited for: the request fails at once with the status and the server's `Retry-After`.
//!
//! Redirects are followed only within the base URL's origin (scheme, host and port): anything
//! else would send the API key, the configured headers and the conversation to a server nobody
//! configured. Every value of [`OpenAiConfig::secrets`] and the API key are replaced by
//! `[redacted]` in every error, since providers quote a rejected key back.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::llm::sse;
use crate::llm::{Delta, LlmError, Provider, Reply, ReplyFuture, Request, Usage};
use crate::message::{Message, Role, ToolCall};

/// How many bytes of text and tool-call arguments one reply may carry.
pub const MAX_REPLY_BYTES: usize = 16 << 20;

/// How much of an error response's body is read.
const MAX_ERROR_BODY: usize = 1 << 20;

/// Retries of HTTP 429 and 503.
const MAX_RETRIES: u32 = 3;

/// The longest `Retry-After` honoured.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(30);

/// How many characters of the provider's own message are shown.
const PROVIDER_MESSAGE_CHARS: usize = 300;

/// Request fields `--extra` never replaces (the host refuses them too: §7.5.3).
const RESERVED_FIELDS: [&str; 5] = ["model", "messages", "tools", "stream", "stream_options"];

/// What replaces a secret value in an error.
const REDACTED: &str = "[redacted]";

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
    config: OpenAiConfig,
    client: reqwest::Client,
    /// `{base_url}/chat/completions`.
    url: String,
    max_reply_bytes: usize,
    /// The API key and the configured secrets, longest first (so a secret that contains
    /// another is replaced whole).
    secrets: Vec<String>,
}

/// A redirect to another origin, refused.
#[derive(Debug)]
struct CrossOrigin {
    from: String,
    to: String,
}

impl std::fmt::Display for CrossOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} redirected to {}", self.from, self.to)
    }
}

impl std::error::Error for CrossOrigin {}

/// Scheme, host and port: what a redirect may not change.
fn origin(url: &reqwest::Url) -> (&str, Option<&str>, Option<u16>) {
    (url.scheme(), url.host_str(), url.port_or_known_default())
}

/// Why a 429 or 503 was not retried.
enum GaveUp {
    /// The retries were used up.
    Retries(u32),
    /// The server asked for a wait katari does not make.
    Wait { seconds: u64, asked: bool },
}

impl OpenAi {
    /// A client for `config`, holding one connection pool with its connect timeout.
    pub fn new(config: OpenAiConfig) -> Result<OpenAi, LlmError> {
        // Only redirects within the origin are followed: the key, the headers and the whole
        // conversation go with a redirected request (307 and 308 keep the body).
        let mut builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(config.connect_timeout_secs))
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let previous = attempt.previous();
                let (Some(first), Some(last)) = (previous.first(), previous.last()) else {
                    return attempt.follow();
                };
                if origin(attempt.url()) != origin(first) {
                    let refused = CrossOrigin {
                        from: last.to_string(),
                        to: attempt.url().to_string(),
                    };
                    attempt.error(refused)
                } else if previous.len() > 10 {
                    attempt.error("too many redirects")
                } else {
                    attempt.follow()
                }
            }));
        if is_plain_http(&config.base_url) {
            // A local server (llama.cpp, Ollama) needs no TLS: building the verifier would read
            // and parse the whole system CA store, about 3 ms of every `katari chat -m`
            // (docs/benchmarks.md, "Chat turn"). Redirects stay on http:// (another scheme is
            // another origin), so no certificate is ever needed.
            builder = builder.tls_certs_only([]);
        }
        let mut secrets: Vec<String> = config
            .api_key
            .iter()
            .chain(&config.secrets)
            .filter(|s| !s.is_empty())
            .cloned()
            .collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        let client = builder.build().map_err(|e| LlmError {
            message: redact(
                &format!(
                    "LLM '{}': the HTTP client could not be set up ({}).",
                    config.name,
                    error_chain(&e)
                ),
                &secrets,
            )
            .into_owned(),
            after_output: false,
        })?;
        let url = format!(
            "{}/chat/completions",
            config
                .base_url
                .strip_suffix('/')
                .unwrap_or(&config.base_url)
        );
        Ok(OpenAi {
            config,
            client,
            url,
            max_reply_bytes: MAX_REPLY_BYTES,
            secrets,
        })
    }

    /// Changes the bound on a reply's text and arguments (default [`MAX_REPLY_BYTES`]).
    pub fn with_max_reply_bytes(mut self, bytes: usize) -> OpenAi {
        self.max_reply_bytes = bytes;
        self
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// An error for the person, every secret value redacted.
    fn error(&self, message: String) -> LlmError {
        LlmError {
            message: redact(&message, &self.secrets).into_owned(),
            after_output: false,
        }
    }

    /// Text from the server as one short line, secrets redacted before it is cut (a cut could
    /// leave part of a key).
    fn own(&self, text: &str) -> String {
        one_line(&redact(text, &self.secrets))
    }

    fn name(&self) -> &str {
        &self.config.name
    }

    /// The most bytes one server-sent event may hold.
    fn event_limit(&self) -> usize {
        self.max_reply_bytes.saturating_add(1 << 20)
    }

    /// One request with its retries; `report` sees every delta.
    async fn run(
        &self,
        request: &Request,
        report: &mut (dyn FnMut(Delta) + Send),
        deadline: Instant,
    ) -> Result<Reply, LlmError> {
        let body = request_body(request);
        let mut retries = 0;
        loop {
            let response = self.send(&body, request.stream).await?;
            let status = response.status().as_u16();
            if response.status().is_success() {
                if is_html(&response) {
                    return Err(self.html_error(response, deadline).await);
                }
                return if request.stream && !is_json(&response) {
                    self.read_stream(response, report, deadline).await
                } else {
                    self.read_whole(response, report, deadline).await
                };
            }
            if status == 429 || status == 503 {
                if retries == MAX_RETRIES {
                    let gave_up = GaveUp::Retries(retries);
                    return Err(self
                        .status_error(response, request, gave_up, deadline)
                        .await);
                }
                let asked = retry_after(&response);
                let wait = asked.unwrap_or(Duration::from_secs(1 << retries));
                let left = deadline.saturating_duration_since(Instant::now());
                if wait > MAX_RETRY_WAIT || wait >= left {
                    let gave_up = GaveUp::Wait {
                        seconds: wait.as_secs(),
                        asked: asked.is_some(),
                    };
                    return Err(self
                        .status_error(response, request, gave_up, deadline)
                        .await);
                }
                drop(response);
                tokio::time::sleep(wait).await;
                retries += 1;
                continue;
            }
            let gave_up = GaveUp::Retries(retries);
            return Err(self
                .status_error(response, request, gave_up, deadline)
                .await);
        }
    }

    /// Sends the body; waiting for a streamed reply's headers counts as silence (§4.2).
    async fn send(&self, body: &Value, stream: bool) -> Result<reqwest::Response, LlmError> {
        let mut builder = self.client.post(&self.url).json(body).header(
            reqwest::header::ACCEPT,
            if stream {
                "text/event-stream"
            } else {
                "application/json"
            },
        );
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key);
        }
        for (name, value) in &self.config.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let sent = if stream {
            let idle = Duration::from_secs(self.config.stream_idle_timeout_secs);
            match tokio::time::timeout(idle, builder.send()).await {
                Ok(sent) => sent,
                Err(_) => return Err(self.idle_error()),
            }
        } else {
            builder.send().await
        };
        sent.map_err(|e| self.send_error(&e))
    }

    fn send_error(&self, e: &reqwest::Error) -> LlmError {
        let name = self.name();
        // The URL that failed: after a redirect within the origin, the one redirected to.
        let url = e
            .url()
            .map_or_else(|| self.url.clone(), ToString::to_string);
        if let Some(refused) = find_cause::<CrossOrigin>(e) {
            return self.error(format!(
                "LLM '{name}': {} redirected the request to {}, another origin; katari follows redirects only within the base URL's scheme, host and port, so the API key and the conversation were not sent there. If you trust that address, set base_url in [llm.{name}] to it.",
                refused.from, refused.to
            ));
        }
        if e.is_builder() {
            return self.error(format!(
                "LLM '{name}': the request could not be built ({}). Check base_url and headers in [llm.{name}].",
                error_chain(e)
            ));
        }
        if e.is_connect() {
            let cause = if e.is_timeout() {
                format!(
                    "no connection within {} s (connect_timeout_secs)",
                    self.config.connect_timeout_secs
                )
            } else {
                innermost(e)
            };
            return self.error(format!(
                "Could not connect to LLM '{name}' at {url} ({cause}). Check that the server runs and base_url in [llm.{name}]."
            ));
        }
        self.error(format!(
            "LLM '{name}': the request to {url} failed ({}).",
            error_chain(e)
        ))
    }

    fn idle_error(&self) -> LlmError {
        let name = self.name();
        self.error(format!(
            "LLM '{name}' sent nothing for {} s while streaming its reply. Raise stream_idle_timeout_secs in [llm.{name}] if the model needs longer.",
            self.config.stream_idle_timeout_secs
        ))
    }

    fn timeout_error(&self) -> LlmError {
        let name = self.name();
        self.error(format!(
            "LLM '{name}' did not finish within {} s. Raise request_timeout_secs in [llm.{name}] if the model needs longer.",
            self.config.request_timeout_secs
        ))
    }

    fn too_large_error(&self) -> LlmError {
        self.error(format!(
            "LLM '{}' sent a reply larger than {}; the request was stopped.",
            self.name(),
            size(self.max_reply_bytes)
        ))
    }

    /// The next chunk of a body: `request_timeout_secs` bounds every wait and is checked after
    /// every chunk (a server that never pauses is stopped too); `idle`, when given, bounds the
    /// silence before it.
    async fn next_chunk(
        &self,
        response: &mut reqwest::Response,
        idle: Option<Duration>,
        deadline: Instant,
    ) -> Result<Option<impl std::ops::Deref<Target = [u8]> + use<>>, LlmError> {
        let until = idle.map_or(deadline, |idle| deadline.min(after(idle)));
        let chunk = match tokio::time::timeout_at(until, response.chunk()).await {
            Ok(Ok(chunk)) => chunk,
            Ok(Err(e)) => return Err(self.broken_error(&e)),
            Err(_) if Instant::now() >= deadline => return Err(self.timeout_error()),
            Err(_) => return Err(self.idle_error()),
        };
        if chunk.is_some() && Instant::now() >= deadline {
            return Err(self.timeout_error());
        }
        Ok(chunk)
    }

    /// Up to `limit` bytes of a body, for an error message: what arrived before a failure,
    /// silence or the deadline.
    async fn body_prefix(
        &self,
        response: &mut reqwest::Response,
        limit: usize,
        deadline: Instant,
    ) -> Vec<u8> {
        let mut body = Vec::new();
        while let Ok(Some(chunk)) = self.next_chunk(response, None, deadline).await {
            body.extend_from_slice(&chunk);
            if body.len() >= limit {
                body.truncate(limit);
                break;
            }
        }
        body
    }

    /// The message of a failed status (§8.4), with the provider's own message on the next line.
    async fn status_error(
        &self,
        mut response: reqwest::Response,
        request: &Request,
        gave_up: GaveUp,
        deadline: Instant,
    ) -> LlmError {
        let status = response.status().as_u16();
        let name = self.name();
        let url = response.url().to_string();
        let timeout = self.config.request_timeout_secs;
        let head = match (status, gave_up) {
            (401 | 403, _) => format!(
                "LLM '{name}' rejected the API key (HTTP {status}). Check api_key_env or api_key in [llm.{name}]."
            ),
            (404, _) => format!(
                "LLM '{name}' has no such endpoint or model (HTTP 404): POST {url} with model '{}'. Check base_url and model in [llm.{name}].",
                request.model
            ),
            (429, GaveUp::Retries(retries)) => format!(
                "LLM '{name}' is limiting requests (HTTP 429) and still was after {retries} retries. Wait a moment and try again."
            ),
            (503, GaveUp::Retries(retries)) => format!(
                "LLM '{name}' is unavailable (HTTP 503) and still was after {retries} retries. Check that the server is up and try again."
            ),
            (_, GaveUp::Wait { seconds, asked }) => {
                let what = if status == 429 {
                    "is limiting requests (HTTP 429)"
                } else {
                    "is unavailable (HTTP 503)"
                };
                let wait = if asked {
                    format!("asks to retry after {seconds} s (Retry-After)")
                } else {
                    format!("would be retried after {seconds} s")
                };
                if Duration::from_secs(seconds) > MAX_RETRY_WAIT {
                    format!(
                        "LLM '{name}' {what} and {wait}; katari waits at most {} s. Try again later.",
                        MAX_RETRY_WAIT.as_secs()
                    )
                } else {
                    format!(
                        "LLM '{name}' {what} and {wait}, past the request's limit of {timeout} s. Try again later, or raise request_timeout_secs in [llm.{name}]."
                    )
                }
            }
            _ => format!("LLM '{name}' failed with HTTP {status}."),
        };
        let body = self
            .body_prefix(&mut response, MAX_ERROR_BODY, deadline)
            .await;
        match provider_message(&body) {
            Some(own) => self.error(format!("{head}\n{}", self.own(&own))),
            None => self.error(head),
        }
    }

    /// A successful status whose body is a web page: base_url points at a site, not an API.
    async fn html_error(&self, mut response: reqwest::Response, deadline: Instant) -> LlmError {
        let name = self.name();
        let url = response.url().to_string();
        let content_type = content_type(&response).unwrap_or_default().to_string();
        let head = format!(
            "LLM '{name}' answered {url} with content-type {content_type}, a web page rather than an event stream or JSON. Check base_url in [llm.{name}]: it should be the API's address (often ending in /v1)."
        );
        let body = self
            .body_prefix(&mut response, MAX_ERROR_BODY, deadline)
            .await;
        match provider_message(&body) {
            Some(own) => self.error(format!("{head}\n{}", self.own(&own))),
            None => self.error(head),
        }
    }

    /// A non-streamed reply (`stream: false`, or a server that answered a stream request with
    /// one JSON object): read whole, then reported.
    async fn read_whole(
        &self,
        mut response: reqwest::Response,
        report: &mut (dyn FnMut(Delta) + Send),
        deadline: Instant,
    ) -> Result<Reply, LlmError> {
        let limit = self
            .max_reply_bytes
            .saturating_mul(2)
            .saturating_add(1 << 20);
        let url = response.url().to_string();
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk(&mut response, None, deadline).await? {
            body.extend_from_slice(&chunk);
            if body.len() > limit {
                return Err(self.too_large_error());
            }
        }
        let value: Value = serde_json::from_slice(&body).map_err(|e| {
            self.error(format!(
                "LLM '{}' sent a reply from {url} that is not valid JSON ({e}).\n{}",
                self.name(),
                self.own(&String::from_utf8_lossy(&body))
            ))
        })?;
        if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
            return Err(self.reported_error(error));
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
        if total > self.max_reply_bytes {
            return Err(self.too_large_error());
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
        mut response: reqwest::Response,
        report: &mut (dyn FnMut(Delta) + Send),
        deadline: Instant,
    ) -> Result<Reply, LlmError> {
        let idle = Duration::from_secs(self.config.stream_idle_timeout_secs);
        let url = response.url().to_string();
        let content_type = content_type(&response).map(str::to_string);
        let mut parser = sse::Parser::new(self.event_limit());
        let mut events = Vec::new();
        let mut seen = false;
        let mut assembly = Assembly::default();
        while let Some(chunk) = self.next_chunk(&mut response, Some(idle), deadline).await? {
            // The parser counts the bytes of the event being received as they arrive, so an
            // oversized event fails here, long before its line (or the body) ends.
            parser
                .feed(&chunk, &mut events)
                .map_err(|sse::TooLarge| self.too_large_error())?;
            for event in events.drain(..) {
                seen = true;
                if event.data.trim() == "[DONE]" {
                    return Ok(assembly.finish());
                }
                let chunk: Value = serde_json::from_str(&event.data).map_err(|e| {
                    self.error(format!(
                        "LLM '{}' sent a reply chunk that is not valid JSON ({e}).\n{}",
                        self.name(),
                        self.own(&event.data)
                    ))
                })?;
                if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
                    return Err(self.reported_error(error));
                }
                assembly.add(&chunk, report);
                if assembly.bytes > self.max_reply_bytes {
                    return Err(self.too_large_error());
                }
            }
        }
        let name = self.name();
        if !seen && let Some(other) = content_type.filter(|t| !t.starts_with("text/event-stream")) {
            return Err(self.error(format!(
                "LLM '{name}' answered {url} with content-type {other} and no server-sent events: not a chat-completions stream. Check base_url in [llm.{name}]."
            )));
        }
        if assembly.finish_reason.is_none() {
            return Err(self.error(format!(
                "LLM '{name}' ended its reply stream before finishing it (no [DONE] and no finish reason)."
            )));
        }
        Ok(assembly.finish())
    }

    fn broken_error(&self, e: &reqwest::Error) -> LlmError {
        self.error(format!(
            "LLM '{}': the connection broke during the reply ({}).",
            self.name(),
            error_chain(e)
        ))
    }

    /// An `error` object inside a successful response.
    fn reported_error(&self, error: &Value) -> LlmError {
        let head = format!(
            "LLM '{}' reported an error instead of a reply.",
            self.name()
        );
        match error_message(&json!({ "error": error })) {
            Some(own) => self.error(format!("{head}\n{}", self.own(&own))),
            None => self.error(head),
        }
    }
}

impl Provider for OpenAi {
    fn complete<'a>(
        &'a self,
        request: &'a Request,
        on_delta: &'a mut (dyn FnMut(Delta) + Send),
    ) -> ReplyFuture<'a> {
        Box::pin(async move {
            let output = AtomicBool::new(false);
            let mut report = |delta: Delta| {
                output.store(true, Ordering::Relaxed);
                on_delta(delta);
            };
            let deadline = after(Duration::from_secs(self.config.request_timeout_secs));
            // Reading bodies checks the deadline itself; this bounds connecting, sending and
            // waiting for headers as well.
            let result =
                match tokio::time::timeout_at(deadline, self.run(request, &mut report, deadline))
                    .await
                {
                    Ok(result) => result,
                    Err(_) => Err(self.timeout_error()),
                };
            result.map_err(|mut e| {
                e.after_output = output.load(Ordering::Relaxed);
                e
            })
        })
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
    })
}

/// The instant `wait` from now; a wait too long for the clock is a year (configured timeouts
/// are not bounded above, and `Instant + Duration` panics on overflow).
fn after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

/// The response's content type, lower-cased parameters and all (`text/html; charset=utf-8`).
fn content_type(response: &reqwest::Response) -> Option<&str> {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

fn is_json(response: &reqwest::Response) -> bool {
    content_type(response).is_some_and(|v| v.to_ascii_lowercase().starts_with("application/json"))
}

fn is_html(response: &reqwest::Response) -> bool {
    content_type(response).is_some_and(|v| {
        let v = v.to_ascii_lowercase();
        v.starts_with("text/html") || v.starts_with("application/xhtml")
    })
}

/// The first cause of type `E` in an error's chain.
fn find_cause<'e, E: std::error::Error + 'static>(
    error: &'e (dyn std::error::Error + 'static),
) -> Option<&'e E> {
    let mut source = Some(error);
    while let Some(cause) = source {
        if let Some(found) = cause.downcast_ref::<E>() {
            return Some(found);
        }
        source = cause.source();
    }
    None
}

/// `text` with every secret value replaced by [`REDACTED`] (`secrets` longest first).
fn redact<'t>(text: &'t str, secrets: &[String]) -> Cow<'t, str> {
    let mut out = Cow::Borrowed(text);
    for secret in secrets {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
        }
    }
    out
}

/// `Retry-After` in seconds (an HTTP date is not honoured: the default backoff applies).
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?;
    let seconds: u64 = value.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(seconds))
}

/// The provider's own message from an error body: the JSON error's message, or the body's text
/// (an HTML page reduced to its title or text), not yet cut to one line: secrets are redacted
/// first ([`OpenAi::own`]).
fn provider_message(body: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let own = match serde_json::from_str::<Value>(text) {
        Ok(value) => error_message(&value).unwrap_or_else(|| value.to_string()),
        Err(_) if looks_like_html(text) => html_text(text),
        Err(_) => text.to_string(),
    };
    (!own.trim().is_empty()).then_some(own)
}

/// `error.message`, `error` as a string, `message` or `detail`.
fn error_message(value: &Value) -> Option<String> {
    let error = &value["error"];
    [
        &error["message"],
        error,
        &value["message"],
        &value["detail"],
    ]
    .into_iter()
    .find_map(|v| v.as_str().filter(|s| !s.trim().is_empty()))
    .map(str::to_string)
}

fn looks_like_html(text: &str) -> bool {
    let start: String = text.chars().take(100).collect::<String>().to_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html") || start.contains("<body")
}

/// An HTML page as a short plain line: its title when it has one, else its text without tags,
/// scripts and styles.
fn html_text(html: &str) -> String {
    // ASCII lower case keeps byte offsets, so positions found in `lower` slice `html`.
    let lower = html.to_ascii_lowercase();
    if let Some(start) = lower.find("<title")
        && let Some(open_end) = lower[start..].find('>')
    {
        let from = start + open_end + 1;
        if let Some(len) = lower[from..].find("</title") {
            let title = decode_entities(&html[from..from + len]);
            if !title.trim().is_empty() {
                return title;
            }
        }
    }
    let mut text = String::new();
    let mut at = 0;
    while let Some(open) = lower[at..].find('<').map(|i| at + i) {
        text.push_str(&html[at..open]);
        text.push(' ');
        let mut from = open;
        for (tag, close) in [("<script", "</script"), ("<style", "</style")] {
            if lower[open..].starts_with(tag)
                && let Some(end) = lower[open..].find(close)
            {
                from = open + end;
            }
        }
        at = lower[from..]
            .find('>')
            .map_or(html.len(), |close| from + close + 1);
    }
    text.push_str(&html[at..]);
    decode_entities(&text)
}

fn decode_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

/// One line for the person: whitespace runs become one space, cut to about 300 characters.
/// Other control characters stay: the host's one sanitiser (`host.md` §2.4) removes escape
/// sequences whole where the text reaches a terminal, which it cannot do once their `ESC` is gone.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for word in text.split(|c: char| c.is_whitespace()) {
        if word.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars == PROVIDER_MESSAGE_CHARS {
                out.push('…');
                return out;
            }
            out.push(c);
            chars += 1;
        }
    }
    out
}

/// Whether `base_url` is a plain `http://` address (no TLS needed).
fn is_plain_http(base_url: &str) -> bool {
    base_url
        .get(..7)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
}

/// An error and its causes, each once.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// The deepest cause of an error, which says what happened ("Connection refused").
fn innermost(error: &dyn std::error::Error) -> String {
    let mut last = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        last = cause.to_string();
        source = cause.source();
    }
    last
}

fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the person sees of an error body.
    fn shown(body: &[u8]) -> Option<String> {
        provider_message(body).map(|own| one_line(&own))
    }

    #[test]
    fn provider_messages_are_one_short_clean_line() {
        let json = br#"{"error": {"message": "Incorrect API key\nprovided", "type": "auth"}}"#;
        assert_eq!(shown(json).as_deref(), Some("Incorrect API key provided"));
        assert_eq!(
            shown(br#"{"detail": "Not Found"}"#).as_deref(),
            Some("Not Found")
        );
        let html = b"<html><head><title>502 Bad &amp; Gateway</title></head><body><h1>x</h1></body></html>";
        assert_eq!(shown(html).as_deref(), Some("502 Bad & Gateway"));
        let untitled = b"<!DOCTYPE html><html><style>p{}</style><body><p>Upstream\r\n down</p><script>x()</script></body></html>";
        assert_eq!(shown(untitled).as_deref(), Some("Upstream down"));
        assert_eq!(
            shown(b"bad \x1b[31mred\x07 thing").as_deref(),
            Some("bad \x1b[31mred\x07 thing")
        );
        let long = "x".repeat(1000);
        let cut = shown(long.as_bytes()).unwrap_or_default();
        assert_eq!(cut.chars().count(), PROVIDER_MESSAGE_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(shown(b"  \n "), None);
    }

    #[test]
    fn secrets_are_redacted_whole_before_a_message_is_cut() {
        let secrets = vec!["sk-long-secret-key".to_string(), "sk-long".to_string()];
        assert_eq!(
            redact("key sk-long-secret-key and sk-long.", &secrets),
            "key [redacted] and [redacted]."
        );
        assert!(matches!(redact("nothing here", &secrets), Cow::Borrowed(_)));
        // A key that straddles the 300-character cut leaves no prefix behind.
        let text = format!(
            "{}sk-long-secret-key",
            "x".repeat(PROVIDER_MESSAGE_CHARS - 4)
        );
        let shown = one_line(&redact(&text, &secrets));
        assert!(!shown.contains("sk-l"), "{shown}");
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(size(16 << 20), "16 MiB");
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
