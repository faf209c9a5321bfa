//! `mcp.json` and the workspace `.mcp.json` (`host.md` §4.3.1): the desktop-client layout
//! `{"mcpServers": {"NAME": {...}}}`. serde_json keeps no positions, so a small scanner finds
//! the line of every object key for the problems it reports.

use std::collections::HashMap;

use serde_json::Value;

use super::merge::Report;
use super::read::RefKind;
use super::server::{self, Field, Server};

/// Reads one `mcp.json` text, reporting into `r`.
pub(super) fn read(text: &str, r: &mut Report<'_>) -> Vec<Server> {
    let doc: Value = match serde_json::from_str(text) {
        Ok(doc) => doc,
        Err(e) => {
            r.error(
                e.line().max(1),
                "",
                format!("invalid JSON: {e}"),
                "correct the JSON syntax; the layout is {\"mcpServers\": {\"NAME\": {...}}}",
            );
            // The parser's line and column: the snippet marks the character it stopped at.
            if let Some(problem) = r.problems.last_mut() {
                problem.span = json_error_span(text, e.line(), e.column());
            }
            return Vec::new();
        }
    };
    let lines = key_lines(text);
    let line_of = |path: &[&str]| {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        lines.get(&path).copied().unwrap_or(1)
    };
    let Some(top) = doc.as_object() else {
        r.error(
            1,
            "",
            "the file must hold a JSON object",
            "write {\"mcpServers\": {\"NAME\": {...}}}",
        );
        return Vec::new();
    };
    for k in top.keys().filter(|k| *k != "mcpServers") {
        r.warn(
            line_of(&[k]),
            k.clone(),
            format!("unknown key '{k}' is ignored"),
            None,
        );
    }
    let Some(servers) = top.get("mcpServers") else {
        return Vec::new();
    };
    let Some(servers) = servers.as_object() else {
        r.error(
            line_of(&["mcpServers"]),
            "mcpServers",
            "must be an object of servers by name",
            "write \"mcpServers\": {\"NAME\": {\"command\": \"...\"}}",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, entry) in servers {
        let line = line_of(&["mcpServers", name]);
        let key = format!("mcpServers.{name}");
        if name.is_empty() {
            r.error(
                line,
                key,
                "a server needs a name",
                "give the entry a non-empty name",
            );
            continue;
        }
        r.declared.push((RefKind::Server, name.clone()));
        let Some(entry) = entry.as_object() else {
            r.error(
                line,
                key,
                "must be an object",
                "write {\"command\": \"...\"} or {\"url\": \"...\"}",
            );
            continue;
        };
        let fields: Vec<Field> = entry
            .iter()
            .map(|(k, v)| Field {
                key: k.clone(),
                value: v.clone(),
                line: line_of(&["mcpServers", name, k]),
            })
            .collect();
        if let Some(s) = server::parse(name, line, &fields, false, r) {
            out.push(s);
        }
    }
    out
}

/// The line of every object key in a JSON text, by its path of keys (array elements count as
/// `[i]`). The text is valid JSON when this is called.
fn key_lines(text: &str) -> HashMap<Vec<String>, usize> {
    /// An open container: the path element of its current member.
    enum Frame {
        Object(Option<String>),
        Array(usize),
    }
    let mut out = HashMap::new();
    let mut stack: Vec<Frame> = Vec::new();
    let bytes = text.as_bytes();
    let mut line = 1;
    let mut i = 0;
    let path = |stack: &[Frame]| -> Vec<String> {
        stack
            .iter()
            .map(|f| match f {
                Frame::Object(k) => k.clone().unwrap_or_default(),
                Frame::Array(n) => format!("[{n}]"),
            })
            .collect()
    };
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'{' => stack.push(Frame::Object(None)),
            b'[' => stack.push(Frame::Array(0)),
            b'}' | b']' => {
                stack.pop();
            }
            b',' => {
                if let Some(Frame::Array(n)) = stack.last_mut() {
                    *n += 1;
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                let raw = &text[start..(i + 1).min(text.len())];
                let mut j = i + 1;
                while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                    j += 1;
                }
                let is_key = bytes.get(j) == Some(&b':');
                if is_key && let Some(Frame::Object(_)) = stack.last() {
                    let key: String = serde_json::from_str(raw).unwrap_or_default();
                    if let Some(Frame::Object(k)) = stack.last_mut() {
                        *k = Some(key);
                    }
                    out.insert(path(&stack), line);
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The byte span of the character at a JSON error's line and column (both counted from 1; the
/// column in bytes), when the text has it.
fn json_error_span(text: &str, line: usize, column: usize) -> Option<std::ops::Range<usize>> {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)?)
        .map(str::len)
        .sum();
    let at = start + column.checked_sub(1)?;
    let len = text.get(at..)?.chars().next()?.len_utf8();
    Some(at..at + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_lines_follow_nesting_and_arrays() {
        let text = "{\n  \"mcpServers\": {\n    \"a b\": {\n      \"command\": \"x\",\n      \"args\": [\"{\", \"\\\"\"],\n      \"extra\": 1\n    }\n  }\n}\n";
        let lines = key_lines(text);
        let at = |p: &[&str]| {
            lines
                .get(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .copied()
        };
        assert_eq!(at(&["mcpServers"]), Some(2));
        assert_eq!(at(&["mcpServers", "a b"]), Some(3));
        assert_eq!(at(&["mcpServers", "a b", "command"]), Some(4));
        assert_eq!(at(&["mcpServers", "a b", "extra"]), Some(6));
    }
}
