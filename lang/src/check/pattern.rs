//! Patterns (`language.md` §9.12): the types they bind, how they narrow, what they cover
//! (exhaustiveness and irrefutability), and the types read off annotated patterns.

use super::Checker;
use super::agents::Ctx;
use super::lower::Kind;
use crate::ast::{self, FilterTag, LitKind, PatternKind};
use crate::diag::Code;
use crate::resolve::{DeclRef, Resolution};
use crate::types::*;

impl Checker<'_> {
    /// Binds the variables of `p` matched against a value of type `ty`. With `irrefutable`, the
    /// pattern must cover `ty` (K3001 otherwise: `let`, parameters, `for`, `then`).
    pub(crate) fn bind_pattern(
        &mut self,
        ctx: &mut Ctx,
        p: &ast::Pattern,
        ty: &Ty,
        irrefutable: bool,
    ) {
        self.bind(ctx, p, ty);
        if irrefutable && !self.covers(ctx, p, ty) && !ty.is_never() {
            let shown = self.render(ty);
            self.error(
                Code::K3001,
                ctx.file,
                p.span,
                format!("this pattern does not match every value of `{shown}`"),
            )
            .set_label(format!(
                "some values of `{shown}` do not match this pattern"
            ))
            .set_help("use `match` for patterns that may fail");
        }
    }

    fn bind(&mut self, ctx: &mut Ctx, p: &ast::Pattern, ty: &Ty) {
        stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
            self.bind_unguarded(ctx, p, ty)
        })
    }

    fn bind_unguarded(&mut self, ctx: &mut Ctx, p: &ast::Pattern, ty: &Ty) {
        match &p.kind {
            PatternKind::Wildcard(annotation) => {
                if let Some(t) = annotation {
                    self.annotation_widens(ctx, t, ty);
                }
            }
            PatternKind::Bind {
                name,
                ty: annotation,
            } => {
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
            PatternKind::Constructor {
                name,
                fields,
                type_args,
                ..
            } => {
                let data = match self.program.names.get(ctx.file, name.span) {
                    Some(Resolution::Global(r))
                        if matches!(self.program.decl(r), Some(ast::Decl::Data(_))) =>
                    {
                        Some(r)
                    }
                    Some(Resolution::Global(r)) => {
                        let shown = self.display_name(r);
                        self.error(Code::K3017, ctx.file, name.span, format!("`{shown}` is not a data constructor, so it cannot be matched"))
                            .set_label("not a data constructor")
                            .set_help("constructor patterns name a `data` declaration; bind the value with a name instead");
                        None
                    }
                    _ => None,
                };
                let Some(r) = data else {
                    // Still bind the field variables, so their uses are not reported again.
                    for f in fields {
                        match &f.pattern {
                            Some(inner) => self.bind(ctx, inner, &Ty::error()),
                            None => self.bind_local(ctx.file, f.name.span, Ty::error()),
                        }
                    }
                    return;
                };
                let data_ty = self.constructor_subject(ctx, ty, r, name, type_args.as_deref());
                let args = match &data_ty.kind {
                    TyKind::Data { args, .. } => args.clone(),
                    _ => Vec::new(),
                };
                let declared = self.data_fields(r, &args);
                for f in fields {
                    let field_ty = match declared.iter().find(|d| d.name == f.name.text) {
                        // Read through the matched member, which carries its own attribute as well
                        // as the subject's (§7.7 rule 1).
                        Some(field) => field.ty.clone().with_attr(field.ty.attr.join(data_ty.attr)),
                        None => {
                            let shown = self.display_name(r);
                            let names = declared
                                .iter()
                                .map(|d| d.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ");
                            self.error(
                                Code::K3001,
                                ctx.file,
                                f.name.span,
                                format!("`{shown}` has no field `{}`", f.name.text),
                            )
                            .set_label("not a field of this constructor")
                            .set_help(if names.is_empty() {
                                format!("`{shown}` has no fields")
                            } else {
                                format!("its fields are: {names}")
                            });
                            Ty::error()
                        }
                    };
                    match &f.pattern {
                        Some(inner) => self.bind(ctx, inner, &field_ty),
                        None => self.bind_local(ctx.file, f.name.span, field_ty),
                    }
                }
            }
        }
    }

    /// The data type a constructor pattern matches: the subject's member of that type, its
    /// arguments inferred from the subject, or met with explicit type arguments (K3009, K3006).
    fn constructor_subject(
        &mut self,
        ctx: &mut Ctx,
        ty: &Ty,
        r: DeclRef,
        name: &ast::Ident,
        type_args: Option<&[ast::Type]>,
    ) -> Ty {
        let subject = self.narrow_data(ty, r);
        let Some(args) = type_args else {
            return subject;
        };
        let generics = self.generic_ids(r);
        let shown = self.display_name(r);
        if args.len() != generics.len() {
            let count = generics.len();
            self.error(
                Code::K3009,
                ctx.file,
                name.span,
                format!(
                    "`{shown}` takes {count} type argument{}, found {}",
                    super::expr::plural(count),
                    args.len()
                ),
            )
            .set_label(format!(
                "{} type argument{} given",
                args.len(),
                super::expr::plural(args.len())
            ));
            return subject;
        }
        let scope = self.ty_scope(ctx);
        let mut lowered = Vec::new();
        for (g, a) in generics.iter().zip(args) {
            let kind = self
                .out
                .generics
                .get(g)
                .map(|i| Kind::of(i.kind))
                .unwrap_or(Kind::Type);
            lowered.push(self.lower_any(&scope, a, kind));
        }
        self.check_bounds(ctx.file, name.span, &generics, &lowered);
        let written = Ty::new(TyKind::Data {
            id: r,
            args: lowered,
        })
        .with_attr(subject.attr);
        // Only a member the subject really has constrains the written arguments.
        let from_subject = ty
            .members()
            .iter()
            .any(|m| matches!(&m.kind, TyKind::Data { id, .. } if *id == r));
        if !from_subject {
            return written;
        }
        let mut lat = self.lattice();
        let met = lat.meet(&subject, &written);
        if lat.meet_conflicts.is_empty() {
            return met;
        }
        let (found, wanted) = (self.render(&subject), self.render(&written));
        let span = name
            .span
            .to(args.last().map(|a| a.span).unwrap_or(name.span));
        self.error(
            Code::K3006,
            ctx.file,
            span,
            format!("the pattern `{wanted}` cannot narrow `{found}`"),
        )
        .set_label(format!(
            "`{shown}` is invariant in its argument, so a `{found}` is never a `{wanted}`"
        ))
        .set_help(format!(
            "match it as it is: `{}(…)` infers its arguments from the subject",
            name.text
        ));
        Ty::error()
    }

    /// An annotation on a pattern variable must be a supertype of the subject (it never narrows,
    /// and outside the private world it cannot make a private value public).
    fn annotation_widens(&mut self, ctx: &mut Ctx, t: &ast::Type, ty: &Ty) -> Ty {
        let scope = self.scope(ctx.module);
        let written = self.lower_ty(&scope, t);
        if ty.is_never() {
            return written;
        }
        if !self.sub_shape(ty, &written) {
            self.mismatch(
                ctx.file,
                t.span,
                ty,
                &written,
                "an annotation may widen the type, never narrow it",
            );
        } else if !ctx.private && !self.sub(ty, &written) {
            self.mismatch(
                ctx.file,
                t.span,
                ty,
                &written,
                "a private value cannot be given a public type",
            );
            let help = self.privacy_help(ty, &written, "write the annotation `of private`");
            self.last_help(&help);
            return written.clone().with_attr(written.attr.join(ty.attr));
        }
        written
    }

    /// The type of position `i` of every sequence member. A position beyond a tuple's length
    /// holds no value: like an absent key of a record pattern it reads `null`, so it is never a
    /// non-null binding (the pattern cannot match such a tuple anyway, §9.12).
    fn position(&self, ty: &Ty, i: usize) -> Ty {
        if ty.is_error() {
            return Ty::error();
        }
        let mut out = Vec::new();
        for m in ty.members() {
            if let TyKind::Seq { prefix, rest } = &m.kind {
                let t = prefix
                    .get(i)
                    .or(rest.as_deref())
                    .cloned()
                    .unwrap_or_else(Ty::null);
                out.push(t.clone().with_attr(t.attr.join(m.attr).join(ty.attr)));
            } else if m.is_unknown() {
                out.push(Ty::unknown().with_attr(m.attr.join(ty.attr)));
            }
        }
        self.lattice().join_all(&out)
    }

    fn narrow_objects(&self, ty: &Ty) -> Ty {
        if ty.is_error() {
            return Ty::error();
        }
        if ty.is_unknown() {
            return Ty::record(Ty::unknown()).with_attr(ty.attr);
        }
        let kept: Vec<Ty> = ty
            .members()
            .iter()
            .filter(|m| matches!(m.kind, TyKind::Object { .. } | TyKind::Data { .. }))
            .cloned()
            .collect();
        let joined = self.lattice().join_all(&kept);
        joined.clone().with_attr(joined.attr.join(ty.attr))
    }

    /// A record pattern's field: absent keys read `null`.
    fn read_field(&self, ty: &Ty, name: &str) -> Ty {
        if ty.is_error() {
            return Ty::error();
        }
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
                TyKind::Data { id, args } => self
                    .data_fields(*id, args)
                    .into_iter()
                    .find(|f| f.name == name)
                    .map(|f| f.ty)
                    .unwrap_or_else(Ty::null),
                _ => Ty::unknown(),
            };
            out.push(t.clone().with_attr(t.attr.join(m.attr).join(ty.attr)));
        }
        self.lattice().join_all(&out)
    }

    /// The subject restricted to a filter tag's layer (§9.12).
    fn narrow_tag(&self, ty: &Ty, tag: FilterTag) -> Ty {
        let attr = ty.attr;
        if ty.is_error() {
            return Ty::error();
        }
        if ty.is_unknown() {
            return tag_top(tag).with_attr(attr);
        }
        let kept: Vec<Ty> = ty
            .members()
            .iter()
            .filter(|m| tag_matches(tag, m))
            .cloned()
            .collect();
        let joined = self.lattice().join_all(&kept);
        let joined = match (tag, &joined.kind) {
            // `integer(p)` on `number` narrows to `integer`.
            (FilterTag::Integer, TyKind::Number) => Ty::integer().with_attr(joined.attr),
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
        // Nothing known about the arguments: the top of each kind (or the error type), which
        // for a bounded generic is its bound (every instantiation satisfies it, §6.8).
        let top = if ty.is_error() {
            Ty::error()
        } else {
            Ty::unknown()
        };
        let generics = self.generic_ids(r);
        let mut tops = Subst::default();
        for g in &generics {
            let arg = match self.out.generics.get(g).map(|i| i.kind) {
                Some(ast::GenericKind::Effect) => GenArg::Effect(Row::all()),
                Some(ast::GenericKind::Attribute) => GenArg::Attr(Attr::Private),
                _ => GenArg::Type(top.clone()),
            };
            tops.generics.insert(*g, arg);
        }
        let args = generics
            .iter()
            .map(|g| {
                let bound = self.out.generics.get(g).and_then(|i| i.bound.as_ref());
                match (bound, tops.generics.get(g)) {
                    (Some(bound), _) if !ty.is_error() => tops.arg(bound),
                    (_, Some(arg)) => arg.clone(),
                    _ => GenArg::Type(top.clone()),
                }
            })
            .collect();
        Ty::new(TyKind::Data { id: r, args }).with_attr(ty.attr)
    }

    /// Whether `p` matches every value of `ty` (§9.12 coverage).
    pub(crate) fn covers(&mut self, ctx: &Ctx, p: &ast::Pattern, ty: &Ty) -> bool {
        stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
            self.covers_unguarded(ctx, p, ty)
        })
    }

    fn covers_unguarded(&mut self, ctx: &Ctx, p: &ast::Pattern, ty: &Ty) -> bool {
        if ty.is_never() || ty.is_error() {
            return true;
        }
        match &p.kind {
            PatternKind::Wildcard(_) | PatternKind::Bind { .. } | PatternKind::Error => true,
            PatternKind::Lit(LitKind::Null) => {
                ty.members().iter().all(|m| matches!(m.kind, TyKind::Null))
            }
            PatternKind::Lit(_) => false,
            PatternKind::Filter { tag, inner } => {
                if ty.is_unknown() {
                    return false;
                }
                let exact = |m: &Ty| {
                    if *tag == FilterTag::Integer {
                        matches!(m.kind, TyKind::Integer)
                    } else {
                        tag_matches(*tag, m)
                    }
                };
                ty.members().iter().all(exact) && {
                    let narrowed = self.narrow_tag(ty, *tag);
                    self.covers(ctx, inner, &narrowed)
                }
            }
            PatternKind::Constructor { name, fields, .. } => {
                let Some(Resolution::Global(r)) = self.program.names.get(ctx.file, name.span)
                else {
                    return true;
                };
                ty.members().iter().all(|m| match &m.kind {
                    TyKind::Data { id, args } if *id == r => {
                        let declared = self.data_fields(r, args);
                        fields.iter().all(|f| {
                            match (&f.pattern, declared.iter().find(|d| d.name == f.name.text)) {
                                (Some(inner), Some(d)) => self.covers(ctx, inner, &d.ty),
                                _ => true,
                            }
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
                TyKind::Seq { prefix, rest: None } if prefix.len() == items.len() => items
                    .iter()
                    .zip(prefix.clone())
                    .all(|(i, t)| self.covers(ctx, i, &t)),
                _ => false,
            }),
        }
    }

    /// The residual type after an arm: the members the pattern covers are removed.
    pub(crate) fn subtract(&mut self, ctx: &Ctx, ty: &Ty, p: &ast::Pattern) -> Ty {
        if ty.is_error() {
            return Ty::never();
        }
        let mut kept = Vec::new();
        if ty.is_unknown() {
            return if self.covers(ctx, p, ty) {
                Ty::never()
            } else {
                ty.clone()
            };
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
        stacker::maybe_grow(super::RED_ZONE, super::STACK_CHUNK, || {
            self.pattern_annotation_unguarded(ctx, p)
        })
    }

    fn pattern_annotation_unguarded(&mut self, ctx: &mut Ctx, p: &ast::Pattern) -> Ty {
        let scope = self.scope(ctx.module);
        match &p.kind {
            PatternKind::Bind { ty: Some(t), .. } | PatternKind::Wildcard(Some(t)) => {
                self.lower_ty(&scope, t)
            }
            PatternKind::Filter { tag, .. } => tag_top(*tag),
            PatternKind::Tuple(items) => Ty::tuple(
                items
                    .iter()
                    .map(|i| self.pattern_annotation(ctx, i))
                    .collect(),
            ),
            PatternKind::Record(fields) => {
                let fields = fields
                    .iter()
                    .map(|f| {
                        let ty = match &f.pattern {
                            Some(inner) => self.pattern_annotation(ctx, inner),
                            None => {
                                self.error(
                                    Code::K3013,
                                    ctx.file,
                                    f.name.span,
                                    format!("the field `{}` needs a type annotation", f.name.text),
                                )
                                .set_label("no type written")
                                .set_help(format!(
                                    "write `{} => {}: <type>`",
                                    f.name.text, f.name.text
                                ));
                                Ty::error()
                            }
                        };
                        Field {
                            name: f.name.text.clone(),
                            ty,
                            optional: false,
                        }
                    })
                    .collect();
                Ty::object(fields, Rest::Open)
            }
            PatternKind::Error => Ty::error(),
            _ => {
                self.error(Code::K3013, ctx.file, p.span, "this pattern needs a type annotation")
                    .set_label("a type cannot be read off this pattern")
                    .set_help("annotate its variables (`x: integer`); constructor and literal patterns cannot supply a type");
                Ty::error()
            }
        }
    }
}

fn tag_matches(tag: FilterTag, m: &Ty) -> bool {
    matches!(
        (tag, &m.kind),
        (FilterTag::Null, TyKind::Null)
            | (FilterTag::Boolean, TyKind::Boolean)
            | (FilterTag::Integer, TyKind::Integer | TyKind::Number)
            | (FilterTag::Number, TyKind::Integer | TyKind::Number)
            | (FilterTag::String, TyKind::String)
            | (FilterTag::File, TyKind::File)
            | (FilterTag::Array, TyKind::Seq { .. })
            | (
                FilterTag::Record,
                TyKind::Object { .. } | TyKind::Data { .. }
            )
            | (FilterTag::Agent, TyKind::Agent(_))
            | (_, TyKind::Unknown | TyKind::Error)
    )
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
