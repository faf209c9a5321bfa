//! Bounded property tests: loading, resolving, checking and rendering never panic, whatever
//! broken program they are given.
//!
//! The inputs are real programs — the examples, the conformance programs of `language.md` §13
//! and the checker's golden cases — with a few random token-level mutations: a token deleted,
//! duplicated or swapped with its neighbour, an identifier replaced by another word (often a
//! keyword or a prelude name), a literal replaced by another literal. Such near-miss programs get
//! past the parser and reach the checker's rarely travelled error paths. Some cases mutate a
//! prelude module instead, which breaks the declarations every program depends on. The case count
//! keeps the file to a few seconds in a debug build.
//!
//! The prelude's `.kt` files are read from `prelude/kt/` rather than through the `katari-prelude`
//! crate, which depends on the runtime and so on this crate.

use std::path::{Path, PathBuf};

use katari_lang::check::{AllNatives, check_program};
use katari_lang::lexer::lex;
use katari_lang::load::{MemoryFs, PreludeSource, load_program};
use katari_lang::render::render;
use katari_lang::source::FileId;
use katari_lang::token::Token;
use proptest::prelude::*;

/// Words an identifier may be replaced with: keywords, contextual words, prelude qualifiers and
/// names, and names the corpus uses, so that replacements often still resolve.
const WORDS: &[&str] = &[
    "agent",
    "request",
    "data",
    "type",
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
    "prelude",
    "throw",
    "catch",
    "panic",
    "json",
    "decode",
    "get",
    "map",
    "filter",
    "value",
    "target",
    "continuation",
    "main",
    "x",
    "n",
    "T",
    "E",
    "_",
];

/// Literals a literal may be replaced with.
const LITERALS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2.5",
    "1e400",
    "\"\"",
    "\"s\"",
    "true",
    "false",
    "null",
    "9007199254740993",
];

/// One edit of a program's token sequence; the indices pick among the tokens the edit applies to.
#[derive(Clone, Debug)]
enum Mutation {
    Delete(prop::sample::Index),
    Duplicate(prop::sample::Index),
    SwapWithNext(prop::sample::Index),
    ReplaceIdent(prop::sample::Index, prop::sample::Index),
    ReplaceLiteral(prop::sample::Index, prop::sample::Index),
    /// Inserts a word before a token.
    Insert(prop::sample::Index, prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let index = any::<prop::sample::Index>;
    prop_oneof![
        index().prop_map(Mutation::Delete),
        index().prop_map(Mutation::Duplicate),
        index().prop_map(Mutation::SwapWithNext),
        (index(), index()).prop_map(|(a, b)| Mutation::ReplaceIdent(a, b)),
        (index(), index()).prop_map(|(a, b)| Mutation::ReplaceLiteral(a, b)),
        (index(), index()).prop_map(|(a, b)| Mutation::Insert(a, b)),
    ]
}

/// Applies one mutation to `text`, lexing it afresh (earlier edits move every token).
fn apply(text: &str, m: &Mutation) -> String {
    let lexed = lex(FileId(0), text);
    let tokens: Vec<(&Token<'_>, std::ops::Range<usize>)> =
        lexed.tokens.iter().map(|(t, s)| (t, s.range())).collect();
    if tokens.is_empty() {
        return text.to_string();
    }
    let replace = |range: std::ops::Range<usize>, with: &str| {
        format!("{}{}{}", &text[..range.start], with, &text[range.end..])
    };
    match m {
        Mutation::Delete(i) => replace(tokens[i.index(tokens.len())].1.clone(), ""),
        Mutation::Duplicate(i) => {
            let range = tokens[i.index(tokens.len())].1.clone();
            let copy = format!("{} {}", &text[range.clone()], &text[range.clone()]);
            replace(range, &copy)
        }
        Mutation::SwapWithNext(i) => {
            let at = i.index(tokens.len());
            let Some((_, next)) = tokens.get(at + 1) else {
                return text.to_string();
            };
            let this = tokens[at].1.clone();
            format!(
                "{}{}{}{}{}",
                &text[..this.start],
                &text[next.clone()],
                &text[this.end..next.start],
                &text[this.clone()],
                &text[next.end..]
            )
        }
        Mutation::ReplaceIdent(i, w) => {
            let idents: Vec<_> = tokens
                .iter()
                .filter(|(t, _)| matches!(t, Token::Ident(_)))
                .collect();
            if idents.is_empty() {
                return text.to_string();
            }
            replace(
                idents[i.index(idents.len())].1.clone(),
                WORDS[w.index(WORDS.len())],
            )
        }
        Mutation::ReplaceLiteral(i, l) => {
            let literals: Vec<_> = tokens
                .iter()
                .filter(|(t, _)| {
                    matches!(
                        t,
                        Token::Int(_)
                            | Token::Number(_)
                            | Token::Str(_)
                            | Token::True
                            | Token::False
                            | Token::Null
                    )
                })
                .collect();
            if literals.is_empty() {
                return text.to_string();
            }
            replace(
                literals[i.index(literals.len())].1.clone(),
                LITERALS[l.index(LITERALS.len())],
            )
        }
        Mutation::Insert(i, w) => {
            let at = tokens[i.index(tokens.len())].1.start;
            format!(
                "{} {} {}",
                &text[..at],
                WORDS[w.index(WORDS.len())],
                &text[at..]
            )
        }
    }
}

/// Loads `main` (as `main.kt`) with the prelude, one prelude module possibly replaced, checks the
/// program and renders every diagnostic. A panic anywhere fails the case.
fn load_and_check(main: &str, prelude_edit: Option<(usize, &str)>) -> Result<(), TestCaseError> {
    let fs = MemoryFs::new().with("main.kt", main);
    let prelude: Vec<PreludeSource<'_>> = prelude_files()
        .iter()
        .enumerate()
        .map(|(i, f)| PreludeSource {
            module: &f.module,
            path: &f.path,
            text: match prelude_edit {
                Some((j, text)) if i == j => text,
                _ => &f.text,
            },
        })
        .collect();
    let program = load_program(Path::new("main.kt"), &fs, &prelude);
    let checked = check_program(&program, &AllNatives);
    for diagnostic in program.diagnostics.iter().chain(&checked.diagnostics) {
        if let Some(label) = &diagnostic.primary {
            let len = program.sources.get(label.file).text.len();
            prop_assert!(
                label.span.end as usize <= len && label.span.start <= label.span.end,
                "{:?} points outside its file ({} bytes):\n{main}",
                diagnostic,
                len
            );
        }
        render(diagnostic, &program.sources, false);
    }
    Ok(())
}

/// The directory of the workspace.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.kt` file directly in `dir`, sorted.
fn kt_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "kt"))
        .collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect()
}

/// One prelude module as the interpreter embeds it.
struct PreludeFile {
    module: String,
    path: String,
    text: String,
}

/// The prelude modules from `prelude/kt/`: `prelude.kt` is the module `prelude`, and
/// `prelude/<name>.kt` the module `prelude.<name>`.
fn prelude_files() -> &'static [PreludeFile] {
    static FILES: std::sync::OnceLock<Vec<PreludeFile>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let kt = workspace_root().join("prelude/kt");
        let read = |path: PathBuf| {
            std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        };
        let mut files = vec![PreludeFile {
            module: "prelude".into(),
            path: "<prelude>/prelude.kt".into(),
            text: read(kt.join("prelude.kt")),
        }];
        let mut names: Vec<String> = std::fs::read_dir(kt.join("prelude"))
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        for name in names.iter().filter_map(|n| n.strip_suffix(".kt")) {
            files.push(PreludeFile {
                module: format!("prelude.{name}"),
                path: format!("<prelude>/prelude/{name}.kt"),
                text: read(kt.join("prelude").join(format!("{name}.kt"))),
            });
        }
        assert!(
            files.len() >= 14,
            "expected the 14 prelude modules, found {}",
            files.len()
        );
        files
    })
}

/// The programs to mutate, read once.
fn corpus() -> &'static [String] {
    static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = workspace_root();
        let mut files = kt_files(&root.join("examples"));
        files.extend(kt_files(&root.join("tests/scripts/conformance")));
        files.extend(kt_files(&root.join("tests/scripts/checker")));
        assert!(
            files.len() >= 40,
            "expected the examples and the conformance programs, found {}",
            files.len()
        );
        files
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// A corpus program with one to four token-level mutations.
    #[test]
    fn mutated_programs_never_panic(
        file in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..5),
    ) {
        let files = corpus();
        let mut text = files[file.index(files.len())].clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        load_and_check(&text, None)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// An intact program over a prelude with one mutated module: broken library declarations must
    /// not crash the checking of the user's code either.
    #[test]
    fn mutated_prelude_never_panics(
        file in any::<prop::sample::Index>(),
        module in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..3),
    ) {
        let files = corpus();
        let main = &files[file.index(files.len())];
        let module = module.index(prelude_files().len());
        let mut text = prelude_files()[module].text.clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        load_and_check(main, Some((module, &text)))?;
    }
}

/// Deeply nested expressions, patterns and types reach the checker's recursive walks without
/// overflowing the stack of a test thread.
#[test]
fn deep_nesting_does_not_overflow() {
    const DEPTH: usize = 1_000;
    let bodies = [
        format!("{}1{}", "[".repeat(DEPTH), "]".repeat(DEPTH)),
        format!("{}1{}", "{ ".repeat(DEPTH), " }".repeat(DEPTH)),
        format!("{}1", "1 + ".repeat(DEPTH)),
        format!("{}true", "!".repeat(DEPTH)),
        format!("main{}", "()".repeat(DEPTH)),
        format!("main{}", "[integer]".repeat(DEPTH)),
        format!("let {}x{} = 1", "[".repeat(DEPTH), "]".repeat(DEPTH)),
        format!(
            "let x: {}integer{} = 1",
            "array[".repeat(DEPTH),
            "]".repeat(DEPTH)
        ),
        format!("{}1{}", "if (true) { ".repeat(DEPTH), " }".repeat(DEPTH)),
    ];
    for body in &bodies {
        let program = format!("agent main() {{\n  {body}\n}}\n");
        load_and_check(&program, None).unwrap_or_else(|e| panic!("{e}"));
    }
}
