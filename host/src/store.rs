//! The embedded database `katari.db` (`host.md` §16): threads, messages, OAuth credentials and
//! workspace approvals in one SQLite file in the data folder, created 0600 in a 0700 folder, in
//! WAL mode with a 5 s busy timeout so several katari processes share it. The schema version is
//! `PRAGMA user_version`; migrations run forward, each in one transaction, and a database newer
//! than this binary is refused. Threads and their messages are in `threads`; `writer` tells
//! whether the process that wrote a pending turn still runs.

mod threads;
mod writer;

#[allow(
    unused_imports,
    reason = "read by katari chat, get, describe and delete (host.md §6, §7), built alongside"
)]
pub use threads::*;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use katari_runtime::mcp::auth::{CredentialStore, StoredCredential};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// The database's file name in the data folder.
pub const FILE_NAME: &str = "katari.db";

/// `UPDATE threads` setting `turns` (the highest turn: turns are numbered 1, 2, … without gaps,
/// since a turn takes the highest number plus one and `.undo` removes only the last) and
/// `last_status` from the thread's messages: `pending` when a row of the last turn is pending,
/// `complete` when every row is, otherwise `error`; `NULL` without turns. Schema 4's migration
/// runs it over every thread, the store's writes over one (`threads.rs`), so both agree.
macro_rules! refresh_last_turn {
    () => {
        "UPDATE threads SET
            turns = COALESCE((SELECT MAX(turn) FROM messages WHERE thread_id = threads.id), 0),
            last_status = (
                SELECT CASE WHEN COUNT(*) = 0 THEN NULL
                            WHEN MAX(status = 'pending') THEN 'pending'
                            WHEN MIN(status = 'complete') THEN 'complete'
                            ELSE 'error' END
                FROM messages
                WHERE thread_id = threads.id
                  AND turn = (SELECT MAX(turn) FROM messages WHERE thread_id = threads.id))"
    };
}
pub(crate) use refresh_last_turn;

/// Migration `i` brings the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // Version 1: every table of `host.md` §16.1.
    "CREATE TABLE threads (
        id TEXT PRIMARY KEY,
        scope TEXT NOT NULL CHECK (scope IN ('agent', 'project')),
        agent TEXT,
        project TEXT,
        owner TEXT,
        title TEXT,
        created_at TEXT NOT NULL,
        last_turn_at TEXT
    );
    CREATE TABLE messages (
        thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        turn INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
        content TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        status TEXT NOT NULL CHECK (status IN ('pending', 'complete', 'error')),
        error TEXT,
        project TEXT,
        writer_pid INTEGER,
        created_at TEXT NOT NULL,
        UNIQUE (thread_id, turn, seq)
    );
    CREATE TABLE credentials (
        name TEXT PRIMARY KEY,
        server_url TEXT NOT NULL,
        resource_url TEXT NOT NULL,
        credential TEXT NOT NULL,
        generation INTEGER NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE workspace_approvals (
        file TEXT NOT NULL,
        entry_sha256 TEXT NOT NULL,
        approved_at TEXT NOT NULL,
        PRIMARY KEY (file, entry_sha256)
    );",
    // Version 2: the writer's start beside its process id (`writer.rs`: ids are reused), and
    // indexes for listing an agent's or a project's threads.
    "ALTER TABLE messages ADD COLUMN writer_start TEXT;
    CREATE INDEX threads_by_agent ON threads (scope, agent);
    CREATE INDEX threads_by_project ON threads (scope, project, owner);",
    // Version 3: the rows of turns that are not complete, so `get threads` finds interrupted
    // and running turns without reading every message (docs/benchmarks.md, "Thread store").
    "CREATE INDEX messages_unfinished ON messages (thread_id, turn) WHERE status != 'complete';",
    // Version 4: each thread's turn count and the state of its last turn on its row, kept by the
    // writes that change a turn, so `get threads` reads `threads` alone (docs/threads.md); the
    // migration computes them for the existing threads.
    concat!(
        "ALTER TABLE threads ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE threads ADD COLUMN last_status TEXT
            CHECK (last_status IN ('pending', 'complete', 'error'));
        ",
        refresh_last_turn!(),
        ";"
    ),
];

/// The newest schema version this binary knows.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// A database failure, with the message shown to the person.
#[derive(Clone, Debug, PartialEq)]
pub struct StoreError {
    pub message: String,
    pub kind: ErrorKind,
}

/// What kind of failure a [`StoreError`] is, which decides the exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file or the database failed (exit 1).
    Io,
    /// The database has a newer schema than this binary (exit 2, §16.2).
    NewerSchema,
    /// What the person asked for is not there or not theirs: an unknown or ambiguous thread id,
    /// another agent's or user's thread (exit 2, §6.1.4, §6.3.4, §7.9.3).
    Refused,
}

impl StoreError {
    fn io(path: &Path, what: &str, e: impl std::fmt::Display) -> StoreError {
        StoreError {
            message: format!("cannot {what} {}: {e}", path.display()),
            kind: ErrorKind::Io,
        }
    }

    fn refused(message: impl Into<String>) -> StoreError {
        StoreError {
            message: message.into(),
            kind: ErrorKind::Refused,
        }
    }

    /// The exit status for this failure (`host.md` §2.2, §16.2).
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            ErrorKind::Io => 1,
            ErrorKind::NewerSchema | ErrorKind::Refused => 2,
        }
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// One row of the `credentials` table.
#[derive(Clone, Debug, PartialEq)]
pub struct CredentialRow {
    pub name: String,
    pub server_url: String,
    pub resource_url: String,
    pub credential: serde_json::Value,
    pub generation: i64,
    pub updated_at: String,
}

/// An open database.
pub struct Store {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl Store {
    /// Opens (creating when missing) `katari.db` in the data folder `dir`.
    pub fn open_in(dir: &Path) -> Result<Store, StoreError> {
        create_private_dir(dir)?;
        Store::open(&dir.join(FILE_NAME))
    }

    /// Opens (creating when missing) the database at `path` and brings its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        create_private_file(path)?;
        let conn = Connection::open(path).map_err(|e| StoreError::io(path, "open", e))?;
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(|e| StoreError::io(path, "open", e))?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| StoreError::io(path, "open", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::io(
                path,
                "open",
                format!("the database cannot use WAL mode (it is in {mode} mode)"),
            ));
        }
        // NORMAL: in WAL mode a commit is in the WAL file once written, so it survives a crash
        // or a SIGKILL of katari; only a power loss or an OS crash may lose the last commits,
        // never corrupt the database. FULL's sync at every commit cost a `-m` turn 2 to 30 ms
        // (docs/threads.md).
        conn.execute_batch("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
            .map_err(|e| StoreError::io(path, "open", e))?;
        // No checkpoint when a connection closes: most katari processes write one turn, and a
        // checkpoint at every exit synced the WAL and the database, and the next process
        // created the WAL again, syncing its header and the folder. The commit that takes the
        // WAL past 256 pages (1 MiB, about 18 `-m` turns) checkpoints it instead; a process
        // that opens the database alone reads the WAL's frames to index them, about 0.4 ms
        // per MiB, so the WAL is kept smaller than SQLite's default of 1,000 pages.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .and_then(|_| conn.execute_batch("PRAGMA wal_autocheckpoint = 256;"))
            .map_err(|e| StoreError::io(path, "open", e))?;
        let mut store = Store {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        };
        store.migrate()?;
        Ok(store)
    }

    fn err(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::io(&self.path, "use", e)
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs the missing migrations, each in its own write transaction that re-reads the version
    /// first, so two processes opening a new database at once apply each migration once.
    fn migrate(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let conn = self.conn.get_mut().unwrap_or_else(|e| e.into_inner());
        let version = |c: &Connection| -> rusqlite::Result<i64> {
            c.query_row("PRAGMA user_version", [], |r| r.get(0))
        };
        loop {
            let current = version(conn).map_err(|e| StoreError::io(&path, "read", e))?;
            refuse_newer(current)?;
            if current == SCHEMA_VERSION {
                return Ok(());
            }
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| StoreError::io(&path, "migrate", e))?;
            let current = version(&tx).map_err(|e| StoreError::io(&path, "read", e))?;
            refuse_newer(current)?;
            if current < SCHEMA_VERSION {
                let step = MIGRATIONS[current as usize];
                tx.execute_batch(step)
                    .and_then(|()| {
                        tx.execute_batch(&format!("PRAGMA user_version = {}", current + 1))
                    })
                    .map_err(|e| StoreError::io(&path, "migrate", e))?;
            }
            tx.commit()
                .map_err(|e| StoreError::io(&path, "migrate", e))?;
        }
    }

    /// Stores a fresh login's credential under `name`, replacing any earlier one; its generation
    /// increases past every generation that name had, so a process refreshing the old credential
    /// cannot overwrite it. Returns the new generation.
    pub fn save_credential(
        &self,
        name: &str,
        server_url: &str,
        resource_url: &str,
        credential: &serde_json::Value,
    ) -> Result<i64, StoreError> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| self.err(e))?;
        let old: Option<i64> = tx
            .query_row(
                "SELECT generation FROM credentials WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        // A name that was logged out and logged in again must not reuse a generation a running
        // process may still hold (the old login's plus its refreshes), so a fresh generation is
        // at least the current time in microseconds: a login takes far longer than that many
        // refreshes.
        let generation = old
            .unwrap_or(0)
            .saturating_add(1)
            .max(chrono::Utc::now().timestamp_micros());
        tx.execute(
            "INSERT INTO credentials (name, server_url, resource_url, credential, generation, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(name) DO UPDATE SET server_url = ?2, resource_url = ?3, credential = ?4,
                generation = ?5, updated_at = ?6",
            params![
                name,
                server_url,
                resource_url,
                credential.to_string(),
                generation,
                now()
            ],
        )
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(generation)
    }

    /// The credential called `name`.
    pub fn credential(&self, name: &str) -> Result<Option<CredentialRow>, StoreError> {
        self.conn()
            .query_row(
                "SELECT name, server_url, resource_url, credential, generation, updated_at
                 FROM credentials WHERE name = ?1",
                [name],
                row,
            )
            .optional()
            .map_err(|e| self.err(e))?
            .transpose()
            .map_err(|e| self.err(e))
    }

    /// Every credential, by name.
    pub fn credentials(&self) -> Result<Vec<CredentialRow>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT name, server_url, resource_url, credential, generation, updated_at
                 FROM credentials ORDER BY name",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], row)
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))
    }

    /// Replaces the credential `name` only if its generation is still `generation`; it then
    /// becomes `generation + 1`. `false` when a newer login or refresh won.
    pub fn update_credential(
        &self,
        name: &str,
        generation: i64,
        credential: &serde_json::Value,
    ) -> Result<bool, StoreError> {
        let changed = self
            .conn()
            .execute(
                "UPDATE credentials SET credential = ?3, generation = generation + 1, updated_at = ?4
                 WHERE name = ?1 AND generation = ?2",
                params![name, generation, credential.to_string(), now()],
            )
            .map_err(|e| self.err(e))?;
        Ok(changed == 1)
    }

    /// Deletes the credential `name`; `false` when there was none.
    pub fn delete_credential(&self, name: &str) -> Result<bool, StoreError> {
        let changed = self
            .conn()
            .execute("DELETE FROM credentials WHERE name = ?1", [name])
            .map_err(|e| self.err(e))?;
        Ok(changed == 1)
    }

    #[allow(
        dead_code,
        reason = "used by workspace approval (host.md §9.4), which comes with mcp list --probe"
    )]
    /// Whether the workspace server entry with hash `entry_sha256` (hex) from `file` was
    /// approved (`host.md` §9.4).
    pub fn is_approved(&self, file: &Path, entry_sha256: &str) -> Result<bool, StoreError> {
        self.conn()
            .query_row(
                "SELECT 1 FROM workspace_approvals WHERE file = ?1 AND entry_sha256 = ?2",
                params![file.to_string_lossy(), entry_sha256],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(|e| self.err(e))
    }

    #[allow(
        dead_code,
        reason = "used by workspace approval (host.md §9.4), which comes with mcp list --probe"
    )]
    /// Records the person's approval of a workspace server entry.
    pub fn approve(&self, file: &Path, entry_sha256: &str) -> Result<(), StoreError> {
        self.conn()
            .execute(
                "INSERT INTO workspace_approvals (file, entry_sha256, approved_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(file, entry_sha256) DO UPDATE SET approved_at = ?3",
                params![file.to_string_lossy(), entry_sha256, now()],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }
}

/// A `credentials` row; the inner error is a credential column that is not JSON.
fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Result<CredentialRow, String>> {
    let name: String = r.get(0)?;
    let text: String = r.get(3)?;
    let credential = match serde_json::from_str(&text) {
        Ok(json) => json,
        Err(_) => {
            return Ok(Err(format!(
                "the stored credential '{name}' is not valid JSON"
            )));
        }
    };
    Ok(Ok(CredentialRow {
        name,
        server_url: r.get(1)?,
        resource_url: r.get(2)?,
        credential,
        generation: r.get(4)?,
        updated_at: r.get(5)?,
    }))
}

fn refuse_newer(version: i64) -> Result<(), StoreError> {
    if version > SCHEMA_VERSION {
        return Err(StoreError {
            message: format!(
                "{FILE_NAME} has schema version {version}, but this katari knows only up to {SCHEMA_VERSION}. Upgrade katari."
            ),
            kind: ErrorKind::NewerSchema,
        });
    }
    Ok(())
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Creates `dir` and its missing parents with mode 0700 (`host.md` §3.1).
pub fn create_private_dir(dir: &Path) -> Result<(), StoreError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|e| StoreError::io(dir, "create the folder", e))
}

/// Creates an empty `path` with mode 0600 unless it exists (`host.md` §3.3), so SQLite (which
/// gives its `-wal` and `-shm` files the database's mode) never creates it with the umask's.
fn create_private_file(path: &Path) -> Result<(), StoreError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::io(path, "create", e)),
    }
}

/// The credential store of a run: the database is opened on first use only, so a script that
/// never uses `mcp.oauth` never touches it.
pub struct LazyCredentials {
    dir: PathBuf,
    store: OnceLock<Result<Arc<Store>, StoreError>>,
}

impl LazyCredentials {
    pub fn new(dir: PathBuf) -> LazyCredentials {
        LazyCredentials {
            dir,
            store: OnceLock::new(),
        }
    }

    /// The refusal of a database newer than this binary, once opening it was tried.
    pub fn refusal(&self) -> Option<String> {
        match self.store.get() {
            Some(Err(e)) if e.kind == ErrorKind::NewerSchema => Some(e.message.clone()),
            _ => None,
        }
    }

    fn store(&self) -> Result<&Arc<Store>, String> {
        self.store
            .get_or_init(|| Store::open_in(&self.dir).map(Arc::new))
            .as_ref()
            .map_err(|e| e.message.clone())
    }
}

impl CredentialStore for LazyCredentials {
    fn load(&self, name: &str) -> Result<Option<StoredCredential>, String> {
        let row = self.store()?.credential(name).map_err(|e| e.message)?;
        Ok(row.map(|r| StoredCredential {
            generation: r.generation,
            credential: r.credential,
        }))
    }

    fn update(
        &self,
        name: &str,
        generation: i64,
        credential: &serde_json::Value,
    ) -> Result<bool, String> {
        self.store()?
            .update_credential(name, generation, credential)
            .map_err(|e| e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A fresh temporary folder (removed when the guard is dropped) and a path inside it that
    /// does not exist yet, as a data folder on first use.
    fn temp_dir(tag: &str) -> (tempfile::TempDir, PathBuf) {
        let guard = tempfile::Builder::new()
            .prefix(&format!("katari-store-{tag}-"))
            .tempdir()
            .expect("a temporary folder");
        let dir = guard.path().join("data");
        (guard, dir)
    }

    #[test]
    #[cfg(unix)]
    fn the_database_is_private_and_in_wal_mode() {
        use std::os::unix::fs::PermissionsExt;
        let (_guard, dir) = temp_dir("mode");
        let store = Store::open_in(&dir).expect("opens");
        store
            .save_credential("a", "https://x/mcp", "https://x/mcp", &json!({}))
            .expect("saves");
        let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join(FILE_NAME)), 0o600);
        assert_eq!(mode(&dir.join("katari.db-wal")), 0o600);
        let conn = Connection::open(dir.join(FILE_NAME)).expect("opens");
        let journal: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .expect("reads");
        assert_eq!(journal, "wal");
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .expect("reads");
        assert_eq!(version, SCHEMA_VERSION);
        let tables: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .expect("prepares")
            .query_map([], |r| r.get(0))
            .expect("queries")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(
            tables,
            ["credentials", "messages", "threads", "workspace_approvals"]
        );
        drop(store);
    }

    #[test]
    fn a_newer_schema_is_refused_with_the_upgrade_message() {
        let (_guard, dir) = temp_dir("newer");
        drop(Store::open_in(&dir).expect("opens"));
        Connection::open(dir.join(FILE_NAME))
            .expect("opens")
            .execute_batch("PRAGMA user_version = 7")
            .expect("sets");
        let err = Store::open_in(&dir).err().expect("refused");
        assert_eq!(
            err.message,
            format!(
                "katari.db has schema version 7, but this katari knows only up to {SCHEMA_VERSION}. Upgrade katari."
            )
        );
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn a_refresh_writes_back_only_over_the_generation_it_read() {
        let (_guard, dir) = temp_dir("cas");
        let store = Store::open_in(&dir).expect("opens");
        let g1 = store
            .save_credential("gh", "https://x/mcp", "https://x/mcp", &json!({"v": 1}))
            .expect("saves");
        assert!(
            store
                .update_credential("gh", g1, &json!({"v": 2}))
                .expect("cas")
        );
        // The generation moved on: a second writer holding g1 loses.
        assert!(
            !store
                .update_credential("gh", g1, &json!({"v": 3}))
                .expect("cas")
        );
        let row = store.credential("gh").expect("reads").expect("present");
        assert_eq!(row.credential, json!({"v": 2}));
        assert_eq!(row.generation, g1 + 1);
        // A newer login replaces it with a higher generation; the old refresh cannot land.
        let g2 = store
            .save_credential("gh", "https://x/mcp", "https://x/mcp", &json!({"v": 4}))
            .expect("saves");
        assert!(g2 > g1 + 1);
        assert!(
            !store
                .update_credential("gh", g1 + 1, &json!({"v": 5}))
                .expect("cas")
        );
        // Logged out and in again: still a generation no earlier reader holds.
        assert!(store.delete_credential("gh").expect("deletes"));
        assert!(!store.delete_credential("gh").expect("deletes"));
        let g3 = store
            .save_credential("gh", "https://x/mcp", "https://x/mcp", &json!({"v": 6}))
            .expect("saves");
        assert!(g3 > g2);
        // Through the runtime's trait, opened lazily in a second handle.
        let lazy = LazyCredentials::new(dir.clone());
        let loaded = lazy.load("gh").expect("loads").expect("present");
        assert_eq!(loaded.generation, g3);
        assert!(lazy.update("gh", g3, &json!({"v": 7})).expect("cas"));
        assert_eq!(
            store
                .credential("gh")
                .expect("reads")
                .expect("present")
                .credential,
            json!({"v": 7})
        );
        assert_eq!(lazy.load("nope").expect("loads"), None);
    }

    #[test]
    fn workspace_approvals_are_keyed_by_file_and_hash() {
        let (_guard, dir) = temp_dir("approvals");
        let store = Store::open_in(&dir).expect("opens");
        let file = Path::new("/w/.mcp.json");
        assert!(!store.is_approved(file, "abc").expect("reads"));
        store.approve(file, "abc").expect("approves");
        store.approve(file, "abc").expect("approves twice");
        assert!(store.is_approved(file, "abc").expect("reads"));
        assert!(!store.is_approved(file, "abd").expect("reads"));
        assert!(
            !store
                .is_approved(Path::new("/other/.mcp.json"), "abc")
                .expect("reads")
        );
    }

    #[test]
    fn opening_a_lazy_store_does_not_touch_the_disk() {
        let (_guard, dir) = temp_dir("lazy");
        let lazy = LazyCredentials::new(dir.clone());
        assert!(!dir.exists());
        drop(lazy);
        assert!(!dir.exists());
    }
}
