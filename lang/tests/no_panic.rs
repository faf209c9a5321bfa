//! Bounded property tests: the front end never panics, whatever text it is given, and it reports an
//! error whenever the text is certainly not a valid program.
//!
//! Four sources of input: random strings, random soups of katari tokens, every prefix of each
//! example program and prelude file, and example files with a random run of words removed. The
//! random inputs also go through loading and name resolution (without the prelude, which would
//! dominate the time). The case counts are kept small so the whole file runs in a few seconds in a
//! debug build; the fuzz target under `fuzz/` explores the same ground for as long as one lets it.

use std::path::{Path, PathBuf};

use katari_lang::lexer::lex;
use katari_lang::load::{MemoryFs, load_program};
use katari_lang::parser::{Parsed, parse};
use katari_lang::source::FileId;
use katari_lang::token::Token;
use proptest::prelude::*;

/// Parses `src` and returns the result with a flag saying whether any diagnostic is an error.
fn parse_checked(src: &str) -> (Parsed, bool) {
    let parsed = parse(FileId(0), src);
    let has_error = parsed.diagnostics.iter().any(|d| d.is_error());
    (parsed, has_error)
}

/// A rendering of everything the parser returned, used to compare two runs. `Debug` rather than
/// `PartialEq` so that a NaN literal, should one ever appear, still compares equal to itself.
fn fingerprint(parsed: &Parsed) -> String {
    format!(
        "{:?}\n{:?}\n{}",
        parsed.module, parsed.diagnostics, parsed.incomplete
    )
}

/// Whether `src` is certainly not a valid program, by checks that do not depend on the parser:
/// brackets that do not nest (no valid program has them, §5), or a last token that no declaration
/// can end with (an operator, a keyword that needs something after it). `None` when in doubt.
fn certainly_invalid(src: &str) -> Option<String> {
    let lexed = lex(FileId(0), src);
    if let Some(d) = lexed.diagnostics.iter().find(|d| d.is_error()) {
        return Some(format!("the lexer reported {:?}", d.message));
    }
    let mut open: Vec<&Token<'_>> = Vec::new();
    for (token, span) in &lexed.tokens {
        let opener = match token {
            Token::LParen
            | Token::LBracket
            | Token::LBrace
            | Token::InterpOpen
            | Token::TemplateStart => {
                open.push(token);
                continue;
            }
            Token::RParen => Token::LParen,
            Token::RBracket => Token::LBracket,
            Token::RBrace => Token::LBrace,
            Token::InterpClose => Token::InterpOpen,
            Token::TemplateEnd => Token::TemplateStart,
            _ => continue,
        };
        if open.pop() != Some(&opener) {
            return Some(format!("{token} at {span:?} closes nothing that is open"));
        }
    }
    if let Some(token) = open.last() {
        return Some(format!("{token} is never closed"));
    }
    let last = lexed
        .tokens
        .iter()
        .rev()
        .map(|(t, _)| t)
        .find(|t| **t != Token::Newline);
    match last {
        Some(t) if cannot_end_a_module(t) => Some(format!("the text ends with {t}")),
        _ => None,
    }
}

/// Tokens after which a module can never end: every operator, and every reserved word other than
/// the literals `true`, `false` and `null` (each of them needs something after it).
fn cannot_end_a_module(token: &Token<'_>) -> bool {
    use Token::*;
    token.continues_line()
        || matches!(
            token,
            FatArrow
                | Arrow
                | QuestionEq
                | Colon
                | Comma
                | Dot
                | Pipe
                | Ellipsis
                | Question
                | At
                | Agent
                | Request
                | External
                | Primitive
                | Data
                | Type
                | Import
                | From
                | As
                | Use
                | Handler
                | For
                | Parallel
                | If
                | Else
                | Match
                | Case
                | Return
                | Next
                | Break
                | Var
                | Let
                | Then
                | In
                | With
                | Of
        )
}

/// The checks every input gets: parsing does not panic (a panic fails the test case), parsing is
/// deterministic, and a certainly invalid text gets at least one error diagnostic. Returns whether
/// the parser reported an error.
fn check(src: &str) -> Result<bool, TestCaseError> {
    let (first, has_error) = check_errors(src)?;
    if !has_error {
        let (second, _) = parse_checked(src);
        prop_assert_eq!(
            fingerprint(&first),
            fingerprint(&second),
            "parsing is not deterministic for {:?}",
            src
        );
    }
    Ok(has_error)
}

/// Loads `src` as the entry `main.kt` of a one-file project (no prelude) and resolves its names:
/// no panic, and a text with syntax errors still reports errors after loading. The loader gets
/// bytes, so its own UTF-8 check (K5006) is exercised by the random bytes.
fn check_loaded(src: &[u8], has_syntax_error: bool) -> Result<(), TestCaseError> {
    let fs = MemoryFs::new().with("main.kt", src);
    let program = load_program(Path::new("main.kt"), &fs, &[]);
    if has_syntax_error {
        prop_assert!(
            program.has_errors(),
            "loading lost the syntax errors of {:?}",
            String::from_utf8_lossy(src)
        );
    }
    Ok(())
}

/// Parses `src` and checks that an incomplete or certainly invalid text gets an error diagnostic.
fn check_errors(src: &str) -> Result<(Parsed, bool), TestCaseError> {
    let (parsed, has_error) = parse_checked(src);
    if parsed.incomplete {
        prop_assert!(
            has_error,
            "the parser said the input is incomplete but reported no error:\n{src:?}"
        );
    }
    if let Some(reason) = certainly_invalid(src) {
        prop_assert!(
            has_error,
            "no error diagnostic although {reason}:\n{src:?}\n{:#?}",
            parsed.diagnostics
        );
    }
    Ok((parsed, has_error))
}

/// Every word, operator and literal shape of the language, plus fragments that exercise the lexer's
/// string and template scanner and the layout pass (§3, §4).
const VOCABULARY: &[&str] = &[
    // Reserved words.
    "agent",
    "request",
    "external",
    "primitive",
    "data",
    "type",
    "import",
    "from",
    "as",
    "use",
    "handler",
    "for",
    "parallel",
    "if",
    "else",
    "match",
    "case",
    "return",
    "next",
    "break",
    "var",
    "let",
    "then",
    "in",
    "with",
    "of",
    "true",
    "false",
    "null",
    // Contextual words.
    "private",
    "public",
    "extends",
    "effect",
    "attribute",
    "integer",
    "number",
    "string",
    "boolean",
    "file",
    "never",
    "unknown",
    "all",
    "io",
    "pure",
    "array",
    "record",
    // Ordinary names, the wildcard, and names that touch the template rule.
    "x",
    "main",
    "f",
    "xf",
    "_",
    "_x",
    "prelude",
    "throw",
    "é",
    // Operators and punctuation.
    "+",
    "-",
    "*",
    "/",
    "%",
    "++",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "!",
    "=",
    "=>",
    "->",
    "?=",
    ":",
    ",",
    ".",
    ";",
    "|",
    "...",
    "?",
    "@",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    // Literals.
    "0",
    "42",
    "-1",
    "+2",
    "1.5",
    "1e3",
    "6.02E-3",
    "1.",
    ".5",
    "9007199254740993",
    "1e999",
    "\"\"",
    "\"s\"",
    "\"a\\n\\$\\/\"",
    "\"\\q\"",
    "\"}\"",
    "\"",
    // Templates and doc annotations, whole and in pieces.
    "f\"",
    "f\"a${x}b\"",
    "f\"${",
    "${",
    "f\"$5 \\${x}\"",
    "@\"doc\"",
    // Comments.
    "//",
    "// c",
    "/*",
    "*/",
    "/* c */",
];

/// Separators between vocabulary entries: mostly spaces and line ends (a line end followed by a
/// declaration keyword starts a new chunk), sometimes nothing, so that neighbours fuse.
const SEPARATORS: &[&str] = &[" ", " ", "\n", "\n", "\n  ", "", "\r\n", "\t"];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop::sample::select(VOCABULARY),
            prop::sample::select(SEPARATORS),
        ),
        0..60,
    )
    .prop_map(|words| {
        let mut text = String::new();
        for (word, sep) in words {
            text.push_str(word);
            text.push_str(sep);
        }
        text
    })
}

/// The directory of the `lang` crate's parent: the workspace root.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.kt` file directly in `dir`, sorted, with its text.
fn kt_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    let mut files: Vec<(PathBuf, String)> = entries
        .map(|entry| {
            entry
                .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
                .path()
        })
        .filter(|path| path.extension().is_some_and(|ext| ext == "kt"))
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            (path, text)
        })
        .collect();
    files.sort();
    files
}

/// The example programs and every prelude file: valid programs to cut up.
fn valid_programs() -> Vec<(PathBuf, String)> {
    let root = workspace_root();
    let mut files = kt_files(&root.join("examples"));
    files.extend(kt_files(&root.join("prelude/kt")));
    files.extend(kt_files(&root.join("prelude/kt/prelude")));
    assert!(
        files.len() >= 15,
        "expected the examples and the prelude files, found {}",
        files.len()
    );
    files
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// Arbitrary Unicode text, including control characters and line ends of every kind.
    #[test]
    fn random_text_never_panics(src in any::<String>()) {
        let has_error = check(&src)?;
        check_loaded(src.as_bytes(), has_error)?;
    }

    /// Arbitrary bytes, decoded lossily: invalid sequences become U+FFFD, as a host reading a file
    /// with a wrong encoding would hand them over.
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let has_error = check(&String::from_utf8_lossy(&bytes))?;
        check_loaded(&bytes, has_error)?;
    }

    /// Random sequences of katari tokens: close enough to programs to get past the lexer and deep
    /// into the layout pass and the grammar.
    #[test]
    fn token_soup_never_panics(src in token_soup()) {
        let has_error = check(&src)?;
        check_loaded(src.as_bytes(), has_error)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// An example or prelude file with a random run of words (whitespace-separated pieces) cut out
    /// of it: a realistic broken edit, which the per-declaration recovery has to survive.
    #[test]
    fn valid_program_with_words_removed_never_panics(
        file in any::<prop::sample::Index>(),
        start in any::<prop::sample::Index>(),
        len in 1usize..6,
    ) {
        let files = programs();
        let (_, text) = &files[file.index(files.len())];
        let words: Vec<&str> = text.split_inclusive(char::is_whitespace).collect();
        let start = start.index(words.len());
        let end = (start + len).min(words.len());
        let src: String = words[..start].iter().chain(&words[end..]).copied().collect();
        let has_error = check(&src)?;
        check_loaded(src.as_bytes(), has_error)?;
    }
}

/// The example and prelude files, read once for the whole test binary.
fn programs() -> &'static [(PathBuf, String)] {
    static PROGRAMS: std::sync::OnceLock<Vec<(PathBuf, String)>> = std::sync::OnceLock::new();
    PROGRAMS.get_or_init(valid_programs)
}

/// Every example program and prelude file parses without errors, and every truncation of it gets
/// the checks of [`check`].
///
/// A file is cut at every line end, and parsed from its start up to the cut. Within a line the cuts
/// are denser (before every token, and one byte into every string, template and multi-character
/// operator), and there the text parsed runs from the start of the enclosing top-level
/// declaration: the grammar is a sequence of declarations, so that text is also the truncation of
/// a valid program, and the parser handles each declaration on its own anyway (§4.4), so nothing
/// is lost by leaving out the declarations before it, while the test stays fast.
/// `FRONT_END_EVERY_CHAR=1` cuts the whole file at every character instead (about four minutes in a
/// debug build).
#[test]
fn every_prefix_of_every_valid_program() {
    let every_char = std::env::var_os("FRONT_END_EVERY_CHAR").is_some();
    let mut cuts_checked = 0usize;
    for (path, text) in programs() {
        let (whole, has_error) = parse_checked(text);
        assert!(
            !has_error,
            "{} does not parse cleanly: {:#?}",
            path.display(),
            whole.diagnostics
        );

        let mut cuts: Vec<(usize, usize)> = Vec::new();
        if every_char {
            cuts.extend(text.char_indices().map(|(i, _)| (0, i)));
        } else {
            cuts.extend(text.match_indices('\n').map(|(i, _)| (0, i)));
            let tokens = lex(FileId(0), text).tokens;
            let starts = declaration_starts(text, &tokens);
            assert!(!starts.is_empty(), "{} has no declarations", path.display());
            for (i, &start) in starts.iter().enumerate() {
                let end = starts.get(i + 1).copied().unwrap_or(text.len());
                let (_, has_error) = parse_checked(&text[start..end]);
                assert!(
                    !has_error,
                    "{}: the declaration at byte {start} does not parse on its own",
                    path.display()
                );
            }
            let decl_start = |at: usize| {
                starts
                    .iter()
                    .copied()
                    .take_while(|&s| s <= at)
                    .last()
                    .unwrap_or(0)
            };
            for (token, span) in &tokens {
                let start = span.start as usize;
                cuts.push((decl_start(start), start));
                let word = Token::keyword(&text[span.range()]).is_some();
                let splits =
                    !word && !matches!(token, Token::Ident(_) | Token::Int(_) | Token::Number(_));
                if splits && span.end - span.start > 1 {
                    cuts.push((decl_start(start), start + 1));
                }
            }
        }
        cuts.push((0, text.len()));
        cuts.retain(|&(_, i)| text.is_char_boundary(i));
        cuts.sort_unstable();
        cuts.dedup();
        for (from, to) in cuts {
            if let Err(failure) = check(&text[from..to]) {
                panic!(
                    "{} from byte {from} to byte {to}: {failure}",
                    path.display()
                );
            }
            cuts_checked += 1;
        }
    }
    assert!(
        cuts_checked > 5000,
        "only {cuts_checked} truncations were checked"
    );
}

/// Byte offsets where a top-level declaration starts: a declaration word (or the `@` of its doc) in
/// column 1, outside every bracket, not preceded by the doc, `private`, `external` or `primitive`
/// that belong to it. (Column 1 keeps out `private` as a type atom, as in `string of private`.)
fn declaration_starts(text: &str, tokens: &[(Token<'_>, katari_lang::source::Span)]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut depth = 0usize;
    let mut before: Vec<&Token<'_>> = Vec::new();
    for (token, span) in tokens {
        match token {
            Token::LParen
            | Token::LBracket
            | Token::LBrace
            | Token::InterpOpen
            | Token::TemplateStart => depth += 1,
            Token::RParen
            | Token::RBracket
            | Token::RBrace
            | Token::InterpClose
            | Token::TemplateEnd => depth = depth.saturating_sub(1),
            Token::Newline => continue,
            _ => {}
        }
        let attached = matches!(
            before.as_slice(),
            [.., Token::At]
                | [.., Token::At, Token::Str(_)]
                | [
                    ..,
                    Token::Ident("private") | Token::External | Token::Primitive
                ]
        );
        let column_one =
            span.start == 0 || text.as_bytes().get(span.start as usize - 1) == Some(&b'\n');
        if depth == 0 && column_one && token.starts_declaration() && !attached {
            starts.push(span.start as usize);
        }
        before.push(token);
    }
    starts
}

/// Deep nesting of every bracket and prefix operator: the recursive descent must not overflow the
/// stack of a test thread (chumsky grows it with `stacker`; the layout pass keeps an explicit stack).
///
/// Parsing, dropping the tree, and loading with name resolution are checked; the derived `Debug`
/// of a tree this deep recurses once per level and overflows a 2 MiB test thread, so there is no
/// determinism check. (There is no nesting limit: at about 10,000 nested blocks, the recursive
/// drop of the tree overflows such a thread in a debug build.)
#[test]
fn deep_nesting_does_not_overflow() {
    const DEPTH: usize = 2_000;
    let bodies = [
        format!("{}1{}", "(".repeat(DEPTH), ")".repeat(DEPTH)),
        format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH)),
        format!("{}1{}", "{ ".repeat(DEPTH), " }".repeat(DEPTH)),
        format!("{}x", "-".repeat(DEPTH)),
        format!("{}x", "!".repeat(DEPTH)),
        format!("{}x{}", "f\"${".repeat(DEPTH), "}\"".repeat(DEPTH)),
        format!("x{}", ".y".repeat(DEPTH)),
        format!("x{}", "()".repeat(DEPTH)),
        format!("{}1", "1 + ".repeat(DEPTH)),
        "(".repeat(DEPTH),
        "f\"${".repeat(DEPTH),
    ];
    let mut sources: Vec<String> = bodies
        .iter()
        .map(|body| format!("agent main() {{\n  {body}\n}}\n"))
        .collect();
    let ty = format!("{}integer{}", "array[".repeat(DEPTH), "]".repeat(DEPTH));
    sources.push(format!("type t = {ty}\n"));
    let agent_ty = format!("{}integer", "agent never -> ".repeat(DEPTH));
    sources.push(format!("type t = {agent_ty}\n"));
    for src in &sources {
        let shown = &src[..src.len().min(40)];
        let (_, has_error) = check_errors(src).unwrap_or_else(|e| panic!("{e}"));
        check_loaded(src.as_bytes(), has_error).unwrap_or_else(|e| panic!("{shown}…: {e}"));
    }
}
