//! `katari repl` (`host.md` §12): reads inputs from a terminal through a line editor, or
//! plainly from piped stdin, and hands each complete input to the language-mode [`Session`].

mod editor;
mod session;

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use session::{Next, Session};

/// The prompts of language mode (§12.1).
const PROMPT: &str = "kt> ";
const MORE: &str = "...> ";

/// Whether Ctrl-C's handler was installed (it can be installed once per process).
static HANDLER: AtomicBool = AtomicBool::new(false);

/// Runs the REPL; returns the exit status. `terminal` chooses the line editor over plain mode.
pub fn run(terminal: bool, color: bool) -> u8 {
    install_interrupt(terminal);
    let mut session = Session::new(color);
    if terminal {
        editor::run(&mut session);
        0
    } else {
        plain(&mut session)
    }
}

/// Plain mode (§12.1 rule 3): no prompt, inputs read and evaluated in turn until end of file;
/// status 1 when any input produced an error.
fn plain(session: &mut Session) -> u8 {
    let stdin = io::stdin();
    let mut pending = String::new();
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let read = stdin.lock().read_until(b'\n', &mut bytes);
        let end = matches!(read, Ok(0) | Err(_));
        let Ok(line) = std::str::from_utf8(&bytes) else {
            // Not text: reported and skipped (with the unfinished input it belonged to), and
            // the inputs after it are still read.
            let _ = writeln!(
                io::stderr(),
                "error: an input line is not valid UTF-8; it was skipped"
            );
            session.had_error = true;
            pending.clear();
            continue;
        };
        let text = line.trim_end_matches(['\n', '\r']);
        if !end {
            let blank = text.trim().is_empty();
            if !pending.is_empty() && !blank {
                pending.push('\n');
            }
            pending.push_str(text);
            // A blank line submits an unfinished input, so the parser's error is shown.
            if !blank && Session::incomplete(&pending) {
                continue;
            }
        }
        let input = std::mem::take(&mut pending);
        if session.handle(&input) == Next::Exit || end {
            break;
        }
    }
    let _ = io::stdout().flush();
    u8::from(session.had_error)
}

/// Ctrl-C cancels a running evaluation; with none running, plain mode ends with 130 (the line
/// editor reads Ctrl-C as a key, so the terminal never signals while it reads).
fn install_interrupt(terminal: bool) {
    if HANDLER.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = ctrlc::set_handler(move || {
        if !session::interrupt() && !terminal {
            let _ = writeln!(io::stderr(), "error: interrupted");
            katari_runtime::mcp::client::shutdown();
            std::process::exit(130);
        }
    });
}
