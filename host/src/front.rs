//! The host's bridge to the front end: loads an entry script from disk with everything it
//! imports and the embedded prelude.
//!
//! The front end does no IO itself; [`DiskFs`] is the file system it reads through.

use std::io;
use std::path::{Component, Path, PathBuf};

use katari_lang::ast;
use katari_lang::check::{self, Checked};
use katari_lang::load::{self, FileSystem, Program};
use katari_lang::types::{Rest, Ty, TyKind};

/// Loads, parses, resolves and type-checks the program whose entry is `entry` (as the user
/// wrote it). The checker's diagnostics are appended to the program's.
pub fn load(entry: &Path) -> (Program, Checked) {
    let table = katari_prelude::natives::table();
    load_with(entry, &RuntimeNatives(&table))
}

/// [`load()`] with the natives the checker should consider registered (K5002).
///
/// The front end walks syntax trees recursively, and a long operator chain nests as deep as it
/// is long, so it runs on a thread with a large stack (virtual memory, touched only as needed).
pub fn load_with(entry: &Path, natives: &(dyn check::Natives + Sync)) -> (Program, Checked) {
    let work = || {
        let load = |prelude_use| {
            let mut program =
                load::load_program_with(entry, &DiskFs, &katari_prelude::sources(), prelude_use);
            let checked = check::check_program(&program, natives);
            program
                .diagnostics
                .extend(checked.diagnostics.iter().cloned());
            (program, checked)
        };
        // Only the prelude modules the program refers to; a program with anything to report
        // is loaded again with all of them, so that diagnostics never depend on the shortcut,
        // and so is one that may decode a value naming any prelude declaration (§11.1 decodes
        // a `$agent` or `$constructor` of every loaded declaration).
        let (program, checked) = load(load::PreludeUse::Referenced);
        if program.diagnostics.is_empty() && !decodes_any_declaration(&program, &checked) {
            (program, checked)
        } else {
            load(load::PreludeUse::All)
        }
    };
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("katari-front".into())
            .stack_size(FRONT_STACK)
            .spawn_scoped(scope, work)
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => work(),
        }
    })
}

/// Whether the program may decode a wire value that names a declaration of a prelude module it
/// does not refer to: a run argument or served call of one of the entry module's agents, or an
/// answer to a request, whose type can hold agents or data values of any module (anything but
/// scalars and closed arrays and records of them), or a decoding native (`json`, `reflection`,
/// `mcp`, `webhook`).
fn decodes_any_declaration(program: &Program, checked: &Checked) -> bool {
    const DECODING: [&str; 4] = [
        "prelude.json",
        "prelude.reflection",
        "prelude.mcp",
        "prelude.webhook",
    ];
    if program
        .modules
        .iter()
        .any(|m| DECODING.contains(&m.name.as_str()))
    {
        return true;
    }
    checked.signatures.iter().any(|(r, sig)| {
        let decl = program
            .module(r.module)
            .and_then(|m| m.ast.decls.get(r.index as usize));
        match decl {
            Some(ast::Decl::Agent(_)) if r.module == program.entry => {
                sig.params.iter().any(|p| !holds_scalars_only(&p.ty))
            }
            Some(ast::Decl::Request(_)) => !holds_scalars_only(&sig.ret),
            _ => false,
        }
    })
}

/// Whether every value of the type is built of scalars (no agent or data value can be inside).
fn holds_scalars_only(ty: &Ty) -> bool {
    match &ty.kind {
        TyKind::Never
        | TyKind::Null
        | TyKind::Boolean
        | TyKind::Integer
        | TyKind::Number
        | TyKind::String
        | TyKind::File => true,
        TyKind::Seq { prefix, rest } => {
            prefix.iter().all(holds_scalars_only) && rest.as_deref().is_none_or(holds_scalars_only)
        }
        TyKind::Object { fields, rest } => {
            fields.iter().all(|f| holds_scalars_only(&f.ty))
                && match rest {
                    Rest::Closed => true,
                    Rest::Of(t) => holds_scalars_only(t),
                    // Other keys hold `unknown`.
                    Rest::Open => false,
                }
        }
        TyKind::Union(members) => members.iter().all(holds_scalars_only),
        _ => false,
    }
}

/// The stack of the thread that loads and checks a program.
const FRONT_STACK: usize = 512 * 1024 * 1024;

pub use katari_prelude::natives::RuntimeNatives;

/// The largest source file katari reads (16 MiB): a module is read whole before it is parsed,
/// so without a bound `katari check /dev/zero` would read until memory ran out. The limit is in
/// docs/guide/command-line.md.
pub const SOURCE_LIMIT: u64 = 16 * 1024 * 1024;

/// Reads the file at `path` whole, refusing one larger than `limit` bytes without reading more
/// than `limit + 1` of them (a device or a pipe has no size to ask for beforehand).
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let expected = file.metadata().map(|m| m.len()).unwrap_or(0);
    if expected > limit {
        return Err(too_large(Some(expected), limit));
    }
    let mut bytes = Vec::with_capacity(expected as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(None, limit));
    }
    Ok(bytes)
}

fn too_large(size: Option<u64>, limit: u64) -> io::Error {
    let size = size.map(|n| format!(" ({n} bytes)")).unwrap_or_default();
    io::Error::other(format!(
        "the file is larger than katari's limit of {limit} bytes{size}; split it into smaller files"
    ))
}

/// The real file system, with paths relative to the working directory.
#[derive(Debug, Clone, Copy)]
pub struct DiskFs;

impl FileSystem for DiskFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        read_bounded(path, SOURCE_LIMIT)
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    /// Walks up lexically, and above the working directory with `..` components (so displayed
    /// paths stay relative) until the real folder is the file-system root: `katari.toml` is
    /// searched for from the entry's folder upwards (`language.md` §2.2).
    fn parent(&self, dir: &Path) -> Option<PathBuf> {
        let above_working_dir = dir.as_os_str().is_empty()
            || dir.components().next_back() == Some(Component::ParentDir);
        if dir.is_absolute() || !above_working_dir {
            return dir.parent().map(Path::to_path_buf);
        }
        let here = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        std::fs::canonicalize(here).ok()?.parent()?;
        Some(dir.join(".."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_walks_up_relative_paths_past_the_working_directory() {
        assert_eq!(DiskFs.parent(Path::new("a/b")), Some(PathBuf::from("a")));
        assert_eq!(DiskFs.parent(Path::new("a")), Some(PathBuf::from("")));
        assert_eq!(DiskFs.parent(Path::new("")), Some(PathBuf::from("..")));
        assert_eq!(DiskFs.parent(Path::new("..")), Some(PathBuf::from("../..")));
    }

    #[test]
    fn parent_stops_at_the_root() {
        assert_eq!(DiskFs.parent(Path::new("/")), None);
        assert_eq!(DiskFs.parent(Path::new("/tmp")), Some(PathBuf::from("/")));
    }
}
