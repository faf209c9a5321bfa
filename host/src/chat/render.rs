//! Drawing a turn's events on the terminal (`host.md` §7.8, §2.2–§2.4): reply text on stdout as it
//! streams (sanitised only when stdout is a terminal), tool activity and notices on stderr (dim
//! when colour is on, always sanitised), and the spinner until the first token.

use std::io::{IsTerminal, Write};

use katari_chat::engine::Event;
use katari_chat::tools::ErrorKind;
use katari_runtime::mcp::text::sanitize;

use crate::spinner::Spinner;

/// Longest shown arguments or error message of a tool line, in characters (§7.8.2).
const SHOWN: usize = 200;

/// Renders events of one chat.
pub struct Renderer {
    /// Write reply text as it streams (`false` with `--no-stream`: the reply is printed whole).
    pub stream_text: bool,
    /// Dim tool lines and notices.
    pub color: bool,
    /// Draw the spinner while waiting for the model (never in the REPL's plain mode, §12.1.3).
    pub spinner: bool,
    stdout_terminal: bool,
    /// Reply text on a terminal: an escape sequence split across two deltas is held back until
    /// it is whole, so sanitising never sees half of one.
    held: Held,
    spinner_line: Option<Spinner>,
    /// The last text written to stdout did not end a line.
    open_line: bool,
}

impl Renderer {
    pub fn new(stream_text: bool, color: bool) -> Renderer {
        Renderer {
            stream_text,
            color,
            spinner: true,
            stdout_terminal: std::io::stdout().is_terminal(),
            held: Held::default(),
            spinner_line: None,
            open_line: false,
        }
    }

    /// Draws one event.
    pub fn event(&mut self, event: Event) {
        match event {
            Event::Request { .. } => {
                self.stop_spinner();
                if self.spinner {
                    self.spinner_line = Some(Spinner::start("waiting for the model"));
                }
            }
            Event::Text(text) => {
                self.stop_spinner();
                if self.stream_text && !text.is_empty() {
                    let shown = if self.stdout_terminal {
                        sanitize(&self.held.push(&text))
                    } else {
                        text
                    };
                    if shown.is_empty() {
                        return;
                    }
                    let mut out = std::io::stdout().lock();
                    let _ = out.write_all(shown.as_bytes());
                    let _ = out.flush();
                    self.open_line = !shown.ends_with('\n');
                }
            }
            Event::ReplyDone => {
                self.stop_spinner();
                // An escape sequence the reply never finished is dropped.
                self.held = Held::default();
                self.end_line();
            }
            Event::ToolCall {
                name, arguments, ..
            } => {
                self.stop_spinner();
                self.end_line();
                self.line(&format!(
                    "[tool_call: {} {}]",
                    sanitize(&name),
                    cut(&sanitize(&arguments), SHOWN)
                ));
            }
            Event::ToolResult { name, result, .. } => {
                let text = match &result {
                    Ok(size) => {
                        format!("[tool_result: {} ok {}]", sanitize(&name), size_text(*size))
                    }
                    Err(e) => format!(
                        "[tool_result: {} error: {}]",
                        sanitize(&name),
                        cut(&sanitize(&e.message), SHOWN)
                    ),
                };
                self.line(&text);
                // A script's request that needs a person is said in full (§11.2.4).
                if let Err(e) = &result
                    && e.kind == ErrorKind::NeedsPerson
                {
                    let mut err = std::io::stderr().lock();
                    let _ = writeln!(err, "{}", sanitize(&e.message));
                }
            }
            Event::Notice(text) => {
                self.stop_spinner();
                self.end_line();
                self.line(&text);
            }
        }
    }

    /// Stops the spinner and ends an open line of reply text: before anything else is written
    /// on stderr, and when the turn is over.
    pub fn finish(&mut self) {
        self.stop_spinner();
        self.end_line();
    }

    fn stop_spinner(&mut self) {
        if let Some(s) = self.spinner_line.take() {
            s.stop();
        }
    }

    fn end_line(&mut self) {
        if self.open_line {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\n");
            let _ = out.flush();
            self.open_line = false;
        }
    }

    /// One line on stderr, dim when colour is on.
    pub fn line(&mut self, text: &str) {
        self.stop_spinner();
        let mut err = std::io::stderr().lock();
        let _ = if self.color {
            writeln!(err, "\u{1b}[2m{text}\u{1b}[0m")
        } else {
            writeln!(err, "{text}")
        };
    }
}

/// The unfinished escape sequence at the end of the text streamed so far.
#[derive(Default)]
struct Held(String);

/// The longest escape sequence held back; a longer one is not a terminal's and is dropped.
const MAX_HELD: usize = 4096;

impl Held {
    /// `text` after what was held, minus an escape sequence that is still open at its end
    /// (kept for the next delta).
    fn push(&mut self, text: &str) -> String {
        let mut all = std::mem::take(&mut self.0);
        all.push_str(text);
        if let Some(start) = open_escape(&all) {
            if all.len() - start <= MAX_HELD {
                self.0 = all[start..].to_string();
            }
            all.truncate(start);
        }
        all
    }
}

/// Where an escape sequence starts that `text` does not finish (§2.4.1's forms: CSI ends with a
/// byte in `@`..=`~`, OSC with BEL or `ESC \`, any other `ESC` with one more character).
fn open_escape(text: &str) -> Option<usize> {
    let start = text.rfind('\u{1b}')?;
    let mut rest = text[start + 1..].chars();
    let open = match rest.next() {
        None => true,
        Some('[') => !rest.any(|c| ('\u{40}'..='\u{7e}').contains(&c)),
        Some(']') => !text[start + 2..].contains('\u{7}'),
        Some(_) => false,
    };
    open.then_some(start)
}

/// `text` cut to `max` characters with `…`.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// A size in B, KiB or MiB (§7.8.2).
pub fn size_text(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / (KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_cuts_read_as_documented() {
        assert_eq!(size_text(12), "12 B");
        assert_eq!(size_text(2048), "2.0 KiB");
        assert_eq!(size_text(3 * 1024 * 1024), "3.0 MiB");
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(cut("ab", 3), "ab");
        assert_eq!(cut("ééé", 2), "éé…");
    }

    #[test]
    fn escape_sequences_split_across_deltas_are_held_until_whole() {
        let mut held = Held::default();
        let text = "a \u{1b}]0;title\u{7}b \u{1b}[31mred\u{1b}[0m end";
        let mut shown = String::new();
        for piece in text.split_inclusive([';', '[', '3']) {
            shown.push_str(&sanitize(&held.push(piece)));
        }
        assert_eq!(shown, "a b red end");
        let mut held = Held::default();
        assert_eq!(held.push("x\u{1b}"), "x");
        assert_eq!(held.push("[1"), "");
        assert_eq!(sanitize(&held.push("mz")), "z");
    }
}
