//! The lexer (`language.md` §3): logos for ordinary tokens, a small hand-written scanner for
//! string literals and templates, whose `${ … }` interpolations nest.
//!
//! Every line end becomes a [`Token::Newline`]; the layout pass decides which of them matter.
//! Lexical errors are reported as K1001 and the offending text is skipped, so the token stream
//! is always usable.

use logos::Logos;

use crate::diag::{Code, Diagnostic};
use crate::source::{FileId, Span};
use crate::token::Token;

#[derive(Logos, Clone, Copy, Debug, PartialEq)]
#[logos(skip r"[ \t\f]+")]
#[logos(skip(r"//[^\r\n]*", allow_greedy = true))]
enum Raw {
    #[regex(r"\r?\n")]
    Newline,
    #[token("/*")]
    BlockComment,
    #[regex(r"[\p{L}_][\p{L}\p{Nd}_]*")]
    Ident,
    #[token("_", priority = 100)]
    Underscore,
    #[token("f\"")]
    TemplateStart,
    #[token("\"")]
    Quote,
    #[regex(r"[0-9]+", priority = 3)]
    Int,
    #[regex(r"[0-9]+(\.[0-9]+([eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)")]
    Number,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("++")]
    PlusPlus,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
    #[token("!")]
    Bang,
    #[token("=")]
    Eq,
    #[token("=>")]
    FatArrow,
    #[token("->")]
    Arrow,
    #[token("?=")]
    QuestionEq,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token(";")]
    Semi,
    #[token("|")]
    Pipe,
    #[token("...")]
    Ellipsis,
    #[token("?")]
    Question,
    #[token("@")]
    At,
}

/// The result of lexing one file.
#[derive(Debug)]
pub struct Lexed<'s> {
    pub tokens: Vec<(Token<'s>, Span)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lexes a whole source text. Never fails: problems become diagnostics.
pub fn lex(file: FileId, src: &str) -> Lexed<'_> {
    let mut lexer = Lexer {
        file,
        src,
        tokens: Vec::new(),
        diagnostics: Vec::new(),
        interp_depths: Vec::new(),
    };
    let start = if src.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    lexer.run(start);
    Lexed {
        tokens: lexer.tokens,
        diagnostics: lexer.diagnostics,
    }
}

struct Lexer<'s> {
    file: FileId,
    src: &'s str,
    tokens: Vec<(Token<'s>, Span)>,
    diagnostics: Vec<Diagnostic>,
    /// One entry per open `${`: how many ordinary `{` are open inside it.
    interp_depths: Vec<u32>,
}

/// How a scan of string or template text ended.
enum StrEnd {
    /// The closing quote; the position after it.
    Quote(usize),
    /// `${` in a template; the position after it.
    Interp(usize),
    /// End of input without a closing quote.
    Eof,
}

impl<'s> Lexer<'s> {
    fn error(&mut self, span: Span, message: impl Into<String>, label: &str) {
        self.diagnostics
            .push(Diagnostic::new(Code::K1001, message, self.file, span).with_label(label));
    }

    fn push(&mut self, token: Token<'s>, start: usize, end: usize) {
        self.tokens.push((token, Span::new(start, end)));
    }

    /// Lexes ordinary tokens from `pos`, switching to the string scanner where needed.
    fn run(&mut self, mut pos: usize) {
        'outer: loop {
            let mut raw = Raw::lexer(&self.src[pos..]);
            while let Some(result) = raw.next() {
                let range = raw.span();
                let (start, end) = (pos + range.start, pos + range.end);
                let text = &self.src[start..end];
                let Ok(kind) = result else {
                    let shown = text
                        .chars()
                        .next()
                        .map(|c| c.escape_debug().to_string())
                        .unwrap_or_default();
                    self.error(
                        Span::new(start, end),
                        format!("unexpected character `{shown}`"),
                        "not part of any token",
                    );
                    continue;
                };
                let token = match kind {
                    Raw::Newline => Token::Newline,
                    Raw::BlockComment => {
                        match self.src[end..].find("*/") {
                            Some(close) => pos = end + close + 2,
                            None => {
                                self.error(
                                    Span::new(start, end),
                                    "unterminated block comment",
                                    "this comment is never closed",
                                );
                                pos = self.src.len();
                            }
                        }
                        continue 'outer;
                    }
                    Raw::Ident => Token::keyword(text).unwrap_or(Token::Ident(text)),
                    Raw::Underscore => Token::Underscore,
                    Raw::Quote => {
                        pos = self.string(start, end);
                        continue 'outer;
                    }
                    Raw::TemplateStart => {
                        self.push(Token::TemplateStart, start, end);
                        pos = self.template_chunk(end);
                        continue 'outer;
                    }
                    Raw::Int => Token::Int(text),
                    Raw::Number => Token::Number(text),
                    Raw::LBrace => {
                        if let Some(depth) = self.interp_depths.last_mut() {
                            *depth += 1;
                        }
                        Token::LBrace
                    }
                    Raw::RBrace => match self.interp_depths.last_mut() {
                        Some(0) => {
                            self.interp_depths.pop();
                            self.push(Token::InterpClose, start, end);
                            pos = self.template_chunk(end);
                            continue 'outer;
                        }
                        Some(depth) => {
                            *depth -= 1;
                            Token::RBrace
                        }
                        None => Token::RBrace,
                    },
                    Raw::LParen => Token::LParen,
                    Raw::RParen => Token::RParen,
                    Raw::LBracket => Token::LBracket,
                    Raw::RBracket => Token::RBracket,
                    Raw::Plus => Token::Plus,
                    Raw::Minus => Token::Minus,
                    Raw::Star => Token::Star,
                    Raw::Slash => Token::Slash,
                    Raw::Percent => Token::Percent,
                    Raw::PlusPlus => Token::PlusPlus,
                    Raw::EqEq => Token::EqEq,
                    Raw::NotEq => Token::NotEq,
                    Raw::Lt => Token::Lt,
                    Raw::Le => Token::Le,
                    Raw::Gt => Token::Gt,
                    Raw::Ge => Token::Ge,
                    Raw::AndAnd => Token::AndAnd,
                    Raw::OrOr => Token::OrOr,
                    Raw::Bang => Token::Bang,
                    Raw::Eq => Token::Eq,
                    Raw::FatArrow => Token::FatArrow,
                    Raw::Arrow => Token::Arrow,
                    Raw::QuestionEq => Token::QuestionEq,
                    Raw::Colon => Token::Colon,
                    Raw::Comma => Token::Comma,
                    Raw::Dot => Token::Dot,
                    Raw::Semi => Token::Semi,
                    Raw::Pipe => Token::Pipe,
                    Raw::Ellipsis => Token::Ellipsis,
                    Raw::Question => Token::Question,
                    Raw::At => Token::At,
                };
                self.push(token, start, end);
            }
            break;
        }
        if !self.interp_depths.is_empty() {
            let end = self.src.len();
            self.error(
                Span::new(end, end),
                "unterminated template interpolation",
                "`${` is never closed",
            );
            self.interp_depths.clear();
        }
    }

    /// Scans a plain string literal whose opening quote spans `start..body`.
    fn string(&mut self, start: usize, body: usize) -> usize {
        let mut text = String::new();
        match self.scan_text(body, &mut text, false) {
            StrEnd::Quote(end) => {
                self.push(Token::Str(text), start, end);
                end
            }
            StrEnd::Interp(_) => unreachable_interp(),
            StrEnd::Eof => {
                self.error(
                    Span::new(start, body),
                    "unterminated string literal",
                    "this string is never closed",
                );
                self.push(Token::Str(text), start, self.src.len());
                self.src.len()
            }
        }
    }

    /// Scans template text from `pos` up to the next `${` or the closing quote.
    fn template_chunk(&mut self, pos: usize) -> usize {
        let mut text = String::new();
        match self.scan_text(pos, &mut text, true) {
            StrEnd::Quote(end) => {
                if !text.is_empty() {
                    self.push(Token::TemplateChunk(text), pos, end - 1);
                }
                self.push(Token::TemplateEnd, end - 1, end);
                end
            }
            StrEnd::Interp(end) => {
                if !text.is_empty() {
                    self.push(Token::TemplateChunk(text), pos, end - 2);
                }
                self.push(Token::InterpOpen, end - 2, end);
                self.interp_depths.push(0);
                end
            }
            StrEnd::Eof => {
                let end = self.src.len();
                self.error(
                    Span::new(pos.saturating_sub(1), end.max(pos)),
                    "unterminated template",
                    "this template is never closed",
                );
                if !text.is_empty() {
                    self.push(Token::TemplateChunk(text), pos, end);
                }
                self.push(Token::TemplateEnd, end, end);
                end
            }
        }
    }

    /// Decodes string text (escapes, `\r\n`) into `out` until a closing quote, or `${` when
    /// `template` is set.
    fn scan_text(&mut self, mut pos: usize, out: &mut String, template: bool) -> StrEnd {
        let bytes = self.src.as_bytes();
        while pos < bytes.len() {
            match bytes[pos] {
                b'"' => return StrEnd::Quote(pos + 1),
                b'$' if template && bytes.get(pos + 1) == Some(&b'{') => {
                    return StrEnd::Interp(pos + 2);
                }
                b'\\' => {
                    let escaped = self.src[pos + 1..].chars().next();
                    let decoded = match escaped {
                        Some('n') => Some('\n'),
                        Some('t') => Some('\t'),
                        Some('r') => Some('\r'),
                        Some('"') => Some('"'),
                        Some('\\') => Some('\\'),
                        Some('$') => Some('$'),
                        Some('/') => Some('/'),
                        _ => None,
                    };
                    let width = 1 + escaped.map_or(0, char::len_utf8);
                    match decoded {
                        Some(c) => out.push(c),
                        None => {
                            let shown = escaped
                                .map(|c| c.escape_debug().to_string())
                                .unwrap_or_default();
                            self.error(
                                Span::new(pos, pos + width),
                                format!("unknown escape sequence `\\{shown}`"),
                                "the escapes are \\n \\t \\r \\\" \\\\ \\$ and \\/",
                            );
                        }
                    }
                    pos += width;
                }
                b'\r' if bytes.get(pos + 1) == Some(&b'\n') => {
                    out.push('\n');
                    pos += 2;
                }
                _ => {
                    let c = self.src[pos..].chars().next().unwrap_or('\u{fffd}');
                    out.push(c);
                    pos += c.len_utf8();
                }
            }
        }
        StrEnd::Eof
    }
}

/// Plain strings never stop at `${`; kept out of line so the match above stays readable.
fn unreachable_interp() -> ! {
    panic!("plain string scan stopped at an interpolation")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Token<'_>> {
        let lexed = lex(FileId(0), src);
        assert!(lexed.diagnostics.is_empty(), "{:?}", lexed.diagnostics);
        lexed.tokens.into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn operators_take_the_longest_match() {
        use Token::*;
        assert_eq!(
            kinds("++ + <= < >= > != ! == => = -> - ?= ? ..."),
            vec![
                PlusPlus, Plus, Le, Lt, Ge, Gt, NotEq, Bang, EqEq, FatArrow, Eq, Arrow, Minus,
                QuestionEq, Question, Ellipsis
            ]
        );
    }

    #[test]
    fn words_literals_and_underscore() {
        use Token::*;
        assert_eq!(
            kinds("agent _ _x array 1 1.5 1e3 1. .5"),
            vec![
                Agent,
                Underscore,
                Ident("_x"),
                Ident("array"),
                Int("1"),
                Number("1.5"),
                Number("1e3"),
                Int("1"),
                Dot,
                Dot,
                Int("5")
            ]
        );
    }

    #[test]
    fn strings_decode_escapes_and_crlf() {
        assert_eq!(
            kinds("\"a\\n\\$\\/b\r\nc\""),
            vec![Token::Str("a\n$/b\nc".into())]
        );
    }

    #[test]
    fn bad_escape_is_k1001() {
        let lexed = lex(FileId(0), r#""a\qb""#);
        assert_eq!(lexed.diagnostics.len(), 1);
        assert_eq!(lexed.diagnostics[0].code, Code::K1001);
    }

    #[test]
    fn templates_nest_with_strings_and_braces() {
        use Token::*;
        let toks = kinds(r#"f"a${ g(x = "}") }b${ f"${y}" }""#);
        assert_eq!(
            toks,
            vec![
                TemplateStart,
                TemplateChunk("a".into()),
                InterpOpen,
                Ident("g"),
                LParen,
                Ident("x"),
                Eq,
                Str("}".into()),
                RParen,
                InterpClose,
                TemplateChunk("b".into()),
                InterpOpen,
                TemplateStart,
                InterpOpen,
                Ident("y"),
                InterpClose,
                TemplateEnd,
                InterpClose,
                TemplateEnd,
            ]
        );
    }

    #[test]
    fn template_dollar_rules() {
        use Token::*;
        assert_eq!(
            kinds(r#"f"$5 \${x}""#),
            vec![TemplateStart, TemplateChunk("$5 ${x}".into()), TemplateEnd]
        );
        assert_eq!(
            kinds(r#"f "x" xf"y""#),
            vec![Ident("f"), Str("x".into()), Ident("xf"), Str("y".into())]
        );
    }

    #[test]
    fn comments_are_whitespace_but_keep_line_ends() {
        use Token::*;
        assert_eq!(
            kinds("a // c\nb /* x\ny */ c"),
            vec![Ident("a"), Newline, Ident("b"), Ident("c")]
        );
    }

    #[test]
    fn unterminated_things_are_reported() {
        for src in ["\"abc", "f\"a${b", "/* x", "f\"abc", "#"] {
            let lexed = lex(FileId(0), src);
            assert!(!lexed.diagnostics.is_empty(), "{src}");
        }
    }
}
