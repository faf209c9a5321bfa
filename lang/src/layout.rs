//! The layout pass (`language.md` §4): decides which line ends end an item and which `{` opens
//! a block, so that the parser sees newlines only where they matter.
//!
//! The lexer emits every line end. This pass walks the tokens with a stack of open brackets and
//! keeps a line end only in *line mode* (directly inside a block, or in an agent signature),
//! and even there drops it when the line ends with an operator or `=` (§4.2), or when it comes
//! before `with` / after `|` in a signature's effect row (the extension of §4.3). It rewrites each
//! `{` to [`Token::BlockOpen`] when it opens a block and leaves [`Token::LBrace`] for the
//! bracket-mode braces (record literals and patterns, object types, effect overrides, modifier
//! lists, import lists, `match` arms and handler clauses).
//!
//! It also cuts the file into *chunks* at every line that starts in column 1 with a declaration
//! keyword (§4.4): the parser parses each chunk on its own, so a syntax error in one declaration
//! never hides the diagnostics of the next.

use crate::source::Span;
use crate::token::Token;

/// What kind of bracket-mode brace a `{` opened.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BraceKind {
    /// The braces holding `match` arms; tracks whether a `case` pattern is still open.
    Arms { in_pattern: bool },
    /// The braces holding handler clauses.
    Clauses,
    /// Any other bracket-mode brace.
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ParenKind {
    /// `match (…)`: the next `{` holds arms.
    MatchHead,
    /// `handler (…)` or `handler[…] (…)`: the next `{` holds clauses.
    HandlerVars,
    Other,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Frame {
    /// The top of a file: bracket mode, except inside an agent signature.
    Top {
        sig: bool,
    },
    /// A block: line mode.
    Block {
        sig: bool,
    },
    Brace(BraceKind),
    Paren(ParenKind),
    /// `[ … ]`; `handler_args` marks `handler[R, E]`.
    Bracket {
        handler_args: bool,
    },
    /// `${ … }` inside a template.
    Interp,
    /// A template between `f"` and its closing quote (no newlines can occur here).
    Template,
}

/// What the last closing bracket was, for classifying a `{` right after it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Closed {
    Paren(ParenKind),
    HandlerArgs,
    Other,
}

/// The tokens of one file after layout, cut into top-level chunks.
#[derive(Debug)]
pub struct Laid<'s> {
    pub tokens: Vec<(Token<'s>, Span)>,
    /// Token index ranges of the chunks, in order; together they cover `tokens`.
    pub chunks: Vec<std::ops::Range<usize>>,
    /// Whether brackets were still open at the end of the input (the REPL's "incomplete").
    pub unclosed: bool,
    /// The first bracket of each chunk that nests deeper than [`MAX_NESTING`], by chunk index.
    pub too_deep: Vec<(usize, Span)>,
}

/// How deeply brackets may nest. Every later stage walks trees recursively, so a limit keeps
/// hostile input from exhausting the stack; real programs stay far below it.
pub const MAX_NESTING: usize = 256;

fn is_type_position(prev: Option<&Token<'_>>) -> bool {
    matches!(
        prev,
        Some(
            Token::Eq
                | Token::Pipe
                | Token::Arrow
                | Token::Of
                | Token::Colon
                | Token::LParen
                | Token::LBracket
                | Token::Comma
                | Token::With
                | Token::External
                | Token::Primitive
        )
    ) || matches!(prev, Some(Token::Ident("extends")))
}

/// Runs the layout pass over a lexed file.
pub fn layout<'s>(src: &str, tokens: Vec<(Token<'s>, Span)>) -> Laid<'s> {
    let mut out: Vec<(Token<'s>, Span)> = Vec::with_capacity(tokens.len());
    let mut chunks = Vec::new();
    let mut chunk_start = 0;
    let mut stack = vec![Frame::Top { sig: false }];
    let mut deep_marks: Vec<(usize, Span)> = Vec::new();
    let mut closed: Option<Closed> = None;
    // The last token emitted or dropped that was not a newline.
    let mut prev: Option<Token<'s>> = None;

    let at_column_one =
        |span: Span| span.start == 0 || src.as_bytes().get(span.start as usize - 1) == Some(&b'\n');

    let mut i = 0;
    while i < tokens.len() {
        let (token, span) = &tokens[i];
        let span = *span;
        let next_significant = tokens[i + 1..]
            .iter()
            .map(|(t, _)| t)
            .find(|t| **t != Token::Newline);

        // A declaration keyword in column 1 starts a new chunk and resets the bracket stack
        // (§4.4): whatever was left open belongs to a broken declaration.
        if token.starts_declaration()
            && at_column_one(span)
            && !matches!(prev, Some(Token::At) | Some(Token::Ident("private")))
        {
            let doc_before = matches!(prev, Some(Token::Str(_)))
                && out.len() >= 2
                && out[out.len() - 2].0 == Token::At;
            if !doc_before && out.len() > chunk_start {
                chunks.push(chunk_start..out.len());
                chunk_start = out.len();
            }
            if !doc_before {
                stack.clear();
                stack.push(Frame::Top { sig: false });
                closed = None;
            }
        }

        if *token == Token::Newline {
            let top = stack.last().copied().unwrap_or(Frame::Top { sig: false });
            let (line_mode, sig) = match top {
                Frame::Block { sig } => (true, sig),
                Frame::Top { sig } => (sig, sig),
                _ => (false, false),
            };
            let last_out = out.last().map(|(t, _)| t);
            let drop = !line_mode
                || prev.as_ref().is_some_and(Token::continues_line)
                || matches!(
                    last_out,
                    Some(Token::Newline | Token::BlockOpen | Token::Semi) | None
                )
                || (sig && (next_significant == Some(&Token::With) || prev == Some(Token::Pipe)));
            if !drop {
                out.push((Token::Newline, span));
                if sig {
                    set_sig(&mut stack, false);
                }
            }
            i += 1;
            continue;
        }

        let mut emitted = token.clone();
        match token {
            Token::LParen => {
                let kind = match (&prev, closed) {
                    (Some(Token::Match), _) => ParenKind::MatchHead,
                    (Some(Token::Handler), _) => ParenKind::HandlerVars,
                    (Some(Token::RBracket), Some(Closed::HandlerArgs)) => ParenKind::HandlerVars,
                    _ => ParenKind::Other,
                };
                stack.push(Frame::Paren(kind));
            }
            Token::LBracket => stack.push(Frame::Bracket {
                handler_args: prev == Some(Token::Handler),
            }),
            Token::InterpOpen => stack.push(Frame::Interp),
            Token::TemplateStart => stack.push(Frame::Template),
            Token::LBrace => {
                let item_start = matches!(stack.last(), Some(Frame::Block { .. }))
                    && matches!(
                        out.last().map(|(t, _)| t),
                        Some(Token::Newline | Token::Semi | Token::BlockOpen)
                    );
                let before = if item_start { None } else { prev.as_ref() };
                let frame = classify_brace(before, closed, stack.last().copied(), &tokens[i + 1..]);
                if matches!(frame, Frame::Block { .. }) {
                    emitted = Token::BlockOpen;
                    set_sig(&mut stack, false);
                }
                stack.push(frame);
            }
            Token::Case => {
                if let Some(Frame::Brace(BraceKind::Arms { in_pattern })) = stack.last_mut() {
                    *in_pattern = true;
                }
            }
            Token::Agent => {
                let declares = matches!(next_significant, Some(Token::Ident(_)))
                    && !is_type_position(prev.as_ref());
                if declares && matches!(stack.last(), Some(Frame::Top { .. } | Frame::Block { .. }))
                {
                    set_sig(&mut stack, true);
                }
            }
            _ => {}
        }

        // Closing brackets pop their frame (mismatches are left for the parser to report).
        let closing = match token {
            Token::RParen => Some(matches!(stack.last(), Some(Frame::Paren(_)))),
            Token::RBracket => Some(matches!(stack.last(), Some(Frame::Bracket { .. }))),
            Token::RBrace => Some(matches!(
                stack.last(),
                Some(Frame::Block { .. } | Frame::Brace(_))
            )),
            Token::InterpClose => Some(matches!(stack.last(), Some(Frame::Interp))),
            Token::TemplateEnd => Some(matches!(stack.last(), Some(Frame::Template))),
            _ => None,
        };
        closed = None;
        // A mismatched closing bracket leaves the stack alone (the parser reports it). A `}` that
        // closes a block does not consume the line end after it (§4.3): the newline rule above
        // already sees the enclosing frame.
        if closing == Some(true) {
            let frame = stack.pop();
            closed = Some(match frame {
                Some(Frame::Paren(kind)) => Closed::Paren(kind),
                Some(Frame::Bracket { handler_args: true }) => Closed::HandlerArgs,
                _ => Closed::Other,
            });
        }

        // The arrow of a `case` ends its pattern.
        if *token == Token::Arrow
            && let Some(Frame::Brace(BraceKind::Arms { in_pattern })) = stack.last_mut()
            && *in_pattern
        {
            *in_pattern = false;
            // Remember that this arrow was an arm arrow for the brace that may follow.
            closed = Some(Closed::Other);
            if next_significant == Some(&Token::LBrace) {
                out.push((emitted, span));
                prev = Some(token.clone());
                i += 1;
                // The arm body brace always opens a block.
                let (brace, brace_span) = next_non_newline(&tokens, i);
                if let Some(b) = brace {
                    // Drop the newlines between the arrow and the brace (bracket mode).
                    i = b;
                    out.push((Token::BlockOpen, brace_span));
                    stack.push(Frame::Block { sig: false });
                    prev = Some(Token::LBrace);
                    i += 1;
                }
                continue;
            }
        }

        if stack.len() > MAX_NESTING && deep_marks.last().is_none_or(|(c, _)| *c != chunks.len()) {
            deep_marks.push((chunks.len(), span));
        }
        out.push((emitted, span));
        prev = Some(token.clone());
        i += 1;
    }
    if out.len() > chunk_start || chunks.is_empty() {
        chunks.push(chunk_start..out.len());
    }
    let unclosed = stack.len() > 1;
    let too_deep = deep_marks;
    Laid {
        tokens: out,
        chunks,
        unclosed,
        too_deep,
    }
}

fn next_non_newline(tokens: &[(Token<'_>, Span)], from: usize) -> (Option<usize>, Span) {
    for (j, (t, s)) in tokens.iter().enumerate().skip(from) {
        if *t != Token::Newline {
            return (Some(j), *s);
        }
    }
    (None, Span::default())
}

fn set_sig(stack: &mut [Frame], value: bool) {
    match stack.last_mut() {
        Some(Frame::Top { sig }) | Some(Frame::Block { sig }) => *sig = value,
        _ => {}
    }
}

/// Decides what a `{` opens from the token before it and, in expression position, the
/// look-ahead rule of §5 (a record literal when the next token is `}` or the next two are a key
/// and `=`), extended to patterns and object types (`{ a => p }`, `{ a, b }`, `{a: T}`, `{...E}`).
fn classify_brace(
    prev: Option<&Token<'_>>,
    closed: Option<Closed>,
    top: Option<Frame>,
    rest: &[(Token<'_>, Span)],
) -> Frame {
    let block = Frame::Block { sig: false };
    let bracket = Frame::Brace(BraceKind::Other);
    match prev {
        Some(Token::RParen) => match closed {
            Some(Closed::Paren(ParenKind::MatchHead)) => {
                Frame::Brace(BraceKind::Arms { in_pattern: false })
            }
            Some(Closed::Paren(ParenKind::HandlerVars)) => Frame::Brace(BraceKind::Clauses),
            _ => block,
        },
        Some(Token::RBracket) if closed == Some(Closed::HandlerArgs) => {
            Frame::Brace(BraceKind::Clauses)
        }
        Some(Token::Handler) => Frame::Brace(BraceKind::Clauses),
        Some(Token::Else | Token::Then) => block,
        Some(Token::Arrow) => {
            if matches!(
                top,
                Some(Frame::Brace(BraceKind::Arms { in_pattern: true }))
            ) {
                block
            } else {
                bracket
            }
        }
        Some(
            Token::Colon
            | Token::Of
            | Token::Pipe
            | Token::With
            | Token::Import
            | Token::Let
            | Token::Case
            | Token::FatArrow,
        ) => bracket,
        // The end of a type before an agent or clause body: `-> integer {`, `with io {`,
        // `-> array[T] {`, `-> {a: T} {`.
        Some(Token::Ident(_) | Token::RBracket | Token::RBrace | Token::Null) => block,
        _ => {
            let mut ahead = rest
                .iter()
                .map(|(t, _)| t)
                .filter(|t| **t != Token::Newline);
            match (ahead.next(), ahead.next()) {
                (Some(Token::RBrace | Token::Ellipsis), _) => bracket,
                (
                    Some(Token::Ident(_) | Token::Str(_)),
                    Some(
                        Token::Eq | Token::Colon | Token::Question | Token::FatArrow | Token::Comma,
                    ),
                ) => bracket,
                _ => block,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;
    use crate::source::FileId;

    /// Renders the laid-out tokens compactly: `{` for bracket braces, `{B` for blocks, `⏎` for kept newlines.
    fn shape(src: &str) -> String {
        let lexed = lex(FileId(0), src);
        let laid = layout(src, lexed.tokens);
        laid.tokens
            .iter()
            .map(|(t, _)| match t {
                Token::Newline => "⏎".to_string(),
                Token::BlockOpen => "{B".to_string(),
                Token::LBrace => "{".to_string(),
                Token::Ident(s) | Token::Int(s) => s.to_string(),
                Token::Str(s) => format!("{s:?}"),
                other => other.to_string().trim_matches('`').to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn continuation_lines_and_separators() {
        assert_eq!(
            shape(
                "agent main() -> integer {\n  let a = 1 +\n    2\n  let r = {\n    x = a,\n  }\n  r.x\n}"
            ),
            "agent main ( ) -> integer {B let a = 1 + 2 ⏎ let r = { x = a , } ⏎ r . x ⏎ }"
        );
    }

    #[test]
    fn record_or_block_by_lookahead() {
        assert_eq!(
            shape("agent f() { let a = {} ; let b = { x } }"),
            "agent f ( ) {B let a = { } ; let b = {B x } }"
        );
    }

    #[test]
    fn match_arms_are_bracket_mode_and_arm_braces_are_blocks() {
        assert_eq!(
            shape(
                "agent f() {\n  match (x) {\n    case 1 -> {\n      a\n    }\n    case _ ->\n      b\n  }\n}"
            ),
            "agent f ( ) {B match ( x ) { case 1 -> {B a ⏎ } case _ -> b } ⏎ }"
        );
    }

    #[test]
    fn handler_clauses_are_bracket_mode() {
        assert_eq!(
            shape(
                "agent f() {\n  use handler (var n = 0) {\n    request t() { next n }\n  } then (r) {\n    r\n  }\n}"
            ),
            "agent f ( ) {B use handler ( var n = 0 ) { request t ( ) {B next n } } then ( r ) {B r ⏎ } ⏎ }"
        );
    }

    #[test]
    fn signatures_wrap_only_at_with_and_pipe() {
        assert_eq!(
            shape(
                "agent f(a: integer,\n  b: string) -> string\n    with io |\n      tick {\n  a\n}"
            ),
            "agent f ( a : integer , b : string ) -> string with io | tick {B a ⏎ }"
        );
        // An Allman brace keeps its newline, so the parser rejects it.
        assert_eq!(shape("agent f()\n{\n}"), "agent f ( ) ⏎ {B }");
    }

    #[test]
    fn agent_types_do_not_start_signatures() {
        assert_eq!(
            shape(
                "type t = agent never -> unknown\ndata d(f: agent (x: integer) -> integer,\n  g: integer)"
            ),
            "type t = agent never -> unknown data d ( f : agent ( x : integer ) -> integer , g : integer )"
        );
    }

    #[test]
    fn else_on_a_new_line_is_kept_for_the_parser() {
        assert_eq!(
            shape("agent f() {\n  if (c) { 1 }\n  else { 2 }\n}"),
            "agent f ( ) {B if ( c ) {B 1 } ⏎ else {B 2 } ⏎ }"
        );
    }

    #[test]
    fn chunks_split_at_column_one_declarations() {
        let src = "agent a() {\n  let x = (\n}\n@\"doc\"\nagent b() { 1 }\n";
        let laid = layout(src, lex(FileId(0), src).tokens);
        assert_eq!(laid.chunks.len(), 2);
        assert_eq!(laid.tokens[laid.chunks[1].start].0, Token::At);
    }

    #[test]
    fn object_types_and_patterns_are_bracket_mode() {
        assert_eq!(
            shape("agent f(p => {\n x => a: integer\n}) -> {a: integer} { p }"),
            "agent f ( p => { x => a : integer } ) -> { a : integer } {B p }"
        );
        assert_eq!(
            shape("agent f() {\n  let {\n    a,\n    b\n  } = r\n}"),
            "agent f ( ) {B let { a , b } = r ⏎ }"
        );
    }
}
