//! The host's bridge to the front end: loads an entry file from disk and hands back its sources
//! and diagnostics.
//!
//! `katari_lang::load::load_program(entry, fs, prelude)` is being written. Once it exists,
//! [`load`] becomes a call to it with a disk-backed `FileSystem` and the prelude
//! of `katari_prelude::FILES` (module, path, text), the fallback below goes, and `Loaded` becomes
//! `katari_lang::load::Program` (it has the same two fields).

use std::path::Path;

use katari_lang::diag::{Code, Diagnostic};
use katari_lang::parser;
use katari_lang::source::{SourceFile, SourceMap};

/// What the front end produced for one entry file: every source it read and its diagnostics.
#[derive(Debug, Default)]
pub struct Loaded {
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

/// Loads `entry` (as the user wrote it) with everything it needs.
pub fn load(entry: &Path) -> Loaded {
    parse_only(entry)
}

/// The stand-in until the loader lands: reads the one file, then lexes and parses it.
fn parse_only(entry: &Path) -> Loaded {
    let mut loaded = Loaded::default();
    let shown = entry.display().to_string();
    let text = match std::fs::read(entry) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => {
                let message = format!("cannot read `{shown}`: the file is not valid UTF-8");
                loaded
                    .diagnostics
                    .push(Diagnostic::unlocated(Code::K5006, message));
                return loaded;
            }
        },
        Err(err) => {
            let message = format!("cannot read `{shown}`: {}", io_reason(&err));
            loaded
                .diagnostics
                .push(Diagnostic::unlocated(Code::K5006, message));
            return loaded;
        }
    };
    let file = loaded.sources.add(SourceFile::new(shown, text));
    let text = loaded.sources.get(file).text.clone();
    loaded.diagnostics = parser::parse(file, &text).diagnostics;
    loaded
}

/// An IO error in words, without the `(os error N)` suffix of its `Display`.
fn io_reason(err: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match err.kind() {
        ErrorKind::NotFound => "no such file".to_string(),
        ErrorKind::PermissionDenied => "permission denied".to_string(),
        ErrorKind::IsADirectory => "it is a directory".to_string(),
        _ => err.to_string(),
    }
}
