//! The local LLM (docs/local-llm.md: Qwen2.5-Coder-0.5B-Instruct behind llama.cpp's
//! OpenAI-compatible server, started by `tests/llm/serve.py`) behaves as the chat host needs: a
//! request offering a tool gets a structured tool call back, a plain request gets text and token
//! usage, and katari-chat's OpenAI client streams a whole tool round trip from it. Only structure
//! is asserted, never wording. The model must be installed (`tests/peers/install.sh`); without
//! it these tests fail, they are never skipped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use katari_chat::llm::openai::{OpenAi, OpenAiConfig};
use katari_chat::llm::{Delta, Provider, Request, Sampling, ToolSpec};
use katari_chat::message::Message;
use katari_tests::peers::{LOCAL_LLM_MODEL, Peer, start_local_llm};
use serde_json::{Value, json};

/// One model at a time: two servers generating at once on two cores slow each other down
/// several times over.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const SYSTEM: &str = "You are a helpful assistant.";
const QUESTION: &str = "How many words are in the text 'the quick brown fox jumps'?";

fn word_count_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "text": { "type": "string", "description": "The text to count." } },
        "required": ["text"],
    })
}

/// Sends one JSON request over plain HTTP/1.1 and returns the status and the JSON body.
fn post_json(peer: &Peer, path: &str, body: &Value) -> (u16, Value) {
    let body = body.to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", peer.port)).expect("connect to the LLM");
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .expect("set a read timeout");
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        peer.port,
        body.len()
    )
    .expect("send the request");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the response");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response with a header block");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut payload = raw[split + 4..].to_vec();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        payload = dechunk(&payload);
    }
    let json = serde_json::from_slice(&payload).unwrap_or_else(|e| {
        panic!(
            "HTTP {status}: the body is not JSON ({e}): {}",
            String::from_utf8_lossy(&payload)
        )
    });
    (status, json)
}

/// Decodes a chunked transfer encoding.
fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a chunk size line");
        let size_text = String::from_utf8_lossy(&data[..line_end]).to_string();
        let size_text = size_text.split(';').next().unwrap_or("").trim().to_string();
        let size = usize::from_str_radix(&size_text, 16).expect("a hexadecimal chunk size");
        data = &data[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

fn chat(peer: &Peer, body: Value) -> Value {
    let (status, reply) = post_json(peer, "/v1/chat/completions", &body);
    assert_eq!(status, 200, "the LLM answered HTTP {status}: {reply}");
    reply
}

#[test]
fn offered_tool_comes_back_as_a_tool_call_and_plain_request_as_text_with_usage() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let llm = start_local_llm();
    eprintln!(
        "local LLM ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // One tool offered: the reply is a call of it, with arguments that parse as an object.
    let asked = Instant::now();
    let reply = chat(
        &llm,
        json!({
            "model": LOCAL_LLM_MODEL,
            "messages": [
                { "role": "system", "content": SYSTEM },
                { "role": "user", "content": QUESTION },
            ],
            "tools": [{ "type": "function", "function": {
                "name": "word_count",
                "description": "Counts the words in a text.",
                "parameters": word_count_schema(),
            }}],
            "temperature": 0,
            "seed": 42,
            "max_tokens": 128,
        }),
    );
    eprintln!("tool call in {:.2} s", asked.elapsed().as_secs_f64());
    let choice = &reply["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls", "reply: {reply}");
    let calls = choice["message"]["tool_calls"]
        .as_array()
        .unwrap_or_else(|| panic!("no tool_calls in {reply}"));
    assert!(!calls.is_empty(), "empty tool_calls in {reply}");
    let call = &calls[0];
    assert_eq!(call["type"], "function", "reply: {reply}");
    assert!(
        call["id"].as_str().is_some_and(|id| !id.is_empty()),
        "a call without an id: {reply}"
    );
    assert_eq!(call["function"]["name"], "word_count", "reply: {reply}");
    let arguments = call["function"]["arguments"]
        .as_str()
        .unwrap_or_else(|| panic!("arguments are not a JSON string: {reply}"));
    let arguments: Value = serde_json::from_str(arguments)
        .unwrap_or_else(|e| panic!("arguments {arguments:?} do not parse: {e}"));
    assert!(
        arguments.is_object(),
        "arguments {arguments} are not an object"
    );

    // No tools: plain text and token counts.
    let reply = chat(
        &llm,
        json!({
            "model": LOCAL_LLM_MODEL,
            "messages": [
                { "role": "system", "content": SYSTEM },
                { "role": "user", "content": "Say hello in one short sentence." },
            ],
            "temperature": 0,
            "seed": 42,
            "max_tokens": 64,
        }),
    );
    let text = reply["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content in {reply}"));
    assert!(!text.trim().is_empty(), "empty text in {reply}");
    let usage = reply["usage"]
        .as_object()
        .unwrap_or_else(|| panic!("no usage object in {reply}"));
    for key in ["prompt_tokens", "completion_tokens"] {
        assert!(
            usage
                .get(key)
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 0),
            "usage.{key} is not a positive count: {reply}"
        );
    }
    assert_eq!(reply["model"], LOCAL_LLM_MODEL, "reply: {reply}");
}

#[test]
fn chat_client_streams_a_tool_round_trip() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let llm = start_local_llm();
    let provider = OpenAi::new(OpenAiConfig {
        name: "local".into(),
        base_url: llm.local_llm_base_url(),
        api_key: None,
        headers: Vec::new(),
        secrets: Vec::new(),
        connect_timeout_secs: 10,
        request_timeout_secs: 300,
        stream_idle_timeout_secs: 120,
    })
    .expect("an OpenAI client");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let mut request = Request {
        model: LOCAL_LLM_MODEL.into(),
        system: Some(SYSTEM.into()),
        messages: vec![Message::user(QUESTION)],
        tools: vec![ToolSpec {
            name: "kt_tools_word_count".into(),
            description: "Counts the words in a text.".into(),
            parameters: word_count_schema(),
        }],
        sampling: Sampling {
            temperature: Some(0.0),
            seed: Some(42),
            max_tokens: Some(128),
            ..Sampling::default()
        },
        stream: true,
    };

    // Round one: the streamed reply is a call of the offered tool.
    let asked = Instant::now();
    let mut deltas = Vec::new();
    let reply = runtime
        .block_on(provider.complete(&request, &mut |d| deltas.push(d)))
        .unwrap_or_else(|e| panic!("the first request failed: {e}"));
    eprintln!(
        "streamed tool call in {:.2} s",
        asked.elapsed().as_secs_f64()
    );
    assert_eq!(
        reply.finish_reason.as_deref(),
        Some("tool_calls"),
        "{reply:?}"
    );
    assert_eq!(reply.tool_calls.len(), 1, "{reply:?}");
    let call = reply.tool_calls[0].clone();
    assert_eq!(call.name, "kt_tools_word_count", "{reply:?}");
    let arguments: Value = serde_json::from_str(&call.arguments)
        .unwrap_or_else(|e| panic!("arguments {:?} do not parse: {e}", call.arguments));
    assert!(
        arguments.is_object(),
        "arguments {arguments} are not an object"
    );
    assert!(
        deltas
            .iter()
            .any(|d| matches!(d, Delta::ToolCall { name, .. } if *name == call.name)),
        "no tool-call delta among {deltas:?}"
    );
    assert!(reply.usage.is_some(), "no usage in {reply:?}");

    // Round two: with the result shown, the model answers in text.
    request
        .messages
        .push(Message::assistant(reply.text.clone(), vec![call.clone()]));
    request
        .messages
        .push(Message::tool(call.id.clone(), r#"{"result":5}"#));
    let asked = Instant::now();
    let mut deltas = Vec::new();
    let reply = runtime
        .block_on(provider.complete(&request, &mut |d| deltas.push(d)))
        .unwrap_or_else(|e| panic!("the second request failed: {e}"));
    eprintln!(
        "answer after the result in {:.2} s",
        asked.elapsed().as_secs_f64()
    );
    assert!(reply.tool_calls.is_empty(), "{reply:?}");
    assert!(
        reply.text.as_deref().is_some_and(|t| !t.trim().is_empty()),
        "no text in {reply:?}"
    );
    assert!(
        deltas.iter().any(|d| matches!(d, Delta::Text(_))),
        "no text delta among {deltas:?}"
    );
    let usage = reply
        .usage
        .unwrap_or_else(|| panic!("no usage in {reply:?}"));
    assert!(
        usage.prompt_tokens > 0 && usage.completion_tokens > 0,
        "{usage:?}"
    );
}
