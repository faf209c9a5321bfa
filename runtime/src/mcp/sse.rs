//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp 3 no longer has: `GET` the event
//! stream, wait for the `endpoint` event, then `POST` each JSON-RPC message to that endpoint and
//! receive the replies as `message` events on the stream.
//!
//! The endpoint must be on the stream's origin, so the script's headers (which may hold
//! secrets) never go anywhere else. Events larger than the message limit or that are not UTF-8
//! end the stream; the session then fails its pending requests and is reconnected on the next
//! call.

use std::borrow::Cow;
use std::sync::Arc;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::sync::mpsc;

#[cfg(test)]
use super::client::MAX_MESSAGE;
use super::raw::RawTap;

/// A failure of the legacy transport.
#[derive(Debug, Clone)]
pub struct SseError {
    message: String,
    status: Option<StatusCode>,
}

impl SseError {
    fn new(message: impl Into<String>) -> SseError {
        SseError {
            message: message.into(),
            status: None,
        }
    }

    fn status(status: StatusCode, what: &str) -> SseError {
        SseError {
            message: format!("{what} answered HTTP {status}"),
            status: Some(status),
        }
    }

    /// Whether the server answered 401.
    pub fn is_unauthorized(&self) -> bool {
        self.status == Some(StatusCode::UNAUTHORIZED)
    }
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SseError {}

/// One session of the legacy transport.
pub struct LegacySse {
    /// Shown each message sent, so that the answer to a raw request reaches rmcp shortened.
    tap: Option<Arc<RawTap>>,
    http: reqwest::Client,
    endpoint: Arc<Url>,
    headers: Arc<HeaderMap>,
    incoming: mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for LegacySse {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// One server-sent event.
#[derive(Debug, Default, PartialEq)]
struct Event {
    name: String,
    data: String,
}

/// An incremental `text/event-stream` parser (the WHATWG rules that matter here: `event:` and
/// `data:` fields, comments, blank lines dispatching, any of CRLF, LF or CR ending a line).
struct Parser {
    /// The largest event accepted.
    limit: usize,
    buffer: Vec<u8>,
    event: Event,
    has_data: bool,
    /// The previous chunk ended in CR: a leading LF belongs to it.
    after_cr: bool,
}

impl Parser {
    fn new(limit: usize) -> Parser {
        Parser {
            limit,
            buffer: Vec::new(),
            event: Event::default(),
            has_data: false,
            after_cr: false,
        }
    }

    /// Feeds bytes; returns the events completed by them.
    fn feed(&mut self, mut bytes: &[u8]) -> Result<Vec<Event>, SseError> {
        let mut events = Vec::new();
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'\n' || b == b'\r' {
                self.buffer.extend_from_slice(&bytes[start..i]);
                let line = std::mem::take(&mut self.buffer);
                self.line(&line, &mut events)?;
                if b == b'\r' {
                    if i + 1 < bytes.len() {
                        if bytes[i + 1] == b'\n' {
                            i += 1;
                        }
                    } else {
                        self.after_cr = true;
                    }
                }
                start = i + 1;
            }
            i += 1;
        }
        self.buffer.extend_from_slice(&bytes[start..]);
        if self.buffer.len() + self.event.data.len() > self.limit {
            return Err(SseError::new(format!(
                "an event is larger than {} bytes",
                self.limit
            )));
        }
        Ok(events)
    }

    fn line(&mut self, line: &[u8], events: &mut Vec<Event>) -> Result<(), SseError> {
        if line.is_empty() {
            if self.has_data || !self.event.name.is_empty() {
                let mut event = std::mem::take(&mut self.event);
                if event.data.ends_with('\n') {
                    event.data.pop();
                }
                events.push(event);
            }
            self.has_data = false;
            return Ok(());
        }
        let line = std::str::from_utf8(line)
            .map_err(|_| SseError::new("the event stream is not valid UTF-8"))?;
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event.name = value.to_string(),
            "data" => {
                self.event.data.push_str(value);
                self.event.data.push('\n');
                self.has_data = true;
                if self.event.data.len() > self.limit {
                    return Err(SseError::new(format!(
                        "an event is larger than {} bytes",
                        self.limit
                    )));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl LegacySse {
    /// Opens the event stream at `url` and waits for the `endpoint` event. Every `message`
    /// event is shown to `tap`, which keeps raw results for [`super::client::request_raw`].
    pub(crate) async fn connect(
        url: &str,
        headers: HeaderMap,
        tap: Option<Arc<RawTap>>,
        limit: usize,
    ) -> Result<LegacySse, SseError> {
        let base = Url::parse(url).map_err(|e| SseError::new(format!("invalid URL: {e}")))?;
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| SseError::new(super::client::describe(&e)))?;
        let response = http
            .get(base.clone())
            .headers(headers.clone())
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| SseError::new(super::client::describe(&e)))?;
        if !response.status().is_success() {
            return Err(SseError::status(response.status(), "the event stream"));
        }
        let is_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_stream {
            return Err(SseError::new("the server did not open an event stream"));
        }
        let mut stream = response;
        let mut parser = Parser::new(limit);
        let mut early = Vec::new();
        let endpoint = 'found: loop {
            let chunk = stream
                .chunk()
                .await
                .map_err(|e| SseError::new(super::client::describe(&e)))?;
            let Some(chunk) = chunk else {
                return Err(SseError::new(
                    "the event stream ended before announcing an endpoint",
                ));
            };
            for event in parser.feed(&chunk)? {
                if event.name == "endpoint" {
                    break 'found event.data;
                }
                early.push(event);
            }
        };
        let endpoint = base
            .join(endpoint.trim())
            .map_err(|e| SseError::new(format!("the announced endpoint is not a URL: {e}")))?;
        if endpoint.origin() != base.origin() {
            return Err(SseError::new(
                "the announced endpoint is on another origin; refusing to send requests there",
            ));
        }
        let (tx, incoming) = mpsc::channel(64);
        let reader = tokio::spawn(read(stream, parser, early, tx, tap.clone()));
        Ok(LegacySse {
            tap,
            http,
            endpoint: Arc::new(endpoint),
            headers: Arc::new(headers),
            incoming,
            reader,
        })
    }
}

/// Forwards `message` events to the session until the stream ends or goes wrong.
async fn read(
    mut stream: reqwest::Response,
    mut parser: Parser,
    early: Vec<Event>,
    tx: mpsc::Sender<ServerJsonRpcMessage>,
    tap: Option<Arc<RawTap>>,
) {
    async fn forward(
        event: Event,
        tx: &mpsc::Sender<ServerJsonRpcMessage>,
        tap: Option<&RawTap>,
    ) -> bool {
        if !(event.name.is_empty() || event.name == "message") {
            return true;
        }
        let lean = tap.and_then(|tap| tap.record(event.data.as_bytes()));
        let decoded = match lean {
            Some(lean) => serde_json::from_slice::<ServerJsonRpcMessage>(&lean),
            None => serde_json::from_str::<ServerJsonRpcMessage>(&event.data),
        };
        match decoded {
            Ok(message) => tx.send(message).await.is_ok(),
            // A malformed message cannot be matched to its request: end the session so the
            // pending requests fail now instead of timing out.
            Err(_) => false,
        }
    }
    for event in early {
        if !forward(event, &tx, tap.as_deref()).await {
            return;
        }
    }
    while let Ok(Some(chunk)) = stream.chunk().await {
        let Ok(events) = parser.feed(&chunk) else {
            return;
        };
        for event in events {
            if !forward(event, &tx, tap.as_deref()).await {
                return;
            }
        }
    }
}

impl Transport<RoleClient> for LegacySse {
    type Error = SseError;

    fn name() -> Cow<'static, str> {
        "legacy HTTP+SSE".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Some(tap) = &self.tap {
            tap.sent(&item);
        }
        let (http, endpoint, headers) = (
            self.http.clone(),
            self.endpoint.clone(),
            self.headers.clone(),
        );
        async move {
            let body = serde_json::to_vec(&item)
                .map_err(|e| SseError::new(format!("cannot encode a message: {e}")))?;
            let response = http
                .post((*endpoint).clone())
                .headers((*headers).clone())
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(body)
                .send()
                .await
                .map_err(|e| SseError::new(super::client::describe(&e)))?;
            if response.status().is_success() {
                Ok(())
            } else {
                Err(SseError::status(response.status(), "the message endpoint"))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.incoming.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> Vec<Event> {
        let mut parser = Parser::new(MAX_MESSAGE);
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(parser.feed(chunk).expect("well-formed stream"));
        }
        out
    }

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let got = events(&[
            b"event: endpoint\r",
            b"\ndata: /messages?session=1\r\n\r\n: comment\n",
            b"event: message\ndata: {\"a\":\ndata: 1}\n\n",
        ]);
        assert_eq!(
            got,
            vec![
                Event {
                    name: "endpoint".into(),
                    data: "/messages?session=1".into()
                },
                Event {
                    name: "message".into(),
                    data: "{\"a\":\n1}".into()
                },
            ]
        );
    }

    #[test]
    fn invalid_utf8_ends_the_stream() {
        let mut parser = Parser::new(MAX_MESSAGE);
        assert!(parser.feed(b"data: \xff\xfe\n\n").is_err());
    }
}
