//! A FAKE Anthropic Messages API server, for fault-injection tests only: it is not a model and
//! says so (every message's `model` is `"fake"`). It speaks the documented wire format of
//! `POST /v1/messages`: a streamed reply is `message_start`, `ping`, then per content block
//! `content_block_start`, `content_block_delta`s (`text_delta`, or `input_json_delta` with a tool
//! input split across events) and `content_block_stop`, then `message_delta` (stop reason and
//! usage) and `message_stop`; a non-streamed reply is one message object. It listens on
//! `127.0.0.1` on a port the OS chooses, records every request, and answers from a queue of
//! [`Script`]s, including the faults a real endpoint shows now and then: HTTP errors with
//! Anthropic error bodies and `retry-after` headers (429, 529 overloaded, 401), an `error` event
//! in the middle of a stream, streams dropped before `message_stop`, connections cut mid-body,
//! and a reply stopped by `max_tokens` in the middle of a tool input.
//!
//! **When the queue is empty** it answers a plain text reply `"ok"`. A request to any other path
//! gets HTTP 404 with an Anthropic error body and consumes no script.
//!
//! The server asserts nothing: tests read what it recorded ([`FakeAnthropic::requests`],
//! [`FakeAnthropic::recorded`]) and check it themselves, the pairing of `tool_use` and
//! `tool_result` blocks with [`check_pairing`]. It shares the plain blocking server of
//! [`crate::fake_llm`]: one thread per connection, every response `Connection: close`; it stops
//! when dropped.

use std::io::{self, Write};
use std::net::TcpStream;

use serde_json::{Value, json};

use crate::fake_llm::{
    FakeServer, Shared, end_body, hold, lock, read_request, split, write_chunk, write_head,
    write_status,
};

/// One content block of a scripted reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    Text(String),
    /// A `tool_use` block; `input` is sent as it is, split across `input_json_delta` events, so
    /// it need not parse.
    ToolUse {
        id: String,
        name: String,
        input: String,
    },
}

impl Block {
    pub fn text(text: &str) -> Block {
        Block::Text(text.to_string())
    }

    pub fn tool_use(id: &str, name: &str, input: &str) -> Block {
        Block::ToolUse {
            id: id.to_string(),
            name: name.to_string(),
            input: input.to_string(),
        }
    }
}

/// How a streamed reply ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `message_delta` and `message_stop`: a whole reply.
    Done,
    /// The body ends cleanly right after the content: no `message_delta`, no `message_stop`.
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
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

#[derive(Clone, Debug)]
struct ReplySpec {
    blocks: Vec<Block>,
    /// How many delta events each block's text or input is split into.
    pieces: usize,
    stop_reason: Option<String>,
    /// Input tokens, output tokens, cache reads, cache writes.
    usage: (u64, u64, u64, u64),
    ending: Ending,
    /// An `error` event sent after the content instead of the message's end.
    error: Option<(String, String)>,
}

impl Script {
    /// A reply of these content blocks, each block's text or input split into 3 delta events
    /// unless [`Script::chunks`] says otherwise; stop reason `tool_use` when a block is one, else
    /// `end_turn`.
    pub fn blocks(blocks: Vec<Block>) -> Script {
        Script(Kind::Reply(ReplySpec {
            blocks,
            pieces: 3,
            stop_reason: None,
            usage: (10, 5, 0, 0),
            ending: Ending::Done,
            error: None,
        }))
    }

    /// A text reply.
    pub fn text(text: &str) -> Script {
        Script::blocks(vec![Block::text(text)])
    }

    /// An HTTP status with a body (its content type guessed from it); add headers with
    /// [`Script::header`].
    pub fn status(status: u16, body: &str) -> Script {
        Script(Kind::Status {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        })
    }

    /// An HTTP status with the API's error body: `{"type": "error", "error": {"type": …,
    /// "message": …}}`.
    pub fn api_error(status: u16, kind: &str, message: &str) -> Script {
        let body = json!({"type": "error", "error": {"type": kind, "message": message}});
        Script::status(status, &body.to_string())
    }

    /// Adds a response header to a status answer (`retry-after`, …).
    pub fn header(mut self, name: &str, value: &str) -> Script {
        if let Kind::Status { headers, .. } = &mut self.0 {
            headers.push((name.to_string(), value.to_string()));
        }
        self
    }

    /// Splits each block's text or input into `n` delta events (at least 1).
    pub fn chunks(mut self, n: usize) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.pieces = n.max(1);
        }
        self
    }

    /// The stop reason to send (`max_tokens`, `stop_sequence`, …) instead of the natural one.
    pub fn stop_reason(mut self, reason: &str) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.stop_reason = Some(reason.to_string());
        }
        self
    }

    /// The usage to report: uncached input tokens and output tokens (default 10 and 5).
    pub fn usage(mut self, input: u64, output: u64) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.usage.0 = input;
            spec.usage.1 = output;
        }
        self
    }

    /// Prompt-cache reads and writes to report (default none).
    pub fn cache(mut self, read: u64, write: u64) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.usage.2 = read;
            spec.usage.3 = write;
        }
        self
    }

    /// How the stream ends (default [`Ending::Done`]).
    pub fn ending(mut self, ending: Ending) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.ending = ending;
        }
        self
    }

    /// After the content, an `error` event of this type and message ends the stream.
    pub fn error_event(mut self, kind: &str, message: &str) -> Script {
        if let Kind::Reply(spec) = &mut self.0 {
            spec.error = Some((kind.to_string(), message.to_string()));
        }
        self
    }
}

/// The fake Messages API server; it stops when dropped.
pub type FakeAnthropic = FakeServer<Script>;

impl FakeServer<Script> {
    /// Starts the server on `127.0.0.1` with an OS-chosen port.
    pub fn start() -> FakeAnthropic {
        FakeServer::listening(serve)
    }

    /// `http://127.0.0.1:PORT`, the `base_url` to configure (requests go to `/v1/messages`).
    pub fn base_url(&self) -> String {
        self.origin()
    }
}

/// The pairing rule of the Messages API in a request body: every `tool_use` block of an
/// assistant turn is answered by exactly one `tool_result` block in the user turn right after
/// it, and every `tool_result` answers a `tool_use` of the assistant turn right before it.
/// `Err` says what is wrong.
pub fn check_pairing(body: &Value) -> Result<(), String> {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let blocks = |m: &Value| -> Vec<Value> { m["content"].as_array().cloned().unwrap_or_default() };
    for (i, m) in messages.iter().enumerate() {
        let previous: Vec<String> = match i.checked_sub(1).map(|p| &messages[p]) {
            Some(p) if p["role"] == "assistant" => blocks(p)
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .filter_map(|b| b["id"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        let answered: Vec<String> = blocks(m)
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .filter_map(|b| b["tool_use_id"].as_str().map(str::to_string))
            .collect();
        if m["role"] == "assistant" && !answered.is_empty() {
            return Err(format!(
                "message {i}: tool_result blocks in an assistant turn"
            ));
        }
        for id in &answered {
            if !previous.contains(id) {
                return Err(format!(
                    "message {i}: tool_result for '{id}' answers no tool_use of the turn before"
                ));
            }
        }
        let mut sorted = answered.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != answered.len() {
            return Err(format!("message {i}: a tool_use is answered twice"));
        }
        if m["role"] == "user" {
            for id in &previous {
                if !answered.contains(id) {
                    return Err(format!("message {i}: tool_use '{id}' has no tool_result"));
                }
            }
        }
        if m["role"] == "assistant" && i + 1 == messages.len() {
            let open = blocks(m).iter().any(|b| b["type"] == "tool_use");
            if open {
                return Err(format!("message {i}: tool_use blocks end the request"));
            }
        }
    }
    Ok(())
}

/// Answers one connection: reads the request, records it, writes the scripted answer.
fn serve(stream: TcpStream, shared: &Shared<Script>) -> io::Result<()> {
    let Some(request) = read_request(&stream)? else {
        return Ok(());
    };
    let streamed = request.body["stream"].as_bool().unwrap_or(false);
    let is_messages = request.method == "POST" && request.path.ends_with("/v1/messages");
    let path = request.path.clone();
    // One lock order (queue, then records) so the scripts answer requests in the order recorded.
    let script = {
        let mut queue = lock(&shared.queue);
        lock(&shared.recorded).push(request);
        is_messages.then(|| queue.pop_front()).flatten()
    };
    let mut out = stream;
    if !is_messages {
        let body = json!({"type": "error", "error": {"type": "not_found_error", "message": format!("The fake Anthropic API has no route {path}")}});
        return write_status(&mut out, 404, &[], &body.to_string());
    }
    match script.map_or_else(|| Script::text("ok").0, |s| s.0) {
        Kind::Reply(spec) if streamed => write_stream(&mut out, &spec, shared),
        Kind::Reply(spec) => {
            let body = message_json(&spec);
            write_status(&mut out, 200, &[], &body.to_string())
        }
        Kind::Status {
            status,
            headers,
            body,
        } => write_status(&mut out, status, &headers, &body),
    }
}

fn stop_reason(spec: &ReplySpec) -> String {
    spec.stop_reason.clone().unwrap_or_else(|| {
        if spec
            .blocks
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }))
        {
            "tool_use".to_string()
        } else {
            "end_turn".to_string()
        }
    })
}

/// The usage of `message_start` (the input side and one output token, as the API sends it).
fn start_usage(spec: &ReplySpec) -> Value {
    let (input, _, read, write) = spec.usage;
    json!({ "input_tokens": input, "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read, "output_tokens": 1 })
}

/// A non-streamed reply: the whole message object.
fn message_json(spec: &ReplySpec) -> Value {
    let content: Vec<Value> = spec
        .blocks
        .iter()
        .map(|b| match b {
            Block::Text(text) => json!({ "type": "text", "text": text }),
            Block::ToolUse { id, name, input } => json!({
                "type": "tool_use", "id": id, "name": name,
                "input": serde_json::from_str::<Value>(input).unwrap_or_else(|_| json!({})),
            }),
        })
        .collect();
    let mut usage = start_usage(spec);
    usage["output_tokens"] = json!(spec.usage.1);
    json!({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
        "content": content, "stop_reason": stop_reason(spec), "stop_sequence": null,
        "usage": usage,
    })
}

fn write_stream(out: &mut TcpStream, spec: &ReplySpec, shared: &Shared<Script>) -> io::Result<()> {
    write_head(out, 200, "text/event-stream; charset=utf-8", &[], None)?;
    let send = |out: &mut TcpStream, data: &Value| {
        let kind = data["type"].as_str().unwrap_or("message");
        write_chunk(out, format!("event: {kind}\ndata: {data}\n\n").as_bytes())
    };
    send(
        out,
        &json!({ "type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage(spec),
        }}),
    )?;
    send(out, &json!({ "type": "ping" }))?;
    for (index, block) in spec.blocks.iter().enumerate() {
        let (start, pieces, delta) = match block {
            Block::Text(text) => (
                json!({ "type": "text", "text": "" }),
                split(text, spec.pieces),
                "text_delta",
            ),
            Block::ToolUse { id, name, input } => (
                json!({ "type": "tool_use", "id": id, "name": name, "input": {} }),
                split(input, spec.pieces),
                "input_json_delta",
            ),
        };
        send(
            out,
            &json!({ "type": "content_block_start", "index": index, "content_block": start }),
        )?;
        for piece in pieces {
            let delta = if delta == "text_delta" {
                json!({ "type": delta, "text": piece })
            } else {
                json!({ "type": delta, "partial_json": piece })
            };
            send(
                out,
                &json!({ "type": "content_block_delta", "index": index, "delta": delta }),
            )?;
        }
        send(
            out,
            &json!({ "type": "content_block_stop", "index": index }),
        )?;
    }
    if let Some((kind, message)) = &spec.error {
        send(
            out,
            &json!({ "type": "error", "error": { "type": kind, "message": message } }),
        )?;
        return end_body(out);
    }
    match spec.ending {
        Ending::Dropped => return end_body(out),
        // Returning without the terminator closes the connection mid-body.
        Ending::Cut => return Ok(()),
        Ending::Silent => return hold(out, &shared.stop),
        Ending::Done => {}
    }
    send(
        out,
        &json!({ "type": "message_delta",
                 "delta": { "stop_reason": stop_reason(spec), "stop_sequence": null },
                 "usage": { "output_tokens": spec.usage.1 } }),
    )?;
    send(out, &json!({ "type": "message_stop" }))?;
    out.flush()?;
    end_body(out)
}
