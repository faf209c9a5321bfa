//! Subtyping, joins and meets of types and rows (`language.md` §7.2, §7.3, §7.5).
//!
//! A [`Lattice`] optionally records bounds for inference variables: when a subtype check meets
//! an unknown it records the other side as a lower or upper bound and succeeds, which is the
//! collection step of local inference (§7.4).

use std::collections::HashMap;

use super::ty::*;

/// Bounds collected for the unknowns of one call site.
#[derive(Debug, Default, Clone)]
pub struct Bounds {
    pub lower: HashMap<InferId, Vec<Ty>>,
    pub upper: HashMap<InferId, Vec<Ty>>,
    pub row_lower: HashMap<InferId, Vec<Row>>,
    pub attr_lower: HashMap<InferId, Vec<Attr>>,
}

pub struct Lattice<'a> {
    pub env: &'a dyn TyEnv,
    pub bounds: Option<&'a mut Bounds>,
    /// Data types whose invariant arguments could not be joined (K3005) or met (K3006).
    pub join_conflicts: Vec<DeclId>,
    pub meet_conflicts: Vec<DeclId>,
    /// Compare shapes only, ignoring information-flow attributes (pure calls lift privacy
    /// instead of rejecting it, §7.7).
    pub ignore_attrs: bool,
}

impl<'a> Lattice<'a> {
    pub fn new(env: &'a dyn TyEnv) -> Lattice<'a> {
        Lattice {
            env,
            bounds: None,
            join_conflicts: Vec::new(),
            meet_conflicts: Vec::new(),
            ignore_attrs: false,
        }
    }

    pub fn inferring(env: &'a dyn TyEnv, bounds: &'a mut Bounds) -> Lattice<'a> {
        Lattice {
            env,
            bounds: Some(bounds),
            join_conflicts: Vec::new(),
            meet_conflicts: Vec::new(),
            ignore_attrs: false,
        }
    }

    // -----------------------------------------------------------------------------------
    // Joins
    // -----------------------------------------------------------------------------------

    /// The least upper bound, normalised into one member per layer.
    pub fn join(&mut self, a: &Ty, b: &Ty) -> Ty {
        stacker::maybe_grow(super::ty::RED_ZONE, super::ty::STACK_CHUNK, || {
            self.join_unguarded(a, b)
        })
    }

    fn join_unguarded(&mut self, a: &Ty, b: &Ty) -> Ty {
        if a.is_error() || b.is_error() {
            return Ty::error();
        }
        if a.is_never() {
            return b.clone();
        }
        if b.is_never() {
            return a.clone();
        }
        if a.is_unknown() || b.is_unknown() {
            // `unknown` absorbs the other side, which may hold private members.
            let attr = [a, b]
                .iter()
                .flat_map(|t| t.members())
                .fold(a.attr.join(b.attr), |acc, m| acc.join(m.attr));
            return Ty::unknown().with_attr(attr);
        }
        let mut members: Vec<Ty> = Vec::new();
        for m in a.members().iter().chain(b.members()) {
            self.insert_member(&mut members, m.clone());
        }
        self.union_of(members)
    }

    /// Rebuilds a type whose unions may have been broken by substitution.
    pub fn normalize(&mut self, ty: &Ty) -> Ty {
        stacker::maybe_grow(super::ty::RED_ZONE, super::ty::STACK_CHUNK, || {
            self.normalize_unguarded(ty)
        })
    }

    fn normalize_unguarded(&mut self, ty: &Ty) -> Ty {
        let attr = ty.attr;
        let kind = match &ty.kind {
            TyKind::Union(ms) => {
                let ms: Vec<Ty> = ms.iter().map(|m| self.normalize(m)).collect();
                let joined = self.join_all(&ms);
                let attr = joined.attr.join(attr);
                let mut normal = joined.with_attr(attr);
                normal.shown = ty.shown.clone();
                return normal;
            }
            TyKind::Seq { prefix, rest } => TyKind::Seq {
                prefix: prefix.iter().map(|t| self.normalize(t)).collect(),
                rest: rest.as_ref().map(|r| Box::new(self.normalize(r))),
            },
            TyKind::Object { fields, rest } => TyKind::Object {
                fields: fields
                    .iter()
                    .map(|f| Field {
                        name: f.name.clone(),
                        ty: self.normalize(&f.ty),
                        optional: f.optional,
                    })
                    .collect(),
                rest: match rest {
                    Rest::Of(t) => Rest::Of(Box::new(self.normalize(t))),
                    other => other.clone(),
                },
            },
            TyKind::Agent(a) => TyKind::Agent(Box::new(AgentTy {
                param: self.normalize(&a.param),
                ret: self.normalize(&a.ret),
                row: a.row.clone(),
            })),
            TyKind::Data { id, args } => TyKind::Data {
                id: *id,
                args: args
                    .iter()
                    .map(|a| match a {
                        GenArg::Type(t) => GenArg::Type(self.normalize(t)),
                        other => other.clone(),
                    })
                    .collect(),
            },
            other => other.clone(),
        };
        Ty {
            kind,
            attr,
            shown: ty.shown.clone(),
        }
    }

    pub fn join_all<'t>(&mut self, tys: impl IntoIterator<Item = &'t Ty>) -> Ty {
        let mut acc = Ty::never();
        for t in tys {
            acc = self.join(&acc, t);
        }
        acc
    }

    fn insert_member(&mut self, members: &mut Vec<Ty>, m: Ty) {
        if members.first().is_some_and(Ty::is_error) {
            return;
        }
        if m.is_error() || m.is_unknown() {
            // `unknown` absorbs every member, keeping the most private attribute among them.
            let attr = members.iter().fold(m.attr, |a, x| a.join(x.attr));
            members.clear();
            members.push(m.with_attr(attr));
            return;
        }
        if let Some(first) = members.first_mut()
            && first.is_unknown()
        {
            first.attr = first.attr.join(m.attr);
            return;
        }
        let l = layer(self.env, &m);
        if let Some(pos) = members.iter().position(|x| layer(self.env, x) == l) {
            let joined = self.join_same_layer(&members[pos], &m);
            members[pos] = joined;
        } else {
            members.push(m);
        }
    }

    /// The normalised type of a list of members, one per layer.
    fn union_of(&self, mut members: Vec<Ty>) -> Ty {
        members.sort_by_key(|m| layer(self.env, m));
        match members.len() {
            0 => Ty::never(),
            1 => members.pop().unwrap_or_else(Ty::never),
            _ => Ty::new(TyKind::Union(members)),
        }
    }

    fn join_same_layer(&mut self, a: &Ty, b: &Ty) -> Ty {
        let attr = a.attr.join(b.attr);
        let kind = match (&a.kind, &b.kind) {
            (TyKind::Integer, TyKind::Integer) => TyKind::Integer,
            (TyKind::Integer | TyKind::Number, TyKind::Integer | TyKind::Number) => TyKind::Number,
            (TyKind::Agent(x), TyKind::Agent(y)) => TyKind::Agent(Box::new(AgentTy {
                param: self.meet(&x.param, &y.param),
                ret: self.join(&x.ret, &y.ret),
                row: self.join_row(&x.row, &y.row),
            })),
            (
                TyKind::Seq {
                    prefix: pa,
                    rest: ra,
                },
                TyKind::Seq {
                    prefix: pb,
                    rest: rb,
                },
            ) => {
                let n = pa.len().min(pb.len());
                let prefix: Vec<Ty> = (0..n).map(|i| self.join(&pa[i], &pb[i])).collect();
                let mut rest: Option<Ty> = None;
                let extra = pa[n..]
                    .iter()
                    .chain(&pb[n..])
                    .chain(ra.as_deref())
                    .chain(rb.as_deref());
                for t in extra {
                    rest = Some(match rest {
                        None => t.clone(),
                        Some(r) => self.join(&r, t),
                    });
                }
                TyKind::Seq {
                    prefix,
                    rest: rest.map(Box::new),
                }
            }
            (
                TyKind::Object {
                    fields: fa,
                    rest: ra,
                },
                TyKind::Object {
                    fields: fb,
                    rest: rb,
                },
            ) => self.join_objects(fa, ra, fb, rb),
            (TyKind::Data { id, args: xa }, TyKind::Data { args: xb, .. }) => {
                let variances = self.env.variances(*id);
                let args = xa
                    .iter()
                    .zip(xb)
                    .enumerate()
                    .map(|(i, (x, y))| {
                        let v = variances.get(i).copied().unwrap_or(Variance::Invariant);
                        self.join_arg(*id, v, x, y)
                    })
                    .collect();
                TyKind::Data { id: *id, args }
            }
            _ => a.kind.clone(),
        };
        Ty {
            kind,
            attr,
            shown: None,
        }
    }

    fn join_arg(&mut self, id: DeclId, v: Variance, x: &GenArg, y: &GenArg) -> GenArg {
        match (x, y) {
            (GenArg::Type(x), GenArg::Type(y)) => GenArg::Type(match v {
                Variance::Covariant => self.join(x, y),
                Variance::Contravariant => self.meet(x, y),
                Variance::Unused => x.clone(),
                Variance::Invariant => {
                    if !self.equivalent(x, y) {
                        self.join_conflicts.push(id);
                    }
                    x.clone()
                }
            }),
            (GenArg::Effect(x), GenArg::Effect(y)) => GenArg::Effect(match v {
                Variance::Covariant => self.join_row(x, y),
                Variance::Contravariant => self.meet_row(x, y),
                Variance::Unused => x.clone(),
                Variance::Invariant => {
                    if !(self.row_sub(x, y) && self.row_sub(y, x)) {
                        self.join_conflicts.push(id);
                    }
                    x.clone()
                }
            }),
            (GenArg::Attr(x), GenArg::Attr(y)) => GenArg::Attr(match v {
                Variance::Covariant => x.join(*y),
                Variance::Contravariant => x.meet(*y),
                Variance::Unused => *x,
                Variance::Invariant => {
                    if x != y {
                        self.join_conflicts.push(id);
                    }
                    *x
                }
            }),
            (x, _) => x.clone(),
        }
    }

    /// The meet of two generic arguments of `id` according to the variance of their position;
    /// `None` when two different instantiations of an invariant argument have no common lower
    /// bound (for a row entry that means the entry cannot be in the meet at all).
    fn meet_arg(&mut self, v: Variance, x: &GenArg, y: &GenArg) -> Option<GenArg> {
        Some(match (x, y) {
            (GenArg::Type(x), GenArg::Type(y)) => GenArg::Type(match v {
                Variance::Covariant => self.meet(x, y),
                Variance::Contravariant => self.join(x, y),
                Variance::Unused => x.clone(),
                Variance::Invariant => {
                    if !self.equivalent(x, y) {
                        return None;
                    }
                    x.clone()
                }
            }),
            (GenArg::Effect(x), GenArg::Effect(y)) => GenArg::Effect(match v {
                Variance::Covariant => self.meet_row(x, y),
                Variance::Contravariant => self.join_row(x, y),
                Variance::Unused => x.clone(),
                Variance::Invariant => {
                    if !(self.row_sub(x, y) && self.row_sub(y, x)) {
                        return None;
                    }
                    x.clone()
                }
            }),
            (GenArg::Attr(x), GenArg::Attr(y)) => GenArg::Attr(match v {
                Variance::Covariant => x.meet(*y),
                Variance::Contravariant => x.join(*y),
                Variance::Unused => *x,
                Variance::Invariant => {
                    if x != y {
                        return None;
                    }
                    *x
                }
            }),
            (x, _) => x.clone(),
        })
    }

    fn rest_ty(rest: &Rest) -> Option<Ty> {
        match rest {
            Rest::Closed => None,
            Rest::Open => Some(Ty::unknown()),
            Rest::Of(t) => Some((**t).clone()),
        }
    }

    fn join_objects(&mut self, fa: &[Field], ra: &Rest, fb: &[Field], rb: &Rest) -> TyKind {
        let mut fields = Vec::new();
        for f in fa {
            match fb.iter().find(|g| g.name == f.name) {
                Some(g) => fields.push(Field {
                    name: f.name.clone(),
                    ty: self.join(&f.ty, &g.ty),
                    optional: f.optional || g.optional,
                }),
                None => {
                    let ty = match Self::rest_ty(rb) {
                        Some(other) => self.join(&f.ty, &other),
                        None => f.ty.clone(),
                    };
                    fields.push(Field {
                        name: f.name.clone(),
                        ty,
                        optional: true,
                    });
                }
            }
        }
        for g in fb {
            if !fa.iter().any(|f| f.name == g.name) {
                let ty = match Self::rest_ty(ra) {
                    Some(other) => self.join(&g.ty, &other),
                    None => g.ty.clone(),
                };
                fields.push(Field {
                    name: g.name.clone(),
                    ty,
                    optional: true,
                });
            }
        }
        let rest = match (ra, rb) {
            (Rest::Closed, Rest::Closed) => Rest::Closed,
            (Rest::Open, _) | (_, Rest::Open) => Rest::Open,
            (Rest::Of(x), Rest::Of(y)) => Rest::Of(Box::new(self.join(x, y))),
            (Rest::Of(x), Rest::Closed) | (Rest::Closed, Rest::Of(x)) => Rest::Of(x.clone()),
        };
        TyKind::Object { fields, rest }
    }

    /// Rows join entry-wise (§7.5): each argument of a request present on both sides joins by
    /// the variance of its generic (covariant: join, contravariant: meet). Two different
    /// instantiations of an invariant argument cannot be joined: the request is recorded in
    /// `join_conflicts` (K3005 for the caller to report) and the left side's entry is kept.
    pub fn join_row(&mut self, a: &Row, b: &Row) -> Row {
        if a.all || b.all {
            return Row::all();
        }
        let mut row = a.clone();
        row.io |= b.io;
        for (req, args) in &b.entries {
            match row.entries.get(req).cloned() {
                Some(existing) => {
                    let variances = self.env.variances(*req);
                    let joined = existing
                        .iter()
                        .zip(args)
                        .enumerate()
                        .map(|(i, (x, y))| {
                            self.join_arg(
                                *req,
                                variances.get(i).copied().unwrap_or(Variance::Invariant),
                                x,
                                y,
                            )
                        })
                        .collect();
                    row.entries.insert(*req, joined);
                }
                None => {
                    row.entries.insert(*req, args.clone());
                }
            }
        }
        for tail in &b.tails {
            match row.tails.iter_mut().find(|t| t.var == tail.var) {
                Some(t) => t.excluding.retain(|x| tail.excluding.contains(x)),
                None => row.tails.push(tail.clone()),
            }
        }
        row.tails.sort();
        row
    }

    pub fn meet_row(&mut self, a: &Row, b: &Row) -> Row {
        if a.all {
            return b.clone();
        }
        if b.all {
            return a.clone();
        }
        let mut row = Row {
            io: a.io && b.io,
            ..Row::default()
        };
        for (req, args) in &a.entries {
            if let Some(other) = b.entries.get(req) {
                let variances = self.env.variances(*req);
                // Two different instantiations of an invariant argument have no common entry:
                // only a row without the request is below both.
                let met: Option<Vec<GenArg>> = args
                    .iter()
                    .zip(other)
                    .enumerate()
                    .map(|(i, (x, y))| {
                        let v = variances.get(i).copied().unwrap_or(Variance::Invariant);
                        self.meet_arg(v, x, y)
                    })
                    .collect();
                if let Some(met) = met {
                    row.entries.insert(*req, met);
                }
            }
        }
        row.tails = a
            .tails
            .iter()
            .filter(|t| b.tails.iter().any(|u| u.var == t.var))
            .cloned()
            .collect();
        row
    }

    // -----------------------------------------------------------------------------------
    // Meets
    // -----------------------------------------------------------------------------------

    /// The greatest lower bound (used for agent parameters and for narrowing).
    pub fn meet(&mut self, a: &Ty, b: &Ty) -> Ty {
        stacker::maybe_grow(super::ty::RED_ZONE, super::ty::STACK_CHUNK, || {
            self.meet_unguarded(a, b)
        })
    }

    fn meet_unguarded(&mut self, a: &Ty, b: &Ty) -> Ty {
        if a.is_error() || b.is_error() {
            return Ty::error();
        }
        if a.is_unknown() {
            return b.clone().with_attr(a.attr.join(b.attr));
        }
        if b.is_unknown() {
            return a.clone().with_attr(a.attr.join(b.attr));
        }
        let mut out = Vec::new();
        for x in a.members() {
            for y in b.members() {
                if let Some(m) = self.meet_members(x, y) {
                    out.push(m);
                }
            }
        }
        let mut members = Vec::new();
        for m in out {
            self.insert_member(&mut members, m);
        }
        self.union_of(members)
    }

    fn meet_members(&mut self, x: &Ty, y: &Ty) -> Option<Ty> {
        let attr = x.attr.join(y.attr);
        let kind = match (&x.kind, &y.kind) {
            (TyKind::Integer, TyKind::Integer | TyKind::Number)
            | (TyKind::Number, TyKind::Integer) => TyKind::Integer,
            (TyKind::Param(a), TyKind::Param(b)) if a == b => x.kind.clone(),
            (TyKind::Param(_), _) | (_, TyKind::Param(_)) => {
                return if self.sub(x, y) {
                    Some(x.clone())
                } else if self.sub(y, x) {
                    Some(y.clone())
                } else {
                    None
                };
            }
            (TyKind::Agent(p), TyKind::Agent(q)) => TyKind::Agent(Box::new(AgentTy {
                param: self.join(&p.param, &q.param),
                ret: self.meet(&p.ret, &q.ret),
                row: self.meet_row(&p.row, &q.row),
            })),
            (
                TyKind::Seq {
                    prefix: pa,
                    rest: ra,
                },
                TyKind::Seq {
                    prefix: pb,
                    rest: rb,
                },
            ) => {
                let n = pa.len().max(pb.len());
                let pos = |p: &Vec<Ty>, r: &Option<Box<Ty>>, i: usize| {
                    p.get(i).cloned().or_else(|| r.as_deref().cloned())
                };
                let mut prefix = Vec::new();
                for i in 0..n {
                    match (pos(pa, ra, i), pos(pb, rb, i)) {
                        (Some(s), Some(t)) => prefix.push(self.meet(&s, &t)),
                        _ => return None,
                    }
                }
                let rest = match (ra, rb) {
                    (Some(s), Some(t)) => Some(Box::new(self.meet(s, t))),
                    _ => None,
                };
                TyKind::Seq { prefix, rest }
            }
            (
                TyKind::Object {
                    fields: fa,
                    rest: ra,
                },
                TyKind::Object {
                    fields: fb,
                    rest: rb,
                },
            ) => {
                let mut fields: Vec<Field> = Vec::new();
                for f in fa {
                    match fb.iter().find(|g| g.name == f.name) {
                        Some(g) => fields.push(Field {
                            name: f.name.clone(),
                            ty: self.meet(&f.ty, &g.ty),
                            optional: f.optional && g.optional,
                        }),
                        None => {
                            let ty = match Self::rest_ty(rb) {
                                Some(o) => self.meet(&f.ty, &o),
                                None => f.ty.clone(),
                            };
                            fields.push(Field {
                                name: f.name.clone(),
                                ty,
                                optional: f.optional,
                            });
                        }
                    }
                }
                for g in fb {
                    if !fa.iter().any(|f| f.name == g.name) {
                        let ty = match Self::rest_ty(ra) {
                            Some(o) => self.meet(&g.ty, &o),
                            None => g.ty.clone(),
                        };
                        fields.push(Field {
                            name: g.name.clone(),
                            ty,
                            optional: g.optional,
                        });
                    }
                }
                let rest = match (ra, rb) {
                    (Rest::Closed, _) | (_, Rest::Closed) => Rest::Closed,
                    (Rest::Open, r) | (r, Rest::Open) => r.clone(),
                    (Rest::Of(s), Rest::Of(t)) => Rest::Of(Box::new(self.meet(s, t))),
                };
                TyKind::Object { fields, rest }
            }
            (TyKind::Data { id: a, args: xa }, TyKind::Data { id: b, args: xb }) if a == b => {
                let variances = self.env.variances(*a);
                let mut args = Vec::new();
                for (i, (p, q)) in xa.iter().zip(xb).enumerate() {
                    let v = variances.get(i).copied().unwrap_or(Variance::Invariant);
                    args.push(match (p, q) {
                        (GenArg::Type(p), GenArg::Type(q)) => GenArg::Type(match v {
                            Variance::Covariant => self.meet(p, q),
                            Variance::Contravariant => self.join(p, q),
                            Variance::Unused => p.clone(),
                            Variance::Invariant => {
                                if !self.equivalent(p, q) {
                                    self.meet_conflicts.push(*a);
                                }
                                p.clone()
                            }
                        }),
                        (p, _) => p.clone(),
                    });
                }
                TyKind::Data { id: *a, args }
            }
            // A data type meets an object type as itself when its fields satisfy the object.
            (TyKind::Data { .. }, TyKind::Object { .. }) => {
                return self
                    .sub(x, &y.clone().with_attr(Attr::Private))
                    .then(|| x.clone().with_attr(attr));
            }
            (TyKind::Object { .. }, TyKind::Data { .. }) => {
                return self
                    .sub(y, &x.clone().with_attr(Attr::Private))
                    .then(|| y.clone().with_attr(attr));
            }
            (a, b) if a == b => a.clone(),
            (TyKind::Null, TyKind::Null)
            | (TyKind::Boolean, TyKind::Boolean)
            | (TyKind::String, TyKind::String)
            | (TyKind::File, TyKind::File)
            | (TyKind::Number, TyKind::Number) => x.kind.clone(),
            _ => return None,
        };
        Some(Ty {
            kind,
            attr,
            shown: None,
        })
    }

    // -----------------------------------------------------------------------------------
    // Subtyping
    // -----------------------------------------------------------------------------------

    /// Whether `a` and `b` are mutual subtypes.
    pub fn equivalent(&mut self, a: &Ty, b: &Ty) -> bool {
        self.sub(a, b) && self.sub(b, a)
    }

    fn attr_sub(&mut self, s: Attr, t: Attr) -> bool {
        if self.ignore_attrs {
            return true;
        }
        match (s, t) {
            (Attr::Public, _) | (_, Attr::Private) => true,
            (Attr::Infer(v), _) => {
                if let Some(b) = self.bounds.as_deref_mut() {
                    b.attr_lower.entry(v).or_default();
                }
                true
            }
            (s, Attr::Infer(v)) => {
                if let Some(b) = self.bounds.as_deref_mut() {
                    b.attr_lower.entry(v).or_default().push(s);
                }
                true
            }
            (a, b) if a == b => true,
            // A bounded attribute generic can be used at its bound (§6.8).
            (Attr::Param(g), t) => self
                .env
                .generic_attr_bound(g)
                .is_some_and(|bound| self.attr_sub(bound, t)),
            _ => false,
        }
    }

    /// `s <: t`.
    pub fn sub(&mut self, s: &Ty, t: &Ty) -> bool {
        stacker::maybe_grow(super::ty::RED_ZONE, super::ty::STACK_CHUNK, || {
            self.sub_unguarded(s, t)
        })
    }

    fn sub_unguarded(&mut self, s: &Ty, t: &Ty) -> bool {
        if let TyKind::Infer(v) = &t.kind {
            if let Some(b) = self.bounds.as_deref_mut() {
                b.lower.entry(*v).or_default().push(s.clone());
                return true;
            }
            return s == t;
        }
        if let TyKind::Infer(v) = &s.kind {
            if let Some(b) = self.bounds.as_deref_mut() {
                b.upper.entry(*v).or_default().push(t.clone());
                return true;
            }
            return s == t;
        }
        if s.is_never() || s.is_error() || t.is_error() {
            return true;
        }
        if let TyKind::Union(ms) = &s.kind {
            return ms
                .clone()
                .iter()
                .all(|m| self.sub(&m.clone().with_attr(m.attr.join(s.attr)), t));
        }
        if !self.attr_sub(s.attr, t.attr) {
            return false;
        }
        if t.is_unknown() {
            return true;
        }
        if let TyKind::Union(ms) = &t.kind {
            let ms = ms.clone();
            // Decided per layer: the member in `s`'s layer, or a structural object match for data.
            if let Some(infer) = ms
                .iter()
                .find(|m| matches!(m.kind, TyKind::Infer(_)))
                .cloned()
                && self.bounds.is_some()
                && !ms.iter().any(|m| layer(self.env, m) == layer(self.env, s))
            {
                return self.sub(s, &infer);
            }
            // The member in `s`'s own layer first; then the others (a data type may still fit
            // an object member). A failed attempt leaves no inference bounds behind.
            let own = layer(self.env, s);
            let (same, others): (Vec<Ty>, Vec<Ty>) =
                ms.into_iter().partition(|m| layer(self.env, m) == own);
            return same.iter().chain(&others).any(|m| {
                let m = m.clone().with_attr(m.attr.join(t.attr));
                self.attempt(|lat| lat.sub(s, &m))
            });
        }
        match (&s.kind, &t.kind) {
            (TyKind::Unknown, _) => false,
            (TyKind::Param(a), TyKind::Param(b)) if a == b => true,
            (TyKind::Param(a), _) => {
                let bound = self.env.generic_bound(*a);
                !bound.is_unknown() && self.sub(&bound, t)
            }
            (TyKind::Null, TyKind::Null)
            | (TyKind::Boolean, TyKind::Boolean)
            | (TyKind::String, TyKind::String)
            | (TyKind::File, TyKind::File)
            | (TyKind::Integer, TyKind::Integer | TyKind::Number)
            | (TyKind::Number, TyKind::Number) => true,
            (
                TyKind::Seq {
                    prefix: pa,
                    rest: ra,
                },
                TyKind::Seq {
                    prefix: pb,
                    rest: rb,
                },
            ) => {
                if pa.len() < pb.len() || (ra.is_some() && rb.is_none()) {
                    return false;
                }
                for (i, x) in pa.iter().enumerate() {
                    let target = match pb.get(i).or(rb.as_deref()) {
                        Some(t) => t.clone(),
                        None => return false,
                    };
                    if !self.sub(x, &target) {
                        return false;
                    }
                }
                match (ra, rb) {
                    (Some(x), Some(y)) => self.sub(x, y),
                    // No further positions: they are `never`, which is a lower bound for an
                    // unknown element type (`array.reverse(target = [])` solves `T = never`).
                    (None, Some(y)) => self.sub(&Ty::never(), y),
                    _ => true,
                }
            }
            (TyKind::Object { fields, rest }, TyKind::Object { .. }) => {
                let (fields, rest) = (fields.clone(), rest.clone());
                self.object_sub(&fields, &rest, t)
            }
            (TyKind::Data { id, args }, TyKind::Object { .. }) => {
                let fields = self.env.data_fields(*id, args);
                self.object_sub(&fields, &Rest::Open, t)
            }
            (TyKind::Data { id: a, args: xa }, TyKind::Data { id: b, args: xb }) => {
                if a != b {
                    return false;
                }
                let variances = self.env.variances(*a);
                let (xa, xb) = (xa.clone(), xb.clone());
                xa.iter().zip(&xb).enumerate().all(|(i, (x, y))| {
                    let v = variances.get(i).copied().unwrap_or(Variance::Invariant);
                    self.arg_sub(v, x, y)
                })
            }
            (TyKind::Agent(x), TyKind::Agent(y)) => {
                let (x, y) = (x.clone(), y.clone());
                self.sub(&y.param, &x.param)
                    && self.sub(&x.ret, &y.ret)
                    && self.row_sub(&x.row, &y.row)
            }
            _ => false,
        }
    }

    /// Runs a check whose inference bounds are kept only when it succeeds.
    fn attempt(&mut self, check: impl FnOnce(&mut Self) -> bool) -> bool {
        let snapshot = self.bounds.as_deref().cloned();
        let ok = check(self);
        if !ok && let (Some(bounds), Some(snapshot)) = (self.bounds.as_deref_mut(), snapshot) {
            *bounds = snapshot;
        }
        ok
    }

    fn arg_sub(&mut self, v: Variance, x: &GenArg, y: &GenArg) -> bool {
        match (x, y) {
            (GenArg::Type(x), GenArg::Type(y)) => match v {
                Variance::Covariant => self.sub(x, y),
                Variance::Contravariant => self.sub(y, x),
                Variance::Unused => true,
                Variance::Invariant => self.sub(x, y) && self.sub(y, x),
            },
            (GenArg::Effect(x), GenArg::Effect(y)) => match v {
                Variance::Contravariant => self.row_sub(y, x),
                Variance::Unused => true,
                Variance::Invariant => self.row_sub(x, y) && self.row_sub(y, x),
                Variance::Covariant => self.row_sub(x, y),
            },
            (GenArg::Attr(x), GenArg::Attr(y)) => self.attr_sub(*x, *y),
            _ => false,
        }
    }

    fn object_sub(&mut self, sf: &[Field], sr: &Rest, t: &Ty) -> bool {
        let TyKind::Object {
            fields: tf,
            rest: tr,
        } = &t.kind
        else {
            return false;
        };
        let (tf, tr) = (tf.clone(), tr.clone());
        for f in &tf {
            match sf.iter().find(|g| g.name == f.name) {
                Some(g) => {
                    if (g.optional && !f.optional) || !self.sub(&g.ty, &f.ty) {
                        return false;
                    }
                }
                None => match Self::rest_ty(sr) {
                    None => {
                        if !f.optional {
                            return false;
                        }
                    }
                    Some(other) => {
                        if !f.optional || !self.sub(&other, &f.ty) {
                            return false;
                        }
                    }
                },
            }
        }
        match &tr {
            Rest::Open => true,
            Rest::Closed => {
                matches!(sr, Rest::Closed) && sf.iter().all(|g| tf.iter().any(|f| f.name == g.name))
            }
            Rest::Of(y) => {
                for g in sf {
                    if !tf.iter().any(|f| f.name == g.name) && !self.sub(&g.ty, y) {
                        return false;
                    }
                }
                match sr {
                    // Like an empty tuple, a closed object gives `never` for its other keys.
                    Rest::Closed => self.sub(&Ty::never(), y),
                    Rest::Open => self.sub(&Ty::unknown(), y),
                    Rest::Of(x) => self.sub(x, y),
                }
            }
        }
    }

    /// `r1 <: r2` for effect rows.
    pub fn row_sub(&mut self, r1: &Row, r2: &Row) -> bool {
        if r2.all {
            return true;
        }
        if r1.all {
            return self.all_sub(r2);
        }
        if r1.io && !r2.io {
            if let Some(v) = self.infer_tail(r2) {
                self.push_row_bound(v, Row::io());
            } else {
                return false;
            }
        }
        for (req, args) in &r1.entries {
            match r2.entries.get(req) {
                Some(other) => {
                    let variances = self.env.variances(*req);
                    let ok = args.iter().zip(other).enumerate().all(|(i, (x, y))| {
                        self.arg_sub(
                            variances.get(i).copied().unwrap_or(Variance::Invariant),
                            x,
                            y,
                        )
                    });
                    if !ok {
                        return false;
                    }
                }
                None => match r2
                    .tails
                    .iter()
                    .find(|t| matches!(t.var, RowVar::Infer(_)) && !t.excluding.contains(req))
                {
                    Some(Tail {
                        var: RowVar::Infer(v),
                        ..
                    }) if self.bounds.is_some() => {
                        let v = *v;
                        self.push_row_bound(v, Row::single(*req, args.clone()));
                    }
                    _ => return false,
                },
            }
        }
        for tail in &r1.tails {
            let covered = r2.tails.iter().any(|t| {
                t.var == tail.var && t.excluding.iter().all(|x| tail.excluding.contains(x))
            });
            if !covered {
                match self.infer_tail(r2) {
                    Some(v) if RowVar::Infer(v) != tail.var => {
                        self.push_row_bound(
                            v,
                            Row {
                                tails: vec![tail.clone()],
                                ..Row::default()
                            },
                        );
                    }
                    _ => {
                        if let RowVar::Infer(v) = tail.var
                            && self.bounds.is_some()
                        {
                            // An unknown tail on the left: nothing to learn, assume it fits.
                            let _ = v;
                            continue;
                        }
                        // A bounded effect generic can be used at its bound (§6.8).
                        if let RowVar::Param(g) = tail.var
                            && let Some(bound) = self.env.generic_row_bound(g)
                        {
                            let bound = tail
                                .excluding
                                .iter()
                                .fold(bound, |row, req| row.without(*req));
                            if self.row_sub(&bound, r2) {
                                continue;
                            }
                        }
                        return false;
                    }
                }
            }
        }
        true
    }

    /// `all <: r2` for a row `r2` that is not `all` itself: only an unknown effect tail can
    /// stand for "any request and io" (`language.md` §7.4, §7.5), so the tail receives `all`
    /// as its lower bound. The requests `r2` names explicitly are performed by `all` at every
    /// instantiation, so each of their arguments must admit the widest one under its variance
    /// (covariant: the top, contravariant: the bottom); an invariant argument admits none.
    fn all_sub(&mut self, r2: &Row) -> bool {
        let Some(tail) = r2.tails.iter().find_map(|t| match t.var {
            RowVar::Infer(v) if self.bounds.is_some() => Some((v, t.excluding.clone())),
            _ => None,
        }) else {
            return false;
        };
        let (v, excluding) = tail;
        if excluding.iter().any(|req| !r2.entries.contains_key(req)) {
            return false;
        }
        for (req, args) in &r2.entries {
            let variances = self.env.variances(*req);
            for (i, arg) in args.iter().enumerate() {
                let v = variances.get(i).copied().unwrap_or(Variance::Invariant);
                let ok = match (v, arg) {
                    (Variance::Unused, _) => true,
                    (Variance::Invariant, _) => false,
                    (Variance::Covariant, GenArg::Type(t)) => self.sub(&Ty::unknown(), t),
                    (Variance::Contravariant, GenArg::Type(t)) => {
                        self.sub(&Ty::never(), t) && self.sub(t, &Ty::never())
                    }
                    (Variance::Covariant, GenArg::Effect(r)) => self.row_sub(&Row::all(), r),
                    (Variance::Contravariant, GenArg::Effect(r)) => self.row_sub(r, &Row::pure()),
                    (Variance::Covariant, GenArg::Attr(a)) => self.attr_sub(Attr::Private, *a),
                    (Variance::Contravariant, GenArg::Attr(a)) => self.attr_sub(*a, Attr::Public),
                };
                if !ok {
                    return false;
                }
            }
        }
        self.push_row_bound(v, Row::all());
        true
    }

    fn infer_tail(&self, row: &Row) -> Option<InferId> {
        self.bounds.as_ref()?;
        row.tails.iter().find_map(|t| match t.var {
            RowVar::Infer(v) => Some(v),
            RowVar::Param(_) => None,
        })
    }

    fn push_row_bound(&mut self, v: InferId, row: Row) {
        if let Some(b) = self.bounds.as_deref_mut() {
            b.row_lower.entry(v).or_default().push(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment without declarations: enough for structural types.
    struct NoDecls;

    impl TyEnv for NoDecls {
        fn qualified_name(&self, _: DeclId) -> String {
            "m.d".to_string()
        }
        fn data_fields(&self, _: DeclId, _: &[GenArg]) -> Vec<Field> {
            Vec::new()
        }
        fn variances(&self, _: DeclId) -> Vec<Variance> {
            Vec::new()
        }
        fn generic_name(&self, g: GenericId) -> String {
            format!("G{}", g.0)
        }
        fn generic_bound(&self, _: GenericId) -> Ty {
            Ty::unknown()
        }
    }

    /// Requests `0`, `1` and `2`, whose one generic is covariant, contravariant and invariant.
    struct Requests;

    impl TyEnv for Requests {
        fn qualified_name(&self, id: DeclId) -> String {
            format!("m.r{}", id.index)
        }
        fn data_fields(&self, _: DeclId, _: &[GenArg]) -> Vec<Field> {
            Vec::new()
        }
        fn variances(&self, id: DeclId) -> Vec<Variance> {
            vec![
                [
                    Variance::Covariant,
                    Variance::Contravariant,
                    Variance::Invariant,
                ][id.index as usize],
            ]
        }
        fn generic_name(&self, g: GenericId) -> String {
            format!("G{}", g.0)
        }
        fn generic_bound(&self, _: GenericId) -> Ty {
            Ty::unknown()
        }
    }

    fn request(index: u32, arg: Ty) -> Row {
        let id = DeclId {
            module: crate::load::ModuleId(0),
            index,
        };
        Row::single(id, vec![GenArg::Type(arg)])
    }

    #[test]
    fn rows_join_and_meet_entry_wise_by_variance() {
        let mut lat = Lattice::new(&Requests);
        let both = lat.join(&Ty::integer(), &Ty::string());
        // Covariant: join.
        let joined = lat.join_row(&request(0, Ty::integer()), &request(0, Ty::string()));
        assert_eq!(joined, request(0, both.clone()));
        let met = lat.meet_row(&request(0, both.clone()), &request(0, Ty::string()));
        assert_eq!(met, request(0, Ty::string()));
        // Contravariant: meet.
        let joined = lat.join_row(&request(1, Ty::integer()), &request(1, Ty::string()));
        assert_eq!(joined, request(1, Ty::never()));
        let met = lat.meet_row(&request(1, Ty::integer()), &request(1, Ty::string()));
        assert_eq!(met, request(1, both));
        assert!(lat.join_conflicts.is_empty());
        // Invariant: one instantiation joins with itself, two are a conflict (the left one is
        // kept) and have no common entry in a meet.
        let same = lat.join_row(&request(2, Ty::integer()), &request(2, Ty::integer()));
        assert_eq!(same, request(2, Ty::integer()));
        assert!(lat.join_conflicts.is_empty());
        let joined = lat.join_row(&request(2, Ty::integer()), &request(2, Ty::string()));
        assert_eq!(joined, request(2, Ty::integer()));
        assert_eq!(lat.join_conflicts.len(), 1);
        let met = lat.meet_row(&request(2, Ty::integer()), &request(2, Ty::string()));
        assert_eq!(met, Row::pure());
    }

    #[test]
    fn invariant_effect_arguments_of_requests_do_not_join() {
        let mut lat = Lattice::new(&Requests);
        let effect = |row: Row| {
            let id = DeclId {
                module: crate::load::ModuleId(0),
                index: 2,
            };
            Row::single(id, vec![GenArg::Effect(row)])
        };
        let joined = lat.join_row(&effect(Row::io()), &effect(Row::pure()));
        assert_eq!(joined, effect(Row::io()));
        assert_eq!(lat.join_conflicts.len(), 1);
    }

    #[test]
    fn an_unknown_effect_tail_is_solved_from_the_row_all() {
        let (e, t) = (InferId(1), InferId(2));
        let tail = Row::var(RowVar::Infer(e));
        let mut bounds = Bounds::default();
        {
            let mut lat = Lattice::inferring(&Requests, &mut bounds);
            assert!(lat.row_sub(&Row::all(), &tail));
            // A covariant request named next to the tail is performed at every instantiation:
            // its argument is bounded by the top.
            let mut named = request(0, Ty::infer(t));
            named.tails = tail.tails.clone();
            assert!(lat.row_sub(&Row::all(), &named));
            // No instantiation of an invariant argument covers them all.
            let mut invariant = request(2, Ty::integer());
            invariant.tails = tail.tails.clone();
            assert!(!lat.row_sub(&Row::all(), &invariant));
        }
        assert_eq!(
            bounds.row_lower.get(&e),
            Some(&vec![Row::all(), Row::all()])
        );
        assert_eq!(bounds.lower.get(&t), Some(&vec![Ty::unknown()]));
        // Without an unknown tail, `all` fits only `all`.
        let mut lat = Lattice::new(&Requests);
        assert!(!lat.row_sub(&Row::all(), &Row::io()));
        assert!(lat.row_sub(&Row::all(), &Row::all()));
    }

    #[test]
    fn the_error_type_is_top_and_bottom() {
        let mut lat = Lattice::new(&NoDecls);
        assert!(lat.sub(&Ty::error(), &Ty::integer()));
        assert!(lat.sub(&Ty::string(), &Ty::error()));
        assert!(lat.sub(&Ty::unknown().with_attr(Attr::Private), &Ty::error()));
        assert!(lat.join(&Ty::error(), &Ty::integer()).is_error());
        assert!(lat.join(&Ty::unknown(), &Ty::error()).is_error());
        assert!(lat.meet(&Ty::string(), &Ty::error()).is_error());
        let union = lat.join(&Ty::null(), &Ty::array(Ty::error()));
        assert!(lat.sub(&Ty::array(Ty::string()), &union));
    }

    #[test]
    fn empty_sequences_and_closed_records_give_never_as_a_lower_bound() {
        let mut bounds = Bounds::default();
        let (t, r) = (InferId(1), InferId(2));
        {
            let mut lat = Lattice::inferring(&NoDecls, &mut bounds);
            assert!(lat.sub(&Ty::tuple(Vec::new()), &Ty::array(Ty::infer(t))));
            assert!(lat.sub(
                &Ty::object(Vec::new(), Rest::Closed),
                &Ty::record(Ty::infer(r))
            ));
        }
        assert_eq!(bounds.lower.get(&t), Some(&vec![Ty::never()]));
        assert_eq!(bounds.lower.get(&r), Some(&vec![Ty::never()]));
    }

    #[test]
    fn a_union_parameter_matches_the_member_of_the_arguments_layer() {
        let mut bounds = Bounds::default();
        let t = InferId(1);
        let agent = |param: Ty| {
            Ty::agent(
                Ty::object(
                    vec![Field {
                        name: "value".into(),
                        ty: param,
                        optional: false,
                    }],
                    Rest::Open,
                ),
                Ty::integer(),
                Row::pure(),
            )
        };
        {
            let mut lat = Lattice::inferring(&NoDecls, &mut bounds);
            let nullable = lat.join(&agent(Ty::infer(t)), &Ty::null());
            assert!(lat.sub(&agent(Ty::string()), &nullable));
            assert!(!lat.sub(&Ty::integer(), &nullable));
        }
        assert_eq!(bounds.upper.get(&t), Some(&vec![Ty::string()]));
        assert!(!bounds.lower.contains_key(&t));
    }

    #[test]
    fn unions_normalise_by_layer_and_keep_the_most_private_attribute() {
        let mut lat = Lattice::new(&NoDecls);
        assert_eq!(lat.join(&Ty::integer(), &Ty::number()), Ty::number());
        let secret = Ty::string().with_attr(Attr::Private);
        let nullable = lat.join(&secret, &Ty::null());
        let joined = lat.join(&nullable, &Ty::unknown());
        assert!(joined.is_unknown());
        assert_eq!(joined.attr, Attr::Private);
    }
}
