//! The REPL's language-mode session (`host.md` §12.2): the declarations and `let`s entered so
//! far, kept as source text, and the evaluation of one input against them.
//!
//! Every input is checked as part of a synthetic module `repl` (file `repl.kt`, shown as
//! `<repl:N>` in diagnostics) made of the session's declarations and, for an expression, an
//! agent `__eval` whose body holds the session's `let`s and ends with the input. The module
//! is loaded through an overlay of the real file system, so `import` of files on disk works.
//!
//! The `let`s are checked with every input (so their types are the checker's own) but run
//! once: their initialisers' values are kept, carried into each new lowering
//! ([`katari_runtime::lower::carry`]) and put in place of the initialisers before the input
//! runs. Only a closure whose defining agent was redefined since cannot be carried; its `let`
//! is then evaluated again (`docs/repl.md`).

use std::collections::HashSet;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use katari_lang::ast::Decl;
use katari_lang::ast::{ImportKind, ItemKind, PatternKind};
use katari_lang::check::{self, Checked};
use katari_lang::diag::{Diagnostic, Label};
use katari_lang::load::{self, FileSystem, ModuleId, Program};
use katari_lang::parser;
use katari_lang::query;
use katari_lang::render;
use katari_lang::resolve::DeclRef;
use katari_lang::source::{FileId, SourceFile, SourceMap, Span};
use katari_runtime::control::Control;
use katari_runtime::ir::{Expr, Pat, Stmt};
use katari_runtime::machine::{Ctx, Machine};
use katari_runtime::value::{Privacy, V, Value, to_wire};

use crate::front::{self, DiskFs, RuntimeNatives};
use crate::host::{Answers, CliHost, LineReader};
use crate::paths::Paths;
use crate::run;

/// The synthetic module's file, relative to the working directory.
const FILE: &str = "repl.kt";
/// The synthetic agent an expression is evaluated in.
const EVAL: &str = "__eval";

/// The machine of the evaluation in progress, for Ctrl-C to cancel it.
pub static RUNNING: Mutex<Option<Weak<Machine>>> = Mutex::new(None);

/// One declaration of the session, in its source text (with its doc).
#[derive(Clone, Debug)]
struct Entry {
    /// The declared name; `None` for an import (keyed by its text).
    name: Option<String>,
    text: String,
    /// The file it was loaded from (`.load`), so that `.reload` can drop what the file no
    /// longer declares.
    from: Option<PathBuf>,
    /// When it was defined, among the session's declarations and `let`s (`.env`'s order).
    seq: u64,
    /// `import { … } from MODULE`: the module and the names brought in (`true`: a type), so
    /// that a later declaration of one of the names replaces just that name.
    imported: Option<(String, Vec<(bool, String)>)>,
}

/// A loaded and checked synthetic program.
pub struct Built {
    pub program: Arc<Program>,
    pub checked: Arc<Checked>,
    /// The byte range of the synthetic text that the current input became: diagnostics there
    /// are shown against the input, numbered from its first line.
    region: Option<Range<usize>>,
}

impl Built {
    /// The synthetic module.
    pub fn module(&self) -> ModuleId {
        self.program.entry
    }

    /// The synthetic module's file.
    pub fn file(&self) -> Option<FileId> {
        self.program.module(self.program.entry).map(|m| m.file)
    }

    /// The top-level declaration of the synthetic module with this name.
    fn decl(&self, name: &str) -> Option<DeclRef> {
        let module = self.program.module(self.program.entry)?;
        let index = module
            .ast
            .decls
            .iter()
            .position(|d| d.name().is_some_and(|n| n.text == name))?;
        Some(DeclRef {
            module: self.program.entry,
            index: index as u32,
        })
    }

    /// Where names are resolved for completion and hints: the start of the current input, or
    /// the end of the text when there is none.
    pub fn offset(&self) -> u32 {
        let end = self
            .file()
            .map_or(0, |f| self.program.sources.get(f).text.len());
        self.region.as_ref().map_or(end, |r| r.start) as u32
    }

    fn errors(&self) -> bool {
        self.program.has_errors()
    }
}

/// A `let` input of the session: its text and the values its statements bound.
#[derive(Clone, Debug)]
struct Bound {
    text: String,
    /// The names bound by plain-name patterns, in order.
    names: Vec<String>,
    /// The value of each statement's initialiser, made by [`Session::machine`].
    values: Vec<Value>,
    /// When it was bound (see [`Entry::seq`]).
    seq: u64,
}

/// The language-mode session.
pub struct Session {
    decls: Vec<Entry>,
    lets: Vec<Bound>,
    /// The machine the kept `let` values were made by (their callables refer into it).
    machine: Option<Arc<Machine>>,
    /// Qualified names of agents redefined since [`Session::machine`] was lowered: closures
    /// they hold cannot be carried.
    redefined: HashSet<String>,
    /// The folder the synthetic module lives in: imports resolve from here. The working
    /// directory, or the folder of the last file given to `.load`.
    home: PathBuf,
    loaded: Vec<PathBuf>,
    inputs: usize,
    /// How many declarations and `let`s were made (each gets the next number, its `seq`).
    defined: u64,
    color: bool,
    /// Whether any input produced an error (the exit status of plain mode).
    pub had_error: bool,
    /// The last program that checked cleanly, for completion.
    pub last: Option<Arc<Built>>,
    /// Reads answers to escalated requests (the line editor on a terminal).
    pub reader: Option<LineReader>,
}

/// What an input asked the REPL to do next.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Continue,
    Exit,
}

impl Session {
    pub fn new(color: bool) -> Session {
        let mut s = Session {
            decls: Vec::new(),
            lets: Vec::new(),
            machine: None,
            redefined: HashSet::new(),
            home: PathBuf::new(),
            loaded: Vec::new(),
            inputs: 0,
            defined: 0,
            color,
            had_error: false,
            last: None,
            reader: None,
        };
        s.refresh();
        s
    }

    /// Whether `input` ended too early and more lines should be read (§12.2 rule 3).
    pub fn incomplete(input: &str) -> bool {
        let trimmed = input.trim();
        if trimmed.is_empty() || trimmed.starts_with('.') {
            return false;
        }
        if is_declaration(trimmed) {
            parser::parse(FileId(0), input).incomplete
        } else {
            parser::parse(FileId(0), &format!("agent {EVAL}() {{\n{input}\n}}\n")).incomplete
        }
    }

    /// Handles one complete input: a dot command, declarations, a `let`, or an expression.
    pub fn handle(&mut self, input: &str) -> Next {
        let trimmed = input.trim();
        if trimmed.is_empty() {
            return Next::Continue;
        }
        self.inputs += 1;
        if let Some(command) = trimmed.strip_prefix('.') {
            return self.command(command);
        }
        if is_declaration(trimmed) {
            self.declare(input, true);
        } else if let Some((names, count)) = let_items(input) {
            self.bind(input, names, count);
        } else {
            self.evaluate(input);
        }
        Next::Continue
    }

    fn command(&mut self, command: &str) -> Next {
        let (name, rest) = match command.split_once(char::is_whitespace) {
            Some((n, r)) => (n, r.trim()),
            None => (command, ""),
        };
        match name {
            "help" => out(&help(rest)),
            "exit" | "quit" => return Next::Exit,
            "clear" => {
                self.decls.clear();
                self.lets.clear();
                self.machine = None;
                self.redefined.clear();
                self.home = PathBuf::new();
                self.loaded.clear();
                self.refresh();
                out("(cleared)");
            }
            "type" | "effects" if rest.is_empty() => {
                self.error(&format!(".{name} needs an expression: .{name} EXPR"))
            }
            "type" => {
                if let Some((built, agent)) = self.build_eval(rest) {
                    let ty = query::result_type_of(&built.program, &built.checked, agent);
                    out(&format!("{rest} : {}", ty.unwrap_or_else(|| "?".into())));
                }
            }
            "effects" => {
                if let Some((built, agent)) = self.build_eval(rest) {
                    let row = query::effects_of(&built.program, &built.checked, agent);
                    out(&row.unwrap_or_else(|| "pure".into()));
                }
            }
            "doc" if rest.is_empty() => self.error(".doc needs a name: .doc NAME"),
            "doc" => self.doc(rest),
            "env" => self.env(),
            "load" if rest.is_empty() => self.error(".load needs a file: .load FILE"),
            "load" => {
                let path = PathBuf::from(rest);
                if self.load(&path) && !self.loaded.contains(&path) {
                    self.loaded.push(path);
                }
            }
            "reload" => {
                for path in self.loaded.clone() {
                    self.load(&path);
                }
                if self.loaded.is_empty() {
                    out("(no files loaded)");
                }
            }
            _ => {
                let mut message = format!("Unknown command '.{name}'. See .help");
                if let Some(near) = suggest(name) {
                    message.push_str(&format!(" (did you mean .{near}?)"));
                }
                self.error(&message);
            }
        }
        Next::Continue
    }

    /// Adds the declarations of `input` (replacing same-named ones) when they check; prints
    /// what was defined. Returns whether they were added.
    fn declare(&mut self, input: &str, announce: bool) -> bool {
        self.declare_from(input, announce, None)
    }

    /// [`Self::declare`] of a file's text: declarations that earlier loads of the same file
    /// added and the file no longer has are removed.
    fn declare_from(&mut self, input: &str, announce: bool, from: Option<&Path>) -> bool {
        let parsed = parser::parse(FileId(0), input);
        let mut decls = self.decls.clone();
        let mut removed = Vec::new();
        if let Some(file) = from {
            let current: Vec<String> = parsed
                .module
                .decls
                .iter()
                .filter_map(|d| d.name().map(|n| n.text.to_string()))
                .collect();
            decls.retain(|e| {
                let stale = e.from.as_deref() == Some(file)
                    && e.name.as_ref().is_some_and(|n| !current.contains(n));
                if stale {
                    removed.extend(e.name.clone());
                }
                !stale
            });
        }
        if !parsed.diagnostics.iter().any(|d| d.is_error())
            && parsed.module.decls.is_empty()
            && removed.is_empty()
        {
            return true;
        }
        let mut added = Vec::new();
        // The names each new declaration brings in, and what they now are.
        let mut introduced: Vec<(String, String)> = Vec::new();
        let mut pushed = 0;
        let mut start = 0;
        for decl in &parsed.module.decls {
            let end = decl.span().end as usize;
            let text = input.get(start..end).unwrap_or_default().trim().to_string();
            start = end;
            let name = decl.name().map(|n| n.text.to_string());
            let existed = match &name {
                Some(n) => decls.iter().any(|e| e.name.as_deref() == Some(n)),
                None => decls.iter().any(|e| e.text == text),
            };
            if existed && name.is_none() {
                continue;
            }
            if name.is_none() {
                let path = text.trim_start_matches("import").trim();
                added.push((path.to_string(), "import", false));
            }
            let imported = match decl {
                Decl::Import(i) => match &i.kind {
                    ImportKind::Names { items } => Some((
                        i.module_name(),
                        items
                            .iter()
                            .map(|item| (item.is_type, item.name.text.to_string()))
                            .collect::<Vec<_>>(),
                    )),
                    ImportKind::Qualified { .. } => None,
                },
                _ => None,
            };
            // The newest definition of a name wins, whether declared or imported.
            let names: Vec<&str> = name
                .iter()
                .map(String::as_str)
                .chain(
                    imported
                        .iter()
                        .flat_map(|(_, items)| items.iter().map(|i| i.1.as_str())),
                )
                .collect();
            supersede(&mut decls, &names);
            let what = match &imported {
                Some((module, _)) => format!("imported from {module}"),
                None => format!("the {}", kind_word(decl)),
            };
            introduced.extend(names.iter().map(|n| (n.to_string(), what.clone())));
            if let Some(n) = &name {
                added.push((n.clone(), kind_word(decl), existed));
            }
            self.defined += 1;
            decls.push(Entry {
                name,
                text,
                from: from.map(Path::to_path_buf),
                seq: self.defined,
                imported,
            });
            pushed += 1;
        }
        let text = module_text(&decls, None);
        let kept = decls.len() - pushed;
        let region_start = module_text(&decls[..kept], None).len();
        let built = self.build(&text, Some(region_start..text.len()));
        if built.errors() || parsed.diagnostics.iter().any(|d| d.is_error()) {
            // A loaded file with errors of its own: reported as `katari check` reports them,
            // at their lines in the file (and the files it imports).
            if let Some(file) = from
                && self.report_file(file)
            {
                return false;
            }
            if parsed.diagnostics.iter().any(|d| d.is_error()) {
                // Syntax errors are reported against the input itself.
                let mut sources = SourceMap::new();
                sources.add(SourceFile::new(self.label(), input.to_string()));
                for d in parsed.diagnostics.iter().filter(|d| d.is_error()) {
                    self.diagnostic(&render::render(d, &sources, self.color));
                }
                self.had_error = true;
            } else {
                self.report(&built);
            }
            return false;
        }
        self.decls = decls;
        self.warn(&built);
        // The newest definition of a name wins: a `let` that bound it would shadow the new
        // declaration inside every later input, so it goes.
        for (name, what) in &introduced {
            let before = self.lets.len();
            self.lets.retain(|b| !b.names.contains(name));
            if self.lets.len() < before {
                let _ = writeln!(
                    io::stderr(),
                    "note: the `let` of `{name}` is dropped: `{name}` is now {what}"
                );
            }
        }
        for (name, kind, existed) in &added {
            if *existed
                && *kind == "agent"
                && let Some(q) = built
                    .decl(name)
                    .and_then(|d| built.program.qualified_name(d))
            {
                self.redefined.insert(q);
            }
        }
        if announce {
            for name in &removed {
                out(&format!("removed {name} (no longer in the file)"));
            }
            for (name, kind, existed) in &added {
                if *kind == "import" {
                    out(&format!("imported {name}"));
                    continue;
                }
                let verb = if *existed { "redefined" } else { "defined" };
                let ty = built.decl(name).and_then(|d| describe(&built, d, kind));
                match ty {
                    Some(ty) => out(&format!("{verb} {kind} {name} : {ty}")),
                    None => out(&format!("{verb} {kind} {name}")),
                }
            }
        }
        self.last = Some(Arc::new(built));
        self.prune_lets();
        true
    }

    /// Drops the `let`s that no longer check against the session's declarations (a
    /// redefinition or a reload changed what they use), with a note for each, so that one stale
    /// binding does not make every later input fail. A `let` that uses a dropped one goes too.
    fn prune_lets(&mut self) {
        if self.lets.is_empty() || !self.build_with_body("null").errors() {
            return;
        }
        for bound in std::mem::take(&mut self.lets) {
            self.lets.push(bound);
            if self.build_with_body("null").errors()
                && let Some(stale) = self.lets.pop()
            {
                let what = match stale.names.as_slice() {
                    [] => stale.text.lines().next().unwrap_or_default().to_string(),
                    names => names.join(", "),
                };
                let _ = writeln!(
                    io::stderr(),
                    "note: `{what}` is no longer bound: its `let` does not check against the new declarations"
                );
            }
        }
    }

    /// Runs a `let` input once and keeps the values it bound: `NAME : TYPE = VALUE` for each
    /// name its patterns bind (a destructuring `let` binds several), the newest of a repeated
    /// name only.
    fn bind(&mut self, input: &str, names: Vec<String>, count: usize) {
        let single = names.len() == 1 && count == 1;
        // One name: its own type, as `.type` gives it; several: a tuple of them, so each value
        // is read where the input bound it, after any destructuring.
        let tail = match names.as_slice() {
            [] => "null".to_string(),
            [name] if single => name.clone(),
            names => format!("[{}]", names.join(", ")),
        };
        let Some((built, agent)) = self.build_eval(&format!("{input}\n{tail}")) else {
            return;
        };
        let types: Vec<String> = if single {
            vec![query::result_type_of(&built.program, &built.checked, agent).unwrap_or_default()]
        } else {
            let end = built.region.as_ref().map_or(0, |r| r.end) as u32;
            let scope = built
                .file()
                .map(|f| query::names_in_scope(&built.program, &built.checked, f, end))
                .unwrap_or_default();
            names
                .iter()
                .map(|n| {
                    scope
                        .iter()
                        .find(|e| e.name == *n)
                        .and_then(|e| e.signature.clone())
                        .unwrap_or_default()
                })
                .collect()
        };
        let Some((value, bound)) = self.run(built, agent, count) else {
            return;
        };
        let values: Vec<Value> = match (&value.v, single) {
            (_, true) => vec![value.clone()],
            (V::Array(items), false) => items.to_vec(),
            _ => Vec::new(),
        };
        for (i, name) in names.iter().enumerate() {
            let shown = values
                .get(i)
                .and_then(|v| self.render(v))
                .unwrap_or_default();
            out(&format!(
                "{name} : {} = {shown}",
                types.get(i).cloned().unwrap_or_default()
            ));
        }
        self.defined += 1;
        self.lets.push(Bound {
            text: input.trim().to_string(),
            names,
            values: bound,
            seq: self.defined,
        });
    }

    /// Evaluates an expression or statement: `VALUE : TYPE`.
    fn evaluate(&mut self, input: &str) {
        let Some((built, agent)) = self.build_eval(input) else {
            return;
        };
        let ty = query::result_type_of(&built.program, &built.checked, agent).unwrap_or_default();
        if let Some((value, _)) = self.run(built, agent, 0)
            && let Some(value) = self.render(&value)
        {
            out(&format!("{value} : {ty}"));
        }
    }

    /// The session as completion and hints see it: the declarations, and the `let`s in scope
    /// at the start of the next input.
    pub fn snapshot(&mut self) -> Option<Arc<Built>> {
        let built = self.build_with_body("null");
        if !built.errors() {
            self.last = Some(Arc::new(built));
        }
        self.last.clone()
    }

    /// The session with `body` as the end of the synthetic agent, after the `let`s.
    fn build_with_body(&self, body: &str) -> Built {
        let lets: Vec<&str> = self.lets.iter().map(|b| b.text.as_str()).collect();
        let head = format!("agent {EVAL}() {{\n{}\n", lets.join("\n"));
        let eval = format!("{head}{body}\n}}");
        let text = module_text(&self.decls, Some(&eval));
        let start = module_text(&self.decls, None).len() + head.len();
        self.build(&text, Some(start..start + body.len()))
    }

    /// Builds the session with `body` as the end of the synthetic agent; reports errors.
    fn build_eval(&mut self, body: &str) -> Option<(Built, DeclRef)> {
        let built = self.build_with_body(body);
        if built.errors() {
            self.report(&built);
            return None;
        }
        self.warn(&built);
        let agent = built.decl(EVAL)?;
        Some((built, agent))
    }

    /// Lowers and runs the synthetic agent on a big-stack thread, with the kept `let` values in
    /// place of their initialisers. Returns the value and the values of the last `new_lets`
    /// statements (the input's own `let`s), or `None` after reporting a failure.
    fn run(
        &mut self,
        built: Built,
        agent: DeclRef,
        new_lets: usize,
    ) -> Option<(Value, Vec<Value>)> {
        let Built {
            program,
            checked,
            region,
        } = built;
        let table = katari_prelude::natives::table();
        let host = Arc::new(
            CliHost::new(Paths::from_env(), program.env.clone(), Answers::new())
                .with_reader(self.reader.clone()),
        );
        let mut machine = katari_runtime::lower::lower_shared(
            &program,
            &checked,
            &table,
            katari_prelude::natives::deferred,
            host.clone(),
        );
        let qualified = program.qualified_name(agent).unwrap_or_default();
        let callee = machine.by_name.get(qualified.as_str()).cloned();
        let fun = match callee.as_ref().map(|c| &c.v) {
            Some(V::Callable(c)) => match &**c {
                katari_runtime::callable::Callable::Agent { fun, .. } => Some(*fun),
                _ => None,
            },
            _ => None,
        };
        let (Some(callee), Some(fun)) = (callee, fun) else {
            self.error("panic: internal: the input did not lower");
            return None;
        };
        // The kept values, carried into this lowering; `None` where the `let` runs again.
        let kept: Vec<&Value> = self.lets.iter().flat_map(|b| &b.values).collect();
        let carried: Vec<Option<Value>> = match &self.machine {
            Some(old) => kept
                .iter()
                .map(|v| {
                    katari_runtime::lower::carry(v, old, &machine, &|n| self.redefined.contains(n))
                })
                .collect(),
            None => kept.iter().map(|_| None).collect(),
        };
        let total = kept.len() + new_lets;
        let Some(captured) = restore(&mut machine, fun, &carried, total) else {
            self.error("panic: internal: the session's bindings could not be restored");
            return None;
        };
        let mut index = 0;
        for b in &self.lets {
            let range = index..index + b.values.len();
            index = range.end;
            if captured.iter().any(|i| range.contains(i)) {
                let what = match b.names.as_slice() {
                    [] => b.text.lines().next().unwrap_or_default().to_string(),
                    names => names.join(", "),
                };
                let _ = writeln!(
                    io::stderr(),
                    "note: `{what}` is evaluated again: its value holds an agent of a redefined declaration"
                );
            }
        }
        let machine = Arc::new(machine);
        let _ = host.machine.set(Arc::downgrade(&machine));
        set_running(Some(Arc::downgrade(&machine)));
        let runner = machine.clone();
        let joined = std::thread::Builder::new()
            .name("katari-repl".into())
            .stack_size(run::MAIN_STACK)
            .spawn(move || Ctx::new(runner).call(&callee, Vec::new()))
            .map(|handle| handle.join());
        set_running(None);
        machine.interrupted.store(false, Ordering::SeqCst);
        self.last = Some(Arc::new(Built {
            program,
            checked,
            region,
        }));
        let result = match joined {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => {
                self.error("panic: internal: the evaluator crashed");
                return None;
            }
            Err(e) => {
                self.error(&format!("cannot start the evaluator: {e}"));
                return None;
            }
        };
        if let Some(message) = host.fatal() {
            self.error(&message);
            return None;
        }
        let value = match result {
            Ok(value) => value,
            Err(c) if matches!(*c, Control::Interrupted) => {
                self.had_error = true;
                let _ = writeln!(io::stderr(), "^C (cancelled)");
                return None;
            }
            Err(c) => {
                let failure = run::failure(*c);
                self.error(&failure.message);
                return None;
            }
        };
        // With statements captured, the agent returned [captured…, value].
        let (value, mut fresh) = if captured.is_empty() {
            (value, Vec::new())
        } else {
            match &value.v {
                V::Array(items) if items.len() == captured.len() + 1 => (
                    items[captured.len()].clone(),
                    items[..captured.len()].to_vec(),
                ),
                _ => {
                    self.error("panic: internal: the session's bindings were not returned");
                    return None;
                }
            }
        };
        // Every kept value now refers into this machine.
        let mut all: Vec<Option<Value>> = carried;
        all.resize(total, None);
        for (index, v) in captured.iter().zip(fresh.drain(..)) {
            all[*index] = Some(v);
        }
        let mut values = all.into_iter().map(|v| v.unwrap_or(Value::NULL));
        for b in &mut self.lets {
            for v in &mut b.values {
                *v = values.next().unwrap_or(Value::NULL);
            }
        }
        self.machine = Some(machine);
        self.redefined.clear();
        Some((value, values.collect()))
    }

    /// A value's rendering (`language.md` §11.1, private values redacted), or `None` after
    /// reporting that it has none.
    fn render(&mut self, value: &Value) -> Option<String> {
        match to_wire(value, Privacy::Redact) {
            Ok(text) => Some(text),
            Err(_) => {
                self.error("panic: a non-finite number has no JSON representation");
                None
            }
        }
    }

    /// `.doc NAME`: the signature and doc of a declaration.
    fn doc(&mut self, name: &str) {
        let Some(built) = self.last.clone() else {
            return;
        };
        let found = query::find_decls(&built.program, name, built.module());
        let docs: Vec<_> = found
            .iter()
            .filter_map(|d| query::doc_of(&built.program, &built.checked, *d))
            .collect();
        if docs.is_empty() {
            self.error(&format!("no declaration named `{name}`"));
            return;
        }
        for d in docs {
            let mut text = format!("{}\n  {}", d.qualified, d.signature);
            if let Some(doc) = &d.doc {
                text.push_str(&format!("\n\n{doc}"));
            }
            out(&text);
        }
    }

    /// `.env`: the bindings with their kinds and types, in definition order.
    fn env(&mut self) {
        let Some(built) = self.last.clone() else {
            return;
        };
        // Rows with when they were defined (imported names first, in the module's order).
        let mut rows: Vec<(u64, String, String, String)> = Vec::new();
        for m in query::declarations(&built.program, &built.checked, built.module()) {
            if m.name == EVAL {
                continue;
            }
            let ty =
                query::value_type_of(&built.program, &built.checked, m.decl, Some(built.module()))
                    .or(m.signature.clone())
                    .unwrap_or_default();
            let seq = self
                .decls
                .iter()
                .find(|e| e.name.as_deref() == Some(m.name.as_str()))
                .map_or(0, |e| e.seq);
            rows.push((seq, m.name.clone(), m.kind.word().to_string(), ty));
        }
        // Names brought in by `import { … } from MODULE`, as that module declares them.
        for e in &self.decls {
            let Some((module, items)) = &e.imported else {
                continue;
            };
            let members =
                query::module_members(&built.program, &built.checked, module, built.module());
            for (is_type, name) in items {
                let Some(m) = members.iter().find(|m| {
                    m.name == *name
                        && if *is_type {
                            m.kind.is_type()
                        } else {
                            m.kind.is_value()
                        }
                }) else {
                    continue;
                };
                let ty = query::value_type_of(
                    &built.program,
                    &built.checked,
                    m.decl,
                    Some(built.module()),
                )
                .or(m.signature.clone())
                .unwrap_or_default();
                rows.push((e.seq, name.clone(), m.kind.word().to_string(), ty));
            }
        }
        // Each name once, as the newest definition has it: a `let` shadows a declaration of
        // its name, and a later `let` an earlier one.
        let mut lets: Vec<(u64, String)> = Vec::new();
        for bound in self.lets.iter().rev() {
            for name in bound.names.iter().rev() {
                if !lets.iter().any(|(_, n)| n == name) {
                    lets.push((bound.seq, name.clone()));
                }
            }
        }
        lets.reverse();
        rows.retain(|(_, name, _, _)| !lets.iter().any(|(_, n)| n == name));
        for (seq, name) in lets {
            let ty = self
                .build_eval(&name)
                .and_then(|(b, a)| query::result_type_of(&b.program, &b.checked, a))
                .unwrap_or_default();
            rows.push((seq, name, "let".into(), ty));
        }
        rows.sort_by_key(|r| r.0);
        let rows: Vec<(String, String, String)> =
            rows.into_iter().map(|(_, n, k, t)| (n, k, t)).collect();
        if rows.is_empty() {
            out("(no bindings)");
            return;
        }
        let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(4);
        let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(4);
        let mut text = format!("{:w0$}  {:w1$}  TYPE", "NAME", "KIND");
        for (n, k, t) in rows {
            text.push_str(&format!("\n{n:w0$}  {k:w1$}  {t}"));
        }
        out(&text);
    }

    /// `.load FILE`: adds the file's declarations. Its imports resolve as they would for
    /// `katari run FILE`: the session moves to the file's folder (and stays where it was when
    /// the file does not check there). Returns whether they were added.
    fn load(&mut self, path: &Path) -> bool {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let home = path.parent().map(Path::to_path_buf).unwrap_or_default();
                let before = std::mem::replace(&mut self.home, home);
                let ok = self.declare_from(&text, true, Some(path));
                if ok {
                    out(&format!("(loaded {})", path.display()));
                } else {
                    self.home = before;
                }
                ok
            }
            Err(e) => {
                self.error(&format!("cannot read {}: {e}", path.display()));
                false
            }
        }
    }

    /// Rebuilds the declarations alone, for completion and `.doc` after `.clear`.
    fn refresh(&mut self) {
        let built = self.build(&module_text(&self.decls, None), None);
        if !built.errors() {
            self.last = Some(Arc::new(built));
        }
    }

    /// Loads and checks the synthetic module with this text; its file is named `<repl:N>`.
    fn build(&self, text: &str, region: Option<Range<usize>>) -> Built {
        let entry = self.home.join(FILE);
        let overlay = Overlay {
            path: load::normalize(&entry),
            text: text.to_string(),
        };
        let table = katari_prelude::natives::table();
        let mut program = load::load_program(&entry, &overlay, &katari_prelude::sources());
        let checked = check::check_program(&program, &RuntimeNatives(&table));
        program
            .diagnostics
            .extend(checked.diagnostics.iter().cloned());
        let entry_file = program.module(program.entry).map(|m| m.file);
        let mut sources = SourceMap::new();
        for (id, file) in program.sources.files() {
            let path = if Some(id) == entry_file {
                "<repl>".to_string()
            } else {
                file.path.clone()
            };
            sources.add(SourceFile::new(path, file.text.clone()));
        }
        program.sources = sources;
        Built {
            program: Arc::new(program),
            checked: Arc::new(checked),
            region,
        }
    }

    fn label(&self) -> String {
        format!("<repl:{}>", self.inputs.max(1))
    }

    /// Prints the errors of the program whose entry is `file`, as `katari check` would; false
    /// when it has none (its failure in the session comes from the session's declarations).
    fn report_file(&mut self, file: &Path) -> bool {
        let (program, _) = front::load(file);
        if !program.has_errors() {
            return false;
        }
        self.had_error = true;
        for d in program.diagnostics.iter().filter(|d| d.is_error()) {
            self.diagnostic(&render::render(d, &program.sources, self.color));
        }
        true
    }

    /// Prints the errors of a program that did not check.
    fn report(&mut self, built: &Built) {
        self.had_error = true;
        self.show(built, true);
    }

    /// Prints the warnings of the input's own text in a program that checked (warnings of
    /// earlier inputs were shown when those were entered).
    fn warn(&self, built: &Built) {
        self.show(built, false);
    }

    /// Prints the errors of `built` (`errors`), or the warnings located in its input.
    fn show(&self, built: &Built, errors: bool) {
        if !built
            .program
            .diagnostics
            .iter()
            .any(|d| d.is_error() == errors)
        {
            // Nearly every input: nothing to show, so no copy of the sources either.
            return;
        }
        let mut sources = built.program.sources.clone();
        let entry = built.file();
        // The input as its own file, so that line numbers count from its first line.
        let input = match (&built.region, entry) {
            (Some(region), Some(entry)) => {
                let text = sources.get(entry).text.get(region.clone()).unwrap_or("");
                let id = sources.add(SourceFile::new(self.label(), text.to_string()));
                Some((region.clone(), entry, id))
            }
            _ => None,
        };
        let remap = |label: &mut Label| {
            if let Some((region, entry, id)) = &input {
                let (start, end) = (label.span.start as usize, label.span.end as usize);
                // The input is followed only by a line end and the synthetic agent's `}`: an
                // input that ended too early is reported there (or at the end of the text), so
                // it is shown at the input's end.
                let len = region.end - region.start;
                if label.file == *entry && start >= region.start {
                    label.file = *id;
                    label.span = Span::new(
                        (start - region.start).min(len),
                        (end - region.start).min(len),
                    );
                }
            }
        };
        let mut shown: Vec<Diagnostic> = Vec::new();
        for d in built
            .program
            .diagnostics
            .iter()
            .filter(|d| d.is_error() == errors)
        {
            let mut d = d.clone();
            if let Some(label) = d.primary.as_mut() {
                remap(label);
            }
            d.secondary.iter_mut().for_each(remap);
            shown.push(d);
        }
        // When the input itself has errors, those in the text around it (an unclosed bracket
        // reported at the synthetic agent's end) are consequences, not news.
        let in_input = |d: &Diagnostic| {
            input
                .as_ref()
                .is_some_and(|(_, _, id)| d.primary.as_ref().is_some_and(|l| l.file == *id))
        };
        if !errors {
            shown.retain(in_input);
        } else if shown.iter().any(in_input) {
            shown.retain(|d| {
                in_input(d) || d.primary.as_ref().is_none_or(|l| Some(l.file) != entry)
            });
        }
        for d in &shown {
            self.diagnostic(&render::render(d, &sources, self.color));
        }
    }

    fn diagnostic(&self, rendered: &str) {
        let mut err = io::stderr().lock();
        let _ = err.write_all(rendered.as_bytes());
        let _ = err.flush();
    }

    fn error(&mut self, message: &str) {
        self.had_error = true;
        if !message.is_empty() {
            crate::host::print_error(message);
        }
    }
}

/// Puts the kept values in place of the first `let` initialisers of the synthetic agent `fun`
/// (`carried[i]`, where it is `Some`), and has it return the values of the other first `total`
/// initialisers ahead of its own: `[captured…, value]`. Returns the indices of the captured
/// statements; `None` when the agent does not start with `total` `let`s.
fn restore(
    machine: &mut Machine,
    fun: katari_runtime::ir::FunId,
    carried: &[Option<Value>],
    total: usize,
) -> Option<Vec<usize>> {
    if total == 0 {
        return Some(Vec::new());
    }
    let f = machine.funs.get_mut(fun.0 as usize)?;
    // The body is rewritten below: an integer form compiled from the old one would run instead.
    f.tier = None;
    let (stmts, tail) = std::mem::replace(&mut f.body, Expr::Const(Value::NULL)).into_block()?;
    if stmts.len() < total || !stmts[..total].iter().all(|s| matches!(s, Stmt::Let(..))) {
        return None;
    }
    let mut out = Vec::with_capacity(stmts.len() + total);
    let mut captured = Vec::new();
    let mut slots = Vec::new();
    for (i, stmt) in stmts.into_iter().enumerate() {
        match stmt {
            Stmt::Let(pat, init) if i < total => match carried.get(i) {
                Some(Some(v)) => out.push(Stmt::Let(pat, Expr::Const(v.clone()))),
                _ => {
                    let slot = f.slots;
                    f.slots += 1;
                    out.push(Stmt::Let(Pat::Bind(slot), init));
                    out.push(Stmt::Let(pat, Expr::Local(slot)));
                    captured.push(i);
                    slots.push(slot);
                }
            },
            other => out.push(other),
        }
    }
    let tail = if slots.is_empty() {
        tail
    } else {
        let mut items: Vec<Expr> = slots.into_iter().map(Expr::Local).collect();
        items.push(*tail);
        Box::new(Expr::Tuple(items))
    };
    f.body = Expr::Block(out, tail);
    Some(captured)
}

fn set_running(machine: Option<Weak<Machine>>) {
    *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = machine;
}

/// Cancels the evaluation in progress, if any; whether there was one.
pub fn interrupt() -> bool {
    let running = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match running.and_then(|w| w.upgrade()) {
        Some(machine) => {
            machine.interrupted.store(true, Ordering::SeqCst);
            true
        }
        None => false,
    }
}

fn out(text: &str) {
    let mut o = io::stdout().lock();
    let _ = writeln!(o, "{text}");
    let _ = o.flush();
}

/// The synthetic module: the declarations, then the evaluation agent.
fn module_text(decls: &[Entry], eval: Option<&str>) -> String {
    let mut text = String::new();
    for e in decls {
        text.push_str(&e.text);
        text.push_str("\n\n");
    }
    if let Some(eval) = eval {
        text.push_str(eval);
        text.push('\n');
    }
    text
}

/// Drops what the session had under any of `names`: a declaration of the name, or the name
/// from an `import { … }` (the import goes when no name of it is left).
fn supersede(decls: &mut Vec<Entry>, names: &[&str]) {
    decls.retain_mut(|e| {
        if e.name.as_deref().is_some_and(|n| names.contains(&n)) {
            return false;
        }
        if let Some((module, items)) = &mut e.imported {
            let before = items.len();
            items.retain(|(_, n)| !names.contains(&n.as_str()));
            if items.is_empty() {
                return false;
            }
            if items.len() < before {
                let list: Vec<String> = items
                    .iter()
                    .map(|(ty, n)| if *ty { format!("type {n}") } else { n.clone() })
                    .collect();
                e.text = format!("import {{ {} }} from {module}", list.join(", "));
            }
        }
        true
    });
}

/// The word a declaration is acknowledged with.
fn kind_word(decl: &Decl) -> &'static str {
    match decl {
        Decl::Agent(_) | Decl::External(_) | Decl::Primitive(_) => "agent",
        Decl::Request(_) => "request",
        Decl::Data(_) => "data",
        Decl::Synonym(_) => "type",
        Decl::Import(_) => "import",
    }
}

/// `agent (n: integer) -> integer` for a callable, the definition for a data type or synonym.
fn describe(built: &Built, decl: DeclRef, kind: &str) -> Option<String> {
    match kind {
        "agent" | "request" => {
            query::value_type_of(&built.program, &built.checked, decl, Some(built.module()))
        }
        _ => query::signature_of(&built.program, &built.checked, decl),
    }
}

/// Whether an input starts with a declaration: a doc, or a declaration keyword followed by a
/// name (so that a value named `data` or `type` still reads as an expression).
fn is_declaration(input: &str) -> bool {
    if input.starts_with("@\"") {
        return true;
    }
    let mut words = input.split_whitespace();
    let mut first = words.next();
    if first == Some("private") {
        first = words.next();
    }
    // `import { NAME } from MODULE` names its module after a brace.
    let named = words
        .next()
        .and_then(|w| w.chars().next())
        .is_some_and(|c| c.is_alphabetic() || c == '_' || (c == '{' && first == Some("import")));
    matches!(
        first,
        Some("agent" | "data" | "request" | "type" | "import")
    ) && named
}

/// For an input made only of `let` statements: the names its patterns bind, in written order
/// (a name bound twice where it was bound last), and the number of statements.
fn let_items(input: &str) -> Option<(Vec<String>, usize)> {
    let items = statements(input)?;
    if items.is_empty() || !items.iter().all(|i| matches!(i.kind, ItemKind::Let { .. })) {
        return None;
    }
    let mut names = Vec::new();
    for item in &items {
        if let ItemKind::Let { pattern, .. } = &item.kind {
            bound_names(pattern, &mut names);
        }
    }
    let mut seen = std::collections::HashSet::new();
    names.reverse();
    names.retain(|n| seen.insert(n.clone()));
    names.reverse();
    Some((names, items.len()))
}

/// The statements of an input, parsed as the body of an agent; `None` when it does not parse.
fn statements(input: &str) -> Option<Vec<katari_lang::ast::Item>> {
    let parsed = parser::parse(FileId(0), &format!("agent {EVAL}() {{\n{input}\n}}\n"));
    if parsed.diagnostics.iter().any(|d| d.is_error()) {
        return None;
    }
    match parsed.module.decls.into_iter().next()? {
        Decl::Agent(a) => Some(a.body.items),
        _ => None,
    }
}

/// Appends the names a pattern binds, in written order (`{ name, tags => [first, _] }` binds
/// `name` and `first`).
fn bound_names(pattern: &katari_lang::ast::Pattern, out: &mut Vec<String>) {
    match &pattern.kind {
        PatternKind::Bind { name, .. } => out.push(name.text.to_string()),
        PatternKind::Tuple(items) => items.iter().for_each(|p| bound_names(p, out)),
        PatternKind::Filter { inner, .. } => bound_names(inner, out),
        PatternKind::Record(fields) | PatternKind::Constructor { fields, .. } => {
            for field in fields {
                match &field.pattern {
                    Some(p) => bound_names(p, out),
                    None => out.push(field.name.text.to_string()),
                }
            }
        }
        PatternKind::Wildcard(_) | PatternKind::Lit(_) | PatternKind::Error => {}
    }
}

/// The dot commands of language mode with one line each.
pub const COMMANDS: &[(&str, &str)] = &[
    ("help", "commands with one line each; .help COMMAND for one"),
    (
        "load",
        "load and check a .kt file; its top-level names become bound",
    ),
    (
        "reload",
        "load again every file loaded with .load, in order",
    ),
    ("type", "print the type of EXPR without evaluating it"),
    (
        "effects",
        "print the effect row of EXPR without evaluating it",
    ),
    ("env", "table of bindings: NAME, KIND, TYPE"),
    (
        "doc",
        "the signature and doc of a declaration, e.g. .doc string.length",
    ),
    ("clear", "forget all bindings and loaded files"),
    ("exit", "leave the REPL"),
];

fn help(command: &str) -> String {
    let wanted = command.trim_start_matches('.');
    if !wanted.is_empty() {
        return match COMMANDS.iter().find(|(n, _)| *n == wanted) {
            Some((n, h)) => format!(".{n}  {h}"),
            None => format!("Unknown command '.{wanted}'. See .help"),
        };
    }
    let mut text = String::from(
        "Enter declarations (agent, data, request, type, import), `let` statements or expressions.\n",
    );
    for (n, h) in COMMANDS {
        text.push_str(&format!("\n  .{n:<8} {h}"));
    }
    text
}

/// The command nearest to an unknown one, within edit distance 2.
fn suggest(name: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .map(|(n, _)| (distance(name, n), *n))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| n)
}

/// The edit distance between two names (for "did you mean"): the front end's one measure.
pub use katari_lang::suggest::edit_distance as distance;

/// The real file system with the synthetic module laid over it.
struct Overlay {
    path: PathBuf,
    text: String,
}

impl FileSystem for Overlay {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if load::normalize(path) == self.path {
            Ok(self.text.clone().into_bytes())
        } else {
            DiskFs.read(path)
        }
    }

    fn is_file(&self, path: &Path) -> bool {
        load::normalize(path) == self.path || DiskFs.is_file(path)
    }

    fn parent(&self, dir: &Path) -> Option<PathBuf> {
        DiskFs.parent(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_commands() {
        assert_eq!(suggest("tpye"), Some("type"));
        assert_eq!(suggest("exot"), Some("exit"));
        assert_eq!(suggest("zzzzzzz"), None);
    }

    #[test]
    fn classifies_inputs() {
        assert!(is_declaration("agent f() -> integer { 1 }"));
        assert!(!is_declaration("agent (x: integer) -> integer { x }"));
        assert!(!is_declaration("1 + 2"));
        assert!(!is_declaration("data.x"));
        assert!(!is_declaration("type == 1"));
        assert!(is_declaration("import util.text"));
        assert!(is_declaration("private agent g() -> integer { 1 }"));
        assert_eq!(let_items("let x = 1"), Some((vec!["x".into()], 1)));
        assert_eq!(
            let_items("let x = 1\nlet {a, b => [c, _]} = {a = 1, b = [2, 3]}"),
            Some((vec!["x".into(), "a".into(), "c".into()], 2))
        );
        assert_eq!(
            let_items("let x = 1\nlet [y, x] = [2, 3]"),
            Some((vec!["y".into(), "x".into()], 2))
        );
        assert_eq!(let_items("x"), None);
        assert_eq!(let_items("let x = 1\nx"), None);
    }

    #[test]
    fn open_brackets_ask_for_more() {
        assert!(Session::incomplete("agent f() -> integer {"));
        assert!(Session::incomplete("(1 +"));
        assert!(!Session::incomplete("1 + 2"));
        assert!(!Session::incomplete(".help"));
    }
}
