//! What the prelude's evaluator tests share: a host that touches nothing, and loading, checking
//! and lowering one program with the whole embedded prelude.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use katari_lang::check::{self, Natives};
use katari_lang::load::{MemoryFs, PreludeSource, load_program};
use katari_runtime::ir::{Answer, RequestInfo};
use katari_runtime::machine::{Escalation, Host, Machine};
use katari_runtime::value::Value;

/// A host that prints nowhere, knows no secrets and answers nothing.
pub struct QuietHost;

impl Host for QuietHost {
    fn print(&self, _: &str) {}
    fn eprint(&self, _: &str) {}
    fn secret(&self, _: &str) -> Result<Option<String>, String> {
        Ok(None)
    }
    fn project_env(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    fn blob_dir(&self) -> PathBuf {
        std::env::temp_dir().join("katari-prelude-test-blobs")
    }
    fn escalate(&self, _: &RequestInfo, _: &Answer, _: &Value) -> Escalation {
        Escalation::NoAnswer
    }
}

struct Table<'a>(&'a katari_runtime::native::NativeTable);

impl Natives for Table<'_> {
    fn has(&self, name: &str) -> bool {
        self.0.get(name).is_some() || katari_prelude::natives::DEFERRED.contains(&name)
    }
}

/// Loads and checks `text` as the module at `path` (with the whole prelude) and lowers it for
/// [`QuietHost`]; the messages of its errors when it does not check.
pub fn lowered(path: &str, text: &str) -> Result<Machine, Vec<String>> {
    let prelude: Vec<PreludeSource<'_>> = katari_prelude::FILES
        .iter()
        .map(|f| PreludeSource {
            module: f.module,
            path: f.path,
            text: f.text,
        })
        .collect();
    let fs = MemoryFs::new().with(path, text.as_bytes().to_vec());
    let program = load_program(Path::new(path), &fs, &prelude);
    let table = katari_prelude::natives::table();
    let checked = check::check_program(&program, &Table(&table));
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
