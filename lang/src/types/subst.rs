//! Substitution of generic parameters and inference variables inside types and rows.

use std::collections::HashMap;

use std::sync::Arc;

use super::ty::*;

/// What to put in place of generics and unknowns.
#[derive(Default, Debug, Clone)]
pub struct Subst {
    pub generics: HashMap<GenericId, GenArg>,
    pub infers: HashMap<InferId, GenArg>,
}

impl Subst {
    pub fn is_empty(&self) -> bool {
        self.generics.is_empty() && self.infers.is_empty()
    }

    pub fn ty(&self, ty: &Ty) -> Ty {
        stacker::maybe_grow(super::ty::RED_ZONE, super::ty::STACK_CHUNK, || {
            self.ty_unguarded(ty)
        })
    }

    fn ty_unguarded(&self, ty: &Ty) -> Ty {
        if self.is_empty() {
            return ty.clone();
        }
        let attr = self.attr(ty.attr);
        let kind = match &ty.kind {
            TyKind::Param(g) => match self.generics.get(g) {
                Some(GenArg::Type(t)) => return t.clone().with_attr(t.attr.join(attr)),
                _ => ty.kind.clone(),
            },
            TyKind::Infer(v) => match self.infers.get(v) {
                Some(GenArg::Type(t)) => return t.clone().with_attr(t.attr.join(attr)),
                _ => ty.kind.clone(),
            },
            TyKind::Seq { prefix, rest } => TyKind::Seq {
                prefix: prefix.iter().map(|t| self.ty(t)).collect(),
                rest: rest.as_ref().map(|r| Box::new(self.ty(r))),
            },
            TyKind::Object { fields, rest } => TyKind::Object {
                fields: fields
                    .iter()
                    .map(|f| Field {
                        name: f.name.clone(),
                        ty: self.ty(&f.ty),
                        optional: f.optional,
                    })
                    .collect(),
                rest: match rest {
                    Rest::Of(t) => Rest::Of(Box::new(self.ty(t))),
                    other => other.clone(),
                },
            },
            TyKind::Data { id, args } => TyKind::Data {
                id: *id,
                args: args.iter().map(|a| self.arg(a)).collect(),
            },
            TyKind::Agent(a) => TyKind::Agent(Box::new(AgentTy {
                param: self.ty(&a.param),
                ret: self.ty(&a.ret),
                row: self.row(&a.row),
            })),
            TyKind::Union(members) => {
                // Substitution may merge layers, so the union is rebuilt by the caller's join when
                // needed; members stay in place here.
                TyKind::Union(members.iter().map(|t| self.ty(t)).collect())
            }
            other => other.clone(),
        };
        // A generic synonym's arguments and expansion are substituted with it, so `pair[T]`
        // at `T = integer` still renders as `pair[integer]`.
        let shown = ty.shown.as_ref().map(|a| {
            if a.args.is_empty() {
                a.clone()
            } else {
                Arc::new(Alias {
                    id: a.id,
                    args: a.args.iter().map(|x| self.arg(x)).collect(),
                    expansion: self.ty(&a.expansion),
                })
            }
        });
        Ty { kind, attr, shown }
    }

    pub fn attr(&self, attr: Attr) -> Attr {
        match attr {
            Attr::Param(g) => match self.generics.get(&g) {
                Some(GenArg::Attr(a)) => *a,
                _ => attr,
            },
            Attr::Infer(v) => match self.infers.get(&v) {
                Some(GenArg::Attr(a)) => *a,
                _ => attr,
            },
            other => other,
        }
    }

    pub fn arg(&self, arg: &GenArg) -> GenArg {
        match arg {
            GenArg::Type(t) => GenArg::Type(self.ty(t)),
            GenArg::Effect(r) => GenArg::Effect(self.row(r)),
            GenArg::Attr(a) => GenArg::Attr(self.attr(*a)),
        }
    }

    pub fn row(&self, row: &Row) -> Row {
        if self.is_empty() {
            return row.clone();
        }
        let mut out = Row {
            io: row.io,
            all: row.all,
            ..Row::default()
        };
        for (req, args) in &row.entries {
            out.entries
                .insert(*req, args.iter().map(|a| self.arg(a)).collect());
        }
        for tail in &row.tails {
            let replacement = match tail.var {
                RowVar::Param(g) => self.generics.get(&g),
                RowVar::Infer(v) => self.infers.get(&v),
            };
            match replacement {
                Some(GenArg::Effect(r)) => {
                    out.io |= r.io;
                    out.all |= r.all;
                    for (req, args) in &r.entries {
                        if !tail.excluding.contains(req) {
                            out.entries.entry(*req).or_insert_with(|| args.clone());
                        }
                    }
                    for t in &r.tails {
                        let mut excluding = t.excluding.clone();
                        for x in &tail.excluding {
                            if !excluding.contains(x) {
                                excluding.push(*x);
                            }
                        }
                        excluding.sort();
                        out.tails.push(Tail {
                            var: t.var,
                            excluding,
                        });
                    }
                }
                _ => out.tails.push(tail.clone()),
            }
        }
        out.tails.sort();
        out.tails.dedup();
        out
    }
}
