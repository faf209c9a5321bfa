//! Patterns (`language.md` §9.12): the types they bind, how they narrow, what they cover
//! (exhaustiveness and irrefutability), and the types read off annotated patterns.

use super::Checker;
use super::expr::Ctx;
use crate::ast::{self, FilterTag, LitKind, PatternKind};
use crate::diag::Code;
use crate::resolve::{DeclRef, Resolution};
use crate::types::*;

impl Checker<'_> {
    /// Binds the variables of `p` matched against a value of type `ty`. With `irrefutable`, the
    /// pattern must cover `ty` (K3001 otherwise: `let`, parameters, `for`, `then`).
    pub(crate) fn bind_pattern(&mut self, ctx: &mut Ctx, p: &ast::Pattern, ty: &Ty, irrefutable: bool) {
        self.bind(ctx, p, ty);
        if irrefutable && !self.covers(ctx, p, ty) && !ty.is_never() {
            self.error(Code::K3001, ctx.file, p.span, format!("this pattern does not match every value of `{}`", self.render(ty)))
                .set_help("use `match` for patterns that may fail");
        }
    }

    fn bind(&mut self, ctx: &mut Ctx, p: &ast::Pattern, ty: &Ty) {
        match &p.kind {
            PatternKind::Wildcard(annotation) => {
                if let Some(t) = annotation {
                    self.annotation_widens(ctx, t, ty);
                }
            }
            PatternKind::Bind { name, ty: annotation } => {
                let bound = match annotation {
                    Some(t) => self.annotation_widens(ctx, t, ty),
                    None => ty.clone(),
                };
                self.bind_local(ctx.file, name.span, bound);
            }
            PatternKind::Lit(_) | PatternKind::Error => {}
            PatternKind::Tuple(items) => {
                for (i, item) in items.iter().enumerate() {
                    let elem = self.position(ty, i);
                    self.bind(ctx, item, &elem);
                }
            }
            PatternKind::Record(fields) => {
                let narrowed = self.narrow_objects(ty);
                for f in fields {
                    let field_ty = self.read_field(&narrowed, &f.name.text);
                    match &f.pattern {
                        Some(inner) => self.bind(ctx, inner, &field_ty),
                        None => self.bind_local(ctx.file, f.name.span, field_ty),
                    }
                }
            }
            PatternKind::Filter { tag, inner } => {
                let narrowed = self.narrow_tag(ty, *tag);
                self.bind(ctx, inner, &narrowed);
            }
            PatternKind::Constructor { name, fields, .. } => {
                let Some(Resolution::Global(r)) = self.program.names.get(ctx.file, name.span) else { return };
                if !matches!(self.program.decl(r), Some(ast::Decl::Data(_))) {
                    let shown = self.qualified_name(r);
                    self.error(Code::K3017, ctx.file, name.span, format!("`{shown}` is not a data constructor, so it cannot be matched"));
                    return;
                }
                let data_ty = self.narrow_data(ty, r);
                let args = match &data_ty.kind {
                    TyKind::Data { args, .. } => args.clone(),
                    _ => Vec::new(),
                };
                let declared = self.data_fields(r, &args);
                for f in fields {
                    let Some(field) = declared.iter().find(|d| d.name == f.name.text) else {
                        self.error(Code::K3001, ctx.file, f.name.span, format!("`{}` has no field `{}`", self.qualified_name(r), f.name.text));
                        continue;
                    };
                    let field_ty = field.ty.clone().with_attr(field.ty.attr.join(ty.attr));
                    match &f.pattern {
                        Some(inner) => self.bind(ctx, inner, &field_ty),
                        None => self.bind_local(ctx.file, f.name.span, field_ty),
                    }
                }
            }
        }
    }

    /// An annotation on a pattern variable must be a supertype of the subject (it never narrows).
    fn annotation_widens(&mut self, ctx: &mut Ctx, t: &ast::Type, ty: &Ty) -> Ty {
        let scope = self.scope(ctx.module);
        let written = self.lower_ty(&scope, t);
        if !ty.is_never() && !self.sub_shape(ty, &written) {
            self.mismatch(ctx.file, t.span, ty, &written, "a pattern annotation may widen the type, never narrow it");
        }
        written
    }

    /// The type of position `i` of every sequence member.
    fn position(&self, ty: &Ty, i: usize) -> Ty {
        let mut out = Vec::new();
        for m in ty.members() {
            if let TyKind::Seq { prefix, rest } = &m.kind {
                if let Some(t) = prefix.get(i).or(rest.as_deref()) {
                    out.push(t.clone().with_attr(t.attr.join(m.attr).join(ty.attr)));
                }
            } else if m.is_unknown() {
                out.push(Ty::unknown());
            }
        }
        self.lattice().join_all(&out)
    }

    fn narrow_objects(&self, ty: &Ty) -> Ty {
        if ty.is_unknown() {
            return Ty::record(Ty::unknown()).with_attr(ty.attr);
        }
        let kept: Vec<Ty> = ty.members().iter().filter(|m| matches!(m.kind, TyKind::Object { .. } | TyKind::Data { .. })).cloned().collect();
        let joined = self.lattice().join_all(&kept);
        joined.clone().with_attr(joined.attr.join(ty.attr))
    }

    /// A record pattern's field: absent keys read `null`.
    fn read_field(&self, ty: &Ty, name: &str) -> Ty {
        let mut out = Vec::new();
        for m in ty.members() {
            let t = match &m.kind {
                TyKind::Object { fields, rest } => match fields.iter().find(|f| f.name == name) {
                    Some(f) if f.optional => self.join(&f.ty, &Ty::null()),
                    Some(f) => f.ty.clone(),
                    None => match rest {
                        Rest::Closed => Ty::null(),
                        Rest::Open => Ty::unknown(),
                        Rest::Of(t) => self.join(t, &Ty::null()),
                    },
                },
                TyKind::Data { id, args } => self.data_fields(*id, args).into_iter().find(|f| f.name == name).map(|f| f.ty).unwrap_or_else(Ty::null),
                _ => Ty::unknown(),
            };
            out.push(t.clone().with_attr(t.attr.join(m.attr).join(ty.attr)));
        }
        self.lattice().join_all(&out)
    }

    /// The subject restricted to a filter tag's layer (§9.12).
    fn narrow_tag(&self, ty: &Ty, tag: FilterTag) -> Ty {
        let attr = ty.attr;
        if ty.is_unknown() {
            return tag_top(tag).with_attr(attr);
        }
        let kept: Vec<Ty> = ty.members().iter().filter(|m| tag_matches(tag, m)).cloned().collect();
        let joined = self.lattice().join_all(&kept);
        let joined = match (tag, &joined.kind) {
            // `integer(p)` on `number` narrows to `integer`.
            (FilterTag::Integer, TyKind::Number) => Ty::integer(),
            _ => joined,
        };
        joined.clone().with_attr(joined.attr.join(attr))
    }

    /// The subject's member of a data type; from `unknown` or an object, the data type with
    /// unknown arguments.
    fn narrow_data(&mut self, ty: &Ty, r: DeclRef) -> Ty {
        for m in ty.members() {
            if let TyKind::Data { id, .. } = &m.kind
                && *id == r
            {
                return m.clone().with_attr(m.attr.join(ty.attr));
            }
        }
        let generics = self.generic_ids(r);
        let args = generics.iter().map(|_| GenArg::Type(Ty::unknown())).collect();
        Ty::new(TyKind::Data { id: r, args }).with_attr(ty.attr)
    }

    /// Whether `p` matches every value of `ty` (§9.12 coverage).
    pub(crate) fn covers(&mut self, ctx: &Ctx, p: &ast::Pattern, ty: &Ty) -> bool {
        if ty.is_never() {
            return true;
        }
        match &p.kind {
            PatternKind::Wildcard(_) | PatternKind::Bind { .. } | PatternKind::Error => true,
            PatternKind::Lit(LitKind::Null) => ty.members().iter().all(|m| matches!(m.kind, TyKind::Null)),
            PatternKind::Lit(_) => false,
            PatternKind::Filter { tag, inner } => {
                if ty.is_unknown() {
                    return false;
                }
                let exact = |m: &Ty| if *tag == FilterTag::Integer { matches!(m.kind, TyKind::Integer) } else { tag_matches(*tag, m) };
                ty.members().iter().all(exact) && {
                    let narrowed = self.narrow_tag(ty, *tag);
                    self.covers(ctx, inner, &narrowed)
                }
            }
            PatternKind::Constructor { name, fields, .. } => {
                let Some(Resolution::Global(r)) = self.program.names.get(ctx.file, name.span) else { return true };
                ty.members().iter().all(|m| match &m.kind {
                    TyKind::Data { id, args } if *id == r => {
                        let declared = self.data_fields(r, args);
                        fields.iter().all(|f| match (&f.pattern, declared.iter().find(|d| d.name == f.name.text)) {
                            (Some(inner), Some(d)) => self.covers(ctx, inner, &d.ty),
                            _ => true,
                        })
                    }
                    _ => false,
                })
            }
            PatternKind::Record(fields) => {
                if ty.is_unknown() {
                    return false;
                }
                ty.members().iter().all(|m| {
                    matches!(m.kind, TyKind::Object { .. } | TyKind::Data { .. }) && {
                        fields.iter().all(|f| match &f.pattern {
                            Some(inner) => {
                                let ft = self.read_field(m, &f.name.text);
                                self.covers(ctx, inner, &ft)
                            }
                            None => true,
                        })
                    }
                })
            }
            PatternKind::Tuple(items) => ty.members().iter().all(|m| match &m.kind {
                TyKind::Seq { prefix, rest: None } if prefix.len() == items.len() => {
                    items.iter().zip(prefix.clone()).all(|(i, t)| self.covers(ctx, i, &t))
                }
                _ => false,
            }),
        }
    }

    /// The residual type after an arm: the members the pattern covers are removed.
    pub(crate) fn subtract(&mut self, ctx: &Ctx, ty: &Ty, p: &ast::Pattern) -> Ty {
        let mut kept = Vec::new();
        if ty.is_unknown() {
            return if self.covers(ctx, p, ty) { Ty::never() } else { ty.clone() };
        }
        for m in ty.members() {
            let member = m.clone().with_attr(m.attr.join(ty.attr));
            if !self.covers(ctx, p, &member) {
                kept.push(member);
            }
        }
        self.lattice().join_all(&kept)
    }

    /// The type read off an annotated pattern (`x => pattern` parameters and `use` binders).
    pub(crate) fn pattern_annotation(&mut self, ctx: &mut Ctx, p: &ast::Pattern) -> Ty {
        let scope = self.scope(ctx.module);
        match &p.kind {
            PatternKind::Bind { ty: Some(t), .. } | PatternKind::Wildcard(Some(t)) => self.lower_ty(&scope, t),
            PatternKind::Filter { tag, .. } => tag_top(*tag),
            PatternKind::Tuple(items) => Ty::tuple(items.iter().map(|i| self.pattern_annotation(ctx, i)).collect()),
            PatternKind::Record(fields) => {
                let fields = fields
                    .iter()
                    .map(|f| {
                        let ty = match &f.pattern {
                            Some(inner) => self.pattern_annotation(ctx, inner),
                            None => {
                                self.error(Code::K3013, ctx.file, f.name.span, format!("the field `{}` needs a type: write `{} => {}: <type>`", f.name.text, f.name.text, f.name.text));
                                Ty::unknown()
                            }
                        };
                        Field { name: f.name.text.clone(), ty, optional: false }
                    })
                    .collect();
                Ty::object(fields, Rest::Open)
            }
            PatternKind::Error => Ty::unknown(),
            _ => {
                self.error(Code::K3013, ctx.file, p.span, "this pattern needs a type annotation")
                    .set_help("annotate its variables (`x: integer`); constructor and literal patterns cannot supply a type");
                Ty::unknown()
            }
        }
    }
}

fn tag_matches(tag: FilterTag, m: &Ty) -> bool {
    match (tag, &m.kind) {
        (FilterTag::Null, TyKind::Null)
        | (FilterTag::Boolean, TyKind::Boolean)
        | (FilterTag::Integer, TyKind::Integer | TyKind::Number)
        | (FilterTag::Number, TyKind::Integer | TyKind::Number)
        | (FilterTag::String, TyKind::String)
        | (FilterTag::File, TyKind::File)
        | (FilterTag::Array, TyKind::Seq { .. })
        | (FilterTag::Record, TyKind::Object { .. } | TyKind::Data { .. })
        | (FilterTag::Agent, TyKind::Agent(_)) => true,
        (_, TyKind::Unknown) => true,
        _ => false,
    }
}

/// What a filter tag gives on `unknown`.
fn tag_top(tag: FilterTag) -> Ty {
    match tag {
        FilterTag::Null => Ty::null(),
        FilterTag::Boolean => Ty::boolean(),
        FilterTag::Integer => Ty::integer(),
        FilterTag::Number => Ty::number(),
        FilterTag::String => Ty::string(),
        FilterTag::File => Ty::file(),
        FilterTag::Array => Ty::array(Ty::unknown()),
        FilterTag::Record => Ty::record(Ty::unknown()),
        FilterTag::Agent => Ty::top_agent(),
    }
}
