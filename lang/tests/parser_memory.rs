//! The parser frees what it builds: parsing the same text again and again does not grow the
//! process (a REPL parses several times per input, for as long as the session lasts). Each
//! parse used to leak its parser, about 11 KB, through reference cycles.

#![cfg(target_os = "linux")]

use katari_lang::parser::parse;
use katari_lang::source::FileId;

/// The resident set size of this process, in bytes.
fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("read /proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("statm has a resident field");
    pages * 4096
}

#[test]
fn repeated_parses_do_not_grow_the_process() {
    let text = "agent f(n: integer) -> integer {\n  let g = agent (m: integer) -> integer { m + n }\n  \
                for (let i in array.range(start = 0, end = n), var t: integer = 0) {\n    \
                next null with { t = t + g(m = i) }\n  } then (_) { t }\n}\n";
    let parsed = parse(FileId(0), text);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    for _ in 0..200 {
        drop(parse(FileId(0), text));
    }
    let before = resident();
    for _ in 0..3000 {
        drop(parse(FileId(0), text));
    }
    let grown = resident().saturating_sub(before);
    // A leak of 11 KB per parse would be 33 MB here.
    assert!(
        grown < 8 << 20,
        "3000 parses grew the process by {grown} bytes"
    );
}
