//! `katari chat` end to end (`host.md` §7, §8, §17 H01–H22): the real binary against the fake
//! OpenAI-compatible server of `katari_tests::fake_llm` (a fake for fault injection: it scripts
//! replies and records every request), with a temporary `KATARI_HOME`. Every request the fake
//! records is checked for the pairing invariant of §7.7.7.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use katari_chat::message::check_pairing;
use katari_tests::fake_llm::{Ending, FakeCall, FakeLlm, Script};
use serde_json::Value;
use tempfile::TempDir;

/// A chat home: a temporary `KATARI_HOME` with a configuration that points at a fake LLM.
struct Home {
    dir: TempDir,
    llm: FakeLlm,
}

impl Home {
    /// `config` is appended to a base with `[llm.fake]`, agent `alice` (member of `payments`),
    /// agent `bob`, and project `payments` with `llm = "fake"`.
    fn new(config: &str) -> Home {
        let dir = tempfile::tempdir().expect("temporary folder");
        let llm = FakeLlm::start();
        let base = format!(
            r#"[llm.fake]
kind = "openai"
base_url = "{url}"
model = "fake-model"

[agent.alice]
llm = "fake"
system_prompt = "You are alice."

[[agent.alice.membership]]
project = "payments"
role = "developer"

[agent.bob]
llm = "fake"

[project.payments]
llm = "fake"
"#,
            url = llm.base_url()
        );
        std::fs::write(dir.path().join("config.toml"), format!("{base}\n{config}"))
            .expect("write config.toml");
        Home { dir, llm }
    }

    /// A home whose whole configuration is `config` (`{url}` is replaced by the fake's URL).
    fn exact(config: &str) -> Home {
        let dir = tempfile::tempdir().expect("temporary folder");
        let llm = FakeLlm::start();
        std::fs::write(
            dir.path().join("config.toml"),
            config.replace("{url}", &llm.base_url()),
        )
        .expect("write config.toml");
        Home { dir, llm }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `secrets.toml` (mode 0600, as katari requires).
    fn secrets(&self, text: &str) {
        let file = self.path().join("secrets.toml");
        std::fs::write(&file, text).expect("write secrets.toml");
        set_mode(&file, 0o600);
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, text).expect("write a file");
        p
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_katari"));
        c.args(["--no-workspace", "chat"])
            .args(args)
            .current_dir(self.path())
            .env("KATARI_HOME", self.path())
            .env("NO_COLOR", "1")
            .env("USER", "tester")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null());
        c
    }

    fn chat(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run katari chat")
    }

    fn chat_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run katari chat");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("wait for katari chat")
    }

    /// Every recorded request, after checking the pairing invariant on each.
    fn requests(&self) -> Vec<Value> {
        for (i, messages) in self.llm.requests_messages().iter().enumerate() {
            if let Err(e) = check_pairing(messages) {
                panic!("request {i} breaks the pairing invariant: {e}");
            }
        }
        self.llm.requests()
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn status(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// The thread id printed as `(thread: ID)` on stderr.
fn thread_id(o: &Output) -> String {
    let err = stderr(o);
    let start = err
        .find("(thread: ")
        .unwrap_or_else(|| panic!("no thread id in:\n{err}"))
        + 9;
    let end = err[start..].find(')').expect("closing parenthesis") + start;
    err[start..end].to_string()
}

fn system_of(request: &Value) -> Option<String> {
    let first = &request["messages"][0];
    (first["role"] == "system").then(|| first["content"].as_str().unwrap_or_default().to_string())
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn user_texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn h01_a_non_member_cannot_view_the_project() {
    let home = Home::new("[project.ops]\nllm = \"fake\"\n");
    let out = home.chat(&["alice", "--project", "ops", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: Agent 'alice' is not a member of project 'ops'.\nJoin it with: katari agent join alice --project ops\n"
    );
    assert!(home.llm.requests().is_empty(), "nothing reaches the model");
}

#[test]
fn h02_unknown_names_and_a_project_without_llm() {
    let home = Home::new("[project.sre]\ndescription = \"no brain\"\n");
    let out = home.chat(&["carol", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: Agent 'carol' not found. List agents with: katari get agents\n"
    );
    let out = home.chat(&["--project", "nope", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: Project 'nope' not found. List projects with: katari get projects\n"
    );
    let out = home.chat(&["--project", "sre", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "error: Project 'sre' has no llm, so it cannot chat on its own.\nSet one in "
        ),
        "{err}"
    );
    assert!(
        err.ends_with("  [project.sre]\n  llm = \"NAME\"\nConfigured llms: fake\n"),
        "{err}"
    );
    let out = home.chat(&["-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: katari chat needs an agent or --project. Try: katari chat AGENT or katari chat --project PROJECT\n"
    );
}

#[test]
fn h03_llm_model_and_membership_override_never_consult_the_agents_own_llm() {
    let home = Home::exact(
        r#"[llm.big]
kind = "openai"
base_url = "{url}"
model = "big-model"

[llm.keyed]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "never"
api_key_env = "KATARI_TEST_UNSET_KEY"

[agent.alice]
llm = "keyed"

[[agent.alice.membership]]
project = "payments"
llm = "big"

[project.payments]
llm = "big"
llm_model = "project-model"
"#,
    );
    let out = home.chat(&["alice", "--project", "payments", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let out = home.chat(&["--project", "payments", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let requests = home.requests();
    assert_eq!(
        requests[0]["model"], "big-model",
        "the override's own model"
    );
    assert_eq!(
        requests[1]["model"], "project-model",
        "project chat sends llm_model"
    );
    // The agent alone uses its own llm, whose key is missing.
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: LLM 'keyed' reads its API key from KATARI_TEST_UNSET_KEY, which is not set.\nExport it, or use api_key = \"secret:KEY\" in [llm.keyed].\n"
    );
}

#[test]
fn h04_s01_the_agent_alone_offers_no_tools_and_the_project_lens_offers_documented_script_agents() {
    let home = Home::new("");
    home.write(
        "billing.kt",
        "@\"Adds two numbers.\"\nagent add(a: integer, b: integer) -> integer {\n  a + b\n}\n\nagent hidden() -> integer {\n  1\n}\n",
    );
    let config = std::fs::read_to_string(home.path().join("config.toml")).expect("config");
    std::fs::write(
        home.path().join("config.toml"),
        config.replace(
            "[project.payments]\nllm = \"fake\"\n",
            "[project.payments]\nllm = \"fake\"\nscripts = [\"billing.kt\"]\n",
        ),
    )
    .expect("config");
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let out = home.chat(&["alice", "--project", "payments", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let requests = home.requests();
    assert!(
        requests[0].get("tools").is_none(),
        "no tools alone: {}",
        requests[0]
    );
    assert_eq!(tool_names(&requests[1]), vec!["kt_billing_add"]);
    let schema = &requests[1]["tools"][0]["function"]["parameters"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "integer");
}

#[test]
fn h05_the_system_block_is_assembled_in_order() {
    let home = Home::exact(
        r#"[llm.fake]
kind = "openai"
base_url = "{url}"
model = "m"

[agent.alice]
llm = "fake"
system_prompt = "SYSTEM"
prompts = ["A-low", { text = "A-high", priority = 5 }]
default_personality = "terse"

[agent.alice.personalities.terse]
prompts = ["PERSONA"]

[[agent.alice.membership]]
project = "payments"

[project.payments]
llm = "fake"
prompts = [{ text = "P-second", priority = 1 }, { file = "p.md", priority = 2 }]
"#,
    );
    home.write("p.md", "P-first\n");
    let out = home.chat(&[
        "alice",
        "--project",
        "payments",
        "--system-append",
        "APPEND",
        "-m",
        "hi",
    ]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let requests = home.requests();
    assert_eq!(
        system_of(&requests[0]).as_deref(),
        Some("SYSTEM\n\nA-high\n\nA-low\n\nP-first\n\nP-second\n\nPERSONA\n\nAPPEND")
    );
}

#[test]
fn h06_system_replacement_and_personality_errors() {
    let home = Home::new("");
    let out = home.chat(&["alice", "--system", "REPLACED", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(system_of(&home.requests()[0]).as_deref(), Some("REPLACED"));
    let out = home.chat(&[
        "--project",
        "payments",
        "--personality",
        "terse",
        "-m",
        "hi",
    ]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: --personality needs an agent; project chats have no personalities.\n"
    );
    let out = home.chat(&["alice", "--personality", "snarky", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: Agent 'alice' has no personality 'snarky'. Its personalities: none\n"
    );
}

#[test]
fn h07_a_prompt_file_edited_between_turns_is_used_on_the_next_turn() {
    let home =
        Home::new("[agent.carol]\nllm = \"fake\"\nsystem_prompt = { file = \"carol.md\" }\n");
    home.write("carol.md", "first version");
    let out = home.chat(&["carol", "-m", "one"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let id = thread_id(&out);
    home.write("carol.md", "second version");
    let out = home.chat(&["carol", "--thread", &id, "-m", "two"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let requests = home.requests();
    assert_eq!(system_of(&requests[0]).as_deref(), Some("first version"));
    assert_eq!(system_of(&requests[1]).as_deref(), Some("second version"));
}

#[test]
fn h07_an_unreadable_prompt_file_stops_the_turn_with_a_clear_message() {
    let home =
        Home::new("[agent.carol]\nllm = \"fake\"\nsystem_prompt = { file = \"missing.md\" }\n");
    let out = home.chat(&["carol", "-m", "one"]);
    assert_eq!(status(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("cannot read the prompt file"), "{err}");
    assert!(err.contains("missing.md"), "{err}");
    assert!(home.llm.requests().is_empty());
}

#[test]
fn h08_flag_ranges_and_extra_fields() {
    let home = Home::new("");
    let out = home.chat(&["alice", "--temperature", "3.5", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: --temperature must be between 0 and 2 (got 3.5)\n"
    );
    let out = home.chat(&[
        "alice", "--stop", "a", "--stop", "b", "--stop", "c", "--stop", "d", "--stop", "e", "-m",
        "hi",
    ]);
    assert_eq!(status(&out), 2);
    assert_eq!(stderr(&out), "error: --stop can be given at most 4 times\n");
    let out = home.chat(&["alice", "--extra", "model=x", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("--extra cannot set 'model'"),
        "{}",
        stderr(&out)
    );
    let out = home.chat(&["alice", "--extra", "a=1.1", "--extra", "b=fast", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let requests = home.requests();
    assert_eq!(requests.len(), 1, "only the valid chat reached the model");
    assert_eq!(requests[0]["a"], serde_json::json!(1.1));
    assert_eq!(requests[0]["b"], "fast");
}

#[test]
fn h09_top_k_is_not_sent_and_flags_override_default_params() {
    let home = Home::new(
        "[agent.carol]\nllm = \"fake\"\n\n[agent.carol.default_params]\ntemperature = 0.5\nmax_tokens = 100\n",
    );
    let out = home.chat(&["carol", "--top-k", "5", "--temperature", "0.25", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(
        err.matches("note: top_k is not sent to OpenAI-compatible endpoints; use --extra top_k=N to force it.")
            .count(),
        1,
        "{err}"
    );
    let request = &home.requests()[0];
    assert!(request.get("top_k").is_none());
    assert_eq!(request["temperature"], serde_json::json!(0.25));
    assert_eq!(request["max_tokens"], 100);
}

#[test]
fn h10_reply_on_stdout_tool_lines_on_stderr_without_escapes() {
    let home = Home::new("");
    home.secrets("TOKEN = \"s3cret\"\n");
    home.llm.push(Script::text_and_tool_calls(
        "Let me look.",
        vec![FakeCall::new(0, "c1", "get_secret", r#"{"key":"TOKEN"}"#)],
    ));
    home.llm.push(Script::text("Done."));
    let out = home.chat(&["alice", "--allow-secrets", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "Let me look.\nDone.\n");
    let err = stderr(&out);
    assert!(
        err.contains("[tool_call: get_secret {\"key\":\"TOKEN\"}]"),
        "{err}"
    );
    assert!(err.contains("[tool_result: get_secret ok "), "{err}");
    assert!(
        !err.contains('\u{1b}') && !stdout(&out).contains('\u{1b}'),
        "{err}"
    );
    assert!(
        !err.contains("s3cret"),
        "the value never reaches the terminal: {err}"
    );
    home.requests();
}

#[test]
fn h11_thread_line_stdin_message_and_terminal_requirement() {
    let home = Home::new("");
    let out = home.chat_stdin(&["alice", "-m", "-"], "from stdin\n");
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let id = thread_id(&out);
    assert_eq!(id.len(), 26);
    assert_eq!(id, id.to_ascii_lowercase());
    assert!(stderr(&out).ends_with(&format!("(thread: {id})\n")));
    assert_eq!(user_texts(&home.requests()[0]), vec!["from stdin"]);
    let out = home.chat(&["alice"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: katari chat needs a terminal for interactive use; pass -m MESSAGE (or -m - to read it from stdin).\n"
    );
}

#[test]
fn h12_no_stream_prints_one_json_object() {
    let home = Home::new("");
    home.llm
        .push(Script::text("The deploy is safe.").usage(12, 5));
    let out = home.chat(&["alice", "--project", "payments", "-m", "hi", "--no-stream"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert_eq!(v["agent"], "alice");
    assert_eq!(v["project"], "payments");
    assert_eq!(v["llm"], "fake");
    assert_eq!(v["model"], "fake-model");
    assert_eq!(v["reply"], "The deploy is safe.");
    assert_eq!(v["tool_calls"], serde_json::json!([]));
    assert_eq!(
        v["usage"],
        serde_json::json!({"prompt_tokens": 12, "completion_tokens": 5})
    );
    assert_eq!(v["finish_reason"], "stop");
    assert_eq!(v["thread_id"].as_str().map(str::len), Some(26));
    assert_eq!(home.requests()[0]["stream"], false);

    home.llm
        .push(Script::status(500, "<html><body>boom</body></html>"));
    let out = home.chat(&["alice", "-m", "hi", "--no-stream"]);
    assert_eq!(status(&out), 1);
    let v: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("LLM 'fake'")),
        "{v}"
    );
    assert_eq!(v.as_object().map(|o| o.len()), Some(2), "{v}");
}

#[test]
fn h13_resuming_sends_earlier_turns_and_a_new_lens_keeps_the_history() {
    let home = Home::new("[project.payments.x]\n");
    let _ = home;
    let home = Home::new("");
    home.llm.push(Script::text("first answer"));
    let out = home.chat(&["alice", "-m", "first question"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let id = thread_id(&out);
    let out = home.chat(&[
        "alice",
        "--thread",
        &id[..10],
        "--project",
        "payments",
        "-m",
        "second",
    ]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let requests = home.requests();
    assert_eq!(user_texts(&requests[1]), vec!["first question", "second"]);
    let assistant: Vec<&Value> = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(assistant[0]["content"], "first answer");
    // Resuming without naming the agent takes it from the thread.
    let out = home.chat(&["--thread", &id, "-m", "third"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(user_texts(&home.requests()[2]).len(), 3);
}

#[test]
fn h14_a_thread_resumed_under_the_wrong_owner_is_refused() {
    let home = Home::new("");
    let out = home.chat(&["bob", "-m", "hi"]);
    let bob = thread_id(&out);
    let out = home.chat(&["alice", "--thread", &bob, "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: Thread {bob} belongs to agent 'bob', not 'alice'. Resume it with: katari chat bob --thread {bob}\n"
        )
    );
    let out = home.chat(&["--project", "payments", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let project = thread_id(&out);
    let out = home.chat(&["alice", "--thread", &project, "-m", "hi"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        format!(
            "error: Thread {project} belongs to project 'payments'. Resume it with: katari chat --project payments --thread {project}\n"
        )
    );
    let listed = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args([
            "--no-workspace",
            "get",
            "threads",
            "--project",
            "payments",
            "--json",
        ])
        .env("KATARI_HOME", home.path())
        .env("USER", "tester")
        .output()
        .expect("katari get threads");
    let threads: Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    assert_eq!(threads[0]["owner"], "tester");
    let other = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args([
            "--no-workspace",
            "get",
            "threads",
            "--project",
            "payments",
            "--json",
        ])
        .env("KATARI_HOME", home.path())
        .env("USER", "someone-else")
        .output()
        .expect("katari get threads");
    assert_eq!(String::from_utf8_lossy(&other.stdout).trim(), "[]");
}

#[test]
fn h18_duplicates_run_once_and_a_third_identical_call_is_refused() {
    let home = Home::new("");
    home.secrets("K = \"v\"\n");
    let call = |id: &str| FakeCall::new(0, id, "get_secret", r#"{"key":"K"}"#);
    // One round with two identical calls and an unknown function.
    home.llm.push(Script::tool_calls(vec![
        call("a1"),
        FakeCall::new(1, "a2", "get_secret", r#"{ "key" : "K" }"#),
        FakeCall::new(2, "a3", "no_such_tool", "{}"),
    ]));
    home.llm.push(Script::tool_calls(vec![call("b1")]));
    home.llm.push(Script::tool_calls(vec![call("c1")]));
    home.llm.push(Script::text("fine"));
    let out = home.chat(&["alice", "--allow-secrets", "-m", "go"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    // H18: the duplicate ran once; the third identical run in the turn was refused.
    assert_eq!(err.matches("[secret read: K]").count(), 2, "{err}");
    assert!(err.contains("[tool_result: get_secret error: Identical call to get_secret already made 2 times in this turn; change the arguments or answer with what you have.]"), "{err}");
    assert!(
        err.contains("[tool_result: no_such_tool error: There is no function named 'no_such_tool'"),
        "{err}"
    );
    let requests = home.requests();
    let second = &requests[1]["messages"];
    let results: Vec<&Value> = second
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[0]["content"], results[1]["content"],
        "duplicates share one result"
    );
    let unknown: Value =
        serde_json::from_str(results[2]["content"].as_str().expect("text")).expect("JSON");
    assert_eq!(unknown["error"]["type"], "unknown_tool");
    // The loop ended with a request offering no tools.
    let last = requests.last().expect("requests");
    assert!(last.get("tools").is_none(), "{last}");
}

#[test]
fn h19_round_limit_and_arguments_cut_by_length() {
    let home = Home::new("");
    home.secrets("K = \"v\"\n");
    for i in 0..3 {
        let args = format!(r#"{{"key":"K{i}"}}"#);
        home.llm.push(Script::tool_calls(vec![FakeCall::new(
            0,
            &format!("r{i}"),
            "get_secret",
            &args,
        )]));
    }
    home.llm.push(Script::text("answered"));
    let out = home.chat(&[
        "alice",
        "--allow-secrets",
        "--max-tool-rounds",
        "2",
        "-m",
        "go",
    ]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "[tool rounds limit reached (2); the model was asked to answer without tools]"
        ),
        "{err}"
    );
    let requests = home.requests();
    assert_eq!(requests.len(), 4);
    assert!(requests[3].get("tools").is_none());
    let limited = requests[3]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")
        .clone();
    let payload: Value =
        serde_json::from_str(limited["content"].as_str().expect("text")).expect("JSON");
    assert_eq!(payload["error"]["type"], "round_limit");
    assert_eq!(
        err.matches("[secret read:").count(),
        2,
        "the third call did not run: {err}"
    );

    let home = Home::new("");
    home.secrets("K = \"v\"\n");
    home.llm.push(
        Script::tool_calls(vec![FakeCall::new(0, "cut", "get_secret", r#"{"key":"K"#)])
            .finish("length"),
    );
    home.llm.push(Script::text("sorry"));
    let out = home.chat(&["alice", "--allow-secrets", "-m", "go"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(!stderr(&out).contains("[secret read"), "not run");
    let requests = home.requests();
    let result = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")
        .clone();
    let payload: Value =
        serde_json::from_str(result["content"].as_str().expect("text")).expect("JSON");
    assert_eq!(payload["error"]["type"], "invalid_argument");
    assert!(
        payload["error"]["message"]
            .as_str()
            .expect("message")
            .contains("did not parse")
    );
}

#[test]
fn h20_retries_dropped_streams_and_trimming() {
    let home = Home::new("");
    home.llm.push(
        Script::status(429, "{\"error\":{\"message\":\"slow down\"}}").header("Retry-After", "1"),
    );
    home.llm.push(Script::text("after retry"));
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "after retry\n");

    home.llm
        .push(Script::text("never finished").ending(Ending::Dropped));
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    let id = thread_id(&out);
    // The failed turn is kept as an error and never sent again.
    let out = home.chat(&["alice", "--thread", &id, "-m", "again"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("has an interrupted turn (turn 1,"),
        "{}",
        stderr(&out)
    );
    let last = home.requests().last().expect("requests").clone();
    assert_eq!(user_texts(&last), vec!["again"]);

    let home = Home::exact(
        "[llm.small]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"m\"\ncontext_window = 600\n\n[agent.alice]\nllm = \"small\"\n",
    );
    let long = "x".repeat(3000);
    let out = home.chat(&["alice", "-m", &long]);
    let id = thread_id(&out);
    let out = home.chat(&[
        "alice",
        "--thread",
        &id,
        "--max-tokens",
        "10",
        "-m",
        "short",
    ]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("[history trimmed: 1 oldest turns not sent]"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        user_texts(home.requests().last().expect("request")),
        vec!["short"]
    );
}

#[test]
fn h21_secrets_are_offered_only_when_allowed() {
    let home = Home::new("");
    home.secrets("TOKEN = \"s3cret\"\n");
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(home.requests()[0].get("tools").is_none());
    home.llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "s",
        "get_secret",
        r#"{"key":"TOKEN"}"#,
    )]));
    let out = home.chat(&["alice", "--allow-secrets", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let id = thread_id(&out);
    let err = stderr(&out);
    assert!(err.starts_with(&format!(
        "warning: --allow-secrets lets the model read secret values; anything it reads is stored in thread {id}.\n"
    )), "{err}");
    assert!(err.contains("[secret read: TOKEN]"), "{err}");
    assert!(!err.contains("s3cret") && !stdout(&out).contains("s3cret"));
    let requests = home.requests();
    assert_eq!(tool_names(&requests[1]), vec!["get_secret"]);
    let result = requests[2]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")
        .clone();
    assert_eq!(result["content"], r#"{"key":"TOKEN","value":"s3cret"}"#);
}

#[test]
fn h22_model_text_reaches_a_pipe_unchanged() {
    let home = Home::new("");
    home.llm.push(Script::text("red \u{1b}[31mtext\u{1b}[0m"));
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "red \u{1b}[31mtext\u{1b}[0m\n");
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) {}

/// A home whose project `payments` has `tests/chat`-style scripts written into it.
fn scripted_home(script: &str) -> Home {
    let home = Home::new("");
    home.write("billing.kt", script);
    let config = std::fs::read_to_string(home.path().join("config.toml")).expect("config");
    std::fs::write(
        home.path().join("config.toml"),
        config.replace(
            "[project.payments]\nllm = \"fake\"\n",
            "[project.payments]\nllm = \"fake\"\nscripts = [\"billing.kt\"]\n",
        ),
    )
    .expect("config");
    home
}

const BILLING: &str = r#"@"Whether the person approves paying a refund."
request approve(amount: integer) -> boolean

@"Refunds an amount once the person approves it."
agent refund(amount: integer) -> string with approve {
  if (approve(amount = amount)) { "refunded" } else { "refused" }
}

@"Looks up an account; its token stays private."
agent account(name: string, token: string of private) -> { name: string, token: string of private } {
  { name = name, token = token }
}
"#;

#[test]
fn s02_a_script_tool_result_has_private_values_redacted() {
    let home = scripted_home(BILLING);
    home.llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "a",
        "kt_billing_account",
        r#"{"name":"ada","token":"tok-123"}"#,
    )]));
    let out = home.chat(&["alice", "--project", "payments", "-m", "look up ada"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let requests = home.requests();
    let result = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")
        .clone();
    let content = result["content"].as_str().expect("text");
    let v: Value = serde_json::from_str(content).expect("JSON");
    assert_eq!(v["result"]["name"], "ada");
    assert_ne!(v["result"]["token"], "tok-123", "{content}");
    assert!(!content.contains("tok-123"), "{content}");
}

#[test]
fn s03_a_request_in_a_one_shot_chat_needs_a_person() {
    let home = scripted_home(BILLING);
    home.llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "r",
        "kt_billing_refund",
        r#"{"amount":120}"#,
    )]));
    let out = home.chat(&["alice", "--project", "payments", "-m", "refund"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let text = "Script agent kt_billing_refund performed request 'billing.approve', which needs an answer from a person, but this chat is not interactive.\nHandle the request in the script, or ask again in an interactive chat.";
    assert!(
        stderr(&out).contains(&format!("{text}\n")),
        "{}",
        stderr(&out)
    );
    let requests = home.requests();
    let result = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")
        .clone();
    let v: Value = serde_json::from_str(result["content"].as_str().expect("text")).expect("JSON");
    assert_eq!(v["error"]["type"], "needs_person");
    assert_eq!(v["error"]["message"], text);
}

#[test]
fn s04_a_script_with_a_type_error_stops_the_turn() {
    let home = scripted_home("@\"Broken.\"\nagent broken() -> integer {\n  \"not a number\"\n}\n");
    let out = home.chat(&["alice", "--project", "payments", "-m", "hi"]);
    assert_eq!(status(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("error[K3"), "{err}");
    assert!(
        err.contains("fix the script or remove it from project.payments.scripts in "),
        "{err}"
    );
    assert!(home.llm.requests().is_empty(), "nothing was sent");
    // The agent alone does not load the project's scripts.
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
}

#[test]
fn a_reply_of_ten_megabytes_is_kept_whole() {
    let home = Home::new("");
    let big = "word ".repeat(2 * 1024 * 1024);
    home.llm.push(Script::text(&big).chunks(64));
    let out = home.chat(&["alice", "-m", "write a lot"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out).len(), big.len() + 1);
    let id = thread_id(&out);
    let log = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["--no-workspace", "get", "thread", &id, "--json"])
        .env("KATARI_HOME", home.path())
        .output()
        .expect("katari get thread");
    let v: Value = serde_json::from_slice(&log.stdout).expect("JSON");
    assert_eq!(
        v["messages"][1]["content"].as_str().map(str::len),
        Some(big.len())
    );
}

#[test]
fn conflicting_and_malformed_flags_are_usage_errors() {
    let home = Home::new("");
    let cases: &[(&[&str], &str)] = &[
        (
            &["alice", "--top-p", "1.5", "-m", "x"],
            "error: --top-p must be between 0 and 1 (got 1.5)\n",
        ),
        (
            &["alice", "--max-tokens", "0", "-m", "x"],
            "error: --max-tokens must be a positive integer (got 0)\n",
        ),
        (
            &["alice", "--top-k", "-3", "-m", "x"],
            "error: --top-k must be a positive integer (got -3)\n",
        ),
        (
            &["alice", "--max-tool-rounds", "0", "-m", "x"],
            "error: --max-tool-rounds must be a positive integer (got 0)\n",
        ),
        (
            &["alice", "--extra", "novalue", "-m", "x"],
            "error: --extra takes KEY=VALUE (got 'novalue')\n",
        ),
        (
            &["alice", "--allow-tool", "bad", "-m", "x"],
            "error: --allow-tool takes SERVER/TOOL, SERVER/* or a kt_ name (got 'bad')\n",
        ),
        (&["alice", "--system-file", "missing.txt", "-m", "x"], ""),
        (
            &["alice", "--thread", "0123", "-m", "x"],
            "error: Thread prefix '0123' is too short; give at least 8 characters.\n",
        ),
    ];
    for (args, expected) in cases {
        let out = home.chat(args);
        assert_eq!(status(&out), 2, "{args:?}: {}", stderr(&out));
        if !expected.is_empty() {
            assert_eq!(stderr(&out), *expected, "{args:?}");
        } else {
            assert!(
                stderr(&out).contains("cannot read --system-file missing.txt"),
                "{}",
                stderr(&out)
            );
        }
    }
    let out = home.chat(&["alice", "--thread", "0123456789", "-m", "x"]);
    assert_eq!(status(&out), 2);
    assert_eq!(
        stderr(&out),
        "error: No thread '0123456789'. List threads with: katari get threads\n"
    );
    let out = home.chat(&["alice", "--system", "a", "--system-file", "b", "-m", "x"]);
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    assert!(home.llm.requests().is_empty(), "nothing was sent");
}

#[test]
fn the_readme_example_configuration_chats_and_its_tools_work() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/chat");
    let config =
        std::fs::read_to_string(root.join("config.toml")).expect("examples/chat/config.toml");
    let peers = katari_tests::peers::peers_dir();
    let home = Home::exact(
        &config
            .replace("http://127.0.0.1:8080/v1", "{url}")
            .replace("../../.peers/", &format!("{}/", peers.display())),
    );
    std::fs::copy(root.join("tools.kt"), home.path().join("tools.kt")).expect("copy tools.kt");
    std::fs::create_dir(home.path().join("notes")).expect("notes folder");
    std::fs::copy(
        root.join("notes/todo.md"),
        home.path().join("notes/todo.md"),
    )
    .expect("copy a note");
    home.llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "w",
        "kt_tools_word_count",
        r#"{"text":"the quick brown fox"}"#,
    )]));
    home.llm.push(Script::text("Four words."));
    let out = home.chat(&[
        "helper",
        "--project",
        "demo",
        "-m",
        "How many words are in 'the quick brown fox'?",
    ]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "Four words.\n");
    let requests = home.requests();
    assert_eq!(
        tool_names(&requests[0]),
        vec![
            "mcp_search_files",
            "mcp_describe_files",
            "mcp_invoke_files",
            "kt_tools_convert_length",
            "kt_tools_word_count"
        ]
    );
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    let result = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("last")
        .clone();
    let v: Value = serde_json::from_str(result["content"].as_str().expect("text")).expect("JSON");
    assert_eq!(v["result"]["words"], 4);
}

#[test]
fn h16_every_request_pairs_calls_after_failures_limits_and_resumes() {
    let home = Home::new("");
    home.secrets("K = \"v\"\n");
    let call =
        |id: &str, key: &str| FakeCall::new(0, id, "get_secret", &format!(r#"{{"key":"{key}"}}"#));
    // Turn 1: a tool round, then the stream drops: the turn fails and is never sent again.
    home.llm.push(Script::tool_calls(vec![call("t1", "K")]));
    home.llm.push(Script::text("half").ending(Ending::Dropped));
    let out = home.chat(&["alice", "--allow-secrets", "-m", "one"]);
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    let id = thread_id(&out);
    // Turn 2: the round limit, with calls refused and a last request without tools.
    home.llm
        .push(Script::tool_calls(vec![call("t2", "A"), call("t3", "B")]));
    home.llm.push(Script::tool_calls(vec![call("t4", "C")]));
    home.llm.push(Script::text("limited"));
    let out = home.chat(&[
        "alice",
        "--allow-secrets",
        "--max-tool-rounds",
        "1",
        "--thread",
        &id,
        "-m",
        "two",
    ]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    // Turn 3: an unknown function and arguments that do not parse, in one round.
    home.llm.push(Script::tool_calls(vec![
        FakeCall::new(0, "t5", "nope", "{}"),
        FakeCall::new(1, "t6", "get_secret", "{\"key\":"),
    ]));
    home.llm.push(Script::text("done"));
    let out = home.chat(&["alice", "--allow-secrets", "--thread", &id, "-m", "three"]);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let requests = home.requests();
    let last = requests.last().expect("requests");
    assert_eq!(
        user_texts(last),
        vec!["two", "three"],
        "the failed turn stays out"
    );
    let tool_results = last["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(tool_results, 5, "t2, t3, t4 (round_limit), t5, t6");
}

#[test]
fn a_provider_error_reaches_the_terminal_through_the_one_sanitiser() {
    use katari_runtime::mcp::text::HOSTILE;
    let home = Home::new("");
    let body = serde_json::json!({"error": {"message": HOSTILE}}).to_string();
    home.llm.push(Script::status(400, &body));
    let out = home.chat(&["alice", "-m", "hi"]);
    assert_eq!(status(&out), 1, "{}", stderr(&out));
    let err = stderr(&out);
    // The escape sequences go whole: no `[31m` or `]0;title` is left behind. The carriage
    // return is a line end, which a provider's message turns into a space.
    assert!(err.contains("\nab cde31mf g\n"), "{err:?}");
    assert!(
        !err.contains("[31m") && !err.contains("title") && !err.contains('\u{1b}'),
        "{err:?}"
    );
}
