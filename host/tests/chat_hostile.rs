//! `katari chat` against a hostile or broken LLM endpoint (issue #28): the real binary against
//! the fake OpenAI-compatible server of `katari_tests::fake_llm`, a fake for fault injection
//! that scripts replies no real model should send, with a temporary `KATARI_HOME`. Every request
//! the fake records is checked for the pairing invariant of `host.md` §7.7.7.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use katari_chat::message::check_pairing;
use katari_tests::fake_llm::{FakeCall, FakeLlm, Script};
use serde_json::Value;
use tempfile::TempDir;

/// A chat home: a temporary `KATARI_HOME` whose `config.toml` is the given text with `{url}`
/// replaced by the fake LLM's base URL.
struct Home {
    dir: TempDir,
    llm: FakeLlm,
}

impl Home {
    fn new(config: &str) -> Home {
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

    /// Writes `secrets.toml` with the mode katari requires.
    fn secrets(&self, text: &str) {
        let file = self.path().join("secrets.toml");
        std::fs::write(&file, text).expect("write secrets.toml");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
                .expect("chmod 600");
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_katari"));
        c.arg("--no-workspace")
            .args(args)
            .current_dir(self.path())
            .env("KATARI_HOME", self.path())
            .env("NO_COLOR", "1")
            .env("USER", "tester")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run katari")
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

    /// The text of every file under the home except `secrets.toml`: the configuration, the
    /// thread database with its write-ahead log, logs and spill files.
    fn stored_text(&self) -> String {
        let mut text = String::new();
        let mut folders = vec![self.path().to_path_buf()];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("read the home").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.file_name().is_some_and(|n| n != "secrets.toml") {
                    let bytes = std::fs::read(&path).unwrap_or_default();
                    text.push_str(&String::from_utf8_lossy(&bytes));
                }
            }
        }
        text
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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

const NUMBERS: &str = r#"@"Returns the number it is given."
agent echo(n: integer) -> integer {
  n
}
"#;

#[test]
fn a_reply_of_5000_tool_calls_runs_64_and_answers_the_rest_with_round_limit() {
    let home = Home::new(
        r#"[llm.fake]
kind = "openai"
base_url = "{url}"
model = "fake-model"

[agent.alice]
llm = "fake"

[[agent.alice.membership]]
project = "numbers"
role = "developer"

[project.numbers]
llm = "fake"
scripts = ["numbers.kt"]
"#,
    );
    std::fs::write(home.path().join("numbers.kt"), NUMBERS).expect("write the script");
    let calls = (0..5000)
        .map(|i| {
            FakeCall::new(
                i,
                &format!("c{i}"),
                "kt_numbers_echo",
                &format!(r#"{{"n":{i}}}"#),
            )
        })
        .collect();
    home.llm.push(Script::tool_calls(calls).chunks(1));
    home.llm.push(Script::text("done"));
    let out = home.run(&["chat", "alice", "--project", "numbers", "-m", "count"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out), "done\n");
    assert!(
        err.contains(
            "[5000 tool calls in one reply; the first 64 run, the other 4936 get round_limit]"
        ),
        "{err}"
    );
    assert_eq!(
        err.matches("[tool_call: kt_numbers_echo").count(),
        64,
        "{err}"
    );
    let requests = home.requests();
    assert_eq!(requests.len(), 2);
    let results: Vec<Value> = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().expect("text")).expect("JSON"))
        .collect();
    assert_eq!(results.len(), 5000, "every call has its result");
    for (i, result) in results.iter().enumerate() {
        if i < 64 {
            assert_eq!(result["result"], i, "call {i} ran: {result}");
        } else {
            assert_eq!(result["error"]["type"], "round_limit", "call {i}: {result}");
            assert_eq!(
                result["error"]["message"],
                "This reply made 5000 tool calls and at most 64 run per reply, so this call was not run. Make fewer calls at a time; repeat it in a later reply if it is still needed."
            );
        }
    }
}

const KEY: &str = "sk-live-7d1e0c93b5";
const HEADER_SECRET: &str = "org-secret-52aa";

#[test]
fn a_provider_error_quoting_the_key_is_redacted_on_screen_and_in_the_thread() {
    // The key comes from secrets.toml, then from api_key_env; a header from secrets.toml too.
    for key_line in [
        "api_key = \"secret:OPENAI\"",
        "api_key_env = \"KATARI_HOSTILE_TEST_KEY\"",
    ] {
        let home = Home::new(&format!(
            r#"[llm.fake]
kind = "openai"
base_url = "{{url}}"
model = "fake-model"
{key_line}
headers = {{ "X-Org" = "secret:ORG" }}

[agent.alice]
llm = "fake"
"#
        ));
        home.secrets(&format!("OPENAI = \"{KEY}\"\nORG = \"{HEADER_SECRET}\"\n"));
        let body = format!(
            r#"{{"error": {{"message": "Incorrect API key provided: {KEY} for organization {HEADER_SECRET}."}}}}"#
        );
        home.llm.push(Script::status(401, &body));
        let out = home
            .command(&["chat", "alice", "-m", "hi"])
            .env("KATARI_HOSTILE_TEST_KEY", KEY)
            .output()
            .expect("run katari chat");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("Incorrect API key provided: [redacted] for organization [redacted]."),
            "{err}"
        );
        // The key was sent to the server; it is only never shown or stored.
        let sent = &home.llm.recorded()[0];
        assert_eq!(
            sent.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert_eq!(sent.header("x-org"), Some(HEADER_SECRET));

        let shown = home.run(&["get", "thread", &thread_id(&out), "--json"]);
        let stored = home.stored_text();
        assert!(stored.contains("[redacted]"), "the error was stored");
        for text in [stdout(&out), err, stdout(&shown), stderr(&shown), stored] {
            assert!(!text.contains(KEY), "{key_line}: {text}");
            assert!(!text.contains(HEADER_SECRET), "{key_line}: {text}");
        }
    }
}
