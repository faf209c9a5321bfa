//! The words of a REPL command line: split at unquoted whitespace, with `"…"` and `'…'`
//! quoting and, inside double quotes, the escapes `\"` and `\\` (`host.md` §12.4.2). `.prompt`'s
//! `key=value` arguments, `/set stop` and `.chat`'s flags are read this way.

/// One word as written and as meant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The text as typed, quotes included (for messages that quote it back).
    pub raw: String,
    /// The text with its quotes and escapes removed.
    pub text: String,
    /// Where the word starts in the line, in bytes.
    pub start: usize,
}

/// Splits `line` into words; `Err` names a quote left open.
pub fn split(line: &str) -> Result<Vec<Word>, String> {
    let mut words = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut text = String::new();
        let mut end = line.len();
        while let Some(&(i, c)) = chars.peek() {
            if c.is_whitespace() {
                end = i;
                break;
            }
            chars.next();
            match c {
                '"' | '\'' => {
                    let quote = c;
                    let mut closed = false;
                    while let Some((_, c)) = chars.next() {
                        if c == quote {
                            closed = true;
                            break;
                        }
                        if c == '\\'
                            && quote == '"'
                            && let Some(&(_, next @ ('"' | '\\'))) = chars.peek()
                        {
                            chars.next();
                            text.push(next);
                            continue;
                        }
                        text.push(c);
                    }
                    if !closed {
                        return Err(format!(
                            "A {} quote is not closed in '{}'.",
                            if quote == '"' { "double" } else { "single" },
                            &line[start..]
                        ));
                    }
                }
                c => text.push(c),
            }
        }
        words.push(Word {
            raw: line[start..end].to_string(),
            text,
            start,
        });
    }
    Ok(words)
}

/// The first word of `text` and the rest after it, trimmed.
pub fn first(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.split_once(char::is_whitespace) {
        Some((first, rest)) => (first, rest.trim()),
        None => (text, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<String> {
        split(line)
            .expect("splits")
            .into_iter()
            .map(|w| w.text)
            .collect()
    }

    #[test]
    fn quotes_group_and_escapes_apply_inside_double_quotes() {
        assert_eq!(texts("a  b"), ["a", "b"]);
        assert_eq!(
            texts(r#"repo=x style="very short" n='a b'"#),
            ["repo=x", "style=very short", "n=a b"]
        );
        assert_eq!(texts(r#"q="say \"hi\" \\ \n""#), [r#"q=say "hi" \ \n"#]);
        assert_eq!(texts(r"q='a\b'"), [r"q=a\b"]);
        assert_eq!(texts(r#"e="""#), ["e="]);
    }

    #[test]
    fn words_keep_what_was_typed_and_where() {
        let words = split(r#"  x="a b" y"#).expect("splits");
        assert_eq!(words[0].raw, r#"x="a b""#);
        assert_eq!(words[0].start, 2);
        assert_eq!(words[1].start, 10);
    }

    #[test]
    fn an_open_quote_is_an_error() {
        assert!(split(r#"x="abc"#).expect_err("open").contains("not closed"));
    }

    #[test]
    fn first_word_and_rest() {
        assert_eq!(first("set temperature 0.5"), ("set", "temperature 0.5"));
        assert_eq!(first("tools"), ("tools", ""));
    }
}
