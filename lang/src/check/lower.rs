//! Lowering of written type expressions into semantic types, rows and attributes: kinds (K3007),
//! arity (K3009), malformed types (K3011), generic bounds (K3001) and synonym expansion.
//!
//! A type that fails to lower becomes the error type (rows: the pure row), and the failure is
//! counted in `Checker::lower_failures`, so a declaration with a broken annotation can fall back
//! to inference instead of reporting follow-on errors.

use std::collections::HashMap;

use super::{Checker, qualified};
use crate::ast::{self, GenericKind, TypeAtom, TypeKind};
use crate::diag::Code;
use crate::resolve::{DeclRef, Resolution};
use crate::source::{FileId, Span};
use crate::types::*;

/// The kind of thing a type expression must denote at its position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Type,
    Effect,
    Attribute,
}

impl Kind {
    pub(crate) fn of(kind: GenericKind) -> Kind {
        match kind {
            GenericKind::Type => Kind::Type,
            GenericKind::Effect => Kind::Effect,
            GenericKind::Attribute => Kind::Attribute,
        }
    }

    fn word(self) -> &'static str {
        match self {
            Kind::Type => "a type",
            Kind::Effect => "an effect row",
            Kind::Attribute => "an attribute",
        }
    }
}

/// Where a type expression is lowered: the file of its module and the substitution of the
/// synonym generics being expanded.
#[derive(Clone)]
pub(crate) struct TyScope {
    pub file: FileId,
    pub subst: HashMap<GenericId, GenArg>,
}

impl Checker<'_> {
    // -----------------------------------------------------------------------------------
    // Lowering written types
    // -----------------------------------------------------------------------------------

    /// Records a lowering failure (already reported) and gives the stand-in of `kind`.
    fn failed(&mut self, kind: Kind) -> GenArg {
        self.lower_failures += 1;
        fallback(kind)
    }

    pub(crate) fn lower_ty(&mut self, scope: &TyScope, t: &ast::Type) -> Ty {
        match self.lower_any(scope, t, Kind::Type) {
            GenArg::Type(ty) => ty,
            _ => Ty::error(),
        }
    }

    pub(crate) fn lower_row(&mut self, scope: &TyScope, t: &ast::Type) -> Row {
        match self.lower_any(scope, t, Kind::Effect) {
            GenArg::Effect(row) => row,
            _ => Row::pure(),
        }
    }

    fn kind_error(&mut self, file: FileId, t: &ast::Type, expected: Kind, found: Kind) -> GenArg {
        self.error(
            Code::K3007,
            file,
            t.span,
            format!("expected {}, found {}", expected.word(), found.word()),
        )
        .set_label(format!("this is {}", found.word()))
        .set_help(match expected {
            Kind::Type => "a type is written here, such as `integer`, `array[T]` or a data type",
            Kind::Effect => "an effect row is written here: `pure`, `io`, `all`, request names or an effect generic",
            Kind::Attribute => "an attribute is written here: `public`, `private` or an attribute generic",
        });
        self.failed(expected)
    }

    /// Lowers a type expression in the kind its position needs.
    pub(crate) fn lower_any(&mut self, scope: &TyScope, t: &ast::Type, kind: Kind) -> GenArg {
        if self.expansion.depth == 0 {
            self.expansion = Expansion::default();
        }
        if !self.expanding.is_empty() {
            if self.expansion.over {
                return fallback(kind);
            }
            self.expansion.parts += 1;
            if self.expansion.parts > EXPANSION_LIMIT {
                self.expansion.over = true;
                return fallback(kind);
            }
        }
        self.expansion.depth += 1;
        let out = stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
            self.lower_any_unguarded(scope, t, kind)
        });
        self.expansion.depth -= 1;
        out
    }

    fn lower_any_unguarded(&mut self, scope: &TyScope, t: &ast::Type, kind: Kind) -> GenArg {
        let file = scope.file;
        match &t.kind {
            TypeKind::Error => self.failed(kind),
            TypeKind::Atom(atom) => self.lower_atom(scope, t, *atom, kind),
            TypeKind::Named { name, .. } => self.lower_named(scope, t, name, &[], kind),
            TypeKind::Apply { head, args } => match &head.kind {
                TypeKind::Atom(TypeAtom::Array) | TypeKind::Atom(TypeAtom::Record) => {
                    if kind != Kind::Type {
                        return self.kind_error(file, t, kind, Kind::Type);
                    }
                    if args.len() != 1 {
                        self.error(
                            Code::K3009,
                            file,
                            t.span,
                            format!(
                                "`{}` takes 1 type argument, found {}",
                                atom_word(head),
                                args.len()
                            ),
                        )
                        .set_label(format!("{} type arguments given here", args.len()));
                        return self.failed(kind);
                    }
                    let elem = self.lower_ty(scope, &args[0]);
                    GenArg::Type(if matches!(head.kind, TypeKind::Atom(TypeAtom::Array)) {
                        Ty::array(elem)
                    } else {
                        Ty::record(elem)
                    })
                }
                TypeKind::Named { name, .. } => self.lower_named(scope, t, name, args, kind),
                _ => {
                    self.error(Code::K3011, file, t.span, "this type takes no type arguments")
                        .set_label("only generic data types, requests, synonyms, `array` and `record` take arguments");
                    self.failed(kind)
                }
            },
            TypeKind::Tuple(items) => {
                if kind != Kind::Type {
                    return self.kind_error(file, t, kind, Kind::Type);
                }
                GenArg::Type(Ty::tuple(
                    items.iter().map(|i| self.lower_ty(scope, i)).collect(),
                ))
            }
            TypeKind::Object(fields) => {
                if kind != Kind::Type {
                    return self.kind_error(file, t, kind, Kind::Type);
                }
                let fields = self.lower_fields(scope, fields);
                GenArg::Type(Ty::object(fields, Rest::Open))
            }
            TypeKind::Override { base, entries } => {
                if kind != Kind::Effect {
                    return self.kind_error(file, t, kind, Kind::Effect);
                }
                let base = self.lower_row(scope, base);
                let mut row = base;
                for e in entries {
                    let entry = self.lower_row(scope, e);
                    for req in entry.entries.keys() {
                        row = row.without(*req);
                    }
                    let joined = self.lattice().join_row(&row, &entry);
                    row = joined;
                }
                GenArg::Effect(row)
            }
            TypeKind::Agent {
                params,
                ret,
                effects,
            } => {
                if kind != Kind::Type {
                    return self.kind_error(file, t, kind, Kind::Type);
                }
                let param = match params {
                    ast::AgentParams::Fields(fields) => {
                        Ty::object(self.lower_fields(scope, fields), Rest::Open)
                    }
                    ast::AgentParams::Type(p) => self.lower_ty(scope, p),
                };
                let ret = self.lower_ty(scope, ret);
                let row = match effects {
                    Some(e) => self.lower_row(scope, e),
                    None => Row::pure(),
                };
                GenArg::Type(Ty::agent(param, ret, row))
            }
            TypeKind::Union(members) => match kind {
                Kind::Type => {
                    let tys: Vec<Ty> = members.iter().map(|m| self.lower_ty(scope, m)).collect();
                    let mut lat = self.lattice();
                    let joined = lat.join_all(&tys);
                    let conflicts = lat.join_conflicts.clone();
                    if let Some(c) = conflicts.first() {
                        let name = qualified(self.program, *c);
                        self.error(Code::K3005, file, t.span, format!("two instantiations of `{name}` with different invariant arguments cannot be joined"));
                    }
                    GenArg::Type(joined)
                }
                Kind::Effect => {
                    let mut row = Row::pure();
                    for m in members {
                        let r = self.lower_row(scope, m);
                        let label = "this row names two instantiations that cannot be joined";
                        row = self.join_rows_reporting(file, (t.span, label), &row, &r);
                    }
                    GenArg::Effect(row)
                }
                Kind::Attribute => {
                    let mut attr = Attr::Public;
                    for m in members {
                        if let GenArg::Attr(a) = self.lower_any(scope, m, Kind::Attribute) {
                            attr = attr.join(a);
                        }
                    }
                    GenArg::Attr(attr)
                }
            },
            TypeKind::Attributed { ty, attr } => {
                if kind != Kind::Type {
                    return self.kind_error(file, t, kind, Kind::Type);
                }
                let base = self.lower_ty(scope, ty);
                let attr = match self.lower_any(scope, attr, Kind::Attribute) {
                    GenArg::Attr(a) => a,
                    _ => Attr::Public,
                };
                let joined = base.attr.join(attr);
                GenArg::Type(base.with_attr(joined))
            }
        }
    }

    fn lower_fields(&mut self, scope: &TyScope, fields: &[ast::FieldType]) -> Vec<Field> {
        let mut out: Vec<Field> = Vec::new();
        for f in fields {
            let ty = self.lower_ty(scope, &f.ty);
            if out.iter().any(|g| g.name == f.name.text) {
                continue; // duplicate field names are the resolver's K2003
            }
            out.push(Field {
                name: f.name.text.clone(),
                ty,
                optional: f.optional,
            });
        }
        out
    }

    fn lower_atom(&mut self, scope: &TyScope, t: &ast::Type, atom: TypeAtom, kind: Kind) -> GenArg {
        let file = scope.file;
        let (found, value) = match atom {
            TypeAtom::Null => (Kind::Type, GenArg::Type(Ty::null())),
            TypeAtom::Integer => (Kind::Type, GenArg::Type(Ty::integer())),
            TypeAtom::Number => (Kind::Type, GenArg::Type(Ty::number())),
            TypeAtom::String => (Kind::Type, GenArg::Type(Ty::string())),
            TypeAtom::Boolean => (Kind::Type, GenArg::Type(Ty::boolean())),
            TypeAtom::File => (Kind::Type, GenArg::Type(Ty::file())),
            TypeAtom::Never => (Kind::Type, GenArg::Type(Ty::never())),
            TypeAtom::Unknown => (Kind::Type, GenArg::Type(Ty::unknown())),
            TypeAtom::All => (Kind::Effect, GenArg::Effect(Row::all())),
            TypeAtom::Io => (Kind::Effect, GenArg::Effect(Row::io())),
            TypeAtom::Pure => (Kind::Effect, GenArg::Effect(Row::pure())),
            TypeAtom::Public => (Kind::Attribute, GenArg::Attr(Attr::Public)),
            TypeAtom::Private => (Kind::Attribute, GenArg::Attr(Attr::Private)),
            TypeAtom::Array | TypeAtom::Record => {
                self.error(
                    Code::K3011,
                    file,
                    t.span,
                    format!("`{}` needs a type argument", atom.word()),
                )
                .set_label(format!("a bare `{}` is not a type", atom.word()))
                .set_help(format!("write `{}[T]`", atom.word()));
                return self.failed(kind);
            }
        };
        if found != kind {
            return self.kind_error(file, t, kind, found);
        }
        value
    }

    fn lower_named(
        &mut self,
        scope: &TyScope,
        t: &ast::Type,
        name: &ast::Ident,
        args: &[ast::Type],
        kind: Kind,
    ) -> GenArg {
        let file = scope.file;
        match self.program.names.get(file, name.span) {
            Some(Resolution::Generic(lid)) => {
                let g = GenericId(lid.0);
                let gkind = self
                    .out
                    .generics
                    .get(&g)
                    .map(|i| Kind::of(i.kind))
                    .unwrap_or(Kind::Type);
                if !args.is_empty() {
                    self.error(
                        Code::K3011,
                        file,
                        t.span,
                        format!("the generic `{}` takes no type arguments", name.text),
                    )
                    .set_label("a generic parameter cannot be applied");
                    return self.failed(kind);
                }
                if gkind != kind {
                    return self.kind_error(file, t, kind, gkind);
                }
                if let Some(arg) = scope.subst.get(&g) {
                    return arg.clone();
                }
                self.generic_arg(g)
            }
            Some(Resolution::Global(r)) => {
                let generics = self.generic_ids(r);
                let decl = self.program.decl(r);
                let is_data = matches!(decl, Some(ast::Decl::Data(_)));
                let is_request = matches!(decl, Some(ast::Decl::Request(_)));
                let is_synonym = matches!(decl, Some(ast::Decl::Synonym(_)));
                if !(is_data || is_request || is_synonym) {
                    self.error(
                        Code::K3007,
                        file,
                        t.span,
                        format!("`{}` is not a type", name.text),
                    )
                    .set_label("this names an agent, not a data type, request or synonym");
                    return self.failed(kind);
                }
                if args.len() != generics.len() {
                    self.error(
                        Code::K3009,
                        file,
                        t.span,
                        format!(
                            "`{}` takes {} type argument{}, found {}",
                            name.text,
                            generics.len(),
                            plural(generics.len()),
                            args.len()
                        ),
                    )
                    .set_label(if args.is_empty() {
                        format!("`{}` is generic: write `{}[…]`", name.text, name.text)
                    } else {
                        format!(
                            "{} type argument{} given here",
                            args.len(),
                            plural(args.len())
                        )
                    });
                    return self.failed(kind);
                }
                let mut lowered = Vec::new();
                for (g, a) in generics.iter().zip(args) {
                    let gkind = self
                        .out
                        .generics
                        .get(g)
                        .map(|i| Kind::of(i.kind))
                        .unwrap_or(Kind::Type);
                    lowered.push(self.lower_any(scope, a, gkind));
                }
                self.check_bounds(file, t.span, &generics, &lowered);
                if is_data {
                    if kind != Kind::Type {
                        return self.kind_error(file, t, kind, Kind::Type);
                    }
                    GenArg::Type(Ty::new(TyKind::Data {
                        id: r,
                        args: lowered,
                    }))
                } else if is_request {
                    if kind != Kind::Effect {
                        return self.kind_error(file, t, kind, Kind::Effect);
                    }
                    GenArg::Effect(Row::single(r, lowered))
                } else {
                    self.expand_synonym(r, lowered, kind, (file, t.span))
                }
            }
            _ => self.failed(kind),
        }
    }

    /// Checks generic arguments against the `extends` bounds of their generics (K3001), wherever
    /// they come from: written, or inferred at a call, a `use` or a request clause (§6.8).
    pub(crate) fn check_bounds(
        &mut self,
        file: FileId,
        span: crate::source::Span,
        generics: &[GenericId],
        args: &[GenArg],
    ) {
        let mut subst = Subst::default();
        for (g, a) in generics.iter().zip(args) {
            subst.generics.insert(*g, a.clone());
        }
        for (g, a) in generics.iter().zip(args) {
            let Some(bound) = self.out.generics.get(g).and_then(|i| i.bound.clone()) else {
                continue;
            };
            let bound = subst.arg(&bound);
            let fits = match (a, &bound) {
                // Type bounds constrain shapes; attributes are the business of the flow rules.
                (GenArg::Type(ty), GenArg::Type(b)) => self.sub_shape(ty, b),
                (GenArg::Effect(row), GenArg::Effect(b)) => self.lattice().row_sub(row, b),
                (GenArg::Attr(attr), GenArg::Attr(b)) => {
                    let (attr, b) = (*attr, *b);
                    self.sub(&Ty::null().with_attr(attr), &Ty::null().with_attr(b))
                }
                _ => true,
            };
            if !fits {
                let (found, expected) = (render_arg(self, a), render_arg(self, &bound));
                let name = self.generic_name(*g);
                let what = match a {
                    GenArg::Type(_) => "a subtype of",
                    GenArg::Effect(_) | GenArg::Attr(_) => "within",
                };
                self.error(
                    Code::K3001,
                    file,
                    span,
                    format!("`{found}` does not satisfy the bound `{expected}` of `{name}`"),
                )
                .set_label(format!(
                    "here `{name}` is `{found}`, which is not {what} `{expected}`"
                ));
            }
        }
    }

    /// Expands a use of the synonym `r` (written at `at`) with its lowered arguments.
    fn expand_synonym(
        &mut self,
        r: DeclRef,
        args: Vec<GenArg>,
        kind: Kind,
        at: (FileId, Span),
    ) -> GenArg {
        if self.expanding.contains(&r) {
            return self.failed(kind); // reported as K3010 at the declaration
        }
        let Some(ast::Decl::Synonym(s)) = self.program.decl(r) else {
            return self.failed(kind);
        };
        let generics = self.generic_ids(r);
        let mut scope = self.scope(r.module);
        for (g, a) in generics.into_iter().zip(args.iter().cloned()) {
            scope.subst.insert(g, a);
        }
        self.expanding.insert(r);
        let out = self.lower_any(&scope, &s.ty, kind);
        self.expanding.remove(&r);
        // Synonyms are copied into every use, so a few lines can describe a type of any size
        // (`type t1 = [t0, t0]`, `type t2 = [t1, t1]`, …): past the limit the use fails here,
        // once per type expression, before the copies exhaust time and memory.
        if self.expansion.over || !out.fits(EXPANSION_LIMIT) {
            if self.expanding.is_empty() && !self.expansion.reported {
                self.expansion.reported = true;
                let (file, span) = at;
                self.error(
                    Code::K3011,
                    file,
                    span,
                    format!(
                        "the type `{}` is too large: its expansion has more than {EXPANSION_LIMIT} parts",
                        s.name.text
                    ),
                )
                .set_label("expanded here")
                .set_help("a synonym is copied into every type that uses it; declare a data type for the repeated part (data types are not copied)");
            }
            return self.failed(kind);
        }
        // Remembered for rendering: a synonym is shown by name (§10.5).
        match out {
            GenArg::Type(mut ty) if ty.kind != TyKind::Error => {
                let mut expansion = ty.clone();
                expansion.shown = None;
                ty.shown = Some(std::sync::Arc::new(Alias {
                    id: r,
                    args,
                    expansion,
                }));
                GenArg::Type(ty)
            }
            other => other,
        }
    }
}

/// The most parts (nested types, counted as they are lowered and in the result) one type
/// expression may reach by expanding synonyms: far beyond any type a person writes, and small
/// enough that checking a type of this size stays quick.
pub(crate) const EXPANSION_LIMIT: usize = 100_000;

/// The size guard of synonym expansion, reset at each outermost type expression.
#[derive(Default)]
pub(crate) struct Expansion {
    /// How deep `lower_any` is nested (0: between type expressions).
    depth: u32,
    /// Parts lowered inside synonym expansions so far.
    parts: usize,
    /// The limit was passed: every further part fails at once.
    over: bool,
    /// The K3011 of this type expression has been reported.
    reported: bool,
}

/// What a type expression that failed to lower stands for: the error type, or the neutral row or
/// attribute.
fn fallback(kind: Kind) -> GenArg {
    match kind {
        Kind::Type => GenArg::Type(Ty::error()),
        Kind::Effect => GenArg::Effect(Row::pure()),
        Kind::Attribute => GenArg::Attr(Attr::Public),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn atom_word(t: &ast::Type) -> &'static str {
    match &t.kind {
        TypeKind::Atom(a) => a.word(),
        _ => "type",
    }
}
