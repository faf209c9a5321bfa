//! The REPL (`host.md` §12): one loop serving the language and chat. It starts in language mode
//! (`katari`, `katari repl`) or in chat mode (`katari chat` without `-m`); `.chat` and `.back`
//! switch between them with the language environment kept. Inputs come from a terminal through
//! a line editor, or plainly from piped stdin.

mod chat;
mod complete;
mod editor;
mod list;
mod modes;
mod prompt;
mod servers;
mod session;
pub mod words;

use std::io::{self, BufRead, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::watch;

use modes::Repl;
use session::Next;

/// The prompts of language mode (§12.1).
const PROMPT: &str = "kt> ";
const MORE: &str = "...> ";

/// Whether Ctrl-C's handler was installed (it can be installed once per process).
static HANDLER: AtomicBool = AtomicBool::new(false);

/// The cancel switch of a REPL command waiting on a server (`.prompt`, `.mcp enable`), flipped
/// by Ctrl-C.
static WAITING: Mutex<Option<watch::Sender<bool>>> = Mutex::new(None);

/// Runs the REPL in language mode; returns the exit status. `terminal` chooses the line editor
/// over plain mode.
pub fn run(terminal: bool, color: bool) -> u8 {
    install_interrupt(terminal);
    let mut repl = Repl::new(color, None, None);
    if terminal {
        editor::run(&mut repl);
        repl.leave();
        0
    } else {
        plain(&mut repl)
    }
}

/// Runs the REPL in chat mode with `chat` open (`katari chat` without `-m`, §7.1.3) on the
/// runtime `katari chat` made; returns the exit status.
pub fn run_chat(chat: crate::chat::command::Chat, runtime: &tokio::runtime::Runtime) -> u8 {
    install_interrupt(true);
    let color = chat.color();
    let mut repl = Repl::new(color, Some(runtime), Some(chat));
    editor::run(&mut repl);
    repl.leave();
    0
}

/// Plain mode (§12.1 rule 3): no prompt, inputs read and evaluated in turn until end of file;
/// status 1 when any input produced an error.
fn plain(repl: &mut Repl<'_>) -> u8 {
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
            repl.session.had_error = true;
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
            if !blank && repl.incomplete(&pending) {
                continue;
            }
        }
        let input = std::mem::take(&mut pending);
        if repl.handle(&input) == Next::Exit || end {
            break;
        }
    }
    let _ = io::stdout().flush();
    repl.leave();
    u8::from(repl.session.had_error || chat::FAILED.load(Ordering::Relaxed))
}

/// Runs `work` on `runtime` until it ends or the person presses Ctrl-C; `None` when cancelled.
#[allow(
    dead_code,
    reason = "used by .prompt and .mcp enable once the chat connects servers"
)]
fn interruptible<T>(
    runtime: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = T>,
) -> Option<T> {
    let (tx, mut rx) = watch::channel(false);
    *WAITING.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
    let result = runtime.block_on(async move {
        tokio::select! {
            biased;
            _ = rx.wait_for(|c| *c) => None,
            r = work => Some(r),
        }
    });
    *WAITING.lock().unwrap_or_else(|e| e.into_inner()) = None;
    result
}

/// Ctrl-C cancels a model turn, a running evaluation or a command waiting on a server, and the
/// REPL stays open (§12.8.3); with none of those, plain mode ends with 130 (the line editor reads
/// Ctrl-C as a key, so the terminal never signals while it reads).
fn install_interrupt(terminal: bool) {
    if HANDLER.swap(true, Ordering::SeqCst) {
        return;
    }
    let _ = ctrlc::set_handler(move || {
        if crate::chat::command::cancel_turn() || session::interrupt() {
            return;
        }
        let waiting = WAITING.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = waiting.as_ref() {
            let _ = tx.send(true);
            return;
        }
        drop(waiting);
        if !terminal {
            let _ = writeln!(io::stderr(), "error: interrupted");
            katari_runtime::mcp::client::shutdown();
            std::process::exit(130);
        }
    });
}
