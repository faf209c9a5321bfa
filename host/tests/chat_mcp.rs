//! `katari chat` with MCP servers (`host.md` §7.6, §9, §10, §17 H04, H07, H21, P16): the real
//! binary, the fake OpenAI-compatible server of `katari_tests::fake_llm` (a fake for fault
//! injection that records requests) calling the meta-functions, and real MCP servers — the
//! reference server-everything over stdio and `tests/meta/raw_server.py`, a fake MCP server for
//! what well-behaved servers never send.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use katari_chat::message::check_pairing;
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

/// `[mcp.everything]`: server-everything over stdio.
fn everything() -> String {
    format!(
        "[mcp.everything]\ncommand = {}\nargs = [{}, \"stdio\"]\n",
        toml_string(&peers::node().display().to_string()),
        toml_string(&peers::everything_entry(false).display().to_string())
    )
}

/// `[mcp.raw]`: the fake misbehaving server.
fn raw() -> String {
    format!(
        "[mcp.raw]\ncommand = {}\nargs = [{}]\n",
        toml_string(&peers::python_mcp().display().to_string()),
        toml_string(
            &peers::repo_root()
                .join("tests/meta/raw_server.py")
                .display()
                .to_string()
        )
    )
}

impl Home {
    fn new(project: &str, servers: &str) -> Home {
        let dir = tempfile::tempdir().expect("temporary folder");
        let llm = FakeLlm::start();
        let home = Home { dir, llm };
        home.configure(project, servers);
        home
    }

    fn configure(&self, project: &str, servers: &str) {
        std::fs::write(
            self.path().join("config.toml"),
            format!(
                "[llm.fake]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\n\n\
                 [agent.alice]\nllm = \"fake\"\n\n[[agent.alice.membership]]\nproject = \"ops\"\n\n\
                 [project.ops]\nllm = \"fake\"\n{project}\n\n{servers}",
                self.llm.base_url()
            ),
        )
        .expect("config");
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

    fn requests(&self) -> Vec<Value> {
        for (i, m) in self.llm.requests_messages().iter().enumerate() {
            if let Err(e) = check_pairing(m) {
                panic!("request {i} breaks the pairing invariant: {e}");
            }
        }
        self.llm.requests()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The content of the last tool message of a request.
fn last_result(request: &Value) -> String {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .expect("a tool result")
        .to_string()
}

fn thread_id(o: &Output) -> String {
    let err = stderr(o);
    let start = err.find("(thread: ").expect("thread line") + 9;
    err[start..start + 26].to_string()
}

#[test]
fn h04_the_project_lens_offers_its_servers_meta_functions_and_invoke_reaches_the_server() {
    let home = Home::new("mcp_servers = [\"everything\"]", &everything());
    home.llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "e1",
        "mcp_invoke_everything",
        r#"{"tool":"echo","arguments":{"message":"hello there"}}"#,
    )]));
    home.llm.push(Script::text("It echoed."));
    let out = home.chat(&["alice", "--project", "ops", "-m", "echo something"]);
    ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("[tool_call: mcp_invoke_everything {\"tool\":\"echo\""),
        "{err}"
    );
    assert!(
        err.contains("[tool_result: mcp_invoke_everything ok "),
        "{err}"
    );
    let requests = home.requests();
    assert_eq!(
        tool_names(&requests[0]),
        vec![
            "mcp_search_everything",
            "mcp_describe_everything",
            "mcp_invoke_everything",
            "mcp_read_everything",
            "mcp_prompt_everything"
        ]
    );
    let result: Value = serde_json::from_str(&last_result(&requests[1])).expect("JSON");
    assert_eq!(result["content"][0]["text"], "Echo: hello there");
    // The agent alone offers nothing of the project.
    let out = home.chat(&["alice", "-m", "hi"]);
    ok(&out);
    assert!(
        home.requests()
            .last()
            .expect("request")
            .get("tools")
            .is_none()
    );
}

#[test]
fn h07_a_server_added_to_the_project_is_offered_on_the_next_turn() {
    let home = Home::new("", &everything());
    let out = home.chat(&["--project", "ops", "-m", "first"]);
    ok(&out);
    let id = thread_id(&out);
    home.configure("mcp_servers = [\"everything\"]", &everything());
    let out = home.chat(&["--project", "ops", "--thread", &id, "-m", "second"]);
    ok(&out);
    let requests = home.requests();
    assert!(tool_names(&requests[0]).is_empty());
    assert!(tool_names(&requests[1]).contains(&"mcp_search_everything".to_string()));
}

#[test]
fn h21_allow_tool_denies_other_invokes_and_hides_them_from_search() {
    let home = Home::new("mcp_servers = [\"everything\"]", &everything());
    home.llm.push(Script::tool_calls(vec![
        FakeCall::new(
            0,
            "d1",
            "mcp_invoke_everything",
            r#"{"tool":"get-sum","arguments":{"a":1,"b":2}}"#,
        ),
        FakeCall::new(
            1,
            "s1",
            "mcp_search_everything",
            r#"{"query":"sum","top_k":20}"#,
        ),
    ]));
    let out = home.chat(&[
        "--project",
        "ops",
        "--allow-tool",
        "everything/echo",
        "-m",
        "add",
    ]);
    ok(&out);
    let requests = home.requests();
    let messages = requests[1]["messages"].as_array().expect("messages");
    let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    let denied: Value =
        serde_json::from_str(results[0]["content"].as_str().expect("text")).expect("JSON");
    assert_eq!(
        denied,
        json!({"error": {"type": "denied", "message": "Tool 'everything/get-sum' is not in this chat's --allow-tool list."}})
    );
    let search: Value =
        serde_json::from_str(results[1]["content"].as_str().expect("text")).expect("JSON");
    let ids: Vec<&str> = search["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["kind"] == "tool")
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert!(!ids.contains(&"get-sum"), "{search}");
}

#[test]
fn p16_server_error_text_is_sanitised_on_stderr_and_raw_for_the_model() {
    let home = Home::new("mcp_servers = [\"raw\"]", &raw());
    home.llm.push(Script::tool_calls(vec![
        FakeCall::new(0, "x1", "mcp_invoke_raw", r#"{"tool":"escape"}"#),
        FakeCall::new(1, "x2", "mcp_invoke_something_else", "{}"),
    ]));
    let out = home.chat(&["--project", "ops", "-m", "fail"]);
    ok(&out);
    let err = stderr(&out);
    assert!(
        err.contains("[tool_result: mcp_invoke_raw error: boom failed]"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    let requests = home.requests();
    let messages = requests[1]["messages"].as_array().expect("messages");
    let results: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(
        results[0]["content"],
        r#"{"content":[{"type":"text","text":"\u001b[31mboom\u001b[0m\u0007 failed"}],"isError":true}"#
    );
    let unknown: Value =
        serde_json::from_str(results[1]["content"].as_str().expect("text")).expect("JSON");
    assert_eq!(unknown["error"]["type"], "unknown_tool");
}

#[test]
fn a_server_that_fails_to_start_warns_once_and_the_chat_goes_on() {
    let home = Home::new(
        "mcp_servers = [\"broken\"]",
        "[mcp.broken]\ncommand = \"/nonexistent/katari-test-server\"\n",
    );
    let out = home.chat(&["--project", "ops", "-m", "hi"]);
    ok(&out);
    let err = stderr(&out);
    assert_eq!(err.matches("warning: ").count(), 1, "{err}");
    assert!(err.contains("broken"), "{err}");
    // Capabilities unknown: search, describe and invoke are offered (§10.1.2).
    assert_eq!(
        tool_names(&home.requests()[0]),
        vec![
            "mcp_search_broken",
            "mcp_describe_broken",
            "mcp_invoke_broken"
        ]
    );
}
