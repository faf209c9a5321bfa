//! Calls (`language.md` §9.6–§9.9): argument checking (K3001), inference of generics at the
//! call (§7.4, K3016), partial application with holes (K3020), operators, and the attribute
//! rules for arguments (§7.7: pure calls lift privacy, effectful calls reject it).

use std::collections::HashMap;

use super::Checker;
use super::agents::Ctx;
use super::decls::ParamSig;
use super::expr::Callee;
use crate::ast::{self, BinOp, Expr};
use crate::diag::Code;
use crate::diag::Label;
use crate::resolve::Resolution;
use crate::source::{FileId, Span};
use crate::types::*;

/// One argument of a call: its label, its type (`None` for a hole `_`) and its span.
pub(crate) type Given = (String, Option<Ty>, Span);

/// A partial application whose residual has a private result (§7.7 rule 2, §9.8).
#[derive(Debug)]
pub(crate) struct PrivateResidual {
    pub(crate) file: FileId,
    /// The partial application.
    pub(crate) span: Span,
    /// The callee as written (`None` when it is not a short name).
    pub(crate) callee: Option<String>,
    /// The captured private arguments for public parameters, as written (`factor = secret`, or
    /// `factor = …` when the value is long); empty when the secret reaches the result through a
    /// generic instead.
    pub(crate) args: Vec<String>,
}

impl Checker<'_> {
    /// A call `callee(args)`.
    pub(crate) fn call(
        &mut self,
        ctx: &mut Ctx,
        span: Span,
        callee: &Expr,
        args: &[ast::Arg],
    ) -> Ty {
        let callee_ty = self.callee(ctx, callee);
        let given = self.arguments(ctx, args);
        self.apply(ctx, span, callee.span, callee_ty, &given)
    }

    /// The types of written arguments, in order.
    pub(crate) fn arguments(&mut self, ctx: &mut Ctx, args: &[ast::Arg]) -> Vec<Given> {
        args.iter()
            .map(|a| {
                (
                    a.label.text.clone(),
                    a.value.as_ref().map(|v| self.expr(ctx, v)),
                    a.span,
                )
            })
            .collect()
    }

    /// The parameters of a callee, when it is callable with a record; `None` after reporting
    /// why it is not (or when it is the error type).
    fn callee_shape(
        &mut self,
        ctx: &Ctx,
        callee_span: Span,
        ty: &Ty,
    ) -> Option<(Vec<ParamSig>, Ty, Row)> {
        if ty.is_error() || ty.is_never() {
            return None;
        }
        let ty = self.at_bound(ty);
        let agents: Vec<AgentTy> = ty
            .members()
            .iter()
            .filter_map(|m| match self.at_bound(m).kind {
                TyKind::Agent(a) => Some(*a),
                _ => None,
            })
            .collect();
        let Some(a) = agents
            .first()
            .filter(|_| agents.len() == ty.members().len())
        else {
            let shown = self.render(&ty);
            let nullable = ty.members().iter().any(|m| matches!(m.kind, TyKind::Null));
            self.error(
                Code::K3014,
                ctx.file,
                callee_span,
                format!("`{shown}` is not an agent and cannot be called"),
            )
            .set_label(format!("this has type `{shown}`"))
            .set_help(if nullable {
                "the value may be null: match on it first"
            } else {
                "only agents, requests and constructors can be called"
            });
            return None;
        };
        let params = match &a.param.kind {
            TyKind::Object { fields, .. } => fields
                .iter()
                .map(|f| ParamSig {
                    name: f.name.clone(),
                    ty: f.ty.clone(),
                    optional: f.optional,
                    default: None,
                    doc: None,
                })
                .collect(),
            TyKind::Unknown | TyKind::Error => Vec::new(),
            _ => {
                // `agent never -> …` and other non-object parameters: only a matching whole
                // argument record would do, and none can be written.
                let shown = self.render(&a.param);
                self.error(
                    Code::K3001,
                    ctx.file,
                    callee_span,
                    format!("no argument record fits the parameter type `{shown}`"),
                )
                .set_label(format!("this agent takes `{shown}`"))
                .set_help("call it through `reflection.call_agent(target = …, args = …)`");
                return None;
            }
        };
        Some((params, a.ret.clone(), a.row.clone()))
    }

    /// Applies a callee to argument types; a `None` type marks a hole (partial application).
    pub(crate) fn apply(
        &mut self,
        ctx: &mut Ctx,
        span: Span,
        callee_span: Span,
        callee: Callee,
        given: &[Given],
    ) -> Ty {
        let (sig_params, ret, row, generics, name) = match callee {
            Callee::Poly { sig, written, .. } => {
                (sig.params, sig.ret, sig.row, sig.generics, Some(written))
            }
            Callee::Mono(ty) => match self.callee_shape(ctx, callee_span, &ty) {
                Some((params, ret, row)) => (params, ret, row, Vec::new(), None),
                None => {
                    return if ty.is_never() {
                        Ty::never()
                    } else {
                        Ty::error()
                    };
                }
            },
        };
        // Holes must name parameters (K3020); label duplicates are the resolver's K2003.
        let mut holes: Vec<String> = Vec::new();
        let mut stray_hole = false;
        for (label, ty, s) in given {
            if ty.is_none() {
                if !sig_params.iter().any(|p| &p.name == label) {
                    stray_hole = true;
                    self.error(
                        Code::K3020,
                        ctx.file,
                        *s,
                        format!("the hole `{label} = _` names no parameter of this agent"),
                    )
                    .set_label(format!("`{label}` is not a parameter"))
                    .set_help(format!(
                        "the parameters are: {}",
                        sig_params
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                holes.push(label.clone());
            }
        }
        // Instantiate generics and collect bounds from the supplied arguments.
        let instance = self.instantiate(&generics);
        let params: Vec<ParamSig> = sig_params
            .iter()
            .map(|p| ParamSig {
                ty: instance.to_infer.ty(&p.ty),
                ..p.clone()
            })
            .collect();
        let mut bounds = Bounds::default();
        {
            let mut lat = Lattice::inferring(self, &mut bounds);
            lat.ignore_attrs = true;
            for p in &params {
                if let Some((_, Some(ty), _)) = given.iter().find(|(l, _, _)| l == &p.name) {
                    lat.sub(ty, &p.ty);
                }
            }
        }
        let solution = self.solve(&instance, &bounds, &HashMap::new());
        if !generics.is_empty() {
            let solved = generics
                .iter()
                .map(|g| {
                    solution
                        .subst
                        .generics
                        .get(g)
                        .cloned()
                        .unwrap_or(GenArg::Type(Ty::error()))
                })
                .collect();
            self.out
                .queries
                .record_instantiation(ctx.file, span, solved);
        }
        // An argument that already failed to check explains a generic it leaves unsolved.
        let failed_argument = given
            .iter()
            .any(|(_, t, _)| t.as_ref().is_some_and(Ty::has_error));
        if let Some(g) = solution.unsolved.first().filter(|_| !failed_argument) {
            let gname = self.generic_name(*g);
            let what = name.clone().unwrap_or_else(|| "this agent".to_string());
            let only_holes = sig_params
                .iter()
                .any(|p| holes.contains(&p.name) && mentions(&p.ty, *g));
            self.error(
                Code::K3016,
                ctx.file,
                span,
                format!("cannot infer the type argument `{gname}` of `{what}`"),
            )
            .set_label(if only_holes {
                format!("only holed parameters mention `{gname}`, so no argument determines it")
            } else {
                format!("no argument determines `{gname}`")
            })
            .set_help(format!("give it explicitly: `{what}[…](…)`"));
        }
        let mut subst = solution.subst.clone();
        for (g, v, _) in &instance.vars {
            if let Some(a) = solution.subst.generics.get(g) {
                subst.infers.insert(*v, a.clone());
            }
        }
        let row = subst.row(&row);
        // Check the arguments against the solved parameter types.
        let mut lifted = Attr::Public;
        let mut private_args: Vec<String> = Vec::new();
        for p in &params {
            let expected = self.lattice().normalize(&subst.ty(&p.ty));
            match given.iter().find(|(l, _, _)| l == &p.name) {
                Some((_, Some(ty), s)) => {
                    if !self.sub_shape(ty, &expected) {
                        self.mismatch(
                            ctx.file,
                            *s,
                            ty,
                            &expected,
                            &format!("argument `{}` has the wrong type", p.name),
                        );
                    } else if !self.sub(ty, &expected) {
                        if row.is_pure() {
                            // Pure-call lifting (§7.7 rule 2): the result depends on a secret.
                            lifted = Attr::Private;
                            private_args.push(self.written_argument(ctx.file, &p.name, *s));
                        } else {
                            let shown = self.render(&expected);
                            self.error(Code::K3001, ctx.file, *s, format!("a private value cannot be passed to the public parameter `{}` of an effectful agent", p.name))
                                .set_label(format!("this value is private, but `{}` is `{shown}`", p.name))
                                .set_help("secrets may only go where the parameter type says `of private` (like `http.fetch`'s headers)");
                        }
                    }
                }
                Some((_, None, _)) => {}
                None => {
                    if !p.optional && !holes.contains(&p.name) && !stray_hole {
                        let shown = self.render(&expected);
                        self.error(
                            Code::K3001,
                            ctx.file,
                            span,
                            format!("missing argument `{}`", p.name),
                        )
                        .set_label(format!("`{}: {shown}` is required", p.name))
                        .set_help(format!(
                            "pass `{} = …`, or `{} = _` to leave it open",
                            p.name, p.name
                        ));
                    }
                }
            }
        }
        // A secret carried into a generic that the result does not mention (`a == secret`) also
        // makes a pure call's result private; one the result mentions travels in it already.
        if row.is_pure() {
            for g in &generics {
                if let Some(GenArg::Type(t)) = solution.subst.generics.get(g)
                    && has_private(t)
                    && !mentions(&ret, *g)
                {
                    lifted = Attr::Private;
                }
            }
        }
        // Bounds of the solved generics (K3001); an unsolved one is the error type, which
        // satisfies every bound (it is reported as K3016 already).
        let solved: Vec<GenArg> = generics
            .iter()
            .map(|g| {
                solution
                    .subst
                    .generics
                    .get(g)
                    .cloned()
                    .unwrap_or(GenArg::Type(Ty::error()))
            })
            .collect();
        self.check_bounds(ctx.file, span, &generics, &solved);
        let ret = self.lattice().normalize(&subst.ty(&ret));
        if !holes.is_empty() {
            // A partial application is pure; the residual agent carries the callee's effect.
            let residual: Vec<Field> = params
                .iter()
                .filter(|p| holes.contains(&p.name))
                .map(|p| Field {
                    name: p.name.clone(),
                    ty: self.lattice().normalize(&subst.ty(&p.ty)),
                    optional: p.optional,
                })
                .collect();
            // Its result is the callee's, so a private argument captured for a public parameter
            // of a pure callee makes it private, as the call itself would be (§7.7 rule 2, §9.8).
            // An effectful callee's was K3001 above already (rule 3).
            if lifted.is_private() {
                let callee = self.written_callee(ctx.file, callee_span).or(name);
                self.private_residuals.push(PrivateResidual {
                    file: ctx.file,
                    span,
                    callee,
                    args: private_args,
                });
            }
            let ret = ret.clone().with_attr(ret.attr.join(lifted));
            return Ty::agent(Ty::object(residual, Rest::Open), ret, row);
        }
        self.perform(ctx, &row, span);
        ret.clone().with_attr(ret.attr.join(lifted))
    }

    /// The callee's source text when it is a short name (`scale`, `m.scale`).
    fn written_callee(&self, file: FileId, span: Span) -> Option<String> {
        let text = self.program.sources.get(file).text.get(span.range())?;
        let simple = text.len() <= 60
            && text
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
        simple.then(|| text.to_string())
    }

    /// Remembers that the local bound at `name` holds the partial application at `value`, when
    /// that is one whose residual's result is private.
    pub(crate) fn remember_private_residual(&mut self, file: FileId, name: Span, value: Span) {
        let Some(i) = self
            .private_residuals
            .iter()
            .rposition(|r| r.file == file && r.span == value)
        else {
            return;
        };
        if let Some(Resolution::Local(id)) = self.program.names.get(file, name) {
            self.private_residual_locals.insert(id, i);
        }
    }

    /// An argument as written, `label = value`, with `…` for a long or multi-line value.
    fn written_argument(&self, file: FileId, label: &str, span: Span) -> String {
        let text = self
            .program
            .sources
            .get(file)
            .text
            .get(span.range())
            .unwrap_or("");
        if text.len() <= 60 && !text.contains('\n') && text.contains('=') {
            text.to_string()
        } else {
            format!("{label} = …")
        }
    }

    /// Explains the K3001 diagnostics reported since `from` for a private value given a public
    /// type, when the value (of type `found`) holds a partial application inside `within` whose
    /// residual's result is private: each gains a note naming the captured private argument, a
    /// label on the partial application when it points elsewhere, and the type to write instead.
    pub(crate) fn explain_private_residuals(
        &mut self,
        file: FileId,
        within: Span,
        from: usize,
        found: &Ty,
    ) {
        // The residual is written inside the value, or the value starts with a local bound to it.
        let bound = match self.program.names.get(file, within) {
            Some(Resolution::Local(id)) => self.private_residual_locals.get(&id).copied(),
            _ => None,
        };
        let notes: Vec<(Span, String)> = self
            .private_residuals
            .iter()
            .enumerate()
            .filter(|(i, r)| {
                r.file == file
                    && (Some(*i) == bound
                        || (within.start <= r.span.start && r.span.end <= within.end))
            })
            .map(|(_, r)| r)
            .map(|r| {
                let callee = match &r.callee {
                    Some(c) => format!("`{c}`"),
                    None => "the callee".to_string(),
                };
                let what = match r.args.as_slice() {
                    [] => "a private argument".to_string(),
                    [one] => format!("the private argument `{one}`"),
                    many => format!(
                        "the private arguments {}",
                        many.iter()
                            .map(|a| format!("`{a}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                (
                    r.span,
                    format!(
                        "this partial application captures {what} for a public parameter of \
                         {callee}, a pure agent, so the residual agent's result is private"
                    ),
                )
            })
            .collect();
        if notes.is_empty() {
            return;
        }
        let shown = self.render(found);
        let from = from.min(self.out.diagnostics.len());
        for d in &mut self.out.diagnostics[from..] {
            let about_privacy = d.code == Code::K3001
                && d.primary
                    .as_ref()
                    .is_some_and(|l| l.message.starts_with("a private value cannot"));
            if !about_privacy {
                continue;
            }
            for (span, note) in &notes {
                if d.primary.as_ref().is_some_and(|l| l.span != *span) {
                    d.secondary.push(Label {
                        file,
                        span: *span,
                        message: "this residual agent's result is private".into(),
                    });
                }
                d.notes.push(note.clone());
            }
            d.help = Some(format!("write its type `{shown}`"));
        }
    }

    /// A call of a prelude operator function (§9.9).
    pub(crate) fn operator_call(
        &mut self,
        ctx: &mut Ctx,
        span: Span,
        name: &str,
        args: &[(&str, Ty, Span)],
    ) -> Ty {
        let Some(r) = self.prelude_value("prelude", name) else {
            return Ty::error();
        };
        let Some(sig) = self.out.signatures.get(&r).cloned() else {
            return Ty::error();
        };
        let written = format!("prelude.{name}");
        let callee = if sig.generics.is_empty() {
            Callee::Mono(sig.agent_ty())
        } else {
            Callee::Poly { sig, written }
        };
        let given: Vec<Given> = args
            .iter()
            .map(|(l, t, s)| (l.to_string(), Some(t.clone()), *s))
            .collect();
        self.apply(ctx, span, span, callee, &given)
    }

    pub(crate) fn binary(
        &mut self,
        ctx: &mut Ctx,
        span: Span,
        op: BinOp,
        left: &Expr,
        right: &Expr,
    ) -> Ty {
        let l = self.expr(ctx, left);
        let r = self.expr(ctx, right);
        if matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
            let known = |t: &Ty| !t.is_never() && !t.has_error();
            let numeric = |t: &Ty| known(t) && self.sub_shape(t, &Ty::number());
            let stringy = |t: &Ty| known(t) && self.sub_shape(t, &Ty::string());
            if (numeric(&l) && stringy(&r)) || (stringy(&l) && numeric(&r)) {
                self.error(Code::K3001, ctx.file, span, format!("cannot compare `{}` with `{}`", self.render(&l), self.render(&r)))
                    .set_label("a number compared with a string")
                    .set_help("convert one side: `string.to_number(value = …)` or `string.to_string(value = …)`");
                return Ty::boolean().with_attr(l.attr.join(r.attr));
            }
        }
        self.operator_call(
            ctx,
            span,
            op.prelude_name(),
            &[("left", l, left.span), ("right", r, right.span)],
        )
    }
}

/// Whether any node of a type is private.
fn has_private(ty: &Ty) -> bool {
    let mut found = false;
    ty.walk(&mut |t| found |= t.attr.is_private());
    found
}

/// Whether a type mentions a generic parameter (in a type position or a row tail).
fn mentions(ty: &Ty, g: GenericId) -> bool {
    let mut found = false;
    ty.walk(&mut |t| match &t.kind {
        TyKind::Param(p) => found |= *p == g,
        TyKind::Agent(a) => found |= a.row.tails.iter().any(|tail| tail.var == RowVar::Param(g)),
        _ => {}
    });
    found
}
