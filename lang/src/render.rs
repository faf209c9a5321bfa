//! The one place diagnostics become text: ariadne snippets for people, JSON objects for tools.
//!
//! [`render`] draws `error[K1001]: message`, then (when the diagnostic has a location) the source
//! snippet with the primary and secondary labels, then `= note:` and `= help:` lines. The header
//! and the trailing lines are written here so that they read the same with or without a snippet;
//! ariadne draws only the snippet. [`to_json`] gives the same content as one JSON object for
//! `katari check --format json`.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use ariadne::{
    Cache, CharSet, Color, Config, Fmt, IndexType, Label as AriadneLabel, Report, ReportKind,
    Source,
};
use serde_json::{Value, json};

use crate::diag::{Diagnostic, Label, Severity};
use crate::source::{FileId, SourceFile, SourceMap};

/// Renders one diagnostic as text ending in a newline, with ANSI colours only when `color` is true.
///
/// Trailing spaces are removed from every line, so golden files survive editors that strip them.
pub fn render(diag: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    let mut out = header(diag, color);
    let snippet = match &diag.primary {
        Some(primary) if file(sources, primary.file).is_some() => {
            snippet(diag, primary, sources, color)
        }
        _ => String::new(),
    };
    // ariadne closes its box with a line such as `───╯`; the notes hang from the box's edge.
    let indent = snippet
        .lines()
        .last()
        .map_or(2, |last| last.chars().count().saturating_sub(1));
    out.push_str(&snippet);
    for note in &diag.notes {
        push_trailer(&mut out, indent, "note", note, color);
    }
    if let Some(help) = &diag.help {
        push_trailer(&mut out, indent, "help", help, color);
    }
    out
}

/// Describes one diagnostic as a JSON object (the line format of `katari check --format json`).
///
/// Fields: `code`, `severity`, `message`; `file`, `start` and `end` of the primary label (all
/// `null` when the diagnostic has no location); `labels`, every label with its `file`, `start`,
/// `end` and `message`, the primary one first; `notes`, an array of strings; `help`, a string or
/// `null`. Positions are `{"line", "column"}`, both 1-based, columns counted in characters; `end`
/// is the position just after the last character of the span.
pub fn to_json(diag: &Diagnostic, sources: &SourceMap) -> Value {
    let primary = diag
        .primary
        .as_ref()
        .and_then(|label| label_json(label, sources));
    let (file, start, end) = match &primary {
        Some(label) => (
            label["file"].clone(),
            label["start"].clone(),
            label["end"].clone(),
        ),
        None => (Value::Null, Value::Null, Value::Null),
    };
    let labels: Vec<Value> = primary
        .into_iter()
        .chain(
            diag.secondary
                .iter()
                .filter_map(|label| label_json(label, sources)),
        )
        .collect();
    json!({
        "code": diag.code.as_str(),
        "severity": diag.severity.as_str(),
        "message": diag.message,
        "file": file,
        "start": start,
        "end": end,
        "labels": labels,
        "notes": diag.notes,
        "help": diag.help,
    })
}

/// Looks a file up without panicking on an id that belongs to another map.
fn file(sources: &SourceMap, id: FileId) -> Option<&SourceFile> {
    sources
        .files()
        .find_map(|(fid, file)| (fid == id).then_some(file))
}

fn label_json(label: &Label, sources: &SourceMap) -> Option<Value> {
    let file = file(sources, label.file)?;
    let position = |offset: u32| {
        let (line, column) = file.line_col(offset);
        json!({ "line": line + 1, "column": column + 1 })
    };
    Some(json!({
        "file": file.path,
        "start": position(label.span.start),
        "end": position(label.span.end),
        "message": label.message,
    }))
}

fn severity_color(severity: Severity) -> Color {
    match severity {
        Severity::Error => Color::Red,
        Severity::Warning => Color::Yellow,
    }
}

/// `error[K1001]: message`, the first line of every rendering.
fn header(diag: &Diagnostic, color: bool) -> String {
    let kind = format!("{}[{}]", diag.severity.as_str(), diag.code.as_str());
    if color {
        format!(
            "{}: {}\n",
            kind.fg(severity_color(diag.severity)),
            visible(&diag.message)
        )
    } else {
        format!("{kind}: {}\n", visible(&diag.message))
    }
}

/// Appends `= note: text`, indenting continuation lines under the text.
fn push_trailer(out: &mut String, indent: usize, kind: &str, text: &str, color: bool) {
    let prefix = format!("{:indent$}= {kind}: ", "");
    let hanging = " ".repeat(prefix.chars().count());
    let text = visible(text);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if i > 0 {
            out.push_str(&hanging);
        } else if color {
            out.push_str(&format!("{:indent$}= {}: ", "", kind.fg(Color::Cyan)));
        } else {
            out.push_str(&prefix);
        }
        out.push_str(line);
        out.push('\n');
    }
}

/// The source snippet drawn by ariadne, without ariadne's own header line.
fn snippet(diag: &Diagnostic, primary: &Label, sources: &SourceMap, color: bool) -> String {
    let config = Config::default()
        .with_color(color)
        .with_char_set(CharSet::Unicode)
        .with_index_type(IndexType::Byte);
    let kind = match diag.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    let mut cache = MapCache {
        sources,
        loaded: HashMap::new(),
    };
    let mut report =
        Report::build(kind, (primary.file, cache.drawable(primary))).with_config(config);
    for (order, (label, is_primary)) in ordered_labels(diag, primary, sources)
        .into_iter()
        .enumerate()
    {
        let mut drawn = AriadneLabel::new((label.file, cache.drawable(label)))
            .with_message(visible(&label.message))
            .with_order(order as i32);
        if is_primary {
            drawn = drawn
                .with_color(severity_color(diag.severity))
                .with_priority(1);
        } else {
            drawn = drawn.with_color(Color::Blue);
        }
        report.add_label(drawn);
    }
    let mut bytes = Vec::new();
    if report.finish().write(cache, &mut bytes).is_err() {
        // Writing into a `Vec` cannot fail; should ariadne report a failure anyway, the header
        // alone still names the problem.
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut out = String::with_capacity(text.len());
    for line in text.lines().skip(1) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The byte range of a label in its file's original text. A span at the very end of a file that
/// ends with a line break would sit on a line that has no text; it is drawn at the end of the
/// last line.
fn original_range(label: &Label, sources: &SourceMap) -> std::ops::Range<usize> {
    let range = label.span.range();
    let Some(file) = file(sources, label.file) else {
        return range;
    };
    let text = &*file.text;
    if range.start < text.len() {
        return range;
    }
    match text.strip_suffix('\n') {
        Some(rest) => {
            let end = rest.strip_suffix('\r').unwrap_or(rest).len();
            end..end
        }
        None => range,
    }
}

/// Whether `c` must not reach a terminal as it is: C0 controls other than tab and line feed
/// (carriage return included: ariadne would break the line there, and a terminal would move the
/// cursor), DEL and C1 controls. Escape sequences all start with one of them.
fn is_hidden_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// What a control character is shown as: its Unicode control picture (`␛` for escape), or the
/// replacement character for C1 controls, which have none. Either is one column wide.
fn picture(c: char) -> char {
    match c {
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
        '\u{7f}' => '\u{2421}',
        _ => '\u{fffd}',
    }
}

/// `text` with every control character that could drive a terminal shown as a picture
/// ([`picture`]): file text and messages that quote it are drawn, never obeyed. A carriage
/// return that ends a line (`\r\n`) is a line end, not a character, and stays.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_hidden_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            out.push(c);
        } else if is_hidden_control(c) {
            out.push(picture(c));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A file's text as drawn ([`visible`]), with what maps a byte offset of the original text onto
/// it: each replaced character's original offset and the bytes it added, in order.
struct Drawn {
    source: Source<Arc<str>>,
    /// `(original offset, bytes added by this and every earlier replacement)`.
    shifts: Vec<(usize, usize)>,
}

impl Drawn {
    fn new(text: &Arc<str>) -> Drawn {
        let shown = visible(text);
        let mut shifts = Vec::new();
        if let std::borrow::Cow::Owned(_) = &shown {
            let mut added = 0;
            let mut chars = text.char_indices().peekable();
            while let Some((at, c)) = chars.next() {
                let line_end = c == '\r' && chars.peek().is_some_and(|(_, next)| *next == '\n');
                if is_hidden_control(c) && !line_end {
                    added += picture(c).len_utf8() - c.len_utf8();
                    shifts.push((at, added));
                }
            }
        }
        let text: Arc<str> = match shown {
            std::borrow::Cow::Borrowed(_) => text.clone(),
            std::borrow::Cow::Owned(owned) => owned.into(),
        };
        Drawn {
            source: Source::from(text),
            shifts,
        }
    }

    /// The offset in the drawn text of `offset` in the original.
    fn map(&self, offset: usize) -> usize {
        let before = self.shifts.partition_point(|(at, _)| *at < offset);
        offset + before.checked_sub(1).map_or(0, |i| self.shifts[i].1)
    }
}

/// The labels to draw: those of the primary's file first, each file's labels in source order,
/// so that ariadne draws one section per file. `true` marks the primary label.
fn ordered_labels<'d>(
    diag: &'d Diagnostic,
    primary: &'d Label,
    sources: &SourceMap,
) -> Vec<(&'d Label, bool)> {
    let mut files = vec![primary.file];
    for label in &diag.secondary {
        if !files.contains(&label.file) {
            files.push(label.file);
        }
    }
    let mut labels: Vec<(&Label, bool)> = std::iter::once((primary, true))
        .chain(diag.secondary.iter().map(|label| (label, false)))
        .filter(|(label, _)| file(sources, label.file).is_some())
        .collect();
    labels.sort_by_key(|(label, is_primary)| {
        let rank = files
            .iter()
            .position(|f| *f == label.file)
            .unwrap_or(files.len());
        (rank, label.span.start, label.span.end, !*is_primary)
    });
    labels
}

/// Hands ariadne the files of a [`SourceMap`] as drawn ([`Drawn`]), building each one only when
/// it is drawn.
struct MapCache<'m> {
    sources: &'m SourceMap,
    loaded: HashMap<FileId, Drawn>,
}

impl MapCache<'_> {
    fn drawn(&mut self, id: FileId) -> Option<&Drawn> {
        let file = file(self.sources, id)?;
        Some(
            self.loaded
                .entry(id)
                .or_insert_with(|| Drawn::new(&file.text)),
        )
    }

    /// The byte range ariadne draws for a label, in its file's drawn text.
    fn drawable(&mut self, label: &Label) -> std::ops::Range<usize> {
        let range = original_range(label, self.sources);
        match self.drawn(label.file) {
            Some(drawn) => drawn.map(range.start)..drawn.map(range.end),
            None => range,
        }
    }
}

impl Cache<FileId> for MapCache<'_> {
    type Storage = Arc<str>;

    fn fetch(&mut self, id: &FileId) -> Result<&Source<Arc<str>>, impl fmt::Debug> {
        match self.drawn(*id) {
            Some(drawn) => Ok(&drawn.source),
            None => Err(format!("no source file with id {}", id.0)),
        }
    }

    fn display<'a>(&self, id: &'a FileId) -> Option<impl fmt::Display + 'a> {
        file(self.sources, *id).map(|file| visible(&file.path).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Code;
    use crate::source::Span;

    const APP: &str = "agent main() -> string {\n  let n = 3\n  f\"n=${n}\"\n}\n";

    fn app() -> (SourceMap, FileId) {
        let mut sources = SourceMap::new();
        let id = sources.add(SourceFile::new("app.kt", APP));
        (sources, id)
    }

    /// The byte span of the first occurrence of `needle` in `APP`.
    fn span_of(needle: &str) -> Span {
        let start = APP.find(needle).expect("needle is in the source");
        Span::new(start, start + needle.len())
    }

    fn interpolation_error(file: FileId) -> Diagnostic {
        let n = span_of("${n}");
        Diagnostic::new(
            Code::K3001,
            "expected `string`, found `integer`",
            file,
            Span::new(n.start as usize + 2, n.start as usize + 3),
        )
        .with_label("interpolated values must be strings")
    }

    #[test]
    fn control_characters_in_the_source_and_message_are_drawn_as_pictures() {
        // An escape sequence in a string literal, a C1 control and a bare carriage return
        // before the span: none reaches the output, and the caret still sits under `n`.
        const HOSTILE: &str =
            "agent main() -> string {\n  \"\u{1b}]0;pwned\u{7}\u{9b}2J\r\" ++ n\n}\n";
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new("app.kt", HOSTILE));
        let at = HOSTILE.find(" n\n").expect("n is in the source") + 1;
        let diag = Diagnostic::new(
            Code::K2001,
            "unknown name `\u{1b}[31mn`",
            file,
            Span::new(at, at + 1),
        )
        .with_label("not \u{1b}[2Jdefined")
        .with_help("declare it\u{7}");
        let text = render(&diag, &sources, false);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("\"␛]0;pwned␇\u{fffd}2J␍\" ++ n"), "{text}");
        assert!(text.contains("unknown name `␛[31mn`"), "{text}");
        assert!(text.contains("not ␛[2Jdefined"), "{text}");
        assert!(text.contains("declare it␇"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let source_line = lines
            .iter()
            .position(|l| l.contains("++ n"))
            .expect("source line shown");
        let column = lines[source_line].chars().count() - 1;
        assert_eq!(
            lines[source_line + 1].chars().nth(column),
            Some('┬'),
            "{text}"
        );
    }

    #[test]
    fn header_names_severity_code_and_message() {
        let (sources, file) = app();
        let text = render(&interpolation_error(file), &sources, false);
        assert_eq!(
            text.lines().next(),
            Some("error[K3001]: expected `string`, found `integer`")
        );
    }

    #[test]
    fn snippet_shows_location_source_line_and_label() {
        let (sources, file) = app();
        let text = render(&interpolation_error(file), &sources, false);
        assert!(text.contains("app.kt:3:9"), "{text}");
        assert!(text.contains(" 3 │   f\"n=${n}\""), "{text}");
        assert!(
            text.contains("interpolated values must be strings"),
            "{text}"
        );
        assert!(text.ends_with('\n'), "{text}");
    }

    #[test]
    fn caret_sits_under_the_primary_span() {
        let (sources, file) = app();
        let text = render(&interpolation_error(file), &sources, false);
        let lines: Vec<&str> = text.lines().collect();
        let source_line = lines
            .iter()
            .position(|l| l.contains("f\"n=${n}\""))
            .expect("source line shown");
        let marker = lines[source_line + 1];
        let column_of_n = lines[source_line]
            .find("${n}")
            .expect("interpolation shown")
            + 2;
        assert_eq!(marker.chars().nth(column_of_n - 2), Some('┬'), "{text}");
    }

    #[test]
    fn secondary_labels_are_drawn_with_their_messages() {
        let (sources, file) = app();
        let diag = interpolation_error(file).with_secondary(
            file,
            span_of("string"),
            "the result must be a string",
        );
        let text = render(&diag, &sources, false);
        assert!(text.contains(" 1 │ agent main() -> string {"), "{text}");
        assert!(text.contains("the result must be a string"), "{text}");
        // One section for the file, starting at the primary location.
        assert_eq!(text.matches("app.kt:").count(), 1, "{text}");
    }

    #[test]
    fn labels_in_another_file_get_their_own_section() {
        let (mut sources, file) = app();
        let util = sources.add(SourceFile::new(
            "util/text.kt",
            "agent shout(s: string) -> string { s }\n",
        ));
        let diag =
            interpolation_error(file).with_secondary(util, Span::new(6, 11), "declared here");
        let text = render(&diag, &sources, false);
        assert!(text.contains("util/text.kt:1:7"), "{text}");
        assert!(
            text.find("app.kt:3:9") < text.find("util/text.kt:1:7"),
            "{text}"
        );
    }

    #[test]
    fn notes_and_help_follow_the_snippet() {
        let (sources, file) = app();
        let diag = interpolation_error(file)
            .with_note("there is no implicit conversion")
            .with_help("use `string.to_string`");
        let text = render(&diag, &sources, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[lines.len() - 2].trim_start(),
            "= note: there is no implicit conversion"
        );
        assert_eq!(
            lines[lines.len() - 1].trim_start(),
            "= help: use `string.to_string`"
        );
    }

    #[test]
    fn unlocated_diagnostic_is_a_single_line() {
        let sources = SourceMap::new();
        let diag = Diagnostic::unlocated(Code::K5006, "cannot read `nope.kt`: no such file");
        assert_eq!(
            render(&diag, &sources, false),
            "error[K5006]: cannot read `nope.kt`: no such file\n"
        );
        let with_help = diag.with_help("check the path");
        assert_eq!(
            render(&with_help, &sources, false),
            "error[K5006]: cannot read `nope.kt`: no such file\n  = help: check the path\n"
        );
    }

    #[test]
    fn end_of_input_is_drawn_after_the_last_line() {
        let (sources, file) = app();
        let end = APP.len();
        let diag = Diagnostic::new(
            Code::K1001,
            "unexpected end of input",
            file,
            Span::new(end, end),
        )
        .with_label("input ends here");
        let text = render(&diag, &sources, false);
        assert!(text.contains("app.kt:4:2"), "{text}");
        assert!(text.contains(" 4 │ }"), "{text}");
        // The JSON keeps the true position: the start of the empty fifth line.
        assert_eq!(
            to_json(&diag, &sources)["start"],
            json!({"line": 5, "column": 1})
        );
    }

    #[test]
    fn warnings_say_warning() {
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new(
            "big.kt",
            "agent main() -> integer { 9007199254740993 }\n",
        ));
        let diag = Diagnostic::new(
            Code::K1002,
            "integer literal beyond 2^53-1",
            file,
            Span::new(26, 42),
        );
        assert!(
            render(&diag, &sources, false)
                .starts_with("warning[K1002]: integer literal beyond 2^53-1\n")
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let (sources, file) = app();
        let diag = interpolation_error(file).with_help("use `string.to_string`");
        assert!(!render(&diag, &sources, false).contains('\x1b'));
        assert!(render(&diag, &sources, true).contains('\x1b'));
    }

    #[test]
    fn no_line_ends_in_a_space() {
        let (sources, file) = app();
        let diag = interpolation_error(file).with_secondary(file, span_of("main"), "");
        let text = render(&diag, &sources, false);
        assert!(text.lines().all(|l| !l.ends_with(' ')), "{text:?}");
    }

    #[test]
    fn spans_after_multibyte_characters_land_on_the_right_column() {
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new("é.kt", "let é = \"x\\q\"\n"));
        let diag = Diagnostic::new(
            Code::K1001,
            "unknown escape sequence `\\q`",
            file,
            Span::new(11, 13),
        );
        assert!(render(&diag, &sources, false).contains("é.kt:1:11"));
        assert_eq!(
            to_json(&diag, &sources)["start"],
            json!({"line": 1, "column": 11})
        );
    }

    #[test]
    fn json_has_primary_location_labels_notes_and_help() {
        let (sources, file) = app();
        let diag = interpolation_error(file)
            .with_secondary(file, span_of("string"), "declared result")
            .with_note("no implicit conversion")
            .with_help("use `string.to_string`");
        assert_eq!(
            to_json(&diag, &sources),
            json!({
                "code": "K3001",
                "severity": "error",
                "message": "expected `string`, found `integer`",
                "file": "app.kt",
                "start": {"line": 3, "column": 9},
                "end": {"line": 3, "column": 10},
                "labels": [
                    {
                        "file": "app.kt",
                        "start": {"line": 3, "column": 9},
                        "end": {"line": 3, "column": 10},
                        "message": "interpolated values must be strings",
                    },
                    {
                        "file": "app.kt",
                        "start": {"line": 1, "column": 17},
                        "end": {"line": 1, "column": 23},
                        "message": "declared result",
                    },
                ],
                "notes": ["no implicit conversion"],
                "help": "use `string.to_string`",
            })
        );
    }

    #[test]
    fn json_of_unlocated_diagnostic_has_null_location() {
        let diag = Diagnostic::unlocated(Code::K5006, "cannot read `nope.kt`");
        let value = to_json(&diag, &SourceMap::new());
        assert_eq!(value["file"], Value::Null);
        assert_eq!(value["start"], Value::Null);
        assert_eq!(value["end"], Value::Null);
        assert_eq!(value["labels"], json!([]));
        assert_eq!(value["help"], Value::Null);
        assert_eq!(value["code"], "K5006");
    }
}
