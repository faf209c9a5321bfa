//! Threads and their messages in `katari.db` (`host.md` §7.9, §7.10, §16): the chat engine's
//! [`ThreadLog`] over SQLite, and what `get`, `describe`, `delete`, `.retry` and `.undo` read and
//! change. Decisions in `docs/threads.md`.
//!
//! **Invariant:** a turn is never lost and never half sent. Each message is committed as it is
//! produced (status `pending`, with its writer's identity), so a crash keeps everything written
//! so far; a turn becomes `complete` in one transaction, and only complete turns are history.
//! Every write that reads before it writes (the next turn or seq number) runs in an `IMMEDIATE`
//! transaction, so two processes writing the same thread wait for each other instead of failing
//! or taking the same number.

#![allow(
    dead_code,
    reason = "read by katari chat, get, describe and delete (host.md §6, §7), built alongside"
)]

use katari_chat::log::{LogError, ThreadLog, TurnRef};
use katari_chat::message::{Message, Role, ToolCall};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;

use super::{Store, StoreError, now, refresh_last_turn, writer};

/// The shortest thread id prefix accepted (§6.1.4).
pub const MIN_PREFIX: usize = 8;
/// A title is the start of the first user message (§7.9.4).
const TITLE_CHARS: usize = 60;
/// Tool arguments in the interruption report are cut to this many characters (§7.10.1).
const ARGS_CHARS: usize = 200;

/// A new thread id: a ULID in lower case (§7.9.4), time-ordered: the milliseconds since the
/// epoch, then 80 random bits.
pub fn new_thread_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut random = [0u8; 16];
    if getrandom::fill(&mut random).is_err() {
        // No entropy source (not on the supported systems): the clock's nanoseconds and a
        // counter still keep the ids of this process apart.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        random[..8].copy_from_slice(&n.to_le_bytes());
        random[8..12].copy_from_slice(&now.subsec_nanos().to_le_bytes());
        random[12..].copy_from_slice(&std::process::id().to_le_bytes());
    }
    let millis = u64::try_from(now.as_millis()).unwrap_or(u64::MAX);
    ulid::Ulid::from_parts(millis, u128::from_le_bytes(random))
        .to_string()
        .to_ascii_lowercase()
}

/// Whose a thread is (§7.9.1–2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// An agent chat, under either lens: the thread belongs to the agent.
    Agent(String),
    /// A project chat: the thread belongs to the project and the user who started it.
    Project { project: String, user: String },
}

/// Which threads `get threads` lists (§6.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThreadFilter {
    /// Every agent thread and the user's own project threads.
    Visible { user: String },
    /// The threads of one agent.
    Agent(String),
    /// The user's threads of one project (§6.1.2).
    Project { project: String, user: String },
}

/// All the threads of one agent or one project, whoever started them (`delete agent`,
/// `delete project`, §6.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Holder {
    Agent(String),
    Project(String),
}

/// Where the last turn of a thread stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnState {
    Complete,
    /// Pending rows whose writer still runs.
    Writing,
    /// Error rows, or pending rows whose writer has ended (§7.10.1).
    Interrupted,
}

/// A thread as `get threads`, `get thread` and `describe thread` show it; serialises to the
/// `--json` element of §6.1.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadInfo {
    pub id: String,
    /// `agent` or `project`.
    pub scope: String,
    pub agent: Option<String>,
    pub project: Option<String>,
    /// The user of a project thread; `None` for agent threads.
    pub owner: Option<String>,
    /// `None` until the first user message.
    pub title: Option<String>,
    pub turns: i64,
    pub created_at: String,
    pub last_turn_at: Option<String>,
    /// The last turn is not complete (and no running process is writing it).
    pub interrupted: bool,
    /// The last turn is being written by a running process.
    #[serde(skip)]
    pub writing: bool,
}

/// The status of a stored message (§16.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Complete,
    Error,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Complete => "complete",
            Status::Error => "error",
        }
    }

    fn parse(text: &str) -> Option<Status> {
        match text {
            "pending" => Some(Status::Pending),
            "complete" => Some(Status::Complete),
            "error" => Some(Status::Error),
            _ => None,
        }
    }
}

/// One stored message; serialises to the message element of `get thread --json` (§6.1.3).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MessageRow {
    pub turn: i64,
    pub seq: i64,
    pub role: Role,
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub tool_call_id: Option<String>,
    pub status: Status,
    /// Why the turn failed, for `error` rows.
    #[serde(skip)]
    pub error: Option<String>,
    /// The project lens the message was produced under.
    pub project: Option<String>,
    pub created_at: String,
}

impl MessageRow {
    /// The message as the engine and the model see it.
    pub fn message(&self) -> Message {
        Message {
            role: self.role,
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
            tool_call_id: self.tool_call_id.clone(),
        }
    }
}

/// An incomplete turn (§7.10.1): what the resume report says and what `.retry` sends again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interrupted {
    pub thread_id: String,
    pub turn: i64,
    /// When its user message was stored.
    pub started_at: String,
    /// The user message, sent again by `.retry`.
    pub user_message: Option<String>,
    /// The tool calls the model made in the turn, in order.
    pub calls: Vec<StartedCall>,
}

/// A tool call of an interrupted turn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartedCall {
    pub name: String,
    /// The arguments as the model sent them.
    pub arguments: String,
    /// Its result was stored.
    pub finished: bool,
}

impl Interrupted {
    /// The report of §7.10.1, one line per call after the first two. Call names and arguments
    /// come from the model: the caller sanitises the text for a terminal (§2.4).
    pub fn report(&self) -> String {
        let mut out = format!(
            "Thread {} has an interrupted turn (turn {}, started {}). It will not be sent to the model.\n\
             Type .retry to send its message again.",
            self.thread_id, self.turn, self.started_at
        );
        for call in &self.calls {
            out.push_str(&format!(
                "\n  started {} {}{}",
                call.name,
                compact_arguments(&call.arguments),
                if call.finished { " (finished)" } else { "" }
            ));
        }
        out
    }
}

/// The turn `.undo` removed (§7.10.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undone {
    pub turn: i64,
    /// Its user message, put back into the input line.
    pub user_message: Option<String>,
}

impl ThreadInfo {
    /// Refuses to resume a thread under another agent or project (§7.9.3). A project thread
    /// started by another user of the same project may be resumed: the owner decides only who
    /// may delete it (§6.3.4).
    pub fn check_resume(&self, scope: &Scope) -> Result<(), StoreError> {
        let id = &self.id;
        match (self.scope.as_str(), scope) {
            ("agent", Scope::Agent(wanted)) if self.agent.as_deref() == Some(wanted) => Ok(()),
            ("project", Scope::Project { project, .. })
                if self.project.as_deref() == Some(project) =>
            {
                Ok(())
            }
            ("agent", wanted) => {
                let agent = self.agent.as_deref().unwrap_or_default();
                let not = match wanted {
                    Scope::Agent(other) => format!(", not '{other}'"),
                    Scope::Project { .. } => String::new(),
                };
                Err(StoreError::refused(format!(
                    "Thread {id} belongs to agent '{agent}'{not}. Resume it with: katari chat {agent} --thread {id}"
                )))
            }
            _ => {
                let project = self.project.as_deref().unwrap_or_default();
                Err(StoreError::refused(format!(
                    "Thread {id} belongs to project '{project}'. Resume it with: katari chat --project {project} --thread {id}"
                )))
            }
        }
    }

    /// Refuses `delete thread` of another user's project thread without `--force` (§6.3.4).
    pub fn check_delete(&self, user: &str, force: bool) -> Result<(), StoreError> {
        match &self.owner {
            Some(owner) if self.scope == "project" && owner != user && !force => {
                Err(StoreError::refused(format!(
                    "Thread {} belongs to user '{owner}'; only its owner can delete it.",
                    self.id
                )))
            }
            _ => Ok(()),
        }
    }
}

impl Store {
    /// Creates the thread `id` (from [`new_thread_id`]). Its title is set by its first turn.
    pub fn create_thread(&self, id: &str, scope: &Scope) -> Result<(), StoreError> {
        let (kind, agent, project, owner) = match scope {
            Scope::Agent(agent) => ("agent", Some(agent.as_str()), None, None),
            Scope::Project { project, user } => {
                ("project", None, Some(project.as_str()), Some(user.as_str()))
            }
        };
        self.conn()
            .execute(
                "INSERT INTO threads (id, scope, agent, project, owner, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![id, kind, agent, project, owner, now()],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The thread named by `given`: a whole id or a unique prefix of at least 8 characters, in
    /// either case (§6.1.4).
    pub fn resolve_thread(&self, given: &str) -> Result<ThreadInfo, StoreError> {
        let prefix = given.to_ascii_lowercase();
        let unknown = || {
            StoreError::refused(format!(
                "No thread '{given}'. List threads with: katari get threads"
            ))
        };
        if prefix.chars().count() < MIN_PREFIX {
            return Err(StoreError::refused(format!(
                "Thread prefix '{given}' is too short; give at least {MIN_PREFIX} characters."
            )));
        }
        // Ids are lower-case Crockford base32, all below '~': the range is the prefix's.
        if !prefix
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        {
            return Err(unknown());
        }
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        let ids: Vec<String> = tx
            .prepare("SELECT id FROM threads WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 1000")
            .and_then(|mut s| {
                s.query_map(params![prefix, format!("{prefix}~")], |r| r.get(0))?
                    .collect()
            })
            .map_err(|e| self.err(e))?;
        match ids.as_slice() {
            [] => Err(unknown()),
            [id] => thread_info(&tx, id)
                .map_err(|e| self.err(e))?
                .ok_or_else(unknown),
            _ => {
                let count: i64 = tx
                    .query_row(
                        "SELECT COUNT(*) FROM threads WHERE id >= ?1 AND id < ?2",
                        params![prefix, format!("{prefix}~")],
                        |r| r.get(0),
                    )
                    .map_err(|e| self.err(e))?;
                Err(StoreError::refused(format!(
                    "Thread prefix '{given}' matches {count} threads; give more characters."
                )))
            }
        }
    }

    /// The thread with exactly this id.
    pub fn thread(&self, id: &str) -> Result<Option<ThreadInfo>, StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        thread_info(&tx, id).map_err(|e| self.err(e))
    }

    /// The threads `filter` selects, the most recently used last.
    pub fn threads(&self, filter: &ThreadFilter) -> Result<Vec<ThreadInfo>, StoreError> {
        let (condition, a, b) = match filter {
            ThreadFilter::Visible { user } => (
                "scope = 'agent' OR (scope = 'project' AND owner = ?1)",
                user.as_str(),
                "",
            ),
            ThreadFilter::Agent(agent) => ("scope = 'agent' AND agent = ?1", agent.as_str(), ""),
            ThreadFilter::Project { project, user } => (
                "scope = 'project' AND project = ?1 AND owner = ?2",
                project.as_str(),
                user.as_str(),
            ),
        };
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.err(e))?;
        // One statement over `threads`, which holds each thread's turn count and the status of
        // its last turn (schema 4); only a last turn still `pending` needs its writer asked
        // whether it runs, through the partial index `messages_unfinished`.
        let sql = format!(
            "SELECT id, scope, agent, project, owner, title, created_at, last_turn_at, turns,
                    last_status
             FROM threads WHERE {condition}
             ORDER BY COALESCE(last_turn_at, created_at), id"
        );
        let row = |r: &rusqlite::Row<'_>| {
            let status: Option<String> = r.get(9)?;
            let info = ThreadInfo {
                id: r.get(0)?,
                scope: r.get(1)?,
                agent: r.get(2)?,
                project: r.get(3)?,
                owner: r.get(4)?,
                title: r.get(5)?,
                created_at: r.get(6)?,
                last_turn_at: r.get(7)?,
                turns: r.get(8)?,
                interrupted: status.as_deref() == Some("error"),
                writing: false,
            };
            Ok((info, status.as_deref() == Some("pending")))
        };
        let listed: Vec<(ThreadInfo, bool)> = tx
            .prepare(&sql)
            .and_then(|mut s| {
                if b.is_empty() {
                    s.query_map(params![a], row)?.collect()
                } else {
                    s.query_map(params![a, b], row)?.collect()
                }
            })
            .map_err(|e| self.err(e))?;
        let mut threads = Vec::with_capacity(listed.len());
        let mut pending_rows = None;
        for (mut t, pending) in listed {
            if pending {
                let stmt = match &mut pending_rows {
                    Some(stmt) => stmt,
                    None => pending_rows.insert(
                        tx.prepare(
                            "SELECT status, writer_pid, writer_start FROM messages
                             WHERE thread_id = ?1 AND turn = ?2 AND status != 'complete'",
                        )
                        .map_err(|e| self.err(e))?,
                    ),
                };
                let rows: Vec<(String, Option<i64>, Option<String>)> = stmt
                    .query_map(params![t.id, t.turns], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })
                    .and_then(|rows| rows.collect())
                    .map_err(|e| self.err(e))?;
                let writing = rows.iter().any(|(status, pid, start)| {
                    status == "pending"
                        && writer::is_writing(&t.id, t.turns, *pid, start.as_deref())
                });
                t.writing = writing;
                t.interrupted = !writing;
            }
            threads.push(t);
        }
        drop(pending_rows);
        Ok(threads)
    }

    /// Every message of the thread, every status, by turn and seq (`get thread`).
    pub fn messages(&self, thread_id: &str) -> Result<Vec<MessageRow>, StoreError> {
        let conn = self.conn();
        self.rows(&conn, thread_id, "")
    }

    /// The rows of `thread_id` that satisfy `extra` (SQL over `messages`' columns, `?1` the
    /// thread id), decoded.
    fn rows(
        &self,
        conn: &Connection,
        thread_id: &str,
        extra: &str,
    ) -> Result<Vec<MessageRow>, StoreError> {
        let raw: Vec<RawRow> = conn
            .prepare(&format!(
                "SELECT turn, seq, role, content, tool_calls, tool_call_id, status, error, project,
                        created_at
                 FROM messages WHERE thread_id = ?1 {extra} ORDER BY turn, seq"
            ))
            .and_then(|mut s| {
                s.query_map([thread_id], |r| {
                    Ok(RawRow {
                        turn: r.get(0)?,
                        seq: r.get(1)?,
                        role: r.get(2)?,
                        content: r.get(3)?,
                        tool_calls: r.get(4)?,
                        tool_call_id: r.get(5)?,
                        status: r.get(6)?,
                        error: r.get(7)?,
                        project: r.get(8)?,
                        created_at: r.get(9)?,
                    })
                })?
                .collect()
            })
            .map_err(|e| self.err(e))?;
        raw.into_iter()
            .map(|r| r.decode(thread_id).map_err(|e| self.err(e)))
            .collect()
    }

    /// Resuming `thread_id` (§7.10.1): turns whose writer has ended become `error`, and when the
    /// last turn is incomplete it is returned for the report.
    pub fn recover(&self, thread_id: &str) -> Result<Option<Interrupted>, StoreError> {
        let last = self.mark_interrupted(thread_id)?;
        match last {
            Some((turn, TurnState::Interrupted)) => self.interrupted(thread_id, turn),
            _ => Ok(None),
        }
    }

    /// The most recent incomplete turn, whose user message `.retry` sends again (§7.10.3).
    /// Turns whose writer has ended are marked `error` first.
    pub fn incomplete_turn(&self, thread_id: &str) -> Result<Option<Interrupted>, StoreError> {
        self.mark_interrupted(thread_id)?;
        let turn: Option<i64> = self
            .conn()
            .query_row(
                "SELECT MAX(turn) FROM messages WHERE thread_id = ?1 AND status = 'error'",
                [thread_id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        match turn {
            Some(turn) => self.interrupted(thread_id, turn),
            None => Ok(None),
        }
    }

    /// Marks `error` every pending turn of the thread whose writer has ended; gives the last
    /// turn and its state afterwards.
    fn mark_interrupted(&self, thread_id: &str) -> Result<Option<(i64, TurnState)>, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let pending: Vec<(i64, Option<i64>, Option<String>)> = tx
            .prepare(
                "SELECT DISTINCT turn, writer_pid, writer_start FROM messages
                 WHERE thread_id = ?1 AND status = 'pending' ORDER BY turn",
            )
            .and_then(|mut s| {
                s.query_map([thread_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .map_err(|e| self.err(e))?;
        let mut turns: Vec<(i64, bool)> = Vec::new();
        for (turn, pid, start) in pending {
            let live = writer::is_writing(thread_id, turn, pid, start.as_deref());
            match turns.last_mut() {
                Some((t, any)) if *t == turn => *any |= live,
                _ => turns.push((turn, live)),
            }
        }
        for (turn, _) in turns.iter().filter(|(_, live)| !live) {
            tx.execute(
                "UPDATE messages SET status = 'error',
                    error = 'interrupted: the process writing it (pid ' || COALESCE(writer_pid, '?') || ') ended'
                 WHERE thread_id = ?1 AND turn = ?2 AND status = 'pending'",
                params![thread_id, turn],
            )
            .map_err(|e| self.err(e))?;
        }
        if turns.iter().any(|(_, live)| !live) {
            refresh_thread(&tx, thread_id).map_err(|e| self.err(e))?;
        }
        let last = last_turn(&tx, thread_id).map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(last)
    }

    /// The turn `turn` of the thread as an interrupted turn.
    fn interrupted(&self, thread_id: &str, turn: i64) -> Result<Option<Interrupted>, StoreError> {
        let conn = self.conn();
        let rows = self.rows(&conn, thread_id, &format!("AND turn = {turn}"))?;
        let Some(first) = rows.first() else {
            return Ok(None);
        };
        let finished: Vec<&str> = rows
            .iter()
            .filter(|r| r.role == Role::Tool)
            .filter_map(|r| r.tool_call_id.as_deref())
            .collect();
        Ok(Some(Interrupted {
            thread_id: thread_id.to_string(),
            turn,
            started_at: first.created_at.clone(),
            user_message: rows
                .iter()
                .find(|r| r.role == Role::User)
                .and_then(|r| r.content.clone()),
            calls: rows
                .iter()
                .flat_map(|r| &r.tool_calls)
                .map(|c| StartedCall {
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                    finished: finished.contains(&c.id.as_str()),
                })
                .collect(),
        }))
    }

    /// Deletes the most recent turn of the thread, all its rows in one transaction (§7.10.4).
    /// `None` when the thread has no turn; refused while a running process writes the turn.
    pub fn undo(&self, thread_id: &str) -> Result<Option<Undone>, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let Some((turn, state)) = last_turn(&tx, thread_id).map_err(|e| self.err(e))? else {
            return Ok(None);
        };
        if state == TurnState::Writing {
            return Err(StoreError::refused(format!(
                "Turn {turn} of thread {thread_id} is still being written; undo it once that turn has ended."
            )));
        }
        let user_message: Option<String> = tx
            .query_row(
                "SELECT content FROM messages WHERE thread_id = ?1 AND turn = ?2 AND role = 'user'
                 ORDER BY seq LIMIT 1",
                params![thread_id, turn],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?
            .flatten();
        tx.execute(
            "DELETE FROM messages WHERE thread_id = ?1 AND turn = ?2",
            params![thread_id, turn],
        )
        .map_err(|e| self.err(e))?;
        // The thread's times, title, turn count and last status follow what is left.
        tx.execute(
            "UPDATE threads SET
                last_turn_at = (SELECT created_at FROM messages
                                WHERE thread_id = ?1 ORDER BY turn DESC, seq LIMIT 1),
                title = CASE WHEN EXISTS (SELECT 1 FROM messages WHERE thread_id = ?1)
                             THEN title END
             WHERE id = ?1",
            [thread_id],
        )
        .and_then(|_| refresh_thread(&tx, thread_id))
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(Some(Undone { turn, user_message }))
    }

    /// Deletes one thread and its messages in one transaction (§16.1.1); `false` when there was
    /// no such thread.
    pub fn delete_thread(&self, id: &str) -> Result<bool, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        tx.execute("DELETE FROM messages WHERE thread_id = ?1", [id])
            .map_err(|e| self.err(e))?;
        let deleted = tx
            .execute("DELETE FROM threads WHERE id = ?1", [id])
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(deleted == 1)
    }

    /// How many threads `delete agent` or `delete project` would remove (§6.3.5's question).
    pub fn count_threads(&self, holder: &Holder) -> Result<i64, StoreError> {
        let (condition, name) = holder_condition(holder);
        self.conn()
            .query_row(
                &format!("SELECT COUNT(*) FROM threads WHERE {condition}"),
                [name],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Deletes every thread of the agent or project with their messages, in one transaction;
    /// gives how many threads went.
    pub fn delete_threads(&self, holder: &Holder) -> Result<i64, StoreError> {
        let (condition, name) = holder_condition(holder);
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        tx.execute(
            &format!(
                "DELETE FROM messages WHERE thread_id IN (SELECT id FROM threads WHERE {condition})"
            ),
            [name],
        )
        .map_err(|e| self.err(e))?;
        let deleted = tx
            .execute(&format!("DELETE FROM threads WHERE {condition}"), [name])
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(deleted as i64)
    }

    /// Gives every row of the turn `status` (and `error`), and the thread's row the same last
    /// status when the turn is its last, in one transaction; the number of rows changed.
    fn end_turn(
        &self,
        turn: &TurnRef,
        status: Status,
        error: Option<&str>,
    ) -> Result<usize, LogError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.log_err(e))?;
        let changed = tx
            .execute(
                "UPDATE messages SET status = ?3, error = ?4 WHERE thread_id = ?1 AND turn = ?2",
                params![turn.thread_id, turn.turn, status.as_str(), error],
            )
            .map_err(|e| self.log_err(e))?;
        tx.execute(
            "UPDATE threads SET last_status = ?3 WHERE id = ?1 AND turns = ?2",
            params![turn.thread_id, turn.turn, status.as_str()],
        )
        .map_err(|e| self.log_err(e))?;
        tx.commit().map_err(|e| self.log_err(e))?;
        Ok(changed)
    }

    fn log_err(&self, e: impl std::fmt::Display) -> LogError {
        LogError(self.err(e).message)
    }
}

fn holder_condition(holder: &Holder) -> (&'static str, &str) {
    match holder {
        Holder::Agent(name) => ("scope = 'agent' AND agent = ?1", name),
        Holder::Project(name) => ("scope = 'project' AND project = ?1", name),
    }
}

impl ThreadLog for Store {
    fn history(&self, thread_id: &str) -> Result<Vec<Vec<Message>>, LogError> {
        let conn = self.conn();
        let exists = thread_exists(&conn, thread_id).map_err(|e| self.log_err(e))?;
        if !exists {
            return Err(no_thread(thread_id));
        }
        let rows = self
            .rows(
                &conn,
                thread_id,
                "AND turn NOT IN (SELECT turn FROM messages
                                  WHERE thread_id = ?1 AND status != 'complete')",
            )
            .map_err(|e| LogError(e.message))?;
        let mut turns: Vec<Vec<Message>> = Vec::new();
        let mut current = None;
        for row in rows {
            if current != Some(row.turn) {
                current = Some(row.turn);
                turns.push(Vec::new());
            }
            if let Some(turn) = turns.last_mut() {
                turn.push(row.message());
            }
        }
        Ok(turns)
    }

    fn begin_turn(
        &self,
        thread_id: &str,
        project: Option<&str>,
        user: &Message,
    ) -> Result<TurnRef, LogError> {
        if user.role != Role::User {
            return Err(LogError(format!(
                "a turn starts with a user message, not a {} message",
                user.role.as_str()
            )));
        }
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.log_err(e))?;
        if !thread_exists(&tx, thread_id).map_err(|e| self.log_err(e))? {
            return Err(no_thread(thread_id));
        }
        let turn: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(turn), 0) + 1 FROM messages WHERE thread_id = ?1",
                [thread_id],
                |r| r.get(0),
            )
            .map_err(|e| self.log_err(e))?;
        let at = now();
        insert(&tx, thread_id, turn, 1, project, user, &at).map_err(|e| self.log_err(e))?;
        let title: String = user
            .content
            .as_deref()
            .unwrap_or_default()
            .chars()
            .take(TITLE_CHARS)
            .collect();
        tx.execute(
            "UPDATE threads SET title = COALESCE(title, ?2), last_turn_at = ?3, turns = ?4,
                                last_status = 'pending'
             WHERE id = ?1",
            params![thread_id, title, at, turn],
        )
        .map_err(|e| self.log_err(e))?;
        // Open before the rows are visible, so this process never takes its own new turn for
        // an interrupted one.
        writer::open_turn(thread_id, turn);
        if let Err(e) = tx.commit() {
            writer::close_turn(thread_id, turn);
            return Err(self.log_err(e));
        }
        Ok(TurnRef {
            thread_id: thread_id.to_string(),
            turn,
        })
    }

    fn append(
        &self,
        turn: &TurnRef,
        project: Option<&str>,
        message: &Message,
    ) -> Result<(), LogError> {
        if message.role == Role::User {
            return Err(LogError(
                "a turn has one user message; a new user message begins a new turn".into(),
            ));
        }
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.log_err(e))?;
        let seq: Option<i64> = tx
            .query_row(
                "SELECT MAX(seq) + 1 FROM messages WHERE thread_id = ?1 AND turn = ?2",
                params![turn.thread_id, turn.turn],
                |r| r.get(0),
            )
            .map_err(|e| self.log_err(e))?;
        let Some(seq) = seq else {
            return Err(removed(turn));
        };
        insert(
            &tx,
            &turn.thread_id,
            turn.turn,
            seq,
            project,
            message,
            &now(),
        )
        .map_err(|e| self.log_err(e))?;
        // A new pending row makes its turn pending again when another process had marked it
        // error meanwhile (possible only where a writer cannot be told from an ended one).
        tx.execute(
            "UPDATE threads SET last_status = 'pending'
             WHERE id = ?1 AND turns = ?2 AND last_status IS NOT 'pending'",
            params![turn.thread_id, turn.turn],
        )
        .map_err(|e| self.log_err(e))?;
        tx.commit().map_err(|e| self.log_err(e))
    }

    /// The writer decides how its own turn ended: rows another process took for interrupted
    /// (only possible where a writer cannot be told from a later process with its id) become
    /// complete too, since every one of them was written.
    fn commit_turn(&self, turn: &TurnRef) -> Result<(), LogError> {
        let result = self
            .end_turn(turn, Status::Complete, None)
            .and_then(|changed| {
                if changed == 0 {
                    return Err(removed(turn));
                }
                Ok(())
            });
        writer::close_turn(&turn.thread_id, turn.turn);
        result
    }

    fn fail_turn(&self, turn: &TurnRef, error: &str) -> Result<(), LogError> {
        let result = self.end_turn(turn, Status::Error, Some(error)).map(|_| ());
        writer::close_turn(&turn.thread_id, turn.turn);
        result
    }
}

fn no_thread(thread_id: &str) -> LogError {
    LogError(format!(
        "No thread '{thread_id}'. List threads with: katari get threads"
    ))
}

fn removed(turn: &TurnRef) -> LogError {
    LogError(format!(
        "Turn {} of thread {} was removed by another katari process (.undo or delete) while it was being written; its remaining messages were not stored.",
        turn.turn, turn.thread_id
    ))
}

/// Sets the thread's `turns` and `last_status` from its messages (`store.rs`,
/// `refresh_last_turn!`), after a change that is not a single turn's begin or end.
fn refresh_thread(conn: &Connection, thread_id: &str) -> rusqlite::Result<()> {
    conn.execute(concat!(refresh_last_turn!(), " WHERE id = ?1"), [thread_id])
        .map(|_| ())
}

fn thread_exists(conn: &Connection, thread_id: &str) -> rusqlite::Result<bool> {
    conn.query_row("SELECT 1 FROM threads WHERE id = ?1", [thread_id], |_| {
        Ok(())
    })
    .optional()
    .map(|found| found.is_some())
}

/// Writes one `pending` row with this process as its writer.
fn insert(
    tx: &Transaction<'_>,
    thread_id: &str,
    turn: i64,
    seq: i64,
    project: Option<&str>,
    message: &Message,
    at: &str,
) -> rusqlite::Result<()> {
    let tool_calls = if message.tool_calls.is_empty() {
        None
    } else {
        serde_json::to_string(&message.tool_calls).ok()
    };
    let me = writer::current();
    tx.execute(
        "INSERT INTO messages (thread_id, turn, seq, role, content, tool_calls, tool_call_id,
                               status, project, writer_pid, writer_start, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?9, ?10, ?11)",
        params![
            thread_id,
            turn,
            seq,
            message.role.as_str(),
            message.content,
            tool_calls,
            message.tool_call_id,
            project,
            me.pid,
            me.start,
            at
        ],
    )
    .map(|_| ())
}

/// The thread `id` with its turn count and the state of its last turn.
fn thread_info(conn: &Connection, id: &str) -> rusqlite::Result<Option<ThreadInfo>> {
    let info = conn
        .query_row(
            "SELECT id, scope, agent, project, owner, title, created_at, last_turn_at,
                    (SELECT COUNT(DISTINCT turn) FROM messages WHERE thread_id = ?1)
             FROM threads WHERE id = ?1",
            [id],
            |r| {
                Ok(ThreadInfo {
                    id: r.get(0)?,
                    scope: r.get(1)?,
                    agent: r.get(2)?,
                    project: r.get(3)?,
                    owner: r.get(4)?,
                    title: r.get(5)?,
                    created_at: r.get(6)?,
                    last_turn_at: r.get(7)?,
                    turns: r.get(8)?,
                    interrupted: false,
                    writing: false,
                })
            },
        )
        .optional()?;
    let Some(mut info) = info else {
        return Ok(None);
    };
    let state = last_turn(conn, id)?.map(|(_, state)| state);
    info.interrupted = state == Some(TurnState::Interrupted);
    info.writing = state == Some(TurnState::Writing);
    Ok(Some(info))
}

/// The last turn of the thread and its state.
fn last_turn(conn: &Connection, thread_id: &str) -> rusqlite::Result<Option<(i64, TurnState)>> {
    let turn: Option<i64> = conn.query_row(
        "SELECT MAX(turn) FROM messages WHERE thread_id = ?1",
        [thread_id],
        |r| r.get(0),
    )?;
    let Some(turn) = turn else {
        return Ok(None);
    };
    let rows: Vec<(String, Option<i64>, Option<String>)> = conn
        .prepare_cached(
            "SELECT status, writer_pid, writer_start FROM messages
             WHERE thread_id = ?1 AND turn = ?2",
        )?
        .query_map(params![thread_id, turn], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let pending = rows.iter().filter(|(status, ..)| status == "pending");
    let state = if pending
        .clone()
        .any(|(_, pid, start)| writer::is_writing(thread_id, turn, *pid, start.as_deref()))
    {
        TurnState::Writing
    } else if rows.iter().all(|(status, ..)| status == "complete") {
        TurnState::Complete
    } else {
        TurnState::Interrupted
    };
    Ok(Some((turn, state)))
}

/// A `messages` row as stored, before its text columns are checked.
struct RawRow {
    turn: i64,
    seq: i64,
    role: String,
    content: Option<String>,
    tool_calls: Option<String>,
    tool_call_id: Option<String>,
    status: String,
    error: Option<String>,
    project: Option<String>,
    created_at: String,
}

impl RawRow {
    fn decode(self, thread_id: &str) -> Result<MessageRow, String> {
        let at = || {
            format!(
                "the message (thread {thread_id}, turn {}, seq {})",
                self.turn, self.seq
            )
        };
        let role = Role::parse(&self.role)
            .ok_or_else(|| format!("{} has the unknown role '{}'", at(), self.role))?;
        let status = Status::parse(&self.status)
            .ok_or_else(|| format!("{} has the unknown status '{}'", at(), self.status))?;
        let tool_calls = match &self.tool_calls {
            None => Vec::new(),
            Some(text) => serde_json::from_str(text)
                .map_err(|e| format!("{} has tool calls that are not readable: {e}", at()))?,
        };
        Ok(MessageRow {
            turn: self.turn,
            seq: self.seq,
            role,
            content: self.content,
            tool_calls,
            tool_call_id: self.tool_call_id,
            status,
            error: self.error,
            project: self.project,
            created_at: self.created_at,
        })
    }
}

/// Tool arguments as the report shows them: compact JSON (the model's text when it is not
/// JSON), cut to 200 characters, the last of them `…` when cut.
fn compact_arguments(arguments: &str) -> String {
    let text = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(json) => json.to_string(),
        Err(_) => arguments.to_string(),
    };
    if text.chars().count() <= ARGS_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(ARGS_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests;
