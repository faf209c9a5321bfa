//! `katari chat` against a real model (`host.md` §7, issue acceptance): the local LLM of
//! docs/local-llm.md (Qwen2.5-Coder-0.5B-Instruct behind llama.cpp's OpenAI-compatible server),
//! started by the test and stopped by process id. Only structure is asserted — a known tool name,
//! arguments that parse, a non-empty reply, token usage — never wording. Without the model
//! (`tests/peers/install.sh` installs it) these tests fail loudly; they are never skipped.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use katari_tests::peers::{LOCAL_LLM_MODEL, Peer, start_local_llm};
use serde_json::Value;
use tempfile::TempDir;

/// One model at a time: two servers generating at once on two cores slow each other down.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const TOOLS: &str = r#"@"Adds two integers and returns their sum."
agent add(a: integer, b: integer) -> integer {
  a + b
}
"#;

fn home(peer: &Peer) -> TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            r#"[llm.local]
kind = "openai"
base_url = "{url}"
model = "{LOCAL_LLM_MODEL}"

[agent.helper]
llm = "local"
system_prompt = "You are a concise assistant."

[agent.helper.default_params]
temperature = 0
seed = 42
max_tokens = 128

[project.demo]
llm = "local"
prompts = ["Use the tools you are given when they fit the request."]
scripts = ["tools.kt"]
"#,
            url = peer.local_llm_base_url()
        ),
    )
    .expect("config");
    std::fs::write(dir.path().join("tools.kt"), TOOLS).expect("script");
    dir
}

fn chat(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["--no-workspace", "chat"])
        .args(args)
        .current_dir(dir)
        .env("KATARI_HOME", dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run katari chat")
}

fn json(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "katari chat failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON object ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn the_model_calls_a_script_tool_and_answers_with_its_result() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let peer = start_local_llm();
    let dir = home(&peer);
    let out = chat(
        dir.path(),
        &[
            "--project",
            "demo",
            "--temperature",
            "0",
            "--seed",
            "42",
            "--max-tokens",
            "128",
            "-m",
            "Use the kt_tools_add tool to add 17 and 25.",
            "--no-stream",
        ],
    );
    let v = json(&out);
    let calls = v["tool_calls"].as_array().expect("tool_calls");
    assert!(!calls.is_empty(), "the model called no tool: {v}");
    assert_eq!(calls[0]["name"], "kt_tools_add", "{v}");
    assert!(calls[0]["arguments"].is_object(), "arguments parse: {v}");
    assert!(
        v["reply"].as_str().is_some_and(|r| !r.trim().is_empty()),
        "a non-empty reply after the tool result: {v}"
    );
    // The thread holds the call paired with its result.
    let id = v["thread_id"].as_str().expect("thread id");
    let log = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["--no-workspace", "get", "thread", id, "--json"])
        .env("KATARI_HOME", dir.path())
        .output()
        .expect("katari get thread");
    let log: Value = serde_json::from_slice(&log.stdout).expect("JSON");
    let messages = log["messages"].as_array().expect("messages");
    let call_id = messages[1]["tool_calls"][0]["id"]
        .as_str()
        .expect("a call id");
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], call_id);
    assert!(messages.iter().all(|m| m["status"] == "complete"), "{log}");
}

#[test]
fn a_one_shot_turn_reports_usage_and_a_resumed_thread_sends_its_history() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let peer = start_local_llm();
    let dir = home(&peer);
    let first = json(&chat(
        dir.path(),
        &["helper", "-m", "My name is Ada. Say hello.", "--no-stream"],
    ));
    assert!(
        first["reply"]
            .as_str()
            .is_some_and(|r| !r.trim().is_empty()),
        "{first}"
    );
    assert!(first["finish_reason"].is_string(), "{first}");
    let first_prompt = first["usage"]["prompt_tokens"].as_u64().expect("usage");
    assert!(
        first["usage"]["completion_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{first}"
    );
    let id = first["thread_id"].as_str().expect("thread id");
    let second = json(&chat(
        dir.path(),
        &[
            "helper",
            "--thread",
            id,
            "-m",
            "What is my name?",
            "--no-stream",
        ],
    ));
    assert!(
        second["reply"]
            .as_str()
            .is_some_and(|r| !r.trim().is_empty()),
        "{second}"
    );
    let second_prompt = second["usage"]["prompt_tokens"].as_u64().expect("usage");
    let first_reply = first["usage"]["completion_tokens"].as_u64().expect("usage");
    // The second request carries the first turn: its prompt holds at least the first prompt and
    // the first reply.
    assert!(
        second_prompt >= first_prompt + first_reply,
        "the earlier turn did not reach the model: {first_prompt} + {first_reply} > {second_prompt}"
    );
}

#[test]
fn the_model_calls_a_real_mcp_servers_meta_function_and_the_result_is_paired() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let peer = start_local_llm();
    let dir = home(&peer);
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).expect("notes folder");
    std::fs::write(notes.join("todo.md"), "- water the plants\n").expect("a note");
    let entry = katari_tests::peers::peers_dir()
        .join("npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        entry.exists(),
        "server-filesystem is missing: run tests/peers/install.sh"
    );
    let config = std::fs::read_to_string(dir.path().join("config.toml")).expect("config");
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "{}\n[project.notes]\nllm = \"local\"\nmcp_servers = [\"files\"]\n\n\
             [mcp.files]\ncommand = \"node\"\nargs = [{}, {}]\n",
            config,
            serde_json::to_string(&entry.display().to_string()).expect("path"),
            serde_json::to_string(&notes.display().to_string()).expect("path"),
        ),
    )
    .expect("config");
    let out = chat(
        dir.path(),
        &[
            "--project",
            "notes",
            "--temperature",
            "0",
            "--seed",
            "42",
            "--max-tokens",
            "128",
            "-m",
            "Search the files server for tools to read files.",
            "--no-stream",
        ],
    );
    let v = json(&out);
    let calls = v["tool_calls"].as_array().expect("tool_calls");
    assert!(!calls.is_empty(), "the model called no function: {v}");
    let name = calls[0]["name"].as_str().expect("a name");
    assert!(
        ["mcp_search_files", "mcp_describe_files", "mcp_invoke_files"].contains(&name),
        "{v}"
    );
    assert!(calls[0]["arguments"].is_object(), "arguments parse: {v}");
    // The next request pairs the call with its result: the thread stores them in that order.
    let id = v["thread_id"].as_str().expect("thread id");
    let log = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["--no-workspace", "get", "thread", id, "--json"])
        .env("KATARI_HOME", dir.path())
        .output()
        .expect("katari get thread");
    let log: Value = serde_json::from_slice(&log.stdout).expect("JSON");
    let messages = log["messages"].as_array().expect("messages");
    let call = &messages[1]["tool_calls"][0];
    assert_eq!(call["name"], name);
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], call["id"]);
    assert!(
        !messages[2]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("\"error\""),
        "the first call succeeded: {}",
        messages[2]["content"]
    );
}
