//! Local, argument-driven inference at call sites (`language.md` §7.4): generics become
//! unknowns, arguments give bounds, each unknown is solved as the join of its lower bounds.

use std::collections::HashMap;

use super::Checker;
use crate::ast::GenericKind;
use crate::types::*;

/// One instantiation of a generic signature with fresh unknowns.
pub(crate) struct Instance {
    /// The generic each unknown stands for, in declaration order.
    pub vars: Vec<(GenericId, InferId, GenericKind)>,
    /// Generic → unknown, to apply to the signature's types.
    pub to_infer: Subst,
}

/// What solving produced.
pub(crate) struct Solution {
    pub subst: Subst,
    /// Type generics that received no lower bound (K3016).
    pub unsolved: Vec<GenericId>,
}

impl Checker<'_> {
    pub(crate) fn instantiate(&mut self, generics: &[GenericId]) -> Instance {
        let mut vars = Vec::new();
        let mut to_infer = Subst::default();
        for g in generics {
            let kind = self
                .out
                .generics
                .get(g)
                .map(|i| i.kind)
                .unwrap_or(GenericKind::Type);
            let v = self.fresh_infer();
            let arg = match kind {
                GenericKind::Type => GenArg::Type(Ty::infer(v)),
                GenericKind::Effect => GenArg::Effect(Row::var(RowVar::Infer(v))),
                GenericKind::Attribute => GenArg::Attr(Attr::Infer(v)),
            };
            to_infer.generics.insert(*g, arg);
            vars.push((*g, v, kind));
        }
        Instance { vars, to_infer }
    }

    /// Solves every unknown of an instance from the collected bounds.
    pub(crate) fn solve(
        &mut self,
        instance: &Instance,
        bounds: &Bounds,
        explicit: &HashMap<GenericId, GenArg>,
    ) -> Solution {
        let mut subst = Subst::default();
        let mut unsolved = Vec::new();
        for (g, v, kind) in &instance.vars {
            if let Some(arg) = explicit.get(g) {
                subst.infers.insert(*v, arg.clone());
                subst.generics.insert(*g, arg.clone());
                continue;
            }
            let arg = match kind {
                GenericKind::Type => match bounds.lower.get(v) {
                    Some(lower) if !lower.is_empty() => {
                        let mut lat = self.lattice();
                        let joined = lat
                            .join_all(lower.iter().filter(|t| !matches!(t.kind, TyKind::Infer(_))));
                        GenArg::Type(joined)
                    }
                    _ => {
                        // Reported as K3016 by the caller; the error type keeps it from
                        // cascading.
                        unsolved.push(*g);
                        GenArg::Type(Ty::error())
                    }
                },
                GenericKind::Effect => {
                    let mut row = Row::pure();
                    if let Some(rows) = bounds.row_lower.get(v) {
                        for r in rows {
                            row = self.lattice().join_row(&row, r);
                        }
                    }
                    GenArg::Effect(row)
                }
                GenericKind::Attribute => {
                    let mut attr = Attr::Public;
                    if let Some(attrs) = bounds.attr_lower.get(v) {
                        for a in attrs {
                            attr = attr.join(*a);
                        }
                    }
                    GenArg::Attr(attr)
                }
            };
            subst.infers.insert(*v, arg.clone());
            subst.generics.insert(*g, arg);
        }
        // Unknowns may be bounded by other unknowns; one more pass resolves chains.
        let snapshot = subst.clone();
        for arg in subst.infers.values_mut() {
            *arg = snapshot.arg(arg);
        }
        for arg in subst.generics.values_mut() {
            *arg = snapshot.arg(arg);
        }
        Solution { subst, unsolved }
    }
}
