//! `katari chat` as a person meets it on a terminal (`host.md` §7.1.3, §7.10, §11.2.3, §17 H15,
//! H17, S03), and what a crash leaves behind: the real binary on a pseudo-terminal against the
//! fake OpenAI-compatible server of `katari_tests::fake_llm` (a fake for fault injection).

#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use katari_chat::message::check_pairing;
use katari_tests::fake_llm::{FakeCall, FakeLlm, Script};
use rexpect::session::{PtySession, spawn_command};
use serde_json::Value;
use tempfile::TempDir;

/// How long one expectation may wait.
const EXPECT_MS: u64 = 30_000;

const SCRIPTS: &str = r#"@"Whether the person approves paying a refund."
request approve(amount: integer) -> boolean

@"Refunds an amount once the person approves it."
agent refund(amount: integer) -> string with approve {
  if (approve(amount = amount)) { f"refunded ${string.to_string(value = amount)}" } else { "refused" }
}

@"Counts for a very long time."
agent spin() -> integer {
  let xs = array.range(start = 0, end = 100000)
  for (x in xs, var n = 0) {
    for (y in xs) { next }
    next with { n = n + 1 }
  } then { n }
}
"#;

fn home(llm: &FakeLlm) -> TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            r#"[llm.fake]
kind = "openai"
base_url = "{}"
model = "fake-model"

[agent.alice]
llm = "fake"

[[agent.alice.membership]]
project = "payments"

[project.payments]
llm = "fake"
scripts = ["billing.kt"]
"#,
            llm.base_url()
        ),
    )
    .expect("config");
    std::fs::write(dir.path().join("billing.kt"), SCRIPTS).expect("script");
    dir
}

fn katari(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_katari"));
    c.arg("--no-workspace")
        .args(args)
        .current_dir(dir)
        .env("KATARI_HOME", dir)
        .env("NO_COLOR", "1")
        .env("TERM", "dumb")
        .env("USER", "tester");
    c
}

fn expect(s: &mut PtySession, text: &str) {
    if let Err(e) = s.exp_string(text) {
        panic!("expected {text:?} on the terminal: {e}");
    }
}

fn pairs(llm: &FakeLlm) {
    for (i, m) in llm.requests_messages().iter().enumerate() {
        if let Err(e) = check_pairing(m) {
            panic!("request {i} breaks the pairing invariant: {e}");
        }
    }
}

fn users(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

/// The one thread of alice, from `katari get threads --json`.
fn only_thread(dir: &Path) -> Value {
    let out = katari(dir, &["get", "threads", "--agent", "alice", "--json"])
        .output()
        .expect("katari get threads");
    let threads: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(threads.as_array().map(Vec::len), Some(1), "{threads}");
    threads[0].clone()
}

#[test]
fn an_interactive_chat_of_two_turns() {
    let llm = FakeLlm::start();
    let dir = home(&llm);
    llm.push(Script::text("first reply"));
    llm.push(Script::text("second reply"));
    let mut s = spawn_command(katari(dir.path(), &["chat", "alice"]), Some(EXPECT_MS))
        .expect("katari chat starts on a pty");
    expect(&mut s, "(thread: ");
    expect(&mut s, "alice> ");
    s.send_line("hello").expect("type");
    expect(&mut s, "first reply");
    expect(&mut s, "alice> ");
    s.send_line("and again").expect("type");
    expect(&mut s, "second reply");
    expect(&mut s, "alice> ");
    s.send_line("/quit").expect("type");
    s.exp_eof().expect("the chat ends");
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(users(&requests[1]), vec!["hello", "and again"]);
    pairs(&llm);
    assert_eq!(only_thread(dir.path())["turns"], 2);
}

#[test]
fn ctrl_c_during_a_streamed_reply_cancels_the_turn_and_keeps_the_prompt() {
    let llm = FakeLlm::start();
    let dir = home(&llm);
    llm.push(Script::endless(100_000, Duration::from_millis(20)));
    llm.push(Script::text("after the interruption"));
    let mut s = spawn_command(katari(dir.path(), &["chat", "alice"]), Some(EXPECT_MS))
        .expect("katari chat starts on a pty");
    expect(&mut s, "alice> ");
    s.send_line("talk forever").expect("type");
    // Wait until text streams, then interrupt.
    std::thread::sleep(Duration::from_millis(500));
    s.send_control('c').expect("Ctrl-C");
    expect(&mut s, "(turn cancelled)");
    expect(&mut s, "alice> ");
    s.send_line("next question").expect("type");
    expect(&mut s, "after the interruption");
    expect(&mut s, "alice> ");
    s.send_control('d').expect("Ctrl-D");
    s.exp_eof().expect("the chat ends");
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    // The cancelled turn is never sent again.
    assert_eq!(users(&requests[1]), vec!["next question"]);
    pairs(&llm);
    let thread = only_thread(dir.path());
    let id = thread["id"].as_str().expect("id");
    let out = katari(dir.path(), &["get", "thread", id, "--json"])
        .output()
        .expect("katari get thread");
    let log: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let first: Vec<&Value> = log["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["turn"] == 1)
        .collect();
    assert!(!first.is_empty());
    assert!(first.iter().all(|m| m["status"] == "error"), "{log}");
}

#[test]
fn a_script_request_is_answered_at_the_terminal() {
    let llm = FakeLlm::start();
    let dir = home(&llm);
    llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "r1",
        "kt_billing_refund",
        r#"{"amount":120}"#,
    )]));
    llm.push(Script::text("The refund went through."));
    let mut s = spawn_command(
        katari(dir.path(), &["chat", "alice", "--project", "payments"]),
        Some(EXPECT_MS),
    )
    .expect("katari chat starts on a pty");
    expect(&mut s, "alice@payments> ");
    s.send_line("refund 120").expect("type");
    expect(&mut s, "[request from kt_billing_refund: billing.approve]");
    expect(&mut s, "answer type: boolean");
    expect(&mut s, "answer> ");
    s.send_line("maybe").expect("type a wrong answer");
    expect(&mut s, "answer> ");
    s.send_line("true").expect("answer");
    expect(&mut s, "[tool_result: kt_billing_refund ok");
    expect(&mut s, "The refund went through.");
    expect(&mut s, "alice@payments> ");
    s.send_line("/exit").expect("type");
    s.exp_eof().expect("the chat ends");
    let requests = llm.requests();
    let result = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool result")
        .clone();
    assert_eq!(result["content"], r#"{"result":"refunded 120"}"#);
    pairs(&llm);
}

#[test]
fn a_killed_chat_leaves_an_interrupted_turn_that_is_reported_and_retried() {
    let llm = FakeLlm::start();
    let dir = home(&llm);
    llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "s1",
        "kt_billing_spin",
        "{}",
    )]));
    let mut child = katari(
        dir.path(),
        &["chat", "alice", "--project", "payments", "-m", "spin it"],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("katari chat starts");
    let mut err = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    loop {
        line.clear();
        let n = err.read_line(&mut line).expect("read stderr");
        assert!(n > 0, "katari chat ended before calling the tool");
        if line.contains("[tool_call: kt_billing_spin") {
            break;
        }
    }
    // SIGKILL in the middle of the slow tool: nothing gets to clean up.
    child.kill().expect("kill katari chat");
    let _ = child.wait();
    let thread = only_thread(dir.path());
    assert_eq!(thread["interrupted"], true, "{thread}");
    let id = thread["id"].as_str().expect("id").to_string();

    // The next resume reports the turn with its started call, and never sends it.
    let out = katari(
        dir.path(),
        &[
            "chat",
            "alice",
            "--project",
            "payments",
            "--thread",
            &id,
            "-m",
            "what now?",
        ],
    )
    .stdin(Stdio::null())
    .output()
    .expect("katari chat");
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "Thread {id} has an interrupted turn (turn 1, started "
        )),
        "{err}"
    );
    assert!(
        err.contains(
            "It will not be sent to the model.\nType .retry to send its message again.\n  started kt_billing_spin {}\n"
        ),
        "{err}"
    );
    assert!(!err.contains("(finished)"), "{err}");
    let requests = llm.requests();
    assert_eq!(users(requests.last().expect("request")), vec!["what now?"]);

    // `.retry` sends the interrupted turn's message again as a new turn.
    llm.push(Script::text("retried"));
    let mut s = spawn_command(
        katari(
            dir.path(),
            &["chat", "alice", "--project", "payments", "--thread", &id],
        ),
        Some(EXPECT_MS),
    )
    .expect("katari chat starts on a pty");
    expect(&mut s, "alice@payments> ");
    s.send_line(".retry").expect("type");
    expect(&mut s, "retried");
    expect(&mut s, "alice@payments> ");
    s.send_line("/quit").expect("type");
    s.exp_eof().expect("the chat ends");
    let last = llm.requests().last().expect("request").clone();
    assert_eq!(users(&last), vec!["what now?", "spin it"]);
    pairs(&llm);
}

#[test]
fn ctrl_c_in_a_one_shot_chat_marks_the_turn_and_exits_130() {
    let llm = FakeLlm::start();
    let dir = home(&llm);
    llm.push(Script::endless(100_000, Duration::from_millis(20)));
    let mut child = katari(dir.path(), &["chat", "alice", "-m", "talk forever"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("katari chat starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = [0u8; 1];
    std::io::Read::read_exact(&mut out, &mut first).expect("the reply starts streaming");
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("send SIGINT");
    assert!(interrupted.success());
    let status = child.wait().expect("katari chat ends");
    assert_eq!(status.code(), Some(130));
    let thread = only_thread(dir.path());
    assert_eq!(thread["interrupted"], true, "{thread}");
}

#[test]
fn model_text_is_sanitised_on_a_terminal() {
    let llm = FakeLlm::start();
    let dir = home(&llm);
    llm.push(Script::text(
        "plain \u{1b}]0;title\u{7}and \u{1b}[31mred\u{1b}[0m end",
    ));
    let mut s = spawn_command(
        katari(dir.path(), &["chat", "alice", "-m", "hi"]),
        Some(EXPECT_MS),
    )
    .expect("katari chat starts on a pty");
    let before = s.exp_string("end").expect("the reply");
    s.exp_eof().expect("the chat ends");
    assert!(before.contains("plain and red "), "{before:?}");
    assert!(!before.contains('\u{1b}'), "{before:?}");
}

/// A home whose project `ops` has `tests/meta/slow_server.py` (the Python SDK) as server `slow`.
fn slow_server_home(llm: &FakeLlm) -> TempDir {
    let dir = tempfile::tempdir().expect("temporary folder");
    let quoted = |p: &Path| serde_json::to_string(&p.display().to_string()).expect("JSON string");
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[llm.fake]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake-model\"\n\n\
             [agent.alice]\nllm = \"fake\"\n\n[[agent.alice.membership]]\nproject = \"ops\"\n\n\
             [project.ops]\nllm = \"fake\"\nmcp_servers = [\"slow\"]\n\n\
             [mcp.slow]\ncommand = {}\nargs = [{}]\n",
            llm.base_url(),
            quoted(&katari_tests::peers::python_mcp()),
            quoted(&katari_tests::peers::repo_root().join("tests/meta/slow_server.py")),
        ),
    )
    .expect("config");
    dir
}

/// Waits up to 30 s for `path` to exist.
fn appears(path: &Path) -> bool {
    for _ in 0..300 {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[test]
fn ctrl_c_during_an_mcp_call_tells_the_server_to_cancel_it() {
    let llm = FakeLlm::start();
    let dir = slow_server_home(&llm);
    let marker = dir.path().join("wait");
    let arguments = serde_json::json!({"tool": "wait", "arguments": {"marker": marker}});
    llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "w1",
        "mcp_invoke_slow",
        &arguments.to_string(),
    )]));
    llm.push(Script::text("after the interruption"));
    let mut s = spawn_command(
        katari(dir.path(), &["chat", "alice", "--project", "ops"]),
        Some(EXPECT_MS),
    )
    .expect("katari chat starts on a pty");
    expect(&mut s, "alice@ops> ");
    s.send_line("wait for it").expect("type");
    assert!(
        appears(&dir.path().join("wait.started")),
        "the server's tool never started"
    );
    s.send_control('c').expect("Ctrl-C");
    expect(&mut s, "(turn cancelled)");
    expect(&mut s, "alice@ops> ");
    // The server is still running (it stops when the chat ends): only the notification can
    // have cancelled its call.
    assert!(
        appears(&dir.path().join("wait.cancelled")),
        "the server was not told that its call was cancelled"
    );
    s.send_line("next question").expect("type");
    expect(&mut s, "after the interruption");
    expect(&mut s, "alice@ops> ");
    s.send_control('d').expect("Ctrl-D");
    s.exp_eof().expect("the chat ends");
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(users(&requests[1]), vec!["next question"]);
    pairs(&llm);
}
