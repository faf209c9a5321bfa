//! What the prelude's evaluator tests share: loading, checking and lowering one program with the
//! whole embedded prelude, for a host that touches nothing.

use std::path::Path;
use std::sync::Arc;

use katari_lang::check;
use katari_lang::load::{MemoryFs, load_program};
use katari_prelude::natives::RuntimeNatives;
use katari_runtime::machine::Machine;
use katari_runtime::machine::QuietHost;

/// Loads and checks `text` as the module at `path` (with the whole prelude) and lowers it for
/// [`QuietHost`]; the messages of its errors when it does not check.
pub fn lowered(path: &str, text: &str) -> Result<Machine, Vec<String>> {
    let prelude = katari_prelude::sources();
    let fs = MemoryFs::new().with(path, text.as_bytes().to_vec());
    let program = load_program(Path::new(path), &fs, &prelude);
    let table = katari_prelude::natives::table();
    let checked = check::check_program(&program, &RuntimeNatives(&table));
    let errors: Vec<String> = program
        .diagnostics
        .iter()
        .chain(&checked.diagnostics)
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(katari_runtime::lower::lower(
        &program,
        &checked,
        &table,
        katari_prelude::natives::deferred,
        Arc::new(QuietHost),
    ))
}
