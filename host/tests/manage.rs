//! `katari get`, `describe`, `delete`, `agent join|leave` and `completions` as a user meets them
//! (`host.md` §6, checklist M01–M04): the real binary with a temporary `KATARI_HOME`, threads
//! written into the real `katari.db`, and the configuration files compared byte for byte.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A temporary `KATARI_HOME` (`home/`) and a working folder (`work/`) for the commands.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::create_dir_all(dir.path().join("home")).expect("create home");
        std::fs::create_dir_all(dir.path().join("work")).expect("create work");
        Scratch { dir }
    }

    /// With `text` as the global `config.toml`.
    fn with_config(text: &str) -> Scratch {
        let s = Scratch::new();
        s.write("home/config.toml", text);
        s
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read")
    }

    fn config(&self) -> String {
        self.read("home/config.toml")
    }

    /// `katari ARGS` in `work/` with `KATARI_HOME=home`, no colour, and stdin not a terminal.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_katari"))
            .args(args)
            .current_dir(self.path("work"))
            .env("KATARI_HOME", self.path("home"))
            .env("NO_COLOR", "1")
            .env("USER", "me")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CACHE_HOME")
            .output()
            .expect("katari runs")
    }

    /// stderr with the scratch folder shown as `T`.
    fn stderr(&self, out: &Output) -> String {
        String::from_utf8_lossy(&out.stderr).replace(&self.dir.path().display().to_string(), "T")
    }

    /// stdout with the scratch folder shown as `T`.
    fn stdout(&self, out: &Output) -> String {
        String::from_utf8_lossy(&out.stdout).replace(&self.dir.path().display().to_string(), "T")
    }

    /// Runs a command that must succeed and gives its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "katari {args:?} failed: {}",
            self.stderr(&out)
        );
        self.stdout(&out)
    }

    /// Runs a command that must fail with exit 2, write nothing on stdout and leave
    /// `config.toml` as it was; gives its stderr.
    fn refused(&self, args: &[&str]) -> String {
        let before = std::fs::read(self.path("home/config.toml")).ok();
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "katari {args:?}: {}",
            self.stderr(&out)
        );
        assert_eq!(self.stdout(&out), "", "katari {args:?} printed on stdout");
        let after = std::fs::read(self.path("home/config.toml")).ok();
        assert!(before == after, "katari {args:?} changed config.toml");
        self.stderr(&out)
    }

    fn json(&self, args: &[&str]) -> Value {
        let text = self.ok(args);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// The database, created by the binary (a thread lookup opens it) so that its schema is
    /// the binary's own.
    fn database(&self) -> rusqlite::Connection {
        let _ = self.run(&["get", "thread", "00000000"]);
        let path = self.path("home/katari.db");
        assert!(path.exists(), "katari created katari.db");
        rusqlite::Connection::open(path).expect("open katari.db")
    }
}

/// Stores a thread with one complete turn per `(user, reply)` pair.
fn add_thread(
    db: &rusqlite::Connection,
    id: &str,
    scope: (&str, &str),
    owner: Option<&str>,
    turns: &[(&str, &str)],
) {
    let (kind, name) = scope;
    let (agent, project) = if kind == "agent" {
        (Some(name), None)
    } else {
        (None, Some(name))
    };
    let title = turns.first().map(|t| t.0);
    let last = (!turns.is_empty()).then_some("2025-01-02T10:00:00Z");
    db.execute(
        "INSERT INTO threads (id, scope, agent, project, owner, title, created_at, last_turn_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, '2025-01-01T09:00:00Z', ?7)",
        rusqlite::params![id, kind, agent, project, owner, title, last],
    )
    .expect("insert thread");
    for (i, (user, reply)) in turns.iter().enumerate() {
        let turn = i as i64 + 1;
        add_message(db, id, turn, 0, "user", Some(user), None, None, "complete");
        add_message(
            db,
            id,
            turn,
            1,
            "assistant",
            Some(reply),
            None,
            None,
            "complete",
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn add_message(
    db: &rusqlite::Connection,
    thread: &str,
    turn: i64,
    seq: i64,
    role: &str,
    content: Option<&str>,
    tool_calls: Option<&str>,
    tool_call_id: Option<&str>,
    status: &str,
) {
    db.execute(
        "INSERT INTO messages (thread_id, turn, seq, role, content, tool_calls, tool_call_id,
                               status, project, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL, '2025-01-02T10:00:00Z')",
        rusqlite::params![
            thread,
            turn,
            seq,
            role,
            content,
            tool_calls,
            tool_call_id,
            status
        ],
    )
    .expect("insert message");
    // As katari's store does in the same transaction: the thread's row holds its turn count and
    // the status of its last turn (schema 4).
    db.execute(
        "UPDATE threads SET
            turns = (SELECT MAX(turn) FROM messages WHERE thread_id = ?1),
            last_status = (
                SELECT CASE WHEN MAX(status = 'pending') THEN 'pending'
                            WHEN MIN(status = 'complete') THEN 'complete'
                            ELSE 'error' END
                FROM messages
                WHERE thread_id = ?1
                  AND turn = (SELECT MAX(turn) FROM messages WHERE thread_id = ?1))
         WHERE id = ?1",
        [thread],
    )
    .expect("update the thread's last turn");
}

fn thread_count(s: &Scratch) -> i64 {
    let db = rusqlite::Connection::open(s.path("home/katari.db")).expect("open");
    db.query_row("SELECT COUNT(*) FROM threads", [], |r| r.get(0))
        .expect("count")
}

/// The lines `after` has that `before` does not, when `after` is `before` with lines inserted
/// (and nothing else changed).
fn added_lines(before: &str, after: &str) -> Vec<String> {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    assert_eq!(
        prefix + suffix,
        old.len(),
        "lines other than the added ones changed:\n--- before\n{before}\n--- after\n{after}"
    );
    new[prefix..new.len() - suffix]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

const LLMS: &str = r#"[llm.local]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
model = "qwen"

[llm.big-model]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
model = "big"
"#;

/// Two agents, two projects, one membership with an override.
fn team() -> String {
    format!(
        r#"{LLMS}
[agent.alice]
description = "Reviews code"
llm = "local"

[agent.bob]
llm = "local"

[[agent.bob.membership]]
project = "payments"
role = "developer"
llm = "big-model"

[[agent.bob.membership]]
project = "sre"

[project.payments]
description = "Payments service"
llm = "local"
llm_model = "qwen-large"
scripts = ["billing.kt"]

[project.sre]
"#
    )
}

// M01
#[test]
fn get_agents_prints_a_table_and_json_of_the_documented_shape() {
    let s = Scratch::with_config(&team());
    assert_eq!(
        s.ok(&["get", "agents"]),
        "NAME   LLM    PROJECTS       DESCRIPTION\n\
         alice  local  -              Reviews code\n\
         bob    local  payments, sre\n"
    );
    assert_eq!(
        s.json(&["get", "agents", "--json"]),
        json!([
            {"name": "alice", "llm": "local", "projects": [], "description": "Reviews code"},
            {"name": "bob", "llm": "local", "projects": ["payments", "sre"], "description": null},
        ])
    );
}

// M01
#[test]
fn get_agents_of_a_project_shows_role_and_brain_with_override() {
    let s = Scratch::with_config(&team());
    assert_eq!(
        s.ok(&["get", "agents", "--project", "payments"]),
        "NAME  ROLE       BRAIN\nbob   developer  big-model (override)\n"
    );
    assert_eq!(
        s.ok(&["get", "agents", "--project", "sre"]),
        "NAME  ROLE  BRAIN\nbob   -     local\n"
    );
    let listed = s.json(&["get", "agents", "--project", "payments", "--json"]);
    assert_eq!(listed[0]["name"], "bob");
    assert_eq!(listed[0]["role"], "developer");
    assert_eq!(listed[0]["llm_override"], "big-model");
    assert_eq!(listed[0]["effective_llm"], "big-model");
}

// M01
#[test]
fn get_projects_prints_a_table_and_json_of_the_documented_shape() {
    let s = Scratch::with_config(&team());
    assert_eq!(
        s.ok(&["get", "projects"]),
        "NAME      LLM    MCP SERVERS  SCRIPTS     MEMBERS\n\
         payments  local  -            billing.kt  bob\n\
         sre       -      -            -           bob\n"
    );
    assert_eq!(
        s.json(&["get", "projects", "--json"]),
        json!([
            {"name": "payments", "llm": "local", "llm_model": "qwen-large", "mcp_servers": [],
             "scripts": ["T/home/billing.kt"], "members": ["bob"]},
            {"name": "sre", "llm": null, "llm_model": null, "mcp_servers": [], "scripts": [],
             "members": ["bob"]},
        ])
    );
}

// M01
#[test]
fn get_memberships_filters_by_agent_and_project() {
    let s = Scratch::with_config(&team());
    assert_eq!(
        s.ok(&["get", "memberships"]),
        "AGENT  PROJECT   ROLE       BRAIN\n\
         bob    payments  developer  big-model (override)\n\
         bob    sre       -          local\n"
    );
    assert_eq!(
        s.json(&["get", "memberships", "--project", "sre", "--json"]),
        json!([{"agent": "bob", "project": "sre", "role": null, "llm_override": null,
                "effective_llm": "local"}])
    );
    let out = s.run(&["get", "memberships", "--agent", "alice"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(s.stdout(&out), "");
    assert_eq!(
        s.stderr(&out),
        "Agent 'alice' is in no project. Add it to one with: katari agent join alice --project PROJECT\n"
    );
}

// §2.3.3
#[test]
fn empty_lists_print_a_hint_on_stderr_and_an_empty_json_array() {
    let s = Scratch::new();
    let out = s.run(&["get", "agents"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(s.stdout(&out), "");
    assert_eq!(
        s.stderr(&out),
        "No agents configured. Add one to T/home/config.toml as [agent.NAME].\n"
    );
    let out = s.run(&["get", "projects", "--json"]);
    assert_eq!(s.stdout(&out), "[]\n");
    assert_eq!(
        s.stderr(&out),
        "No projects configured. Add one to T/home/config.toml as [project.NAME].\n"
    );
    let out = s.run(&["get", "threads", "--json"]);
    assert_eq!(s.stdout(&out), "[]\n");
    assert_eq!(
        s.stderr(&out),
        "No threads. Start one with: katari chat AGENT\n"
    );
    assert!(
        !s.path("home/katari.db").exists(),
        "listing threads does not create the database"
    );
}

// M01, §6.1.2
#[test]
fn get_threads_lists_agent_threads_and_only_my_project_threads() {
    let s = Scratch::with_config(&team());
    let db = s.database();
    add_thread(
        &db,
        "01jaaaaaaaaaaaaaaaaaaaaaaa",
        ("agent", "alice"),
        None,
        &[
            ("Review\nthe diff", "Looks good"),
            ("And now?", "Still good"),
        ],
    );
    add_thread(
        &db,
        "01jbbbbbbbbbbbbbbbbbbbbbbb",
        ("project", "payments"),
        Some("me"),
        &[("Deploy status?", "Green")],
    );
    add_thread(
        &db,
        "01jccccccccccccccccccccccc",
        ("project", "payments"),
        Some("someone-else"),
        &[("Their question", "Their answer")],
    );
    // An interrupted turn: its rows are `error`.
    add_message(
        &db,
        "01jaaaaaaaaaaaaaaaaaaaaaaa",
        3,
        0,
        "user",
        Some("Third"),
        None,
        None,
        "error",
    );
    assert_eq!(
        s.ok(&["get", "threads"]),
        "ID                          SCOPE             TITLE            TURNS  LAST TURN             STATE\n\
         01jaaaaaaaaaaaaaaaaaaaaaaa  agent:alice       Review the diff  3      2025-01-02T10:00:00Z  interrupted\n\
         01jbbbbbbbbbbbbbbbbbbbbbbb  project:payments  Deploy status?   1      2025-01-02T10:00:00Z\n"
    );
    let mine = s.json(&["get", "threads", "--project", "payments", "--json"]);
    assert_eq!(
        mine,
        json!([{
            "id": "01jbbbbbbbbbbbbbbbbbbbbbbb", "scope": "project", "agent": null,
            "project": "payments", "owner": "me", "title": "Deploy status?", "turns": 1,
            "created_at": "2025-01-01T09:00:00Z", "last_turn_at": "2025-01-02T10:00:00Z",
            "interrupted": false,
        }])
    );
    let alices = s.json(&["get", "threads", "--agent", "alice", "--json"]);
    assert_eq!(alices.as_array().map(Vec::len), Some(1));
    assert_eq!(alices[0]["interrupted"], true);
    assert_eq!(
        s.refused(&["get", "threads", "--agent", "carol"]),
        "error: Agent 'carol' not found. List agents with: katari get agents\n"
    );
}

// M04
#[test]
fn thread_ids_resolve_by_unique_prefix_and_get_thread_shows_every_message_field() {
    let s = Scratch::with_config(&team());
    let db = s.database();
    let id = "01jq7x2k9m0000000000000001";
    add_thread(&db, id, ("agent", "alice"), None, &[]);
    add_thread(
        &db,
        "01jq7x2k9mzzzzzzzzzzzzzzzz",
        ("agent", "alice"),
        None,
        &[],
    );
    add_message(
        &db,
        id,
        1,
        0,
        "user",
        Some("Check the build"),
        None,
        None,
        "complete",
    );
    add_message(
        &db,
        id,
        1,
        1,
        "assistant",
        None,
        Some(r#"[{"id":"c1","name":"mcp_invoke_ci","arguments":"{\"tool\":\"status\"}"}]"#),
        None,
        "complete",
    );
    add_message(
        &db,
        id,
        1,
        2,
        "tool",
        Some("{\"ok\":true}"),
        None,
        Some("c1"),
        "complete",
    );
    add_message(
        &db,
        id,
        1,
        3,
        "assistant",
        Some("The build is green."),
        None,
        None,
        "complete",
    );

    let expected = "[turn 1] user (complete)\n\
                    Check the build\n\
                    \n\
                    [turn 1] assistant (complete)\n\
                    tool_call mcp_invoke_ci {\"tool\":\"status\"}\n\
                    \n\
                    [turn 1] tool (complete)\n\
                    tool_result mcp_invoke_ci\n\
                    {\"ok\":true}\n\
                    \n\
                    [turn 1] assistant (complete)\n\
                    The build is green.\n";
    assert_eq!(s.ok(&["get", "thread", id]), expected);
    // Any unique prefix of 8 or more characters, in either case.
    assert_eq!(
        s.ok(&["get", "thread", "01JQ7X2K9M0000000000000001"]),
        expected
    );
    assert_eq!(s.ok(&["get", "thread", "01jq7x2k9m0"]), expected);
    assert_eq!(s.ok(&["get", "thread", "01jq7x2k9mzz"]), "");

    let shown = s.json(&["get", "thread", id, "--json"]);
    assert_eq!(shown["thread"]["id"], id);
    assert_eq!(shown["thread"]["turns"], 1);
    assert_eq!(
        shown["messages"][1],
        json!({
            "turn": 1, "seq": 1, "role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "name": "mcp_invoke_ci", "arguments": "{\"tool\":\"status\"}"}],
            "tool_call_id": null, "status": "complete", "project": null,
            "created_at": "2025-01-02T10:00:00Z",
        })
    );
    assert_eq!(shown["messages"][2]["tool_call_id"], "c1");

    assert_eq!(
        s.refused(&["get", "thread", "01jq7x2k"]),
        "error: Thread prefix '01jq7x2k' matches 2 threads; give more characters.\n"
    );
    assert_eq!(
        s.refused(&["get", "thread", "01jzzzzzzz"]),
        "error: No thread '01jzzzzzzz'. List threads with: katari get threads\n"
    );
    assert_eq!(
        s.refused(&["describe", "thread", "01jq7x2k"]),
        "error: Thread prefix '01jq7x2k' matches 2 threads; give more characters.\n"
    );
    let described = s.json(&["describe", "thread", "01jq7x2k9m0", "--json"]);
    assert_eq!(described["scope"], "agent");
    assert_eq!(described["agent"], "alice");
    assert_eq!(described["interrupted"], false);
}

/// A configuration written by hand: comments everywhere, blank lines, odd spacing, quoted
/// keys, inline tables, trailing comments, and no final newline.
const UNUSUAL: &str = r#"# katari configuration -- hand written
  # an indented comment

[llm.local]   # trailing comment on a header
kind="openai"
base_url   =   "http://127.0.0.1:8080/v1"   # spaces
model = 'qwen'   # literal string


[llm."big-model"]
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
model = "big"
headers = { "X-Team" = "core",   X-Env="dev" }

[ agent . alice ]
description = """
Reviews code,
on two lines."""
llm = "local"   # alice's own brain
default_params = {temperature=0.2, stop=["END"]}

	# a tab-indented comment before a sub-table
[agent.alice.personalities."terse"]
prompts = [ "be brief",   { text = "no filler", priority = 2 } ]

[agent.bob]
llm = "local"
[[agent.bob.membership]]
project = "payments"    # bob works on payments
role = "qa"

# --- projects ---
[project.payments]
llm = "local"
prompts = [
    "Payments are in cents.",   # why
    { text = "Be careful", priority = 5 },
]
# the end of the file"#;

// M02
#[test]
fn join_then_leave_gives_the_file_back_byte_for_byte() {
    let s = Scratch::with_config(UNUSUAL);
    assert_eq!(
        s.ok(&[
            "agent",
            "join",
            "alice",
            "--project",
            "payments",
            "--role",
            "developer",
            "--llm",
            "big-model"
        ]),
        "alice joined payments (role: developer, brain: big-model)\n"
    );
    let joined = s.config();
    assert_ne!(joined, UNUSUAL);
    assert_eq!(
        s.ok(&["agent", "leave", "alice", "--project", "payments"]),
        "alice left payments\n"
    );
    assert_eq!(s.config(), UNUSUAL);
    // bob's existing membership, too: leave then join gives the same entry back.
    s.ok(&["agent", "leave", "bob", "--project", "payments"]);
    assert!(!s.config().contains("agent.bob.membership"));
}

// M02
#[test]
fn join_adds_only_the_membership_lines_after_the_agents_last_table() {
    let s = Scratch::with_config(UNUSUAL);
    s.ok(&[
        "agent",
        "join",
        "alice",
        "--project",
        "payments",
        "--role",
        "qa",
    ]);
    let after = s.config();
    assert_eq!(
        added_lines(UNUSUAL, &after),
        [
            "[[agent.alice.membership]]",
            "project = \"payments\"",
            "role = \"qa\"",
            ""
        ]
    );
    let header = after.find("[[agent.alice.membership]]").expect("added");
    assert!(
        after
            .find("[agent.alice.personalities.\"terse\"]")
            .expect("kept")
            < header
            && header < after.find("[agent.bob]").expect("kept"),
        "the entry follows alice's last table:\n{after}"
    );
    // The edited file is valid and means what it says.
    assert_eq!(
        s.ok(&["get", "memberships", "--agent", "alice"]),
        "AGENT  PROJECT   ROLE  BRAIN\nalice  payments  qa    local\n"
    );
}

// M02, §6.4.1
#[test]
fn join_again_updates_role_and_override_in_place() {
    let s = Scratch::with_config(UNUSUAL);
    assert_eq!(
        s.ok(&[
            "agent",
            "join",
            "bob",
            "--project",
            "payments",
            "--role",
            "sre",
            "--llm",
            "big-model"
        ]),
        "Updated bob in payments (role: sre, brain: big-model)\n"
    );
    let after = s.config();
    assert_eq!(
        after,
        UNUSUAL.replace(
            "project = \"payments\"    # bob works on payments\nrole = \"qa\"\n",
            "project = \"payments\"    # bob works on payments\nrole = \"sre\"\nllm = \"big-model\"\n"
        )
    );
    // The same command again changes nothing.
    assert_eq!(
        s.ok(&[
            "agent",
            "join",
            "bob",
            "--project",
            "payments",
            "--role",
            "sre",
            "--llm",
            "big-model"
        ]),
        "Updated bob in payments (role: sre, brain: big-model)\n"
    );
    assert_eq!(s.config(), after);
    // An empty value removes the key.
    s.ok(&["agent", "join", "bob", "--project", "payments", "--llm", ""]);
    assert_eq!(
        s.ok(&["get", "memberships", "--agent", "bob"]),
        "AGENT  PROJECT   ROLE  BRAIN\nbob    payments  sre   local\n"
    );
}

// M02, §6.4, §7.3.3
#[test]
fn wrong_names_and_flags_exit_2_with_the_documented_messages_and_write_nothing() {
    let s = Scratch::with_config(UNUSUAL);
    assert_eq!(
        s.refused(&["agent", "leave", "alice", "--project", "payments"]),
        "error: Agent 'alice' is not a member of project 'payments'.\n"
    );
    assert_eq!(
        s.refused(&["delete", "membership", "alice", "--project", "payments"]),
        "error: Agent 'alice' is not a member of project 'payments'.\n"
    );
    assert_eq!(
        s.refused(&["agent", "join", "carol", "--project", "payments"]),
        "error: Agent 'carol' not found. List agents with: katari get agents\n"
    );
    assert_eq!(
        s.refused(&["agent", "join", "alice", "--project", "billing"]),
        "error: Project 'billing' not found. List projects with: katari get projects\n"
    );
    assert_eq!(
        s.refused(&[
            "agent",
            "join",
            "alice",
            "--project",
            "payments",
            "--llm",
            "gpt5"
        ]),
        "error: LLM 'gpt5' not found. Configured llms: big-model, local\n"
    );
    assert_eq!(
        s.refused(&[
            "agent",
            "join",
            "alice",
            "--project",
            "payments",
            "--role",
            "designer"
        ]),
        "error: --role: 'designer' is not a known role\n  fix: use one of: developer, qa, security, sre\n"
    );
    assert_eq!(
        s.refused(&["describe", "agent", "carol"]),
        "error: Agent 'carol' not found. List agents with: katari get agents\n"
    );
    assert_eq!(
        s.refused(&["describe", "membership", "alice", "--project", "payments"]),
        "error: Agent 'alice' is not a member of project 'payments'.\n\
         Join it with: katari agent join alice --project payments\n"
    );
    assert_eq!(
        s.refused(&["delete", "agent", "carol"]),
        "error: Agent 'carol' not found. List agents with: katari get agents\n"
    );
    assert_eq!(
        s.refused(&["delete", "project", "billing"]),
        "error: Project 'billing' not found. List projects with: katari get projects\n"
    );
}

// M03
#[test]
fn delete_project_with_members_needs_force_which_removes_the_memberships() {
    let s = Scratch::with_config(&team());
    assert_eq!(
        s.refused(&["delete", "project", "payments"]),
        "error: Project 'payments' has members: bob.\n\
         Remove each with: katari agent leave AGENT --project payments\n\
         or pass --force to remove the memberships as well.\n"
    );
    assert_eq!(
        s.ok(&["delete", "project", "payments", "--force"]),
        "Deleted project 'payments', and the memberships of bob.\n"
    );
    assert_eq!(
        s.config(),
        team().replace(
            "[[agent.bob.membership]]\nproject = \"payments\"\nrole = \"developer\"\nllm = \"big-model\"\n\n",
            ""
        )
        .replace(
            "[project.payments]\ndescription = \"Payments service\"\nllm = \"local\"\nllm_model = \"qwen-large\"\nscripts = [\"billing.kt\"]\n\n",
            ""
        )
    );
    assert_eq!(
        s.ok(&["get", "projects"]),
        "NAME  LLM  MCP SERVERS  SCRIPTS  MEMBERS\nsre   -    -            -        bob\n"
    );
}

// M03, §6.3.5
#[test]
fn a_delete_that_removes_threads_refuses_without_a_terminal_unless_yes() {
    let s = Scratch::with_config(&team());
    let db = s.database();
    add_thread(
        &db,
        "01jaaaaaaaaaaaaaaaaaaaaaaa",
        ("agent", "alice"),
        None,
        &[("Hi", "Hello")],
    );
    add_thread(
        &db,
        "01jbbbbbbbbbbbbbbbbbbbbbbb",
        ("agent", "alice"),
        None,
        &[("Hi", "Hello")],
    );
    add_thread(
        &db,
        "01jcccccccccccccccccccccc1",
        ("project", "sre"),
        Some("me"),
        &[("Up?", "Yes")],
    );
    drop(db);
    assert_eq!(
        s.refused(&["delete", "agent", "alice"]),
        "error: Refusing to delete without confirmation; pass --yes.\n"
    );
    assert_eq!(
        s.refused(&["delete", "thread", "01jaaaaaaaaa"]),
        "error: Refusing to delete without confirmation; pass --yes.\n"
    );
    assert_eq!(thread_count(&s), 3, "nothing was deleted");

    assert_eq!(
        s.ok(&["delete", "agent", "alice", "--yes"]),
        "Deleted agent 'alice' and its 2 threads.\n"
    );
    assert!(!s.config().contains("[agent.alice]"));
    assert_eq!(thread_count(&s), 1);
    // Leaving never touches threads; deleting the project (with --force for bob) removes them.
    s.ok(&["agent", "leave", "bob", "--project", "sre"]);
    assert_eq!(thread_count(&s), 1);
    assert_eq!(
        s.refused(&["delete", "project", "sre"]),
        "error: Refusing to delete without confirmation; pass --yes.\n"
    );
    assert_eq!(
        s.ok(&["delete", "project", "sre", "--yes"]),
        "Deleted project 'sre' and its 1 thread.\n"
    );
    assert_eq!(thread_count(&s), 0);
}

// §6.3.4
#[test]
fn another_users_project_thread_is_deleted_only_with_force() {
    let s = Scratch::with_config(&team());
    let db = s.database();
    let id = "01jddddddddddddddddddddddd";
    add_thread(
        &db,
        id,
        ("project", "sre"),
        Some("someone-else"),
        &[("Q", "A")],
    );
    drop(db);
    assert_eq!(
        s.refused(&["delete", "thread", "01jddddddd", "--yes"]),
        format!(
            "error: Thread {id} belongs to user 'someone-else'; only its owner can delete it.\n"
        )
    );
    assert_eq!(
        s.ok(&["delete", "thread", "01jddddddd", "--yes", "--force"]),
        format!("Deleted thread {id}.\n")
    );
    assert_eq!(thread_count(&s), 0);
}

// §6.3.1
#[test]
fn delete_agent_removes_all_its_tables_and_nothing_else() {
    let s = Scratch::with_config(UNUSUAL);
    assert_eq!(
        s.ok(&["delete", "agent", "alice"]),
        "Deleted agent 'alice'.\n"
    );
    let after = s.config();
    let start = UNUSUAL.find("[ agent . alice ]").expect("alice");
    let end = UNUSUAL.find("[agent.bob]").expect("bob");
    // The comment before alice's sub-table belongs to it and goes with it.
    assert_eq!(after, format!("{}{}", &UNUSUAL[..start], &UNUSUAL[end..]));
}

// §4.8.1, §3.2.3
#[test]
fn edits_go_to_the_workspace_file_when_it_shadows_the_agent() {
    let s = Scratch::with_config(&team());
    s.write(
        "work/.katari/config.toml",
        "# workspace\n[agent.alice]\nllm = \"big-model\"\n",
    );
    let global = s.config();
    assert_eq!(
        s.ok(&["agent", "join", "alice", "--project", "sre"]),
        "alice joined sre (role: -, brain: big-model)\n"
    );
    assert_eq!(s.config(), global, "the global file is not touched");
    assert_eq!(
        s.read("work/.katari/config.toml"),
        "# workspace\n[agent.alice]\nllm = \"big-model\"\n\n[[agent.alice.membership]]\nproject = \"sre\"\n"
    );
    let described = s.json(&["describe", "agent", "alice", "--json"]);
    assert_eq!(described["defined_in"]["scope"], "workspace");
    // With --no-workspace the global alice is the one seen.
    assert_eq!(
        s.ok(&["--no-workspace", "get", "memberships", "--agent", "alice"]),
        ""
    );
}

// §4.8.3
#[test]
fn an_edit_that_would_make_the_configuration_invalid_is_not_written() {
    // The workspace's alice and bob shadow the global ones, which are members of sre: sre has
    // no effective member, but deleting it would leave the global agents pointing nowhere.
    let s = Scratch::with_config(&team().replace(
        "[agent.alice]\ndescription = \"Reviews code\"\nllm = \"local\"\n",
        "[agent.alice]\nllm = \"local\"\n[[agent.alice.membership]]\nproject = \"sre\"\n",
    ));
    s.write(
        "work/.katari/config.toml",
        "[agent.alice]\nllm = \"local\"\n[agent.bob]\nllm = \"local\"\n",
    );
    let workspace = s.read("work/.katari/config.toml");
    let message = s.refused(&["delete", "project", "sre"]);
    assert!(
        message.starts_with(
            "error: the edit would make the configuration invalid, so T/home/config.toml was not changed:\n"
        ),
        "{message}"
    );
    assert!(
        message.contains("agent.alice.membership[0].project: no project named 'sre' is configured"),
        "{message}"
    );
    assert_eq!(s.read("work/.katari/config.toml"), workspace);
}

// §6.2
#[test]
fn describe_shows_agents_projects_and_memberships() {
    let s = Scratch::with_config(&team());
    s.write(
        "home/billing.kt",
        "@\"Refund a payment.\"\nagent refund(amount: number) -> string {\n  \"ok\"\n}\n\nagent helper() -> string { \"x\" }\n",
    );
    s.write("home/broken.kt", "agent oops() -> string { 1 }\n");
    let config = team().replace(
        "scripts = [\"billing.kt\"]",
        "scripts = [\"billing.kt\", \"broken.kt\"]\nprompts = [\"Use cents.\", { text = \"Be careful\", priority = 5 }]",
    );
    s.write("home/config.toml", &config);

    let project = s.ok(&["describe", "project", "payments"]);
    assert!(
        project.contains("Defined in:      T/home/config.toml:26\n"),
        "{project}"
    );
    assert!(
        project.contains("LLM model:       qwen-large\n"),
        "{project}"
    );
    assert!(
        project
            .contains("Prompts:\n  [priority 5] \"Be careful\"\n  [priority 0] \"Use cents.\"\n"),
        "{project}"
    );
    assert!(
        project.contains("  kt_billing_refund  Refund a payment. (T/home/billing.kt)\n"),
        "{project}"
    );
    assert!(
        !project.contains("kt_billing_helper"),
        "undocumented agents are not tools"
    );
    assert!(
        project.contains("  T/home/broken.kt (does not check: 1 error)\n"),
        "{project}"
    );
    assert!(
        project.contains(
            "Members:\n  AGENT  ROLE       BRAIN\n  bob    developer  big-model (override)\n"
        ),
        "{project}"
    );
    let as_json = s.json(&["describe", "project", "payments", "--json"]);
    assert_eq!(
        as_json["scripts"][0]["tools"][0]["name"],
        "kt_billing_refund"
    );
    assert_eq!(as_json["scripts"][1]["errors"], 1);

    let membership = s.ok(&["describe", "membership", "bob", "--project", "payments"]);
    assert!(
        membership.contains("Role:            developer\n"),
        "{membership}"
    );
    assert!(
        membership.contains("Effective llm:   big-model (override; the agent's own is local)\n"),
        "{membership}"
    );
    assert!(
        membership.contains("The project lens adds:\n"),
        "{membership}"
    );
    assert!(membership.contains("kt_billing_refund"), "{membership}");

    let agent = s.json(&["describe", "agent", "bob", "--json"]);
    assert_eq!(agent["llm"], "local");
    assert_eq!(agent["memberships"][0]["effective_llm"], "big-model");
}

// §2.1 `completions`
#[test]
fn completions_cover_every_command_and_complete_configured_names_in_bash() {
    let s = Scratch::with_config(&team());
    let bash = s.ok(&["completions", "bash"]);
    for word in [
        "get",
        "describe",
        "delete",
        "agent",
        "completions",
        "--project",
        "--yes",
        "--force",
    ] {
        assert!(bash.contains(word), "the bash script completes {word}");
    }
    assert!(
        bash.lines()
            .filter(|l| l.trim_start().starts_with("opts="))
            .all(|l| !l.contains("__complete-names")),
        "hidden commands are not offered"
    );
    let zsh = s.ok(&["completions", "zsh"]);
    assert!(
        zsh.contains(":PROJECT:_katari_projects'"),
        "zsh completes project names"
    );
    assert!(
        zsh.contains("':agent -- The agent'\\''s name:_katari_agents'"),
        "{zsh}"
    );
    let fish = s.ok(&["completions", "fish"]);
    assert!(fish.contains("-l project") && fish.contains("(__katari_names projects)"));
    assert_eq!(s.ok(&["__complete-names", "agents"]), "alice\nbob\n");
    assert_eq!(s.ok(&["__complete-names", "projects"]), "payments\nsre\n");

    // The bash script, sourced by bash, asks this katari for the names.
    s.write("work/katari.bash", &bash);
    let bin = Path::new(env!("CARGO_BIN_EXE_katari"))
        .parent()
        .expect("the binary's folder")
        .display()
        .to_string();
    let script = r#"
source ./katari.bash
complete_line() {
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _katari_dynamic katari "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    echo "${COMPREPLY[*]}"
}
complete_line katari agent join ""
complete_line katari agent join alice --project ""
complete_line katari describe project p
complete_line katari get agents --pro
complete_line katari dele
"#;
    let out = Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(s.path("work"))
        .env(
            "PATH",
            format!("{bin}:{}", std::env::var("PATH").unwrap_or_default()),
        )
        .env("KATARI_HOME", s.path("home"))
        .output()
        .expect("bash runs");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "alice bob\npayments sre\npayments\n--project\ndelete\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `[y/N]` question of §6.3.5 on a pseudo-terminal (stdin and stderr; stdout to a file).
#[cfg(unix)]
mod on_a_terminal {
    use rexpect::process::WaitStatus;
    use rexpect::session::spawn_command;

    use super::*;

    /// `katari ARGS` on a terminal answering `answer`; the exit status, what the terminal showed
    /// and stdout.
    fn answered(s: &Scratch, args: &[&str], question: &str, answer: &str) -> (i32, String, String) {
        let stdout = std::fs::File::create(s.path("stdout")).expect("create the stdout file");
        let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
        command
            .args(args)
            .current_dir(s.path("work"))
            .env("KATARI_HOME", s.path("home"))
            .env("NO_COLOR", "1")
            .env("USER", "me")
            .stdout(stdout);
        let mut session = spawn_command(command, Some(30_000)).expect("katari starts on a pty");
        session
            .exp_string(question)
            .unwrap_or_else(|e| panic!("the terminal never showed {question:?}: {e}"));
        session.send_line(answer).expect("type the answer");
        let rest = session.exp_eof().unwrap_or_default();
        let status = match session.process().wait() {
            Ok(WaitStatus::Exited(_, code)) => code,
            other => panic!("katari did not exit normally: {other:?}"),
        };
        (status, rest.replace("\r\n", "\n"), s.read("stdout"))
    }

    // M03, §6.3.5
    #[test]
    fn a_delete_that_removes_threads_asks_on_a_terminal() {
        let s = Scratch::with_config(&team());
        let db = s.database();
        add_thread(
            &db,
            "01jaaaaaaaaaaaaaaaaaaaaaaa",
            ("agent", "alice"),
            None,
            &[("Hi", "Hello")],
        );
        drop(db);
        let before = s.config();
        let question = "Delete agent 'alice' and its 1 thread? [y/N] ";
        let (status, shown, stdout) = answered(&s, &["delete", "agent", "alice"], question, "n");
        assert_eq!(status, 2);
        assert!(
            shown.contains("error: Not confirmed; nothing was deleted."),
            "{shown}"
        );
        assert_eq!(stdout, "");
        assert_eq!(s.config(), before);
        assert_eq!(thread_count(&s), 1);

        let (status, _, stdout) = answered(&s, &["delete", "agent", "alice"], question, "y");
        assert_eq!(status, 0);
        assert_eq!(stdout, "Deleted agent 'alice' and its 1 thread.\n");
        assert!(!s.config().contains("[agent.alice]"));
        assert_eq!(thread_count(&s), 0);
    }
}
