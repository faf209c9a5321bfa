//! The interactive chat prompt (`host.md` §7.1.3, §12.1–§12.3): `AGENT> `, `AGENT@PROJECT> ` or
//! `@PROJECT> `, one turn per line, Ctrl-C cancelling a turn, `.retry` and `.undo` (§7.10), and
//! `/quit`, `/exit` or Ctrl-D to leave. The REPL's chat mode builds on [`Chat`] the same way.

use std::io::Write;

use rustyline::config::Config as EditorConfig;
use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{Cmd, EditMode, Editor, KeyCode, KeyEvent, Modifiers};

use super::command::{Chat, Ended};
use super::render::Renderer;
use crate::config::EditMode as ConfiguredMode;
use crate::paths::Paths;

/// Runs the prompt until the person leaves; returns the exit status.
pub fn run(chat: &mut Chat, runtime: &tokio::runtime::Runtime) -> u8 {
    let settings = chat.config.repl().clone();
    let builder = EditorConfig::builder();
    let builder = builder
        .clone()
        .max_history_size(settings.history_size)
        .unwrap_or(builder);
    let config = builder
        .edit_mode(match settings.edit_mode {
            ConfiguredMode::Emacs => EditMode::Emacs,
            ConfiguredMode::Vi => EditMode::Vi,
        })
        .bracketed_paste(true)
        .auto_add_history(false)
        .build();
    let mut editor: Editor<(), FileHistory> = match Editor::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: cannot start the line editor: {e}"
            );
            return 1;
        }
    };
    editor.bind_sequence(KeyEvent(KeyCode::Enter, Modifiers::ALT), Cmd::Newline);
    let history = Paths::from_env().cache.join("repl-history");
    let _ = editor.load_history(&history);
    say(&format!("(thread: {})", chat.thread_id));
    let mut initial = String::new();
    loop {
        let prompt = chat.lens.prompt();
        let read = if initial.is_empty() {
            editor.readline(&prompt)
        } else {
            let left = std::mem::take(&mut initial);
            editor.readline_with_initial(&prompt, (&left, ""))
        };
        let line = match read {
            Ok(line) => line,
            // Ctrl-C at the prompt clears the line; Ctrl-D leaves.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                say(&format!("error: cannot read the input: {e}"));
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line.as_str());
        let command = line.trim();
        match command {
            "/quit" | "/exit" | ".exit" => break,
            ".retry" => match chat.store.incomplete_turn(&chat.thread_id) {
                Ok(Some(turn)) => match turn.user_message {
                    Some(text) => send(chat, runtime, &text),
                    None => say("The interrupted turn has no message to send again."),
                },
                Ok(None) => say("There is no interrupted turn to retry."),
                Err(e) => say(&format!("error: {}", e.message)),
            },
            ".undo" => match chat.store.undo(&chat.thread_id) {
                Ok(Some(undone)) => {
                    say(&format!("(turn {} removed)", undone.turn));
                    initial = undone.user_message.unwrap_or_default();
                }
                Ok(None) => say("There is no turn to undo."),
                Err(e) => say(&format!("error: {}", e.message)),
            },
            _ if line.starts_with("..") => send(chat, runtime, &line[1..]),
            _ if line.starts_with('.') => {
                let name = command.split_whitespace().next().unwrap_or(command);
                say(&format!("Unknown command '{name}'. See .help"));
            }
            _ => send(chat, runtime, &line),
        }
    }
    if let Some(dir) = history.parent() {
        let _ = crate::store::create_private_dir(dir);
    }
    if editor.save_history(&history).is_ok() {
        protect(&history);
    }
    chat.forget_if_empty();
    0
}

/// Sends one message and shows how the turn ended; the prompt comes back whatever happened.
fn send(chat: &mut Chat, runtime: &tokio::runtime::Runtime, message: &str) {
    let mut renderer = Renderer::new(chat.stream, chat.color());
    match chat.turn(runtime, message, &mut renderer) {
        Ended::Answered(outcome) => {
            if !chat.stream && !outcome.reply.is_empty() {
                let shown = crate::host::for_terminal(
                    &outcome.reply,
                    std::io::IsTerminal::is_terminal(&std::io::stdout()),
                );
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{}", shown.trim_end_matches('\n'));
            }
        }
        Ended::Failed(message) => say(&format!(
            "error: {}",
            katari_runtime::mcp::text::sanitize(&message)
        )),
        Ended::Refused(message) => say(&message),
        Ended::Cancelled => say("^C (turn cancelled)"),
    }
}

fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Makes the history file readable by its owner only.
fn protect(path: &std::path::Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = path;
}
