//! Fuzz target for the front end: arbitrary bytes through lexing, layout and parsing, then loading
//! and name resolution of a small in-memory project, then rendering of the diagnostics.
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
//! modules and a `katari.toml`. A marker `<<REPEAT N>>TEXT<<END>>` stands for TEXT written N
//! times (`chains.rs`), so an input can hold a long flat chain such as `1 + 1 + …`.
//!
//! Beyond "no panic", two cheap invariants are checked: a parse that says the input is incomplete
//! reported an error, and parsing the same text twice gives the same diagnostics. The `check`
//! target adds the type checker, at about six times the cost per input.

#![no_main]

mod chains;
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let data = &*chains::expand(data);
    common::parse_checks(data);
    let program = common::load(data);
    common::render_some(&program, program.diagnostics.iter());
});
