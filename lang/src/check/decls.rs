//! Declarations: signatures of requests, constructors and natives, data fields and variance,
//! generic parameters and their bounds, defaults (K3001), reactors (K3018, K5001, K5002) and
//! synonym cycles (K3010). Written types are lowered by `lower`.

use std::collections::{HashMap, HashSet};

use super::lower::{Kind, TyScope};
use super::{Checker, qualified};
use crate::ast::{self, GenericKind, LitKind, TypeKind};
use crate::diag::Code;
use crate::load::ModuleId;
use crate::resolve::{DeclRef, Resolution};
use crate::source::FileId;
use crate::types::*;

#[derive(Clone, Debug)]
pub struct GenericInfo {
    pub name: String,
    pub kind: GenericKind,
    /// The `extends` bound, of the generic's kind (a type, a row or an attribute).
    pub bound: Option<GenArg>,
}

#[derive(Clone, Debug)]
pub struct ParamSig {
    pub name: String,
    pub ty: Ty,
    /// Has a default (or is an optional field of an agent type).
    pub optional: bool,
    pub default: Option<LitKind>,
    pub doc: Option<String>,
}

/// The signature of a callable: what `reflection.get_metadata` and calls see.
#[derive(Clone, Debug)]
pub struct AgentSig {
    pub generics: Vec<GenericId>,
    pub params: Vec<ParamSig>,
    pub ret: Ty,
    pub row: Row,
    pub doc: String,
    pub private: bool,
}

impl AgentSig {
    /// The parameter object: an open object whose fields are the parameters.
    pub fn param_ty(&self) -> Ty {
        Ty::object(
            self.params
                .iter()
                .map(|p| Field {
                    name: p.name.clone(),
                    ty: p.ty.clone(),
                    optional: p.optional,
                })
                .collect(),
            Rest::Open,
        )
    }

    pub fn agent_ty(&self) -> Ty {
        Ty::agent(self.param_ty(), self.ret.clone(), self.row.clone())
    }
}

#[derive(Clone, Debug)]
pub enum DeclInfo {
    Agent,
    Request {
        generics: Vec<GenericId>,
        variances: Vec<Variance>,
    },
    Data {
        generics: Vec<GenericId>,
        fields: Vec<ParamSig>,
        variances: Vec<Variance>,
    },
    Synonym {
        generics: Vec<GenericId>,
    },
    External {
        reactor: Option<String>,
    },
    Primitive,
    Import,
}

/// The reactors known to the checker (§6.6).
const REACTORS: &[&str] = &["http", "webhook", "mcp", "console", "time", "env"];

impl Checker<'_> {
    pub(crate) fn scope(&self, module: ModuleId) -> TyScope {
        TyScope {
            file: self.file_of(module),
            subst: HashMap::new(),
        }
    }

    /// First pass: names, generics, synonyms, data, requests, natives and written agent
    /// signatures of every module.
    pub(super) fn collect_declarations(&mut self) {
        let program = self.program;
        // Names and generics first, so every later lowering can render and bound them.
        for (r, decl) in program.decls() {
            if decl.name().is_some() {
                self.out.names.insert(r, qualified(program, r));
            }
            if matches!(decl, ast::Decl::Import(_)) {
                continue;
            }
            let ids = self.declare_generics(self.file_of(r.module), decl.generics());
            let info = match decl {
                ast::Decl::Synonym(_) => DeclInfo::Synonym { generics: ids },
                ast::Decl::Data(_) => DeclInfo::Data {
                    generics: ids,
                    fields: Vec::new(),
                    variances: Vec::new(),
                },
                ast::Decl::Request(_) => DeclInfo::Request {
                    generics: ids,
                    variances: Vec::new(),
                },
                ast::Decl::External(d) => DeclInfo::External {
                    reactor: d.from.as_ref().map(|(s, _)| s.clone()),
                },
                ast::Decl::Primitive(_) => DeclInfo::Primitive,
                ast::Decl::Agent(_) | ast::Decl::Import(_) => DeclInfo::Agent,
            };
            self.out.decls.insert(r, info);
        }
        // Bounds of generics, then data fields (which may mention other data types).
        for (r, decl) in program.decls() {
            self.bound_generics(r.module, decl.generics());
        }
        for (r, decl) in program.decls() {
            match decl {
                ast::Decl::Data(d) => self.collect_data(r, d),
                ast::Decl::Synonym(d) => self.check_synonym(r, d),
                _ => {}
            }
        }
        self.compute_data_variances();
        for (r, decl) in program.decls() {
            match decl {
                ast::Decl::Request(d) => self.collect_request(r, d),
                ast::Decl::External(d) => self.collect_native(
                    r,
                    &d.doc,
                    &d.params,
                    &d.ret,
                    d.effects.as_ref(),
                    true,
                    Some(d),
                ),
                ast::Decl::Primitive(d) => self.collect_native(
                    r,
                    &d.doc,
                    &d.params,
                    &d.ret,
                    d.effects.as_ref(),
                    false,
                    None,
                ),
                _ => {}
            }
        }
    }

    pub(crate) fn declare_generics(
        &mut self,
        file: FileId,
        generics: &[ast::GenericParam],
    ) -> Vec<GenericId> {
        let mut ids = Vec::new();
        for g in generics {
            let id = match self.program.names.get(file, g.name.span) {
                Some(Resolution::Generic(lid)) => GenericId(lid.0),
                _ => self.fresh_generic(&g.name.text, g.kind),
            };
            self.out.generics.insert(
                id,
                GenericInfo {
                    name: g.name.text.clone(),
                    kind: g.kind,
                    bound: None,
                },
            );
            ids.push(id);
        }
        ids
    }

    pub(crate) fn bound_generics(&mut self, module: ModuleId, generics: &[ast::GenericParam]) {
        let scope = self.scope(module);
        for g in generics {
            let Some(bound) = &g.bound else { continue };
            let id = match self.program.names.get(scope.file, g.name.span) {
                Some(Resolution::Generic(lid)) => GenericId(lid.0),
                _ => continue,
            };
            let arg = self.lower_any(&scope, bound, Kind::of(g.kind));
            if let Some(info) = self.out.generics.get_mut(&id) {
                info.bound = Some(arg);
            }
        }
    }

    pub(crate) fn generic_ids(&self, r: DeclRef) -> Vec<GenericId> {
        match self.out.decls.get(&r) {
            Some(DeclInfo::Data { generics, .. })
            | Some(DeclInfo::Request { generics, .. })
            | Some(DeclInfo::Synonym { generics }) => generics.clone(),
            _ => self
                .out
                .signatures
                .get(&r)
                .map(|s| s.generics.clone())
                .unwrap_or_default(),
        }
    }

    fn collect_data(&mut self, r: DeclRef, d: &ast::DataDecl) {
        let scope = self.scope(r.module);
        let fields = self.sig_params(&scope, &d.params);
        let generics = self.generic_ids(r);
        let doc = d.doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
        // The constructor: `name[generics](fields) -> name[generics]`.
        let args: Vec<GenArg> = generics.iter().map(|g| self.generic_arg(*g)).collect();
        let ret = Ty::new(TyKind::Data { id: r, args });
        self.out.signatures.insert(
            r,
            AgentSig {
                generics: generics.clone(),
                params: fields.clone(),
                ret,
                row: Row::pure(),
                doc,
                private: false,
            },
        );
        self.out.decls.insert(
            r,
            DeclInfo::Data {
                generics,
                fields,
                variances: Vec::new(),
            },
        );
    }

    /// The generic as an argument of its own kind (`T`, `E`, `A`).
    pub(crate) fn generic_arg(&self, g: GenericId) -> GenArg {
        match self.out.generics.get(&g).map(|i| i.kind) {
            Some(GenericKind::Effect) => GenArg::Effect(Row::var(RowVar::Param(g))),
            Some(GenericKind::Attribute) => GenArg::Attr(Attr::Param(g)),
            _ => GenArg::Type(Ty::param(g)),
        }
    }

    /// Data variance: a fixpoint over all data types, since fields mention other data types.
    fn compute_data_variances(&mut self) {
        let datas: Vec<(DeclRef, Vec<GenericId>, Vec<Ty>)> = self
            .out
            .decls
            .iter()
            .filter_map(|(r, info)| match info {
                DeclInfo::Data {
                    generics, fields, ..
                } => Some((
                    *r,
                    generics.clone(),
                    fields.iter().map(|f| f.ty.clone()).collect(),
                )),
                _ => None,
            })
            .collect();
        for (r, generics, _) in &datas {
            if let Some(DeclInfo::Data { variances, .. }) = self.out.decls.get_mut(r) {
                *variances = vec![Variance::Unused; generics.len()];
            }
        }
        for _ in 0..16 {
            let mut changed = false;
            for (r, generics, fields) in &datas {
                let mut acc: HashMap<GenericId, Variance> = HashMap::new();
                for f in fields {
                    self.occurrences(f, Variance::Covariant, &mut acc);
                }
                let new: Vec<Variance> = generics
                    .iter()
                    .map(|g| acc.get(g).copied().unwrap_or(Variance::Unused))
                    .collect();
                if let Some(DeclInfo::Data { variances, .. }) = self.out.decls.get_mut(r)
                    && *variances != new
                {
                    *variances = new;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Records the polarity of every generic occurring in `ty`.
    pub(crate) fn occurrences(
        &self,
        ty: &Ty,
        polarity: Variance,
        acc: &mut HashMap<GenericId, Variance>,
    ) {
        stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
            self.occurrences_unguarded(ty, polarity, acc)
        })
    }

    fn occurrences_unguarded(
        &self,
        ty: &Ty,
        polarity: Variance,
        acc: &mut HashMap<GenericId, Variance>,
    ) {
        let note = |g: GenericId, v: Variance, acc: &mut HashMap<GenericId, Variance>| {
            let merged = acc.get(&g).copied().unwrap_or(Variance::Unused).merge(v);
            acc.insert(g, merged);
        };
        if let Attr::Param(g) = ty.attr {
            note(g, polarity, acc);
        }
        match &ty.kind {
            TyKind::Param(g) => note(*g, polarity, acc),
            TyKind::Seq { prefix, rest } => {
                prefix
                    .iter()
                    .for_each(|t| self.occurrences(t, polarity, acc));
                if let Some(r) = rest {
                    self.occurrences(r, polarity, acc);
                }
            }
            TyKind::Object { fields, rest } => {
                fields
                    .iter()
                    .for_each(|f| self.occurrences(&f.ty, polarity, acc));
                if let Rest::Of(t) = rest {
                    self.occurrences(t, polarity, acc);
                }
            }
            TyKind::Union(ms) => ms.iter().for_each(|t| self.occurrences(t, polarity, acc)),
            TyKind::Agent(a) => {
                self.occurrences(&a.param, polarity.flip(), acc);
                self.occurrences(&a.ret, polarity, acc);
                self.row_occurrences(&a.row, polarity, acc);
            }
            TyKind::Data { id, args } => {
                let vs = self.variances(*id);
                for (i, arg) in args.iter().enumerate() {
                    let v = vs.get(i).copied().unwrap_or(Variance::Invariant);
                    let p = match v {
                        Variance::Covariant => polarity,
                        Variance::Contravariant => polarity.flip(),
                        Variance::Unused => continue,
                        Variance::Invariant => Variance::Invariant,
                    };
                    match arg {
                        GenArg::Type(t) => self.occurrences(t, p, acc),
                        GenArg::Effect(r) => self.row_occurrences(r, p, acc),
                        GenArg::Attr(Attr::Param(g)) => note(*g, p, acc),
                        GenArg::Attr(_) => {}
                    }
                }
            }
            _ => {}
        }
    }

    fn row_occurrences(
        &self,
        row: &Row,
        polarity: Variance,
        acc: &mut HashMap<GenericId, Variance>,
    ) {
        for tail in &row.tails {
            if let RowVar::Param(g) = tail.var {
                let merged = acc
                    .get(&g)
                    .copied()
                    .unwrap_or(Variance::Unused)
                    .merge(polarity);
                acc.insert(g, merged);
            }
        }
        for (req, args) in &row.entries {
            let vs = self.variances(*req);
            for (i, arg) in args.iter().enumerate() {
                let v = vs.get(i).copied().unwrap_or(Variance::Invariant);
                let p = match v {
                    Variance::Covariant => polarity,
                    Variance::Contravariant => polarity.flip(),
                    Variance::Unused => continue,
                    Variance::Invariant => Variance::Invariant,
                };
                if let GenArg::Type(t) = arg {
                    self.occurrences(t, p, acc);
                }
            }
        }
    }

    fn collect_request(&mut self, r: DeclRef, d: &ast::RequestDecl) {
        let scope = self.scope(r.module);
        let params = self.sig_params(&scope, &d.params);
        let ret = self.lower_ty(&scope, &d.ret);
        let generics = self.generic_ids(r);
        // A request generic in parameters only is covariant in the row, in the result only
        // contravariant, in both invariant (§7.5).
        let mut acc = HashMap::new();
        for p in &params {
            self.occurrences(&p.ty, Variance::Covariant, &mut acc);
        }
        self.occurrences(&ret, Variance::Contravariant, &mut acc);
        let variances = generics
            .iter()
            .map(|g| acc.get(g).copied().unwrap_or(Variance::Unused))
            .collect();
        let args: Vec<GenArg> = generics.iter().map(|g| self.generic_arg(*g)).collect();
        let row = Row::single(r, args);
        let doc = d.doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
        self.out.signatures.insert(
            r,
            AgentSig {
                generics: generics.clone(),
                params,
                ret,
                row,
                doc,
                private: false,
            },
        );
        self.out.decls.insert(
            r,
            DeclInfo::Request {
                generics,
                variances,
            },
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn collect_native(
        &mut self,
        r: DeclRef,
        doc: &Option<ast::Doc>,
        params: &[ast::SigParam],
        ret: &ast::Type,
        effects: Option<&ast::Type>,
        external: bool,
        decl: Option<&ast::ExternalDecl>,
    ) {
        let scope = self.scope(r.module);
        let params = self.sig_params(&scope, params);
        let ret = self.lower_ty(&scope, ret);
        let mut row = match effects {
            Some(e) => self.lower_row(&scope, e),
            None => Row::pure(),
        };
        let name = qualified(self.program, r);
        if let Some(d) = decl {
            row.io = true;
            match &d.from {
                None => {
                    self.error(Code::K5001, scope.file, d.name.span, format!("`{}` is a foreign-function binding, which is not supported", d.name.text))
                        .set_label("an external agent without `from`")
                        .set_help("declare it with `from \"<reactor>\"` naming a host reactor, or write the agent in katari");
                }
                Some((reactor, span)) if reactor == "ffi" => {
                    self.error(
                        Code::K5001,
                        scope.file,
                        *span,
                        "the foreign-function interface is not supported",
                    )
                    .set_label("`ffi` is not a reactor of this host")
                    .set_help("only the reactors http, webhook, mcp, console, time and env exist");
                }
                Some((reactor, span)) if !REACTORS.contains(&reactor.as_str()) => {
                    self.error(
                        Code::K3018,
                        scope.file,
                        *span,
                        format!("unknown reactor \"{reactor}\""),
                    )
                    .set_label("no host reactor has this name")
                    .set_help("the reactors are http, webhook, mcp, console, time and env");
                }
                Some(_) => {
                    if !self.natives.has(&name) {
                        self.error(
                            Code::K5002,
                            scope.file,
                            d.name.span,
                            format!("no native implementation is registered for `{name}`"),
                        )
                        .set_label("the host has no implementation under this name");
                    }
                }
            }
        } else if !external && !self.natives.has(&name) {
            let span = self
                .program
                .decl(r)
                .and_then(|d| d.name())
                .map(|n| n.span)
                .unwrap_or_default();
            self.error(
                Code::K5002,
                scope.file,
                span,
                format!("no native implementation is registered for `{name}`"),
            )
            .set_label("the host has no implementation under this name");
        }
        let generics = self.generic_ids_of_decl(r);
        let doc = doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
        self.out.signatures.insert(
            r,
            AgentSig {
                generics,
                params,
                ret,
                row,
                doc,
                private: false,
            },
        );
    }

    /// The generic ids of any declaration, from the resolver's ids for its generic names.
    pub(crate) fn generic_ids_of_decl(&self, r: DeclRef) -> Vec<GenericId> {
        let file = self.file_of(r.module);
        let Some(decl) = self.program.decl(r) else {
            return Vec::new();
        };
        decl.generics()
            .iter()
            .filter_map(|g| match self.program.names.get(file, g.name.span) {
                Some(Resolution::Generic(lid)) => Some(GenericId(lid.0)),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn sig_params(
        &mut self,
        scope: &TyScope,
        params: &[ast::SigParam],
    ) -> Vec<ParamSig> {
        params
            .iter()
            .map(|p| {
                let ty = self.lower_ty(scope, &p.ty);
                if let Some(default) = &p.default {
                    self.check_default(scope.file, default, &ty);
                }
                ParamSig {
                    name: p.name.text.clone(),
                    ty,
                    optional: p.default.is_some(),
                    default: p.default.as_ref().map(|d| d.kind.clone()),
                    doc: p.doc.as_ref().map(|d| d.text.clone()),
                }
            })
            .collect()
    }

    /// A default must fit its parameter's type (K3001).
    pub(crate) fn check_default(&mut self, file: FileId, default: &ast::Literal, ty: &Ty) {
        let lit = literal_type(&default.kind);
        if !self.sub(&lit, ty) {
            let (found, expected) = (self.render(&lit), self.render(ty));
            self.error(
                Code::K3001,
                file,
                default.span,
                format!("expected `{expected}`, found `{found}`"),
            )
            .set_label("this default does not fit the parameter's type");
        }
    }

    fn check_synonym(&mut self, r: DeclRef, d: &ast::Synonym) {
        // Expanding once in each kind would report kind errors that depend on the use site;
        // expansion here only detects cycles (K3010).
        if self.synonym_cycle(r, d) {
            let file = self.file_of(r.module);
            self.error(
                Code::K3010,
                file,
                d.name.span,
                format!("type synonym `{}` expands to itself", d.name.text),
            )
            .set_label("this synonym refers back to itself")
            .set_help("break the cycle with a data type");
        }
    }

    fn synonym_cycle(&self, start: DeclRef, d: &ast::Synonym) -> bool {
        let mut stack = vec![(start, &d.ty)];
        let mut seen = HashSet::from([start]);
        while let Some((owner, ty)) = stack.pop() {
            let file = self.file_of(owner.module);
            let mut refs = Vec::new();
            collect_named(ty, &mut refs);
            for span in refs {
                if let Some(Resolution::Global(target)) = self.program.names.get(file, span)
                    && let Some(ast::Decl::Synonym(s)) = self.program.decl(target)
                {
                    if target == start {
                        return true;
                    }
                    if seen.insert(target) {
                        stack.push((target, &s.ty));
                    }
                }
            }
        }
        false
    }
}

/// The spans of every named type reference inside a type expression.
fn collect_named(t: &ast::Type, out: &mut Vec<crate::source::Span>) {
    stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
        collect_named_unguarded(t, out)
    })
}

fn collect_named_unguarded(t: &ast::Type, out: &mut Vec<crate::source::Span>) {
    match &t.kind {
        TypeKind::Named { name, .. } => out.push(name.span),
        TypeKind::Apply { head, args } => {
            collect_named(head, out);
            args.iter().for_each(|a| collect_named(a, out));
        }
        TypeKind::Tuple(items) => items.iter().for_each(|a| collect_named(a, out)),
        TypeKind::Object(fields) => fields.iter().for_each(|f| collect_named(&f.ty, out)),
        TypeKind::Override { base, entries } => {
            collect_named(base, out);
            entries.iter().for_each(|a| collect_named(a, out));
        }
        // Agent types delay expansion (their parameter and result are behind a constructor), but
        // a synonym that refers to itself through them still never terminates when expanded
        // eagerly, so they count too.
        TypeKind::Agent {
            params,
            ret,
            effects,
        } => {
            match params {
                ast::AgentParams::Fields(fields) => {
                    fields.iter().for_each(|f| collect_named(&f.ty, out))
                }
                ast::AgentParams::Type(p) => collect_named(p, out),
            }
            collect_named(ret, out);
            if let Some(e) = effects {
                collect_named(e, out);
            }
        }
        TypeKind::Union(ms) => ms.iter().for_each(|a| collect_named(a, out)),
        TypeKind::Attributed { ty, attr } => {
            collect_named(ty, out);
            collect_named(attr, out);
        }
        TypeKind::Atom(_) | TypeKind::Error => {}
    }
}

/// The type of a literal.
pub(crate) fn literal_type(lit: &LitKind) -> Ty {
    match lit {
        LitKind::Null => Ty::null(),
        LitKind::Bool(_) => Ty::boolean(),
        LitKind::Int(_) => Ty::integer(),
        LitKind::Number(_) => Ty::number(),
        LitKind::Str(_) => Ty::string(),
    }
}
