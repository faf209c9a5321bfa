//! A FAKE OpenAI-compatible LLM server, for fault-injection tests only: it is not a model and
//! says so (every reply's `model` is `"fake"`). It listens on `127.0.0.1` on a port the OS
//! chooses, records every request, and answers `POST …/chat/completions` from a queue of
//! [`Script`]s: well-formed replies streamed in many small chunks (text, tool calls with their
//! arguments split across chunks, parallel calls, reused indexes, a usage chunk with empty
//! `choices`), and the faults a real endpoint shows now and then (HTTP errors with bodies and
//! headers, streams dropped before `[DONE]`, streams that go silent, malformed chunks, SSE
//! comments, `\r\n` line ends, endless streams, a data line of many megabytes that never ends).
//!
//! **When the queue is empty** it answers a plain text reply `"ok"`, streamed or not as the
//! request asked. A request to any other path gets HTTP 404 with an OpenAI-style error body and
//! consumes no script.
//!
//! The server asserts nothing: tests read what it recorded ([`FakeLlm::requests`],
//! [`FakeLlm::requests_messages`]) and check it themselves, for example the pairing invariant with
//! `katari_chat::message::check_pairing`. It is a small blocking `std::net` server, one thread
//! per connection, every response `Connection: close`; it stops when dropped (a connection held
//! silent ends then, when its client goes, or after [`SILENCE_BOUND`]).

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use katari_chat::message::{Message, Role, ToolCall};
use serde_json::{Value, json};

/// The longest a silent stream holds its connection.
pub const SILENCE_BOUND: Duration = Duration::from_secs(60);

/// One scripted tool call of a reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeCall {
    /// The stream `index`; two calls may share one (the second starts with a new id).
    pub index: u64,
    /// Any form: the fake does not require `call_…`.
    pub id: String,
    pub name: String,
    /// Sent as they are, split across chunks: they need not parse.
    pub arguments: String,
}

impl FakeCall {
    pub fn new(index: u64, id: &str, name: &str, arguments: &str) -> FakeCall {
        FakeCall {
            index,
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        }
    }
}

/// How a streamed reply ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The finish chunk, the usage chunk (empty `choices`) and `data: [DONE]`: a whole reply.
    Done,
    /// The finish and usage chunks, then the body ends without `[DONE]`.
    NoDone,
    /// The body ends cleanly right after the content: no finish reason, no `[DONE]`.
    Dropped,
    /// The connection is cut in the middle of the body (no chunked-encoding terminator).
    Cut,
    /// Nothing more after the content; the connection is held open without a byte.
    Silent,
}

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Script(Kind);

#[derive(Clone, Debug)]
enum Kind {
    Reply(ReplySpec),
    Raw(Vec<String>),
    Json(Value),
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    Endless {
        max_chunks: usize,
        every: Duration,
    },
    LongLine {
        bytes: usize,
    },
}

#[derive(Clone, Debug)]
struct ReplySpec {
    text: Option<String>,
    calls: Vec<FakeCall>,
    /// How many chunks the text, and each call's arguments, are split into.
    pieces: usize,
    finish: Option<String>,
    usage: Option<(u64, u64)>,
    crlf: bool,
    comments: bool,
    ending: Ending,
}

impl Script {
    fn reply(text: Option<&str>, calls: Vec<FakeCall>) -> Script {
        Script(Kind::Reply(reply_spec(text, calls)))
    }

    /// A text reply (finish reason `stop`), streamed in 4 chunks unless [`Script::chunks`] says
    /// otherwise, or sent whole when the request has `stream: false`.
    pub fn text(text: &str) -> Script {
        Script::reply(Some(text), Vec::new())
    }

    /// A reply that calls tools (finish reason `tool_calls`), each call's arguments split
    /// across 4 chunks unless [`Script::chunks`] says otherwise.
    pub fn tool_calls(calls: Vec<FakeCall>) -> Script {
        Script::reply(None, calls)
    }

    /// Text first, then tool calls.
    pub fn text_and_tool_calls(text: &str, calls: Vec<FakeCall>) -> Script {
        Script::reply(Some(text), calls)
    }

    /// Raw body pieces of a `200 text/event-stream` response, each written and flushed on its
    /// own, then the body ends: for malformed chunks and framing of one's own.
    pub fn raw<S: Into<String>>(pieces: impl IntoIterator<Item = S>) -> Script {
        Script(Kind::Raw(pieces.into_iter().map(Into::into).collect()))
    }

    /// A `200 application/json` response with this body, whatever the request asked.
    pub fn json(body: Value) -> Script {
        Script(Kind::Json(body))
    }

    /// An HTTP status with a body (its content type guessed: JSON, HTML or plain text); add
    /// headers with [`Script::header`].
    pub fn status(status: u16, body: &str) -> Script {
        Script(Kind::Status {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        })
    }

    /// A stream that sends a text chunk `tick N ` every `every` until the client disconnects,
    /// the server stops, or `max_chunks` were sent (then it finishes normally).
    pub fn endless(max_chunks: usize, every: Duration) -> Script {
        Script(Kind::Endless { max_chunks, every })
    }

    /// A stream whose first event is one `data:` line of a text delta `bytes` long (`x`s) that
    /// never ends: after those bytes the connection is held open without another byte, so only
    /// a bound applied while reading stops the client before the idle timeout.
    pub fn long_line(bytes: usize) -> Script {
        Script(Kind::LongLine { bytes })
    }

    /// Splits the text, and each call's arguments, into `n` chunks (at least 1).
    pub fn chunks(mut self, n: usize) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.pieces = n.max(1);
        }
        self
    }

    /// The finish reason to send (`length`, `content_filter`, …) instead of the natural one.
    pub fn finish(mut self, reason: &str) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.finish = Some(reason.to_string());
        }
        self
    }

    /// The usage to report (default 10 prompt and 5 completion tokens).
    pub fn usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.usage = Some((prompt_tokens, completion_tokens));
        }
        self
    }

    /// No usage anywhere in the reply.
    pub fn no_usage(mut self) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.usage = None;
        }
        self
    }

    /// `\r\n` line ends in the event stream.
    pub fn crlf(mut self) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.crlf = true;
        }
        self
    }

    /// An SSE comment line (`: keep-alive`) before every event.
    pub fn comments(mut self) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.comments = true;
        }
        self
    }

    /// How the stream ends (default [`Ending::Done`]). For a `stream: false` request,
    /// `Dropped` and `Cut` send half the JSON body and `Silent` sends only the headers.
    pub fn ending(mut self, ending: Ending) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.ending = ending;
        }
        self
    }

    /// Adds a response header to a [`Script::status`] answer (`Retry-After`, …).
    pub fn header(mut self, name: &str, value: &str) -> Script {
        if let Kind::Status { headers, .. } = &mut self.0 {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }
}

/// One request as received.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body as JSON, or as a JSON string when it did not parse.
    pub body: Value,
}

impl Recorded {
    /// The first header of that name (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub(crate) struct Shared<S> {
    pub(crate) queue: Mutex<VecDeque<S>>,
    pub(crate) recorded: Mutex<Vec<Recorded>>,
    pub(crate) stop: AtomicBool,
}

/// Locks a mutex even when a connection thread panicked while holding it: the data are plain
/// lists, and the test should see what was recorded.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A fake server of either wire format (`S` is its script type); it stops when dropped.
pub struct FakeServer<S> {
    addr: SocketAddr,
    shared: Arc<Shared<S>>,
    accept: Option<JoinHandle<()>>,
}

/// The fake chat-completions server.
pub type FakeLlm = FakeServer<Script>;

impl<S> std::fmt::Debug for FakeServer<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FakeServer({})", self.addr)
    }
}

impl<S: Send + 'static> FakeServer<S> {
    /// Starts a server on `127.0.0.1` with an OS-chosen port, answering with `serve`.
    pub(crate) fn listening(serve: fn(TcpStream, &Shared<S>) -> io::Result<()>) -> FakeServer<S> {
        let (addr, shared, accept) = listen(serve);
        FakeServer {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues an answer for the next request.
    pub fn push(&self, script: S) {
        lock(&self.shared.queue).push_back(script);
    }

    /// The bodies of every request received, in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared.recorded)
            .iter()
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every request received, with method, path and headers.
    pub fn recorded(&self) -> Vec<Recorded> {
        lock(&self.shared.recorded).clone()
    }
}

impl FakeServer<Script> {
    /// Starts the chat-completions server on `127.0.0.1` with an OS-chosen port.
    pub fn start() -> FakeLlm {
        FakeServer::listening(serve)
    }

    /// `http://127.0.0.1:PORT/v1`, the `base_url` to configure.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.origin())
    }

    /// Each request's `messages` back as katari messages, the system message left out, for
    /// `check_pairing`.
    pub fn requests_messages(&self) -> Vec<Vec<Message>> {
        self.requests().iter().map(body_messages).collect()
    }
}

impl<S> Drop for FakeServer<S> {
    fn drop(&mut self) {
        stop(self.addr, &self.shared.stop, self.accept.take());
    }
}

/// A server on `127.0.0.1` with an OS-chosen port, answering each connection on its own thread
/// with `serve`.
pub(crate) fn listen<S: Send + 'static>(
    serve: fn(TcpStream, &Shared<S>) -> io::Result<()>,
) -> (SocketAddr, Arc<Shared<S>>, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the fake LLM on 127.0.0.1");
    let addr = listener.local_addr().expect("the fake LLM's address");
    let shared = Arc::new(Shared {
        queue: Mutex::new(VecDeque::new()),
        recorded: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
    });
    let accept_shared = shared.clone();
    let accept = std::thread::spawn(move || {
        for stream in listener.incoming() {
            if accept_shared.stop.load(Ordering::SeqCst) {
                break;
            }
            let Ok(stream) = stream else { continue };
            let shared = accept_shared.clone();
            std::thread::spawn(move || {
                // A client that went away mid-answer is not the fake's problem.
                let _ = serve(stream, &shared);
            });
        }
    });
    (addr, shared, accept)
}

/// Stops a server of [`listen`]: sets the flag, wakes the accept loop so it sees it, and waits
/// for the loop to end.
pub(crate) fn stop(addr: SocketAddr, flag: &AtomicBool, accept: Option<JoinHandle<()>>) {
    flag.store(true, Ordering::SeqCst);
    let _ = TcpStream::connect(addr);
    if let Some(accept) = accept {
        let _ = accept.join();
    }
}

/// A request body's `messages` as katari messages, the system message left out.
pub fn body_messages(body: &Value) -> Vec<Message> {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(parts.iter().filter_map(|p| p["text"].as_str()).collect()),
        _ => None,
    };
    let mut out = Vec::new();
    for m in body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let role = match m["role"].as_str().and_then(Role::parse) {
            Some(role) => role,
            None => continue,
        };
        let tool_calls = m["tool_calls"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|c| ToolCall {
                id: c["id"].as_str().unwrap_or_default().to_string(),
                name: c["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                arguments: c["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            })
            .collect();
        out.push(Message {
            role,
            content: text(&m["content"]),
            tool_calls,
            tool_call_id: m["tool_call_id"].as_str().map(str::to_string),
        });
    }
    out
}

/// Reads one request (line, headers and a `Content-Length` body parsed as JSON, or kept as a
/// JSON string when it is not JSON); `None` when the client sent nothing.
pub(crate) fn read_request(stream: &TcpStream) -> io::Result<Option<Recorded>> {
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let body = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    Ok(Some(Recorded {
        method,
        path,
        headers,
        body,
    }))
}

/// Answers one connection: reads the request, records it, writes the scripted answer.
fn serve(stream: TcpStream, shared: &Shared<Script>) -> io::Result<()> {
    let Some(request) = read_request(&stream)? else {
        return Ok(());
    };
    let (method, path, headers, body) =
        (request.method, request.path, request.headers, request.body);
    let streamed = body["stream"].as_bool().unwrap_or(false);
    let is_chat = method == "POST" && path.ends_with("/chat/completions");
    // One lock order (queue, then records) so the scripts answer requests in the order recorded.
    let script = {
        let mut queue = lock(&shared.queue);
        lock(&shared.recorded).push(Recorded {
            method,
            path: path.clone(),
            headers,
            body,
        });
        is_chat.then(|| queue.pop_front()).flatten()
    };
    let mut out = stream;
    if !is_chat {
        let body = json!({"error": {"message": format!("The fake LLM has no route {path}"), "type": "not_found"}});
        return write_status(&mut out, 404, &[], &body.to_string());
    }
    match script.map_or_else(|| Kind::Reply(reply_spec(Some("ok"), Vec::new())), |s| s.0) {
        Kind::Reply(spec) if streamed => write_stream(&mut out, &spec, shared),
        Kind::Reply(spec) => write_whole(&mut out, &spec, shared),
        Kind::Raw(pieces) => {
            write_head(&mut out, 200, "text/event-stream", &[], None)?;
            for piece in pieces {
                write_chunk(&mut out, piece.as_bytes())?;
            }
            end_body(&mut out)
        }
        Kind::Json(body) => write_status(&mut out, 200, &[], &body.to_string()),
        Kind::Status {
            status,
            headers,
            body,
        } => write_status(&mut out, status, &headers, &body),
        Kind::Endless { max_chunks, every } => write_endless(&mut out, max_chunks, every, shared),
        Kind::LongLine { bytes } => {
            write_head(&mut out, 200, "text/event-stream", &[], None)?;
            write_chunk(
                &mut out,
                br#"data: {"choices":[{"index":0,"delta":{"content":""#,
            )?;
            let piece = vec![b'x'; 64 << 10];
            let mut sent = 0;
            while sent < bytes {
                let n = piece.len().min(bytes - sent);
                // A failed write means the client stopped reading: the stream ends there.
                write_chunk(&mut out, &piece[..n])?;
                sent += n;
            }
            hold(&mut out, &shared.stop)
        }
    }
}

fn reply_spec(text: Option<&str>, calls: Vec<FakeCall>) -> ReplySpec {
    ReplySpec {
        text: text.map(str::to_string),
        calls,
        pieces: 4,
        finish: None,
        usage: Some((10, 5)),
        crlf: false,
        comments: false,
        ending: Ending::Done,
    }
}

pub(crate) fn write_head(
    out: &mut TcpStream,
    status: u16,
    content_type: &str,
    headers: &[(String, String)],
    length: Option<usize>,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nConnection: close\r\n",
        reason(status)
    );
    match length {
        Some(n) => head.push_str(&format!("Content-Length: {n}\r\n")),
        None => head.push_str("Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\n"),
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    out.flush()
}

pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

pub(crate) fn write_status(
    out: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> io::Result<()> {
    let trimmed = body.trim_start();
    let content_type = if trimmed.starts_with('{') || trimmed.starts_with('[') {
        "application/json"
    } else if trimmed.starts_with('<') {
        "text/html; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    write_head(out, status, content_type, headers, Some(body.len()))?;
    out.write_all(body.as_bytes())?;
    out.flush()
}

pub(crate) fn write_chunk(out: &mut TcpStream, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    out.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
    out.write_all(data)?;
    out.write_all(b"\r\n")?;
    out.flush()
}

pub(crate) fn end_body(out: &mut TcpStream) -> io::Result<()> {
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

/// Holds the connection without sending anything until the client goes, the server stops, or
/// [`SILENCE_BOUND`] passes.
pub(crate) fn hold(out: &mut TcpStream, stop: &AtomicBool) -> io::Result<()> {
    out.set_read_timeout(Some(Duration::from_millis(50)))?;
    let start = Instant::now();
    let mut buf = [0; 512];
    while !stop.load(Ordering::SeqCst) && start.elapsed() < SILENCE_BOUND {
        match out.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// `text` in `n` pieces of about equal length (none when it is empty).
pub(crate) fn split(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn chunk_json(choices: Value) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake",
        "system_fingerprint": "fake",
        "choices": choices,
    })
}

fn delta_json(delta: Value) -> Value {
    chunk_json(json!([{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": null }]))
}

fn natural_finish(spec: &ReplySpec) -> String {
    spec.finish.clone().unwrap_or_else(|| {
        if spec.calls.is_empty() {
            "stop".to_string()
        } else {
            "tool_calls".to_string()
        }
    })
}

/// The events of a streamed reply's content, first chunk to last call.
fn content_events(spec: &ReplySpec) -> Vec<Value> {
    let mut events = vec![delta_json(json!({ "role": "assistant", "content": null }))];
    for piece in split(spec.text.as_deref().unwrap_or(""), spec.pieces) {
        events.push(delta_json(json!({ "content": piece })));
    }
    for call in &spec.calls {
        events.push(delta_json(json!({
            "content": "",
            "tool_calls": [{ "index": call.index, "id": call.id, "type": "function",
                             "function": { "name": call.name, "arguments": "" } }],
        })));
        for piece in split(&call.arguments, spec.pieces) {
            events.push(delta_json(json!({
                "tool_calls": [{ "index": call.index, "function": { "arguments": piece } }],
            })));
        }
    }
    events
}

fn write_stream(out: &mut TcpStream, spec: &ReplySpec, shared: &Shared<Script>) -> io::Result<()> {
    write_head(out, 200, "text/event-stream", &[], None)?;
    let nl = if spec.crlf { "\r\n" } else { "\n" };
    let send = |out: &mut TcpStream, data: &str| {
        let mut text = String::new();
        if spec.comments {
            text.push_str(&format!(": keep-alive{nl}"));
        }
        text.push_str(&format!("data: {data}{nl}{nl}"));
        write_chunk(out, text.as_bytes())
    };
    for event in content_events(spec) {
        send(out, &event.to_string())?;
    }
    match spec.ending {
        Ending::Dropped => return end_body(out),
        // Returning without the terminator closes the connection mid-body.
        Ending::Cut => return Ok(()),
        Ending::Silent => return hold(out, &shared.stop),
        Ending::Done | Ending::NoDone => {}
    }
    let finish = chunk_json(json!([{ "index": 0, "delta": {}, "logprobs": null,
                                     "finish_reason": natural_finish(spec) }]));
    send(out, &finish.to_string())?;
    if let Some((prompt, completion)) = spec.usage {
        let mut usage = chunk_json(json!([]));
        usage["usage"] = usage_json(prompt, completion);
        send(out, &usage.to_string())?;
    }
    if spec.ending == Ending::Done {
        send(out, "[DONE]")?;
    }
    end_body(out)
}

fn usage_json(prompt: u64, completion: u64) -> Value {
    json!({ "prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion })
}

fn write_whole(out: &mut TcpStream, spec: &ReplySpec, shared: &Shared<Script>) -> io::Result<()> {
    let mut message = json!({ "role": "assistant", "content": spec.text });
    if !spec.calls.is_empty() {
        message["tool_calls"] = spec
            .calls
            .iter()
            .map(|c| {
                json!({ "id": c.id, "type": "function",
                        "function": { "name": c.name, "arguments": c.arguments } })
            })
            .collect();
    }
    let mut body = json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{ "index": 0, "message": message, "finish_reason": natural_finish(spec) }],
    });
    if let Some((prompt, completion)) = spec.usage {
        body["usage"] = usage_json(prompt, completion);
    }
    let body = body.to_string();
    match spec.ending {
        Ending::Done | Ending::NoDone => write_status(out, 200, &[], &body),
        Ending::Dropped | Ending::Cut => {
            write_head(out, 200, "application/json", &[], Some(body.len()))?;
            out.write_all(&body.as_bytes()[..body.len() / 2])?;
            out.flush()
        }
        Ending::Silent => {
            write_head(out, 200, "application/json", &[], Some(body.len()))?;
            hold(out, &shared.stop)
        }
    }
}

fn write_endless(
    out: &mut TcpStream,
    max_chunks: usize,
    every: Duration,
    shared: &Shared<Script>,
) -> io::Result<()> {
    write_head(out, 200, "text/event-stream", &[], None)?;
    let first = delta_json(json!({ "role": "assistant", "content": null }));
    write_chunk(out, format!("data: {first}\n\n").as_bytes())?;
    for n in 0..max_chunks {
        if shared.stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        let event = delta_json(json!({ "content": format!("tick {n} ") }));
        // A failed write means the client went away: the stream ends there.
        write_chunk(out, format!("data: {event}\n\n").as_bytes())?;
        std::thread::sleep(every);
    }
    let finish = chunk_json(json!([{ "index": 0, "delta": {}, "finish_reason": "stop" }]));
    write_chunk(
        out,
        format!("data: {finish}\n\ndata: [DONE]\n\n").as_bytes(),
    )?;
    end_body(out)
}
