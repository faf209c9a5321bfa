//! Handlers and `use` (`language.md` §9.19, §9.20): handler clauses and what they discharge,
//! `then` blocks (no jump may leave them, K3012), explicit `handler[R, E]` values, and `use`
//! providers with their continuation (K3019 for malformed ones, K3013 for unannotated binders).

use std::collections::HashMap;

use super::Checker;
use super::agents::{Ctx, Target};
use super::call::Given;
use super::decls::{AgentSig, DeclInfo, ParamSig};
use super::expr::{Callee, plural};
use super::lower::Kind;
use crate::ast::{self, Expr, ExprKind};
use crate::diag::{Code, Label};
use crate::resolve::{DeclRef, Resolution};
use crate::source::Span;
use crate::types::*;

/// What checking the clauses of a handler found.
struct Clauses {
    /// The handled computation's row without what the clauses discharge.
    remaining: Row,
    /// Values given to `break` in the clauses.
    breaks: Vec<Ty>,
    /// Each handled request with the instantiation its clause handles.
    handled: Vec<(DeclRef, Vec<GenArg>)>,
}

impl Checker<'_> {
    /// `use P` or `let p: T = use P` followed by the rest of the block (§9.20).
    pub(crate) fn use_stmt(
        &mut self,
        ctx: &mut Ctx,
        span: Span,
        binder: Option<&ast::Pattern>,
        provider: &Expr,
        rest: &[ast::Item],
    ) -> Ty {
        // The continuation's parameter type, from the binder's annotation (K3013 without one).
        let value_ty = match binder {
            Some(p) if !pattern_annotated(p) => {
                self.error(Code::K3013, ctx.file, p.span, "the binder of `let … = use` needs a type annotation")
                    .set_label("no type written")
                    .set_help("write `let x: <type> = use …` (or annotate every leaf of a tuple or record pattern)");
                Ty::error()
            }
            Some(p) => self.pattern_annotation(ctx, p),
            None => Ty::unknown(),
        };
        if let ExprKind::Handler(h) = &provider.kind
            && h.type_args.is_none()
        {
            if let Some(p) = binder {
                self.bind_pattern(ctx, p, &Ty::null(), true);
            }
            return self.use_handler(ctx, span, h, rest);
        }
        // The provider's callee and written arguments come first.
        let Some((callee, mut given, callee_span)) = self.provider(ctx, provider) else {
            // A malformed provider: the rest of the block is still checked, for its own errors.
            if let Some(p) = binder {
                self.bind_pattern(ctx, p, &value_ty, true);
            }
            self.items(ctx, rest);
            return Ty::error();
        };
        let open = continuation_open(&callee);
        // The rest of the block is the continuation: its effects flow into the provider.
        let saved = std::mem::take(&mut ctx.effects);
        let escape_mark = ctx.escapes.len();
        let outer_targets = ctx.targets.len();
        if let Some(p) = binder {
            self.bind_pattern(ctx, p, &value_ty, true);
        }
        let rest_ty = self.items(ctx, rest);
        let k_row = std::mem::replace(&mut ctx.effects, saved);
        if !open {
            // A jump out of the continuation unwinds through the provider: an effect its pure
            // continuation type does not allow (§9.15).
            let escape = ctx.escapes[escape_mark..]
                .iter()
                .find(|e| e.target.is_none_or(|t| t < outer_targets))
                .copied();
            if let Some(escape) = escape {
                let keyword = escape.keyword;
                let d = self
                    .error(Code::K3001, ctx.file, escape.span, format!("`{keyword}` cannot unwind through this `use`: the provider takes a pure continuation"))
                    .set_label(format!("this `{keyword}` leaves the continuation"))
                    .set_help("give the provider's continuation an effect generic (`with E`), or move the jump out of the `use`");
                d.secondary.push(Label {
                    file: ctx.file,
                    span: provider.span,
                    message: "the provider".into(),
                });
            }
        }
        let k = Ty::agent(
            Ty::object(
                vec![Field {
                    name: "value".into(),
                    ty: value_ty,
                    optional: false,
                }],
                Rest::Open,
            ),
            rest_ty,
            k_row,
        );
        let rest_span = match (rest.first(), rest.last()) {
            (Some(a), Some(b)) => a.span.to(b.span),
            _ => span,
        };
        given.push(("continuation".to_string(), Some(k), rest_span));
        self.apply(ctx, provider.span, callee_span, callee, &given)
    }

    /// The callee and written arguments of a `use` provider, or `None` after K3019 for a shape
    /// that cannot be one.
    fn provider(&mut self, ctx: &mut Ctx, provider: &Expr) -> Option<(Callee, Vec<Given>, Span)> {
        match &provider.kind {
            ExprKind::Call { callee, args } => {
                let callee_ty = self.callee(ctx, callee);
                let mut given = Vec::new();
                for a in args {
                    if a.label.text == "continuation" {
                        self.error(
                            Code::K3019,
                            ctx.file,
                            a.span,
                            "a `use` provider call must not pass `continuation` itself",
                        )
                        .set_label("`continuation` is written here")
                        .set_help("the rest of the block is passed as `continuation`");
                        if let Some(v) = &a.value {
                            self.expr(ctx, v);
                        }
                        continue;
                    }
                    let ty = match &a.value {
                        Some(v) => self.expr(ctx, v),
                        None => {
                            self.error(Code::K3019, ctx.file, a.span, "a `use` provider call cannot contain holes")
                                .set_label("a hole")
                                .set_help("`use` calls the provider once, with every argument: supply this one");
                            Ty::error()
                        }
                    };
                    given.push((a.label.text.clone(), Some(ty), a.span));
                }
                Some((callee_ty, given, callee.span))
            }
            ExprKind::Name(_) | ExprKind::Handler(_) => {
                Some((self.callee(ctx, provider), Vec::new(), provider.span))
            }
            ExprKind::Field { target, .. } if self.is_qualifier(ctx, target) => {
                Some((self.callee(ctx, provider), Vec::new(), provider.span))
            }
            ExprKind::TypeApply { callee, .. } if self.is_reference(ctx, callee) => {
                Some((self.callee(ctx, provider), Vec::new(), provider.span))
            }
            _ => {
                let what = match &provider.kind {
                    ExprKind::Field { .. } => "a field read cannot be a `use` provider",
                    _ => "this cannot be a `use` provider",
                };
                self.error(Code::K3019, ctx.file, provider.span, what)
                    .set_label("not a handler, a (qualified) name, an instantiation or a call")
                    .set_help(
                        "bind it first (`let p = …`) and write `use p`, or call it: `use p(…)`",
                    );
                self.expr(ctx, provider);
                None
            }
        }
    }

    /// Whether an expression is a module qualifier (the `m` of `m.name`).
    fn is_qualifier(&self, ctx: &Ctx, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::Name(q) if matches!(self.program.names.get(ctx.file, q.span), Some(Resolution::Module(_))))
    }

    /// Whether an expression is a (qualified) name.
    fn is_reference(&self, ctx: &Ctx, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(_) => true,
            ExprKind::Field { target, .. } => self.is_qualifier(ctx, target),
            _ => false,
        }
    }

    /// `use handler { … } [then …]` followed by the rest of the block.
    fn use_handler(
        &mut self,
        ctx: &mut Ctx,
        span: Span,
        h: &ast::HandlerExpr,
        rest: &[ast::Item],
    ) -> Ty {
        let vars = self.var_bindings(ctx, &h.vars);
        // The handled computation: the rest of the block, with its own effects.
        let saved = std::mem::take(&mut ctx.effects);
        let performed_mark = ctx.performed.len();
        let body_ty = self.items(ctx, rest);
        let body_row = std::mem::replace(&mut ctx.effects, saved);
        let clauses = self.clauses(ctx, h, &vars, &body_row);
        // Operations whose effects the clauses discharged no longer explain the agent's row.
        let remaining = &clauses.remaining;
        let mut kept = ctx.performed.split_off(performed_mark);
        kept.retain(|(row, _)| {
            row.io
                || row.all
                || !row.tails.is_empty()
                || row
                    .entries
                    .keys()
                    .any(|r| remaining.entries.contains_key(r))
        });
        ctx.performed.extend(kept);
        self.perform(ctx, &clauses.remaining, span);
        let mut result = match &h.then {
            Some(then) => self.then_block(ctx, then, &body_ty),
            None => body_ty,
        };
        for b in &clauses.breaks {
            result = self.join_reporting(ctx.file, span, &result, b);
        }
        result
    }

    /// A handler's `then` block: it runs outside the frame, and no jump may leave it (K3012).
    fn then_block(&mut self, ctx: &mut Ctx, then: &ast::ThenClause, value: &Ty) -> Ty {
        if let Some(p) = &then.pattern {
            self.bind_pattern(ctx, p, value, true);
        }
        ctx.thens.push((ctx.targets.len(), then.span));
        let ty = self.block(ctx, &then.body);
        ctx.thens.pop();
        ty
    }

    /// Checks the clauses of a handler against the handled computation's row.
    fn clauses(
        &mut self,
        ctx: &mut Ctx,
        h: &ast::HandlerExpr,
        vars: &HashMap<String, Ty>,
        body_row: &Row,
    ) -> Clauses {
        let mut out = Clauses {
            remaining: body_row.clone(),
            breaks: Vec::new(),
            handled: Vec::new(),
        };
        for clause in &h.clauses {
            // The clause's head, from `request` to its body.
            let head = Span::new(
                clause.span.start as usize,
                clause.body.span.start.max(clause.span.start) as usize,
            );
            let (params, resume) = match self.program.names.get(ctx.file, clause.name.span) {
                Some(Resolution::AmbientPanic) => {
                    if let Some(t) = &clause.ret {
                        let scope = self.ty_scope(ctx);
                        let written = self.lower_ty(&scope, t);
                        if !self.lattice().equivalent(&written, &Ty::never()) {
                            self.mismatch(ctx.file, t.span, &written, &Ty::never(), "the ambient `panic` clause cannot resume: its return type is `never`");
                        }
                    }
                    (
                        Some(vec![ParamSig {
                            name: "msg".into(),
                            ty: Ty::string(),
                            optional: false,
                            default: None,
                            doc: None,
                        }]),
                        Ty::never(),
                    )
                }
                Some(Resolution::Global(r))
                    if matches!(self.out.decls.get(&r), Some(DeclInfo::Request { .. })) =>
                {
                    match self.out.signatures.get(&r).cloned() {
                        Some(sig) => {
                            let (params, resume, args) = self.instantiate_clause(ctx, clause, &sig);
                            // The body's entry must fit the clause's instantiation (K3001 otherwise).
                            if let Some(body_args) = body_row.entries.get(&r) {
                                let body_entry = Row::single(r, body_args.clone());
                                let clause_entry = Row::single(r, args.clone());
                                if !self.lattice().row_sub(&body_entry, &clause_entry) {
                                    let (found, handled) = (
                                        self.render_row(&body_entry),
                                        self.render_row(&clause_entry),
                                    );
                                    self.error(Code::K3001, ctx.file, head, format!("this clause handles `{handled}`, but the handled code performs `{found}`"))
                                    .set_label(format!("this clause is narrower than `{found}`"))
                                    .set_help("handle the whole payload (and re-raise what you do not want), or none of it");
                                }
                            }
                            out.remaining = out.remaining.without(r);
                            out.handled.push((r, args));
                            (Some(params), resume)
                        }
                        None => (None, Ty::error()),
                    }
                }
                Some(Resolution::Global(r)) => {
                    let name = self.display_name(r);
                    self.error(Code::K3017, ctx.file, clause.name.span, format!("`{name}` is not a request, so no clause can handle it"))
                        .set_label("not a request")
                        .set_help("a clause names a request declared with `request …`, or the ambient `panic`");
                    (None, Ty::error())
                }
                Some(Resolution::Local(_)) => {
                    let name = &clause.name.text;
                    self.error(Code::K3017, ctx.file, clause.name.span, format!("`{name}` is a local value, not a request, so no clause can handle it"))
                        .set_label("not a request")
                        .set_help("a clause names a request declared with `request …`, or the ambient `panic`; a local of the same name hides a request");
                    (None, Ty::error())
                }
                _ => (None, Ty::error()),
            };
            self.clause_params(ctx, clause, params.as_deref());
            ctx.targets.push(Target {
                span: clause.span,
                nexts: Vec::new(),
                breaks: Vec::new(),
                resume: Some(resume.clone()),
                vars: vars.clone(),
            });
            let value = self.block(ctx, &clause.body);
            if let Some(t) = ctx.targets.pop() {
                out.breaks.extend(t.breaks);
            }
            if !self.sub_shape(&value, &resume) {
                let span = clause
                    .body
                    .items
                    .last()
                    .map(|i| i.span)
                    .unwrap_or(clause.body.span);
                let label = if resume.is_never() {
                    "this clause must end with `break` (the request cannot resume)"
                } else {
                    "falling off the end resumes with this value"
                };
                self.mismatch(ctx.file, span, &value, &resume, label);
            }
        }
        out
    }

    /// Binds a clause's parameters: listed labels must exist, annotations may only widen, and
    /// defaults are not allowed (K3001). `declared` is `None` when the clause names no request.
    fn clause_params(
        &mut self,
        ctx: &mut Ctx,
        clause: &ast::Clause,
        declared: Option<&[ParamSig]>,
    ) {
        for p in &clause.params {
            let declared_ty = match declared {
                None => Ty::error(),
                Some(params) => match params.iter().find(|d| d.name == p.name.text) {
                    Some(d) => d.ty.clone(),
                    None => {
                        let names = params
                            .iter()
                            .map(|d| d.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ");
                        self.error(
                            Code::K3001,
                            ctx.file,
                            p.name.span,
                            format!("the request has no parameter `{}`", p.name.text),
                        )
                        .set_label("not a parameter of the request")
                        .set_help(if names.is_empty() {
                            "the request takes no parameters".to_string()
                        } else {
                            format!("the request's parameters are: {names}")
                        });
                        Ty::error()
                    }
                },
            };
            match &p.kind {
                ast::ParamKind::Plain { ty, default } => {
                    if let Some(d) = default {
                        self.error(
                            Code::K3001,
                            ctx.file,
                            d.span,
                            "a clause parameter cannot have a default",
                        )
                        .set_label("remove this default")
                        .set_help("the request's own defaults are applied before the clause runs");
                    }
                    let bound = match ty {
                        Some(t) => {
                            let scope = self.ty_scope(ctx);
                            let written = self.lower_ty(&scope, t);
                            if !self.sub_shape(&declared_ty, &written) {
                                self.mismatch(ctx.file, t.span, &declared_ty, &written, "a clause annotation may widen the declared type, never narrow it");
                            }
                            written
                        }
                        None => declared_ty,
                    };
                    self.bind_local(ctx.file, p.name.span, bound);
                }
                ast::ParamKind::Destructure(pattern) => {
                    self.bind_pattern(ctx, pattern, &declared_ty, true)
                }
            }
        }
    }

    /// The instantiation a clause handles: from explicit type arguments or its annotations.
    fn instantiate_clause(
        &mut self,
        ctx: &mut Ctx,
        clause: &ast::Clause,
        sig: &AgentSig,
    ) -> (Vec<ParamSig>, Ty, Vec<GenArg>) {
        let scope = self.ty_scope(ctx);
        let mut subst = Subst::default();
        match &clause.type_args {
            Some(args) if args.len() != sig.generics.len() => {
                let count = sig.generics.len();
                self.error(
                    Code::K3009,
                    ctx.file,
                    clause.name.span,
                    format!(
                        "`{}` takes {count} type argument{}, found {}",
                        clause.name.text,
                        plural(count),
                        args.len()
                    ),
                )
                .set_label(format!(
                    "{} type argument{} given",
                    args.len(),
                    plural(args.len())
                ));
                for g in &sig.generics {
                    subst.generics.insert(*g, self.error_arg(*g));
                }
            }
            Some(args) => {
                let mut lowered = Vec::new();
                for (g, a) in sig.generics.iter().zip(args) {
                    let kind = self
                        .out
                        .generics
                        .get(g)
                        .map(|i| Kind::of(i.kind))
                        .unwrap_or(Kind::Type);
                    let arg = self.lower_any(&scope, a, kind);
                    subst.generics.insert(*g, arg.clone());
                    lowered.push(arg);
                }
                self.check_bounds(ctx.file, clause.name.span, &sig.generics, &lowered);
            }
            None if sig.generics.is_empty() => {}
            None => {
                let instance = self.instantiate(&sig.generics);
                let mut bounds = Bounds::default();
                for p in &clause.params {
                    let written = match &p.kind {
                        ast::ParamKind::Plain { ty: Some(t), .. } => self.lower_ty(&scope, t),
                        _ => continue,
                    };
                    if let Some(declared) = sig.params.iter().find(|d| d.name == p.name.text) {
                        let target = instance.to_infer.ty(&declared.ty);
                        let mut lat = Lattice::inferring(self, &mut bounds);
                        lat.ignore_attrs = true;
                        lat.sub(&written, &target);
                    }
                }
                let solution = self.solve(&instance, &bounds, &HashMap::new());
                if let Some(g) = solution.unsolved.first() {
                    let gname = self.generic_name(*g);
                    self.error(Code::K3016, ctx.file, clause.name.span, "cannot tell which instantiation of the request this clause handles")
                        .set_label(format!("no parameter annotation determines `{gname}`"))
                        .set_help(format!("annotate the clause's parameters, e.g. `request {}(error: my_error) -> never {{ … }}`, or write `{}[…]`", clause_name(clause), clause_name(clause)));
                    for g in &solution.unsolved {
                        subst.generics.insert(*g, self.error_arg(*g));
                    }
                    for (g, a) in solution.subst.generics {
                        subst.generics.entry(g).or_insert(a);
                    }
                } else {
                    // The inferred instantiation must satisfy the request's bounds, like one
                    // inferred at a call (§6.8, §9.19).
                    let solved: Vec<GenArg> = sig
                        .generics
                        .iter()
                        .map(|g| {
                            solution
                                .subst
                                .generics
                                .get(g)
                                .cloned()
                                .unwrap_or_else(|| self.error_arg(*g))
                        })
                        .collect();
                    self.check_bounds(ctx.file, clause.name.span, &sig.generics, &solved);
                    subst = solution.subst;
                }
            }
        }
        let params = sig
            .params
            .iter()
            .map(|p| ParamSig {
                ty: subst.ty(&p.ty),
                ..p.clone()
            })
            .collect();
        let ret = subst.ty(&sig.ret);
        let args = sig
            .generics
            .iter()
            .map(|g| {
                subst
                    .generics
                    .get(g)
                    .cloned()
                    .unwrap_or_else(|| self.error_arg(*g))
            })
            .collect();
        if let Some(t) = &clause.ret {
            let written = self.lower_ty(&scope, t);
            if !self.lattice().equivalent(&written, &ret) {
                self.mismatch(
                    ctx.file,
                    t.span,
                    &written,
                    &ret,
                    "a clause's `-> T` must equal the request's return type",
                );
            }
        }
        (params, ret, args)
    }

    /// The stand-in argument for a generic whose instantiation failed.
    fn error_arg(&self, g: GenericId) -> GenArg {
        match self.out.generics.get(&g).map(|i| i.kind) {
            Some(ast::GenericKind::Effect) => GenArg::Effect(Row::pure()),
            Some(ast::GenericKind::Attribute) => GenArg::Attr(Attr::Public),
            _ => GenArg::Type(Ty::error()),
        }
    }

    /// `handler[R, E] { … }` as a value: an agent taking the continuation.
    pub(crate) fn handler_value(
        &mut self,
        ctx: &mut Ctx,
        span: Span,
        h: &ast::HandlerExpr,
        args: &[ast::Type],
    ) -> Ty {
        let scope = self.ty_scope(ctx);
        if args.len() != 2 {
            self.error(
                Code::K3009,
                ctx.file,
                span,
                format!(
                    "a handler takes 2 type arguments (`handler[R, E]`), found {}",
                    args.len()
                ),
            )
            .set_label(format!(
                "{} type argument{} given",
                args.len(),
                plural(args.len())
            ))
            .set_help("write the continuation's result and row: `handler[R, E] { … }`");
            return Ty::error();
        }
        let r = self.lower_ty(&scope, &args[0]);
        let e = self.lower_row(&scope, &args[1]);
        let vars = self.var_bindings(ctx, &h.vars);
        // The clauses and `then` run when the value is applied: their effects belong to it.
        let saved = std::mem::take(&mut ctx.effects);
        let performed_mark = ctx.performed.len();
        let clauses = self.clauses(ctx, h, &vars, &e);
        let mut result = match &h.then {
            Some(then) => self.then_block(ctx, then, &r),
            None => r.clone(),
        };
        for b in &clauses.breaks {
            result = self.join_reporting(ctx.file, span, &result, b);
        }
        ctx.performed.truncate(performed_mark);
        let clause_row = std::mem::replace(&mut ctx.effects, saved);
        let row = self.join_rows_reporting(
            ctx.file,
            (
                span,
                "the clauses and the handled code perform different instantiations",
            ),
            &e,
            &clause_row,
        );
        // The continuation may perform the handled requests on top of `E`.
        let mut handled = e;
        for (req, args) in clauses.handled {
            handled = handled.without(req);
            handled.entries.insert(req, args);
        }
        let k = Ty::agent(
            Ty::object(
                vec![Field {
                    name: "value".into(),
                    ty: Ty::null(),
                    optional: false,
                }],
                Rest::Open,
            ),
            r,
            handled,
        );
        Ty::agent(
            Ty::object(
                vec![Field {
                    name: "continuation".into(),
                    ty: k,
                    optional: false,
                }],
                Rest::Open,
            ),
            result,
            row,
        )
    }
}

/// Whether a provider's continuation may carry an escape (a `return` or jump unwinding through
/// it): its row must be open to inference (an effect generic of the provider) or `all`.
fn continuation_open(callee: &Callee) -> bool {
    let (params, generics): (Vec<(String, Ty)>, Vec<GenericId>) = match callee {
        Callee::Poly { sig, .. } => (
            sig.params
                .iter()
                .map(|p| (p.name.clone(), p.ty.clone()))
                .collect(),
            sig.generics.clone(),
        ),
        Callee::Mono(ty) => match &ty.kind {
            TyKind::Agent(a) => match &a.param.kind {
                TyKind::Object { fields, .. } => (
                    fields
                        .iter()
                        .map(|f| (f.name.clone(), f.ty.clone()))
                        .collect(),
                    Vec::new(),
                ),
                _ => return true,
            },
            _ => return true,
        },
    };
    let Some((_, ty)) = params.iter().find(|(name, _)| name == "continuation") else {
        return true;
    };
    match &ty.kind {
        TyKind::Agent(a) => {
            a.row.all
                || a.row
                    .tails
                    .iter()
                    .any(|t| matches!(t.var, RowVar::Param(g) if generics.contains(&g)))
        }
        _ => true,
    }
}

/// The name of a clause as written (`prelude.throw`).
fn clause_name(clause: &ast::Clause) -> String {
    match &clause.qualifier {
        Some(q) => format!("{}.{}", q.text, clause.name.text),
        None => clause.name.text.clone(),
    }
}

/// Whether a `use` binder carries the annotations its type is read from.
fn pattern_annotated(p: &ast::Pattern) -> bool {
    match &p.kind {
        ast::PatternKind::Bind { ty, .. } | ast::PatternKind::Wildcard(ty) => ty.is_some(),
        ast::PatternKind::Tuple(items) => items.iter().all(pattern_annotated),
        ast::PatternKind::Record(fields) => fields
            .iter()
            .all(|f| f.pattern.as_ref().is_some_and(pattern_annotated)),
        ast::PatternKind::Filter { .. } | ast::PatternKind::Error => true,
        _ => false,
    }
}
