//! Configuration problems as a person reads them best (`host.md` §4.1.3): the two lines the
//! specification prescribes — `error: FILE:LINE: KEY: PROBLEM` and the indented `fix:` line —
//! stay first and unchanged, so scripts that read stderr keep working, and a snippet of the file
//! follows, drawn by miette's graphical handler as cargo draws manifest errors: the line with
//! one line of context either side and the offending key or value underlined.
//!
//! Where the underline goes: a problem that carries its own span (the TOML parser's errors, such
//! as a duplicate table) uses it. Otherwise the problem's line is searched for the last segment
//! of its key: an unknown key or table, or an invalid name, underlines the key; any other
//! problem underlines the key's value (a wrong type, a value out of range, a reference to
//! nothing); a problem at a table header (`[llm.local]`, a missing key) underlines the header. A
//! file that cannot be read again, or a line it no longer has, prints the two lines alone.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource};

use super::Problem;

/// Files larger than this are not read again for a snippet (the problem's two lines still say
/// everything).
const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// Whether stderr takes colour (`host.md` §2.3), set once by `main` from `--color`, the terminal
/// and `NO_COLOR`.
static COLOR: AtomicBool = AtomicBool::new(false);

/// Records whether configuration problems printed on stderr are coloured.
pub fn set_color(color: bool) {
    COLOR.store(color, Ordering::Relaxed);
}

/// Whether configuration problems printed on stderr are coloured.
pub fn color() -> bool {
    COLOR.load(Ordering::Relaxed)
}

/// Every problem as printed on stderr: warnings first, each `warning: `, then the errors, each
/// `error: `, with their snippets.
pub fn render_all(warnings: &[Problem], problems: &[Problem], color: bool) -> String {
    let mut sources = Sources::default();
    let mut out = String::new();
    for w in warnings {
        out.push_str(&render_one(w, "warning", color, &mut sources));
    }
    for p in problems {
        out.push_str(&render_one(p, "error", color, &mut sources));
    }
    out
}

/// One problem: its two lines, then its snippet when the file still has its line.
fn render_one(p: &Problem, severity: &str, color: bool, sources: &mut Sources) -> String {
    let mut out = String::new();
    if color {
        let code = if severity == "error" { "1;31" } else { "1;33" };
        let _ = write!(out, "\u{1b}[{code}m{severity}\u{1b}[0m: ");
    } else {
        let _ = write!(out, "{severity}: ");
    }
    // Keys and values quoted from the file must not drive the terminal (`host.md` §2.4).
    out.push_str(&katari_runtime::mcp::text::sanitize(&p.render()));
    out.push('\n');
    if let Some(snippet) = snippet(p, severity, color, sources) {
        out.push_str(&snippet);
    }
    out
}

/// The files problems point into, each read once.
#[derive(Default)]
struct Sources {
    files: HashMap<PathBuf, Option<String>>,
}

impl Sources {
    fn get(&mut self, path: &Path) -> Option<&str> {
        self.files
            .entry(path.to_path_buf())
            .or_insert_with(|| {
                let size = std::fs::metadata(path).ok()?.len();
                (size <= MAX_SOURCE_BYTES)
                    .then(|| std::fs::read_to_string(path).ok())
                    .flatten()
                    .map(|text| without_controls(&text))
            })
            .as_deref()
    }
}

/// `text` with every control character that could drive a terminal (all but line feed, tab and
/// the carriage return of a `\r\n`) replaced by as many `?` as it has bytes, so that the byte
/// offsets of spans still point at the same text.
fn without_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let line_end = c == '\r' && chars.peek() == Some(&'\n');
        if c.is_control() && c != '\n' && c != '\t' && !line_end {
            out.extend(std::iter::repeat_n('?', c.len_utf8()));
        } else {
            out.push(c);
        }
    }
    out
}

/// The problem as a miette diagnostic: the file and one underlined span, nothing else (its
/// message and fix are the two lines printed before it).
#[derive(Debug)]
struct Snippet {
    source: NamedSource<String>,
    span: Range<usize>,
    warning: bool,
}

impl std::fmt::Display for Snippet {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}

impl std::error::Error for Snippet {}

impl Diagnostic for Snippet {
    fn severity(&self) -> Option<miette::Severity> {
        Some(if self.warning {
            miette::Severity::Warning
        } else {
            miette::Severity::Error
        })
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(LabeledSpan::underline(
            self.span.clone(),
        ))))
    }
}

/// The snippet of a problem with a place, drawn by miette.
fn snippet(p: &Problem, severity: &str, color: bool, sources: &mut Sources) -> Option<String> {
    let (file, line) = p.at.as_ref()?;
    let text = sources.get(file)?;
    let span = match &p.span {
        Some(span) if span.end <= text.len() && text.is_char_boundary(span.start) => span.clone(),
        _ => locate(p, text, *line)?,
    };
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_context_lines(1)
        .with_wrap_lines(false)
        .with_links(false);
    let diagnostic = Snippet {
        source: NamedSource::new(file.display().to_string(), text.to_string()),
        span,
        warning: severity == "warning",
    };
    let mut drawn = String::new();
    handler.render_report(&mut drawn, &diagnostic).ok()?;
    // The handler's header (its empty message after the severity mark) is dropped: the
    // problem's own first line said it. The snippet starts at its frame.
    let start = drawn.find("╭─[")?;
    let start = drawn[..start].rfind('\n').map_or(0, |i| i + 1);
    // Lines end without trailing blanks (an empty context line is drawn as `10 │ `).
    let snippet: String = drawn[start..]
        .trim_end()
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    Some(snippet)
}

/// The byte span to underline on line `line` (1-based) of `text`, as the module's header says.
fn locate(p: &Problem, text: &str, line: usize) -> Option<Range<usize>> {
    let start = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)?)
        .map(str::len)
        .sum::<usize>();
    if start >= text.len() {
        return None;
    }
    let rest = &text[start..];
    let end = start + rest.find('\n').unwrap_or(rest.len());
    let line_text = text[start..end].trim_end_matches('\r');
    let trimmed = trimmed(line_text);
    if trimmed.is_empty() {
        return None;
    }
    let whole = start + trimmed.start..start + trimmed.end;
    if line_text[trimmed.clone()].starts_with('[') {
        return Some(whole);
    }
    let Some(key) = key_candidates(p)
        .iter()
        .find_map(|candidate| find_key(line_text, candidate))
    else {
        return Some(whole);
    };
    let wants_key = p.message.starts_with("unknown key")
        || p.message.starts_with("unknown table")
        || p.message.contains("is not a valid name");
    let value = value_after(line_text, key.end);
    match value {
        Some(value) if !wants_key => Some(start + value.start..start + value.end),
        _ => Some(start + key.start..start + key.end),
    }
}

/// The span of `line` without its leading and trailing whitespace.
fn trimmed(line: &str) -> Range<usize> {
    let begin = line.len() - line.trim_start().len();
    let end = line.trim_end().len();
    begin..end.max(begin)
}

/// The candidates for the key on the line, longest first: every suffix of the problem's
/// dotted key (`mcpServers.git.hub` → `git.hub`, `hub`: a server name may hold dots), each
/// without an index (`prompts[2]` → `prompts`); messages of §4.2 start with the key themselves
/// (`llm.NAME.api_key must be …`).
fn key_candidates(p: &Problem) -> Vec<String> {
    let key = if p.key.is_empty() {
        match p
            .message
            .split_whitespace()
            .next()
            .filter(|w| w.contains('.'))
        {
            Some(word) => word,
            None => return Vec::new(),
        }
    } else {
        p.key.as_str()
    };
    let segments: Vec<&str> = key.split('.').collect();
    (1..segments.len().max(1))
        .chain(std::iter::once(0).filter(|_| segments.len() == 1))
        .map(|from| {
            let suffix = segments[from..].join(".");
            match suffix.rfind('[') {
                Some(bracket) if suffix.ends_with(']') => suffix[..bracket].to_string(),
                _ => suffix,
            }
        })
        .filter(|c| !c.is_empty())
        .collect()
}

/// Where `key` stands on the line as a whole key (bare or quoted), quotes included.
fn find_key(line: &str, key: &str) -> Option<Range<usize>> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut from = 0;
    while let Some(found) = line[from..].find(key) {
        let at = from + found;
        let end = at + key.len();
        let before = line[..at].chars().next_back();
        let after = line[end..].chars().next();
        if !before.is_some_and(word) && !after.is_some_and(word) {
            let quoted = before == Some('"') && after == Some('"');
            return Some(if quoted { at - 1..end + 1 } else { at..end });
        }
        from = end;
    }
    None
}

/// The value after a key ending at `key_end`: what follows `=` (TOML) or `:` (JSON), as far as
/// the line holds it: a string to its closing quote, an array or table to its closing bracket,
/// anything else to the next `,`, `}`, `]` or `#`.
fn value_after(line: &str, key_end: usize) -> Option<Range<usize>> {
    let rest = &line[key_end..];
    let after_sign = rest
        .trim_start()
        .strip_prefix('=')
        .or_else(|| rest.trim_start().strip_prefix(':'))?;
    let begin = line.len() - after_sign.trim_start().len();
    let value = &line[begin..];
    let len = value_len(value);
    let text = value[..len].trim_end();
    (!text.is_empty()).then(|| begin..begin + text.len())
}

/// How many bytes of `value` its first value takes (the rest of the line when it does not end
/// on it).
fn value_len(value: &str) -> usize {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in value.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
                if depth == 0 {
                    return i + 1;
                }
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' | '{' => depth += 1,
            ']' | '}' if depth == 0 => return i,
            ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            ',' | '#' if depth == 0 => return i,
            _ => {}
        }
    }
    value.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_of_the_file_become_question_marks_of_the_same_length() {
        let text = "a = 1 # \u{1b}]0;t\u{7}\u{9b}\r\nb = 2\r\n";
        let clean = without_controls(text);
        assert_eq!(clean, "a = 1 # ?]0;t???\r\nb = 2\r\n");
        assert_eq!(clean.len(), text.len());
    }

    fn problem(line: usize, key: &str, message: &str) -> Problem {
        Problem {
            at: Some((PathBuf::from("config.toml"), line)),
            key: key.into(),
            message: message.into(),
            fix: None,
            warning: false,
            span: None,
        }
    }

    fn underlined(text: &str, p: &Problem) -> Option<String> {
        let line = p.at.as_ref().map(|a| a.1).unwrap_or(0);
        locate(p, text, line).map(|r| text[r].to_string())
    }

    #[test]
    fn keys_values_and_headers_are_underlined_where_the_problem_is() {
        let text =
            "[llm.a]\nkind = \"opnai\" # typo\ncontxt = 3\n\n[agent.bob]\nprompts = [\"x\", 3]\n";
        let kind = problem(2, "llm.a.kind", "must be \"openai\" or \"anthropic\"");
        assert_eq!(underlined(text, &kind).as_deref(), Some("\"opnai\""));
        let unknown = problem(3, "llm.a.contxt", "unknown key 'contxt'");
        assert_eq!(underlined(text, &unknown).as_deref(), Some("contxt"));
        let missing = problem(1, "llm.a", "missing required key 'model'");
        assert_eq!(underlined(text, &missing).as_deref(), Some("[llm.a]"));
        let item = problem(6, "agent.bob.prompts[1]", "must be a string");
        assert_eq!(underlined(text, &item).as_deref(), Some("[\"x\", 3]"));
        let own = problem(2, "", "llm.a.kind = \"x\" is not supported");
        assert_eq!(underlined(text, &own).as_deref(), Some("\"opnai\""));
        assert_eq!(underlined(text, &problem(4, "x", "blank")), None);
        assert_eq!(underlined(text, &problem(40, "x", "past the end")), None);
        assert_eq!(underlined(text, &problem(0, "x", "no line")), None);
    }

    #[test]
    fn json_keys_are_found_with_their_quotes() {
        let text = "{\"mcpServers\": {\"git hub\": {}, \"git.hub\": {\"url\": \"http://h\", \"extra\": 1}}}";
        let p = problem(1, "mcpServers.git.hub.extra", "unknown key 'extra'");
        assert_eq!(underlined(text, &p).as_deref(), Some("\"extra\""));
        let p = problem(1, "mcpServers.git.hub", "a clash");
        assert_eq!(
            underlined(text, &p).as_deref(),
            Some("{\"url\": \"http://h\", \"extra\": 1}")
        );
    }
}
