//! Agent bodies (`language.md` §6.1, §6.2, §9.14): the context an agent body is checked in,
//! top-level agents checked on demand, recursive groups (K3013), local and anonymous agents, and
//! the written return type and row every body must fit (K3001).

use std::collections::HashMap;

use super::decls::{AgentSig, DeclInfo, ParamSig};
use super::lower::TyScope;
use super::{AgentState, Checker};
use crate::ast;
use crate::diag::{Code, Label};
use crate::load::ModuleId;
use crate::resolve::{DeclRef, LocalId, Resolution};
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

/// A `return`, `next` or `break` seen in the body, for the checks of `use` continuations.
#[derive(Clone, Copy)]
pub(crate) struct Escape {
    pub span: Span,
    /// The index of the targeted `for` or clause in [`Ctx::targets`]; `None` for `return`.
    pub target: Option<usize>,
    pub keyword: &'static str,
}

/// The context of one agent body (top-level, local or anonymous).
pub(crate) struct Ctx {
    pub module: ModuleId,
    pub file: FileId,
    /// Effects performed so far by the computation being checked.
    pub effects: Row,
    /// Every effectful operation with its span, for pointing at the one that breaks a written row.
    pub performed: Vec<(Row, Span)>,
    /// Values given to `return`, and the written return type if any.
    pub returns: Vec<Ty>,
    pub ret: Option<Ty>,
    pub targets: Vec<Target>,
    /// The handler `then` blocks being checked: the number of targets outside each, and its span.
    /// A jump to a target below the innermost count leaves the `then` (K3012).
    pub thens: Vec<(usize, Span)>,
    /// Every jump checked so far, in order.
    pub escapes: Vec<Escape>,
    /// The body of a private agent (§7.7 rule 5): values may become private freely.
    pub private: bool,
}

/// What a declaration wrote about its result: the lowered annotations with their spans.
pub(crate) struct Written {
    pub ret: Option<(Ty, Span)>,
    pub row: Option<(Row, Span)>,
}

impl Checker<'_> {
    pub(crate) fn ctx(&self, module: ModuleId) -> Ctx {
        Ctx {
            module,
            file: self.file_of(module),
            effects: Row::pure(),
            performed: Vec::new(),
            returns: Vec::new(),
            ret: None,
            targets: Vec::new(),
            thens: Vec::new(),
            escapes: Vec::new(),
            private: false,
        }
    }

    pub(crate) fn ty_scope(&self, ctx: &Ctx) -> TyScope {
        TyScope {
            file: ctx.file,
            subst: HashMap::new(),
        }
    }

    /// Adds an operation's effects to the body's row. A request whose invariant argument is
    /// instantiated differently than in the row so far cannot join it (K3005, at this operation);
    /// the row keeps the earlier instantiation, so the mistake is reported once.
    pub(crate) fn perform(&mut self, ctx: &mut Ctx, row: &Row, span: Span) {
        if row.is_pure() {
            return;
        }
        let mut lat = self.lattice();
        let joined = lat.join_row(&ctx.effects, row);
        if !lat.join_conflicts.is_empty()
            && let Some((req, culprit)) = self.row_join_conflict(&ctx.effects, row)
        {
            let earlier = ctx
                .performed
                .iter()
                .find(|(r, _)| r.entries.contains_key(&req))
                .map(|(_, s)| *s);
            let label = format!("this performs `{}`", self.render_row(row));
            self.row_conflict(
                ctx.file,
                (span, label),
                earlier,
                (req, culprit),
                &ctx.effects,
                row,
            );
        }
        ctx.effects = joined;
        ctx.performed.push((row.clone(), span));
    }

    /// The join of two rows, with K3005 at `span` (labelled `label`) when they hold
    /// instantiations of a request that cannot be joined (the left side's entry is kept).
    pub(crate) fn join_rows_reporting(
        &mut self,
        file: FileId,
        (span, label): (Span, &str),
        a: &Row,
        b: &Row,
    ) -> Row {
        let mut lat = self.lattice();
        let joined = lat.join_row(a, b);
        if !lat.join_conflicts.is_empty()
            && let Some(conflict) = self.row_join_conflict(a, b)
        {
            self.row_conflict(file, (span, label.to_string()), None, conflict, a, b);
        }
        joined
    }

    /// The first request whose entries in `a` and `b` cannot be joined, with the declaration
    /// whose invariant argument is the reason (the request itself, or a data type in its
    /// arguments). A row written in a data field or a synonym is lowered before the variances of
    /// requests are known: such a request gives no verdict (its join keeps the left entry).
    fn row_join_conflict(&self, a: &Row, b: &Row) -> Option<(DeclRef, DeclRef)> {
        b.entries.iter().find_map(|(req, args)| {
            let known = match self.out.decls.get(req) {
                Some(DeclInfo::Request {
                    generics,
                    variances,
                }) => generics.len() == variances.len(),
                _ => false,
            };
            let existing = a.entries.get(req).filter(|_| known)?;
            let mut lat = self.lattice();
            lat.join_row(
                &Row::single(*req, existing.clone()),
                &Row::single(*req, args.clone()),
            );
            lat.join_conflicts.first().map(|culprit| (*req, *culprit))
        })
    }

    /// K3005 for the request `req`, whose entries in `first` and `second` cannot be joined
    /// because of `culprit`'s invariant argument (`language.md` §7.3, §7.5). `earlier` is where
    /// the first instantiation was performed.
    fn row_conflict(
        &mut self,
        file: FileId,
        (span, label): (Span, String),
        earlier: Option<Span>,
        (req, culprit): (DeclRef, DeclRef),
        first: &Row,
        second: &Row,
    ) {
        let entry =
            |row: &Row| Row::single(req, row.entries.get(&req).cloned().unwrap_or_default());
        let (a, b) = (
            self.render_row(&entry(first)),
            self.render_row(&entry(second)),
        );
        let name = self.display_name(req);
        let help = if culprit == req {
            // The generic whose instantiations differ, for the explanation.
            let generics = match self.out.decls.get(&req) {
                Some(DeclInfo::Request { generics, .. }) => generics.clone(),
                _ => Vec::new(),
            };
            let variances = self.variances(req);
            let position = match (first.entries.get(&req), second.entries.get(&req)) {
                (Some(x), Some(y)) => (0..x.len().min(y.len())).find(|&i| {
                    variances.get(i).copied().unwrap_or(Variance::Invariant) == Variance::Invariant
                        && x[i] != y[i]
                }),
                _ => None,
            };
            let generic = position
                .and_then(|i| generics.get(i))
                .map(|g| format!(" in `{}`", self.generic_name(*g)))
                .unwrap_or_default();
            format!(
                "`{name}` is invariant{generic} (it occurs in both its parameters and its result), so a row holds one instantiation of it: handle each in its own `use`, or perform both with the same one"
            )
        } else {
            let data = self.display_name(culprit);
            format!(
                "`{data}` is invariant in its argument, so these instantiations of `{name}` have no join: handle each in its own `use`, or perform both with the same one"
            )
        };
        let d = self
            .error(
                Code::K3005,
                file,
                span,
                format!("`{a}` and `{b}` cannot be joined in one effect row"),
            )
            .set_label(label)
            .set_help(help);
        if let Some(earlier) = earlier {
            d.secondary.push(Label {
                file,
                span: earlier,
                message: format!("this performs `{a}`"),
            });
        }
    }

    pub(crate) fn mismatch(
        &mut self,
        file: FileId,
        span: Span,
        found: &Ty,
        expected: &Ty,
        label: &str,
    ) {
        let (f, e) = (self.render(found), self.render(expected));
        self.error(
            Code::K3001,
            file,
            span,
            format!("expected `{e}`, found `{f}`"),
        )
        .set_label(label.to_string());
    }

    /// Lowers a written return type and row. An annotation that failed to lower (already
    /// reported) counts as not written, so the body's own type or row is used instead.
    pub(crate) fn written(
        &mut self,
        scope: &TyScope,
        ret: Option<&ast::Type>,
        row: Option<&ast::Type>,
    ) -> Written {
        let ret = ret.and_then(|t| {
            let before = self.lower_failures;
            let ty = self.lower_ty(scope, t);
            (self.lower_failures == before).then_some((ty, t.span))
        });
        let row = row.and_then(|t| {
            let before = self.lower_failures;
            let lowered = self.lower_row(scope, t);
            (self.lower_failures == before).then_some((lowered, t.span))
        });
        Written { ret, row }
    }

    // -----------------------------------------------------------------------------------
    // Top-level agents and recursion
    // -----------------------------------------------------------------------------------

    /// The signature of a top-level agent, checking its body first if it was not yet checked.
    /// `None` while the body is being checked (a reference back into it is recursion).
    pub(crate) fn ensure_agent(&mut self, r: DeclRef) -> Option<AgentSig> {
        match self.agent_state.get(&r).copied() {
            Some(AgentState::Done) => return self.out.signatures.get(&r).cloned(),
            Some(AgentState::InProgress) => return None,
            None => {}
        }
        let Some(ast::Decl::Agent(decl)) = self.program.decl(r) else {
            return None;
        };
        self.agent_state.insert(r, AgentState::InProgress);
        self.agent_stack.push(r);
        let outer_module = self.current.replace(Some(r.module));
        let mut ctx = self.ctx(r.module);
        ctx.private = decl.private;
        let generics = self.generic_ids_of_decl(r);
        let scope = self.ty_scope(&ctx);
        let params = self.binding_params(&mut ctx, &scope, &decl.params, true);
        let written = self.written(&scope, decl.ret.as_ref(), decl.effects.as_ref());
        let doc = decl
            .doc
            .as_ref()
            .map(|d| d.text.clone())
            .unwrap_or_default();
        // A fully annotated agent's signature is known before its body: recursion may use it.
        if let (Some((ret, _)), Some((row, _))) = (&written.ret, &written.row) {
            let ret = if decl.private {
                ret.clone().with_attr(Attr::Private)
            } else {
                ret.clone()
            };
            let sig = AgentSig {
                generics: generics.clone(),
                params: params.clone(),
                ret,
                row: row.clone(),
                doc: doc.clone(),
                private: decl.private,
            };
            self.out.signatures.insert(r, sig);
        }
        // A declaration with a syntax error is not held to its annotations, and what its
        // recovered body gives is no result to infer from: callers see the error type.
        let broken = self.is_broken(r);
        let inferred_ret = written.ret.is_none();
        let (ret, row) = self.agent_body(&mut ctx, &decl.body, written, broken);
        let ret = if broken && inferred_ret {
            Ty::error()
        } else {
            ret
        };
        let sig = AgentSig {
            generics,
            params,
            ret,
            row,
            doc,
            private: decl.private,
        };
        self.out.signatures.insert(r, sig.clone());
        self.agent_state.insert(r, AgentState::Done);
        self.agent_stack.pop();
        self.current.set(outer_module);
        Some(sig)
    }

    /// A reference from the body being checked back to `r`, whose body is in progress: every
    /// agent from `r` to the current one forms a recursive group, and each must write both its
    /// return type and its row (K3013). Gives `r`'s signature when it is known already.
    pub(crate) fn recursive_reference(
        &mut self,
        file: FileId,
        name: &ast::Ident,
        r: DeclRef,
    ) -> Option<AgentSig> {
        let start = self
            .agent_stack
            .iter()
            .rposition(|a| *a == r)
            .unwrap_or(self.agent_stack.len());
        let group: Vec<DeclRef> = self.agent_stack[start..].to_vec();
        for member in group {
            let Some(ast::Decl::Agent(decl)) = self.program.decl(member) else {
                continue;
            };
            if (decl.ret.is_some() && decl.effects.is_some())
                || self.recursion_reported.contains(&member)
            {
                continue;
            }
            self.recursion_reported.insert(member);
            let help = format!(
                "annotate `agent {}(…) -> <type> with <row>` (`with pure` when it performs nothing)",
                decl.name.text
            );
            if member == r {
                self.error(
                    Code::K3013,
                    file,
                    name.span,
                    format!(
                        "`{}` is recursive, so it needs both its return type and its `with` row",
                        decl.name.text
                    ),
                )
                .set_label("recursive call")
                .set_help(help);
            } else {
                let callee = self.display_name(r);
                let member_file = self.file_of(member.module);
                let d = self
                    .error(Code::K3013, member_file, decl.name.span, format!("`{}` is part of a recursive group with `{callee}`, so it needs both its return type and its `with` row", decl.name.text))
                    .set_label("this agent calls back into the group")
                    .set_help(help);
                d.secondary.push(Label {
                    file,
                    span: name.span,
                    message: "the call that closes the cycle".into(),
                });
            }
        }
        self.out.signatures.get(&r).cloned()
    }

    /// Checks an agent body against its written return type and row; gives the final ones.
    pub(crate) fn agent_body(
        &mut self,
        ctx: &mut Ctx,
        body: &ast::Block,
        written: Written,
        broken: bool,
    ) -> (Ty, Row) {
        ctx.ret = written.ret.as_ref().map(|(t, _)| t.clone());
        let value = self.block(ctx, body);
        let mut lat = self.lattice();
        let mut ret = lat.join(&value, &Ty::never());
        for r in &ctx.returns {
            ret = lat.join(&ret, r);
        }
        let ret = match written.ret {
            Some((written, _)) => {
                if !broken && !self.fits(ctx, &value, &written) {
                    let span = body.items.last().map(|i| i.span).unwrap_or(body.span);
                    let label = if self.sub_shape(&value, &written) {
                        "a private value cannot be returned as public"
                    } else {
                        "the body's value does not fit the declared return type"
                    };
                    let from = self.out.diagnostics.len();
                    self.mismatch(ctx.file, span, &value, &written, label);
                    if label.starts_with("a private") {
                        let help = self.privacy_help(
                            &value,
                            &written,
                            "declare the result `of private`, or make the agent `private agent`",
                        );
                        self.last_help(&help);
                        self.explain_private_residuals(ctx.file, span, from, &value);
                    }
                }
                written
            }
            None => ret,
        };
        // A private agent's result is private (§6.2).
        let ret = if ctx.private {
            ret.clone().with_attr(ret.attr.join(Attr::Private))
        } else {
            ret
        };
        let row = match written.row {
            Some((written, span)) => {
                if !broken && !self.lattice().row_sub(&ctx.effects, &written) {
                    self.row_too_narrow(ctx, &written, span);
                }
                written
            }
            None => ctx.effects.clone(),
        };
        (ret, row)
    }

    /// Whether a value fits a declared type, attributes included except in the private world.
    pub(crate) fn fits(&self, ctx: &Ctx, value: &Ty, declared: &Ty) -> bool {
        if ctx.private {
            self.sub_shape(value, declared)
        } else {
            self.sub(value, declared)
        }
    }

    /// Sets the help line of the diagnostic reported last.
    pub(crate) fn last_help(&mut self, help: &str) {
        if let Some(d) = self.out.diagnostics.last_mut() {
            d.set_help(help.to_string());
        }
    }

    /// The help for a private value given the public type `written`: `default`, unless `written`
    /// is already `of private` as a whole, which does not cover a part written public inside it
    /// (§7.7 rule 1 makes reads through it private, but the part's type stays public); then the
    /// type to declare, with the attribute on the parts that are private.
    pub(crate) fn privacy_help(&mut self, found: &Ty, written: &Ty, default: &str) -> String {
        if !written.attr.is_private() {
            return default.to_string();
        }
        let joined = self.lattice().join(written, found);
        format!(
            "`of private` on a whole type does not make the parts written inside it private: \
             declare `{}`",
            self.render(&joined)
        )
    }

    /// K3001 for a body whose effects exceed the written row: points at the first operation that
    /// performs something the row does not allow.
    fn row_too_narrow(&mut self, ctx: &Ctx, written: &Row, row_span: Span) {
        let mut excess = Row::pure();
        for (req, args) in &ctx.effects.entries {
            let entry = Row::single(*req, args.clone());
            if !self.lattice().row_sub(&entry, written) {
                excess.entries.insert(*req, args.clone());
            }
        }
        excess.io = ctx.effects.io && !written.io && !written.all;
        for tail in &ctx.effects.tails {
            let alone = Row {
                tails: vec![tail.clone()],
                ..Row::default()
            };
            if !self.lattice().row_sub(&alone, written) {
                excess.tails.push(tail.clone());
            }
        }
        if excess.is_pure() {
            excess = ctx.effects.clone();
        }
        let culprit = ctx.performed.iter().find(|(row, _)| {
            (excess.io && row.io)
                || row.all
                || row.entries.keys().any(|r| excess.entries.contains_key(r))
                || row
                    .tails
                    .iter()
                    .any(|t| excess.tails.iter().any(|x| x.var == t.var))
        });
        // A row that would allow the body's requests but for privacy: a request's argument type
        // holds a private value (a private throw) where the declared row's type is public. Say
        // so, and suggest the declared row joined with the body's (keeping what it allows), so
        // that the help never repeats the declaration (`{msg: string} of private` does not cover
        // a private field: the attribute must be on the part that is private).
        let privacy_only = {
            let mut lat = self.lattice();
            lat.ignore_attrs = true;
            lat.row_sub(&ctx.effects, written)
        };
        let (shown, declared) = (self.render_row(&excess), self.render_row(written));
        let (message, help, label) = if privacy_only {
            let joined = self.lattice().join_row(written, &ctx.effects);
            let all = self.render_row(&joined);
            let whole_private = written.entries.values().flatten().any(|a| match a {
                GenArg::Type(t) => t.attr.is_private(),
                _ => false,
            });
            (
                format!(
                    "the body performs `{shown}`, whose private parts the declared `with \
                     {declared}` types as public"
                ),
                if whole_private {
                    format!(
                        "`of private` on a whole type does not make the parts written inside it \
                         private: declare `with {all}`"
                    )
                } else {
                    format!(
                        "mark the private part `of private`: declare `with {all}`, or handle the \
                         request inside the agent"
                    )
                },
                "with a private value",
            )
        } else {
            let all = self.render_row(&ctx.effects);
            (
                format!(
                    "the body performs `{shown}`, which the declared `with {declared}` does not allow"
                ),
                format!("declare `with {all}`, or handle the extra requests inside the agent"),
                "",
            )
        };
        match culprit.cloned() {
            Some((row, span)) => {
                let performed = self.render_row(&row);
                let label = if label.is_empty() {
                    format!("this performs `{performed}`")
                } else {
                    format!("this performs `{performed}` {label}")
                };
                let d = self
                    .error(Code::K3001, ctx.file, span, message)
                    .set_label(label)
                    .set_help(help);
                d.secondary.push(Label {
                    file: ctx.file,
                    span: row_span,
                    message: "the declared row".into(),
                });
            }
            None => {
                self.error(Code::K3001, ctx.file, row_span, message)
                    .set_label("the declared row")
                    .set_help(help);
            }
        }
    }

    /// The parameters of an agent or anonymous agent, binding their locals.
    pub(crate) fn binding_params(
        &mut self,
        ctx: &mut Ctx,
        scope: &TyScope,
        params: &[ast::Param],
        require_annotation: bool,
    ) -> Vec<ParamSig> {
        let mut out = Vec::new();
        for p in params {
            let (ty, optional, default) = match &p.kind {
                ast::ParamKind::Plain { ty, default } => {
                    let ty = match ty {
                        Some(t) => self.lower_ty(scope, t),
                        None => {
                            if require_annotation {
                                self.error(
                                    Code::K3013,
                                    ctx.file,
                                    p.name.span,
                                    format!("parameter `{}` needs a type annotation", p.name.text),
                                )
                                .set_label("no type written")
                                .set_help(format!("write `{}: <type>`", p.name.text));
                            }
                            Ty::error()
                        }
                    };
                    if let Some(d) = default {
                        self.check_default(ctx.file, d, &ty);
                    }
                    self.bind_local(ctx.file, p.name.span, ty.clone());
                    (
                        ty,
                        default.is_some(),
                        default.as_ref().map(|d| d.kind.clone()),
                    )
                }
                ast::ParamKind::Destructure(pattern) => {
                    let ty = self.pattern_annotation(ctx, pattern);
                    self.bind_pattern(ctx, pattern, &ty, true);
                    (ty, false, None)
                }
            };
            out.push(ParamSig {
                name: p.name.text.clone(),
                ty,
                optional,
                default,
                doc: p.doc.as_ref().map(|d| d.text.clone()),
            });
        }
        out
    }

    pub(crate) fn bind_local(&mut self, file: FileId, span: Span, ty: Ty) {
        if let Some(Resolution::Local(id)) = self.program.names.get(file, span) {
            self.locals.insert(id, ty);
        }
    }

    pub(crate) fn local_ty(&self, id: LocalId) -> Ty {
        self.locals.get(&id).cloned().unwrap_or_else(Ty::error)
    }

    // -----------------------------------------------------------------------------------
    // Local and anonymous agents
    // -----------------------------------------------------------------------------------

    pub(crate) fn local_agent(&mut self, ctx: &mut Ctx, decl: &ast::AgentDecl) -> Ty {
        let scope = self.ty_scope(ctx);
        let generics = self.declare_generics(ctx.file, &decl.generics);
        self.bound_generics(ctx.module, &decl.generics);
        let mut inner = self.ctx(ctx.module);
        inner.private = decl.private || ctx.private;
        let params = self.binding_params(&mut inner, &scope, &decl.params, true);
        let written = self.written(&scope, decl.ret.as_ref(), decl.effects.as_ref());
        let self_id = match self.program.names.get(ctx.file, decl.name.span) {
            Some(Resolution::Local(id)) => Some(id),
            _ => None,
        };
        let doc = decl
            .doc
            .as_ref()
            .map(|d| d.text.clone())
            .unwrap_or_default();
        let private = inner.private;
        let sig_of = |ret: Ty, row: Row| AgentSig {
            generics: generics.clone(),
            params: params.clone(),
            ret,
            row,
            doc: doc.clone(),
            private,
        };
        let recursive =
            self_id.is_some_and(|id| super::walk::block_mentions(self, ctx.file, &decl.body, id));
        if recursive {
            // Inside its own body the agent has its written signature; anything missing is K3013.
            let annotated = decl.ret.is_some() && decl.effects.is_some();
            if !annotated {
                self.error(
                    Code::K3013,
                    ctx.file,
                    decl.name.span,
                    format!(
                        "the recursive agent `{}` needs both its return type and its `with` row",
                        decl.name.text
                    ),
                )
                .set_label("this agent calls itself")
                .set_help("write `-> <type> with <row>` (`with pure` when it performs nothing)");
            }
            let ret = written
                .ret
                .as_ref()
                .map(|(t, _)| t.clone())
                .unwrap_or_else(Ty::error);
            let row = written
                .row
                .as_ref()
                .map(|(r, _)| r.clone())
                .unwrap_or_default();
            if let Some(id) = self_id {
                self.register_local_agent(id, sig_of(ret, row));
            }
        }
        let (ret, row) = self.agent_body(&mut inner, &decl.body, written, false);
        let sig = sig_of(ret, row);
        let ty = sig.agent_ty();
        self.out
            .closures
            .insert((ctx.file, decl.name.span.start), sig.clone());
        if let Some(id) = self_id {
            self.register_local_agent(id, sig);
        }
        ty
    }

    fn register_local_agent(&mut self, id: LocalId, sig: AgentSig) {
        self.locals.insert(id, sig.agent_ty());
        if sig.generics.is_empty() {
            self.local_sigs.remove(&id);
        } else {
            self.local_sigs.insert(id, sig);
        }
    }

    pub(crate) fn anonymous_agent(&mut self, ctx: &mut Ctx, a: &ast::AgentExpr, span: Span) -> Ty {
        let scope = self.ty_scope(ctx);
        let mut inner = self.ctx(ctx.module);
        inner.private = a.private || ctx.private;
        let params = self.binding_params(&mut inner, &scope, &a.params, true);
        let written = self.written(&scope, a.ret.as_ref(), a.effects.as_ref());
        let (ret, row) = self.agent_body(&mut inner, &a.body, written, false);
        let sig = AgentSig {
            generics: Vec::new(),
            params,
            ret,
            row,
            doc: String::new(),
            private: inner.private,
        };
        let ty = sig.agent_ty();
        self.out.closures.insert((ctx.file, span.start), sig);
        ty
    }
}
