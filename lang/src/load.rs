//! The module loader (`language.md` §2.1–2.2): finds the project and its source root, reads and
//! parses the entry, the prelude and every module reachable by `import`, then resolves names.
//!
//! The loader performs no IO itself: it reads through a [`FileSystem`], so the host supplies the
//! disk and tests and the REPL supply a [`MemoryFs`]. Loading never fails outright: a program is
//! always returned, with diagnostics for everything that went wrong.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::ast;
use crate::diag::{Code, Diagnostic};
use crate::parser;
use crate::resolve::{self, DeclRef, Names};
use crate::source::{FileId, SourceFile, SourceMap, Span};

/// Read access to source files: the only way the front end sees the outside world.
pub trait FileSystem {
    /// The whole content of the file at `path`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// Whether `path` names an existing regular file.
    fn is_file(&self, path: &Path) -> bool;

    /// The folder above `dir`, for the upward search for `katari.toml`. The default walks the
    /// path lexically (`a/b` → `a` → empty), so a relative entry path is searched only up to the
    /// working directory; a disk implementation may continue above it (with `..` components,
    /// which keeps displayed paths relative) until the file-system root.
    fn parent(&self, dir: &Path) -> Option<PathBuf> {
        dir.parent().map(Path::to_path_buf)
    }

    /// A stable identity for a path: two paths naming the same file must map to the same
    /// identity. The loader uses it to load each file once and to decide whether the entry lies
    /// below the source root. The default normalises lexically ([`normalize`]), which cannot
    /// see that `../src/app.kt` and `app.kt` are one file when the working directory is `src`; a
    /// disk implementation should return the canonical absolute path when there is one.
    fn identity(&self, path: &Path) -> PathBuf {
        normalize(path)
    }
}

/// An in-memory file system: a map from (lexically normalised) paths to contents.
#[derive(Clone, Debug, Default)]
pub struct MemoryFs {
    files: BTreeMap<PathBuf, Vec<u8>>,
}

impl MemoryFs {
    pub fn new() -> MemoryFs {
        MemoryFs::default()
    }

    /// Adds or replaces a file.
    pub fn insert(&mut self, path: impl AsRef<Path>, contents: impl Into<Vec<u8>>) {
        self.files.insert(normalize(path.as_ref()), contents.into());
    }

    /// Builder form of [`MemoryFs::insert`].
    pub fn with(mut self, path: impl AsRef<Path>, contents: impl Into<Vec<u8>>) -> MemoryFs {
        self.insert(path, contents);
        self
    }

    pub fn remove(&mut self, path: impl AsRef<Path>) {
        self.files.remove(&normalize(path.as_ref()));
    }
}

impl FileSystem for MemoryFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files
            .get(&normalize(path))
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such file"))
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.contains_key(&normalize(path))
    }
}

/// One prelude file, embedded in the interpreter (the prelude crate's `FILES` has these fields).
#[derive(Clone, Copy, Debug)]
pub struct PreludeSource<'a> {
    /// The module name, `prelude` or `prelude.array`, ….
    pub module: &'a str,
    /// The path shown in diagnostics, such as `<prelude>/array.kt`.
    pub path: &'a str,
    pub text: &'a str,
}

/// The interpreter's embedded prelude, for tests over real programs.
#[cfg(test)]
pub(crate) fn embedded_prelude() -> Vec<PreludeSource<'static>> {
    katari_prelude::FILES
        .iter()
        .map(|f| PreludeSource {
            module: f.module,
            path: f.path,
            text: f.text,
        })
        .collect()
}

/// Identifies one module of a [`Program`]: an index into [`Program::modules`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct ModuleId(pub u32);

impl ModuleId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One parsed module.
#[derive(Clone, Debug)]
pub struct LoadedModule {
    /// The module name: `util.text`, `prelude.array`.
    pub name: String,
    pub file: FileId,
    pub ast: ast::Module,
    pub is_prelude: bool,
    /// The parser ran out of input inside an unclosed construct (the REPL asks for more).
    pub incomplete: bool,
    /// Primary spans of the syntax errors the parser reported. Later stages use them to avoid
    /// piling cascading errors onto a declaration that did not parse.
    pub syntax_errors: Vec<Span>,
    /// The file could not be read or decoded (K5006); the module is empty.
    pub unreadable: bool,
    /// For every import declaration (by index into `ast.decls`) that found its module, that
    /// module. An import that failed (K2005, K5003, K5006) has no entry; its error is reported.
    pub imports: BTreeMap<usize, ModuleId>,
}

impl LoadedModule {
    /// Whether later stages should expect missing pieces (syntax errors or an unreadable file).
    pub fn is_broken(&self) -> bool {
        self.unreadable || !self.syntax_errors.is_empty()
    }
}

/// Everything loaded for one run: sources, parsed modules, the project settings, the resolved
/// names, and every diagnostic found so far.
#[derive(Clone, Debug)]
pub struct Program {
    pub sources: SourceMap,
    pub modules: Vec<LoadedModule>,
    pub entry: ModuleId,
    /// Loader, parser and resolver diagnostics, in that order per module.
    pub diagnostics: Vec<Diagnostic>,
    /// The folder of the `katari.toml` found, if any.
    pub project_root: Option<PathBuf>,
    /// The folder imports resolve against.
    pub source_root: PathBuf,
    /// `[package].name` of `katari.toml` (informational).
    pub package_name: Option<String>,
    /// The string entries of the `[env]` table of `katari.toml`, in key order.
    pub env: Vec<(String, String)>,
    /// What every name occurrence refers to (§2.4).
    pub names: Names,
}

impl Program {
    pub fn module(&self, id: ModuleId) -> Option<&LoadedModule> {
        self.modules.get(id.index())
    }

    /// The module with that name, user or prelude.
    pub fn module_by_name(&self, name: &str) -> Option<ModuleId> {
        self.modules
            .iter()
            .position(|m| m.name == name)
            .map(|i| ModuleId(i as u32))
    }

    /// Every top-level declaration of every module, in module and declaration order.
    pub fn decls(&self) -> impl Iterator<Item = (DeclRef, &ast::Decl)> {
        self.modules.iter().enumerate().flat_map(|(mi, m)| {
            m.ast.decls.iter().enumerate().map(move |(di, d)| {
                (
                    DeclRef {
                        module: ModuleId(mi as u32),
                        index: di as u32,
                    },
                    d,
                )
            })
        })
    }

    /// The declaration a [`DeclRef`] points at.
    pub fn decl(&self, r: DeclRef) -> Option<&ast::Decl> {
        self.module(r.module)?.ast.decls.get(r.index as usize)
    }

    /// `<module>.<name>` of a top-level declaration, e.g. `util.text.tagged`.
    pub fn qualified_name(&self, r: DeclRef) -> Option<String> {
        let module = self.module(r.module)?;
        let name = self.decl(r)?.name()?;
        Some(format!("{}.{}", module.name, name.text))
    }

    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Loads the program whose entry script is `entry`: the project settings, the entry module, the
/// prelude and everything reachable by `import`, all parsed and name-resolved.
///
/// `entry` is the path as the user wrote it; it is used for display and for the upward search
/// for `katari.toml` (see [`FileSystem::parent`]).
pub fn load_program(entry: &Path, fs: &dyn FileSystem, prelude: &[PreludeSource<'_>]) -> Program {
    load_program_with(entry, fs, prelude, PreludeUse::All)
}

/// Which of the prelude's modules a load parses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PreludeUse {
    /// Every module: what a session that may refer to any of them later needs (the REPL), and
    /// what diagnostics are reported against.
    All,
    /// The root module `prelude` and the modules the program can refer to: those whose default
    /// qualifier (`string`, `json`, …) a loaded module writes before a dot (as tokens, so
    /// comments and whitespace between them do not hide it), and those imported by name,
    /// transitively. Start-up parses and checks a fraction of the prelude.
    ///
    /// A program that loads without diagnostics means the same as with [`PreludeUse::All`]:
    /// every name it uses resolved to the same declaration. Diagnostics can differ (a misspelled
    /// qualifier has fewer modules to be compared with), so a program with any should be loaded
    /// again with `All` to report them.
    Referenced,
}

/// [`load_program`] loading the prelude as `prelude_use` says.
pub fn load_program_with(
    entry: &Path,
    fs: &dyn FileSystem,
    prelude: &[PreludeSource<'_>],
    prelude_use: PreludeUse,
) -> Program {
    let written = entry;
    let entry = normalize(entry);
    let entry_dir = entry.parent().map(Path::to_path_buf).unwrap_or_default();
    let project = find_project(fs, &entry_dir);

    let mut loader = Loader {
        fs,
        sources: SourceMap::new(),
        modules: Vec::new(),
        diagnostics: Vec::new(),
        by_path: HashMap::new(),
        prelude_by_name: HashMap::new(),
        source_root: entry_dir.clone(),
        queue: VecDeque::new(),
        prelude,
        prelude_use,
        qualifiers: HashMap::new(),
    };

    let mut settings = Settings::default();
    let mut manifest_text = None;
    if let Some(root) = &project {
        let path = root.join(MANIFEST);
        match fs.read(&path).map(String::from_utf8) {
            Ok(Ok(text)) => {
                let text = strip_bom(&text).to_string();
                match read_manifest(&text) {
                    Ok(s) => settings = s,
                    Err(problem) => manifest_text = Some((path, text, problem)),
                }
            }
            Ok(Err(_)) => loader.diagnostics.push(Diagnostic::unlocated(
                Code::K5004,
                format!(
                    "cannot read `{}`: the file is not valid UTF-8",
                    path.display()
                ),
            )),
            Err(e) => loader.diagnostics.push(Diagnostic::unlocated(
                Code::K5004,
                format!("cannot read `{}`: {}", path.display(), io_reason(&e)),
            )),
        }
        let src = settings.src.clone().unwrap_or_else(|| "src".to_string());
        loader.source_root = normalize(&root.join(src));
    }

    let entry_name = entry_module_name(
        &entry,
        &fs.identity(&entry),
        &fs.identity(&loader.source_root),
    );
    let entry_id = loader.load_user(written, entry_name, None);

    if let Some((path, text, problem)) = manifest_text {
        let file = loader
            .sources
            .add(SourceFile::new(path.display().to_string(), text));
        let d = match problem.span {
            Some(span) => Diagnostic::new(Code::K5004, "invalid `katari.toml`", file, span)
                .with_label(problem.message),
            None => Diagnostic::unlocated(
                Code::K5004,
                format!("invalid `katari.toml`: {}", problem.message),
            ),
        };
        // Reported first: a bad project file explains any surprise about module names.
        loader.diagnostics.insert(0, d);
    }

    match prelude_use {
        PreludeUse::All => prelude
            .iter()
            .for_each(|source| loader.load_prelude(source)),
        PreludeUse::Referenced => loader.want_prelude("prelude"),
    }
    loader.load_imports();

    let Loader {
        sources,
        modules,
        mut diagnostics,
        source_root,
        ..
    } = loader;
    let (names, resolve_diagnostics) = resolve::resolve(&sources, &modules);
    diagnostics.extend(resolve_diagnostics);
    Program {
        sources,
        modules,
        entry: entry_id,
        diagnostics,
        project_root: project,
        source_root,
        package_name: settings.name,
        env: settings.env,
        names,
    }
}

const MANIFEST: &str = "katari.toml";

/// The settings read from `katari.toml`.
#[derive(Default)]
struct Settings {
    name: Option<String>,
    src: Option<String>,
    env: Vec<(String, String)>,
}

/// Why `katari.toml` was rejected, with the byte span of the offending text when known.
struct ManifestProblem {
    message: String,
    span: Option<Span>,
}

fn read_manifest(text: &str) -> Result<Settings, ManifestProblem> {
    use toml::de::{DeTable, DeValue};

    let table = DeTable::parse(text).map_err(|e| ManifestProblem {
        message: e.message().to_string(),
        span: e.span().map(Span::from),
    })?;
    let table = table.get_ref();
    let mut settings = Settings::default();
    let problem = |message: String, span: std::ops::Range<usize>| ManifestProblem {
        message,
        span: Some(Span::from(span)),
    };

    if let Some(package) = table.get("package") {
        let DeValue::Table(package) = package.get_ref() else {
            return Err(problem("`package` must be a table".into(), package.span()));
        };
        for key in ["name", "src"] {
            if let Some(value) = package.get(key) {
                let DeValue::String(s) = value.get_ref() else {
                    return Err(problem(
                        format!("`package.{key}` must be a string"),
                        value.span(),
                    ));
                };
                let s = Some(s.to_string());
                if key == "name" {
                    settings.name = s;
                } else {
                    settings.src = s;
                }
            }
        }
    }
    if let Some(env) = table.get("env") {
        let DeValue::Table(env) = env.get_ref() else {
            return Err(problem("`env` must be a table".into(), env.span()));
        };
        for (key, value) in env.iter() {
            let DeValue::String(s) = value.get_ref() else {
                return Err(problem(
                    format!("`env.{}` must be a string", key.get_ref()),
                    value.span(),
                ));
            };
            settings
                .env
                .push((key.get_ref().to_string(), s.to_string()));
        }
    }
    Ok(settings)
}

/// The folder of the nearest `katari.toml`, searching from `dir` upwards.
fn find_project(fs: &dyn FileSystem, dir: &Path) -> Option<PathBuf> {
    let mut dir = dir.to_path_buf();
    // A bound on the walk guards against a `parent` implementation that never ends.
    for _ in 0..256 {
        if fs.is_file(&dir.join(MANIFEST)) {
            return Some(dir);
        }
        dir = fs.parent(&dir)?;
    }
    None
}

/// The module name of the entry script: its path below the source root with folders joined by
/// `.`, or its file stem when it lies outside the source root.
fn entry_module_name(entry: &Path, entry_identity: &Path, root_identity: &Path) -> String {
    if let Ok(relative) = entry_identity.strip_prefix(root_identity)
        && let Some(name) = module_name_of(relative)
    {
        return name;
    }
    entry
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `util/text.kt` → `util.text`.
fn module_name_of(relative: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let components: Vec<_> = relative.components().collect();
    for (i, c) in components.iter().enumerate() {
        let Component::Normal(part) = c else {
            return None;
        };
        if i + 1 == components.len() {
            parts.push(Path::new(part).file_stem()?.to_string_lossy().into_owned());
        } else {
            parts.push(part.to_string_lossy().into_owned());
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("."))
    }
}

/// The prelude modules named by default qualifiers among `words` (the identifiers a module
/// writes before a dot).
fn qualified_modules(words: &[String]) -> impl Iterator<Item = &'static str> + '_ {
    resolve::DEFAULT_QUALIFIERS
        .iter()
        .filter(|(q, _)| words.iter().any(|w| w == q))
        .map(|(_, module)| *module)
}

/// Whether a module name belongs to the prelude (`prelude`, `prelude.…`).
fn is_prelude_name(name: &str) -> bool {
    name == "prelude" || name.starts_with("prelude.")
}

/// Removes `.` components and resolves `..` against a preceding folder, without touching the
/// disk, so that one file reached by two spellings is loaded once.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            _ => out.push(c),
        }
    }
    out.iter().collect()
}

/// An IO error in words, without the `(os error N)` suffix of its `Display`.
fn io_reason(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        io::ErrorKind::IsADirectory => "it is a directory".to_string(),
        _ => err.to_string(),
    }
}

fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Where an import was written, for diagnostics about the module it names.
#[derive(Clone, Copy)]
struct ImportSite {
    file: FileId,
    span: Span,
}

struct Loader<'f, 'p> {
    fs: &'f dyn FileSystem,
    sources: SourceMap,
    modules: Vec<LoadedModule>,
    diagnostics: Vec<Diagnostic>,
    /// User modules by normalised path, so each file is loaded once.
    by_path: HashMap<PathBuf, ModuleId>,
    prelude_by_name: HashMap<String, ModuleId>,
    source_root: PathBuf,
    /// Modules whose imports have not been followed yet.
    queue: VecDeque<ModuleId>,
    /// The whole prelude, loaded as `prelude_use` says.
    prelude: &'p [PreludeSource<'p>],
    prelude_use: PreludeUse,
    /// With [`PreludeUse::Referenced`]: what each parsed file writes before a dot, until its
    /// module's imports are followed.
    qualifiers: HashMap<FileId, Vec<String>>,
}

impl Loader<'_, '_> {
    fn push_module(&mut self, module: LoadedModule) -> ModuleId {
        let id = ModuleId(self.modules.len() as u32);
        self.modules.push(module);
        self.queue.push_back(id);
        id
    }

    /// Parses `text` as module `name`.
    fn parse_module(
        &mut self,
        name: String,
        file: FileId,
        text: &str,
        is_prelude: bool,
    ) -> LoadedModule {
        let parsed = parser::parse(file, text);
        if self.prelude_use == PreludeUse::Referenced {
            self.qualifiers.insert(file, parsed.qualifiers);
        }
        let syntax_errors = parsed
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .filter_map(|d| d.primary.as_ref().map(|l| l.span))
            .collect();
        self.diagnostics.extend(parsed.diagnostics);
        LoadedModule {
            name,
            file,
            ast: parsed.module,
            is_prelude,
            incomplete: parsed.incomplete,
            syntax_errors,
            unreadable: false,
            imports: BTreeMap::new(),
        }
    }

    fn load_prelude(&mut self, source: &PreludeSource<'_>) {
        if self.prelude_by_name.contains_key(source.module) {
            return;
        }
        let file = self
            .sources
            .add(SourceFile::new(source.path, strip_bom(source.text)));
        let module = self.parse_module(
            source.module.to_string(),
            file,
            strip_bom(source.text),
            true,
        );
        let id = self.push_module(module);
        self.prelude_by_name.insert(source.module.to_string(), id);
    }

    /// Loads the prelude module called `name` unless it is loaded or the prelude has none.
    fn want_prelude(&mut self, name: &str) {
        let prelude = self.prelude;
        if let Some(source) = prelude.iter().find(|s| s.module == name) {
            self.load_prelude(source);
        }
    }

    /// Loads the user module at `path` (once), reporting K5006 and K2008 as needed.
    fn load_user(&mut self, path: &Path, name: String, site: Option<ImportSite>) -> ModuleId {
        let key = self.fs.identity(path);
        if let Some(&id) = self.by_path.get(&key) {
            return id;
        }
        let display = path.display().to_string();
        let text = match self.fs.read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => Ok(text),
                Err(e) => Err(format!(
                    "cannot read `{display}`: the file is not valid UTF-8 (at byte {})",
                    e.utf8_error().valid_up_to()
                )),
            },
            Err(e) => Err(format!("cannot read `{display}`: {}", io_reason(&e))),
        };
        let module = match text {
            Ok(text) => {
                let text = strip_bom(&text);
                let file = self.sources.add(SourceFile::new(display.clone(), text));
                self.parse_module(name.clone(), file, text, false)
            }
            Err(message) => {
                let d = match site {
                    Some(site) => Diagnostic::new(Code::K5006, message, site.file, site.span)
                        .with_label("this module's file cannot be loaded"),
                    None => Diagnostic::unlocated(Code::K5006, message),
                };
                self.diagnostics.push(d);
                let file = self.sources.add(SourceFile::new(display.clone(), ""));
                LoadedModule {
                    name: name.clone(),
                    file,
                    ast: ast::Module::default(),
                    is_prelude: false,
                    incomplete: false,
                    syntax_errors: Vec::new(),
                    unreadable: true,
                    imports: BTreeMap::new(),
                }
            }
        };
        if is_prelude_name(&name) {
            let message = format!("the module name `{name}` of `{display}` belongs to the prelude");
            let d = match site {
                Some(site) => Diagnostic::new(Code::K2008, message, site.file, site.span)
                    .with_label("a user module cannot be named `prelude` or `prelude.…`"),
                None => Diagnostic::unlocated(Code::K2008, message),
            };
            self.diagnostics
                .push(d.with_help("rename the file or its folder"));
        }
        let id = self.push_module(module);
        self.by_path.insert(key, id);
        id
    }

    /// Follows the imports of every queued module until nothing new is reached.
    fn load_imports(&mut self) {
        while let Some(id) = self.queue.pop_front() {
            let Some(module) = self.modules.get(id.index()) else {
                continue;
            };
            let imports: Vec<(usize, ast::Import)> = module
                .ast
                .decls
                .iter()
                .enumerate()
                .filter_map(|(i, d)| match d {
                    ast::Decl::Import(import) => Some((i, import.clone())),
                    _ => None,
                })
                .collect();
            let from_prelude = module.is_prelude;
            let site_file = module.file;
            if let Some(words) = self.qualifiers.remove(&site_file) {
                for name in qualified_modules(&words) {
                    self.want_prelude(name);
                }
            }
            for (index, import) in imports {
                let site = ImportSite {
                    file: site_file,
                    span: import.path_span(),
                };
                if let Some(target) = self.resolve_import(&import, site, from_prelude)
                    && let Some(module) = self.modules.get_mut(id.index())
                {
                    module.imports.insert(index, target);
                }
            }
        }
    }

    /// Finds (loading it if needed) the module an import names (§2.2).
    fn resolve_import(
        &mut self,
        import: &ast::Import,
        site: ImportSite,
        from_prelude: bool,
    ) -> Option<ModuleId> {
        let name = import.module_name();
        if is_prelude_name(&name) {
            self.want_prelude(&name);
        }
        if let Some(&id) = self.prelude_by_name.get(&name) {
            return Some(id);
        }
        let not_found = |what: String| {
            Diagnostic::new(
                Code::K2005,
                format!("module `{name}` not found"),
                site.file,
                site.span,
            )
            .with_label(what)
        };
        if from_prelude || import.path.is_empty() {
            self.diagnostics
                .push(not_found("the prelude has no module of this name".into()));
            return None;
        }
        let mut base = self.source_root.clone();
        for segment in &import.path {
            base.push(&segment.text);
        }
        let kt = base.with_extension("kt");
        let ktr = base.with_extension("ktr");
        match (self.fs.is_file(&kt), self.fs.is_file(&ktr)) {
            (true, true) => {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::K5003,
                        format!("module `{name}` is ambiguous"),
                        site.file,
                        site.span,
                    )
                    .with_label("both files exist")
                    .with_note(format!("`{}` and `{}`", kt.display(), ktr.display()))
                    .with_help("remove or rename one of them"),
                );
                None
            }
            (false, false) => {
                let mut d = not_found(format!("no `{}` or `.ktr`", kt.display()));
                if is_prelude_name(&name) {
                    d = d.with_note("the prelude has no module of this name");
                }
                self.diagnostics.push(d);
                None
            }
            (true, false) => Some(self.load_user(&kt, name, Some(site))),
            (false, true) => Some(self.load_user(&ktr, name, Some(site))),
        }
    }
}

#[cfg(test)]
mod tests;
