//! The HTTP side every provider shares (`host.md` §8.3, §8.4): one POST to one endpoint with its
//! retries, timeouts, bounds and error messages, so each wire protocol only builds its body and
//! reads its reply.
//!
//! Timeouts run on tokio's timer: the runtime that polls a provider needs time enabled.
//!
//! Bounds, so a faulty or hostile endpoint costs a clear error and never exhausts memory or
//! time:
//! - a reply's text and tool-call arguments together may be at most [`MAX_REPLY_BYTES`]
//!   (16 MiB; each provider's `with_max_reply_bytes` changes it): past it the request fails;
//! - one server-sent event may hold at most that plus 1 MiB of framing, counted as its bytes
//!   arrive (before its line is complete or parsed); a non-streamed reply's body may be at most
//!   twice the reply bound plus 1 MiB (JSON escapes and framing);
//! - an error response's body is read up to 1 MiB, and the provider's message taken from it is
//!   cut to about 300 characters on one line;
//! - no bytes for `stream_idle_timeout_secs` while a streamed reply is awaited or read fails the
//!   request; the whole request, retries and the reading of every body included, is bounded by
//!   `request_timeout_secs`, checked after every chunk received.
//!
//! The statuses a provider names as retryable (429 and 503 for OpenAI-compatible endpoints, 429,
//! 503 and 529 for Anthropic) are retried up to 3 times, honouring `Retry-After` (seconds; 1 s,
//! 2 s, 4 s without it). They come before any output, so nothing seen by the person is ever sent
//! twice (§8.3). A wait longer than 30 s, or longer than what is left of `request_timeout_secs`,
//! is not waited for: the request fails at once with the status and the server's `Retry-After`.
//!
//! Redirects are followed only within the URL's origin (scheme, host and port): anything else
//! would send the API key, the configured headers and the conversation to a server nobody
//! configured. Every secret value (the API key and the header values from `secrets.toml`) is
//! replaced by `[redacted]` in every error, since providers quote a rejected key back.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::llm::{Delta, LlmError, Reply, ReplyFuture, Request};

/// How many bytes of text and tool-call arguments one reply may carry.
pub const MAX_REPLY_BYTES: usize = 16 << 20;

/// How much of an error response's body is read.
const MAX_ERROR_BODY: usize = 1 << 20;

/// Retries of a retryable status.
const MAX_RETRIES: u32 = 3;

/// The longest `Retry-After` honoured.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(30);

/// How many characters of the provider's own message are shown.
const PROVIDER_MESSAGE_CHARS: usize = 300;

/// What replaces a secret value in an error.
const REDACTED: &str = "[redacted]";

/// How to reach one endpoint.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EndpointConfig {
    /// The llm's name in the configuration, used in messages (`LLM 'NAME' …`).
    pub name: String,
    /// The URL every request is posted to.
    pub url: String,
    /// Every header to send: the protocol's own (authentication, version) and the configured
    /// ones, secrets resolved.
    pub headers: Vec<(String, String)>,
    /// Values never shown in an error: the API key and the header values from `secrets.toml`.
    pub secrets: Vec<String>,
    pub connect_timeout_secs: u64,
    pub request_timeout_secs: u64,
    pub stream_idle_timeout_secs: u64,
    /// The statuses retried with backoff.
    pub retry: &'static [u16],
}

/// A client of one endpoint, holding one connection pool with its connect timeout.
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    config: EndpointConfig,
    client: reqwest::Client,
    pub max_reply_bytes: usize,
    /// The secrets, longest first (so a secret that contains another is replaced whole).
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

/// Why a retryable status was not retried.
enum GaveUp {
    /// The retries were used up.
    Retries(u32),
    /// The server asked for a wait katari does not make.
    Wait { seconds: u64, asked: bool },
}

impl Endpoint {
    pub fn new(config: EndpointConfig) -> Result<Endpoint, LlmError> {
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
        if is_plain_http(&config.url) {
            // A local server (llama.cpp, Ollama) needs no TLS: building the verifier would read
            // and parse the whole system CA store, about 3 ms of every `katari chat -m`
            // (docs/benchmarks.md, "Chat turn"). Redirects stay on http:// (another scheme is
            // another origin), so no certificate is ever needed.
            builder = builder.tls_certs_only([]);
        }
        let mut secrets: Vec<String> = config
            .secrets
            .iter()
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
        Ok(Endpoint {
            config,
            client,
            max_reply_bytes: MAX_REPLY_BYTES,
            secrets,
        })
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        &self.config.url
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// When the whole request must be done (`request_timeout_secs` from now).
    pub fn deadline(&self) -> Instant {
        after(Duration::from_secs(self.config.request_timeout_secs))
    }

    /// The longest silence inside a stream.
    pub fn idle(&self) -> Duration {
        Duration::from_secs(self.config.stream_idle_timeout_secs)
    }

    /// An error for the person, every secret value redacted.
    pub fn error(&self, message: String) -> LlmError {
        LlmError {
            message: redact(&message, &self.secrets).into_owned(),
            after_output: false,
        }
    }

    /// Text from the server as one short line, secrets redacted before it is cut (a cut could
    /// leave part of a key).
    pub fn own(&self, text: &str) -> String {
        one_line(&redact(text, &self.secrets))
    }

    /// The most bytes one server-sent event may hold.
    pub fn event_limit(&self) -> usize {
        self.max_reply_bytes.saturating_add(1 << 20)
    }

    /// Posts `body` with the retries of the module's header and returns the successful
    /// response; a web page answered with a success status fails with a message naming its
    /// content type and URL. `model` names the model in a 404's message.
    pub async fn post(
        &self,
        body: &Value,
        stream: bool,
        model: &str,
        deadline: Instant,
    ) -> Result<reqwest::Response, LlmError> {
        let mut retries = 0;
        loop {
            let response = self.send(body, stream).await?;
            let status = response.status().as_u16();
            if response.status().is_success() {
                if is_html(&response) {
                    return Err(self.html_error(response, deadline).await);
                }
                return Ok(response);
            }
            if self.config.retry.contains(&status) {
                if retries == MAX_RETRIES {
                    let gave_up = GaveUp::Retries(retries);
                    return Err(self.status_error(response, model, gave_up, deadline).await);
                }
                let asked = retry_after(&response);
                let wait = asked.unwrap_or(Duration::from_secs(1 << retries));
                let left = deadline.saturating_duration_since(Instant::now());
                if wait > MAX_RETRY_WAIT || wait >= left {
                    let gave_up = GaveUp::Wait {
                        seconds: wait.as_secs(),
                        asked: asked.is_some(),
                    };
                    return Err(self.status_error(response, model, gave_up, deadline).await);
                }
                drop(response);
                tokio::time::sleep(wait).await;
                retries += 1;
                continue;
            }
            let gave_up = GaveUp::Retries(retries);
            return Err(self.status_error(response, model, gave_up, deadline).await);
        }
    }

    /// Sends the body; waiting for a streamed reply's headers counts as silence (§4.2).
    async fn send(&self, body: &Value, stream: bool) -> Result<reqwest::Response, LlmError> {
        let mut builder = self.client.post(&self.config.url).json(body).header(
            reqwest::header::ACCEPT,
            if stream {
                "text/event-stream"
            } else {
                "application/json"
            },
        );
        for (name, value) in &self.config.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let sent = if stream {
            match tokio::time::timeout(self.idle(), builder.send()).await {
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
            .map_or_else(|| self.config.url.clone(), ToString::to_string);
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

    pub fn idle_error(&self) -> LlmError {
        let name = self.name();
        self.error(format!(
            "LLM '{name}' sent nothing for {} s while streaming its reply. Raise stream_idle_timeout_secs in [llm.{name}] if the model needs longer.",
            self.config.stream_idle_timeout_secs
        ))
    }

    pub fn timeout_error(&self) -> LlmError {
        let name = self.name();
        self.error(format!(
            "LLM '{name}' did not finish within {} s. Raise request_timeout_secs in [llm.{name}] if the model needs longer.",
            self.config.request_timeout_secs
        ))
    }

    pub fn too_large_error(&self) -> LlmError {
        self.error(format!(
            "LLM '{}' sent a reply larger than {}; the request was stopped.",
            self.name(),
            size(self.max_reply_bytes)
        ))
    }

    fn broken_error(&self, e: &reqwest::Error) -> LlmError {
        self.error(format!(
            "LLM '{}': the connection broke during the reply ({}).",
            self.name(),
            error_chain(e)
        ))
    }

    /// An `error` object inside a successful response or stream.
    pub fn reported_error(&self, error: &Value) -> LlmError {
        let head = format!(
            "LLM '{}' reported an error instead of a reply.",
            self.name()
        );
        match error_message(&json!({ "error": error })) {
            Some(own) => self.error(format!("{head}\n{}", self.own(&own))),
            None => self.error(head),
        }
    }

    /// Reads a streamed reply's server-sent events, handing each to `on_event` until it answers
    /// `Ok(true)` (the reply is complete) or the body ends (`Ok(false)`). `stream` names what
    /// the endpoint should have sent, for the error when a body of another content type held no
    /// event at all.
    pub async fn read_events(
        &self,
        mut response: reqwest::Response,
        deadline: Instant,
        stream: &str,
        mut on_event: impl FnMut(crate::llm::sse::Event) -> Result<bool, LlmError>,
    ) -> Result<bool, LlmError> {
        let idle = self.idle();
        let url = response.url().to_string();
        let content_type = content_type(&response).map(str::to_string);
        let mut parser = crate::llm::sse::Parser::new(self.event_limit());
        let mut events = Vec::new();
        let mut seen = false;
        while let Some(chunk) = self.next_chunk(&mut response, Some(idle), deadline).await? {
            // The parser counts the bytes of the event being received as they arrive, so an
            // oversized event fails here, long before its line (or the body) ends.
            parser
                .feed(&chunk, &mut events)
                .map_err(|crate::llm::sse::TooLarge| self.too_large_error())?;
            for event in events.drain(..) {
                seen = true;
                if on_event(event)? {
                    return Ok(true);
                }
            }
        }
        let name = self.name();
        if !seen && let Some(other) = content_type.filter(|t| !t.starts_with("text/event-stream")) {
            return Err(self.error(format!(
                "LLM '{name}' answered {url} with content-type {other} and no server-sent events: not a {stream} stream. Check base_url in [llm.{name}]."
            )));
        }
        Ok(false)
    }

    /// The next chunk of a body: `request_timeout_secs` bounds every wait and is checked after
    /// every chunk (a server that never pauses is stopped too); `idle`, when given, bounds the
    /// silence before it.
    pub async fn next_chunk(
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

    /// A non-streamed reply's whole body, bounded by twice the reply bound plus 1 MiB.
    pub async fn whole_body(
        &self,
        response: &mut reqwest::Response,
        deadline: Instant,
    ) -> Result<Vec<u8>, LlmError> {
        let limit = self
            .max_reply_bytes
            .saturating_mul(2)
            .saturating_add(1 << 20);
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk(response, None, deadline).await? {
            body.extend_from_slice(&chunk);
            if body.len() > limit {
                return Err(self.too_large_error());
            }
        }
        Ok(body)
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
        model: &str,
        gave_up: GaveUp,
        deadline: Instant,
    ) -> LlmError {
        let status = response.status().as_u16();
        let name = self.name();
        let url = response.url().to_string();
        let timeout = self.config.request_timeout_secs;
        let what = match status {
            429 => "is limiting requests (HTTP 429)",
            529 => "is overloaded (HTTP 529)",
            _ => "is unavailable (HTTP 503)",
        };
        let head = match (status, gave_up) {
            (401 | 403, _) => format!(
                "LLM '{name}' rejected the API key (HTTP {status}). Check api_key_env or api_key in [llm.{name}]."
            ),
            (404, _) => format!(
                "LLM '{name}' has no such endpoint or model (HTTP 404): POST {url} with model '{model}'. Check base_url and model in [llm.{name}]."
            ),
            (429, GaveUp::Retries(retries)) => format!(
                "LLM '{name}' {what} and still was after {retries} retries. Wait a moment and try again."
            ),
            (503 | 529, GaveUp::Retries(retries)) if retries > 0 => format!(
                "LLM '{name}' {what} and still was after {retries} retries. Check that the server is up and try again."
            ),
            (_, GaveUp::Wait { seconds, asked }) => {
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
}

/// The instant `wait` from now; a wait too long for the clock is a year (configured timeouts
/// are not bounded above, and `Instant + Duration` panics on overflow).
pub(crate) fn after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

/// The response's content type, lower-cased parameters and all (`text/html; charset=utf-8`).
pub(crate) fn content_type(response: &reqwest::Response) -> Option<&str> {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

pub(crate) fn is_json(response: &reqwest::Response) -> bool {
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

/// A provider speaking HTTP through an [`Endpoint`]: it builds and reads one request
/// ([`Exchange::run`]), and [`complete`] gives it the deadline and error bookkeeping every
/// provider shares.
pub(crate) trait Exchange: Sync {
    fn endpoint(&self) -> &Endpoint;

    /// One request with its retries; `report` sees every delta.
    fn run(
        &self,
        request: &Request,
        report: &mut (dyn FnMut(Delta) + Send),
        deadline: Instant,
    ) -> impl std::future::Future<Output = Result<Reply, LlmError>> + Send;
}

/// [`crate::llm::Provider::complete`] for an [`Exchange`]: the whole request within
/// `request_timeout_secs` (reading bodies checks the deadline itself; this bounds connecting,
/// sending and waiting for headers as well), and an error that says whether any delta had been
/// reported before it ([`LlmError::after_output`]).
pub(crate) fn complete<'a>(
    provider: &'a impl Exchange,
    request: &'a Request,
    on_delta: &'a mut (dyn FnMut(Delta) + Send),
) -> ReplyFuture<'a> {
    Box::pin(async move {
        let output = AtomicBool::new(false);
        let mut report = |delta: Delta| {
            output.store(true, Ordering::Relaxed);
            on_delta(delta);
        };
        let http = provider.endpoint();
        let deadline = http.deadline();
        let result =
            match tokio::time::timeout_at(deadline, provider.run(request, &mut report, deadline))
                .await
            {
                Ok(result) => result,
                Err(_) => Err(http.timeout_error()),
            };
        result.map_err(|mut e| {
            e.after_output = output.load(Ordering::Relaxed);
            e
        })
    })
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
