//! Finding syntax by position: the initialiser of a plain `let` or `var` binding.

use crate::ast::{self, Expr, ExprKind, ItemKind, PatternKind};
use crate::source::Span;

/// The span of `e` in `let x = e` or `var x = e` where `x` is the unannotated binding at
/// `binding`.
pub(super) fn initialiser(module: &ast::Module, binding: Span) -> Option<Span> {
    module.decls.iter().find_map(|decl| match decl {
        ast::Decl::Agent(a) if contains(a.span, binding) => block(&a.body, binding),
        _ => None,
    })
}

fn contains(outer: Span, inner: Span) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

fn block(b: &ast::Block, binding: Span) -> Option<Span> {
    if !contains(b.span, binding) {
        return None;
    }
    b.items.iter().find_map(|item| {
        if !contains(item.span, binding) {
            return None;
        }
        match &item.kind {
            ItemKind::Let { pattern, value } => match &pattern.kind {
                PatternKind::Bind { name, ty: None } if name.span == binding => Some(value.span),
                _ => expr(value, binding),
            },
            ItemKind::Use { provider, .. } => expr(provider, binding),
            ItemKind::Agent(a) => block(&a.body, binding),
            ItemKind::Return(Some(e)) | ItemKind::Break(Some(e)) | ItemKind::Expr(e) => {
                expr(e, binding)
            }
            ItemKind::Next { value, updates } => value
                .iter()
                .chain(updates.iter().flatten().map(|m| &m.value))
                .find_map(|e| expr(e, binding)),
            ItemKind::Return(None) | ItemKind::Break(None) => None,
        }
    })
}

fn vars(vars: &[ast::VarBinding], binding: Span) -> Option<Span> {
    vars.iter().find_map(|v| {
        if v.name.span == binding && v.ty.is_none() {
            Some(v.init.span)
        } else {
            expr(&v.init, binding)
        }
    })
}

fn expr(e: &Expr, binding: Span) -> Option<Span> {
    if !contains(e.span, binding) {
        return None;
    }
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || expr_unguarded(e, binding))
}

fn expr_unguarded(e: &Expr, binding: Span) -> Option<Span> {
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Name(_) | ExprKind::Error => None,
        ExprKind::Template(parts) => parts.iter().find_map(|p| match p {
            ast::TemplatePart::Interp(e) => expr(e, binding),
            ast::TemplatePart::Text(..) => None,
        }),
        ExprKind::Field { target, .. } => expr(target, binding),
        ExprKind::Call { callee, args } => expr(callee, binding).or_else(|| {
            args.iter()
                .filter_map(|a| a.value.as_ref())
                .find_map(|v| expr(v, binding))
        }),
        ExprKind::TypeApply { callee, .. } => expr(callee, binding),
        ExprKind::Binary { left, right, .. } => {
            expr(left, binding).or_else(|| expr(right, binding))
        }
        ExprKind::Unary { operand, .. } => expr(operand, binding),
        ExprKind::If {
            cond,
            then,
            otherwise,
        } => expr(cond, binding)
            .or_else(|| block(then, binding))
            .or_else(|| otherwise.as_ref().and_then(|o| expr(o, binding))),
        ExprKind::Match { subject, arms } => {
            expr(subject, binding).or_else(|| arms.iter().find_map(|arm| expr(&arm.body, binding)))
        }
        ExprKind::For(f) => expr(&f.source, binding)
            .or_else(|| vars(&f.vars, binding))
            .or_else(|| block(&f.body, binding))
            .or_else(|| f.then.as_ref().and_then(|t| block(&t.body, binding))),
        ExprKind::ParallelTuple(items) | ExprKind::Tuple(items) => {
            items.iter().find_map(|i| expr(i, binding))
        }
        ExprKind::Handler(h) => vars(&h.vars, binding)
            .or_else(|| h.clauses.iter().find_map(|c| block(&c.body, binding)))
            .or_else(|| h.then.as_ref().and_then(|t| block(&t.body, binding))),
        ExprKind::Agent(a) => block(&a.body, binding),
        ExprKind::Record(entries) => entries.iter().find_map(|en| expr(&en.value, binding)),
        ExprKind::Block(b) => block(b, binding),
    }
}
