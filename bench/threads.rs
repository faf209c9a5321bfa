//! The thread-store benchmark of `bench/threads.sh` (docs/benchmarks.md, "Thread store"):
//! `katari get threads`, `get thread PREFIX` and `describe thread PREFIX` as whole processes over
//! a `katari.db` of 10,000 threads and 200,000 messages.
//!
//! The database is made the way a user's grows: one real `katari chat` turn against the FAKE
//! OpenAI-compatible server `katari_tests::fake_llm::FakeLlm` creates `katari.db` with katari's
//! own schema, then rows shaped like the ones katari writes (ULID ids, RFC 3339 times, turns of
//! user / assistant with a tool call / tool result / assistant text, a few turns left `error` or
//! `pending` by a process that has ended) are added with rusqlite in one transaction. katari
//! never runs `ANALYZE`, so neither does this.
//!
//! Beside the commands it times, in this process, the SQL of the listing done in several ways
//! (three statements per thread as katari first did, one statement with subqueries, the two
//! statements of schema 3, and schema 4's one statement over `threads`, which holds each
//! thread's turn count and last status) and prints the query plans, so a slow listing can be
//! traced to its queries. Timings, never assertions: a wrong output shows
//! as a WARNING line and the process still exits 0.
//!
//! Usage: `cargo bench -p katari --bench threads -- [--runs N] [--threads N] [--messages N]
//! [--katari PATH] [--keep DIR]`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

use katari_chat::message::ToolCall;
use katari_tests::fake_llm::FakeLlm;

#[path = "common.rs"]
mod common;

use common::{Args, absolute, fmt_ms, median, ms, on_path, sorted, unknown};
use rusqlite::{Connection, params};

const AGENTS: usize = 20;
const PROJECTS: usize = 5;
/// Share of threads that are project threads; of those, the share owned by the bench's user.
const PROJECT_SHARE: f64 = 0.2;
const OWN_SHARE: f64 = 0.8;
const USER: &str = "bench";

/// Every column of `get threads` in one statement: the turn count from the covering index, and
/// only the unfinished rows of the last turn (status, writer) for the STATE column.
const ONE_STATEMENT: &str =
    "SELECT t.id, t.scope, t.agent, t.project, t.owner, t.title, t.created_at,
           t.last_turn_at,
           (SELECT COUNT(DISTINCT turn) FROM messages WHERE thread_id = t.id),
           (SELECT group_concat(m.status || ':' || COALESCE(m.writer_pid, '') || ':'
                      || COALESCE(m.writer_start, ''))
            FROM messages m
            WHERE m.thread_id = t.id AND m.status != 'complete'
              AND m.turn = (SELECT MAX(turn) FROM messages WHERE thread_id = t.id))
    FROM threads t
    WHERE t.scope = 'agent' OR (t.scope = 'project' AND t.owner = ?1)
    ORDER BY COALESCE(t.last_turn_at, t.created_at), t.id";

/// katari's listing since schema 4: `threads` itself holds every column (the writer of a
/// still-pending last turn is then asked for, through `messages_unfinished`, which the harness
/// leaves out: 0.5 % of the threads).
const LISTING: &str = "SELECT id, scope, agent, project, owner, title, created_at, last_turn_at,
               turns, last_status
        FROM threads WHERE scope = 'agent' OR (scope = 'project' AND owner = ?1)
        ORDER BY COALESCE(last_turn_at, created_at), id";

struct Opts {
    runs: usize,
    warmup: usize,
    threads: usize,
    messages: usize,
    katari: PathBuf,
    keep: Option<PathBuf>,
}

fn parse_opts() -> Opts {
    let mut opts = Opts {
        runs: 21,
        warmup: 2,
        threads: 10_000,
        messages: 200_000,
        katari: PathBuf::from(env!("CARGO_BIN_EXE_katari")),
        keep: None,
    };
    let mut args = Args::new();
    while let Some(arg) = args.next_arg() {
        match arg.as_str() {
            "--runs" => opts.runs = args.count(&arg),
            "--warmup" => opts.warmup = args.value(&arg).parse().unwrap_or(2),
            "--threads" => opts.threads = args.count(&arg),
            "--messages" => opts.messages = args.count(&arg),
            "--katari" => opts.katari = absolute(args.value(&arg)),
            "--keep" => opts.keep = Some(PathBuf::from(args.value(&arg))),
            other => unknown(other),
        }
    }
    opts
}

/// A small deterministic generator (xorshift64*), so every run builds the same database.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

const WORDS: &[&str] = &[
    "deploy",
    "the",
    "payments",
    "service",
    "check",
    "why",
    "build",
    "failed",
    "on",
    "main",
    "list",
    "open",
    "pull",
    "requests",
    "for",
    "review",
    "and",
    "summarise",
    "latency",
    "alerts",
    "from",
    "last",
    "night",
    "rollback",
    "migration",
    "queue",
    "worker",
    "retries",
    "timeout",
    "config",
];

fn text(rng: &mut Rng, chars: usize) -> String {
    let mut out = String::with_capacity(chars + 12);
    while out.len() < chars {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
    }
    out
}

fn rfc3339(secs: u64) -> String {
    chrono::DateTime::from_timestamp(i64::try_from(secs).unwrap_or(i64::MAX), 0)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn katari(opts: &Opts, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(&opts.katari);
    c.args(args)
        .current_dir(home)
        .env("KATARI_HOME", home)
        .env("USER", USER)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null());
    c
}

fn config(base_url: &str) -> String {
    let mut out = format!(
        "# A FAKE OpenAI-compatible server (bench/threads.rs), not a model.\n\
         [llm.fake]\nkind = \"openai\"\nbase_url = \"{base_url}\"\nmodel = \"fake-model\"\n\n\
         [chat]\nuser = \"{USER}\"\n"
    );
    for p in 0..PROJECTS {
        out.push_str(&format!("\n[project.proj-{p}]\nllm = \"fake\"\n"));
    }
    for a in 0..AGENTS {
        out.push_str(&format!("\n[agent.agent-{a:02}]\nllm = \"fake\"\n"));
        out.push_str(&format!(
            "\n[[agent.agent-{a:02}.membership]]\nproject = \"proj-{}\"\n",
            a % PROJECTS
        ));
    }
    out
}

/// What the database holds, for checking the commands' output.
struct Built {
    /// Thread ids, oldest first.
    ids: Vec<String>,
    /// Threads `get threads` lists for the bench's user.
    visible: usize,
    /// Threads of `agent-07`.
    agent_07: usize,
    messages: usize,
    interrupted: usize,
}

fn build(opts: &Opts, db: &Path) -> rusqlite::Result<Built> {
    let mut conn = Connection::open(db)?;
    let tx = conn.transaction()?;
    // A thread's row is written after its messages (its title and last turn are known then);
    // the foreign key is checked at the commit.
    tx.execute_batch("PRAGMA defer_foreign_keys = ON")?;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Threads started over the last 200 days, oldest first.
    let span = 200 * 24 * 3600;
    let per_thread = opts.messages / opts.threads.max(1);
    let mut extra = opts.messages % opts.threads.max(1);
    let mut built = Built {
        ids: Vec::with_capacity(opts.threads),
        visible: 0,
        agent_07: 0,
        messages: 0,
        interrupted: 0,
    };
    {
        let mut thread_row = tx.prepare(
            "INSERT INTO threads (id, scope, agent, project, owner, title, created_at, last_turn_at,
                                  turns, last_status)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        let mut message_row = tx.prepare(
            "INSERT INTO messages (thread_id, turn, seq, role, content, tool_calls, tool_call_id,
                                   status, error, project, writer_pid, writer_start, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?;
        for i in 0..opts.threads {
            let started = now - span + (span * i as u64) / opts.threads as u64;
            let ulid =
                ulid::Ulid::from_parts(started * 1000 + rng.below(1000), u128::from(rng.next()));
            let id = ulid.to_string().to_ascii_lowercase();
            let project_thread = rng.chance(PROJECT_SHARE);
            let (scope, agent, project, owner) = if project_thread {
                let owner = if rng.chance(OWN_SHARE) {
                    USER
                } else {
                    "someone-else"
                };
                if owner == USER {
                    built.visible += 1;
                }
                let p = format!("proj-{}", rng.below(PROJECTS as u64));
                ("project", None, Some(p), Some(owner))
            } else {
                built.visible += 1;
                let a = rng.below(AGENTS as u64);
                if a == 7 {
                    built.agent_07 += 1;
                }
                // An agent thread seen through a project lens now and then.
                let lens = rng
                    .chance(0.3)
                    .then(|| format!("proj-{}", a % PROJECTS as u64));
                ("agent", Some(format!("agent-{a:02}")), lens, None)
            };
            // Messages of this thread, in turns of four: user, assistant calling a tool, the
            // tool's result, assistant text. The last turn may be shorter.
            let count = per_thread + usize::from(extra > 0);
            extra = extra.saturating_sub(1);
            let turns = count.div_ceil(4).max(1);
            let ending = match rng.below(200) {
                0 | 1 => "error",
                2 => "pending",
                _ => "complete",
            };
            if ending != "complete" {
                built.interrupted += 1;
            }
            let mut title = None;
            let mut last_turn_at = None;
            let mut written = 0;
            for turn in 1..=turns {
                let at = rfc3339(started + (turn as u64 - 1) * 90);
                let status = if turn == turns { ending } else { "complete" };
                let error = (status == "error").then_some("the stream ended before [DONE]");
                // A pending row left by a process that has ended: pid 0 is never a writer.
                let (pid, start) = if status == "pending" {
                    (Some(0), Some("00000000-0000-0000-0000-000000000000:1"))
                } else {
                    (Some(4242), Some("00000000-0000-0000-0000-000000000000:1"))
                };
                last_turn_at = Some(at.clone());
                for seq in 1..=4 {
                    if written == count {
                        break;
                    }
                    let call_id = format!("call_{turn}");
                    let (role, content, calls, call_ref) = match seq {
                        1 => (
                            "user",
                            Some({
                                let n = 40 + rng.below(120) as usize;
                                text(&mut rng, n)
                            }),
                            None,
                            None,
                        ),
                        2 => {
                            let call = ToolCall {
                                id: call_id.clone(),
                                name: "mcp_invoke_github".into(),
                                arguments: format!(
                                    "{{\"tool\":\"list_checks\",\"arguments\":{{\"ref\":\"{}\"}}}}",
                                    text(&mut rng, 10)
                                ),
                            };
                            let calls = serde_json::to_string(&vec![call]).ok();
                            ("assistant", None, calls, None)
                        }
                        3 => (
                            "tool",
                            Some({
                                let n = 200 + rng.below(400) as usize;
                                text(&mut rng, n)
                            }),
                            None,
                            Some(call_id.clone()),
                        ),
                        _ => (
                            "assistant",
                            Some({
                                let n = 200 + rng.below(800) as usize;
                                text(&mut rng, n)
                            }),
                            None,
                            None,
                        ),
                    };
                    if role == "user" && title.is_none() {
                        title = content
                            .as_ref()
                            .map(|c: &String| c.chars().take(60).collect::<String>());
                    }
                    message_row.execute(params![
                        id,
                        turn as i64,
                        seq as i64,
                        role,
                        content,
                        calls,
                        call_ref,
                        status,
                        error,
                        project,
                        pid,
                        start,
                        at
                    ])?;
                    written += 1;
                }
            }
            built.messages += written;
            thread_row.execute(params![
                id,
                scope,
                agent,
                project.filter(|_| project_thread),
                owner,
                title,
                rfc3339(started),
                last_turn_at,
                turns as i64,
                ending
            ])?;
            built.ids.push(id);
        }
    }
    tx.commit()?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(built)
}

/// The median and the fastest of `samples`.
fn median_min(samples: Vec<f64>) -> (f64, f64) {
    let v = sorted(samples);
    (median(&v), v.first().copied().unwrap_or(f64::NAN))
}

/// The shortest prefix of `id`, 8 characters at least, that no other id shares.
fn unique_prefix(ids: &[String], id: &str) -> String {
    (8..=id.len())
        .map(|n| &id[..n])
        .find(|p| ids.iter().filter(|other| other.starts_with(p)).count() == 1)
        .unwrap_or(id)
        .to_string()
}

/// Runs `f` in one read transaction, as katari's `Store::threads` does (one read lock for all
/// its statements instead of one per statement).
fn in_read_tx(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> rusqlite::Result<usize>,
) -> rusqlite::Result<usize> {
    let tx = conn.unchecked_transaction()?;
    let n = f(&tx)?;
    tx.commit()?;
    Ok(n)
}

/// One timed command: label, arguments, and a check of its stdout.
struct Case {
    label: String,
    /// `None` for katari; a peer program otherwise.
    program: Option<PathBuf>,
    args: Vec<String>,
    check: Check,
}

/// Checks a command's stdout.
type Check = Box<dyn Fn(&str) -> Result<(), String>>;

/// Times `f` `runs` times after `warmup` calls; median and fastest in ms.
fn time_sql(
    warmup: usize,
    runs: usize,
    mut f: impl FnMut() -> rusqlite::Result<usize>,
) -> (f64, f64, usize) {
    let mut rows = 0;
    let mut samples = Vec::new();
    for round in 0..warmup + runs {
        let start = Instant::now();
        rows = f().unwrap_or(0);
        if round >= warmup {
            samples.push(ms(start.elapsed()));
        }
    }
    let (m, min) = median_min(samples);
    (m, min, rows)
}

fn main() {
    let opts = parse_opts();
    let dir = tempfile::tempdir().expect("a temporary KATARI_HOME");
    let home = opts
        .keep
        .clone()
        .unwrap_or_else(|| dir.path().to_path_buf());
    std::fs::create_dir_all(&home).expect("create the home");
    let fake = FakeLlm::start();
    std::fs::write(home.join("config.toml"), config(&fake.base_url())).expect("write config.toml");

    // One real turn: katari creates katari.db with its schema and writes a thread of its own.
    let first = katari(&opts, &home, &["chat", "agent-00", "-m", "hi"])
        .output()
        .expect("run katari chat");
    if !first.status.success() {
        eprintln!(
            "katari chat failed: {}",
            String::from_utf8_lossy(&first.stderr).trim()
        );
        std::process::exit(1);
    }
    drop(fake);
    let db = home.join("katari.db");
    let start = Instant::now();
    let built = match build(&opts, &db) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("cannot fill {}: {e}", db.display());
            std::process::exit(1);
        }
    };
    let fill = start.elapsed();
    let size = std::fs::metadata(&db).map_or(0, |m| m.len());
    let (threads, messages) = Connection::open(&db)
        .and_then(|c| {
            let t: i64 = c.query_row("SELECT COUNT(*) FROM threads", [], |r| r.get(0))?;
            let m: i64 = c.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))?;
            Ok((t, m))
        })
        .unwrap_or((0, 0));

    let visible = built.visible + 1; // and the real thread of agent-00
    let target = &built.ids[built.ids.len() / 2];
    let prefix = unique_prefix(&built.ids, target);
    let lines_of = |out: &str| out.lines().count();
    let target_owned = target.clone();
    let cases = vec![
        Case {
            program: None,
            label: "`katari get threads`".into(),
            args: vec!["get".into(), "threads".into()],
            check: Box::new(move |out| {
                let rows = lines_of(out).saturating_sub(1);
                if rows == visible {
                    Ok(())
                } else {
                    Err(format!("get threads listed {rows} threads, not {visible}"))
                }
            }),
        },
        Case {
            program: None,
            label: "`katari get threads --json`".into(),
            args: vec!["get".into(), "threads".into(), "--json".into()],
            check: Box::new(move |out| {
                match serde_json::from_str::<serde_json::Value>(out)
                    .ok()
                    .and_then(|v| v.as_array().map(Vec::len))
                {
                    Some(n) if n == visible => Ok(()),
                    other => Err(format!(
                        "get threads --json gave {other:?} threads, not {visible}"
                    )),
                }
            }),
        },
        Case {
            program: None,
            label: format!(
                "`katari get threads --agent agent-07` ({} threads)",
                built.agent_07
            ),
            args: vec![
                "get".into(),
                "threads".into(),
                "--agent".into(),
                "agent-07".into(),
            ],
            check: {
                let n = built.agent_07;
                Box::new(move |out| {
                    let rows = lines_of(out).saturating_sub(1);
                    if rows == n {
                        Ok(())
                    } else {
                        Err(format!("get threads --agent listed {rows}, not {n}"))
                    }
                })
            },
        },
        Case {
            program: None,
            label: format!(
                "`katari get thread {prefix}` ({}-character prefix)",
                prefix.len()
            ),
            args: vec!["get".into(), "thread".into(), prefix.clone()],
            check: Box::new(|out| {
                if out.starts_with("[turn 1] user (") {
                    Ok(())
                } else {
                    Err(format!(
                        "get thread printed {:?}",
                        out.chars().take(80).collect::<String>()
                    ))
                }
            }),
        },
        Case {
            program: None,
            label: format!("`katari describe thread {prefix}`"),
            args: vec!["describe".into(), "thread".into(), prefix.clone()],
            check: Box::new(move |out| {
                if out.contains(target_owned.as_str()) {
                    Ok(())
                } else {
                    Err(format!(
                        "describe thread printed {:?}",
                        out.chars().take(80).collect::<String>()
                    ))
                }
            }),
        },
        Case {
            program: None,
            label: "`katari --version` (start-up floor)".into(),
            args: vec!["--version".into()],
            check: Box::new(|_| Ok(())),
        },
    ];
    // The sqlite3 shell over the same file, as a peer: the same columns in one statement, and
    // katari's listing since schema 4, which reads `threads` alone.
    let mut cases = cases;
    if let Some(sqlite3) = on_path("sqlite3") {
        for (label, sql) in [
            (
                "`sqlite3` shell: the same columns in one statement",
                ONE_STATEMENT,
            ),
            (
                "`sqlite3` shell: the listing from `threads` alone (katari's statement since schema 4)",
                LISTING,
            ),
        ] {
            let sql = sql.replace("?1", &format!("'{USER}'"));
            cases.push(Case {
                program: Some(sqlite3.clone()),
                label: label.into(),
                args: vec!["-readonly".into(), "katari.db".into(), sql],
                check: Box::new(move |out| {
                    let rows = out.lines().count();
                    if rows == visible {
                        Ok(())
                    } else {
                        Err(format!("sqlite3 listed {rows} threads, not {visible}"))
                    }
                }),
            });
        }
    }

    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let mut warnings = Vec::new();
    for round in 0..opts.warmup + opts.runs {
        for (i, case) in cases.iter().enumerate() {
            let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
            let mut command = match &case.program {
                None => katari(&opts, &home, &args),
                Some(program) => {
                    let mut c = Command::new(program);
                    c.args(&args).current_dir(&home).stdin(Stdio::null());
                    c
                }
            };
            let start = Instant::now();
            let out = command.output();
            let wall = start.elapsed();
            match out {
                Ok(out) if out.status.success() => {
                    if let Err(e) = (case.check)(&String::from_utf8_lossy(&out.stdout)) {
                        warnings.push(e);
                    } else if round >= opts.warmup {
                        samples[i].push(ms(wall));
                    }
                }
                Ok(out) => warnings.push(format!(
                    "{} exited with {}: {}",
                    case.label,
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
                Err(e) => warnings.push(format!("cannot run {}: {e}", case.label)),
            }
        }
    }

    // The SQL alone, in this process: the ways `get threads` can get its columns — katari's first
    // pattern (the listing query, then per thread its row with the turn count, the last turn
    // number and that turn's rows), one statement, the two statements of schema 3, and schema 4's
    // listing that reads `threads` alone — to show where the time goes.
    let conn = Connection::open(&db).expect("open katari.db");
    let listing =
        "SELECT id FROM threads WHERE scope = 'agent' OR (scope = 'project' AND owner = ?1)
                   ORDER BY COALESCE(last_turn_at, created_at), id";
    let info = "SELECT id, scope, agent, project, owner, title, created_at, last_turn_at,
                       (SELECT COUNT(DISTINCT turn) FROM messages WHERE thread_id = ?1)
                FROM threads WHERE id = ?1";
    let max_turn = "SELECT MAX(turn) FROM messages WHERE thread_id = ?1";
    let turn_rows =
        "SELECT status, writer_pid, writer_start FROM messages WHERE thread_id = ?1 AND turn = ?2";
    let per_thread = |conn: &Connection| -> rusqlite::Result<usize> {
        let ids: Vec<String> = conn
            .prepare(listing)?
            .query_map([USER], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let row = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(String, i64)> {
            Ok((r.get(0)?, r.get(8)?))
        };
        for id in &ids {
            let _: (String, i64) = conn.query_row(info, [id], row)?;
            let turn: Option<i64> = conn.query_row(max_turn, [id], |r| r.get(0))?;
            if let Some(turn) = turn {
                let mut s = conn.prepare_cached(turn_rows)?;
                let rows = s.query_map(params![id, turn], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<i64>>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ))
                })?;
                for r in rows {
                    r?;
                }
            }
        }
        Ok(ids.len())
    };
    // Two statements, as katari ran them with schema 3: the listing with the last turn's
    // number as the turn count (turns are numbered 1, 2, … without gaps: a turn takes MAX + 1
    // and `.undo` removes only the last one), and every row not complete, through the partial
    // index.
    let listing_max = "SELECT t.id, t.scope, t.agent, t.project, t.owner, t.title, t.created_at,
               t.last_turn_at, (SELECT MAX(turn) FROM messages WHERE thread_id = t.id)
        FROM threads t
        WHERE t.scope = 'agent' OR (t.scope = 'project' AND t.owner = ?1)
        ORDER BY COALESCE(t.last_turn_at, t.created_at), t.id";
    let unfinished = "SELECT thread_id, turn, status, writer_pid, writer_start FROM messages
        WHERE status != 'complete'";
    let statement = |conn: &Connection, sql: &str, columns: usize| -> rusqlite::Result<usize> {
        let mut s = conn.prepare(sql)?;
        let mut rows = s.query([USER])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            for c in 0..columns {
                let _: rusqlite::types::Value = r.get(c)?;
            }
            n += 1;
        }
        Ok(n)
    };
    let two = |conn: &Connection| -> rusqlite::Result<usize> {
        let n = statement(conn, listing_max, 9)?;
        let mut s = conn.prepare(unfinished)?;
        let mut rows = s.query([])?;
        while let Some(r) = rows.next()? {
            for c in 0..5 {
                let _: rusqlite::types::Value = r.get(c)?;
            }
        }
        Ok(n)
    };
    // A copy with the partial index of the rows not complete (schema 3 has it; older katari
    // databases do not), so the original stays as katari made it.
    let copy = home.join("katari-indexed.db");
    let indexed = std::fs::copy(&db, &copy)
        .map_err(|e| rusqlite::Error::InvalidPath(PathBuf::from(e.to_string())))
        .and_then(|_| Connection::open(&copy))
        .and_then(|c| {
            c.execute_batch(
                "CREATE INDEX IF NOT EXISTS messages_unfinished ON messages (thread_id, turn)
                 WHERE status != 'complete'",
            )?;
            Ok(c)
        })
        .expect("an indexed copy of katari.db");
    let sql_runs = opts.runs.min(11);
    let sql = [
        (
            "three statements per thread, two of them prepared anew each time (katari's `get threads` up to commit 0f8d4c5)",
            time_sql(1, sql_runs, || in_read_tx(&conn, per_thread)),
        ),
        (
            "one statement with correlated subqueries (turn count, the last turn's rows not complete through `messages_unfinished`)",
            time_sql(1, sql_runs, || {
                in_read_tx(&indexed, |c| statement(c, ONE_STATEMENT, 10))
            }),
        ),
        (
            "two statements: the listing with `MAX(turn)` as the turn count, then every row not complete through `messages_unfinished` (katari's `get threads` with schema 3, commit 2450045)",
            time_sql(1, sql_runs, || in_read_tx(&indexed, two)),
        ),
        (
            "one statement over `threads`, which holds each thread's turn count and last status (katari's `get threads` since schema 4)",
            time_sql(1, sql_runs, || {
                in_read_tx(&conn, |c| statement(c, LISTING, 10))
            }),
        ),
    ];
    let plan = |conn: &Connection, q: &str, p: &[&dyn rusqlite::ToSql]| -> String {
        conn.prepare(&format!("EXPLAIN QUERY PLAN {q}"))
            .and_then(|mut s| {
                s.query_map(p, |r| r.get::<_, String>(3))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_or_else(|e| e.to_string(), |v| v.join("; "))
    };
    let plans = [
        ("first pattern, the listing", plan(&conn, listing, &[&USER])),
        (
            "first pattern, thread row + turn count",
            plan(&conn, info, &[&"x"]),
        ),
        (
            "first pattern, last turn number",
            plan(&conn, max_turn, &[&"x"]),
        ),
        (
            "first pattern, last turn's rows",
            plan(&conn, turn_rows, &[&"x", &1]),
        ),
        ("one statement", plan(&indexed, ONE_STATEMENT, &[&USER])),
        (
            "schema 3, the listing with `MAX(turn)`",
            plan(&indexed, listing_max, &[&USER]),
        ),
        (
            "schema 3, the rows not complete",
            plan(&indexed, unfinished, &[]),
        ),
        ("schema 4, the listing", plan(&conn, LISTING, &[&USER])),
        (
            "prefix range (`get thread`, `describe thread`)",
            plan(
                &conn,
                "SELECT id FROM threads WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 1000",
                &[&"a", &"b"],
            ),
        ),
    ];
    drop(indexed);
    let _ = std::fs::remove_file(&copy);

    println!(
        "Database: {threads} threads ({} listed for user `{USER}`, {} with an interrupted last turn), {messages} messages, {:.1} MB (`katari.db` after a checkpoint); filled in {:.1} s.",
        visible,
        built.interrupted,
        size as f64 / 1e6,
        fill.as_secs_f64()
    );
    println!();
    println!(
        "Whole process, {} runs per command after {} warm-up rounds, commands alternating:",
        opts.runs, opts.warmup
    );
    println!();
    println!("| command | median ms | min ms | runs | target |");
    println!("|---|---:|---:|---:|---|");
    for (case, s) in cases.iter().zip(samples) {
        let n = s.len();
        let (m, min) = median_min(s);
        let target = if case.program.is_some() || case.label.contains("--version") {
            "–".to_string()
        } else if m < 50.0 {
            "< 50 ms: met".to_string()
        } else {
            "< 50 ms: **missed**".to_string()
        };
        println!(
            "| {} | {} | {} | {n} | {target} |",
            case.label,
            fmt_ms(m),
            fmt_ms(min)
        );
    }
    println!();
    println!(
        "The SQL of `get threads` alone, in-process (rusqlite, same database), median of {sql_runs}:"
    );
    println!();
    println!("| queries | median ms | min ms | threads |");
    println!("|---|---:|---:|---:|");
    for (label, (m, min, rows)) in &sql {
        println!("| {label} | {} | {} | {rows} |", fmt_ms(*m), fmt_ms(*min));
    }
    println!();
    println!("Query plans (`EXPLAIN QUERY PLAN`):");
    println!();
    for (label, p) in &plans {
        println!("- {label}: {p}");
    }
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for w in warnings {
        *seen.entry(w).or_default() += 1;
    }
    for (w, n) in seen {
        println!();
        println!("WARNING ({n}×): {w}");
    }
    if opts.keep.is_some() {
        eprintln!("database kept in {}", home.display());
    }
}
