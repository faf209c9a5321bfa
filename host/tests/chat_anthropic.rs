//! `katari chat` with `kind = "anthropic"` end to end (`host.md` §7, §8.6): the real binary
//! against the fake Messages API server of `katari_tests::fake_anthropic` (a fake for fault
//! injection: it scripts replies and records every request), with a temporary `KATARI_HOME`.
//! The chat checks that apply to any provider (lenses, the system block, the tools offered,
//! `--no-stream`) run here with the Anthropic provider; a real MCP server (`katari mcp serve`
//! over stdio, publishing a script's agents) answers the meta-functions. Every request the fakes
//! record is checked for the pairing invariant of §7.7.7, in each wire protocol's form.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use katari_chat::message::check_pairing as check_openai_pairing;
use katari_tests::fake_anthropic::{Block, FakeAnthropic, Script, check_pairing};
use katari_tests::fake_llm::{self, FakeCall, FakeLlm};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The script published by the MCP server `[mcp.tools]`.
const TOOLS: &str = r#"@"Echoes a message."
agent echo(message: string) -> string { f"Echo: ${message}" }
"#;

/// The script whose documented agents the project offers as `kt_billing_*` tools.
const BILLING: &str = r#"@"Looks up an account's balance."
agent balance(name: string) -> { name: string, cents: integer } {
  { name = name, cents = 1250 }
}
"#;

/// A chat home: a temporary `KATARI_HOME` whose `[llm.claude]` is the fake Messages API and whose
/// `[llm.gpt]` is the fake OpenAI-compatible server.
struct Home {
    dir: TempDir,
    claude: FakeAnthropic,
    gpt: FakeLlm,
}

impl Home {
    /// Agent `alice` (llm `claude`, a member of `payments`), agent `bob` with llm `bob_llm`, and
    /// project `payments` (llm `claude`, a prompt, the billing script and the MCP server).
    fn new(bob_llm: &str) -> Home {
        let dir = tempfile::tempdir().expect("temporary folder");
        let home = Home {
            dir,
            claude: FakeAnthropic::start(),
            gpt: FakeLlm::start(),
        };
        std::fs::write(home.path().join("tools.kt"), TOOLS).expect("tools.kt");
        std::fs::write(home.path().join("billing.kt"), BILLING).expect("billing.kt");
        home.configure(bob_llm, "");
        home
    }

    fn configure(&self, bob_llm: &str, claude_extra: &str) {
        let katari = serde_json::to_string(env!("CARGO_BIN_EXE_katari")).expect("path");
        let config = format!(
            r#"[llm.claude]
kind = "anthropic"
base_url = "{claude}"
model = "claude-test"
api_key_env = "KATARI_TEST_ANTHROPIC_KEY"
{claude_extra}

[llm.gpt]
kind = "openai"
base_url = "{gpt}"
model = "gpt-test"

[mcp.tools]
command = {katari}
args = ["mcp", "serve", "tools.kt", "--stdio"]

[agent.alice]
llm = "claude"
system_prompt = "You are alice."
prompts = ["Answer briefly."]

[[agent.alice.membership]]
project = "payments"

[agent.bob]
llm = "{bob_llm}"

[project.payments]
llm = "claude"
prompts = ["Payments are in cents."]
scripts = ["billing.kt"]
mcp_servers = ["tools"]
"#,
            claude = self.claude.base_url(),
            gpt = self.gpt.base_url(),
        );
        std::fs::write(self.path().join("config.toml"), config).expect("config.toml");
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn chat(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_katari"))
            .args(["--no-workspace", "chat"])
            .args(args)
            .current_dir(self.path())
            .env("KATARI_HOME", self.path())
            .env("KATARI_TEST_ANTHROPIC_KEY", "sk-ant-test-key-0042")
            .env("NO_COLOR", "1")
            .env("USER", "tester")
            .stdin(Stdio::null())
            .output()
            .expect("run katari chat")
    }

    /// Every request the Anthropic fake recorded, after checking each for pairing.
    fn claude_requests(&self) -> Vec<Value> {
        let requests = self.claude.requests();
        for (i, body) in requests.iter().enumerate() {
            if let Err(e) = check_pairing(body) {
                panic!("Anthropic request {i} breaks the pairing invariant: {e}\n{body:#}");
            }
        }
        requests
    }

    /// Every request the OpenAI-compatible fake recorded, after checking each for pairing.
    fn gpt_requests(&self) -> Vec<Value> {
        for (i, messages) in self.gpt.requests_messages().iter().enumerate() {
            if let Err(e) = check_openai_pairing(messages) {
                panic!("OpenAI request {i} breaks the pairing invariant: {e}");
            }
        }
        self.gpt.requests()
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
}

fn thread_id(o: &Output) -> String {
    let err = stderr(o);
    let start = err.find("(thread: ").expect("thread line") + 9;
    err[start..start + 26].to_string()
}

fn system_of(body: &Value) -> String {
    body["system"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The `tool_result` blocks of the last user turn of a request, by `tool_use_id`.
fn results(body: &Value) -> Vec<(String, String)> {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("a last message")
        .clone();
    last["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            (
                b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                b["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn lenses_the_system_block_and_the_offered_tools_with_the_anthropic_kind() {
    let home = Home::new("claude");
    home.claude.push(Script::text("Hello from the agent."));
    let out = home.chat(&["alice", "-m", "hi"]);
    ok(&out);
    assert_eq!(stdout(&out), "Hello from the agent.\n");
    home.claude.push(Script::text("Hello from the project."));
    let out = home.chat(&[
        "alice",
        "--project",
        "payments",
        "-m",
        "hi",
        "--system-append",
        "Be exact.",
    ]);
    ok(&out);
    home.claude.push(Script::text("Project chat."));
    ok(&home.chat(&["--project", "payments", "-m", "hi"]));
    let requests = home.claude_requests();
    assert_eq!(requests.len(), 3);

    // The agent alone: its prompts, no tools.
    assert_eq!(system_of(&requests[0]), "You are alice.\n\nAnswer briefly.");
    assert!(requests[0].get("tools").is_none());
    assert_eq!(requests[0]["model"], "claude-test");
    assert_eq!(
        requests[0]["max_tokens"], 4096,
        "§8.6: 4096 when none is set"
    );
    let recorded = home.claude.recorded();
    assert_eq!(
        recorded[0].header("x-api-key"),
        Some("sk-ant-test-key-0042")
    );
    assert_eq!(recorded[0].header("anthropic-version"), Some("2023-06-01"));

    // The project lens: the project's prompt after the agent's, the append last, and the
    // server's meta-functions (it has no resources or prompts to read) before the script tools.
    assert_eq!(
        system_of(&requests[1]),
        "You are alice.\n\nAnswer briefly.\n\nPayments are in cents.\n\nBe exact."
    );
    assert_eq!(
        tool_names(&requests[1]),
        [
            "mcp_search_tools",
            "mcp_describe_tools",
            "mcp_invoke_tools",
            "kt_billing_balance"
        ]
    );
    let last_tool = requests[1]["tools"]
        .as_array()
        .and_then(|t| t.last())
        .expect("tools");
    assert_eq!(last_tool["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(
        requests[1]["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );

    // Project chat: the project's prompts alone.
    assert_eq!(system_of(&requests[2]), "Payments are in cents.");
    assert_eq!(tool_names(&requests[2]), tool_names(&requests[1]));
}

#[test]
fn a_tool_round_with_a_script_tool_and_a_meta_function_in_parallel() {
    let home = Home::new("claude");
    home.claude.push(
        Script::blocks(vec![
            Block::text("Let me check."),
            Block::tool_use(
                "toolu_echo",
                "mcp_invoke_tools",
                r#"{"tool":"echo","arguments":{"message":"hello there"}}"#,
            ),
            Block::tool_use("toolu_bal", "kt_billing_balance", r#"{"name":"ada"}"#),
        ])
        .chunks(5),
    );
    home.claude.push(Script::text("Ada has 1250 cents."));
    let out = home.chat(&["alice", "--project", "payments", "-m", "balance of ada?"]);
    ok(&out);
    assert_eq!(stdout(&out), "Let me check.\nAda has 1250 cents.\n");
    let err = stderr(&out);
    assert!(
        err.contains("[tool_call: mcp_invoke_tools {\"tool\":\"echo\""),
        "{err}"
    );
    assert!(err.contains("[tool_result: mcp_invoke_tools ok "), "{err}");
    assert!(
        err.contains("[tool_call: kt_billing_balance {\"name\":\"ada\"}]"),
        "{err}"
    );
    assert!(
        err.contains("[tool_result: kt_billing_balance ok "),
        "{err}"
    );
    let requests = home.claude_requests();
    assert_eq!(requests.len(), 2);
    let second = &requests[1];
    let assistant = &second["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "text", "text": "Let me check."})
    );
    assert_eq!(assistant["content"][1]["type"], "tool_use");
    assert_eq!(
        assistant["content"][1]["input"],
        json!({"tool": "echo", "arguments": {"message": "hello there"}})
    );
    let results = results(second);
    assert_eq!(
        results.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["toolu_echo", "toolu_bal"]
    );
    let echo: Value = serde_json::from_str(&results[0].1).expect("JSON");
    assert_eq!(echo["content"][0]["text"], "Echo: hello there");
    let balance: Value = serde_json::from_str(&results[1].1).expect("JSON");
    assert_eq!(balance["result"], json!({"name": "ada", "cents": 1250}));
}

#[test]
fn no_stream_prints_one_object_with_the_prompt_cache_usage() {
    let home = Home::new("claude");
    home.claude.push(
        Script::blocks(vec![Block::text("The deploy is safe.")])
            .usage(12, 5)
            .cache(800, 0),
    );
    let out = home.chat(&["alice", "--project", "payments", "-m", "hi", "--no-stream"]);
    ok(&out);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(v["agent"], "alice");
    assert_eq!(v["project"], "payments");
    assert_eq!(v["llm"], "claude");
    assert_eq!(v["model"], "claude-test");
    assert_eq!(v["reply"], "The deploy is safe.");
    assert_eq!(v["tool_calls"], json!([]));
    assert_eq!(
        v["usage"],
        json!({"prompt_tokens": 812, "completion_tokens": 5,
               "cache_read_tokens": 800, "cache_write_tokens": 0})
    );
    assert_eq!(v["finish_reason"], "end_turn");
    assert_eq!(home.claude_requests()[0]["stream"], false);

    home.claude.push(Script::api_error(
        401,
        "authentication_error",
        "invalid x-api-key: sk-ant-test-key-0042",
    ));
    let out = home.chat(&["alice", "-m", "hi", "--no-stream"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(
        v["error"]["message"],
        "LLM 'claude' rejected the API key (HTTP 401). Check api_key_env or api_key in [llm.claude].\ninvalid x-api-key: [redacted]"
    );
    assert!(
        !stderr(&out).contains("sk-ant-test-key-0042"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn sampling_flags_max_tokens_and_extra_reach_the_messages_api() {
    let home = Home::new("claude");
    home.configure("claude", "max_tokens = 1000");
    ok(&home.chat(&["alice", "-m", "one"]));
    let out = home.chat(&[
        "alice",
        "-m",
        "two",
        "--max-tokens",
        "50",
        "--temperature",
        "0.2",
        "--top-p",
        "0.5",
        "--top-k",
        "7",
        "--stop",
        "END",
        "--extra",
        "metadata_tag=x",
    ]);
    ok(&out);
    assert!(
        !stderr(&out).contains("top_k"),
        "top_k is sent, so no note: {}",
        stderr(&out)
    );
    let requests = home.claude_requests();
    assert_eq!(requests[0]["max_tokens"], 1000, "the [llm.claude] default");
    let body = &requests[1];
    assert_eq!(body["max_tokens"], 50);
    assert_eq!(body["temperature"], 0.2);
    assert_eq!(body["top_p"], 0.5);
    assert_eq!(body["top_k"], 7);
    assert_eq!(body["stop_sequences"], json!(["END"]));
    assert_eq!(body["metadata_tag"], "x");
}

#[test]
fn a_max_tokens_stop_inside_a_tool_input_is_not_executed() {
    for input in [r#"{"key":"K"#, r#"{"key":"K"}"#] {
        let home = Home::new("claude");
        std::fs::write(home.path().join("secrets.toml"), "K = \"v\"\n").expect("secrets");
        set_mode(&home.path().join("secrets.toml"));
        home.claude.push(
            Script::blocks(vec![Block::tool_use("toolu_cut", "get_secret", input)])
                .stop_reason("max_tokens"),
        );
        home.claude.push(Script::text("sorry"));
        let out = home.chat(&["alice", "--allow-secrets", "-m", "go"]);
        ok(&out);
        assert!(
            !stderr(&out).contains("[secret read"),
            "not run: {}",
            stderr(&out)
        );
        let requests = home.claude_requests();
        let results = results(&requests[1]);
        assert_eq!(results.len(), 1);
        let payload: Value = serde_json::from_str(&results[0].1).expect("JSON");
        assert_eq!(payload["error"]["type"], "invalid_argument", "{payload}");
    }
}

#[test]
fn rate_limits_are_retried_and_failures_name_the_llm() {
    let home = Home::new("claude");
    home.claude
        .push(Script::api_error(429, "rate_limit_error", "slow down").header("retry-after", "0"));
    home.claude
        .push(Script::api_error(529, "overloaded_error", "Overloaded").header("retry-after", "0"));
    home.claude.push(Script::text("made it"));
    let out = home.chat(&["alice", "-m", "hi"]);
    ok(&out);
    assert_eq!(stdout(&out), "made it\n");
    assert_eq!(home.claude_requests().len(), 3);

    home.claude.push(
        Script::text("half an ans")
            .error_event("api_error", "Internal \u{1b}[31mserver\u{1b}[0m error"),
    );
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "half an ans\n");
    let err = stderr(&out);
    assert!(
        err.contains(
            "error: LLM 'claude' reported an error instead of a reply.\nInternal server error\n"
        ),
        "sanitised on the terminal's way: {err:?}"
    );
}

#[test]
fn a_thread_started_on_openai_continues_on_anthropic_and_back() {
    let home = Home::new("gpt");
    std::fs::write(home.path().join("secrets.toml"), "K = \"v\"\n").expect("secrets");
    set_mode(&home.path().join("secrets.toml"));
    home.gpt.push(fake_llm::Script::tool_calls(vec![
        FakeCall::new(0, "call.1:a", "get_secret", r#"{"key":"K"}"#),
        FakeCall::new(1, "call_2", "get_secret", r#"{"key":"missing"}"#),
    ]));
    home.gpt.push(fake_llm::Script::text("The key is set."));
    let out = home.chat(&["bob", "--allow-secrets", "-m", "is K set?"]);
    ok(&out);
    let id = thread_id(&out);

    home.configure("claude", "");
    home.claude.push(Script::blocks(vec![Block::tool_use(
        "toolu_3",
        "get_secret",
        r#"{"key":"K"}"#,
    )]));
    home.claude.push(Script::text("Still set."));
    let out = home.chat(&["bob", "--allow-secrets", "--thread", &id, "-m", "and now?"]);
    ok(&out);
    let claude = home.claude_requests();
    assert_eq!(claude.len(), 2);
    let messages = claude[0]["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
    // The OpenAI call ids are made acceptable to the API, the same way on both sides.
    assert_eq!(messages[1]["content"][0]["id"], "call_1_a");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "call_1_a");
    assert_eq!(messages[2]["content"][1]["tool_use_id"], "call_2");
    assert_eq!(
        messages[4]["content"],
        json!([{"type": "text", "text": "and now?"}])
    );

    home.configure("gpt", "");
    home.gpt.push(fake_llm::Script::text("Back on gpt."));
    let out = home.chat(&["bob", "--thread", &id, "-m", "third"]);
    ok(&out);
    let gpt = home.gpt_requests();
    let last = gpt.last().expect("a request");
    let calls: Vec<String> = last["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(calls, ["call.1:a", "call_2", "toolu_3"]);
}

#[test]
fn config_show_fills_in_the_defaults_of_the_messages_api() {
    let home = Home::new("claude");
    std::fs::write(
        home.path().join("config.toml"),
        "[llm.claude]\nkind = \"anthropic\"\nmodel = \"claude-test\"\n\n[llm.short]\nkind = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nmax_tokens = 256\n",
    )
    .expect("config.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["--no-workspace", "config", "show", "--json"])
        .env("KATARI_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .expect("katari config show");
    ok(&out);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["llm"]["claude"]["base_url"], "https://api.anthropic.com");
    assert_eq!(v["llm"]["claude"]["max_tokens"], 4096);
    assert_eq!(v["llm"]["short"]["base_url"], "http://127.0.0.1:9/v1");
    assert_eq!(v["llm"]["short"]["max_tokens"], 256);
}

/// `.info` on a pseudo-terminal, as a person reads it after a turn that used the prompt cache.
#[cfg(unix)]
#[test]
fn info_reports_the_prompt_cache_of_the_last_turn() {
    let home = Home::new("claude");
    home.claude
        .push(Script::text("fine").usage(12, 5).cache(800, 40));
    let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
    command
        .args(["--no-workspace", "chat", "alice"])
        .current_dir(home.path())
        .env("KATARI_HOME", home.path())
        .env("KATARI_TEST_ANTHROPIC_KEY", "sk-ant-test-key-0042")
        .env("NO_COLOR", "1")
        .env("USER", "tester");
    let mut s = rexpect::session::spawn_command(command, Some(30_000)).expect("a pty");
    let expect = |s: &mut rexpect::session::PtySession, text: &str| {
        if let Err(e) = s.exp_string(text) {
            panic!("the terminal never showed {text:?}: {e}");
        }
    };
    expect(&mut s, "alice> ");
    s.send_line("how are things?").expect("type");
    expect(&mut s, "fine");
    expect(&mut s, "alice> ");
    s.send_line(".info").expect("type");
    expect(&mut s, "claude (model claude-test, from the agent)");
    expect(
        &mut s,
        "852 prompt tokens, 5 completion tokens (prompt cache: 800 read, 40 written)",
    );
    expect(&mut s, "alice> ");
    s.send_line("/quit").expect("type");
    s.exp_eof().expect("the chat ends");
}

#[cfg(unix)]
fn set_mode(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

#[cfg(not(unix))]
fn set_mode(_: &Path) {}
