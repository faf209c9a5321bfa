//! Blocks and statements (`language.md` §9.1, §9.13, §9.15, §9.16): item sequencing, `let`,
//! and the jumps `return`, `next` and `break` with their targets (K3012 for misplaced ones).

use super::Checker;
use super::agents::{Ctx, Escape};
use crate::ast::{self, ItemKind};
use crate::diag::{Code, Label};
use crate::resolve::JumpTarget;
use crate::source::Span;
use crate::types::*;

impl Checker<'_> {
    pub(crate) fn block(&mut self, ctx: &mut Ctx, block: &ast::Block) -> Ty {
        self.items(ctx, &block.items)
    }

    /// The items of a block from some position on: the value of the last one, `never` when a
    /// jump ends the block, or the type of a `use` that swallows the rest.
    pub(crate) fn items(&mut self, ctx: &mut Ctx, items: &[ast::Item]) -> Ty {
        let mut value = Ty::null();
        let mut diverges = false;
        for (i, item) in items.iter().enumerate() {
            value = Ty::null();
            match &item.kind {
                ItemKind::Let { pattern, value: e } => {
                    let ty = self.expr(ctx, e);
                    let from = self.out.diagnostics.len();
                    self.bind_pattern(ctx, pattern, &ty, true);
                    self.explain_private_residuals(ctx.file, e.span, from, &ty);
                    if let ast::PatternKind::Bind { name, .. } = &pattern.kind {
                        self.remember_private_residual(ctx.file, name.span, e.span);
                    }
                }
                ItemKind::Use { binder, provider } => {
                    let rest = &items[i + 1..];
                    let ty = self.use_stmt(ctx, item.span, binder.as_ref(), provider, rest);
                    return if diverges { Ty::never() } else { ty };
                }
                ItemKind::Agent(decl) => {
                    self.local_agent(ctx, decl);
                }
                ItemKind::Return(e) => {
                    let ty = match e {
                        Some(e) => self.expr(ctx, e),
                        None => Ty::null(),
                    };
                    self.return_stmt(ctx, item.span, e.as_ref().map(|e| e.span), ty);
                    diverges = true;
                }
                ItemKind::Next { value: e, updates } => {
                    let ty = match e {
                        Some(e) => self.expr(ctx, e),
                        None => Ty::null(),
                    };
                    self.next_stmt(
                        ctx,
                        item.span,
                        ty,
                        e.as_ref().map(|e| e.span),
                        updates.as_deref(),
                    );
                    diverges = true;
                }
                ItemKind::Break(e) => {
                    let ty = match e {
                        Some(e) => self.expr(ctx, e),
                        None => Ty::null(),
                    };
                    if let Some(t) = self.target_for(ctx, item.span, "break") {
                        ctx.targets[t].breaks.push(ty);
                    }
                    diverges = true;
                }
                ItemKind::Expr(e) => value = self.expr(ctx, e),
            }
        }
        if diverges { Ty::never() } else { value }
    }

    fn return_stmt(&mut self, ctx: &mut Ctx, item_span: Span, value_span: Option<Span>, ty: Ty) {
        if let Some((_, then_span)) = ctx.thens.last().copied() {
            let d = self
                .error(Code::K3012, ctx.file, item_span, "`return` cannot be used inside a handler's `then`")
                .set_label("this `return` would leave the `then` block")
                .set_help("the `then` block's value is the handler's result: end it with that value instead");
            d.secondary.push(Label {
                file: ctx.file,
                span: then_span,
                message: "the `then` block".into(),
            });
            return;
        }
        if let Some(clause) = ctx
            .targets
            .iter()
            .rev()
            .find(|t| t.resume.is_some())
            .map(|t| t.span)
        {
            let d = self
                .error(Code::K3012, ctx.file, item_span, "`return` cannot be used inside a request clause")
                .set_label("this `return` is inside a clause")
                .set_help("end the clause with `break` (abandoning the handled computation) or `next` (resuming it)");
            d.secondary.push(Label {
                file: ctx.file,
                span: clause,
                message: "the clause".into(),
            });
            return;
        }
        if let Some(expected) = ctx.ret.clone()
            && !self.fits(ctx, &ty, &expected)
        {
            let label = if self.sub_shape(&ty, &expected) {
                "a private value cannot be returned as public"
            } else {
                "this value does not fit the declared return type"
            };
            let from = self.out.diagnostics.len();
            let span = value_span.unwrap_or(item_span);
            self.mismatch(ctx.file, span, &ty, &expected, label);
            self.explain_private_residuals(ctx.file, span, from, &ty);
        }
        ctx.returns.push(ty);
        ctx.escapes.push(Escape {
            span: item_span,
            target: None,
            keyword: "return",
        });
    }

    /// The index of the target a `next` or `break` aims at (decided by the resolver), reporting
    /// K3012 when it would leave a handler's `then`.
    pub(crate) fn target_for(
        &mut self,
        ctx: &mut Ctx,
        item_span: Span,
        keyword: &'static str,
    ) -> Option<usize> {
        let target = self.program.names.jump(ctx.file, item_span)?;
        let span = match target {
            JumpTarget::For(s) | JumpTarget::Clause(s) => s,
        };
        let index = ctx.targets.iter().rposition(|t| t.span == span)?;
        if let Some((floor, then_span)) = ctx.thens.last().copied()
            && index < floor
        {
            let what = match target {
                JumpTarget::For(_) => "a `for` loop",
                JumpTarget::Clause(_) => "a request clause",
            };
            let d = self
                .error(Code::K3012, ctx.file, item_span, format!("`{keyword}` cannot leave a handler's `then`"))
                .set_label(format!("this `{keyword}` targets {what} outside the `then` block"))
                .set_help("only jumps aimed at a `for` or clause written inside the `then` block are allowed");
            d.secondary.push(Label {
                file: ctx.file,
                span: then_span,
                message: "the `then` block".into(),
            });
            return None;
        }
        ctx.escapes.push(Escape {
            span: item_span,
            target: Some(index),
            keyword,
        });
        Some(index)
    }

    fn next_stmt(
        &mut self,
        ctx: &mut Ctx,
        item_span: Span,
        ty: Ty,
        value_span: Option<Span>,
        updates: Option<&[ast::Modifier]>,
    ) {
        let target = self.target_for(ctx, item_span, "next");
        if let Some(t) = target {
            if let Some(resume) = ctx.targets[t].resume.clone() {
                if !self.sub_shape(&ty, &resume) {
                    let span = value_span.unwrap_or(item_span);
                    let label = if resume.is_never() {
                        "this request cannot be resumed: end the clause with `break`"
                    } else {
                        "`next` must give the request's return type"
                    };
                    self.mismatch(ctx.file, span, &ty, &resume, label);
                }
            } else {
                ctx.targets[t].nexts.push(ty);
            }
        }
        for m in updates.unwrap_or_default() {
            let value = self.expr(ctx, &m.value);
            let Some(t) = target else { continue };
            if let Some(var_ty) = ctx.targets[t].vars.get(&m.name.text).cloned()
                && !self.sub_shape(&value, &var_ty)
            {
                self.mismatch(
                    ctx.file,
                    m.value.span,
                    &value,
                    &var_ty,
                    &format!("`{}` holds `{}`", m.name.text, self.render(&var_ty)),
                );
            }
        }
    }
}
