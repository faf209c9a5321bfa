//! Queries for tools (the REPL's `.type`, completion, an editor server): the type of any
//! checked expression by its span.

use std::collections::HashMap;

use crate::source::{FileId, Span};
use crate::types::{GenArg, Ty};

/// What the checker recorded about one expression.
#[derive(Clone, Debug)]
pub struct ExprInfo {
    pub span: Span,
    pub ty: Ty,
}

/// Expression types by file, for look-ups by position.
#[derive(Debug, Default)]
pub struct Queries {
    exprs: HashMap<FileId, Vec<ExprInfo>>,
    /// The solved generic arguments of each generic call or explicit application, by the span
    /// of the call (or of the `f[…]` expression). The runtime derives native schemas from them.
    instantiations: HashMap<(FileId, u32, u32), Vec<GenArg>>,
}

impl Queries {
    pub(crate) fn record_instantiation(&mut self, file: FileId, span: Span, args: Vec<GenArg>) {
        self.instantiations
            .insert((file, span.start, span.end), args);
    }

    /// The generic arguments solved (or written) at a call or explicit application.
    pub fn instantiation(&self, file: FileId, span: Span) -> Option<&[GenArg]> {
        self.instantiations
            .get(&(file, span.start, span.end))
            .map(Vec::as_slice)
    }

    pub(crate) fn record(&mut self, file: FileId, span: Span, ty: &Ty) {
        self.exprs.entry(file).or_default().push(ExprInfo {
            span,
            ty: ty.clone(),
        });
    }

    /// The type of the expression with exactly this span.
    pub fn type_at(&self, file: FileId, span: Span) -> Option<&Ty> {
        self.exprs
            .get(&file)?
            .iter()
            .rev()
            .find(|e| e.span == span)
            .map(|e| &e.ty)
    }

    /// The innermost expression containing the byte offset.
    pub fn innermost(&self, file: FileId, offset: u32) -> Option<&ExprInfo> {
        self.exprs
            .get(&file)?
            .iter()
            .filter(|e| e.span.start <= offset && offset <= e.span.end)
            .min_by_key(|e| e.span.end - e.span.start)
    }
}
