//! Syntactic walks over bodies: whether a block mentions a local (recursive local agents).

use super::Checker;
use crate::ast::{self, Expr, ExprKind, ItemKind};
use crate::resolve::{LocalId, Resolution};
use crate::source::{FileId, Span};

/// Whether a block mentions a local (for recursive local agents).
pub(crate) fn block_mentions(
    checker: &Checker<'_>,
    file: FileId,
    block: &ast::Block,
    id: LocalId,
) -> bool {
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
    stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
        walk_expr_names_unguarded(e, f)
    })
}

fn walk_expr_names_unguarded(e: &Expr, f: &mut dyn FnMut(Span)) {
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
            args.iter()
                .filter_map(|a| a.value.as_ref())
                .for_each(|v| walk_expr_names(v, f));
        }
        ExprKind::TypeApply { callee, .. } => walk_expr_names(callee, f),
        ExprKind::Binary { left, right, .. } => {
            walk_expr_names(left, f);
            walk_expr_names(right, f);
        }
        ExprKind::Unary { operand, .. } => walk_expr_names(operand, f),
        ExprKind::If {
            cond,
            then,
            otherwise,
        } => {
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
        ExprKind::ParallelTuple(items) | ExprKind::Tuple(items) => {
            items.iter().for_each(|i| walk_expr_names(i, f))
        }
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
