//! Persistent tool allow-lists in `katari chat`: `allowed_tools` and `denied_tools` on
//! `[mcp.NAME]`, on a project's `mcp_servers` entry and on a membership, together with
//! `--allow-tool`, applied to invoke, describe and search. The real binary talks to the real
//! server-everything over stdio; the model is the fake OpenAI-compatible server of
//! `katari_tests::fake_llm` (a fake that records requests and plays the calls a test scripts).

use std::path::Path;
use std::process::{Command, Output, Stdio};

use katari_tests::fake_llm::{FakeCall, FakeLlm, Script};
use katari_tests::peers;
use serde_json::{Value, json};
use tempfile::TempDir;

struct Home {
    dir: TempDir,
    llm: FakeLlm,
}

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a TOML basic string is a JSON string here")
}

impl Home {
    /// A configuration with server-everything as `[mcp.everything]` (plus `server_keys`), the
    /// project `ops` (plus `project_keys`) and the agent alice, a member of ops (plus
    /// `membership_keys`).
    fn new(server_keys: &str, project_keys: &str, membership_keys: &str) -> Home {
        let dir = tempfile::tempdir().expect("temporary folder");
        let llm = FakeLlm::start();
        std::fs::write(
            dir.path().join("config.toml"),
            format!(
                "[llm.fake]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\n\n\
                 [agent.alice]\nllm = \"fake\"\n\n[[agent.alice.membership]]\nproject = \"ops\"\n{membership_keys}\n\n\
                 [project.ops]\nllm = \"fake\"\n{project_keys}\n\n\
                 [mcp.everything]\ncommand = {}\nargs = [{}, \"stdio\"]\n{server_keys}\n",
                llm.base_url(),
                toml_string(&peers::node().display().to_string()),
                toml_string(&peers::everything_entry(false).display().to_string())
            ),
        )
        .expect("config");
        Home { dir, llm }
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
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .expect("run katari chat")
    }

    /// Runs one chat turn in which the model makes `calls` (function, arguments) in one round
    /// and then answers; the parsed tool results, in call order.
    fn results(&self, args: &[&str], calls: &[(&str, Value)]) -> Vec<Value> {
        let before = self.llm.requests().len();
        self.llm.push(Script::tool_calls(
            calls
                .iter()
                .enumerate()
                .map(|(i, (name, arguments))| {
                    FakeCall::new(i as u64, &format!("c{i}"), name, &arguments.to_string())
                })
                .collect(),
        ));
        self.llm.push(Script::text("Done."));
        let out = self.chat(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let requests = self.llm.requests();
        let answer = &requests[before + 1];
        answer["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| serde_json::from_str(m["content"].as_str().expect("text")).expect("JSON"))
            .collect()
    }
}

fn invoke(tool: &str, arguments: Value) -> (&'static str, Value) {
    (
        "mcp_invoke_everything",
        json!({"tool": tool, "arguments": arguments}),
    )
}

fn search() -> (&'static str, Value) {
    ("mcp_search_everything", json!({"query": "", "top_k": 20}))
}

fn describe(tool: &str) -> (&'static str, Value) {
    ("mcp_describe_everything", json!({"tool": tool}))
}

fn denied(message: &str) -> Value {
    json!({"error": {"type": "denied", "message": message}})
}

/// The tool ids a search result lists.
fn found(result: &Value) -> Vec<String> {
    result["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["kind"] == "tool")
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect()
}

fn echoed(result: &Value) -> bool {
    result["content"][0]["text"] == "Echo: hi"
}

const ECHO: &str = "echo";
const SUM: &str = "get-sum";

#[test]
fn the_servers_own_lists_apply_to_invoke_describe_and_search() {
    let home = Home::new(
        "allowed_tools = [\"ech?\", \"get-*\"]\ndenied_tools = [\"get-sum\"]",
        "mcp_servers = [\"everything\"]",
        "",
    );
    let results = home.results(
        &["--project", "ops", "-m", "go"],
        &[
            invoke(ECHO, json!({"message": "hi"})),
            invoke(SUM, json!({"a": 1, "b": 2})),
            invoke("trigger-long-running-operation", json!({})),
            describe(SUM),
            search(),
        ],
    );
    assert!(echoed(&results[0]), "{}", results[0]);
    assert_eq!(
        results[1],
        denied("Tool 'everything/get-sum' is in the denied_tools of [mcp.everything].")
    );
    assert_eq!(
        results[2],
        denied(
            "Tool 'everything/trigger-long-running-operation' is not in the allowed_tools of [mcp.everything]."
        )
    );
    assert_eq!(results[3], results[1]);
    let ids = found(&results[4]);
    assert!(ids.contains(&ECHO.to_string()), "{ids:?}");
    assert!(
        ids.iter()
            .all(|id| id == ECHO || (id.starts_with("get-") && id != SUM)),
        "{ids:?}"
    );
}

#[test]
fn a_project_entry_narrows_the_server_and_applies_in_project_chat() {
    let home = Home::new(
        "",
        "mcp_servers = [{ name = \"everything\", denied_tools = [\"get-*\"] }]",
        "",
    );
    let results = home.results(
        &["--project", "ops", "-m", "go"],
        &[
            invoke(SUM, json!({"a": 1, "b": 2})),
            invoke(ECHO, json!({"message": "hi"})),
            search(),
        ],
    );
    assert_eq!(
        results[0],
        denied(
            "Tool 'everything/get-sum' is in the denied_tools of the mcp_servers entry of project 'ops'."
        )
    );
    assert!(echoed(&results[1]), "{}", results[1]);
    let ids = found(&results[2]);
    assert!(ids.contains(&ECHO.to_string()), "{ids:?}");
    assert!(!ids.iter().any(|id| id.starts_with("get-")), "{ids:?}");
}

#[test]
fn a_membership_overrides_the_server_and_project_for_its_agent_only() {
    let home = Home::new(
        "allowed_tools = [\"echo\"]",
        "mcp_servers = [{ name = \"everything\", denied_tools = [\"get-sum\"] }]",
        "allowed_tools = [\"everything/get-sum\"]",
    );
    // alice in ops: the membership is the most specific layer with a say about every tool of
    // everything, because it lists some.
    let results = home.results(
        &["alice", "--project", "ops", "-m", "go"],
        &[
            invoke(SUM, json!({"a": 1, "b": 2})),
            invoke(ECHO, json!({"message": "hi"})),
            search(),
        ],
    );
    assert_eq!(results[0]["content"][0]["text"], "The sum of 1 and 2 is 3.");
    assert_eq!(
        results[1],
        denied(
            "Tool 'everything/echo' is not in the allowed_tools of the membership of agent 'alice' in project 'ops'."
        )
    );
    assert_eq!(found(&results[2]), [SUM]);
    // The project's own chat has no membership: the project entry and the server decide.
    let results = home.results(
        &["--project", "ops", "-m", "go"],
        &[
            invoke(SUM, json!({"a": 1, "b": 2})),
            invoke(ECHO, json!({"message": "hi"})),
        ],
    );
    assert_eq!(
        results[0],
        denied(
            "Tool 'everything/get-sum' is in the denied_tools of the mcp_servers entry of project 'ops'."
        )
    );
    assert!(echoed(&results[1]), "{}", results[1]);
}

#[test]
fn allow_tool_is_the_most_specific_of_all() {
    let home = Home::new(
        "denied_tools = [\"echo\"]",
        "mcp_servers = [\"everything\"]",
        "denied_tools = [\"everything/*\"]",
    );
    let results = home.results(
        &[
            "alice",
            "--project",
            "ops",
            "--allow-tool",
            "everything/echo",
            "-m",
            "go",
        ],
        &[
            invoke(ECHO, json!({"message": "hi"})),
            invoke(SUM, json!({"a": 1, "b": 2})),
        ],
    );
    assert!(echoed(&results[0]), "{}", results[0]);
    assert_eq!(
        results[1],
        denied("Tool 'everything/get-sum' is not in this chat's --allow-tool list.")
    );
    // Without --allow-tool the membership denies everything of the server.
    let results = home.results(
        &["alice", "--project", "ops", "-m", "go"],
        &[invoke(ECHO, json!({"message": "hi"})), search()],
    );
    assert_eq!(
        results[0],
        denied(
            "Tool 'everything/echo' is in the denied_tools of the membership of agent 'alice' in project 'ops'."
        )
    );
    assert!(found(&results[1]).is_empty(), "{}", results[1]);
}

#[test]
fn bad_lists_are_configuration_errors_with_a_fix() {
    let home = Home::new(
        "allowed_tools = [\"get-[\"]\ndenied_tools = \"echo\"",
        "mcp_servers = [{ name = \"everything\", allowed_tools = [\"{a,b\"] }, { allowed_tools = [] }]",
        "denied_tools = [\"echo\"]",
    );
    let out = home.chat(&["alice", "-m", "go"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).replace(&home.path().display().to_string(), "T");
    for expected in [
        "T/config.toml:11: agent.alice.membership[0].denied_tools: 'echo' does not name a server: a membership's patterns are SERVER/GLOB\n  fix: write SERVER/GLOB patterns such as \"github/list_*\"",
        "T/config.toml:15: project.ops.mcp_servers[0].allowed_tools: '{a,b' is not a valid glob (",
        "T/config.toml:15: project.ops.mcp_servers[1]: missing required key 'name'\n  fix: add name = \"SERVER\"",
        "mcp.everything.allowed_tools: 'get-[' is not a valid glob (unclosed character class; missing ']')\n  fix: write tool names or globs",
        "mcp.everything.denied_tools: must be an array of tool names or globs\n  fix: write denied_tools = [\"list_*\", \"get_file\"]",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
    }
}
