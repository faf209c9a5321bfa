//! Expressions, blocks and statements (`language.md` §9): their types, their effect rows and
//! the jump targets of `return`, `next` and `break`.

use std::collections::HashMap;

use super::decls::{AgentSig, DeclInfo, ParamSig, TyScope};
use super::{AgentState, Checker};
use crate::ast::{self, BinOp, Expr, ExprKind, ItemKind, LitKind};
use crate::diag::Code;
use crate::load::ModuleId;
use crate::resolve::{DeclRef, JumpTarget, LocalId, Resolution};
use crate::source::{FileId, Span};
use crate::types::*;

/// A jump target being checked: a `for` body or a handler clause.
pub(crate) struct Target {
    pub span: Span,
    /// Values given to `next` (and fall-through values) of a `for`; for a clause, `next` values
    /// are checked against `resume` instead.
    pub nexts: Vec<Ty>,
    /// Values given to `break`.
    pub breaks: Vec<Ty>,
    /// What `next` must give: the request's return type (clauses only).
    pub resume: Option<Ty>,
    /// The `var` state of the construct, by name.
    pub vars: HashMap<String, Ty>,
}

/// The context of one agent body (top-level, local or anonymous).
pub(crate) struct Ctx {
    pub module: ModuleId,
    pub file: FileId,
    /// Effects performed so far by the computation being checked.
    pub effects: Row,
    /// Values given to `return`, and the written return type if any.
    pub returns: Vec<Ty>,
    pub ret: Option<Ty>,
    pub targets: Vec<Target>,
    /// Inside a handler's `then`: jumps may not leave it (K3012).
    pub then_depth: usize,
}

/// A callee: a plain agent type, or a generic signature still to be instantiated.
pub(crate) enum Callee {
    Mono(Ty),
    Poly { sig: AgentSig, name: String },
}

impl Checker<'_> {
    pub(crate) fn ctx(&self, module: ModuleId) -> Ctx {
        Ctx { module, file: self.file_of(module), effects: Row::pure(), returns: Vec::new(), ret: None, targets: Vec::new(), then_depth: 0 }
    }

    fn ty_scope(&self, ctx: &Ctx) -> TyScope {
        TyScope { file: ctx.file, subst: HashMap::new() }
    }

    pub(crate) fn perform(&self, ctx: &mut Ctx, row: &Row) {
        let joined = self.lattice().join_row(&ctx.effects, row);
        ctx.effects = joined;
    }

    pub(crate) fn sub_shape(&self, a: &Ty, b: &Ty) -> bool {
        let mut lat = self.lattice();
        lat.ignore_attrs = true;
        lat.sub(a, b)
    }

    pub(crate) fn mismatch(&mut self, file: FileId, span: Span, found: &Ty, expected: &Ty, label: &str) {
        let (f, e) = (self.render(found), self.render(expected));
        self.error(Code::K3001, file, span, format!("expected `{e}`, found `{f}`")).set_label(label.to_string());
    }

    // -----------------------------------------------------------------------------------
    // Agents
    // -----------------------------------------------------------------------------------

    /// The signature of a top-level agent, checking its body first if it was not yet checked.
    pub(crate) fn ensure_agent(&mut self, r: DeclRef) -> Option<AgentSig> {
        match self.agent_state.get(&r).copied() {
            Some(AgentState::Done) => return self.out.signatures.get(&r).cloned(),
            Some(AgentState::InProgress) => return None,
            _ => {}
        }
        let Some(ast::Decl::Agent(decl)) = self.program.decl(r) else { return None };
        self.agent_state.insert(r, AgentState::InProgress);
        let outer_module = self.current.replace(Some(r.module));
        let mut ctx = self.ctx(r.module);
        let generics = self.generic_ids_of_decl(r);
        let scope = self.ty_scope(&ctx);
        let params = self.binding_params(&mut ctx, &scope, &decl.params, true);
        let written_ret = decl.ret.as_ref().map(|t| self.lower_ty(&scope, t));
        let written_row = decl.effects.as_ref().map(|t| self.lower_row(&scope, t));
        // A fully annotated agent's signature is known before its body: recursion may use it.
        if let (Some(ret), Some(row)) = (&written_ret, &written_row) {
            let doc = decl.doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
            self.out.signatures.insert(r, AgentSig { generics: generics.clone(), params: params.clone(), ret: ret.clone(), row: row.clone(), doc, private: decl.private });
        }
        let broken = self.program.module(r.module).is_some_and(|m| m.is_broken());
        let (ret, row) = self.agent_body(&mut ctx, &decl.body, written_ret, written_row, decl.private, broken);
        let doc = decl.doc.as_ref().map(|d| d.text.clone()).unwrap_or_default();
        let sig = AgentSig { generics, params, ret, row, doc, private: decl.private };
        self.out.signatures.insert(r, sig.clone());
        self.agent_state.insert(r, AgentState::Done);
        self.current.set(outer_module);
        Some(sig)
    }

    /// Checks an agent body against its written return type and row; gives the final ones.
    fn agent_body(&mut self, ctx: &mut Ctx, body: &ast::Block, written_ret: Option<Ty>, written_row: Option<Row>, private: bool, broken: bool) -> (Ty, Row) {
        ctx.ret = written_ret.clone();
        let value = self.block(ctx, body);
        let mut lat = self.lattice();
        let mut ret = lat.join(&value, &Ty::never());
        for r in &ctx.returns {
            ret = lat.join(&ret, r);
        }
        if private {
            ret = ret.clone().with_attr(Attr::Private);
        }
        let ret = match written_ret {
            Some(written) => {
                if !broken {
                    let mut lat = self.lattice();
                    lat.ignore_attrs = private;
                    if !lat.sub(&value, &written) {
                        let span = body.items.last().map(|i| i.span).unwrap_or(body.span);
                        let label = if value.attr.is_private() && !written.attr.is_private() {
                            "a private value cannot be returned as public"
                        } else {
                            "the body's value does not fit the declared return type"
                        };
                        self.mismatch(ctx.file, span, &value, &written, label);
                    }
                }
                written
            }
            None => ret,
        };
        let row = match written_row {
            Some(written) => {
                if !broken && !self.lattice().row_sub(&ctx.effects, &written) {
                    let (found, expected) = (self.render_row(&ctx.effects), self.render_row(&written));
                    self.error(Code::K3001, ctx.file, body.span, format!("the body performs `{found}`, which is more than the declared `with {expected}`"))
                        .set_help(format!("declare `with {found}`, or handle the extra requests inside the agent"));
                }
                written
            }
            None => ctx.effects.clone(),
        };
        (ret, row)
    }

    /// The parameters of an agent or anonymous agent, binding their locals.
    pub(crate) fn binding_params(&mut self, ctx: &mut Ctx, scope: &TyScope, params: &[ast::Param], require_annotation: bool) -> Vec<ParamSig> {
        let mut out = Vec::new();
        for p in params {
            let (ty, optional, default) = match &p.kind {
                ast::ParamKind::Plain { ty, default } => {
                    let ty = match ty {
                        Some(t) => self.lower_ty(scope, t),
                        None => {
                            if require_annotation {
                                self.error(Code::K3013, ctx.file, p.name.span, format!("parameter `{}` needs a type annotation", p.name.text))
                                    .set_help(format!("write `{}: <type>`", p.name.text));
                            }
                            Ty::unknown()
                        }
                    };
                    if let Some(d) = default {
                        self.check_default(ctx.file, d, &ty);
                    }
                    self.bind_local(ctx.file, p.name.span, ty.clone());
                    (ty, default.is_some(), default.as_ref().map(|d| d.kind.clone()))
                }
                ast::ParamKind::Destructure(pattern) => {
                    let ty = self.pattern_annotation(ctx, pattern);
                    self.bind_pattern(ctx, pattern, &ty, true);
                    (ty, false, None)
                }
            };
            out.push(ParamSig { name: p.name.text.clone(), ty, optional, default, doc: p.doc.as_ref().map(|d| d.text.clone()) });
        }
        out
    }

    pub(crate) fn bind_local(&mut self, file: FileId, span: Span, ty: Ty) {
        if let Some(Resolution::Local(id)) = self.program.names.get(file, span) {
            self.locals.insert(id, ty);
        }
    }

    fn local_agent(&mut self, ctx: &mut Ctx, decl: &ast::AgentDecl) -> Ty {
        let scope = self.ty_scope(ctx);
        let mut inner = self.ctx(ctx.module);
        let params = self.binding_params(&mut inner, &scope, &decl.params, true);
        let written_ret = decl.ret.as_ref().map(|t| self.lower_ty(&scope, t));
        let written_row = decl.effects.as_ref().map(|t| self.lower_row(&scope, t));
        let self_id = match self.program.names.get(ctx.file, decl.name.span) {
            Some(Resolution::Local(id)) => Some(id),
            _ => None,
        };
        let param_ty = Ty::object(params.iter().map(|p| Field { name: p.name.clone(), ty: p.ty.clone(), optional: p.optional }).collect(), Rest::Open);
        let recursive = self_id.is_some_and(|id| block_mentions(self, ctx.file, &decl.body, id));
        if recursive {
            match (&written_ret, &written_row) {
                (Some(ret), Some(row)) => {
                    if let Some(id) = self_id {
                        self.locals.insert(id, Ty::agent(param_ty.clone(), ret.clone(), row.clone()));
                    }
                }
                _ => {
                    self.error(Code::K3013, ctx.file, decl.name.span, format!("the recursive agent `{}` needs both its return type and its `with` row", decl.name.text))
                        .set_help("write `-> <type> with <row>` (`with pure` when it performs nothing)");
                    if let Some(id) = self_id {
                        self.locals.insert(id, Ty::agent(param_ty.clone(), written_ret.clone().unwrap_or_else(Ty::unknown), written_row.clone().unwrap_or_default()));
                    }
                }
            }
        }
        let (ret, row) = self.agent_body(&mut inner, &decl.body, written_ret, written_row, decl.private, false);
        let ty = Ty::agent(param_ty, ret, row);
        if let Some(id) = self_id {
            self.locals.insert(id, ty.clone());
        }
        ty
    }

    fn anonymous_agent(&mut self, ctx: &mut Ctx, a: &ast::AgentExpr) -> Ty {
        let scope = self.ty_scope(ctx);
        let mut inner = self.ctx(ctx.module);
        let params = self.binding_params(&mut inner, &scope, &a.params, true);
        let written_ret = a.ret.as_ref().map(|t| self.lower_ty(&scope, t));
        let written_row = a.effects.as_ref().map(|t| self.lower_row(&scope, t));
        let (ret, row) = self.agent_body(&mut inner, &a.body, written_ret, written_row, a.private, false);
        let param_ty = Ty::object(params.iter().map(|p| Field { name: p.name.clone(), ty: p.ty.clone(), optional: p.optional }).collect(), Rest::Open);
        Ty::agent(param_ty, ret, row)
    }

    // -----------------------------------------------------------------------------------
    // Blocks and statements
    // -----------------------------------------------------------------------------------

    pub(crate) fn block(&mut self, ctx: &mut Ctx, block: &ast::Block) -> Ty {
        self.items(ctx, &block.items)
    }

    fn items(&mut self, ctx: &mut Ctx, items: &[ast::Item]) -> Ty {
        let mut value = Ty::null();
        let mut diverges = false;
        for (i, item) in items.iter().enumerate() {
            value = Ty::null();
            match &item.kind {
                ItemKind::Let { pattern, value: e } => {
                    let ty = self.expr(ctx, e);
                    self.bind_pattern(ctx, pattern, &ty, true);
                }
                ItemKind::Use { binder, provider } => {
                    let rest = &items[i + 1..];
                    return self.use_stmt(ctx, item.span, binder.as_ref(), provider, rest);
                }
                ItemKind::Agent(decl) => {
                    self.local_agent(ctx, decl);
                }
                ItemKind::Return(e) => {
                    let ty = match e {
                        Some(e) => self.expr(ctx, e),
                        None => Ty::null(),
                    };
                    if ctx.then_depth > 0 || self.in_clause(ctx) {
                        self.error(Code::K3012, ctx.file, item.span, "`return` cannot be used inside a request clause or a handler's `then`")
                            .set_help("use `break` to end the handled computation with a value");
                    } else if let Some(expected) = ctx.ret.clone()
                        && !self.sub_shape(&ty, &expected)
                    {
                        self.mismatch(ctx.file, item.span, &ty, &expected, "this value does not fit the declared return type");
                    }
                    ctx.returns.push(ty);
                    diverges = true;
                }
                ItemKind::Next { value: e, updates } => {
                    let ty = match e {
                        Some(e) => self.expr(ctx, e),
                        None => Ty::null(),
                    };
                    self.next_stmt(ctx, item.span, ty, e.as_ref().map(|e| e.span), updates.as_deref());
                    diverges = true;
                }
                ItemKind::Break(e) => {
                    let ty = match e {
                        Some(e) => self.expr(ctx, e),
                        None => Ty::null(),
                    };
                    if let Some(t) = self.target_for(ctx, item.span) {
                        ctx.targets[t].breaks.push(ty);
                    }
                    diverges = true;
                }
                ItemKind::Expr(e) => value = self.expr(ctx, e),
            }
        }
        if diverges { Ty::never() } else { value }
    }

    fn in_clause(&self, ctx: &Ctx) -> bool {
        ctx.targets.iter().any(|t| t.resume.is_some())
    }

    /// The index of the target a jump item aims at, reporting K3012 when it leaves a `then`.
    fn target_for(&mut self, ctx: &Ctx, item_span: Span) -> Option<usize> {
        let target = self.program.names.jump(ctx.file, item_span)?;
        let span = match target {
            JumpTarget::For(s) | JumpTarget::Clause(s) => s,
        };
        let index = ctx.targets.iter().rposition(|t| t.span == span)?;
        Some(index)
    }

    fn next_stmt(&mut self, ctx: &mut Ctx, item_span: Span, ty: Ty, value_span: Option<Span>, updates: Option<&[ast::Modifier]>) {
        let Some(t) = self.target_for(ctx, item_span) else { return };
        if let Some(resume) = ctx.targets[t].resume.clone() {
            if !self.sub_shape(&ty, &resume) {
                let span = value_span.unwrap_or(item_span);
                let label = if resume.is_never() { "this request cannot be resumed: end the clause with `break`" } else { "`next` must give the request's return type" };
                self.mismatch(ctx.file, span, &ty, &resume, label);
            }
        } else {
            ctx.targets[t].nexts.push(ty);
        }
        for m in updates.unwrap_or_default() {
            let value = self.expr(ctx, &m.value);
            if let Some(var_ty) = ctx.targets[t].vars.get(&m.name.text).cloned()
                && !self.sub_shape(&value, &var_ty)
            {
                self.mismatch(ctx.file, m.value.span, &value, &var_ty, &format!("`{}` holds `{}`", m.name.text, self.render(&var_ty)));
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Expressions
    // -----------------------------------------------------------------------------------

    /// The type of an expression in a value position (generic values must be applied: K3015).
    pub(crate) fn expr(&mut self, ctx: &mut Ctx, e: &Expr) -> Ty {
        let ty = match self.callee(ctx, e) {
            Callee::Mono(ty) => ty,
            Callee::Poly { sig, name } => {
                let names = sig.generics.iter().map(|g| self.generic_name(*g)).collect::<Vec<_>>().join(", ");
                self.error(Code::K3015, ctx.file, e.span, format!("the generic `{name}` must be applied before it is used as a value"))
                    .set_help(format!("write `{name}[{names}]` with explicit type arguments"));
                let mut erase = Subst::default();
                for g in &sig.generics {
                    erase.generics.insert(*g, GenArg::Type(Ty::unknown()));
                }
                erase.ty(&sig.agent_ty())
            }
        };
        self.out.queries.record(ctx.file, e.span, &ty);
        ty
    }

    /// The type of an expression in callee (or `use` provider) position.
    pub(crate) fn callee(&mut self, ctx: &mut Ctx, e: &Expr) -> Callee {
        let ty = match &e.kind {
            ExprKind::Lit(lit) => literal_ty(lit),
            ExprKind::Template(parts) => {
                for part in parts {
                    if let ast::TemplatePart::Interp(inner) = part {
                        let ty = self.expr(ctx, inner);
                        if !self.sub_shape(&ty, &Ty::string()) {
                            self.mismatch(ctx.file, inner.span, &ty, &Ty::string(), "interpolated values must be strings");
                            if let Some(d) = self.out.diagnostics.last_mut() {
                                d.set_help("convert it with `string.to_string(value = …)` or `json.to_text(value = …)`");
                            }
                        }
                    }
                }
                Ty::string()
            }
            ExprKind::Name(name) => return self.name_callee(ctx, name),
            ExprKind::Field { target, field } => {
                if let ExprKind::Name(q) = &target.kind
                    && let Some(Resolution::Module(_)) = self.program.names.get(ctx.file, q.span)
                {
                    return self.name_callee(ctx, field);
                }
                let t = self.expr(ctx, target);
                self.field(ctx, e.span, &t, field)
            }
            ExprKind::Call { callee, args } => self.call(ctx, e.span, callee, args, None),
            ExprKind::TypeApply { callee, args } => return self.type_apply(ctx, e.span, callee, args),
            ExprKind::Binary { op, left, right } => self.binary(ctx, e.span, *op, left, right),
            ExprKind::Unary { op, operand } => {
                let name = op.prelude_name();
                let t = self.expr(ctx, operand);
                self.operator_call(ctx, e.span, name, &[("value", t, operand.span)])
            }
            ExprKind::If { cond, then, otherwise } => {
                let c = self.expr(ctx, cond);
                if !self.sub_shape(&c, &Ty::boolean()) {
                    self.mismatch(ctx.file, cond.span, &c, &Ty::boolean(), "conditions must be booleans");
                }
                let a = self.block(ctx, then);
                let b = match otherwise {
                    Some(o) => self.expr(ctx, o),
                    None => Ty::null(),
                };
                self.join_reporting(ctx.file, e.span, &a, &b)
            }
            ExprKind::Match { subject, arms } => self.match_expr(ctx, e.span, subject, arms),
            ExprKind::For(f) => self.for_expr(ctx, e.span, f),
            ExprKind::ParallelTuple(items) | ExprKind::Tuple(items) => Ty::tuple(items.iter().map(|i| self.expr(ctx, i)).collect()),
            ExprKind::Handler(h) => {
                return match &h.type_args {
                    Some(args) => Callee::Mono(self.handler_value(ctx, e.span, h, args)),
                    None => {
                        self.error(Code::K3015, ctx.file, e.span, "a handler must be used with `use` or applied as `handler[R, E]`")
                            .set_help("write `use handler { … }` to handle the rest of the block");
                        Callee::Mono(Ty::unknown())
                    }
                };
            }
            ExprKind::Agent(a) => self.anonymous_agent(ctx, a),
            ExprKind::Record(entries) => {
                let mut fields: Vec<Field> = Vec::new();
                for entry in entries {
                    let ty = self.expr(ctx, &entry.value);
                    if !fields.iter().any(|f| f.name == entry.key) {
                        fields.push(Field { name: entry.key.clone(), ty, optional: false });
                    }
                }
                Ty::object(fields, Rest::Closed)
            }
            ExprKind::Block(b) => self.block(ctx, b),
            ExprKind::Error => Ty::never(),
        };
        Callee::Mono(ty)
    }

    fn join_reporting(&mut self, file: FileId, span: Span, a: &Ty, b: &Ty) -> Ty {
        let mut lat = self.lattice();
        let joined = lat.join(a, b);
        let conflicts = lat.join_conflicts.clone();
        if let Some(c) = conflicts.first() {
            let name = self.qualified_name(*c);
            self.error(Code::K3005, file, span, format!("`{}` and `{}` cannot be joined: `{name}` is invariant in its argument", self.render(a), self.render(b)));
        }
        joined
    }

    /// A name in callee position: locals are plain; top-level callables may be generic.
    fn name_callee(&mut self, ctx: &mut Ctx, name: &ast::Ident) -> Callee {
        match self.program.names.get(ctx.file, name.span) {
            Some(Resolution::Local(id)) => Callee::Mono(self.local_ty(id)),
            Some(Resolution::Global(r)) => self.global_callee(ctx, name, r),
            _ => Callee::Mono(Ty::never()),
        }
    }

    pub(crate) fn local_ty(&self, id: LocalId) -> Ty {
        self.locals.get(&id).cloned().unwrap_or_else(Ty::never)
    }

    fn global_callee(&mut self, ctx: &mut Ctx, name: &ast::Ident, r: DeclRef) -> Callee {
        let qualified = self.qualified_name(r);
        let sig = match self.program.decl(r) {
            Some(ast::Decl::Agent(decl)) => match self.ensure_agent(r) {
                Some(sig) => sig,
                None => {
                    // A reference back into an agent being checked: recursion.
                    let annotated = decl.ret.is_some() && decl.effects.is_some();
                    if !annotated {
                        self.error(Code::K3013, ctx.file, name.span, format!("`{}` is recursive, so it needs both its return type and its `with` row", decl.name.text))
                            .set_label("recursive call")
                            .set_help(format!("annotate `agent {}(…) -> <type> with <row>` (`with pure` when it performs nothing)", decl.name.text));
                    }
                    match self.out.signatures.get(&r) {
                        Some(sig) => sig.clone(),
                        None => return Callee::Mono(Ty::never()),
                    }
                }
            },
            Some(ast::Decl::Synonym(_)) | Some(ast::Decl::Import(_)) | None => return Callee::Mono(Ty::never()),
            Some(_) => match self.out.signatures.get(&r) {
                Some(sig) => sig.clone(),
                None => return Callee::Mono(Ty::never()),
            },
        };
        if sig.generics.is_empty() { Callee::Mono(sig.agent_ty()) } else { Callee::Poly { sig, name: qualified } }
    }

    fn type_apply(&mut self, ctx: &mut Ctx, span: Span, callee: &Expr, args: &[ast::Type]) -> Callee {
        match self.callee(ctx, callee) {
            Callee::Poly { sig, name } => {
                if args.len() != sig.generics.len() {
                    self.error(Code::K3009, ctx.file, span, format!("`{name}` takes {} type argument{}, found {}", sig.generics.len(), if sig.generics.len() == 1 { "" } else { "s" }, args.len()));
                    return Callee::Mono(Ty::never());
                }
                let scope = self.ty_scope(ctx);
                let mut lowered = Vec::new();
                for (g, a) in sig.generics.iter().zip(args) {
                    let kind = self.out.generics.get(g).map(|i| i.kind).unwrap_or(ast::GenericKind::Type);
                    let k = match kind {
                        ast::GenericKind::Type => super::decls::Kind::Type,
                        ast::GenericKind::Effect => super::decls::Kind::Effect,
                        ast::GenericKind::Attribute => super::decls::Kind::Attribute,
                    };
                    lowered.push(self.lower_any(&scope, a, k));
                }
                self.check_bounds(ctx.file, span, &sig.generics, &lowered);
                let mut subst = Subst::default();
                for (g, a) in sig.generics.iter().zip(lowered) {
                    subst.generics.insert(*g, a);
                }
                let ty = subst.ty(&sig.agent_ty());
                Callee::Mono(self.lattice().normalize(&ty))
            }
            Callee::Mono(ty) => {
                if !ty.is_never() {
                    self.error(Code::K3011, ctx.file, span, format!("`{}` is not generic and takes no type arguments", self.render(&ty)));
                }
                Callee::Mono(Ty::never())
            }
        }
    }

    /// `e.f` (§9.5).
    fn field(&mut self, ctx: &mut Ctx, span: Span, target: &Ty, field: &ast::Ident) -> Ty {
        if target.is_never() {
            return Ty::never();
        }
        let mut results = Vec::new();
        for m in target.members() {
            let member = m.clone().with_attr(m.attr.join(target.attr));
            let read = match &member.kind {
                TyKind::Object { fields, rest } => match fields.iter().find(|f| f.name == field.text) {
                    Some(f) if f.optional => self.join(&f.ty, &Ty::null()),
                    Some(f) => f.ty.clone(),
                    None => match rest {
                        Rest::Closed => Ty::null(),
                        Rest::Open => Ty::unknown(),
                        Rest::Of(t) => self.join(t, &Ty::null()),
                    },
                },
                TyKind::Data { id, args } => match self.data_fields(*id, args).into_iter().find(|f| f.name == field.text) {
                    Some(f) => f.ty,
                    None => Ty::unknown(),
                },
                _ => {
                    let what = if matches!(member.kind, TyKind::Null) { "a value that may be null" } else { "a value that is not an object" };
                    self.error(Code::K3014, ctx.file, span, format!("cannot read the field `{}` of {what} (`{}`)", field.text, self.render(target)))
                        .set_help(if matches!(member.kind, TyKind::Null) {
                            "match on the value first: `case null -> …` then `case v -> v.field`"
                        } else {
                            "fields exist only on records and data values"
                        });
                    return Ty::never();
                }
            };
            // Reading through a private container is private (§7.7 rule 1).
            let attr = read.attr.join(member.attr);
            results.push(read.with_attr(attr));
        }
        self.lattice().join_all(&results)
    }

    // -----------------------------------------------------------------------------------
    // Calls
    // -----------------------------------------------------------------------------------

    /// A call `callee(args)`, with an extra argument (a `use` continuation) when given.
    pub(crate) fn call(&mut self, ctx: &mut Ctx, span: Span, callee: &Expr, args: &[ast::Arg], extra: Option<(&str, Ty)>) -> Ty {
        let callee_ty = self.callee(ctx, callee);
        let mut given: Vec<(String, Option<Ty>, Span)> = Vec::new();
        for a in args {
            let ty = a.value.as_ref().map(|v| self.expr(ctx, v));
            given.push((a.label.text.clone(), ty, a.span));
        }
        if let Some((label, ty)) = extra {
            given.push((label.to_string(), Some(ty), span));
        }
        self.apply(ctx, span, callee_ty, &given)
    }

    /// Applies a callee to argument types; `None` marks a hole (partial application).
    pub(crate) fn apply(&mut self, ctx: &mut Ctx, span: Span, callee: Callee, given: &[(String, Option<Ty>, Span)]) -> Ty {
        let (sig_params, ret, row, generics, name) = match callee {
            Callee::Poly { sig, name } => (sig.params.clone(), sig.ret.clone(), sig.row.clone(), sig.generics.clone(), Some(name)),
            Callee::Mono(ty) => {
                if ty.is_never() {
                    return Ty::never();
                }
                let agents: Vec<&AgentTy> = ty
                    .members()
                    .iter()
                    .filter_map(|m| match &m.kind {
                        TyKind::Agent(a) => Some(&**a),
                        _ => None,
                    })
                    .collect();
                if agents.len() != ty.members().len() || agents.is_empty() {
                    self.error(Code::K3014, ctx.file, span, format!("`{}` is not an agent and cannot be called", self.render(&ty)))
                        .set_help(if ty.members().iter().any(|m| matches!(m.kind, TyKind::Null)) { "the value may be null: match on it first" } else { "only agents, requests and constructors can be called" });
                    return Ty::never();
                }
                let a = agents[0];
                let params = match &a.param.kind {
                    TyKind::Object { fields, .. } => {
                        fields.iter().map(|f| ParamSig { name: f.name.clone(), ty: f.ty.clone(), optional: f.optional, default: None, doc: None }).collect()
                    }
                    _ => {
                        // `agent never -> …` and other non-object parameters: only a matching
                        // whole argument record would do, and none can be written.
                        if !a.param.is_unknown() {
                            self.error(Code::K3001, ctx.file, span, format!("no argument record fits the parameter type `{}`", self.render(&a.param)))
                                .set_help("call it through `reflection.call_agent(target = …, args = …)`");
                            return a.ret.clone();
                        }
                        Vec::new()
                    }
                };
                (params, a.ret.clone(), a.row.clone(), Vec::new(), None)
            }
        };
        // Labels: duplicates are the resolver's K2003; holes must name parameters (K3020).
        let mut holes = Vec::new();
        for (label, ty, s) in given {
            if ty.is_none() {
                if !sig_params.iter().any(|p| &p.name == label) {
                    self.error(Code::K3020, ctx.file, *s, format!("the hole `{label} = _` names no parameter of this agent"))
                        .set_help(format!("the parameters are: {}", sig_params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")));
                }
                holes.push(label.clone());
            }
        }
        let partial = !holes.is_empty();
        // Instantiate generics and collect bounds from the supplied arguments.
        let instance = self.instantiate(&generics);
        let params: Vec<ParamSig> = sig_params.iter().map(|p| ParamSig { ty: instance.to_infer.ty(&p.ty), ..p.clone() }).collect();
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
        if let Some(g) = solution.unsolved.first() {
            let gname = self.generic_name(*g);
            let what = name.clone().unwrap_or_else(|| "this agent".to_string());
            self.error(Code::K3016, ctx.file, span, format!("cannot infer the type argument `{gname}` of `{what}`"))
                .set_help(format!("give it explicitly: `{what}[…](…)`"));
        }
        let mut subst = solution.subst.clone();
        for (g, v, _) in &instance.vars {
            if let Some(a) = solution.subst.generics.get(g) {
                subst.infers.insert(*v, a.clone());
            }
        }
        // Check the arguments against the solved parameter types.
        let pure_callee = self.out_row_is_pure(&row);
        let mut lifted = Attr::Public;
        for p in &params {
            let expected = self.lattice().normalize(&subst.ty(&p.ty));
            match given.iter().find(|(l, _, _)| l == &p.name) {
                Some((_, Some(ty), s)) => {
                    if !self.sub_shape(ty, &expected) {
                        self.mismatch(ctx.file, *s, ty, &expected, &format!("argument `{}` has the wrong type", p.name));
                    } else if !self.sub(ty, &expected) {
                        if pure_callee {
                            lifted = Attr::Private;
                        } else {
                            self.error(Code::K3001, ctx.file, *s, format!("a private value cannot be passed to the public parameter `{}` of an effectful agent", p.name))
                                .set_help("secrets may only go where the parameter type says `of private`");
                        }
                    }
                }
                Some((_, None, _)) => {}
                None => {
                    if !p.optional && !partial_covers(&holes, &p.name) {
                        let shown = self.render(&expected);
                        self.error(Code::K3001, ctx.file, span, format!("missing argument `{}`", p.name))
                            .set_label(format!("`{}: {shown}` is required", p.name));
                    }
                }
            }
        }
        // Bounds of solved generics (K3001).
        let solved: Vec<GenArg> = generics.iter().filter_map(|g| solution.subst.generics.get(g).cloned()).collect();
        if solution.unsolved.is_empty() && solved.len() == generics.len() {
            self.check_bounds(ctx.file, span, &generics, &solved);
        }
        let ret = self.lattice().normalize(&subst.ty(&ret));
        let row = subst.row(&row);
        if partial {
            let residual: Vec<Field> = params
                .iter()
                .filter(|p| holes.contains(&p.name))
                .map(|p| Field { name: p.name.clone(), ty: self.lattice().normalize(&subst.ty(&p.ty)), optional: p.optional })
                .collect();
            return Ty::agent(Ty::object(residual, Rest::Open), ret, row);
        }
        self.perform(ctx, &row);
        ret.clone().with_attr(ret.attr.join(lifted))
    }

    fn out_row_is_pure(&self, row: &Row) -> bool {
        row.is_pure()
    }

    fn operator_call(&mut self, ctx: &mut Ctx, span: Span, name: &str, args: &[(&str, Ty, Span)]) -> Ty {
        let Some(r) = self.prelude_value("prelude", name) else { return Ty::never() };
        let Some(sig) = self.out.signatures.get(&r).cloned() else { return Ty::never() };
        let callee = if sig.generics.is_empty() { Callee::Mono(sig.agent_ty()) } else { Callee::Poly { sig, name: format!("prelude.{name}") } };
        let given: Vec<(String, Option<Ty>, Span)> = args.iter().map(|(l, t, s)| (l.to_string(), Some(t.clone()), *s)).collect();
        self.apply(ctx, span, callee, &given)
    }

    fn binary(&mut self, ctx: &mut Ctx, span: Span, op: BinOp, left: &Expr, right: &Expr) -> Ty {
        let l = self.expr(ctx, left);
        let r = self.expr(ctx, right);
        if matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge) {
            let numeric = |t: &Ty| !t.is_never() && self.sub_shape(t, &Ty::number());
            let stringy = |t: &Ty| !t.is_never() && self.sub_shape(t, &Ty::string());
            if (numeric(&l) && stringy(&r)) || (stringy(&l) && numeric(&r)) {
                self.error(Code::K3001, ctx.file, span, format!("cannot compare `{}` with `{}`", self.render(&l), self.render(&r)))
                    .set_label("a number compared with a string")
                    .set_help("convert one side: `string.to_number(value = …)` or `string.to_string(value = …)`");
                return Ty::boolean();
            }
        }
        self.operator_call(ctx, span, op.prelude_name(), &[("left", l, left.span), ("right", r, right.span)])
    }

    // -----------------------------------------------------------------------------------
    // Control flow
    // -----------------------------------------------------------------------------------

    fn for_expr(&mut self, ctx: &mut Ctx, span: Span, f: &ast::ForExpr) -> Ty {
        let source = self.expr(ctx, &f.source);
        let elem = self.element_type(ctx, f.source.span, &source);
        let vars = self.var_bindings(ctx, &f.vars);
        self.bind_pattern(ctx, &f.pattern, &elem, true);
        ctx.targets.push(Target { span, nexts: Vec::new(), breaks: Vec::new(), resume: None, vars });
        let fall = self.block(ctx, &f.body);
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
        if source.is_never() {
            return Ty::never();
        }
        let mut elems = Vec::new();
        for m in source.members() {
            match &m.kind {
                TyKind::Seq { prefix, rest } => {
                    elems.extend(prefix.iter().cloned());
                    if let Some(r) = rest {
                        elems.push((**r).clone());
                    }
                }
                _ => {
                    self.error(Code::K3014, ctx.file, span, format!("cannot iterate over `{}`", self.render(source)))
                        .set_help("`for` takes an array or tuple; iterate a record with `record.entries(target = …)`");
                    return Ty::never();
                }
            }
        }
        let joined = self.lattice().join_all(&elems);
        joined.clone().with_attr(joined.attr.join(source.attr))
    }

    fn var_bindings(&mut self, ctx: &mut Ctx, vars: &[ast::VarBinding]) -> HashMap<String, Ty> {
        let scope = self.ty_scope(ctx);
        let mut out = HashMap::new();
        for v in vars {
            let init = self.expr(ctx, &v.init);
            let ty = match &v.ty {
                Some(t) => {
                    let declared = self.lower_ty(&scope, t);
                    if !self.sub_shape(&init, &declared) {
                        self.mismatch(ctx.file, v.init.span, &init, &declared, "the initial value does not fit the `var`'s type");
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

    fn match_expr(&mut self, ctx: &mut Ctx, span: Span, subject: &Expr, arms: &[ast::Arm]) -> Ty {
        let subject_ty = self.expr(ctx, subject);
        let mut residual = subject_ty.clone();
        let mut seen_true = false;
        let mut seen_false = false;
        let mut result = Ty::never();
        for arm in arms {
            self.bind_pattern(ctx, &arm.pattern, &residual, false);
            let body = self.expr(ctx, &arm.body);
            result = self.join_reporting(ctx.file, arm.span, &result, &body);
            match &arm.pattern.kind {
                ast::PatternKind::Lit(LitKind::Bool(true)) => seen_true = true,
                ast::PatternKind::Lit(LitKind::Bool(false)) => seen_false = true,
                _ => {}
            }
            residual = self.subtract(ctx, &residual, &arm.pattern);
            if seen_true && seen_false {
                let kept: Vec<Ty> = residual.members().iter().filter(|m| !matches!(m.kind, TyKind::Boolean)).cloned().collect();
                residual = self.lattice().join_all(&kept);
            }
        }
        if !residual.is_never() && !subject_ty.is_never() {
            let shown = self.render(&residual);
            let _ = span;
            self.error(Code::K3001, ctx.file, subject.span, format!("non-exhaustive match: `{shown}` is not covered"))
                .set_label(format!("`{shown}` has no arm"))
                .set_help("add an arm for the remaining cases, or a final `case _ -> …`");
        }
        result
    }

    // -----------------------------------------------------------------------------------
    // Handlers and `use`
    // -----------------------------------------------------------------------------------

    fn use_stmt(&mut self, ctx: &mut Ctx, span: Span, binder: Option<&ast::Pattern>, provider: &Expr, rest: &[ast::Item]) -> Ty {
        // The continuation's parameter type, from the binder's annotation (K3013 without one).
        let value_ty = match binder {
            Some(p) => {
                if !pattern_annotated(p) {
                    self.error(Code::K3013, ctx.file, p.span, "the binder of `let … = use` needs a type annotation")
                        .set_help("write `let x: <type> = use …`");
                    Ty::unknown()
                } else {
                    self.pattern_annotation(ctx, p)
                }
            }
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
        // The rest of the block is the continuation: its effects flow into the provider.
        let saved = std::mem::take(&mut ctx.effects);
        if let Some(p) = binder {
            self.bind_pattern(ctx, p, &value_ty, true);
        }
        let rest_ty = self.items(ctx, rest);
        let k_row = std::mem::replace(&mut ctx.effects, saved);
        let k = Ty::agent(Ty::object(vec![Field { name: "value".into(), ty: value_ty, optional: false }], Rest::Open), rest_ty, k_row);
        match &provider.kind {
            ExprKind::Call { callee, args } => {
                if let Some(a) = args.iter().find(|a| a.label.text == "continuation") {
                    self.error(Code::K3019, ctx.file, a.span, "a `use` provider call must not pass `continuation` itself").set_help("the rest of the block is passed as `continuation`");
                }
                if let Some(a) = args.iter().find(|a| a.value.is_none()) {
                    self.error(Code::K3019, ctx.file, a.span, "a `use` provider call cannot contain holes");
                }
                self.call(ctx, provider.span, callee, args, Some(("continuation", k)))
            }
            ExprKind::Name(_) | ExprKind::TypeApply { .. } => {
                let callee = self.callee(ctx, provider);
                self.apply(ctx, provider.span, callee, &[("continuation".to_string(), Some(k), provider.span)])
            }
            ExprKind::Field { target, .. } if matches!(&target.kind, ExprKind::Name(q) if matches!(self.program.names.get(ctx.file, q.span), Some(Resolution::Module(_)))) => {
                let callee = self.callee(ctx, provider);
                self.apply(ctx, provider.span, callee, &[("continuation".to_string(), Some(k), provider.span)])
            }
            ExprKind::Handler(h) => {
                let args = h.type_args.clone().unwrap_or_default();
                let ty = self.handler_value(ctx, provider.span, h, &args);
                self.apply(ctx, provider.span, Callee::Mono(ty), &[("continuation".to_string(), Some(k), provider.span)])
            }
            _ => {
                self.error(Code::K3019, ctx.file, provider.span, "this cannot be a `use` provider")
                    .set_help("a provider is a handler, a (qualified) name, an explicit instantiation `p[T]`, or a call `p(…)`");
                Ty::never()
            }
        }
    }

    /// `use handler { … } [then …]` followed by the rest of the block.
    fn use_handler(&mut self, ctx: &mut Ctx, span: Span, h: &ast::HandlerExpr, rest: &[ast::Item]) -> Ty {
        let vars = self.var_bindings(ctx, &h.vars);
        // The handled computation: the rest of the block, with its own effects.
        let saved = std::mem::take(&mut ctx.effects);
        let body_ty = self.items(ctx, rest);
        let body_row = std::mem::replace(&mut ctx.effects, saved);
        let (remaining, breaks) = self.clauses(ctx, h, &vars, &body_row);
        self.perform(ctx, &remaining);
        let mut result = match &h.then {
            Some(then) => self.then_block(ctx, then, &body_ty),
            None => body_ty,
        };
        for b in &breaks {
            result = self.join_reporting(ctx.file, span, &result, b);
        }
        result
    }

    fn then_block(&mut self, ctx: &mut Ctx, then: &ast::ThenClause, value: &Ty) -> Ty {
        if let Some(p) = &then.pattern {
            self.bind_pattern(ctx, p, value, true);
        }
        ctx.then_depth += 1;
        let saved_targets = std::mem::take(&mut ctx.targets);
        let ty = self.block(ctx, &then.body);
        ctx.targets = saved_targets;
        ctx.then_depth -= 1;
        ty
    }

    /// Checks the clauses of a handler against the handled computation's row; gives what
    /// remains unhandled and the `break` values.
    fn clauses(&mut self, ctx: &mut Ctx, h: &ast::HandlerExpr, vars: &HashMap<String, Ty>, body_row: &Row) -> (Row, Vec<Ty>) {
        let mut remaining = body_row.clone();
        let mut breaks = Vec::new();
        for clause in &h.clauses {
            let resolution = self.program.names.get(ctx.file, clause.name.span);
            let (request, params, resume) = match resolution {
                Some(Resolution::AmbientPanic) => (None, vec![ParamSig { name: "msg".into(), ty: Ty::string(), optional: false, default: None, doc: None }], Ty::never()),
                Some(Resolution::Global(r)) if matches!(self.out.decls.get(&r), Some(DeclInfo::Request { .. })) => {
                    let Some(sig) = self.out.signatures.get(&r).cloned() else { continue };
                    let (params, resume, args) = self.instantiate_clause(ctx, clause, &sig);
                    // The body's entry must fit the clause's instantiation (K3001 otherwise).
                    if let Some(body_args) = body_row.entries.get(&r) {
                        let body_entry = Row::single(r, body_args.clone());
                        let clause_entry = Row::single(r, args.clone());
                        if !self.lattice().row_sub(&body_entry, &clause_entry) {
                            let (found, handled) = (self.render_row(&body_entry), self.render_row(&clause_entry));
                            self.error(Code::K3001, ctx.file, clause.span, format!("this clause handles `{handled}`, but the handled code performs `{found}`"))
                                .set_help("handle the whole payload (and re-raise what you do not want), or none of it");
                        }
                    }
                    remaining = remaining.without(r);
                    (Some(r), params, resume)
                }
                Some(Resolution::Global(r)) => {
                    let name = self.qualified_name(r);
                    self.error(Code::K3017, ctx.file, clause.name.span, format!("`{name}` is not a request, so no clause can handle it"));
                    continue;
                }
                _ => continue,
            };
            let _ = request;
            // Clause parameters: listed labels must exist, annotations may only widen.
            for p in &clause.params {
                let Some(declared) = params.iter().find(|d| d.name == p.name.text) else {
                    self.error(Code::K3001, ctx.file, p.name.span, format!("the request has no parameter `{}`", p.name.text));
                    continue;
                };
                match &p.kind {
                    ast::ParamKind::Plain { ty, default } => {
                        if let Some(d) = default {
                            self.error(Code::K3001, ctx.file, d.span, "a clause parameter cannot have a default").set_help("the request's own defaults are applied before the clause runs");
                        }
                        let bound = match ty {
                            Some(t) => {
                                let scope = self.ty_scope(ctx);
                                let written = self.lower_ty(&scope, t);
                                if !self.sub_shape(&declared.ty, &written) {
                                    self.mismatch(ctx.file, t.span, &declared.ty, &written, "a clause annotation may widen the declared type, never narrow it");
                                }
                                written
                            }
                            None => declared.ty.clone(),
                        };
                        self.bind_local(ctx.file, p.name.span, bound);
                    }
                    ast::ParamKind::Destructure(pattern) => self.bind_pattern(ctx, pattern, &declared.ty, true),
                }
            }
            for (name, ty) in vars {
                // `var`s are visible in clauses under their binding ids; rebinding is by name.
                let _ = (name, ty);
            }
            ctx.targets.push(Target { span: clause.span, nexts: Vec::new(), breaks: Vec::new(), resume: Some(resume.clone()), vars: vars.clone() });
            let value = self.block(ctx, &clause.body);
            let target = ctx.targets.pop();
            if let Some(t) = target {
                breaks.extend(t.breaks);
            }
            if !self.sub_shape(&value, &resume) {
                let span = clause.body.items.last().map(|i| i.span).unwrap_or(clause.body.span);
                let label = if resume.is_never() { "this clause must end with `break` (the request cannot resume)" } else { "falling off the end resumes with this value" };
                self.mismatch(ctx.file, span, &value, &resume, label);
            }
        }
        (remaining, breaks)
    }

    /// The instantiation a clause handles: from explicit type arguments or its annotations.
    fn instantiate_clause(&mut self, ctx: &mut Ctx, clause: &ast::Clause, sig: &AgentSig) -> (Vec<ParamSig>, Ty, Vec<GenArg>) {
        let scope = self.ty_scope(ctx);
        let mut subst = Subst::default();
        if !sig.generics.is_empty() {
            match &clause.type_args {
                Some(args) => {
                    if args.len() != sig.generics.len() {
                        self.error(Code::K3009, ctx.file, clause.name.span, format!("the request takes {} type arguments, found {}", sig.generics.len(), args.len()));
                    }
                    for (g, a) in sig.generics.iter().zip(args) {
                        let ty = self.lower_ty(&scope, a);
                        subst.generics.insert(*g, GenArg::Type(ty));
                    }
                }
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
                    if !solution.unsolved.is_empty() {
                        self.error(Code::K3016, ctx.file, clause.name.span, "cannot tell which instantiation of the request this clause handles")
                            .set_help("annotate the clause's parameters, e.g. `request prelude.throw(error: my_error) -> never { … }`");
                    }
                    subst = solution.subst;
                }
            }
        }
        let params = sig.params.iter().map(|p| ParamSig { ty: subst.ty(&p.ty), ..p.clone() }).collect();
        let ret = subst.ty(&sig.ret);
        let args = sig.generics.iter().map(|g| subst.generics.get(g).cloned().unwrap_or(GenArg::Type(Ty::unknown()))).collect();
        if let Some(written) = &clause.ret {
            let written = self.lower_ty(&scope, written);
            if !self.lattice().equivalent(&written, &ret) {
                self.mismatch(ctx.file, clause.span, &written, &ret, "a clause's `-> T` must equal the request's return type");
            }
        }
        (params, ret, args)
    }

    /// `handler[R, E] { … }` as a value: an agent taking the continuation.
    fn handler_value(&mut self, ctx: &mut Ctx, span: Span, h: &ast::HandlerExpr, args: &[ast::Type]) -> Ty {
        let scope = self.ty_scope(ctx);
        if args.len() != 2 {
            self.error(Code::K3009, ctx.file, span, format!("a handler takes 2 type arguments (`handler[R, E]`), found {}", args.len()));
            return Ty::never();
        }
        let r = self.lower_ty(&scope, &args[0]);
        let e = self.lower_row(&scope, &args[1]);
        let vars = self.var_bindings(ctx, &h.vars);
        // The continuation may perform the handled requests on top of `E`.
        let mut handled = e.clone();
        for clause in &h.clauses {
            if let Some(Resolution::Global(req)) = self.program.names.get(ctx.file, clause.name.span)
                && let Some(sig) = self.out.signatures.get(&req).cloned()
            {
                let (_, _, args) = self.instantiate_clause(ctx, clause, &sig);
                handled = handled.without(req);
                handled.entries.insert(req, args);
            }
        }
        let saved = std::mem::take(&mut ctx.effects);
        let (_, breaks) = self.clauses(ctx, h, &vars, &handled);
        let mut result = match &h.then {
            Some(then) => self.then_block(ctx, then, &r),
            None => r.clone(),
        };
        for b in &breaks {
            result = self.join(&result, b);
        }
        let clause_row = std::mem::replace(&mut ctx.effects, saved);
        let row = self.lattice().join_row(&e, &clause_row);
        let k = Ty::agent(Ty::object(vec![Field { name: "value".into(), ty: Ty::null(), optional: false }], Rest::Open), r, handled);
        Ty::agent(Ty::object(vec![Field { name: "continuation".into(), ty: k, optional: false }], Rest::Open), result, row)
    }
}

fn partial_covers(holes: &[String], name: &str) -> bool {
    holes.iter().any(|h| h == name)
}

pub(crate) fn literal_ty(lit: &LitKind) -> Ty {
    super::decls::literal_type(lit)
}

/// Whether a `use` binder carries the annotations its type is read from.
fn pattern_annotated(p: &ast::Pattern) -> bool {
    match &p.kind {
        ast::PatternKind::Bind { ty, .. } | ast::PatternKind::Wildcard(ty) => ty.is_some(),
        ast::PatternKind::Tuple(items) => items.iter().all(pattern_annotated),
        ast::PatternKind::Record(fields) => fields.iter().all(|f| f.pattern.as_ref().is_some_and(pattern_annotated)),
        ast::PatternKind::Filter { .. } => true,
        _ => false,
    }
}

/// Whether a block mentions a local (for recursive local agents).
fn block_mentions(checker: &Checker<'_>, file: FileId, block: &ast::Block, id: LocalId) -> bool {
    let mut found = false;
    let mut visit = |ident_span: Span| {
        if checker.program.names.get(file, ident_span) == Some(Resolution::Local(id)) {
            found = true;
        }
    };
    walk_block_names(block, &mut visit);
    found
}

fn walk_block_names(block: &ast::Block, f: &mut dyn FnMut(Span)) {
    for item in &block.items {
        match &item.kind {
            ItemKind::Let { value, .. } => walk_expr_names(value, f),
            ItemKind::Use { provider, .. } => walk_expr_names(provider, f),
            ItemKind::Agent(d) => walk_block_names(&d.body, f),
            ItemKind::Return(e) | ItemKind::Break(e) => {
                if let Some(e) = e {
                    walk_expr_names(e, f)
                }
            }
            ItemKind::Next { value, updates } => {
                if let Some(e) = value {
                    walk_expr_names(e, f);
                }
                for m in updates.iter().flatten() {
                    walk_expr_names(&m.value, f);
                }
            }
            ItemKind::Expr(e) => walk_expr_names(e, f),
        }
    }
}

fn walk_expr_names(e: &Expr, f: &mut dyn FnMut(Span)) {
    match &e.kind {
        ExprKind::Name(n) => f(n.span),
        ExprKind::Template(parts) => parts.iter().for_each(|p| {
            if let ast::TemplatePart::Interp(e) = p {
                walk_expr_names(e, f)
            }
        }),
        ExprKind::Field { target, .. } => walk_expr_names(target, f),
        ExprKind::Call { callee, args } => {
            walk_expr_names(callee, f);
            args.iter().filter_map(|a| a.value.as_ref()).for_each(|v| walk_expr_names(v, f));
        }
        ExprKind::TypeApply { callee, .. } => walk_expr_names(callee, f),
        ExprKind::Binary { left, right, .. } => {
            walk_expr_names(left, f);
            walk_expr_names(right, f);
        }
        ExprKind::Unary { operand, .. } => walk_expr_names(operand, f),
        ExprKind::If { cond, then, otherwise } => {
            walk_expr_names(cond, f);
            walk_block_names(then, f);
            if let Some(o) = otherwise {
                walk_expr_names(o, f);
            }
        }
        ExprKind::Match { subject, arms } => {
            walk_expr_names(subject, f);
            arms.iter().for_each(|a| walk_expr_names(&a.body, f));
        }
        ExprKind::For(fe) => {
            walk_expr_names(&fe.source, f);
            fe.vars.iter().for_each(|v| walk_expr_names(&v.init, f));
            walk_block_names(&fe.body, f);
            if let Some(t) = &fe.then {
                walk_block_names(&t.body, f);
            }
        }
        ExprKind::ParallelTuple(items) | ExprKind::Tuple(items) => items.iter().for_each(|i| walk_expr_names(i, f)),
        ExprKind::Handler(h) => {
            h.vars.iter().for_each(|v| walk_expr_names(&v.init, f));
            h.clauses.iter().for_each(|c| walk_block_names(&c.body, f));
            if let Some(t) = &h.then {
                walk_block_names(&t.body, f);
            }
        }
        ExprKind::Agent(a) => walk_block_names(&a.body, f),
        ExprKind::Record(entries) => entries.iter().for_each(|en| walk_expr_names(&en.value, f)),
        ExprKind::Block(b) => walk_block_names(b, f),
        ExprKind::Lit(_) | ExprKind::Error => {}
    }
}
