//! The REPL's chat mode as a person meets it (`host.md` §12, §17 E03–E14): the real binary on a
//! pseudo-terminal against the fake OpenAI-compatible server of `katari_tests::fake_llm` (a fake
//! for fault injection: it scripts replies and records every request), with a temporary
//! `KATARI_HOME`. Every request the fake records is checked for the pairing invariant (§7.7.7).

#![cfg(unix)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use katari_chat::message::check_pairing;
use katari_tests::fake_llm::{FakeCall, FakeLlm, Script};
use rexpect::session::{PtySession, spawn_command};
use serde_json::Value;
use tempfile::TempDir;

/// How long one expectation may wait.
const EXPECT_MS: u64 = 30_000;

const CONFIG: &str = r#"# The fake model every chat here talks to.
[llm.fake]
kind = "openai"
base_url = "{url}"
model = "fake-model"

# alice: a developer on payments.
[agent.alice]
llm = "fake"   # her own brain
system_prompt = "You are alice."

[agent.alice.personalities.terse]
prompts = ["Be terse."]

[[agent.alice.membership]]
project = "payments"
role = "developer"

[agent.bob]
llm = "fake"

[project.payments]
llm = "fake"
scripts = ["billing.kt"]

[project.sre]
description = "no llm of its own"
"#;

const SCRIPTS: &str = r#"@"Whether the person approves paying a refund."
request approve(amount: integer) -> boolean

@"Refunds an amount once the person approves it."
agent refund(amount: integer) -> string with approve {
  if (approve(amount = amount)) { "refunded" } else { "refused" }
}
"#;

/// A temporary `KATARI_HOME` whose configuration points at a fake LLM.
struct Home {
    dir: TempDir,
    llm: FakeLlm,
}

impl Home {
    fn new() -> Home {
        Home::with(CONFIG)
    }

    /// A home whose `config.toml` is `config` (`{url}` is the fake's URL).
    fn with(config: &str) -> Home {
        let dir = tempfile::tempdir().expect("temporary folder");
        let llm = FakeLlm::start();
        std::fs::write(
            dir.path().join("config.toml"),
            config.replace("{url}", &llm.base_url()),
        )
        .expect("write config.toml");
        std::fs::write(dir.path().join("billing.kt"), SCRIPTS).expect("write the script");
        Home { dir, llm }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn config(&self) -> PathBuf {
        self.path().join("config.toml")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_katari"));
        c.arg("--no-workspace")
            .args(args)
            .current_dir(self.path())
            .env("KATARI_HOME", self.path())
            .env("NO_COLOR", "1")
            .env("USER", "tester")
            .env_remove("CLICOLOR_FORCE");
        c
    }

    /// `katari ARGS` on a pseudo-terminal.
    fn spawn(&self, args: &[&str]) -> PtySession {
        spawn_command(self.command(args), Some(EXPECT_MS)).expect("katari starts on a pty")
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

    fn last_request(&self) -> Value {
        self.requests().pop().expect("a request")
    }

    fn history(&self) -> String {
        std::fs::read_to_string(self.path().join("cache").join("repl-history"))
            .expect("the history is saved")
    }
}

fn expect(s: &mut PtySession, text: &str) -> String {
    match s.exp_string(text) {
        Ok(before) => before,
        Err(e) => panic!("the terminal never showed {text:?}: {e}"),
    }
}

/// Types `text` without a line end and gives the editor time to draw it.
fn type_keys(s: &mut PtySession, text: &str) {
    s.send(text).expect("type");
    s.flush().expect("flush the keys");
    std::thread::sleep(Duration::from_millis(300));
}

/// Clears the line with Ctrl-C and waits for the editor to read again (keys typed while the
/// terminal is between two reads are dropped by the line editor).
fn clear_line(s: &mut PtySession, prompt: &str) -> String {
    s.send_control('c').expect("Ctrl-C");
    let shown = expect(s, prompt);
    std::thread::sleep(Duration::from_millis(500));
    shown
}

/// Types a line and waits for `shown`, then for the prompt `prompt` after it.
fn say(s: &mut PtySession, line: &str, shown: &str, prompt: &str) {
    s.send_line(line).expect("type");
    expect(s, shown);
    expect(s, prompt);
}

/// Leaves with `/quit` (or `.exit` in language mode) and waits for the end.
fn quit(s: &mut PtySession, line: &str) {
    s.send_line(line).expect("type");
    s.exp_eof().expect("the REPL ends");
}

fn users(request: &Value) -> Vec<String> {
    messages(request, "user")
}

fn messages(request: &Value, role: &str) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == role)
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

fn system(request: &Value) -> String {
    messages(request, "system").join("\n")
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

#[test]
fn chat_opens_with_katari_chats_errors_and_back_keeps_the_language_environment() {
    let home = Home::new();
    home.llm.push(Script::text("hello from alice"));
    home.llm.push(Script::text("hello from the project"));
    let mut s = home.spawn(&["repl"]);
    expect(&mut s, "kt> ");
    say(&mut s, "let x = 41", "x : integer = 41", "kt> ");
    // Each refusal is the message of `katari chat`, and the REPL stays in language mode.
    say(
        &mut s,
        ".chat bob --project payments",
        "error: Agent 'bob' is not a member of project 'payments'.\r\nJoin it with: katari agent join bob --project payments",
        "kt> ",
    );
    say(
        &mut s,
        ".chat carol",
        "error: Agent 'carol' not found. List agents with: katari get agents",
        "kt> ",
    );
    say(
        &mut s,
        ".chat --project nowhere",
        "error: Project 'nowhere' not found. List projects with: katari get projects",
        "kt> ",
    );
    say(
        &mut s,
        ".chat --project sre",
        "error: Project 'sre' has no llm, so it cannot chat on its own.",
        "kt> ",
    );
    say(
        &mut s,
        ".chat",
        "error: .chat needs an agent or --project.",
        "kt> ",
    );
    assert!(home.requests().is_empty());

    s.send_line(".chat alice --project payments").expect("type");
    expect(&mut s, "(thread: ");
    expect(&mut s, "alice@payments> ");
    say(&mut s, "hi there", "hello from alice", "alice@payments> ");
    say(&mut s, ".back", "(language mode)", "kt> ");
    say(&mut s, "x + 1", "42 : integer", "kt> ");
    s.send_line(".chat --project payments").expect("type");
    expect(&mut s, "(thread: ");
    expect(&mut s, "@payments> ");
    say(&mut s, "status?", "hello from the project", "@payments> ");
    // Language commands keep their meaning in chat mode.
    say(&mut s, ".type x + 1", "x + 1 : integer", "@payments> ");
    quit(&mut s, "/exit");

    let requests = home.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(users(&requests[0]), ["hi there"]);
    assert!(system(&requests[0]).starts_with("You are alice."));
    // The project lens offers the project's script tools; project chat has no agent prompt.
    assert_eq!(tool_names(&requests[0]), ["kt_billing_refund"]);
    assert_eq!(users(&requests[1]), ["status?"]);
    assert_eq!(system(&requests[1]), "");
}

#[test]
fn katari_chat_without_m_is_the_repl_in_chat_mode() {
    let home = Home::new();
    home.llm.push(Script::text("first"));
    let mut s = home.spawn(&["chat", "alice"]);
    expect(&mut s, "(thread: ");
    expect(&mut s, "alice> ");
    say(&mut s, "hello", "first", "alice> ");
    // `.back` leads to the language REPL, and `.chat` back again.
    say(&mut s, ".back", "(language mode)", "kt> ");
    say(&mut s, "1 + 2", "3 : integer", "kt> ");
    s.send_line(".chat alice").expect("type");
    expect(&mut s, "alice> ");
    // Ctrl-D on an empty line leaves.
    std::thread::sleep(Duration::from_millis(300));
    s.send_control('d').expect("Ctrl-D");
    s.exp_eof().expect("the REPL ends");
    assert_eq!(home.requests().len(), 1);
}

#[test]
fn a_line_is_a_message_unless_it_is_a_command_and_two_dots_send_one() {
    let home = Home::new();
    home.llm.push(Script::text("got the dot"));
    home.llm.push(Script::text("got the path"));
    let mut s = home.spawn(&["chat", "alice"]);
    expect(&mut s, "alice> ");
    say(
        &mut s,
        ".frobnicate now",
        "error: Unknown command '.frobnicate'. See .help",
        "alice> ",
    );
    say(
        &mut s,
        ".temp-rol x",
        "error: Unknown command '.temp-rol'. See .help (did you mean .temp-role?)",
        "alice> ",
    );
    say(&mut s, "..hidden file", "got the dot", "alice> ");
    // A slash that is not one of the slash commands is part of a message.
    say(&mut s, "/usr/bin is where?", "got the path", "alice> ");
    quit(&mut s, "/quit");
    let requests = home.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(users(&requests[0]), [".hidden file"]);
    assert_eq!(users(&requests[1]), [".hidden file", "/usr/bin is where?"]);
}

#[test]
fn set_overrides_reach_the_request_stop_is_replaced_and_other_keys_go_into_extra() {
    let home = Home::new();
    let mut s = home.spawn(&["chat", "alice", "--temperature", "0.3"]);
    expect(&mut s, "alice> ");
    say(
        &mut s,
        "/set temperature 0.9",
        "(temperature = 0.9 for this chat)",
        "alice> ",
    );
    say(
        &mut s,
        "/set top-p 1.5",
        "error: top-p must be between 0 and 1 (got 1.5)",
        "alice> ",
    );
    say(
        &mut s,
        r#"/set stop "END" "two words""#,
        r#"(stop = ["END","two words"] for this chat)"#,
        "alice> ",
    );
    say(
        &mut s,
        "/set min_p 0.05",
        "(min_p = 0.05 for this chat)",
        "alice> ",
    );
    say(
        &mut s,
        "/set mode fast",
        "(mode = fast for this chat)",
        "alice> ",
    );
    say(
        &mut s,
        "/set model other",
        "error: /set cannot set 'model'",
        "alice> ",
    );
    say(&mut s, "one", "ok", "alice> ");
    say(
        &mut s,
        r#"/set stop "X""#,
        r#"(stop = ["X"] for this chat)"#,
        "alice> ",
    );
    say(&mut s, "/set mode", "(mode override removed)", "alice> ");
    say(
        &mut s,
        "/set temperature",
        "(temperature override removed)",
        "alice> ",
    );
    say(&mut s, "two", "ok", "alice> ");
    quit(&mut s, "/quit");
    let requests = home.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first["temperature"], 0.9);
    assert_eq!(first["stop"], serde_json::json!(["END", "two words"]));
    assert_eq!(first["min_p"], 0.05);
    assert_eq!(first["mode"], "fast");
    let second = &requests[1];
    // The flag's value is in force again once the override is removed.
    assert_eq!(second["temperature"], 0.3);
    assert_eq!(second["stop"], serde_json::json!(["X"]));
    assert_eq!(second["min_p"], 0.05);
    assert!(second.get("mode").is_none(), "{second}");
    assert!(second.get("top_p").is_none(), "{second}");
}

#[test]
fn system_personality_and_temp_role_shape_the_system_block() {
    let home = Home::new();
    let mut s = home.spawn(&["chat", "alice"]);
    expect(&mut s, "alice> ");
    say(
        &mut s,
        "/system Answer in French.",
        "(system append set for this chat)",
        "alice> ",
    );
    say(
        &mut s,
        "/set personality terse",
        "(personality = terse for this chat)",
        "alice> ",
    );
    say(
        &mut s,
        "/set personality snarky",
        "error: Agent 'alice' has no personality 'snarky'. Its personalities: terse",
        "alice> ",
    );
    say(&mut s, "one", "ok", "alice> ");
    say(
        &mut s,
        ".temp-role You are a pirate.",
        "(temporary role set for this chat)",
        "alice> ",
    );
    say(&mut s, "/system", "(system append cleared)", "alice> ");
    say(&mut s, "two", "ok", "alice> ");
    say(&mut s, ".temp-role", "(temporary role cleared)", "alice> ");
    say(&mut s, "three", "ok", "alice> ");
    quit(&mut s, "/quit");
    let requests = home.requests();
    assert_eq!(
        system(&requests[0]),
        "You are alice.\n\nBe terse.\n\nAnswer in French."
    );
    // The temporary role replaces part 1 only (§12.5.1).
    assert_eq!(system(&requests[1]), "You are a pirate.\n\nBe terse.");
    assert_eq!(system(&requests[2]), "You are alice.\n\nBe terse.");
}

#[test]
fn temp_role_works_only_in_chat_mode_and_help_explains_the_rename() {
    let home = Home::new();
    let mut s = home.spawn(&["repl"]);
    expect(&mut s, "kt> ");
    say(
        &mut s,
        ".temp-role be terse",
        "error: .temp-role works in chat mode; switch with .chat AGENT first.",
        "kt> ",
    );
    say(
        &mut s,
        ".mcp enable x",
        "error: .mcp works in chat mode.",
        "kt> ",
    );
    say(
        &mut s,
        ".help .temp-role",
        "Note: .prompt now runs MCP server prompts.",
        "kt> ",
    );
    say(&mut s, ".help .prompt", "use .temp-role TEXT.", "kt> ");
    // A first word that is not a server explains the rename (§12.4.6, E06).
    s.send_line(".prompt be terse").expect("type");
    expect(
        &mut s,
        "error: 'be' is not an MCP server. .prompt runs a server prompt: .prompt SERVER PROMPT [key=value ...]",
    );
    expect(
        &mut s,
        "For a temporary role use .temp-role TEXT (older AIChat-style tools called that .prompt).",
    );
    expect(&mut s, "kt> ");
    s.send_line(".chat alice").expect("type");
    expect(&mut s, "alice> ");
    say(&mut s, ".help", "/save", "alice> ");
    quit(&mut s, ".exit");
    assert!(home.requests().is_empty());
}

#[test]
fn save_merges_overrides_into_default_params_and_keeps_every_other_line() {
    let config = format!(
        "{CONFIG}\n# carol's defaults, tuned by hand\n[agent.carol]\nllm = \"fake\"\n\n[agent.carol.default_params]\n# keep it cool\ntemperature = 0.2   # chosen with care\nseed = 7\n\n# the end\n"
    );
    let home = Home::with(&config);
    let before = std::fs::read_to_string(home.config()).expect("config");
    let mut s = home.spawn(&["chat", "carol", "--max-tokens", "64"]);
    expect(&mut s, "carol> ");
    say(
        &mut s,
        "/set temperature 0.7",
        "(temperature = 0.7 for this chat)",
        "carol> ",
    );
    say(&mut s, r#"/set stop "END""#, "for this chat)", "carol> ");
    say(&mut s, "/set min_p 0.05", "for this chat)", "carol> ");
    say(
        &mut s,
        ".temp-role You are a pirate.",
        "(temporary role set for this chat)",
        "carol> ",
    );
    s.send_line("/save").expect("type");
    expect(&mut s, "(the temporary role is not saved)");
    let saved = format!(
        "(saved current overrides as agent.carol.default_params in {})",
        home.config().display()
    );
    expect(&mut s, &saved);
    expect(&mut s, "carol> ");
    quit(&mut s, "/quit");
    let after = std::fs::read_to_string(home.config()).expect("config");
    let diff = similar::TextDiff::from_lines(&before, &after);
    let changes: Vec<String> = diff
        .iter_all_changes()
        .filter(|c| c.tag() != similar::ChangeTag::Equal)
        .map(|c| format!("{}{}", c.tag(), c.value()))
        .collect();
    assert_eq!(
        changes,
        [
            "-temperature = 0.2   # chosen with care\n",
            "+temperature = 0.7   # chosen with care\n",
            "+max_tokens = 64\n",
            "+stop = [\"END\"]\n",
            "+extra = { min_p = 0.05 }\n",
        ],
        "{after}"
    );
    assert!(!after.contains("pirate"));
    // The saved defaults are what the next chat starts with.
    let out = home
        .command(&["chat", "carol", "-m", "hi"])
        .stdin(Stdio::null())
        .output()
        .expect("katari chat -m");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let last = home.last_request();
    assert_eq!(last["temperature"], 0.7);
    assert_eq!(last["seed"], 7);
    assert_eq!(last["max_tokens"], 64);
    assert_eq!(last["min_p"], 0.05);

    // In a project chat /save is refused.
    let mut s = home.spawn(&["chat", "--project", "payments"]);
    expect(&mut s, "@payments> ");
    say(
        &mut s,
        "/save",
        "error: /save stores defaults on an agent, and this is a project chat.",
        "@payments> ",
    );
    quit(&mut s, "/quit");
    assert_eq!(
        std::fs::read_to_string(home.config()).expect("config"),
        after
    );
}

#[test]
fn clear_starts_a_new_thread_and_undo_gives_the_message_back() {
    let home = Home::new();
    let mut s = home.spawn(&["chat", "alice"]);
    expect(&mut s, "(thread: ");
    let first_id = expect(&mut s, ")");
    expect(&mut s, "alice> ");
    say(&mut s, "remember me", "ok", "alice> ");
    s.send_line("/clear").expect("type");
    expect(&mut s, "(thread: ");
    let second_id = expect(&mut s, ")");
    assert_ne!(first_id, second_id);
    expect(&mut s, "alice> ");
    say(&mut s, "fresh start", "ok", "alice> ");
    say(&mut s, ".clear", "(thread: ", "alice> ");
    say(&mut s, "a mistake", "ok", "alice> ");
    // `.undo` removes the turn and puts its message back in the input line: Enter sends it.
    say(&mut s, ".undo", "(turn 1 removed)", "alice> ");
    type_keys(&mut s, " again");
    s.send_line("").expect("enter");
    expect(&mut s, "ok");
    expect(&mut s, "alice> ");
    say(
        &mut s,
        ".retry",
        "There is no interrupted turn to retry.",
        "alice> ",
    );
    quit(&mut s, "/quit");
    let requests = home.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(users(&requests[1]), ["fresh start"]);
    assert_eq!(users(&requests[3]), ["a mistake again"]);
    // Both threads with a turn are kept; the cleared one was not touched.
    let out = home
        .command(&["get", "threads", "--agent", "alice", "--json"])
        .output()
        .expect("katari get threads");
    let threads: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(threads.as_array().map(Vec::len), Some(3), "{threads}");
}

#[test]
fn info_and_lists_describe_the_chat() {
    let home = Home::new();
    home.llm.push(Script::text("fine").usage(812, 64));
    let mut s = home.spawn(&["chat", "alice", "--project", "payments", "--seed", "5"]);
    expect(&mut s, "alice@payments> ");
    say(&mut s, "how are things?", "fine", "alice@payments> ");
    s.send_line(".info").expect("type");
    expect(&mut s, "mode:");
    expect(&mut s, "chat");
    expect(&mut s, "alice viewing project payments");
    expect(&mut s, "fake (model fake-model, from the agent)");
    expect(&mut s, "seed = 5");
    expect(&mut s, "temporary role: not set");
    expect(&mut s, "kt_billing_refund");
    expect(&mut s, "812 prompt tokens, 64 completion tokens");
    expect(&mut s, "alice@payments> ");
    s.send_line(".list roles").expect("type");
    expect(&mut s, "ROLE");
    expect(&mut s, "developer  1");
    expect(&mut s, "alice@payments> ");
    s.send_line(".list memberships").expect("type");
    expect(&mut s, "AGENT  PROJECT   ROLE       BRAIN");
    expect(&mut s, "alice  payments  developer  fake");
    expect(&mut s, "alice@payments> ");
    s.send_line(".list tools").expect("type");
    expect(&mut s, "kt_billing_refund");
    expect(&mut s, "Refunds an amount once the person approves it.");
    expect(&mut s, "alice@payments> ");
    s.send_line(".list threads").expect("type");
    expect(&mut s, "agent:alice");
    expect(&mut s, "how are things?");
    expect(&mut s, "alice@payments> ");
    s.send_line("/tools").expect("type");
    expect(&mut s, "script tools:");
    expect(&mut s, "kt_billing_refund");
    expect(&mut s, "alice@payments> ");
    say(
        &mut s,
        ".list widgets",
        "Unknown kind 'widgets'",
        "alice@payments> ",
    );
    quit(&mut s, "/quit");
}

#[test]
fn history_is_shared_and_answers_and_keys_behave() {
    let home = Home::new();
    home.llm.push(Script::tool_calls(vec![FakeCall::new(
        0,
        "r1",
        "kt_billing_refund",
        r#"{"amount":120}"#,
    )]));
    home.llm.push(Script::text("refund done"));
    home.llm.push(Script::text("pasted ok"));
    home.llm.push(Script::text("two lines ok"));
    home.llm.push(Script::text("kept ok"));
    let mut s = home.spawn(&["repl"]);
    expect(&mut s, "kt> ");
    say(&mut s, "40 + 2", "42 : integer", "kt> ");
    s.send_line(".chat alice --project payments").expect("type");
    expect(&mut s, "alice@payments> ");
    s.send_line("refund 120 please").expect("type");
    expect(&mut s, "answer type: boolean");
    expect(&mut s, "answer> ");
    s.send_line("true").expect("answer");
    expect(&mut s, "refund done");
    expect(&mut s, "alice@payments> ");
    // Ctrl-C at the prompt clears the line and keeps the REPL.
    type_keys(&mut s, "never sent");
    clear_line(&mut s, "alice@payments> ");
    // A bracketed paste of several lines is one message.
    type_keys(&mut s, "\x1b[200~first pasted\nsecond pasted\x1b[201~");
    s.send_line("").expect("enter");
    expect(&mut s, "pasted ok");
    expect(&mut s, "alice@payments> ");
    // Alt-Enter inserts a line end.
    type_keys(&mut s, "line one");
    type_keys(&mut s, "\x1b\r");
    type_keys(&mut s, "line two");
    s.send_line("").expect("enter");
    expect(&mut s, "two lines ok");
    expect(&mut s, "alice@payments> ");
    std::thread::sleep(Duration::from_millis(300));
    // Ctrl-D on a non-empty line does nothing, even with the cursor on a character; on an
    // empty line it leaves.
    type_keys(&mut s, "keep me");
    s.send_control('a').expect("Ctrl-A");
    std::thread::sleep(Duration::from_millis(300));
    s.send_control('d').expect("Ctrl-D");
    std::thread::sleep(Duration::from_millis(300));
    s.send_line("").expect("enter");
    expect(&mut s, "kept ok");
    expect(&mut s, "alice@payments> ");
    std::thread::sleep(Duration::from_millis(300));
    s.send_control('d').expect("Ctrl-D");
    s.exp_eof().expect("the REPL ends");

    let requests = home.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(
        users(&requests[4]).last().map(String::as_str),
        Some("keep me")
    );
    assert_eq!(
        users(&requests[2]).last().map(String::as_str),
        Some("first pasted\nsecond pasted")
    );
    assert_eq!(
        users(&requests[3]).last().map(String::as_str),
        Some("line one\nline two")
    );
    let history = home.history();
    // Both modes share one history; the escalation's answer is not in it.
    assert!(history.contains("40 + 2"), "{history}");
    assert!(
        history.contains(".chat alice --project payments"),
        "{history}"
    );
    assert!(history.contains("refund 120 please"), "{history}");
    assert!(!history.lines().any(|l| l == "true"), "{history}");
    assert!(!history.contains("never sent"), "{history}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(home.path().join("cache").join("repl-history"))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn tab_completes_chat_commands_and_names() {
    let home = Home::new();
    let mut s = home.spawn(&["repl"]);
    expect(&mut s, "kt> ");
    type_keys(&mut s, ".ch");
    type_keys(&mut s, "\t");
    type_keys(&mut s, " al");
    type_keys(&mut s, "\t");
    type_keys(&mut s, " --pro");
    type_keys(&mut s, "\t");
    type_keys(&mut s, " pay");
    type_keys(&mut s, "\t");
    s.send_line("").expect("enter");
    expect(&mut s, "alice@payments> ");
    type_keys(&mut s, ".list mem");
    type_keys(&mut s, "\t");
    s.send_line("").expect("enter");
    expect(&mut s, "alice  payments  developer  fake");
    expect(&mut s, "alice@payments> ");
    type_keys(&mut s, "/sa");
    type_keys(&mut s, "\t");
    s.send_line("").expect("enter");
    expect(&mut s, "(no overrides in force; nothing saved)");
    expect(&mut s, "alice@payments> ");
    quit(&mut s, "/quit");
    let history = home.history();
    assert!(
        history.contains(".chat alice --project payments"),
        "{history}"
    );
}

#[test]
fn piped_input_runs_chat_commands_in_plain_mode() {
    let home = Home::new();
    home.llm.push(Script::text("first answer"));
    home.llm.push(Script::text("second answer"));
    let mut child = home
        .command(&["repl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("katari repl");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"1 + 1\n.chat alice\nhello\n..dotted\n.back\n2 + 2\n")
        .expect("write");
    let out = child.wait_with_output().expect("katari repl ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "2 : integer\nfirst answer\nsecond answer\n4 : integer\n"
    );
    assert_eq!(out.status.code(), Some(0));
    let requests = home.requests();
    assert_eq!(users(&requests[1]), ["hello", ".dotted"]);
}

/// The resident set size of process `pid`, in KiB.
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[test]
fn memory_stays_flat_over_a_chat_of_a_thousand_turns() {
    // `context_window` keeps the requests (and the fake's record of them) small; the whole
    // thread is still read from the database at every turn.
    let home = Home::with(&CONFIG.replace(
        "model = \"fake-model\"\n",
        "model = \"fake-model\"\ncontext_window = 2048\n",
    ));
    // A shell that prints its process id and becomes katari, whose resident size is read.
    let shell = home.command(&["chat", "alice"]);
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("echo \"pid=$$.\"; exec \"$0\" \"$@\"")
        .arg(shell.get_program())
        .args(shell.get_args())
        .current_dir(home.path())
        .envs(shell.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))));
    let mut s = spawn_command(command, Some(EXPECT_MS)).expect("katari starts on a pty");
    expect(&mut s, "pid=");
    let pid: u32 = expect(&mut s, ".").trim().parse().expect("a process id");
    expect(&mut s, "alice> ");
    let mut at_100 = 0;
    for turn in 1..=1000 {
        s.send_line(&format!("message {turn}")).expect("type");
        expect(&mut s, "ok");
        expect(&mut s, "alice> ");
        if turn == 100 {
            at_100 = resident_kib(pid);
        }
    }
    let at_1000 = resident_kib(pid);
    quit(&mut s, "/quit");
    let growth = at_1000.saturating_sub(at_100);
    // 900 more turns may cost allocator slack, not memory per turn: far below 16 MiB.
    assert!(
        growth < 16 * 1024,
        "resident size grew by {growth} KiB between turn 100 ({at_100} KiB) and turn 1000 ({at_1000} KiB)"
    );
    assert_eq!(home.requests().len(), 1000);
}

/// A test MCP server written with the Python SDK: `docs` serves prompts (one taking two
/// required arguments, two whose text starts like a REPL command, one of two messages);
/// `failing` serves them too, but its prompt listing fails.
const SDK_SERVER: &str = r#"
import sys
from typing import Annotated

from pydantic import Field

from mcp.server import MCPServer
from mcp.server.mcpserver import AssistantMessage, UserMessage

KIND = sys.argv[1]


class Server(MCPServer):
    async def list_prompts(self):
        if KIND == "failing":
            raise RuntimeError("prompt storage is down")
        return await super().list_prompts()


server = Server(f"katari-repl-{KIND}")


@server.prompt(description="Summarise a pull request.")
def summarize_pr(
    repo: str, number: Annotated[str, Field(description="The pull request number")], style: str = "short"
) -> str:
    return f"Summarise pull request {number} of {repo} in a {style} style."


@server.prompt(description="Text that starts with a dot command.")
def dot() -> str:
    return ".help me with this"


@server.prompt(description="Text that starts with a slash command.")
def slash() -> str:
    return "/quit now"


@server.prompt(description="Ask and answer about a topic.")
def two_step(topic: str) -> list:
    return [UserMessage(f"Tell me about {topic}."), AssistantMessage(f"{topic} is a fine topic.")]


server.run("stdio")
"#;

/// A hand-written MCP server over stdio: `tools` advertises tools only; `silent` advertises
/// prompts and never answers anything but `initialize`. The second argument, when given, is a
/// file it creates when it starts (so a test can tell whether it was started).
const RAW_SERVER: &str = r#"
import json
import sys
from pathlib import Path

kind = sys.argv[1]
if len(sys.argv) > 2:
    Path(sys.argv[2]).write_text("started")
caps = {"tools": {}} if kind == "tools" else {"prompts": {}}
for line in sys.stdin:
    msg = json.loads(line)
    ident = msg.get("id")
    if ident is None:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": caps,
                  "serverInfo": {"name": "katari-raw-" + kind, "version": "1"}}
    elif method == "tools/list" and kind == "tools":
        result = {"tools": []}
    else:
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
    sys.stdout.flush()
"#;

/// A home with the MCP servers of these tests: `docs` and `failing` (the SDK server), `echo`
/// (tools only), `silent` (a prompt listing that never answers; it leaves `silent-started` in
/// the home when started), `secure` (an OAuth credential that was never stored). Project
/// `review` enables `docs` and `failing`, project `quiet` enables `silent`; alice is a member of
/// both.
fn mcp_home() -> Home {
    let home = Home::new();
    let python = katari_tests::peers::python_mcp();
    std::fs::write(home.path().join("sdk_server.py"), SDK_SERVER).expect("write the server");
    std::fs::write(home.path().join("raw_server.py"), RAW_SERVER).expect("write the server");
    let python = python.display();
    let marker = home.path().join("silent-started");
    let marker = marker.display();
    let mut config = std::fs::read_to_string(home.config()).expect("config");
    config.push_str(&format!(
        r#"
[[agent.alice.membership]]
project = "review"

[[agent.alice.membership]]
project = "quiet"

[project.review]
llm = "fake"
mcp_servers = ["docs", "failing"]

[project.quiet]
llm = "fake"
mcp_servers = ["silent"]

[mcp.docs]
command = '{python}'
args = ["sdk_server.py", "docs"]

[mcp.failing]
command = '{python}'
args = ["sdk_server.py", "failing"]

[mcp.echo]
command = '{python}'
args = ["raw_server.py", "tools"]

[mcp.silent]
command = '{python}'
args = ["raw_server.py", "silent", '{marker}']
request_timeout_secs = 5

[mcp.secure]
url = "http://127.0.0.1:9/mcp"
oauth = "nocred"
"#
    ));
    std::fs::write(home.config(), config).expect("write config.toml");
    home
}

#[test]
fn prompt_asks_for_missing_arguments_and_sends_the_rendered_text_verbatim() {
    let home = mcp_home();
    home.llm.push(Script::text("summary ok"));
    home.llm.push(Script::text("dot ok"));
    home.llm.push(Script::text("slash ok"));
    home.llm.push(Script::text("two ok"));
    let mut s = home.spawn(&["chat", "alice", "--project", "review"]);
    expect(&mut s, "alice@review> ");
    // E04: the missing required argument is asked for, then the text is the user's message.
    s.send_line(".prompt docs summarize_pr repo=katari")
        .expect("type");
    // The question, then the argument's description while nothing is typed.
    expect(&mut s, "number (required): ");
    expect(&mut s, "The pull request number");
    s.send_line("42").expect("answer");
    expect(&mut s, "summary ok");
    expect(&mut s, "alice@review> ");
    // E05: text that starts with `.` or `/` reaches the model as it is and is not run.
    say(&mut s, ".prompt docs dot", "dot ok", "alice@review> ");
    say(&mut s, ".prompt docs slash", "slash ok", "alice@review> ");
    say(
        &mut s,
        ".prompt docs two_step topic=rust",
        "two ok",
        "alice@review> ",
    );
    // Ctrl-C at a question abandons the command: nothing is sent.
    s.send_line(".prompt docs summarize_pr").expect("type");
    expect(&mut s, "repo (required): ");
    std::thread::sleep(Duration::from_millis(300));
    s.send_control('c').expect("Ctrl-C");
    expect(&mut s, "(.prompt abandoned; nothing was sent)");
    expect(&mut s, "alice@review> ");
    say(
        &mut s,
        ".prompt docs nope",
        "error: MCP server 'docs' has no prompt 'nope'. See .list prompts.",
        "alice@review> ",
    );
    say(
        &mut s,
        ".prompt docs summarize_pr bogus=1",
        "error: Prompt 'summarize_pr' on MCP server 'docs' has no argument 'bogus'. Its arguments: repo (required), number (required), style.",
        "alice@review> ",
    );
    say(
        &mut s,
        ".prompt docs summarize_pr repo",
        "error: Prompt arguments are named: write key=value (got 'repo').",
        "alice@review> ",
    );
    say(
        &mut s,
        ".prompt docs summarize_pr repo=a repo=b",
        "error: Argument 'repo' was given twice.",
        "alice@review> ",
    );
    say(
        &mut s,
        ".prompt echo anything",
        "error: MCP server 'echo' is not enabled in this chat. Enable it with: .mcp enable echo",
        "alice@review> ",
    );
    quit(&mut s, "/quit");

    let requests = home.requests();
    assert_eq!(requests.len(), 4);
    let last_user = |r: &Value| users(r).last().cloned().unwrap_or_default();
    assert_eq!(
        last_user(&requests[0]),
        "Summarise pull request 42 of katari in a short style."
    );
    assert_eq!(last_user(&requests[1]), ".help me with this");
    assert_eq!(last_user(&requests[2]), "/quit now");
    assert_eq!(
        last_user(&requests[3]),
        "[user]\nTell me about rust.\n\n[assistant]\nrust is a fine topic."
    );
    let history = home.history();
    assert!(
        history.contains(".prompt docs summarize_pr repo=katari"),
        "{history}"
    );
    assert!(!history.lines().any(|l| l == "42"), "{history}");
}

#[test]
fn language_mode_prints_prompts_and_lists_every_servers_prompts() {
    let home = mcp_home();
    let mut s = home.spawn(&["repl"]);
    expect(&mut s, "kt> ");
    // E06: the rendered text is printed; nothing is sent to a model.
    say(
        &mut s,
        ".prompt docs summarize_pr repo=katari number=7 style='very short'",
        "Summarise pull request 7 of katari in a very short style.",
        "kt> ",
    );
    say(
        &mut s,
        ".prompt echo anything",
        "error: MCP server 'echo' does not offer prompts.",
        "kt> ",
    );
    say(
        &mut s,
        ".prompt secure anything",
        "error: MCP server 'secure' needs you to log in: there is no credential named 'nocred'.",
        "kt> ",
    );
    // E08: every configured server in language mode; a failing one is one row.
    s.send_line(".list prompts").expect("type");
    expect(&mut s, "SERVER");
    expect(&mut s, "DESCRIPTION");
    expect(&mut s, "ARGS");
    expect(&mut s, "docs     summarize_pr");
    expect(&mut s, "Summarise a pull request.");
    expect(&mut s, "repo*, number*, style");
    expect(&mut s, "docs     two_step");
    expect(&mut s, "topic*");
    expect(&mut s, "failing  (unavailable: ");
    expect(&mut s, "prompt storage is down");
    expect(
        &mut s,
        "secure   (unavailable: MCP server 'secure' needs you to log in",
    );
    expect(&mut s, "silent   (unavailable: ");
    expect(&mut s, "kt> ");
    quit(&mut s, ".exit");
    assert!(home.requests().is_empty());
}

#[test]
fn mcp_enable_offers_a_servers_functions_and_disable_withdraws_them() {
    let home = mcp_home();
    let mut s = home.spawn(&["chat", "alice"]);
    expect(&mut s, "alice> ");
    say(&mut s, "before", "ok", "alice> ");
    say(
        &mut s,
        ".mcp enable nowhere",
        "error: No MCP server named 'nowhere'. See .list mcp-servers",
        "alice> ",
    );
    say(
        &mut s,
        ".mcp enable docs",
        "(MCP server 'docs' enabled for this chat; its functions are offered from the next model call)",
        "alice> ",
    );
    s.send_line(".list mcp-servers").expect("type");
    expect(&mut s, "NAME     TRANSPORT  STATE");
    expect(&mut s, "docs     stdio      enabled");
    expect(&mut s, "alice> ");
    s.send_line("/tools").expect("type");
    expect(&mut s, "docs (tools, resources, prompts)");
    expect(&mut s, "alice> ");
    say(&mut s, "with docs", "ok", "alice> ");
    say(
        &mut s,
        ".mcp disable docs",
        "(MCP server 'docs' disabled for this chat)",
        "alice> ",
    );
    say(&mut s, "after", "ok", "alice> ");
    quit(&mut s, "/quit");
    let requests = home.requests();
    assert_eq!(requests.len(), 3);
    assert!(tool_names(&requests[0]).is_empty());
    assert_eq!(
        tool_names(&requests[1]),
        [
            "mcp_search_docs",
            "mcp_describe_docs",
            "mcp_invoke_docs",
            "mcp_read_docs",
            "mcp_prompt_docs"
        ]
    );
    assert!(tool_names(&requests[2]).is_empty());
}

#[test]
fn prompt_completion_is_staged_against_the_live_server() {
    let home = mcp_home();
    let mut s = home.spawn(&["chat", "alice", "--project", "review"]);
    expect(&mut s, "alice@review> ");
    // The chat's servers are connected for the first turn.
    say(&mut s, "hello", "ok", "alice@review> ");
    // `.prompt ` lists the connected servers that advertise prompts.
    type_keys(&mut s, ".prompt ");
    // With several candidates the first TAB completes what they share, the second lists them.
    type_keys(&mut s, "\t\t");
    expect(&mut s, "docs");
    expect(&mut s, "failing");
    clear_line(&mut s, "alice@review> ");
    // E12: prompt names with their descriptions.
    type_keys(&mut s, ".prompt docs ");
    type_keys(&mut s, "\t\t");
    expect(&mut s, "summarize_pr  -- Summarise a pull request.");
    expect(&mut s, "two_step  -- Ask and answer about a topic.");
    clear_line(&mut s, "alice@review> ");
    // Then `key=` for each argument not yet typed, the required ones marked.
    type_keys(&mut s, ".prompt docs summarize_pr ");
    type_keys(&mut s, "\t\t");
    expect(&mut s, "repo= (required)");
    expect(&mut s, "number= (required)");
    expect(&mut s, "style=");
    clear_line(&mut s, "alice@review> ");
    // One argument left to complete: the cursor lands after `=`, and the line runs.
    type_keys(
        &mut s,
        ".prompt docs summarize_pr repo=katari style=long num",
    );
    type_keys(&mut s, "\t");
    s.send_line("9").expect("type the value");
    home.llm.push(Script::text("completed ok"));
    expect(&mut s, "completed ok");
    expect(&mut s, "alice@review> ");
    quit(&mut s, "/quit");
    let last = home.last_request();
    assert_eq!(
        users(&last).last().map(String::as_str),
        Some("Summarise pull request 9 of katari in a long style.")
    );
}

#[test]
fn completion_against_a_silent_server_is_empty_and_starts_nothing() {
    let home = mcp_home();
    let marker = home.path().join("silent-started");
    // Language mode: no server is running, and completion starts none.
    let mut s = home.spawn(&["repl"]);
    expect(&mut s, "kt> ");
    type_keys(&mut s, ".prompt ");
    type_keys(&mut s, "\t");
    type_keys(&mut s, "silent ");
    type_keys(&mut s, "\t");
    type_keys(&mut s, "x");
    let shown = clear_line(&mut s, "kt> ");
    assert!(
        !shown.contains("error") && !shown.contains("warning"),
        "{shown:?}"
    );
    type_keys(&mut s, ".prompt secure ");
    type_keys(&mut s, "\t");
    let shown = clear_line(&mut s, "kt> ");
    assert!(
        !shown.contains("log in") && !shown.contains("http"),
        "{shown:?}"
    );
    quit(&mut s, ".exit");
    assert!(!marker.exists(), "completion started the silent server");

    // E13: a connected server that never answers its prompt listing gives nothing, silently.
    let mut s = home.spawn(&["chat", "alice", "--project", "quiet"]);
    expect(&mut s, "alice@quiet> ");
    s.send_line(".info").expect("type");
    expect(&mut s, "silent (prompts)");
    expect(&mut s, "alice@quiet> ");
    assert!(marker.exists(), "the chat connects its server");
    type_keys(&mut s, ".prompt silent ");
    type_keys(&mut s, "\t");
    // The query is given up after 2 s; the line is still there to edit.
    std::thread::sleep(Duration::from_millis(2500));
    type_keys(&mut s, "\t");
    std::thread::sleep(Duration::from_millis(2500));
    let shown = clear_line(&mut s, "alice@quiet> ");
    assert!(
        !shown.contains("error") && !shown.contains("warning") && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    say(&mut s, "still here", "ok", "alice@quiet> ");
    quit(&mut s, "/quit");
}
