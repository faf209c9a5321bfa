//! Tests of the thread store against real SQLite files, with real katari processes (this test
//! binary started again) as concurrent writers and as a writer killed mid-turn.

use super::*;
use crate::store::{ErrorKind, SCHEMA_VERSION};
use katari_chat::message::check_pairing;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

fn agent_thread(store: &Store, agent: &str) -> String {
    let id = new_thread_id();
    store
        .create_thread(&id, &Scope::Agent(agent.into()))
        .expect("creates");
    id
}

/// Writes one whole turn: a question, a tool call and its result, an answer.
fn write_turn(store: &Store, thread: &str, project: Option<&str>, text: &str) -> TurnRef {
    let turn = store
        .begin_turn(thread, project, &Message::user(text))
        .expect("begins");
    store
        .append(
            &turn,
            project,
            &Message::assistant(None, vec![call(&format!("c-{text}"), "f", "{}")]),
        )
        .expect("appends");
    store
        .append(&turn, project, &Message::tool(format!("c-{text}"), "42"))
        .expect("appends");
    store
        .append(
            &turn,
            project,
            &Message::assistant(Some(format!("answer to {text}")), vec![]),
        )
        .expect("appends");
    store.commit_turn(&turn).expect("commits");
    turn
}

/// Asserts that `get threads` lists the agent thread `id` as `get thread` shows it: the listing
/// reads the turn count and the last turn's state from the thread's row (schema 4), `thread`
/// computes them from the messages.
fn assert_listed_as_shown(store: &Store, id: &str) {
    let shown = store.thread(id).expect("reads").expect("exists");
    let listed = store
        .threads(&ThreadFilter::Visible {
            user: "nobody".into(),
        })
        .expect("lists")
        .into_iter()
        .find(|t| t.id == id)
        .expect("listed");
    assert_eq!(listed, shown);
}

/// The name libtest knows a test of this module by.
fn test_name(function: &str) -> String {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, rest)| rest);
    format!("{module}::{function}")
}

/// This test binary, started again to run only `function` with `env`.
fn katari_process(function: &str, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([test_name(function).as_str(), "--exact", "--nocapture"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Reads the child's output up to its `ready` line, then drains the rest in the background so
/// the child's later output (libtest's) never meets a closed pipe.
fn wait_ready(child: &mut Child) {
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    loop {
        line.clear();
        let read = stdout.read_line(&mut line).expect("reads the child");
        assert!(read > 0, "the writer process ended before it was ready");
        if line.trim_end() == "ready" {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
}

/// A child process killed when the test ends, whatever happened.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_turn_is_written_as_it_happens_and_completes_in_one_step() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let id = agent_thread(&store, "alice");
    assert_eq!(id.len(), 26);
    assert_eq!(id, id.to_ascii_lowercase());

    let turn = store
        .begin_turn(&id, Some("payments"), &Message::user("what failed?"))
        .expect("begins");
    assert_eq!(turn.turn, 1);
    store
        .append(
            &turn,
            Some("payments"),
            &Message::assistant(None, vec![call("c1", "mcp_invoke_github", r#"{"a": 1}"#)]),
        )
        .expect("appends");
    // Mid-turn every row is stored, pending, with this process as writer; none is history.
    let rows = store.messages(&id).expect("reads");
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.status == Status::Pending));
    assert_eq!(
        store.history(&id).expect("history"),
        Vec::<Vec<Message>>::new()
    );
    let info = store.thread(&id).expect("reads").expect("exists");
    assert!(info.writing && !info.interrupted);
    assert_listed_as_shown(&store, &id);
    assert_eq!(store.recover(&id).expect("recovers"), None);
    assert_eq!(
        store.messages(&id).expect("reads")[0].status,
        Status::Pending
    );

    store
        .append(&turn, Some("payments"), &Message::tool("c1", "ok"))
        .expect("appends");
    store
        .append(
            &turn,
            Some("payments"),
            &Message::assistant(Some("the deploy".into()), vec![]),
        )
        .expect("appends");
    store.commit_turn(&turn).expect("commits");

    let rows = store.messages(&id).expect("reads");
    assert!(rows.iter().all(|r| r.status == Status::Complete));
    assert_eq!(
        rows.iter().map(|r| (r.turn, r.seq)).collect::<Vec<_>>(),
        [(1, 1), (1, 2), (1, 3), (1, 4)]
    );
    assert!(
        rows.iter()
            .all(|r| r.project.as_deref() == Some("payments"))
    );
    let history = store.history(&id).expect("history");
    assert_eq!(history.len(), 1);
    assert_eq!(check_pairing(&history[0]), Ok(()));
    assert_eq!(history[0][1].tool_calls[0].arguments, r#"{"a": 1}"#);

    // A second turn under the agent alone: each message records its lens.
    write_turn(&store, &id, None, "again");
    let rows = store.messages(&id).expect("reads");
    assert_eq!(rows[4].turn, 2);
    assert_eq!(rows[4].project, None);

    let info = store.thread(&id).expect("reads").expect("exists");
    assert_eq!(info.turns, 2);
    assert_listed_as_shown(&store, &id);
    assert_eq!(info.title.as_deref(), Some("what failed?"));
    assert!(!info.writing && !info.interrupted);
    assert!(info.last_turn_at.is_some());
    assert_eq!(
        serde_json::to_value(&info).expect("json"),
        json!({
            "id": id, "scope": "agent", "agent": "alice", "project": null, "owner": null,
            "title": "what failed?", "turns": 2, "created_at": info.created_at,
            "last_turn_at": info.last_turn_at, "interrupted": false
        })
    );
    let message = serde_json::to_value(&rows[1]).expect("json");
    assert_eq!(
        message,
        json!({
            "turn": 1, "seq": 2, "role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "name": "mcp_invoke_github", "arguments": r#"{"a": 1}"#}],
            "tool_call_id": null, "status": "complete", "project": "payments",
            "created_at": rows[1].created_at
        })
    );
}

#[test]
fn the_title_is_the_first_sixty_characters_of_the_first_user_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let id = agent_thread(&store, "alice");
    assert_eq!(
        store.thread(&id).expect("reads").expect("exists").title,
        None
    );
    let long = "é".repeat(70);
    write_turn(&store, &id, None, &long);
    write_turn(&store, &id, None, "second");
    let title = store.thread(&id).expect("reads").expect("exists").title;
    assert_eq!(title, Some("é".repeat(60)));
}

#[test]
fn a_failed_turn_is_kept_marked_error_and_never_sent() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let id = agent_thread(&store, "alice");
    write_turn(&store, &id, None, "first");
    let turn = store
        .begin_turn(&id, None, &Message::user("deploy it"))
        .expect("begins");
    store
        .append(
            &turn,
            None,
            &Message::assistant(None, vec![call("d1", "deploy", r#"{ "env" : "prod" }"#)]),
        )
        .expect("appends");
    store
        .fail_turn(&turn, "interrupted by Ctrl-C")
        .expect("fails");

    let rows = store.messages(&id).expect("reads");
    let failed: Vec<&MessageRow> = rows.iter().filter(|r| r.turn == 2).collect();
    assert_eq!(failed.len(), 2);
    assert!(failed.iter().all(|r| r.status == Status::Error));
    assert_eq!(failed[0].error.as_deref(), Some("interrupted by Ctrl-C"));
    assert_eq!(store.history(&id).expect("history").len(), 1);
    assert!(
        store
            .thread(&id)
            .expect("reads")
            .expect("exists")
            .interrupted
    );
    assert_listed_as_shown(&store, &id);

    let report = store.recover(&id).expect("recovers").expect("interrupted");
    assert_eq!(report.turn, 2);
    assert_eq!(report.user_message.as_deref(), Some("deploy it"));
    assert_eq!(
        report.report(),
        format!(
            "Thread {id} has an interrupted turn (turn 2, started {}). It will not be sent to the model.\n\
             Type .retry to send its message again.\n  started deploy {{\"env\":\"prod\"}}",
            failed[0].created_at
        )
    );

    // .retry sends the message again as a new turn; the failed one stays as it was.
    let again = store
        .incomplete_turn(&id)
        .expect("reads")
        .expect("incomplete");
    let text = again.user_message.expect("message");
    write_turn(&store, &id, None, &text);
    assert_eq!(store.recover(&id).expect("recovers"), None);
    let history = store.history(&id).expect("history");
    assert_eq!(history.len(), 2);
    assert_eq!(history[1][0], Message::user("deploy it"));
    assert_eq!(store.thread(&id).expect("reads").expect("exists").turns, 3);
    assert_listed_as_shown(&store, &id);
}

#[test]
fn undo_removes_the_last_turn_whole_and_gives_back_its_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let id = agent_thread(&store, "alice");
    assert_eq!(store.undo(&id).expect("undoes"), None);
    write_turn(&store, &id, None, "one");
    write_turn(&store, &id, None, "two");
    assert_eq!(
        store.undo(&id).expect("undoes"),
        Some(Undone {
            turn: 2,
            user_message: Some("two".into())
        })
    );
    let rows = store.messages(&id).expect("reads");
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r.turn == 1));
    assert_listed_as_shown(&store, &id);
    assert_eq!(store.history(&id).expect("history").len(), 1);
    // The next turn takes the freed number.
    assert_eq!(write_turn(&store, &id, None, "three").turn, 2);

    // A turn this process is still writing is not undone.
    let open = store
        .begin_turn(&id, None, &Message::user("four"))
        .expect("begins");
    let refused = store.undo(&id).expect_err("refused");
    assert_eq!(refused.kind, ErrorKind::Refused);
    store.fail_turn(&open, "stopped").expect("fails");
    assert_listed_as_shown(&store, &id);
    assert_eq!(
        store
            .undo(&id)
            .expect("undoes")
            .and_then(|u| u.user_message),
        Some("four".into())
    );

    // Undoing every turn leaves a thread without title, as a new one.
    store.undo(&id).expect("undoes");
    store.undo(&id).expect("undoes");
    let info = store.thread(&id).expect("reads").expect("exists");
    assert_eq!((info.turns, info.title, info.last_turn_at), (0, None, None));
    assert_listed_as_shown(&store, &id);
}

#[test]
fn a_turn_removed_by_another_handle_is_not_written_into() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let other = Store::open_in(dir.path()).expect("opens");
    let id = agent_thread(&store, "alice");
    let turn = store
        .begin_turn(&id, None, &Message::user("hi"))
        .expect("begins");
    store.fail_turn(&turn, "stopped").expect("fails");
    other.undo(&id).expect("undoes");
    let err = store
        .append(
            &turn,
            None,
            &Message::assistant(Some("late".into()), vec![]),
        )
        .expect_err("refused");
    assert!(
        err.0.contains("was removed by another katari process"),
        "{err}"
    );
    assert!(store.commit_turn(&turn).is_err());
    assert_eq!(store.messages(&id).expect("reads"), Vec::new());
}

#[test]
fn turns_start_with_the_user_message_and_need_their_thread() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let err = store
        .begin_turn("01jzzzzzzzzzzzzzzzzzzzzzzz", None, &Message::user("hi"))
        .expect_err("no thread");
    assert_eq!(
        err.0,
        "No thread '01jzzzzzzzzzzzzzzzzzzzzzzz'. List threads with: katari get threads"
    );
    let id = agent_thread(&store, "alice");
    assert!(
        store
            .begin_turn(&id, None, &Message::assistant(Some("x".into()), vec![]))
            .is_err()
    );
    let turn = store
        .begin_turn(&id, None, &Message::user("hi"))
        .expect("begins");
    assert!(store.append(&turn, None, &Message::user("again")).is_err());
    store.commit_turn(&turn).expect("commits");
}

#[test]
fn thread_ids_resolve_by_unique_prefixes_of_eight_characters() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let ids = [
        "01j9z3k8q2w4m6n8p0r2t4v6x8",
        "01j9z3k8q2w4m6n8p0r2t4v6x9",
        "01j9z3kaaaaaaaaaaaaaaaaaaa",
    ];
    for id in ids {
        store
            .create_thread(id, &Scope::Agent("alice".into()))
            .expect("creates");
    }
    let resolved = |given: &str| store.resolve_thread(given).map(|t| t.id);
    assert_eq!(resolved("01j9z3ka"), Ok(ids[2].to_string()));
    assert_eq!(resolved("01J9Z3KA"), Ok(ids[2].to_string()));
    assert_eq!(resolved(ids[0]), Ok(ids[0].to_string()));
    assert_eq!(
        resolved("01j9z3k8q2w4m6n8p0r2t4v6x9"),
        Ok(ids[1].to_string())
    );
    let message = |given: &str| {
        let err = store.resolve_thread(given).expect_err("refused");
        assert_eq!(err.exit_code(), 2);
        err.message
    };
    assert_eq!(
        message("01j9z3k8"),
        "Thread prefix '01j9z3k8' matches 2 threads; give more characters."
    );
    assert_eq!(
        message("01j9z3k"),
        "Thread prefix '01j9z3k' is too short; give at least 8 characters."
    );
    assert_eq!(
        message("01j9z3kb"),
        "No thread '01j9z3kb'. List threads with: katari get threads"
    );
    assert_eq!(
        message("01j9z3k8%"),
        "No thread '01j9z3k8%'. List threads with: katari get threads"
    );
    assert_eq!(
        message("01j9z3k8q2w4m6n8p0r2t4v6x8z"),
        "No thread '01j9z3k8q2w4m6n8p0r2t4v6x8z'. List threads with: katari get threads"
    );
}

#[test]
fn threads_are_resumed_only_by_their_agent_or_project() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let bob = agent_thread(&store, "bob");
    let sre = new_thread_id();
    store
        .create_thread(
            &sre,
            &Scope::Project {
                project: "sre".into(),
                user: "ann".into(),
            },
        )
        .expect("creates");
    let bob_info = store.thread(&bob).expect("reads").expect("exists");
    let sre_info = store.thread(&sre).expect("reads").expect("exists");
    let project = |p: &str, u: &str| Scope::Project {
        project: p.into(),
        user: u.into(),
    };

    assert_eq!(bob_info.check_resume(&Scope::Agent("bob".into())), Ok(()));
    let err = bob_info
        .check_resume(&Scope::Agent("alice".into()))
        .expect_err("refused");
    assert_eq!(
        err.message,
        format!(
            "Thread {bob} belongs to agent 'bob', not 'alice'. Resume it with: katari chat bob --thread {bob}"
        )
    );
    assert_eq!(err.exit_code(), 2);
    assert_eq!(
        bob_info
            .check_resume(&project("sre", "ann"))
            .expect_err("refused")
            .message,
        format!(
            "Thread {bob} belongs to agent 'bob'. Resume it with: katari chat bob --thread {bob}"
        )
    );

    assert_eq!(sre_info.check_resume(&project("sre", "ann")), Ok(()));
    assert_eq!(sre_info.check_resume(&project("sre", "someone")), Ok(()));
    let expected = format!(
        "Thread {sre} belongs to project 'sre'. Resume it with: katari chat --project sre --thread {sre}"
    );
    for wrong in [project("payments", "ann"), Scope::Agent("alice".into())] {
        assert_eq!(
            sre_info.check_resume(&wrong).expect_err("refused").message,
            expected
        );
    }

    assert_eq!(sre_info.check_delete("ann", false), Ok(()));
    assert_eq!(
        sre_info
            .check_delete("zed", false)
            .expect_err("refused")
            .message,
        format!("Thread {sre} belongs to user 'ann'; only its owner can delete it.")
    );
    assert_eq!(sre_info.check_delete("zed", true), Ok(()));
    assert_eq!(bob_info.check_delete("zed", false), Ok(()));
}

#[test]
fn listings_show_agent_threads_and_only_the_users_project_threads() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let project = |p: &str, u: &str| Scope::Project {
        project: p.into(),
        user: u.into(),
    };
    let a = agent_thread(&store, "alice");
    let b = agent_thread(&store, "bob");
    let mine = new_thread_id();
    store
        .create_thread(&mine, &project("sre", "ann"))
        .expect("creates");
    let theirs = new_thread_id();
    store
        .create_thread(&theirs, &project("sre", "zed"))
        .expect("creates");
    let ids = |filter: ThreadFilter| {
        let mut ids: Vec<String> = store
            .threads(&filter)
            .expect("lists")
            .into_iter()
            .map(|t| t.id)
            .collect();
        ids.sort();
        ids
    };
    let mut visible = vec![a.clone(), b.clone(), mine.clone()];
    visible.sort();
    assert_eq!(ids(ThreadFilter::Visible { user: "ann".into() }), visible);
    assert_eq!(ids(ThreadFilter::Agent("alice".into())), [a.as_str()]);
    assert_eq!(
        ids(ThreadFilter::Project {
            project: "sre".into(),
            user: "ann".into()
        }),
        [mine.as_str()]
    );
    let sre = store.thread(&mine).expect("reads").expect("exists");
    assert_eq!(
        (
            sre.scope.as_str(),
            sre.project.as_deref(),
            sre.owner.as_deref(),
            sre.agent
        ),
        ("project", Some("sre"), Some("ann"), None)
    );

    // The most recently used thread is listed last (times are to the second, so the others
    // are made older first).
    Connection::open(dir.path().join(crate::store::FILE_NAME))
        .expect("opens")
        .execute("UPDATE threads SET created_at = '2020-01-01T00:00:00Z'", [])
        .expect("backdates");
    write_turn(&store, &a, None, "hello");
    let listed = store
        .threads(&ThreadFilter::Visible { user: "ann".into() })
        .expect("lists");
    assert_eq!(listed.last().map(|t| t.id.clone()), Some(a));
}

#[test]
fn deleting_threads_takes_their_messages_with_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let a1 = agent_thread(&store, "alice");
    let a2 = agent_thread(&store, "alice");
    let b = agent_thread(&store, "bob");
    let p = new_thread_id();
    store
        .create_thread(
            &p,
            &Scope::Project {
                project: "sre".into(),
                user: "zed".into(),
            },
        )
        .expect("creates");
    for id in [&a1, &a2, &b, &p] {
        write_turn(&store, id, None, "hi");
    }
    assert_eq!(store.count_threads(&Holder::Agent("alice".into())), Ok(2));
    assert_eq!(store.count_threads(&Holder::Project("sre".into())), Ok(1));
    assert_eq!(store.delete_threads(&Holder::Agent("alice".into())), Ok(2));
    assert_eq!(store.delete_threads(&Holder::Project("sre".into())), Ok(1));
    assert_eq!(store.thread(&a1), Ok(None));
    assert_eq!(store.messages(&a1), Ok(Vec::new()));
    assert_eq!(store.messages(&p), Ok(Vec::new()));
    assert_eq!(store.messages(&b).expect("reads").len(), 4);
    assert_eq!(store.delete_thread(&b), Ok(true));
    assert_eq!(store.delete_thread(&b), Ok(false));
    let conn = Connection::open(dir.path().join(crate::store::FILE_NAME)).expect("opens");
    let left: i64 = conn
        .query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))
        .expect("counts");
    assert_eq!(left, 0);
}

#[test]
fn report_arguments_are_compact_json_cut_to_two_hundred_characters() {
    assert_eq!(compact_arguments(r#"{ "a" : [1, 2] }"#), r#"{"a":[1,2]}"#);
    assert_eq!(compact_arguments(r#"{"a": "#), r#"{"a": "#);
    let long = format!(r#"{{"text": "{}"}}"#, "ü".repeat(300));
    let cut = compact_arguments(&long);
    assert_eq!(cut.chars().count(), 200);
    assert!(cut.starts_with(r#"{"text":"üü"#));
    assert!(cut.ends_with("ü…"));
}

#[test]
fn a_version_one_database_is_migrated_and_keeps_its_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(crate::store::FILE_NAME);
    {
        let conn = Connection::open(&path).expect("opens");
        conn.execute_batch(crate::store::MIGRATIONS[0])
            .expect("version 1");
        conn.execute_batch(
            "PRAGMA user_version = 1;
             INSERT INTO credentials VALUES ('gh', 'https://x/mcp', 'https://x/mcp', '{}', 3, 'now');
             INSERT INTO threads (id, scope, agent, created_at)
                 VALUES ('01j9z3k8q2w4m6n8p0r2t4v6x8', 'agent', 'alice', 'then');
             INSERT INTO messages (thread_id, turn, seq, role, content, status, writer_pid, created_at)
                 VALUES ('01j9z3k8q2w4m6n8p0r2t4v6x8', 1, 1, 'user', 'hi', 'complete', 1, 'then');",
        )
        .expect("rows");
    }
    let store = Store::open(&path).expect("migrates");
    assert_eq!(SCHEMA_VERSION, 4);
    let version: i64 = Connection::open(&path)
        .expect("opens")
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("reads");
    assert_eq!(version, 4);
    assert_eq!(
        store.credential("gh").expect("reads").map(|c| c.generation),
        Some(3)
    );
    let history = store
        .history("01j9z3k8q2w4m6n8p0r2t4v6x8")
        .expect("history");
    assert_eq!(history, vec![vec![Message::user("hi")]]);
}

#[test]
fn a_version_three_database_gets_each_threads_turns_and_last_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(crate::store::FILE_NAME);
    // Threads as schema 3 left them: none with turns on its row.
    let (none, done, failed, crashed, mixed) = (
        "01j9z3k8q2w4m6n8p0r2t4v6x1",
        "01j9z3k8q2w4m6n8p0r2t4v6x2",
        "01j9z3k8q2w4m6n8p0r2t4v6x3",
        "01j9z3k8q2w4m6n8p0r2t4v6x4",
        "01j9z3k8q2w4m6n8p0r2t4v6x5",
    );
    {
        let conn = Connection::open(&path).expect("opens");
        for step in &crate::store::MIGRATIONS[..3] {
            conn.execute_batch(step).expect("versions 1 to 3");
        }
        conn.execute_batch(
            "PRAGMA user_version = 3;
             INSERT INTO credentials VALUES ('gh', 'https://x/mcp', 'https://x/mcp', '{}', 3, 'now');
             INSERT INTO workspace_approvals VALUES ('/w/.mcp.json', 'abc', 'now');",
        )
        .expect("rows");
        for id in [none, done, failed, crashed, mixed] {
            conn.execute(
                "INSERT INTO threads (id, scope, agent, created_at) VALUES (?1, 'agent', 'alice', 'then')",
                [id],
            )
            .expect("thread");
        }
        // (thread, turn, seq, status); pid 0 is never a running writer.
        let rows = [
            (done, 1, 1, "complete"),
            (done, 1, 2, "complete"),
            (done, 2, 1, "complete"),
            (failed, 1, 1, "complete"),
            (failed, 2, 1, "error"),
            (failed, 2, 2, "error"),
            (crashed, 1, 1, "pending"),
            (crashed, 1, 2, "pending"),
            (mixed, 1, 1, "error"),
            (mixed, 2, 1, "error"),
            (mixed, 2, 2, "pending"),
        ];
        for (id, turn, seq, status) in rows {
            conn.execute(
                "INSERT INTO messages (thread_id, turn, seq, role, content, status, writer_pid,
                                       created_at)
                 VALUES (?1, ?2, ?3, CASE ?3 WHEN 1 THEN 'user' ELSE 'assistant' END, 'hi', ?4, 0,
                         'then')",
                params![id, turn, seq, status],
            )
            .expect("message");
        }
    }
    let store = Store::open(&path).expect("migrates");
    let conn = Connection::open(&path).expect("opens");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("reads");
    assert_eq!(version, SCHEMA_VERSION);
    let stored = |id: &str| -> (i64, Option<String>) {
        conn.query_row(
            "SELECT turns, last_status FROM threads WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("reads")
    };
    assert_eq!(stored(none), (0, None));
    assert_eq!(stored(done), (2, Some("complete".into())));
    assert_eq!(stored(failed), (2, Some("error".into())));
    assert_eq!(stored(crashed), (1, Some("pending".into())));
    assert_eq!(stored(mixed), (2, Some("pending".into())));
    for id in [none, done, failed, crashed, mixed] {
        assert_listed_as_shown(&store, id);
    }
    let listed = store
        .threads(&ThreadFilter::Agent("alice".into()))
        .expect("lists");
    let states: Vec<(i64, bool)> = listed.iter().map(|t| (t.turns, t.interrupted)).collect();
    assert_eq!(
        states,
        [(0, false), (2, false), (2, true), (1, true), (2, true)]
    );
    // The credentials and approvals are still there; threads go on from their stored rows.
    assert_eq!(
        store.credential("gh").expect("reads").map(|c| c.generation),
        Some(3)
    );
    assert!(
        store
            .is_approved(std::path::Path::new("/w/.mcp.json"), "abc")
            .expect("reads")
    );
    assert_eq!(write_turn(&store, done, None, "more").turn, 3);
    assert_eq!(stored(done), (3, Some("complete".into())));
    assert_eq!(store.history(done).expect("history").len(), 3);
}

/// The environment a started writer reads: data folder, thread id, what to do.
const DIR_VAR: &str = "KATARI_TEST_THREADS_DIR";
const THREAD_VAR: &str = "KATARI_TEST_THREADS_THREAD";
const MODE_VAR: &str = "KATARI_TEST_THREADS_MODE";
const TURNS: usize = 25;

/// A writer process. Started by the tests below it writes into their database: `turns:TAG`
/// writes whole turns tagged TAG, `hang` begins a turn with two tool calls, stores one result,
/// says `ready` and waits to be killed. Run alone it writes whole turns into a database of
/// its own and checks them.
#[test]
fn writer_process() {
    let (dir, thread, mode, _own) = match (
        std::env::var(DIR_VAR),
        std::env::var(THREAD_VAR),
        std::env::var(MODE_VAR),
    ) {
        (Ok(dir), Ok(thread), Ok(mode)) => (std::path::PathBuf::from(dir), thread, mode, None),
        _ => {
            let own = tempfile::tempdir().expect("temp dir");
            let store = Store::open_in(own.path()).expect("opens");
            let thread = agent_thread(&store, "alice");
            (
                own.path().to_path_buf(),
                thread,
                "turns:alone".to_string(),
                Some(own),
            )
        }
    };
    let store = Store::open_in(&dir).expect("opens");
    if mode == "hang" {
        let turn = store
            .begin_turn(&thread, Some("payments"), &Message::user("deploy to prod"))
            .expect("begins");
        let long = format!(r#"{{"note": "{}"}}"#, "x".repeat(300));
        store
            .append(
                &turn,
                Some("payments"),
                &Message::assistant(
                    None,
                    vec![
                        call("c1", "mcp_invoke_deploy", r#"{"env": "prod"}"#),
                        call("c2", "mcp_invoke_notify", &long),
                    ],
                ),
            )
            .expect("appends");
        store
            .append(&turn, Some("payments"), &Message::tool("c1", "deployed"))
            .expect("appends");
        println!("ready");
        // Wait for the kill; a closed stdin (the test gone) ends the wait too.
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        return;
    }
    let tag = mode.strip_prefix("turns:").expect("mode");
    if tag != "alone" {
        // Start together with the other writers: say so, then wait for the go.
        println!("ready");
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).expect("reads the go");
    }
    for i in 0..TURNS {
        write_turn(&store, &thread, None, &format!("{tag}-{i}"));
        // A chat writes between model replies, never back to back: the pause lets the other
        // writers' turns in between, as in real use (SQLite's busy wait is not fair, and a
        // writer that never pauses would write all its turns before a waiting one wakes up).
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    if tag == "alone" {
        let history = store.history(&thread).expect("history");
        assert_eq!(history.len(), TURNS);
        assert!(history.iter().all(|t| check_pairing(t).is_ok()));
    }
}

#[test]
fn two_processes_writing_turns_at_once_lose_no_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let thread = agent_thread(&store, "alice");
    let dir_text = dir.path().to_string_lossy().to_string();
    let mut writers: Vec<Reaped> = ["a", "b"]
        .into_iter()
        .map(|tag| {
            let mode = format!("turns:{tag}");
            Reaped(
                katari_process(
                    "writer_process",
                    &[
                        (DIR_VAR, &dir_text),
                        (THREAD_VAR, &thread),
                        (MODE_VAR, &mode),
                    ],
                )
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawns"),
            )
        })
        .collect();
    for writer in &mut writers {
        wait_ready(&mut writer.0);
    }
    for writer in &mut writers {
        let mut stdin = writer.0.stdin.take().expect("stdin");
        stdin.write_all(b"go\n").expect("says go");
    }
    // Meanwhile this process writes a thread of its own in the same database.
    let own = agent_thread(&store, "bob");
    for i in 0..TURNS {
        write_turn(&store, &own, None, &format!("own-{i}"));
    }
    for mut writer in writers {
        let status = writer.0.wait().expect("waits");
        assert!(status.success(), "a writer failed: {status}");
    }

    let rows = store.messages(&thread).expect("reads");
    assert_eq!(rows.len(), 2 * TURNS * 4);
    assert!(rows.iter().all(|r| r.status == Status::Complete));
    let history = store.history(&thread).expect("history");
    assert_eq!(history.len(), 2 * TURNS);
    for (n, turn) in history.iter().enumerate() {
        assert_eq!(check_pairing(turn), Ok(()), "turn {}", n + 1);
        // Each turn holds one writer's messages only, in order.
        let text = turn[0].content.clone().expect("user text");
        assert_eq!(
            turn[3].content.as_deref(),
            Some(format!("answer to {text}").as_str())
        );
        assert_eq!(
            turn[2].tool_call_id.as_deref(),
            Some(format!("c-{text}").as_str())
        );
    }
    for tag in ["a", "b"] {
        let mut mine: Vec<String> = history
            .iter()
            .filter_map(|t| t[0].content.clone())
            .filter(|c| c.starts_with(&format!("{tag}-")))
            .collect();
        mine.sort();
        let mut expected: Vec<String> = (0..TURNS).map(|i| format!("{tag}-{i}")).collect();
        expected.sort();
        assert_eq!(mine, expected);
    }
    let turns: Vec<i64> = rows.iter().filter(|r| r.seq == 1).map(|r| r.turn).collect();
    assert_eq!(turns, (1..=(2 * TURNS) as i64).collect::<Vec<_>>());
    assert_eq!(store.history(&own).expect("history").len(), TURNS);
}

#[test]
fn a_writer_killed_mid_turn_leaves_an_interrupted_turn() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open_in(dir.path()).expect("opens");
    let thread = agent_thread(&store, "alice");
    write_turn(&store, &thread, Some("payments"), "earlier");
    let dir_text = dir.path().to_string_lossy().to_string();
    let mut writer = Reaped(
        katari_process(
            "writer_process",
            &[
                (DIR_VAR, &dir_text),
                (THREAD_VAR, &thread),
                (MODE_VAR, "hang"),
            ],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawns"),
    );
    wait_ready(&mut writer.0);

    // While the writer runs, its turn is in progress: not history, not interrupted, not marked.
    let info = store.thread(&thread).expect("reads").expect("exists");
    assert!(info.writing && !info.interrupted);
    assert_listed_as_shown(&store, &thread);
    assert_eq!(store.recover(&thread).expect("recovers"), None);
    assert!(store.undo(&thread).is_err());
    assert_eq!(store.history(&thread).expect("history").len(), 1);

    writer.0.kill().expect("kills");
    writer.0.wait().expect("waits");

    let rows = store.messages(&thread).expect("reads");
    assert_eq!(
        rows.iter().filter(|r| r.status == Status::Pending).count(),
        3
    );
    let info = store.thread(&thread).expect("reads").expect("exists");
    assert!(info.interrupted && !info.writing);
    assert_listed_as_shown(&store, &thread);

    let report = store
        .recover(&thread)
        .expect("recovers")
        .expect("interrupted");
    let started = &rows[4].created_at;
    let note = format!(r#"{{"note":"{}"#, "x".repeat(190));
    assert_eq!(
        report.report(),
        format!(
            "Thread {thread} has an interrupted turn (turn 2, started {started}). It will not be sent to the model.\n\
             Type .retry to send its message again.\n\
             \x20 started mcp_invoke_deploy {{\"env\":\"prod\"}} (finished)\n\
             \x20 started mcp_invoke_notify {note}…"
        )
    );
    let rows = store.messages(&thread).expect("reads");
    let turn2: Vec<&MessageRow> = rows.iter().filter(|r| r.turn == 2).collect();
    assert!(turn2.iter().all(|r| r.status == Status::Error));
    assert!(
        turn2[0]
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("interrupted: the process writing it (pid "))
    );
    // Never sent to the model; the next turn follows it and pairs.
    let history = store.history(&thread).expect("history");
    assert_eq!(history.len(), 1);
    let next = write_turn(&store, &thread, None, "after");
    assert_eq!(next.turn, 3);
    let history = store.history(&thread).expect("history");
    assert_eq!(history.len(), 2);
    assert!(history.iter().all(|t| check_pairing(t).is_ok()));
    assert_listed_as_shown(&store, &thread);
    assert_eq!(
        store
            .incomplete_turn(&thread)
            .expect("reads")
            .and_then(|t| t.user_message),
        Some("deploy to prod".into())
    );
}
