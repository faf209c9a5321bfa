//! The `openai` provider against the scripted fake LLM (`katari_tests::fake_llm`): the request
//! body, streaming and its tolerances (`host.md` §8.2), retries (§8.3), error messages (§8.4)
//! and the bounds of `llm::openai`.

use std::time::Duration;

use katari_chat::llm::openai::{OpenAi, OpenAiConfig};
use katari_chat::llm::{Delta, Reply, Request, Sampling, ToolSpec, Usage};
use katari_chat::message::{Message, check_pairing};
use katari_tests::fake_llm::{Ending, FakeCall, FakeLlm, Script};
use katari_tests::provider::{call, complete, err, ok, streamed_text};
use serde_json::{Value, json};

fn config(base_url: &str) -> OpenAiConfig {
    OpenAiConfig {
        name: "fake".into(),
        base_url: base_url.into(),
        api_key: None,
        headers: Vec::new(),
        secrets: Vec::new(),
        connect_timeout_secs: 5,
        request_timeout_secs: 120,
        stream_idle_timeout_secs: 30,
    }
}

fn client(fake: &FakeLlm) -> OpenAi {
    OpenAi::new(config(&fake.base_url())).expect("a client")
}

fn request(stream: bool) -> Request {
    Request {
        model: "m".into(),
        system: Some("You are terse.".into()),
        messages: vec![Message::user("hi")],
        tools: Vec::new(),
        sampling: Sampling::default(),
        stream,
    }
}

#[tokio::test]
async fn a_text_reply_streams_in_pieces_with_usage_from_the_empty_choices_chunk() {
    let fake = FakeLlm::start();
    fake.push(Script::text("Hello there, world.").chunks(5).usage(812, 64));
    let (result, deltas) = complete(&client(&fake), &request(true)).await;
    let reply = ok(result);
    assert_eq!(reply.text.as_deref(), Some("Hello there, world."));
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(
        reply.usage,
        Some(Usage {
            prompt_tokens: 812,
            completion_tokens: 64,
            ..Usage::default()
        })
    );
    assert!(reply.tool_calls.is_empty());
    // The first chunk's `content: null` reports nothing; each piece is reported as it came.
    assert_eq!(deltas.len(), 5);
    assert_eq!(streamed_text(&deltas), "Hello there, world.");
}

#[tokio::test]
async fn sse_comments_and_crlf_line_ends_are_accepted() {
    let fake = FakeLlm::start();
    fake.push(Script::text("one two three").comments());
    fake.push(Script::text("four five").crlf());
    fake.push(Script::text("six").crlf().comments().chunks(1));
    let client = client(&fake);
    for expected in ["one two three", "four five", "six"] {
        let (result, deltas) = complete(&client, &request(true)).await;
        assert_eq!(ok(result).text.as_deref(), Some(expected));
        assert_eq!(streamed_text(&deltas), expected);
    }
}

#[tokio::test]
async fn a_reply_without_usage_has_none_and_an_empty_queue_answers_ok() {
    let fake = FakeLlm::start();
    fake.push(Script::text("quiet").no_usage());
    let client = client(&fake);
    let reply = ok(complete(&client, &request(true)).await.0);
    assert_eq!(reply.usage, None);
    let reply = ok(complete(&client, &request(true)).await.0);
    assert_eq!(reply.text.as_deref(), Some("ok"));
}

#[tokio::test]
async fn text_then_a_tool_call_with_an_id_of_any_form() {
    let fake = FakeLlm::start();
    let arguments = r#"{"path": "/tmp/notes.txt", "lines": 20}"#;
    fake.push(
        Script::text_and_tool_calls(
            "Let me look.",
            vec![FakeCall::new(0, "fc-7F3a_9", "read_file", arguments)],
        )
        .chunks(6),
    );
    let (result, deltas) = complete(&client(&fake), &request(true)).await;
    let reply = ok(result);
    // The `content: ""` sent beside the tool call adds no text.
    assert_eq!(reply.text.as_deref(), Some("Let me look."));
    assert_eq!(
        reply.tool_calls,
        vec![call("fc-7F3a_9", "read_file", arguments)]
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    // Text first, then the call, announced once when its name is known.
    let last = deltas.last().cloned();
    assert_eq!(
        last,
        Some(Delta::ToolCall {
            id: "fc-7F3a_9".into(),
            name: "read_file".into()
        })
    );
    assert_eq!(streamed_text(&deltas), "Let me look.");
    assert_eq!(
        deltas
            .iter()
            .filter(|d| matches!(d, Delta::ToolCall { .. }))
            .count(),
        1
    );
}

#[tokio::test]
async fn parallel_tool_calls_keep_their_order() {
    let fake = FakeLlm::start();
    fake.push(Script::tool_calls(vec![
        FakeCall::new(0, "a1", "search", r#"{"q": "rust"}"#),
        FakeCall::new(1, "b2", "search", r#"{"q": "sse"}"#),
        FakeCall::new(2, "c3", "fetch", r#"{"url": "http://x"}"#),
    ]));
    let (result, deltas) = complete(&client(&fake), &request(true)).await;
    let reply = ok(result);
    assert_eq!(
        reply.tool_calls,
        vec![
            call("a1", "search", r#"{"q": "rust"}"#),
            call("b2", "search", r#"{"q": "sse"}"#),
            call("c3", "fetch", r#"{"url": "http://x"}"#),
        ]
    );
    assert_eq!(reply.text, None);
    let ids: Vec<&str> = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::ToolCall { id, .. } => Some(id.as_str()),
            Delta::Text(_) => None,
        })
        .collect();
    assert_eq!(ids, ["a1", "b2", "c3"]);
}

#[tokio::test]
async fn a_new_id_at_a_reused_index_starts_a_new_call() {
    let fake = FakeLlm::start();
    fake.push(Script::tool_calls(vec![
        FakeCall::new(0, "x", "first", r#"{"n": 1}"#),
        FakeCall::new(0, "y", "second", r#"{"n": 2}"#),
    ]));
    let reply = ok(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        reply.tool_calls,
        vec![
            call("x", "first", r#"{"n": 1}"#),
            call("y", "second", r#"{"n": 2}"#)
        ]
    );
}

#[tokio::test]
async fn arguments_split_across_many_chunks_are_joined() {
    let fake = FakeLlm::start();
    let items: Vec<String> = (0..60).map(|i| format!("item-{i}")).collect();
    let arguments = json!({ "items": items, "note": "ünïcödé ✓" }).to_string();
    fake.push(
        Script::tool_calls(vec![FakeCall::new(0, "call_1", "store", &arguments)])
            .chunks(arguments.chars().count()),
    );
    let reply = ok(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(reply.tool_calls, vec![call("call_1", "store", &arguments)]);
    let parsed: Value = serde_json::from_str(&reply.tool_calls[0].arguments).expect("JSON");
    assert_eq!(parsed["note"], "ünïcödé ✓");
}

#[tokio::test]
async fn a_length_stop_inside_arguments_returns_the_raw_cut_arguments() {
    let fake = FakeLlm::start();
    let cut = r#"{"path": "/tmp/rep"#;
    fake.push(Script::tool_calls(vec![FakeCall::new(0, "c1", "write_file", cut)]).finish("length"));
    let reply = ok(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
    assert_eq!(reply.tool_calls, vec![call("c1", "write_file", cut)]);
    assert!(serde_json::from_str::<Value>(&reply.tool_calls[0].arguments).is_err());
}

#[tokio::test]
async fn a_finish_reason_without_done_is_a_whole_reply() {
    let fake = FakeLlm::start();
    fake.push(Script::text("complete anyway").ending(Ending::NoDone));
    let reply = ok(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(reply.text.as_deref(), Some("complete anyway"));
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
}

#[tokio::test]
async fn a_stream_dropped_before_done_fails_after_output() {
    let fake = FakeLlm::start();
    fake.push(Script::text("half a thou").ending(Ending::Dropped));
    let (result, deltas) = complete(&client(&fake), &request(true)).await;
    let e = err(result);
    assert_eq!(
        e.message,
        "LLM 'fake' ended its reply stream before finishing it (no [DONE] and no finish reason)."
    );
    assert!(e.after_output);
    assert_eq!(streamed_text(&deltas), "half a thou");
}

#[tokio::test]
async fn a_connection_cut_mid_stream_fails_after_output() {
    let fake = FakeLlm::start();
    fake.push(Script::text("cut short").ending(Ending::Cut));
    let (result, _) = complete(&client(&fake), &request(true)).await;
    let e = err(result);
    assert!(
        e.message
            .starts_with("LLM 'fake': the connection broke during the reply ("),
        "{}",
        e.message
    );
    assert!(e.after_output);
}

#[tokio::test]
async fn a_silent_stream_fails_on_the_idle_timeout() {
    let fake = FakeLlm::start();
    fake.push(Script::text("then nothing").ending(Ending::Silent));
    let mut config = config(&fake.base_url());
    config.stream_idle_timeout_secs = 1;
    let client = OpenAi::new(config).expect("a client");
    let (result, deltas) = complete(&client, &request(true)).await;
    let e = err(result);
    assert_eq!(
        e.message,
        "LLM 'fake' sent nothing for 1 s while streaming its reply. Raise stream_idle_timeout_secs in [llm.fake] if the model needs longer."
    );
    assert!(e.after_output);
    assert_eq!(streamed_text(&deltas), "then nothing");
}

#[tokio::test]
async fn a_stream_that_never_ends_fails_on_the_request_timeout() {
    let fake = FakeLlm::start();
    fake.push(Script::endless(10_000, Duration::from_millis(50)));
    let mut config = config(&fake.base_url());
    config.request_timeout_secs = 1;
    let client = OpenAi::new(config).expect("a client");
    let (result, deltas) = complete(&client, &request(true)).await;
    let e = err(result);
    assert_eq!(
        e.message,
        "LLM 'fake' did not finish within 1 s. Raise request_timeout_secs in [llm.fake] if the model needs longer."
    );
    assert!(e.after_output);
    assert!(streamed_text(&deltas).starts_with("tick 0 "));
}

#[tokio::test]
async fn http_429_is_retried_after_retry_after() {
    let fake = FakeLlm::start();
    fake.push(
        Script::status(429, r#"{"error": {"message": "Rate limit reached"}}"#)
            .header("Retry-After", "1"),
    );
    fake.push(Script::text("after the wait"));
    let (result, _) = complete(&client(&fake), &request(true)).await;
    assert_eq!(ok(result).text.as_deref(), Some("after the wait"));
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(fake.requests()[0], fake.requests()[1]);
}

#[tokio::test]
async fn http_503_gives_up_after_three_retries() {
    let fake = FakeLlm::start();
    for _ in 0..4 {
        fake.push(Script::status(503, "overloaded").header("Retry-After", "0"));
    }
    fake.push(Script::text("never reached"));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'fake' is unavailable (HTTP 503) and still was after 3 retries. Check that the server is up and try again.\noverloaded"
    );
    assert!(!e.after_output);
    assert_eq!(fake.requests().len(), 4);
}

#[tokio::test]
async fn http_401_names_the_llm_and_the_fix_with_the_providers_message() {
    let fake = FakeLlm::start();
    fake.push(Script::status(
        401,
        r#"{"error": {"message": "Incorrect API key provided: sk-ab***yz.\u001b[31m", "type": "invalid_request_error"}}"#,
    ));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'fake' rejected the API key (HTTP 401). Check api_key_env or api_key in [llm.fake].\nIncorrect API key provided: sk-ab***yz.\u{1b}[31m"
    );
    // The provider keeps the text whole; the host sanitises it where a terminal shows it.
    assert!(!e.after_output);
    // Not retried.
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn http_500_with_an_html_body_gives_a_short_plain_line() {
    let fake = FakeLlm::start();
    fake.push(Script::status(
        500,
        "<html>\r\n<head><title>500 Internal Server Error</title></head>\r\n<body>\r\n<center><h1>500 Internal Server Error</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
    ));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'fake' failed with HTTP 500.\n500 Internal Server Error"
    );
}

#[tokio::test]
async fn a_long_error_body_is_cut_to_one_short_line() {
    let fake = FakeLlm::start();
    fake.push(Script::status(400, &"bad request ".repeat(10_000)));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    let (head, own) = e.message.split_once('\n').expect("two lines");
    assert_eq!(head, "LLM 'fake' failed with HTTP 400.");
    assert!(own.starts_with("bad request bad request"));
    assert!(own.ends_with('…'));
    assert!(own.chars().count() <= 301);
}

#[tokio::test]
async fn http_404_names_the_url_and_the_model() {
    let fake = FakeLlm::start();
    fake.push(Script::status(
        404,
        r#"{"error": {"message": "model 'm' not found"}}"#,
    ));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        format!(
            "LLM 'fake' has no such endpoint or model (HTTP 404): POST {}/chat/completions with model 'm'. Check base_url and model in [llm.fake].\nmodel 'm' not found",
            fake.base_url()
        )
    );
}

#[tokio::test]
async fn a_refused_connection_names_the_url_and_the_fix() {
    // A port that was just free: nothing listens there any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let base = format!("http://127.0.0.1:{port}/v1/");
    let client = OpenAi::new(config(&base)).expect("a client");
    let e = err(complete(&client, &request(true)).await.0);
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    assert!(
        e.message
            .starts_with(&format!("Could not connect to LLM 'fake' at {url} (")),
        "{}",
        e.message
    );
    assert!(
        e.message
            .ends_with("). Check that the server runs and base_url in [llm.fake]."),
        "{}",
        e.message
    );
    assert!(!e.after_output);
}

#[tokio::test]
async fn an_http_base_url_redirected_to_https_is_refused_with_the_fix() {
    // A plain-http server that sends every request to an https:// address: another scheme is
    // another origin, so the redirect is refused before anything is sent, naming both URLs.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    let port = listener.local_addr().expect("an address").port();
    std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Read, Write};
        if let Ok((stream, _)) = listener.accept() {
            let mut reader = BufReader::new(stream.try_clone().expect("clones"));
            let mut length = 0;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let _ = (&stream).write_all(
                format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: https://127.0.0.1:{port}/v1/chat/completions\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
                .as_bytes(),
            );
        }
    });
    let client = OpenAi::new(config(&format!("http://127.0.0.1:{port}/v1"))).expect("a client");
    let e = err(complete(&client, &request(true)).await.0);
    assert_eq!(
        e.message,
        format!(
            "LLM 'fake': http://127.0.0.1:{port}/v1/chat/completions redirected the request to https://127.0.0.1:{port}/v1/chat/completions, another origin; katari follows redirects only within the base URL's scheme, host and port, so the API key and the conversation were not sent there. If you trust that address, set base_url in [llm.fake] to it."
        )
    );
}

#[tokio::test]
async fn a_malformed_chunk_fails_the_request() {
    let fake = FakeLlm::start();
    fake.push(Script::raw([
        "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"fine \"}}]}\n\n",
        "data: {\"choices\": [{\"delta\": \n\n",
        "data: [DONE]\n\n",
    ]));
    let (result, deltas) = complete(&client(&fake), &request(true)).await;
    let e = err(result);
    let (head, own) = e.message.split_once('\n').expect("two lines");
    assert!(
        head.starts_with("LLM 'fake' sent a reply chunk that is not valid JSON ("),
        "{head}"
    );
    assert_eq!(own, r#"{"choices": [{"delta":"#);
    assert!(e.after_output);
    assert_eq!(streamed_text(&deltas), "fine ");
}

#[tokio::test]
async fn an_error_object_in_the_stream_fails_with_its_message() {
    let fake = FakeLlm::start();
    fake.push(Script::raw([
        "data: {\"error\": {\"message\": \"the model crashed\", \"code\": 500}}\n\n",
    ]));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'fake' reported an error instead of a reply.\nthe model crashed"
    );
}

#[tokio::test]
async fn a_json_answer_to_a_stream_request_is_accepted() {
    let fake = FakeLlm::start();
    fake.push(Script::json(json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"},
                     "finish_reason": "stop"}],
    })));
    let (result, deltas) = complete(&client(&fake), &request(true)).await;
    let reply = ok(result);
    assert_eq!(reply.text.as_deref(), Some("whole"));
    assert_eq!(reply.usage, None);
    assert_eq!(deltas, vec![Delta::Text("whole".into())]);
}

#[tokio::test]
async fn stream_false_sends_no_stream_options_and_parses_the_whole_reply() {
    let fake = FakeLlm::start();
    fake.push(
        Script::text_and_tool_calls(
            "Checking.",
            vec![
                FakeCall::new(0, "c1", "mcp_invoke_github", r#"{"tool": "list_checks"}"#),
                FakeCall::new(1, "c2", "get_secret", r#"{"key": "K"}"#),
            ],
        )
        .usage(812, 64),
    );
    let (result, deltas) = complete(&client(&fake), &request(false)).await;
    let reply = ok(result);
    assert_eq!(
        reply,
        Reply {
            text: Some("Checking.".into()),
            tool_calls: vec![
                call("c1", "mcp_invoke_github", r#"{"tool": "list_checks"}"#),
                call("c2", "get_secret", r#"{"key": "K"}"#),
            ],
            finish_reason: Some("tool_calls".into()),
            usage: Some(Usage {
                prompt_tokens: 812,
                completion_tokens: 64,
                ..Usage::default()
            }),
        }
    );
    assert_eq!(deltas.len(), 3);
    let body = &fake.requests()[0];
    assert_eq!(body["stream"], json!(false));
    assert!(body.get("stream_options").is_none());
    assert_eq!(
        fake.recorded()[0].header("accept"),
        Some("application/json")
    );
}

#[tokio::test]
async fn a_non_streamed_reply_that_is_not_json_fails() {
    let fake = FakeLlm::start();
    fake.push(Script::text("half").ending(Ending::Dropped));
    let e = err(complete(&client(&fake), &request(false)).await.0);
    assert!(
        e.message.starts_with("LLM 'fake': the connection broke")
            || e.message.starts_with("LLM 'fake' sent a reply from "),
        "{}",
        e.message
    );
    assert!(!e.after_output);
}

#[tokio::test]
async fn the_request_body_has_openais_shape() {
    let fake = FakeLlm::start();
    fake.push(Script::text("fine"));
    let mut config = config(&format!("{}/", fake.base_url()));
    config.api_key = Some("sk-test".into());
    config.headers = vec![("X-Team".into(), "payments".into())];
    let client = OpenAi::new(config).expect("a client");
    let mut extra = serde_json::Map::new();
    extra.insert("repetition_penalty".into(), json!(1.1));
    extra.insert("mode".into(), json!("fast"));
    extra.insert("stream".into(), json!(false));
    let request = Request {
        model: "qwen2.5-coder".into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::user("list the checks"),
            Message::assistant(
                None,
                vec![call("c1", "mcp_invoke_github", r#"{"tool":"list_checks"}"#)],
            ),
            Message::tool("c1", r#"{"checks": []}"#),
            Message::assistant(Some("None.".into()), vec![]),
            Message::user("and now?"),
        ],
        tools: vec![ToolSpec {
            name: "mcp_invoke_github".into(),
            description: "Invoke a tool of github.".into(),
            parameters: json!({"type": "object", "properties": {"tool": {"type": "string"}}}),
        }],
        sampling: Sampling {
            temperature: Some(0.2),
            top_p: Some(0.9),
            top_k: Some(40),
            max_tokens: Some(256),
            seed: Some(7),
            stop: vec!["END".into()],
            extra,
        },
        stream: true,
    };
    ok(complete(&client, &request).await.0);
    let recorded = fake.recorded();
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(recorded[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(recorded[0].header("x-team"), Some("payments"));
    assert_eq!(
        recorded[0].body,
        json!({
            "model": "qwen2.5-coder",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "list the checks"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "mcp_invoke_github", "arguments": "{\"tool\":\"list_checks\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "{\"checks\": []}"},
                {"role": "assistant", "content": "None."},
                {"role": "user", "content": "and now?"},
            ],
            "tools": [{"type": "function", "function": {
                "name": "mcp_invoke_github", "description": "Invoke a tool of github.",
                "parameters": {"type": "object", "properties": {"tool": {"type": "string"}}}}}],
            "temperature": 0.2,
            "top_p": 0.9,
            "max_tokens": 256,
            "seed": 7,
            "stop": ["END"],
            "repetition_penalty": 1.1,
            "mode": "fast",
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
    let histories = fake.requests_messages();
    assert_eq!(histories[0], request.messages);
    assert_eq!(check_pairing(&histories[0]), Ok(()));
}

#[tokio::test]
async fn a_bare_request_sends_no_system_tools_or_sampling_and_no_key() {
    let fake = FakeLlm::start();
    let client = client(&fake);
    let mut request = request(true);
    request.system = None;
    ok(complete(&client, &request).await.0);
    let recorded = fake.recorded();
    assert_eq!(recorded[0].header("authorization"), None);
    assert_eq!(
        recorded[0].body,
        json!({
            "model": "m",
            "messages": [{"role": "user", "content": "hi"}],
            "stream": true,
            "stream_options": {"include_usage": true},
        })
    );
}

#[tokio::test]
async fn a_ten_megabyte_reply_is_accepted_whole() {
    let fake = FakeLlm::start();
    let text: String = "abcdefghij".repeat(1024 * 1024);
    fake.push(Script::text(&text).chunks(160));
    let (result, deltas) = complete(&client(&fake), &request(true)).await;
    let reply = ok(result);
    assert_eq!(reply.text.as_ref().map(String::len), Some(10 * 1024 * 1024));
    assert!(reply.text == Some(text));
    assert_eq!(deltas.len(), 160);
}

#[tokio::test]
async fn a_reply_past_the_bound_fails_instead_of_growing() {
    let fake = FakeLlm::start();
    fake.push(Script::text(&"x".repeat(5000)).chunks(50));
    fake.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "c",
        "f",
        &"y".repeat(5000),
    )]));
    fake.push(Script::text(&"z".repeat(5000)));
    fake.push(Script::endless(100_000, Duration::from_millis(1)));
    let client = client(&fake).with_max_reply_bytes(1000);
    for stream in [true, true, false, true] {
        let e = err(complete(&client, &request(stream)).await.0);
        assert_eq!(
            e.message,
            "LLM 'fake' sent a reply larger than 1000 bytes; the request was stopped."
        );
    }
}

/// A client with an API key and a secret header, as `katari chat` builds one from
/// `secrets.toml`.
fn keyed_client(base_url: &str) -> OpenAi {
    let mut config = config(base_url);
    config.api_key = Some("sk-test-4f9a2c".into());
    config.headers = vec![("X-Api-Key".into(), "hdr-secret-77e1".into())];
    config.secrets = vec!["hdr-secret-77e1".into()];
    OpenAi::new(config).expect("a client")
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_the_other_server_gets_nothing() {
    // Fault injection: the configured endpoint redirects to a second loopback server on
    // another port (another origin), which would receive the key and the conversation.
    let other = FakeLlm::start();
    for status in [307, 302, 308] {
        let fake = FakeLlm::start();
        let target = format!("{}/chat/completions", other.base_url());
        fake.push(Script::status(status, "").header("Location", &target));
        let client = keyed_client(&fake.base_url());
        let e = err(complete(&client, &request(true)).await.0);
        assert_eq!(
            e.message,
            format!(
                "LLM 'fake': {}/chat/completions redirected the request to {target}, another origin; katari follows redirects only within the base URL's scheme, host and port, so the API key and the conversation were not sent there. If you trust that address, set base_url in [llm.fake] to it.",
                fake.base_url()
            )
        );
        assert!(!e.after_output);
        assert_eq!(fake.recorded().len(), 1, "HTTP {status}");
    }
    assert!(other.recorded().is_empty(), "{:?}", other.recorded());
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed_and_errors_name_the_url_that_failed() {
    let fake = FakeLlm::start();
    fake.push(Script::status(307, "").header("Location", "/v2/chat/completions"));
    fake.push(Script::text("moved"));
    let client = keyed_client(&fake.base_url());
    assert_eq!(
        ok(complete(&client, &request(true)).await.0)
            .text
            .as_deref(),
        Some("moved")
    );
    let recorded = fake.recorded();
    assert_eq!(recorded[1].path, "/v2/chat/completions");
    assert_eq!(recorded[1].header("x-api-key"), Some("hdr-secret-77e1"));

    fake.push(Script::status(307, "").header("Location", "/v2/chat/completions"));
    fake.push(Script::status(404, r#"{"error": {"message": "gone"}}"#));
    let e = err(complete(&client, &request(true)).await.0);
    let moved = fake.base_url().replace("/v1", "/v2");
    assert_eq!(
        e.message,
        format!(
            "LLM 'fake' has no such endpoint or model (HTTP 404): POST {moved}/chat/completions with model 'm'. Check base_url and model in [llm.fake].\ngone"
        )
    );
}

#[tokio::test]
async fn a_twenty_megabyte_data_line_fails_on_the_bound_while_it_arrives() {
    // The fake sends 20 MB of one `data:` line, more than one event may hold (16 MiB of reply
    // and 1 MiB of framing), and then holds the connection open without ending the line: only
    // a bound applied while reading ends the request with the size error; without one, the
    // client would wait for the rest until the idle timeout.
    let fake = FakeLlm::start();
    fake.push(Script::long_line(20_000_000));
    let mut config = config(&fake.base_url());
    config.stream_idle_timeout_secs = 120;
    config.request_timeout_secs = 300;
    let client = OpenAi::new(config).expect("a client");
    let (result, deltas) = complete(&client, &request(true)).await;
    let e = err(result);
    assert_eq!(
        e.message,
        "LLM 'fake' sent a reply larger than 16 MiB; the request was stopped."
    );
    assert!(deltas.is_empty());
    assert!(!e.after_output);
}

#[tokio::test]
async fn an_html_page_answered_with_200_names_its_content_type_and_url() {
    let fake = FakeLlm::start();
    let page =
        "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head><body>hi</body></html>";
    for stream in [true, false] {
        fake.push(Script::status(200, page));
        let e = err(complete(&client(&fake), &request(stream)).await.0);
        assert_eq!(
            e.message,
            format!(
                "LLM 'fake' answered {}/chat/completions with content-type text/html; charset=utf-8, a web page rather than an event stream or JSON. Check base_url in [llm.fake]: it should be the API's address (often ending in /v1).\nWelcome to nginx!",
                fake.base_url()
            )
        );
    }
}

#[tokio::test]
async fn a_stream_of_plain_text_names_its_content_type_instead_of_a_missing_done() {
    let fake = FakeLlm::start();
    fake.push(Script::status(200, "Hello from a proxy"));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        format!(
            "LLM 'fake' answered {}/chat/completions with content-type text/plain; charset=utf-8 and no server-sent events: not a chat-completions stream. Check base_url in [llm.fake].",
            fake.base_url()
        )
    );
}

#[tokio::test]
async fn a_429_asking_for_a_long_wait_reports_it_at_once() {
    let fake = FakeLlm::start();
    fake.push(
        Script::status(429, r#"{"error": {"message": "Daily quota used up"}}"#)
            .header("Retry-After", "86400"),
    );
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'fake' is limiting requests (HTTP 429) and asks to retry after 86400 s (Retry-After); katari waits at most 30 s. Try again later.\nDaily quota used up"
    );
    assert_eq!(fake.requests().len(), 1);

    // A wait katari would make, but not within what is left of the request's time.
    fake.push(
        Script::status(429, r#"{"error": {"message": "slow down"}}"#).header("Retry-After", "20"),
    );
    let mut config = config(&fake.base_url());
    config.request_timeout_secs = 5;
    let client = OpenAi::new(config).expect("a client");
    let e = err(complete(&client, &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'fake' is limiting requests (HTTP 429) and asks to retry after 20 s (Retry-After), past the request's limit of 5 s. Try again later, or raise request_timeout_secs in [llm.fake].\nslow down"
    );
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn a_provider_error_quoting_the_key_or_a_secret_header_shows_neither() {
    let fake = FakeLlm::start();
    fake.push(Script::status(
        401,
        r#"{"error": {"message": "Incorrect API key provided: sk-test-4f9a2c (header hdr-secret-77e1)."}}"#,
    ));
    fake.push(Script::raw([
        "data: {\"error\": {\"message\": \"bad key sk-test-4f9a2c\"}}\n\n",
    ]));
    fake.push(Script::raw(["data: {not json sk-test-4f9a2c\n\n"]));
    let client = keyed_client(&fake.base_url());
    let e = err(complete(&client, &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'fake' rejected the API key (HTTP 401). Check api_key_env or api_key in [llm.fake].\nIncorrect API key provided: [redacted] (header [redacted])."
    );
    let e = err(complete(&client, &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'fake' reported an error instead of a reply.\nbad key [redacted]"
    );
    let e = err(complete(&client, &request(true)).await.0);
    assert!(
        e.message.ends_with("\n{not json [redacted]"),
        "{}",
        e.message
    );
    // The key was sent: only the messages leave it out.
    assert_eq!(
        fake.recorded()[0].header("authorization"),
        Some("Bearer sk-test-4f9a2c")
    );
}
