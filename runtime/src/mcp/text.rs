//! Sanitising text that comes from MCP servers (`host.md` §2.4) before it can reach a terminal.
//!
//! The client sanitises the messages of the errors it throws (`server_error`, `auth_error`):
//! they are descriptions for people, printed by handlers or by the host's `error: throw: …`.
//! Tool results stay raw: they are data, and the program decides what to do with them.

/// Removes escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL` or `ESC ] … ESC \`, any
/// other `ESC` plus one character), C1 controls and C0 controls other than newline and tab.
pub fn sanitize(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    // Parameters and intermediates, then one final byte in 0x40..=0x7e.
                    for c in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Every kind of control text `host.md` §2.4 names, for the tests of each path that draws server
/// or model text on a terminal: CSI, OSC ended by BEL and by ST, another `ESC` pair, a C1
/// control, and C0 controls (carriage return, NUL, backspace). [`sanitize`] leaves
/// [`HOSTILE_SHOWN`].
#[doc(hidden)]
pub const HOSTILE: &str = "a\u{1b}[31mb\u{1b}[0m \u{1b}]0;title\u{7}c\u{1b}]8;;http://x\u{1b}\\d\u{1b}ce\u{9b}31mf\r\u{0}\u{8}g";

/// What is left of [`HOSTILE`] on a terminal.
#[doc(hidden)]
pub const HOSTILE_SHOWN: &str = "ab cde31mfg";

/// [`sanitize`]d text on one line, for table cells and one-line messages: newlines and tabs
/// become spaces.
pub fn sanitize_line(text: &str) -> String {
    sanitize(text)
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{HOSTILE, HOSTILE_SHOWN, sanitize, sanitize_line};

    #[test]
    fn escape_sequences_and_controls_are_removed() {
        assert_eq!(sanitize("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(sanitize("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(sanitize("a\u{1b}]0;title\u{7}b"), "ab");
        assert_eq!(sanitize("a\u{1b}]8;;http://x\u{1b}\\link"), "alink");
        assert_eq!(sanitize("a\u{1b}cb\r\u{0}\u{9b}c"), "abc");
        assert_eq!(sanitize_line("a\nb\tc\u{1b}[31m"), "a b c");
        assert_eq!(sanitize(HOSTILE), HOSTILE_SHOWN);
        assert_eq!(
            sanitize_line(&format!("{HOSTILE}\n{HOSTILE}")),
            format!("{HOSTILE_SHOWN} {HOSTILE_SHOWN}")
        );
    }
}
