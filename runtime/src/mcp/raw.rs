//! The exact bytes of replies: a tap on each connection's transport that keeps the raw `result`
//! text of JSON-RPC responses while a caller of [`super::client::request_raw`] waits for one,
//! so the chat host can pass an in-bounds tool result to the model byte for byte (`host.md`
//! §10.6.2) instead of rmcp's re-serialisation of its typed model.
//!
//! The tap sees every message the server sends: stdio lines through `TapReader`, Streamable
//! HTTP events through `TapClient`, and legacy HTTP+SSE events in [`super::sse`]. It only
//! copies a message while some request is watching, and forgets everything when the last watch
//! ends, so it holds no memory between raw requests.
//!
//! The transports also show the tap the requests they send. The answer to a raw request (a
//! custom request: only `request_raw` sends those) is read from the kept text alone, so rmcp
//! is handed the same response with an empty result instead: decoding a large result into
//! rmcp's typed model costs more than the rest of the request (a catalog page of 28 KB, about
//! 0.5 ms), for a value nobody reads.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

/// The raw results of one connection, kept while requests watch for them.
#[derive(Default)]
pub(crate) struct RawTap {
    state: Mutex<TapState>,
    /// Why a transport ended the connection itself (a message over the limit, or nested too
    /// deep to decode), for the error of the requests it cut short: without it they would
    /// only learn that the connection closed.
    fault: Mutex<Option<String>>,
}

#[derive(Default)]
struct TapState {
    /// How many requests are waiting for a raw result.
    watching: usize,
    /// Raw `result` texts by response id, in arrival order.
    results: Vec<(Value, String)>,
    /// The ids of raw requests sent and not answered yet.
    raw: Vec<Value>,
}

/// A request watching for its raw result; dropping it ends the watch.
pub(crate) struct Watch {
    tap: Arc<RawTap>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut state = self.tap.lock();
        state.watching = state.watching.saturating_sub(1);
        if state.watching == 0 {
            state.results = Vec::new();
            state.raw = Vec::new();
        }
    }
}

impl RawTap {
    fn lock(&self) -> std::sync::MutexGuard<'_, TapState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts watching: responses arriving from now on are kept until the watch ends.
    pub(crate) fn watch(self: &Arc<Self>) -> Watch {
        self.lock().watching += 1;
        Watch { tap: self.clone() }
    }

    /// Records why the connection is being ended by its transport.
    pub(crate) fn fail(&self, why: &str) {
        let mut fault = self.fault.lock().unwrap_or_else(PoisonError::into_inner);
        fault.get_or_insert_with(|| why.to_string());
    }

    /// Why the transport ended the connection, if it did.
    pub(crate) fn fault(&self) -> Option<String> {
        self.fault
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether a message arriving now would be kept.
    pub(crate) fn watching(&self) -> bool {
        self.lock().watching > 0
    }

    /// Looks at one message about to be sent: a custom request is a raw request, whose answer
    /// [`RawTap::record`] will shorten for rmcp.
    pub(crate) fn sent(&self, message: &ClientJsonRpcMessage) {
        let JsonRpcMessage::Request(request) = message else {
            return;
        };
        if !matches!(request.request, ClientRequest::CustomRequest(_)) {
            return;
        }
        let mut state = self.lock();
        // A raw request watches before it sends; an id noted outside a watch would never be
        // forgotten.
        if state.watching > 0
            && let Ok(id) = serde_json::to_value(&request.id)
        {
            state.raw.push(id);
        }
    }

    /// Looks at one whole JSON-RPC message as received; keeps its `result` text when it is a
    /// response and a request is watching. When it answers a raw request, returns the message
    /// to hand to rmcp instead: the same response with an empty result.
    pub(crate) fn record(&self, message: &[u8]) -> Option<Vec<u8>> {
        if !self.watching() {
            return None;
        }
        let (id_at, result) = response_parts(message)?;
        let (Ok(id), Ok(text)) = (
            serde_json::from_slice::<Value>(&message[id_at.clone()]),
            std::str::from_utf8(&message[result]),
        ) else {
            return None;
        };
        let mut state = self.lock();
        if state.watching == 0 {
            return None;
        }
        let raw = state.raw.iter().position(|r| *r == id);
        state.results.push((id, text.to_string()));
        let at = raw?;
        state.raw.swap_remove(at);
        let mut lean = br#"{"jsonrpc":"2.0","id":"#.to_vec();
        lean.extend_from_slice(&message[id_at]);
        lean.extend_from_slice(br#","result":{}}"#);
        Some(lean)
    }

    /// The raw result of the response with `id`, if it was kept.
    pub(crate) fn take(&self, id: &Value) -> Option<String> {
        let mut state = self.lock();
        let at = state.results.iter().position(|(i, _)| i == id)?;
        Some(state.results.remove(at).1)
    }
}

/// The byte ranges of the top-level `id` and `result` members of a JSON-RPC response, found by
/// scanning (no parse of the result itself). `None` for anything else: requests,
/// notifications, errors and text that is not one JSON object. Public for tests that compare
/// what a server sent with what a host passed on.
pub fn response_parts(text: &[u8]) -> Option<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let mut i = skip_ws(text, 0);
    if text.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let (mut id, mut result) = (None, None);
    loop {
        i = skip_ws(text, i);
        match text.get(i)? {
            b'}' => break,
            b'"' => {}
            _ => return None,
        }
        let key_end = skip_string(text, i)?;
        let key = &text[i + 1..key_end - 1];
        i = skip_ws(text, key_end);
        if text.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(text, i + 1);
        let start = i;
        i = skip_value(text, i)?;
        match key {
            b"id" => id = Some(start..i),
            b"result" => result = Some(start..i),
            _ => {}
        }
        i = skip_ws(text, i);
        match text.get(i)? {
            b',' => i += 1,
            b'}' => break,
            _ => return None,
        }
    }
    Some((id?, result?))
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while matches!(text.get(i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        i += 1;
    }
    i
}

/// The index after the string starting at `i` (which is a quote).
fn skip_string(text: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match text.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The index after the value starting at `i`.
fn skip_value(text: &[u8], mut i: usize) -> Option<usize> {
    match text.get(i)? {
        b'"' => skip_string(text, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match text.get(i)? {
                    b'"' => {
                        i = skip_string(text, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let start = i;
            while let Some(b) = text.get(i) {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n') {
                    break;
                }
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

/// A stdio server's stdout: passes bytes through to the line transport, hands each whole line
/// to the tap (holding the line back meanwhile, so that the answer to a raw request reaches the
/// transport shortened), and ends the stream with an error when a line grows past `limit` bytes
/// (rmcp's own bound drops such a line silently, which would leave its request waiting until
/// the timeout).
pub(crate) struct TapReader<R> {
    inner: R,
    tap: Arc<RawTap>,
    limit: usize,
    /// The current line so far, while it is kept for the tap.
    line: Vec<u8>,
    /// The bytes of the current line so far.
    length: usize,
    /// Whether the current line is being kept for the tap.
    keep: bool,
    /// The nesting of the current line so far.
    depth: Depth,
    at_start: bool,
    /// What is read from the server, before [`TapReader::observe`] passes it on.
    fresh: Box<[u8]>,
    /// Bytes for the transport, from `ready[given..]`.
    ready: Vec<u8>,
    given: usize,
}

/// The deepest nesting of arrays and objects a message may have: serde_json, which decodes
/// every message, refuses the 128th level, and rmcp drops a message it cannot decode, which
/// would leave its request waiting for the whole timeout.
pub(crate) const MAX_DEPTH: usize = 127;

/// The nesting depth of a JSON text read in pieces: brackets outside strings.
#[derive(Default)]
pub(crate) struct Depth {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Depth {
    /// Takes in the next bytes of the text; false once it nests deeper than [`MAX_DEPTH`].
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return false;
                    }
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        true
    }
}

/// The most bytes read from the server at once.
const CHUNK: usize = 64 * 1024;

impl<R> TapReader<R> {
    pub(crate) fn new(inner: R, tap: Arc<RawTap>, limit: usize) -> TapReader<R> {
        TapReader {
            inner,
            tap,
            limit,
            line: Vec::new(),
            length: 0,
            keep: false,
            depth: Depth::default(),
            at_start: true,
            fresh: vec![0; CHUNK].into_boxed_slice(),
            ready: Vec::new(),
            given: 0,
        }
    }

    /// Ends the stream: the reason is kept on the tap for the requests it cuts short.
    fn fail(&self, why: String) -> io::Error {
        self.tap.fail(&why);
        io::Error::new(io::ErrorKind::InvalidData, format!("the server {why}"))
    }

    /// Takes in bytes read from the server: lines nobody watches go straight to `ready`, a
    /// kept line once it is whole (or its replacement from the tap).
    fn observe(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            if self.at_start {
                self.at_start = false;
                self.keep = self.tap.watching();
                self.length = 0;
                self.depth = Depth::default();
            }
            let (chunk, ended) = match bytes.iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[..at], true),
                None => (bytes, false),
            };
            self.length += chunk.len();
            if self.length > self.limit {
                return Err(self.fail(format!("sent a message larger than {} bytes", self.limit)));
            }
            if !self.depth.feed(chunk) {
                return Err(self.fail(format!(
                    "sent a message nested deeper than {MAX_DEPTH} levels"
                )));
            }
            if self.keep {
                self.line.extend_from_slice(chunk);
            } else {
                self.ready.extend_from_slice(chunk);
            }
            if ended {
                if self.keep {
                    match self.tap.record(&self.line) {
                        Some(lean) => self.ready.extend_from_slice(&lean),
                        None => self.ready.extend_from_slice(&self.line),
                    }
                    // A huge line's buffer is not kept for the next one.
                    self.line = Vec::new();
                }
                self.ready.push(b'\n');
                self.at_start = true;
                bytes = &bytes[chunk.len() + 1..];
            } else {
                bytes = &[];
            }
        }
        Ok(())
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TapReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.given < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.given);
                buf.put_slice(&this.ready[this.given..this.given + n]);
                this.given += n;
                if this.given == this.ready.len() {
                    this.ready.clear();
                    this.given = 0;
                }
                return Poll::Ready(Ok(()));
            }
            let mut fresh = ReadBuf::new(&mut this.fresh);
            match Pin::new(&mut this.inner).poll_read(cx, &mut fresh) {
                Poll::Ready(Ok(())) => {}
                other => return other,
            }
            let n = fresh.filled().len();
            if n == 0 {
                // The end: a last line without its newline goes on as it is.
                this.ready.append(&mut this.line);
                if this.ready.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                continue;
            }
            let fresh = std::mem::take(&mut this.fresh);
            let observed = this.observe(&fresh[..n]);
            this.fresh = fresh;
            observed?;
        }
    }
}

/// rmcp's reqwest client for Streamable HTTP, with every SSE event handed to the tap. A reply
/// sent as one JSON body (rather than an event stream) is decoded by rmcp before the tap sees
/// it; [`super::client::request_raw`] then falls back to re-serialising the decoded result.
#[derive(Clone)]
pub(crate) struct TapClient {
    http: reqwest::Client,
    tap: Arc<RawTap>,
}

impl TapClient {
    /// rmcp's default client settings: no idle pooling, only same-origin 307/308 redirects.
    pub(crate) fn new(tap: Arc<RawTap>) -> Result<TapClient, reqwest::Error> {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|original| original.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > 10 {
                attempt.error("exceeded 10 redirects")
            } else {
                attempt.follow()
            }
        });
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(policy)
            .build()?;
        Ok(TapClient { http, tap })
    }

    fn tapped(
        &self,
        stream: BoxStream<'static, Result<sse_stream::Sse, SseError>>,
    ) -> BoxStream<'static, Result<sse_stream::Sse, SseError>> {
        let tap = self.tap.clone();
        stream
            .map(move |mut event| {
                if let Ok(event) = &mut event
                    && let Some(data) = &mut event.data
                    && let Some(lean) = tap.record(data.as_bytes())
                {
                    // Valid UTF-8: ASCII around the id, which parsed as JSON.
                    *data = String::from_utf8(lean).unwrap_or_default();
                }
                event
            })
            .boxed()
    }

    fn tapped_response(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        match response {
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(self.tapped(stream), session)
            }
            other => other,
        }
    }
}

type HttpResult<T> = Result<T, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for TapClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.tap.sent(&message);
        let response = self
            .http
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await?;
        Ok(self.tapped_response(response))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.tap.sent(&message);
        let response = self
            .http
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.tapped_response(response))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        self.tap.sent(&message);
        let response = self
            .http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        Ok(self.tapped_response(response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream::Sse, SseError>>> {
        let stream = self
            .http
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.tapped(stream))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> HttpResult<BoxStream<'static, Result<sse_stream::Sse, SseError>>> {
        let stream = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.tapped(stream))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(text: &str) -> Option<(&str, &str)> {
        let (id, result) = response_parts(text.as_bytes())?;
        Some((&text[id], &text[result]))
    }

    #[test]
    fn responses_are_split_into_id_and_raw_result() {
        assert_eq!(
            parts(
                r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\"}b"}]}}"#
            ),
            Some(("7", r#"{"content":[{"type":"text","text":"a\"}b"}]}"#))
        );
        assert_eq!(
            parts(r#" { "result" : [1, {"x": "]"}] , "id" : "abc" } "#),
            Some((r#""abc""#, r#"[1, {"x": "]"}]"#))
        );
        assert_eq!(
            parts(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#),
            None
        );
        assert_eq!(parts(r#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(parts("not json"), None);
        assert_eq!(parts(r#"{"id":1,"result":{"#), None);
    }

    #[test]
    fn the_tap_keeps_results_only_while_watched() {
        let tap = Arc::new(RawTap::default());
        tap.record(br#"{"id":1,"result":{"a":1}}"#);
        assert_eq!(tap.take(&Value::from(1)), None);
        let watch = tap.watch();
        tap.record(br#"{"id":2,"result":{"b": 2}}"#);
        tap.record(br#"{"id":3,"result":{}}"#);
        assert_eq!(tap.take(&Value::from(2)).as_deref(), Some(r#"{"b": 2}"#));
        drop(watch);
        assert_eq!(tap.take(&Value::from(3)), None);
    }

    /// Everything `reader` passes on, read in small pieces.
    fn passed_on(mut reader: TapReader<&[u8]>) -> String {
        use tokio::io::AsyncReadExt;
        let mut out = Vec::new();
        let mut piece = [0u8; 7];
        futures::executor::block_on(async {
            loop {
                let n = reader.read(&mut piece).await.expect("read");
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&piece[..n]);
            }
        });
        String::from_utf8(out).expect("UTF-8")
    }

    fn custom_request(id: i64) -> ClientJsonRpcMessage {
        ClientJsonRpcMessage::request(
            ClientRequest::CustomRequest(rmcp::model::CustomRequest::new("tools/list", None)),
            rmcp::model::NumberOrString::Number(id),
        )
    }

    #[test]
    fn answers_to_raw_requests_reach_rmcp_with_an_empty_result() {
        let tap = Arc::new(RawTap::default());
        let watch = tap.watch();
        tap.sent(&custom_request(2));
        // A typed request of the same session is not shortened.
        tap.sent(&ClientJsonRpcMessage::request(
            ClientRequest::PingRequest(Default::default()),
            rmcp::model::NumberOrString::Number(3),
        ));
        let server = concat!(
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"x\":1}}\r\n",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"é\"}]}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}",
        );
        let reader = TapReader::new(server.as_bytes(), tap.clone(), 1000);
        assert_eq!(
            passed_on(reader),
            concat!(
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n",
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"x\":1}}\r\n",
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n",
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}",
            )
        );
        assert_eq!(
            tap.take(&Value::from(2)).as_deref(),
            Some(r#"{"tools":[{"name":"é"}]}"#)
        );
        assert_eq!(tap.take(&Value::from(3)).as_deref(), Some(r#"{"x":1}"#));
        drop(watch);
        // Outside a watch nothing is noted or kept, and every line passes unchanged.
        tap.sent(&custom_request(5));
        let line = "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"big\":true}}\n";
        assert_eq!(
            passed_on(TapReader::new(line.as_bytes(), tap.clone(), 1000)),
            line
        );
        assert_eq!(tap.take(&Value::from(5)), None);
    }

    #[test]
    fn the_reader_bounds_lines() {
        let tap = Arc::new(RawTap::default());
        let _watch = tap.watch();
        let mut reader = TapReader::new(tokio::io::empty(), tap.clone(), 10);
        assert!(reader.observe(b"{\"id\":1").is_ok());
        assert!(reader.observe(b",\"result\":2}\n").is_err());
        let mut reader = TapReader::new(tokio::io::empty(), tap.clone(), 100);
        reader
            .observe(b"{\"id\":1,\"res")
            .and_then(|()| reader.observe(b"ult\":[2]}\n"))
            .expect("observe");
        assert_eq!(tap.take(&Value::from(1)).as_deref(), Some("[2]"));
    }
}
