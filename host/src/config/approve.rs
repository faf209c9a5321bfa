//! Approval of workspace stdio servers (`host.md` §9.4): a server that a workspace file asks to
//! run starts only with `--trust-workspace`, an approval stored in the database for that file
//! and entry hash, or the person's yes at the terminal (which is then stored).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::Server;
use crate::store::Store;

/// Decisions taken in this process, by file and entry hash: asked once per process at most.
static DECIDED: Mutex<Option<HashMap<(PathBuf, String), bool>>> = Mutex::new(None);

/// Text from a workspace file (a server name, a command line, its path), through the one
/// sanitiser of `host.md` §2.4: the file's author must not be able to drive the terminal.
fn shown(text: &str) -> String {
    crate::table::one_line(text)
}

/// The message of §9.4.3 when a workspace server is not started.
pub fn refusal(server: &Server) -> String {
    format!(
        "MCP server '{}' comes from the workspace file {} and has not been approved.\n\
         Approve it by running katari mcp list --probe in a terminal, or pass --trust-workspace.",
        shown(&server.name),
        shown(&server.origin.file.display().to_string())
    )
}

/// The question of §9.4.2.
pub fn question(server: &Server) -> String {
    format!(
        "Workspace file {} wants to run '{}' as MCP server '{}'. Allow? [y/N] ",
        shown(&server.origin.file.display().to_string()),
        shown(&server.command_line()),
        shown(&server.name)
    )
}

/// Whether `server` may start. `ask` shows the question and reads the answer, or gives `None`
/// when there is no terminal. `Err` carries the refusal message.
pub fn approve(
    server: &Server,
    trust: bool,
    data_dir: &Path,
    ask: impl FnOnce(&str) -> Option<String>,
) -> Result<(), String> {
    if !server.needs_approval() || trust {
        return Ok(());
    }
    let key = (server.origin.file.clone(), server.approval_hash());
    let mut decided = DECIDED.lock().unwrap_or_else(|e| e.into_inner());
    let decided = decided.get_or_insert_with(HashMap::new);
    if let Some(&yes) = decided.get(&key) {
        return if yes { Ok(()) } else { Err(refusal(server)) };
    }
    // The database is only opened when it exists: checking must not create it.
    if data_dir.join("katari.db").is_file()
        && let Ok(store) = Store::open_in(data_dir)
        && store.is_approved(&key.0, &key.1).unwrap_or(false)
    {
        decided.insert(key, true);
        return Ok(());
    }
    let yes = ask(&question(server))
        .is_some_and(|answer| matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"));
    if yes && let Ok(store) = Store::open_in(data_dir) {
        // A failure to store only means the person is asked again next time.
        let _ = store.approve(&key.0, &key.1);
    }
    decided.insert(key, yes);
    if yes { Ok(()) } else { Err(refusal(server)) }
}
