//! The `anthropic` provider against the fake Messages API server
//! (`katari_tests::fake_anthropic`, a fake for fault injection): the request body and headers,
//! streaming of text and `tool_use` blocks with their input split across `input_json_delta`
//! events, the prompt cache's usage, retries of 429 and 529 (`host.md` §8.3), error events,
//! dropped streams and error messages (§8.4).

use std::time::Duration;

use katari_chat::llm::anthropic::{Anthropic, AnthropicConfig};
use katari_chat::llm::{Delta, Request, Sampling, ToolSpec, Usage};
use katari_chat::message::Message;
use katari_tests::fake_anthropic::{Block, Ending, FakeAnthropic, Script, check_pairing};
use katari_tests::provider::{call, complete, err, ok, streamed_text};
use serde_json::{Map, json};

fn config(base_url: &str) -> AnthropicConfig {
    AnthropicConfig {
        name: "claude".into(),
        base_url: base_url.into(),
        api_key: Some("sk-ant-secret-key-123".into()),
        headers: Vec::new(),
        secrets: Vec::new(),
        max_tokens: 4096,
        connect_timeout_secs: 5,
        request_timeout_secs: 120,
        stream_idle_timeout_secs: 30,
    }
}

fn client(fake: &FakeAnthropic) -> Anthropic {
    Anthropic::new(config(&fake.base_url())).expect("a client")
}

fn request(stream: bool) -> Request {
    Request {
        model: "claude-test".into(),
        system: Some("You are terse.".into()),
        messages: vec![Message::user("hi")],
        tools: Vec::new(),
        sampling: Sampling::default(),
        stream,
    }
}

#[tokio::test]
async fn a_text_turn_streams_with_the_documented_headers_body_and_cache_usage() {
    let fake = FakeAnthropic::start();
    fake.push(
        Script::text("Hello there, world.")
            .chunks(4)
            .usage(20, 7)
            .cache(300, 50),
    );
    let mut req = request(true);
    req.tools = vec![ToolSpec {
        name: "kt_lookup".into(),
        description: "Looks up.".into(),
        parameters: json!({"type": "object", "properties": {}}),
    }];
    req.sampling = Sampling {
        temperature: Some(0.5),
        top_p: Some(0.9),
        top_k: Some(40),
        stop: vec!["STOP".into()],
        extra: Map::from_iter([("metadata".to_string(), json!({"user_id": "u1"}))]),
        ..Sampling::default()
    };
    let (result, deltas) = complete(&client(&fake), &req).await;
    let reply = ok(result);
    assert_eq!(reply.text.as_deref(), Some("Hello there, world."));
    assert_eq!(streamed_text(&deltas), "Hello there, world.");
    assert_eq!(deltas.len(), 4, "each text_delta is reported as it came");
    assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(
        reply.usage,
        Some(Usage {
            prompt_tokens: 370,
            completion_tokens: 7,
            cache_read_tokens: Some(300),
            cache_write_tokens: Some(50),
        })
    );
    let recorded = fake.recorded();
    assert_eq!(recorded.len(), 1);
    let r = &recorded[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(r.header("x-api-key"), Some("sk-ant-secret-key-123"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("authorization"), None);
    let body = &r.body;
    assert_eq!(body["model"], "claude-test");
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(body["stream"], true);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    );
    assert_eq!(body["tools"][0]["name"], "kt_lookup");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(
        body["tools"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(body["top_k"], 40);
    assert_eq!(body["stop_sequences"], json!(["STOP"]));
    assert_eq!(body["metadata"], json!({"user_id": "u1"}));
}

#[tokio::test]
async fn parallel_tool_uses_arrive_with_inputs_split_across_events() {
    let fake = FakeAnthropic::start();
    fake.push(
        Script::blocks(vec![
            Block::text("Checking both."),
            Block::tool_use(
                "toolu_01",
                "mcp_invoke_github",
                r#"{"tool":"list_checks","arguments":{"ref":"main"}}"#,
            ),
            Block::tool_use("toolu_02", "kt_billing_refund", r#"{"amount":12}"#),
        ])
        .chunks(7),
    );
    let (result, deltas) = complete(&client(&fake), &request(true)).await;
    let reply = ok(result);
    assert_eq!(reply.text.as_deref(), Some("Checking both."));
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(
        reply.tool_calls,
        vec![
            call(
                "toolu_01",
                "mcp_invoke_github",
                r#"{"tool":"list_checks","arguments":{"ref":"main"}}"#
            ),
            call("toolu_02", "kt_billing_refund", r#"{"amount":12}"#),
        ]
    );
    let announced: Vec<&Delta> = deltas
        .iter()
        .filter(|d| matches!(d, Delta::ToolCall { .. }))
        .collect();
    assert_eq!(announced.len(), 2);
}

#[tokio::test]
async fn a_non_streamed_reply_is_read_whole() {
    let fake = FakeAnthropic::start();
    fake.push(
        Script::blocks(vec![
            Block::text("One moment."),
            Block::tool_use("toolu_9", "get_secret", r#"{"key":"K"}"#),
        ])
        .usage(11, 3),
    );
    let (result, deltas) = complete(&client(&fake), &request(false)).await;
    let reply = ok(result);
    assert_eq!(fake.requests()[0]["stream"], false);
    assert_eq!(reply.text.as_deref(), Some("One moment."));
    assert_eq!(
        reply.tool_calls,
        vec![call("toolu_9", "get_secret", r#"{"key":"K"}"#)]
    );
    assert_eq!(
        reply.usage.map(|u| (u.prompt_tokens, u.completion_tokens)),
        Some((11, 3))
    );
    assert_eq!(deltas.len(), 2);
}

#[tokio::test]
async fn a_history_with_tool_calls_pairs_every_tool_use_in_the_next_user_turn() {
    let fake = FakeAnthropic::start();
    let mut req = request(true);
    // A history as an OpenAI-compatible provider left it: ids with dots, results in order, the
    // next turn's user message right after the results of a turn that ended on its tools.
    req.messages = vec![
        Message::user("first"),
        Message::assistant(
            None,
            vec![call("call.a", "f", "{}"), call("call.b", "g", r#"{"x":1}"#)],
        ),
        Message::tool("call.a", "A"),
        Message::tool("call.b", "B"),
        Message::assistant(Some("done".into()), Vec::new()),
        Message::user("second"),
        Message::assistant(None, vec![call("c3", "f", "{\"cut")]),
        Message::tool("c3", "{\"error\":{\"type\":\"invalid_argument\"}}"),
        Message::user("third"),
    ];
    ok(complete(&client(&fake), &req).await.0);
    let body = &fake.requests()[0];
    check_pairing(body).unwrap_or_else(|e| panic!("{e}: {body:#}"));
    let messages = body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user"
        ]
    );
    assert_eq!(messages[1]["content"][0]["id"], "call_a");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "call_a");
    assert_eq!(messages[2]["content"][1]["content"], "B");
    // The cut arguments are sent as an empty input; the result says what went wrong.
    assert_eq!(messages[5]["content"][0]["input"], json!({}));
    assert_eq!(messages[6]["content"][0]["type"], "tool_result");
    assert_eq!(
        messages[6]["content"][1],
        json!({"type": "text", "text": "third"})
    );
}

#[tokio::test]
async fn a_max_tokens_stop_inside_a_tool_input_returns_the_cut_input() {
    let fake = FakeAnthropic::start();
    fake.push(
        Script::blocks(vec![Block::tool_use(
            "toolu_cut",
            "get_secret",
            r#"{"key":"#,
        )])
        .stop_reason("max_tokens"),
    );
    let reply = ok(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(reply.finish_reason.as_deref(), Some("max_tokens"));
    assert_eq!(
        reply.tool_calls,
        vec![call("toolu_cut", "get_secret", r#"{"key":"#)]
    );
}

#[tokio::test]
async fn a_dropped_stream_and_an_error_event_fail_after_the_output_they_gave() {
    let fake = FakeAnthropic::start();
    fake.push(Script::text("partial answer").ending(Ending::Dropped));
    fake.push(Script::text("partial answer").ending(Ending::Cut));
    fake.push(Script::text("so far").error_event("overloaded_error", "Overloaded"));
    let client = client(&fake);
    let e = err(complete(&client, &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'claude' ended its reply stream before finishing it (no message_stop and no stop reason)."
    );
    assert!(e.after_output, "the text had reached the person");
    let e = err(complete(&client, &request(true)).await.0);
    assert!(
        e.message
            .starts_with("LLM 'claude': the connection broke during the reply"),
        "{e}"
    );
    let e = err(complete(&client, &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'claude' reported an error instead of a reply.\nOverloaded"
    );
    assert!(e.after_output);
    assert_eq!(fake.requests().len(), 3, "nothing is retried after output");
}

#[tokio::test]
async fn rate_limits_and_overload_are_retried_after_retry_after() {
    let fake = FakeAnthropic::start();
    fake.push(
        Script::api_error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        )
        .header("retry-after", "1"),
    );
    fake.push(Script::api_error(529, "overloaded_error", "Overloaded").header("retry-after", "0"));
    fake.push(Script::text("finally"));
    let reply = ok(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(reply.text.as_deref(), Some("finally"));
    assert_eq!(fake.requests().len(), 3);

    let fake = FakeAnthropic::start();
    fake.push(Script::api_error(429, "rate_limit_error", "Slow down").header("retry-after", "120"));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'claude' is limiting requests (HTTP 429) and asks to retry after 120 s (Retry-After); katari waits at most 30 s. Try again later.\nSlow down"
    );
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_rejected_key_names_the_fix_and_never_repeats_the_key() {
    let fake = FakeAnthropic::start();
    fake.push(Script::api_error(
        401,
        "authentication_error",
        "invalid x-api-key sk-ant-secret-key-123\n\tsee the console",
    ));
    let e = err(complete(&client(&fake), &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'claude' rejected the API key (HTTP 401). Check api_key_env or api_key in [llm.claude].\ninvalid x-api-key [redacted] see the console"
    );
    assert!(!e.after_output);
}

#[tokio::test]
async fn a_base_url_ending_in_v1_and_a_configured_version_header_are_honoured() {
    let fake = FakeAnthropic::start();
    let mut config = config(&format!("{}/v1/", fake.base_url()));
    config.headers = vec![
        ("Anthropic-Version".into(), "2099-01-01".into()),
        ("anthropic-beta".into(), "some-beta".into()),
    ];
    config.api_key = None;
    let client = Anthropic::new(config).expect("a client");
    assert_eq!(client.url(), format!("{}/v1/messages", fake.base_url()));
    ok(complete(&client, &request(true)).await.0);
    let r = &fake.recorded()[0];
    assert_eq!(r.header("anthropic-version"), Some("2099-01-01"));
    assert_eq!(
        r.headers
            .iter()
            .filter(|(n, _)| n == "anthropic-version")
            .count(),
        1
    );
    assert_eq!(r.header("anthropic-beta"), Some("some-beta"));
    assert_eq!(r.header("x-api-key"), None);
}

#[tokio::test]
async fn a_silent_stream_fails_on_the_idle_timeout() {
    let fake = FakeAnthropic::start();
    fake.push(Script::text("hello").ending(Ending::Silent));
    let mut config = config(&fake.base_url());
    config.stream_idle_timeout_secs = 1;
    let client = Anthropic::new(config).expect("a client");
    let e = err(
        tokio::time::timeout(Duration::from_secs(30), complete(&client, &request(true)))
            .await
            .expect("the idle timeout ends the request")
            .0,
    );
    assert!(e.message.contains("sent nothing for 1 s"), "{e}");
}

#[tokio::test]
async fn a_reply_past_the_bound_is_stopped() {
    let fake = FakeAnthropic::start();
    fake.push(Script::text(&"x".repeat(5000)).chunks(10));
    let client = client(&fake).with_max_reply_bytes(1000);
    let e = err(complete(&client, &request(true)).await.0);
    assert_eq!(
        e.message,
        "LLM 'claude' sent a reply larger than 1000 bytes; the request was stopped."
    );
}
