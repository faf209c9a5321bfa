//! Name resolution over all loaded modules (`language.md` §2.3–2.4, §9): decides what every name
//! occurrence refers to and reports K2001–K2004, K2006, K2007 and misplaced `next`/`break` (K1001).
//!
//! This file holds the result types, the module-level pass (interfaces and imports) and the
//! driver; `scope` looks names up and words the undefined-name errors, `walk` traverses bodies.
//!
//! The result is a side table keyed by the file and the start of each name's span, so the checker
//! can walk the untyped tree and ask what a name means. An occurrence whose resolution failed has
//! no entry: its error has been reported (or suppressed as a cascade of an earlier one), and the
//! checker should treat it as the error type without reporting again.

pub(crate) use crate::suggest::{closest, edit_distance};
use std::collections::{BTreeMap, HashMap, HashSet};

use crate::ast::{self, Decl, GenericKind, Ident};
use crate::diag::{Code, Diagnostic};
use crate::load::{LoadedModule, ModuleId};
use crate::source::{FileId, SourceMap, Span};

/// A top-level declaration: `module.ast.decls[index]`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct DeclRef {
    pub module: ModuleId,
    pub index: u32,
}

/// A local binding or generic parameter: an index into [`Names::locals`], unique in the program.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct LocalId(pub u32);

/// What a name occurrence refers to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Resolution {
    /// A local value: a parameter, `let`/pattern binding, `var`, clause parameter or local agent.
    /// Binding occurrences map to their own id too.
    Local(LocalId),
    /// A generic parameter (type namespace), at its declaration and at every use.
    Generic(LocalId),
    /// A top-level declaration, reached unqualified, through a qualifier or through an import
    /// (the position tells the namespace). Declared names map to their own declaration too.
    Global(DeclRef),
    /// A qualifier naming a module: the `a` of `a.b`, the qualifier an import binds (its `as`
    /// alias or its last segment), or an import's path (keyed by its first segment).
    Module(ModuleId),
    /// The `f` of `e.f` when it is a field access rather than a module member.
    Field,
    /// The bare name `panic` of a handler clause: the ambient panic clause (§9.21).
    AmbientPanic,
}

/// What kind of binding a local is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LocalKind {
    /// A plain agent parameter `x: T`.
    Param,
    /// A plain clause parameter of a handler.
    ClauseParam,
    /// A variable bound by a pattern (`let`, `match`, `for`, `then`, `use`, `=>` parameters).
    Binding,
    /// A `var` state binding of a `for` or handler.
    Var,
    /// A local agent declaration.
    LocalAgent,
    /// A generic parameter of a top-level or local declaration.
    Generic(GenericKind),
}

#[derive(Clone, Debug)]
pub struct LocalInfo {
    pub name: String,
    pub file: FileId,
    /// The span of the binding occurrence.
    pub span: Span,
    pub kind: LocalKind,
    /// Where the binding is in scope, for tools (completion, an editor): ranges of `file` such
    /// that a reference starting at offset `o` with `start <= o < end` sees this binding, unless
    /// a binding with a larger [`LocalId`] of the same name shadows it there. One range for most
    /// bindings (a block's rest after a `let`, an agent body, an arm); a `var` has one per body
    /// of its `for` or handler clause plus its `then` block; empty for a binding in a broken
    /// declaration the walk never reached.
    pub visible: Vec<Span>,
}

/// The construct a `next` or `break` jumps to (§9.16), decided syntactically.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum JumpTarget {
    /// A `for` loop; the span is that of the `for` expression.
    For(Span),
    /// A request clause of a handler; the span is that of the clause.
    Clause(Span),
}

/// The top-level names a module exports, per namespace (§2.4).
#[derive(Clone, Debug, Default)]
pub struct Interface {
    pub values: BTreeMap<String, DeclRef>,
    pub types: BTreeMap<String, DeclRef>,
}

/// The module-level bindings of one module besides its own top-level declarations (§2.3), as
/// they resolve inside it: qualifiers (the default ones, then those imports bind, which may shadow
/// them) and unqualified imports. Bindings of failed or clashing imports are left out.
#[derive(Clone, Debug, Default)]
pub struct ModuleBindings {
    pub qualifiers: BTreeMap<String, ModuleId>,
    pub values: BTreeMap<String, DeclRef>,
    pub types: BTreeMap<String, DeclRef>,
}

/// The result of name resolution for a whole program.
#[derive(Clone, Debug, Default)]
pub struct Names {
    /// What each name occurrence refers to, keyed by its file and the start of its span.
    pub resolutions: HashMap<(FileId, u32), Resolution>,
    /// Every local binding and generic parameter, indexed by [`LocalId`].
    pub locals: Vec<LocalInfo>,
    /// The exported names of every module, indexed by [`ModuleId`].
    pub interfaces: Vec<Interface>,
    /// The target of every `next`/`break` item, keyed by its file and the start of the item.
    pub jumps: HashMap<(FileId, u32), JumpTarget>,
    /// The qualifiers and unqualified imports of every module, indexed by [`ModuleId`].
    pub bindings: Vec<ModuleBindings>,
}

impl Names {
    /// What the name occurrence starting at `span` in `file` refers to.
    pub fn get(&self, file: FileId, span: Span) -> Option<Resolution> {
        self.resolutions.get(&(file, span.start)).copied()
    }

    pub fn local(&self, id: LocalId) -> Option<&LocalInfo> {
        self.locals.get(id.0 as usize)
    }

    /// The target of the `next`/`break` item starting at `span` in `file`.
    pub fn jump(&self, file: FileId, span: Span) -> Option<JumpTarget> {
        self.jumps.get(&(file, span.start)).copied()
    }

    /// A top-level value of a module by name, e.g. `prelude`'s `add` for operator desugaring.
    pub fn value(&self, module: ModuleId, name: &str) -> Option<DeclRef> {
        self.interfaces
            .get(module.index())?
            .values
            .get(name)
            .copied()
    }

    /// A top-level type of a module by name.
    pub fn ty(&self, module: ModuleId, name: &str) -> Option<DeclRef> {
        self.interfaces
            .get(module.index())?
            .types
            .get(name)
            .copied()
    }
}

/// The default qualifiers (§2.3) and the prelude modules they name.
pub const DEFAULT_QUALIFIERS: &[(&str, &str)] = &[
    ("prelude", "prelude"),
    ("array", "prelude.array"),
    ("string", "prelude.string"),
    ("math", "prelude.math"),
    ("json", "prelude.json"),
    ("record", "prelude.record"),
    ("reflection", "prelude.reflection"),
    ("http", "prelude.http"),
    ("env", "prelude.env"),
    ("file", "prelude.file"),
    ("webhook", "prelude.webhook"),
    ("mcp", "prelude.mcp"),
    ("console", "prelude.console"),
    ("time", "prelude.time"),
];

/// Resolves every name of every module. `modules` is indexed by [`ModuleId`].
pub fn resolve(sources: &SourceMap, modules: &[LoadedModule]) -> (Names, Vec<Diagnostic>) {
    let mut r = Resolver {
        modules,
        names: Names::default(),
        diagnostics: Vec::new(),
        scopes: Vec::new(),
        recovered: Vec::new(),
        cur: ModuleId(0),
        file: FileId(0),
        locals: Vec::new(),
        generics: Vec::new(),
        bounding: None,
        jump: None,
        in_broken_decl: false,
    };
    r.recovered = modules
        .iter()
        .map(|m| {
            if m.syntax_errors.is_empty() {
                HashSet::new()
            } else {
                recovered_names(&sources.get(m.file).text)
            }
        })
        .collect();
    r.collect_interfaces();
    r.build_scopes();
    for (i, module) in modules.iter().enumerate() {
        r.cur = ModuleId(i as u32);
        r.file = module.file;
        for decl in &module.ast.decls {
            let span = decl.span();
            r.in_broken_decl = module.syntax_errors.iter().any(|e| overlaps(*e, span));
            r.decl(decl);
        }
        r.in_broken_decl = false;
    }
    (r.names, r.diagnostics)
}

fn overlaps(a: Span, b: Span) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// Names that lines starting in column 1 seem to declare, for a module with syntax errors: a
/// reference to one of them is probably to a declaration that did not parse, so it is not
/// reported again as undefined.
fn recovered_names(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    for line in text.lines() {
        let mut words = line
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty());
        let mut word = words.next();
        if word == Some("private") || word == Some("external") || word == Some("primitive") {
            word = words.next();
        }
        if matches!(word, Some("agent" | "request" | "data" | "type"))
            && let Some(name) = words.next()
        {
            out.insert(name.to_string());
        }
    }
    out
}

/// How an unqualified name or a qualifier resolved in a module's scope.
#[derive(Clone, Copy)]
enum Hit<T> {
    Found(T),
    /// Bound by an import whose module failed to load: already reported, stay silent.
    Failed,
}

/// The module-level bindings of one module besides its own declarations.
#[derive(Default)]
struct ModuleScope {
    /// Qualifier → module; `None` when the import failed.
    qualifiers: HashMap<String, Option<ModuleId>>,
    /// Qualifiers bound by imports (which, unlike default ones, clash with each other).
    imported_qualifiers: HashSet<String>,
    /// Unqualified imported values and types; `None` when the import failed.
    values: HashMap<String, Option<DeclRef>>,
    types: HashMap<String, Option<DeclRef>>,
}

/// The state of the innermost `next`/`break` target.
#[derive(Clone)]
struct JumpCtx {
    target: JumpTarget,
    vars: Vec<(String, LocalId)>,
}

struct Resolver<'a> {
    modules: &'a [LoadedModule],
    names: Names,
    diagnostics: Vec<Diagnostic>,
    scopes: Vec<ModuleScope>,
    /// Per module: names declared by lines that failed to parse.
    recovered: Vec<HashSet<String>>,
    cur: ModuleId,
    file: FileId,
    /// The local value bindings in scope, innermost last.
    locals: Vec<(String, LocalId)>,
    /// The generic parameters in scope, innermost last.
    generics: Vec<(String, LocalId)>,
    /// While the `extends` bound of a generic parameter is being resolved: the bound cannot
    /// refer to the parameter (`language.md` §6.8, K2001).
    bounding: Option<Bounding>,
    jump: Option<JumpCtx>,
    /// Inside a declaration that contains a syntax error: undefined-name errors are cascades.
    in_broken_decl: bool,
}

/// The `extends` bound being resolved, in a list of generic parameters.
struct Bounding {
    /// The parameter whose bound it is.
    param: LocalId,
    /// Every parameter of the list.
    list: Vec<LocalId>,
    /// References from a bound to another parameter of the list: (whose bound, which parameter,
    /// where), over all the list's bounds so far.
    refs: Vec<(LocalId, LocalId, Span)>,
}

/// The namespace a name is looked up in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ns {
    Value,
    Type,
}

impl Ns {
    fn noun(self) -> &'static str {
        match self {
            Ns::Value => "value",
            Ns::Type => "type",
        }
    }
}

/// Module level: exported interfaces, default qualifiers and imports (§2.3).
impl Resolver<'_> {
    fn collect_interfaces(&mut self) {
        for (m, module) in self.modules.iter().enumerate() {
            let module_id = ModuleId(m as u32);
            let mut interface = Interface::default();
            let mut first_spans: HashMap<(bool, String), Span> = HashMap::new();
            for (i, decl) in module.ast.decls.iter().enumerate() {
                let Some(name) = decl.name() else { continue };
                let r = DeclRef {
                    module: module_id,
                    index: i as u32,
                };
                let (value, ty) = match decl {
                    Decl::Agent(_) | Decl::External(_) | Decl::Primitive(_) => (true, false),
                    Decl::Request(_) | Decl::Data(_) => (true, true),
                    Decl::Synonym(_) => (false, true),
                    Decl::Import(_) => (false, false),
                };
                let mut clash = None;
                if value && interface.values.contains_key(&name.text) {
                    clash = first_spans.get(&(true, name.text.clone())).copied();
                } else if ty && interface.types.contains_key(&name.text) {
                    clash = first_spans.get(&(false, name.text.clone())).copied();
                }
                if let Some(first) = clash {
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::K2003,
                            format!("`{}` is declared twice in this module", name.text),
                            module.file,
                            name.span,
                        )
                        .with_label("declared again here")
                        .with_secondary(
                            module.file,
                            first,
                            "first declared here",
                        ),
                    );
                    self.names
                        .resolutions
                        .insert((module.file, name.span.start), Resolution::Global(r));
                    continue;
                }
                if value {
                    interface.values.insert(name.text.clone(), r);
                    first_spans.insert((true, name.text.clone()), name.span);
                }
                if ty {
                    interface.types.insert(name.text.clone(), r);
                    first_spans.insert((false, name.text.clone()), name.span);
                }
                self.names
                    .resolutions
                    .insert((module.file, name.span.start), Resolution::Global(r));
            }
            self.names.interfaces.push(interface);
        }
    }

    fn build_scopes(&mut self) {
        let prelude_ids: HashMap<&str, ModuleId> = self
            .modules
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_prelude)
            .map(|(i, m)| (m.name.as_str(), ModuleId(i as u32)))
            .collect();
        for (m, module) in self.modules.iter().enumerate() {
            self.cur = ModuleId(m as u32);
            self.file = module.file;
            let mut scope = ModuleScope::default();
            for (q, name) in DEFAULT_QUALIFIERS {
                if let Some(&id) = prelude_ids.get(name) {
                    scope.qualifiers.insert((*q).to_string(), Some(id));
                }
            }
            for (index, decl) in module.ast.decls.iter().enumerate() {
                let Decl::Import(import) = decl else { continue };
                self.in_broken_decl = module
                    .syntax_errors
                    .iter()
                    .any(|e| overlaps(*e, import.span));
                let target = module.imports.get(&index).copied();
                self.import(&mut scope, import, target);
            }
            self.in_broken_decl = false;
            self.names.bindings.push(ModuleBindings {
                qualifiers: present(&scope.qualifiers),
                values: present(&scope.values),
                types: present(&scope.types),
            });
            self.scopes.push(scope);
        }
    }

    fn import(&mut self, scope: &mut ModuleScope, import: &ast::Import, target: Option<ModuleId>) {
        if let (Some(first), Some(m)) = (import.path.first(), target) {
            self.record(first.span, Resolution::Module(m));
        }
        match &import.kind {
            ast::ImportKind::Qualified { alias } => {
                let Some(q) = alias.as_ref().or(import.path.last()) else {
                    return;
                };
                if let Some(m) = target {
                    self.record(q.span, Resolution::Module(m));
                }
                if scope.imported_qualifiers.contains(&q.text)
                    && let Some(existing) = scope.qualifiers.get(&q.text)
                    && *existing != target
                    && existing.is_some()
                    && target.is_some()
                {
                    let other = existing
                        .and_then(|m| self.modules.get(m.index()))
                        .map(|m| m.name.clone());
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::K2003,
                            format!(
                                "the qualifier `{}` is bound to two different modules",
                                q.text
                            ),
                            self.file,
                            q.span,
                        )
                        .with_label(format!("already names `{}`", other.unwrap_or_default()))
                        .with_help("choose another qualifier with `as`"),
                    );
                    return;
                }
                scope.qualifiers.insert(q.text.clone(), target);
                scope.imported_qualifiers.insert(q.text.clone());
            }
            ast::ImportKind::Names { items } => {
                for item in items {
                    let ns = if item.is_type { Ns::Type } else { Ns::Value };
                    let found = match target {
                        None => None,
                        Some(m) => {
                            let interface = self.names.interfaces.get(m.index());
                            let found = interface.and_then(|i| match ns {
                                Ns::Value => i.values.get(&item.name.text),
                                Ns::Type => i.types.get(&item.name.text),
                            });
                            match found {
                                Some(d) => Some(*d),
                                None => {
                                    self.unknown_import(m, ns, &item.name);
                                    None
                                }
                            }
                        }
                    };
                    self.bind_import(scope, ns, &item.name, found);
                }
            }
        }
    }

    fn unknown_import(&mut self, m: ModuleId, ns: Ns, name: &Ident) {
        let Some(module) = self.modules.get(m.index()) else {
            return;
        };
        if self.cascade_in(m, &name.text) {
            return;
        }
        let mut d = Diagnostic::new(
            Code::K2006,
            format!(
                "module `{}` has no {} named `{}`",
                module.name,
                ns.noun(),
                name.text
            ),
            self.file,
            name.span,
        )
        .with_label("not found in the imported module");
        let Some(interface) = self.names.interfaces.get(m.index()) else {
            return;
        };
        let (same, other) = match ns {
            Ns::Value => (&interface.values, &interface.types),
            Ns::Type => (&interface.types, &interface.values),
        };
        if other.contains_key(&name.text) {
            d = d.with_help(match ns {
                Ns::Value => format!("`{0}` is a type: write `type {0}`", name.text),
                Ns::Type => format!("`{0}` is a value: drop the `type` marker", name.text),
            });
        } else if let Some(c) = closest(&name.text, same.keys().map(String::as_str)) {
            d = d.with_help(format!("did you mean `{c}`?"));
        }
        self.diagnostics.push(d);
    }

    fn bind_import(
        &mut self,
        scope: &mut ModuleScope,
        ns: Ns,
        name: &Ident,
        found: Option<DeclRef>,
    ) {
        if let Some(d) = found {
            self.record(name.span, Resolution::Global(d));
        }
        let own = self.interface(self.cur).and_then(|i| match ns {
            Ns::Value => i.values.get(&name.text),
            Ns::Type => i.types.get(&name.text),
        });
        if let Some(own) = own.copied() {
            if found != Some(own) {
                let decl_span = self.decl_name_span(own);
                let mut d = Diagnostic::new(
                    Code::K2003,
                    format!(
                        "the imported {} `{}` clashes with this module's own declaration",
                        ns.noun(),
                        name.text
                    ),
                    self.file,
                    name.span,
                )
                .with_label("imported here");
                if let Some(span) = decl_span {
                    d = d.with_secondary(self.file, span, "declared here");
                }
                self.diagnostics.push(d);
            }
            return;
        }
        let map = match ns {
            Ns::Value => &mut scope.values,
            Ns::Type => &mut scope.types,
        };
        match map.get(&name.text) {
            Some(Some(existing)) if found.is_some() && found != Some(*existing) => {
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::K2003,
                        format!(
                            "`{}` is imported from two different declarations",
                            name.text
                        ),
                        self.file,
                        name.span,
                    )
                    .with_label(format!("already imported as a {}", ns.noun())),
                );
            }
            Some(Some(_)) => {}
            _ => {
                map.insert(name.text.clone(), found);
            }
        }
    }

    fn decl_name_span(&self, r: DeclRef) -> Option<Span> {
        let module = self.modules.get(r.module.index())?;
        Some(module.ast.decls.get(r.index as usize)?.name()?.span)
    }
}

/// The entries of a scope map whose import succeeded, in name order.
fn present<T: Copy>(map: &HashMap<String, Option<T>>) -> BTreeMap<String, T> {
    map.iter()
        .filter_map(|(name, found)| found.map(|t| (name.clone(), t)))
        .collect()
}

fn ns_other(ns: Ns) -> Ns {
    match ns {
        Ns::Value => Ns::Type,
        Ns::Type => Ns::Value,
    }
}

mod scope;
mod walk;

#[cfg(test)]
mod tests;
