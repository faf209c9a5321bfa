//! Expressions (`language.md` §9.2–§9.12, §9.16): their types, names in value and callee
//! position (K3015 for unapplied generics), explicit generic application, field access (K3014),
//! `if`, `match` and `for`.

use std::collections::HashMap;

use super::Checker;
use super::agents::{Ctx, Target};
use super::decls::AgentSig;
use super::lower::Kind;
use crate::ast::{self, Expr, ExprKind};
use crate::diag::Code;
use crate::resolve::{DeclRef, Resolution};
use crate::source::{FileId, Span};
use crate::types::*;

/// A callee: a plain agent type, or a generic signature still to be instantiated.
pub(crate) enum Callee {
    Mono(Ty),
    Poly {
        sig: AgentSig,
        /// The reference as written (`json.decode`), for messages and suggestions.
        written: String,
    },
}

impl Checker<'_> {
    /// The type of an expression in a value position (generic values must be applied: K3015).
    pub(crate) fn expr(&mut self, ctx: &mut Ctx, e: &Expr) -> Ty {
        stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
            self.expr_unguarded(ctx, e)
        })
    }

    fn expr_unguarded(&mut self, ctx: &mut Ctx, e: &Expr) -> Ty {
        let ty = match self.callee(ctx, e) {
            Callee::Mono(ty) => ty,
            Callee::Poly { sig, written, .. } => {
                let names = sig
                    .generics
                    .iter()
                    .map(|g| self.generic_name(*g))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.error(
                    Code::K3015,
                    ctx.file,
                    e.span,
                    format!("the generic `{written}` must be applied before it is used as a value"),
                )
                .set_label("a generic agent used as a value")
                .set_help(format!(
                    "call it, or write `{written}[{names}]` with explicit type arguments"
                ));
                Ty::error()
            }
        };
        self.out.queries.record(ctx.file, e.span, &ty);
        ty
    }

    /// The type of an expression in callee (or `use` provider) position.
    pub(crate) fn callee(&mut self, ctx: &mut Ctx, e: &Expr) -> Callee {
        stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
            self.callee_unguarded(ctx, e)
        })
    }

    fn callee_unguarded(&mut self, ctx: &mut Ctx, e: &Expr) -> Callee {
        let ty = match &e.kind {
            ExprKind::Lit(lit) => super::decls::literal_type(lit),
            ExprKind::Template(parts) => self.template(ctx, parts),
            ExprKind::Name(name) => return self.name_callee(ctx, None, name),
            ExprKind::Field { target, field } => {
                if let ExprKind::Name(q) = &target.kind
                    && let Some(Resolution::Module(_)) = self.program.names.get(ctx.file, q.span)
                {
                    return self.name_callee(ctx, Some(q), field);
                }
                let t = self.expr(ctx, target);
                self.field(ctx, e.span, &t, field)
            }
            ExprKind::Call { callee, args } => self.call(ctx, e.span, callee, args),
            ExprKind::TypeApply { callee, args } => {
                return self.type_apply(ctx, e.span, callee, args);
            }
            ExprKind::Binary { op, left, right } => self.binary(ctx, e.span, *op, left, right),
            ExprKind::Unary { op, operand } => {
                let t = self.expr(ctx, operand);
                self.operator_call(
                    ctx,
                    e.span,
                    op.prelude_name(),
                    &[("value", t, operand.span)],
                )
            }
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(ctx, cond);
                if !self.sub_shape(&c, &Ty::boolean()) {
                    self.mismatch(
                        ctx.file,
                        cond.span,
                        &c,
                        &Ty::boolean(),
                        "conditions must be booleans",
                    );
                }
                let marks = self.marks(ctx);
                let a = self.block(ctx, then);
                let b = match otherwise {
                    Some(o) => self.expr(ctx, o),
                    None => Ty::null(),
                };
                self.private_control(ctx, &c, cond.span, marks, "condition");
                let joined = self.join_reporting(ctx.file, e.span, &a, &b);
                // A private condition makes the result private (§7.7 rule 4).
                joined.clone().with_attr(joined.attr.join(c.attr))
            }
            ExprKind::Match { subject, arms } => self.match_expr(ctx, subject, arms),
            ExprKind::For(f) => self.for_expr(ctx, e.span, f),
            ExprKind::ParallelTuple(items) | ExprKind::Tuple(items) => {
                Ty::tuple(items.iter().map(|i| self.expr(ctx, i)).collect())
            }
            ExprKind::Handler(h) => {
                return match &h.type_args {
                    Some(args) => Callee::Mono(self.handler_value(ctx, e.span, h, args)),
                    None => {
                        self.error(
                            Code::K3015,
                            ctx.file,
                            e.span,
                            "a handler must be used with `use` or applied as `handler[R, E]`",
                        )
                        .set_label("a handler used as a value")
                        .set_help("write `use handler { … }` to handle the rest of the block");
                        Callee::Mono(Ty::error())
                    }
                };
            }
            ExprKind::Agent(a) => self.anonymous_agent(ctx, a, e.span),
            ExprKind::Record(entries) => {
                let mut fields: Vec<Field> = Vec::new();
                for entry in entries {
                    let ty = self.expr(ctx, &entry.value);
                    if !fields.iter().any(|f| f.name == entry.key) {
                        fields.push(Field {
                            name: entry.key.clone(),
                            ty,
                            optional: false,
                        });
                    }
                }
                Ty::object(fields, Rest::Closed)
            }
            ExprKind::Block(b) => self.block(ctx, b),
            ExprKind::Error => Ty::error(),
        };
        Callee::Mono(ty)
    }

    /// A template: every interpolated value must be a string (K3001); the text is as private
    /// as its most private part (templates concatenate, §8.6 rule 4).
    fn template(&mut self, ctx: &mut Ctx, parts: &[ast::TemplatePart]) -> Ty {
        let mut attr = Attr::Public;
        for part in parts {
            if let ast::TemplatePart::Interp(inner) = part {
                let ty = self.expr(ctx, inner);
                if !self.sub_shape(&ty, &Ty::string()) {
                    self.mismatch(
                        ctx.file,
                        inner.span,
                        &ty,
                        &Ty::string(),
                        "interpolated values must be strings",
                    );
                    self.last_help("convert it with `string.to_string(value = …)` or `json.to_text(value = …)`");
                }
                attr = attr.join(ty.attr);
            }
        }
        Ty::string().with_attr(attr)
    }

    pub(crate) fn join_reporting(&mut self, file: FileId, span: Span, a: &Ty, b: &Ty) -> Ty {
        let mut lat = self.lattice();
        let joined = lat.join(a, b);
        let conflicts = lat.join_conflicts.clone();
        if let Some(c) = conflicts.first() {
            let name = self.display_name(*c);
            self.error(Code::K3005, file, span, format!("`{}` and `{}` cannot be joined", self.render(a), self.render(b)))
                .set_label(format!("these values have different instantiations of `{name}`"))
                .set_help(format!("`{name}` is invariant in its argument, so both must use the same one: annotate one side or convert it"));
            return Ty::error();
        }
        joined
    }

    /// A name in callee position: locals are plain unless they are generic local agents;
    /// top-level callables may be generic.
    fn name_callee(
        &mut self,
        ctx: &mut Ctx,
        qualifier: Option<&ast::Ident>,
        name: &ast::Ident,
    ) -> Callee {
        let written = match qualifier {
            Some(q) => format!("{}.{}", q.text, name.text),
            None => name.text.clone(),
        };
        match self.program.names.get(ctx.file, name.span) {
            Some(Resolution::Local(id)) => match self.local_sigs.get(&id) {
                Some(sig) => Callee::Poly {
                    sig: sig.clone(),
                    written,
                },
                None => Callee::Mono(self.local_ty(id)),
            },
            Some(Resolution::Global(r)) => self.global_callee(ctx, name, r, written),
            _ => Callee::Mono(Ty::error()),
        }
    }

    fn global_callee(
        &mut self,
        ctx: &mut Ctx,
        name: &ast::Ident,
        r: DeclRef,
        written: String,
    ) -> Callee {
        let sig = match self.program.decl(r) {
            Some(ast::Decl::Agent(_)) => match self.ensure_agent(r) {
                Some(sig) => sig,
                None => match self.recursive_reference(ctx.file, name, r) {
                    Some(sig) => sig,
                    None => return Callee::Mono(Ty::error()),
                },
            },
            Some(ast::Decl::Synonym(_)) | Some(ast::Decl::Import(_)) | None => {
                return Callee::Mono(Ty::error());
            }
            Some(_) => match self.out.signatures.get(&r) {
                Some(sig) => sig.clone(),
                None => return Callee::Mono(Ty::error()),
            },
        };
        if sig.generics.is_empty() {
            Callee::Mono(sig.agent_ty())
        } else {
            Callee::Poly { sig, written }
        }
    }

    /// `f[T1, …]`: an explicit instantiation of a generic callable (§9.7).
    fn type_apply(
        &mut self,
        ctx: &mut Ctx,
        span: Span,
        callee: &Expr,
        args: &[ast::Type],
    ) -> Callee {
        match self.callee(ctx, callee) {
            Callee::Poly { sig, written, .. } => {
                let scope = self.ty_scope(ctx);
                let count = sig.generics.len();
                if args.len() != count {
                    let names = sig
                        .generics
                        .iter()
                        .map(|g| self.generic_name(*g))
                        .collect::<Vec<_>>()
                        .join(", ");
                    self.error(
                        Code::K3009,
                        ctx.file,
                        span,
                        format!(
                            "`{written}` takes {count} type argument{}, found {}",
                            plural(count),
                            args.len()
                        ),
                    )
                    .set_label(format!(
                        "{} type argument{} given here",
                        args.len(),
                        plural(args.len())
                    ))
                    .set_help(format!("write every generic: `{written}[{names}]`"));
                    // The arguments are still lowered, for their own diagnostics.
                    for a in args {
                        self.lower_any(&scope, a, Kind::Type);
                    }
                    return Callee::Mono(Ty::error());
                }
                let mut lowered = Vec::new();
                for (g, a) in sig.generics.iter().zip(args) {
                    let kind = self
                        .out
                        .generics
                        .get(g)
                        .map(|i| Kind::of(i.kind))
                        .unwrap_or(Kind::Type);
                    lowered.push(self.lower_any(&scope, a, kind));
                }
                self.check_bounds(ctx.file, span, &sig.generics, &lowered);
                self.check_separate_entries(ctx.file, span, &sig, &lowered);
                self.out
                    .queries
                    .record_instantiation(ctx.file, span, lowered.clone());
                let mut subst = Subst::default();
                for (g, a) in sig.generics.iter().zip(lowered) {
                    subst.generics.insert(*g, a);
                }
                let ty = subst.ty(&sig.agent_ty());
                Callee::Mono(self.lattice().normalize(&ty))
            }
            Callee::Mono(ty) => {
                if !ty.is_error() {
                    self.error(
                        Code::K3011,
                        ctx.file,
                        span,
                        format!(
                            "`{}` is not generic and takes no type arguments",
                            self.render(&ty)
                        ),
                    )
                    .set_label(
                        "only generic agents, requests and constructors take type arguments",
                    );
                }
                Callee::Mono(Ty::error())
            }
        }
    }

    /// A parameter row that names a request next to an effect generic (`with E |
    /// prelude.throw[Err]`) reserves that request's entry: an explicit `E` containing it is K3001
    /// (§7.4, `prelude.md` §3).
    fn check_separate_entries(
        &mut self,
        file: FileId,
        span: Span,
        sig: &AgentSig,
        args: &[GenArg],
    ) {
        // Only parameter rows: the callee's own row (`with E | prelude.throw[call_error]`) may
        // well receive more of the same request through `E`.
        let mut rows = Vec::new();
        let mut collect = |t: &Ty| {
            if let TyKind::Agent(a) = &t.kind {
                rows.push(a.row.clone());
            }
        };
        for p in &sig.params {
            p.ty.walk(&mut collect);
        }
        for row in rows {
            for tail in &row.tails {
                let RowVar::Param(g) = tail.var else { continue };
                let Some(GenArg::Effect(given)) = sig
                    .generics
                    .iter()
                    .position(|x| *x == g)
                    .and_then(|i| args.get(i))
                else {
                    continue;
                };
                if let Some(req) = row.entries.keys().find(|r| given.entries.contains_key(*r)) {
                    let (gname, rname) = (self.generic_name(g), self.display_name(*req));
                    let (given, whole) = (self.render_row(given), self.render_row(&row));
                    self.error(
                        Code::K3001,
                        file,
                        span,
                        format!("`{gname}` cannot contain `{rname}` here"),
                    )
                    .set_label(format!("`{gname}` is given as `{given}`"))
                    .set_help(format!(
                        "the row `{whole}` names `{rname}` separately, so leave it out of `{gname}`"
                    ));
                    return;
                }
            }
        }
    }

    /// Replaces a generic parameter by its bound, so a bounded generic can be used at its bound.
    pub(crate) fn at_bound(&self, ty: &Ty) -> Ty {
        match &ty.kind {
            TyKind::Param(g) => {
                let bound = self.generic_bound(*g);
                if bound.is_unknown() {
                    ty.clone()
                } else {
                    bound.with_attr(ty.attr)
                }
            }
            _ => ty.clone(),
        }
    }

    /// `e.f` (§9.5).
    fn field(&mut self, ctx: &mut Ctx, span: Span, target: &Ty, field: &ast::Ident) -> Ty {
        if target.is_never() || target.is_error() {
            return target.clone();
        }
        let target = self.at_bound(target);
        let mut results = Vec::new();
        for m in target.members() {
            let member = self.at_bound(m);
            let member = member.clone().with_attr(member.attr.join(target.attr));
            let read = match &member.kind {
                TyKind::Object { fields, rest } => {
                    match fields.iter().find(|f| f.name == field.text) {
                        Some(f) if f.optional => self.join(&f.ty, &Ty::null()),
                        Some(f) => f.ty.clone(),
                        None => match rest {
                            Rest::Closed => Ty::null(),
                            Rest::Open => Ty::unknown(),
                            Rest::Of(t) => self.join(t, &Ty::null()),
                        },
                    }
                }
                TyKind::Data { id, args } => match self
                    .data_fields(*id, args)
                    .into_iter()
                    .find(|f| f.name == field.text)
                {
                    Some(f) => f.ty,
                    None => Ty::unknown(),
                },
                _ => {
                    let nullable = matches!(member.kind, TyKind::Null);
                    let what = if nullable {
                        "a value that may be null"
                    } else {
                        "a value that is not an object"
                    };
                    let shown = self.render(&target);
                    self.error(Code::K3014, ctx.file, span, format!("cannot read the field `{}` of {what} (`{shown}`)", field.text))
                        .set_label(format!("this value has type `{shown}`"))
                        .set_help(if nullable {
                            "match on the value first: `case null -> …` then `case v -> v.field`"
                        } else {
                            "fields exist only on records and data values; match on the value to narrow it"
                        });
                    return Ty::error();
                }
            };
            // Reading through a private container is private (§7.7 rule 1).
            let attr = read.attr.join(member.attr);
            results.push(read.with_attr(attr));
        }
        self.lattice().join_all(&results)
    }

    // -----------------------------------------------------------------------------------
    // Control flow
    // -----------------------------------------------------------------------------------

    fn for_expr(&mut self, ctx: &mut Ctx, span: Span, f: &ast::ForExpr) -> Ty {
        let source = self.expr(ctx, &f.source);
        let elem = self.element_type(ctx, f.source.span, &source);
        let vars = self.var_bindings(ctx, &f.vars);
        let marks = self.marks(ctx);
        self.bind_pattern(ctx, &f.pattern, &elem, true);
        ctx.targets.push(Target {
            span,
            nexts: Vec::new(),
            breaks: Vec::new(),
            resume: None,
            vars,
        });
        let fall = self.block(ctx, &f.body);
        self.private_control(ctx, &source, f.source.span, marks, "source");
        let target = ctx.targets.pop();
        let (nexts, breaks) = target.map(|t| (t.nexts, t.breaks)).unwrap_or_default();
        let mut lat = self.lattice();
        let mut iter = lat.join(&fall, &Ty::never());
        for n in &nexts {
            iter = lat.join(&iter, n);
        }
        let all = Ty::array(iter);
        let mut result = match &f.then {
            Some(then) => {
                if let Some(p) = &then.pattern {
                    self.bind_pattern(ctx, p, &all, true);
                }
                self.block(ctx, &then.body)
            }
            None => all,
        };
        for b in &breaks {
            result = self.join_reporting(ctx.file, span, &result, b);
        }
        result
    }

    /// The element type of a `for` source (K3014 for anything but a sequence).
    fn element_type(&mut self, ctx: &mut Ctx, span: Span, source: &Ty) -> Ty {
        if source.is_never() || source.is_error() {
            return source.clone();
        }
        let source = self.at_bound(source);
        let mut elems = Vec::new();
        for m in source.members() {
            match &self.at_bound(m).kind {
                TyKind::Seq { prefix, rest } => {
                    elems.extend(
                        prefix
                            .iter()
                            .map(|t| t.clone().with_attr(t.attr.join(m.attr))),
                    );
                    if let Some(r) = rest {
                        elems.push((**r).clone().with_attr(r.attr.join(m.attr)));
                    }
                }
                _ => {
                    let shown = self.render(&source);
                    let nullable = matches!(m.kind, TyKind::Null);
                    self.error(Code::K3014, ctx.file, span, format!("cannot iterate over `{shown}`"))
                        .set_label(if nullable { "this value may be null".to_string() } else { format!("this is `{shown}`, not an array or tuple") })
                        .set_help(if nullable {
                            "match on it first: `case null -> …` then iterate the non-null value"
                        } else {
                            "`for` takes an array or tuple; iterate a record with `record.entries(target = …)`"
                        });
                    return Ty::error();
                }
            }
        }
        let joined = self.lattice().join_all(&elems);
        joined.clone().with_attr(joined.attr.join(source.attr))
    }

    /// The `var` bindings of a `for` or handler (§9.16): annotated or exactly the initializer's
    /// type.
    pub(crate) fn var_bindings(
        &mut self,
        ctx: &mut Ctx,
        vars: &[ast::VarBinding],
    ) -> HashMap<String, Ty> {
        let scope = self.ty_scope(ctx);
        let mut out = HashMap::new();
        for v in vars {
            let init = self.expr(ctx, &v.init);
            let ty = match &v.ty {
                Some(t) => {
                    let declared = self.lower_ty(&scope, t);
                    if !self.sub_shape(&init, &declared) {
                        self.mismatch(
                            ctx.file,
                            v.init.span,
                            &init,
                            &declared,
                            "the initial value does not fit the `var`'s type",
                        );
                    }
                    declared
                }
                None => init,
            };
            self.bind_local(ctx.file, v.name.span, ty.clone());
            out.insert(v.name.text.clone(), ty);
        }
        out
    }

    fn match_expr(&mut self, ctx: &mut Ctx, subject: &Expr, arms: &[ast::Arm]) -> Ty {
        let subject_ty = self.expr(ctx, subject);
        let marks = self.marks(ctx);
        let mut residual = subject_ty.clone();
        let mut seen_true = false;
        let mut seen_false = false;
        let mut result = Ty::never();
        for arm in arms {
            self.bind_pattern(ctx, &arm.pattern, &residual, false);
            let body = self.expr(ctx, &arm.body);
            result = self.join_reporting(ctx.file, arm.span, &result, &body);
            match &arm.pattern.kind {
                ast::PatternKind::Lit(ast::LitKind::Bool(true)) => seen_true = true,
                ast::PatternKind::Lit(ast::LitKind::Bool(false)) => seen_false = true,
                _ => {}
            }
            residual = self.subtract(ctx, &residual, &arm.pattern);
            if seen_true && seen_false {
                let kept: Vec<Ty> = residual
                    .members()
                    .iter()
                    .filter(|m| !matches!(m.kind, TyKind::Boolean))
                    .cloned()
                    .collect();
                residual = self.lattice().join_all(&kept);
            }
        }
        // Which arm runs tells which member the value is: a private member makes the scrutinee
        // private, even in a union that is not private as a whole (`circle of private | rect`).
        let observed = subject_ty
            .members()
            .iter()
            .fold(subject_ty.attr, |a, m| a.join(m.attr));
        let subject_ty = subject_ty.clone().with_attr(observed);
        self.private_control(ctx, &subject_ty, subject.span, marks, "scrutinee");
        if !residual.is_never() && !residual.is_error() && !subject_ty.is_never() {
            let shown = self.render(&residual);
            self.error(
                Code::K3001,
                ctx.file,
                subject.span,
                format!("non-exhaustive match: `{shown}` is not covered"),
            )
            .set_label(format!("`{shown}` has no arm"))
            .set_help("add an arm for the remaining cases, or a final `case _ -> …`");
        }
        // A private scrutinee makes the result private (§7.7 rule 4).
        result.clone().with_attr(result.attr.join(subject_ty.attr))
    }
}

/// How far the operations, jumps and jump targets of a body had got at some point.
#[derive(Clone, Copy)]
pub(crate) struct Marks {
    performed: usize,
    escapes: usize,
    targets: usize,
}

impl Checker<'_> {
    fn marks(&self, ctx: &Ctx) -> Marks {
        Marks {
            performed: ctx.performed.len(),
            escapes: ctx.escapes.len(),
            targets: ctx.targets.len(),
        }
    }

    /// §7.7 rule 4: outside the private world, an `if`, `match` or `for` whose condition,
    /// scrutinee or source is private must not perform effects or jump out (K3001), since both
    /// would reveal the secret.
    fn private_control(
        &mut self,
        ctx: &Ctx,
        guard: &Ty,
        guard_span: Span,
        since: Marks,
        what: &str,
    ) {
        if ctx.private || !guard.attr.is_private() {
            return;
        }
        let effect = ctx
            .performed
            .get(since.performed..)
            .and_then(|p| p.first())
            .map(|(_, span)| (*span, "an effect"));
        let jump = || {
            let escapes = ctx.escapes.get(since.escapes..)?;
            let e = escapes
                .iter()
                .find(|e| e.target.is_none_or(|t| t < since.targets))?;
            Some((e.span, "a jump"))
        };
        let Some((span, kind)) = effect.or_else(jump) else {
            return;
        };
        let d = self
            .error(Code::K3001, ctx.file, span, format!("{kind} cannot depend on a private {what}"))
            .set_label(format!("this runs only for some values of the private {what}"))
            .set_help("compute a value from the secret first (pure code may), or move this into a `private agent`");
        d.secondary.push(crate::diag::Label {
            file: ctx.file,
            span: guard_span,
            message: format!("this {what} is private"),
        });
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
