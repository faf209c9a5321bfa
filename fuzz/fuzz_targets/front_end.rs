//! Fuzz target for the whole front end: arbitrary bytes through lexing, layout and parsing, then
//! loading, name resolution and type checking of a small in-memory project, then rendering of the
//! diagnostics.
//!
//! Bytes become text in two ways. The parser takes `&str`, and a host that reads a file hands it
//! over only after UTF-8 decoding, so the parser is fed the *lossily* decoded input: every input
//! reaches the lexer (rejecting invalid UTF-8 would throw away most byte-level mutations), and an
//! invalid sequence turns into U+FFFD, a three-byte character that exercises the char-boundary
//! arithmetic of the lexer and of diagnostic rendering. The loader, by contrast, reads bytes through
//! its `FileSystem`, so it gets the raw bytes and its own decoding (K5006) is fuzzed too.
//!
//! The input may hold several files: a line `==> PATH` starts a new file named `PATH` (the text
//! before the first such line is `main.kt`, the entry), so one input can exercise imports between
//! modules and a `katari.toml`.
//!
//! Beyond "no panic", two cheap invariants are checked: a parse that says the input is incomplete
//! reported an error, and parsing the same text twice gives the same diagnostics.

#![no_main]

use std::path::Path;

use katari_lang::check::{AllNatives, check_program};
use katari_lang::load::{MemoryFs, PreludeSource, load_program};
use katari_lang::parser::parse;
use katari_lang::render::render;
use katari_lang::source::FileId;
use libfuzzer_sys::fuzz_target;

/// The marker that starts a new file inside one fuzz input.
const FILE_MARKER: &[u8] = b"\n==> ";

/// The most diagnostics rendered per input: rendering is slow, and one bad span is enough.
const RENDER_LIMIT: usize = 8;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let parsed = parse(FileId(0), &text);
    let has_error = parsed.diagnostics.iter().any(|d| d.is_error());
    assert!(
        !parsed.incomplete || has_error,
        "incomplete input without an error diagnostic"
    );
    let again = parse(FileId(0), &text);
    assert_eq!(
        parsed.diagnostics, again.diagnostics,
        "parsing is not deterministic"
    );

    let program = load_program(Path::new("main.kt"), &project(data), &prelude());
    let checked = check_program(&program, &AllNatives);
    let diagnostics = program.diagnostics.iter().chain(&checked.diagnostics);
    for diag in diagnostics.take(RENDER_LIMIT) {
        let _ = render(diag, &program.sources, false);
    }
});

/// Splits the input into files at every `==> PATH` line; the first part is `main.kt`.
fn project(data: &[u8]) -> MemoryFs {
    let mut fs = MemoryFs::new();
    let mut parts = split(data, FILE_MARKER);
    fs.insert("main.kt", parts.next().unwrap_or_default());
    for part in parts {
        let (name, body) = match part.iter().position(|&b| b == b'\n') {
            Some(end) => (&part[..end], &part[end + 1..]),
            None => (part, &[][..]),
        };
        let name = String::from_utf8_lossy(name);
        fs.insert(name.trim(), body);
    }
    fs
}

/// `data` cut at every occurrence of `marker` (the marker itself is dropped).
fn split<'a>(mut data: &'a [u8], marker: &'a [u8]) -> impl Iterator<Item = &'a [u8]> {
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        match data.windows(marker.len()).position(|w| w == marker) {
            Some(at) => {
                let part = &data[..at];
                data = &data[at + marker.len()..];
                Some(part)
            }
            None => {
                done = true;
                Some(data)
            }
        }
    })
}

/// The real prelude, as the interpreter embeds it.
fn prelude() -> Vec<PreludeSource<'static>> {
    katari_prelude::FILES
        .iter()
        .map(|f| PreludeSource {
            module: f.module,
            path: f.path,
            text: f.text,
        })
        .collect()
}
