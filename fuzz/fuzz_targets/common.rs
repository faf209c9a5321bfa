//! Helpers shared by the fuzz targets: the multi-file input format, the prelude, and the parser
//! checks every target starts with.

use std::path::Path;

use katari_lang::diag::Diagnostic;
use katari_lang::load::{MemoryFs, Program, load_program};
use katari_lang::parser::parse;
use katari_lang::render::render;
use katari_lang::source::FileId;

/// The marker that starts a new file inside one fuzz input.
const FILE_MARKER: &[u8] = b"\n==> ";

/// The most diagnostics rendered per input: rendering is slow, and one bad span is enough.
const RENDER_LIMIT: usize = 8;

/// Parses the lossily decoded input twice: a parse that says the input is incomplete must have
/// reported an error, and both parses must give the same diagnostics.
pub fn parse_checks(data: &[u8]) {
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
}

/// Loads the input as a project whose entry is `main.kt`, with the real prelude, and resolves
/// its names.
pub fn load(data: &[u8]) -> Program {
    load_program(
        Path::new("main.kt"),
        &project(data),
        &katari_prelude::sources(),
    )
}

/// Renders the first few of `diagnostics` against the program's sources.
pub fn render_some<'a>(program: &Program, diagnostics: impl Iterator<Item = &'a Diagnostic>) {
    for diag in diagnostics.take(RENDER_LIMIT) {
        let _ = render(diag, &program.sources, false);
    }
}

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
