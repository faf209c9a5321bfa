//! Name resolution over all loaded modules (`language.md` §2.3–2.4, §9): decides what every name
//! occurrence refers to and reports K2001–K2004, K2006, K2007 and misplaced `next`/`break` (K1001).
//!
//! The result is a side table keyed by the file and the start of each name's span, so the checker
//! can walk the untyped tree and ask what a name means. An occurrence whose resolution failed has
//! no entry: its error has been reported (or suppressed as a cascade of an earlier one), and the
//! checker should treat it as the error type without reporting again.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::ast::{
    self, Decl, Expr, ExprKind, GenericKind, Ident, ItemKind, Pattern, PatternKind, Type, TypeKind,
};
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
    /// A qualifier naming a module: the `a` of `a.b`, an `as` alias, or the path of an import
    /// (keyed by the start of its first segment).
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

/// The edit distance (insertions, deletions, substitutions) between two names, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// The candidate closest to `name` within edit distance 2 (and closer than the name is long),
/// alphabetically first among equals.
fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    let len = name.chars().count();
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= 2 && *d < len)
        .min()
        .map(|(_, c)| c)
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
    jump: Option<JumpCtx>,
    /// Inside a declaration that contains a syntax error: undefined-name errors are cascades.
    in_broken_decl: bool,
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

impl<'a> Resolver<'a> {
    // -----------------------------------------------------------------------------------------
    // Module level
    // -----------------------------------------------------------------------------------------

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
                if let Some(m) = target
                    && alias.is_some()
                {
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

    // -----------------------------------------------------------------------------------------
    // Lookups
    // -----------------------------------------------------------------------------------------

    fn record(&mut self, span: Span, r: Resolution) {
        self.names.resolutions.insert((self.file, span.start), r);
    }

    fn scope(&self) -> Option<&ModuleScope> {
        self.scopes.get(self.cur.index())
    }

    fn interface(&self, m: ModuleId) -> Option<&Interface> {
        self.names.interfaces.get(m.index())
    }

    /// An unqualified value: locals, then the module's own top-level values, then imports.
    fn lookup_value(&self, name: &str) -> Option<Hit<Resolution>> {
        if let Some((_, id)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            return Some(Hit::Found(Resolution::Local(*id)));
        }
        if let Some(d) = self.interface(self.cur).and_then(|i| i.values.get(name)) {
            return Some(Hit::Found(Resolution::Global(*d)));
        }
        match self.scope()?.values.get(name)? {
            Some(d) => Some(Hit::Found(Resolution::Global(*d))),
            None => Some(Hit::Failed),
        }
    }

    /// An unqualified type: generics, then the module's own top-level types, then imports.
    fn lookup_type(&self, name: &str) -> Option<Hit<Resolution>> {
        if let Some((_, id)) = self.generics.iter().rev().find(|(n, _)| n == name) {
            return Some(Hit::Found(Resolution::Generic(*id)));
        }
        if let Some(d) = self.interface(self.cur).and_then(|i| i.types.get(name)) {
            return Some(Hit::Found(Resolution::Global(*d)));
        }
        match self.scope()?.types.get(name)? {
            Some(d) => Some(Hit::Found(Resolution::Global(*d))),
            None => Some(Hit::Failed),
        }
    }

    fn lookup_qualifier(&self, name: &str) -> Option<Hit<ModuleId>> {
        match self.scope()?.qualifiers.get(name)? {
            Some(m) => Some(Hit::Found(*m)),
            None => Some(Hit::Failed),
        }
    }

    /// Whether an undefined-name error about `name` in module `m` is probably a cascade of a
    /// syntax error: the reference sits in a declaration that did not parse, or names something
    /// a broken line of `m` seems to declare, or `m` could not be read at all.
    fn cascade_in(&self, m: ModuleId, name: &str) -> bool {
        if self.in_broken_decl {
            return true;
        }
        if self.modules.get(m.index()).is_some_and(|m| m.unreadable) {
            return true;
        }
        self.recovered
            .get(m.index())
            .is_some_and(|r| r.contains(name))
    }

    fn push_undefined(&mut self, d: Diagnostic, name: &str) {
        if !self.cascade_in(self.cur, name) {
            self.diagnostics.push(d);
        }
    }

    /// Names visible unqualified in `ns`, for suggestions.
    fn visible_names(&self, ns: Ns) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        match ns {
            Ns::Value => out.extend(self.locals.iter().map(|(n, _)| n.as_str())),
            Ns::Type => out.extend(self.generics.iter().map(|(n, _)| n.as_str())),
        }
        if let Some(i) = self.interface(self.cur) {
            match ns {
                Ns::Value => out.extend(i.values.keys().map(String::as_str)),
                Ns::Type => out.extend(i.types.keys().map(String::as_str)),
            }
        }
        if let Some(s) = self.scope() {
            match ns {
                Ns::Value => out.extend(s.values.keys().map(String::as_str)),
                Ns::Type => out.extend(s.types.keys().map(String::as_str)),
            }
        }
        out
    }

    /// `prelude.throw` for `throw`: the default-qualified spellings of prelude declarations of
    /// that name, joined with "or".
    fn prelude_spelling(&self, ns: Ns, name: &str) -> Option<String> {
        let mut spellings = Vec::new();
        for (q, module_name) in DEFAULT_QUALIFIERS {
            let Some(m) = self
                .modules
                .iter()
                .position(|m| m.is_prelude && m.name == *module_name)
            else {
                continue;
            };
            let Some(interface) = self.names.interfaces.get(m) else {
                continue;
            };
            let has = match ns {
                Ns::Value => interface.values.contains_key(name),
                Ns::Type => interface.types.contains_key(name),
            };
            if has {
                spellings.push(format!("`{q}.{name}`"));
            }
        }
        if spellings.is_empty() {
            None
        } else {
            Some(spellings.join(" or "))
        }
    }

    /// K2001 for an unqualified name, with the most helpful hint available.
    fn undefined(&mut self, ns: Ns, name: &Ident) {
        let what = match ns {
            Ns::Value => "name",
            Ns::Type => "type",
        };
        let mut d = Diagnostic::new(
            Code::K2001,
            format!("undefined {what} `{}`", name.text),
            self.file,
            name.span,
        )
        .with_label("not found in this scope");
        let other = match ns {
            Ns::Value => self.lookup_type(&name.text).is_some(),
            Ns::Type => self.lookup_value(&name.text).is_some(),
        };
        if let Some(spelling) = self.prelude_spelling(ns, &name.text) {
            d = d.with_help(format!(
                "nothing from the prelude is unqualified: write {spelling}"
            ));
        } else if ns == Ns::Value && self.lookup_qualifier(&name.text).is_some() {
            d = d.with_note(format!(
                "`{0}` is a module qualifier: name one of its members, `{0}.<name>`",
                name.text
            ));
        } else if other {
            d = d.with_note(match ns {
                Ns::Value => format!("`{}` is a type, not a value", name.text),
                Ns::Type => format!("`{}` is a value, not a type", name.text),
            });
        } else if let Some(c) = closest(&name.text, self.visible_names(ns)) {
            let c = c.to_string();
            d = d.with_help(format!("did you mean `{c}`?"));
        }
        self.push_undefined(d, &name.text);
    }

    /// K2001 for `q` of `q.b` when `q` is neither a value nor a type nor a qualifier.
    fn undefined_qualifier(&mut self, q: &Ident, member: &Ident, ns: Ns) {
        let mut d = Diagnostic::new(
            Code::K2001,
            format!("undefined name `{}`", q.text),
            self.file,
            q.span,
        )
        .with_label("not a value or a module qualifier");
        let mut candidates: Vec<&str> = self
            .scope()
            .map(|s| s.qualifiers.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if ns == Ns::Value {
            candidates.extend(self.visible_names(Ns::Value));
        }
        if let Some(c) = closest(&q.text, candidates) {
            let c = c.to_string();
            d = d.with_help(format!("did you mean `{c}.{}`?", member.text));
        } else if let Some(path) = self
            .modules
            .iter()
            .find(|m| !m.is_prelude && m.name.rsplit('.').next() == Some(q.text.as_str()))
            .map(|m| m.name.clone())
        {
            d = d.with_help(format!("import the module first: `import {path}`"));
        }
        self.push_undefined(d, &q.text);
    }

    /// Resolves `q.member` as a module member in `ns`, `q` known to be a qualifier for `m`.
    fn member(&mut self, q: &Ident, m: ModuleId, member: &Ident, ns: Ns) -> Option<DeclRef> {
        self.record(q.span, Resolution::Module(m));
        let interface = self.interface(m)?;
        let (same, other) = match ns {
            Ns::Value => (&interface.values, &interface.types),
            Ns::Type => (&interface.types, &interface.values),
        };
        if let Some(d) = same.get(&member.text).copied() {
            self.record(member.span, Resolution::Global(d));
            return Some(d);
        }
        let in_other = other.contains_key(&member.text);
        let suggestion = closest(&member.text, same.keys().map(String::as_str)).map(str::to_string);
        let module_name = self
            .modules
            .get(m.index())
            .map(|m| m.name.clone())
            .unwrap_or_default();
        if self.cascade_in(m, &member.text) {
            return None;
        }
        let mut d = if in_other {
            Diagnostic::new(
                Code::K2002,
                format!(
                    "`{}.{}` is a {}, not a {}",
                    q.text,
                    member.text,
                    ns_other(ns).noun(),
                    ns.noun()
                ),
                self.file,
                member.span,
            )
            .with_label(format!("not a {} of module `{module_name}`", ns.noun()))
        } else {
            Diagnostic::new(
                Code::K2002,
                format!("module `{module_name}` has no member `{}`", member.text),
                self.file,
                member.span,
            )
            .with_label(format!("not declared in `{module_name}`"))
        };
        if let Some(c) = suggestion {
            d = d.with_help(format!("did you mean `{}.{c}`?", q.text));
        }
        self.diagnostics.push(d);
        None
    }

    /// A reference `[q.]name` that is always a module member when qualified (types, constructor
    /// patterns and clause names).
    fn qualified_or_bare(
        &mut self,
        qualifier: Option<&Ident>,
        name: &Ident,
        ns: Ns,
    ) -> Option<Resolution> {
        match qualifier {
            Some(q) => match self.lookup_qualifier(&q.text) {
                Some(Hit::Found(m)) => self.member(q, m, name, ns).map(Resolution::Global),
                Some(Hit::Failed) => None,
                None => {
                    if self.lookup_type(&q.text).is_some() || self.lookup_value(&q.text).is_some() {
                        let d = Diagnostic::new(
                            Code::K2004,
                            format!("`{}` is not a module", q.text),
                            self.file,
                            q.span,
                        )
                        .with_label("a qualifier must name a module")
                        .with_note("a reference has at most one qualifier, naming an imported or default module");
                        self.push_undefined(d, &q.text);
                    } else {
                        self.undefined_qualifier(q, name, ns);
                    }
                    None
                }
            },
            None => {
                let hit = match ns {
                    Ns::Value => self.lookup_value(&name.text),
                    Ns::Type => self.lookup_type(&name.text),
                };
                match hit {
                    Some(Hit::Found(r)) => {
                        self.record(name.span, r);
                        Some(r)
                    }
                    Some(Hit::Failed) => None,
                    None => {
                        self.undefined(ns, name);
                        None
                    }
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Bindings
    // -----------------------------------------------------------------------------------------

    fn new_local(&mut self, name: &Ident, kind: LocalKind) -> LocalId {
        let id = LocalId(self.names.locals.len() as u32);
        self.names.locals.push(LocalInfo {
            name: name.text.clone(),
            file: self.file,
            span: name.span,
            kind,
        });
        match kind {
            LocalKind::Generic(_) => self.record(name.span, Resolution::Generic(id)),
            _ => self.record(name.span, Resolution::Local(id)),
        }
        id
    }

    fn duplicate(&mut self, what: &str, name: &str, span: Span, first: Span) {
        self.diagnostics.push(
            Diagnostic::new(
                Code::K2003,
                format!("duplicate {what} `{name}`"),
                self.file,
                span,
            )
            .with_label(format!("`{name}` appears again here"))
            .with_secondary(self.file, first, "first here"),
        );
    }

    /// Reports K2003 for every repeated name in `names` (in order).
    fn check_unique<'n>(&mut self, what: &str, names: impl IntoIterator<Item = (&'n str, Span)>) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for (name, span) in names {
            if let Some(first) = seen.get(name) {
                let first = *first;
                self.duplicate(what, name, span, first);
            } else {
                seen.insert(name, span);
            }
        }
    }

    /// Declares generic parameters (in scope until the caller truncates `generics`).
    fn generic_params(&mut self, params: &[ast::GenericParam]) {
        self.check_unique(
            "generic parameter",
            params.iter().map(|g| (g.name.text.as_str(), g.name.span)),
        );
        for g in params {
            let id = self.new_local(&g.name, LocalKind::Generic(g.kind));
            self.generics.push((g.name.text.clone(), id));
        }
        for g in params {
            if let Some(bound) = &g.bound {
                self.ty(bound);
            }
        }
    }

    fn sig_params(&mut self, params: &[ast::SigParam]) {
        self.check_unique(
            "parameter",
            params.iter().map(|p| (p.name.text.as_str(), p.name.span)),
        );
        for p in params {
            self.ty(&p.ty);
        }
    }

    /// Resolves binding parameters and returns the bindings they introduce (not yet in scope).
    fn binding_params(&mut self, params: &[ast::Param], kind: LocalKind) -> Vec<(String, LocalId)> {
        self.check_unique(
            "parameter",
            params.iter().map(|p| (p.name.text.as_str(), p.name.span)),
        );
        let mut bound = Vec::new();
        let mut seen: HashMap<String, Span> = HashMap::new();
        for p in params {
            match &p.kind {
                ast::ParamKind::Plain { ty, .. } => {
                    if let Some(ty) = ty {
                        self.ty(ty);
                    }
                    let id = self.new_local(&p.name, kind);
                    seen.entry(p.name.text.clone()).or_insert(p.name.span);
                    bound.push((p.name.text.clone(), id));
                }
                ast::ParamKind::Destructure(pattern) => {
                    let mut names = Vec::new();
                    self.pattern(pattern, &mut names);
                    for (name, span, id) in names {
                        if let Some(first) = seen.get(&name) {
                            let first = *first;
                            self.duplicate("binding", &name, span, first);
                        } else {
                            seen.insert(name.clone(), span);
                        }
                        bound.push((name, id));
                    }
                }
            }
        }
        bound
    }

    /// Resolves a pattern's types and constructors and creates its bindings, which the caller
    /// brings into scope. Repeated bindings within one pattern are K2003.
    fn pattern(&mut self, p: &Pattern, out: &mut Vec<(String, Span, LocalId)>) {
        let start = out.len();
        self.pattern_inner(p, out);
        let mut seen: HashMap<String, Span> = HashMap::new();
        let mut dups = Vec::new();
        for (name, span, _) in &out[start..] {
            if let Some(first) = seen.get(name) {
                dups.push((name.clone(), *span, *first));
            } else {
                seen.insert(name.clone(), *span);
            }
        }
        for (name, span, first) in dups {
            self.duplicate("binding", &name, span, first);
        }
    }

    fn pattern_inner(&mut self, p: &Pattern, out: &mut Vec<(String, Span, LocalId)>) {
        match &p.kind {
            PatternKind::Wildcard(ty) => {
                if let Some(ty) = ty {
                    self.ty(ty);
                }
            }
            PatternKind::Bind { name, ty } => {
                if let Some(ty) = ty {
                    self.ty(ty);
                }
                let id = self.new_local(name, LocalKind::Binding);
                out.push((name.text.clone(), name.span, id));
            }
            PatternKind::Lit(_) | PatternKind::Error => {}
            PatternKind::Record(fields) => self.field_patterns(fields, out),
            PatternKind::Tuple(items) => {
                for item in items {
                    self.pattern_inner(item, out);
                }
            }
            PatternKind::Filter { inner, .. } => self.pattern_inner(inner, out),
            PatternKind::Constructor {
                qualifier,
                name,
                type_args,
                fields,
            } => {
                self.qualified_or_bare(qualifier.as_ref(), name, Ns::Value);
                for t in type_args.iter().flatten() {
                    self.ty(t);
                }
                self.field_patterns(fields, out);
            }
        }
    }

    fn field_patterns(
        &mut self,
        fields: &[ast::FieldPattern],
        out: &mut Vec<(String, Span, LocalId)>,
    ) {
        self.check_unique(
            "pattern field",
            fields.iter().map(|f| (f.name.text.as_str(), f.name.span)),
        );
        let mut seen = HashSet::new();
        for f in fields {
            // A repeated field was reported above; binding it again would only repeat that.
            if !seen.insert(f.name.text.as_str()) {
                continue;
            }
            match &f.pattern {
                Some(p) => self.pattern_inner(p, out),
                None => {
                    let id = self.new_local(&f.name, LocalKind::Binding);
                    out.push((f.name.text.clone(), f.name.span, id));
                }
            }
        }
    }

    fn bring_into_scope(&mut self, bindings: Vec<(String, Span, LocalId)>) {
        self.locals
            .extend(bindings.into_iter().map(|(n, _, id)| (n, id)));
    }

    // -----------------------------------------------------------------------------------------
    // Declarations
    // -----------------------------------------------------------------------------------------

    fn decl(&mut self, decl: &Decl) {
        self.locals.clear();
        self.generics.clear();
        self.jump = None;
        match decl {
            Decl::Import(_) => {}
            Decl::Synonym(s) => {
                self.generic_params(&s.generics);
                self.ty(&s.ty);
            }
            Decl::Agent(a) => self.agent(a),
            Decl::Request(r) => {
                self.generic_params(&r.generics);
                self.sig_params(&r.params);
                self.ty(&r.ret);
            }
            Decl::External(e) => {
                self.generic_params(&e.generics);
                self.sig_params(&e.params);
                self.ty(&e.ret);
                if let Some(t) = &e.effects {
                    self.ty(t);
                }
            }
            Decl::Primitive(p) => {
                self.generic_params(&p.generics);
                self.sig_params(&p.params);
                self.ty(&p.ret);
                if let Some(t) = &p.effects {
                    self.ty(t);
                }
            }
            Decl::Data(d) => {
                self.generic_params(&d.generics);
                self.sig_params(&d.params);
            }
        }
    }

    /// The signature and body of a top-level or local agent (its name is bound by the caller).
    fn agent(&mut self, a: &ast::AgentDecl) {
        let (locals, generics) = (self.locals.len(), self.generics.len());
        let saved_jump = self.jump.take();
        self.generic_params(&a.generics);
        let params = self.binding_params(&a.params, LocalKind::Param);
        for t in a.ret.iter().chain(a.effects.iter()) {
            self.ty(t);
        }
        self.locals.extend(params);
        self.block(&a.body);
        self.locals.truncate(locals);
        self.generics.truncate(generics);
        self.jump = saved_jump;
    }

    // -----------------------------------------------------------------------------------------
    // Types
    // -----------------------------------------------------------------------------------------

    fn ty(&mut self, t: &Type) {
        match &t.kind {
            TypeKind::Atom(_) | TypeKind::Error => {}
            TypeKind::Named { qualifier, name } => {
                self.qualified_or_bare(qualifier.as_ref(), name, Ns::Type);
            }
            TypeKind::Apply { head, args } => {
                self.ty(head);
                for a in args {
                    self.ty(a);
                }
            }
            TypeKind::Tuple(items) | TypeKind::Union(items) => {
                for i in items {
                    self.ty(i);
                }
            }
            TypeKind::Object(fields) => self.field_types(fields),
            TypeKind::Override { base, entries } => {
                self.ty(base);
                for e in entries {
                    self.ty(e);
                }
            }
            TypeKind::Agent {
                params,
                ret,
                effects,
            } => {
                match params {
                    ast::AgentParams::Fields(fields) => self.field_types(fields),
                    ast::AgentParams::Type(t) => self.ty(t),
                }
                self.ty(ret);
                if let Some(e) = effects {
                    self.ty(e);
                }
            }
            TypeKind::Attributed { ty, attr } => {
                self.ty(ty);
                self.ty(attr);
            }
        }
    }

    fn field_types(&mut self, fields: &[ast::FieldType]) {
        self.check_unique(
            "field",
            fields.iter().map(|f| (f.name.text.as_str(), f.name.span)),
        );
        for f in fields {
            self.ty(&f.ty);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Blocks and expressions
    // -----------------------------------------------------------------------------------------

    fn block(&mut self, b: &ast::Block) {
        let mark = self.locals.len();
        for item in &b.items {
            self.item(item);
        }
        self.locals.truncate(mark);
    }

    fn item(&mut self, item: &ast::Item) {
        match &item.kind {
            ItemKind::Let { pattern, value } => {
                self.expr(value);
                let mut bound = Vec::new();
                self.pattern(pattern, &mut bound);
                self.bring_into_scope(bound);
            }
            ItemKind::Use { binder, provider } => {
                self.expr(provider);
                if let Some(pattern) = binder {
                    let mut bound = Vec::new();
                    self.pattern(pattern, &mut bound);
                    self.bring_into_scope(bound);
                }
            }
            ItemKind::Agent(a) => {
                let id = self.new_local(&a.name, LocalKind::LocalAgent);
                self.locals.push((a.name.text.clone(), id));
                self.agent(a);
            }
            ItemKind::Return(value) => {
                if let Some(v) = value {
                    self.expr(v);
                }
            }
            ItemKind::Next { value, updates } => {
                self.jump_item(item.span, "next");
                if let Some(v) = value {
                    self.expr(v);
                }
                if let Some(updates) = updates {
                    self.modifiers(updates);
                }
            }
            ItemKind::Break(value) => {
                self.jump_item(item.span, "break");
                if let Some(v) = value {
                    self.expr(v);
                }
            }
            ItemKind::Expr(e) => self.expr(e),
        }
    }

    fn jump_item(&mut self, span: Span, keyword: &str) {
        match &self.jump {
            Some(ctx) => {
                self.names.jumps.insert((self.file, span.start), ctx.target);
            }
            None => {
                if self.in_broken_decl {
                    return;
                }
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::K1001,
                        format!("`{keyword}` outside a `for` body or request clause"),
                        self.file,
                        span,
                    )
                    .with_label(format!("nothing here for `{keyword}` to target"))
                    .with_note("agents are opaque to `next` and `break`, and a `then` block belongs to the outer context"),
                );
            }
        }
    }

    fn modifiers(&mut self, updates: &[ast::Modifier]) {
        self.check_unique(
            "state update",
            updates.iter().map(|m| (m.name.text.as_str(), m.name.span)),
        );
        for m in updates {
            self.expr(&m.value);
            let Some(ctx) = &self.jump else { continue };
            match ctx.vars.iter().find(|(n, _)| *n == m.name.text) {
                Some((_, id)) => {
                    let id = *id;
                    self.record(m.name.span, Resolution::Local(id));
                }
                None => {
                    let what = match ctx.target {
                        JumpTarget::For(_) => "the targeted `for`",
                        JumpTarget::Clause(_) => "the handler of the targeted clause",
                    };
                    let suggestion =
                        closest(&m.name.text, ctx.vars.iter().map(|(n, _)| n.as_str()))
                            .map(str::to_string);
                    let mut d = Diagnostic::new(
                        Code::K2007,
                        format!("`{}` is not a `var` of {what}", m.name.text),
                        self.file,
                        m.name.span,
                    )
                    .with_label("no such state variable");
                    if let Some(c) = suggestion {
                        d = d.with_help(format!("did you mean `{c}`?"));
                    } else if ctx.vars.is_empty() {
                        d = d.with_note(format!("{what} declares no `var`"));
                    }
                    if !self.in_broken_decl {
                        self.diagnostics.push(d);
                    }
                }
            }
        }
    }

    fn exprs(&mut self, es: &[Expr]) {
        for e in es {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Error => {}
            ExprKind::Template(parts) => {
                for part in parts {
                    if let ast::TemplatePart::Interp(e) = part {
                        self.expr(e);
                    }
                }
            }
            ExprKind::Name(name) => {
                self.qualified_or_bare(None, name, Ns::Value);
            }
            ExprKind::Field { target, field } => self.field(target, field),
            ExprKind::Call { callee, args } => {
                self.expr(callee);
                self.check_unique(
                    "argument label",
                    args.iter().map(|a| (a.label.text.as_str(), a.label.span)),
                );
                for a in args {
                    if let Some(v) = &a.value {
                        self.expr(v);
                    }
                }
            }
            ExprKind::TypeApply { callee, args } => {
                self.expr(callee);
                for t in args {
                    self.ty(t);
                }
            }
            ExprKind::Binary { left, right, .. } => {
                self.expr(left);
                self.expr(right);
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond);
                self.block(then);
                if let Some(o) = otherwise {
                    self.expr(o);
                }
            }
            ExprKind::Match { subject, arms } => {
                self.expr(subject);
                for arm in arms {
                    let mark = self.locals.len();
                    let mut bound = Vec::new();
                    self.pattern(&arm.pattern, &mut bound);
                    self.bring_into_scope(bound);
                    self.expr(&arm.body);
                    self.locals.truncate(mark);
                }
            }
            ExprKind::For(f) => self.for_expr(f, e.span),
            ExprKind::ParallelTuple(items) | ExprKind::Tuple(items) => self.exprs(items),
            ExprKind::Handler(h) => self.handler(h),
            ExprKind::Agent(a) => {
                let mark = self.locals.len();
                let saved_jump = self.jump.take();
                let params = self.binding_params(&a.params, LocalKind::Param);
                for t in a.ret.iter().chain(a.effects.iter()) {
                    self.ty(t);
                }
                self.locals.extend(params);
                self.block(&a.body);
                self.locals.truncate(mark);
                self.jump = saved_jump;
            }
            ExprKind::Record(entries) => {
                self.check_unique(
                    "record key",
                    entries.iter().map(|en| (en.key.as_str(), en.key_span)),
                );
                for en in entries {
                    self.expr(&en.value);
                }
            }
            ExprKind::Block(b) => self.block(b),
        }
    }

    /// `target.field` (§2.4): a field access when the target is a value, a module member when
    /// it is a qualifier.
    fn field(&mut self, target: &Expr, field: &Ident) {
        let ExprKind::Name(a) = &target.kind else {
            self.expr(target);
            self.record(field.span, Resolution::Field);
            return;
        };
        match self.lookup_value(&a.text) {
            Some(Hit::Found(r)) => {
                self.record(a.span, r);
                self.record(field.span, Resolution::Field);
                return;
            }
            Some(Hit::Failed) => return,
            None => {}
        }
        match self.lookup_qualifier(&a.text) {
            Some(Hit::Found(m)) => {
                self.member(a, m, field, Ns::Value);
            }
            Some(Hit::Failed) => {}
            None => {
                if self.lookup_type(&a.text).is_some() {
                    let d = Diagnostic::new(
                        Code::K2004,
                        format!("`{}` is a type, not a value or a module", a.text),
                        self.file,
                        a.span,
                    )
                    .with_label("cannot be used with `.`")
                    .with_note(format!(
                        "`{0}.{1}` reads a field of a value or names a member of a module; `{0}` is neither",
                        a.text, field.text
                    ));
                    self.push_undefined(d, &a.text);
                } else {
                    self.undefined_qualifier(a, field, Ns::Value);
                }
            }
        }
    }

    fn var_bindings(&mut self, vars: &[ast::VarBinding]) -> Vec<(String, LocalId)> {
        self.check_unique(
            "`var`",
            vars.iter().map(|v| (v.name.text.as_str(), v.name.span)),
        );
        let mut out = Vec::new();
        for v in vars {
            if let Some(t) = &v.ty {
                self.ty(t);
            }
            self.expr(&v.init);
            let id = self.new_local(&v.name, LocalKind::Var);
            out.push((v.name.text.clone(), id));
        }
        out
    }

    /// A `then` block: sees the state and its own pattern, but jumps in it aim at the outer
    /// context (§9.16).
    fn then_clause(&mut self, then: &ast::ThenClause, vars: &[(String, LocalId)]) {
        let mark = self.locals.len();
        self.locals.extend(vars.iter().cloned());
        if let Some(p) = &then.pattern {
            let mut bound = Vec::new();
            self.pattern(p, &mut bound);
            self.bring_into_scope(bound);
        }
        self.block(&then.body);
        self.locals.truncate(mark);
    }

    fn for_expr(&mut self, f: &ast::ForExpr, span: Span) {
        self.expr(&f.source);
        let vars = self.var_bindings(&f.vars);
        let mark = self.locals.len();
        let mut bound = Vec::new();
        self.pattern(&f.pattern, &mut bound);
        self.locals.extend(vars.iter().cloned());
        self.bring_into_scope(bound);
        let outer = self.jump.replace(JumpCtx {
            target: JumpTarget::For(span),
            vars: vars.clone(),
        });
        self.block(&f.body);
        self.jump = outer;
        self.locals.truncate(mark);
        if let Some(then) = &f.then {
            self.then_clause(then, &vars);
        }
    }

    fn handler(&mut self, h: &ast::HandlerExpr) {
        for t in h.type_args.iter().flatten() {
            self.ty(t);
        }
        let vars = self.var_bindings(&h.vars);
        let mut handled: Vec<(String, Span)> = Vec::new();
        for clause in &h.clauses {
            let key = if clause.qualifier.is_none() && clause.name.text == "panic" {
                self.record(clause.name.span, Resolution::AmbientPanic);
                "ambient panic".to_string()
            } else {
                match self.qualified_or_bare(clause.qualifier.as_ref(), &clause.name, Ns::Value) {
                    Some(r) => format!("{r:?}"),
                    None => match &clause.qualifier {
                        Some(q) => format!("{}.{}", q.text, clause.name.text),
                        None => clause.name.text.clone(),
                    },
                }
            };
            if let Some((_, first)) = handled.iter().find(|(k, _)| *k == key) {
                let first = *first;
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::K2003,
                        format!(
                            "request `{}` is handled twice in this handler",
                            clause.name.text
                        ),
                        self.file,
                        clause.name.span,
                    )
                    .with_label("second clause for the same request")
                    .with_secondary(self.file, first, "first handled here"),
                );
            } else {
                handled.push((key, clause.name.span));
            }
            for t in clause.type_args.iter().flatten() {
                self.ty(t);
            }
            let mark = self.locals.len();
            let params = self.binding_params(&clause.params, LocalKind::ClauseParam);
            if let Some(t) = &clause.ret {
                self.ty(t);
            }
            self.locals.extend(vars.iter().cloned());
            self.locals.extend(params);
            let outer = self.jump.replace(JumpCtx {
                target: JumpTarget::Clause(clause.span),
                vars: vars.clone(),
            });
            self.block(&clause.body);
            self.jump = outer;
            self.locals.truncate(mark);
        }
        if let Some(then) = &h.then {
            self.then_clause(then, &vars);
        }
    }
}

fn ns_other(ns: Ns) -> Ns {
    match ns {
        Ns::Value => Ns::Type,
        Ns::Type => Ns::Value,
    }
}

#[cfg(test)]
mod tests;
