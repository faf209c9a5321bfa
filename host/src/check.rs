//! `katari check FILE...` (`host.md` §5.7): loads each file, prints its diagnostics as text on
//! stderr or as JSON lines on stdout, and tells whether any of them is an error.

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::PathBuf;

use katari_lang::render;

use crate::cli::Format;
use crate::front;

/// What a check found, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// No diagnostics, or warnings only.
    Clean,
    /// At least one error.
    Errors,
}

/// Checks every file and writes the diagnostics: JSON lines to `out`, or rendered text to `err`.
///
/// A diagnostic reported twice (a module imported by two of the files) is written once.
pub fn check(
    files: &[PathBuf],
    format: Format,
    color: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> io::Result<Outcome> {
    let mut outcome = Outcome::Clean;
    let mut written = HashSet::new();
    for file in files {
        let (program, _checked) = front::load(file);
        for diag in &program.diagnostics {
            if diag.is_error() {
                outcome = Outcome::Errors;
            }
            match format {
                Format::Json => {
                    let line = render::to_json(diag, &program.sources).to_string();
                    if written.insert(line.clone()) {
                        writeln!(out, "{line}")?;
                    }
                }
                Format::Text => {
                    let text = render::render(diag, &program.sources, color);
                    if written.insert(text.clone()) {
                        // A blank line between diagnostics keeps snippets apart.
                        if written.len() > 1 {
                            writeln!(err)?;
                        }
                        err.write_all(text.as_bytes())?;
                    }
                }
            }
        }
    }
    out.flush()?;
    err.flush()?;
    Ok(outcome)
}
