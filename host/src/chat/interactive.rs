//! The interactive `katari chat` (`host.md` §7.1.3): without `-m`, chat is the REPL of §12 in
//! chat mode — the prompt `AGENT> `, `AGENT@PROJECT> ` or `@PROJECT> `, one turn per line, the
//! chat-mode commands, Ctrl-C cancelling a turn, Ctrl-D, `/quit` or `/exit` leaving, and `.back`
//! to the language REPL.

use super::command::Chat;

/// Runs the REPL in chat mode until the person leaves; returns the exit status.
pub fn run(chat: Chat, runtime: &tokio::runtime::Runtime) -> u8 {
    crate::repl::run_chat(chat, runtime)
}
