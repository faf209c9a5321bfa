//! The person at the terminal answering a script tool's request (`host.md` §11.2.3): the
//! question on stderr, answers read on a line editor of their own (never stored in history),
//! asked again while they do not fit, an empty line declining, Ctrl-C cancelling the turn.

use std::io::Write;

use rustyline::error::ReadlineError;
use rustyline::history::FileHistory;
use rustyline::{Config, Editor};
use serde_json::Value;

use super::scripts::{Cancelled, Person, Question};

/// Asks on the terminal.
pub struct TerminalPerson;

impl Person for TerminalPerson {
    fn ask(&self, question: &Question<'_>) -> Result<Option<Value>, Cancelled> {
        let shown = katari_runtime::mcp::text::sanitize(&question.render());
        let _ = std::io::stderr().write_all(shown.as_bytes());
        let config = Config::builder().auto_add_history(false).build();
        let Ok(mut editor) = Editor::<(), FileHistory>::with_config(config) else {
            return Err(Cancelled);
        };
        loop {
            match editor.readline("answer> ") {
                Ok(line) if line.is_empty() => return Ok(None),
                Ok(line) => match question.answer(&line) {
                    Ok(value) => return Ok(Some(value)),
                    Err(why) => {
                        let _ = writeln!(
                            std::io::stderr(),
                            "{}",
                            katari_runtime::mcp::text::sanitize(&why)
                        );
                    }
                },
                Err(ReadlineError::Interrupted) => {
                    super::command::cancel_turn();
                    return Err(Cancelled);
                }
                Err(_) => return Ok(None),
            }
        }
    }
}
