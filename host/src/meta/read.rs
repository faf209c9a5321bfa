//! `mcp_read_S` (`host.md` §10.7): level-1 URI templates, the line filter of `pattern`, paging
//! by bytes at character boundaries, and the response objects of one or several content items
//! (text, blobs decoded as text or spilled, error entries for malformed items).

use katari_chat::tools::{ErrorKind, ToolError};
use regex::Regex;
use serde_json::{Map, Value, json};

use super::invoke::{self, Blob, Rewrite};

/// `max_bytes` when not given (§10.2).
pub const DEFAULT_PAGE: usize = 51_200;

/// The compiled size a pattern may reach: a 10,000-character pattern compiles, a pattern that
/// would build a huge automaton (`(a{1000}){1000}`) is refused as invalid.
const PATTERN_SIZE_LIMIT: usize = 10 * 1024 * 1024;

/// One `{…}` expression of a URI template.
#[derive(Debug, PartialEq)]
pub struct Expression<'a> {
    /// The whole expression with its braces.
    pub text: &'a str,
    /// The variable names it mentions (operators and modifiers removed).
    pub names: Vec<&'a str>,
    /// Plain `{name}` (RFC 6570 level 1).
    pub simple: bool,
}

/// The expressions of `template`, in order; `Err` for an unclosed brace.
pub fn expressions(template: &str) -> Result<Vec<Expression<'_>>, String> {
    let mut out = Vec::new();
    let mut rest = template;
    let mut at = 0;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return Err(format!(
                "Resource template '{template}' has a '{{' without a closing '}}'."
            ));
        };
        let inner = &rest[open + 1..open + close];
        let text = &template[at + open..at + open + close + 1];
        let body = inner
            .strip_prefix(['+', '#', '.', '/', ';', '?', '&', '=', ',', '!', '@', '|'])
            .unwrap_or(inner);
        let names = body
            .split(',')
            .map(|n| n.split(':').next().unwrap_or(n).trim_end_matches('*'))
            .collect();
        // RFC 6570 varnames: letters, digits, `_`, pct-encoded triplets and inner dots.
        let simple = !inner.is_empty()
            && !inner.starts_with('.')
            && inner
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '%');
        out.push(Expression {
            text,
            names,
            simple,
        });
        at += open + close + 1;
        rest = &template[at..];
    }
    Ok(out)
}

/// Percent-encodes everything but the unreserved characters `A-Z a-z 0-9 - . _ ~`.
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn invalid(message: String) -> ToolError {
    ToolError::new(ErrorKind::InvalidArgument, message)
}

/// Expands a level-1 template with `arguments` (§10.7.1); anything beyond level 1 and missing
/// values are `invalid_argument` errors. Unused arguments are ignored.
pub fn expand(template: &str, arguments: &[(String, String)]) -> Result<String, ToolError> {
    let expressions = expressions(template).map_err(invalid)?;
    if let Some(e) = expressions.iter().find(|e| !e.simple) {
        return Err(invalid(format!(
            "Resource template '{template}' uses '{}', which needs RFC 6570 beyond level 1; only simple {{name}} substitution is supported.",
            e.text
        )));
    }
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    for e in &expressions {
        let name = e.names.first().copied().unwrap_or_default();
        let Some((_, value)) = arguments.iter().find(|(n, _)| n == name) else {
            return Err(invalid(format!(
                "Resource template '{template}' needs a value for '{name}' in arguments."
            )));
        };
        let (before, after) = rest.split_once(e.text).unwrap_or((rest, ""));
        out.push_str(before);
        out.push_str(&encode(value));
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// Compiles a `pattern` (`Invalid pattern: REASON` when it does not).
pub fn pattern(text: &str) -> Result<Regex, ToolError> {
    regex::RegexBuilder::new(text)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map_err(|e| invalid(format!("Invalid pattern: {e}")))
}

/// The filtered stream of §10.7.4: every line that matches, `N:`-prefixed, with 2 lines of
/// context on each side prefixed `N-`; groups that overlap or touch merge, others are separated
/// by `--`. Lines end at `\n` (a `\r` before it is dropped); every output line ends in `\n`.
pub fn filter(text: &str, pattern: &Regex) -> String {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = body
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let matched: Vec<bool> = lines.iter().map(|l| pattern.is_match(l)).collect();
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (i, _) in matched.iter().enumerate().filter(|(_, m)| **m) {
        let (start, end) = (i.saturating_sub(2), (i + 2).min(lines.len() - 1));
        match groups.last_mut() {
            Some(last) if start <= last.1 + 1 => last.1 = end,
            _ => groups.push((start, end)),
        }
    }
    let mut out = String::new();
    for (g, (start, end)) in groups.into_iter().enumerate() {
        if g > 0 {
            out.push_str("--\n");
        }
        for i in start..=end {
            let mark = if matched[i] { ':' } else { '-' };
            out.push_str(&format!("{}{mark}{}\n", i + 1, lines[i]));
        }
    }
    out
}

/// The byte range of the page of `text` at `offset` holding at most `max` bytes: the start
/// moves forward and the end back to character boundaries, and the page holds at least one
/// character unless the offset is at or past the end (§10.7.5).
pub fn page(text: &str, offset: usize, max: usize) -> (usize, usize) {
    let len = text.len();
    if offset >= len {
        return (len, len);
    }
    let mut start = offset;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    if start >= len {
        return (len, len);
    }
    let mut end = invoke::floor_boundary(text, start.saturating_add(max));
    if end <= start {
        end = start + text[start..].chars().next().map_or(1, char::len_utf8);
    }
    (start, end)
}

/// How to shape text items: the filter and the page.
pub struct Paging<'a> {
    pub pattern: Option<&'a Regex>,
    pub offset: usize,
    pub max: usize,
}

/// The object of one text item (§10.7.6).
pub fn text_item(
    uri: &Value,
    mime: &Value,
    text: &str,
    audience: Option<&Value>,
    paging: &Paging<'_>,
) -> Value {
    let filtered;
    let stream = match paging.pattern {
        Some(p) => {
            filtered = filter(text, p);
            filtered.as_str()
        }
        None => text,
    };
    let total = stream.len();
    let (start, end) = page(stream, paging.offset, paging.max);
    let truncated = end < total;
    let mut o = Map::new();
    o.insert("uri".into(), uri.clone());
    o.insert("mime_type".into(), mime.clone());
    o.insert("text".into(), json!(&stream[start..end]));
    o.insert("truncated".into(), json!(truncated));
    o.insert("total_bytes".into(), json!(total));
    o.insert(
        "next_offset".into(),
        if truncated { json!(end) } else { Value::Null },
    );
    if truncated {
        o.insert(
            "note".into(),
            json!(format!(
                "Content truncated; re-call with offset={end} to continue (max_bytes is clamped to {})",
                invoke::LIMIT
            )),
        );
    }
    if let Some(a) = audience {
        o.insert("audience".into(), a.clone());
    }
    Value::Object(o)
}

/// One content item of a `resources/read` result as the model sees it: a text object, a
/// spill object, or an error entry.
fn item(item: &Value, requested: &str, paging: &Paging<'_>, rewrite: &Rewrite<'_>) -> Value {
    let Some(object) = item.as_object() else {
        return json!({"uri": requested, "error": {"type": "server_error",
            "message": format!("A content item of {requested} is not a JSON object.")}});
    };
    let uri = match object.get("uri") {
        Some(Value::String(u)) => Value::String(u.clone()),
        _ => Value::String(requested.to_string()),
    };
    let shown = uri.as_str().unwrap_or(requested).to_string();
    let malformed = |why: &str| {
        json!({"uri": uri, "error": {"type": "server_error",
            "message": format!("A content item of {shown} {why}.")}})
    };
    let mime = match object.get("mimeType") {
        Some(Value::String(m)) => Value::String(m.clone()),
        None | Some(Value::Null) => Value::Null,
        Some(_) => return malformed("has a mimeType that is not a string"),
    };
    let audience = object.get("annotations").and_then(|a| a.get("audience"));
    match (object.get("text"), object.get("blob")) {
        (Some(Value::String(text)), None) => text_item(&uri, &mime, text, audience, paging),
        (None, Some(Value::String(blob))) => {
            match rewrite.blob(blob, Some(&shown), mime.as_str(), audience, true) {
                Blob::Text(text) => text_item(&uri, &mime, &text, audience, paging),
                Blob::Spilled(spilled) => spilled,
                Blob::Failed(Value::Object(mut error)) => {
                    let mut o = Map::new();
                    o.insert("uri".into(), uri);
                    o.append(&mut error);
                    Value::Object(o)
                }
                Blob::Failed(other) => other,
            }
        }
        (Some(_), Some(_)) => malformed("has both text and blob"),
        (None, None) => malformed("has neither text nor blob"),
        _ => malformed("has a text or blob that is not a string"),
    }
}

/// The response for the raw `resources/read` result `raw` of `uri` (§10.7.6–7). A single item
/// that is an error becomes the call's error.
pub fn response(
    raw: &str,
    uri: &str,
    paging: &Paging<'_>,
    rewrite: &Rewrite<'_>,
) -> Result<String, ToolError> {
    let server_error = |why: String| ToolError::new(ErrorKind::ServerError, why);
    let value: Value = serde_json::from_str(raw)
        .map_err(|e| server_error(format!("The reply to reading {uri} is not JSON: {e}")))?;
    let Some(contents) = value.get("contents").and_then(Value::as_array) else {
        return Err(server_error(format!(
            "The reply to reading {uri} has no 'contents' list."
        )));
    };
    let items: Vec<Value> = contents
        .iter()
        .map(|c| item(c, uri, paging, rewrite))
        .collect();
    let result = if let [single] = items.as_slice() {
        if let Some(error) = single.get("error")
            && let (Some(kind), Some(message)) = (
                error.get("type").and_then(Value::as_str),
                error.get("message").and_then(Value::as_str),
            )
        {
            let kind = if kind == "too_large" {
                ErrorKind::TooLarge
            } else {
                ErrorKind::ServerError
            };
            return Err(ToolError::new(kind, message));
        }
        single.clone()
    } else {
        let mut o = Map::new();
        o.insert("uri".into(), json!(uri));
        o.insert("contents".into(), Value::Array(items));
        invoke::cap(&mut o, "contents");
        Value::Object(o)
    };
    serde_json::to_string(&result).map_err(|e| server_error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_one_templates_expand_with_percent_encoding() {
        let args = vec![
            ("owner".to_string(), "a b/ç".to_string()),
            ("repo".to_string(), "k~t-1.0_x".to_string()),
            ("unused".to_string(), "x".to_string()),
        ];
        assert_eq!(
            expand("repo://{owner}/{repo}/readme", &args).expect("expand"),
            "repo://a%20b%2F%C3%A7/k~t-1.0_x/readme"
        );
        let err = expand("repo://{owner}/{number}", &args).expect_err("missing");
        assert_eq!(
            err.message,
            "Resource template 'repo://{owner}/{number}' needs a value for 'number' in arguments."
        );
    }

    #[test]
    fn every_operator_modifier_and_list_is_refused() {
        for expr in [
            "{+path}", "{#frag}", "{.ext}", "{/seg}", "{;p}", "{?q}", "{&more}", "{list*}",
            "{name:3}", "{a,b}", "{=x}", "{}", "{a b}",
        ] {
            let template = format!("x://{expr}/y");
            let err = expand(&template, &[]).expect_err(expr);
            assert_eq!(err.kind, ErrorKind::InvalidArgument);
            assert_eq!(
                err.message,
                format!(
                    "Resource template '{template}' uses '{expr}', which needs RFC 6570 beyond level 1; only simple {{name}} substitution is supported."
                )
            );
        }
        assert!(expand("x://{open", &[]).is_err());
        let e = expressions("x://{+path}/{a,b*}").expect("parse");
        assert_eq!(e[0].names, ["path"]);
        assert_eq!(e[1].names, ["a", "b"]);
    }

    #[test]
    fn the_filter_numbers_lines_with_context_and_separators() {
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let re = pattern(r"^line (3|5|15)$").expect("regex");
        assert_eq!(
            filter(&text, &re),
            "1-line 1\n2-line 2\n3:line 3\n4-line 4\n5:line 5\n6-line 6\n7-line 7\n--\n\
             13-line 13\n14-line 14\n15:line 15\n16-line 16\n17-line 17\n"
        );
        // Groups that touch merge without a separator.
        let re = pattern(r"^line (1|6)$").expect("regex");
        assert_eq!(
            filter(&text, &re),
            "1:line 1\n2-line 2\n3-line 3\n4-line 4\n5-line 5\n6:line 6\n7-line 7\n8-line 8\n"
        );
        assert_eq!(filter(&text, &pattern("nothing").expect("regex")), "");
        assert!(
            pattern("(")
                .expect_err("bad")
                .message
                .starts_with("Invalid pattern: ")
        );
    }

    #[test]
    fn pages_cover_the_text_exactly_across_multibyte_characters() {
        let text = "aé€😀".repeat(1000);
        for max in [1, 2, 3, 5, 7, 51_200] {
            let mut offset = 0;
            let mut joined = String::new();
            loop {
                let (start, end) = page(&text, offset, max);
                if start == end {
                    break;
                }
                assert_eq!(start, offset);
                assert!(end - start <= max.max(4));
                joined.push_str(&text[start..end]);
                offset = end;
            }
            assert_eq!(joined, text);
        }
        // An offset inside a character moves forward.
        assert_eq!(page("é", 1, 10), (2, 2));
        assert_eq!(page("aé", 0, 2), (0, 1));
    }
}
